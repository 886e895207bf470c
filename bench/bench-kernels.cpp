// Kernel benchmark: GEMM/GEMV at BERT-base and GPT-2-small shapes in f32, f16 and q8_0, the decode GEMV on GGUF's
// block types (q4_0 … q6_K) at small-model shapes, attention at 128 tokens, and, measured in the same run, this
// machine's SIMD mul-add ceiling and memory read bandwidth, with ratios.
// One thread. Built natively and with Emscripten (run under Node): `npm run bench:kernels`; with the argument
// `blocks`, only the block types' decode GEMV (and the bandwidth it is compared with); `attention`, only attention;
// `logits`, only a greedy step's work on a vocabulary's logits (log-sum-exp, argmax and its scalar twin);
// `activations`, only the row-wise activations (GELU erf and tanh, SiLU·up, softmax) on one FFN's worth of values.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>
#include "kernels/simd.h"

#include "kernels/attention.h"
#include "kernels/kernels.h"
#include "kernels/quants.h"

namespace {

using clk = std::chrono::steady_clock;
volatile float g_sink;

// Best seconds per call over 3 rounds of enough calls to fill ≥ 0.25 s.
double time_call(const std::function<void()>& f) {
    f();
    int reps = 1;
    for (;;) {
        const auto t0 = clk::now();
        for (int i = 0; i < reps; ++i) f();
        const double s = std::chrono::duration<double>(clk::now() - t0).count();
        if (s > 0.25) break;
        reps *= 2;
    }
    double best = 1e30;
    for (int round = 0; round < 3; ++round) {
        const auto t0 = clk::now();
        for (int i = 0; i < reps; ++i) f();
        best = std::min(best, std::chrono::duration<double>(clk::now() - t0).count() / reps);
    }
    return best;
}

// Peak SIMD multiply-add rate: 12 independent chains of x = x·m + c in registers (mul + add, or FMA natively).
double simd_ceiling_gflops() {
    using B = xsimd::batch<float>;
    const int64_t iters = 1 << 20;
    auto run = [&] {
        B a[12];
        for (int j = 0; j < 12; ++j) a[j] = B(1.0f + 0.01f * float(j));
        const B m(0.999999f), c(1e-7f);
        for (int64_t i = 0; i < iters; ++i)
            for (int j = 0; j < 12; ++j) a[j] = xsimd::fma(a[j], m, c);
        B s(0.0f);
        for (int j = 0; j < 12; ++j) s += a[j];
        g_sink = xsimd::hadd(s);
    };
    const double t = time_call(run);
    return double(iters) * 12 * B::size * 2 / t / 1e9;
}

// Read bandwidth: SIMD sum over a 96 MiB buffer (far beyond the caches).
double bandwidth_gbs() {
    using B = xsimd::batch<float>;
    std::vector<float> buf(size_t(24) << 20, 1.0f);
    auto run = [&] {
        B s0(0.0f), s1(0.0f), s2(0.0f), s3(0.0f);
        const int64_t n = int64_t(buf.size()), W = B::size;
        for (int64_t i = 0; i + 4 * W <= n; i += 4 * W) {
            s0 += B::load_aligned(buf.data() + i);
            s1 += B::load_aligned(buf.data() + i + W);
            s2 += B::load_aligned(buf.data() + i + 2 * W);
            s3 += B::load_aligned(buf.data() + i + 3 * W);
        }
        g_sink = xsimd::hadd(s0 + s1 + s2 + s3);
    };
    return double(buf.size()) * 4 / time_call(run) / 1e9;
}

struct weights {
    std::vector<uint8_t> bytes;
    wf::matrix_view view;
};

weights make_weights(int64_t N, int64_t K, wf::dtype type, std::mt19937& rng) {
    std::normal_distribution<float> d(0.0f, 0.02f);
    std::vector<float> w(size_t(N * K));
    for (auto& v : w) v = d(rng);
    weights out;
    out.bytes.resize(size_t(wf::row_bytes(type, K) * N));
    for (int64_t r = 0; r < N; ++r) {
        uint8_t* dst = out.bytes.data() + r * wf::row_bytes(type, K);
        const float* src = w.data() + r * K;
        if (type == wf::dtype::f32) std::memcpy(dst, src, size_t(K) * 4);
        if (type == wf::dtype::f16)
            for (int64_t k = 0; k < K; ++k) {
                const uint16_t h = wf::f32_to_f16(src[k]);
                std::memcpy(dst + 2 * k, &h, 2);
            }
        if (type == wf::dtype::q8_0) wf::quantize_q8_0(src, K, reinterpret_cast<wf::block_q8_0*>(dst));
    }
    out.view = {type, N, K, out.bytes.data()};
    return out;
}

// A block-type matrix of random blocks: random code bytes, finite f16 scale fields (the kernels' work does not
// depend on the values). The f16 fields sit at each block's start, except q2_K (80, 82), q3_K (108), q6_K (208).
std::vector<uint8_t> random_blocks(wf::dtype t, int64_t N, int64_t K, std::mt19937& rng) {
    std::vector<uint8_t> b(size_t(wf::row_bytes(t, K) * N));
    for (auto& v : b) v = uint8_t(rng());
    const int bb = wf::traits(t).block_bytes;
    const int first = t == wf::dtype::q2_k ? 80 : t == wf::dtype::q3_k ? 108 : t == wf::dtype::q6_k ? 208 : 0;
    std::normal_distribution<float> d(0.0f, 0.01f);
    for (size_t at = 0; at < b.size(); at += size_t(bb))
        for (int f = first; f < first + 4 && f + 2 <= bb; f += 2) {
            const uint16_t h = wf::f32_to_f16(d(rng));
            std::memcpy(&b[at + size_t(f)], &h, 2);
        }
    return b;
}

// The 10th percentile of single calls' times over ≥ 200 calls and ≥ 0.5 s: a decode GEMV takes 50 µs – 2 ms, so each
// call can be timed alone, and a low percentile leaves out the calls that another process's time slice lengthened
// (this benchmark shares its machine; best-of-rounds of many calls did not).
double time_single_calls(const std::function<void()>& f) {
    f();
    std::vector<double> t;
    double total = 0;
    while (t.size() < 200 || total < 0.5) {
        const auto t0 = clk::now();
        f();
        t.push_back(std::chrono::duration<double>(clk::now() - t0).count());
        total += t.back();
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 10];
}

// Decode (M = 1) on GGUF's block types at the shapes of SmolLM2-135M (576 ↔ 1536) and Qwen2.5-0.5B (896 ↔ 4864):
// GB/s of weight bytes read, cache-cold (rotating through ≥ 128 MiB of copies), each call timed alone, and warm (the
// same copy every call: the arithmetic's own speed; a type far below its warm speed cold is bound by memory). g4: rows
// grouped by 4, as the loader gives the q8_0 and q4_0 matrices it converts in wasm (dtype.h). A type is left out where a row is
// not whole blocks (576 and 896 are not multiples of 256: llama.cpp's Q4_K_M files store those matrices as Q5_0
// or Q8_0).
// The types `blocks` runs (wf-bench-kernels blocks Q4_K Q6_K); empty: all.
std::vector<wf::dtype> block_types_only;
bool skip_type(wf::dtype t) {
    return !block_types_only.empty() && std::find(block_types_only.begin(), block_types_only.end(), t) == block_types_only.end();
}

void bench_block_types(double bw) {
    std::printf("\ndecode GEMV (M = 1) on GGUF block types, 1 thread, cache-cold: weight bytes read per second (10th percentile of calls)\n");
    std::printf("%-10s %-7s %9s %9s %7s %13s %9s\n", "shape NxK", "type", "us", "GB/s", "% bw", "time / q8_0", "warm GB/s");
    std::mt19937 rng(7);
    // and GPT-2 small's (768 ↔ 3072, 2304 × 768: bench/run.mjs's gpt2 rows) for the K-quants, whose rows must be whole
    // 256-value blocks
    struct shape {
        int64_t n_rows, n_cols;
        bool k_quants_only;
    };
    const shape shapes[] = {{1536, 576, false}, {576, 1536, false}, {4864, 896, false}, {896, 4864, false}, {2304, 768, true}, {768, 3072, true}};
    const wf::dtype types[] = {wf::dtype::q8_0, wf::dtype::q4_0, wf::dtype::q5_0, wf::dtype::iq4_nl, wf::dtype::q4_k,
                               wf::dtype::q5_k, wf::dtype::q6_k, wf::dtype::q3_k, wf::dtype::q2_k};
    for (auto [n_rows, n_cols, k_quants_only] : shapes) {
        const int64_t N = n_rows, K = n_cols;
        double q8_s = 0;
        for (wf::dtype type : types) {
            if (K % wf::traits(type).block != 0 || (k_quants_only && type != wf::dtype::q8_0 && wf::traits(type).block != wf::qk_k)) continue;
            if (skip_type(type) && type != wf::dtype::q8_0) continue;  // (q8_0: the ratio column's reference)
            const size_t one = size_t(wf::row_bytes(type, K) * N), copies = std::max<size_t>(1, (size_t(128) << 20) / one + 1);
            std::vector<uint8_t> all(one * copies);
            std::vector<uint8_t> first = type == wf::dtype::q8_0 ? std::vector<uint8_t>(one) : random_blocks(type, N, K, rng);
            if (type == wf::dtype::q8_0) {  // q8_0 from its quantizer (random int8 codes with random scales alike)
                std::normal_distribution<float> d(0.0f, 0.02f);
                std::vector<float> w(static_cast<size_t>(K));
                for (int64_t r = 0; r < N; ++r) {
                    for (auto& v : w) v = d(rng);
                    wf::quantize_q8_0(w.data(), K, reinterpret_cast<wf::block_q8_0*>(first.data() + r * wf::row_bytes(type, K)));
                }
            }
            // as stored (GGUF files), and q8_0 and q4_0 also as the loader gives the matrices it converts: grouped by 4
            // rows where that pays (wasm)
            for (bool grouped : {false, true}) {
                if (grouped && !(wf::group_rows_pays(type) && wf::group_rows(type, first.data(), N, K))) continue;
                for (size_t c = 0; c < copies; ++c) std::memcpy(all.data() + c * one, first.data(), one);
                std::vector<float> x(static_cast<size_t>(K)), y(static_cast<size_t>(N));
                for (auto& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
                size_t next = 0;
                auto view = [&](size_t c) {
                    wf::matrix_view W{type, N, K, all.data() + c * one};
                    W.grouped = grouped;
                    return W;
                };
                const double s = time_single_calls([&] {
                    wf::matmul(x.data(), 1, K, view(next), nullptr, y.data(), N, 0, N);
                    next = (next + 1) % copies;
                });
                // the same matrix every call: what the arithmetic alone takes, W in L2 or L3
                const double warm = time_single_calls([&] { wf::matmul(x.data(), 1, K, view(0), nullptr, y.data(), N, 0, N); });
                if (type == wf::dtype::q8_0 && !grouped) q8_s = s;
                const double gbs = double(one) / s / 1e9;
                std::printf("%4lldx%-5lld %-7s %9.1f %9.2f %6.0f%% %12.2fx %9.2f\n", (long long)N, (long long)K,
                            (std::string(wf::dtype_name(type)) + (grouped ? " g4" : "")).c_str(), s * 1e6, gbs, 100 * gbs / bw, s / q8_s,
                            double(one) / warm / 1e9);
            }
        }
    }
}

// Prefill (M = 128) on the block types: the integer tile (q8_0; q4_0, q5_0, iq4_nl re-blocked; q4_1, q5_1, q4_K,
// q5_K as codes and minimums) or f32 widening (q2_K, q3_K, q6_K), each weight's conversion per call included.
void bench_block_prefill(double peak) {
    std::printf("\nprefill GEMM (M = 128) on GGUF block types, 1 thread: GFLOP/s (2·M·N·K / time) against the f32 mul-add ceiling\n");
    std::printf("%-10s %-7s %9s %9s %11s %13s\n", "shape NxK", "type", "ms", "GFLOP/s", "% ceiling", "time / q8_0");
    std::mt19937 rng(11);
    const int64_t M = 128;
    const int64_t shapes[][2] = {{1536, 576}, {576, 1536}, {2304, 768}, {768, 3072}};
    const wf::dtype types[] = {wf::dtype::q8_0, wf::dtype::q4_0, wf::dtype::q5_0, wf::dtype::q4_1, wf::dtype::q4_k,
                               wf::dtype::q5_k, wf::dtype::q6_k};
    for (auto [n_rows, n_cols] : shapes) {
        const int64_t N = n_rows, K = n_cols;
        double q8_s = 0;
        for (wf::dtype type : types) {
            if (K % wf::traits(type).block != 0 || (skip_type(type) && type != wf::dtype::q8_0)) continue;
            std::vector<float> w(size_t(N * K)), x(size_t(M * K)), y(size_t(M * N));
            for (auto& v : w) v = std::normal_distribution<float>(0.0f, 0.02f)(rng);
            for (auto& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
            std::vector<uint8_t> bytes(size_t(wf::row_bytes(type, K) * N));
            wf::traits(type).from_f32(w.data(), bytes.data(), N * K);
            // as stored, then grouped by 4 rows where the loader groups them (dtype.h: the tile reads those rows back as stored)
            for (bool grouped : {false, true}) {
                if (grouped && !(wf::group_rows_pays(type) && wf::group_rows(type, bytes.data(), N, K))) continue;
                wf::matrix_view W{type, N, K, bytes.data()};
                W.grouped = grouped;
                const double s = time_call([&] { wf::matmul(x.data(), M, K, W, nullptr, y.data(), N, 0, N); });
                if (type == wf::dtype::q8_0 && !grouped) q8_s = s;
                const double gflops = 2.0 * double(M * N * K) / s / 1e9;
                std::printf("%4lldx%-5lld %-7s %9.3f %9.1f %10.0f%%", (long long)N, (long long)K,
                            (std::string(wf::dtype_name(type)) + (grouped ? " g4" : "")).c_str(), s * 1e3, gflops, 100 * gflops / peak);
                if (q8_s > 0) std::printf(" %12.2fx", s / q8_s);
                std::printf("\n");
            }
        }
    }
}

// Encoders' f32 GEMMs at many rows: all-MiniLM-L6-v2's shapes (384 wide; npm run bench's embed row: 32 texts × 64
// tokens = 2048 rows) and DistilBERT-base's (768; the qa row's 384 tokens). Each both ways, in 30 pairs of runs: x given to the
// tile in parts that fit L2 (matmul_part_bytes, the engine's default) and whole; the median of the pairs' ratios.
void bench_encoders(double peak, int64_t part_bytes) {
    std::printf("\nencoder GEMMs, f32, 1 thread: GFLOP/s against the f32 mul-add ceiling, x in parts (as the engine) and whole\n"
                "%-10s %5s %9s %11s %11s %15s\n", "shape NxK", "M", "ms", "GFLOP/s", "% ceiling", "parts / whole");
    std::mt19937 rng(13);
    const int64_t shapes[][2] = {{384, 384}, {1536, 384}, {384, 1536}, {2304, 768}, {3072, 768}, {768, 3072}};
    const int64_t engine_part = wf::matmul_part_bytes, part = part_bytes > 0 ? part_bytes : engine_part;
    for (auto [n_rows, n_cols] : shapes) {
        const int64_t N = n_rows, K = n_cols;
        const weights W = make_weights(N, K, wf::dtype::f32, rng);
        for (const int64_t M : {int64_t(128), int64_t(384), int64_t(2048)}) {
            std::vector<float> x(size_t(M * K)), y(size_t(M * N));
            for (auto& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
            // pairs of runs (each ≥ 20 ms), parts then whole, then the other way round: this machine's pace changes
            // within a second, and a pair's ratio is what survives that
            auto run = [&](int64_t bytes, int reps) {
                wf::matmul_part_bytes = bytes;
                const auto t0 = clk::now();
                for (int i = 0; i < reps; ++i) wf::matmul(x.data(), M, K, W.view, nullptr, y.data(), N, 0, N);
                return std::chrono::duration<double>(clk::now() - t0).count() / reps;
            };
            const int reps = std::max(1, int(0.02 / run(part, 1)));
            const int64_t whole = int64_t(1) << 60;
            std::vector<double> ratio, parts_s;
            for (int pair = 0; pair < 30; ++pair) {
                double a, b;
                if (pair % 2) a = run(part, reps), b = run(whole, reps);
                else b = run(whole, reps), a = run(part, reps);
                ratio.push_back(a / b), parts_s.push_back(a);
            }
            wf::matmul_part_bytes = engine_part;
            std::sort(ratio.begin(), ratio.end()), std::sort(parts_s.begin(), parts_s.end());
            const double s = parts_s[parts_s.size() / 2], gflops = 2.0 * double(M * N * K) / s / 1e9;
            std::printf("%4lldx%-5lld %5lld %9.3f %11.1f %10.0f%% %15.3f\n", (long long)N, (long long)K, (long long)M, s * 1e3, gflops,
                        100 * gflops / peak, ratio[ratio.size() / 2]);
        }
    }
}

// Attention: BERT-base's encoder shape (12 heads × 64, 128 tokens: the blocked tiles), and one decode step's
// queries against KV caches as decoders keep them (rows of all heads, capacity 256, keys 0 … n_kv − 1): GPT-2
// small's (12 heads × 64) and Qwen2.5-0.5B's (14 query heads on 2 K/V heads), the caches of all layers in turn, as a
// token's step reads them — from memory, the weights' stream having pushed them out of cache (each call takes the
// next of enough copies to fill 128 MB); GB/s of K and V.
// What a greedy decoding step does with the logits besides the output layer: the log-probability's normalizer
// (log_sum_exp) and the choice (argmax, against its scalar twin, the loop it replaced), at GPT-2's and Marian's
// vocabulary sizes.
void bench_logits() {
    std::printf("\na greedy step's logits: us a call\n%-8s %12s %10s %16s\n", "n", "log_sum_exp", "argmax", "argmax (scalar)");
    std::mt19937 rng(5);
    for (const int64_t n : {int64_t(50257), int64_t(58101)}) {
        std::vector<float> x(static_cast<size_t>(n));
        for (auto& f : x) f = std::normal_distribution<float>(0.0f, 3.0f)(rng);
        const double lse = time_call([&] { g_sink = float(wf::log_sum_exp(x.data(), n)); });
        const double am = time_call([&] { g_sink = float(wf::argmax(x.data(), n)); });
        const double am_ref = time_call([&] { g_sink = float(wf::ref::argmax(x.data(), n)); });
        std::printf("%-8lld %12.1f %10.1f %16.1f\n", (long long)n, lse * 1e6, am * 1e6, am_ref * 1e6);
    }
}

// The activations on the values of one text's feed-forward layer as all-MiniLM-L6-v2 has it (64 tokens × 1536, 393 KB:
// in L2, as after the matmul that wrote them), inputs spread as a layer's are (normal, σ = 2): ns a value.
void bench_activations() {
    const int64_t n = 64 * 1536;
    std::mt19937 rng(11);
    std::vector<float> x0(static_cast<size_t>(n)), x(x0.size()), up(x0.size());
    for (auto& f : x0) f = std::normal_distribution<float>(0.0f, 2.0f)(rng);
    for (auto& f : up) f = std::normal_distribution<float>(0.0f, 1.0f)(rng);
    auto ns = [&](const std::function<void()>& f) { return 1e9 * time_call([&] { std::memcpy(x.data(), x0.data(), x.size() * 4), f(); }) / double(n); };
    const double copy = ns([] {});
    std::printf("\nactivations on %lld values: ns a value (a copy of the input, %.3f ns a value, subtracted)\n", (long long)n, copy);
    std::printf("%-10s %8.3f\n", "gelu_erf", ns([&] { wf::gelu_erf(x.data(), n); }) - copy);
    std::printf("%-10s %8.3f\n", "gelu_tanh", ns([&] { wf::gelu_tanh(x.data(), n); }) - copy);
    std::printf("%-10s %8.3f\n", "silu_mul", ns([&] { wf::silu_mul(x.data(), up.data(), n); }) - copy);
    std::printf("%-10s %8.3f\n", "softmax", ns([&] { for (int64_t r = 0; r < 64; ++r) wf::softmax(x.data() + r * 1536, 1536); }) - copy);
    // the integer GEMMs' and GEMVs' activations, per row of x and call
    std::vector<wf::block_q8_0> blocks(static_cast<size_t>(n / wf::q8_block));
    std::printf("%-10s %8.3f\n", "q8_0", ns([&] { wf::quantize_q8_0(x.data(), n, blocks.data()); }) - copy);
}

void bench_attention(double peak, double bw) {
    std::mt19937 rng(7);
    auto fill = [&](std::vector<float>& a) {
        for (auto& f : a) f = std::uniform_real_distribution<float>(-1, 1)(rng);
    };
    {
        const int64_t T = 128, H = 12, D = 64, E = H * D;
        std::vector<float> q(size_t(T * E)), k(size_t(T * E)), v(size_t(T * E)), o(size_t(T * E));
        for (auto* a : {&q, &k, &v}) fill(*a);
        wf::attention_args a{q.data(), E, k.data(), E, v.data(), E, o.data(), E, T, T, int(H), int(D), 0.125f};
        const double s = time_call([&] { wf::attention(a); });
        const double flops = 4.0 * double(H * T * T * D);
        std::printf("\nattention 128 tokens, 12 heads x 64: %.3f ms, %.1f GFLOP/s (%.0f%% of ceiling)\n", s * 1e3,
                    flops / s / 1e9, 100 * flops / s / 1e9 / peak);
    }
    std::printf("\ndecode attention (1 query), all layers' caches in turn: us a token, GB/s of K and V read (%% of bandwidth)\n");
    std::printf("%-26s %6s %10s %8s %6s\n", "shape", "keys", "us", "GB/s", "% bw");
    struct shape { const char* name; int64_t layers, heads, kv_heads, D; };
    for (const shape sh : {shape{"GPT-2 small 12 x 12h x 64", 12, 12, 12, 64}, shape{"Qwen2.5-0.5B 24 x 14/2h x 64", 24, 14, 2, 64}}) {
        const int64_t cap = 256, Eq = sh.heads * sh.D, Ekv = sh.kv_heads * sh.D;
        const int64_t copies = (int64_t(128) << 20) / (2 * sh.layers * cap * Ekv * 4) + 1, caches = copies * sh.layers;
        std::vector<std::vector<float>> k(static_cast<size_t>(caches), std::vector<float>(static_cast<size_t>(cap * Ekv)));
        auto v = k;
        for (auto& c : k) fill(c);
        for (auto& c : v) fill(c);
        std::vector<float> q(static_cast<size_t>(Eq)), o(static_cast<size_t>(Eq));
        fill(q);
        for (const int64_t n_kv : {int64_t(32), int64_t(160), int64_t(256)}) {
            int64_t next = 0;
            const double s = time_call([&] {
                next = (next + 1) % copies;
                for (int64_t l = next * sh.layers; l < (next + 1) * sh.layers; ++l) {
                    wf::attention_args a{q.data(), Eq, k[size_t(l)].data(), Ekv, v[size_t(l)].data(), Ekv, o.data(), Eq, 1, n_kv,
                                         int(sh.heads), int(sh.D), 0.125f, true, n_kv - 1};
                    a.n_head_kv = int(sh.kv_heads);
                    wf::attention(a);
                }
            });
            const double bytes = 2.0 * double(sh.layers * n_kv * Ekv) * 4;
            std::printf("%-26s %6lld %10.1f %8.2f %5.0f%%\n", sh.name, (long long)n_kv, s * 1e6, bytes / s / 1e9, 100 * bytes / s / 1e9 / bw);
            if (sh.kv_heads == sh.heads) {
                const double s2 = time_call([&] {
                    next = (next + 1) % copies;
                    for (int64_t l = next * sh.layers; l < (next + 1) * sh.layers; ++l)
                        for (int64_t h = 0; h < sh.heads; ++h) {
                            wf::attention_args a{q.data() + h * sh.D, Eq, k[size_t(l)].data() + h * cap * sh.D, sh.D, v[size_t(l)].data() + h * cap * sh.D, sh.D, o.data() + h * sh.D, Eq, 1, n_kv,
                                                 1, int(sh.D), 0.125f, true, n_kv - 1};
                            wf::attention(a);
                        }
                });
                std::printf("%-26s %6lld %10.1f %8.2f %5.0f%%\n", "  head-major", (long long)n_kv, s2 * 1e6, bytes / s2 / 1e9, 100 * bytes / s2 / 1e9 / bw);
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const bool blocks_only = argc > 1 && std::strcmp(argv[1], "blocks") == 0;
#ifdef __EMSCRIPTEN__
    const char* where = "wasm (Node)";
#else
    const char* where = "native";
#endif
    std::printf("wasmformer kernel benchmark — %s, 1 thread, SIMD width %d floats\n", where, int(xsimd::batch<float>::size));
    const double peak = simd_ceiling_gflops();
    const double bw = bandwidth_gbs();
    std::printf("machine: SIMD mul-add ceiling %.1f GFLOP/s, memory read bandwidth %.1f GB/s\n\n", peak, bw);
    if (argc > 1 && std::strcmp(argv[1], "attention") == 0) {
        bench_attention(peak, bw);
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "encoders") == 0) {
        bench_encoders(peak, argc > 2 ? std::atoll(argv[2]) : 0);  // encoders [part bytes]: another part size than the engine's
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "logits") == 0) {
        bench_logits();
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "activations") == 0) {
        bench_activations();
        return 0;
    }
    if (blocks_only) {
        for (int i = 2; i < argc; ++i) {
            const auto t = wf::dtype_from_name(argv[i]);
            if (!t) {
                std::fprintf(stderr, "blocks: unknown type %s\n", argv[i]);
                return 2;
            }
            block_types_only.push_back(*t);
        }
        bench_block_types(bw);
        bench_block_prefill(peak);
        return 0;
    }
    std::printf("%-10s %-5s %5s %10s %9s %12s %10s\n", "shape NxK", "type", "M", "ms", "GFLOP/s", "% ceiling", "% bw");
    std::mt19937 rng(42);
    const int64_t shapes[][2] = {{768, 768}, {2304, 768}, {3072, 768}, {768, 3072}, {512, 2048}};  // the last: Marian's fc2
    for (auto [n_rows, n_cols] : shapes) {
        const int64_t N = n_rows, K = n_cols;  // plain variables: lambdas below capture them (clang 14)
        double f32_gemv_s = 0;
        for (wf::dtype type : {wf::dtype::f32, wf::dtype::f16, wf::dtype::q8_0}) {
            // decode (M = 1), beams (2, 4), a short prompt (12) and one short text (32: a sentence classified) read W from
            // memory, as in a model: they rotate through copies of W totalling ≥ 128 MiB so that none is in cache;
            // M = 128 reuses one copy.
            std::vector<weights> W;
            const size_t one = size_t(wf::row_bytes(type, K) * N);
            for (size_t total = 0; total < (size_t(128) << 20) || W.empty(); total += one) W.push_back(make_weights(N, K, type, rng));
            for (int64_t M : {1, 2, 4, 12, 32, 128}) {  // decode, 2 and 4 beams, a short prompt, a short text, a long one
                std::vector<float> x(size_t(M * K)), y(size_t(M * N));
                for (auto& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
                size_t next = 0;
                const double s = time_call([&] {
                    wf::matmul(x.data(), M, K, W[next].view, nullptr, y.data(), N, 0, N);
                    if (M <= 32) next = (next + 1) % W.size();  // decode, beams and short inputs read W from memory
                });
                const double gflops = 2.0 * double(M * N * K) / s / 1e9;
                const double bytes = double(one) + double(x.size() + y.size()) * 4;
                std::printf("%4lldx%-5lld %-5s %5lld %10.3f %9.1f %11.0f%% %9.0f%%", (long long)N, (long long)K,
                            wf::dtype_name(type), (long long)M, s * 1e3, gflops, 100 * gflops / peak,
                            M <= 32 ? 100 * bytes / s / 1e9 / bw : 0.0);
                if (M == 1 && type == wf::dtype::f32) f32_gemv_s = s;
                if (M == 1 && type != wf::dtype::f32) std::printf("   %.2fx f32 GEMV", f32_gemv_s / s);
                std::printf("\n");
            }
        }
    }
    bench_block_types(bw);
    bench_block_prefill(peak);
    bench_attention(peak, bw);
    return 0;
}
