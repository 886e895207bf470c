// Attention on top of the vector kernels: for each head and query, scores = K·q·scale + bias (masked to −inf),
// softmax, then out = Σ_j p_j·v_j. The SIMD version and its scalar twin share this one loop, instantiated with
// the SIMD kernels (wf::dot, wf::softmax, wf::axpy) or their scalar twins (wf::ref::…).
#include "kernels/attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"

namespace wf {
namespace {

template <float (*Dot)(const float*, const float*, int64_t), void (*Softmax)(float*, int64_t),
          void (*Axpy)(float, const float*, float*, int64_t)>
void attention_impl(const attention_args& a) {
    const int h1 = a.head_end < 0 ? a.n_head : a.head_end;
    const int64_t D = a.head_dim;
    const int group = a.n_head_kv > 0 ? a.n_head / a.n_head_kv : 1;  // query heads per K/V head
    // per-thread scores, grown in powers of two from 1024 keys: a growing KV cache rarely reallocates them
    thread_local std::vector<float> scores_buf;
    if (scores_buf.size() < size_t(a.n_kv)) scores_buf.resize(std::bit_ceil(std::max<size_t>(1024, size_t(a.n_kv))));
    float* scores = scores_buf.data();
    for (int h = a.head_begin; h < h1; ++h) {
        const int64_t kv = int64_t(h / group) * D;
        for (int64_t i = 0; i < a.n_q; ++i) {
            const float* qi = a.q + i * a.ld_q + h * D;
            const int64_t at = a.q_pos + i;  // the query's position among the keys
            int64_t first = 0, last = a.causal ? std::min(a.n_kv - 1, at) : a.n_kv - 1;  // keys first … last
            if (a.window >= 0) first = std::max<int64_t>(0, at - a.window), last = std::min(last, at + a.window);
            for (int64_t j = 0; j < a.n_kv; ++j) {
                const bool ok = j >= first && j <= last && (!a.key_valid || a.key_valid[j]);
                float s = ok ? Dot(qi, a.k + j * a.ld_k + kv, D) * a.scale : -INFINITY;
                if (ok && a.bias) s += a.bias[(h * a.n_q + i) * a.n_kv + j];
                if (ok && a.softcap > 0.0f) s = a.softcap * std::tanh(s / a.softcap);
                scores[j] = s;
            }
            Softmax(scores, a.n_kv);
            float* oi = a.out + i * a.ld_out + h * D;
            std::memset(oi, 0, size_t(D) * sizeof(float));
            for (int64_t j = first; j <= last; ++j)
                if (scores[j] != 0.0f) Axpy(scores[j], a.v + j * a.ld_v + kv, oi, D);
            if (a.probs) std::memcpy(a.probs + (h * a.n_q + i) * a.n_kv, scores, size_t(a.n_kv) * sizeof(float));
        }
    }
}

}  // namespace

void attention(const attention_args& a) { attention_impl<dot, softmax, axpy>(a); }

namespace ref {
void attention(const attention_args& a) { attention_impl<dot, softmax, axpy>(a); }
}  // namespace ref

}  // namespace wf
