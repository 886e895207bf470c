// The operations models are written in: each runs a kernel over a whole activation, split across the engine's
// threads where the work is large enough. Splits never change the arithmetic, so results are identical for any
// thread count.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/attention.h"
#include "nn/hparams.h"
#include "nn/model.h"
#include "nn/weights.h"

namespace wf {

// y (T×out) = x (T×in)·Wᵀ + b, the output columns split across threads.
void apply(const linear& l, const float* x, int64_t T, float* y);
// Layer norm of T rows of n values (norm.b may be null: no bias), the rows split across threads.
void apply(const norm& n, float eps, const float* x, int64_t T, int64_t width, float* y);
// The activation, in place over n values.
void activate(activation a, float* x, int64_t n);
// A classifier head on n rows of hidden states (n, E) → (n, outputs); scratch holds the dense layer's output.
void apply(const classifier_head& h, const float* x, int64_t n, float* y, arena& scratch);
// Attention, heads split across threads; when the trace asks for this layer, the weights are recorded in it.
void attend(attention_args a, forward_trace* trace, int layer);
// The same where the caller keeps the weights: probs (n_head, n_q, n_kv), or null for a.probs as given.
void attend(attention_args a, float* probs);
// B sequences of T rows of `width` values (x: (B·T, width)) → each sequence's last row, in rows 0 … B−1 of x.
void keep_last_rows(float* x, int64_t B, int64_t T, int64_t width);
// out (n, width) = rows[0 … n) of x (…, width); and back: x's rows[i] = out's row i.
void gather_rows(const float* x, std::span<const int64_t> rows, int64_t width, float* out);
void scatter_rows(const float* in, std::span<const int64_t> rows, int64_t width, float* x);

}  // namespace wf
