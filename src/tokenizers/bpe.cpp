// Byte-level BPE (GPT-2 and its successors): a named pre-tokenizer splits the text, each piece's bytes map to
// printable code points, and merges apply by rank (a heap, O(n log n) per piece).
#include "tokenizers/bpe.h"

#include <algorithm>
#include <array>
#include <queue>
#include <tuple>

#include "core/error.h"
#include "core/unicode.h"

namespace wf {

namespace u = unicode;

namespace {

// The pre-tokenizers by the regular expression tokenizer.json's Split writes for them; each is matched by hand
// below. ByteLevel with use_regex is GPT-2's; smollm is no Split but Digits + ByteLevel (load.cpp).
constexpr std::pair<pre_tokenizer, std::string_view> kPatterns[] = {
    {pre_tokenizer::gpt2, R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"},
    {pre_tokenizer::llama3, R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
    {pre_tokenizer::qwen2, R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
};

// GGUF's tokenizer.ggml.pre values (llama.cpp's names, src/llama-vocab.cpp) whose Hugging Face pre-tokenizer is one
// of ours. llama.cpp's "default" is a chain of its own (punctuation runs first, then GPT-2's expression, then digit
// triples) that no Hugging Face tokenizer has; a byte-level vocabulary that says "default", or nothing (files from
// before the key), is GPT-2's, as llama.cpp tokenized them then.
constexpr std::pair<std::string_view, pre_tokenizer> kGgufNames[] = {
    {"default", pre_tokenizer::gpt2},     {"gpt-2", pre_tokenizer::gpt2},       {"phi-2", pre_tokenizer::gpt2},
    {"modern-bert", pre_tokenizer::gpt2},  // llama.cpp: src/llama-vocab.cpp maps "modern-bert" to LLAMA_VOCAB_PRE_TYPE_GPT2
    {"roberta-bpe", pre_tokenizer::gpt2},  // … and RoBERTa's (convert_hf_to_gguf.py's RobertaModel) too
    {"llama-bpe", pre_tokenizer::llama3}, {"llama3", pre_tokenizer::llama3},    {"llama-v3", pre_tokenizer::llama3},
    {"qwen2", pre_tokenizer::qwen2},      {"smollm", pre_tokenizer::smollm},    {"starcoder", pre_tokenizer::smollm},
};

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

// The regular expressions share one shape, alternatives tried in this order at each position (leftmost-first, as
// Hugging Face's regex engine): contractions | letters | numbers | punctuation | newlines | whitespace. They differ
// in these rules:
struct regex_rules {
    bool any_case;   // (?i:'s|'t|…): contractions in either case (llama3) or lower case only (gpt2)
    bool any_lead;   // [^\r\n\p{L}\p{N}]?\p{L}+: a letter run takes any one character before it but CR, LF or a
                     // number (llama3); ' ?\p{L}+': only a space (gpt2)
    int max_digits;  // \p{N}{1,max_digits}, no leading space (llama3: 3, qwen2: 1); 0: ' ?\p{N}+' (gpt2)
    bool newlines;   // punctuation takes the CR/LF after it ([\r\n]*), and \s*[\r\n]+ comes before the whitespace
                     // rules (llama3)
};
constexpr regex_rules kGpt2Rules{false, false, 0, false}, kLlama3Rules{true, true, 3, true}, kQwen2Rules{true, true, 1, true};

bool is_other(char32_t c) { return !u::is_white_space(c) && !u::is_letter(c) && !u::is_number(c); }  // [^\s\p{L}\p{N}]
bool is_newline(char32_t c) { return c == '\r' || c == '\n'; }

// c as the contraction letter it matches: under (?i) ASCII capitals fold to lower case, and so does U+017F (long s)
// to 's' (Unicode's simple case folding, which Hugging Face's regex engines use; it folds nothing else to d l m r s t v e)
char32_t contraction_letter(char32_t c, bool any_case) {
    if (!any_case) return c;
    if (c >= 'A' && c <= 'Z') return c + 32;
    return c == 0x17F ? char32_t('s') : c;
}

// Appends the pieces of s (a whole text, or the stretch between two isolated digits: lookaheads end there).
void split_by_rules(std::u32string_view s, const regex_rules& r, std::vector<std::string>& out) {
    const size_t n = s.size();
    auto run = [&](size_t from, auto pred, size_t limit = SIZE_MAX) {  // the end of the run of pred from `from`
        size_t j = from;
        while (j < n && j - from < limit && pred(s[j])) ++j;
        return j;
    };
    auto letter = [](char32_t x) { return u::is_letter(x); };
    auto number = [](char32_t x) { return u::is_number(x); };
    for (size_t i = 0; i < n;) {
        const char32_t c = s[i];
        size_t end = 0;
        // 's|'t|'re|'ve|'m|'ll|'d
        if (c == '\'' && i + 1 < n) {
            const char32_t d = contraction_letter(s[i + 1], r.any_case), e = i + 2 < n ? contraction_letter(s[i + 2], r.any_case) : 0;
            if (d == 's' || d == 't' || d == 'm' || d == 'd') end = i + 2;
            else if ((d == 'r' && e == 'e') || (d == 'v' && e == 'e') || (d == 'l' && e == 'l')) end = i + 3;
        }
        // where s[i] is none of the runs below, it may be the one character a run takes before it (then s[i + 1]
        // starts the run): any but CR, LF or a number before letters under any_lead, else only a space
        const bool next = i + 1 < n;
        // letters: [^\r\n\p{L}\p{N}]?\p{L}+ or ' ?\p{L}+'
        if (!end && u::is_letter(c)) end = run(i, letter);
        if (!end && next && u::is_letter(s[i + 1]) && (r.any_lead ? !is_newline(c) && !u::is_number(c) : c == ' ')) end = run(i + 1, letter);
        // numbers: \p{N}{1,max_digits} or ' ?\p{N}+'
        if (!end && u::is_number(c)) end = r.max_digits ? run(i, number, size_t(r.max_digits)) : run(i, number);
        if (!end && !r.max_digits && next && c == ' ' && u::is_number(s[i + 1])) end = run(i + 1, number);
        // punctuation: ' ?[^\s\p{L}\p{N}]+', then [\r\n]* where the rules say so
        if (!end && (is_other(c) || (next && c == ' ' && is_other(s[i + 1])))) {
            end = run(is_other(c) ? i : i + 1, is_other);
            if (r.newlines) end = run(end, is_newline);
        }
        if (!end) {  // s[i] is whitespace: the others cannot start here
            const size_t e = run(i, [](char32_t x) { return u::is_white_space(x); });
            size_t last_newline = e;
            if (r.newlines)  // \s*[\r\n]+: the run up to its last CR or LF, when it has one
                for (size_t k = i; k < e; ++k)
                    if (is_newline(s[k])) last_newline = k;
            if (last_newline < e) end = last_newline + 1;
            else end = (e == n || e - i < 2) ? e : e - 1;  // \s+(?!\S) leaves the last space to the next piece, else \s+
        }
        out.push_back(u::utf8_encode(s.substr(i, end - i)));
        i = end;
    }
}

// Hugging Face's Digits pre-tokenizer with individual_digits (char::is_numeric: \p{N}), then GPT-2's expression on
// each stretch between the digits.
void split_digits_then_gpt2(std::u32string_view s, std::vector<std::string>& out) {
    size_t from = 0;
    for (size_t k = 0; k <= s.size(); ++k) {
        if (k < s.size() && !u::is_number(s[k])) continue;
        split_by_rules(s.substr(from, k - from), kGpt2Rules, out);
        if (k < s.size()) out.push_back(u::utf8_encode(s.substr(k, 1)));
        from = k + 1;
    }
}
}  // namespace

std::vector<std::string> bpe_tokenizer::pre_tokenize(std::string_view text, pre_tokenizer kind) {
    const std::u32string s = u::utf8_decode(text);  // ill-formed bytes are U+FFFD, as Hugging Face receives them
    std::vector<std::string> out;
    switch (kind) {
    case pre_tokenizer::gpt2: split_by_rules(s, kGpt2Rules, out); break;
    case pre_tokenizer::llama3: split_by_rules(s, kLlama3Rules, out); break;
    case pre_tokenizer::qwen2: split_by_rules(s, kQwen2Rules, out); break;
    case pre_tokenizer::smollm: split_digits_then_gpt2(s, out); break;
    }
    return out;
}

std::optional<pre_tokenizer> pre_tokenizer_for_pattern(std::string_view regex) {
    for (const auto& [kind, pattern] : kPatterns)
        if (regex == pattern) return kind;
    return std::nullopt;
}

std::optional<pre_tokenizer> pre_tokenizer_for_gguf(std::string_view name) {
    for (const auto& [n, kind] : kGgufNames)
        if (name == n) return kind;
    return std::nullopt;
}

std::string gguf_pre_tokenizer_names() {
    std::string names;
    for (const auto& [n, kind] : kGgufNames) names += (names.empty() ? "" : ", ") + std::string(n);
    return names;
}

const char* pre_tokenizer_name(pre_tokenizer kind) {
    switch (kind) {
    case pre_tokenizer::gpt2: return "gpt2";
    case pre_tokenizer::llama3: return "llama3";
    case pre_tokenizer::qwen2: return "qwen2";
    case pre_tokenizer::smollm: return "smollm";
    }
    return "?";
}

bpe_tokenizer::bpe_tokenizer(const std::unordered_map<std::string, int32_t>& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                             const std::vector<std::pair<std::string, int32_t>>& added, pre_tokenizer pre, const std::string& source)
    : pre_(pre) {
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
    for (auto& [t, id] : added) {  // ids the vocabulary lacks (added tokens beyond it)
        if (!seen[size_t(id)]) {
            id_to_token_[size_t(id)] = t;
            bytes_of_[size_t(id)] = t;
            seen[size_t(id)] = true;
        }
        token_to_id_[t] = id;
    }
}

void bpe_tokenizer::bpe(std::string_view piece, std::vector<int32_t>& out, std::vector<token_span>* offsets, int32_t at) const {
    const int n = int(piece.size());
    auto emit = [&](int32_t id, int32_t begin, int32_t end) {  // begin, end: byte positions in the piece
        out.push_back(id);
        if (!offsets) return;
        // a token that holds part of a character's bytes spans the whole character, as tokenizers aligns each byte
        // to the character it came from (both halves of "É" get its offsets)
        auto continuation = [&](int32_t k) { return k > 0 && k < n && (uint8_t(piece[size_t(k)]) & 0xC0) == 0x80; };
        while (continuation(begin)) --begin;
        while (continuation(end)) ++end;
        token_span span{at + begin, at + end};
        if (trim_offsets_)  // RoBERTa: the span leaves out the token's leading spaces (unless it is nothing else)
            while (span.begin + 1 < span.end && piece[size_t(span.begin - at)] == ' ') ++span.begin;
        offsets->push_back(span);
    };
    if (ignore_merges_ && n > 1) {  // the whole piece, when the vocabulary has it as one token
        static const std::array<char32_t, 256> b2u = byte_to_unicode();
        std::string key;
        for (char ch : piece) u::utf8_append(b2u[uint8_t(ch)], key);
        const auto it = token_to_id_.find(key);
        if (it != token_to_id_.end() && bytes_of_[size_t(it->second)] == piece) return emit(it->second, 0, n);
    }
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
    for (int k = 0; k < n; k = next[size_t(k)]) emit(id[size_t(k)], k, next[size_t(k)]);
}

void bpe_tokenizer::encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets,
                                std::vector<int32_t>* words) const {
    if (!nfc_ || std::all_of(text.begin(), text.end(), [](char c) { return uint8_t(c) < 0x80; })) return encode_normalized(text, out, offsets, words);
    // NFC, each composed character remembering the bytes of the text it came from
    std::vector<u::aligned_char> chars;
    for (size_t i = 0; i < text.size();) {
        const size_t at = i;
        const char32_t c = u::utf8_next(text, i);
        chars.push_back({c, int32_t(at), int32_t(i)});
    }
    std::string norm;
    std::vector<token_span> from;  // per byte of norm: the text's bytes it stands for
    for (const u::aligned_char& a : u::nfc(chars)) {
        const size_t n0 = norm.size();
        u::utf8_append(a.c, norm);
        from.insert(from.end(), norm.size() - n0, token_span{a.begin, a.end});
    }
    const size_t first = offsets ? offsets->size() : 0;
    encode_normalized(norm, out, offsets, words);
    if (offsets)
        for (size_t i = first; i < offsets->size(); ++i) {
            token_span& o = (*offsets)[i];
            const int32_t b = o.begin < int32_t(from.size()) ? from[size_t(o.begin)].begin : int32_t(text.size());
            const int32_t e = o.end > o.begin && o.end <= int32_t(from.size()) ? from[size_t(o.end - 1)].end : b;
            o = {b, std::max(b, e)};
        }
}

void bpe_tokenizer::encode_normalized(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets,
                                      std::vector<int32_t>* words) const {
    // The pieces are the text cut in order (ill-formed UTF-8 bytes come back as U+FFFD: offsets then clamp to the text).
    int32_t at = 0, n = 0;
    for (const std::string& piece : pre_tokenize(text, pre_)) {
        const size_t first = offsets ? offsets->size() : 0, first_id = out.size();
        bpe(piece, out, offsets, at);
        if (words) words->insert(words->end(), out.size() - first_id, n);
        ++n;
        at += int32_t(piece.size());
        if (offsets)
            for (size_t i = first; i < offsets->size(); ++i)
                (*offsets)[i] = {std::min((*offsets)[i].begin, int32_t(text.size())), std::min((*offsets)[i].end, int32_t(text.size()))};
    }
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

std::string byte_level_decode(const std::vector<std::string>& texts) {
    static const std::array<char32_t, 256> b2u = byte_to_unicode();  // (from the file's unnamed namespace)
    std::string bytes;
    for (const std::string& t : texts) {
        std::string mapped;
        bool all = true;
        for (char32_t c : u::utf8_decode(t)) {
            const auto it = std::find(b2u.begin(), b2u.end(), c);
            if (it == b2u.end()) {
                all = false;
                break;
            }
            mapped.push_back(char(uint8_t(it - b2u.begin())));
        }
        bytes += all ? mapped : t;
    }
    return u::utf8_encode(u::utf8_decode(bytes));
}

}  // namespace wf
