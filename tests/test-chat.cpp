// Chat: what a model's files say about it (templates, special token texts, end-of-generation ids) for a folder and
// a GGUF file, the choice of template, the checks on messages and chat options, and the generation options chat
// uses: a prompt tokenized without the tokenizer's template, special tokens written as text becoming their ids,
// stops at end ids from generation_config.json / GGUF and at stop_token_ids. The JavaScript side renders the
// templates (tests/js/chat.test.mjs).
#include <catch2/catch.hpp>
#include <cstring>

#include "gguf-builder.h"
#include "helpers.h"
#include "tasks/generation.h"
#include "tokenizers/load.h"

namespace {

constexpr int32_t kEndOfText = 50256;  // GPT-2's <|endoftext|>
const std::string kChatML =
    "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// The gpt2-tiny folder with some files replaced or added.
wf::pipeline_model gpt2_with(const std::map<std::string, std::string>& extra) {
    auto files = wft::read_dir(wft::data_path("fixtures/gpt2-tiny"));
    for (auto& [name, text] : extra) {
        files->remove(name);
        files->add(name, std::vector<uint8_t>(text.begin(), text.end()));
    }
    return wf::load_pipeline_model(files);
}

// A GGUF file's bytes with more metadata: the keys `extra` writes are inserted after the file's own (the tensor
// infos and data are moved as they are, re-aligned).
std::vector<uint8_t> with_metadata(const std::vector<uint8_t>& in, const wft::gguf_builder& extra) {
    size_t p = 24;
    auto u32 = [&] { uint32_t v; std::memcpy(&v, &in[p], 4); p += 4; return v; };
    auto u64 = [&] { uint64_t v; std::memcpy(&v, &in[p], 8); p += 8; return v; };
    auto skip_str = [&] { p += size_t(u64()); };
    auto skip_value = [&](uint32_t type, auto& self) -> void {
        static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        if (type == 8) skip_str();
        else if (type == 9) {
            const uint32_t elem = u32();
            const uint64_t n = u64();
            for (uint64_t i = 0; i < n; ++i) self(elem, self);
        } else p += sizes[type];
    };
    uint64_t n_tensors, n_kv;
    std::memcpy(&n_tensors, &in[8], 8);
    std::memcpy(&n_kv, &in[16], 8);
    for (uint64_t i = 0; i < n_kv; ++i) {
        skip_str();
        skip_value(u32(), skip_value);
    }
    const size_t kv_end = p;
    for (uint64_t i = 0; i < n_tensors; ++i) {
        skip_str();
        const uint32_t dims = u32();
        p += 8 * size_t(dims) + 4 + 8;
    }
    const size_t infos_end = p, data = (p + 31) / 32 * 32;  // the fixture has the default alignment
    std::vector<uint8_t> out(in.begin(), in.begin() + 24);
    const uint64_t total = n_kv + extra.n_kv;
    std::memcpy(&out[16], &total, 8);
    out.insert(out.end(), in.begin() + 24, in.begin() + long(kv_end));
    out.insert(out.end(), extra.kv_bytes.begin(), extra.kv_bytes.end());
    out.insert(out.end(), in.begin() + long(kv_end), in.begin() + long(infos_end));
    while (out.size() % 32) out.push_back(0);
    out.insert(out.end(), in.begin() + long(data), in.end());
    return out;
}

wf::pipeline_model gguf_with(const wft::gguf_builder& extra) {
    auto fs = std::make_shared<wf::file_set>();
    fs->add("model.gguf", with_metadata(wft::read_file(wft::data_path("fixtures/gpt2-tiny-q8_0.gguf")), extra));
    return wf::load_pipeline_model(fs);
}

std::string run(const wf::pipeline_model& pm, const std::string& prompt, const wf::generation_params& p, std::string* reason = nullptr,
                std::vector<int32_t>* ids = nullptr) {
    wf::generation g(pm, prompt, p);
    std::string out;
    while (auto t = g.step()) out += t->text;
    if (reason) *reason = g.finish_reason();
    if (ids) *ids = g.ids();
    return out;
}

wf::json msgs(std::initializer_list<std::pair<const char*, const char*>> m) {
    wf::json out = wf::json::array();
    for (auto& [r, c] : m) out.push_back({{"role", r}, {"content", c}});
    return out;
}

}  // namespace

TEST_CASE("a folder's chat template and special token texts: tokenizer_config.json, chat_template.jinja", "[chat]") {
    SECTION("no template: none, and the roles' texts") {
        const auto& pm = wft::fixture_model("gpt2-tiny");
        REQUIRE(pm.chat.templates.empty());
        REQUIRE(pm.chat.special_tokens == wf::json{{"bos_token", "<|endoftext|>"}, {"eos_token", "<|endoftext|>"}, {"unk_token", "<|endoftext|>"}});
        REQUIRE(pm.end_ids == std::vector<int32_t>{kEndOfText});
    }
    SECTION("a string is the default template; other *_token texts and additional_special_tokens come along") {
        const wf::json cfg = {{"chat_template", kChatML}, {"image_token", "<|endoftext|>"}, {"add_bos_token", false},
                              {"additional_special_tokens", {"<|endoftext|>", {{"content", "<x>"}}}}};
        const auto pm = gpt2_with({{"tokenizer_config.json", cfg.dump()}});
        REQUIRE(pm.chat.templates == std::vector<std::pair<std::string, std::string>>{{"default", kChatML}});
        REQUIRE(pm.chat.special_tokens["image_token"] == "<|endoftext|>");
        REQUIRE(pm.chat.special_tokens["additional_special_tokens"] == wf::json{"<|endoftext|>", "<x>"});
        REQUIRE(!pm.chat.special_tokens.contains("add_bos_token"));
    }
    SECTION("a list of {name, template}; chat_template.jinja replaces the default") {
        const wf::json cfg = {{"chat_template", {{{"name", "default"}, {"template", "A"}}, {{"name", "tool_use"}, {"template", "B"}}}}};
        auto pm = gpt2_with({{"tokenizer_config.json", cfg.dump()}});
        REQUIRE(pm.chat.templates == std::vector<std::pair<std::string, std::string>>{{"default", "A"}, {"tool_use", "B"}});
        pm = gpt2_with({{"tokenizer_config.json", cfg.dump()}, {"chat_template.jinja", kChatML}});
        REQUIRE(pm.chat.templates == std::vector<std::pair<std::string, std::string>>{{"default", kChatML}, {"tool_use", "B"}});
    }
    SECTION("a template that is not text is an error naming the file and the field") {
        REQUIRE_THROWS_WITH(gpt2_with({{"tokenizer_config.json", R"({"chat_template": 42})"}}),
                            Catch::Contains("tokenizer_config.json: chat_template") && Catch::Contains("must be a string or a list of {name, template}"));
        REQUIRE_THROWS_WITH(gpt2_with({{"tokenizer_config.json", R"({"chat_template": [{"name": "default", "template": 1}]})"}}),
                            Catch::Contains("tokenizer_config.json: chat_template[0] must be an object"));
        REQUIRE_THROWS_WITH(gpt2_with({{"tokenizer_config.json", R"({"chat_template": [{"name": "a", "template": "x"}, {"name": "a", "template": "y"}]})"}}),
                            Catch::Contains("two templates are named \"a\""));
    }
    SECTION("the folder's files are picked when present") {
        using v = std::vector<std::string>;
        REQUIRE(wf::select_files({"config.json", "model.safetensors", "vocab.json", "merges.txt", "generation_config.json", "chat_template.jinja"}, true) ==
                v{"config.json", "model.safetensors", "vocab.json", "merges.txt", "chat_template.jinja", "generation_config.json"});
        REQUIRE(wf::select_files({"vocab.json", "merges.txt", "generation_config.json", "chat_template.jinja"}, false) ==
                v{"vocab.json", "merges.txt", "chat_template.jinja"});
        const auto all = wf::candidate_files(true);
        for (const char* n : {"generation_config.json", "chat_template.jinja"}) REQUIRE(std::find(all.begin(), all.end(), n) != all.end());
    }
}

TEST_CASE("a GGUF file's chat templates and end-of-turn ids", "[chat][gguf]") {
    wft::gguf_builder b;
    b.str("tokenizer.chat_template", kChatML);
    b.str("tokenizer.chat_template.tool_use", "T");
    b.u32("tokenizer.ggml.eot_token_id", 13);
    b.u32("tokenizer.ggml.eom_token_id", 11);
    const auto pm = gguf_with(b);
    REQUIRE(pm.chat.templates == std::vector<std::pair<std::string, std::string>>{{"default", kChatML}, {"tool_use", "T"}});
    REQUIRE(pm.chat.special_tokens["bos_token"] == "<|endoftext|>");
    REQUIRE(pm.end_ids == std::vector<int32_t>{11, 13, kEndOfText});
    wft::gguf_builder bad;
    bad.u32("tokenizer.ggml.eot_token_id", 60000);
    REQUIRE_THROWS_WITH(gguf_with(bad), Catch::Contains("tokenizer.ggml.eot_token_id = 60000 is not a token id"));
    wft::gguf_builder not_text;
    not_text.u32("tokenizer.chat_template", 7);
    REQUIRE_THROWS_WITH(gguf_with(not_text), Catch::Contains("tokenizer.chat_template") && Catch::Contains("expected STRING"));
}

TEST_CASE("generation_config.json's eos_token_id (an id or a list) ends a generation", "[chat]") {
    REQUIRE(gpt2_with({{"generation_config.json", R"({"eos_token_id": [50256, 13, 198]})"}}).end_ids == std::vector<int32_t>{13, 198, kEndOfText});
    REQUIRE(gpt2_with({{"generation_config.json", R"({"eos_token_id": 13})"}}).end_ids == std::vector<int32_t>{13, kEndOfText});
    REQUIRE(gpt2_with({{"generation_config.json", R"({"eos_token_id": null})"}}).end_ids == std::vector<int32_t>{kEndOfText});
    REQUIRE_THROWS_WITH(gpt2_with({{"generation_config.json", R"({"eos_token_id": [1, 99999]})"}}),
                        Catch::Contains("generation_config.json: eos_token_id must be a token id or a list of token ids"));
    REQUIRE_THROWS_WITH(gpt2_with({{"generation_config.json", R"({"eos_token_id": "</s>"})"}}), Catch::Contains("generation_config.json: eos_token_id"));

    // the first greedy token of a prompt, made an end id: the generation ends there, with no text for it
    const auto& plain = wft::fixture_model("gpt2-tiny");
    wf::generation_params p;
    p.max_new_tokens = 8;
    std::vector<int32_t> ids;
    const std::string free_text = run(plain, "The dog was found in a field", p, nullptr, &ids);
    REQUIRE(ids.size() == 8);
    const int32_t first = ids[0];
    const auto pm = gpt2_with({{"generation_config.json", "{\"eos_token_id\": [50256, " + std::to_string(first) + "]}"}});
    std::string reason;
    REQUIRE(run(pm, "The dog was found in a field", p, &reason, &ids).empty());
    REQUIRE(reason == "eos");
    REQUIRE(ids == std::vector<int32_t>{first});
    // stop_at_eos = false goes on through it
    p.stop_at_eos = false;
    REQUIRE(run(pm, "The dog was found in a field", p, &reason) == free_text);
    // stop_token_ids end it too (finish "stop"), whatever stop_at_eos says, and are checked against the vocabulary
    p.stop_token_ids = {ids[0]};
    REQUIRE(run(plain, "The dog was found in a field", p, &reason).empty());
    REQUIRE(reason == "stop");
    p.stop_token_ids = {50257};
    REQUIRE_THROWS_WITH(wf::generation(plain, "x", p), Catch::Contains("stop_token_ids: 50257 is not a token id"));
    // the GGUF's end-of-turn id ends it the same way
    wft::gguf_builder b;
    b.u32("tokenizer.ggml.eot_token_id", uint32_t(first));
    wf::generation_params q;
    q.max_new_tokens = 8;
    REQUIRE(run(gguf_with(b), "The dog was found in a field", q, &reason).empty());
    REQUIRE(reason == "eos");
}

TEST_CASE("special tokens written in a prompt become their ids; add_special_tokens = false adds no template", "[chat][tokenizers]") {
    const auto& pm = wft::fixture_model("gpt2-tiny");
    const auto hello = pm.tok->encode("Hello", false);
    std::vector<int32_t> want = {kEndOfText};
    want.insert(want.end(), hello.begin(), hello.end());
    want.push_back(kEndOfText);
    REQUIRE(pm.tok->encode("<|endoftext|>Hello<|endoftext|>", false) == want);
    // a SentencePiece vocabulary whose template adds BOS: the rendered chat's own <s> stays the only one
    const auto bytes = wft::read_file(wft::data_path("tokenizers/llamacpp/ggml-vocab-llama-spm.gguf"));
    const auto g = wf::parse_gguf(bytes.data(), int64_t(bytes.size()), "llama-spm.gguf");
    const auto spm = wf::load_tokenizer(g, 0);
    const int32_t bos = spm->special().bos, eos = spm->special().eos;
    const auto own = spm->encode("<s>[INST] Hi [/INST] Hello</s>", false);
    REQUIRE(own.front() == bos);
    REQUIRE(own.back() == eos);
    REQUIRE(std::count(own.begin(), own.end(), bos) == 1);
    const auto doubled = spm->encode("<s>[INST] Hi [/INST]", true);
    REQUIRE((doubled[0] == bos && doubled[1] == bos));  // what add_special_tokens = false is for
    // generation: the prompt's ids are the text's own
    wf::generation_params p;
    p.max_new_tokens = 1;
    p.add_special_tokens = false;
    wf::generation gen(pm, "<|endoftext|>Hello", p);
    REQUIRE(gen.prompt_ids() == std::vector<int32_t>(want.begin(), want.end() - 1));
}

TEST_CASE("skip_special_tokens leaves generated special tokens out of the text", "[chat]") {
    // the first greedy token of a prompt made a special token (the pad role): skipped, it adds no text
    const auto& plain = wft::fixture_model("gpt2-tiny");
    wf::generation_params p;
    p.max_new_tokens = 8;
    std::vector<int32_t> ids;
    const std::string kept = run(plain, "The dog was found in a field", p, nullptr, &ids);
    const std::string piece = plain.tok->token_bytes(ids[0]);
    const auto pm = gpt2_with({{"tokenizer_config.json", wf::json{{"pad_token", plain.tok->token(ids[0])}}.dump()}});
    REQUIRE(pm.tok->is_special(ids[0]));
    std::vector<int32_t> again;
    REQUIRE(run(pm, "The dog was found in a field", p, nullptr, &again) == kept);  // not skipped unless asked
    p.skip_special_tokens = true;
    std::string want;
    for (const int32_t id : ids)
        if (id != ids[0]) want += plain.tok->token_bytes(id);
    REQUIRE(run(pm, "The dog was found in a field", p, nullptr, &again) == want);
    REQUIRE(again == ids);
    REQUIRE(want.size() < kept.size());
    REQUIRE(piece.size() > 0);
}

TEST_CASE("chat templates are chosen by name or given; messages and chat options are checked, errors name the field", "[chat]") {
    wf::chat_config c;
    c.templates = {{"default", "D {{ x }}"}, {"tool_use", "T {{ x }}"}};
    c.special_tokens = {{"bos_token", "<s>"}};
    auto pick = [&](const wf::json& o) { return wf::chat_template_for(c, wf::parse_chat_options(o)); };
    REQUIRE(pick(wf::json::object()).source == "D {{ x }}");
    REQUIRE(pick(wf::json::object()).special_tokens == wf::json{{"bos_token", "<s>"}});
    REQUIRE(pick({{"tools", wf::json::array()}}).name == "tool_use");
    REQUIRE(pick({{"chat_template", "tool_use"}}).source == "T {{ x }}");
    REQUIRE(pick({{"chat_template", "{{ messages }}"}}).name.empty());
    REQUIRE_THROWS_WITH(pick({{"chat_template", "rag"}}), Catch::Contains("chat_template \"rag\" is neither a template") && Catch::Contains("it has: default, tool_use"));
    REQUIRE_THROWS_WITH(pick({{"chat_template", 3}}), Catch::Contains("option chat_template must be a string"));
    REQUIRE_THROWS_WITH(pick({{"chat_template", wf::json::array()}}), Catch::Contains("option chat_template must be a string"));
    REQUIRE_THROWS_WITH(pick({{"tools", "x"}}), Catch::Contains("option tools must be a list"));
    REQUIRE_THROWS_WITH(pick({{"add_generation_prompt", true}, {"continue_final_message", true}}), Catch::Contains("cannot both be true"));
    REQUIRE_THROWS_WITH(pick({{"add_generation_promt", true}}), Catch::Contains("did you mean \"add_generation_prompt\""));
    wf::chat_config several;
    several.templates = {{"a", "A"}, {"b", "B"}};
    REQUIRE_THROWS_WITH(wf::chat_template_for(several, {}), Catch::Contains("several chat templates and none named \"default\"") && Catch::Contains("a, b"));
    several.templates.resize(1);
    REQUIRE(wf::chat_template_for(several, {}).source == "A");
    REQUIRE_THROWS_WITH(wf::chat_template_for(wf::chat_config{}, {}), Catch::Contains("chat messages need a chat template, and this model has none"));
    REQUIRE_THROWS_WITH(wf::chat_template_for(wf::chat_config{}, wf::parse_chat_options({{"chat_template", "default"}})), Catch::Contains("it has none"));

    wf::check_chat_messages(msgs({{"system", "Be brief."}, {"user", "Hi"}}));
    wf::check_chat_messages(wf::json::parse(R"([{"role": "user", "content": [{"type": "text", "text": "Hi"}]},
                                               {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
                                               {"role": "assistant", "content": null, "tool_calls": []}])"));
    auto fails = [](const char* messages, const char* what) {
        INFO(messages);
        REQUIRE_THROWS_WITH(wf::check_chat_messages(wf::json::parse(messages)), Catch::Contains(what));
    };
    fails(R"("Hi")", "messages must be a list of {role, content} objects, got \"Hi\" (a string)");
    fails(R"([])", "the conversation is empty");
    fails(R"([{"role": "user", "content": "a"}, "b"])", "messages[1] must be an object {role, content}, got \"b\" (a string)");
    fails(R"([{"content": "a"}])", "messages[0] has no role");
    fails(R"([{"role": 3, "content": "a"}])", "messages[0].role must be a string such as 'user', got 3 (an integer)");
    fails(R"([{"role": "", "content": "a"}])", "messages[0].role is empty");
    fails(R"([{"role": "user"}])", "messages[0] has no content");
    fails(R"([{"role": "user", "content": 5}])", "messages[0].content must be a string or a list of parts");
    fails(R"([{"role": "user", "content": null}])", "messages[0].content must be");
    // the engine's call: both checks, then the template and the texts
    const wf::json r = wf::chat_template_json(c, msgs({{"user", "Hi"}}), {{"chat_template", "tool_use"}});
    REQUIRE(r == wf::json{{"template", "T {{ x }}"}, {"template_name", "tool_use"}, {"special_tokens", {{"bos_token", "<s>"}}}});
}

TEST_CASE("The bundled chat model answers held-out verses as PyTorch does, from its folder and its q8_0 GGUF", "[chat][models]") {
    // tests/data/chat-mini/greedy.json (tools/train/chat/make_fixture.py): the chat template's prompt for a
    // held-out KJV verse and PyTorch's greedy answer (tools/train/chat/evaluate.py), decoded until <|im_end|>.
    const auto fixture = wf::json::parse(wft::read_file(wft::data_path("chat-mini/greedy.json")));
    const std::string dir = std::string(WF_SOURCE_DIR) + "/models/wasmformer-chat-mini";
    const auto folder = wf::load_pipeline_model(wft::read_dir(dir));
    auto gguf_files = std::make_shared<wf::file_set>();
    gguf_files->add("wasmformer-chat-mini-q8_0.gguf", wft::read_file(std::string(WF_SOURCE_DIR) + "/packages/models/wasmformer-chat-mini-q8_0.gguf"));
    const auto gguf = wf::load_pipeline_model(gguf_files);
    REQUIRE(folder.end_ids == std::vector<int32_t>{4});  // <|im_end|>
    REQUIRE(gguf.end_ids == std::vector<int32_t>{4});
    REQUIRE(folder.chat.templates.size() == 1);
    REQUIRE(gguf.chat.templates == folder.chat.templates);
    wf::generation_params p;
    p.max_new_tokens = 160;
    p.add_special_tokens = false;  // the rendered template has its markers as text, and no BOS (as evaluated)
    int same_q8 = 0;
    for (const auto& v : fixture["verses"]) {
        const std::string prompt = v["prompt"], want = v["torch"];
        INFO(v["key"].get<std::string>());
        std::string reason;
        // f32 weights: PyTorch's answer, token for token
        REQUIRE(run(folder, prompt, p, &reason) == want);
        REQUIRE(reason == "eos");
        // the q8_0 file rounds weights and activations: mostly the same answer, never an empty or runaway one
        const std::string q8 = run(gguf, prompt, p, &reason);
        REQUIRE(reason == "eos");
        REQUIRE(!q8.empty());
        same_q8 += q8 == want;
    }
    REQUIRE(same_q8 >= 4);  // 6 of the 12 natively
}

TEST_CASE("a chat's next turn reuses the last generation's KV cache for the common prefix, with the same tokens", "[chat][generation]") {
    for (const char* name : {"gpt2-tiny", "llama-tiny", "mistral-tiny"}) {
        INFO(name);
        const auto& pm = wft::fixture_model(name);
        auto run = [&](const std::string& prompt, int64_t max_new, bool reuse, wf::generation_cache prior, wf::generation_cache* keep = nullptr) {
            wf::generation_params p;
            p.max_new_tokens = max_new;
            p.stop_at_eos = false;
            p.reuse_cache = reuse;
            p.output_scores = true;
            wf::generation g(pm, prompt, p, std::move(prior));
            std::vector<int32_t> ids;
            std::vector<double> logprobs;
            while (auto t = g.step()) ids.push_back(t->id), logprobs.push_back(t->logprob.value());
            const int64_t reused = g.reused_tokens();
            if (keep) *keep = g.release_cache();
            return std::tuple{ids, logprobs, reused, g.text()};
        };
        const std::string first = "The quick brown fox";
        auto first_turn = [&] {  // a cache holds an arena: each use gets its own, from the same first turn
            wf::generation_cache c;
            run(first, 6, true, {}, &c);
            return c;
        };
        wf::generation_cache cache;
        const auto [ids1, lp1, reused1, text1] = run(first, 6, true, {}, &cache);
        CHECK(reused1 == 0);
        CHECK(cache.ids.size() == pm.tok->encode(first).size() + 5);  // the last token chosen never ran
        // the next turn: the conversation so far and more; the cache is big enough (used in place) or not (copied)
        for (int64_t max_new : {2, 40}) {
            const std::string next = first + text1 + " jumps over";
            const auto prompt_ids = pm.tok->encode(next);
            const auto [want, want_lp, r0, t0] = run(next, max_new, false, {});
            const auto [got, got_lp, reused, t1] = run(next, max_new, true, first_turn());
            size_t common = 0;
            while (common < cache.ids.size() && common + 1 < prompt_ids.size() && cache.ids[common] == prompt_ids[common]) ++common;
            CHECK(r0 == 0);
            CHECK(reused == int64_t(common));
            CHECK(reused >= int64_t(pm.tok->encode(first).size()) - 1);
            CHECK(got == want);
            for (size_t i = 0; i < got_lp.size(); ++i) CHECK(got_lp[i] == Approx(want_lp[i]).margin(1e-4));
        }
        // a prompt that shares nothing (but BOS) reuses nothing else; attention asked for: nothing reused at all
        const int64_t bos = pm.tok->post_template().before.size();  // Llama's BOS is the one token they share
        CHECK(std::get<2>(run("Zebra", 2, true, first_turn())) == bos);
        wf::generation_params p;
        p.reuse_cache = true;
        p.attention_layer = 0;
        CHECK(wf::generation(pm, first + text1, p, first_turn()).reused_tokens() == 0);
    }
}
