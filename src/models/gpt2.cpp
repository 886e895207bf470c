// GPT-2, following Hugging Face's modeling_gpt2.py (GPT2Block, GPT2Attention, GPT2MLP):
//   x = wte[ids] + wpe[positions]
//   per layer (pre-LN):  x = x + W_proj·Attention_causal(LN_1(x));  x = x + W_down·GELU_tanh(W_up·LN_2(x))
//   logits = LN_f(x) · wteᵀ        (tied LM head, for each sequence's last position only unless asked — and then
//                                   the last layer past its keys and values at those positions only)
// Several sequences (beams) advance together: every matrix product runs on all of their tokens at once.
#include <cmath>
#include <cstring>

#include "core/checked.h"
#include "models/registry.h"
#include "nn/ops.h"

namespace wf::models {
namespace {

struct layer {
    norm ln_1;         // before attention
    linear qkv;        // (3E, E): c_attn, transposed from Conv1D's (E, 3E)
    linear attn_proj;  // (E, E): attn.c_proj
    norm ln_2;         // before the feed-forward
    linear fc;         // (F, E): mlp.c_fc
    linear proj;       // (E, F): mlp.c_proj
};

std::vector<std::string> names(const std::string& n) { return {"transformer." + n, n}; }

class gpt2 final : public model, public causal_lm {
public:
    gpt2(const hparams& hp, const tensor_source& src, const storage_plan& plan) : model(hp) {
        weight_store s(src, plan);
        const int64_t E = hp.n_embd, F = hp.n_ff, V = hp.n_vocab;
        const raw_tensor& wte = s.get(names("wte.weight"));
        wte_ = s.matrix(wte, V, E);
        wpe_ = s.matrix(s.get(names("wpe.weight")), hp.n_ctx, E, false, false);
        for (int64_t l = 0; l < hp.n_layer; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            // Conv1D weights are stored (in, out): transposed here, once.
            auto conv = [&](const std::string& n, int64_t out, int64_t in) { return s.lin(names(p + n + ".weight"), names(p + n + ".bias"), out, in, true); };
            auto ln = [&](const std::string& n) { return s.ln(names(p + n + ".weight"), names(p + n + ".bias"), E); };
            layers_.push_back({ln("ln_1"), conv("attn.c_attn", 3 * E, E), conv("attn.c_proj", E, E), ln("ln_2"), conv("mlp.c_fc", F, E),
                               conv("mlp.c_proj", E, F)});
        }
        ln_f_ = s.ln(names("ln_f.weight"), names("ln_f.bias"), E);
        const raw_tensor* head = s.try_get({"lm_head.weight"});
        lm_head_ = !head || weight_store::same(*head, wte) ? wte_ : s.matrix(*head, V, E);  // tied unless its own
        keep(s);
    }
    const causal_lm* as_causal_lm() const override { return this; }

    decoder_state new_state(int64_t capacity, int64_t n_seq) const override {
        if (capacity < 1 || capacity > hp_.n_ctx)
            throw error("gpt2: cache capacity " + std::to_string(capacity) + " is outside [1, " + std::to_string(hp_.n_ctx) + "]");
        if (n_seq < 1 || n_seq > 1024) throw error("gpt2: " + std::to_string(n_seq) + " sequences is outside [1, 1024]");
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
        if (N == 0 || N % B != 0) throw error("gpt2: " + std::to_string(N) + " tokens do not split into " + std::to_string(B) + " sequences");
        if (p0 + T > c.capacity())
            throw error("gpt2: " + std::to_string(p0 + T) + " positions exceed the context of " + std::to_string(c.capacity()));
        for (int32_t id : ids)
            if (id < 0 || id >= V) throw error("gpt2: token id " + std::to_string(id) + " is out of range");

        arena& m = s.scratch;
        m.reset();
        float* x = m.alloc<float>(N * E);
        float* h = m.alloc<float>(N * E);
        float* qkv = m.alloc<float>(N * 3 * E);
        float* a = m.alloc<float>(N * E);
        float* ff = m.alloc<float>(N * F);
        int32_t* pos = m.alloc<int32_t>(N);
        for (int64_t i = 0; i < N; ++i) pos[i] = int32_t(p0 + i % T);

        // embeddings
        embed(wte_, ids.data(), N, x);
        embed(wpe_, pos, N, h);
        add(x, h, N * E);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);

        // When only each sequence's last logits are asked for, the last layer runs its attention, projection and
        // feed-forward at those B rows only; its keys and values, which the cache keeps, come from every row.
        const int64_t last_layer = hp_.n_layer - 1;
        const bool narrow = !all_logits && T > 1 && !(trace && trace->wants_layer(int(last_layer)));
        for (int64_t l = 0; l < hp_.n_layer; ++l) {
            check_cancel(cancel);  // the cache's n_past is unchanged until the end, so a cancel leaves it as it was
            const layer& L = layers_[size_t(l)];
            const bool rows = narrow && l == last_layer;
            const int64_t Tq = rows ? 1 : T, Nq = B * Tq;  // the query rows: each sequence's last Tq
            // causal self-attention; this step's keys and values go straight into each sequence's cache
            apply(L.ln_1, hp_.eps, x, N, E, h);
            apply(L.qkv, h, N, qkv);
            for (int64_t b = 0; b < B; ++b) {
                for (int64_t i = 0; i < T; ++i) {
                    const float* row = qkv + (b * T + i) * 3 * E;
                    std::memcpy(c.k(l, b, p0 + i), row + E, size_t(E) * 4);
                    std::memcpy(c.v(l, b, p0 + i), row + 2 * E, size_t(E) * 4);
                }
                attention_args at{qkv + (b * T + T - Tq) * 3 * E, 3 * E, c.k(l, b, 0), E, c.v(l, b, 0), E, a + b * Tq * E, E, Tq, p0 + T,
                                  int(H), int(D), 1.0f / std::sqrt(float(D)), true, p0 + T - Tq};
                attend(at, b == 0 ? trace : nullptr, int(l));
            }
            if (rows) keep_last_rows(x, B, T, E);
            apply(L.attn_proj, a, Nq, h);
            add(x, h, Nq * E);
            // feed-forward
            apply(L.ln_2, hp_.eps, x, Nq, E, h);
            apply(L.fc, h, Nq, ff);
            activate(hp_.act, ff, Nq * F);
            apply(L.proj, ff, Nq, h);
            add(x, h, Nq * E);
            if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        }
        // final norm and the tied LM head, for the rows asked for (narrow: x holds each sequence's last row already)
        const int64_t rows = all_logits ? N : B;
        apply(ln_f_, hp_.eps, x, narrow ? B : N, E, x);
        if (trace && trace->want_hidden) trace->hidden.emplace_back(x, x + T * E);
        if (!all_logits && !narrow) keep_last_rows(x, B, T, E);  // each sequence's last row, side by side
        if (hidden) {
            c.n_past = p0 + T;
            return {x, size_t(B * E)};
        }
        if (s.logits.size() < size_t(rows * V)) s.logits.resize(size_t(rows * V));
        apply(output_layer(), x, rows, s.logits.data());
        c.n_past = p0 + T;
        return {s.logits.data(), size_t(rows * V)};
    }

private:
    matrix_view wte_;  // (V, E) token embeddings
    matrix_view wpe_;  // (P, E) position embeddings
    std::vector<layer> layers_;
    norm ln_f_;
    matrix_view lm_head_;  // (V, E): wte (tied) unless the file has its own
};

hparams from_config(const json& j, const std::string& file) {
    hparams hp;
    hp.n_vocab = config_int(j, "vocab_size", 50257, file);
    hp.n_embd = config_int(j, "n_embd", 768, file);
    hp.n_layer = config_int(j, "n_layer", 12, file);
    hp.n_head = hp.n_head_kv = config_int(j, "n_head", 12, file);
    hp.n_ff = config_int(j, "n_inner", saturating_mul(4, hp.n_embd), file);
    hp.n_ctx = config_int(j, "n_positions", 1024, file);
    hp.eps = float(config_float(j, "layer_norm_epsilon", 1e-5, file));
    hp.act = parse_activation(config_string(j, "activation_function", "gelu_new", file), file, "activation_function");
    hp.bos_token_id = config_int(j, "bos_token_id", -1, file);
    hp.eos_token_id = config_int(j, "eos_token_id", -1, file);
    if (j.contains("scale_attn_by_inverse_layer_idx") && j["scale_attn_by_inverse_layer_idx"] == true)
        throw error(file + ": scale_attn_by_inverse_layer_idx = true is not supported");
    if (j.contains("scale_attn_weights") && j["scale_attn_weights"] == false) throw error(file + ": scale_attn_weights = false is not supported");
    return hp;
}

hparams from_gguf(const gguf_file& g) {
    hparams hp = gguf_common_hparams(g, "gpt2");
    hp.act = activation::gelu_tanh;
    return hp;
}

constexpr name_pair gguf_global[] = {
    {"token_embd.weight", "transformer.wte.weight"}, {"position_embd.weight", "transformer.wpe.weight"},
    {"output_norm.weight", "transformer.ln_f.weight"}, {"output_norm.bias", "transformer.ln_f.bias"}, {"output.weight", "lm_head.weight"}};
constexpr name_pair gguf_layer[] = {
    {"attn_norm.weight", "ln_1.weight"}, {"attn_norm.bias", "ln_1.bias"},
    {"attn_qkv.weight", "attn.c_attn.weight"}, {"attn_qkv.bias", "attn.c_attn.bias"},
    {"attn_output.weight", "attn.c_proj.weight"}, {"attn_output.bias", "attn.c_proj.bias"},
    {"ffn_norm.weight", "ln_2.weight"}, {"ffn_norm.bias", "ln_2.bias"},
    {"ffn_up.weight", "mlp.c_fc.weight"}, {"ffn_up.bias", "mlp.c_fc.bias"},
    {"ffn_down.weight", "mlp.c_proj.weight"}, {"ffn_down.bias", "mlp.c_proj.bias"}};

constexpr std::string_view model_types[] = {"gpt2"};
constexpr std::string_view hf_architectures[] = {"GPT2LMHeadModel", "GPT2Model"};
constexpr std::string_view gguf_architectures[] = {"gpt2"};

std::unique_ptr<model> build(const hparams& hp, const tensor_source& src, const storage_plan& plan) { return std::make_unique<gpt2>(hp, src, plan); }

}  // namespace

extern const architecture gpt2_architecture = {
    "gpt2", model_types, hf_architectures, gguf_architectures, cap_causal_lm, from_config, from_gguf,
    {gguf_global, gguf_layer, "transformer.h."}, build};

}  // namespace wf::models
