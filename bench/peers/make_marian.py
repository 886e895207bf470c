#!/usr/bin/python3
"""The translate-marian row's model: a random-weight MarianMTModel with the shapes of Helsinki-NLP/opus-mt-en-de
(d_model 512, 6 + 6 layers, 8 heads, ffn 2048, vocab 58101, swish, scale_embedding, 512 positions, shared tied
embeddings, final_logits_bias), in the two layouts the engines load, from the same tensors:

  OUT/marian-en-de/        Hugging Face's opus-mt folder (what wasmformer loads): config.json, generation_config.json,
                           model.safetensors (F32, save_pretrained's keys), source.spm, target.spm, vocab.json,
                           tokenizer_config.json, special_tokens_map.json
  OUT/marian-en-de-onnx/   the layout transformers.js loads (as Xenova/opus-mt-en-de has it): config.json,
                           generation_config.json, tokenizer.json, tokenizer_config.json, special_tokens_map.json,
                           onnx/encoder_model.onnx, onnx/decoder_model_merged.onnx, and the 8-bit files its dtype
                           'q8' loads (translate-marian-q8): onnx/encoder_model_quantized.onnx,
                           onnx/decoder_model_merged_quantized.onnx (make_quantized; made when missing, also in a
                           folder made before them)
  OUT/marian-en-de/bench-reference.json, reference-*.f32
                           the source text and its ids, PyTorch's greedy and 4-beam answers to it, and the encoder's
                           output and the decoder's logits of the greedy run's first steps (raw float32) that
                           bench/peers/check_marian_onnx.mjs compares the ONNX graphs with

  /usr/bin/python3 bench/peers/make_marian.py OUT      (Debian's python3: python3-torch, python3-onnx, sentencepiece;
                                                       under a minute on one core; run.mjs calls it when missing)

Tokenizer: tests/data/fixtures/marian-tiny's source.spm / target.spm (SentencePiece unigram, 160 pieces each) and a
vocab.json of 58101 entries whose first 243 are marian-tiny's (</s> 0, <unk> 1, the pieces, >>es<<), then filler
pieces "▁fill243" … "▁fill58099", then <pad> 58100 (opus-mt-en-de's pad and decoder start). tokenizer.json is the
Unigram model that transformers.js reads for a Marian folder: vocab.json's entries in id order with source.spm's
scores (other entries -100: never chosen over source pieces), nmt_nfkc's precompiled charsmap, Metaspace, "$A </s>".
The source sentence is made of whole KJV words that source.spm cuts into exactly 31 pieces: 32 ids with </s>.

Weights: tools/reference/make_marian_fixtures.py's scheme (randomize) with its standard deviations scaled to d_model
512 (× √(32/512)): linear weights N(0, 0.025²), the cross-attention's N(0, 0.1²), embeddings N(0, 0.075²) with the pad
row 0, the last decoder layer norm's weight N(0, 1), final_logits_bias without the mean output's logits. The row
bans </s> (bad_words_ids [[pad], [eos]]) so that both engines generate max_new_tokens = 32 tokens, the last one the
forced EOS (forced_eos_token_id 0 of generation_config.json); a seed is kept only if its greedy and 4-beam answers
stay the same after 1e-5 relative noise on every weight (no near-tie that float rounding of another engine could
flip) and greedy does not just repeat a token.

ONNX, as Optimum exports a Marian model for transformers.js (torch.onnx.export of thin wrappers around
tools/reference/marian.py, opset 17):
  encoder_model.onnx        input_ids, attention_mask (batch_size, encoder_sequence_length) → last_hidden_state
  decoder_model_merged.onnx encoder_attention_mask, input_ids (batch_size, decoder_sequence_length),
                            encoder_hidden_states, past_key_values.{i}.{decoder,encoder}.{key,value}
                            (batch_size, 8, past_decoder_sequence_length | encoder_sequence_length_out, 64),
                            use_cache_branch (bool [1]) → logits (batch_size, decoder_sequence_length, 58101),
                            present.{i}.{decoder,encoder}.{key,value}: one If node whose else branch is the decoder
                            without past (cross-attention keys and values computed from encoder_hidden_states) and
                            whose then branch is the decoder with past (the past encoder keys and values used, and
                            passed through as the encoder presents); the two exports' initializers merged (equal
                            tensors stored once), as optimum's merge_decoders does.
"""
import base64
import copy
import hashlib
import json
import os
import shutil
import sys

import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
REF = os.path.join(ROOT, "tools", "reference")
sys.path.insert(0, REF)
import make_marian_fixtures as fx  # noqa: E402
import make_models  # noqa: E402  (bench/peers: quantize_int8, the one int8 quantizer of the bench's ONNX files)
import marian  # noqa: E402
import safetensors_io  # noqa: E402

TINY = os.path.join(ROOT, "tests", "data", "fixtures", "marian-tiny")
V, D, HEADS, FFN, LAYERS, POSITIONS = 58101, 512, 8, 2048, 6, 512
PAD, EOS = V - 1, 0
SOURCE_TOKENS, NEW_TOKENS, BEAMS = 32, 32, 4
OPSET = 17
SCALE = (32 / D) ** 0.5  # the fixtures' standard deviations are for d_model 32
WEIGHTS = {"w_std": 0.1 * SCALE, "cross_std": 0.4 * SCALE, "emb_std": 0.3 * SCALE, "last_ln_std": 1.0, "bias_std": 0.5}
WORDS = ("And God saw the light, that it was good: and God divided the light from the darkness. And God called the light "
         "Day, and the darkness he called Night. And the evening and the morning were the first day.").split()


# ------------------------------------------------------------------------------------------------ the folders
def make_vocab():
    tiny = json.load(open(os.path.join(TINY, "vocab.json"), encoding="utf-8"))
    pieces = sorted((i, p) for p, i in tiny.items() if p != "<pad>")
    assert [i for i, _ in pieces] == list(range(len(pieces))) and tiny["<pad>"] == len(pieces)
    vocab = {p: i for i, p in pieces}
    for i in range(len(vocab), PAD):
        vocab[f"\u2581fill{i}"] = i
    vocab["<pad>"] = PAD
    assert len(vocab) == V
    return vocab


def make_config():
    c = dict(fx.BASE_CONFIG)
    c.update({"d_model": D, "encoder_attention_heads": HEADS, "decoder_attention_heads": HEADS, "encoder_layers": LAYERS,
              "decoder_layers": LAYERS, "num_hidden_layers": LAYERS, "encoder_ffn_dim": FFN, "decoder_ffn_dim": FFN,
              "activation_function": "swish", "scale_embedding": True, "vocab_size": V, "decoder_vocab_size": V,
              "pad_token_id": PAD, "decoder_start_token_id": PAD, "bad_words_ids": [[PAD]],
              "max_length": 512, "max_position_embeddings": POSITIONS})
    assert None not in c.values()
    return c


def source_text(tok):
    """Whole words, in order, skipping those that would overshoot or give <unk> (a piece left out of vocab.json): exactly SOURCE_TOKENS ids with </s>, no <unk>."""
    words = []
    for w in WORDS * 3:
        cand = tok(" ".join(words + [w]))
        if len(cand) <= SOURCE_TOKENS and tok.unk not in cand:
            words.append(w)
        if len(tok(" ".join(words))) == SOURCE_TOKENS:
            break
    text = " ".join(words)
    ids = tok(text)
    assert len(ids) == SOURCE_TOKENS and tok.unk not in ids, (text, ids)
    return text, ids


def tokenizer_json(vocab):
    """The Unigram tokenizer.json transformers.js reads for a Marian folder (see the module docstring)."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    m = pb.ModelProto()
    m.ParseFromString(open(os.path.join(TINY, "source.spm"), "rb").read())
    assert m.normalizer_spec.name == "nmt_nfkc" and m.normalizer_spec.add_dummy_prefix
    scores = {p.piece: p.score for p in m.pieces if p.type == 1}  # normal pieces
    by_id = sorted((i, p) for p, i in vocab.items())
    special = {"</s>", "<unk>", "<pad>"}
    added = lambda i, c: {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                          "special": True}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added(i, p) for i, p in by_id if p in special],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(m.normalizer_spec.precompiled_charsmap).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [EOS], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": vocab["<unk>"], "byte_fallback": False,
                  "vocab": [[p, 0.0 if p in special else scores.get(p, -100.0)] for _, p in by_id]},
    }


# ----------------------------------------------------------------------------------------------- the weights
OPTS = {"max_new_tokens": NEW_TOKENS, "bad_words_ids": [[PAD], [EOS]]}


def answers(model, gen, ids):
    greedy = marian.generate(model, [ids], gen, num_beams=1, **OPTS)[0]
    beam = marian.generate(model, [ids], gen, num_beams=BEAMS, return_dict_in_generate=True, **OPTS)
    return greedy, beam["sequences"][0], beam["sequences_scores"][0]


def make_model(cfg, gen, ids):
    for seed in range(100, 120):
        model = marian.MarianMTModel(dict(cfg)).eval()
        fx.randomize(model, dict(WEIGHTS, seed=seed), 0.0)
        greedy, beam, score = answers(model, gen, ids)
        noisy = fx.noisy_copy(model)
        same = answers(noisy, gen, ids)[:2] == (greedy, beam)
        distinct = len(set(greedy[1:-1]))
        print(f"  seed {seed}: greedy {len(greedy) - 1} tokens ({distinct} distinct), beam {len(beam) - 1}, "
              f"stable under noise: {same}", flush=True)
        if same and distinct >= 8 and len(greedy) == len(beam) == NEW_TOKENS + 1:
            return model, seed, greedy, beam, score
    raise SystemExit("no seed gave a stable, varied answer")


# -------------------------------------------------------------------------------------------------- ONNX export
def embed(m, ids, past):
    pos = torch.arange(ids.shape[1]) + past
    return m.model.shared(ids) * m.scale + m.positions[pos]


def causal_bias(T, P):
    rows = torch.arange(T)[:, None] + P
    cols = torch.arange(P + T)[None, :]
    return torch.where(cols > rows, torch.tensor(marian.NEG), torch.tensor(0.0))[None, None]


class Encoder(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        x = embed(self.m, input_ids, 0)
        bias = marian.key_bias(attention_mask)
        for layer in self.m.model.encoder.layers:
            x = layer(x, bias)
        return x


class Decoder(torch.nn.Module):
    """with_past False: (encoder_attention_mask, input_ids, encoder_hidden_states); True: (encoder_attention_mask,
    input_ids, past decoder k, v, encoder k, v per layer). → logits, then per layer decoder k, v, encoder k, v."""

    def __init__(self, m, with_past):
        super().__init__()
        self.m, self.with_past = m, with_past

    def forward(self, encoder_attention_mask, input_ids, *rest):
        m = self.m
        layers = m.model.decoder.layers
        if self.with_past:
            past = [rest[4 * i:4 * i + 4] for i in range(len(layers))]
            cross = [(p[2], p[3]) for p in past]
            caches = [{"k": p[0], "v": p[1]} for p in past]
            P = past[0][0].shape[2]
        else:
            cross = m.cross_kv(rest[0])
            caches = [{} for _ in layers]
            P = 0
        T = input_ids.shape[1]
        x = embed(m, input_ids, P)
        self_bias = causal_bias(T, P)
        cross_bias = marian.key_bias(encoder_attention_mask)
        for l, layer in enumerate(layers):
            x = layer(x, self_bias, cross[l][0], cross[l][1], cross_bias, caches[l])
        out = [m.logits(x)]
        for l in range(len(layers)):
            out += [caches[l]["k"], caches[l]["v"], cross[l][0], cross[l][1]]
        return tuple(out)


def kv_names(prefix):
    return [f"{prefix}.{i}.{side}.{kv}" for i in range(LAYERS) for side in ("decoder", "encoder") for kv in ("key", "value")]


def export_encoder(model, path):
    ids = torch.randint(2, 200, (2, 7))
    with torch.no_grad():
        torch.onnx.export(Encoder(model), (ids, torch.ones_like(ids)), path, opset_version=OPSET, do_constant_folding=True,
                          input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": {0: "batch_size", 1: "encoder_sequence_length"},
                                        "attention_mask": {0: "batch_size", 1: "encoder_sequence_length"},
                                        "last_hidden_state": {0: "batch_size", 1: "encoder_sequence_length"}})


def export_decoder(model, with_past, path):
    B, S, T, P, Dh = 2, 7, 1, 3, D // HEADS
    mask, ids = torch.ones(B, S, dtype=torch.long), torch.randint(2, 200, (B, T))
    seq = {0: "batch_size", 1: "decoder_sequence_length"}
    dyn = {"encoder_attention_mask": {0: "batch_size", 1: "encoder_sequence_length"}, "input_ids": seq,
           "logits": seq}
    presents = kv_names("present")
    if with_past:
        past = [torch.randn(B, HEADS, P if side == "decoder" else S, Dh) for _ in range(LAYERS) for side in ("decoder", "encoder")
                for _ in range(2)]
        names = kv_names("past_key_values")
        args, inputs = (mask, ids, *past), ["encoder_attention_mask", "input_ids", *names]
        dyn.update({n: {0: "batch_size", 2: "past_decoder_sequence_length" if ".decoder." in n else "encoder_sequence_length_out"}
                    for n in names})
    else:
        args, inputs = (mask, ids, torch.randn(B, S, D)), ["encoder_attention_mask", "input_ids", "encoder_hidden_states"]
        dyn["encoder_hidden_states"] = {0: "batch_size", 1: "encoder_sequence_length"}
    dyn.update({n: {0: "batch_size", 2: "present_decoder_sequence_length" if ".decoder." in n else "encoder_sequence_length_out"}
                for n in presents})
    with torch.no_grad():
        torch.onnx.export(Decoder(model, with_past), args, path, opset_version=OPSET, do_constant_folding=True,
                          input_names=inputs, output_names=["logits", *presents], dynamic_axes=dyn)


def tensor_key(t):
    return (t.data_type, tuple(t.dims), hashlib.sha256(numpy_helper.to_array(t).tobytes()).hexdigest())


def merge_decoders(no_past_path, with_past_path, out_path):
    """One graph: If(use_cache_branch, then = with past, else = without), initializers shared (see the docstring)."""
    graphs = {"else": onnx.load(no_past_path).graph, "then": onnx.load(with_past_path).graph}
    canonical, inits = {}, []  # content → name; the merged graph's initializers
    outer = ["encoder_attention_mask", "input_ids", "encoder_hidden_states", *kv_names("past_key_values"), "use_cache_branch"]
    branches = {}
    for tag, g in graphs.items():
        rename = {}
        for t in g.initializer:
            k = tensor_key(t)
            if k not in canonical:
                canonical[k] = f"w{len(inits)}"
                t2 = copy.copy(t)
                t2.name = canonical[k]
                inits.append(t2)
            rename[t.name] = canonical[k]
        produced = {o for n in g.node for o in n.output if o}
        name = lambda x: rename.get(x) or (f"{tag}/{x}" if x in produced else x)
        nodes = []
        for n in g.node:
            assert all(a.type not in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in n.attribute), n.op_type
            n2 = copy.deepcopy(n)
            del n2.input[:]
            n2.input.extend(name(x) if x else x for x in n.input)
            del n2.output[:]
            n2.output.extend(name(x) if x else x for x in n.output)
            n2.name = f"{tag}/{n.name}"
            nodes.append(n2)
        for x in {i for n in nodes for i in n.input if i}:
            assert x in produced or x in outer or x in canonical.values() or x.startswith(f"{tag}/"), (tag, x)
        outputs = []
        for o in g.output:  # an Identity per output: a branch's outputs are its own values
            out = f"{tag}/out/{o.name}"
            nodes.append(helper.make_node("Identity", [name(o.name)], [out], name=f"{tag}/identity/{o.name}"))
            outputs.append(helper.make_tensor_value_info(out, o.type.tensor_type.elem_type, None))
        branches[tag] = helper.make_graph(nodes, f"decoder_{'with' if tag == 'then' else 'without'}_past", [], outputs)
        assert [o.name for o in g.output] == ["logits", *kv_names("present")], [o.name for o in g.output]
    Dh = D // HEADS
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("encoder_attention_mask", TensorProto.INT64, ["batch_size", "encoder_sequence_length"]),
              helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "decoder_sequence_length"]),
              helper.make_tensor_value_info("encoder_hidden_states", f, ["batch_size", "encoder_sequence_length", D])]
    inputs += [helper.make_tensor_value_info(n, f, ["batch_size", HEADS, "past_decoder_sequence_length" if ".decoder." in n
                                                    else "encoder_sequence_length_out", Dh]) for n in kv_names("past_key_values")]
    inputs.append(helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1]))
    outputs = [helper.make_tensor_value_info("logits", f, ["batch_size", "decoder_sequence_length", V])]
    outputs += [helper.make_tensor_value_info(n, f, ["batch_size", HEADS, "present_decoder_sequence_length" if ".decoder." in n
                                                     else "encoder_sequence_length_out", Dh]) for n in kv_names("present")]
    node = helper.make_node("If", ["use_cache_branch"], [o.name for o in outputs], name="optimum::if",
                            then_branch=branches["then"], else_branch=branches["else"])
    graph = helper.make_graph([node], "decoder_model_merged", inputs, outputs, inits)
    merged = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="wasmformer bench/peers/make_marian.py")
    merged.ir_version = onnx.load(no_past_path, load_external_data=False).ir_version
    onnx.checker.check_model(merged)  # in memory: the file is under 2 GB
    onnx.save(merged, out_path)
    return len(inits), sum(len(g.initializer) for g in graphs.values())


# -------------------------------------------------------------------------------------------------- reference
def write_reference(model, folder, text, ids, greedy, beam, score, seed):
    """The encoder's output (S, d) and the decoder's logits (4, V) of greedy's first 4 steps: step 0 without past,
    steps 1-3 with it; raw little-endian float32."""
    with torch.no_grad():
        src = torch.tensor([ids])
        enc = model.encode(src)
        h = model.decode(torch.tensor([greedy[:4]]), enc)
        logits = model.logits(h)[0]
    enc[0].contiguous().numpy().astype("<f4").tofile(os.path.join(folder, "reference-encoder.f32"))
    logits.contiguous().numpy().astype("<f4").tofile(os.path.join(folder, "reference-logits.f32"))
    ref = {"source_text": text, "source_ids": ids, "options": OPTS, "num_beams": BEAMS, "seed": seed,
           "greedy": greedy, "beam": beam, "beam_score": score, "decoder_input_ids": greedy[:4],
           "encoder_shape": list(enc[0].shape), "logits_shape": list(logits.shape)}
    fx.dump(ref, os.path.join(folder, "bench-reference.json"))


# ------------------------------------------------------------------------------------------------- 8-bit ONNX
# transformers.js's dtype 'q8' names: a Seq2Seq model's sessions are always encoder_model and decoder_model_merged
# (no separate decoder_model / decoder_with_past_model), each file name + DEFAULT_DTYPE_SUFFIX_MAPPING's "_quantized"
QUANTIZED = (("encoder_model.onnx", "encoder_model_quantized.onnx"), ("decoder_model_merged.onnx", "decoder_model_merged_quantized.onnx"))


def make_quantized(tj):
    """The 8-bit files of the ONNX folder, from the fp32 ones (left as they are), each only if missing: make_models.py's
    quantize_int8 (quantize_dynamic(weight_type=QInt8)'s graph, one scale per matrix), which quantizes the MatMuls
    inside the merged decoder's If branches too (as quantize_dynamic does with EnableSubgraph); the embeddings (a
    Gather) stay fp32, the tied output layer's MatMul is quantized."""
    for src, dst in QUANTIZED:
        src, dst = os.path.join(tj, "onnx", src), os.path.join(tj, "onnx", dst)
        if os.path.exists(dst):
            continue
        tmp = dst + ".part"
        n = make_models.quantize_int8(src, tmp)
        onnx.checker.check_model(tmp)
        os.replace(tmp, dst)
        print(f"  made {os.path.relpath(dst, ROOT)}: {n} MatMuls int8 ({os.path.getsize(dst) / 2**20:.0f} MiB, "
              f"from {os.path.getsize(src) / 2**20:.0f} MiB)", flush=True)


def main():
    out = sys.argv[1]
    torch.set_num_threads(1)
    hf, tj = os.path.join(out, "marian-en-de"), os.path.join(out, "marian-en-de-onnx")
    if not (os.path.exists(os.path.join(tj, "onnx", "decoder_model_merged.onnx")) and os.path.exists(os.path.join(hf, "bench-reference.json"))):
        make_folders(hf, tj)
    make_quantized(tj)


def make_folders(hf, tj):
    tmp = hf + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    cfg, vocab = make_config(), make_vocab()
    gen = fx.generation_config(cfg)
    fx.dump(cfg, os.path.join(tmp, "config.json"))
    fx.dump(gen, os.path.join(tmp, "generation_config.json"))
    for n in ("source.spm", "target.spm"):
        shutil.copy(os.path.join(TINY, n), os.path.join(tmp, n))
    with open(os.path.join(tmp, "vocab.json"), "w") as f:
        json.dump(vocab, f, indent=2)
    fx.dump(fx.tokenizer_config(), os.path.join(tmp, "tokenizer_config.json"))
    fx.dump({"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}, os.path.join(tmp, "special_tokens_map.json"))
    tok = marian.Tokenizer(tmp)
    text, ids = source_text(tok)
    print(f"  source: {len(ids)} ids: {text!r}", flush=True)
    model, seed, greedy, beam, score = make_model(cfg, gen, ids)
    safetensors_io.save(os.path.join(tmp, "model.safetensors"), marian.export_state(model), metadata={"format": "pt"})
    m2, _, _ = marian.load(tmp)
    assert answers(m2, gen, ids)[:2] == (greedy, beam)
    write_reference(model, tmp, text, ids, greedy, beam, score, seed)

    tjtmp = tj + ".part"
    shutil.rmtree(tjtmp, ignore_errors=True)
    os.makedirs(os.path.join(tjtmp, "onnx"))
    for n in ("config.json", "generation_config.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(os.path.join(tmp, n), os.path.join(tjtmp, n))
    with open(os.path.join(tjtmp, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(vocab), f, ensure_ascii=False)
    export_encoder(model, os.path.join(tjtmp, "onnx", "encoder_model.onnx"))
    parts = [os.path.join(tjtmp, f"decoder-{k}.onnx") for k in ("no-past", "with-past")]
    export_decoder(model, False, parts[0])
    export_decoder(model, True, parts[1])
    kept, total = merge_decoders(*parts, os.path.join(tjtmp, "onnx", "decoder_model_merged.onnx"))
    print(f"  decoder_model_merged.onnx: {kept} initializers (of {total} in the two exports)", flush=True)
    for p in parts:
        os.remove(p)
    for final, part in ((hf, tmp), (tj, tjtmp)):
        shutil.rmtree(final, ignore_errors=True)
        os.replace(part, final)
    print("  made", os.path.relpath(hf, ROOT), "and", os.path.relpath(tj, ROOT), flush=True)


if __name__ == "__main__":
    main()
