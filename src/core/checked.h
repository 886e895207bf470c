// Checked 64-bit size arithmetic: wasm32's size_t is 32 bits, so every size from a file is computed in int64 and
// checked before it reaches an allocation or a pointer.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"

namespace wf {

inline int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
    int64_t r;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) throw error(what);
    return r;
}

// a·b, or the int64 bound on its side where it overflows: a default derived from a field that the checks after it
// reject by name (config.json's n_inner from an absurd n_embd) must not overflow on the way there
inline int64_t saturating_mul(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}

inline int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
    int64_t r;
    if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) throw error(what);
    return r;
}

}  // namespace wf
