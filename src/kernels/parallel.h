// The engine's threads: a fixed pool that splits one operation's independent pieces (columns of a matrix
// product, attention heads, element ranges) among the calling thread and N−1 workers, then waits for all of them.
//
// The kernels know nothing of threads (they take column, head and element ranges); nn/ops.cpp cuts those ranges.
// Results do not depend on the thread count when each output element is computed by exactly one thread, in the
// same order as with one thread, which is how every caller uses it: one and many threads give identical bits.
//
// Where threads cannot be created (a WebAssembly build without pthreads), set_thread_count keeps the threads it
// got and reports the count it reached; everything still runs on the caller.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace wf {

// A non-owning reference to a callable (void(int64_t, int64_t)): no allocation, valid while the call runs.
class range_fn {
public:
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, range_fn>>>
    range_fn(F&& f) : obj_(const_cast<void*>(static_cast<const void*>(&f))),
                      call_([](void* o, int64_t b, int64_t e) { (*static_cast<std::remove_reference_t<F>*>(o))(b, e); }) {}
    void operator()(int64_t b, int64_t e) const { call_(obj_, b, e); }

private:
    void* obj_;
    void (*call_)(void*, int64_t, int64_t);
};

// Sets the number of threads that run an operation, the caller included (1: no worker threads). Returns the count
// reached. Not to be called while an operation runs.
int set_thread_count(int n);
int thread_count();

// Calls fn(begin, end) on disjoint ranges that cover [0, n), each a multiple of `grain` long (except the last),
// spread over the pool; returns when all are done. Runs inline when there is one thread or the work is smaller
// than two grains. The first exception thrown by fn is rethrown here, after every range has finished.
void parallel_for(int64_t n, int64_t grain, range_fn fn);

}  // namespace wf
