"""Trains the bundled English→Spanish model (models/wasmformer-translate-en-es) on CPU: a small MarianMTModel
(model.py) from scratch on verse pairs KJV→RV1909 and WEB→RV1909 (data.py).

  /usr/bin/python3 tools/train/translate/data.py --out build/translate-train
  mkdir -p build/translate-train/run
  OMP_NUM_THREADS=1 nohup nice -n 19 /usr/bin/python3 tools/train/translate/train.py --data build/translate-train \\
      --run build/translate-train/run --steps 9000 --minutes 300 > build/translate-train/run/stdout.txt 2>&1 &
  # stopped? the same command with --resume goes on from the last checkpoint
  /usr/bin/python3 tools/train/translate/export.py --run build/translate-train/run --data build/translate-train \\
      --out models/wasmformer-translate-en-es

Each epoch's pairs (both English versions of every training verse) are sorted by length (with random tie-breaks),
cut into batches of at most --batch-tokens padded tokens (rows × (longest source + longest target)), and the
batches shuffled (seed + epoch). The decoder reads [pad] + target[:-1] and predicts the target (each ending with
</s>), as MarianMTModel's shift_tokens_right does; the loss is label-smoothed (--smoothing) cross-entropy per target
token with the pad token left out of the softmax. AdamW (β 0.9, 0.98; weight decay on matrices only), linear warm-up
then a cosine decay to --min-lr-ratio × --lr over --steps. A checkpoint (weights, optimiser, step, data position,
random state) is written every --checkpoint-every minutes, at --minutes (a wall-clock budget: the run stops there,
resumable) and at the end; log.jsonl gets the loss every --log-every steps and, at each checkpoint, the validation
loss on a fixed sample of held-out pairs.
"""
import argparse
import json
import math
import os
import random
import sys
import time

if __name__ == "__main__":
    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_v, "1")
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model as M  # noqa: E402


def keep_freed_memory():
    """As tools/train/chat/train.py: glibc keeps freed large blocks (no page faults on every step's new tensors)."""
    import ctypes
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-4, 0)  # M_MMAP_MAX
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
    except OSError:
        pass


def batches(pairs, batch_tokens, rng):
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]) + len(pairs[i][1]), rng.random()))
    out, cur, ls, lt = [], [], 0, 0
    for i in order:
        s, t = len(pairs[i][0]), len(pairs[i][1])
        if cur and (max(ls, s) + max(lt, t)) * (len(cur) + 1) > batch_tokens:
            out.append(cur)
            cur, ls, lt = [], 0, 0
        cur.append(i)
        ls, lt = max(ls, s), max(lt, t)
    if cur:
        out.append(cur)
    rng.shuffle(out)
    return out


def collate(pairs, idx, pad):
    S = max(len(pairs[i][0]) for i in idx)
    T = max(len(pairs[i][1]) for i in idx)
    src = torch.full((len(idx), S), pad, dtype=torch.long)
    mask = torch.zeros(len(idx), S, dtype=torch.long)
    dec = torch.full((len(idx), T), pad, dtype=torch.long)
    labels = torch.full((len(idx), T), -100, dtype=torch.long)
    for r, i in enumerate(idx):
        s, t = pairs[i]
        src[r, :len(s)] = torch.tensor(s)
        mask[r, :len(s)] = 1
        dec[r, 1:len(t)] = torch.tensor(t[:-1])  # shift_tokens_right: [pad] + target[:-1]
        labels[r, :len(t)] = torch.tensor(t)
    return src, mask, dec, labels


def lr_at(step, a):
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    p = min(1.0, (step - a.warmup) / max(1, a.steps - a.warmup))
    return a.lr * (a.min_lr_ratio + (1 - a.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * p)))


@torch.no_grad()
def val_loss(model, pairs, pad, batch_tokens=6000):
    model.eval()
    tot, n = 0.0, 0
    for idx in batches(pairs, batch_tokens, random.Random(0)):
        _, ce, k = model.loss(*collate(pairs, idx, pad), smoothing=0.0)
        tot, n = tot + ce, n + k
    model.train()
    return tot / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="build/translate-train")
    ap.add_argument("--run", default="build/translate-train/run")
    ap.add_argument("--steps", type=int, default=7200)
    ap.add_argument("--minutes", type=float, default=300.0, help="wall-clock budget of this invocation")
    ap.add_argument("--batch-tokens", type=int, default=6000)
    ap.add_argument("--lr", type=float, default=8e-4)
    ap.add_argument("--min-lr-ratio", type=float, default=0.05)
    ap.add_argument("--warmup", type=int, default=800)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--smoothing", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--checkpoint-every", type=float, default=10.0)
    ap.add_argument("--log-every", type=int, default=25)
    ap.add_argument("--val-pairs", type=int, default=600)
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--encoder-layers", type=int, default=4)
    ap.add_argument("--decoder-layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=1024)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--resume", action="store_true")
    a = ap.parse_args()

    keep_freed_memory()
    torch.set_num_threads(a.threads)
    os.makedirs(a.run, exist_ok=True)
    ckpt_path = os.path.join(a.run, "ckpt.pt")
    with open(os.path.join(a.data, "vocab.json"), encoding="utf-8") as f:
        vocab_size = len(json.load(f))
    train = torch.load(os.path.join(a.data, "train.pt"))
    val = torch.load(os.path.join(a.data, "test.pt"))
    val = random.Random(0).sample(val, min(a.val_pairs, len(val)))

    if a.resume:
        ck = torch.load(ckpt_path)
        saved = ck["args"]
        for k in ("steps", "batch_tokens", "lr", "min_lr_ratio", "warmup", "weight_decay", "smoothing", "seed",
                  "d_model", "encoder_layers", "decoder_layers", "heads", "ffn", "dropout", "context", "val_pairs"):
            setattr(a, k, saved[k])  # the run's own settings (--minutes and the logging ones may change)
    cfg = M.make_config(vocab_size, d_model=a.d_model, encoder_layers=a.encoder_layers,
                        decoder_layers=a.decoder_layers, heads=a.heads, ffn_dim=a.ffn,
                        max_position_embeddings=a.context, dropout=a.dropout)
    torch.manual_seed(a.seed)
    model = M.Translator(cfg)
    pad = model.pad
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and n != "final_logits_bias"]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or n == "final_logits_bias"]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.98), eps=1e-9)
    step, epoch, pos, elapsed, tokens = 0, 0, 0, 0.0, 0
    if a.resume:
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step, epoch, pos, elapsed, tokens = ck["step"], ck["epoch"], ck["pos"], ck["elapsed"], ck["tokens"]
        torch.set_rng_state(ck["torch_rng"])
        print(f"resumed at step {step} (epoch {epoch}, batch {pos}, {elapsed / 60:.1f} min)", flush=True)
    else:
        with open(os.path.join(a.run, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
    log = open(os.path.join(a.run, "log.jsonl"), "a")

    def epoch_order(e):
        return batches(train, a.batch_tokens, random.Random(a.seed * 1000 + e))

    order = epoch_order(epoch)

    def save():
        tmp = ckpt_path + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "epoch": epoch, "pos": pos,
                    "elapsed": elapsed, "tokens": tokens, "torch_rng": torch.get_rng_state(), "args": vars(a),
                    "config": cfg}, tmp)
        os.replace(tmp, ckpt_path)

    print(json.dumps({"params": model.n_params(), "pairs": len(train), "batches_per_epoch": len(order),
                      "args": vars(a)}), flush=True)
    start = time.time()
    base_elapsed = elapsed
    last_ckpt = start
    ema = None
    model.train()
    while step < a.steps:
        if pos >= len(order):
            epoch, pos = epoch + 1, 0
            order = epoch_order(epoch)
        src, mask, dec, labels = collate(train, order[pos], pad)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a)
        ls, ce, n = model.loss(src, mask, dec, labels, a.smoothing)
        opt.zero_grad(set_to_none=True)
        (ls / n).backward()
        gnorm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip))
        opt.step()
        step, pos, tokens = step + 1, pos + 1, tokens + n
        loss = ce / n
        ema = loss if ema is None else 0.98 * ema + 0.02 * loss
        elapsed = base_elapsed + time.time() - start
        if step % a.log_every == 0 or step == 1:
            rec = {"step": step, "epoch": epoch, "minutes": round(elapsed / 60, 2), "lr": round(lr_at(step - 1, a), 7),
                   "loss": round(loss, 4), "loss_smoothed": round(float(ls) / n, 4), "loss_ema": round(ema, 4),
                   "grad_norm": round(gnorm, 3), "target_tokens": tokens}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            print(json.dumps(rec), flush=True)
        out_of_time = time.time() - start > a.minutes * 60
        if time.time() - last_ckpt > a.checkpoint_every * 60 or step == a.steps or out_of_time:
            save()
            v = val_loss(model, val, pad)
            rec = {"step": step, "minutes": round(elapsed / 60, 2), "val_loss": round(v, 4), "checkpoint": True}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            print(json.dumps(rec), flush=True)
            last_ckpt = time.time()
        if out_of_time:
            print(f"stopped at the {a.minutes}-minute budget, step {step}; go on with --resume", flush=True)
            break
    if step >= a.steps:
        save()
        print("done", flush=True)


if __name__ == "__main__":
    main()
