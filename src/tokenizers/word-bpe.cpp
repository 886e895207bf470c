#include "tokenizers/word-bpe.h"

#include <limits>

#include "core/error.h"
#include "core/unicode.h"

namespace wf {

word_bpe_tokenizer::word_bpe_tokenizer(const std::unordered_map<std::string, int32_t>& vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                                       const wordpiece_options& normalizer, std::string suffix, const std::string& source)
    : opt_(normalizer), suffix_(std::move(suffix)) {
    int32_t max_id = -1;
    for (auto& [t, id] : vocab) max_id = std::max(max_id, id);
    id_to_token_.assign(size_t(max_id + 1), std::string());
    std::vector<bool> seen(id_to_token_.size());
    for (auto& [t, id] : vocab) {
        if (seen[size_t(id)]) throw error(source + ": id " + std::to_string(id) + " is given to two tokens");
        seen[size_t(id)] = true;
        id_to_token_[size_t(id)] = t;
    }
    for (size_t id = 0; id < seen.size(); ++id)
        if (!seen[id]) throw error(source + ": no token has id " + std::to_string(id) + " (the ids must be 0 … " + std::to_string(max_id) + ")");
    token_to_id_.insert(vocab.begin(), vocab.end());
    for (size_t r = 0; r < merges.size(); ++r) ranks_[merges[r].first + " " + merges[r].second] = int32_t(r);  // a pair listed twice: its last rank
}

void word_bpe_tokenizer::encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets,
                                     std::vector<int32_t>* words) const {
    const int32_t unk = special().unk;
    int32_t n = 0;
    for (const bert_word& w : bert_split(text, opt_)) {
        // symbols: the word's characters, the last one with the end-of-word suffix; each with its character range
        std::vector<std::string> sym;
        std::vector<std::pair<size_t, size_t>> chars;
        for (size_t i = 0; i < w.chars.size(); ++i) {
            sym.push_back(unicode::utf8_encode(std::u32string(1, w.chars[i])));
            chars.emplace_back(i, i + 1);
        }
        sym.back() += suffix_;
        // the pair of lowest rank merges, every occurrence left to right, until no pair has a rank
        for (;;) {
            int32_t best = std::numeric_limits<int32_t>::max();
            for (size_t i = 0; i + 1 < sym.size(); ++i)
                if (auto it = ranks_.find(sym[i] + " " + sym[i + 1]); it != ranks_.end()) best = std::min(best, it->second);
            if (best == std::numeric_limits<int32_t>::max()) break;
            std::vector<std::string> merged;
            std::vector<std::pair<size_t, size_t>> merged_chars;
            for (size_t i = 0; i < sym.size();) {
                if (i + 1 < sym.size()) {
                    auto it = ranks_.find(sym[i] + " " + sym[i + 1]);
                    if (it != ranks_.end() && it->second == best) {
                        merged.push_back(sym[i] + sym[i + 1]);
                        merged_chars.emplace_back(chars[i].first, chars[i + 1].second);
                        i += 2;
                        continue;
                    }
                }
                merged.push_back(sym[i]);
                merged_chars.push_back(chars[i]);
                ++i;
            }
            sym.swap(merged);
            chars.swap(merged_chars);
        }
        for (size_t i = 0; i < sym.size(); ++i) {
            auto it = token_to_id_.find(sym[i]);
            if (it == token_to_id_.end() && unk < 0) throw error("bpe: \"" + sym[i] + "\" is not in the vocabulary, and it has no <unk>");
            out.push_back(it == token_to_id_.end() ? unk : it->second);
            if (offsets) offsets->push_back({w.from[chars[i].first].begin, w.from[chars[i].second - 1].end});
            if (words) words->push_back(n);
        }
        ++n;
    }
}

std::string word_bpe_tokenizer::token_bytes(int32_t id) const {
    std::string t = token(id);
    if (!suffix_.empty() && t.size() >= suffix_.size() && t.compare(t.size() - suffix_.size(), suffix_.size(), suffix_) == 0)
        t.replace(t.size() - suffix_.size(), suffix_.size(), " ");
    return t;
}

std::string word_bpe_tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
    std::string joined;
    for (int32_t id : ids)
        if (!(skip_special_tokens && is_special(id))) joined += token(id);
    std::string out;  // each suffix a space, then stripped (Python's str.strip())
    for (size_t i = 0; i < joined.size();)
        if (!suffix_.empty() && joined.compare(i, suffix_.size(), suffix_) == 0) out += ' ', i += suffix_.size();
        else out += joined[i++];
    const char* ws = " \t\n\r\f\v";
    const size_t b = out.find_first_not_of(ws);
    if (b == std::string::npos) return {};
    return out.substr(b, out.find_last_not_of(ws) + 1 - b);
}

}  // namespace wf
