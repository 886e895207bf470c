// The byte-level BPE pre-tokenizers of modern decoders (GPT-2, Llama 3, Qwen2, SmolLM / StarCoder) against two
// oracles: the pieces the regular expressions themselves give (tools/reference/pretokenize_oracle.py, python3-regex,
// tests/data/tokenizers/pretokenize-vectors.json: hostile strings, invalid UTF-8 and seeded random Unicode), and
// llama.cpp's test vectors (ids from Hugging Face's tokenizers) for the Llama 3, Qwen2 and Phi-3 vocabularies, through
// GGUF and, for the byte-level ones, through a tokenizer.json with the pre_tokenizer their Hugging Face files have.
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

#include "helpers.h"
#include "core/json.h"
#include "core/unicode.h"
#include "formats/gguf.h"
#include "tokenizers/bpe.h"
#include "tokenizers/load.h"

namespace {

namespace u = wf::unicode;

std::string bytes_of(const std::string& rel) {
    const auto b = wft::read_file(wft::data_path(rel));
    return std::string(b.begin(), b.end());
}

// A text for messages: ill-formed bytes as U+FFFD, quoted and escaped as JSON, at most 160 characters.
std::string shown(const std::string& s) { return wf::json(u::utf8_encode(u::utf8_decode(s))).dump().substr(0, 160); }

std::string from_hex(const std::string& hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out += char(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

// llama.cpp's vector format: strings separated by "\n__ggml_vocab_test__\n"; one line of ids per string.
std::vector<std::pair<std::string, std::vector<int32_t>>> llamacpp_vectors(const std::string& name) {
    const std::string inp = bytes_of("tokenizers/llamacpp/" + name + ".inp");
    std::istringstream out(bytes_of("tokenizers/llamacpp/" + name + ".out"));
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::pair<std::string, std::vector<int32_t>>> r;
    for (size_t pos = 0, hit; (hit = inp.find(sep, pos)) != std::string::npos; pos = hit + sep.size()) {
        std::string line;
        std::getline(out, line);
        std::istringstream l(line);
        std::vector<int32_t> ids;
        for (int32_t id; l >> id;) ids.push_back(id);
        r.emplace_back(inp.substr(pos, hit - pos), ids);
    }
    return r;
}

struct gguf_vocab {
    std::vector<uint8_t> bytes;
    wf::gguf_file g;
    explicit gguf_vocab(const std::string& name)
        : bytes(wft::read_file(wft::data_path("tokenizers/llamacpp/" + name))), g(wf::parse_gguf(bytes.data(), int64_t(bytes.size()), name)) {}
};

// How many of llama.cpp's vectors `tok` encodes to their ids (and, when `round_trip`, decodes back to their text);
// each difference is reported unless `quiet`.
size_t matching_vectors(const wf::tokenizer& tok, const std::string& name, bool round_trip, bool quiet = false) {
    const auto vectors = llamacpp_vectors(name);
    REQUIRE(vectors.size() == 46);
    size_t same = 0;
    for (const auto& [text, expect] : vectors) {
        const auto ids = tok.encode(text, false);
        const bool ok = ids == expect && (!round_trip || tok.decode(ids) == text);
        same += ok;
        if (!ok && !quiet) {
            std::ostringstream a, b;
            for (int32_t id : ids) a << id << ' ';
            for (int32_t id : expect) b << id << ' ';
            WARN(name << ": " << shown(text) << "\n  ours:     " << a.str() << "\n  expected: " << b.str() << "\n  decoded:  " << shown(tok.decode(ids)));
        }
    }
    return same;
}

// A GGUF byte-level vocabulary as Hugging Face's tokenizer.json writes it: control tokens in added_tokens, the others
// in model.vocab, the merges, and the given pre_tokenizer. `bytes_only`: GPT-2's first 256 tokens (its byte tokens),
// no merges, for tests of the pre_tokenizer alone.
std::string tokenizer_json_of(const wf::gguf_file& g, const wf::json& pre, bool ignore_merges, bool bytes_only = false) {
    const auto& tokens = g.get_strings("tokenizer.ggml.tokens");
    const auto& types = g.get_numbers("tokenizer.ggml.token_type");
    wf::json vocab = wf::json::object(), added = wf::json::array(), merges = wf::json::array();
    for (size_t i = 0; i < (bytes_only ? 256 : tokens.size()); ++i) {
        if (types[i] == 3) added.push_back({{"id", int(i)}, {"content", tokens[i]}, {"special", true}});
        else vocab[tokens[i]] = int(i);
    }
    if (!bytes_only)
        for (const std::string& m : g.get_strings("tokenizer.ggml.merges")) merges.push_back(m);
    const wf::json j = {{"version", "1.0"},
                        {"added_tokens", added},
                        {"normalizer", nullptr},
                        {"pre_tokenizer", pre},
                        {"post_processor", nullptr},
                        {"model", {{"type", "BPE"}, {"ignore_merges", ignore_merges}, {"vocab", vocab}, {"merges", merges}}}};
    return j.dump();
}

// tokenizer.json's pre_tokenizer for a Split expression, as the Llama 3 and Qwen2.5 files have it
wf::json split_then_byte_level(const std::string& regex) {
    return {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
}

// The Regex strings of the Hugging Face files (Meta-Llama-3-8B, Qwen2.5-0.5B tokenizer.json), JSON-decoded.
const std::string kLlama3Regex = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kQwen2Regex = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

using pieces = std::vector<std::string>;
pieces cut(const std::string& text, wf::pre_tokenizer kind) { return wf::bpe_tokenizer::pre_tokenize(text, kind); }

}  // namespace

TEST_CASE("pre-tokenizers cut every oracle string as their regular expressions do", "[tokenizers][pretokenizers]") {
    const wf::json doc = wf::parse_json_strict(bytes_of("tokenizers/pretokenize-vectors.json"), "pretokenize-vectors.json");
    const std::pair<const char*, wf::pre_tokenizer> kinds[] = {
        {"gpt2", wf::pre_tokenizer::gpt2}, {"llama3", wf::pre_tokenizer::llama3}, {"qwen2", wf::pre_tokenizer::qwen2}, {"smollm", wf::pre_tokenizer::smollm}};
    // the oracle ran the very expressions the engine recognises in tokenizer.json
    for (const auto& [name, kind] : kinds) {
        if (!doc["patterns"].contains(name)) continue;  // smollm is Digits + ByteLevel, no expression of its own
        REQUIRE(wf::pre_tokenizer_for_pattern(doc["patterns"][name].get<std::string>()) == kind);
        REQUIRE(std::string(wf::pre_tokenizer_name(kind)) == name);
    }
    REQUIRE(doc["patterns"]["llama3"] == kLlama3Regex);
    REQUIRE(doc["patterns"]["qwen2"] == kQwen2Regex);
    const wf::json& cases = doc["cases"];
    REQUIRE(cases.size() >= 600);
    size_t compared = 0, differ = 0, invalid = 0;
    for (const wf::json& c : cases) {
        const std::string text = c.contains("x") ? from_hex(c["x"].get<std::string>()) : c["s"].get<std::string>();
        invalid += c.contains("x");
        for (const auto& [name, kind] : kinds) {
            const pieces expect = c[name].get<pieces>(), ours = cut(text, kind);
            ++compared;
            if (ours == expect) continue;
            if (++differ <= 10) {
                std::string a, b;
                for (auto& p : ours) a += shown(p) + " ";
                for (auto& p : expect) b += shown(p) + " ";
                WARN(name << ": " << shown(text) << "\n  ours:     " << a << "\n  expected: " << b);
            }
        }
    }
    INFO(differ << " of " << compared << " (string, pre-tokenizer) pairs differ");
    REQUIRE(differ == 0);
    REQUIRE(invalid >= 16);
}

TEST_CASE("pre-tokenizers: what each expression does differently, by hand", "[tokenizers][pretokenizers]") {
    using P = wf::pre_tokenizer;
    // digit runs: GPT-2's whole (with the space before them), Llama 3's in threes, Qwen2's and SmolLM's one by one
    REQUIRE(cut(" 1234567", P::gpt2) == pieces{" 1234567"});
    REQUIRE(cut(" 1234567", P::llama3) == pieces{" ", "123", "456", "7"});
    REQUIRE(cut(" 1234567", P::qwen2) == pieces{" ", "1", "2", "3", "4", "5", "6", "7"});
    REQUIRE(cut("a 12", P::smollm) == pieces{"a", " ", "1", "2"});
    // contractions: (?i:…) in Llama 3's and Qwen2's, lower case only in GPT-2's; U+017F (ſ) case-folds to s
    REQUIRE(cut("I'M HE'LL", P::llama3) == pieces{"I", "'M", " HE", "'LL"});
    REQUIRE(cut("I'M HE'LL", P::gpt2) == pieces{"I", "'", "M", " HE", "'", "LL"});
    REQUIRE(cut("'ſt", P::qwen2) == pieces{"'ſ", "t"});
    // a letter run takes any one non-letter, non-digit character before it but CR and LF (Llama 3), only a space (GPT-2)
    REQUIRE(cut("(hello\tworld\nx", P::llama3) == pieces{"(hello", "\tworld", "\n", "x"});
    REQUIRE(cut("(hello\tworld\nx", P::gpt2) == pieces{"(", "hello", "\t", "world", "\n", "x"});
    // CR/LF: punctuation takes those after it, a whitespace run ends at its last line break
    REQUIRE(cut("x.\r\n\r\n  y", P::llama3) == pieces{"x", ".\r\n\r\n", " ", " y"});
    REQUIRE(cut("a \r\n \r\n  b", P::llama3) == pieces{"a", " \r\n \r\n", " ", " b"});
    REQUIRE(cut("a \r\n \r\n  b", P::gpt2) == pieces{"a", " \r\n \r\n ", " b"});
    // trailing whitespace stays one piece; before a word the last space goes with the word
    REQUIRE(cut("hi   ", P::llama3) == pieces{"hi", "   "});
    REQUIRE(cut("hi   there", P::qwen2) == pieces{"hi", "  ", " there"});
    // marks are not letters: they split a letter run
    REQUIRE(cut("ne\xCC\x81" "e", P::llama3) == pieces{"ne", "\xCC\x81" "e"});
    // ill-formed UTF-8 is cut as U+FFFD, one per maximal ill-formed subsequence
    REQUIRE(cut("a\xFF\xF0\x9F\x98 b", P::llama3) == pieces{"a", "\xEF\xBF\xBD\xEF\xBF\xBD", " b"});
    // no piece is empty and the pieces are the text, on long runs too
    for (P kind : {P::gpt2, P::llama3, P::qwen2, P::smollm}) {
        const std::string text = std::string(5000, '9') + std::string(3000, ' ') + std::string(2000, '\n') + std::string(4000, 'a');
        std::string joined;
        for (const std::string& p : cut(text, kind)) {
            REQUIRE(!p.empty());
            joined += p;
        }
        REQUIRE(joined == text);
    }
    // a long digit run is cut in linear time
    const std::string digits(300000, '7');
    REQUIRE(cut(digits, P::gpt2).size() == 1);
    REQUIRE(cut(digits, P::llama3).size() == 100000);
    REQUIRE(cut(digits, P::qwen2).size() == 300000);
    REQUIRE(cut(digits, P::smollm).size() == 300000);
}

TEST_CASE("Llama 3 and Qwen2 GGUF vocabularies match llama.cpp's Hugging Face test vectors", "[tokenizers][pretokenizers][llama3][qwen2]") {
    const wf::json doc = wf::parse_json_strict(bytes_of("tokenizers/pretokenize-vectors.json"), "pretokenize-vectors.json");
    for (const char* name : {"ggml-vocab-llama-bpe.gguf", "ggml-vocab-qwen2.gguf"}) {
        gguf_vocab v(name);
        const auto tok = wf::load_tokenizer(v.g, 0);
        const size_t same = matching_vectors(*tok, name, true);
        WARN(name << ": " << same << " / 46 vectors identical");
        CHECK(same == 46);
        // every oracle string decodes back to itself (ill-formed bytes as the U+FFFD they were cut as)
        for (const wf::json& c : doc["cases"]) {
            const std::string text = c.contains("x") ? from_hex(c["x"].get<std::string>()) : c["s"].get<std::string>();
            INFO(name << ": " << shown(text));
            REQUIRE(tok->decode(tok->encode(text, false)) == u::utf8_encode(u::utf8_decode(text)));
        }
        // tokenizer.ggml.pre is what chose the pre-tokenizer: GPT-2's on the same vocabulary misses vectors
        v.g.kv["tokenizer.ggml.pre"].s = "gpt-2";
        CHECK(matching_vectors(*wf::load_tokenizer(v.g, 0), name, true, true) < same);
    }
}

TEST_CASE("GGUF tokenizer.ggml.pre: the names llama.cpp writes, absent as GPT-2's, unknown ones refused", "[tokenizers][pretokenizers]") {
    gguf_vocab gpt2("ggml-vocab-gpt-2.gguf");
    REQUIRE(gpt2.g.get_string("tokenizer.ggml.pre") == "gpt-2");
    const auto plain = wf::load_tokenizer(gpt2.g, 0);
    const std::string text = "In 2024 it's 12345 DON'T\r\n\r\n  stop";
    const std::vector<int32_t> ids = plain->encode(text, false);
    auto with_pre = [&](const char* pre) {
        wf::gguf_file g = gpt2.g;
        if (pre) g.kv["tokenizer.ggml.pre"].s = pre;
        else g.kv.erase("tokenizer.ggml.pre");
        return wf::load_tokenizer(g, 0);
    };
    REQUIRE(with_pre(nullptr)->encode(text, false) == ids);
    REQUIRE(with_pre("default")->encode(text, false) == ids);
    // smollm: every digit its own piece, GPT-2's expression between them
    auto id = [&](const char* t) { return *plain->token_id(t); };
    REQUIRE(with_pre("smollm")->encode("in 2024", false) == std::vector<int32_t>{id("in"), id("\xC4\xA0"), id("2"), id("0"), id("2"), id("4")});
    REQUIRE(with_pre("starcoder")->encode("in 2024", false) == with_pre("smollm")->encode("in 2024", false));
    REQUIRE(plain->encode("in 2024", false) == std::vector<int32_t>{id("in"), id("\xC4\xA0" "2024")});
    // llama-bpe: digits in threes
    REQUIRE(with_pre("llama-bpe")->encode("1234567", false) == std::vector<int32_t>{id("123"), id("456"), id("7")});
    REQUIRE(plain->encode("1234567", false) != with_pre("llama-bpe")->encode("1234567", false));
    REQUIRE_THROWS_WITH(with_pre("tekken"), Catch::Contains("ggml-vocab-gpt-2.gguf") && Catch::Contains("tokenizer.ggml.pre \"tekken\"") &&
                                                Catch::Contains("llama-bpe") && Catch::Contains("qwen2") && Catch::Contains("smollm"));
}

TEST_CASE("Phi-3's SentencePiece GGUF vocabulary matches llama.cpp's Hugging Face test vectors", "[tokenizers][sentencepiece][phi3]") {
    gguf_vocab v("ggml-vocab-phi-3.gguf");
    const auto tok = wf::load_tokenizer(v.g, 0);
    const size_t same = matching_vectors(*tok, "ggml-vocab-phi-3.gguf", false);
    WARN("ggml-vocab-phi-3.gguf: " << same << " / 46 vectors identical");
    CHECK(same == 46);
    // the file types <unk> control and 53 padding pieces "[PADn]" unknown: <unk> is the unknown piece, matched whole
    // in the text as Hugging Face's added token; the padding pieces are never produced
    REQUIRE(v.g.get_numbers("tokenizer.ggml.token_type")[0] == 3);
    REQUIRE(v.g.get_numbers("tokenizer.ggml.token_type")[32012] == 2);
    const auto ids = tok->encode("a<unk>b [PAD32012]", false);
    REQUIRE(std::count(ids.begin(), ids.end(), 0) == 1);
    REQUIRE(std::none_of(ids.begin(), ids.end(), [](int32_t id) { return id >= 32011; }));
    REQUIRE(tok->decode(tok->encode("Hello [PAD32012] world", false)) == "Hello [PAD32012] world");
}

TEST_CASE("tokenizer.json: Llama 3's and Qwen2's Split pre_tokenizer as Hugging Face writes it", "[tokenizers][pretokenizers][llama3][qwen2]") {
    const std::pair<const char*, const std::string*> vocabs[] = {{"ggml-vocab-llama-bpe.gguf", &kLlama3Regex}, {"ggml-vocab-qwen2.gguf", &kQwen2Regex}};
    for (const auto& [name, regex] : vocabs) {
        gguf_vocab v(name);
        const bool llama3 = regex == &kLlama3Regex;  // Llama 3's tokenizer.json has ignore_merges, Qwen2's has not
        const std::string text = tokenizer_json_of(v.g, split_then_byte_level(*regex), llama3);
        const size_t same = matching_vectors(*wf::load_tokenizer_json(text, name), name, true);
        WARN(name << " as tokenizer.json: " << same << " / 46 vectors identical");
        CHECK(same == 46);
        if (llama3) {  // ignore_merges is read: without it the merges cut the token " Việt" into " Vi", "ệ", "t"
            const size_t at = text.find("\"ignore_merges\":true");
            REQUIRE(at != std::string::npos);
            const std::string merged = text.substr(0, at) + "\"ignore_merges\":false" + text.substr(at + 20);
            CHECK(matching_vectors(*wf::load_tokenizer_json(merged, name), name, true, true) == 45);
        }
    }
}

TEST_CASE("tokenizer.json: SmolLM's Digits + ByteLevel, and the pre_tokenizers refused with their reason", "[tokenizers][pretokenizers][errors]") {
    gguf_vocab v("ggml-vocab-gpt-2.gguf");
    const wf::json digits = {{"type", "Sequence"},
                             {"pretokenizers",
                              {{{"type", "Digits"}, {"individual_digits", true}},
                               {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}}}};
    const auto smollm = wf::load_tokenizer_json(tokenizer_json_of(v.g, digits, false), "smollm.json");
    wf::gguf_file g = v.g;
    g.kv["tokenizer.ggml.pre"].s = "smollm";
    const auto smollm_gguf = wf::load_tokenizer(g, 0);
    for (const char* text : {"in 2024", "v1.2.3 costs $1,000,000\n", "  42  ", "x²+y² = ½"})
        REQUIRE(smollm->encode(text, false) == smollm_gguf->encode(text, false));
    REQUIRE(smollm->encode("in 2024", false).size() == 6);

    auto load = [&](const wf::json& pre) { return wf::load_tokenizer_json(tokenizer_json_of(v.g, pre, false, true), "bad.json"); };
    REQUIRE(load(digits)->encode("in 2024", false).size() == 7);  // the byte tokens alone: i n Ġ 2 0 2 4
    using Catch::Contains;
    wf::json removed = split_then_byte_level(kLlama3Regex);
    removed["pretokenizers"][0]["behavior"] = "Removed";
    REQUIRE_THROWS_WITH(load(removed), Contains("bad.json") && Contains("behavior \"Removed\""));
    wf::json inverted = split_then_byte_level(kLlama3Regex);
    inverted["pretokenizers"][0]["invert"] = true;
    REQUIRE_THROWS_WITH(load(inverted), Contains("invert"));
    wf::json regex_twice = split_then_byte_level(kQwen2Regex);
    regex_twice["pretokenizers"][1]["use_regex"] = true;
    REQUIRE_THROWS_WITH(load(regex_twice), Contains("use_regex = true after a Split"));
    wf::json unknown = split_then_byte_level(R"(\p{N}{1,4}|\p{L}+)");
    REQUIRE_THROWS_WITH(load(unknown), Contains("pre-tokenizer pattern \"\\\\p{N}{1,4}"));
    wf::json no_regex = split_then_byte_level(kQwen2Regex);
    no_regex["pretokenizers"][0]["pattern"] = {{"String", " "}};
    REQUIRE_THROWS_WITH(load(no_regex), Contains("has no Regex pattern"));
    wf::json contiguous = digits;
    contiguous["pretokenizers"][0]["individual_digits"] = false;
    REQUIRE_THROWS_WITH(load(contiguous), Contains("Digits pre-tokenizer without individual_digits"));
    wf::json byte_level_first = digits;
    byte_level_first["pretokenizers"] = {digits["pretokenizers"][1], digits["pretokenizers"][0]};
    REQUIRE_THROWS_WITH(load(byte_level_first), Contains("Sequence [ByteLevel, Digits] is not supported"));
    REQUIRE_THROWS_WITH(load({{"type", "Whitespace"}}), Contains("not supported for BPE"));
    REQUIRE_THROWS_WITH(load({{"type", "ByteLevel"}, {"use_regex", false}}), Contains("without its regex"));
}
