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
    // log-probability of the token under the model (before penalties and warping), with output_scores only
    std::optional<double> logprob;
};

// ------------------------------------------------------------------------------------------------------- chat
// A chat's template, chosen and checked here and rendered by the caller's Jinja engine (the JavaScript API uses
// @huggingface/jinja) with the variables Hugging Face's apply_chat_template passes: messages, add_generation_prompt,
// tools, documents, the special tokens' texts (special_tokens), the options' chat_template_kwargs, raise_exception.
// The rendered text is then generated from with add_special_tokens = false: it holds its own BOS and turn markers.
struct chat_template_choice {
    std::string name;    // the model's name for it ("default", "tool_use", …), or "" for a template the caller gave
    std::string source;  // Jinja
    json special_tokens;  // "bos_token" → text, …
};
// messages: a list of {role, content} objects (content a string, a list of parts, or null; absent only beside
// tool_calls); an error names the message and the field.
void check_chat_messages(const json& messages);
// The template for options.chat_template: "" → the model's default ("tool_use" when tools are given and the model
// has one; the only one when it has a single template); one of the model's names; or a template itself (text with
// "{{" or "{%"). Errors: no template, an unknown name (listing the model's), a template that is not text.
chat_template_choice chat_template_for(const chat_config& c, const chat_options& o);
// Both, as the engine's chat call does: {"template": source, "template_name": name, "special_tokens": {…}}.
json chat_template_json(const chat_config& c, const json& messages, const json& options);

// What a finished (or abandoned) generation leaves for the next one: its KV cache and the tokens it holds. A chat's
// next turn starts with the conversation so far, so the longest common prefix of its prompt and these tokens need
// not run again.
struct generation_cache {
    decoder_state state;
    std::vector<int32_t> ids;  // the tokens in state.cache, in order (n_past of them)
};

// When prompt + new tokens reach the model's positions, generation ends with finish_reason "length".
class generation {
public:
    // prior: the last generation's cache, reused (p.reuse_cache) for the prompt's longest common prefix with its tokens
    // (at least one prompt token always runs, for its logits; not when the prompt's attention is asked for)
    generation(const pipeline_model& pm, std::string_view prompt, const generation_params& p, generation_cache prior = {});
    // One more token, or nothing once finished. A step first runs what the model has not seen (the prompt, whose
    // attention the trace records if given, or the previous step's token), then chooses. On cancel it throws
    // wf::cancelled with nothing changed: the next step goes on from there.
    std::optional<generated_token> step(const cancel_fn* cancel = nullptr, forward_trace* trace = nullptr);
    bool finished() const { return !finish_reason_.empty(); }
    const std::string& finish_reason() const { return finish_reason_; }  // "eos", "stop", "length", "max_new_tokens"
    const std::string& text() const { return emitted_; }                 // everything returned so far
    const std::vector<int32_t>& prompt_ids() const { return prompt_; }
    const std::vector<int32_t>& ids() const { return ids_; }
    int64_t reused_tokens() const { return reused_; }  // prompt tokens whose keys and values came from the prior cache
    // Whether the last step chose through the output layer's screen (greedy, unscored, no repetition penalty, and a
    // model that has one; nn/head-screen.h).
    bool screened() const { return screen_ != nullptr; }
    // The cache and its tokens, for the next generation; this one is over.
    generation_cache release_cache();

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
    // A greedy step without scores takes the output layer's screen (screenable_) where the model has one: the last
    // forward then gave the hidden row (hidden_, in state_) for screen_, and chooses among the logits it must compute.
    bool screenable_ = false;
    const head_screen* screen_ = nullptr;
    std::span<const float> hidden_;
    std::vector<float> approx_;  // the screen's approximate logits
    bool prefilled_ = false, unrun_ = false;  // unrun_: the last chosen token is not in the cache yet
    int64_t reused_ = 0;
    utf8_stream utf8_;
    std::string pending_, emitted_, finish_reason_;
    bool is_end(int32_t id) const;
    void exclude(std::span<float> logits);  // what the tokenizer cannot name and the penalties' bans, as −inf
};

}  // namespace wf
