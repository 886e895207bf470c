// Every SIMD kernel against its scalar twin (wf::ref), on seeded random data at awkward sizes.
//
// Tolerances (f32 accumulation against the double-accumulated twin):
//   matmul f32/f16/bf16: |y − y_ref| ≤ 2e-6·Σ|x·w| + 1e-6   (weights are widened exactly, so only rounding)
//   matmul q8_0 (integer paths at every M): exact-path check against the twin fed the q8_0-rounded activations (same bound), and
//                        |y − y_ref| ≤ Σ_k |w_k|·(block max|x|)/254·1.01 + 1e-3·Σ|x·w| against unquantized x
//   matmul_q7 (relaxed SIMD's path): 1e-6·Σ|x·w| + 1e-6 against its integer twin; /126 in place of /254 against f32
//   layer_norm, rms_norm, softmax, add, axpy, dot: 1e-5 relative; log_sum_exp: 1e-7 relative + 1e-6; gelu_erf / gelu_tanh, silu_mul: 2e-6 absolute + 2e-6
//   relative; rope: 1e-6 absolute + 1e-6 relative (the angles are the same f32 values; only the products round).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <catch2/catch.hpp>
#include <tuple>

#include "helpers.h"
#include "kernels/quants.h"
#include "kernels/relaxed.h"

using wf::dtype;

namespace {

const int64_t kSizes[] = {1, 3, 15, 17, 31, 33, 767, 769, 3072};

double abs_dot(const float* x, const float* w, int64_t K) {
    double s = 0;
    for (int64_t k = 0; k < K; ++k) s += std::fabs(double(x[k]) * w[k]);
    return s;
}

// What quantizing the activations x to q8_0 (levels 127) or 7 bits (63, relaxed SIMD's path) can move x·w: per block,
// Σ|w| · (max |x|)/(2·levels) (half a step), with 1 % for the f16 rounding of q8_0's block scale.
double q8_activation_bound(const float* x, const float* w, int64_t K, int levels = 127) {
    double bound = 0;
    for (int64_t b = 0; b < K / wf::q8_block; ++b) {
        double amax = 0, wsum = 0;
        for (int64_t i = b * wf::q8_block; i < (b + 1) * wf::q8_block; ++i) {
            amax = std::max(amax, double(std::fabs(x[i])));
            wsum += std::fabs(w[i]);
        }
        bound += wsum * amax / (2.0 * levels) * 1.01;
    }
    return bound;
}

void check_matmul(int64_t M, int64_t K, int64_t N, dtype type, uint32_t seed) {
    INFO("M=" << M << " K=" << K << " N=" << N << " type=" << wf::dtype_name(type));
    const auto x = wft::random_floats(static_cast<size_t>(M * K), seed);
    const auto wsrc = wft::random_floats(static_cast<size_t>(N * K), seed + 1, -0.5f, 0.5f);
    const auto bias = wft::random_floats(static_cast<size_t>(N), seed + 2);
    wft::stored_matrix W(wsrc, N, K, type);
    std::vector<float> y(static_cast<size_t>(M * N), NAN), yr(static_cast<size_t>(M * N), NAN);
    wf::matmul(x.data(), M, K, W.view, bias.data(), y.data(), N, 0, N);
    wf::ref::matmul(x.data(), M, K, W.view, bias.data(), yr.data(), N, 0, N);
    std::vector<float> wrow(static_cast<size_t>(K));
    const bool int8_path = wf::matmul_quantizes_activations(type, M);
    // relaxed SIMD's path (an instance that runs it) quantizes to 7 bits instead (kernels.h: matmul_q7)
    const bool q7_path = wf::matmul_takes_q7(type, M);
    std::vector<float> xq = x;  // activations as the integer path sees them
    if (q7_path) {
        std::vector<int8_t> q(static_cast<size_t>(K));
        std::vector<float> d(static_cast<size_t>(K / wf::q8_block));
        for (int64_t m = 0; m < M; ++m) {
            wf::quantize_q7(x.data() + m * K, K, q.data(), d.data());
            for (int64_t k = 0; k < K; ++k) xq[size_t(m * K + k)] = float(q[size_t(k)]) * d[size_t(k / wf::q8_block)];
        }
    } else if (int8_path) {
        std::vector<wf::block_q8_0> blocks(static_cast<size_t>(K / wf::q8_block));
        for (int64_t m = 0; m < M; ++m) {
            wf::quantize_q8_0(x.data() + m * K, K, blocks.data());
            wf::matrix_view v{dtype::q8_0, 1, K, blocks.data()};
            wf::dequantize_row(v, 0, xq.data() + m * K);
        }
    }
    std::vector<float> yq(static_cast<size_t>(M * N));
    wf::ref::matmul(xq.data(), M, K, W.view, bias.data(), yq.data(), N, 0, N);
    for (int64_t n = 0; n < N; ++n) {
        wf::dequantize_row(W.view, n, wrow.data());
        for (int64_t m = 0; m < M; ++m) {
            const double scale = abs_dot(x.data() + m * K, wrow.data(), K);
            const double got = y[size_t(m * N + n)];
            REQUIRE(std::isfinite(got));
            REQUIRE(std::fabs(got - yq[size_t(m * N + n)]) <= 2e-6 * scale + 1e-6);
            if (int8_path)
                REQUIRE(std::fabs(got - yr[size_t(m * N + n)]) <= q8_activation_bound(x.data() + m * K, wrow.data(), K, q7_path ? 63 : 127) + 1e-3 * scale + 1e-6);
        }
    }
}

}  // namespace

TEST_CASE("f16 and bf16 conversions are exact round trips", "[kernels]") {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = wf::f16_to_f32(uint16_t(h));
        if (std::isnan(f)) {
            REQUIRE(std::isnan(wf::f16_to_f32(wf::f32_to_f16(f))));
            continue;
        }
        REQUIRE(wf::f32_to_f16(f) == h);
    }
    // round to nearest even between two halves, overflow to inf, underflow to zero
    REQUIRE(wf::f32_to_f16(1.0f + 0x1p-11f) == 0x3c00);              // tie → even (1.0)
    REQUIRE(wf::f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3c02);          // tie → even (1 + 2^-9)
    REQUIRE(wf::f32_to_f16(65520.0f) == 0x7c00);                     // rounds up past the largest half
    REQUIRE(wf::f32_to_f16(0x1p-26f) == 0x0000);                     // half of the smallest subnormal → 0 (even)
    REQUIRE(wf::f16_to_f32(0x0001) == 0x1p-24f);                     // smallest subnormal
    REQUIRE(wf::bf16_to_f32(0x3f80) == 1.0f);
}

TEST_CASE("matmul matches its scalar twin for every weight type and shape", "[kernels][matmul]") {
    uint32_t seed = 100;
    for (dtype type : {dtype::f32, dtype::f16, dtype::bf16}) {
        for (int64_t M : {1, 2, 3, 4, 5, 6, 9, 17})  // one row; one W row at a time (2–5); the 4-row tile (6–15); packed
            for (int64_t K : {1, 3, 15, 17, 31, 33, 767, 769})
                for (int64_t N : {1, 3, 17, 33}) check_matmul(M, K, N, type, seed++);
        check_matmul(2, 3072, 15, type, seed++);
        // f32's streams (4 W rows N / 4 apart) with 3 rows left over, and many rows per stream
        check_matmul(1, 33, 23, type, seed++);
        check_matmul(1, 769, 775, type, seed++);
        check_matmul(3, 33, 23, type, seed++);
        check_matmul(4, 255, 1027, type, seed++);
        // 2 to 5 rows whose x outgrows L1 (one W row at a time, x's rows read again for each)
        check_matmul(3, 3072, 7, type, seed++);
        check_matmul(4, 3072, 9, type, seed++);
        check_matmul(5, 4099, 5, type, seed++);
        check_matmul(33, 3072, 3, type, seed++);
        check_matmul(5, 768, 769, type, seed++);
        // the packed GEMM: M ≥ 16, k blocks of 512 (+ a partial one), full and partial panels and row tiles
        check_matmul(16, 1025, 40, type, seed++);
        check_matmul(130, 768, 37, type, seed++);
    }
    for (int64_t M : {1, 2, 3, 4, 7, 15, 17})  // the integer GEMV reads W once for up to 15 rows
        for (int64_t K : {32, 96, 768, 3072})
            for (int64_t N : {1, 3, 5, 17}) check_matmul(M, K, N, dtype::q8_0, seed++);
    // the integer GEMM (M ≥ 16): full and partial row tiles (4) and column panels (8)
    for (int64_t M : {16, 19, 130})
        for (int64_t N : {1, 7, 8, 9, 40}) check_matmul(M, 96, N, dtype::q8_0, seed++);
    check_matmul(23, 3072, 17, dtype::q8_0, seed++);
}

TEST_CASE("the instance runs relaxed SIMD exactly where its runner expects it", "[kernels]") {
    // tests/browser/relaxed-simd.test.mjs runs this suite in Chromium from the plain and the relaxed .wasm and says
    // which through WF_EXPECT_RELAXED; native and Node runs expect nothing
    const char* want = std::getenv("WF_EXPECT_RELAXED");
    if (want) REQUIRE(wf::relaxed_simd() == (want[0] == '1'));
    // the int8 dot product's value outside its defined range says which instruction runs it (kernels/relaxed.h):
    // V8's sequence on x86 without AVX-VNNI, vpdpbusd or Arm's sdot; the integer tiles' form follows it
    const int probe = wf::relaxed_dot_probe();
    INFO("relaxed dot probe: " << probe);
    if (!wf::relaxed_simd()) REQUIRE(probe == 0);
    else REQUIRE((probe == 65534 || probe == 129540 || probe == -508));
    REQUIRE(wf::relaxed_pairs() == (probe == 65534));
    // the f32 tile's multiply-adds are relaxed SIMD's there (so check_matmul's f32, f16 and bf16 cases from 6 rows on
    // test them against the scalar twin); the GEMVs and the integer paths have none
    for (dtype type : {dtype::f32, dtype::f16, dtype::bf16}) {
        REQUIRE(wf::matmul_fuses(type, 6, 33) == wf::relaxed_simd());
        REQUIRE(wf::matmul_fuses(type, 130, 768) == wf::relaxed_simd());
        REQUIRE(wf::matmul_fuses(type, 4, 3072) == wf::relaxed_simd());  // x's rows outgrow L1: the tile
        REQUIRE_FALSE(wf::matmul_fuses(type, 1, 768));
        REQUIRE_FALSE(wf::matmul_fuses(type, 4, 768));
    }
    REQUIRE_FALSE(wf::matmul_fuses(dtype::q8_0, 130, 768));
    REQUIRE_FALSE(wf::matmul_fuses(dtype::q4_k, 130, 768));
}

TEST_CASE("q8_0, q4_0, q5_0, iq4_nl and q4_K rows grouped by 4 give the same results bit for bit as the rows as stored, on every path", "[kernels][matmul]") {
    // the layout the loader gives these matrices in wasm (dtype.h: group_rows); natively the q8_0 GEMV and the prefill
    // paths read a grouped matrix's rows back as stored, the GEMV of the other three (SSE4.1 here, SIMD128 in wasm) and
    // q8_0's in wasm read whole groups. Whole groups and a tail of 1–3 rows; thread ranges that cut a group (not the
    // loader's 8-column grain).
    uint32_t seed = 4100;
    for (dtype type : {dtype::q8_0, dtype::q4_0, dtype::q5_0, dtype::iq4_nl, dtype::q4_k})
        for (int64_t K : {32, 96, 256, 768})
            for (int64_t N : {4, 5, 7, 8, 17, 40}) {
                if (K % wf::traits(type).block != 0 || (K == 256) != (type == dtype::q4_k)) continue;  // q4_K: 256 and 768
                INFO("type=" << wf::dtype_name(type) << " K=" << K << " N=" << N);
                wft::stored_matrix plain(wft::random_floats(static_cast<size_t>(N * K), seed++, -0.5f, 0.5f), N, K, type);
                wft::stored_matrix grouped = plain;
                grouped.view.data = grouped.bytes.data();
                const int64_t rb = wf::row_bytes(type, K), last = rb * (N / 4 * 4 - 1);  // the last grouped row's first block
                // a scale that is inf (and for q8_0 one that is negative) in a group: left as it was; q4_K: its d or its dmin
                for (uint8_t bits : {uint8_t(0x7c), uint8_t(0x80)})
                for (int at : {1, 3}) {
                    if (at == 3 && type != dtype::q4_k) continue;
                    auto refused = plain.bytes;
                    refused[size_t(last + at)] |= bits;
                    const auto before = refused;
                    const bool negative = bits == 0x80;
                    const bool signed_scales = type != dtype::q8_0;  // max / −8 (q4_0), / −16 (q5_0): either sign
                    REQUIRE(wf::group_rows(type, refused.data(), N, K) == (negative && signed_scales));
                    if (!(negative && signed_scales)) REQUIRE(refused == before);
                }
                REQUIRE_FALSE(wf::group_rows(dtype::q4_1, grouped.bytes.data(), N, K / 32 * 32));
                REQUIRE(wf::group_rows(type, grouped.bytes.data(), N, K));
                grouped.view.grouped = true;
                REQUIRE(wf::grouped_rows(grouped.view) == N / 4 * 4);
                if (N >= 8) REQUIRE(grouped.bytes != plain.bytes);
                std::vector<float> a(static_cast<size_t>(K)), b(a);
                std::vector<uint8_t> buf(static_cast<size_t>(rb));
                for (int64_t n = 0; n < N; ++n) {
                    REQUIRE(std::memcmp(wf::row_as_stored(grouped.view, n, buf.data()), plain.view.row(n), size_t(rb)) == 0);
                    wf::dequantize_row(plain.view, n, a.data());
                    wf::dequantize_row(grouped.view, n, b.data());
                    REQUIRE(a == b);
                }
                const std::vector<int32_t> ids{int32_t(N - 1), 0, int32_t(N / 2)};
                std::vector<float> ea(static_cast<size_t>(3 * K)), eb(ea);
                wf::embed(plain.view, ids.data(), 3, ea.data());
                wf::embed(grouped.view, ids.data(), 3, eb.data());
                REQUIRE(ea == eb);
                for (int64_t M : {1, 2, 3, 15, 16, 19}) {
                    INFO("M=" << M);
                    const auto x = wft::random_floats(static_cast<size_t>(M * K), seed++);
                    const auto bias = wft::random_floats(static_cast<size_t>(N), seed++);
                    const auto run = [&](auto&& f, const wf::matrix_view& W, int64_t split) {
                        std::vector<float> y(static_cast<size_t>(M * N), NAN);
                        f(W, y.data(), 0, split), f(W, y.data(), split, N);
                        return y;
                    };
                    const auto mm = [&](const wf::matrix_view& W, float* y, int64_t n0, int64_t n1) {
                        if (n0 < n1) wf::matmul(x.data(), M, K, W, bias.data(), y, N, n0, n1);
                    };
                    const auto q7 = [&](const wf::matrix_view& W, float* y, int64_t n0, int64_t n1) {
                        if (n0 < n1) wf::matmul_q7(x.data(), M, K, W, bias.data(), y, N, n0, n1);
                    };
                    const auto rq7 = [&](const wf::matrix_view& W, float* y, int64_t n0, int64_t n1) {
                        if (n0 < n1) wf::ref::matmul_q7(x.data(), M, K, W, bias.data(), y, N, n0, n1);
                    };
                    const auto rmm = [&](const wf::matrix_view& W, float* y, int64_t n0, int64_t n1) {
                        if (n0 < n1) wf::ref::matmul(x.data(), M, K, W, bias.data(), y, N, n0, n1);
                    };
                    REQUIRE(run(mm, grouped.view, N) == run(mm, plain.view, N));
                    REQUIRE(run(rmm, grouped.view, N) == run(rmm, plain.view, N));
                    if (type != dtype::q4_k) {  // (q4_K does not re-block as q8_0)
                        if (M >= 16) REQUIRE(run(q7, grouped.view, N) == run(q7, plain.view, N));
                        REQUIRE(run(rq7, grouped.view, N) == run(rq7, plain.view, N));
                    }
                    // a range that starts inside a group: bit for bit the same where 4 rows stay together
                    if (M < 16 && N >= 8) REQUIRE(run(mm, grouped.view, 2) == run(mm, plain.view, 2));
                    if (type != dtype::q8_0) {
                        const auto quant = [&](bool int8) {
                            return [&, int8](const wf::matrix_view& W, float* y, int64_t n0, int64_t n1) {
                                if (n0 < n1) wf::gemv_quant_form(x.data(), M, K, W, bias.data(), y, N, n0, n1, int8);
                            };
                        };
                        const auto rquant = [&](const wf::matrix_view& W, float* y, int64_t n0, int64_t n1) {
                            if (n0 < n1) wf::ref::gemv_quant(x.data(), M, K, W, bias.data(), y, N, n0, n1);
                        };
                        for (bool int8 : {false, true}) {
                            REQUIRE(run(quant(int8), grouped.view, N) == run(quant(int8), plain.view, N));
                            REQUIRE(run(quant(int8), grouped.view, N / 2 + 1) == run(quant(int8), plain.view, N));
                        }
                        REQUIRE(run(rquant, grouped.view, N) == run(quant(false), plain.view, N));
                        const auto u7 = [&](const wf::matrix_view& W, float* y, int64_t n0, int64_t n1) {
                            if (n0 < n1) wf::matmul_u7(x.data(), M, K, W, bias.data(), y, N, n0, n1);
                        };
                        if (M >= 16 && type != dtype::iq4_nl) REQUIRE(run(u7, grouped.view, N) == run(u7, plain.view, N));  // iq4_nl's levels need 8 bits
                    }
                }
            }
}

TEST_CASE("matmul_q7 (relaxed SIMD's integer path) matches its scalar twin and f32 within 7-bit quantization", "[kernels][matmul]") {
    // in an instance with relaxed SIMD the tile is its int8 dot product, in both forms (the same integers: the same
    // values bit for bit); elsewhere the packed layout in scalar code
    INFO("relaxed SIMD: " << wf::relaxed_simd());
    uint32_t seed = 900;
    for (dtype type : {dtype::q8_0, dtype::q4_0, dtype::iq4_nl})
        for (int64_t M : {1, 4, 16, 19, 130})
            for (int64_t K : {32, 96, 768})
                for (int64_t N : {1, 7, 8, 9, 40}) {
                    if (type != dtype::q8_0 && (M == 19 || K == 96)) continue;
                    INFO("M=" << M << " K=" << K << " N=" << N << " type=" << wf::dtype_name(type));
                    auto x = wft::random_floats(static_cast<size_t>(M * K), seed++);
                    if (M == 19) std::fill(x.begin() + K, x.begin() + 2 * K, 0.0f);  // a zero row: d = 0
                    const auto bias = wft::random_floats(static_cast<size_t>(N), seed++);
                    wft::stored_matrix W(wft::random_floats(static_cast<size_t>(N * K), seed++, -0.5f, 0.5f), N, K, type);
                    std::vector<float> y(static_cast<size_t>(M * N), NAN), yt(y), yf(y), ya(y), yp(y), ys(y);
                    wf::matmul_q7(x.data(), M, K, W.view, bias.data(), y.data(), N, 0, N);
                    wf::matmul_q7(x.data(), M, K, W.view, bias.data(), ya.data(), N, 0, N, wf::relaxed_form::add);
                    wf::matmul_q7(x.data(), M, K, W.view, bias.data(), yp.data(), N, 0, N, wf::relaxed_form::pairs);
                    wf::matmul_q7(x.data(), M, K, W.view, bias.data(), ys.data(), N, 0, N, wf::relaxed_form::twin);
                    REQUIRE(std::memcmp(ya.data(), y.data(), y.size() * 4) == 0);
                    REQUIRE(std::memcmp(yp.data(), y.data(), y.size() * 4) == 0);
                    REQUIRE(std::memcmp(ys.data(), y.data(), y.size() * 4) == 0);
                    wf::ref::matmul_q7(x.data(), M, K, W.view, bias.data(), yt.data(), N, 0, N);
                    wf::ref::matmul(x.data(), M, K, W.view, bias.data(), yf.data(), N, 0, N);
                    std::vector<float> wrow(static_cast<size_t>(K));
                    for (int64_t n = 0; n < N; ++n) {
                        wf::dequantize_row(W.view, n, wrow.data());
                        for (int64_t m = 0; m < M; ++m) {
                            const double scale = abs_dot(x.data() + m * K, wrow.data(), K), got = y[size_t(m * N + n)];
                            REQUIRE(std::fabs(got - yt[size_t(m * N + n)]) <= 1e-6 * scale + 1e-6);
                            REQUIRE(std::fabs(got - yf[size_t(m * N + n)]) <= q8_activation_bound(x.data() + m * K, wrow.data(), K, 63) + 1e-5 * scale + 1e-6);
                        }
                    }
                }
}

TEST_CASE("matmul_u7 (relaxed SIMD's path for codes in 7 bits) computes the plain integer tile's values bit for bit", "[kernels][matmul]") {
    // in an instance with relaxed SIMD the tile is its int8 dot product, in both forms (the pair form's int16 sums at
    // every type's widest codes: u7_run), against its scalar twin; elsewhere matmul takes the plain integer tile
    // (gemm_q8, gemm_k), against which the twin is exact (natively too: matmul-q8.cpp compiles without contracted
    // multiply-adds)
    INFO("relaxed SIMD: " << wf::relaxed_simd());
    uint32_t seed = 1300;
    for (dtype type : {dtype::q4_0, dtype::q5_0, dtype::q4_1, dtype::q5_1, dtype::q3_k, dtype::q4_k, dtype::q5_k, dtype::q6_k}) {
        REQUIRE(wf::u7_computes(type));
        for (int64_t M : {16, 19, 37})
            for (int64_t K : {256, 768})
                for (int64_t N : {1, 7, 9, 23}) {
                    INFO("M=" << M << " K=" << K << " N=" << N << " type=" << wf::dtype_name(type));
                    auto x = wft::random_floats(static_cast<size_t>(M * K), seed++);
                    if (M == 19) std::fill(x.begin() + K, x.begin() + 2 * K, 0.0f);  // a zero row: d = 0
                    const auto bias = wft::random_floats(static_cast<size_t>(N), seed++);
                    wft::stored_matrix W(wft::random_floats(static_cast<size_t>(N * K), seed++, -0.5f, 0.5f), N, K, type);
                    std::vector<float> y(static_cast<size_t>(M * N), NAN), yt(y), yp(y), part(y), ya(y), ypr(y);
                    wf::matmul_u7(x.data(), M, K, W.view, bias.data(), y.data(), N, 0, N);
                    wf::matmul_u7(x.data(), M, K, W.view, bias.data(), yt.data(), N, 0, N, wf::relaxed_form::twin);
                    wf::matmul_u7(x.data(), M, K, W.view, bias.data(), ya.data(), N, 0, N, wf::relaxed_form::add);
                    wf::matmul_u7(x.data(), M, K, W.view, bias.data(), ypr.data(), N, 0, N, wf::relaxed_form::pairs);
                    wf::matmul_u7(x.data(), M, K, W.view, bias.data(), part.data(), N, N / 2, N);  // a thread's columns
                    wf::matmul(x.data(), M, K, W.view, bias.data(), yp.data(), N, 0, N);
                    // relaxed SIMD's tile where the instance runs it, else the plain one
                    REQUIRE(wf::matmul_takes_u7(type, M) == wf::relaxed_simd());
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t m = 0; m < M; ++m) {
                            const size_t i = size_t(m * N + n);
                            REQUIRE(std::isfinite(y[i]));
                            REQUIRE(std::memcmp(&y[i], &yt[i], 4) == 0);
                            REQUIRE(std::memcmp(&ya[i], &yt[i], 4) == 0);
                            REQUIRE(std::memcmp(&ypr[i], &yt[i], 4) == 0);
                            if (n >= N / 2) REQUIRE(std::memcmp(&part[i], &y[i], 4) == 0);
                            else REQUIRE(std::isnan(part[i]));
                            REQUIRE(std::memcmp(&yp[i], &y[i], 4) == 0);
                        }
                }
    }
    REQUIRE_FALSE(wf::u7_computes(dtype::q8_0));
    REQUIRE_FALSE(wf::u7_computes(dtype::iq4_nl));
    REQUIRE_FALSE(wf::u7_computes(dtype::q2_k));  // a minimum per 16: widened to f32 from 16 rows on
    wft::stored_matrix W8(wft::random_floats(32 * 64, 7), 32, 64, dtype::q8_0);
    std::vector<float> x(16 * 64, 1.0f), y(16 * 32);
    REQUIRE_THROWS_WITH(wf::matmul_u7(x.data(), 16, 64, W8.view, nullptr, y.data(), 32, 0, 32), Catch::Contains("Q8_0 codes do not fit in 7 bits"));
}

TEST_CASE("matmul writes only its column range, so threads can split the output", "[kernels][matmul]") {
    for (auto [M, type] : {std::pair{int64_t(1), dtype::f32}, {6, dtype::f32}, {21, dtype::f32}, {1, dtype::q8_0}, {6, dtype::q8_0}, {21, dtype::q8_0}}) {
        // the GEMV, the small-M tile, the packed GEMM; q8_0's integer GEMV (one row, several) and GEMM
        INFO("M=" << M << " " << wf::dtype_name(type));
        const int64_t K = type == dtype::q8_0 ? 64 : 33, N = 17;
        const auto x = wft::random_floats(static_cast<size_t>(M * K), 7);
        wft::stored_matrix W(wft::random_floats(static_cast<size_t>(N * K), 8), N, K, type);
        std::vector<float> y(static_cast<size_t>(M * N), -7.0f), full(static_cast<size_t>(M * N));
        wf::matmul(x.data(), M, K, W.view, nullptr, y.data(), N, 5, 11);
        wf::matmul(x.data(), M, K, W.view, nullptr, full.data(), N, 0, N);
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
                if (n >= 5 && n < 11) REQUIRE(y[size_t(m * N + n)] == full[size_t(m * N + n)]);
                else REQUIRE(y[size_t(m * N + n)] == -7.0f);
            }
    }
}

TEST_CASE("matmul in parts of x beyond L2 gives each row what the whole call gives it", "[kernels][matmul]") {
    // matmul_part_bytes lowered so that these small x are given to the f32 tile in parts (the engine's default makes
    // parts from 1.5 MB of x on): odd row counts, odd parts, strided x and y, a column range, bias, f16 weights
    struct restore {
        int64_t v = wf::matmul_part_bytes;
        ~restore() { wf::matmul_part_bytes = v; }
    } keep;
    for (auto [M, K, part] : {std::tuple{int64_t(37), int64_t(33), int64_t(1000)}, {64, 48, 777}, {29, 100, 1200}, {7, 40, 64}}) {
        for (dtype type : {dtype::f32, dtype::f16}) {
            INFO("M=" << M << " K=" << K << " part=" << part << " " << wf::dtype_name(type));
            const int64_t N = 19, ldx = K + 3, ldy = N + 2;
            const auto x = wft::random_floats(static_cast<size_t>(M * ldx), 9), bias = wft::random_floats(static_cast<size_t>(N), 10);
            wft::stored_matrix W(wft::random_floats(static_cast<size_t>(N * K), 11), N, K, type);
            std::vector<float> whole(static_cast<size_t>(M * ldy), -7.0f), parts = whole;
            wf::matmul_part_bytes = int64_t(1) << 40;
            wf::matmul(x.data(), M, ldx, W.view, bias.data(), whole.data(), ldy, 3, 17);
            wf::matmul_part_bytes = part;
            REQUIRE(M * K * 4 > part * 3 / 2);  // parts are made
            wf::matmul(x.data(), M, ldx, W.view, bias.data(), parts.data(), ldy, 3, 17);
            for (size_t i = 0; i < whole.size(); ++i) {
                if (parts[i] != whole[i]) FAIL("y[" << i / size_t(ldy) << "][" << i % size_t(ldy) << "] = " << parts[i] << " in parts, " << whole[i] << " whole");
            }
            // and the whole call is the tile's: its columns computed, the others untouched
            for (int64_t m = 0; m < M; ++m)
                for (int64_t n = 0; n < ldy; ++n) REQUIRE((n >= 3 && n < 17) == (whole[size_t(m * ldy + n)] != -7.0f));
        }
    }
}

TEST_CASE("f16 weights are widened exactly in registers, subnormals included", "[kernels][matmul]") {
    // Every finite half value appears once in a 62×1024 matrix; x = e_k picks out column k exactly.
    const int64_t N = 62, K = 1024;
    std::vector<uint16_t> bits;
    for (uint32_t h = 0; h < 65536; ++h)
        if ((h & 0x7c00) != 0x7c00) bits.push_back(uint16_t(h));
    REQUIRE(bits.size() == size_t(N * K));
    wf::matrix_view W{dtype::f16, N, K, bits.data()};
    std::vector<float> x(static_cast<size_t>(K), 0.0f), y(static_cast<size_t>(N));
    for (int64_t k = 0; k < K; ++k) {
        x[size_t(k)] = 1.0f;
        wf::matmul(x.data(), 1, K, W, nullptr, y.data(), N, 0, N);
        for (int64_t n = 0; n < N; ++n) {
            const float want = wf::f16_to_f32(bits[size_t(n * K + k)]);
            if (y[size_t(n)] != want) FAIL("half " << bits[size_t(n * K + k)] << " → " << y[size_t(n)] << ", want " << want);
        }
        x[size_t(k)] = 0.0f;
    }
}

TEST_CASE("row-wise kernels match their scalar twins", "[kernels]") {
    uint32_t seed = 1000;
    for (int64_t n : kSizes) {
        INFO("n=" << n);
        const auto x = wft::random_floats(static_cast<size_t>(3 * n), seed++, -4.0f, 4.0f);
        const auto g = wft::random_floats(static_cast<size_t>(n), seed++);
        const auto b = wft::random_floats(static_cast<size_t>(n), seed++);
        std::vector<float> y(x.size()), yr(x.size());
        wf::layer_norm(x.data(), 3, n, g.data(), b.data(), 1e-5f, y.data());
        wf::ref::layer_norm(x.data(), 3, n, g.data(), b.data(), 1e-5f, yr.data());
        for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(yr[i]).margin(1e-5).epsilon(1e-5));

        using act = void (*)(float*, int64_t);
        for (auto [simd, scalar] : {std::pair<act, act>{wf::gelu_erf, wf::ref::gelu_erf}, std::pair<act, act>{wf::gelu_tanh, wf::ref::gelu_tanh}}) {
            y = x;
            yr = x;
            simd(y.data(), int64_t(y.size()));
            scalar(yr.data(), int64_t(yr.size()));
            for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(yr[i]).margin(2e-6).epsilon(2e-6));
        }

        y = x;
        yr = x;
        wf::softmax(y.data(), n);
        wf::ref::softmax(yr.data(), n);
        for (int64_t i = 0; i < n; ++i) REQUIRE(y[size_t(i)] == Approx(yr[size_t(i)]).margin(1e-7).epsilon(1e-5));

        y = x;
        yr = x;
        wf::add(y.data(), g.data(), n);
        wf::ref::add(yr.data(), g.data(), n);
        wf::axpy(0.37f, b.data(), y.data() + n, n);
        wf::ref::axpy(0.37f, b.data(), yr.data() + n, n);
        wf::mul(y.data() + 2 * n, g.data(), n);
        wf::ref::mul(yr.data() + 2 * n, g.data(), n);
        for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(yr[i]).margin(1e-6).epsilon(1e-6));

        REQUIRE(wf::dot(x.data(), g.data(), n) == Approx(wf::ref::dot(x.data(), g.data(), n)).margin(1e-5 * double(n)));
    }
}

TEST_CASE("transpose matches its scalar twin at odd sizes and strides, touching nothing outside its block", "[kernels]") {
    uint32_t seed = 77;
    for (int64_t rows : {1, 3, 4, 5, 16, 19})
        for (int64_t cols : {1, 2, 4, 7, 8, 33}) {
            INFO("rows=" << rows << " cols=" << cols);
            const int64_t lds = cols + 3, ldd = rows + 5;
            const auto src = wft::random_floats(size_t(rows * lds), seed++);
            std::vector<float> d(size_t(cols * ldd + 1), -7.0f), dr = d;
            wf::transpose(src.data(), rows, cols, lds, d.data(), ldd);
            wf::ref::transpose(src.data(), rows, cols, lds, dr.data(), ldd);
            REQUIRE(d == dr);
            REQUIRE(d[size_t((cols - 1) * ldd + rows - 1)] == src[size_t((rows - 1) * lds + cols - 1)]);
        }
}

// The activations and softmax take their exponential from one polynomial valid on [−87, 88] and clamp their
// arguments to it (kernels/rowwise.cpp): across the whole range of inputs, past the clamps on both sides, they stay
// within the same tolerances of their twins; a masked score (−inf) weighs exactly 0 and a large one does not overflow.
TEST_CASE("activations and softmax match their twins beyond their exponential's clamps", "[kernels]") {
    std::vector<float> x;
    for (float v = -120.0f; v <= 120.0f; v += 0.0371f) x.push_back(v);  // every lane position sees every range
    for (float v : {-1e30f, -87.5f, -9.6f, -12.8f, -0.0f, 0.0f, 1e-30f, 12.8f, 9.6f, 87.5f, 1e30f}) x.push_back(v);
    const int64_t n = int64_t(x.size());
    using act = void (*)(float*, int64_t);
    for (auto [name, simd, scalar] : {std::tuple<const char*, act, act>{"gelu_erf", wf::gelu_erf, wf::ref::gelu_erf},
                                      std::tuple<const char*, act, act>{"gelu_tanh", wf::gelu_tanh, wf::ref::gelu_tanh}}) {
        std::vector<float> y = x, yr = x;
        simd(y.data(), n);
        scalar(yr.data(), n);
        for (int64_t i = 0; i < n; ++i) {
            INFO(name << "(" << x[size_t(i)] << ")");
            REQUIRE(y[size_t(i)] == Approx(yr[size_t(i)]).margin(2e-6).epsilon(2e-6));
        }
    }
    std::vector<float> up(x.size(), 0.75f), y = x, yr = x;
    wf::silu_mul(y.data(), up.data(), n);
    wf::ref::silu_mul(yr.data(), up.data(), n);
    for (int64_t i = 0; i < n; ++i) {
        INFO("silu(" << x[size_t(i)] << ")");
        REQUIRE(y[size_t(i)] == Approx(yr[size_t(i)]).margin(2e-6).epsilon(2e-6));
    }
    // softmax over scores spread wide (most far below the largest), with masked ones
    for (const float spread : {1.0f, 30.0f, 200.0f}) {
        std::vector<float> s(101);
        for (size_t j = 0; j < s.size(); ++j) s[j] = j % 7 == 3 ? -INFINITY : spread * std::sin(float(j) * 0.7f);
        std::vector<float> p = s, pr = s;
        wf::softmax(p.data(), int64_t(p.size()));
        wf::ref::softmax(pr.data(), int64_t(pr.size()));
        for (size_t j = 0; j < s.size(); ++j) {
            INFO("spread " << spread << ", score " << j << " = " << s[j]);
            if (j % 7 == 3) REQUIRE(p[j] == 0.0f);
            REQUIRE(p[j] == Approx(pr[j]).margin(1e-7).epsilon(1e-5));
        }
        REQUIRE(wf::log_sum_exp(s.data(), int64_t(s.size())) == Approx(wf::ref::log_sum_exp(s.data(), int64_t(s.size()))).margin(1e-6).epsilon(1e-7));
    }
}

TEST_CASE("decoder kernels (RMS norm, SiLU·up, rotary embedding) match their scalar twins", "[kernels]") {
    uint32_t seed = 3000;
    for (int64_t n : kSizes) {
        INFO("n=" << n);
        const auto x = wft::random_floats(static_cast<size_t>(3 * n), seed++, -4.0f, 4.0f);
        const auto g = wft::random_floats(static_cast<size_t>(n), seed++);
        std::vector<float> y(x.size()), yr(x.size());
        wf::rms_norm(x.data(), 3, n, g.data(), 1e-6f, y.data());
        wf::ref::rms_norm(x.data(), 3, n, g.data(), 1e-6f, yr.data());
        for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(yr[i]).margin(1e-5).epsilon(1e-5));
        y = x;
        yr = x;
        wf::silu_mul(y.data(), x.data() + n, 2 * n);
        wf::ref::silu_mul(yr.data(), x.data() + n, 2 * n);
        for (size_t i = 0; i < size_t(2 * n); ++i) REQUIRE(y[i] == Approx(yr[i]).margin(2e-6).epsilon(2e-6));
    }
    // rope: head sizes with and without a SIMD body, partial rotation, positions far from 0
    for (auto [H, D, R] : {std::tuple{3, 8, 8}, std::tuple{2, 64, 64}, std::tuple{4, 80, 32}, std::tuple{1, 6, 4}, std::tuple{5, 34, 34}}) {
        INFO("heads=" << H << " head_dim=" << D << " rot_dim=" << R);
        const int64_t rows = 7, ld = int64_t(H) * D + 3;
        const auto x = wft::random_floats(static_cast<size_t>(rows * ld), seed++, -2.0f, 2.0f);
        std::vector<int32_t> pos = {0, 1, 2, 17, 255, 4095, 32767};
        std::vector<float> inv_freq(size_t(R / 2));
        for (int i = 0; i < R / 2; ++i) inv_freq[size_t(i)] = float(std::pow(10000.0, -2.0 * i / R));
        for (bool neox : {true, false}) {
            std::vector<float> y = x, yr = x;
            wf::rope(y.data(), rows, ld, H, D, R, pos.data(), inv_freq.data(), neox);
            wf::ref::rope(yr.data(), rows, ld, H, D, R, pos.data(), inv_freq.data(), neox);
            for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(yr[i]).margin(1e-6).epsilon(1e-6));
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = int64_t(H) * D; c < ld; ++c) REQUIRE(y[size_t(r * ld + c)] == x[size_t(r * ld + c)]);  // past the heads: untouched
            for (int64_t c = 0; c < ld; ++c) REQUIRE(y[size_t(c)] == x[size_t(c)]);  // position 0: identity
        }
    }
}

TEST_CASE("rotary embedding: the normal layout on llama.cpp's permuted rows equals rotate_half on the originals; dot products see only distance", "[kernels]") {
    // llama.cpp's converter permutes each head's rows so that (i, i + D/2) become neighbours (2i, 2i + 1); rotating
    // the permuted vector in the normal layout must give the permuted result of rotating the original in NeoX's.
    const int H = 2, D = 16;
    const auto q = wft::random_floats(size_t(H * D), 77, -1.0f, 1.0f), k = wft::random_floats(size_t(H * D), 78, -1.0f, 1.0f);
    std::vector<float> inv_freq(D / 2);
    for (int i = 0; i < D / 2; ++i) inv_freq[size_t(i)] = float(std::pow(500000.0, -2.0 * i / D));
    auto permute = [&](const std::vector<float>& v) {
        std::vector<float> p(v.size());
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < D / 2; ++i) {
                p[size_t(h * D + 2 * i)] = v[size_t(h * D + i)];
                p[size_t(h * D + 2 * i + 1)] = v[size_t(h * D + D / 2 + i)];
            }
        return p;
    };
    const int32_t at = 1234;
    std::vector<float> neox = q, normal = permute(q);
    wf::rope(neox.data(), 1, H * D, H, D, D, &at, inv_freq.data(), true);
    wf::rope(normal.data(), 1, H * D, H, D, D, &at, inv_freq.data(), false);
    const auto expected = permute(neox);
    for (size_t i = 0; i < normal.size(); ++i) REQUIRE(normal[i] == expected[i]);
    // ⟨rope(q, m), rope(k, n)⟩ depends on m − n only
    auto score = [&](int32_t m, int32_t n) {
        std::vector<float> a = q, b = k;
        wf::rope(a.data(), 1, H * D, H, D, D, &m, inv_freq.data(), true);
        wf::rope(b.data(), 1, H * D, H, D, D, &n, inv_freq.data(), true);
        return wf::ref::dot(a.data(), b.data(), D);
    };
    REQUIRE(score(10, 3) == Approx(score(107, 100)).margin(1e-5));
    REQUIRE(score(10, 3) != Approx(score(10, 4)).margin(1e-3));
}

TEST_CASE("softmax survives huge, tied and fully masked inputs", "[kernels]") {
    std::vector<float> big = {1e30f, 1e30f, -1e30f, 0.0f, 1e30f};
    wf::softmax(big.data(), 5);
    REQUIRE(big[0] == Approx(1.0 / 3));
    REQUIRE(big[2] == 0.0f);
    std::vector<float> masked(9, -INFINITY);
    wf::softmax(masked.data(), 9);
    for (float v : masked) REQUIRE(v == 0.0f);
}

TEST_CASE("screen_bounds and indices_at_least match their scalar twins, with −inf (banned) rows, at odd sizes", "[kernels][head-screen]") {
    uint32_t seed = 7300;
    for (int64_t n : {0, 1, 3, 7, 17, 255, 1023, 50257}) {
        INFO("n=" << n);
        auto a = wft::random_floats(static_cast<size_t>(n), seed++, -20.0f, 20.0f);
        const auto err = wft::random_floats(static_cast<size_t>(n), seed++, 0.0f, 0.02f), norm = wft::random_floats(static_cast<size_t>(n), seed++, 0.5f, 2.0f);
        for (int64_t i = 0; i < n; i += 5) a[size_t(i)] = -INFINITY;  // excluded tokens
        std::vector<float> up(static_cast<size_t>(n)), up_ref(static_cast<size_t>(n));
        const float alpha = 7.5f, beta = 0.25f, c = 4.0f / (1 << 24);
        const float best = wf::screen_bounds(a.data(), err.data(), norm.data(), alpha, beta, c, up.data(), n);
        const float best_ref = wf::ref::screen_bounds(a.data(), err.data(), norm.data(), alpha, beta, c, up_ref.data(), n);
        // within a few roundings (either side may fuse a multiply-add)
        REQUIRE(best == Approx(best_ref).epsilon(1e-6).margin(1e-6));
        for (int64_t i = 0; i < n; ++i) {
            REQUIRE((std::isnan(up[size_t(i)]) ? std::isnan(up_ref[size_t(i)]) : std::fabs(up[size_t(i)] - up_ref[size_t(i)]) <= 1e-6f * (std::fabs(up_ref[size_t(i)]) + 1)));
            if (std::isfinite(a[size_t(i)])) {  // the interval holds a[i] and reaches no further than the bound
                REQUIRE(up[size_t(i)] >= a[size_t(i)]);
                REQUIRE(best >= a[size_t(i)] - (err[size_t(i)] * alpha + norm[size_t(i)] * beta) * 1.001f - 1e-5f);
            }
        }
        if (n == 0) REQUIRE(best == -INFINITY);
        // the rows whose upper bound reaches a threshold: at the best lower bound, at one that takes about half of
        // them, and with room for fewer indices than there are
        for (const float t : {best, 0.0f, 19.0f}) {
            for (const int64_t max : {n, n / 3}) {
                std::vector<int32_t> idx(static_cast<size_t>(max) + 1, -7), idx_ref(static_cast<size_t>(max) + 1, -7);
                const int64_t k = wf::indices_at_least(up.data(), n, t, idx.data(), max);
                REQUIRE(k == wf::ref::indices_at_least(up.data(), n, t, idx_ref.data(), max));
                REQUIRE(idx == idx_ref);
                REQUIRE(idx[size_t(max)] == -7);  // nothing written past max
                int64_t want = 0;
                for (int64_t i = 0; i < n; ++i) want += up[size_t(i)] >= t;
                REQUIRE(k == want);
            }
        }
    }
}

TEST_CASE("log_sum_exp matches its double twin, with NaN and −inf entries, at a vocabulary's size", "[kernels]") {
    uint32_t seed = 7100;
    for (int64_t n : {1, 3, 17, 255, 256, 257, 1023, 3072, 58101}) {
        INFO("n=" << n);
        auto x = wft::random_floats(static_cast<size_t>(n), seed++, -30.0f, 12.0f);
        REQUIRE(wf::log_sum_exp(x.data(), n) == Approx(wf::ref::log_sum_exp(x.data(), n)).margin(1e-6).epsilon(1e-7));
        // NaN counts as −inf, as does −inf itself (a banned token); the largest entry may be among the last few
        for (int64_t i = 0; i < n; i += 7) x[size_t(i)] = i % 2 ? NAN : -INFINITY;
        x[size_t(n - 1)] = 40.0f;
        const double got = wf::log_sum_exp(x.data(), n), want = wf::ref::log_sum_exp(x.data(), n);
        REQUIRE(std::isfinite(got));
        REQUIRE(got == Approx(want).margin(1e-6).epsilon(1e-7));
        REQUIRE(want >= 40.0);
    }
    std::vector<float> none = {-INFINITY, NAN, -INFINITY, -INFINITY, NAN};
    REQUIRE(wf::log_sum_exp(none.data(), 5) == -INFINITY);
    REQUIRE(wf::ref::log_sum_exp(none.data(), 5) == -INFINITY);
    const std::vector<float> equal(1000, 2.5f);  // log(1000·e^2.5)
    REQUIRE(wf::log_sum_exp(equal.data(), 1000) == Approx(2.5 + std::log(1000.0)).epsilon(1e-7));
}

TEST_CASE("argmax matches its scalar twin: the first of the largest, NaN as −inf, at odd and vocabulary sizes", "[kernels]") {
    uint32_t seed = 7300;
    for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 9, 17, 255, 1023, 50257, 58101}) {
        INFO("n=" << n);
        auto x = wft::random_floats(static_cast<size_t>(n), seed++, -30.0f, 12.0f);
        REQUIRE(wf::argmax(x.data(), n) == wf::ref::argmax(x.data(), n));
        // ties: the largest value again at a later index, NaN and −inf entries around them
        for (int64_t at : {n - 1, n / 2, int64_t(0)}) {
            auto y = x;
            for (int64_t i = 0; i < n; i += 5) y[size_t(i)] = i % 2 ? NAN : -INFINITY;
            y[size_t(at)] = 50.0f;
            y[size_t(n - 1 - (n - 1 - at) / 2)] = 50.0f;
            const int64_t got = wf::argmax(y.data(), n);
            REQUIRE(got == wf::ref::argmax(y.data(), n));
            REQUIRE(got == at);
        }
    }
    // +inf wins, the first of two; nothing but −inf and NaN: −1
    std::vector<float> inf = {1.0f, NAN, INFINITY, 2.0f, INFINITY, 0.0f, -INFINITY};
    REQUIRE(wf::argmax(inf.data(), 7) == 2);
    REQUIRE(wf::ref::argmax(inf.data(), 7) == 2);
    std::vector<float> none = {-INFINITY, NAN, -INFINITY, -INFINITY, NAN, NAN, -INFINITY, NAN, -INFINITY};
    for (int64_t n = 1; n <= 9; ++n) {
        REQUIRE(wf::argmax(none.data(), n) == -1);
        REQUIRE(wf::ref::argmax(none.data(), n) == -1);
    }
}

TEST_CASE("embedding gather widens every storage type", "[kernels]") {
    const int64_t V = 37, E = 64;
    const auto table = wft::random_floats(static_cast<size_t>(V * E), 3);
    const int32_t ids[] = {0, 36, 5, 5, 17};
    for (dtype type : {dtype::f32, dtype::f16, dtype::bf16, dtype::q8_0}) {
        wft::stored_matrix T(table, V, E, type);
        std::vector<float> out(static_cast<size_t>(5 * E));
        wf::embed(T.view, ids, 5, out.data());
        const double tol = type == dtype::f32 ? 0 : type == dtype::f16 ? 1e-3 : type == dtype::bf16 ? 8e-3 : 1.0 / 127;
        for (int i = 0; i < 5; ++i)
            for (int64_t e = 0; e < E; ++e) REQUIRE(std::fabs(out[size_t(i * E + e)] - table[size_t(ids[i] * E + e)]) <= tol);
    }
}

namespace {


bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

}  // namespace

TEST_CASE("q8_0 and q4_0 blocks quantize and dequantize bit for bit as ggml's reference, subnormal scales included", "[kernels][quants]") {
    for (dtype type : {dtype::q8_0, dtype::q4_0}) {
        const wft::quant_vectors v(type == dtype::q8_0 ? "q8_0" : "q4_0");
        INFO(wf::dtype_name(type));
        REQUIRE(v.ggml_type == wf::traits(type).ggml_type);
        const int64_t rb = wf::row_bytes(type, v.n);
        std::vector<uint8_t> q(static_cast<size_t>(rb));
        std::vector<float> back(v.n);
        for (uint32_t r = 0; r < v.rows; ++r) {
            INFO("row " << v.labels[r]);
            wf::traits(type).from_f32(v.input.data() + size_t(r) * v.n, q.data(), v.n);
            REQUIRE(std::memcmp(q.data(), v.quantized + r * rb, size_t(rb)) == 0);
            wf::traits(type).to_f32(v.quantized + r * rb, back.data(), v.n);
            for (uint32_t i = 0; i < v.n; ++i) REQUIRE(same_bits(back[i], v.dequantized[size_t(r) * v.n + i]));
        }
    }
}

TEST_CASE("matmul on ggml's q8_0 and q4_0 rows equals f32 matmul on their reference dequantization", "[kernels][quants]") {
    // W = the vector file's rows (normal, outliers, zeros, constant, tiny = subnormal scales, large, …), loaded the
    // way the engine computes them (q4_0 re-blocked as q8_0); every row-count path of matmul.
    REQUIRE(wf::matmul_quantizes_activations(dtype::q8_0, 5));
    for (const char* name : {"q8_0", "q4_0"}) {
        const wft::quant_vectors v(name);
        INFO(name);
        const int64_t N = v.rows, K = v.n;
        std::vector<uint8_t> w8(size_t(wf::row_bytes(dtype::q8_0, K) * N));
        if (std::string(name) == "q8_0") std::memcpy(w8.data(), v.quantized, w8.size());
        else wf::traits(dtype::q4_0).to_q8_0(v.quantized, w8.data(), N * K);
        const wf::matrix_view W{dtype::q8_0, N, K, w8.data()};
        const wf::matrix_view Wf{dtype::f32, N, K, v.dequantized.data()};
        for (int64_t M : {1, 2, 3, 5, 17}) {
            INFO("M=" << M);
            const auto x = wft::random_floats(size_t(M * K), uint32_t(M));
            std::vector<float> y(size_t(M * N), NAN), yr(size_t(M * N), NAN);
            wf::matmul(x.data(), M, K, W, nullptr, y.data(), N, 0, N);
            wf::ref::matmul(x.data(), M, K, Wf, nullptr, yr.data(), N, 0, N);
            for (int64_t n = 0; n < N; ++n)
                for (int64_t m = 0; m < M; ++m) {
                    INFO("row " << v.labels[size_t(n)]);
                    const float* wr = v.dequantized.data() + n * K;
                    const double scale = abs_dot(x.data() + m * K, wr, K), got = y[size_t(m * N + n)], want = yr[size_t(m * N + n)];
                    // q8_0 always runs on q8_0-quantized activations: their bound, and f32 rounding
                    const double bound = q8_activation_bound(x.data() + m * K, wr, K) + (1e-3 + 2e-6) * scale;
                    REQUIRE(std::isfinite(got));
                    REQUIRE(std::fabs(got - want) <= bound);
                    if (scale > 0) REQUIRE(got != 0.0);  // a flushed scale computes zeros
                }
        }
    }
}

TEST_CASE("q8_0 quantization rounds halves away from zero, as ggml's roundf", "[kernels][quants]") {
    // amax 127 gives d = 1 exactly, so x·(1/d) lands on the halves themselves
    std::vector<float> x(32, 0.0f);
    x[0] = 127.0f;
    const float halves[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -126.5f};
    const int8_t want[] = {1, 2, 3, -1, -2, -3, 127, -127};
    for (int i = 0; i < 8; ++i) x[size_t(1 + i)] = halves[i];
    for (auto* quantize : {&wf::quantize_q8_0, &wf::ref::quantize_q8_0}) {  // the SIMD kernel and its twin
        wf::block_q8_0 b;
        quantize(x.data(), 32, &b);
        REQUIRE(wf::f16_to_f32(b.d) == 1.0f);
        for (int i = 0; i < 8; ++i) {
            INFO("x = " << halves[i]);
            REQUIRE(int(b.q[1 + i]) == int(want[i]));
        }
    }
    // and the floats next to every half, either sign: 0.5 − 2^-25 is where adding a plain 0.5 and truncating goes wrong
    for (int k = 0; k < 127; ++k)
        for (float sign : {1.0f, -1.0f}) {
            std::vector<float> v(32, 0.0f);
            v[0] = 127.0f;
            float x = float(k) + 0.5f;
            for (int i = 0; i < 15; ++i) x = std::nextafter(x, -1.0f);  // from 15 floats below the half to 15 above
            for (int i = 1; i < 32; ++i, x = std::nextafter(x, 1e9f)) v[size_t(i)] = sign * x;
            wf::block_q8_0 got, ref;
            wf::quantize_q8_0(v.data(), 32, &got);
            wf::ref::quantize_q8_0(v.data(), 32, &ref);
            for (int i = 0; i < 32; ++i) {
                INFO("x = " << v[size_t(i)]);
                REQUIRE(int(got.q[i]) == int(std::lround(v[size_t(i)])));
                REQUIRE(int(got.q[i]) == int(ref.q[i]));
            }
        }
}

TEST_CASE("q8_0 and 7-bit quantization: the SIMD kernels equal their scalar twins bit for bit", "[kernels][quants]") {
    std::mt19937 rng(7);
    for (int64_t blocks : {1, 3, 12, 48}) {
        for (float scale : {1e-6f, 0.05f, 1.0f, 300.0f}) {
            std::normal_distribution<float> d(0.0f, scale);
            std::vector<float> x(size_t(blocks * 32));
            for (auto& v : x) v = d(rng);
            if (blocks == 3) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);  // an all-zero block: d = 0
            std::vector<wf::block_q8_0> a(static_cast<size_t>(blocks)), b(static_cast<size_t>(blocks));
            wf::quantize_q8_0(x.data(), blocks * 32, a.data());
            wf::ref::quantize_q8_0(x.data(), blocks * 32, b.data());
            INFO("blocks " << blocks << ", scale " << scale);
            REQUIRE(std::memcmp(a.data(), b.data(), a.size() * sizeof(wf::block_q8_0)) == 0);
            // the 7-bit quantization of relaxed SIMD's path likewise, in [−63, 63]
            std::vector<int8_t> qa(x.size()), qb(x.size());
            std::vector<float> da(static_cast<size_t>(blocks)), db(static_cast<size_t>(blocks));
            wf::quantize_q7(x.data(), blocks * 32, qa.data(), da.data());
            wf::ref::quantize_q7(x.data(), blocks * 32, qb.data(), db.data());
            REQUIRE(qa == qb);
            REQUIRE(da == db);
            REQUIRE(*std::max_element(qa.begin(), qa.end()) <= 63);
            REQUIRE(*std::min_element(qa.begin(), qa.end()) >= -63);
        }
    }
}
