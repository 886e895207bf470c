"""Verse-aligned paraphrase pairs from two public-domain English Bibles: the King James Version and the World English
Bible, as Debian's SWORD modules ship them (sword-text-kjv: engKJV2006eb; sword-text-web: engWEB2015eb).

  apt-get install libsword-utils sword-text-kjv sword-text-web
  /usr/bin/python3 tools/train/embed/bible_pairs.py --out build/embed

Exports both modules with `mod2imp` (raw OSIS per verse), strips the markup to plain text (Strong's-number <w> tags
and other tags dropped with their text kept; footnotes, cross-references and section headings dropped with their
text, and so is the back matter after a book's end, the WEB's glossary after Revelation; the canonical Psalm titles
kept, as both Bibles have them), pairs the verses by key ("Genesis 1:1") and writes pairs-train.jsonl,
pairs-test.jsonl and pairs-info.json. Whole books are held out for the test split (HELD_OUT_* below: every 7th book
of the 66 in canonical order, starting with the 7th, Judges: 9 books, 10.5 % of the verses, from both testaments).
Curly quotes and apostrophes (both modules use them) become ASCII ' and ", the way people type.

The WEB module's versification is NRSVA and the KJV's is KJV; where they number a verse differently the key pairs
two different verses. Such pairs are rare (the two schemes agree almost everywhere in the 66 books, and the least
similar pairs, checked by hand, are true paraphrases); any left are kept as they are
(a little label noise). The WEB's deuterocanonical books have no KJV partner and drop out.
"""
import argparse
import json
import os
import re
import subprocess
import unicodedata

MODULES = {"kjv": "engKJV2006eb", "web": "engWEB2015eb"}
HELD_OUT_EVERY, HELD_OUT_START = 7, 6          # books 6, 13, 20, … (0-based) of the 66 in canonical order

NOTE = re.compile(r"<note\b[^>]*>.*?</note>", re.S)
TITLE = re.compile(r"<title\b([^>]*)>(.*?)</title>", re.S)
TAG = re.compile(r"<[^>]+>")
BOOK_END = re.compile(r'<div\b[^>]*\beID="[^"]*"[^>]*type="book"[^>]*/>')   # after it: back matter (WEB's glossary)
SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?)])")
QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def clean(raw):
    t = BOOK_END.split(raw, 1)[0]
    t = NOTE.sub(" ", t)
    t = TITLE.sub(lambda m: " " + m.group(2) + " " if 'canonical="true"' in m.group(1) else " ", t)
    t = TAG.sub(lambda m: " " if m.group(0).startswith(("<l ", "<lb", "<lg", "<div", "<p", "<q ")) else "", t)
    t = t.replace("\u00b6", " ").translate(QUOTES)   # ¶ (paragraph marks some modules carry)
    t = unicodedata.normalize("NFC", t)
    t = " ".join(t.split())
    return SPACE_BEFORE_PUNCT.sub(r"\1", t)


def export(module):
    """key → cleaned text, and the book order, from `mod2imp <module>` (raw entries; headers and x:0 entries skipped)."""
    out = subprocess.run(["mod2imp", module], check=True, capture_output=True, text=True).stdout
    verses, books, key = {}, [], None
    for line in out.split("\n"):
        if line.startswith("$$$"):
            key = line[3:].strip()
            continue
        m = re.fullmatch(r"(.+) (\d+):(\d+)", key or "")
        if not m or m.group(2) == "0" or m.group(3) == "0":
            continue
        text = clean(line)
        if not text:
            continue
        verses[key] = (verses[key] + " " + text) if key in verses else text
        if m.group(1) not in books:
            books.append(m.group(1))
    return verses, books


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="build/embed")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    kjv, books = export(MODULES["kjv"])
    web, _ = export(MODULES["web"])
    assert len(books) == 66, books
    held = [b for i, b in enumerate(books) if i % HELD_OUT_EVERY == HELD_OUT_START]
    n = {"train": 0, "test": 0}
    files = {s: open(os.path.join(a.out, f"pairs-{s}.jsonl"), "w", encoding="utf-8") for s in n}
    only_kjv = 0
    for key, k in kjv.items():
        w = web.get(key)
        if w is None:
            only_kjv += 1
            continue
        book = re.fullmatch(r"(.+) \d+:\d+", key).group(1)
        split = "test" if book in held else "train"
        files[split].write(json.dumps({"key": key, "book": book, "kjv": k, "web": w}, ensure_ascii=False) + "\n")
        n[split] += 1
    for f in files.values():
        f.close()
    info = {"modules": MODULES, "books": books, "held_out_books": held, "pairs": n, "kjv_verses": len(kjv),
            "web_verses": len(web), "kjv_without_web": only_kjv,
            "held_out_fraction": round(n["test"] / (n["train"] + n["test"]), 4)}
    with open(os.path.join(a.out, "pairs-info.json"), "w") as f:
        json.dump(info, f, indent=2)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
