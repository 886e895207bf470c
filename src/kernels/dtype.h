// Storage types of weight matrices, and the one table that knows them: a type's name (as GGUF and safetensors
// write it), its GGUF number, its block geometry and its conversions to and from f32. Tensors, kernels, the file
// readers and the weight loader all ask this table; adding a type is one row here plus its conversions and dots.
//
// Convention: a matrix is row-major; a Linear weight is (out, in) = (n_rows, n_cols), so y = x·Wᵀ + b reads one
// row of W per output. Activations are (tokens, features), row-major.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/half.h"

namespace wf {

// The K-quants (q2_k … q6_k: 256-value super-blocks) and q4_1 … iq4_nl are defined in kernels/quants.h.
enum class dtype : uint8_t { f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl };
constexpr dtype all_dtypes[] = {dtype::f32,  dtype::f16,  dtype::bf16, dtype::q8_0, dtype::q4_0, dtype::q4_1, dtype::q5_0,
                                dtype::q5_1, dtype::q2_k, dtype::q3_k, dtype::q4_k, dtype::q5_k, dtype::q6_k, dtype::iq4_nl};

struct dtype_traits {
    const char* name;     // "F32", "Q8_0": GGUF's and safetensors' spelling
    uint32_t ggml_type;   // GGUF's number for the type
    int block;            // values per block (1 for plain floats); a row's length is a multiple of it
    int block_bytes;      // bytes per block
    bool computed;        // matmul reads it directly; otherwise the loader converts it (see weights.h)
    // n values (a multiple of `block`) ↔ f32. from_f32 rounds to nearest (even) and picks block scales as GGUF does.
    void (*to_f32)(const uint8_t* src, float* dst, int64_t n);
    void (*from_f32)(const float* src, uint8_t* dst, int64_t n);
    // n values re-blocked as q8_0 without loss (same scales), for a type matmul does not compute; null if none.
    void (*to_q8_0)(const uint8_t* src, uint8_t* dst, int64_t n);
    // For the types whose values are d·q + m per 32 (q4_1, q5_1; q4_K and q5_K per 32 of a super-block, their d·sc and
    // −dmin·m products of an f16 and a 6-bit code, exact in f32): n values as codes q (whole numbers in [0, 31]) and per
    // 32 a scale d and a minimum m, so that value = d·q + m up to the dequantizer's rounding; null for the others.
    // matmul's integer tile runs them this way from 16 rows on (kernels/matmul-q8.cpp: gemm_q8).
    void (*to_codes32)(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) = nullptr;
    // For q3_K and q6_K (value = (d·sc)·q per 16, d·sc a product of an f16 and a small integer: exact in f32): n
    // values as codes q (whole numbers in [−32, 31]) and a scale d per 16; null for the others.
    void (*to_codes16)(const uint8_t* src, int8_t* q, float* d, int64_t n) = nullptr;
};

const dtype_traits& traits(dtype t);
inline const char* dtype_name(dtype t) { return traits(t).name; }
// By GGUF number / by name ("F16", case-insensitive); nullopt when the engine does not know the type.
std::optional<dtype> dtype_from_ggml(uint32_t ggml_type);
std::optional<dtype> dtype_from_name(std::string_view name);
// The name of any ggml type number, known to the engine or not ("IQ2_XXS"), for error messages; "unknown" else.
const char* ggml_type_name(uint32_t ggml_type);

// Bytes of one row of n_cols values (n_cols a multiple of the block).
inline int64_t row_bytes(dtype t, int64_t n_cols) {
    const dtype_traits& k = traits(t);
    return n_cols / k.block * k.block_bytes;
}

// q8_0, as in GGUF: blocks of 32 values along a row, each an f16 scale d and 32 int8 values; x = d·q.
constexpr int q8_block = 32;
struct block_q8_0 {
    uint16_t d;  // f16 scale
    int8_t q[q8_block];
};
static_assert(sizeof(block_q8_0) == 34, "q8_0 block is 34 bytes, as in GGUF");

// q4_0, as in GGUF: blocks of 32, an f16 scale d and 16 bytes of 4-bit values; x = d·(q − 8); the low nibbles
// hold elements 0–15, the high nibbles 16–31.
struct block_q4_0 {
    uint16_t d;
    uint8_t qs[q8_block / 2];
};
static_assert(sizeof(block_q4_0) == 18, "q4_0 block is 18 bytes, as in GGUF");

// A read-only weight matrix (n_rows = out, n_cols = in) in any storage type; rows are contiguous, except in a grouped
// q8_0, q4_0, q5_0, iq4_nl or q4_K matrix (below).
struct matrix_view {
    dtype type = dtype::f32;
    int64_t n_rows = 0;  // out
    int64_t n_cols = 0;  // in
    const void* data = nullptr;
    // q8_0, q4_0, q5_0, iq4_nl, q4_K only: rows grouped by 4 (group_rows). row(r) is then where r's group starts, for r
    // a multiple of 4 below the last whole group; block_scale and block_codes find any row's blocks (not q4_K's),
    // row_as_stored any row.
    bool grouped = false;
    const uint8_t* row(int64_t r) const { return static_cast<const uint8_t*>(data) + r * row_bytes(type, n_cols); }
};

// Rows grouped by 4, the layout the loader gives the q8_0, q4_0, q5_0 and iq4_nl matrices it holds where
// group_rows_pays() (wasm; a file's own where the load may rewrite its bytes: nn/weights.h):
// rows 4g … 4g + 3 take the same 4 rows' bytes as stored, rearranged — first the scales, per block b the 4 rows' f16
// (8 bytes at 8·b from the group's start, row 4g's first), then the codes (a block's bytes after its scale: 32 for
// q8_0, 16 for q4_0 and iq4_nl, 20 for q5_0), per block the 4 rows' side by side (4·c bytes at 8·nb + 4·c·b) — of
// q5_0 first the 4 rows' fifth bits in 16 bytes (row j's of elements l and 16 + l at bits 2j and 2j + 1 of byte l:
// one 16-bit shift and a mask take a row's to bit 4 of each byte), then their 16 nibble bytes each. The decode GEMVs read a group front to back, one aligned stream, instead of 4
// rows of 34- or 18-byte blocks (in Node, cache-cold:
// bench/gemv-layouts.cpp, bench/gemv-q4-layouts.cpp). The rows after the last whole group stay as stored. Only
// matrices whose scales are all finite are grouped, and of q8_0 only those whose scales are also not negative (as
// ggml's quantizer writes them: d = amax / 127; q4_0's d = max / −8, q5_0's max / −16 and iq4_nl's take either sign),
// so that the GEMV widens a scale exactly in a few operations: its bits shifted and multiplied by 2^112 (the sign
// or-ed back for the others). q5_0 and iq4_nl read 10–20 % faster so in wasm (wf-bench-kernels blocks, Node, Zen 5).
// q4_K (grouped where its GEMV takes the int16 form: group_rows_pays) has its own grouping, per super-block b (576
// bytes at 576·b from the group's start): the 4 rows' f16 d (8 bytes), their dmin (8), their 12 scale bytes as three
// runs of 4 rows' 4 bytes (48), then 8 units of 4 rows' 16 code bytes (unit u, row j at 64 + 64·u + 16·j). Unit
// 2c + u holds sub-blocks 2c (A) and 2c + 1 (B) of 32 values: bytes 0–3 and 8–11 are A's, 4–7 and 12–15 B's, byte
// k of A's 8 holding A's elements r = 8u + k (low nibble) and 16 + r (high) — so that a unit's products fall in
// int32 lanes of one sub-block each, and a byte's two codes share a scale (q4_0's z form: kernels/quants-gemv.cpp).
// Their d and dmin must be finite; either sign. Its GEMV reads 1.3–1.9× as fast so (Node, Zen 5).
constexpr int64_t row_group = 4;
inline int64_t grouped_rows(const matrix_view& W) { return W.grouped ? W.n_rows / row_group * row_group : 0; }
// Row r's block b of a matrix of those types, grouped or not: its f16 scale, its codes (the bytes after the scale).
const uint8_t* block_scale(const matrix_view& W, int64_t r, int64_t b);
const uint8_t* block_codes(const matrix_view& W, int64_t r, int64_t b);
inline const int8_t* q8_codes(const matrix_view& W, int64_t r, int64_t b) { return reinterpret_cast<const int8_t*>(block_codes(W, r, b)); }
// Row r as stored: W.row(r), or a grouped row's bytes gathered into buf (row_bytes(W.type, W.n_cols) of them), or
// without buf into a per-thread buffer, valid until that thread's next such call.
const uint8_t* row_as_stored(const matrix_view& W, int64_t r, uint8_t* buf);
const uint8_t* row_as_stored(const matrix_view& W, int64_t r);
// In place: n_rows rows of n_cols of type t (group_rows_layout) at data → grouped (the whole groups; the rest stays),
// unless a scale of those groups is inf or NaN, or of q8_0 negative (false: left as it was). Whether the engine's
// kernels read the grouped layout faster in this build (wasm SIMD128).
bool group_rows(dtype t, uint8_t* data, int64_t n_rows, int64_t n_cols);
bool group_rows_layout(dtype t);  // the types group_rows takes: q8_0, q4_0, q5_0, iq4_nl, q4_K
bool group_rows_pays(dtype t);

// Row r of W widened to f32 (any type), and n floats (a multiple of 32) quantized to q8_0 blocks.
void dequantize_row(const matrix_view& W, int64_t r, float* out);
void quantize_q8_0(const float* x, int64_t n, block_q8_0* out);

}  // namespace wf
