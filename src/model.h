// What both models share: the trace of a forward pass (for tests and the attention heatmap) and cancellation.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tensor.h"

namespace wf {

// Thrown when the cancel callback asks to stop; the model state is left as it was before the call.
struct cancelled : error {
    cancelled() : error("cancelled") {}
};

// Polled between layers and between generated tokens; returns true to stop.
using cancel_fn = std::function<bool()>;

struct forward_trace {
    bool want_hidden = false;                 // hidden[0] = embeddings output, hidden[l+1] = after layer l
    int attention_layer = -2;                 // −2: none, −1: every layer, l: only layer l
    std::vector<std::vector<float>> hidden;   // each (T, n_embd)
    std::vector<std::vector<float>> attention;  // per recorded layer: (n_head, T, n_kv)
    std::vector<int> attention_layers;        // which layer each attention entry belongs to
    bool wants_attention(int layer) const { return attention_layer == -1 || attention_layer == layer; }
};

struct attention_args;
// Runs attention and, if the trace asks for this layer, records its weights there.
void traced_attention(attention_args at, forward_trace* trace, int layer);

inline void check_cancel(const cancel_fn* c) {
    if (c && *c && (*c)()) throw cancelled();
}

}  // namespace wf
