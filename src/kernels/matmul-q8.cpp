// matmul's integer prefill (kernels/matmul.cpp dispatches to it; its header comment gives the whole picture): from
// 16 rows of x on, an integer outer-product tile on packed panels (gemm_q8) that q8_0 and the block types with exact
// codes share — q4_0, q5_0, iq4_nl re-blocked as q8_0, q4_1 / q5_1 / q4_K / q5_K as codes with scales and minimums per
// 32, q3_K / q6_K as codes with scales per 16. Where the instance runs relaxed SIMD, the same rows take its int8 dot
// product instead (gemm_u7 for the types whose codes fit in 7 bits, exactly; gemm_q7 for q8_0 and iq4_nl, on 7-bit
// activations). q8_0's decode path (below 16 rows, gemv_q8) is in gemv-q8.cpp.
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
#include "kernels/half4.h"
#include "kernels/kernels.h"
#include "kernels/matmul-paths.h"
#include "kernels/quants.h"
#include "kernels/relaxed.h"
#include "kernels/touch.h"

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
inline void interleave_pairs4(const int8_t* const (&src)[4], int16_t* out, int64_t stride) {
#if defined(WF_Q8_TILE)
    for (int h = 0; h < 2; ++h) {  // pairs 8h … 8h + 7
        vi v[4];
        for (int j = 0; j < 4; ++j) v[j] = src[j] ? vi_load(src[j] + 16 * h) : vi_zero();
        // int8 pairs as 16-bit units: [a0 b0 a1 b1 a2 b2 a3 b3] and so on, then [a0 b0 c0 d0 a1 b1 c1 d1] …
        const vi ab_lo = vi_unpacklo16(v[0], v[1]), ab_hi = vi_unpackhi16(v[0], v[1]);
        const vi cd_lo = vi_unpacklo16(v[2], v[3]), cd_hi = vi_unpackhi16(v[2], v[3]);
        const vi t[4] = {vi_unpacklo32(ab_lo, cd_lo), vi_unpackhi32(ab_lo, cd_lo), vi_unpacklo32(ab_hi, cd_hi), vi_unpackhi32(ab_hi, cd_hi)};
        for (int i = 0; i < 4; ++i) {
            vi_store(out + (8 * h + 2 * i) * stride, vi_widen_lo8(t[i]));
            vi_store(out + (8 * h + 2 * i + 1) * stride, vi_widen_hi8(t[i]));
        }
    }
#else
    for (int p = 0; p < q8_block / 2; ++p)
        for (int j = 0; j < 4; ++j) {
            out[p * stride + 2 * j] = src[j] ? src[j][2 * p] : 0;
            out[p * stride + 2 * j + 1] = src[j] ? src[j][2 * p + 1] : 0;
        }
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
                    if (sums) s[at] = src[r] ? d[at] * float(std::accumulate(src[r], src[r] + q8_block, int32_t(0))) : 0.0f;
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

// The same panel's codes from rows given as codes (cols rows of K int8 codes at q, row j's at q + j·K): the types
// with to_codes32 or to_codes16; their scales (and minimums) go through panel_values.
void pack_codes_panel(const int8_t* q, int64_t cols, int64_t K, int16_t* out) {
    for (int64_t b = 0; b < K / q8_block; ++b)
        for (int64_t half = 0; half < 2; ++half) {
            const int8_t* src[4];
            for (int64_t j = 0; j < 4; ++j) src[j] = 4 * half + j < cols ? q + (4 * half + j) * K + b * q8_block : nullptr;
            interleave_pairs4(src, out + b * q8_block * q8_nr + half * 8, 2 * q8_nr);
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

template <class Block, bool five>
void k45_codes(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) {
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

void q6_codes(const uint8_t* src, int8_t* q, float* d, int64_t n) {
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

decltype(dtype_traits::to_codes32) codes32_decoder(dtype t) {
    if (t == dtype::q4_k) return &k45_codes<block_q4_K, false>;
    if (t == dtype::q5_k) return &k45_codes<block_q5_K, true>;
    return traits(t).to_codes32;
}
decltype(dtype_traits::to_codes16) codes16_decoder(dtype t) { return t == dtype::q6_k ? &q6_codes : traits(t).to_codes16; }

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

// One group of 4 rows (xg: its packed pairs, dg: its scales per 32) against one panel: out[r][j] = Σ_blocks
// d_x·d_w·(q_x·q_w), W's scales per BL values (d: nb blocks of BL; 32, or 16 for q3_K and q6_K), x's per 32.
template <int BL>
[[gnu::noinline]] void q8_tile(const int16_t* xg, const float* dg, const int16_t* q, const float* d, int64_t nb, float (&out)[q8_mr][q8_nr]) {
    static_assert(BL == 32 || BL == 16);
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
        scale_block(facc, iacc, d + b * q8_nr, dg + b * BL / q8_block * q8_mr);
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
                acc += float(is) * (d[b * q8_nr + j] * dg[b * BL / q8_block * q8_mr + r]);
            }
            out[r][j] = acc;
        }
#endif
}
// Called through a pointer that the compiler must read (volatile), which keeps the tile in the function table: that
// is what stops wasm-opt from inlining it into its one caller (it inlines such a function only when nothing else
// refers to it; clang's noinline does not reach wasm-opt, and an unused reference is dropped by the linker).
using q8_tile_fn = void (*)(const int16_t*, const float*, const int16_t*, const float*, int64_t, float (&)[q8_mr][q8_nr]);
q8_tile_fn volatile q8_tile_ptr = &q8_tile<32>, q8_tile16_ptr = &q8_tile<16>;

// --- prefill with relaxed SIMD -----------------------------------------------------------------------------------
// Where the engine runs relaxed SIMD (kernels/relaxed.h), the integer tile takes i32x4.relaxed_dot_i8x16_i7x16_add_s:
// 16 int8 products, summed 4 by 4 into 4 int32 lanes, per instruction (x86's vpdpbusd where the CPU has AVX-VNNI),
// against 8 for dot_i16x8 above, and no widening to int16. Its second operand must lie in [0, 127] (the engine's
// choice of result otherwise), so one side of every product is made 7-bit:
// - gemm_u7, the block types whose codes are small (q4_0, q5_0, q4_1, q5_1, q3_K … q6_K: codes in [−32, 31]): the
//   weights, stored code + 64; the activations stay q8_0 as the plain tile has them, and the tile's int32 sums start
//   at −64·Σq_x per block of the weights' scales, so they end at Σ code·q_x exactly — the plain tile's integers, the
//   same float steps after them: the same results bit for bit, at the relaxed instruction's speed.
// - gemm_q7, q8_0 (and iq4_nl, re-blocked as q8_0): the weights need all 8 bits, so the activations are quantized to
//   7 bits instead, q ∈ [−63, 63] per 32 at d = amax / 63 in f32 (quantize_q7), stored as q + 64; the panel carries
//   −64·Σw per block and column. Results move within that coarser rounding of x.
// Both packings put, per quad of k, 4 columns' (or the group's 4 rows') 4 int8 side by side in one vector: the tile
// splats a row's quad with one v128.load32_splat and multiplies it with 4 columns' quads.
constexpr int q7_offset = 64;

// Rows of x quantized per 32 and packed by groups of 4 rows for the relaxed tiles: per group and block, 8 quads × 4
// rows × 4 bytes. seven_bit (gemm_q7): quantize_q7, stored q + 64. Otherwise (gemm_u7): quantize_q8_0, as the plain
// tile does, stored as is, with per BL values (the weights' scale block, 32 or 16) −64·Σq (corr), and per 32 d·Σq
// (s: the minimums' term, see add_minimums).
struct quad_row_groups {
    std::vector<int8_t> q;
    std::vector<float> d, s;  // per group and block: the 4 rows' scales (0 for a padding row), d·Σq
    std::vector<int32_t> corr;  // per group and BL values: the 4 rows' −64·Σq
    std::vector<int8_t> codes;
    std::vector<float> scales;
    std::vector<block_q8_0> blocks;
    void set(const float* x, int64_t M, int64_t ldx, int64_t K, bool seven_bit, int64_t BL) {
        const int64_t nb = K / q8_block, groups = (M + q8_mr - 1) / q8_mr, ns = K / BL;
        codes.resize(size_t(q8_mr * K));
        scales.resize(size_t(q8_mr * nb));
        blocks.resize(size_t(nb));
        q.resize(size_t(groups * q8_mr * K));
        d.resize(size_t(groups * nb * q8_mr));
        s.resize(seven_bit ? 0 : d.size());
        corr.resize(seven_bit ? 0 : size_t(groups * ns * q8_mr));
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
            int8_t* out = q.data() + g * q8_mr * K;
            int64_t t = 0;
#if defined(__wasm_simd128__)
            // four quads of the 4 rows at a time: a 4 × 4 transpose of 32-bit lanes (it was a word at a time; this
            // packing compiled for size had made Chromium's GPT-2 q8_0 prefill 1.055× slower)
            static_assert(q8_mr == 4);
            for (; t + 4 <= K / 4; t += 4) {
                const int8_t* c = codes.data() + t * 4;
                const v128_t r0 = wasm_v128_load(c), r1 = wasm_v128_load(c + K), r2 = wasm_v128_load(c + 2 * K), r3 = wasm_v128_load(c + 3 * K);
                const v128_t a = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), b = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
                const v128_t e = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7), f = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
                wasm_v128_store(out + t * 16, wasm_i64x2_shuffle(a, b, 0, 2));
                wasm_v128_store(out + t * 16 + 16, wasm_i64x2_shuffle(a, b, 1, 3));
                wasm_v128_store(out + t * 16 + 32, wasm_i64x2_shuffle(e, f, 0, 2));
                wasm_v128_store(out + t * 16 + 48, wasm_i64x2_shuffle(e, f, 1, 3));
            }
#endif
            for (; t < K / 4; ++t)
                for (int64_t r = 0; r < q8_mr; ++r) std::memcpy(out + (t * q8_mr + r) * 4, codes.data() + r * K + t * 4, 4);
            for (int64_t r = 0; r < q8_mr; ++r) {
                for (int64_t b = 0; b < nb; ++b) d[size_t((g * nb + b) * q8_mr + r)] = scales[size_t(r * nb + b)];
                if (seven_bit) continue;
                const auto sum = [&](int64_t k0, int64_t n) {
                    int32_t v = 0;
                    for (int64_t k = k0; k < k0 + n; ++k) v += codes[size_t(r * K + k)];
                    return v;
                };
                for (int64_t b = 0; b < ns; ++b) corr[size_t((g * ns + b) * q8_mr + r)] = -q7_offset * sum(b * BL, BL);
                for (int64_t b = 0; b < nb; ++b) s[size_t((g * nb + b) * q8_mr + r)] = d[size_t((g * nb + b) * q8_mr + r)] * float(sum(b * q8_block, q8_block));
            }
        }
    }
};

// Column j's codes k = 4t … 4t + 3 (one 32-bit word) in the relaxed tiles' panels: per quad of k, 2 vectors of 16
// bytes, columns 0–3, then 4–7.
inline void put_quad(int8_t* panel, int64_t t, int64_t j, uint32_t v) { std::memcpy(panel + t * 32 + (j / 4) * 16 + (j % 4) * 4, &v, 4); }

// A tile's results for a group's rows and a panel's columns: y = out + bias.
inline void store_rows(const float (&out)[q8_mr][q8_nr], int64_t rows, int64_t cols, const float* bias, float* y, int64_t ldy) {
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j) y[r * ldy + j] = out[r][j] + (bias ? bias[j] : 0.0f);
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
            corr[b * q8_nr + j] = -q7_offset * std::accumulate(w, w + q8_block, int32_t(0));
            for (int64_t t = 0; t < q8_block / 4; ++t) {
                uint32_t v;
                std::memcpy(&v, w + t * 4, 4);
                put_quad(q, b * 8 + t, j, v);
            }
        }
    }
}

// One group of 4 rows (xg: its packed quads, dg: its scales per 32) against one panel (q: its quads, d: its scales
// per BL): out[r][j] = Σ_blocks d_x·d_w·(q_x·q_w). x7 (gemm_q7): x is the 7-bit operand, corr per block and column;
// else (gemm_u7) W is, corr per block and row.
using quad_tile_fn = void (*)(const int8_t*, const float*, const int8_t*, const int32_t*, const float*, int64_t, float (&)[q8_mr][q8_nr]);

// The scalar twin of the layout (native builds, and wasm without relaxed SIMD, which never take this path but test it).
template <bool x7, int BL>
void quad_tile_scalar(const int8_t* xg, const float* dg, const int8_t* q, const int32_t* corr, const float* d, int64_t nb, float (&out)[q8_mr][q8_nr]) {
    for (int r = 0; r < q8_mr; ++r)
        for (int64_t j = 0; j < q8_nr; ++j) {
            float acc = 0;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t is = x7 ? corr[b * q8_nr + j] : corr[b * q8_mr + r];
                for (int64_t t = b * BL / 4; t < (b + 1) * BL / 4; ++t)
                    for (int i = 0; i < 4; ++i) {
                        const int8_t w = q[t * 32 + (j / 4) * 16 + (j % 4) * 4 + i], xv = xg[(t * q8_mr + r) * 4 + i];
                        is += x7 ? int32_t(w) * int32_t(uint8_t(xv)) : int32_t(uint8_t(w)) * int32_t(xv);
                    }
                acc += float(is) * (d[b * q8_nr + j] * dg[b * BL / q8_block * q8_mr + r]);
            }
            out[r][j] = acc;
        }
}

#if defined(__wasm_simd128__)
template <bool x7, int BL>
[[gnu::noinline]] void quad_tile_relaxed(const int8_t* xg, const float* dg, const int8_t* q, const int32_t* corr, const float* d, int64_t nb,
                                         float (&out)[q8_mr][q8_nr]) {
    vi facc[q8_mr][2];
    for (int r = 0; r < q8_mr; ++r) facc[r][0] = facc[r][1] = vf_zero();
    for (int64_t b = 0; b < nb; ++b) {
        vi iacc[q8_mr][2];
        if constexpr (x7) {
            const vi c0 = vi_load(corr + b * q8_nr), c1 = vi_load(corr + b * q8_nr + 4);
            for (int r = 0; r < q8_mr; ++r) iacc[r][0] = c0, iacc[r][1] = c1;
        } else {
            for (int r = 0; r < q8_mr; ++r) iacc[r][0] = iacc[r][1] = vi_splat32(corr + b * q8_mr + r);
        }
        const int8_t* xp = xg + b * BL * q8_mr;
        const int8_t* const xe = xp + BL * q8_mr;
        for (const int8_t* wp = q + b * BL * q8_nr; xp != xe; xp += 4 * q8_mr, wp += 4 * q8_nr) {
            const vi w0 = vi_load(wp), w1 = vi_load(wp + 16);
            for (int r = 0; r < q8_mr; ++r) {
                const vi xs = vi_splat32(xp + 4 * r);
                iacc[r][0] = x7 ? wf_relaxed_dot_i8x16_i7x16_add_s(w0, xs, iacc[r][0]) : wf_relaxed_dot_i8x16_i7x16_add_s(xs, w0, iacc[r][0]);
                iacc[r][1] = x7 ? wf_relaxed_dot_i8x16_i7x16_add_s(w1, xs, iacc[r][1]) : wf_relaxed_dot_i8x16_i7x16_add_s(xs, w1, iacc[r][1]);
            }
        }
        scale_block(facc, iacc, d + b * q8_nr, dg + b * BL / q8_block * q8_mr);
    }
    store_facc(facc, out);
}
// through pointers for the reason q8_tile_ptr gives
quad_tile_fn volatile q7_tile_relaxed_ptr = &quad_tile_relaxed<true, 32>, u7_tile_relaxed_ptr = &quad_tile_relaxed<false, 32>,
                      u7_tile16_relaxed_ptr = &quad_tile_relaxed<false, 16>;
#endif

// The tile of a relaxed path: the instruction where the instance runs it, else (or asked for: twin) the scalar twin.
quad_tile_fn quad_tile(bool x7, int64_t BL, bool twin) {
#if defined(__wasm_simd128__)
    if (!twin && relaxed_simd()) return x7 ? q7_tile_relaxed_ptr : BL == 16 ? u7_tile16_relaxed_ptr : u7_tile_relaxed_ptr;
#else
    (void)twin;
#endif
    return x7 ? &quad_tile_scalar<true, 32> : BL == 16 ? &quad_tile_scalar<false, 16> : &quad_tile_scalar<false, 32>;
}

// Column j of gemm_u7's panel: each code + 64, a quad of k at a time (put_quad), worked on as one 32-bit word with no
// carry or borrow between its bytes.
// K codes in [−64, 63] (null: a missing column, zero codes): code + 64 = ((code + 128) mod 256) − 64, byte by byte.
void pack_u7_column(const int8_t* q, int64_t K, int64_t j, int8_t* panel) {
    for (int64_t t = 0; t < K / 4; ++t) {
        uint32_t v = 0;
        if (q) std::memcpy(&v, q + 4 * t, 4);
        put_quad(panel, t, j, (v ^ 0x80808080u) - 0x40404040u);
    }
}

// q4_0 and q5_0 rows straight from their blocks (per block its scale in d): byte i of qs holds elements i (low nibble)
// and 16 + i (high), q5_0's fifth bit of element e is bit e of qh; code + 64 − offset (8 or 16) fits a byte.
void q45_0_column(const uint8_t* row, int64_t K, bool five, int64_t j, int8_t* panel, float* d) {
    const int64_t bytes = five ? 22 : 18;
    // 4 bits n → byte i gets 16 where bit i of n is set (n·0x204081 puts bit i at bit 8i: the 4 copies do not overlap)
    const auto spread = [](uint32_t n) { return ((n * 0x00204081u) & 0x01010101u) << 4; };
    const uint32_t add = five ? 0x30303030u : 0x38383838u;
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
            put_quad(panel, b * 8 + t, j, lo + add);
            put_quad(panel, b * 8 + 4 + t, j, hi + add);
        }
    }
}

// The integer tiles, once the panel of columns [n, n + 8) is packed: the next panel's rows read now, all at once
// (kernels/touch.h: wasm has no prefetch), so that its packing finds them in cache — the misses of 8 rows' worth of
// blocks wait together instead of one block's at a time inside the packing loop (bench/ab-builds.mjs, Node, 10
// rounds: BERT-base fill-mask at q8_0 0.966 of the time, GPT-2 small's 128-token q8_0 prefill 0.971; Chromium,
// relaxed SIMD's tiles, 8 rounds: 0.935 and 0.961). One function for the three tiles: it costs nothing per call and
// keeps the engine's size.
[[gnu::noinline]] void touch_next_panel(const matrix_view& W, int64_t n, int64_t n1) { touch_rows(W, n + q8_nr, n1, q8_nr); }

}  // namespace

void gemm_q8(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1) {
    const int64_t K = Wm.n_cols, nb = K / q8_block, groups = (M + q8_mr - 1) / q8_mr;
    // every row quantized to q8_0 (each thread quantizes the rows itself: M·K work against M·K·N/threads)
    // q4_1, q5_1, q4_K, q5_K: the panel's rows as codes, scales and minimums (to_codes32), the minimums' term added
    // to each tile from the activations' block sums
    // q3_K, q6_K (value = d·q per 16): likewise as codes with a scale per 16, on the tile that scales every 16
    const auto to_codes = codes32_decoder(Wm.type);
    const auto to_codes16 = codes16_decoder(Wm.type);
    const int64_t ns = to_codes16 ? K / 16 : nb;  // W's scales per row
    thread_local q8_row_groups xq;
    xq.set(x, M, ldx, K, to_codes != nullptr);
    thread_local std::vector<int16_t> panel;
    thread_local std::vector<float> dw, mw, cd, cm;
    thread_local std::vector<int8_t> cq;
    panel.resize(size_t(K * q8_nr));
    dw.resize(size_t(ns * q8_nr));
    if (to_codes || to_codes16) {
        cq.resize(size_t(q8_nr * K));
        cd.resize(size_t(q8_nr * ns));
    }
    if (to_codes) {
        cm.resize(size_t(q8_nr * nb));
        mw.resize(size_t(nb * q8_nr));
    }
    // q4_0, q5_0, iq4_nl: the panel's rows re-blocked as q8_0 first (exactly: the same scales, whole numbers in
    // [−127, 127]), so that they run on the integer tile too, never widened to f32
    const auto to_q8 = traits(Wm.type).to_q8_0;
    const int64_t q8_row = row_bytes(dtype::q8_0, K);
    thread_local std::vector<uint8_t> reblocked;
    if (to_q8) reblocked.resize(size_t(q8_nr * q8_row));
    const auto tile = to_codes16 ? q8_tile16_ptr : q8_tile_ptr;
    for (int64_t n = n0; n < n1; n += q8_nr) {
        const int64_t cols = std::min(q8_nr, n1 - n);
        if (to_codes16 || to_codes) {
            for (int64_t j = 0; j < cols; ++j) {
                if (to_codes16) to_codes16(row_as_stored(Wm, n + j), cq.data() + j * K, cd.data() + j * ns, K);
                else to_codes(row_as_stored(Wm, n + j), cq.data() + j * K, cd.data() + j * ns, cm.data() + j * ns, K);
            }
            pack_codes_panel(cq.data(), cols, K, panel.data());
            panel_values(cd.data(), ns, cols, dw.data());
            if (to_codes) panel_values(cm.data(), ns, cols, mw.data());
        } else if (to_q8) {
            for (int64_t j = 0; j < cols; ++j) to_q8(row_as_stored(Wm, n + j), reblocked.data() + j * q8_row, K);
            pack_q8_panel({dtype::q8_0, cols, K, reblocked.data()}, 0, cols, panel.data(), dw.data());
        } else {
            pack_q8_panel(Wm, n, cols, panel.data(), dw.data());
        }
        touch_next_panel(Wm, n, n1);
        for (int64_t g = 0; g < groups; ++g) {
            float out[q8_mr][q8_nr];
            tile(xq.q.data() + g * q8_mr * K, xq.d.data() + g * nb * q8_mr, panel.data(), dw.data(), ns, out);
            if (to_codes) add_minimums(mw.data(), xq.s.data() + g * nb * q8_mr, nb, out);
            const int64_t rows = std::min(q8_mr, M - g * q8_mr);
            if constexpr (q8_nr % W == 0) {
                if (cols == q8_nr) {  // y = out + bias (+ 0 without one, as below: the same values bit for bit)
                    for (int64_t j = 0; j < q8_nr; j += W) {
                        const B bj = bias ? B::load_unaligned(bias + n + j) : B(0.0f);
                        for (int64_t r = 0; r < rows; ++r) (B::load_unaligned(out[r] + j) + bj).store_unaligned(y + (g * q8_mr + r) * ldy + n + j);
                    }
                    continue;
                }
            }
            store_rows(out, rows, cols, bias ? bias + n : nullptr, y + g * q8_mr * ldy + n, ldy);
        }
    }
}

void gemm_q7(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1) {
    const int64_t K = Wm.n_cols, nb = K / q8_block, groups = (M + q8_mr - 1) / q8_mr;
    thread_local quad_row_groups xq;
    xq.set(x, M, ldx, K, true, q8_block);
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
    const quad_tile_fn tile = quad_tile(true, q8_block, false);
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
            tile(xq.q.data() + g * q8_mr * K, xq.d.data() + g * nb * q8_mr, panel.data(), corr.data(), dw.data(), nb, out);
            store_rows(out, std::min(q8_mr, M - g * q8_mr), cols, bias ? bias + n : nullptr, y + g * q8_mr * ldy + n, ldy);
        }
    }
}

void gemm_u7(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1, bool twin) {
    const int64_t K = Wm.n_cols, nb = K / q8_block, groups = (M + q8_mr - 1) / q8_mr;
    // the panel's rows: q4_0, q5_0 from their blocks; q3_K, q6_K as codes with a scale per 16; q4_1, q5_1, q4_K, q5_K
    // as codes with a scale and a minimum per 32
    const bool q45_0 = Wm.type == dtype::q4_0 || Wm.type == dtype::q5_0;
    const auto to_codes = codes32_decoder(Wm.type);
    const auto to_codes16 = codes16_decoder(Wm.type);
    const int64_t BL = to_codes16 ? 16 : q8_block, ns = K / BL;
    thread_local quad_row_groups xq;
    xq.set(x, M, ldx, K, false, BL);
    thread_local std::vector<int8_t> panel, cq;
    thread_local std::vector<float> dw, mw, cd, cm;
    panel.resize(size_t(K * q8_nr));
    cq.resize(size_t(K));
    cd.resize(size_t(q8_nr * ns));
    dw.resize(size_t(ns * q8_nr));
    if (to_codes) cm.resize(size_t(q8_nr * nb)), mw.resize(size_t(nb * q8_nr));
    const quad_tile_fn tile = quad_tile(false, BL, twin);
    for (int64_t n = n0; n < n1; n += q8_nr) {
        const int64_t cols = std::min(q8_nr, n1 - n);
        for (int64_t j = 0; j < q8_nr; ++j) {
            if (j >= cols) {
                pack_u7_column(nullptr, K, j, panel.data());
                continue;
            }
            if (q45_0) {
                q45_0_column(row_as_stored(Wm, n + j), K, Wm.type == dtype::q5_0, j, panel.data(), cd.data() + j * ns);
                continue;
            }
            if (to_codes16) to_codes16(row_as_stored(Wm, n + j), cq.data(), cd.data() + j * ns, K);
            else to_codes(row_as_stored(Wm, n + j), cq.data(), cd.data() + j * ns, cm.data() + j * ns, K);
            pack_u7_column(cq.data(), K, j, panel.data());
        }
        panel_values(cd.data(), ns, cols, dw.data());
        if (to_codes) panel_values(cm.data(), ns, cols, mw.data());
        touch_next_panel(Wm, n, n1);
        for (int64_t g = 0; g < groups; ++g) {
            float out[q8_mr][q8_nr];
            tile(xq.q.data() + g * q8_mr * K, xq.d.data() + g * nb * q8_mr, panel.data(), xq.corr.data() + g * ns * q8_mr, dw.data(), ns, out);
            if (to_codes) add_minimums(mw.data(), xq.s.data() + g * nb * q8_mr, nb, out);
            store_rows(out, std::min(q8_mr, M - g * q8_mr), cols, bias ? bias + n : nullptr, y + g * q8_mr * ldy + n, ldy);
        }
    }
}

}  // namespace wf::matmul_detail

namespace wf {

void matmul_q7(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
               int64_t n_begin, int64_t n_end) {
    if (W.type != dtype::q8_0 && !traits(W.type).to_q8_0) throw error(std::string("matmul_q7: ") + dtype_name(W.type) + " weights do not re-block as q8_0");
    if (M > 0 && n_begin < n_end) matmul_detail::gemm_q7(x, M, ldx, W, bias, y, ldy, n_begin, n_end);
}

// q4_0, q5_0 (codes − offset in [−16, 15]) and the types with codes per 32 or 16 (dtype.h: within [−32, 31])
bool u7_computes(dtype t) { return t == dtype::q4_0 || t == dtype::q5_0 || traits(t).to_codes32 || traits(t).to_codes16; }

void matmul_u7(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
               int64_t n_begin, int64_t n_end, bool twin) {
    if (!u7_computes(W.type)) throw error(std::string("matmul_u7: ") + dtype_name(W.type) + " codes do not fit in 7 bits");
    if (M > 0 && n_begin < n_end) matmul_detail::gemm_u7(x, M, ldx, W, bias, y, ldy, n_begin, n_end, twin);
}

void prefill_codes(dtype t, const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) {
    if (const auto f = matmul_detail::codes32_decoder(t)) f(src, q, d, m, n);
    else if (const auto f16 = matmul_detail::codes16_decoder(t)) f16(src, q, d, n);
    else throw error(std::string("prefill_codes: ") + dtype_name(t) + " has no codes per 32 or 16");
}

}  // namespace wf
