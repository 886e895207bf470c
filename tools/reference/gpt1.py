"""PyTorch reference for GPT-1 (Hugging Face `OpenAIGPTLMHeadModel`, model_type "openai-gpt") and its tokenizer.

Written from the semantics of `transformers`' models/openai/modeling_openai.py, configuration_openai.py,
tokenization_openai.py (the slow tokenizer, without ftfy/spacy), tokenization_openai_fast.py and
convert_slow_tokenizer.py's OpenAIGPTConverter, and of the Rust `tokenizers` library's BertNormalizer,
BertPreTokenizer, BPE model and BPEDecoder; no code is taken from there.

The network (`OpenAIGPTLMHeadModel`, parameter names as Hugging Face's, under `transformer.`):
  tokens_embed.weight (V, E), positions_embed.weight (n_positions, E), per block i:
  h.i.attn.c_attn.weight (E, 3E) + bias (3E)     Conv1D: y = x @ W + b (weight stored (in, out))
  h.i.attn.c_proj.weight (E, E) + bias
  h.i.ln_1.weight / bias (E)
  h.i.mlp.c_fc.weight (E, 4E) + bias,  h.i.mlp.c_proj.weight (4E, E) + bias
  h.i.ln_2.weight / bias (E)
  x = tokens_embed[ids] + positions_embed[0..T-1]            (hidden state 0; no embedding layer norm)
  per block (POST-layer-norm):  n = ln_1(x + attn(x));  x = ln_2(n + mlp(n))      (hidden states 1..n_layer)
  logits = x @ tokens_embed.weightᵀ                           (tied lm_head, no bias, NO final layer norm)
  attn: q, k, v = split(c_attn(x), E); per head (head_dim = E / n_head): w = (q·kᵀ) / sqrt(head_dim), then the
        causal mask as HF applies it, w = w·b − 1e4·(1 − b) with b the lower-triangular ones (masked scores are
        exactly −10000, not −inf, not w − 10000), softmax, · v, heads merged, c_proj.
  mlp:  c_proj(act(c_fc(x))) with act = HF's ACT_FNS[config.afn] for openai: {"relu": ReLU, "silu": SiLU,
        "swish": SiLU, "gelu": gelu_new} — "gelu" is the TANH approximation
        0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (modeling_openai.py: ACT_FNS = {..., "gelu": gelu_new, ...}),
        not the erf GELU that "gelu" means in ACT2FN.
        Any other afn (even "gelu_new") is a KeyError in HF; refused here too.
  LayerNorm eps: config.layer_norm_epsilon. Dropouts (embd/attn/resid_pdrop) are inactive in eval.

The tokenizer, two flavours:
  OpenAIGPTTokenizer     transformers' slow class from vocab.json + merges.txt without ftfy/spacy (the fallback:
                         BERT's BasicTokenizer, do_lower_case=True), as transformers 4.x runs it (the versions whose
                         class has the do_lower_case property), including PreTrainedTokenizer.tokenize's
                         do_lower_case pass and its special-token splitting. (AutoTokenizer picks the fast class
                         by default, and transformers 5 has only that one: the tokenizer.json semantics below.)
  TokenizerJsonGPT1      a tokenizer.json in the OpenAIGPTConverter layout (BertNormalizer lowercase, BertPreTokenizer,
                         BPE end_of_word_suffix "</w>", unk "<unk>", BPEDecoder), with the Rust tokenizers'
                         semantics (what OpenAIGPTTokenizerFast, and transformers 5's OpenAIGPTTokenizer, run).
  They agree except on the cases listed in SLOW_FAST_DIFFERENCES.

Also a small BPE learner in OpenAI GPT's vocabulary layout (learn_bpe / gpt1_vocab) for the fixtures.

Used by tools/reference/make_gpt1_fixtures.py.
"""
import heapq
import json
import math
import os
import sys
import types
import unicodedata
from collections import Counter

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402  (Conv1D, gelu_new: the same as GPT-2's)
import tokenizers as toks  # noqa: E402  (BERT's BasicTokenizer: WordPiece.basic)

Conv1D = models.Conv1D


def gelu_tanh(x):
    """transformers' gelu_new (NewGELUActivation): the tanh approximation."""
    return models.gelu_new(x)


ACT_FNS = {"relu": torch.relu, "silu": nn.functional.silu, "swish": nn.functional.silu, "gelu": gelu_tanh}
MASK_VALUE = -1e4


# ---------------------------------------------------------------------------------------------------- network
class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        E, P = c["n_embd"], c["n_positions"]
        if E % c["n_head"]:
            raise ValueError("n_embd must be divisible by n_head")
        self.n_head = c["n_head"]
        self.c_attn = Conv1D(E, 3 * E)
        self.c_proj = Conv1D(E, E)
        # HF's non-persistent buffer (the hub checkpoint still stores it, as h.i.attn.bias (1, 1, P, P))
        self.register_buffer("bias", torch.tril(torch.ones(P, P)).view(1, 1, P, P), persistent=False)
        self.mask_value = MASK_VALUE

    def forward(self, x):
        B, T, E = x.shape
        D = E // self.n_head
        q, k, v = self.c_attn(x).split(E, dim=2)
        heads = lambda t: t.view(B, T, self.n_head, D).transpose(1, 2)  # (B, H, T, D)
        q, k, v = heads(q), heads(k), heads(v)
        w = (q @ k.transpose(-1, -2)) / math.sqrt(D)
        b = self.bias[:, :, :T, :T]
        if math.isinf(self.mask_value):  # (a variant for the fixture script's checks: −inf · 0 would be NaN)
            w = w.masked_fill(b == 0, self.mask_value)
        else:
            w = w * b + self.mask_value * (1 - b)
        w = w.softmax(-1)
        y = (w @ v).transpose(1, 2).reshape(B, T, E)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        E = c["n_embd"]
        if c.get("afn", "gelu") not in ACT_FNS:
            raise KeyError(f"afn {c.get('afn')!r} is not in Hugging Face's openai ACT_FNS {sorted(ACT_FNS)}")
        self.c_fc = Conv1D(E, 4 * E)
        self.c_proj = Conv1D(4 * E, E)
        self.act = ACT_FNS[c.get("afn", "gelu")]

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        E, eps = c["n_embd"], c["layer_norm_epsilon"]
        self.attn = Attention(c)
        self.ln_1 = nn.LayerNorm(E, eps=eps)
        self.mlp = MLP(c)
        self.ln_2 = nn.LayerNorm(E, eps=eps)

    def forward(self, x):
        n = self.ln_1(x + self.attn(x))
        return self.ln_2(n + self.mlp(n))


class OpenAIGPTModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tokens_embed = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.positions_embed = nn.Embedding(c["n_positions"], c["n_embd"])
        self.h = nn.ModuleList([Block(c) for _ in range(c["n_layer"])])


class OpenAIGPTLMHeadModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.transformer = OpenAIGPTModel(c)

    def forward(self, ids):
        """ids: (B, T) int64, T ≤ n_positions. Returns (logits (B, T, V), hidden) with hidden = [embeddings, block 1
        output, …, block n_layer output] (HF's output_hidden_states; the last one is what the LM head reads)."""
        t = self.transformer
        T = ids.shape[1]
        if T > self.config["n_positions"]:
            raise ValueError(f"{T} tokens > n_positions {self.config['n_positions']}")
        x = t.tokens_embed(ids) + t.positions_embed(torch.arange(T, device=ids.device))[None]
        hidden = [x]
        for block in t.h:
            x = block(x)
            hidden.append(x)
        return x @ t.tokens_embed.weight.T, hidden

    @torch.no_grad()
    def greedy(self, ids, max_new_tokens):
        """HF generate(do_sample=False, num_beams=1) for a config with no eos/pad: argmax of the last position's
        logits, appended, max_new_tokens times (the whole prefix recomputed each step). ids: list of ints."""
        out = list(ids)
        for _ in range(max_new_tokens):
            logits, _ = self(torch.tensor([out]))
            out.append(int(logits[0, -1].argmax()))
        return out


def save_pretrained_state(model):
    """What OpenAIGPTLMHeadModel.save_pretrained writes: transformer.* parameters; lm_head.weight left out (tied);
    the attention-mask buffers left out (non-persistent)."""
    return {k: v.detach().contiguous() for k, v in model.state_dict().items()}


def hub_state(model):
    """The layout of openai-community/openai-gpt's checkpoint (converted from OpenAIGPTModel in 2019): keys without
    the transformer. prefix, and the causal-mask buffer h.i.attn.bias (1, 1, n_positions, n_positions) F32 stored."""
    out = {}
    for k, v in model.transformer.state_dict().items():
        out[k] = v.detach().contiguous()
    for i, block in enumerate(model.transformer.h):
        out[f"h.{i}.attn.bias"] = block.attn.bias.detach().clone().contiguous()
    return out


def load_state(model, tensors):
    """Either layout: the transformer. prefix stripped, lm_head.weight (tied) and h.i.attn.bias (a buffer) checked
    and ignored."""
    P = model.config["n_positions"]
    body = {}
    for k, v in tensors.items():
        k2 = k[len("transformer."):] if k.startswith("transformer.") else k
        if k2.endswith(".attn.bias") and v.dim() == 4:
            assert torch.equal(v.float(), torch.tril(torch.ones(P, P)).view(1, 1, P, P)), k
            continue
        if k2 == "lm_head.weight":
            continue
        body[k2] = v.float()
    missing, unexpected = model.transformer.load_state_dict(body, strict=False)
    assert not missing and not unexpected, (missing, unexpected)
    if "lm_head.weight" in tensors:
        assert torch.equal(tensors["lm_head.weight"].float(), model.transformer.tokens_embed.weight)
    return model


# --------------------------------------------------------------------------------------------- slow tokenizer
_BASIC = types.SimpleNamespace(lowercase=True)


def basic_tokenize(text):
    """BERT's BasicTokenizer(do_lower_case=True, tokenize_chinese_chars=True, strip_accents=None): drop NUL, U+FFFD
    and control characters (category C*, except \\t \\n \\r), whitespace (\\t \\n \\r ' ' and Zs) → ' ', spaces around
    CJK ideographs (U+4E00–9FFF, 3400–4DBF, 20000–2A6DF, 2A700–2B73F, 2B740–2B81F, 2B820–2CEAF, F900–FAFF,
    2F800–2FA1F), split on Python whitespace, per word: lower() then NFD and drop Mn, split off every punctuation
    character (ASCII 33–47, 58–64, 91–96, 123–126 and Unicode P*) as a word of its own.
    (tools/reference/tokenizers.py's WordPiece.basic is that algorithm; HF's NFC pass before splitting changes
    nothing once the words are NFD'd without Mn.)"""
    return toks.WordPiece.basic(_BASIC, text)


class OpenAIGPTTokenizer:
    """transformers' slow OpenAIGPTTokenizer without ftfy/spacy (BasicTokenizer fallback), transformers 4.x."""

    def __init__(self, vocab_json, merges_txt, unk_token="<unk>"):
        with open(vocab_json, encoding="utf-8") as f:
            self.encoder = json.load(f)
        self.decoder = {i: t for t, i in self.encoder.items()}
        with open(merges_txt, encoding="utf-8") as f:
            # HF: read().split("\n")[1:-1] — the first line (#version) is dropped unread and so is whatever follows
            # the last "\n" (a file must end with a newline or its last merge is lost); merge.split() per line
            lines = f.read().split("\n")[1:-1]
        self.ranks = {}
        for i, line in enumerate(lines):
            self.ranks[tuple(line.split())] = i
        self.unk_token = unk_token
        self.unk_id = self.encoder.get(unk_token)
        # unk is the only special token; HF registers it as an added token (its vocab id) that text matching splits
        # off, normalized=False, no lstrip/rstrip
        self.specials = [unk_token]
        self.special_ids = {self.unk_id}
        self.cache = {}

    def bpe(self, word):
        """The word's BPE symbols. The last character carries "</w>"; while some adjacent pair has a rank, the pair
        of lowest rank is merged at every place it occurs, left to right without overlap (a b b b with merge "b b" →
        a bb b); stops when no pair has a rank or one symbol is left."""
        if word in self.cache:
            return self.cache[word]
        sym = list(word[:-1]) + [word[-1] + "</w>"]
        while len(sym) > 1:
            ranked = [(self.ranks[p], p) for p in zip(sym, sym[1:]) if p in self.ranks]
            if not ranked:
                break
            _, (a, b) = min(ranked)
            out, i = [], 0
            while i < len(sym):
                if i + 1 < len(sym) and sym[i] == a and sym[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(sym[i])
                    i += 1
            sym = out
        if " ".join(sym) == "\n  </w>":  # HF's special case for spaCy's "\n " (unreachable here: the
            sym = ["\n</w>"]                 # BasicTokenizer never leaves a \n in a word)
        self.cache[word] = sym
        return sym

    def _lower_outside_specials(self, text):
        """PreTrainedTokenizer.tokenize's do_lower_case pass (OpenAIGPTTokenizer.do_lower_case is True): every
        character lower()ed ONE AT A TIME (so no final-sigma rule), except inside exact special-token matches."""
        out, i = [], 0
        while i < len(text):
            sp = next((s for s in self.specials if text.startswith(s, i)), None)
            if sp:
                out.append(sp)
                i += len(sp)
            else:
                out.append(text[i] if text[i] == "\n" else text[i].lower())  # re's "." skips \n (no change anyway)
                i += 1
        return "".join(out)

    def tokenize(self, text):
        """The BPE pieces (strings, before the vocabulary lookup: an unknown piece stays as it is here)."""
        text = self._lower_outside_specials(text)
        pieces, i, seg = [], 0, 0
        # special tokens split off first (leftmost match), the text between them tokenized on its own
        while i <= len(text):
            sp = next((s for s in self.specials if text.startswith(s, i)), None) if i < len(text) else None
            if sp is None and i < len(text):
                i += 1
                continue
            for w in basic_tokenize(text[seg:i]):
                pieces.extend(self.bpe(w))
            if sp is None:
                break
            pieces.append(sp)
            i += len(sp)
            seg = i
        return pieces

    def convert_tokens_to_ids(self, pieces):
        return [self.encoder.get(p, self.unk_id) for p in pieces]

    def encode(self, text):
        return self.convert_tokens_to_ids(self.tokenize(text))

    def convert_ids_to_tokens(self, ids):
        return [self.decoder.get(i, self.unk_token) for i in ids]

    @staticmethod
    def convert_tokens_to_string(tokens):
        return "".join(tokens).replace("</w>", " ").strip()

    def decode(self, ids, skip_special_tokens=True):
        """clean_up_tokenization_spaces false (the fixtures' tokenizer_config.json says so)."""
        keep = [i for i in ids if not (skip_special_tokens and i in self.special_ids)]
        return self.convert_tokens_to_string([self.decoder.get(i, self.unk_token) for i in keep])


# ------------------------------------------------------------------------------- tokenizer.json (Rust semantics)
# tokenizers' is_chinese_char: NOTE 0x2B920, not BERT's 0x2B820 (U+2B820–U+2B91F are not spaced out there)
_RUST_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
             (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
# Rust's char::is_whitespace (the White_Space property)
_RUST_WS = set(map(chr, [0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                         0x202F, 0x205F, 0x3000]))


def _rust_cjk(ch):
    cp = ord(ch)
    return any(a <= cp <= b for a, b in _RUST_CJK)


def bert_normalizer(text, lowercase=True, strip_accents=None, clean_text=True, handle_chinese_chars=True):
    """tokenizers' BertNormalizer, in its order: clean_text (drop NUL, U+FFFD and C* except \\t\\n\\r; then
    whitespace → ' '), handle_chinese_chars (' c ' around the Rust ranges), strip_accents (null → = lowercase:
    NFD, drop Mn), lowercase (char by char: char::to_lowercase, no final-sigma rule)."""
    if clean_text:
        text = "".join(" " if c in _RUST_WS else c for c in text
                       if not (c in "\x00\ufffd" or (c not in "\t\n\r" and unicodedata.category(c).startswith("C"))))
    if handle_chinese_chars:
        text = "".join(f" {c} " if _rust_cjk(c) else c for c in text)
    if strip_accents if strip_accents is not None else lowercase:
        text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    if lowercase:
        text = "".join(c.lower() for c in text)
    return text


def bert_pre_tokenize(text):
    """BertPreTokenizer: split on whitespace (removed), then every punctuation char (ASCII punctuation or P*) alone."""
    words, cur = [], []
    for c in text:
        if c in _RUST_WS:
            if cur:
                words.append("".join(cur))
            cur = []
        elif toks._is_punct(c):
            if cur:
                words.append("".join(cur))
            words.append(c)
            cur = []
        else:
            cur.append(c)
    if cur:
        words.append("".join(cur))
    return words


class TokenizerJsonGPT1:
    """A tokenizer.json in OpenAIGPTConverter's layout, with the Rust tokenizers' semantics."""

    def __init__(self, tokenizer_json):
        with open(tokenizer_json, encoding="utf-8") as f:
            j = json.load(f)
        m = j["model"]
        assert m["type"] == "BPE" and not m.get("byte_fallback") and not m.get("fuse_unk") and m.get("dropout") is None
        assert j["normalizer"]["type"] == "BertNormalizer" and j["pre_tokenizer"]["type"] == "BertPreTokenizer"
        assert j["decoder"]["type"] == "BPEDecoder"
        self.norm = {k: j["normalizer"][k]
                     for k in ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase")}
        self.vocab = dict(m["vocab"])
        merges = [tuple(x.split(" ", 1)) if isinstance(x, str) else tuple(x) for x in m["merges"]]
        self.prefix = m.get("continuing_subword_prefix") or ""
        self.suffix = m.get("end_of_word_suffix") or ""
        # merge map: (left id, right id) → (rank, new id); the new token is left + right (minus the prefix of right)
        self.merges = {}
        for r, (a, b) in enumerate(merges):
            new = a + (b[len(self.prefix):] if self.prefix and b.startswith(self.prefix) else b)
            self.merges[(self.vocab[a], self.vocab[b])] = (r, self.vocab[new])  # a repeated pair: the last rank
        self.unk_id = self.vocab[m["unk_token"]] if m.get("unk_token") is not None else None
        self.added = sorted(j["added_tokens"], key=lambda a: -len(a["content"]))
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        for a in j["added_tokens"]:
            self.id_to_token[a["id"]] = a["content"]
        self.special_ids = {a["id"] for a in j["added_tokens"] if a["special"]}
        self.dec_suffix = j["decoder"]["suffix"]

    def word_ids(self, word):
        """BPE::merge_word: one symbol per character (prefix on non-first, suffix on the last), an unknown one
        becomes <unk> right away (fuse_unk false: one <unk> per character); then Word::merge_all: a queue of
        (rank, position), lowest rank first and leftmost among equal ranks; a popped pair that no longer exists is
        skipped; each merge queues the new pairs it forms with its neighbours."""
        chars = list(word)
        ids = []
        for k, ch in enumerate(chars):
            s = (self.prefix if k and self.prefix else "") + ch + (self.suffix if k == len(chars) - 1 else "")
            if s in self.vocab:
                ids.append(self.vocab[s])
            elif self.unk_id is not None:
                ids.append(self.unk_id)
            else:
                raise ValueError(f"unknown {s!r} and no unk token")
        n = len(ids)
        alive = [True] * n
        nxt = list(range(1, n)) + [-1]
        prv = list(range(-1, n - 1))
        q = []
        for p in range(n - 1):
            m = self.merges.get((ids[p], ids[p + 1]))
            if m:
                heapq.heappush(q, (m[0], p, m[1]))
        while q:
            rank, p, new = heapq.heappop(q)
            if not alive[p] or nxt[p] == -1:
                continue
            r = nxt[p]
            m = self.merges.get((ids[p], ids[r]))
            if m is None or m[1] != new:  # an expired entry
                continue
            ids[p] = new
            alive[r] = False
            nxt[p] = nxt[r]
            if nxt[r] != -1:
                prv[nxt[r]] = p
            if prv[p] != -1:
                m = self.merges.get((ids[prv[p]], ids[p]))
                if m:
                    heapq.heappush(q, (m[0], prv[p], m[1]))
            if nxt[p] != -1:
                m = self.merges.get((ids[p], ids[nxt[p]]))
                if m:
                    heapq.heappush(q, (m[0], p, m[1]))
        return [ids[p] for p in range(n) if alive[p]]

    def encode(self, text):
        """Added tokens matched first in the RAW text (normalized false: before lowercasing, so "<UNK>" is not one),
        leftmost, longest at a position; the text between them normalized, pre-tokenized and BPE'd on its own."""
        ids, seg, i = [], 0, 0
        while i <= len(text):
            a = next((a for a in self.added if text.startswith(a["content"], i)), None) if i < len(text) else None
            if a is None and i < len(text):
                i += 1
                continue
            for w in bert_pre_tokenize(bert_normalizer(text[seg:i], **self.norm)):
                ids.extend(self.word_ids(w))
            if a is None:
                break
            ids.append(a["id"])
            i += len(a["content"])
            seg = i
        return ids

    def convert_ids_to_tokens(self, ids):
        return [self.id_to_token[i] for i in ids]

    def decode(self, ids, skip_special_tokens=True):
        """Tokenizer::decode: ids without a token dropped, special added tokens dropped when skipping; BPEDecoder
        (the decode_chain form of recent tokenizers; older ones joined, replaced and trimmed): the suffix becomes
        " " in every token but the last, "" in the last; no strip."""
        t = [self.id_to_token[i] for i in ids
             if i in self.id_to_token and not (skip_special_tokens and i in self.special_ids)]
        return "".join(x.replace(self.dec_suffix, "" if k == len(t) - 1 else " ") for k, x in enumerate(t))


# Where the two flavours part (all checked by make_gpt1_fixtures.py on its texts):
SLOW_FAST_DIFFERENCES = {
    "special tokens vs case": "slow lower-cases the text before splitting off special tokens, so '<UNK>' → <unk>; "
                              "tokenizers matches added tokens in the raw text (normalized false): '<', 'unk', '>'",
    "CJK range": "BERT's Python ranges space out U+2B820–U+2B91F; tokenizers' is_chinese_char starts that range at "
                 "U+2B920 (so 'x\\U0002B820y' is 3 words in slow, 1 in fast)",
    "decode": "slow: ''.join(tokens).replace('</w>', ' ').strip(); BPEDecoder: '</w>' → ' ' except in the last "
              "token (→ ''), no strip: they differ when a token holds whitespace, e.g. '\\n</w>' (slow strips it at "
              "either end of the text)",
    "lowercase vs accents": "slow lower()s then strips accents, tokenizers strips accents then lowercases (no "
                            "difference known for real characters: İ → i both ways)",
}


# ------------------------------------------------------------------------------------------------ BPE learner
def learn_bpe(word_counts, n_merges):
    """Sennrich's BPE in OpenAI GPT's form: words as characters with "</w>" on the last one, the most frequent
    adjacent pair merged everywhere, n_merges times. Ties go to the lexicographically smallest pair. Returns the
    merges [(a, b)]."""
    words = [(list(w[:-1]) + [w[-1] + "</w>"], c) for w, c in sorted(word_counts.items())]
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for sym, c in words:
            for p in zip(sym, sym[1:]):
                pairs[p] += c
        if not pairs:
            break
        best = min(pairs.items(), key=lambda pc: (-pc[1], pc[0]))[0]
        merges.append(best)
        a, b = best
        new_words = []
        for sym, c in words:
            out, i = [], 0
            while i < len(sym):
                if i + 1 < len(sym) and sym[i] == a and sym[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(sym[i])
                    i += 1
            new_words.append((out, c))
        words = new_words
    return merges


def gpt1_vocab(char_counts, merges, unk="<unk>"):
    """OpenAI GPT's vocabulary layout (encoder_bpe_40000.json, = HF's openai-gpt vocab.json): "<unk>" 0, the single
    characters by falling frequency from 1, the same characters + "</w>" in the same order, one token per merge in
    merge order, and "\\n</w>" last. Returned as an ordered dict in the FILE's order, where "<unk>": 0 comes last
    (as in OpenAI's file)."""
    chars = [c for c, _ in sorted(char_counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    ids = {}
    for c in chars:
        ids[c] = len(ids) + 1
    for c in chars:
        ids[c + "</w>"] = len(ids) + 1
    for a, b in merges:
        assert a + b not in ids, f"merge {a} {b} makes a token twice"
        ids[a + b] = len(ids) + 1
    ids["\n</w>"] = len(ids) + 1
    ids[unk] = 0
    return ids
