// fill-mask: the masked-LM head's candidates for every mask token in a text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tasks/options.h"
#include "tasks/pipeline.h"

namespace wf {

struct fill_mask_candidate {
    double score;           // softmax probability at the mask
    int32_t token;
    std::string token_str;  // the token decoded on its own
    std::string sequence;   // the input with this token in the mask's place, decoded
};

// One list of candidates per mask token in the text (in order), best first. Errors: no mask token; input longer
// than the model's positions. The trace (attention weights) and cancel are optional.
std::vector<std::vector<fill_mask_candidate>> fill_mask(const pipeline_model& pm, std::string_view text, const fill_mask_options& opt = {},
                                                        forward_trace* trace = nullptr, const cancel_fn* cancel = nullptr);
// Several texts as one padded batch (one forward pass): their results in order. The trace records the first text.
std::vector<std::vector<std::vector<fill_mask_candidate>>> fill_mask(const pipeline_model& pm, const std::vector<std::string>& texts,
                                                                     const fill_mask_options& opt = {}, forward_trace* trace = nullptr,
                                                                     const cancel_fn* cancel = nullptr);

}  // namespace wf
