// llama.cpp's (ggml's) block types beyond q8_0 and q4_0: their blocks byte by byte, their scalar conversions (the
// rows of dtype.h's table) and the integer GEMV that computes them and q4_0 (decode, and up to 15 rows of activations).
//
// Every type here is a row of 32- or 256-value blocks (a block never spans two rows). Each block stores small
// unsigned codes q and the scales that turn them into values; the formulas are in the structs' comments, written as
// ggml's dequantize_row_* computes them (the order of the float operations is part of the definition: the tests
// compare the dequantized floats bit for bit with tools/reference/ggml_quants.py's vectors).
//
// How matmul computes them (as llama.cpp does): the activations are quantized per row — to q8_0 (blocks of 32,
// f16 scale) for the 32-value types, to q8_K (blocks of 256, float scale, sums of every 16 codes) for the K-quants —
// and each block's dot product runs in integers: Σ q_w·q_x, then one float multiply by the two scales per block.
// A constant offset (q − 8 in q4_0) or a block minimum (q4_1, q2_K, q4_K, q5_K) comes out of the sum as
// offset·Σq_x, which is why the activations carry their block sums.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace wf {

constexpr int qk_k = 256;  // values per K-quant super-block

// q4_1: x = d·q + m, q ∈ [0, 15]; byte j of qs holds element j (low nibble) and j + 16 (high nibble).
struct block_q4_1 {
    uint16_t d, m;  // f16 scale and minimum
    uint8_t qs[16];
};
// q5_0: x = d·(q − 16), q = nibble | bit << 4 ∈ [0, 31]; qh (little-endian uint32) bit j is element j's fifth bit.
struct block_q5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[16];
};
// q5_1: x = d·q + m, q ∈ [0, 31], nibbles and fifth bits as q5_0.
struct block_q5_1 {
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[16];
};
// iq4_nl: x = d·kvalues_iq4nl[i], i a 4-bit index packed as q4_0's nibbles.
struct block_iq4_nl {
    uint16_t d;
    uint8_t qs[16];
};
extern const int8_t kvalues_iq4nl[16];  // −127 −104 −83 −65 −49 −35 −22 −10 1 13 25 38 53 69 89 113

// q2_K: 16 groups of 16; x = (d·sc)·q − (dmin·m), q ∈ [0, 3], sc = scales[g] & 15, m = scales[g] >> 4.
// qs byte 32h + l holds elements 128h + l, +32, +64, +96 in bits 0–1, 2–3, 4–5, 6–7 (h = 0, 1; l < 32).
struct block_q2_K {
    uint8_t scales[16];
    uint8_t qs[64];
    uint16_t d, dmin;
};
// q3_K: 16 groups of 16; x = (d·(code − 32))·(low2 − (hmask bit ? 0 : 4)); low2 packed as q2_K's qs; element e's
// hmask bit is bit e / 32 of byte e % 32; the 16 six-bit codes: low 4 bits in scales[0..7] (code j < 8 in the low
// nibble of byte j, code j ≥ 8 in the high nibble of byte j − 8), top 2 bits in scales[8 + j % 4] at bit 2·(j / 4).
struct block_q3_K {
    uint8_t hmask[32];
    uint8_t qs[64];
    uint8_t scales[12];
    uint16_t d;
};
// q4_K: 8 groups of 32; x = (d·sc)·q − (dmin·m), q ∈ [0, 15], sc and m six bits each (get_scale_min_k4); qs byte
// 32c + l holds element 64c + l (low nibble) and 64c + 32 + l (high nibble).
struct block_q4_K {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qs[128];
};
// q5_K: as q4_K with q ∈ [0, 31]: element e's fifth bit is bit e / 32 of qh[e % 32].
struct block_q5_K {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qh[32];
    uint8_t qs[128];
};
// q6_K: 16 groups of 16; x = (d·scales[g])·(q − 32), q ∈ [0, 63] (signed int8 scales); for half h, l < 32:
// ql[64h + l] = low4(128h + l) | low4(128h + l + 64) << 4, ql[64h + 32 + l] = low4(+32) | low4(+96) << 4,
// qh[32h + l] = the top 2 bits of elements 128h + l, +32, +64, +96 in bits 0–1, 2–3, 4–5, 6–7.
struct block_q6_K {
    uint8_t ql[128];
    uint8_t qh[64];
    int8_t scales[16];
    uint16_t d;
};
// q8_K: the K-quants' activations (never stored in a model): x = d·q, d a float; bsums[g] = Σ q over 16 values.
struct block_q8_K {
    float d;
    int8_t qs[qk_k];
    int16_t bsums[qk_k / 16];
};
static_assert(sizeof(block_q4_1) == 20 && sizeof(block_q5_0) == 22 && sizeof(block_q5_1) == 24 && sizeof(block_iq4_nl) == 18);
static_assert(sizeof(block_q2_K) == 84 && sizeof(block_q3_K) == 110 && sizeof(block_q4_K) == 144 && sizeof(block_q5_K) == 176 &&
              sizeof(block_q6_K) == 210 && sizeof(block_q8_K) == 292, "block sizes as in GGUF");

// q4_K / q5_K's 12 scale bytes → scale code and min code of group j (ggml's get_scale_min_k4).
inline void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = uint8_t((q[j + 4] & 0xF) | (q[j - 4] >> 6) << 4);
        m = uint8_t((q[j + 4] >> 4) | (q[j] >> 6) << 4);
    }
}

// --- the table's conversions (scalar: the reference) ---------------------------------------------------------
// to_f32: ggml's dequantize_row_*, bit for bit. from_f32: ggml's quantize_row_*_ref, byte for byte where the float
// operations are not contracted into fused multiply-adds (the reference's own condition: tools/reference/
// ggml_quants.py); iq4_nl's all-zero blocks keep the previous block's indices, as llama.cpp leaves them.
// to_q8_0: exact re-blocking, for the types whose values are d·(a whole number in [−127, 127]) per 32.
#define WF_QUANT_CONVERSIONS(t)                                  \
    void t##_to_f32(const uint8_t* src, float* dst, int64_t n); \
    void t##_from_f32(const float* src, uint8_t* dst, int64_t n);
WF_QUANT_CONVERSIONS(q4_1)
WF_QUANT_CONVERSIONS(q5_0)
WF_QUANT_CONVERSIONS(q5_1)
WF_QUANT_CONVERSIONS(iq4_nl)
WF_QUANT_CONVERSIONS(q2_K)
WF_QUANT_CONVERSIONS(q3_K)
WF_QUANT_CONVERSIONS(q4_K)
WF_QUANT_CONVERSIONS(q5_K)
WF_QUANT_CONVERSIONS(q6_K)
#undef WF_QUANT_CONVERSIONS
void q5_0_to_q8_0(const uint8_t* src, uint8_t* dst, int64_t n);
void iq4_nl_to_q8_0(const uint8_t* src, uint8_t* dst, int64_t n);
// to_codes32 (dtype.h): codes, scales and minimums per 32 values.
void q4_1_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n);
void q5_1_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n);
void q4_K_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n);
void q5_K_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n);
// to_codes16 (dtype.h): codes and scales per 16 values.
void q3_K_to_codes16(const uint8_t* src, int8_t* q, float* d, int64_t n);
void q6_K_to_codes16(const uint8_t* src, int8_t* q, float* d, int64_t n);

// One K-quant super-block's whole-number scales: value = d·sc[g]·(q − offset) − dmin·mn[g] per group g of 32 values
// (q4_K, q5_K: 8 groups, q ∈ [0, 31], sc and mn six bits) or 16 (q3_K: sc ∈ [−32, 31], q − 4 ∈ [−4, 3]; q6_K: sc an
// int8, q − 32 ∈ [−32, 31]; 16 groups, no minimums: mn untouched, dmin = 0) — the integer form of gemv_quant's sums,
// which the K-quants' prefill tile multiplies into its codes. q2_K is not one of them (it throws).
void k_scales(dtype t, const uint8_t* blk, int16_t* sc, int16_t* mn, float& d, float& dmin);

// n floats (a multiple of 256) → q8_K blocks, as ggml's quantize_row_q8_K_ref: d = 1/(−127/max) (max: the value
// of largest magnitude, signed, the first on ties), q = min(127, nearest_int(x·(−127/max))), the 16 sums; whole
// numbers from the 1.5·2^23 trick (no lrint). SIMD (rowwise.cpp: the K-quants' prefill quantizes every row of x with
// it); ref::quantize_q8_K is its scalar twin, the same bytes.
void quantize_q8_K(const float* x, int64_t n, block_q8_K* out);
namespace ref {
void quantize_q8_K(const float* x, int64_t n, block_q8_K* out);
}

// --- the integer GEMV -------------------------------------------------------------------------------------------
// True when gemv_quant computes W's type: q4_0, q4_1, q5_0, q5_1, iq4_nl (against q8_0 activations) and q2_K,
// q3_K, q4_K, q5_K, q6_K (against q8_K activations).
bool gemv_quant_computes(dtype t);
// y (M×N) = x (M×K) · Wᵀ + bias, columns [n_begin, n_end) only, in integers on quantized activations; any M (W is
// read once for every 3 rows of x, every 2 for q4_1, q5_1 and the K-quants: matmul uses it below 16 rows). Four rows
// of W at a time: each block's integer sums are reduced per row and scaled as one vector, so each output is its
// blocks' terms added in block order, the same float operations as the scalar twin: the two agree bit for bit.
void gemv_quant(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
                int64_t n_begin, int64_t n_end);

// Whether gemv_quant computes one row of x against W's type in its int8 form in this instance: relaxed SIMD's int8
// dot product, where the instance runs it (kernels/relaxed.h), for q4_0, q5_0, q4_K, q5_K and q6_K, whose codes fit
// in 7 bits unsigned, and where it is the faster form on this machine (both timed once per type, on first use). The
// same integer sums either way: the same outputs bit for bit.
bool gemv_quant_int8(dtype t);
// gemv_quant in the form asked for, for the tests: int8 where the type and one row of x have that form and the
// instance can compute it (one that runs relaxed SIMD; natively with SSE4.1, which emulates the instruction by
// pmaddubsw); else int16 pairs.
void gemv_quant_form(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
                     int64_t n_begin, int64_t n_end, bool int8);

namespace ref {
// The converters to q2_K, q4_K and q5_K (from_f32) try their trial scales side by side in SIMD lanes, each lane's
// sums in the scalar order (make_qkx2_quants); true: one trial at a time, the scalar twin the tests compare them
// with, on this thread.
extern thread_local bool scalar_trials;
// The plain math of gemv_quant: per block, the integer sums from each element's code (decoded as the dequantizer
// reads it), then the same float expression.
void gemv_quant(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
                int64_t n_begin, int64_t n_end);
}  // namespace ref

}  // namespace wf
