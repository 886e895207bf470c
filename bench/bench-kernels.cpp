// Kernel benchmark: GEMM/GEMV at BERT-base and GPT-2-small shapes in f32, f16 and q8_0, attention at 128 tokens,
// and, measured in the same run, this machine's SIMD mul-add ceiling and memory read bandwidth, with ratios.
// One thread. Built natively and with Emscripten (run under Node): `npm run bench`.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>
#include <xsimd/xsimd.hpp>

#include "kernels/attention.h"
#include "kernels/kernels.h"

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

}  // namespace

int main() {
#ifdef __EMSCRIPTEN__
    const char* where = "wasm (Node)";
#else
    const char* where = "native";
#endif
    std::printf("wasmformer kernel benchmark — %s, 1 thread, SIMD width %d floats\n", where, int(xsimd::batch<float>::size));
    const double peak = simd_ceiling_gflops();
    const double bw = bandwidth_gbs();
    std::printf("machine: SIMD mul-add ceiling %.1f GFLOP/s, memory read bandwidth %.1f GB/s\n\n", peak, bw);
    std::printf("%-10s %-5s %5s %10s %9s %12s %10s\n", "shape NxK", "type", "M", "ms", "GFLOP/s", "% ceiling", "% bw");
    std::mt19937 rng(42);
    const int64_t shapes[][2] = {{768, 768}, {2304, 768}, {3072, 768}, {768, 3072}};
    for (auto [n_rows, n_cols] : shapes) {
        const int64_t N = n_rows, K = n_cols;  // plain variables: lambdas below capture them (clang 14)
        double f32_gemv_s = 0;
        for (wf::dtype type : {wf::dtype::f32, wf::dtype::f16, wf::dtype::q8_0}) {
            // GEMV is memory-bound: rotate through copies of W totalling ≥ 128 MiB so that none is in cache.
            std::vector<weights> W;
            const size_t one = size_t(wf::row_bytes(type, K) * N);
            for (size_t total = 0; total < (size_t(128) << 20) || W.empty(); total += one) W.push_back(make_weights(N, K, type, rng));
            for (int64_t M : {1, 12, 128}) {  // decode, a short prompt, a long one
                std::vector<float> x(size_t(M * K)), y(size_t(M * N));
                for (auto& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
                size_t next = 0;
                const double s = time_call([&] {
                    wf::matmul(x.data(), M, K, W[next].view, nullptr, y.data(), N, 0, N);
                    if (M == 1) next = (next + 1) % W.size();
                });
                const double gflops = 2.0 * double(M * N * K) / s / 1e9;
                const double bytes = double(one) + double(x.size() + y.size()) * 4;
                std::printf("%4lldx%-5lld %-5s %5lld %10.3f %9.1f %11.0f%% %9.0f%%", (long long)N, (long long)K,
                            wf::dtype_name(type), (long long)M, s * 1e3, gflops, 100 * gflops / peak,
                            M == 1 ? 100 * bytes / s / 1e9 / bw : 0.0);
                if (M == 1 && type == wf::dtype::f32) f32_gemv_s = s;
                if (M == 1 && type != wf::dtype::f32) std::printf("   %.2fx f32 GEMV", f32_gemv_s / s);
                std::printf("\n");
            }
        }
    }
    // attention, BERT-base shape: 12 heads × 64, 128 tokens, padding mask
    const int64_t T = 128, H = 12, D = 64, E = H * D;
    std::vector<float> q(size_t(T * E)), k(size_t(T * E)), v(size_t(T * E)), o(size_t(T * E));
    for (auto* a : {&q, &k, &v})
        for (auto& f : *a) f = std::uniform_real_distribution<float>(-1, 1)(rng);
    wf::attention_args a{q.data(), E, k.data(), E, v.data(), E, o.data(), E, T, T, int(H), int(D), 0.125f};
    const double s = time_call([&] { wf::attention(a); });
    const double flops = 4.0 * double(H * T * T * D);
    std::printf("\nattention 128 tokens, 12 heads x 64: %.3f ms, %.1f GFLOP/s (%.0f%% of ceiling)\n", s * 1e3,
                flops / s / 1e9, 100 * flops / s / 1e9 / peak);
    return 0;
}
