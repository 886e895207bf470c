"""Builds the training corpus for the bundled models from public-domain texts shipped in Debian packages.

Sources (install: apt-get install bible-kjv r-cran-janeaustenr):
  - The King James Bible (1611/1769), public domain; Debian package bible-kjv-text, read with the `bible` program
    from the package bible-kjv (GPL-2+ program; the text itself is public domain).
  - Jane Austen's six completed novels, public domain texts; Debian package r-cran-janeaustenr (MIT-licensed R
    package by Julia Silge), read with Rscript.

Documents are Bible chapters and Austen chapters. Every 20th document goes to the held-out test split, so both
sources are represented in both splits. Output: OUT/train.txt and OUT/test.txt, documents separated by a line
holding only DOC_SEP.
"""
import argparse
import os
import re
import subprocess

DOC_SEP = "<|doc|>"

BOOKS = """Genesis Exodus Leviticus Numbers Deuteronomy Joshua Judges Ruth 1Samuel 2Samuel 1Kings 2Kings 1Chronicles 2Chronicles
Ezra Nehemiah Esther Job Psalms Proverbs Ecclesiastes Song Isaiah Jeremiah Lamentations Ezekiel Daniel Hosea Joel Amos
Obadiah Jonah Micah Nahum Habakkuk Zephaniah Haggai Zechariah Malachi Matthew Mark Luke John Acts Romans 1Corinthians
2Corinthians Galatians Ephesians Philippians Colossians 1Thessalonians 2Thessalonians 1Timothy 2Timothy Titus Philemon
Hebrews James 1Peter 2Peter 1John 2John 3John Jude Revelation""".split()


def kjv_chapters():
    """One document per chapter: the verses joined with spaces (verse numbers removed)."""
    out = subprocess.run(["bible", "-f"] + [f"{b}1:1-{b}200:200" for b in BOOKS], capture_output=True, text=True,
                         check=True).stdout
    chapters, cur, cur_key = [], [], None
    for line in out.splitlines():
        m = re.match(r"^([0-9]?[A-Za-z]+)(\d+):(\d+)\s+(.*)$", line.strip())
        if not m:
            if cur and line.strip():
                cur[-1] += " " + line.strip()  # continuation line of a wrapped verse
            continue
        key = (m.group(1), m.group(2))
        if key != cur_key and cur:
            chapters.append(" ".join(cur))
            cur = []
        cur_key = key
        cur.append(m.group(4).strip())
    if cur:
        chapters.append(" ".join(cur))
    return chapters


def austen_chapters():
    """One document per chapter; paragraphs (blank-line separated in the source) kept as lines."""
    r = "library(janeaustenr); b <- austen_books(); for (i in seq_len(nrow(b))) cat(as.character(b$book[i]), '\\t', b$text[i], '\\n', sep='')"
    out = subprocess.run(["Rscript", "-e", r], capture_output=True, text=True, check=True).stdout
    docs, paras, cur = [], [], []
    for line in out.splitlines():
        _, _, text = line.partition("\t")
        text = text.strip()
        if re.match(r"^(CHAPTER|Chapter) [0-9IVXLC]+\.?$", text):
            if cur:
                paras.append(" ".join(cur))
                cur = []
            if paras:
                docs.append("\n".join(paras))
            paras = []
            continue
        if not text:
            if cur:
                paras.append(" ".join(cur))
                cur = []
        else:
            cur.append(text)
    if cur:
        paras.append(" ".join(cur))
    if paras:
        docs.append("\n".join(paras))
    return [d for d in docs if len(d) > 200]  # drop title pages and volume headers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    docs = kjv_chapters() + austen_chapters()
    train = [d for i, d in enumerate(docs) if i % 20 != 7]
    test = [d for i, d in enumerate(docs) if i % 20 == 7]
    for name, part in (("train", train), ("test", test)):
        with open(os.path.join(a.out, f"{name}.txt"), "w", encoding="utf-8") as f:
            f.write(f"\n{DOC_SEP}\n".join(part))
    print(f"documents: {len(train)} train, {len(test)} test; characters: {sum(map(len, train))} / {sum(map(len, test))}")


if __name__ == "__main__":
    main()
