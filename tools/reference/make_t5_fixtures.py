#!/usr/bin/python3
"""Writes the T5 (Hugging Face T5ForConditionalGeneration + T5Tokenizer) test fixtures: random-weight models with a
tiny SentencePiece model, and the golden outputs of the PyTorch reference tools/reference/t5.py (tokenizer, decoding,
the forward pass with every hidden state, generate() greedy and beam search with their options, greedy's
cross-attention), in the schema of tools/reference/make_marian_fixtures.py's expected.json.

Regenerate (from the repository root; /usr/bin/python3 is Debian's, with python3-torch, python3-numpy and
python3-sentencepiece; a few seconds on one core):

  OMP_NUM_THREADS=1 /usr/bin/python3 tools/reference/make_t5_fixtures.py                 # tests/data/fixtures/t5-tiny…
  OMP_NUM_THREADS=1 /usr/bin/python3 tools/reference/make_t5_fixtures.py --out /tmp/fx   # elsewhere

Every run writes the same bytes (fixed seeds, deterministic SentencePiece training on one thread, sorted JSON, the
output-layer correction rounded to 1e-4; expected.json's 7 digits almost never depend on the machine).
The SentencePiece model is trained on the first 3,000 lines of build/translate-train/source-text.txt
(tools/train/translate/data.py writes it: English KJV/WEB verses); when that file is absent, the spiece.model already
in the output folder is reused (so the fixtures can be rebuilt from the repository alone).

Folders (each a complete Hugging Face T5 folder, loadable by transformers' T5ForConditionalGeneration / T5Tokenizer):

  t5-tiny/        t5 v1.0 style (as google-t5/t5-small): d_model 32, d_kv 8, num_heads 4, d_ff 48, num_layers 2,
                  num_decoder_layers 2, feed_forward_proj "relu" (DenseReluDense.wi / .wo), tie_word_embeddings
                  true (logits = (h · 32^−0.5) · sharedᵀ), relative_attention_num_buckets 32,
                  relative_attention_max_distance 128 (T5's own values: the encoder's 16 buckets per direction are
                  exact up to |distance| 7, then logarithmic, |distance| 8-11 → +8, 12-15 → +9, 16-22 → +10, 23-31
                  → +11: the forward's 22-token source and the 17-19-token generate sources reach +10, i.e.
                  distance 16, where the float32 logarithm lands exactly on 2.0; the decoder's 32 causal buckets are
                  exact up to 15, the ≤ 17-token decoder sequences reach 0-16), config.json with t5-small's keys
                  (n_positions, output_past, task_specific_params, …); model.safetensors F32 with save_pretrained's keys
                  (shared.weight, no embed_tokens / lm_head copies) PLUS the cross-attention position-bias table
                  decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight (32, 4) that the original T5
                  checkpoints carry and HF ignores on load (_keys_to_ignore_on_load_unexpected): a loader must skip
                  it; tokenizer_config.json clean_up_tokenization_spaces true;
  t5-tiny-gated/  t5 v1.1 / flan-t5 style: d_model 20, d_kv 6, num_heads 4 (inner_dim 24 ≠ d_model), d_ff 40,
                  num_layers 2, num_decoder_layers 3, feed_forward_proj "gated-gelu" (dense_act_fn "gelu_new",
                  is_gated_act true: DenseReluDense.wi_0 / .wi_1 / .wo), tie_word_embeddings false (its own
                  lm_head.weight, logits unscaled), relative_attention_num_buckets 16, relative_attention_max_distance
                  20 (encoder: 8 buckets per direction, exact up to 3, |distance| 4-5 → +4, 6-8 → +5, 9-13 → +6,
                  ≥ 14 → +7 (the clamp: reached by the longer sources); decoder: 16 causal buckets, exact up to 7,
                  then 8 → 8, 9-10 → 9, 11 → 10, 12 → 11, 13-14 → 12, 15 → 13, 16-17 → 14, ≥ 18 → 15), config.json
                  with flan-t5-small's keys; model.safetensors ALSO holds encoder.embed_tokens.weight and
                  decoder.embed_tokens.weight (copies of shared.weight, as some files do); tokenizer_config.json
                  clean_up_tokenization_spaces false;
  both:           spiece.model (SentencePiece unigram, 200 pieces, trained with T5's conventions: <pad> 0, </s> 1,
                  <unk> 2, no BOS (bos_id −1), nmt_nfkc normalization, dummy prefix, whitespace runs collapsed, no
                  byte fallback, character_coverage 1.0; ~240 KB, nearly all of it nmt_nfkc's precompiled
                  charsmap), extra_ids 8: <extra_id_0> = 207 … <extra_id_7> = 200 (the tokenizer has 208 tokens;
                  the model's vocab_size is 224: ids 208-223 have embeddings and logits but no token, as t5's 32100
                  tokens vs 32128), tokenizer_config.json, special_tokens_map.json, generation_config.json
                  ({"decoder_start_token_id": 0, "eos_token_id": 1, "pad_token_id": 0}: T5's), expected.json.

Special ids: pad = decoder_start = 0, eos = 1, unk = 2. generate() options not given in a case come from
generation_config.json, then HF's defaults: num_beams 1 (greedy), max_length 20, length_penalty 1.0,
early_stopping false, no_repeat_ngram_size 0, num_return_sequences 1, no forced EOS, no bad words,
renormalize_logits false.

Weights (seeded 21 / 32; t5-tiny / t5-tiny-gated): the q, k, v, o, wi(_0/_1), wo weights N(0, σ²) with σ 0.2 / 0.25,
except the cross-attention's q and k (EncDecAttention) N(0, 0.3²) / N(0, 0.32²) (cross-attention scores, unscaled as
T5's are, with standard deviations near 9 / 4-5: peaked enough that the output depends on the source and moves with the
decoder position, not so peaked that 1e-5 noise on the weights moves the scores much: with 0.45 / 0.5 it did); the
relative_attention_bias tables N(0, 1.5²) (the positions matter); layer-norm weights 1 + N(0, 0.2²) except
decoder.final_layer_norm's, N(0, 2²) / N(0, 1) (random signs: the tied output layer does not just favour the input
token's own row); shared.weight N(0, 1) / N(0, 0.8²); lm_head.weight (gated) N(0, 0.3²). Then the output rows (t5-tiny:
shared.weight's, which are also its embeddings; gated: lm_head.weight's): the rows of <pad> (0) and of the 16 token-less
ids 208-223 are multiplied by 0.02 (their logits stay near 0, below the winners': HF cannot decode those ids, and a
generated <pad> would be indistinguishable from HF's padding; t5-tiny's decoder start embedding is therefore small), and
every other row v is moved along m, the mean decoder output (after the final norm, over random sources and decoder
inputs, float64, rounded to 1e-4): row v += (t_v − μ_v) / (s·|m|²) · m (the coefficient rounded to 1e-4), where μ_v =
s·m·row_v is its logit at the mean output (s = 32^−0.5 tied, 1 untied) and t_v = 1 + N(0, 0.5²), plus 1 on </s> (no
"hub" token wins whatever the input). Random models with plain N(0, σ²) weights repeat one token forever and end either
at the first step or never; with these (seeds and sources picked with --explore NAME, which prints every POOL source's
greedy and 4-beam run) the runs are varied, some ending with </s> after 3-12 tokens, others at the length limit, and
early_stopping / length_penalty / no_repeat_ngram_size / renormalize_logits change some answers. Every case is stable
under 1e-5 relative noise on the weights (checked: same sequences, scores within 2e-4 relative), so an engine's float
rounding does not flip a choice.

expected.json (floats rounded to 7 significant digits; the keys and their meaning as make_marian_fixtures.py's, less
"removed_pieces", plus "position_buckets"):

  "config"          config.json as written.
  "special_ids"     {"eos": 1, "unk": 2, "pad": 0, "decoder_start": 0}; "vocab_size": 224 (the model's, = the
                    logits' width; the tokenizer has 208 tokens).
  "tokenize"        [{"text", "pieces", "ids"}]: tokenizer(text).input_ids (T5Tokenizer, transformers 4.x slow,
                    legacy=True: the default when tokenizer_config.json has no "legacy"). "pieces" =
                    tokenizer.tokenize(text): the special tokens as written ("</s>", "<unk>", "<pad>",
                    "<extra_id_0>" … "<extra_id_7>", cut out whole, leftmost first; the sentinels are lstrip/rstrip
                    added tokens), and each stretch of text between them through SentencePiece on its own (its own
                    dummy-prefix ▁: "a<extra_id_7>b" → "▁a", "<extra_id_7>", "▁b"); a character SentencePiece does
                    not know comes back as itself ("é", "😀") and gets <unk>'s id 2; "<extra_id_8>" and beyond are
                    plain text here (8 sentinels). "ids" = the ids of the pieces, then </s> (1) UNLESS the last id
                    already is </s> ("Hello</s>" and "Hello </s> " end with one </s>); the empty text → [1].
  "decode"          [{"ids", "text"}]: tokenizer.decode(ids, skip_special_tokens=True): <pad>, </s>, <unk> and the
                    sentinels dropped wherever they are, the other ids' pieces decoded by SentencePiece (▁ → space,
                    the leading space dropped), stripped, then (t5-tiny only: tokenizer_config.json
                    clean_up_tokenization_spaces true) " ." → ".", " ?" → "?", " !" → "!", " ," → ",", " ' " → "'",
                    " n't" → "n't", " 'm" → "'m", " 's" → "'s", " 've" → "'ve", " 're" → "'re". The same id lists
                    in both folders: the texts differ where the clean-up applies. No id ≥ 208 (HF cannot decode
                    them).
  "forward"         one source of 22 ids (so that the encoder's distance-16 bucket is used), no padding:
                    "input_ids", "decoder_input_ids" (T = 7: <pad> first, <extra_id_0>, then five ids),
                    "encoder_hidden_states" (num_layers + 1 entries, each S × d_model) and "decoder_hidden_states"
                    (num_decoder_layers + 1 entries, each T × d_model) as HF's output_hidden_states gives them: entry
                    0 = the token embeddings (shared rows, unscaled), entry i for 1 ≤ i < n = the output of block i−1
                    (= the input of block i), the LAST entry n = final_layer_norm(output of block n−1) — the last
                    block's raw output is in no entry, and the last entry is the stack's normalized output (the
                    encoder's is what the cross-attention reads); "logits" (T × 224: from the last decoder entry,
                    t5-tiny scaled by 32^−0.5 before the tied shared matrix, gated via lm_head unscaled). As HF's
                    model(input_ids, decoder_input_ids=…, output_hidden_states=True).
  "generate"        [{"source_text", "source_ids", "options", "sequences", "scores"}]: HF model.generate(input_ids,
                    **options, return_dict_in_generate=True, output_scores=True) with the folder's
                    generation_config.json, one input (batch of 1, no padding) per case; "options" are generate()'s
                    keyword arguments verbatim (num_beams, max_new_tokens, length_penalty, early_stopping true /
                    false / "never", no_repeat_ngram_size, num_return_sequences, renormalize_logits,
                    forced_eos_token_id 1, bad_words_ids); "sequences": num_return_sequences rows, best first, each
                    the decoder ids WITHOUT padding: <pad> (the start token) first, the generated tokens, ending with
                    </s> when the hypothesis ended there; "scores": beam search: HF's sequences_scores, one per row;
                    greedy: null. Semantics as marian.py / make_marian_fixtures.py describe them (the same code).
  "cross_attention" {"source_ids", "sequence", "weights"}: the greedy run (num_beams 1, max_new_tokens 12) of that
                    source; "weights"[t][l][h] = the S cross-attention probabilities of decoder layer l, head h, for
                    the query at decoder position t (the one whose logits chose sequence[t + 1]); as HF's
                    generate(output_attentions=True).cross_attentions[t][l][0, h, 0].
  "position_buckets" (an addition: the bucket function alone) {"encoder": {"bidirectional": true,
                    "num_buckets", "max_distance", "relative_positions": [−40 … 40], "buckets": […]}, "decoder":
                    {"bidirectional": false, …}, "t5_default_encoder" / "t5_default_decoder": num_buckets 32,
                    max_distance 128 over −300 … 300}; relative position = key position − query position; HF's
                    _relative_position_bucket with its float32 arithmetic (t5.py bucket_float32).

Checks (asserted): SentencePiece training is deterministic (trained twice, same bytes); every folder loads back into
t5.py (the copies equal shared.weight, the ignored tensor skipped); the cached incremental decoder = the full forward
(one token at a time and two at once); a source padded on the right or on the left (masked) gives the unpadded
logits; greedy (cached) = argmax of a full forward per step with the processors; each beam row's score = the sum of
the processed log-probabilities of its tokens (full forward per step) / length^length_penalty; num_return_sequences
rows are sorted and their first row is the num_return_sequences 1 answer; every generated sequence is the same after
1e-5 relative noise on the weights; no generated <pad> or token-less id; the cross-attention rows sum to 1 and equal
the full forward's; the case list covers </s>-ended and length-limited greedy and beam runs and has cases where only
early_stopping, only renormalize_logits, or only num_return_sequences differ and the answers do; decoding agrees with
transformers 4.4x's variant (the first piece's ▁ removed before SentencePiece decodes); the tokenize texts reach
unknown characters, every sentinel kind and the no-second-</s> rule; the forward source reaches distance 16.
"""
import argparse
import copy
import json
import os
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_marian_fixtures as mmf  # noqa: E402  (r7, write_expected, dump)
import marian  # noqa: E402
import safetensors_io  # noqa: E402
import t5  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TRAIN_TEXT = os.path.join(ROOT, "build", "translate-train", "source-text.txt")
SPM_LINES = 3000
SPM_VOCAB = 200
EXTRA_IDS = 8
VOCAB_SIZE = 224  # the model's; the tokenizer has SPM_VOCAB + EXTRA_IDS = 208 tokens

TOKENIZE_TEXTS = [
    "In the beginning God created the heaven and the earth.",
    "translate English to German: The house is wonderful.",
    "summarize: And Jacob said unto his father, I am Esau thy firstborn.",
    'Jacob said to his brother, "Give me the land!"',
    "The <extra_id_0> walks in <extra_id_1> park",
    "<extra_id_0> cute dog <extra_id_1> the <extra_id_2>",
    "a<extra_id_7>b   <extra_id_3>   c",
    "<extra_id_5><extra_id_6> <extra_id_4>",
    "<extra_id_8> is not a sentinel here, nor <extra_id_100> or <EXTRA_ID_0>",
    "Hello</s>",
    "Hello </s> ",
    "before </s> after",
    "a<unk>b <pad> c</s>",
    "</s>",
    "<pad>",
    "",
    "     ",
    "  leading and trailing  ",
    "double  spaces   inside",
    "a tab\there and a\nnewline",
    "The 12 sons of Jacob; 144,000 men in 1611.",
    "Café, niño, über — naïve façade.",
    "emoji 😀 and 👍🏽 too",
    "CJK: 漢字かな 한국어",
    "Ｆｕｌｌ　ｗｉｄｔｈ ﬁnd the ﬂock",
    "cafe\u0301 zero\u200bwidth soft\u00adhyphen",
    "Where is Abel thy brother? And he said, I know not: Am I my brother's keeper?",
    "Hello , world ! I 'm here . Don 't stop , they 're sure .",
]

# candidate sources for generate(); each variant names the seven it uses (chosen so that its runs end with EOS early
# for some and reach the length limit for others; the coverage is asserted)
POOL = [
    "Abraham begat Isaac.", "The LORD is my shepherd.", "And it was so.", "Noah found grace.", "Go up to the land.",
    "And Joseph wept.", "Jacob loved Rachel.", "Hello", "The café is 12 miles away!",
    "And God said, Let there be light.", "Thou shalt not kill.", "And he said unto them, Go.",
    "Give me water to drink.", "The earth was full of violence.", "Rachel was beautiful.",
    "And the flood was forty days upon the earth.", "Where art thou?", "I am the God of thy father.",
    "Blessed be the LORD God of Shem.", "And they went both of them together.", "My brother Esau is a hairy man.",
    "Take now thy son.", "Bring me venison.", "Let us make man in our image.",
    "In the beginning God created the heaven and the earth.", "",
    "translate English to German: The house is wonderful.", "summarize: Jacob loved Rachel more than Leah.",
    "The <extra_id_0> walks in <extra_id_1> park.", "question: Where art thou? context: Adam hid in the garden.",
]

FORWARD_SOURCE = "summarize: And Jacob said unto his father, I am Esau."
FORWARD_TARGET = "The LORD is my shepherd"
CROSS_SOURCE = "summarize: The café is 12 miles away!"

DECODE_TEXTS = [
    "In the beginning God created the heaven and the earth.",
    "Hello , world ! I 'm here . Don 't stop , they 're sure .",
    "Where is Abel thy brother?",
]


def gen_cases():
    """(source index, options): generate()'s keyword arguments verbatim ("FIRST" in bad_words_ids: the first token
    the greedy run of that source generates). The sources' roles (each variant picks its texts from POOL to fit):
    0, 1 greedy ends with EOS after a few tokens; 2 early_stopping matters; 3, 4 long, varied runs to the limit;
    5 a repetitive run to the limit; 6 the empty text (source ids [</s>])."""
    G = {"num_beams": 1}
    c = [(s, dict(G, max_new_tokens=16)) for s in range(7)]  # greedy on every source
    c += [
        (0, dict(G, max_new_tokens=1)),
        (0, {"num_beams": 4, "max_new_tokens": 1}),
        (5, dict(G, max_new_tokens=14, no_repeat_ngram_size=2)),
        (6, dict(G, max_new_tokens=14, no_repeat_ngram_size=3)),
        (3, dict(G, max_new_tokens=12, forced_eos_token_id=1)),  # T5 has no forced EOS by default
        (1, dict(G, max_new_tokens=12, bad_words_ids="FIRST")),
        (0, {"max_new_tokens": 12}),  # greedy: generation_config.json has no num_beams
        (1, {"num_beams": 2, "max_new_tokens": 12}),
        (2, {"num_beams": 3, "max_new_tokens": 12}),
        (3, {"num_beams": 5, "max_new_tokens": 12}),
        (4, {"num_beams": 4, "max_new_tokens": 16}),
        (5, {"num_beams": 4, "max_new_tokens": 16}),
        (6, {"num_beams": 3, "max_new_tokens": 10}),
        (3, {"num_beams": 4, "max_new_tokens": 14, "length_penalty": 0.6}),
        (0, {"num_beams": 4, "max_new_tokens": 14, "length_penalty": 1.0, "early_stopping": True}),
        (2, {"num_beams": 4, "max_new_tokens": 14, "length_penalty": 2.0}),
        (4, {"num_beams": 4, "max_new_tokens": 14, "length_penalty": -0.5}),
        (0, {"num_beams": 3, "max_new_tokens": 14, "early_stopping": True}),
        (0, {"num_beams": 3, "max_new_tokens": 14, "early_stopping": False}),
        (0, {"num_beams": 3, "max_new_tokens": 14, "early_stopping": "never"}),
        (2, {"num_beams": 3, "max_new_tokens": 14, "early_stopping": True}),
        (2, {"num_beams": 3, "max_new_tokens": 14, "early_stopping": False}),
        (2, {"num_beams": 3, "max_new_tokens": 14, "early_stopping": "never"}),
        (3, {"num_beams": 4, "max_new_tokens": 16, "early_stopping": "never", "length_penalty": 2.0}),
        (1, {"num_beams": 4, "max_new_tokens": 16, "early_stopping": "never", "length_penalty": -0.5}),
        (5, {"num_beams": 4, "max_new_tokens": 14, "no_repeat_ngram_size": 2}),
        (4, {"num_beams": 4, "max_new_tokens": 14, "no_repeat_ngram_size": 2}),
        (4, {"num_beams": 4, "max_new_tokens": 14, "no_repeat_ngram_size": 2, "renormalize_logits": True}),
        (3, {"num_beams": 3, "max_new_tokens": 14, "no_repeat_ngram_size": 3}),
        (4, {"num_beams": 4, "max_new_tokens": 12, "num_return_sequences": 1}),
        (4, {"num_beams": 4, "max_new_tokens": 12, "num_return_sequences": 2}),
        (3, {"num_beams": 3, "max_new_tokens": 12, "num_return_sequences": 3}),
        (2, {"num_beams": 5, "max_new_tokens": 14, "num_return_sequences": 3, "early_stopping": "never"}),
        (5, {"num_beams": 4, "max_new_tokens": 12, "renormalize_logits": True, "no_repeat_ngram_size": 2,
             "num_return_sequences": 2}),
        (3, {"num_beams": 2, "max_new_tokens": 12, "forced_eos_token_id": 1}),
        (1, {"num_beams": 3, "max_new_tokens": 12, "bad_words_ids": "FIRST"}),
        (2, {"num_beams": 4, "max_new_tokens": 16, "length_penalty": 0.6, "early_stopping": "never",
             "no_repeat_ngram_size": 2, "num_return_sequences": 2}),
    ]
    return c


# config.json keys as the hub folders have them (google-t5/t5-small, google/flan-t5-small)
T5_SMALL_TASKS = {
    "summarization": {"early_stopping": True, "length_penalty": 2.0, "max_length": 200, "min_length": 30,
                      "no_repeat_ngram_size": 3, "num_beams": 4, "prefix": "summarize: "},
    "translation_en_to_de": {"early_stopping": True, "max_length": 300, "num_beams": 4,
                             "prefix": "translate English to German: "},
    "translation_en_to_fr": {"early_stopping": True, "max_length": 300, "num_beams": 4,
                             "prefix": "translate English to French: "},
    "translation_en_to_ro": {"early_stopping": True, "max_length": 300, "num_beams": 4,
                             "prefix": "translate English to Romanian: "},
}

VARIANTS = {
    "t5-tiny": {"seed": 21, "d": 32, "d_kv": 8, "heads": 4, "d_ff": 48, "enc": 2, "dec": 2, "proj": "relu",
                "tied": True, "buckets": 32, "max_distance": 128, "w_std": 0.2, "cross_std": 0.3, "rel_std": 1.5,
                "emb_std": 1.0, "head_std": None, "last_ln_std": 2.0, "target_std": 0.5, "eos_bump": 1.0,
                "unused_scale": 0.02, "target_mean": 1.0, "store_copies": False, "store_ignored": True,
                "clean_up": True, "style": "t5",
                "sources": [19, 11, 15, 14, 3, 7, 25]},
    "t5-tiny-gated": {"seed": 32, "d": 20, "d_kv": 6, "heads": 4, "d_ff": 40, "enc": 2, "dec": 3,
                      "proj": "gated-gelu", "tied": False, "buckets": 16, "max_distance": 20, "w_std": 0.25,
                      "cross_std": 0.32, "rel_std": 1.5, "emb_std": 0.8, "head_std": 0.3, "last_ln_std": 1.0,
                      "target_std": 0.5, "eos_bump": 1.0, "unused_scale": 0.02, "target_mean": 1.0,
                      "store_copies": True, "store_ignored": False,
                      "clean_up": False, "style": "flan", "sources": [15, 27, 6, 23, 16, 7, 25]},
}


# --------------------------------------------------------------------------------------------------- tokenizer
def train_spm(lines_path, work):
    """Train the unigram model in `work` (relative paths: the trainer spec stores them) → bytes."""
    import sentencepiece as spm
    with open(lines_path, encoding="utf-8") as f:
        lines = [next(f) for _ in range(SPM_LINES)]
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with open("spiece-text.txt", "w", encoding="utf-8") as f:
            f.writelines(lines)
        spm.SentencePieceTrainer.train(
            input="spiece-text.txt", model_prefix="spiece", model_type="unigram", vocab_size=SPM_VOCAB,
            character_coverage=1.0, max_sentence_length=8192, num_threads=1, input_sentence_size=0,
            shuffle_input_sentence=False, minloglevel=2, normalization_rule_name="nmt_nfkc",
            pad_id=0, eos_id=1, unk_id=2, bos_id=-1, pad_piece="<pad>", eos_piece="</s>", unk_piece="<unk>")
        with open("spiece.model", "rb") as f:
            data = f.read()
        for name in ("spiece.model", "spiece.vocab", "spiece-text.txt"):
            os.remove(name)
    finally:
        os.chdir(cwd)
    return data


def spm_model(first_out):
    """spiece.model bytes: trained (twice, checked equal) or, without the training text, reused."""
    if os.path.exists(TRAIN_TEXT):
        with tempfile.TemporaryDirectory() as work:
            a, b = train_spm(TRAIN_TEXT, work), train_spm(TRAIN_TEXT, work)
        assert a == b, "spiece.model training is not deterministic"
        return a
    print(f"note: {TRAIN_TEXT} missing, reusing the spiece.model of {first_out}")
    with open(os.path.join(first_out, "spiece.model"), "rb") as f:
        return f.read()


def sentinels():
    return [f"<extra_id_{i}>" for i in range(EXTRA_IDS)]


def tokenizer_config(v):
    return {"additional_special_tokens": sentinels(), "clean_up_tokenization_spaces": v["clean_up"],
            "eos_token": "</s>", "extra_ids": EXTRA_IDS, "model_max_length": 512, "pad_token": "<pad>",
            "tokenizer_class": "T5Tokenizer", "unk_token": "<unk>"}


def special_tokens_map():
    return {"additional_special_tokens": sentinels(), "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}


def generation_config():
    return {"decoder_start_token_id": 0, "eos_token_id": 1, "pad_token_id": 0}


# ------------------------------------------------------------------------------------------------------- model
def make_config(v):
    c = {"architectures": ["T5ForConditionalGeneration"], "classifier_dropout": 0.0, "d_ff": v["d_ff"],
         "d_kv": v["d_kv"], "d_model": v["d"], "decoder_start_token_id": 0,
         "dense_act_fn": "gelu_new" if v["proj"] == "gated-gelu" else v["proj"], "dropout_rate": 0.1,
         "eos_token_id": 1, "feed_forward_proj": v["proj"], "initializer_factor": 1.0, "is_encoder_decoder": True,
         "is_gated_act": v["proj"].startswith("gated-"), "layer_norm_epsilon": 1e-06, "model_type": "t5",
         "n_positions": 512, "num_decoder_layers": v["dec"], "num_heads": v["heads"], "num_layers": v["enc"],
         "output_past": True, "pad_token_id": 0, "relative_attention_max_distance": v["max_distance"],
         "relative_attention_num_buckets": v["buckets"], "tie_word_embeddings": v["tied"], "torch_dtype": "float32",
         "use_cache": True, "vocab_size": VOCAB_SIZE}
    if v["style"] == "t5":
        c["task_specific_params"] = T5_SMALL_TASKS
    return c


def randomize(model, v, tok_size):
    """Seeded weights (see the module docstring)."""
    g = torch.Generator().manual_seed(v["seed"])
    c = model.config
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            n = torch.randn(p.shape, generator=g)
            if name == "decoder.final_layer_norm.weight":
                p.copy_(v["last_ln_std"] * n)
            elif "layer_norm" in name:
                p.copy_(1.0 + 0.2 * n)
            elif name == "shared.weight":
                p.copy_(v["emb_std"] * n)
            elif name == "lm_head.weight":
                p.copy_(v["head_std"] * n)
            elif "relative_attention_bias" in name:
                p.copy_(v["rel_std"] * n)
            elif ".EncDecAttention.q." in name or ".EncDecAttention.k." in name:
                p.copy_(v["cross_std"] * n)
            else:
                p.copy_(v["w_std"] * n)
        target = v["target_mean"] + v["target_std"] * torch.randn(c["vocab_size"], generator=g, dtype=torch.float64)
        target[c["eos_token_id"]] += v["eos_bump"]
        rows = model.shared.weight if model.tied else model.lm_head.weight
        unused = [c["pad_token_id"]] + list(range(tok_size, c["vocab_size"]))
        rows[unused] *= v["unused_scale"]
        # the mean decoder output over random sources and decoder inputs (float64, rounded: the same bytes anywhere)
        src = torch.randint(3, tok_size, (4, 16), generator=g)
        dec = torch.randint(3, tok_size, (4, 16), generator=g)
        dec[:, 0] = 0
        m64 = copy.deepcopy(model).double()
        h = m64.decode(dec, m64.encode(src))
        mean = (h.reshape(-1, h.shape[-1]).mean(0) * 1e4).round() / 1e4
        s = c["d_model"] ** -0.5 if model.tied else 1.0
        mu = s * (rows.double() @ mean)
        coef = ((target - mu) / (s * float(mean @ mean)) * 1e4).round() / 1e4
        coef[unused] = 0.0  # left small, not moved: their logits stay near 0, below the winners'
        rows.copy_((rows.double() + coef[:, None] * mean[None, :]).float())


def state_to_save(model, v):
    st = t5.export_state(model)
    if v["store_copies"]:
        for k in t5.TIED_COPIES:
            st[k] = st["shared.weight"].clone()
    if v["store_ignored"]:
        g = torch.Generator().manual_seed(v["seed"] + 1000)
        st[t5.IGNORED_KEYS[0]] = torch.randn(v["buckets"], v["heads"], generator=g)
    return st


# ----------------------------------------------------------------------------------------------------- outputs
r7 = mmf.r7


def processed_logprobs(model, enc, seq, o):
    """The per-step scores beam search adds (log_softmax → processors), full forward, for the tokens of seq."""
    total = 0.0
    for t in range(1, len(seq)):
        lg = model.logits(model.decode(torch.tensor([seq[:t]]), enc))[:, -1].float().log_softmax(-1)
        lg = marian.process(o, torch.tensor([seq[:t]]), lg, t)
        total += float(lg[0, seq[t]])
    return total


def noisy_copy(model, seed=99, rel=1e-5):
    m = copy.deepcopy(model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in sorted(m.named_parameters()):
            p.mul_(1 + rel * torch.randn(p.shape, generator=g))
    return m


def resolve(opts, first):
    return {k: ([[first]] if x == "FIRST" else x) for k, x in opts.items()}


def bucket_table(bidirectional, nb, md, lo, hi):
    rel = list(range(lo, hi + 1))
    b = t5.relative_position_bucket(torch.tensor(rel), bidirectional, nb, md).tolist()
    assert b == [t5.bucket_float32(r, bidirectional, nb, md) for r in rel]
    return {"bidirectional": bidirectional, "num_buckets": nb, "max_distance": md, "relative_positions": rel,
            "buckets": b}


def expected(folder, sources, verbose):
    model, tok, gen = t5.load(folder)
    c = model.config
    V, pad, eos, unk = c["vocab_size"], c["pad_token_id"], c["eos_token_id"], tok.unk
    assert (tok.eos, tok.pad, unk, tok.size) == (1, 0, 2, SPM_VOCAB + EXTRA_IDS) and V == VOCAB_SIZE
    with open(os.path.join(folder, "config.json")) as f:
        written = json.load(f)
    out = {"config": written, "special_ids": {"eos": eos, "unk": unk, "pad": pad,
                                              "decoder_start": c["decoder_start_token_id"]},
           "vocab_size": V}

    # tokenize
    rows, seen = [], set()
    for t in TOKENIZE_TEXTS:
        pieces, ids = tok.tokenize(t), tok(t)
        assert ids[:len(pieces)] == tok.convert_tokens_to_ids(pieces)
        if unk in ids and "<unk>" not in pieces:
            seen.add("unknown character")
        if any(p in tok.extra for p in pieces):
            seen.add("sentinel")
        if "<extra_id_8>" in t and "<extra_id_8>" not in pieces:
            seen.add("not a sentinel")
        if t.rstrip().endswith("</s>") and ids.count(eos) == t.count("</s>"):
            seen.add("no second eos")
        rows.append({"text": t, "pieces": pieces, "ids": ids})
    assert seen == {"unknown character", "sentinel", "not a sentinel", "no second eos"}, seen
    out["tokenize"] = rows

    # decode
    gen_ids = marian.generate(model, [tok(sources[0])], gen_cfg=gen, num_beams=1, max_new_tokens=12)[0]
    t0, t1, t2 = (tok(s) for s in DECODE_TEXTS)
    x = sorted(tok.extra.values())
    lists = [gen_ids, [pad] + t0, t1, t2[:3] + [unk] + t2[3:5] + [pad, x[0], eos] + t2[5:], [eos, unk, pad, x[-1]],
             [], [pad, x[-1]] + t0[:4] + [x[-2]] + t2[:3] + [eos], [3] + t0[1:5] + [3, eos, eos],
             [pad, 3, 5] + t1[:6], tok(TOKENIZE_TEXTS[21]), tok(TOKENIZE_TEXTS[4])]
    rows = []
    for ids in lists:
        text = tok.decode(ids)
        # transformers 4.4x: the first piece's ▁ removed before SentencePiece decodes: the same text
        pieces = [tok.sp.id_to_piece(i) for i in ids if i not in tok.special_ids]
        if pieces and pieces[0].startswith("\u2581"):
            pieces[0] = pieces[0][1:]
        alt = tok.sp.decode(pieces).strip() if pieces else ""
        assert (t5.clean_up_tokenization(alt) if tok.clean_up else alt) == text, (ids, text, alt)
        rows.append({"ids": ids, "text": text})
    assert rows[1]["text"] == DECODE_TEXTS[0], rows[1]
    assert (rows[2]["text"] == DECODE_TEXTS[1]) != tok.clean_up, rows[2]
    out["decode"] = rows

    # forward
    src_ids = tok(FORWARD_SOURCE)
    dec_ids = [pad, tok.extra["<extra_id_0>"]] + tok(FORWARD_TARGET)[:5]
    assert len(dec_ids) == 7 and len(src_ids) == 22, (len(src_ids), dec_ids)
    with torch.no_grad():
        f = model(torch.tensor([src_ids]), torch.tensor([dec_ids]))
        enc = f["encoder_last_hidden_state"]
        # cached incremental decoding = the full forward, one token at a time and two at once
        cache, cross = {"past": 0, "layers": []}, model.cross_kv(enc)
        for t in range(len(dec_ids)):
            h = model.decode(torch.tensor([dec_ids[t:t + 1]]), enc, cache=cache, cross=cross)
            assert torch.allclose(model.logits(h)[0, 0], f["logits"][0, t], atol=1e-4)
        cache = {"past": 0, "layers": []}
        model.decode(torch.tensor([dec_ids[:3]]), enc, cache=cache, cross=cross)
        h = model.decode(torch.tensor([dec_ids[3:5]]), enc, cache=cache, cross=cross)
        assert torch.allclose(model.logits(h)[0], f["logits"][0, 3:5], atol=1e-4)
        # padded (right or left, masked) = unpadded
        for padded, mask in ((src_ids + [pad] * 5, [1] * 22 + [0] * 5), ([pad] * 5 + src_ids, [0] * 5 + [1] * 22)):
            a = model(torch.tensor([padded]), torch.tensor([dec_ids]), torch.tensor([mask]))["logits"]
            assert torch.allclose(a, f["logits"], atol=1e-4), float((a - f["logits"]).abs().max())
    assert len(f["encoder_hidden_states"]) == c["num_layers"] + 1
    assert len(f["decoder_hidden_states"]) == c["num_decoder_layers"] + 1
    assert torch.equal(f["encoder_hidden_states"][-1], enc)
    assert float(f["logits"].std()) > 0.5, float(f["logits"].std())
    out["forward"] = {"input_ids": src_ids, "decoder_input_ids": dec_ids,
                      "encoder_hidden_states": [r7(h[0]) for h in f["encoder_hidden_states"]],
                      "decoder_hidden_states": [r7(h[0]) for h in f["decoder_hidden_states"]],
                      "logits": r7(f["logits"][0])}

    # generate
    noisy = noisy_copy(model)
    cases, summary = [], []
    firsts = {}
    for s, opts in gen_cases():
        text = sources[s]
        ids = tok(text)
        assert len(ids) <= 40
        if "FIRST" in opts.values():
            if s not in firsts:
                firsts[s] = marian.generate(model, [ids], gen_cfg=gen, num_beams=1, max_new_tokens=2)[0][1]
            assert firsts[s] != eos  # HF drops [eos] from bad_words_ids
            opts = resolve(opts, firsts[s])
        d = marian.generate(model, [ids], gen_cfg=gen, return_dict_in_generate=True, **opts)
        o = marian.generation_options(model, gen, **opts)
        seqs, scores = d["sequences"], d["sequences_scores"]
        assert len(seqs) == o["num_return_sequences"]
        dn = marian.generate(noisy, [ids], gen_cfg=gen, return_dict_in_generate=True, **opts)
        assert dn["sequences"] == seqs, ("knife-edge case", s, opts, seqs, dn["sequences"])
        with torch.no_grad():
            enc = model.encode(torch.tensor([ids]))
            if o["num_beams"] == 1:
                assert seqs[0] == t5._greedy_full(model, enc, o), (s, opts)
                assert scores is None
            else:
                one = marian.generate(model, [ids], gen_cfg=gen, **dict(opts, num_return_sequences=1))[0]
                assert one == seqs[0]
                assert scores == sorted(scores, reverse=True) and scores[-1] > -1e8, scores
                for seq, sc in zip(seqs, scores):
                    n = len(seq) - 1
                    want = processed_logprobs(model, enc, seq, o) / (n ** o["length_penalty"])
                    assert abs(want - sc) < 1e-4 * max(1.0, abs(sc)), (seq, sc, want)
                    noisy_sc = float(dn["sequences_scores"][seqs.index(seq)])
                    assert abs(noisy_sc - sc) < 2e-4 * max(1.0, abs(sc)), (sc, noisy_sc, opts)
        for seq in seqs:
            assert seq[0] == pad and pad not in seq[1:] and len(seq) <= o["max_length"], seq
            assert eos not in seq[1:-1] and max(seq) < tok.size, seq
        ended = ["eos" if q[-1] == eos and (len(q) < o["max_length"] or o["forced_eos_token_id"] is None) else "limit"
                 for q in seqs]
        summary.append((s, o["num_beams"], ended[0], len(seqs[0]) - 1, seqs[0]))
        cases.append({"source_text": text, "source_ids": ids, "options": opts, "sequences": seqs,
                      "scores": None if scores is None else r7(scores)})
    out["generate"] = cases

    def differ(key):
        """Some cases that differ only in `key` (absent = its default) give different sequences or scores."""
        groups = {}
        for case in cases:
            rest = json.dumps([case["source_ids"], {k: x for k, x in case["options"].items() if k != key}],
                              sort_keys=True)
            groups.setdefault(rest, []).append(json.dumps([case["sequences"], case["scores"]]))
        return any(len(set(g)) > 1 for g in groups.values())
    if verbose:
        for row in summary:
            print("   ", row)
    assert differ("early_stopping") and differ("renormalize_logits") and differ("num_return_sequences"), \
        (differ("early_stopping"), differ("renormalize_logits"), differ("num_return_sequences"))
    greedy_end = {e for _, nb, e, _, _ in summary if nb == 1}
    beam_end = {e for _, nb, e, _, _ in summary if nb > 1}
    assert greedy_end == {"eos", "limit"} and beam_end == {"eos", "limit"}, summary
    early = [n for _, _, e, n, _ in summary if e == "eos"]
    assert any(3 <= n <= 12 for n in early), early

    # cross-attention of a greedy run
    ids = tok(CROSS_SOURCE)
    d = marian.generate(model, [ids], gen_cfg=gen, num_beams=1, max_new_tokens=12, return_dict_in_generate=True,
                        output_attentions=True)
    seq, steps = d["sequences"][0], d["cross_attentions"][0]
    assert len(steps) == len(seq) - 1
    rec = []
    with torch.no_grad():
        model.decode(torch.tensor([seq[:-1]]), model.encode(torch.tensor([ids])), cross_attn=rec)
    for t, layers in enumerate(steps):
        assert len(layers) == c["num_decoder_layers"]
        for l, w in enumerate(layers):
            assert w.shape == (c["num_heads"], len(ids))
            assert torch.allclose(w, rec[l][0, :, t], atol=1e-5)
            assert torch.allclose(w.sum(-1), torch.ones(w.shape[0]), atol=1e-5)
    out["cross_attention"] = {"source_ids": ids, "sequence": seq,
                              "weights": [[r7(w) for w in layers] for layers in steps]}

    nb, md = c["relative_attention_num_buckets"], c["relative_attention_max_distance"]
    out["position_buckets"] = {"encoder": bucket_table(True, nb, md, -40, 40),
                               "decoder": bucket_table(False, nb, md, -40, 40),
                               "t5_default_encoder": bucket_table(True, 32, 128, -300, 300),
                               "t5_default_decoder": bucket_table(False, 32, 128, -300, 300)}
    S = len(src_ids)  # the forward source reaches distance ±16 (t5-tiny: the float32 log exactly 2.0 → +10)
    reached = set(t5.relative_position_bucket(torch.arange(1 - S, S), True, nb, md).tolist())
    assert S >= 17 and (nb != 32 or {10, 26} <= reached), reached
    return out


def write_folder(out, name, v, spm_bytes, verbose):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    cfg = make_config(v)
    model = t5.T5ForConditionalGeneration(cfg).eval()
    randomize(model, v, SPM_VOCAB + EXTRA_IDS)
    mmf.dump(cfg, os.path.join(folder, "config.json"))
    mmf.dump(generation_config(), os.path.join(folder, "generation_config.json"))
    safetensors_io.save(os.path.join(folder, "model.safetensors"), state_to_save(model, v), metadata={"format": "pt"})
    with open(os.path.join(folder, "spiece.model"), "wb") as f:
        f.write(spm_bytes)
    mmf.dump(tokenizer_config(v), os.path.join(folder, "tokenizer_config.json"))
    mmf.dump(special_tokens_map(), os.path.join(folder, "special_tokens_map.json"))
    # reload: copies checked by t5.load_state, the ignored tensor skipped; the reloaded weights are the same
    m2, _, _ = t5.load(folder)
    for k, t in model.state_dict().items():
        assert torch.equal(t, m2.state_dict()[k]), k
    keys = set(safetensors_io.load(os.path.join(folder, "model.safetensors")))
    assert (set(t5.TIED_COPIES) <= keys) == v["store_copies"] and (t5.IGNORED_KEYS[0] in keys) == v["store_ignored"]
    assert ("lm_head.weight" in keys) == (not v["tied"])
    if verbose:
        print(f"{name}: V {VOCAB_SIZE}")
    sources = [POOL[i] for i in v["sources"]]
    mmf.write_expected(expected(folder, sources, verbose), os.path.join(folder, "expected.json"))
    return folder


def explore(name, v, spm_bytes):
    """--explore NAME: greedy and 4-beam runs of every POOL source, to pick a variant's sources and weights."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = make_config(v)
        model = t5.T5ForConditionalGeneration(cfg).eval()
        randomize(model, v, SPM_VOCAB + EXTRA_IDS)
        mmf.dump(cfg, os.path.join(tmp, "config.json"))
        safetensors_io.save(os.path.join(tmp, "model.safetensors"), state_to_save(model, v))
        with open(os.path.join(tmp, "spiece.model"), "wb") as f:
            f.write(spm_bytes)
        mmf.dump(tokenizer_config(v), os.path.join(tmp, "tokenizer_config.json"))
        model, tok, _ = t5.load(tmp)
        with torch.no_grad():
            f = model(torch.tensor([tok(FORWARD_SOURCE)]), torch.tensor([[0] + tok(FORWARD_TARGET)[:6]]))
            print("rms enc", [round(float(h.pow(2).mean().sqrt()), 2) for h in f["encoder_hidden_states"]],
                  "dec", [round(float(h.pow(2).mean().sqrt()), 2) for h in f["decoder_hidden_states"]],
                  "logit std", round(float(f["logits"].std()), 2))
        for i, s in enumerate(POOL):
            ids = tok(s)
            g = marian.generate(model, [ids], num_beams=1, max_new_tokens=16)[0]
            b = marian.generate(model, [ids], num_beams=4, max_new_tokens=16)[0]
            es = {json.dumps(marian.generate(model, [ids], num_beams=3, max_new_tokens=14, early_stopping=e,
                                             return_dict_in_generate=True)["sequences_scores"]) for e in (True, False)}
            print(f"{i:2d} S={len(ids):2d} greedy {len(g) - 1:2d} {g[1:]}\n    {'ES' if len(es) > 1 else '  '}   "
                  f"beam4  {len(b) - 1:2d} {b[1:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "fixtures"))
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--explore", choices=sorted(VARIANTS))
    a = ap.parse_args()
    torch.set_num_threads(1)
    spm_bytes = spm_model(os.path.join(a.out, "t5-tiny"))
    if a.explore:
        explore(a.explore, VARIANTS[a.explore], spm_bytes)
        return
    for name, v in VARIANTS.items():
        folder = write_folder(a.out, name, v, spm_bytes, a.verbose)
        sizes = {f: os.path.getsize(os.path.join(folder, f)) for f in sorted(os.listdir(folder))}
        print(name, json.dumps(sizes))


if __name__ == "__main__":
    main()
