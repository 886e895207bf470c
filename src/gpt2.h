// GPT-2 (Hugging Face GPT2LMHeadModel) with a KV cache.
#pragma once

#include "config.h"
#include "model.h"
#include "weights.h"

namespace wf {

struct gpt2_layer {
    norm ln_1;        // before attention
    linear qkv;       // (3E, E): c_attn, transposed from Conv1D's (E, 3E)
    linear attn_proj; // (E, E): attn.c_proj
    norm ln_2;        // before the feed-forward
    linear fc;        // (F, E): mlp.c_fc
    linear proj;      // (E, F): mlp.c_proj
};

struct gpt2_weights {
    matrix_view wte;  // (V, E) token embeddings
    matrix_view wpe;  // (P, E) position embeddings
    std::vector<gpt2_layer> layers;
    norm ln_f;
    matrix_view lm_head;  // (V, E): wte (tied) unless the file has its own
};

// Keys and values of every layer for the positions seen so far: k, v are (n_layer, capacity, E).
struct kv_cache {
    int64_t capacity = 0;
    int64_t n_past = 0;
    int64_t n_embd = 0;
    std::vector<float> k, v;
    float* k_at(int64_t layer, int64_t pos) { return k.data() + (layer * capacity + pos) * n_embd; }
    float* v_at(int64_t layer, int64_t pos) { return v.data() + (layer * capacity + pos) * n_embd; }
};

class gpt2_model {
public:
    gpt2_model(const hparams& hp, const tensor_source& src, weight_format fmt);
    const hparams& hp() const { return hp_; }
    // A cache for up to `capacity` positions (≤ n_ctx).
    kv_cache new_cache(int64_t capacity) const;
    // Runs T new tokens at positions n_past … n_past+T−1, appends them to the cache, and returns the logits
    // (V) of the last one (all T rows when all_logits). On cancel or error the cache is left as before the call.
    std::vector<float> forward(kv_cache& cache, const int32_t* ids, int64_t T, bool all_logits = false,
                               forward_trace* trace = nullptr, const cancel_fn* cancel = nullptr) const;
    int64_t weight_bytes() const { return weight_bytes_; }
    bool borrows_file_bytes() const { return borrows_; }

private:
    hparams hp_;
    std::vector<std::unique_ptr<uint8_t[]>> owned_;  // converted or copied weights
    gpt2_weights w_;
    int64_t weight_bytes_ = 0;
    bool borrows_ = false;
};

}  // namespace wf
