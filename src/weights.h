// Checkpoint tensors → the engine's weight structures.
// (weight_store is used while a model is constructed; the model keeps what release() hands over.)
//
// A tensor_source lists the tensors of a checkpoint (safetensors shards or a GGUF file) in PyTorch shape order
// (outermost first). weight_store turns them into matrix views and f32 vectors: it checks every shape against the
// config, converts on request (f32 / f16 / q8_0), transposes GPT-2's Conv1D (in, out) matrices to (out, in) — the
// one place that happens — and owns whatever it had to copy. Views into the caller's file bytes are kept only
// where the stored layout is already the one the kernels read.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels.h"

namespace wf {

struct raw_tensor {
    std::string name;
    std::string file;
    dtype type = dtype::f32;
    std::vector<int64_t> shape;  // PyTorch order: (out, in) for a Linear weight
    const uint8_t* data = nullptr;
    int64_t n_bytes = 0;
    bool out_in = false;  // 2-D tensors are already (out, in) (GGUF), so GPT-2's Conv1D needs no transposition
};

class tensor_source {
public:
    virtual ~tensor_source() = default;
    virtual const raw_tensor* find(const std::string& name) const = 0;
    virtual std::vector<std::string> names() const = 0;
};

// What to store matrices as: as in the file, or converted at load time to save memory.
enum class weight_format { as_stored, f32, f16, q8_0 };
const char* weight_format_name(weight_format f);

struct linear {
    matrix_view w;            // (out, in)
    const float* b = nullptr;  // (out) or null
};
struct norm {
    const float* g = nullptr;  // (n)
    const float* b = nullptr;  // (n)
};

class weight_store {
public:
    weight_store(const tensor_source& src, weight_format fmt) : src_(src), fmt_(fmt) {}
    // The first of `names` that exists; error naming all of them if none does.
    const raw_tensor& get(const std::vector<std::string>& names) const;
    const raw_tensor* try_get(const std::vector<std::string>& names) const;
    // A matrix of shape (rows, cols). transposed: the file holds (cols, rows) (GPT-2 Conv1D) and it is transposed.
    matrix_view matrix(const raw_tensor& t, int64_t rows, int64_t cols, bool transposed = false, bool convertible = true);
    // An f32 vector of n values (biases, norm parameters), always an owned, aligned copy.
    const float* vector(const raw_tensor& t, int64_t n);
    linear lin(const std::vector<std::string>& w, const std::vector<std::string>& b, int64_t out, int64_t in, bool transposed = false);
    norm ln(const std::vector<std::string>& g, const std::vector<std::string>& b, int64_t n);
    int64_t owned_bytes() const { return owned_bytes_; }
    // True when some matrix is a view into the source's bytes (which must then outlive the model).
    bool borrows() const { return borrows_; }
    // Hands the owned buffers to the model; the store (and its source) can then go.
    std::vector<std::unique_ptr<uint8_t[]>> release() { return std::move(owned_); }

private:
    uint8_t* alloc(int64_t n_bytes, const std::string& what);
    const tensor_source& src_;
    weight_format fmt_;
    std::vector<std::unique_ptr<uint8_t[]>> owned_;
    int64_t owned_bytes_ = 0;
    bool borrows_ = false;
};

// Bytes the engine will allocate to hold a model's matrices in format `fmt` (rows × cols each).
int64_t matrix_bytes(int64_t rows, int64_t cols, dtype t);

}  // namespace wf
