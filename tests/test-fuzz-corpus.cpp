// Replays the fuzzers' seed corpus (tests/data/fuzz-corpus, plus any inputs a fuzzing run added there) through the
// same entry points, so that every input that once crashed stays fixed. The tiny GGUF seeds must load and run.
#include <catch2/catch.hpp>
#include <filesystem>

#include "../fuzz/targets.h"
#include "helpers.h"

TEST_CASE("fuzz corpus replays cleanly", "[fuzz]") {
    const auto bert = wf::load_vocab_txt([] { auto b = wft::read_file(wft::data_path("tokenizers/bert/vocab.txt")); return std::string(b.begin(), b.end()); }(), {});
    const auto gpt2 = [] {
        auto v = wft::read_file(wft::data_path("tokenizers/gpt2/encoder.json")), m = wft::read_file(wft::data_path("tokenizers/gpt2/vocab.bpe"));
        return wf::load_gpt2_files(std::string(v.begin(), v.end()), std::string(m.begin(), m.end()));
    }();
    int n = 0;
    for (const char* target : {"safetensors", "gguf", "config", "tokenizer_json", "tokenizers", "sentencepiece"}) {
        for (auto& e : std::filesystem::directory_iterator(wft::data_path(std::string("fuzz-corpus/") + target))) {
            const auto b = wft::read_file(e.path().string());
            INFO(target << ": " << e.path().filename().string());
            const std::string t = target;
            if (t == "safetensors") wf::fuzz::safetensors(b.data(), b.size());
            if (t == "gguf") wf::fuzz::gguf(b.data(), b.size());
            if (t == "config") wf::fuzz::config(b.data(), b.size());
            if (t == "tokenizer_json") wf::fuzz::tokenizer_json(b.data(), b.size());
            if (t == "sentencepiece") wf::fuzz::sentencepiece(b.data(), b.size());
            if (t == "tokenizers") wf::fuzz::tokenizer_text(*bert, *gpt2, b.data(), b.size());
            ++n;
        }
    }
    REQUIRE(n >= 57);
    // the seeds themselves are valid: the tiny GGUF models load (the XLM-R classifier's, tools/reference/make_fuzz_seed_xlmr.py,
    // classifies a pair)
    for (const char* name : {"fuzz-corpus/gguf/tiny-gpt2", "fuzz-corpus/gguf/tiny-bert", "fuzz-corpus/gguf/tiny-xlmr-cls"}) {
        auto fs = std::make_shared<wf::file_set>();
        fs->add("model.gguf", wft::read_file(wft::data_path(name)));
        wf::pipeline_model pm;
        REQUIRE_NOTHROW(pm = wf::load_pipeline_model(fs));
        if (std::string(name).find("xlmr") != std::string::npos) {
            REQUIRE(pm.tok->encode("a b", false) == std::vector<int32_t>{5, 6});
            const auto r = wf::text_classification(pm, {"the a"}, {"b c"});
            REQUIRE(r.size() == 1);
            REQUIRE((r[0][0].label == "no" || r[0][0].label == "yes"));
        }
    }
}
