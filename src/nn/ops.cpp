#include "nn/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/parallel.h"

namespace wf {
namespace {
// Below this many multiply-adds an operation runs on the caller: waking threads costs more than it saves.
constexpr int64_t min_parallel_work = 1 << 16;
// A matrix product's column ranges hold at least this many multiply-adds each (a few microseconds in wasm). It was
// 2^19, which kept decode's small products (SmolLM2's 576 × 576 at one token) on the caller while waking a sleeping
// worker cost more than they took (2-thread decode had been slower than 1 thread: 88 → 61 tokens/s, Chromium, q8_0);
// since the pool's threads spin a while before they sleep (kernels/parallel.cpp), those products split too.
// SmolLM2-135M's shape at 2 threads in Node (a 128-token prompt, 64 tokens; two builds alternating): q8_0 decode
// 11.9 → 9.5 ms a token (1 thread: 14.0, the same run's machine), Q4_K_M 16.8 → 11.7; GPT-2 small q4_0 10.3 → 7.9.
constexpr int64_t min_range_work = 1 << 16;
}  // namespace

void apply(const linear& l, const float* x, int64_t T, float* y) {
    const matrix_view& W = l.w;
    const int64_t N = W.n_rows, K = W.n_cols;
    if (T * N * K < min_parallel_work) return matmul(x, T, K, W, l.b, y, N, 0, N);
    // ranges of a multiple of 24 columns (whole 4-row GEMV groups, 2-row GEMM pairs and the f32 tile's groups of 4 or
    // 6 rows), each with enough work
    int64_t grain = (std::max<int64_t>(24, min_range_work / (T * K)) + 23) / 24 * 24;
    // Few ranges where each range prepares x — quantized weights quantize all of x first in every range (and from 16
    // rows on pack it for the integer tiles): one range per thread from 16 rows on — and below 16 rows (decode, beams,
    // short prompts), two a thread whatever the type. parallel_for's eight a thread had each thread quantize x up to
    // eight times an operation: on SmolLM2-135M's shape at 2 threads in Node, ~14 % of each thread's time (q4_0: 576
    // values quantized for a range of ~4 µs). Two a thread against eight took 0.77–0.81 of the time of 32 decode
    // steps (q4_0, q8_0, Q4_K_M), GPT-2 small 0.80–0.88 (q8_0, q4_0, q4_k), Qwen2.5-0.5B's shape in Q4_K_M 0.89; one a
    // thread lost to two by 0.84–0.97 (the threads' shares less even), four by 1.02–1.13. f32's decode too, with fewer
    // and longer streams a range: GPT-2 small 0.91–0.99 (four runs), SmolLM2's shape 0.92–0.97; f16 1.00
    // (bench/ab-decode.mjs).
    if (T < 16 || matmul_quantizes_activations(W.type, T)) {
        const int64_t ranges = (T >= 16 ? 1 : 2) * thread_count();
        grain = std::max(grain, (N + 24 * ranges - 1) / (24 * ranges) * 24);
    }
    parallel_for(N, grain, [&](int64_t n0, int64_t n1) { matmul(x, T, K, W, l.b, y, N, n0, n1); });
}

void apply(const norm& n, float eps, const float* x, int64_t T, int64_t width, float* y) {
    const float* b = n.b;
    if (!b) {
        thread_local std::vector<float> zeros;
        if (zeros.size() < size_t(width)) zeros.assign(size_t(width), 0.0f);
        b = zeros.data();
    }
    // rows split across threads (BERT-base at 128 tokens: 25 layer norms of 128 × 768, ~0.1 ms each on one thread)
    const auto rows = [&](int64_t r0, int64_t r1) { layer_norm(x + r0 * width, r1 - r0, width, n.g, b, eps, y + r0 * width); };
    if (T * width < min_parallel_work) return rows(0, T);
    parallel_for(T, std::max<int64_t>(1, 8192 / width), rows);  // ranges of whole rows, ≥ 8192 values (~10 µs) each
}

namespace {
// Heads' activations, over a few rows: plain loops.
void relu(float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
void tanh_(float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}
void silu(float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}
}  // namespace

void activate(activation a, float* x, int64_t n) {
    void (*f)(float*, int64_t) = a == activation::gelu_erf    ? gelu_erf
                                 : a == activation::gelu_tanh ? gelu_tanh
                                 : a == activation::relu      ? relu
                                 : a == activation::silu      ? silu
                                                              : tanh_;
    if (n < min_parallel_work) return f(x, n);
    parallel_for(n, 4096, [&](int64_t b, int64_t e) { f(x + b, e - b); });
}

void apply(const classifier_head& h, const float* x, int64_t n, float* y, arena& scratch) {
    if (!h.dense.w.data) return apply(h.out, x, n, y);
    float* d = scratch.alloc<float>(n * h.dense.w.n_rows);
    apply(h.dense, x, n, d);
    activate(h.act, d, n * h.dense.w.n_rows);
    if (h.dense_norm.g) apply(h.dense_norm, h.norm_eps, d, n, h.dense.w.n_rows, d);
    apply(h.out, d, n, y);
}

void attend(attention_args a, forward_trace* trace, int layer) {
    std::vector<float>* probs = nullptr;
    if (trace && trace->wants_attention(layer)) {
        trace->attention.emplace_back(size_t(int64_t(a.n_head) * a.n_q * a.n_kv));
        trace->attention_layers.push_back(layer);
        probs = &trace->attention.back();
    }
    attend(a, probs ? probs->data() : nullptr);
}

void attend(attention_args a, float* probs) {
    if (probs) a.probs = probs;
    const int h0 = a.head_begin, h1 = a.head_end < 0 ? a.n_head : a.head_end;
    if (int64_t(h1 - h0) * a.n_q * a.n_kv * a.head_dim < min_parallel_work) return attention(a);
    // a decode step's ranges each read every row of the cache, their heads' part of it: one range per thread, as even
    // as the heads allow (parallel_for's ranges of heads would be several per thread)
    const int64_t n = h1 - h0, parts = a.n_q < attention_query_block ? std::min<int64_t>(thread_count(), n) : n;
    parallel_for(parts, 1, [&](int64_t b, int64_t e) {
        attention_args part = a;
        part.head_begin = h0 + int(b * n / parts);
        part.head_end = h0 + int(e * n / parts);
        attention(part);
    });
}

void keep_last_rows(float* x, int64_t B, int64_t T, int64_t width) {
    for (int64_t b = 0; b < B; ++b) std::memmove(x + b * width, x + (b * T + T - 1) * width, size_t(width) * sizeof(float));  // forward: never overwrites a later row
}

void gather_rows(const float* x, std::span<const int64_t> rows, int64_t width, float* out) {
    for (size_t i = 0; i < rows.size(); ++i) std::copy_n(x + rows[i] * width, width, out + int64_t(i) * width);
}

void scatter_rows(const float* in, std::span<const int64_t> rows, int64_t width, float* x) {
    for (size_t i = 0; i < rows.size(); ++i) std::copy_n(in + int64_t(i) * width, width, x + rows[i] * width);
}

}  // namespace wf
