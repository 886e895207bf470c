// Decode GEMV on q8_0 weights in wasm: how the weights' layout in memory bounds its speed (the experiment behind the
// grouped q8_0 rows of src/kernels/dtype.h, which the engine uses since; this file is not part of it). y = W·x for one row x (quantized to q8_0, widened to int16 as the
// engine's gemv_q8 does), cache-cold: W is one of enough copies to fill 256 MB, taken in turn. Four forms of the same
// integer arithmetic:
//   stored     the engine's kernel before the rows were grouped (kernels/gemv-q8.cpp): 4 rows of W as stored, 34-byte
//              blocks (f16 scale + 32 int8), 4 streams, the 4 rows' scales widened per group beforehand
//   one-row    W as stored read as one stream: one row at a time, 4 blocks per step (their scales side by side)
//   grouped    W repacked once: per group of 4 rows and per block, the 4 rows' 32 codes side by side (128 bytes,
//              16-byte aligned), the scales apart as floats: one aligned stream
//   grouped+ra the same, touching the line 1 KB ahead (wasm has no prefetch; see kernels/touch.h)
//   grouped Sfar  S groups (N / 4) / S groups apart read side by side: S streams far apart (the engine's since)
// Build and run (Node 20):
//   em++ -O3 -msimd128 -std=c++20 -Isrc -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sENVIRONMENT=node \
//        -sWASM_ASYNC_COMPILATION=0 bench/gemv-layouts.cpp -o build/gemv-layouts.cjs && node build/gemv-layouts.cjs
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "kernels/half4.h"

namespace {

constexpr int kBlock = 34;  // bytes of a q8_0 block
volatile v128_t sink;       // a store per row's block sum: keeps V8 from loading a whole group's blocks before using them
volatile uint32_t touch_sink;

inline v128_t block_dot(v128_t x0, v128_t x1, v128_t x2, v128_t x3, const uint8_t* q) {
    v128_t s = wasm_i32x4_dot_i16x8(x0, wasm_i16x8_load8x8(q));
    s = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(x1, wasm_i16x8_load8x8(q + 8)));
    s = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(x2, wasm_i16x8_load8x8(q + 16)));
    return wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(x3, wasm_i16x8_load8x8(q + 24)));
}
// four vectors → the four lanes' sums of each, in one vector
inline v128_t sum4(v128_t a, v128_t b, v128_t c, v128_t d) {
    const v128_t u01 = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
    const v128_t u23 = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
    return wasm_i32x4_add(wasm_i32x4_shuffle(u01, u23, 0, 1, 4, 5), wasm_i32x4_shuffle(u01, u23, 2, 3, 6, 7));
}
inline float hsum(v128_t v) {
    return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) + wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}

struct problem {
    int N, K;
    const int16_t* xq;  // K activations' codes
    const float* xd;    // K / 32 scales
};

__attribute__((noinline)) void stored(const problem& p, const uint8_t* W, float* y) {
    const int nb = p.K / 32, rb = nb * kBlock;
    static std::vector<float> sc;
    sc.resize(size_t(4 * nb));
    for (int n = 0; n < p.N; n += 4) {
        const uint8_t* w[4] = {W + n * rb, W + (n + 1) * rb, W + (n + 2) * rb, W + (n + 3) * rb};
        for (int b = 0; b < nb; ++b) wasm_v128_store(sc.data() + 4 * b, wf::half4(w, b * kBlock));
        v128_t acc = wasm_f32x4_splat(0.0f);
        for (int b = 0; b < nb; ++b) {
            const int16_t* x = p.xq + b * 32;
            const v128_t x0 = wasm_v128_load(x), x1 = wasm_v128_load(x + 8), x2 = wasm_v128_load(x + 16), x3 = wasm_v128_load(x + 24);
            v128_t s[4];
            for (int j = 0; j < 4; ++j) s[j] = block_dot(x0, x1, x2, x3, w[j] + b * kBlock + 2);
            const v128_t scale = wasm_f32x4_mul(wasm_v128_load(sc.data() + 4 * b), wasm_f32x4_splat(p.xd[b]));
            acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum4(s[0], s[1], s[2], s[3])), scale));
        }
        wasm_v128_store(y + n, acc);
    }
}

__attribute__((noinline)) void one_row(const problem& p, const uint8_t* W, float* y) {
    const int nb = p.K / 32, rb = nb * kBlock;
    for (int n = 0; n < p.N; ++n) {
        const uint8_t* r = W + n * rb;
        v128_t acc = wasm_f32x4_splat(0.0f);
        for (int b = 0; b < nb; b += 4) {  // nb is a multiple of 4 in every shape below
            const uint8_t* w[4] = {r + b * kBlock, r + (b + 1) * kBlock, r + (b + 2) * kBlock, r + (b + 3) * kBlock};
            v128_t s[4];
            for (int j = 0; j < 4; ++j) {
                const int16_t* x = p.xq + (b + j) * 32;
                s[j] = block_dot(wasm_v128_load(x), wasm_v128_load(x + 8), wasm_v128_load(x + 16), wasm_v128_load(x + 24), w[j] + 2);
                sink = s[j];
            }
            const v128_t scale = wasm_f32x4_mul(wf::half4(w, 0), wasm_v128_load(p.xd + b));
            acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum4(s[0], s[1], s[2], s[3])), scale));
        }
        y[n] = hsum(acc);
    }
}

// W repacked: per group of 4 rows, per block, 4 × 32 codes (qs), and the scales (ds: per group and block, 4 floats)
struct grouped_w {
    std::vector<int8_t> qs;
    std::vector<float> ds;
};
template <int Ahead>
__attribute__((noinline)) void grouped(const problem& p, const grouped_w& g, float* y) {
    const int nb = p.K / 32;
    const int8_t* end = g.qs.data() + g.qs.size();
    uint32_t touched = 0;
    for (int n = 0; n < p.N; n += 4) {
        const uint8_t* grp = reinterpret_cast<const uint8_t*>(g.qs.data() + size_t(n) * p.K);
        const float* ds = g.ds.data() + size_t(n) * nb;
        v128_t acc = wasm_f32x4_splat(0.0f);
        for (int b = 0; b < nb; ++b) {
            const uint8_t* blk = grp + b * 128;
            if constexpr (Ahead > 0) {
                const int8_t* a = reinterpret_cast<const int8_t*>(blk) + Ahead;
                if (a + 64 < end) touched += uint8_t(a[0]) + uint8_t(a[64]);
            }
            const int16_t* x = p.xq + b * 32;
            const v128_t x0 = wasm_v128_load(x), x1 = wasm_v128_load(x + 8), x2 = wasm_v128_load(x + 16), x3 = wasm_v128_load(x + 24);
            v128_t s[4];
            for (int j = 0; j < 4; ++j) {
                s[j] = block_dot(x0, x1, x2, x3, blk + 32 * j);
                sink = s[j];
            }
            const v128_t scale = wasm_f32x4_mul(wasm_v128_load(ds + 4 * b), wasm_f32x4_splat(p.xd[b]));
            acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum4(s[0], s[1], s[2], s[3])), scale));
        }
        wasm_v128_store(y + n, acc);
    }
    touch_sink = touched;
}

// S groups far apart ((N / 4) / S groups) read side by side: S streams (bench/gemv-f32.cpp found f32's decode faster so)
template <int S>
__attribute__((noinline)) void grouped_far(const problem& p, const grouped_w& g, float* y) {
    const int nb = p.K / 32, groups = p.N / 4, Q = groups / S;
    for (int i = 0; i < Q; ++i) {
        const uint8_t* grp[S];
        const float* ds[S];
        v128_t acc[S];
        for (int s = 0; s < S; ++s) {
            const int gi = i + s * Q;
            grp[s] = reinterpret_cast<const uint8_t*>(g.qs.data() + size_t(gi) * 4 * p.K);
            ds[s] = g.ds.data() + size_t(gi) * 4 * nb;
            acc[s] = wasm_f32x4_splat(0.0f);
        }
        for (int b = 0; b < nb; ++b) {
            const int16_t* x = p.xq + b * 32;
            const v128_t x0 = wasm_v128_load(x), x1 = wasm_v128_load(x + 8), x2 = wasm_v128_load(x + 16), x3 = wasm_v128_load(x + 24);
            const v128_t xd = wasm_f32x4_splat(p.xd[b]);
            for (int t = 0; t < S; ++t) {
                const uint8_t* blk = grp[t] + b * 128;
                v128_t s4[4];
                for (int j = 0; j < 4; ++j) {
                    s4[j] = block_dot(x0, x1, x2, x3, blk + 32 * j);
                    sink = s4[j];
                }
                const v128_t scale = wasm_f32x4_mul(wasm_v128_load(ds[t] + 4 * b), xd);
                acc[t] = wasm_f32x4_add(acc[t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum4(s4[0], s4[1], s4[2], s4[3])), scale));
            }
        }
        for (int s = 0; s < S; ++s) wasm_v128_store(y + 4 * (i + s * Q), acc[s]);
    }
}

}  // namespace

int main() {
    std::mt19937 rng(1);
    std::printf("q8_0 decode GEMV (M = 1) in wasm, cache-cold: GB/s of q8_0 weights (34 bytes per 32) per second, 10th percentile\n");
    std::printf("%-10s %18s %18s %18s %18s %18s %18s\n", "N x K", "stored", "one-row", "grouped", "grouped+ra", "grouped 2far", "grouped 4far");
    const int shapes[][2] = {{768, 768}, {2304, 768}, {3072, 768}, {768, 3072}, {1536, 640}, {640, 1536}};
    for (const auto& sh : shapes) {
        const int N = sh[0], K = sh[1], nb = K / 32;
        const size_t bytes = size_t(N) * nb * kBlock;
        const int copies = std::max(2, int((size_t(256) << 20) / bytes));
        std::vector<uint8_t> W(bytes * copies);
        for (auto& v : W) v = uint8_t(rng());
        for (size_t i = 0; i < size_t(N) * nb * copies; ++i) {
            const uint16_t h = uint16_t(0x2000 | (rng() & 0x3ff));  // scales around 2^-7
            std::memcpy(&W[i * kBlock], &h, 2);
        }
        std::vector<grouped_w> G(static_cast<size_t>(copies));
        for (int c = 0; c < copies; ++c) {
            G[c].qs.resize(size_t(N) * K), G[c].ds.resize(size_t(N) * nb);
            for (int n = 0; n < N; ++n)
                for (int b = 0; b < nb; ++b) {
                    const uint8_t* blk = W.data() + c * bytes + (size_t(n) * nb + b) * kBlock;
                    std::memcpy(&G[c].qs[size_t(n / 4) * 4 * K + b * 128 + (n % 4) * 32], blk + 2, 32);
                    G[c].ds[(size_t(n / 4) * nb + b) * 4 + n % 4] = wf::half1(blk);
                }
        }
        std::vector<int16_t> xq(static_cast<size_t>(K));
        for (auto& v : xq) v = int16_t(int(rng() % 255) - 127);
        std::vector<float> xd(static_cast<size_t>(nb));
        for (auto& v : xd) v = 0.01f * float(1 + rng() % 100);
        const problem p{N, K, xq.data(), xd.data()};
        std::vector<float> want(static_cast<size_t>(N)), got(static_cast<size_t>(N));
        stored(p, W.data(), want.data());
        std::printf("%4dx%-5d", N, K);
        for (int v = 0; v < 6; ++v) {
            const auto run = [&](int c, float* out) {
                if (v == 0) stored(p, W.data() + c * bytes, out);
                else if (v == 1) one_row(p, W.data() + c * bytes, out);
                else if (v == 2) grouped<0>(p, G[c], out);
                else if (v == 3) grouped<1024>(p, G[c], out);
                else if (v == 4) grouped_far<2>(p, G[c], out);
                else grouped_far<4>(p, G[c], out);
            };
            run(0, got.data());
            double err = 0;  // the forms sum in different orders: relative differences of float rounding only
            for (int n = 0; n < N; ++n) err = std::max(err, double(std::fabs(got[n] - want[n]) / (std::fabs(want[n]) + 1.0f)));
            std::vector<double> t;
            for (int r = 0; r < 3 * copies; ++r) {
                const auto t0 = std::chrono::steady_clock::now();
                run(r % copies, got.data());
                t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
            std::sort(t.begin(), t.end());
            std::printf(" %7.2f GB/s%s", double(bytes) / t[t.size() / 10] / 1e9, err < 1e-3 ? "      " : " WRONG");
        }
        std::printf("\n");
    }
    return 0;
}
#else
int main() {
    std::printf("gemv-layouts: a wasm SIMD128 experiment; build it with em++ (see the top of the file)\n");
    return 0;
}
#endif
