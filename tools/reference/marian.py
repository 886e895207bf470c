"""PyTorch reference for Marian translation models (Hugging Face `MarianMTModel`, Helsinki-NLP/opus-mt folders) with
Hugging Face semantics and tensor names: the network, MarianTokenizer's encoding, and generate()'s greedy and beam
search. The oracle that the engine's Marian tests are checked against.

Written from the semantics of `transformers`' modeling_marian.py, configuration_marian.py, tokenization_marian.py,
convert_marian_to_pytorch.py and generation/utils.py + logits_process.py (the vectorized beam search of
transformers ≥ 4.50); no code is taken from there. Needs torch, numpy and sentencepiece only.

The network (config.json: model_type "marian"):
  - one embedding matrix `model.shared.weight` (V, d) when share_encoder_decoder_embeddings is true (the encoder's
    and the decoder's embed_tokens are the same tensor and the output layer is its transpose,
    tie_word_embeddings); the token embeddings are multiplied by √d_model (scale_embedding; 1 when false);
  - static sinusoidal positions (MarianSinusoidalPositionalEmbedding, max_position_embeddings rows, not in the
    checkpoint: save_pretrained leaves model.{encoder,decoder}.embed_positions.weight out): row p, column j < d/2 is
    sin(p / 10000^(2j/d)), column d/2 + j is cos(p / 10000^(2j/d)) — NOT interleaved; computed in float64 with
    numpy exactly as HF does, then rounded to float32. Positions count from 0 in the encoder and from 0 in the
    decoder (the decoder start token is at position 0); padding does not shift them;
  - post-LN layers (normalize_before false): x = LN(x + attn(x)); [decoder: x = LN(x + cross_attn(x, enc))];
    x = LN(x + fc2(act(fc1(x)))); nn.LayerNorm eps 1e-5 with weight and bias; no layernorm after the embeddings
    (normalize_embedding false) and none after the last layer; attention with biases on q/k/v/out_proj,
    scores (q·k)·head_dim^-0.5, padding keys masked; activation_function "swish" = x·sigmoid(x) (also "gelu",
    "relu");
  - logits = h · shared^T + final_logits_bias (a (1, V) buffer that is in the checkpoint).
  - MarianTokenizer: source text → source.spm pieces, target text → target.spm pieces; each piece → vocab.json id
    (one vocabulary for both sides when separate_vocabs is false), a piece missing from vocab.json → <unk> (the id of
    "<unk>" in vocab.json, NOT the SentencePiece id: the current transformers main's fallback to the SentencePiece
    id is not followed), then </s>. No BOS. A piece that SentencePiece itself does not know comes back as its
    surface text ("é", "123", "😀") and is looked up in vocab.json like any piece (a target piece "é" gives its id).
    Before SentencePiece, as PreTrainedTokenizer.tokenize (transformers 4.x) does: the special tokens written in the
    text ("</s>", "<unk>", "<pad>": they are added tokens, no lstrip/rstrip) are cut out as whole tokens (leftmost
    match first, the longest at one place) and give their own ids; each piece of text between them goes through
    MarianTokenizer._tokenize separately (so each gets SentencePiece's dummy-prefix ▁): its language code, if the
    piece STARTS with one (re.match of ">>.+<<", greedy, "." not matching a newline: ">>es<< a >>fr<< b" gives
    the one code ">>es<< a >>fr<<"), becomes one token looked up in vocab.json (<unk> when missing), and every match
    of ">>.+<<" anywhere in the piece is removed (re.sub) before SentencePiece ("Hello >>es<< world" → "Hello  world",
    no code). (transformers 5's remove_language_code takes only a leading ">>…<<" up to the first "<<" and removes
    nothing else; the two agree on texts that have no other ">>…<<".) The empty text gives just </s>.
    Decoding maps ids to pieces (vocab.json), drops the special tokens
    (</s>, <unk>, <pad>) with skip_special_tokens, joins the pieces and turns ▁ into spaces, stripped.
  - generate(): the decoder starts from [decoder_start_token_id] (= pad for Marian, whose embedding row is zero in
    converted opus-mt models); logits processors in HF's order: no_repeat_ngram_size (over the decoder ids, start
    token included), bad_words_ids (single tokens: −inf; Marian's [[pad]]), forced_eos_token_id (at
    cur_len = max_length − 1 only EOS is allowed: every other score −inf, EOS's score set to 0), then
    renormalize_logits (log_softmax again) when set;
    max_length counts the decoder start token (max_new_tokens = n gives max_length = n + 1); an explicit
    forced_eos_token_id=None (or bad_words_ids=None) argument turns that processor off, as HF's
    generation_config.update(**kwargs) sets the value to None.
    Greedy: argmax of the processed logits (first index on ties), stops at eos_token_id or max_length.
    Beam search (num_beams > 1): log_softmax of the logits, then the processors; the running beams' scores added;
    the top 2·num_beams candidates over (beam, token); candidates that end in EOS or reach max_length are
    "finished": only those ranked among the first num_beams can enter the finished list, with score
    sum_logprobs / generated_len^length_penalty (generated_len counts the EOS, not the start token); the best
    num_beams unfinished candidates run on; early_stopping True stops when num_beams hypotheses are finished,
    False when the best running beam's score divided by (its current length)^length_penalty cannot beat the worst
    finished one, "never" uses max_length instead of the current length when length_penalty > 0. The finished list
    is kept sorted (best first); the answer is its first num_return_sequences entries (num_return_sequences ≤
    num_beams), and HF's sequences_scores (return_dict_in_generate, output_scores) are their scores.

API: `load(folder)` → (MarianMTModel, Tokenizer, generation config dict); `model.forward(input_ids,
decoder_input_ids, attention_mask)` → dict(logits, encoder_hidden_states, decoder_hidden_states) with the hidden
states as HF's output_hidden_states gives them (the embeddings + positions, then every layer's output);
`generate(model, input_ids, **options)` → the decoder ids (start token first, EOS last when it stopped there) for
each input (num_return_sequences rows per input, best first), HF's `model.generate(...)` rows without the padding;
with `return_dict_in_generate=True` a dict: "sequences" (those rows), "sequences_scores" (beam search: the
finished hypotheses' scores, one per row; greedy: None) and, with `output_attentions=True` (greedy only),
"cross_attentions": per input, per generated token, per decoder layer, a (heads, S) tensor of the cross-attention
probabilities of the query that produced the token (HF's output_attentions cross_attentions with the cache: the
first step's query is the start token). `tok.tokenize(text)` gives the tokens (special tokens, language codes and
SentencePiece pieces) before the id lookup. `python3 tools/reference/marian.py` runs the
self-checks on a random model; `python3 tools/reference/marian.py FOLDER "text" …` translates.
"""
import json
import math
import os
import re
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

NEG = torch.finfo(torch.float32).min


def sinusoidal_positions(n_pos, dim):
    """MarianSinusoidalPositionalEmbedding._init_weight: float64 angles, sin half then cos half, to float32."""
    enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = torch.empty(n_pos, dim, dtype=torch.float32)
    half = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, 0:half] = torch.FloatTensor(np.sin(enc[:, 0::2]))
    out[:, half:] = torch.FloatTensor(np.cos(enc[:, 1::2]))
    return out


def activation(name):
    return {"swish": F.silu, "silu": F.silu, "gelu": F.gelu, "relu": F.relu,
            "gelu_new": lambda x: F.gelu(x, approximate="tanh")}[name]


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))

    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.dh).transpose(1, 2)

    def kv(self, x):
        return self.split(self.k_proj(x)), self.split(self.v_proj(x))

    def forward(self, x, k, v, bias, record=None):
        """x: (B, T, d) queries; k, v: (B, H, S, dh); bias: additive mask broadcastable to (B, H, T, S);
        record: None or a list that gets the attention probabilities (B, H, T, S)."""
        B, T, _ = x.shape
        q = self.split(self.q_proj(x))
        w = (q @ k.transpose(-1, -2)) * self.dh ** -0.5
        if bias is not None:
            w = w + bias
        w = w.softmax(-1)
        if record is not None:
            record.append(w.detach())
        y = w @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, T, self.h * self.dh))


class EncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = Attention(d, c["encoder_attention_heads"])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, c["encoder_ffn_dim"])
        self.fc2 = nn.Linear(c["encoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d)
        self.act = activation(c["activation_function"])

    def forward(self, x, bias):
        k, v = self.self_attn.kv(x)
        x = self.self_attn_layer_norm(x + self.self_attn(x, k, v, bias))
        return self.final_layer_norm(x + self.fc2(self.act(self.fc1(x))))


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = Attention(d, c["decoder_attention_heads"])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.encoder_attn = Attention(d, c["decoder_attention_heads"])
        self.encoder_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, c["decoder_ffn_dim"])
        self.fc2 = nn.Linear(c["decoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d)
        self.act = activation(c["activation_function"])

    def forward(self, x, self_bias, cross_k, cross_v, cross_bias, cache=None, cross_record=None):
        """cache: None, or a dict with this layer's past "k", "v" (B, H, t, dh), extended in place;
        cross_record: None or a list that gets the cross-attention probabilities (B, H, T, S)."""
        k, v = self.self_attn.kv(x)
        if cache is not None:
            if "k" in cache:
                k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
        x = self.self_attn_layer_norm(x + self.self_attn(x, k, v, self_bias))
        x = self.encoder_attn_layer_norm(x + self.encoder_attn(x, cross_k, cross_v, cross_bias, cross_record))
        return self.final_layer_norm(x + self.fc2(self.act(self.fc1(x))))


class Stack(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.shared = nn.Embedding(c["vocab_size"], c["d_model"])
        self.encoder = Stack([EncoderLayer(c) for _ in range(c["encoder_layers"])])
        self.decoder = Stack([DecoderLayer(c) for _ in range(c["decoder_layers"])])


class MarianMTModel(nn.Module):
    """state_dict() keys = what MarianMTModel.save_pretrained writes: model.shared.weight, the layers,
    final_logits_bias (no embed_tokens / lm_head copies of the shared matrix, no positions)."""

    def __init__(self, c):
        super().__init__()
        assert c.get("model_type", "marian") == "marian"
        assert c.get("share_encoder_decoder_embeddings", True) and c.get("tie_word_embeddings", True), \
            "only shared, tied embeddings (the opus-mt layout) are implemented"
        assert not c.get("normalize_before", False) and not c.get("normalize_embedding", False)
        self.config = c
        self.model = Model(c)
        self.register_buffer("final_logits_bias", torch.zeros(1, c["vocab_size"]))
        self.register_buffer("positions", sinusoidal_positions(c["max_position_embeddings"], c["d_model"]),
                             persistent=False)
        self.scale = math.sqrt(c["d_model"]) if c.get("scale_embedding", True) else 1.0

    def embed(self, ids, start=0):
        T = ids.shape[1]
        assert start + T <= self.positions.shape[0], "longer than max_position_embeddings"
        return self.model.shared(ids) * self.scale + self.positions[start:start + T]

    def encode(self, input_ids, attention_mask=None, hidden=None):
        """(B, S) ids, (B, S) 1/0 mask → (B, S, d); hidden: a list that gets the embeddings + each layer's output."""
        x = self.embed(input_ids)
        bias = None if attention_mask is None else key_bias(attention_mask)
        if hidden is not None:
            hidden.append(x)
        for layer in self.model.encoder.layers:
            x = layer(x, bias)
            if hidden is not None:
                hidden.append(x)
        return x

    def cross_kv(self, enc):
        return [layer.encoder_attn.kv(enc) for layer in self.model.decoder.layers]

    def decode(self, ids, enc, attention_mask=None, cache=None, cross=None, hidden=None, cross_attn=None):
        """Decoder over ids (B, T) that follow `past` cached positions; cache: None (no cache: the whole prefix) or
        a dict {"past": n, "layers": [...]}, updated; cross: the encoder's key/values per layer (cross_kv);
        cross_attn: None or a list that gets each layer's cross-attention probabilities (B, H, T, S)."""
        past = cache["past"] if cache is not None else 0
        T = ids.shape[1]
        x = self.embed(ids, past)
        causal = torch.full((T, past + T), NEG).triu(past + 1)[None, None]
        cross_bias = None if attention_mask is None else key_bias(attention_mask)
        cross = cross if cross is not None else self.cross_kv(enc)
        if cache is not None and not cache["layers"]:
            cache["layers"] = [{} for _ in self.model.decoder.layers]
        if hidden is not None:
            hidden.append(x)
        for l, layer in enumerate(self.model.decoder.layers):
            x = layer(x, causal, cross[l][0], cross[l][1], cross_bias, None if cache is None else cache["layers"][l],
                      cross_attn)
            if hidden is not None:
                hidden.append(x)
        if cache is not None:
            cache["past"] = past + T
        return x

    def logits(self, h):
        return h @ self.model.shared.weight.T + self.final_logits_bias

    def forward(self, input_ids, decoder_input_ids, attention_mask=None):
        enc_h, dec_h = [], []
        enc = self.encode(input_ids, attention_mask, enc_h)
        h = self.decode(decoder_input_ids, enc, attention_mask, hidden=dec_h)
        return {"logits": self.logits(h), "encoder_hidden_states": enc_h, "decoder_hidden_states": dec_h,
                "encoder_last_hidden_state": enc}


def key_bias(mask):
    """(B, S) 1/0 → additive (B, 1, 1, S): 0 where attended, float32 min where masked (HF's expanded mask)."""
    return (1.0 - mask[:, None, None, :].float()) * NEG


def reorder(cache, idx):
    for layer in cache["layers"]:
        layer["k"], layer["v"] = layer["k"][idx], layer["v"][idx]


# ---------------------------------------------------------------------------------------------------------- tokens
LANGUAGE_CODE = re.compile(">>.+<<")  # MarianTokenizer.language_code_re (transformers 4.x)


class Tokenizer:
    """MarianTokenizer (separate_vocabs false): source.spm / target.spm pieces looked up in vocab.json."""

    def __init__(self, folder):
        import sentencepiece as spm
        self.src = spm.SentencePieceProcessor(model_file=os.path.join(folder, "source.spm"))
        self.tgt = spm.SentencePieceProcessor(model_file=os.path.join(folder, "target.spm"))
        with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
            self.vocab = json.load(f)
        self.pieces = {v: k for k, v in self.vocab.items()}
        cfg = {}
        p = os.path.join(folder, "tokenizer_config.json")
        if os.path.exists(p):
            with open(p) as f:
                cfg = json.load(f)
        assert not cfg.get("separate_vocabs", False), "separate_vocabs (target_vocab.json) is not implemented"
        self.eos = self.vocab[cfg.get("eos_token", "</s>")]
        self.unk = self.vocab[cfg.get("unk_token", "<unk>")]
        self.pad = self.vocab[cfg.get("pad_token", "<pad>")]
        self.special = {self.eos, self.unk, self.pad}
        # the special tokens as added tokens (PreTrainedTokenizer's tokens_trie): longest first at one place
        self.special_tokens = [cfg.get(k, d) for k, d in (("eos_token", "</s>"), ("unk_token", "<unk>"),
                                                            ("pad_token", "<pad>"))]
        self._split_re = re.compile("(" + "|".join(re.escape(t) for t in sorted(self.special_tokens, key=len,
                                                                                   reverse=True)) + ")")

    def tokenize(self, text, target=False):
        """PreTrainedTokenizer.tokenize: special tokens cut out whole, every other stretch through
        MarianTokenizer._tokenize (leading language code kept as one token, codes removed, SentencePiece)."""
        sp = self.tgt if target else self.src
        out = []
        for i, part in enumerate(self._split_re.split(text)):
            if not part:
                continue
            if i % 2:  # a special token
                out.append(part)
                continue
            m = LANGUAGE_CODE.match(part)
            if m:
                out.append(m.group(0))
            out += sp.encode(LANGUAGE_CODE.sub("", part), out_type=str)
        return out

    def _encode(self, sp, text):
        return [self.vocab.get(p, self.unk) for p in self.tokenize(text, sp is self.tgt)] + [self.eos]

    def __call__(self, text):
        """Source ids (what tokenizer(text).input_ids gives)."""
        return self._encode(self.src, text)

    def target(self, text):
        """Target ids (tokenizer(text_target=text).input_ids)."""
        return self._encode(self.tgt, text)

    def decode(self, ids, skip_special_tokens=True):
        out, run = [], []
        for i in ids:
            p = self.pieces.get(int(i), "<unk>")
            if int(i) in self.special:
                if not skip_special_tokens:  # PreTrainedTokenizer: the pieces so far, the token, a space
                    out.append(self.tgt.decode_pieces(run) + p + " ")
                    run = []
                continue
            run.append(p)
        text = "".join(out) + self.tgt.decode_pieces(run)
        return text.replace("\u2581", " ").strip()


# ------------------------------------------------------------------------------------------------------- generate
def generation_options(model, gen_cfg=None, **kw):
    """The effective settings: keyword arguments over generation_config.json over config.json over HF defaults."""
    c = model.config
    o = {"num_beams": 1, "num_return_sequences": 1, "max_length": 20, "max_new_tokens": None,
         "length_penalty": 1.0, "early_stopping": False,
         "no_repeat_ngram_size": 0, "bad_words_ids": None, "forced_eos_token_id": None, "renormalize_logits": False,
         "eos_token_id": c.get("eos_token_id"), "pad_token_id": c.get("pad_token_id"),
         "decoder_start_token_id": c.get("decoder_start_token_id")}
    for src in (c, gen_cfg or {}, kw):
        for k in o:
            if k in src and src[k] is not None:
                o[k] = src[k]
    for k in ("forced_eos_token_id", "bad_words_ids"):  # an explicit None argument turns these off (as HF's
        if k in kw and kw[k] is None:                    # generation_config.update(**kwargs) does)
            o[k] = None
    if kw.get("max_new_tokens") is not None:
        o["max_length"] = kw["max_new_tokens"] + 1
    return o


def process(o, seqs, scores, cur_len):
    """HF's logits processors on scores (N, V) for the decoder ids seqs (N, cur_len)."""
    n = o["no_repeat_ngram_size"]
    if n and cur_len + 1 >= n:
        for b in range(seqs.shape[0]):
            s = seqs[b].tolist()
            prefix = tuple(s[cur_len + 1 - n:cur_len])
            banned = [s[i + n - 1] for i in range(cur_len - n + 1) if tuple(s[i:i + n - 1]) == prefix]
            if banned:
                scores[b, banned] = -float("inf")
    for word in o["bad_words_ids"] or []:
        if len(word) == 1:
            scores[:, word[0]] = -float("inf")
        else:  # multi-token bad words: banned when the sequence ends with the word's prefix
            for b in range(seqs.shape[0]):
                if seqs[b, cur_len - len(word) + 1:].tolist() == word[:-1]:
                    scores[b, word[-1]] = -float("inf")
    if o["forced_eos_token_id"] is not None and cur_len == o["max_length"] - 1:
        scores[:] = -float("inf")
        scores[:, o["forced_eos_token_id"]] = 0.0
    if o["renormalize_logits"]:
        scores = scores.log_softmax(-1)
    return scores


@torch.no_grad()
def generate(model, input_ids, attention_mask=None, gen_cfg=None, return_dict_in_generate=False,
             output_attentions=False, **kw):
    """HF generate() for each row of input_ids (a list of id lists or a (B, S) tensor): a list of decoder id lists
    (num_return_sequences per input, best first); return_dict_in_generate: a dict (see the module's docstring)."""
    o = generation_options(model, gen_cfg, **kw)
    nrs = o["num_return_sequences"]
    if o["num_beams"] == 1:
        assert nrs == 1, "num_return_sequences > 1 needs beam search (or sampling, not implemented)"
    else:
        assert nrs <= o["num_beams"], "num_return_sequences must be ≤ num_beams (HF raises ValueError)"
        assert not output_attentions, "output_attentions is implemented for greedy search only"
    rows = input_ids.tolist() if torch.is_tensor(input_ids) else input_ids
    if torch.is_tensor(attention_mask):
        rows = [[t for t, m in zip(r, mr) if m] for r, mr in zip(rows, attention_mask.tolist())]
    out, scores, cross = [], [], []
    for r in rows:
        ids = torch.tensor([r])
        enc = model.encode(ids)
        if o["num_beams"] == 1:
            rec = [] if output_attentions else None
            out.append(_greedy(model, enc, o, rec))
            cross.append(rec)
        else:
            for seq, score in _beam(model, enc, o):
                out.append(seq)
                scores.append(score)
    if return_dict_in_generate:
        return {"sequences": out, "sequences_scores": scores if o["num_beams"] > 1 else None,
                "cross_attentions": cross if output_attentions else None}
    return out


def _greedy(model, enc, o, cross_attentions=None):
    """cross_attentions: None or a list that gets, per generated token, per decoder layer, (heads, S)."""
    seq = [o["decoder_start_token_id"]]
    cache, cross = {"past": 0, "layers": []}, model.cross_kv(enc)
    while len(seq) < o["max_length"]:
        rec = [] if cross_attentions is not None else None
        h = model.decode(torch.tensor([[seq[-1]]]), enc, cache=cache, cross=cross, cross_attn=rec)
        if rec is not None:
            cross_attentions.append([w[0, :, 0] for w in rec])
        scores = process(o, torch.tensor([seq]), model.logits(h[:, -1]).float(), len(seq))
        seq.append(int(scores[0].argmax()))
        if seq[-1] == o["eos_token_id"]:
            break
    return seq


def _beam(model, enc, o):
    """The vectorized beam search of transformers ≥ 4.50 (GenerationMixin._beam_search) for one input: the first
    num_return_sequences entries of the finished list (sorted, best first), each (decoder ids, score)."""
    nb, L, lp, es, eos = o["num_beams"], o["max_length"], o["length_penalty"], o["early_stopping"], o["eos_token_id"]
    keep = 2 * nb  # max(2, 1 + number of EOS ids) · num_beams
    prompt = 1
    running = torch.full((nb, L), o["pad_token_id"], dtype=torch.long)
    running[:, 0] = o["decoder_start_token_id"]
    run_scores = torch.zeros(nb)
    run_scores[1:] = -1e9
    fin = running.clone()
    fin_scores = torch.full((nb,), -1e9)
    fin_done = torch.zeros(nb, dtype=torch.bool)
    unsatisfied = True
    top_mask = torch.arange(keep) < nb
    enc_b = enc.expand(nb, -1, -1)
    cache, cross = {"past": 0, "layers": []}, model.cross_kv(enc_b)
    cur = 1
    while cur < L:
        h = model.decode(running[:, cur - 1:cur], enc_b, cache=cache, cross=cross)
        logp = model.logits(h[:, -1]).float().log_softmax(-1)
        logp = process(o, running[:, :cur], logp, cur)
        V = logp.shape[-1]
        acc = (logp + run_scores[:, None]).view(-1)
        top_lp, top_idx = acc.topk(keep)
        src_beam, tok = top_idx // V, top_idx % V
        cand = running[src_beam].clone()
        cand[:, cur] = tok
        hits = (tok == eos) | (cur + 1 >= L)  # EOS criteria, max-length criteria (on length cur + 1)
        # the running beams: the best num_beams candidates that did not finish
        run_lp = top_lp + hits.float() * -1e9
        nxt = run_lp.topk(nb).indices
        running, run_scores = cand[nxt], run_lp[nxt]
        reorder(cache, src_beam[nxt])
        # the finished list
        just = hits & top_mask
        s = top_lp / ((cur + 1 - prompt) ** lp)
        if bool(fin_done.all()) and es is True:
            s = s - 1e9
        if not unsatisfied:
            s = s - 1e9
        s = s + (~just).float() * -1e9
        m_seq, m_sc, m_done = torch.cat([fin, cand]), torch.cat([fin_scores, s]), torch.cat([fin_done, just])
        best = m_sc.topk(nb).indices
        fin, fin_scores, fin_done = m_seq[best], m_sc[best], m_done[best]
        cur += 1
        # can a running beam still beat the worst finished one?
        length = (L - prompt) if (es == "never" and lp > 0) else (cur - prompt)
        best_running = run_scores[0] / (length ** lp)
        worst = torch.where(fin_done, fin_scores.min(), torch.tensor(-1e9))
        unsatisfied = unsatisfied and bool((best_running > worst).any())
        if not (unsatisfied and not (bool(fin_done.all()) and es is True) and not bool(hits.all())):
            break
    out = []
    for i in range(o["num_return_sequences"]):
        seq = fin[i].tolist()  # a finished hypothesis, pad-filled after its end
        if eos in seq[1:]:
            seq = seq[:seq.index(eos, 1) + 1]
        else:
            seq = _strip_pad(seq, o["pad_token_id"])
        out.append((seq, float(fin_scores[i])))
    return out


def _strip_pad(seq, pad):
    while len(seq) > 1 and seq[-1] == pad:
        seq = seq[:-1]
    return seq


# ------------------------------------------------------------------------------------------------------ load/save
def load(folder):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import safetensors_io
    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)
    m = MarianMTModel(c)
    w = safetensors_io.load(os.path.join(folder, "model.safetensors"))
    load_state(m, w)
    gen = {}
    p = os.path.join(folder, "generation_config.json")
    if os.path.exists(p):
        with open(p) as f:
            gen = json.load(f)
    return m.eval(), Tokenizer(folder), gen


TIED_COPIES = ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight")
POSITION_KEYS = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")


def load_state(model, tensors):
    """A model.safetensors dict; tied copies of the shared matrix (some conversions store them) must equal it, stored
    positions must equal the computed ones, a missing final_logits_bias is zero (as HF's
    _keys_to_ignore_on_load_missing)."""
    t = dict(tensors)
    for k in TIED_COPIES:
        if k in t:
            assert torch.equal(t.pop(k).float(), t["model.shared.weight"].float()), k
    for k in POSITION_KEYS:
        if k in t:
            assert torch.allclose(t.pop(k).float(), model.positions, atol=1e-6), k
    t.setdefault("final_logits_bias", torch.zeros(1, model.config["vocab_size"]))
    own = model.state_dict()
    missing, extra = set(own) - set(t), set(t) - set(own)
    if missing or extra:
        raise ValueError(f"missing {sorted(missing)}, unexpected {sorted(extra)}")
    with torch.no_grad():
        for k, v in t.items():
            own[k].copy_(v.float())


def export_state(model):
    return {k: v.detach().contiguous() for k, v in model.state_dict().items()}


# ----------------------------------------------------------------------------------------------------- self-check
def tiny_config(V=37, d=32, heads=4, ffn=48, enc=2, dec=2, pad=None):
    pad = V - 1 if pad is None else pad
    return {"model_type": "marian", "d_model": d, "encoder_layers": enc, "decoder_layers": dec,
            "encoder_attention_heads": heads, "decoder_attention_heads": heads, "encoder_ffn_dim": ffn,
            "decoder_ffn_dim": ffn, "activation_function": "swish", "max_position_embeddings": 64,
            "scale_embedding": True, "vocab_size": V, "decoder_vocab_size": V, "pad_token_id": pad,
            "eos_token_id": 0, "decoder_start_token_id": pad, "forced_eos_token_id": 0, "bad_words_ids": [[pad]],
            "share_encoder_decoder_embeddings": True, "tie_word_embeddings": True}


def self_check(seed=0):
    torch.manual_seed(seed)
    c = tiny_config()
    m = MarianMTModel(c).eval()
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 0.3)
        m.model.shared.weight[c["pad_token_id"]] = 0
        m.final_logits_bias.normal_(0, 1.0)
    V, pad = c["vocab_size"], c["pad_token_id"]
    # positions: sin half / cos half, row 0 = [0…0, 1…1]
    P = sinusoidal_positions(8, 6)
    assert torch.equal(P[0], torch.tensor([0., 0, 0, 1, 1, 1]))
    angle = 3 / 10000 ** (2 / 6)
    assert abs(float(P[3, 1]) - math.sin(angle)) < 1e-7 and abs(float(P[3, 4]) - math.cos(angle)) < 1e-7
    src = torch.randint(1, V - 1, (2, 9))
    src[:, -1] = 0
    tgt = torch.randint(1, V - 1, (2, 7))
    tgt[:, 0] = pad
    with torch.no_grad():
        full = m(src, tgt)
        assert len(full["encoder_hidden_states"]) == 3 and len(full["decoder_hidden_states"]) == 3
        # cached incremental decoding = the full forward, step by step
        enc = full["encoder_last_hidden_state"]
        cache = {"past": 0, "layers": []}
        cross = m.cross_kv(enc)
        for t in range(tgt.shape[1]):
            h = m.decode(tgt[:, t:t + 1], enc, cache=cache, cross=cross)
            assert torch.allclose(m.logits(h)[:, 0], full["logits"][:, t], atol=1e-4), t
        # padding: a padded, masked batch row = the row alone
        short = src[1, 3:].clone()
        padded = torch.cat([short, torch.full((3,), pad)])[None]
        mask = torch.tensor([[1] * len(short) + [0] * 3])
        a = m(padded, tgt[1:2], mask)["logits"]
        b = m(short[None], tgt[1:2])["logits"]
        assert torch.allclose(a, b, atol=1e-4), float((a - b).abs().max())
        # greedy (cached) = argmax over full recomputation, with the processors
        o = generation_options(m, max_new_tokens=12)
        g = generate(m, src, max_new_tokens=12)
        for r in range(2):
            seq = [pad]
            e = m.encode(src[r:r + 1])
            while len(seq) < o["max_length"]:
                lg = m.logits(m.decode(torch.tensor([seq]), e))[0, -1]
                lg[pad] = -float("inf")
                if len(seq) == o["max_length"] - 1:
                    nxt = 0
                else:
                    nxt = int(lg.argmax())
                seq.append(nxt)
                if nxt == 0:
                    break
            assert g[r] == seq, (g[r], seq)
            assert g[r][0] == pad and pad not in g[r][1:] and len(g[r]) <= 13
        # num_beams 1 = greedy; beam search reaches max_length with forced EOS
        assert generate(m, src, num_beams=1, max_new_tokens=12) == g
        for nb in (2, 4):
            for es in (False, True, "never"):
                bs = generate(m, src, num_beams=nb, max_new_tokens=10, early_stopping=es)
                for s in bs:
                    assert s[0] == pad and s[-1] == 0 and len(s) <= 11 and pad not in s[1:], s
        # num_return_sequences: the first row is the num_return_sequences 1 answer, scores best first; the dict form
        for es in (False, "never"):
            one = generate(m, src, num_beams=4, max_new_tokens=10, early_stopping=es)
            d = generate(m, src, num_beams=4, max_new_tokens=10, early_stopping=es, num_return_sequences=3,
                         return_dict_in_generate=True)
            assert [d["sequences"][3 * r] for r in range(2)] == one and len(d["sequences_scores"]) == 6
            for r in range(2):
                sc = d["sequences_scores"][3 * r:3 * r + 3]
                assert sc == sorted(sc, reverse=True) and sc[-1] > -1e8, sc
        # greedy's cross-attention probabilities (cached, one query per step) = the full forward's, row by row
        d = generate(m, src[:1], max_new_tokens=8, return_dict_in_generate=True, output_attentions=True)
        seq, steps = d["sequences"][0], d["cross_attentions"][0]
        assert d["sequences_scores"] is None and len(steps) == len(seq) - 1
        full_rec = []
        m.decode(torch.tensor([seq[:-1]]), m.encode(src[:1]), cross_attn=full_rec)
        for t, layers in enumerate(steps):
            for l, w in enumerate(layers):
                assert torch.allclose(w, full_rec[l][0, :, t], atol=1e-5) and abs(float(w.sum()) - w.shape[0]) < 1e-4
        # beam search with a full beam (num_beams ≥ every path) and no heuristic finds the best-scoring sequence
        # (brute force over all sequences), also where greedy does not
        not_greedy = 0
        for s in range(6):
            torch.manual_seed(s)
            c2 = tiny_config(V=6, d=16, heads=2, ffn=16, enc=1, dec=1)
            m2 = MarianMTModel(c2).eval()
            for p in m2.parameters():
                p.normal_(0, 0.3)
            m2.model.shared.weight[c2["pad_token_id"]] = 0
            s2 = torch.tensor([[1, 2, 3, 0]])
            for L, lp in ((5, 1.0), (5, 0.3)):
                best = _brute_force(m2, s2, L, lp)
                got = generate(m2, s2, num_beams=625, max_new_tokens=L - 1, length_penalty=lp,
                               early_stopping="never", renormalize_logits=True)[0]
                assert got == best[1], (got, best)
                not_greedy += generate(m2, s2, max_new_tokens=L - 1)[0] != got
        assert not_greedy > 0
        # no_repeat_ngram_size: no bigram twice
        for s in generate(m, src, max_new_tokens=20, no_repeat_ngram_size=2, forced_eos_token_id=None):
            grams = [tuple(s[i:i + 2]) for i in range(len(s) - 1)]
            assert len(grams) == len(set(grams)), s
    return True


def _brute_force(m, src, L, lp):
    """Every sequence of the tiny model up to max_length L (EOS-ended or cut at L), scored as HF's beam search
    scores finished hypotheses (pad banned, forced EOS at the last step, renormalized log-probabilities)."""
    c = m.config
    pad, V = c["pad_token_id"], c["vocab_size"]
    o = generation_options(m, max_length=L, renormalize_logits=True)
    enc = m.encode(src)
    best = (-float("inf"), None)
    stack = [([pad], 0.0)]
    while stack:
        seq, s = stack.pop()
        lg = m.logits(m.decode(torch.tensor([seq]), enc))[:, -1].float().log_softmax(-1)
        lg = process(o, torch.tensor([seq]), lg, len(seq))[0]
        for t in range(V):
            if lg[t] == -float("inf"):
                continue
            ns, sc = seq + [t], s + float(lg[t])
            if t == 0 or len(ns) >= L:
                score = sc / ((len(ns) - 1) ** lp)
                if score > best[0]:
                    best = (score, ns)
            else:
                stack.append((ns, sc))
    return best


def main():
    if len(sys.argv) > 2:
        m, tok, gen = load(sys.argv[1])
        for text in sys.argv[2:]:
            ids = tok(text)
            for nb in (1, gen.get("num_beams", 4)):
                out = generate(m, [ids], gen_cfg=gen, num_beams=nb, max_new_tokens=256)[0]
                print(f"[beams {nb}] {tok.decode(out)}")
        return
    print("self-check:", self_check())


if __name__ == "__main__":
    main()
