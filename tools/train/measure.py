"""Held-out metrics of a model folder, without training: the numbers train.py records in training.json.

  /usr/bin/python3 tools/train/measure.py models/wasmformer-bert-mini --corpus build/corpus
  /usr/bin/python3 tools/train/measure.py models/wasmformer-gpt2-mini --corpus build/corpus

On the corpus's test split (test.txt) and, where the corpus has one, on the original KJV + Austen test split
(test-kjv-austen.txt), so that models trained on different corpora compare. BERT: top-1/top-5 of 15 % masked tokens in
200 windows of 128 (train.eval_bert), and with whole words masked; GPT-2: perplexity in windows of 256 (and 128).

BERT, --examples: also the top 5 of the model-card inputs (tools/train/examples.json) and of issue 18's
"Let there be [MASK].", and the counts the CI test checks on tests/data/bert-heldout.json (80 held-out sentences, one
word masked: top-1 and top-5 out of 80), all from the PyTorch reference (the engine gives the same up to F16/Q8_0
rounding), so that a model folder outside models/ can be judged before it is bundled:
  /usr/bin/python3 tools/train/measure.py build/bert-train/export/wasmformer-bert-mini --corpus build/bert-train/corpus --examples
"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import models  # noqa: E402
import safetensors_io  # noqa: E402
import tokenizers as toks  # noqa: E402
from train import eval_bert, eval_gpt, keep_freed_memory, read_docs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--examples", action="store_true", help="BERT: also the model-card examples and the CI sentences")
    a = ap.parse_args()
    keep_freed_memory()
    torch.set_num_threads(a.threads)
    with open(os.path.join(a.model, "config.json")) as f:
        cfg = json.load(f)
    bert = cfg["model_type"] == "bert"
    model = models.BertForMaskedLM(cfg) if bert else models.GPT2LMHeadModel(cfg)
    state = {k: v.float() for k, v in safetensors_io.load(os.path.join(a.model, "model.safetensors")).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all("decoder" in m or "lm_head" in m for m in missing), (missing, unexpected)
    if bert:
        tok = toks.WordPiece(os.path.join(a.model, "vocab.txt"))
        v = tok.vocab
        special = (v["[CLS]"], v["[SEP]"], v["[MASK]"], 1000)
        encode = lambda docs: [i for d in docs for i in tok.encode(d) + [v["[SEP]"]]]
    else:
        tok = toks.ByteBPE(os.path.join(a.model, "vocab.json"), os.path.join(a.model, "merges.txt"))
        eot = tok.encoder["<|endoftext|>"]
        encode = lambda docs: [i for d in docs for i in tok.encode(d) + [eot]]
    out = {}
    for name in ("test.txt", "test-kjv-austen.txt"):
        path = os.path.join(a.corpus, name)
        if not os.path.exists(path):
            continue
        stream = encode(read_docs(path))
        if bert:
            ws = torch.tensor([not tok.inv[i].startswith("##") for i in stream])
            out[name] = dict(eval_bert(model, stream, special), whole_word_eval=eval_bert(model, stream, special, word_start=ws))
        else:
            out[name] = dict(eval_gpt(model, stream), windows_128=eval_gpt(model, stream, T=128))
        out[name]["test_tokens"] = len(stream)
    if bert and a.examples:
        out.update(examples(model, tok))
    print(json.dumps(out, indent=1))


@torch.no_grad()
def fill(model, tok, text, k=5):
    """Top k (word, probability) at the first [MASK] of text: [CLS] pieces [SEP], as the engine's fill-mask."""
    v = tok.vocab
    parts = text.split("[MASK]")
    ids = [v["[CLS]"]]
    for i, part in enumerate(parts):
        ids += tok.encode(part)
        if i < len(parts) - 1:
            ids.append(v["[MASK]"])
    ids.append(v["[SEP]"])
    x = torch.tensor([ids])
    h, _, _ = model.encode(x)
    p = model.mlm_logits(h[0, ids.index(v["[MASK]"])]).softmax(-1)
    top = p.topk(k)
    return [(tok.inv[int(i)], round(float(q), 3)) for q, i in zip(top.values, top.indices)]


def examples(model, tok):
    model.eval()
    root = os.path.join(HERE, "..", "..")
    with open(os.path.join(HERE, "examples.json")) as f:
        texts = ["Let there be [MASK]."] + json.load(f)["fill_mask"]
    res = {"examples": {t: " ".join(f"{w} ({q:.2f})" for w, q in fill(model, tok, t)) for t in texts}}
    with open(os.path.join(root, "tests", "data", "bert-heldout.json")) as f:
        items = json.load(f)["items"]
    top1 = top5 = 0
    for it in items:
        words = [w for w, _ in fill(model, tok, it["text"])]
        top1 += words[0] == it["answer"]
        top5 += it["answer"] in words
    res["ci_heldout_sentences"] = {"top1": top1, "top5": top5, "of": len(items)}
    return res


if __name__ == "__main__":
    main()
