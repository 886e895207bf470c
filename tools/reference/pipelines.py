"""Hugging Face pipelines' pre- and post-processing in plain Python/NumPy, over tools/reference/encoders.py models and
the tokenizers of tools/reference/tokenizers.py (offsets in code points).

Learned from transformers' pipelines/feature_extraction.py (plus transformers.js' pooling / normalize options),
pipelines/text_classification.py (TextClassificationPipeline.postprocess, _sanitize_parameters),
pipelines/token_classification.py (TokenClassificationPipeline.postprocess, gather_pre_entities, aggregate,
aggregate_word(s), group_sub_entities, get_tag, group_entities), pipelines/question_answering.py
(QuestionAnsweringPipeline.preprocess / postprocess / get_indices, select_starts_ends, decode_spans) and
pipelines/fill_mask.py; no code is taken from there.

Library use (make_encoder_fixtures.py calls these):
  feature_extraction(model, tok, text, pooling="none"|"mean"|"cls", normalize=False) → {"dims", "data"}
  text_classification(model, tok, text or {"text", "text_pair"}, top_k=…) → list of {label, score}
  token_classification(model, tok, text, aggregation_strategy="none", ignore_labels=None) → list of entities
  question_answering(model, tok, question, context, top_k=1, …) → {score, start, end, answer} or a list
  fill_mask(model, tok, text, top_k=5) → list of {score, token, token_str, sequence}
"""
import numpy as np
import torch

_UNSET = object()


def _forward(model, enc):
    ids = torch.tensor([enc["input_ids"]], dtype=torch.int64)
    tt = torch.tensor([enc["token_type_ids"]], dtype=torch.int64)
    with torch.no_grad():
        hs, out = model(ids, torch.ones_like(ids), tt)
    return hs, out


def _id2label(model):
    return {int(k): v for k, v in model.config["id2label"].items()}


def _softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ------------------------------------------------------------------------------------------- feature-extraction
def feature_extraction(model, tok, text, pooling="none", normalize=False):
    """Last hidden state (1, T, E) with special tokens; pooling "mean" (attention-masked mean over tokens) or "cls"
    (position 0) → (1, E); normalize: L2 over the last dimension. Returns {"dims": [...], "data": flat floats}."""
    enc = tok.encode_pair(text)
    hs, _ = _forward(model, enc)
    last = model.last_hidden(hs) if hasattr(model, "last_hidden") else hs[-1]   # ModernBERT: after final_norm
    h = last.to(torch.float64)                                # (1, T, E)
    if pooling == "mean":
        m = torch.ones(h.shape[:2], dtype=torch.float64)[..., None]   # one text: every token is attended
        h = (h * m).sum(1) / m.sum(1)
    elif pooling == "cls":
        h = h[:, 0]
    elif pooling != "none":
        raise ValueError(pooling)
    if normalize:
        h = h / h.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return {"dims": list(h.shape), "data": [float(v) for v in h.flatten()]}


# ------------------------------------------------------------------------------------------ text-classification
def text_classification(model, tok, inputs, top_k=_UNSET, function_to_apply=None):
    """One text (str) or a pair ({"text", "text_pair"}). top_k unset: [best] (legacy form, a one-element list for one
    text); an int k: the k best, sorted; None: all labels sorted by score. function_to_apply default: sigmoid when
    problem_type is multi_label_classification or num_labels == 1, else softmax."""
    if isinstance(inputs, dict):
        enc = tok.encode_pair(inputs["text"], inputs.get("text_pair"))
    else:
        enc = tok.encode_pair(inputs)
    _, logits = _forward(model, enc)
    x = logits[0].to(torch.float64).numpy()
    c = model.config
    n = c.get("num_labels", len(c["id2label"]))
    if function_to_apply is None:
        if c.get("problem_type") == "multi_label_classification" or n == 1:
            function_to_apply = "sigmoid"
        elif c.get("problem_type") == "single_label_classification" or n > 1:
            function_to_apply = "softmax"
        else:
            function_to_apply = "none"
    if function_to_apply == "sigmoid":
        scores = 1.0 / (1.0 + np.exp(-x))
    elif function_to_apply == "softmax":
        scores = _softmax(x)
    else:
        scores = x
    id2label = _id2label(model)
    if top_k is _UNSET:
        i = int(scores.argmax())
        return [{"label": id2label[i], "score": float(scores[i])}]
    out = [{"label": id2label[i], "score": float(s)} for i, s in enumerate(scores)]
    out.sort(key=lambda d: d["score"], reverse=True)       # stable: ties keep label order
    return out if top_k is None else out[:top_k]


# ----------------------------------------------------------------------------------------- token-classification
def _get_tag(name):
    if name.startswith("B-"):
        return "B", name[2:]
    if name.startswith("I-"):
        return "I", name[2:]
    return "I", name   # not in B-/I- form: a continuation


def token_classification(model, tok, text, aggregation_strategy="none", ignore_labels=None):
    """Entities of one text. Scores: softmax per token; special tokens dropped. is_subword (fast tokenizer with a
    continuing_subword_prefix, i.e. WordPiece): len(token string) != len(text[start:end]); the fallback for byte-level
    BPE: start > 0 and no space in text[start-1:start+1]. [UNK] tokens: word = text[start:end], not a subword."""
    if ignore_labels is None:
        ignore_labels = ["O"]
    enc = tok.encode_pair(text)
    _, logits = _forward(model, enc)
    scores = _softmax(logits[0].to(torch.float32).numpy())
    id2label = _id2label(model)
    wordpiece = hasattr(tok, "lowercase")   # WordPiece has continuing_subword_prefix "##"
    pre = []
    for idx, ts in enumerate(scores):
        if enc["special_tokens_mask"][idx]:
            continue
        tid = enc["input_ids"][idx]
        word = tok.convert_ids_to_tokens([tid])[0]
        s, e = enc["offsets"][idx]
        word_ref = text[s:e]
        if wordpiece:
            is_sub = len(word) != len(word_ref)
        else:
            is_sub = s > 0 and " " not in text[s - 1:s + 1]
        if tid == tok.unk:
            word, is_sub = word_ref, False
        pre.append(dict(word=word, scores=ts, start=s, end=e, index=idx, is_subword=is_sub))

    if aggregation_strategy in ("none", "simple"):
        ents = []
        for p in pre:
            i = int(p["scores"].argmax())
            ents.append(dict(entity=id2label[i], score=float(p["scores"][i]), index=p["index"], word=p["word"],
                             start=p["start"], end=p["end"]))
    else:
        ents, group = [], None
        for p in pre:
            if group is None:
                group = [p]
            elif p["is_subword"]:
                group.append(p)
            else:
                ents.append(_aggregate_word(tok, group, aggregation_strategy, id2label))
                group = [p]
        if group is not None:
            ents.append(_aggregate_word(tok, group, aggregation_strategy, id2label))

    if aggregation_strategy != "none":
        ents = _group_entities(tok, ents)
    return [x for x in ents if x.get("entity") not in ignore_labels and x.get("entity_group") not in ignore_labels]


def _aggregate_word(tok, ents, strategy, id2label):
    word = tok.convert_tokens_to_string([x["word"] for x in ents])
    if strategy == "first":
        sc = ents[0]["scores"]
        i = int(sc.argmax())
        score = float(sc[i])
    elif strategy == "max":
        best = max(ents, key=lambda x: x["scores"].max())   # the first token with the highest max
        sc = best["scores"]
        i = int(sc.argmax())
        score = float(sc[i])
    elif strategy == "average":
        avg = np.nanmean(np.stack([x["scores"] for x in ents]), axis=0)
        i = int(avg.argmax())
        score = float(avg[i])
    else:
        raise ValueError(strategy)
    return dict(entity=id2label[i], score=score, word=word, start=ents[0]["start"], end=ents[-1]["end"])


def _group_sub(tok, ents):
    return {"entity_group": ents[0]["entity"].split("-")[-1],
            "score": float(np.nanmean([x["score"] for x in ents])),
            "word": tok.convert_tokens_to_string([x["word"] for x in ents]),
            "start": ents[0]["start"], "end": ents[-1]["end"]}


def _group_entities(tok, ents):
    groups, cur = [], []
    for x in ents:
        if not cur:
            cur.append(x)
            continue
        bi, tag = _get_tag(x["entity"])
        _, last_tag = _get_tag(cur[-1]["entity"])
        if tag == last_tag and bi != "B":
            cur.append(x)
        else:
            groups.append(_group_sub(tok, cur))
            cur = [x]
    if cur:
        groups.append(_group_sub(tok, cur))
    return groups


# ------------------------------------------------------------------------------------------- question-answering
def decode_spans(start, end, top_k, max_answer_len, undesired):
    """Outer product start ⊗ end, kept where start <= end < start + max_answer_len; the top_k (HF's argmax /
    argsort / argpartition order), then only spans whose start and end are both wanted tokens."""
    outer = np.outer(start, end)
    cand = np.tril(np.triu(outer), max_answer_len - 1)
    flat = cand.flatten()
    if top_k == 1:
        order = [int(np.argmax(flat))]
    elif len(flat) < top_k:
        order = list(np.argsort(-flat, kind="stable"))
    else:
        idx = np.argpartition(-flat, top_k)[0:top_k]
        order = list(idx[np.argsort(-flat[idx], kind="stable")])
    starts, ends = np.unravel_index(order, cand.shape)
    ok_tokens = set(np.nonzero(undesired)[0].tolist())
    keep = [(int(s), int(e)) for s, e in zip(starts, ends) if s in ok_tokens and e in ok_tokens]
    return [(s, e, float(cand[s, e])) for s, e in keep]


def _word_chars(enc, tok_index, seq):
    """Encoding.word_to_chars(token_to_word(i), sequence_index=seq); None when the token has no word (a special
    token such as [CLS]: HF's get_indices then falls back to the token offsets)."""
    w = enc["word_ids"][tok_index]
    if w is None or enc["sequence_ids"][tok_index] != seq:
        return None
    span = [enc["offsets"][i] for i in range(len(enc["input_ids"]))
            if enc["sequence_ids"][i] == seq and enc["word_ids"][i] == w]
    return span[0][0], span[-1][1]


def question_answering(model, tok, question, context, top_k=1, doc_stride=None, max_answer_len=15, max_seq_len=None,
                       handle_impossible_answer=False, align_to_words=True, model_max_length=None):
    """HF QuestionAnsweringPipeline for one question and context, fast tokenizer, padding side right (question
    first). Windows: truncation only_second, max_length = max_seq_len (default min(model_max_length, 384)), stride
    = doc_stride (default min(max_seq_len // 2, 128)), overflowing windows. p_mask: 1 for the question and special
    tokens, 0 for the context, and 0 again for [CLS] (cls_token_id). Per window: logits of undesired tokens set to
    -10000, softmax over the window; null score = p_start[0]·p_end[0] (only with handle_impossible_answer); then
    p[0] := 0 on both; decode_spans(top_k, max_answer_len). Answers of every window, sorted by score, first top_k;
    char span via the words of the start and end tokens (align_to_words) or their offsets."""
    if max_seq_len is None:
        max_seq_len = min(model_max_length or 384, 384)
    if doc_stride is None:
        doc_stride = min(max_seq_len // 2, 128)
    if doc_stride > max_seq_len:
        raise ValueError("doc_stride > max_seq_len")
    windows = tok.encode_pair_windows(question, context, max_seq_len, doc_stride)
    cls_id = tok.special()["cls"]
    answers, min_null = [], 1000000.0
    for enc in windows:
        p_mask = np.array([1 if s != 1 else 0 for s in enc["sequence_ids"]])
        p_mask[np.array(enc["input_ids"]) == cls_id] = 0
        _, (st, en) = _forward(model, enc)
        st, en = st[0].to(torch.float32).numpy(), en[0].to(torch.float32).numpy()
        undesired = np.abs(p_mask - 1)                   # 1 = may be in the answer (attention mask is all 1)
        st = np.where(undesired == 0, -10000.0, st).astype(np.float64)
        en = np.where(undesired == 0, -10000.0, en).astype(np.float64)
        st = _softmax(st)
        en = _softmax(en)
        if handle_impossible_answer:
            min_null = min(min_null, float(st[0] * en[0]))
        st[0] = en[0] = 0.0
        for s, e, score in decode_spans(st, en, top_k, max_answer_len, undesired):
            ws, we = (_word_chars(enc, s, 1), _word_chars(enc, e, 1)) if align_to_words else (None, None)
            if ws is not None and we is not None:
                a, b = ws[0], we[1]
            else:
                a, b = enc["offsets"][s][0], enc["offsets"][e][1]
            answers.append({"score": score, "start": a, "end": b, "answer": context[a:b]})
    if handle_impossible_answer:
        answers.append({"score": min_null, "start": 0, "end": 0, "answer": ""})
    answers = sorted(answers, key=lambda x: x["score"], reverse=True)[:top_k]
    return answers[0] if len(answers) == 1 else answers


# ----------------------------------------------------------------------------------------------------- fill-mask
def fill_mask(model, tok, text, top_k=5):
    """HF FillMaskPipeline: softmax over the vocabulary at each mask; top_k of each; token_str = decode([id]);
    sequence = decode(ids with that id at the mask, skip_special_tokens=True when there is one mask).
    One mask: a list of results; several: a list of lists."""
    enc = tok.encode_pair(text)
    mask_id = tok.special()["mask"]
    ids = enc["input_ids"]
    pos = [i for i, t in enumerate(ids) if t == mask_id]
    _, logits = _forward(model, enc)
    out = []
    for p in pos:
        probs = _softmax(logits[0, p].to(torch.float32).numpy())
        order = np.argsort(-probs, kind="stable")[:top_k]
        res = []
        for t in order:
            filled = list(ids)
            filled[p] = int(t)
            res.append({"score": float(probs[t]), "token": int(t), "token_str": tok.decode([int(t)]),
                        "sequence": tok.decode(filled, skip_special_tokens=len(pos) == 1)})
        out.append(res)
    return out[0] if len(out) == 1 else out
