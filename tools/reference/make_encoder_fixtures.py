"""Writes tiny random-weight encoder checkpoints (BERT heads, DistilBERT, RoBERTa, ELECTRA, ALBERT, ModernBERT, a
sentence-transformers folder) in the exact Hugging Face layout, with golden activations and golden pipeline outputs.

  nice -n 10 /usr/bin/python3 tools/reference/make_encoder_fixtures.py --out tests/data/fixtures
  nice -n 10 /usr/bin/python3 tools/reference/make_encoder_fixtures.py --out tests/data/fixtures --only bert-tiny-ner

Deterministic (fixed seeds, one thread). Each folder gets:
  config.json            HF form (architectures, model_type, id2label/label2id and problem_type where there are labels)
  model.safetensors      F32, state_dict keys as save_pretrained writes them (tied output matrices left out)
  tokenizer files        vocab.txt + tokenizer_config.json (WordPiece), or vocab.json + merges.txt +
                         tokenizer_config.json + special_tokens_map.json (RoBERTa layout built from GPT-2's files), or
                         (ModernBERT) tokenizer.json only + tokenizer_config.json + special_tokens_map.json: byte-level
                         BPE of GPT-2's first MB_MERGES merges (GPT-2's ids), <|endoftext|>, then the added tokens
                         [UNK] [CLS] [SEP] [PAD] [MASK] ([MASK] lstrip), TemplateProcessing [CLS] $A [SEP] ($B [SEP])
  golden-texts.json      the three inputs of the golden batch (a string, or {"text", "text_pair"})
  golden.safetensors     input_ids (B, T) I32 padded with the tokenizer's pad id; lengths (B) I32;
                         token_type_ids (B, T) I32 (BERT and ELECTRA only); hidden.{i} (T, E) F32 of the FIRST
                         sequence (the longest, so T is its own length): embeddings output (after ELECTRA's
                         embeddings_project), then after each layer; last_hidden (B, T, E) with the padded rows as the
                         model computes them (attention masked) — for ModernBERT, final_norm of the last layer's output
                         (HF's last_hidden_state; hidden.{N} is before it, as HF's hidden_states); and the head:
                           sequence classification: logits (B, L) (ModernBERT: classifier_pooling "mean" over the
                           real tokens of last_hidden, then head dense → gelu → norm, then classifier)
                           token classification: logits (B, T, L); ELECTRA discriminator: logits (B, T)
                           question answering: start_logits, end_logits (B, T)
                           masked LM: mask_positions (K) I32 in the first sequence, mask_logits (K, V)
                           BertModel (sentence-transformers): pooler_output (B, E), sentence_embedding (B, E)
                           (masked mean of last_hidden, L2-normalized: modules 1_Pooling mean + 2_Normalize)
  golden-pipeline.json   {"task", "offsets": "code points", "cases": [{"inputs", "options", "output"}]} from
                         tools/reference/pipelines.py

ModernBERT (modernbert-tiny-mlm / -cls / -ner): hidden 32, 4 heads, intermediate 24, 4 layers with
global_attn_every_n_layers 3 (layers 0 and 3 global, RoPE theta 160000; 1 and 2 local, theta 10000, window ±4 of
local_attention 8), every golden text ≥ 12 tokens; check_modernbert asserts that lifting the window or giving the
local layers the global theta changes layer 1's output on every golden text, and that the tokenizer round-trips
them. Its padded-batch check allows 3e-6 (pre-norm: the residual stream is not renormalized between layers).
"""
import argparse
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import encoders  # noqa: E402
import pipelines  # noqa: E402
import safetensors_io  # noqa: E402
import tokenizers as toks  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TOK = os.path.join(ROOT, "tests", "data", "tokenizers")

E, HEADS, LAYERS, INTER, MAXPOS = 16, 2, 2, 37, 64

BERT = dict(vocab_size=30522, hidden_size=E, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
            intermediate_size=INTER, hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
            max_position_embeddings=MAXPOS, type_vocab_size=2, initializer_range=0.02, layer_norm_eps=1e-12,
            pad_token_id=0, position_embedding_type="absolute", classifier_dropout=None)
DISTIL = dict(vocab_size=30522, dim=E, n_layers=LAYERS, n_heads=HEADS, hidden_dim=INTER, activation="gelu",
              dropout=0.1, attention_dropout=0.1, qa_dropout=0.1, seq_classif_dropout=0.2,
              max_position_embeddings=MAXPOS, sinusoidal_pos_embds=False, tie_weights_=True, initializer_range=0.02,
              pad_token_id=0)
ROBERTA = dict(vocab_size=50262, hidden_size=E, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
               intermediate_size=INTER, hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
               max_position_embeddings=MAXPOS + 2, type_vocab_size=1, initializer_range=0.02, layer_norm_eps=1e-5,
               pad_token_id=1, bos_token_id=0, eos_token_id=2, position_embedding_type="absolute",
               classifier_dropout=None)
ELECTRA = dict(vocab_size=30522, embedding_size=8, hidden_size=E, num_hidden_layers=LAYERS,
               num_attention_heads=HEADS, intermediate_size=INTER, hidden_act="gelu", hidden_dropout_prob=0.1,
               attention_probs_dropout_prob=0.1, max_position_embeddings=MAXPOS, type_vocab_size=2,
               initializer_range=0.02, layer_norm_eps=1e-12, pad_token_id=0, position_embedding_type="absolute",
               summary_type="first", summary_use_proj=True, summary_activation="gelu", summary_last_dropout=0.1,
               classifier_dropout=None)

ALBERT = dict(vocab_size=30522, embedding_size=8, hidden_size=E, num_hidden_layers=4, num_hidden_groups=2,
              inner_group_num=1, num_attention_heads=HEADS, intermediate_size=INTER, hidden_act="gelu_new",
              hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=MAXPOS,
              type_vocab_size=2, initializer_range=0.02, layer_norm_eps=1e-12, pad_token_id=0,
              position_embedding_type="absolute", classifier_dropout_prob=0.1)

# ModernBERT: the first MB_MERGES merges of GPT-2's vocab.bpe (GPT-2's ids: token 256 + i is merge i), then
# <|endoftext|> and the added tokens [UNK] [CLS] [SEP] [PAD] [MASK]; embeddings rounded up to a multiple of 64 rows
# (ModernBERT's 50368 is likewise rounded up past its tokenizer)
MB_MERGES = 10000
MB_SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
MB_TOKENS = 256 + MB_MERGES + 1 + len(MB_SPECIALS)
MB_ID = {t: 256 + MB_MERGES + 1 + i for i, t in enumerate(MB_SPECIALS)}
MODERNBERT = dict(vocab_size=(MB_TOKENS + 63) // 64 * 64, hidden_size=32, intermediate_size=24, num_hidden_layers=4,
                  num_attention_heads=4, hidden_activation="gelu", max_position_embeddings=MAXPOS,
                  initializer_range=0.02, initializer_cutoff_factor=2.0, norm_eps=1e-5, norm_bias=False,
                  pad_token_id=MB_ID["[PAD]"], eos_token_id=MB_ID["[SEP]"], bos_token_id=MB_ID["[CLS]"],
                  cls_token_id=MB_ID["[CLS]"], sep_token_id=MB_ID["[SEP]"], global_rope_theta=160000.0,
                  attention_bias=False, attention_dropout=0.0, global_attn_every_n_layers=3, local_attention=8,
                  local_rope_theta=10000.0, embedding_dropout=0.0, mlp_bias=False, mlp_dropout=0.0,
                  decoder_bias=True, classifier_pooling="mean", classifier_dropout=0.0, classifier_bias=False,
                  classifier_activation="gelu", deterministic_flash_attn=False, sparse_prediction=False,
                  sparse_pred_ignore_index=-100, tie_word_embeddings=True, layer_norm_eps=1e-5,
                  position_embedding_type="absolute", gradient_checkpointing=False, torch_dtype="float32")

NER_LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]

# golden batches: three inputs of different lengths, the first the longest
TEXTS_WP = ["The quick brown fox jumps over the lazy dog near Zürich, and Émile watched it.",
            "Hello world!",
            "A short one 😀 here"]
TEXTS_WP_PAIR = [TEXTS_WP[0], TEXTS_WP[1], {"text": "Is it raining?", "text_pair": "No, it is sunny."}]
TEXTS_QA = [{"text": "Where did Émile see the fox?", "text_pair": "Émile saw the quick brown fox near the old mill "
             "in Zürich, late in the evening."},
            {"text": "Who?", "text_pair": "Nobody."},
            {"text": "What is it?", "text_pair": "It is a test 😀."}]
TEXTS_ROBERTA_MLM = ["The capital of France is <mask>. Émile said it has <mask> people and 😀 museums.",
                     "Hello world!",
                     "A short one here"]
TEXTS_ROBERTA_CLS = ["The quick brown fox jumps over the lazy dog near Zürich, and Émile watched it.",
                     "Hello world!",
                     {"text": "Is it raining?", "text_pair": "No, it is sunny 😀."}]

CLS_CASE_TEXTS = ["I loved this movie, it was wonderful!",
                  "Émile's Éclair was terrible.",
                  "Fine 😀 I guess",
                  {"text": "A man is eating food.", "text_pair": "Someone eats a meal."}]
NER_CASE_TEXTS = ["My name is Wolfgang and I live in Berlin.",
                  "Élodie Dupré works at Hugging Face in São Paulo 😀 today.",
                  "Unbelievably, tokenization of antidisestablishmentarianism works."]
QA_QUESTION = "Where did Élodie hide the golden key?"
QA_CONTEXT = ("Élodie Dupré lived in a small house near the river in São Paulo. Every morning she walked her "
              "dachshund along the waterfront 😀 and greeted the bakers. One rainy evening she hid the golden key "
              "under the blue flowerpot in the overgrown garden, because her brother kept misplacing his. Nobody "
              "found it for years, until a mischievous cat knocked the flowerpot over during a thunderstorm in late "
              "November.")
# ModernBERT's golden batches: every text at least 12 tokens, so that the local layers' window (±4) cuts
TEXTS_MB_MLM = ["The capital of France is [MASK]. Émile said it has [MASK] people, 12 bridges and 😀 museums.",
                "Hello world! This sentence is a little shorter than the [MASK] one.",
                "A third text: [MASK] fox jumps over the dog."]
TEXTS_MB_CLS = ["The quick brown fox jumps over the lazy dog near Zürich, and Émile watched it from the café.",
                "Hello world! I loved this movie, it was wonderful.",
                {"text": "Is it raining in Paris?", "text_pair": "No, it is sunny 😀."}]
TEXTS_MB_NER = ["Élodie Dupré works at Hugging Face in São Paulo and visits Berlin every summer 😀.",
                "My name is Wolfgang and I live in Berlin.",
                "Unbelievably, tokenization works here."]
MB_MASK_CASES = [("The capital of France is [MASK].", {}),
                 ("Émile bought [MASK] 😀 apples at the market on Sunday morning.", {"top_k": 3}),
                 ("[MASK] is the best thing about living in a big city like this one, said Zoë.", {"top_k": 4})]

ST_CASE_TEXTS = ["This is a sentence.", "Émile's café serves crêpes 😀.", "Another, slightly longer example sentence."]


def wordpiece():
    return toks.WordPiece(os.path.join(TOK, "bert", "vocab.txt"))


def write_wordpiece_files(out, extra=None):
    shutil.copy(os.path.join(TOK, "bert", "vocab.txt"), out)
    cfg = {"do_lower_case": True}
    cfg.update(extra or {})
    dump(cfg, os.path.join(out, "tokenizer_config.json"), indent=None)


def write_roberta_files(out):
    with open(os.path.join(TOK, "gpt2", "encoder.json"), encoding="utf-8") as f:
        gpt2 = json.load(f)
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for t, i in sorted(gpt2.items(), key=lambda kv: kv[1]):
        vocab[t] = i + 4
    vocab["<mask>"] = len(vocab)
    assert len(vocab) == ROBERTA["vocab_size"]
    with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, separators=(",", ":"))
    shutil.copy(os.path.join(TOK, "gpt2", "vocab.bpe"), os.path.join(out, "merges.txt"))
    dump({"tokenizer_class": "RobertaTokenizer", "model_max_length": MAXPOS}, os.path.join(out, "tokenizer_config.json"))
    dump({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>", "pad_token": "<pad>",
          "cls_token": "<s>", "mask_token": {"content": "<mask>", "lstrip": True, "rstrip": False, "normalized": False,
                                             "single_word": False}}, os.path.join(out, "special_tokens_map.json"))
    return toks.RobertaBPE(os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt"))


def write_modernbert_files(out):
    """tokenizer.json (ModernBERT's layout, GPT-2's first MB_MERGES merges), tokenizer_config.json,
    special_tokens_map.json; returns the reference tokenizer read back from them."""
    with open(os.path.join(TOK, "gpt2", "encoder.json"), encoding="utf-8") as f:
        gpt2 = json.load(f)
    with open(os.path.join(TOK, "gpt2", "vocab.bpe"), encoding="utf-8") as f:
        merges = [l.split(" ") for l in f.read().split("\n")[1:] if l][:MB_MERGES]
    vocab = {t: i for t, i in sorted(gpt2.items(), key=lambda kv: kv[1]) if i < 256 + MB_MERGES}
    assert all(vocab[a + b] == 256 + i for i, (a, b) in enumerate(merges)) and len(vocab) == 256 + MB_MERGES
    eot = 256 + MB_MERGES
    vocab["<|endoftext|>"] = eot

    def added(i, t, lstrip=False):
        return {"id": i, "content": t, "single_word": False, "lstrip": lstrip, "rstrip": False, "normalized": False,
                "special": True}
    added_tokens = [added(eot, "<|endoftext|>")] + [added(MB_ID[t], t, t == "[MASK]") for t in MB_SPECIALS]
    assert len(vocab) + len(MB_SPECIALS) == MB_TOKENS <= MODERNBERT["vocab_size"]
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added_tokens, "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "special_tokens": {t: {"id": t, "ids": [MB_ID[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges}}
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, separators=(",", ":"))
    roles = {"cls": "[CLS]", "sep": "[SEP]", "pad": "[PAD]", "unk": "[UNK]", "mask": "[MASK]"}
    dump({"added_tokens_decoder": {str(a["id"]): {k: v for k, v in a.items() if k != "id"} for a in added_tokens},
          "clean_up_tokenization_spaces": False, "cls_token": "[CLS]", "extra_special_tokens": {},
          "mask_token": "[MASK]", "model_input_names": ["input_ids", "attention_mask"], "model_max_length": MAXPOS,
          "pad_token": "[PAD]", "sep_token": "[SEP]", "tokenizer_class": "PreTrainedTokenizerFast",
          "unk_token": "[UNK]"}, os.path.join(out, "tokenizer_config.json"))
    dump({f"{r}_token": {k: v for k, v in added_tokens[1 + MB_SPECIALS.index(t)].items()
                         if k in ("content", "lstrip", "normalized", "rstrip", "single_word")}
          for r, t in roles.items()}, os.path.join(out, "special_tokens_map.json"))
    return toks.TokenizerJsonBPE(os.path.join(out, "tokenizer.json"), roles)


def dump(obj, path, indent=2):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        if indent:
            f.write("\n")


def labels_cfg(labels, problem_type=None):
    c = {"id2label": {str(i): l for i, l in enumerate(labels)}, "label2id": {l: i for i, l in enumerate(labels)}}
    if problem_type:
        c["problem_type"] = problem_type
    return c


def make_model(out, arch, model_type, base, seed, extra=None, gain=None):
    """config.json + model.safetensors; returns the eval model (its .config carries num_labels).

    gain: {parameter name: factor} applied after randomize — the heads' output matrices are scaled up so that the
    random logits spread (decisive argmaxes, varied B-/I-/O tags, peaked QA spans) instead of sitting near uniform,
    where a float32 engine could flip near-ties."""
    cfg = dict(architectures=[arch], model_type=model_type, **base)
    cfg.update(extra or {})
    os.makedirs(out, exist_ok=True)
    dump(cfg, os.path.join(out, "config.json"))
    mcfg = dict(cfg)
    if "id2label" in cfg:
        mcfg["num_labels"] = len(cfg["id2label"])
    model = encoders.build(mcfg)
    encoders.randomize(model, seed)
    with torch.no_grad():
        for name, factor in (gain or {}).items():
            dict(model.named_parameters())[name].mul_(factor)
    state = encoders.export_state(model)
    safetensors_io.save(os.path.join(out, "model.safetensors"), state, metadata={"format": "pt"})
    return model


def encode_batch(tok, entries):
    encs = [tok.encode_pair(e["text"], e.get("text_pair")) if isinstance(e, dict) else tok.encode_pair(e)
            for e in entries]
    pad = tok.special()["pad"]
    T = max(len(e["input_ids"]) for e in encs)
    ids = torch.full((len(encs), T), pad, dtype=torch.int64)
    tt = torch.zeros((len(encs), T), dtype=torch.int64)
    lengths = torch.tensor([len(e["input_ids"]) for e in encs], dtype=torch.int64)
    for b, e in enumerate(encs):
        ids[b, :len(e["input_ids"])] = torch.tensor(e["input_ids"])
        tt[b, :len(e["input_ids"])] = torch.tensor(e["token_type_ids"])
    mask = (torch.arange(T)[None, :] < lengths[:, None]).to(torch.int64)
    return ids, tt, mask, lengths


def check_padding(model, ids, tt, mask, lengths, head_kind, tol=1e-6):
    """Padded batch against each text alone: real rows of every hidden state must agree within tol (1e-6; the head's
    outputs, some scaled up by `gain`, within 1e-5). Returns the largest hidden-state difference."""
    worst, worst_head = 0.0, 0.0
    with torch.no_grad():
        hs_b, out_b = model(ids, mask, tt)
        for b in range(ids.shape[0]):
            n = int(lengths[b])
            hs_1, out_1 = model(ids[b:b + 1, :n], mask[b:b + 1, :n], tt[b:b + 1, :n])
            for x, y in zip(hs_b, hs_1):
                worst = max(worst, (x[b, :n] - y[0]).abs().max().item())
            if head_kind == "qa":
                for x, y in zip(out_b, out_1):
                    worst_head = max(worst_head, (x[b, :n] - y[0]).abs().max().item())
            elif head_kind in ("token", "mlm"):
                worst_head = max(worst_head, (out_b[b, :n] - out_1[0]).abs().max().item())
            else:   # sequence-level
                worst_head = max(worst_head, (out_b[b] - out_1[0]).abs().max().item())
    assert worst < tol, f"padded batch differs from single texts by {worst}"
    assert worst_head < 1e-5, f"padded batch head output differs from single texts by {worst_head}"
    return worst


def write_golden(out, model, tok, entries, head_kind, use_token_types, pad_tol=1e-6):
    ids, tt, mask, lengths = encode_batch(tok, entries)
    assert int(lengths[0]) == ids.shape[1] and len(set(lengths.tolist())) == len(entries), "first longest, distinct"
    worst = check_padding(model, ids, tt, mask, lengths, head_kind, pad_tol)
    with torch.no_grad():
        hs, out_ = model(ids, mask, tt)
    g = {"input_ids": ids.to(torch.int32), "lengths": lengths.to(torch.int32), "last_hidden": encoders.last_hidden(model, hs)}
    if use_token_types:
        g["token_type_ids"] = tt.to(torch.int32)
    g.update({f"hidden.{i}": h[0] for i, h in enumerate(hs)})
    if head_kind == "qa":
        g["start_logits"], g["end_logits"] = out_
    elif head_kind == "mlm":
        pos = (ids[0] == tok.special()["mask"]).nonzero()[:, 0]
        assert len(pos) > 0
        g["mask_positions"] = pos.to(torch.int32)
        g["mask_logits"] = out_[0, pos]
    elif head_kind == "st":
        g["pooler_output"] = out_
        m = mask[..., None].to(hs[-1].dtype)
        emb = (hs[-1] * m).sum(1) / m.sum(1)
        g["sentence_embedding"] = emb / emb.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    else:
        g["logits"] = out_
    safetensors_io.save(os.path.join(out, "golden.safetensors"), {k: v.contiguous() for k, v in g.items()})
    dump(entries, os.path.join(out, "golden-texts.json"))
    return worst


def _rel_gaps(scores):
    s = sorted(scores, reverse=True)
    return [(a - b) / max(abs(a), 1e-30) for a, b in zip(s, s[1:])]


def guard_ties(model, tok, task, cases):
    """Fails when a golden output hangs on a near-tie (relative gap < 1e-4) that float32 rounding could flip:
    token argmaxes (token-classification), ranked scores (text-classification, question-answering, fill-mask).
    Returns the smallest relative gap seen."""
    worst = 1.0
    for c in cases:
        if task == "token-classification":
            enc = tok.encode_pair(c["inputs"])
            _, logits = pipelines._forward(model, enc)
            p = pipelines._softmax(logits[0].numpy())
            gaps = [_rel_gaps(row)[0] for row in p]
        elif task == "question-answering":
            o = c["output"] if isinstance(c["output"], list) else [c["output"]]
            assert all(x["score"] > 0 for x in o), "a zero-score span: argpartition order would decide it"
            k = c["options"].get("top_k", 1)
            more = pipelines.question_answering(model, tok, c["inputs"]["question"], c["inputs"]["context"],
                                                model_max_length=MAXPOS, **dict(c["options"], top_k=k + 1))
            gaps = _rel_gaps([x["score"] for x in (more if isinstance(more, list) else [more])])
        elif task == "fill-mask":
            gaps = _rel_gaps([x["score"] for x in c["output"]])
        elif task == "text-classification":
            gaps = _rel_gaps([x["score"] for x in pipelines.text_classification(model, tok, c["inputs"], top_k=None)])
        else:
            gaps = []
        worst = min([worst] + gaps)
    assert worst > 1e-4, f"{task}: near-tie, relative gap {worst:.2e}"
    return worst


def write_pipeline(out, task, cases, note=None, model=None, tok=None):
    if model is not None:
        print(f"  {task}: smallest relative gap between ranked outputs {guard_ties(model, tok, task, cases):.2e}")
    doc = {"task": task, "offsets": "code points"}
    if note:
        doc["note"] = note
    doc["cases"] = cases
    dump(doc, os.path.join(out, "golden-pipeline.json"))


def cls_cases(model, tok):
    cases = []
    for t in CLS_CASE_TEXTS:
        for opts in ({}, {"top_k": 1}, {"top_k": 2}, {"top_k": None}):
            cases.append({"inputs": t, "options": opts, "output": pipelines.text_classification(model, tok, t, **opts)})
    return cases


CLS_NOTE = ("HF TextClassificationPipeline on one input (a string, or {text, text_pair}): options {} is the legacy "
            "call without top_k (a one-element list); top_k k: the k best sorted; top_k null: every label sorted.")


# ---------------------------------------------------------------------------------------------------- fixtures
def bert_tiny_cls(out):
    labels = ["NEGATIVE", "NEUTRAL", "POSITIVE"]
    model = make_model(out, "BertForSequenceClassification", "bert", BERT, 11,
                       labels_cfg(labels, "single_label_classification"), {"classifier.weight": 4.0})
    write_wordpiece_files(out)
    tok = wordpiece()
    w = write_golden(out, model, tok, TEXTS_WP_PAIR, "seq", True)
    write_pipeline(out, "text-classification", cls_cases(model, tok), CLS_NOTE, model, tok)
    return w


def distilbert_tiny_multilabel(out):
    labels = ["toxic", "insult", "threat", "obscene"]
    model = make_model(out, "DistilBertForSequenceClassification", "distilbert", DISTIL, 12,
                       labels_cfg(labels, "multi_label_classification"), {"classifier.weight": 4.0})
    write_wordpiece_files(out)
    tok = wordpiece()
    w = write_golden(out, model, tok, TEXTS_WP, "seq", False)
    write_pipeline(out, "text-classification", cls_cases(model, tok), CLS_NOTE + " Sigmoid (multi-label).", model, tok)
    return w


def bert_tiny_ner(out):
    model = make_model(out, "BertForTokenClassification", "bert", BERT, 13, labels_cfg(NER_LABELS),
                       {"classifier.weight": 10.0})
    write_wordpiece_files(out)
    tok = wordpiece()
    w = write_golden(out, model, tok, TEXTS_WP, "token", True)
    cases = []
    for t in NER_CASE_TEXTS:
        for agg in ("none", "simple", "first", "average", "max"):
            opts = {"aggregation_strategy": agg}
            cases.append({"inputs": t, "options": opts, "output": pipelines.token_classification(model, tok, t, **opts)})
    for agg in ("none", "simple"):
        opts = {"aggregation_strategy": agg, "ignore_labels": []}
        t = NER_CASE_TEXTS[1]
        cases.append({"inputs": t, "options": opts, "output": pipelines.token_classification(model, tok, t, **opts)})
    write_pipeline(out, "token-classification", cases,
                   "HF TokenClassificationPipeline, fast tokenizer (is_subword from offsets), ignore_labels default "
                   "[\"O\"]; 'word' of none/simple tokens is the token string ([UNK]: the original text); of "
                   "groups/words convert_tokens_to_string (WordPiece decoder, cleanup on).", model, tok)
    return w


def distilbert_tiny_qa(out):
    model = make_model(out, "DistilBertForQuestionAnswering", "distilbert", DISTIL, 14, None,
                       {"qa_outputs.weight": 10.0})
    write_wordpiece_files(out, {"model_max_length": MAXPOS})
    tok = wordpiece()
    w = write_golden(out, model, tok, TEXTS_QA, "qa", False)
    inputs = {"question": QA_QUESTION, "context": QA_CONTEXT}
    n_windows = len(tok.encode_pair_windows(QA_QUESTION, QA_CONTEXT, 32, 8))
    assert n_windows >= 3, n_windows
    cases = []
    for opts in ({"max_seq_len": 32, "doc_stride": 8},
                 {"max_seq_len": 32, "doc_stride": 8, "top_k": 3},
                 {"max_seq_len": 32, "doc_stride": 8, "top_k": 3, "align_to_words": False},
                 {"max_seq_len": 32, "doc_stride": 8, "top_k": 2, "handle_impossible_answer": True},
                 {"max_seq_len": 40, "doc_stride": 10, "max_answer_len": 4, "top_k": 5},
                 {"max_seq_len": 32, "doc_stride": 8, "top_k": 12, "align_to_words": True},
                 {"max_seq_len": 32, "doc_stride": 8, "top_k": 12, "align_to_words": False},
                 {}):
        o = pipelines.question_answering(model, tok, QA_QUESTION, QA_CONTEXT, model_max_length=MAXPOS, **opts)
        cases.append({"inputs": inputs, "options": opts, "output": o})
    short = {"question": "Who?", "context": "Émile 😀 met Zoë at the café."}
    for opts in ({}, {"top_k": 4}):
        o = pipelines.question_answering(model, tok, short["question"], short["context"], model_max_length=MAXPOS,
                                         **opts)
        cases.append({"inputs": short, "options": opts, "output": o})
    write_pipeline(out, "question-answering", cases,
                   f"HF QuestionAnsweringPipeline (fast tokenizer, question first, truncation only_second with "
                   f"overflowing windows; defaults: max_seq_len min(model_max_length {MAXPOS}, 384), doc_stride "
                   f"min(max_seq_len // 2, 128), max_answer_len 15, top_k 1, align_to_words true). The long context "
                   f"gives {n_windows} windows at max_seq_len 32, doc_stride 8.", model, tok)
    return w


def roberta_tiny_mlm(out):
    model = make_model(out, "RobertaForMaskedLM", "roberta", ROBERTA, 15, None, {"lm_head.layer_norm.weight": 4.0})
    tok = write_roberta_files(out)
    w = write_golden(out, model, tok, TEXTS_ROBERTA_MLM, "mlm", False)
    cases = []
    for t, opts in (("The capital of France is <mask>.", {}), ("Émile bought <mask> 😀 apples.", {"top_k": 3})):
        cases.append({"inputs": t, "options": opts, "output": pipelines.fill_mask(model, tok, t, **opts)})
    write_pipeline(out, "fill-mask", cases,
                   "HF FillMaskPipeline; <mask> is an added token with lstrip (takes the space before it); "
                   "decode without clean_up_tokenization_spaces.", model, tok)
    return w


def roberta_tiny_cls(out):
    model = make_model(out, "RobertaForSequenceClassification", "roberta", ROBERTA, 16,
                       labels_cfg(["NEGATIVE", "POSITIVE"], "single_label_classification"),
                       {"classifier.out_proj.weight": 4.0})
    tok = write_roberta_files(out)
    w = write_golden(out, model, tok, TEXTS_ROBERTA_CLS, "seq", False)
    write_pipeline(out, "text-classification", cls_cases(model, tok), CLS_NOTE, model, tok)
    return w


def feature_cases(model, tok, texts, poolings=("none", "mean", "cls")):
    cases = []
    for t in texts:
        for pooling in poolings:
            for normalize in (False, True):
                opts = {"pooling": pooling, "normalize": normalize}
                cases.append({"inputs": t, "options": opts,
                              "output": pipelines.feature_extraction(model, tok, t, **opts)})
    return cases


FE_NOTE = ("feature-extraction: the last hidden state (1, T, E) with special tokens; pooling mean (attention-masked) "
           "or cls (position 0) → (1, E); normalize: L2 over the last dimension (transformers.js options).")


def electra_tiny_disc(out):
    model = make_model(out, "ElectraForPreTraining", "electra", ELECTRA, 17)
    write_wordpiece_files(out)
    tok = wordpiece()
    w = write_golden(out, model, tok, TEXTS_WP, "token", True)
    base = encoders.ElectraModel(model.config).eval()
    base.load_state_dict({k[len("electra."):]: v for k, v in model.state_dict().items() if k.startswith("electra.")})
    fe = lambda ids, m, tt: (base.hidden_states(ids, m, tt), None)   # the pipeline's AutoModel: ElectraModel
    fe.config = model.config
    write_pipeline(out, "feature-extraction", feature_cases(fe, tok, ST_CASE_TEXTS[:2], ("none", "cls")), FE_NOTE)
    return w


def bert_tiny_st(out):
    model = make_model(out, "BertModel", "bert", BERT, 18)
    write_wordpiece_files(out)
    tok = wordpiece()
    dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
          {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
          {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
         os.path.join(out, "modules.json"))
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    os.makedirs(os.path.join(out, "2_Normalize"), exist_ok=True)   # empty, as sentence-transformers writes it
    dump({"word_embedding_dimension": E, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
          "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False,
          "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": False, "include_prompt": True},
         os.path.join(out, "1_Pooling", "config.json"))
    dump({"max_seq_length": MAXPOS, "do_lower_case": False}, os.path.join(out, "sentence_bert_config.json"))
    w = write_golden(out, model, tok, TEXTS_WP, "st", True)
    write_pipeline(out, "feature-extraction", feature_cases(model, tok, ST_CASE_TEXTS), FE_NOTE)
    return w


def albert_tiny_cls(out):
    """ALBERT: 4 layers sharing 2 groups' weights, embeddings narrower than the hidden size, gelu_new. The tokenizer
    here is BERT's WordPiece (ALBERT's own is SentencePiece); the model's numbers are what this fixture checks."""
    model = make_model(out, "AlbertForSequenceClassification", "albert", ALBERT, 19,
                       labels_cfg(["NEGATIVE", "POSITIVE"], "single_label_classification"), {"classifier.weight": 4.0})
    write_wordpiece_files(out)
    tok = wordpiece()
    w = write_golden(out, model, tok, TEXTS_WP_PAIR, "seq", True)
    write_pipeline(out, "text-classification", cls_cases(model, tok), CLS_NOTE, model, tok)
    return w


def check_modernbert(model, tok, entries):
    """The golden batch exercises what ModernBERT adds: local layers' window (their outputs change when it is
    lifted, the global layer 0's do not), the local RoPE theta (outputs change with the global one in its place);
    the tokenizer round-trips each text. Returns the smallest change seen."""
    c = model.config
    local = [l for l in range(c["num_hidden_layers"]) if encoders.modernbert_is_local(c, l)]
    assert local and local[0] > 0, "layer 0 must be global and some layer local"
    ids, tt, mask, lengths = encode_batch(tok, entries)
    assert int(lengths.min()) > c["local_attention"] // 2 * 2 + 1 + 2, "every text longer than a window"
    for e, n, row in zip(entries, lengths.tolist(), ids.tolist()):
        text = e if isinstance(e, str) else e["text"] + e["text_pair"]
        want = text.replace(" [MASK]", "[MASK]")      # [MASK] takes the space before it (lstrip)
        assert tok.decode(row[:n], skip_special_tokens=False).replace("[CLS]", "").replace("[SEP]", "") == want
    with torch.no_grad():
        hs = model.hidden_states(ids, mask)
        free = model.hidden_states(ids, mask, sliding_window=False)
        other = encoders.build(dict(c, local_rope_theta=c["global_rope_theta"]))
        other.load_state_dict(model.state_dict())
        swapped = other.hidden_states(ids, mask)
    first = local[0] + 1                                  # hidden states index: after that layer
    n0 = int(lengths[0])
    assert all(torch.equal(hs[i], free[i]) for i in range(first)), "the window changed a global layer"
    assert all(torch.equal(hs[i], swapped[i]) for i in range(first))
    gaps = []
    for b, n in enumerate(lengths.tolist()):
        gaps.append((hs[first][b, :n] - free[first][b, :n]).abs().max().item())
        gaps.append((hs[first][b, :n] - swapped[first][b, :n]).abs().max().item())
    assert min(gaps) > 1e-2, f"window or local theta hardly matter: {gaps}"
    print(f"  window lifted / local theta swapped change layer {local[0]}'s output by >= {min(gaps):.3f}; "
          f"first text {n0} tokens, window ±{c['local_attention'] // 2}")
    return min(gaps)


# attention weights scaled up so that the attention is peaked (RoPE and the window then shape every layer's output)
MB_GAIN = {f"model.layers.{l}.attn.Wqkv.weight": 3.0 for l in range(MODERNBERT["num_hidden_layers"])}


def modernbert_fixture(out, arch, seed, entries, head_kind, extra=None, gain=None):
    model = make_model(out, arch, "modernbert", MODERNBERT, seed, extra, gain)
    tok = write_modernbert_files(out)
    check_modernbert(model, tok, entries)
    # pre-norm: the residual stream (|h| up to ~4) carries float32 rounding through 4 layers unnormalized, so a padded
    # batch and a text alone (other matmul and softmax lengths) may differ by a few ulps, not 1e-6
    return model, tok, write_golden(out, model, tok, entries, head_kind, False, pad_tol=3e-6)


def modernbert_tiny_mlm(out):
    model, tok, w = modernbert_fixture(out, "ModernBertForMaskedLM", 20, TEXTS_MB_MLM, "mlm",
                                       gain=dict(MB_GAIN, **{"head.norm.weight": 4.0}))
    cases = []
    for t, opts in MB_MASK_CASES:
        o = pipelines.fill_mask(model, tok, t, **opts)
        assert all(x["token"] < MB_TOKENS for x in o), "a prediction among the embedding rows past the tokenizer"
        cases.append({"inputs": t, "options": opts, "output": o})
    write_pipeline(out, "fill-mask", cases,
                   "HF FillMaskPipeline; [MASK] is an added token with lstrip (takes the space before it); "
                   "decode without clean_up_tokenization_spaces (tokenizer_config.json says false).", model, tok)
    return w


def modernbert_tiny_cls(out):
    model, tok, w = modernbert_fixture(out, "ModernBertForSequenceClassification", 21, TEXTS_MB_CLS, "seq",
                                       labels_cfg(["NEGATIVE", "NEUTRAL", "POSITIVE"], "single_label_classification"),
                                       dict(MB_GAIN, **{"classifier.weight": 4.0}))
    write_pipeline(out, "text-classification", cls_cases(model, tok), CLS_NOTE + " Mean pooling over the tokens.",
                   model, tok)
    return w


def modernbert_tiny_ner(out):
    model, tok, w = modernbert_fixture(out, "ModernBertForTokenClassification", 22, TEXTS_MB_NER, "token",
                                       labels_cfg(NER_LABELS), dict(MB_GAIN, **{"classifier.weight": 5.0}))
    cases = []
    for t in NER_CASE_TEXTS:
        for agg in ("none", "simple", "first", "average", "max"):
            opts = {"aggregation_strategy": agg}
            cases.append({"inputs": t, "options": opts, "output": pipelines.token_classification(model, tok, t, **opts)})
    for agg in ("none", "simple"):
        opts = {"aggregation_strategy": agg, "ignore_labels": []}
        t = NER_CASE_TEXTS[1]
        cases.append({"inputs": t, "options": opts, "output": pipelines.token_classification(model, tok, t, **opts)})
    write_pipeline(out, "token-classification", cases,
                   "HF TokenClassificationPipeline, fast tokenizer; byte-level BPE without continuing_subword_prefix, "
                   "so is_subword is HF's fallback heuristic (start > 0 and no space in text[start-1:start+1]); "
                   "ignore_labels default [\"O\"]; 'word' of none/simple tokens is the token string (byte-level "
                   "form, e.g. 'ĠBerlin'); of groups/words convert_tokens_to_string (ByteLevel decoder).", model, tok)
    return w


FIXTURES = {
    "bert-tiny-cls": bert_tiny_cls,
    "distilbert-tiny-multilabel": distilbert_tiny_multilabel,
    "bert-tiny-ner": bert_tiny_ner,
    "distilbert-tiny-qa": distilbert_tiny_qa,
    "roberta-tiny-mlm": roberta_tiny_mlm,
    "roberta-tiny-cls": roberta_tiny_cls,
    "electra-tiny-disc": electra_tiny_disc,
    "bert-tiny-st": bert_tiny_st,
    "albert-tiny-cls": albert_tiny_cls,
    "modernbert-tiny-mlm": modernbert_tiny_mlm,
    "modernbert-tiny-cls": modernbert_tiny_cls,
    "modernbert-tiny-ner": modernbert_tiny_ner,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*", choices=list(FIXTURES))
    a = ap.parse_args()
    torch.set_num_threads(1)
    total = 0
    for name in a.only or FIXTURES:
        out = os.path.join(a.out, name)
        worst = FIXTURES[name](out)
        size = 0
        for dp, _, fs in os.walk(out):
            size += sum(os.path.getsize(os.path.join(dp, f)) for f in fs)
        total += size
        print(f"{name}: {size / 1e6:.2f} MB, padded batch vs single texts max |diff| {worst:.2e}")
    print(f"total {total / 1e6:.2f} MB in {a.out}")


if __name__ == "__main__":
    main()
