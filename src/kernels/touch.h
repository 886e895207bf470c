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

// The same read-ahead spread over a kernel's loop over the current group's blocks: step(bytes) touches the lines of
// the next group's next `bytes` bytes (a block's worth of its 4 rows), so that a few misses are in flight while each
// block computes, instead of all of the next group's at once before it (the block-type GEMVs: wf-bench-kernels
// blocks, Node, cache-cold, against touch_rows there: Q4_0 0.78–0.98×, IQ4_NL 0.77–0.93×, the K-quants 0.82–0.90× of
// the time; q8_0's GEMV gained from neither).
class touch_ahead {
public:
    touch_ahead(const matrix_view& W, int64_t n, int64_t n1)
        : p_(n < n1 ? W.row(n) : nullptr), size_(n < n1 ? std::min<int64_t>(4, n1 - n) * row_bytes(W.type, W.n_cols) : 0) {}
    void step(int64_t bytes) {
        at_ = std::min(at_ + bytes, size_);
        for (; done_ < at_; done_ += 64) s_ += p_[done_];
    }
    ~touch_ahead() { touch_sink = s_; }

private:
    const uint8_t* p_;
    int64_t size_, at_ = 0, done_ = 0;
    uint32_t s_ = 0;
};

}  // namespace wf
