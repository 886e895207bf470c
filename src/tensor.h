// Tensor storage types and the one dimension convention of the engine.
//
// Convention: a matrix is row-major; a Linear weight is (out, in) = (n_rows, n_cols), so y = x·Wᵀ + b reads one
// row of W per output. Activations are (tokens, features), row-major. GPT-2's Conv1D weights, stored (in, out) in
// Hugging Face checkpoints, are transposed once at load time (loader), never indexed differently.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace wf {

// Every error the core raises. Messages name the file, field, tensor or value at fault.
struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class dtype : uint8_t { f32, f16, bf16, q8_0, q4_0 };  // q4_0: storage only, converted to q8_0 at load

const char* dtype_name(dtype t);

// q8_0, as in GGUF: blocks of 32 weights along a row, each an f16 scale d and 32 int8 values; w = d·q.
constexpr int q8_block = 32;
struct block_q8_0 {
    uint16_t d;       // f16 scale
    int8_t q[q8_block];
};
static_assert(sizeof(block_q8_0) == 34, "q8_0 block is 34 bytes, as in GGUF");

// Bytes of one row of `n_cols` values (n_cols must be a multiple of the block size for q8_0).
inline int64_t row_bytes(dtype t, int64_t n_cols) {
    switch (t) {
    case dtype::f32: return n_cols * 4;
    case dtype::f16:
    case dtype::bf16: return n_cols * 2;
    case dtype::q8_0: return n_cols / q8_block * int64_t(sizeof(block_q8_0));
    case dtype::q4_0: return n_cols / q8_block * 18;  // f16 scale + 16 bytes of 4-bit values
    }
    return 0;
}

// A read-only weight matrix (n_rows = out, n_cols = in) in any storage type; rows are contiguous.
struct matrix_view {
    dtype type = dtype::f32;
    int64_t n_rows = 0;  // out
    int64_t n_cols = 0;  // in
    const void* data = nullptr;
    const uint8_t* row(int64_t r) const { return static_cast<const uint8_t*>(data) + r * row_bytes(type, n_cols); }
};

// IEEE half and bfloat16 <-> float, exact (round-to-nearest-even on narrowing; subnormals, inf and NaN kept).
inline float f16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t em = h & 0x7fff;
    uint32_t bits;
    if (em >= 0x7c00) {
        bits = sign | 0x7f800000u | (em & 0x3ff) << 13;  // inf / NaN
    } else {
        float f;
        uint32_t scaled = em << 13;  // as a float: value · 2^-112, subnormals included
        std::memcpy(&f, &scaled, 4);
        f *= 0x1p112f;
        std::memcpy(&bits, &f, 4);
        bits |= sign;
    }
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

inline uint16_t f32_to_f16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) return sign | 0x7c00 | (x > 0x7f800000u ? 0x200 : 0);  // inf / NaN
    if (x >= 0x477ff000u) return sign | 0x7c00;                                  // rounds to inf
    if (x < 0x38800000u) {  // subnormal half or zero: a·2^24 is exact, nearbyint rounds to nearest even
        float a;
        std::memcpy(&a, &x, 4);
        return sign | uint16_t(std::nearbyint(a * 0x1p24f));
    }
    const uint32_t mant_odd = (x >> 13) & 1;
    x += 0xc8000fffu + mant_odd;  // rebias exponent (−112 << 23) and round to nearest even
    return sign | uint16_t(x >> 13);
}

inline float bf16_to_f32(uint16_t h) {
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

}  // namespace wf
