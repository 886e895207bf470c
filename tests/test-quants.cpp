// llama.cpp's block types (kernels/quants.h): every type's blocks against the independent Python reference
// (tests/data/quants, tools/reference/ggml_quants.py), the integer GEMV against its scalar twin and against f32
// matmul on the reference dequantization, column ranges, hostile blocks, the loader's storage policy, and GPT-2
// models in GGUF with these types against the same model in F32.
//
// Tolerances:
//   dequantization, quantization, q8_K activations: bit for bit / byte for byte.
//   gemv_quant (SIMD) against ref::gemv_quant (scalar): bit for bit (same integer sums, same float operations).
//   matmul (M < 16: integer dot products on quantized activations x̂) against f32 matmul on the reference
//     dequantization w and the unquantized x:
//       |y − y_ref| ≤ Σ_k |x_k − x̂_k|·|w_k|                       (the activations' quantization, exactly)
//                   + (blocks + 8)·2^-23 · Σ_k |x̂_k|·(|w_k| + 2·max|w| of k's block)   (f32 rounding of the block
//                     terms and their sum; a block's term may be the difference of a scale part and a minimum part,
//                     each at most about max|w|·Σ|x̂| over the block)
//     and x̂ is within half a step of x: |x − x̂| ≤ max|x| of its block·(1/254 + 2^-11) (q8_0: the f16 rounding of
//     the step adds at most 2^-11 of max|x|) or ·(1/254 + 2^-22) (q8_K: a float step).
//   matmul (M ≥ 16: rows widened to f32, f32 activations): ≤ 2e-6·Σ|x·w| + 1e-6, as tests/test-kernels.cpp.
//   GPT-2 models (E = 256, 2 layers, random weights, logits of order 1–3): each type's logits against the same
//     model stored as the type's dequantized values in F32 (what the type computes, exactly): a prefill of 17 rows
//     (widened to f32) bit for bit (q8_0's, q4_0's, q5_0's and iq4_nl's prefill is integer too: ≤ 0.15); 5 rows and single-token decode (integer
//     paths) ≤ 0.15 — measured 0.037–0.072, the 8-bit activations' effect, as large as q8_0 weights' own (0.041);
//     against the unquantized model, each type within about twice its measured effect, and not equal.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>

#include "gguf-builder.h"
#include "helpers.h"
#include "kernels/quants.h"
#include "kernels/relaxed.h"
#include "models/registry.h"
#include "nn/head-screen.h"
#include "nn/weights.h"

using wf::dtype;

namespace {

// Every block type in the table (q8_0 included, for the shared tests).
const dtype kBlockTypes[] = {dtype::q4_0, dtype::q4_1, dtype::q5_0, dtype::q5_1, dtype::q8_0, dtype::iq4_nl,
                             dtype::q2_k, dtype::q3_k, dtype::q4_k, dtype::q5_k, dtype::q6_k};

std::string lower(const char* s) {
    std::string r(s);
    for (auto& c : r) c = char(std::tolower(static_cast<unsigned char>(c)));
    return r;
}


bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }
// Equal bits, or both NaN (a NaN's payload may differ between SIMD and scalar arithmetic).
bool same_value(float a, float b) { return same_bits(a, b) || (std::isnan(a) && std::isnan(b)); }

// The f16 fields (scales, minimums) of each type's block, by byte offset.
std::vector<int> half_fields(dtype t) {
    switch (t) {
    case dtype::q4_1:
    case dtype::q5_1:
    case dtype::q4_k:
    case dtype::q5_k: return {0, 2};
    case dtype::q2_k: return {80, 82};
    case dtype::q3_k: return {108};
    case dtype::q6_k: return {208};
    default: return {0};
    }
}

// A matrix of random blocks: every code bit random, the f16 fields random finite values of magnitude 2^-12 … 2^-1
// (either sign) — every code, scale code and sign combination a type can hold, not only those a quantizer writes.
std::vector<uint8_t> random_blocks(dtype t, int64_t rows, int64_t cols, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> b(size_t(wf::row_bytes(t, cols) * rows));
    for (auto& v : b) v = uint8_t(rng());
    const auto& k = wf::traits(t);
    std::uniform_real_distribution<float> mag(-12.0f, -1.0f);
    for (size_t at = 0; at < b.size(); at += size_t(k.block_bytes))
        for (int f : half_fields(t)) {
            const uint16_t h = wf::f32_to_f16((rng() & 1 ? -1.0f : 1.0f) * std::exp2(mag(rng)));
            std::memcpy(&b[at + size_t(f)], &h, 2);
        }
    return b;
}

// x̂: the activations as the integer path sees them (q8_0 for the 32-value types, q8_K for the K-quants:
// matmul_activation_block).
std::vector<float> quantized_activations(dtype t, const std::vector<float>& x, int64_t M, int64_t K) {
    std::vector<float> xq(size_t(M * K));
    for (int64_t m = 0; m < M; ++m) {
        if (wf::matmul_activation_block(t, M) == wf::qk_k) {
            std::vector<wf::block_q8_K> a(size_t(K / wf::qk_k));
            wf::quantize_q8_K(x.data() + m * K, K, a.data());
            for (int64_t k = 0; k < K; ++k) xq[size_t(m * K + k)] = a[size_t(k / wf::qk_k)].d * float(a[size_t(k / wf::qk_k)].qs[k % wf::qk_k]);
        } else {
            std::vector<wf::block_q8_0> a(size_t(K / 32));
            wf::ref::quantize_q8_0(x.data() + m * K, K, a.data());
            wf::dequantize_row({dtype::q8_0, 1, K, a.data()}, 0, xq.data() + m * K);
        }
    }
    return xq;
}

// matmul(x, W) against f32 matmul of x on W's reference dequantization (wdeq, N×K), with the bounds above.
void check_against_f32(const wf::matrix_view& W, const std::vector<float>& wdeq, int64_t M, uint32_t seed) {
    const int64_t N = W.n_rows, K = W.n_cols;
    INFO("type " << wf::dtype_name(W.type) << " M=" << M << " N=" << N << " K=" << K);
    const auto x = wft::random_floats(size_t(M * K), seed, -2.0f, 2.0f);
    const auto bias = wft::random_floats(size_t(N), seed + 1);
    std::vector<float> y(size_t(M * N), NAN), yr(size_t(M * N), NAN);
    wf::matmul(x.data(), M, K, W, bias.data(), y.data(), N, 0, N);
    const wf::matrix_view Wf{dtype::f32, N, K, wdeq.data()};
    wf::ref::matmul(x.data(), M, K, Wf, bias.data(), yr.data(), N, 0, N);
    // block types run in integers below 16 rows; q8_0 always, and from 16 rows on q4_0 / q5_0 / iq4_nl (re-blocked
    // as q8_0), q4_1 / q5_1 / q4_K / q5_K (codes and minimums per 32) and q3_K / q6_K (codes per 16) too
    const bool integer = wf::matmul_quantizes_activations(W.type, M);
    const auto xq = integer ? quantized_activations(W.type, x, M, K) : x;
    const int64_t blk = wf::traits(W.type).block;
    const int64_t qb = wf::matmul_activation_block(W.type, M) == wf::qk_k ? wf::qk_k : 32;  // the activations' block
    for (int64_t n = 0; n < N; ++n) {
        const float* w = wdeq.data() + n * K;
        for (int64_t m = 0; m < M; ++m) {
            const float* xm = x.data() + m * K;
            const float* xqm = xq.data() + m * K;
            double act = 0, prior = 0, mag = 0, plain = 0;
            for (int64_t k0 = 0; k0 < K; k0 += blk) {
                double wmax = 0;
                for (int64_t k = k0; k < k0 + blk; ++k) wmax = std::max(wmax, double(std::fabs(w[k])));
                for (int64_t k = k0; k < k0 + blk; ++k) {
                    act += std::fabs(double(xm[k]) - xqm[k]) * std::fabs(w[k]);
                    mag += std::fabs(xqm[k]) * (std::fabs(w[k]) + 2 * wmax);
                    plain += std::fabs(double(xm[k]) * w[k]);
                }
            }
            for (int64_t k0 = 0; k0 < K; k0 += qb) {  // the a-priori bound on the activations' quantization
                double xmax = 0, wsum = 0;
                for (int64_t k = k0; k < k0 + qb; ++k) xmax = std::max(xmax, double(std::fabs(xm[k]))), wsum += std::fabs(w[k]);
                prior += wsum * xmax * (1.0 / 254 + (qb == 32 ? 0x1p-11 : 0x1p-22));
            }
            const double got = y[size_t(m * N + n)], want = yr[size_t(m * N + n)];
            REQUIRE(std::isfinite(got));
            if (integer) {
                REQUIRE(act <= prior);
                // float terms: one per activation block, and the tile's minimums' term (one more per 32)
                const int64_t terms = K / qb + (M >= 16 && wf::traits(W.type).to_codes32 ? K / 32 : 0) +
                                      (M >= 16 && wf::traits(W.type).to_codes16 ? K / 16 : 0);
                REQUIRE(std::fabs(got - want) <= act + double(terms + 8) * 0x1p-23 * mag + 1e-30);
            } else {
                REQUIRE(std::fabs(got - want) <= 2e-6 * plain + 1e-6);
            }
        }
    }
}

// The GGUF of a GPT-2 (E = 256, F = 1024, 2 layers, 4 heads, vocabulary 301, context 32) with random weights;
// type_of(name) picks each matrix's type (0 = F32). `dequantized`: the same values stored as F32.
struct tiny_gpt2 {
    static constexpr int64_t E = 256, F = 1024, L = 2, V = 301, P = 32;
    std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> tensors;  // name → (rows, cols), values
    tiny_gpt2() {
        uint32_t seed = 9000;
        auto add = [&](const std::string& name, int64_t rows, int64_t cols, float scale) {
            tensors[name] = {{rows, cols}, wft::random_floats(size_t(rows * cols), seed++, -scale, scale)};
        };
        auto ones = [&](const std::string& name, int64_t n) {  // norm gains near 1
            auto v = wft::random_floats(size_t(n), seed++, 0.8f, 1.2f);
            tensors[name] = {{n, 1}, v};
        };
        add("token_embd.weight", V, E, 0.1f);
        add("position_embd.weight", P, E, 0.02f);
        ones("output_norm.weight", E);
        add("output_norm.bias", E, 1, 0.02f);
        for (int l = 0; l < L; ++l) {
            const std::string p = "blk." + std::to_string(l) + ".";
            ones(p + "attn_norm.weight", E);
            add(p + "attn_norm.bias", E, 1, 0.02f);
            add(p + "attn_qkv.weight", 3 * E, E, 0.1f);
            add(p + "attn_qkv.bias", 3 * E, 1, 0.02f);
            add(p + "attn_output.weight", E, E, 0.06f);
            add(p + "attn_output.bias", E, 1, 0.02f);
            ones(p + "ffn_norm.weight", E);
            add(p + "ffn_norm.bias", E, 1, 0.02f);
            add(p + "ffn_up.weight", F, E, 0.1f);
            add(p + "ffn_up.bias", F, 1, 0.02f);
            add(p + "ffn_down.weight", E, F, 0.05f);
            add(p + "ffn_down.bias", E, 1, 0.02f);
        }
    }
    // The bytes a model loaded with every matrix a view into its file owns: its vectors, as f32.
    int64_t vector_bytes() const {
        int64_t n = 0;
        for (const auto& [name, t] : tensors)
            if (t.first[1] == 1) n += t.first[0] * 4;
        return n;
    }
    template <class TypeOf>
    std::vector<uint8_t> gguf(TypeOf type_of, bool dequantized = false) const {
        wft::gguf_builder b;
        b.str("general.architecture", "gpt2");
        b.u32("gpt2.block_count", uint32_t(L));
        b.u32("gpt2.context_length", uint32_t(P));
        b.u32("gpt2.embedding_length", uint32_t(E));
        b.u32("gpt2.feed_forward_length", uint32_t(F));
        b.u32("gpt2.attention.head_count", 4);
        b.f32("gpt2.attention.layer_norm_epsilon", 1e-5f);
        for (const auto& [name, t] : tensors) {
            const int64_t rows = t.first[0], cols = t.first[1];
            const bool matrix = cols > 1;
            const uint32_t ggml = matrix ? type_of(name) : 0;
            std::vector<uint8_t> bytes;
            if (ggml == 0) {
                bytes.assign(reinterpret_cast<const uint8_t*>(t.second.data()), reinterpret_cast<const uint8_t*>(t.second.data() + t.second.size()));
            } else {
                const dtype dt = *wf::dtype_from_ggml(ggml);
                wft::stored_matrix sm(t.second, rows, cols, dt);
                bytes = sm.bytes;
                if (dequantized) {
                    std::vector<float> f(size_t(rows * cols));
                    for (int64_t r = 0; r < rows; ++r) wf::dequantize_row(sm.view, r, f.data() + r * cols);
                    bytes.assign(reinterpret_cast<const uint8_t*>(f.data()), reinterpret_cast<const uint8_t*>(f.data() + f.size()));
                }
            }
            const uint32_t stored = dequantized ? 0 : ggml;
            if (matrix) b.tensor(name, {cols, rows}, stored, bytes);
            else b.tensor(name, {rows}, 0, bytes);
        }
        return b.bytes();
    }
};

wf::loaded_model load_gguf(std::vector<uint8_t> bytes) {
    auto fs = std::make_shared<wf::file_set>();
    fs->add("model.gguf", std::move(bytes));
    return wf::load_model(fs);
}

// Logits of a 17-token prompt at every position (prefill: 17 rows, the f32 paths), then of 5 tokens at once (the
// integer paths by 3 rows) and 4 fed one at a time (decode).
struct run_logits {
    std::vector<float> prefill, decode;
};
run_logits logits(const wf::loaded_model& lm) {
    const std::vector<int32_t> prompt = {5, 17, 300, 42, 0, 123, 9, 8, 77, 200, 3, 14, 15, 92, 65, 35, 89}, chunk = {11, 12, 13, 14, 15},
                               more = {7, 250, 99, 1};
    auto* c = lm.m->as_causal_lm();
    REQUIRE(c != nullptr);
    auto state = c->new_state(tiny_gpt2::P);
    run_logits r;
    const auto l = c->forward(state, prompt, true);
    r.prefill.assign(l.begin(), l.end());
    const auto k = c->forward(state, chunk, true);
    r.decode.assign(k.begin(), k.end());
    for (int32_t id : more) {
        const auto d = c->forward(state, std::vector<int32_t>{id}, false);
        r.decode.insert(r.decode.end(), d.begin(), d.end());
    }
    return r;
}

}  // namespace

TEST_CASE("Every block type dequantizes bit for bit and quantizes byte for byte as ggml's reference", "[quants]") {
    for (dtype t : kBlockTypes) {
        const wf::dtype_traits& k = wf::traits(t);
        const wft::quant_vectors v(lower(k.name));
        INFO(k.name);
        REQUIRE(v.ggml_type == k.ggml_type);
        REQUIRE(v.block == uint32_t(k.block));
        REQUIRE(v.type_size == uint32_t(k.block_bytes));
        REQUIRE(wf::row_bytes(t, v.n) == v.row_bytes());
        REQUIRE(wf::dtype_from_ggml(k.ggml_type) == t);
        REQUIRE(wf::dtype_from_name(lower(k.name)) == t);
        REQUIRE(k.computed);
        std::vector<float> back(v.n);
        std::vector<uint8_t> q(size_t(v.row_bytes()));
        for (uint32_t r = 0; r < v.rows; ++r) {
            INFO("row " << v.labels[r]);
            const uint8_t* want = v.quantized + r * v.row_bytes();
            k.to_f32(want, back.data(), v.n);
            for (uint32_t i = 0; i < v.n; ++i) REQUIRE(same_bits(back[i], v.dequantized[size_t(r) * v.n + i]));
            k.from_f32(v.input.data() + size_t(r) * v.n, q.data(), v.n);
            REQUIRE(std::memcmp(q.data(), want, q.size()) == 0);
            if (k.to_q8_0) {  // exact re-blocking: the same floats through q8_0
                std::vector<uint8_t> q8(size_t(wf::row_bytes(dtype::q8_0, v.n)));
                k.to_q8_0(want, q8.data(), v.n);
                std::vector<float> via(v.n);
                wf::traits(dtype::q8_0).to_f32(q8.data(), via.data(), v.n);
                for (uint32_t i = 0; i < v.n; ++i) REQUIRE(same_bits(via[i], back[i]));
            }
        }
    }
    // the types with an exact q8_0 form, and only they
    for (dtype t : kBlockTypes) {
        INFO(wf::dtype_name(t));
        REQUIRE((wf::traits(t).to_q8_0 != nullptr) == (t == dtype::q4_0 || t == dtype::q5_0 || t == dtype::iq4_nl));
    }
}

TEST_CASE("q2_K, q4_K and q5_K quantize byte for byte with their trial scales in SIMD lanes as one at a time", "[quants]") {
    // make_qkx2_quants tries its scales side by side (kernels/quants.cpp); ref::scalar_trials is its scalar twin.
    // Rows of many shapes: uniform, normal-ish with outliers, all positive (min clipped to 0), constant runs, tiny
    uint32_t seed = 5100;
    const int64_t n = 4 * 256;
    for (dtype t : {dtype::q2_k, dtype::q4_k, dtype::q5_k})
        for (int kind = 0; kind < 6; ++kind) {
            INFO(wf::dtype_name(t) << " kind " << kind);
            std::vector<float> x = wft::random_floats(size_t(n), seed++, -1.0f, 1.0f);
            const auto y = wft::random_floats(size_t(n), seed++, 0.0f, 1.0f);
            for (int64_t i = 0; i < n; ++i) {
                if (kind == 1 && y[size_t(i)] > 0.97f) x[size_t(i)] *= 40.0f;
                if (kind == 2) x[size_t(i)] = std::fabs(x[size_t(i)]) + 0.5f;
                if (kind == 3 && i % 64 < 40) x[size_t(i)] = 0.25f;
                if (kind == 4) x[size_t(i)] *= 1e-30f;
                if (kind == 5) x[size_t(i)] = std::round(x[size_t(i)] * 3.0f) / 3.0f;  // few distinct values: ties
            }
            std::vector<uint8_t> lanes(size_t(wf::row_bytes(t, n))), one(lanes.size());
            wf::traits(t).from_f32(x.data(), lanes.data(), n);
            wf::ref::scalar_trials = true;
            wf::traits(t).from_f32(x.data(), one.data(), n);
            wf::ref::scalar_trials = false;
            REQUIRE(lanes == one);
        }
}

TEST_CASE("q8_K activations quantize byte for byte as ggml's quantize_row_q8_K_ref", "[quants]") {
    const wft::quant_vectors v("q8_k");
    REQUIRE(v.ggml_type == 15);
    REQUIRE(v.type_size == sizeof(wf::block_q8_K));
    std::vector<wf::block_q8_K> q(v.n / wf::qk_k);
    for (auto* quantize : {&wf::quantize_q8_K, &wf::ref::quantize_q8_K})  // the SIMD kernel and its twin
        for (uint32_t r = 0; r < v.rows; ++r) {
            INFO("row " << v.labels[r]);
            quantize(v.input.data() + size_t(r) * v.n, v.n, q.data());
            REQUIRE(std::memcmp(q.data(), v.quantized + r * v.row_bytes(), size_t(v.row_bytes())) == 0);
            for (uint32_t i = 0; i < v.n; ++i)  // and d·q is the reference's dequantization
                REQUIRE(same_bits(q[i / wf::qk_k].d * float(q[i / wf::qk_k].qs[i % wf::qk_k]), v.dequantized[size_t(r) * v.n + i]));
        }
}

TEST_CASE("q8_K quantization (SIMD) writes its scalar twin's bytes, on hostile rows too", "[quants][kernels]") {
    // ties in magnitude of either sign (the first one's sign gives d's), the largest value in every lane position,
    // codes that land on halves (round to even), all zeros, NaN (never the largest), ±inf, tiny and huge values
    uint32_t seed = 7700;
    const int64_t n = 3 * wf::qk_k;
    for (int kind = 0; kind < 9; ++kind)
        for (int rep = 0; rep < 24; ++rep) {
            INFO("kind " << kind << " rep " << rep);
            std::vector<float> x = wft::random_floats(size_t(n), seed++, -2.0f, 2.0f);
            const int64_t at = rep * 11 % n;
            if (kind == 1) x[size_t(at)] = 5.0f, x[size_t((at + 7) % n)] = -5.0f, x[size_t((at + 300) % n)] = 5.0f;  // ties
            if (kind == 2) x[size_t(at)] = -9.0f;
            if (kind == 3)  // x·(−127/max) on halves: max = 127 / 2 makes k + 0.5 from x = −(k + 0.5)/2
                for (int64_t i = 0; i < n; ++i) x[size_t(i)] = i % 97 == 0 ? 63.5f : float(int(x[size_t(i)] * 40.0f)) / 2.0f + 0.25f;
            if (kind == 4) std::fill(x.begin() + wf::qk_k, x.begin() + 2 * wf::qk_k, rep % 2 ? 0.0f : -0.0f);
            if (kind == 5) x[size_t(at)] = NAN, x[size_t((at + 1) % n)] = NAN;
            if (kind == 6) x[size_t(at)] = rep % 2 ? INFINITY : -INFINITY;
            if (kind == 7) for (float& v : x) v *= 1e-39f;  // subnormals
            if (kind == 8) for (float& v : x) v *= 1e37f;
            std::vector<wf::block_q8_K> a(size_t(n / wf::qk_k)), b(a.size());
            wf::quantize_q8_K(x.data(), n, a.data());
            wf::ref::quantize_q8_K(x.data(), n, b.data());
            for (size_t i = 0; i < a.size(); ++i) {
                REQUIRE(same_bits(a[i].d, b[i].d));
                REQUIRE(std::memcmp(a[i].qs, b[i].qs, sizeof a[i].qs) == 0);
                REQUIRE(std::memcmp(a[i].bsums, b[i].bsums, sizeof a[i].bsums) == 0);
            }
        }
}

// [kernels]: tests/browser/relaxed-simd.test.mjs runs it in Chromium too, where the relaxed-SIMD instance can take the
// int8 form (relaxed SIMD's dot product) — natively, SSE4.1 emulates that instruction. Both forms are checked here
// whichever the instance chose.
TEST_CASE("The K-quants' prefill tile computes their decode's values bit for bit, from random bytes", "[quants][matmul][kernels]") {
    // q3_K … q6_K from 16 rows on: integer sums over whole super-blocks on q8_K activations (the codes times their
    // whole-number scales as int16), then gemv_quant's float steps: the scalar twin of the GEMV, row by row, is the
    // reference. Random bytes reach every code and scale (q6_K's −128 scales: the int16 products' largest size), a zero
    // row of x (d = 0), whole panels of 8 columns and a tail, thread ranges that cut a panel.
    uint32_t seed = 9100;
    for (dtype t : {dtype::q3_k, dtype::q4_k, dtype::q5_k, dtype::q6_k})
        for (int64_t K : {256, 768, 2816})
            for (int64_t N : {1, 8, 13, 33})
                for (int64_t M : {16, 19, 37}) {
                    INFO(wf::dtype_name(t) << " M=" << M << " N=" << N << " K=" << K);
                    const auto bytes = random_blocks(t, N, K, seed++);
                    const wf::matrix_view W{t, N, K, bytes.data()};
                    auto x = wft::random_floats(size_t(M * K), seed++, -3.0f, 3.0f);
                    if (M == 19) std::fill(x.begin() + K, x.begin() + 2 * K, 0.0f);
                    if (M == 37) std::fill(x.begin() + 3 * K, x.begin() + 4 * K, 127.0f);  // every code 127 against any weight
                    const auto bias = wft::random_floats(size_t(N), seed++);
                    std::vector<float> y(size_t(M * N), NAN), yr(y), part(y);
                    wf::matmul(x.data(), M, K, W, bias.data(), y.data(), N, 0, N);
                    wf::matmul(x.data(), M, K, W, bias.data(), part.data(), N, N / 3, N);  // a thread's columns
                    wf::ref::gemv_quant(x.data(), M, K, W, bias.data(), yr.data(), N, 0, N);
                    for (int64_t m = 0; m < M; ++m)
                        for (int64_t n = 0; n < N; ++n) {
                            const size_t i = size_t(m * N + n);
                            INFO("m=" << m << " n=" << n);
                            REQUIRE(std::isfinite(y[i]));
                            REQUIRE(same_bits(y[i], yr[i]));
                            if (n >= N / 3) REQUIRE(same_bits(part[i], y[i]));
                            else REQUIRE(std::isnan(part[i]));
                        }
                }
}

TEST_CASE("The integer GEMV equals its scalar twin bit for bit on every block type, in both forms", "[quants][matmul][kernels]") {
    uint32_t seed = 1;
    INFO("relaxed SIMD: " << wf::relaxed_simd());
    for (dtype t : kBlockTypes) {
        if (!wf::gemv_quant_computes(t)) continue;  // q8_0 has its own kernels (tests/test-kernels.cpp)
        // the int8 form can be the instance's only where it runs relaxed SIMD, for these types (one row of x), and then
        // where that dot product is one instruction (kernels/relaxed.h), and for q5_0 always
        const bool int8 = t == dtype::q4_0 || t == dtype::q5_0 || t == dtype::q4_k || t == dtype::q5_k || t == dtype::q6_k;
        const bool chosen = wf::gemv_quant_int8(t);
        REQUIRE(chosen == (int8 && wf::relaxed_simd() && (t == dtype::q5_0 || wf::relaxed_dot_fused())));
        for (int64_t K : {256, 768, 2304})
            for (int64_t N : {1, 3, 4, 5, 17, 33})
                for (int64_t M : {1, 2, 3, 4, 7}) {
                    INFO(wf::dtype_name(t) << " M=" << M << " N=" << N << " K=" << K);
                    const auto bytes = random_blocks(t, N, K, seed++);
                    const wf::matrix_view W{t, N, K, bytes.data()};
                    const auto x = wft::random_floats(size_t(M * K), seed++, -3.0f, 3.0f);
                    const auto bias = wft::random_floats(size_t(N), seed++);
                    std::vector<float> y(size_t(M * N), NAN), y8(size_t(M * N), NAN), y16(size_t(M * N), NAN), yr(size_t(M * N), NAN);
                    wf::gemv_quant(x.data(), M, K, W, bias.data(), y.data(), N, 0, N);
                    wf::gemv_quant_form(x.data(), M, K, W, bias.data(), y8.data(), N, 0, N, true);
                    wf::gemv_quant_form(x.data(), M, K, W, bias.data(), y16.data(), N, 0, N, false);
                    wf::ref::gemv_quant(x.data(), M, K, W, bias.data(), yr.data(), N, 0, N);
                    for (size_t i = 0; i < y.size(); ++i) {
                        REQUIRE(std::isfinite(y[i]));
                        REQUIRE(same_bits(y[i], yr[i]));
                        REQUIRE(same_bits(y8[i], yr[i]));
                        REQUIRE(same_bits(y16[i], yr[i]));
                    }
                }
    }
}

TEST_CASE("matmul on every block type equals f32 matmul on the reference dequantization", "[quants][matmul]") {
    uint32_t seed = 500;
    for (dtype t : kBlockTypes) {
        // ggml's vector rows as W: normal, outliers, zeros, constant, subnormal scales, large, ties, mixed, positive
        const wft::quant_vectors v(lower(wf::dtype_name(t)));
        const wf::matrix_view Wv{t, v.rows, v.n, v.quantized};
        for (int64_t M : {1, 2, 3, 5, 17}) check_against_f32(Wv, v.dequantized, M, seed++);
        // random weights quantized by the type's own quantizer, and random blocks; odd N, K a multiple of 256
        for (auto [N, K] : {std::pair<int64_t, int64_t>{17, 768}, {5, 2304}, {33, 256}}) {
            const auto w = wft::random_floats(size_t(N * K), seed++, -0.5f, 0.5f);
            const wft::stored_matrix sm(w, N, K, t);
            const auto rb = random_blocks(t, N, K, seed++);
            for (const uint8_t* bytes : {sm.bytes.data(), rb.data()}) {
                const wf::matrix_view W{t, N, K, bytes};
                std::vector<float> wdeq(size_t(N * K));
                for (int64_t r = 0; r < N; ++r) wf::dequantize_row(W, r, wdeq.data() + r * K);
                for (int64_t M : {1, 2, 3, 4, 7, 16, 21}) check_against_f32(W, wdeq, M, seed++);
            }
        }
    }
}

TEST_CASE("The prefill tile's vector decoders equal the types' scalar codes, scales and minimums", "[quants][matmul]") {
    uint32_t seed = 900;
    // q4_K, q5_K, q6_K have vector decoders (the first check); for q3_K, q4_1, q5_1 prefill_codes is the scalar decoder
    // itself, and only the second (against ggml's reference values) tells anything about them
    for (dtype t : {dtype::q4_k, dtype::q5_k, dtype::q6_k, dtype::q3_k, dtype::q4_1, dtype::q5_1}) {
        INFO(wf::dtype_name(t));
        const auto& k = wf::traits(t);
        const bool per16 = k.to_codes16 != nullptr;
        REQUIRE((per16 || k.to_codes32));
        for (int64_t K : {256, 768, 2304}) {
            const auto bytes = random_blocks(t, 1, K, seed++);
            const int64_t ns = K / (per16 ? 16 : 32);
            std::vector<int8_t> q(size_t(K), 99), qr(size_t(K), -99);
            std::vector<float> d(size_t(ns), NAN), dr(size_t(ns), 0.0f), m(size_t(ns), NAN), mr(size_t(ns), 0.0f);
            wf::prefill_codes(t, bytes.data(), q.data(), d.data(), m.data(), K);
            if (per16) k.to_codes16(bytes.data(), qr.data(), dr.data(), K);
            else k.to_codes32(bytes.data(), qr.data(), dr.data(), mr.data(), K);
            REQUIRE(q == qr);
            for (int64_t i = 0; i < ns; ++i) {
                REQUIRE(same_bits(d[size_t(i)], dr[size_t(i)]));
                if (!per16) REQUIRE(same_bits(m[size_t(i)], mr[size_t(i)]));
            }
        }
        // the codes' values are ggml's: d·q + m (d·q per 16), in the dequantizer's float operations, equal its
        // reference dequantization of its vector rows bit for bit (tools/reference/ggml_quants.py)
        const wft::quant_vectors v(lower(wf::dtype_name(t)));
        const int64_t K = v.n, ns = K / (per16 ? 16 : 32);
        for (uint32_t r = 0; r < v.rows; ++r) {
            std::vector<int8_t> q(size_t(K), 0);
            std::vector<float> d(size_t(ns), NAN), m(size_t(ns), NAN);
            wf::prefill_codes(t, v.quantized + size_t(r) * wf::row_bytes(t, K), q.data(), d.data(), m.data(), K);
            for (int64_t e = 0; e < K; ++e) {
                const int64_t g = e / (per16 ? 16 : 32);
                // d·q rounded to float before the minimum is added, as the dequantizers do (volatile: g++ would fuse a
                // multiply-add here, README's build notes)
                const volatile float dq = d[size_t(g)] * float(q[size_t(e)]);
                const float value = per16 ? dq : dq + m[size_t(g)];
                REQUIRE(same_bits(value, v.dequantized[size_t(r) * size_t(K) + size_t(e)]));
            }
        }
    }
}

TEST_CASE("Block-type matmul writes only its column range, the same values as one call over all columns", "[quants][matmul]") {
    const int64_t N = 23, K = 512;
    for (dtype t : {dtype::q4_0, dtype::q5_1, dtype::iq4_nl, dtype::q4_k, dtype::q6_k, dtype::q3_k}) {
        const auto bytes = random_blocks(t, N, K, 77);
        const wf::matrix_view W{t, N, K, bytes.data()};
        for (int64_t M : {1, 3, 6, 21}) {  // the integer GEMV (one row, three, two passes of three), the packed GEMM
            INFO(wf::dtype_name(t) << " M=" << M);
            const auto x = wft::random_floats(size_t(M * K), uint32_t(M));
            std::vector<float> all(size_t(M * N)), parts(size_t(M * N), NAN);
            wf::matmul(x.data(), M, K, W, nullptr, all.data(), N, 0, N);
            // ranges as threads get them: not multiples of the 4-row groups
            for (auto [a, b] : {std::pair<int64_t, int64_t>{3, 10}, {10, 11}, {11, 23}, {0, 3}}) {
                std::vector<float> y(size_t(M * N), NAN);
                wf::matmul(x.data(), M, K, W, nullptr, y.data(), N, a, b);
                for (int64_t m = 0; m < M; ++m)
                    for (int64_t n = 0; n < N; ++n) {
                        const float got = y[size_t(m * N + n)];
                        if (n < a || n >= b) {
                            REQUIRE(std::isnan(got));
                        } else {
                            REQUIRE(same_bits(got, all[size_t(m * N + n)]));
                            parts[size_t(m * N + n)] = got;
                        }
                    }
            }
            for (size_t i = 0; i < parts.size(); ++i) REQUIRE(same_bits(parts[i], all[i]));
        }
    }
}

TEST_CASE("Blocks with NaN or infinite scales give non-finite outputs for their rows only, and nothing crashes", "[quants][matmul]") {
    const int64_t N = 9, K = 512;
    for (dtype t : kBlockTypes) {
        auto bytes = random_blocks(t, N, K, 31);
        const auto fields = half_fields(t);
        const int64_t rb = wf::row_bytes(t, K), bb = wf::traits(t).block_bytes;
        // row 2: an infinite scale in its second block; row 5: a NaN in the last f16 field of its first block;
        // row 7: every f16 field of every block NaN
        const uint16_t inf = 0x7c00, nan = 0x7e01;
        std::memcpy(&bytes[size_t(2 * rb + bb + fields[0])], &inf, 2);
        std::memcpy(&bytes[size_t(5 * rb + fields.back())], &nan, 2);
        for (int64_t at = 7 * rb; at < 8 * rb; at += bb)
            for (int f : fields) std::memcpy(&bytes[size_t(at + f)], &nan, 2);
        const wf::matrix_view W{t, N, K, bytes.data()};
        for (int64_t M : {1, 2, 5, 17}) {
            INFO(wf::dtype_name(t) << " M=" << M);
            const auto x = wft::random_floats(size_t(M * K), 3);
            std::vector<float> y(size_t(M * N), 0.0f), yr(size_t(M * N), 0.0f);
            wf::matmul(x.data(), M, K, W, nullptr, y.data(), N, 0, N);
            wf::ref::matmul(x.data(), M, K, W, nullptr, yr.data(), N, 0, N);
            for (int64_t m = 0; m < M; ++m)
                for (int64_t n = 0; n < N; ++n) {
                    INFO("row " << n);
                    const bool bad = n == 2 || n == 5 || n == 7;
                    REQUIRE(std::isfinite(y[size_t(m * N + n)]) == !bad);
                    REQUIRE(std::isfinite(yr[size_t(m * N + n)]) == !bad);
                }
            if (wf::gemv_quant_computes(t) && M < 16) {  // and the twin agrees there too
                wf::ref::gemv_quant(x.data(), M, K, W, nullptr, yr.data(), N, 0, N);
                for (size_t i = 0; i < y.size(); ++i) REQUIRE(same_value(y[i], yr[i]));
            }
        }
    }
}

TEST_CASE("The loader keeps every block type as stored: nothing is widened to f32", "[quants][nn]") {
    for (dtype t : kBlockTypes) {
        INFO(wf::dtype_name(t));
        const int64_t cols = wf::traits(t).block * 3;
        REQUIRE(wf::storage_plan::keep().target(t, cols) == t);
        REQUIRE(wf::storage_plan::widen_halves().target(t, cols) == t);  // dtype auto on a small model
        REQUIRE(wf::storage_plan::convert_all(dtype::q8_0).target(t, cols) == dtype::q8_0);
        REQUIRE(wf::storage_plan::convert_all(dtype::f32).target(t, cols) == dtype::f32);
    }
    // a row that is not whole q8_0 blocks keeps its own type when asked for q8_0
    REQUIRE(wf::storage_plan::convert_all(dtype::q8_0).target(dtype::f16, 48) == dtype::f16);
    REQUIRE(wf::dtype_option::parse("Q8_0").to == dtype::q8_0);
}

TEST_CASE("dtype conversion at load: every block type by ggml's quantizer, the vocabulary at q8_0, llama.cpp's fallbacks",
          "[quants][nn]") {
    // every type of the table is a conversion target, by its own name or transformers.js's
    for (dtype t : kBlockTypes) REQUIRE(wf::dtype_option::parse(wf::dtype_name(t)).to == t);
    REQUIRE(wf::dtype_option::parse("q4_k").to == dtype::q4_k);
    REQUIRE(wf::dtype_option::parse("q4").to == dtype::q4_0);
    REQUIRE_THROWS_WITH(wf::dtype_option::parse("q7_k"), Catch::Contains("dtype \"q7_k\" is not supported (use auto"));
    REQUIRE_THROWS_WITH(wf::dtype_option::parse("q4_k_m"), Catch::Contains("q4_k, q4_1, q4_0"));

    // one source: a 3 × 512 matrix, a 7 × 256 one (7: the vocabulary) and a 2 × 96 one (not whole 256-blocks)
    struct source : wft::memory_source {
        std::vector<std::vector<float>> data;
    } src;
    const std::pair<int64_t, int64_t> shapes[] = {{3, 512}, {7, 256}, {2, 96}};
    for (int i = 0; i < 3; ++i) src.data.push_back(wft::random_floats(size_t(shapes[i].first * shapes[i].second), 77 + i, -2.0f, 2.0f));
    for (int i = 0; i < 3; ++i)
        src.ts.push_back({"m" + std::to_string(i), "m.safetensors", dtype::f32, {shapes[i].first, shapes[i].second},
                          reinterpret_cast<const uint8_t*>(src.data[size_t(i)].data()), int64_t(src.data[size_t(i)].size() * 4)});
    for (dtype t : kBlockTypes) {
        INFO("dtype " << wf::dtype_name(t));
        const double bits = wf::traits(t).block_bytes * 8.0 / wf::traits(t).block;
        const wf::storage_plan plan = wf::storage_plan::convert_all(t, 7);
        wf::weight_store s(src, plan);
        const dtype vocab = bits < 6.5 ? dtype::q8_0 : t;
        const bool k_quant = wf::traits(t).block == 256;
        const dtype fallback = t == dtype::q2_k || t == dtype::q3_k ? dtype::iq4_nl
                               : t == dtype::q4_k                   ? dtype::q5_0
                               : t == dtype::q5_k                   ? dtype::q5_1
                               : t == dtype::q6_k                   ? dtype::q8_0
                                                                    : t;
        const dtype want[] = {t, vocab, fallback};
        for (int i = 0; i < 3; ++i) {
            const auto [rows, cols] = shapes[i];
            const wf::matrix_view m = s.matrix(src.ts[size_t(i)], rows, cols);
            REQUIRE(m.type == want[i]);
            REQUIRE(plan.target(dtype::f32, cols, rows) == want[i]);
            // the bytes are the type's quantizer's, row by row (its bytes are ggml's: the test above); q8_0 and q4_0
            // rows grouped by 4 where the build reads them faster (wasm: dtype.h), block by block
            REQUIRE(m.grouped == (rows >= 4 && wf::group_rows_pays(m.type)));
            std::vector<uint8_t> q(size_t(wf::row_bytes(m.type, cols)));
            for (int64_t r = 0; r < rows; ++r) {
                wf::traits(m.type).from_f32(src.data[size_t(i)].data() + r * cols, q.data(), cols);
                if (!m.grouped) {
                    REQUIRE(std::memcmp(q.data(), m.row(r), q.size()) == 0);
                    continue;
                }
                const int64_t bb = wf::traits(m.type).block_bytes;
                for (int64_t b = 0; b < cols / wf::q8_block; ++b) {
                    REQUIRE(std::memcmp(q.data() + bb * b, wf::block_scale(m, r, b), 2) == 0);
                    REQUIRE(std::memcmp(q.data() + bb * b + 2, wf::block_codes(m, r, b), size_t(bb - 2)) == 0);
                }
            }
        }
        if (k_quant) REQUIRE(fallback != t);
        // the memory estimate counts the same types
        wf::hparams hp;
        hp.n_vocab = 7;
        const int64_t want_bytes = 3 * wf::row_bytes(t, 512) + 7 * wf::row_bytes(vocab, 256) + 2 * wf::row_bytes(fallback, 96);
        REQUIRE(wf::estimate_memory(hp, 0, src, plan) >= want_bytes);
        REQUIRE(wf::estimate_memory(hp, 0, src, plan) < want_bytes + 4096);
    }
}

TEST_CASE("F32 rows convert to q8_0 as the scalar twin quantizes them block by block, from aligned and misaligned bytes", "[quants][nn]") {
    // 3 rows of 131 blocks; the same floats at a 4-byte boundary (read where they are) and 2 bytes past one (widened
    // into a line first)
    constexpr int64_t rows = 3, cols = 131 * wf::q8_block;
    struct source : wft::memory_source {
        std::vector<float> a;
        std::vector<uint8_t> b;
    } src;
    src.a = wft::random_floats(size_t(rows * cols), 91, -3.0f, 3.0f);
    for (int64_t i = 0; i < cols; i += 97) src.a[size_t(i)] *= 50.0f;  // an outlier now and then: a block's scale
    src.b.resize(src.a.size() * 4 + 2);
    std::memcpy(src.b.data() + 2, src.a.data(), src.a.size() * 4);
    src.ts.push_back({"a", "m.safetensors", dtype::f32, {rows, cols}, reinterpret_cast<const uint8_t*>(src.a.data()), int64_t(src.a.size() * 4)});
    src.ts.push_back({"b", "m.safetensors", dtype::f32, {rows, cols}, src.b.data() + 2, int64_t(src.a.size() * 4)});
    wf::weight_store s(src, wf::storage_plan::convert_all(dtype::q8_0));
    std::vector<wf::block_q8_0> want(size_t(cols / wf::q8_block));
    for (int t = 0; t < 2; ++t) {
        INFO((t ? "misaligned" : "aligned"));
        const wf::matrix_view m = s.matrix(src.ts[size_t(t)], rows, cols);
        REQUIRE(m.type == dtype::q8_0);
        REQUIRE_FALSE(m.grouped);
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t b = 0; b < cols / wf::q8_block; ++b) wf::ref::quantize_q8_0(src.a.data() + r * cols + b * wf::q8_block, wf::q8_block, &want[size_t(b)]);
            REQUIRE(std::memcmp(m.row(r), want.data(), want.size() * sizeof want[0]) == 0);
        }
    }
    // the type's row converter into a destination that is not aligned for blocks: the same bytes
    std::vector<uint8_t> odd(size_t(wf::row_bytes(dtype::q8_0, cols)) + 1);
    wf::traits(dtype::q8_0).from_f32(src.a.data(), odd.data() + 1, cols);
    REQUIRE(std::memcmp(odd.data() + 1, s.matrix(src.ts[0], rows, cols).row(0), odd.size() - 1) == 0);
}

TEST_CASE("Transposed weights (GPT-2's Conv1D) load as their transpose: f32, f16 widened, q8_0, odd sizes", "[quants][nn]") {
    // result rows × cols: 37 × 45 from f32 and from f16 (45 stored rows: two bands of 16 and a tail of 13), 37 × 96 to
    // q8_0 (whole blocks); the reference transposes element by element
    struct source : wft::memory_source {
        std::vector<float> a, c;
        std::vector<uint16_t> b;
    } src;
    src.a = wft::random_floats(size_t(45 * 37), 5, -2.0f, 2.0f);
    src.c = wft::random_floats(size_t(96 * 37), 6, -2.0f, 2.0f);
    for (float v : src.a) src.b.push_back(wf::f32_to_f16(v));
    src.ts.push_back({"a", "m.safetensors", dtype::f32, {45, 37}, reinterpret_cast<const uint8_t*>(src.a.data()), int64_t(src.a.size() * 4)});
    src.ts.push_back({"b", "m.safetensors", dtype::f16, {45, 37}, reinterpret_cast<const uint8_t*>(src.b.data()), int64_t(src.b.size() * 2)});
    src.ts.push_back({"c", "m.safetensors", dtype::f32, {96, 37}, reinterpret_cast<const uint8_t*>(src.c.data()), int64_t(src.c.size() * 4)});
    auto transposed = [](const std::vector<float>& v, int64_t rows, int64_t cols) {  // stored cols × rows → rows × cols
        std::vector<float> t(size_t(rows * cols));
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) t[size_t(r * cols + c)] = v[size_t(c * rows + r)];
        return t;
    };
    wf::weight_store f32(src, wf::storage_plan::convert_all(dtype::f32));
    for (const char* name : {"a", "b"}) {
        INFO(name);
        const wf::matrix_view m = f32.matrix(src.ts[name[0] == 'a' ? 0 : 1], 37, 45, true);
        REQUIRE(m.type == dtype::f32);
        std::vector<float> stored_f32(src.a.size());
        for (size_t i = 0; i < stored_f32.size(); ++i) stored_f32[i] = name[0] == 'a' ? src.a[i] : wf::f16_to_f32(src.b[i]);
        const std::vector<float> want = transposed(stored_f32, 37, 45);
        for (int64_t r = 0; r < 37; ++r) REQUIRE(std::memcmp(m.row(r), want.data() + r * 45, 45 * 4) == 0);
    }
    wf::weight_store q8(src, wf::storage_plan::convert_all(dtype::q8_0));
    const wf::matrix_view m = q8.matrix(src.ts[2], 37, 96, true, true, false);
    REQUIRE(m.type == dtype::q8_0);
    const std::vector<float> want = transposed(src.c, 37, 96);
    std::vector<uint8_t> q(size_t(wf::row_bytes(dtype::q8_0, 96)));
    for (int64_t r = 0; r < 37; ++r) {
        wf::traits(dtype::q8_0).from_f32(want.data() + r * 96, q.data(), 96);
        REQUIRE(std::memcmp(q.data(), m.row(r), q.size()) == 0);
    }
}

TEST_CASE("A K-quant GGUF tensor whose rows are not whole super-blocks is refused, naming it", "[quants][gguf]") {
    wft::gguf_builder b;
    b.str("general.architecture", "gpt2");
    b.tensor("blk.0.ffn_up.weight", {32, 4}, 12, std::vector<uint8_t>(144, 0));
    auto fs = std::make_shared<wf::file_set>();
    fs->add("model.gguf", b.bytes());
    REQUIRE_THROWS_WITH(wf::load_model(fs), Catch::Contains("blk.0.ffn_up.weight") && Catch::Contains("not a multiple of the Q4_K block of 256"));
}

TEST_CASE("GPT-2 from GGUF in every block type (and a Q4_K_M-like mix) computes the type's values", "[quants][gguf][models]") {
    const tiny_gpt2 model;
    const auto f32 = logits(load_gguf(model.gguf([](const std::string&) { return 0u; })));
    auto check = [&](const std::string& what, auto type_of, double quant_bound, bool q8_prefill = false) {
        INFO(what);
        const wf::loaded_model lm = load_gguf(model.gguf(type_of));
        // every matrix a view into the file, as stored: the model owns only its vectors (as f32)
        REQUIRE(lm.m->weight_bytes() == model.vector_bytes());
        REQUIRE(lm.m->borrows_file_bytes());
        const auto got = logits(lm);
        const auto exact = logits(load_gguf(model.gguf(type_of, true)));
        REQUIRE(got.prefill.size() == exact.prefill.size());
        REQUIRE(got.decode.size() == exact.decode.size());
        // what the type computes: the f32 paths to rounding, the integer paths to the activations' quantization
        const double pre = wft::max_abs_diff(got.prefill.data(), exact.prefill.data(), got.prefill.size());
        const double dec = wft::max_abs_diff(got.decode.data(), exact.decode.data(), got.decode.size());
        const double quant = wft::max_abs_diff(exact.decode.data(), f32.decode.data(), exact.decode.size());
        UNSCOPED_INFO("prefill " << pre << ", decode " << dec << ", quantization " << quant);
        if (q8_prefill) REQUIRE(pre <= 0.15);
        else REQUIRE(pre == 0);  // the same f32 values through the same f32 kernels
        REQUIRE(dec <= 0.15);
        REQUIRE(dec > 0);  // the decode rows did run on quantized activations
        // the type's own effect on the logits (|logits| ≈ 1–3 here), and really that type (not f32)
        REQUIRE(quant <= quant_bound);
        REQUIRE(quant > 0);
    };
    // measured effect of each type on these logits (of order 1–3), about doubled: Q8_0 0.041, Q6_K 0.15,
    // Q5_K / Q5_0 / Q5_1 0.27–0.35, Q4_K / Q4_1 / Q4_0 / IQ4_NL 0.53–0.72, Q3_K 1.10, Q2_K 2.06, the mix 0.55
    const std::pair<dtype, double> types[] = {{dtype::q8_0, 0.1}, {dtype::q6_k, 0.3},  {dtype::q5_k, 0.7}, {dtype::q5_0, 0.7},
                                              {dtype::q5_1, 0.7}, {dtype::q4_k, 1.5},  {dtype::q4_0, 1.5}, {dtype::q4_1, 1.5},
                                              {dtype::iq4_nl, 1.5}, {dtype::q3_k, 2.4}, {dtype::q2_k, 4.5}};
    for (auto [t, bound] : types) {
        const uint32_t g = wf::traits(t).ggml_type;
        check(wf::dtype_name(t), [g](const std::string&) { return g; }, bound, wf::matmul_quantizes_activations(t, 16));
    }
    // Q4_K_M as llama-quantize mixes it: Q4_K matrices, Q6_K for the (tied) output and embedding and half of the
    // ffn_down / attention value rows, a Q5_0 and a Q8_0 fallback
    check("Q4_K_M mix", [](const std::string& n) -> uint32_t {
        if (n == "token_embd.weight") return 14;
        if (n == "position_embd.weight") return 8;
        if (n == "blk.0.ffn_down.weight") return 14;
        if (n == "blk.1.ffn_down.weight") return 6;
        return 12;
    }, 1.1, true);  // its q4_K and q6_K matrices prefill on q8_K activations, its q5_0 and q8_0 ones on q8_0
}

TEST_CASE("GPT-2 converted at load to a block type equals the same model quantized into a GGUF file", "[quants][gguf][models]") {
    // dtype 'q4_k' (or 'q4_0', 'q5_k') on an F32 file: every matrix of the type, the tied embeddings / output layer
    // (301 rows: the vocabulary) at q8_0, the position table as stored — the file written that way by the test's
    // own quantization computes the same logits bit for bit
    const tiny_gpt2 model;
    const auto f32_file = model.gguf([](const std::string&) { return 0u; });
    const auto f32 = logits(load_gguf(f32_file));
    for (dtype t : {dtype::q4_k, dtype::q4_0, dtype::q5_k, dtype::q8_0}) {
        INFO("dtype " << wf::dtype_name(t));
        auto fs = std::make_shared<wf::file_set>();
        fs->add("model.gguf", f32_file);
        const wf::loaded_model lm = wf::load_model(fs, {wf::dtype_option::parse(wf::dtype_name(t))});
        const bool vocab_q8 = t != dtype::q8_0;  // below 6.5 bits per weight
        REQUIRE(lm.dtype == std::string(t == dtype::q4_k ? "q4_k" : t == dtype::q4_0 ? "q4_0" : t == dtype::q5_k ? "q5_k" : "q8_0") +
                                (vocab_q8 ? " (vocabulary matrices q8_0)" : ""));
        const uint32_t g = wf::traits(t).ggml_type;
        const auto want = logits(load_gguf(model.gguf([&](const std::string& n) -> uint32_t {
            if (n == "position_embd.weight") return 0;
            if (n == "token_embd.weight") return vocab_q8 ? 8 : g;
            return g;
        })));
        const auto got = logits(lm);
        REQUIRE(got.prefill == want.prefill);
        REQUIRE(got.decode == want.decode);
        REQUIRE(wft::max_abs_diff(got.decode.data(), f32.decode.data(), got.decode.size()) > 0);  // really quantized
    }
}

TEST_CASE("A GGUF's q8_0, q4_0, q5_0, iq4_nl and q4_K matrices grouped in the file's own bytes (files_writable) compute the same logits bit for bit", "[quants][gguf][models]") {
    // The JavaScript API hands each load its own copy of the file (load_options::files_writable): where grouped rows
    // read faster (wasm), the matrices kept as views into the file are grouped in place — the tied embeddings and
    // output layer (301 rows: 75 groups and one row as stored), the position table read a row at a time — with
    // nothing copied; the same file loaded without the flag is left as it is
    const tiny_gpt2 model;
    for (dtype t : {dtype::q8_0, dtype::q4_0, dtype::q5_0, dtype::iq4_nl, dtype::q4_k}) {
        INFO(wf::dtype_name(t));
        REQUIRE(wf::group_rows_layout(t));
        const uint32_t g = wf::traits(t).ggml_type;
        const auto file = model.gguf([g](const std::string&) { return g; });
        auto untouched = std::make_shared<wf::file_set>();
        untouched->add("model.gguf", file);
        const auto want = logits(wf::load_model(untouched));
        REQUIRE(std::memcmp(untouched->get("model.gguf")->data(), file.data(), file.size()) == 0);

        auto fs = std::make_shared<wf::file_set>();
        fs->add("model.gguf", file);
        wf::load_options o;
        o.files_writable = true;
        const wf::loaded_model lm = wf::load_model(fs, o);
        REQUIRE(lm.m->weight_bytes() == model.vector_bytes());  // every matrix still a view into the file
        REQUIRE(lm.m->borrows_file_bytes());
        const bool rewritten = std::memcmp(fs->get("model.gguf")->data(), file.data(), file.size()) != 0;
        REQUIRE(rewritten == wf::group_rows_pays(t));
        const auto got = logits(lm);
        REQUIRE(got.prefill == want.prefill);
        REQUIRE(got.decode == want.decode);
    }
}

TEST_CASE("weight_store groups a borrowed q8_0 / q4_0 / q5_0 / q4_K matrix in place only when the plan allows it, and every view of it reads its rows", "[quants][loaders]") {
    // One tensor of 13 rows (3 groups and a row as stored), asked for in different orders: grouped in place (where that
    // pays) when the first view may be grouped; a view as stored asked for afterwards gets the rows gathered back into
    // a copy; a view as stored handed out first keeps the bytes as they are for every later view
    struct one_tensor : wf::tensor_source {
        wf::raw_tensor t;
        const wf::raw_tensor* find(const std::string& n) const override { return n == t.name ? &t : nullptr; }
        std::vector<const wf::raw_tensor*> tensors() const override { return {&t}; }
    };
    constexpr int64_t rows = 13;
    for (dtype type : {dtype::q8_0, dtype::q4_0, dtype::q5_0, dtype::q4_k}) {
        INFO(wf::dtype_name(type));
        const int64_t cols = type == dtype::q4_k ? 512 : 96;
        const wft::stored_matrix original(wft::random_floats(size_t(rows * cols), 77, -1.0f, 1.0f), rows, cols, type);
        const int64_t rb = wf::row_bytes(type, cols);
        auto rows_match = [&](const wf::matrix_view& m) {
            std::vector<uint8_t> buf(static_cast<size_t>(rb));
            for (int64_t r = 0; r < rows; ++r)
                if (std::memcmp(wf::row_as_stored(m, r, buf.data()), original.view.row(r), size_t(rb)) != 0) return false;
            return true;
        };
        for (int order = 0; order < 3; ++order) {
            INFO("order " << order);
            std::vector<uint8_t> bytes = original.bytes;
            one_tensor src;
            src.t = {"w", "test", type, {rows, cols}, bytes.data(), int64_t(bytes.size()), true};
            wf::storage_plan plan = wf::storage_plan::keep();
            plan.rewrite_file_bytes = order != 2;
            wf::weight_store s(src, plan);
            const bool pays = wf::group_rows_pays(type);
            if (order == 0 || order == 2) {  // groupable first, then as stored
                const wf::matrix_view a = s.matrix(src.t, rows, cols);
                const wf::matrix_view b = s.matrix(src.t, rows, cols, false, true, false);
                REQUIRE(a.data == bytes.data());
                REQUIRE(a.grouped == (pays && order == 0));
                REQUIRE(b.grouped == false);
                REQUIRE((b.data == bytes.data()) == !a.grouped);  // a copy of its own where the bytes were grouped
                REQUIRE(rows_match(a));
                REQUIRE(rows_match(b));
                REQUIRE((bytes != original.bytes) == a.grouped);
                REQUIRE(s.owned_bytes() == (a.grouped ? rows * rb : 0));
            } else {  // as stored first: the bytes stay as they are
                const wf::matrix_view b = s.matrix(src.t, rows, cols, false, true, false);
                const wf::matrix_view a = s.matrix(src.t, rows, cols);
                REQUIRE((a.data == bytes.data() && b.data == bytes.data()));
                REQUIRE_FALSE((a.grouped || b.grouped));
                REQUIRE(bytes == original.bytes);
                REQUIRE(rows_match(a));
            }
        }
    }
}

// nn/head-screen.h: greedy's arg-max over an output layer from its q8_0 copy, the full rows computed only where the
// bound cannot rule them out. The bound must hold for every row (else a token could be missed), and the arg-max must
// be the full layer's: on random layers of odd row counts in f32, f16 and bf16, activations of several shapes (a
// heavy-tailed one), 1, 3 and 16 rows at once (16: the integer GEMM; under relaxed SIMD two parts below its 16), ties,
// excluded tokens (the top one too), one forced token, and every token excluded. Tagged [kernels], it runs in
// Chromium's relaxed-SIMD suite too (tests/browser/relaxed-simd.test.mjs), where the product's paths differ.
TEST_CASE("The output layer's screen picks the full layer's arg-max, within a bound that holds for every row", "[quants][kernels][head-screen]") {
    const int64_t V = 1203;
    for (const dtype t : {dtype::f32, dtype::f16, dtype::bf16})
        for (const int64_t K : {int64_t(96), int64_t(512)}) {
            INFO(wf::traits(t).name << " K " << K);
            auto w = wft::random_floats(size_t(V * K), 11 + uint32_t(K), -0.05f, 0.05f);
            for (int64_t j = 0; j < K; ++j) w[size_t(700 * K + j)] = w[size_t(40 * K + j)];  // rows 40 and 700 tie
            auto bias = wft::random_floats(size_t(V), 5, -0.5f, 0.5f);
            bias[700] = bias[40];
            const wft::stored_matrix W(w, V, K, t);
            const wf::linear head{W.view, bias.data()};
            const auto saved = wf::head_screen::min_rows;
            wf::head_screen::min_rows = 1000;
            const auto screen = wf::head_screen::make(head);
            wf::head_screen::min_rows = saved;
            REQUIRE(screen);
            CHECK(screen->copy().type == dtype::q8_0);
            std::vector<float> work, scores, full(size_t(16 * V)), approx(size_t(16 * V));
            for (int shape = 0; shape < 4; ++shape)
                for (const int64_t n : {int64_t(1), int64_t(3), int64_t(16)}) {
                    INFO("shape " << shape << ", " << n << " rows");
                    auto x = wft::random_floats(size_t(n * K), uint32_t(100 * shape + n), -2.0f, 2.0f);
                    if (shape == 1)  // heavy-tailed: a few large activations, as a layer norm's output has
                        for (size_t i = 0; i < x.size(); i += 37) x[i] *= 25.0f;
                    if (shape == 2)  // row 40 (and its twin 700) far ahead: the screen leaves one or two rows
                        for (int64_t i = 0; i < n; ++i)
                            for (int64_t j = 0; j < K; ++j) x[size_t(i * K + j)] = w[size_t(40 * K + j)] * 400.0f + x[size_t(i * K + j)] * 0.05f;
                    wf::matmul(x.data(), n, K, W.view, bias.data(), full.data(), V, 0, V);
                    screen->approximate(x.data(), n, work);  // as the engine computes it (in parts under relaxed SIMD)
                    std::copy_n(work.begin(), n * V, approx.begin());
                    for (int64_t i = 0; i < n; ++i) {
                        const auto m = screen->measure(x.data() + i * K);
                        REQUIRE(m.finite);
                        float worst = 0;  // the largest share of its bound a row's error takes
                        for (int64_t r = 0; r < V; ++r) {
                            const float a = approx[size_t(i * V + r)], l = full[size_t(i * V + r)], e = screen->bound(r, m, a);
                            worst = std::max(worst, std::fabs(l - a) / e);
                        }
                        CHECK(worst <= 1.0f);
                        CHECK(worst > 0.02f);  // and the bound is not vacuous
                    }
                    // the arg-max, with processors: none; the best token excluded; one forced; every token excluded
                    for (int proc = 0; proc < 4; ++proc) {
                        INFO("processor " << proc);
                        std::vector<int32_t> best(static_cast<size_t>(n));
                        for (int64_t i = 0; i < n; ++i) best[size_t(i)] = int32_t(wf::argmax(full.data() + i * V, V));
                        auto process = [&](int64_t i, std::span<float> s) {
                            if (proc == 1) s[size_t(best[size_t(i)])] = -INFINITY, s[size_t((i * 7) % V)] = -INFINITY;
                            if (proc == 2) {
                                std::fill(s.begin(), s.end(), -INFINITY);
                                s[size_t(V - 1 - i)] = 0.0f;
                            }
                            if (proc == 3) std::fill(s.begin(), s.end(), -INFINITY);
                        };
                        std::vector<int32_t> ids(size_t(n), -2);
                        int64_t computed = 0;
                        screen->approximate(x.data(), n, work);
                        scores.resize(size_t(V));
                        for (int64_t i = 0; i < n; ++i) {  // as seq2seq's greedy steps use it
                            const std::span<float> a(work.data() + i * V, size_t(V));
                            process(i, a);
                            screen->exact(x.data() + i * K, a, scores);
                            computed += screen->candidates();
                            process(i, scores);
                            ids[size_t(i)] = int32_t(wf::argmax(scores.data(), V));
                        }
                        for (int64_t i = 0; i < n; ++i) {
                            std::vector<float> s(full.begin() + i * V, full.begin() + (i + 1) * V);
                            process(i, s);
                            CHECK(ids[size_t(i)] == int32_t(wf::argmax(s.data(), V)));
                        }
                        if (shape == 2 && proc == 0) {
                            for (int64_t i = 0; i < n; ++i) CHECK(ids[size_t(i)] == 40);  // the tie: the lower index
                            CHECK(computed == 2 * n);                                      // 40 and 700, computed in full
                        }
                        if (proc == 0) CHECK(computed <= n * V / 16);  // most rows ruled out
                    }
                }
            // activations that are not finite take the full layer: the same arg-max (NaN as −inf)
            auto x = wft::random_floats(size_t(K), 3);
            x[5] = INFINITY;
            screen->approximate(x.data(), 1, work);
            screen->exact(x.data(), std::span<const float>(work.data(), size_t(V)), scores);
            wf::matmul(x.data(), 1, K, W.view, bias.data(), full.data(), V, 0, V);
            CHECK(std::memcmp(scores.data(), full.data(), size_t(V) * 4) == 0);
            CHECK(screen->candidates() == V);
        }
    // no screen: a block type's layer, K not a multiple of 32, too few rows, a weight that is not finite
    const auto saved = wf::head_screen::min_rows;
    wf::head_screen::min_rows = 100;
    auto w = wft::random_floats(size_t(200 * 64), 1);
    const wft::stored_matrix q8(w, 200, 64, dtype::q8_0), odd(w, 320, 40, dtype::f32), few(w, 99, 64, dtype::f32);
    CHECK_FALSE(wf::head_screen::make({q8.view, nullptr}));
    CHECK_FALSE(wf::head_screen::make({odd.view, nullptr}));
    CHECK_FALSE(wf::head_screen::make({few.view, nullptr}));
    w[1000] = NAN;
    const wft::stored_matrix nan(w, 200, 64, dtype::f32);
    CHECK_FALSE(wf::head_screen::make({nan.view, nullptr}));
    wf::head_screen::min_rows = saved;
}
