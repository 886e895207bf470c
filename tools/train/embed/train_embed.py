"""Trains the bundled sentence-embedding model (models/wasmformer-embed-mini) on CPU: a BERT encoder started from the
bundled masked-LM (models/wasmformer-bert-mini), mean pooling over the real tokens, L2 normalisation, and a symmetric
InfoNCE loss with in-batch negatives on verse-aligned paraphrase pairs (King James Version ↔ World English Bible).

  /usr/bin/python3 tools/train/embed/bible_pairs.py --out build/embed
  nice -n 19 /usr/bin/python3 tools/train/embed/train_embed.py --pairs build/embed \\
      --init models/wasmformer-bert-mini --out models/wasmformer-embed-mini --steps 3000 --batch 96 --lr 2e-4

Writes the --out folder in Hugging Face `BertModel` + sentence-transformers layout (F16 weights, names without the
`bert.` prefix, as `BertModel.save_pretrained` writes them) every --checkpoint-every minutes and at the end, with a
training.json that records every setting and the steps reached; --minutes stops early at a wall-clock budget (the
learning-rate schedule is always the one --steps gives, so a run cut short by --minutes is reproduced with
`--steps N --stop-at S`). `--manifest DIR` only (re)writes DIR/model-files.json.

The encoder code is the reference model of tools/reference/models.py; the tokenizer is tools/reference/tokenizers.py's
WordPiece (lower-cased, bert-base-uncased's vocabulary).
"""
import argparse
import json
import math
import os
import random
import shutil
import sys
import time

if __name__ == "__main__":
    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_v, "1")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
sys.path.insert(0, os.path.join(HERE, ".."))
import models  # noqa: E402
import safetensors_io  # noqa: E402
import tokenizers as toks  # noqa: E402

MAX_LEN = 128
EMBED_CONFIG = dict(architectures=["BertModel"], model_type="bert", vocab_size=30522, hidden_size=192,
                    num_hidden_layers=4, num_attention_heads=4, intermediate_size=768, hidden_act="gelu",
                    max_position_embeddings=128, type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0,
                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, initializer_range=0.02,
                    torch_dtype="float16")


# --------------------------------------------------------------------------------------------------- the model
class SentenceEncoder(nn.Module):
    """Hugging Face BertModel (embeddings, encoder, pooler; state_dict names as BertModel writes them) with
    sentence-transformers' mean pooling + Normalize on top. The pooler is carried for the layout only."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        bert = models.BertModel(c)
        self.embeddings, self.encoder = bert.embeddings, bert.encoder
        self.pooler = nn.Module()
        self.pooler.dense = nn.Linear(c["hidden_size"], c["hidden_size"])

    def hidden(self, ids, mask):
        x = self.embeddings(ids)
        for layer in self.encoder.layer:
            x, _ = layer(x, mask)
        return x

    def forward(self, ids, mask):
        """ids, mask: (B, T); mask True on real tokens ([CLS] … [SEP]). Returns (B, E) unit vectors."""
        h = self.hidden(ids, mask)
        m = mask.to(h.dtype)[:, :, None]
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return F.normalize(pooled, p=2, dim=-1)


def load_encoder(path, seed=0):
    """A SentenceEncoder from a model folder: either the bundled masked-LM (names `bert.*`, MLM head dropped, pooler
    initialised as Hugging Face does for a missing pooler: normal(0, 0.02), bias 0) or an embedding model folder."""
    with open(os.path.join(path, "config.json")) as f:
        cfg = json.load(f)
    c = dict(EMBED_CONFIG)
    for k in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
              "max_position_embeddings", "type_vocab_size", "layer_norm_eps"):
        c[k] = cfg[k]
    model = SentenceEncoder(c)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        model.pooler.dense.weight.normal_(0.0, 0.02, generator=g)
        model.pooler.dense.bias.zero_()
    state = safetensors_io.load(os.path.join(path, "model.safetensors"))
    own = model.state_dict()
    loaded = {}
    for name, t in state.items():
        n = name[len("bert."):] if name.startswith("bert.") else name
        if n in own:
            assert own[n].shape == t.shape, (n, own[n].shape, t.shape)
            loaded[n] = t.float()
    missing = [n for n in own if n not in loaded and not n.startswith("pooler.")]
    assert not missing, missing
    model.load_state_dict({**own, **loaded})
    model.eval()
    return model


class Tokenizer:
    def __init__(self, vocab_path):
        self.wp = toks.WordPiece(vocab_path, lowercase=True)
        self.cls, self.sep, self.pad = self.wp.vocab["[CLS]"], self.wp.vocab["[SEP]"], self.wp.vocab["[PAD]"]

    def __call__(self, text, max_len=MAX_LEN):
        """[CLS] ids [SEP], truncated to max_len in all (as a Hugging Face BertTokenizer with truncation=True)."""
        return [self.cls] + self.wp.encode(text)[:max_len - 2] + [self.sep]


def pad_batch(seqs, pad_id=0):
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), T), dtype=torch.bool)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = True
    return ids, mask


@torch.no_grad()
def embed_ids(model, seqs, batch=128):
    """Embeddings of token-id sequences, in length-sorted batches (less padding; the result is in input order)."""
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    out = torch.empty(len(seqs), model.config["hidden_size"])
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        ids, mask = pad_batch([seqs[i] for i in idx])
        out[idx] = model(ids, mask)
    return out


# ------------------------------------------------------------------------------------------------------- export
def write_folder(model, out, tok_dir, meta):
    """The Hugging Face + sentence-transformers folder, F16 weights. README.md (the model card) is left alone."""
    os.makedirs(out, exist_ok=True)
    safetensors_io.save(os.path.join(out, "model.safetensors"), model.state_dict(), metadata={"format": "pt"},
                        dtype=torch.float16)
    cfg = {k: v for k, v in model.config.items()}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    shutil.copy(os.path.join(tok_dir, "vocab.txt"), os.path.join(out, "vocab.txt"))
    with open(os.path.join(tok_dir, "tokenizer_config.json")) as f:
        tc = json.load(f)
    tc["model_max_length"] = MAX_LEN
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f, indent=2)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    with open(os.path.join(out, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    pooling = {"word_embedding_dimension": cfg["hidden_size"], "pooling_mode_cls_token": False,
               "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
               "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
               "pooling_mode_lasttoken": False, "include_prompt": True}
    with open(os.path.join(out, "1_Pooling", "config.json"), "w") as f:
        json.dump(pooling, f, indent=2)
    os.makedirs(os.path.join(out, "2_Normalize"), exist_ok=True)   # empty, as sentence-transformers writes it
    with open(os.path.join(out, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": MAX_LEN, "do_lower_case": False}, f, indent=2)
    with open(os.path.join(out, "config_sentence_transformers.json"), "w") as f:
        json.dump({"prompts": {}, "default_prompt_name": None, "similarity_fn_name": "cosine"}, f, indent=2)
    with open(os.path.join(out, "training.json"), "w") as f:
        json.dump(meta, f, indent=2)
    write_manifest(out)


def write_manifest(out):
    """model-files.json: {"files": {relative path: size}} for every file under the folder (itself excluded)."""
    files = {}
    for root, _, names in os.walk(out):
        for n in names:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, out).replace(os.sep, "/")
            if rel != "model-files.json":
                files[rel] = os.path.getsize(p)
    with open(os.path.join(out, "model-files.json"), "w") as f:
        json.dump({"files": dict(sorted(files.items()))}, f, indent=2)
        f.write("\n")


# ------------------------------------------------------------------------------------------------------ training
def read_pairs(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def batches(lengths, B, rng, chunk=1, bucket=32):
    """One epoch of index batches. The pairs (in canonical order) are cut into runs of `chunk` consecutive verses,
    at a random offset; a batch holds B // chunk runs, so that its negatives include neighbouring verses (same
    names, same story: harder than random ones). The runs are shuffled, cut into groups of `bucket` batches, each
    group sorted by its runs' longest text and cut into batches (less padding), and the batches shuffled again."""
    n, off = len(lengths), rng.randrange(chunk)
    runs = [list(range(s, min(n, s + chunk))) for s in range(off, n, chunk)]
    runs = [r for r in runs if len(r) == chunk]
    rng.shuffle(runs)
    per = B // chunk
    out = []
    for g in range(0, len(runs), per * bucket):
        grp = sorted(runs[g:g + per * bucket], key=lambda r: max(lengths[i] for i in r))
        out += [[i for r in grp[s:s + per] for i in r] for s in range(0, len(grp), per) if len(grp[s:s + per]) == per]
    rng.shuffle(out)
    return out


def recall_at(model, a_ids, b_ids):
    """Quick in-training check: recall@1 of a → b and b → a among the given pairs (index i pairs with i)."""
    ea, eb = embed_ids(model, a_ids), embed_ids(model, b_ids)
    s = ea @ eb.T
    gold = torch.arange(len(a_ids))
    return (s.argmax(1) == gold).float().mean().item(), (s.argmax(0) == gold).float().mean().item()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default="build/embed", help="folder with pairs-train.jsonl / pairs-test.jsonl")
    ap.add_argument("--init", default="models/wasmformer-bert-mini")
    ap.add_argument("--out", default="models/wasmformer-embed-mini")
    ap.add_argument("--steps", type=int, default=3000, help="length of the learning-rate schedule")
    ap.add_argument("--stop-at", type=int, default=None, help="stop after this many steps of the --steps schedule")
    ap.add_argument("--minutes", type=float, default=None, help="stop at this wall-clock budget")
    ap.add_argument("--batch", type=int, default=96, help="pairs per batch (2·batch texts)")
    ap.add_argument("--chunk", type=int, default=8, help="consecutive verses per run in a batch (1: random pairs)")
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--warmup", type=int, default=150)
    ap.add_argument("--schedule", choices=["linear", "cosine"], default="linear")
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--scale", type=float, default=20.0, help="fixed logit scale (1/temperature)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--checkpoint-every", type=float, default=8.0, help="minutes between folder writes")
    ap.add_argument("--monitor", type=int, default=1000, help="held-out pairs for the progress check (0: none)")
    ap.add_argument("--manifest", default=None, help="only write DIR/model-files.json and exit")
    a = ap.parse_args()
    if a.manifest:
        write_manifest(a.manifest)
        return
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)

    tok = Tokenizer(os.path.join(a.init, "vocab.txt"))
    train = read_pairs(os.path.join(a.pairs, "pairs-train.jsonl"))
    test = read_pairs(os.path.join(a.pairs, "pairs-test.jsonl"))
    t0 = time.time()
    K = [tok(p["kjv"]) for p in train]
    W = [tok(p["web"]) for p in train]
    # equal texts get the same id, so that a batch's duplicates (e.g. "And the LORD spake unto Moses, saying,")
    # are not used as each other's negatives
    kid, wid = {}, {}
    Kt = torch.tensor([kid.setdefault(p["kjv"], len(kid)) for p in train])
    Wt = torch.tensor([wid.setdefault(p["web"], len(wid)) for p in train])
    lengths = [max(len(k), len(w)) for k, w in zip(K, W)]
    mon = random.Random(1).sample(range(len(test)), min(a.monitor, len(test))) if a.monitor else []
    mK, mW = [tok(test[i]["kjv"]) for i in mon], [tok(test[i]["web"]) for i in mon]
    print(f"tokenised {len(train)} train pairs in {time.time() - t0:.0f}s; mean tokens kjv "
          f"{sum(map(len, K)) / len(K):.1f} web {sum(map(len, W)) / len(W):.1f}; "
          f"truncated {sum(len(tok.wp.encode(p[s])) > MAX_LEN - 2 for p in train for s in ('kjv', 'web'))}", flush=True)

    model = load_encoder(a.init, seed=a.seed)
    if mon:
        print("monitor recall@1 (kjv→web, web→kjv) at step 0:", recall_at(model, mK, mW), flush=True)
    model.train()
    decay = [p for n, p in model.named_parameters() if p.dim() > 1 and not n.startswith("pooler.")]
    no_decay = [p for n, p in model.named_parameters() if p.dim() <= 1 and not n.startswith("pooler.")]
    for p in model.pooler.parameters():
        p.requires_grad_(False)   # not used by mean pooling
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.999), eps=1e-6)

    def lr_at(step):
        if step < a.warmup:
            return a.lr * (step + 1) / a.warmup
        frac = min(1.0, (step - a.warmup) / max(1, a.steps - a.warmup))
        return a.lr * ((1 - frac) if a.schedule == "linear" else 0.5 * (1 + math.cos(math.pi * frac)))

    stop = min(a.steps, a.stop_at or a.steps)
    settings = {k: v for k, v in vars(a).items() if k not in ("manifest",)}
    history = []
    tok_dir = a.init

    def meta(step, final, elapsed):
        return {"model": "bert sentence embedding (mean pooling, normalized)", "objective":
                "symmetric InfoNCE with in-batch negatives (KJV→WEB and WEB→KJV), duplicates masked",
                **settings, "steps_done": step, "train_minutes": round(elapsed / 60, 1), "final": final,
                "train_pairs": len(train), "test_pairs": len(test), "max_seq_length": MAX_LEN,
                "epochs": round(step * a.batch / len(train), 2), "init_from": a.init, "monitor_pairs": len(mon),
                "history": history}

    start = time.time()
    last_ckpt = start
    epoch_batches, step, ema = [], 0, None
    while step < stop:
        if not epoch_batches:
            epoch_batches = batches(lengths, a.batch, rng, a.chunk)
        idx = epoch_batches.pop()
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        ids, mask = pad_batch([K[i] for i in idx] + [W[i] for i in idx])
        e = model(ids, mask)
        ek, ew = e[:len(idx)], e[len(idx):]
        logits = a.scale * ek @ ew.T
        ii = torch.tensor(idx)
        same = (Kt[ii][:, None] == Kt[ii][None, :]) | (Wt[ii][:, None] == Wt[ii][None, :])
        same.fill_diagonal_(False)
        logits = logits.masked_fill(same, float("-inf"))
        gold = torch.arange(len(idx))
        loss = 0.5 * (F.cross_entropy(logits, gold) + F.cross_entropy(logits.T, gold))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        now = time.time()
        if step % 25 == 0 or step == 1:
            print(f"step {step}/{a.steps} loss {loss.item():.4f} ema {ema:.4f} lr {lr_at(step - 1):.2e} "
                  f"T {ids.shape[1]} {(now - start) / step:.2f}s/step {(now - start) / 60:.1f} min", flush=True)
        out_of_time = a.minutes is not None and now - start >= a.minutes * 60
        if now - last_ckpt >= a.checkpoint_every * 60 or step == stop or out_of_time:
            model.eval()
            r = recall_at(model, mK, mW) if mon else None
            model.train()
            history.append({"step": step, "minutes": round((time.time() - start) / 60, 1), "loss_ema": round(ema, 4),
                            "monitor_recall1": r})
            final = step == stop or out_of_time
            write_folder(model, a.out, tok_dir, meta(step, final, time.time() - start))
            print("checkpoint", json.dumps(history[-1]), flush=True)
            last_ckpt = time.time()
            if out_of_time:
                print(f"stopped at the --minutes budget after {step} steps", flush=True)
                break
    print("done", flush=True)


if __name__ == "__main__":
    main()
