// Keys and values of a decoder's past positions, for one or several sequences decoded side by side (a batch of
// beams), with grouped-query attention's narrower rows (n_head_kv·head_dim).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/error.h"

namespace wf {

class kv_cache {
public:
    kv_cache() = default;
    // k and v are (n_layer, n_seq, capacity, row) floats; row = n_head_kv·head_dim.
    kv_cache(int64_t n_layer, int64_t n_seq, int64_t capacity, int64_t row);
    int64_t n_layer() const { return n_layer_; }
    int64_t n_seq() const { return n_seq_; }
    int64_t capacity() const { return capacity_; }
    int64_t row() const { return row_; }
    int64_t n_past = 0;  // positions filled (the same for every sequence)

    float* k(int64_t layer, int64_t seq, int64_t pos) { return k_.data() + at(layer, seq, pos); }
    float* v(int64_t layer, int64_t seq, int64_t pos) { return v_.data() + at(layer, seq, pos); }
    const float* k(int64_t layer, int64_t seq, int64_t pos) const { return k_.data() + at(layer, seq, pos); }
    const float* v(int64_t layer, int64_t seq, int64_t pos) const { return v_.data() + at(layer, seq, pos); }

    // Beam search: sequence i becomes a copy of what sequence parents[i] was (parents.size() == n_seq), for the
    // n_past positions filled.
    void reorder(std::span<const int32_t> parents);
    // The first n positions of every layer and sequence copied from `from` (same layers, sequences and row width;
    // n ≤ both capacities), and n_past = n.
    void copy_prefix(const kv_cache& from, int64_t n);
    // Only the sequences `rows` are kept (increasing, distinct): sequence i becomes what sequence rows[i] was, and
    // n_seq = rows.size() — a batch drops the sequences that have ended.
    void keep_sequences(std::span<const int32_t> rows);

private:
    int64_t at(int64_t layer, int64_t seq, int64_t pos) const { return ((layer * n_seq_ + seq) * capacity_ + pos) * row_; }
    int64_t n_layer_ = 0, n_seq_ = 0, capacity_ = 0, row_ = 0;
    std::vector<float> k_, v_;
};

}  // namespace wf
