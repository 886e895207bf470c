// SentencePiece tokenizers against sentencepiece itself: tests/data/sentencepiece/ holds two models trained by
// tools/reference/make_sentencepiece_vectors.py with Debian's python3-sentencepiece 0.1.97 (a Unigram model with the
// nmt_nfkc charsmap; a BPE model with byte fallback, identity normalization and a user-defined symbol), the Unigram
// model converted to tokenizer.json as Hugging Face's converters write it, and ≥ 10,000 strings (held-out verses and
// hostile text) with the ids and byte offsets the library gives. Also llama.cpp's Llama SentencePiece vectors, the
// loaders' file selection and templates, and malformed .model files.
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

#include "gguf-builder.h"
#include "helpers.h"
#include "core/json.h"
#include "core/unicode.h"
#include "formats/gguf.h"
#include "tokenizers/load.h"
#include "tokenizers/sentencepiece.h"

namespace {

std::string bytes_of(const std::string& rel) {
    const auto b = wft::read_file(wft::data_path(rel));
    return std::string(b.begin(), b.end());
}

struct oracle_case {
    std::string text;
    std::vector<int32_t> ids[3];                   // unigram, bpe, unigram through tokenizer.json
    std::vector<wf::token_span> offsets[2];        // empty when not recorded
    bool has_offsets[2] = {false, false};
};

// "3 1:4 0": a span of 3 bytes from where the previous ended (0 at first), one of 4 bytes starting 1 byte later, …
std::vector<wf::token_span> parse_spans(const std::string& s) {
    std::vector<wf::token_span> out;
    std::istringstream in(s);
    int32_t end = 0;
    for (std::string t; in >> t;) {
        const size_t colon = t.find(':');
        const int32_t gap = colon == std::string::npos ? 0 : std::stoi(t.substr(0, colon));
        const int32_t len = std::stoi(colon == std::string::npos ? t : t.substr(colon + 1));
        out.push_back({end + gap, end + gap + len});
        end = out.back().end;
    }
    return out;
}

const std::vector<oracle_case>& oracle() {
    static const std::vector<oracle_case> cases = [] {
        std::vector<oracle_case> v;
        std::istringstream in(bytes_of("sentencepiece/vectors.jsonl"));
        for (std::string line; std::getline(in, line);) {
            const wf::json j = wf::json::parse(line);
            oracle_case c;
            if (j.contains("s")) {
                c.text = j["s"].get<std::string>();
            } else {
                const std::string hex = j["x"].get<std::string>();
                for (size_t i = 0; i + 1 < hex.size(); i += 2) c.text += char(std::stoi(hex.substr(i, 2), nullptr, 16));
            }
            const char* id_keys[] = {"u", "b"};
            const char* off_keys[] = {"uo", "bo"};
            for (int m = 0; m < 2; ++m) {
                c.ids[m] = j[id_keys[m]].get<std::vector<int32_t>>();
                if (j.contains(off_keys[m])) c.offsets[m] = parse_spans(j[off_keys[m]].get<std::string>()), c.has_offsets[m] = true;
            }
            // tokenizer.json's Strip removes trailing whitespace sentencepiece's charsmap keeps: "h" has the ids
            // sentencepiece gives the text without it, where they differ
            c.ids[2] = j.contains("h") ? j["h"].get<std::vector<int32_t>>() : c.ids[0];
            v.push_back(std::move(c));
        }
        return v;
    }();
    return cases;
}

std::unique_ptr<wf::tokenizer> unigram_model() { return wf::load_sentencepiece(bytes_of("sentencepiece/unigram.model"), "tokenizer.model"); }
std::unique_ptr<wf::tokenizer> unigram_json() { return wf::load_tokenizer_json(bytes_of("sentencepiece/unigram.tokenizer.json")); }
std::unique_ptr<wf::tokenizer> bpe_model() { return wf::load_sentencepiece(bytes_of("sentencepiece/bpe.model"), "tokenizer.model"); }

std::string shown(const std::string& s) { return wf::json(wf::unicode::utf8_encode(wf::unicode::utf8_decode(s))).dump().substr(0, 200); }

// Every oracle string through one tokenizer: ids equal to sentencepiece's, offsets too where recorded; offsets
// inside the text and non-decreasing, words numbered from 0 without going back.
void check_against_oracle(const wf::tokenizer& tok, int m, const char* name) {
    size_t same = 0, same_offsets = 0, with_offsets = 0, shown_failures = 0, shown_offsets = 0;
    for (const oracle_case& c : oracle()) {
        const wf::encoding e = tok.encode_offsets(c.text);
        const bool ok = e.ids == c.ids[m];
        same += ok;
        if (!ok && shown_failures++ < 8) {
            std::ostringstream a, b;
            for (int32_t id : e.ids) a << id << ' ';
            for (int32_t id : c.ids[m]) b << id << ' ';
            WARN(name << ": " << shown(c.text) << "\n  ours:   " << a.str() << "\n  oracle: " << b.str());
        }
        REQUIRE(e.offsets.size() == e.ids.size());
        REQUIRE(e.words.size() == e.ids.size());
        int32_t prev_begin = 0, prev_word = 0;
        for (size_t i = 0; i < e.offsets.size(); ++i) {
            const wf::token_span s = e.offsets[i];
            REQUIRE(0 <= s.begin);
            REQUIRE(s.begin <= s.end);
            REQUIRE(s.end <= int32_t(c.text.size()));
            REQUIRE(s.begin >= prev_begin);
            REQUIRE(e.words[i] >= prev_word);
            REQUIRE(e.words[i] <= prev_word + 1);
            prev_begin = s.begin, prev_word = e.words[i];
        }
        if (m < 2 && c.has_offsets[m] && ok) {  // (Hugging Face's offsets differ from sentencepiece's by design)
            ++with_offsets;
            same_offsets += e.offsets == c.offsets[m];
            if (e.offsets != c.offsets[m] && shown_offsets++ < 3) WARN(name << ": offsets differ for " << shown(c.text));
        }
    }
    WARN(name << ": ids identical on " << same << " / " << oracle().size() << " strings; offsets identical on " << same_offsets << " / "
              << with_offsets << " recorded");
    CHECK(same == oracle().size());
    CHECK(same_offsets == with_offsets);
}

}  // namespace

TEST_CASE("SentencePiece Unigram (.model) matches sentencepiece on every oracle string", "[sentencepiece]") {
    REQUIRE(oracle().size() >= 10000);
    check_against_oracle(*unigram_model(), 0, "unigram.model");
}

TEST_CASE("SentencePiece Unigram (tokenizer.json) matches sentencepiece on every oracle string", "[sentencepiece]") {
    check_against_oracle(*unigram_json(), 2, "unigram.tokenizer.json");
}

TEST_CASE("SentencePiece BPE with byte fallback (.model) matches sentencepiece on every oracle string", "[sentencepiece]") {
    check_against_oracle(*bpe_model(), 1, "bpe.model");
}

TEST_CASE("SentencePiece: decode(encode(s)) gives back the normalized text", "[sentencepiece]") {
    const auto uni = unigram_model(), bpe = bpe_model();
    const auto* u = dynamic_cast<const wf::sentencepiece_tokenizer*>(uni.get());
    REQUIRE(u);
    size_t checked = 0;
    for (const oracle_case& c : oracle()) {
        // BPE: byte fallback and the identity normalizer spell every valid UTF-8 text back exactly
        if (wf::unicode::utf8_encode(wf::unicode::utf8_decode(c.text)) == c.text) REQUIRE(bpe->decode(bpe->encode(c.text, false)) == c.text);
        // Unigram: the normalized text (▁ as spaces, without the dummy prefix) unless a character is unknown
        const auto ids = uni->encode(c.text, false);
        if (std::find(ids.begin(), ids.end(), uni->special().unk) != ids.end()) continue;
        std::string expect;
        for (char32_t ch : wf::unicode::utf8_decode(u->normalize(c.text))) wf::unicode::utf8_append(ch == 0x2581 ? U' ' : ch, expect);
        if (!expect.empty() && expect[0] == ' ') expect.erase(0, 1);
        REQUIRE(uni->decode(ids) == expect);
        ++checked;
    }
    REQUIRE(checked > 4000);  // the strings whose characters the Unigram vocabulary all has
}

TEST_CASE("SentencePiece: special tokens, user-defined symbols, byte pieces, unknowns", "[sentencepiece]") {
    const auto uni = unigram_model(), bpe = bpe_model();
    // <s> and </s> written in the text are the special tokens (as Hugging Face's tokenizers; sentencepiece spells them)
    const int32_t bos = *uni->token_id("<s>"), eos = *uni->token_id("</s>");
    auto ids = uni->encode("<s>In the beginning</s>", false);
    REQUIRE(ids.front() == bos);
    REQUIRE(ids.back() == eos);
    REQUIRE(uni->decode(ids, true) == "In the beginning");
    // the user-defined symbol is one piece wherever it is, never normalized or merged
    const int32_t br = *bpe->token_id("<br>");
    ids = bpe->encode("a<br>b", false);
    REQUIRE(std::count(ids.begin(), ids.end(), br) == 1);
    // a character outside both vocabularies: BPE spells its UTF-8 bytes, Unigram gives one <unk> for the whole run
    ids = bpe->encode("\xF0\x9F\x98\x80", false);  // 😀
    REQUIRE(ids.size() == 5);                       // ▁ and four bytes
    REQUIRE(bpe->token_bytes(ids[1]) == "\xF0");
    REQUIRE(bpe->decode(ids) == "\xF0\x9F\x98\x80");
    ids = uni->encode("\xF0\x9F\x98\x80\xF0\x9F\x98\x81", false);
    REQUIRE(std::count(ids.begin(), ids.end(), uni->special().unk) == 1);
    // long runs stay fast
    const std::string run(200000, 'a'), spaced = [] { std::string s; for (int i = 0; i < 40000; ++i) s += "the "; return s; }();
    for (const auto* t : {uni.get(), bpe.get()}) {
        REQUIRE(!t->encode(run, false).empty());
        REQUIRE(!t->encode(spaced, false).empty());
    }
}

TEST_CASE("SentencePiece loaders: file selection, XLM-R's fairseq ids, templates", "[sentencepiece]") {
    REQUIRE(wf::tokenizer_files({"config.json", "spiece.model", "tokenizer_config.json"}) == std::vector<std::string>{"spiece.model", "tokenizer_config.json"});
    REQUIRE(wf::tokenizer_files({"tokenizer.json", "tokenizer.model"}) == std::vector<std::string>{"tokenizer.json"});
    REQUIRE(wf::tokenizer_files({"sentencepiece.bpe.model"}) == std::vector<std::string>{"sentencepiece.bpe.model"});
    const auto cands = wf::tokenizer_candidates();
    for (const char* n : {"sentencepiece.bpe.model", "spiece.model", "tokenizer.model"}) REQUIRE(std::find(cands.begin(), cands.end(), n) != cands.end());

    const std::string model = bytes_of("sentencepiece/unigram.model");
    const auto plain = wf::load_sentencepiece(model, "tokenizer.model");
    const auto plain_ids = plain->encode("In the beginning God created the heaven", false);
    {  // XLM-R: <s> <pad> </s> <unk>, then the pieces one later, <mask> last; <s> A </s>, <s> A </s></s> B </s>
        wf::file_set fs;
        fs.add("sentencepiece.bpe.model", std::vector<uint8_t>(model.begin(), model.end()));
        const auto x = wf::load_tokenizer(fs);
        REQUIRE(x->vocab_size() == plain->vocab_size() + 2);
        REQUIRE(x->token(0) == "<s>");
        REQUIRE(x->token(1) == "<pad>");
        REQUIRE(x->token(2) == "</s>");
        REQUIRE(x->token(3) == "<unk>");
        REQUIRE(x->token(int32_t(x->vocab_size() - 1)) == "<mask>");
        REQUIRE(x->special().mask == int32_t(x->vocab_size() - 1));
        auto ids = x->encode("In the beginning God created the heaven");
        REQUIRE(ids.size() == plain_ids.size() + 2);
        REQUIRE(ids.front() == 0);
        REQUIRE(ids.back() == 2);
        for (size_t i = 0; i < plain_ids.size(); ++i) REQUIRE(ids[i + 1] == plain_ids[i] + 1);
        REQUIRE(x->encode("<mask>", false) == std::vector<int32_t>{int32_t(x->vocab_size() - 1)});
        const wf::encoding a = x->encode_offsets("a"), b = x->encode_offsets("b");
        const auto pair = x->apply_template(a, &b);
        REQUIRE(pair.ids.size() == 4 + x->encode("a", false).size() + x->encode("b", false).size());
    }
    {  // T5: A </s>; Llama: <s> A
        const auto t5 = wf::load_sentencepiece(model, "spiece.model");
        REQUIRE(t5->encode("In the beginning").back() == *t5->token_id("</s>"));
        REQUIRE(t5->encode("In the beginning").front() == plain_ids.front());
        REQUIRE(plain->encode("In the beginning").front() == *plain->token_id("<s>"));
    }
}

// XLM-RoBERTa's vocabulary as llama.cpp's convert_hf_to_gguf.py writes it (BertModel._xlmroberta_set_vocab, for
// XLM-R embedders and rerankers: general.architecture bert, tokenizer.ggml.model t5), here from the oracle's Unigram
// model: vocab_size = the pieces + 2 (XLM-R's <pad> and <mask>), every id first "[PADi]" of type unused, the pieces
// at their ids, then realigned as fairseq's: <s> <pad> </s> <unk>, then pieces 3 … one id later, the last dropped.
std::vector<uint8_t> xlmr_vocab_gguf(const std::function<void(wft::gguf_builder&)>& extra = {}, bool charsmap = true) {
    const wf::sentencepiece_model m = wf::parse_sentencepiece_model(bytes_of("sentencepiece/unigram.model"), "unigram.model");
    const size_t n = m.pieces.size() + 2;
    std::vector<std::string> tokens(n);
    std::vector<float> scores(n, -10000.0f);
    std::vector<int32_t> types(n, 5);
    for (size_t i = 0; i < n; ++i) tokens[i] = "[PAD" + std::to_string(i) + "]";
    for (size_t i = 0; i < m.pieces.size(); ++i) tokens[i] = m.pieces[i].text, scores[i] = m.pieces[i].score, types[i] = int32_t(m.pieces[i].type);
    std::vector<std::string> t = {"<s>", "<pad>", "</s>", "<unk>"};
    std::vector<float> sc = {0, 0, 0, 0};
    std::vector<int32_t> ty = {3, 3, 3, 2};
    t.insert(t.end(), tokens.begin() + 3, tokens.end() - 1);
    sc.insert(sc.end(), scores.begin() + 3, scores.end() - 1);
    ty.insert(ty.end(), types.begin() + 3, types.end() - 1);
    wft::gguf_builder b;
    b.str("general.architecture", "bert");
    b.str("tokenizer.ggml.model", "t5");
    b.str("tokenizer.ggml.pre", "default");
    b.strs("tokenizer.ggml.tokens", t);
    b.f32s("tokenizer.ggml.scores", sc);
    b.i32s("tokenizer.ggml.token_type", ty);
    b.boolean("tokenizer.ggml.add_space_prefix", m.add_dummy_prefix);
    b.u32("tokenizer.ggml.token_type_count", 1);
    b.boolean("tokenizer.ggml.remove_extra_whitespaces", m.remove_extra_whitespaces);
    if (charsmap) b.u8s("tokenizer.ggml.precompiled_charsmap", m.precompiled_charsmap);
    for (auto [k, id] : {std::pair{"bos", 0}, {"eos", 2}, {"unknown", 3}, {"seperator", 2}, {"padding", 1}, {"cls", 0}})
        b.u32(std::string("tokenizer.ggml.") + k + "_token_id", uint32_t(id));
    if (extra) extra(b);
    return b.bytes();
}

std::unique_ptr<wf::tokenizer> gguf_tokenizer(const std::vector<uint8_t>& bytes) {
    const wf::gguf_file g = wf::parse_gguf(bytes.data(), int64_t(bytes.size()), "xlmr-vocab.gguf");
    return wf::load_tokenizer(g, 0);
}

TEST_CASE("XLM-R's vocabulary as llama.cpp writes it (t5: Unigram, its charsmap, fairseq's ids) gives sentencepiece's pieces on every oracle string",
          "[sentencepiece][gguf]") {
    const auto tok = gguf_tokenizer(xlmr_vocab_gguf());
    // sentencepiece's id i is XLM-R's i + 1 (its <unk>, 0, is XLM-R's 3)
    auto xlmr = [](int32_t i) { return i == 0 ? 3 : i + 1; };
    size_t same = 0, same_offsets = 0, with_offsets = 0;
    for (const oracle_case& c : oracle()) {
        const wf::encoding e = tok->encode_offsets(c.text);
        std::vector<int32_t> want;
        for (int32_t i : c.ids[0]) want.push_back(xlmr(i));
        const bool ok = e.ids == want;
        same += ok;
        if (!ok && same + 8 > oracle().size()) WARN("differs: " << shown(c.text));
        if (ok && c.has_offsets[0]) ++with_offsets, same_offsets += e.offsets == c.offsets[0];
    }
    WARN("t5 GGUF vocabulary: ids identical on " << same << " / " << oracle().size() << " strings; offsets on " << same_offsets << " / " << with_offsets);
    CHECK(same == oracle().size());
    CHECK(same_offsets == with_offsets);
    // the encoder's template (<s> A </s>, <s> A </s></s> B </s>) and ids equal to the .model file's XLM-R tokenizer
    wf::file_set fs;
    const std::string model = bytes_of("sentencepiece/unigram.model");
    fs.add("sentencepiece.bpe.model", std::vector<uint8_t>(model.begin(), model.end()));
    const auto folder = wf::load_tokenizer(fs);
    for (const char* text : {"In the beginning God created the heaven and the earth.", "  Ünïcödé\tand  spaces ", "<s>a</s>", ""}) {
        INFO(text);
        REQUIRE(tok->encode(text) == folder->encode(text));
    }
    const wf::encoding a = tok->encode_offsets("a"), b = tok->encode_offsets("b");
    const auto pair = tok->apply_template(a, &b), want = folder->apply_template(folder->encode_offsets("a"), &b);
    REQUIRE(pair.ids == want.ids);
    REQUIRE(pair.ids.front() == 0);
    REQUIRE(std::count(pair.ids.begin(), pair.ids.end(), 2) == 3);
    // without the charsmap the text is not normalized (full-width letters stay what they are): the map is read
    REQUIRE(gguf_tokenizer(xlmr_vocab_gguf({}, false))->encode("\xEF\xBC\xA1", false) != tok->encode("\xEF\xBC\xA1", false));
    // a charsmap that is no byte array is an error naming the key
    REQUIRE_THROWS_WITH(gguf_tokenizer(xlmr_vocab_gguf([](wft::gguf_builder& x) { x.strs("tokenizer.ggml.precompiled_charsmap", {"x"}); }, false)),
                        Catch::Contains("tokenizer.ggml.precompiled_charsmap must be an array of UINT8 or INT8"));
}

TEST_CASE("Llama's SentencePiece vocabulary matches llama.cpp's Hugging Face test vectors", "[sentencepiece][llama]") {
    const auto bytes = wft::read_file(wft::data_path("tokenizers/llamacpp/ggml-vocab-llama-spm.gguf"));
    const wf::gguf_file g = wf::parse_gguf(bytes.data(), int64_t(bytes.size()), "ggml-vocab-llama-spm.gguf");
    const auto tok = wf::load_tokenizer(g, 0);
    const std::string inp = bytes_of("tokenizers/llamacpp/ggml-vocab-llama-spm.gguf.inp"), out = bytes_of("tokenizers/llamacpp/ggml-vocab-llama-spm.gguf.out");
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    for (size_t pos = 0, hit; (hit = inp.find(sep, pos)) != std::string::npos; pos = hit + sep.size()) texts.push_back(inp.substr(pos, hit - pos));
    REQUIRE(texts.size() == 46);
    std::istringstream lines(out);
    size_t same = 0;
    for (const std::string& text : texts) {
        std::string line;
        std::getline(lines, line);
        std::istringstream l(line);
        std::vector<int32_t> expect;
        for (int32_t id; l >> id;) expect.push_back(id);
        const auto ids = tok->encode(text, false);
        same += ids == expect;
        if (ids != expect) {
            std::ostringstream a;
            for (int32_t id : ids) a << id << ' ';
            WARN("llama-spm: " << shown(text) << "\n  ours:     " << a.str() << "\n  expected: " << line);
        }
    }
    WARN("llama-spm: " << same << " / " << texts.size() << " vectors identical");
    CHECK(same == texts.size());
    REQUIRE(tok->encode("Hello").front() == *tok->token_id("<s>"));
}

TEST_CASE("Malformed SentencePiece .model files get errors, not crashes", "[sentencepiece][errors]") {
    const std::string good = bytes_of("sentencepiece/bpe.model"), uni = bytes_of("sentencepiece/unigram.model");
    auto load = [](const std::string& b) { return wf::load_sentencepiece(b, "bad.model"); };
    using Catch::Contains;
    REQUIRE_THROWS_WITH(load(""), Contains("bad.model") && Contains("empty"));
    REQUIRE_THROWS_WITH(load(std::string(11, '\xFF')), Contains("bad.model") && Contains("varint"));
    // pieces (field 1, length-delimited) claiming 2^31 bytes, and 2^63
    REQUIRE_THROWS_WITH(load(std::string("\x0A\x80\x80\x80\x80\x08", 6) + "abc"), Contains("bad.model") && Contains("2147483648 bytes"));
    REQUIRE_THROWS_WITH(load(std::string("\x0A\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11)), Contains("bad.model") && Contains("only 0 are left"));
    REQUIRE_THROWS_WITH(load(std::string("\x0B", 1)), Contains("wire type 3"));                  // a group
    REQUIRE_THROWS_WITH(load(std::string("\x0D\x00\x00\x00\x00", 5)), Contains("pieces has wire type 5"));
    REQUIRE_THROWS_WITH(load(std::string("\x0A\x02\x18\x01", 4)), Contains("pieces[0]") && Contains("no piece text"));
    REQUIRE_THROWS_WITH(load(std::string("\x0A\x02\x10\x01", 4)), Contains("pieces[0]") && Contains("score has wire type 0"));
    // every truncation of a real model: an error naming the file, or (cut between fields) a model that still loads
    for (size_t n = 0; n < good.size(); n += (n < 400 ? 1 : 37)) {
        try {
            load(good.substr(0, n));
        } catch (const wf::error& e) {
            REQUIRE(std::string(e.what()).find("bad.model") != std::string::npos);
        }
    }
    // random byte changes, in the pieces and in the charsmap: errors or working tokenizers, never a crash
    std::mt19937 rng(7);
    for (int round = 0; round < 600; ++round) {
        std::string b = round % 2 ? good : uni;
        std::uniform_int_distribution<size_t> at(0, b.size() - 1);
        for (int k = 0; k < 1 + round % 4; ++k) b[at(rng)] = char(rng());
        try {
            const auto t = load(b);
            for (const char* s : {"In the beginning God created", "  ｶﾞ ﬁ ½ \xF0\x9F\x98\x80 x\xFFy", ""}) {
                const auto e = t->encode_offsets(s);
                for (auto sp : e.offsets) REQUIRE((0 <= sp.begin && sp.begin <= sp.end && sp.end <= int32_t(std::strlen(s))));
                (void)t->decode(e.ids);
            }
        } catch (const wf::error&) {
        }
    }
    // a charsmap whose trie size does not fit, and one shorter than its header
    REQUIRE_THROWS_WITH(wf::precompiled_charsmap(std::string("\xFF\xFF\x00\x00xxxx", 8), "cm"), Contains("cm") && Contains("trie size"));
    REQUIRE_THROWS_WITH(wf::precompiled_charsmap(std::string("\x04\x00", 2), "cm"), Contains("shorter than its header"));
}
