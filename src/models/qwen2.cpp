// Qwen2 and Qwen2.5 (Hugging Face's modeling_qwen2.py): Llama's decoder with biases on the Q, K and V projections
// (read where the checkpoint has them: models/llama.cpp), rope_theta 1e6 and a sliding window that its configs
// switch off (use_sliding_window false). llama.cpp rotates Qwen2's pairs in NeoX's layout and does not permute Q/K.
#include "models/llama.h"

namespace wf::models {
namespace {

hparams from_config(const json& j, const std::string& file) {
    hparams hp = llama_config(j, file);
    if (j.contains("use_sliding_window") && j["use_sliding_window"] == true)
        throw error(file + ": use_sliding_window = true is not supported for Qwen2 (its released models switch it off)");
    return hp;
}
hparams from_gguf(const gguf_file& g) { return llama_gguf(g, "qwen2", true); }

constexpr std::string_view model_types[] = {"qwen2"};
constexpr std::string_view hf_architectures[] = {"Qwen2ForCausalLM"};
constexpr std::string_view gguf_architectures[] = {"qwen2"};

}  // namespace

extern const architecture qwen2_architecture = {
    "qwen2", model_types, hf_architectures, gguf_architectures, cap_causal_lm, from_config, from_gguf, llama_gguf_names, build_decoder_with<llama_layout>};

}  // namespace wf::models
