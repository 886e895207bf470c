// Fill-mask and generation end to end (text in, text out) on the fixtures, and the sampler's rules.
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <tuple>

#include "helpers.h"
#include "tasks/fill-mask.h"
#include "nn/head-screen.h"
#include "tasks/generation.h"

namespace {

const wf::pipeline_model& bert() { return wft::fixture_model("bert-tiny"); }
const wf::pipeline_model& gpt2() { return wft::fixture_model("gpt2-tiny"); }

std::string run(const wf::pipeline_model& pm, const std::string& prompt, const wf::generation_params& p, std::string* reason = nullptr) {
    wf::generation g(pm, prompt, p);
    std::string out;
    while (auto t = g.step()) out += t->text;
    REQUIRE(out == g.text());
    if (reason) *reason = g.finish_reason();
    return out;
}

// log_softmax of row r of a (rows, V) golden logits tensor, in double
std::vector<double> log_softmax_row(const std::vector<float>& logits, int64_t V, int64_t r) {
    std::vector<double> l(logits.begin() + r * V, logits.begin() + (r + 1) * V);
    const double mx = *std::max_element(l.begin(), l.end());
    double z = 0;
    for (double v : l) z += std::exp(v - mx);
    for (double& v : l) v -= mx + std::log(z);
    return l;
}

// n draws of a sampler on fixed logits; every token's frequency within 5 standard deviations of want[token]
// (p = 0 must never be drawn). With n = 40000 a correct sampler fails this for some seed about once in 10^5.
void frequencies_follow(const wf::sampling_params& p, const std::vector<float>& logits, const std::vector<double>& want, int n = 40000) {
    wf::sampler s(p);
    std::vector<int> counts(logits.size());
    for (int i = 0; i < n; ++i) counts[size_t(s.pick(logits))]++;
    for (size_t t = 0; t < logits.size(); ++t) {
        INFO("token " << t << ": drawn " << counts[t] << " of " << n << ", expected p = " << want[t]);
        if (want[t] == 0) REQUIRE(counts[t] == 0);
        else REQUIRE(std::fabs(double(counts[t]) / n - want[t]) <= 5 * std::sqrt(want[t] * (1 - want[t]) / n));
    }
}

// softmax(l / T) over the tokens for which keep is true, zero elsewhere
std::vector<double> softmax_kept(const std::vector<float>& l, double T, const std::vector<bool>& keep) {
    std::vector<double> p(l.size(), 0.0);
    double z = 0;
    for (size_t i = 0; i < l.size(); ++i)
        if (keep[i]) z += p[i] = std::exp(l[i] / T);
    for (auto& v : p) v /= z;
    return p;
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
    // a target of several word pieces is scored by its first, as transformers does (with a warning)
    wft::golden g(wft::data_path("fixtures/bert-tiny/golden.safetensors"));
    const auto lp = log_softmax_row(g.f32("mask_logits"), 30522, 0);
    const auto pieces = bert().tok->encode("wasmformer", false);
    REQUIRE(pieces.size() >= 2);
    const auto multi = wf::fill_mask(bert(), "The capital of France is [MASK]. It has [MASK] people", {.targets = {"wasmformer", "paris"}});
    bool seen = false;
    for (auto& c : multi[0])
        if (c.token == pieces[0]) {
            seen = true;
            REQUIRE(c.score == Approx(std::exp(lp[size_t(pieces[0])])).margin(1e-6));
        }
    REQUIRE(seen);
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
    p.output_scores = true;
    wf::generation gen(gpt2(), "The dog was found in a field", p);
    REQUIRE(gen.prompt_ids() == prompt);
    std::vector<double> logprobs;
    while (auto t = gen.step()) logprobs.push_back(t->logprob.value());
    std::vector<int32_t> all = gen.prompt_ids();
    all.insert(all.end(), gen.ids().begin(), gen.ids().end());
    REQUIRE(all == want);
    REQUIRE(gen.finish_reason() == "max_new_tokens");
    REQUIRE(gen.text() == gpt2().tok->decode(gen.ids()));
    // each token's log-probability is log_softmax of the reference's logits: the first from the prompt's last row
    const auto golden_logits = g.f32("logits");
    const int64_t V = 50257, T = int64_t(prompt.size());
    REQUIRE(logprobs[0] == Approx(log_softmax_row(golden_logits, V, T - 1)[size_t(want[size_t(T)])]).margin(1e-5));
    // … and at every prefix of the prompt: one greedy token, whose log-probability is the row's maximum
    for (int64_t k = 1; k <= T; ++k) {
        const std::vector<int32_t> prefix(prompt.begin(), prompt.begin() + k);
        const std::string text = gpt2().tok->decode(prefix);
        REQUIRE(gpt2().tok->encode(text) == prefix);
        wf::generation_params one;
        one.max_new_tokens = 1;
        one.output_scores = true;
        wf::generation gk(gpt2(), text, one);
        const auto t = gk.step();
        const auto row = log_softmax_row(golden_logits, V, k - 1);
        REQUIRE(t->id == int32_t(std::max_element(row.begin(), row.end()) - row.begin()));
        REQUIRE(t->logprob.value() == Approx(row[size_t(t->id)]).margin(1e-5));
    }
    // sampled at a high temperature, a token's log-probability is still the model's, not the tempered one
    wf::generation_params hot;
    hot.max_new_tokens = 1;
    hot.sampling = {.do_sample = true, .temperature = 3.0f, .seed = 5};
    hot.output_scores = true;
    wf::generation gh(gpt2(), "The dog was found in a field", hot);
    const auto h = gh.step();
    REQUIRE(h->logprob.value() == Approx(log_softmax_row(golden_logits, V, T - 1)[size_t(h->id)]).margin(1e-5));
}

TEST_CASE("generation: greedy steps without scores screen the output layer: the full logits' tokens; log-probs with output_scores only",
          "[tasks][generate][head-screen]") {
    const auto min_rows = wf::head_screen::min_rows, steps_before = wf::head_screen::steps_before;
    wf::head_screen::min_rows = 1;  // the fixtures' vocabularies (498 to 50 257 rows): every one screened
    wf::head_screen::steps_before = 0;
    const std::vector<std::string> prompts = {"The dog was found in a field", "Once upon a time", "a"};
    for (const char* name : {"gpt2-tiny", "llama-tiny", "mistral-tiny", "qwen2-tiny", "phi3-tiny", "gemma-tiny", "gemma2-tiny", "openai-gpt-tiny"}) {
        INFO(name);
        const wf::pipeline_model& pm = wft::fixture_model(name);
        const wf::causal_lm& lm = *pm.m().as_causal_lm();
        // none where the logits are soft-capped (Gemma 2)
        const bool screened = std::string(name) != "gemma2-tiny";
        CHECK(bool(lm.screen()) == screened);
        int64_t fewer = 0;  // steps whose screen computed fewer rows than all
        for (const std::string& prompt : prompts)
            for (const int64_t ngram : {0, 2}) {
                INFO(prompt << ", no_repeat_ngram_size " << ngram);
                wf::generation_params p;
                p.max_new_tokens = 12;
                p.stop_at_eos = false;
                p.sampling.no_repeat_ngram_size = ngram;
                wf::generation fast(pm, prompt, p);
                p.output_scores = true;
                wf::generation full(pm, prompt, p);
                for (;;) {
                    const auto a = fast.step(), b = full.step();
                    REQUIRE(bool(a) == bool(b));
                    if (!a) break;
                    CHECK(a->id == b->id);
                    CHECK(fast.screened() == screened);
                    CHECK_FALSE(full.screened());  // scores need every logit
                    CHECK_FALSE(a->logprob);
                    CHECK(b->logprob.value() <= 0.0);
                    if (screened) fewer += lm.screen()->candidates() < lm.output_layer().w.n_rows;
                }
                CHECK(fast.ids() == full.ids());
                CHECK(fast.text() == full.text());
            }
        if (screened) CHECK(fewer > 0);
    }
    // a repetition penalty moves logits (the bounds hold for the model's own) and sampling needs every logit: the
    // full layer; temperature 0 is greedy, and screened
    for (const auto& [what, set, want] : std::vector<std::tuple<std::string, std::function<void(wf::generation_params&)>, bool>>{
             {"repetition_penalty", [](wf::generation_params& p) { p.sampling.repetition_penalty = 1.3f; }, false},
             {"do_sample", [](wf::generation_params& p) { p.sampling.do_sample = true; }, false},
             {"temperature 0", [](wf::generation_params& p) { p.sampling.do_sample = true, p.sampling.temperature = 0.0f; }, true}}) {
        INFO(what);
        wf::generation_params p;
        p.max_new_tokens = 4;
        set(p);
        wf::generation g(gpt2(), "Once upon a time", p);
        while (g.step()) CHECK(g.screened() == want);
    }
    wf::head_screen::min_rows = min_rows;
    wf::head_screen::steps_before = steps_before;
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

TEST_CASE("generation: a stop string across token boundaries is held back while it may still match, then cut", "[tasks][generate]") {
    wf::generation_params greedy;
    greedy.max_new_tokens = 20;
    greedy.stop_at_eos = false;
    std::vector<std::string> pieces;  // each token's bytes
    {
        wf::generation g(gpt2(), "Once upon a time", greedy);
        while (auto t = g.step()) pieces.push_back(gpt2().tok->token_bytes(t->id));
    }
    std::string full;
    for (auto& p : pieces) full += p;
    // stop strings that begin inside one token and end inside a later one: over one boundary, and over two
    for (int span : {1, 2}) {
        std::string stop;
        size_t at = 0, pos = 0;
        for (size_t i = 0; i + span < pieces.size() && stop.empty(); pos += pieces[i++].size()) {
            if (pieces[i].size() < 2 || pieces[i + size_t(span)].size() < 2) continue;
            std::string s = pieces[i].substr(pieces[i].size() - 2);
            for (int j = 1; j < span; ++j) s += pieces[i + size_t(j)];
            s += pieces[i + size_t(span)].substr(0, 2);
            bool ascii = true;
            for (char c : s) ascii &= uint8_t(c) < 0x80;
            if (ascii && full.find(s) == pos + pieces[i].size() - 2) stop = s, at = full.find(s);  // first found where made
        }
        INFO("stop string \"" << stop << "\" over " << span << " boundaries in \"" << full << "\"");
        REQUIRE(!stop.empty());
        wf::generation_params st = greedy;
        st.stop = {stop, "a stop string that never occurs"};
        wf::generation g(gpt2(), "Once upon a time", st);
        std::string streamed;
        while (auto t = g.step()) {
            streamed += t->text;
            REQUIRE(streamed == full.substr(0, streamed.size()));
            REQUIRE(streamed.size() <= at);  // nothing of the stop string is ever shown
        }
        REQUIRE(g.finish_reason() == "stop");
        REQUIRE(streamed == full.substr(0, at));
        REQUIRE(g.text() == streamed);
    }
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

TEST_CASE("sampler: frequencies follow softmax(l / T) over the tokens top-k, top-p and min-p keep", "[tasks][sampling]") {
    // probabilities at T = 1: 0.624 (5), 0.229 (0), 0.084 (1), 0.051 (2), 0.011 (3); token 4 is NaN
    const std::vector<float> l = {2.0f, 1.0f, 0.5f, -1.0f, NAN, 3.0f};
    const std::vector<bool> finite = {true, true, true, true, false, true};
    for (float T : {0.5f, 1.0f, 2.0f}) {
        INFO("temperature " << T);
        frequencies_follow({.do_sample = true, .temperature = T, .seed = 11}, l, softmax_kept(l, T, finite));
    }
    // top-k 3 at T = 2: tokens 5, 0, 1, renormalised
    frequencies_follow({.do_sample = true, .temperature = 2.0f, .top_k = 3, .seed = 12}, l, softmax_kept(l, 2.0, {true, true, false, false, false, true}));
    // top-p keeps the smallest head whose mass reaches p, the token that crosses p included: 0.624 < 0.7 ≤ 0.853
    frequencies_follow({.do_sample = true, .top_p = 0.7f, .seed = 13}, l, softmax_kept(l, 1.0, {true, false, false, false, false, true}));
    // … on the tempered probabilities: at T = 2 they are 0.417 (5), 0.253 (0), 0.154 (1), 0.120 (2), 0.057 (3)
    frequencies_follow({.do_sample = true, .temperature = 2.0f, .top_p = 0.6f, .seed = 14}, l, softmax_kept(l, 2.0, {true, false, false, false, false, true}));
    // min-p is relative to the most likely token: 0.3 · 0.624 = 0.187 keeps 5 and 0 (an absolute 0.3 would keep 5 alone)
    frequencies_follow({.do_sample = true, .min_p = 0.3f, .seed = 15}, l, softmax_kept(l, 1.0, {true, false, false, false, false, true}));
    // … and at T = 2 to the tempered ones: 0.3 · 0.417 = 0.125 keeps 5, 0 and 1
    frequencies_follow({.do_sample = true, .temperature = 2.0f, .min_p = 0.3f, .seed = 16}, l, softmax_kept(l, 2.0, {true, true, false, false, false, true}));
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
