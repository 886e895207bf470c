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

// One operation at a time: the caller publishes a job (a generation number wakes the workers), every thread takes
// ranges from an atomic counter until none is left, the last one to finish wakes the caller.
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
                ++generation_;
            }
            wake_.notify_all();
            for (auto& t : workers_) t.join();
            workers_.clear();
            stop_ = false;
        }
        while (int(workers_.size()) < n - 1) {
            try {
                workers_.emplace_back([this, seen = generation_]() mutable { work(seen); });
            } catch (const std::system_error&) {
                break;  // no threads here (a wasm build without pthreads): keep what we have
            }
        }
        return size();
    }

    void run(int64_t n, int64_t grain, range_fn fn) {
        const int64_t chunks = (n + grain - 1) / grain;
        // about two ranges per thread: enough to even out, few enough to keep each range long
        const int64_t per = std::max<int64_t>(1, chunks / (2 * size())) * grain;
        {
            std::lock_guard<std::mutex> lock(m_);
            fn_ = &fn;
            n_ = n;
            step_ = per;
            next_.store(0);
            busy_ = int(workers_.size()) + 1;
            error_ = nullptr;
            ++generation_;
        }
        wake_.notify_all();
        take_ranges();
        std::unique_lock<std::mutex> lock(m_);
        if (--busy_ > 0) done_.wait(lock, [&] { return busy_ == 0; });
        fn_ = nullptr;
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }

private:
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
            {
                std::unique_lock<std::mutex> lock(m_);
                wake_.wait(lock, [&] { return generation_ != seen; });
                seen = generation_;
                if (stop_) return;
            }
            take_ranges();
            std::lock_guard<std::mutex> lock(m_);
            if (--busy_ == 0) done_.notify_one();
        }
    }

    std::vector<std::thread> workers_;
    std::mutex m_;
    std::condition_variable wake_, done_;
    uint64_t generation_ = 0;
    bool stop_ = false;
    const range_fn* fn_ = nullptr;
    int64_t n_ = 0, step_ = 1;
    std::atomic<int64_t> next_{0};
    int busy_ = 0;
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
