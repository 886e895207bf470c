"""Writes the fuzzers' seed corpus (tests/data/fuzz-corpus): small valid inputs of every kind, for libFuzzer to mutate
and for the test suite to replay.   python3 tools/reference/make_fuzz_corpus.py   (numpy only)"""
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gguf_export import Writer  # noqa: E402
from tokenizers import bytes_to_unicode  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "fuzz-corpus")
rng = np.random.default_rng(0)


def put(target, name, data):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


def safetensors(tensors, pad=True):
    header, blobs, off = {}, [], 0
    for n, a in tensors.items():
        raw = a.tobytes()
        header[n] = {"dtype": {np.float32: "F32", np.float16: "F16"}[a.dtype.type], "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


put("safetensors", "two-tensors", safetensors({"w": rng.standard_normal((3, 5)).astype(np.float32), "b": np.ones(3, np.float16)}))
put("safetensors", "unaligned", safetensors({"x": np.arange(7, dtype=np.float32)}, pad=False))
put("safetensors", "index", json.dumps({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))

for name in ("bert-tiny", "gpt2-tiny"):
    put("config", name, open(os.path.join(ROOT, "tests", "data", "fixtures", name, "config.json")).read())
put("config", "defaults", json.dumps({"architectures": ["GPT2LMHeadModel"], "n_embd": 64, "n_head": 4, "n_inner": None}))

bs, cs = bytes_to_unicode()
byte_tokens = cs[:]
merges = ["Ġ t", "h e", "Ġt he", "i n", "a n"]
bpe_vocab = {t: i for i, t in enumerate(byte_tokens + ["Ġt", "he", "Ġthe", "in", "an", "<|endoftext|>"])}
put("tokenizer_json", "bpe", json.dumps({"version": "1.0", "added_tokens": [{"id": 261, "content": "<|endoftext|>", "special": True}],
                                          "model": {"type": "BPE", "vocab": bpe_vocab, "merges": merges}}, ensure_ascii=False))
wp = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "##s", "sat", ".", "hello", "world", "!"]
put("tokenizer_json", "wordpiece", json.dumps({"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {t: i for i, t in enumerate(wp)}},
                                                "normalizer": {"type": "BertNormalizer", "lowercase": True, "strip_accents": None}}))

for i, text in enumerate(open(os.path.join(ROOT, "tests", "data", "tokenizers", "llamacpp", "ggml-vocab-gpt-2.gguf.inp"), encoding="utf-8")
                         .read().split("\n__ggml_vocab_test__\n")[:-1]):
    put("tokenizers", f"text-{i:02d}", bytes([i % 2]) + text.encode("utf-8"))


def tiny_gguf(arch):
    w = Writer()
    E, F, L, H, P = 8, 16, 1, 2, 16
    w.str("general.architecture", arch)
    for k, v in (("block_count", L), ("context_length", P), ("embedding_length", E), ("feed_forward_length", F), ("attention.head_count", H)):
        w.u32(f"{arch}.{k}", v)
    w.f32(f"{arch}.attention.layer_norm_epsilon", 1e-5)
    r = lambda *s: (0.3 * rng.standard_normal(s)).astype(np.float32)
    if arch == "gpt2":
        tokens = byte_tokens + ["Ġt", "he", "<|endoftext|>"]
        w.str("tokenizer.ggml.model", "gpt2")
        w.strs("tokenizer.ggml.tokens", tokens)
        w.strs("tokenizer.ggml.merges", ["Ġ t", "h e"])
        w.i32s("tokenizer.ggml.token_type", [1] * (len(tokens) - 1) + [3])
        V = len(tokens)
        w.tensor("token_embd.weight", r(V, E), "f32")
        w.tensor("position_embd.weight", r(P, E), "f32")
        w.tensor("output_norm.weight", np.ones(E, np.float32), "f32")
        w.tensor("output_norm.bias", np.zeros(E, np.float32), "f32")
        for g, o, i in (("attn_qkv", 3 * E, E), ("attn_output", E, E), ("ffn_up", F, E), ("ffn_down", E, F)):
            w.tensor(f"blk.0.{g}.weight", r(o, i), "f32")
            w.tensor(f"blk.0.{g}.bias", r(o), "f32")
        for n in ("attn_norm", "ffn_norm"):
            w.tensor(f"blk.0.{n}.weight", np.ones(E, np.float32), "f32")
            w.tensor(f"blk.0.{n}.bias", np.zeros(E, np.float32), "f32")
    else:
        tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "\u2581a", "\u2581b", "s"]
        w.str("tokenizer.ggml.model", "bert")
        w.strs("tokenizer.ggml.tokens", tokens)
        V = len(tokens)
        w.tensor("token_embd.weight", r(V, E), "f32")
        w.tensor("position_embd.weight", r(P, E), "f32")
        w.tensor("token_types.weight", r(2, E), "f32")
        for n in ("token_embd_norm", "blk.0.attn_output_norm", "blk.0.layer_output_norm", "cls.predictions.transform.LayerNorm"):
            w.tensor(f"{n}.weight", np.ones(E, np.float32), "f32")
            w.tensor(f"{n}.bias", np.zeros(E, np.float32), "f32")
        for g, o, i in (("attn_q", E, E), ("attn_k", E, E), ("attn_v", E, E), ("attn_output", E, E), ("ffn_up", F, E), ("ffn_down", E, F)):
            w.tensor(f"blk.0.{g}.weight", r(o, i), "f32")
            w.tensor(f"blk.0.{g}.bias", r(o), "f32")
        w.tensor("cls.predictions.transform.dense.weight", r(E, E), "f32")
        w.tensor("cls.predictions.transform.dense.bias", r(E), "f32")
        w.tensor("cls.predictions.bias", r(V), "f32")
    path = os.path.join(OUT, "gguf", f"tiny-{arch}")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    w.write(path)


tiny_gguf("gpt2")
tiny_gguf("bert")
print("wrote", OUT)
