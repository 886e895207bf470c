// The engine's threads: a fixed pool that splits one operation's independent pieces (columns of a matrix
// product, attention heads, element ranges) among the calling thread and N−1 workers, then waits for all of them.
//
// The kernels know nothing of threads (they take column, head and element ranges); this file cuts those ranges.
// Results do not depend on the thread count: each output element is computed by exactly one thread, in the same
// order as with one thread, so one and many threads give bit-identical outputs.
//
// Where threads cannot be created (a WebAssembly build without pthreads), set_thread_count keeps the threads it
// got and reports the count it reached; everything still runs on the caller.
#pragma once

#include <cstdint>
#include <functional>

#include "attention.h"
#include "tensor.h"

namespace wf {

// Sets the number of threads that run an operation, the caller included (1: no worker threads). Returns the count
// reached. Not to be called while an operation runs.
int set_thread_count(int n);
int thread_count();

// Calls fn(begin, end) on disjoint ranges that cover [0, n), each a multiple of `grain` long (except the last),
// spread over the pool; returns when all are done. Runs inline when there is one thread or the work is smaller
// than two grains. The first exception thrown by fn is rethrown here, after every range has finished.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& fn);

// y (M×N) = x (M×K) · Wᵀ + bias, the columns of y split across the threads (see wf::matmul in kernels.h).
void matmul(const float* x, int64_t M, const matrix_view& W, const float* bias, float* y);
// Attention with the heads split across the threads (see wf::attention).
void attention_threaded(const attention_args& a);
// GELU over n elements, split across the threads.
void gelu_erf_threaded(float* x, int64_t n);
void gelu_tanh_threaded(float* x, int64_t n);

}  // namespace wf
