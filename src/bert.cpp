// BERT, following Hugging Face's modeling_bert.py (BertEmbeddings, BertLayer, BertLMPredictionHead):
//   x = LayerNorm(word[ids] + position[0..T) + token_type[types])
//   per layer (post-LN):  x = LayerNorm(x + Attention(x));  x = LayerNorm(x + W_down·GELU(W_up·x))
//   MLM head, at the rows asked for only:  logits = LayerNorm(GELU(W·h)) · word_embᵀ + bias
#include "bert.h"

#include <cmath>
#include <cstring>

#include "attention.h"
#include "kernels.h"
#include "threads.h"

namespace wf {

namespace {
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
}  // namespace

bert_model::bert_model(const hparams& hp, const tensor_source& src, weight_format fmt) : hp_(hp) {
    weight_store s(src, fmt);
    const int64_t E = hp.n_embd, F = hp.n_ff, V = hp.n_vocab;
    w_.word_emb = s.matrix(s.get(names("embeddings.word_embeddings.weight")), V, E);
    w_.pos_emb = s.matrix(s.get(names("embeddings.position_embeddings.weight")), hp.n_ctx, E, false, false);
    w_.type_emb = s.matrix(s.get(names("embeddings.token_type_embeddings.weight")), hp.n_type_vocab, E, false, false);
    w_.emb_norm = s.ln(names("embeddings.LayerNorm.weight"), names("embeddings.LayerNorm.bias"), E);
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        bert_layer L;
        L.query = s.lin(names(p + "attention.self.query.weight"), names(p + "attention.self.query.bias"), E, E);
        L.key = s.lin(names(p + "attention.self.key.weight"), names(p + "attention.self.key.bias"), E, E);
        L.value = s.lin(names(p + "attention.self.value.weight"), names(p + "attention.self.value.bias"), E, E);
        L.attn_out = s.lin(names(p + "attention.output.dense.weight"), names(p + "attention.output.dense.bias"), E, E);
        L.attn_norm = s.ln(names(p + "attention.output.LayerNorm.weight"), names(p + "attention.output.LayerNorm.bias"), E);
        L.ff_up = s.lin(names(p + "intermediate.dense.weight"), names(p + "intermediate.dense.bias"), F, E);
        L.ff_down = s.lin(names(p + "output.dense.weight"), names(p + "output.dense.bias"), E, F);
        L.ff_norm = s.ln(names(p + "output.LayerNorm.weight"), names(p + "output.LayerNorm.bias"), E);
        w_.layers.push_back(L);
    }
    w_.mlm_dense = s.lin(head_names("transform.dense.weight"), head_names("transform.dense.bias"), E, E);
    w_.mlm_norm = s.ln(head_names("transform.LayerNorm.weight"), head_names("transform.LayerNorm.bias"), E);
    w_.mlm_bias = s.vector(s.get({"cls.predictions.bias", "cls.predictions.decoder.bias"}), V);
    const raw_tensor* dec = s.try_get({"cls.predictions.decoder.weight"});
    const raw_tensor& word = s.get(names("embeddings.word_embeddings.weight"));
    const bool tied = !dec || (dec->data == word.data) ||
                      (dec->n_bytes == word.n_bytes && dec->type == word.type && std::memcmp(dec->data, word.data, size_t(dec->n_bytes)) == 0);
    w_.mlm_decoder = tied ? w_.word_emb : s.matrix(*dec, V, E);
    weight_bytes_ = s.owned_bytes();
    borrows_ = s.borrows();
    owned_ = s.release();
}

std::vector<float> bert_model::encode(const std::vector<int32_t>& ids, const std::vector<int32_t>& types, forward_trace* trace,
                                      const cancel_fn* cancel) const {
    const int64_t T = int64_t(ids.size()), E = hp_.n_embd, F = hp_.n_ff, H = hp_.n_head, D = hp_.head_dim();
    if (T == 0) throw error("bert: empty input");
    if (T > hp_.n_ctx) throw error("bert: input is " + std::to_string(T) + " tokens, the model takes at most " + std::to_string(hp_.n_ctx));
    for (int64_t i = 0; i < T; ++i) {
        if (ids[size_t(i)] < 0 || ids[size_t(i)] >= hp_.n_vocab) throw error("bert: token id " + std::to_string(ids[size_t(i)]) + " is out of range");
        if (!types.empty() && (types[size_t(i)] < 0 || types[size_t(i)] >= hp_.n_type_vocab))
            throw error("bert: token type " + std::to_string(types[size_t(i)]) + " is out of range (the model has " +
                        std::to_string(hp_.n_type_vocab) + ")");
    }
    std::vector<float> x(size_t(T * E)), tmp(size_t(T * E));
    std::vector<float> q(size_t(T * E)), k(size_t(T * E)), v(size_t(T * E)), a(size_t(T * E)), ff(size_t(T * F));

    // embeddings
    embed(w_.word_emb, ids.data(), T, x.data());
    std::vector<int32_t> pos(static_cast<size_t>(T)), ty(static_cast<size_t>(T), 0);
    for (int64_t i = 0; i < T; ++i) pos[size_t(i)] = int32_t(i);
    if (!types.empty()) ty = types;
    embed(w_.pos_emb, pos.data(), T, tmp.data());
    add(x.data(), tmp.data(), T * E);
    embed(w_.type_emb, ty.data(), T, tmp.data());
    add(x.data(), tmp.data(), T * E);
    layer_norm(x.data(), T, E, w_.emb_norm.g, w_.emb_norm.b, hp_.eps, x.data());
    if (trace && trace->want_hidden) trace->hidden.push_back(x);

    const auto gelu = hp_.act == activation::gelu_erf ? gelu_erf_threaded : gelu_tanh_threaded;
    for (int64_t l = 0; l < hp_.n_layer; ++l) {
        check_cancel(cancel);
        const bert_layer& L = w_.layers[size_t(l)];
        // self-attention
        matmul(x.data(), T, L.query.w, L.query.b, q.data());
        matmul(x.data(), T, L.key.w, L.key.b, k.data());
        matmul(x.data(), T, L.value.w, L.value.b, v.data());
        attention_args at{q.data(), E, k.data(), E, v.data(), E, a.data(), E, T, T, int(H), int(D), 1.0f / std::sqrt(float(D))};
        traced_attention(at, trace, int(l));
        matmul(a.data(), T, L.attn_out.w, L.attn_out.b, tmp.data());
        add(tmp.data(), x.data(), T * E);
        layer_norm(tmp.data(), T, E, L.attn_norm.g, L.attn_norm.b, hp_.eps, x.data());
        // feed-forward
        matmul(x.data(), T, L.ff_up.w, L.ff_up.b, ff.data());
        gelu(ff.data(), T * F);
        matmul(ff.data(), T, L.ff_down.w, L.ff_down.b, tmp.data());
        add(tmp.data(), x.data(), T * E);
        layer_norm(tmp.data(), T, E, L.ff_norm.g, L.ff_norm.b, hp_.eps, x.data());
        if (trace && trace->want_hidden) trace->hidden.push_back(x);
    }
    return x;
}

std::vector<float> bert_model::mlm_logits(const float* hidden, int64_t n) const {
    const int64_t E = hp_.n_embd, V = hp_.n_vocab;
    std::vector<float> h(size_t(n * E)), logits(size_t(n * V));
    matmul(hidden, n, w_.mlm_dense.w, w_.mlm_dense.b, h.data());
    (hp_.act == activation::gelu_erf ? gelu_erf_threaded : gelu_tanh_threaded)(h.data(), n * E);
    layer_norm(h.data(), n, E, w_.mlm_norm.g, w_.mlm_norm.b, hp_.eps, h.data());
    matmul(h.data(), n, w_.mlm_decoder, w_.mlm_bias, logits.data());
    return logits;
}

}  // namespace wf
