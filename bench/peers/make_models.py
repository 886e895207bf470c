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
OUT_DIR/minilm-st                      a sentence-transformers folder (modules.json, 1_Pooling mean, 2_Normalize) around
                                       a BertModel with all-MiniLM-L6-v2's shape: 6 layers, 384, 12 heads, 1536, 512
                                       positions (tools/reference/encoders.py; bert-base-uncased's vocab.txt)
OUT_DIR/distilbert-cls, distilbert-qa  DistilBertForSequenceClassification (2 labels) / DistilBertForQuestionAnswering
                                       with DistilBERT-base's shape: 6 layers, 768, 12 heads, 3072, 512 positions
OUT_DIR/onnx/minilm-fp32.onnx          input_ids, attention_mask, token_type_ids (B, T) → last_hidden_state (B, T, E),
                                       as Optimum exports a BertModel for transformers.js (pooling is done in JS)
OUT_DIR/onnx/distilbert-cls-fp32.onnx  input_ids, attention_mask (B, T) → logits (B, 2)
OUT_DIR/onnx/distilbert-qa-fp32.onnx   input_ids, attention_mask (B, T) → start_logits, end_logits (B, T)
Each file is made only if it is missing.
"""
import json
import os
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
    becomes MatMul + Add); embedding Gathers stay fp32, as quantize_dynamic leaves them by default."""
    m = onnx.load(src)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    nodes, new_inits, quantized_inputs, used = [], [], {}, set()

    def quant_input(name):
        if name not in quantized_inputs:
            q = (name + "_q8", name + "_scale", name + "_zp")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [name], list(q), name=name + "_DQL"))
            quantized_inputs[name] = q
        return quantized_inputs[name]

    def qmatmul(x, wname, w, out, tag):
        scale = float(np.abs(w).max() / 127.0) or 1.0
        new_inits.extend([numpy_helper.from_array(np.clip(np.round(w / scale), -127, 127).astype(np.int8), wname + "_quantized"),
                          numpy_helper.from_array(np.array(scale, np.float32), wname + "_scale"),
                          numpy_helper.from_array(np.array(0, np.int8), wname + "_zero_point")])
        xq, xs, xz = quant_input(x)
        nodes.extend([
            helper.make_node("MatMulInteger", [xq, wname + "_quantized", xz, wname + "_zero_point"], [tag + "_i32"], name=tag + "_MatMulInteger"),
            helper.make_node("Cast", [tag + "_i32"], [tag + "_f"], to=TensorProto.FLOAT, name=tag + "_Cast"),
            helper.make_node("Mul", [xs, wname + "_scale"], [tag + "_scales"], name=tag + "_ScaleMul"),
            helper.make_node("Mul", [tag + "_f", tag + "_scales"], [out], name=tag + "_Mul")])

    for k, n in enumerate(g.node):
        w = inits.get(n.input[1]) if len(n.input) > 1 else None
        if n.op_type == "MatMul" and w is not None and len(w.dims) == 2:
            qmatmul(n.input[0], f"{w.name}_{k}", numpy_helper.to_array(w).astype(np.float32), n.output[0], f"q{k}")
            used.add(w.name)
            continue
        if n.op_type == "Gemm" and w is not None:
            at = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            if not at.get("transA", 0) and at.get("alpha", 1.0) == 1.0 and at.get("beta", 1.0) == 1.0:
                wt = numpy_helper.to_array(w).astype(np.float32)
                mm = n.output[0] + "_mm" if len(n.input) > 2 else n.output[0]
                qmatmul(n.input[0], f"{w.name}_{k}", wt.T.copy() if at.get("transB", 0) else wt, mm, f"q{k}")
                if len(n.input) > 2:
                    nodes.append(helper.make_node("Add", [mm, n.input[2]], [n.output[0]], name=f"q{k}_BiasAdd"))
                used.add(w.name)
                continue
        nodes.append(n)
    # each DynamicQuantizeLinear stands right before its first consumer, after its producer: the order stays valid
    still = {i for n in nodes for i in n.input}
    keep = [i for i in g.initializer if i.name not in used or i.name in still]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    del g.node[:]
    g.node.extend(nodes)
    onnx.save(m, dst)


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
    for t in ("f32", "q8_0", "q4_0"):
        made(os.path.join(gguf_dir, f"gpt2-{t}.gguf"),
             lambda dst: subprocess.run([sys.executable, os.path.join(REF, "gguf_export.py"), gpt2, dst, "--type", t], check=True,
                                        stdout=subprocess.DEVNULL))


if __name__ == "__main__":
    main()
