// matmul's decode path on q8_0 weights (kernels/matmul.cpp dispatches to it below 16 rows of x; its header comment
// gives the whole picture): gemv_q8, the rows of x quantized to q8_0 and sign-extended to int16 once, then integer
// dot products on W's rows as stored or grouped by 4 (dtype.h), each W row read from memory once for every row of x.
// The prefill tiles (16 rows on) are in matmul-q8.cpp.
#include <algorithm>
#include <vector>
#include "kernels/simd.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>  // clang's header for the wasm SIMD128 instructions (not Emscripten's)
#endif
#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

#include "kernels/half4.h"
#include "kernels/kernels.h"
#include "kernels/matmul-paths.h"
#include "kernels/quants.h"
#include "kernels/touch.h"

namespace wf::matmul_detail {
namespace {

thread_local std::vector<float> scale_buf;

// --- q8_0 × q8_0 integer dot products ------------------------------------------------------------------------
// Rows of activations quantized to q8_0 and sign-extended to int16 once (both SIMD paths multiply int16 pairs
// into int32), reused by every W row: q is (M, K), d the (M, K/32) block scales.
struct q8_activations {
    std::vector<int16_t> q;
    std::vector<float> d;
    std::vector<block_q8_0> blocks;
    void set(const float* x, int64_t M, int64_t ldx, int64_t K) {
        const int64_t nb = K / q8_block;
        blocks.resize(size_t(nb));
        q.resize(size_t(M * K));
        d.resize(size_t(M * nb));
        for (int64_t m = 0; m < M; ++m) {
            quantize_q8_0(x + m * ldx, K, blocks.data());
            for (int64_t b = 0; b < nb; ++b) {
                d[size_t(m * nb + b)] = f16_to_f32(blocks[size_t(b)].d);
                for (int i = 0; i < q8_block; ++i) q[size_t(m * K + b * q8_block + i)] = blocks[size_t(b)].q[i];
            }
        }
    }
};

#if defined(__SSE4_1__) && !defined(__wasm_simd128__)
inline float hsum(__m128 v) {
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    v = _mm_add_ss(v, _mm_shuffle_ps(v, v, 1));
    return _mm_cvtss_f32(v);
}
#endif

#if defined(__wasm_simd128__)
// One block's 32 int8 weights at q against 32 int16 activations: 8 weights at a time loaded sign-extended to int16
// (v128.load8x8_s, one x86 instruction) and multiplied pairwise into int32 (i32x4.dot_i16x8_s: pmaddwd).
inline v128_t block_dot(v128_t x0, v128_t x1, v128_t x2, v128_t x3, const uint8_t* q) {
    v128_t s = wasm_i32x4_dot_i16x8(x0, wasm_i16x8_load8x8(q));
    s = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(x1, wasm_i16x8_load8x8(q + 8)));
    s = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(x2, wasm_i16x8_load8x8(q + 16)));
    return wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(x3, wasm_i16x8_load8x8(q + 24)));
}
#endif

// out[n] = Σ_blocks d_x·d_w·(q_x·q_w) for NR rows of W at once, against one row of activations (xq: its int16
// values, xd: its block scales).
template <int NR>
inline void dot_q8_rows(const int16_t* xq_row, const float* xd, const uint8_t* const* w, int64_t nb, float (&out)[NR]) {
#if defined(__wasm_simd128__)
    v128_t acc[NR];
    for (int n = 0; n < NR; ++n) acc[n] = wasm_f32x4_splat(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
        const int16_t* xq = xq_row + b * q8_block;
        const v128_t x0 = wasm_v128_load(xq), x1 = wasm_v128_load(xq + 8), x2 = wasm_v128_load(xq + 16), x3 = wasm_v128_load(xq + 24);
        const float dx = xd[b];
        for (int n = 0; n < NR; ++n) {
            const uint8_t* blk = w[n] + b * int64_t(sizeof(block_q8_0));
            const v128_t s = block_dot(x0, x1, x2, x3, blk + 2);
            acc[n] = wasm_f32x4_add(acc[n], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(s), wasm_f32x4_splat(dx * half1(blk))));
        }
    }
    for (int n = 0; n < NR; ++n)
        out[n] = wasm_f32x4_extract_lane(acc[n], 0) + wasm_f32x4_extract_lane(acc[n], 1) + wasm_f32x4_extract_lane(acc[n], 2) +
                 wasm_f32x4_extract_lane(acc[n], 3);
#elif defined(__SSE4_1__)
    __m128 acc[NR];
    for (int n = 0; n < NR; ++n) acc[n] = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m128i* xq = reinterpret_cast<const __m128i*>(xq_row + b * q8_block);
        const __m128i x0 = _mm_loadu_si128(xq), x1 = _mm_loadu_si128(xq + 1);
        const __m128i x2 = _mm_loadu_si128(xq + 2), x3 = _mm_loadu_si128(xq + 3);
        const float dx = xd[b];
        for (int n = 0; n < NR; ++n) {
            const uint8_t* blk = w[n] + b * int64_t(sizeof(block_q8_0));
            const __m128i w0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
            const __m128i w1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 18));
            __m128i s = _mm_madd_epi16(x0, _mm_cvtepi8_epi16(w0));
            s = _mm_add_epi32(s, _mm_madd_epi16(x1, _mm_cvtepi8_epi16(_mm_unpackhi_epi64(w0, w0))));
            s = _mm_add_epi32(s, _mm_madd_epi16(x2, _mm_cvtepi8_epi16(w1)));
            s = _mm_add_epi32(s, _mm_madd_epi16(x3, _mm_cvtepi8_epi16(_mm_unpackhi_epi64(w1, w1))));
            acc[n] = _mm_add_ps(acc[n], _mm_mul_ps(_mm_cvtepi32_ps(s), _mm_set1_ps(dx * half1(blk))));
        }
    }
    for (int n = 0; n < NR; ++n) out[n] = hsum(acc[n]);
#else
    for (int n = 0; n < NR; ++n) {
        float s = 0;
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t* blk = w[n] + b * int64_t(sizeof(block_q8_0));
            int32_t is = 0;
            for (int i = 0; i < q8_block; ++i) is += int32_t(xq_row[b * q8_block + i]) * int8_t(blk[2 + i]);
            s += float(is) * xd[b] * half1(blk);
        }
        out[n] = s;
    }
#endif
}

#if defined(__wasm_simd128__)
// Four W rows (a "set") whose block b is 32 codes at w[j] + step·b: rows as stored (w[j] a row's first codes, step
// 34; their scales widened beforehand into sc, nb × 4 floats, block-major) or a group of grouped rows (dtype.h: w[j] =
// group + 8·nb + 32·j, step 128, the 4 rows' codes one aligned stream; hs the group's f16 scales). Rows [lo, hi) of
// y are the range's (a group may reach past either end of it).
struct q8_set {
    const uint8_t* w[4];
    const uint8_t* hs;
    const float* sc;
    int64_t step, first, lo, hi;
};

// Block b's 4 f16 scales of the group at hs (dtype.h: its 4·nb scales first) as floats. Grouped rows' scales are
// finite and not negative, so (h << 13)·2^112 is the float, exactly.
inline v128_t group_scales(const uint8_t* hs, int64_t b) {
    return wasm_f32x4_mul(wasm_i32x4_shl(wasm_u32x4_load16x4(hs + 2 * row_group * b), 13), wasm_f32x4_splat(0x1p112f));
}

// Four rows' int32 partial sums s[0 … 3] (4 lanes each) → one vector of their four sums: [s0a+s0c, s1a+s1c, s0b+s0d,
// s1b+s1d] and the same for rows 2, 3; then one more add.
inline v128_t sum_rows4(const v128_t (&s)[4]) {
    const v128_t u01 = wasm_i32x4_add(wasm_i32x4_shuffle(s[0], s[1], 0, 4, 1, 5), wasm_i32x4_shuffle(s[0], s[1], 2, 6, 3, 7));
    const v128_t u23 = wasm_i32x4_add(wasm_i32x4_shuffle(s[2], s[3], 0, 4, 1, 5), wasm_i32x4_shuffle(s[2], s[3], 2, 6, 3, 7));
    return wasm_i32x4_add(wasm_i32x4_shuffle(u01, u23, 0, 1, 4, 5), wasm_i32x4_shuffle(u01, u23, 2, 3, 6, 7));
}

// S sets at once, against one row of x: per block, each set's four int32 partial sums are transposed into one vector
// [S0, S1, S2, S3] and scaled by one vector multiply, instead of four scalar f16 conversions, splats and multiplies.
// The S sets are far apart in W (gemv_q8 takes sets (count / S) apart): S sequential streams, which this Intel Xeon
// VM reads at 11–12 GB/s for 4 sets where one grouped set at a time read 7 (bench/gemv-layouts.cpp, Node 20; the
// f32 GEMV's finding, kernels/matmul.cpp gemm_streams). A lane's arithmetic is the same whatever the other lanes and
// sets are, so a row's result does not depend on where a thread's range starts. This form takes any sets (rows as
// stored, and a turn that mixes them with groups); a turn of groups only goes to dot_q8_groups.
inline thread_local volatile v128_t block_sink;
template <int S>
inline void dot_q8_sets(const int16_t* xq_row, const float* xd, q8_set* const (&set)[S], int64_t nb, v128_t (&out)[S]) {
    v128_t acc[S];
    for (int t = 0; t < S; ++t) acc[t] = wasm_f32x4_splat(0.0f);
    for (int64_t b = 0; b < nb; ++b) {
        const int16_t* xq = xq_row + b * q8_block;
        const v128_t x0 = wasm_v128_load(xq), x1 = wasm_v128_load(xq + 8), x2 = wasm_v128_load(xq + 16), x3 = wasm_v128_load(xq + 24);
        for (int t = 0; t < S; ++t) {
            const q8_set& st = *set[t];
            v128_t s[4];
            for (int n = 0; n < 4; ++n) {
                s[n] = block_dot(x0, x1, x2, x3, st.w[n] + st.step * b);
                block_sink = s[n];  // a store after each row's sum: V8 would otherwise load the 4 rows' codes first, then spill
            }
            const v128_t d = st.hs ? group_scales(st.hs, b)
                                   : wasm_v128_load(st.sc + 4 * b);
            const v128_t scale = wasm_f32x4_mul(d, wasm_f32x4_splat(xd[b]));
            acc[t] = wasm_f32x4_add(acc[t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum_rows4(s)), scale));
        }
    }
    for (int t = 0; t < S; ++t) out[t] = acc[t];
}

// S groups of grouped rows (dtype.h: at g[t] the group's 4·nb f16 scales, then per block its 4 rows' 32 codes side by
// side), against one row of x: the same arithmetic as dot_q8_sets, lane for lane, read from S pointers that stay in
// registers (each block's addresses are constant offsets from g[t] plus one shared index). dot_q8_sets reads each
// row's pointer and step from its set in memory for every block, and on an AMD EPYC (Zen 5, Node 20) the grouped
// q8_0 GEMV read 8.5–9.8 GB/s cache-cold that way, 17–26 this way (`wf-bench-kernels blocks`; warm 24 → 27–30);
// GPT-2 small's q8_0 decode took 0.55 of the time (bench/ab-builds.mjs).
template <int S>
[[gnu::noinline]] void dot_q8_groups(const int16_t* xq_row, const float* xd, const uint8_t* const (&g)[S], int nb, v128_t (&out)[S]) {
    v128_t acc[S];
    const uint8_t* codes[S];
    for (int t = 0; t < S; ++t) acc[t] = wasm_f32x4_splat(0.0f), codes[t] = g[t] + 2 * row_group * nb;
    for (int b = 0; b < nb; ++b) {
        const int16_t* xq = xq_row + b * q8_block;
        const v128_t x0 = wasm_v128_load(xq), x1 = wasm_v128_load(xq + 8), x2 = wasm_v128_load(xq + 16), x3 = wasm_v128_load(xq + 24);
        const v128_t dx = wasm_f32x4_splat(xd[b]);
        for (int t = 0; t < S; ++t) {
            const uint8_t* blk = codes[t] + b * (row_group * q8_block);
            v128_t s[4];
            for (int n = 0; n < 4; ++n) {
                s[n] = block_dot(x0, x1, x2, x3, blk + n * q8_block);
                block_sink = s[n];
            }
            const v128_t d = group_scales(g[t], b);
            acc[t] = wasm_f32x4_add(acc[t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum_rows4(s)), wasm_f32x4_mul(d, dx)));
        }
    }
    for (int t = 0; t < S; ++t) out[t] = acc[t];
}
#endif


}  // namespace

// Few rows of x (decode, and the beams of a beam search): every row quantized once, then 4 W rows at a time read
// from storage and dotted with each row of x while they are in L1 — W is read from memory once, whatever M is.
void gemv_q8(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1) {
    const int64_t K = Wm.n_cols, nb = K / q8_block;
    thread_local q8_activations xq;
    xq.set(x, M, ldx, K);
    // W rows 4 at a time (a set); in wasm the last 1–3 rows too (the 4th pointer repeated), so that a column's value
    // does not depend on where a thread's column range starts: the transposed 4-row sum rounds differently from
    // dot_q8_rows. Grouped rows (dtype.h) a whole group at a time, as one stream, the rows of the range kept (its
    // lanes are the same operations on each row whatever the other three are). Sets 4 at a time, count / 4 sets
    // apart (4 streams far apart).
#if defined(__wasm_simd128__)
    constexpr int S = 4;
    // the range's sets: first the groups it touches (grouped rows), then 4 rows as stored at a time from where the
    // groups end; set k made when it is computed
    const int64_t grouped = grouped_rows(Wm), g_end = std::min(n1, grouped), s_begin = std::max(n0, grouped);
    const int64_t first_group = n0 / row_group, group_sets = n0 < g_end ? (g_end - 1) / row_group - first_group + 1 : 0;
    const int64_t count = group_sets + (std::max<int64_t>(0, n1 - s_begin) + 3) / 4;
    auto set_at = [&](int64_t k) {
        q8_set st{};
        if (k < group_sets) {
            st.first = (first_group + k) * row_group;
            st.hs = Wm.row(st.first);  // the group's scales, widened block by block as the codes are read
            for (int j = 0; j < 4; ++j) st.w[j] = st.hs + 2 * row_group * nb + q8_block * j;
            st.step = row_group * q8_block;
        } else {
            st.first = s_begin + 4 * (k - group_sets);
            const int64_t rows = std::min<int64_t>(4, n1 - st.first);
            for (int j = 0; j < 4; ++j) st.w[j] = Wm.row(st.first + std::min<int64_t>(j, rows - 1)) + 2;
            st.step = sizeof(block_q8_0);
        }
        st.lo = std::max(st.first, n0), st.hi = std::min(st.first + 4, n1);
        return st;
    };
    // rows as stored: the scales of the sets computed together widened beforehand, each set's into its part of sc
    float* sc = scratch(scale_buf, size_t(S * 4 * nb));
    auto put = [&](q8_set* const (&set)[S]) {
        for (int t = 0; t < S; ++t) {
            q8_set& st = *set[t];
            if (st.hs) continue;
            const uint8_t* r[4] = {st.w[0] - 2, st.w[1] - 2, st.w[2] - 2, st.w[3] - 2};
            st.sc = sc + t * 4 * nb;
            for (int64_t b = 0; b < nb; ++b) wasm_v128_store(sc + t * 4 * nb + 4 * b, half4(r, b * int64_t(sizeof(block_q8_0))));
        }
        // a turn of groups only goes to dot_q8_groups; rows as stored, and a turn that mixes them with groups (the
        // last rows of a grouped matrix, fewer than 4), to dot_q8_sets. (dot_q8_stored, rows as stored read from
        // pointers in registers the same way, measured no faster cold: 9.0–10.0 GB/s, its 16 streams the bound.)
        bool groups = true;
        const uint8_t* g[S];
        for (int t = 0; t < S; ++t) groups = groups && set[t]->hs, g[t] = set[t]->hs;
        for (int64_t m = 0; m < M; ++m) {
            v128_t out[S];
            if (groups) dot_q8_groups<S>(xq.q.data() + m * K, xq.d.data() + m * nb, g, int(nb), out);
            else dot_q8_sets<S>(xq.q.data() + m * K, xq.d.data() + m * nb, set, nb, out);
            for (int t = 0; t < S; ++t) {
                float o[4];
                wasm_v128_store(o, out[t]);
                for (int64_t j = set[t]->lo; j < set[t]->hi; ++j) y[m * ldy + j] = o[j - set[t]->first] + (bias ? bias[j] : 0.0f);
            }
        }
    };
    // the sets of turn i: far_set (kernels/touch.h; the last count % S together, the last one repeated to fill the S)
    for (int64_t i = 0; i < count / S + (count % S != 0); ++i) {
        q8_set sets[S];
        q8_set* set[S];
        for (int t = 0; t < S; ++t) sets[t] = set_at(far_set(i, t, S, count)), set[t] = &sets[t];
        put(set);
    }
#else
    // grouped rows (the tests' only: the loader groups in wasm) read back as stored
    thread_local std::vector<uint8_t> as_stored;
    const int64_t rb = row_bytes(Wm.type, K);
    as_stored.resize(size_t(4 * rb));
    const auto row = [&](int64_t r, int j) { return row_as_stored(Wm, r, as_stored.data() + j * rb); };
    for (int64_t n = n0; n < n1; n += 4) {
        const int64_t rows = std::min<int64_t>(4, n1 - n);
        for (int64_t m = 0; m < M; ++m) {
            if (rows == 4) {
                const uint8_t* w[4] = {row(n, 0), row(n + 1, 1), row(n + 2, 2), row(n + 3, 3)};
                float out[4];
                dot_q8_rows<4>(xq.q.data() + m * K, xq.d.data() + m * nb, w, nb, out);
                for (int j = 0; j < 4; ++j) y[m * ldy + n + j] = out[j] + (bias ? bias[n + j] : 0.0f);
                continue;
            }
            for (int64_t j = 0; j < rows; ++j) {  // each row's sum is computed the same whatever NR is
                const uint8_t* w[1] = {row(n + j, 0)};
                float out[1];
                dot_q8_rows<1>(xq.q.data() + m * K, xq.d.data() + m * nb, w, nb, out);
                y[m * ldy + n + j] = out[0] + (bias ? bias[n + j] : 0.0f);
            }
        }
    }
#endif
}

}  // namespace wf::matmul_detail
