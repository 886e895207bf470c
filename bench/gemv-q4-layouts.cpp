// Decode GEMV on q4_0 weights in wasm: where its time goes, by layout (an experiment, not part of the engine; see
// gemv-layouts.cpp for q8_0's). y = W·x for one row x, quantized to q8_0 and kept as int16 in the "z form" the
// engine's q4_0 kernel reads (kernels/quants-gemv.cpp: per block its first 16 codes, then q_{16+i} − 16·q_i), so that
// a raw byte b = lo + 16·hi needs only its high nibble shifted out. Each form timed warm (the same W every call: the
// arithmetic alone) and cache-cold (W one of enough copies to fill 256 MB, taken in turn):
//   stored    the engine's kernel today: 4 rows as stored (18-byte blocks: f16 scale + 16 bytes), the 4 rows' scales
//             widened beforehand, a 4-row read-ahead a block at a time (kernels/touch.h)
//   grouped   rows regrouped by 4: per group the 4 rows' f16 scales per block (8 bytes), then per block the 4 rows'
//             16 code bytes side by side (64 bytes): one aligned stream, read 1 KB ahead, the scales widened in the loop
//   grouped2  the same, two blocks a step
//   grouped 2far / 4far  2 or 4 groups far apart side by side, no read-ahead (as the q8_0 GEMV's sets)
// Run of 2026-11-28 (Node 20, Intel Xeon, 2 cores): stored 6.7 GB/s warm / 5.1–5.3 cold, grouped 10.1–10.4 / 5.7–7.3,
// grouped without the volatile store 9.6–9.9 / 5.3–7.0, grouped two blocks a step 10.0–10.2 / 5.7–7.1; results
// bit for bit stored's. The engine's loader groups q4_0 since (src/kernels/dtype.h; bench/README.md has its numbers).
// Run of 2026-11-29 (Node 20, AMD EPYC): grouped 10.9–11.0 / 6.7–10.8, 2far 12.1–12.2 / 8.3–12.0, 4far 11.0–11.1 /
// 9.4–10.9; the engine's decode GEMV reads 4 groups far apart since (quants-gemv.cpp, gemv_q4_0_groups).
// Build and run (Node 20):
//   em++ -O3 -msimd128 -std=c++20 -Isrc -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sENVIRONMENT=node \
//        -sWASM_ASYNC_COMPILATION=0 bench/gemv-q4-layouts.cpp -o build/gemv-q4-layouts.cjs && node build/gemv-q4-layouts.cjs
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

constexpr int kBlock = 18;  // bytes of a q4_0 block
volatile v128_t sink;
volatile uint32_t touch_sink;

// the sum of a block's 32 products in four int32 lanes: raw bytes (lo + 16·hi) against z, high nibbles against z'
inline v128_t block_dot(const v128_t (&z)[4], const uint8_t* q) {
    const v128_t w0 = wasm_u16x8_load8x8(q), w1 = wasm_u16x8_load8x8(q + 8);
    const v128_t a = wasm_i32x4_add(wasm_i32x4_dot_i16x8(w0, z[0]), wasm_i32x4_dot_i16x8(w1, z[1]));
    const v128_t b = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_shr(w0, 4), z[2]), wasm_i32x4_dot_i16x8(wasm_u16x8_shr(w1, 4), z[3]));
    return wasm_i32x4_add(a, b);
}
inline v128_t sum4(v128_t a, v128_t b, v128_t c, v128_t d) {
    const v128_t u01 = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
    const v128_t u23 = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
    return wasm_i32x4_add(wasm_i32x4_shuffle(u01, u23, 0, 1, 4, 5), wasm_i32x4_shuffle(u01, u23, 2, 3, 6, 7));
}
// four f16 (finite: no inf / NaN) → four floats, sign included
inline v128_t widen4(const uint8_t* h) {
    const v128_t v = wasm_u32x4_load16x4(h);
    const v128_t mag = wasm_f32x4_mul(wasm_i32x4_shl(wasm_v128_and(v, wasm_i32x4_splat(0x7fff)), 13), wasm_f32x4_splat(0x1p112f));
    return wasm_v128_or(mag, wasm_i32x4_shl(wasm_v128_and(v, wasm_i32x4_splat(0x8000)), 16));
}

struct problem {
    int N, K;
    const int16_t* z;  // K
    const float* xd;   // K / 32
    const int32_t* s;  // K / 32: Σ q per block
};

__attribute__((noinline)) void stored(const problem& p, const uint8_t* W, float* y) {
    const int nb = p.K / 32, rb = nb * kBlock;
    static std::vector<float> sc;
    sc.resize(size_t(4 * nb));
    uint32_t touched = 0;
    for (int n = 0; n < p.N; n += 4) {
        const uint8_t* w[4] = {W + n * rb, W + (n + 1) * rb, W + (n + 2) * rb, W + (n + 3) * rb};
        for (int b = 0; b < nb; ++b) wasm_v128_store(sc.data() + 4 * b, wf::half4(w, b * kBlock));
        const uint8_t* next = n + 4 < p.N ? W + (n + 4) * rb : nullptr;
        int done = 0;
        v128_t acc = wasm_f32x4_splat(0.0f);
        for (int b = 0; b < nb; ++b) {
            if (next)
                for (const int at = std::min(4 * kBlock * (b + 1), 4 * rb); done < at; done += 64) touched += next[done];
            const int16_t* x = p.z + b * 32;
            const v128_t z[4] = {wasm_v128_load(x), wasm_v128_load(x + 8), wasm_v128_load(x + 16), wasm_v128_load(x + 24)};
            v128_t s[4];
            for (int j = 0; j < 4; ++j) s[j] = block_dot(z, w[j] + b * kBlock + 2);
            const v128_t S = wasm_i32x4_sub(sum4(s[0], s[1], s[2], s[3]), wasm_i32x4_splat(8 * p.s[b]));
            const v128_t scale = wasm_f32x4_mul(wasm_v128_load(sc.data() + 4 * b), wasm_f32x4_splat(p.xd[b]));
            acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(S), scale));
        }
        wasm_v128_store(y + n, acc);
    }
    touch_sink = touched;
}

// group g of 4 rows at G + g·4·rb: nb × 8 bytes of scales, then nb × 64 bytes of codes
template <int Steps, bool Sink>
__attribute__((noinline)) void grouped(const problem& p, const uint8_t* G, const uint8_t* end, float* y) {
    const int nb = p.K / 32, rb = nb * kBlock;
    uint32_t touched = 0;
    for (int n = 0; n < p.N; n += 4) {
        const uint8_t* hs = G + size_t(n) * rb;
        const uint8_t* qs = hs + 8 * nb;
        const int64_t left = end - qs;
        v128_t acc = wasm_f32x4_splat(0.0f);
        for (int b = 0; b < nb; b += Steps) {
            for (int t = 0; t < Steps; ++t) {
                const int64_t at = 64 * (b + t);
                if (at + 1024 + 64 < left) touched += qs[at + 1024] + (at % 128 == 0 ? qs[at + 1024 + 64] : 0);
            }
            for (int t = 0; t < Steps; ++t) {
                const int16_t* x = p.z + (b + t) * 32;
                const v128_t z[4] = {wasm_v128_load(x), wasm_v128_load(x + 8), wasm_v128_load(x + 16), wasm_v128_load(x + 24)};
                v128_t s[4];
                for (int j = 0; j < 4; ++j) {
                    s[j] = block_dot(z, qs + 64 * (b + t) + 16 * j);
                    if constexpr (Sink) sink = s[j];
                }
                const v128_t S = wasm_i32x4_sub(sum4(s[0], s[1], s[2], s[3]), wasm_i32x4_splat(8 * p.s[b + t]));
                const v128_t scale = wasm_f32x4_mul(widen4(hs + 8 * (b + t)), wasm_f32x4_splat(p.xd[b + t]));
                acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(S), scale));
            }
        }
        wasm_v128_store(y + n, acc);
    }
    touch_sink = touched;
}

// S groups far apart (the groups split into S runs, group t·(groups / S) + i with i = 0, 1, …): S streams read side
// by side, the activations' vectors loaded once per block for all S groups (as the q8_0 GEMV's 4 sets far apart,
// src/kernels/gemv-q8.cpp); the groups / S remainder (0 in these shapes) is not handled
template <int S>
__attribute__((noinline)) void grouped_far(const problem& p, const uint8_t* G, float* y) {
    const int nb = p.K / 32, rb = nb * kBlock, groups = p.N / 4, per = groups / S;
    for (int i = 0; i < per; ++i) {
        const uint8_t* hs[S];
        const uint8_t* qs[S];
        v128_t acc[S];
        for (int t = 0; t < S; ++t) hs[t] = G + size_t(t * per + i) * 4 * rb, qs[t] = hs[t] + 8 * nb, acc[t] = wasm_f32x4_splat(0.0f);
        for (int b = 0; b < nb; ++b) {
            const int16_t* x = p.z + b * 32;
            const v128_t z[4] = {wasm_v128_load(x), wasm_v128_load(x + 8), wasm_v128_load(x + 16), wasm_v128_load(x + 24)};
            const v128_t off = wasm_i32x4_splat(8 * p.s[b]), dx = wasm_f32x4_splat(p.xd[b]);
            for (int t = 0; t < S; ++t) {
                v128_t s[4];
                for (int j = 0; j < 4; ++j) {
                    s[j] = block_dot(z, qs[t] + 64 * b + 16 * j);
                    sink = s[j];
                }
                const v128_t Sm = wasm_i32x4_sub(sum4(s[0], s[1], s[2], s[3]), off);
                const v128_t scale = wasm_f32x4_mul(widen4(hs[t] + 8 * b), dx);
                acc[t] = wasm_f32x4_add(acc[t], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(Sm), scale));
            }
        }
        for (int t = 0; t < S; ++t) wasm_v128_store(y + 4 * (t * per + i), acc[t]);
    }
}

}  // namespace

int main() {
    std::mt19937 rng(1);
    std::printf("q4_0 decode GEMV (M = 1) in wasm: GB/s of q4_0 weights (18 bytes per 32), 10th percentile; warm / cold\n");
    std::printf("%-10s %22s %22s %22s %22s %22s %22s\n", "N x K", "stored", "grouped", "grouped nosink", "grouped2", "grouped 2far", "grouped 4far");
    const int shapes[][2] = {{2304, 768}, {3072, 768}, {768, 3072}, {1536, 576}, {896, 4864}};
    for (const auto& sh : shapes) {
        const int N = sh[0], K = sh[1], nb = K / 32, rb = nb * kBlock;
        const size_t bytes = size_t(N) * rb;
        const int copies = std::max(2, int((size_t(256) << 20) / bytes));
        std::vector<uint8_t> W(bytes * copies), G(bytes * copies);
        for (auto& v : W) v = uint8_t(rng());
        for (size_t i = 0; i < size_t(N) * nb * copies; ++i) {
            const uint16_t h = uint16_t((rng() & 0x8000) | 0x2000 | (rng() & 0x3ff));  // ±2^-7 or so, both signs
            std::memcpy(&W[i * kBlock], &h, 2);
        }
        for (int c = 0; c < copies; ++c)
            for (int n = 0; n < N; ++n)
                for (int b = 0; b < nb; ++b) {
                    const uint8_t* blk = W.data() + c * bytes + (size_t(n) * nb + b) * kBlock;
                    uint8_t* g = G.data() + c * bytes + size_t(n / 4) * 4 * rb;
                    std::memcpy(g + 8 * b + 2 * (n % 4), blk, 2);
                    std::memcpy(g + 8 * nb + 64 * b + 16 * (n % 4), blk + 2, 16);
                }
        std::vector<int16_t> z(static_cast<size_t>(K));
        std::vector<int32_t> s(static_cast<size_t>(nb));
        std::vector<int16_t> q(static_cast<size_t>(K));
        for (auto& v : q) v = int16_t(int(rng() % 255) - 127);
        for (int b = 0; b < nb; ++b) {
            s[b] = 0;
            for (int i = 0; i < 32; ++i) s[b] += q[b * 32 + i];
            for (int i = 0; i < 16; ++i) z[b * 32 + i] = q[b * 32 + i], z[b * 32 + 16 + i] = int16_t(q[b * 32 + 16 + i] - 16 * q[b * 32 + i]);
        }
        std::vector<float> xd(static_cast<size_t>(nb));
        for (auto& v : xd) v = 0.01f * float(1 + rng() % 100);
        const problem p{N, K, z.data(), xd.data(), s.data()};
        std::vector<float> want(static_cast<size_t>(N)), got(static_cast<size_t>(N));
        stored(p, W.data(), want.data());
        std::printf("%4dx%-5d", N, K);
        for (int v = 0; v < 6; ++v) {
            const auto run = [&](int c, float* out) {
                const uint8_t* end = G.data() + (c + 1) * bytes;
                if (v == 0) stored(p, W.data() + c * bytes, out);
                else if (v == 1) grouped<1, true>(p, G.data() + c * bytes, end, out);
                else if (v == 2) grouped<1, false>(p, G.data() + c * bytes, end, out);
                else if (v == 3) grouped<2, true>(p, G.data() + c * bytes, end, out);
                else if (v == 4) grouped_far<2>(p, G.data() + c * bytes, out);
                else grouped_far<4>(p, G.data() + c * bytes, out);
            };
            run(0, got.data());
            bool same = true;
            for (int n = 0; n < N; ++n) same = same && got[n] == want[n];
            double gbs[2];
            for (int cold = 0; cold < 2; ++cold) {
                std::vector<double> t;
                for (int r = 0; r < std::max(200, 3 * copies); ++r) {
                    const auto t0 = std::chrono::steady_clock::now();
                    run(cold ? r % copies : 0, got.data());
                    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
                }
                std::sort(t.begin(), t.end());
                gbs[cold] = double(bytes) / t[t.size() / 10] / 1e9;
            }
            std::printf("  %6.2f / %5.2f GB/s%s", gbs[0], gbs[1], same ? " " : "!");
        }
        std::printf("\n");
    }
    std::printf("(! marks a form whose results differ from stored's bit for bit)\n");
    return 0;
}
#else
int main() {
    std::printf("gemv-q4-layouts: a wasm SIMD128 experiment; build it with em++ (see the top of the file)\n");
    return 0;
}
#endif
