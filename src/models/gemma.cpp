// Gemma (Hugging Face's modeling_gemma.py): Llama's decoder with the token embeddings scaled by √hidden_size, RMS
// norms that scale by (1 + w), a GELU-tanh gate (GeGLU; config.json's hidden_activation), a head width of its own
// (head_dim 256) and a tied output matrix. llama.cpp's converter stores the norms' weights as 1 + w already.
#include <cmath>

#include "models/llama.h"

namespace wf::models {
namespace {

hparams from_config(const json& j, const std::string& file) {
    hparams hp = llama_config(with_defaults(j, {{"hidden_act", "gelu_pytorch_tanh"}}), file);
    hp.act = parse_activation(config_string(j, "hidden_activation", "gelu_pytorch_tanh", file), file, "hidden_activation");
    hp.embedding_multiplier = std::sqrt(float(hp.n_embd));
    hp.norm_weight_offset = 1.0f;
    return hp;
}

hparams from_gguf(const gguf_file& g) {
    hparams hp = llama_gguf(g, "gemma", true);
    hp.act = activation::gelu_tanh;
    hp.embedding_multiplier = std::sqrt(float(hp.n_embd));
    return hp;
}

constexpr std::string_view model_types[] = {"gemma"};
constexpr std::string_view hf_architectures[] = {"GemmaForCausalLM"};
constexpr std::string_view gguf_architectures[] = {"gemma"};

}  // namespace

extern const architecture gemma_architecture = {
    "gemma", model_types, hf_architectures, gguf_architectures, cap_causal_lm, from_config, from_gguf, llama_gguf_names,
    build_decoder_with<llama_layout>};

}  // namespace wf::models
