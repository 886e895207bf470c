// Phi-3 (Hugging Face's modeling_phi3.py): Llama's decoder with Q, K and V in one matrix (qkv_proj) and the gate and
// up projections in one (gate_up_proj), read as views of their rows; a sliding window where the config sets one
// (Phi-3-mini-4k: 2047). LongRoPE (the 128k models' rope_scaling) is not supported.
#include "models/llama.h"

namespace wf::models {
namespace {

decoder_layout layout() {
    decoder_layout l;
    l.fused_qkv = true;
    l.fused_gate_up = true;
    return l;
}

hparams from_config(const json& j, const std::string& file) {
    hparams hp = llama_config(j, file);
    hp.sliding_window = config_int(j, "sliding_window", 0, file);
    if (hp.sliding_window < 0) throw error(file + ": sliding_window = " + std::to_string(hp.sliding_window) + " must be positive or null");
    return hp;
}

hparams from_gguf(const gguf_file& g) {
    if (g.find("rope_factors_long.weight") || g.find("rope_factors_short.weight"))
        throw error(g.file_name + ": LongRoPE (rope_factors_long / rope_factors_short: Phi-3's 128k models) is not supported");
    return llama_gguf(g, "phi3", true);
}

constexpr name_pair gguf_layer[] = {
    {"attn_norm.weight", "input_layernorm.weight"},      {"attn_qkv.weight", "self_attn.qkv_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"},   {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_up.weight", "mlp.gate_up_proj.weight"},        {"ffn_down.weight", "mlp.down_proj.weight"}};

constexpr std::string_view model_types[] = {"phi3"};
constexpr std::string_view hf_architectures[] = {"Phi3ForCausalLM"};
constexpr std::string_view gguf_architectures[] = {"phi3"};

}  // namespace

extern const architecture phi3_architecture = {
    "phi3", model_types, hf_architectures, gguf_architectures, cap_causal_lm, from_config, from_gguf,
    {llama_gguf_global, gguf_layer, "model.layers."}, build_decoder_with<layout>};

}  // namespace wf::models
