// Decode GEMV on f32 weights in wasm (y = W·x, one row x), cache-cold: W is one of enough copies to fill 256 MB,
// taken in turn. Forms of the same arithmetic, to find what bounds the f32 decode below the read ceiling:
//   read     no arithmetic: W's v128 loads summed (the bench probe's loop), the ceiling for this harness
//   index    the engine's former f32 kernel (gemv_one_stream, which f16 / bf16 keep): 4 accumulators, loads at x + k, w + k
//   step     the same on stepped pointers
//   step+ra  stepped, one byte of the line Ahead bytes ahead touched per 64 bytes
//   2rows    two W rows at a time (2 streams), stepped; 4rows: four
//   Sfar     S rows N / S apart at a time (S streams far apart; the engine's since, kernels/matmul.cpp gemm_streams)
//   halves   one row at a time, its two halves side by side
// Build and run (Node 20):
//   em++ -O3 -msimd128 -std=c++20 -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sENVIRONMENT=node \
//        -sWASM_ASYNC_COMPILATION=0 bench/gemv-f32.cpp -o build/gemv-f32.cjs && node build/gemv-f32.cjs
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

namespace {

volatile float sinkf;

inline v128_t madd(v128_t a, v128_t b, v128_t c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); }
inline float hsum(v128_t v) {
    return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) + wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}

__attribute__((noinline)) void read(const float* x, const float* W, int N, int K, float* y) {
    v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
    for (const float *p = W, *e = W + size_t(N) * K; p != e; p += 16) {
        a0 = wasm_f32x4_add(a0, wasm_v128_load(p)), a1 = wasm_f32x4_add(a1, wasm_v128_load(p + 4));
        a2 = wasm_f32x4_add(a2, wasm_v128_load(p + 8)), a3 = wasm_f32x4_add(a3, wasm_v128_load(p + 12));
    }
    sinkf = hsum(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)));
    (void)x, (void)y;
}

__attribute__((noinline)) void index(const float* x, const float* W, int N, int K, float* y) {
    for (int n = 0; n < N; ++n) {
        const float* w = W + size_t(n) * K;
        v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
        for (int k = 0; k < K; k += 16) {
            a0 = madd(wasm_v128_load(x + k), wasm_v128_load(w + k), a0);
            a1 = madd(wasm_v128_load(x + k + 4), wasm_v128_load(w + k + 4), a1);
            a2 = madd(wasm_v128_load(x + k + 8), wasm_v128_load(w + k + 8), a2);
            a3 = madd(wasm_v128_load(x + k + 12), wasm_v128_load(w + k + 12), a3);
        }
        y[n] = hsum(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)));
    }
}

template <int Ahead>
__attribute__((noinline)) void step(const float* x, const float* W, int N, int K, float* y) {
    const float* end = W + size_t(N) * K;
    uint32_t touched = 0;
    const float* w = W;
    for (int n = 0; n < N; ++n) {
        v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
        const float* xp = x;
        for (const float* we = w + K; w != we; w += 16, xp += 16) {
            if constexpr (Ahead > 0) {
                const uint8_t* a = reinterpret_cast<const uint8_t*>(w) + Ahead;
                if (a < reinterpret_cast<const uint8_t*>(end)) touched += *a;
            }
            a0 = madd(wasm_v128_load(xp), wasm_v128_load(w), a0);
            a1 = madd(wasm_v128_load(xp + 4), wasm_v128_load(w + 4), a1);
            a2 = madd(wasm_v128_load(xp + 8), wasm_v128_load(w + 8), a2);
            a3 = madd(wasm_v128_load(xp + 12), wasm_v128_load(w + 12), a3);
        }
        y[n] = hsum(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)));
    }
    sinkf = float(touched);
}

__attribute__((noinline)) void two_rows(const float* x, const float* W, int N, int K, float* y) {
    for (int n = 0; n < N; n += 2) {
        const float* w0 = W + size_t(n) * K;
        const float* w1 = w0 + K;
        v128_t a0 = wasm_f32x4_splat(0), a1 = a0, b0 = a0, b1 = a0;
        const float* xp = x;
        for (const float* we = w0 + K; w0 != we; w0 += 8, w1 += 8, xp += 8) {
            const v128_t x0 = wasm_v128_load(xp), x1 = wasm_v128_load(xp + 4);
            a0 = madd(x0, wasm_v128_load(w0), a0), a1 = madd(x1, wasm_v128_load(w0 + 4), a1);
            b0 = madd(x0, wasm_v128_load(w1), b0), b1 = madd(x1, wasm_v128_load(w1 + 4), b1);
        }
        y[n] = hsum(wasm_f32x4_add(a0, a1)), y[n + 1] = hsum(wasm_f32x4_add(b0, b1));
    }
}

__attribute__((noinline)) void four_rows(const float* x, const float* W, int N, int K, float* y) {
    for (int n = 0; n < N; n += 4) {
        const float* w0 = W + size_t(n) * K;
        const float *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
        v128_t a = wasm_f32x4_splat(0), b = a, c = a, d = a;
        const float* xp = x;
        for (const float* we = w0 + K; w0 != we; w0 += 4, w1 += 4, w2 += 4, w3 += 4, xp += 4) {
            const v128_t x0 = wasm_v128_load(xp);
            a = madd(x0, wasm_v128_load(w0), a), b = madd(x0, wasm_v128_load(w1), b);
            c = madd(x0, wasm_v128_load(w2), c), d = madd(x0, wasm_v128_load(w3), d);
        }
        y[n] = hsum(a), y[n + 1] = hsum(b), y[n + 2] = hsum(c), y[n + 3] = hsum(d);
    }
}

// S rows N / S apart: S streams in pages far apart, whatever K is
template <int S>
__attribute__((noinline)) void far(const float* x, const float* W, int N, int K, float* y) {
    const int Q = N / S;
    for (int n = 0; n < Q; ++n) {
        const float* w[S];
        v128_t a[S];
        for (int s = 0; s < S; ++s) w[s] = W + (size_t(n) + size_t(s) * Q) * K, a[s] = wasm_f32x4_splat(0);
        const float* xp = x;
        for (const float* we = w[0] + K; w[0] != we; xp += 4) {
            const v128_t x0 = wasm_v128_load(xp);
            for (int s = 0; s < S; ++s) a[s] = madd(x0, wasm_v128_load(w[s]), a[s]), w[s] += 4;
        }
        for (int s = 0; s < S; ++s) y[n + s * Q] = hsum(a[s]);
    }
}

// one row at a time, its two halves side by side (two streams K / 2 apart)
__attribute__((noinline)) void halves(const float* x, const float* W, int N, int K, float* y) {
    const int H = K / 2;
    for (int n = 0; n < N; ++n) {
        const float* w0 = W + size_t(n) * K;
        const float* w1 = w0 + H;
        const float* x0p = x;
        const float* x1p = x + H;
        v128_t a0 = wasm_f32x4_splat(0), a1 = a0, b0 = a0, b1 = a0;
        for (const float* we = w0 + H; w0 != we; w0 += 8, w1 += 8, x0p += 8, x1p += 8) {
            a0 = madd(wasm_v128_load(x0p), wasm_v128_load(w0), a0), a1 = madd(wasm_v128_load(x0p + 4), wasm_v128_load(w0 + 4), a1);
            b0 = madd(wasm_v128_load(x1p), wasm_v128_load(w1), b0), b1 = madd(wasm_v128_load(x1p + 4), wasm_v128_load(w1 + 4), b1);
        }
        y[n] = hsum(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(b0, b1)));
    }
}

}  // namespace

int main() {
    std::mt19937 rng(1);
    std::printf("f32 decode GEMV (M = 1) in wasm, cache-cold: GB/s of weights, median (10th percentile)\n");
    const char* names[] = {"read", "index", "step", "step+ra1K", "step+ra4K", "2rows", "4rows", "4far", "halves", "2far", "3far", "6far", "8far"};
    std::printf("%-11s", "N x K");
    for (const char* s : names) std::printf(" %12s", s);
    std::printf("\n");
    const int shapes[][2] = {{576, 576}, {1536, 576}, {576, 1536}, {768, 768}, {2304, 768}, {768, 3072}};
    for (const auto& sh : shapes) {
        const int N = sh[0], K = sh[1];
        const size_t floats = size_t(N) * K;
        const int copies = std::max(2, int((size_t(256) << 20) / (floats * 4)));
        std::vector<float> W(floats * copies);
        std::uniform_real_distribution<float> U(-1, 1);
        for (auto& v : W) v = U(rng);
        std::vector<float> x(static_cast<size_t>(K)), want(static_cast<size_t>(N)), got(static_cast<size_t>(N));
        for (auto& v : x) v = U(rng);
        index(x.data(), W.data(), N, K, want.data());
        std::printf("%4dx%-6d", N, K);
        for (int v = 0; v < 13; ++v) {
            const auto run = [&](int c, float* out) {
                const float* w = W.data() + c * floats;
                switch (v) {
                case 0: read(x.data(), w, N, K, out); break;
                case 1: index(x.data(), w, N, K, out); break;
                case 2: step<0>(x.data(), w, N, K, out); break;
                case 3: step<1024>(x.data(), w, N, K, out); break;
                case 4: step<4096>(x.data(), w, N, K, out); break;
                case 5: two_rows(x.data(), w, N, K, out); break;
                case 6: four_rows(x.data(), w, N, K, out); break;
                case 7: far<4>(x.data(), w, N, K, out); break;
                case 8: halves(x.data(), w, N, K, out); break;
                case 9: far<2>(x.data(), w, N, K, out); break;
                case 10: far<3>(x.data(), w, N, K, out); break;
                case 11: far<6>(x.data(), w, N, K, out); break;
                default: far<8>(x.data(), w, N, K, out); break;
                }
            };
            run(0, got.data());
            double err = 0;
            if (v > 0)
                for (int n = 0; n < N; ++n) err = std::max(err, double(std::fabs(got[n] - want[n]) / (std::fabs(want[n]) + 1.0f)));
            std::vector<double> t;
            for (int r = 0; r < 4 * copies; ++r) {
                const auto t0 = std::chrono::steady_clock::now();
                run(r % copies, got.data());
                t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
            std::sort(t.begin(), t.end());
            const double b = double(floats * 4);
            std::printf(" %4.1f (%4.1f)%s", b / t[t.size() / 2] / 1e9, b / t[t.size() / 10] / 1e9, err < 1e-4 ? "" : " BAD");
        }
        std::printf("\n");
    }
    return 0;
}
#else
int main() {
    std::printf("gemv-f32: a wasm SIMD128 experiment; build it with em++ (see the top of the file)\n");
    return 0;
}
#endif
