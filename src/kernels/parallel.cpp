#include "kernels/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>


namespace wf {
namespace {

// One operation at a time: the caller publishes a job (a generation number the workers watch), every thread takes
// ranges from an atomic counter until none is left, and the caller waits until the last one is done. A thread that
// waits spins first (spin_for), then sleeps on a condition variable: a decode step runs one operation per matrix
// and per attention — GPT-2 small ~50, SmolLM2-135M ~200 a token, each 10–100 µs of work — and a sleeping
// thread's wake-up (a futex, Atomics.wait in wasm) took about as long as the work it was woken for. With sleeping
// waits only, SmolLM2-135M's q8_0 decode in Node ran slower on 2 threads than on 1 (13.6 against 11.7 ms a token);
// nn/ops.cpp's min_range_work has the numbers since. A spin is bounded (spin_for), so idle threads soon sleep.
class pool {
public:
    ~pool() { resize(1); }

    int size() const { return int(workers_.size()) + 1; }

    int resize(int n) {
        n = std::max(1, n);
        if (n - 1 < int(workers_.size())) {
            {
                std::lock_guard<std::mutex> lock(m_);
                stop_ = true;
                generation_.fetch_add(1);
            }
            wake_.notify_all();
            for (auto& t : workers_) t.join();
            workers_.clear();
            stop_ = false;
        }
        while (int(workers_.size()) < n - 1) {
            try {
                workers_.emplace_back([this, seen = generation_.load()]() mutable { work(seen); });
            } catch (const std::system_error&) {
                break;  // no threads here (a wasm build without pthreads): keep what we have
            }
        }
        return size();
    }

    void run(int64_t n, int64_t grain, range_fn fn) {
        const int64_t chunks = (n + grain - 1) / grain;
        // about eight ranges per thread, taken in turn: a thread that the machine slows (a busy core, a late wake-up)
        // holds the others up by one short range instead of a quarter of the work. It was two: 2 threads in Node
        // (bench/ab-builds.mjs --threads 2, 12 rounds, with layer norms split by rows, nn/ops.cpp): BERT-base fill-mask
        // 0.963 of the time, GPT-2 small's 128-token prefill 0.895, 32 f32 decode steps 0.863, all-MiniLM-L6-v2's embed
        // 0.888, DistilBERT's qa 1.022 — a noisy machine, quartiles ±5–10 %. Matrix products ask for fewer with
        // their grain (nn/ops.cpp: one a thread for quantized weights from 16 rows of x on, two below 16 rows).
        const int64_t per = std::max<int64_t>(1, chunks / (8 * size())) * grain;
        fn_ = &fn;
        n_ = n;
        step_ = per;
        error_ = nullptr;
        next_.store(0, std::memory_order_relaxed);
        busy_.store(int(workers_.size()) + 1, std::memory_order_relaxed);
        // The lock only where a thread sleeps (or is about to): a worker counts itself in sleepers_ before it checks
        // the generation a last time, this bumps the generation before it reads sleepers_ (both sequentially
        // consistent), so either the worker sees the new generation or this sees the worker. The lock then waits until
        // the worker is asleep on wake_, or has seen the generation under it. (Every operation took the lock here and
        // every last worker took it to notify: 2 threads in Node, 32 decode steps, 0.96 of that time for GPT-2 small
        // f32, 0.97–1.00 on SmolLM2-135M's shape.)
        generation_.fetch_add(1);
        if (sleepers_.load() > 0) {
            { std::lock_guard<std::mutex> lock(m_); }
            wake_.notify_all();
        }
        take_ranges();
        const auto done = [&] { return busy_.load() == 0; };
        if (busy_.fetch_sub(1, std::memory_order_acq_rel) != 1 && !spin_for(done)) {
            // likewise: the last worker reads waiting_ after its decrement, this sets it before its last check
            std::unique_lock<std::mutex> lock(m_);
            waiting_.store(true);
            done_.wait(lock, done);
            waiting_.store(false, std::memory_order_relaxed);
        }
        fn_ = nullptr;
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }

private:
    // Spins until ready() (true) or about 2^17 checks (~0.1–0.3 ms) have gone by (false).
    template <class Ready>
    static bool spin_for(Ready ready) {
        for (int i = 0; i < (1 << 17); ++i)
            if (ready()) return true;
        return false;
    }

    void take_ranges() {
        for (;;) {
            const int64_t b = next_.fetch_add(step_);
            if (b >= n_) return;
            try {
                (*fn_)(b, std::min(n_, b + step_));
            } catch (...) {
                std::lock_guard<std::mutex> lock(m_);
                if (!error_) error_ = std::current_exception();
            }
        }
    }

    void work(uint64_t seen) {
        for (;;) {
            // sequentially consistent, as the sleep below needs (every atomic load in wasm is: the spin costs the same)
            const auto moved = [&] { return generation_.load() != seen; };
            if (!spin_for(moved)) {
                std::unique_lock<std::mutex> lock(m_);
                sleepers_.fetch_add(1);
                wake_.wait(lock, moved);
                sleepers_.fetch_sub(1, std::memory_order_relaxed);
            }
            seen = generation_.load(std::memory_order_acquire);
            if (stop_) return;
            take_ranges();
            if (busy_.fetch_sub(1) == 1 && waiting_.load()) {
                { std::lock_guard<std::mutex> lock(m_); }  // the caller checks busy_ under it before it sleeps
                done_.notify_one();
            }
        }
    }

    std::vector<std::thread> workers_;
    std::mutex m_;
    std::condition_variable wake_, done_;
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> sleepers_{0};  // workers asleep on wake_, or about to be
    std::atomic<bool> waiting_{false};  // the caller asleep on done_, or about to be
    bool stop_ = false;
    const range_fn* fn_ = nullptr;
    int64_t n_ = 0, step_ = 1;
    std::atomic<int64_t> next_{0};
    std::atomic<int> busy_{0};
    std::exception_ptr error_;
};

pool& the_pool() {
    static pool p;
    return p;
}

}  // namespace

int set_thread_count(int n) { return the_pool().resize(n); }
int thread_count() { return the_pool().size(); }

void parallel_for(int64_t n, int64_t grain, range_fn fn) {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    if (thread_count() == 1 || n < 2 * grain) return fn(0, n);
    the_pool().run(n, grain, fn);
}

}  // namespace wf
