// Checkpoint tensors → the engine's weight structures (used while a model is constructed; the model keeps what
// release() hands over).
//
// weight_store checks every tensor's shape against the hyper-parameters, converts matrices to the storage type
// asked for (or keeps them as stored), transposes GPT-2's Conv1D (in, out) matrices to (out, in) — the one place
// that happens — and owns whatever it had to copy. Views into the caller's file bytes are kept only where the
// stored layout is already the one the kernels read (or becomes it in place: storage_plan::rewrite_file_bytes).
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "formats/tensor-source.h"
#include "kernels/kernels.h"

namespace wf {

// The `dtype` load option (JS API, CLI): the storage type of the weight matrices.
//   auto      — as stored, except f16/bf16 matrices widened to f32 when the f32 model fits in 1 GiB (wasm has no
//               half-precision arithmetic, so widening once at load is faster and exact);
//   as_stored — the file's own types (views into the file where possible: the least memory);
//   f32 | f16 | bf16 | q8_0 | q6_k … q2_k, q4_0 … q5_1, iq4_nl — converted at load, each block type by ggml's
//               reference quantizer (transformers.js's names fp32, fp16, q8, q4 are accepted too); below 6 bits per
//               weight the vocabulary matrices (token embeddings, output layer) become q8_0 (llama.cpp keeps them at
//               q6_K; here q8_0 is faster and closer: weights.cpp).
// Files' 4-bit and K-quant matrices (Q4_0 … Q6_K, IQ4_NL) are computed as stored under auto and as_stored.
struct dtype_option {
    enum class mode { automatic, as_stored, convert } how = mode::automatic;
    dtype to = dtype::f32;  // for convert
    static dtype_option parse(std::string_view name);  // error names the value and lists the accepted ones
    std::string name() const;
};

// What the loader does with each matrix: keep it as stored (a view into the file where the layout allows: the
// least memory, the file stays alive), or own every matrix, each stored type mapped to a target type.
struct storage_plan {
    bool as_stored = true;
    dtype to[std::size(all_dtypes)] = {};  // per stored type, when !as_stored
    static storage_plan keep() { return {}; }
    // Matrices of this many rows (the vocabulary's: embeddings, output layer) become kVocabType instead, when
    // vocab_rows > 0 and !as_stored.
    static constexpr dtype kVocabType = dtype::q8_0;
    int64_t vocab_rows = 0;
    // The file's bytes belong to this load alone (load_options::files_writable): a q8_0, q4_0, q5_0 or iq4_nl matrix kept as a view
    // into them is grouped by 4 rows in place where that reads faster, as an owned one is (no copy; the file's bytes
    // are then no longer the file).
    bool rewrite_file_bytes = false;
    // Every matrix to t; with n_vocab, below 6.5 bits per weight, the vocabulary matrices to q8_0.
    static storage_plan convert_all(dtype t, int64_t n_vocab = 0);
    static storage_plan widen_halves();  // f16, bf16 → f32; the other types kept (owned)
    // The type a (· × cols) matrix stored as `stored` gets: the plan's type when cols is a whole number of its
    // blocks, else the stored type (matmul computes every type of the table: weights.cpp states the memory each
    // costs); a type it did not compute would become q8_0 (re-blocked exactly) or f32.
    // rows: the matrix's (0: not known, the vocabulary rule does not apply).
    dtype target(dtype stored, int64_t cols, int64_t rows = 0) const;
};

struct linear {
    matrix_view w;             // (out, in)
    const float* b = nullptr;  // (out) or null
};
// Rows [first, first + n) of a matrix (and its bias), as a matrix of their own: a fused projection's part (Phi-3's
// qkv_proj, ModernBERT's Wqkv and Wi), no copy. Of a grouped matrix (dtype.h: group_rows_layout), whole groups only (lin's groupable).
linear rows_of(const linear& l, int64_t first, int64_t n);
struct norm {
    const float* g = nullptr;  // (n)
    const float* b = nullptr;  // (n) or null
};

class weight_store {
public:
    weight_store(const tensor_source& src, const storage_plan& plan) : src_(src), plan_(plan) {}
    // The first of `names` that exists; error naming all of them if none does.
    const raw_tensor& get(const std::vector<std::string>& names) const;
    const raw_tensor* try_get(const std::vector<std::string>& names) const;
    // A matrix of shape (rows, cols). transposed: the file holds (cols, rows) (GPT-2 Conv1D) and it is transposed.
    // convertible = false: kept as stored (tables read a row at a time, such as position embeddings).
    // groupable = false: a matrix of group_rows_layout's types is not grouped by 4 rows (see dtype.h), for one that rows_of
    // splits where a group would be cut (a part not a multiple of 4 rows).
    matrix_view matrix(const raw_tensor& t, int64_t rows, int64_t cols, bool transposed = false, bool convertible = true, bool groupable = true);
    // An f32 vector of n values (biases, norm parameters), always an owned, aligned copy. row_shaped: the file may
    // also hold it as (1, n) (Marian's final_logits_bias).
    const float* vector(const raw_tensor& t, int64_t n, bool row_shaped = false);
    linear lin(const std::vector<std::string>& w, const std::vector<std::string>& b, int64_t out, int64_t in, bool transposed = false,
               bool groupable = true);
    norm ln(const std::vector<std::string>& g, const std::vector<std::string>& b, int64_t n);
    // True when the tensor `a` holds the same values as `b` (a tied output matrix saved twice).
    static bool same(const raw_tensor& a, const raw_tensor& b);
    int64_t owned_bytes() const { return owned_bytes_; }
    // True when some matrix is a view into the source's bytes (which must then outlive the model).
    bool borrows() const { return borrows_; }
    // Hands the owned buffers to the model; the store (and its source) can then go.
    std::vector<std::unique_ptr<uint8_t[]>> release() { return std::move(owned_); }

private:
    uint8_t* alloc(int64_t n_bytes, const std::string& what);
    matrix_view convert(const raw_tensor& t, int64_t rows, int64_t cols, bool transposed, bool convertible);
    const tensor_source& src_;
    storage_plan plan_;
    std::vector<std::unique_ptr<uint8_t[]>> owned_;
    int64_t owned_bytes_ = 0;
    bool borrows_ = false;
    // A borrowed tensor whose bytes are grouped in place, or kept as stored because a view of it as stored was handed
    // out first (true: grouped): every later view of it says the same.
    std::map<const raw_tensor*, bool> borrowed_grouped_;
    // A tensor asked for again (ALBERT's layers share one layer's weights) is converted once: the same view back.
    std::map<std::tuple<const raw_tensor*, int64_t, int64_t, bool, uint8_t>, matrix_view> matrices_;  // convertible | groupable << 1
    std::map<std::pair<const raw_tensor*, int64_t>, const float*> vectors_;
};

}  // namespace wf
