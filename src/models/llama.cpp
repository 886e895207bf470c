// Llama, following Hugging Face's modeling_llama.py (LlamaDecoderLayer, LlamaAttention, LlamaMLP, LlamaRMSNorm):
//   x = embed_tokens[ids]                                                        (Gemma: × √E)
//   per layer (pre-norm):  x = x + W_o·Attention_causal(RoPE(W_q·h), RoPE(W_k·h), W_v·h),  h = RMSNorm_1(x)
//                          x = x + W_down·(act(W_gate·h) ⊙ W_up·h),                  h = RMSNorm_2(x)
//                          (act: SiLU; Gemma's GELU-tanh. Gemma 2 also norms each sub-layer's output before adding it)
//   logits = RMSNorm_f(x) · W_outᵀ       (W_out = embed_tokens when tied; Gemma 2 soft-caps them), for each sequence's
//            last position only unless asked — and then the last layer past its keys and values at those positions only
// Grouped-query attention: n_head_kv key/value heads, each shared by n_head / n_head_kv query heads; the KV cache
// holds the narrower rows. The same pass runs the families built like it (models/llama.h): Qwen2's Q/K/V biases,
// Mistral's sliding window, Gemma's scalings and Phi-3's fused matrices are hyper-parameters, layouts and optional
// tensors, not other code.
#include "models/llama.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>

#include "nn/ops.h"

namespace wf::models {
namespace {

struct layer {
    const float* attn_norm;  // (E) input_layernorm
    linear q, k, v;          // (H·D, E), (Hkv·D, E), (Hkv·D, E); biases where the checkpoint has them (Qwen2)
    linear o;                // (E, H·D)
    const float* post_attn_norm;  // (E) Gemma 2: on the attention's output; null: none
    const float* ffn_norm;   // (E) before the feed-forward
    linear gate, up;         // (F, E)
    linear down;             // (E, F)
    const float* post_ffn_norm;   // (E) Gemma 2: on the feed-forward's output; null: none
    int64_t window;          // the attention's sliding window (attention_args::window); −1: none
};

class llama final : public model, public causal_lm {
public:
    llama(const hparams& hp, const tensor_source& src, const storage_plan& plan, const decoder_layout& layout) : model(hp) {
        weight_store s(src, plan);
        const int64_t E = hp.n_embd, F = hp.n_ff, V = hp.n_vocab, D = hp.head_dim(), Q = hp.n_head * D, KV = hp.n_head_kv * D;
        const raw_tensor& embed = s.get({"model.embed_tokens.weight"});
        embed_ = s.matrix(embed, V, E);
        // groupable: the fused matrices are split with rows_of, so their q8_0 / q4_0 rows are grouped only where each part is
        // whole groups of 4 (weights.h)
        auto lin = [&](const std::string& name, int64_t out, int64_t in, bool groupable = true) {
            linear l = s.lin({name + ".weight"}, {}, out, in, false, groupable);
            if (const raw_tensor* b = s.try_get({name + ".bias"})) l.b = s.vector(*b, out);
            return l;
        };
        // an RMSNorm's weight, as the kernel multiplies by it (Gemma's 1 + w added here, once)
        auto rms = [&](const std::string& name) -> const float* {
            if (name.empty()) return nullptr;
            const float* w = s.vector(s.get({name}), E);
            if (hp.norm_weight_offset == 0.0f) return w;
            std::vector<float>& shifted = shifted_norms_.emplace_back(w, w + E);
            for (float& v : shifted) v += hp.norm_weight_offset;
            return shifted.data();
        };
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string p = "model.layers." + std::to_string(l) + ".";
            auto norm = [&](const std::string& n) { return rms(n.empty() ? n : p + n + ".weight"); };
            layer L{};
            L.attn_norm = norm("input_layernorm");
            if (layout.fused_qkv) {
                const linear qkv = lin(p + "self_attn.qkv_proj", Q + 2 * KV, E, Q % row_group == 0 && KV % row_group == 0);
                L.q = rows_of(qkv, 0, Q), L.k = rows_of(qkv, Q, KV), L.v = rows_of(qkv, Q + KV, KV);
            } else {
                L.q = lin(p + "self_attn.q_proj", Q, E), L.k = lin(p + "self_attn.k_proj", KV, E), L.v = lin(p + "self_attn.v_proj", KV, E);
            }
            L.o = lin(p + "self_attn.o_proj", E, Q);
            L.post_attn_norm = norm(layout.post_attn_norm);
            L.ffn_norm = norm(layout.ffn_norm);
            if (layout.fused_gate_up) {
                const linear gate_up = lin(p + "mlp.gate_up_proj", 2 * F, E, F % row_group == 0);
                L.gate = rows_of(gate_up, 0, F), L.up = rows_of(gate_up, F, F);
            } else {
                L.gate = lin(p + "mlp.gate_proj", F, E), L.up = lin(p + "mlp.up_proj", F, E);
            }
            L.down = lin(p + "mlp.down_proj", E, F);
            L.post_ffn_norm = norm(layout.post_ffn_norm);
            const int64_t pattern = hp.sliding_window_pattern;
            const bool slides = hp.sliding_window > 0 && (pattern == 0 || l % pattern != pattern - 1);
            L.window = slides ? hp.sliding_window - 1 : -1;
            layers_.push_back(L);
        }
        norm_ = rms("model.norm.weight");
        const raw_tensor* head = s.try_get({"lm_head.weight"});
        if (!head && !hp.tied_embeddings) throw error(std::string(hp.arch) + ": tie_word_embeddings is false but the checkpoint has no lm_head.weight");
        out_ = !head || weight_store::same(*head, embed) ? embed_ : s.matrix(*head, V, E);
        // the rotation's frequencies; llama.cpp's Llama 3 files carry their scaling as per-pair divisors
        inv_freq_ = hp.rope_inv_freq();
        if (const raw_tensor* f = s.try_get({"rope_freqs.weight"})) {
            const float* div = s.vector(*f, int64_t(inv_freq_.size()));
            for (size_t i = 0; i < inv_freq_.size(); ++i) {
                if (!(div[i] > 0.0f && std::isfinite(div[i]))) throw error(f->file + ": rope frequency factor " + std::to_string(div[i]) + " is not positive");
                inv_freq_[i] /= div[i];
            }
        }
        keep(s);
    }
    const causal_lm* as_causal_lm() const override { return this; }

    decoder_state new_state(int64_t capacity, int64_t n_seq) const override {
        if (capacity < 1 || capacity > hp_.n_ctx)
            throw error(hp_.arch + ": cache capacity " + std::to_string(capacity) + " is outside [1, " + std::to_string(hp_.n_ctx) + "]");
        if (n_seq < 1 || n_seq > 1024) throw error(hp_.arch + ": " + std::to_string(n_seq) + " sequences is outside [1, 1024]");
        decoder_state s;
        s.cache = kv_cache(hp_.n_layer, n_seq, capacity, hp_.n_head_kv * hp_.head_dim());
        return s;
    }

    // (none where the logits are soft-capped: the screen's bounds are on x·Wᵀ)
    linear output_layer() const override { return hp_.final_softcap > 0.0f ? linear{} : linear{out_, nullptr}; }

    std::span<const float> run(decoder_state& s, std::span<const int32_t> ids, bool all_logits, bool hidden, forward_trace* trace,
                               const cancel_fn* cancel) const override {
        kv_cache& c = s.cache;
        const int64_t B = c.n_seq(), N = int64_t(ids.size()), T = N / B, p0 = c.n_past;
        const int64_t E = hp_.n_embd, F = hp_.n_ff, H = hp_.n_head, Hkv = hp_.n_head_kv, D = hp_.head_dim(), V = hp_.n_vocab;
        const int64_t Q = H * D, KV = Hkv * D;
        const std::string& name = hp_.arch;
        if (N == 0 || N % B != 0) throw error(name + ": " + std::to_string(N) + " tokens do not split into " + std::to_string(B) + " sequences");
        if (p0 + T > c.capacity())
            throw error(name + ": " + std::to_string(p0 + T) + " positions exceed the context of " + std::to_string(c.capacity()));
        for (int32_t id : ids)
            if (id < 0 || id >= V) throw error(name + ": token id " + std::to_string(id) + " is out of range");

        arena& m = s.scratch;
        m.reset();
        float* x = m.alloc<float>(N * E);
        float* h = m.alloc<float>(N * E);
        float* q = m.alloc<float>(N * Q);
        float* k = m.alloc<float>(N * KV);
        float* v = m.alloc<float>(N * KV);
        float* a = m.alloc<float>(N * Q);
        float* gate = m.alloc<float>(N * F);
        float* up = m.alloc<float>(N * F);
        int32_t* pos = m.alloc<int32_t>(N);
        for (int64_t i = 0; i < N; ++i) pos[i] = int32_t(p0 + i % T);
        const int rot = int(hp_.n_rot > 0 ? hp_.n_rot : D);

        embed(embed_, ids.data(), N, x);
        if (hp_.embedding_multiplier != 1.0f)
            for (int64_t i = 0; i < N * E; ++i) x[i] *= hp_.embedding_multiplier;
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);

        // When only each sequence's last logits are asked for, the last layer runs its queries, attention and
        // feed-forward at those B rows only; its keys and values, which the cache keeps, come from every row.
        const int64_t last_layer = hp_.n_layer - 1;
        const bool narrow = !all_logits && T > 1 && !(trace && trace->wants_layer(int(last_layer)));
        int32_t* pos_last = m.alloc<int32_t>(B);
        std::fill_n(pos_last, B, int32_t(p0 + T - 1));
        for (int64_t l = 0; l < hp_.n_layer; ++l) {
            check_cancel(cancel);  // the cache's n_past is unchanged until the end, so a cancel leaves it as it was
            const layer& L = layers_[size_t(l)];
            const bool rows = narrow && l == last_layer;
            const int64_t Tq = rows ? 1 : T, Nq = B * Tq;  // the query rows: each sequence's last Tq
            // self-attention on rotated queries and keys; this step's keys and values go straight into the cache
            rms_norm(x, N, E, L.attn_norm, hp_.eps, h);
            apply(L.k, h, N, k);
            apply(L.v, h, N, v);
            rope(k, N, KV, int(Hkv), int(D), rot, pos, inv_freq_.data(), hp_.rope_neox);
            if (rows) keep_last_rows(h, B, T, E);
            apply(L.q, h, Nq, q);
            rope(q, Nq, Q, int(H), int(D), rot, rows ? pos_last : pos, inv_freq_.data(), hp_.rope_neox);
            for (int64_t b = 0; b < B; ++b) {
                for (int64_t i = 0; i < T; ++i) {
                    std::memcpy(c.k(l, b, p0 + i), k + (b * T + i) * KV, size_t(KV) * 4);
                    std::memcpy(c.v(l, b, p0 + i), v + (b * T + i) * KV, size_t(KV) * 4);
                }
                attention_args at{q + b * Tq * Q, Q, c.k(l, b, 0), KV, c.v(l, b, 0), KV, a + b * Tq * Q, Q, Tq, p0 + T, int(H), int(D),
                                  hp_.attn_scale > 0.0f ? hp_.attn_scale : 1.0f / std::sqrt(float(D)), true, p0 + T - Tq};
                at.n_head_kv = int(Hkv);
                at.window = L.window;
                at.softcap = hp_.attn_softcap;
                attend(at, b == 0 ? trace : nullptr, int(l));
            }
            if (rows) keep_last_rows(x, B, T, E);
            apply(L.o, a, Nq, h);
            if (L.post_attn_norm) rms_norm(h, Nq, E, L.post_attn_norm, hp_.eps, h);
            add(x, h, Nq * E);
            // gated feed-forward
            rms_norm(x, Nq, E, L.ffn_norm, hp_.eps, h);
            apply(L.gate, h, Nq, gate);
            apply(L.up, h, Nq, up);
            if (hp_.act == activation::silu) {
                silu_mul(gate, up, Nq * F);
            } else {
                activate(hp_.act, gate, Nq * F);
                mul(gate, up, Nq * F);
            }
            apply(L.down, gate, Nq, h);
            if (L.post_ffn_norm) rms_norm(h, Nq, E, L.post_ffn_norm, hp_.eps, h);
            add(x, h, Nq * E);
            if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        }
        // final norm and the output matrix, for the rows asked for (narrow: x holds each sequence's last row already)
        const int64_t rows = all_logits ? N : B;
        if (!all_logits && !narrow) keep_last_rows(x, B, T, E);  // each sequence's last row, side by side
        rms_norm(x, rows, E, norm_, hp_.eps, x);
        if (hidden) {
            c.n_past = p0 + T;
            return {x, size_t(B * E)};
        }
        if (s.logits.size() < size_t(rows * V)) s.logits.resize(size_t(rows * V));
        apply(linear{out_, nullptr}, x, rows, s.logits.data());
        if (const float cap = hp_.final_softcap; cap > 0.0f)
            for (int64_t i = 0; i < rows * V; ++i) s.logits[size_t(i)] = cap * std::tanh(s.logits[size_t(i)] / cap);
        c.n_past = p0 + T;
        return {s.logits.data(), size_t(rows * V)};
    }

private:
    matrix_view embed_;  // (V, E) token embeddings
    std::vector<layer> layers_;
    const float* norm_;
    matrix_view out_;  // (V, E): embed_ (tied) unless the file has its own
    std::vector<float> inv_freq_;
    std::deque<std::vector<float>> shifted_norms_;  // Gemma's 1 + w (a deque: the pointers stay put)
};

hparams from_config(const json& j, const std::string& file) { return llama_config(j, file); }
hparams from_gguf(const gguf_file& g) { return llama_gguf(g, "llama", false); }

constexpr std::string_view model_types[] = {"llama"};
constexpr std::string_view hf_architectures[] = {"LlamaForCausalLM"};
constexpr std::string_view gguf_architectures[] = {"llama"};

}  // namespace

std::unique_ptr<model> build_decoder(const hparams& hp, const tensor_source& src, const storage_plan& plan, const decoder_layout& layout) {
    return std::make_unique<llama>(hp, src, plan, layout);
}

hparams llama_config(const json& j, const std::string& file) {
    hparams hp;
    hp.n_vocab = config_int(j, "vocab_size", 32000, file);
    hp.n_embd = config_int(j, "hidden_size", 4096, file);
    hp.n_layer = config_int(j, "num_hidden_layers", 32, file);
    hp.n_head = config_int(j, "num_attention_heads", 32, file);
    hp.n_head_kv = config_int(j, "num_key_value_heads", hp.n_head, file);
    hp.n_head_dim = config_int(j, "head_dim", 0, file);
    hp.n_ff = config_int(j, "intermediate_size", 11008, file);
    hp.n_ctx = std::min(config_int(j, "max_position_embeddings", 2048, file), max_context);
    hp.eps = float(config_float(j, "rms_norm_eps", 1e-6, file));
    hp.rope_theta = float(config_float(j, "rope_theta", 10000.0, file));
    hp.tied_embeddings = !j.contains("tie_word_embeddings") || j["tie_word_embeddings"] != false;
    hp.bos_token_id = j.contains("bos_token_id") && j["bos_token_id"].is_number_integer() ? config_int(j, "bos_token_id", -1, file) : -1;
    hp.eos_token_id = j.contains("eos_token_id") && j["eos_token_id"].is_number_integer() ? config_int(j, "eos_token_id", -1, file) : -1;
    hp.act = parse_activation(config_string(j, "hidden_act", "silu", file), file, "hidden_act");  // of the gate
    if (hp.act == activation::relu || hp.act == activation::tanh)
        throw error(file + ": hidden_act \"" + config_string(j, "hidden_act", "", file) + "\" is not supported by a Llama-style decoder's gate");
    if (j.contains("pretraining_tp") && config_int(j, "pretraining_tp", 1, file) != 1)
        throw error(file + ": pretraining_tp ≠ 1 is not supported");
    if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) {
        const json& r = j["rope_scaling"];
        if (!r.is_object()) throw error(file + ": rope_scaling must be an object or null");
        const std::string w = file + " rope_scaling";
        std::string type = config_string(r, "rope_type", "", w);
        if (type.empty()) type = config_string(r, "type", "", w);
        if (type != "default") {
            hp.rope_scaling.type = type;
            hp.rope_scaling.factor = float(config_float(r, "factor", 1.0, w));
            hp.rope_scaling.low_freq_factor = float(config_float(r, "low_freq_factor", 1.0, w));
            hp.rope_scaling.high_freq_factor = float(config_float(r, "high_freq_factor", 4.0, w));
            hp.rope_scaling.original_ctx = config_int(r, "original_max_position_embeddings", 8192, w);
        }
    }
    const double partial = config_float(j, "partial_rotary_factor", 1.0, file);
    if (partial != 1.0) hp.n_rot = int64_t(std::lround(partial * double(hp.n_head_dim > 0 ? hp.n_head_dim : hp.n_embd / std::max<int64_t>(hp.n_head, 1))));
    return hp;
}

hparams llama_gguf(const gguf_file& g, const std::string& arch, bool neox) {
    hparams hp = gguf_common_hparams(g, arch);
    hp.n_ctx = std::min(hp.n_ctx, max_context);
    const std::string k = arch + ".";
    if (g.has(k + "attention.layer_norm_rms_epsilon")) hp.eps = float(g.get_float(k + "attention.layer_norm_rms_epsilon"));
    if (g.has(k + "rope.freq_base")) hp.rope_theta = float(g.get_float(k + "rope.freq_base"));
    if (g.has(k + "attention.key_length")) {
        hp.n_head_dim = int64_t(std::min<uint64_t>(g.get_uint(k + "attention.key_length"), 1 << 20));
        if (g.has(k + "attention.value_length") && g.get_uint(k + "attention.value_length") != uint64_t(hp.n_head_dim))
            throw error(g.file_name + ": " + k + "attention.value_length differs from key_length, which is not supported");
        if (hp.n_head > 0 && hp.n_head_dim * hp.n_head == hp.n_embd) hp.n_head_dim = 0;  // the usual width: nothing to say
    }
    if (g.has(k + "rope.dimension_count")) {
        hp.n_rot = int64_t(std::min<uint64_t>(g.get_uint(k + "rope.dimension_count"), 1 << 20));
        if (hp.n_head > 0 && hp.n_rot == hp.head_dim()) hp.n_rot = 0;
    }
    if (g.has(k + "rope.scaling.type")) {
        const std::string t = g.get_string(k + "rope.scaling.type");
        if (t == "linear") hp.rope_scaling.type = t, hp.rope_scaling.factor = float(g.get_float(k + "rope.scaling.factor"));
        else if (t != "none") throw error(g.file_name + ": " + k + "rope.scaling.type \"" + t + "\" is not supported (supported: none, linear)");
    }
    hp.rope_neox = neox;
    hp.act = activation::silu;
    hp.tied_embeddings = !g.find("output.weight");
    if (g.has("tokenizer.ggml.bos_token_id")) hp.bos_token_id = int64_t(std::min<uint64_t>(g.get_uint("tokenizer.ggml.bos_token_id"), 1 << 30));
    if (g.has("tokenizer.ggml.eos_token_id")) hp.eos_token_id = int64_t(std::min<uint64_t>(g.get_uint("tokenizer.ggml.eos_token_id"), 1 << 30));
    return hp;
}


extern const architecture llama_architecture = {
    "llama", model_types, hf_architectures, gguf_architectures, cap_causal_lm, from_config, from_gguf, llama_gguf_names, build_decoder_with<llama_layout>};

}  // namespace wf::models
