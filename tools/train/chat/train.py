"""Trains the bundled chat model (models/wasmformer-chat-mini) on CPU: a small LlamaForCausalLM (model.py) from
scratch on ChatML conversations that rewrite King James verses into the World English Bible's (data.py), with the
loss on the assistant's answers only.

  /usr/bin/python3 tools/train/chat/data.py --out build/chat-train
  OMP_NUM_THREADS=1 nice -n 19 /usr/bin/python3 tools/train/chat/train.py --data build/chat-train \\
      --run build/chat-train/run --steps 3000 --minutes 150
  # stopped? the same command with --resume goes on from the last checkpoint
  /usr/bin/python3 tools/train/chat/export.py --run build/chat-train/run --out models/wasmformer-chat-mini

Each epoch's conversations are drawn again from the training verses (data.build_conversations, seed + epoch: which
verses share a conversation, which begin with <s>), sorted into batches of about --batch-tokens tokens (padded
length × rows) of similar lengths, and the batches shuffled. AdamW, linear warm-up then a cosine decay to
--min-lr-ratio × --lr over --steps; the loss is the mean cross-entropy over the batch's answer tokens. A checkpoint
(weights, optimiser, step, data position, random states) is written every --checkpoint-every minutes, at
--minutes (a wall-clock budget: the run stops there, resumable) and at the end; log.jsonl gets the loss every
--log-every steps and the validation loss (single-turn conversations of the held-out books) at each checkpoint.
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
import data as chat_data  # noqa: E402
import model as M  # noqa: E402


def keep_freed_memory():
    """As tools/train/train.py's: glibc keeps freed large blocks, so that the tensors every step allocates again do
    not come back as fresh pages that fault on first touch (importing train.py would shadow this file's name)."""
    import ctypes
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-4, 0)  # M_MMAP_MAX
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
    except OSError:
        pass


def batches(convs, batch_tokens, rng):
    """Conversations sorted by length, cut into batches of at most batch_tokens padded tokens, shuffled."""
    order = sorted(range(len(convs)), key=lambda i: (len(convs[i][0]), rng.random()))
    out, cur, longest = [], [], 0
    for i in order:
        n = len(convs[i][0])
        if cur and max(longest, n) * (len(cur) + 1) > batch_tokens:
            out.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, n)
    if cur:
        out.append(cur)
    rng.shuffle(out)
    return out


def collate(convs, idx, pad=0):
    T = max(len(convs[i][0]) for i in idx)
    ids = torch.full((len(idx), T), pad, dtype=torch.long)
    labels = torch.full((len(idx), T), -100, dtype=torch.long)
    for r, i in enumerate(idx):
        a, b = convs[i]
        ids[r, :len(a)] = torch.tensor(a)
        labels[r, :len(b)] = torch.tensor(b)
    return ids, labels


def lr_at(step, a):
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    p = min(1.0, (step - a.warmup) / max(1, a.steps - a.warmup))
    return a.lr * (a.min_lr_ratio + (1 - a.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * p)))


@torch.no_grad()
def val_loss(model, convs, batch_tokens=8192):
    model.eval()
    tot, n = 0.0, 0
    for idx in batches(convs, batch_tokens, random.Random(0)):
        l, k = model.loss(*collate(convs, idx))
        tot, n = tot + float(l), n + k
    model.train()
    return tot / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="build/chat-train")
    ap.add_argument("--run", default="build/chat-train/run")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--minutes", type=float, default=150.0, help="wall-clock budget of this invocation")
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--min-lr-ratio", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--checkpoint-every", type=float, default=10.0)
    ap.add_argument("--log-every", type=int, default=25)
    ap.add_argument("--val-conversations", type=int, default=400)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--intermediate", type=int, default=704)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--resume", action="store_true")
    a = ap.parse_args()

    keep_freed_memory()
    torch.set_num_threads(a.threads)
    os.makedirs(a.run, exist_ok=True)
    ckpt_path = os.path.join(a.run, "ckpt.pt")
    enc = chat_data.Encoder(os.path.join(a.data, "tokenizer.model"))
    train_rows = chat_data.read_pairs(a.data, "train")
    val = torch.load(os.path.join(a.data, "test.pt"))
    val = random.Random(0).sample(val, min(a.val_conversations, len(val)))

    if a.resume:
        ck = torch.load(ckpt_path)
        saved = ck["args"]
        for k in ("steps", "batch_tokens", "lr", "min_lr_ratio", "warmup", "weight_decay", "seed", "hidden", "layers",
                  "heads", "kv_heads", "intermediate", "context"):
            setattr(a, k, saved[k])  # the run's own settings (--minutes and the logging ones may change)
    cfg = M.make_config(enc.sp.get_piece_size(), enc.bos, enc.im_end, hidden_size=a.hidden,
                        num_hidden_layers=a.layers, num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
                        intermediate_size=a.intermediate, max_position_embeddings=a.context)
    torch.manual_seed(a.seed)
    model = M.LlamaForCausalLM(cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
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

    def epoch_data(e):
        convs = chat_data.build_conversations(enc, train_rows, a.seed + e)
        return convs, batches(convs, a.batch_tokens, random.Random(a.seed * 1000 + e))

    convs, order = epoch_data(epoch)

    def save():
        tmp = ckpt_path + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "epoch": epoch, "pos": pos,
                    "elapsed": elapsed, "tokens": tokens, "torch_rng": torch.get_rng_state(), "args": vars(a),
                    "config": cfg}, tmp)
        os.replace(tmp, ckpt_path)

    print(json.dumps({"params": model.n_params(), "conversations": len(convs), "batches_per_epoch": len(order),
                      "args": vars(a)}), flush=True)
    start = time.time()
    base_elapsed = elapsed
    last_ckpt = start
    ema = None
    model.train()
    while step < a.steps:
        if pos >= len(order):
            epoch, pos = epoch + 1, 0
            convs, order = epoch_data(epoch)
        ids, labels = collate(convs, order[pos])
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a)
        loss_sum, n = model.loss(ids, labels)
        loss = loss_sum / n
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip))
        opt.step()
        step, pos, tokens = step + 1, pos + 1, tokens + int((labels != -100).sum())
        ema = float(loss) if ema is None else 0.98 * ema + 0.02 * float(loss)
        elapsed = base_elapsed + time.time() - start
        if step % a.log_every == 0 or step == 1:
            rec = {"step": step, "epoch": epoch, "minutes": round(elapsed / 60, 2), "lr": round(lr_at(step - 1, a), 7),
                   "loss": round(float(loss), 4), "loss_ema": round(ema, 4), "grad_norm": round(gnorm, 3),
                   "answer_tokens": tokens}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            print(json.dumps(rec), flush=True)
        out_of_time = time.time() - start > a.minutes * 60
        if time.time() - last_ckpt > a.checkpoint_every * 60 or step == a.steps or out_of_time:
            save()
            v = val_loss(model, val)
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
