// Gemma 2 (Hugging Face's modeling_gemma2.py): Gemma with a norm on each sub-layer's output as well as its input
// (post_attention_layernorm is the attention OUTPUT's norm here; pre_/post_feedforward_layernorm the feed-forward's),
// soft-capped attention scores and logits (c·tanh(x / c)), queries scaled by query_pre_attn_scalar^−½, and a
// sliding window on every other layer (the even ones).
#include <cmath>

#include "models/llama.h"

namespace wf::models {
namespace {

decoder_layout layout() {
    decoder_layout l;
    l.post_attn_norm = "post_attention_layernorm";
    l.ffn_norm = "pre_feedforward_layernorm";
    l.post_ffn_norm = "post_feedforward_layernorm";
    return l;
}

void gemma2_common(hparams& hp) {
    hp.act = activation::gelu_tanh;
    hp.embedding_multiplier = std::sqrt(float(hp.n_embd));
    hp.sliding_window_pattern = 2;
}

hparams from_config(const json& j, const std::string& file) {
    hparams hp = llama_config(with_defaults(j, {{"hidden_act", "gelu_pytorch_tanh"}}), file);
    gemma2_common(hp);
    hp.act = parse_activation(config_string(j, "hidden_activation", "gelu_pytorch_tanh", file), file, "hidden_activation");
    hp.norm_weight_offset = 1.0f;
    hp.attn_softcap = float(config_float(j, "attn_logit_softcapping", 0.0, file));
    hp.final_softcap = float(config_float(j, "final_logit_softcapping", 0.0, file));
    const double q = config_float(j, "query_pre_attn_scalar", double(hp.head_dim()), file);
    if (!(q > 0)) throw error(file + ": query_pre_attn_scalar = " + std::to_string(q) + " must be positive");
    hp.attn_scale = float(1.0 / std::sqrt(q));
    hp.sliding_window = config_int(j, "sliding_window", 0, file);
    return hp;
}

hparams from_gguf(const gguf_file& g) {
    hparams hp = llama_gguf(g, "gemma2", true);
    gemma2_common(hp);
    if (g.has("gemma2.attn_logit_softcapping")) hp.attn_softcap = float(g.get_float("gemma2.attn_logit_softcapping"));
    if (g.has("gemma2.final_logit_softcapping")) hp.final_softcap = float(g.get_float("gemma2.final_logit_softcapping"));
    if (g.has("gemma2.attention.sliding_window"))
        hp.sliding_window = int64_t(std::min<uint64_t>(g.get_uint("gemma2.attention.sliding_window"), 1 << 30));
    // llama.cpp scales queries by head_dim^−½ (its 27B, too large for wasm32, by (hidden / heads)^−½)
    return hp;
}

constexpr name_pair gguf_layer[] = {
    {"attn_norm.weight", "input_layernorm.weight"},   {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_k.weight", "self_attn.k_proj.weight"},     {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"}, {"post_attention_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_norm.weight", "pre_feedforward_layernorm.weight"}, {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},          {"ffn_down.weight", "mlp.down_proj.weight"},
    {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"}};

constexpr std::string_view model_types[] = {"gemma2"};
constexpr std::string_view hf_architectures[] = {"Gemma2ForCausalLM"};
constexpr std::string_view gguf_architectures[] = {"gemma2"};

}  // namespace

extern const architecture gemma2_architecture = {
    "gemma2", model_types, hf_architectures, gguf_architectures, cap_causal_lm, from_config, from_gguf,
    {llama_gguf_global, gguf_layer, "model.layers."}, build_decoder_with<layout>};

}  // namespace wf::models
