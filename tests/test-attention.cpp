// Attention: the SIMD version and its scalar twin against a naive, independent triple loop, with padding and
// causal masks, a KV-cache layout (strided K/V, queries offset into the cache), and head splitting.
#include <catch2/catch.hpp>

#include <cstring>

#include "kernels/attention.h"
#include "helpers.h"

namespace {

// softmax_j(q_i·k_j·scale + mask) · v, written out directly.
std::vector<float> naive(const wf::attention_args& a, std::vector<float>* probs) {
    const int64_t D = a.head_dim;
    std::vector<float> out(static_cast<size_t>(a.n_q * a.n_head * D), 0.0f);
    for (int h = 0; h < a.n_head; ++h)
        for (int64_t i = 0; i < a.n_q; ++i) {
            const int64_t kv = (a.n_head_kv > 0 ? h / (a.n_head / a.n_head_kv) : h) * D;  // the K/V head this query head reads
            std::vector<double> s(static_cast<size_t>(a.n_kv));
            double mx = -INFINITY;
            for (int64_t j = 0; j < a.n_kv; ++j) {
                const int64_t dist = a.q_pos + i - j;  // the query's position minus the key's
                const bool ok = (!a.causal || dist >= 0) && (a.window < 0 || std::abs(dist) <= a.window) && (!a.key_valid || a.key_valid[j]);
                double d = 0;
                for (int64_t e = 0; e < D; ++e) d += double(a.q[i * a.ld_q + h * D + e]) * a.k[j * a.ld_k + kv + e];
                d *= a.scale;
                if (a.bias) d += a.bias[(h * a.n_q + i) * a.n_kv + j];
                if (a.softcap > 0) d = a.softcap * std::tanh(d / a.softcap);
                s[size_t(j)] = ok ? d : -INFINITY;
                mx = std::max(mx, s[size_t(j)]);
            }
            double z = 0;
            for (auto& v : s) z += (v = std::exp(v - mx));
            for (int64_t j = 0; j < a.n_kv; ++j) {
                const double p = s[size_t(j)] / z;
                if (probs) (*probs)[size_t((h * a.n_q + i) * a.n_kv + j)] = float(p);
                for (int64_t e = 0; e < D; ++e) out[size_t(i * a.n_head * D + h * D + e)] += float(p * a.v[j * a.ld_v + kv + e]);
            }
        }
    return out;
}

void check(int n_head, int head_dim, int64_t n_q, int64_t n_kv, bool causal, bool padding, uint32_t seed, int n_head_kv = 0,
           int64_t window = -1, float softcap = 0.0f, bool bias = false) {
    INFO("bias=" << bias << " window=" << window << " " << "heads=" << n_head << " kv heads=" << n_head_kv << " d=" << head_dim << " n_q=" << n_q << " n_kv=" << n_kv << " causal=" << causal
                  << " pad=" << padding);
    const int64_t E = n_head * head_dim, Ekv = (n_head_kv ? n_head_kv : n_head) * head_dim;
    // K and V interleaved in one cache row of 2·Ekv + 3 floats (stride ≠ width), Q with its own stride.
    const auto q = wft::random_floats(static_cast<size_t>(n_q * (E + 1)), seed, -2.0f, 2.0f);
    const auto kv = wft::random_floats(static_cast<size_t>(n_kv * (2 * Ekv + 3)), seed + 1, -2.0f, 2.0f);
    std::vector<uint8_t> valid(static_cast<size_t>(n_kv), 1);
    if (padding)
        for (int64_t j = 0; j < n_kv; j += 3) valid[size_t(j)] = 0;
    valid[0] = 1;  // keep one key visible to every query
    wf::attention_args a;
    a.q = q.data();
    a.ld_q = E + 1;
    a.k = kv.data();
    a.v = kv.data() + Ekv;
    a.ld_k = a.ld_v = 2 * Ekv + 3;
    a.n_head_kv = n_head_kv;
    a.n_q = n_q;
    a.n_kv = n_kv;
    a.n_head = n_head;
    a.head_dim = head_dim;
    a.scale = 1.0f / std::sqrt(float(head_dim));
    a.causal = causal;
    a.q_pos = n_kv - n_q;
    a.key_valid = padding ? valid.data() : nullptr;
    a.window = window;
    a.softcap = softcap;
    const auto scores_bias = wft::random_floats(static_cast<size_t>(n_head * n_q * n_kv), seed + 2, -3.0f, 3.0f);
    if (bias) a.bias = scores_bias.data();
    if (window >= 0)  // keep one key visible to every query: its own position
        for (int64_t j = 0; j < n_kv; ++j) valid[size_t(j)] = 1;
    std::vector<float> want_p(static_cast<size_t>(n_head * n_q * n_kv));
    const auto want = naive(a, &want_p);
    std::vector<float> whole, whole_p;  // the SIMD kernel's results on all heads at once
    for (int variant = 0; variant < 3; ++variant) {
        std::vector<float> out(static_cast<size_t>(n_q * E), NAN), probs(want_p.size(), NAN);
        a.out = out.data();
        a.ld_out = E;
        a.probs = probs.data();
        // variant 1: the scalar twin, 2: the SIMD kernel, each run as two head ranges (the way threads split it)
        void (*const run)(const wf::attention_args&) = variant == 1 ? &wf::ref::attention : &wf::attention;
        if (variant == 0) {
            run(a);
        } else {
            a.head_begin = 0;
            a.head_end = n_head / 2;
            run(a);
            a.head_begin = n_head / 2;
            a.head_end = -1;
            run(a);
            a.head_begin = 0;
        }
        for (size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == Approx(want[i]).margin(2e-5).epsilon(1e-4));
        for (size_t i = 0; i < probs.size(); ++i) REQUIRE(probs[i] == Approx(want_p[i]).margin(1e-6).epsilon(1e-4));
        if (variant == 0) whole = out, whole_p = probs;
        if (variant == 2) {  // a head's results do not depend on where a range of heads starts: bit for bit
            REQUIRE(std::memcmp(out.data(), whole.data(), out.size() * sizeof(float)) == 0);
            REQUIRE(std::memcmp(probs.data(), whole_p.data(), probs.size() * sizeof(float)) == 0);
        }
    }
}

}  // namespace

TEST_CASE("attention matches a naive reference with padding and causal masks", "[attention]") {
    uint32_t seed = 1;
    for (int64_t n : {1, 3, 17, 33})
        for (bool causal : {false, true})
            for (bool padding : {false, true}) check(3, 15, n, n, causal, padding, seed++);
    check(12, 64, 128, 128, false, true, seed++);  // BERT-base shape with padding
    check(4, 33, 1, 31, true, false, seed++);      // one decode step against a 31-entry cache
    check(2, 17, 5, 40, true, false, seed++);      // 5 new tokens after 35 cached ones
    check(8, 16, 7, 7, true, false, seed++, 2);    // grouped-query attention: 4 query heads per K/V head
    check(6, 24, 1, 19, true, false, seed++, 3);   // … a decode step
    check(5, 8, 9, 9, false, true, seed++, 1);     // multi-query attention, with padding
    check(4, 16, 13, 13, true, false, seed++, 2, 3);   // Mistral's sliding window (4 keys: itself and 3 before)
    check(4, 16, 1, 21, true, false, seed++, 2, 4);    // … a decode step far past the window
    check(3, 8, 11, 11, false, false, seed++, 0, 2);   // a bidirectional local window (ModernBERT's)
    check(4, 16, 9, 9, true, false, seed++, 2, -1, 1.5f);  // Gemma 2's soft-capped scores (a small cap: it matters)
    check(4, 8, 13, 13, false, true, seed++, 0, -1, 0.0f, true);  // T5's position bias on the scores, padded
    check(4, 8, 1, 17, true, false, seed++, 0, -1, 0.0f, true);   // … a causal decode step
    // decode steps at head widths where whole passes of the output's vectors, single vectors and single columns all
    // occur, with more keys than one block of the P·V pass, padded, grouped, 2 queries
    check(12, 64, 1, 45, true, true, seed++);           // GPT-2 small's heads
    check(4, 40, 2, 37, true, false, seed++, 2);        // 2 queries, 2 query heads per K/V head
    check(3, 70, 1, 23, false, true, seed++, 0, -1, 0.0f, true);  // d = 70: 2 columns past the last vector
}

TEST_CASE("a causal query never attends to later keys", "[attention]") {
    const int64_t T = 9, D = 4;
    auto q = wft::random_floats(static_cast<size_t>(T * D), 5), k = wft::random_floats(static_cast<size_t>(T * D), 6), v = wft::random_floats(static_cast<size_t>(T * D), 7);
    std::vector<float> out(static_cast<size_t>(T * D)), probs(static_cast<size_t>(T * T));
    wf::attention_args a{q.data(), D, k.data(), D, v.data(), D, out.data(), D, T, T, 1, int(D), 0.5f, true, 0, nullptr, probs.data()};
    wf::attention(a);
    for (int64_t i = 0; i < T; ++i) {
        double row = 0;
        for (int64_t j = 0; j < T; ++j) {
            if (j > i) REQUIRE(probs[size_t(i * T + j)] == 0.0f);
            row += probs[size_t(i * T + j)];
        }
        REQUIRE(row == Approx(1.0));
    }
    // the first query sees only itself: its output is v_0
    for (int64_t e = 0; e < D; ++e) REQUIRE(out[size_t(e)] == Approx(v[size_t(e)]));
}
