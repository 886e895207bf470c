// Greedy decoding's arg-max over a large output layer, exactly, without every logit of it in full precision.
//
// A step of greedy translation or text generation reads the output layer whole for one number: the index of its
// largest logit. In opus-mt-en-de's shape (58 101 × 512) that layer is 119 MB of f32, 59 % of what a decoder step
// reads; GPT-2 small's (50 257 × 768) 154 MB, 31 %. The screen keeps a
// q8_0 copy of it (a quarter of the bytes) and per row two numbers from making it, ‖w − ŵ‖ and ‖ŵ‖. A step computes
// every logit approximately on the copy (the engine's q8_0 product, which quantizes the activations x to x̂), bounds
// each one's distance from the logit the full layer gives (Cauchy–Schwarz),
//
//   |l_r − a_r| ≤ ‖w_r − ŵ_r‖·‖x‖ + ‖ŵ_r‖·‖x − x̂‖ + the float rounding of both dot products,
//
// and computes in full only the rows whose interval reaches the best lower bound: the arg-max of those is the
// arg-max of all of them, ties to the lower index, because no other row can reach it. Those rows go through the same
// kernel, on the same arithmetic per output, as the full layer (kernels/matmul.cpp: results do not depend on the
// range of rows), so the chosen token is the one the full logits give, bit for bit. The logits processors that only
// exclude tokens (no_repeat_ngram_size, bad_words_ids, forced_eos_token_id, ids the tokenizer cannot name) run on the approximate logits and again
// on the exact candidates. Activations that are not all finite, or a bound that leaves more than 1/16 of the rows
// in, take the full layer.
//
// What it cannot give is a log-probability (which needs every logit's exponential): seq2seq and causal generation
// screen only greedy steps that return no score (tasks/options.h: output_scores), and none with a repetition
// penalty (which moves logits, not only bans them). The models' screen_slot (nn/model.h) makes one when it pays.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "nn/weights.h"

namespace wf {

class head_screen {
public:
    // The screen of an output layer (V, K), or null where none is made: no matrix, weights not f32, f16 or bf16, K not a
    // multiple of 32, fewer than min_rows rows, or a weight that is not finite.
    static std::unique_ptr<head_screen> make(const linear& head);
    static inline int64_t min_rows = 4096;  // fewer rows: no screen (a variable for the tests; the engine never changes it)
    // The greedy steps a model runs in full before it makes its screen (screen_slot): making one for Marian's
    // 58 101 × 512 took about as long as 64 steps save with it (180 ms; 2.7 ms a step, one thread in Node). A
    // variable for the tests, as min_rows.
    static inline int64_t steps_before = 64;

    // Every logit of n rows of x (n, K), approximately: work ← (n, V) from the q8_0 copy, one read of it for all rows
    // (work grows once).
    void approximate(const float* x, int64_t n, std::vector<float>& work) const;
    // Row x (one of the rows approximate() took) and a: its approximate logits after the logits processors
    // that exclude tokens (−inf). scores ← the full layer's logits of every row that can hold the maximum — all rows
    // where the bounds do not rule out 15/16 of them or x is not all finite — and −inf elsewhere. The processors run
    // again on scores and its arg-max is the full logits' (−1 where every token is excluded).
    void exact(const float* x, std::span<const float> a, std::span<float> scores) const;
    // exact() with the caller's processors that only exclude tokens (exclude(span) sets −inf), run where they must:
    // on a (in place) before the bounds, and again on scores. How greedy steps call it.
    template <class Exclude>
    void exact(const float* x, std::span<float> a, std::span<float> scores, Exclude&& exclude) const {
        exclude(a);
        exact(x, std::span<const float>(a), scores);
        exclude(scores);
    }

    // One row of activations as the bounds take it: finite (else the full layer), and the coefficients of the bound
    // |l_r − a_r| ≤ ‖w_r − ŵ_r‖·alpha + ‖ŵ_r‖·beta + c·|a_r| (head-screen.cpp: measure).
    struct activations {
        bool finite = true;
        float alpha = 0, beta = 0;
    };
    activations measure(const float* x) const;
    float bound(int64_t r, const activations& m, float approx) const {  // (exact() takes every row's at once: screen_bounds)
        return err_[size_t(r)] * m.alpha + norm_[size_t(r)] * m.beta + kRound * std::fabs(approx);
    }
    const matrix_view& copy() const { return q_; }
    int64_t candidates() const { return candidates_; }  // rows the last exact() computed in full (tests)

private:
    explicit head_screen(const linear& head) : head_(head) {}
    linear head_;
    matrix_view q_;  // the q8_0 copy (grouped where the GEMV reads that faster)
    std::unique_ptr<uint8_t[]> data_;
    std::vector<float> err_, norm_;  // per row: ‖w − ŵ‖ and ‖ŵ‖ (Euclidean), rounded up
    float norm_all_ = 0;              // the largest of norm_
    static constexpr float kRound = 4.0f / (1 << 24);  // 4u: the bias's addition in both logits, the caller's a ± bound
    mutable int64_t candidates_ = 0;
    mutable std::vector<int32_t> rows_;  // exact()'s candidates
};

}  // namespace wf
