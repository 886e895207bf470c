// BERT and GPT-2 against golden activations from the PyTorch reference (tools/reference/make_fixtures.py), on
// random-weight checkpoints in the Hugging Face layout, loaded through the registry and run through the model
// interfaces: every layer within kF32 (absolute), KV-cache decoding equal to the full forward, greedy continuations
// identical, and converted weights within stated tolerances.
#include <catch2/catch.hpp>

#include "helpers.h"
#include "models/registry.h"

namespace {

// f32 against PyTorch's f32: the largest difference measured is 9.5e-7 (natively with FMA, and in wasm without);
// the tolerance is a few times that, well below what a wrong GELU variant (erf ↔ tanh) or layer-norm epsilon moves.
constexpr double kF32 = 4e-6;

int argmax(const float* x, int64_t n) {
    int best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (x[i] > x[best]) best = int(i);
    return best;
}

wf::loaded_model load(const char* fixture, const char* dtype = "auto") {
    return wf::load_model(wft::read_dir(wft::data_path(fixture)), {wf::dtype_option::parse(dtype)});
}

// The MLM head's logits at the given rows of the encoder's output for ids.
std::vector<float> mask_logits(const wf::masked_lm& m, const wf::hparams& hp, const std::vector<int32_t>& ids, const std::vector<int32_t>& rows,
                               wf::forward_trace* trace = nullptr) {
    wf::arena scratch;
    std::vector<float> h(ids.size() * size_t(hp.n_embd)), picked, logits(rows.size() * size_t(hp.n_vocab));
    m.encode(wf::token_batch::one(ids), h.data(), scratch, trace);
    for (int32_t p : rows) picked.insert(picked.end(), h.begin() + p * hp.n_embd, h.begin() + (p + 1) * hp.n_embd);
    m.mlm_logits(picked.data(), int64_t(rows.size()), logits.data(), scratch);
    return logits;
}

}  // namespace

TEST_CASE("BERT matches the reference layer by layer", "[models][bert]") {
    const wf::loaded_model lm = load("fixtures/bert-tiny");
    wft::golden g(wft::data_path("fixtures/bert-tiny/golden.safetensors"));
    REQUIRE(lm.arch->name == "bert");
    REQUIRE(lm.m->as_masked_lm());
    REQUIRE(!lm.m->as_causal_lm());
    const auto ids = g.i32("input_ids");
    wf::forward_trace trace;
    trace.want_hidden = true;
    trace.attention_layer = -1;
    const auto logits = mask_logits(*lm.m->as_masked_lm(), lm.m->hp(), ids, g.i32("mask_positions"), &trace);
    REQUIRE(trace.hidden.size() == size_t(lm.m->hp().n_layer + 1));
    for (size_t l = 0; l < trace.hidden.size(); ++l) {
        const auto want = g.f32("hidden." + std::to_string(l));
        INFO("hidden state " << l);
        REQUIRE(want.size() == trace.hidden[l].size());
        REQUIRE(wft::max_abs_diff(trace.hidden[l].data(), want.data(), want.size()) < kF32);
    }
    REQUIRE(trace.attention.size() == size_t(lm.m->hp().n_layer));
    for (size_t l = 0; l < trace.attention.size(); ++l) {
        const auto want = g.f32("attention." + std::to_string(l));
        REQUIRE(wft::max_abs_diff(trace.attention[l].data(), want.data(), want.size()) < 1e-6);  // measured 2.2e-8
    }
    const auto want_logits = g.f32("mask_logits");
    REQUIRE(logits.size() == want_logits.size());
    REQUIRE(wft::max_abs_diff(logits.data(), want_logits.data(), logits.size()) < kF32);
}

TEST_CASE("BERT with weights converted to f16 and q8_0 stays close to f32", "[models][bert]") {
    wft::golden g(wft::data_path("fixtures/bert-tiny/golden.safetensors"));
    const auto ids = g.i32("input_ids");
    const auto masks = g.i32("mask_positions");
    const auto want = g.f32("mask_logits");
    const int64_t V = 30522;
    // Logits here span about ±4. Measured: f16 7.2e-4, q8_0 0.024 (weights and, with 2 rows, the activations
    // quantized); tolerances a few times that, and the top token unchanged. tests/test-gguf.cpp shows that the
    // quantized weights themselves are computed exactly.
    for (auto [dtype, tol] : {std::pair{"f16", 0.003}, {"q8_0", 0.06}}) {
        INFO("dtype " << dtype);
        const wf::loaded_model lm = load("fixtures/bert-tiny", dtype);
        REQUIRE(!lm.files);  // converted weights own their bytes: the file can be freed
        const auto logits = mask_logits(*lm.m->as_masked_lm(), lm.m->hp(), ids, masks);
        REQUIRE(wft::max_abs_diff(logits.data(), want.data(), want.size()) < tol);
        for (size_t i = 0; i < masks.size(); ++i) REQUIRE(argmax(logits.data() + i * V, V) == argmax(want.data() + i * V, V));
    }
}

TEST_CASE("GPT-2 matches the reference, and KV-cache decoding equals the full forward", "[models][gpt2]") {
    const wf::loaded_model lm = load("fixtures/gpt2-tiny");
    wft::golden g(wft::data_path("fixtures/gpt2-tiny/golden.safetensors"));
    REQUIRE(lm.arch->name == "gpt2");
    REQUIRE(lm.files);  // F32 as stored: the matrices are views into the file
    const wf::causal_lm& m = *lm.m->as_causal_lm();
    const wf::hparams& hp = lm.m->hp();
    const int64_t V = hp.n_vocab;
    const auto ids = g.i32("input_ids");
    const int64_t T = int64_t(ids.size());
    const auto want_logits = g.f32("logits");

    wf::forward_trace trace;
    trace.want_hidden = true;
    auto s = m.new_state(hp.n_ctx);
    const auto span = m.forward(s, ids, true, &trace);
    const std::vector<float> logits(span.begin(), span.end());
    REQUIRE(logits.size() == want_logits.size());
    REQUIRE(wft::max_abs_diff(logits.data(), want_logits.data(), logits.size()) < kF32);
    REQUIRE(trace.hidden.size() == size_t(hp.n_layer + 2));
    for (size_t l = 0; l < trace.hidden.size(); ++l) {
        const auto want = g.f32("hidden." + std::to_string(l));
        INFO("hidden state " << l);
        REQUIRE(wft::max_abs_diff(trace.hidden[l].data(), want.data(), want.size()) < kF32);
    }

    // one token at a time through the cache: each step's logits equal the full forward's row
    auto s2 = m.new_state(hp.n_ctx);
    for (int64_t i = 0; i < T; ++i) {
        const auto step = m.forward(s2, std::span<const int32_t>(ids.data() + i, 1));
        REQUIRE(wft::max_abs_diff(step.data(), logits.data() + i * V, size_t(V)) < kF32);
    }
    REQUIRE(s2.cache.n_past == T);

    // two different sequences side by side, only their last logits asked for (the last layer then runs at their last
    // rows only): the prompt's first half and its tokens 1 … half, each as if alone; then a token each through the cache
    {
        const int64_t half = T / 2;
        REQUIRE(half + 2 <= T);
        std::vector<int32_t> two(ids.begin(), ids.begin() + half);
        two.insert(two.end(), ids.begin() + 1, ids.begin() + half + 1);
        auto alone = m.new_state(hp.n_ctx);
        const auto span1 = m.forward(alone, std::span<const int32_t>(ids.data() + 1, size_t(half + 1)), true);
        const std::vector<float> shifted(span1.begin(), span1.end());  // tokens 1 … half + 1 alone, every row
        auto sb = m.new_state(hp.n_ctx, 2);
        const auto last = m.forward(sb, two);
        REQUIRE(last.size() == size_t(2 * V));
        REQUIRE(wft::max_abs_diff(last.data(), logits.data() + (half - 1) * V, size_t(V)) < kF32);
        REQUIRE(wft::max_abs_diff(last.data() + V, shifted.data() + (half - 1) * V, size_t(V)) < kF32);
        const int32_t next[2] = {ids[size_t(half)], ids[size_t(half + 1)]};
        const auto step = m.forward(sb, next);
        REQUIRE(wft::max_abs_diff(step.data(), logits.data() + half * V, size_t(V)) < kF32);
        REQUIRE(wft::max_abs_diff(step.data() + V, shifted.data() + half * V, size_t(V)) < kF32);
    }

    // greedy continuation, prompt in one step then a token at a time
    const auto want_seq = g.i32("greedy_ids");
    auto s3 = m.new_state(hp.n_ctx);
    std::vector<int32_t> seq(ids.begin(), ids.end());
    auto last = m.forward(s3, seq);
    while (seq.size() < want_seq.size()) {
        seq.push_back(argmax(last.data(), V));
        last = m.forward(s3, std::span<const int32_t>(&seq.back(), 1));
    }
    REQUIRE(seq == want_seq);
}

TEST_CASE("GPT-2 forward: cancel and errors leave the cache as it was", "[models][gpt2]") {
    const wf::loaded_model lm = load("fixtures/gpt2-tiny");
    const wf::causal_lm& m = *lm.m->as_causal_lm();
    auto s = m.new_state(8);
    const int32_t ids[] = {464, 3290, 373, 1, 2, 3};
    m.forward(s, std::span<const int32_t>(ids, 3));
    int polls = 0;
    wf::cancel_fn stop = [&] { return ++polls == 2; };  // stop at the second layer
    REQUIRE_THROWS_AS(m.forward(s, std::span<const int32_t>(ids, 2), false, nullptr, &stop), wf::cancelled);
    REQUIRE(s.cache.n_past == 3);
    REQUIRE_THROWS_WITH(m.forward(s, ids), Catch::Contains("exceed the context of 8"));
    const int32_t bad[] = {50257};
    REQUIRE_THROWS_WITH(m.forward(s, bad), Catch::Contains("token id 50257 is out of range"));
    REQUIRE(s.cache.n_past == 3);
    REQUIRE_NOTHROW(m.forward(s, std::span<const int32_t>(ids, 2)));
    REQUIRE(s.cache.n_past == 5);
}
