// Attention on top of the vector kernels: for each head and query, scores = K·q·scale (masked to −inf),
// softmax, then out = Σ_j p_j·v_j. The SIMD version and its scalar twin share this one loop, instantiated with
// the SIMD kernels (wf::dot, wf::softmax, wf::axpy) or their scalar twins (wf::ref::…).
#include "attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels.h"
#include "model.h"
#include "threads.h"

namespace wf {
namespace {

template <float (*Dot)(const float*, const float*, int64_t), void (*Softmax)(float*, int64_t),
          void (*Axpy)(float, const float*, float*, int64_t)>
void attention_impl(const attention_args& a) {
    const int h1 = a.head_end < 0 ? a.n_head : a.head_end;
    const int64_t D = a.head_dim;
    std::vector<float> scores(static_cast<size_t>(a.n_kv));
    for (int h = a.head_begin; h < h1; ++h) {
        for (int64_t i = 0; i < a.n_q; ++i) {
            const float* qi = a.q + i * a.ld_q + h * D;
            const int64_t last = a.causal ? std::min(a.n_kv - 1, a.q_pos + i) : a.n_kv - 1;  // keys ≤ last
            for (int64_t j = 0; j < a.n_kv; ++j) {
                const bool ok = j <= last && (!a.key_valid || a.key_valid[j]);
                scores[size_t(j)] = ok ? Dot(qi, a.k + j * a.ld_k + h * D, D) * a.scale : -INFINITY;
            }
            Softmax(scores.data(), a.n_kv);
            float* oi = a.out + i * a.ld_out + h * D;
            std::memset(oi, 0, size_t(D) * sizeof(float));
            for (int64_t j = 0; j <= last; ++j)
                if (scores[size_t(j)] != 0.0f) Axpy(scores[size_t(j)], a.v + j * a.ld_v + h * D, oi, D);
            if (a.probs) std::memcpy(a.probs + (h * a.n_q + i) * a.n_kv, scores.data(), size_t(a.n_kv) * sizeof(float));
        }
    }
}

}  // namespace

void attention(const attention_args& a) { attention_impl<dot, softmax, axpy>(a); }

void traced_attention(attention_args at, forward_trace* trace, int layer) {
    if (!trace || !trace->wants_attention(layer)) return attention_threaded(at);
    std::vector<float> probs(static_cast<size_t>(int64_t(at.n_head) * at.n_q * at.n_kv));
    at.probs = probs.data();
    attention_threaded(at);
    trace->attention.push_back(std::move(probs));
    trace->attention_layers.push_back(layer);
}
namespace ref {
void attention(const attention_args& a) { attention_impl<dot, softmax, axpy>(a); }
}  // namespace ref

}  // namespace wf
