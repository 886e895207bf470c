"""Writes tiny random-weight checkpoints in the exact Hugging Face layout, with golden outputs from the reference.

  /usr/bin/python3 tools/reference/make_fixtures.py --out tests/data/fixtures           # the committed fixtures
  /usr/bin/python3 tools/reference/make_fixtures.py --out build/bench-models --size base  # BERT-base / GPT-2-small shapes

Each model folder gets config.json, model.safetensors (F32; tied output matrices left out, as save_pretrained does),
the real tokenizer files, and golden.safetensors with:
  input_ids (I32), hidden.{i} (F32, embeddings then every layer), and
  BERT: mask_positions (I32), mask_logits (F32, logits at those rows), attention.{l} (F32, (H, T, T))
  GPT-2: logits (F32, every position), greedy_ids (I32: the prompt then greedily generated tokens, full forward
         per step, no cache)
"""
import argparse
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402
import safetensors_io  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TOK = os.path.join(ROOT, "tests", "data", "tokenizers")

SIZES = {
    "tiny": {
        "bert": dict(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                     max_position_embeddings=64, type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu"),
        "gpt2": dict(vocab_size=50257, n_positions=64, n_embd=32, n_layer=3, n_head=4, n_inner=None,
                     activation_function="gelu_new", layer_norm_epsilon=1e-5),
    },
    "base": {
        "bert": dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                     intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2, layer_norm_eps=1e-12,
                     hidden_act="gelu"),
        "gpt2": dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, n_inner=None,
                     activation_function="gelu_new", layer_norm_epsilon=1e-5),
    },
}


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm.weight" in name or (".ln_" in name and name.endswith("weight")) or name.endswith("ln_f.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.08 * torch.randn(p.shape, generator=g))


def write_bert(out, cfg, seed):
    c = dict(architectures=["BertForMaskedLM"], model_type="bert", pad_token_id=0, **cfg)
    model = models.BertForMaskedLM(c).eval()
    randomize(model, seed)
    os.makedirs(out, exist_ok=True)
    json.dump(c, open(os.path.join(out, "config.json"), "w"), indent=2)
    safetensors_io.save(os.path.join(out, "model.safetensors"), models.export_state(model), metadata={"format": "pt"})
    shutil.copy(os.path.join(TOK, "bert", "vocab.txt"), out)
    json.dump({"do_lower_case": True}, open(os.path.join(out, "tokenizer_config.json"), "w"))
    # [CLS] the capital of france is [MASK] . it has [MASK] people [SEP]
    ids = torch.tensor([[101, 1996, 3007, 1997, 2605, 2003, 103, 1012, 2009, 2038, 103, 2111, 102]])
    with torch.no_grad():
        h, hidden, probs = model.encode(ids)
        masks = (ids[0] == 103).nonzero()[:, 0]
        logits = model.mlm_logits(h[0, masks])
    g = {"input_ids": ids[0].to(torch.int32), "mask_positions": masks.to(torch.int32), "mask_logits": logits}
    g.update({f"hidden.{i}": t[0] for i, t in enumerate(hidden)})
    g.update({f"attention.{l}": p[0] for l, p in enumerate(probs)})
    safetensors_io.save(os.path.join(out, "golden.safetensors"), g)


def write_gpt2(out, cfg, seed, n_new=12):
    c = dict(architectures=["GPT2LMHeadModel"], model_type="gpt2", bos_token_id=50256, eos_token_id=50256, **cfg)
    model = models.GPT2LMHeadModel(c).eval()
    randomize(model, seed)
    os.makedirs(out, exist_ok=True)
    json.dump(c, open(os.path.join(out, "config.json"), "w"), indent=2)
    state = models.export_state(model)
    safetensors_io.save(os.path.join(out, "model.safetensors"), state, metadata={"format": "pt"})
    shutil.copy(os.path.join(TOK, "gpt2", "encoder.json"), os.path.join(out, "vocab.json"))
    shutil.copy(os.path.join(TOK, "gpt2", "vocab.bpe"), os.path.join(out, "merges.txt"))
    json.dump({"model_max_length": cfg["n_positions"]}, open(os.path.join(out, "tokenizer_config.json"), "w"))
    ids = torch.tensor([[464, 3290, 373, 1043, 287, 257, 2214]])  # "The dog was found in a field"
    with torch.no_grad():
        logits, _, hidden, _ = model(ids)
        seq = ids[0].tolist()
        for _ in range(n_new):
            step, _, _, _ = model(torch.tensor([seq]))
            seq.append(int(step[0, -1].argmax()))
    g = {"input_ids": ids[0].to(torch.int32), "logits": logits[0], "greedy_ids": torch.tensor(seq, dtype=torch.int32)}
    g.update({f"hidden.{i}": t[0] for i, t in enumerate(hidden)})
    safetensors_io.save(os.path.join(out, "golden.safetensors"), g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", choices=list(SIZES), default="tiny")
    a = ap.parse_args()
    torch.set_num_threads(1)
    s = SIZES[a.size]
    write_bert(os.path.join(a.out, f"bert-{a.size}"), s["bert"], seed=1)
    write_gpt2(os.path.join(a.out, f"gpt2-{a.size}"), s["gpt2"], seed=2)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
