// Model-agnostic numerical kernels on raw pointers. Every kernel in namespace wf has a scalar twin of the same
// signature in namespace wf::ref; tests/test-kernels.cpp checks each pair on random data at odd sizes.
//
// Kernels know nothing of threads: matmul takes the column range [n_begin, n_end) of y that its caller owns and
// the row-wise kernels take a row or element count, so a caller (nn/ops.cpp) hands each thread a slice.
// Scratch memory lives in per-thread buffers that grow once and are reused: no allocation per call.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace wf {

// y (M×N, row stride ldy) = x (M×K, row stride ldx) · Wᵀ + bias, W = (N×K) in a computed storage type; bias may
// be null. Writes only columns [n_begin, n_end) of y. For q8_0 weights the activations are quantized to q8_0
// blocks (as ggml does) and the dot products run in integers; so for q4_0, q5_0 and iq4_nl (their rows re-blocked
// exactly as q8_0 from 16 rows on), q4_1 and q5_1 (as codes and minimums per 32 from 16 rows on), q3_K … q6_K (on
// q8_K activations at every M, integer sums over whole super-blocks from 16 rows on: the values of their decode bit
// for bit), and for every block type below 16 rows (on q8_0 or q8_K activations: kernels/quants.h); otherwise (q2_K
// from 16 rows on, a minimum per 16) weights are widened to f32.
inline bool matmul_quantizes_activations(dtype w, int64_t M) {
    return w == dtype::q8_0 || traits(w).to_q8_0 || traits(w).to_codes32 || traits(w).to_codes16 || (M < 16 && w != dtype::f32 && w != dtype::f16 && w != dtype::bf16);
}
// The block of that quantization: 256 (q8_K) for the K-quants, else 32 (q8_0); 0 when x stays f32.
inline int64_t matmul_activation_block(dtype w, int64_t M) {
    if (!matmul_quantizes_activations(w, M)) return 0;
    return traits(w).block == 256 ? 256 : 32;
}
void matmul(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
            int64_t n_begin, int64_t n_end);
// The rows of x that matmul's f32 tile takes in one sweep of W (bytes; more than 1.5 times this are given to it in
// parts of at most this, each swept by all of W): about half of L2. A variable for the tests (same results in parts)
// and benchmarks (what the parts gain); the engine never changes it.
extern int64_t matmul_part_bytes;
// The codes, scales (and minimums, for to_codes32's types) the prefill tile decodes a row of W into: in vectors for
// q4_K, q5_K and q6_K, else the type's to_codes32 / to_codes16 (dtype.h), which are the vector decoders' scalar twins.
void prefill_codes(dtype t, const uint8_t* src, int8_t* q, float* d, float* m, int64_t n);

// Per row of n: y = (x − mean) / sqrt(var + eps) · gamma + beta (biased variance, as torch.nn.LayerNorm).
void layer_norm(const float* x, int64_t M, int64_t n, const float* gamma, const float* beta, float eps, float* y);
// Per row of n: y = x / sqrt(mean(x²) + eps) · gamma (RMSNorm: Llama, Qwen2, Mistral, T5).
void rms_norm(const float* x, int64_t M, int64_t n, const float* gamma, float eps, float* y);
// In place: gate[i] = silu(gate[i]) · up[i], silu(v) = v / (1 + e^−v): the gated feed-forward of SwiGLU.
void silu_mul(float* gate, const float* up, int64_t n);
// Rotary position embedding, in place: in each of n_rows rows (stride ld) and each of n_head heads of head_dim
// values, the first rot_dim values are rotated pairwise by the angles pos[row]·inv_freq[i], i < rot_dim/2.
// neox: pairs (i, i + rot_dim/2), Hugging Face's rotate_half; else (2i, 2i + 1), llama.cpp's "normal" layout
// (its GGUF llama files have Q and K rows permuted to match). The angle is rounded to f32 as PyTorch forms it.
void rope(float* x, int64_t n_rows, int64_t ld, int n_head, int head_dim, int rot_dim, const int32_t* pos, const float* inv_freq, bool neox);
// In place. gelu_erf: x·Φ(x) (BERT "gelu"); gelu_tanh: the tanh approximation (GPT-2 "gelu_new").
void gelu_erf(float* x, int64_t n);
void gelu_tanh(float* x, int64_t n);
// In place, numerically stable (max subtracted). A row whose entries are all −inf (or NaN) becomes all zeros.
void softmax(float* x, int64_t n);
// log Σ exp(x[i]) (a log-softmax's normalizer), NaN entries counted as −inf; −inf when every entry is. The exponentials
// in f32, summed in f32 over runs of 256 values and in double across them.
double log_sum_exp(const float* x, int64_t n);
// The index of the first of the largest entries, NaN counted as −inf; −1 when every entry is −inf or NaN (greedy
// decoding's choice over a vocabulary).
int64_t argmax(const float* x, int64_t n);
// An output layer's screen (nn/head-screen.h), per row i < n: upper[i] = a[i] + e_i, e_i = (err[i]·alpha + norm[i]·beta)
// + c·|a[i]| (a compiler may fuse a multiply and an add: the bound's room covers a few roundings either way); returns
// the largest a[i] − e_i (−inf for n = 0). An a[i] of −inf makes upper[i] NaN, which reaches no threshold.
float screen_bounds(const float* a, const float* err, const float* norm, float alpha, float beta, float c, float* upper, int64_t n);
// How many x[i] (i < n) are ≥ t; the first `max` of their indices, ascending, go to idx.
int64_t indices_at_least(const float* x, int64_t n, float t, int32_t* idx, int64_t max);
// y += x
void add(float* y, const float* x, int64_t n);
// y *= x, element by element (a gated feed-forward's product after its activation)
void mul(float* y, const float* x, int64_t n);
// out[i, :] = table[ids[i], :] widened to f32; ids must be < table.n_rows (checked by the caller).
void embed(const matrix_view& table, const int32_t* ids, int64_t n_ids, float* out);
// Σ a[i]·b[i]
float dot(const float* a, const float* b, int64_t n);
// y += alpha·x
void axpy(float alpha, const float* x, float* y, int64_t n);
// dst = srcᵀ: dst[c·ldd + r] = src[r·lds + c] for r < rows, c < cols. Cache-friendly for a band of a few rows (a
// loader's band of 16 stored rows: each column's values land as one run of 64 bytes).
void transpose(const float* src, int64_t rows, int64_t cols, int64_t lds, float* dst, int64_t ldd);

// The forms of relaxed SIMD's integer tiles (matmul_q7, matmul_u7; kernels/matmul-q8.cpp, quad_step), which compute
// the same integers: chosen, the one matmul takes on this machine; add, the int8 dot product with its accumulation
// (one instruction on x86 with AVX-VNNI); pairs, the int8 dot product into int16 pairs, widened (relaxed_pairs); twin,
// the same packed layout in scalar code (also where the instance runs no relaxed SIMD).
enum class relaxed_form { chosen, add, pairs, twin };
// Whether the relaxed tiles take their pair form in this instance: where it runs relaxed SIMD and its int8 dot
// product with accumulation is not one instruction (kernels/relaxed.h, relaxed_dot_fused).
bool relaxed_pairs();
// matmul with relaxed SIMD, from 16 rows on, for q8_0 weights and iq4_nl (re-blocked as q8_0): x quantized to 7
// bits by quantize_q7, per block Σ q_w·q_x in int32 scaled by d_w·d_x. Its tile is relaxed SIMD's int8 dot product
// where the instance runs it (kernels/relaxed.h), in the form asked for, else the same packed layout in scalar code.
void matmul_q7(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
               int64_t n_begin, int64_t n_end, relaxed_form form = relaxed_form::chosen);
// Whether matmul takes matmul_q7 for these weights and rows in this instance.
bool matmul_takes_q7(dtype w, int64_t M);
// matmul with relaxed SIMD, from 16 rows on, for the block types whose codes fit in 7 bits (u7_computes: q4_0, q5_0,
// q4_1, q5_1, q3_K, q4_K, q5_K, q6_K): the weights' codes are the int8 dot product's 7-bit operand, x is quantized as
// on the plain integer tiles (q8_0; q8_K for the K-quants), and the results equal those tiles' bit for bit (same
// integers, same float steps). Its tile is relaxed SIMD in the form asked for where the instance runs it, else the
// same packed layout in scalar code.
void matmul_u7(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
               int64_t n_begin, int64_t n_end, relaxed_form form = relaxed_form::chosen);
bool u7_computes(dtype w);
// Whether matmul takes matmul_u7 for these weights and rows in this instance.
bool matmul_takes_u7(dtype w, int64_t M);
// Whether matmul takes its f32 tile (f32, f16, bf16 and q2_K weights: from 6 rows of x on, or fewer rows whose K values
// outgrow L1) with relaxed SIMD's f32x4.relaxed_madd in this instance: fused, one rounding, where the CPU has FMA.
bool matmul_fuses(dtype w, int64_t M, int64_t K);
// n floats (a multiple of 32) per block of 32 as whole numbers in [−63, 63] (q, rounded half away from zero) at
// scale d = amax / 63 (f32, one per block): the activations of matmul's relaxed-SIMD integer tile, whose int8 dot
// product needs one operand in 7 bits (kernels/matmul-q8.cpp, gemm_q7).
void quantize_q7(const float* x, int64_t n, int8_t* q, float* d);

namespace ref {
void matmul(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
            int64_t n_begin, int64_t n_end);
// The codes, scales (and minimums, for to_codes32's types) the prefill tile decodes a row of W into: in vectors for
// q4_K, q5_K and q6_K, else the type's to_codes32 / to_codes16 (dtype.h), which are the vector decoders' scalar twins.
void prefill_codes(dtype t, const uint8_t* src, int8_t* q, float* d, float* m, int64_t n);
void layer_norm(const float* x, int64_t M, int64_t n, const float* gamma, const float* beta, float eps, float* y);
void rms_norm(const float* x, int64_t M, int64_t n, const float* gamma, float eps, float* y);
void silu_mul(float* gate, const float* up, int64_t n);
void rope(float* x, int64_t n_rows, int64_t ld, int n_head, int head_dim, int rot_dim, const int32_t* pos, const float* inv_freq, bool neox);
void gelu_erf(float* x, int64_t n);
void gelu_tanh(float* x, int64_t n);
void softmax(float* x, int64_t n);
double log_sum_exp(const float* x, int64_t n);  // in double throughout
int64_t argmax(const float* x, int64_t n);
float screen_bounds(const float* a, const float* err, const float* norm, float alpha, float beta, float c, float* upper, int64_t n);
int64_t indices_at_least(const float* x, int64_t n, float t, int32_t* idx, int64_t max);
void add(float* y, const float* x, int64_t n);
void mul(float* y, const float* x, int64_t n);
void embed(const matrix_view& table, const int32_t* ids, int64_t n_ids, float* out);
float dot(const float* a, const float* b, int64_t n);
void axpy(float alpha, const float* x, float* y, int64_t n);
void transpose(const float* src, int64_t rows, int64_t cols, int64_t lds, float* dst, int64_t ldd);
void quantize_q8_0(const float* x, int64_t n, block_q8_0* out);  // the twin of dtype.h's (SIMD, in rowwise.cpp)
void quantize_q7(const float* x, int64_t n, int8_t* q, float* d);
// The twin of matmul's relaxed-SIMD path (gemm_q7): x quantized by quantize_q7, W's rows as q8_0 (re-blocked for
// q4_0, q5_0, iq4_nl), per block Σ q_w·q_x in integers scaled by d_w·d_x, the blocks summed in order, then the bias.
void matmul_q7(const float* x, int64_t M, int64_t ldx, const matrix_view& W, const float* bias, float* y, int64_t ldy,
               int64_t n_begin, int64_t n_end);
}  // namespace ref

}  // namespace wf
