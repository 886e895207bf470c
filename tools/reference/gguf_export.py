"""Converts a Hugging Face BERT (BertForMaskedLM) or GPT-2 folder to one GGUF file, with llama.cpp's tensor and
metadata names for its "bert" and "gpt2" architectures and the tokenizer in tokenizer.ggml.* metadata.

  python3 tools/reference/gguf_export.py MODEL_DIR OUT.gguf [--type TYPE] [--tensor-type REGEX=TYPE ...] [--ref-q8_0]

TYPE: f32, f16 or one of ggml_quants' block types: q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 q2_k q3_k q4_k q5_k q6_k q8_k iq4_nl
(default q8_0). --type applies where the script has always used it (token embeddings, the layers' matrices, BERT's
masked-LM dense matrix); --tensor-type REGEX=TYPE (repeatable; the first whose regex is found in the tensor's name
wins, as with llama-quantize's --tensor-type) chooses the type of any tensor.
1-D tensors are always f32. A matrix whose row length is not a multiple of the type's block falls back as
llama-quantize does (q2_k, q3_k -> iq4_nl; q4_k -> q5_0; q5_k -> q5_1; q6_k, q8_k -> q8_0), else to f32.
Quantization is ggml_quants' reference (llama.cpp's quantize_row_*_ref; iq4_nl as llama-quantize writes it, i.e.
quantize_iq4_nl without an imatrix), except q8_0 by default: the bundled models were made with this script's
original q8_0, which rounds ties to even where llama.cpp rounds them away from zero (about 0.2 % of their blocks
differ by one step); --ref-q8_0 uses llama.cpp's rounding. q8_1 and q8_k are llama.cpp's activation formats: a file
with them as weights is for testing the engine only (llama.cpp cannot multiply by them; no general.file_type is
written for them).

Written from the GGUF specification (ggml docs/gguf.md) and llama.cpp's naming, independently of the engine's
C++ reader, so that each checks the other. BERT's masked-LM head has no llama.cpp name; it keeps its Hugging Face
names (cls.predictions.*), which is what wasmformer reads. WordPiece vocabularies are stored as llama.cpp does:
"▁x" for word-initial pieces, "y" for "##y" continuations, bracketed tokens unchanged. Needs numpy only.
"""
import argparse
import json
import os
import re
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggml_quants as gq  # noqa: E402

GGML = {"f32": 0, "f16": 1, **{name: t.ggml_type for name, t in gq.TYPES.items()}}
# general.file_type: llama.cpp's llama_ftype for a file mostly of that type (K-quants: the _M mixes' numbers, which
# is what llama.cpp guesses for such a file); none for the activation-only types q8_1 and q8_k
FILE_TYPE = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 7, "q5_0": 8, "q5_1": 9, "q2_k": 10, "q3_k": 12,
             "q4_k": 15, "q5_k": 17, "q6_k": 18, "iq4_nl": 25}
# llama-quantize's fallback when a row is not a whole number of 256-element super-blocks
FALLBACK = {"q2_k": "iq4_nl", "q3_k": "iq4_nl", "q4_k": "q5_0", "q5_k": "q5_1", "q6_k": "q8_0", "q8_k": "q8_0"}
T_U32, T_F32, T_BOOL, T_STR, T_ARR, T_I32 = 4, 6, 7, 8, 9, 5


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    dt = {"F32": np.float32, "F16": np.float16, "BF16": None}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = data[8 + n + b:8 + n + e]
        if info["dtype"] == "BF16":
            a = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] in dt:
            a = np.frombuffer(raw, dt[info["dtype"]]).astype(np.float32)
        else:
            continue  # buffers such as position_ids
        out[name] = a.reshape(info["shape"])
    return out


def q8_0(a):
    """Rows of a 2-D float array → GGUF Q8_0 blocks (f16 scale + 32 int8), as ggml quantizes except for ties:
    np.round rounds x/d = k + 0.5 to even where llama.cpp's roundf rounds away from zero (ggml_quants.Q8_0, used
    with --ref-q8_0). Kept as the default so that the bundled models' files can be made again byte for byte."""
    rows, cols = a.shape
    blocks = a.reshape(rows, cols // 32, 32)
    amax = np.abs(blocks).max(axis=2, keepdims=True)
    d = amax / 127.0
    inv = np.where(d == 0, 0, 1.0 / np.where(d == 0, 1, d))
    q = np.clip(np.round(blocks * inv), -127, 127).astype(np.int8)
    out = np.empty((rows, cols // 32, 34), np.uint8)
    out[:, :, :2] = d.astype(np.float16).view(np.uint8).reshape(rows, cols // 32, 2)
    out[:, :, 2:] = q.view(np.uint8)
    return out.tobytes()


def quantize_matrix(a, typ, ref_q8_0=False):
    """Rows of a 2-D float array -> the GGUF bytes of typ (each row a whole number of blocks), in chunks of rows
    to keep memory small."""
    if typ == "q8_0" and not ref_q8_0:
        return q8_0(a)
    t = gq.TYPES[typ]
    a = np.ascontiguousarray(a, np.float32)
    step = max(1, (1 << 18) // a.shape[1])
    parts = []
    for r in range(0, a.shape[0], step):
        rows = a[r:r + step].reshape(-1)
        parts.append(t.quantize(rows, ntry=7) if typ == "iq4_nl" else t.quantize(rows))
    return b"".join(parts)


def storage_type(a, typ):
    """The type a tensor is written in when typ is asked for: 1-D -> f32; quantized types need a 2-D array whose
    rows are whole blocks, else llama-quantize's fallback type, else f32."""
    if a.ndim == 1:
        return "f32"
    if typ in gq.TYPES:
        if a.ndim != 2:
            return "f32"
        if a.shape[1] % gq.TYPES[typ].block_size:
            fb = FALLBACK.get(typ)
            return fb if fb and a.shape[1] % gq.TYPES[fb].block_size == 0 else "f32"
    return typ


class Writer:
    def __init__(self, tensor_types=(), ref_q8_0=False):
        """tensor_types: [(regex, type)], the first regex found in a tensor's name overrides the type asked for;
        ref_q8_0: quantize q8_0 with llama.cpp's rounding (ggml_quants) instead of this script's original."""
        self.kv, self.infos, self.datas = [], [], []
        self.offset = 0
        self.tensor_types = [(re.compile(p), t) for p, t in tensor_types]
        self.ref_q8_0 = ref_q8_0
        self.written = {}

    @staticmethod
    def s(x):
        b = x.encode("utf-8")
        return struct.pack("<Q", len(b)) + b

    def add(self, key, typ, payload):
        self.kv.append(self.s(key) + struct.pack("<I", typ) + payload)

    def u32(self, k, v): self.add(k, T_U32, struct.pack("<I", v))
    def f32(self, k, v): self.add(k, T_F32, struct.pack("<f", v))
    def str(self, k, v): self.add(k, T_STR, self.s(v))
    def bool(self, k, v): self.add(k, T_BOOL, struct.pack("<B", int(v)))
    def strs(self, k, v): self.add(k, T_ARR, struct.pack("<IQ", T_STR, len(v)) + b"".join(self.s(x) for x in v))
    def i32s(self, k, v): self.add(k, T_ARR, struct.pack("<IQ", T_I32, len(v)) + np.asarray(v, np.int32).tobytes())

    def tensor(self, name, a, typ):
        """a: float array in PyTorch order (out, in); typ: f32 | f16 | a ggml_quants type (see storage_type for
        what is written when a does not fit it)."""
        typ = next((t for p, t in self.tensor_types if p.search(name)), typ)
        typ = storage_type(a, typ)
        if typ in gq.TYPES:
            raw = quantize_matrix(a, typ, self.ref_q8_0)
        else:
            raw = a.astype(np.float16 if typ == "f16" else np.float32).tobytes()
        self.written[typ] = self.written.get(typ, 0) + 1
        ne = list(reversed(a.shape))
        self.infos.append(self.s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<q", n) for n in ne)
                          + struct.pack("<IQ", GGML[typ], self.offset))
        pad = (-len(raw)) % 32
        self.datas.append(raw + b"\0" * pad)
        self.offset += len(raw) + pad

    def write(self, path):
        head = b"GGUF" + struct.pack("<IQQ", 3, len(self.infos), len(self.kv)) + b"".join(self.kv) + b"".join(self.infos)
        head += b"\0" * ((-len(head)) % 32)
        with open(path, "wb") as f:
            f.write(head)
            for d in self.datas:
                f.write(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--type", choices=list(GGML), default="q8_0")
    ap.add_argument("--tensor-type", action="append", default=[], metavar="REGEX=TYPE",
                    help="per-tensor type: the first REGEX found in a tensor's name chooses its TYPE (repeatable)")
    ap.add_argument("--ref-q8_0", action="store_true", help="q8_0 with llama.cpp's rounding (ties away from zero)")
    ap.add_argument("--name", default=None)
    a = ap.parse_args()
    cfg = json.load(open(os.path.join(a.model_dir, "config.json")))
    W = read_safetensors(os.path.join(a.model_dir, "model.safetensors"))
    get = lambda *names: next(W[n] for n in names if n in W)
    overrides = []
    for spec in a.tensor_type:
        pat, sep, typ = spec.rpartition("=")
        if not sep or not pat or typ not in GGML:
            ap.error(f"--tensor-type {spec!r}: expected REGEX=TYPE with TYPE one of {', '.join(GGML)}")
        overrides.append((pat, typ))
    w = Writer(overrides, a.ref_q8_0)
    arch = cfg["model_type"]
    w.str("general.architecture", arch)
    w.str("general.name", a.name or os.path.basename(os.path.normpath(a.model_dir)))
    if a.type in FILE_TYPE:
        w.u32("general.file_type", FILE_TYPE[a.type])
    if arch == "bert":
        E = cfg["hidden_size"]
        w.u32("bert.block_count", cfg["num_hidden_layers"])
        w.u32("bert.context_length", cfg["max_position_embeddings"])
        w.u32("bert.embedding_length", E)
        w.u32("bert.feed_forward_length", cfg["intermediate_size"])
        w.u32("bert.attention.head_count", cfg["num_attention_heads"])
        w.f32("bert.attention.layer_norm_epsilon", cfg.get("layer_norm_eps", 1e-12))
        w.bool("bert.attention.causal", False)
        w.u32("tokenizer.ggml.token_type_count", cfg.get("type_vocab_size", 2))
        vocab = [l.rstrip("\r\n") for l in open(os.path.join(a.model_dir, "vocab.txt"), encoding="utf-8")]
        tokens = [t if (t.startswith("[") and t.endswith("]")) else (t[2:] if t.startswith("##") else "\u2581" + t) for t in vocab]
        w.str("tokenizer.ggml.model", "bert")
        w.strs("tokenizer.ggml.tokens", tokens)
        w.i32s("tokenizer.ggml.token_type", [3 if t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") else 1 for t in vocab])
        for key, tok in (("unknown", "[UNK]"), ("seperator", "[SEP]"), ("padding", "[PAD]"), ("cls", "[CLS]"), ("mask", "[MASK]")):
            w.u32(f"tokenizer.ggml.{key}_token_id", vocab.index(tok))
        p = lambda n: get("bert." + n, n)
        w.tensor("token_embd.weight", p("embeddings.word_embeddings.weight"), a.type)
        w.tensor("position_embd.weight", p("embeddings.position_embeddings.weight"), "f32")
        w.tensor("token_types.weight", p("embeddings.token_type_embeddings.weight"), "f32")
        w.tensor("token_embd_norm.weight", p("embeddings.LayerNorm.weight"), "f32")
        w.tensor("token_embd_norm.bias", p("embeddings.LayerNorm.bias"), "f32")
        layer = [("attn_q", "attention.self.query"), ("attn_k", "attention.self.key"), ("attn_v", "attention.self.value"),
                 ("attn_output", "attention.output.dense"), ("attn_output_norm", "attention.output.LayerNorm"),
                 ("ffn_up", "intermediate.dense"), ("ffn_down", "output.dense"), ("layer_output_norm", "output.LayerNorm")]
        for l in range(cfg["num_hidden_layers"]):
            for g, h in layer:
                for wb in ("weight", "bias"):
                    w.tensor(f"blk.{l}.{g}.{wb}", p(f"encoder.layer.{l}.{h}.{wb}"), a.type)
        if "cls.predictions.bias" in W:  # a masked LM; a BertModel (embeddings) has no head
            for n in ("cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias",
                      "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias", "cls.predictions.bias"):
                w.tensor(n, W[n], a.type)
        # a sentence-transformers folder's pooling, as llama.cpp's convert_hf_to_gguf writes it (1 mean, 2 cls)
        pool = os.path.join(a.model_dir, "1_Pooling", "config.json")
        if os.path.exists(pool):
            pc = json.load(open(pool))
            mode = 1 if pc.get("pooling_mode_mean_tokens") else 2 if pc.get("pooling_mode_cls_token") else None
            if mode is None:
                raise SystemExit(f"{pool}: only mean and cls pooling are written")
            w.u32("bert.pooling_type", mode)
    elif arch == "gpt2":
        E = cfg["n_embd"]
        w.u32("gpt2.block_count", cfg["n_layer"])
        w.u32("gpt2.context_length", cfg["n_positions"])
        w.u32("gpt2.embedding_length", E)
        w.u32("gpt2.feed_forward_length", cfg.get("n_inner") or 4 * E)
        w.u32("gpt2.attention.head_count", cfg["n_head"])
        w.f32("gpt2.attention.layer_norm_epsilon", cfg.get("layer_norm_epsilon", 1e-5))
        enc = json.load(open(os.path.join(a.model_dir, "vocab.json"), encoding="utf-8"))
        tokens = [None] * (max(enc.values()) + 1)
        for t, i in enc.items():
            tokens[i] = t
        merges = [l.rstrip("\r\n") for l in open(os.path.join(a.model_dir, "merges.txt"), encoding="utf-8")]
        merges = [m for i, m in enumerate(merges) if m and not (i == 0 and m.startswith("#version"))]
        w.str("tokenizer.ggml.model", "gpt2")
        w.strs("tokenizer.ggml.tokens", tokens)
        w.i32s("tokenizer.ggml.token_type", [3 if t == "<|endoftext|>" else 1 for t in tokens])
        w.strs("tokenizer.ggml.merges", merges)
        if "<|endoftext|>" in enc:
            w.u32("tokenizer.ggml.bos_token_id", enc["<|endoftext|>"])
            w.u32("tokenizer.ggml.eos_token_id", enc["<|endoftext|>"])
        p = lambda n: get("transformer." + n, n)
        w.tensor("token_embd.weight", p("wte.weight"), a.type)
        w.tensor("position_embd.weight", p("wpe.weight"), "f32")
        w.tensor("output_norm.weight", p("ln_f.weight"), "f32")
        w.tensor("output_norm.bias", p("ln_f.bias"), "f32")
        layer = [("attn_norm", "ln_1"), ("attn_qkv", "attn.c_attn"), ("attn_output", "attn.c_proj"), ("ffn_norm", "ln_2"),
                 ("ffn_up", "mlp.c_fc"), ("ffn_down", "mlp.c_proj")]
        for l in range(cfg["n_layer"]):
            for g, h in layer:
                wt = p(f"h.{l}.{h}.weight")
                w.tensor(f"blk.{l}.{g}.weight", wt.T if wt.ndim == 2 else wt, a.type)  # Conv1D (in, out) → (out, in)
                w.tensor(f"blk.{l}.{g}.bias", p(f"h.{l}.{h}.bias"), "f32")
    else:
        raise SystemExit(f"model_type {arch} is not supported")
    w.write(a.out)
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes, {a.type}; tensors by type: "
          + ", ".join(f"{t} {n}" for t, n in sorted(w.written.items())) + ")")


if __name__ == "__main__":
    main()
