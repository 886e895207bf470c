#include "nn/kv-cache.h"

#include <cstring>
#include <new>

#include "core/checked.h"

namespace wf {

kv_cache::kv_cache(int64_t n_layer, int64_t n_seq, int64_t capacity, int64_t row)
    : n_layer_(n_layer), n_seq_(n_seq), capacity_(capacity), row_(row) {
    const int64_t n = checked_mul(checked_mul(n_layer, n_seq, "KV cache size overflows"), checked_mul(capacity, row, "KV cache size overflows"),
                                  "KV cache size overflows");
    try {
        k_.resize(size_t(n));
        v_.resize(size_t(n));
    } catch (const std::bad_alloc&) {
        throw error("out of memory: a KV cache of " + std::to_string(capacity) + " positions needs " + std::to_string(2 * n * 4) + " bytes");
    }
}

void kv_cache::reorder(std::span<const int32_t> parents) {
    if (int64_t(parents.size()) != n_seq_) throw error("kv_cache::reorder: " + std::to_string(parents.size()) + " parents for " + std::to_string(n_seq_) + " sequences");
    for (int32_t p : parents)
        if (p < 0 || p >= n_seq_) throw error("kv_cache::reorder: parent " + std::to_string(p) + " is not a sequence");
    const size_t len = size_t(n_past * row_);
    std::vector<float> keep(size_t(n_seq_) * len);
    for (std::vector<float>* t : {&k_, &v_})
        for (int64_t l = 0; l < n_layer_; ++l) {
            for (int64_t s = 0; s < n_seq_; ++s) std::memcpy(keep.data() + size_t(s) * len, t->data() + at(l, s, 0), len * 4);
            for (int64_t s = 0; s < n_seq_; ++s) std::memcpy(t->data() + at(l, s, 0), keep.data() + size_t(parents[size_t(s)]) * len, len * 4);
        }
}

void kv_cache::keep_sequences(std::span<const int32_t> rows) {
    for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i] < 0 || rows[i] >= n_seq_ || (i > 0 && rows[i] <= rows[i - 1]))
            throw error("kv_cache::keep_sequences: the rows must be increasing sequences of the cache");
    const int64_t n = int64_t(rows.size());
    const size_t len = size_t(n_past * row_);
    for (std::vector<float>* t : {&k_, &v_}) {
        std::vector<float> kept(size_t(n_layer_ * n * capacity_ * row_));
        for (int64_t l = 0; l < n_layer_; ++l)
            for (int64_t i = 0; i < n; ++i)
                std::memcpy(kept.data() + ((l * n + i) * capacity_) * row_, t->data() + at(l, rows[size_t(i)], 0), len * 4);
        *t = std::move(kept);
    }
    n_seq_ = n;
}

void kv_cache::copy_prefix(const kv_cache& from, int64_t n) {
    if (from.n_layer_ != n_layer_ || from.n_seq_ != n_seq_ || from.row_ != row_ || n < 0 || n > capacity_ || n > from.capacity_)
        throw error("kv_cache::copy_prefix: the caches differ in shape, or " + std::to_string(n) + " positions do not fit");
    for (int64_t l = 0; l < n_layer_; ++l)
        for (int64_t s = 0; s < n_seq_; ++s) {
            std::memcpy(k(l, s, 0), from.k(l, s, 0), size_t(n * row_) * 4);
            std::memcpy(v(l, s, 0), from.v(l, s, 0), size_t(n * row_) * 4);
        }
    n_past = n;
}

}  // namespace wf
