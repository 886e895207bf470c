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
    bool stop_at_eos = true;
    int attention_layer = -2;       // the prompt's attention weights, as for fill-mask
};

fill_mask_options parse_fill_mask_options(const json& o);
generation_params parse_generation_options(const json& o);
load_options parse_load_options(const json& o);

}  // namespace wf
