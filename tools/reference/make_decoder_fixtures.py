#!/usr/bin/python3
"""Writes the Llama-family, Gemma, Gemma 2 and Phi-3 decoder fixtures (random weights in the exact Hugging Face
layout, llama.cpp GGUF conversions, golden outputs of the PyTorch reference tools/reference/decoders.py) and checks
them.

Regenerate (from the repository root; /usr/bin/python3 is Debian's, with python3-torch, python3-numpy,
python3-sentencepiece and python3-protobuf; about 6 s on one core):

  /usr/bin/python3 tools/reference/make_decoder_fixtures.py                 # writes tests/data/fixtures/…
  /usr/bin/python3 tools/reference/make_decoder_fixtures.py --out /tmp/fx   # elsewhere

Every run writes the same bytes (seeded weights, deterministic serializers).

  llama-tiny/         LlamaForCausalLM, Llama 1/2 SentencePiece vocabulary (32000), hidden 32, 4 heads, 2 KV heads,
                      head_dim 8, 2 layers, intermediate 64, rope_theta 1e4 with rope_scaling llama3 (factor 8,
                      low 1, high 4, original_max_position_embeddings 16: pair 0 is interpolated, pairs 1-3 divided
                      by 8), tied lm_head, F32; embeddings 0.04·N(0,1) and layers 0.15·N(0,1) (see randomize)
  llama-tiny-f32.gguf llama.cpp arch "llama": Q/K rows permuted, rope_freqs.weight, tokenizer from
                      ggml-vocab-llama-spm.gguf; llama-tiny-q8_0.gguf the same with Q8_0 matrices (llama.cpp rounding)
  qwen2-tiny/         Qwen2ForCausalLM (q/k/v biases), GPT-2's byte-level BPE (50257), hidden 32, 4 heads, 1 KV head,
                      2 layers, intermediate 64, rope_theta 1e6, rms_norm_eps 1e-6, untied lm_head, BF16 weights;
                      sliding_window 4 with use_sliding_window false (HF then uses no window: a trap for an engine
                      that reads sliding_window alone)
  qwen2-tiny-bf16.gguf llama.cpp arch "qwen2" (no permutation), tokenizer from ggml-vocab-gpt-2.gguf
  mistral-tiny/       MistralForCausalLM, the Llama SentencePiece vocabulary, hidden 32, 4 heads, 2 KV heads,
                      head_dim 16 (explicit, ≠ hidden/heads, as Mistral Nemo's), 2 layers, intermediate 64,
                      sliding_window 4, untied lm_head, F16 weights; no GGUF (llama.cpp converts Mistral as "llama",
                      which has no sliding window: gguf_export refuses it)
  gemma-tiny/         GemmaForCausalLM on the Llama SentencePiece vocabulary (Gemma's own 256000-piece vocabulary
                      would make the embeddings 8 MB even at hidden 32), hidden 32, 4 heads, 1 KV head (multi-query),
                      head_dim 16 (explicit, ≠ hidden/heads), 2 layers, intermediate 64, gelu_pytorch_tanh (both
                      hidden_act and hidden_activation), rms_norm_eps 1e-6, rope_theta 1e4, tied lm_head, F32;
                      stored norm weights w = 0.1·N(0,1) (applied as 1 + w), embeddings 0.05·N(0,1), layers
                      0.2·N(0,1)
  gemma-tiny-f32.gguf llama.cpp arch "gemma": norm weights stored as 1 + w (the converter's rule), no output
                      tensor (tied), no Q/K permutation, tokenizer from ggml-vocab-llama-spm.gguf
  gemma2-tiny/        Gemma2ForCausalLM, the Llama SentencePiece vocabulary, hidden 32, 4 heads, 2 KV heads,
                      head_dim 16, 3 layers, intermediate 64, query_pre_attn_scalar 36 (scale 1/6, not head_dim's
                      1/4 nor hidden/heads' 1/√8), attn_logit_softcapping 5, final_logit_softcapping 3 (small
                      enough to matter for these weights; Gemma 2 ships 50 and 30), sliding_window 4 on layers 0 and
                      2 (no layer_types in config.json, as real Gemma 2 configs: HF's default, the even layers slide),
                      tied lm_head, BF16 weights; embeddings 0.08·N(0,1), layers 0.4·N(0,1). No GGUF: llama.cpp's
                      gemma2 takes the attention scale from the model size (1/√head_dim), not from the file, so
                      gguf_export refuses a query_pre_attn_scalar ≠ head_dim; the script converts a copy with
                      query_pre_attn_scalar = head_dim to a temporary file and checks that instead
  phi3-tiny/          Phi3ForCausalLM (fused qkv_proj and gate_up_proj, no biases), the Llama SentencePiece
                      vocabulary, hidden 32, 4 heads, 2 KV heads, head_dim 8, 2 layers, intermediate 64, silu,
                      rope_theta 1e4, rope_scaling null and no partial_rotary_factor (Phi-3-mini-4k style),
                      original_max_position_embeddings 128, sliding_window null, untied lm_head, F16 weights;
                      embeddings 0.1·N(0,1), layers 0.12·N(0,1)
  phi3-tiny-f16.gguf  llama.cpp arch "phi3": attn_qkv and ffn_up (gate then up) as HF's fused matrices; f16 holds
                      the F16 weights exactly at half of f32's 8 MB (norms f32, as llama.cpp's converter writes them)

Each folder: config.json (as save_pretrained writes it: sorted keys), model.safetensors (tied lm_head left out),
tokenizer files (tokenizer.model, a SentencePiece ModelProto rebuilt from llama.cpp's vocabulary file and checked
with python3-sentencepiece against llama.cpp's 46 test vectors; or vocab.json + merges.txt), tokenizer_config.json
(with a chat template), generation_config.json and golden.safetensors:

  input_ids  I32 (T,)        the prompt "The dog was found in a field near the river" (with <s> for SentencePiece)
  hidden.{i} F32 (T, E)      i = 0: embeddings (Gemma, Gemma 2: after the √hidden scaling); i = 1..n_layer: the
                             residual stream after layer i, BEFORE the final norm
  logits     F32 (T, V)      every position (Gemma 2: after the final soft-cap)
  greedy_ids I32 (T + 12,)   the prompt then 12 greedily chosen tokens (full forward per step, no cache)
  inv_freq   F32 (head_dim/2,)  the rotary inverse frequencies the reference used (after llama3 scaling)

The golden outputs are computed in f32 from the weights as stored (BF16/F16 rounded first).

Checks (asserted): an independent float64 numpy forward pass (explicit loops over heads and positions, pairs
rotated one by one, GQA by index) from the safetensors equals the reference; the same numpy pass run from the GGUF
files with llama.cpp's semantics (adjacent-pair RoPE with rope_freqs for "llama", NeoX halves for "qwen2") equals it
too; GGUF tensors read back equal the weights after undoing the Q/K permutation; llama3 scaling changes the
frequencies and the logits; the KV-head grouping and Mistral's window change the logits when altered; Qwen2's unused
window would change them; the stored BF16/F16 weights reproduce the golden logits exactly; the Q8_0 file stays within
0.05 of the golden logits (also with Q8_0-rounded activations, as a Q8_0 matmul computes) and continues greedily
the same; greedy decoding is not constant (at least 6 distinct tokens of 12, every top-1/top-2 gap at least 0.005);
tokenizer.model tokenizes llama.cpp's test strings as Hugging Face does and gives the GGUF vocabulary back.
Gemma: without the √hidden scale, or with w instead of 1 + w in the norms, the logits move (erf GELU instead of
tanh is printed: it moves them by about 4e-4). Gemma 2: removing attn_logit_softcapping, removing
final_logit_softcapping, using head_dim instead of query_pre_attn_scalar, removing the window, moving it to the odd
layers and putting it on every layer each move the logits by more than 0.01; gguf_export refuses the fixture. Phi-3:
reading gate_up_proj as (up, gate) or qkv_proj as (Q, V, K) moves the logits. GGUF checks derive the scales, caps
and windows from the file's metadata with llama.cpp's rules (gguf_options), not from config.json.
"""
import argparse
import json
import math
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import decoders  # noqa: E402
import gguf_export  # noqa: E402
import safetensors_io  # noqa: E402
import tokenizers as toks  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TOK = os.path.join(ROOT, "tests", "data", "tokenizers")
LLAMACPP = next(p for p in (os.path.join(TOK, "llamacpp"), os.path.join(ROOT, "..", "shared", "tokenizers", "llamacpp"))
                if os.path.exists(os.path.join(p, "ggml-vocab-llama-spm.gguf")))
SPM_GGUF = os.path.join(LLAMACPP, "ggml-vocab-llama-spm.gguf")
GPT2_GGUF = os.path.join(LLAMACPP, "ggml-vocab-gpt-2.gguf")

PROMPT = "The dog was found in a field near the river"
N_NEW = 12

LLAMA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 1, "eos_token_id": 2, "head_dim": 8, "hidden_act": "silu", "hidden_size": 32,
    "initializer_range": 0.02, "intermediate_size": 64, "max_position_embeddings": 128, "mlp_bias": False,
    "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "pretraining_tp": 1,
    "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 16, "rope_type": "llama3"},
    "rope_theta": 10000.0, "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True, "vocab_size": 32000,
}
QWEN2 = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "attention_dropout": 0.0, "bos_token_id": 50256,
    "eos_token_id": 50256, "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64,
    "max_position_embeddings": 128, "max_window_layers": 0, "num_attention_heads": 4, "num_hidden_layers": 2,
    "num_key_value_heads": 1, "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000.0,
    "sliding_window": 4, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
    "use_sliding_window": False, "vocab_size": 50257,
}
MISTRAL = {
    "architectures": ["MistralForCausalLM"], "model_type": "mistral", "attention_dropout": 0.0, "bos_token_id": 1,
    "eos_token_id": 2, "head_dim": 16, "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
    "intermediate_size": 64, "max_position_embeddings": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4,
    "tie_word_embeddings": False, "torch_dtype": "float16", "use_cache": True, "vocab_size": 32000,
}
# Gemma, Gemma 2, Phi-3 on the Llama SentencePiece vocabulary (Gemma's own has 256000 pieces: 8 MB of embeddings
# even at hidden 32, too large for a fixture). pad_token_id null: HF's Gemma default 0 and Phi-3 default 32000 name
# tokens of other vocabularies (32000 is not even in this one). Both activation keys for Gemma: transformers
# versions read hidden_activation (older) or hidden_act (newer).
GEMMA = {
    "architectures": ["GemmaForCausalLM"], "model_type": "gemma", "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 1, "eos_token_id": 2, "head_dim": 16, "hidden_act": "gelu_pytorch_tanh",
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64,
    "max_position_embeddings": 128, "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
    "pad_token_id": None, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": True,
    "torch_dtype": "float32", "use_cache": True, "vocab_size": 32000,
}
GEMMA2 = {
    "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "attention_bias": False, "attention_dropout": 0.0,
    "attn_logit_softcapping": 5.0, "bos_token_id": 1, "cache_implementation": "hybrid", "eos_token_id": 2,
    "final_logit_softcapping": 3.0, "head_dim": 16, "hidden_act": "gelu_pytorch_tanh",
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64,
    "max_position_embeddings": 128, "num_attention_heads": 4, "num_hidden_layers": 3, "num_key_value_heads": 2,
    "pad_token_id": None, "query_pre_attn_scalar": 36, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
    "sliding_window": 4, "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 32000,
}
PHI3 = {
    "architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "attention_dropout": 0.0, "bos_token_id": 1,
    "embd_pdrop": 0.0, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
    "intermediate_size": 64, "max_position_embeddings": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
    "num_key_value_heads": 2, "original_max_position_embeddings": 128, "pad_token_id": None, "resid_pdrop": 0.0,
    "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 10000.0, "sliding_window": None,
    "tie_word_embeddings": False, "torch_dtype": "float16", "use_cache": True, "vocab_size": 32000,
}

# TinyLlama-1.1B-Chat's (Zephyr) template; Qwen2.5's ChatML without tools; Mistral-7B-Instruct-v0.1's
ZEPHYR = ("{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + "
          "eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n"
          "{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n"
          "{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}")
CHATML = ("{%- if messages[0]['role'] == 'system' %}\n    {{- '<|im_start|>system\\n' + messages[0]['content'] + "
          "'<|im_end|>\\n' }}\n{%- else %}\n    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}\n"
          "{%- endif %}\n{%- for message in messages %}\n    {%- if not (message.role == 'system' and loop.first) %}\n"
          "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
          "    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n"
          "{%- endif %}\n")
MISTRAL_INST = ("{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
                "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
                "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
                "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}"
                "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}")
# seeds and (embedding, layer) standard deviations of the random weights (see randomize)
GEMMA_SEED, GEMMA_STD = 22, (0.05, 0.2)
GEMMA2_SEED, GEMMA2_STD = 20, (0.08, 0.4)
PHI3_SEED, PHI3_STD = 22, (0.1, 0.12)

# google/gemma-7b-it's (also Gemma 2's); microsoft/Phi-3-mini-4k-instruct's
GEMMA_IT = ("{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
            "{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
            "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
            "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}"
            "{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}"
            "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}")
PHI3_INST = ("{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + "
             "'<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}"
             "{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}"
             "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}"
             "{% endif %}")


def dump(obj, path):
    """As transformers' to_json_file: indent 2, sorted keys, a final newline."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def randomize(model, seed, dtype, emb_std=0.08, layer_std=0.08, norm_center=1.0):
    """Norm weights norm_center + 0.1·N(0,1) (Gemma's stored w: 0, so that the applied 1 + w is near 1), embeddings
    and lm_head emb_std·N(0,1), the layers' matrices and biases layer_std·N(0,1), then rounded to the storage dtype
    so that the reference computes (in f32) from exactly the stored weights. (With tied embeddings and 0.08
    everywhere, the input embedding dominates the residual stream and greedy decoding repeats one token forever;
    llama-tiny's weaker embeddings and stronger layers avoid that, and keep its Q8_0 file within 0.05 of the golden
    logits. Gemma's √hidden scaling makes that worse: gemma-tiny's embeddings are weaker still.)"""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(norm_center + 0.1 * torch.randn(p.shape, generator=g))
            elif name.startswith("model.layers."):
                p.copy_(layer_std * torch.randn(p.shape, generator=g))
            else:
                p.copy_(emb_std * torch.randn(p.shape, generator=g))
            p.copy_(p.to(dtype).float())


# --------------------------------------------------------------------------------------------------- tokenizers
def spm_model_bytes():
    """A SentencePiece ModelProto for llama.cpp's Llama 1/2 vocabulary (pieces, scores, types from the GGUF file),
    with Llama's trainer and normalizer settings: BPE, byte fallback, identity normalizer, dummy prefix, extra
    whitespace kept."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    kv = gguf_export.read_gguf(SPM_GGUF, tensors=False)["kv"]
    m = pb.ModelProto()
    for piece, score, typ in zip(kv["tokenizer.ggml.tokens"], kv["tokenizer.ggml.scores"], kv["tokenizer.ggml.token_type"]):
        p = m.pieces.add()
        p.piece, p.score = piece, float(score)
        if int(typ) != pb.ModelProto.SentencePiece.NORMAL:  # left unset for normal pieces, as in Meta's file
            p.type = int(typ)
    t = m.trainer_spec
    t.model_type = pb.TrainerSpec.BPE
    t.vocab_size = len(m.pieces)
    t.input_format = "text"
    t.character_coverage = 0.99995
    t.split_by_unicode_script = t.split_by_number = t.split_by_whitespace = True
    t.treat_whitespace_as_suffix = False
    t.split_digits = t.allow_whitespace_only_pieces = t.byte_fallback = True
    t.max_sentencepiece_length = 16
    t.vocabulary_output_piece_score = t.hard_vocab_limit = True
    t.use_all_vocab = False
    t.unk_id, t.bos_id, t.eos_id, t.pad_id = 0, 1, 2, -1
    t.unk_piece, t.bos_piece, t.eos_piece, t.pad_piece = "<unk>", "<s>", "</s>", "<pad>"
    t.unk_surface = " \u2047 "
    n = m.normalizer_spec
    n.name = "identity"
    n.precompiled_charsmap = b""
    n.add_dummy_prefix, n.remove_extra_whitespaces, n.escape_whitespaces = True, False, True
    n.normalization_rule_tsv = ""
    return m.SerializeToString(deterministic=True)


def check_spm(model):
    """llama.cpp's 46 Llama test strings tokenize to Hugging Face's ids with the rebuilt tokenizer.model."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_proto=model)
    texts = open(SPM_GGUF + ".inp", encoding="utf-8").read().split("\n__ggml_vocab_test__\n")[:-1]
    lines = open(SPM_GGUF + ".out", encoding="utf-8").read().split("\n")
    bad = [(t, sp.encode(t), l) for t, l in zip(texts, lines) if sp.encode(t) != [int(x) for x in l.split()]]
    for t, got, want in bad:
        print(f"  tokenizer.model differs on {t!r}: {got} vs {want}")
    assert len(texts) == 46 and not bad
    print(f"  tokenizer.model: llama.cpp's {len(texts)} test strings tokenize as Hugging Face does")
    return sp


def spm_tokenizer_config(template):
    special = {str(i): {"content": c, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False,
                        "special": True} for i, c in enumerate(["<unk>", "<s>", "</s>"])}
    return {"add_bos_token": True, "add_eos_token": False, "added_tokens_decoder": special, "bos_token": "<s>",
            "chat_template": template, "clean_up_tokenization_spaces": False, "eos_token": "</s>", "legacy": False,
            "model_max_length": 128, "pad_token": None, "padding_side": "right", "sp_model_kwargs": {},
            "tokenizer_class": "LlamaTokenizer", "unk_token": "<unk>"}


def write_spm_files(out, model, template):
    with open(os.path.join(out, "tokenizer.model"), "wb") as f:
        f.write(model)
    dump(spm_tokenizer_config(template), os.path.join(out, "tokenizer_config.json"))


def write_gpt2_files(out):
    shutil.copy(os.path.join(TOK, "gpt2", "encoder.json"), os.path.join(out, "vocab.json"))
    shutil.copy(os.path.join(TOK, "gpt2", "vocab.bpe"), os.path.join(out, "merges.txt"))
    eot = {"50256": {"content": "<|endoftext|>", "lstrip": False, "normalized": False, "rstrip": False,
                     "single_word": False, "special": True}}
    dump({"add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": eot, "bos_token": None,
          "chat_template": CHATML, "clean_up_tokenization_spaces": False, "eos_token": "<|endoftext|>",
          "errors": "replace", "model_max_length": 128, "pad_token": "<|endoftext|>",
          "tokenizer_class": "GPT2Tokenizer", "unk_token": None}, os.path.join(out, "tokenizer_config.json"))


# ------------------------------------------------------------------------------------- independent numpy forward
def hf_as_gguf_names(cfg, W):
    """HF tensors (float64) under llama.cpp's names, NOT permuted; Gemma's norm weights as llama.cpp's converter
    stores them, 1 + w (added in f32, as HF applies them)."""
    mt = cfg["model_type"]
    gemma = mt in decoders.GEMMA
    plus1 = lambda k, v: np.float64(np.float32(v) + np.float32(1)) if gemma and k.endswith("norm.weight") else v  # noqa
    g = {"token_embd.weight": W["model.embed_tokens.weight"],
         "output_norm.weight": plus1("model.norm.weight", W["model.norm.weight"])}
    if "lm_head.weight" in W:
        g["output.weight"] = W["lm_head.weight"]
    names = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
             "self_attn.qkv_proj": "attn_qkv", "mlp.gate_up_proj": "ffn_up"}
    if mt == "gemma2":
        names.update({"post_attention_layernorm": "post_attention_norm", "pre_feedforward_layernorm": "ffn_norm",
                      "post_feedforward_layernorm": "post_ffw_norm"})
    for k, v in W.items():
        if k.startswith("model.layers."):
            l, rest = k[len("model.layers."):].split(".", 1)
            h, wb = rest.rsplit(".", 1)
            g[f"blk.{l}.{names[h]}.{wb}"] = plus1(k, v)
    return {k: np.asarray(v, np.float64) for k, v in g.items()}


def hf_options(cfg):
    """What np_forward needs beyond the tensors, from Hugging Face's config.json: the embedding scale (Gemma: √hidden
    as an f32), the attention scale (None: 1/√head_dim; Gemma 2: query_pre_attn_scalar^−0.5), the soft-caps and the
    MLP's activation."""
    mt = cfg["model_type"]
    g2 = mt == "gemma2"
    return {"emb_scale": float(np.float32(cfg["hidden_size"] ** 0.5)) if mt in decoders.GEMMA else None,
            "attn_scale": cfg["query_pre_attn_scalar"] ** -0.5 if g2 else None,
            "attn_cap": cfg.get("attn_logit_softcapping") if g2 else None,
            "final_cap": cfg.get("final_logit_softcapping") if g2 else None,
            "act": "gelu_tanh" if mt in decoders.GEMMA else "silu"}


def gguf_options(kv, n_layer):
    """np_forward's options and the per-layer windows from a GGUF file's metadata, with llama.cpp's rules (not from
    config.json): gemma/gemma2 scale the embeddings by √n_embd and use gelu (tanh); gemma2 scales attention by
    1/√key_length (1/√(n_embd/n_head) for the 46-layer 27B), soft-caps with the file's values (llama.cpp's
    defaults 50 and 30 when absent) and slides on the even layers; phi3's window is disabled in llama.cpp."""
    arch = kv["general.architecture"]
    E, H = kv[f"{arch}.embedding_length"], kv[f"{arch}.attention.head_count"]
    dk = kv.get(f"{arch}.attention.key_length", E // H)
    gemma = arch in ("gemma", "gemma2")
    opts = {"emb_scale": float(np.float32(np.sqrt(E))) if gemma else None, "attn_scale": None, "attn_cap": None,
            "final_cap": None, "act": "gelu_tanh" if gemma else "silu"}
    wins = [0] * n_layer
    if arch == "gemma2":
        opts["attn_scale"] = 1 / np.sqrt(E // H if n_layer == 46 else dk)
        opts["attn_cap"] = float(kv.get("gemma2.attn_logit_softcapping", 50.0))
        opts["final_cap"] = float(kv.get("gemma2.final_logit_softcapping", 30.0))
        wins = [int(kv.get("gemma2.attention.sliding_window", 4096)) if l % 2 == 0 else 0 for l in range(n_layer)]
    return opts, wins


def q8_rows(x):
    """Rows of x through llama.cpp's Q8_0 and back (what a Q8_0 × Q8_0 matmul does to its activations)."""
    Q = gguf_export.gq.Q8_0
    x = np.asarray(x, np.float32)
    return Q.dequantize(Q.quantize(x.reshape(-1)), x.size).reshape(x.shape).astype(np.float64)


def np_forward(cfg, g, ids, pairs, factors, windows, kv_of=None, act_q8=(), opts=None):
    """A float64 forward pass written independently of decoders.py, in llama.cpp's terms. g: tensors by llama.cpp
    name; pairs "neox" (dimension i with i + d/2: HF's rotate_half, llama.cpp's qwen2) or "normal" (2i with 2i+1:
    llama.cpp's llama, after the converter's permutation); factors: what each pair's angle is divided by (llama.cpp's
    rope_freqs); windows: per layer, 0 = none; kv_of(h): the KV head query head h reads (default h // (H/KV));
    act_q8: names of matrices whose inputs are rounded through Q8_0 first (as llama.cpp and the engine multiply
    Q8_0 weights); opts: hf_options / gguf_options (default: hf_options(cfg)). Fused attn_qkv (rows Q, K, V) and a
    fused ffn_up without ffn_gate (rows gate, up) are split here; post_attention_norm and post_ffw_norm (Gemma 2)
    normalize the branch outputs when present."""
    opts = opts or hf_options(cfg)
    E, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    KV = cfg.get("num_key_value_heads") or H
    D = cfg.get("head_dim") or E // H
    eps, base = cfg["rms_norm_eps"], cfg["rope_theta"]
    kv_of = kv_of or (lambda h: h // (H // KV))
    T = len(ids)

    def rms(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    def lin(x, name):
        if name + ".weight" in act_q8:
            x = q8_rows(x)
        y = x @ g[name + ".weight"].T
        return y + g[name + ".bias"] if name + ".bias" in g else y

    def rope(x, n):  # x (T, n·D)
        x = x.reshape(T, n, D).copy()
        for t in range(T):
            for i in range(D // 2):
                ang = t * base ** (-2.0 * i / D) / factors[i]
                a, b = (i, i + D // 2) if pairs == "neox" else (2 * i, 2 * i + 1)
                xa, xb = x[t, :, a].copy(), x[t, :, b].copy()
                x[t, :, a] = xa * np.cos(ang) - xb * np.sin(ang)
                x[t, :, b] = xa * np.sin(ang) + xb * np.cos(ang)
        return x

    def act(x):
        if opts["act"] == "gelu_erf":  # only to show what the tanh approximation is worth
            return 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))
        if opts["act"] == "gelu_tanh":
            return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
        return x / (1 + np.exp(-x))

    def cap(s, c):
        return c * np.tanh(s / c) if c else s

    x = g["token_embd.weight"][ids]
    if opts["emb_scale"]:
        x = x * opts["emb_scale"]
    hidden = [x]
    for l in range(L):
        p = f"blk.{l}."
        h = rms(x, g[p + "attn_norm.weight"])
        if p + "attn_qkv.weight" in g:
            qkv = lin(h, p + "attn_qkv")
            qh, kh, vh = qkv[:, :H * D], qkv[:, H * D:(H + KV) * D], qkv[:, (H + KV) * D:]
        else:
            qh, kh, vh = lin(h, p + "attn_q"), lin(h, p + "attn_k"), lin(h, p + "attn_v")
        q, k = rope(qh, H), rope(kh, KV)
        v = vh.reshape(T, KV, D)
        att = np.zeros((T, H, D))
        for hh in range(H):
            kv = kv_of(hh)
            for i in range(T):
                js = [j for j in range(i + 1) if not windows[l] or j > i - windows[l]]
                dots = np.array([q[i, hh] @ k[j, kv] for j in js])
                s = cap(dots / np.sqrt(D) if opts["attn_scale"] is None else dots * opts["attn_scale"], opts["attn_cap"])
                pr = np.exp(s - s.max())
                pr /= pr.sum()
                att[i, hh] = sum(pj * v[j, kv] for pj, j in zip(pr, js))
        y = lin(att.reshape(T, H * D), p + "attn_output")
        if p + "post_attention_norm.weight" in g:
            y = rms(y, g[p + "post_attention_norm.weight"])
        x = x + y
        h = rms(x, g[p + "ffn_norm.weight"])
        if p + "ffn_gate.weight" in g:
            gate, up = lin(h, p + "ffn_gate"), lin(h, p + "ffn_up")
        else:
            gu = lin(h, p + "ffn_up")
            gate, up = gu[:, :gu.shape[1] // 2], gu[:, gu.shape[1] // 2:]
        y = lin(act(gate) * up, p + "ffn_down")
        if p + "post_ffw_norm.weight" in g:
            y = rms(y, g[p + "post_ffw_norm.weight"])
        x = x + y
        hidden.append(x)
    out = "output.weight" if "output.weight" in g else "token_embd.weight"
    x = rms(x, g["output_norm.weight"])
    return cap((q8_rows(x) if out in act_q8 else x) @ g[out].T, opts["final_cap"]), hidden


def maxdiff(a, b):
    return float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max())


# ------------------------------------------------------------------------------------------------------ fixtures
def build(out, cfg, seed, dtype, ids, emb_std=0.08, layer_std=0.08, norm_center=1.0):
    """Writes the HF folder's model files and golden.safetensors; returns (model, golden dict, HF tensors under
    llama.cpp's names)."""
    os.makedirs(out, exist_ok=True)
    model = decoders.DecoderForCausalLM(cfg).eval()
    randomize(model, seed, dtype, emb_std, layer_std, norm_center)
    dump(cfg, os.path.join(out, "config.json"))
    gen = {"bos_token_id": cfg["bos_token_id"], "eos_token_id": cfg["eos_token_id"]}
    dump(gen, os.path.join(out, "generation_config.json"))
    safetensors_io.save(os.path.join(out, "model.safetensors"), decoders.export_state(model), metadata={"format": "pt"},
                        dtype=dtype)
    with torch.no_grad():
        logits, hidden = model(torch.tensor([ids]))
        seq, gaps = model.greedy(ids, N_NEW)
    new = seq[len(ids):]
    print(f"  greedy: {new} (smallest top-1/top-2 logit gap {min(gaps):.4f})")
    assert len(set(new)) >= 6, "greedy decoding is (nearly) constant"
    assert min(gaps) >= 0.005, "a greedy step is a near tie"
    golden = {"input_ids": torch.tensor(ids, dtype=torch.int32), "logits": logits[0],
              "greedy_ids": torch.tensor(seq, dtype=torch.int32), "inv_freq": decoders.inv_freq(cfg)}
    golden.update({f"hidden.{i}": t[0] for i, t in enumerate(hidden)})
    safetensors_io.save(os.path.join(out, "golden.safetensors"), golden)

    # the stored (rounded) weights give the golden logits exactly
    again = decoders.DecoderForCausalLM(cfg).eval()
    stored = safetensors_io.load(os.path.join(out, "model.safetensors"))
    assert all(t.dtype == dtype for t in stored.values())
    decoders.load_state(again, stored)
    with torch.no_grad():
        assert torch.equal(again(torch.tensor([ids]))[0], logits), "stored weights do not reproduce the golden logits"
    print(f"  model.safetensors ({str(dtype).split('.')[-1]}) reproduces the golden logits exactly")

    # an independent float64 pass from the stored weights
    W = {k: v.double().numpy() for k, v in stored.items()}
    g = hf_as_gguf_names(cfg, W)
    factors = gguf_export.llama3_rope_factors(cfg) if cfg.get("rope_scaling") else np.ones(decoders.head_dim(cfg) // 2)
    wins = decoders.layer_windows(cfg)
    ref, ref_hidden = np_forward(cfg, g, ids, "neox", factors, wins)
    d = maxdiff(ref, logits[0])
    dh = max(maxdiff(a, b[0]) for a, b in zip(ref_hidden, hidden))
    print(f"  independent numpy pass: logits within {d:.2e}, hidden within {dh:.2e}")
    assert d < 1e-4 and dh < 1e-4

    # query heads really share KV heads in groups: another assignment changes the result
    H, KV, D = cfg["num_attention_heads"], cfg["num_key_value_heads"], decoders.head_dim(cfg)
    attn0 = model.model.layers[0].self_attn
    k_rows = attn0.qkv_proj.weight.shape[0] - H * D - KV * D if attn0.fused else attn0.k_proj.weight.shape[0]
    assert k_rows == KV * D
    if KV == 1:
        print(f"  multi-query attention: {H} query heads on 1 KV head")
    else:
        other, _ = np_forward(cfg, g, ids, "neox", factors, wins, kv_of=lambda h: h % KV)
        print(f"  GQA: {H} query heads on {KV} KV heads; query head h → KV head h // {H // KV} "
              f"(h % {KV} would move the logits by {maxdiff(other, ref):.3f})")
        assert maxdiff(other, ref) > 1e-3
    return model, golden, g


def check_gguf(path, cfg, g_hf, ids, golden, exact=True):
    """Reads the file back: metadata, tensors (Q/K unpermuted) and a llama.cpp-semantics forward pass."""
    f = gguf_export.read_gguf(path)
    kv, ts = f["kv"], f["tensors"]
    arch = kv["general.architecture"]
    H, KV, D = cfg["num_attention_heads"], cfg["num_key_value_heads"], decoders.head_dim(cfg)
    L = cfg["num_hidden_layers"]
    assert kv[f"{arch}.attention.head_count"] == H and kv[f"{arch}.attention.head_count_kv"] == KV
    # absent keys: llama.cpp's defaults (n_rot = key_length, else n_embd / n_head; freq_base 10000)
    n_rot = kv.get(f"{arch}.rope.dimension_count", kv.get(f"{arch}.attention.key_length", cfg["hidden_size"] // H))
    assert n_rot == D and kv[f"{arch}.block_count"] == L
    assert abs(kv.get(f"{arch}.rope.freq_base", 10000.0) - cfg["rope_theta"]) <= 1e-6 * cfg["rope_theta"]
    g = {n: np.asarray(gguf_export.tensor_f32(t), np.float64) for n, t in ts.items()}
    factors = g.pop("rope_freqs.weight") if "rope_freqs.weight" in g else np.ones(D // 2)
    # tensors back in HF's layout: identical (f32), or llama.cpp's Q8_0 of the permuted matrix (q8_0)
    for n, a in g.items():
        want = g_hf[n]
        if arch == "llama" and (".attn_q." in n or ".attn_k." in n):
            a = gguf_export.unpermute_qk(a, H if ".attn_q." in n else KV)
        if ts[n]["type"] == gguf_export.gq.Q8_0.ggml_type:
            want = gguf_export.gq.Q8_0.dequantize(gguf_export.gq.Q8_0.quantize(want.astype(np.float32).reshape(-1)),
                                                  want.size).reshape(want.shape)
        assert a.shape == want.shape and maxdiff(a, want) == 0.0, n
    assert set(g) == set(g_hf), sorted(set(g) ^ set(g_hf))
    pairs = "normal" if arch == "llama" else "neox"
    opts, wins = gguf_options(kv, L)
    logits, _ = np_forward(cfg, g, ids, pairs, factors, wins, opts=opts)
    d = maxdiff(logits, golden["logits"])
    mean = float(np.abs(logits - golden["logits"].double().numpy()).mean())
    types = sorted({gguf_export.gq.BY_GGML_TYPE[t["type"]].name if t["type"] in gguf_export.gq.BY_GGML_TYPE
                    else {0: "f32", 1: "f16", 30: "bf16"}[t["type"]] for t in ts.values()})
    print(f"  {os.path.basename(path)}: {len(ts)} tensors ({', '.join(types)}), {os.path.getsize(path)} bytes; "
          f"tensors as expected after unpermuting; {pairs}-pair RoPE from the file gives the golden logits within "
          f"{d:.2e} (mean {mean:.2e})")
    if exact:
        assert d < 1e-4
    else:  # quantized: close, also with the activations quantized as a Q8_0 matmul does; the same greedy tokens
        q8 = {n for n, t in ts.items() if t["type"] == gguf_export.gq.Q8_0.ggml_type}
        both, _ = np_forward(cfg, g, ids, pairs, factors, [0] * cfg["num_hidden_layers"], act_q8=q8)
        d2 = maxdiff(both, golden["logits"])
        seq = list(ids)
        for _ in range(N_NEW):
            step, _ = np_forward(cfg, g, seq, pairs, factors, [0] * cfg["num_hidden_layers"], act_q8=q8)
            seq.append(int(np.argmax(step[-1])))
        same = sum(a == b for a, b in zip(seq[len(ids):], golden["greedy_ids"][len(ids):].tolist()))
        print(f"    with Q8_0 activations too (as llama.cpp and the engine multiply): within {d2:.2e}; greedy "
              f"{seq[len(ids):]} ({same}/{N_NEW} as the golden)")
        assert d < 0.05 and d2 < 0.05 and seq[len(ids)] == int(golden["greedy_ids"][len(ids)])
    return f


def check_vocab(path_copied, model_dir, cfg, name):
    """The tokenizer metadata built from the folder's own files equals llama.cpp's vocabulary file's."""
    tmp = os.path.join(model_dir, ".vocab-check.gguf")
    try:
        gguf_export.convert(model_dir, tmp, "f32", name=name)
        built = gguf_export.read_gguf(tmp, tensors=False)["kv"]
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    copied = gguf_export.read_gguf(path_copied, tensors=False)["kv"]
    keys = sorted(k for k in copied if k.startswith("tokenizer.ggml."))
    extra = sorted(k for k in built if k.startswith("tokenizer.") and k not in copied)
    for k in keys:
        a, b = built.get(k), copied.get(k)
        same = (a is not None and b is not None and len(np.atleast_1d(a)) == len(np.atleast_1d(b))
                and all(x == y for x, y in zip(np.atleast_1d(a), np.atleast_1d(b))))
        if not same:
            raise AssertionError(f"{k}: built from {model_dir} {str(a)[:80]} ≠ llama.cpp's {str(b)[:80]}")
    print(f"  the {len(keys)} tokenizer.ggml.* entries of {os.path.basename(path_copied)} equal those built from the "
          f"folder's tokenizer files (which also give {', '.join(extra) or 'nothing else'})")


def effect(a, b):
    """(max |Δ| over every position's logits, how many positions' argmax changes)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return maxdiff(a, b), int((a.argmax(-1) != b.argmax(-1)).sum())


def variant_logits(cfg, model, ids, window=None):
    """The reference's logits with an edited config (or a window override) and the same weights."""
    m = decoders.DecoderForCausalLM(cfg).eval()
    m.load_state_dict(model.state_dict())
    with torch.no_grad():
        return m(torch.tensor([ids]), window=window)[0][0]


def make_gemma(root, spm_bytes, ids):
    print("gemma-tiny")
    cfg = GEMMA
    out = os.path.join(root, "gemma-tiny")
    model, golden, g = build(out, cfg, seed=GEMMA_SEED, dtype=torch.float32, ids=ids, emb_std=GEMMA_STD[0],
                             layer_std=GEMMA_STD[1], norm_center=0.0)
    write_spm_files(out, spm_bytes, GEMMA_IT)
    ones, wins = np.ones(decoders.head_dim(cfg) // 2), [0] * cfg["num_hidden_layers"]
    plain = {k: (v - 1 if k.endswith("norm.weight") else v) for k, v in g.items()}  # w instead of 1 + w
    for what, gg, opts, least in (
            ("without the √hidden embedding scale", g, {**hf_options(cfg), "emb_scale": None}, 1e-2),
            ("with w instead of 1 + w in the norms", plain, None, 1e-2),
            ("with exact (erf) GELU instead of the tanh approximation", g, {**hf_options(cfg), "act": "gelu_erf"}, 0)):
        d, n = effect(np_forward(cfg, gg, ids, "neox", ones, wins, opts=opts)[0], golden["logits"])
        print(f"  {what} the logits would move by {d:.4f} ({n} of {len(ids)} argmaxes change)")
        assert d > least
    path = os.path.join(root, "gemma-tiny-f32.gguf")
    gguf_export.convert(out, path, "f32", name="gemma-tiny", vocab_gguf=SPM_GGUF)
    check_gguf(path, cfg, g, ids, golden)


def make_gemma2(root, spm_bytes, ids):
    print("gemma2-tiny")
    cfg = GEMMA2
    L, W, D = cfg["num_hidden_layers"], cfg["sliding_window"], decoders.head_dim(cfg)
    assert len(ids) > 2 * W and cfg["query_pre_attn_scalar"] not in (D, cfg["hidden_size"] // cfg["num_attention_heads"])
    out = os.path.join(root, "gemma2-tiny")
    model, golden, g = build(out, cfg, seed=GEMMA2_SEED, dtype=torch.bfloat16, ids=ids, emb_std=GEMMA2_STD[0],
                             layer_std=GEMMA2_STD[1], norm_center=0.0)
    write_spm_files(out, spm_bytes, GEMMA_IT)
    wins = decoders.layer_windows(cfg)
    print(f"  per-layer windows {wins}: layers {[l for l, w in enumerate(wins) if w]} slide (HF's default layer_types: "
          "layer i slides when (i + 1) % 2 != 0), the others see the whole prefix")
    assert wins == [W if l % 2 == 0 else 0 for l in range(L)]
    ref = golden["logits"]
    for what, c2, window in (
            ("without attn_logit_softcapping", {**cfg, "attn_logit_softcapping": None}, None),
            ("without final_logit_softcapping", {**cfg, "final_logit_softcapping": None}, None),
            (f"with head_dim^-0.5 instead of query_pre_attn_scalar^-0.5 ({D} for {cfg['query_pre_attn_scalar']})",
             {**cfg, "query_pre_attn_scalar": D}, None),
            ("without the sliding window", cfg, 0),
            ("with the window on the odd layers instead", cfg, [0 if w else W for w in wins]),
            ("with the window on every layer", cfg, W)):
        d, n = effect(variant_logits(c2, model, ids, window), ref)
        print(f"  {what} the logits would move by {d:.4f} ({n} of {len(ids)} argmaxes change)")
        assert d > 1e-2
    try:  # llama.cpp's gemma2 scales attention by 1/sqrt(head_dim) whatever the file says
        gguf_export.convert(out, os.path.join(out, ".refused.gguf"), "f32")
        raise AssertionError("gguf_export wrote a Gemma 2 whose query_pre_attn_scalar llama.cpp cannot represent")
    except SystemExit as e:
        print(f"  no GGUF: {e}")
    # the gemma2 writer itself, on a copy whose query_pre_attn_scalar is head_dim (what llama.cpp assumes)
    tmp = tempfile.mkdtemp(prefix="gemma2-variant-")
    try:
        c2 = {**cfg, "query_pre_attn_scalar": D}
        for f in ("model.safetensors", "tokenizer.model", "tokenizer_config.json"):
            shutil.copy(os.path.join(out, f), tmp)
        dump(c2, os.path.join(tmp, "config.json"))
        path = os.path.join(tmp, "gemma2-variant-f32.gguf")
        gguf_export.convert(tmp, path, "f32", name="gemma2-variant", vocab_gguf=SPM_GGUF)
        print(f"  a copy with query_pre_attn_scalar = head_dim ({D}) converts and checks:")
        check_gguf(path, c2, g, ids, {"logits": variant_logits(c2, model, ids)})
    finally:
        shutil.rmtree(tmp)


def make_phi3(root, spm_bytes, ids):
    print("phi3-tiny")
    cfg = PHI3
    out = os.path.join(root, "phi3-tiny")
    model, golden, g = build(out, cfg, seed=PHI3_SEED, dtype=torch.float16, ids=ids, emb_std=PHI3_STD[0],
                             layer_std=PHI3_STD[1])
    write_spm_files(out, spm_bytes, PHI3_INST)
    H, KV, D, I = cfg["num_attention_heads"], cfg["num_key_value_heads"], decoders.head_dim(cfg), cfg["intermediate_size"]
    ones, wins = np.ones(D // 2), decoders.layer_windows(cfg)
    swap_gu = {k: (np.concatenate([v[I:], v[:I]]) if ".ffn_up." in k else v) for k, v in g.items()}
    swap_kv = {k: (np.concatenate([v[:H * D], v[(H + KV) * D:], v[H * D:(H + KV) * D]]) if ".attn_qkv." in k else v)
               for k, v in g.items()}
    for what, gg in (("with gate_up_proj read as (up, gate)", swap_gu), ("with qkv_proj read as (Q, V, K)", swap_kv)):
        d, n = effect(np_forward(cfg, gg, ids, "neox", ones, wins)[0], golden["logits"])
        print(f"  {what} the logits would move by {d:.4f} ({n} of {len(ids)} argmaxes change)")
        assert d > 1e-2
    path = os.path.join(root, "phi3-tiny-f16.gguf")  # f16 holds the F16 weights exactly, at half the f32 size
    gguf_export.convert(out, path, "f16", name="phi3-tiny", vocab_gguf=SPM_GGUF)
    check_gguf(path, cfg, g, ids, golden)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "fixtures"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)

    print("tokenizers")
    spm_bytes = spm_model_bytes()
    sp = check_spm(spm_bytes)
    spm_ids = [1] + sp.encode(PROMPT)
    bpe_ids = toks.ByteBPE(os.path.join(TOK, "gpt2", "encoder.json"), os.path.join(TOK, "gpt2", "vocab.bpe")).encode(PROMPT)
    print(f"  prompt {PROMPT!r}: SentencePiece {spm_ids}, GPT-2 BPE {bpe_ids}")

    print("llama-tiny")
    d = decoders.default_inv_freq(LLAMA)
    s = decoders.inv_freq(LLAMA)
    print(f"  inv_freq {d.tolist()} → llama3 {s.tolist()}; rope_freqs {gguf_export.llama3_rope_factors(LLAMA).tolist()}")
    assert (s != d).any(), "llama3 scaling changes no frequency"
    assert np.allclose(d.numpy() / gguf_export.llama3_rope_factors(LLAMA), s.numpy(), rtol=1e-6)
    out = os.path.join(a.out, "llama-tiny")
    model, golden, g = build(out, LLAMA, seed=7, dtype=torch.float32, ids=spm_ids, emb_std=0.04, layer_std=0.15)
    write_spm_files(out, spm_bytes, ZEPHYR)
    unscaled = decoders.DecoderForCausalLM({**LLAMA, "rope_scaling": None}).eval()
    unscaled.load_state_dict(model.state_dict())
    with torch.no_grad():
        moved = maxdiff(unscaled(torch.tensor([spm_ids]))[0][0], golden["logits"])
    print(f"  without rope_scaling the logits move by {moved:.3f}")
    assert moved > 1e-3
    for typ in ("f32", "q8_0"):
        path = os.path.join(a.out, f"llama-tiny-{typ}.gguf")
        gguf_export.convert(out, path, typ, name="llama-tiny", vocab_gguf=SPM_GGUF)
        check_gguf(path, LLAMA, g, spm_ids, golden, exact=typ == "f32")
    check_vocab(SPM_GGUF, out, LLAMA, "llama-tiny")

    print("qwen2-tiny")
    out = os.path.join(a.out, "qwen2-tiny")
    model, golden, g = build(out, QWEN2, seed=12, dtype=torch.bfloat16, ids=bpe_ids)
    write_gpt2_files(out)
    with torch.no_grad():
        moved = maxdiff(model(torch.tensor([bpe_ids]), window=QWEN2["sliding_window"])[0][0], golden["logits"])
    print(f"  sliding_window {QWEN2['sliding_window']} is unused (use_sliding_window false); applied, it would move the "
          f"logits by {moved:.3f}")
    assert moved > 1e-3
    path = os.path.join(a.out, "qwen2-tiny-bf16.gguf")
    gguf_export.convert(out, path, "bf16", name="qwen2-tiny", vocab_gguf=GPT2_GGUF)  # the weights are BF16: exact
    check_gguf(path, QWEN2, g, bpe_ids, golden)
    check_vocab(GPT2_GGUF, out, QWEN2, "qwen2-tiny")

    print("mistral-tiny")
    assert len(spm_ids) > 2 * MISTRAL["sliding_window"]
    out = os.path.join(a.out, "mistral-tiny")
    model, golden, g = build(out, MISTRAL, seed=13, dtype=torch.float16, ids=spm_ids)
    write_spm_files(out, spm_bytes, MISTRAL_INST)
    with torch.no_grad():
        moved = maxdiff(model(torch.tensor([spm_ids]), window=0)[0][0], golden["logits"])
    print(f"  without the window of {MISTRAL['sliding_window']} the logits move by {moved:.3f}")
    assert moved > 1e-3
    try:  # llama.cpp would convert it as "llama", which has no sliding window: the exporter refuses
        gguf_export.convert(out, os.path.join(out, ".refused.gguf"), "f32")
        raise AssertionError("gguf_export wrote a Mistral with a sliding window")
    except SystemExit as e:
        print(f"  no GGUF: {e}")

    make_gemma(a.out, spm_bytes, spm_ids)
    make_gemma2(a.out, spm_bytes, spm_ids)
    make_phi3(a.out, spm_bytes, spm_ids)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
