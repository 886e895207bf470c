// The f16 block scales of the quantized types → floats, without branches: one (half1), or those of 4 W rows side by
// side in one vector (half4), which the integer GEMVs scale one block's four row sums by. Internal to src/kernels.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>  // clang's header for the wasm SIMD128 instructions (not Emscripten's)
#elif defined(__SSE4_1__)
#include <immintrin.h>
#endif

namespace wf {

// The f16 at p as a float, as f16_to_f32 gives it (subnormals, inf, NaN): (h & 0x7fff) << 13 as a float is the
// value·2^-112, an all-ones exponent (a malformed block's inf or NaN) is or-ed back to inf / NaN, then the sign.
inline float half1(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    const uint32_t em = h & 0x7fffu, scaled = em << 13;
    float f;
    std::memcpy(&f, &scaled, 4);
    f *= 0x1p112f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits |= (em >= 0x7c00u ? 0x7f800000u : 0u) | uint32_t(h & 0x8000u) << 16;
    std::memcpy(&f, &bits, 4);
    return f;
}

#if defined(__wasm_simd128__) || defined(__SSE4_1__)
#if defined(__wasm_simd128__)
using half4_vec = v128_t;
#else
using half4_vec = __m128i;
#endif

// The f16 at byte offset `at` of w[0] … w[3] as four floats, each as half1 gives it.
inline half4_vec half4(const uint8_t* const (&w)[4], int64_t at) {
    auto u16 = [&](int j) {
        uint16_t h;
        std::memcpy(&h, w[j] + at, 2);
        return int32_t(h);
    };
#if defined(__wasm_simd128__)
    const v128_t h = wasm_i32x4_make(u16(0), u16(1), u16(2), u16(3)), em = wasm_v128_and(h, wasm_i32x4_splat(0x7fff));
    const v128_t f = wasm_f32x4_mul(wasm_i32x4_shl(em, 13), wasm_f32x4_splat(0x1p112f));
    const v128_t inf = wasm_v128_and(wasm_i32x4_gt(em, wasm_i32x4_splat(0x7bff)), wasm_i32x4_splat(0x7f800000));
    return wasm_v128_or(wasm_v128_or(f, inf), wasm_i32x4_shl(wasm_v128_and(h, wasm_i32x4_splat(0x8000)), 16));
#else
    const __m128i h = _mm_setr_epi32(u16(0), u16(1), u16(2), u16(3)), em = _mm_and_si128(h, _mm_set1_epi32(0x7fff));
    const __m128i f = _mm_castps_si128(_mm_mul_ps(_mm_castsi128_ps(_mm_slli_epi32(em, 13)), _mm_set1_ps(0x1p112f)));
    const __m128i inf = _mm_and_si128(_mm_cmpgt_epi32(em, _mm_set1_epi32(0x7bff)), _mm_set1_epi32(0x7f800000));
    return _mm_or_si128(_mm_or_si128(f, inf), _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16));
#endif
}
#endif

}  // namespace wf
