"""Trains the bundled default models: a small BERT-style MLM and a small GPT-2-style LM, in Hugging Face layout.

Run with Debian's PyTorch (see tools/train/README.md):
  /usr/bin/python3 tools/train/corpus.py --out build/corpus
  /usr/bin/python3 tools/train/train.py --model bert --corpus build/corpus --out models/wf-bert-mini --minutes 100
  /usr/bin/python3 tools/train/train.py --model gpt2 --corpus build/corpus --out models/wf-gpt2-mini --minutes 100

--steps N gives a fixed, machine-independent schedule (the seed fixes data order, masking and initialisation);
--minutes M stops at a wall-clock budget, and the model card records the steps reached so that `--steps` can
reproduce that run. Checkpoints are exported every --export-every minutes, so an interrupted run still leaves a
usable model.
"""
import argparse
import contextlib
import ctypes
import hashlib
import json
import math
import os
import random
import shutil
import sys
import time


def _pin_blas_threads():
    """BLAS pools start with one thread per core unless told otherwise, beyond torch.set_num_threads: pin them to
    --threads (before torch loads), so that a one-thread run uses one core."""
    argv = sys.argv[1:]
    n = next((argv[i + 1] for i, x in enumerate(argv[:-1]) if x == "--threads"), None) or \
        next((x.split("=", 1)[1] for x in argv if x.startswith("--threads=")), "1")
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, n)


if __name__ == "__main__":
    _pin_blas_threads()
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import models  # noqa: E402
import safetensors_io  # noqa: E402
import tokenizers as toks  # noqa: E402
from corpus import DOC_SEP  # noqa: E402

BERT_CONFIG = dict(architectures=["BertForMaskedLM"], model_type="bert", vocab_size=30522, hidden_size=192,
                   num_hidden_layers=4, num_attention_heads=4, intermediate_size=768, hidden_act="gelu",
                   max_position_embeddings=128, type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0,
                   hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, initializer_range=0.02)
GPT2_CONFIG = dict(architectures=["GPT2LMHeadModel"], model_type="gpt2", vocab_size=8192, n_positions=256, n_embd=256,
                   n_layer=4, n_head=4, n_inner=None, activation_function="gelu_new", layer_norm_epsilon=1e-5,
                   resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1, initializer_range=0.02)


ABSENT_BIAS = -1e4  # output bias of the vocabulary ids absent from the training text (exact in F16)


def keep_freed_memory():
    """Stop glibc from handing large freed blocks back to the kernel (mmap for > 128 KiB, trim of the heap top).

    Every training step allocates the same large tensors again (logits, dense embedding gradients); returned to the
    kernel, each comes back as fresh pages whose first touch faults. On the machines this was run on that costs
    ~10 ns per float: a 300 × 30,522 multiply took 149 ms instead of 1.6 ms, and a whole step ran 1.7× slower."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
        libc.mallopt(M_MMAP_MAX, 0)
        libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
    except OSError:
        pass  # not glibc: nothing to tune


def read_docs(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split(f"\n{DOC_SEP}\n")


def encode_cached(path, encode, tok_files, cache_dir):
    """The token stream of a corpus file (documents joined by encode), cached under cache_dir by content hash."""
    h = hashlib.sha1()
    for f in [path] + tok_files:
        with open(f, "rb") as fh:
            h.update(fh.read())
    cache = os.path.join(cache_dir, f"{os.path.basename(path)}.{h.hexdigest()[:16]}.ids.pt")
    if os.path.exists(cache):
        return torch.load(cache).tolist()
    stream = encode(read_docs(path))
    torch.save(torch.tensor(stream, dtype=torch.int32), cache)
    return stream


def shared_tokenizers():
    """The real bert-base-uncased vocabulary: ../shared/tokenizers or the project's test data copy."""
    for p in (os.path.join(HERE, "..", "..", "tests", "data", "tokenizers", "bert", "vocab.txt"),
              os.path.join(HERE, "..", "..", "..", "shared", "tokenizers", "bert", "vocab.txt")):
        if os.path.exists(p):
            return p
    raise SystemExit("bert vocab.txt not found (tests/data/tokenizers/bert or ../shared/tokenizers/bert)")


# ---------------------------------------------------------------------------------------------------- batches
def mask_windows(ids, ws, g, vocab_size, special):
    """BERT's masking of windows ids (B, T), each [CLS] … [SEP], with the torch generator g (on ids' device): 15 %
    chosen, 80 % [MASK] / 10 % random / 10 % unchanged. With ws (a (B, T) bool tensor, False for '##' continuation
    pieces): whole-word masking, as in Google's BERT release: a word is chosen with probability 0.15 and then all of
    its pieces are masked (each piece then gets the 80/10/10 rule); a window that starts inside a word treats its
    first pieces as one word."""
    cls, sep, mask, n_special = special
    B, T = ids.shape
    dev = ids.device
    prob = torch.rand(B, T, generator=g, device=dev)
    if ws is not None:  # each piece takes the draw of the first piece of its word
        ws[:, 1] = True
        ar = torch.arange(T, device=dev).expand(B, T)
        first = torch.where(ws, ar, torch.zeros_like(ar)).cummax(1).values
        prob = prob.gather(1, first)  # first: the position of the first piece of each position's word
    chosen = prob < 0.15
    chosen[:, 0] = chosen[:, -1] = False
    labels = ids[chosen].clone()
    action = torch.rand(B, T, generator=g, device=dev)
    inputs = ids.clone()
    inputs[chosen & (action < 0.8)] = mask
    rand_pos = chosen & (action >= 0.8) & (action < 0.9)
    inputs[rand_pos] = torch.randint(n_special, vocab_size, (int(rand_pos.sum()),), generator=g, device=dev)
    return inputs, chosen, labels


def bert_batch(stream, rng, B, T, vocab_size, special, word_start=None):
    """Windows of T-2 tokens from the stream (a list), wrapped in [CLS] … [SEP], masked by mask_windows; word_start:
    a bool tensor over the stream for whole-word masking."""
    cls, sep = special[:2]
    ids = torch.empty(B, T, dtype=torch.long)
    starts = []
    for b in range(B):
        s = rng.randrange(0, len(stream) - (T - 2))
        ids[b] = torch.tensor([cls] + stream[s:s + T - 2] + [sep])
        starts.append(s)
    g = torch.Generator().manual_seed(rng.randrange(1 << 62))
    ws = None
    if word_start is not None:
        ws = torch.ones(B, T, dtype=torch.bool)
        for b, s in enumerate(starts):
            ws[b, 1:T - 1] = word_start[s:s + T - 2]
    return mask_windows(ids, ws, g, vocab_size, special)


def bert_batch_tensor(stream, g, B, T, vocab_size, special, word_start=None):
    """bert_batch for a stream held as a tensor (on the GPU, --device cuda): the windows drawn all at once from the
    torch generator g instead of row by row from a Python rng, then the same masking."""
    cls, sep = special[:2]
    dev = stream.device
    starts = torch.randint(0, len(stream) - (T - 2), (B,), generator=g, device=dev)
    pos = starts[:, None] + torch.arange(T - 2, device=dev)
    ids = torch.cat([torch.full((B, 1), cls, device=dev), stream[pos], torch.full((B, 1), sep, device=dev)], 1)
    ws = None
    if word_start is not None:
        ws = torch.ones(B, T, dtype=torch.bool, device=dev)
        ws[:, 1:T - 1] = word_start[pos]
    return mask_windows(ids, ws, g, vocab_size, special)


def gpt_batch(stream, rng, B, T):
    x = torch.empty(B, T + 1, dtype=torch.long)
    for b in range(B):
        s = rng.randrange(0, len(stream) - T - 1)
        x[b] = torch.tensor(stream[s:s + T + 1])
    return x[:, :-1], x[:, 1:]


# ------------------------------------------------------------------------------------------------------- eval
@torch.no_grad()
def eval_bert(model, stream, special, T=128, n_windows=200, word_start=None):
    """Top-1/top-5 of the masked tokens in n_windows windows of T tokens (the same windows and masks every time);
    with word_start, whole words are masked (bert_batch)."""
    model.eval()
    rng = random.Random(1234)  # the same masked positions on every evaluation
    top1 = top5 = n = 0
    dev = next(model.parameters()).device
    for _ in range(n_windows // 20):
        inputs, chosen, labels = bert_batch(stream, rng, 20, T, model.config["vocab_size"], special, word_start)
        inputs, chosen, labels = inputs.to(dev), chosen.to(dev), labels.to(dev)
        h, _, _ = model.encode(inputs)
        logits = model.mlm_logits(h[chosen])
        best = logits.topk(5, -1).indices
        top1 += (best[:, 0] == labels).sum().item()
        top5 += (best == labels[:, None]).any(-1).sum().item()
        n += labels.numel()
    model.train()
    return {"mlm_top1": top1 / n, "mlm_top5": top5 / n, "masked_tokens": n}


@torch.no_grad()
def eval_gpt(model, stream, T=256):
    model.eval()
    dev = next(model.parameters()).device
    nll, n = 0.0, 0
    for s in range(0, len(stream) - T - 1, T):
        x = torch.tensor(stream[s:s + T + 1])[None].to(dev)
        logits, _, _, _ = model(x[:, :-1])
        nll += F.cross_entropy(logits[0], x[0, 1:], reduction="sum").item()
        n += T
    model.train()
    return {"perplexity": math.exp(nll / n), "eval_tokens": n}


# ----------------------------------------------------------------------------------------------------- export
def export(model, kind, out, tok_dir, meta):
    os.makedirs(out, exist_ok=True)
    cfg = {k: v for k, v in model.config.items()}
    if kind == "gpt2":
        cfg.update(bos_token_id=cfg["vocab_size"] - 1, eos_token_id=cfg["vocab_size"] - 1)
    cfg["torch_dtype"] = "float16"
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    state = models.export_state(model)
    safetensors_io.save(os.path.join(out, "model.safetensors"), state, metadata={"format": "pt"}, dtype=torch.float16)
    if kind == "bert":
        shutil.copy(os.path.join(tok_dir, "vocab.txt"), os.path.join(out, "vocab.txt"))
        tc = {"do_lower_case": True, "model_max_length": cfg["max_position_embeddings"], "tokenizer_class": "BertTokenizer"}
    else:
        for f in ("vocab.json", "merges.txt"):
            if os.path.abspath(os.path.join(tok_dir, f)) != os.path.abspath(os.path.join(out, f)):
                shutil.copy(os.path.join(tok_dir, f), os.path.join(out, f))
        tc = {"model_max_length": cfg["n_positions"], "tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>",
              "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f, indent=2)
    with open(os.path.join(out, "training.json"), "w") as f:
        json.dump(meta, f, indent=2)


def stack_layers(state, kind, n_layers):
    """A checkpoint with fewer layers than the model, grown by stacking (Gong et al. 2019, "Efficient training of
    BERT by progressively stacking"): layer i of the new model starts as layer i mod L of the checkpoint's L layers."""
    prefix = "bert.encoder.layer." if kind == "bert" else "transformer.h."
    have = {int(k[len(prefix):].split(".")[0]) for k in state if k.startswith(prefix)}
    if len(have) >= n_layers:
        return state
    out = {k: v for k, v in state.items() if not k.startswith(prefix)}
    for i in range(n_layers):
        src = f"{prefix}{i % len(have)}."
        out.update({f"{prefix}{i}." + k[len(src):]: v.clone() for k, v in state.items() if k.startswith(src)})
    print(f"stacked {len(have)} layers to {n_layers}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["bert", "gpt2"], required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=100)
    ap.add_argument("--steps", type=int, default=0, help="fixed number of steps (overrides --minutes)")
    ap.add_argument("--stop-at", type=int, default=0,
                    help="stop and export after this many steps, the schedule still laid over --steps (or --minutes): "
                         "reproduces a run that was taken from a checkpoint part-way through its schedule")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--export-every", type=float, default=15.0, help="minutes between checkpoint exports")
    ap.add_argument("--init", default=None, help="start from the weights of this model folder (continue training)")
    ap.add_argument("--dropout", type=float, default=0.0,
                    help="dropout while training (0: the small models are far from overfitting in a CPU budget)")
    ap.add_argument("--warmup", type=int, default=300, help="linear warm-up steps")
    ap.add_argument("--seq-len", type=int, default=0,
                    help="training window (default: 128 for both). BERT learns to use its neighbours much sooner in "
                         "short windows, where a near-uniform attention gives the neighbour 1/T of the mix; then "
                         "continue with --init at the full length")
    ap.add_argument("--unigram-bias", action="store_true",
                    help="BERT: start the output bias at the log unigram frequencies of the training stream, so the "
                         "first steps need not push them there (large early updates stall a post-LN encoder)")
    ap.add_argument("--sinusoidal-init", action="store_true",
                    help="initialise the learned position embeddings with sinusoids (faster start; still learned)")
    ap.add_argument("--whole-word", action="store_true",
                    help="BERT: whole-word masking (all WordPiece pieces of a chosen word are masked together)")
    ap.add_argument("--layers", type=int, default=0, help="number of layers (default: BERT_CONFIG / GPT2_CONFIG)")
    ap.add_argument("--hidden", type=int, default=0, help="hidden size")
    ap.add_argument("--heads", type=int, default=0, help="attention heads")
    ap.add_argument("--ff", type=int, default=0, help="feed-forward size (default 4 × hidden)")
    ap.add_argument("--tokenizer", default=None,
                    help="GPT-2: use the vocab.json + merges.txt of this folder instead of training a BPE on the corpus")
    ap.add_argument("--decay-start", type=int, default=0,
                    help="warm-up, then the peak rate held constant until this step, then the cosine to 10 %% over the "
                         "remaining steps to --steps (warmup-stable-decay): a long run at constant rate can be "
                         "branched off from any saved --state into a short decay")
    ap.add_argument("--state", default=None,
                    help="file for the full training state (weights, optimizer, data order), written at every "
                         "checkpoint; if it exists, the run resumes from it (same flags)")
    ap.add_argument("--device", default="cpu",
                    help="cuda: train on the GPU (bf16 autocast, batches drawn on the device by bert_batch_tensor; "
                         "the data order then differs from a CPU run with the same seed)")
    ap.add_argument("--keep-best", action="store_true",
                    help="export a checkpoint (and the end) only when its held-out top-1 (BERT) or perplexity (GPT-2) "
                         "beats every earlier one: the folder holds the best model seen, not the last")
    a = ap.parse_args()
    keep_freed_memory()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    train_docs = read_docs(os.path.join(a.corpus, "train.txt"))
    t0 = time.time()
    work = os.path.join(a.corpus, a.model)
    os.makedirs(work, exist_ok=True)
    if a.model == "bert":
        tok_dir = os.path.dirname(shared_tokenizers())
        tok = toks.WordPiece(shared_tokenizers())
        v = tok.vocab
        special = (v["[CLS]"], v["[SEP]"], v["[MASK]"], 1000)  # ids below 1000 are [PAD], [unused*], [UNK], …
        encode_docs = lambda docs: [i for d in docs for i in tok.encode(d) + [v["[SEP]"]]]
        config, T = dict(BERT_CONFIG, hidden_dropout_prob=a.dropout, attention_probs_dropout_prob=a.dropout), \
            a.seq_len or BERT_CONFIG["max_position_embeddings"]
        for k, n in (("num_hidden_layers", a.layers), ("hidden_size", a.hidden), ("num_attention_heads", a.heads)):
            config[k] = n or config[k]
        config["intermediate_size"] = a.ff or 4 * config["hidden_size"]
        model = models.BertForMaskedLM(config)
    else:
        tok_dir = a.tokenizer or work
        if not a.tokenizer and not os.path.exists(os.path.join(work, "merges.txt")):
            n = toks.train_byte_bpe(train_docs, GPT2_CONFIG["vocab_size"], os.path.join(work, "vocab.json"), os.path.join(work, "merges.txt"))
            print(f"trained byte-level BPE: {n} tokens in {time.time() - t0:.0f}s", flush=True)
        tok = toks.ByteBPE(os.path.join(tok_dir, "vocab.json"), os.path.join(tok_dir, "merges.txt"))
        eot = tok.encoder["<|endoftext|>"]
        encode_docs = lambda docs: [i for d in docs for i in tok.encode(d) + [eot]]
        config, T = dict(GPT2_CONFIG, resid_pdrop=a.dropout, embd_pdrop=a.dropout, attn_pdrop=a.dropout), a.seq_len or 128
        for k, n in (("n_layer", a.layers), ("n_embd", a.hidden), ("n_head", a.heads)):
            config[k] = n or config[k]
        config["n_inner"] = a.ff or None
        model = models.GPT2LMHeadModel(config)
    tok_files = [shared_tokenizers()] if a.model == "bert" else [os.path.join(tok_dir, f) for f in ("vocab.json", "merges.txt")]
    stream_of = lambda name: encode_cached(os.path.join(a.corpus, name), encode_docs, tok_files, work)
    train_stream, test_stream = stream_of("train.txt"), stream_of("test.txt")
    # The original corpus's test split (KJV + Austen), when the corpus also has other sources: metrics that compare
    # with models trained on the original corpus.
    old_test = os.path.join(a.corpus, "test-kjv-austen.txt")
    old_stream = stream_of("test-kjv-austen.txt") if os.path.exists(old_test) else None
    word_start = lambda st: torch.tensor([not tok.inv[i].startswith("##") for i in st]) if a.model == "bert" else None
    train_ws = word_start(train_stream) if a.whole_word else None
    print(f"tokens: {len(train_stream)} train, {len(test_stream)} test ({time.time() - t0:.0f}s)", flush=True)
    models.init_weights(model, config["initializer_range"])
    if a.model == "bert":
        # The training softmax runs over the 12.9k vocabulary ids that occur in the training stream, not all 30,522:
        # the others are never a label, so their only training signal would be "less likely" (2.4× the head's cost
        # for nothing). Their output bias is ABSENT_BIAS, so that inference over the whole vocabulary (the engine,
        # eval_bert) gives exactly the distribution trained. It must be far below any logit, not merely below the
        # seen tokens' biases: a softmax over the seen ids is blind to a shift common to all of their logits, and the
        # trained model does shift them (to below −17 for some inputs), which a bias of −20 did not survive.
        # The vocabulary and its ids stay bert-base-uncased's.
        counts = torch.bincount(torch.tensor(train_stream), minlength=config["vocab_size"])
        out_ids = counts.nonzero()[:, 0]
        out_index = torch.full((config["vocab_size"],), -1, dtype=torch.long)
        out_index[out_ids] = torch.arange(len(out_ids))
        print(f"training softmax over {len(out_ids)} of {config['vocab_size']} ids", flush=True)
    if a.sinusoidal_init:
        models.init_positions_sinusoidal(model)
    if a.unigram_bias and a.model == "bert" and not a.init:
        with torch.no_grad():
            model.cls.predictions.bias.copy_(((counts + 0.1) / counts.sum()).log())
    if a.init:  # continue from a checkpoint (weights only; the optimizer starts afresh)
        state = {k: v.float() for k, v in safetensors_io.load(os.path.join(a.init, "model.safetensors")).items()}
        state = stack_layers(state, a.model, config["num_hidden_layers" if a.model == "bert" else "n_layer"])
        missing, unexpected = model.load_state_dict(state, strict=False)
        assert not unexpected and all("decoder" in m or "lm_head" in m for m in missing), (missing, unexpected)
        print(f"initialised from {a.init}", flush=True)
    continued_from = None  # the training.json of the run whose weights this one starts from
    if a.init and os.path.exists(os.path.join(a.init, "training.json")):
        with open(os.path.join(a.init, "training.json")) as f:
            continued_from = json.load(f)
    if a.model == "bert":
        with torch.no_grad():  # ids that are never a training label: never predicted (see out_ids)
            bias = model.cls.predictions.bias
            new = (out_index >= 0) & (bias < ABSENT_BIAS / 2)  # absent from the text the --init model was trained on
            if new.any():  # from −10⁴ they would need tens of thousands of steps: start them at their log frequency
                bias[new] = ((counts[new] + 0.1) / counts.sum()).log()
                print(f"{int(new.sum())} ids new to the --init model: output bias set to their log frequency", flush=True)
            bias[out_index < 0] = ABSENT_BIAS
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
        model.to(dev)
        g_dev = torch.Generator(device=dev).manual_seed(a.seed)
        train_t = torch.tensor(train_stream, dtype=torch.long, device=dev)
        train_ws_t = train_ws.to(dev) if train_ws is not None else None
        if a.model == "bert":
            out_ids, out_index = out_ids.to(dev), out_index.to(dev)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.98), eps=1e-6, **({"fused": True} if cuda else {}))
    budget_s = a.minutes * 60
    start = last_export = time.time()
    step, seen, warm = 0, 0, a.warmup
    cpu0 = time.process_time()
    resumed = None
    if a.state and os.path.exists(a.state):  # resume exactly where the last checkpoint left off
        st = torch.load(a.state)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        step, seen = st["step"], st["seen"]
        rng.setstate(st["rng"])
        torch.set_rng_state(st["torch_rng"])
        cpu0 -= st["cpu_s"]
        start -= st["wall_s"]
        resumed = step
        print(f"resumed from {a.state} at step {step}", flush=True)

    def progress():
        return step / a.steps if a.steps else (time.time() - start) / budget_s

    def meta(final):
        m = {"model": a.model, "steps": step, "schedule_steps": a.steps if a.stop_at else None, "decay_start": a.decay_start or None, "tokens_seen": seen, "batch": a.batch, "seq_len": T, "lr": a.lr,
             "seed": a.seed, "threads": a.threads, "dropout": a.dropout, "warmup": a.warmup,
             "sinusoidal_init": a.sinusoidal_init, "unigram_bias": a.unigram_bias, "init": a.init, "train_minutes": round((time.time() - start) / 60, 1),
             "train_tokens": len(train_stream), "test_tokens": len(test_stream), "final": final,
             "cpu_minutes": round((time.process_time() - cpu0) / 60, 1),
             "corpus": "kjv+austen+web" if old_stream is not None else "kjv+austen"}
        if cuda:
            m.update(device=torch.cuda.get_device_name(dev), bf16_autocast=True)
        if a.keep_best:
            m.update(keep_best=True, export_every=a.export_every)
        m.update(config={k: config[k] for k in (("num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size")
                                                if a.model == "bert" else ("n_layer", "n_embd", "n_head", "n_inner"))})
        if a.model == "bert":
            m["softmax_ids"] = len(out_ids)
            m["whole_word"] = a.whole_word
        elif a.tokenizer:
            m["tokenizer"] = a.tokenizer
        if resumed is not None:
            m["resumed_at"] = resumed
        m.update(eval_bert(model, test_stream, special) if a.model == "bert" else eval_gpt(model, test_stream))
        if a.model == "bert":  # whole-word masking of the same windows (more of the test masks a whole word)
            m["whole_word_eval"] = eval_bert(model, test_stream, special, word_start=word_start(test_stream))
        if a.model == "bert" and T != 128:  # also on windows as long as the training ones
            m["eval_at_seq_len"] = eval_bert(model, test_stream, special, T=T)
        if old_stream is not None:
            m["old_split"] = dict(eval_bert(model, old_stream, special) if a.model == "bert" else eval_gpt(model, old_stream),
                                  test_tokens=len(old_stream))
        if continued_from:
            m["continued_from"] = continued_from
        return m

    best = None

    def improved(m):
        """Always, without --keep-best; with it, whether m's held-out score beats every earlier checkpoint's."""
        nonlocal best
        score = m["mlm_top1"] if a.model == "bert" else -m["perplexity"]
        if a.keep_best and best is not None and score <= best:
            return False
        best = score if best is None else max(best, score)
        return True

    model.train()
    while progress() < 1.0 and not (a.stop_at and step >= a.stop_at):
        p = progress()
        if a.decay_start:  # constant until --decay-start, then the cosine over the steps that are left
            p = max(0.0, (step - a.decay_start) / max(1, a.steps - a.decay_start))
        lr = a.lr * min(1.0, (step + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(p, 1.0))))
        for g in opt.param_groups:
            g["lr"] = lr
        with torch.autocast("cuda", dtype=torch.bfloat16) if cuda else contextlib.nullcontext():
            if a.model == "bert":
                if cuda:
                    inputs, chosen, labels = bert_batch_tensor(train_t, g_dev, a.batch, T, config["vocab_size"], special,
                                                               train_ws_t)
                else:
                    inputs, chosen, labels = bert_batch(train_stream, rng, a.batch, T, config["vocab_size"], special,
                                                        train_ws)
                h, _, _ = model.encode(inputs)
                logits = model.mlm_logits(h[chosen], out_ids).float()  # the head at masked positions, corpus tokens only
                target = out_index[labels]  # cross-entropy written out: F.cross_entropy's backward was 1.7× slower here
                loss = (torch.logsumexp(logits, -1) - logits.gather(1, target[:, None])[:, 0]).mean()
            else:
                x, y = gpt_batch(train_stream, rng, a.batch, T)
                logits, _, _, _ = model(x.to(dev))
                loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.to(dev).reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        seen += a.batch * T
        if step % 50 == 0:
            el = time.time() - start
            cpu = time.process_time() - cpu0
            print(f"step {step} loss {loss.item():.3f} lr {lr:.2e} {seen / cpu:.0f} tok/cpu-s {cpu / 60:.1f} cpu-min "
                  f"{el / 60:.1f} min", flush=True)
        if time.time() - last_export > a.export_every * 60:
            m = meta(False)
            print("checkpoint", json.dumps(m), flush=True)
            if improved(m):
                export(model, a.model, a.out, tok_dir, m)
            if a.state:
                tmp = a.state + ".tmp"
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step, "seen": seen,
                            "rng": rng.getstate(), "torch_rng": torch.get_rng_state(),
                            "cpu_s": time.process_time() - cpu0, "wall_s": time.time() - start}, tmp)
                os.replace(tmp, a.state)
            last_export = time.time()
    m = meta(True)
    print("final", json.dumps(m), flush=True)
    if improved(m):
        export(model, a.model, a.out, tok_dir, m)
    else:  # --keep-best: the folder keeps an earlier checkpoint; say so in its training.json
        with open(os.path.join(a.out, "training.json")) as f:
            kept = json.load(f)
        kept.update(final=True, kept_best_of={"steps": m["steps"], "mlm_top1": m.get("mlm_top1"),
                                              "perplexity": m.get("perplexity")})
        with open(os.path.join(a.out, "training.json"), "w") as f:
            json.dump(kept, f, indent=2)


if __name__ == "__main__":
    main()
