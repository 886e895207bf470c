// Tokenizers against published golden ids: llama.cpp's 46 + 46 test vectors (ids from Hugging Face tokenizers),
// transformers.js's bert-base-uncased goldens, and properties on random text (round trips, id bounds).
#include <catch2/catch.hpp>
#include <random>
#include <sstream>

#include "helpers.h"
#include "core/json.h"
#include "core/unicode.h"
#include "tokenizers/bpe.h"
#include "tokenizers/load.h"

namespace {

std::string text_of(const std::string& rel) {
    const auto b = wft::read_file(wft::data_path(rel));
    return std::string(b.begin(), b.end());
}

std::unique_ptr<wf::tokenizer> bert_uncased() { return wf::load_vocab_txt(text_of("tokenizers/bert/vocab.txt"), {}); }
std::unique_ptr<wf::tokenizer> gpt2() {
    return wf::load_gpt2_files(text_of("tokenizers/gpt2/encoder.json"), text_of("tokenizers/gpt2/vocab.bpe"));
}

// llama.cpp's format: strings separated by "\n__ggml_vocab_test__\n"; one line of ids per string.
std::vector<std::pair<std::string, std::vector<int32_t>>> vectors(const std::string& name) {
    const std::string inp = text_of("tokenizers/llamacpp/" + name + ".inp"), out = text_of("tokenizers/llamacpp/" + name + ".out");
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    size_t pos = 0, hit;
    while ((hit = inp.find(sep, pos)) != std::string::npos) {
        texts.push_back(inp.substr(pos, hit - pos));
        pos = hit + sep.size();
    }
    std::vector<std::pair<std::string, std::vector<int32_t>>> r;
    size_t line_start = 0;
    for (const auto& t : texts) {
        const size_t e = out.find('\n', line_start);
        std::istringstream line(out.substr(line_start, e - line_start));
        line_start = e + 1;
        std::vector<int32_t> ids;
        for (int32_t id; line >> id;) ids.push_back(id);
        r.emplace_back(t, ids);
    }
    return r;
}

std::string random_utf8(std::mt19937& rng, int max_len) {
    // Mostly ASCII and Latin, with CJK, emoji (ZWJ sequences too), combining marks, whitespace and controls.
    static const char32_t pool[] = {'a', 'b', 'Z', ' ', ' ', '\n', '\t', '.', ',', '\'', 's', '1', '9', 0xE9, 0xC4, 0x301, 0x308, 0x4E2D,
                                    0x6587, 0x1F600, 0x1F468, 0x200D, 0x1F469, 0xA0, 0x3000, 0x0, 0x1F, 0x7F, 0x85, 0x2028, 0xFEFF,
                                    0x130, 0x3A3, 0xDF, 0xFB01, 0x1100, 0xAC00, 0x10FFFF, 0xE000, 0x2163, 0xBC, 0x3007};
    std::uniform_int_distribution<int> len(0, max_len), pick(0, int(std::size(pool)) - 1), any(1, 0x10FFFF), coin(0, 9);
    std::u32string s;
    for (int i = len(rng); i > 0; --i) {
        char32_t c = coin(rng) == 0 ? char32_t(any(rng)) : pool[pick(rng)];
        if (c >= 0xD800 && c <= 0xDFFF) c = 0xFFFD;
        s += c;
    }
    return wf::unicode::utf8_encode(s);
}

}  // namespace

TEST_CASE("BERT WordPiece matches llama.cpp's Hugging Face test vectors", "[tokenizers][bert]") {
    auto tok = bert_uncased();
    const auto v = vectors("ggml-vocab-bert-bge.gguf");
    REQUIRE(v.size() == 46);
    for (auto& [text, ids] : v) {
        INFO("text: \"" << text << "\"");
        REQUIRE(tok->encode(text, false) == ids);
    }
}

TEST_CASE("GPT-2 BPE matches llama.cpp's Hugging Face test vectors", "[tokenizers][gpt2]") {
    auto tok = gpt2();
    const auto v = vectors("ggml-vocab-gpt-2.gguf");
    REQUIRE(v.size() == 46);
    for (auto& [text, ids] : v) {
        INFO("text: \"" << text << "\"");
        REQUIRE(tok->encode(text) == ids);
        REQUIRE(tok->decode(ids) == text);
    }
}

TEST_CASE("BERT matches transformers.js's published golden ids", "[tokenizers][bert]") {
    auto tok = bert_uncased();
    using v = std::vector<int32_t>;
    REQUIRE(tok->encode(std::string("1\0002\xEF\xBF\xBD" "3", 7)) == v{101, 13138, 102});  // X3 X15
    REQUIRE(tok->encode(" \t\n") == v{101, 102});  // X2
    REQUIRE(tok->encode("H\xC3\xA9llo") == v{101, 7592, 102});  // X4
    REQUIRE(tok->encode("He\xCC\x81llo") == v{101, 7592, 102});  // decomposed é (X4)
    REQUIRE(tok->encode(" \tH\xC3\xA4LLo!how  \n Are yoU?  ") == v{101, 2534, 2080, 999, 2129, 2024, 2017, 1029, 102});  // X5
    REQUIRE(tok->encode("\xE7\x94\x9F\xE6\xB4\xBB\xE7\x9A\x84\xE7\x9C\x9F\xE8\xB0\x9B\xE6\x98\xAF") == v{101, 1910, 100, 1916, 1921, 100, 100, 102});  // X6
    REQUIRE(tok->encode("UNwant\xC3\xA9" "d,running") == v{101, 18162, 1010, 2770, 102});
    REQUIRE(tok->encode("") == v{101, 102});  // X1
}

TEST_CASE("BERT: special tokens in the text, long words, decoding", "[tokenizers][bert]") {
    auto tok = bert_uncased();
    const auto& sp = tok->special();
    REQUIRE(sp.mask == 103);
    REQUIRE(sp.cls == 101);
    const auto ids = tok->encode("The capital of France is [MASK].");
    REQUIRE(ids == std::vector<int32_t>{101, 1996, 3007, 1997, 2605, 2003, 103, 1012, 102});  // X12
    REQUIRE(tok->encode("[mask]", false) == std::vector<int32_t>{1031, 7308, 1033});  // only the exact token is special (X12)
    REQUIRE(tok->decode(ids, true) == "the capital of france is.");
    REQUIRE(tok->decode(tok->encode("unwanted running", false)) == "unwanted running");
    REQUIRE(tok->encode(std::string(100, 'a'), false) != std::vector<int32_t>{100});  // 100 code points: WordPiece (X8)
    REQUIRE(tok->encode(std::string(101, 'a'), false) == std::vector<int32_t>{100});  // 101: [UNK] (X8)
    std::string e60;
    for (int i = 0; i < 60; ++i) e60 += "\xF0\x9F\x98\x80";  // 60 emoji = 240 bytes, still ≤ 100 code points
    REQUIRE(tok->encode(e60, false) == std::vector<int32_t>{100});  // X8
    REQUIRE_THROWS_WITH(tok->decode({30522}), Catch::Contains("out of range"));  // T6 T14
}

TEST_CASE("GPT-2: golden ids, special tokens, streaming decode", "[tokenizers][gpt2]") {
    auto tok = gpt2();
    REQUIRE(tok->encode("The dog") == std::vector<int32_t>{464, 3290});
    REQUIRE(tok->encode("Hello<|endoftext|>world") == std::vector<int32_t>{15496, 50256, 6894});  // X12
    REQUIRE(tok->special().eos == 50256);
    // a character split across tokens is held back until it is whole
    const auto ids = tok->encode("\xE4\xB8\xAD\xF0\x9F\x98\x80 ok");
    wf::utf8_stream s;
    std::string all;
    for (int32_t id : ids) {
        const std::string piece = s.push(tok->token_bytes(id));
        REQUIRE(wf::unicode::utf8_encode(wf::unicode::utf8_decode(piece)) == piece);  // whole characters only
        all += piece;
    }
    REQUIRE(all + s.finish() == "\xE4\xB8\xAD\xF0\x9F\x98\x80 ok");  // X17
    wf::utf8_stream cut;
    REQUIRE(cut.push("a\xF0\x9F").empty() == false);
    REQUIRE(cut.finish() == "\xEF\xBF\xBD");  // an incomplete character at the end flushes as U+FFFD (X17)
}

TEST_CASE("Tokenizer properties on random text", "[tokenizers]") {
    auto bert = bert_uncased();
    auto bpe = gpt2();
    std::mt19937 rng(12345);
    for (int i = 0; i < 2000; ++i) {
        const std::string s = random_utf8(rng, 40);
        INFO("text bytes: " << s.size());
        for (int32_t id : bert->encode(s)) REQUIRE((id >= 0 && id < bert->vocab_size()));
        const auto ids = bpe->encode(s);
        REQUIRE(bpe->decode(ids) == s);
    }
}

TEST_CASE("BPE stays near-linear on long runs", "[tokenizers][gpt2]") {
    auto tok = gpt2();
    const auto a = tok->encode(std::string(100000, 'a'));  // X9
    REQUIRE(tok->decode(a) == std::string(100000, 'a'));
    const auto u = tok->encode(std::string(50000, '_'));  // X9
    REQUIRE(tok->decode(u) == std::string(50000, '_'));
}

TEST_CASE("Malformed tokenizer files get clear errors", "[tokenizers][errors]") {
    REQUIRE_THROWS_WITH(wf::load_vocab_txt("[CLS]\n[SEP]\n[PAD]\n[MASK]\nhello\n", {}), Catch::Contains("no [UNK] token"));  // T3
    REQUIRE_THROWS_WITH(wf::load_vocab_txt("[UNK]\n\xFF\n", {}), Catch::Contains("invalid UTF-8"));  // T4
    auto crlf = wf::load_vocab_txt("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\nhi\r\n", {});
    REQUIRE(crlf->token_id("[UNK]") == 1);  // T1
    REQUIRE(crlf->encode("hi", false) == std::vector<int32_t>{5});  // T1
    REQUIRE_THROWS_WITH(wf::load_gpt2_files("[1,2]", ""), Catch::Contains("vocab.json: must be a JSON object"));  // T6
    REQUIRE_THROWS_WITH(wf::load_gpt2_files("{\"a\": 0}", ""), Catch::Contains("lacks the byte token"));
    const std::string vj = text_of("tokenizers/gpt2/encoder.json");
    REQUIRE_THROWS_WITH(wf::load_gpt2_files(vj, "#version: 0.2\nĠ t x\n"), Catch::Contains("line 2 is not two tokens"));  // T7
    REQUIRE_THROWS_WITH(wf::load_gpt2_files(vj, "zzzq zzzq\n"), Catch::Contains("not in the vocabulary"));  // T7
    REQUIRE_THROWS_WITH(wf::load_gpt2_files("{\"a\": -3}", ""), Catch::Contains("out of range"));  // T6
    REQUIRE_THROWS_WITH(wf::load_tokenizer_json("{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}}"), Catch::Contains("\"WordLevel\" is not supported"));  // T8
    REQUIRE_THROWS_WITH(wf::load_tokenizer_json("{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}"), Catch::Contains("Unigram model.vocab"));
    REQUIRE_THROWS_WITH(wf::load_tokenizer_json("{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 5}}}"),
                        Catch::Contains("without gaps or repeats"));
}

namespace {
std::shared_ptr<wf::file_set> files_of(std::initializer_list<std::pair<std::string, std::string>> named) {
    auto fs = std::make_shared<wf::file_set>();
    for (auto& [n, text] : named) fs->add(n, std::vector<uint8_t>(text.begin(), text.end()));
    return fs;
}
// GPT-2's vocabulary and merges as a tokenizer.json with the given pre_tokenizer and post_processor.
std::string gpt2_tokenizer_json(const wf::json& pre, const wf::json& post) {
    wf::json merges = wf::json::array();
    std::istringstream m(text_of("tokenizers/gpt2/vocab.bpe"));
    for (std::string l; std::getline(m, l);)
        if (!l.empty() && l[0] != '#') merges.push_back(l);
    wf::json j = {{"model", {{"type", "BPE"}, {"vocab", wf::json::parse(text_of("tokenizers/gpt2/encoder.json"))}, {"merges", merges}}},
                  {"added_tokens", {{{"id", 50256}, {"content", "<|endoftext|>"}, {"special", true}}}},
                  {"pre_tokenizer", pre},
                  {"post_processor", post}};
    return j.dump();
}
}  // namespace

TEST_CASE("special tokens take their roles from the model's files, never from their names alone", "[tokenizers]") {
    const std::string vocab = text_of("tokenizers/bert/vocab.txt");
    // tokenizer_config.json names the mask token: it is the mask, and it is matched whole in the text
    auto t = wf::load_tokenizer(*files_of({{"vocab.txt", vocab}, {"tokenizer_config.json", R"({"mask_token": "[unused0]", "do_lower_case": false})"}}));
    REQUIRE(t->special().mask == *t->token_id("[unused0]"));
    REQUIRE(t->encode("a [unused0] b", false) == std::vector<int32_t>{1037, 1, 1038});
    REQUIRE(t->encode("Hello", false) != bert_uncased()->encode("Hello", false));  // do_lower_case false is honoured
    // special_tokens_map.json's AddedToken objects; tokenizer_config.json wins where both name a role
    auto s = wf::load_tokenizer(*files_of({{"vocab.txt", vocab}, {"special_tokens_map.json", R"({"mask_token": {"content": "[unused1]"}, "cls_token": "[unused2]"})"},
                                           {"tokenizer_config.json", R"({"mask_token": "[unused3]"})"}}));
    REQUIRE(s->special().mask == *s->token_id("[unused3]"));
    REQUIRE(s->special().cls == *s->token_id("[unused2]"));
    REQUIRE(s->encode("x").front() == *s->token_id("[unused2]"));  // the template uses the cls role
    REQUIRE_THROWS_WITH(wf::load_tokenizer(*files_of({{"vocab.txt", vocab}, {"tokenizer_config.json", R"({"mask_token": "<mask>"})"}})),
                        Catch::Contains("mask_token \"<mask>\" is not in the vocabulary"));
    REQUIRE_THROWS_WITH(wf::load_tokenizer(*files_of({{"vocab.txt", vocab}, {"tokenizer_config.json", R"({"mask_token": 5})"}})),
                        Catch::Contains("mask_token must be a token text"));
    // without any of them: a vocabulary with no [MASK] has no mask role, and no template without [CLS]/[SEP]
    auto bare = wf::load_vocab_txt("[UNK]\nhello\n", {});
    REQUIRE(bare->special().mask == -1);
    REQUIRE(bare->encode("hello") == std::vector<int32_t>{1});
}

TEST_CASE("tokenizer.json: post-processors decide what add_special_tokens adds, for BPE too", "[tokenizers]") {
    const wf::json gpt2_pre = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    auto plain = wf::load_tokenizer_json(gpt2_tokenizer_json(gpt2_pre, nullptr));
    REQUIRE(plain->encode("The dog") == std::vector<int32_t>{464, 3290});
    const wf::json bos_eos = {{"type", "TemplateProcessing"},
                              {"single", {{{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                                          {{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}}}},
                              {"special_tokens", {{"<|endoftext|>", {{"id", "<|endoftext|>"}, {"ids", {50256}}, {"tokens", {"<|endoftext|>"}}}}}}};
    auto wrapped = wf::load_tokenizer_json(gpt2_tokenizer_json(gpt2_pre, bos_eos));
    REQUIRE(wrapped->encode("The dog") == std::vector<int32_t>{50256, 464, 3290, 50256});
    REQUIRE(wrapped->encode("The dog", false) == std::vector<int32_t>{464, 3290});
    REQUIRE(wrapped->special().eos == 50256);
    // GPT-2's pattern as a Split pre-tokenizer is the same pre-tokenizer; an unknown pattern is named in the error
    const std::string gpt2_regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
    const wf::json split = {{"type", "Sequence"},
                            {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", gpt2_regex}}}, {"behavior", "Isolated"}, {"invert", false}},
                                               {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
    REQUIRE(wf::load_tokenizer_json(gpt2_tokenizer_json(split, nullptr))->encode("Hello world's 123!") == plain->encode("Hello world's 123!"));
    wf::json other = split;
    other["pretokenizers"][0]["pattern"]["Regex"] = "(?i:'s|'t)|\\p{L}+";
    REQUIRE_THROWS_WITH(wf::load_tokenizer_json(gpt2_tokenizer_json(other, nullptr)), Catch::Contains("pre-tokenizer pattern \"(?i:'s|'t)"));
    REQUIRE_THROWS_WITH(wf::load_tokenizer_json(gpt2_tokenizer_json(gpt2_pre, {{"type", "Weird"}})), Catch::Contains("post_processor type \"Weird\""));
    // WordPiece with BertProcessing: cls and sep come from it
    wf::json vocab = wf::json::object();
    int id = 0;
    for (const char* t : {"[PAD]", "[UNK]", "<cls>", "<sep>", "hello"}) vocab[t] = id++;
    const wf::json wp = {{"model", {{"type", "WordPiece"}, {"vocab", vocab}, {"unk_token", "[UNK]"}}},
                         {"post_processor", {{"type", "BertProcessing"}, {"cls", {"<cls>", 2}}, {"sep", {"<sep>", 3}}}}};
    auto w = wf::load_tokenizer_json(wp.dump());
    REQUIRE(w->encode("hello") == std::vector<int32_t>{2, 4, 3});
    REQUIRE(w->special().cls == 2);
    REQUIRE(w->special().sep == 3);
}

TEST_CASE("NFC equals Python's unicodedata on every decomposable character and on mixtures of marks and jamo", "[tokenizers][unicode]") {
    // tests/data/unicode/nfc.json: tools/unicode/make_nfc_vectors.py (Python's unicodedata, Unicode 14.0)
    const auto j = wf::json::parse(text_of("unicode/nfc.json"));
    size_t changed = 0;
    for (const auto& c : j["cases"]) {
        const std::string in = c[0], want = c[1];
        INFO("input " << in);
        const std::u32string got = wf::unicode::nfc(wf::unicode::utf8_decode(in));
        REQUIRE(wf::unicode::utf8_encode(got) == want);
        changed += in != want;
    }
    REQUIRE(j["cases"].size() > 7000);
    REQUIRE(changed > 3000);  // the vectors do change text: composition, reordering, Hangul, exclusions
    // spans: a composite covers the characters it was made of; a decomposed exclusion's pieces keep their character's
    std::vector<wf::unicode::aligned_char> s = {{U'e', 0, 1}, {0x323, 1, 3}, {0x302, 3, 5}, {U'x', 5, 6}, {0x0958, 6, 9}};
    const auto out = wf::unicode::nfc(s);
    REQUIRE(out.size() == 4);
    REQUIRE(out[0].c == 0x1EC7);  // ệ: e + dot below + circumflex
    REQUIRE((out[0].begin == 0 && out[0].end == 5));
    REQUIRE(out[1].c == U'x');
    REQUIRE((out[2].c == 0x0915 && out[2].begin == 6 && out[2].end == 9));  // U+0958 is excluded: क + ़ both span it
    REQUIRE((out[3].c == 0x093C && out[3].begin == 6 && out[3].end == 9));
}

namespace wf::unicode::tables {
extern const uint64_t digests[4];  // src/core/unicode-tables.cpp: hashed by the generator from the UCD's own files
}

TEST_CASE("The packed Unicode tables unpack to what the UCD says of every code point", "[tokenizers][unicode]") {
    // FNV-1a over 4-byte little-endian values, as tools/unicode/gen-unicode-tables.py hashes them
    struct fnv {
        uint64_t h = 0xCBF29CE484222325u;
        void operator()(uint32_t v) {
            for (int k = 0; k < 4; ++k) h = (h ^ ((v >> (8 * k)) & 0xFF)) * 0x100000001B3u;
        }
    } category, ccc, lower, decomp;
    std::u32string out;
    for (char32_t c = 0; c < 0x110000; ++c) {
        category(wf::unicode::general_category(c));
        ccc(wf::unicode::combining_class(c));
        out.clear();
        wf::unicode::to_lower(c, out);
        for (char32_t x : out) lower(x);
        lower(0xFFFFFFFF);
        if (c >= 0xAC00 && c < 0xAC00 + 11172) continue;  // Hangul syllables: decomposed algorithmically
        out.clear();
        wf::unicode::decompose(c, out);
        for (char32_t x : out) decomp(x);
        decomp(0xFFFFFFFF);
    }
    CHECK(category.h == wf::unicode::tables::digests[0]);
    CHECK(ccc.h == wf::unicode::tables::digests[1]);
    CHECK(lower.h == wf::unicode::tables::digests[2]);
    CHECK(decomp.h == wf::unicode::tables::digests[3]);
    // spot checks the hashes cannot explain
    REQUIRE(wf::unicode::general_category(0x0416) == wf::unicode::Lu);  // Ж
    REQUIRE(wf::unicode::general_category(0x10FFFD) == wf::unicode::Co);
    REQUIRE(wf::unicode::combining_class(0x0301) == 230);
    out.clear();
    wf::unicode::to_lower(0x0130, out);  // İ → i + combining dot above
    REQUIRE(out == std::u32string{U'i', 0x0307});
    out.clear();
    wf::unicode::decompose(0x1E08, out);  // Ḉ → C + cedilla + acute
    REQUIRE(out == std::u32string{U'C', 0x0327, 0x0301});
}

TEST_CASE("A byte-level BPE tokenizer.json with an NFC normalizer composes the text; offsets stay the text's own", "[tokenizers]") {
    const wf::json pre = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    auto with = [&](const wf::json& normalizer) {
        auto j = wf::json::parse(gpt2_tokenizer_json(pre, nullptr));
        j["normalizer"] = normalizer;
        return wf::load_tokenizer_json(j.dump());
    };
    const auto plain = with(nullptr), nfc = with({{"type", "NFC"}}), seq = with({{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}}}});
    const std::string composed = "Caf\xC3\xA9 na\xC3\xAFve", decomposed = "Cafe\xCC\x81 nai\xCC\x88ve";  // é, ï as one code point / two
    REQUIRE(nfc->encode(decomposed, false) == plain->encode(composed, false));
    REQUIRE(seq->encode(decomposed, false) == nfc->encode(decomposed, false));
    REQUIRE(plain->encode(decomposed, false) != plain->encode(composed, false));  // without it they differ
    // offsets into the decomposed text: the tokens cover it end to end, "é" (bytes 3–6) inside one token's span
    const auto e = nfc->encode_offsets(decomposed);
    REQUIRE(!e.offsets.empty());
    REQUIRE(e.offsets.front().begin == 0);
    REQUIRE(e.offsets.back().end == int32_t(decomposed.size()));
    bool covers = false;
    for (const auto& o : e.offsets) covers = covers || (o.begin <= 3 && o.end >= 6);
    REQUIRE(covers);
    for (size_t i = 1; i < e.offsets.size(); ++i) REQUIRE(e.offsets[i].begin >= e.offsets[i - 1].begin);
    // ASCII text takes the fast path and is unchanged
    REQUIRE(nfc->encode("plain text", false) == plain->encode("plain text", false));
    REQUIRE_THROWS_WITH(with({{"type", "NFKC"}}), Catch::Contains("is not supported for BPE (only NFC)"));
    REQUIRE_THROWS_WITH(with({{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Lowercase"}}}}}), Catch::Contains("only NFC"));
}
