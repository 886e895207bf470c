// The tensors of a checkpoint, whatever its format: names, storage types, shapes and views of the bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dtype.h"

namespace wf {

struct raw_tensor {
    std::string name;
    std::string file;            // for errors: the file (and, for GGUF, the tensor's name there)
    dtype type = dtype::f32;
    std::vector<int64_t> shape;  // PyTorch order (outermost first): (out, in) for a Linear weight
    const uint8_t* data = nullptr;
    int64_t n_bytes = 0;
    bool out_in = false;  // 2-D tensors are already (out, in) (GGUF), so GPT-2's Conv1D needs no transposition
};

class tensor_source {
public:
    virtual ~tensor_source() = default;
    // The tensor named `name`, or null. A tensor the source holds in a type the engine cannot read is an error
    // that names it and its type.
    virtual const raw_tensor* find(const std::string& name) const = 0;
    virtual std::vector<const raw_tensor*> tensors() const = 0;
};

}  // namespace wf
