// SentencePiece (google/sentencepiece src/normalizer.cc, unigram_model.cc, bpe_model.cc and
// sentencepiece_processor.cc's PopulateSentencePieceText / Decode; Hugging Face's normalizers/precompiled.rs,
// pre_tokenizers/metaspace.rs and models/unigram for the tokenizer.json front end).
#include "tokenizers/sentencepiece.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <queue>

#include "core/error.h"
#include "core/unicode.h"

namespace wf {

namespace u = unicode;

namespace {

const std::string_view kSpace = "\xE2\x96\x81";  // ▁ U+2581, sentencepiece's escaped space
const std::string_view kReplacementChar = "\xEF\xBF\xBD";
constexpr float kUnkPenalty = 10.0f;  // an unknown character scores this far below the worst piece

// The length of a UTF-8 sequence by its first byte, as sentencepiece's OneCharLen (no validation).
size_t one_char_len(uint8_t b) { return "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[b >> 4]; }

// The length of the well-formed UTF-8 character text starts with, or 0 if it is ill-formed (sentencepiece's
// DecodeUTF8: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t valid_char_len(std::string_view s) {
    if (s.empty()) return 0;
    const auto b = [&](size_t i) { return uint8_t(s[i]); };
    const auto trail = [&](size_t i) { return (b(i) & 0xC0) == 0x80; };
    const uint8_t c = b(0);
    if (c < 0x80) return 1;
    if (s.size() >= 2 && (c & 0xE0) == 0xC0 && trail(1)) {
        const char32_t cp = char32_t(c & 0x1F) << 6 | (b(1) & 0x3F);
        return cp >= 0x80 ? 2 : 0;
    }
    if (s.size() >= 3 && (c & 0xF0) == 0xE0 && trail(1) && trail(2)) {
        const char32_t cp = char32_t(c & 0x0F) << 12 | char32_t(b(1) & 0x3F) << 6 | (b(2) & 0x3F);
        return cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF) ? 3 : 0;
    }
    if (s.size() >= 4 && (c & 0xF8) == 0xF0 && trail(1) && trail(2) && trail(3)) {
        const char32_t cp = char32_t(c & 0x07) << 18 | char32_t(b(1) & 0x3F) << 12 | char32_t(b(2) & 0x3F) << 6 | (b(3) & 0x3F);
        return cp >= 0x10000 && cp <= 0x10FFFF ? 4 : 0;
    }
    return 0;
}

// Bytes as text, each ill-formed byte a U+FFFD (sentencepiece's decoding of byte pieces).
void append_bytes_as_text(std::string_view bytes, std::string& out) {
    size_t i = 0;
    while (i < bytes.size()) {
        const size_t n = valid_char_len(bytes.substr(i));
        if (n == 0) out += kReplacementChar, ++i;
        else out.append(bytes.substr(i, n)), i += n;
    }
}

// "<0x41>" → 0x41; −1 for any other text (upper-case hex only, as sentencepiece writes them).
int byte_of_piece(std::string_view p) {
    auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
    if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>' || hex(p[3]) < 0 || hex(p[4]) < 0) return -1;
    return hex(p[3]) * 16 + hex(p[4]);
}

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
    std::string out;
    size_t pos = 0, hit;
    while ((hit = s.find(from, pos)) != std::string_view::npos) out.append(s.substr(pos, hit - pos)).append(to), pos = hit + from.size();
    return out.append(s.substr(pos));
}

}  // namespace

// ---------------------------------------------------------------------------------------------- precompiled charsmap
precompiled_charsmap::precompiled_charsmap(std::string_view blob, const std::string& what) {
    if (blob.size() <= 4) throw error(what + ": precompiled_charsmap of " + std::to_string(blob.size()) + " bytes is shorter than its header");
    const uint32_t trie_bytes = uint32_t(uint8_t(blob[0])) | uint32_t(uint8_t(blob[1])) << 8 | uint32_t(uint8_t(blob[2])) << 16 | uint32_t(uint8_t(blob[3])) << 24;
    if (trie_bytes < 4 || trie_bytes % 4 != 0 || trie_bytes > blob.size() - 4)
        throw error(what + ": precompiled_charsmap's trie size " + std::to_string(trie_bytes) + " does not fit its " + std::to_string(blob.size()) +
                    " bytes (or is not a whole number of 4-byte units)");
    units_.resize(trie_bytes / 4);
    for (size_t i = 0; i < units_.size(); ++i) {
        const char* p = blob.data() + 4 + 4 * i;
        units_[i] = uint32_t(uint8_t(p[0])) | uint32_t(uint8_t(p[1])) << 8 | uint32_t(uint8_t(p[2])) << 16 | uint32_t(uint8_t(p[3])) << 24;
    }
    replacements_.assign(blob.substr(4 + trie_bytes));
    replacements_ += '\0';  // every replacement ends within the blob, even in a file cut short
}

std::pair<std::string_view, size_t> precompiled_charsmap::match(std::string_view text) const {
    if (units_.empty()) return {{}, 0};
    // Darts-clone's unit: bit 8 has_leaf; bits 0–7 (with bit 31) the label; value = low 31 bits; offset = bits
    // 10–31, shifted by 8 more when bit 9 is set. commonPrefixSearch: follow the key's bytes; a node with a leaf
    // ends a rule whose value sits at that node's offset. sentencepiece keeps the first 32 matches, the longest wins.
    auto offset = [](uint32_t unit) { return size_t(unit >> 10) << ((unit & (1u << 9)) >> 6); };
    size_t node = offset(units_[0]), best_len = 0, found = 0;
    uint32_t best_value = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = uint8_t(text[i]);
        node ^= c;
        if (node >= units_.size()) break;
        const uint32_t unit = units_[node];
        if ((unit & ((1u << 31) | 0xFF)) != c) break;
        node ^= offset(unit);
        if (node >= units_.size()) break;
        if ((unit >> 8) & 1) {
            if (found < 32 && i + 1 > best_len) best_len = i + 1, best_value = units_[node] & ((1u << 31) - 1);
            ++found;
        }
    }
    if (best_len == 0) return {{}, 0};
    if (best_value >= replacements_.size())
        throw error("precompiled_charsmap: a rule points at byte " + std::to_string(best_value) + ", past its " +
                    std::to_string(replacements_.size() - 1) + " bytes of replacements");
    return {std::string_view(replacements_.data() + best_value), best_len};
}

// ----------------------------------------------------------------------------------------------------- the tokenizer
sentencepiece_tokenizer::sentencepiece_tokenizer(sentencepiece_model model, const std::string& source) : model_(std::move(model)) {
    init(source);
    if (!model_.precompiled_charsmap.empty()) charsmap_ = precompiled_charsmap(model_.precompiled_charsmap, source + " normalizer_spec");
}

sentencepiece_tokenizer::sentencepiece_tokenizer(sentencepiece_model model, std::vector<hf_normalizer> normalizers, hf_metaspace metaspace,
                                                 const std::string& source)
    : model_(std::move(model)), hf_(true), hf_normalizers_(std::move(normalizers)), metaspace_(std::move(metaspace)) {
    if (metaspace_.replacement.empty()) throw error(source + ": the Metaspace replacement must not be empty");
    init(source);
}

void sentencepiece_tokenizer::init(const std::string& source) {
    const auto& pieces = model_.pieces;
    if (pieces.empty()) throw error(source + ": the model has no pieces");
    if (pieces.size() > (size_t(1) << 22)) throw error(source + ": " + std::to_string(pieces.size()) + " pieces is over the limit of 4194304");
    std::fill(std::begin(byte_piece_), std::end(byte_piece_), -1);
    id_to_token_.reserve(pieces.size());
    min_score_ = FLT_MAX;
    max_score_ = FLT_MIN;  // sentencepiece's starting values (FLT_MIN: the smallest positive float)
    std::vector<std::pair<std::string_view, int32_t>> keys;
    for (size_t i = 0; i < pieces.size(); ++i) {
        const sentencepiece_piece& p = pieces[i];
        const auto id = int32_t(i);
        const std::string where = source + ": piece " + std::to_string(i);
        if (p.text.empty()) throw error(where + " is empty");
        if (!std::isfinite(p.score)) throw error(where + " (\"" + p.text + "\") has a score that is not a finite number");
        if (!token_to_id_.emplace(p.text, id).second) throw error(where + " (\"" + p.text + "\") is already defined");
        id_to_token_.push_back(p.text);
        switch (p.type) {
        case piece_type::unknown:
            if (unk_ >= 0) throw error(where + " (\"" + p.text + "\") is a second unknown piece");
            unk_ = id;
            break;
        case piece_type::byte: {
            const int b = byte_of_piece(p.text);
            if (!model_.byte_fallback) throw error(where + " (\"" + p.text + "\") is a byte piece, but byte_fallback is off");
            if (b < 0) throw error(where + " (\"" + p.text + "\") is a byte piece that is not <0x00> … <0xFF>");
            byte_piece_[b] = id;
            break;
        }
        case piece_type::normal:
        case piece_type::user_defined:
        case piece_type::unused:
            keys.emplace_back(p.text, id);
            model_pieces_.emplace(p.text, id);
            if (p.type == piece_type::user_defined && !hf_) user_defined_.push_back(p.text);
            break;
        case piece_type::control: break;
        default: throw error(where + " (\"" + p.text + "\") has type " + std::to_string(int(p.type)) + ", not one of 1 … 6");
        }
        if (p.type == piece_type::normal || hf_) min_score_ = std::min(min_score_, p.score);
        if (p.type == piece_type::normal) max_score_ = std::max(max_score_, p.score);
    }
    if (unk_ < 0 && !hf_) throw error(source + ": the model has no unknown piece (<unk>)");
    if (model_.byte_fallback && !hf_)
        for (int b = 0; b < 256; ++b)
            if (byte_piece_[b] < 0) throw error(source + ": byte_fallback is on but the piece for byte " + std::to_string(b) + " is missing");
    std::sort(user_defined_.begin(), user_defined_.end(), [](auto& a, auto& b) { return a.size() > b.size(); });

    // The trie, breadth first from the sorted pieces: a node's range of pieces shares its prefix; the piece equal to
    // the prefix (if any) sorts first; each next byte value starts a child.
    std::sort(keys.begin(), keys.end());
    struct range {
        int32_t node;
        size_t lo, hi, depth;
    };
    std::vector<range> queue{{0, 0, keys.size(), 0}};
    first_child_.push_back(0), child_count_.push_back(0), node_piece_.push_back(-1), label_.push_back(0);
    for (size_t t = 0; t < queue.size(); ++t) {
        auto [node, lo, hi, depth] = queue[t];
        if (lo < hi && keys[lo].first.size() == depth) node_piece_[size_t(node)] = keys[lo++].second;
        first_child_[size_t(node)] = int32_t(label_.size());
        for (size_t i = lo; i < hi;) {
            const char b = keys[i].first[depth];
            size_t j = i;
            while (j < hi && keys[j].first[depth] == b) ++j;
            queue.push_back({int32_t(label_.size()), i, j, depth + 1});
            first_child_.push_back(0), child_count_.push_back(0), node_piece_.push_back(-1), label_.push_back(uint8_t(b));
            ++child_count_[size_t(node)];
            i = j;
        }
    }
}

// ----------------------------------------------------------------------------------------------------- normalization
size_t sentencepiece_tokenizer::user_defined_prefix(std::string_view text) const {
    for (const std::string& s : user_defined_)  // longest first
        if (text.substr(0, s.size()) == s) return s.size();
    return 0;
}

std::pair<std::string_view, size_t> sentencepiece_tokenizer::normalize_prefix(std::string_view text) const {
    if (const size_t n = user_defined_prefix(text)) return {text.substr(0, n), n};  // never normalized
    if (const auto rule = charsmap_.match(text); rule.second > 0) return rule;
    const size_t n = valid_char_len(text);
    if (n == 0) return {kReplacementChar, 1};  // an ill-formed byte: U+FFFD for that one byte
    return {text.substr(0, n), n};
}

sentencepiece_tokenizer::normalized sentencepiece_tokenizer::spm_normalize(std::string_view text) const {
    normalized n;
    auto consumed = int32_t(0);
    if (model_.remove_extra_whitespaces)  // leading whitespace goes
        while (!text.empty()) {
            const auto [rep, len] = normalize_prefix(text);
            if (rep != " ") break;
            text.remove_prefix(len);
            consumed += int32_t(len);
        }
    if (text.empty()) {
        n.to_orig.push_back(consumed);
        return n;
    }
    const std::string_view space = model_.escape_whitespaces ? kSpace : std::string_view(" ");
    auto append = [&](std::string_view s) {
        n.text.append(s);
        n.to_orig.insert(n.to_orig.end(), s.size(), consumed);
    };
    if (model_.add_dummy_prefix) append(space);
    bool prev_space = model_.remove_extra_whitespaces;
    while (!text.empty()) {
        auto [rep, len] = normalize_prefix(text);
        while (prev_space && !rep.empty() && rep.front() == ' ') rep.remove_prefix(1);  // runs of spaces become one
        if (!rep.empty()) {
            for (char c : rep) append(c == ' ' ? space : std::string_view(&c, 1));
            prev_space = rep.back() == ' ';
        }
        consumed += int32_t(len);
        text.remove_prefix(len);
        if (!model_.remove_extra_whitespaces) prev_space = false;
    }
    if (model_.remove_extra_whitespaces)  // trailing whitespace goes
        while (n.text.size() >= space.size() && n.text.compare(n.text.size() - space.size(), space.size(), space) == 0) {
            const size_t keep = n.text.size() - space.size();
            consumed = n.to_orig[keep];
            n.text.resize(keep);
            n.to_orig.resize(keep);
        }
    n.to_orig.push_back(consumed);
    return n;
}

sentencepiece_tokenizer::normalized sentencepiece_tokenizer::hf_normalize(std::string_view text) const {
    // the text as it is; ill-formed bytes become U+FFFD in the Precompiled step (as in sentencepiece: the U+FFFD is
    // not itself normalized), or at the end
    normalized n;
    n.text.assign(text);
    for (size_t i = 0; i <= text.size(); ++i) n.to_orig.push_back(int32_t(i));
    for (const hf_normalizer& step : hf_normalizers_) {
        normalized m;
        const std::string& s = n.text;
        auto keep = [&](size_t from, size_t count) {
            m.text.append(s, from, count);
            m.to_orig.insert(m.to_orig.end(), n.to_orig.begin() + int64_t(from), n.to_orig.begin() + int64_t(from + count));
        };
        auto put = [&](std::string_view r, size_t from) {  // a replacement for the text at `from`
            m.text.append(r);
            m.to_orig.insert(m.to_orig.end(), r.size(), n.to_orig[from]);
        };
        switch (step.type) {
        case hf_normalizer::kind::precompiled:
            for (size_t i = 0; i < s.size();) {
                const auto [rep, len] = step.charsmap.match(std::string_view(s).substr(i));
                if (len) {
                    put(rep, i), i += len;
                } else if (const size_t c = valid_char_len(std::string_view(s).substr(i))) {
                    keep(i, c), i += c;
                } else {
                    put(kReplacementChar, i), ++i;
                }
            }
            m.to_orig.push_back(n.to_orig.back());
            break;
        case hf_normalizer::kind::replace:
            for (size_t i = 0; i < s.size();) {
                size_t len = 0;
                if (!step.pattern.empty() && s.compare(i, step.pattern.size(), step.pattern) == 0) {
                    len = step.pattern.size();
                    if (step.runs) {
                        while (s.compare(i + len, step.pattern.size(), step.pattern) == 0) len += step.pattern.size();
                        if (len < 2 * step.pattern.size()) len = 0;
                    }
                }
                if (len) put(step.content, i), i += len;
                else keep(i, 1), ++i;
            }
            m.to_orig.push_back(n.to_orig.back());
            break;
        case hf_normalizer::kind::strip: {
            size_t b = 0, e = s.size();
            auto white_at = [&](size_t i, size_t& len) {
                size_t k = i;
                const char32_t c = u::utf8_next(s, k);
                len = k - i;
                return u::is_white_space(c);
            };
            size_t len = 0;
            if (step.strip_left)
                while (b < e && white_at(b, len)) b += len;
            if (step.strip_right)
                while (e > b) {
                    size_t start = e - 1;
                    while (start > b && (uint8_t(s[start]) & 0xC0) == 0x80) --start;
                    if (!white_at(start, len) || start + len != e) break;
                    e = start;
                }
            keep(b, e - b);
            m.to_orig.push_back(e < s.size() ? n.to_orig[e] : n.to_orig.back());
            break;
        }
        }
        n = std::move(m);
    }
    normalized m;
    for (size_t i = 0; i < n.text.size();) {
        const size_t len = valid_char_len(std::string_view(n.text).substr(i));
        const std::string_view c = len ? std::string_view(n.text).substr(i, len) : kReplacementChar;
        m.text.append(c);
        m.to_orig.insert(m.to_orig.end(), c.size(), n.to_orig[i]);
        i += len ? len : 1;
    }
    m.to_orig.push_back(n.to_orig.back());
    return m;
}

std::string sentencepiece_tokenizer::normalize(std::string_view text) const {
    if (!hf_) return spm_normalize(text).text;
    std::string s = replace_all(hf_normalize(text).text, " ", metaspace_.replacement);
    if (metaspace_.scheme != hf_metaspace::prepend::never && !s.empty() && s.rfind(metaspace_.replacement, 0) != 0) s.insert(0, metaspace_.replacement);
    return s;
}

// --------------------------------------------------------------------------------------------------------- the models
// Unigram: the segmentation with the highest total score, by dynamic programming over byte positions (sentencepiece's
// EncodeOptimized): best[e] is the best path ending at e; each character position tries every piece that starts
// there; a character no single piece covers is an unknown of score min_score − 10. Ties keep the earlier candidate.
// sentencepiece adds a piece's score to the path's in double precision and stores the path's in float; Hugging
// Face's is double throughout.
void sentencepiece_tokenizer::unigram(std::string_view text, int32_t at, std::vector<piece_span>& out) const {
    const size_t n = text.size();
    struct best_path {
        double score = 0;
        int64_t start = -1;
        int32_t id = -1;
    };
    std::vector<best_path> best(n + 1);
    auto offer = [&](best_path& target, double score, size_t start, int32_t id) {
        if (target.start == -1 || score > target.score) target = {hf_ ? score : double(float(score)), int64_t(start), id};
    };
    const float unk_score = min_score_ - kUnkPenalty;
    for (size_t start = 0; start < n;) {
        const double till = best[start].score;
        const size_t char_len = std::min(one_char_len(uint8_t(text[start])), n - start);
        bool single = false;  // a piece covers exactly this character
        int32_t node = 0;
        for (size_t pos = start; pos < n; ++pos) {
            const auto* first = label_.data() + first_child_[size_t(node)];
            const auto* last = first + child_count_[size_t(node)];
            const auto* hit = std::lower_bound(first, last, uint8_t(text[pos]));
            if (hit == last || *hit != uint8_t(text[pos])) break;
            node = int32_t(hit - label_.data());
            const int32_t id = node_piece_[size_t(node)];
            if (id < 0 || model_.pieces[size_t(id)].type == piece_type::unused) continue;
            const size_t len = pos + 1 - start;
            // a user-defined symbol always wins over the pieces it could be spelt with
            const double score = model_.pieces[size_t(id)].type == piece_type::user_defined ? double(float(len) * max_score_) - 0.1
                                                                                            : double(model_.pieces[size_t(id)].score);
            offer(best[pos + 1], score + till, start, id);
            if (len == char_len) single = true;
        }
        if (!single) offer(best[start + char_len], hf_ ? double(min_score_) - double(kUnkPenalty) + till : double(unk_score + float(till)), start, unk_);
        start += char_len;
    }
    const size_t first = out.size();
    for (size_t end = n; end > 0;) {
        const best_path& p = best[end];
        if (p.start < 0) throw error("sentencepiece: internal error, no segmentation ends at byte " + std::to_string(end));
        out.push_back({at + int32_t(p.start), at + int32_t(end), p.id});
        end = size_t(p.start);
    }
    std::reverse(out.begin() + int64_t(first), out.end());
}

// BPE: start from characters (user-defined symbols whole and never merged), repeatedly merge the adjacent pair whose
// concatenation is the highest-scoring piece (the leftmost among equals), until no pair is a piece. A merge into an
// unused piece is undone at the end (sentencepiece's resegment).
void sentencepiece_tokenizer::bpe(std::string_view text, int32_t at, std::vector<piece_span>& out) const {
    struct symbol {
        int32_t prev, next;
        size_t begin, len;
        bool freeze;
    };
    std::vector<symbol> sym;
    for (size_t i = 0; i < text.size();) {
        size_t len = user_defined_prefix(text.substr(i));
        const bool freeze = len > 0;
        if (!len) len = std::min(one_char_len(uint8_t(text[i])), text.size() - i);
        sym.push_back({int32_t(sym.size()) - 1, int32_t(sym.size()) + 1, i, len, freeze});
        i += len;
    }
    if (sym.empty()) return;
    sym.back().next = -1;
    struct pair {
        float score;
        int32_t left, right;
        size_t len;
        bool operator<(const pair& o) const { return score < o.score || (score == o.score && left > o.left); }
    };
    std::priority_queue<pair> agenda;
    std::unordered_map<std::string_view, std::pair<std::string_view, std::string_view>> unmerge;  // unused piece → its halves
    auto maybe_add = [&](int32_t l, int32_t r) {
        if (l < 0 || r < 0 || sym[size_t(l)].freeze || sym[size_t(r)].freeze) return;
        const std::string_view piece = text.substr(sym[size_t(l)].begin, sym[size_t(l)].len + sym[size_t(r)].len);
        const auto it = model_pieces_.find(piece);
        if (it == model_pieces_.end()) return;
        agenda.push({model_.pieces[size_t(it->second)].score, l, r, piece.size()});
        if (model_.pieces[size_t(it->second)].type == piece_type::unused)
            unmerge[piece] = {text.substr(sym[size_t(l)].begin, sym[size_t(l)].len), text.substr(sym[size_t(r)].begin, sym[size_t(r)].len)};
    };
    for (size_t i = 1; i < sym.size(); ++i) maybe_add(int32_t(i - 1), int32_t(i));
    while (!agenda.empty()) {
        const pair top = agenda.top();
        agenda.pop();
        symbol &l = sym[size_t(top.left)], &r = sym[size_t(top.right)];
        if (l.len == 0 || r.len == 0 || l.len + r.len != top.len) continue;  // stale
        l.len += r.len;
        l.next = r.next;
        if (r.next >= 0) sym[size_t(r.next)].prev = top.left;
        r.len = 0;
        maybe_add(l.prev, top.left);
        maybe_add(top.left, l.next);
    }
    auto id_of = [&](std::string_view piece) {
        const auto it = token_to_id_.find(piece);
        return it == token_to_id_.end() ? unk_ : it->second;
    };
    auto emit = [&](auto&& self, std::string_view piece) -> void {
        const int32_t id = id_of(piece);
        const auto half = unmerge.find(piece);
        if (id >= 0 && model_.pieces[size_t(id)].type == piece_type::unused && half != unmerge.end()) {
            self(self, half->second.first);
            self(self, half->second.second);
            return;
        }
        const auto b = int32_t(piece.data() - text.data());
        out.push_back({at + b, at + b + int32_t(piece.size()), id});
    };
    for (int32_t i = 0; i >= 0; i = sym[size_t(i)].next) emit(emit, text.substr(sym[size_t(i)].begin, sym[size_t(i)].len));
}

// The model over normalized text [begin, end), then sentencepiece's post-processing: an unknown piece becomes the
// <0xNN> pieces of its bytes (byte fallback; only the last byte carries the character's span), or joins the unknown
// before it. `word`: the word the stretch starts in; with count_spaces, a token starting with ▁ (other than the first)
// starts the next word.
void sentencepiece_tokenizer::segment(const normalized& n, int32_t begin, int32_t end, int32_t word, std::vector<int32_t>& out,
                                      std::vector<token_span>* offsets, std::vector<int32_t>* words, std::vector<std::string>* surfaces) const {
    std::vector<piece_span> pieces;
    const std::string_view text = std::string_view(n.text).substr(size_t(begin), size_t(end - begin));
    if (model_.type == sentencepiece_model::kind::unigram) unigram(text, begin, pieces);
    else bpe(text, begin, pieces);
    bool prev_unknown = false;
    const size_t first = out.size();
    const std::string_view space = model_.escape_whitespaces ? kSpace : std::string_view(" ");
    for (const piece_span& p : pieces) {
        if (!hf_ && out.size() > first && n.text.compare(size_t(p.begin), space.size(), space) == 0) ++word;
        const token_span span{n.to_orig[size_t(p.begin)], n.to_orig[size_t(p.end)]};
        const bool unknown = p.id < 0 || is_unknown(p.id);
        if (unknown && p.id < 0) throw error("sentencepiece: the text has a character the vocabulary lacks, and the model has no unknown token");
        bool bytes = unknown && model_.byte_fallback;
        for (int32_t k = p.begin; bytes && k < p.end; ++k) bytes = byte_piece_[uint8_t(n.text[size_t(k)])] >= 0;
        if (bytes) {
            for (int32_t k = p.begin; k < p.end; ++k) {
                out.push_back(byte_piece_[uint8_t(n.text[size_t(k)])]);
                if (surfaces) surfaces->push_back(model_.pieces[size_t(out.back())].text);
                if (offsets) offsets->push_back(k + 1 == p.end ? span : token_span{span.begin, span.begin});
                if (words) words->push_back(word);
            }
        } else if (unknown && prev_unknown) {
            if (offsets) offsets->back().end = span.end;
            if (surfaces) surfaces->back().append(n.text, size_t(p.begin), size_t(p.end - p.begin));
        } else {
            out.push_back(p.id);
            if (surfaces) surfaces->push_back(n.text.substr(size_t(p.begin), size_t(p.end - p.begin)));
            if (offsets) offsets->push_back(span);
            if (words) words->push_back(word);
        }
        prev_unknown = unknown;
    }
}

void sentencepiece_tokenizer::encode_text(std::string_view text, std::vector<int32_t>& out, std::vector<token_span>* offsets,
                                          std::vector<int32_t>* words) const {
    if (!hf_) {
        const normalized n = spm_normalize(text);
        segment(n, 0, int32_t(n.text.size()), 0, out, offsets, words);
        return;
    }
    // Hugging Face: the normalizers, then Metaspace (spaces → ▁, ▁ in front, a word from each ▁), the model per word
    const normalized n = hf_normalize(text);
    const std::string& rep = metaspace_.replacement;
    const bool prepend = metaspace_.scheme != hf_metaspace::prepend::never;  // "first": the caller's text is one segment
    int32_t word = 0;
    auto run = [&](size_t from, size_t to, bool first_word) {  // one stretch of the normalizers' text, Metaspace'd
        normalized m;
        if (prepend && first_word && to > from && n.text.compare(from, rep.size(), rep) != 0 && n.text[from] != ' ')
            m.text += rep, m.to_orig.insert(m.to_orig.end(), rep.size(), n.to_orig[from]);
        for (size_t i = from; i < to; ++i) {
            if (n.text[i] == ' ') m.text += rep, m.to_orig.insert(m.to_orig.end(), rep.size(), n.to_orig[i]);
            else m.text += n.text[i], m.to_orig.push_back(n.to_orig[i]);
        }
        m.to_orig.push_back(n.to_orig[to]);
        size_t start = 0;
        for (size_t i = 1; metaspace_.split && i <= m.text.size(); ++i)  // each ▁ starts a word
            if (i == m.text.size() || m.text.compare(i, rep.size(), rep) == 0) {
                segment(m, int32_t(start), int32_t(i), word++, out, offsets, words);
                start = i;
            }
        if (!metaspace_.split && !m.text.empty()) segment(m, 0, int32_t(m.text.size()), word++, out, offsets, words);
    };
    if (!metaspace_.whitespace_split) {
        run(0, n.text.size(), true);
        return;
    }
    bool first_word = true;
    for (size_t i = 0; i < n.text.size();) {  // WhitespaceSplit: words between whitespace
        size_t k = i;
        if (u::is_white_space(u::utf8_next(n.text, k))) {
            i = k;
            continue;
        }
        size_t j = i;
        for (size_t next = j; j < n.text.size(); j = next)
            if (u::is_white_space(u::utf8_next(n.text, next))) break;
        run(i, j, first_word || metaspace_.scheme == hf_metaspace::prepend::always);
        first_word = false;
        i = j;
    }
}

std::vector<sentencepiece_tokenizer::piece_token> sentencepiece_tokenizer::encode_pieces(std::string_view text) const {
    if (hf_) throw error("sentencepiece: encode_pieces is sentencepiece's own pipeline (a .model file)");
    std::vector<int32_t> ids, words;
    std::vector<token_span> offsets;
    std::vector<std::string> surfaces;
    // as sentencepiece itself: control pieces written in the text (</s>) are plain text
    const normalized n = spm_normalize(text);
    segment(n, 0, int32_t(n.text.size()), 0, ids, &offsets, &words, &surfaces);
    std::vector<piece_token> out(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) out[i] = {ids[i], std::move(surfaces[i]), offsets[i], words[i]};
    return out;
}

// ------------------------------------------------------------------------------------------------------------ decoding
std::string sentencepiece_tokenizer::token_bytes(int32_t id) const {
    const sentencepiece_piece& p = piece(id);
    switch (p.type) {
    case piece_type::byte: return std::string(1, char(byte_of_piece(p.text)));
    case piece_type::control:
    case piece_type::unknown: return p.text;
    default: return replace_all(p.text, hf_ ? std::string_view(metaspace_.replacement) : kSpace, " ");
    }
}

// sentencepiece's Decode: ▁ → space, runs of byte pieces → their bytes as UTF-8 (each ill-formed byte U+FFFD), the
// space the dummy prefix put before the first word left out; special tokens as their text unless skipped.
std::string sentencepiece_tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
    const std::string_view space = hf_ ? std::string_view(metaspace_.replacement) : kSpace;
    const bool strip_first = hf_ ? metaspace_.scheme != hf_metaspace::prepend::never : model_.add_dummy_prefix || model_.remove_extra_whitespaces;
    const bool strip_more = !hf_ && model_.remove_extra_whitespaces;  // all leading spaces, not just the first token's
    std::string out, bytes;
    bool at_start = true, stripped = false;
    for (int32_t id : ids) {
        const sentencepiece_piece& p = piece(id);
        if (p.type == piece_type::byte) {
            bytes += char(byte_of_piece(p.text));
            continue;
        }
        append_bytes_as_text(bytes, out);
        bytes.clear();
        if (skip_special_tokens && is_special(id)) continue;
        if (stripped || !out.empty()) at_start = false;
        if (p.type == piece_type::control || p.type == piece_type::unknown) {
            if (p.type == piece_type::unknown || is_special(id)) out += p.text;
            stripped = false;
            continue;
        }
        std::string_view text = p.text;
        stripped = false;
        if (at_start && strip_first && text.substr(0, space.size()) == space) {
            text.remove_prefix(space.size());
            stripped = !strip_more;
        }
        out += replace_all(text, space, " ");
    }
    append_bytes_as_text(bytes, out);
    if (strip_decoded_) {  // Python's str.strip()
        const char* ws = " \t\n\r\f\v";
        const size_t b = out.find_first_not_of(ws);
        out = b == std::string::npos ? std::string() : out.substr(b, out.find_last_not_of(ws) + 1 - b);
    }
    return clean_up_spaces_ ? clean_up_tokenization(std::move(out)) : out;
}

}  // namespace wf
