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

    def word_ids(self, word):
        if len(word) > 100:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            ids.append(found)
            start = end
        return ids

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
