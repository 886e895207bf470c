// The registry and what sits around it: every architecture has a fixture that loads through it and implements
// exactly the interfaces it declares; options are parsed once, strictly, with errors that name the option; the
// engine alone decides which files make a model; the storage-type table converts every type faithfully.
#include <catch2/catch.hpp>

#include <filesystem>

#include "helpers.h"
#include "tasks/fill-mask.h"
#include "tasks/options.h"
#include "tasks/pipeline.h"

TEST_CASE("every registered architecture has a fixture, loads through the registry and does what it declares", "[registry]") {
    REQUIRE(wf::architectures().size() >= 2);
    for (const wf::architecture* a : wf::architectures()) {
        // its fixtures: tests/data/fixtures/<name>-tiny, or <name>-tiny-<head> (a family's head decides the interfaces:
        // a classifier checkpoint of a masked-LM family is no masked LM)
        int fixtures = 0;
        for (const auto& entry : std::filesystem::directory_iterator(wft::data_path("fixtures"))) {
            const std::string dir = entry.path().filename().string(), stem = std::string(a->name) + "-tiny";
            if (!entry.is_directory() || dir.rfind(stem, 0) != 0 || (dir.size() > stem.size() && dir[stem.size()] != '-')) continue;
            ++fixtures;
            INFO("architecture " << a->name << ", fixture tests/data/fixtures/" << dir);
            const wf::loaded_model lm = wf::load_model(wft::read_dir(entry.path().string()));
            REQUIRE(lm.arch == a);
            REQUIRE(lm.m->hp().arch == a->name);
            REQUIRE(bool(lm.m->as_encoder()) == bool(a->capabilities & wf::cap_encoder));
            if (lm.m->as_masked_lm()) REQUIRE(a->capabilities & wf::cap_masked_lm);
            const std::string& head = lm.m->hp().head;  // the head config.json names is the one built
            REQUIRE(bool(lm.m->as_masked_lm()) == (head == "masked_lm"));
            REQUIRE(bool(lm.m->head(wf::head_kind::sequence)) == (head == "sequence_classification"));
            REQUIRE(bool(lm.m->head(wf::head_kind::token)) == (head == "token_classification" || (head == "pretraining" && a->name == "electra")));
            REQUIRE(bool(lm.m->head(wf::head_kind::span)) == (head == "question_answering"));
            REQUIRE(bool(lm.m->as_causal_lm()) == bool(a->capabilities & wf::cap_causal_lm));
            REQUIRE(bool(lm.m->as_seq2seq_lm()) == bool(a->capabilities & wf::cap_seq2seq));
        }
        INFO("architecture " << a->name);
        REQUIRE(fixtures >= 1);
        REQUIRE(!a->hf_model_types.empty());
        REQUIRE(!a->hf_architectures.empty());
        // names are unique across the table
        for (const wf::architecture* b : wf::architectures())
            if (b != a)
                for (auto n : a->hf_architectures) REQUIRE(std::find(b->hf_architectures.begin(), b->hf_architectures.end(), n) == b->hf_architectures.end());
    }
}

TEST_CASE("tasks ask for a capability and name what a model supports", "[registry]") {
    const auto gpt2 = wf::load_pipeline_model(wft::read_dir(wft::data_path("fixtures/gpt2-tiny")));
    REQUIRE(wf::supported_tasks(gpt2.m()) == std::vector<std::string>{"text-generation"});
    REQUIRE_THROWS_WITH(wf::fill_mask(gpt2, "a [MASK]"), "fill-mask needs a masked language model; this model (gpt2) supports: text-generation");
}

TEST_CASE("options: unknown names suggest the nearest, values are checked, errors name the option", "[options]") {
    using wf::json;
    const auto g = wf::parse_generation_options(json{{"max_new_tokens", 7}, {"do_sample", true}, {"temperature", 0.5}, {"stop", "\n"}, {"seed", 3}});
    REQUIRE(g.max_new_tokens == 7);
    REQUIRE(g.sampling.do_sample);
    REQUIRE(g.sampling.temperature == 0.5f);
    REQUIRE(g.stop == std::vector<std::string>{"\n"});
    REQUIRE(g.sampling.seed == 3);
    auto fails = [](const json& o, const std::string& msg) {
        INFO(o.dump() << " expecting: " << msg);
        REQUIRE_THROWS_WITH(wf::parse_generation_options(o), Catch::Contains(msg));
    };
    fails({{"max_new_token", 5}}, "unknown option \"max_new_token\" (did you mean \"max_new_tokens\"?)");
    fails({{"temprature", 1}}, "did you mean \"temperature\"?");
    fails({{"max_length", 5}}, "unknown option \"max_length\" (use max_new_tokens");
    fails({{"num_return_sequences", 2}}, "not supported");
    fails({{"zzz", 1}}, "unknown option \"zzz\" (known: max_new_tokens, do_sample");
    fails({{"max_new_tokens", "10"}}, "option max_new_tokens must be an integer, got \"10\" (a string)");
    fails({{"max_new_tokens", -1}}, "max_new_tokens = -1 is outside [0,");
    fails({{"do_sample", 1}}, "option do_sample must be true or false");
    fails({{"stop", json::array({"a", 3})}}, "option stop must be a string or a list of strings");
    fails({{"stop", ""}}, "stop strings must not be empty");
    fails({{"top_p", 0}}, "top_p must be in (0, 1]");
    fails(json::array(), "options must be an object");
    REQUIRE(wf::parse_generation_options(json{{"top_k", nullptr}}).sampling.top_k == 0);  // null: the default
    REQUIRE(wf::parse_fill_mask_options(json{{"targets", "paris"}}).targets == std::vector<std::string>{"paris"});
    REQUIRE_THROWS_WITH(wf::parse_fill_mask_options(json{{"top_k", 0}}), Catch::Contains("top_k = 0 is outside [1,"));
    REQUIRE_THROWS_WITH(wf::parse_fill_mask_options(json{{"topk", 3}}), Catch::Contains("(use top_k)"));
    REQUIRE(wf::parse_load_options(json{{"dtype", "fp16"}}).dtype.to == wf::dtype::f16);
    REQUIRE(wf::parse_load_options(json{{"dtype", "Q8"}}).dtype.to == wf::dtype::q8_0);
    REQUIRE(wf::parse_load_options(json{{"dtype", "q4"}}).dtype.to == wf::dtype::q4_0);
    REQUIRE(wf::parse_load_options(json{{"dtype", "Q4_K"}}).dtype.to == wf::dtype::q4_k);
    REQUIRE_THROWS_WITH(wf::parse_load_options(json{{"dtype", "int4"}}), Catch::Contains("dtype \"int4\" is not supported (use auto, as_stored"));
    REQUIRE_THROWS_WITH(wf::parse_load_options(json{{"dtipe", "f32"}}), Catch::Contains("did you mean \"dtype\"?"));
}

TEST_CASE("the engine decides which files make a model", "[files]") {
    using v = std::vector<std::string>;
    REQUIRE(wf::select_files({"README.md", "config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json", "flax_model.msgpack"}, true) ==
            v{"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"});
    REQUIRE(wf::select_files({"config.json", "model.safetensors", "model.safetensors.index.json", "tokenizer.json", "vocab.txt"}, true) ==
            v{"config.json", "model.safetensors.index.json", "tokenizer.json"});
    REQUIRE(wf::select_files({"merges.txt", "vocab.json", "config.json"}, false) == v{"config.json", "vocab.json", "merges.txt"});
    REQUIRE(wf::select_files({"m.gguf", "config.json"}, true) == v{"m.gguf"});
    REQUIRE_THROWS_WITH(wf::select_files({"a.gguf", "b.gguf"}, true), Catch::Contains("several .gguf files"));
    REQUIRE_THROWS_WITH(wf::select_files({"model.safetensors", "vocab.txt"}, true), Catch::Contains("no config.json"));
    REQUIRE_THROWS_WITH(wf::select_files({"config.json", "vocab.txt"}, true), Catch::Contains("no model.safetensors"));
    REQUIRE_THROWS_WITH(wf::select_files({"config.json", "model.safetensors", "vocab.json"}, true), Catch::Contains("no tokenizer"));
    // every name select_files can pick is a candidate, so that a source that cannot list its folder finds it
    const auto all = wf::candidate_files(true);
    for (const char* n : {"config.json", "model.safetensors", "model.safetensors.index.json", "tokenizer.json", "vocab.txt", "vocab.json",
                          "merges.txt", "tokenizer_config.json", "special_tokens_map.json"})
        REQUIRE(std::find(all.begin(), all.end(), n) != all.end());
}

TEST_CASE("dtype auto widens half-precision weights, within memory, and says so", "[loaders]") {
    // the bundled BERT-mini is stored in F16: auto widens it (exact), as_stored keeps views into the file
    auto files = wft::read_dir(std::string(WF_SOURCE_DIR) + "/models/wasmformer-bert-mini");
    const auto wide = wf::load_model(files);
    REQUIRE(wide.dtype == "auto (f16/bf16 widened to f32)");
    REQUIRE(!wide.files);
    const auto kept = wf::load_model(files, {wf::dtype_option::parse("as_stored")});
    REQUIRE(kept.dtype == "as_stored");
    REQUIRE(kept.files);
    REQUIRE(kept.m->weight_bytes() < wide.m->weight_bytes() / 4);
    const auto f32 = wf::load_model(wft::read_dir(wft::data_path("fixtures/bert-tiny")));
    REQUIRE(f32.dtype == "auto (as stored)");
}

TEST_CASE("every storage type converts to f32 and back as its definition says", "[kernels][dtype]") {
    const int64_t n = 96;
    const auto x = wft::random_floats(size_t(n), 77, -3.0f, 3.0f);
    for (wf::dtype t : wf::all_dtypes) {
        const wf::dtype_traits& k = wf::traits(t);
        INFO(k.name);
        REQUIRE(wf::dtype_from_ggml(k.ggml_type) == t);
        REQUIRE(wf::dtype_from_name(k.name) == t);
        REQUIRE(std::string(wf::ggml_type_name(k.ggml_type)) == k.name);
        std::vector<uint8_t> bytes(size_t(wf::row_bytes(t, n)));
        std::vector<float> back(static_cast<size_t>(n));
        k.from_f32(x.data(), bytes.data(), n);
        k.to_f32(bytes.data(), back.data(), n);
        // per block, the error its scale allows: half a step, except q4_0, whose scale max/−8 leaves the opposite
        // extreme clamped at +7 steps (one whole step away), plus the f16 rounding of the scale
        for (int64_t b = 0; b < n / k.block; ++b) {
            double amax = 0;
            for (int i = 0; i < k.block; ++i) amax = std::max(amax, double(std::fabs(x[size_t(b * k.block + i)])));
            const double bound = t == wf::dtype::f32 ? 0 : t == wf::dtype::f16 ? amax * 0x1p-11 : t == wf::dtype::bf16 ? amax * 0x1p-8
                               : t == wf::dtype::q8_0 ? amax / 127 * 0.5 * 1.01 : amax / 8 + amax * 0x1p-10;
            for (int i = 0; i < k.block; ++i) REQUIRE(std::fabs(back[size_t(b * k.block + i)] - x[size_t(b * k.block + i)]) <= bound + 1e-12);
        }
        if (k.to_q8_0) {  // re-blocking is exact
            std::vector<uint8_t> q8(size_t(wf::row_bytes(wf::dtype::q8_0, n)));
            std::vector<float> via(static_cast<size_t>(n));
            k.to_q8_0(bytes.data(), q8.data(), n);
            wf::traits(wf::dtype::q8_0).to_f32(q8.data(), via.data(), n);
            REQUIRE(via == back);
        }
    }
    REQUIRE(std::string(wf::ggml_type_name(16)) == "IQ2_XXS");
    REQUIRE(std::string(wf::ggml_type_name(4)) == "unknown");
    REQUIRE(!wf::dtype_from_ggml(16));  // IQ2_XXS: not (yet) in the table
}
