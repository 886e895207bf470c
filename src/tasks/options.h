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

}  // namespace wf
