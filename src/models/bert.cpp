// BERT, following Hugging Face's modeling_bert.py (BertEmbeddings, BertLayer, BertLMPredictionHead):
//   x = LayerNorm(word[ids] + position[0..T) + token_type[types])
//   per layer (post-LN):  x = LayerNorm(x + Attention(x));  x = LayerNorm(x + W_down·GELU(W_up·x))
//   MLM head, at the rows asked for only:  logits = LayerNorm(GELU(W·h)) · word_embᵀ + bias
// Sequences of a batch run through every matrix product together; attention keeps each to its own tokens.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "models/registry.h"
#include "nn/ops.h"

namespace wf::models {
namespace {

struct layer {
    linear query, key, value;  // (E, E) each
    linear attn_out;           // (E, E)
    norm attn_norm;            // LayerNorm after attention + residual
    linear ff_up;              // (F, E)
    linear ff_down;            // (E, F)
    norm ff_norm;              // LayerNorm after feed-forward + residual
};

// Old checkpoints say LayerNorm.gamma / .beta where newer ones say .weight / .bias.
std::string legacy_layer_norm(const std::string& n) {
    for (auto [from, to] : {std::pair{"LayerNorm.weight", "LayerNorm.gamma"}, {"LayerNorm.bias", "LayerNorm.beta"}}) {
        const auto p = n.rfind(from);
        if (p != std::string::npos && p + std::strlen(from) == n.size()) return n.substr(0, p) + to;
    }
    return {};
}
// Hugging Face names, with and without the "bert." prefix, and their legacy forms.
std::vector<std::string> names(const std::string& n) {
    std::vector<std::string> out = {"bert." + n, n};
    if (const std::string old = legacy_layer_norm(n); !old.empty()) out.insert(out.end(), {"bert." + old, old});
    return out;
}
std::vector<std::string> head_names(const std::string& n) {
    std::vector<std::string> out = {"cls.predictions." + n};
    if (const std::string old = legacy_layer_norm(n); !old.empty()) out.push_back("cls.predictions." + old);
    return out;
}

class bert final : public model, public masked_lm {
public:
    bert(const hparams& hp, const tensor_source& src, const storage_plan& plan) : model(hp) {
        weight_store s(src, plan);
        const int64_t E = hp.n_embd, F = hp.n_ff, V = hp.n_vocab;
        const raw_tensor& word = s.get(names("embeddings.word_embeddings.weight"));
        word_emb_ = s.matrix(word, V, E);
        pos_emb_ = s.matrix(s.get(names("embeddings.position_embeddings.weight")), hp.n_ctx, E, false, false);
        type_emb_ = s.matrix(s.get(names("embeddings.token_type_embeddings.weight")), hp.n_type_vocab, E, false, false);
        emb_norm_ = s.ln(names("embeddings.LayerNorm.weight"), names("embeddings.LayerNorm.bias"), E);
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string p = "encoder.layer." + std::to_string(l) + ".";
            auto lin = [&](const std::string& n, int64_t out, int64_t in) { return s.lin(names(p + n + ".weight"), names(p + n + ".bias"), out, in); };
            auto ln = [&](const std::string& n) { return s.ln(names(p + n + ".weight"), names(p + n + ".bias"), E); };
            layers_.push_back({lin("attention.self.query", E, E), lin("attention.self.key", E, E), lin("attention.self.value", E, E),
                               lin("attention.output.dense", E, E), ln("attention.output.LayerNorm"), lin("intermediate.dense", F, E),
                               lin("output.dense", E, F), ln("output.LayerNorm")});
        }
        mlm_dense_ = s.lin(head_names("transform.dense.weight"), head_names("transform.dense.bias"), E, E);
        mlm_norm_ = s.ln(head_names("transform.LayerNorm.weight"), head_names("transform.LayerNorm.bias"), E);
        mlm_bias_ = s.vector(s.get({"cls.predictions.bias", "cls.predictions.decoder.bias"}), V);
        const raw_tensor* dec = s.try_get({"cls.predictions.decoder.weight"});
        mlm_decoder_ = !dec || weight_store::same(*dec, word) ? word_emb_ : s.matrix(*dec, V, E);  // tied unless its own
        keep(s);
    }
    const encoder* as_encoder() const override { return this; }
    const masked_lm* as_masked_lm() const override { return this; }

    void encode(const token_batch& in, float* x, arena& scratch, forward_trace* trace, const cancel_fn* cancel) const override {
        const int64_t B = in.n_seq, T = in.n_tokens, N = B * T, E = hp_.n_embd, F = hp_.n_ff, H = hp_.n_head, D = hp_.head_dim();
        check(in);
        scratch.reset();
        float* tmp = scratch.alloc<float>(N * E);
        float* q = scratch.alloc<float>(N * E);
        float* k = scratch.alloc<float>(N * E);
        float* v = scratch.alloc<float>(N * E);
        float* a = scratch.alloc<float>(N * E);
        float* ff = scratch.alloc<float>(N * F);
        int32_t* pos = scratch.alloc<int32_t>(N);
        uint8_t* valid = scratch.alloc<uint8_t>(N);  // padding keys are never attended
        for (int64_t b = 0; b < B; ++b)
            for (int64_t t = 0; t < T; ++t) pos[b * T + t] = int32_t(t), valid[b * T + t] = t < in.lengths[size_t(b)];
        const bool padded = std::any_of(in.lengths.begin(), in.lengths.end(), [&](int64_t n) { return n < T; });

        // embeddings
        embed(word_emb_, in.ids.data(), N, x);
        embed(pos_emb_, pos, N, tmp);
        add(x, tmp, N * E);
        if (in.types.empty()) {  // token type 0 everywhere
            dequantize_row(type_emb_, 0, tmp);
            for (int64_t i = 0; i < N; ++i) add(x + i * E, tmp, E);
        } else {
            embed(type_emb_, in.types.data(), N, tmp);
            add(x, tmp, N * E);
        }
        apply(emb_norm_, hp_.eps, x, N, E, x);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);

        for (int64_t l = 0; l < hp_.n_layer; ++l) {
            check_cancel(cancel);
            const layer& L = layers_[size_t(l)];
            // self-attention, each sequence over its own tokens
            apply(L.query, x, N, q);
            apply(L.key, x, N, k);
            apply(L.value, x, N, v);
            for (int64_t b = 0; b < B; ++b) {
                attention_args at{q + b * T * E, E, k + b * T * E, E, v + b * T * E, E, a + b * T * E, E, T, T, int(H), int(D),
                                  1.0f / std::sqrt(float(D))};
                at.key_valid = padded ? valid + b * T : nullptr;
                attend(at, b == 0 ? trace : nullptr, int(l));
            }
            apply(L.attn_out, a, N, tmp);
            add(tmp, x, N * E);
            apply(L.attn_norm, hp_.eps, tmp, N, E, x);
            // feed-forward
            apply(L.ff_up, x, N, ff);
            activate(hp_.act, ff, N * F);
            apply(L.ff_down, ff, N, tmp);
            add(tmp, x, N * E);
            apply(L.ff_norm, hp_.eps, tmp, N, E, x);
            if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        }
    }

    void mlm_logits(const float* hidden, int64_t n, float* logits, arena& scratch) const override {
        const int64_t E = hp_.n_embd;
        scratch.reset();
        float* h = scratch.alloc<float>(n * E);
        apply(mlm_dense_, hidden, n, h);
        activate(hp_.act, h, n * E);
        apply(mlm_norm_, hp_.eps, h, n, E, h);
        apply(linear{mlm_decoder_, mlm_bias_}, h, n, logits);
    }

private:
    void check(const token_batch& in) const {
        const int64_t T = in.n_tokens;
        if (in.n_seq < 1 || T < 1) throw error("bert: empty input");
        if (T > hp_.n_ctx) throw error("bert: input is " + std::to_string(T) + " tokens, the model takes at most " + std::to_string(hp_.n_ctx));
        if (int64_t(in.ids.size()) != in.n_seq * T || int64_t(in.lengths.size()) != in.n_seq || (!in.types.empty() && in.types.size() != in.ids.size()))
            throw error("bert: batch arrays do not match its shape");
        for (int64_t n : in.lengths)
            if (n < 1 || n > T) throw error("bert: sequence length " + std::to_string(n) + " is outside [1, " + std::to_string(T) + "]");
        for (size_t i = 0; i < in.ids.size(); ++i) {
            if (in.ids[i] < 0 || in.ids[i] >= hp_.n_vocab) throw error("bert: token id " + std::to_string(in.ids[i]) + " is out of range");
            if (!in.types.empty() && (in.types[i] < 0 || in.types[i] >= hp_.n_type_vocab))
                throw error("bert: token type " + std::to_string(in.types[i]) + " is out of range (the model has " + std::to_string(hp_.n_type_vocab) + ")");
        }
    }

    matrix_view word_emb_;  // (V, E)
    matrix_view pos_emb_;   // (P, E)
    matrix_view type_emb_;  // (n_type_vocab, E)
    norm emb_norm_;
    std::vector<layer> layers_;
    linear mlm_dense_;         // (E, E): cls.predictions.transform.dense
    norm mlm_norm_;            // cls.predictions.transform.LayerNorm
    matrix_view mlm_decoder_;  // (V, E): the word embeddings (tied) unless the file has its own
    const float* mlm_bias_ = nullptr;  // (V)
};

hparams from_config(const json& j, const std::string& file) {
    hparams hp;
    hp.n_vocab = config_int(j, "vocab_size", 30522, file);
    hp.n_embd = config_int(j, "hidden_size", 768, file);
    hp.n_layer = config_int(j, "num_hidden_layers", 12, file);
    hp.n_head = hp.n_head_kv = config_int(j, "num_attention_heads", 12, file);
    hp.n_ff = config_int(j, "intermediate_size", 3072, file);
    hp.n_ctx = config_int(j, "max_position_embeddings", 512, file);
    hp.n_type_vocab = config_int(j, "type_vocab_size", 2, file);
    hp.eps = float(config_float(j, "layer_norm_eps", 1e-12, file));
    hp.act = parse_activation(config_string(j, "hidden_act", "gelu", file), file, "hidden_act");
    hp.pad_token_id = config_int(j, "pad_token_id", 0, file);
    const std::string pos = config_string(j, "position_embedding_type", "absolute", file);
    if (pos != "absolute") throw error(file + ": position_embedding_type \"" + pos + "\" is not supported (only \"absolute\")");
    if (hp.n_type_vocab < 1) throw error(file + ": token type count = " + std::to_string(hp.n_type_vocab) + " is outside [1, 1024]");
    return hp;
}

hparams from_gguf(const gguf_file& g) {
    hparams hp = gguf_common_hparams(g, "bert");
    hp.act = activation::gelu_erf;
    const gguf_tensor* types = g.find("token_types.weight");
    hp.n_type_vocab = types && types->ne.size() == 2 ? types->ne[1] : 2;
    if (g.has("bert.attention.causal") && g.kv.at("bert.attention.causal").u != 0)
        throw error(g.file_name + ": bert.attention.causal is true, which BERT fill-mask does not support");
    return hp;
}

constexpr name_pair gguf_global[] = {
    {"token_embd.weight", "bert.embeddings.word_embeddings.weight"},
    {"position_embd.weight", "bert.embeddings.position_embeddings.weight"},
    {"token_types.weight", "bert.embeddings.token_type_embeddings.weight"},
    {"token_embd_norm.weight", "bert.embeddings.LayerNorm.weight"},
    {"token_embd_norm.bias", "bert.embeddings.LayerNorm.bias"}};
constexpr name_pair gguf_layer[] = {
    {"attn_q.weight", "attention.self.query.weight"}, {"attn_q.bias", "attention.self.query.bias"},
    {"attn_k.weight", "attention.self.key.weight"}, {"attn_k.bias", "attention.self.key.bias"},
    {"attn_v.weight", "attention.self.value.weight"}, {"attn_v.bias", "attention.self.value.bias"},
    {"attn_output.weight", "attention.output.dense.weight"}, {"attn_output.bias", "attention.output.dense.bias"},
    {"attn_output_norm.weight", "attention.output.LayerNorm.weight"}, {"attn_output_norm.bias", "attention.output.LayerNorm.bias"},
    {"ffn_up.weight", "intermediate.dense.weight"}, {"ffn_up.bias", "intermediate.dense.bias"},
    {"ffn_down.weight", "output.dense.weight"}, {"ffn_down.bias", "output.dense.bias"},
    {"layer_output_norm.weight", "output.LayerNorm.weight"}, {"layer_output_norm.bias", "output.LayerNorm.bias"}};
// BERT's masked-LM head has no llama.cpp name (llama.cpp runs BERT for embeddings): it keeps its Hugging Face
// names (cls.predictions.*) inside the GGUF file, which is wasmformer's convention for BERT fill-mask GGUFs.

constexpr std::string_view model_types[] = {"bert"};
constexpr std::string_view hf_architectures[] = {"BertForMaskedLM", "BertModel", "BertForPreTraining"};
constexpr std::string_view gguf_architectures[] = {"bert"};

std::unique_ptr<model> build(const hparams& hp, const tensor_source& src, const storage_plan& plan) { return std::make_unique<bert>(hp, src, plan); }

}  // namespace

extern const architecture bert_architecture = {
    "bert", model_types, hf_architectures, gguf_architectures, cap_encoder | cap_masked_lm, from_config, from_gguf,
    {gguf_global, gguf_layer, "bert.encoder.layer."}, build};

}  // namespace wf::models
