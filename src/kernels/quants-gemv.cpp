// The integer GEMV of q4_0 and kernels/quants.h's block types, SIMD: wasm SIMD128 intrinsics under Emscripten, the
// same operations in SSE4.1 natively; elsewhere the scalar twin.
//
// Codes are read 8 at a time, zero-extended to int16 lanes (v128.load8x8_u / pmovzxbw) in the order of the
// activations, so that one nibble mask or shift leaves 8 codes lined up with 8 activations, and i32x4.dot_i16x8_s
// (pmaddwd) multiplies and adds them in pairs (q5_0 / q5_1 and iq4_nl build their codes in bytes first, then
// widen them). The activations are quantized once per call and sign-extended to int16 (every row of W reads
// them). Per block the sums run in int32 — exact: the largest, q6_K's Σ_g sc_g·Σ q·q_x, stays below
// 16·128·16·63·127 < 2^31 — and each row's four lanes are reduced together with three other rows' (four vectors →
// one vector of four sums), then scaled by one vector multiply.
//
// The float steps per block are exactly those of ref::gemv_quant, in the same order, so the two agree bit for bit
// (neither file lets the compiler fuse a multiply and an add: g++ would, even across SSE intrinsics).
//
// Where the instance runs relaxed SIMD (Chromium), one row of x (decode) against the types whose codes fit in 7 bits
// unsigned — q4_0, q5_0, q4_K, q5_K, q6_K — takes its int8 dot product instead where that is one instruction, and
// q5_0 always (the int8 form, gemv_quant_int8 below; q4_1 and q5_1, rare in today's files, and 2 or 3 rows of x keep
// the int16 form: their int8 kernels would take the engine over its 400 KB budget, tests/js/pack.test.mjs). The codes stay bytes,
// 16 a vector, against the activations' int8 codes, and i32x4.relaxed_dot_i8x16_i7x16_add_s multiplies and adds 4
// pairs into each int32 lane (vpdpbusd on a CPU with AVX-VNNI). Its result is defined exactly when the second operand
// is in [0, 127], as the codes are: the same integer sums, so the same outputs bit for bit, in about half the
// instructions (a q4_0 block and row: 1 load, 2 masks, 2 dot products, against 11 operations).
//
// Wasm speed notes (V8 on x86-64, measured): LLVM's instruction combining had to be kept from three rewrites that
// V8 lowers badly (see opaque_mask16, decode5, and the unrolled loops), and values the kernels need as vectors are
// built in registers, never stored as words and reloaded as a vector (k4_scales).
#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>  // clang's header for the wasm SIMD128 instructions (not Emscripten's)
#elif defined(__SSE4_1__)
#include <immintrin.h>
#endif

#include "core/error.h"
#include "kernels/cold.h"  // WF_NO_UNROLL
#include "kernels/kernels.h"
#include "kernels/half4.h"
#include "kernels/quants.h"
#include "kernels/relaxed.h"
#include "kernels/touch.h"

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

// Loops over the four rows, the nibble groups and the octets are unrolled: their shift counts must be constants,
// and their partial sums must stay in registers rather than on the stack (clang left them rolled in wasm).
#if defined(__clang__)
#define WF_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define WF_UNROLL _Pragma("GCC unroll 16")
#else
#define WF_UNROLL
#endif

namespace wf {

bool gemv_quant_computes(dtype t) {
    switch (t) {
    case dtype::q4_0:
    case dtype::q4_1:
    case dtype::q5_0:
    case dtype::q5_1:
    case dtype::iq4_nl:
    case dtype::q2_k:
    case dtype::q3_k:
    case dtype::q4_k:
    case dtype::q5_k:
    case dtype::q6_k: return true;
    default: return false;
    }
}

namespace {
// Out of line, so that no throw sits in the function the hot loops are inlined into.
[[noreturn, gnu::noinline]] void not_computed(dtype t) {
    throw error(std::string("gemv_quant: ") + dtype_name(t) + " is not a block type it computes");
}
}  // namespace

#if defined(__wasm_simd128__) || defined(__SSE4_1__)
namespace {

// --- 128-bit vectors: the few operations the kernels use -----------------------------------------------------
#if defined(__wasm_simd128__)
using V = v128_t;
inline V ld(const void* p) { return wasm_v128_load(p); }
inline V ld_u8x8(const uint8_t* p) { return wasm_u16x8_load8x8(p); }  // 8 bytes → 8 uint16 lanes
inline V and_(V a, V b) { return wasm_v128_and(a, b); }
inline V or_(V a, V b) { return wasm_v128_or(a, b); }
inline V shr16(V a, int n) { return wasm_u16x8_shr(a, uint32_t(n)); }
inline V shl16(V a, int n) { return wasm_i16x8_shl(a, uint32_t(n)); }
inline V set16(int16_t v) { return wasm_i16x8_splat(v); }
inline V set8(int8_t v) { return wasm_i8x16_splat(v); }
inline V sub8(V a, V b) { return wasm_i8x16_sub(a, b); }
inline V set32(int32_t v) { return wasm_i32x4_splat(v); }
inline V make32(int32_t a, int32_t b, int32_t c, int32_t d) { return wasm_i32x4_make(a, b, c, d); }
inline V zero() { return wasm_i32x4_splat(0); }
inline V madd(V a, V b) { return wasm_i32x4_dot_i16x8(a, b); }  // int16 pairs → int32
inline V add32(V a, V b) { return wasm_i32x4_add(a, b); }
inline V sub32(V a, V b) { return wasm_i32x4_sub(a, b); }
inline V mul32(V a, V b) { return wasm_i32x4_mul(a, b); }
inline V shl32(V a, int n) { return wasm_i32x4_shl(a, uint32_t(n)); }
inline V shr32(V a, int n) { return wasm_u32x4_shr(a, uint32_t(n)); }
inline V add8(V a, V b) { return wasm_i8x16_add(a, b); }
inline V sub16(V a, V b) { return wasm_i16x8_sub(a, b); }
inline V zip32_lo(V a, V b) { return wasm_i32x4_shuffle(a, b, 0, 4, 1, 5); }  // a0 b0 a1 b1
inline V zip32_hi(V a, V b) { return wasm_i32x4_shuffle(a, b, 2, 6, 3, 7); }  // a2 b2 a3 b3
inline V shr8_4(V a) { return wasm_u8x16_shr(a, 4); }
inline V lut16(V table, V idx) { return wasm_i8x16_swizzle(table, idx); }  // idx < 16
inline V ext_lo8(V a) { return wasm_i16x8_extend_low_i8x16(a); }
inline V ext_hi8(V a) { return wasm_i16x8_extend_high_i8x16(a); }
inline V ext_lo8u(V a) { return wasm_u16x8_extend_low_u8x16(a); }
inline V ext_hi8u(V a) { return wasm_u16x8_extend_high_u8x16(a); }
inline V eq8(V a, V b) { return wasm_i8x16_eq(a, b); }
inline V make8(const int8_t (&b)[16]) {
    return wasm_i8x16_make(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}
// [Σa, Σb, Σc, Σd] of four int32 vectors
inline V sum4(V a, V b, V c, V d) {
    const V ab = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
    const V cd = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
    return wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
}
inline V cvt(V a) { return wasm_f32x4_convert_i32x4(a); }
inline V fmul(V a, V b) { return wasm_f32x4_mul(a, b); }
inline V fadd(V a, V b) { return wasm_f32x4_add(a, b); }
inline V fsub(V a, V b) { return wasm_f32x4_sub(a, b); }
inline V fset(float v) { return wasm_f32x4_splat(v); }
inline V fld(const float* p) { return wasm_v128_load(p); }
inline V fmake(float a, float b, float c, float d) { return wasm_f32x4_make(a, b, c, d); }
inline void fst(float* p, V v) { wasm_v128_store(p, v); }
inline void st(void* p, V v) { wasm_v128_store(p, v); }
inline V shr8(V a, int n) { return wasm_u8x16_shr(a, uint32_t(n)); }
// c + per int32 lane the sum of 4 products a·b, a int8, b in [0, 127]: relaxed SIMD's int8 dot product
inline V rdot(V a, V b, V c) { return wf_relaxed_dot_i8x16_i7x16_add_s(a, b, c); }
inline V ld_u16x4(const uint8_t* p) { return wasm_u32x4_load16x4(p); }  // 4 uint16 → 4 uint32 lanes
// A store of a row's block sum that the compiler must keep: V8 (TurboFan) otherwise loads all 4 rows' codes of a
// block before their arithmetic, and spills (bench/gemv-layouts.cpp).
inline thread_local volatile V block_sink;
inline void keep(V v) { block_sink = v; }
#else
using V = __m128i;
inline V ld(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline V ld_u8x8(const uint8_t* p) { return _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
inline V and_(V a, V b) { return _mm_and_si128(a, b); }
inline V or_(V a, V b) { return _mm_or_si128(a, b); }
inline V shr16(V a, int n) { return _mm_srl_epi16(a, _mm_cvtsi32_si128(n)); }
inline V shl16(V a, int n) { return _mm_sll_epi16(a, _mm_cvtsi32_si128(n)); }
inline V set16(int16_t v) { return _mm_set1_epi16(v); }
inline V set8(int8_t v) { return _mm_set1_epi8(v); }
inline V sub8(V a, V b) { return _mm_sub_epi8(a, b); }
inline V set32(int32_t v) { return _mm_set1_epi32(v); }
inline V make32(int32_t a, int32_t b, int32_t c, int32_t d) { return _mm_setr_epi32(a, b, c, d); }
inline V zero() { return _mm_setzero_si128(); }
inline V madd(V a, V b) { return _mm_madd_epi16(a, b); }
inline V add32(V a, V b) { return _mm_add_epi32(a, b); }
inline V sub32(V a, V b) { return _mm_sub_epi32(a, b); }
inline V mul32(V a, V b) { return _mm_mullo_epi32(a, b); }
inline V shl32(V a, int n) { return _mm_sll_epi32(a, _mm_cvtsi32_si128(n)); }
inline V shr32(V a, int n) { return _mm_srl_epi32(a, _mm_cvtsi32_si128(n)); }
inline V add8(V a, V b) { return _mm_add_epi8(a, b); }
inline V sub16(V a, V b) { return _mm_sub_epi16(a, b); }
inline V zip32_lo(V a, V b) { return _mm_unpacklo_epi32(a, b); }
inline V zip32_hi(V a, V b) { return _mm_unpackhi_epi32(a, b); }
inline V shr8_4(V a) { return _mm_and_si128(_mm_srli_epi16(a, 4), _mm_set1_epi8(0x0F)); }
inline V lut16(V table, V idx) { return _mm_shuffle_epi8(table, idx); }
inline V ext_lo8(V a) { return _mm_cvtepi8_epi16(a); }
inline V ext_hi8(V a) { return _mm_cvtepi8_epi16(_mm_unpackhi_epi64(a, a)); }
inline V ext_lo8u(V a) { return _mm_cvtepu8_epi16(a); }
inline V ext_hi8u(V a) { return _mm_cvtepu8_epi16(_mm_unpackhi_epi64(a, a)); }
inline V eq8(V a, V b) { return _mm_cmpeq_epi8(a, b); }
inline V make8(const int8_t (&b)[16]) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)); }
inline V sum4(V a, V b, V c, V d) {
    const V ab = _mm_add_epi32(_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b));  // [a0+a2, b0+b2, a1+a3, b1+b3]
    const V cd = _mm_add_epi32(_mm_unpacklo_epi32(c, d), _mm_unpackhi_epi32(c, d));
    return _mm_add_epi32(_mm_unpacklo_epi64(ab, cd), _mm_unpackhi_epi64(ab, cd));
}
inline V cvt(V a) { return _mm_castps_si128(_mm_cvtepi32_ps(a)); }
inline V fmul(V a, V b) { return _mm_castps_si128(_mm_mul_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b))); }
inline V fadd(V a, V b) { return _mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b))); }
inline V fsub(V a, V b) { return _mm_castps_si128(_mm_sub_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b))); }
inline V fset(float v) { return _mm_castps_si128(_mm_set1_ps(v)); }
inline V fld(const float* p) { return _mm_castps_si128(_mm_loadu_ps(p)); }
inline V fmake(float a, float b, float c, float d) { return _mm_castps_si128(_mm_setr_ps(a, b, c, d)); }
inline void fst(float* p, V v) { _mm_storeu_ps(p, _mm_castsi128_ps(v)); }
inline void st(void* p, V v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
inline V shr8(V a, int n) { return _mm_and_si128(_mm_srl_epi16(a, _mm_cvtsi32_si128(n)), _mm_set1_epi8(char(0xFF >> n))); }
// relaxed SIMD's int8 dot product as x86 computes it without VNNI (pmaddubsw: b unsigned × a signed, pairs into
// int16 — no saturation while b ≤ 127 — then pmaddwd by ones): natively only when asked (gemv_quant_as), to test
// the int8 form
inline V rdot(V a, V b, V c) { return _mm_add_epi32(c, _mm_madd_epi16(_mm_maddubs_epi16(b, a), _mm_set1_epi16(1))); }
inline V ld_u16x4(const uint8_t* p) { return _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
inline void keep(V) {}
#endif
// Four finite f16 (a grouped group's scales of one block) as floats, exactly: (h & 0x7fff) << 13 as a float is the
// value·2^-112 (subnormals too), then the sign.
inline V half4_signed(const uint8_t* h) {
    const V v = ld_u16x4(h);
    const V mag = fmul(shl32(and_(v, set32(0x7fff)), 13), fset(0x1p112f));
    return or_(mag, shl32(and_(v, set32(0x8000)), 16));
}

// Per-thread scratch that grows once.
thread_local std::vector<int16_t> xq_buf, xz_buf, bs_buf;
thread_local std::vector<int8_t> x8_buf;
thread_local std::vector<float> xd_buf, wd_buf;
thread_local std::vector<int32_t> xs_buf;
thread_local std::vector<block_q8_0> q8_buf;
thread_local std::vector<block_q8_K> q8k_buf;

// n elements of v, 64-byte aligned, so that the kernels' 16-byte loads of the activations never straddle two cache
// lines (malloc aligns to 8 under Emscripten).
template <class T>
T* grow(std::vector<T>& v, size_t n) {
    const size_t pad = 64 / sizeof(T);
    if (v.size() < n + pad) v.resize(n + pad);
    const size_t misalign = reinterpret_cast<uintptr_t>(v.data()) % 64;
    return v.data() + (misalign ? (64 - misalign) / sizeof(T) : 0);
}

// A 16-bit lane mask the compiler cannot see through. With a constant mask (q & 3 after a shift), LLVM proves the
// lanes fit in bytes, narrows the work to i8x16 and widens it back with byte shuffles that V8 lowers to pshufb
// pairs: q2_K ran at half q3_K's speed in wasm that way.
inline V opaque_mask16(int m) {
    __asm__("" : "+r"(m));
    return set16(int16_t(m));
}

// ===== the 32-value types, against q8_0 activations ==========================================================
// Activations: q (M×K int16), d (M×K/32, the f16 scales widened), s (M×K/32, Σq per block), and for the 4-bit
// types z (M×K int16: per block its first 16 codes, then z_i = q_{16+i} − 16·q_i, i < 16; |z| ≤ 2159).
//
// Why z: a q4_0 / q4_1 byte b = lo + 16·hi holds elements i (lo) and 16 + i (hi) under one scale, so
//   lo·q_i + hi·q_{16+i} = b·q_i + hi·(q_{16+i} − 16·q_i):
// the raw byte needs no mask, only hi a shift — 11 operations per block and row instead of 13.
// The int8 form reads x8 (M×K int8: the same codes as bytes).
struct acts32 {
    const int16_t* q;
    const float* d;
    const int32_t* s;
    const int16_t* z;
    const int8_t* x8;
};

acts32 quantize_acts32(const float* x, int64_t M, int64_t ldx, int64_t K, bool z_form) {
    const int64_t nb = K / 32;
    int16_t* q = grow(xq_buf, size_t(M * K));
    int16_t* z = z_form ? grow(xz_buf, size_t(M * K)) : nullptr;
    float* d = grow(xd_buf, size_t(M * nb));
    int32_t* s = grow(xs_buf, size_t(M * nb));
    int8_t* x8 = grow(x8_buf, size_t(M * K));
    block_q8_0* blocks = grow(q8_buf, size_t(nb));
    for (int64_t m = 0; m < M; ++m) {
        quantize_q8_0(x + m * ldx, K, blocks);
        for (int64_t b = 0; b < nb; ++b) {
            d[m * nb + b] = f16_to_f32(blocks[b].d);
            std::memcpy(x8 + m * K + b * 32, blocks[b].q, 32);
            // O(K) once a call, against the GEMV's O(N·K): rolled (the wasm's size budget)
            int32_t sum = 0;
            WF_NO_UNROLL
            for (int i = 0; i < 32; ++i) q[m * K + b * 32 + i] = blocks[b].q[i], sum += blocks[b].q[i];
            s[m * nb + b] = sum;
            if (z_form) {
                const int16_t* qb = q + m * K + b * 32;
                int16_t* zb = z + m * K + b * 32;
                WF_NO_UNROLL
                for (int i = 0; i < 16; ++i) zb[i] = qb[i], zb[16 + i] = int16_t(qb[16 + i] - 16 * qb[i]);
            }
        }
    }
    return {q, d, s, z, x8};
}

// Each type: its block bytes, decode (four int16 vectors against the activations' four: the 32 codes as elements
// 0–7, 8–15, 16–23, 24–31; z_form types: bytes 0–7, 8–15 and their high nibbles, against the z layout), offset
// (value = d·(q − offset)), and for q4_1 / q5_1 a minimum m (value = d·q + m, the f16 at byte 2). The types with
// an int8 form (int8) have codes8 too: the 32 codes as bytes, elements 0–15 (lo) and 16–31 (hi).
inline void nibbles(const uint8_t* qs, V& lo, V& hi) {
    const V v = ld(qs);
    lo = and_(v, set8(0x0F)), hi = shr8(v, 4);
}
struct t_q4_0 {
    static constexpr int bytes = 18, offset = 8;
    static constexpr bool has_min = false, z_form = true, int8 = true;
    static void decode(const uint8_t* blk, V (&w)[4]) {
        w[0] = ld_u8x8(blk + 2), w[1] = ld_u8x8(blk + 10), w[2] = shr16(w[0], 4), w[3] = shr16(w[1], 4);
    }
    static void codes8(const uint8_t* blk, V& lo, V& hi) { nibbles(blk + 2, lo, hi); }
};
struct t_q4_1 {
    static constexpr int bytes = 20, offset = 0;
    static constexpr bool has_min = true, z_form = true, int8 = false;
    static void decode(const uint8_t* blk, V (&w)[4]) {
        w[0] = ld_u8x8(blk + 4), w[1] = ld_u8x8(blk + 12), w[2] = shr16(w[0], 4), w[3] = shr16(w[1], 4);
    }
};
// q5_0 / q5_1's codes, in bytes then widened: the nibbles of qs (elements j and j + 16 in byte j) or-ed with 16 for
// each set bit of qh (a little-endian uint32: bit e is element e's). Byte e of a vector gets byte e / 8 of qh by a
// byte shuffle and keeps bit e % 8 by a compare with the bit; the selector is built from an opaque 1, else LLVM
// rewrites (b & 2^i) == 2^i as ≠ 0 plus a bitselect, twice the instructions in V8.
inline void codes5(const uint8_t* qs, const uint8_t* qh, V& lo, V& hi) {
    int one = 1;
    __asm__("" : "+r"(one));
    int8_t bit[16], first[16], second[16];
    for (int e = 0; e < 16; ++e) bit[e] = int8_t(one << (e % 8)), first[e] = int8_t(e / 8), second[e] = int8_t(2 + e / 8);
    uint32_t h32;
    std::memcpy(&h32, qh, 4);
    const V sel = make8(bit), all = set32(int32_t(h32)), sixteen = set8(16), low4 = set8(0x0F);
    const V v = ld(qs);
    lo = or_(and_(v, low4), and_(eq8(and_(lut16(all, make8(first)), sel), sel), sixteen));                 // elements 0–15
    hi = or_(and_(shr16(v, 4), low4), and_(eq8(and_(lut16(all, make8(second)), sel), sel), sixteen));     // 16–31
}
inline void widen4(V lo, V hi, V (&w)[4]) { w[0] = ext_lo8u(lo), w[1] = ext_hi8u(lo), w[2] = ext_lo8u(hi), w[3] = ext_hi8u(hi); }
inline void decode5(const uint8_t* qs, const uint8_t* qh, V (&w)[4]) {
    V lo, hi;
    codes5(qs, qh, lo, hi);
    widen4(lo, hi, w);
}
// Grouped q5_0 (dtype.h): row j's codes from its nibbles and the group's fifth bits H, row j's elements l and 16 + l
// at bits 2j and 2j + 1 of byte l — moved to bit 4 by one 16-bit shift (p ≤ 4 left, else right by ≤ 3: bit 4 of
// either byte then comes from its own byte), 10 operations a row and block where codes5 takes 16 and the load of qh.
inline V fifth_bit(V H, int p) { return and_(p <= 4 ? shl16(H, 4 - p) : shr16(H, p - 4), set8(16)); }
inline void codes5_grouped(const uint8_t* qs, V H, int j, V& lo, V& hi) {
    const V v = ld(qs), low4 = set8(0x0F);
    lo = or_(and_(v, low4), fifth_bit(H, 2 * j)), hi = or_(and_(shr16(v, 4), low4), fifth_bit(H, 2 * j + 1));
}
struct t_q5_0 {
    static constexpr int bytes = 22, offset = 16;
    static constexpr bool has_min = false, z_form = false, int8 = true;
    static void decode(const uint8_t* blk, V (&w)[4]) { decode5(blk + 6, blk + 2, w); }
    static void codes8(const uint8_t* blk, V& lo, V& hi) { codes5(blk + 6, blk + 2, lo, hi); }
};
struct t_q5_1 {
    static constexpr int bytes = 24, offset = 0;
    static constexpr bool has_min = true, z_form = false, int8 = false;
    static void decode(const uint8_t* blk, V (&w)[4]) { decode5(blk + 8, blk + 4, w); }
};
// iq4_nl: the 4-bit indices looked up in the 16 levels by a byte shuffle, then sign-extended (its levels are signed:
// no int8 form).
struct t_iq4_nl {
    static constexpr int bytes = 18, offset = 0;
    static constexpr bool has_min = false, z_form = false, int8 = false;
    static void decode(const uint8_t* blk, V (&w)[4]) {
        const V table = ld(kvalues_iq4nl), v = ld(blk + 2);
        const V lo = lut16(table, and_(v, set8(0x0F))), hi = lut16(table, shr8_4(v));
        w[0] = ext_lo8(lo), w[1] = ext_hi8(lo), w[2] = ext_lo8(hi), w[3] = ext_hi8(hi);
    }
};

// S sets of four rows of W at a time (a set's last rows repeat its last real one; only real rows are stored), M rows
// of x. Per block, for each set: each row's Σ q_w·q_x in four int32 lanes (I8: the int8 form), the four rows reduced
// into one vector S, then
//   acc += float(S − offset·Σq_x)·(d_w·d_x)   [+ m_w·(d_x·float(Σq_x))].
// Row j of set t has its blocks read as stored blocks (their codes at + 2, T::decode's offsets) from w[t][j],
// step[t] bytes apart: step = T::bytes for rows as stored; for grouped rows (dtype.h: q4_0, q5_0, iq4_nl) w[t][j]
// points 2 bytes before row j's first codes and step = 4 rows' codes (with several sets only w[t][0] is read: row j's
// codes are step / 4 bytes after row 0's; grouped q5_0's block is its 4 rows' fifth bits, then their nibbles).
// sc[t]: for one set (S = 1) the four rows' scales per block widened beforehand (8 floats a block: their d, then their
// m); for several (grouped rows only) the group's own run of f16 scales (4 a block: finite, so shifted, multiplied by
// 2^112 and the sign or-ed back), widened as they are read. A lane's operations are its row's alone, whatever the
// set's other rows and the other sets are.
template <class T, int M, bool I8, int S>
inline void group4(const acts32& a, const uint8_t* const (&w)[S][4], const int (&step)[S], const void* const (&sc)[S], int nb,
                   touch_ahead* ahead, V (&acc)[S][M]) {
    const int K = nb * 32;
    // one set: each row's pointer, stepped; several (grouped rows): the addresses are constant offsets from w[t][0] and
    // the block's index, so that the S pointers stay in registers (16 stepped pointers in memory, reloaded for every
    // block, left the loads waiting: AMD EPYC Zen 5, Node 20, cache-cold, grouped q4_0 5.0–5.5 GB/s against ~11)
    const uint8_t* p[S == 1 ? 4 : 1][4];
    if constexpr (S == 1)
        for (int j = 0; j < 4; ++j) p[0][j] = w[0][j];
    for (int t = 0; t < S; ++t)
        for (int m = 0; m < M; ++m) acc[t][m] = fset(0.0f);
    // grouped q5_0: a block's 4 rows' fifth bits in one vector, then their nibbles (codes5_grouped)
    constexpr bool bits_grouped = S > 1 && std::is_same_v<T, t_q5_0>;
    for (int b = 0; b < nb; ++b) {
        if constexpr (S == 1) ahead->step(4 * T::bytes);  // several sets (far apart) read no further ahead
        V xv[M][I8 ? 2 : 4];
        for (int m = 0; m < M; ++m)
            for (int i = 0; i < (I8 ? 2 : 4); ++i)
                xv[m][i] = I8 ? ld(a.x8 + m * K + b * 32 + 16 * i) : ld((T::z_form ? a.z : a.q) + m * K + b * 32 + 8 * i);
        WF_UNROLL
        for (int t = 0; t < S; ++t) {
            V s[M][4];
            const uint8_t* const blk4 = w[t][0] + 2 + b * step[t];  // (grouped rows) the block's 4 rows' code bytes
            V H = zero();
            if constexpr (bits_grouped) H = ld(blk4);
            WF_UNROLL
            for (int j = 0; j < 4; ++j) {
                const uint8_t* const at = S == 1 ? p[0][j] : w[t][0] + b * step[t] + j * (step[t] / 4);
                if constexpr (I8) {
                    V lo, hi;
                    if constexpr (bits_grouped) codes5_grouped(blk4 + 16 + 16 * j, H, j, lo, hi);
                    else T::codes8(at, lo, hi);
                    for (int m = 0; m < M; ++m) s[m][j] = rdot(xv[m][1], hi, rdot(xv[m][0], lo, zero()));
                } else {
                    V q[4];
                    if constexpr (bits_grouped) {
                        V lo, hi;
                        codes5_grouped(blk4 + 16 + 16 * j, H, j, lo, hi);
                        widen4(lo, hi, q);
                    } else {
                        T::decode(at, q);
                    }
                    for (int m = 0; m < M; ++m) {
                        s[m][j] = add32(add32(madd(q[0], xv[m][0]), madd(q[1], xv[m][1])), add32(madd(q[2], xv[m][2]), madd(q[3], xv[m][3])));
                        if constexpr (M == 1) keep(s[m][j]);
                    }
                }
                if constexpr (S == 1) p[0][j] += step[0];
            }
            const V dw = S > 1 ? half4_signed(static_cast<const uint8_t*>(sc[t]) + 8 * b) : fld(static_cast<const float*>(sc[t]) + 8 * b);
            for (int m = 0; m < M; ++m) {
                const float dx = a.d[m * nb + b];
                const int32_t sx = a.s[m * nb + b];
                V Sm = sum4(s[m][0], s[m][1], s[m][2], s[m][3]);
                if constexpr (T::offset != 0) Sm = sub32(Sm, set32(T::offset * sx));
                acc[t][m] = fadd(acc[t][m], fmul(cvt(Sm), fmul(dw, fset(dx))));
                if constexpr (T::has_min) acc[t][m] = fadd(acc[t][m], fmul(fld(static_cast<const float*>(sc[t]) + 8 * b + 4), fset(dx * float(sx))));
            }
        }
    }
}

// Rows [n0, n1) of W as stored (gemv_rows gives the kernels of 2 or 3 rows of x a grouped matrix's groups as stored),
// 4 rows at a time, the next 4 read ahead (touch_ahead).
template <class T, int M, bool I8 = false>
void gemv32(const acts32& a, const matrix_view& W, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1) {
    const int64_t nb = W.n_cols / 32;
    float* const wd = grow(wd_buf, size_t(8 * nb));  // per block: the four rows' d, then their m
    for (int64_t n = n0; n < n1; n += 4) {
        const int64_t rows = std::min<int64_t>(4, n1 - n);
        const uint8_t* w[1][4];
        for (int j = 0; j < 4; ++j) w[0][j] = W.row(n + std::min<int64_t>(j, rows - 1));
        for (int64_t b = 0; b < nb; ++b) {
            fst(wd + 8 * b, half4(w[0], b * T::bytes));
            if constexpr (T::has_min) fst(wd + 8 * b + 4, half4(w[0], b * T::bytes + 2));
        }
        touch_ahead ahead(W, n + 4, n1);
        V acc[1][M];
        group4<T, M, I8, 1>(a, w, {T::bytes}, {wd}, int(nb), &ahead, acc);
        for (int m = 0; m < M; ++m) {
            alignas(16) float out[4];
            fst(out, acc[0][m]);
            for (int64_t j = 0; j < rows; ++j) y[m * ldy + n + j] = out[j] + (bias ? bias[n + j] : 0.0f);
        }
    }
}

// One row of x against the whole groups of a grouped q4_0, q5_0 or iq4_nl matrix (dtype.h) that rows [n0, n1) touch
// (a group's rows outside the range computed and not kept): four groups at a time, count / 4 groups apart — four streams far apart in
// W, as the q8_0 and f32 GEMVs read (gemv-q8.cpp), the activations' vectors loaded once for the four. Each group
// front to back: per block its f16 scales (widened as they are read), then the 4 rows' codes side by side (the
// groups of a turn: far_set, kernels/touch.h). wf-bench-kernels blocks (Node, AMD EPYC, GB/s cold / warm, Qwen2.5-0.5B's
// shapes): one group at a time, the next read ahead, 4.6–8.1 / 5.3–8.7; two far apart 7.4–10.3 / 10.2–10.5 (a
// 4864-wide row 7.4–7.8); four 8.9–10.0 / 9.8–10.0. q4_0 decode of GPT-2 small (bench/ab-builds.mjs, 6 rounds):
// 0.917 of the time in Node, 0.938 in Chromium. q5_0 and iq4_nl alike (Zen 5, Node, cold / warm): q5_0 6.1–7.3 /
// 7.1–7.5 as stored → 7.9–8.5 / 8.5–8.8, iq4_nl 5.8–6.4 / 6.3–6.6 → 6.9–7.4 / 7.6–7.7; SmolLM2-135M's shape in
// Q4_K_M (its 576-wide rows are Q5_0: not whole 256-value blocks), 64 tokens decoded: 0.85–0.94 of the time.
template <class T, bool I8>
void gemv_groups(const acts32& a, const matrix_view& W, const float* bias, float* y, int64_t n0, int64_t n1) {
    constexpr int S = 4;
    constexpr int64_t c = T::bytes - 2;  // code bytes of a row's block (q5_0: 20; its 4 rows' 80 as dtype.h says)
    const int64_t nb = W.n_cols / 32, g0 = n0 / row_group, count = (n1 - 1) / row_group - g0 + 1;
    for (int64_t i = 0; i < count / S + (count % S != 0); ++i) {
        const uint8_t* w[S][4];
        const void* sc[S];
        int64_t first[S];
        for (int t = 0; t < S; ++t) {
            first[t] = (g0 + far_set(i, t, S, count)) * row_group;
            const uint8_t* hs = W.row(first[t]);  // the group's f16 scales, then its codes
            sc[t] = hs;
            for (int j = 0; j < 4; ++j) w[t][j] = hs + 2 * row_group * nb + c * j - 2;
        }
        V acc[S][1];
        group4<T, 1, I8, S>(a, w, {4 * c, 4 * c, 4 * c, 4 * c}, sc, int(nb), nullptr, acc);
        for (int t = 0; t < S; ++t) {
            alignas(16) float out[4];
            fst(out, acc[t][0]);
            for (int64_t j = std::max(n0, first[t]); j < std::min(n1, first[t] + 4); ++j) y[j] = out[j - first[t]] + (bias ? bias[j] : 0.0f);
        }
    }
}

// A grouped matrix (dtype.h) against 2 or 3 rows of x: each group of 4 rows back as stored into a buffer that
// stays in L1, then the kernel of rows as stored on it (a copy of the grouped reading in those kernels took the wasm
// over its budget); the rows after the last whole group as they are. Acts: acts32, or actsK (below).
template <class Acts>
void gemv_ungrouped(const Acts& a, const matrix_view& W, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1,
                    void (*kernel)(const Acts&, const matrix_view&, const float*, float*, int64_t, int64_t, int64_t)) {
    const int64_t grouped = grouped_rows(W), rb = row_bytes(W.type, W.n_cols);
    thread_local std::vector<uint8_t> buf;
    uint8_t* rows = grow(buf, size_t(4 * rb));
    for (int64_t n = n0; n < std::min(n1, grouped);) {
        const int64_t first = n / row_group * row_group, last = std::min(n1, first + 4);
        for (int j = 0; j < 4; ++j) row_as_stored(W, first + j, rows + j * rb);
        kernel(a, {W.type, 4, W.n_cols, rows}, bias ? bias + first : nullptr, y + first, ldy, n - first, last - first);
        n = last;
    }
    if (std::max(n0, grouped) < n1) kernel(a, W, bias, y, ldy, std::max(n0, grouped), n1);
}

// ===== the K-quants, against q8_K activations ================================================================
// Activations: q (M×K int16), d (M×K/256), b16 (M×K/16: Σq per 16), b32 (M×K/32: Σq per 32).
struct actsK {
    const int16_t* q;
    const float* d;
    const int16_t* b16;
    const int16_t* b32;
    const int8_t* x8;  // the int8 form's: the codes as bytes (M×K)
};

actsK quantize_actsK(const float* x, int64_t M, int64_t ldx, int64_t K) {
    const int64_t nb = K / qk_k;
    int16_t* q = grow(xq_buf, size_t(M * K));
    float* d = grow(xd_buf, size_t(M * nb));
    int16_t* bs = grow(bs_buf, size_t(M * (K / 16 + K / 32)));
    int16_t *b16 = bs, *b32 = bs + M * (K / 16);
    int8_t* x8 = grow(x8_buf, size_t(M * K));
    block_q8_K* blocks = grow(q8k_buf, size_t(nb));
    for (int64_t m = 0; m < M; ++m) {
        quantize_q8_K(x + m * ldx, K, blocks);
        for (int64_t b = 0; b < nb; ++b) {
            d[m * nb + b] = blocks[b].d;
            std::memcpy(x8 + m * K + b * qk_k, blocks[b].qs, qk_k);
            // the codes widened, and the block's 16 + 8 sums, once a call: rolled (the wasm's size budget)
            WF_NO_UNROLL
            for (int i = 0; i < qk_k; ++i) q[m * K + b * qk_k + i] = blocks[b].qs[i];
            WF_NO_UNROLL
            for (int g = 0; g < 16; ++g) b16[m * (K / 16) + b * 16 + g] = blocks[b].bsums[g];
            WF_NO_UNROLL
            for (int g = 0; g < 8; ++g) b32[m * (K / 32) + b * 8 + g] = int16_t(blocks[b].bsums[2 * g] + blocks[b].bsums[2 * g + 1]);
        }
    }
    return {q, d, b16, b32, x8};
}

// One super-block's activations for M rows: x[m] (its 256 codes; x8[m] as bytes), s16[m] and s32[m] (its 16 and 8
// sums).
template <int M>
struct sb_args {
    const int16_t* x[M];
    const int8_t* x8[M];
    const int16_t* s16[M];
    const int16_t* s32[M];
};
// Each K type's sb(): one super-block of one row of W against M rows → I[m], Mn[m] (int32 lanes that sum to the
// block's I and Mn) and the row's d, dmin.

// q4_K / q5_K's 12 scale bytes → the 8 scale codes (bytes of o[0], o[1]) and 8 min codes (o[2], o[3]): ggml's
// get_scale_min_k4 on 32-bit words. They stay in registers: a vector load of bytes just stored one word at a time
// cannot be forwarded from the stores and waits for them to reach the cache.
inline void k4_scales(const uint8_t* s, uint32_t (&o)[4]) {
    uint32_t u[3];
    std::memcpy(u, s, 12);
    const uint32_t k1 = 0x3f3f3f3f, k2 = 0x0f0f0f0f, k3 = 0x03030303;
    o[0] = u[0] & k1, o[1] = (u[2] & k2) | ((u[0] >> 6) & k3) << 4, o[2] = u[1] & k1, o[3] = ((u[2] >> 4) & k2) | ((u[1] >> 6) & k3) << 4;
}

// q4_K (fifth = false) and q5_K: group 2c is the low nibbles of qs[32c …], group 2c + 1 the high ones.
template <bool fifth>
struct t_k45 {
    static constexpr int bytes = fifth ? 176 : 144;
    // both forms' start of a super-block: d, dmin, the scale and min codes (sm), I = 0 and Mn = Σ_g m_g·Σ q_x
    template <int M>
    static void start(const uint8_t* blk, const sb_args<M>& a, V (&I)[M], V (&Mn)[M], float& d, float& dmin, uint32_t (&sm)[4]) {
        d = half1(blk), dmin = half1(blk + 2);
        k4_scales(blk + 4, sm);
        const V mins = ext_hi8u(make32(int32_t(sm[0]), int32_t(sm[1]), int32_t(sm[2]), int32_t(sm[3])));
        for (int m = 0; m < M; ++m) I[m] = zero(), Mn[m] = madd(mins, ld(a.s32[m]));
    }
    template <int M>
    static void sb(const uint8_t* blk, const sb_args<M>& a, V (&I)[M], V (&Mn)[M], float& d, float& dmin) {
        uint32_t sm[4];
        start(blk, a, I, Mn, d, dmin, sm);
        const uint8_t* qh = blk + 16;
        const uint8_t* qs = blk + (fifth ? 48 : 16);
        const V mask = set16(0x0F), sixteen = set16(16);
        WF_UNROLL
        for (int c = 0; c < 4; ++c) {
            V plo[M], phi[M];
            for (int m = 0; m < M; ++m) plo[m] = phi[m] = zero();
            WF_UNROLL
            for (int i = 0; i < 4; ++i) {
                const V q = ld_u8x8(qs + 32 * c + 8 * i);
                V lo = and_(q, mask), hi = shr16(q, 4);
                if constexpr (fifth) {  // element 32g + l's fifth bit is bit g of qh[l]
                    const V h4 = shl16(ld_u8x8(qh + 8 * i), 4);
                    lo = or_(lo, and_(shr16(h4, 2 * c), sixteen));
                    hi = or_(hi, and_(shr16(h4, 2 * c + 1), sixteen));
                }
                for (int m = 0; m < M; ++m) {
                    plo[m] = add32(plo[m], madd(lo, ld(a.x[m] + 64 * c + 8 * i)));
                    phi[m] = add32(phi[m], madd(hi, ld(a.x[m] + 64 * c + 32 + 8 * i)));
                }
            }
            const V s0 = set32(int32_t(sm[c / 2] >> (16 * (c % 2)) & 0xFF)), s1 = set32(int32_t(sm[c / 2] >> (16 * (c % 2) + 8) & 0xFF));
            for (int m = 0; m < M; ++m) I[m] = add32(I[m], add32(mul32(plo[m], s0), mul32(phi[m], s1)));
        }
    }
    // The int8 form: the same sums, 16 codes a vector as bytes against x8.
    template <int M>
    static void sb8(const uint8_t* blk, const sb_args<M>& a, V (&I)[M], V (&Mn)[M], float& d, float& dmin) {
        uint32_t sm[4];
        start(blk, a, I, Mn, d, dmin, sm);
        const uint8_t* qs = blk + (fifth ? 48 : 16);
        V h[2];
        if constexpr (fifth) h[0] = ld(blk + 16), h[1] = ld(blk + 32);
        WF_UNROLL
        for (int c = 0; c < 4; ++c) {
            V lo[2], hi[2];
            WF_UNROLL
            for (int i = 0; i < 2; ++i) {
                nibbles(qs + 32 * c + 16 * i, lo[i], hi[i]);
                if constexpr (fifth) {  // bit 2c of qh[l] (lo), bit 2c + 1 (hi), moved to bit 4 of each byte
                    const V sixteen = set8(16);
                    lo[i] = or_(lo[i], and_(c < 2 ? shl16(h[i], 4 - 2 * c) : shr16(h[i], 2 * c - 4), sixteen));
                    hi[i] = or_(hi[i], and_(c < 2 ? shl16(h[i], 3 - 2 * c) : shr16(h[i], 2 * c - 3), sixteen));
                }
            }
            const V s0 = set32(int32_t(sm[c / 2] >> (16 * (c % 2)) & 0xFF)), s1 = set32(int32_t(sm[c / 2] >> (16 * (c % 2) + 8) & 0xFF));
            for (int m = 0; m < M; ++m) {
                const int8_t* x = a.x8[m] + 64 * c;
                const V plo = rdot(ld(x + 16), lo[1], rdot(ld(x), lo[0], zero()));
                const V phi = rdot(ld(x + 48), hi[1], rdot(ld(x + 32), hi[0], zero()));
                I[m] = add32(I[m], add32(mul32(plo, s0), mul32(phi, s1)));
            }
        }
    }
};
using t_q4_K = t_k45<false>;
using t_q5_K = t_k45<true>;

// The 16-value-group types share one walk: elements 128h + 32j + 8i + l (l < 8) for j = 0 … 3 come from the same
// bytes, so Code::at(blk, h, i, q) decodes those four octets at once (q[j]); element 128h + 32j + 8i + l is in
// group 8h + 2j + i/2, and per group the partial sums are multiplied by the group's scale.
template <class Code, int M>
inline void walk16(const uint8_t* blk, const int8_t* sc, const sb_args<M>& a, const Code& code, V (&I)[M]) {
    WF_UNROLL
    for (int h = 0; h < 2; ++h)
        WF_UNROLL
        for (int ip = 0; ip < 2; ++ip) {
            V p[4][M];
            for (int j = 0; j < 4; ++j)
                for (int m = 0; m < M; ++m) p[j][m] = zero();
            WF_UNROLL
            for (int i = 2 * ip; i < 2 * ip + 2; ++i) {
                V q[4];
                code.at(blk, h, i, q);
                for (int j = 0; j < 4; ++j)
                    for (int m = 0; m < M; ++m) p[j][m] = add32(p[j][m], madd(q[j], ld(a.x[m] + 128 * h + 32 * j + 8 * i)));
            }
            for (int j = 0; j < 4; ++j) {
                const V s = set32(sc[8 * h + 2 * j + ip]);
                for (int m = 0; m < M; ++m) I[m] = add32(I[m], mul32(p[j][m], s));
            }
        }
}
// Σ_g c_g·s16_g over the 16 groups (int32 lanes), c_g given as two int16 vectors: the offsets' and minimums' sums.
inline V group_sums(V c_lo, V c_hi, const int16_t* s16) { return add32(madd(c_lo, ld(s16)), madd(c_hi, ld(s16 + 8))); }

struct t_q2_K {
    static constexpr int bytes = 84;
    struct code {
        V three = opaque_mask16(3);
        void at(const uint8_t* blk, int h, int i, V (&q)[4]) const {
            const V v = ld_u8x8(blk + 16 + 32 * h + 8 * i);
            for (int j = 0; j < 4; ++j) q[j] = and_(shr16(v, 2 * j), three);
        }
    };
    template <int M>
    static void sb(const uint8_t* blk, const sb_args<M>& a, V (&I)[M], V (&Mn)[M], float& d, float& dmin) {
        d = half1(blk + 80), dmin = half1(blk + 82);
        const V mins = shr8_4(ld(blk));
        for (int m = 0; m < M; ++m) I[m] = zero(), Mn[m] = group_sums(ext_lo8(mins), ext_hi8(mins), a.s16[m]);
        int8_t sc[16];
        for (int g = 0; g < 16; ++g) sc[g] = int8_t(blk[g] & 0xF);
        walk16<code, M>(blk, sc, a, code{}, I);
    }
};

struct t_q3_K {
    static constexpr int bytes = 110;
    struct code {  // low 2 bits + 4·(hmask bit): q + 4 ∈ [0, 7]
        V three = opaque_mask16(3), four = opaque_mask16(4);
        void at(const uint8_t* blk, int h, int i, V (&q)[4]) const {
            const V v = ld_u8x8(blk + 32 + 32 * h + 8 * i), hm = shl16(ld_u8x8(blk + 8 * i), 2);
            for (int j = 0; j < 4; ++j) q[j] = or_(and_(shr16(v, 2 * j), three), and_(shr16(hm, 4 * h + j), four));
        }
    };
    template <int M>
    static void sb(const uint8_t* blk, const sb_args<M>& a, V (&I)[M], V (&Mn)[M], float& d, float& dmin) {
        d = half1(blk + 108), dmin = 0.0f;
        // the 16 six-bit codes from 32-bit words (ggml's kmask trick), then − 32
        uint32_t aux[4];
        std::memcpy(aux, blk + 96, 12);
        const uint32_t k1 = 0x03030303, k2 = 0x0f0f0f0f, tmp = aux[2];
        aux[2] = ((aux[0] >> 4) & k2) | ((tmp >> 4) & k1) << 4;
        aux[3] = ((aux[1] >> 4) & k2) | ((tmp >> 6) & k1) << 4;
        aux[0] = (aux[0] & k2) | (tmp & k1) << 4;
        aux[1] = (aux[1] & k2) | ((tmp >> 2) & k1) << 4;
        const V s8 = sub8(make32(int32_t(aux[0]), int32_t(aux[1]), int32_t(aux[2]), int32_t(aux[3])), set8(32));
        int8_t sc[16];
        for (int g = 0; g < 16; ++g) sc[g] = int8_t(int(aux[g / 4] >> (8 * (g % 4)) & 0xFF) - 32);
        for (int m = 0; m < M; ++m) Mn[m] = zero(), I[m] = mul32(set32(-4), group_sums(ext_lo8(s8), ext_hi8(s8), a.s16[m]));
        walk16<code, M>(blk, sc, a, code{}, I);
    }
};

struct t_q6_K {
    static constexpr int bytes = 210;
    struct code {  // low nibble of ql[64h + 32(j % 2) + l] (its high nibble for j ≥ 2) | bits 2j, 2j + 1 of qh[32h + l] << 4
        V low4 = opaque_mask16(0x0F), bits45 = opaque_mask16(0x30);
        void at(const uint8_t* blk, int h, int i, V (&q)[4]) const {
            const V a = ld_u8x8(blk + 64 * h + 8 * i), b = ld_u8x8(blk + 64 * h + 32 + 8 * i), hq = ld_u8x8(blk + 128 + 32 * h + 8 * i);
            q[0] = or_(and_(a, low4), and_(shl16(hq, 4), bits45));
            q[1] = or_(and_(b, low4), and_(shl16(hq, 2), bits45));
            q[2] = or_(shr16(a, 4), and_(hq, bits45));
            q[3] = or_(shr16(b, 4), and_(shr16(hq, 2), bits45));
        }
    };
    template <int M>
    static void sb(const uint8_t* blk, const sb_args<M>& a, V (&I)[M], V (&Mn)[M], float& d, float& dmin) {
        d = half1(blk + 208), dmin = 0.0f;
        const V s8 = ld(blk + 192);
        for (int m = 0; m < M; ++m) Mn[m] = zero(), I[m] = mul32(set32(-32), group_sums(ext_lo8(s8), ext_hi8(s8), a.s16[m]));
        walk16<code, M>(blk, reinterpret_cast<const int8_t*>(blk + 192), a, code{}, I);
    }
    // The int8 form: element 128h + 32j + l as a byte, 16 a vector — one vector is one group, 8h + 2j + l / 16.
    template <int M>
    static void sb8(const uint8_t* blk, const sb_args<M>& a, V (&I)[M], V (&Mn)[M], float& d, float& dmin) {
        d = half1(blk + 208), dmin = 0.0f;
        const V s8 = ld(blk + 192), low4 = set8(0x0F), bits45 = set8(0x30);
        const int8_t* sc = reinterpret_cast<const int8_t*>(blk + 192);
        for (int m = 0; m < M; ++m) Mn[m] = zero(), I[m] = mul32(set32(-32), group_sums(ext_lo8(s8), ext_hi8(s8), a.s16[m]));
        WF_UNROLL
        for (int h = 0; h < 2; ++h)
            WF_UNROLL
            for (int i = 0; i < 2; ++i) {
                const V ql0 = ld(blk + 64 * h + 16 * i), ql1 = ld(blk + 64 * h + 32 + 16 * i), hq = ld(blk + 128 + 32 * h + 16 * i);
                // bytes: the 16-bit shifts move no bit of one byte into the other's kept bits
                const V q[4] = {or_(and_(ql0, low4), and_(shl16(hq, 4), bits45)), or_(and_(ql1, low4), and_(shl16(hq, 2), bits45)),
                                or_(and_(shr16(ql0, 4), low4), and_(hq, bits45)), or_(and_(shr16(ql1, 4), low4), and_(shr16(hq, 2), bits45))};
                WF_UNROLL
                for (int j = 0; j < 4; ++j) {
                    const V s = set32(sc[8 * h + 2 * j + i]);
                    for (int m = 0; m < M; ++m) I[m] = add32(I[m], mul32(rdot(ld(a.x8[m] + 128 * h + 32 * j + 16 * i), q[j], zero()), s));
                }
            }
    }
};

// Four rows of W at a time, M rows of x; per super-block
//   acc += float(I)·(d·d_x) − float(Mn)·(dmin·d_x),
// I = Σ_g sc_g·Σ (q − offset)·q_x and Mn = Σ_g m_g·Σ q_x, reduced for the four rows at once.
template <class T, int M, bool I8 = false>
void gemvK(const actsK& a, const matrix_view& W, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1) {
    const int64_t K = W.n_cols, nb = K / qk_k;
    for (int64_t n = n0; n < n1; n += 4) {
        const int64_t rows = std::min<int64_t>(4, n1 - n);
        const uint8_t* w[4];
        for (int j = 0; j < 4; ++j) w[j] = W.row(n + std::min<int64_t>(j, rows - 1));
        touch_ahead ahead(W, n + 4, n1);
        V acc[M];
        for (int m = 0; m < M; ++m) acc[m] = fset(0.0f);
        for (int64_t b = 0; b < nb; ++b) {
            ahead.step(4 * T::bytes);
            sb_args<M> args;
            for (int m = 0; m < M; ++m) {
                args.x[m] = a.q + m * K + b * qk_k;
                args.x8[m] = a.x8 + m * K + b * qk_k;
                args.s16[m] = a.b16 + m * (K / 16) + b * 16;
                args.s32[m] = a.b32 + m * (K / 32) + b * 8;
            }
            V I[4][M], Mn[4][M];
            float d[4], dmin[4];
            // a loop, not unrolled: four copies of a super-block's code in one loop body left V8 (Node 20) spilling, and
            // the loop runs Q4_K's GEMV 1.6× and Q6_K's 1.9× as fast in wasm (wf-bench-kernels blocks), in a quarter of the code
            for (int j = 0; j < 4; ++j)
                if constexpr (I8) T::template sb8<M>(w[j] + b * T::bytes, args, I[j], Mn[j], d[j], dmin[j]);
                else T::template sb<M>(w[j] + b * T::bytes, args, I[j], Mn[j], d[j], dmin[j]);
            const V dv = fmake(d[0], d[1], d[2], d[3]), dmv = fmake(dmin[0], dmin[1], dmin[2], dmin[3]);
            for (int m = 0; m < M; ++m) {
                const V dx = fset(a.d[m * nb + b]);
                const V Iv = sum4(I[0][m], I[1][m], I[2][m], I[3][m]), Mv = sum4(Mn[0][m], Mn[1][m], Mn[2][m], Mn[3][m]);
                acc[m] = fadd(acc[m], fsub(fmul(cvt(Iv), fmul(dv, dx)), fmul(cvt(Mv), fmul(dmv, dx))));
            }
        }
        for (int m = 0; m < M; ++m) {
            alignas(16) float out[4];
            fst(out, acc[m]);
            for (int64_t j = 0; j < rows; ++j) y[m * ldy + n + j] = out[j] + (bias ? bias[n + j] : 0.0f);
        }
    }
}

// A grouped q4_K matrix (dtype.h: per super-block the 4 rows' d, dmin and scale words side by side, then 8 units of
// 16 code bytes per row, each unit two sub-blocks' elements r and 16 + r in a byte, 4 bytes of one then 4 of the
// other) against one row of x, in the int16 form (dtype.cpp groups q4_K only where the GEMV takes that form). The
// activations are laid out once per call as the units read them (acts_k4): per unit the codes of its low nibbles'
// elements (x) and z = q_hi − 16·q_lo, as q4_0's z form (the raw byte b = lo + 16·hi times q_lo, plus hi times z, is
// lo·q_lo + hi·q_hi: no mask). So a unit's products land in int32 lanes of one sub-block each (A, A, B, B), one
// multiply by the lanes' scale codes per two units, and the scale and min codes of the 4 rows are unpacked side by
// side (ggml's get_scale_min_k4 on the 4 rows' words at once). The sums are those of gemvK, bit for bit.
// wf-bench-kernels blocks Q4_K (Node, AMD EPYC Zen 5, GB/s cold / warm, two runs): 896 × 4864 5.9–6.0 / 9.0–9.1 as
// stored → 11.1–11.2 / 11.5–11.6 grouped; 2304 × 768 7.2 / 8.6–8.7 → 10.7–11.0 / 10.9–11.3.
struct acts_k4 {
    const int16_t* x;  // K / 2: per super-block and unit, 16 lanes
    const int16_t* z;
    const int16_t* B;  // per super-block 32: (Σq_0, Σq_2) × 4, (Σq_1, Σq_3) × 4, (Σq_4, Σq_6) × 4, (Σq_5, Σq_7) × 4 (Σ per 32)
};

acts_k4 permute_acts_k4(const actsK& a, int64_t K) {
    thread_local std::vector<int16_t> xb, zb, bb;
    int16_t *x = grow(xb, size_t(K / 2)), *z = grow(zb, size_t(K / 2)), *B = grow(bb, size_t(K / 8));
    for (int64_t k = 0; k < K; k += 64) {  // sub-blocks A and B: unit u's 4-byte runs are A's and B's runs 2u and 2u + 1
        const int8_t* q = a.x8 + k;
        const V a_lo = ld(q), a_hi = ld(q + 16), b_lo = ld(q + 32), b_hi = ld(q + 48);
        for (int u = 0; u < 2; ++u) {
            const V l = u ? zip32_hi(a_lo, b_lo) : zip32_lo(a_lo, b_lo), h = u ? zip32_hi(a_hi, b_hi) : zip32_lo(a_hi, b_hi);
            const int64_t i = k / 2 + 16 * u;  // per super-block 8 units of 16
            const V l0 = ext_lo8(l), l1 = ext_hi8(l);
            st(x + i, l0), st(x + i + 8, l1);
            st(z + i, sub16(ext_lo8(h), shl16(l0, 4))), st(z + i + 8, sub16(ext_hi8(h), shl16(l1, 4)));
        }
    }
    for (int64_t b = 0; b < K / qk_k; ++b) {  // 32 values a super-block, once a call: rolled (the wasm's size budget)
        const int16_t* s32 = a.b32 + b * 8;
        WF_NO_UNROLL
        for (int v = 0; v < 4; ++v)
            WF_NO_UNROLL
            for (int l = 0; l < 8; ++l) B[32 * b + 8 * v + l] = s32[4 * (v / 2) + v % 2 + 2 * (l % 2)];
    }
    return {x, z, B};
}

// The whole groups that rows [n0, n1) touch, one after the other, each super-block in turn: unit by unit (a loop), the
// unit's activations loaded once and the 4 rows' codes against them (unrolled: 4 int32 sums in registers), every two
// units (a pair of sub-blocks) the 4 sums scaled by their rows' scale codes; then the rows' sums reduced and scaled as
// gemvK's. It was row by row (the activations reloaded per row from L1: 18 operations a unit and row against 14; an
// earlier try at two rows sharing them, units unrolled, spilled): wf-bench-kernels blocks Q4_K g4 (Node, AMD EPYC,
// cache-cold, three runs alternating) 10.7–11.7 → 13.0–14.1 GB/s; GPT-2 small's q4_k decode (8-token prompt + 32,
// WF_AB_ONLY="q4_k decode" node bench/ab-builds.mjs, Node, 10 rounds) 0.888 of the time. One group at a time: GPT-2
// small's q4_k decode (an 8-word prompt and 64 tokens, 128 before; Node, Zen 5) took 0.90 of the time it took with 8
// groups far apart as the other grouped kernels read (4: 1.3), though wf-bench-kernels blocks had 8 at 10.4–10.6 GB/s
// cache-cold against 9.3–9.7; reading the next group ahead (touch_ahead) changed nothing.
void gemvK4_groups(const actsK& a, const acts_k4& g, const matrix_view& W, const float* bias, float* y, int64_t n0, int64_t n1) {
    constexpr int64_t block = 4 * 144;
    const int64_t nb = W.n_cols / qk_k;
    // the swizzle that gives row 0's scale codes of pair c % 2 of a word in the lanes of a unit's sums (0x80: a zero
    // byte, in wasm and SSE alike; + 4j: row j's)
    constexpr int8_t Z = int8_t(0x80);
    constexpr int8_t pick[2][16] = {{0, Z, Z, Z, 0, Z, Z, Z, 1, Z, Z, Z, 1, Z, Z, Z}, {2, Z, Z, Z, 2, Z, Z, Z, 3, Z, Z, Z, 3, Z, Z, Z}};
    const V pick0 = make8(pick[0]), pick1 = make8(pick[1]);
    for (int64_t first = n0 / row_group * row_group; first < n1; first += row_group) {
        const uint8_t* const at = W.row(first);
        V acc = fset(0.0f);
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t* h = at + b * block;
            const int16_t* B = g.B + 32 * b;
            const int64_t k0 = b * qk_k / 2;
            const V u0 = ld(h + 16), u1 = ld(h + 32), u2 = ld(h + 48);
            const V k1 = set32(0x3f3f3f3f), k2 = set32(0x0f0f0f0f), k3 = set32(0x03030303), ff = set16(0xFF);
            const V sc[2] = {and_(u0, k1), or_(and_(u2, k2), shl32(and_(shr32(u0, 6), k3), 4))};
            const V mn0 = and_(u1, k1), mn1 = or_(and_(shr32(u2, 4), k2), shl32(and_(shr32(u1, 6), k3), 4));
            const V Mn = add32(add32(madd(and_(mn0, ff), ld(B)), madd(shr16(mn0, 8), ld(B + 8))),
                               add32(madd(and_(mn1, ff), ld(B + 16)), madd(shr16(mn1, 8), ld(B + 24))));
            V I[4] = {zero(), zero(), zero(), zero()};
            WF_NO_UNROLL
            for (int c = 0; c < 4; ++c) {
                V p[4] = {zero(), zero(), zero(), zero()};
                WF_NO_UNROLL
                for (int u = 2 * c; u < 2 * c + 2; ++u) {
                    const int64_t k = k0 + 16 * u;
                    const V x0 = ld(g.x + k), z0 = ld(g.z + k), x1 = ld(g.x + k + 8), z1 = ld(g.z + k + 8);
                    WF_UNROLL
                    for (int j = 0; j < 4; ++j) {
                        const uint8_t* q = h + 64 + 64 * u + 16 * j;
                        const V w0 = ld_u8x8(q), w1 = ld_u8x8(q + 8);
                        p[j] = add32(p[j], add32(add32(madd(w0, x0), madd(shr16(w0, 4), z0)), add32(madd(w1, x1), madd(shr16(w1, 4), z1))));
                    }
                }
                const V s = c < 2 ? sc[0] : sc[1], sel = c % 2 ? pick1 : pick0;
                WF_UNROLL
                for (int j = 0; j < 4; ++j) I[j] = add32(I[j], mul32(p[j], lut16(s, add8(sel, set8(int8_t(4 * j))))));
            }
            const V Iv = sum4(I[0], I[1], I[2], I[3]);
            const V dv = half4_signed(h), dmv = half4_signed(h + 8);
            acc = fadd(acc, fsub(fmul(cvt(Iv), fmul(dv, fset(a.d[b]))), fmul(cvt(Mn), fmul(dmv, fset(a.d[b])))));
        }
        alignas(16) float out[4];
        fst(out, acc);
        for (int64_t j = std::max(n0, first); j < std::min(n1, first + 4); ++j) y[j] = out[j - first] + (bias ? bias[j] : 0.0f);
    }
}

// Each block type's kernel for M rows is a function of its own in the wasm, reached through a table of pointers
// the compiler must read (volatile): wasm-opt inlines every function that has one caller, and all thirty kernels
// inlined into gemv_quant made one 224 KB function (see matmul.cpp's p_gemm_q8 and README's build notes).
using kernel32 = void (*)(const acts32&, const matrix_view&, const float*, float*, int64_t, int64_t, int64_t);
using kernelK = void (*)(const actsK&, const matrix_view&, const float*, float*, int64_t, int64_t, int64_t);
// q4_1 and q5_1 (a minimum per block; rare in today's files) have no kernel for 3 rows of x: they take 2 a pass, so
// that the wasm stays within its budget (tests/js/pack.test.mjs)
template <class T, int M>
constexpr kernel32 kernel32_of() {
    if constexpr (T::has_min && M == 3) return nullptr;
    else return &gemv32<T, M>;
}
constexpr bool has_min32(dtype t) { return t == dtype::q4_1 || t == dtype::q5_1; }
template <int M>
kernel32 volatile k32[5] = {kernel32_of<t_q4_0, M>(), kernel32_of<t_q4_1, M>(), kernel32_of<t_q5_0, M>(), kernel32_of<t_q5_1, M>(),
                            kernel32_of<t_iq4_nl, M>()};
// q2_K (rare: llama.cpp's Q2_K files, the smallest and least accurate) has no kernel for 2 rows of x: it takes one a
// pass, 1.7 KB less of the wasm's budget (prompts of 2 to 15 tokens read its matrices once a token, not once every two)
template <class T, int M>
constexpr kernelK kernelK_of() {
    if constexpr (std::is_same_v<T, t_q2_K> && M == 2) return nullptr;
    else return &gemvK<T, M>;
}
template <int M>
kernelK volatile kK[5] = {kernelK_of<t_q2_K, M>(), &gemvK<t_q3_K, M>, &gemvK<t_q4_K, M>, &gemvK<t_q5_K, M>, &gemvK<t_q6_K, M>};
// the int8 form's (nullptr: the type has none), for one row of x only (see the top of this file)
template <class T, int M>
constexpr kernel32 int8_kernel() {
    if constexpr (T::int8 && M == 1) return &gemv32<T, M, true>;
    else return nullptr;
}
template <class T, int M>
constexpr kernelK int8_kernelK() {
    if constexpr (M == 1) return &gemvK<T, M, true>;
    else return nullptr;
}
template <int M>
kernel32 volatile k32_i8[5] = {int8_kernel<t_q4_0, M>(), int8_kernel<t_q4_1, M>(), int8_kernel<t_q5_0, M>(), int8_kernel<t_q5_1, M>(),
                               int8_kernel<t_iq4_nl, M>()};
// The grouped kernels (one row of x), in k32's order, [int16 form, int8 form]: q4_1 and q5_1 are never grouped
// (dtype.h: group_rows_layout); iq4_nl has no int8 form.
using kernel_groups = void (*)(const acts32&, const matrix_view&, const float*, float*, int64_t, int64_t);
kernel_groups volatile k32_groups[5][2] = {{&gemv_groups<t_q4_0, false>, &gemv_groups<t_q4_0, true>}, {},
                                           {&gemv_groups<t_q5_0, false>, &gemv_groups<t_q5_0, true>}, {},
                                           {&gemv_groups<t_iq4_nl, false>, &gemv_groups<t_iq4_nl, false>}};
// the grouped q4_K's (one row of x; either form asked for)
void (*volatile kK4_groups)(const actsK&, const acts_k4&, const matrix_view&, const float*, float*, int64_t, int64_t) = &gemvK4_groups;
template <int M>
kernelK volatile kK_i8[5] = {nullptr, nullptr, int8_kernelK<t_q4_K, M>(), int8_kernelK<t_q5_K, M>(), int8_kernelK<t_q6_K, M>()};

template <int M>
void gemv_rows(const float* x, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1,
               bool int8) {
    const int64_t K = W.n_cols;
    if constexpr (M < 3) if (traits(W.type).block == qk_k) {  // (no K-quant kernel for 3 rows: gemv_quant_form)
        const actsK a = quantize_actsK(x, M, ldx, K);
        int i = 4;  // q6_K
        switch (W.type) {
        case dtype::q2_k: i = 0; break;
        case dtype::q3_k: i = 1; break;
        case dtype::q4_k: i = 2; break;
        case dtype::q5_k: i = 3; break;
        default: break;
        }
        const kernelK k = int8 && kK_i8<M>[i] ? kK_i8<M>[i] : kK<M>[i];
        if (M > 1 && W.grouped) return gemv_ungrouped(a, W, bias, y, ldy, n0, n1, k);
        if constexpr (M == 1) {  // a grouped q4_K's whole groups, then the rows after them as stored
            const int64_t g = std::min(n1, grouped_rows(W));
            if (n0 < g) kK4_groups(a, permute_acts_k4(a, K), W, bias, y, n0, g);
            n0 = std::max(n0, g);
        }
        if (n0 < n1) k(a, W, bias, y, ldy, n0, n1);
        return;
    }
    const acts32 a = quantize_acts32(x, M, ldx, K, W.type == dtype::q4_0 || W.type == dtype::q4_1);
    int i = 4;  // iq4_nl
    switch (W.type) {
    case dtype::q4_0: i = 0; break;
    case dtype::q4_1: i = 1; break;
    case dtype::q5_0: i = 2; break;
    case dtype::q5_1: i = 3; break;
    default: break;
    }
    const kernel32 k = int8 && k32_i8<M>[i] ? k32_i8<M>[i] : k32<M>[i];
    if (M > 1 && W.grouped) return gemv_ungrouped(a, W, bias, y, ldy, n0, n1, k);
    if constexpr (M == 1) {  // a grouped matrix's whole groups (q4_0, q5_0, iq4_nl), then the rows after them as stored
        const int64_t g = std::min(n1, grouped_rows(W));
        if (n0 < g) k32_groups[i][int8](a, W, bias, y, n0, g);
        n0 = std::max(n0, g);
    }
    if (n0 < n1) k(a, W, bias, y, ldy, n0, n1);
}

}  // namespace

void gemv_quant_form(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
                     int64_t n_begin, int64_t n_end, bool int8) {
    if (!gemv_quant_computes(W.type)) not_computed(W.type);
    if (M <= 0 || n_begin >= n_end) return;
#if defined(__wasm_simd128__)
    int8 = int8 && relaxed_simd();  // the plain instance has no int8 dot product (its placeholder must not be called)
#endif
    // three rows of x per pass over W (more would spill the accumulators); two for q4_1 and q5_1, and for the K-quants,
    // whose kernels for 3 rows measured no faster than 2 + 1 (q4_K) to 10 % faster at 9–15 rows (q6_K; the prompts
    // under 16 tokens), in Node, 2048 × 2048, while their 5 functions were 9.8 KB of the wasm's gzipped 400 (its budget)
    const int64_t per_pass = W.type == dtype::q2_k ? 1 : has_min32(W.type) || traits(W.type).block == qk_k ? 2 : 3;
    for (int64_t m = 0; m < M; m += per_pass) {
        const float* xm = x + m * ldx;
        float* ym = y + m * ldy;
        switch (std::min<int64_t>(per_pass, M - m)) {
        case 3: gemv_rows<3>(xm, ldx, W, bias, ym, ldy, n_begin, n_end, int8); break;
        case 2: gemv_rows<2>(xm, ldx, W, bias, ym, ldy, n_begin, n_end, int8); break;
        default: gemv_rows<1>(xm, ldx, W, bias, ym, ldy, n_begin, n_end, int8); break;
        }
    }
}

// Whether the int8 form runs here: where relaxed SIMD's int8 dot product with accumulation is one instruction
// (kernels/relaxed.h, relaxed_dot_fused: x86 with AVX-VNNI, Arm). V8 makes it five on x86 without AVX-VNNI
// (pmaddubsw, pmaddwd by ones made anew, paddd), and there the int16 form is the faster: on an AMD EPYC (Zen 4:
// AVX-512 VNNI, no AVX-VNNI) in Chromium GPT-2 small's q4_0 decode took 0.906 of the time in int16 (bench/ab-builds.mjs, 5 rounds);
// a q4_0 GEMV of 256 × 2048, grouped, 0.95 ms in int16 against 1.1–1.3 in int8; q4_K's int16 form, grouped
// (group_rows_pays), 0.92 against 1.31 for its int8 form, which reads the rows as stored (GPT-2 small's q4_k decode
// at 130 against 96 tok/s in npm run bench). The two forms give the same results bit for bit: the choice changes the
// speed only. It was timed once per type on first use (both forms on zero weights, ~8 ms), but Chromium then runs
// much of the engine in its baseline compiler, whose code took up to 2.6 times as long as the optimized one, and the
// answer changed from page to page (q4_0: int16 2.50 / int8 1.18 ms in one, 0.95 / 2.35 in the next).
bool gemv_quant_int8(dtype t) {
    switch (t) {
    case dtype::q5_0: return relaxed_simd();  // (faster in int8 without AVX-VNNI too: SmolLM2-135M's shape in Q4_K_M,
                                              // mostly q5_0 matrices, decoded in 0.98 of the time on Zen 4)
    case dtype::q4_0:
    case dtype::q4_k:
    case dtype::q5_k:
    case dtype::q6_k: return relaxed_dot_fused();
    default: return false;
    }
}

void gemv_quant(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
                int64_t n_begin, int64_t n_end) {
    gemv_quant_form(x, M, ldx, W, bias, y, ldy, n_begin, n_end, M == 1 && gemv_quant_int8(W.type));
}

#else  // no SIMD the kernels know: the scalar twin

void gemv_quant_form(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
                     int64_t n_begin, int64_t n_end, bool) {
    if (!gemv_quant_computes(W.type)) not_computed(W.type);
    ref::gemv_quant(x, M, ldx, W, bias, y, ldy, n_begin, n_end);
}

bool gemv_quant_int8(dtype) { return false; }

void gemv_quant(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
                int64_t n_begin, int64_t n_end) {
    gemv_quant_form(x, M, ldx, W, bias, y, ldy, n_begin, n_end, false);
}

#endif

}  // namespace wf
