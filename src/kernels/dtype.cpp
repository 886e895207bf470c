// The storage-type table and each type's scalar conversions (the reference the SIMD paths are tested against).
#include "kernels/dtype.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cold.h"
#include "kernels/quants.h"
#include "kernels/words.h"

namespace wf {
namespace {

void f32_to_f32(const uint8_t* src, float* dst, int64_t n) { std::memcpy(dst, src, size_t(n) * 4); }
void f32_from_f32(const float* src, uint8_t* dst, int64_t n) { std::memcpy(dst, src, size_t(n) * 4); }

template <float (*Widen)(uint16_t)>
void half_to_f32(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = Widen(h);
    }
}
template <uint16_t (*Narrow)(float)>
WF_COLD void half_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = Narrow(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
    }
}

WF_COLD void q8_0_to_f32(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t b = 0; b < n / q8_block; ++b) {
        block_q8_0 blk;
        std::memcpy(&blk, src + b * int64_t(sizeof blk), sizeof blk);
        const float d = f16_to_f32(blk.d);
        for (int i = 0; i < q8_block; ++i) dst[b * q8_block + i] = d * float(blk.q[i]);
    }
}
// Straight into dst where it is aligned for blocks, else a block at a time through one that is (quantized into a
// buffer and copied out, BERT-base's conversion at load spent a third of its time in the copies: README's build notes).
void q8_0_from_f32(const float* src, uint8_t* dst, int64_t n) {
    if (reinterpret_cast<uintptr_t>(dst) % alignof(block_q8_0) == 0) return quantize_q8_0(src, n, reinterpret_cast<block_q8_0*>(dst));
    for (int64_t b = 0; b < n / q8_block; ++b) {
        block_q8_0 blk;
        quantize_q8_0(src + b * q8_block, q8_block, &blk);
        std::memcpy(dst + b * int64_t(sizeof blk), &blk, sizeof blk);
    }
}

// Block b of a q4_0 row as its f16 scale and 32 signed values q − 8 ∈ [−8, 7].
block_q8_0 unpack_q4_0(const uint8_t* src, int64_t b) {
    block_q4_0 blk;
    std::memcpy(&blk, src + b * int64_t(sizeof blk), sizeof blk);
    block_q8_0 out;
    out.d = blk.d;
    for (int i = 0; i < 16; ++i) {
        out.q[i] = int8_t(int(blk.qs[i] & 0x0F) - 8);
        out.q[16 + i] = int8_t(int(blk.qs[i] >> 4) - 8);
    }
    return out;
}
WF_COLD void q4_0_to_f32(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t b = 0; b < n / q8_block; ++b) {
        const block_q8_0 blk = unpack_q4_0(src, b);
        const float d = f16_to_f32(blk.d);
        for (int i = 0; i < q8_block; ++i) dst[b * q8_block + i] = d * float(blk.q[i]);
    }
}
void q4_0_to_q8_0(const uint8_t* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / q8_block; ++b) {
        const block_q8_0 blk = unpack_q4_0(src, b);
        std::memcpy(dst + b * int64_t(sizeof blk), &blk, sizeof blk);
    }
}
// As ggml's quantize_row_q4_0_ref: d = (the value of largest magnitude) / −8, q = clamp(round(x/d) + 8, 0, 15).
WF_COLD void q4_0_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / q8_block; ++b) {
        const float* x = src + b * q8_block;
        float amax = 0, mx = 0;
        for (int i = 0; i < q8_block; ++i)
            if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), mx = x[i];
        const float d = mx / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        block_q4_0 blk;
        blk.d = f32_to_f16(d);
        for (int i = 0; i < 16; ++i) {
            const int lo = std::min(15, int(x[i] * id + 8.5f)), hi = std::min(15, int(x[16 + i] * id + 8.5f));
            blk.qs[i] = uint8_t(std::max(0, lo) | std::max(0, hi) << 4);
        }
        std::memcpy(dst + b * int64_t(sizeof blk), &blk, sizeof blk);
    }
}

// In enum order. Every type is computed by matmul (kernels/quants.h: integer dot products on quantized
// activations for the block types), so the loader keeps each as stored. to_q8_0 (exact re-blocking: same f16
// scale, values d·(a whole number in [−127, 127])) serves the dtype = q8_0 load option for q4_0, q5_0, iq4_nl.
constexpr dtype_traits kTraits[] = {
    {"F32", 0, 1, 4, true, f32_to_f32, f32_from_f32, nullptr},
    {"F16", 1, 1, 2, true, half_to_f32<f16_to_f32>, half_from_f32<f32_to_f16>, nullptr},
    {"BF16", 30, 1, 2, true, half_to_f32<bf16_to_f32>, half_from_f32<f32_to_bf16>, nullptr},
    {"Q8_0", 8, 32, 34, true, q8_0_to_f32, q8_0_from_f32, nullptr},
    {"Q4_0", 2, 32, 18, true, q4_0_to_f32, q4_0_from_f32, q4_0_to_q8_0},
    {"Q4_1", 3, 32, 20, true, q4_1_to_f32, q4_1_from_f32, nullptr, q4_1_to_codes32},
    {"Q5_0", 6, 32, 22, true, q5_0_to_f32, q5_0_from_f32, q5_0_to_q8_0},
    {"Q5_1", 7, 32, 24, true, q5_1_to_f32, q5_1_from_f32, nullptr, q5_1_to_codes32},
    {"Q2_K", 10, 256, 84, true, q2_K_to_f32, q2_K_from_f32, nullptr},
    {"Q3_K", 11, 256, 110, true, q3_K_to_f32, q3_K_from_f32, nullptr, nullptr, q3_K_to_codes16},
    {"Q4_K", 12, 256, 144, true, q4_K_to_f32, q4_K_from_f32, nullptr, q4_K_to_codes32},
    {"Q5_K", 13, 256, 176, true, q5_K_to_f32, q5_K_from_f32, nullptr, q5_K_to_codes32},
    {"Q6_K", 14, 256, 210, true, q6_K_to_f32, q6_K_from_f32, nullptr, nullptr, q6_K_to_codes16},
    {"IQ4_NL", 20, 32, 18, true, iq4_nl_to_f32, iq4_nl_from_f32, iq4_nl_to_q8_0},
};
static_assert(std::size(kTraits) == std::size(all_dtypes));

// Every ggml type number's name (numbers 4 and 5 were removed from ggml), whether this engine reads it or not.
constexpr const char* kGgmlNames[] = {"F32",   "F16",    "Q4_0",    "Q4_1",  "",       "",      "Q5_0",   "Q5_1", "Q8_0", "Q8_1",
                                      "Q2_K",  "Q3_K",   "Q4_K",    "Q5_K",  "Q6_K",   "Q8_K",  "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S",
                                      "IQ4_NL", "IQ3_S", "IQ2_S",   "IQ4_XS", "I8",    "I16",   "I32",    "I64",  "F64",  "IQ1_M", "BF16"};

}  // namespace

const dtype_traits& traits(dtype t) { return kTraits[size_t(t)]; }

WF_COLD std::optional<dtype> dtype_from_ggml(uint32_t ggml_type) {
    for (dtype t : all_dtypes)
        if (traits(t).ggml_type == ggml_type) return t;
    return std::nullopt;
}

WF_COLD std::optional<dtype> dtype_from_name(std::string_view name) {
    for (dtype t : all_dtypes) {
        const std::string_view n = traits(t).name;
        if (n.size() == name.size() &&
            std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) { return a == std::toupper(static_cast<unsigned char>(b)); }))
            return t;
    }
    return std::nullopt;
}

const char* ggml_type_name(uint32_t t) { return t < std::size(kGgmlNames) && *kGgmlNames[t] ? kGgmlNames[t] : "unknown"; }

namespace {
// q4_K's 128 code bytes (element e in byte 32·(e / 64) + e % 32, its low nibble for e % 64 < 32) ↔ the grouped
// layout's 8 units of 16 (dtype.h): unit 2c + u holds sub-blocks 2c (A) and 2c + 1 (B), from the original's bytes
// o = 32c …: its bytes 0–3 and 8–11 are A's elements r and 16 + r (low and high nibble), r = 8u + 0 … 7, its bytes
// 4–7 and 12–15 B's. In 64-bit words (little-endian, as wasm and x86): the 8 A bytes are
// (L & 0x0F…) | (H & 0x0F…) << 4 and the 8 B bytes (L >> 4 & 0x0F…) | (H & 0xF0…), L and H the original's bytes 8u
// and 16 + 8u; the unit takes A's and B's 4-byte halves in turn.
using namespace words;
constexpr uint64_t low32 = 0xFFFFFFFFull;
void q4_k_unit(const uint8_t* o, int u, uint8_t* unit) {
    const uint64_t L = word(o + 8 * u), H = word(o + 16 + 8 * u);
    const uint64_t A = (L & lo4) | (H & lo4) << 4, B = (L >> 4 & lo4) | (H & hi4);
    put(unit, (A & low32) | B << 32), put(unit + 8, A >> 32 | (B & ~low32));
}
void q4_k_from_unit(const uint8_t* unit, int u, uint8_t* o) {
    const uint64_t w0 = word(unit), w1 = word(unit + 8);
    const uint64_t A = (w0 & low32) | w1 << 32, B = w0 >> 32 | (w1 & ~low32);
    put(o + 8 * u, (A & lo4) | (B & lo4) << 4), put(o + 16 + 8 * u, (A >> 4 & lo4) | (B & hi4));
}
constexpr int64_t q4_k_bytes = 144, q4_k_group_block = row_group * q4_k_bytes;

// A group of 4 q4_K rows (nb super-blocks each, as stored in `rows`) → grouped at `at`; and row j back.
void group_q4_k(const uint8_t* rows, int64_t nb, uint8_t* at) {
    for (int64_t b = 0; b < nb; ++b, at += q4_k_group_block)
        for (int64_t j = 0; j < row_group; ++j) {
            const uint8_t* blk = rows + (j * nb + b) * q4_k_bytes;
            std::memcpy(at + 2 * j, blk, 2);
            std::memcpy(at + 8 + 2 * j, blk + 2, 2);
            for (int w = 0; w < 3; ++w) std::memcpy(at + 16 + 16 * w + 4 * j, blk + 4 + 4 * w, 4);
            for (int u = 0; u < 8; ++u) q4_k_unit(blk + 16 + 32 * (u / 2), u % 2, at + 64 + 64 * u + 16 * j);
        }
}
void gather_q4_k(const uint8_t* group, int64_t nb, int64_t j, uint8_t* buf) {
    for (int64_t b = 0; b < nb; ++b, group += q4_k_group_block, buf += q4_k_bytes) {
        std::memcpy(buf, group + 2 * j, 2);
        std::memcpy(buf + 2, group + 8 + 2 * j, 2);
        for (int w = 0; w < 3; ++w) std::memcpy(buf + 4 + 4 * w, group + 16 + 16 * w + 4 * j, 4);
        for (int u = 0; u < 8; ++u) q4_k_from_unit(group + 64 + 64 * u + 16 * j, u % 2, buf + 16 + 32 * (u / 2));
    }
}

// A group of 4 rows of the 32-value types (nb blocks of bb bytes each, as stored in `rows`) → grouped at `at`: the
// blocks' f16 scales, then their codes (dtype.h).
// The codes' size a template argument: copies of a constant size are loads and stores in place, where a variable
// one is a call of memcpy per block (a tenth of BERT-base's q8_0 conversion at load).
template <int64_t bb>
void group_blocks(const uint8_t* rows, int64_t nb, uint8_t* at) {
    constexpr int64_t c = bb - 2;
    for (int64_t j = 0; j < row_group; ++j)
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t* blk = rows + (j * nb + b) * bb;
            std::memcpy(at + 2 * row_group * nb + row_group * c * b + c * j, blk + 2, size_t(c));
            std::memcpy(at + 2 * (row_group * b + j), blk, 2);
        }
}

// q5_0's grouped block, the 4 rows' 80 code bytes (dtype.h): their fifth bits (qh, 4 bytes a row) in 16 bytes, row
// j's of elements l and 16 + l at bits 2j and 2j + 1 of byte l, then the rows' 16 nibble bytes each. In 64-bit words
// (bytes 0–7 and 8–15): qh's byte 2k + h holds the bits of elements 16k + 8h + i, i < 8, which go to bit 2j + k of
// byte i of word h (kernels/words.h: unpack8, pack8).
WF_COLD void group_q5_0_block(uint8_t* blk) {  // in place
    uint8_t rows[80];
    std::memcpy(rows, blk, 80);
    uint64_t H[2] = {0, 0};
    for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 2; ++k)
            for (int h = 0; h < 2; ++h) H[h] |= unpack8(rows[20 * j + 2 * k + h]) << (2 * j + k);
    put(blk, H[0]), put(blk + 8, H[1]);
    for (int j = 0; j < 4; ++j) std::memcpy(blk + 16 + 16 * j, rows + 20 * j + 4, 16);
}
void gather_q5_0(const uint8_t* group, int64_t nb, int64_t j, uint8_t* buf) {
    for (int64_t b = 0; b < nb; ++b, buf += 22) {
        const uint8_t* blk = group + 2 * row_group * nb + 80 * b;
        const uint64_t H[2] = {word(blk), word(blk + 8)};
        std::memcpy(buf, group + 2 * (row_group * b + j), 2);
        for (int k = 0; k < 2; ++k)
            for (int h = 0; h < 2; ++h) buf[2 + 2 * k + h] = pack8(H[h] >> (2 * j + k));
        std::memcpy(buf + 6, blk + 16 + 16 * j, 16);
    }
}

}  // namespace

WF_COLD bool group_rows(dtype t, uint8_t* data, int64_t n_rows, int64_t n_cols) {
    if (!group_rows_layout(t)) return false;
    const int64_t bb = traits(t).block_bytes, nb = n_cols / traits(t).block, rb = row_bytes(t, n_cols);
    const int scales = t == dtype::q4_k ? 2 : 1;  // f16s at the start of a block: q4_K's d and dmin
    for (int64_t i = 0; i < n_rows / row_group * row_group * nb; ++i)
        for (int k = 0; k < scales; ++k) {
            uint16_t h;
            std::memcpy(&h, data + i * bb + 2 * k, 2);
            if ((h & 0x7fff) >= 0x7c00 || (t == dtype::q8_0 && (h & 0x8000))) return false;  // inf or NaN; of q8_0 a negative
        }
    std::vector<uint8_t> rows(size_t(row_group * rb));
    for (int64_t g = 0; g + row_group <= n_rows; g += row_group) {
        uint8_t* at = data + g * rb;
        std::memcpy(rows.data(), at, rows.size());
        static_assert(sizeof(block_iq4_nl) == sizeof(block_q4_0));
        switch (t) {  // the types of group_rows_layout
            case dtype::q4_k: group_q4_k(rows.data(), nb, at); break;
            case dtype::q8_0: group_blocks<int64_t(sizeof(block_q8_0))>(rows.data(), nb, at); break;
            case dtype::q5_0: group_blocks<int64_t(sizeof(block_q5_0))>(rows.data(), nb, at); break;
            default: group_blocks<int64_t(sizeof(block_q4_0))>(rows.data(), nb, at); break;  // q4_0, iq4_nl
        }
        if (t == dtype::q5_0)
            for (int64_t b = 0; b < nb; ++b) group_q5_0_block(at + 2 * row_group * nb + 80 * b);
    }
    return true;
}

bool group_rows_layout(dtype t) { return t == dtype::q8_0 || t == dtype::q4_0 || t == dtype::q5_0 || t == dtype::iq4_nl || t == dtype::q4_k; }

bool group_rows_pays(dtype t) {
#if defined(__wasm_simd128__)
    // q4_K where its GEMV takes the int16 form (Node; Chromium without AVX-VNNI): its int8 form (relaxed SIMD) reads the
    // rows as stored as fast as grouped (bench/ab-builds.mjs, Chromium, Zen 5: GPT-2 small q4_k decode 1.06× the time
    // grouped)
    if (t == dtype::q4_k) return !gemv_quant_int8(t);
    return group_rows_layout(t);
#else
    (void)t;
    return false;
#endif
}

WF_COLD const uint8_t* block_codes(const matrix_view& W, int64_t r, int64_t b) {
    const int64_t bb = traits(W.type).block_bytes, c = bb - 2;
    if (r < grouped_rows(W))
        return W.row(r / row_group * row_group) + 2 * row_group * (W.n_cols / q8_block) + row_group * c * b + c * (r % row_group);
    return W.row(r) + bb * b + 2;
}
WF_COLD const uint8_t* block_scale(const matrix_view& W, int64_t r, int64_t b) {
    if (r < grouped_rows(W)) return W.row(r / row_group * row_group) + 2 * (row_group * b + r % row_group);
    return W.row(r) + traits(W.type).block_bytes * b;
}

namespace {
// Row j of the group at `group` (nb blocks of C code bytes each) as stored blocks into buf; C a constant, so that the
// copies are loads and stores rather than calls.
template <int64_t C>
void gather_row(const uint8_t* group, int64_t nb, int64_t j, uint8_t* buf) {
    for (int64_t b = 0; b < nb; ++b) {
        std::memcpy(buf + b * (C + 2), group + 2 * (row_group * b + j), 2);
        std::memcpy(buf + b * (C + 2) + 2, group + 2 * row_group * nb + row_group * C * b + C * j, C);
    }
}
}  // namespace

const uint8_t* row_as_stored(const matrix_view& W, int64_t r, uint8_t* buf) {
    if (r >= grouped_rows(W)) return W.row(r);
    const int64_t nb = W.n_cols / q8_block, j = r % row_group;
    if (W.type == dtype::q4_k) gather_q4_k(W.row(r - j), W.n_cols / qk_k, j, buf);
    else if (W.type == dtype::q8_0) gather_row<q8_block>(W.row(r - j), nb, j, buf);
    else if (W.type == dtype::q5_0) gather_q5_0(W.row(r - j), nb, j, buf);
    else gather_row<q8_block / 2>(W.row(r - j), nb, j, buf);  // q4_0, iq4_nl
    return buf;
}

const uint8_t* row_as_stored(const matrix_view& W, int64_t r) {
    if (r >= grouped_rows(W)) return W.row(r);
    thread_local std::vector<uint8_t> buf;
    buf.resize(size_t(row_bytes(W.type, W.n_cols)));
    return row_as_stored(W, r, buf.data());
}

WF_COLD void dequantize_row(const matrix_view& W, int64_t r, float* out) { traits(W.type).to_f32(row_as_stored(W, r), out, W.n_cols); }

}  // namespace wf
