"""Converts a Hugging Face BERT (BertForMaskedLM), ModernBERT, GPT-2, Llama, Mistral or Qwen2 folder to one GGUF
file, with llama.cpp's tensor and metadata names for its "bert", "modern-bert", "gpt2", "llama" and "qwen2"
architectures and the tokenizer in tokenizer.ggml.* metadata (ModernBERT: see write_modernbert).

  python3 tools/reference/gguf_export.py MODEL_DIR OUT.gguf [--type TYPE] [--tensor-type REGEX=TYPE ...] [--ref-q8_0]
                                         [--vocab-gguf VOCAB.gguf]

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

Decoders (config.json model_type llama, mistral, qwen2), as llama.cpp's convert_hf_to_gguf.py writes them:
  - general.architecture "llama" for llama and mistral (llama.cpp converts MistralForCausalLM as llama, which has no
    sliding window: a Mistral whose sliding_window is shorter than max_position_embeddings is refused), "qwen2";
  - {arch}.context_length, .embedding_length, .block_count, .feed_forward_length, .attention.head_count,
    .attention.head_count_kv, .rope.freq_base, .attention.layer_norm_rms_epsilon, .attention.key_length and
    .value_length (when config.json has head_dim, as the converter does), .vocab_size, .rope.dimension_count
    (= head_dim), general.quantization_version 2;
  - tensors token_embd, blk.N.{attn_norm, attn_q, attn_k, attn_v (+ .bias: qwen2, or llama's attention_bias),
    attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down}, output_norm, output (left out when tie_word_embeddings);
  - arch llama: attn_q and attn_k rows permuted as the converter's LlamaModel.permute does (within each head, row
    2i takes HF's row i and row 2i+1 HF's row i + head_dim/2), because llama.cpp applies RoPE to the llama
    architecture in its "normal" layout (adjacent pairs) while Hugging Face rotates halves; qwen2 is not permuted
    (llama.cpp uses the NeoX layout, i.e. HF's halves, for it);
  - rope_scaling {"rope_type": "llama3", ...}: rope_freqs.weight, f32, head_dim/2 frequency factors c_i that
    llama.cpp divides the angle by (theta_i = pos * freq_base^(-2i/head_dim) / c_i): 1 for short wavelengths,
    factor for long ones, 1 / ((1 - s)/factor + s) between. original_max_position_embeddings is read from
    rope_scaling (llama.cpp's converter reads it from the top level of config.json and falls back to 8192, which
    agrees for Meta's Llama 3.x configs but not for a smaller value in rope_scaling);
  - tokenizer: with --vocab-gguf, its tokenizer.ggml.* entries copied byte for byte (llama.cpp's own vocabulary
    files); otherwise built from tokenizer.model (SentencePiece: model "llama", pre "default", tokens, scores,
    token types) or vocab.json + merges.txt (model "gpt2", pre "gpt-2"); then from tokenizer_config.json
    tokenizer.chat_template and, where the copied entries lack them, tokenizer.ggml.add_bos_token/add_eos_token.
    q8_0 uses llama.cpp's rounding (ggml_quants) for decoders.
Gemma, Gemma 2 and Phi-3 (model_type gemma, gemma2, phi3; write_decoder_extra), as convert_hf_to_gguf.py's
GemmaModel, Gemma2Model and Phi3MiniModel write them:
  - gemma / gemma2: {arch}.context_length, .embedding_length, .block_count, .feed_forward_length,
    .attention.head_count, .attention.head_count_kv, .attention.layer_norm_rms_epsilon, .attention.key_length and
    .value_length (= head_dim), and for gemma2 also .attn_logit_softcapping, .final_logit_softcapping (f32) and
    .attention.sliding_window (u32); general.quantization_version 2. Like the converter, no rope.freq_base, no
    rope.dimension_count and no vocab_size (llama.cpp's defaults: 10000 and key_length), so a rope_theta other
    than 10000 is refused. Tensors token_embd, blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm,
    ffn_gate, ffn_up, ffn_down}, output_norm; gemma2 maps input_layernorm → attn_norm, post_attention_layernorm →
    post_attention_norm, pre_feedforward_layernorm → ffn_norm, post_feedforward_layernorm → post_ffw_norm. No
    output tensor: llama.cpp's Gemma always ties the head to token_embd (the converter drops lm_head.weight; an
    untied Gemma is refused). Q/K are NOT permuted (llama.cpp rotates Gemma in the NeoX layout, i.e. HF's halves).
    Every tensor whose HF name ends in "norm.weight" is written as 1 + w (GemmaRMSNorm multiplies by 1 + w; the
    converter's modify_tensors adds the 1 so that llama.cpp multiplies by the stored weight as for any RMSNorm).
    The converter adds it in the dtype the tensor has at that point: BF16 tensors were widened to f32 before
    (exact, as HF's (1 + w.float())), F16 tensors are still F16 (1 + w rounded to f16), F32 stays f32; this
    script does the same (`gemma_norm_plus_one`).
    llama.cpp takes Gemma 2's attention scale from the model size, not from the file: 1/sqrt(head_dim), or
    1/sqrt(hidden/heads) for the 46-layer 27B; a config whose query_pre_attn_scalar differs from that value cannot
    be written (refused), nor one without both soft-caps, nor layer_types other than llama.cpp's fixed pattern
    (set_swa_pattern(2): the even layers slide, as HF's default).
    The converter's CodeGemma special-token ids (prefix 67, suffix 69, middle 68, fsep 70, eot 107) belong to
    Gemma's own vocabulary and are not written; tokenizer.ggml.add_space_prefix false (which the converter writes
    for Gemma's own tokenizer.model, whose normalizer has no dummy prefix) is written only when the folder's
    tokenizer.model has add_dummy_prefix false.
  - phi3: phi3.context_length, .rope.scaling.original_context_length (original_max_position_embeddings, which
    the converter requires), .embedding_length, .feed_forward_length, .block_count, .attention.head_count,
    .attention.head_count_kv, .attention.layer_norm_rms_epsilon, .rope.dimension_count
    (int(partial_rotary_factor · hidden) // heads), .rope.freq_base, .attention.sliding_window (0 when null, as
    the converter marks Phi-4; llama.cpp currently disables Phi's sliding window whatever the value);
    general.quantization_version 2. Tensors token_embd, blk.N.{attn_norm, attn_qkv (HF's fused qkv_proj as is:
    rows Q, K, V), attn_output, ffn_norm, ffn_up (HF's gate_up_proj as is: 2·intermediate rows, gate then up;
    llama.cpp's fused SwiGLU takes silu of the first half times the second), ffn_down}, output_norm, output. No
    permutation (NeoX layout). rope_scaling (longrope's rope_factors_long/short) is refused, as is a
    partial_rotary_factor other than 1 and an explicit head_dim other than hidden/heads.
  - tokenizer as for the other decoders (--vocab-gguf copies llama.cpp's entries).
`read_gguf(path)` reads a GGUF file back (metadata, tensors; dequantized to f32 with `tensor_f32`), and
`unpermute_qk` undoes the Q/K permutation.
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

GGML = {"f32": 0, "f16": 1, "bf16": 30, **{name: t.ggml_type for name, t in gq.TYPES.items()}}
# general.file_type: llama.cpp's llama_ftype for a file mostly of that type (K-quants: the _M mixes' numbers, which
# is what llama.cpp guesses for such a file); none for the activation-only types q8_1 and q8_k
FILE_TYPE = {"f32": 0, "f16": 1, "bf16": 32, "q4_0": 2, "q4_1": 3, "q8_0": 7, "q5_0": 8, "q5_1": 9, "q2_k": 10, "q3_k": 12,
             "q4_k": 15, "q5_k": 17, "q6_k": 18, "iq4_nl": 25}
# llama-quantize's fallback when a row is not a whole number of 256-element super-blocks
FALLBACK = {"q2_k": "iq4_nl", "q3_k": "iq4_nl", "q4_k": "q5_0", "q5_k": "q5_1", "q6_k": "q8_0", "q8_k": "q8_0"}
T_U32, T_F32, T_BOOL, T_STR, T_ARR, T_I32 = 4, 6, 7, 8, 9, 5
# scalar GGUF value types and their struct formats (for reading)
SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


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
    def f32s(self, k, v): self.add(k, T_ARR, struct.pack("<IQ", T_F32, len(v)) + np.asarray(v, np.float32).tobytes())
    def raw(self, entry): self.kv.append(entry)  # a whole serialized key/value entry (read_gguf's kv_raw)

    def tensor(self, name, a, typ):
        """a: float array in PyTorch order (out, in); typ: f32 | f16 | a ggml_quants type (see storage_type for
        what is written when a does not fit it)."""
        typ = next((t for p, t in self.tensor_types if p.search(name)), typ)
        typ = storage_type(a, typ)
        if typ in gq.TYPES:
            raw = quantize_matrix(a, typ, self.ref_q8_0)
        elif typ == "bf16":  # the upper half of the f32 bits, rounded to nearest even (NaN kept quiet)
            u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
            r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
            r[np.isnan(a.reshape(-1) if a.ndim else a).reshape(r.shape)] = 0x7FC0
            raw = r.tobytes()
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


# ------------------------------------------------------------------------------------------------------ decoders
DECODER_ARCH = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2"}


def permute_qk(a, n_head):
    """HF's rotate-half rows → llama.cpp's adjacent pairs, per head (convert_hf_to_gguf's LlamaModel.permute):
    within a head of d rows, new row 2i = old row i, new row 2i+1 = old row i + d/2. a: (rows, cols) or (rows,)."""
    d = a.shape[0] // n_head
    return a.reshape(n_head, 2, d // 2, *a.shape[1:]).swapaxes(1, 2).reshape(a.shape)


def unpermute_qk(a, n_head):
    """The inverse of permute_qk."""
    d = a.shape[0] // n_head
    return a.reshape(n_head, d // 2, 2, *a.shape[1:]).swapaxes(1, 2).reshape(a.shape)


def llama3_rope_factors(cfg):
    """rope_freqs.weight for rope_scaling {"rope_type": "llama3"}: per frequency pair, what llama.cpp divides the
    angle by, computed in f32 as the converter does (its generate_extra_tensors), with original_max_position_embeddings
    taken from rope_scaling (see the module docstring)."""
    rs = cfg["rope_scaling"]
    base = np.float32(cfg.get("rope_theta", 10000.0))
    dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    freqs = (np.float32(1.0) / base ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))).astype(np.float32)
    factor = np.float32(rs.get("factor", 8.0))
    lo, hi = np.float32(rs.get("low_freq_factor", 1.0)), np.float32(rs.get("high_freq_factor", 4.0))
    old_ctx = np.float32(rs.get("original_max_position_embeddings", cfg.get("original_max_position_embeddings", 8192)))
    lo_wavelen, hi_wavelen = old_ctx / lo, old_ctx / hi
    out = []
    for f in freqs:
        wavelen = np.float32(2 * np.pi) / f
        if wavelen < hi_wavelen:
            out.append(np.float32(1))
        elif wavelen > lo_wavelen:
            out.append(factor)
        else:
            smooth = (old_ctx / wavelen - lo) / (hi - lo)
            out.append(np.float32(1) / ((np.float32(1) - smooth) / factor + smooth))
    return np.asarray(out, np.float32)


def _pb_fields(buf):
    """A protobuf message's fields: [(number, wire type, value)], value an int (varint), bytes (length-delimited)
    or raw bytes (fixed32/64)."""
    out, i, n = [], 0, len(buf)

    def varint(i):
        v, shift = 0, 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v, i
    while i < n:
        key, i = varint(i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(i)
        elif wt == 2:
            ln, i = varint(i)
            v, i = buf[i:i + ln], i + ln
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        else:
            raise ValueError(f"protobuf wire type {wt}")
        out.append((num, wt, v))
    return out


def sentencepiece_vocab(path):
    """tokenizer.model → (pieces, scores, types, trainer spec ids {unk, bos, eos, pad}); types as sentencepiece's
    (1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte), which are llama.cpp's token types."""
    pieces, scores, types = [], [], []
    ids = {"unk": 0, "bos": 1, "eos": 2, "pad": -1}
    for num, wt, v in _pb_fields(open(path, "rb").read()):
        if num == 1 and wt == 2:
            p, sc, ty = None, 0.0, 1
            for n2, w2, v2 in _pb_fields(v):
                if n2 == 1:
                    p = v2.decode("utf-8")
                elif n2 == 2:
                    sc = struct.unpack("<f", v2)[0]
                elif n2 == 3:
                    ty = v2
            pieces.append(p)
            scores.append(sc)
            types.append(ty)
        elif num == 2 and wt == 2:
            for n2, w2, v2 in _pb_fields(v):
                key = {40: "unk", 41: "bos", 42: "eos", 43: "pad"}.get(n2)
                if key:
                    ids[key] = v2 - (1 << 64) if v2 >= 1 << 63 else v2  # int32 -1 is a 10-byte varint
    return pieces, scores, types, ids


def write_vocab_from_files(w, cfg, model_dir, tok_cfg):
    """tokenizer.ggml.* from the folder's tokenizer files (without --vocab-gguf)."""
    spm = os.path.join(model_dir, "tokenizer.model")
    if os.path.exists(spm):
        pieces, scores, types, ids = sentencepiece_vocab(spm)
        w.str("tokenizer.ggml.model", "llama")
        w.str("tokenizer.ggml.pre", "default")
        w.strs("tokenizer.ggml.tokens", pieces)
        w.f32s("tokenizer.ggml.scores", scores)
        w.i32s("tokenizer.ggml.token_type", types)
        for key in ("bos", "eos"):
            tid = cfg.get(f"{key}_token_id", ids[key])
            if tid is not None and tid >= 0:
                w.u32(f"tokenizer.ggml.{key}_token_id", tid)
        w.u32("tokenizer.ggml.unknown_token_id", ids["unk"])
        if ids["pad"] >= 0:
            w.u32("tokenizer.ggml.padding_token_id", ids["pad"])
        return
    enc = json.load(open(os.path.join(model_dir, "vocab.json"), encoding="utf-8"))
    tokens = [None] * (max(enc.values()) + 1)
    for t, i in enc.items():
        tokens[i] = t
    merges = [l.rstrip("\r\n") for l in open(os.path.join(model_dir, "merges.txt"), encoding="utf-8")]
    merges = [m for i, m in enumerate(merges) if m and not (i == 0 and m.startswith("#version"))]
    special = {v.get("content") for v in tok_cfg.get("added_tokens_decoder", {}).values() if v.get("special")}
    w.str("tokenizer.ggml.model", "gpt2")
    w.str("tokenizer.ggml.pre", "qwen2" if tok_cfg.get("tokenizer_class", "").startswith("Qwen2") else "gpt-2")
    w.strs("tokenizer.ggml.tokens", tokens)
    w.i32s("tokenizer.ggml.token_type", [3 if t in special else 1 for t in tokens])
    w.strs("tokenizer.ggml.merges", merges)
    for key in ("bos", "eos"):
        if cfg.get(f"{key}_token_id") is not None:
            w.u32(f"tokenizer.ggml.{key}_token_id", cfg[f"{key}_token_id"])


def write_decoder(w, cfg, W, model_dir, typ, vocab_gguf=None):
    if cfg["model_type"] in EXTRA_DECODERS:
        return write_decoder_extra(w, cfg, W, model_dir, typ, vocab_gguf)
    mt = cfg["model_type"]
    arch = DECODER_ARCH[mt]
    E, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    KV = cfg.get("num_key_value_heads") or H
    D = cfg.get("head_dim") or E // H
    if mt == "mistral" and (cfg.get("sliding_window") or 1 << 62) < cfg.get("max_position_embeddings", 0):
        raise SystemExit(f"{model_dir}: sliding_window {cfg['sliding_window']} < max_position_embeddings: llama.cpp's "
                         "llama architecture has no sliding window, so this Mistral cannot be written as GGUF")
    if mt == "qwen2" and cfg.get("use_sliding_window"):
        raise SystemExit(f"{model_dir}: use_sliding_window is true; llama.cpp's qwen2 has no sliding window")
    rs = cfg.get("rope_scaling")
    kind = (rs or {}).get("rope_type", (rs or {}).get("type", "default"))
    if kind not in ("default", "llama3"):
        raise SystemExit(f"{model_dir}: rope_scaling {kind!r} is not written")
    if cfg.get("hidden_act", "silu") != "silu":
        raise SystemExit(f"{model_dir}: hidden_act {cfg['hidden_act']!r}")
    p = arch + "."
    w.u32(p + "block_count", L)
    w.u32(p + "context_length", cfg["max_position_embeddings"])
    w.u32(p + "embedding_length", E)
    w.u32(p + "feed_forward_length", cfg["intermediate_size"])
    w.u32(p + "attention.head_count", H)
    w.u32(p + "attention.head_count_kv", KV)
    w.f32(p + "rope.freq_base", cfg.get("rope_theta", 10000.0))
    w.f32(p + "attention.layer_norm_rms_epsilon", cfg.get("rms_norm_eps", 1e-6))
    if cfg.get("head_dim") is not None:
        w.u32(p + "attention.key_length", D)
        w.u32(p + "attention.value_length", D)
    w.u32(p + "vocab_size", cfg["vocab_size"])
    w.u32(p + "rope.dimension_count", D)
    w.u32("general.quantization_version", 2)
    tc_path = os.path.join(model_dir, "tokenizer_config.json")
    tok_cfg = json.load(open(tc_path, encoding="utf-8")) if os.path.exists(tc_path) else {}
    have = set()
    if vocab_gguf:
        src = read_gguf(vocab_gguf, tensors=False)
        for k, entry in src["kv_raw"].items():
            if k.startswith("tokenizer.ggml."):
                w.raw(entry)
                have.add(k)
        n_tok = len(src["kv"]["tokenizer.ggml.tokens"])
        if n_tok != cfg["vocab_size"]:
            raise SystemExit(f"{vocab_gguf}: {n_tok} tokens, the model has vocab_size {cfg['vocab_size']}")
    else:
        write_vocab_from_files(w, cfg, model_dir, tok_cfg)
    for key in ("add_bos_token", "add_eos_token"):
        if key in tok_cfg:
            k = "tokenizer.ggml." + key
            if k in have:
                if bool(src["kv"][k]) != bool(tok_cfg[key]):
                    raise SystemExit(f"{vocab_gguf}: {k} = {src['kv'][k]}, tokenizer_config.json says {tok_cfg[key]}")
            else:
                w.bool(k, bool(tok_cfg[key]))
    if isinstance(tok_cfg.get("chat_template"), str):
        w.str("tokenizer.chat_template", tok_cfg["chat_template"])

    permute = arch == "llama"
    w.tensor("token_embd.weight", W["model.embed_tokens.weight"], typ)
    if kind == "llama3":
        w.tensor("rope_freqs.weight", llama3_rope_factors(cfg), "f32")
    names = [("attn_norm", "input_layernorm"), ("attn_q", "self_attn.q_proj"), ("attn_k", "self_attn.k_proj"),
             ("attn_v", "self_attn.v_proj"), ("attn_output", "self_attn.o_proj"), ("ffn_norm", "post_attention_layernorm"),
             ("ffn_gate", "mlp.gate_proj"), ("ffn_up", "mlp.up_proj"), ("ffn_down", "mlp.down_proj")]
    for l in range(L):
        for g, h in names:
            for wb in ("weight", "bias"):
                key = f"model.layers.{l}.{h}.{wb}"
                if key not in W:
                    continue
                a = W[key]
                if permute and g in ("attn_q", "attn_k"):
                    a = permute_qk(a, H if g == "attn_q" else KV)
                w.tensor(f"blk.{l}.{g}.{wb}", a, typ if wb == "weight" else "f32")
    w.tensor("output_norm.weight", W["model.norm.weight"], "f32")
    if not cfg.get("tie_word_embeddings", False):
        w.tensor("output.weight", W["lm_head.weight"], typ)


# ------------------------------------------------------------------------------ Gemma, Gemma 2, Phi-3 (additions)
EXTRA_DECODERS = {"gemma": "gemma", "gemma2": "gemma2", "phi3": "phi3"}
DECODER_ARCH.update(EXTRA_DECODERS)


def safetensors_dtypes(path):
    """name → the safetensors dtype string ("F32", "BF16", "F16", …) from the file's header."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    return {k: v["dtype"] for k, v in header.items() if k != "__metadata__"}


def gemma_norm_plus_one(a, src_dtype):
    """1 + w as convert_hf_to_gguf's Gemma classes compute it: in f16 for an F16 tensor (BF16 is widened to f32
    before modify_tensors; F16 is not), in f32 otherwise."""
    if src_dtype == "F16":
        return (np.asarray(a, np.float16) + np.float16(1)).astype(np.float32)
    return np.asarray(a, np.float32) + np.float32(1)


def sentencepiece_add_dummy_prefix(path):
    """normalizer_spec.add_dummy_prefix of a tokenizer.model (protobuf default: true)."""
    for num, wt, v in _pb_fields(open(path, "rb").read()):
        if num == 3 and wt == 2:
            for n2, w2, v2 in _pb_fields(v):
                if n2 == 3 and w2 == 0:
                    return bool(v2)
    return True


def _decoder_tokenizer(w, cfg, model_dir, vocab_gguf):
    """tokenizer.* for write_decoder_extra, with write_decoder's rules: llama.cpp's entries copied from vocab_gguf
    (or built from the folder's files), then add_bos/add_eos from tokenizer_config.json where not copied (and
    checked against the copy where copied), and its chat template."""
    tc_path = os.path.join(model_dir, "tokenizer_config.json")
    tok_cfg = json.load(open(tc_path, encoding="utf-8")) if os.path.exists(tc_path) else {}
    have, src = set(), None
    if vocab_gguf:
        src = read_gguf(vocab_gguf, tensors=False)
        for k, entry in src["kv_raw"].items():
            if k.startswith("tokenizer.ggml."):
                w.raw(entry)
                have.add(k)
        n_tok = len(src["kv"]["tokenizer.ggml.tokens"])
        if n_tok != cfg["vocab_size"]:
            raise SystemExit(f"{vocab_gguf}: {n_tok} tokens, the model has vocab_size {cfg['vocab_size']}")
    else:
        write_vocab_from_files(w, cfg, model_dir, tok_cfg)
    for key in ("add_bos_token", "add_eos_token"):
        if key in tok_cfg:
            k = "tokenizer.ggml." + key
            if k in have:
                if bool(src["kv"][k]) != bool(tok_cfg[key]):
                    raise SystemExit(f"{vocab_gguf}: {k} = {src['kv'][k]}, tokenizer_config.json says {tok_cfg[key]}")
            else:
                w.bool(k, bool(tok_cfg[key]))
    spm = os.path.join(model_dir, "tokenizer.model")
    if (cfg["model_type"] in ("gemma", "gemma2") and os.path.exists(spm) and not sentencepiece_add_dummy_prefix(spm)
            and "tokenizer.ggml.add_space_prefix" not in have):
        w.bool("tokenizer.ggml.add_space_prefix", False)
    if isinstance(tok_cfg.get("chat_template"), str):
        w.str("tokenizer.chat_template", tok_cfg["chat_template"])


def write_decoder_extra(w, cfg, W, model_dir, typ, vocab_gguf=None):
    """Gemma, Gemma 2 and Phi-3 (see the module docstring)."""
    mt = cfg["model_type"]
    arch = EXTRA_DECODERS[mt]
    E, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    KV = cfg.get("num_key_value_heads") or H
    p = arch + "."
    if cfg.get("rope_scaling"):
        raise SystemExit(f"{model_dir}: rope_scaling {cfg['rope_scaling']} is not written for {mt}")
    gemma = mt in ("gemma", "gemma2")
    if gemma:
        D = cfg.get("head_dim") or E // H
        act = {cfg.get("hidden_activation"), cfg.get("hidden_act")} - {None}
        if act - {"gelu_pytorch_tanh"}:
            raise SystemExit(f"{model_dir}: activation {sorted(act)}: llama.cpp's Gemma uses gelu (tanh)")
        if float(cfg.get("rope_theta", 10000.0)) != 10000.0:
            raise SystemExit(f"{model_dir}: rope_theta {cfg['rope_theta']}: the converter writes no rope.freq_base "
                             "for Gemma, so llama.cpp would use 10000")
        if not cfg.get("tie_word_embeddings", True):
            raise SystemExit(f"{model_dir}: an untied Gemma: llama.cpp's Gemma always uses token_embd as the head")
        if mt == "gemma2":
            if cfg.get("attn_logit_softcapping") is None or cfg.get("final_logit_softcapping") is None:
                raise SystemExit(f"{model_dir}: llama.cpp's gemma2 always soft-caps (50 and 30 when the keys are "
                                 "absent): a config without both caps cannot be written")
            scale_dim = E // H if L == 46 else D
            if cfg.get("query_pre_attn_scalar") != scale_dim:
                raise SystemExit(f"{model_dir}: query_pre_attn_scalar {cfg.get('query_pre_attn_scalar')}: llama.cpp's "
                                 f"gemma2 scales attention by 1/sqrt({scale_dim}) whatever the file says (its scale "
                                 "comes from the model size), so this Gemma 2 cannot be written as GGUF")
            even = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(L)]
            if cfg.get("layer_types") not in (None, even):
                raise SystemExit(f"{model_dir}: layer_types {cfg['layer_types']}: llama.cpp's gemma2 slides on the "
                                 "even layers only")
            if not cfg.get("sliding_window"):
                raise SystemExit(f"{model_dir}: gemma2 without sliding_window")
        w.u32(p + "context_length", cfg["max_position_embeddings"])
        w.u32(p + "embedding_length", E)
        w.u32(p + "block_count", L)
        w.u32(p + "feed_forward_length", cfg["intermediate_size"])
        w.u32(p + "attention.head_count", H)
        w.u32(p + "attention.head_count_kv", KV)
        w.f32(p + "attention.layer_norm_rms_epsilon", cfg.get("rms_norm_eps", 1e-6))
        w.u32(p + "attention.key_length", D)
        w.u32(p + "attention.value_length", D)
        if mt == "gemma2":
            w.f32(p + "attn_logit_softcapping", cfg["attn_logit_softcapping"])
            w.f32(p + "final_logit_softcapping", cfg["final_logit_softcapping"])
            w.u32(p + "attention.sliding_window", cfg["sliding_window"])
    else:  # phi3
        if cfg.get("partial_rotary_factor", 1.0) != 1.0:
            raise SystemExit(f"{model_dir}: partial_rotary_factor {cfg['partial_rotary_factor']} is not written")
        if cfg.get("head_dim") not in (None, E // H):
            raise SystemExit(f"{model_dir}: head_dim {cfg['head_dim']} ≠ hidden/heads: the converter assumes hidden/heads")
        if cfg.get("hidden_act", "silu") != "silu":
            raise SystemExit(f"{model_dir}: hidden_act {cfg['hidden_act']!r}")
        if "original_max_position_embeddings" not in cfg:
            raise SystemExit(f"{model_dir}: the converter requires original_max_position_embeddings")
        w.u32(p + "context_length", cfg["max_position_embeddings"])
        w.u32(p + "rope.scaling.original_context_length", cfg["original_max_position_embeddings"])
        w.u32(p + "embedding_length", E)
        w.u32(p + "feed_forward_length", cfg["intermediate_size"])
        w.u32(p + "block_count", L)
        w.u32(p + "attention.head_count", H)
        w.u32(p + "attention.head_count_kv", KV)
        w.f32(p + "attention.layer_norm_rms_epsilon", cfg.get("rms_norm_eps", 1e-5))
        w.u32(p + "rope.dimension_count", int(cfg.get("partial_rotary_factor", 1.0) * E) // H)
        w.f32(p + "rope.freq_base", cfg.get("rope_theta", 10000.0))
        w.u32(p + "attention.sliding_window", cfg.get("sliding_window") or 0)
    w.u32("general.quantization_version", 2)
    _decoder_tokenizer(w, cfg, model_dir, vocab_gguf)

    dtypes = safetensors_dtypes(os.path.join(model_dir, "model.safetensors"))
    w.tensor("token_embd.weight", W["model.embed_tokens.weight"], typ)
    if mt == "phi3":
        names = [("attn_norm", "input_layernorm"), ("attn_qkv", "self_attn.qkv_proj"), ("attn_output", "self_attn.o_proj"),
                 ("ffn_norm", "post_attention_layernorm"), ("ffn_up", "mlp.gate_up_proj"), ("ffn_down", "mlp.down_proj")]
    else:
        names = [("attn_norm", "input_layernorm"), ("attn_q", "self_attn.q_proj"), ("attn_k", "self_attn.k_proj"),
                 ("attn_v", "self_attn.v_proj"), ("attn_output", "self_attn.o_proj")]
        if mt == "gemma2":
            names += [("post_attention_norm", "post_attention_layernorm"), ("ffn_norm", "pre_feedforward_layernorm"),
                      ("post_ffw_norm", "post_feedforward_layernorm")]
        else:
            names += [("ffn_norm", "post_attention_layernorm")]
        names += [("ffn_gate", "mlp.gate_proj"), ("ffn_up", "mlp.up_proj"), ("ffn_down", "mlp.down_proj")]
    for l in range(L):
        for g, h in names:
            key = f"model.layers.{l}.{h}.weight"
            a = W[key]
            if gemma and key.endswith("norm.weight"):
                a = gemma_norm_plus_one(a, dtypes[key])
            w.tensor(f"blk.{l}.{g}.weight", a, typ)
    norm = W["model.norm.weight"]
    w.tensor("output_norm.weight", gemma_norm_plus_one(norm, dtypes["model.norm.weight"]) if gemma else norm, "f32")
    if mt == "phi3":
        w.tensor("output.weight", W["lm_head.weight"], typ)


def read_gguf(path, tensors=True):
    """A GGUF file → {"version", "kv": key → value (arrays as lists, numeric arrays as numpy), "kv_raw": key → the
    entry's bytes, "tensors": name → {"type": ggml type, "shape": PyTorch order, "data": bytes}}."""
    d = open(path, "rb").read()
    if d[:4] != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    version, n_t, n_kv = struct.unpack_from("<IQQ", d, 4)
    o = 24

    def string(o):
        n = struct.unpack_from("<Q", d, o)[0]
        return d[o + 8:o + 8 + n].decode("utf-8"), o + 8 + n

    def value(t, o):
        if t in SCALAR:
            return struct.unpack_from(SCALAR[t], d, o)[0], o + struct.calcsize(SCALAR[t])
        if t == T_STR:
            return string(o)
        if t == T_ARR:
            et, n = struct.unpack_from("<IQ", d, o)
            o += 12
            if et in SCALAR:
                sz = struct.calcsize(SCALAR[et])
                return np.frombuffer(d, np.dtype(SCALAR[et]), n, o).copy(), o + n * sz
            items = []
            for _ in range(n):
                v, o = value(et, o)
                items.append(v)
            return items, o
        raise ValueError(f"{path}: GGUF value type {t}")
    kv, kv_raw = {}, {}
    for _ in range(n_kv):
        start = o
        k, o = string(o)
        t = struct.unpack_from("<I", d, o)[0]
        kv[k], o = value(t, o + 4)
        kv_raw[k] = d[start:o]
    out = {"version": version, "kv": kv, "kv_raw": kv_raw, "tensors": {}}
    if not tensors:
        return out
    infos = []
    for _ in range(n_t):
        name, o = string(o)
        nd = struct.unpack_from("<I", d, o)[0]
        ne = struct.unpack_from(f"<{nd}q", d, o + 4)
        typ, off = struct.unpack_from("<IQ", d, o + 4 + 8 * nd)
        o += 4 + 8 * nd + 12
        infos.append((name, typ, list(reversed(ne)), off))
    align = int(kv.get("general.alignment", 32))
    base = o + (-o) % align
    for name, typ, shape, off in infos:
        n = int(np.prod(shape))
        size = {0: 4 * n, 1: 2 * n, 30: 2 * n}.get(typ)
        if size is None:
            size = gq.BY_GGML_TYPE[typ].row_bytes(shape[-1]) * (n // shape[-1])
        out["tensors"][name] = {"type": typ, "shape": shape, "data": d[base + off:base + off + size]}
    return out


def tensor_f32(t):
    """One of read_gguf's tensors as a float32 array of its PyTorch shape."""
    n = int(np.prod(t["shape"]))
    if t["type"] == 0:
        a = np.frombuffer(t["data"], np.float32, n)
    elif t["type"] == 1:
        a = np.frombuffer(t["data"], np.float16, n).astype(np.float32)
    elif t["type"] == 30:
        a = (np.frombuffer(t["data"], np.uint16, n).astype(np.uint32) << 16).view(np.float32)
    else:
        a = gq.BY_GGML_TYPE[t["type"]].dequantize(t["data"], n)
    return np.asarray(a, np.float32).reshape(t["shape"])


def write_modernbert(w, cfg, W, model_dir, typ):
    """ModernBERT (model_type modernbert) as llama.cpp's convert_hf_to_gguf.py ModernBertModel writes it
    (general.architecture "modern-bert"; the names are listed in src/models/modernbert.cpp with their llama.cpp
    sources): TextModel's and BertModel's keys plus attention.sliding_window (local_attention),
    .attention.sliding_window_pattern (global_attn_every_n_layers), .rope.freq_base (global_rope_theta),
    .rope.freq_base_swa (local_rope_theta), .vocab_size; the "model." prefix stripped and the tensors renamed by
    gguf-py's tensor_mapping (token_embd, token_embd_norm, output_norm, blk.N.{attn_norm, attn_qkv, attn_output,
    ffn_up, ffn_down, ffn_norm}, cls = head.dense, cls.norm = head.norm, cls.output = classifier); the tokenizer as
    _set_vocab_gpt2 with tokenizer.ggml.pre "modern-bert" (llama.cpp's name for ModernBERT's byte-level BPE) and
    add_bos/add_eos/add_sep true. llama.cpp has no name for the masked-LM decoder's bias: it keeps its Hugging Face
    name, decoder.bias (the decoder weight is tied to token_embd and not written)."""
    a = "modern-bert."
    w.u32(a + "context_length", cfg.get("max_position_embeddings", 8192))
    w.u32(a + "embedding_length", cfg["hidden_size"])
    w.u32(a + "feed_forward_length", cfg["intermediate_size"])
    w.u32(a + "block_count", cfg["num_hidden_layers"])
    w.u32(a + "attention.head_count", cfg["num_attention_heads"])
    w.f32(a + "attention.layer_norm_epsilon", cfg.get("norm_eps", 1e-5))
    rp = cfg.get("rope_parameters") or {}
    w.f32(a + "rope.freq_base", (rp.get("full_attention") or {}).get("rope_theta", cfg.get("global_rope_theta", 160000.0)))
    w.f32(a + "rope.freq_base_swa", (rp.get("sliding_attention") or {}).get("rope_theta", cfg.get("local_rope_theta", 10000.0)))
    w.bool(a + "attention.causal", False)
    w.u32(a + "attention.sliding_window", cfg.get("local_attention", 128))
    w.u32(a + "attention.sliding_window_pattern", cfg.get("global_attn_every_n_layers", 3))
    w.u32(a + "vocab_size", cfg["vocab_size"])
    if cfg.get("hidden_activation", "gelu") != "gelu":
        raise SystemExit("modernbert: only hidden_activation gelu is written")
    # tokenizer: tokenizer.json's byte-level BPE; ids missing up to vocab_size are "[PADi]" (unused, type 5)
    tj = json.load(open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8"))
    if tj["model"]["type"] != "BPE":
        raise SystemExit("modernbert: only a byte-level BPE tokenizer.json is written")
    vocab = dict(tj["model"]["vocab"])
    added = {t["id"]: t for t in tj.get("added_tokens", [])}
    for i, t in added.items():
        vocab[t["content"]] = i
    rev = {i: t for t, i in vocab.items()}
    n = max(cfg["vocab_size"], max(rev) + 1)
    tokens = [rev.get(i, f"[PAD{i}]") for i in range(n)]
    types = [5 if i not in rev else (3 if added[i].get("special") else 4) if i in added else 1 for i in range(n)]
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    w.str("tokenizer.ggml.model", "gpt2")
    w.str("tokenizer.ggml.pre", "modern-bert")
    w.strs("tokenizer.ggml.tokens", tokens)
    w.i32s("tokenizer.ggml.token_type", types)
    w.strs("tokenizer.ggml.merges", merges)
    # gguf-py's SpecialVocab: tokenizer_config.json's *_token, else config.json's *_token_id
    tc_path = os.path.join(model_dir, "tokenizer_config.json")
    tc = json.load(open(tc_path)) if os.path.exists(tc_path) else {}
    for role, key in (("bos", "bos"), ("eos", "eos"), ("unk", "unknown"), ("sep", "seperator"), ("pad", "padding"),
                      ("cls", "cls"), ("mask", "mask")):
        tok = tc.get(role + "_token")
        tok = tok.get("content") if isinstance(tok, dict) else tok
        tid = vocab.get(tok) if tok is not None else cfg.get(role + "_token_id")
        if tid is not None:
            w.u32(f"tokenizer.ggml.{key}_token_id", tid)
    w.bool("tokenizer.ggml.add_bos_token", True)
    w.bool("tokenizer.ggml.add_eos_token", True)
    w.bool("tokenizer.ggml.add_sep_token", True)
    # tensors
    p = lambda n: W["model." + n] if "model." + n in W else W[n]
    w.tensor("token_embd.weight", p("embeddings.tok_embeddings.weight"), typ)
    vec = lambda g, h: [w.tensor(f"{g}.{wb}", p(f"{h}.{wb}"), "f32") for wb in ("weight", "bias") if "model." + f"{h}.{wb}" in W or f"{h}.{wb}" in W]
    vec("token_embd_norm", "embeddings.norm")
    vec("output_norm", "final_norm")
    for l in range(cfg["num_hidden_layers"]):
        for g, h in (("attn_norm", "attn_norm"), ("attn_qkv", "attn.Wqkv"), ("attn_output", "attn.Wo"), ("ffn_up", "mlp.Wi"),
                     ("ffn_down", "mlp.Wo"), ("ffn_norm", "mlp_norm")):
            for wb in ("weight", "bias"):
                n = f"layers.{l}.{h}.{wb}"
                if "model." + n in W or n in W:
                    t = p(n)
                    w.tensor(f"blk.{l}.{g}.{wb}", t, typ if t.ndim == 2 else "f32")
    for g, h in (("cls", "head.dense"), ("cls.norm", "head.norm"), ("cls.output", "classifier")):
        for wb in ("weight", "bias"):
            if f"{h}.{wb}" in W:
                t = W[f"{h}.{wb}"]
                w.tensor(f"{g}.{wb}", t, typ if t.ndim == 2 else "f32")
    if "decoder.bias" in W:
        w.tensor("decoder.bias", W["decoder.bias"], "f32")
    classifier_labels(w, cfg, "modern-bert", W)


def classifier_labels(w, cfg, arch, W):
    """A classifier's labels as convert_hf_to_gguf.py's BertModel writes them: {arch}.classifier.output_labels from
    id2label in id order, none when they are AutoConfig's two placeholders (LABEL_0, LABEL_1); llama.cpp then names
    the classifier cls.output (without labels it would call it cls, which this exporter refuses)."""
    if "classifier.weight" not in W:
        return
    labels = {int(k): v for k, v in (cfg.get("id2label") or {}).items()}
    if not labels or (len(labels) == 2 and labels[0] == "LABEL_0"):
        raise SystemExit("a classifier with placeholder labels: llama.cpp's converter names it cls, not cls.output; not written")
    w.strs(arch + ".classifier.output_labels", [labels[i] for i in range(len(labels))])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--type", choices=list(GGML), default="q8_0")
    ap.add_argument("--tensor-type", action="append", default=[], metavar="REGEX=TYPE",
                    help="per-tensor type: the first REGEX found in a tensor's name chooses its TYPE (repeatable)")
    ap.add_argument("--ref-q8_0", action="store_true", help="q8_0 with llama.cpp's rounding (ties away from zero)")
    ap.add_argument("--name", default=None)
    ap.add_argument("--vocab-gguf", default=None, help="decoders: copy the tokenizer.ggml.* entries of this GGUF file")
    a = ap.parse_args()
    overrides = []
    for spec in a.tensor_type:
        pat, sep, typ = spec.rpartition("=")
        if not sep or not pat or typ not in GGML:
            ap.error(f"--tensor-type {spec!r}: expected REGEX=TYPE with TYPE one of {', '.join(GGML)}")
        overrides.append((pat, typ))
    w = convert(a.model_dir, a.out, a.type, overrides, a.ref_q8_0, a.name, a.vocab_gguf)
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes, {a.type}; tensors by type: "
          + ", ".join(f"{t} {n}" for t, n in sorted(w.written.items())) + ")")


def convert(model_dir, out, typ="q8_0", tensor_types=(), ref_q8_0=False, name=None, vocab_gguf=None):
    """Writes OUT from the Hugging Face folder MODEL_DIR (see the module docstring); returns the Writer."""
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    W = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    get = lambda *names: next(W[n] for n in names if n in W)
    arch = cfg["model_type"]
    decoder = arch in DECODER_ARCH
    w = Writer(tensor_types, ref_q8_0 or decoder)
    w.str("general.architecture", DECODER_ARCH[arch] if decoder else "modern-bert" if arch == "modernbert" else arch)
    w.str("general.name", name or os.path.basename(os.path.normpath(model_dir)))
    if typ in FILE_TYPE:
        w.u32("general.file_type", FILE_TYPE[typ])
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
        vocab = [l.rstrip("\r\n") for l in open(os.path.join(model_dir, "vocab.txt"), encoding="utf-8")]
        tokens = [t if (t.startswith("[") and t.endswith("]")) else (t[2:] if t.startswith("##") else "\u2581" + t) for t in vocab]
        w.str("tokenizer.ggml.model", "bert")
        w.strs("tokenizer.ggml.tokens", tokens)
        w.i32s("tokenizer.ggml.token_type", [3 if t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") else 1 for t in vocab])
        for key, tok in (("unknown", "[UNK]"), ("seperator", "[SEP]"), ("padding", "[PAD]"), ("cls", "[CLS]"), ("mask", "[MASK]")):
            w.u32(f"tokenizer.ggml.{key}_token_id", vocab.index(tok))
        p = lambda n: get("bert." + n, n)
        w.tensor("token_embd.weight", p("embeddings.word_embeddings.weight"), typ)
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
                    w.tensor(f"blk.{l}.{g}.{wb}", p(f"encoder.layer.{l}.{h}.{wb}"), typ)
        # a classifier as llama.cpp's BertModel writes it: classifier → cls.output with its labels; the pooler dropped
        if "classifier.weight" in W:
            for wb in ("weight", "bias"):
                w.tensor(f"cls.output.{wb}", W[f"classifier.{wb}"], typ if wb == "weight" else "f32")
            classifier_labels(w, cfg, "bert", W)
        if "cls.predictions.bias" in W:  # a masked LM; a BertModel (embeddings) has no head
            for n in ("cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias",
                      "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias", "cls.predictions.bias"):
                w.tensor(n, W[n], typ)
        # a sentence-transformers folder's pooling, as llama.cpp's convert_hf_to_gguf writes it (1 mean, 2 cls)
        pool = os.path.join(model_dir, "1_Pooling", "config.json")
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
        enc = json.load(open(os.path.join(model_dir, "vocab.json"), encoding="utf-8"))
        tokens = [None] * (max(enc.values()) + 1)
        for t, i in enc.items():
            tokens[i] = t
        merges = [l.rstrip("\r\n") for l in open(os.path.join(model_dir, "merges.txt"), encoding="utf-8")]
        merges = [m for i, m in enumerate(merges) if m and not (i == 0 and m.startswith("#version"))]
        w.str("tokenizer.ggml.model", "gpt2")
        w.strs("tokenizer.ggml.tokens", tokens)
        w.i32s("tokenizer.ggml.token_type", [3 if t == "<|endoftext|>" else 1 for t in tokens])
        w.strs("tokenizer.ggml.merges", merges)
        if "<|endoftext|>" in enc:
            w.u32("tokenizer.ggml.bos_token_id", enc["<|endoftext|>"])
            w.u32("tokenizer.ggml.eos_token_id", enc["<|endoftext|>"])
        p = lambda n: get("transformer." + n, n)
        w.tensor("token_embd.weight", p("wte.weight"), typ)
        w.tensor("position_embd.weight", p("wpe.weight"), "f32")
        w.tensor("output_norm.weight", p("ln_f.weight"), "f32")
        w.tensor("output_norm.bias", p("ln_f.bias"), "f32")
        layer = [("attn_norm", "ln_1"), ("attn_qkv", "attn.c_attn"), ("attn_output", "attn.c_proj"), ("ffn_norm", "ln_2"),
                 ("ffn_up", "mlp.c_fc"), ("ffn_down", "mlp.c_proj")]
        for l in range(cfg["n_layer"]):
            for g, h in layer:
                wt = p(f"h.{l}.{h}.weight")
                w.tensor(f"blk.{l}.{g}.weight", wt.T if wt.ndim == 2 else wt, typ)  # Conv1D (in, out) → (out, in)
                w.tensor(f"blk.{l}.{g}.bias", p(f"h.{l}.{h}.bias"), "f32")
    elif arch == "modernbert":
        write_modernbert(w, cfg, W, model_dir, typ)
    elif decoder:
        write_decoder(w, cfg, W, model_dir, typ, vocab_gguf)
    else:
        raise SystemExit(f"model_type {arch} is not supported")
    w.write(out)
    return w




if __name__ == "__main__":
    main()
