// matmul's integer prefill (kernels/matmul.cpp dispatches to it; its header comment gives the whole picture): from
// 16 rows of x on, an integer outer-product tile on packed panels (gemm_q8) that q8_0 and the 32-value block types
// share — q4_0, q5_0, iq4_nl re-blocked as q8_0, q4_1 / q5_1 as codes with scales and minimums per 32 — and the
// K-quants' (q3_K … q6_K: gemm_k), whose int32 sums run over whole super-blocks of q8_K activations, as their decode's.
// Where the instance runs relaxed SIMD, the same rows take its int8 dot product instead (gemm_u7 for the types whose
// codes fit in 7 bits, exactly; gemm_q7 for q8_0 and iq4_nl, on 7-bit activations). q8_0's decode path (below 16
// rows, gemv_q8) is in gemv-q8.cpp.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>
#include "kernels/simd.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>  // clang's header for the wasm SIMD128 instructions (not Emscripten's)
#endif
#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

#include "core/error.h"
#include "kernels/cold.h"
#include "kernels/half4.h"
#include "kernels/kernels.h"
#include "kernels/matmul-paths.h"
#include "kernels/quants.h"
#include "kernels/relaxed.h"
#include "kernels/touch.h"

// The tiles' float steps as wasm takes them, natively too (g++ contracts a·b + c into a fused multiply-add by default;
// WebAssembly has none): so the K-quants' tile computes gemv_quant's twin's values bit for bit in native tests as well.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace wf::matmul_detail {
namespace {

// --- q8_0 prefill: an integer outer-product tile --------------------------------------------------------------
// Many rows (M ≥ 16) on q8_0 weights: the rows are quantized to q8_0 as decode quantizes its one row, and W is
// packed once per panel of 8 columns so that for each pair of k one vector holds 4 columns' int16 pairs,
//   [w_n[k], w_n[k+1], w_n+1[k], w_n+1[k+1], …, w_n+3[k+1]];
// i32x4.dot_i16x8 (pmaddwd) of that with the row's pair (x[k], x[k+1]) splat gives 4 columns' partial sums in 4
// lanes: no horizontal sums, 8 multiply-adds per instruction. A 4 × 8 tile keeps 8 int32 accumulators; at the end
// of each q8 block they are scaled by d_x[m]·d_w[n] into 8 float accumulators.
// The rows are packed too, by groups of 4 (the last one padded with zero rows): per pair of k the group's 4 pairs
// side by side, so that the tile reads x and W each from one pointer at constant offsets (no address arithmetic
// per step in V8's code) and broadcasts x's pairs with v128.load32_splat (a load, not a shuffle). Both packings are
// the same 4-way interleave of int8 pairs, widened to int16 (interleave_pairs4).
// The tile is a function of its own that wasm-opt must not inline (q8_tile_ptr): wasm-opt inlines every function
// that has one caller, and inside matmul (~750 KB of machine code once all its kernels are inlined) V8's register
// allocator kept the accumulators and broadcasts on the stack, several spills per multiply-add. In Node, at M = 128
// and 768 × 768: the former tile 48 GFLOP/s inlined, 63 out of line; this one 86.
constexpr int64_t q8_nr = 8, q8_mr = 4;

#if defined(__wasm_simd128__)
using vi = v128_t;
inline vi vi_load(const void* p) { return wasm_v128_load(p); }
inline vi vi_splat32(const void* p) { return wasm_v128_load32_splat(p); }
inline vi vi_dot_add(vi acc, vi a, vi b) { return wasm_i32x4_add(acc, wasm_i32x4_dot_i16x8(a, b)); }
inline vi vi_zero() { return wasm_i32x4_splat(0); }
inline vi vf_scale_add(vi facc, vi iacc, vi scale) { return wasm_f32x4_add(facc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(iacc), scale)); }
inline vi vf_mul(vi a, float s) { return wasm_f32x4_mul(a, wasm_f32x4_splat(s)); }
inline vi vf_zero() { return wasm_f32x4_splat(0.0f); }
inline void vf_store(float* p, vi v) { wasm_v128_store(p, v); }
inline void vi_store(void* p, vi v) { wasm_v128_store(p, v); }
inline vi vi_unpacklo16(vi a, vi b) { return wasm_i16x8_shuffle(a, b, 0, 8, 1, 9, 2, 10, 3, 11); }
inline vi vi_unpackhi16(vi a, vi b) { return wasm_i16x8_shuffle(a, b, 4, 12, 5, 13, 6, 14, 7, 15); }
inline vi vi_unpacklo32(vi a, vi b) { return wasm_i32x4_shuffle(a, b, 0, 4, 1, 5); }
inline vi vi_unpackhi32(vi a, vi b) { return wasm_i32x4_shuffle(a, b, 2, 6, 3, 7); }
inline vi vi_widen_lo8(vi a) { return wasm_i16x8_extend_low_i8x16(a); }
inline vi vi_widen_hi8(vi a) { return wasm_i16x8_extend_high_i8x16(a); }
inline vi vi_mul16(vi a, vi b) { return wasm_i16x8_mul(a, b); }
inline vi vi_pairs16(const int16_t* s) { return wasm_i16x8_make(s[0], s[0], s[1], s[1], s[2], s[2], s[3], s[3]); }
inline vi vf_scaled(vi iacc, vi scale) { return wasm_f32x4_mul(wasm_f32x4_convert_i32x4(iacc), scale); }
inline vi vf_add(vi a, vi b) { return wasm_f32x4_add(a, b); }
inline vi vf_sub(vi a, vi b) { return wasm_f32x4_sub(a, b); }
#define WF_Q8_TILE 1
#elif defined(__SSE4_1__)
using vi = __m128i;
inline vi vi_load(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline vi vi_splat32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm_set1_epi32(v);
}
inline vi vi_dot_add(vi acc, vi a, vi b) { return _mm_add_epi32(acc, _mm_madd_epi16(a, b)); }
inline vi vi_zero() { return _mm_setzero_si128(); }
inline vi vf_scale_add(vi facc, vi iacc, vi scale) {
    return _mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(facc), _mm_mul_ps(_mm_cvtepi32_ps(iacc), _mm_castsi128_ps(scale))));
}
inline vi vf_mul(vi a, float s) { return _mm_castps_si128(_mm_mul_ps(_mm_castsi128_ps(a), _mm_set1_ps(s))); }
inline vi vf_zero() { return _mm_setzero_si128(); }
inline void vf_store(float* p, vi v) { _mm_storeu_ps(p, _mm_castsi128_ps(v)); }
inline void vi_store(void* p, vi v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
inline vi vi_unpacklo16(vi a, vi b) { return _mm_unpacklo_epi16(a, b); }
inline vi vi_unpackhi16(vi a, vi b) { return _mm_unpackhi_epi16(a, b); }
inline vi vi_unpacklo32(vi a, vi b) { return _mm_unpacklo_epi32(a, b); }
inline vi vi_unpackhi32(vi a, vi b) { return _mm_unpackhi_epi32(a, b); }
inline vi vi_widen_lo8(vi a) { return _mm_cvtepi8_epi16(a); }
inline vi vi_widen_hi8(vi a) { return _mm_cvtepi8_epi16(_mm_srli_si128(a, 8)); }
inline vi vi_mul16(vi a, vi b) { return _mm_mullo_epi16(a, b); }
inline vi vi_pairs16(const int16_t* s) { return _mm_setr_epi16(s[0], s[0], s[1], s[1], s[2], s[2], s[3], s[3]); }
inline vi vf_scaled(vi iacc, vi scale) { return _mm_castps_si128(_mm_mul_ps(_mm_cvtepi32_ps(iacc), _mm_castsi128_ps(scale))); }
inline vi vf_add(vi a, vi b) { return _mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b))); }
inline vi vf_sub(vi a, vi b) { return _mm_castps_si128(_mm_sub_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b))); }
#define WF_Q8_TILE 1
#endif

#if defined(WF_Q8_TILE)
// The integer tiles' end of a block: facc[r][h] += iacc[r][h] · d_w (columns 4h … 4h + 3, dw) · d_x (dx[r]).
inline void scale_block(vi (&facc)[q8_mr][2], const vi (&iacc)[q8_mr][2], const float* dw, const float* dx) {
    const vi d0 = vi_load(dw), d1 = vi_load(dw + 4);
    for (int r = 0; r < q8_mr; ++r) {
        facc[r][0] = vf_scale_add(facc[r][0], iacc[r][0], vf_mul(d0, dx[r]));
        facc[r][1] = vf_scale_add(facc[r][1], iacc[r][1], vf_mul(d1, dx[r]));
    }
}
inline void store_facc(const vi (&facc)[q8_mr][2], float (&out)[q8_mr][q8_nr]) {
    for (int r = 0; r < q8_mr; ++r) {
        vf_store(out[r], facc[r][0]);
        vf_store(out[r] + 4, facc[r][1]);
    }
}
#endif

// Four sources of 32 int8 values (one q8_0 block's codes each; null: zeros) → 16 vectors of 8 int16, vector p
// (at out + p·stride) holding pair p of each source in turn: [s0[2p], s0[2p+1], s1[2p], s1[2p+1], …, s3[2p+1]].
// With scale (the K-quants' panel), each value times its source's whole-number scale for its half of 16: source j's
// values 16h … 16h + 15 times scale[4h + j] (the products fit int16: k_panel).
inline void interleave_pairs4(const int8_t* const (&src)[4], int16_t* out, int64_t stride, const int16_t* scale = nullptr) {
#if defined(WF_Q8_TILE)
    for (int h = 0; h < 2; ++h) {  // pairs 8h … 8h + 7
        const vi sc = scale ? vi_pairs16(scale + 4 * h) : vi_zero();
        const auto put = [&](int16_t* at, vi v) { vi_store(at, scale ? vi_mul16(v, sc) : v); };
        vi v[4];
        for (int j = 0; j < 4; ++j) v[j] = src[j] ? vi_load(src[j] + 16 * h) : vi_zero();
        // int8 pairs as 16-bit units: [a0 b0 a1 b1 a2 b2 a3 b3] and so on, then [a0 b0 c0 d0 a1 b1 c1 d1] …
        const vi ab_lo = vi_unpacklo16(v[0], v[1]), ab_hi = vi_unpackhi16(v[0], v[1]);
        const vi cd_lo = vi_unpacklo16(v[2], v[3]), cd_hi = vi_unpackhi16(v[2], v[3]);
        const vi t[4] = {vi_unpacklo32(ab_lo, cd_lo), vi_unpackhi32(ab_lo, cd_lo), vi_unpacklo32(ab_hi, cd_hi), vi_unpackhi32(ab_hi, cd_hi)};
        for (int i = 0; i < 4; ++i) {
            put(out + (8 * h + 2 * i) * stride, vi_widen_lo8(t[i]));
            put(out + (8 * h + 2 * i + 1) * stride, vi_widen_hi8(t[i]));
        }
    }
#else
    for (int p = 0; p < q8_block / 2; ++p)
        for (int j = 0; j < 4; ++j) {
            const int s = scale ? scale[4 * (p / 8) + j] : 1;
            out[p * stride + 2 * j] = int16_t(src[j] ? s * src[j][2 * p] : 0);
            out[p * stride + 2 * j + 1] = int16_t(src[j] ? s * src[j][2 * p + 1] : 0);
        }
#endif
}

// Σ of one block's 32 codes (one copy for the packings that need it; in wasm pairwise widening adds, 9 instructions:
// clang's own vectors for std::accumulate were 0.4 KB of the engine's .wasm gzipped at each use)
[[gnu::noinline]] int32_t block_sum(const int8_t* q) {
#if defined(__wasm_simd128__)
    const v128_t a = wasm_i16x8_extadd_pairwise_i8x16(wasm_v128_load(q)), b = wasm_i16x8_extadd_pairwise_i8x16(wasm_v128_load(q + 16));
    const v128_t s = wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_add(a, b));
    const v128_t t = wasm_i32x4_add(s, wasm_i32x4_shuffle(s, s, 2, 3, 0, 1));
    return wasm_i32x4_extract_lane(wasm_i32x4_add(t, wasm_i32x4_shuffle(t, t, 1, 0, 3, 2)), 0);
#else
    return std::accumulate(q, q + q8_block, int32_t(0));
#endif
}

// Rows of x quantized to q8_0 and packed by groups of 4 rows for the tile: q holds, per group, block and pair of
// k, the group's 4 pairs as int16 (8 values; rows past M are zeros), d per group and block the 4 rows' scales.
// With sums, s holds likewise d·Σq per block (the minimums' term of the types with one: see add_minimums).
struct q8_row_groups {
    std::vector<int16_t> q;
    std::vector<float> d, s;
    std::vector<block_q8_0> blocks;
    void set(const float* x, int64_t M, int64_t ldx, int64_t K, bool sums) {
        const int64_t nb = K / q8_block, groups = (M + q8_mr - 1) / q8_mr;
        blocks.resize(size_t(q8_mr * nb));
        q.resize(size_t(groups * q8_mr * K));
        d.resize(size_t(groups * nb * q8_mr));
        s.resize(sums ? d.size() : 0);
        for (int64_t g = 0; g < groups; ++g) {
            const int64_t rows = std::min(q8_mr, M - g * q8_mr);
            for (int64_t r = 0; r < rows; ++r) quantize_q8_0(x + (g * q8_mr + r) * ldx, K, blocks.data() + r * nb);
            for (int64_t b = 0; b < nb; ++b) {
                const int8_t* src[4];
                for (int64_t r = 0; r < q8_mr; ++r) {
                    src[r] = r < rows ? blocks[size_t(r * nb + b)].q : nullptr;
                    const size_t at = size_t((g * nb + b) * q8_mr + r);
                    d[at] = r < rows ? f16_to_f32(blocks[size_t(r * nb + b)].d) : 0.0f;
                    if (sums) s[at] = src[r] ? d[at] * float(block_sum(src[r])) : 0.0f;
                }
                interleave_pairs4(src, q.data() + (g * nb + b) * q8_block * q8_mr, 2 * q8_mr);
            }
        }
    }
};

// Columns n … n + cols − 1 (cols ≤ 8; missing ones are zero) of all K as the tile reads them: per block, 16 pairs ×
// 2 vectors of 8 int16 (columns 0–3, then 4–7), then per block the 8 scales.
// Row r of a q8_0 matrix, as stored or grouped (dtype.h), block by block: block b's 32 codes at codes + code_step·b, its
// f16 scale at scale + scale_step·b (block_codes and block_scale per row rather than per block).
struct q8_walk {
    const uint8_t* codes = nullptr;
    const uint8_t* scale = nullptr;
    int64_t code_step = 0, scale_step = 0;
    q8_walk(const matrix_view& W, int64_t r) {
        codes = reinterpret_cast<const uint8_t*>(q8_codes(W, r, 0)), scale = block_scale(W, r, 0);
        const bool g = r < grouped_rows(W);
        code_step = g ? row_group * q8_block : int64_t(sizeof(block_q8_0)), scale_step = g ? 2 * row_group : int64_t(sizeof(block_q8_0));
    }
    q8_walk() = default;
};

// W's rows as stored or grouped.
void pack_q8_panel(const matrix_view& Wm, int64_t n, int64_t cols, int16_t* q, float* d) {
    const int64_t nb = Wm.n_cols / q8_block;
    q8_walk rows[q8_nr];
    for (int64_t j = 0; j < cols; ++j) rows[j] = q8_walk(Wm, n + j);
    for (int64_t b = 0; b < nb; ++b) {
        // the 8 scales gathered and widened W at a time (widen_f16 computes what half1 does, lane by lane)
        if constexpr (q8_nr % W == 0) {
            for (int64_t j0 = 0; j0 < q8_nr; j0 += W) {
                alignas(64) int32_t h[W];
                for (int64_t j = 0; j < W; ++j) {
                    uint16_t v = 0;
                    if (j0 + j < cols) std::memcpy(&v, rows[j0 + j].scale + rows[j0 + j].scale_step * b, 2);
                    h[j] = v;
                }
                widen_f16(BI::load_aligned(h)).store_unaligned(d + b * q8_nr + j0);
            }
        } else {
            for (int64_t j = 0; j < q8_nr; ++j) d[b * q8_nr + j] = j < cols ? half1(rows[j].scale + rows[j].scale_step * b) : 0.0f;
        }
        for (int64_t half = 0; half < 2; ++half) {
            const int8_t* src[4];
            for (int64_t j = 0; j < 4; ++j) {
                const q8_walk& r = rows[4 * half + j];
                src[j] = 4 * half + j < cols ? reinterpret_cast<const int8_t*>(r.codes + r.code_step * b) : nullptr;
            }
            interleave_pairs4(src, q + b * q8_block * q8_nr + half * 8, 2 * q8_nr);
        }
    }
}

// interleave_pairs4 out of line for the packings of the codes types and the K-quants (one copy for the three; per
// call it writes 512 bytes), inlined in q8_0's two
[[gnu::noinline]] void interleave_k4(const int8_t* const (&src)[4], int16_t* out, int64_t stride, const int16_t* scale) {
    interleave_pairs4(src, out, stride, scale);
}

// The same panel's codes from rows given as codes (cols rows of K int8 codes at q, row j's at q + j·K): the types
// with to_codes32 (q4_1, q5_1); their scales and minimums go through panel_values.
void pack_codes_panel(const int8_t* q, int64_t cols, int64_t K, int16_t* out) {
    for (int64_t b = 0; b < K / q8_block; ++b)
        for (int64_t half = 0; half < 2; ++half) {
            const int8_t* src[4];
            for (int64_t j = 0; j < 4; ++j) src[j] = 4 * half + j < cols ? q + (4 * half + j) * K + b * q8_block : nullptr;
            interleave_k4(src, out + b * q8_block * q8_nr + half * 8, 2 * q8_nr, nullptr);
        }
}

// Per-row values (cols rows of ns at v, row j's at v + j·ns) in the panel's order: per block the 8 columns' values,
// zero for the missing columns.
void panel_values(const float* v, int64_t ns, int64_t cols, float* out) {
    for (int64_t b = 0; b < ns; ++b)
        for (int64_t j = 0; j < q8_nr; ++j) out[b * q8_nr + j] = j < cols ? v[j * ns + b] : 0.0f;
}

// q4_K, q5_K and q6_K rows to codes in vectors (their scalar twins: the types' to_codes32 / to_codes16, which
// matmul's tests check through the products): a byte pair of nibbles per 16-bit lane, masked and shifted in place.
// The scalar decode had made these types' prefill tile 1.3–1.4× the time of q8_0's (wf-bench-kernels blocks).
using U16 = xsimd::batch<uint16_t>;
using I8 = xsimd::batch<int8_t>;
constexpr int64_t kBytes = int64_t(U16::size) * 2;  // bytes per vector: 16 in wasm, 32 with AVX2
static_assert(32 % kBytes == 0);
inline U16 ld16(const uint8_t* p) { return U16::load_unaligned(reinterpret_cast<const uint16_t*>(p)); }
inline void st16(int8_t* p, U16 v) { v.store_unaligned(reinterpret_cast<uint16_t*>(p)); }

// (out of line: prefill_codes and the K-quants' panel share one copy of each)
template <class Block, bool five>
[[gnu::noinline]] void k45_codes(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) {
    const U16 low4(0x0F0F), bit0(0x0101);
    for (int64_t b = 0; b < n / qk_k; ++b) {
        Block blk;
        std::memcpy(&blk, src + b * int64_t(sizeof(Block)), sizeof(Block));
        const float D = f16_to_f32(blk.d), Dmin = f16_to_f32(blk.dmin);
        for (int g = 0; g < 8; ++g) {
            uint8_t sc, mn;
            scale_min_k4(g, blk.scales, sc, mn);
            d[b * 8 + g] = D * float(sc), m[b * 8 + g] = -(Dmin * float(mn));
        }
        int8_t* out = q + b * qk_k;
        for (int h = 0; h < 4; ++h)  // groups 2h (low nibbles of qs[32h …]) and 2h + 1 (high nibbles)
            for (int64_t c = 0; c < 32; c += kBytes) {
                const U16 v = ld16(blk.qs + 32 * h + c);
                U16 lo = v & low4, hi = (v >> 4) & low4;
                if constexpr (five) {  // element e's fifth bit: bit e / 32 of qh[e % 32]
                    const U16 qh = ld16(blk.qh + c);
                    lo = lo | (((qh >> (2 * h)) & bit0) << 4);
                    hi = hi | (((qh >> (2 * h + 1)) & bit0) << 4);
                }
                st16(out + 64 * h + c, lo);
                st16(out + 64 * h + 32 + c, hi);
            }
    }
}

[[gnu::noinline]] void q6_codes(const uint8_t* src, int8_t* q, float* d, int64_t n) {
    const U16 low4(0x0F0F), low2(0x0303);
    const I8 bias(32);
    for (int64_t b = 0; b < n / qk_k; ++b) {
        block_q6_K blk;
        std::memcpy(&blk, src + b * int64_t(sizeof(block_q6_K)), sizeof(block_q6_K));
        const float D = f16_to_f32(blk.d);
        for (int g = 0; g < 16; ++g) d[b * 16 + g] = D * float(blk.scales[g]);
        int8_t* out = q + b * qk_k;
        for (int h = 0; h < 2; ++h)  // element 128h + 32j + l: ql's nibble (j: low, low + 32, high, high + 32), qh's bits 2j
            for (int64_t c = 0; c < 32; c += kBytes) {
                const U16 a = ld16(blk.ql + 64 * h + c), a2 = ld16(blk.ql + 64 * h + 32 + c), hq = ld16(blk.qh + 32 * h + c);
                const U16 low[4] = {a & low4, a2 & low4, (a >> 4) & low4, (a2 >> 4) & low4};
                for (int j = 0; j < 4; ++j) {
                    const U16 code = low[j] | (((hq >> (2 * j)) & low2) << 4);
                    (xsimd::bitwise_cast<I8>(code) - bias).store_unaligned(out + 128 * h + 32 * j + c);
                }
            }
    }
}


// The minimums' term of a tile: out[r][j] += Σ_blocks m_j · (d_x·Σq_x)_r (mw: per block the panel's 8 minimums;
// xs: per block the group's 4 activation sums). value = d·q + m, so Σ_k value·x̂ = Σ_blocks d·d_x·(q·q_x) + m·d_x·Σq_x.
// Block by block, the tile's 4 × 8 sums side by side (independent chains; each block's minimums loaded once for the 4
// rows), each sum over its blocks in order, as before (the same values bit for bit): wf-bench-kernels' Q4_K prefill
// (M = 128, Node, three runs alternating) took 0.85–0.95 of the time it took row by row, one chain at a time.
void add_minimums(const float* mw, const float* xs, int64_t nb, float (&out)[q8_mr][q8_nr]) {
    static_assert(q8_nr % W == 0);
    constexpr int64_t V = q8_nr / W;
    B acc[q8_mr][V];
    for (int r = 0; r < q8_mr; ++r)
        for (int64_t v = 0; v < V; ++v) acc[r][v] = B::load_unaligned(out[r] + v * W);
    for (int64_t b = 0; b < nb; ++b) {
        B m[V];
        for (int64_t v = 0; v < V; ++v) m[v] = B::load_unaligned(mw + b * q8_nr + v * W);
        for (int r = 0; r < q8_mr; ++r) {
            const B x(xs[b * q8_mr + r]);
            for (int64_t v = 0; v < V; ++v) acc[r][v] = xsimd::fma(m[v], x, acc[r][v]);
        }
    }
    for (int r = 0; r < q8_mr; ++r)
        for (int64_t v = 0; v < V; ++v) acc[r][v].store_unaligned(out[r] + v * W);
}

// One group of 4 rows (xg: its packed pairs, dg: its scales per 32) against one panel (d: its scales per 32):
// out[r][j] = Σ_blocks d_x·d_w·(q_x·q_w).
[[gnu::noinline]] void q8_tile(const int16_t* xg, const float* dg, const int16_t* q, const float* d, int64_t nb, float (&out)[q8_mr][q8_nr]) {
    constexpr int64_t BL = q8_block;
#if defined(WF_Q8_TILE)
    vi facc[q8_mr][2];
    for (int r = 0; r < q8_mr; ++r) facc[r][0] = facc[r][1] = vf_zero();
    for (int64_t b = 0; b < nb; ++b) {
        vi iacc[q8_mr][2];
        for (int r = 0; r < q8_mr; ++r) iacc[r][0] = iacc[r][1] = vi_zero();
        // the pointers themselves step (clang's wasm target runs without loop strength reduction: indices would
        // cost V8 a shift and an add per address)
        const int16_t* xp = xg + b * BL * q8_mr;
        const int16_t* const xe = xp + BL * q8_mr;
        for (const int16_t* wp = q + b * BL * q8_nr; xp != xe; xp += 2 * q8_mr, wp += 2 * q8_nr) {
            const vi w0 = vi_load(wp), w1 = vi_load(wp + 8);
            for (int r = 0; r < q8_mr; ++r) {
                const vi xs = vi_splat32(xp + 2 * r);
                iacc[r][0] = vi_dot_add(iacc[r][0], xs, w0);
                iacc[r][1] = vi_dot_add(iacc[r][1], xs, w1);
            }
        }
        scale_block(facc, iacc, d + b * q8_nr, dg + b * q8_mr);
    }
    store_facc(facc, out);
#else
    for (int r = 0; r < q8_mr; ++r)
        for (int64_t j = 0; j < q8_nr; ++j) {
            float acc = 0;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t is = 0;
                const int16_t* xb = xg + b * BL * q8_mr + 2 * r;
                const int16_t* qb = q + b * BL * q8_nr + (j / 4) * 8 + 2 * (j % 4);
                for (int64_t p = 0; p < BL / 2; ++p) is += int32_t(xb[p * 8]) * qb[p * 16] + int32_t(xb[p * 8 + 1]) * qb[p * 16 + 1];
                acc += float(is) * (d[b * q8_nr + j] * dg[b * q8_mr + r]);
            }
            out[r][j] = acc;
        }
#endif
}
// Called through a pointer that the compiler must read (volatile), which keeps the tile in the function table: that
// is what stops wasm-opt from inlining it into its one caller (it inlines such a function only when nothing else
// refers to it; clang's noinline does not reach wasm-opt, and an unused reference is dropped by the linker).
using q8_tile_fn = void (*)(const int16_t*, const float*, const int16_t*, const float*, int64_t, float (&)[q8_mr][q8_nr]);
q8_tile_fn volatile q8_tile_ptr = &q8_tile;

// --- prefill with relaxed SIMD -----------------------------------------------------------------------------------
// Where the engine runs relaxed SIMD (kernels/relaxed.h), the integer tile takes i32x4.relaxed_dot_i8x16_i7x16_add_s:
// 16 int8 products, summed 4 by 4 into 4 int32 lanes, per instruction (x86's vpdpbusd where the CPU has AVX-VNNI),
// against 8 for dot_i16x8 above, and no widening to int16. Its second operand must lie in [0, 127] (the engine's
// choice of result otherwise), so one side of every product is made 7-bit:
// - gemm_u7, the block types whose codes are small (q4_0, q5_0, q4_1, q5_1, and the K-quants but q2_K below): the
//   weights, stored as their raw unsigned codes (code + u7_offset: [0, 15], [0, 31] or [0, 63]); the activations stay
//   q8_0 as the plain tile has them, and the tile's int32 sums start at −offset·Σq_x per block of the weights'
//   scales, so they end at Σ code·q_x exactly — the plain tile's integers, the same float steps after them: the same
//   results bit for bit, at the relaxed instruction's speed.
// - gemm_q7, q8_0 (and iq4_nl, re-blocked as q8_0): the weights need all 8 bits, so the activations are quantized to
//   7 bits instead, q ∈ [−63, 63] per 32 at d = amax / 63 in f32 (quantize_q7), stored as q + 64; the panel carries
//   −64·Σw per block and column. Results move within that coarser rounding of x.
// Both packings put, per quad of k, 4 columns' (or the group's 4 rows') 4 int8 side by side in one vector: the tile
// splats a row's quad with one v128.load32_splat and multiplies it with 4 columns' quads.
// Where that instruction is not one x86 instruction (no AVX-VNNI), the tiles take their pair form (quad_step).
constexpr int q7_offset = 64;

// 4 rows of K int8 codes (row r at codes + r·K) → per quad of k the 4 rows' quads side by side (16 bytes).
[[gnu::noinline]] void pack_row_quads(const int8_t* codes, int64_t K, int8_t* out) {
    int64_t t = 0;
#if defined(__wasm_simd128__)
    // four quads of the 4 rows at a time: a 4 × 4 transpose of 32-bit lanes (it was a word at a time; this
    // packing compiled for size had made Chromium's GPT-2 q8_0 prefill 1.055× slower)
    static_assert(q8_mr == 4);
    for (; t + 4 <= K / 4; t += 4) {
        const int8_t* c = codes + t * 4;
        const v128_t r0 = wasm_v128_load(c), r1 = wasm_v128_load(c + K), r2 = wasm_v128_load(c + 2 * K), r3 = wasm_v128_load(c + 3 * K);
        const v128_t a = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), b = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
        const v128_t e = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7), f = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
        wasm_v128_store(out + t * 16, wasm_i64x2_shuffle(a, b, 0, 2));
        wasm_v128_store(out + t * 16 + 16, wasm_i64x2_shuffle(a, b, 1, 3));
        wasm_v128_store(out + t * 16 + 32, wasm_i64x2_shuffle(e, f, 0, 2));
        wasm_v128_store(out + t * 16 + 48, wasm_i64x2_shuffle(e, f, 1, 3));
    }
#endif
    WF_SCALAR_LOOP
    for (; t < K / 4; ++t)  // (in wasm never: K is whole blocks of 32)
        for (int64_t r = 0; r < q8_mr; ++r) std::memcpy(out + (t * q8_mr + r) * 4, codes + r * K + t * 4, 4);
}

// Rows of x quantized per 32 and packed by groups of 4 rows for the relaxed tiles: per group and block, 8 quads × 4
// rows × 4 bytes. seven_bit (gemm_q7): quantize_q7, stored q + 64. Otherwise (gemm_u7): quantize_q8_0, as the plain
// tile does, stored as is, with per block −offset·Σq (corr: offset, the weights' u7_offset) and d·Σq (s: the
// minimums' term, see add_minimums).
// The codes of a u7 type as its packings unpack them (q − offset: to_codes32, q45_0_column, k45_codes, q6_codes,
// to_codes16), + this: its raw unsigned codes, in [0, 15] (q4_0, q4_1, q3_K: [0, 7], q4_K), [0, 31] (q5_0, q5_1,
// q5_K) or [0, 63] (q6_K).
int u7_offset(dtype t) {
    switch (t) {
    case dtype::q4_0: return 8;
    case dtype::q5_0: return 16;
    case dtype::q3_k: return 4;
    case dtype::q6_k: return 32;
    default: return 0;
    }
}

// The pair form's run (quad_step): quads of codes whose int16 sums hold, by the raw codes' range.
int64_t u7_run(dtype t) {
    switch (t) {
    case dtype::q5_0:
    case dtype::q5_1:
    case dtype::q5_k: return 4;
    case dtype::q6_k: return 2;
    default: return 8;
    }
}

struct quad_row_groups {
    std::vector<int8_t> q;
    std::vector<float> d, s;  // per group and block: the 4 rows' scales (0 for a padding row), d·Σq
    std::vector<int32_t> corr;  // per group and block: the 4 rows' −offset·Σq
    std::vector<int8_t> codes;
    std::vector<float> scales;
    std::vector<block_q8_0> blocks;
    void set(const float* x, int64_t M, int64_t ldx, int64_t K, bool seven_bit, int offset = 0) {
        const int64_t nb = K / q8_block, groups = (M + q8_mr - 1) / q8_mr;
        codes.resize(size_t(q8_mr * K));
        scales.resize(size_t(q8_mr * nb));
        blocks.resize(size_t(nb));
        q.resize(size_t(groups * q8_mr * K));
        d.resize(size_t(groups * nb * q8_mr));
        s.resize(seven_bit ? 0 : d.size());
        corr.resize(seven_bit ? 0 : size_t(groups * nb * q8_mr));
        for (int64_t g = 0; g < groups; ++g) {
            const int64_t rows = std::min(q8_mr, M - g * q8_mr);
            for (int64_t r = 0; r < q8_mr; ++r) {
                int8_t* c = codes.data() + r * K;
                float* sc = scales.data() + r * nb;
                if (r >= rows) {
                    std::fill(c, c + K, int8_t(seven_bit ? q7_offset : 0)), std::fill_n(sc, nb, 0.0f);
                } else if (seven_bit) {
                    quantize_q7(x + (g * q8_mr + r) * ldx, K, c, sc);
                    for (int64_t k = 0; k < K; ++k) c[k] = int8_t(c[k] + q7_offset);  // [1, 127]
                } else {
                    quantize_q8_0(x + (g * q8_mr + r) * ldx, K, blocks.data());
                    for (int64_t b = 0; b < nb; ++b) sc[b] = f16_to_f32(blocks[size_t(b)].d), std::memcpy(c + b * q8_block, blocks[size_t(b)].q, q8_block);
                }
            }
            pack_row_quads(codes.data(), K, q.data() + g * q8_mr * K);
            // per row and block: the scale, and for gemm_u7 −offset·Σq and d·Σq (M·K additions against the tile's M·N·K:
            // kept one step a turn, for the engine's size)
            WF_NO_UNROLL
            for (int64_t r = 0; r < q8_mr; ++r)
                WF_NO_UNROLL
                for (int64_t b = 0; b < nb; ++b) {
                    const size_t at = size_t((g * nb + b) * q8_mr + r);
                    d[at] = scales[size_t(r * nb + b)];
                    if (seven_bit) continue;
                    const int32_t v = block_sum(codes.data() + r * K + b * q8_block);
                    corr[at] = -offset * v;
                    s[at] = d[at] * float(v);
                }
        }
    }
};

// Column j's codes k = 4t … 4t + 3 (one 32-bit word) in the relaxed tiles' panels: per quad of k, 2 vectors of 16
// bytes, columns 0–3, then 4–7.
inline void put_quad(int8_t* panel, int64_t t, int64_t j, uint32_t v) { std::memcpy(panel + t * 32 + (j / 4) * 16 + (j % 4) * 4, &v, 4); }

// A tile's results for a group's rows and a panel's columns: y = out + bias.
inline void store_rows(const float (&out)[q8_mr][q8_nr], int64_t rows, int64_t cols, const float* bias, float* y, int64_t ldy) {
    WF_NO_UNROLL
    for (int64_t r = 0; r < rows; ++r)
        WF_SCALAR_LOOP
        for (int64_t j = 0; j < cols; ++j) y[r * ldy + j] = out[r][j] + (bias ? bias[j] : 0.0f);
}
// The same, W at a time where the panel is whole (+ 0 without a bias, as store_rows: the same values bit for bit).
// Out of line: gemm_q8 and gemm_k share it.
[[gnu::noinline]] void store_tile(const float (&out)[q8_mr][q8_nr], int64_t rows, int64_t cols, const float* bias, float* y, int64_t ldy) {
    if constexpr (q8_nr % W == 0) {
        if (cols == q8_nr) {
            WF_NO_UNROLL
            for (int64_t j = 0; j < q8_nr; j += W) {
                const B bj = bias ? B::load_unaligned(bias + j) : B(0.0f);
                WF_NO_UNROLL
                for (int64_t r = 0; r < rows; ++r) (B::load_unaligned(out[r] + j) + bj).store_unaligned(y + r * ldy + j);
            }
            return;
        }
    }
    store_rows(out, rows, cols, bias, y, ldy);
}

// Columns n … n + cols − 1 (cols ≤ 8; missing ones are zero) of q8_0 rows as the tile reads them: per block, 8 quads
// × 2 vectors of 16 int8 (columns 0–3, then 4–7); per block the 8 columns' −64·Σw (corr) and scales (d).
void pack_q7_panel(const matrix_view& Wm, int64_t n, int64_t cols, int8_t* q, int32_t* corr, float* d) {
    const int64_t nb = Wm.n_cols / q8_block;
    for (int64_t j = 0; j < q8_nr; ++j) {
        const q8_walk row = j < cols ? q8_walk(Wm, n + j) : q8_walk();
        for (int64_t b = 0; b < nb; ++b) {
            int8_t w[q8_block] = {};
            if (j < cols) std::memcpy(w, row.codes + row.code_step * b, q8_block);
            d[b * q8_nr + j] = j < cols ? half1(row.scale + row.scale_step * b) : 0.0f;
            corr[b * q8_nr + j] = -q7_offset * block_sum(w);
            for (int64_t t = 0; t < q8_block / 4; ++t) {
                uint32_t v;
                std::memcpy(&v, w + t * 4, 4);
                put_quad(q, b * 8 + t, j, v);
            }
        }
    }
}

// One group of 4 rows (xg: its packed quads, dg: its scales per 32) against one panel (q: its quads, d: its scales
// per 32): out[r][j] = Σ_blocks d_x·d_w·(q_x·q_w). x7 (gemm_q7): x is the 7-bit operand, corr per block and column;
// else (gemm_u7) W is, corr per block and row.
using quad_tile_fn = void (*)(const int8_t*, const float*, const int8_t*, const int32_t*, const float*, int64_t, int64_t, float (&)[q8_mr][q8_nr]);

// The scalar twin of the layout (native builds, and wasm without relaxed SIMD, which never take this path but test it:
// compiled for size).
template <bool x7>
WF_COLD void quad_tile_scalar(const int8_t* xg, const float* dg, const int8_t* q, const int32_t* corr, const float* d, int64_t nb, int64_t,
                              float (&out)[q8_mr][q8_nr]) {
    for (int r = 0; r < q8_mr; ++r)
        for (int64_t j = 0; j < q8_nr; ++j) {
            float acc = 0;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t is = x7 ? corr[b * q8_nr + j] : corr[b * q8_mr + r];
                for (int64_t t = b * q8_block / 4; t < (b + 1) * q8_block / 4; ++t)
                    for (int i = 0; i < 4; ++i) {
                        const int8_t w = q[t * 32 + (j / 4) * 16 + (j % 4) * 4 + i], xv = xg[(t * q8_mr + r) * 4 + i];
                        is += x7 ? int32_t(w) * int32_t(uint8_t(xv)) : int32_t(uint8_t(w)) * int32_t(xv);
                    }
                acc += float(is) * (d[b * q8_nr + j] * dg[b * q8_mr + r]);
            }
            out[r][j] = acc;
        }
}

#if defined(__wasm_simd128__)
inline vi widen_add(vi acc, vi pairs) { return wasm_i32x4_add(acc, wasm_i32x4_extadd_pairwise_i16x8(pairs)); }

// One quad of k of the relaxed tiles' products into 4 rows × 8 columns of sums. x7: x's quads are the 7-bit operand
// (gemm_q7), else W's codes (gemm_u7). Two forms:
// - add (pairs false): i32x4.relaxed_dot_i8x16_i7x16_add_s into int32 sums — one instruction where x86 has AVX-VNNI
//   (vpdpbusd), five elsewhere (V8: the ones it multiplies by made anew, pmaddubsw, pmaddwd by them, paddd);
// - pairs: i16x8.relaxed_dot_i8x16_i7x16_s, one pmaddubsw on every x86. gemm_q7's pairs (8-bit weights: up to
//   2·128·127) are widened into the int32 sums every quad (widen_add: i32x4.extadd_pairwise_i16x8_s, a pmaddwd by
//   ones, then paddd); gemm_u7's added up in int16 over runs of quads as long as the sums hold (u7_run: 8 quads of
//   codes in [0, 15], |Σ| ≤ 8·2·15·127 < 2^15; 4 of [0, 31]; 2 of [0, 63]), each run widened once.
template <bool x7, bool pairs>
[[gnu::always_inline]] inline void quad_step(const int8_t*& xp, const int8_t*& wp, vi (&acc)[q8_mr][2]) {
    const vi w0 = vi_load(wp), w1 = vi_load(wp + 16);
    for (int r = 0; r < q8_mr; ++r) {
        const vi xs = vi_splat32(xp + 4 * r);
        if constexpr (!pairs) {
            acc[r][0] = x7 ? wf_relaxed_dot_i8x16_i7x16_add_s(w0, xs, acc[r][0]) : wf_relaxed_dot_i8x16_i7x16_add_s(xs, w0, acc[r][0]);
            acc[r][1] = x7 ? wf_relaxed_dot_i8x16_i7x16_add_s(w1, xs, acc[r][1]) : wf_relaxed_dot_i8x16_i7x16_add_s(xs, w1, acc[r][1]);
        } else if constexpr (x7) {
            acc[r][0] = widen_add(acc[r][0], wf_relaxed_dot_i8x16_i7x16_s(w0, xs));
            acc[r][1] = widen_add(acc[r][1], wf_relaxed_dot_i8x16_i7x16_s(w1, xs));
        } else {
            acc[r][0] = wasm_i16x8_add(acc[r][0], wf_relaxed_dot_i8x16_i7x16_s(xs, w0));
            acc[r][1] = wasm_i16x8_add(acc[r][1], wf_relaxed_dot_i8x16_i7x16_s(xs, w1));
        }
    }
    xp += 4 * q8_mr, wp += 4 * q8_nr;
}

// The int32 sums of the quads [xp, xe) (gemm_u7: a block; k_tile: a group) added to acc, in either form; gemm_u7's
// pair form in int16 runs of `run` quads.
template <bool x7, bool pairs>
[[gnu::always_inline]] inline void quad_run(const int8_t*& xp, const int8_t*& wp, const int8_t* xe, vi (&acc)[q8_mr][2], int64_t run) {
    if constexpr (pairs && !x7) {
        while (xp != xe) {
            vi s16[q8_mr][2];
            for (int r = 0; r < q8_mr; ++r) s16[r][0] = s16[r][1] = vi_zero();
            for (const int8_t* const re = xp + run * 4 * q8_mr; xp != re;) quad_step<false, true>(xp, wp, s16);
            for (int r = 0; r < q8_mr; ++r) acc[r][0] = widen_add(acc[r][0], s16[r][0]), acc[r][1] = widen_add(acc[r][1], s16[r][1]);
        }
    } else {
        (void)run;
        while (xp != xe) quad_step<x7, pairs>(xp, wp, acc);
    }
}

template <bool x7, bool pairs>
[[gnu::noinline]] void quad_tile_relaxed(const int8_t* xg, const float* dg, const int8_t* q, const int32_t* corr, const float* d, int64_t nb,
                                         int64_t run, float (&out)[q8_mr][q8_nr]) {
    vi facc[q8_mr][2];
    for (int r = 0; r < q8_mr; ++r) facc[r][0] = facc[r][1] = vf_zero();
    const int8_t* xp = xg;
    const int8_t* wp = q;
    for (int64_t b = 0; b < nb; ++b) {
        vi iacc[q8_mr][2];
        if constexpr (x7) {
            const vi c0 = vi_load(corr + b * q8_nr), c1 = vi_load(corr + b * q8_nr + 4);
            for (int r = 0; r < q8_mr; ++r) iacc[r][0] = c0, iacc[r][1] = c1;
        } else {
            for (int r = 0; r < q8_mr; ++r) iacc[r][0] = iacc[r][1] = vi_splat32(corr + b * q8_mr + r);
        }
        quad_run<x7, pairs>(xp, wp, xp + q8_block * q8_mr, iacc, run);
        scale_block(facc, iacc, d + b * q8_nr, dg + b * q8_mr);
    }
    store_facc(facc, out);
}
// through pointers for the reason q8_tile_ptr gives
quad_tile_fn volatile q7_tile_relaxed_ptr = &quad_tile_relaxed<true, false>, u7_tile_relaxed_ptr = &quad_tile_relaxed<false, false>,
                      q7_tile_pairs_ptr = &quad_tile_relaxed<true, true>, u7_tile_pairs_ptr = &quad_tile_relaxed<false, true>;
#endif


// Column j of gemm_u7's panel: each code + offset (u7_offset), a quad of k at a time (put_quad), worked on as one
// 32-bit word with no carry or borrow between its bytes.
// K codes in [−offset, 63 − offset] (null: a missing column, zero codes): code + offset = ((code + 128) mod 256) −
// (128 − offset), byte by byte.
void pack_u7_column(const int8_t* q, int64_t K, int64_t j, int8_t* panel, int offset) {
    for (int64_t t = 0; t < K / 4; ++t) {
        uint32_t v = 0;
        if (q) std::memcpy(&v, q + 4 * t, 4);
        put_quad(panel, t, j, (v ^ 0x80808080u) - uint32_t(128 - offset) * 0x01010101u);
    }
}

// q4_0 and q5_0 rows straight from their blocks (per block its scale in d): byte i of qs holds elements i (low nibble)
// and 16 + i (high), q5_0's fifth bit of element e is bit e of qh: the raw codes, as gemm_u7 stores them.
void q45_0_column(const uint8_t* row, int64_t K, bool five, int64_t j, int8_t* panel, float* d) {
    const int64_t bytes = five ? 22 : 18;
    // 4 bits n → byte i gets 16 where bit i of n is set (n·0x204081 puts bit i at bit 8i: the 4 copies do not overlap)
    const auto spread = [](uint32_t n) { return ((n * 0x00204081u) & 0x01010101u) << 4; };
    for (int64_t b = 0; b < K / q8_block; ++b) {
        const uint8_t* blk = row + b * bytes;
        const uint8_t* qs = blk + (five ? 6 : 2);
        uint32_t qh = 0;
        if (five) std::memcpy(&qh, blk + 2, 4);
        d[b] = half1(blk);
        for (int64_t t = 0; t < 4; ++t) {
            uint32_t w;
            std::memcpy(&w, qs + 4 * t, 4);
            uint32_t lo = w & 0x0F0F0F0Fu, hi = (w >> 4) & 0x0F0F0F0Fu;
            if (five) lo |= spread(qh >> (4 * t) & 0xF), hi |= spread(qh >> (16 + 4 * t) & 0xF);
            put_quad(panel, b * 8 + t, j, lo);
            put_quad(panel, b * 8 + 4 + t, j, hi);
        }
    }
}

// --- the K-quants' prefill: integer sums over whole super-blocks ------------------------------------------------
// q3_K, q4_K, q5_K and q6_K from 16 rows on, against q8_K activations as their decode (gemv_quant) and ggml take them.
// Per super-block of 256 values, value = d·sc_g·(q − offset) − dmin·m_g per group g of 32 (q4_K, q5_K) or 16 (q3_K,
// q6_K) values, sc_g and m_g whole numbers (k_scales). One int32 sum runs over the whole super-block,
//   I = Σ_g sc_g·Σ (q − offset)·q_x   (|I| ≤ 256·4096·128 < 2^28),   Mn = Σ_g m_g·Σ q_x,
// and the super-block ends with gemv_quant's float steps, in its order: acc = acc + (float(I)·(d·d_x) − float(Mn)·
// (dmin·d_x)) — prefill computes decode's values bit for bit, whichever form of k_tile runs:
// - SIMD128: sc_g·(q − offset) is a whole number of at most 4096 in size (q6_K: 128·32), so the panel holds it as
//   int16 and i32x4.dot_i16x8 sums it against x's pairs, as the q8_0 tile does. Against the tile of codes with float
//   scales per 32 or 16 on q8_0 activations that it replaced (the scales applied in f32 inside the sum, the minimums
//   per 32 in f32 after it), GPT-2 small's 128-token q4_k prefill in Node took 0.956 of the time, SmolLM2-135M's
//   shape in Q4_K_M 0.986 (bench/ab-builds.mjs) — the tile itself no faster: its time is i32x4.dot_i16x8's alone.
// - relaxed SIMD (k7, gemm_u7): i32x4.relaxed_dot_i8x16_i7x16_add_s on the raw codes (gemm_u7's panel: code +
//   u7_offset) from −offset·Σ q_x per group, each group's sum times its 4 columns' sc_g in int32 (i32x4.mul) into I;
//   in the pair form (quad_step) each run's int16 sums are widened and scaled at once, by i32x4.dot_i16x8 against
//   the columns' sc_g in pairs (Chromium on Zen 4: GPT-2 small's 128-token q4_k prompt 0.90 of the time,
//   SmolLM2-135M's Q4_K_M 0.81).
// Mn in both from 4 pairs of minimum codes against 4 pairs of x's sums per 32 (i32x4.dot_i16x8).

// Rows of x quantized to q8_K (quantize_q8_K, as gemv_quant) by groups of 4 rows. d, per group and super-block the 4
// rows' d (0 for a padding row); with minimums, s: per group, super-block and pair of groups of 32, the 4 rows' pairs
// of sums (Σ q over 32 values: at most 32·128, an int16). For the SIMD128 tile (gs = 0): q, per group and pair of k
// the 4 rows' pairs as q8_row_groups packs them. For the relaxed one (gs = 16 or 32, the weights' group): q8, per
// group and quad of k the 4 rows' quads (pack_row_quads); corr, per group, super-block and weights' group the 4 rows'
// −64·Σ q.
struct k_row_groups {
    std::vector<int16_t> q, s;
    std::vector<int8_t> q8, codes;
    std::vector<int32_t> corr;
    std::vector<float> d;
    std::vector<block_q8_K> blocks;
    // (compiled for size, as k_panel's steps: their loops are per super-block and row or column, the work per value
    // is in the functions they call)
    [[gnu::noinline]] WF_COLD void set(const float* x, int64_t M, int64_t ldx, int64_t K, bool sums, int64_t gs, int offset) {
        const int64_t nsb = K / qk_k, groups = (M + q8_mr - 1) / q8_mr;
        blocks.resize(size_t(q8_mr * nsb));
        if (gs) q8.resize(size_t(groups * q8_mr * K)), codes.resize(size_t(q8_mr * K)), corr.resize(size_t(groups * q8_mr * (K / gs)));
        else q.resize(size_t(groups * q8_mr * K));
        d.resize(size_t(groups * nsb * q8_mr));
        s.resize(sums ? size_t(groups * nsb * 4 * 2 * q8_mr) : 0);
        for (int64_t g = 0; g < groups; ++g) {
            const int64_t rows = std::min(q8_mr, M - g * q8_mr);
            for (int64_t r = 0; r < rows; ++r) quantize_q8_K(x + (g * q8_mr + r) * ldx, K, blocks.data() + r * nsb);
            // (the loops here and in k_panel one step a turn, for the size budget: M·K or N·K work per call against M·N·K)
            WF_NO_UNROLL
            for (int64_t sb = 0; sb < nsb; ++sb) {
                const block_q8_K* blk[q8_mr];
                WF_SCALAR_LOOP
                for (int64_t r = 0; r < q8_mr; ++r) {
                    blk[r] = r < rows ? &blocks[size_t(r * nsb + sb)] : nullptr;
                    d[size_t((g * nsb + sb) * q8_mr + r)] = blk[r] ? blk[r]->d : 0.0f;
                    if (gs) std::memcpy(codes.data() + r * K + sb * qk_k, blk[r] ? blk[r]->qs : kZeros, qk_k);
                }
                if (gs) {
                    WF_SCALAR_LOOP
                    for (int64_t e = 0; e < qk_k / gs * q8_mr; ++e) {  // e = (group, row): −offset × its sums of 16
                        const int64_t grp = e / q8_mr, r = e % q8_mr, per = gs / 16;
                        int32_t sum = 0;
                        for (int64_t i = 0; blk[r] && i < per; ++i) sum += blk[r]->bsums[grp * per + i];
                        corr[size_t((g * (K / gs) + sb * (qk_k / gs)) * q8_mr + e)] = -offset * sum;
                    }
                } else {
                    WF_NO_UNROLL
                    for (int64_t c = 0; c < qk_k / q8_block; ++c) {
                        const int8_t* src[4];
                        WF_SCALAR_LOOP
                        for (int64_t r = 0; r < q8_mr; ++r) src[r] = blk[r] ? blk[r]->qs + c * q8_block : nullptr;
                        interleave_k4(src, q.data() + (g * K + sb * qk_k + c * q8_block) * q8_mr, 2 * q8_mr, nullptr);
                    }
                }
                if (!sums) continue;
                WF_SCALAR_LOOP
                for (int64_t e = 0; e < 4 * q8_mr * 2; ++e) {  // e = (p, r, i): groups 2p + i of 32, bsums 4p + 2i and + 1
                    const int64_t p = e / (2 * q8_mr), r = e / 2 % q8_mr, i = e % 2;
                    s[size_t((g * nsb + sb) * 4 * 8 + e)] = blk[r] ? int16_t(blk[r]->bsums[4 * p + 2 * i] + blk[r]->bsums[4 * p + 2 * i + 1]) : int16_t(0);
                }
            }
            if (gs) pack_row_quads(codes.data(), K, q8.data() + g * q8_mr * K);
        }
    }
    static constexpr int8_t kZeros[qk_k] = {};
};

// Columns n … n + cols − 1 (cols ≤ 8; missing ones are zeros) of a K-quant matrix as the tiles read them. decode:
// each column's codes (q − offset: the vector decoders k45_codes and q6_codes, q3_K's to_codes16), its whole-number
// scales and minimums (k_scales); per super-block the 8 columns' d and dmin; with minimums, mq: per super-block and
// pair of groups of 32 the 8 columns' pairs of minimum codes, 2 vectors (columns 0–3, 4–7). Then for k_tile (pack16)
// q: per pair of k 2 vectors of 8 int16 (columns 0–3, then 4–7) holding sc_g·(q − offset), pack_q8_panel's order;
// for the relaxed tile (pack_quads) q8: gemm_u7's panel of the raw codes, and sc32: per super-block and group the 8 columns'
// sc_g as int32.
struct k_panel {
    int16_t *q, *mq, *sc, *mn;
    float *d, *dmin, *cd, *cdmin, *fd, *fm;
    int8_t *codes, *q8;
    int32_t* sc32;
    int64_t K = 0, gs = 0;
    std::vector<int16_t> i16;
    std::vector<float> f32;
    std::vector<int8_t> i8;
    std::vector<int32_t> i32;
    [[gnu::noinline]] WF_COLD void decode(const matrix_view& W, int64_t n, int64_t cols) {
        const dtype t = W.type;
        K = W.n_cols, gs = t == dtype::q4_k || t == dtype::q5_k ? 32 : 16;
        const int64_t nsb = K / qk_k, ng = K / gs;
        const bool mins = gs == 32;
        i16.resize(size_t(q8_nr * K + nsb * 4 * 2 * 8 + 2 * q8_nr * ng));
        q = i16.data(), mq = q + q8_nr * K, sc = mq + nsb * 4 * 2 * 8, mn = sc + q8_nr * ng;
        f32.resize(size_t(4 * q8_nr * nsb + 2 * (K / 16)));
        d = f32.data(), dmin = d + q8_nr * nsb, cd = dmin + q8_nr * nsb, cdmin = cd + q8_nr * nsb, fd = cdmin + q8_nr * nsb, fm = fd + K / 16;
        i8.resize(size_t(2 * q8_nr * K));
        codes = i8.data(), q8 = codes + q8_nr * K;
        i32.resize(size_t(q8_nr * ng));
        sc32 = i32.data();
        const int64_t bb = traits(t).block_bytes;
        using decoder = void (*)(const uint8_t*, int8_t*, float*, float*, int64_t);
        const decoder decode = t == dtype::q4_k ? &k45_codes<block_q4_K, false>
                               : t == dtype::q5_k ? &k45_codes<block_q5_K, true>
                               : t == dtype::q6_k ? decoder([](const uint8_t* r, int8_t* c, float* dd, float*, int64_t k) { q6_codes(r, c, dd, k); })
                                                  : decoder([](const uint8_t* r, int8_t* c, float* dd, float*, int64_t k) { q3_K_to_codes16(r, c, dd, k); });
        WF_NO_UNROLL
        for (int64_t j = 0; j < cols; ++j) {
            const uint8_t* row = row_as_stored(W, n + j);
            decode(row, codes + j * K, fd, fm, K);
            WF_NO_UNROLL
            for (int64_t sb = 0; sb < nsb; ++sb)
                k_scales(t, row + sb * bb, sc + j * ng + sb * (qk_k / gs), mn + j * ng + sb * (qk_k / gs), cd[j * nsb + sb], cdmin[j * nsb + sb]);
        }
        panel_values(cd, nsb, cols, d);
        panel_values(cdmin, nsb, cols, dmin);
        if (mins) {
            WF_SCALAR_LOOP
            for (int64_t e = 0; e < nsb * 4 * 2 * 8; ++e) {  // e = (sb, p, half, j, i): column 4·half + j's min code of group 2p + i
                const int64_t sb = e / 64, p = e / 16 % 4, col = e / 8 % 2 * 4 + e / 2 % 4, i = e % 2;
                mq[e] = col < cols ? mn[col * ng + sb * 8 + 2 * p + i] : int16_t(0);
            }
        }
    }
    [[gnu::noinline]] WF_COLD void pack16(int64_t cols) {
        const int64_t ng = K / gs, per = q8_block / gs;  // scales per block of 32: 1 or 2
        WF_NO_UNROLL
        for (int64_t b = 0; b < K / q8_block; ++b)
            WF_NO_UNROLL
            for (int64_t half = 0; half < 2; ++half) {
                const int8_t* src[4];
                int16_t s[8];
                WF_SCALAR_LOOP
                for (int64_t j = 0; j < 4; ++j) {
                    const int64_t col = 4 * half + j;
                    const int16_t* cs = sc + col * ng + b * per;  // the scales of its values 0–15 and 16–31
                    src[j] = col < cols ? codes + col * K + b * q8_block : nullptr;
                    s[j] = col < cols ? cs[0] : int16_t(0);
                    s[4 + j] = col < cols ? cs[per - 1] : int16_t(0);
                }
                interleave_k4(src, q + b * q8_block * q8_nr + half * 8, 2 * q8_nr, s);
            }
    }
    [[gnu::noinline]] WF_COLD void pack_quads(int64_t cols, int offset) {
        const int64_t ng = K / gs;
        WF_NO_UNROLL
        for (int64_t j = 0; j < q8_nr; ++j) pack_u7_column(j < cols ? codes + j * K : nullptr, K, j, q8, offset);
        WF_SCALAR_LOOP
        for (int64_t e = 0; e < ng * q8_nr; ++e) sc32[e] = e % q8_nr < cols ? sc[e % q8_nr * ng + e / q8_nr] : 0;
    }
};

// One group of 4 rows (xg: its packed pairs, dg: its d per super-block, sg: its pairs of sums per 32) against one
// panel (k_panel's q, d, dmin, mq): out[r][j] = Σ_super-blocks d·d_x·I − dmin·d_x·Mn, in gemv_quant's order; the
// minimums' term where sg is given (q4_K, q5_K).
struct k_tile_args {
    const void* x;  // the group's pairs; k7: its quads
    const float* dx;
    const int16_t* sx;  // null: no minimums
    const int32_t* corr;  // k7
    const void* w;  // the panel's int16 pairs; k7: its quads
    const int32_t* sc;  // k7
    const float *d, *dmin;
    const int16_t* mq;
    int64_t nsb, gs;
    bool k7;  // relaxed SIMD's form (quads): k_tile's relaxed loop, or k7_tile_scalar
    int64_t run;  // k7: 0, the add form; else quad_step's pair form in int16 runs of this many quads (u7_run)
    bool offset;  // k7: the codes carry an offset (u7_offset: q3_K, q6_K), so corr is not all zeros
};

#if defined(WF_Q8_TILE)
// The super-block's end, shared by both tiles: Mn from the minimums' pairs where there are any, then the float steps.
[[gnu::always_inline]] inline void k_end(vi (&facc)[q8_mr][2], const vi (&iacc)[q8_mr][2], const k_tile_args& a, int64_t sb) {
    vi macc[q8_mr][2];  // Mn: 0 without minimums (and dmin 0: the same steps, the twin's values, NaN where it has them)
    for (int r = 0; r < q8_mr; ++r) macc[r][0] = macc[r][1] = vi_zero();
    if (a.sx) {
        WF_NO_UNROLL
        for (int p = 0; p < 4; ++p) {
            const vi w0 = vi_load(a.mq + (sb * 4 + p) * 16), w1 = vi_load(a.mq + (sb * 4 + p) * 16 + 8);
            for (int r = 0; r < q8_mr; ++r) {
                const vi xs = vi_splat32(a.sx + (sb * 4 + p) * 8 + 2 * r);
                macc[r][0] = vi_dot_add(macc[r][0], xs, w0);
                macc[r][1] = vi_dot_add(macc[r][1], xs, w1);
            }
        }
    }
    const vi d0 = vi_load(a.d + sb * q8_nr), d1 = vi_load(a.d + sb * q8_nr + 4);
    const vi m0 = vi_load(a.dmin + sb * q8_nr), m1 = vi_load(a.dmin + sb * q8_nr + 4);
    const float* dx = a.dx + sb * q8_mr;
    for (int r = 0; r < q8_mr; ++r) {
        facc[r][0] = vf_add(facc[r][0], vf_sub(vf_scaled(iacc[r][0], vf_mul(d0, dx[r])), vf_scaled(macc[r][0], vf_mul(m0, dx[r]))));
        facc[r][1] = vf_add(facc[r][1], vf_sub(vf_scaled(iacc[r][1], vf_mul(d1, dx[r])), vf_scaled(macc[r][1], vf_mul(m1, dx[r]))));
    }
}
#endif

// The scalar twin of both tiles' float steps, from the integer sums of (r, j) for super-block sb.
inline float k_end1(float acc, int32_t I, const k_tile_args& a, int64_t sb, int r, int64_t j) {
    int32_t Mn = 0;
    for (int64_t p = 0; a.sx && p < 4; ++p) {
        const int16_t* xs = a.sx + (sb * 4 + p) * 8 + 2 * r;
        const int16_t* ms = a.mq + (sb * 4 + p) * 16 + (j / 4) * 8 + 2 * (j % 4);
        Mn += int32_t(xs[0]) * ms[0] + int32_t(xs[1]) * ms[1];
    }
    const float dx = a.dx[sb * q8_mr + r];
    return acc + (float(I) * (a.d[sb * q8_nr + j] * dx) - float(Mn) * (a.dmin[sb * q8_nr + j] * dx));
}

// Both forms in one function (k7: relaxed SIMD's), their super-block's end (k_end) once: the engine's size (as two
// functions, 0.28 KB more gzipped; in Chromium their q4_k prefill measured 0.98× the time, within the rounds' spread).
// Natively k7 never comes here (instruction_tiles gives the twin).
[[gnu::noinline]] void k_tile(const k_tile_args& a, float (&out)[q8_mr][q8_nr]) {
#if defined(WF_Q8_TILE)
    vi facc[q8_mr][2];
    for (int r = 0; r < q8_mr; ++r) facc[r][0] = facc[r][1] = vf_zero();
    const int16_t* xp = static_cast<const int16_t*>(a.x);
    const int16_t* wp = static_cast<const int16_t*>(a.w);
#if defined(__wasm_simd128__)
    const int8_t* xq = static_cast<const int8_t*>(a.x);
    const int8_t* wq = static_cast<const int8_t*>(a.w);
    const int32_t* corr = a.corr;
    const int32_t* sc = a.sc;
    const int64_t ng = a.k7 ? qk_k / a.gs : 0;
#endif
    for (int64_t sb = 0; sb < a.nsb; ++sb) {
        vi iacc[q8_mr][2];
        for (int r = 0; r < q8_mr; ++r) iacc[r][0] = iacc[r][1] = vi_zero();
        if (!a.k7) {
            for (const int16_t* const xe = xp + qk_k * q8_mr; xp != xe; xp += 2 * q8_mr, wp += 2 * q8_nr) {
                const vi w0 = vi_load(wp), w1 = vi_load(wp + 8);
                for (int r = 0; r < q8_mr; ++r) {
                    const vi xs = vi_splat32(xp + 2 * r);
                    iacc[r][0] = vi_dot_add(iacc[r][0], xs, w0);
                    iacc[r][1] = vi_dot_add(iacc[r][1], xs, w1);
                }
            }
        } else {
#if defined(__wasm_simd128__)
            WF_NO_UNROLL
            for (int64_t g = 0; g < ng; ++g, corr += q8_mr, sc += q8_nr) {
                const vi c0 = vi_load(sc), c1 = vi_load(sc + 4);
                if (a.run) {
                    // the pair form: each run's int16 pair sums (a run lies within one group) widened and scaled by
                    // the group's sc_g in one i32x4.dot_i16x8 against [sc_j, sc_j] per column j — in place of a
                    // widening by ones into int32 sums, and their i32x4.mul by sc_g after the group
                    const vi p0 = wasm_i16x8_shuffle(c0, c0, 0, 0, 2, 2, 4, 4, 6, 6);
                    const vi p1 = wasm_i16x8_shuffle(c1, c1, 0, 0, 2, 2, 4, 4, 6, 6);
                    if (a.offset)
                        for (int r = 0; r < q8_mr; ++r) {
                            const vi cr = vi_splat32(corr + r);
                            iacc[r][0] = wasm_i32x4_add(iacc[r][0], wasm_i32x4_mul(cr, c0));
                            iacc[r][1] = wasm_i32x4_add(iacc[r][1], wasm_i32x4_mul(cr, c1));
                        }
                    for (const int8_t* const ge = xq + a.gs * q8_mr; xq != ge;) {
                        vi s16[q8_mr][2];
                        for (int r = 0; r < q8_mr; ++r) s16[r][0] = s16[r][1] = vi_zero();
                        for (const int8_t* const re = xq + a.run * 4 * q8_mr; xq != re;) quad_step<false, true>(xq, wq, s16);
                        for (int r = 0; r < q8_mr; ++r) {
                            iacc[r][0] = vi_dot_add(iacc[r][0], s16[r][0], p0);
                            iacc[r][1] = vi_dot_add(iacc[r][1], s16[r][1], p1);
                        }
                    }
                } else {
                    vi s[q8_mr][2];
                    for (int r = 0; r < q8_mr; ++r) s[r][0] = s[r][1] = vi_splat32(corr + r);
                    quad_run<false, false>(xq, wq, xq + a.gs * q8_mr, s, 0);
                    for (int r = 0; r < q8_mr; ++r) {
                        iacc[r][0] = wasm_i32x4_add(iacc[r][0], wasm_i32x4_mul(s[r][0], c0));
                        iacc[r][1] = wasm_i32x4_add(iacc[r][1], wasm_i32x4_mul(s[r][1], c1));
                    }
                }
            }
#endif
        }
        k_end(facc, iacc, a, sb);
    }
    store_facc(facc, out);
#else  // (natively the twin stands in for k7)
    const int16_t* xg = static_cast<const int16_t*>(a.x);
    const int16_t* q = static_cast<const int16_t*>(a.w);
    for (int r = 0; r < q8_mr; ++r)
        for (int64_t j = 0; j < q8_nr; ++j) {
            float acc = 0;
            for (int64_t sb = 0; sb < a.nsb; ++sb) {
                int32_t I = 0;
                const int16_t* xb = xg + sb * qk_k * q8_mr + 2 * r;
                const int16_t* qb = q + sb * qk_k * q8_nr + (j / 4) * 8 + 2 * (j % 4);
                for (int64_t p = 0; p < qk_k / 2; ++p) I += int32_t(xb[p * 8]) * qb[p * 16] + int32_t(xb[p * 8 + 1]) * qb[p * 16 + 1];
                acc = k_end1(acc, I, a, sb, r, j);
            }
            out[r][j] = acc;
        }
#endif
}

// The relaxed form's scalar twin (native builds, and wasm without relaxed SIMD, which never take this path but test it:
// compiled for size).
WF_COLD void k7_tile_scalar(const k_tile_args& a, float (&out)[q8_mr][q8_nr]) {
    const int8_t* xg = static_cast<const int8_t*>(a.x);
    const int8_t* q = static_cast<const int8_t*>(a.w);
    const int64_t ng = qk_k / a.gs;  // groups per super-block
    for (int r = 0; r < q8_mr; ++r)
        for (int64_t j = 0; j < q8_nr; ++j) {
            float acc = 0;
            for (int64_t sb = 0; sb < a.nsb; ++sb) {
                int32_t I = 0;
                for (int64_t g = 0; g < ng; ++g) {
                    const int64_t grp = sb * ng + g;
                    int32_t S = a.corr[grp * q8_mr + r];
                    for (int64_t t = grp * a.gs / 4; t < (grp + 1) * a.gs / 4; ++t)
                        for (int i = 0; i < 4; ++i) S += int32_t(uint8_t(q[t * 32 + (j / 4) * 16 + (j % 4) * 4 + i])) * xg[(t * q8_mr + r) * 4 + i];
                    I += S * a.sc[grp * q8_nr + j];
                }
                acc = k_end1(acc, I, a, sb, r, j);
            }
            out[r][j] = acc;
        }
}

// through pointers for the reason q8_tile_ptr gives
using k_tile_fn = void (*)(const k_tile_args&, float (&)[q8_mr][q8_nr]);
k_tile_fn volatile k_tile_ptr = &k_tile;

// The integer tiles, once the panel of columns [n, n + 8) is packed: the next panel's rows read now, all at once
// (kernels/touch.h: wasm has no prefetch), so that its packing finds them in cache — the misses of 8 rows' worth of
// blocks wait together instead of one block's at a time inside the packing loop (bench/ab-builds.mjs, Node, 10
// rounds: BERT-base fill-mask at q8_0 0.966 of the time, GPT-2 small's 128-token q8_0 prefill 0.971; Chromium,
// relaxed SIMD's tiles, 8 rounds: 0.935 and 0.961). One function for the three tiles: it costs nothing per call and
// keeps the engine's size.
[[gnu::noinline]] void touch_next_panel(const matrix_view& W, int64_t n, int64_t n1) { touch_rows(W, n + q8_nr, n1, q8_nr); }

}  // namespace

struct relaxed_tiles {
    quad_tile_fn q7, u7;
    k_tile_fn k7;
    bool pairs;  // k7's form (quad_step)
};

void gemm_q8(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1) {
    const int64_t K = Wm.n_cols, nb = K / q8_block, groups = (M + q8_mr - 1) / q8_mr;
    // every row quantized to q8_0 (each thread quantizes the rows itself: M·K work against M·K·N/threads)
    // q4_1, q5_1: the panel's rows as codes, scales and minimums (to_codes32), the minimums' term added to each tile
    // from the activations' block sums
    const auto to_codes = traits(Wm.type).to_codes32;
    thread_local q8_row_groups xq;
    xq.set(x, M, ldx, K, to_codes != nullptr);
    thread_local std::vector<int16_t> panel;
    thread_local std::vector<float> dw, mw, cd, cm;
    thread_local std::vector<int8_t> cq;
    panel.resize(size_t(K * q8_nr));
    dw.resize(size_t(nb * q8_nr));
    if (to_codes) {
        cq.resize(size_t(q8_nr * K));
        cd.resize(size_t(q8_nr * nb));
        cm.resize(size_t(q8_nr * nb));
        mw.resize(size_t(nb * q8_nr));
    }
    // q4_0, q5_0, iq4_nl: the panel's rows re-blocked as q8_0 first (exactly: the same scales, whole numbers in
    // [−127, 127]), so that they run on the integer tile too, never widened to f32
    const auto to_q8 = traits(Wm.type).to_q8_0;
    const int64_t q8_row = row_bytes(dtype::q8_0, K);
    thread_local std::vector<uint8_t> reblocked;
    if (to_q8) reblocked.resize(size_t(q8_nr * q8_row));
    const auto tile = q8_tile_ptr;
    for (int64_t n = n0; n < n1; n += q8_nr) {
        const int64_t cols = std::min(q8_nr, n1 - n);
        if (to_codes) {
            for (int64_t j = 0; j < cols; ++j) to_codes(row_as_stored(Wm, n + j), cq.data() + j * K, cd.data() + j * nb, cm.data() + j * nb, K);
            pack_codes_panel(cq.data(), cols, K, panel.data());
            panel_values(cd.data(), nb, cols, dw.data());
            panel_values(cm.data(), nb, cols, mw.data());
        } else if (to_q8) {
            for (int64_t j = 0; j < cols; ++j) to_q8(row_as_stored(Wm, n + j), reblocked.data() + j * q8_row, K);
            pack_q8_panel({dtype::q8_0, cols, K, reblocked.data()}, 0, cols, panel.data(), dw.data());
        } else {
            pack_q8_panel(Wm, n, cols, panel.data(), dw.data());
        }
        touch_next_panel(Wm, n, n1);
        for (int64_t g = 0; g < groups; ++g) {
            float out[q8_mr][q8_nr];
            tile(xq.q.data() + g * q8_mr * K, xq.d.data() + g * nb * q8_mr, panel.data(), dw.data(), nb, out);
            if (to_codes) add_minimums(mw.data(), xq.s.data() + g * nb * q8_mr, nb, out);
            store_tile(out, std::min(q8_mr, M - g * q8_mr), cols, bias ? bias + n : nullptr, y + g * q8_mr * ldy + n, ldy);
        }
    }
}

// The K-quants' product on a tile: k_tile's SIMD128 form (relaxed false), or its relaxed form or that one's twin.
void gemm_kq(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1,
             k_tile_fn tile, bool relaxed, bool pairs = false) {
    const int64_t K = Wm.n_cols, nsb = K / qk_k, groups = (M + q8_mr - 1) / q8_mr;
    const bool mins = Wm.type == dtype::q4_k || Wm.type == dtype::q5_k;
    const int64_t gs = mins ? 32 : 16;
    const int64_t run = pairs ? std::min<int64_t>(u7_run(Wm.type), gs / 4) : 0;  // (a run within a group)
    thread_local k_row_groups xq;  // (each thread quantizes the rows itself, as gemm_q8)
    const int offset = u7_offset(Wm.type);
    xq.set(x, M, ldx, K, mins, relaxed ? gs : 0, offset);
    thread_local k_panel panel;
    for (int64_t n = n0; n < n1; n += q8_nr) {
        const int64_t cols = std::min(q8_nr, n1 - n);
        panel.decode(Wm, n, cols);
        if (relaxed) panel.pack_quads(cols, offset);
        else panel.pack16(cols);
        touch_next_panel(Wm, n, n1);
        for (int64_t g = 0; g < groups; ++g) {
            float out[q8_mr][q8_nr];
            const k_tile_args a{relaxed ? static_cast<const void*>(xq.q8.data() + g * q8_mr * K) : xq.q.data() + g * q8_mr * K,
                                xq.d.data() + g * nsb * q8_mr,
                                mins ? xq.s.data() + g * nsb * 4 * 8 : nullptr,
                                relaxed ? xq.corr.data() + g * q8_mr * (K / gs) : nullptr,
                                relaxed ? static_cast<const void*>(panel.q8) : panel.q,
                                panel.sc32, panel.d, panel.dmin, panel.mq, nsb, gs, relaxed, run, offset != 0};
            tile(a, out);
            store_tile(out, std::min(q8_mr, M - g * q8_mr), cols, bias ? bias + n : nullptr, y + g * q8_mr * ldy + n, ldy);
        }
    }
}

void gemm_k(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
            int64_t n0, int64_t n1) {
    gemm_kq(x, M, ldx, Wm, bias, y, ldy, n0, n1, k_tile_ptr, false);
}

void gemm_q7(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1, const relaxed_tiles& tiles) {
    const int64_t K = Wm.n_cols, nb = K / q8_block, groups = (M + q8_mr - 1) / q8_mr;
    thread_local quad_row_groups xq;
    xq.set(x, M, ldx, K, true);
    thread_local std::vector<int8_t> panel;
    thread_local std::vector<int32_t> corr;
    thread_local std::vector<float> dw;
    thread_local std::vector<uint8_t> reblocked;
    panel.resize(size_t(K * q8_nr));
    corr.resize(size_t(nb * q8_nr));
    dw.resize(size_t(nb * q8_nr));
    const auto to_q8 = Wm.type == dtype::q8_0 ? nullptr : traits(Wm.type).to_q8_0;
    const int64_t q8_row = row_bytes(dtype::q8_0, K);
    if (to_q8) reblocked.resize(size_t(q8_nr * q8_row));
    const quad_tile_fn tile = tiles.q7;
    for (int64_t n = n0; n < n1; n += q8_nr) {
        const int64_t cols = std::min(q8_nr, n1 - n);
        if (to_q8) {
            for (int64_t j = 0; j < cols; ++j) to_q8(row_as_stored(Wm, n + j), reblocked.data() + j * q8_row, K);
            pack_q7_panel({dtype::q8_0, cols, K, reblocked.data()}, 0, cols, panel.data(), corr.data(), dw.data());
        } else {
            pack_q7_panel(Wm, n, cols, panel.data(), corr.data(), dw.data());
        }
        touch_next_panel(Wm, n, n1);
        for (int64_t g = 0; g < groups; ++g) {
            float out[q8_mr][q8_nr];
            tile(xq.q.data() + g * q8_mr * K, xq.d.data() + g * nb * q8_mr, panel.data(), corr.data(), dw.data(), nb, 0, out);
            store_tile(out, std::min(q8_mr, M - g * q8_mr), cols, bias ? bias + n : nullptr, y + g * q8_mr * ldy + n, ldy);
        }
    }
}

void gemm_u7(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1, const relaxed_tiles& tiles) {
    if (traits(Wm.type).block == qk_k) return gemm_kq(x, M, ldx, Wm, bias, y, ldy, n0, n1, tiles.k7, true, tiles.pairs);
    const int64_t K = Wm.n_cols, nb = K / q8_block, groups = (M + q8_mr - 1) / q8_mr;
    // the panel's rows: q4_0, q5_0 from their blocks; q4_1, q5_1 as codes with a scale and a minimum per 32
    const bool q45_0 = Wm.type == dtype::q4_0 || Wm.type == dtype::q5_0;
    const auto to_codes = traits(Wm.type).to_codes32;
    thread_local quad_row_groups xq;
    const int offset = u7_offset(Wm.type);
    const int64_t run = u7_run(Wm.type);
    xq.set(x, M, ldx, K, false, offset);
    thread_local std::vector<int8_t> panel, cq;
    thread_local std::vector<float> dw, mw, cd, cm;
    panel.resize(size_t(K * q8_nr));
    cq.resize(size_t(K));
    cd.resize(size_t(q8_nr * nb));
    dw.resize(size_t(nb * q8_nr));
    if (to_codes) cm.resize(size_t(q8_nr * nb)), mw.resize(size_t(nb * q8_nr));
    const quad_tile_fn tile = tiles.u7;
    for (int64_t n = n0; n < n1; n += q8_nr) {
        const int64_t cols = std::min(q8_nr, n1 - n);
        for (int64_t j = 0; j < q8_nr; ++j) {
            if (j >= cols) {
                pack_u7_column(nullptr, K, j, panel.data(), offset);
                continue;
            }
            if (q45_0) {
                q45_0_column(row_as_stored(Wm, n + j), K, Wm.type == dtype::q5_0, j, panel.data(), cd.data() + j * nb);
                continue;
            }
            to_codes(row_as_stored(Wm, n + j), cq.data(), cd.data() + j * nb, cm.data() + j * nb, K);
            pack_u7_column(cq.data(), K, j, panel.data(), offset);
        }
        panel_values(cd.data(), nb, cols, dw.data());
        if (to_codes) panel_values(cm.data(), nb, cols, mw.data());
        touch_next_panel(Wm, n, n1);
        for (int64_t g = 0; g < groups; ++g) {
            float out[q8_mr][q8_nr];
            tile(xq.q.data() + g * q8_mr * K, xq.d.data() + g * nb * q8_mr, panel.data(), xq.corr.data() + g * nb * q8_mr, dw.data(), nb, run, out);
            if (to_codes) add_minimums(mw.data(), xq.s.data() + g * nb * q8_mr, nb, out);
            store_tile(out, std::min(q8_mr, M - g * q8_mr), cols, bias ? bias + n : nullptr, y + g * q8_mr * ldy + n, ldy);
        }
    }
}

// Their scalar twins: only matmul_q7 and matmul_u7 (the tests' entry points) refer to them, so the engine's .wasm,
// which calls neither, leaves them out.
const relaxed_tiles& twin_tiles() {
    static const relaxed_tiles t{&quad_tile_scalar<true>, &quad_tile_scalar<false>, &k7_tile_scalar, false};
    return t;
}
// The tiles the engine's relaxed paths take: relaxed SIMD's instructions (matmul chooses these paths only where the
// instance runs them; natively, where it never does, the twins stand in).
const relaxed_tiles& instruction_tiles(bool pairs) {
#if defined(__wasm_simd128__)
    static const relaxed_tiles add{q7_tile_relaxed_ptr, u7_tile_relaxed_ptr, k_tile_ptr, false},
        pair{q7_tile_pairs_ptr, u7_tile_pairs_ptr, k_tile_ptr, true};
    return pairs ? pair : add;
#else
    (void)pairs;
    return twin_tiles();
#endif
}

}  // namespace wf::matmul_detail

namespace wf {

namespace {
const matmul_detail::relaxed_tiles& tiles_of(relaxed_form form) {
    using namespace matmul_detail;
    if (!relaxed_simd() || form == relaxed_form::twin) return twin_tiles();
    return instruction_tiles(form == relaxed_form::pairs || (form == relaxed_form::chosen && relaxed_pairs()));
}
}  // namespace

void matmul_q7(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
               int64_t n_begin, int64_t n_end, relaxed_form form) {
    if (W.type != dtype::q8_0 && !traits(W.type).to_q8_0) throw error(std::string("matmul_q7: ") + dtype_name(W.type) + " weights do not re-block as q8_0");
    if (M > 0 && n_begin < n_end) matmul_detail::gemm_q7(x, M, ldx, W, bias, y, ldy, n_begin, n_end, tiles_of(form));
}

// q4_0, q5_0 (codes − offset in [−16, 15]), q4_1 and q5_1 (codes per 32 in [0, 31]), q3_K … q6_K (codes − offset in
// [−32, 31]: k_tile's relaxed form); not q2_K (a minimum per 16: widened to f32 from 16 rows on)
bool u7_computes(dtype t) {
    return t == dtype::q4_0 || t == dtype::q5_0 || t == dtype::q4_1 || t == dtype::q5_1 || t == dtype::q3_k || t == dtype::q4_k || t == dtype::q5_k ||
           t == dtype::q6_k;
}

void matmul_u7(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
               int64_t n_begin, int64_t n_end, relaxed_form form) {
    if (!u7_computes(W.type)) throw error(std::string("matmul_u7: ") + dtype_name(W.type) + " codes do not fit in 7 bits");
    if (M > 0 && n_begin < n_end) matmul_detail::gemm_u7(x, M, ldx, W, bias, y, ldy, n_begin, n_end, tiles_of(form));
}

void prefill_codes(dtype t, const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) {
    using namespace matmul_detail;
    if (t == dtype::q4_k) k45_codes<block_q4_K, false>(src, q, d, m, n);
    else if (t == dtype::q5_k) k45_codes<block_q5_K, true>(src, q, d, m, n);
    else if (t == dtype::q6_k) q6_codes(src, q, d, n);
    else if (const auto f = traits(t).to_codes32) f(src, q, d, m, n);
    else if (const auto f16 = traits(t).to_codes16) f16(src, q, d, n);
    else throw error(std::string("prefill_codes: ") + dtype_name(t) + " has no codes per 32 or 16");
}

}  // namespace wf
