"""Held-out evaluation of the sentence-embedding model: verse retrieval across two Bible translations.

  nice -n 19 /usr/bin/python3 tools/train/embed/evaluate_embed.py --pairs build/embed \\
      --model initial=models/wasmformer-bert-mini --model trained=models/wasmformer-embed-mini \\
      --json build/embed/eval.json --into models/wasmformer-embed-mini/training.json

On the held-out books (pairs-test.jsonl, whole books never trained on), each WEB verse is a query and the candidates
are all held-out KJV verses (WEB→KJV), and the other way round (KJV→WEB). Candidates are the distinct texts: a verse
that occurs word for word at several places (e.g. "And the LORD spake unto Moses, saying,") is one candidate, and
retrieving it is correct for any of its places. Reports recall@1, recall@5 and MRR for every --model (a model folder:
the masked-LM checkpoint gives the "initial" model, its encoder with mean pooling) and for two lexical baselines:
TF-IDF (lower-cased word unigrams, smooth idf fitted on the held-out texts of both translations, cosine) and BM25
(k1 = 1.5, b = 0.75, idf from the candidate side). Also counts the held-out pairs whose two texts are equal after
lower-casing and removing punctuation. Lexical overlap is high (the WEB descends from the ASV, a revision of the
KJV tradition), so the metrics are also given for the low-overlap tenth of the queries: the 10 % of pairs with the
lowest Jaccard overlap of their word sets, where a paraphrase has to be recognised by more than shared words.
"""
import argparse
import hashlib
import json
import os
import re
import sys
import time
from collections import Counter

if __name__ == "__main__":
    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_v, "1")
import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_embed as te  # noqa: E402

WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text):
    return WORD.findall(text.lower())


def normalized(text):
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def ranks(scores, gold):
    """scores: (Q, C) array; gold: (Q,) candidate index. Rank of the gold candidate (1 = best; ties count against)."""
    g = scores[np.arange(len(gold)), gold][:, None]
    return 1 + (scores > g).sum(1) + ((scores == g).sum(1) - 1)


def metrics(r):
    return {"recall@1": float((r <= 1).mean()), "recall@5": float((r <= 5).mean()), "mrr": float((1.0 / r).mean())}


def dedup(texts):
    uniq, index = {}, []
    for t in texts:
        index.append(uniq.setdefault(t, len(uniq)))
    return list(uniq), np.array(index)


def tfidf_scores(queries, cands, fit_texts):
    vocab = {}
    for t in fit_texts:
        for w in set(words(t)):
            vocab.setdefault(w, len(vocab))
    df = np.zeros(len(vocab))
    for t in fit_texts:
        for w in set(words(t)):
            df[vocab[w]] += 1
    idf = np.log((1 + len(fit_texts)) / (1 + df)) + 1

    def mat(texts):
        m = np.zeros((len(texts), len(vocab)), dtype=np.float32)
        for i, t in enumerate(texts):
            for w, c in Counter(words(t)).items():
                if w in vocab:
                    m[i, vocab[w]] = c * idf[vocab[w]]
        n = np.linalg.norm(m, axis=1, keepdims=True)
        return m / np.maximum(n, 1e-12)
    return mat(queries) @ mat(cands).T


def bm25_scores(queries, cands, k1=1.5, b=0.75):
    docs = [Counter(words(t)) for t in cands]
    vocab = {}
    for d in docs:
        for w in d:
            vocab.setdefault(w, len(vocab))
    tf = np.zeros((len(cands), len(vocab)), dtype=np.float32)
    for i, d in enumerate(docs):
        for w, c in d.items():
            tf[i, vocab[w]] = c
    dl = tf.sum(1)
    df = (tf > 0).sum(0)
    idf = np.log(1 + (len(cands) - df + 0.5) / (df + 0.5))
    w = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / dl.mean())[:, None]) * idf[None, :]
    q = np.zeros((len(queries), len(vocab)), dtype=np.float32)
    for i, t in enumerate(queries):
        for x, c in Counter(words(t)).items():
            if x in vocab:
                q[i, vocab[x]] = c
    return q @ w.T


def jaccard(a, b):
    x, y = set(words(a)), set(words(b))
    return len(x & y) / max(1, len(x | y))


def evaluate(score_fn, kjv, web, hard):
    """Both directions; score_fn(query_texts, candidate_texts) → (Q, C) scores. `hard`: indices of the low-overlap
    subset, whose metrics are reported separately (same candidates)."""
    out = {}
    for name, queries, cands in (("web→kjv", web, kjv), ("kjv→web", kjv, web)):
        uniq, gold = dedup(cands)
        r = ranks(score_fn(queries, uniq), gold)
        out[name] = metrics(r)
        out[name]["candidates"] = len(uniq)
        out[name + " low-overlap"] = metrics(r[hard])
    return out


# chosen before any model was evaluated: modern-English pairs, a paraphrase and an unrelated sentence for each anchor
EXAMPLES = [
    ("A man is playing a guitar.", "Someone is strumming a guitar."),
    ("A man is playing a guitar.", "A woman is slicing an onion."),
    ("The cat sat on the mat.", "A cat was sitting on a rug."),
    ("The cat sat on the mat.", "Stock prices fell sharply on Monday."),
    ("How do I reset my password?", "I forgot my password and need a new one."),
    ("How do I reset my password?", "What time does the museum open?"),
]

GOLDEN_TEXTS = [
    "In the beginning God created the heaven and the earth.",
    "The LORD is my shepherd; I shall not want.",
    "The train to the airport leaves every twenty minutes from platform two.",
    "She forgot her umbrella, so she got soaked walking home from work.",
    "On 3/14/2024 the price rose 12.5% (from $40 to $45) \u2014 really?!",
    "Hi.",
]


def write_golden(model_dir, out):
    """Token ids and normalised embeddings of GOLDEN_TEXTS from the model folder's saved (F16) weights, widened to
    F32 and run in F32, for the engine's tests."""
    model = te.load_encoder(model_dir)   # F16 tensors from model.safetensors → float32
    tok = te.Tokenizer(os.path.join(model_dir, "vocab.txt"))
    items = []
    with torch.no_grad():
        embs = []
        for t in GOLDEN_TEXTS:
            ids = tok(t)
            e = model(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.bool))[0]
            embs.append(e)
            items.append({"text": t, "ids": ids, "embedding": [float(x) for x in e.tolist()]})
        sims = (torch.stack(embs) @ torch.stack(embs).T).tolist()
    with open(os.path.join(model_dir, "model.safetensors"), "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    doc = {"model": "models/wasmformer-embed-mini", "model_sha256": sha,
           "source": "tools/train/embed/evaluate_embed.py --golden (PyTorch reference: tools/reference/models.py and "
                     "tokenizers.py WordPiece, lower-cased)",
           "note": "ids: [CLS] … [SEP], truncation at 128 tokens, one sequence at a time (no padding). embedding: mean of "
                   "the last hidden states over all tokens (special tokens included), then L2-normalised; computed in "
                   "float32 from the F16 weights of model.safetensors as saved. similarities: cosines of the embeddings.",
           "hidden_size": model.config["hidden_size"], "items": items,
           "similarities": [[round(x, 6) for x in row] for row in sims]}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default="build/embed")
    ap.add_argument("--model", action="append", default=[], help="NAME=FOLDER (repeatable)")
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--into", default=None, help="also store them as \"metrics\" in this training.json")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--golden", default=None, help="only write the golden file (tests/data/embed-mini-golden.json)")
    ap.add_argument("--golden-model", default="models/wasmformer-embed-mini")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.golden:
        write_golden(a.golden_model, a.golden)
        return
    with open(os.path.join(a.pairs, "pairs-test.jsonl"), encoding="utf-8") as f:
        test = [json.loads(line) for line in f]
    kjv, web = [p["kjv"] for p in test], [p["web"] for p in test]
    books = list(dict.fromkeys(p["book"] for p in test))
    overlap = np.array([jaccard(k, w) for k, w in zip(kjv, web)])
    hard = np.argsort(overlap, kind="stable")[:len(test) // 10]
    res = {"held_out_books": books, "pairs": len(test),
           "exact_matches": sum(normalized(k) == normalized(w) for k, w in zip(kjv, web)),
           "exact_matches_note": "pairs whose KJV and WEB texts are equal after lower-casing and removing punctuation",
           "low_overlap_pairs": len(hard), "low_overlap_max_jaccard": float(overlap[hard].max()),
           "low_overlap_note": "the 10 % of pairs with the lowest word-set Jaccard overlap between the two texts",
           "distinct_kjv_texts": len(set(kjv)), "distinct_web_texts": len(set(web)), "results": {}}
    print(f"{len(test)} held-out pairs from {len(books)} books; exact matches {res['exact_matches']}", flush=True)
    if not a.no_baselines:
        res["results"]["tfidf"] = evaluate(lambda q, c: tfidf_scores(q, c, kjv + web), kjv, web, hard)
        res["results"]["bm25"] = evaluate(bm25_scores, kjv, web, hard)
    for spec in a.model:
        name, path = spec.split("=", 1)
        t0 = time.time()
        model = te.load_encoder(path)
        tok = te.Tokenizer(os.path.join(path, "vocab.txt"))
        cache = {}

        def score(q, c):
            for t in q + c:
                if t not in cache:
                    cache[t] = None
            missing = [t for t, v in cache.items() if v is None]
            if missing:
                e = te.embed_ids(model, [tok(t) for t in missing])
                for t, v in zip(missing, e):
                    cache[t] = v
            return (torch.stack([cache[t] for t in q]) @ torch.stack([cache[t] for t in c]).T).numpy()
        res["results"][name] = evaluate(score, kjv, web, hard)
        res["results"][name]["examples"] = [round(float(x), 4) for x in
                                            (te.embed_ids(model, [tok(p[0]) for p in EXAMPLES]) *
                                             te.embed_ids(model, [tok(p[1]) for p in EXAMPLES])).sum(1)]
        res["results"][name]["model"] = path
        print(f"{name}: {time.time() - t0:.0f}s", flush=True)
    for sub in ("", " low-overlap"):
        print(f"\n{'all ' + str(len(test)) if not sub else 'low-overlap ' + str(len(hard))} queries")
        print("| model | WEB→KJV R@1 | R@5 | MRR | KJV→WEB R@1 | R@5 | MRR |\n|---|---|---|---|---|---|---|")
        for name, r in res["results"].items():
            x, y = r["web→kjv" + sub], r["kjv→web" + sub]
            print(f"| {name} | {100 * x['recall@1']:.1f} | {100 * x['recall@5']:.1f} | {x['mrr']:.3f} | "
                  f"{100 * y['recall@1']:.1f} | {100 * y['recall@5']:.1f} | {y['mrr']:.3f} |")
    models_run = [n for n in res["results"] if "examples" in res["results"][n]]
    if models_run:
        print("\n| sentence pair (cosine) | " + " | ".join(models_run) + " |\n|---|" + "---|" * len(models_run))
        for i, (x, y) in enumerate(EXAMPLES):
            print(f"| {x} / {y} | " + " | ".join(f"{res['results'][n]['examples'][i]:.3f}" for n in models_run) + " |")
    res["examples"] = EXAMPLES
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2, ensure_ascii=False)
    if a.into:
        with open(a.into) as f:
            tj = json.load(f)
        tj["metrics"] = res
        with open(a.into, "w") as f:
            json.dump(tj, f, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()
