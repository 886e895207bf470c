#include "tokenizers/marian.h"

#include "core/error.h"

namespace wf {

namespace {
const std::string_view kSpace = "\xE2\x96\x81";          // ▁
const std::string_view kUnknownSurface = " \xE2\x81\x87 ";  // sentencepiece's unk_surface " ⁇ "

std::string replace_spaces(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size();)
        if (s.compare(i, kSpace.size(), kSpace) == 0) out += ' ', i += kSpace.size();
        else out += s[i++];
    return out;
}

std::string strip(std::string s) {  // Python's str.strip() for the whitespace a decoded text can have
    const char* ws = " \t\n\r\f\v";
    const size_t b = s.find_first_not_of(ws);
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(ws) + 1 - b);
}

// MarianTokenizer's language_code_re = ">>.+<<": where a match starting at `at` ends (after its last "<<" on the
// line), or npos. `.` matches anything but a newline, `.+` at least one character, greedily.
size_t code_end(std::string_view t, size_t at) {
    if (t.compare(at, 2, ">>") != 0) return std::string_view::npos;
    size_t line_end = t.find('\n', at + 2);
    if (line_end == std::string_view::npos) line_end = t.size();
    const std::string_view line = t.substr(0, line_end);
    const size_t close = line.rfind("<<");
    if (close == std::string_view::npos || close < at + 3) return std::string_view::npos;
    return close + 2;
}
}  // namespace

marian_tokenizer::marian_tokenizer(std::unique_ptr<sentencepiece_tokenizer> source, std::unique_ptr<sentencepiece_tokenizer> target,
                                   std::vector<std::string> vocab)
    : source_(std::move(source)), target_(std::move(target)) {
    id_to_token_ = std::move(vocab);
    for (size_t i = 0; i < id_to_token_.size(); ++i) token_to_id_.emplace(id_to_token_[i], int32_t(i));
}

void marian_tokenizer::encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets,
                                   std::vector<int32_t>* words) const {
    const int32_t unk = special().unk;
    auto lookup = [&](const std::string& piece) {
        auto it = token_to_id_.find(piece);
        if (it != token_to_id_.end()) return it->second;
        if (unk < 0) throw error("vocab.json: the piece \"" + piece.substr(0, 40) + "\" is not in the vocabulary, and it has no <unk>");
        return unk;
    };
    // the language code at the start is one token; every ">>…<<" is then removed from the text (re.sub)
    int32_t word = 0;
    const size_t code = code_end(text, 0);
    if (code != std::string_view::npos) {
        out.push_back(lookup(std::string(text.substr(0, code))));
        if (offsets) offsets->push_back({0, int32_t(code)});
        if (words) words->push_back(word++);
    }
    std::string rest;
    std::vector<int32_t> to_orig;  // rest's byte i is text's byte to_orig[i]
    for (size_t i = 0; i < text.size();) {
        const size_t end = code_end(text, i);
        if (end != std::string_view::npos) {
            i = end;
            continue;
        }
        rest += text[i];
        to_orig.push_back(int32_t(i++));
    }
    to_orig.push_back(int32_t(text.size()));
    for (const auto& p : source_->encode_pieces(rest)) {
        out.push_back(lookup(p.piece));
        if (offsets) offsets->push_back({to_orig[size_t(p.offset.begin)], p.offset.end > p.offset.begin ? to_orig[size_t(p.offset.end - 1)] + 1 : to_orig[size_t(p.offset.begin)]});
        if (words) words->push_back(word + p.word);
    }
}

std::string marian_tokenizer::decode_pieces(const std::vector<int32_t>& ids) const {
    const sentencepiece_tokenizer& spm = target_ ? *target_ : *source_;
    std::string out;
    for (int32_t id : ids) {
        const std::string& piece = token(id);
        const auto t = spm.token_id(piece);
        if (!t) {  // sentencepiece decodes a piece it does not have as its own text
            out += piece;
            continue;
        }
        const piece_type type = spm.model().pieces[size_t(*t)].type;
        if (type == piece_type::control) continue;
        if (type == piece_type::unknown) out += kUnknownSurface;
        else if (type == piece_type::byte) out += spm.token_bytes(*t);
        else out += piece;
    }
    return out;
}

std::string marian_tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
    std::string out;
    std::vector<int32_t> run;
    for (int32_t id : ids) {
        token(id);  // range check
        if (is_special(id)) {
            out += decode_pieces(run);
            if (!skip_special_tokens) out += token(id) + " ";
            run.clear();
            continue;
        }
        run.push_back(id);
    }
    out += decode_pieces(run);
    return strip(replace_spaces(out));
}

std::string marian_tokenizer::token_bytes(int32_t id) const { return replace_spaces(token(id)); }

}  // namespace wf
