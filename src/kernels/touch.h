// Reading ahead in W where wasm has no prefetch instruction. Internal to src/kernels.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/kernels.h"

namespace wf {

// Reads one byte of every 64-byte line of rows [n, n + 4) of W (those that exist), in order: called for the group of
// rows after the one a kernel is computing, so that memory delivers them as one sequential stream, many misses in
// flight at once, while the kernel works on rows already cached (its own loads come one computed block at a time, or
// from 4 rows side by side: 4 streams, which this machine reads at about half the speed of one). The bytes' sum goes
// to a sink so that the loads stay.
inline thread_local volatile uint32_t touch_sink;
inline void touch_rows(const matrix_view& W, int64_t n, int64_t n1) {
    if (n >= n1) return;
    const uint8_t* p = W.row(n);
    const int64_t bytes = std::min<int64_t>(4, n1 - n) * row_bytes(W.type, W.n_cols);
    uint32_t s = 0;
    for (int64_t at = 0; at < bytes; at += 64) s += p[at];
    touch_sink = s;
}

}  // namespace wf
