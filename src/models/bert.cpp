// The BERT encoder, following Hugging Face's modeling_bert.py (BertEmbeddings, BertLayer, the heads), and the
// families that share its forward pass under other names (models/bert.h: DistilBERT, RoBERTa, ELECTRA, ALBERT):
//   x = LayerNorm(word[ids] + position[offset + 0..T) + token_type[types])   (ELECTRA, ALBERT: then a projection)
//   per layer (post-LN):  x = LayerNorm(x + Attention(x));  x = LayerNorm(x + W_down·act(W_up·x))
//     (the last layer at the rows a task reads only — batch.out_rows — with keys and values from every token)
//   heads, at the rows a task asks for only:
//     masked LM   logits = LayerNorm(act(W·h)) · word_embᵀ + bias
//     sequence    logits = W_out·act(W·h[first token]) + b     (BERT: the pooler, tanh; RoBERTa: tanh; …)
//     token/span  logits = W_out·h + b                        (NER labels; QA start and end)
// Sequences of a batch run through every matrix product together; attention keeps each to its own tokens.
#include "models/bert.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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

class bert final : public model, public masked_lm {
public:
    bert(const hparams& hp, const tensor_source& src, const storage_plan& plan, const bert_layout& lay)
        : model(hp), family_(lay.family), position_offset_(hp.position_offset) {
        weight_store s(src, plan);
        auto names = [&](const std::string& n) {  // with each prefix, and the legacy LayerNorm names
            std::vector<std::string> out;
            for (const std::string& p : lay.prefixes) out.push_back(p + n);
            if (const std::string old = legacy_layer_norm(n); !old.empty())
                for (const std::string& p : lay.prefixes) out.push_back(p + old);
            return out;
        };
        auto lin = [&](const std::string& n, int64_t out, int64_t in) { return s.lin(names(n + ".weight"), names(n + ".bias"), out, in); };
        auto ln = [&](const std::string& n, int64_t width) { return s.ln(names(n + ".weight"), names(n + ".bias"), width); };
        const int64_t E = hp.n_embd, F = hp.n_ff, V = hp.n_vocab, Et = hp.n_embd_token ? hp.n_embd_token : E;
        const raw_tensor& word = s.get(names(lay.word + ".weight"));
        word_emb_ = s.matrix(word, V, Et);
        pos_emb_ = s.matrix(s.get(names(lay.position + ".weight")), hp.n_ctx, Et, false, false);
        if (!lay.type.empty()) type_emb_ = s.matrix(s.get(names(lay.type + ".weight")), hp.n_type_vocab, Et, false, false);
        emb_norm_ = ln(lay.emb_norm, Et);
        if (Et != E) {
            if (lay.projection.empty()) throw error(family_ + ": the embedding width differs from the hidden size, and the family has no projection");
            projection_ = lin(lay.projection, E, Et);
        }
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string p = hp.n_layer_groups ? lay.layers + std::to_string(l * hp.n_layer_groups / hp.n_layer) + ".albert_layers.0."
                                                    : lay.layers + std::to_string(l) + ".";
            const auto& n = lay.layer;
            layers_.push_back({lin(p + n[0], E, E), lin(p + n[1], E, E), lin(p + n[2], E, E), lin(p + n[3], E, E), ln(p + n[4], E),
                               lin(p + n[5], F, E), lin(p + n[6], E, F), ln(p + n[7], E)});
        }

        // the head the checkpoint was fine-tuned with
        // outputs < 0: one per label, as many as the file has (LABEL_i when config.json names none)
        auto classifier = [&](const head_names& h, int64_t outputs) {
            classifier_head c;
            c.act = h.act;
            if (!h.dense.empty() && (!hp.head_dense_optional || s.try_get(names(h.dense + ".weight")))) c.dense = lin(h.dense, E, E);
            const raw_tensor& w = s.get(names(h.out + ".weight"));
            const int64_t n = outputs >= 0 ? outputs : w.shape.empty() ? 0 : w.shape[0];
            c.out = lin(h.out, n, E);
            if (outputs < 0 && hp_.labels.empty())
                for (int64_t i = 0; i < n; ++i) hp_.labels.push_back("LABEL_" + std::to_string(i));
            if (outputs < 0 && int64_t(hp_.labels.size()) != n)
                throw error(family_ + ": config.json names " + std::to_string(hp_.labels.size()) + " labels but the classifier has " +
                            std::to_string(n) + " outputs");
            return c;
        };
        const std::string& want = hp.head;
        const bool mlm = want == "masked_lm" || (want == "pretraining" && lay.pretraining_is_mlm) ||
                         (want.empty() && s.try_get(names(lay.mlm.dense + ".weight")));
        if (mlm) {
            mlm_dense_ = lin(lay.mlm.dense, Et, E);
            mlm_act_ = lay.mlm.act;
            mlm_norm_ = ln(lay.mlm_norm, Et);
            mlm_bias_ = s.vector(s.get(lay.mlm_bias), V);
            const raw_tensor* dec = s.try_get(names(lay.mlm.out + ".weight"));
            mlm_decoder_ = !dec || weight_store::same(*dec, word) ? word_emb_ : s.matrix(*dec, V, Et);  // tied unless its own
            has_mlm_ = true;
        } else if (want == "sequence_classification") {
            heads_[size_t(head_kind::sequence)] = classifier(lay.sequence, -1);
        } else if (want == "token_classification") {
            heads_[size_t(head_kind::token)] = classifier(lay.token, -1);
        } else if (want == "question_answering") {
            heads_[size_t(head_kind::span)] = classifier(lay.span, 2);
        } else if (want == "pretraining") {
            heads_[size_t(head_kind::token)] = classifier(lay.pretraining, 1);
        }
        keep(s);
    }
    const encoder* as_encoder() const override { return this; }
    const masked_lm* as_masked_lm() const override { return has_mlm_ ? this : nullptr; }
    const classifier_head* head(head_kind k) const override {
        const classifier_head& h = heads_[size_t(k)];
        return h.out.w.data ? &h : nullptr;
    }

    void encode(const token_batch& in, float* x, arena& scratch, forward_trace* trace, const cancel_fn* cancel) const override {
        const int64_t B = in.n_seq, T = in.n_tokens, N = B * T, E = hp_.n_embd, F = hp_.n_ff, H = hp_.n_head, D = hp_.head_dim();
        const int64_t Et = hp_.n_embd_token ? hp_.n_embd_token : E;
        check(in);
        scratch.reset();
        float* tmp = scratch.alloc<float>(N * std::max(E, Et));
        float* q = scratch.alloc<float>(N * E);
        float* k = scratch.alloc<float>(N * E);
        float* v = scratch.alloc<float>(N * E);
        float* a = scratch.alloc<float>(N * E);
        float* ff = scratch.alloc<float>(N * F);
        int32_t* pos = scratch.alloc<int32_t>(N);
        uint8_t* valid = scratch.alloc<uint8_t>(N);  // padding keys are never attended
        for (int64_t b = 0; b < B; ++b)
            for (int64_t t = 0; t < T; ++t) {
                const bool real = t < in.lengths[size_t(b)];
                // RoBERTa numbers real tokens from padding_idx + 1 and gives padding padding_idx
                pos[b * T + t] = int32_t(position_offset_ == 0 ? t : real ? position_offset_ + t : position_offset_ - 1);
                valid[b * T + t] = real;
            }
        const bool padded = std::any_of(in.lengths.begin(), in.lengths.end(), [&](int64_t n) { return n < T; });

        // embeddings (ELECTRA's are narrower, then projected to the hidden size)
        float* e = Et == E ? x : a;
        embed(word_emb_, in.ids.data(), N, e);
        embed(pos_emb_, pos, N, tmp);
        add(e, tmp, N * Et);
        if (type_emb_.data && in.types.empty()) {  // token type 0 everywhere
            dequantize_row(type_emb_, 0, tmp);
            for (int64_t i = 0; i < N; ++i) add(e + i * Et, tmp, Et);
        } else if (type_emb_.data) {
            embed(type_emb_, in.types.data(), N, tmp);
            add(e, tmp, N * Et);
        }
        apply(emb_norm_, hp_.eps, e, N, Et, e);
        if (Et != E) apply(projection_, e, N, x);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);

        // The last layer runs at the rows the caller reads (batch.out_rows) when it names some and no trace wants the
        // layer whole: every token's keys and values, the rest (queries, attention, feed-forward) at Nq rows only.
        const int64_t last = hp_.n_layer - 1, Nq_last = int64_t(in.out_rows.size());
        const bool narrow = Nq_last > 0 && Nq_last < N && !(trace && trace->wants_layer(int(last)));
        float* xs = narrow ? scratch.alloc<float>(Nq_last * E) : nullptr;  // those rows' states
        for (int64_t l = 0; l < hp_.n_layer; ++l) {
            check_cancel(cancel);
            const layer& L = layers_[size_t(l)];
            const bool rows = narrow && l == last;
            const int64_t Nq = rows ? Nq_last : N;
            float* xq = rows ? xs : x;  // the query rows' states, updated in place
            if (rows) gather_rows(x, in.out_rows, E, xs);
            // self-attention, each sequence's queries over its own tokens
            apply(L.query, xq, Nq, q);
            apply(L.key, x, N, k);
            apply(L.value, x, N, v);
            for (int64_t b = 0, r0 = 0; b < B; ++b) {
                int64_t r1 = r0 + T;  // this sequence's query rows [r0, r1) of q
                if (rows) {
                    r1 = r0;
                    while (r1 < Nq && in.out_rows[size_t(r1)] < (b + 1) * T) ++r1;
                }
                attention_args at{q + r0 * E, E, k + b * T * E, E, v + b * T * E, E, a + r0 * E, E, r1 - r0, T, int(H), int(D),
                                  1.0f / std::sqrt(float(D))};
                at.key_valid = padded ? valid + b * T : nullptr;
                if (r1 > r0) attend(at, b == 0 ? trace : nullptr, int(l));
                r0 = r1;
            }
            apply(L.attn_out, a, Nq, tmp);
            add(tmp, xq, Nq * E);
            apply(L.attn_norm, hp_.eps, tmp, Nq, E, xq);
            // feed-forward
            apply(L.ff_up, xq, Nq, ff);
            activate(hp_.act, ff, Nq * F);
            apply(L.ff_down, ff, Nq, tmp);
            add(tmp, xq, Nq * E);
            apply(L.ff_norm, hp_.eps, tmp, Nq, E, xq);
            if (rows) scatter_rows(xs, in.out_rows, E, x);
            if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        }
    }

    void mlm_logits(const float* hidden, int64_t n, float* logits, arena& scratch) const override {
        const int64_t Et = mlm_dense_.w.n_rows;
        scratch.reset();
        float* h = scratch.alloc<float>(n * Et);
        apply(mlm_dense_, hidden, n, h);
        activate(mlm_act_, h, n * Et);
        apply(mlm_norm_, hp_.eps, h, n, Et, h);
        apply(linear{mlm_decoder_, mlm_bias_}, h, n, logits);
    }

private:
    void check(const token_batch& in) const {
        const int64_t T = in.n_tokens, max_T = hp_.n_ctx - position_offset_;
        const std::string& f = family_;
        if (in.n_seq < 1 || T < 1) throw error(f + ": empty input");
        if (T > max_T) throw error(f + ": input is " + std::to_string(T) + " tokens, the model takes at most " + std::to_string(max_T));
        if (int64_t(in.ids.size()) != in.n_seq * T || int64_t(in.lengths.size()) != in.n_seq || (!in.types.empty() && in.types.size() != in.ids.size()))
            throw error(f + ": batch arrays do not match its shape");
        for (int64_t n : in.lengths)
            if (n < 1 || n > T) throw error(f + ": sequence length " + std::to_string(n) + " is outside [1, " + std::to_string(T) + "]");
        in.check_out_rows(f);
        const int64_t n_types = type_emb_.data ? hp_.n_type_vocab : 1;
        for (size_t i = 0; i < in.ids.size(); ++i) {
            if (in.ids[i] < 0 || in.ids[i] >= hp_.n_vocab) throw error(f + ": token id " + std::to_string(in.ids[i]) + " is out of range");
            if (!in.types.empty() && (in.types[i] < 0 || in.types[i] >= n_types))
                throw error(f + ": token type " + std::to_string(in.types[i]) + " is out of range (the model has " + std::to_string(n_types) + ")");
        }
    }

    std::string family_;
    int64_t position_offset_ = 0;
    matrix_view word_emb_;  // (V, Et)
    matrix_view pos_emb_;   // (P, Et)
    matrix_view type_emb_;  // (n_type_vocab, Et), or none
    norm emb_norm_;
    linear projection_;     // (E, Et) when Et ≠ E
    std::vector<layer> layers_;
    bool has_mlm_ = false;
    linear mlm_dense_;         // (Et, E)
    activation mlm_act_ = activation::gelu_erf;
    norm mlm_norm_;
    matrix_view mlm_decoder_;  // (V, Et): the word embeddings (tied) unless the file has its own
    const float* mlm_bias_ = nullptr;  // (V)
    classifier_head heads_[3];  // by head_kind
};

}  // namespace

std::unique_ptr<model> build_bert_encoder(const hparams& hp, const tensor_source& src, const storage_plan& plan, const bert_layout& layout) {
    return std::make_unique<bert>(hp, src, plan, layout);
}

hparams bert_config(const json& j, const std::string& file, int64_t default_embedding_size) {
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
    if (default_embedding_size > 0) {
        const int64_t e = config_int(j, "embedding_size", default_embedding_size, file);
        hp.n_embd_token = e == hp.n_embd ? 0 : e;
    }
    read_encoder_head(j, file, hp);
    return hp;
}

namespace {

bert_layout layout(const hparams& hp) {
    bert_layout l;
    l.family = "bert";
    l.prefixes = {"bert.", ""};
    l.mlm = {"cls.predictions.transform.dense", hp.act, "cls.predictions.decoder"};
    l.mlm_norm = "cls.predictions.transform.LayerNorm";
    l.mlm_bias = {"cls.predictions.bias", "cls.predictions.decoder.bias"};
    l.sequence = {"pooler.dense", activation::tanh, "classifier"};
    return l;
}

hparams from_config(const json& j, const std::string& file) { return bert_config(j, file); }

hparams from_gguf(const gguf_file& g) {
    hparams hp = gguf_common_hparams(g, "bert");
    hp.act = activation::gelu_erf;
    const gguf_tensor* types = g.find("token_types.weight");
    hp.n_type_vocab = types && types->ne.size() == 2 ? types->ne[1] : 2;
    if (g.has("bert.attention.causal") && g.kv.at("bert.attention.causal").u != 0)
        throw error(g.file_name + ": bert.attention.causal is true, which a BERT encoder does not support");
    // llama.cpp's BERT files are embedding models (no head) or classifiers (cls.output, and cls where the converter
    // kept a dense layer: RoBERTa's classifier.dense, not BERT's pooler); wasmformer's fill-mask files keep
    // cls.predictions.*
    read_gguf_classifier(g, "bert", hp);
    hp.head_dense_optional = true;  // llama.cpp's BertModel drops BERT's pooler: then cls.output reads h[CLS] as it is
    if (hp.head.empty()) hp.head = g.find("cls.predictions.bias") ? "masked_lm" : "";
    return hp;
}

constexpr name_pair gguf_global[] = {
    {"token_embd.weight", "bert.embeddings.word_embeddings.weight"},
    {"position_embd.weight", "bert.embeddings.position_embeddings.weight"},
    {"token_types.weight", "bert.embeddings.token_type_embeddings.weight"},
    {"token_embd_norm.weight", "bert.embeddings.LayerNorm.weight"},
    {"token_embd_norm.bias", "bert.embeddings.LayerNorm.bias"},
    // the sequence head as llama.cpp's rank pooling reads it: dense + tanh (cls, optional), then cls.output
    {"cls.weight", "bert.pooler.dense.weight"}, {"cls.bias", "bert.pooler.dense.bias"},
    {"cls.output.weight", "classifier.weight"}, {"cls.output.bias", "classifier.bias"}};
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
constexpr std::string_view hf_architectures[] = {"BertForMaskedLM", "BertModel", "BertForPreTraining", "BertForSequenceClassification",
                                                 "BertForTokenClassification", "BertForQuestionAnswering"};
constexpr std::string_view gguf_architectures[] = {"bert"};

}  // namespace

extern const architecture bert_architecture = {
    "bert", model_types, hf_architectures, gguf_architectures, cap_encoder | cap_masked_lm, from_config, from_gguf,
    {gguf_global, gguf_layer, "bert.encoder.layer."}, build_with<layout>};

}  // namespace wf::models
