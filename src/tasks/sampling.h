// Choosing the next token from logits: penalties, then temperature, top-k, top-p and min-p, then a seeded draw
// (or the arg-max). NaN logits count as −inf and never reach a sort. A sampler keeps its buffers between tokens,
// so choosing allocates nothing once the first token is chosen.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace wf {

struct sampling_params {
    bool do_sample = false;           // false: greedy (arg-max)
    float temperature = 1.0f;         // 0 means greedy; must be ≥ 0
    int64_t top_k = 0;                // 0: off
    float top_p = 1.0f;               // in (0, 1]; 1: off
    float min_p = 0.0f;               // in [0, 1]; 0: off
    float repetition_penalty = 1.0f;  // > 0; 1: off (Hugging Face's rule: positive logits ÷ p, negative × p)
    int64_t no_repeat_ngram_size = 0; // 0: off
    uint64_t seed = 0;
};

// Errors for values that have no meaning (NaN, negative temperature, top_p outside (0, 1], …).
void validate(const sampling_params& p);

// xoshiro256**, seeded through splitmix64: the same numbers natively and in wasm.
class rng {
public:
    explicit rng(uint64_t seed);
    uint64_t next();
    double uniform();  // [0, 1)

private:
    uint64_t s_[4];
};

class sampler {
public:
    explicit sampler(const sampling_params& p) : p_(p), rng_(p.seed) { validate(p); }
    // Applies the repetition penalty and no-repeat-n-gram bans for the token history, in place. The entries the
    // repetition penalty changed are remembered with their old values (original_logit reads them back).
    void apply_penalties(std::span<float> logits, std::span<const int32_t> history);
    // Picks a token: greedy or sampled after temperature / top-k / top-p / min-p. Errors if no logit is finite.
    int32_t pick(std::span<const float> logits);
    // The logit of id before the last apply_penalties.
    float original_logit(std::span<const float> logits, int32_t id) const;
    const sampling_params& params() const { return p_; }

private:
    sampling_params p_;
    rng rng_;
    std::vector<int32_t> seen_, idx_;
    std::vector<double> prob_;
    std::vector<std::pair<int32_t, float>> changed_;
};

// log softmax(logits)[id] = logits[id] − log Σ exp(logits), NaN treated as −inf; log_sum_exp alone, for a logit
// read elsewhere.
double log_sum_exp(std::span<const float> logits);
double log_prob(std::span<const float> logits, int32_t id);

}  // namespace wf
