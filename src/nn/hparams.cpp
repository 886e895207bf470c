#include "nn/hparams.h"

#include <cmath>
#include <utility>

namespace wf {

void validate_hparams(const hparams& hp, const std::string& what) {
    auto cap = [&](const char* name, int64_t v, int64_t lo, int64_t hi) {
        if (v < lo || v > hi)
            throw error(what + ": " + name + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    };
    cap("vocab size", hp.n_vocab, 1, 1 << 20);
    cap("hidden size", hp.n_embd, 1, 8192);
    cap("layer count", hp.n_layer, 1, 128);
    cap("attention heads", hp.n_head, 1, 1024);
    cap("key/value heads", hp.n_head_kv, 1, hp.n_head);
    cap("feed-forward size", hp.n_ff, 1, 65536);
    cap("position count", hp.n_ctx, 1, 8192);
    cap("token type count", hp.n_type_vocab, 0, 1024);
    if (hp.n_embd % hp.n_head != 0)
        throw error(what + ": the hidden size (" + std::to_string(hp.n_embd) + ") is not a multiple of the number of attention heads (" +
                    std::to_string(hp.n_head) + ")");
    if (hp.n_head % hp.n_head_kv != 0)
        throw error(what + ": the attention heads (" + std::to_string(hp.n_head) + ") are not a multiple of the key/value heads (" +
                    std::to_string(hp.n_head_kv) + ")");
    if (!(hp.eps > 0.0f && hp.eps <= 0.1f)) throw error(what + ": layer norm epsilon " + std::to_string(hp.eps) + " is outside (0, 0.1]");
    for (auto [name, id] : {std::pair{"bos_token_id", hp.bos_token_id}, {"eos_token_id", hp.eos_token_id}, {"pad_token_id", hp.pad_token_id}})
        if (id < -1 || id >= hp.n_vocab) throw error(what + ": " + name + " = " + std::to_string(id) + " is not a token id");
}

activation parse_activation(const std::string& name, const std::string& what, const char* key) {
    if (name == "gelu") return activation::gelu_erf;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return activation::gelu_tanh;
    throw error(what + ": " + key + " \"" + name + "\" is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh)");
}

int64_t config_int(const json& j, const char* key, int64_t dflt, const std::string& file) {
    if (!j.contains(key) || j[key].is_null()) return dflt;
    return json_int(j, key, file, INT64_MIN, INT64_MAX);
}

double config_float(const json& j, const char* key, double dflt, const std::string& file) {
    if (!j.contains(key) || j[key].is_null()) return dflt;
    return json_number(j, key, file);
}

std::string config_string(const json& j, const char* key, const std::string& dflt, const std::string& file) {
    if (!j.contains(key) || j[key].is_null()) return dflt;
    return json_string(j, key, file);
}

hparams gguf_common_hparams(const gguf_file& g, const std::string& arch) {
    auto u = [&](const std::string& k) {
        const uint64_t v = g.get_uint(arch + "." + k);
        if (v > (1u << 30)) throw error(g.file_name + ": " + arch + "." + k + " = " + std::to_string(v) + " is too large");
        return int64_t(v);
    };
    hparams hp;
    hp.n_layer = u("block_count");
    hp.n_ctx = u("context_length");
    hp.n_embd = u("embedding_length");
    hp.n_ff = u("feed_forward_length");
    hp.n_head = u("attention.head_count");
    hp.n_head_kv = g.has(arch + ".attention.head_count_kv") ? u("attention.head_count_kv") : hp.n_head;
    if (g.has(arch + ".attention.layer_norm_epsilon")) hp.eps = float(g.get_float(arch + ".attention.layer_norm_epsilon"));
    const gguf_tensor* emb = g.find("token_embd.weight");
    if (!emb || emb->ne.size() != 2) throw error(g.file_name + ": missing or malformed tensor \"token_embd.weight\"");
    hp.n_vocab = emb->ne[1];
    return hp;
}

}  // namespace wf
