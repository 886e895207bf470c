// Multi-head scaled dot-product attention: softmax(Q·Kᵀ·scale + bias + mask)·V, per head.
//
// Q, K, V and the output are row-major (tokens, heads·head_dim) with their own row strides, so K and V can be
// read straight out of a KV cache. Grouped-query attention: K and V have n_head_kv heads, each shared by
// n_head / n_head_kv query heads. Heads [head_begin, head_end) only, so a caller can split heads across threads.
#pragma once

#include <cstdint>

namespace wf {

struct attention_args {
    const float* q = nullptr;  // (n_q, n_head·head_dim), row stride ld_q
    int64_t ld_q = 0;
    const float* k = nullptr;  // (n_kv, n_head_kv·head_dim), row stride ld_k
    int64_t ld_k = 0;
    const float* v = nullptr;  // (n_kv, n_head_kv·head_dim), row stride ld_v
    int64_t ld_v = 0;
    float* out = nullptr;  // (n_q, n_head·head_dim), row stride ld_out
    int64_t ld_out = 0;
    int64_t n_q = 0, n_kv = 0;
    int n_head = 0, head_dim = 0;
    float scale = 1.0f;                  // usually 1/sqrt(head_dim)
    bool causal = false;                 // query i sees keys j ≤ q_pos + i
    int64_t q_pos = 0;                   // position of query 0 among the keys (cache length before this step)
    const uint8_t* key_valid = nullptr;  // (n_kv) 0 = padding, never attended; null = all valid
    float* probs = nullptr;              // optional output (n_head, n_q, n_kv): the attention weights
    int head_begin = 0, head_end = -1;   // −1: all heads
    int n_head_kv = 0;                   // 0: as many as n_head
    float softcap = 0.0f;                // Gemma 2: scores become softcap·tanh(score / softcap); 0: as they are
    int64_t window = -1;                 // sliding window: query i sees only keys j with |q_pos + i − j| ≤ window; −1: all
    const float* bias = nullptr;         // (n_head, n_q, n_kv) added to the scaled scores (T5's relative positions); null: none
};

// From this many queries on, attention runs in blocks of queries (prefill, encoders); below it, as a decode step:
// every head range reads every row of the cache (kernels/attention.cpp: attention_rows).
inline constexpr int64_t attention_query_block = 4;

void attention(const attention_args& a);
namespace ref {
void attention(const attention_args& a);
}

}  // namespace wf
