// Fill-mask and generation end to end (text in, text out) on the fixtures, and the sampler's rules.
#include <catch2/catch.hpp>
#include <map>

#include "helpers.h"
#include "tasks/fill-mask.h"
#include "tasks/generation.h"

namespace {

const wf::pipeline_model& bert() {
    static const wf::pipeline_model pm = wf::load_pipeline_model(wft::read_dir(wft::data_path("fixtures/bert-tiny")));
    return pm;
}
const wf::pipeline_model& gpt2() {
    static const wf::pipeline_model pm = wf::load_pipeline_model(wft::read_dir(wft::data_path("fixtures/gpt2-tiny")));
    return pm;
}

std::string run(const wf::pipeline_model& pm, const std::string& prompt, const wf::generation_params& p, std::string* reason = nullptr) {
    wf::generation g(pm, prompt, p);
    std::string out;
    while (auto t = g.step()) out += t->text;
    REQUIRE(out == g.text());
    if (reason) *reason = g.finish_reason();
    return out;
}

}  // namespace

TEST_CASE("fill-mask: top-k ids and scores match the reference at every mask", "[tasks][fill-mask]") {
    wft::golden g(wft::data_path("fixtures/bert-tiny/golden.safetensors"));
    const auto want = g.f32("mask_logits");
    const int64_t V = 30522;
    REQUIRE(bert().tok->encode("The capital of France is [MASK]. It has [MASK] people") == g.i32("input_ids"));
    wf::fill_mask_options opt;
    opt.top_k = 7;
    const auto res = wf::fill_mask(bert(), "The capital of France is [MASK]. It has [MASK] people", opt);
    REQUIRE(res.size() == 2);
    for (size_t m = 0; m < 2; ++m) {
        std::vector<double> p(want.begin() + long(m * V), want.begin() + long((m + 1) * V));
        const double mx = *std::max_element(p.begin(), p.end());
        double z = 0;
        for (auto& v : p) z += (v = std::exp(v - mx));
        std::vector<int32_t> order(static_cast<size_t>(V));
        for (int32_t i = 0; i < V; ++i) order[size_t(i)] = i;
        std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[size_t(a)] > p[size_t(b)]; });
        REQUIRE(res[m].size() == 7);
        for (size_t i = 0; i < 7; ++i) {
            REQUIRE(res[m][i].token == order[i]);
            REQUIRE(res[m][i].score == Approx(p[size_t(order[i])] / z).margin(1e-6));
            REQUIRE(res[m][i].token_str == bert().tok->decode({order[i]}));
        }
        REQUIRE(res[m][0].sequence.find("[CLS]") == 0);  // several masks: special tokens stay, as in transformers
    }
    // one mask: the sequence is the sentence with the word in place
    const auto one = wf::fill_mask(bert(), "paris is the [MASK] of france.", {});
    const std::string& w = one[0][0].token_str;
    const bool piece = w.rfind("##", 0) == 0;
    REQUIRE(one[0][0].sequence == (piece ? "paris is the" + w.substr(2) : "paris is the " + w) + " of france.");
}

TEST_CASE("fill-mask: targets, and clear errors", "[tasks][fill-mask]") {
    wf::fill_mask_options opt;
    opt.targets = {"paris", "london", "dog"};
    const auto all = wf::fill_mask(bert(), "the capital is [MASK].", {.top_k = 30522});
    const auto res = wf::fill_mask(bert(), "the capital is [MASK].", opt);
    REQUIRE(res[0].size() == 3);
    std::map<int32_t, double> score;
    for (auto& c : all[0]) score[c.token] = c.score;
    for (auto& c : res[0]) REQUIRE(c.score == Approx(score[c.token]));
    REQUIRE(res[0][0].score >= res[0][1].score);
    REQUIRE_THROWS_WITH(wf::fill_mask(bert(), "no mask here", {}), Catch::Contains("no [MASK] token"));
    std::string longer;
    for (int i = 0; i < 70; ++i) longer += "word ";
    REQUIRE_THROWS_WITH(wf::fill_mask(bert(), longer + "[MASK]", {}), Catch::Contains("the model takes at most 64"));
    REQUIRE(wf::fill_mask(bert(), "still [MASK] after errors", {}).size() == 1);
}

TEST_CASE("fill-mask: a padded batch gives each text what it gets alone", "[tasks][fill-mask]") {
    const std::vector<std::string> texts = {"the capital of france is [MASK].", "[MASK] is a long way from here to the sea, and [MASK] knows", "a [MASK]"};
    const auto batch = wf::fill_mask(bert(), texts, {.top_k = 4});
    REQUIRE(batch.size() == 3);
    for (size_t i = 0; i < texts.size(); ++i) {
        const auto one = wf::fill_mask(bert(), texts[i], {.top_k = 4});
        REQUIRE(batch[i].size() == one.size());
        for (size_t m = 0; m < one.size(); ++m)
            for (size_t k = 0; k < 4; ++k) {
                REQUIRE(batch[i][m][k].token == one[m][k].token);
                REQUIRE(batch[i][m][k].sequence == one[m][k].sequence);
                REQUIRE(batch[i][m][k].score == Approx(one[m][k].score).margin(1e-6));
            }
    }
    REQUIRE_THROWS_WITH(wf::fill_mask(bert(), std::vector<std::string>{"a [MASK]", "no mask"}), Catch::Contains("text 2: no [MASK] token"));
}

TEST_CASE("generation: greedy equals the reference continuation", "[tasks][generate]") {
    wft::golden g(wft::data_path("fixtures/gpt2-tiny/golden.safetensors"));
    const auto want = g.i32("greedy_ids");
    const auto prompt = g.i32("input_ids");
    wf::generation_params p;
    p.max_new_tokens = int64_t(want.size() - prompt.size());
    p.stop_at_eos = false;
    wf::generation gen(gpt2(), "The dog was found in a field", p);
    REQUIRE(gen.prompt_ids() == prompt);
    std::vector<double> logprobs;
    while (auto t = gen.step()) logprobs.push_back(t->logprob);
    std::vector<int32_t> all = gen.prompt_ids();
    all.insert(all.end(), gen.ids().begin(), gen.ids().end());
    REQUIRE(all == want);
    REQUIRE(gen.finish_reason() == "max_new_tokens");
    REQUIRE(gen.text() == gpt2().tok->decode(gen.ids()));
    for (double lp : logprobs) REQUIRE((lp <= 0 && lp > -20));
}

TEST_CASE("generation: seeds repeat, top_k 1 is greedy, temperature 0 is greedy, stop strings stop", "[tasks][generate]") {
    wf::generation_params greedy;
    greedy.max_new_tokens = 15;
    const std::string g = run(gpt2(), "Once upon a time", greedy);
    wf::generation_params s = greedy;
    s.sampling.do_sample = true;
    s.sampling.temperature = 1.3f;
    s.sampling.seed = 7;
    const std::string a = run(gpt2(), "Once upon a time", s), b = run(gpt2(), "Once upon a time", s);
    REQUIRE(a == b);
    s.sampling.seed = 8;
    REQUIRE(run(gpt2(), "Once upon a time", s) != a);  // random weights: a near-uniform distribution, so seeds differ
    s.sampling.top_k = 1;
    REQUIRE(run(gpt2(), "Once upon a time", s) == g);
    s.sampling.top_k = 0;
    s.sampling.temperature = 0.0f;
    REQUIRE(run(gpt2(), "Once upon a time", s) == g);
    // a stop string taken from the greedy text: output ends right before it
    REQUIRE(g.size() > 6);
    wf::generation_params st = greedy;
    st.stop = {g.substr(4, 3)};
    std::string reason;
    const std::string cut = run(gpt2(), "Once upon a time", st, &reason);
    REQUIRE(reason == "stop");
    REQUIRE(cut == g.substr(0, g.find(st.stop[0])));
}

TEST_CASE("generation: limits and bad parameters", "[tasks][generate]") {
    wf::generation_params p;
    p.sampling.temperature = NAN;
    REQUIRE_THROWS_WITH(wf::generation(gpt2(), "x", p), Catch::Contains("temperature"));
    p = {};
    p.sampling.top_p = 1.5f;
    REQUIRE_THROWS_WITH(wf::generation(gpt2(), "x", p), Catch::Contains("top_p"));
    p = {};
    p.max_new_tokens = 1000;  // the fixture has 64 positions
    std::string reason;
    run(gpt2(), "Hello", p, &reason);
    REQUIRE((reason == "length" || reason == "eos"));
    std::string many;
    for (int i = 0; i < 80; ++i) many += " dog";
    REQUIRE_THROWS_WITH(wf::generation(gpt2(), many, {}), Catch::Contains("positions"));
    wf::generation empty(gpt2(), "", {});
    REQUIRE(empty.prompt_ids() == std::vector<int32_t>{50256});
    wf::generation g(gpt2(), "Hello", {});
    int polls = 0;
    wf::cancel_fn stop = [&] { return ++polls > 3; };
    REQUIRE_THROWS_AS([&] { while (g.step(&stop)) {} }(), wf::cancelled);
}

TEST_CASE("sampler: top-k, top-p, min-p, penalties and NaN", "[tasks][sampling]") {
    const std::vector<float> logits = {2.0f, 1.0f, 0.5f, -1.0f, NAN, 3.0f};
    wf::sampling_params p;
    p.do_sample = true;
    p.seed = 1;
    auto draws = [&](const wf::sampling_params& q, int n) {
        wf::sampler s(q);
        std::map<int32_t, int> counts;
        for (int i = 0; i < n; ++i) counts[s.pick(logits)]++;
        return counts;
    };
    auto counts = draws(p, 20000);
    REQUIRE(counts.count(4) == 0);  // NaN never drawn
    // frequencies follow softmax: p(5)/p(0) = e
    REQUIRE(double(counts[5]) / counts[0] == Approx(std::exp(1.0)).epsilon(0.08));
    p.top_k = 2;
    for (auto& [t, n] : draws(p, 500)) REQUIRE((t == 5 || t == 0));
    p.top_k = 0;
    p.top_p = 0.5f;  // p(5) ≈ 0.63 alone passes 0.5
    for (auto& [t, n] : draws(p, 200)) REQUIRE(t == 5);
    p.top_p = 1.0f;
    p.min_p = 0.2f;  // keeps tokens with p ≥ 0.2·p(5): 5 and 0 (0.37) — 1 is e^-2 = 0.135
    for (auto& [t, n] : draws(p, 500)) REQUIRE((t == 5 || t == 0));
    std::vector<float> l = {2.0f, -2.0f, 1.0f};
    wf::sampling_params pen;
    pen.repetition_penalty = 2.0f;
    wf::sampler sp(pen);
    const std::vector<int32_t> hist = {0, 1, 1};
    sp.apply_penalties(l, hist);
    REQUIRE(l == std::vector<float>{1.0f, -4.0f, 1.0f});
    REQUIRE(sp.original_logit(l, 1) == -2.0f);  // what the model said, before the penalty
    REQUIRE(sp.original_logit(l, 2) == 1.0f);
    std::vector<float> l2(5, 0.0f);
    wf::sampling_params ng;
    ng.no_repeat_ngram_size = 2;
    wf::sampler sn(ng);
    const std::vector<int32_t> hist2 = {3, 4, 1, 3};
    sn.apply_penalties(l2, hist2);  // "3 4" seen; the history ends in 3, so 4 is banned
    REQUIRE(l2[4] == -INFINITY);
    REQUIRE(l2[1] == 0.0f);
    const std::vector<float> dead = {NAN, -INFINITY};
    wf::sampler sd({});
    REQUIRE_THROWS_WITH(sd.pick(dead), Catch::Contains("no finite logits"));
}
