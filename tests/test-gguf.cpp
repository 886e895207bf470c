// GGUF: the real llama.cpp vocabulary files (written by llama.cpp's own gguf-py) through the GGUF tokenizer path,
// fixture models converted to GGUF in every supported tensor type against the safetensors path, and one
// hand-built malformed file per case class of research/security.md (G1–G36), each with its specific error.
#include <catch2/catch.hpp>
#include <functional>
#include <sstream>

#include "gguf-builder.h"
#include "helpers.h"
#include "tasks/encoder-tasks.h"
#include "tasks/fill-mask.h"
#include "tasks/generation.h"
#include "tokenizers/load.h"

namespace {

std::vector<std::pair<std::string, std::vector<int32_t>>> vectors(const std::string& name) {
    const auto i = wft::read_file(wft::data_path("tokenizers/llamacpp/" + name + ".inp"));
    const auto o = wft::read_file(wft::data_path("tokenizers/llamacpp/" + name + ".out"));
    const std::string inp(i.begin(), i.end()), out(o.begin(), o.end()), sep = "\n__ggml_vocab_test__\n";
    std::vector<std::pair<std::string, std::vector<int32_t>>> r;
    size_t pos = 0, hit, line = 0;
    while ((hit = inp.find(sep, pos)) != std::string::npos) {
        const size_t e = out.find('\n', line);
        std::istringstream ids(out.substr(line, e - line));
        line = e + 1;
        std::vector<int32_t> v;
        for (int32_t x; ids >> x;) v.push_back(x);
        r.emplace_back(inp.substr(pos, hit - pos), v);
        pos = hit + sep.size();
    }
    return r;
}

// A byte-level fixture's merges.txt as tokenizer.ggml.merges lists them (the #version line left out).
std::vector<std::string> fixture_merges(const std::string& dir) {
    const auto m = wft::read_file(wft::data_path(dir + "/merges.txt"));
    std::istringstream ms(std::string(m.begin(), m.end()));
    std::vector<std::string> merges;
    for (std::string l; std::getline(ms, l);)
        if (!l.empty() && l[0] != '#') merges.push_back(l);
    return merges;
}

// The fixture's safetensors tensors as a GGUF file with llama.cpp's names, matrices in ggml type `type` (by the
// engine's converters, which follow ggml's reference quantizers); `dequantized`: the same values stored as F32.
// `extra` adds metadata. A BERT classifier's output layer is cls.output, as llama.cpp's converter writes it; its
// pooler is dropped (llama.cpp's BertModel) unless keep_pooler (then it is cls, where llama.cpp's RoBERTa
// converter puts the classifier's dense layer: the same computation, dense then tanh).
std::vector<uint8_t> fixture_as_gguf(const std::string& dir, uint32_t type, bool dequantized = false,
                                     const std::function<void(wft::gguf_builder&)>& extra = {}, bool keep_pooler = false) {
    auto files = wft::read_dir(wft::data_path(dir));
    const wf::hparams hp = wf::parse_config(files->text("config.json"));
    wf::safetensors_source src(*files);
    const bool bert = hp.arch == "bert";
    const auto tok = wf::load_tokenizer(*files);
    wft::gguf_builder b;
    const std::string a = bert ? "bert" : "gpt2";
    b.str("general.architecture", a);
    b.u32(a + ".block_count", uint32_t(hp.n_layer));
    b.u32(a + ".context_length", uint32_t(hp.n_ctx));
    b.u32(a + ".embedding_length", uint32_t(hp.n_embd));
    b.u32(a + ".feed_forward_length", uint32_t(hp.n_ff));
    b.u32(a + ".attention.head_count", uint32_t(hp.n_head));
    b.f32(a + ".attention.layer_norm_epsilon", hp.eps);
    std::vector<std::string> tokens;
    for (int32_t i = 0; i < tok->vocab_size(); ++i) {
        std::string t = tok->token(i);
        if (bert && !(t.size() >= 2 && t.front() == '[' && t.back() == ']')) t = t.rfind("##", 0) == 0 ? t.substr(2) : "\xE2\x96\x81" + t;
        tokens.push_back(t);
    }
    b.str("tokenizer.ggml.model", a);
    b.strs("tokenizer.ggml.tokens", tokens);
    if (extra) extra(b);
    if (!bert) b.strs("tokenizer.ggml.merges", fixture_merges(dir));
    const std::vector<std::pair<std::string, std::string>> names =
        bert ? std::vector<std::pair<std::string, std::string>>{
                   {"token_embd.weight", "bert.embeddings.word_embeddings.weight"}, {"position_embd.weight", "bert.embeddings.position_embeddings.weight"},
                   {"token_types.weight", "bert.embeddings.token_type_embeddings.weight"}, {"token_embd_norm.weight", "bert.embeddings.LayerNorm.weight"},
                   {"token_embd_norm.bias", "bert.embeddings.LayerNorm.bias"}}
             : std::vector<std::pair<std::string, std::string>>{
                   {"token_embd.weight", "transformer.wte.weight"}, {"position_embd.weight", "transformer.wpe.weight"},
                   {"output_norm.weight", "transformer.ln_f.weight"}, {"output_norm.bias", "transformer.ln_f.bias"}};
    auto all = names;
    const char* bert_layer[][2] = {{"attn_q", "attention.self.query"}, {"attn_k", "attention.self.key"}, {"attn_v", "attention.self.value"},
                                   {"attn_output", "attention.output.dense"}, {"attn_output_norm", "attention.output.LayerNorm"},
                                   {"ffn_up", "intermediate.dense"}, {"ffn_down", "output.dense"}, {"layer_output_norm", "output.LayerNorm"}};
    const char* gpt_layer[][2] = {{"attn_norm", "ln_1"}, {"attn_qkv", "attn.c_attn"}, {"attn_output", "attn.c_proj"}, {"ffn_norm", "ln_2"},
                                  {"ffn_up", "mlp.c_fc"}, {"ffn_down", "mlp.c_proj"}};
    for (int64_t l = 0; l < hp.n_layer; ++l)
        for (int k = 0; k < (bert ? 8 : 6); ++k)
            for (const char* wb : {".weight", ".bias"}) {
                const auto& p = bert ? bert_layer[k] : gpt_layer[k];
                all.emplace_back("blk." + std::to_string(l) + "." + p[0] + wb,
                                 (bert ? "bert.encoder.layer." : "transformer.h.") + std::to_string(l) + "." + p[1] + wb);
            }
    if (bert && src.find("cls.predictions.bias"))
        for (const char* n : {"cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias", "cls.predictions.transform.LayerNorm.weight",
                              "cls.predictions.transform.LayerNorm.bias", "cls.predictions.bias"})
            all.emplace_back(n, n);
    if (bert && src.find("classifier.weight")) {
        all.emplace_back("cls.output.weight", "classifier.weight");
        all.emplace_back("cls.output.bias", "classifier.bias");
        if (keep_pooler) all.emplace_back("cls.weight", "bert.pooler.dense.weight"), all.emplace_back("cls.bias", "bert.pooler.dense.bias");
    }
    for (auto& [gname, hname] : all) {
        const wf::raw_tensor& t = *src.find(hname);
        // 2-D tensors in (out, in); GPT-2's Conv1D (in, out) is transposed, as llama.cpp's converter does
        int64_t rows = t.shape[0], cols = t.shape.size() > 1 ? t.shape[1] : 1;
        std::vector<float> f(size_t(rows * cols));
        std::memcpy(f.data(), t.data, f.size() * 4);
        const bool conv1d = !bert && t.shape.size() == 2 && hname.find(".h.") != std::string::npos;
        if (conv1d) {
            std::vector<float> tr(f.size());
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = 0; c < cols; ++c) tr[size_t(c * rows + r)] = f[size_t(r * cols + c)];
            f = tr;
            std::swap(rows, cols);
        }
        const bool matrix = t.shape.size() == 2;
        const std::optional<wf::dtype> dt = wf::dtype_from_ggml(type);
        const bool quantized = matrix && dt && cols % wf::traits(*dt).block == 0;
        uint32_t tt = quantized ? type : 0;
        wft::stored_matrix sm(f, matrix ? rows : 1, matrix ? cols : rows, quantized ? *dt : wf::dtype::f32);
        std::vector<uint8_t> bytes = sm.bytes;
        if (quantized && dequantized) {  // the same values, stored exactly as F32
            f.resize(size_t(rows * cols));
            for (int64_t r = 0; r < rows; ++r) wf::traits(*dt).to_f32(bytes.data() + r * wf::row_bytes(*dt, cols), f.data() + r * cols, cols);
            bytes.assign(reinterpret_cast<const uint8_t*>(f.data()), reinterpret_cast<const uint8_t*>(f.data() + f.size()));
            tt = 0;
        }
        if (matrix) b.tensor(gname, {cols, rows}, tt, bytes);
        else b.tensor(gname, {rows}, 0, bytes);
    }
    return b.bytes();
}

wf::pipeline_model load_gguf(std::vector<uint8_t> bytes, wf::load_options opt = {}) {
    auto fs = std::make_shared<wf::file_set>();
    fs->add("model.gguf", std::move(bytes));
    return wf::load_pipeline_model(fs, opt);
}

// The first n greedily generated ids after prompt.
std::vector<int32_t> greedy_ids(const wf::pipeline_model& pm, const std::string& prompt, int64_t n) {
    wf::generation_params p;
    p.max_new_tokens = n;
    wf::generation g(pm, prompt, p);
    while (g.step()) {}
    return g.ids();
}

}  // namespace

TEST_CASE("GGUF tokenizers from llama.cpp's own vocabulary files pass its test vectors", "[gguf][tokenizers]") {
    for (const char* name : {"ggml-vocab-bert-bge.gguf", "ggml-vocab-gpt-2.gguf"}) {
        INFO(name);
        const auto bytes = wft::read_file(wft::data_path(std::string("tokenizers/llamacpp/") + name));
        const wf::gguf_file g = wf::parse_gguf(bytes.data(), int64_t(bytes.size()), name);
        REQUIRE(g.version == 3);
        REQUIRE(g.tensors.empty());
        const auto tok = wf::load_tokenizer(g, 0);
        for (auto& [text, ids] : vectors(name)) {
            INFO("text: \"" << text << "\"");
            REQUIRE(tok->encode(text, false) == ids);
        }
    }
}

// Each quantized model is compared with the same model whose weights are the quantized values stored as F32: F16
// weights are widened exactly, so the two agree bit for bit; Q8_0 runs in integers on q8_0-quantized activations,
// which bounds the difference. The distance to the unquantized model is the quantization's own effect, within a
// few times what it measures, and not zero (the type was really used).
TEST_CASE("Models from GGUF equal the safetensors path (F32), and compute F16, Q8_0 and Q4_0 weights as the same values in F32", "[gguf][models]") {
    for (const char* dir : {"fixtures/bert-tiny", "fixtures/gpt2-tiny"}) {
        INFO(dir);
        const wf::pipeline_model ref = wf::load_pipeline_model(wft::read_dir(wft::data_path(dir)));
        const bool bert = ref.m().as_masked_lm() != nullptr;
        // logits at every position (so every product has more than 3 rows)
        auto logits = [&](const wf::pipeline_model& pm) {
            if (bert) {
                const auto ids = pm.tok->encode("the capital of france is [MASK].");
                const int64_t E = pm.hp().n_embd, T = int64_t(ids.size());
                wf::arena scratch;
                std::vector<float> h(size_t(T * E)), out(size_t(T * pm.hp().n_vocab));
                pm.m().as_masked_lm()->encode(wf::token_batch::one(ids), h.data(), scratch);
                pm.m().as_masked_lm()->mlm_logits(h.data(), T, out.data(), scratch);
                return out;
            }
            const auto ids = pm.tok->encode("The dog was found in a field");
            auto state = pm.m().as_causal_lm()->new_state(16);
            const auto l = pm.m().as_causal_lm()->forward(state, ids, true);
            return std::vector<float>(l.begin(), l.end());
        };
        const auto want = logits(ref);
        for (uint32_t type : {0u, 1u, 8u, 2u}) {
            INFO("ggml type " << wf::ggml_type_name(type));
            const wf::pipeline_model pm = load_gguf(fixture_as_gguf(dir, type));
            REQUIRE(pm.tok->vocab_size() == ref.tok->vocab_size());
            const auto got = logits(pm);
            REQUIRE(got.size() == want.size());
            const auto exact = logits(load_gguf(fixture_as_gguf(dir, type, true)));
            const double arith = wft::max_abs_diff(got.data(), exact.data(), got.size());
            const double quant = wft::max_abs_diff(exact.data(), want.data(), got.size());
            // measured effect of quantization on these logits: F16 0.0013, Q8_0 0.039, Q4_0 0.65
            const double quant_bound = type == 0 ? 0 : type == 1 ? 0.004 : type == 8 ? 0.1 : 1.3;
            // F32, F16: bit for bit. Q8_0 and Q4_0: the activations are quantized to q8_0 too (below 16 rows), whose
            // effect here measures 0.019–0.046 (the kernels' own bound is checked in tests/test-kernels.cpp)
            if (type < 2) REQUIRE(arith == 0);
            else REQUIRE(arith < 0.1);
            REQUIRE(quant <= quant_bound);
            if (type != 0) REQUIRE(quant > 0);
        }
    }
}

TEST_CASE("A BERT classifier as llama.cpp writes it (cls.output and its labels; the pooler as cls, or dropped) classifies as its head says",
          "[gguf][encoders]") {
    const wf::pipeline_model& hf = wft::fixture_model("bert-tiny-cls");
    const std::vector<std::string> texts = {"This film was a delight.", "\xC3\x89mile's caf\xC3\xA9 \xF0\x9F\x98\x80 was not", "a", "the the the the"};
    const std::vector<std::string> names = {"NEGATIVE", "NEUTRAL", "POSITIVE"};
    wf::text_classification_options all, raw;
    all.top_k = raw.top_k = 0;
    raw.function = wf::score_function::none;
    auto rank = [&](wft::gguf_builder& b) {
        b.strs("bert.classifier.output_labels", names);
        b.u32("bert.pooling_type", 4);  // llama.cpp's rank pooling
    };
    {  // the pooler kept (as cls: dense, tanh, then cls.output): Hugging Face's BertForSequenceClassification
        const wf::pipeline_model pm = load_gguf(fixture_as_gguf("fixtures/bert-tiny-cls", 0, false, rank, true));
        REQUIRE(pm.hp().head == "sequence_classification");
        REQUIRE(pm.hp().labels == names);
        const auto tasks = wf::supported_tasks(pm.m());
        REQUIRE(std::find(tasks.begin(), tasks.end(), "text-classification") != tasks.end());
        const auto a = wf::text_classification(pm, texts, {}, all), b = wf::text_classification(hf, texts, {}, all);
        REQUIRE(a.size() == texts.size());
        for (size_t i = 0; i < texts.size(); ++i) {
            INFO(texts[i]);
            REQUIRE(a[i].size() == 3);
            for (size_t j = 0; j < 3; ++j) {
                REQUIRE(a[i][j].label == b[i][j].label);
                REQUIRE(std::fabs(a[i][j].score - b[i][j].score) < 1e-5);
            }
        }
        // a reranker's input: query and document as a text pair (the second segment's token type 1, as Hugging Face's)
        const std::vector<std::string> queries = {"Who wrote it?", "where"}, docs = {"It was written by Moses in the desert.", "in the garden"};
        const auto p = wf::text_classification(pm, queries, docs, all), q = wf::text_classification(hf, queries, docs, all);
        for (size_t i = 0; i < queries.size(); ++i)
            for (size_t j = 0; j < 3; ++j) {
                REQUIRE(p[i][j].label == q[i][j].label);
                REQUIRE(std::fabs(p[i][j].score - q[i][j].score) < 1e-5);
            }
    }
    {  // llama.cpp's BertModel drops the pooler and writes no labels for these: LABEL_i = cls.output · h[CLS] + b
        const wf::pipeline_model pm = load_gguf(fixture_as_gguf("fixtures/bert-tiny-cls", 0));
        REQUIRE(pm.hp().labels == std::vector<std::string>{"LABEL_0", "LABEL_1", "LABEL_2"});
        wf::feature_extraction_options first;
        first.pool = wf::pooling::cls;
        first.normalize = false;
        const wf::tensor_out h = wf::feature_extraction(hf, texts, first);  // the folder's final states of [CLS]
        const int64_t E = hf.hp().n_embd;
        REQUIRE(h.dims == std::vector<int64_t>{int64_t(texts.size()), E});
        auto files = wft::read_dir(wft::data_path("fixtures/bert-tiny-cls"));
        wf::safetensors_source src(*files);
        const wf::raw_tensor &w = *src.find("classifier.weight"), &bias = *src.find("classifier.bias");
        const auto got = wf::text_classification(pm, texts, {}, raw), folder = wf::text_classification(hf, texts, {}, raw);
        double pooler_moves = 0;
        for (size_t i = 0; i < texts.size(); ++i) {
            INFO(texts[i]);
            for (const wf::label_score& ls : got[i]) {
                const int64_t c = std::stoi(ls.label.substr(6));
                float want, b;
                std::memcpy(&b, bias.data + 4 * c, 4);
                double sum = b;
                for (int64_t e = 0; e < E; ++e) {
                    std::memcpy(&want, w.data + 4 * (c * E + e), 4);
                    sum += double(want) * h.data[size_t(int64_t(i) * E + e)];
                }
                REQUIRE(std::fabs(ls.score - sum) < 1e-5);
            }
            for (size_t j = 0; j < 3; ++j) pooler_moves = std::max(pooler_moves, std::fabs(got[i][j].score - folder[i][j].score));
        }
        REQUIRE(pooler_moves > 1e-3);  // without its pooler the model computes something else: the check above can tell
    }
    // the labels and the pooling are checked
    auto fails = [&](const std::function<void(wft::gguf_builder&)>& extra, const std::string& dir, const std::string& msg) {
        INFO(msg);
        REQUIRE_THROWS_WITH(load_gguf(fixture_as_gguf(dir, 0, false, extra)), Catch::Contains(msg));
    };
    fails([](wft::gguf_builder& b) { b.strs("bert.classifier.output_labels", {"a", "b"}); }, "fixtures/bert-tiny-cls",
          "bert.classifier.output_labels names 2 labels but cls.output.weight has 3 rows");
    fails([](wft::gguf_builder& b) { b.u32("bert.classifier.output_labels", 3); }, "fixtures/bert-tiny-cls", "bert.classifier.output_labels");
    fails([](wft::gguf_builder& b) { b.u32("bert.pooling_type", 4); }, "fixtures/bert-tiny", "pooling_type = 4 (rank) but the file has no classifier");
    fails([](wft::gguf_builder& b) { b.u32("bert.pooling_type", 3); }, "fixtures/bert-tiny-cls", "pooling_type = 3 is not supported");
}

// A RoBERTa fixture as llama.cpp's convert_hf_to_gguf.py RobertaModel writes it, all F32: general.architecture bert,
// the position embeddings from padding_idx + 1 on (chopped: positions count from 0) and context_length less that
// offset, one token type, the byte-level vocabulary with pre-tokenizer "roberta-bpe", the "roberta." prefix gone,
// classifier.dense → cls and classifier.out_proj → cls.output with the labels.
std::vector<uint8_t> roberta_as_gguf(const std::string& dir) {
    auto files = wft::read_dir(wft::data_path(dir));
    const wf::hparams hp = wf::parse_config(files->text("config.json"));
    REQUIRE(hp.arch == "roberta");
    wf::safetensors_source src(*files);
    const auto tok = wf::load_tokenizer(*files);
    const int64_t offset = hp.position_offset, E = hp.n_embd;
    wft::gguf_builder b;
    const std::string a = "bert";
    b.str("general.architecture", a);
    b.u32(a + ".block_count", uint32_t(hp.n_layer));
    b.u32(a + ".context_length", uint32_t(hp.n_ctx - offset));
    b.u32(a + ".embedding_length", uint32_t(E));
    b.u32(a + ".feed_forward_length", uint32_t(hp.n_ff));
    b.u32(a + ".attention.head_count", uint32_t(hp.n_head));
    b.f32(a + ".attention.layer_norm_epsilon", hp.eps);
    b.strs(a + ".classifier.output_labels", hp.labels);
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    const wf::special_tokens& sp = tok->special();
    for (int32_t i = 0; i < tok->vocab_size(); ++i) {
        tokens.push_back(tok->token(i));
        types.push_back(i == sp.bos || i == sp.eos || i == sp.unk || i == sp.pad || i == sp.mask ? 3 : 1);
    }
    b.str("tokenizer.ggml.model", "gpt2");
    b.str("tokenizer.ggml.pre", "roberta-bpe");
    b.strs("tokenizer.ggml.tokens", tokens);
    b.i32s("tokenizer.ggml.token_type", types);
    b.strs("tokenizer.ggml.merges", fixture_merges(dir));
    for (auto [k, id] : {std::pair{"bos", sp.bos}, {"eos", sp.eos}, {"unknown", sp.unk}, {"seperator", sp.eos}, {"padding", sp.pad},
                         {"cls", sp.bos}, {"mask", sp.mask}})
        b.u32(std::string("tokenizer.ggml.") + k + "_token_id", uint32_t(id));
    auto put = [&](const std::string& gname, const std::string& hname, int64_t skip_rows = 0) {
        const wf::raw_tensor& t = *src.find(hname);
        const int64_t rows = t.shape[0] - skip_rows, cols = t.shape.size() > 1 ? t.shape[1] : 1;
        const uint8_t* p = t.data + skip_rows * cols * 4;
        const std::vector<uint8_t> bytes(p, p + rows * cols * 4);
        if (t.shape.size() == 2) b.tensor(gname, {cols, rows}, 0, bytes);
        else b.tensor(gname, {rows}, 0, bytes);
    };
    put("token_embd.weight", "roberta.embeddings.word_embeddings.weight");
    put("position_embd.weight", "roberta.embeddings.position_embeddings.weight", offset);
    put("token_types.weight", "roberta.embeddings.token_type_embeddings.weight");
    put("token_embd_norm.weight", "roberta.embeddings.LayerNorm.weight");
    put("token_embd_norm.bias", "roberta.embeddings.LayerNorm.bias");
    const char* layer[][2] = {{"attn_q", "attention.self.query"}, {"attn_k", "attention.self.key"}, {"attn_v", "attention.self.value"},
                              {"attn_output", "attention.output.dense"}, {"attn_output_norm", "attention.output.LayerNorm"},
                              {"ffn_up", "intermediate.dense"}, {"ffn_down", "output.dense"}, {"layer_output_norm", "output.LayerNorm"}};
    for (int64_t l = 0; l < hp.n_layer; ++l)
        for (const auto& [g, h] : layer)
            for (const char* wb : {".weight", ".bias"})
                put("blk." + std::to_string(l) + "." + g + wb, "roberta.encoder.layer." + std::to_string(l) + "." + h + wb);
    for (const char* wb : {".weight", ".bias"}) {
        put(std::string("cls") + wb, std::string("classifier.dense") + wb);
        put(std::string("cls.output") + wb, std::string("classifier.out_proj") + wb);
    }
    return b.bytes();
}

TEST_CASE("A RoBERTa classifier as llama.cpp writes it (bert; positions from 0; roberta-bpe; cls and cls.output) classifies as its folder",
          "[gguf][encoders]") {
    const wf::pipeline_model pm = load_gguf(roberta_as_gguf("fixtures/roberta-tiny-cls"));
    const wf::pipeline_model& hf = wft::fixture_model("roberta-tiny-cls");
    REQUIRE(pm.hp().head == "sequence_classification");
    REQUIRE(pm.hp().labels == hf.hp().labels);
    REQUIRE(pm.hp().max_tokens() == hf.hp().max_tokens());
    const std::vector<std::string> texts = {"This film was a delight.", "\xC3\x89mile's caf\xC3\xA9 \xF0\x9F\x98\x80 was not", "a <mask> b",
                                            std::string(40, 'x') + " the end"};
    for (const std::string& t : texts) REQUIRE(pm.tok->encode(t) == hf.tok->encode(t));  // <s> A </s>
    wf::text_classification_options raw;
    raw.top_k = 0;
    raw.function = wf::score_function::none;
    const std::vector<std::string> pairs = {"a second text", "and another", "", "x"};
    for (const auto& second : {std::vector<std::string>{}, pairs}) {  // single texts, then pairs (<s> A </s></s> B </s>)
        const auto a = wf::text_classification(pm, texts, second, raw), b = wf::text_classification(hf, texts, second, raw);
        for (size_t i = 0; i < texts.size(); ++i)
            for (size_t j = 0; j < a[i].size(); ++j) {
                INFO(texts[i] << " / " << (second.empty() ? "" : second[i]));
                REQUIRE(a[i][j].label == b[i][j].label);
                REQUIRE(std::fabs(a[i][j].score - b[i][j].score) < 1e-5);
            }
    }
}

TEST_CASE("Malformed GGUF files get specific errors and nothing else", "[gguf][errors]") {
    auto fails = [](std::vector<uint8_t> b, const std::string& msg) {
        INFO("expecting: " << msg);
        REQUIRE_THROWS_WITH(wf::parse_gguf(b.data(), int64_t(b.size()), "x.gguf"), Catch::Contains(msg));
    };
    auto base = [] {
        wft::gguf_builder b;
        b.str("general.architecture", "gpt2");
        return b;
    };
    auto with_header = [](uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
        wft::gguf_builder b;
        b.version = version;
        auto v = b.bytes();
        v.resize(24);  // the header alone
        std::memcpy(v.data() + 8, &n_tensors, 8);
        std::memcpy(v.data() + 16, &n_kv, 8);
        return v;
    };
    fails({'F', 'U', 'G', 'G', 3, 0, 0, 0}, "not a GGUF file (magic \\x46\\x55\\x47\\x47)");          // G1
    fails({'G', 'G', 'U', 'F', 3}, "version needs 4 bytes");                                              // G2
    fails(with_header(1, 0, 0), "version 1 is not supported");                                            // G3
    fails(with_header(0x03000000, 0, 0), "big-endian");
    fails(with_header(4, 0, 0), "version 4 is not supported");
    fails(with_header(3, ~0ull, 0), "tensor count 18446744073709551615 is over the limit");               // G4
    fails(with_header(3, 0, 1000000000ull), "metadata count 1000000000 is over the limit");              // G5
    {   // G6, G7: key / string lengths beyond the file
        auto b = with_header(3, 0, 1);
        wft::gguf_builder::put<uint64_t>(b, ~0ull);
        fails(b, "metadata key 0 of 18446744073709551615 bytes is over the limit");
        auto c = base();
        c.key("s", 8);
        wft::gguf_builder::put<uint64_t>(c.kv_bytes, 1ull << 30);
        fails(c.bytes(), "metadata \"s\" of 1073741824 bytes is over the limit");
        auto d = base();
        d.key("s", 8);
        wft::gguf_builder::put<uint64_t>(d.kv_bytes, 100000);
        fails(d.bytes(), "needs 100000 bytes");
    }
    { auto b = base(); b.str("", "x"); fails(b.bytes(), "metadata key 1 is empty"); }                   // G8
    { auto b = base(); b.str("general.architecture", "bert"); fails(b.bytes(), "duplicate metadata key \"general.architecture\""); }  // G9
    { auto b = base(); b.key("t", 13); fails(b.bytes(), "has unknown type 13"); }                       // G10
    { auto b = base(); b.key("a", 9); wft::gguf_builder::put<uint32_t>(b.kv_bytes, 9); wft::gguf_builder::put<uint64_t>(b.kv_bytes, 1);
      fails(b.bytes(), "array of arrays"); }                                                              // G11
    { auto b = base(); b.key("a", 9); wft::gguf_builder::put<uint32_t>(b.kv_bytes, 10); wft::gguf_builder::put<uint64_t>(b.kv_bytes, 1ull << 62);
      fails(b.bytes(), "over the limit"); }                                                               // G12
    { auto b = base(); b.key("a", 9); wft::gguf_builder::put<uint32_t>(b.kv_bytes, 8); wft::gguf_builder::put<uint64_t>(b.kv_bytes, 1000000);
      fails(b.bytes(), "needs 8000000 bytes"); }                                                          // G13
    { auto b = base(); b.key("flag", 7); wft::gguf_builder::put<uint8_t>(b.kv_bytes, 2); fails(b.bytes(), "BOOL with value 2"); }  // G14
    { auto b = base(); b.str("general.alignment", "32"); fails(b.bytes(), "general.alignment has type STRING, expected UINT32"); }  // G15
    { auto b = base(); b.u32("general.alignment", 13); fails(b.bytes(), "general.alignment = 13 is not a power of two"); }          // G16
    { auto b = base(); b.u32("general.alignment", 0); fails(b.bytes(), "general.alignment = 0"); }
    const std::vector<uint8_t> f32x4(16, 0);
    { auto b = base(); b.tensor(std::string(64, 'n'), {4}, 0, f32x4); fails(b.bytes(), "name of 64 bytes is over the limit of 63"); }  // G17
    { auto b = base(); b.tensor("w", {4}, 0, f32x4); b.tensor("w", {4}, 0, f32x4); fails(b.bytes(), "duplicate tensor \"w\""); }      // G18
    { auto b = base(); b.tensor("w", {1, 1, 1, 1, 4}, 0, f32x4); fails(b.bytes(), "has 5 dimensions"); }                             // G19
    { auto b = base(); b.tensor("w", {-1}, 0, f32x4); fails(b.bytes(), "negative dimension -1"); }                                   // G20
    { auto b = base(); b.tensor("w", {0}, 0, {}); REQUIRE_NOTHROW(wf::parse_gguf(b.bytes().data(), int64_t(b.bytes().size()), "z.gguf")); }
    { auto b = base(); b.tensor("w", {int64_t(1) << 40, int64_t(1) << 40}, 0, f32x4); fails(b.bytes(), "overflows"); }                // G21
    { auto b = base(); b.tensor("w", {4}, 40, f32x4); fails(b.bytes(), "unknown ggml type 40"); }                                     // G22
    { auto b = base(); b.tensor("w", {256}, 16, f32x4); fails(b.bytes(), "type IQ2_XXS, which is not supported"); }
    { auto b = base(); b.tensor("w", {33}, 8, std::vector<uint8_t>(68)); fails(b.bytes(), "33 columns, not a multiple of the Q8_0 block of 32"); }  // G23
    {   // G24: an offset that is not where the previous tensor ended
        auto b = base();
        b.tensor("a", {4}, 0, f32x4);
        b.tensor("b", {4}, 0, f32x4);
        auto v = b.bytes();
        const std::string key = "b";
        for (size_t i = 0; i + 1 < v.size(); ++i)  // the second info's offset field follows its type
            if (v[i] == 'b' && v[i - 1] == 0 && v[i - 8] == 1) {
                const uint64_t bad = 8;
                std::memcpy(v.data() + i + 1 + 4 + 8 + 4, &bad, 8);
                break;
            }
        fails(v, "is at data offset 8, expected 32");
    }
    { auto b = base(); b.tensor("w", {4}, 0, f32x4); auto v = b.bytes(); v.resize(v.size() - 17); fails(v, "is not within the file"); }  // G27: past the padding, into the data
    {   // G25: sizes whose sum overflows: two I8 tensors of 0x7FFFFFFFFFFFFFC0 elements (a type the engine does not
        // read, refused by name), then two F32 tensors of 2^61 elements, whose byte size alone overflows
        auto b = base();
        b.tensor("a", {0x7FFFFFFFFFFFFFC0}, 24, {});
        b.tensor("b", {0x7FFFFFFFFFFFFFC0}, 24, {});
        fails(b.bytes(), "type I8, which is not supported");
        auto c = base();
        c.tensor("a", {int64_t(1) << 61}, 0, {});
        c.tensor("b", {int64_t(1) << 61}, 0, {});
        fails(c.bytes(), "byte size overflows");
    }
    {   // G26: ne[0] = SIZE_MAX/4 (padding would wrap to 0), and on wasm32 ne[0] = 2^30 − 1 (4 GiB − 4 bytes)
        auto b = base();
        b.tensor("a", {int64_t(std::numeric_limits<uint64_t>::max() / 4)}, 0, {});
        fails(b.bytes(), "byte size overflows");
        auto c = base();
        c.tensor("a", {(int64_t(1) << 30) - 1}, 0, {});
        fails(c.bytes(), "(4294967292 bytes at 0) is not within the file");
    }
    {   // G28: a file whose tensors lie past 2 and 4 GiB (the header says so; the bytes are not there): the sizes and
        // offsets are 64-bit in every build, wasm32 included (this suite also runs in wasm), never wrapped
        auto b = base();
        b.tensor("a", {int64_t(1) << 29}, 0, {});  // 2 GiB
        b.tensor("b", {int64_t(1) << 29}, 0, {});  // at 2 GiB, ending at 4 GiB
        fails(b.bytes(), "(2147483648 bytes at 0) is not within the file");
        auto v = b.bytes();
        REQUIRE(v.size() < 4096);
    }
    {   // G29: typed getters name the key and the types
        auto b = base();
        b.u32("gpt2.block_count", 2);
        b.str("tokenizer.ggml.model", "gpt2");
        b.i32s("tokenizer.ggml.tokens", {1, 2});
        const auto v = b.bytes();
        const wf::gguf_file g = wf::parse_gguf(v.data(), int64_t(v.size()), "t.gguf");
        REQUIRE_THROWS_WITH(g.get_string("gpt2.block_count"), Catch::Contains("\"gpt2.block_count\" has type UINT32, expected STRING"));
        REQUIRE_THROWS_WITH(g.get_strings("tokenizer.ggml.tokens"), Catch::Contains("has type INT32, expected an array of STRING"));
        REQUIRE_THROWS_WITH(g.get_uint("missing.key"), Catch::Contains("missing metadata \"missing.key\""));
    }
    {   // G30, G31: tokenizer arrays of different lengths; special ids out of range
        auto b = base();
        b.str("tokenizer.ggml.model", "bert");
        b.strs("tokenizer.ggml.tokens", {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"});
        b.i32s("tokenizer.ggml.token_type", {1, 1});
        auto v = b.bytes();
        REQUIRE_THROWS_WITH(wf::load_tokenizer(wf::parse_gguf(v.data(), int64_t(v.size()), "t.gguf"), 0), Catch::Contains("token_type has 2 entries"));
        auto c = base();
        c.str("tokenizer.ggml.model", "bert");
        c.strs("tokenizer.ggml.tokens", {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"});
        c.u32("tokenizer.ggml.mask_token_id", 5);
        v = c.bytes();
        REQUIRE_THROWS_WITH(wf::load_tokenizer(wf::parse_gguf(v.data(), int64_t(v.size()), "t.gguf"), 0), Catch::Contains("mask_token_id = 5 is not a token id"));
    }
    {   // G33: byte-token spellings llama.cpp parses (<0x-1>, <0xZZ>, <0x100>) are plain strings to a GPT-2 vocabulary
        // — never parsed as bytes — and a vocabulary that would parse them (SentencePiece, "llama") is refused by name
        auto b = base();
        b.str("tokenizer.ggml.model", "gpt2");
        std::vector<std::string> tokens;  // GPT-2's 256 byte tokens (bytes as printable characters), then the three
        for (int c = 0, n = 0; c < 256; ++c) {
            const bool printable = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174;
            const uint32_t u = printable ? uint32_t(c) : uint32_t(256 + n++);
            tokens.push_back(u < 0x80 ? std::string(1, char(u)) : std::string{char(0xC0 | (u >> 6)), char(0x80 | (u & 0x3F))});
        }
        for (const char* t : {"<0x-1>", "<0xZZ>", "<0x100>"}) tokens.push_back(t);
        b.strs("tokenizer.ggml.tokens", tokens);
        b.strs("tokenizer.ggml.merges", {});
        auto v = b.bytes();
        const auto tok = wf::load_tokenizer(wf::parse_gguf(v.data(), int64_t(v.size()), "t.gguf"), 0);
        REQUIRE(tok->decode({256, 257, 258}) == "<0x-1><0xZZ><0x100>");
        auto l = base();
        l.str("tokenizer.ggml.model", "llama");
        l.strs("tokenizer.ggml.tokens", {"<0x-1>", "<0xZZ>", "<0x100>"});
        v = l.bytes();
        REQUIRE_THROWS_WITH(wf::load_tokenizer(wf::parse_gguf(v.data(), int64_t(v.size()), "t.gguf"), 0), Catch::Contains("\"llama\""));
    }
    {   // G34, G35: a precompiled_charsmap blob whose inner length claims more than it holds, and a chat template
        // (Jinja that would run ~10^18 steps if evaluated): neither is read — the model loads and computes as without
        const auto hostile = fixture_as_gguf("fixtures/gpt2-tiny", 8, false, [](wft::gguf_builder& b) {
            b.key("tokenizer.ggml.precompiled_charsmap", 9);
            wft::gguf_builder::put<uint32_t>(b.kv_bytes, 0);  // an array of UINT8
            wft::gguf_builder::put<uint64_t>(b.kv_bytes, 8);
            for (uint8_t x : {0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4}) wft::gguf_builder::put<uint8_t>(b.kv_bytes, x);  // inner length 2^31 − 1
            b.str("tokenizer.chat_template", "{% for i in range(999999999) %}{% for j in range(999999999) %}x{% endfor %}{% endfor %}");
        });
        REQUIRE(greedy_ids(load_gguf(hostile), "The dog", 6) == greedy_ids(load_gguf(fixture_as_gguf("fixtures/gpt2-tiny", 8)), "The dog", 6));
    }
    {   // G32, G36: hyper-parameters against caps; unknown architecture
        auto bytes = fixture_as_gguf("fixtures/gpt2-tiny", 8);
        auto patch = [&](const std::string& key, uint32_t value) {
            auto v = bytes;
            for (size_t i = 0; i + key.size() < v.size(); ++i)
                if (std::memcmp(v.data() + i, key.data(), key.size()) == 0 && v[i - 8] == key.size()) {
                    std::memcpy(v.data() + i + key.size() + 4, &value, 4);
                    break;
                }
            return v;
        };
        REQUIRE_THROWS_WITH(load_gguf(patch("gpt2.block_count", 0)), Catch::Contains("layer count = 0 is outside"));
        REQUIRE_THROWS_WITH(load_gguf(patch("gpt2.block_count", 513)), Catch::Contains("layer count = 513 is outside"));
        REQUIRE_THROWS_WITH(load_gguf(patch("gpt2.block_count", 4)), Catch::Contains("missing tensor"));
        REQUIRE_THROWS_WITH(load_gguf(patch("gpt2.embedding_length", 0)), Catch::Contains("hidden size = 0"));
        wft::gguf_builder l;
        l.str("general.architecture", "falcon");
        REQUIRE_THROWS_WITH(load_gguf(l.bytes()), Catch::Contains("architecture \"falcon\" is not supported"));
    }
    // after all that, a good file still loads
    REQUIRE(load_gguf(fixture_as_gguf("fixtures/bert-tiny", 8)).m().as_masked_lm() != nullptr);
}

TEST_CASE("GGUF files written by the Python exporter (tools/reference/gguf_export.py) load and agree", "[gguf][models]") {
    for (auto [gguf, dir] : {std::pair{"fixtures/bert-tiny-q8_0.gguf", "fixtures/bert-tiny"}, {"fixtures/gpt2-tiny-q8_0.gguf", "fixtures/gpt2-tiny"}}) {
        INFO(gguf);
        const wf::pipeline_model ref = wf::load_pipeline_model(wft::read_dir(wft::data_path(dir)), {wf::dtype_option::parse("q8_0")});
        const wf::pipeline_model pm = load_gguf(wft::read_file(wft::data_path(gguf)));
        REQUIRE(pm.tok->vocab_size() == ref.tok->vocab_size());
        REQUIRE(pm.tok->encode("Héllo, wörld! [MASK] 123") == ref.tok->encode("Héllo, wörld! [MASK] 123"));
        if (ref.m().as_masked_lm()) {
            const auto a = wf::fill_mask(ref, "the capital of france is [MASK].", {.top_k = 3});
            const auto b = wf::fill_mask(pm, "the capital of france is [MASK].", {.top_k = 3});
            // the exporter's Q8_0 (its original rounding, ties to even) differs from the engine's (ggml's, ties away
            // from zero) in about 0.2 % of blocks by one step: the same ids and words, scores within 1e-5 relative
            // (measured 7e-8)
            for (size_t i = 0; i < 3; ++i) {
                REQUIRE(b[0][i].token == a[0][i].token);
                REQUIRE(b[0][i].token_str == a[0][i].token_str);
                REQUIRE(b[0][i].score == Approx(a[0][i].score).epsilon(1e-5));
            }
        } else {
            REQUIRE(greedy_ids(ref, "The dog", 8) == greedy_ids(pm, "The dog", 8));
        }
    }
}
