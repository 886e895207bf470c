// Model benchmark: BERT-base fill-mask at 16 / 64 / 128 tokens, GPT-2-small prefill of 128 tokens and 64 decode
// steps, with f32, f16 and q8_0 weights, natively and in wasm (Node). Weights are random (speed does not depend on
// their values) and built here with Hugging Face's names, so no checkpoint or PyTorch is needed. This program
// times the engine alone; ratios to the peers come from bench/run.mjs, which runs them in the same run.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "kernels/parallel.h"
#include "models/registry.h"

namespace {

using clk = std::chrono::steady_clock;

// A tensor source of random f32 tensors for whatever names and shapes are asked.
class random_source : public wf::tensor_source {
public:
    explicit random_source(std::map<std::string, std::vector<int64_t>> shapes) {
        std::mt19937 rng(1);
        std::normal_distribution<float> d(0.0f, 0.02f);
        for (auto& [name, shape] : shapes) {
            int64_t n = 1;
            for (auto s : shape) n *= s;
            auto& buf = data_[name];
            buf.resize(size_t(n));
            for (auto& v : buf) v = d(rng);
            if (name.find("LayerNorm.weight") != std::string::npos || name.find("ln_") != std::string::npos)
                for (auto& v : buf) v += 1.0f;
            tensors_[name] = {name, "random", wf::dtype::f32, shape, reinterpret_cast<const uint8_t*>(buf.data()), n * 4};
        }
    }
    const wf::raw_tensor* find(const std::string& name) const override {
        auto it = tensors_.find(name);
        return it == tensors_.end() ? nullptr : &it->second;
    }
    std::vector<const wf::raw_tensor*> tensors() const override {
        std::vector<const wf::raw_tensor*> r;
        for (auto& [k, v] : tensors_) r.push_back(&v);
        return r;
    }

private:
    std::map<std::string, std::vector<float>> data_;
    std::map<std::string, wf::raw_tensor> tensors_;
};

random_source bert_base(const wf::hparams& hp) {
    const int64_t E = hp.n_embd, F = hp.n_ff;
    std::map<std::string, std::vector<int64_t>> s = {
        {"bert.embeddings.word_embeddings.weight", {hp.n_vocab, E}}, {"bert.embeddings.position_embeddings.weight", {hp.n_ctx, E}},
        {"bert.embeddings.token_type_embeddings.weight", {2, E}}, {"bert.embeddings.LayerNorm.weight", {E}}, {"bert.embeddings.LayerNorm.bias", {E}},
        {"cls.predictions.transform.dense.weight", {E, E}}, {"cls.predictions.transform.dense.bias", {E}},
        {"cls.predictions.transform.LayerNorm.weight", {E}}, {"cls.predictions.transform.LayerNorm.bias", {E}}, {"cls.predictions.bias", {hp.n_vocab}}};
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const std::string p = "bert.encoder.layer." + std::to_string(l) + ".";
        for (const char* n : {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"}) {
            s[p + n + ".weight"] = {E, E};
            s[p + n + ".bias"] = {E};
        }
        s[p + "intermediate.dense.weight"] = {F, E};
        s[p + "intermediate.dense.bias"] = {F};
        s[p + "output.dense.weight"] = {E, F};
        s[p + "output.dense.bias"] = {E};
        for (const char* n : {"attention.output.LayerNorm", "output.LayerNorm"}) {
            s[p + n + ".weight"] = {E};
            s[p + n + ".bias"] = {E};
        }
    }
    return random_source(s);
}

random_source gpt2_small(const wf::hparams& hp) {
    const int64_t E = hp.n_embd, F = hp.n_ff;
    std::map<std::string, std::vector<int64_t>> s = {{"transformer.wte.weight", {hp.n_vocab, E}}, {"transformer.wpe.weight", {hp.n_ctx, E}},
                                                     {"transformer.ln_f.weight", {E}}, {"transformer.ln_f.bias", {E}}};
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const std::string p = "transformer.h." + std::to_string(l) + ".";
        s[p + "attn.c_attn.weight"] = {E, 3 * E};
        s[p + "attn.c_attn.bias"] = {3 * E};
        s[p + "attn.c_proj.weight"] = {E, E};
        s[p + "attn.c_proj.bias"] = {E};
        s[p + "mlp.c_fc.weight"] = {E, F};
        s[p + "mlp.c_fc.bias"] = {F};
        s[p + "mlp.c_proj.weight"] = {F, E};
        s[p + "mlp.c_proj.bias"] = {E};
        for (const char* n : {"ln_1", "ln_2"}) {
            s[p + n + ".weight"] = {E};
            s[p + n + ".bias"] = {E};
        }
    }
    return random_source(s);
}

template <class F>
double best_ms(F&& f, int reps) {
    f();  // warm-up
    double best = 1e30;
    for (int i = 0; i < reps; ++i) {
        const auto t0 = clk::now();
        f();
        best = std::min(best, std::chrono::duration<double, std::milli>(clk::now() - t0).count());
    }
    return best;
}

std::unique_ptr<wf::model> build(const char* arch, const wf::hparams& hp, const wf::tensor_source& src, const char* dtype) {
    const std::string d = dtype;
    const wf::storage_plan plan = d == "as_stored" ? wf::storage_plan::keep() : wf::storage_plan::convert_all(*wf::dtype_from_name(d));
    for (const wf::architecture* a : wf::architectures())
        if (a->name == arch) return a->build(hp, src, plan);
    return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef __EMSCRIPTEN__
    const char* where = "wasm (Node)";
#else
    const char* where = "native";
#endif
    // WF_BENCH_THREADS=n: run on n threads (native; the single-thread wasm build stays on one)
    const char* nt = std::getenv("WF_BENCH_THREADS");
    const int threads = wf::set_thread_count(nt ? std::atoi(nt) : 1);
    std::printf("wasmformer model benchmark — %s, %d thread%s, random weights at BERT-base / GPT-2-small shapes\n", where,
                threads, threads == 1 ? "" : "s");
    wf::hparams bh;
    bh.arch = "bert";
    bh.n_vocab = 30522, bh.n_embd = 768, bh.n_layer = 12, bh.n_head = bh.n_head_kv = 12, bh.n_ff = 3072, bh.n_ctx = 512, bh.n_type_vocab = 2;
    wf::hparams gh;
    gh.arch = "gpt2";
    gh.n_vocab = 50257, gh.n_embd = 768, gh.n_layer = 12, gh.n_head = gh.n_head_kv = 12, gh.n_ff = 3072, gh.n_ctx = 1024, gh.eps = 1e-5f;
    gh.act = wf::activation::gelu_tanh;

    // an argument such as bert-q8_0,gpt2-f32: only those models and dtypes (to profile one of them)
    const char* only = argc > 1 ? argv[1] : nullptr;
    const auto want = [&](const char* model, const char* dtype) {
        return !only || std::string(only).find(std::string(model) + "-" + dtype) != std::string::npos;
    };
    {
        const random_source src = bert_base(bh);
        std::printf("BERT-base fill-mask (encoder + MLM head at the one mask)\n%-6s %6s %10s\n", "dtype", "tokens", "ms");
        for (const char* dtype : {"f32", "f16", "q8_0"}) {
            if (!want("bert", dtype)) continue;
            const auto model = build("bert", bh, src, dtype);
            const wf::masked_lm& m = *model->as_masked_lm();
            wf::arena scratch;
            std::vector<float> h(size_t(128 * bh.n_embd)), logits(size_t(bh.n_vocab));
            for (int T : {16, 64, 128}) {
                std::vector<int32_t> ids(static_cast<size_t>(T));
                for (int i = 0; i < T; ++i) ids[size_t(i)] = 1000 + i * 7;
                const auto batch = wf::token_batch::one(ids);
                const double ms = best_ms([&] {
                    m.encode(batch, h.data(), scratch);
                    m.mlm_logits(h.data() + (T / 2) * bh.n_embd, 1, logits.data(), scratch);
                }, T == 128 ? 3 : 5);
                std::printf("%-6s %6d %10.1f\n", dtype, T, ms);
            }
        }
    }
    {
        // all-MiniLM-L6-v2's shape (6 layers, 384 wide, 12 heads, 1536), a batch of 32 texts of 64 tokens: the encoder alone
        wf::hparams mh = bh;
        mh.n_embd = 384, mh.n_layer = 6, mh.n_ff = 1536;
        const random_source src = bert_base(mh);
        std::printf("\nall-MiniLM-L6-v2 shape, encoder over 32 texts of 64 tokens\n%-6s %10s %14s\n", "dtype", "ms", "sentences/s");
        for (const char* dtype : {"f32", "q8_0"}) {
            if (!want("minilm", dtype)) continue;
            const auto model = build("bert", mh, src, dtype);
            const wf::masked_lm& m = *model->as_masked_lm();
            wf::arena scratch;
            wf::token_batch batch;
            batch.n_seq = 32, batch.n_tokens = 64;
            for (int i = 0; i < 32 * 64; ++i) batch.ids.push_back(1000 + (i * 7919) % 20000);
            batch.lengths.assign(32, 64);
            std::vector<float> h(size_t(32 * 64 * mh.n_embd));
            const double ms = best_ms([&] { m.encode(batch, h.data(), scratch); }, 3);
            std::printf("%-6s %10.1f %14.1f\n", dtype, ms, 32 / (ms / 1e3));
        }
    }
    {
        const random_source src = gpt2_small(gh);
        std::printf("\nGPT-2 small: prefill 128 tokens, then 64 decode steps (LM head on the last position only)\n");
        std::printf("%-6s %12s %12s\n", "dtype", "prefill ms", "decode tok/s");
        for (const char* dtype : {"f32", "f16", "q8_0", "q4_0", "q4_k"}) {
            if (!want("gpt2", dtype)) continue;
            const auto model = build("gpt2", gh, src, dtype);
            const wf::causal_lm& m = *model->as_causal_lm();
            std::vector<int32_t> prompt(128);
            for (int i = 0; i < 128; ++i) prompt[size_t(i)] = 100 + i * 13;
            const double prefill = best_ms([&] {
                auto s = m.new_state(256);
                m.forward(s, prompt);
            }, 2);
            auto s = m.new_state(256);
            m.forward(s, prompt);
            const auto t0 = clk::now();
            int32_t tok = 50;
            for (int i = 0; i < 64; ++i) {
                const auto l = m.forward(s, std::span<const int32_t>(&tok, 1));
                tok = int32_t(std::max_element(l.begin(), l.end()) - l.begin());
            }
            const double tps = 64 / std::chrono::duration<double>(clk::now() - t0).count();
            std::printf("%-6s %12.1f %12.1f\n", dtype, prefill, tps);
        }
    }
    return 0;
}
