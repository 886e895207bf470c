// Reading ahead in W where wasm has no prefetch instruction. Internal to src/kernels.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/kernels.h"

namespace wf {

// Read-ahead for the group of 4 W rows [n, n + 4) (those that exist) after the one a kernel is computing: one byte of
// every 64-byte line, in order, so that memory delivers them as one sequential stream while the kernel works on rows
// already cached (its own loads come one computed block at a time, or from 4 rows side by side: 4 streams, which
// this machine reads at about half the speed of one). The bytes' sum goes to a sink so that the loads stay.
// step(bytes) touches the next `bytes` bytes of the group: called once per block of the current group with a block's
// worth of the 4 rows, a few misses are in flight while each block computes, instead of all of them at once before it
// (the block-type GEMVs: wf-bench-kernels blocks, Node, cache-cold, against touching the whole group first: Q4_0
// 0.78–0.98×, IQ4_NL 0.77–0.93×, the K-quants 0.82–0.90× of the time; q8_0's GEMV gained from neither).
inline thread_local volatile uint32_t touch_sink;
class touch_ahead {
public:
    touch_ahead(const matrix_view& W, int64_t n, int64_t n1, int64_t rows = 4)
        : p_(n < n1 ? W.row(n) : nullptr), size_(n < n1 ? std::min<int64_t>(rows, n1 - n) * row_bytes(W.type, W.n_cols) : 0) {}
    void step(int64_t bytes) {
        at_ = std::min(at_ + bytes, size_);
        for (; done_ < at_; done_ += 64) s_ += p_[done_];
    }
    void all() { step(size_); }
    ~touch_ahead() { touch_sink = s_; }

private:
    const uint8_t* p_;
    int64_t size_, at_ = 0, done_ = 0;
    uint32_t s_ = 0;
};

// Which of `count` sets (of W rows) is the t-th of the S computed together in turn i, when the GEMVs read S sets far
// apart (S streams, which memory serves faster than one; README build notes): turns i < count / S take sets
// count / S apart, and a last turn the remaining count % S, its last set repeated to fill the S (the same values
// written twice: one loop in the wasm instead of a second for the tail). Turns: count / S, plus one if count % S.
inline int64_t far_set(int64_t i, int t, int S, int64_t count) {
    const int64_t Q = count / S;
    return i < Q ? i + t * Q : std::min(S * Q + t, count - 1);
}

// The whole group of `rows` at once (the f32 tile, whose W rows are swept by all rows of x).
inline void touch_rows(const matrix_view& W, int64_t n, int64_t n1, int64_t rows) { touch_ahead(W, n, n1, rows).all(); }

}  // namespace wf
