// Scalar twins of the SIMD kernels: the plain math, accumulated in double where a sum is long. They are the
// reference the SIMD kernels are tested against, and nothing else depends on them.
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"

namespace wf::ref {

void matmul(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
            int64_t n_begin, int64_t n_end) {
    std::vector<float> w(static_cast<size_t>(W.n_cols));
    for (int64_t n = n_begin; n < n_end; ++n) {
        dequantize_row(W, n, w.data());
        for (int64_t m = 0; m < M; ++m) {
            double s = bias ? bias[n] : 0.0;
            for (int64_t k = 0; k < W.n_cols; ++k) s += double(x[m * ldx + k]) * w[size_t(k)];
            y[m * ldy + n] = float(s);
        }
    }
}

void layer_norm(const float* x, int64_t M, int64_t n, const float* gamma, const float* beta, float eps, float* y) {
    for (int64_t m = 0; m < M; ++m) {
        const float* r = x + m * n;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < n; ++i) mean += r[i];
        mean /= double(n);
        for (int64_t i = 0; i < n; ++i) var += (r[i] - mean) * (r[i] - mean);
        var /= double(n);
        const double inv = 1.0 / std::sqrt(var + eps);
        for (int64_t i = 0; i < n; ++i) y[m * n + i] = float((r[i] - mean) * inv * gamma[i] + beta[i]);
    }
}

void rms_norm(const float* x, int64_t M, int64_t n, const float* gamma, float eps, float* y) {
    for (int64_t m = 0; m < M; ++m) {
        const float* r = x + m * n;
        double ss = 0;
        for (int64_t i = 0; i < n; ++i) ss += double(r[i]) * r[i];
        const double inv = 1.0 / std::sqrt(ss / double(n) + eps);
        for (int64_t i = 0; i < n; ++i) y[m * n + i] = float(r[i] * inv * gamma[i]);
    }
}

void silu_mul(float* gate, const float* up, int64_t n) {
    for (int64_t i = 0; i < n; ++i) gate[i] = float(double(gate[i]) / (1.0 + std::exp(-double(gate[i]))) * up[i]);
}

void rope(float* x, int64_t n_rows, int64_t ld, int n_head, int head_dim, int rot_dim, const int32_t* pos, const float* inv_freq, bool neox) {
    const int half = rot_dim / 2;
    for (int64_t r = 0; r < n_rows; ++r)
        for (int h = 0; h < n_head; ++h)
            for (int i = 0; i < half; ++i) {
                const double angle = float(pos[r]) * inv_freq[i];  // the f32 product, as PyTorch forms it
                float* v = x + r * ld + int64_t(h) * head_dim;
                float& a = v[neox ? i : 2 * i];
                float& b = v[neox ? i + half : 2 * i + 1];
                const double a0 = a, b0 = b;
                a = float(a0 * std::cos(angle) - b0 * std::sin(angle));
                b = float(b0 * std::cos(angle) + a0 * std::sin(angle));
            }
}

void gelu_erf(float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = float(0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0))));
}

void gelu_tanh(float* x, int64_t n) {
    const double c = std::sqrt(2.0 / M_PI);
    for (int64_t i = 0; i < n; ++i) {
        const double v = x[i];
        x[i] = float(0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v))));
    }
}

void softmax(float* x, int64_t n) {
    float mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, x[i]);
    if (mx == -INFINITY) {
        for (int64_t i = 0; i < n; ++i) x[i] = 0.0f;
        return;
    }
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(double(x[i]) - mx);
    for (int64_t i = 0; i < n; ++i) x[i] = float(std::exp(double(x[i]) - mx) / s);
}

float screen_bounds(const float* a, const float* err, const float* norm, float alpha, float beta, float c, float* upper, int64_t n) {
    float best = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
        const float e = (err[i] * alpha + norm[i] * beta) + c * std::fabs(a[i]);
        best = std::max(best, a[i] - e);
        upper[i] = a[i] + e;
    }
    return best;
}

int64_t indices_at_least(const float* x, int64_t n, float t, int32_t* idx, int64_t max) {
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i)
        if (x[i] >= t) {
            if (count < max) idx[count] = int32_t(i);
            ++count;
        }
    return count;
}

double log_sum_exp(const float* x, int64_t n) {
    double mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i)
        if (!std::isnan(x[i])) mx = std::max(mx, double(x[i]));
    if (mx == -INFINITY) return -INFINITY;
    double z = 0;
    for (int64_t i = 0; i < n; ++i)
        if (!std::isnan(x[i])) z += std::exp(double(x[i]) - mx);
    return mx + std::log(z);
}

int64_t argmax(const float* x, int64_t n) {
    int64_t best = -1;
    for (int64_t i = 0; i < n; ++i)
        if (x[i] > -INFINITY && (best < 0 || x[i] > x[best])) best = i;  // NaN: neither holds
    return best;
}

void add(float* y, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void mul(float* y, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] *= x[i];
}

void embed(const matrix_view& table, const int32_t* ids, int64_t n_ids, float* out) {
    for (int64_t i = 0; i < n_ids; ++i) dequantize_row(table, ids[i], out + i * table.n_cols);
}

float dot(const float* a, const float* b, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(a[i]) * b[i];
    return float(s);
}

void axpy(float alpha, const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void transpose(const float* src, int64_t rows, int64_t cols, int64_t lds, float* dst, int64_t ldd) {
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) dst[c * ldd + r] = src[r * lds + c];
}

void quantize_q8_0(const float* x, int64_t n, block_q8_0* out) {
    for (int64_t b = 0; b < n / q8_block; ++b) {
        const float* xb = x + b * q8_block;
        float amax = 0.0f;
        for (int i = 0; i < q8_block; ++i) amax = std::fmax(amax, std::fabs(xb[i]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        out[b].d = f32_to_f16(d);
        for (int i = 0; i < q8_block; ++i) out[b].q[i] = int8_t(std::lround(xb[i] * id));
    }
}

void quantize_q7(const float* x, int64_t n, int8_t* q, float* d) {
    for (int64_t b = 0; b < n / q8_block; ++b) {
        const float* xb = x + b * q8_block;
        float amax = 0.0f;
        for (int i = 0; i < q8_block; ++i) amax = std::fmax(amax, std::fabs(xb[i]));
        d[b] = amax / 63.0f;
        const float id = d[b] != 0.0f ? 1.0f / d[b] : 0.0f;
        for (int i = 0; i < q8_block; ++i) q[b * q8_block + i] = int8_t(std::lround(xb[i] * id));
    }
}

void matmul_q7(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
               int64_t n_begin, int64_t n_end) {
    const int64_t K = W.n_cols, nb = K / q8_block;
    std::vector<int8_t> xq(size_t(M * K));
    std::vector<float> xd(size_t(M * nb));
    for (int64_t m = 0; m < M; ++m) quantize_q7(x + m * ldx, K, xq.data() + m * K, xd.data() + m * nb);
    std::vector<block_q8_0> row(static_cast<size_t>(nb));
    for (int64_t n = n_begin; n < n_end; ++n) {
        const uint8_t* r = row_as_stored(W, n);
        if (W.type == dtype::q8_0) std::memcpy(row.data(), r, size_t(row_bytes(W.type, K)));
        else traits(W.type).to_q8_0(r, reinterpret_cast<uint8_t*>(row.data()), K);
        for (int64_t m = 0; m < M; ++m) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t s = 0;
                for (int i = 0; i < q8_block; ++i) s += int32_t(row[size_t(b)].q[i]) * xq[size_t(m * K + b * q8_block + i)];
                acc += float(s) * (f16_to_f32(row[size_t(b)].d) * xd[size_t(m * nb + b)]);
            }
            y[m * ldy + n] = acc + (bias ? bias[n] : 0.0f);
        }
    }
}

}  // namespace wf::ref
