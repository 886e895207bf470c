// GPT-2, following Hugging Face's modeling_gpt2.py (GPT2Block, GPT2Attention, GPT2MLP):
//   x = wte[ids] + wpe[positions]
//   per layer (pre-LN):  x = x + W_proj·Attention_causal(LN_1(x));  x = x + W_down·GELU_tanh(W_up·LN_2(x))
//   logits = LN_f(x) · wteᵀ        (tied LM head, for the last position only unless asked)
#include "gpt2.h"

#include <cmath>
#include <cstring>

#include "attention.h"
#include "kernels.h"
#include "threads.h"

namespace wf {

namespace {
std::vector<std::string> names(const std::string& n) { return {"transformer." + n, n}; }
}  // namespace

gpt2_model::gpt2_model(const hparams& hp, const tensor_source& src, weight_format fmt) : hp_(hp) {
    weight_store s(src, fmt);
    const int64_t E = hp.n_embd, F = hp.n_ff, V = hp.n_vocab;
    w_.wte = s.matrix(s.get(names("wte.weight")), V, E);
    w_.wpe = s.matrix(s.get(names("wpe.weight")), hp.n_ctx, E, false, false);
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        gpt2_layer L;
        L.ln_1 = s.ln(names(p + "ln_1.weight"), names(p + "ln_1.bias"), E);
        // Conv1D weights are stored (in, out): transposed here, once.
        L.qkv = s.lin(names(p + "attn.c_attn.weight"), names(p + "attn.c_attn.bias"), 3 * E, E, true);
        L.attn_proj = s.lin(names(p + "attn.c_proj.weight"), names(p + "attn.c_proj.bias"), E, E, true);
        L.ln_2 = s.ln(names(p + "ln_2.weight"), names(p + "ln_2.bias"), E);
        L.fc = s.lin(names(p + "mlp.c_fc.weight"), names(p + "mlp.c_fc.bias"), F, E, true);
        L.proj = s.lin(names(p + "mlp.c_proj.weight"), names(p + "mlp.c_proj.bias"), E, F, true);
        w_.layers.push_back(L);
    }
    w_.ln_f = s.ln(names("ln_f.weight"), names("ln_f.bias"), E);
    const raw_tensor* head = s.try_get({"lm_head.weight"});
    const raw_tensor& wte = s.get(names("wte.weight"));
    const bool tied = !head || head->data == wte.data ||
                      (head->n_bytes == wte.n_bytes && head->type == wte.type && std::memcmp(head->data, wte.data, size_t(wte.n_bytes)) == 0);
    w_.lm_head = tied ? w_.wte : s.matrix(*head, V, E);
    weight_bytes_ = s.owned_bytes();
    borrows_ = s.borrows();
    owned_ = s.release();
}

kv_cache gpt2_model::new_cache(int64_t capacity) const {
    if (capacity < 1 || capacity > hp_.n_ctx)
        throw error("gpt2: cache capacity " + std::to_string(capacity) + " is outside [1, " + std::to_string(hp_.n_ctx) + "]");
    kv_cache c;
    c.capacity = capacity;
    c.n_embd = hp_.n_embd;
    const size_t n = size_t(hp_.n_layer * capacity * hp_.n_embd);
    c.k.resize(n);
    c.v.resize(n);
    return c;
}

std::vector<float> gpt2_model::forward(kv_cache& cache, const int32_t* ids, int64_t T, bool all_logits, forward_trace* trace,
                                       const cancel_fn* cancel) const {
    const int64_t E = hp_.n_embd, F = hp_.n_ff, H = hp_.n_head, D = hp_.head_dim(), V = hp_.n_vocab;
    const int64_t p0 = cache.n_past;
    if (T <= 0) throw error("gpt2: no tokens to run");
    if (p0 + T > cache.capacity)
        throw error("gpt2: " + std::to_string(p0 + T) + " positions exceed the context of " + std::to_string(cache.capacity));
    for (int64_t i = 0; i < T; ++i)
        if (ids[i] < 0 || ids[i] >= V) throw error("gpt2: token id " + std::to_string(ids[i]) + " is out of range");

    std::vector<float> x(size_t(T * E)), h(size_t(T * E)), qkv(size_t(T * 3 * E)), a(size_t(T * E)), ff(size_t(T * F));
    // embeddings
    embed(w_.wte, ids, T, x.data());
    std::vector<int32_t> pos(static_cast<size_t>(T));
    for (int64_t i = 0; i < T; ++i) pos[size_t(i)] = int32_t(p0 + i);
    embed(w_.wpe, pos.data(), T, h.data());
    add(x.data(), h.data(), T * E);
    if (trace && trace->want_hidden) trace->hidden.push_back(x);

    const auto gelu = hp_.act == activation::gelu_erf ? gelu_erf_threaded : gelu_tanh_threaded;
    for (int64_t l = 0; l < hp_.n_layer; ++l) {
        check_cancel(cancel);  // the cache's n_past is unchanged until the end, so a cancel leaves it as it was
        const gpt2_layer& L = w_.layers[size_t(l)];
        // causal self-attention; this step's keys and values go straight into the cache
        layer_norm(x.data(), T, E, L.ln_1.g, L.ln_1.b, hp_.eps, h.data());
        matmul(h.data(), T, L.qkv.w, L.qkv.b, qkv.data());
        for (int64_t i = 0; i < T; ++i) {
            std::memcpy(cache.k_at(l, p0 + i), qkv.data() + i * 3 * E + E, size_t(E) * 4);
            std::memcpy(cache.v_at(l, p0 + i), qkv.data() + i * 3 * E + 2 * E, size_t(E) * 4);
        }
        attention_args at{qkv.data(), 3 * E, cache.k_at(l, 0), E, cache.v_at(l, 0), E, a.data(), E, T, p0 + T, int(H), int(D),
                          1.0f / std::sqrt(float(D)), true, p0};
        traced_attention(at, trace, int(l));
        matmul(a.data(), T, L.attn_proj.w, L.attn_proj.b, h.data());
        add(x.data(), h.data(), T * E);
        // feed-forward
        layer_norm(x.data(), T, E, L.ln_2.g, L.ln_2.b, hp_.eps, h.data());
        matmul(h.data(), T, L.fc.w, L.fc.b, ff.data());
        gelu(ff.data(), T * F);
        matmul(ff.data(), T, L.proj.w, L.proj.b, h.data());
        add(x.data(), h.data(), T * E);
        if (trace && trace->want_hidden) trace->hidden.push_back(x);
    }
    // final norm and the tied LM head, for the rows asked for
    layer_norm(x.data(), T, E, w_.ln_f.g, w_.ln_f.b, hp_.eps, x.data());
    if (trace && trace->want_hidden) trace->hidden.push_back(x);
    const int64_t first = all_logits ? 0 : T - 1;
    std::vector<float> logits(size_t((T - first) * V));
    matmul(x.data() + first * E, T - first, w_.lm_head, nullptr, logits.data());
    cache.n_past = p0 + T;
    return logits;
}

}  // namespace wf
