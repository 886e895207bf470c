// The options of every call, read from JSON objects (the JS API sends its options object as it is; the command
// line turns its flags into one) and checked here, once: an unknown name is an error that suggests the nearest
// known one, every value is type- and range-checked, and every error names the option.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "models/registry.h"
#include "tasks/sampling.h"

namespace wf {

struct fill_mask_options {
    int64_t top_k = 5;
    std::vector<std::string> targets;  // score only these words (their first token each)
    int attention_layer = -2;          // −2: no attention weights; −1: every layer; l: layer l
};

struct generation_params {
    sampling_params sampling;
    int64_t max_new_tokens = 20;
    std::vector<std::string> stop;  // stop strings: generation ends before the first one, which is not returned
    bool stop_at_eos = true;        // end at the model's end-of-generation ids (pipeline_model::end_ids)
    std::vector<int32_t> stop_token_ids;  // more ids that end it (whatever stop_at_eos says), not returned as text
    bool add_special_tokens = true;  // false: the prompt is tokenized without the tokenizer's template (no BOS of its
                                     // own: a rendered chat template has written its special tokens as text)
    bool skip_special_tokens = false;  // special tokens generated add no text (their ids are still reported)
    int attention_layer = -2;       // the prompt's attention weights, as for fill-mask
    bool reuse_cache = false;       // start from the last generation's KV cache where the prompt begins with its tokens
                                    // (a chat's next turn); the numbers may differ from a fresh run in the last bits
    // each token's log-probability (generated_token::logprob). Without it a greedy step computes only the logits its
    // choice needs (nn/head-screen.h; the same tokens), and none computes the log-sum-exp over the vocabulary.
    bool output_scores = false;
};

// Encoder–decoder generation (translation, text2text-generation), Hugging Face's generate() semantics; the defaults
// come from the model's config.json and generation_config.json (read_seq2seq_defaults), the call's options over them.
struct seq2seq_params {
    int64_t max_new_tokens = 20;         // tokens after the decoder start token (Hugging Face's max_length − 1)
    int64_t num_beams = 1;               // 1: greedy (or sampling with do_sample)
    int64_t num_return_sequences = 1;    // ≤ num_beams: the best finished hypotheses, best first
    float length_penalty = 1.0f;         // a hypothesis scores sum(log p) / length^length_penalty
    enum class stopping { heuristic, early, never } early_stopping = stopping::heuristic;  // false, true, "never"
    int64_t no_repeat_ngram_size = 0;
    std::vector<std::vector<int32_t>> bad_words_ids;  // never generated (the last token of a word after its prefix)
    int32_t forced_eos_token_id = -1;    // the only token allowed at the last position; −1: none
    bool renormalize_logits = false;     // log-softmax again after the processors
    sampling_params sampling;            // do_sample (num_beams 1 only), temperature, top_k, top_p, seed
    int32_t decoder_start_token_id = -1, eos_token_id = -1, pad_token_id = -1;
    bool output_attentions = false;      // each generated token's cross-attention over the source
    // greedy and sampling: the hypothesis's score, sum(log p) (beam search always scores). Without it a greedy step
    // computes only the logits it must (nn/head-screen.h), which gives no log-probability.
    bool output_scores = false;
    bool skip_special_tokens = true;
};

// How a chat becomes a prompt (tasks/generation.h: chat_template_for); the JavaScript API renders the template.
struct chat_options {
    std::string chat_template;        // "": the model's; a template name, or a template itself
    bool tools = false;               // tools were given (a model's "tool_use" template is then the default)
};

fill_mask_options parse_fill_mask_options(const json& o);
generation_params parse_generation_options(const json& o);
// {chat_template: string | null, tools: list | null, documents: list | null, add_generation_prompt: bool,
//  continue_final_message: bool, chat_template_kwargs: object}: checked; what the engine itself uses is returned.
chat_options parse_chat_options(const json& o);
load_options parse_load_options(const json& o);
// A generation_config.json / config.json's generate() settings over `p` (the keys above, Hugging Face's names; max_length
// becomes max_new_tokens = max_length − 1); unknown keys are ignored, wrong types are errors naming the file.
void read_seq2seq_defaults(const json& j, const std::string& file, seq2seq_params& p);
// A call's options over the model's defaults; `task` names the call in errors.
seq2seq_params parse_seq2seq_options(const json& o, const seq2seq_params& defaults, const char* task);

}  // namespace wf
