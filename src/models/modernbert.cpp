// ModernBERT, following Hugging Face's modeling_modernbert.py (ModernBertEmbeddings, ModernBertEncoderLayer,
// ModernBertAttention, ModernBertMLP, ModernBertPredictionHead; the eager path, which its unpadded FlashAttention
// path equals):
//   x = LayerNorm(tok_embeddings[ids])                                  (no positions: they are rotary)
//   per layer (pre-norm):  x = x + W_o·Attention(RoPE(q), RoPE(k), v),  q|k|v = W_qkv·LayerNorm_attn(x)
//                          x = x + W_o'·(act(a) ⊙ g),                    a|g = W_i·LayerNorm_mlp(x)
//     layer 0 has no attention norm (its input is already normed); layer l is global when
//     l % global_attn_every_n_layers == 0, else local: its queries see the keys within ±local_attention / 2, and
//     its rotary base is local_rope_theta (global layers: global_rope_theta)
//     (the last layer at the rows a task reads only — batch.out_rows — with keys and values from every token)
//   h = LayerNorm_final(x)
//   heads: head(h) = LayerNorm(act(W·h))
//     masked LM   logits = head(h) · tok_embeddingsᵀ + bias                         (the decoder is tied)
//     sequence    logits = W_c·head(pool(h)) + b,  pool: the first token or the mean of the real tokens
//     token       logits = W_c·head(h) + b
// No biases unless the config asks (attention_bias, mlp_bias, classifier_bias, norm_bias); decoder_bias is on.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "models/registry.h"
#include "nn/ops.h"

namespace wf::models {
namespace {

struct layer {
    norm attn_norm;  // g null on layer 0: Identity
    linear q, k, v;  // row views of the fused Wqkv (3E, E)
    linear o;        // (E, E)
    norm mlp_norm;
    linear input, gate;  // row views of Wi (2F, E): the first F rows are activated, the other F gate them
    linear down;         // (E, F)
    int64_t window;      // ±window keys (attention_args::window); −1: global
    const float* inv_freq;
};

class modernbert final : public model, public masked_lm {
public:
    modernbert(const hparams& hp, const tensor_source& src, const storage_plan& plan) : model(hp) {
        weight_store s(src, plan);
        const int64_t E = hp.n_embd, F = hp.n_ff, V = hp.n_vocab;
        // a task model's encoder is under "model."; a bare ModernBertModel's names have no prefix
        auto names = [](const std::string& n) { return std::vector<std::string>{"model." + n, n}; };
        // groupable: Wqkv and Wi are split with rows_of, so their q8_0 / q4_0 rows are grouped only where each part is whole
        // groups of 4 (weights.h)
        auto lin = [&](const std::string& n, int64_t out, int64_t in, bool groupable = true) {
            linear l = s.lin(names(n + ".weight"), {}, out, in, false, groupable);
            if (const raw_tensor* b = s.try_get(names(n + ".bias"))) l.b = s.vector(*b, out);
            return l;
        };
        auto ln = [&](const std::string& n) {
            norm r = s.ln(names(n + ".weight"), {}, E);
            if (const raw_tensor* b = s.try_get(names(n + ".bias"))) r.b = s.vector(*b, E);
            return r;
        };
        const raw_tensor& tok = s.get(names("embeddings.tok_embeddings.weight"));
        tok_emb_ = s.matrix(tok, V, E);
        emb_norm_ = ln("embeddings.norm");
        inv_freq_global_ = hp.rope_inv_freq();
        hparams local = hp;
        if (hp.rope_theta_local > 0.0f) local.rope_theta = hp.rope_theta_local;
        inv_freq_local_ = local.rope_inv_freq();
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string p = "layers." + std::to_string(l) + ".";
            layer L{};
            if (l > 0) L.attn_norm = ln(p + "attn_norm");
            const linear qkv = lin(p + "attn.Wqkv", 3 * E, E, E % row_group == 0);
            L.q = rows_of(qkv, 0, E), L.k = rows_of(qkv, E, E), L.v = rows_of(qkv, 2 * E, E);
            L.o = lin(p + "attn.Wo", E, E);
            L.mlp_norm = ln(p + "mlp_norm");
            const linear wi = lin(p + "mlp.Wi", 2 * F, E, F % row_group == 0);
            L.input = rows_of(wi, 0, F), L.gate = rows_of(wi, F, F);
            L.down = lin(p + "mlp.Wo", E, F);
            const bool global = hp.sliding_window_pattern <= 0 || l % hp.sliding_window_pattern == 0;
            L.window = global ? -1 : hp.sliding_window / 2;
            L.inv_freq = global ? inv_freq_global_.data() : inv_freq_local_.data();
            layers_.push_back(L);
        }
        final_norm_ = ln("final_norm");

        // the head the checkpoint was fine-tuned with, behind ModernBertPredictionHead
        auto prediction_head = [&](classifier_head& c) {
            c.dense = s.lin({"head.dense.weight"}, {}, E, E);
            if (const raw_tensor* b = s.try_get({"head.dense.bias"})) c.dense.b = s.vector(*b, E);
            c.act = hp.head_act;
            c.dense_norm = s.ln({"head.norm.weight"}, {}, E);
            if (const raw_tensor* b = s.try_get({"head.norm.bias"})) c.dense_norm.b = s.vector(*b, E);
            c.norm_eps = hp.eps;
        };
        auto classifier = [&](classifier_head& c) {
            prediction_head(c);
            const raw_tensor& w = s.get({"classifier.weight"});
            const int64_t n = w.shape.empty() ? 0 : w.shape[0];
            c.out = s.lin({"classifier.weight"}, {"classifier.bias"}, n, E);
            if (hp_.labels.empty())
                for (int64_t i = 0; i < n; ++i) hp_.labels.push_back("LABEL_" + std::to_string(i));
            if (int64_t(hp_.labels.size()) != n)
                throw error("modernbert: config.json names " + std::to_string(hp_.labels.size()) + " labels but the classifier has " +
                            std::to_string(n) + " outputs");
        };
        if (hp.head == "masked_lm" || (hp.head.empty() && s.try_get({"head.dense.weight"}) && s.try_get({"decoder.bias"}))) {
            prediction_head(mlm_);
            const raw_tensor* dec = s.try_get({"decoder.weight"});
            mlm_.out.w = !dec || weight_store::same(*dec, tok) ? tok_emb_ : s.matrix(*dec, V, E);  // tied unless its own
            if (const raw_tensor* b = s.try_get({"decoder.bias"})) mlm_.out.b = s.vector(*b, V);
            has_mlm_ = true;
        } else if (hp.head == "sequence_classification") {
            classifier(heads_[size_t(head_kind::sequence)]);
            heads_[size_t(head_kind::sequence)].mean_pooling = hp.mean_pooling;
        } else if (hp.head == "token_classification") {
            classifier(heads_[size_t(head_kind::token)]);
        } else if (!hp.head.empty()) {
            throw error("modernbert: the " + hp.head + " head is not supported (masked LM, sequence and token classification are)");
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
        check(in);
        scratch.reset();
        float* h = scratch.alloc<float>(N * E);
        float* q = scratch.alloc<float>(N * E);
        float* k = scratch.alloc<float>(N * E);
        float* v = scratch.alloc<float>(N * E);
        float* a = scratch.alloc<float>(N * E);
        float* act = scratch.alloc<float>(N * F);
        float* gate = scratch.alloc<float>(N * F);
        int32_t* pos = scratch.alloc<int32_t>(N);
        uint8_t* valid = scratch.alloc<uint8_t>(N);  // padding keys are never attended
        for (int64_t b = 0; b < B; ++b)
            for (int64_t t = 0; t < T; ++t) pos[b * T + t] = int32_t(t), valid[b * T + t] = t < in.lengths[size_t(b)];
        const bool padded = std::any_of(in.lengths.begin(), in.lengths.end(), [&](int64_t n) { return n < T; });

        embed(tok_emb_, in.ids.data(), N, x);
        apply(emb_norm_, hp_.eps, x, N, E, x);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);

        // The last layer runs at the rows the caller reads (batch.out_rows) when it names some and no trace wants the
        // layer whole: every token's keys and values, the rest at those rows only — each row's attention a call of its
        // own, at its position (a local layer's window is placed by the query's position).
        const int64_t last = hp_.n_layer - 1, Nq_last = int64_t(in.out_rows.size());
        const bool narrow = Nq_last > 0 && Nq_last < N && !(trace && trace->wants_layer(int(last)));
        float* xs = narrow ? scratch.alloc<float>(Nq_last * E) : nullptr;  // those rows' states
        float* hs = narrow ? scratch.alloc<float>(Nq_last * E) : nullptr;  // and their normed states
        int32_t* pos_q = narrow ? scratch.alloc<int32_t>(Nq_last) : nullptr;  // their positions
        for (int64_t i = 0; narrow && i < Nq_last; ++i) pos_q[i] = int32_t(in.out_rows[size_t(i)] % T);
        for (int64_t l = 0; l < hp_.n_layer; ++l) {
            check_cancel(cancel);
            const layer& L = layers_[size_t(l)];
            const bool rows = narrow && l == last;
            const int64_t Nq = rows ? Nq_last : N;
            float* xq = rows ? xs : x;  // the query rows' states, updated in place
            // attention, each sequence over its own tokens (a local layer's within its window)
            const float* normed = x;
            if (L.attn_norm.g) apply(L.attn_norm, hp_.eps, x, N, E, h), normed = h;
            const float* normed_q = normed;
            if (rows) {
                gather_rows(x, in.out_rows, E, xs);
                gather_rows(normed, in.out_rows, E, hs);
                normed_q = hs;
            }
            apply(L.q, normed_q, Nq, q);
            apply(L.k, normed, N, k);
            apply(L.v, normed, N, v);
            rope(q, Nq, E, int(H), int(D), int(D), rows ? pos_q : pos, L.inv_freq, true);
            rope(k, N, E, int(H), int(D), int(D), pos, L.inv_freq, true);
            for (int64_t b = 0; b < (rows ? Nq : B); ++b) {  // rows: b is a query row, in its sequence s
                const int64_t seq = rows ? in.out_rows[size_t(b)] / T : b, nq = rows ? 1 : T, q0 = rows ? b : b * T;
                attention_args at{q + q0 * E, E, k + seq * T * E, E, v + seq * T * E, E, a + q0 * E, E, nq, T, int(H), int(D),
                                  1.0f / std::sqrt(float(D))};
                at.key_valid = padded ? valid + seq * T : nullptr;
                at.window = L.window;
                at.q_pos = rows ? pos_q[b] : 0;
                attend(at, b == 0 && !rows ? trace : nullptr, int(l));
            }
            apply(L.o, a, Nq, h);
            add(xq, h, Nq * E);
            // gated feed-forward
            apply(L.mlp_norm, hp_.eps, xq, Nq, E, h);
            apply(L.input, h, Nq, act);
            apply(L.gate, h, Nq, gate);
            activate(hp_.act, act, Nq * F);
            mul(act, gate, Nq * F);
            apply(L.down, act, Nq, h);
            add(xq, h, Nq * E);
            if (rows) scatter_rows(xs, in.out_rows, E, x);
            if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        }
        apply(final_norm_, hp_.eps, x, N, E, x);
    }

    void mlm_logits(const float* hidden, int64_t n, float* logits, arena& scratch) const override {
        scratch.reset();
        apply(mlm_, hidden, n, logits, scratch);
    }

private:
    void check(const token_batch& in) const {
        const int64_t T = in.n_tokens;
        if (in.n_seq < 1 || T < 1) throw error("modernbert: empty input");
        if (T > hp_.n_ctx) throw error("modernbert: input is " + std::to_string(T) + " tokens, the model takes at most " + std::to_string(hp_.n_ctx));
        if (int64_t(in.ids.size()) != in.n_seq * T || int64_t(in.lengths.size()) != in.n_seq)
            throw error("modernbert: batch arrays do not match its shape");
        for (int64_t n : in.lengths)
            if (n < 1 || n > T) throw error("modernbert: sequence length " + std::to_string(n) + " is outside [1, " + std::to_string(T) + "]");
        in.check_out_rows("modernbert");
        for (int32_t id : in.ids)
            if (id < 0 || id >= hp_.n_vocab) throw error("modernbert: token id " + std::to_string(id) + " is out of range");
    }

    matrix_view tok_emb_;  // (V, E)
    norm emb_norm_, final_norm_;
    std::vector<layer> layers_;
    std::vector<float> inv_freq_global_, inv_freq_local_;
    bool has_mlm_ = false;
    classifier_head mlm_;       // head.dense → act → head.norm → decoder (tied) + bias
    classifier_head heads_[3];  // by head_kind
};

hparams from_config(const json& j, const std::string& file) {
    hparams hp;
    hp.n_vocab = config_int(j, "vocab_size", 50368, file);
    hp.n_embd = config_int(j, "hidden_size", 768, file);
    hp.n_layer = config_int(j, "num_hidden_layers", 22, file);
    hp.n_head = hp.n_head_kv = config_int(j, "num_attention_heads", 12, file);
    hp.n_ff = config_int(j, "intermediate_size", 1152, file);
    hp.n_ctx = std::min(config_int(j, "max_position_embeddings", 8192, file), max_context);
    hp.n_type_vocab = 0;
    hp.eps = float(config_float(j, "norm_eps", 1e-5, file));
    hp.act = parse_activation(config_string(j, "hidden_activation", "gelu", file), file, "hidden_activation");
    hp.head_act = parse_activation(config_string(j, "classifier_activation", "gelu", file), file, "classifier_activation");
    hp.pad_token_id = config_int(j, "pad_token_id", 50283, file);
    hp.rope_theta = float(config_float(j, "global_rope_theta", 160000.0, file));
    hp.rope_theta_local = float(config_float(j, "local_rope_theta", 10000.0, file));
    hp.sliding_window = config_int(j, "local_attention", 128, file);
    hp.sliding_window_pattern = config_int(j, "global_attn_every_n_layers", 3, file);
    if (hp.sliding_window < 0 || hp.sliding_window > (int64_t(1) << 20)) throw error(file + ": local_attention = " + std::to_string(hp.sliding_window) + " is outside [0, 2^20]");
    if (hp.sliding_window_pattern < 1 || hp.sliding_window_pattern > 1024)
        throw error(file + ": global_attn_every_n_layers = " + std::to_string(hp.sliding_window_pattern) + " is outside [1, 1024]");
    const std::string pooling = config_string(j, "classifier_pooling", "cls", file);
    if (pooling != "cls" && pooling != "mean") throw error(file + ": classifier_pooling \"" + pooling + "\" is not supported (cls or mean)");
    hp.mean_pooling = pooling == "mean";
    read_encoder_head(j, file, hp);
    return hp;
}

// GGUF as llama.cpp writes it (architecture "modern-bert"). Sources, in ggml-org/llama.cpp:
//   convert_hf_to_gguf.py (conversion/bert.py in newer trees), class ModernBertModel(BertModel): registered for
//     ModernBertModel / ModernBertForMaskedLM / ModernBertForSequenceClassification; set_gguf_parameters writes
//     {arch}.attention.sliding_window = local_attention, {arch}.attention.sliding_window_pattern =
//     global_attn_every_n_layers, rope scaling none and {arch}.vocab_size; BertModel's adds {arch}.attention.causal
//     = false (and {arch}.pooling_type for a sentence-transformers folder); TextModel's adds context_length,
//     embedding_length, feed_forward_length (= intermediate_size: ffn_up holds 2·n_ff rows), block_count,
//     attention.head_count, attention.layer_norm_epsilon, rope.freq_base (the global theta) and rope.freq_base_swa
//     (the rope_parameters' sliding_attention theta, i.e. local_rope_theta). Its filter_tensors strips "model.".
//     set_vocab: _set_vocab_gpt2 (tokenizer.ggml.model "gpt2", pre "modern-bert") with add_bos/add_eos/add_sep true.
//   src/llama-model.cpp, LLM_ARCH_MODERN_BERT (llama_model_modern_bert::load_arch_hparams in newer trees): the
//     sliding window is optional (absent or 0: every layer global); rope.freq_base_swa optional (default: the
//     global base); the pattern defaults to 3 with the dense layer first (layer l global when l % pattern == 0, as
//     Hugging Face's global_attn_every_n_layers); attention.layer_norm_epsilon is required.
//   Tensors (src/llama-arch.cpp LLM_ARCH_MODERN_BERT; gguf-py/gguf/constants.py MODEL_TENSORS[MODEL_ARCH.MODERN_BERT];
//     gguf-py/gguf/tensor_mapping.py): token_embd, token_embd_norm, output_norm, blk.N.{attn_norm (absent on
//     layer 0), attn_qkv, attn_output, ffn_up (Wi: the activated half, then the gate), ffn_down, ffn_norm}, cls
//     (head.dense), cls.norm (head.norm), cls.output (classifier). The graph is src/models/modern-bert.cpp (GEGLU,
//     LLM_NORM without biases).
// llama.cpp has no name for the masked-LM decoder's bias: like BERT's cls.predictions.*, it keeps its Hugging
// Face name (decoder.bias) inside the file; a file with it is a fill-mask model (the decoder is tied to token_embd).
hparams from_gguf(const gguf_file& g) {
    const std::string a = "modern-bert";
    auto need = [&](const std::string& k) {
        if (!g.has(a + "." + k)) throw error(g.file_name + ": missing metadata \"" + a + "." + k + "\" (llama.cpp's modern-bert requires it)");
    };
    for (const char* k : {"block_count", "context_length", "embedding_length", "feed_forward_length", "attention.head_count",
                          "attention.layer_norm_epsilon"})
        need(k);
    hparams hp = gguf_common_hparams(g, a);
    hp.n_head_kv = hp.n_head;
    hp.n_ctx = std::min(hp.n_ctx, max_context);
    hp.n_type_vocab = 0;
    hp.act = hp.head_act = activation::gelu_erf;  // GEGLU, the prediction head's GELU
    if (g.has(a + ".vocab_size") && int64_t(g.get_uint(a + ".vocab_size")) != hp.n_vocab)
        throw error(g.file_name + ": " + a + ".vocab_size = " + std::to_string(g.get_uint(a + ".vocab_size")) + " but token_embd.weight has " +
                    std::to_string(hp.n_vocab) + " rows");
    if (g.has(a + ".attention.causal") && g.kv.at(a + ".attention.causal").u != 0)
        throw error(g.file_name + ": " + a + ".attention.causal is true, which a ModernBERT encoder does not support");
    hp.rope_theta = g.has(a + ".rope.freq_base") ? float(g.get_float(a + ".rope.freq_base")) : 10000.0f;  // llama.cpp's default
    hp.rope_theta_local = g.has(a + ".rope.freq_base_swa") ? float(g.get_float(a + ".rope.freq_base_swa")) : hp.rope_theta;
    hp.sliding_window = g.has(a + ".attention.sliding_window") ? int64_t(g.get_uint(a + ".attention.sliding_window")) : 0;
    if (hp.sliding_window > (int64_t(1) << 20))
        throw error(g.file_name + ": " + a + ".attention.sliding_window = " + std::to_string(hp.sliding_window) + " is outside [0, 2^20]");
    hp.sliding_window_pattern = 0;  // every layer global
    if (hp.sliding_window > 0) {
        const std::string k = a + ".attention.sliding_window_pattern";
        hp.sliding_window_pattern = g.has(k) ? int64_t(g.get_uint(k)) : 3;
        if (hp.sliding_window_pattern < 1 || hp.sliding_window_pattern > 1024)
            throw error(g.file_name + ": " + k + " = " + std::to_string(hp.sliding_window_pattern) + " is outside [1, 1024]");
    }
    if (g.has("tokenizer.ggml.padding_token_id")) hp.pad_token_id = int64_t(g.get_uint("tokenizer.ggml.padding_token_id"));
    // a classifier (cls.output): llama.cpp's rank pooling for modern-bert reads the mean of the tokens, then the
    // prediction head (cls, GELU, cls.norm) and cls.output; gelu is Hugging Face's exact one here (ggml_gelu is the
    // tanh approximation)
    read_gguf_classifier(g, a, hp);
    hp.mean_pooling = hp.head == "sequence_classification";
    if (hp.head.empty()) hp.head = g.find("decoder.bias") && g.find("cls.weight") ? "masked_lm" : "";
    return hp;
}

constexpr name_pair gguf_global[] = {
    {"token_embd.weight", "model.embeddings.tok_embeddings.weight"},
    {"token_embd_norm.weight", "model.embeddings.norm.weight"}, {"token_embd_norm.bias", "model.embeddings.norm.bias"},
    {"output_norm.weight", "model.final_norm.weight"}, {"output_norm.bias", "model.final_norm.bias"},
    {"cls.weight", "head.dense.weight"}, {"cls.bias", "head.dense.bias"},
    {"cls.norm.weight", "head.norm.weight"}, {"cls.norm.bias", "head.norm.bias"},
    {"cls.output.weight", "classifier.weight"}, {"cls.output.bias", "classifier.bias"}};
constexpr name_pair gguf_layer[] = {
    {"attn_norm.weight", "attn_norm.weight"}, {"attn_norm.bias", "attn_norm.bias"},
    {"attn_qkv.weight", "attn.Wqkv.weight"}, {"attn_qkv.bias", "attn.Wqkv.bias"},
    {"attn_output.weight", "attn.Wo.weight"}, {"attn_output.bias", "attn.Wo.bias"},
    {"ffn_up.weight", "mlp.Wi.weight"}, {"ffn_up.bias", "mlp.Wi.bias"},
    {"ffn_down.weight", "mlp.Wo.weight"}, {"ffn_down.bias", "mlp.Wo.bias"},
    {"ffn_norm.weight", "mlp_norm.weight"}, {"ffn_norm.bias", "mlp_norm.bias"}};
constexpr std::string_view gguf_architectures[] = {"modern-bert"};

constexpr std::string_view model_types[] = {"modernbert"};
constexpr std::string_view hf_architectures[] = {"ModernBertForMaskedLM", "ModernBertModel", "ModernBertForSequenceClassification",
                                                 "ModernBertForTokenClassification"};

}  // namespace

extern const architecture modernbert_architecture = {
    "modernbert", model_types, hf_architectures, gguf_architectures, cap_encoder | cap_masked_lm, from_config, from_gguf,
    {gguf_global, gguf_layer, "model.layers."},
    [](const hparams& hp, const tensor_source& src, const storage_plan& plan) -> std::unique_ptr<model> {
        return std::make_unique<modernbert>(hp, src, plan);
    }};

}  // namespace wf::models
