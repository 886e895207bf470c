"""Held-out evaluation of the English→Spanish model (models/wasmformer-translate-en-es): translations of the held-out
books' verses (KJV and WEB English, separately) scored against the Reina-Valera 1909 with BLEU (13a) and chrF as
sacreBLEU defines them (tools/train/chat/metrics.py, imported), greedy and beam search, next to a floor: the English
verse copied unchanged.

  OMP_NUM_THREADS=1 nice -n 19 /usr/bin/python3 tools/train/translate/evaluate.py --data build/translate-train \\
      --model models/wasmformer-translate-en-es --limit 500 --into models/wasmformer-translate-en-es/training.json

Greedy decoding is the batched cached decoder of model.py (num_beams 1, pad banned, forced EOS), beam search is
tools/reference/marian.py's `generate` (HF's semantics) with the folder's generation_config.json (num_beams 4,
renormalize_logits, length_penalty 1, early_stopping false), both with max_new_tokens = 2 × source tokens + 16
(≤ 511). `--ckpt build/translate-train/run/ckpt.pt` evaluates a training checkpoint (tokenizer files from --data)
instead of the folder; `--limit N` a fixed sample of N verses (seed 0); `--no-beam` greedy only.

The engine's own translations (what the demo shows) are scored the same way: `--sources FILE` writes the evaluated
verses (key, kjv, web, es) and stops; tools/train/translate/engine-translate.mjs translates them with wasmformer;
`--hyps FILE` then scores its translations (no PyTorch decoding) and adds them to --into under "engine_<limit>".
"""
import argparse
import json
import os
import random
import sys
import time

if __name__ == "__main__":
    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_v, "1")
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
sys.path.insert(0, HERE)
sys.path.append(os.path.join(HERE, "..", "chat"))  # metrics.py (after this folder: chat's data.py and model.py)
import data as translate_data  # noqa: E402
import marian  # noqa: E402
import metrics  # noqa: E402
import model as M  # noqa: E402

# Held-out verses shown in the model card, chosen before any model was evaluated.
EXAMPLES = ["Ecclesiastes 3:1", "Luke 6:31", "Ephesians 6:10", "Judges 16:28", "Hosea 6:6", "Titus 2:11",
            "Luke 2:10", "II Chronicles 7:14"]


def load(model_dir=None, ckpt=None, data=None):
    if ckpt:
        ck = torch.load(ckpt)
        m = M.Translator(ck["config"], init=False)
        m.load_state_dict(ck["model"])
        gen = {k: ck["config"][k] for k in ("num_beams", "bad_words_ids", "forced_eos_token_id", "max_length")}
        gen["renormalize_logits"] = True
        return m.eval(), marian.Tokenizer(data), gen, {"ckpt": ckpt, "step": ck["step"]}
    ref, tok, gen = marian.load(model_dir)
    m = M.Translator(ref.config, init=False)
    marian.load_state(m, marian.export_state(ref))
    return m.eval(), tok, gen, {"model": model_dir}


def max_new(n_src):
    return min(2 * n_src + 16, 511)


def translate_greedy(model, tok, texts, batch=64, progress=True):
    srcs = [tok(t) for t in texts]
    order = sorted(range(len(srcs)), key=lambda i: len(srcs[i]))
    out = [None] * len(srcs)
    t0 = time.time()
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        gens = model.greedy([srcs[i] for i in idx], max_new(max(len(srcs[i]) for i in idx)))
        for i, g in zip(idx, gens):
            g = g[:max_new(len(srcs[i]))]  # the row's own limit (a longer batch neighbour allows more)
            out[i] = tok.decode(g)
        if progress:
            print(f"  greedy {s + len(idx)}/{len(order)}, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


def translate_beam(model, tok, gen, texts, progress=True):
    out = []
    t0 = time.time()
    for i, t in enumerate(texts):
        ids = tok(t)
        seq = marian.generate(model, [ids], gen_cfg=gen, max_new_tokens=max_new(len(ids)))[0]
        out.append(tok.decode(seq))
        if progress and (i + 1) % 50 == 0:
            print(f"  beam {i + 1}/{len(texts)}, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


def score(hyps, refs):
    return {"BLEU": round(metrics.bleu(hyps, refs), 2), "chrF": round(metrics.chrf(hyps, refs), 2),
            "empty": sum(not h.strip() for h in hyps)}


def add_evaluation(path, key, res):
    """res as training.json's evaluation[key]."""
    with open(path) as f:
        tj = json.load(f)
    tj.setdefault("evaluation", {})[key] = res
    with open(path, "w") as f:
        json.dump(tj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="build/translate-train")
    ap.add_argument("--model", default="models/wasmformer-translate-en-es")
    ap.add_argument("--ckpt", default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--no-beam", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--into", default=None, help="a training.json to add the results to (key 'evaluation')")
    ap.add_argument("--sources", default=None, help="write the evaluated verses to this JSON file and stop")
    ap.add_argument("--hyps", default=None, help="score the engine's translations in this JSON file (engine-translate.mjs)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    assert metrics.self_test()

    test = translate_data.read_verses(a.data, "test")
    test = [r for r in test if r["kjv"] and r["web"]]
    if a.limit:
        keep = set(random.Random(0).sample(range(len(test)), a.limit))
        test = [r for i, r in enumerate(test) if i in keep]
    refs = [r["es"] for r in test]
    if a.sources:
        with open(a.sources, "w") as f:
            json.dump([{k: r[k] for k in ("key", "kjv", "web", "es")} for r in test], f, ensure_ascii=False)
        return
    if a.hyps:
        with open(a.hyps) as f:
            eng = json.load(f)
        assert eng["keys"] == [r["key"] for r in test], "the engine's translations are of other verses"
        res = {"source": {"engine": eng["engine"], "model": a.model}, "verses": len(test), "options": eng["options"],
               "scores": {k: score(h, refs) for k, h in eng["hyps"].items()}, "minutes": eng["minutes"]}
        print(json.dumps(res, indent=1))
        if a.into:
            add_evaluation(a.into, "engine_" + (f"limit{a.limit}" if a.limit else "all"), res)
        return
    model, tok, gen, source = load(a.model if not a.ckpt else None, a.ckpt, a.data)
    res = {"source": source, "verses": len(test), "generation_config": gen, "scores": {}, "minutes": {}}
    hyps = {}
    for eng in ("kjv", "web"):
        texts = [r[eng] for r in test]
        res["scores"][f"copy {eng}"] = score(texts, refs)
        t0 = time.time()
        hyps[f"greedy {eng}"] = translate_greedy(model, tok, texts)
        res["minutes"][f"greedy {eng}"] = round((time.time() - t0) / 60, 1)
        if not a.no_beam:
            t0 = time.time()
            hyps[f"beam{gen.get('num_beams', 4)} {eng}"] = translate_beam(model, tok, gen, texts)
            res["minutes"][f"beam {eng}"] = round((time.time() - t0) / 60, 1)
    for k, h in hyps.items():
        res["scores"][k] = score(h, refs)
    res["examples"] = [dict({"key": r["key"], "kjv": r["kjv"], "web": r["web"], "es": r["es"]},
                            **{k: h[i] for k, h in hyps.items()}) for i, r in enumerate(test) if r["key"] in EXAMPLES]
    if not res["examples"]:  # a --limit sample without the chosen verses: its first few
        res["examples"] = [dict({"key": r["key"], "kjv": r["kjv"], "web": r["web"], "es": r["es"]},
                                **{k: h[i] for k, h in hyps.items()}) for i, r in enumerate(test[:4])]
    print(json.dumps({k: v for k, v in res.items() if k != "examples"}, indent=1))
    for e in res["examples"]:
        print(f"\n{e['key']}\n  KJV: {e['kjv']}\n  WEB: {e['web']}\n  RV:  {e['es']}")
        for k in hyps:
            print(f"  {k}: {e[k]}")
    if a.json:
        full = dict(res, outputs=[dict({"key": r["key"]}, **{k: h[i] for k, h in hyps.items()})
                                  for i, r in enumerate(test)])
        with open(a.json, "w") as f:
            json.dump(full, f, indent=1, ensure_ascii=False)
    if a.into:
        add_evaluation(a.into, ("ckpt_" if a.ckpt else "") + (f"limit{a.limit}" if a.limit else "all"), res)


if __name__ == "__main__":
    main()
