// The BERT family (BERT's heads, DistilBERT, RoBERTa, ELECTRA, a sentence-transformers folder) against the PyTorch
// reference (tools/reference/encoders.py, fixtures by make_encoder_fixtures.py): the tokenizer gives the reference's
// ids for single texts and pairs, every layer and every head within kF32 on a padded batch, and each pipeline's
// output equals the reference pipeline's (tools/reference/pipelines.py, Hugging Face's post-processing).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "helpers.h"
#include "tasks/encoder-tasks.h"
#include "core/unicode.h"
#include "formats/safetensors.h"
#include "tasks/fill-mask.h"
#include "nn/ops.h"

namespace {

constexpr double kF32 = 4e-6;  // as tests/test-models.cpp: float32 accumulation order only
// heads behind a LayerNorm of their own (ModernBERT's prediction head) amplify that rounding a little
constexpr double kHead = 1e-5;

const char* kFixtures[] = {"bert-tiny-cls",      "distilbert-tiny-multilabel", "bert-tiny-ner", "distilbert-tiny-qa",
                           "roberta-tiny-mlm",   "roberta-tiny-cls",           "electra-tiny-disc", "bert-tiny-st", "albert-tiny-cls",
                           "modernbert-tiny-mlm", "modernbert-tiny-cls",       "modernbert-tiny-ner"};

wf::json read_json(const std::string& rel) {
    std::ifstream f(wft::data_path(rel));
    std::stringstream ss;
    ss << f.rdbuf();
    return wf::json::parse(ss.str());
}

// Byte offsets → code-point offsets (the reference's are Python string indices).
int64_t code_point_index(const std::string& text, int64_t byte) { return wf::unicode::code_point_length(std::string_view(text).substr(0, size_t(byte))); }

// A fixture's golden texts, tokenized the way the reference did it (single texts and {text, text_pair}).
wf::model_input tokenize(const wf::pipeline_model& pm, const wf::json& t) {
    if (t.is_string()) return pm.tok->apply_template(pm.tok->encode_offsets(t.get<std::string>()));
    const wf::encoding a = pm.tok->encode_offsets(t["text"].get<std::string>()), b = pm.tok->encode_offsets(t["text_pair"].get<std::string>());
    return pm.tok->apply_template(a, &b);
}

}  // namespace

TEST_CASE("BERT-family encoders match the reference: ids, every layer, every head, on a padded batch", "[encoders]") {
    for (const char* name : kFixtures) {
        INFO("fixture " << name);
        const wf::pipeline_model& pm = wft::fixture_model(name);
        const wft::golden g(wft::data_path(std::string("fixtures/") + name + "/golden.safetensors"));
        const wf::json texts = read_json(std::string("fixtures/") + name + "/golden-texts.json");
        const auto ids = g.i32("input_ids"), lengths = g.i32("lengths");
        const int64_t B = int64_t(lengths.size()), T = int64_t(ids.size()) / B, E = pm.hp().n_embd;
        // the tokenizer: the reference's ids for every text (single or pair), its template included
        REQUIRE(int64_t(texts.size()) == B);
        wf::token_batch batch;
        batch.n_seq = B, batch.n_tokens = T;
        for (int64_t b = 0; b < B; ++b) {
            const wf::model_input in = tokenize(pm, texts[size_t(b)]);
            REQUIRE(int64_t(in.ids.size()) == lengths[size_t(b)]);
            REQUIRE(std::equal(in.ids.begin(), in.ids.end(), ids.begin() + b * T));
            batch.lengths.push_back(lengths[size_t(b)]);
        }
        batch.ids = ids;
        if (g.file.find("token_type_ids")) batch.types = g.i32("token_type_ids");
        // every layer of the first sequence, and the last layer of every sequence's real rows
        const wf::encoder& enc = *pm.m().as_encoder();
        std::vector<float> h(size_t(B * T * E));
        wf::forward_trace trace;
        trace.want_hidden = true;
        wf::arena scratch;
        enc.encode(batch, h.data(), scratch, &trace);
        REQUIRE(int64_t(trace.hidden.size()) == pm.hp().n_layer + 1);
        for (size_t l = 0; l < trace.hidden.size(); ++l) {
            const auto want = g.f32("hidden." + std::to_string(l));
            INFO("hidden." << l);
            REQUIRE(wft::max_abs_diff(trace.hidden[l].data(), want.data(), size_t(lengths[0] * E)) < kF32);
        }
        const auto last = g.f32("last_hidden");
        for (int64_t b = 0; b < B; ++b) REQUIRE(wft::max_abs_diff(h.data() + b * T * E, last.data() + b * T * E, size_t(lengths[size_t(b)] * E)) < kF32);

        // the head the checkpoint names
        const std::string& head = pm.hp().head;
        if (head == "sequence_classification") {
            const wf::classifier_head& c = *pm.m().head(wf::head_kind::sequence);
            std::vector<float> first(size_t(B * E)), logits(size_t(B * c.n_outputs()));
            for (int64_t b = 0; b < B; ++b) {
                if (!c.mean_pooling) {
                    std::copy_n(h.begin() + b * T * E, E, first.begin() + b * E);
                    continue;
                }
                // ModernBERT's classifier_pooling "mean": the mean of the real tokens' rows, written out here
                for (int64_t j = 0; j < E; ++j) {
                    double sum = 0;
                    for (int64_t t = 0; t < lengths[size_t(b)]; ++t) sum += h[size_t((b * T + t) * E + j)];
                    first[size_t(b * E + j)] = float(sum / double(lengths[size_t(b)]));
                }
            }
            wf::apply(c, first.data(), B, logits.data(), scratch);
            const auto want = g.f32("logits");
            REQUIRE(want.size() == logits.size());
            REQUIRE(wft::max_abs_diff(logits.data(), want.data(), want.size()) < kHead);
        } else if (head == "token_classification" || head == "pretraining" || head == "question_answering") {
            const wf::classifier_head& c = *pm.m().head(head == "question_answering" ? wf::head_kind::span : wf::head_kind::token);
            const int64_t L = c.n_outputs();
            std::vector<float> logits(size_t(B * T * L));
            wf::apply(c, h.data(), B * T, logits.data(), scratch);
            for (int64_t b = 0; b < B; ++b)
                for (int64_t t = 0; t < lengths[size_t(b)]; ++t)
                    for (int64_t j = 0; j < L; ++j) {
                        const float want = head == "question_answering" ? g.f32(j == 0 ? "start_logits" : "end_logits")[size_t(b * T + t)]
                                                                        : g.f32("logits")[size_t((b * T + t) * L + j)];
                        REQUIRE(std::fabs(logits[size_t((b * T + t) * L + j)] - want) < kHead);
                    }
        } else if (head == "masked_lm") {
            const auto pos = g.i32("mask_positions");
            const auto want = g.f32("mask_logits");
            const int64_t V = pm.hp().n_vocab;
            std::vector<float> rows, logits(size_t(int64_t(pos.size()) * V));
            for (int32_t p : pos) rows.insert(rows.end(), h.begin() + p * E, h.begin() + (p + 1) * E);
            pm.m().as_masked_lm()->mlm_logits(rows.data(), int64_t(pos.size()), logits.data(), scratch);
            REQUIRE(wft::max_abs_diff(logits.data(), want.data(), want.size()) < kHead);
        } else {
            REQUIRE(head.empty());
            REQUIRE(pm.sentence.pooling == wf::pooling::mean);  // bert-tiny-st: BertModel in a sentence-transformers folder
            REQUIRE(pm.sentence.normalize);
        }
    }
}

TEST_CASE("the last layer at the rows a task reads (batch.out_rows): those rows as the reference's, on a padded batch", "[encoders]") {
    for (const char* name : kFixtures) {
        INFO("fixture " << name);
        const wf::pipeline_model& pm = wft::fixture_model(name);
        const wft::golden g(wft::data_path(std::string("fixtures/") + name + "/golden.safetensors"));
        const auto ids = g.i32("input_ids"), lengths = g.i32("lengths");
        const int64_t B = int64_t(lengths.size()), T = int64_t(ids.size()) / B, E = pm.hp().n_embd;
        wf::token_batch batch;
        batch.n_seq = B, batch.n_tokens = T;
        batch.ids = ids;
        if (g.file.find("token_type_ids")) batch.types = g.i32("token_type_ids");
        // each sequence's first token, and where it has them its middle and last (a classifier's rows, fill-mask's)
        for (int64_t b = 0; b < B; ++b) {
            const int64_t n = lengths[size_t(b)];
            batch.lengths.push_back(n);
            for (int64_t t : {int64_t(0), n / 2, n - 1})
                if (batch.out_rows.empty() || b * T + t > batch.out_rows.back()) batch.out_rows.push_back(b * T + t);
        }
        const wf::encoder& enc = *pm.m().as_encoder();
        std::vector<float> h(size_t(B * T * E), NAN);
        wf::arena scratch;
        enc.encode(batch, h.data(), scratch);
        const auto last = g.f32("last_hidden");
        for (int64_t r : batch.out_rows) {
            INFO("row " << r);
            REQUIRE(wft::max_abs_diff(h.data() + r * E, last.data() + r * E, size_t(E)) < kF32);
        }
        // BERT's forward pass runs its last layer at those rows only: the first sequence's other rows keep the
        // states of the layer before (the reference's hidden.<L−1>)
        if (std::string(name).rfind("modernbert", 0) != 0) {
            const auto before = g.f32("hidden." + std::to_string(pm.hp().n_layer - 1));
            int64_t others = 0;
            for (int64_t t = 0; t < lengths[0]; ++t)
                if (std::find(batch.out_rows.begin(), batch.out_rows.end(), t) == batch.out_rows.end()) {
                    INFO("row " << t);
                    REQUIRE(wft::max_abs_diff(h.data() + t * E, before.data() + t * E, size_t(E)) < kF32);
                    ++others;
                }
            REQUIRE(others > 0);
        }
        // rows out of order or past the batch are named; the model stays usable
        wf::token_batch bad = batch;
        std::swap(bad.out_rows[0], bad.out_rows[1]);
        REQUIRE_THROWS_WITH(enc.encode(bad, h.data(), scratch), Catch::Contains("output row"));
        bad.out_rows = {B * T};
        REQUIRE_THROWS_WITH(enc.encode(bad, h.data(), scratch), Catch::Contains("output row"));
        batch.out_rows.clear();
        enc.encode(batch, h.data(), scratch);
        for (int64_t b = 0; b < B; ++b) REQUIRE(wft::max_abs_diff(h.data() + b * T * E, last.data() + b * T * E, size_t(lengths[size_t(b)] * E)) < kF32);
    }
}

TEST_CASE("ModernBERT: the last layer at the rows a task reads, on a local layer, equals every row computed", "[encoders]") {
    // the fixture cut to 3 layers: layer 2 is local (global every 3rd), its window ±4 narrower than the texts
    auto fs = wft::read_dir(wft::data_path("fixtures/modernbert-tiny-mlm"));
    const wf::file_bytes* cfg_bytes = fs->get("config.json");
    wf::json cfg = wf::json::parse(cfg_bytes->begin(), cfg_bytes->end());
    cfg["num_hidden_layers"] = 3;
    const std::string text = cfg.dump();
    fs->add("config.json", std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    const wf::loaded_model lm = wf::load_model(fs, {});
    REQUIRE(lm.m->hp().n_layer == 3);
    const wft::golden g(wft::data_path("fixtures/modernbert-tiny-mlm/golden.safetensors"));
    const auto ids = g.i32("input_ids"), lengths = g.i32("lengths");
    const int64_t B = int64_t(lengths.size()), T = int64_t(ids.size()) / B, E = lm.m->hp().n_embd;
    REQUIRE(lengths[0] > 2 * 4 + 1);
    wf::token_batch batch;
    batch.n_seq = B, batch.n_tokens = T;
    batch.ids = ids;
    for (int64_t b = 0; b < B; ++b) batch.lengths.push_back(lengths[size_t(b)]);
    const wf::encoder& enc = *lm.m->as_encoder();
    std::vector<float> all(size_t(B * T * E)), some(size_t(B * T * E));
    wf::arena scratch;
    enc.encode(batch, all.data(), scratch);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t : {int64_t(0), int64_t(3), int64_t(lengths[size_t(b)] / 2), int64_t(lengths[size_t(b)] - 1)})
            if (t < lengths[size_t(b)] && (batch.out_rows.empty() || b * T + t > batch.out_rows.back())) batch.out_rows.push_back(b * T + t);
    enc.encode(batch, some.data(), scratch);
    for (int64_t r : batch.out_rows) {
        INFO("row " << r);
        REQUIRE(wft::max_abs_diff(some.data() + r * E, all.data() + r * E, size_t(E)) < 1e-5);
    }
}

TEST_CASE("encoder pipelines give the reference pipelines' outputs (Hugging Face's post-processing)", "[encoders][pipelines]") {
    auto near = [](double a, double b) { return std::fabs(a - b) < 1e-5; };
    int cases = 0;
    for (const char* name : kFixtures) {
        const wf::pipeline_model& pm = wft::fixture_model(name);
        const wf::json gp = read_json(std::string("fixtures/") + name + "/golden-pipeline.json");
        const std::string task = gp["task"];
        for (const wf::json& c : gp["cases"]) {
            ++cases;
            INFO("fixture " << name << ", " << task << " " << c["inputs"].dump() << " " << c["options"].dump());
            const wf::json& in = c["inputs"];
            const wf::json& want = c["output"];
            if (task == "feature-extraction") {
                const auto out = wf::feature_extraction(pm, {in.get<std::string>()}, wf::parse_feature_extraction_options(c["options"]));
                REQUIRE(wf::json(out.dims) == want["dims"]);
                const std::vector<float> w = want["data"].get<std::vector<float>>();
                REQUIRE(wft::max_abs_diff(out.data.data(), w.data(), w.size()) < 1e-5);
            } else if (task == "text-classification") {
                const bool pair = in.is_object();
                const auto out = wf::text_classification(pm, {pair ? in["text"].get<std::string>() : in.get<std::string>()},
                                                         pair ? std::vector<std::string>{in["text_pair"].get<std::string>()} : std::vector<std::string>{},
                                                         wf::parse_text_classification_options(c["options"]))[0];
                REQUIRE(out.size() == want.size());
                for (size_t i = 0; i < out.size(); ++i) {
                    REQUIRE(out[i].label == want[i]["label"]);
                    REQUIRE(near(out[i].score, want[i]["score"]));
                }
            } else if (task == "token-classification") {
                const std::string text = in;
                const auto out = wf::token_classification(pm, {text}, wf::parse_token_classification_options(c["options"]))[0];
                REQUIRE(out.size() == want.size());
                const bool grouped = c["options"].value("aggregation_strategy", "none") != "none";
                for (size_t i = 0; i < out.size(); ++i) {
                    INFO("entity " << i);
                    REQUIRE(out[i].entity == want[i][grouped ? "entity_group" : "entity"]);
                    REQUIRE(near(out[i].score, want[i]["score"]));
                    REQUIRE(out[i].word == want[i]["word"]);
                    REQUIRE(code_point_index(text, out[i].start) == want[i]["start"]);
                    REQUIRE(code_point_index(text, out[i].end) == want[i]["end"]);
                    if (!grouped) REQUIRE(out[i].index == want[i]["index"]);
                }
            } else if (task == "question-answering") {
                const std::string context = in["context"];
                const wf::json& o = c["options"];
                auto q = wf::parse_question_answering_options(o);
                const auto out = wf::question_answering(pm, {in["question"].get<std::string>()}, {context}, q)[0];
                const wf::json w = want.is_array() ? want : wf::json::array({want});
                REQUIRE(out.size() == w.size());
                for (size_t i = 0; i < out.size(); ++i) {
                    INFO("answer " << i);
                    REQUIRE(near(out[i].score, w[i]["score"]));
                    REQUIRE(code_point_index(context, out[i].start) == w[i]["start"]);
                    REQUIRE(code_point_index(context, out[i].end) == w[i]["end"]);
                    REQUIRE(out[i].text == w[i]["answer"]);
                }
            } else if (task == "fill-mask") {
                wf::fill_mask_options o = wf::parse_fill_mask_options(c["options"]);
                const auto out = wf::fill_mask(pm, in.get<std::string>(), o)[0];
                REQUIRE(out.size() == want.size());
                for (size_t i = 0; i < out.size(); ++i) {
                    REQUIRE(out[i].token == want[i]["token"]);
                    REQUIRE(near(out[i].score, want[i]["score"]));
                    REQUIRE(out[i].token_str == want[i]["token_str"]);
                }
            } else {
                FAIL("unknown task " << task);
            }
        }
    }
    REQUIRE(cases > 60);
}

TEST_CASE("zero-shot-classification: Hugging Face's formula over an NLI head's logits on (text, hypothesis) pairs", "[encoders][pipelines]") {
    // bert-tiny-cls relabelled as an NLI model (contradiction, neutral, entailment)
    auto files = wft::read_dir(wft::data_path("fixtures/bert-tiny-cls"));
    wf::json config = wf::json::parse(files->text("config.json"));
    config["id2label"] = {{"0", "CONTRADICTION"}, {"1", "neutral"}, {"2", "Entailment"}};
    config.erase("label2id");
    const std::string edited = config.dump();
    files->add("config.json", std::vector<uint8_t>(edited.begin(), edited.end()));
    const wf::pipeline_model pm = wf::load_pipeline_model(files);
    REQUIRE(wf::supported_tasks(pm.m()) == std::vector<std::string>{"feature-extraction", "text-classification", "zero-shot-classification"});
    const std::vector<std::string> labels = {"sport", "politics", "cooking"};
    const std::string text = "The match went to extra time.";
    wf::text_classification_options raw;
    raw.function = wf::score_function::none;
    raw.top_k = 0;
    std::vector<double> entail, contra;  // each hypothesis's logits, through the text-pair path
    for (const std::string& l : labels) {
        const auto r = wf::text_classification(pm, {text}, {"This example is " + l + "."}, raw)[0];
        for (auto& x : r) {
            if (x.label == "Entailment") entail.push_back(x.score);
            if (x.label == "CONTRADICTION") contra.push_back(x.score);
        }
    }
    // across labels: softmax of the entailment logits; multi_label: each label's entailment vs contradiction
    double sum = 0;
    for (double e : entail) sum += std::exp(e);
    const auto across = wf::zero_shot_classification(pm, {text}, labels)[0];
    wf::zero_shot_options multi;
    multi.multi_label = true;
    const auto each = wf::zero_shot_classification(pm, {text}, labels, multi)[0];
    REQUIRE(across.labels.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        const size_t j = size_t(std::find(labels.begin(), labels.end(), across.labels[i]) - labels.begin());
        REQUIRE(std::fabs(across.scores[i] - std::exp(entail[j]) / sum) < 1e-6);
        const size_t k = size_t(std::find(labels.begin(), labels.end(), each.labels[i]) - labels.begin());
        REQUIRE(std::fabs(each.scores[i] - 1 / (1 + std::exp(contra[k] - entail[k]))) < 1e-6);
        if (i) REQUIRE(across.scores[i] <= across.scores[i - 1]);
    }
    REQUIRE_THROWS_WITH(wf::zero_shot_classification(wft::fixture_model("bert-tiny-cls"), {text}, labels), Catch::Contains("needs an NLI model"));
    REQUIRE_THROWS_WITH(wf::parse_zero_shot_options(wf::json{{"hypothesis_template", "no label"}}), Catch::Contains("has no {}"));
}

TEST_CASE("an embedding model as GGUF (llama.cpp's bert with pooling_type) embeds as its sentence-transformers folder", "[encoders][gguf]") {
    // tools/reference/gguf_export.py --type f16 tests/data/fixtures/bert-tiny-st → bert-tiny-st-f16.gguf (no head)
    auto files = std::make_shared<wf::file_set>();
    files->add("bert-tiny-st-f16.gguf", wft::read_file(wft::data_path("fixtures/bert-tiny-st-f16.gguf")));
    const wf::pipeline_model gguf = wf::load_pipeline_model(files);
    REQUIRE(gguf.sentence.pooling == wf::pooling::mean);
    REQUIRE(gguf.sentence.normalize);
    REQUIRE(wf::supported_tasks(gguf.m()) == std::vector<std::string>{"feature-extraction"});
    const std::vector<std::string> texts = {"This is a sentence.", "Émile's café 😀", "a"};
    const auto a = wf::feature_extraction(gguf, texts), b = wf::feature_extraction(wft::fixture_model("bert-tiny-st"), texts);
    REQUIRE(a.dims == std::vector<int64_t>{3, 16});
    REQUIRE(a.dims == b.dims);
    // f16 weights (dtype auto widens them exactly) against the f32 originals: within the weights' rounding
    REQUIRE(wft::max_abs_diff(a.data.data(), b.data.data(), a.data.size()) < 2e-3);
}

TEST_CASE("encoder tasks: hostile and degenerate inputs get clear errors or sensible answers, never a crash", "[encoders][hostile]") {
    // config.json's labels and head
    auto fails = [](const std::string& text, const std::string& msg) {
        INFO(text);
        REQUIRE_THROWS_WITH(wf::parse_config(text), Catch::Contains(msg));
    };
    const std::string base = R"({"model_type": "bert", "architectures": ["BertForSequenceClassification"], )";
    fails(base + R"("id2label": {"0": "a", "2": "b"}})", "id2label key \"2\" is not one of the ids 0 … 1");
    fails(base + R"("id2label": {"x": "a"}})", "id2label key \"x\"");
    fails(base + R"("id2label": {"0": 7}})", "id2label[\"0\"] must be a string");
    fails(base + R"("id2label": ["a"]})", "id2label must be an object");
    fails(base + R"("id2label": {"0": "a"}, "num_labels": 3})", "num_labels = 3 but id2label has 1 labels");
    fails(base + R"("problem_type": "ranking"})", "problem_type \"ranking\" is not one of");
    fails(R"({"model_type": "bert", "architectures": ["BertForNextSentencePrediction"]})", "is not supported");
    fails(R"({"model_type": "distilbert", "activation": "tanhshrink"})", "activation \"tanhshrink\" is not supported");
    fails(R"({"model_type": "roberta", "pad_token_id": 600})", "pad_token_id = 600 leaves no positions");
    // a classifier whose file has other outputs than config.json's labels
    auto files = wft::read_dir(wft::data_path("fixtures/bert-tiny-cls"));
    wf::json config = wf::json::parse(files->text("config.json"));
    config["id2label"] = {{"0", "a"}, {"1", "b"}};
    config.erase("label2id");
    std::string edited = config.dump();
    files->add("config.json", std::vector<uint8_t>(edited.begin(), edited.end()));
    REQUIRE_THROWS_WITH(wf::load_pipeline_model(files), Catch::Contains("config.json names 2 labels but the classifier has 3 outputs"));
    // sentence-transformers files
    auto st = wft::read_dir(wft::data_path("fixtures/bert-tiny-st"));
    auto with = [&](const std::string& name, const std::string& text) {
        auto f = wft::read_dir(wft::data_path("fixtures/bert-tiny-st"));
        f->add(name, std::vector<uint8_t>(text.begin(), text.end()));
        return f;
    };
    REQUIRE_THROWS_WITH(wf::load_pipeline_model(with("modules.json", "{}")), Catch::Contains("modules.json: must be a list of modules"));
    REQUIRE_THROWS_WITH(wf::load_pipeline_model(with("modules.json", R"([{"type": "sentence_transformers.models.Dense", "path": "2_Dense"}])")),
                        Catch::Contains("module type \"sentence_transformers.models.Dense\" is not supported"));
    REQUIRE_THROWS_WITH(wf::load_pipeline_model(with("1_Pooling/config.json", R"({"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": true})")),
                        Catch::Contains("exactly one pooling mode must be on"));
    REQUIRE_THROWS_WITH(wf::load_pipeline_model(with("1_Pooling/config.json", R"({"pooling_mode_lasttoken": true})")),
                        Catch::Contains("pooling_mode_lasttoken is not supported"));
    st->remove("1_Pooling/config.json");
    REQUIRE_THROWS_WITH(wf::load_pipeline_model(st), Catch::Contains("1_Pooling/config.json is missing"));

    // degenerate texts: empty, whitespace, control characters only — the template's tokens alone
    const auto& cls = wft::fixture_model("bert-tiny-cls");
    for (const std::string& t : std::vector<std::string>{"", "   \t\n", std::string("\x01\x02", 2), "\xFF\xFE"}) {
        REQUIRE(wf::text_classification(cls, {t})[0].size() == 1);
        REQUIRE(wf::token_classification(wft::fixture_model("bert-tiny-ner"), {t})[0].empty());
        REQUIRE(wf::feature_extraction(wft::fixture_model("bert-tiny-st"), {t}).dims == std::vector<int64_t>{1, 16});
    }
    REQUIRE(wf::text_classification(cls, {}).empty());
    REQUIRE_THROWS_WITH(wf::text_classification(cls, {"a", "b"}, {"c"}), Catch::Contains("1 text pairs for 2 texts"));
    // long texts are cut to the model's positions (64 here), pairs longest first
    const std::string long_text(20000, 'a');
    REQUIRE(wf::text_classification(cls, {long_text + " " + long_text})[0].size() == 1);
    REQUIRE(wf::text_classification(cls, {std::string(3000, 'b') + " x y z"}, {"short"})[0].size() == 1);
    // question answering: empty and long contexts, an empty question, a question that fills the window
    const auto& qa = wft::fixture_model("distilbert-tiny-qa");
    const auto empty = wf::question_answering(qa, {"who?"}, {""})[0];  // no context token: [CLS]'s span, scored 0 (as HF)
    REQUIRE(empty.size() == 1);
    REQUIRE(empty[0].score == 0);
    REQUIRE(empty[0].text.empty());
    wf::question_answering_options h;
    h.handle_impossible_answer = true;
    const auto none = wf::question_answering(qa, {"who?"}, {""}, h)[0];
    REQUIRE(none.size() == 1);
    REQUIRE(none[0].text.empty());
    std::string context;
    for (int i = 0; i < 400; ++i) context += "word" + std::to_string(i) + " ";
    const auto far = wf::question_answering(qa, {"which word?"}, {context})[0];  // many windows
    REQUIRE(far.size() == 1);
    REQUIRE(context.substr(size_t(far[0].start), size_t(far[0].end - far[0].start)) == far[0].text);
    REQUIRE(wf::question_answering(qa, {""}, {"Nobody."})[0].size() == 1);
    std::string long_question;
    for (int i = 0; i < 100; ++i) long_question += "who ";
    REQUIRE_THROWS_WITH(wf::question_answering(qa, {long_question}, {"x"}),
                        Catch::Contains("leaves no room for the context"));
    REQUIRE_THROWS_WITH(wf::question_answering(qa, {"a", "b"}, {"c"}), Catch::Contains("2 questions for 1 contexts"));
    REQUIRE_THROWS_WITH(wf::question_answering(cls, {"a"}, {"b"}), Catch::Contains("question-answering needs a question answering head"));
    REQUIRE_THROWS_WITH(wf::token_classification(cls, {"a"}), Catch::Contains("token-classification needs a token classification head"));
    REQUIRE_THROWS_WITH(wf::parse_question_answering_options(wf::json{{"top_k", 0}}), Catch::Contains("top_k = 0 is outside [1,"));
    REQUIRE_THROWS_WITH(wf::parse_token_classification_options(wf::json{{"aggregation_strategy", "mean"}}),
                        Catch::Contains("must be one of none, simple, first, average, max"));
    REQUIRE_THROWS_WITH(wf::parse_feature_extraction_options(wf::json{{"normalise", true}}), Catch::Contains("did you mean \"normalize\"?"));
}

TEST_CASE("text pairs are cut to the positions as Hugging Face's tokenizers cut them (longest_first, only_first)", "[encoders]") {
    const auto& pm = wft::fixture_model("bert-tiny-cls");  // 64 positions: [CLS] A [SEP] B [SEP] leaves 61
    auto words = [](int n) {
        std::string s;
        for (int i = 0; i < n; ++i) s += "word ";
        return s;
    };
    auto lengths = [&](int a, int b, wf::cut how) {
        const wf::model_input m = wf::pair_input(pm, words(a), words(b), "", how);
        REQUIRE(int64_t(m.ids.size()) <= pm.hp().max_tokens());
        return std::pair{std::count(m.sequence.begin(), m.sequence.end(), 0), std::count(m.sequence.begin(), m.sequence.end(), 1)};
    };
    REQUIRE(lengths(10, 20, wf::cut::longest_first) == std::pair<long, long>{10, 20});  // fits: untouched
    REQUIRE(lengths(10, 100, wf::cut::longest_first) == std::pair<long, long>{10, 51});  // the shorter kept whole
    REQUIRE(lengths(100, 10, wf::cut::longest_first) == std::pair<long, long>{51, 10});
    REQUIRE(lengths(40, 40, wf::cut::longest_first) == std::pair<long, long>{30, 31});   // both long: the second keeps one more
    REQUIRE(lengths(80, 45, wf::cut::longest_first) == std::pair<long, long>{31, 30});   // unequal: the longer keeps one more
    REQUIRE(lengths(35, 40, wf::cut::longest_first) == std::pair<long, long>{30, 31});
    REQUIRE(lengths(40, 35, wf::cut::longest_first) == std::pair<long, long>{31, 30});
    REQUIRE(lengths(80, 20, wf::cut::only_first) == std::pair<long, long>{41, 20});
    REQUIRE_THROWS_WITH(wf::pair_input(pm, words(5), words(70), "text 2: ", wf::cut::only_first), "text 2: the second text is 70 tokens, which leaves no room for the first");
}

TEST_CASE("ALBERT's shared layers are converted once: owned weights no larger than the file's", "[encoders]") {
    auto files = wft::read_dir(wft::data_path("fixtures/albert-tiny-cls"));
    wf::load_options opt;
    opt.dtype = wf::dtype_option::parse("f32");  // every matrix and vector an owned copy
    const wf::loaded_model lm = wf::load_model(files, opt);
    REQUIRE(lm.m->hp().n_layer == 4);
    REQUIRE(lm.m->hp().n_layer_groups == 2);
    // every tensor of the file (all F32) copied exactly once: the two groups' layers are not copied per layer
    const auto* bytes = files->get("model.safetensors");
    const wf::safetensors_file st = wf::parse_safetensors(bytes->data(), int64_t(bytes->size()), "model.safetensors");
    int64_t tensor_bytes = 0;
    for (const auto& t : st.tensors) tensor_bytes += t.n_bytes;
    REQUIRE(lm.m->weight_bytes() == tensor_bytes);
}

TEST_CASE("encoder tasks by name, as the bindings call them: offsets in bytes or in JavaScript string indices", "[encoders]") {
    REQUIRE(wf::unicode::code_point_length("a\xF0\x9F\x98\x80\xC3\xA9") == 3);  // a 😀 é
    REQUIRE(wf::unicode::utf16_length("a\xF0\x9F\x98\x80\xC3\xA9") == 4);        // 😀 is a surrogate pair
    const std::string text = "\xF0\x9F\x98\x80 Wolfgang lives in Berlin";
    std::vector<float> features;
    const wf::json in = {{"texts", {text}}}, opts = {{"aggregation_strategy", "none"}, {"ignore_labels", wf::json::array()}};
    const auto& pm = wft::fixture_model("bert-tiny-ner");
    const wf::json bytes = wf::run_encoder_task(pm, "token-classification", in, opts, false, features);
    const wf::json js = wf::run_encoder_task(pm, "token-classification", in, opts, true, features);
    const auto direct = wf::token_classification(pm, {text}, wf::parse_token_classification_options(opts))[0];
    REQUIRE(bytes["results"][0].size() == direct.size());
    for (size_t i = 0; i < direct.size(); ++i) {
        REQUIRE(bytes["results"][0][i]["start"] == direct[i].start);
        // 😀 itself is bytes [0, 4) and units [0, 2); after it, 4 bytes are 2 UTF-16 units
        REQUIRE(js["results"][0][i]["start"] == (direct[i].start == 0 ? 0 : direct[i].start - 2));
        REQUIRE(js["results"][0][i]["end"] == direct[i].end - 2);
        REQUIRE(js["results"][0][i]["entity"] == direct[i].entity);
    }
    const wf::json fe = wf::run_encoder_task(wft::fixture_model("bert-tiny-st"), "feature-extraction", {{"texts", {"a", "b c"}}}, wf::json::object(), true, features);
    REQUIRE(fe["dims"] == wf::json{2, 16});
    REQUIRE(features.size() == 32);
    REQUIRE_THROWS_WITH(wf::run_encoder_task(pm, "text-to-speech", in, opts, true, features), "unknown task \"text-to-speech\"");
    REQUIRE_THROWS_WITH(wf::run_encoder_task(pm, "token-classification", {{"texts", {1}}}, opts, true, features), Catch::Contains("texts must be a list of strings"));
}

TEST_CASE("ModernBERT's config: its fields read, bad values named, its windows and rotary bases where the layers want them", "[encoders]") {
    auto parse = [](const std::string& extra) {
        return wf::parse_config(R"({"model_type": "modernbert", "architectures": ["ModernBertForMaskedLM"], "hidden_size": 32,
                                    "num_attention_heads": 4, "num_hidden_layers": 4, "intermediate_size": 24)" + extra + "}");
    };
    const wf::hparams hp = parse("");
    REQUIRE(hp.arch == "modernbert");
    REQUIRE(hp.rope_theta == 160000.0f);       // global_rope_theta's default
    REQUIRE(hp.rope_theta_local == 10000.0f);  // local_rope_theta's
    REQUIRE(hp.sliding_window == 128);
    REQUIRE(hp.sliding_window_pattern == 3);
    REQUIRE(hp.eps == 1e-5f);
    REQUIRE(!hp.mean_pooling);
    REQUIRE(parse(R"(, "classifier_pooling": "mean")").mean_pooling);
    REQUIRE(parse(R"(, "max_position_embeddings": 1000000)").n_ctx == wf::max_context);
    REQUIRE_THROWS_WITH(parse(R"(, "classifier_pooling": "max")"), Catch::Contains("classifier_pooling \"max\" is not supported"));
    REQUIRE_THROWS_WITH(parse(R"(, "global_attn_every_n_layers": 0)"), Catch::Contains("global_attn_every_n_layers = 0"));
    REQUIRE_THROWS_WITH(parse(R"(, "local_attention": -2)"), Catch::Contains("local_attention = -2"));
    REQUIRE_THROWS_WITH(parse(R"(, "hidden_activation": "mish")"), Catch::Contains("hidden_activation \"mish\""));
    REQUIRE_THROWS_WITH(parse(R"(, "global_rope_theta": "big")"), Catch::Contains("global_rope_theta"));
    // a config that promises a layer the checkpoint lacks: the error names the tensor
    auto files = wft::read_dir(wft::data_path("fixtures/modernbert-tiny-cls"));
    auto config = wf::parse_json_strict(files->text("config.json"), "config.json", 1 << 20);
    config["num_hidden_layers"] = 5;
    const std::string text = config.dump();
    auto broken = std::make_shared<wf::file_set>();
    for (const std::string& n : files->names())
        if (n != "config.json") broken->add(n, std::vector<uint8_t>(files->get(n)->begin(), files->get(n)->end()));
    broken->add("config.json", std::vector<uint8_t>(text.begin(), text.end()));
    REQUIRE_THROWS_WITH(wf::load_model(broken), Catch::Contains("model.layers.4.attn_norm.weight"));
}

TEST_CASE("ModernBERT as GGUF (llama.cpp's modern-bert names) equals its Hugging Face folder: ids, every layer, the masked-LM head, fill-mask",
          "[encoders][gguf][modernbert]") {
    // tools/reference/gguf_export.py --type f32 tests/data/fixtures/modernbert-tiny-mlm tests/data/fixtures/modernbert-tiny-mlm.gguf
    const std::vector<uint8_t> bytes = wft::read_file(wft::data_path("fixtures/modernbert-tiny-mlm.gguf"));
    auto files = std::make_shared<wf::file_set>();
    files->add("modernbert-tiny-mlm.gguf", std::vector<uint8_t>(bytes));
    const wf::pipeline_model pm = wf::load_pipeline_model(files);
    const wf::pipeline_model& hf = wft::fixture_model("modernbert-tiny-mlm");
    REQUIRE(pm.hp().arch == "modernbert");
    REQUIRE(pm.hp().head == "masked_lm");
    REQUIRE(pm.hp().rope_theta == hf.hp().rope_theta);
    REQUIRE(pm.hp().rope_theta_local == hf.hp().rope_theta_local);
    REQUIRE(pm.hp().sliding_window == hf.hp().sliding_window);
    REQUIRE(pm.hp().sliding_window_pattern == hf.hp().sliding_window_pattern);
    REQUIRE(pm.hp().eps == hf.hp().eps);
    REQUIRE(pm.hp().n_vocab == hf.hp().n_vocab);

    const wft::golden g(wft::data_path("fixtures/modernbert-tiny-mlm/golden.safetensors"));
    const wf::json texts = read_json("fixtures/modernbert-tiny-mlm/golden-texts.json");
    const auto ids = g.i32("input_ids"), lengths = g.i32("lengths");
    const int64_t B = int64_t(lengths.size()), T = int64_t(ids.size()) / B, E = pm.hp().n_embd;
    wf::token_batch batch;
    batch.n_seq = B, batch.n_tokens = T;
    for (int64_t b = 0; b < B; ++b) {
        if (!texts[size_t(b)].is_string()) continue;  // GGUF's template is [CLS] text [SEP] (bos/eos); pairs are not compared
        const wf::model_input in = tokenize(pm, texts[size_t(b)]);
        INFO("text " << b);
        REQUIRE(int64_t(in.ids.size()) == lengths[size_t(b)]);
        REQUIRE(std::equal(in.ids.begin(), in.ids.end(), ids.begin() + b * T));
    }
    for (int64_t b = 0; b < B; ++b) batch.lengths.push_back(lengths[size_t(b)]);
    batch.ids = ids;
    std::vector<float> h(size_t(B * T * E));
    wf::forward_trace trace;
    trace.want_hidden = true;
    wf::arena scratch;
    pm.m().as_encoder()->encode(batch, h.data(), scratch, &trace);
    REQUIRE(int64_t(trace.hidden.size()) == pm.hp().n_layer + 1);
    for (size_t l = 0; l < trace.hidden.size(); ++l) {
        INFO("hidden." << l);
        REQUIRE(wft::max_abs_diff(trace.hidden[l].data(), g.f32("hidden." + std::to_string(l)).data(), size_t(lengths[0] * E)) < kF32);
    }
    const auto last = g.f32("last_hidden");
    for (int64_t b = 0; b < B; ++b) REQUIRE(wft::max_abs_diff(h.data() + b * T * E, last.data() + b * T * E, size_t(lengths[size_t(b)] * E)) < kF32);
    const auto pos = g.i32("mask_positions");
    const auto want = g.f32("mask_logits");
    std::vector<float> rows, logits(size_t(int64_t(pos.size()) * pm.hp().n_vocab));
    for (int32_t p : pos) rows.insert(rows.end(), h.begin() + p * E, h.begin() + (p + 1) * E);
    pm.m().as_masked_lm()->mlm_logits(rows.data(), int64_t(pos.size()), logits.data(), scratch);
    REQUIRE(wft::max_abs_diff(logits.data(), want.data(), want.size()) < kHead);

    // fill-mask: the reference pipeline's answers ([MASK] takes the space before it, as llama.cpp's modern-bert vocabulary)
    const wf::json golden = read_json("fixtures/modernbert-tiny-mlm/golden-pipeline.json");
    int cases = 0;
    for (const wf::json& c : golden["cases"]) {
        const auto out = wf::fill_mask(pm, c["inputs"].get<std::string>(), wf::parse_fill_mask_options(c["options"]))[0];
        const auto ref = wf::fill_mask(hf, c["inputs"].get<std::string>(), wf::parse_fill_mask_options(c["options"]))[0];
        INFO(c["inputs"].dump());
        REQUIRE(out.size() == c["output"].size());
        REQUIRE(out.size() == ref.size());
        for (size_t i = 0; i < out.size(); ++i) {
            REQUIRE(out[i].token == c["output"][i]["token"]);
            REQUIRE(out[i].token_str == c["output"][i]["token_str"]);
            REQUIRE(std::fabs(out[i].score - c["output"][i]["score"].get<double>()) < 1e-5);
            REQUIRE(std::fabs(out[i].score - ref[i].score) < 1e-6);
            REQUIRE(out[i].sequence == ref[i].sequence);
        }
        ++cases;
    }
    REQUIRE(cases > 0);

    // a file without a key llama.cpp requires: the error names it (the key renamed in place, same length)
    auto without = [&](const std::string& key, const std::string& renamed) {
        std::vector<uint8_t> b = bytes;
        const auto at = std::search(b.begin(), b.end(), key.begin(), key.end());
        REQUIRE(at != b.end());
        std::copy(renamed.begin(), renamed.end(), at);
        auto f = std::make_shared<wf::file_set>();
        f->add("broken.gguf", std::move(b));
        return f;
    };
    REQUIRE_THROWS_WITH(wf::load_model(without("modern-bert.attention.layer_norm_epsilon", "modern-bert.attention.layer_norm_epsiloX")),
                        Catch::Contains("modern-bert.attention.layer_norm_epsilon"));
    REQUIRE_THROWS_WITH(wf::load_model(without("modern-bert.block_count", "modern-bert.block_counX")), Catch::Contains("modern-bert.block_count"));
    REQUIRE_THROWS_WITH(wf::load_model(without("blk.2.ffn_up.weight", "blk.2.ffn_up.weighX")), Catch::Contains("layers.2.mlp.Wi.weight"));
    // without the decoder bias (llama.cpp's own files: no masked-LM head) it is an encoder only
    const wf::loaded_model bare = wf::load_model(without("decoder.bias", "decoder.biaX"));
    REQUIRE(bare.m->as_encoder());
    REQUIRE(!bare.m->as_masked_lm());
}

TEST_CASE("A ModernBERT classifier as GGUF (llama.cpp's cls, cls.norm, cls.output, classifier.output_labels; its rank pooling's mean) "
          "classifies as its Hugging Face folder", "[encoders][gguf][modernbert]") {
    // tools/reference/gguf_export.py --type f32 tests/data/fixtures/modernbert-tiny-cls tests/data/fixtures/modernbert-tiny-cls.gguf
    // (the folder's classifier_pooling is "mean", which is what llama.cpp's rank pooling computes for modern-bert)
    const std::vector<uint8_t> bytes = wft::read_file(wft::data_path("fixtures/modernbert-tiny-cls.gguf"));
    auto load = [](std::vector<uint8_t> b) {
        auto f = std::make_shared<wf::file_set>();
        f->add("modernbert-tiny-cls.gguf", std::move(b));
        return wf::load_pipeline_model(f);
    };
    const wf::pipeline_model pm = load(bytes);
    const wf::pipeline_model& hf = wft::fixture_model("modernbert-tiny-cls");
    REQUIRE(pm.hp().head == "sequence_classification");
    REQUIRE(pm.hp().labels == hf.hp().labels);
    REQUIRE(pm.hp().mean_pooling);
    REQUIRE(pm.m().head(wf::head_kind::sequence));
    REQUIRE(!pm.m().as_masked_lm());
    const std::vector<std::string> texts = {"Hello world! I loved this movie, it was wonderful.", "The quick brown fox, \xC3\x89mile's caf\xC3\xA9.", "a"};
    wf::text_classification_options raw;
    raw.top_k = 0;
    raw.function = wf::score_function::none;
    const auto a = wf::text_classification(pm, texts, {}, raw), b = wf::text_classification(hf, texts, {}, raw);
    for (size_t i = 0; i < texts.size(); ++i) {
        INFO(texts[i]);
        REQUIRE(a[i].size() == 3);
        for (size_t j = 0; j < 3; ++j) {
            REQUIRE(a[i][j].label == b[i][j].label);
            REQUIRE(std::fabs(a[i][j].score - b[i][j].score) < 1e-4);  // logits, f32 weights
        }
    }
    REQUIRE(wf::text_classification(pm, texts)[0][0].label == wf::text_classification(hf, texts)[0][0].label);

    auto renamed = [&](const std::string& key, const std::string& to) {  // a key or tensor renamed in place, same length
        std::vector<uint8_t> b = bytes;
        const auto at = std::search(b.begin(), b.end(), key.begin(), key.end());
        REQUIRE(at != b.end());
        std::copy(to.begin(), to.end(), at);
        return b;
    };
    // without the labels: LABEL_i, one per row of cls.output
    REQUIRE(load(renamed("modern-bert.classifier.output_labels", "modern-bert.classifier.output_labelX")).hp().labels ==
            std::vector<std::string>{"LABEL_0", "LABEL_1", "LABEL_2"});
    // without cls.output: an encoder without a task head
    const wf::pipeline_model bare = load(renamed("cls.output.weight", "cls.outpuX.weight"));
    REQUIRE(bare.hp().head.empty());
    REQUIRE(!bare.m().head(wf::head_kind::sequence));
}
