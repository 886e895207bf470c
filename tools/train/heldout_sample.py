"""Writes tests/data/bert-heldout.json: sentences from the held-out split with one whole word masked.

The end-to-end test (tests/js/models.test.mjs) runs them through the engine and checks the bundled BERT's top-1
and top-5 accuracy, so CI measures the model the way users run it, without the corpus (which needs Debian's text packages).
  /usr/bin/python3 tools/train/heldout_sample.py --corpus build/corpus
The words are drawn uniformly from each sentence (seeded), any alphabetic word that is one WordPiece token.
"""
import argparse
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import tokenizers as toks  # noqa: E402
from train import read_docs, shared_tokenizers  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", default=os.path.normpath(os.path.join(HERE, "..", "..", "tests", "data", "bert-heldout.json")))
    ap.add_argument("--n", type=int, default=80)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    vocab = toks.WordPiece(shared_tokenizers()).vocab
    rng = random.Random(a.seed)
    sentences = [s.strip() for d in read_docs(os.path.join(a.corpus, "test.txt"))
                 for s in re.split(r"(?<=[.?!;:])\s+", d) if 8 <= len(s.split()) <= 40]
    items = []
    for s in rng.sample(sentences, len(sentences)):
        words = list(re.finditer(r"[A-Za-z]+", s))
        words = [w for w in words if w.group().lower() in vocab]
        if not words:
            continue
        w = rng.choice(words)
        items.append({"text": s[:w.start()] + "[MASK]" + s[w.end():], "answer": w.group().lower()})
        if len(items) == a.n:
            break
    with open(a.out, "w") as f:
        json.dump({"source": "held-out split of tools/train/corpus.py (King James Bible, World English Bible, Jane Austen; "
                             "public domain), written by tools/train/heldout_sample.py", "items": items}, f, indent=1)
    print(f"{len(items)} sentences → {a.out}")


if __name__ == "__main__":
    main()
