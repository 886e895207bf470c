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

// The pre-tokenizers by the regular expression tokenizer.json writes for them (its Split pre-tokenizers); each is
// matched by hand below. ByteLevel with use_regex is GPT-2's.
constexpr std::pair<pre_tokenizer, std::string_view> kPatterns[] = {
    {pre_tokenizer::gpt2, R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"},
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

bool gpt2_other(char32_t c) { return !u::is_white_space(c) && !u::is_letter(c) && !u::is_number(c); }

std::vector<std::string> gpt2_pieces(std::string_view text) {
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
}  // namespace

std::vector<std::string> bpe_tokenizer::pre_tokenize(std::string_view text, pre_tokenizer kind) {
    switch (kind) {
    case pre_tokenizer::gpt2: return gpt2_pieces(text);
    }
    return {};
}

std::optional<pre_tokenizer> pre_tokenizer_for_pattern(std::string_view regex) {
    for (const auto& [kind, pattern] : kPatterns)
        if (regex == pattern) return kind;
    return std::nullopt;
}

const char* pre_tokenizer_name(pre_tokenizer kind) {
    switch (kind) {
    case pre_tokenizer::gpt2: return "gpt2";
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
    for (int k = 0; k < n; k = next[size_t(k)]) {
        out.push_back(id[size_t(k)]);
        if (!offsets) continue;
        token_span span{at + k, at + next[size_t(k)]};
        if (trim_offsets_)  // RoBERTa: the span leaves out the token's leading spaces (unless it is nothing else)
            while (span.begin + 1 < span.end && piece[size_t(span.begin - at)] == ' ') ++span.begin;
        offsets->push_back(span);
    }
}

void bpe_tokenizer::encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets,
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

}  // namespace wf
