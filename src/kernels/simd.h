// xsimd, as every kernel includes it (include this, never <xsimd/xsimd.hpp> itself).
//
// Under Emscripten the kernels are built for xsimd's SSE4.1 path, whose intrinsics Emscripten's headers map onto wasm
// SIMD128. Two of them the headers emulate lane by lane: _mm_cvtps_epi32 and _mm_cvttps_epi32 (float → int32, with
// x86's 0x80000000 for NaN and out-of-range lanes) go through lrint four times, a store and a reload. xsimd's exp,
// erf and tanh take their exponent that way, so every softmax, GELU and SiLU paid ~30 scalar operations per vector
// (a 4-beam translation spent 8 % of its time in the exponentials of one log-softmax). Here they are wasm's own
// conversions: f32x4.nearest (ties to even, x86's default rounding) or truncation, then i32x4.trunc_sat_f32x4_s. The
// same results wherever the value fits in int32; out of range they saturate and NaN gives 0, lanes that xsimd's
// functions replace by their own selects (exp: 0 or inf past its limits, NaN through the polynomial).
#pragma once

#if defined(__wasm_simd128__)
#include <emmintrin.h>
#include <wasm_simd128.h>

static inline __m128i wf_mm_cvtps_epi32(__m128 a) { return (__m128i)wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest((v128_t)a)); }
static inline __m128i wf_mm_cvttps_epi32(__m128 a) { return (__m128i)wasm_i32x4_trunc_sat_f32x4((v128_t)a); }
#if defined(XSIMD_HPP)
#error "kernels/simd.h must come before any other include of <xsimd/xsimd.hpp>"
#endif
#define _mm_cvtps_epi32 wf_mm_cvtps_epi32
#define _mm_cvttps_epi32 wf_mm_cvttps_epi32
#include <xsimd/xsimd.hpp>
#undef _mm_cvtps_epi32
#undef _mm_cvttps_epi32
#else
#include <xsimd/xsimd.hpp>
#endif
