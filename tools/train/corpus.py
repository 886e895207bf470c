"""Builds the training corpus for the bundled models from public-domain texts shipped in Debian packages.

Sources (install: apt-get install bible-kjv r-cran-janeaustenr libsword-utils sword-text-web):
  - The King James Bible (1611/1769), public domain; Debian package bible-kjv-text, read with the `bible` program
    from the package bible-kjv (GPL-2+ program; the text itself is public domain).
  - Jane Austen's six completed novels, public domain texts; Debian package r-cran-janeaustenr (MIT-licensed R
    package by Julia Silge), read with Rscript.
  - The World English Bible with Deuterocanon (2020 stable text), public domain; Debian package sword-text-web
    (SWORD module engWEB2015eb), read with `mod2imp` from libsword-utils. Footnotes, headings and markup removed.

Documents are Bible chapters and Austen chapters. The split of the King James Bible and Austen is the original one:
every 20th document of the KJV chapters followed by the Austen chapters goes to the held-out test split, so both
sources are in both splits. A World English Bible chapter goes to the test split exactly when the King James chapter
of the same book and number does, so no test verse's paraphrase is trained on; of its deuterocanonical books every
20th chapter is held out, and the two that retell canonical books (Greek Esther, 1 Esdras) are left out.
Output: OUT/train.txt and OUT/test.txt, documents separated by a line holding only DOC_SEP, and OUT/test-kjv-austen.txt,
the test split of the original KJV + Austen corpus (byte for byte the test.txt of `--no-web`), so that metrics compare
with models trained on it.
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


def kjv_chapters(keys=None):
    """One document per chapter: the verses joined with spaces (verse numbers removed). Appends (book, chapter) of
    each chapter to `keys` if given."""
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
            if keys is not None:
                keys.append(cur_key)
        cur_key = key
        cur.append(m.group(4).strip())
    if cur:
        chapters.append(" ".join(cur))
        if keys is not None:
            keys.append(cur_key)
    return chapters


# The World English Bible's books (SWORD names, NRSVA versification, in module order) that are not in the KJV: the
# deuterocanon. Greek Esther and 1 Esdras retell chapters of Esther, 2 Chronicles, Ezra and Nehemiah, so they are left
# out (their paraphrases of held-out chapters would otherwise be trained on).
WEB_DEUTERO = ["Tobit", "Judith", "Wisdom", "Sirach", "Baruch", "Prayer of Azariah", "Susanna", "Bel and the Dragon",
               "I Maccabees", "II Maccabees", "Prayer of Manasses", "Additional Psalm", "III Maccabees", "II Esdras",
               "IV Maccabees"]
WEB_LEFT_OUT = ["Esther (Greek)", "I Esdras"]


def web_plain(osis):
    """Plain text of one verse of the module's OSIS: footnotes, cross-references, headings and speaker labels dropped,
    tags removed, typographic quotes and dashes as in the other sources (ASCII quotes, '--')."""
    s = re.sub(r"<note\b.*?</note>", " ", osis, flags=re.S)
    s = re.sub(r"<(title|speaker)\b[^>]*>.*?</\1>", " ", s, flags=re.S)
    s = re.sub(r"<[^>]+>", "", s)
    s = s.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
    s = s.translate(str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2014": "--",
                                   "\u2013": "-", "\u00a0": " "}))
    return re.sub(r"\s+", " ", s).strip()


def web_chapters():
    """The World English Bible: {(book, chapter): text}, books named as in BOOKS for the 66 canonical books and by
    their SWORD names for the deuterocanon; one document per chapter, verses joined with spaces."""
    out = subprocess.run(["mod2imp", "engWEB2015eb"], capture_output=True, text=True, check=True).stdout
    parts = re.split(r"^\$\$\$(.*)$", out, flags=re.M)
    order, verses = [], {}
    for key, body in zip(parts[1::2], parts[2::2]):
        m = re.match(r"^(.*) (\d+):(\d+)$", key)
        if not m or m.group(2) == "0":  # module, testament and book headings, the preface
            continue
        book = m.group(1)
        if book not in order:
            order.append(book)
        text = web_plain(body)
        if text:
            verses.setdefault((book, int(m.group(2))), []).append(text)
    canon = [b for b in order if b not in WEB_DEUTERO and b not in WEB_LEFT_OUT]
    assert len(canon) == len(BOOKS) and set(WEB_DEUTERO) <= set(order), (canon, order)
    name = dict(zip(canon, BOOKS))
    return {(name.get(b, b), c): " ".join(v) for (b, c), v in verses.items() if b not in WEB_LEFT_OUT}


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
    ap.add_argument("--no-web", action="store_true", help="the original corpus: King James Bible and Austen only")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    keys = []
    docs = kjv_chapters(keys) + austen_chapters()
    train = [d for i, d in enumerate(docs) if i % 20 != 7]
    test = [d for i, d in enumerate(docs) if i % 20 == 7]
    parts = [("train", train), ("test", test)]
    if not a.no_web:
        abbrevs = list(dict.fromkeys(b for b, _ in keys))  # `bible` names books by abbreviations, in BOOKS order
        assert len(abbrevs) == len(BOOKS), abbrevs
        keys = [(BOOKS[abbrevs.index(b)], int(c)) for b, c in keys]
        held_out = {k for i, k in enumerate(keys) if i % 20 == 7}
        web = web_chapters()
        canon = [k for k in web if k[0] in BOOKS]
        deutero = [k for k in web if k[0] not in BOOKS]
        assert len(canon) == len(keys), (len(canon), len(keys))  # the same 1,189 chapters
        web_test = {k for k in canon if k in held_out} | {k for i, k in enumerate(deutero) if i % 20 == 7}
        parts = [("test-kjv-austen", test),
                 ("train", train + [web[k] for k in web if k not in web_test]),
                 ("test", test + [web[k] for k in web if k in web_test])]
        print(f"World English Bible: {len(web) - len(web_test)} chapters train, {len(web_test)} test")
    for name, part in parts:
        with open(os.path.join(a.out, f"{name}.txt"), "w", encoding="utf-8") as f:
            f.write(f"\n{DOC_SEP}\n".join(part))
    for name, part in parts:
        print(f"{name}: {len(part)} documents, {sum(map(len, part))} characters")


if __name__ == "__main__":
    main()
