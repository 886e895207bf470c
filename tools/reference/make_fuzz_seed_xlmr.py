#!/usr/bin/env python3
"""Writes tests/data/fuzz-corpus/gguf/tiny-xlmr-cls: the GGUF fuzzer's seed for an XLM-RoBERTa classifier as
llama.cpp's convert_hf_to_gguf.py writes one (general.architecture bert, a "t5" Unigram vocabulary in fairseq's
order, positions from 0, one token type, cls + cls.output with classifier.output_labels), tiny and random (seed 0):
1 layer, width 8, 2 heads. The fuzzer mutates it; tests/test-fuzz-corpus.cpp checks it loads and classifies.

  python3 tools/reference/make_fuzz_seed_xlmr.py [OUT]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_export  # noqa: E402


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../tests/data/fuzz-corpus/gguf/tiny-xlmr-cls")
    rng = np.random.default_rng(0)
    E, F, L, H, ctx = 8, 8, 1, 2, 16
    tokens = ["<s>", "<pad>", "</s>", "<unk>", "\u2581", "\u2581a", "\u2581b", "a", "b", "c", "\u2581the", "[PAD11]"]
    scores = [0, 0, 0, 0, -2, -3, -3, -4, -4, -4, -2.5, -10000]
    types = [3, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 5]
    w = gguf_export.Writer()
    a = "bert."
    w.str("general.architecture", "bert")
    w.u32(a + "block_count", L)
    w.u32(a + "context_length", ctx)
    w.u32(a + "embedding_length", E)
    w.u32(a + "feed_forward_length", F)
    w.u32(a + "attention.head_count", H)
    w.f32(a + "attention.layer_norm_epsilon", 1e-5)
    w.bool(a + "attention.causal", False)
    w.u32(a + "pooling_type", 4)
    w.strs(a + "classifier.output_labels", ["no", "yes"])
    w.str("tokenizer.ggml.model", "t5")
    w.str("tokenizer.ggml.pre", "default")
    w.strs("tokenizer.ggml.tokens", tokens)
    w.f32s("tokenizer.ggml.scores", scores)
    w.i32s("tokenizer.ggml.token_type", types)
    w.bool("tokenizer.ggml.add_space_prefix", True)
    w.bool("tokenizer.ggml.remove_extra_whitespaces", True)
    w.u32("tokenizer.ggml.token_type_count", 1)
    for k, i in (("bos", 0), ("eos", 2), ("unknown", 3), ("seperator", 2), ("padding", 1), ("cls", 0)):
        w.u32(f"tokenizer.ggml.{k}_token_id", i)
    r = lambda *shape: (rng.standard_normal(shape) * 0.3).astype(np.float32)
    w.tensor("token_embd.weight", r(len(tokens), E), "f32")
    w.tensor("position_embd.weight", r(ctx, E), "f32")
    w.tensor("token_types.weight", r(1, E), "f32")
    w.tensor("token_embd_norm.weight", 1 + r(E), "f32")
    w.tensor("token_embd_norm.bias", r(E), "f32")
    for l in range(L):
        for g, shape in (("attn_q", (E, E)), ("attn_k", (E, E)), ("attn_v", (E, E)), ("attn_output", (E, E)), ("ffn_up", (F, E)), ("ffn_down", (E, F))):
            w.tensor(f"blk.{l}.{g}.weight", r(*shape), "f32")
            w.tensor(f"blk.{l}.{g}.bias", r(shape[0]), "f32")
        for g in ("attn_output_norm", "layer_output_norm"):
            w.tensor(f"blk.{l}.{g}.weight", 1 + r(E), "f32")
            w.tensor(f"blk.{l}.{g}.bias", r(E), "f32")
    w.tensor("cls.weight", r(E, E), "f32")
    w.tensor("cls.bias", r(E), "f32")
    w.tensor("cls.output.weight", r(2, E), "f32")
    w.tensor("cls.output.bias", r(2), "f32")
    w.write(out)
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()
