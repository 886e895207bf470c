// BERT and GPT-2 against golden activations from the PyTorch reference (tools/reference/make_fixtures.py), on
// random-weight checkpoints in the Hugging Face layout: every layer within 1e-4 (absolute, f32), KV-cache decoding
// equal to the full forward, greedy continuations identical, and converted weights within stated tolerances.
#include <catch2/catch.hpp>

#include "checkpoint.h"
#include "helpers.h"

namespace {

int argmax(const float* x, int64_t n) {
    int best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (x[i] > x[best]) best = int(i);
    return best;
}

}  // namespace

TEST_CASE("BERT matches the reference layer by layer", "[models][bert]") {
    auto files = wft::read_dir(wft::data_path("fixtures/bert-tiny"));
    wft::golden g(wft::data_path("fixtures/bert-tiny/golden.safetensors"));
    const wf::model m = wf::load_hf_model(files);
    REQUIRE(m.bert);
    const auto ids = g.i32("input_ids");
    wf::forward_trace trace;
    trace.want_hidden = true;
    trace.attention_layer = -1;
    const auto h = m.bert->encode(ids, {}, &trace);
    REQUIRE(trace.hidden.size() == size_t(m.hp.n_layer + 1));
    for (size_t l = 0; l < trace.hidden.size(); ++l) {
        const auto want = g.f32("hidden." + std::to_string(l));
        INFO("hidden state " << l);
        REQUIRE(want.size() == trace.hidden[l].size());
        REQUIRE(wft::max_abs_diff(trace.hidden[l].data(), want.data(), want.size()) < 1e-4);
    }
    for (size_t l = 0; l < trace.attention.size(); ++l) {
        const auto want = g.f32("attention." + std::to_string(l));
        REQUIRE(wft::max_abs_diff(trace.attention[l].data(), want.data(), want.size()) < 1e-5);
    }
    const auto masks = g.i32("mask_positions");
    const auto want_logits = g.f32("mask_logits");
    std::vector<float> rows;
    for (int32_t p : masks) rows.insert(rows.end(), h.begin() + p * m.hp.n_embd, h.begin() + (p + 1) * m.hp.n_embd);
    const auto logits = m.bert->mlm_logits(rows.data(), int64_t(masks.size()));
    REQUIRE(logits.size() == want_logits.size());
    REQUIRE(wft::max_abs_diff(logits.data(), want_logits.data(), logits.size()) < 1e-4);
}

TEST_CASE("BERT with weights converted to f16 and q8_0 stays close to f32", "[models][bert]") {
    auto files = wft::read_dir(wft::data_path("fixtures/bert-tiny"));
    wft::golden g(wft::data_path("fixtures/bert-tiny/golden.safetensors"));
    const auto ids = g.i32("input_ids");
    const auto masks = g.i32("mask_positions");
    const auto want = g.f32("mask_logits");
    const int64_t V = 30522;
    // Logits here span about ±4; tolerances: f16 0.02, q8_0 0.1 absolute, and the top token unchanged.
    for (auto [fmt, tol] : {std::pair{wf::weight_format::f16, 0.02}, {wf::weight_format::q8_0, 0.1}}) {
        INFO("format " << wf::weight_format_name(fmt));
        const wf::model m = wf::load_hf_model(files, {fmt});
        REQUIRE(!m.files);  // converted weights own their bytes: the file can be freed
        const auto h = m.bert->encode(ids);
        std::vector<float> rows;
        for (int32_t p : masks) rows.insert(rows.end(), h.begin() + p * m.hp.n_embd, h.begin() + (p + 1) * m.hp.n_embd);
        const auto logits = m.bert->mlm_logits(rows.data(), int64_t(masks.size()));
        REQUIRE(wft::max_abs_diff(logits.data(), want.data(), want.size()) < tol);
        for (size_t i = 0; i < masks.size(); ++i) REQUIRE(argmax(logits.data() + i * V, V) == argmax(want.data() + i * V, V));
    }
}

TEST_CASE("GPT-2 matches the reference, and KV-cache decoding equals the full forward", "[models][gpt2]") {
    auto files = wft::read_dir(wft::data_path("fixtures/gpt2-tiny"));
    wft::golden g(wft::data_path("fixtures/gpt2-tiny/golden.safetensors"));
    const wf::model m = wf::load_hf_model(files);
    REQUIRE(m.gpt2);
    REQUIRE(m.files);  // as stored: the matrices are views into the file
    const int64_t V = m.hp.n_vocab;
    const auto ids = g.i32("input_ids");
    const int64_t T = int64_t(ids.size());
    const auto want_logits = g.f32("logits");

    wf::forward_trace trace;
    trace.want_hidden = true;
    auto cache = m.gpt2->new_cache(m.hp.n_ctx);
    const auto logits = m.gpt2->forward(cache, ids.data(), T, true, &trace);
    REQUIRE(logits.size() == want_logits.size());
    REQUIRE(wft::max_abs_diff(logits.data(), want_logits.data(), logits.size()) < 1e-4);
    REQUIRE(trace.hidden.size() == size_t(m.hp.n_layer + 2));
    for (size_t l = 0; l < trace.hidden.size(); ++l) {
        const auto want = g.f32("hidden." + std::to_string(l));
        INFO("hidden state " << l);
        REQUIRE(wft::max_abs_diff(trace.hidden[l].data(), want.data(), want.size()) < 1e-4);
    }

    // one token at a time through the cache: each step's logits equal the full forward's row
    auto c2 = m.gpt2->new_cache(m.hp.n_ctx);
    for (int64_t i = 0; i < T; ++i) {
        const auto step = m.gpt2->forward(c2, ids.data() + i, 1);
        REQUIRE(wft::max_abs_diff(step.data(), logits.data() + i * V, size_t(V)) < 1e-4);
    }
    REQUIRE(c2.n_past == T);

    // greedy continuation, prompt in one step then a token at a time
    const auto want_seq = g.i32("greedy_ids");
    auto c3 = m.gpt2->new_cache(m.hp.n_ctx);
    std::vector<int32_t> seq(ids.begin(), ids.end());
    auto last = m.gpt2->forward(c3, seq.data(), T);
    while (seq.size() < want_seq.size()) {
        seq.push_back(argmax(last.data(), V));
        last = m.gpt2->forward(c3, &seq.back(), 1);
    }
    REQUIRE(seq == want_seq);
}

TEST_CASE("GPT-2 forward: cancel and errors leave the cache as it was", "[models][gpt2]") {
    auto files = wft::read_dir(wft::data_path("fixtures/gpt2-tiny"));
    const wf::model m = wf::load_hf_model(files);
    auto cache = m.gpt2->new_cache(8);
    const int32_t ids[] = {464, 3290, 373};
    m.gpt2->forward(cache, ids, 3);
    int polls = 0;
    wf::cancel_fn stop = [&] { return ++polls == 2; };  // stop at the second layer
    REQUIRE_THROWS_AS(m.gpt2->forward(cache, ids, 2, false, nullptr, &stop), wf::cancelled);
    REQUIRE(cache.n_past == 3);
    REQUIRE_THROWS_WITH(m.gpt2->forward(cache, ids, 6), Catch::Contains("exceed the context of 8"));
    const int32_t bad[] = {50257};
    REQUIRE_THROWS_WITH(m.gpt2->forward(cache, bad, 1), Catch::Contains("token id 50257 is out of range"));
    REQUIRE(cache.n_past == 3);
    REQUIRE_NOTHROW(m.gpt2->forward(cache, ids, 2));
    REQUIRE(cache.n_past == 5);
}
