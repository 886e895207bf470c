// Mistral (Hugging Face's modeling_mistral.py): Llama's decoder where a query sees itself and the sliding_window − 1
// positions before it (Mistral 7B v0.1: 4096; later versions set it to null: no window). llama.cpp converts
// Mistral to its "llama" architecture (and runs it without the window); those GGUF files load as llama.
#include "models/llama.h"

namespace wf::models {
namespace {

hparams from_config(const json& j, const std::string& file) {
    hparams hp = llama_config(j, file);
    hp.sliding_window = config_int(j, "sliding_window", 0, file);
    if (hp.sliding_window < 0) throw error(file + ": sliding_window = " + std::to_string(hp.sliding_window) + " must be positive or null");
    return hp;
}

constexpr std::string_view model_types[] = {"mistral"};
constexpr std::string_view hf_architectures[] = {"MistralForCausalLM"};

}  // namespace

extern const architecture mistral_architecture = {
    "mistral", model_types, hf_architectures, {}, cap_causal_lm, from_config, nullptr, {}, build_decoder_with<llama_layout>};

}  // namespace wf::models
