// Attention on top of the vector kernels: for each head and query, scores = K·q·scale + bias (masked to −inf),
// softmax, then out = Σ_j p_j·v_j. The scalar twin is that loop, query by query, on the scalar kernels
// (wf::ref::dot, softmax, axpy); the SIMD version, for fewer than 4 queries (decode), reads the keys and values in
// the order a KV cache stores them, across the heads (attention_rows), and from 4 queries on (prefill, encoders)
// takes them 4 at a time as two register tiles (blocked):
//   scores (4 × keys) = Q_block · Kᵀ, an outer-product tile on the head's K transposed once per call, [d][key];
//   out (4 × head_dim) = P · V, an outer-product tile on V's rows as they are stored;
// between them the same masking, bias, soft cap and softmax per query as the twin. Each key's vector is then read
// once per 4 queries instead of once per query, and no dot product ends in a horizontal sum.
#include "kernels/attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>
#include "kernels/simd.h"

#include "kernels/kernels.h"

namespace wf {
namespace {

// Scratch that grows in powers of two from 1024 values (a growing KV cache rarely reallocates it), then is reused.
float* grown(std::vector<float>& buf, size_t n) {
    if (buf.size() < n) buf.resize(std::bit_ceil(std::max<size_t>(1024, n)));
    return buf.data();
}

// Keys first … last that query i sees by position (causal, sliding window); key_valid aside.
void key_range(const attention_args& a, int64_t i, int64_t& first, int64_t& last) {
    const int64_t at = a.q_pos + i;  // the query's position among the keys
    first = 0, last = a.causal ? std::min(a.n_kv - 1, at) : a.n_kv - 1;
    if (a.window >= 0) first = std::max<int64_t>(0, at - a.window), last = std::min(last, at + a.window);
}

bool visible(const attention_args& a, int64_t j, int64_t first, int64_t last) {
    return j >= first && j <= last && (!a.key_valid || a.key_valid[j]);
}

// A visible key's score from its scaled dot product with query i of head h: plus the bias, soft-capped.
float finish_scaled(const attention_args& a, int h, int64_t i, int64_t j, float s) {
    if (a.bias) s += a.bias[(h * a.n_q + i) * a.n_kv + j];
    if (a.softcap > 0.0f) s = a.softcap * std::tanh(s / a.softcap);
    return s;
}

// … from its dot product: scaled first.
float finish_score(const attention_args& a, int h, int64_t i, int64_t j, float dot) { return finish_scaled(a, h, i, j, dot * a.scale); }

// Whether a query that sees keys first … last needs the per-key pass of finish_scaled and the masks: a bias, a soft cap,
// padding, or keys out of its range. Otherwise its scaled scores are final (an encoder's unpadded text, a decode step).
bool masked(const attention_args& a, int64_t first, int64_t last) {
    return a.bias || a.softcap > 0.0f || a.key_valid || first > 0 || last < a.n_kv - 1;
}

// The scalar twin (ref::attention).
void attention_twin(const attention_args& a) {
    const int h1 = a.head_end < 0 ? a.n_head : a.head_end;
    const int64_t D = a.head_dim;
    const int group = a.n_head_kv > 0 ? a.n_head / a.n_head_kv : 1;  // query heads per K/V head
    thread_local std::vector<float> scores_buf;  // per thread
    float* scores = grown(scores_buf, size_t(a.n_kv));
    for (int h = a.head_begin; h < h1; ++h) {
        const int64_t kv = int64_t(h / group) * D;
        for (int64_t i = 0; i < a.n_q; ++i) {
            const float* qi = a.q + i * a.ld_q + h * D;
            int64_t first, last;
            key_range(a, i, first, last);
            for (int64_t j = 0; j < a.n_kv; ++j)
                scores[j] = visible(a, j, first, last) ? finish_score(a, h, i, j, ref::dot(qi, a.k + j * a.ld_k + kv, D)) : -INFINITY;
            ref::softmax(scores, a.n_kv);
            float* oi = a.out + i * a.ld_out + h * D;
            std::memset(oi, 0, size_t(D) * sizeof(float));
            for (int64_t j = first; j <= last; ++j)
                if (scores[j] != 0.0f) ref::axpy(scores[j], a.v + j * a.ld_v + kv, oi, D);
            if (a.probs) std::memcpy(a.probs + (h * a.n_q + i) * a.n_kv, scores, size_t(a.n_kv) * sizeof(float));
        }
    }
}

using B = xsimd::batch<float>;
constexpr int64_t W = int64_t(B::size);
constexpr int64_t QB = attention_query_block;  // queries per block
constexpr int64_t NB = 2 * W;   // keys (scores tile) or output columns (P·V tile) per tile

// c[r][h] += a[r]·b_h: one step of a 4 × 2W outer-product tile (the scores' and P·V's alike)
[[gnu::always_inline]] inline void tile_step(B (&c)[QB][2], const B (&a)[QB], B b0, B b1) {
    for (int r = 0; r < QB; ++r) c[r][0] = xsimd::fma(a[r], b0, c[r][0]), c[r][1] = xsimd::fma(a[r], b1, c[r][1]);
}

void attention_blocked(const attention_args& a) {
    const int h1 = a.head_end < 0 ? a.n_head : a.head_end;
    const int64_t D = a.head_dim, n_kv = a.n_kv, ld_s = (n_kv + NB - 1) / NB * NB;
    const int group = a.n_head_kv > 0 ? a.n_head / a.n_head_kv : 1;
    thread_local std::vector<float> kt_buf, s_buf;
    float* kt = grown(kt_buf, size_t(D * ld_s));  // the K/V head's keys transposed: kt[d·ld_s + j], zero past n_kv
    float* s = grown(s_buf, size_t(QB * ld_s));   // the block's scores, then probabilities, one row per query
    int packed = -1;
    for (int h = a.head_begin; h < h1; ++h) {
        const int64_t kv = int64_t(h / group) * D;
        if (h / group != packed) {
            for (int64_t j = 0; j < n_kv; ++j) {
                const float* kj = a.k + j * a.ld_k + kv;
                for (int64_t d = 0; d < D; ++d) kt[d * ld_s + j] = kj[d];
            }
            for (int64_t d = 0; d < D; ++d) std::fill(kt + d * ld_s + n_kv, kt + (d + 1) * ld_s, 0.0f);
            packed = h / group;
        }
        for (int64_t i0 = 0; i0 < a.n_q; i0 += QB) {
            const int64_t qn = std::min(QB, a.n_q - i0);
            int64_t first[QB], last[QB], lo = n_kv, hi = -1;
            const float* q[QB];
            for (int64_t r = 0; r < QB; ++r) {
                const int64_t i = i0 + std::min(r, qn - 1);  // rows past the end repeat the last query (not stored)
                q[r] = a.q + i * a.ld_q + h * D;
                key_range(a, i, first[r], last[r]);
                lo = std::min(lo, first[r]), hi = std::max(hi, last[r]);
            }
            // scores of keys [lo, hi] (whole tiles of NB from lo rounded down), each tile over all of d
            for (int64_t j0 = lo / NB * NB; j0 <= hi; j0 += NB) {
                B c[QB][2] = {};
                const float* kd = kt + j0;
                for (int64_t d = 0; d < D; ++d, kd += ld_s)
                    tile_step(c, {B(q[0][d]), B(q[1][d]), B(q[2][d]), B(q[3][d])}, B::load_unaligned(kd), B::load_unaligned(kd + W));
                for (int64_t r = 0; r < QB; ++r)  // scaled as the twin scales each dot product
                    (c[r][0] * B(a.scale)).store_unaligned(s + r * ld_s + j0), (c[r][1] * B(a.scale)).store_unaligned(s + r * ld_s + j0 + W);
            }
            // per query: bias, soft cap and masks, as the twin (keys outside [first, last] or not valid: −inf), a loop
            // over the keys only where one of them applies (an encoder's unpadded text needs none: BERT-base's 128 tokens
            // 2.7–3.4 → 2.35–2.5 ms in Node, `wf-bench-kernels attention`); softmax
            for (int64_t r = 0; r < qn; ++r) {
                const int64_t i = i0 + r;
                float* sr = s + r * ld_s;
                if (masked(a, first[r], last[r]))
                    for (int64_t j = 0; j < n_kv; ++j) sr[j] = visible(a, j, first[r], last[r]) ? finish_scaled(a, h, i, j, sr[j]) : -INFINITY;
                softmax(sr, n_kv);
                if (a.probs) std::memcpy(a.probs + (h * a.n_q + i) * n_kv, sr, size_t(n_kv) * sizeof(float));
            }
            // out = P · V over keys [lo, hi], NB columns of the head at a time, then the last columns one by one; the
            // rows past qn (a repeated query's scores) are computed and dropped
            float* o[QB];
            for (int64_t r = 0; r < QB; ++r) o[r] = a.out + (i0 + std::min(r, qn - 1)) * a.ld_out + h * D;
            const float* p0 = s;
            const float* p1 = s + ld_s;
            const float* p2 = s + 2 * ld_s;
            const float* p3 = s + 3 * ld_s;
            int64_t e = 0;
            for (; e + NB <= D; e += NB) {
                B c[QB][2] = {};
                const float* vj = a.v + lo * a.ld_v + kv + e;
                for (int64_t j = lo; j <= hi; ++j, vj += a.ld_v) {
                    if (a.key_valid && !a.key_valid[j]) continue;  // never read: a padding row may hold anything
                    tile_step(c, {B(p0[j]), B(p1[j]), B(p2[j]), B(p3[j])}, B::load_unaligned(vj), B::load_unaligned(vj + W));
                }
                for (int64_t r = 0; r < qn; ++r) c[r][0].store_unaligned(o[r] + e), c[r][1].store_unaligned(o[r] + e + W);
            }
            for (; e < D; ++e)
                for (int64_t r = 0; r < qn; ++r) {
                    const float* pr = s + r * ld_s;
                    float acc = 0.0f;
                    for (int64_t j = lo; j <= hi; ++j)
                        if (!a.key_valid || a.key_valid[j]) acc += pr[j] * a.v[j * a.ld_v + kv + e];
                    o[r][e] = acc;
                }
        }
    }
}

// Scores of key row k for the n heads from h on (n ≤ W): W dot products side by side over d (a range's last heads
// fill the pass with copies of its last head), one transposing sum, each scaled; a head's score is the same whichever
// heads share its pass.
void head_scores(const attention_args& a, const float* q, const float* k, int h, int n, int group, int64_t Dv, float* s) {
    const int64_t D = a.head_dim;
    const float* qr[W];  // the W heads' query and key vectors, as pointers that step
    const float* kr[W];
    B acc[W];
    for (int64_t r = 0; r < W; ++r) {
        const int hr = h + std::min(int(r), n - 1);
        qr[r] = q + hr * D, kr[r] = k + int64_t(hr / group) * D, acc[r] = B(0.0f);
    }
    for (const float* const ke = kr[0] + Dv; kr[0] != ke;)
        for (int64_t r = 0; r < W; ++r) acc[r] = xsimd::fma(B::load_unaligned(qr[r]), B::load_unaligned(kr[r]), acc[r]), qr[r] += W, kr[r] += W;
    alignas(64) float sum[W];
    xsimd::haddp(acc).store_aligned(sum);
    for (int r = 0; r < n; ++r) {
        for (int64_t d = 0; d < D - Dv; ++d) sum[r] += qr[r][d] * kr[r][d];  // (in the order of d, as the twin's)
        s[r * a.n_kv] = sum[r] * a.scale;
    }
}

// Fewer than QB queries (a decode step; a beam's). A KV cache holds a row of all heads per position, so one head's
// keys lie a whole row apart (3 KB in GPT-2 small), a stride that the CPU's prefetchers do not follow. Both passes
// read the cache one row after the other, all heads of a position before the next: one stream, in the order it is
// stored. A decode step finds its cache evicted by the weights read since the layer's last step, and the earlier form
// (blocks of 4 rows for the scores and 8 for P·V, each block read head by head: 4 or 8 streams, restarted every block)
// waited on memory: 12 layers of GPT-2 small at 160 keys, 4 MB read between layers, took 51–57 ns per head and key in
// Node on Zen 4 (AMD EPYC), one stream 26–29 (the same caches hot: 16–18 → 20). GPT-2 small's q4_0 decode after a
// 128-token prompt took 0.91 of the time, after 600 tokens 0.74; SmolLM2-135M's shape at q8_0 0.91 and 0.87.
//   scores: per key, W heads a pass (4 in wasm), their dot products side by side over d, ended by one transposing sum
//           (xsimd::haddp) — no horizontal sum per head — and scaled as the twin scales each dot product; a range's
//           last heads fill their pass with copies of its last head, the same arithmetic per head (results do not
//           depend on where a thread's range of heads starts; a narrower pass per tail width took the wasm over its
//           budget);
//   then per head, where masked(), the twin's masking, bias and soft cap; softmax;
//   out:    per key, each head's output += p·v in place (in L1), skipping p = 0 (masked keys' rows are never read).
// The loops step pointers (clang's wasm target has no loop strength reduction: an index costs V8 an address
// computation per load), and a step that needs no masks skips the per-key pass.
void attention_rows(const attention_args& a) {
    const int h0 = a.head_begin, h1 = a.head_end < 0 ? a.n_head : a.head_end;
    const int64_t D = a.head_dim, Dv = D / W * W, n_kv = a.n_kv;
    const int group = a.n_head_kv > 0 ? a.n_head / a.n_head_kv : 1;
    thread_local std::vector<float> s_buf;
    float* s = grown(s_buf, size_t((h1 - h0) * n_kv));  // per head of the range, the query's scores, then probabilities
    for (int64_t i = 0; i < a.n_q; ++i) {
        int64_t first, last;
        key_range(a, i, first, last);
        const float* q = a.q + i * a.ld_q;
        for (int64_t j = first; j <= last; ++j) {
            const float* k = a.k + j * a.ld_k;
            for (int h = h0; h < h1; h += int(W)) head_scores(a, q, k, h, std::min(int(W), h1 - h), group, Dv, s + (h - h0) * n_kv + j);
        }
        for (int h = h0; h < h1; ++h) {
            float* sh = s + (h - h0) * n_kv;
            if (masked(a, first, last))
                for (int64_t j = 0; j < n_kv; ++j) sh[j] = visible(a, j, first, last) ? finish_scaled(a, h, i, j, sh[j]) : -INFINITY;
            softmax(sh, n_kv);
            if (a.probs) std::memcpy(a.probs + (h * a.n_q + i) * n_kv, sh, size_t(n_kv) * sizeof(float));
            std::fill_n(a.out + i * a.ld_out + h * D, D, 0.0f);
        }
        // out = P·V, one row of V after the other
        float* const out = a.out + i * a.ld_out;
        for (int64_t j = first; j <= last; ++j) {
            const float* v = a.v + j * a.ld_v;
            const float* p = s + j;
            for (int h = h0; h < h1; ++h, p += n_kv) {
                if (*p == 0.0f) continue;  // masked (never read: a padding row may hold anything) or negligible
                const B w(*p);
                const float* vh = v + int64_t(h / group) * D;
                float* o = out + h * D;
                for (float* const oe = o + Dv; o != oe; o += W, vh += W) xsimd::fma(w, B::load_unaligned(vh), B::load_unaligned(o)).store_unaligned(o);
                for (int64_t e = 0; e < D - Dv; ++e) o[e] += *p * vh[e];
            }
        }
    }
}

}  // namespace

void attention(const attention_args& a) {
    if (a.n_q >= QB) return attention_blocked(a);
    attention_rows(a);
}

namespace ref {
void attention(const attention_args& a) { attention_twin(a); }
}  // namespace ref

}  // namespace wf
