// Models and tokenizers from a GGUF file (llama.cpp's "bert" and "gpt2" architectures).
#pragma once

#include "checkpoint.h"
#include "gguf.h"
#include "tokenizer.h"

namespace wf {

// Tensors of a GGUF file under their Hugging Face names, so the models read them like a safetensors checkpoint.
// The one table of llama.cpp ↔ Hugging Face names is in gguf-model.cpp.
class gguf_source : public tensor_source {
public:
    gguf_source(const gguf_file& g, arch a);
    const raw_tensor* find(const std::string& name) const override;
    std::vector<std::string> names() const override;

private:
    std::map<std::string, raw_tensor> tensors_;
};

hparams gguf_hparams(const gguf_file& g);
std::unique_ptr<tokenizer> gguf_tokenizer(const gguf_file& g, int64_t n_vocab);

}  // namespace wf
