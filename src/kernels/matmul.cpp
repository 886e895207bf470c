// The matrix product, SIMD (xsimd). Natively xsimd picks the best instruction set the build enables (AVX2+FMA by default);
// under Emscripten `-msimd128 -msse4.1` maps the SSE4.1 path onto wasm SIMD128 (f32x4, i32x4.dot_i16x8_s).
//
// Two shapes of work for f32, f16 and bf16 weights. From 6 rows of x on (prefill, encoders, a batch) a register tile
// of dot products on W's rows (gemm_small): 4 W rows at a time (6 with relaxed SIMD), each group swept by the rows of
// x in pairs while it is in cache, without relaxed SIMD first copied into a panel that one pointer walks (f16/bf16
// rows widened a group at a time, either way), each once per call. It replaced an outer-product tile on packed panels
// (x and W copied per k block into the tile's order) that measured slower in both runtimes at every M: BERT-base
// fill-mask at 128 tokens 488 → 429 ms in Node and 461 → 402 ms in Chromium, one text of 32 tokens on
// DistilBERT-base 82 → 57 ms and 82 → 55 ms (npm run bench, the same runs as onnxruntime-web; wf-bench-kernels: 2304 ×
// 768 from memory at 32 rows 3.47 → 2.26 ms, at 128 rows in cache 73–78 % → 88–96 % of the mul-add ceiling). Where the
// instance runs relaxed SIMD (Chromium) the tile's multiply-adds are f32x4.relaxed_madd (gemm_small<true>): one FMA
// where the CPU has it. On an Intel Xeon (FMA on two ports, the adds sharing one of them with the multiplies) BERT-base
// fill-mask at 128 tokens took 762 → 629 ms, one text of 32 tokens on DistilBERT-base 105 → 88 ms; on an AMD EPYC
// (separate add and multiply pipes) an earlier session measured no difference.
// Decode and beams (M < 6) read f32 W rows straight from storage, 4 rows far apart at a time (4 sequential streams:
// gemm_streams); f16 and bf16 rows one at a time (one stream), widened in registers for
// one row of x (gemv_one_stream) or into a line for 2 to 5 (gemm_rows_stream) — unless those rows
// of x outgrow L1 (4 rows of a 3072-wide ffn_down: 48 KB), where the tile takes them (768 × 3072 f32 at 4 rows in
// Node 1.13 → 0.56 ms; a split of k into parts that fit measured slower, 0.47 → 0.85 ms at 2 rows).
// q8_0 weights always run in integers on q8_0-quantized activations: below 16 rows (decode, beams) as integer dot
// products on W, each W row read once for all rows of x (3.8× fewer weight bytes than f32, at integer speed); from
// 16 rows on as an integer outer-product tile on packed W (gemm_q8). 4 rows (4 beams) once took the tile, which packs
// W on every call: 0.316 ms for BERT-base's 768 × 768 in wasm, 0.144 ms now. In wasm the loader stores the q8_0
// matrices it converts with their rows grouped by 4 (dtype.h: group_rows; q4_0's too), which the GEMV reads as one stream:
// 7.2–8.1 GB/s cache-cold in Node against 4.9–5.7 for 4 rows as stored (GPT-2 small q8_0 decode 40.6 → 52.1 tok/s,
// 2.58× onnxruntime-web's int8 in the same run); 4 such groups far apart at a time (gemv-q8.cpp: 4 streams, as f32's
// gemm_streams) 11–12 GB/s on an Intel Xeon VM (GPT-2 small q8_0 decode 0.63× the time in Node, 0.68× in
// Chromium); the packing of the prefill tiles reads either.
// The other block types (q4_0 … q6_K, iq4_nl: kernels/quants.h) run in integers too below 16 rows (gemv_quant, on
// q8_0 or q8_K activations, W read once per 3 rows: their scalar dequantizers made gemm_small's widening 20× the
// work at 4 rows). From 16 rows on, q4_0, q5_0 and iq4_nl take gemm_q8 (each panel's rows re-blocked exactly as
// q8_0 first), and so do q4_1 and q5_1 (value = d·q + m per 32: the panel's rows as codes with float scales, the
// minimums' term added per tile from the activations' block sums). q3_K … q6_K take gemm_k: q8_K activations as their
// decode has them, the codes times their whole-number scales as int16, int32 sums over whole super-blocks and the
// decode's float steps after each — prefill's values are decode's bit for bit (a tile of codes with float scales per
// 32 or 16 on q8_0 activations had taken Q4_K's prefill from 71 % to about 100 % of the f32 ceiling, GPT-2 small at
// 128 tokens 522 → 369–389 ms in Node; gemm_k took 0.956 of that one's time). q4_K, q5_K and q6_K rows are decoded
// to codes in vectors (k45_codes, q6_codes). q2_K (a minimum per 16) is widened to f32
// by gemm_small two rows at a time (widen_segment) — each weight once per call, never the whole matrix — and runs as
// f32. Where the instance runs relaxed SIMD (Chromium), the integer tiles' rows from 16 on take its int8 dot
// product (matmul-q8.cpp: gemm_u7, the 4–6-bit types bit for bit as gemm_q8 and gemm_k; gemm_q7, q8_0 and iq4_nl on
// 7-bit x). The integer paths are in gemv-q8.cpp (gemv_q8) and matmul-q8.cpp (gemm_q8, gemm_k, gemm_q7, gemm_u7);
// matmul-paths.h has what they and this file share.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>
#include "kernels/simd.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>  // clang's header for the wasm SIMD128 instructions (not Emscripten's)
#endif
#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

#include "core/error.h"
#include "kernels/cold.h"
#include "kernels/kernels.h"
#include "kernels/matmul-paths.h"
#include "kernels/quants.h"
#include "kernels/relaxed.h"
#include "kernels/touch.h"

namespace wf {
namespace {

using matmul_detail::B;
using matmul_detail::BI;
using matmul_detail::W;
using matmul_detail::load_u16;
using matmul_detail::scratch;
using matmul_detail::widen_f16;

// Per-thread scratch that grows to the largest size asked for and is then reused: no allocation per call.
thread_local std::vector<float> panel_buf, pairs_buf;

struct f32_rows {
    static B load(const uint8_t* row, int64_t k) { return B::load_unaligned(reinterpret_cast<const float*>(row) + k); }
    static float at(const uint8_t* row, int64_t k) {
        float f;
        std::memcpy(&f, row + 4 * k, 4);
        return f;
    }
};
struct f16_rows {
    static B load(const uint8_t* row, int64_t k) { return widen_f16(load_u16(row + 2 * k)); }
    static float at(const uint8_t* row, int64_t k) {
        uint16_t h;
        std::memcpy(&h, row + 2 * k, 2);
        return f16_to_f32(h);
    }
};
struct bf16_rows {
    static B load(const uint8_t* row, int64_t k) { return xsimd::bitwise_cast<B>(load_u16(row + 2 * k) << 16); }
    static float at(const uint8_t* row, int64_t k) {
        uint16_t h;
        std::memcpy(&h, row + 2 * k, 2);
        return bf16_to_f32(h);
    }
};

// --- the register tile ---------------------------------------------------------------------------------------
// c + a·b. Fused: relaxed SIMD's f32x4.relaxed_madd (kernels/relaxed.h), taken only where the instance runs it — one
// instruction where the CPU has FMA (one rounding), a multiply and an add where it has not. Otherwise xsimd's fma,
// which under wasm SIMD128 is a multiply and an add.
template <bool Fused>
inline B madd(B a, B b, B c) {
#if defined(__wasm_simd128__)
    if constexpr (Fused) return B(__m128(wf_relaxed_madd_f32x4(v128_t(__m128(a)), v128_t(__m128(b)), v128_t(__m128(c)))));
#endif
    return xsimd::fma(a, b, c);
}

// out[m][n] = Σ_k x[m·ldx + k] · w_n[k] for MR rows of x and NR f32 rows of W at w[0 … NR − 1], pointers stepped:
// clang's wasm target has no loop strength reduction, and an index costs V8 a shift and an add per address, on the
// ports the multiply-adds use (BERT-base fill-mask at 128 tokens 7–9 % faster in Chromium; in Node 8 % in two runs, 0
// % in three later ones; two steps of k a turn measured no faster in Chromium and up to 28 % slower in Node: V8
// schedules a turn's loads first, and the two steps' values outnumber the 15 registers).
template <int MR, int NR, bool Fused>
inline void tile(const float* x, int64_t ldx, const uint8_t* const* w, int64_t K, float (&out)[MR][NR]) {
    B acc[MR][NR];
    const float* xp[MR];
    const uint8_t* wp[NR];
    for (int m = 0; m < MR; ++m) {
        xp[m] = x + m * ldx;
        for (int n = 0; n < NR; ++n) acc[m][n] = B(0.0f);
    }
    for (int n = 0; n < NR; ++n) wp[n] = w[n];
    for (const float* const xe = x + K / W * W; xp[0] != xe;) {
        B xv[MR];
        for (int m = 0; m < MR; ++m) xv[m] = B::load_unaligned(xp[m]), xp[m] += W;
        for (int n = 0; n < NR; ++n) {
            const B wv = f32_rows::load(wp[n], 0);
            wp[n] += 4 * W;
            for (int m = 0; m < MR; ++m) acc[m][n] = madd<Fused>(xv[m], wv, acc[m][n]);
        }
    }
    for (int m = 0; m < MR; ++m)
        for (int n = 0; n < NR; ++n) out[m][n] = xsimd::hadd(acc[m][n]);
    const int64_t tail = K % W;
    for (int64_t k = 0; k < tail; ++k)
        for (int n = 0; n < NR; ++n) {
            const float wk = f32_rows::at(wp[n], k);
            for (int m = 0; m < MR; ++m) out[m][n] += xp[m][k] * wk;
        }
}

// MR rows of x against NR rows of W (tile) into columns n0 … n0 + NR − 1 of y.
template <int MR, int NR, bool Fused>
inline void store_tile(const float* x, int64_t ldx, const uint8_t* const* w, int64_t K, const float* bias, int64_t n0,
                       float* y, int64_t ldy) {
    float out[MR][NR];
    tile<MR, NR, Fused>(x, ldx, w, K, out);
    for (int m = 0; m < MR; ++m)
        for (int n = 0; n < NR; ++n) y[m * ldy + n0 + n] = out[m][n] + (bias ? bias[n0 + n] : 0.0f);
}

// tile<2, NR, false>'s sums on copies laid out for it, plus bias[0 … NR − 1], into y0[0 … NR − 1] and y1[…]:
// two rows of x with their vectors of k side by side (pack_pairs), against NR rows of W in a panel (pack_panel: per W
// columns of k the NR rows' vectors side by side, then each row's last K % W values one row after another) — one
// pointer for both rows of x and one for all of W's, where tile steps 2 + NR. Without relaxed SIMD a step is 6
// loads, 8 multiplies, 8 adds, the 2 pointers' increments and the loop's test: on an AMD EPYC (separate multiply and
// add pipes: the 16 take 4 cycles; at most 6 instructions dispatched a cycle) 25 of them (26 with a pointer for each
// row of x, 29 with W's rows where they are stored, as tile). `node
// build/wasm/wf-bench-kernels.js encoders`, alternating runs: the panel (against tile) took BERT-base's and MiniLM's
// shapes at 128 to 2048 rows from 71–81 % to 73–92 % of the mul-add ceiling, medians about 78 → 86 % (2304 × 768
// at 128 rows 37.1–37.7 → 40.7–41.4 GFLOP/s); x's rows in pairs then 86–91 % → 88–93 % at 128 and 384 rows, and
// end to end (bench/ab-builds.mjs, Node, 8 rounds) all-MiniLM-L6-v2's embed row 0.950× the time, DistilBERT's qa
// row 0.970×, BERT-base fill-mask 0.989×, GPT-2's 128-token prompt 0.992×, one 32-token DistilBERT text 1.021× (an
// earlier form of it, whose inner loop V8 compiled the same, took 0.961–0.974× on fill-mask: the code around the
// loop moves these by a few percent). clang unrolls the loop by 2.
template <int NR>
inline void store_pair(const float* xx, const uint8_t* panel, int64_t K, const float* bias, float* y0, float* y1) {
    B acc[2][NR];
    for (int m = 0; m < 2; ++m)
        for (int n = 0; n < NR; ++n) acc[m][n] = B(0.0f);
    const float* xp = xx;
    const uint8_t* wp = panel;
    for (const float* const xe = xx + 2 * (K / W * W); xp != xe; xp += 2 * W, wp += 4 * W * NR) {
        const B x0 = B::load_unaligned(xp), x1 = B::load_unaligned(xp + W);
        for (int n = 0; n < NR; ++n) {
            const B wv = f32_rows::load(wp, n * W);
            acc[0][n] = madd<false>(x0, wv, acc[0][n]);
            acc[1][n] = madd<false>(x1, wv, acc[1][n]);
        }
    }
    float out[2][NR];
    for (int m = 0; m < 2; ++m)
        for (int n = 0; n < NR; ++n) out[m][n] = xsimd::hadd(acc[m][n]);
    const int64_t tail = K % W;
    for (int64_t k = 0; k < tail; ++k)
        for (int n = 0; n < NR; ++n) {
            const float wk = f32_rows::at(wp, n * tail + k);
            for (int m = 0; m < 2; ++m) out[m][n] += xp[m * tail + k] * wk;
        }
    for (int n = 0; n < NR; ++n) {
        const float b = bias ? bias[n] : 0.0f;
        y0[n] = out[0][n] + b, y1[n] = out[1][n] + b;
    }
}

// Rows m, m + 1 of x for store_pair: their vectors of k side by side, then row m's last K % W values, then row m + 1's
// (an odd M's last row twice).
[[gnu::noinline]] void pack_pairs(const float* x, int64_t M, int64_t ldx, int64_t K, float* out) {
    const int64_t K4 = K / W * W, tail = K - K4;
    for (int64_t m = 0; m < M; m += 2, out += 2 * K) {
        const float *a = x + m * ldx, *b = m + 1 < M ? a + ldx : a;
        float* p = out;
WF_NO_UNROLL
        for (int64_t k = 0; k < K4; k += W, p += 2 * W) B::load_unaligned(a + k).store_unaligned(p), B::load_unaligned(b + k).store_unaligned(p + W);
WF_SCALAR_LOOP
        for (int64_t k = 0; k < tail; ++k) p[k] = a[K4 + k], p[tail + k] = b[K4 + k];
    }
}

// Decode and beams (1 to 5 rows of x) against f32 W: S rows of the range [n0, n1) at a time, (n1 − n0) / S rows
// apart, on the register tile (one accumulator per row of x and of W along k), so that memory delivers S sequential
// streams far apart; 4, swept by x's rows in pairs (2 × 4, then 1 × 4) while the 4 rows are in L1. (8 for one row of
// x, on a 1 × 8 tile, read ~10 % faster in bench/gemv-f32.cpp alone, but end to end — GPT-2 small's and Marian's
// decode — no faster than 4, and its code took the wasm over its 400 KB budget: README build notes.) On this Intel
// Xeon VM (wasm, Node 20, weights from memory, bench/gemv-f32.cpp) one W row at a time read 5.6–7.6 GB/s, below a
// plain read loop's 7–8.7; 8 rows far apart read 10.1–12.5 GB/s at SmolLM2's, GPT-2's and BERT's shapes, 4 rows
// 9.2–11.2, while 4 adjacent rows gained only where a row is wider than a page (K ≥ 1536). (An
// AMD EPYC of an earlier session, 35 GB/s, read 28–36 with one row at a time and 21–23 with 8 adjacent rows; far rows
// were not measured there.) A result's arithmetic is the tile's whichever rows it goes with, so the results do not
// depend on the range a thread is given.
void gemm_streams(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
                  int64_t n0, int64_t n1) {
    constexpr int S = 4;
    const int64_t K = Wm.n_cols, Q = (n1 - n0) / S;
    // rows m, m + 1 (MR of them) of x against the NR W rows w, into columns col of y
    auto put = [&]<int MR, int NR>(int64_t m, const uint8_t* const (&w)[NR], const int64_t (&col)[NR]) {
        float out[MR][NR];
        tile<MR, NR, false>(x + m * ldx, ldx, w, K, out);
        for (int r = 0; r < MR; ++r)
            for (int j = 0; j < NR; ++j) y[(m + r) * ldy + col[j]] = out[r][j] + (bias ? bias[col[j]] : 0.0f);
    };
    auto sweep = [&]<int NR>(const uint8_t* const (&w)[NR], const int64_t (&col)[NR]) {
        int64_t m = 0;
        for (; m + 2 <= M; m += 2) put.template operator()<2, NR>(m, w, col);
        if (m < M) put.template operator()<1, NR>(m, w, col);
    };
    for (int64_t i = 0; i < Q; ++i) {
        const uint8_t* w[S];
        int64_t col[S];
        for (int s = 0; s < S; ++s) col[s] = n0 + s * Q + i, w[s] = Wm.row(col[s]);
        sweep(w, col);
    }
    for (int64_t n = n0 + S * Q; n < n1; ++n) {
        const uint8_t* w[1] = {Wm.row(n)};
        const int64_t col[1] = {n};
        sweep(w, col);
    }
}

// One row of x against one W row at a time, four accumulators along k: W is read as one sequential stream. f16 and
// bf16 rows take it (their widening, not the reading, sets their pace: 3.4 GFLOP/s either way); f32 rows take
// gemm_streams (above).
template <class Rows>
void gemv_one_stream(const float* x, int64_t, int64_t, const matrix_view& Wm, const float* bias, float* y, int64_t, int64_t n0, int64_t n1) {
    const int64_t K = Wm.n_cols;
    for (int64_t n = n0; n < n1; ++n) {
        const uint8_t* w = Wm.row(n);
        B a0(0.0f), a1(0.0f), a2(0.0f), a3(0.0f);
        int64_t k = 0;
        for (; k + 4 * W <= K; k += 4 * W) {
            a0 = xsimd::fma(B::load_unaligned(x + k), Rows::load(w, k), a0);
            a1 = xsimd::fma(B::load_unaligned(x + k + W), Rows::load(w, k + W), a1);
            a2 = xsimd::fma(B::load_unaligned(x + k + 2 * W), Rows::load(w, k + 2 * W), a2);
            a3 = xsimd::fma(B::load_unaligned(x + k + 3 * W), Rows::load(w, k + 3 * W), a3);
        }
        for (; k + W <= K; k += W) a0 = xsimd::fma(B::load_unaligned(x + k), Rows::load(w, k), a0);
        float s = xsimd::hadd((a0 + a1) + (a2 + a3));
        for (; k < K; ++k) s += x[k] * Rows::at(w, k);
        y[n] = s + (bias ? bias[n] : 0.0f);
    }
}

// Values [k0, k0 + kc) of row r of W as f32, SIMD-widened for f16/bf16; k0 and kc are whole blocks of W's type.
// Not inlined: clang put a copy in gemm_small<true> once that had fewer callers of it, 2 KB of wasm (0.6 KB gzipped).
[[gnu::noinline]] void widen_segment(const matrix_view& Wm, int64_t r, int64_t k0, int64_t kc, float* out) {
    const uint8_t* row = row_as_stored(Wm, r);  // a grouped row (dtype.h) as stored
    auto run = [&](auto rows) {
        int64_t k = 0;
        for (; k + W <= kc; k += W) decltype(rows)::load(row, k0 + k).store_unaligned(out + k);
        for (; k < kc; ++k) out[k] = decltype(rows)::at(row, k0 + k);
    };
    if (Wm.type == dtype::f32) run(f32_rows{});
    else if (Wm.type == dtype::f16) run(f16_rows{});
    else if (Wm.type == dtype::bf16) run(bf16_rows{});
    else traits(Wm.type).to_f32(row + row_bytes(Wm.type, k0), out, kc);
}

// Up to 4 rows of x against one row of W (w: K floats), pointers stepped (clang's wasm target has no loop strength
// reduction: an index would cost V8 a shift and an add per address), two accumulators per row along k.
template <int MR>
inline void dot_rows(const float* x, int64_t ldx, const float* w, int64_t K, float (&out)[MR]) {
    const float* xp[MR];
    B a0[MR], a1[MR];
    for (int m = 0; m < MR; ++m) xp[m] = x + m * ldx, a0[m] = a1[m] = B(0.0f);
    const float* wp = w;
    for (const float* const we = w + K / (2 * W) * (2 * W); wp != we; wp += 2 * W) {
        const B w0 = B::load_unaligned(wp), w1 = B::load_unaligned(wp + W);
        for (int m = 0; m < MR; ++m) {
            a0[m] = xsimd::fma(B::load_unaligned(xp[m]), w0, a0[m]);
            a1[m] = xsimd::fma(B::load_unaligned(xp[m] + W), w1, a1[m]);
            xp[m] += 2 * W;
        }
    }
    if (wp + W <= w + K) {
        const B w0 = B::load_unaligned(wp);
        for (int m = 0; m < MR; ++m) a0[m] = xsimd::fma(B::load_unaligned(xp[m]), w0, a0[m]), xp[m] += W;
        wp += W;
    }
    for (int m = 0; m < MR; ++m) {
        float s = xsimd::hadd(a0[m] + a1[m]);
        // W's rows may sit at any byte offset of a file's bytes: read as f32_rows reads them, not dereferenced as floats
        for (int64_t k = 0; wp + k < w + K; ++k) s += xp[m][k] * f32_rows::at(reinterpret_cast<const uint8_t*>(wp), k);
        out[m] = s;
    }
}

// MR rows of x (x, ldx) against W row n (w), into column n of y.
template <int MR>
inline void store_rows(const float* x, int64_t ldx, const float* w, int64_t K, float b, float* y, int64_t ldy) {
    float out[MR];
    dot_rows<MR>(x, ldx, w, K, out);
    for (int m = 0; m < MR; ++m) y[m * ldy] = out[m] + b;
}

// 2 to 5 rows of x (beams, the texts of a greedy batch, short prompts) against f16 or bf16 W one row at a time
// (f32 rows take gemm_streams), read as one sequential stream, widened into a line and swept by all rows of x (4,
// then the rest) while it is in L1: each W row is widened once per call. (It was f32's path too: on an AMD EPYC, 4
// adjacent W rows side by side on gemm_small's tile, 2304 × 768 from memory in Node, took 0.40 ms at 2 rows and 0.54
// at 4, one row at a time 0.28 and 0.40; from 6 rows on the tile's fewer loads per multiply-add win: 8 rows 0.83 vs
// 1.15.)
void gemm_rows_stream(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
                      int64_t n0, int64_t n1) {
    const int64_t K = Wm.n_cols;
    float* w = scratch(panel_buf, size_t(K));
    for (int64_t n = n0; n < n1; ++n) {
        widen_segment(Wm, n, 0, K, w);
        const float b = bias ? bias[n] : 0.0f;
        int64_t m = 0;
        for (; m + 4 <= M; m += 4) store_rows<4>(x + m * ldx, ldx, w, K, b, y + m * ldy + n, ldy);
        switch (M - m) {
        case 3: store_rows<3>(x + m * ldx, ldx, w, K, b, y + m * ldy + n, ldy); break;
        case 2: store_rows<2>(x + m * ldx, ldx, w, K, b, y + m * ldy + n, ldy); break;
        case 1: store_rows<1>(x + m * ldx, ldx, w, K, b, y + m * ldy + n, ldy); break;
        default: break;
        }
    }
}

// Rows n … n + NR − 1 of W as f32 into the packed tile's layout at panel; a row of another type than f32 is widened first
// into the K floats after the panel's NR rows. Not inlined (wasm-opt inlines a function that has one caller: hence
// its call for a single row too): inlined into gemm_small<false> it cost 176 B gzipped.
[[gnu::noinline]] void pack_panel(const matrix_view& Wm, int64_t n, int NR, float* panel) {
    const int64_t K = Wm.n_cols, K4 = K / W * W, tail = K - K4;
    float* const line = panel + NR * K;
    for (int j = 0; j < NR; ++j) {
        const uint8_t* row = reinterpret_cast<const uint8_t*>(line);
        if (Wm.type == dtype::f32) row = Wm.row(n + j);
        else widen_segment(Wm, n + j, 0, K, line);
        float* p = panel + j * W;
WF_NO_UNROLL
        for (int64_t k = 0; k < K4; k += W, p += NR * W) f32_rows::load(row, k).store_unaligned(p);
WF_SCALAR_LOOP
        for (int64_t k = 0; k < tail; ++k) panel[NR * K4 + j * tail + k] = f32_rows::at(row, K4 + k);
    }
}

// 6 rows of x and more: the register tile in dot-product form on W's rows, G at a time, each group swept by the rows
// of x in pairs while it is in cache (W is read from memory once). Without relaxed SIMD each group is first packed
// into a panel (pack_panel: f32 rows copied, f16, bf16 and the block types that take this path widened), which
// store_pair reads through one pointer, and x's rows are copied in pairs once per call (pack_pairs: M·K floats, a
// thread's scratch; the parts matmul gives keep them under 1.5 MB); with it (Fused) f32 rows are read where they are
// stored and the others widened into a panel of G rows. Either way each row once per call, and the next group of f32 rows touched first
// (touch_rows: 12 rows of x on 2304 × 768 from memory 1.25 → 1.07 ms). The last rows of W (fewer than G) one at a
// time, f32 as stored, on the tile of one row. See the top of this file for what it replaced. Fused: its
// multiply-adds are relaxed SIMD's (p_gemm_small_fused, where the instance runs it), and G is 6: a 2 × 6 tile holds
// 12 accumulators, 2 rows of x and one W vector, 15 of the 16 SIMD registers V8 has on x64 (an FMA needs no
// temporary), and does 12 FMAs per 8 loads (2 × 4: 8 per 6); Chromium, against 2 × 4: BERT-base fill-mask at 128
// tokens and one DistilBERT text 0.89×, GPT-2 small's 128-token prompt 0.95× the time. Its FMAs, not its instructions,
// set its pace: packed, the same AMD EPYC ran one DistilBERT text 1.10×, BERT-base fill-mask 1.03× the time in
// Chromium (bench/ab-builds.mjs, 6 rounds), so it is not packed. Without relaxed SIMD (Node 20) a multiply-add is a
// multiply and an add, which takes a temporary, and 2 × 5 was slower than 2 × 4 (1.09–1.13×): G is 4.
template <bool Fused>
void gemm_small(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
                int64_t n0, int64_t n1) {
    constexpr int G = Fused ? 6 : 4;
    constexpr bool packs = !Fused;  // (above)
    const int64_t K = Wm.n_cols;
    const bool as_stored = Wm.type == dtype::f32;
    float* panel = scratch(panel_buf, size_t((G + 1) * K));  // G rows, and the line pack_panel widens into
    float* pairs = nullptr;
    if constexpr (packs) pack_pairs(x, M, ldx, K, pairs = scratch(pairs_buf, size_t((M + 1) / 2 * 2 * K)));
    auto sweep = [&]<int NR, bool Packed>(int64_t n, const uint8_t* const (&w)[NR]) {
        if constexpr (Packed) {
            float odd[NR];  // where an odd M's last row goes twice
            for (int64_t m = 0; m < M; m += 2)
                store_pair<NR>(pairs + m * K, w[0], K, bias ? bias + n : nullptr, y + m * ldy + n, m + 1 < M ? y + (m + 1) * ldy + n : odd);
        } else {
            int64_t m = 0;
            for (; m + 2 <= M; m += 2) store_tile<2, NR, Fused>(x + m * ldx, ldx, w, K, bias, n, y + m * ldy, ldy);
            if (m < M) store_tile<1, NR, Fused>(x + m * ldx, ldx, w, K, bias, n, y + m * ldy, ldy);
        }
    };
    int64_t n = n0;
    for (; n + G <= n1; n += G) {
        const uint8_t* w[G];
        if constexpr (packs) {
            pack_panel(Wm, n, G, panel);
            w[0] = reinterpret_cast<const uint8_t*>(panel);
        } else {
            for (int j = 0; j < G; ++j) {
                if (as_stored) {
                    w[j] = Wm.row(n + j);
                } else {
                    widen_segment(Wm, n + j, 0, K, panel + j * K);
                    w[j] = reinterpret_cast<const uint8_t*>(panel + j * K);
                }
            }
        }
        if (as_stored) touch_rows(Wm, n + G, n1, G);
        sweep.template operator()<G, packs>(n, w);
    }
    for (; n < n1; ++n) {  // one row at a time: as stored (f32), or widened (a panel of one row)
        const uint8_t* w[1] = {as_stored ? Wm.row(n) : reinterpret_cast<const uint8_t*>(panel)};
        if (!as_stored) pack_panel(Wm, n, 1, panel);
        sweep.template operator()<1, false>(n, w);
    }
}

// Out of line, so that no throw sits in the function the hot loops are inlined into (it slows them under wasm EH).
[[noreturn, gnu::noinline]] void unsupported(dtype t) { throw error(std::string("matmul: ") + dtype_name(t) + " weights are not computed"); }

}  // namespace

// f32, f16, bf16 weights: below this many rows of x, W as streams (f32: 4 rows far apart, gemm_streams; f16 and
// bf16 one row at a time, gemv_one_stream / gemm_rows_stream); from there on, the tile on 4 (6) W rows (gemm_small).
constexpr int64_t kStreamRowsMax = 6;
// … unless x's rows outgrow L1: one W row at a time then reads all of them again from L2 for every W row
constexpr int64_t kRowsL1Bytes = 16 * 1024;

// q8_0 weights: from this many rows of x on, the packed integer tile (gemm_q8); below, gemv_q8.
constexpr int64_t kQ8TileRows = 16;

namespace {
// Each path of matmul is a function of its own in the wasm, called through a pointer the compiler must read (as the
// tiles above): wasm-opt inlines every function that has one caller, and matmul with all its paths inlined was
// ~750 KB of machine code in which V8's register allocator kept the kernels' accumulators on the stack.
using path = void (*)(const float*, int64_t, int64_t, const matrix_view&, const float*, float*, int64_t, int64_t, int64_t);
path volatile p_gemv_quant = &gemv_quant, p_gemm_q8 = &matmul_detail::gemm_q8, p_gemm_k = &matmul_detail::gemm_k,
              p_gemv_q8 = &matmul_detail::gemv_q8, p_gemm_small = &gemm_small<false>,
              p_gemm_small_fused = &gemm_small<true>, p_gemm_rows = &gemm_rows_stream,
              p_gemm_streams = &gemm_streams, p_gemv_f16 = &gemv_one_stream<f16_rows>, p_gemv_bf16 = &gemv_one_stream<bf16_rows>;
}  // namespace

// Relaxed SIMD's integer tiles (gemm_u7, gemm_q7) in their form for this machine. Their int8 dot product with
// accumulation is one x86 instruction only where the CPU has AVX-VNNI; V8 makes it five elsewhere, and there those
// tiles were slower than the plain ones on SIMD128's int16 dot: on an AMD EPYC (Zen 4: AVX-512 VNNI, no AVX-VNNI) in
// Chromium BERT-base q8_0 fill-mask took 394 ms relaxed and 336 plain, GPT-2 small's q4_k prompt 388 and 344, where
// on Zen 5 the relaxed tiles had taken half the time. There the tiles take their pair form instead (matmul-q8.cpp,
// quad_step: the int8 dot into int16 pairs, one pmaddubsw); relaxed SIMD's own results tell the two kinds of machine
// apart (kernels/relaxed.h, relaxed_dot_fused). Both forms compute the same integers: the speed changes only.
bool relaxed_pairs() { return relaxed_dot_probe() == 65534; }

namespace {
void gemm_u7_path(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1) {
    matmul_detail::gemm_u7(x, M, ldx, Wm, bias, y, ldy, n0, n1, matmul_detail::instruction_tiles(relaxed_pairs()));
}
void gemm_q7_path(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1) {
    matmul_detail::gemm_q7(x, M, ldx, Wm, bias, y, ldy, n0, n1, matmul_detail::instruction_tiles(relaxed_pairs()));
}
path volatile p_gemm_u7 = &gemm_u7_path, p_gemm_q7 = &gemm_q7_path;
}  // namespace

bool matmul_takes_u7(dtype w, int64_t M) { return M >= kQ8TileRows && u7_computes(w) && relaxed_simd(); }
bool matmul_takes_q7(dtype w, int64_t M) {
    return M >= kQ8TileRows && (w == dtype::q8_0 || traits(w).to_q8_0) && !u7_computes(w) && relaxed_simd();
}

namespace {
// The path matmul takes for M rows of x against weights of type w with K columns (null: none computes it).
path choose(dtype w, int64_t M, int64_t K) {
    if (M < 16 && gemv_quant_computes(w)) return p_gemv_quant;
    // with relaxed SIMD, on its int8 dot product: the types whose codes fit in 7 bits as the plain tiles compute them,
    // q8_0 and iq4_nl on 7-bit activations
    if (matmul_takes_u7(w, M)) return p_gemm_u7;
    if (matmul_takes_q7(w, M)) return p_gemm_q7;
    // the K-quants but q2_K: integer sums over whole super-blocks on q8_K activations, decode's values
    if (M >= kQ8TileRows && (w == dtype::q3_k || w == dtype::q4_k || w == dtype::q5_k || w == dtype::q6_k)) return p_gemm_k;
    if (w == dtype::q8_0) return M >= kQ8TileRows ? p_gemm_q8 : p_gemv_q8;
    // from 16 rows on: q4_0, q5_0, iq4_nl re-blocked as q8_0 per panel; q4_1, q5_1 as codes and minimums
    if (traits(w).to_q8_0 || traits(w).to_codes32) return p_gemm_q8;
    // f32, f16, bf16 (and q2_K from 16 rows on, widened): the tile on W's rows from 6 rows on (and from 2 where x's
    // rows outgrow L1), its multiply-adds relaxed SIMD's where the instance runs it
    if (M >= kStreamRowsMax || M * K * 4 > kRowsL1Bytes) return relaxed_simd() ? p_gemm_small_fused : p_gemm_small;
    if (w == dtype::f32) return p_gemm_streams;
    if (M >= 2) return p_gemm_rows;
    if (w == dtype::f16) return p_gemv_f16;
    if (w == dtype::bf16) return p_gemv_bf16;
    return nullptr;
}
}  // namespace

bool matmul_fuses(dtype w, int64_t M, int64_t K) { return choose(w, M, K) == p_gemm_small_fused; }

int64_t matmul_part_bytes = 1 << 20;

void matmul(const float* x, int64_t M, int64_t ldx, const matrix_view& Wm, const float* bias, float* y, int64_t ldy,
            int64_t n_begin, int64_t n_end) {
    if (M <= 0 || n_begin >= n_end) return;
    const path f = choose(Wm.type, M, Wm.n_cols);
    if (!f) unsupported(Wm.type);
    // gemm_small sweeps all of x with each group of W's rows: x larger than L2 is given to it in parts that fit
    // (matmul_part_bytes), each swept by all of W (read once per part). The same arithmetic for every output. In Node,
    // parts against whole, 30 alternating pairs each (`node build/wasm/wf-bench-kernels.js encoders`): at 2048 rows
    // (all-MiniLM-L6-v2 on 32 texts of 64 tokens) 0.77–0.94× the time at its three shapes, 0.89–0.93× at
    // DistilBERT's; 384 rows × 3072 (question answering's FFN down) 0.985×; parts of 512 KB lost 3 % on BERT-base's
    // 128 rows × 3072 (1.5 MB: one part at 1 MB).
    int64_t per = M;
    if (f == p_gemm_small || f == p_gemm_small_fused) {
        const int64_t bytes = M * Wm.n_cols * 4, part = std::max<int64_t>(matmul_part_bytes, 1);
        const int64_t parts = bytes <= part * 3 / 2 ? 1 : (bytes + part - 1) / part;
        per = ((M + parts - 1) / parts + 1) & ~int64_t(1);  // even: the tile takes rows in pairs
    }
    for (int64_t m0 = 0; m0 < M; m0 += per) f(x + m0 * ldx, std::min(per, M - m0), ldx, Wm, bias, y + m0 * ldy, ldy, n_begin, n_end);
}

}  // namespace wf
