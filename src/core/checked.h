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

inline int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
    int64_t r;
    if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) throw error(what);
    return r;
}

}  // namespace wf
