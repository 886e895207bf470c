// What kernels/matmul.cpp (f32, f16, bf16 weights and the dispatch) and the integer paths — kernels/gemv-q8.cpp (q8_0
// weights below 16 rows) and kernels/matmul-q8.cpp (q8_0 and the block types from 16 rows on) — share. Internal to
// src/kernels.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>
#include "kernels/simd.h"

#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

#include "kernels/kernels.h"

namespace wf::matmul_detail {

using B = xsimd::batch<float>;
using BI = xsimd::batch<int32_t>;
constexpr int64_t W = int64_t(B::size);

// Per-thread scratch that grows to the largest size asked for and is then reused: no allocation per call.
inline float* scratch(std::vector<float>& buf, size_t n) {
    if (buf.size() < n) buf.resize(n);
    return buf.data();
}

// W half-precision values at p (bit patterns, possibly unaligned) widened to W int32 lanes.
inline BI load_u16(const uint8_t* p) {
#if defined(__AVX2__) && !defined(__AVX512F__)
    static_assert(W == 8);
    return BI(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#elif defined(__SSE4_1__) && !defined(__AVX__)
    static_assert(W == 4);
    return BI(_mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#else
    alignas(64) int32_t tmp[W];
    for (int64_t i = 0; i < W; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        tmp[i] = h;
    }
    return BI::load_aligned(tmp);
#endif
}

// IEEE half → float in registers: (h & 0x7fff) << 13 reinterpreted is value·2^-112 (subnormals included),
// so one multiply by 2^112 rebiases; inf/NaN get an all-ones exponent; the sign is or-ed back.
inline B widen_f16(BI h) {
    const BI em = h & BI(0x7fff);
    const B v = xsimd::bitwise_cast<B>(em << 13) * B(0x1p112f);
    BI bits = xsimd::bitwise_cast<BI>(v);
    bits = bits | xsimd::select(em >= BI(0x7c00), BI(0x7f800000), BI(0));
    bits = bits | ((h & BI(0x8000)) << 16);
    return xsimd::bitwise_cast<B>(bits);
}

// The integer paths: q8_0 weights below 16 rows (gemv-q8.cpp); q8_0 and the block types that run on the integer tile
// from 16 rows on (matmul-q8.cpp). The signature of every matmul path: y (rows of x) = x · Wᵀ + bias, columns [n0, n1).
void gemv_q8(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1);
void gemm_q8(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1);
// The K-quants (q3_K, q4_K, q5_K, q6_K) from 16 rows on: integer sums over whole super-blocks on q8_K activations, the
// values of their decode (gemv_quant) bit for bit.
void gemm_k(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
            int64_t n0, int64_t n1);
// The relaxed-SIMD paths (matmul takes them from 16 rows on when relaxed_simd()): gemm_q7, q8_0 weights (and iq4_nl
// re-blocked as q8_0) against activations quantized to 7 bits (quantize_q7); gemm_u7, the block types whose codes fit
// in 7 bits against q8_0 activations (the K-quants: q8_K), equal to gemm_q8 (gemm_k) bit for bit. Their tiles are
// relaxed SIMD's instructions (kernels/relaxed.h: instruction_tiles) or the layouts' scalar twins (twin_tiles).
struct relaxed_tiles;  // matmul-q8.cpp
const relaxed_tiles& instruction_tiles(bool pairs);
const relaxed_tiles& twin_tiles();
void gemm_q7(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1, const relaxed_tiles& tiles);
void gemm_u7(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
             int64_t n0, int64_t n1, const relaxed_tiles& tiles);

}  // namespace wf::matmul_detail
