#include "tasks/sampling.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "kernels/kernels.h"

namespace wf {

void validate(const sampling_params& p) {
    if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature)) throw error("temperature must be a finite number ≥ 0, got " + std::to_string(p.temperature));
    if (p.top_k < 0) throw error("top_k must be ≥ 0, got " + std::to_string(p.top_k));
    if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) throw error("top_p must be in (0, 1], got " + std::to_string(p.top_p));
    if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) throw error("min_p must be in [0, 1], got " + std::to_string(p.min_p));
    if (!(p.repetition_penalty > 0.0f) || !std::isfinite(p.repetition_penalty))
        throw error("repetition_penalty must be a finite number > 0, got " + std::to_string(p.repetition_penalty));
    if (p.no_repeat_ngram_size < 0) throw error("no_repeat_ngram_size must be ≥ 0, got " + std::to_string(p.no_repeat_ngram_size));
}

namespace {
uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
float finite_or_min(float v) { return std::isnan(v) ? -INFINITY : v; }
}  // namespace

rng::rng(uint64_t seed) {
    for (auto& s : s_) s = splitmix(seed);
}

uint64_t rng::next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

double rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

void sampler::apply_penalties(std::span<float> logits, std::span<const int32_t> history) {
    const int64_t V = int64_t(logits.size());
    changed_.clear();
    if (p_.repetition_penalty != 1.0f) {
        seen_.assign(history.begin(), history.end());
        std::sort(seen_.begin(), seen_.end());
        seen_.erase(std::unique(seen_.begin(), seen_.end()), seen_.end());
        for (int32_t id : seen_)
            if (id >= 0 && id < V) {
                float& l = logits[size_t(id)];
                changed_.emplace_back(id, l);
                l = l > 0 ? l / p_.repetition_penalty : l * p_.repetition_penalty;
            }
    }
    const int64_t n = p_.no_repeat_ngram_size, H = int64_t(history.size());
    if (n > 0 && H + 1 >= n) {
        // ban every token that would complete an n-gram already in the history
        for (int64_t s = 0; s + n <= H; ++s) {
            if (std::equal(history.begin() + s, history.begin() + s + n - 1, history.end() - (n - 1))) {
                const int32_t banned = history[size_t(s + n - 1)];
                if (banned >= 0 && banned < V) logits[size_t(banned)] = -INFINITY;
            }
        }
    }
}

float sampler::original_logit(std::span<const float> logits, int32_t id) const {
    for (auto& [i, v] : changed_)
        if (i == id) return v;
    return logits[size_t(id)];
}

int32_t sampler::pick(std::span<const float> logits) {
    const int64_t V = int64_t(logits.size());
    const int32_t best = int32_t(argmax(logits.data(), V));  // the first of the largest, NaN as −inf
    if (best < 0) throw error("the model produced no finite logits (NaN or −inf everywhere)");
    if (!p_.do_sample || p_.temperature == 0.0f) return best;

    // candidates: finite logits, sorted descending, then top-k / top-p / min-p on their probabilities
    idx_.clear();
    for (int64_t i = 0; i < V; ++i)
        if (finite_or_min(logits[size_t(i)]) > -INFINITY) idx_.push_back(int32_t(i));
    auto by_logit = [&](int32_t a, int32_t b) { return logits[size_t(a)] != logits[size_t(b)] ? logits[size_t(a)] > logits[size_t(b)] : a < b; };
    if (p_.top_k > 0 && int64_t(idx_.size()) > p_.top_k) {
        std::partial_sort(idx_.begin(), idx_.begin() + p_.top_k, idx_.end(), by_logit);
        idx_.resize(size_t(p_.top_k));
    } else {
        std::sort(idx_.begin(), idx_.end(), by_logit);
    }
    prob_.resize(idx_.size());
    const double mx = double(logits[size_t(idx_[0])]) / p_.temperature;
    double z = 0;
    for (size_t i = 0; i < idx_.size(); ++i) z += prob_[i] = std::exp(double(logits[size_t(idx_[i])]) / p_.temperature - mx);
    for (auto& q : prob_) q /= z;
    size_t keep = idx_.size();
    if (p_.top_p < 1.0f) {  // the smallest head whose mass reaches top_p, the token that crosses it included
        double cum = 0;
        for (size_t i = 0; i < idx_.size(); ++i) {
            cum += prob_[i];
            if (cum >= double(p_.top_p)) {
                keep = i + 1;
                break;
            }
        }
    }
    if (p_.min_p > 0.0f)  // relative to the most likely token
        while (keep > 1 && prob_[keep - 1] < double(p_.min_p) * prob_[0]) --keep;
    double total = 0;
    for (size_t i = 0; i < keep; ++i) total += prob_[i];
    double u = rng_.uniform() * total;
    for (size_t i = 0; i < keep; ++i) {
        u -= prob_[i];
        if (u < 0) return idx_[i];
    }
    return idx_[keep - 1];
}

double log_sum_exp(std::span<const float> logits) { return wf::log_sum_exp(logits.data(), int64_t(logits.size())); }

double log_prob(std::span<const float> logits, int32_t id) { return double(finite_or_min(logits[size_t(id)])) - log_sum_exp(logits); }

}  // namespace wf
