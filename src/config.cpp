#include "config.h"

#include <cmath>

#include "json-util.h"

namespace wf {

const char* arch_name(arch a) { return a == arch::bert ? "bert" : "gpt2"; }

namespace {

int64_t int_or(const json& j, const char* key, int64_t dflt, const std::string& what) {
    if (!j.contains(key) || j[key].is_null()) return dflt;
    return json_int(j, key, what, INT64_MIN, INT64_MAX);
}

double float_or(const json& j, const char* key, double dflt, const std::string& what) {
    if (!j.contains(key) || j[key].is_null()) return dflt;
    return json_number(j, key, what);
}

activation parse_act(const std::string& name, const std::string& what, const char* key) {
    if (name == "gelu") return activation::gelu_erf;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return activation::gelu_tanh;
    throw error(what + ": " + key + " \"" + name + "\" is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh)");
}

}  // namespace

void validate_hparams(const hparams& hp, const std::string& what) {
    auto cap = [&](const char* name, int64_t v, int64_t lo, int64_t hi) {
        if (v < lo || v > hi)
            throw error(what + ": " + name + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    };
    cap("vocab size", hp.n_vocab, 1, 1 << 20);
    cap("hidden size", hp.n_embd, 1, 8192);
    cap("layer count", hp.n_layer, 1, 128);
    cap("attention heads", hp.n_head, 1, 1024);
    cap("feed-forward size", hp.n_ff, 1, 65536);
    cap("position count", hp.n_ctx, 1, 8192);
    if (hp.architecture == arch::bert) cap("token type count", hp.n_type_vocab, 1, 1024);
    if (hp.n_embd % hp.n_head != 0)
        throw error(what + ": the hidden size (" + std::to_string(hp.n_embd) + ") is not a multiple of the number of attention heads (" +
                    std::to_string(hp.n_head) + ")");
    if (!(hp.eps > 0.0f && hp.eps <= 0.1f)) throw error(what + ": layer norm epsilon " + std::to_string(hp.eps) + " is outside (0, 0.1]");
    for (auto [name, id] : {std::pair{"bos_token_id", hp.bos_token_id}, {"eos_token_id", hp.eos_token_id}, {"pad_token_id", hp.pad_token_id}})
        if (id < -1 || id >= hp.n_vocab) throw error(what + ": " + name + " = " + std::to_string(id) + " is not a token id");
}

hparams parse_config(std::string_view text, const std::string& file) {
    const json j = parse_json_strict(text, file, 1 << 20);
    if (!j.is_object()) throw error(file + ": must be a JSON object");
    std::string type = j.contains("model_type") ? json_string(j, "model_type", file) : "";
    std::string from_arch;
    if (j.contains("architectures")) {
        const json& a = j["architectures"];
        if (!a.is_array() || a.empty() || !a[0].is_string()) throw error(file + ": architectures must be a list of names");
        const std::string name = a[0].get<std::string>();
        if (name == "BertForMaskedLM" || name == "BertModel" || name == "BertForPreTraining") from_arch = "bert";
        else if (name == "GPT2LMHeadModel" || name == "GPT2Model") from_arch = "gpt2";
        else throw error(file + ": architecture \"" + name + "\" is not supported (supported: BertForMaskedLM, GPT2LMHeadModel)");
    }
    if (type.empty()) type = from_arch;
    if (type.empty()) throw error(file + ": neither model_type nor architectures says which model this is");
    if (!from_arch.empty() && from_arch != type)
        throw error(file + ": model_type \"" + type + "\" contradicts architectures[0] (a " + from_arch + " model)");
    hparams hp;
    if (type == "bert") {
        hp.architecture = arch::bert;
        hp.n_vocab = int_or(j, "vocab_size", 30522, file);
        hp.n_embd = int_or(j, "hidden_size", 768, file);
        hp.n_layer = int_or(j, "num_hidden_layers", 12, file);
        hp.n_head = int_or(j, "num_attention_heads", 12, file);
        hp.n_ff = int_or(j, "intermediate_size", 3072, file);
        hp.n_ctx = int_or(j, "max_position_embeddings", 512, file);
        hp.n_type_vocab = int_or(j, "type_vocab_size", 2, file);
        hp.eps = float(float_or(j, "layer_norm_eps", 1e-12, file));
        hp.act = parse_act(j.contains("hidden_act") ? json_string(j, "hidden_act", file) : "gelu", file, "hidden_act");
        hp.pad_token_id = int_or(j, "pad_token_id", 0, file);
        if (j.contains("position_embedding_type") && j["position_embedding_type"] != "absolute")
            throw error(file + ": position_embedding_type " + j["position_embedding_type"].dump() + " is not supported (only \"absolute\")");
    } else if (type == "gpt2") {
        hp.architecture = arch::gpt2;
        hp.n_vocab = int_or(j, "vocab_size", 50257, file);
        hp.n_embd = int_or(j, "n_embd", 768, file);
        hp.n_layer = int_or(j, "n_layer", 12, file);
        hp.n_head = int_or(j, "n_head", 12, file);
        hp.n_ff = int_or(j, "n_inner", 4 * hp.n_embd, file);
        hp.n_ctx = int_or(j, "n_positions", 1024, file);
        hp.eps = float(float_or(j, "layer_norm_epsilon", 1e-5, file));
        hp.act = parse_act(j.contains("activation_function") ? json_string(j, "activation_function", file) : "gelu_new", file,
                           "activation_function");
        hp.bos_token_id = int_or(j, "bos_token_id", -1, file);
        hp.eos_token_id = int_or(j, "eos_token_id", -1, file);
        if (j.contains("scale_attn_by_inverse_layer_idx") && j["scale_attn_by_inverse_layer_idx"] == true)
            throw error(file + ": scale_attn_by_inverse_layer_idx = true is not supported");
        if (j.contains("scale_attn_weights") && j["scale_attn_weights"] == false)
            throw error(file + ": scale_attn_weights = false is not supported");
    } else {
        throw error(file + ": model_type \"" + type + "\" is not supported (supported: bert, gpt2)");
    }
    validate_hparams(hp, file);
    return hp;
}

}  // namespace wf
