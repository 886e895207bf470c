#!/usr/bin/python3
"""Writes the Marian (Hugging Face MarianMTModel + MarianTokenizer, Helsinki-NLP/opus-mt layout) test fixtures:
random-weight models with tiny SentencePiece models, and the golden outputs of the PyTorch reference
tools/reference/marian.py (tokenizer, decoding, the forward pass with every hidden state, generate() greedy and beam
search with their options, greedy's cross-attention).

Regenerate (from the repository root; /usr/bin/python3 is Debian's, with python3-torch, python3-numpy and
python3-sentencepiece; a few seconds on one core):

  OMP_NUM_THREADS=1 /usr/bin/python3 tools/reference/make_marian_fixtures.py                 # tests/data/fixtures/marian-tiny…
  OMP_NUM_THREADS=1 /usr/bin/python3 tools/reference/make_marian_fixtures.py --out /tmp/fx   # elsewhere

Every run writes the same bytes (fixed seeds, deterministic SentencePiece training on one thread, sorted JSON; the
weights do not depend on the machine's float arithmetic, expected.json's 7 digits almost never do).
The SentencePiece models are trained on the first 3,000 lines of build/translate-train/{source,target}-text.txt
(tools/train/translate/data.py writes them: English KJV/WEB verses, Spanish RV1909 verses); when those files are
absent, the source.spm / target.spm already in the output folder are reused (so the fixtures can be rebuilt from the
repository alone).

Folders (each a complete opus-mt style folder, loadable by transformers' MarianMTModel / MarianTokenizer):

  marian-tiny/        config.json (every key of a converted opus-mt config, as models/wasmformer-translate-en-es has
                      them), d_model 32, 4 heads on both sides (head_dim 8), encoder_layers 2, decoder_layers 3,
                      encoder_ffn_dim 40 ≠ decoder_ffn_dim 48, activation_function "swish" (x·sigmoid(x)),
                      scale_embedding true (token embeddings × √32), max_position_embeddings 64, shared tied
                      embeddings; model.safetensors F32 with exactly save_pretrained's keys: model.shared.weight
                      (V, d), final_logits_bias (1, V), model.{encoder,decoder}.layers.N.… (no embed_tokens / lm_head
                      copies, no embed_positions);
  marian-tiny-relu/   the variants: activation_function "relu", scale_embedding false (embeddings × 1), d_model 24,
                      4 heads (head_dim 6), encoder_layers 1, decoder_layers 2, ffn 32 / 40; config.json WITHOUT the
                      keys "decoder_vocab_size" and "share_encoder_decoder_embeddings" (older opus-mt conversions lack
                      them: HF's defaults are vocab_size and true); model.safetensors ALSO holds the tied copies
                      model.encoder.embed_tokens.weight, model.decoder.embed_tokens.weight, lm_head.weight (equal
                      to model.shared.weight) and the stored sinusoids model.encoder.embed_positions.weight,
                      model.decoder.embed_positions.weight (64, 24) (equal to the computed ones), as some
                      conversions write them;
  both:               source.spm, target.spm (SentencePiece unigram, 160 pieces each, trained as
                      tools/train/translate/data.py trains the real ones: nmt_nfkc, dummy prefix, <unk> 0 <s> 1 </s> 2,
                      no byte fallback, character_coverage 1.0; ~240 KB each, nearly all of it nmt_nfkc's
                      precompiled charsmap), vocab.json, tokenizer_config.json, special_tokens_map.json,
                      generation_config.json (as tools/train/translate/export.py writes them), expected.json.

vocab.json (one vocabulary, separate_vocabs false; written as MarianTokenizer.save_vocabulary does: indent 2,
non-ASCII as \\uXXXX): "</s>" 0, "<unk>" 1, then source.spm's pieces in SentencePiece id order, then target.spm's
pieces not already there (a piece in both models has one id), then ">>es<<" (a language code, as multilingual
opus-mt vocabularies have them), then "<pad>" last. Control pieces (<s>, </s>) and SentencePiece's <unk> are not
pieces of vocab.json. Three source-only pieces that the tokenize texts produce are LEFT OUT on purpose
(expected.json "removed_pieces"): they tokenize to <unk> (id 1). Special ids: eos = </s> = 0 (also bos and
forced EOS), unk = 1, pad = decoder_start = V − 1; bad_words_ids [[pad]].

generation_config.json: bad_words_ids [[pad]], bos_token_id 0, decoder_start_token_id pad, eos_token_id 0,
forced_eos_token_id 0, max_length 64, num_beams 4, pad_token_id pad, renormalize_logits true. generate() options
not given in a case come from there (then HF's defaults: length_penalty 1.0, early_stopping false,
no_repeat_ngram_size 0, num_return_sequences 1).

Weights (seeded; tiny / relu): linear weights N(0, 0.1² / 0.12²) except the cross-attention's (encoder_attn q, k,
v, out_proj) N(0, 0.4² / 0.45²) (peaked cross-attention that moves with the decoder position: the output depends on
the source), linear biases N(0, 0.1²), layer-norm weights 1 + N(0, 0.2²) and biases N(0, 0.1²) except the last
decoder layer's final_layer_norm weight N(0, 1) (random signs: the tied output layer does not just favour the input
token's own row), model.shared.weight N(0, 0.3² / 0.5²) with the pad row exactly 0 (as converted opus-mt models have
it), final_logits_bias = N(0, 0.5²) minus the logits of the mean decoder output over random inputs (float64, rounded
to 1e-4: no token wins whatever the input) plus a bump of 1.75 / 2.5 on </s>. Random models with plain N(0, σ²)
weights repeat one token forever and end either at the first step or never; these give varied runs, some ending
with EOS after 3-12 tokens, others at the length limit, and early_stopping / length_penalty / no_repeat_ngram_size
that change the answers. Every case is stable under 1e-5 relative noise on the weights (checked), so an engine's
float rounding does not flip a choice.

expected.json (floats rounded to 7 significant digits):

  "config"          config.json as written.
  "special_ids"     {"eos": 0, "unk": 1, "pad": V−1, "decoder_start": V−1}; "vocab_size": V.
  "removed_pieces"  the three source.spm pieces left out of vocab.json.
  "tokenize"        [{"text", "pieces", "ids"}]: the source side, tokenizer(text).input_ids. "pieces" are
                    tokenizer.tokenize(text): the tokens before the id lookup (special tokens and language codes as
                    they appear, SentencePiece pieces; a character SentencePiece does not know is its own surface
                    text, e.g. "😀" or "123", and is looked up in vocab.json like any piece: "é" is a target piece,
                    so it gets that id, not <unk>). "ids" = the vocab.json id of each token (<unk> = 1 when missing)
                    then </s> (0). Rules (transformers 4.x's slow PreTrainedTokenizer.tokenize + MarianTokenizer):
                    1. the special tokens "</s>", "<unk>", "<pad>" written in the text are cut out as whole tokens
                       (leftmost first; they are added tokens with no lstrip/rstrip, so the spaces around them stay
                       with the neighbouring text) and give their ids;
                    2. each stretch of text between them, separately: if it STARTS with a match of the regular
                       expression ">>.+<<" (greedy; "." does not match a newline), that match is one token (looked
                       up in vocab.json: ">>es<<" is there, ">>fr<<" is not → <unk>); every match of ">>.+<<" in the
                       stretch is deleted (so "Hello >>es<< world" tokenizes as "Hello  world"); the rest goes to
                       source.spm (nmt_nfkc normalization, whitespace runs collapsed, dummy prefix ▁: each stretch
                       gets its own, "a<unk>b" → the pieces of "a", <unk>, the pieces of "b" starting with ▁),
                       pieces kept as strings;
                    3. the empty text, or text of spaces only, gives [</s>].
                    No Moses punctuation normalization (MarianTokenizer.normalize exists but tokenize does not call
                    it). transformers 5 changed step 2 (a leading ">>…<<" up to the first "<<", nothing deleted):
                    the texts with a second code or a code after other text are 4.x-only.
  "decode"          [{"ids", "text"}]: tokenizer.decode(ids, skip_special_tokens=True) on the target side: ids →
                    vocab.json pieces, </s>, <unk> and <pad> dropped wherever they are, the rest joined by
                    target.spm's decode_pieces (a piece target.spm does not know, e.g. a source-only piece or
                    ">>es<<", is kept as written), ▁ → space, stripped. (source.spm's decode_pieces gives the same
                    texts for these lists, checked: transformers 5 decodes with source.spm when vocabularies are
                    shared.) clean_up_tokenization_spaces is false (tokenizer_config.json).
  "forward"         one source, no padding: "input_ids" (S), "decoder_input_ids" (T = 7: pad first, then six
                    target ids), "encoder_hidden_states" (encoder_layers + 1 entries, each S × d: the scaled
                    embeddings + sinusoids, then each layer's output; no final layer norm), "decoder_hidden_states"
                    (decoder_layers + 1 entries, each T × d, likewise), "logits" (T × V: last hidden · shared^T +
                    final_logits_bias). As HF's model(input_ids, decoder_input_ids=…, output_hidden_states=True).
  "generate"        [{"source_text", "source_ids", "options", "sequences", "scores"}]: HF
                    model.generate(input_ids, **options, return_dict_in_generate=True, output_scores=True) with the
                    folder's generation_config.json, one input (batch of 1, no padding) per case. "options" are
                    generate()'s keyword arguments verbatim: "num_beams", "max_new_tokens", "length_penalty",
                    "early_stopping" (true, false or "never"), "no_repeat_ngram_size", "num_return_sequences",
                    "renormalize_logits", "forced_eos_token_id" (null: no forced EOS; transformers ≥ 4.22 sets the
                    generation config's value to None, older versions fell back to config.json's); anything not
                    given comes from generation_config.json (so {"max_new_tokens": 12} is beam search with 4 beams).
                    "sequences": num_return_sequences rows, best first, each the decoder ids WITHOUT padding: the
                    start token (pad) first, then the generated tokens, ending with </s> when the hypothesis ended
                    there (a row that reached max_length = max_new_tokens + 1 ends with the forced </s>, or without
                    one when forced_eos_token_id is null; HF pads shorter rows with pad, left out here). "scores":
                    beam search: HF's sequences_scores, one per row; greedy (num_beams 1): null.
  "cross_attention" {"source_ids", "sequence", "weights"}: the greedy run (num_beams 1, max_new_tokens 12) of that
                    source; "weights"[t][l][h] = the S cross-attention probabilities of decoder layer l, head h, for
                    the query at decoder position t (the one whose logits chose sequence[t + 1]); as HF's
                    generate(output_attentions=True).cross_attentions[t][l][0, h, 0].

Semantics the numbers follow (transformers ≥ 4.50; see tools/reference/marian.py):
  - max_length = max_new_tokens + 1 (the decoder start token counts); cur_len = the decoder ids so far.
  - Logits processors, in HF's order, on the step's scores (N beams × V), given the decoder ids so far (start token
    included): (1) no_repeat_ngram_size n: when cur_len + 1 ≥ n, every token that would complete an n-gram already
    present in that row gets −inf; (2) bad_words_ids [[pad]]: pad gets −inf; (3) forced_eos_token_id: when
    cur_len == max_length − 1, every score becomes −inf and EOS's becomes exactly 0; (4) renormalize_logits true:
    log_softmax of the result. (No min_length, repetition penalty, temperature…: none is set.)
  - Greedy (num_beams 1): the processors on the raw logits, argmax (the first index on ties); stop after EOS or at
    max_length.
  - Beam search (num_beams B > 1, the vectorized _beam_search): scores = processors(log_softmax(logits)); each
    running beam's sum added (initially beam 0: 0, the others −1e9); the top 2B of the B × V sums (token index =
    flat % V, beam = flat // V; float32 sums); a candidate "hits" when its token is EOS or cur_len + 1 ≥ max_length;
    the next B running beams (and their sums) are the best B of the 2B candidates after adding −1e9 to those that
    hit (the cache follows their source beams); candidates that hit AND rank among the first B of the 2B enter the
    finished list with score sum / (cur_len + 1 − 1)^length_penalty (the generated length: start token not
    counted, EOS counted), unless early_stopping is true and all B finished slots were already filled before this
    step, or the heuristic below already said stop: the finished list is the best B of (old list ∪ these), sorted
    best first (−1e9 placeholders until filled). After the step cur_len += 1, then the heuristic: best_running =
    running beam 0's sum / L^length_penalty with L = max_length − 1 when early_stopping is "never" and
    length_penalty > 0, else L = cur_len − 1; it stays "improvable" while a finished slot is empty or best_running >
    the lowest finished score (sticky: once false, false). Stop when not improvable, or early_stopping is true and
    all B slots are filled, or all 2B candidates hit. The answer: the first num_return_sequences entries of the
    finished list, their scores = sequences_scores.

Checks (asserted): SentencePiece training is deterministic (trained twice, same bytes); every folder loads back into
marian.py (tied copies and stored positions verified equal); the cached incremental decoder = the full forward;
greedy (cached) = argmax of a full forward per step with the processors; each beam row's score = the sum of the
processed log-probabilities of its tokens (full forward per step) / length^length_penalty; num_return_sequences
rows are sorted and their first row is the num_return_sequences 1 answer; every generated sequence and greedy
choice is the same after 1e-5 relative noise on the weights (no knife-edge case); the cross-attention rows sum to
1 and equal the full forward's; the case list covers EOS-ended and length-limited greedy and beam runs, and has
cases where only early_stopping, only renormalize_logits, or only num_return_sequences differ and the answers do;
the decode texts are the same through source.spm; the removed pieces really occur in the tokenize texts; the
config keys are those of models/wasmformer-translate-en-es/config.json (when that folder is there).
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
import marian  # noqa: E402
import safetensors_io  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TRAIN = os.path.join(ROOT, "build", "translate-train")
SPM_LINES = 3000
SPM_VOCAB = 160
LANG_CODE = ">>es<<"

# the real model's config.json keys (models/wasmformer-translate-en-es, as converted opus-mt configs have them)
BASE_CONFIG = {
    "_num_labels": 3, "activation_dropout": 0.0, "activation_function": "swish", "add_bias_logits": False,
    "add_final_layer_norm": False, "architectures": ["MarianMTModel"], "attention_dropout": 0.0,
    "bad_words_ids": None, "bos_token_id": 0, "classif_dropout": 0.0, "classifier_dropout": 0.0, "d_model": None,
    "decoder_attention_heads": None, "decoder_ffn_dim": None, "decoder_layerdrop": 0.0, "decoder_layers": None,
    "decoder_start_token_id": None, "decoder_vocab_size": None, "dropout": 0.1, "encoder_attention_heads": None,
    "encoder_ffn_dim": None, "encoder_layerdrop": 0.0, "encoder_layers": None, "eos_token_id": 0,
    "forced_eos_token_id": 0, "gradient_checkpointing": False,
    "id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"},
    "init_std": 0.02, "is_encoder_decoder": True, "label2id": {"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2},
    "max_length": 64, "max_position_embeddings": 64, "model_type": "marian", "normalize_before": False,
    "normalize_embedding": False, "num_beams": 4, "num_hidden_layers": None, "pad_token_id": None,
    "scale_embedding": True, "share_encoder_decoder_embeddings": True, "static_position_embeddings": True,
    "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True, "vocab_size": None,
}

TOKENIZE_TEXTS = [
    "In the beginning God created the heaven and the earth.",
    "And God said, Let there be light: and there was light.",
    'Jacob said to his brother, "Give me the land!"',
    "Where is Abel thy brother? And he said, I know not: Am I my brother's keeper?",
    "The 12 sons of Jacob; 144,000 men in 1611.",
    "Café, niño, über — naïve façade.",
    "ÉL DIJO: ¡Hola! ¿Qué tal, señor?",
    "",
    "     ",
    "  leading and trailing  ",
    "double  spaces   inside",
    "a tab\there and a\nnewline",
    "emoji 😀 and 👍🏽 too",
    "CJK: 漢字かな 한국어",
    "Ｆｕｌｌ　ｗｉｄｔｈ ﬁnd the ﬂock",
    "cafe\u0301 zero\u200bwidth soft\u00adhyphen",
    "before </s> after",
    "a<unk>b <pad> c</s>",
    "</s>",
    ">>es<< Hello world.",
    ">>fr<< Hello",
    ">>es<<",
    "Hello >>es<< world",
    ">>es<< a >>fr<< b",
    "The LORD's servants were sold into Egypt.",
    "Thou shalt love thy neighbour as thyself.",
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
]

FORWARD_SOURCE = "And Jacob said unto his father Joseph:"
FORWARD_TARGET = "Y dijo Dios: Sea la luz"
CROSS_SOURCE = "The café is 12 miles away!"

DECODE_TARGETS = [
    "En el principio crió Dios los cielos y la tierra.",
    "Y dijo Dios: Sea la luz: y fué la luz.",
    "¿Dónde está Abel tu hermano?",
]


def gen_cases():
    """(source index, options): generate()'s keyword arguments verbatim. The sources' roles (each variant picks its
    texts from POOL to fit): 0, 1 greedy ends with EOS after a few tokens; 2 early_stopping matters; 3, 4 long,
    varied runs to the limit; 5 a repetitive run to the limit; 6 the empty text (source ids [</s>])."""
    G = {"num_beams": 1}
    c = [(s, dict(G, max_new_tokens=16)) for s in range(7)]  # greedy on every source
    c += [
        (0, dict(G, max_new_tokens=1)),
        (0, {"max_new_tokens": 1}),  # num_beams 4 from generation_config.json: one forced EOS
        (5, dict(G, max_new_tokens=14, no_repeat_ngram_size=2)),
        (6, dict(G, max_new_tokens=14, no_repeat_ngram_size=3)),
        (3, dict(G, max_new_tokens=12, forced_eos_token_id=None)),
        (0, {"max_new_tokens": 12}),  # num_beams 4 from generation_config.json
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
        (3, {"num_beams": 3, "max_new_tokens": 14, "no_repeat_ngram_size": 3}),
        (4, {"num_beams": 4, "max_new_tokens": 12, "num_return_sequences": 1}),
        (4, {"num_beams": 4, "max_new_tokens": 12, "num_return_sequences": 2}),
        (3, {"num_beams": 3, "max_new_tokens": 12, "num_return_sequences": 3}),
        (2, {"num_beams": 5, "max_new_tokens": 14, "num_return_sequences": 3, "early_stopping": "never"}),
        (0, {"max_new_tokens": 12, "renormalize_logits": False}),  # vs the num_beams-4 default case above
        (5, {"num_beams": 4, "max_new_tokens": 12, "renormalize_logits": False, "no_repeat_ngram_size": 2,
             "num_return_sequences": 2}),
        (1, {"num_beams": 4, "max_new_tokens": 12, "renormalize_logits": True}),
        (3, {"num_beams": 2, "max_new_tokens": 12, "forced_eos_token_id": None}),
        (2, {"num_beams": 4, "max_new_tokens": 16, "length_penalty": 0.6, "early_stopping": "never",
             "no_repeat_ngram_size": 2, "num_return_sequences": 2}),
    ]
    return c


VARIANTS = {
    "marian-tiny": {"seed": 11, "d": 32, "heads": 4, "enc": 2, "dec": 3, "enc_ffn": 40, "dec_ffn": 48,
                    "act": "swish", "scale": True, "w_std": 0.1, "cross_std": 0.4, "emb_std": 0.3, "last_ln_std": 1.0,
                    "bias_std": 0.5, "eos_bump": 1.75, "store_extra": False, "drop_keys": (),
                    "sources": [6, 3, 15, 8, 18, 10, 25]},
    "marian-tiny-relu": {"seed": 12, "d": 24, "heads": 4, "enc": 1, "dec": 2, "enc_ffn": 32, "dec_ffn": 40,
                         "act": "relu", "scale": False, "w_std": 0.12, "cross_std": 0.45, "emb_std": 0.5,
                         "last_ln_std": 1.0, "bias_std": 0.5, "eos_bump": 2.5, "store_extra": True,
                         "drop_keys": ("decoder_vocab_size", "share_encoder_decoder_embeddings"),
                         "sources": [1, 22, 9, 14, 12, 24, 25]},
}


# --------------------------------------------------------------------------------------------------- tokenizer
def train_spm(lines_path, name, work):
    """Train one unigram model in `work` (relative paths: the trainer spec stores them) → bytes."""
    import sentencepiece as spm
    with open(lines_path, encoding="utf-8") as f:
        lines = [next(f) for _ in range(SPM_LINES)]
    cwd = os.getcwd()
    os.chdir(work)
    try:
        with open(f"{name}-text.txt", "w", encoding="utf-8") as f:
            f.writelines(lines)
        spm.SentencePieceTrainer.train(
            input=f"{name}-text.txt", model_prefix=name, model_type="unigram", vocab_size=SPM_VOCAB,
            character_coverage=1.0, max_sentence_length=8192, num_threads=1, input_sentence_size=0,
            shuffle_input_sentence=False, minloglevel=2)
        with open(f"{name}.model", "rb") as f:
            data = f.read()
        for ext in (".model", ".vocab", "-text.txt"):
            os.remove(name + ext)
    finally:
        os.chdir(cwd)
    return data


def spm_models(first_out):
    """source.spm / target.spm bytes: trained (twice, checked equal) or, without the training text, reused."""
    src_txt, tgt_txt = os.path.join(TRAIN, "source-text.txt"), os.path.join(TRAIN, "target-text.txt")
    if os.path.exists(src_txt) and os.path.exists(tgt_txt):
        out = {}
        with tempfile.TemporaryDirectory() as work:
            for name, path in (("source", src_txt), ("target", tgt_txt)):
                a, b = train_spm(path, name, work), train_spm(path, name, work)
                assert a == b, f"{name}.spm training is not deterministic"
                out[name] = a
        return out
    print(f"note: {src_txt} missing, reusing the .spm files of {first_out}")
    return {n: open(os.path.join(first_out, f"{n}.spm"), "rb").read() for n in ("source", "target")}


def sp_from_bytes(data):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(data)
    return sp


def normal_pieces(sp):
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if not (sp.is_control(i) or sp.is_unknown(i))]


def choose_removed(src, tgt, texts):
    """Three source-only pieces (not in target.spm) of ≥ 3 characters that the tokenize texts produce, the rarest
    (highest SentencePiece ids) first."""
    tgt_set = set(normal_pieces(tgt))
    used = set()
    for t in texts:
        used.update(src.encode(t, out_type=str))
    cand = [p for p in normal_pieces(src) if p in used and p not in tgt_set and len(p) >= 3]
    cand.sort(key=lambda p: -src.piece_to_id(p))
    assert len(cand) >= 3, cand
    return cand[:3]


def build_vocab(src, tgt, removed):
    vocab = {"</s>": 0, "<unk>": 1}
    for sp in (src, tgt):
        for p in normal_pieces(sp):
            if p not in vocab and p not in removed:
                vocab[p] = len(vocab)
    vocab[LANG_CODE] = len(vocab)
    vocab["<pad>"] = len(vocab)
    return vocab


def tokenizer_config():
    # tools/train/translate/export.py's tokenizer_config (model_max_length 512, as opus-mt folders have it)
    return {"clean_up_tokenization_spaces": False, "eos_token": "</s>", "model_max_length": 512,
            "pad_token": "<pad>", "separate_vocabs": False, "source_lang": "en", "sp_model_kwargs": {},
            "target_lang": "es", "target_vocab_file": None, "tokenizer_class": "MarianTokenizer",
            "unk_token": "<unk>"}


def generation_config(cfg):
    pad = cfg["pad_token_id"]
    return {"bad_words_ids": [[pad]], "bos_token_id": cfg["bos_token_id"], "decoder_start_token_id": pad,
            "eos_token_id": cfg["eos_token_id"], "forced_eos_token_id": cfg["forced_eos_token_id"],
            "max_length": cfg["max_length"], "num_beams": cfg["num_beams"], "pad_token_id": pad,
            "renormalize_logits": True}


def dump(obj, path):
    """As transformers' to_json_file: indent 2, sorted keys, a final newline."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


# ------------------------------------------------------------------------------------------------------- model
def make_config(v, V):
    real = os.path.join(ROOT, "models", "wasmformer-translate-en-es", "config.json")
    if os.path.exists(real):
        with open(real) as f:
            assert set(json.load(f)) == set(BASE_CONFIG), "the real model's config.json keys changed"
    c = dict(BASE_CONFIG)
    pad = V - 1
    c.update({"d_model": v["d"], "encoder_attention_heads": v["heads"], "decoder_attention_heads": v["heads"],
              "encoder_layers": v["enc"], "decoder_layers": v["dec"], "num_hidden_layers": v["enc"],
              "encoder_ffn_dim": v["enc_ffn"], "decoder_ffn_dim": v["dec_ffn"], "activation_function": v["act"],
              "scale_embedding": v["scale"], "vocab_size": V, "decoder_vocab_size": V, "pad_token_id": pad,
              "decoder_start_token_id": pad, "bad_words_ids": [[pad]]})
    for k in v["drop_keys"]:
        del c[k]
    assert None not in c.values()
    return c


def randomize(model, v, eos_bump):
    """Seeded weights (see the module docstring)."""
    g = torch.Generator().manual_seed(v["seed"])
    c = model.config
    pad = c["pad_token_id"]
    last_ln = f"model.decoder.layers.{c['decoder_layers'] - 1}.final_layer_norm.weight"
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            n = torch.randn(p.shape, generator=g)
            if name == last_ln:  # random signs: the output is not the input token's own direction
                p.copy_(v["last_ln_std"] * n)
            elif "layer_norm" in name:
                p.copy_(1.0 + 0.2 * n if name.endswith("weight") else 0.1 * n)
            elif name == "model.shared.weight":
                p.copy_(v["emb_std"] * n)
                p[pad] = 0.0
            elif name.endswith("weight"):
                p.copy_((v["cross_std"] if ".encoder_attn." in name else v["w_std"]) * n)
            else:
                p.copy_(0.1 * n)
        b = v["bias_std"] * torch.randn(model.final_logits_bias.shape, generator=g)
        # minus the mean decoder output's logits over random sources and decoder inputs, so that no "hub" token
        # wins whatever the input (float64, rounded to 1e-4: the same bytes on any machine)
        src = torch.randint(2, pad, (4, 12), generator=g)
        dec = torch.randint(2, pad, (4, 16), generator=g)
        dec[:, 0] = pad
        m64 = copy.deepcopy(model).double()
        h = m64.decode(dec, m64.encode(src))
        mean_logits = h.reshape(-1, h.shape[-1]).mean(0) @ m64.model.shared.weight.T
        b -= (mean_logits * 1e4).round().float() / 1e4
        b[0, c["eos_token_id"]] += eos_bump
        model.final_logits_bias.copy_(b)


def state_to_save(model, v):
    st = marian.export_state(model)
    if v["store_extra"]:
        for k in marian.TIED_COPIES:
            st[k] = st["model.shared.weight"].clone()
        for k in marian.POSITION_KEYS:
            st[k] = model.positions.clone()
    return st


# ----------------------------------------------------------------------------------------------------- outputs
def r7(x):
    if isinstance(x, torch.Tensor):
        x = x.tolist()
    if isinstance(x, list):
        return [r7(y) for y in x]
    if isinstance(x, float):
        return float(f"{x:.7g}")
    return x


def processed_logprobs(model, enc, seq, o):
    """The per-step scores beam search adds (log_softmax → processors), full forward, for the tokens of seq."""
    total = 0.0
    for t in range(1, len(seq)):
        lg = model.logits(model.decode(torch.tensor([seq[:t]]), enc))[:, -1].float().log_softmax(-1)
        lg = marian.process(o, torch.tensor([seq[:t]]), lg, t)
        total += float(lg[0, seq[t]])
    return total


def greedy_full(model, enc, o):
    seq = [o["decoder_start_token_id"]]
    while len(seq) < o["max_length"]:
        lg = model.logits(model.decode(torch.tensor([seq]), enc))[:, -1].float()
        lg = marian.process(o, torch.tensor([seq]), lg, len(seq))
        seq.append(int(lg[0].argmax()))
        if seq[-1] == o["eos_token_id"]:
            break
    return seq


def run_case(model, gen, ids, opts):
    return marian.generate(model, [ids], gen_cfg=gen, return_dict_in_generate=True, **opts)


def noisy_copy(model, seed=99, rel=1e-5):
    m = copy.deepcopy(model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in sorted(m.named_parameters()):
            p.mul_(1 + rel * torch.randn(p.shape, generator=g))
        m.final_logits_bias.mul_(1 + rel * torch.randn(m.final_logits_bias.shape, generator=g))
    return m


def expected(folder, removed, sources, verbose):
    model, tok, gen = marian.load(folder)
    c = model.config
    V, pad, eos, unk = c["vocab_size"], c["pad_token_id"], c["eos_token_id"], tok.unk
    assert (tok.eos, tok.pad, unk) == (0, V - 1, 1) and len(tok.vocab) == V
    out = {"config": c,
           "special_ids": {"eos": eos, "unk": unk, "pad": pad, "decoder_start": c["decoder_start_token_id"]},
           "vocab_size": V, "removed_pieces": removed}

    # tokenize
    rows, seen_removed = [], set()
    for t in TOKENIZE_TEXTS:
        pieces, ids = tok.tokenize(t), tok(t)
        assert ids == [tok.vocab.get(p, unk) for p in pieces] + [eos]
        seen_removed.update(p for p in pieces if p in removed)
        rows.append({"text": t, "pieces": pieces, "ids": ids})
    assert seen_removed == set(removed), seen_removed
    out["tokenize"] = rows

    # decode
    gen_ids = marian.generate(model, [tok(sources[0])], gen_cfg=gen, num_beams=1, max_new_tokens=12)[0]
    t0, t1, t2 = (tok.target(s) for s in DECODE_TARGETS)
    src_only = [tok.vocab[p] for p in normal_pieces(tok.src) if p in tok.vocab and tok.tgt.piece_to_id(p) == 0][:4]
    lists = [gen_ids, [pad] + t0, t1, t2[:3] + [unk] + t2[3:5] + [pad, eos] + t2[5:], [eos, unk, pad], [],
             [pad] + src_only + t0[:3], src_only[:2] + [tok.vocab[LANG_CODE]] + t1[:4], tok(TOKENIZE_TEXTS[5]),
             [tok.vocab["\u2581"]] + t1[:2] + [tok.vocab["\u2581"], eos, eos], tok(TOKENIZE_TEXTS[0])[:8] + [0]]
    rows = []
    for ids in lists:
        text = tok.decode(ids)
        # the same through source.spm (transformers 5 decodes with it when vocabularies are shared)
        keep = [tok.pieces[i] for i in ids if i not in tok.special]
        assert tok.src.decode_pieces(keep).replace("\u2581", " ").strip() == text, ids
        rows.append({"ids": ids, "text": text})
    assert rows[1]["text"] == DECODE_TARGETS[0] and rows[2]["text"] == DECODE_TARGETS[1], rows[1:3]
    out["decode"] = rows

    # forward
    src_ids = tok(FORWARD_SOURCE)
    dec_ids = [pad] + tok.target(FORWARD_TARGET)[:6]
    assert len(dec_ids) == 7 and len(src_ids) == 9, (src_ids, dec_ids)
    with torch.no_grad():
        f = model(torch.tensor([src_ids]), torch.tensor([dec_ids]))
        # cached incremental decoding = the full forward
        enc = f["encoder_last_hidden_state"]
        cache, cross = {"past": 0, "layers": []}, model.cross_kv(enc)
        for t in range(len(dec_ids)):
            h = model.decode(torch.tensor([dec_ids[t:t + 1]]), enc, cache=cache, cross=cross)
            assert torch.allclose(model.logits(h)[0, 0], f["logits"][0, t], atol=1e-4)
    assert len(f["encoder_hidden_states"]) == c["encoder_layers"] + 1
    assert len(f["decoder_hidden_states"]) == c["decoder_layers"] + 1
    assert float(f["logits"].std()) > 0.5
    out["forward"] = {"input_ids": src_ids, "decoder_input_ids": dec_ids,
                      "encoder_hidden_states": [r7(h[0]) for h in f["encoder_hidden_states"]],
                      "decoder_hidden_states": [r7(h[0]) for h in f["decoder_hidden_states"]],
                      "logits": r7(f["logits"][0])}

    # generate
    noisy = noisy_copy(model)
    cases, summary = [], []
    for s, opts in gen_cases():
        text = sources[s]
        ids = tok(text)
        assert len(ids) <= 40
        d = run_case(model, gen, ids, opts)
        o = marian.generation_options(model, gen, **opts)
        seqs, scores = d["sequences"], d["sequences_scores"]
        assert len(seqs) == o["num_return_sequences"]
        # robust: the same answer after a 1e-5 relative perturbation of the weights
        dn = run_case(noisy, gen, ids, opts)
        assert dn["sequences"] == seqs, ("knife-edge case", s, opts, seqs, dn["sequences"])
        with torch.no_grad():
            enc = model.encode(torch.tensor([ids]))
            if o["num_beams"] == 1:
                assert seqs[0] == greedy_full(model, enc, o), (s, opts)
                assert scores is None
            else:
                one = run_case(model, gen, ids, dict(opts, num_return_sequences=1))["sequences"][0]
                assert one == seqs[0]
                assert scores == sorted(scores, reverse=True) and scores[-1] > -1e8, scores
                for seq, sc in zip(seqs, scores):
                    n = len(seq) - 1
                    want = processed_logprobs(model, enc, seq, o) / (n ** o["length_penalty"])
                    assert abs(want - sc) < 1e-4 * max(1.0, abs(sc)), (seq, sc, want)
                    noisy_sc = float(dn["sequences_scores"][seqs.index(seq)])
                    assert abs(noisy_sc - sc) < 2e-4 * max(1.0, abs(sc)), (sc, noisy_sc, opts)
        for seq in seqs:
            assert seq[0] == pad and pad not in seq[1:] and len(seq) <= o["max_length"]
            assert eos not in seq[1:-1]
        ended = ["eos" if q[-1] == eos and len(q) < o["max_length"] else "limit" for q in seqs]
        summary.append((s, o["num_beams"], ended[0], len(seqs[0]) - 1))
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
    assert differ("early_stopping") and differ("renormalize_logits") and differ("num_return_sequences"), \
        (differ("early_stopping"), differ("renormalize_logits"), differ("num_return_sequences"))
    greedy_end = {e for _, nb, e, _ in summary if nb == 1}
    beam_end = {e for _, nb, e, _ in summary if nb > 1}
    if verbose:
        for row in summary:
            print("   ", row)
    assert greedy_end == {"eos", "limit"} and beam_end == {"eos", "limit"}, summary
    early = [n for _, _, e, n in summary if e == "eos"]
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
        assert len(layers) == c["decoder_layers"]
        for l, w in enumerate(layers):
            assert w.shape == (c["decoder_attention_heads"], len(ids))
            assert torch.allclose(w, rec[l][0, :, t], atol=1e-5)
            assert torch.allclose(w.sum(-1), torch.ones(w.shape[0]), atol=1e-5)
    out["cross_attention"] = {"source_ids": ids, "sequence": seq,
                              "weights": [[r7(w) for w in layers] for layers in steps]}
    return out


def write_expected(obj, path):
    """Top level and the lists' items one per line; everything below compact."""
    def compact(x):
        return json.dumps(x, ensure_ascii=False, separators=(",", ":"))

    lines = ["{"]
    keys = list(obj)
    for i, k in enumerate(keys):
        v = obj[k]
        end = "," if i < len(keys) - 1 else ""
        if isinstance(v, list) and v and isinstance(v[0], dict):
            lines.append(f" {compact(k)}: [")
            lines += [f"  {compact(x)}" + ("," if j < len(v) - 1 else "") for j, x in enumerate(v)]
            lines.append(" ]" + end)
        elif isinstance(v, dict) and k != "special_ids":
            lines.append(f" {compact(k)}: {{")
            sub = list(v)
            lines += [f"  {compact(s)}: {compact(v[s])}" + ("," if j < len(sub) - 1 else "") for j, s in enumerate(sub)]
            lines.append(" }" + end)
        else:
            lines.append(f" {compact(k)}: {compact(v)}{end}")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == json.loads(json.dumps(obj))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def write_folder(out, name, v, spm_bytes, vocab, removed, verbose):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    V = len(vocab)
    cfg = make_config(v, V)
    full = dict(cfg)
    full.setdefault("share_encoder_decoder_embeddings", True)
    model = marian.MarianMTModel(full).eval()
    randomize(model, v, v["eos_bump"])
    dump(cfg, os.path.join(folder, "config.json"))
    dump(generation_config(cfg), os.path.join(folder, "generation_config.json"))
    safetensors_io.save(os.path.join(folder, "model.safetensors"), state_to_save(model, v), metadata={"format": "pt"})
    for n in ("source", "target"):
        with open(os.path.join(folder, f"{n}.spm"), "wb") as f:
            f.write(spm_bytes[n])
    with open(os.path.join(folder, "vocab.json"), "w") as f:
        json.dump(vocab, f, indent=2)  # MarianTokenizer.save_vocabulary's save_json (ASCII, \\u escapes)
    dump(tokenizer_config(), os.path.join(folder, "tokenizer_config.json"))
    dump({"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"},
         os.path.join(folder, "special_tokens_map.json"))
    # reload: tied copies and stored positions are checked by marian.load_state; the reloaded weights are the same
    m2, _, _ = marian.load(folder)
    for k, t in model.state_dict().items():
        assert torch.equal(t, m2.state_dict()[k]), k
    if v["store_extra"]:
        keys = set(safetensors_io.load(os.path.join(folder, "model.safetensors")))
        assert set(marian.TIED_COPIES) | set(marian.POSITION_KEYS) <= keys
    if verbose:
        print(f"{name}: V {V}")
    sources = [POOL[i] for i in v["sources"]]
    write_expected(expected(folder, removed, sources, verbose), os.path.join(folder, "expected.json"))
    return folder


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "fixtures"))
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(1)
    first = os.path.join(a.out, "marian-tiny")
    spm_bytes = spm_models(first)
    src, tgt = sp_from_bytes(spm_bytes["source"]), sp_from_bytes(spm_bytes["target"])
    removed = choose_removed(src, tgt, TOKENIZE_TEXTS)
    vocab = build_vocab(src, tgt, removed)
    for name, v in VARIANTS.items():
        folder = write_folder(a.out, name, v, spm_bytes, vocab, removed, a.verbose)
        sizes = {f: os.path.getsize(os.path.join(folder, f)) for f in sorted(os.listdir(folder))}
        print(name, json.dumps(sizes))


if __name__ == "__main__":
    main()
