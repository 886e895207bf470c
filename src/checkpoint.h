// A model's files, by name, and loading a model from them (Hugging Face folders: config.json + model.safetensors
// or a sharded model.safetensors.index.json).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bert.h"
#include "gpt2.h"
#include "safetensors.h"

namespace wf {

// File name → bytes. Buffers are allocated first and filled afterwards (JavaScript streams downloads straight
// into them), and never move once allocated.
class file_set {
public:
    uint8_t* allocate(const std::string& name, int64_t size);
    void add(const std::string& name, std::vector<uint8_t> bytes);
    const std::vector<uint8_t>* get(const std::string& name) const;
    std::string_view text(const std::string& name) const;  // error if absent
    bool has(const std::string& name) const { return files_.count(name) != 0; }
    std::vector<std::string> names() const;
    void remove(const std::string& name) { files_.erase(name); }

private:
    std::map<std::string, std::unique_ptr<std::vector<uint8_t>>> files_;
};

// Tensors of one safetensors file or of the shards a model.safetensors.index.json lists.
class safetensors_source : public tensor_source {
public:
    explicit safetensors_source(const file_set& files, const st_limits& lim = {});
    const raw_tensor* find(const std::string& name) const override;
    std::vector<std::string> names() const override;

private:
    std::map<std::string, raw_tensor> tensors_;
    std::map<std::string, std::string> unsupported_;  // name → dtype, for a clear error if a model asks for it
};

struct load_options {
    weight_format format = weight_format::as_stored;
    int64_t memory_budget = 0;  // bytes the engine may allocate for weights and one full KV cache; 0: no limit
};

// Bytes the engine allocates for a model's weights in `fmt` (stored: `stored` bytes per weight, e.g. 4 for F32 files)
// plus one KV cache of the model's full context; checked against load_options::memory_budget before any allocation.
int64_t estimate_memory(const hparams& hp, weight_format fmt, double stored_bytes_per_weight);

struct model {
    hparams hp;
    std::shared_ptr<const file_set> files;  // kept while the weights are views into the file bytes
    std::unique_ptr<bert_model> bert;
    std::unique_ptr<gpt2_model> gpt2;
};

// config.json + safetensors weights → a model. Errors name the file and the field or tensor at fault.
model load_hf_model(std::shared_ptr<const file_set> files, const load_options& opt = {});
// A model from hyper-parameters and any tensor source; keeps `files` alive if the weights are views into them.
model build_model(const hparams& hp, const tensor_source& src, const load_options& opt, std::shared_ptr<const file_set> files);

}  // namespace wf
