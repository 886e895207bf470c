// The two tasks on top of models and tokenizers: fill-mask (BERT) and text generation (GPT-2).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "sampling.h"
#include "tokenizer.h"

namespace wf {

// A model with its tokenizer, loaded from a Hugging Face folder's files.
struct pipeline_model {
    model m;
    std::unique_ptr<tokenizer> tok;
};

// Tokenizer from tokenizer.json, or vocab.txt (+ tokenizer_config.json), or vocab.json + merges.txt.
std::unique_ptr<tokenizer> load_tokenizer(const file_set& files, arch a);
pipeline_model load_pipeline_model(std::shared_ptr<const file_set> files, const load_options& opt = {});

// ------------------------------------------------------------------------------------------------- fill-mask
struct fill_mask_candidate {
    double score;          // softmax probability at the mask
    int32_t token;
    std::string token_str;  // the token decoded on its own
    std::string sequence;   // the input with this token in the mask's place, decoded
};

struct fill_mask_options {
    int64_t top_k = 5;
    std::vector<std::string> targets;  // score only these words (their first token each)
    forward_trace* trace = nullptr;    // attention weights on request
    const cancel_fn* cancel = nullptr;
};

// One list of candidates per mask token in the text (in order). Errors: no mask token; input longer than the
// model's positions.
std::vector<std::vector<fill_mask_candidate>> fill_mask(const pipeline_model& pm, std::string_view text, const fill_mask_options& opt = {});

// ------------------------------------------------------------------------------------------------ generation
struct generation_params {
    sampling_params sampling;
    int64_t max_new_tokens = 20;
    std::vector<std::string> stop;  // stop strings: generation ends before the first one, which is not returned
    bool stop_at_eos = true;
};

struct generated_token {
    int32_t id;
    std::string text;  // whole UTF-8 characters only (held back until complete, or until a stop string is ruled out)
    double logprob;    // log-probability of the token under the model (before penalties and warping)
};

// Token-by-token generation with a KV cache. The prompt runs on the first step (cancellable between layers).
// When prompt + new tokens reach the model's positions, generation ends with finish_reason "length".
class generation {
public:
    generation(const pipeline_model& pm, std::string_view prompt, const generation_params& p);
    // One more token, or nothing once finished. On cancel, throws wf::cancelled; the object stays usable for
    // reading what was generated.
    std::optional<generated_token> step(const cancel_fn* cancel = nullptr, forward_trace* trace = nullptr);
    bool finished() const { return !finish_reason_.empty(); }
    const std::string& finish_reason() const { return finish_reason_; }  // "eos", "stop", "length", "max_new_tokens"
    const std::string& text() const { return emitted_; }                 // everything returned so far
    const std::vector<int32_t>& prompt_ids() const { return prompt_; }
    const std::vector<int32_t>& ids() const { return ids_; }

private:
    std::string release_text(bool final);
    const pipeline_model& pm_;
    generation_params p_;
    kv_cache cache_;
    rng rng_;
    std::vector<int32_t> prompt_, ids_;
    std::vector<int32_t> history_;  // prompt_ then ids_, what the penalties look at
    std::vector<float> logits_;
    bool prefilled_ = false;
    utf8_stream utf8_;
    std::string pending_, emitted_, finish_reason_;
};

}  // namespace wf
