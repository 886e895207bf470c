#include "tokenizer.h"

#include <algorithm>
#include <array>
#include <queue>
#include <tuple>

#include "json-util.h"
#include "tensor.h"
#include "unicode.h"

namespace wf {

namespace u = unicode;

// ----------------------------------------------------------------------------------------------------- common
const std::string& tokenizer::token(int32_t id) const {
    if (id < 0 || id >= int32_t(id_to_token_.size()))
        throw error("token id " + std::to_string(id) + " is out of range (vocabulary of " + std::to_string(id_to_token_.size()) + ")");
    return id_to_token_[size_t(id)];
}

std::optional<int32_t> tokenizer::token_id(const std::string& t) const {
    auto it = token_to_id_.find(t);
    if (it == token_to_id_.end()) return std::nullopt;
    return it->second;
}

bool tokenizer::is_special(int32_t id) const {
    for (auto& [s, i] : specials_)
        if (i == id) return true;
    return false;
}

std::vector<std::pair<std::string_view, int32_t>> tokenizer::split_special(std::string_view text) const {
    std::vector<std::pair<std::string_view, int32_t>> out;
    size_t start = 0, i = 0;
    while (i < text.size()) {
        bool hit = false;
        for (auto& [s, id] : specials_) {  // longest first
            if (!s.empty() && text.compare(i, s.size(), s) == 0) {
                if (i > start) out.emplace_back(text.substr(start, i - start), -1);
                out.emplace_back(text.substr(i, s.size()), id);
                i += s.size();
                start = i;
                hit = true;
                break;
            }
        }
        if (!hit) ++i;
    }
    if (start < text.size()) out.emplace_back(text.substr(start), -1);
    return out;
}

// -------------------------------------------------------------------------------------------------- WordPiece
namespace {

bool is_cjk(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||  // 0x2B920, as Hugging Face's bert.rs (Python: 0x2B820)
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}
bool bert_whitespace(char32_t c) { return c == '\t' || c == '\n' || c == '\r' || u::is_white_space(c); }
bool bert_control(char32_t c) { return c != '\t' && c != '\n' && c != '\r' && u::is_other(c); }
bool bert_punct(char32_t c) {
    if (c < 128) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
    return u::is_punctuation(c);
}

}  // namespace

wordpiece_tokenizer::wordpiece_tokenizer(std::vector<std::string> vocab, const wordpiece_options& opt, const std::string& source) : opt_(opt) {
    id_to_token_ = std::move(vocab);
    for (size_t i = 0; i < id_to_token_.size(); ++i) token_to_id_[id_to_token_[i]] = int32_t(i);  // a duplicate's later id wins
    auto need = [&](const char* t) {
        auto id = token_id(t);
        if (!id) throw error(source + ": the vocabulary has no " + t + " token");
        specials_.emplace_back(t, *id);
        return *id;
    };
    special_.unk = need("[UNK]");
    special_.cls = need("[CLS]");
    special_.sep = need("[SEP]");
    special_.pad = need("[PAD]");
    special_.mask = need("[MASK]");
    std::sort(specials_.begin(), specials_.end(), [](auto& a, auto& b) { return a.first.size() > b.first.size(); });
    if (opt_.max_input_chars_per_word < 0) throw error(source + ": max_input_chars_per_word must not be negative");
}

std::vector<std::u32string> wordpiece_tokenizer::words(std::string_view text) const {
    const std::u32string in = u::utf8_decode(text);
    std::u32string s;
    s.reserve(in.size());
    for (char32_t c : in) {
        if (opt_.clean_text) {
            if (c == 0 || c == 0xFFFD || bert_control(c)) continue;
            if (bert_whitespace(c)) c = ' ';
        }
        if (opt_.handle_chinese_chars && is_cjk(c)) {
            s += U' ';
            s += c;
            s += U' ';
        } else {
            s += c;
        }
    }
    if (opt_.strip_accents.value_or(opt_.lowercase)) {
        const std::u32string d = u::nfd(s);
        s.clear();
        for (char32_t c : d)
            if (u::general_category(c) != u::Mn) s += c;
    }
    if (opt_.lowercase) {
        std::u32string l;
        l.reserve(s.size());
        for (char32_t c : s) u::to_lower(c, l);
        s = std::move(l);
    }
    // BertPreTokenizer: split on whitespace, and every punctuation character is a word of its own
    std::vector<std::u32string> out;
    std::u32string cur;
    for (char32_t c : s) {
        if (bert_whitespace(c)) {
            if (!cur.empty()) out.push_back(std::move(cur)), cur.clear();
        } else if (bert_punct(c)) {
            if (!cur.empty()) out.push_back(std::move(cur)), cur.clear();
            out.emplace_back(1, c);
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
}

void wordpiece_tokenizer::word_ids(const std::u32string& word, std::vector<int32_t>& out) const {
    if (int64_t(word.size()) > opt_.max_input_chars_per_word) {
        out.push_back(special_.unk);
        return;
    }
    // the word in UTF-8 once, with the byte offset of every code point; candidate pieces are slices of it
    std::string utf8;
    std::vector<size_t> at;
    for (char32_t c : word) {
        at.push_back(utf8.size());
        u::utf8_append(c, utf8);
    }
    at.push_back(utf8.size());
    const size_t mark = out.size();
    std::string piece;  // "##" + slice, reused
    size_t start = 0;
    while (start < word.size()) {
        size_t end = word.size();
        int32_t found = -1;
        while (start < end) {
            const std::string_view slice(utf8.data() + at[start], at[end] - at[start]);
            std::unordered_map<std::string, int32_t, sv_hash, std::equal_to<>>::const_iterator it;
            if (start == 0) {
                it = token_to_id_.find(slice);
            } else {
                piece.assign(opt_.continuing_subword_prefix);
                piece.append(slice);
                it = token_to_id_.find(std::string_view(piece));
            }
            if (it != token_to_id_.end()) {
                found = it->second;
                break;
            }
            --end;
        }
        if (found < 0) {  // some part has no piece: the whole word is unknown
            out.resize(mark);
            out.push_back(special_.unk);
            return;
        }
        out.push_back(found);
        start = end;
    }
}

std::vector<int32_t> wordpiece_tokenizer::encode(std::string_view text, bool add_special_tokens) const {
    std::vector<int32_t> ids;
    if (add_special_tokens) ids.push_back(special_.cls);
    for (auto& [seg, special] : split_special(text)) {
        if (special >= 0) {
            ids.push_back(special);
            continue;
        }
        for (const auto& w : words(seg)) word_ids(w, ids);
    }
    if (add_special_tokens) ids.push_back(special_.sep);
    return ids;
}

std::string wordpiece_tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
    std::string out;
    const std::string& pre = opt_.continuing_subword_prefix;
    bool first = true;
    for (int32_t id : ids) {
        const std::string& t = token(id);
        if (skip_special_tokens && is_special(id)) continue;
        const bool piece = t.size() >= pre.size() && t.compare(0, pre.size(), pre) == 0;
        // as Hugging Face's WordPiece decoder: the first token is kept whole, later pieces join their word
        if (first) out += t;
        else out += piece ? t.substr(pre.size()) : " " + t;
        first = false;
    }
    // clean_up_tokenization_spaces, as transformers does
    static const std::pair<const char*, const char*> fixes[] = {{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
                                                               {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (auto [from, to] : fixes) {
        std::string r;
        const std::string f = from;
        size_t pos = 0, hit;
        while ((hit = out.find(f, pos)) != std::string::npos) {
            r.append(out, pos, hit - pos);
            r += to;
            pos = hit + f.size();
        }
        r.append(out, pos, std::string::npos);
        out = std::move(r);
    }
    return out;
}

// ------------------------------------------------------------------------------------------- byte-level BPE
namespace {

// GPT-2's reversible byte → printable code point map.
std::array<char32_t, 256> byte_to_unicode() {
    std::array<char32_t, 256> m{};
    std::array<bool, 256> direct{};
    for (int b = '!'; b <= '~'; ++b) direct[size_t(b)] = true;
    for (int b = 0xA1; b <= 0xAC; ++b) direct[size_t(b)] = true;
    for (int b = 0xAE; b <= 0xFF; ++b) direct[size_t(b)] = true;
    int n = 0;
    for (int b = 0; b < 256; ++b) m[size_t(b)] = direct[size_t(b)] ? char32_t(b) : char32_t(256 + n++);
    return m;
}

bool gpt2_other(char32_t c) { return !u::is_white_space(c) && !u::is_letter(c) && !u::is_number(c); }

}  // namespace

std::vector<std::string> bpe_tokenizer::pre_tokenize(std::string_view text) {
    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+   — matched by hand, in that order
    const std::u32string s = u::utf8_decode(text);
    const size_t n = s.size();
    std::vector<std::string> out;
    auto run = [&](size_t from, bool (*pred)(char32_t)) {
        size_t j = from;
        while (j < n && pred(s[j])) ++j;
        return j;
    };
    size_t i = 0;
    while (i < n) {
        const char32_t c = s[i];
        size_t end = 0;
        if (c == '\'' && i + 1 < n) {
            const char32_t d = s[i + 1];
            if (d == 's' || d == 't' || d == 'm' || d == 'd') end = i + 2;
            else if (i + 2 < n && ((d == 'r' && s[i + 2] == 'e') || (d == 'v' && s[i + 2] == 'e') || (d == 'l' && s[i + 2] == 'l'))) end = i + 3;
        }
        const size_t body = (c == ' ' && i + 1 < n) ? i + 1 : i;  // the optional leading space
        if (!end && u::is_letter(s[body])) end = run(body, [](char32_t x) { return u::is_letter(x); });
        if (!end && u::is_number(s[body])) end = run(body, [](char32_t x) { return u::is_number(x); });
        if (!end && gpt2_other(s[body])) end = run(body, gpt2_other);
        if (!end) {  // whitespace: \s+(?!\S) leaves the last space to the next word, else \s+
            const size_t e = run(i, [](char32_t x) { return u::is_white_space(x); });
            end = (e == n || e - i < 2) ? e : e - 1;
        }
        out.push_back(u::utf8_encode(std::u32string_view(s).substr(i, end - i)));
        i = end;
    }
    return out;
}

bpe_tokenizer::bpe_tokenizer(const std::unordered_map<std::string, int32_t>& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                             const std::vector<std::pair<std::string, int32_t>>& added, const std::string& source) {
    int32_t max_id = -1;
    for (auto& [t, id] : vocab) {
        if (id < 0 || id > (1 << 22)) throw error(source + ": token \"" + t + "\" has id " + std::to_string(id) + ", outside [0, 4194304]");
        max_id = std::max(max_id, id);
    }
    for (auto& [t, id] : added) {
        if (id < 0 || id > (1 << 22)) throw error(source + ": added token \"" + t + "\" has id " + std::to_string(id));
        max_id = std::max(max_id, id);
    }
    id_to_token_.assign(size_t(max_id + 1), std::string());
    std::vector<bool> seen(size_t(max_id + 1), false);
    for (auto& [t, id] : vocab) {
        if (seen[size_t(id)]) throw error(source + ": id " + std::to_string(id) + " is given to two tokens");
        seen[size_t(id)] = true;
        id_to_token_[size_t(id)] = t;
    }
    token_to_id_.insert(vocab.begin(), vocab.end());
    // token strings → raw bytes, through the inverse of the byte ↔ code point map
    const auto b2u = byte_to_unicode();
    std::unordered_map<char32_t, uint8_t> u2b;
    for (int b = 0; b < 256; ++b) u2b[b2u[size_t(b)]] = uint8_t(b);
    bytes_of_.resize(id_to_token_.size());
    for (size_t id = 0; id < id_to_token_.size(); ++id) {
        if (!seen[id]) continue;
        for (char32_t c : u::utf8_decode(id_to_token_[id])) {
            auto it = u2b.find(c);
            if (it == u2b.end()) {
                bytes_of_[id] = id_to_token_[id];  // not a byte-level string: decoded as its own text
                break;
            }
            bytes_of_[id] += char(it->second);
        }
    }
    for (int b = 0; b < 256; ++b) {
        std::string s;
        u::utf8_append(b2u[size_t(b)], s);
        auto it = token_to_id_.find(s);
        if (it == token_to_id_.end()) throw error(source + ": the vocabulary lacks the byte token for byte " + std::to_string(b));
        byte_token_[b] = it->second;
    }
    for (size_t r = 0; r < merges.size(); ++r) {
        auto a = token_to_id_.find(merges[r].first), b = token_to_id_.find(merges[r].second);
        auto ab = token_to_id_.find(merges[r].first + merges[r].second);
        if (a == token_to_id_.end() || b == token_to_id_.end() || ab == token_to_id_.end())
            throw error(source + ": merge " + std::to_string(r + 1) + " (\"" + merges[r].first + " " + merges[r].second +
                        "\") uses a token that is not in the vocabulary");
        merges_.emplace(uint64_t(uint32_t(a->second)) << 32 | uint32_t(b->second), std::pair{int32_t(r), ab->second});
    }
    for (auto& [t, id] : added) {
        if (!seen[size_t(id)]) {
            id_to_token_[size_t(id)] = t;
            bytes_of_[size_t(id)] = t;
            seen[size_t(id)] = true;
        }
        token_to_id_[t] = id;
        specials_.emplace_back(t, id);
    }
    std::sort(specials_.begin(), specials_.end(), [](auto& a, auto& b) { return a.first.size() > b.first.size(); });
    if (auto eot = token_id("<|endoftext|>")) special_.bos = special_.eos = special_.unk = *eot;
}

void bpe_tokenizer::bpe(std::string_view piece, std::vector<int32_t>& out) const {
    const int n = int(piece.size());
    std::vector<int32_t> id(static_cast<size_t>(n)), prev(static_cast<size_t>(n)), next(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
        id[size_t(k)] = byte_token_[uint8_t(piece[size_t(k)])];
        prev[size_t(k)] = k - 1;
        next[size_t(k)] = k + 1;
    }
    using entry = std::tuple<int32_t, int32_t, int32_t, int32_t>;  // rank, left position, left id, right id
    std::priority_queue<entry, std::vector<entry>, std::greater<entry>> heap;
    auto push = [&](int l) {
        const int r = next[size_t(l)];
        if (l < 0 || r >= n) return;
        auto it = merges_.find(uint64_t(uint32_t(id[size_t(l)])) << 32 | uint32_t(id[size_t(r)]));
        if (it != merges_.end()) heap.emplace(it->second.first, l, id[size_t(l)], id[size_t(r)]);
    };
    for (int k = 0; k + 1 < n; ++k) push(k);
    while (!heap.empty()) {
        const auto [rank, l, a, b] = heap.top();
        heap.pop();
        const int r = next[size_t(l)];
        if (id[size_t(l)] != a || r >= n || id[size_t(r)] != b) continue;  // stale
        id[size_t(l)] = merges_.at(uint64_t(uint32_t(a)) << 32 | uint32_t(b)).second;
        id[size_t(r)] = -1;
        next[size_t(l)] = next[size_t(r)];
        if (next[size_t(r)] < n) prev[size_t(next[size_t(r)])] = l;
        if (prev[size_t(l)] >= 0) push(prev[size_t(l)]);
        push(l);
    }
    for (int k = 0; k < n; k = next[size_t(k)]) out.push_back(id[size_t(k)]);
}

std::vector<int32_t> bpe_tokenizer::encode(std::string_view text, bool) const {
    std::vector<int32_t> ids;
    for (auto& [seg, special] : split_special(text)) {
        if (special >= 0) {
            ids.push_back(special);
            continue;
        }
        for (const std::string& piece : pre_tokenize(seg)) bpe(piece, ids);
    }
    return ids;  // GPT-2 adds no special tokens around a text
}

std::string bpe_tokenizer::token_bytes(int32_t id) const {
    token(id);  // range check
    return bytes_of_[size_t(id)];
}

std::string bpe_tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
    utf8_stream s;
    std::string out;
    for (int32_t id : ids) {
        if (skip_special_tokens && is_special(id)) continue;
        out += s.push(token_bytes(id));
    }
    return out + s.finish();
}

// ----------------------------------------------------------------------------------------------- UTF-8 stream
std::string utf8_stream::push(std::string_view bytes) {
    pending_.append(bytes);
    // keep back a trailing sequence that is a valid but incomplete start of a character
    size_t keep = 0;
    const size_t n = pending_.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto b = uint8_t(pending_[n - back]);
        if ((b & 0xC0) == 0x80) continue;  // continuation byte: look further back
        const size_t len = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 1;
        if (len > back && b >= 0xC2) keep = back;
        break;
    }
    std::string ready = pending_.substr(0, n - keep);
    pending_.erase(0, n - keep);
    return u::utf8_encode(u::utf8_decode(ready));  // ill-formed bytes become U+FFFD
}

std::string utf8_stream::finish() {
    std::string rest = u::utf8_encode(u::utf8_decode(pending_));
    pending_.clear();
    return rest;
}

// --------------------------------------------------------------------------------------------------- loaders
namespace {
constexpr int64_t kMaxTokenizerFile = 64ll << 20;
constexpr size_t kMaxTokens = 1 << 21;

void check_size(std::string_view text, const std::string& file) {
    if (int64_t(text.size()) > kMaxTokenizerFile)
        throw error(file + ": " + std::to_string(text.size()) + " bytes is over the limit of " + std::to_string(kMaxTokenizerFile));
}

void check_utf8(std::string_view text, const std::string& file) {
    if (u::utf8_encode(u::utf8_decode(text)) != text) throw error(file + ": invalid UTF-8");
}
}  // namespace

std::unique_ptr<tokenizer> load_vocab_txt(std::string_view text, const wordpiece_options& opt, const std::string& file) {
    check_size(text, file);
    check_utf8(text, file);
    std::vector<std::string> vocab;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        vocab.emplace_back(line);
        if (vocab.size() > kMaxTokens) throw error(file + ": more than " + std::to_string(kMaxTokens) + " tokens");
        start = end + 1;
    }
    return std::make_unique<wordpiece_tokenizer>(std::move(vocab), opt, file);
}

std::unique_ptr<tokenizer> load_gpt2_files(std::string_view vocab_json, std::string_view merges_txt) {
    check_size(merges_txt, "merges.txt");
    check_utf8(merges_txt, "merges.txt");
    const json v = parse_json_strict(vocab_json, "vocab.json", kMaxTokenizerFile);
    if (!v.is_object()) throw error("vocab.json: must be a JSON object of token → id");
    if (v.size() > kMaxTokens) throw error("vocab.json: more than " + std::to_string(kMaxTokens) + " tokens");
    std::unordered_map<std::string, int32_t> vocab;
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (!it.value().is_number_integer()) throw error("vocab.json: id of \"" + it.key() + "\" is not an integer");
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
    // GPT2TokenizerFast makes <|endoftext|> its special token (bos, eos and unk) when the vocabulary has it.
    std::vector<std::pair<std::string, int32_t>> added;
    if (auto it = vocab.find("<|endoftext|>"); it != vocab.end()) added.emplace_back(it->first, it->second);
    return std::make_unique<bpe_tokenizer>(std::move(vocab), merges, added, "vocab.json");
}

std::unique_ptr<tokenizer> load_tokenizer_json(std::string_view text, const std::string& file) {
    const json j = parse_json_strict(text, file, kMaxTokenizerFile);
    if (!j.is_object()) throw error(file + ": must be a JSON object");
    const json& model = json_field(j, "model", file);
    if (!model.is_object()) throw error(file + ": \"model\" must be an object");
    const std::string type = model.contains("type") ? json_string(model, "type", file + " model") : "";
    std::vector<std::pair<std::string, int32_t>> added;
    if (j.contains("added_tokens")) {
        if (!j["added_tokens"].is_array()) throw error(file + ": added_tokens must be a list");
        for (const json& a : j["added_tokens"]) {
            if (!a.is_object()) throw error(file + ": added_tokens entries must be objects");
            const std::string content = json_string(a, "content", file + " added token");
            if (content.empty() || content.size() > 1024) throw error(file + ": added token content must be 1 to 1024 bytes");
            added.emplace_back(content, int32_t(json_int(a, "id", file + " added token \"" + content + "\"", 0, 1 << 22)));
        }
    }
    const json& vocab = json_field(model, "vocab", file + " model");
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
        if (j.contains("normalizer") && !j["normalizer"].is_null()) {
            const json& n = j["normalizer"];
            if (!n.is_object() || !n.contains("type") || n["type"] != "BertNormalizer")
                throw error(file + ": normalizer " + n.dump().substr(0, 60) + " is not supported (only BertNormalizer)");
            auto flag = [&](const char* k, bool d) { return n.contains(k) && n[k].is_boolean() ? n[k].get<bool>() : d; };
            opt.clean_text = flag("clean_text", true);
            opt.handle_chinese_chars = flag("handle_chinese_chars", true);
            opt.lowercase = flag("lowercase", true);
            if (n.contains("strip_accents") && n["strip_accents"].is_boolean()) opt.strip_accents = n["strip_accents"].get<bool>();
        }
        return std::make_unique<wordpiece_tokenizer>(std::move(tokens), opt, file);
    }
    if (type == "BPE") {
        if (!vocab.is_object()) throw error(file + ": model.vocab must be an object of token → id");
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
        return std::make_unique<bpe_tokenizer>(std::move(v), merges, added, file);
    }
    throw error(file + ": tokenizer model type \"" + type + "\" is not supported (supported: WordPiece, BPE)");
}

}  // namespace wf
