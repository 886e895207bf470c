// Choosing the next token from logits: penalties, then temperature, top-k, top-p and min-p, then a seeded draw
// (or the arg-max). NaN logits count as −inf and never reach a sort.
#pragma once

#include <cstdint>
#include <string>
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

// Applies repetition penalty and no-repeat-n-gram bans for the token history, in place.
void apply_penalties(std::vector<float>& logits, const std::vector<int32_t>& history, const sampling_params& p);
// Picks a token: greedy or sampled after temperature / top-k / top-p / min-p. Errors if no logit is finite.
int32_t pick_token(const std::vector<float>& logits, const sampling_params& p, rng& r);
// log softmax(logits)[id], NaN treated as −inf.
double log_prob(const std::vector<float>& logits, int32_t id);

}  // namespace wf
