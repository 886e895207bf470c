#!/usr/bin/python3
"""SentencePiece oracle vectors for tests/test-sentencepiece.cpp.

Trains two small models with Debian's python3-sentencepiece (0.1.97; run with /usr/bin/python3) on public-domain
Bible text and records, for ≥ 10,000 strings, the ids (and byte offsets) the library itself produces:

  tests/data/sentencepiece/unigram.model   Unigram, 2000 pieces, nmt_nfkc (precompiled charsmap), default whitespace
                                           handling (XLM-R / ALBERT / T5 style)
  tests/data/sentencepiece/bpe.model       BPE, 1000 pieces, byte_fallback, identity normalizer, extra whitespace kept,
                                           digits split, one user-defined symbol "<br>" (Llama style)
  tests/data/sentencepiece/unigram.tokenizer.json   unigram.model as Hugging Face's converters write it (Unigram
                                           vocab with scores, Precompiled normalizer + Strip + Replace, Metaspace)
  tests/data/sentencepiece/vectors.jsonl   one line per string: {"s": text, "u": unigram ids, "b": bpe ids,
                                           "h": the Unigram ids of the text without trailing whitespace, where they
                                           differ (what the tokenizer.json's Strip normalizer gives),
                                           optionally "uo"/"bo": each token's UTF-8 byte span, compactly: tokens
                                           separated by spaces, "L" for a span of L bytes starting where the
                                           previous one ended (0 at first), "G:L" for one starting G bytes later}
                                           ("x": text as hex instead of "s" for strings that are not valid UTF-8)

Text: build/embed/pairs-train.jsonl ("kjv" and "web" fields: the King James Version and the World English Bible,
both public domain) trains the models; build/embed/pairs-test.jsonl's verses are the held-out strings. The hostile
strings are generated here (seeded). Usage: /usr/bin/python3 tools/reference/make_sentencepiece_vectors.py
"""
import base64
import io
import json
import os
import random
import sys

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "sentencepiece")
TRAIN = os.path.join(ROOT, "build", "embed", "pairs-train.jsonl")
HELD = os.path.join(ROOT, "build", "embed", "pairs-test.jsonl")


def verses(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            for k in ("kjv", "web"):
                if r.get(k):
                    out.append(r[k])
    return out


def train(sentences, **kw):
    m = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=m, minloglevel=2, num_threads=1,
                                   shuffle_input_sentence=False, **kw)
    return m.getvalue()


# ------------------------------------------------------------------------------------------------ hostile strings
POOL = (
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + [" "] * 12 +
    list(".,;:!?'\"()[]{}-_/\\@#$%^&*+=<>|~`") +
    ["\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\x01", "\x1f", "\x7f", "\x85", "\xa0", "\u3000", "\u2028", "\u2029", "\u200b",
     "\u200d", "\ufeff", "\u00ad", "\u2002", "\u2009"] +
    # NFKC changes these: full-width, ligatures, compatibility forms, super/subscripts, roman numerals, fractions
    ["Ａ", "ｚ", "０", "９", "！", "（", "ｶ", "ﾞ", "ﬁ", "ﬀ", "ﬃ", "ǆ", "Ⅸ", "ⅳ", "½", "¼", "²", "₃", "™", "℃", "㎏", "㈱", "①",
     "ｷﾞ", "ﾊﾟ", "µ", "Å", "Ω", "ſ", "ẛ", "…", "‥", "︰", "﹏", "ｰ", "¨", "´", "¸", "ˇ", "㍻", "ℌ", "𝐀", "𝟘"] +
    # combining marks and precomposed letters
    ["\u0301", "\u0300", "\u0308", "\u0327", "\u0323", "\u20dd", "é", "e\u0301", "ñ", "n\u0303", "Ä", "ö", "ß", "ı", "İ", "ø",
     "ą", "ł", "ő", "Ǆ", "ǅ"] +
    # other scripts, CJK, Hangul (syllables and jamo), emoji with ZWJ and modifiers, private use, noncharacters
    ["Ж", "щ", "Ω", "α", "ש", "ع", "ह", "ก", "中", "文", "字", "日本", "한", "ᄀ", "ᅡ", "ㄱ", "😀", "👍🏽", "👨\u200d👩\u200d👧",
     "🇩🇪", "\U0001f9d1", "\ue000", "\uffff", "\U0010ffff", "\ufffd", "〇", "〜", "·", "•", "–", "—", "“", "”", "‘", "’",
     "<br>", "<br", "br>"]
)


def hostile(rng, verse_words):
    fixed = ["", " ", "  ", "   ", "\t", "\n", "\r\n", " \t\n ", "\n\n\n", "\t\t\t", "a", " a", "a ", "  a  ", " \ta\n",
             "a  b", "a \t\n b", "a\u3000b", "\u3000a\u3000", "a\xa0b", "\xa0", "\u200b", "\ufeff", "\x00", "a\x00b",
             "\x01\x02\x03", "e\u0301", "\u0301", "\u0301\u0301a", "ＡＢＣ", "ﬁne", "Ⅸ", "½", "²³", "①②", "㍻", "ｶﾞ",
             "ｶ\u3099", "中文字", "日本語のテキスト", "한국어", "😀", "😀😀😀", "👨\u200d👩\u200d👧", "🇩🇪🇫🇷", "0", "0123456789",
             "3.14159", "1,000,000", "2024-01-01", "<br>", "a<br>b", "<br><br>", " <br> ", "<br", "\U0010ffff", "\ue000",
             "In the beginning", "  In   the   beginning  ", "IN THE BEGINNING", "in_the_beginning",
             "a" * 300, "ab" * 200, "x" * 1000, "the" * 100, "9" * 200, "é" * 100, "中" * 200, "😀" * 50, " " * 500,
             "\n" * 100, "\t " * 100, "Ａ" * 100, "ﬁ" * 80, "\u0301" * 50]
    out = list(fixed)
    for _ in range(8000):
        kind = rng.randrange(6)
        if kind == 0:  # random characters from the pool
            s = "".join(rng.choice(POOL) for _ in range(rng.randrange(1, 20)))
        elif kind == 1:  # words of verses with hostile characters mixed in
            ws = rng.sample(verse_words, rng.randrange(1, 5))
            s = ""
            for w in ws:
                s += w + "".join(rng.choice(POOL) for _ in range(rng.randrange(0, 3)))
        elif kind == 2:  # whitespace runs around words
            ws = rng.sample(verse_words, rng.randrange(1, 5))
            sp = lambda: "".join(rng.choice([" ", " ", "\t", "\n", "\r", "\u3000", "\xa0", "\u2028"]) for _ in range(rng.randrange(0, 5)))
            s = sp() + sp().join(ws) + sp()
        elif kind == 3:  # any code point (no surrogates)
            cs = []
            for _ in range(rng.randrange(1, 6)):
                c = rng.randrange(1, 0x110000)
                if 0xD800 <= c <= 0xDFFF:
                    c = 0xFFFD
                cs.append(chr(c))
            s = "".join(cs)
        elif kind == 4:  # long words and digits
            w = rng.choice(verse_words)
            s = w * rng.randrange(2, 6) + " " + "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 20)))
        else:  # case and width changes of a verse fragment
            ws = " ".join(rng.sample(verse_words, rng.randrange(2, 6)))
            s = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and rng.random() < 0.3 else c for c in ws)
            if rng.random() < 0.5:
                s = s.upper()
        out.append(s)
    # the engine matches special tokens' texts whole (as Hugging Face's tokenizers do; sentencepiece does not): the
    # oracle strings leave them out, tests/test-sentencepiece.cpp checks them separately
    return [s for s in out if not any(t in s for t in ("<s>", "</s>", "<unk>", "<pad>"))]


def invalid_utf8(rng):
    """Byte strings that are not UTF-8 (sentencepiece takes bytes: each ill-formed byte is U+FFFD)."""
    fixed = [b"\xff", b"a\xffb", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"abc\xe2\x82", b"\x80\x80",
             b"\xf0\x9f\x98", b"\xc3", b"\xc3 \xa9", b"\xfe\xfe\xff", b"\xef\xbf\xbd", b" \xff ", b"\xe2\x96"]
    out = list(fixed)
    for _ in range(300):
        out.append(bytes(rng.choice([rng.randrange(256), ord("a"), ord(" "), 0xE2, 0x96, 0x81, 0xC3]) for _ in range(rng.randrange(1, 16))))
    return [b for b in out if not _valid(b)]


def _valid(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# ----------------------------------------------------------------------------------------- Hugging Face's converter
def to_tokenizer_json(model_bytes):
    """The Unigram model as transformers' SpmConverter writes tokenizer.json (vocab with scores; Precompiled
    charsmap, Strip right, Replace of space runs; Metaspace pre-tokenizer and decoder)."""
    m = pb.ModelProto()
    m.ParseFromString(model_bytes)
    vocab = [[p.piece, p.score] for p in m.pieces]
    unk = next(i for i, p in enumerate(m.pieces) if p.type == 2)
    added = [{"id": i, "content": p.piece, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, p in enumerate(m.pieces) if p.type in (2, 3)]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(m.normalizer_spec.precompiled_charsmap).decode()},
            {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": unk, "vocab": vocab, "byte_fallback": False},
    }


# Unicode's White_Space property (what Hugging Face's Strip normalizer removes: Rust's char::is_whitespace)
WHITE_SPACE = "".join(map(chr, [*range(0x9, 0xE), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]))


def offsets(sp, text):
    """Byte offsets of each piece (the Python wrapper reports code point offsets)."""
    at = [0]
    for c in text:
        at.append(at[-1] + len(c.encode("utf-8")))
    parts, end = [], 0
    for p in sp.encode_as_immutable_proto(text).pieces:
        b, e = at[p.begin], at[p.end]
        parts.append(str(e - b) if b == end else f"{b - end}:{e - b}")
        end = e
    return " ".join(parts)


def main():
    if not os.path.exists(TRAIN):
        sys.exit(f"{TRAIN} is missing (the embedding model's verse pairs: tools/train/embed)")
    rng = random.Random(20240601)
    train_text = verses(TRAIN)
    uni = train(train_text, model_type="unigram", vocab_size=2000, normalization_rule_name="nmt_nfkc", character_coverage=0.9995)
    bpe = train(train_text, model_type="bpe", vocab_size=1000, byte_fallback=True, normalization_rule_name="identity",
                remove_extra_whitespaces=False, allow_whitespace_only_pieces=True, split_digits=True, user_defined_symbols=["<br>"],
                character_coverage=0.9995)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "unigram.model"), "wb") as f:
        f.write(uni)
    with open(os.path.join(OUT, "bpe.model"), "wb") as f:
        f.write(bpe)
    with open(os.path.join(OUT, "unigram.tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(to_tokenizer_json(uni), f, ensure_ascii=False)
    su = spm.SentencePieceProcessor(model_proto=uni)
    sb = spm.SentencePieceProcessor(model_proto=bpe)

    held = verses(HELD)
    rng.shuffle(held)
    words = sorted({w for v in held[:2000] for w in v.split()})
    strings = held[:2000] + hostile(rng, words)
    n_off = 0
    with open(os.path.join(OUT, "vectors.jsonl"), "w", encoding="utf-8") as f:
        for i, s in enumerate(strings):
            r = {"s": s, "u": su.encode(s), "b": sb.encode(s)}
            hf = su.encode(s.rstrip(WHITE_SPACE))
            if hf != r["u"]:  # the tokenizer.json's Strip removes trailing whitespace the charsmap keeps (U+2028, …)
                r["h"] = hf
            if i >= 2000 or i % 8 == 0:  # offsets for every hostile string and every 8th verse
                r["uo"], r["bo"] = offsets(su, s), offsets(sb, s)
                n_off += 1
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
        for b in invalid_utf8(rng):
            f.write(json.dumps({"x": b.hex(), "u": su.encode(b), "b": sb.encode(b)}, separators=(",", ":")) + "\n")
    print(f"{len(strings)} strings (+ invalid UTF-8 byte strings), offsets for {n_off}; spm {spm.__version__}")


if __name__ == "__main__":
    main()
