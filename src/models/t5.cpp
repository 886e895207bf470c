// T5 (t5, t5 v1.1, flan-t5), following Hugging Face's modeling_t5.py (T5ForConditionalGeneration): an encoder–decoder
// with pre-norm blocks, RMS norms without bias, attention without 1/√d scaling and with a learned bias per relative
// position bucket (the first block of each stack owns the table; every block of that stack adds it).
//   encoder block:  x = x + W_o·Attention(RMS(x), bias_bidirectional);  x = x + FF(RMS(x))
//   decoder block:  x = x + W_o·Attention_causal(RMS(x), bias_causal);  x = x + W_o'·Attention(RMS(x), encoder output);
//                   x = x + FF(RMS(x))
//   each stack ends with a final RMS norm;  FF = wo·relu(wi·x)  or  wo·(gelu_tanh(wi_0·x) ⊙ wi_1·x)  ("gated-gelu")
//   logits = (x · d^−½) · sharedᵀ  when tied (t5),  x · lm_headᵀ  when not (t5 v1.1, flan-t5)
// Heads are d_kv wide, which need not be d_model / heads.
#include <cmath>
#include <cstring>

#include "models/registry.h"
#include "nn/ops.h"

namespace wf::models {
namespace {

struct attention_block {
    const float* norm = nullptr;  // RMS norm before it
    linear q, k, v, o;            // (inner, E) ×3, (E, inner); no biases
};
struct ffn_block {
    const float* norm = nullptr;
    linear wi, wi_1, wo;  // wi: (F, E) (gated: wi_0), wi_1: (F, E) gated only, wo: (E, F)
};
struct encoder_layer {
    attention_block self;
    ffn_block ff;
};
struct decoder_layer {
    attention_block self, cross;
    ffn_block ff;
};

// Hugging Face's _relative_position_bucket for rel = key position − query position.
int64_t bucket(int64_t rel, bool bidirectional, int64_t n_buckets, int64_t max_distance) {
    int64_t out = 0;
    if (bidirectional) {
        n_buckets /= 2;
        if (rel > 0) out += n_buckets;
        rel = rel < 0 ? -rel : rel;
    } else {
        rel = rel < 0 ? -rel : 0;  // a later key (masked anyway) counts as distance 0
    }
    const int64_t exact = n_buckets / 2;
    if (rel < exact) return out + rel;
    // the log-spaced buckets, in float32 as PyTorch forms them, truncated
    const float scaled = std::log(float(rel) / float(exact)) / float(std::log(double(max_distance) / double(exact))) * float(n_buckets - exact);
    return out + std::min<int64_t>(exact + int64_t(scaled), n_buckets - 1);
}

class t5 final : public model, public seq2seq_lm {
public:
    t5(const hparams& hp, const tensor_source& src, const storage_plan& plan) : model(hp) {
        weight_store s(src, plan);
        const int64_t E = hp.n_embd, V = hp.n_vocab, I = hp.n_head * hp.head_dim();
        const raw_tensor& shared = s.get({"shared.weight", "encoder.embed_tokens.weight"});
        shared_ = s.matrix(shared, V, E);
        lm_head_ = hp.tied_embeddings ? shared_ : s.matrix(s.get({"lm_head.weight"}), V, E);
        auto lin = [&](const std::string& n, int64_t out, int64_t in) { return s.lin({n + ".weight"}, {}, out, in); };
        auto rms = [&](const std::string& n) { return s.vector(s.get({n + ".weight"}), E); };
        auto attn = [&](const std::string& p, const std::string& kind) {
            const std::string a = p + kind + ".";
            return attention_block{rms(p + "layer_norm"), lin(a + "q", I, E), lin(a + "k", I, E), lin(a + "v", I, E), lin(a + "o", E, I)};
        };
        auto ffn = [&](const std::string& p, int64_t F) {
            ffn_block f;
            f.norm = rms(p + "layer_norm");
            if (hp.gated_ff) {
                f.wi = lin(p + "DenseReluDense.wi_0", F, E);
                f.wi_1 = lin(p + "DenseReluDense.wi_1", F, E);
            } else {
                f.wi = lin(p + "DenseReluDense.wi", F, E);
            }
            f.wo = lin(p + "DenseReluDense.wo", E, F);
            return f;
        };
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string p = "encoder.block." + std::to_string(l) + ".layer.";
            enc_.push_back({attn(p + "0.", "SelfAttention"), ffn(p + "1.", hp.n_ff)});
        }
        for (int64_t l = 0; l < hp.n_dec_layer; ++l) {
            const std::string p = "decoder.block." + std::to_string(l) + ".layer.";
            dec_.push_back({attn(p + "0.", "SelfAttention"), attn(p + "1.", "EncDecAttention"), ffn(p + "2.", hp.n_dec_ff)});
        }
        enc_final_ = rms("encoder.final_layer_norm");
        dec_final_ = rms("decoder.final_layer_norm");
        // the (n_buckets, H) tables, as f32
        auto table = [&](const std::string& n, int64_t H) {
            const matrix_view t = s.matrix(s.get({n}), hp.rel_buckets, H, false, false);
            std::vector<float> out(static_cast<size_t>(hp.rel_buckets * H));
            for (int64_t b = 0; b < hp.rel_buckets; ++b) dequantize_row(t, b, out.data() + b * H);
            return out;
        };
        enc_rel_ = table("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", hp.n_head);
        dec_rel_ = table("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", hp.n_dec_head);
        keep(s);
    }
    const seq2seq_lm* as_seq2seq_lm() const override { return this; }

    seq2seq_state encode_source(std::span<const int32_t> source, int64_t capacity, int64_t n_seq, forward_trace* trace,
                                const cancel_fn* cancel) const override {
        const int64_t S = int64_t(source.size()), E = hp_.n_embd, F = hp_.n_ff, H = hp_.n_head, D = hp_.head_dim(), I = H * D;
        if (S < 1) throw error("t5: empty source");
        if (S > hp_.n_ctx) throw error("t5: the source is " + std::to_string(S) + " tokens, the model takes at most " + std::to_string(hp_.n_ctx));
        if (capacity < 1 || capacity > hp_.n_ctx)
            throw error("t5: target capacity " + std::to_string(capacity) + " is outside [1, " + std::to_string(hp_.n_ctx) + "]");
        if (n_seq < 1 || n_seq > 1024) throw error("t5: " + std::to_string(n_seq) + " target sequences is outside [1, 1024]");
        check_ids(source);
        seq2seq_state st;
        st.self = kv_cache(hp_.n_dec_layer, n_seq, capacity, hp_.n_dec_head * D);
        st.cross = kv_cache(hp_.n_dec_layer, 1, S, hp_.n_dec_head * D);
        arena& m = st.scratch;
        float* x = m.alloc<float>(S * E);
        float* h = m.alloc<float>(S * E);
        float* q = m.alloc<float>(S * I);
        float* k = m.alloc<float>(S * I);
        float* v = m.alloc<float>(S * I);
        float* a = m.alloc<float>(S * I);
        float* ff = m.alloc<float>(2 * S * F);
        float* bias = m.alloc<float>(H * S * S);
        embed(shared_, source.data(), S, x);
        position_bias(enc_rel_, true, H, S, S, 0, bias);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + S * E);
        for (int64_t l = 0; l < hp_.n_layer; ++l) {
            check_cancel(cancel);
            const encoder_layer& L = enc_[size_t(l)];
            rms_norm(x, S, E, L.self.norm, hp_.eps, h);
            apply(L.self.q, h, S, q);
            apply(L.self.k, h, S, k);
            apply(L.self.v, h, S, v);
            attention_args at{q, I, k, I, v, I, a, I, S, S, int(H), int(D), 1.0f};
            at.bias = bias;
            attend(at, trace, int(l));
            apply(L.self.o, a, S, h);
            add(x, h, S * E);
            feed_forward(L.ff, S, F, x, h, ff);
            // as Hugging Face's hidden states: the embeddings, each block's output but the last's, the final norm's
            if (trace && trace->want_hidden && l + 1 < hp_.n_layer) trace->hidden.emplace_back(x, x + S * E);
        }
        rms_norm(x, S, E, enc_final_, hp_.eps, x);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + S * E);
        for (int64_t l = 0; l < hp_.n_dec_layer; ++l) {
            check_cancel(cancel);
            apply(dec_[size_t(l)].cross.k, x, S, st.cross.k(l, 0, 0));
            apply(dec_[size_t(l)].cross.v, x, S, st.cross.v(l, 0, 0));
        }
        st.cross.n_past = S;
        return st;
    }

    linear output_layer() const override { return {lm_head_, nullptr}; }

private:
    std::span<const float> run_decoder(seq2seq_state& s, std::span<const int32_t> ids, bool all_logits, bool hidden, forward_trace* trace,
                                       const cancel_fn* cancel) const override {
        kv_cache& c = s.self;
        const int64_t B = c.n_seq(), N = int64_t(ids.size()), T = B > 0 ? N / B : 0, p0 = c.n_past, S = s.n_source();
        const int64_t E = hp_.n_embd, F = hp_.n_dec_ff, H = hp_.n_dec_head, D = hp_.head_dim(), I = H * D, V = hp_.n_vocab;
        if (S < 1) throw error("t5: decode before encode_source");
        if (N == 0 || N % B != 0) throw error("t5: " + std::to_string(N) + " tokens do not split into " + std::to_string(B) + " sequences");
        if (p0 + T > c.capacity())
            throw error("t5: " + std::to_string(p0 + T) + " target positions exceed the capacity of " + std::to_string(c.capacity()));
        check_ids(ids);

        arena& m = s.scratch;
        m.reset();
        float* x = m.alloc<float>(N * E);
        float* h = m.alloc<float>(N * E);
        float* q = m.alloc<float>(N * I);
        float* k = m.alloc<float>(N * I);
        float* v = m.alloc<float>(N * I);
        float* a = m.alloc<float>(N * I);
        float* ff = m.alloc<float>(2 * N * F);
        float* bias = m.alloc<float>(H * T * (p0 + T));
        embed(shared_, ids.data(), N, x);
        position_bias(dec_rel_, false, H, T, p0 + T, p0, bias);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        for (int64_t l = 0; l < hp_.n_dec_layer; ++l) {
            check_cancel(cancel);  // n_past changes only at the end: a cancel leaves the cache as it was
            const decoder_layer& L = dec_[size_t(l)];
            // causal self-attention with the position bias; this step's keys and values go into the cache
            rms_norm(x, N, E, L.self.norm, hp_.eps, h);
            apply(L.self.q, h, N, q);
            apply(L.self.k, h, N, k);
            apply(L.self.v, h, N, v);
            for (int64_t b = 0; b < B; ++b)
                for (int64_t i = 0; i < T; ++i) {
                    std::memcpy(c.k(l, b, p0 + i), k + (b * T + i) * I, size_t(I) * 4);
                    std::memcpy(c.v(l, b, p0 + i), v + (b * T + i) * I, size_t(I) * 4);
                }
            for (int64_t b = 0; b < B; ++b) {
                attention_args at{q + b * T * I, I, c.k(l, b, 0), I, c.v(l, b, 0), I, a + b * T * I, I, T, p0 + T, int(H), int(D), 1.0f, true, p0};
                at.bias = bias;
                attend(at, b == 0 ? trace : nullptr, int(l));
            }
            apply(L.self.o, a, N, h);
            add(x, h, N * E);
            // cross-attention over the source (no position bias): every sequence reads its source's keys and values
            // (the beams of one source the same ones)
            rms_norm(x, N, E, L.cross.norm, hp_.eps, h);
            apply(L.cross.q, h, N, q);
            float* probs = nullptr;
            if (trace && trace->want_cross) {
                trace->cross_attention.emplace_back(size_t(B * H * T * S));
                probs = trace->cross_attention.back().data();
            }
            for (int64_t b = 0; b < B; ++b) {
                const int64_t src = s.source_of(b);
                attention_args at{q + b * T * I, I, s.cross.k(l, src, 0), I, s.cross.v(l, src, 0), I, a + b * T * I, I, T, s.source_length(b), int(H), int(D), 1.0f};
                attend(at, probs ? probs + b * H * T * S : nullptr);
            }
            apply(L.cross.o, a, N, h);
            add(x, h, N * E);
            feed_forward(L.ff, N, F, x, h, ff);
            if (trace && trace->want_hidden && l + 1 < hp_.n_dec_layer) trace->hidden.emplace_back(x, x + T * E);
        }
        // the final norm, then the output layer (tied: on x · d^−½), for the rows asked for
        const int64_t rows = all_logits ? N : B;
        float* last = x;
        if (!all_logits) {
            for (int64_t b = 0; b < B; ++b) std::memcpy(h + b * E, x + (b * T + T - 1) * E, size_t(E) * 4);
            last = h;
        }
        rms_norm(last, rows, E, dec_final_, hp_.eps, last);
        if (trace && trace->want_hidden && all_logits) trace->hidden.emplace_back(last, last + T * E);
        if (hp_.tied_embeddings) {
            const float scale = 1.0f / std::sqrt(float(E));
            for (int64_t i = 0; i < rows * E; ++i) last[i] *= scale;
        }
        c.n_past = p0 + T;
        if (hidden) return {last, size_t(B * E)};
        if (s.logits.size() < size_t(rows * V)) s.logits.resize(size_t(rows * V));
        apply(linear{lm_head_, nullptr}, last, rows, s.logits.data());
        return {s.logits.data(), size_t(rows * V)};
    }

    void check_ids(std::span<const int32_t> ids) const {
        for (int32_t id : ids)
            if (id < 0 || id >= hp_.n_vocab) throw error("t5: token id " + std::to_string(id) + " is out of range");
    }
    // bias (H, n_q, n_k): the table's value for the bucket of (key − query), queries at positions q0 … q0 + n_q − 1
    void position_bias(const std::vector<float>& table, bool bidirectional, int64_t H, int64_t n_q, int64_t n_k, int64_t q0, float* bias) const {
        for (int64_t i = 0; i < n_q; ++i)
            for (int64_t j = 0; j < n_k; ++j) {
                const float* row = table.data() + bucket(j - (q0 + i), bidirectional, hp_.rel_buckets, hp_.rel_max_distance) * H;
                for (int64_t h = 0; h < H; ++h) bias[(h * n_q + i) * n_k + j] = row[h];
            }
    }
    // x = x + wo·act(wi·RMS(x)) (gated: wo·(act(wi_0·h) ⊙ wi_1·h)); h: (N, E), ff: (2·N, F) scratch
    void feed_forward(const ffn_block& f, int64_t N, int64_t F, float* x, float* h, float* ff) const {
        rms_norm(x, N, hp_.n_embd, f.norm, hp_.eps, h);
        apply(f.wi, h, N, ff);
        activate(hp_.act, ff, N * F);
        if (hp_.gated_ff) {
            apply(f.wi_1, h, N, ff + N * F);
            mul(ff, ff + N * F, N * F);
        }
        apply(f.wo, ff, N, h);
        add(x, h, N * hp_.n_embd);
    }

    matrix_view shared_;   // (V, E)
    matrix_view lm_head_;  // (V, E)
    std::vector<float> enc_rel_, dec_rel_;  // (buckets, H)
    const float* enc_final_ = nullptr;
    const float* dec_final_ = nullptr;
    std::vector<encoder_layer> enc_;
    std::vector<decoder_layer> dec_;
};

hparams from_config(const json& j, const std::string& file) {
    hparams hp;
    // T5Config's defaults
    hp.n_vocab = config_int(j, "vocab_size", 32128, file);
    hp.n_embd = config_int(j, "d_model", 512, file);
    hp.n_head_dim = config_int(j, "d_kv", 64, file);
    hp.n_ff = hp.n_dec_ff = config_int(j, "d_ff", 2048, file);
    hp.n_layer = config_int(j, "num_layers", 6, file);
    hp.n_dec_layer = config_int(j, "num_decoder_layers", hp.n_layer, file);
    hp.n_head = hp.n_head_kv = hp.n_dec_head = config_int(j, "num_heads", 8, file);
    hp.rel_buckets = config_int(j, "relative_attention_num_buckets", 32, file);
    hp.rel_max_distance = config_int(j, "relative_attention_max_distance", 128, file);
    hp.eps = float(config_float(j, "layer_norm_epsilon", 1e-6, file));
    hp.pad_token_id = config_int(j, "pad_token_id", 0, file);
    hp.eos_token_id = config_int(j, "eos_token_id", 1, file);
    hp.decoder_start_token_id = config_int(j, "decoder_start_token_id", hp.pad_token_id, file);
    hp.tied_embeddings = config_bool(j, "tie_word_embeddings", true, file);
    hp.n_ctx = 512;  // relative positions have no limit; this is the engine's cap on a source or a translation
    // feed_forward_proj: "relu" | "gated-gelu" (gelu_new) | "[gated-]<activation>"; dense_act_fn and is_gated_act, when
    // the file has them, are what Hugging Face's T5Config keeps
    std::string ff = config_string(j, "feed_forward_proj", "relu", file);
    if (ff.rfind("gated-", 0) == 0) hp.gated_ff = true, ff = ff.substr(6);
    if (ff == "gelu" && hp.gated_ff) ff = "gelu_new";
    hp.gated_ff = config_bool(j, "is_gated_act", hp.gated_ff, file);
    hp.act = parse_activation(config_string(j, "dense_act_fn", ff, file), file, j.contains("dense_act_fn") ? "dense_act_fn" : "feed_forward_proj");
    if (hp.rel_buckets < 2 || hp.rel_buckets > 4096 || hp.rel_max_distance < 1 || hp.rel_max_distance > (1 << 20))
        throw error(file + ": relative_attention_num_buckets " + std::to_string(hp.rel_buckets) + " / relative_attention_max_distance " +
                    std::to_string(hp.rel_max_distance) + " are outside [2, 4096] / [1, 2^20]");
    return hp;
}

constexpr std::string_view model_types[] = {"t5"};
constexpr std::string_view hf_architectures[] = {"T5ForConditionalGeneration"};

std::unique_ptr<model> build(const hparams& hp, const tensor_source& src, const storage_plan& plan) { return std::make_unique<t5>(hp, src, plan); }

}  // namespace

extern const architecture t5_architecture = {"t5", model_types, hf_architectures, {}, cap_seq2seq, from_config, nullptr, {}, build};

}  // namespace wf::models
