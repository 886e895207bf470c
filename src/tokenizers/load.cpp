#include "tokenizers/load.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/json.h"
#include "core/unicode.h"
#include "tokenizers/bpe.h"
#include "tokenizers/marian.h"
#include "tokenizers/roles.h"
#include "tokenizers/sentencepiece.h"
#include "tokenizers/word-bpe.h"

namespace wf {

namespace u = unicode;
using namespace token_roles;

namespace {

constexpr int64_t kMaxTokenizerFile = 64ll << 20;
constexpr size_t kMaxTokens = 1 << 21;
constexpr size_t kMaxTokenBytes = 1024;  // as tokenizer.json's added tokens; real vocabularies stay far below
// SentencePiece models by the names their families use: XLM-R, ALBERT and T5, Llama and Mistral
const char* const kSets[][2] = {{"tokenizer.json", nullptr},          {"vocab.txt", nullptr},    {"vocab.json", "merges.txt"},
                                {"source.spm", "vocab.json"},  // Marian (target.spm beside them)
                                {"sentencepiece.bpe.model", nullptr}, {"spiece.model", nullptr}, {"tokenizer.model", nullptr}};
const char* const kOptional[] = {"tokenizer_config.json", "special_tokens_map.json", "target.spm"};

void check_size(std::string_view text, const std::string& file) {
    if (int64_t(text.size()) > kMaxTokenizerFile)
        throw error(file + ": " + std::to_string(text.size()) + " bytes is over the limit of " + std::to_string(kMaxTokenizerFile));
}

void check_utf8(std::string_view text, const std::string& file) {
    if (u::utf8_encode(u::utf8_decode(text)) != text) throw error(file + ": invalid UTF-8");
}

// ----------------------------------------------------------------------------------------------- file formats
std::unique_ptr<wordpiece_tokenizer> vocab_txt(std::string_view text, const wordpiece_options& opt, const std::string& file) {
    check_size(text, file);
    check_utf8(text, file);
    std::vector<std::string> vocab;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.size() > kMaxTokenBytes)
            throw error(file + ": line " + std::to_string(vocab.size() + 1) + " is a token of " + std::to_string(line.size()) + " bytes, over the limit of " +
                        std::to_string(kMaxTokenBytes));
        vocab.emplace_back(line);
        if (vocab.size() > kMaxTokens) throw error(file + ": more than " + std::to_string(kMaxTokens) + " tokens");
        start = end + 1;
    }
    return std::make_unique<wordpiece_tokenizer>(std::move(vocab), opt, file);
}

// vocab.json (token → id) and merges.txt ("a b" per line, in rank order; a "#version" first line skipped).
struct vocab_merges {
    std::unordered_map<std::string, int32_t> vocab;
    std::vector<std::pair<std::string, std::string>> merges;
};
vocab_merges read_vocab_merges(std::string_view vocab_json, std::string_view merges_txt) {
    check_size(merges_txt, "merges.txt");
    check_utf8(merges_txt, "merges.txt");
    const json v = parse_json_strict(vocab_json, "vocab.json", kMaxTokenizerFile);
    if (!v.is_object()) throw error("vocab.json: must be a JSON object of token → id");
    if (v.size() > kMaxTokens) throw error("vocab.json: more than " + std::to_string(kMaxTokens) + " tokens");
    std::unordered_map<std::string, int32_t> vocab;
    vocab.reserve(v.size());
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (it.key().size() > kMaxTokenBytes)
            throw error("vocab.json: a token of " + std::to_string(it.key().size()) + " bytes, over the limit of " + std::to_string(kMaxTokenBytes));
        if (!it.value().is_number_integer()) throw error("vocab.json: id of \"" + it.key().substr(0, 40) + "\" is not an integer");
        const int64_t id = it.value().get<int64_t>();
        if (id < 0 || id > (1 << 22)) throw error("vocab.json: id " + std::to_string(id) + " of \"" + it.key() + "\" is out of range");
        vocab[it.key()] = int32_t(id);
    }
    std::vector<std::pair<std::string, std::string>> merges;
    size_t start = 0, line_no = 0;
    while (start < merges_txt.size()) {
        size_t end = merges_txt.find('\n', start);
        if (end == std::string_view::npos) end = merges_txt.size();
        std::string_view line = merges_txt.substr(start, end - start);
        start = end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || (line_no == 1 && line.substr(0, 8) == "#version")) continue;
        const size_t sp = line.find(' ');
        if (sp == std::string_view::npos || sp == 0 || sp + 1 >= line.size() || line.find(' ', sp + 1) != std::string_view::npos)
            throw error("merges.txt: line " + std::to_string(line_no) + " is not two tokens separated by one space");
        merges.emplace_back(std::string(line.substr(0, sp)), std::string(line.substr(sp + 1)));
        if (merges.size() > kMaxTokens) throw error("merges.txt: more than " + std::to_string(kMaxTokens) + " merges");
    }
    return {std::move(vocab), std::move(merges)};
}

std::unique_ptr<bpe_tokenizer> gpt2_files(const vocab_merges& vm) {
    return std::make_unique<bpe_tokenizer>(vm.vocab, vm.merges, std::vector<std::pair<std::string, int32_t>>{}, pre_tokenizer::gpt2, "vocab.json");
}

// ------------------------------------------------------------------------------------------------ SentencePiece
std::string base64_decode(std::string_view in, const std::string& what) {
    auto value = [](char c) {
        return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
    };
    while (!in.empty() && in.back() == '=') in.remove_suffix(1);
    std::string out;
    out.reserve(in.size() / 4 * 3 + 3);
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        const int v = value(c);
        if (v < 0) throw error(what + ": not base64 (byte " + std::to_string(int(uint8_t(c))) + ")");
        acc = acc << 6 | uint32_t(v);
        bits += 6;
        if (bits >= 8) bits -= 8, out += char((acc >> bits) & 0xFF);
    }
    return out;
}

// XLM-R's ids are fairseq's, not sentencepiece's: <s> <pad> </s> <unk>, then the model's pieces from its fourth on
// (one id later), then <mask> (XLMRobertaTokenizer's fairseq_offset).
sentencepiece_model fairseq_vocabulary(sentencepiece_model m, const std::string& file) {
    auto& p = m.pieces;
    if (p.size() < 3 || p[0].type != piece_type::unknown || p[1].type != piece_type::control || p[2].type != piece_type::control)
        throw error(file + ": XLM-R's vocabulary must start with the unknown piece, <s> and </s> (fairseq's ids are built on them)");
    std::vector<sentencepiece_piece> out;
    out.reserve(p.size() + 2);
    out.push_back(p[1]);
    out.push_back({"<pad>", 0, piece_type::control});
    out.push_back(p[2]);
    out.push_back(p[0]);
    out.insert(out.end(), std::make_move_iterator(p.begin() + 3), std::make_move_iterator(p.end()));
    out.push_back({"<mask>", 0, piece_type::control});
    p = std::move(out);
    m.pad_piece = "<pad>";
    return m;
}

// A .model file → the tokenizer its family's Hugging Face tokenizer is: XLM-R (sentencepiece.bpe.model) <s> A </s>
// and <s> A </s></s> B </s> on fairseq's ids; ALBERT (spiece.model with [CLS] and [SEP]) [CLS] A [SEP] [B [SEP]];
// T5 (spiece.model without) A </s> [B </s>]; Llama and others (tokenizer.model, source.spm …) <s> A [<s> B].
std::unique_ptr<tokenizer> sentencepiece_file(std::string_view bytes, const std::string& file, const tokenizer_config& cfg) {
    sentencepiece_model m = parse_sentencepiece_model(bytes, file);
    // T5Tokenizer's sentinels: <extra_id_0> has the last id, <extra_id_{n−1}> the first after the pieces
    const size_t n_pieces = m.pieces.size();
    for (int64_t i = cfg.extra_ids - 1; i >= 0; --i) m.pieces.push_back({"<extra_id_" + std::to_string(i) + ">", 0.0f, piece_type::control});
    const std::string& cls = cfg.tokenizer_class;
    const bool xlmr = cls.rfind("XLMRoberta", 0) == 0 || (cls.empty() && file == "sentencepiece.bpe.model");
    if (xlmr) m = fairseq_vocabulary(std::move(m), file);
    auto tok = std::make_unique<sentencepiece_tokenizer>(std::move(m), file);
    for (int64_t i = 0; i < cfg.extra_ids; ++i)  // matched whole in the text with the spaces around them, left out by skip_special_tokens
        tok->add_token_text("<extra_id_" + std::to_string(i) + ">", int32_t(n_pieces + size_t(cfg.extra_ids - 1 - i)), true, true, true);
    assign_roles(*tok, cfg, file, sentencepiece_roles(*tok));
    const special_tokens& r = tok->special();
    special_template t;
    if (xlmr && r.cls >= 0 && r.sep >= 0) {
        t = special_template::roberta(r.cls, r.sep);
    } else if (file == "spiece.model" && tok->token_id("[CLS]") && tok->token_id("[SEP]")) {
        t = special_template::bert(*tok->token_id("[CLS]"), *tok->token_id("[SEP]"));
    } else if (file == "spiece.model" || cls.rfind("T5", 0) == 0) {
        if (r.eos >= 0) t = special_template::t5(r.eos);
    } else if (r.bos >= 0) {
        t = special_template::llama(r.bos);
    }
    tok->set_template(t);
    // T5's slow tokenizer strips its decoded text, and cleans up spaces when its config says so
    if (cls.rfind("T5", 0) == 0) tok->set_t5_decoding(cfg.clean_up_spaces);
    return tok;
}

// MarianTokenizer's files: source.spm, target.spm (optional), vocab.json (piece → id, dense from 0). Roles from
// tokenizer_config.json (eos </s>, unk <unk>, pad <pad>); </s> after every text.
std::unique_ptr<tokenizer> marian_files(const file_set& files, const tokenizer_config& cfg) {
    const json v = parse_json_strict(files.text("vocab.json"), "vocab.json", kMaxTokenizerFile);
    if (!v.is_object()) throw error("vocab.json: must be a JSON object of piece → id");
    if (v.size() > kMaxTokens) throw error("vocab.json: more than " + std::to_string(kMaxTokens) + " tokens");
    std::vector<std::string> vocab(v.size());
    std::vector<bool> seen(v.size());
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (it.key().size() > kMaxTokenBytes)
            throw error("vocab.json: a piece of " + std::to_string(it.key().size()) + " bytes, over the limit of " + std::to_string(kMaxTokenBytes));
        if (!it.value().is_number_integer()) throw error("vocab.json: id of \"" + it.key().substr(0, 40) + "\" is not an integer");
        const int64_t id = it.value().get<int64_t>();
        if (id < 0 || id >= int64_t(v.size()))
            throw error("vocab.json: id " + std::to_string(id) + " of \"" + it.key().substr(0, 40) + "\" is outside [0, " + std::to_string(v.size()) +
                        ") (Marian's ids are dense)");
        if (seen[size_t(id)]) throw error("vocab.json: id " + std::to_string(id) + " is given to two pieces");
        seen[size_t(id)] = true;
        vocab[size_t(id)] = it.key();
    }
    auto spm = [&](const char* name) {
        return std::make_unique<sentencepiece_tokenizer>(parse_sentencepiece_model(files.text(name), name), name);
    };
    auto tok = std::make_unique<marian_tokenizer>(spm("source.spm"), files.has("target.spm") ? spm("target.spm") : nullptr, std::move(vocab));
    assign_roles(*tok, cfg, "vocab.json");
    if (tok->special().eos < 0) throw error("vocab.json: no </s> (Marian ends every text with it)");
    special_template t;
    t.after = {tok->special().eos};
    tok->set_template(t);
    return tok;
}

// tokenizer.json's normalizer for a Unigram model: Precompiled, Replace (a text, or the converters' " {2,}"), Strip,
// or a Sequence of them.
void read_unigram_normalizer(const json& n, std::vector<hf_normalizer>& out, const std::string& file) {
    if (n.is_null()) return;
    if (!n.is_object() || !n.contains("type") || !n["type"].is_string()) throw error(file + ": normalizer must be an object with a type");
    const std::string type = n["type"].get<std::string>();
    if (type == "Sequence") {
        const json& list = json_field(n, "normalizers", file + " normalizer");
        if (!list.is_array()) throw error(file + ": normalizer.normalizers must be a list");
        for (const json& q : list) read_unigram_normalizer(q, out, file);
    } else if (type == "Precompiled") {
        const json& c = json_field(n, "precompiled_charsmap", file + " Precompiled normalizer");
        if (c.is_null()) return;
        if (!c.is_string()) throw error(file + ": precompiled_charsmap must be a base64 string");
        const std::string blob = base64_decode(c.get<std::string>(), file + " precompiled_charsmap");
        if (blob.empty()) return;
        hf_normalizer h;
        h.charsmap = precompiled_charsmap(blob, file);
        out.push_back(std::move(h));
    } else if (type == "Replace") {
        const json& p = json_field(n, "pattern", file + " Replace normalizer");
        hf_normalizer h;
        h.type = hf_normalizer::kind::replace;
        h.content = json_string(n, "content", file + " Replace normalizer");
        if (p.is_object() && p.contains("String") && p["String"].is_string()) {
            h.pattern = p["String"].get<std::string>();
        } else if (p.is_object() && p.contains("Regex") && p["Regex"].is_string()) {
            const std::string re = p["Regex"].get<std::string>();
            if (re.size() == 5 && re.substr(1) == "{2,}" && re[0] != '\\') h.pattern = re.substr(0, 1), h.runs = true;
            else if (re.find_first_of("\\^$.|?*+()[]{}") == std::string::npos) h.pattern = re;
            else throw error(file + ": Replace pattern " + json(re).dump() + " is not supported (supported: a text, or a character's runs \" {2,}\")");
        } else {
            throw error(file + ": Replace pattern must be {\"String\": …} or {\"Regex\": …}");
        }
        if (!h.pattern.empty()) out.push_back(std::move(h));
    } else if (type == "Strip") {
        hf_normalizer h;
        h.type = hf_normalizer::kind::strip;
        auto flag = [&](const char* k) { return n.contains(k) && n[k].is_boolean() && n[k].get<bool>(); };
        h.strip_left = flag("strip_left"), h.strip_right = flag("strip_right");
        out.push_back(std::move(h));
    } else {
        throw error(file + ": normalizer \"" + type + "\" is not supported for a Unigram model (supported: Precompiled, Replace, Strip, Sequence)");
    }
}

// tokenizer.json's pre_tokenizer for a Unigram model: Metaspace, alone or after WhitespaceSplit.
hf_metaspace read_metaspace(const json& p, const std::string& file) {
    if (!p.is_object() || !p.contains("type") || !p["type"].is_string())
        throw error(file + ": a Unigram model needs a Metaspace pre_tokenizer, got " + p.dump().substr(0, 80));
    const std::string type = p["type"].get<std::string>();
    if (type == "Sequence") {
        const json& list = json_field(p, "pretokenizers", file + " pre_tokenizer");
        if (!list.is_array() || list.size() != 2 || !list[0].is_object() || list[0].value("type", "") != "WhitespaceSplit")
            throw error(file + ": pre_tokenizer " + p.dump().substr(0, 120) + " is not supported (supported: Metaspace, WhitespaceSplit + Metaspace)");
        hf_metaspace m = read_metaspace(list[1], file);
        m.whitespace_split = true;
        return m;
    }
    if (type != "Metaspace") throw error(file + ": pre_tokenizer \"" + type + "\" is not supported for a Unigram model (supported: Metaspace)");
    hf_metaspace m;
    if (p.contains("replacement")) m.replacement = json_string(p, "replacement", file + " Metaspace");
    if (p.contains("prepend_scheme") && p["prepend_scheme"].is_string()) {
        const std::string s = p["prepend_scheme"].get<std::string>();
        if (s == "always") m.scheme = hf_metaspace::prepend::always;
        else if (s == "first") m.scheme = hf_metaspace::prepend::first;
        else if (s == "never") m.scheme = hf_metaspace::prepend::never;
        else throw error(file + ": Metaspace prepend_scheme \"" + s + "\" is not one of always, first, never");
    } else if (p.contains("add_prefix_space") && p["add_prefix_space"].is_boolean()) {
        m.scheme = p["add_prefix_space"].get<bool>() ? hf_metaspace::prepend::always : hf_metaspace::prepend::never;
    }
    if (p.contains("split") && p["split"].is_boolean()) m.split = p["split"].get<bool>();
    return m;
}

// tokenizer.json's post_processor → the template around a single text; also tells which ids are cls and sep.
special_template read_post_processor(const json& p, const tokenizer& t, const std::string& file, special_tokens& found) {
    if (p.is_null()) return {};
    if (!p.is_object() || !p.contains("type") || !p["type"].is_string()) throw error(file + ": post_processor must be an object with a type");
    const std::string type = p["type"].get<std::string>();
    auto token = [&](const json& pair, const char* what) {  // ["[CLS]", 101]
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_number_integer())
            throw error(file + ": post_processor." + what + " must be [token, id]");
        const int64_t id = pair[1].get<int64_t>();
        if (id < 0 || id >= t.vocab_size()) throw error(file + ": post_processor." + what + " id " + std::to_string(id) + " is not in the vocabulary");
        return int32_t(id);
    };
    if (type == "BertProcessing" || type == "RobertaProcessing") {
        found.cls = token(json_field(p, "cls", file + " post_processor"), "cls");
        found.sep = token(json_field(p, "sep", file + " post_processor"), "sep");
        return type == "BertProcessing" ? special_template::bert(found.cls, found.sep) : special_template::roberta(found.cls, found.sep);
    }
    if (type == "TemplateProcessing") {
        const json& single = json_field(p, "single", file + " post_processor");
        const json& specials = p.contains("special_tokens") ? p["special_tokens"] : json::object();
        if (!single.is_array() || !specials.is_object()) throw error(file + ": post_processor TemplateProcessing is malformed");
        // a template's pieces → the special ids before, between and after the texts ($A, $B), and $B's type
        auto read = [&](const json& tmpl, std::vector<int32_t>* parts[3], int32_t* type_b) {
            int at = 0;
            for (const json& piece : tmpl) {
                if (piece.is_object() && piece.contains("Sequence")) {
                    const json& q = piece["Sequence"];
                    if (type_b && q.is_object() && q.contains("id") && q["id"] == "B" && q.contains("type_id") && q["type_id"].is_number_integer())
                        *type_b = int32_t(std::clamp<int64_t>(q["type_id"].get<int64_t>(), 0, 1023));
                    at = std::min(at + 1, 2);
                    continue;
                }
                if (!piece.is_object() || !piece.contains("SpecialToken") || !piece["SpecialToken"].is_object())
                    throw error(file + ": post_processor template piece " + piece.dump().substr(0, 60) + " is not understood");
                const std::string name = json_string(piece["SpecialToken"], "id", file + " post_processor");
                if (!specials.contains(name) || !specials[name].is_object() || !specials[name].contains("ids") || !specials[name]["ids"].is_array())
                    throw error(file + ": post_processor names special token \"" + name + "\" without its ids");
                for (const json& id : specials[name]["ids"]) {
                    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= t.vocab_size())
                        throw error(file + ": post_processor special token \"" + name + "\" has id " + id.dump() + ", not in the vocabulary");
                    parts[at]->push_back(int32_t(id.get<int64_t>()));
                }
            }
        };
        special_template out;
        std::vector<int32_t> unused;
        std::vector<int32_t>* single_parts[3] = {&out.before, &out.after, &unused};
        read(single, single_parts, nullptr);
        if (p.contains("pair") && p["pair"].is_array()) {
            std::vector<int32_t>* pair_parts[3] = {&out.pair_before, &out.pair_middle, &out.pair_after};
            read(p["pair"], pair_parts, &out.type_b);
            out.has_pair = true;
        }
        return out;
    }
    if (type == "ByteLevel") return {};  // offsets only (trim_offsets is read by the caller)
    if (type == "Sequence") {
        special_template out;
        const json& ps = json_field(p, "processors", file + " post_processor");
        if (!ps.is_array()) throw error(file + ": post_processor.processors must be a list");
        for (const json& q : ps)
            if (special_template t2 = read_post_processor(q, t, file, found); !t2.before.empty() || !t2.after.empty()) out = t2;
        return out;
    }
    throw error(file + ": post_processor type \"" + type + "\" is not supported (supported: BertProcessing, RobertaProcessing, TemplateProcessing, ByteLevel)");
}

// tokenizer.json's pre_tokenizer for a BPE model → the named pre-tokenizer it is: ByteLevel (GPT-2's expression), a
// Sequence of a Split with a known expression and a ByteLevel that only maps bytes (Llama 3, Qwen2), or a Sequence
// of Digits with individual_digits and ByteLevel (SmolLM, StarCoder).
pre_tokenizer read_pre_tokenizer(const json& p, const std::string& file) {
    if (p.is_null()) throw error(file + ": a BPE model without a pre_tokenizer is not supported");
    auto type_of = [](const json& q) { return q.is_object() && q.contains("type") && q["type"].is_string() ? q["type"].get<std::string>() : ""; };
    auto flag = [](const json& q, const char* k, bool dflt) { return q.contains(k) && q[k].is_boolean() ? q[k].get<bool>() : dflt; };
    // ByteLevel: use_regex (true unless it says false) is whether it splits with GPT-2's expression itself
    auto byte_level = [&](const json& q, bool use_regex) {
        if (flag(q, "add_prefix_space", false)) throw error(file + ": ByteLevel add_prefix_space = true is not supported");
        if (flag(q, "use_regex", true) != use_regex)
            throw error(file + ": a ByteLevel pre-tokenizer " + (use_regex ? "without its regex is not supported here" : "with use_regex = true after a Split is not supported"));
    };
    const std::string type = type_of(p);
    if (type == "ByteLevel") {
        byte_level(p, true);
        return pre_tokenizer::gpt2;
    }
    if (type == "Sequence" && p.contains("pretokenizers") && p["pretokenizers"].is_array()) {
        const json& list = p["pretokenizers"];
        if (list.size() == 1) return read_pre_tokenizer(list[0], file);
        if (list.size() == 2 && type_of(list[1]) == "ByteLevel") {
            const json& first = list[0];
            const std::string t = type_of(first);
            if (t == "Split") {
                if (!first.contains("pattern") || !first["pattern"].is_object() || !first["pattern"].contains("Regex") || !first["pattern"]["Regex"].is_string())
                    throw error(file + ": Split pre-tokenizer " + first.dump().substr(0, 120) + " has no Regex pattern");
                const std::string re = first["pattern"]["Regex"].get<std::string>();
                const std::optional<pre_tokenizer> kind = pre_tokenizer_for_pattern(re);
                if (!kind) throw error(file + ": pre-tokenizer pattern " + json(re).dump().substr(0, 120) + " is not one this engine knows");
                const std::string behavior = first.contains("behavior") && first["behavior"].is_string() ? first["behavior"].get<std::string>() : "";
                if (behavior != "Isolated" || flag(first, "invert", false))
                    throw error(file + ": Split pre-tokenizer with behavior \"" + behavior + "\"" + (flag(first, "invert", false) ? " and invert" : "") +
                                " is not supported (supported: Isolated, invert false)");
                byte_level(list[1], false);
                return *kind;
            }
            if (t == "Digits") {
                if (!flag(first, "individual_digits", false)) throw error(file + ": a Digits pre-tokenizer without individual_digits is not supported");
                byte_level(list[1], true);
                return pre_tokenizer::smollm;
            }
        }
        std::string types;
        for (const json& q : list) types += (types.empty() ? "" : ", ") + type_of(q);
        throw error(file + ": pre-tokenizer Sequence [" + types + "] is not supported (supported: [Split, ByteLevel], [Digits, ByteLevel], [ByteLevel])");
    }
    throw error(file + ": pre_tokenizer " + p.dump().substr(0, 80) + " is not supported for BPE (supported: ByteLevel and the known Split patterns)");
}

// tokenizer.json's BertNormalizer (or none: BERT's defaults)
wordpiece_options bert_normalizer(const json& j, const std::string& file) {
    wordpiece_options opt;
    if (!j.contains("normalizer") || j["normalizer"].is_null()) return opt;
    const json& n = j["normalizer"];
    if (!n.is_object() || !n.contains("type") || n["type"] != "BertNormalizer")
        throw error(file + ": normalizer " + n.dump().substr(0, 60) + " is not supported (only BertNormalizer)");
    auto flag = [&](const char* k, bool d) { return n.contains(k) && n[k].is_boolean() ? n[k].get<bool>() : d; };
    opt.clean_text = flag("clean_text", true);
    opt.handle_chinese_chars = flag("handle_chinese_chars", true);
    opt.lowercase = flag("lowercase", true);
    if (n.contains("strip_accents") && n["strip_accents"].is_boolean()) opt.strip_accents = n["strip_accents"].get<bool>();
    return opt;
}

std::unique_ptr<tokenizer> tokenizer_json(std::string_view text, const std::string& file, tokenizer_config cfg) {
    const json j = parse_json_strict(text, file, kMaxTokenizerFile);
    if (!j.is_object()) throw error(file + ": must be a JSON object");
    const json& model = json_field(j, "model", file);
    if (!model.is_object()) throw error(file + ": \"model\" must be an object");
    const std::string type = model.contains("type") ? json_string(model, "type", file + " model") : "";
    struct added_token {
        std::string content;
        int32_t id;
        bool special, lstrip, rstrip;
    };
    std::vector<added_token> added;
    if (j.contains("added_tokens")) {
        if (!j["added_tokens"].is_array()) throw error(file + ": added_tokens must be a list");
        for (const json& a : j["added_tokens"]) {
            if (!a.is_object()) throw error(file + ": added_tokens entries must be objects");
            const std::string content = json_string(a, "content", file + " added token");
            if (content.empty() || content.size() > 1024) throw error(file + ": added token content must be 1 to 1024 bytes");
            const bool special = !a.contains("special") || !a["special"].is_boolean() || a["special"].get<bool>();
            auto flag = [&](const char* k) { return a.contains(k) && a[k].is_boolean() && a[k].get<bool>(); };
            added.push_back({content, int32_t(json_int(a, "id", file + " added token \"" + content + "\"", 0, 1 << 22)), special, flag("lstrip"),
                             flag("rstrip")});
        }
    }
    const json& vocab = json_field(model, "vocab", file + " model");
    std::unique_ptr<tokenizer> tok;
    if (type == "WordPiece") {
        if (!vocab.is_object()) throw error(file + ": model.vocab must be an object of token → id");
        std::vector<std::string> tokens(vocab.size());
        std::vector<bool> seen(vocab.size(), false);
        for (auto it = vocab.begin(); it != vocab.end(); ++it) {
            if (!it.value().is_number_integer()) throw error(file + ": id of \"" + it.key() + "\" is not an integer");
            const int64_t id = it.value().get<int64_t>();
            if (id < 0 || id >= int64_t(vocab.size()) || seen[size_t(id)])
                throw error(file + ": WordPiece ids must be 0 … " + std::to_string(vocab.size() - 1) + " without gaps or repeats (\"" + it.key() +
                            "\" has " + std::to_string(id) + ")");
            seen[size_t(id)] = true;
            tokens[size_t(id)] = it.key();
        }
        wordpiece_options opt;
        if (model.contains("max_input_chars_per_word"))
            opt.max_input_chars_per_word = int(json_int(model, "max_input_chars_per_word", file + " model", 0, 1 << 20));
        if (model.contains("continuing_subword_prefix")) opt.continuing_subword_prefix = json_string(model, "continuing_subword_prefix", file);
        if (model.contains("unk_token")) opt.unk_token = json_string(model, "unk_token", file + " model");
        const wordpiece_options basic = bert_normalizer(j, file);
        opt.clean_text = basic.clean_text;
        opt.handle_chinese_chars = basic.handle_chinese_chars;
        opt.lowercase = basic.lowercase;
        opt.strip_accents = basic.strip_accents;
        tok = std::make_unique<wordpiece_tokenizer>(std::move(tokens), opt, file);
    } else if (type == "BPE") {
        if (!vocab.is_object()) throw error(file + ": model.vocab must be an object of token → id");
        if (vocab.size() > kMaxTokens) throw error(file + ": more than " + std::to_string(kMaxTokens) + " tokens");
        std::unordered_map<std::string, int32_t> v;
        for (auto it = vocab.begin(); it != vocab.end(); ++it) {
            if (!it.value().is_number_integer()) throw error(file + ": id of \"" + it.key() + "\" is not an integer");
            v[it.key()] = int32_t(json_int(vocab, it.key().c_str(), file + " model.vocab", 0, 1 << 22));
        }
        std::vector<std::pair<std::string, std::string>> merges;
        const json& m = json_field(model, "merges", file + " model");
        if (!m.is_array()) throw error(file + ": model.merges must be a list");
        for (const json& e : m) {
            if (e.is_string()) {
                const std::string s = e.get<std::string>();
                const size_t sp = s.find(' ');
                if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos) throw error(file + ": merge \"" + s + "\" is not two tokens");
                merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
            } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
                merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
            } else {
                throw error(file + ": merge " + e.dump().substr(0, 40) + " is not two tokens");
            }
        }
        const std::string suffix = model.contains("end_of_word_suffix") && model["end_of_word_suffix"].is_string() ? model["end_of_word_suffix"].get<std::string>() : "";
        if (!suffix.empty()) {  // GPT-1's: BertNormalizer + BertPreTokenizer, then BPE with the suffix on each word's end
            wordpiece_options basic = bert_normalizer(j, file);
            if (j.contains("pre_tokenizer") && !j["pre_tokenizer"].is_null() &&
                !(j["pre_tokenizer"].is_object() && j["pre_tokenizer"].contains("type") && j["pre_tokenizer"]["type"] == "BertPreTokenizer"))
                throw error(file + ": pre_tokenizer " + j["pre_tokenizer"].dump().substr(0, 60) + " is not supported with end_of_word_suffix (only BertPreTokenizer)");
            tok = std::make_unique<word_bpe_tokenizer>(v, merges, basic, suffix, file);
        } else {
        // NFC (Qwen2's, ModernBERT's), alone or as a Sequence of it; no other normalizer for byte-level BPE
        bool nfc = false;
        if (j.contains("normalizer") && !j["normalizer"].is_null()) {
            const json& n = j["normalizer"];
            auto is_nfc = [](const json& q) { return q.is_object() && q.contains("type") && q["type"] == "NFC"; };
            const json* list = n.is_object() && n.contains("type") && n["type"] == "Sequence" && n.contains("normalizers") ? &n["normalizers"] : nullptr;
            nfc = is_nfc(n) || (list && list->is_array() && !list->empty() && std::all_of(list->begin(), list->end(), is_nfc));
            if (!nfc) throw error(file + ": normalizer " + n.dump().substr(0, 60) + " is not supported for BPE (only NFC)");
        }
        std::vector<std::pair<std::string, int32_t>> beyond;  // added tokens without a vocabulary id of their own
        for (auto& a : added)
            if (!v.count(a.content)) beyond.emplace_back(a.content, a.id);
        auto bpe = std::make_unique<bpe_tokenizer>(v, merges, beyond, read_pre_tokenizer(j.contains("pre_tokenizer") ? j["pre_tokenizer"] : json(), file), file);
        bpe->set_ignore_merges(model.contains("ignore_merges") && model["ignore_merges"] == true);  // Llama 3's has it
        bpe->set_nfc(nfc);
        tok = std::move(bpe);
        }
    } else if (type == "Unigram") {
        if (!vocab.is_array() || vocab.empty()) throw error(file + ": a Unigram model.vocab must be a non-empty list of [piece, score]");
        if (vocab.size() > kMaxTokens) throw error(file + ": more than " + std::to_string(kMaxTokens) + " tokens");
        sentencepiece_model m;
        m.byte_fallback = model.contains("byte_fallback") && model["byte_fallback"].is_boolean() && model["byte_fallback"].get<bool>();
        for (const json& e : vocab) {
            if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
                throw error(file + ": model.vocab entry " + e.dump().substr(0, 60) + " is not [piece, score]");
            sentencepiece_piece p{e[0].get<std::string>(), float(e[1].get<double>()), piece_type::normal};
            if (p.text.size() > kMaxTokenBytes) throw error(file + ": a piece of " + std::to_string(p.text.size()) + " bytes, over the limit of " + std::to_string(kMaxTokenBytes));
            m.pieces.push_back(std::move(p));
        }
        if (model.contains("unk_id") && !model["unk_id"].is_null())
            m.pieces.at(size_t(json_int(model, "unk_id", file + " model", 0, int64_t(m.pieces.size()) - 1))).type = piece_type::unknown;
        for (auto& a : added)
            if (a.special && a.id < int32_t(m.pieces.size()) && m.pieces[size_t(a.id)].text == a.content && m.pieces[size_t(a.id)].type == piece_type::normal)
                m.pieces[size_t(a.id)].type = piece_type::control;
        if (m.byte_fallback)
            for (auto& p : m.pieces)
                if (p.type == piece_type::normal && p.text.size() == 6 && p.text.rfind("<0x", 0) == 0 && p.text.back() == '>' &&
                    std::isxdigit(uint8_t(p.text[3])) && std::isxdigit(uint8_t(p.text[4])) && !std::islower(uint8_t(p.text[3])) && !std::islower(uint8_t(p.text[4])))
                    p.type = piece_type::byte;
        std::vector<hf_normalizer> normalizers;
        read_unigram_normalizer(j.contains("normalizer") ? j["normalizer"] : json(), normalizers, file);
        const hf_metaspace ms = read_metaspace(j.contains("pre_tokenizer") ? j["pre_tokenizer"] : json(), file);
        tok = std::make_unique<sentencepiece_tokenizer>(std::move(m), std::move(normalizers), ms, file);
    } else {
        throw error(file + ": tokenizer model type \"" + type + "\" is not supported (supported: WordPiece, BPE, Unigram)");
    }
    for (auto& a : added) {
        if (a.id >= tok->vocab_size() || tok->token(a.id) != a.content)
            throw error(file + ": added token \"" + a.content + "\" has id " + std::to_string(a.id) + ", which the vocabulary gives to another token");
        tok->add_token_text(a.content, a.id, a.special, a.lstrip, a.rstrip);
    }
    special_tokens found;
    const json post = j.contains("post_processor") ? j["post_processor"] : json();
    const special_template tmpl = read_post_processor(post, *tok, file, found);
    // RobertaProcessing / ByteLevel with trim_offsets (alone or in a Sequence): offsets without leading spaces
    auto trims = [](const json& q) { return q.is_object() && q.contains("trim_offsets") && q["trim_offsets"] == true; };
    bool trim = trims(post);
    if (post.is_object() && post.contains("processors") && post["processors"].is_array())
        for (const json& q : post["processors"]) trim = trim || trims(q);
    tok->set_trim_offsets(trim && tok->is_byte_level());
    assign_roles(*tok, cfg, file, found);
    tok->set_template(tmpl);
    return tok;
}

std::unique_ptr<tokenizer> wordpiece_from_vocab(std::string_view text, wordpiece_options opt, const tokenizer_config& cfg, const std::string& file) {
    if (cfg.lowercase) opt.lowercase = *cfg.lowercase;
    if (cfg.strip_accents) opt.strip_accents = *cfg.strip_accents;
    for (auto& [r, t] : cfg.roles)
        if (r->id == &special_tokens::unk) opt.unk_token = t;
    auto tok = vocab_txt(text, opt, file);
    assign_roles(*tok, cfg, file);
    bert_template(*tok);
    return tok;
}

}  // namespace

std::vector<std::string> tokenizer_files(const std::vector<std::string>& available) {
    auto has = [&](const char* n) { return n && std::find(available.begin(), available.end(), n) != available.end(); };
    std::vector<std::string> out;
    for (auto& set : kSets)
        if (has(set[0]) && (!set[1] || has(set[1]))) {
            for (const char* n : set)
                if (n) out.push_back(n);
            for (const char* n : kOptional)
                if (has(n)) out.push_back(n);
            break;
        }
    return out;
}

std::vector<std::string> tokenizer_candidates() {
    std::vector<std::string> out;
    for (auto& set : kSets)
        for (const char* n : set)
            if (n) out.push_back(n);
    for (const char* n : kOptional) out.push_back(n);
    return out;
}

std::unique_ptr<tokenizer> load_tokenizer(const file_set& files) {
    const tokenizer_config cfg = read_config(files);
    if (files.has("tokenizer.json")) return tokenizer_json(files.text("tokenizer.json"), "tokenizer.json", cfg);
    if (files.has("vocab.txt")) return wordpiece_from_vocab(files.text("vocab.txt"), {}, cfg, "vocab.txt");
    if (files.has("vocab.json") && files.has("merges.txt")) {
        // GPT-1's: BERT's basic tokenizer, then BPE with "</w>" ending each word (OpenAIGPTTokenizer)
        auto vm = read_vocab_merges(files.text("vocab.json"), files.text("merges.txt"));
        const bool gpt1 = cfg.tokenizer_class.rfind("OpenAIGPT", 0) == 0 ||
                          (cfg.tokenizer_class.empty() && std::any_of(vm.vocab.begin(), vm.vocab.end(), [](auto& e) {
                               return e.first.size() > 4 && e.first.compare(e.first.size() - 4, 4, "</w>") == 0;
                           }));
        if (gpt1) {
            wordpiece_options basic;  // BasicTokenizer(do_lower_case=True)
            basic.lowercase = cfg.lowercase.value_or(true);
            auto tok = std::make_unique<word_bpe_tokenizer>(vm.vocab, vm.merges, basic, "</w>", "vocab.json");
            assign_roles(*tok, cfg, "vocab.json");
            return tok;
        }
        auto tok = gpt2_files(vm);  // the files as read above, not parsed a second time
        assign_roles(*tok, cfg, "vocab.json");
        // RoBERTa's files are GPT-2's format with <s> … </s> around every text (and offsets without the leading
        // space); GPT-2's vocabulary has neither token
        const bool roberta = cfg.tokenizer_class.rfind("Roberta", 0) == 0 || cfg.tokenizer_class.rfind("Bart", 0) == 0 ||
                             cfg.tokenizer_class.rfind("Longformer", 0) == 0 || (tok->token_id("<s>") && tok->token_id("</s>"));
        if (roberta && tok->special().cls >= 0 && tok->special().sep >= 0) {
            tok->set_template(special_template::roberta(tok->special().cls, tok->special().sep));
            tok->set_trim_offsets(true);
        }
        return tok;
    }
    if (files.has("source.spm") && files.has("vocab.json")) return marian_files(files, cfg);
    for (const char* name : {"sentencepiece.bpe.model", "spiece.model", "tokenizer.model"})
        if (files.has(name)) return sentencepiece_file(files.text(name), name, cfg);
    throw error("no tokenizer: expected tokenizer.json, vocab.txt, vocab.json + merges.txt, or a SentencePiece model (sentencepiece.bpe.model, "
                "spiece.model, tokenizer.model)");
}

std::unique_ptr<tokenizer> load_vocab_txt(std::string_view text, const wordpiece_options& opt, const std::string& file) {
    return wordpiece_from_vocab(text, opt, {}, file);
}

std::unique_ptr<tokenizer> load_gpt2_files(std::string_view vocab_json, std::string_view merges_txt) {
    auto tok = gpt2_files(read_vocab_merges(vocab_json, merges_txt));
    assign_roles(*tok, {}, "vocab.json");
    return tok;
}

std::unique_ptr<tokenizer> load_tokenizer_json(std::string_view text, const std::string& file) { return tokenizer_json(text, file, {}); }

std::unique_ptr<tokenizer> load_sentencepiece(std::string_view model, const std::string& file) { return sentencepiece_file(model, file, {}); }

}  // namespace wf
