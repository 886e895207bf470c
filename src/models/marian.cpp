// Marian (Helsinki-NLP opus-mt), following Hugging Face's modeling_marian.py (MarianMTModel): the encoder–decoder
// Transformer of "Attention Is All You Need", post-LN.
//   embeddings (both sides) = E[ids]·√d (scale_embedding) + sinusoid[positions]   (positions from 0 on each side)
//   encoder layer:  x = LN(x + W_o·Attention(x, x));  x = LN(x + fc2·act(fc1·x))
//   decoder layer:  x = LN(x + W_o·Attention_causal(x, x));  x = LN(x + W_o'·Attention(x, encoder output));
//                   x = LN(x + fc2·act(fc1·x))
//   logits = x · Eᵀ + final_logits_bias          (E: the shared embeddings, tied output layer)
// The sinusoid is not in the checkpoint: row p, column j < d/2 is sin(p / 10000^(2j/d)), column d/2 + j the cos of
// the same angle (halves, not interleaved), computed in double and rounded to float as Hugging Face does.
// The encoder runs once per source; each decoder layer's cross-attention keys and values are computed from its
// output once (encode_source), and every target sequence (beam) reads them.
#include <cmath>
#include <cstring>

#include "models/registry.h"
#include "nn/ops.h"

namespace wf::models {
namespace {

struct attention_block {
    linear q, k, v, out;  // (E, E) each, with biases
    norm ln;              // after the residual
};
struct ffn_block {
    linear fc1;  // (F, E)
    linear fc2;  // (E, F)
    norm ln;     // after the residual
};
struct encoder_layer {
    attention_block self;
    ffn_block ff;
};
struct decoder_layer {
    attention_block self, cross;
    ffn_block ff;
};

class marian final : public model, public seq2seq_lm {
public:
    marian(const hparams& hp, const tensor_source& src, const storage_plan& plan) : model(hp) {
        weight_store s(src, plan);
        const int64_t E = hp.n_embd, V = hp.n_vocab;
        // one shared matrix (opus-mt), or each side's own (share_encoder_decoder_embeddings false)
        const raw_tensor* shared = s.try_get({"model.shared.weight"});
        const raw_tensor& enc_t = shared ? *shared : s.get({"model.encoder.embed_tokens.weight"});
        const raw_tensor& dec_t = shared ? *shared : s.get({"model.decoder.embed_tokens.weight"});
        enc_emb_ = s.matrix(enc_t, V, E);
        dec_emb_ = &dec_t == &enc_t ? enc_emb_ : s.matrix(dec_t, V, E);
        if (hp.tied_embeddings)
            lm_head_ = dec_emb_;
        else {
            const raw_tensor& head = s.get({"lm_head.weight"});
            lm_head_ = weight_store::same(head, dec_t) ? dec_emb_ : s.matrix(head, V, E);
        }
        const raw_tensor* bias = s.try_get({"final_logits_bias"});
        if (bias)
            final_bias_ = s.vector(*bias, V, true);
        else {  // Hugging Face loads a missing one as zeros
            zero_bias_.assign(size_t(V), 0.0f);
            final_bias_ = zero_bias_.data();
        }
        auto lin = [&](const std::string& n, int64_t out, int64_t in) { return s.lin({n + ".weight"}, {n + ".bias"}, out, in); };
        auto ln = [&](const std::string& n) { return s.ln({n + ".weight"}, {n + ".bias"}, E); };
        auto attn = [&](const std::string& p, const std::string& norm_name) {
            return attention_block{lin(p + ".q_proj", E, E), lin(p + ".k_proj", E, E), lin(p + ".v_proj", E, E), lin(p + ".out_proj", E, E), ln(norm_name)};
        };
        auto ffn = [&](const std::string& p, int64_t F) { return ffn_block{lin(p + "fc1", F, E), lin(p + "fc2", E, F), ln(p + "final_layer_norm")}; };
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string p = "model.encoder.layers." + std::to_string(l) + ".";
            enc_.push_back({attn(p + "self_attn", p + "self_attn_layer_norm"), ffn(p, hp.n_ff)});
        }
        for (int64_t l = 0; l < hp.n_dec_layer; ++l) {
            const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
            dec_.push_back({attn(p + "self_attn", p + "self_attn_layer_norm"), attn(p + "encoder_attn", p + "encoder_attn_layer_norm"), ffn(p, hp.n_dec_ff)});
        }
        // the sinusoid, both sides' (stored copies, which some conversions write, are the same table and not read)
        positions_.resize(size_t(hp.n_ctx * E));
        const int64_t half = (E + 1) / 2;
        for (int64_t p = 0; p < hp.n_ctx; ++p)
            for (int64_t j = 0; j < E; ++j) {
                const int64_t i = j < half ? j : j - half;  // the pair's index: columns i and half + i share an angle
                const double angle = double(p) / std::pow(10000.0, double(2 * i) / double(E));
                positions_[size_t(p * E + j)] = float(j < half ? std::sin(angle) : std::cos(angle));
            }
        keep(s);
    }
    const seq2seq_lm* as_seq2seq_lm() const override { return this; }

    seq2seq_state encode_source(std::span<const int32_t> source, int64_t capacity, int64_t n_seq, forward_trace* trace,
                                const cancel_fn* cancel) const override {
        const int64_t S = int64_t(source.size()), E = hp_.n_embd, F = hp_.n_ff, H = hp_.n_head, D = E / H;
        if (S < 1) throw error("marian: empty source");
        if (S > hp_.n_ctx) throw error("marian: the source is " + std::to_string(S) + " tokens, the model takes at most " + std::to_string(hp_.n_ctx));
        if (capacity < 1 || capacity > hp_.n_ctx)
            throw error("marian: target capacity " + std::to_string(capacity) + " is outside [1, " + std::to_string(hp_.n_ctx) + "]");
        if (n_seq < 1 || n_seq > 1024) throw error("marian: " + std::to_string(n_seq) + " target sequences is outside [1, 1024]");
        check_ids(source);
        seq2seq_state st;
        st.self = kv_cache(hp_.n_dec_layer, n_seq, capacity, E);
        st.cross = kv_cache(hp_.n_dec_layer, 1, S, E);
        arena& m = st.scratch;
        float* x = m.alloc<float>(S * E);
        float* q = m.alloc<float>(S * E);
        float* k = m.alloc<float>(S * E);
        float* v = m.alloc<float>(S * E);
        float* a = m.alloc<float>(S * E);
        float* ff = m.alloc<float>(S * F);
        embed_tokens(enc_emb_, source.data(), S, 0, S, x);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + S * E);
        for (int64_t l = 0; l < hp_.n_layer; ++l) {
            check_cancel(cancel);
            const encoder_layer& L = enc_[size_t(l)];
            apply(L.self.q, x, S, q);
            apply(L.self.k, x, S, k);
            apply(L.self.v, x, S, v);
            attention_args at{q, E, k, E, v, E, a, E, S, S, int(H), int(D), 1.0f / std::sqrt(float(D))};
            attend(at, trace, int(l));
            residual_block(L.self, a, S, x, q);
            feed_forward(L.ff, hp_.act, S, x, ff, q);
            if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + S * E);
        }
        // every decoder layer's keys and values over the encoder's output
        for (int64_t l = 0; l < hp_.n_dec_layer; ++l) {
            check_cancel(cancel);
            apply(dec_[size_t(l)].cross.k, x, S, st.cross.k(l, 0, 0));
            apply(dec_[size_t(l)].cross.v, x, S, st.cross.v(l, 0, 0));
        }
        st.cross.n_past = S;
        return st;
    }

    linear output_layer() const override { return {lm_head_, final_bias_}; }

private:
    std::span<const float> run_decoder(seq2seq_state& s, std::span<const int32_t> ids, bool all_logits, bool hidden, forward_trace* trace,
                                       const cancel_fn* cancel) const override {
        kv_cache& c = s.self;
        const int64_t B = c.n_seq(), N = int64_t(ids.size()), T = B > 0 ? N / B : 0, p0 = c.n_past, S = s.n_source();
        const int64_t E = hp_.n_embd, F = hp_.n_dec_ff, H = hp_.n_dec_head, D = E / H, V = hp_.n_vocab;
        if (S < 1) throw error("marian: decode before encode_source");
        if (N == 0 || N % B != 0) throw error("marian: " + std::to_string(N) + " tokens do not split into " + std::to_string(B) + " sequences");
        if (p0 + T > c.capacity())
            throw error("marian: " + std::to_string(p0 + T) + " target positions exceed the capacity of " + std::to_string(c.capacity()));
        check_ids(ids);

        arena& m = s.scratch;
        m.reset();
        float* x = m.alloc<float>(N * E);
        float* q = m.alloc<float>(N * E);
        float* a = m.alloc<float>(N * E);
        float* h = m.alloc<float>(N * E);
        float* ff = m.alloc<float>(N * F);
        embed_tokens(dec_emb_, ids.data(), N, p0, T, x);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        const float scale = 1.0f / std::sqrt(float(D));
        for (int64_t l = 0; l < hp_.n_dec_layer; ++l) {
            check_cancel(cancel);  // n_past changes only at the end: a cancel leaves the cache as it was
            const decoder_layer& L = dec_[size_t(l)];
            // causal self-attention; this step's keys and values go straight into each sequence's cache
            apply(L.self.q, x, N, q);
            apply(L.self.k, x, N, h);
            apply(L.self.v, x, N, a);
            for (int64_t b = 0; b < B; ++b)
                for (int64_t i = 0; i < T; ++i) {
                    std::memcpy(c.k(l, b, p0 + i), h + (b * T + i) * E, size_t(E) * 4);
                    std::memcpy(c.v(l, b, p0 + i), a + (b * T + i) * E, size_t(E) * 4);
                }
            for (int64_t b = 0; b < B; ++b) {
                attention_args at{q + b * T * E, E, c.k(l, b, 0), E, c.v(l, b, 0), E, a + b * T * E, E, T, p0 + T, int(H), int(D), scale, true, p0};
                attend(at, b == 0 ? trace : nullptr, int(l));
            }
            residual_block(L.self, a, N, x, h);
            // cross-attention over the source: every sequence reads its source's keys and values (the beams of one
            // source the same ones)
            apply(L.cross.q, x, N, q);
            float* probs = nullptr;
            if (trace && trace->want_cross) {
                trace->cross_attention.emplace_back(size_t(B * H * T * S));
                probs = trace->cross_attention.back().data();
            }
            for (int64_t b = 0; b < B; ++b) {
                const int64_t src = s.source_of(b);
                attention_args at{q + b * T * E, E, s.cross.k(l, src, 0), E, s.cross.v(l, src, 0), E, a + b * T * E, E, T, s.source_length(b), int(H), int(D), scale};
                attend(at, probs ? probs + b * H * T * S : nullptr);
            }
            residual_block(L.cross, a, N, x, h);
            feed_forward(L.ff, hp_.act, N, x, ff, h);
            if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        }
        // the tied output layer and final_logits_bias, for the rows asked for
        const int64_t rows = all_logits ? N : B;
        const float* last = x + (T - 1) * E;
        if (!all_logits && B > 1) {  // each sequence's last row, side by side
            for (int64_t b = 0; b < B; ++b) std::memcpy(h + b * E, x + (b * T + T - 1) * E, size_t(E) * 4);
            last = h;
        }
        c.n_past = p0 + T;
        if (hidden) return {last, size_t(B * E)};
        if (s.logits.size() < size_t(rows * V)) s.logits.resize(size_t(rows * V));
        apply(linear{lm_head_, final_bias_}, all_logits ? x : last, rows, s.logits.data());
        return {s.logits.data(), size_t(rows * V)};
    }

    void check_ids(std::span<const int32_t> ids) const {
        for (int32_t id : ids)
            if (id < 0 || id >= hp_.n_vocab) throw error("marian: token id " + std::to_string(id) + " is out of range");
    }
    // x (N, E) = table[ids]·scale + sinusoid[p0 + i % T]
    void embed_tokens(const matrix_view& table, const int32_t* ids, int64_t N, int64_t p0, int64_t T, float* x) const {
        const int64_t E = hp_.n_embd;
        embed(table, ids, N, x);
        const float scale = hp_.embedding_multiplier;
        for (int64_t r = 0; r < N; ++r) {
            const float* pos = positions_.data() + (p0 + r % T) * E;
            float* row = x + r * E;
            for (int64_t j = 0; j < E; ++j) row[j] = row[j] * scale + pos[j];
        }
    }
    // x = LN(x + W_o·a); tmp: (N, E) scratch
    void residual_block(const attention_block& b, const float* a, int64_t N, float* x, float* tmp) const {
        apply(b.out, a, N, tmp);
        add(tmp, x, N * hp_.n_embd);
        apply(b.ln, hp_.eps, tmp, N, hp_.n_embd, x);
    }
    // x = LN(x + fc2·act(fc1·x)); ff: (N, F), tmp: (N, E) scratch
    void feed_forward(const ffn_block& f, activation act, int64_t N, float* x, float* ff, float* tmp) const {
        apply(f.fc1, x, N, ff);
        activate(act, ff, N * f.fc1.w.n_rows);
        apply(f.fc2, ff, N, tmp);
        add(tmp, x, N * hp_.n_embd);
        apply(f.ln, hp_.eps, tmp, N, hp_.n_embd, x);
    }

    matrix_view enc_emb_, dec_emb_;  // (V, E): the same matrix when shared
    matrix_view lm_head_;            // (V, E): the decoder's embeddings (tied) unless the file has its own
    const float* final_bias_ = nullptr;  // (V)
    std::vector<float> zero_bias_;
    std::vector<float> positions_;  // (n_ctx, E)
    std::vector<encoder_layer> enc_;
    std::vector<decoder_layer> dec_;
};

hparams from_config(const json& j, const std::string& file) {
    hparams hp;
    // MarianConfig's defaults (opus-mt's config.json files give every one of them)
    hp.n_vocab = config_int(j, "vocab_size", 58101, file);
    hp.n_embd = config_int(j, "d_model", 1024, file);
    hp.n_layer = config_int(j, "encoder_layers", 12, file);
    hp.n_head = hp.n_head_kv = config_int(j, "encoder_attention_heads", 16, file);
    hp.n_ff = config_int(j, "encoder_ffn_dim", 4096, file);
    hp.n_dec_layer = config_int(j, "decoder_layers", 12, file);
    hp.n_dec_head = config_int(j, "decoder_attention_heads", 16, file);
    hp.n_dec_ff = config_int(j, "decoder_ffn_dim", 4096, file);
    hp.n_ctx = config_int(j, "max_position_embeddings", 1024, file);
    hp.eps = 1e-5f;  // nn.LayerNorm's default
    hp.act = parse_activation(config_string(j, "activation_function", "gelu", file), file, "activation_function");
    hp.pad_token_id = config_int(j, "pad_token_id", 58100, file);
    hp.eos_token_id = config_int(j, "eos_token_id", 0, file);
    hp.decoder_start_token_id = config_int(j, "decoder_start_token_id", 58100, file);
    if (config_bool(j, "scale_embedding", false, file)) hp.embedding_multiplier = std::sqrt(float(hp.n_embd));
    hp.tied_embeddings = config_bool(j, "tie_word_embeddings", true, file);
    const int64_t dec_vocab = config_int(j, "decoder_vocab_size", hp.n_vocab, file);
    if (dec_vocab != hp.n_vocab)
        throw error(file + ": decoder_vocab_size " + std::to_string(dec_vocab) + " differs from vocab_size " + std::to_string(hp.n_vocab) +
                    " (separate target vocabularies are not supported)");
    for (const char* key : {"normalize_before", "normalize_embedding", "add_final_layer_norm"})
        if (config_bool(j, key, false, file)) throw error(file + ": " + key + " = true is not supported (opus-mt models are post-LN)");
    if (!config_bool(j, "static_position_embeddings", true, file))
        throw error(file + ": static_position_embeddings = false is not supported (Marian's positions are the sinusoid)");
    return hp;
}

constexpr std::string_view model_types[] = {"marian"};
constexpr std::string_view hf_architectures[] = {"MarianMTModel"};

std::unique_ptr<model> build(const hparams& hp, const tensor_source& src, const storage_plan& plan) { return std::make_unique<marian>(hp, src, plan); }

}  // namespace

extern const architecture marian_architecture = {"marian", model_types, hf_architectures, {}, cap_seq2seq, from_config, nullptr, {}, build};

}  // namespace wf::models
