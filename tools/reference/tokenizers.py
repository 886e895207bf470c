"""Python tokenizers for training data preparation (BERT WordPiece, GPT-2 byte-level BPE) and a BPE trainer.

These follow the Hugging Face semantics closely enough to prepare training data; the engine's C++ tokenizers are
the ones held to exact parity (tests/ compare them with published golden ids and transformers.js).
"""
import heapq
import json
import unicodedata
from collections import Counter, defaultdict

import regex

# ------------------------------------------------------------------------------------------------ BERT WordPiece


def _is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch).startswith("C")


def _is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


class WordPiece:
    def __init__(self, vocab_path, lowercase=True):
        with open(vocab_path, encoding="utf-8") as f:
            self.vocab = {line.rstrip("\r\n"): i for i, line in enumerate(f)}
        self.inv = {i: t for t, i in self.vocab.items()}
        self.lowercase = lowercase
        self.unk = self.vocab["[UNK]"]

    def basic(self, text):
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or _is_control(ch):
                continue
            if _is_whitespace(ch):
                out.append(" ")
            elif _is_cjk(cp):
                out.append(f" {ch} ")
            else:
                out.append(ch)
        words = []
        for w in "".join(out).split():
            if self.lowercase:
                w = "".join(c for c in unicodedata.normalize("NFD", w.lower()) if unicodedata.category(c) != "Mn")
            cur = ""
            for ch in w:
                if _is_punct(ch):
                    if cur:
                        words.append(cur)
                    words.append(ch)
                    cur = ""
                else:
                    cur += ch
            if cur:
                words.append(cur)
        return words

    def word_pieces(self, word):
        """Greedy longest-match pieces of one word: [(id, start, end)] in characters; an unknown word is one [UNK]."""
        if len(word) > 100:
            return [(self.unk, 0, len(word))]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                return [(self.unk, 0, len(word))]
            pieces.append((found, start, end))
            start = end
        return pieces

    def word_ids(self, word):
        return [i for i, _, _ in self.word_pieces(word)]

    def encode(self, text):
        return [i for w in self.basic(text) for i in self.word_ids(w)]


# ------------------------------------------------------------------------------------------ GPT-2 byte-level BPE
GPT2_PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return bs, [chr(c) for c in cs]


class ByteBPE:
    def __init__(self, vocab_json, merges_txt):
        with open(vocab_json, encoding="utf-8") as f:
            self.encoder = json.load(f)
        self.decoder = {v: k for k, v in self.encoder.items()}
        with open(merges_txt, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[0].startswith("#version"):
            lines = lines[1:]
        self.ranks = {tuple(l.split(" ")): i for i, l in enumerate(l for l in lines if l)}
        bs, cs = bytes_to_unicode()
        self.b2u = dict(zip(bs, cs))
        self.u2b = {c: b for b, c in self.b2u.items()}
        self.cache = {}

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = list(token)
        while len(word) > 1:
            pairs = [(self.ranks.get((word[i], word[i + 1]), 1 << 60), i) for i in range(len(word) - 1)]
            rank, at = min(pairs)
            if rank == 1 << 60:
                break
            first, second = word[at], word[at + 1]
            new, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and word[i] == first and word[i + 1] == second:
                    new.append(first + second)
                    i += 2
                else:
                    new.append(word[i])
                    i += 1
            word = new
        self.cache[token] = word
        return word

    def encode(self, text):
        ids = []
        for tok in GPT2_PATTERN.findall(text):
            u = "".join(self.b2u[b] for b in tok.encode("utf-8"))
            ids.extend(self.encoder[p] for p in self.bpe(u))
        return ids

    def decode(self, ids):
        return bytes(self.u2b[c] for i in ids for c in self.decoder[i]).decode("utf-8", errors="replace")


def train_byte_bpe(texts, vocab_size, out_vocab_json, out_merges_txt, eot="<|endoftext|>"):
    """GPT-2's algorithm: byte-level symbols, pre-tokenised by GPT2_PATTERN, merges of the most frequent pair.

    Incremental pair counts with a lazy max-heap, so each merge touches only the words that contain the pair.
    Ties break on the lexicographically smallest pair. Vocabulary order: the 256 byte symbols in bytes_to_unicode
    order, then one token per merge, then `eot` last (as in GPT-2, where it is 50256).
    """
    bs, cs = bytes_to_unicode()
    b2u = dict(zip(bs, cs))
    counts = Counter()
    for t in texts:
        counts.update(GPT2_PATTERN.findall(t))
    words = [[b2u[b] for b in w.encode("utf-8")] for w in counts]
    freq = list(counts.values())
    pair_count = Counter()
    where = defaultdict(set)
    for wi, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_count[(a, b)] += freq[wi]
            where[(a, b)].add(wi)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    n_merges = vocab_size - 256 - 1
    while len(merges) < n_merges and heap:
        negc, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -negc or negc == 0:
            continue
        merges.append(pair)
        a, b = pair
        ab = a + b
        changed = set()
        for wi in list(where.pop(pair, ())):
            w, f = words[wi], freq[wi]
            for x, y in zip(w, w[1:]):
                pair_count[(x, y)] -= f
                changed.add((x, y))
            new, i = [], 0
            while i < len(w):
                if i < len(w) - 1 and w[i] == a and w[i + 1] == b:
                    new.append(ab)
                    i += 2
                else:
                    new.append(w[i])
                    i += 1
            words[wi] = new
            for x, y in zip(new, new[1:]):
                pair_count[(x, y)] += f
                where[(x, y)].add(wi)
                changed.add((x, y))
        pair_count.pop(pair, None)
        for p in changed:
            c = pair_count.get(p, 0)
            if c > 0:
                heapq.heappush(heap, (-c, p))
            else:
                pair_count.pop(p, None)
    vocab = {c: i for i, c in enumerate(cs)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab[eot] = len(vocab)
    with open(out_vocab_json, "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, separators=(",", ":"))
    with open(out_merges_txt, "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")
    return len(vocab)


# ---------------------------------------------------------------- offsets, pairs and windows (HF fast semantics)
# Added for the encoder pipelines' reference (tools/reference/pipelines.py). Offsets are (start, end) Python string
# indices (code points) into the original text, as a Hugging Face fast tokenizer returns them in Python; special
# tokens get (0, 0). An "encoding" is a dict of equal-length lists: input_ids, token_type_ids, offsets,
# special_tokens_mask, sequence_ids (None for special tokens, else 0 / 1) and word_ids (the pre-tokenizer's word
# index within its own sequence, None for special tokens) — what tokenizers' Encoding exposes.

_WP_CLEANUP = [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
               (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]


def clean_up_tokenization(s):
    """transformers' clean_up_tokenization (also the tokenizers WordPiece decoder's per-token `cleanup`)."""
    for a, b in _WP_CLEANUP:
        s = s.replace(a, b)
    return s


def _wp_normalize_with_map(self, text):
    """BertNormalizer (clean_text, handle_chinese_chars, strip_accents = lowercase, lowercase) applied char by char,
    keeping for every normalized char the index of the original char it came from."""
    out = []  # (char, original index)
    for i, ch in enumerate(text):
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or _is_control(ch):
            continue
        if _is_whitespace(ch):
            out.append((" ", i))
            continue
        if _is_cjk(cp):
            out.extend([(" ", i), (ch, i), (" ", i)])
            continue
        s = ch
        if self.lowercase:  # strip_accents (NFD, drop Mn) then lowercase, the order of tokenizers' BertNormalizer
            s = "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn").lower()
        out.extend((c, i) for c in s)
    return out


def _wp_encode_words(self, text):
    """(ids, offsets, word_ids) of one sequence, no special tokens."""
    norm = _wp_normalize_with_map(self, text)
    # BertPreTokenizer: split on whitespace (removed) and punctuation (isolated)
    words, cur = [], []
    for c, i in norm:
        if c.isspace():
            if cur:
                words.append(cur)
            cur = []
        elif _is_punct(c):
            if cur:
                words.append(cur)
            words.append([(c, i)])
            cur = []
        else:
            cur.append((c, i))
    if cur:
        words.append(cur)
    ids, offs, wids = [], [], []
    for w_i, w in enumerate(words):
        word = "".join(c for c, _ in w)
        span = lambda a, b: (w[a][1], w[b - 1][1] + 1)
        for tid, a, b in self.word_pieces(word):
            ids.append(tid), offs.append(span(a, b)), wids.append(w_i)
    return ids, offs, wids


def _wp_encode_with_offsets(self, text):
    """Token ids and (start, end) code-point offsets into `text` (no special tokens), as BertTokenizerFast gives."""
    ids, offs, _ = _wp_encode_words(self, text)
    return ids, offs


def _wp_special(self):
    return dict(cls=self.vocab["[CLS]"], sep=self.vocab["[SEP]"], pad=self.vocab["[PAD]"],
                mask=self.vocab.get("[MASK]"), unk=self.unk)


def _wp_build(self, a, b=None):
    """[CLS] A [SEP] (B [SEP]); token types 0 for [CLS] A [SEP], 1 for B [SEP] (BertProcessing)."""
    s = _wp_special(self)
    enc = _new_enc()
    _push(enc, s["cls"], 0, (0, 0), 1, None, None)
    _push_seq(enc, a, 0, 0)
    _push(enc, s["sep"], 0, (0, 0), 1, None, None)
    if b is not None:
        _push_seq(enc, b, 1, 1)
        _push(enc, s["sep"], 1, (0, 0), 1, None, None)
    return enc


def _new_enc():
    return dict(input_ids=[], token_type_ids=[], offsets=[], special_tokens_mask=[], sequence_ids=[], word_ids=[])


def _push(enc, tid, tt, off, special, seq, word):
    enc["input_ids"].append(tid)
    enc["token_type_ids"].append(tt)
    enc["offsets"].append(tuple(off))
    enc["special_tokens_mask"].append(special)
    enc["sequence_ids"].append(seq)
    enc["word_ids"].append(word)


def _push_seq(enc, seq, seq_id, tt):
    ids, offs, wids = seq
    for t, o, w in zip(ids, offs, wids):
        _push(enc, t, tt, o, 0, seq_id, w)


def _wp_encode_pair(self, text, text_pair=None):
    """One encoding of `text` (and `text_pair`) with special tokens, offsets, word ids and sequence ids."""
    return _wp_build(self, _wp_encode_words(self, text), None if text_pair is None else _wp_encode_words(self, text_pair))


def _truncate_windows(n, max_len, stride):
    """tokenizers' Encoding::truncate (direction right): windows [start, stop) of a sequence of n tokens."""
    if max_len == 0:
        return [(0, 0)]
    if stride >= max_len:
        raise ValueError(f"stride {stride} must be smaller than the room for the sequence ({max_len})")
    out, start = [], 0
    while True:
        stop = min(start + max_len, n)
        out.append((start, stop))
        if stop == n:
            return out
        start += max_len - stride


def _windows_only_second(build, n_special, a, b, max_length, stride):
    """truncation="only_second" + return_overflowing_tokens: the first encoding, then its overflowing ones."""
    room = max_length - len(a[0]) - n_special
    if len(a[0]) + len(b[0]) + n_special <= max_length:
        return [build(a, b)]
    if room <= 0:
        raise ValueError("the first sequence leaves no room for the second (tokenizers: Truncation error)")
    cut = lambda s, lo, hi: (s[0][lo:hi], s[1][lo:hi], s[2][lo:hi])
    return [build(a, cut(b, lo, hi)) for lo, hi in _truncate_windows(len(b[0]), room, stride)]


def _wp_encode_pair_windows(self, text, text_pair, max_length, stride):
    """HF `tokenizer(text, text_pair, truncation="only_second", max_length=…, stride=…,
    return_overflowing_tokens=True)` for a fast BERT tokenizer: a list of encodings (windows over text_pair)."""
    return _windows_only_second(lambda x, y: _wp_build(self, x, y), 3, _wp_encode_words(self, text),
                                _wp_encode_words(self, text_pair), max_length, stride)


def _wp_convert_tokens_to_string(self, tokens):
    """BertTokenizerFast.convert_tokens_to_string: the tokenizers WordPiece decoder (prefix "##", cleanup on)."""
    out = []
    for i, t in enumerate(tokens):
        if i != 0:
            t = t[2:] if t.startswith("##") else " " + t
        out.append(clean_up_tokenization(t))
    return "".join(out)


def _wp_decode(self, ids, skip_special_tokens=False):
    specials = {self.vocab[t] for t in ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]") if t in self.vocab}
    toks = [self.inv[i] for i in ids if not (skip_special_tokens and i in specials)]
    return clean_up_tokenization(_wp_convert_tokens_to_string(self, toks))


WordPiece.encode_words = _wp_encode_words
WordPiece.encode_with_offsets = _wp_encode_with_offsets
WordPiece.special = _wp_special
WordPiece.encode_pair = _wp_encode_pair
WordPiece.encode_pair_windows = _wp_encode_pair_windows
WordPiece.convert_tokens_to_string = _wp_convert_tokens_to_string
WordPiece.decode = _wp_decode
WordPiece.convert_ids_to_tokens = lambda self, ids: [self.inv[i] for i in ids]


def _bpe_encode_words(self, text, trim_offsets=True):
    """(ids, offsets, word_ids) for byte-level BPE: each token's span is the original chars its bytes come from;
    trim_offsets (RobertaProcessing / ByteLevel post-processor) then drops leading/trailing 'Ġ' (spaces)."""
    ids, offs, wids = [], [], []
    for w_i, m in enumerate(GPT2_PATTERN.finditer(text)):
        char_of_byte = []
        for k, ch in enumerate(m.group()):
            char_of_byte.extend([m.start() + k] * len(ch.encode("utf-8")))
        u = "".join(self.b2u[b] for b in m.group().encode("utf-8"))
        pos = 0
        for piece in self.bpe(u):
            s, e = char_of_byte[pos], char_of_byte[pos + len(piece) - 1] + 1
            pos += len(piece)
            if trim_offsets:
                lead = len(piece) - len(piece.lstrip("Ġ"))
                trail = len(piece) - len(piece.rstrip("Ġ"))
                if lead:
                    s = min(s + lead, e)
                if trail and e >= trail:
                    e = max(e - trail, s)
            ids.append(self.encoder[piece]), offs.append((s, e)), wids.append(w_i)
    return ids, offs, wids


def _bpe_encode_with_offsets(self, text, trim_offsets=True):
    """Token ids and (start, end) code-point offsets (RoBERTa fast tokenizer, add_prefix_space False)."""
    ids, offs, _ = _bpe_encode_words(self, text, trim_offsets)
    return ids, offs


ByteBPE.encode_words = _bpe_encode_words
ByteBPE.encode_with_offsets = _bpe_encode_with_offsets


class RobertaBPE(ByteBPE):
    """RoBERTa's layout on the byte-level BPE: <s> A </s> and <s> A </s></s> B </s>, token types all 0; the special
    tokens are entries of vocab.json (<s>, <pad>, </s>, <unk>, <mask>). `<mask>` in a text is matched as an added
    token with lstrip (the whitespace before it belongs to it), as roberta-base's special_tokens_map says."""

    def __init__(self, vocab_json, merges_txt):
        super().__init__(vocab_json, merges_txt)
        e = self.encoder
        self.specials = dict(cls=e["<s>"], bos=e["<s>"], sep=e["</s>"], eos=e["</s>"], pad=e["<pad>"],
                             unk=e["<unk>"], mask=e["<mask>"])
        self.unk = self.specials["unk"]

    def special(self):
        return dict(self.specials)

    def encode_words(self, text, trim_offsets=True):
        if "<mask>" not in text:
            return _bpe_encode_words(self, text, trim_offsets)
        ids, offs, wids, base_w, pos = [], [], [], 0, 0
        parts = text.split("<mask>")
        for k, part in enumerate(parts):
            seg = part.rstrip() if k < len(parts) - 1 else part  # lstrip of <mask>: it takes the spaces before it
            i2, o2, w2 = _bpe_encode_words(self, seg, trim_offsets)
            ids += i2
            offs += [(a + pos, b + pos) for a, b in o2]
            wids += [w + base_w for w in w2]
            base_w += (max(w2) + 1) if w2 else 0
            pos += len(part)
            if k < len(parts) - 1:
                ids.append(self.specials["mask"]), offs.append((pos - (len(part) - len(seg)), pos + 6))
                wids.append(base_w)
                base_w += 1
                pos += 6
        return ids, offs, wids

    def encode_with_offsets(self, text, trim_offsets=True):
        ids, offs, _ = self.encode_words(text, trim_offsets)
        return ids, offs

    def _build(self, a, b=None):
        s = self.specials
        enc = _new_enc()
        _push(enc, s["cls"], 0, (0, 0), 1, None, None)
        _push_seq(enc, a, 0, 0)
        _push(enc, s["sep"], 0, (0, 0), 1, None, None)
        if b is not None:
            _push(enc, s["sep"], 0, (0, 0), 1, None, None)
            _push_seq(enc, b, 1, 0)
            _push(enc, s["sep"], 0, (0, 0), 1, None, None)
        return enc

    def encode_pair(self, text, text_pair=None):
        return self._build(self.encode_words(text), None if text_pair is None else self.encode_words(text_pair))

    def encode_pair_windows(self, text, text_pair, max_length, stride):
        return _windows_only_second(self._build, 4, self.encode_words(text), self.encode_words(text_pair),
                                    max_length, stride)

    def convert_ids_to_tokens(self, ids):
        return [self.decoder[i] for i in ids]

    def convert_tokens_to_string(self, tokens):
        """The ByteLevel decoder: tokens' byte-level chars back to bytes, then UTF-8 (invalid bytes → U+FFFD)."""
        out, buf = [], []
        for t in tokens:
            if all(c in self.u2b for c in t):
                buf.extend(self.u2b[c] for c in t)
            else:  # a special token: as is
                out.append(bytes(buf).decode("utf-8", errors="replace"))
                buf = []
                out.append(t)
        out.append(bytes(buf).decode("utf-8", errors="replace"))
        return "".join(out)

    def decode(self, ids, skip_special_tokens=False, clean_up_tokenization_spaces=False):
        sp = set(self.specials.values())
        toks = [self.decoder[i] for i in ids if not (skip_special_tokens and i in sp)]
        s = self.convert_tokens_to_string(toks)
        return clean_up_tokenization(s) if clean_up_tokenization_spaces else s


class TokenizerJsonBPE(RobertaBPE):
    """A tokenizer.json with a byte-level BPE model, the layout of ModernBERT's (answerdotai/ModernBERT-base):
    model BPE (vocab + merges), normalizer null, pre_tokenizer ByteLevel (add_prefix_space false, trim_offsets true —
    which the pre-tokenizer ignores: offsets keep leading spaces), post_processor TemplateProcessing [CLS] $A [SEP] and [CLS] $A [SEP] $B [SEP] (token types all
    0), decoder ByteLevel; the special tokens are added tokens with ids of their own.

    Added tokens are matched first, as tokenizers' AddedVocabulary does (leftmost-longest over their contents; lstrip
    / rstrip take the whitespace before / after the match, and the token's offsets cover it); the text between them
    goes through the ByteLevel pre-tokenizer and the BPE on its own. `roles`: {"cls", "sep", "pad", "unk", "mask"}
    → token text (tokenizer_config.json's cls_token, …)."""

    def __init__(self, tokenizer_json, roles):
        with open(tokenizer_json, encoding="utf-8") as f:
            j = json.load(f)
        m = j["model"]
        assert m["type"] == "BPE" and j.get("normalizer") is None and j["pre_tokenizer"]["type"] == "ByteLevel"
        assert not j["pre_tokenizer"]["add_prefix_space"] and j["pre_tokenizer"]["use_regex"]
        self.encoder = dict(m["vocab"])
        self.added = sorted(j["added_tokens"], key=lambda a: -len(a["content"]))   # longest first at a position
        for a in j["added_tokens"]:
            self.encoder[a["content"]] = a["id"]
        self.decoder = {v: k for k, v in self.encoder.items()}
        merges = [tuple(x.split(" ")) if isinstance(x, str) else tuple(x) for x in m["merges"]]
        self.ranks = {p: i for i, p in enumerate(merges)}
        bs, cs = bytes_to_unicode()
        self.b2u = dict(zip(bs, cs))
        self.u2b = {c: b for b, c in self.b2u.items()}
        self.cache = {}
        self.specials = {role: self.encoder[t] for role, t in roles.items()}
        self.unk = self.specials["unk"]
        self.special_ids = {a["id"] for a in j["added_tokens"] if a.get("special")}
        pp = j["post_processor"]
        assert pp["type"] == "TemplateProcessing"
        assert [list(x)[0] for x in pp["single"]] == ["SpecialToken", "Sequence", "SpecialToken"]
        # tokenizers trims byte-level offsets in its post-processors only (ByteLevel / RobertaProcessing with
        # trim_offsets); the ByteLevel pre-tokenizer's trim_offsets field does nothing, so under TemplateProcessing
        # a token's offsets keep its leading space
        self.trim_offsets = False

    def split_added(self, text):
        """[(start, end, added token id or None)] covering `text`: added tokens and the plain text between them."""
        out, seg, i = [], 0, 0
        while i < len(text):
            a = next((a for a in self.added if text.startswith(a["content"], i)), None)
            if a is None:
                i += 1
                continue
            s, e = i, i + len(a["content"])
            if a.get("lstrip"):
                while s > seg and text[s - 1].isspace():
                    s -= 1
            if a.get("rstrip"):
                while e < len(text) and text[e].isspace():
                    e += 1
            if s > seg:
                out.append((seg, s, None))
            out.append((s, e, a["id"]))
            seg = i = e
        if seg < len(text):
            out.append((seg, len(text), None))
        return out

    def encode_words(self, text, trim_offsets=None):
        if trim_offsets is None:
            trim_offsets = self.trim_offsets
        ids, offs, wids, base_w = [], [], [], 0
        for s, e, tid in self.split_added(text):
            if tid is not None:
                ids.append(tid), offs.append((s, e)), wids.append(base_w)
                base_w += 1
                continue
            i2, o2, w2 = _bpe_encode_words(self, text[s:e], trim_offsets)
            ids += i2
            offs += [(a + s, b + s) for a, b in o2]
            wids += [w + base_w for w in w2]
            base_w += (max(w2) + 1) if w2 else 0
        return ids, offs, wids

    def _build(self, a, b=None):
        s = self.specials
        enc = _new_enc()
        _push(enc, s["cls"], 0, (0, 0), 1, None, None)
        _push_seq(enc, a, 0, 0)
        _push(enc, s["sep"], 0, (0, 0), 1, None, None)
        if b is not None:
            _push_seq(enc, b, 1, 0)
            _push(enc, s["sep"], 0, (0, 0), 1, None, None)
        return enc

    def encode_pair_windows(self, text, text_pair, max_length, stride):
        return _windows_only_second(self._build, 3, self.encode_words(text), self.encode_words(text_pair),
                                    max_length, stride)

    def decode(self, ids, skip_special_tokens=False, clean_up_tokenization_spaces=False):
        """tokenizers' decode: ids without a token are dropped; skip_special_tokens drops the special added tokens."""
        toks = [self.decoder[i] for i in ids if i in self.decoder and not (skip_special_tokens and i in self.special_ids)]
        s = self.convert_tokens_to_string(toks)
        return clean_up_tokenization(s) if clean_up_tokenization_spaces else s
