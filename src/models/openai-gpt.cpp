// GPT-1 ("Improving Language Understanding by Generative Pre-Training"), following Hugging Face's modeling_openai.py
// (OpenAIGPTLMHeadModel): a decoder-only Transformer, post-LN, learned positions, no final norm.
//   x = tokens_embed[ids] + positions_embed[positions]
//   per block:  n = LN_1(x + W_proj·Attention_causal(x));  x = LN_2(n + W_down·act(W_up·n))
//   logits = x · tokens_embedᵀ      (the tied LM head)
// The activation is config.json's "afn" as Hugging Face's GPT-1 reads it: "gelu" is the tanh approximation there.
#include <cmath>
#include <cstring>

#include "core/checked.h"
#include "models/registry.h"
#include "nn/ops.h"

namespace wf::models {
namespace {

struct block {
    linear qkv;        // (3E, E): attn.c_attn, transposed from Conv1D's (E, 3E)
    linear attn_proj;  // (E, E): attn.c_proj
    norm ln_1;         // after attention
    linear fc;         // (F, E): mlp.c_fc
    linear proj;       // (E, F): mlp.c_proj
    norm ln_2;         // after the feed-forward
};

// save_pretrained writes "transformer."-prefixed names; the hub's original checkpoint has none
std::vector<std::string> names(const std::string& n) { return {"transformer." + n, n}; }

class openai_gpt final : public model, public causal_lm {
public:
    openai_gpt(const hparams& hp, const tensor_source& src, const storage_plan& plan) : model(hp) {
        weight_store s(src, plan);
        const int64_t E = hp.n_embd, F = hp.n_ff, V = hp.n_vocab;
        const raw_tensor& wte = s.get(names("tokens_embed.weight"));
        tokens_ = s.matrix(wte, V, E);
        positions_ = s.matrix(s.get(names("positions_embed.weight")), hp.n_ctx, E, false, false);
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            auto conv = [&](const std::string& n, int64_t out, int64_t in) { return s.lin(names(p + n + ".weight"), names(p + n + ".bias"), out, in, true); };
            auto ln = [&](const std::string& n) { return s.ln(names(p + n + ".weight"), names(p + n + ".bias"), E); };
            blocks_.push_back({conv("attn.c_attn", 3 * E, E), conv("attn.c_proj", E, E), ln("ln_1"), conv("mlp.c_fc", F, E), conv("mlp.c_proj", E, F), ln("ln_2")});
        }
        const raw_tensor* head = s.try_get({"lm_head.weight"});
        lm_head_ = !head || weight_store::same(*head, wte) ? tokens_ : s.matrix(*head, V, E);
        keep(s);
    }
    const causal_lm* as_causal_lm() const override { return this; }

    decoder_state new_state(int64_t capacity, int64_t n_seq) const override {
        if (capacity < 1 || capacity > hp_.n_ctx)
            throw error("openai-gpt: cache capacity " + std::to_string(capacity) + " is outside [1, " + std::to_string(hp_.n_ctx) + "]");
        if (n_seq < 1 || n_seq > 1024) throw error("openai-gpt: " + std::to_string(n_seq) + " sequences is outside [1, 1024]");
        decoder_state s;
        s.cache = kv_cache(hp_.n_layer, n_seq, capacity, hp_.n_embd);
        return s;
    }

    linear output_layer() const override { return {lm_head_, nullptr}; }

    std::span<const float> run(decoder_state& s, std::span<const int32_t> ids, bool all_logits, bool hidden, forward_trace* trace,
                               const cancel_fn* cancel) const override {
        kv_cache& c = s.cache;
        const int64_t B = c.n_seq(), N = int64_t(ids.size()), T = N / B, p0 = c.n_past;
        const int64_t E = hp_.n_embd, F = hp_.n_ff, H = hp_.n_head, D = hp_.head_dim(), V = hp_.n_vocab;
        if (N == 0 || N % B != 0) throw error("openai-gpt: " + std::to_string(N) + " tokens do not split into " + std::to_string(B) + " sequences");
        if (p0 + T > c.capacity())
            throw error("openai-gpt: " + std::to_string(p0 + T) + " positions exceed the context of " + std::to_string(c.capacity()));
        for (int32_t id : ids)
            if (id < 0 || id >= V) throw error("openai-gpt: token id " + std::to_string(id) + " is out of range");

        arena& m = s.scratch;
        m.reset();
        float* x = m.alloc<float>(N * E);
        float* h = m.alloc<float>(N * E);
        float* qkv = m.alloc<float>(N * 3 * E);
        float* a = m.alloc<float>(N * E);
        float* ff = m.alloc<float>(N * F);
        int32_t* pos = m.alloc<int32_t>(N);
        for (int64_t i = 0; i < N; ++i) pos[i] = int32_t(p0 + i % T);

        embed(tokens_, ids.data(), N, x);
        embed(positions_, pos, N, h);
        add(x, h, N * E);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);

        for (int64_t l = 0; l < hp_.n_layer; ++l) {
            check_cancel(cancel);  // the cache's n_past is unchanged until the end, so a cancel leaves it as it was
            const block& L = blocks_[size_t(l)];
            // causal self-attention on x itself (post-LN: no norm before it)
            apply(L.qkv, x, N, qkv);
            for (int64_t b = 0; b < B; ++b) {
                for (int64_t i = 0; i < T; ++i) {
                    const float* row = qkv + (b * T + i) * 3 * E;
                    std::memcpy(c.k(l, b, p0 + i), row + E, size_t(E) * 4);
                    std::memcpy(c.v(l, b, p0 + i), row + 2 * E, size_t(E) * 4);
                }
                attention_args at{qkv + b * T * 3 * E, 3 * E, c.k(l, b, 0), E, c.v(l, b, 0), E, a + b * T * E, E, T, p0 + T, int(H), int(D),
                                  1.0f / std::sqrt(float(D)), true, p0};
                attend(at, b == 0 ? trace : nullptr, int(l));
            }
            apply(L.attn_proj, a, N, h);
            add(h, x, N * E);
            apply(L.ln_1, hp_.eps, h, N, E, x);
            // feed-forward, then the second norm
            apply(L.fc, x, N, ff);
            activate(hp_.act, ff, N * F);
            apply(L.proj, ff, N, h);
            add(h, x, N * E);
            apply(L.ln_2, hp_.eps, h, N, E, x);
            if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        }
        // the tied LM head on the last block's output, for the rows asked for
        const int64_t rows = all_logits ? N : B;
        const float* last = x + (T - 1) * E;
        if (!all_logits && B > 1) {
            for (int64_t b = 0; b < B; ++b) std::memcpy(h + b * E, x + (b * T + T - 1) * E, size_t(E) * 4);
            last = h;
        }
        if (hidden) {
            c.n_past = p0 + T;
            return {last, size_t(B * E)};
        }
        if (s.logits.size() < size_t(rows * V)) s.logits.resize(size_t(rows * V));
        apply(output_layer(), all_logits ? x : last, rows, s.logits.data());
        c.n_past = p0 + T;
        return {s.logits.data(), size_t(rows * V)};
    }

private:
    matrix_view tokens_;     // (V, E)
    matrix_view positions_;  // (P, E)
    std::vector<block> blocks_;
    matrix_view lm_head_;    // (V, E): tokens_ (tied) unless the file has its own
};

hparams from_config(const json& j, const std::string& file) {
    hparams hp;
    // OpenAIGPTConfig's defaults
    hp.n_vocab = config_int(j, "vocab_size", 40478, file);
    hp.n_embd = config_int(j, "n_embd", 768, file);
    hp.n_layer = config_int(j, "n_layer", 12, file);
    hp.n_head = hp.n_head_kv = config_int(j, "n_head", 12, file);
    hp.n_ff = saturating_mul(4, hp.n_embd);
    hp.n_ctx = config_int(j, "n_positions", 512, file);
    hp.eps = float(config_float(j, "layer_norm_epsilon", 1e-5, file));
    // Hugging Face's ACT_FNS for GPT-1: "gelu" is gelu_new (tanh), "silu" and "swish" x·σ(x), "relu"
    const std::string afn = config_string(j, "afn", "gelu", file);
    if (afn == "gelu" || afn == "gelu_new") hp.act = activation::gelu_tanh;
    else hp.act = parse_activation(afn, file, "afn");
    return hp;
}

constexpr std::string_view model_types[] = {"openai-gpt"};
constexpr std::string_view hf_architectures[] = {"OpenAIGPTLMHeadModel", "OpenAIGPTModel"};

std::unique_ptr<model> build(const hparams& hp, const tensor_source& src, const storage_plan& plan) { return std::make_unique<openai_gpt>(hp, src, plan); }

}  // namespace

extern const architecture openai_gpt_architecture = {"openai-gpt", model_types, hf_architectures, {}, cap_causal_lm, from_config, nullptr, {}, build};

}  // namespace wf::models
