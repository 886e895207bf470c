"""Held-out evaluation of the chat model (models/wasmformer-chat-mini): rewrites of the held-out books' King James
verses, scored against the World English Bible's with chrF and BLEU (metrics.py: sacreBLEU's definitions), next to
two baselines: the KJV verse copied unchanged, and word substitutions (DICTIONARY below) applied to it.

  OMP_NUM_THREADS=1 nice -n 19 /usr/bin/python3 tools/train/chat/evaluate.py --data build/chat-train \\
      --model models/wasmformer-chat-mini --json build/chat-train/eval.json \\
      --into models/wasmformer-chat-mini/training.json

The model answers the prompt that the folder's chat template gives for the verse ([system message, user: verse],
add_generation_prompt; no BOS, as apply_chat_template does), decoded greedily until <|im_end|> (at most
max(64, 2 × the verse's tokens + 32) new tokens, within the 512-token context). `--ckpt build/chat-train/run/ckpt.pt`
evaluates a training checkpoint instead of the folder; `--limit N` a fixed sample of N verses; `--bos` puts <s>
before every prompt (llama.cpp's way with add_bos_token) to check that the model copes with both; `--gguf FILE`
evaluates the weights of the q8_0 GGUF (dequantized here) with the folder's tokenizer.
"""
import argparse
import json
import os
import random
import re
import sys
import time

if __name__ == "__main__":
    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_v, "1")
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
import data as chat_data  # noqa: E402
import decoders  # noqa: E402
import metrics  # noqa: E402
import model as M  # noqa: E402
import safetensors_io  # noqa: E402

# Held-out verses shown in the model card, chosen before any model was evaluated.
EXAMPLES = ["Ecclesiastes 3:1", "Luke 6:31", "Ephesians 6:10", "Judges 16:28", "Hosea 6:6", "Titus 2:11",
            "Luke 2:10", "II Chronicles 7:14"]

# The dictionary baseline: archaic words → modern ones (written by hand, with the training books' most frequent
# KJV-only words in view; no word was kept or dropped by its effect on the scores),
# the WEB's conventions for the divine name (the LORD → Yahweh, Lord GOD → Lord Yahweh), the KJV's verse-initial
# "And" dropped, and the -eth / -est verb endings (below). Case follows the original word's first letter.
DICTIONARY = {
    "thee": "you", "thou": "you", "ye": "you", "thy": "your", "thine": "your", "thyself": "yourself",
    "hath": "has", "hast": "have", "doth": "does", "dost": "do", "art": "are",
    "wast": "were", "wert": "were", "wilt": "will", "shalt": "shall", "didst": "did", "canst": "can",
    "couldest": "could", "wouldest": "would", "shouldest": "should", "mayest": "may", "mightest": "might",
    "hadst": "had", "saith": "says", "unto": "to", "spake": "spoke", "shew": "show", "shewed": "showed",
    "sheweth": "shows", "brethren": "brothers", "begat": "became the father of", "smote": "struck", "smite": "strike",
    "slew": "killed", "slay": "kill", "sware": "swore", "bare": "bore", "whither": "where", "thither": "there",
    "hither": "here", "thence": "from there", "hence": "from here", "nigh": "near", "yea": "yes", "nay": "no",
    "verily": "truly", "wherefore": "therefore", "whatsoever": "whatever", "whosoever": "whoever",
    "wheresoever": "wherever", "thereof": "of it", "therein": "in it", "wherein": "in which", "whereby": "by which",
    "wherewith": "with which", "hearken": "listen", "hearkened": "listened", "neighbour": "neighbor",
    "honour": "honor", "favour": "favor", "labour": "labor", "colour": "color", "saviour": "savior",
    "behaviour": "behavior", "wrought": "worked", "morrow": "tomorrow", "twain": "two", "aught": "anything", "naught": "nothing", "peradventure": "perhaps", "holpen": "helped",
    "durst": "dared", "bewray": "betray", "asunder": "apart", "betwixt": "between", "amongst": "among",
    "whilst": "while",
}
DIVINE = [(re.compile(r"\bthe LORD\b"), "Yahweh"), (re.compile(r"\bThe LORD\b"), "Yahweh"),
          (re.compile(r"\bLord GOD\b"), "Lord Yahweh"), (re.compile(r"\bLORD\b"), "Yahweh"),
          (re.compile(r"\bGOD\b"), "Yahweh")]
WORD = re.compile(r"[A-Za-z]+")


class Dictionary:
    """Word substitutions. A word in -eth or -est that never occurs in the training books' WEB text (cometh,
    knowest) becomes the most frequent there of its candidate modern forms (comes, come, …); other words are kept."""

    def __init__(self, train_rows):
        from collections import Counter
        self.freq = Counter(w.lower() for r in train_rows for w in WORD.findall(r["web"]))

    def _verb(self, w):
        lw = w.lower()
        cands = []
        if self.freq[lw]:  # the WEB uses it: not archaic (forest, greatest, Nazareth)
            return w
        if lw.endswith("eth") and len(lw) > 5:  # cometh, heareth, sitteth, crieth → comes, hears, sits, cries
            s = lw[:-3]
            cands = [s + "s", s + "es", s[:-1] + "ies"]
            if s[-1] == s[-2] and s[-1] != "s":  # sitteth → sits
                cands.append(s[:-1] + "s")
        elif lw.endswith("est") and len(lw) > 5:  # knowest, comest, sittest → know, come, sit
            s = lw[:-3]
            cands = [s, s + "e", s[:-1]]
        cands = [c for c in cands if self.freq[c] > 2]
        if not cands:
            return w
        best = max(cands, key=lambda c: self.freq[c])
        return best[0].upper() + best[1:] if w[0].isupper() else best

    def __call__(self, text):
        if text.startswith("And ") and len(text) > 4:  # the WEB drops the verse-initial "And" of the KJV
            text = text[4].upper() + text[5:]
        for rx, rep in DIVINE:
            text = rx.sub(rep, text)

        def sub(m):
            w = m.group(0)
            rep = DICTIONARY.get(w.lower())
            if rep is None:
                return self._verb(w)
            return rep[0].upper() + rep[1:] if w[0].isupper() else rep
        return WORD.sub(sub, text)


def load_gguf(path, model_dir):
    """The model with the weights of a GGUF file (q8_0 and f32 tensors dequantized; attn_q / attn_k rows back from
    llama.cpp's adjacent-pair layout), config.json from model_dir: what the quantized file computes."""
    import numpy as np
    import gguf_export
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    g = gguf_export.read_gguf(path)
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    names = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
             "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
             "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
    W = {}
    for name, t in g["tensors"].items():
        a = gguf_export.tensor_f32(t)
        if name == "token_embd.weight":
            W["model.embed_tokens.weight"] = a
        elif name == "output_norm.weight":
            W["model.norm.weight"] = a
        else:
            _, l, kind, wb = name.split(".")
            if kind in ("attn_q", "attn_k"):
                a = gguf_export.unpermute_qk(a, H if kind == "attn_q" else KV)
            W[f"model.layers.{l}.{names[kind]}.{wb}"] = a
    m = M.LlamaForCausalLM(cfg, init=False)
    decoders.load_state(m, {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in W.items()})
    return m.eval(), {"gguf": path, "types": sorted({t["type"] for t in g["tensors"].values()})}


def load_model(model_dir=None, ckpt=None):
    if ckpt:
        ck = torch.load(ckpt)
        m = M.LlamaForCausalLM(ck["config"], init=False)
        m.load_state_dict(ck["model"])
        return m.eval(), {"ckpt": ckpt, "step": ck["step"]}
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    m = M.LlamaForCausalLM(cfg, init=False)
    decoders.load_state(m, safetensors_io.load(os.path.join(model_dir, "model.safetensors")))
    return m.eval(), {"model": model_dir}


def rewrite(model, enc, verses, bos=False, batch=48, context=512, progress=True):
    """Greedy answers to the chat prompts of `verses`, in their order."""
    prompts = [enc.prompt(v, bos=bos) for v in verses]
    order = sorted(range(len(verses)), key=lambda i: len(prompts[i]))
    out = [None] * len(verses)
    t0 = time.time()
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        ps = [prompts[i] for i in idx]
        n_in = max(len(enc.encode(verses[i])) for i in idx)
        max_new = min(max(64, 2 * n_in + 32), context - max(len(p) for p in ps))
        gens = model.greedy(ps, max_new, stop_id=enc.im_end)
        for i, g in zip(idx, gens):
            out[i] = enc.sp.decode(g)
        if progress:
            print(f"  {s + len(idx)}/{len(order)} verses, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


def score(hyps, refs):
    return {"chrF": round(metrics.chrf(hyps, refs), 2), "BLEU": round(metrics.bleu(hyps, refs), 2),
            "exact": round(sum(h.strip() == r.strip() for h, r in zip(hyps, refs)) / len(refs), 4)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="build/chat-train")
    ap.add_argument("--model", default="models/wasmformer-chat-mini")
    ap.add_argument("--ckpt", default=None)
    ap.add_argument("--gguf", default=None, help="evaluate this GGUF's (dequantized) weights, config from --model")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--bos", action="store_true")
    ap.add_argument("--batch", type=int, default=48)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--into", default=None, help="a training.json to add the results to (key 'evaluation')")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    assert metrics.self_test()

    test = chat_data.read_pairs(a.data, "test")
    if a.limit:
        test = sorted(random.Random(0).sample(test, a.limit), key=lambda r: test.index(r))
    refs = [r["web"] for r in test]
    kjv = [r["kjv"] for r in test]
    dic = Dictionary(chat_data.read_pairs(a.data, "train"))
    copy_h, dict_h = kjv, [dic(v) for v in kjv]
    model_dir = a.model if not a.ckpt else os.path.dirname(a.ckpt)
    tok = os.path.join(a.model, "tokenizer.model") if not a.ckpt else os.path.join(a.data, "tokenizer.model")
    enc = chat_data.Encoder(tok)
    if a.gguf:
        model, source = load_gguf(a.gguf, a.model)
    else:
        model, source = load_model(a.model if not a.ckpt else None, a.ckpt)
    t0 = time.time()
    hyps = rewrite(model, enc, kjv, bos=a.bos, batch=a.batch)
    minutes = (time.time() - t0) / 60
    res = {
        "source": source, "verses": len(test), "books": sorted(set(r["book"] for r in test), key=[r["book"] for r in test].index),
        "bos": a.bos, "decode": "greedy, until <|im_end|>", "minutes": round(minutes, 1),
        "scores": {"copy KJV": score(copy_h, refs), "dictionary": score(dict_h, refs), "model": score(hyps, refs)},
        "empty_answers": sum(not h.strip() for h in hyps),
        "examples": [{"key": r["key"], "kjv": r["kjv"], "web": r["web"], "dictionary": d, "model": h}
                     for r, d, h in zip(test, dict_h, hyps) if r["key"] in EXAMPLES],
    }
    print(json.dumps({k: v for k, v in res.items() if k != "examples"}, indent=1))
    for e in res["examples"]:
        print(f"\n{e['key']}\n  KJV:   {e['kjv']}\n  WEB:   {e['web']}\n  dict:  {e['dictionary']}\n  model: {e['model']}")
    if a.json:
        full = dict(res, outputs=[{"key": r["key"], "model": h} for r, h in zip(test, hyps)])
        with open(a.json, "w") as f:
            json.dump(full, f, indent=1, ensure_ascii=False)
    if a.into:
        with open(a.into) as f:
            tj = json.load(f)
        key = ("gguf_" if a.gguf else "") + ("bos" if a.bos else "no_bos") + (f"_limit{a.limit}" if a.limit else "")
        tj.setdefault("evaluation", {})[key] = res
        with open(a.into, "w") as f:
            json.dump(tj, f, indent=2, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
