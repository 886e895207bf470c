#include "nn/head-screen.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/kernels.h"
#include "kernels/parallel.h"
#include "nn/ops.h"

namespace wf {
namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kU = 1.0 / (1 << 24);  // f32's unit roundoff
constexpr double kUp = 1 + 1.0 / (1 << 20);  // a norm computed in double, rounded up to a float with room
constexpr double kUpBlock = 1 + 1.0 / (1 << 16);  // a sum of 32 squares in f32: at most 34u relative below the exact one
}  // namespace

std::unique_ptr<head_screen> head_screen::make(const linear& head) {
    const matrix_view& W = head.w;
    const int64_t V = W.n_rows, K = W.n_cols, nb = K / q8_block;
    if (!W.data || (W.type != dtype::f32 && W.type != dtype::f16 && W.type != dtype::bf16) || K % q8_block != 0 || V < min_rows) return nullptr;
    std::unique_ptr<head_screen> s(new head_screen(head));
    const int64_t row = nb * int64_t(sizeof(block_q8_0));
    s->data_.reset(new uint8_t[size_t(V * row)]);
    s->err_.resize(size_t(V));
    s->norm_.resize(size_t(V));
    // per row: the copy, ‖w − ŵ‖ (float per block of 32: within 34 units of rounding, covered by kUpBlock) and ‖ŵ‖
    // (d²·Σq², Σq² in integers); split across the engine's threads. A weight that is not finite makes ‖w − ŵ‖ so.
    parallel_for(V, 64, [&](int64_t r0, int64_t r1) {
        std::vector<float> w(static_cast<size_t>(K));
        for (int64_t r = r0; r < r1; ++r) {
            dequantize_row(W, r, w.data());
            auto* blocks = reinterpret_cast<block_q8_0*>(s->data_.get() + r * row);
            quantize_q8_0(w.data(), K, blocks);
            double err = 0, norm = 0;
            for (int64_t b = 0; b < nb; ++b) {
                const float d = f16_to_f32(blocks[b].d);
                float e = 0;
                int32_t qq = 0;
                for (int64_t j = 0; j < q8_block; ++j) {
                    const float v = w[size_t(b * q8_block + j)] - d * float(blocks[b].q[j]);  // d·q is exact in f32
                    e += v * v;
                    qq += int32_t(blocks[b].q[j]) * blocks[b].q[j];
                }
                err += e;
                norm += double(d) * d * qq;
            }
            s->err_[size_t(r)] = float(std::sqrt(err * kUpBlock) * kUp);
            s->norm_[size_t(r)] = float(std::sqrt(norm) * kUp);
        }
    });
    for (int64_t r = 0; r < V; ++r) {
        if (!std::isfinite(s->err_[size_t(r)])) return nullptr;
        s->norm_all_ = std::max(s->norm_all_, s->norm_[size_t(r)]);
    }
    s->q_ = {dtype::q8_0, V, K, s->data_.get()};
    if (group_rows_pays(dtype::q8_0)) s->q_.grouped = group_rows(dtype::q8_0, s->data_.get(), V, K);
    return s;
}

// ‖x‖ and ‖x − x̂‖ for x̂ as the approximate product quantizes x (q8_0: approximate() never lets matmul take its
// relaxed-SIMD tile, whose 7-bit activations left most rows in on heavy-tailed ones), then the bound's coefficients. By Cauchy–Schwarz,
//   |w·x − ŵ·x̂| = |(w − ŵ)·x + ŵ·(x − x̂)| ≤ ‖w − ŵ‖·‖x‖ + ‖ŵ‖·‖x − x̂‖,
// and each dot product's rounding is at most γ_n·Σ|w||x| ≤ γ_n·‖w‖·‖x‖ for n ≤ K + 8 roundings in a chain, whatever
// their order (the full layer's f32 tile; the q8_0 GEMV's per-block scaling and sums), ‖w‖ ≤ ‖ŵ‖ + ‖w − ŵ‖ and
// ‖x̂‖ ≤ ‖x‖ + ‖x − x̂‖; 2⁻¹⁰ of room covers bound()'s own float steps. Activations whose products could overflow
// count as not finite (the full layer takes them).
head_screen::activations head_screen::measure(const float* x) const {
    const int64_t K = q_.n_cols, nb = K / q8_block;
    activations m;
    double norm = 0, err = 0;
    for (int64_t k = 0; k < K; ++k) {
        m.finite = m.finite && std::isfinite(x[k]);
        norm += double(x[k]) * x[k];
    }
    if (!m.finite) return m;
    for (int64_t b = 0; b < nb; ++b) {  // block by block, as the product's quantizer does it
        const float* xb = x + b * q8_block;
        block_q8_0 blk;
        quantize_q8_0(xb, q8_block, &blk);
        const double d = f16_to_f32(blk.d);
        for (int64_t j = 0; j < q8_block; ++j) err += (xb[j] - d * blk.q[j]) * (xb[j] - d * blk.q[j]);
    }
    norm = std::sqrt(norm) * kUp, err = std::sqrt(err) * kUp;
    m.finite = double(norm_all_) * (2 * norm + err) < 1e36;
    const double n = double(K + 8), gamma = n * kU / (1 - n * kU), room = 1 + 1.0 / 1024;
    m.alpha = float(norm * (1 + gamma) * room);
    m.beta = float((err + gamma * (2 * norm + err)) * room);
    return m;
}

void head_screen::approximate(const float* x, int64_t n, std::vector<float>& work) const {
    const int64_t V = q_.n_rows, K = q_.n_cols;
    if (work.size() < size_t(n * V)) work.resize(size_t(n * V));
    // rows in parts that keep x in q8_0 (below the relaxed tile's 16 rows), each a read of the copy
    const int64_t part = matmul_takes_q7(dtype::q8_0, n) ? 15 : n;
    for (int64_t i = 0; i < n; i += part) apply(linear{q_, head_.b}, x + i * K, std::min(part, n - i), work.data() + i * V);
}

void head_screen::exact(const float* x, std::span<const float> a, std::span<float> s) const {
    const int64_t V = q_.n_rows, K = q_.n_cols;
    const activations m = measure(x);
    candidates_ = V;
    if (m.finite) {
        // the best lower bound, each row's upper bound (in s), and the rows whose upper bound reaches the best lower one
        const float best = screen_bounds(a.data(), err_.data(), norm_.data(), m.alpha, m.beta, kRound, s.data(), V);
        rows_.resize(size_t(V / 16));
        const int64_t n = indices_at_least(s.data(), V, best, rows_.data(), V / 16);
        if (n <= V / 16) {
            std::fill(s.begin(), s.begin() + V, -kInf);
            for (int64_t i = 0; i < n; ++i) matmul(x, 1, K, head_.w, head_.b, s.data(), V, rows_[size_t(i)], rows_[size_t(i)] + 1);
            candidates_ = n;
            return;
        }
    }
    apply(head_, x, 1, s.data());
}

}  // namespace wf
