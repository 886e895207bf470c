// GPT-1 (OpenAIGPTLMHeadModel) against the PyTorch reference (tools/reference/gpt1.py, fixtures written by
// tools/reference/make_gpt1_fixtures.py): its tokenizer from vocab.json + merges.txt and from tokenizer.json (BERT's
// basic tokenizer, BPE with "</w>" word ends), every block's output, the logits and greedy continuations, in the
// checkpoint layouts of save_pretrained ("transformer." names) and of the hub (no prefix, stored mask buffers).
// Where Hugging Face's slow and fast tokenizers disagree (the fixture flags slow_fast_differ) the engine follows
// the fast one, which AutoTokenizer loads: those cases are left out here.
#include <catch2/catch.hpp>

#include "helpers.h"
#include "tasks/generation.h"

namespace {
const char* kFixtures[] = {"openai-gpt-tiny", "openai-gpt-tiny-hub"};

wf::json expected(const std::string& name) {
    const auto bytes = wft::read_file(wft::data_path("fixtures/" + name + "/expected.json"));
    return wf::json::parse(bytes.begin(), bytes.end());
}
using wft::flat;
using wft::rel_diff;
}  // namespace

TEST_CASE("GPT-1's tokenizer: lower-cased basic tokenization, BPE with </w> word ends, from both file formats", "[gpt1][tokenizer]") {
    for (const char* name : kFixtures) {
        INFO(name);
        const auto& pm = wft::fixture_model(name);
        const wf::json e = expected(name);
        int n = 0;
        for (const auto& c : e["tokenize"]) {
            if (c.value("slow_fast_differ", false)) continue;
            INFO("text: " << c["text"].get<std::string>());
            CHECK(pm.tok->encode(c["text"].get<std::string>(), true) == c["ids"].get<std::vector<int32_t>>());
            ++n;
        }
        CHECK(n >= 25);
        for (const auto& c : e["decode"]) {
            if (c.value("slow_fast_differ", false)) continue;
            CHECK(pm.tok->decode(c["ids"].get<std::vector<int32_t>>(), true) == c["text"].get<std::string>());
        }
    }
}

TEST_CASE("GPT-1: every block's output, the logits and greedy continuations equal the reference's", "[gpt1][models]") {
    for (const char* name : kFixtures) {
        INFO(name);
        const auto& pm = wft::fixture_model(name);
        const wf::json e = expected(name);
        const wf::causal_lm& lm = *pm.m().as_causal_lm();
        const auto ids = e["forward"]["input_ids"].get<std::vector<int32_t>>();
        wf::decoder_state st = lm.new_state(int64_t(ids.size()));
        wf::forward_trace trace;
        trace.want_hidden = true;
        const auto logits = lm.forward(st, ids, true, &trace);
        REQUIRE(trace.hidden.size() == e["forward"]["hidden_states"].size());
        for (size_t l = 0; l < trace.hidden.size(); ++l) {
            INFO("hidden state " << l);
            CHECK(rel_diff(trace.hidden[l], flat(e["forward"]["hidden_states"][l])) < 1e-5);
        }
        CHECK(rel_diff(std::vector<float>(logits.begin(), logits.end()), flat(e["forward"]["logits"])) < 1e-5);
        // greedy through the text-generation task: the reference's ids, one step at a time through the cache
        for (const auto& c : e["greedy"]) {
            wf::generation_params p;
            p.max_new_tokens = c["max_new_tokens"].get<int64_t>();
            p.stop_at_eos = false;
            wf::generation g(pm, c["prompt"].get<std::string>(), p);
            CHECK(g.prompt_ids() == c["input_ids"].get<std::vector<int32_t>>());
            while (g.step()) {
            }
            std::vector<int32_t> all = g.prompt_ids();
            all.insert(all.end(), g.ids().begin(), g.ids().end());
            CHECK(all == c["output_ids"].get<std::vector<int32_t>>());
        }
        CHECK(wf::supported_tasks(pm.m()) == std::vector<std::string>{"text-generation"});
    }
}

TEST_CASE("GPT-1's config.json: afn names the activation as Hugging Face reads it; unknown ones are refused", "[gpt1][loaders][errors]") {
    CHECK(wf::parse_config(R"({"model_type": "openai-gpt", "afn": "gelu", "vocab_size": 10, "n_embd": 8, "n_head": 2, "n_layer": 1})").act == wf::activation::gelu_tanh);
    CHECK(wf::parse_config(R"({"model_type": "openai-gpt", "afn": "relu", "vocab_size": 10, "n_embd": 8, "n_head": 2, "n_layer": 1})").act == wf::activation::relu);
    CHECK_THROWS_WITH(wf::parse_config(R"({"model_type": "openai-gpt", "afn": "tanhshrink"})"), Catch::Contains("afn \"tanhshrink\" is not supported"));
}
