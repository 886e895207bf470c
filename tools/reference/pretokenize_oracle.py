#!/usr/bin/python3
"""Pre-tokenizer oracle vectors for tests/test-pretokenizers.cpp.

The engine matches the byte-level BPE pre-tokenizers' regular expressions by hand (src/tokenizers/bpe.cpp). This
script runs the expressions themselves, exactly as the models' tokenizer.json files write them, through the `regex`
module (a backtracking engine with Unicode properties and leftmost-first alternation, like the Oniguruma and
fancy-regex engines Hugging Face's tokenizers use), and records the pieces for a few hundred strings:

  tests/data/tokenizers/pretokenize-vectors.json
    {"patterns": {name: expression}, "cases": [{"s": text | "x": hex bytes, "gpt2": [pieces], "llama3": [...],
     "qwen2": [...], "smollm": [...]}, ...]}

  gpt2    GPT-2's ByteLevel expression
  llama3  Llama 3's Split expression
  qwen2   Qwen2's Split expression
  smollm  SmolLM's / StarCoder's chain: Digits (individual_digits: every \\p{N} a piece of its own), then GPT-2's
          expression on each stretch between the digits

Strings: hostile ones written out below (digit runs of 1 to 7, contractions in every case, CR/LF runs, trailing
whitespace, marks, non-Latin scripts, emoji) and seeded random mixes. "x" strings are not UTF-8: they are decoded
with U+FFFD for each maximal ill-formed subsequence (Python's rule, and the engine's), as Hugging Face's bindings
receive such text. Random code points are drawn only among those whose letter / number / whitespace class the
`regex` module and Python's unicodedata agree on, so that the vectors do not depend on a Unicode version.

Usage: /usr/bin/python3 tools/reference/pretokenize_oracle.py   (needs python3-regex)
"""
import json
import os
import random
import unicodedata

import regex

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "tokenizers", "pretokenize-vectors.json")

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
COMPILED = {name: regex.compile(p) for name, p in (("gpt2", GPT2), ("llama3", LLAMA3), ("qwen2", QWEN2))}
DIGIT = regex.compile(r"(\p{N})")


def split(name, text):
    """The pieces of Hugging Face's Split (behavior Isolated): the matches, and any text between them."""
    pieces, at = [], 0
    for m in COMPILED[name].finditer(text):
        if m.start() > at:
            pieces.append(text[at:m.start()])
        pieces.append(m.group())
        at = m.end()
    if at < len(text):
        pieces.append(text[at:])
    return pieces


def smollm(text):
    """Digits(individual_digits) then ByteLevel's GPT-2 expression on each stretch between digits."""
    pieces = []
    for part in DIGIT.split(text):
        if part:
            pieces.extend([part] if DIGIT.fullmatch(part) else split("gpt2", part))
    return pieces


def pieces_of(text):
    out = {"gpt2": split("gpt2", text), "llama3": split("llama3", text), "qwen2": split("qwen2", text), "smollm": smollm(text)}
    for name, p in out.items():
        assert "".join(p) == text and all(p), (name, text)
    return out


# ------------------------------------------------------------------------------------------------------ strings
FIXED = [
    "", " ", "a", "Hello world", "Hello, world! How's it going?",
    # digit runs of 1 to 7, with and without spaces and letters around them, and other \p{N}
    *["1234567"[:k] for k in range(1, 8)], *[" " + "9876543"[:k] for k in range(1, 8)], *["x" + "1234567"[:k] + "y" for k in range(1, 8)],
    "3.14159", "1,000,000", "2024-01-01", "v1.2.3", "a1b2c3", "  42  ", "12 345 6789", "０１２３４", "١٢٣٤٥", "१२३", "Ⅻ Ⅸ", "½¼²³",
    "①②③④", "〇一二", "𝟘𝟙𝟚𝟛", "x²+y²", "1's", "12'", "1\n2\r\n3",
    # contractions in every case (llama3 and qwen2: (?i:...)), half contractions, apostrophes alone
    "I'M", "YOU'RE", "WE'VE", "THEY'LL", "HE'D", "IT'S", "DON'T", "i'm", "you're", "we've", "they'll", "he'd", "it's",
    "don't", "'S", "'T", "'RE", "'Re", "'rE", "'VE", "'vE", "'M", "'LL", "'Ll", "'lL", "'D", "'s", "'re", "'x", "'",
    "''", "'''s", "'ss", "'ll'll", "a'b", "O'Neil", "rock'n'roll", "'ſ", "'ſt", "'K", " 's", " 'S", "\n'S", "'\n",
    "’s", "It’S",
    # CR/LF runs and other whitespace
    "\r\n", "\n", "\r", "\n\n\n", "\r\n\r\n", "\r\r\n\n", "a\r\nb", "a\r\n\r\n b", " \r\n \r\n ", "!!\r\n", "x.\r\n\r\ny",
    "\t\n\t", "  \n  ", "a\n\n  b", "a \n b", "a\t\r\n\tb", "}\n\n", ")\r\n  ", "\n \n", "\u2028\n", "\u3000\n", "\x0b\x0c\n",
    "\x85", "a\x85b", "\r \r", "def f(x):\n    return x\n",
    # trailing and leading whitespace
    "a ", "a  ", "a   ", "hello world   ", "  ", "   ", "\t\t", "a\t", " a", "  a", "   a", "\ta", "\t\ta", "a \t b",
    "a\u3000b", "\u3000\u3000a", "a\xa0\xa0b", "\xa0a", " \u2009a", "word \n", "word\n ",
    # punctuation runs and symbols
    "...", "!!!???", "a... b", " ...a", "--x", "<|endoftext|>", "[INST]", "$100", "C++", "e.g.", "->", "=>", "__init__",
    "#!/bin/sh", "@user", "http://example.com/a?b=c&d=e", "😀😀😀", " 😀", "👍🏽", "👨\u200d👩\u200d👧", "🇩🇪🇫🇷",
    # non-Latin letters and combining marks (marks are not \p{L}: they split a letter run)
    "Привет мир", "日本語のテキスト", "中文字", "한국어 텍스트", "مرحبا بالعالم", "שלום", "नमस्ते दुनिया", "ภาษาไทย", "ก่อน",
    "Ελληνικά", "e\u0301", "\u0301abc", "a\u0301\u0301b", " \u0301", "\u0301\u0301", "ǅemal", "ǈ", "ß", "ſ", "ﬁne",
    "Å", "İstanbul", "ıi", "ʼn", "가", "ｶﾞ", "ＡＢＣ", "a\u200bb", "a\u200db", "\ufeffa", "\ue000", "\uffff", "\U0010ffff",
    "\x00", "a\x00b", "\x01\x02", "\x7f", "\ufffd",
    # long runs
    "a" * 200, "9" * 50, " " * 40, "\n" * 30, "\r\n" * 20, "!" * 60, "é" * 40, "中" * 40, "'s" * 20, " 1" * 20,
]

INVALID_UTF8 = [b"\xff", b"a\xffb", b"\xc3", b"\xe2\x82", b"abc\xe2\x82", b"\xf0\x9f\x98", b"\xf0\x9f\x98a", b"\xed\xa0\x80",
                b"\xc0\xaf", b" \xff ", b"1\xff2", b"'\xff", b"\x80\x80", b"\xfe\xfe\xff", b"\xc3 \xa9", b"\xf4\x90\x80\x80"]

POOL = (list("abcXYZ019") + [" "] * 8 + ["\n", "\r", "\r\n", "\t", "'", "'s", "'S", "'ll", "'LL", "'re"] +
        list(".,;:!?\"()[]{}-_/\\@#$%^&*+=<>|~`") +
        ["é", "ß", "Ж", "щ", "α", "中", "文", "한", "ש", "ع", "ह", "\u093f", "ก", "\u0e48", "\u0301", "\u0308", "\u20dd", "½",
         "²", "Ⅻ", "٣", "０", "😀", "👍", "🏽", "\u200d", "\xa0", "\u3000", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x00",
         "\x1f", "\x7f", "\ufeff", "\u200b", "ſ", "ǅ", "ﬁ", "\ufffd"])


def agreed(c):
    """Whether the regex module and unicodedata agree on c's classes (so that the vector holds for any Unicode)."""
    cat = unicodedata.category(c)
    if cat in ("Cn", "Cs"):
        return False
    return (bool(regex.match(r"\p{L}", c)) == cat.startswith("L") and bool(regex.match(r"\p{N}", c)) == cat.startswith("N"))


def random_strings(rng, count):
    out = []
    for _ in range(count):
        kind = rng.randrange(4)
        if kind == 0:  # the pool
            s = "".join(rng.choice(POOL) for _ in range(rng.randrange(1, 25)))
        elif kind == 1:  # any assigned code points
            cs, n = [], rng.randrange(1, 12)
            while len(cs) < n:
                c = chr(rng.randrange(1, 0x110000) if rng.random() < 0.5 else rng.randrange(1, 0x3000))
                if agreed(c):
                    cs.append(c)
            s = "".join(cs)
        elif kind == 2:  # words and digit runs with whitespace between them
            words = ["the", "The", "IT'S", "don't", "1", "22", "333", "4444", "55555", "666666", "7777777", "Ωμέγα", "日本",
                     "naïve", "x\u0301", "!!", "(", ")", "...", "'", "😀"]
            gap = lambda: "".join(rng.choice([" ", " ", "  ", "\t", "\n", "\r\n", "\u3000", "\xa0", ""]) for _ in range(rng.randrange(0, 3)))
            s = gap() + gap().join(rng.choice(words) for _ in range(rng.randrange(1, 7))) + gap()
        else:  # pool and random code points mixed
            cs = []
            for _ in range(rng.randrange(1, 16)):
                c = chr(rng.randrange(0x80, 0x110000))
                cs.append(c if agreed(c) else rng.choice(POOL))
            s = "".join(cs)
        out.append(s)
    return out


def main():
    rng = random.Random(20240501)
    texts = FIXED + random_strings(rng, 400)
    cases = []
    for t in texts:
        cases.append({"s": t, **pieces_of(t)})
    for b in INVALID_UTF8:
        t = b.decode("utf-8", errors="replace")
        cases.append({"x": b.hex(), **pieces_of(t)})
    for _ in range(40):  # random bytes, mostly not UTF-8
        b = bytes(rng.choice([rng.randrange(256), ord("a"), ord(" "), ord("1"), ord("'"), 0x0A, 0xE2, 0x80, 0xC3]) for _ in range(rng.randrange(1, 12)))
        cases.append({"x": b.hex(), **pieces_of(b.decode("utf-8", errors="replace"))})
    doc = {"generator": "tools/reference/pretokenize_oracle.py (python3-regex " + regex.__version__ + ")",
           "patterns": {"gpt2": GPT2, "llama3": LLAMA3, "qwen2": QWEN2}, "cases": cases}
    with open(OUT, "w", encoding="utf-8") as f:  # one case a line
        f.write("{\n")
        for k in ("generator", "patterns"):
            f.write(json.dumps(k) + ": " + json.dumps(doc[k], ensure_ascii=False) + ",\n")
        f.write('"cases": [\n' + ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n]}\n")
    print(f"wrote {OUT}: {len(cases)} strings")


if __name__ == "__main__":
    main()
