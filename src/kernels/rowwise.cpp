// Row-wise SIMD kernels (xsimd): layer norm, RMS norm, GELU, SiLU·up, rotary embedding, softmax, add, embedding
// gather, dot, axpy, and the loader's transpose.
#include <cmath>
#include <vector>
#include "kernels/cold.h"
#include "kernels/simd.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/kernels.h"
#include "kernels/quants.h"

namespace wf {
namespace {

using B = xsimd::batch<float>;
constexpr int64_t W = int64_t(B::size);

inline float hmax(B v) {
    alignas(64) float t[W];
    v.store_aligned(t);
    float m = t[0];
    for (int64_t i = 1; i < W; ++i) m = std::fmax(m, t[i]);
    return m;
}

// xsimd::max(a, b): a > b ? a : b, so b where either is NaN. In wasm f32x4.pmax(b, a), the same lanes in one instruction
// (xsimd's comes through Emscripten's SSE shim as a compare and a bit select): softmax's maximum, softmax 1.47 →
// 1.22–1.28 ns a value (`wf-bench-kernels activations`, Node).
inline B vmax(B a, B b) {
#if defined(__wasm_simd128__)
    return B(__m128(wasm_f32x4_pmax(v128_t(__m128(b)), v128_t(__m128(a)))));
#else
    return xsimd::max(a, b);
#endif
}

// a clamped to [lo, hi], NaN kept. In wasm f32x4.pmax / pmin, one instruction each in V8; xsimd's max and min come
// through Emscripten's SSE shim as a compare and a bit select each, with which GELU erf measured ~15 % slower
// (`wf-bench-kernels activations`). Natively maxps / minps, which return their second operand, a, when it is NaN.
inline B clamp(B a, float lo, float hi) {
#if defined(__wasm_simd128__)
    return B(__m128(wasm_f32x4_pmin(wasm_f32x4_pmax(v128_t(__m128(a)), wasm_f32x4_splat(lo)), wasm_f32x4_splat(hi))));
#else
    return xsimd::min(B(hi), xsimd::max(B(lo), a));
#endif
}

// e^a with a clamped to [−87, 88], where 2^k below stays a normal float: a = k·ln 2 + r, |r| ≤ ln 2 / 2 (ln 2 in two
// parts, Cody and Waite), e^r by its Taylor series to r⁶ (relative error ≤ 1.2e-7 there), times 2^k built in the
// exponent bits. k is rounded by adding 1.5·2²³ (the float's low bits are then k, as quantize_block rounds) — in wasm,
// V8 turns nearest and i32x4.trunc_sat into 6 instructions. NaN stays NaN. For the activations (GELU, SiLU), which
// need none of xsimd::exp's limits and selects (their quotients are the same beyond the clamp), and softmax's
// e^(x − max) (exp_nonpositive).
inline B exp_clamped(B a) {
    using I = xsimd::batch<int32_t>;
    a = clamp(a, -87.0f, 88.0f);
    const B shifted = xsimd::fma(a, B(1.44269504f), B(12582912.0f));  // 1.5·2²³ + k
    const B k = shifted - B(12582912.0f);
    const B r = (a - k * B(0.693359375f)) - k * B(-2.12194440e-4f);
    B p = xsimd::fma(B(1.0f / 720), r, B(1.0f / 120));
    p = xsimd::fma(p, r, B(1.0f / 24));
    p = xsimd::fma(p, r, B(1.0f / 6));
    p = xsimd::fma(p, r, B(0.5f));
    p = xsimd::fma(p, r, B(1.0f));
    p = xsimd::fma(p, r, B(1.0f));
    return p * xsimd::bitwise_cast<B>((xsimd::bitwise_cast<I>(shifted) + I(127 - 0x4B400000)) << 23);
}

// e^a for a ≤ 0 (softmax's x − max): exactly 0 below −87 (e^−87 ≈ 1.6e-38; −inf, a masked score, gives 0 as the
// attention kernels require).
inline B exp_nonpositive(B a) { return xsimd::select(a < B(-87.0f), B(0.0f), exp_clamped(a)); }

}  // namespace

void layer_norm(const float* x, int64_t M, int64_t n, const float* gamma, const float* beta, float eps, float* y) {
    for (int64_t m = 0; m < M; ++m) {
        const float* r = x + m * n;
        float* o = y + m * n;
        B s(0.0f);
        int64_t i = 0;
        for (; i + W <= n; i += W) s += B::load_unaligned(r + i);
        float sum = xsimd::hadd(s);
        for (; i < n; ++i) sum += r[i];
        const float mean = sum / float(n);
        B v(0.0f);
        i = 0;
        for (; i + W <= n; i += W) {
            const B d = B::load_unaligned(r + i) - B(mean);
            v = xsimd::fma(d, d, v);
        }
        float var = xsimd::hadd(v);
        for (; i < n; ++i) var += (r[i] - mean) * (r[i] - mean);
        const float inv = 1.0f / std::sqrt(var / float(n) + eps);
        i = 0;
        for (; i + W <= n; i += W) {
            const B d = (B::load_unaligned(r + i) - B(mean)) * B(inv);
            xsimd::fma(d, B::load_unaligned(gamma + i), B::load_unaligned(beta + i)).store_unaligned(o + i);
        }
        for (; i < n; ++i) o[i] = (r[i] - mean) * inv * gamma[i] + beta[i];
    }
}

void rms_norm(const float* x, int64_t M, int64_t n, const float* gamma, float eps, float* y) {
    for (int64_t m = 0; m < M; ++m) {
        const float* r = x + m * n;
        float* o = y + m * n;
        B s(0.0f);
        int64_t i = 0;
        for (; i + W <= n; i += W) {
            const B v = B::load_unaligned(r + i);
            s = xsimd::fma(v, v, s);
        }
        float ss = xsimd::hadd(s);
        for (; i < n; ++i) ss += r[i] * r[i];
        const float inv = 1.0f / std::sqrt(ss / float(n) + eps);
        i = 0;
        for (; i + W <= n; i += W) (B::load_unaligned(r + i) * B(inv) * B::load_unaligned(gamma + i)).store_unaligned(o + i);
        for (; i < n; ++i) o[i] = r[i] * inv * gamma[i];
    }
}

void silu_mul(float* gate, const float* up, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        const B g = B::load_unaligned(gate + i);
        (g / (B(1.0f) + exp_clamped(-g)) * B::load_unaligned(up + i)).store_unaligned(gate + i);
    }
    for (; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void rope(float* x, int64_t n_rows, int64_t ld, int n_head, int head_dim, int rot_dim, const int32_t* pos, const float* inv_freq, bool neox) {
    const int half = rot_dim / 2;
    thread_local std::vector<float> cs;  // cos then sin of the row's angles
    if (cs.size() < size_t(2 * half)) cs.resize(size_t(2 * half));
    float *c = cs.data(), *s = cs.data() + half;
    for (int64_t r = 0; r < n_rows; ++r) {
        for (int i = 0; i < half; ++i) {
            const float angle = float(pos[r]) * inv_freq[i];
            c[i] = float(std::cos(double(angle)));
            s[i] = float(std::sin(double(angle)));
        }
        for (int h = 0; h < n_head; ++h) {
            float* v = x + r * ld + int64_t(h) * head_dim;
            if (neox) {  // (v[i], v[i + half]) → (v[i]·c − v[i + half]·s, v[i + half]·c + v[i]·s)
                int i = 0;
                for (; i + W <= half; i += int(W)) {
                    const B a = B::load_unaligned(v + i), b = B::load_unaligned(v + half + i);
                    const B ci = B::load_unaligned(c + i), si = B::load_unaligned(s + i);
                    xsimd::fms(a, ci, b * si).store_unaligned(v + i);
                    xsimd::fma(b, ci, a * si).store_unaligned(v + half + i);
                }
                for (; i < half; ++i) {
                    const float a = v[i], b = v[half + i];
                    v[i] = a * c[i] - b * s[i];
                    v[half + i] = b * c[i] + a * s[i];
                }
            } else {  // adjacent pairs: a few values per head, plain code
                for (int i = 0; i < half; ++i) {
                    const float a = v[2 * i], b = v[2 * i + 1];
                    v[2 * i] = a * c[i] - b * s[i];
                    v[2 * i + 1] = b * c[i] + a * s[i];
                }
            }
        }
    }
}

namespace {
// One block of 32 values as whole numbers in [−Max, Max] at scale d = amax / Max (returned, in f32).
#if defined(__wasm_simd128__)
// wasm: the steps of the xsimd version below in SIMD128's own instructions (xsimd's max, abs and trunc come through
// Emscripten's SSE shim, its max as a compare and a select), the block kept in registers and its maximum reduced there:
// `wf-bench-kernels activations` q8_0 0.75 → 0.52–0.57 ns a value (Node, AMD EPYC Zen 4), the same bytes for finite x.
template <int Max>
float quantize_block(const float* xb, int8_t* out) {
    v128_t v[q8_block / 4], a[q8_block / 4];
    for (int i = 0; i < q8_block / 4; ++i) v[i] = wasm_v128_load(xb + 4 * i), a[i] = wasm_f32x4_abs(v[i]);
    for (int w = q8_block / 8; w >= 1; w /= 2)  // a tree, not a chain of 8
        for (int i = 0; i < w; ++i) a[i] = wasm_f32x4_pmax(a[i], a[i + w]);
    v128_t m = wasm_f32x4_pmax(wasm_f32x4_splat(0.0f), a[0]);  // a NaN here (it can hide what it met above) never reaches d
    m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(m, m, 2, 3, 0, 1));
    m = wasm_f32x4_pmax(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
    const float d = wasm_f32x4_extract_lane(m, 0) / float(Max);
    const v128_t id = wasm_f32x4_splat(d != 0.0f ? 1.0f / d : 0.0f), half = wasm_f32x4_splat(0.49999997f);
    const v128_t sign = wasm_f32x4_splat(-0.0f), magic = wasm_f32x4_splat(12582912.0f), bias = wasm_i32x4_splat(0x4B400000);
    v128_t q[q8_block / 4];
    for (int i = 0; i < q8_block / 4; ++i) {  // as below: half away from zero, read through 1.5·2^23
        const v128_t x = wasm_f32x4_mul(v[i], id);
        const v128_t r = wasm_v128_or(wasm_f32x4_trunc(wasm_f32x4_add(wasm_f32x4_abs(x), half)), wasm_v128_and(x, sign));
        q[i] = wasm_i32x4_sub(wasm_f32x4_add(r, magic), bias);
    }
    for (int i = 0; i < q8_block / 16; ++i)
        wasm_v128_store(out + 16 * i, wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q[4 * i], q[4 * i + 1]),
                                                              wasm_i16x8_narrow_i32x4(q[4 * i + 2], q[4 * i + 3])));
    return d;
}
#else
template <int Max>
float quantize_block(const float* xb, int8_t* out) {
    B m(0.0f);
    for (int i = 0; i < q8_block; i += int(W)) m = xsimd::max(m, xsimd::abs(B::load_unaligned(xb + i)));
    alignas(64) float lanes[B::size];
    m.store_aligned(lanes);
    float amax = 0.0f;
    for (float v : lanes) amax = std::fmax(amax, v);
    const float d = amax / float(Max);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    // round half away from zero, as lround (ggml's roundf): |v| + (0.5 − 2^-25) truncated, the sign put back. Adding a
    // plain 0.5 rounds 0.5 − 2^-25 up to 1; with 0.5 − 2^-25 the sum rounds to the right side of every integer:
    // checked against lround for every float in [0, 128] (|v| ≤ Max·(1 + 2^-23) here), 4 operations fewer per vector
    // than the truncation plus a compared remainder
    alignas(64) int32_t q[q8_block];
    for (int i = 0; i < q8_block; i += int(W)) {
        const B v = B::load_unaligned(xb + i) * B(id), sign(-0.0f);
        const B r = xsimd::trunc(xsimd::abs(v) + B(0.49999997f)) | (v & sign);
        // r is a whole number in [−Max, Max]: added to 1.5·2^23 it sits in the low mantissa bits, read as an
        // integer without a float → int conversion
        using I = xsimd::batch<int32_t>;
        (xsimd::bitwise_cast<I>(r + B(12582912.0f)) - I(0x4B400000)).store_aligned(q + i);
    }
    // to int8 16 at a time (saturating narrows, exact here: |q| ≤ 127)
#if defined(__SSE2__)
    for (int i = 0; i < q8_block; i += 16) {
        const __m128i* qi = reinterpret_cast<const __m128i*>(q + i);
        const __m128i lo = _mm_packs_epi32(_mm_load_si128(qi), _mm_load_si128(qi + 1));
        const __m128i hi = _mm_packs_epi32(_mm_load_si128(qi + 2), _mm_load_si128(qi + 3));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_packs_epi16(lo, hi));
    }
#else
    for (int i = 0; i < q8_block; ++i) out[i] = int8_t(q[i]);
#endif
    return d;
}
#endif
}  // namespace

void quantize_q8_0(const float* x, int64_t n, block_q8_0* out) {
    static_assert(q8_block % B::size == 0);
    for (int64_t b = 0; b < n / q8_block; ++b) out[b].d = f32_to_f16(quantize_block<127>(x + b * q8_block, out[b].q));
}

void quantize_q7(const float* x, int64_t n, int8_t* q, float* d) {
    for (int64_t b = 0; b < n / q8_block; ++b) d[b] = quantize_block<63>(x + b * q8_block, q + b * q8_block);
}

// The twin's steps by lanes: the largest |x| (a lane takes a value only when it is larger, so NaN never wins, as the
// twin's strict >), the first value of that size found again by a compare, x·(−127/max) + 1.5·2^23 read as an integer
// (two roundings, as the twin's: g++ would fuse them natively, hence the attribute), min 127; the bytes and sums after.
#if defined(__GNUC__) && !defined(__clang__)
[[gnu::optimize("fp-contract=off")]]
#endif
void quantize_q8_K(const float* x, int64_t n, block_q8_K* out) {
    using I = xsimd::batch<int32_t>;
    static_assert(16 % W == 0);
    for (int64_t b = 0; b < n / qk_k; ++b) {
        const float* xb = x + b * qk_k;
        B m(0.0f);
        for (int64_t i = 0; i < qk_k; i += W) {
            const B a = xsimd::abs(B::load_unaligned(xb + i));
            m = xsimd::select(a > m, a, m);
        }
        alignas(64) float lanes[W];
        m.store_aligned(lanes);
        float amax = 0.0f;
        for (float v : lanes) amax = v > amax ? v : amax;
        block_q8_K& y = out[b];
        if (amax == 0.0f) {
            y = {};
            continue;
        }
        int64_t first = 0;
        while (!xsimd::any(xsimd::abs(B::load_unaligned(xb + first)) == B(amax))) first += W;
        while (std::fabs(xb[first]) != amax) ++first;
        const float iscale = -127.f / xb[first];
        const B is(iscale), magic(12582912.0f);
        alignas(64) int32_t q[qk_k];
        for (int64_t i = 0; i < qk_k; i += W) {
            const B v = B::load_unaligned(xb + i) * is;
            const I bits = xsimd::bitwise_cast<I>(v + magic);
            xsimd::min((bits & I(0x007fffff)) - I(0x00400000), I(127)).store_aligned(q + i);
        }
        WF_SCALAR_LOOP
        for (int64_t i = 0; i < qk_k; ++i) {  // (one step a turn: the engine's size)
            y.qs[i] = int8_t(q[i]);
            y.bsums[i / 16] = int16_t((i % 16 ? y.bsums[i / 16] : 0) + q[i]);
        }
        y.d = 1 / iscale;
    }
}

// x·Φ(x), Φ(x) = 1 − erfc(x/√2)/2 (x ≥ 0) or erfc(|x|/√2)/2 (x < 0), erfc(z) for z ≥ 0 as Abramowitz and Stegun's
// 7.1.26: t·(a₁ + t·(a₂ + … + t·a₅))·e^{−z²}, t = 1/(1 + p·z), |error| ≤ 1.5e-7 — one exponential and one division
// a vector and no branch (xsimd::erf, two polynomials, an exponential, a division and branches on the lanes' ranges,
// took 6–9 ns a value in Node against 2.7: `wf-bench-kernels activations`). Past z ≈ 9.3 the exponential's clamp holds
// e^{−z²} at e^−87, where erfc/2 < 1e-38 all the same.
void gelu_erf(float* x, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        const B v = B::load_unaligned(x + i);
        const B z = xsimd::abs(v) * B(float(M_SQRT1_2));
        const B t = B(1.0f) / xsimd::fma(B(0.3275911f), z, B(1.0f));
        B poly = xsimd::fma(B(1.061405429f), t, B(-1.453152027f));
        poly = xsimd::fma(poly, t, B(1.421413741f));
        poly = xsimd::fma(poly, t, B(-0.284496736f));
        poly = xsimd::fma(poly, t, B(0.254829592f));
        const B half_erfc = (B(0.5f) * t) * poly * exp_clamped(-(z * z));
        (v * xsimd::select(v >= B(0.0f), B(1.0f) - half_erfc, half_erfc)).store_unaligned(x + i);
    }
    for (; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * float(M_SQRT1_2)));
}

// 0.5·x·(1 + tanh u) = x·σ(2u) = x / (1 + e^{−2u}), u = √(2/π)·(x + 0.044715·x³): one exponential and one division a
// vector (xsimd::tanh took 4.6–6.9 ns a value in Node, this 2.1–2.3), and no cancellation in 1 + tanh u for negative x.
// Beyond the exponential's clamp the quotient is x or ±0 in f32 all the same.
void gelu_tanh(float* x, int64_t n) {
    const float c = 0.7978845608028654f;  // sqrt(2/π)
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        const B v = B::load_unaligned(x + i);
        const B minus_2u = B(-2.0f * c) * xsimd::fma(B(0.044715f) * v * v, v, v);
        (v / (B(1.0f) + exp_clamped(minus_2u))).store_unaligned(x + i);
    }
    for (; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::tanh(c * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

void softmax(float* x, int64_t n) {
    B mv(-INFINITY);
    int64_t i = 0;
    for (; i + W <= n; i += W) mv = vmax(mv, B::load_unaligned(x + i));
    float mx = hmax(mv);
    for (; i < n; ++i) mx = std::fmax(mx, x[i]);
    if (mx == -INFINITY || std::isnan(mx)) {
        for (i = 0; i < n; ++i) x[i] = 0.0f;
        return;
    }
    B sv(0.0f);
    i = 0;
    for (; i + W <= n; i += W) {
        const B e = exp_nonpositive(B::load_unaligned(x + i) - B(mx));
        e.store_unaligned(x + i);
        sv += e;
    }
    float s = xsimd::hadd(sv);
    for (; i < n; ++i) s += (x[i] = std::exp(x[i] - mx));
    const float inv = 1.0f / s;
    i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(x + i) * B(inv)).store_unaligned(x + i);
    for (; i < n; ++i) x[i] *= inv;
}

double log_sum_exp(const float* x, int64_t n) {
    const auto finite_or_min = [](B v) { return xsimd::select(v == v, v, B(-INFINITY)); };  // NaN → −inf
    B mv(-INFINITY);
    int64_t i = 0;
    for (; i + W <= n; i += W) mv = vmax(mv, finite_or_min(B::load_unaligned(x + i)));
    float mx = hmax(mv);
    for (; i < n; ++i)
        if (!std::isnan(x[i])) mx = std::fmax(mx, x[i]);
    if (mx == -INFINITY) return -INFINITY;
    constexpr int64_t run = 256;
    double z = 0;
    i = 0;
    while (i + W <= n) {
        B sv(0.0f);
        for (const int64_t end = std::min(n - W, i + run - W); i <= end; i += W) sv += exp_nonpositive(finite_or_min(B::load_unaligned(x + i)) - B(mx));
        z += double(xsimd::hadd(sv));
    }
    for (; i < n; ++i)
        if (!std::isnan(x[i])) z += double(std::exp(x[i] - mx));
    return double(mx) + std::log(z);
}

int64_t argmax(const float* x, int64_t n) {
    B mv(-INFINITY);
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        const B v = B::load_unaligned(x + i);
        mv = vmax(mv, xsimd::select(v == v, v, B(-INFINITY)));  // NaN → −inf
    }
    float mx = hmax(mv);
    for (; i < n; ++i)
        if (x[i] > mx) mx = x[i];
    if (!(mx > -INFINITY)) return -1;
    // the first entry equal to it: the first vector that holds one, then its lanes
    const B m(mx);
    for (i = 0; i + W <= n; i += W)
        if (xsimd::any(B::load_unaligned(x + i) == m)) break;
    for (; x[i] != mx; ++i) {}
    return i;
}

float screen_bounds(const float* a, const float* err, const float* norm, float alpha, float beta, float c, float* upper, int64_t n) {
    B best(-INFINITY);
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        const B av = B::load_unaligned(a + i);
        const B e = (B::load_unaligned(err + i) * B(alpha) + B::load_unaligned(norm + i) * B(beta)) + B(c) * xsimd::abs(av);
        best = vmax(best, av - e);
        (av + e).store_unaligned(upper + i);
    }
    float b = hmax(best);
    for (; i < n; ++i) {
        const float e = (err[i] * alpha + norm[i] * beta) + c * std::fabs(a[i]);
        b = std::max(b, a[i] - e);
        upper[i] = a[i] + e;
    }
    return b;
}

int64_t indices_at_least(const float* x, int64_t n, float t, int32_t* idx, int64_t max) {
    int64_t count = 0, i = 0;
    const auto take = [&](int64_t j) {
        if (x[j] >= t && count++ < max) idx[count - 1] = int32_t(j);
    };
    for (; i + W <= n; i += W)
        if (xsimd::any(B::load_unaligned(x + i) >= B(t)))  // rare: the lanes one by one
            for (int64_t j = i; j < i + W; ++j) take(j);
    for (; i < n; ++i) take(i);
    return count;
}

void add(float* y, const float* x, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(y + i) + B::load_unaligned(x + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] += x[i];
}

void mul(float* y, const float* x, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) (B::load_unaligned(y + i) * B::load_unaligned(x + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] *= x[i];
}

void embed(const matrix_view& table, const int32_t* ids, int64_t n_ids, float* out) {
    for (int64_t i = 0; i < n_ids; ++i) dequantize_row(table, ids[i], out + i * table.n_cols);
}

float dot(const float* a, const float* b, int64_t n) {
    B s0(0.0f), s1(0.0f);
    int64_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        s0 = xsimd::fma(B::load_unaligned(a + i), B::load_unaligned(b + i), s0);
        s1 = xsimd::fma(B::load_unaligned(a + i + W), B::load_unaligned(b + i + W), s1);
    }
    for (; i + W <= n; i += W) s0 = xsimd::fma(B::load_unaligned(a + i), B::load_unaligned(b + i), s0);
    float s = xsimd::hadd(s0 + s1);
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

void axpy(float alpha, const float* x, float* y, int64_t n) {
    const B a(alpha);
    int64_t i = 0;
    for (; i + W <= n; i += W) xsimd::fma(a, B::load_unaligned(x + i), B::load_unaligned(y + i)).store_unaligned(y + i);
    for (; i < n; ++i) y[i] += alpha * x[i];
}

// Blocks of 4 × 4 in 128-bit vectors, two rounds of interleaves (wasm: i32x4.shuffle; SSE: unpcklps / unpckhps), each
// column of the block over the rows of src, all row blocks of those 4 columns before the next 4. GPT-2 small's f32
// load transposes its Conv1D weights (85 M values): one value at a time it took ~100 ms of a 450 ms load in Node.
WF_COLD void transpose(const float* src, int64_t rows, int64_t cols, int64_t lds, float* dst, int64_t ldd) {
    using B4 = xsimd::batch<float, xsimd::sse2>;
    const int64_t rows4 = rows / 4 * 4;
    int64_t c = 0;
    for (; c + 4 <= cols; c += 4) {
        for (int64_t r = 0; r < rows4; r += 4) {
            const float* s = src + r * lds + c;
            const B4 a0 = B4::load_unaligned(s), a1 = B4::load_unaligned(s + lds), a2 = B4::load_unaligned(s + 2 * lds),
                     a3 = B4::load_unaligned(s + 3 * lds);
            const B4 lo02 = xsimd::zip_lo(a0, a2), hi02 = xsimd::zip_hi(a0, a2);  // [a0₀ a2₀ a0₁ a2₁], [a0₂ a2₂ a0₃ a2₃]
            const B4 lo13 = xsimd::zip_lo(a1, a3), hi13 = xsimd::zip_hi(a1, a3);
            float* d = dst + c * ldd + r;
            xsimd::zip_lo(lo02, lo13).store_unaligned(d);  // [a0₀ a1₀ a2₀ a3₀]: column c
            xsimd::zip_hi(lo02, lo13).store_unaligned(d + ldd);
            xsimd::zip_lo(hi02, hi13).store_unaligned(d + 2 * ldd);
            xsimd::zip_hi(hi02, hi13).store_unaligned(d + 3 * ldd);
        }
        WF_SCALAR_LOOP
        for (int64_t r = rows4; r < rows; ++r)
            for (int64_t j = 0; j < 4; ++j) dst[(c + j) * ldd + r] = src[r * lds + c + j];
    }
    WF_SCALAR_LOOP
    for (; c < cols; ++c)
        for (int64_t r = 0; r < rows; ++r) dst[c * ldd + r] = src[r * lds + c];
}

}  // namespace wf
