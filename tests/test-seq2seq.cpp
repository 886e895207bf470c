// Encoder–decoders (Marian, T5): the tokenizers (source.spm / target.spm / vocab.json; T5's spiece.model with its
// sentinels), every layer of the encoder and decoder, the cached decoder against the whole-prefix pass, greedy and
// beam search (num_beams, length_penalty, early_stopping, no_repeat_ngram_size, num_return_sequences, bad words,
// forced EOS) and the cross-attention weights — all against the PyTorch references (tools/reference/marian.py,
// t5.py) on random-weight models in Hugging Face's layouts (tools/reference/make_marian_fixtures.py and
// make_t5_fixtures.py: tests/data/fixtures/{marian,t5}-tiny*/expected.json).
#include <catch2/catch.hpp>

#include <set>

#include "helpers.h"
#include "nn/head-screen.h"
#include "tasks/seq2seq.h"

namespace {

struct fixture {
    wf::pipeline_model pm;
    wf::json expected;
};

const fixture& marian(const std::string& name) {
    static std::map<std::string, std::unique_ptr<fixture>> loaded;
    auto& f = loaded[name];
    if (!f) {
        // the fixtures' output layers (224–244 rows) are screened for greedy steps as a real model's 58 101 are
        // (nn/head-screen.h), where their width allows it (a multiple of 32: marian-tiny, t5-tiny)
        wf::head_screen::min_rows = 1;
        wf::head_screen::steps_before = 0;
        auto files = wft::read_dir(wft::data_path("fixtures/" + name));
        const auto bytes = wft::read_file(wft::data_path("fixtures/" + name + "/expected.json"));
        files->remove("expected.json");
        f = std::make_unique<fixture>(fixture{wf::load_pipeline_model(files), wf::json::parse(bytes.begin(), bytes.end())});
    }
    return *f;
}

using wft::flat;
using wft::rel_diff;

// Marian (post-LN, sinusoidal positions) and T5 (pre-RMS-norm, relative position buckets; v1.0's ReLU and tied,
// scaled head; flan-t5's gated GELU, own head, d_kv ≠ d_model / heads): the same tests, the same expected.json
const char* kFixtures[] = {"marian-tiny", "marian-tiny-relu", "t5-tiny", "t5-tiny-gated"};

}  // namespace

TEST_CASE("Marian's tokenizer: source.spm pieces looked up in vocab.json, </s> after, as MarianTokenizer", "[seq2seq][tokenizer]") {
    for (const char* name : kFixtures) {
        const fixture& f = marian(name);
        INFO(name);
        for (const auto& c : f.expected["tokenize"]) {
            const std::string text = c["text"];
            INFO("text: " << text);
            CHECK(f.pm.tok->encode(text, true) == c["ids"].get<std::vector<int32_t>>());
        }
        for (const auto& c : f.expected["decode"]) {
            const auto ids = c["ids"].get<std::vector<int32_t>>();
            CHECK(f.pm.tok->decode(ids, true) == c["text"].get<std::string>());
        }
    }
}

TEST_CASE("Marian's encoder and decoder: every layer and the logits equal the PyTorch reference's", "[seq2seq][models]") {
    for (const char* name : kFixtures) {
        const fixture& f = marian(name);
        INFO(name);
        const auto& fw = f.expected["forward"];
        const auto src = fw["input_ids"].get<std::vector<int32_t>>();
        const auto dec = fw["decoder_input_ids"].get<std::vector<int32_t>>();
        const wf::seq2seq_lm& lm = *f.pm.m().as_seq2seq_lm();
        const int64_t E = f.pm.hp().n_embd, V = f.pm.hp().n_vocab, T = int64_t(dec.size());

        wf::forward_trace enc_trace;
        enc_trace.want_hidden = true;
        wf::seq2seq_state st = lm.encode_source(src, T, 1, &enc_trace);
        REQUIRE(enc_trace.hidden.size() == fw["encoder_hidden_states"].size());
        for (size_t l = 0; l < enc_trace.hidden.size(); ++l) {
            INFO("encoder hidden state " << l);
            CHECK(rel_diff(enc_trace.hidden[l], flat(fw["encoder_hidden_states"][l])) < 1e-5);
        }
        // the whole target prefix in one pass
        wf::forward_trace dec_trace;
        dec_trace.want_hidden = true;
        const auto logits = lm.decode(st, dec, true, &dec_trace);
        REQUIRE(dec_trace.hidden.size() == fw["decoder_hidden_states"].size());
        for (size_t l = 0; l < dec_trace.hidden.size(); ++l) {
            INFO("decoder hidden state " << l);
            CHECK(rel_diff(dec_trace.hidden[l], flat(fw["decoder_hidden_states"][l])) < 1e-5);
        }
        const std::vector<float> want = flat(fw["logits"]);
        CHECK(rel_diff(std::vector<float>(logits.begin(), logits.end()), want) < 1e-5);

        // one token at a time through the cache: each step's logits are the whole pass's row
        wf::seq2seq_state st2 = lm.encode_source(src, T, 1);
        for (int64_t t = 0; t < T; ++t) {
            const auto row = lm.decode(st2, std::span<const int32_t>(&dec[size_t(t)], 1));
            CHECK(rel_diff(std::vector<float>(row.begin(), row.end()), std::vector<float>(want.begin() + t * V, want.begin() + (t + 1) * V)) < 1e-5);
        }
        (void)E;
    }
}

TEST_CASE("Marian generation: greedy and beam search give the reference's sequences and scores", "[seq2seq][generation]") {
    for (const char* name : kFixtures) {
        const fixture& f = marian(name);
        const wf::seq2seq_lm& lm = *f.pm.m().as_seq2seq_lm();
        int n = 0;
        for (const auto& c : f.expected["generate"]) {
            INFO(name << " case " << n++ << ": " << c["options"].dump());
            const wf::seq2seq_params p = wf::parse_seq2seq_options(c["options"], f.pm.seq2seq, "translation");
            const auto src = c["source_ids"].get<std::vector<int32_t>>();
            const auto got = wf::seq2seq_generate(lm, f.pm.hp(), src, p);
            const auto& want = c["sequences"];
            REQUIRE(got.size() == want.size());
            for (size_t k = 0; k < got.size(); ++k) {
                CHECK(got[k].ids == want[k].get<std::vector<int32_t>>());
                if (c.contains("scores") && p.num_beams > 1) CHECK(std::fabs(got[k].score - c["scores"][k].get<double>()) < 1e-4);
            }
        }
        CHECK(n >= 10);
    }
}

TEST_CASE("Greedy and beam decoding of several sources side by side give each source its own hypotheses and scores", "[seq2seq][generation]") {
    for (const char* name : kFixtures) {
        const fixture& f = marian(name);
        INFO(name);
        const wf::seq2seq_lm& lm = *f.pm.m().as_seq2seq_lm();
        // every distinct source of the fixture's cases (lengths differ), one twice
        std::vector<std::vector<int32_t>> srcs;
        for (const auto& c : f.expected["generate"]) {
            auto ids = c["source_ids"].get<std::vector<int32_t>>();
            if (std::find(srcs.begin(), srcs.end(), ids) == srcs.end()) srcs.push_back(std::move(ids));
        }
        REQUIRE(srcs.size() >= 2);
        srcs.push_back(srcs[0]);
        bool beams_ended_apart = false;
        for (const wf::json& o : {wf::json{{"max_new_tokens", 12}, {"num_beams", 1}}, wf::json{{"max_new_tokens", 20}, {"no_repeat_ngram_size", 2}, {"num_beams", 1}},
                                  wf::json{{"max_new_tokens", 12}, {"num_beams", 3}, {"num_return_sequences", 2}},
                                  wf::json{{"max_new_tokens", 16}, {"num_beams", 4}, {"early_stopping", true}, {"length_penalty", 0.6}},
                                  wf::json{{"max_new_tokens", 16}, {"num_beams", 2}, {"no_repeat_ngram_size", 2}, {"early_stopping", "never"}}}) {
            INFO(o.dump());
            const wf::seq2seq_params p = wf::parse_seq2seq_options(o, f.pm.seq2seq, "translation");
            std::vector<std::span<const int32_t>> spans(srcs.begin(), srcs.end());
            const auto batch = wf::seq2seq_batch(lm, f.pm.hp(), spans, p);
            REQUIRE(batch.size() == srcs.size());
            std::set<size_t> lengths;
            for (size_t i = 0; i < srcs.size(); ++i) {
                INFO("source " << i);
                const auto alone = wf::seq2seq_generate(lm, f.pm.hp(), srcs[i], p);
                REQUIRE(batch[i].size() == size_t(p.num_return_sequences));
                REQUIRE(alone.size() == batch[i].size());
                for (size_t k = 0; k < alone.size(); ++k) {
                    CHECK(batch[i][k].ids == alone[k].ids);
                    CHECK(batch[i][k].finish_reason == alone[k].finish_reason);
                    CHECK(std::fabs(batch[i][k].score - alone[k].score) < 1e-4);
                    lengths.insert(batch[i][k].ids.size());
                }
            }
            // some sources ended before others (EOS), and the rest went on: in every greedy setting, and in one beam
            // setting at least (most beam searches here run to max_new_tokens)
            if (p.num_beams == 1) CHECK(lengths.size() >= 2);
            else beams_ended_apart = beams_ended_apart || lengths.size() >= 2;
        }
        CHECK(beams_ended_apart);
        // the reference's own greedy sequences, where its case is plain greedy
        int compared = 0;
        for (const auto& c : f.expected["generate"]) {
            const wf::seq2seq_params p = wf::parse_seq2seq_options(c["options"], f.pm.seq2seq, "translation");
            if (p.num_beams != 1 || p.sampling.do_sample || p.num_return_sequences != 1) continue;
            const auto src = c["source_ids"].get<std::vector<int32_t>>();
            std::vector<std::span<const int32_t>> two = {srcs[1], src};
            CHECK(wf::seq2seq_batch(lm, f.pm.hp(), two, p)[1][0].ids == c["sequences"][0].get<std::vector<int32_t>>());
            ++compared;
        }
        CHECK(compared >= 1);
    }
    // the translation task batches a greedy list (any dtype) or a beam-searched one (quantized matrices) and answers
    // as one text at a time does; the engine's answers for beams at q8_0 come from the batched path only there
    const fixture& f = marian("marian-tiny");
    auto files = wft::read_dir(wft::data_path("fixtures/marian-tiny"));
    files->remove("expected.json");
    const wf::pipeline_model q8 = wf::load_pipeline_model(files, {wf::dtype_option::parse("q8_0")});
    REQUIRE(q8.loaded.quantized);  // beams side by side at q8_0; at f32 (the fixture's own) one text at a time
    REQUIRE(!f.pm.loaded.quantized);
    const std::vector<std::string> texts = {"In the beginning God created the heaven and the earth.", "And God said, Let there be light.",
                                            "Jesus wept.", "In the beginning God created the heaven and the earth.", "And the evening and the morning were the first day.",
                                            "Let there be light."};
    for (const wf::pipeline_model* pm : {&f.pm, &q8}) {
        for (const wf::json& o : {wf::json{{"max_new_tokens", 10}, {"num_beams", 1}}, wf::json{{"max_new_tokens", 10}, {"num_beams", 4}, {"num_return_sequences", 2}}}) {
            INFO(pm->loaded.dtype << " " << o.dump());
            const wf::json together = wf::run_seq2seq_task(*pm, "translation", texts, o);
            const wf::json apart = wf::run_seq2seq_task(*pm, "translation", texts, o, nullptr, false);
            REQUIRE(together["results"].size() == texts.size());
            for (size_t i = 0; i < texts.size(); ++i) {
                REQUIRE(together["results"][i].size() == apart["results"][i].size());
                for (size_t k = 0; k < apart["results"][i].size(); ++k) {
                    CHECK(together["results"][i][k]["token_ids"] == apart["results"][i][k]["token_ids"]);
                    CHECK(together["results"][i][k]["translation_text"] == apart["results"][i][k]["translation_text"]);
                }
            }
        }
    }
    CHECK_THROWS_WITH(wf::seq2seq_batch(*f.pm.m().as_seq2seq_lm(), f.pm.hp(), {}, wf::parse_seq2seq_options({{"do_sample", true}, {"num_beams", 1}}, f.pm.seq2seq, "translation")),
                      Catch::Contains("no sampling"));
}

TEST_CASE("Greedy steps without scores screen the output layer: the full logits' tokens; scores with output_scores only", "[seq2seq][generation]") {
    for (const char* name : kFixtures) {
        const fixture& f = marian(name);
        INFO(name);
        const wf::seq2seq_lm& lm = *f.pm.m().as_seq2seq_lm();
        CHECK(bool(lm.screen()) == (f.pm.hp().n_embd % 32 == 0));
        int compared = 0;
        for (const auto& c : f.expected["generate"]) {
            wf::json o = c["options"];
            const wf::seq2seq_params p = wf::parse_seq2seq_options(o, f.pm.seq2seq, "translation");
            if (p.num_beams != 1 || p.sampling.do_sample) continue;
            INFO(o.dump());
            const auto src = c["source_ids"].get<std::vector<int32_t>>();
            o["output_scores"] = false;
            const auto screened = wf::seq2seq_generate(lm, f.pm.hp(), src, wf::parse_seq2seq_options(o, f.pm.seq2seq, "translation"));
            o["output_scores"] = true;
            const auto full = wf::seq2seq_generate(lm, f.pm.hp(), src, wf::parse_seq2seq_options(o, f.pm.seq2seq, "translation"));
            REQUIRE(screened.size() == 1);
            REQUIRE(full.size() == 1);
            CHECK(screened[0].ids == full[0].ids);
            CHECK(full[0].ids == c["sequences"][0].get<std::vector<int32_t>>());
            if (lm.screen()) CHECK(screened[0].score == 0.0);  // not computed (the full layer computes it anyway)
            CHECK((full[0].score < 0.0 || full[0].ids.size() == 2));  // Σ log p of the chosen tokens (one may have p = 1)
            ++compared;
        }
        CHECK(compared >= 3);
    }
    // a fresh model makes its screen after head_screen::steps_before greedy steps in full, and keeps it
    {
        auto files = wft::read_dir(wft::data_path("fixtures/marian-tiny"));
        files->remove("expected.json");
        const wf::pipeline_model fresh = wf::load_pipeline_model(files);
        const wf::seq2seq_lm& lm = *fresh.m().as_seq2seq_lm();
        wf::head_screen::steps_before = 3;
        for (int i = 0; i < 3; ++i) CHECK_FALSE(lm.screen());
        const wf::head_screen* made = lm.screen();
        wf::head_screen::steps_before = 0;
        CHECK(made);
        CHECK(lm.screen() == made);
    }
    // the task's results: a score for beam search, and for greedy with output_scores only
    const fixture& f = marian("marian-tiny");
    const std::vector<std::string> texts = {"In the beginning God created the heaven and the earth.", "Jesus wept."};
    for (const wf::json& o : {wf::json{{"num_beams", 1}}, wf::json{{"num_beams", 1}, {"output_scores", true}}, wf::json{{"num_beams", 2}}}) {
        INFO(o.dump());
        const bool scored = o.value("output_scores", false) || o["num_beams"] != 1;
        for (const bool together : {true, false}) {
            const wf::json r = wf::run_seq2seq_task(f.pm, "translation", texts, o, nullptr, together);
            for (const auto& list : r["results"]) CHECK(list[0].contains("score") == scored);
        }
    }
}

TEST_CASE("Marian generation: each generated token's cross-attention over the source is the reference's", "[seq2seq][generation]") {
    for (const char* name : kFixtures) {
        const fixture& f = marian(name);
        INFO(name);
        const auto& ca = f.expected["cross_attention"];
        wf::seq2seq_params p = wf::parse_seq2seq_options({{"num_beams", 1}, {"output_attentions", true}, {"max_new_tokens", 12}}, f.pm.seq2seq, "translation");
        const auto src = ca["source_ids"].get<std::vector<int32_t>>();
        const auto got = wf::seq2seq_generate(*f.pm.m().as_seq2seq_lm(), f.pm.hp(), src, p);
        REQUIRE(got.size() == 1);
        CHECK(got[0].ids == ca["sequence"].get<std::vector<int32_t>>());
        REQUIRE(got[0].cross_attention.size() == ca["weights"].size());
        for (size_t t = 0; t < got[0].cross_attention.size(); ++t) {
            INFO("generated token " << t);
            CHECK(rel_diff(got[0].cross_attention[t], flat(ca["weights"][t])) < 1e-5);
        }
    }
}

TEST_CASE("translation task: texts in, transformers.js's fields out; beams and streaming agree with the core", "[seq2seq][tasks]") {
    const fixture& f = marian("marian-tiny");
    const std::vector<std::string> texts = {"In the beginning God created the heaven and the earth.", "And God said, Let there be light."};
    const wf::json r = wf::run_seq2seq_task(f.pm, "translation", texts, {{"num_beams", 3}, {"num_return_sequences", 2}, {"max_new_tokens", 8}});
    REQUIRE(r["results"].size() == 2);
    for (size_t i = 0; i < texts.size(); ++i) {
        const auto& list = r["results"][i];
        REQUIRE(list.size() == 2);
        CHECK(list[0]["score"].get<double>() >= list[1]["score"].get<double>());
        const auto ids = list[0]["token_ids"].get<std::vector<int32_t>>();
        CHECK(list[0]["translation_text"].get<std::string>() == f.pm.tok->decode(ids, true));
    }
    // text2text-generation names its field generated_text; output_attentions adds the source and target tokens
    const wf::json g = wf::run_seq2seq_task(f.pm, "text2text-generation", {texts[1]}, {{"num_beams", 1}, {"output_attentions", true}, {"max_new_tokens", 5}});
    const auto& h = g["results"][0][0];
    CHECK(h.contains("generated_text"));
    const auto& ca = h["cross_attentions"];
    CHECK(ca["source_tokens"].size() == f.pm.tok->encode(texts[1]).size());
    CHECK(ca["weights"].size() == h["token_ids"].size());
    CHECK(ca["weights"][0].size() == size_t(f.pm.hp().n_dec_layer));
}

TEST_CASE("translation: clear errors for bad options and inputs, and the model stays usable", "[seq2seq][tasks][errors]") {
    const fixture& f = marian("marian-tiny");
    const std::vector<std::string> one = {"Hello"};
    auto fails = [&](const wf::json& o, const std::string& what) {
        INFO(o.dump());
        CHECK_THROWS_WITH(wf::run_seq2seq_task(f.pm, "translation", one, o), Catch::Contains(what));
    };
    fails({{"num_beams", 2}, {"num_return_sequences", 3}}, "num_return_sequences (3) must not exceed num_beams (2)");
    fails({{"num_beams", 0}}, "num_beams = 0 is outside [1, 64]");
    fails({{"early_stopping", "sometimes"}}, "early_stopping must be true, false or \"never\"");
    fails({{"num_beam", 2}}, "did you mean \"num_beams\"");
    fails({{"max_length", 5}}, "use max_new_tokens");
    fails({{"do_sample", true}, {"num_beams", 2}}, "give num_beams: 1 to sample");
    fails({{"bad_words_ids", {1, 2}}}, "bad_words_ids must be a list of non-empty lists of token ids");
    const wf::seq2seq_lm& lm = *f.pm.m().as_seq2seq_lm();
    CHECK_THROWS_WITH(lm.encode_source(std::vector<int32_t>{0, int32_t(f.pm.hp().n_vocab)}, 4), Catch::Contains("token id " + std::to_string(f.pm.hp().n_vocab) + " is out of range"));
    CHECK_THROWS_WITH(lm.encode_source(std::vector<int32_t>(size_t(f.pm.hp().n_ctx + 1), 0), 4), Catch::Contains("the model takes at most"));
    wf::seq2seq_state st = lm.encode_source(std::vector<int32_t>{5, 0}, 2);
    lm.decode(st, std::vector<int32_t>{1});
    lm.decode(st, std::vector<int32_t>{1});
    CHECK_THROWS_WITH(lm.decode(st, std::vector<int32_t>{1}), Catch::Contains("exceed the capacity of 2"));
    // sampling is seeded: the same seed, the same translation
    const wf::json s = {{"num_beams", 1}, {"do_sample", true}, {"seed", 7}, {"max_new_tokens", 6}};
    CHECK(wf::run_seq2seq_task(f.pm, "translation", one, s) == wf::run_seq2seq_task(f.pm, "translation", one, s));
    // a causal model has no translation
    CHECK_THROWS_WITH(wf::run_seq2seq_task(wft::fixture_model("gpt2-tiny"), "translation", one, wf::json::object()),
                      Catch::Contains("needs an encoder–decoder model"));
}

TEST_CASE("Marian's config.json: what the engine does not run is refused by name", "[seq2seq][loaders][errors]") {
    auto with = [](const std::string& key, const wf::json& value) {
        auto files = wft::read_dir(wft::data_path("fixtures/marian-tiny"));
        wf::json c = wf::json::parse(files->text("config.json"));
        c[key] = value;
        const std::string text = c.dump();
        files->remove("config.json");
        files->add("config.json", std::vector<uint8_t>(text.begin(), text.end()));
        return files;
    };
    CHECK_THROWS_WITH(wf::load_pipeline_model(with("normalize_before", true)), Catch::Contains("config.json: normalize_before = true is not supported"));
    CHECK_THROWS_WITH(wf::load_pipeline_model(with("decoder_vocab_size", 7)), Catch::Contains("decoder_vocab_size 7 differs from vocab_size"));
    CHECK_THROWS_WITH(wf::load_pipeline_model(with("decoder_attention_heads", 5)), Catch::Contains("not a multiple of the number of decoder attention heads (5)"));
    CHECK_THROWS_WITH(wf::load_pipeline_model(with("scale_embedding", "yes")), Catch::Contains("config.json: scale_embedding must be true or false"));
    CHECK_THROWS_WITH(wf::load_pipeline_model(with("decoder_start_token_id", 1 << 24)), Catch::Contains("decoder_start_token_id"));
}

TEST_CASE("a translation session streams greedy tokens one step at a time; beams come whole; a cancelled step goes on", "[seq2seq][tasks]") {
    const fixture& f = marian("marian-tiny");
    const std::string text = "And God said, Let there be light.";
    const wf::json greedy = {{"num_beams", 1}, {"max_new_tokens", 10}};
    const wf::json whole = wf::run_seq2seq_task(f.pm, "translation", {text}, greedy);
    wf::seq2seq_session s(f.pm, "translation", text, greedy);
    std::vector<int32_t> streamed;
    int cancels = 0;
    const wf::cancel_fn stop_third = [&] { return ++cancels == 3; };  // the third poll cancels once
    while (!s.finished()) {
        try {
            if (auto id = s.step(&stop_third)) streamed.push_back(*id);
        } catch (const wf::cancelled&) {
        }
    }
    CHECK(cancels > 3);
    CHECK(streamed == whole["results"][0][0]["token_ids"].get<std::vector<int32_t>>());
    CHECK(s.results()[0].ids.size() == streamed.size() + 1);
    CHECK_FALSE(s.step());
    // beam search: nothing streamed, the results at the end
    const wf::json beams = {{"num_beams", 3}, {"num_return_sequences", 2}, {"max_new_tokens", 8}};
    wf::seq2seq_session b(f.pm, "translation", text, beams);
    CHECK_FALSE(b.step());
    REQUIRE(b.finished());
    const wf::json want = wf::run_seq2seq_task(f.pm, "translation", {text}, beams);
    REQUIRE(b.results().size() == 2);
    for (size_t k = 0; k < 2; ++k) CHECK(wf::seq2seq_hypothesis_json(f.pm, "translation", b.source_ids(), b.results()[k], b.params()) == want["results"][0][k]);
    CHECK_THROWS_WITH(wf::seq2seq_session(wft::fixture_model("gpt2-tiny"), "translation", text, greedy), Catch::Contains("translation needs an encoder–decoder model"));
}

TEST_CASE("hostile texts through Marian's, T5's and GPT-1's tokenizers: ids in the vocabulary, offsets in the text, no crash", "[seq2seq][tokenizer][hostile]") {
    std::vector<std::string> texts = {
        std::string("\xff\xfe\xc3", 3), std::string("a\0b", 3), "\xed\xa0\x80 lone surrogate", ">>", ">><<", ">>x<<", ">>es<<", ">>es<< >>fr<<\n>>de<<",
        "<extra_id_0>", "<extra_id_0><extra_id_0>", "</s></s><unk><pad>", "e\xcc\x81\xcc\x81\xcc\x81", "\xd8\xa7\xd9\x84\xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a\xd8\xa9",
        "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb", "\t\n\r\v\f", std::string(5000, ' '), std::string(20000, 'a'), "\xef\xbf\xbd\xef\xbb\xbf"};
    std::string sentinels;
    for (int i = 0; i < 300; ++i) sentinels += "<extra_id_" + std::to_string(i % 9) + "> x";
    texts.push_back(sentinels);
    for (const char* name : {"marian-tiny", "t5-tiny", "openai-gpt-tiny", "openai-gpt-tiny-hub"}) {
        INFO(name);
        const wf::tokenizer& tok = *wft::fixture_model(name).tok;
        for (const std::string& t : texts) {
            INFO("text of " << t.size() << " bytes");
            const auto ids = tok.encode(t, true);
            for (int32_t id : ids) REQUIRE((id >= 0 && id < tok.vocab_size()));
            const wf::encoding e = tok.encode_offsets(t);
            for (const auto& o : e.offsets) REQUIRE((o.begin >= 0 && o.begin <= o.end && o.end <= int32_t(t.size())));
            tok.decode(ids, true);
            tok.decode(ids, false);
        }
    }
}

TEST_CASE("broken Marian and GPT-1 tokenizer files are errors that name the file", "[seq2seq][tokenizer][errors]") {
    auto marian_with = [](const std::string& file, const std::string& text) {
        auto files = wft::read_dir(wft::data_path("fixtures/marian-tiny"));
        files->remove("expected.json");
        files->remove(file);
        files->add(file, std::vector<uint8_t>(text.begin(), text.end()));
        return files;
    };
    CHECK_THROWS_WITH(wf::load_pipeline_model(marian_with("vocab.json", R"({"</s>": 0, "<unk>": 5})")), Catch::Contains("vocab.json: id 5 of \"<unk>\" is outside [0, 2)"));
    CHECK_THROWS_WITH(wf::load_pipeline_model(marian_with("vocab.json", R"({"</s>": 0, "<unk>": 0})")), Catch::Contains("vocab.json: id 0 is given to two pieces"));
    CHECK_THROWS_WITH(wf::load_pipeline_model(marian_with("vocab.json", R"({"a": 0, "<unk>": 1})")), Catch::Contains("vocab.json"));
    CHECK_THROWS_WITH(wf::load_pipeline_model(marian_with("vocab.json", "[1, 2]")), Catch::Contains("vocab.json: must be a JSON object"));
    CHECK_THROWS_WITH(wf::load_pipeline_model(marian_with("target.spm", "not a protobuf")), Catch::Contains("target.spm"));
    auto gpt1_with = [](const std::string& text) {
        auto files = wft::read_dir(wft::data_path("fixtures/openai-gpt-tiny"));
        files->remove("expected.json");
        files->remove("vocab.json");
        files->add("vocab.json", std::vector<uint8_t>(text.begin(), text.end()));
        return files;
    };
    CHECK_THROWS_WITH(wf::load_pipeline_model(gpt1_with(R"({"<unk>": 0, "a</w>": 2})")), Catch::Contains("vocab.json: no token has id 1"));
    // a text longer than the model's positions: a clear error, and the model goes on
    const auto& pm = marian("marian-tiny").pm;
    std::string longer;
    for (int i = 0; i < 80; ++i) longer += "light ";
    CHECK_THROWS_WITH(wf::run_seq2seq_task(pm, "translation", {longer}, wf::json::object()), Catch::Contains("the model reads at most 64"));
    CHECK(wf::run_seq2seq_task(pm, "translation", {"light"}, {{"max_new_tokens", 2}})["results"].size() == 1);
}
