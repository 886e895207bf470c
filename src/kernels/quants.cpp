// The scalar conversions of kernels/quants.h's types (the reference: ggml's dequantize_row_* and
// quantize_row_*_ref, in their order of float operations), q8_K activation quantization, and the scalar twin of
// the integer GEMV.
//
// Float contraction: the quantizers match llama.cpp's bytes only when a·b + c is rounded twice, as ISO C++ says,
// and the GEMV's twin must round as the SIMD kernel does. g++ contracts by default in C++ (with -march=x86-64-v3 it
// has FMA), clang within an expression, hence the pragmas. WebAssembly has no fused multiply-add at all.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/simd.h"  // first: before any other include of xsimd
#include "core/error.h"
#include "kernels/cold.h"
#include "kernels/kernels.h"
#include "kernels/quants.h"
#include "kernels/words.h"

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace wf {

const int8_t kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

namespace {

constexpr float group_max_eps = 1e-15f;

template <class Block>
Block load_block(const uint8_t* src, int64_t b) {
    Block blk;
    std::memcpy(&blk, src + b * int64_t(sizeof(Block)), sizeof(Block));
    return blk;
}
template <class Block>
void store_block(uint8_t* dst, int64_t b, const Block& blk) {
    std::memcpy(dst + b * int64_t(sizeof(Block)), &blk, sizeof(Block));
}

// ggml's nearest_int: x + 1.5·2^23 puts round(x) (half to even) in the low mantissa bits, for |x| < 2^22.
inline int nearest_int(float x) {
    const float v = x + 12582912.0f;
    int32_t i;
    std::memcpy(&i, &v, 4);
    return (i & 0x007fffff) - 0x00400000;
}

// The value of largest magnitude (signed; the first on ties, +0 when all are zero) and that magnitude.
inline void signed_absmax(const float* x, int n, float& amax, float& max) {
    amax = 0.0f, max = 0.0f;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), max = x[i];
}

// ggml's best_index_int8: the nearest of the n ascending values to x, the upper one on an exact tie.
int best_index_int8(int n, const int8_t* val, float x) {
    if (x <= val[0]) return 0;
    if (x >= val[n - 1]) return n - 1;
    int ml = 0, mu = n - 1;
    while (mu - ml > 1) {
        const int mav = (ml + mu) / 2;
        if (x < val[mav]) mu = mav;
        else ml = mav;
    }
    return x - val[mu - 1] < val[mu] - x ? mu - 1 : mu;
}

// --- the 32-value types -------------------------------------------------------------------------------------

// Packs 32 codes as nibbles: byte j holds code j (low) and code j + 16 (high).
inline void pack_nibbles(const uint8_t* q, uint8_t* qs) {
    for (int j = 0; j < 16; ++j) qs[j] = uint8_t((q[j] & 0x0F) | (q[j + 16] & 0x0F) << 4);
}
inline uint32_t fifth_bits(const uint8_t* q) {
    uint32_t qh = 0;
    for (int j = 0; j < 32; ++j) qh |= uint32_t(q[j] >> 4 & 1) << j;
    return qh;
}

// min, max over a block (C's `if (v < min)` / `if (v > max)` loops from ±FLT_MAX).
inline void min_max(const float* x, int n, float& mn, float& mx) {
    mn = FLT_MAX, mx = -FLT_MAX;
    for (int j = 0; j < n; ++j) {
        if (x[j] < mn) mn = x[j];
        if (x[j] > mx) mx = x[j];
    }
}

// C's (int8_t) / (uint8_t) of a float, for values the quantizers produce (finite, in range); anything else (a NaN
// weight) gives 0 instead of undefined behaviour.
inline int trunc_small(float v) { return v > -128.0f && v < 256.0f ? int(v) : 0; }

}  // namespace

// value = d·q (+ m) for n values given as codes with one scale (and minimum) per `per` values: the dequantizers of
// the types with to_codes32 / to_codes16 (dtype.h), so that the prefill tile's codes and the dequantizer are one decode.
// The same float operations as ggml's dequantize_row_*: (d·sc)·q, d·q + m, (d·sc)·q − dmin·m (no + 0 without a minimum:
// it would turn −0 into +0).
void codes_to_f32(const int8_t* q, const float* d, const float* m, int per, int64_t n, float* dst) {
    for (int64_t i = 0; i < n; ++i) dst[i] = m ? d[i / per] * float(q[i]) + m[i / per] : d[i / per] * float(q[i]);
}

// q4_1 / q5_1 as codes: d·q + m per block, q ∈ [0, 15] (+ 16 for q5_1's fifth bit from qh).
template <class Block>
void x1_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) {
    for (int64_t b = 0; b < n / 32; ++b) {
        const auto blk = load_block<Block>(src, b);
        uint32_t qh = 0;
        if constexpr (requires { blk.qh; }) std::memcpy(&qh, blk.qh, 4);
        d[b] = f16_to_f32(blk.d), m[b] = f16_to_f32(blk.m);
        for (int j = 0; j < 16; ++j) {
            q[b * 32 + j] = int8_t((blk.qs[j] & 0x0F) | (qh >> j & 1) << 4);
            q[b * 32 + j + 16] = int8_t((blk.qs[j] >> 4) | (qh >> (j + 16) & 1) << 4);
        }
    }
}
void q4_1_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) { x1_to_codes32<block_q4_1>(src, q, d, m, n); }
void q5_1_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) { x1_to_codes32<block_q5_1>(src, q, d, m, n); }

// One block at a time: its codes, then their values.
template <class Block, int values, int groups, auto codes>
void via_codes(const uint8_t* src, float* dst, int64_t n) {
    int8_t q[values];
    float d[groups], m[groups];
    for (int64_t b = 0; b < n / values; ++b) {
        if constexpr (requires { codes(src, q, d, m, n); }) {
            codes(src + b * int64_t(sizeof(Block)), q, d, m, values);
            codes_to_f32(q, d, m, values / groups, values, dst + b * values);
        } else {
            codes(src + b * int64_t(sizeof(Block)), q, d, values);
            codes_to_f32(q, d, nullptr, values / groups, values, dst + b * values);
        }
    }
}

WF_COLD void q4_1_to_f32(const uint8_t* src, float* dst, int64_t n) { via_codes<block_q4_1, 32, 1, q4_1_to_codes32>(src, dst, n); }
// d = (max − min)/15, q = min(15, (int8_t)((x − min)·id + 0.5)).
WF_COLD void q4_1_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / 32; ++b) {
        const float* x = src + b * 32;
        float mn, mx;
        min_max(x, 32, mn, mx);
        const float d = (mx - mn) / 15.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        block_q4_1 blk;
        blk.d = f32_to_f16(d);
        blk.m = f32_to_f16(mn);
        uint8_t q[32];
        for (int j = 0; j < 32; ++j) q[j] = uint8_t(std::min(15, trunc_small((x[j] - mn) * id + 0.5f)));
        pack_nibbles(q, blk.qs);
        store_block(dst, b, blk);
    }
}

WF_COLD void q5_0_to_f32(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t b = 0; b < n / 32; ++b) {
        const auto blk = load_block<block_q5_0>(src, b);
        uint32_t qh;
        std::memcpy(&qh, blk.qh, 4);
        const float d = f16_to_f32(blk.d);
        for (int j = 0; j < 16; ++j) {
            const int x0 = int((blk.qs[j] & 0x0F) | (qh >> j & 1) << 4) - 16, x1 = int((blk.qs[j] >> 4) | (qh >> (j + 16) & 1) << 4) - 16;
            dst[b * 32 + j] = float(x0) * d;
            dst[b * 32 + j + 16] = float(x1) * d;
        }
    }
}
// d = max/−16 (max: the value of largest magnitude), q = min(31, (int8_t)(x·id + 16.5)).
WF_COLD void q5_0_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / 32; ++b) {
        const float* x = src + b * 32;
        float amax, mx;
        signed_absmax(x, 32, amax, mx);
        const float d = mx / -16.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        block_q5_0 blk;
        blk.d = f32_to_f16(d);
        uint8_t q[32];
        for (int j = 0; j < 32; ++j) q[j] = uint8_t(std::min(31, trunc_small(x[j] * id + 16.5f)));
        pack_nibbles(q, blk.qs);
        const uint32_t qh = fifth_bits(q);
        std::memcpy(blk.qh, &qh, 4);
        store_block(dst, b, blk);
    }
}
// q − 16 ∈ [−16, 15] under the same f16 scale: a q8_0 block with the same values. Eight codes a 64-bit word (the
// prefill re-blocks a panel of rows per call, kernels/matmul-q8.cpp): q = nibble + 16·bit, so the byte of q − 16 is
// the nibble, its high four bits set where the fifth bit is clear; qh's byte k holds elements 8k … 8k + 7's bits.
void q5_0_to_q8_0(const uint8_t* src, uint8_t* dst, int64_t n) {
    using namespace words;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* s = src + 22 * b;
        uint8_t* o = dst + 34 * b;
        std::memcpy(o, s, 2);
        const uint64_t L = word(s + 6), H = word(s + 14);  // qs bytes 0–7, 8–15: elements 0–15 low, 16–31 high
        const uint64_t nib[4] = {L & lo4, H & lo4, L >> 4 & lo4, H >> 4 & lo4};
        for (int k = 0; k < 4; ++k) put(o + 2 + 8 * k, nib[k] | unpack8(uint8_t(~s[2 + k])) * 0xF0);
    }
}

WF_COLD void q5_1_to_f32(const uint8_t* src, float* dst, int64_t n) { via_codes<block_q5_1, 32, 1, q5_1_to_codes32>(src, dst, n); }
// d = (max − min)/31, q = (uint8_t)((x − min)·id + 0.5) (no clamp, as llama.cpp).
WF_COLD void q5_1_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / 32; ++b) {
        const float* x = src + b * 32;
        float mn, mx;
        min_max(x, 32, mn, mx);
        const float d = (mx - mn) / 31.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        block_q5_1 blk;
        blk.d = f32_to_f16(d);
        blk.m = f32_to_f16(mn);
        uint8_t q[32];
        for (int j = 0; j < 32; ++j) q[j] = uint8_t(trunc_small((x[j] - mn) * id + 0.5f));
        pack_nibbles(q, blk.qs);
        const uint32_t qh = fifth_bits(q);
        std::memcpy(blk.qh, &qh, 4);
        store_block(dst, b, blk);
    }
}

WF_COLD void iq4_nl_to_f32(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t b = 0; b < n / 32; ++b) {
        const auto blk = load_block<block_iq4_nl>(src, b);
        const float d = f16_to_f32(blk.d);
        for (int j = 0; j < 16; ++j) {
            dst[b * 32 + j] = d * float(kvalues_iq4nl[blk.qs[j] & 0x0F]);
            dst[b * 32 + j + 16] = d * float(kvalues_iq4nl[blk.qs[j] >> 4]);
        }
    }
}
// quantize_row_iq4_nl_ref: weights x², d0 = max/−127, indices = the nearest levels to x/d0, d = Σwqx/Σwq² (the
// indices are not recomputed with it). An all-zero block gets d = 0 and keeps the previous block's indices.
WF_COLD void iq4_nl_from_f32(const float* src, uint8_t* dst, int64_t n) {
    uint8_t L[32] = {};
    for (int64_t b = 0; b < n / 32; ++b) {
        const float* x = src + b * 32;
        float amax, mx;
        signed_absmax(x, 32, amax, mx);
        float d = 0.0f;
        if (amax >= group_max_eps) {
            const float id = 1.0f / (mx / float(kvalues_iq4nl[0]));
            float sumqx = 0, sumq2 = 0;
            for (int j = 0; j < 32; ++j) {
                L[j] = uint8_t(best_index_int8(16, kvalues_iq4nl, id * x[j]));
                const float q = kvalues_iq4nl[L[j]], w = x[j] * x[j];
                sumqx += w * q * x[j];
                sumq2 += w * q * q;
            }
            d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
        }
        block_iq4_nl blk;
        blk.d = f32_to_f16(d);
        pack_nibbles(L, blk.qs);
        store_block(dst, b, blk);
    }
}
// Levels of [−127, 113] under the same f16 scale: a q8_0 block with the same values.
void iq4_nl_to_q8_0(const uint8_t* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / 32; ++b) {
        const auto blk = load_block<block_iq4_nl>(src, b);
        block_q8_0 out;
        out.d = blk.d;
        for (int j = 0; j < 16; ++j) {
            out.q[j] = kvalues_iq4nl[blk.qs[j] & 0x0F];
            out.q[j + 16] = kvalues_iq4nl[blk.qs[j] >> 4];
        }
        store_block(dst, b, out);
    }
}

using B = xsimd::batch<float>;
constexpr int64_t W = int64_t(B::size);

// --- the K-quants' scale searches (ggml-quants.c's make_qx_quants, make_q3_quants, make_qkx2_quants) ------------
namespace {

// Symmetric codes L = l + nmax, l ∈ [−nmax, nmax − 1], fitted with weights x² over 19 trial scales; returns the scale.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
    float amax, max;
    signed_absmax(x, n, amax, max);
    if (amax < group_max_eps) {
        std::fill(L, L + n, int8_t(0));
        return 0.0f;
    }
    auto fit = [&](float is, float& sumlx, float& suml2, int8_t* out) {
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(is * x[i])));
            if (out) out[i] = int8_t(l + nmax);
            const float w = x[i] * x[i];
            sumlx += w * x[i] * float(l);
            suml2 += w * float(l) * float(l);
        }
    };
    float sumlx, suml2;
    fit(float(-nmax) / max, sumlx, suml2, L);
    float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        const float iscale = -(float(nmax) + 0.1f * float(is)) / max;
        fit(iscale, sumlx, suml2, nullptr);
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            fit(iscale, sumlx, suml2, L);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

// Symmetric codes L = l + nmax from l = round(−nmax·x/max), then up to 5 passes of coordinate descent on the
// x²-weighted least squares; returns the scale.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
    float amax, max;
    signed_absmax(x, n, amax, max);
    if (amax < group_max_eps) {
        std::fill(L, L + n, int8_t(0));
        return 0.0f;
    }
    const float iscale = float(-nmax) / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
        L[i] = int8_t(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * float(l);
        suml2 += w * float(l) * float(l);
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * float(L[i]);
            if (slx > 0) {
                float sl2 = suml2 - w * float(L[i]) * float(L[i]);
                const int new_l = std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
                if (new_l != L[i]) {
                    slx += w * x[i] * float(new_l);
                    sl2 += w * float(new_l) * float(new_l);
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = int8_t(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Asymmetric codes x ≈ scale·L + min, L ∈ [0, nmax], min ≤ 0, searched over nstep + 1 trial scales by the weighted
// error (|·| if use_mad, else squared); returns the scale, −min in the_min. Not WF_COLD: it is where a load-time
// conversion to q4_K / q5_K spends its time (21 trial scales per 32 weights), and at -O3 GPT-2 small's conversion to
// q4_k took 13.6 → 12.1 s in Node (one thread) for 53 bytes of the gzipped wasm. Its sums are chains of dependent
// adds, so the trials run side by side, one a SIMD lane (ref::scalar_trials: one at a time, the twin), each lane's
// arithmetic the scalar's in the same order: the same codes bit for bit. GPT-2 small loaded with dtype q4_k:
// 5.7–6.2 → 3.3–3.8 s, q5_k 5.0–5.2 → 3.3–3.5 s (Node, one thread, `node bench/load-times.mjs gpt2-base:q4_k
// gpt2-base:q5_k` from both builds in turn, two rounds).
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min, float rmin,
                       float rdelta, int nstep, bool use_mad) {
    const bool lanes = !ref::scalar_trials;
    float min = x[0], max = x[0];
    float sum_w = weights[0], sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        std::fill(L, L + n, uint8_t(0));
        *the_min = -min;
        return 0.0f;
    }
    auto error = [&](float scale, const uint8_t* l, float mn) {
        float e = 0;
        for (int i = 0; i < n; ++i) {
            float diff = scale * float(l[i]) + mn - x[i];
            diff = use_mad ? std::fabs(diff) : diff * diff;
            e += weights[i] * diff;
        }
        return e;
    };
    float iscale = float(nmax) / (max - min);
    float scale = 1 / iscale;
    for (int i = 0; i < n; ++i) L[i] = uint8_t(std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min)))));
    float best_error = error(scale, L, min);
    uint8_t Laux[32];
    if (lanes) {  // the trial scales side by side, one a lane; then taken in order as below
        // A trial reads min, which a better one before it changes: lanes after one that moves min are computed again
        // from there (on random rows 1.3 of a search's 21 trials move it).
        alignas(64) float lv[32][W], sv[W], mv[W], ev[W], dv[W];
        for (int is0 = 0, next; is0 <= nstep; is0 = next) {
            next = is0 + int(W);
            alignas(64) float isf[W];
            for (int k = 0; k < int(W); ++k) isf[k] = float(is0 + k);
            const B isc = (B(rmin) + B(rdelta) * B::load_aligned(isf) + B(float(nmax))) / B(max - min);
            B sum_l(0.0f), sum_l2(0.0f), sum_xl(0.0f);
            for (int i = 0; i < n; ++i) {
                // nearest_int as a float (x + 1.5·2^23 − 1.5·2^23: the same whole number), clamped to [0, nmax]
                const B l = xsimd::max(B(0.0f), xsimd::min(B(float(nmax)), (isc * (B(x[i]) - B(min)) + B(12582912.0f)) - B(12582912.0f)));
                l.store_aligned(lv[i]);
                const B w(weights[i]);
                sum_l += w * l;
                sum_l2 += w * l * l;
                sum_xl += w * l * B(x[i]);
            }
            const B D = B(sum_w) * sum_l2 - sum_l * sum_l;
            const auto clipped = (sum_l2 * B(sum_x) - sum_l * sum_xl) / D > B(0.0f);
            const B this_scale = xsimd::select(clipped, sum_xl / sum_l2, (B(sum_w) * sum_xl - B(sum_x) * sum_l) / D);
            const B this_min = xsimd::select(clipped, B(0.0f), (sum_l2 * B(sum_x) - sum_l * sum_xl) / D);
            B e(0.0f);
            for (int i = 0; i < n; ++i) {
                const B diff = this_scale * B::load_aligned(lv[i]) + this_min - B(x[i]);
                e += B(weights[i]) * (use_mad ? xsimd::abs(diff) : diff * diff);
            }
            D.store_aligned(dv), this_scale.store_aligned(sv), this_min.store_aligned(mv), e.store_aligned(ev);
            for (int k = 0; k < int(W) && is0 + k <= nstep; ++k)
                if (dv[k] > 0 && ev[k] < best_error) {
                    for (int i = 0; i < n; ++i) L[i] = uint8_t(lv[i][k]);
                    best_error = ev[k];
                    scale = sv[k];
                    const bool moved = mv[k] != min;
                    min = mv[k];
                    if (moved) {
                        next = is0 + k + 1;
                        break;
                    }
                }
        }
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
            Laux[i] = uint8_t(l);
            const float w = weights[i];
            sum_l += w * float(l);
            sum_l2 += w * float(l) * float(l);
            sum_xl += w * float(l) * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            const float cur_error = error(this_scale, Laux, this_min);
            if (cur_error < best_error) {
                std::copy(Laux, Laux + n, L);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// Codes 0–3 (q2_K's qs, q3_K's low bits): byte 32h + l holds elements 128h + l, +32, +64, +96 at bits 0, 2, 4, 6.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < qk_k; j += 128)
        for (int l = 0; l < 32; ++l)
            qs[j / 4 + l] = uint8_t(L[j + l] | L[j + l + 32] << 2 | L[j + l + 64] << 4 | L[j + l + 96] << 6);
}

// q3_K's 12 scale bytes → the 16 signed scales code − 32.
inline void q3_K_scales(const uint8_t* s, int8_t* out) {
    for (int j = 0; j < 16; ++j) {
        const int lo = j < 8 ? s[j] & 0xF : s[j - 8] >> 4, hi = s[8 + j % 4] >> (2 * (j / 4)) & 3;
        out[j] = int8_t((lo | hi << 4) - 32);
    }
}

// The shared part of quantize_row_q4_K_ref and quantize_row_q5_K_ref: per group of 32 weights av_x + |x|
// (av_x = rms of the group), make_qkx2_quants, 6-bit codes of the scales and mins, then every code again with
// the rounded scales. Returns the codes in L.
WF_COLD void quantize_k45(const float* x, int nmax, float rmin, int nstep, uint16_t& d_out, uint16_t& dmin_out, uint8_t* scales_out,
                  uint8_t* L) {
    float weights[32], mins[8], scales[8], max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
        scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], rmin, 0.1f, nstep, false);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f, inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < 8; ++j) {
        const uint8_t ls = std::min<uint8_t>(63, uint8_t(nearest_int(inv_scale * scales[j]))),
                      lm = std::min<uint8_t>(63, uint8_t(nearest_int(inv_min * mins[j])));
        if (j < 4) {
            scales_out[j] = ls;
            scales_out[j + 4] = lm;
        } else {
            scales_out[j + 4] = uint8_t((ls & 0xF) | (lm & 0xF) << 4);
            scales_out[j - 4] |= uint8_t((ls >> 4) << 6);
            scales_out[j] |= uint8_t((lm >> 4) << 6);
        }
    }
    d_out = f32_to_f16(max_scale / 63.f);
    dmin_out = f32_to_f16(max_min / 63.f);
    for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        scale_min_k4(j, scales_out, sc, m);
        const float d = f16_to_f32(d_out) * float(sc);
        if (d == 0.0f) continue;
        const float dm = f16_to_f32(dmin_out) * float(m);
        for (int ii = 0; ii < 32; ++ii) L[32 * j + ii] = uint8_t(std::max(0, std::min(nmax, nearest_int((x[32 * j + ii] + dm) / d))));
    }
}

}  // namespace

void q2_K_to_f32(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        const auto blk = load_block<block_q2_K>(src, b);
        const float d = f16_to_f32(blk.d), dmin = f16_to_f32(blk.dmin);
        float* y = dst + b * qk_k;
        // element 128h + 32j + l: bits 2j of qs[32h + l], group 8h + 2j + l / 16. The outer loops stay loops: clang
        // unrolled all 256 elements into 10 KB of wasm (the engine's budget, tests/js/pack.test.mjs).
        WF_NO_UNROLL
        for (int h = 0; h < 2; ++h)
            WF_NO_UNROLL
            for (int j = 0; j < 4; ++j)
                for (int l = 0; l < 32; ++l) {
                    const int g = 8 * h + 2 * j + l / 16, q = blk.qs[32 * h + l] >> (2 * j) & 3;
                    const float dl = d * float(blk.scales[g] & 0xF), ml = dmin * float(blk.scales[g] >> 4);
                    y[128 * h + 32 * j + l] = dl * float(q) - ml;
                }
    }
}
// quantize_row_q2_K_ref: per group of 16 make_qkx2_quants(3, weights |x|, mean absolute error), 4-bit codes of
// the scales and mins (d = max scale/15, dmin = max min/15), the codes again with the rounded scales.
WF_COLD void q2_K_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        const float* x = src + b * qk_k;
        uint8_t L[qk_k];
        float weights[16], mins[16], scales[16], max_scale = 0, max_min = 0;
        for (int j = 0; j < 16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        block_q2_K blk{};
        if (max_scale > 0) {
            const float iscale = 15.f / max_scale;
            for (int j = 0; j < 16; ++j) blk.scales[j] = uint8_t(nearest_int(iscale * scales[j]));
            blk.d = f32_to_f16(max_scale / 15.f);
        } else {
            blk.d = f32_to_f16(0.f);
        }
        if (max_min > 0) {
            const float iscale = 15.f / max_min;
            for (int j = 0; j < 16; ++j) blk.scales[j] |= uint8_t(nearest_int(iscale * mins[j]) << 4);
            blk.dmin = f32_to_f16(max_min / 15.f);
        } else {
            blk.dmin = f32_to_f16(0.f);
        }
        for (int j = 0; j < 16; ++j) {
            const float d = f16_to_f32(blk.d) * float(blk.scales[j] & 0xF);
            if (d == 0.0f) continue;
            const float dm = f16_to_f32(blk.dmin) * float(blk.scales[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) L[16 * j + ii] = uint8_t(std::max(0, std::min(3, nearest_int((x[16 * j + ii] + dm) / d))));
        }
        pack_2bit(L, blk.qs);
        store_block(dst, b, blk);
    }
}

// q3_K as codes: (d·sc)·q per 16, sc = code − 32 (q3_K_scales), q = low 2 bits − 4 unless the hmask bit is set;
// element 128h + 32j + l: as q2_K, its high bit is bit 4h + j of hmask[l].
void q3_K_to_codes16(const uint8_t* src, int8_t* q, float* d, int64_t n) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        const auto blk = load_block<block_q3_K>(src, b);
        const float D = f16_to_f32(blk.d);
        int8_t sc[16];
        q3_K_scales(blk.scales, sc);
        for (int g = 0; g < 16; ++g) d[b * 16 + g] = D * float(sc[g]);
        for (int h = 0; h < 2; ++h)
            for (int j = 0; j < 4; ++j)
                for (int l = 0; l < 32; ++l) {
                    const int low = blk.qs[32 * h + l] >> (2 * j) & 3;
                    q[b * qk_k + 128 * h + 32 * j + l] = int8_t(low - (blk.hmask[l] >> (4 * h + j) & 1 ? 0 : 4));
                }
    }
}
WF_COLD void q3_K_to_f32(const uint8_t* src, float* dst, int64_t n) { via_codes<block_q3_K, qk_k, 16, q3_K_to_codes16>(src, dst, n); }
// quantize_row_q3_K_ref: per group of 16 make_q3_quants(4); the scale of largest magnitude gives −32/max, 6-bit
// codes, d = max/−32; the codes again with the rounded scales; high bits into hmask.
WF_COLD void q3_K_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        const float* x = src + b * qk_k;
        int8_t L[qk_k];
        float scales[16], amax = 0, max_scale = 0;
        for (int j = 0; j < 16; ++j) {
            scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
            if (std::fabs(scales[j]) > amax) amax = std::fabs(scales[j]), max_scale = scales[j];
        }
        block_q3_K blk{};
        if (max_scale != 0.0f) {
            const float iscale = -32.f / max_scale;
            for (int j = 0; j < 16; ++j) {
                int8_t l = int8_t(nearest_int(iscale * scales[j]));
                l = int8_t(std::max<int>(-32, std::min<int>(31, l)) + 32);
                if (j < 8) blk.scales[j] = uint8_t(l & 0xF);
                else blk.scales[j - 8] |= uint8_t((l & 0xF) << 4);
                l = int8_t(l >> 4);
                blk.scales[j % 4 + 8] |= uint8_t(l << (2 * (j / 4)));
            }
            blk.d = f32_to_f16(1 / iscale);
        } else {
            blk.d = f32_to_f16(0.f);
        }
        int8_t sc[16];
        q3_K_scales(blk.scales, sc);
        for (int j = 0; j < 16; ++j) {
            const float d = f16_to_f32(blk.d) * float(sc[j]);
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ++ii) L[16 * j + ii] = int8_t(std::max(-4, std::min(3, nearest_int(x[16 * j + ii] / d))) + 4);
        }
        uint8_t low[qk_k];
        for (int j = 0; j < qk_k; ++j) {
            if (L[j] > 3) {
                blk.hmask[j % 32] |= uint8_t(1 << (j / 32));
                L[j] = int8_t(L[j] - 4);
            }
            low[j] = uint8_t(L[j]);
        }
        pack_2bit(low, blk.qs);
        store_block(dst, b, blk);
    }
}

// Q4_K and Q5_K: 8 groups of 32 with 6-bit scales and mins; Q5_K adds each value's fifth bit from qh.
// As codes: d·sc and −dmin·m per group (exact products of an f16 and a 6-bit code).
template <class Block>
void k45_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        const auto blk = load_block<Block>(src, b);
        const float D = f16_to_f32(blk.d), Dmin = f16_to_f32(blk.dmin);
        for (int g = 0; g < 8; ++g) {
            uint8_t sc, mn;
            scale_min_k4(g, blk.scales, sc, mn);
            d[b * 8 + g] = D * float(sc), m[b * 8 + g] = -(Dmin * float(mn));
            for (int l = 0; l < 32; ++l) {
                int v = blk.qs[32 * (g / 2) + l] >> (4 * (g % 2)) & 0xF;
                if constexpr (requires { blk.qh; }) v += blk.qh[l] >> g & 1 ? 16 : 0;
                q[b * qk_k + 32 * g + l] = int8_t(v);
            }
        }
    }
}
void q4_K_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) { k45_to_codes32<block_q4_K>(src, q, d, m, n); }
void q5_K_to_codes32(const uint8_t* src, int8_t* q, float* d, float* m, int64_t n) { k45_to_codes32<block_q5_K>(src, q, d, m, n); }

WF_COLD void q4_K_to_f32(const uint8_t* src, float* dst, int64_t n) { via_codes<block_q4_K, qk_k, 8, q4_K_to_codes32>(src, dst, n); }
WF_COLD void q4_K_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        block_q4_K blk{};
        uint8_t L[qk_k];
        quantize_k45(src + b * qk_k, 15, -1.f, 20, blk.d, blk.dmin, blk.scales, L);
        for (int j = 0; j < qk_k; j += 64)
            for (int l = 0; l < 32; ++l) blk.qs[j / 2 + l] = uint8_t(L[j + l] | L[j + l + 32] << 4);
        store_block(dst, b, blk);
    }
}

WF_COLD void q5_K_to_f32(const uint8_t* src, float* dst, int64_t n) { via_codes<block_q5_K, qk_k, 8, q5_K_to_codes32>(src, dst, n); }

WF_COLD void q5_K_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        block_q5_K blk{};
        uint8_t L[qk_k];
        quantize_k45(src + b * qk_k, 31, -0.5f, 15, blk.d, blk.dmin, blk.scales, L);
        for (int e = 0; e < qk_k; ++e) {
            if (L[e] > 15) blk.qh[e % 32] |= uint8_t(1 << (e / 32));
            blk.qs[32 * (e / 64) + e % 32] |= uint8_t((L[e] & 0xF) << (4 * (e % 64 / 32)));
        }
        store_block(dst, b, blk);
    }
}

// q6_K as codes: (d·sc)·(q − 32) per 16; element 128h + 32j + l (group 8h + 2j + l / 16): ql's nibble, qh's bits 2j.
void q6_K_to_codes16(const uint8_t* src, int8_t* q, float* d, int64_t n) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        const auto blk = load_block<block_q6_K>(src, b);
        const float D = f16_to_f32(blk.d);
        for (int g = 0; g < 16; ++g) d[b * 16 + g] = D * float(blk.scales[g]);
        for (int h = 0; h < 2; ++h)
            for (int j = 0; j < 4; ++j)
                for (int l = 0; l < 32; ++l) {
                    const int low = blk.ql[64 * h + 32 * (j % 2) + l] >> (4 * (j / 2)) & 0xF, high = blk.qh[32 * h + l] >> (2 * j) & 3;
                    q[b * qk_k + 128 * h + 32 * j + l] = int8_t((low | high << 4) - 32);
                }
    }
}
WF_COLD void q6_K_to_f32(const uint8_t* src, float* dst, int64_t n) { via_codes<block_q6_K, qk_k, 16, q6_K_to_codes16>(src, dst, n); }
// quantize_row_q6_K_ref: per group of 16 make_qx_quants(32); the scale of largest magnitude gives −128/max, int8
// scales, d = max/−128; the codes again with the rounded scales. A block of zero scales is all zero bytes.
WF_COLD void q6_K_from_f32(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        const float* x = src + b * qk_k;
        int8_t L[qk_k];
        float scales[16], max_scale = 0, max_abs_scale = 0;
        for (int ib = 0; ib < 16; ++ib) {
            scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
            if (std::fabs(scales[ib]) > max_abs_scale) max_abs_scale = std::fabs(scales[ib]), max_scale = scales[ib];
        }
        block_q6_K blk{};
        if (max_abs_scale >= group_max_eps) {
            const float iscale = -128.f / max_scale;
            blk.d = f32_to_f16(1 / iscale);
            for (int ib = 0; ib < 16; ++ib) blk.scales[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
            for (int j = 0; j < 16; ++j) {
                const float d = f16_to_f32(blk.d) * float(blk.scales[j]);
                if (d == 0.0f) continue;
                for (int ii = 0; ii < 16; ++ii) L[16 * j + ii] = int8_t(std::max(-32, std::min(31, nearest_int(x[16 * j + ii] / d))) + 32);
            }
            for (int h = 0; h < 2; ++h)
                for (int l = 0; l < 32; ++l) {
                    const int8_t* q = L + 128 * h + l;
                    blk.ql[64 * h + l] = uint8_t((q[0] & 0xF) | (q[64] & 0xF) << 4);
                    blk.ql[64 * h + 32 + l] = uint8_t((q[32] & 0xF) | (q[96] & 0xF) << 4);
                    blk.qh[32 * h + l] = uint8_t(q[0] >> 4 | (q[32] >> 4) << 2 | (q[64] >> 4) << 4 | (q[96] >> 4) << 6);
                }
        }
        store_block(dst, b, blk);
    }
}

void ref::quantize_q8_K(const float* x, int64_t n, block_q8_K* out) {
    for (int64_t b = 0; b < n / qk_k; ++b) {
        const float* xb = x + b * qk_k;
        float amax, max;
        signed_absmax(xb, qk_k, amax, max);
        block_q8_K& y = out[b];
        if (amax == 0.0f) {
            y = {};
            continue;
        }
        const float iscale = -127.f / max;
        for (int j = 0; j < qk_k; ++j) y.qs[j] = int8_t(std::min(127, nearest_int(iscale * xb[j])));
        for (int g = 0; g < qk_k / 16; ++g) {
            int sum = 0;
            for (int i = 0; i < 16; ++i) sum += y.qs[16 * g + i];
            y.bsums[g] = int16_t(sum);
        }
        y.d = 1 / iscale;
    }
}

// (out of line: the prefill panel calls it once per super-block and column; it reads the fields it needs, not the
// block: a copy of q4_K's 144 bytes per call had been half its time)
[[gnu::noinline]] void k_scales(dtype t, const uint8_t* blk, int16_t* sc, int16_t* mn, float& d, float& dmin) {
    const auto half = [&](size_t at) {
        uint16_t h;
        std::memcpy(&h, blk + at, 2);
        return f16_to_f32(h);
    };
    dmin = 0.0f;
    switch (t) {
    case dtype::q3_k: {
        int8_t s[16];
        q3_K_scales(blk + offsetof(block_q3_K, scales), s);
        for (int g = 0; g < 16; ++g) sc[g] = s[g];
        d = half(offsetof(block_q3_K, d));
        return;
    }
    case dtype::q4_k:
    case dtype::q5_k:  // (a q5_K block starts as a q4_K block does: d, dmin, the 12 scale bytes)
        for (int g = 0; g < 8; ++g) {
            uint8_t s, m;
            scale_min_k4(g, blk + offsetof(block_q4_K, scales), s, m);
            sc[g] = s, mn[g] = m;
        }
        d = half(offsetof(block_q4_K, d)), dmin = half(offsetof(block_q4_K, dmin));
        return;
    case dtype::q6_k:
        for (int g = 0; g < 16; ++g) sc[g] = int8_t(blk[offsetof(block_q6_K, scales) + size_t(g)]);
        d = half(offsetof(block_q6_K, d));
        return;
    default: throw error("k_scales: the type is not q3_K, q4_K, q5_K or q6_K");
    }
}

namespace ref {
namespace {

// One row of W against one row of activations, in gemv_quant's float order: per block,
// acc += float(S)·(d_w·d_x) [+ m_w·(d_x·float(Σq_x))] for the 32-value types, and
// acc += float(I)·(d·d_x) − float(Mn)·(dmin·d_x) for the K-quants, I and Mn the block's integer sums.
float dot_row(dtype t, const uint8_t* w, const block_q8_0* a0, const block_q8_K* aK, int64_t K) {
    float acc = 0.0f;
    if (traits(t).block == qk_k) {
        for (int64_t b = 0; b < K / qk_k; ++b) {
            const block_q8_K& a = aK[b];
            int q[qk_k];  // the codes, as the dequantizer reads them, before any offset
            int sc[16], mn[16] = {}, gsize = 16, offset = 0;
            float d = 0, dmin = 0;
            switch (t) {
            case dtype::q2_k: {
                const auto blk = load_block<block_q2_K>(w, b);
                for (int e = 0; e < qk_k; ++e) q[e] = blk.qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3;
                for (int g = 0; g < 16; ++g) sc[g] = blk.scales[g] & 0xF, mn[g] = blk.scales[g] >> 4;
                d = f16_to_f32(blk.d), dmin = f16_to_f32(blk.dmin);
                break;
            }
            case dtype::q3_k: {
                const auto blk = load_block<block_q3_K>(w, b);
                int8_t s[16];
                q3_K_scales(blk.scales, s);
                for (int e = 0; e < qk_k; ++e)
                    q[e] = (blk.qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3) + (blk.hmask[e % 32] >> (e / 32) & 1 ? 4 : 0);
                for (int g = 0; g < 16; ++g) sc[g] = s[g];
                d = f16_to_f32(blk.d), offset = 4;
                break;
            }
            case dtype::q4_k:
            case dtype::q5_k: {
                const bool five = t == dtype::q5_k;
                const auto b4 = five ? block_q4_K{} : load_block<block_q4_K>(w, b);
                const auto b5 = five ? load_block<block_q5_K>(w, b) : block_q5_K{};
                const uint8_t* qs = five ? b5.qs : b4.qs;
                for (int e = 0; e < qk_k; ++e)
                    q[e] = (qs[32 * (e / 64) + e % 32] >> (4 * (e % 64 / 32)) & 0xF) + (five && (b5.qh[e % 32] >> (e / 32) & 1) ? 16 : 0);
                for (int g = 0; g < 8; ++g) {
                    uint8_t s, m;
                    scale_min_k4(g, five ? b5.scales : b4.scales, s, m);
                    sc[g] = s, mn[g] = m;
                }
                d = f16_to_f32(five ? b5.d : b4.d), dmin = f16_to_f32(five ? b5.dmin : b4.dmin), gsize = 32;
                break;
            }
            default: {  // q6_K
                const auto blk = load_block<block_q6_K>(w, b);
                for (int e = 0; e < qk_k; ++e) {
                    const int h = e / 128, j = e % 128 / 32, l = e % 32;
                    q[e] = (blk.ql[64 * h + 32 * (j % 2) + l] >> (4 * (j / 2)) & 0xF) | (blk.qh[32 * h + l] >> (2 * j) & 3) << 4;
                }
                for (int g = 0; g < 16; ++g) sc[g] = blk.scales[g];
                d = f16_to_f32(blk.d), offset = 32;
                break;
            }
            }
            // I = Σ_g sc_g·Σ_{e∈g} (q_e − offset)·q_x,e;  Mn = Σ_g m_g·Σ_{e∈g} q_x,e
            int32_t I = 0, Mn = 0;
            for (int g = 0; g < qk_k / gsize; ++g) {
                int32_t s = 0, sx = 0;
                for (int e = g * gsize; e < (g + 1) * gsize; ++e) s += (q[e] - offset) * a.qs[e], sx += a.qs[e];
                I += sc[g] * s;
                Mn += mn[g] * sx;
            }
            acc = acc + (float(I) * (d * a.d) - float(Mn) * (dmin * a.d));
        }
        return acc;
    }
    for (int64_t b = 0; b < K / 32; ++b) {
        const block_q8_0& a = a0[b];
        const float dx = f16_to_f32(a.d);
        int q[32], offset = 0;
        float d, m = 0;
        bool has_min = false;
        switch (t) {
        case dtype::q4_0: {
            const auto blk = load_block<block_q4_0>(w, b);
            for (int j = 0; j < 16; ++j) q[j] = blk.qs[j] & 0xF, q[j + 16] = blk.qs[j] >> 4;
            d = f16_to_f32(blk.d), offset = 8;
            break;
        }
        case dtype::q4_1: {
            const auto blk = load_block<block_q4_1>(w, b);
            for (int j = 0; j < 16; ++j) q[j] = blk.qs[j] & 0xF, q[j + 16] = blk.qs[j] >> 4;
            d = f16_to_f32(blk.d), m = f16_to_f32(blk.m), has_min = true;
            break;
        }
        case dtype::q5_0:
        case dtype::q5_1: {
            const bool one = t == dtype::q5_1;
            const auto b0 = one ? block_q5_0{} : load_block<block_q5_0>(w, b);
            const auto b1 = one ? load_block<block_q5_1>(w, b) : block_q5_1{};
            uint32_t qh;
            std::memcpy(&qh, one ? b1.qh : b0.qh, 4);
            const uint8_t* qs = one ? b1.qs : b0.qs;
            for (int j = 0; j < 16; ++j) q[j] = (qs[j] & 0xF) | (qh >> j & 1) << 4, q[j + 16] = (qs[j] >> 4) | (qh >> (j + 16) & 1) << 4;
            d = f16_to_f32(one ? b1.d : b0.d), m = one ? f16_to_f32(b1.m) : 0.0f, offset = one ? 0 : 16, has_min = one;
            break;
        }
        default: {  // iq4_nl
            const auto blk = load_block<block_iq4_nl>(w, b);
            for (int j = 0; j < 16; ++j) q[j] = kvalues_iq4nl[blk.qs[j] & 0xF], q[j + 16] = kvalues_iq4nl[blk.qs[j] >> 4];
            d = f16_to_f32(blk.d);
            break;
        }
        }
        int32_t S = 0, sx = 0;
        for (int j = 0; j < 32; ++j) S += (q[j] - offset) * a.q[j], sx += a.q[j];
        acc = acc + float(S) * (d * dx);
        if (has_min) acc = acc + m * (dx * float(sx));
    }
    return acc;
}

}  // namespace

void gemv_quant(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
                int64_t n_begin, int64_t n_end) {
    const int64_t K = W.n_cols;
    const bool k_quant = traits(W.type).block == qk_k;
    std::vector<block_q8_0> a0(size_t(k_quant ? 0 : K / 32));
    std::vector<block_q8_K> aK(size_t(k_quant ? K / qk_k : 0));
    for (int64_t m = 0; m < M; ++m) {
        if (k_quant) ref::quantize_q8_K(x + m * ldx, K, aK.data());
        else wf::ref::quantize_q8_0(x + m * ldx, K, a0.data());
        for (int64_t n = n_begin; n < n_end; ++n)
            y[m * ldy + n] = dot_row(W.type, row_as_stored(W, n), a0.data(), aK.data(), K) + (bias ? bias[n] : 0.0f);
    }
}

thread_local bool scalar_trials = false;

}  // namespace ref
}  // namespace wf
