// Llama-style decoders (Llama with Llama 3's rope scaling and grouped-query attention, Qwen2 with Q/K/V biases and
// BF16 weights, Mistral with a sliding window and F16 weights) against golden activations from the PyTorch
// reference (tools/reference/decoders.py, make_decoder_fixtures.py), loaded through the registry from Hugging Face
// folders and from GGUF files written with llama.cpp's names (Q and K permuted for "llama", as its converter does):
// every layer within kF32, KV-cache decoding equal to the full forward, several sequences equal to one, greedy
// continuations identical, and the GGUF files equal to the folders.
#include <catch2/catch.hpp>

#include "helpers.h"
#include "models/registry.h"
#include "tasks/pipeline.h"

namespace {

// f32 against PyTorch's f32, a little wider than GPT-2's (tests/test-models.cpp): RoPE's cos/sin and the RMS
// norm's rsqrt round differently in PyTorch than here.
constexpr double kF32 = 2e-5;

int argmax(const float* x, int64_t n) {
    int best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (x[i] > x[best]) best = int(i);
    return best;
}

wf::loaded_model load_dir(const std::string& fixture, const char* dtype = "auto") {
    return wf::load_model(wft::read_dir(wft::data_path(fixture)), {wf::dtype_option::parse(dtype)});
}

wf::loaded_model load_file(const std::string& fixture, const char* dtype = "auto") {
    auto fs = std::make_shared<wf::file_set>();
    fs->add("model.gguf", wft::read_file(wft::data_path(fixture)));
    return wf::load_model(fs, {wf::dtype_option::parse(dtype)});
}

std::vector<float> all_logits(const wf::loaded_model& lm, const std::vector<int32_t>& ids, wf::forward_trace* trace = nullptr) {
    const wf::causal_lm& m = *lm.m->as_causal_lm();
    auto s = m.new_state(lm.m->hp().n_ctx);
    const auto span = m.forward(s, ids, true, trace);
    return {span.begin(), span.end()};
}

// The model against its golden file: hidden states, logits, cached decoding, two sequences side by side, greedy ids.
void check_against_reference(const wf::loaded_model& lm, const std::string& golden_path, double tol) {
    wft::golden g(wft::data_path(golden_path));
    const wf::causal_lm& m = *lm.m->as_causal_lm();
    const wf::hparams& hp = lm.m->hp();
    const int64_t V = hp.n_vocab;
    const auto ids = g.i32("input_ids");
    const int64_t T = int64_t(ids.size());
    const auto want_logits = g.f32("logits");

    wf::forward_trace trace;
    trace.want_hidden = true;
    const auto logits = all_logits(lm, ids, &trace);
    REQUIRE(logits.size() == want_logits.size());
    CHECK(wft::max_abs_diff(logits.data(), want_logits.data(), logits.size()) < tol);
    REQUIRE(trace.hidden.size() == size_t(hp.n_layer + 1));
    for (size_t l = 0; l < trace.hidden.size(); ++l) {
        const auto want = g.f32("hidden." + std::to_string(l));
        INFO("hidden state " << l);
        REQUIRE(wft::max_abs_diff(trace.hidden[l].data(), want.data(), want.size()) < tol);
    }

    // one token at a time through the cache: each step's logits equal the full forward's row
    auto s2 = m.new_state(hp.n_ctx);
    for (int64_t i = 0; i < T; ++i) {
        const auto step = m.forward(s2, std::span<const int32_t>(ids.data() + i, 1));
        REQUIRE(wft::max_abs_diff(step.data(), logits.data() + i * V, size_t(V)) < 1e-5);
    }
    // two different sequences side by side (beams, a batch), each as if alone: the prompt's first half and its tokens
    // 1 … half, only their last logits asked for (the last layer then runs at their last rows only); then one more
    // token each through the cache that step left
    {
        const int64_t half = T / 2;
        REQUIRE(half + 2 <= T);
        std::vector<int32_t> two(ids.begin(), ids.begin() + half);
        two.insert(two.end(), ids.begin() + 1, ids.begin() + half + 1);
        const auto shifted = all_logits(lm, std::vector<int32_t>(ids.begin() + 1, ids.begin() + half + 2));  // tokens 1 … half + 1 alone
        auto sb = m.new_state(hp.n_ctx, 2);
        const auto last = m.forward(sb, two);
        REQUIRE(last.size() == size_t(2 * V));
        REQUIRE(wft::max_abs_diff(last.data(), logits.data() + (half - 1) * V, size_t(V)) < 1e-5);
        REQUIRE(wft::max_abs_diff(last.data() + V, shifted.data() + (half - 1) * V, size_t(V)) < 1e-5);
        const int32_t next[2] = {ids[size_t(half)], ids[size_t(half + 1)]};
        const auto step = m.forward(sb, next);
        REQUIRE(wft::max_abs_diff(step.data(), logits.data() + half * V, size_t(V)) < 1e-5);
        REQUIRE(wft::max_abs_diff(step.data() + V, shifted.data() + half * V, size_t(V)) < 1e-5);
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

}  // namespace

TEST_CASE("Llama (GQA, Llama 3 rope scaling, tied head) matches the reference", "[models][decoders]") {
    const wf::loaded_model lm = load_dir("fixtures/llama-tiny");
    REQUIRE(lm.arch->name == "llama");
    REQUIRE(lm.m->hp().n_head_kv < lm.m->hp().n_head);
    REQUIRE(lm.m->hp().rope_scaling.type == "llama3");
    check_against_reference(lm, "fixtures/llama-tiny/golden.safetensors", kF32);
}

TEST_CASE("Qwen2 (Q/K/V biases, BF16 weights, untied head) matches the reference", "[models][decoders]") {
    const wf::loaded_model lm = load_dir("fixtures/qwen2-tiny");
    REQUIRE(lm.arch->name == "qwen2");
    check_against_reference(lm, "fixtures/qwen2-tiny/golden.safetensors", kF32);
    // as stored (BF16, computed from the file's bytes), the same numbers: BF16 widens to f32 exactly
    check_against_reference(load_dir("fixtures/qwen2-tiny", "as_stored"), "fixtures/qwen2-tiny/golden.safetensors", kF32);
}

TEST_CASE("Mistral (sliding window, F16 weights) matches the reference", "[models][decoders]") {
    const wf::loaded_model lm = load_dir("fixtures/mistral-tiny");
    REQUIRE(lm.arch->name == "mistral");
    REQUIRE(lm.m->hp().sliding_window > 0);
    check_against_reference(lm, "fixtures/mistral-tiny/golden.safetensors", kF32);
}

TEST_CASE("Gemma (√E embeddings, (1 + w) norms, GeGLU, multi-query, head_dim ≠ hidden/heads) matches the reference", "[models][decoders]") {
    const wf::loaded_model lm = load_dir("fixtures/gemma-tiny");
    REQUIRE(lm.arch->name == "gemma");
    REQUIRE(lm.m->hp().head_dim() * lm.m->hp().n_head != lm.m->hp().n_embd);
    check_against_reference(lm, "fixtures/gemma-tiny/golden.safetensors", kF32);
}

TEST_CASE("Gemma 2 (sub-layer output norms, soft-capped scores and logits, query_pre_attn_scalar, sliding window on even layers) matches the reference",
          "[models][decoders]") {
    const wf::loaded_model lm = load_dir("fixtures/gemma2-tiny");
    REQUIRE(lm.arch->name == "gemma2");
    REQUIRE(lm.m->hp().attn_softcap > 0);
    REQUIRE(lm.m->hp().final_softcap > 0);
    check_against_reference(lm, "fixtures/gemma2-tiny/golden.safetensors", kF32);
}

TEST_CASE("Phi-3 (fused qkv_proj and gate_up_proj, F16 weights) matches the reference", "[models][decoders]") {
    const wf::loaded_model lm = load_dir("fixtures/phi3-tiny");
    REQUIRE(lm.arch->name == "phi3");
    check_against_reference(lm, "fixtures/phi3-tiny/golden.safetensors", kF32);
}

TEST_CASE("GGUF llama (permuted Q/K, rope_freqs), qwen2, gemma (norms stored as 1 + w) and phi3 files equal their Hugging Face folders; Q8_0 stays close", "[models][decoders][gguf]") {
    for (auto [folder, file] : {std::pair{"fixtures/llama-tiny", "fixtures/llama-tiny-f32.gguf"}, {"fixtures/qwen2-tiny", "fixtures/qwen2-tiny-bf16.gguf"},
                                {"fixtures/gemma-tiny", "fixtures/gemma-tiny-f32.gguf"}, {"fixtures/phi3-tiny", "fixtures/phi3-tiny-f16.gguf"}}) {
        INFO(file);
        const wf::loaded_model gguf = load_file(file);
        REQUIRE(gguf.arch->name == load_dir(folder).arch->name);
        check_against_reference(gguf, std::string(folder) + "/golden.safetensors", kF32);
    }
    // llama's rows were permuted for adjacent-pair rotation: read as NeoX's pairs they would be wrong
    const wf::loaded_model f32 = load_file("fixtures/llama-tiny-f32.gguf");
    REQUIRE_FALSE(f32.m->hp().rope_neox);
    wft::golden g(wft::data_path("fixtures/llama-tiny/golden.safetensors"));
    const auto ids = g.i32("input_ids");
    const auto want = g.f32("logits");
    const auto q8 = all_logits(load_file("fixtures/llama-tiny-q8_0.gguf"), ids);
    const double d = wft::max_abs_diff(q8.data(), want.data(), want.size());
    CHECK(d > 0);     // the Q8_0 weights were really used
    CHECK(d < 0.05);  // and stay close (weights and activations quantized to 8 bits)
}

TEST_CASE("Split GGUF (gguf-split's parts, with and without tensors in the first) loads as the whole file; a part missing, "
          "misnumbered or foreign is named", "[models][decoders][gguf]") {
    // tools/reference/gguf_split.py wrote the parts from llama-tiny-q8_0.gguf: 8 + 8 + 5 tensors, and 0 + 11 + 10
    const auto ids = wft::golden(wft::data_path("fixtures/llama-tiny/golden.safetensors")).i32("input_ids");
    const auto whole = all_logits(load_file("fixtures/llama-tiny-q8_0.gguf"), ids);
    for (const char* dir : {"fixtures/llama-tiny-q8_0-split", "fixtures/llama-tiny-q8_0-split-no-tensor-first"}) {
        INFO(dir);
        auto parts = wft::read_dir(wft::data_path(dir));
        REQUIRE(parts->names().size() == 3);
        const auto split = all_logits(wf::load_model(parts), ids);
        REQUIRE(split.size() == whole.size());
        CHECK(wft::max_abs_diff(split.data(), whole.data(), whole.size()) == 0);
        // the pipeline reads its tokenizer and chat template from the first part's metadata
        const wf::pipeline_model pm = wf::load_pipeline_model(wft::read_dir(wft::data_path(dir)));
        CHECK(pm.tok->encode("hello world").size() > 0);
        CHECK(wf::select_files(parts->names(), true) ==
              std::vector<std::string>{"llama-tiny-q8_0-00001-of-00003.gguf", "llama-tiny-q8_0-00002-of-00003.gguf", "llama-tiny-q8_0-00003-of-00003.gguf"});
    }
    auto parts = [] { return wft::read_dir(wft::data_path("fixtures/llama-tiny-q8_0-split")); };
    {
        auto fs = parts();
        fs->remove("llama-tiny-q8_0-00002-of-00003.gguf");
        REQUIRE_THROWS_WITH(wf::load_model(fs), Catch::Contains("lacks llama-tiny-q8_0-00002-of-00003.gguf"));
        REQUIRE_THROWS_WITH(wf::select_files(fs->names(), true), Catch::Contains("lacks llama-tiny-q8_0-00002-of-00003.gguf"));
    }
    {  // parts 2 and 3 under each other's names: their split.no says so
        auto fs = std::make_shared<wf::file_set>();
        auto src = parts();
        fs->add("llama-tiny-q8_0-00001-of-00003.gguf", *src->get("llama-tiny-q8_0-00001-of-00003.gguf"));
        fs->add("llama-tiny-q8_0-00002-of-00003.gguf", *src->get("llama-tiny-q8_0-00003-of-00003.gguf"));
        fs->add("llama-tiny-q8_0-00003-of-00003.gguf", *src->get("llama-tiny-q8_0-00002-of-00003.gguf"));
        REQUIRE_THROWS_WITH(wf::load_model(fs), Catch::Contains("llama-tiny-q8_0-00002-of-00003.gguf: split.no = 2, expected 1"));
    }
    {  // the first part alone, renamed: its split.count says what is missing
        auto fs = std::make_shared<wf::file_set>();
        fs->add("model.gguf", *parts()->get("llama-tiny-q8_0-00001-of-00003.gguf"));
        REQUIRE_THROWS_WITH(wf::load_model(fs), Catch::Contains("model.gguf: split.count = 3, but 1 part was given"));
    }
    {  // a part of another model beside them; a plain .gguf beside them
        auto fs = parts();
        fs->add("other-00002-of-00003.gguf", *fs->get("llama-tiny-q8_0-00002-of-00003.gguf"));
        REQUIRE_THROWS_WITH(wf::load_model(fs), Catch::Contains("give the parts of one split model"));
        auto fs2 = parts();
        fs2->add("model.gguf", wft::read_file(wft::data_path("fixtures/llama-tiny-q8_0.gguf")));
        REQUIRE_THROWS_WITH(wf::load_model(fs2), Catch::Contains("give one model file"));
    }
    REQUIRE_THROWS_WITH(wf::select_files({"x-00001-of-99999.gguf"}, true), Catch::Contains("a split model of 99999 parts is over the limit of 256"));
    {  // the same tensor in two parts
        std::vector<wf::gguf_file> p;
        auto fs = parts();
        for (const std::string& n : fs->names()) p.push_back(wf::parse_gguf(fs->get(n)->data(), int64_t(fs->get(n)->size()), n));
        const std::string dup = p[1].tensors[0].name;
        p[2].tensors.push_back(p[1].tensors[0]);
        REQUIRE_THROWS_WITH(wf::join_gguf_parts(std::move(p)),
                            Catch::Contains("llama-tiny-q8_0-00003-of-00003.gguf: tensor \"" + dup + "\" is also in an earlier part"));
        std::vector<wf::gguf_file> q;
        for (const std::string& n : fs->names()) q.push_back(wf::parse_gguf(fs->get(n)->data(), int64_t(fs->get(n)->size()), n));
        q[2].tensors.pop_back();  // one tensor fewer than split.tensors.count
        REQUIRE_THROWS_WITH(wf::join_gguf_parts(std::move(q)), Catch::Contains("split.tensors.count = 21, but the 3 parts hold 20 tensors"));
    }
}

TEST_CASE("Llama-style configs: errors name the field", "[models][decoders][errors]") {
    auto parse = [](const std::string& extra) {
        return wf::parse_config(R"({"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 1,
                                   "intermediate_size": 64, "vocab_size": 100)" + extra + "}");
    };
    REQUIRE(parse("").n_head_kv == 4);
    REQUIRE(parse(R"(, "max_position_embeddings": 131072)").n_ctx == wf::max_context);
    REQUIRE_THROWS_WITH(parse(R"(, "num_key_value_heads": 3)"), Catch::Contains("not a multiple of the key/value heads"));
    REQUIRE_THROWS_WITH(parse(R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4})"), Catch::Contains("rope_scaling type \"yarn\" is not supported"));
    REQUIRE_THROWS_WITH(parse(R"(, "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 1})"),
                        Catch::Contains("low_freq_factor < high_freq_factor"));
    REQUIRE_THROWS_WITH(parse(R"(, "hidden_act": "mish")"), Catch::Contains("hidden_act \"mish\" is not supported"));
    REQUIRE_THROWS_WITH(parse(R"(, "hidden_act": "relu")"), Catch::Contains("not supported by a Llama-style decoder's gate"));
    REQUIRE_THROWS_WITH(parse(R"(, "rope_theta": -1)"), Catch::Contains("rope_theta"));
    REQUIRE_THROWS_WITH(parse(R"(, "head_dim": 4096)"), Catch::Contains("head width = 4096"));
    // a head width of its own (Gemma, Qwen3): no need for hidden % heads
    REQUIRE(parse(R"(, "head_dim": 24)").head_dim() == 24);
    REQUIRE_THROWS_WITH(wf::parse_config(R"({"model_type": "mistral", "hidden_size": 32, "num_attention_heads": 4, "sliding_window": -2})"),
                        Catch::Contains("sliding_window = -2"));
    // an untied model without its output matrix (llama-tiny is tied: its file has none)
    auto files = wft::read_dir(wft::data_path("fixtures/llama-tiny"));
    auto config = wf::parse_json_strict(files->text("config.json"), "config.json", 1 << 20);
    config["tie_word_embeddings"] = false;
    const std::string text = config.dump();
    auto untied = std::make_shared<wf::file_set>();
    for (const std::string& n : files->names())
        if (n != "config.json") untied->add(n, std::vector<uint8_t>(files->get(n)->begin(), files->get(n)->end()));
    untied->add("config.json", std::vector<uint8_t>(text.begin(), text.end()));
    REQUIRE_THROWS_WITH(wf::load_model(untied), Catch::Contains("tie_word_embeddings is false but the checkpoint has no lm_head.weight"));
}

TEST_CASE("Llama's rope scaling equals modeling_rope_utils' llama3 frequencies", "[models][decoders]") {
    // independent of the engine's code path: the formula written out in double, checked at the three bands
    wf::hparams hp;
    hp.n_embd = 128;
    hp.n_head = 2;
    hp.rope_theta = 500000.0f;
    hp.rope_scaling = {"llama3", 32.0f, 1.0f, 4.0f, 8192};
    const auto f = hp.rope_inv_freq();
    REQUIRE(f.size() == 32);
    int low = 0, mid = 0, high = 0;
    for (size_t i = 0; i < f.size(); ++i) {
        const double base = 1.0 / std::pow(500000.0, 2.0 * double(i) / 64.0), wavelen = 2 * M_PI / base;
        double want = base;
        if (wavelen > 8192.0 / 1.0) want = base / 32, ++low;
        else if (wavelen >= 8192.0 / 4.0) {
            const double smooth = (8192.0 / wavelen - 1.0) / (4.0 - 1.0);
            want = (1 - smooth) * base / 32 + smooth * base, ++mid;
        } else {
            ++high;
        }
        REQUIRE(f[i] == Approx(want).epsilon(1e-5));
    }
    REQUIRE(low > 0);
    REQUIRE(mid > 0);
    REQUIRE(high > 0);
}
