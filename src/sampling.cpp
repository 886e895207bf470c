#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "tensor.h"

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

void apply_penalties(std::vector<float>& logits, const std::vector<int32_t>& history, const sampling_params& p) {
    const int64_t V = int64_t(logits.size());
    if (p.repetition_penalty != 1.0f) {
        std::set<int32_t> seen(history.begin(), history.end());
        for (int32_t id : seen)
            if (id >= 0 && id < V) {
                float& l = logits[size_t(id)];
                l = l > 0 ? l / p.repetition_penalty : l * p.repetition_penalty;
            }
    }
    const int64_t n = p.no_repeat_ngram_size, H = int64_t(history.size());
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

int32_t pick_token(const std::vector<float>& logits_in, const sampling_params& p, rng& r) {
    const int64_t V = int64_t(logits_in.size());
    int32_t best = -1;
    for (int64_t i = 0; i < V; ++i) {
        const float v = finite_or_min(logits_in[size_t(i)]);
        if (v > -INFINITY && (best < 0 || v > logits_in[size_t(best)])) best = int32_t(i);
    }
    if (best < 0) throw error("the model produced no finite logits (NaN or −inf everywhere)");
    if (!p.do_sample || p.temperature == 0.0f) return best;

    // candidates: finite logits, sorted descending, then top-k / top-p / min-p on their probabilities
    std::vector<int32_t> idx;
    idx.reserve(size_t(V));
    for (int64_t i = 0; i < V; ++i)
        if (finite_or_min(logits_in[size_t(i)]) > -INFINITY) idx.push_back(int32_t(i));
    auto by_logit = [&](int32_t a, int32_t b) { return logits_in[size_t(a)] != logits_in[size_t(b)] ? logits_in[size_t(a)] > logits_in[size_t(b)] : a < b; };
    if (p.top_k > 0 && int64_t(idx.size()) > p.top_k) {
        std::partial_sort(idx.begin(), idx.begin() + p.top_k, idx.end(), by_logit);
        idx.resize(size_t(p.top_k));
    } else {
        std::sort(idx.begin(), idx.end(), by_logit);
    }
    std::vector<double> prob(idx.size());
    const double mx = double(logits_in[size_t(idx[0])]) / p.temperature;
    double z = 0;
    for (size_t i = 0; i < idx.size(); ++i) z += prob[i] = std::exp(double(logits_in[size_t(idx[i])]) / p.temperature - mx);
    for (auto& q : prob) q /= z;
    size_t keep = idx.size();
    if (p.top_p < 1.0f) {
        double cum = 0;
        for (size_t i = 0; i < idx.size(); ++i) {
            cum += prob[i];
            if (cum >= double(p.top_p)) {
                keep = i + 1;
                break;
            }
        }
    }
    if (p.min_p > 0.0f)
        while (keep > 1 && prob[keep - 1] < double(p.min_p) * prob[0]) --keep;
    double total = 0;
    for (size_t i = 0; i < keep; ++i) total += prob[i];
    double u = r.uniform() * total;
    for (size_t i = 0; i < keep; ++i) {
        u -= prob[i];
        if (u < 0) return idx[i];
    }
    return idx[keep - 1];
}

double log_prob(const std::vector<float>& logits, int32_t id) {
    double mx = -INFINITY;
    for (float v : logits) mx = std::max(mx, double(finite_or_min(v)));
    double z = 0;
    for (float v : logits) z += std::exp(double(finite_or_min(v)) - mx);
    return double(finite_or_min(logits[size_t(id)])) - mx - std::log(z);
}

}  // namespace wf
