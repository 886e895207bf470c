// Text generation with a causal LM: the prompt runs once (cancellable between layers), then one token per step
// through the KV cache, each chosen by the sampler, with stop strings and whole-character streaming.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/options.h"
#include "tasks/pipeline.h"

namespace wf {

struct generated_token {
    int32_t id;
    std::string text;  // whole UTF-8 characters only (held back until complete, or until a stop string is ruled out)
    double logprob;    // log-probability of the token under the model (before penalties and warping)
};

// When prompt + new tokens reach the model's positions, generation ends with finish_reason "length".
class generation {
public:
    generation(const pipeline_model& pm, std::string_view prompt, const generation_params& p);
    // One more token, or nothing once finished. A step first runs what the model has not seen (the prompt, whose
    // attention the trace records if given, or the previous step's token), then chooses. On cancel it throws
    // wf::cancelled with nothing changed: the next step goes on from there.
    std::optional<generated_token> step(const cancel_fn* cancel = nullptr, forward_trace* trace = nullptr);
    bool finished() const { return !finish_reason_.empty(); }
    const std::string& finish_reason() const { return finish_reason_; }  // "eos", "stop", "length", "max_new_tokens"
    const std::string& text() const { return emitted_; }                 // everything returned so far
    const std::vector<int32_t>& prompt_ids() const { return prompt_; }
    const std::vector<int32_t>& ids() const { return ids_; }

private:
    std::string release_text(bool final);
    const pipeline_model& pm_;
    const causal_lm& lm_;
    generation_params p_;
    decoder_state state_;
    sampler sampler_;
    std::vector<int32_t> prompt_, ids_;
    std::vector<int32_t> history_;  // prompt_ then ids_, what the penalties look at
    std::span<const float> logits_;  // the last forward's, in state_ (penalties change them in place)
    bool prefilled_ = false, unrun_ = false;  // unrun_: the last chosen token is not in the cache yet
    utf8_stream utf8_;
    std::string pending_, emitted_, finish_reason_;
};

}  // namespace wf
