#!/usr/bin/python3
"""The benchmark's models: random weights (seeded) with the shapes of BERT-base (fill-mask), GPT-2 small,
all-MiniLM-L6-v2 (feature-extraction) and DistilBERT-base (text-classification, question-answering), the same weights
in every format the engines read. Speed does not depend on the values.

  /usr/bin/python3 bench/peers/make_models.py OUT_DIR        (Debian's python3: python3-torch, python3-onnx)

OUT_DIR/bert-base, OUT_DIR/gpt2-base   Hugging Face folders (tools/reference/make_fixtures.py --size base)
OUT_DIR/onnx/bert-fp32.onnx            input_ids, attention_mask, token_type_ids (1, T), mask_positions (M)
                                       → logits (1, M, V): the masked-LM head at the masked positions only, as
                                       wasmformer computes it (a stock export computes it at all T positions)
OUT_DIR/onnx/gpt2-fp32.onnx            input_ids (1, T), past_key_values.{i}.key/value (1, H, P, D)
                                       → logits (1, 1, V) of the last position, present.{i}.key/value
OUT_DIR/onnx/*-int8.onnx               the same, dynamically quantized as onnxruntime's
                                       quantize_dynamic(weight_type=QInt8) writes it (see quantize_int8)
OUT_DIR/gguf/gpt2-{f32,q8_0,q4_0}.gguf llama.cpp's gpt2 names (tools/reference/gguf_export.py)
OUT_DIR/gguf/bert-q8_0.gguf            bert-base as llama.cpp's "bert" architecture, Q8_0 matrices (norms, biases and the
                                       position / token-type embeddings F32), its masked-LM head under Hugging Face's
                                       names (cls.predictions.*): the 8-bit file the bert-q8-load row reads
OUT_DIR/minilm-st                      a sentence-transformers folder (modules.json, 1_Pooling mean, 2_Normalize) around
                                       a BertModel with all-MiniLM-L6-v2's shape: 6 layers, 384, 12 heads, 1536, 512
                                       positions (tools/reference/encoders.py; bert-base-uncased's vocab.txt)
OUT_DIR/distilbert-cls, distilbert-qa  DistilBertForSequenceClassification (2 labels) / DistilBertForQuestionAnswering
                                       with DistilBERT-base's shape: 6 layers, 768, 12 heads, 3072, 512 positions
OUT_DIR/onnx/minilm-fp32.onnx          input_ids, attention_mask, token_type_ids (B, T) → last_hidden_state (B, T, E),
                                       as Optimum exports a BertModel for transformers.js (pooling is done in JS)
OUT_DIR/onnx/distilbert-cls-fp32.onnx  input_ids, attention_mask (B, T) → logits (B, 2)
OUT_DIR/onnx/distilbert-qa-fp32.onnx   input_ids, attention_mask (B, T) → start_logits, end_logits (B, T)
OUT_DIR/llama-smollm2                  a LlamaForCausalLM folder with SmolLM2-135M's shape (hidden 576, 30 layers, 9 heads,
                                       3 KV heads, intermediate 1536, rope_theta 1e5, rms eps 1e-5, tied embeddings,
                                       context 2048), BF16 as SmolLM2 is stored, but GPT-2's vocabulary (50257 tokens,
                                       not SmolLM2's 49152; llama.cpp's ggml-vocab-gpt-2.gguf)
OUT_DIR/qwen2-0.5b                     a Qwen2ForCausalLM folder with Qwen2.5-0.5B's shape (hidden 896, 24 layers, 14 heads,
                                       2 KV heads, intermediate 4864, q/k/v biases, rope_theta 1e6, rms eps 1e-6, tied,
                                       context 32768), BF16, GPT-2's vocabulary (not Qwen's 151936)
OUT_DIR/gguf/llama-{f32,q8_0,q4_0,q4_k_m}.gguf, qwen2-{q8_0,q4_0,q4_k_m}.gguf
                                       llama.cpp's "llama" (Q/K permuted) and "qwen2" architectures with the tokenizer.ggml.*
                                       entries of ggml-vocab-gpt-2.gguf (tools/reference/gguf_export.py --vocab-gguf)
Each file is made only if it is missing.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
REF = os.path.join(ROOT, "tools", "reference")
sys.path.insert(0, REF)
import encoders  # noqa: E402
import make_encoder_fixtures as fixtures  # noqa: E402
import models  # noqa: E402
import safetensors_io  # noqa: E402
import tokenizers as byte_bpe  # noqa: E402  (tools/reference/tokenizers.py, not Hugging Face's package)

OPSET = 17  # LayerNormalization is an ONNX op from 17 on


def load(folder, cls):
    m = cls(json.load(open(os.path.join(folder, "config.json"))))
    m.load_state_dict(safetensors_io.load(os.path.join(folder, "model.safetensors")))
    return m.eval()


class BertFill(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask, token_type_ids, mask_positions):
        h, _, _ = self.m.encode(input_ids, attention_mask.bool(), token_type_ids)
        return self.m.mlm_logits(h[:, mask_positions])


class GPT2Step(torch.nn.Module):
    """One forward with a KV cache; logits of the last position only (GPT2LMHeadModel's forward, models.py)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, *past):
        t = self.m.transformer
        p0 = past[0].shape[2]
        x = t.wte(input_ids) + t.wpe(torch.arange(p0, p0 + input_ids.shape[1])[None, :])
        presents = []
        for i, block in enumerate(t.h):
            x, (k, v), _ = block(x, (past[2 * i], past[2 * i + 1]))
            presents += [k, v]
        return (t.ln_f(x[:, -1:]) @ t.wte.weight.T, *presents)


def export_bert(folder, out):
    m = BertFill(load(folder, models.BertForMaskedLM))
    T = 16
    ids = torch.randint(1000, 2000, (1, T))
    args = (ids, torch.ones(1, T, dtype=torch.long), torch.zeros(1, T, dtype=torch.long), torch.tensor([3]))
    seq = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(m, args, out, opset_version=OPSET, do_constant_folding=True,
                          input_names=["input_ids", "attention_mask", "token_type_ids", "mask_positions"], output_names=["logits"],
                          dynamic_axes={"input_ids": seq, "attention_mask": seq, "token_type_ids": seq, "mask_positions": {0: "masks"},
                                        "logits": {0: "batch", 1: "masks"}})


def export_gpt2(folder, out):
    gm = load(folder, models.GPT2LMHeadModel)
    c = gm.config
    L, H, D = c["n_layer"], c["n_head"], c["n_embd"] // c["n_head"]
    m = GPT2Step(gm)
    P, T = 4, 3
    past = [torch.randn(1, H, P, D) for _ in range(2 * L)]
    names = [f"past_key_values.{i}.{kv}" for i in range(L) for kv in ("key", "value")]
    presents = [n.replace("past_key_values", "present") for n in names]
    dyn = {"input_ids": {0: "batch", 1: "tokens"}, "logits": {0: "batch"}}
    dyn.update({n: {0: "batch", 2: "past"} for n in names})
    dyn.update({n: {0: "batch", 2: "total"} for n in presents})
    with torch.no_grad():
        torch.onnx.export(m, (torch.randint(1000, 2000, (1, T)), *past), out, opset_version=OPSET, do_constant_folding=True,
                          input_names=["input_ids", *names], output_names=["logits", *presents], dynamic_axes=dyn)


# ------------------------------------------------------------------------------------------------ encoders
MINILM = dict(fixtures.BERT, hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536,
              max_position_embeddings=512)
DISTIL_BASE = dict(fixtures.DISTIL, dim=768, n_layers=6, n_heads=12, hidden_dim=3072, max_position_embeddings=512)


def make_minilm(out):
    """all-MiniLM-L6-v2's layout: the BertModel at the top, then mean pooling and Normalize (modules.json)."""
    fixtures.make_model(out, "BertModel", "bert", MINILM, 21)
    fixtures.write_wordpiece_files(out, {"model_max_length": 512})
    fixtures.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                   {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
                  os.path.join(out, "modules.json"))
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    os.makedirs(os.path.join(out, "2_Normalize"), exist_ok=True)
    fixtures.dump({"word_embedding_dimension": MINILM["hidden_size"], "pooling_mode_cls_token": False,
                   "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
                   "pooling_mode_lasttoken": False, "include_prompt": True}, os.path.join(out, "1_Pooling", "config.json"))
    fixtures.dump({"max_seq_length": 256, "do_lower_case": False}, os.path.join(out, "sentence_bert_config.json"))


def make_distil_cls(out):
    # the classifier scaled up (as the test fixtures do) so that the two random logits are far apart: a decisive label
    fixtures.make_model(out, "DistilBertForSequenceClassification", "distilbert", DISTIL_BASE, 22,
                        fixtures.labels_cfg(["NEGATIVE", "POSITIVE"], "single_label_classification"), {"classifier.weight": 4.0})
    fixtures.write_wordpiece_files(out, {"model_max_length": 512})


def make_distil_qa(out):
    # qa_outputs scaled up: peaked start and end distributions, one clear best span
    fixtures.make_model(out, "DistilBertForQuestionAnswering", "distilbert", DISTIL_BASE, 23, None, {"qa_outputs.weight": 10.0})
    fixtures.write_wordpiece_files(out, {"model_max_length": 512})


def made_folder(folder, make):
    if os.path.exists(os.path.join(folder, "model.safetensors")):
        return
    make(folder)
    print("  made", os.path.relpath(folder, ROOT), flush=True)


def load_encoder(folder):
    m = encoders.build(json.load(open(os.path.join(folder, "config.json"))) | {"num_labels": 2})
    m.load_state_dict(safetensors_io.load(os.path.join(folder, "model.safetensors")))
    return m.eval()


class LastHidden(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.m.hidden_states(input_ids, attention_mask, token_type_ids)[-1]


class Head(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m(input_ids, attention_mask)[1]


def export_encoder(folder, out):
    m = load_encoder(folder)
    B, T = 2, 16
    ids, mask = torch.randint(1000, 2000, (B, T)), torch.ones(B, T, dtype=torch.long)
    mask[1, 10:] = 0
    seq = {0: "batch", 1: "tokens"}
    if isinstance(m, encoders.BertModel):
        names, args, outs = ["input_ids", "attention_mask", "token_type_ids"], (ids, mask, torch.zeros(B, T, dtype=torch.long)), ["last_hidden_state"]
        wrapped, dyn_out = LastHidden(m), {"last_hidden_state": seq}
    elif isinstance(m, encoders.DistilBertForQuestionAnswering):
        names, args, outs = ["input_ids", "attention_mask"], (ids, mask), ["start_logits", "end_logits"]
        wrapped, dyn_out = Head(m), {"start_logits": seq, "end_logits": seq}
    else:
        names, args, outs = ["input_ids", "attention_mask"], (ids, mask), ["logits"]
        wrapped, dyn_out = Head(m), {"logits": {0: "batch"}}
    with torch.no_grad():
        torch.onnx.export(wrapped, args, out, opset_version=OPSET, do_constant_folding=True, input_names=names,
                          output_names=outs, dynamic_axes={**{n: seq for n in names}, **dyn_out})


def quantize_int8(src, dst):
    """Dynamic int8 quantization with onnx alone (Debian has no onnxruntime Python package), in the graph pattern that
    onnxruntime's quantize_dynamic(weight_type=QInt8, per_channel=False) writes and its optimizer fuses at load
    (into DynamicQuantizeMatMul / MatMulIntegerToFloat):
        x → DynamicQuantizeLinear → (x_q uint8, x_scale, x_zero_point)
        MatMulInteger(x_q, W_q int8, x_zero_point, 0) → Cast(float) → Mul(x_scale · W_scale)
    Every MatMul / Gemm whose weight is a 2-D float initializer is quantized (symmetric, one scale per matrix; Gemm
    becomes MatMul + Add); embedding Gathers stay fp32, as quantize_dynamic leaves them by default.
    The MatMuls inside control-flow subgraphs are quantized too — the two branches of a merged decoder's `If`
    (bench/peers/make_marian.py), whose weights are the main graph's initializers — as quantize_dynamic does with
    extra_options={"EnableSubgraph": True}, which transformers.js's conversion script (scripts/convert.py) passes: each
    subgraph gets its own DynamicQuantizeLinear nodes, and a weight that several MatMuls share (both branches) is
    quantized once, into the main graph's initializers, which every subgraph sees. Returns the number of MatMuls
    quantized, and checks that no MatMul on a 2-D float initializer is left."""
    m = onnx.load(src)
    new_inits, used, qweights = [], set(), {}  # qweights: (weight name, transposed) → the quantized weight's name
    count = [0]

    def quantize_graph(g, outer, prefix):
        # prefix: "" for the main graph (its names as before), "<node>/<attribute>/" for a subgraph
        inits = {**outer, **{i.name: i for i in g.initializer}}
        nodes, quantized_inputs = [], {}

        def quant_input(name):
            if name not in quantized_inputs:
                q = (prefix + name + "_q8", prefix + name + "_scale", prefix + name + "_zp")
                nodes.append(helper.make_node("DynamicQuantizeLinear", [name], list(q), name=prefix + name + "_DQL"))
                quantized_inputs[name] = q
            return quantized_inputs[name]

        def qmatmul(x, key, wname, w, out, tag):
            if key not in qweights:
                scale = float(np.abs(w).max() / 127.0) or 1.0
                new_inits.extend([numpy_helper.from_array(np.clip(np.round(w / scale), -127, 127).astype(np.int8), wname + "_quantized"),
                                  numpy_helper.from_array(np.array(scale, np.float32), wname + "_scale"),
                                  numpy_helper.from_array(np.array(0, np.int8), wname + "_zero_point")])
                qweights[key] = wname
            wname = qweights[key]
            xq, xs, xz = quant_input(x)
            nodes.extend([
                helper.make_node("MatMulInteger", [xq, wname + "_quantized", xz, wname + "_zero_point"], [tag + "_i32"], name=tag + "_MatMulInteger"),
                helper.make_node("Cast", [tag + "_i32"], [tag + "_f"], to=TensorProto.FLOAT, name=tag + "_Cast"),
                helper.make_node("Mul", [xs, wname + "_scale"], [tag + "_scales"], name=tag + "_ScaleMul"),
                helper.make_node("Mul", [tag + "_f", tag + "_scales"], [out], name=tag + "_Mul")])
            count[0] += 1

        for k, n in enumerate(g.node):
            for a in n.attribute:  # If / Loop / Scan bodies first (they see this graph's names and initializers)
                if a.type == onnx.AttributeProto.GRAPH:
                    quantize_graph(a.g, inits, f"{prefix}{n.name or k}/{a.name}/")
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for j, sub in enumerate(a.graphs):
                        quantize_graph(sub, inits, f"{prefix}{n.name or k}/{a.name}.{j}/")
            w = inits.get(n.input[1]) if len(n.input) > 1 else None
            if n.op_type == "MatMul" and w is not None and len(w.dims) == 2:
                qmatmul(n.input[0], (w.name, False), f"{prefix}{w.name}_{k}", numpy_helper.to_array(w).astype(np.float32), n.output[0], f"{prefix}q{k}")
                used.add(w.name)
                continue
            if n.op_type == "Gemm" and w is not None:
                at = {a.name: helper.get_attribute_value(a) for a in n.attribute}
                if not at.get("transA", 0) and at.get("alpha", 1.0) == 1.0 and at.get("beta", 1.0) == 1.0:
                    wt = numpy_helper.to_array(w).astype(np.float32)
                    tb = bool(at.get("transB", 0))
                    mm = n.output[0] + "_mm" if len(n.input) > 2 else n.output[0]
                    qmatmul(n.input[0], (w.name, tb), f"{prefix}{w.name}_{k}", wt.T.copy() if tb else wt, mm, f"{prefix}q{k}")
                    if len(n.input) > 2:
                        nodes.append(helper.make_node("Add", [mm, n.input[2]], [n.output[0]], name=f"{prefix}q{k}_BiasAdd"))
                    used.add(w.name)
                    continue
            nodes.append(n)
        # each DynamicQuantizeLinear stands right before its first consumer, after its producer: the order stays valid
        del g.node[:]
        g.node.extend(nodes)

    def graphs(g):
        yield g
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    yield from graphs(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sub in a.graphs:
                        yield from graphs(sub)

    quantize_graph(m.graph, {}, "")
    # the float weights that no node reads any more (every graph's nodes, subgraphs included) are dropped
    still = {i for sg in graphs(m.graph) for n in sg.node for i in n.input} | {o.name for sg in graphs(m.graph) for o in sg.output}
    for nth, sg in enumerate(graphs(m.graph)):  # the main graph first: it takes the quantized weights
        keep = [i for i in sg.initializer if i.name not in used or i.name in still]
        del sg.initializer[:]
        sg.initializer.extend(keep + (new_inits if nth == 0 else []))
    float_inits = {i.name for sg in graphs(m.graph) for i in sg.initializer if i.data_type == TensorProto.FLOAT and len(i.dims) == 2}
    left = [n.name for sg in graphs(m.graph) for n in sg.node if n.op_type == "MatMul" and n.input[1] in float_inits]
    assert not left, f"{src}: MatMul nodes on float weights left: {left[:5]}"
    onnx.save(m, dst)
    return count[0]


# ------------------------------------------------------------------------------------------ Llama-style decoders
GPT2_VOCAB_GGUF = os.path.join(ROOT, "tests", "data", "tokenizers", "llamacpp", "ggml-vocab-gpt-2.gguf")
GPT2_VOCAB_SIZE, GPT2_EOT = 50257, 50256
SMOLLM2 = {  # SmolLM2-135M's config.json but the vocabulary (and its special ids) and the context the bench uses
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": GPT2_EOT, "eos_token_id": GPT2_EOT, "hidden_act": "silu", "hidden_size": 576,
    "initializer_range": 0.041666666666666664, "intermediate_size": 1536, "max_position_embeddings": 2048,
    "mlp_bias": False, "num_attention_heads": 9, "num_hidden_layers": 30, "num_key_value_heads": 3,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 100000.0,
    "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": GPT2_VOCAB_SIZE,
}
QWEN25_05B = {  # Qwen2.5-0.5B's config.json but the vocabulary
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "attention_dropout": 0.0, "bos_token_id": GPT2_EOT,
    "eos_token_id": GPT2_EOT, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
    "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24, "num_attention_heads": 14,
    "num_hidden_layers": 24, "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_scaling": None,
    "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
    "use_cache": True, "use_sliding_window": False, "vocab_size": GPT2_VOCAB_SIZE,
}
# (seed, embedding std, layer matrices' and biases' std, final norm scale): norms 1 + 0.1·N(0,1), the final one times
# the scale. Random decoders of this depth are either ordered (weak layers: greedy decoding falls into a cycle of one
# to three tokens — HF's initializer_range does that here) or chaotic (strong layers: any rounding grows through the
# 30 layers, so that two engines' logits part by nats although both are right). These sit just on the ordered side
# of that edge (layer std · √hidden ≈ 0.77 for both): greedy decoding moves on, Q8_0 rounding of every weight moves
# the log-probabilities by about 0.1 nats (and two engines on the same file by much less), and the final norm spreads
# the tied head's logits like a trained model's (std ≈ 5) without a large input embedding, which would make the last
# token win again.
DECODER_INIT = {"llama-smollm2": (31, 0.05, 0.032, 4.0), "qwen2-0.5b": (32, 0.04, 0.0257, 4.0)}


def bf16_round(a):
    """f32 → the nearest BF16 (ties to even), returned as f32 (what the folder stores, exactly)."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32)
    return ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)).view(np.float32)


def write_safetensors_bf16(path, tensors):
    """name → f32 array already BF16-exact; written as BF16 (sorted names, header padded to 8 bytes)."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name in sorted(tensors):
        n = tensors[name].size * 2
        header[name] = {"dtype": "BF16", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + n]}
        offset += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h)
        for name in sorted(tensors):
            f.write((np.ascontiguousarray(tensors[name], np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes())


def gpt2_broken_utf8_ids(out):
    """GPT-2's tokens whose bytes are not whole UTF-8 by themselves (byte tokens, pieces of multi-byte characters)."""
    dec = dict(zip(*reversed(byte_bpe.bytes_to_unicode())))  # the printable character standing for each byte → the byte
    bad = []
    for t, i in json.load(open(os.path.join(out, "gpt2-base", "vocab.json"), encoding="utf-8")).items():
        if all(c in dec for c in t):
            try:
                bytes(dec[c] for c in t).decode("utf-8")
            except UnicodeDecodeError:
                bad.append(i)
    return bad


def decoder_weights(cfg, seed, emb_std, layer_std, norm_scale, silent=()):
    """Hugging Face names → f32 arrays (BF16-exact), random (seeded); the embedding rows of `silent` zero."""
    E, H, F, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    KV, D = cfg["num_key_value_heads"], cfg["hidden_size"] // cfg["num_attention_heads"]
    rng = np.random.default_rng(seed)
    n = lambda *shape: rng.standard_normal(shape, dtype=np.float32)
    W = {"model.embed_tokens.weight": emb_std * n(cfg["vocab_size"], E), "model.norm.weight": norm_scale * (1 + 0.1 * n(E))}
    for l in range(L):
        p = f"model.layers.{l}."
        W[p + "input_layernorm.weight"] = 1 + 0.1 * n(E)
        W[p + "post_attention_layernorm.weight"] = 1 + 0.1 * n(E)
        for name, shape in (("self_attn.q_proj", (H * D, E)), ("self_attn.k_proj", (KV * D, E)), ("self_attn.v_proj", (KV * D, E)),
                            ("self_attn.o_proj", (E, H * D)), ("mlp.gate_proj", (F, E)), ("mlp.up_proj", (F, E)),
                            ("mlp.down_proj", (E, F))):
            W[p + name + ".weight"] = layer_std * n(*shape)
            if cfg["model_type"] == "qwen2" and name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"):
                W[p + name + ".bias"] = layer_std * n(shape[0])
    W["model.embed_tokens.weight"][list(silent)] = 0
    return {k: bf16_round(v) for k, v in W.items()}


def bench_prompt_ids(out):
    """The generation rows' prompt as bench/run.mjs makes it: 128 words of GPT-2's vocabulary that are one token
    each (" word"), every 41st of vocab.json's in order."""
    vocab = json.load(open(os.path.join(out, "gpt2-base", "vocab.json"), encoding="utf-8"))
    words = [i for t, i in vocab.items() if re.fullmatch("\u0120[a-z]{4,}", t)]
    return [words[(i * 41) % len(words)] for i in range(128)]


def np_greedy(cfg, W, ids, n_new):
    """A float32 numpy forward pass with a KV cache (Hugging Face's semantics: RoPE on halves, GQA), greedy; returns
    the new ids and each step's top-1 − top-2 logit gap. A check that the random model does not repeat one token."""
    E, H, L, KV = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"], cfg["num_key_value_heads"]
    D, eps = E // H, cfg["rms_norm_eps"]
    inv = cfg["rope_theta"] ** (-np.arange(0, D, 2, dtype=np.float64) / D)
    rms = lambda x, w: x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w
    cache = [None] * L

    def rope(x, pos):
        ang = pos[:, None] * inv[None, :]
        c, s = np.cos(ang)[:, None, :].astype(np.float32), np.sin(ang)[:, None, :].astype(np.float32)
        a, b = x[..., :D // 2], x[..., D // 2:]
        return np.concatenate([a * c - b * s, a * s + b * c], -1)

    def lin(x, name):
        y = x @ W[name + ".weight"].T
        return y + W[name + ".bias"] if name + ".bias" in W else y

    def forward(new, p0):
        T, pos = len(new), np.arange(p0, p0 + len(new))
        x = W["model.embed_tokens.weight"][new]
        for l in range(L):
            p = f"model.layers.{l}."
            h = rms(x, W[p + "input_layernorm.weight"])
            q = rope(lin(h, p + "self_attn.q_proj").reshape(T, H, D), pos)
            k = rope(lin(h, p + "self_attn.k_proj").reshape(T, KV, D), pos)
            v = lin(h, p + "self_attn.v_proj").reshape(T, KV, D)
            if cache[l] is not None:
                k, v = np.concatenate([cache[l][0], k]), np.concatenate([cache[l][1], v])
            cache[l] = (k, v)
            kk, vv = np.repeat(k, H // KV, axis=1), np.repeat(v, H // KV, axis=1)
            s = np.einsum("thd,shd->hts", q, kk) / np.float32(np.sqrt(D))
            s = np.where((np.arange(k.shape[0])[None, :] > pos[:, None])[None], -np.inf, s)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            x = x + lin(np.einsum("hts,shd->thd", s, vv).reshape(T, H * D), p + "self_attn.o_proj")
            h = rms(x, W[p + "post_attention_layernorm.weight"])
            g = lin(h, p + "mlp.gate_proj")
            x = x + lin(g / (1 + np.exp(-g)) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
        return (rms(x[-1:], W["model.norm.weight"]) @ W["model.embed_tokens.weight"].T)[0]

    logits, out, gaps = forward(ids, 0), [], []
    for step in range(n_new):
        top = np.sort(logits)[-2:]
        gaps.append(float(top[1] - top[0]))
        out.append(int(logits.argmax()))
        if step + 1 < n_new:
            logits = forward([out[-1]], len(ids) + step)
    return out, gaps


def make_decoder(folder, cfg, out_dir):
    """The folder (config.json, model.safetensors in BF16, generation_config.json; no tokenizer files: the GGUF files
    take GPT-2's from llama.cpp's vocabulary file), and a check that greedy decoding of the bench prompt moves on."""
    # Tokens that are not whole UTF-8 by themselves get zero embeddings: with the tied head their logit is 0, far
    # below the best (std ≈ 5), so greedy decoding never emits them. A random model would otherwise string byte
    # tokens into text that is not UTF-8, on which wllama 3.8.1 fails (a RangeError in its worker: its server's JSON
    # of the tokens); a trained model emits them only inside whole characters.
    silent = gpt2_broken_utf8_ids(out_dir)
    W = decoder_weights(cfg, *DECODER_INIT[os.path.basename(folder)], silent=silent)
    ids = bench_prompt_ids(out_dir)
    new, gaps = np_greedy(cfg, W, ids, 16)
    print(f"  {os.path.basename(folder)}: {len(silent)} tokens that are not whole UTF-8 silenced; numpy f32 greedy of the "
          f"bench prompt {new} ({len(set(new))} distinct; "
          f"top-1 − top-2 logit gap min {min(gaps):.3f}, median {float(np.median(gaps)):.3f})", flush=True)
    if len(set(new)) < 12:
        raise SystemExit(f"{folder}: greedy decoding nearly repeats one token: {new}")
    os.makedirs(folder, exist_ok=True)
    fixtures.dump(cfg, os.path.join(folder, "config.json"))
    fixtures.dump({"bos_token_id": cfg["bos_token_id"], "eos_token_id": cfg["eos_token_id"]},
                  os.path.join(folder, "generation_config.json"))
    fixtures.dump({"prompt_ids": ids, "greedy_ids": new, "gaps": [round(g, 4) for g in gaps]},
                  os.path.join(folder, "bench-reference.json"))
    tmp = os.path.join(folder, "model.safetensors.part")
    write_safetensors_bf16(tmp, W)
    os.replace(tmp, os.path.join(folder, "model.safetensors"))


def q4_k_m_types(n_layer):
    """gguf_export.py's --tensor-type rules for llama-quantize's Q4_K_M mix of a dense decoder (no experts, not Falcon),
    following llama.cpp's llama_tensor_get_type (src/llama-quant.cpp, e.g. ggml-org/llama.cpp as of 2025):
      - default type Q4_K;
      - output.weight, or token_embd.weight when the embeddings are tied (no output.weight): Q6_K, but Q8_0 when its row
        length (ne[0]) is not a multiple of 256;
      - attn_v.weight and ffn_down: Q6_K in the layers where use_more_bits(i, n) holds, i.e. i < n/8 or i >= 7n/8 or
        (i - n/8) % 3 == 2 (integer division; i counts the tensors in layer order, so it is the layer's index);
      - every other matrix Q4_K; then any K-quant whose rows are not whole 256-element super-blocks falls back:
        Q4_K -> Q5_0, Q6_K -> Q8_0 (gguf_export's storage_type does the same).
    For SmolLM2-135M's shape (576 wide, 1536 FFN, 30 layers) that is what llama-quantize writes for SmolLM2's own
    Q4_K_M files: 576-column matrices (Q, K, V, O, gate, up, the tied embeddings) are not whole super-blocks, so
    they become Q5_0 (V in the use_more_bits layers and the embeddings Q8_0); only ffn_down (1536 columns) is a
    K-quant: Q6_K in layers 0-2, 5, 8, …, 23, 26-29 and Q4_K in the other 16."""
    more = [i for i in range(n_layer) if i < n_layer // 8 or i >= 7 * n_layer // 8 or (i - n_layer // 8) % 3 == 2]
    layers = "|".join(map(str, more))
    return ["--type", "q4_k", "--tensor-type", r"^output\.weight$=q6_k", "--tensor-type", r"^token_embd\.weight$=q6_k",
            "--tensor-type", rf"^blk\.({layers})\.attn_v\.weight$=q6_k", "--tensor-type", rf"^blk\.({layers})\.ffn_down\.weight$=q6_k"]


def type_args(t, cfg):
    """gguf_export.py's type arguments for a file type: one type everywhere, or q4_k_m (llama-quantize's mix)."""
    return q4_k_m_types(cfg["num_hidden_layers"]) if t == "q4_k_m" else ["--type", t]


def made(path, make, *args):
    if os.path.exists(path):
        return
    tmp = path + ".part"
    make(*args, tmp)
    os.replace(tmp, path)
    print("  made", os.path.relpath(path, ROOT), flush=True)


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    bert, gpt2 = os.path.join(out, "bert-base"), os.path.join(out, "gpt2-base")
    if not all(os.path.exists(os.path.join(f, "model.safetensors")) for f in (bert, gpt2)):
        subprocess.run([sys.executable, os.path.join(REF, "make_fixtures.py"), "--out", out, "--size", "base"], check=True)
    onnx_dir, gguf_dir = os.path.join(out, "onnx"), os.path.join(out, "gguf")
    os.makedirs(onnx_dir, exist_ok=True)
    os.makedirs(gguf_dir, exist_ok=True)
    made(os.path.join(onnx_dir, "bert-fp32.onnx"), export_bert, bert)
    made(os.path.join(onnx_dir, "gpt2-fp32.onnx"), export_gpt2, gpt2)
    for m in ("bert", "gpt2"):
        made(os.path.join(onnx_dir, f"{m}-int8.onnx"), quantize_int8, os.path.join(onnx_dir, f"{m}-fp32.onnx"))
    for name, make in (("minilm-st", make_minilm), ("distilbert-cls", make_distil_cls), ("distilbert-qa", make_distil_qa)):
        made_folder(os.path.join(out, name), make)
    made(os.path.join(onnx_dir, "minilm-fp32.onnx"), export_encoder, os.path.join(out, "minilm-st"))
    made(os.path.join(onnx_dir, "minilm-int8.onnx"), quantize_int8, os.path.join(onnx_dir, "minilm-fp32.onnx"))
    made(os.path.join(onnx_dir, "distilbert-cls-fp32.onnx"), export_encoder, os.path.join(out, "distilbert-cls"))
    made(os.path.join(onnx_dir, "distilbert-qa-fp32.onnx"), export_encoder, os.path.join(out, "distilbert-qa"))
    made(os.path.join(gguf_dir, "bert-q8_0.gguf"),
         lambda dst: subprocess.run([sys.executable, os.path.join(REF, "gguf_export.py"), bert, dst, "--type", "q8_0"], check=True,
                                    stdout=subprocess.DEVNULL))
    for t in ("f32", "q8_0", "q4_0"):
        made(os.path.join(gguf_dir, f"gpt2-{t}.gguf"),
             lambda dst: subprocess.run([sys.executable, os.path.join(REF, "gguf_export.py"), gpt2, dst, "--type", t], check=True,
                                        stdout=subprocess.DEVNULL))
    # Llama-style decoders: the folders, then their GGUF files (q8_0 with llama.cpp's rounding, as gguf_export does
    # for decoders)
    for name, cfg, types in (("llama-smollm2", SMOLLM2, ("f32", "q8_0", "q4_0", "q4_k_m")), ("qwen2-0.5b", QWEN25_05B, ("q8_0", "q4_0", "q4_k_m"))):
        folder = os.path.join(out, name)
        made_folder(folder, lambda f, cfg=cfg: make_decoder(f, cfg, out))
        for t in types:
            made(os.path.join(gguf_dir, f"{name.split('-')[0]}-{t}.gguf"),
                 lambda dst, folder=folder, t=t, cfg=cfg: subprocess.run(
                     [sys.executable, os.path.join(REF, "gguf_export.py"), folder, dst, *type_args(t, cfg), "--vocab-gguf", GPT2_VOCAB_GGUF,
                      "--name", os.path.basename(folder)], check=True, stdout=subprocess.DEVNULL))


if __name__ == "__main__":
    main()
