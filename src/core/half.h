// IEEE half and bfloat16 ↔ float, exact: round-to-nearest-even on narrowing; subnormals, inf and NaN kept.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace wf {

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

inline uint16_t f32_to_bf16(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40);  // NaN stays a (quiet) NaN
    return uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

}  // namespace wf
