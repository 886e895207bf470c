"""Writes tests/data/unicode/nfc.json: strings and their NFC by Python's unicodedata (an independent implementation;
Unicode 14.0 in Debian bookworm's Python, so only characters assigned by 14.0 are used).

  python3 tools/unicode/make_nfc_vectors.py > tests/data/unicode/nfc.json

Cases: every character with a canonical decomposition, alone and as its NFD (both must compose back unless the
character is a composition exclusion); random mixtures of bases, combining marks of several classes (reordered),
Hangul jamo sequences and syllables, starters that compose with starters, and marks blocked by other marks.
"""
import json
import random
import sys
import unicodedata

rng = random.Random(20261123)
assigned = [c for c in range(0x110000) if not (0xD800 <= c < 0xE000) and unicodedata.category(chr(c)) != "Cn"]
decomposable = [c for c in assigned if unicodedata.decomposition(chr(c)) and not unicodedata.decomposition(chr(c)).startswith("<")]
marks = [c for c in assigned if unicodedata.combining(chr(c))]
bases = [ord(x) for x in "aeiouAEIOUcnsyzCNSYZ"] + [0x3B1, 0x3C9, 0x415, 0x435, 0x627, 0x915, 0x3099, 0x304B, 0x0B47, 0x0DD9]
common_marks = [0x300, 0x301, 0x302, 0x303, 0x308, 0x30A, 0x323, 0x327, 0x328, 0x345, 0x31B, 0x3099, 0x309A, 0x0B3E, 0x0DCF, 0x0DDF, 0x0655]
jamo = list(range(0x1100, 0x1113)) + list(range(0x1161, 0x1176)) + list(range(0x11A8, 0x11C3))

cases = []
for c in decomposable:
    cases.append(chr(c))
    cases.append(unicodedata.normalize("NFD", chr(c)))
for _ in range(4000):
    s = []
    for _ in range(rng.randint(1, 8)):
        r = rng.random()
        if r < 0.35:
            s.append(chr(rng.choice(bases)))
        elif r < 0.6:
            s.append(chr(rng.choice(common_marks)))
        elif r < 0.7:
            s.append(chr(rng.choice(marks)))
        elif r < 0.85:
            s.append(chr(rng.choice(jamo)))
        elif r < 0.95:
            s.append(chr(rng.choice(decomposable)))
        else:
            s.append(chr(rng.choice(assigned)))
    cases.append("".join(s))
cases = sorted(set(cases))
json.dump({"unicode": unicodedata.unidata_version, "cases": [[s, unicodedata.normalize("NFC", s)] for s in cases]},
          sys.stdout, ensure_ascii=False, separators=(",", ":"))
sys.stdout.write("\n")
