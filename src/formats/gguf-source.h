// The tensors of a GGUF file under their Hugging Face names, so that a model reads GGUF and safetensors through
// the same names. Each architecture gives its table of llama.cpp ↔ Hugging Face names (models/*.cpp).
#pragma once

#include <map>
#include <span>
#include <string>
#include <utility>

#include "formats/gguf.h"
#include "formats/tensor-source.h"

namespace wf {

using name_pair = std::pair<const char*, const char*>;  // (llama.cpp name, Hugging Face name)

struct gguf_name_table {
    std::span<const name_pair> global;  // whole-model tensors: "token_embd.weight" ↔ "transformer.wte.weight"
    std::span<const name_pair> layer;   // per block: "blk.N." + first ↔ layer_prefix + N + "." + second
    const char* layer_prefix = "";      // "transformer.h."
};

class gguf_source : public tensor_source {
public:
    // Names the table does not know keep their GGUF names (e.g. BERT's cls.predictions.*, which llama.cpp lacks).
    gguf_source(const gguf_file& g, const gguf_name_table& names);
    const raw_tensor* find(const std::string& name) const override;
    std::vector<const raw_tensor*> tensors() const override;

private:
    std::map<std::string, raw_tensor> tensors_;
};

}  // namespace wf
