// Llama and the decoders built like it — Qwen2 (biases on Q, K and V), Mistral (a sliding window), Gemma and
// Gemma 2 (GeGLU, scaled embeddings, (1 + w) norms, soft-capping, norms after each sub-layer), Phi-3 (fused
// projections): one forward pass (llama.cpp), and per family a file (models/<family>.cpp) with its config.json
// defaults, its GGUF reading, its names and its layout. What differs between them is hyper-parameters (hparams:
// rotary layout and scaling, sliding windows, head width, soft caps), the layout (decoder_layout) and which
// optional tensors the checkpoint has (biases, an untied output matrix).
#pragma once

#include <memory>
#include <string>

#include "models/registry.h"

namespace wf::models {

// Where a family's layer keeps its tensors, under "model.layers.N." (Hugging Face's names), when not Llama's.
struct decoder_layout {
    std::string ffn_norm = "post_attention_layernorm";  // the norm before the feed-forward
    std::string post_attn_norm, post_ffn_norm;          // Gemma 2: norms of each sub-layer's output; "": none
    bool fused_qkv = false;      // Phi-3: self_attn.qkv_proj holds Q's, K's and V's rows
    bool fused_gate_up = false;  // Phi-3: mlp.gate_up_proj holds the gate's rows, then up's
};

// The decoder of modeling_llama.py on Hugging Face's names ("model.layers.N.self_attn.q_proj", …) with the
// family's layout; biases are read where the checkpoint has them.
std::unique_ptr<model> build_decoder(const hparams& hp, const tensor_source& src, const storage_plan& plan, const decoder_layout& layout);
// A family's `build` for its architecture entry.
template <decoder_layout (*layout)()>
std::unique_ptr<model> build_decoder_with(const hparams& hp, const tensor_source& src, const storage_plan& plan) {
    return build_decoder(hp, src, plan, layout());
}
inline decoder_layout llama_layout() { return {}; }

// config.json fields these families share under Llama's names (vocab_size, hidden_size, num_key_value_heads,
// head_dim, rope_theta, rope_scaling, tie_word_embeddings, …); the context is the trained one, at most max_context.
hparams llama_config(const json& j, const std::string& file);

// GGUF metadata as llama.cpp writes it for `arch` ("llama", "qwen2"): the common keys, the RMS norm's epsilon,
// rope.freq_base, rope.dimension_count, attention.key_length, rope.scaling.*. neox: whether llama.cpp rotates
// this architecture's pairs (i, i + d/2) — it does for Qwen2; for llama it permutes Q and K at conversion and
// rotates adjacent pairs.
hparams llama_gguf(const gguf_file& g, const std::string& arch, bool neox);

// llama.cpp's names for these architectures ↔ Hugging Face's.
inline constexpr name_pair llama_gguf_global[] = {
    {"token_embd.weight", "model.embed_tokens.weight"}, {"output_norm.weight", "model.norm.weight"}, {"output.weight", "lm_head.weight"}};
inline constexpr name_pair llama_gguf_layer[] = {
    {"attn_norm.weight", "input_layernorm.weight"},  {"attn_q.weight", "self_attn.q_proj.weight"}, {"attn_q.bias", "self_attn.q_proj.bias"},
    {"attn_k.weight", "self_attn.k_proj.weight"},    {"attn_k.bias", "self_attn.k_proj.bias"},     {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_v.bias", "self_attn.v_proj.bias"},        {"attn_output.weight", "self_attn.o_proj.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"}, {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},         {"ffn_down.weight", "mlp.down_proj.weight"}};
inline constexpr gguf_name_table llama_gguf_names = {llama_gguf_global, llama_gguf_layer, "model.layers."};

}  // namespace wf::models
