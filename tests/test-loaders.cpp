// safetensors (S1–S31), config.json (C1–C13) and sharded-index cases from research/security.md: each malformed
// input gets its specific error, nothing reads out of bounds (the suite also runs under ASan in the fuzz build),
// and the next load still works.
#include <catch2/catch.hpp>

#include "core/json.h"
#include "helpers.h"
#include "tasks/fill-mask.h"
#include "tasks/generation.h"

namespace {

std::vector<uint8_t> st(const std::string& header, size_t data_bytes, uint64_t declared = UINT64_MAX) {
    std::vector<uint8_t> b(8);
    const uint64_t n = declared == UINT64_MAX ? header.size() : declared;
    std::memcpy(b.data(), &n, 8);
    b.insert(b.end(), header.begin(), header.end());
    b.resize(b.size() + data_bytes, 0);
    return b;
}

void st_fails(const std::vector<uint8_t>& b, const std::string& msg) {
    INFO("expecting: " << msg);
    REQUIRE_THROWS_WITH(wf::parse_safetensors(b.data(), int64_t(b.size()), "m.safetensors"), Catch::Contains(msg));
}

wf::safetensors_file st_ok(const std::vector<uint8_t>& b) { return wf::parse_safetensors(b.data(), int64_t(b.size()), "m.safetensors"); }

}  // namespace

TEST_CASE("safetensors: malformed headers and offsets", "[loaders][safetensors]") {
    const std::string one = R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
    st_fails({1, 2, 3}, "too small");                                                                       // S1
    st_fails(st("", 0, 60), "runs past the end of the file");                                                 // S2
    st_fails(st(one, 16, UINT64_MAX - 1), "over the limit");                                                 // S3, S4
    st_fails(st(one, 16, uint64_t(1) << 32), "over the limit");
    st_fails(st("\xff", 0), "invalid JSON");                                                                  // S5
    for (const char* h : {"{", "[]", "\"x\"", "null", "1"}) st_fails(st(h, 0), "m.safetensors header");       // S6
    REQUIRE(st_ok(st("  \t" + one + "  ", 16)).tensors.size() == 1);                                          // S7: whitespace accepted
    st_fails(st(one + std::string(3, '\0'), 16), "NUL byte at offset");                                             // S8
    st_fails(st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8), "data starts at 4, expected 0");  // S9
    st_fails(st(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 16),
             "must be contiguous and must not overlap");                                                       // S10
    st_fails(st(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[16,8]}})", 16), "outside the 16 data bytes");  // S11
    st_fails(st(one, 17), "1 bytes after the last tensor");                                                  // S12
    st_fails(st(one, 15), "outside the 15 data bytes");                                                       // S13
    st_fails(st(R"({"a":{"dtype":"I32","shape":[2,2],"data_offsets":[0,4]}})", 4), "needs 16 bytes but data_offsets span 4");  // S14
    st_fails(st(R"({"a":{"dtype":"F32","shape":[2,18446744073709551614],"data_offsets":[0,8]}})", 8), "shape entry 18446744073709551614 is too large");  // S15
    st_fails(st(R"({"a":{"dtype":"F32","shape":[2,9223372036854775807],"data_offsets":[0,8]}})", 8), "overflows");
    st_fails(st(R"({"a":{"dtype":"F32","shape":[65536,65537],"data_offsets":[0,8]}})", 8), "needs 17180131328 bytes");
    for (const char* d : {"F128", "bf16", ""}) st_fails(st(std::string(R"({"a":{"dtype":")") + d + R"(","shape":[1],"data_offsets":[0,4]}})", 4), "unknown dtype");  // S16
    st_fails(st(R"({"a":{"dtype":5,"shape":[1],"data_offsets":[0,4]}})", 4), "field \"dtype\" must be a string");
    REQUIRE(st_ok(st(R"({"a":{"dtype":"F32","shape":[2,0],"data_offsets":[0,0]},"b":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})", 4))
                .tensors.size() == 2);                                                                         // S19
    st_fails(st(R"({"__metadata__":{"format":1},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4), "__metadata__ value of \"format\" is not a string");  // S20
    st_fails(st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8), "duplicate key \"a\"");  // S21
    REQUIRE(st_ok(st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"foo":1}})", 4)).tensors.size() == 1);  // S22: extra field ignored
    st_fails(st(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", 4), "missing field \"shape\"");
    for (const char* bad : {"-1", "0.5", "\"16\"", "1e3"})                                                     // S23
        st_fails(st(std::string(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,)") + bad + "]}}", 4), "data_offsets must be two non-negative integers");
    st_fails(st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,9007199254740993]}})", 4), "outside the 4 data bytes");  // S24: exact
    st_fails(st(std::string(100000, '[') + std::string(100000, ']'), 0), "nested deeper than 64 levels");       // S25
    st_fails(st(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2), "unknown dtype \"F4\"");  // S17: F4 (odd count) refused by name
    {   // S26: a small file whose header lists very many zero-size tensors: refused by the header-size cap (1M
        // tensors, 59 MB of header) or, under it, by the tensor-count cap (200k tensors, 7 MB)
        auto many = [](int n) {
            std::string h = "{";
            for (int i = 0; i < n; ++i) h += (i ? ",\"" : "\"") + std::to_string(i) + R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
            return h + "}";
        };
        st_fails(st(many(1000000), 0), "over the limit of 16777216");
        st_fails(st(many(200000), 0), "200000 entries is over the limit of 100000");
    }
    {   // S27: data misaligned (header length 7 + 8), read through unaligned-safe paths
        const std::string h = R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})";
        auto b = st(h + " ", 12);
        const float v[3] = {1.5f, -2.0f, 3.25f};
        std::memcpy(b.data() + 8 + h.size() + 1, v, 12);
        const auto f = st_ok(b);
        float out[3];
        wf::dequantize_row({wf::dtype::f32, 1, 3, f.tensors[0].data}, 0, out);
        REQUIRE(out[2] == 3.25f);
    }
}

TEST_CASE("safetensors checkpoints: shapes, missing and unsupported tensors, shards", "[loaders][safetensors]") {
    auto files = wft::read_dir(wft::data_path("fixtures/bert-tiny"));
    // S29, C8: a tensor of the wrong shape for the config (vocab_size disagrees with the embedding rows)
    auto cfg = files->text("config.json");
    std::string bigger(cfg);
    bigger.replace(bigger.find("\"vocab_size\": 30522"), 19, "\"vocab_size\": 30523");
    auto f2 = wft::read_dir(wft::data_path("fixtures/bert-tiny"));
    f2->add("config.json", std::vector<uint8_t>(bigger.begin(), bigger.end()));
    REQUIRE_THROWS_WITH(wf::load_model(f2), Catch::Contains("\"bert.embeddings.word_embeddings.weight\" has shape [30522, 32], expected [30523, 32]"));
    // S30: a missing tensor is named
    const std::string h = R"({"bert.embeddings.word_embeddings.weight":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    auto f3 = std::make_shared<wf::file_set>();
    f3->add("config.json", std::vector<uint8_t>(cfg.begin(), cfg.end()));
    f3->add("model.safetensors", st(h, 4));
    REQUIRE_THROWS_WITH(wf::load_model(f3), Catch::Contains("has shape [1], expected [30522, 32]"));
    // S18: an unsupported dtype for a weight is named, never reinterpreted
    const std::string hi = R"({"bert.embeddings.word_embeddings.weight":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})";
    f3->add("model.safetensors", st(hi, 8));
    REQUIRE_THROWS_WITH(wf::load_model(f3), Catch::Contains("has dtype I64, which is not supported for weights"));
    // S31: shard names must be plain file names
    for (const char* bad : {"../x.safetensors", "/etc/passwd", "https://evil/x", "a\\\\b"}) {
        INFO(bad);
        const std::string idx = std::string(R"({"weight_map":{"a":")") + bad + "\"}}";
        REQUIRE_THROWS_WITH(wf::parse_safetensors_index(idx, "model.safetensors.index.json"), Catch::Contains("not a plain file name"));
    }
    // a real sharded checkpoint: the fixture split in two shards by an index
    const auto& full = *files->get("model.safetensors");
    const auto parsed = wf::parse_safetensors(full.data(), int64_t(full.size()), "model.safetensors");
    wf::json index = {{"metadata", wf::json::object()}, {"weight_map", wf::json::object()}};
    std::string hdr[2] = {"{", "{"};
    std::vector<uint8_t> data[2];
    for (size_t i = 0; i < parsed.tensors.size(); ++i) {
        const auto& t = parsed.tensors[i];
        const int s = int(i % 2);
        const std::string shard = "model-0000" + std::to_string(s + 1) + "-of-00002.safetensors";
        index["weight_map"][t.name] = shard;
        wf::json e = {{"dtype", t.dtype_name}, {"shape", t.shape}, {"data_offsets", {data[s].size(), data[s].size() + size_t(t.n_bytes)}}};
        hdr[s] += (hdr[s].size() > 1 ? "," : "") + wf::json(t.name).dump() + ":" + e.dump();
        data[s].insert(data[s].end(), t.data, t.data + t.n_bytes);
    }
    auto sharded = wft::read_dir(wft::data_path("fixtures/bert-tiny"));
    sharded->remove("model.safetensors");
    for (int s = 0; s < 2; ++s) {
        auto b = st(hdr[s] + "}", 0);
        b.insert(b.end(), data[s].begin(), data[s].end());
        sharded->add("model-0000" + std::to_string(s + 1) + "-of-00002.safetensors", b);
    }
    const std::string idx = index.dump();
    sharded->add("model.safetensors.index.json", std::vector<uint8_t>(idx.begin(), idx.end()));
    const auto a = wf::fill_mask(wf::load_pipeline_model(sharded), "hello [MASK].", {});
    const auto b = wf::fill_mask(wf::load_pipeline_model(files), "hello [MASK].", {});
    REQUIRE(a[0][0].token == b[0][0].token);
    REQUIRE(a[0][0].score == b[0][0].score);
    sharded->remove("model-00002-of-00002.safetensors");
    REQUIRE_THROWS_WITH(wf::load_pipeline_model(sharded), Catch::Contains("names shard model-00002-of-00002.safetensors, which is missing"));
}

TEST_CASE("safetensors: NaN and infinite weights load; inference does not crash, and says so where it cannot answer", "[loaders][safetensors]") {
    // S28: accepted at load (as upstream); fill-mask gives finite scores (NaN logits count as −inf), generation
    // names the problem; the engine goes on with a clean model
    auto poisoned = [](const char* fixture, const std::string& tensor, float value) {
        auto files = wft::read_dir(wft::data_path(fixture));
        const wf::file_bytes& file = *files->get("model.safetensors");
        std::vector<uint8_t> bytes(file.begin(), file.end());
        const auto f = wf::parse_safetensors(bytes.data(), int64_t(bytes.size()), "model.safetensors");
        const wf::st_tensor* t = f.find(tensor);
        REQUIRE(t);
        const size_t at = size_t(static_cast<const uint8_t*>(t->data) - bytes.data());
        for (int64_t i = 0; i < t->n_elements; ++i) std::memcpy(bytes.data() + at + 4 * size_t(i), &value, 4);
        files->add("model.safetensors", std::move(bytes));
        return wf::load_pipeline_model(files);
    };
    for (float bad : {NAN, INFINITY}) {
        INFO("weights set to " << bad);
        const auto bert = poisoned("fixtures/bert-tiny", "cls.predictions.transform.dense.weight", bad);
        const auto res = wf::fill_mask(bert, "the capital of france is [MASK].", {.top_k = 3});
        REQUIRE(res[0].size() == 3);
        for (auto& c : res[0]) REQUIRE(std::isfinite(c.score));
        const auto gpt2 = poisoned("fixtures/gpt2-tiny", "transformer.ln_f.weight", bad);
        REQUIRE_THROWS_WITH([&] { wf::generation g(gpt2, "The dog", {}); while (g.step()) {} }(), Catch::Contains("no finite logits"));
    }
    const auto clean = wf::load_pipeline_model(wft::read_dir(wft::data_path("fixtures/gpt2-tiny")));
    wf::generation g(clean, "The dog", {});
    REQUIRE(g.step().has_value());
}

TEST_CASE("config.json: malformed, mistyped, out-of-range and contradictory fields", "[loaders][config]") {
    auto fails = [](const std::string& text, const std::string& msg) {
        INFO("config: " << text.substr(0, 80) << " expecting: " << msg);
        REQUIRE_THROWS_WITH(wf::parse_config(text), Catch::Contains(msg));
    };
    fails("", "invalid JSON");                                                                        // C1
    fails("{", "invalid JSON");
    fails("\xEF\xBB\xBF{\"model_type\": \"bert\"}", "byte order mark");  // rejected, as Python's json does
    fails("{\"model_type\": \"bert\"} x", "invalid JSON");
    fails(std::string(2 << 20, ' '), "over the limit");                                               // C2
    fails(std::string(100000, '[') + std::string(100000, ']'), "nested deeper than 64 levels");
    fails(R"({"model_type": "bert", "hidden_size": "768"})", "field \"hidden_size\" must be an integer");  // C4
    fails(R"({"model_type": "bert", "hidden_size": 768.5})", "must be an integer");
    fails(R"({"model_type": "bert", "hidden_size": true})", "must be an integer");
    fails(R"({"model_type": "bert", "num_attention_heads": 0})", "attention heads = 0 is outside");    // C5
    fails(R"({"model_type": "gpt2", "n_layer": -1})", "layer count = -1 is outside");
    fails(R"({"model_type": "bert", "hidden_size": 0})", "hidden size = 0 is outside");
    fails(R"({"model_type": "bert", "hidden_size": 770, "num_attention_heads": 12})",                 // C6
          "the hidden size (770) is not a multiple of the number of attention heads (12)");
    fails(R"({"model_type": "gpt2", "n_layer": 1000000000})", "layer count = 1000000000 is outside"); // C7
    fails(R"({"model_type": "bert", "vocab_size": 2147483648})", "vocab size = 2147483648 is outside");
    fails(R"({"model_type": "gpt2", "n_positions": 4294967296})", "position count = 4294967296 is outside");
    fails(R"({"model_type": "bert", "intermediate_size": 1099511627776})", "feed-forward size");
    fails(R"({"model_type": "bert", "layer_norm_eps": 0})", "layer norm epsilon");                    // C9
    fails(R"({"model_type": "bert", "layer_norm_eps": -1})", "layer norm epsilon");
    fails(R"({"model_type": "bert", "layer_norm_eps": 1e400})", "invalid JSON");
    fails(R"({"model_type": "bert", "layer_norm_eps": NaN})", "invalid JSON");
    fails(R"({"model_type": "bert", "hidden_act": "tanhshrink"})", "hidden_act \"tanhshrink\" is not supported"); // C10
    fails(R"({"model_type": "gpt2", "activation_function": "swiglu"})", "activation_function \"swiglu\" is not supported");
    fails(R"({"model_type": "bert", "architectures": ["GPT2LMHeadModel"]})", "contradicts architectures[0]");  // C11
    fails(R"({"hidden_size": 768})", "neither model_type nor architectures");
    fails(R"({"model_type": "bert", "n_layer": 12, "n_layer": 1000})", "duplicate key \"n_layer\"");   // C12
    fails(R"({"model_type": "bert", "type_vocab_size": 0})", "token type count = 0 is outside");        // C13
    fails(R"({"model_type": "falcon"})", "model_type \"falcon\" is not supported");
    // C3: missing fields take Hugging Face's defaults (documented)
    const wf::hparams hp = wf::parse_config(R"({"architectures": ["GPT2LMHeadModel"], "n_embd": 64, "n_head": 4})");
    REQUIRE(hp.n_ff == 256);  // n_inner null → 4·n_embd
    REQUIRE(hp.n_ctx == 1024);
    REQUIRE(wf::parse_config(R"({"model_type": "gpt2", "n_inner": null, "n_embd": 32, "n_head": 4})").n_ff == 128);
}

namespace {
// GPT-2 small's tensors (124M parameters, F32), shapes only: enough to estimate, nothing to read.
struct gpt2_small_shapes : wft::memory_source {
    gpt2_small_shapes() {
        const int64_t E = 768, V = 50257, L = 12;
        auto add = [&](std::string n, std::vector<int64_t> shape) { ts.push_back({std::move(n), "shapes", wf::dtype::f32, std::move(shape)}); };
        add("transformer.wte.weight", {V, E});
        add("transformer.wpe.weight", {1024, E});
        for (int64_t l = 0; l < L; ++l) {
            add("attn.c_attn.weight", {E, 3 * E});
            add("attn.c_proj.weight", {E, E});
            add("mlp.c_fc.weight", {E, 4 * E});
            add("mlp.c_proj.weight", {4 * E, E});
            for (int i = 0; i < 8; ++i) add("vector", {E});
        }
    }
};
}  // namespace

TEST_CASE("memory is estimated before allocating, and a model over the budget is refused cleanly", "[loaders][memory]") {
    const wf::hparams gpt2 = wf::parse_config(R"({"model_type": "gpt2"})");  // GPT-2 small defaults
    const gpt2_small_shapes src;
    const int64_t f32 = wf::estimate_memory(gpt2, wf::cap_causal_lm, src, wf::storage_plan::convert_all(wf::dtype::f32));
    const int64_t q8 = wf::estimate_memory(gpt2, wf::cap_causal_lm, src, wf::storage_plan::convert_all(wf::dtype::q8_0));
    const int64_t kept = wf::estimate_memory(gpt2, wf::cap_causal_lm, src, wf::storage_plan::keep());
    REQUIRE(f32 > int64_t(450) << 20);   // 124M parameters in f32, plus a 1024-position cache
    REQUIRE(f32 < int64_t(700) << 20);
    REQUIRE(q8 < f32 / 2);
    REQUIRE(kept < q8);  // as stored, the matrices are views into the file
    auto files = wft::read_dir(wft::data_path("fixtures/gpt2-tiny"));
    REQUIRE_THROWS_WITH(wf::load_pipeline_model(files, {wf::dtype_option::parse("f32"), 1 << 20}), Catch::Contains("over the budget of 1 MiB"));
    REQUIRE(wf::load_pipeline_model(files, {wf::dtype_option::parse("f32"), int64_t(64) << 20}).m().as_causal_lm() != nullptr);
}
