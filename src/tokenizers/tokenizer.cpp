#include "tokenizers/tokenizer.h"

#include <algorithm>

#include "core/error.h"
#include "core/unicode.h"

namespace wf {

namespace u = unicode;

const std::string& tokenizer::token(int32_t id) const {
    if (id < 0 || id >= int32_t(id_to_token_.size()))
        throw error("token id " + std::to_string(id) + " is out of range (vocabulary of " + std::to_string(id_to_token_.size()) + ")");
    return id_to_token_[size_t(id)];
}

std::optional<int32_t> tokenizer::token_id(std::string_view t) const {
    auto it = token_to_id_.find(t);
    if (it == token_to_id_.end()) return std::nullopt;
    return it->second;
}

bool tokenizer::is_special(int32_t id) const { return std::binary_search(special_ids_.begin(), special_ids_.end(), id); }

void tokenizer::check_id(int32_t id, const char* what) const {
    if (id < -1 || id >= int32_t(id_to_token_.size()))
        throw error(std::string(what) + " id " + std::to_string(id) + " is not in the vocabulary of " + std::to_string(id_to_token_.size()));
}

void tokenizer::set_special(const special_tokens& s) {
    for (auto [what, id] : {std::pair{"unk", s.unk}, {"cls", s.cls}, {"sep", s.sep}, {"pad", s.pad}, {"mask", s.mask}, {"bos", s.bos}, {"eos", s.eos}})
        check_id(id, what);
    special_ = s;
}

void tokenizer::set_template(special_template t) {
    for (int32_t id : t.before) check_id(id, "template token");
    for (int32_t id : t.after) check_id(id, "template token");
    template_ = std::move(t);
}

void tokenizer::add_token_text(std::string text, int32_t id, bool special) {
    check_id(id, "added token");
    if (text.empty()) return;
    for (auto& [t, i] : texts_)
        if (t == text) {
            i = id;
            text.clear();
        }
    if (!text.empty()) {
        texts_.emplace_back(std::move(text), id);
        std::stable_sort(texts_.begin(), texts_.end(), [](auto& a, auto& b) { return a.first.size() > b.first.size(); });
    }
    if (special && !is_special(id)) special_ids_.insert(std::upper_bound(special_ids_.begin(), special_ids_.end(), id), id);
}

std::vector<std::pair<std::string_view, int32_t>> tokenizer::split_special(std::string_view text) const {
    std::vector<std::pair<std::string_view, int32_t>> out;
    size_t start = 0, i = 0;
    while (i < text.size()) {
        bool hit = false;
        for (auto& [s, id] : texts_) {  // longest first
            if (text.compare(i, s.size(), s) == 0) {
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

std::vector<int32_t> tokenizer::encode(std::string_view text, bool add_special_tokens) const {
    if (text.size() > max_text_bytes)
        throw error("text is " + std::to_string(text.size()) + " bytes, over the tokenizer's limit of " + std::to_string(max_text_bytes) + " (64 MiB)");
    std::vector<int32_t> ids;
    if (add_special_tokens) ids = template_.before;
    for (auto& [seg, id] : split_special(text)) {
        if (id >= 0) ids.push_back(id);
        else encode_text(seg, ids);
    }
    if (add_special_tokens) ids.insert(ids.end(), template_.after.begin(), template_.after.end());
    return ids;
}

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

}  // namespace wf
