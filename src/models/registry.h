// The architectures the engine runs, as one explicit table (registry.cpp), and loading a model from its files.
//
// Each family lives in one file (models/<family>.cpp) that defines its `architecture`: the names it answers to
// (config.json's model_type and architectures, GGUF's general.architecture), the interfaces its models implement,
// how it reads its hyper-parameters from config.json and from GGUF metadata, its table of llama.cpp tensor
// names, and its build function. Adding a family is that file, one line in registry.cpp's table and its test.
// (The table is explicit: self-registering statics would be dropped by the linker from a static library.)
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "formats/file-set.h"
#include "formats/gguf-source.h"
#include "nn/model.h"

namespace wf {

// The interfaces (nn/model.h) a family's models implement, known before any weight is read.
enum capability : uint32_t { cap_encoder = 1, cap_masked_lm = 2, cap_causal_lm = 4, cap_seq2seq = 8 };

struct architecture {
    std::string_view name;                                // "bert"
    std::span<const std::string_view> hf_model_types;     // config.json "model_type"
    std::span<const std::string_view> hf_architectures;   // config.json "architectures"[0]
    std::span<const std::string_view> gguf_architectures; // GGUF "general.architecture"
    uint32_t capabilities;
    hparams (*from_config)(const json& config, const std::string& file);  // unvalidated; the loader validates
    hparams (*from_gguf)(const gguf_file& g);  // null for a family without GGUF names (never matched)
    gguf_name_table gguf_names;
    std::unique_ptr<model> (*build)(const hparams& hp, const tensor_source& src, const storage_plan& plan);
};

std::span<const architecture* const> architectures();
// The family a config.json names (model_type, else architectures[0]); errors list the supported names.
const architecture& architecture_for_config(const json& config, const std::string& file);
const architecture& architecture_for_gguf(const gguf_file& g);

// config.json text → validated hyper-parameters of its family.
hparams parse_config(std::string_view text, const std::string& file = "config.json");

struct load_options {
    dtype_option dtype;          // "dtype": auto | as_stored | f32 | f16 | bf16 | q8_0
    int64_t memory_budget = 0;   // bytes the engine may allocate for weights, one full KV cache and scratch; 0: no limit
    // The caller hands the file bytes to this load alone (the JavaScript API: each load streams its own copy into wasm
    // memory and drops it afterwards): the loader may rewrite them in place (storage_plan::rewrite_file_bytes), so
    // they must not be read as the file again, whether the load succeeds or not.
    bool files_writable = false;
};

struct loaded_model {
    const architecture* arch = nullptr;
    std::unique_ptr<model> m;
    std::string dtype;                      // what the dtype option became ("f32", "as_stored", …)
    bool quantized = false;                 // the matrices converted to a block type (dtype q8_0, q4_0, …)
    std::shared_ptr<const file_set> files;  // kept while the weights are views into the file bytes
};

// A Hugging Face folder (config.json + model.safetensors or a sharded index) or one .gguf file (or the parts of a
// split one) → a model.
// Errors name the file and the field or tensor at fault.
loaded_model load_model(std::shared_ptr<const file_set> files, const load_options& opt = {});
// The same from a GGUF file already parsed (its bytes are in `files`).
loaded_model load_gguf_model(const gguf_file& g, std::shared_ptr<const file_set> files, const load_options& opt = {});

// Bytes the engine allocates beyond the file for a model stored per `plan`: the matrices it owns, vectors as
// f32, one KV cache of the model's full context (causal models) and scratch for a full-length pass.
int64_t estimate_memory(const hparams& hp, uint32_t capabilities, const tensor_source& src, const storage_plan& plan);

}  // namespace wf
