"""PyTorch reference for T5 (Hugging Face `T5ForConditionalGeneration`: t5 v1.0, t5 v1.1 / flan-t5) with Hugging Face
semantics and tensor names: the network, T5Tokenizer's encoding and decoding, and generate()'s greedy and beam
search (the generation code is tools/reference/marian.py's, which only needs encode(), cross_kv(), decode() with a
cache and logits(): this module's model has them). The oracle that the engine's T5 tests are checked against.

Written from the semantics of `transformers`' modeling_t5.py, configuration_t5.py and tokenization_t5.py (the slow,
SentencePiece tokenizer of transformers 4.x, legacy mode) and generation/utils.py (transformers ≥ 4.50); no code is
taken from there. Needs torch, numpy and sentencepiece only.

The network (config.json: model_type "t5"):
  - one embedding matrix `shared.weight` (vocab_size, d_model), used by both stacks (encoder.embed_tokens and
    decoder.embed_tokens are the same tensor: files may hold copies of it under those names); NO embedding scaling,
    NO absolute positions;
  - T5LayerNorm = RMS norm: y = weight · x / sqrt(mean(x²) + layer_norm_epsilon), the mean over d_model computed in
    float32, no mean subtraction, no bias;
  - pre-norm blocks: x = x + SelfAttention(LN(x)); [decoder: x = x + EncDecAttention(LN(x), encoder output)];
    x = x + FF(LN(x)); each stack ends with its final_layer_norm (the encoder's output, which the cross-attention
    reads, is after encoder.final_layer_norm; the logits are computed from decoder.final_layer_norm's output);
  - attention: q, k, v (d_model → inner_dim = num_heads · d_kv) and o (inner_dim → d_model), no biases; d_kv need not
    be d_model / num_heads; scores = q·k WITHOUT 1/√d_kv scaling, plus the position bias, plus the masks; softmax in
    float32;
  - relative position bias: only block 0 of each stack has layer.0.SelfAttention.relative_attention_bias.weight
    (num_buckets, num_heads); the (heads, query, key) bias is computed once per stack from it and added in every
    block's self-attention; bias[h, i, j] = weight[bucket(j − i), h] with positions counted from 0 (padding does not
    shift them); the encoder's buckets are bidirectional, the decoder's causal (see relative_position_bucket); the
    decoder's query positions are ABSOLUTE: the query of a cached step at position p (p = tokens already in the
    cache) gets bias row weight[bucket(j − p), h] for keys j = 0…p; the cross-attention has no position bias (only the
    source padding mask);
  - masks: a padded source key gets float32 min added to the bias (HF: (1 − mask) · finfo.min); the decoder's future
    keys likewise (causal);
  - feed-forward (config feed_forward_proj → dense_act_fn, is_gated_act as T5Config derives them; explicit
    "dense_act_fn"/"is_gated_act" keys in config.json win, as PretrainedConfig sets them after): "relu" →
    DenseReluDense wo(relu(wi(x))); "gated-gelu" → DenseReluDense wo(gelu_new(wi_0(x)) · wi_1(x)) with gelu_new the
    tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (the module is called DenseReluDense in both cases:
    HF's attribute name, so the tensor names are …layer.N.DenseReluDense.wi_0.weight);
  - LM head: tie_word_embeddings true (t5 v1.0, the default) → logits = (h · d_model^−0.5) · sharedᵀ;
    false (t5 v1.1, flan-t5) → logits = h · lm_head.weightᵀ, no scaling. No final_logits_bias.
  - T5Tokenizer (spiece.model; tokenizer_config.json "extra_ids" n, default 100): ids 0 … P−1 are the SentencePiece
    pieces (T5's models: <pad> 0, </s> 1, <unk> 2, no BOS), then the n sentinels in REVERSE order: <extra_id_i> has
    id P + n − 1 − i (<extra_id_0> is the last id, P + n − 1). The tokenizer's length P + n can be smaller than the
    model's vocab_size (t5: 32100 vs 32128; those ids have embeddings and logits but no token).
    Encoding (transformers 4.x's slow PreTrainedTokenizer.tokenize, T5Tokenizer legacy=True, the default when
    tokenizer_config.json has no "legacy"): the special tokens written in the text ("</s>", "<unk>", "<pad>" and the
    sentinels "<extra_id_0>" … "<extra_id_{n−1}>"; added tokens, matched whole, leftmost first, the longest at one
    place) are cut out and give their ids; the sentinels are lstrip/rstrip added tokens (the whitespace next to them
    is removed from the neighbouring text; it makes no difference to the pieces, SentencePiece drops it anyway);
    every stretch of text between them goes through SentencePiece separately (nmt_nfkc normalization, whitespace
    runs collapsed and trimmed, its own dummy-prefix ▁), pieces kept as strings, a piece SentencePiece does not know
    (a character outside its alphabet: "😀", "漢") comes back as its surface text and gets <unk>'s id 2.
    "<extra_id_{n}>" and beyond are not special: plain text. Then </s> is appended UNLESS the last id already is
    </s> (T5Tokenizer._add_eos_if_not_present: "a</s>" gives one </s>, not two). The empty text gives [</s>].
    Decoding with skip_special_tokens: the ids of </s>, <unk>, <pad> and every sentinel are dropped wherever they
    are, the other ids become their pieces, SentencePiece decodes the pieces (▁ → space, the dummy prefix's space
    dropped), the text is stripped, then clean_up_tokenization_spaces (tokenizer_config.json; False when absent,
    as transformers ≥ 4.45) replaces " ." → ".", " ?" → "?", " !" → "!", " ," → ",", " ' " → "'", " n't" → "n't",
    " 'm" → "'m", " 's" → "'s", " 've" → "'ve", " 're" → "'re" in that order. An id ≥ P + n has no token: HF raises
    (sentencepiece's "piece id is out of range"), so does this reference.
  - generate(): marian.generate: decoder_start_token_id = pad = 0, eos = 1 (config.json / generation_config.json);
    T5's generation_config.json sets no num_beams, forced EOS, bad words or max_length: the defaults are greedy,
    max_length 20 (max_new_tokens n gives max_length n + 1, the start token counts), no processors.

API: `load(folder)` → (T5ForConditionalGeneration, Tokenizer, generation config dict); `model.forward(input_ids,
decoder_input_ids, attention_mask)` → dict(logits, encoder_hidden_states, decoder_hidden_states,
encoder_last_hidden_state) with the hidden states as HF's output_hidden_states gives them: num_layers + 1 entries
per stack, entry 0 = the token embeddings, entry i (1 ≤ i < num_layers) = block i−1's output, and the LAST entry =
final_layer_norm(last block's output) (HF appends the input of every block, then the stack's normalized output: the
last block's raw output is in no entry). `generate(model, input_ids, **options)` = marian.generate (see its
docstring: greedy, HF's vectorized beam search, length_penalty, early_stopping, num_return_sequences,
no_repeat_ngram_size, bad_words_ids, forced_eos_token_id, renormalize_logits, return_dict_in_generate with
sequences_scores, greedy's cross_attentions). `relative_position_bucket(rel, bidirectional, num_buckets,
max_distance)` is HF's _relative_position_bucket on a tensor of (key − query) positions. `python3
tools/reference/t5.py` runs the self-checks on random models; `python3 tools/reference/t5.py FOLDER "text" …`
generates (greedy and 4 beams).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import marian  # noqa: E402  (generate(), generation_options(), process(), key_bias(), reorder())

NEG = torch.finfo(torch.float32).min
generate = marian.generate
generation_options = marian.generation_options


def gelu_new(x):
    """HF's NewGELUActivation (the tanh approximation), written as HF computes it."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


ACTIVATIONS = {"relu": F.relu, "gelu_new": gelu_new, "gelu": F.gelu, "silu": F.silu, "swish": F.silu}


# ----------------------------------------------------------------------------------------------- position buckets
def relative_position_bucket(rel, bidirectional, num_buckets, max_distance):
    """HF's T5Attention._relative_position_bucket on a long tensor rel = key position − query position.
    bidirectional: half the buckets for rel > 0 (offset num_buckets // 2), |rel| in the other half; causal: only
    rel ≤ 0 counts (n = max(−rel, 0)). Of the n buckets left, n < max_exact = n_buckets // 2 is its own bucket; larger
    n gets max_exact + trunc(log(n / max_exact) / log(max_distance / max_exact) · (n_buckets − max_exact)), clamped
    to n_buckets − 1, computed in float32 (see bucket_float32 for the exact arithmetic)."""
    out = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        out = out + (rel > 0).to(torch.long) * num_buckets
        n = torch.abs(rel)
    else:
        n = -torch.min(rel, torch.zeros_like(rel))
    max_exact = num_buckets // 2
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return out + torch.where(n < max_exact, n, large)


def bucket_float32(rel, bidirectional, num_buckets, max_distance):
    """The same for one int, with the float32 arithmetic spelled out (what a C++ port does): every step rounded to
    float32 — r = float(n) / float(max_exact); l = logf(r); l = l / float(log(max_distance / max_exact) in double);
    l = l · float(n_buckets − max_exact); truncate toward zero."""
    f = np.float32
    b = 0
    if bidirectional:
        num_buckets //= 2
        b = num_buckets if rel > 0 else 0
        n = abs(rel)
    else:
        n = max(-rel, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return b + n
    v = np.log(f(n) / f(max_exact), dtype=np.float32)
    v = f(v / f(math.log(max_distance / max_exact)))
    v = f(v * f(num_buckets - max_exact))
    return b + min(max_exact + int(v), num_buckets - 1)


# ---------------------------------------------------------------------------------------------------------- network
class LayerNorm(nn.Module):
    """T5LayerNorm: RMS norm, float32 variance, no bias."""

    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


class Attention(nn.Module):
    def __init__(self, c, has_bias):
        super().__init__()
        self.h, self.dk = c["num_heads"], c["d_kv"]
        inner, d = self.h * self.dk, c["d_model"]
        self.q, self.k, self.v = (nn.Linear(d, inner, bias=False) for _ in range(3))
        self.o = nn.Linear(inner, d, bias=False)
        if has_bias:
            self.relative_attention_bias = nn.Embedding(c["relative_attention_num_buckets"], self.h)

    def split(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.dk).transpose(1, 2)

    def kv(self, x):
        return self.split(self.k(x)), self.split(self.v(x))

    def forward(self, x, k, v, bias, record=None):
        """x: (B, T, d) normalized queries; k, v: (B, H, S, dk); bias: position bias + masks, broadcastable to
        (B, H, T, S), or None; record: None or a list that gets the probabilities (B, H, T, S)."""
        B, T, _ = x.shape
        w = self.split(self.q(x)) @ k.transpose(-1, -2)  # no 1/sqrt(d_kv)
        if bias is not None:
            w = w + bias
        w = w.float().softmax(-1).type_as(w)
        if record is not None:
            record.append(w.detach())
        return self.o((w @ v).transpose(1, 2).reshape(B, T, self.h * self.dk))


class LayerSelfAttention(nn.Module):
    def __init__(self, c, has_bias):
        super().__init__()
        self.SelfAttention = Attention(c, has_bias)
        self.layer_norm = LayerNorm(c["d_model"], c["layer_norm_epsilon"])


class LayerCrossAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.EncDecAttention = Attention(c, False)
        self.layer_norm = LayerNorm(c["d_model"], c["layer_norm_epsilon"])


class DenseActDense(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wi = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wo = nn.Linear(c["d_ff"], c["d_model"], bias=False)
        self.act = ACTIVATIONS[c["dense_act_fn"]]

    def forward(self, x):
        return self.wo(self.act(self.wi(x)))


class DenseGatedActDense(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wi_0 = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wi_1 = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wo = nn.Linear(c["d_ff"], c["d_model"], bias=False)
        self.act = ACTIVATIONS[c["dense_act_fn"]]

    def forward(self, x):
        return self.wo(self.act(self.wi_0(x)) * self.wi_1(x))


class LayerFF(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.DenseReluDense = DenseGatedActDense(c) if c["is_gated_act"] else DenseActDense(c)
        self.layer_norm = LayerNorm(c["d_model"], c["layer_norm_epsilon"])

    def forward(self, x):
        return x + self.DenseReluDense(self.layer_norm(x))


class Block(nn.Module):
    def __init__(self, c, decoder, first):
        super().__init__()
        self.decoder = decoder
        layers = [LayerSelfAttention(c, first)]
        if decoder:
            layers.append(LayerCrossAttention(c))
        layers.append(LayerFF(c))
        self.layer = nn.ModuleList(layers)

    def forward(self, x, bias, cross_k=None, cross_v=None, cross_bias=None, cache=None, cross_record=None):
        """cache: None, or this layer's dict with the past self-attention "k", "v" (B, H, t, dk), extended in place."""
        sa = self.layer[0]
        h = sa.layer_norm(x)
        k, v = sa.SelfAttention.kv(h)
        if cache is not None:
            if "k" in cache:
                k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
            cache["k"], cache["v"] = k, v
        x = x + sa.SelfAttention(h, k, v, bias)
        if self.decoder:
            ca = self.layer[1]
            x = x + ca.EncDecAttention(ca.layer_norm(x), cross_k, cross_v, cross_bias, cross_record)
        return self.layer[-1](x)


class Stack(nn.Module):
    def __init__(self, c, n, decoder):
        super().__init__()
        self.block = nn.ModuleList([Block(c, decoder, i == 0) for i in range(n)])
        self.final_layer_norm = LayerNorm(c["d_model"], c["layer_norm_epsilon"])

    def position_bias(self, q_pos, k_pos, bidirectional, c):
        """(1, H, Tq, Tk): block 0's relative_attention_bias at bucket(k − q)."""
        rel = k_pos[None, :] - q_pos[:, None]
        b = relative_position_bucket(rel, bidirectional, c["relative_attention_num_buckets"],
                                     c["relative_attention_max_distance"])
        return self.block[0].layer[0].SelfAttention.relative_attention_bias(b).permute(2, 0, 1)[None]


def full_config(c):
    """config.json with T5Config's defaults and derived keys filled in."""
    c = dict(c)
    assert c.get("model_type", "t5") == "t5"
    defaults = {"vocab_size": 32128, "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_heads": 8,
                "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
                "layer_norm_epsilon": 1e-6, "feed_forward_proj": "relu", "tie_word_embeddings": True,
                "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0}
    for k, v in defaults.items():
        if c.get(k) is None:
            c[k] = v
    if c.get("num_decoder_layers") is None:
        c["num_decoder_layers"] = c["num_layers"]
    act = c["feed_forward_proj"].split("-")
    assert len(act) == 1 or (len(act) == 2 and act[0] == "gated"), c["feed_forward_proj"]
    derived = {"dense_act_fn": "gelu_new" if c["feed_forward_proj"] == "gated-gelu" else act[-1],
               "is_gated_act": act[0] == "gated"}
    for k, v in derived.items():  # keys written in config.json win (PretrainedConfig sets them after T5Config)
        c.setdefault(k, v)
    return c


class T5ForConditionalGeneration(nn.Module):
    """state_dict() keys = what save_pretrained writes: shared.weight, encoder.block.…, encoder.final_layer_norm.weight,
    decoder.block.…, decoder.final_layer_norm.weight, lm_head.weight when tie_word_embeddings is false (no
    embed_tokens copies)."""

    def __init__(self, config):
        super().__init__()
        c = full_config(config)
        self.config = c
        self.tied = bool(c["tie_word_embeddings"])
        self.shared = nn.Embedding(c["vocab_size"], c["d_model"])
        self.encoder = Stack(c, c["num_layers"], False)
        self.decoder = Stack(c, c["num_decoder_layers"], True)
        if not self.tied:
            self.lm_head = nn.Linear(c["d_model"], c["vocab_size"], bias=False)

    def encode(self, input_ids, attention_mask=None, hidden=None):
        """(B, S) ids, (B, S) 1/0 mask → the encoder's output (B, S, d) after final_layer_norm; hidden: a list that
        gets HF's encoder_hidden_states (the embeddings, each block's input after that, the normalized output)."""
        x = self.shared(input_ids)
        S = x.shape[1]
        pos = torch.arange(S)
        bias = self.encoder.position_bias(pos, pos, True, self.config)
        if attention_mask is not None:
            bias = bias + marian.key_bias(attention_mask)
        for blk in self.encoder.block:
            if hidden is not None:
                hidden.append(x)
            x = blk(x, bias)
        x = self.encoder.final_layer_norm(x)
        if hidden is not None:
            hidden.append(x)
        return x

    def cross_kv(self, enc):
        return [blk.layer[1].EncDecAttention.kv(enc) for blk in self.decoder.block]

    def decode(self, ids, enc, attention_mask=None, cache=None, cross=None, hidden=None, cross_attn=None):
        """Decoder over ids (B, T) that follow `past` cached positions → (B, T, d) after final_layer_norm.
        cache: None (the whole prefix) or {"past": n, "layers": [...]}, updated; cross: cross_kv(enc) per layer;
        hidden: HF's decoder_hidden_states; cross_attn: a list that gets each layer's cross-attention (B, H, T, S)."""
        past = cache["past"] if cache is not None else 0
        T = ids.shape[1]
        x = self.shared(ids)
        q_pos, k_pos = torch.arange(past, past + T), torch.arange(past + T)
        bias = self.decoder.position_bias(q_pos, k_pos, False, self.config)
        bias = bias + torch.full((T, past + T), NEG).triu(past + 1)[None, None]  # causal: keys after the query
        cross_bias = None if attention_mask is None else marian.key_bias(attention_mask)
        cross = cross if cross is not None else self.cross_kv(enc)
        if cache is not None and not cache["layers"]:
            cache["layers"] = [{} for _ in self.decoder.block]
        for l, blk in enumerate(self.decoder.block):
            if hidden is not None:
                hidden.append(x)
            x = blk(x, bias, cross[l][0], cross[l][1], cross_bias, None if cache is None else cache["layers"][l],
                    cross_attn)
        x = self.decoder.final_layer_norm(x)
        if hidden is not None:
            hidden.append(x)
        if cache is not None:
            cache["past"] = past + T
        return x

    def logits(self, h):
        if self.tied:
            return (h * self.config["d_model"] ** -0.5) @ self.shared.weight.T
        return h @ self.lm_head.weight.T

    def forward(self, input_ids, decoder_input_ids, attention_mask=None):
        enc_h, dec_h = [], []
        enc = self.encode(input_ids, attention_mask, enc_h)
        h = self.decode(decoder_input_ids, enc, attention_mask, hidden=dec_h)
        return {"logits": self.logits(h), "encoder_hidden_states": enc_h, "decoder_hidden_states": dec_h,
                "encoder_last_hidden_state": enc}


# ---------------------------------------------------------------------------------------------------------- tokens
class Tokenizer:
    """T5Tokenizer (slow, legacy=True) over spiece.model + tokenizer_config.json."""

    def __init__(self, folder):
        import sentencepiece as spm
        self.sp = spm.SentencePieceProcessor(model_file=os.path.join(folder, "spiece.model"))
        cfg = {}
        p = os.path.join(folder, "tokenizer_config.json")
        if os.path.exists(p):
            with open(p, encoding="utf-8") as f:
                cfg = json.load(f)
        assert cfg.get("legacy", True), "legacy=False (no dummy prefix after special tokens) is not implemented"
        P = self.sp.get_piece_size()
        n = cfg.get("extra_ids", 100)
        self.extra = {f"<extra_id_{i}>": P + n - 1 - i for i in range(n)}
        extra_listed = [t for t in cfg.get("additional_special_tokens") or [] if "<extra_id_" in t]
        assert not extra_listed or sorted(extra_listed) == sorted(self.extra), "extra_ids and the sentinels differ"
        others = [t for t in cfg.get("additional_special_tokens") or [] if "<extra_id_" not in t]
        assert not others, f"additional special tokens other than the sentinels are not implemented: {others}"
        self.size = P + n
        names = {k: cfg.get(k, d) for k, d in (("eos_token", "</s>"), ("unk_token", "<unk>"), ("pad_token", "<pad>"))}
        self.eos, self.unk, self.pad = (self.sp.piece_to_id(names[k]) for k in ("eos_token", "unk_token", "pad_token"))
        assert self.sp.id_to_piece(self.unk) == names["unk_token"] and self.sp.is_unknown(self.unk)
        self.token_ids = {names["eos_token"]: self.eos, names["unk_token"]: self.unk, names["pad_token"]: self.pad}
        self.token_ids.update(self.extra)
        self.strip_around = set(self.extra)  # the sentinels are AddedToken(lstrip=True, rstrip=True)
        self.special_ids = set(self.token_ids.values())
        self.clean_up = bool(cfg.get("clean_up_tokenization_spaces", False))
        self._split_re = re.compile("(" + "|".join(re.escape(t) for t in sorted(self.token_ids, key=len, reverse=True))
                                    + ")")

    def tokenize(self, text):
        parts = self._split_re.split(text)  # odd indices: special tokens
        for i in range(1, len(parts), 2):
            if parts[i] in self.strip_around:
                if i + 1 < len(parts) and parts[i + 1]:
                    parts[i + 1] = parts[i + 1].lstrip()
                if parts[i - 1]:
                    parts[i - 1] = parts[i - 1].rstrip()
        out = []
        for i, part in enumerate(parts):
            if not part:
                continue
            if i % 2:
                out.append(part)
            else:
                out += self.sp.encode(part, out_type=str)
        return out

    def convert_tokens_to_ids(self, tokens):
        return [self.token_ids[t] if t in self.token_ids else self.sp.piece_to_id(t) for t in tokens]

    def __call__(self, text):
        """tokenizer(text).input_ids: the ids, then </s> unless the last one already is </s>."""
        ids = self.convert_tokens_to_ids(self.tokenize(text))
        return ids if ids and ids[-1] == self.eos else ids + [self.eos]

    def decode(self, ids, skip_special_tokens=True):
        assert skip_special_tokens, "only skip_special_tokens=True is implemented"
        pieces = []
        for i in ids:
            i = int(i)
            if i in self.special_ids:
                continue
            if not 0 <= i < self.sp.get_piece_size():
                raise IndexError(f"piece id {i} is out of range (the tokenizer has {self.size} tokens)")
            pieces.append(self.sp.id_to_piece(i))
        text = self.sp.decode(pieces).strip() if pieces else ""
        return clean_up_tokenization(text) if self.clean_up else text


def clean_up_tokenization(s):
    """PreTrainedTokenizerBase.clean_up_tokenization."""
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
                 (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        s = s.replace(a, b)
    return s


# ------------------------------------------------------------------------------------------------------- load/save
TIED_COPIES = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight")
IGNORED_KEYS = ("decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",)  # HF ignores it on load


def load(folder):
    import safetensors_io
    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)
    m = T5ForConditionalGeneration(c)
    load_state(m, safetensors_io.load(os.path.join(folder, "model.safetensors")))
    gen = {}
    p = os.path.join(folder, "generation_config.json")
    if os.path.exists(p):
        with open(p) as f:
            gen = json.load(f)
    return m.eval(), Tokenizer(folder), gen


def load_state(model, tensors):
    """A model.safetensors dict. encoder/decoder.embed_tokens.weight copies (and lm_head.weight when tied) must equal
    shared.weight; the old checkpoints' decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight is
    ignored (HF's _keys_to_ignore_on_load_unexpected)."""
    t = dict(tensors)
    copies = TIED_COPIES + (("lm_head.weight",) if model.tied else ())
    for k in copies:
        if k in t:
            assert torch.equal(t.pop(k).float(), t["shared.weight"].float()), k
    for k in IGNORED_KEYS:
        t.pop(k, None)
    own = model.state_dict()
    missing, extra = set(own) - set(t), set(t) - set(own)
    if missing or extra:
        raise ValueError(f"missing {sorted(missing)}, unexpected {sorted(extra)}")
    with torch.no_grad():
        for k, v in t.items():
            assert own[k].shape == v.shape, (k, own[k].shape, v.shape)
            own[k].copy_(v.float())


def export_state(model):
    return {k: v.detach().contiguous() for k, v in model.state_dict().items()}


# ----------------------------------------------------------------------------------------------------- self-check
def tiny_config(V=41, d=24, heads=4, d_kv=5, d_ff=40, enc=2, dec=3, proj="gated-gelu", tied=False, nb=16, md=20):
    return {"model_type": "t5", "vocab_size": V, "d_model": d, "num_heads": heads, "d_kv": d_kv, "d_ff": d_ff,
            "num_layers": enc, "num_decoder_layers": dec, "feed_forward_proj": proj, "tie_word_embeddings": tied,
            "relative_attention_num_buckets": nb, "relative_attention_max_distance": md,
            "layer_norm_epsilon": 1e-6, "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0}


def _greedy_full(m, enc, o):
    seq = [o["decoder_start_token_id"]]
    while len(seq) < o["max_length"]:
        lg = marian.process(o, torch.tensor([seq]), m.logits(m.decode(torch.tensor([seq]), enc))[:, -1].float(),
                            len(seq))
        seq.append(int(lg[0].argmax()))
        if seq[-1] == o["eos_token_id"]:
            break
    return seq


def self_check(seed=0):
    # the bucket function: HF's tensor code = the float32 arithmetic written out, on both sides of every edge
    for nb, md in ((32, 128), (16, 20), (8, 20), (12, 7), (32, 40)):
        rel = torch.arange(-400, 401)
        for bidir in (True, False):
            got = relative_position_bucket(rel, bidir, nb, md).tolist()
            assert got == [bucket_float32(int(r), bidir, nb, md) for r in rel], (nb, md, bidir)
            assert 0 <= min(got) and max(got) < nb
    b = relative_position_bucket(torch.tensor([-200, -128, -64, -16, -15, -8, -7, 0, 7, 8, 15, 16, 64, 128]), True,
                                 32, 128).tolist()
    assert b == [15, 15, 14, 10, 9, 8, 7, 0, 23, 24, 25, 26, 30, 31], b
    b = relative_position_bucket(torch.tensor([5, 0, -1, -15, -16, -31, -32, -127, -128, -500]), False, 32, 128)
    assert b.tolist() == [0, 0, 1, 15, 16, 21, 21, 31, 31, 31], b.tolist()

    for proj, tied, d_kv in (("gated-gelu", False, 5), ("relu", True, 6)):
        torch.manual_seed(seed)
        c = tiny_config(proj=proj, tied=tied, d_kv=d_kv)
        m = T5ForConditionalGeneration(c).eval()
        with torch.no_grad():
            for name, p in m.named_parameters():
                p.normal_(1.0, 0.3) if "layer_norm" in name else p.normal_(0, 0.4)
        V = c["vocab_size"]
        # names: exactly HF's
        keys = set(m.state_dict())
        assert "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight" in keys
        assert "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight" in keys
        assert not any("relative_attention_bias" in k and ".block.0." not in k for k in keys)
        ff = "wi_0" if proj.startswith("gated") else "wi"
        assert f"decoder.block.2.layer.2.DenseReluDense.{ff}.weight" in keys
        assert ("lm_head.weight" in keys) == (not tied)
        assert m.state_dict()["encoder.block.1.layer.0.SelfAttention.q.weight"].shape == (4 * d_kv, 24)
        # RMS norm
        ln = m.encoder.final_layer_norm
        x = torch.randn(3, 24)
        want = ln.weight * x / torch.sqrt((x.double() ** 2).mean(-1, keepdim=True) + 1e-6).float()
        assert torch.allclose(ln(x), want, atol=1e-5)
        src = torch.randint(3, V, (2, 23))
        src[:, -1] = 1
        tgt = torch.randint(2, V, (2, 7))
        tgt[:, 0] = 0
        with torch.no_grad():
            full = m(src, tgt)
            eh, dh = full["encoder_hidden_states"], full["decoder_hidden_states"]
            assert len(eh) == 3 and len(dh) == 4
            # the last hidden state is after final_layer_norm; entry i is block i's input
            assert torch.equal(eh[-1], full["encoder_last_hidden_state"])
            assert torch.allclose(m.encoder.block[0](eh[0], m.encoder.position_bias(
                torch.arange(23), torch.arange(23), True, m.config)), eh[1], atol=1e-6)
            assert torch.equal(eh[0], m.shared(src))
            # tied logits: scaled by d^-0.5; untied: lm_head, unscaled
            h = dh[-1]
            want = (h * 24 ** -0.5) @ m.shared.weight.T if tied else h @ m.lm_head.weight.T
            assert torch.equal(full["logits"], want)
            # cached incremental decoding = the full forward, step by step (absolute query positions)
            enc = full["encoder_last_hidden_state"]
            cache, cross = {"past": 0, "layers": []}, m.cross_kv(enc)
            for t in range(tgt.shape[1]):
                h = m.decode(tgt[:, t:t + 1], enc, cache=cache, cross=cross)
                assert torch.allclose(m.logits(h)[:, 0], full["logits"][:, t], atol=1e-4), t
            # two tokens at once after a cached prefix
            cache, cross = {"past": 0, "layers": []}, m.cross_kv(enc)
            m.decode(tgt[:, :3], enc, cache=cache, cross=cross)
            h = m.decode(tgt[:, 3:5], enc, cache=cache, cross=cross)
            assert torch.allclose(m.logits(h), full["logits"][:, 3:5], atol=1e-4)
            # padding: a padded, masked row = the row alone, padded on the right or on the left (relative positions)
            short = src[1, 6:].clone()
            b = m(short[None], tgt[1:2])
            for padded, mask in ((torch.cat([short, torch.zeros(6, dtype=torch.long)]), [1] * 17 + [0] * 6),
                                 (torch.cat([torch.zeros(6, dtype=torch.long), short]), [0] * 6 + [1] * 17)):
                a = m(padded[None], tgt[1:2], torch.tensor([mask]))
                assert torch.allclose(a["logits"], b["logits"], atol=1e-4), \
                    float((a["logits"] - b["logits"]).abs().max())
                keep = torch.tensor(mask).bool()
                diff = (a["encoder_last_hidden_state"][0, keep] - b["encoder_last_hidden_state"][0]).abs().max()
                assert diff < 1e-4, float(diff)
            # greedy (cached) = argmax over full recomputation; beam search runs and ends right
            o = generation_options(m, max_new_tokens=12)
            g = generate(m, src, max_new_tokens=12)
            for r in range(2):
                assert g[r] == _greedy_full(m, m.encode(src[r:r + 1]), o), r
            for nb in (2, 4):
                for es in (False, True, "never"):
                    for s in generate(m, src, num_beams=nb, max_new_tokens=10, early_stopping=es):
                        assert s[0] == 0 and len(s) <= 11 and 1 not in s[1:-1], s
            # greedy's cross-attention (cached, one query per step) = the full forward's
            d = generate(m, src[:1], max_new_tokens=8, return_dict_in_generate=True, output_attentions=True)
            seq, steps = d["sequences"][0], d["cross_attentions"][0]
            rec = []
            m.decode(torch.tensor([seq[:-1]]), m.encode(src[:1]), cross_attn=rec)
            for t, layers in enumerate(steps):
                for l, w in enumerate(layers):
                    assert torch.allclose(w, rec[l][0, :, t], atol=1e-5)
        # save / load round trip through safetensors, with the copies a file may hold
        import tempfile
        import safetensors_io
        with tempfile.TemporaryDirectory() as tmp:
            st = export_state(m)
            for k in TIED_COPIES + (("lm_head.weight",) if tied else ()):
                st[k] = st["shared.weight"].clone()
            st[IGNORED_KEYS[0]] = torch.randn(c["relative_attention_num_buckets"], 4)
            safetensors_io.save(os.path.join(tmp, "model.safetensors"), st)
            with open(os.path.join(tmp, "config.json"), "w") as f:
                json.dump(c, f)
            m2 = T5ForConditionalGeneration(c)
            load_state(m2, safetensors_io.load(os.path.join(tmp, "model.safetensors")))
            for k, v in m.state_dict().items():
                assert torch.equal(v, m2.state_dict()[k]), k
    assert clean_up_tokenization("Hello , world ! I 'm here . Don 't") == "Hello, world! I'm here. Don 't"
    return True


def main():
    if len(sys.argv) > 2:
        m, tok, gen = load(sys.argv[1])
        for text in sys.argv[2:]:
            ids = tok(text)
            for nb in (1, 4):
                out = generate(m, [ids], gen_cfg=gen, num_beams=nb, max_new_tokens=32)[0]
                print(f"[beams {nb}] {out} {tok.decode(out)!r}")
        return
    print("self-check:", self_check())


if __name__ == "__main__":
    main()
