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
    for (const auto* part : {&t.before, &t.after, &t.pair_before, &t.pair_middle, &t.pair_after})
        for (int32_t id : *part) check_id(id, "template token");
    template_ = std::move(t);
}

void tokenizer::add_token_text(std::string text, int32_t id, bool special, bool lstrip, bool rstrip) {
    check_id(id, "added token");
    if (text.empty()) return;
    bool known = false;
    for (token_text& t : texts_)
        if (t.text == text) t.id = id, t.lstrip = t.lstrip || lstrip, t.rstrip = t.rstrip || rstrip, known = true;
    if (!known) {
        texts_.push_back({std::move(text), id, lstrip, rstrip});
        std::stable_sort(texts_.begin(), texts_.end(), [](auto& a, auto& b) { return a.text.size() > b.text.size(); });
    }
    if (special && !is_special(id)) special_ids_.insert(std::upper_bound(special_ids_.begin(), special_ids_.end(), id), id);
}

std::vector<std::pair<std::string_view, int32_t>> tokenizer::split_special(std::string_view text) const {
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    std::vector<std::pair<std::string_view, int32_t>> out;
    size_t start = 0, i = 0;
    while (i < text.size()) {
        bool hit = false;
        for (const token_text& t : texts_) {  // longest first
            if (text.compare(i, t.text.size(), t.text) != 0) continue;
            size_t from = i, to = i + t.text.size();
            if (t.lstrip)
                while (from > start && space(text[from - 1])) --from;
            if (t.rstrip)
                while (to < text.size() && space(text[to])) ++to;
            if (from > start) out.emplace_back(text.substr(start, from - start), -1);
            out.emplace_back(text.substr(from, to - from), t.id);
            i = start = to;
            hit = true;
            break;
        }
        if (!hit) ++i;
    }
    if (start < text.size()) out.emplace_back(text.substr(start), -1);
    return out;
}

void tokenizer::encode_into(std::string_view text, std::vector<int32_t>& ids, encoding* detail) const {
    if (text.size() > max_text_bytes)
        throw error("text is " + std::to_string(text.size()) + " bytes, over the tokenizer's limit of " + std::to_string(max_text_bytes) + " (64 MiB)");
    int32_t word = 0;  // words are numbered across the whole text
    for (auto& [seg, id] : split_special(text)) {
        const auto at = int32_t(seg.data() - text.data());
        if (id >= 0) {
            ids.push_back(id);
            if (detail) detail->offsets.push_back({at, at + int32_t(seg.size())}), detail->words.push_back(word++);
        } else if (!detail) {
            encode_text(seg, ids);
        } else {
            const size_t first = detail->offsets.size();
            encode_text(seg, ids, &detail->offsets, &detail->words);
            for (size_t i = first; i < detail->offsets.size(); ++i)
                detail->offsets[i].begin += at, detail->offsets[i].end += at, detail->words[i] += word;
            if (detail->words.size() > first) word = detail->words.back() + 1;
        }
    }
}

std::vector<int32_t> tokenizer::encode(std::string_view text, bool add_special_tokens) const {
    std::vector<int32_t> ids;
    if (add_special_tokens) ids = template_.before;
    const size_t first = ids.size();
    encode_into(text, ids, nullptr);
    const bool has_end = template_.after_if_absent && ids.size() - first >= template_.after.size() &&
                         std::equal(template_.after.begin(), template_.after.end(), ids.end() - long(template_.after.size()));
    if (add_special_tokens && !has_end) ids.insert(ids.end(), template_.after.begin(), template_.after.end());
    return ids;
}

encoding tokenizer::encode_offsets(std::string_view text) const {
    encoding e;
    encode_into(text, e.ids, &e);
    return e;
}

int64_t tokenizer::template_size(bool pair) const {
    const special_template& t = template_;
    return pair ? int64_t(t.pair_before.size() + t.pair_middle.size() + t.pair_after.size()) : int64_t(t.before.size() + t.after.size());
}

model_input tokenizer::apply_template(const encoding& a, const encoding* b) const {
    const special_template& t = template_;
    if (b && !t.has_pair) throw error("this tokenizer takes one text at a time, not a pair of texts");
    model_input m;
    auto specials = [&](const std::vector<int32_t>& ids, int32_t type) {
        for (int32_t id : ids) m.ids.push_back(id), m.types.push_back(type), m.offsets.push_back({}), m.sequence.push_back(-1), m.words.push_back(-1);
    };
    auto text = [&](const encoding& e, int32_t type, int8_t seq) {
        m.ids.insert(m.ids.end(), e.ids.begin(), e.ids.end());
        m.offsets.insert(m.offsets.end(), e.offsets.begin(), e.offsets.end());
        m.types.insert(m.types.end(), e.ids.size(), type);
        m.sequence.insert(m.sequence.end(), e.ids.size(), seq);
        m.words.insert(m.words.end(), e.words.begin(), e.words.end());
        m.words.resize(m.ids.size(), -1);  // an encoding built without words
    };
    specials(b ? t.pair_before : t.before, 0);
    text(a, 0, 0);
    if (!b) {
        specials(t.after, 0);
        return m;
    }
    specials(t.pair_middle, 0);
    text(*b, t.type_b, 1);
    specials(t.pair_after, t.type_b);
    return m;
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

std::string clean_up_tokenization(std::string out) {
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

}  // namespace wf
