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
    cap("position count", hp.n_ctx, 1, max_context);
    cap("token type count", hp.n_type_vocab, 0, 1024);
    cap("token embedding width", hp.n_embd_token, 0, 8192);
    cap("label count", int64_t(hp.labels.size()), 0, 1 << 16);
    cap("head width", hp.n_head_dim, 0, 1024);
    if (hp.n_dec_layer > 0) {  // an encoder–decoder
        cap("decoder layer count", hp.n_dec_layer, 1, 128);
        cap("decoder attention heads", hp.n_dec_head, 1, 1024);
        cap("decoder feed-forward size", hp.n_dec_ff, 1, 65536);
        if (hp.n_head_dim == 0 && hp.n_embd % hp.n_dec_head != 0)
            throw error(what + ": the hidden size (" + std::to_string(hp.n_embd) + ") is not a multiple of the number of decoder attention heads (" +
                        std::to_string(hp.n_dec_head) + ")");
        cap("decoder_start_token_id", hp.decoder_start_token_id, 0, hp.n_vocab - 1);
    }
    if (hp.n_head_dim == 0 && hp.n_embd % hp.n_head != 0)
        throw error(what + ": the hidden size (" + std::to_string(hp.n_embd) + ") is not a multiple of the number of attention heads (" +
                    std::to_string(hp.n_head) + ")");
    if (hp.n_head % hp.n_head_kv != 0)
        throw error(what + ": the attention heads (" + std::to_string(hp.n_head) + ") are not a multiple of the key/value heads (" +
                    std::to_string(hp.n_head_kv) + ")");
    cap("rotary dimensions", hp.n_rot, 0, hp.head_dim());
    if (hp.n_rot % 2 != 0) throw error(what + ": rotary dimensions (" + std::to_string(hp.n_rot) + ") must be even");
    if (!(hp.rope_theta > 0.0f && std::isfinite(hp.rope_theta))) throw error(what + ": rope_theta " + std::to_string(hp.rope_theta) + " must be positive");
    cap("sliding window", hp.sliding_window, 0, 1 << 30);
    cap("sliding window pattern", hp.sliding_window_pattern, 0, 1024);
    for (auto [name, v] : {std::pair{"attention soft cap", hp.attn_softcap}, {"final logit soft cap", hp.final_softcap}, {"attention scale", hp.attn_scale},
                           {"norm weight offset", hp.norm_weight_offset}})
        if (!(v >= 0.0f && v <= 1e6f)) throw error(what + ": " + name + " " + std::to_string(v) + " is outside [0, 1e6]");
    if (!(hp.embedding_multiplier > 0.0f && hp.embedding_multiplier <= 1e6f))
        throw error(what + ": embedding multiplier " + std::to_string(hp.embedding_multiplier) + " is outside (0, 1e6]");
    const auto& rs = hp.rope_scaling;
    if (!rs.type.empty()) {
        if (rs.type != "linear" && rs.type != "llama3")
            throw error(what + ": rope_scaling type \"" + rs.type + "\" is not supported (supported: linear, llama3)");
        if (!(rs.factor >= 1.0f && rs.factor <= 1024.0f)) throw error(what + ": rope_scaling factor " + std::to_string(rs.factor) + " is outside [1, 1024]");
        if (rs.type == "llama3" && !(rs.low_freq_factor > 0.0f && rs.high_freq_factor > rs.low_freq_factor && rs.original_ctx > 0))
            throw error(what + ": rope_scaling needs 0 < low_freq_factor < high_freq_factor and original_max_position_embeddings > 0");
    }
    if (!(hp.eps > 0.0f && hp.eps <= 0.1f)) throw error(what + ": layer norm epsilon " + std::to_string(hp.eps) + " is outside (0, 0.1]");
    for (auto [name, id] : {std::pair{"bos_token_id", hp.bos_token_id}, {"eos_token_id", hp.eos_token_id}, {"pad_token_id", hp.pad_token_id}})
        if (id < -1 || id >= hp.n_vocab) throw error(what + ": " + name + " = " + std::to_string(id) + " is not a token id");
}

std::vector<float> hparams::rope_inv_freq() const {
    const int64_t dims = n_rot > 0 ? n_rot : head_dim();
    std::vector<float> f(size_t(dims / 2));
    for (int64_t i = 0; i < dims / 2; ++i) {
        // as Hugging Face: 1 / theta^(2i/d), the exponent and power in f32
        float inv = 1.0f / std::pow(rope_theta, float(2 * i) / float(dims));
        if (rope_scaling.type == "linear") {
            inv /= rope_scaling.factor;
        } else if (rope_scaling.type == "llama3") {  // modeling_rope_utils' _compute_llama3_parameters
            const float pi = 3.14159265358979323846f;
            const float wavelen = 2 * pi / inv;
            const float low_wavelen = float(rope_scaling.original_ctx) / rope_scaling.low_freq_factor;
            const float high_wavelen = float(rope_scaling.original_ctx) / rope_scaling.high_freq_factor;
            if (wavelen > low_wavelen) {
                inv /= rope_scaling.factor;  // long wavelengths: slowed down
            } else if (wavelen >= high_wavelen) {  // the band between: interpolated
                const float smooth = (float(rope_scaling.original_ctx) / wavelen - rope_scaling.low_freq_factor) /
                                     (rope_scaling.high_freq_factor - rope_scaling.low_freq_factor);
                inv = (1 - smooth) * inv / rope_scaling.factor + smooth * inv;
            }  // short wavelengths: kept
        }
        f[size_t(i)] = inv;
    }
    return f;
}

activation parse_activation(const std::string& name, const std::string& what, const char* key) {
    if (name == "gelu") return activation::gelu_erf;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return activation::gelu_tanh;
    if (name == "relu") return activation::relu;
    if (name == "tanh") return activation::tanh;
    if (name == "silu" || name == "swish") return activation::silu;
    throw error(what + ": " + key + " \"" + name + "\" is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, tanh, silu, swish)");
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

bool config_bool(const json& j, const char* key, bool dflt, const std::string& file) {
    if (!j.contains(key) || j[key].is_null()) return dflt;
    if (!j[key].is_boolean()) throw error(file + ": " + key + " must be true or false");
    return j[key].get<bool>();
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

void read_encoder_head(const json& j, const std::string& file, hparams& hp) {
    static const std::pair<const char*, const char*> suffixes[] = {
        {"ForMaskedLM", "masked_lm"}, {"ForSequenceClassification", "sequence_classification"},
        {"ForTokenClassification", "token_classification"}, {"ForQuestionAnswering", "question_answering"},
        {"ForPreTraining", "pretraining"}, {"Model", ""}};
    hp.head.clear();
    if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() && j["architectures"][0].is_string()) {
        const std::string a = j["architectures"][0].get<std::string>();
        bool known = false;
        for (auto [suffix, head] : suffixes) {
            const std::string_view s = suffix;
            if (a.size() > s.size() && a.compare(a.size() - s.size(), s.size(), s) == 0) hp.head = head, known = true;
            if (known) break;
        }
        if (!known) throw error(file + ": architecture \"" + a + "\" has a head this engine does not know");
    }
    // labels: id2label ({"0": "NEGATIVE", …}), else num_labels → LABEL_0 …
    hp.labels.clear();
    if (j.contains("id2label") && !j["id2label"].is_null()) {
        const json& m = j["id2label"];
        if (!m.is_object() || m.size() > (1u << 16)) throw error(file + ": id2label must be an object of at most 65536 labels");
        hp.labels.resize(m.size());
        std::vector<bool> seen(m.size());
        for (auto it = m.begin(); it != m.end(); ++it) {
            size_t id = 0, used = 0;
            try {
                id = std::stoul(it.key(), &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used == 0 || used != it.key().size() || id >= m.size() || seen[id])
                throw error(file + ": id2label key \"" + it.key().substr(0, 40) + "\" is not one of the ids 0 … " + std::to_string(m.size() - 1));
            if (!it.value().is_string()) throw error(file + ": id2label[\"" + it.key() + "\"] must be a string");
            seen[id] = true;
            hp.labels[id] = it.value().get<std::string>();
        }
    }
    if (const int64_t n = config_int(j, "num_labels", -1, file); n >= 0) {
        if (n > (1 << 16)) throw error(file + ": num_labels = " + std::to_string(n) + " is outside [0, 65536]");
        if (!hp.labels.empty() && int64_t(hp.labels.size()) != n)
            throw error(file + ": num_labels = " + std::to_string(n) + " but id2label has " + std::to_string(hp.labels.size()) + " labels");
        for (int64_t i = int64_t(hp.labels.size()); i < n; ++i) hp.labels.push_back("LABEL_" + std::to_string(i));
    }
    const std::string problem = config_string(j, "problem_type", "", file);
    if (!problem.empty() && problem != "single_label_classification" && problem != "multi_label_classification" && problem != "regression")
        throw error(file + ": problem_type \"" + problem + "\" is not one of single_label_classification, multi_label_classification, regression");
    hp.multi_label = problem == "multi_label_classification";
}

void read_gguf_classifier(const gguf_file& g, const std::string& arch, hparams& hp) {
    const gguf_tensor* out = g.find("cls.output.weight");
    if (!out) return;
    if (out->ne.size() != 2 || out->ne[1] < 1 || out->ne[1] > (1 << 16))
        throw error(g.file_name + ": cls.output.weight (the classifier) must be a matrix of 1 to 65536 rows");
    const int64_t n = out->ne[1];
    hp.head = "sequence_classification";
    hp.labels.clear();
    if (const std::string key = arch + ".classifier.output_labels"; g.has(key)) {
        hp.labels = g.get_strings(key);
        if (int64_t(hp.labels.size()) != n)
            throw error(g.file_name + ": " + key + " names " + std::to_string(hp.labels.size()) + " labels but cls.output.weight has " +
                        std::to_string(n) + " rows");
    } else {
        for (int64_t i = 0; i < n; ++i) hp.labels.push_back("LABEL_" + std::to_string(i));
    }
}

}  // namespace wf
