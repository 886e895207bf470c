// WordPiece (BERT): BertNormalizer (clean text, CJK spacing, NFD + strip accents, lowercase), BertPreTokenizer
// (whitespace and punctuation), greedy longest-match pieces with "##", words over 100 code points → the unknown token.
#include "tokenizers/wordpiece.h"

#include "core/error.h"
#include "core/unicode.h"

namespace wf {

namespace u = unicode;

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
    const auto unk = token_id(opt_.unk_token);
    if (!unk) throw error(source + ": the vocabulary has no " + opt_.unk_token + " token (the unknown-word token WordPiece needs)");
    unk_ = *unk;
    if (opt_.max_input_chars_per_word < 0) throw error(source + ": max_input_chars_per_word must not be negative");
}

std::vector<bert_word> bert_split(std::string_view text, const wordpiece_options& opt_) {
    // Normalization, character by character, each normalized character remembering the original bytes it came
    // from (NFD and lower-casing may turn one character into several; they share its bytes).
    std::u32string s;
    std::vector<token_span> from;
    s.reserve(text.size());
    from.reserve(text.size());
    const bool strip = opt_.strip_accents.value_or(opt_.lowercase);
    std::u32string one, d, l;
    size_t i = 0;
    while (i < text.size()) {
        const size_t start = i;
        char32_t c = u::utf8_next(text, i);
        const token_span span{int32_t(start), int32_t(i)};
        if (opt_.clean_text) {
            if (c == 0 || c == 0xFFFD || bert_control(c)) continue;
            if (bert_whitespace(c)) c = ' ';
        }
        one.assign(1, c);
        if (c >= 0x80 && strip) {  // NFD, then the combining marks dropped (ASCII is its own decomposition)
            d = u::nfd(one);
            one.clear();
            for (char32_t x : d)
                if (u::general_category(x) != u::Mn) one += x;
        }
        if (opt_.lowercase) {
            l.clear();
            for (char32_t x : one) u::to_lower(x, l);
            one.swap(l);
        }
        const bool cjk = opt_.handle_chinese_chars && is_cjk(c);
        if (cjk) s += U' ', from.push_back(span);
        for (char32_t x : one) s += x, from.push_back(span);
        if (cjk) s += U' ', from.push_back(span);
    }
    // BertPreTokenizer: split on whitespace, and every punctuation character is a word of its own
    std::vector<bert_word> out;
    bert_word cur;
    auto flush = [&] {
        if (!cur.chars.empty()) out.push_back(std::move(cur)), cur = {};
    };
    for (size_t k = 0; k < s.size(); ++k) {
        const char32_t c = s[k];
        if (bert_whitespace(c)) {
            flush();
        } else if (bert_punct(c)) {
            flush();
            out.push_back({std::u32string(1, c), {from[k]}});
        } else {
            cur.chars += c;
            cur.from.push_back(from[k]);
        }
    }
    flush();
    return out;
}

std::vector<std::u32string> wordpiece_tokenizer::words(std::string_view text) const {
    std::vector<std::u32string> out;
    for (word& w : bert_split(text, opt_)) out.push_back(std::move(w.chars));
    return out;
}

void wordpiece_tokenizer::word_ids(const word& w, std::vector<int32_t>& out, std::vector<token_span>* offsets) const {
    const std::u32string& word = w.chars;
    auto span = [&](size_t a, size_t b) { return token_span{w.from[a].begin, w.from[b - 1].end}; };
    if (int64_t(word.size()) > opt_.max_input_chars_per_word) {
        out.push_back(unk_);
        if (offsets) offsets->push_back(span(0, word.size()));
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
    const size_t mark = out.size(), mark_offsets = offsets ? offsets->size() : 0;
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
            out.push_back(unk_);
            if (offsets) offsets->resize(mark_offsets), offsets->push_back(span(0, word.size()));
            return;
        }
        out.push_back(found);
        if (offsets) offsets->push_back(span(start, end));
        start = end;
    }
}

void wordpiece_tokenizer::encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets,
                                      std::vector<int32_t>* words) const {
    int32_t n = 0;
    for (const word& w : bert_split(text, opt_)) {
        const size_t first = out.size();
        word_ids(w, out, offsets);
        if (words) words->insert(words->end(), out.size() - first, n);
        ++n;
    }
}

std::string wordpiece_tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
    std::vector<std::string> tokens;
    for (int32_t id : ids)
        if (!(skip_special_tokens && is_special(id))) tokens.push_back(token(id));
    return wordpiece_join(tokens, opt_.continuing_subword_prefix);
}

std::string wordpiece_join(const std::vector<std::string>& tokens, const std::string& pre) {
    std::string out;
    bool first = true;
    for (const std::string& t : tokens) {
        const bool piece = t.size() >= pre.size() && t.compare(0, pre.size(), pre) == 0;
        // as Hugging Face's WordPiece decoder: the first token is kept whole, later pieces join their word
        if (first) out += t;
        else out += piece ? t.substr(pre.size()) : " " + t;
        first = false;
    }
    return clean_up_tokenization(out);
}

}  // namespace wf
