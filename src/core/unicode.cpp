#include "core/unicode.h"

#include <algorithm>
#include <vector>

namespace wf::unicode {

namespace tables {
extern const uint32_t category_starts[];
extern const uint8_t category_values[];
extern const int category_runs;
extern const uint32_t ccc_starts[];
extern const uint8_t ccc_values[];
extern const int ccc_runs;
extern const uint32_t white_space[][2];
extern const int white_space_ranges;
extern const uint32_t decomp_keys[];
extern const uint16_t decomp_offsets[];
extern const uint32_t decomp_pool[];
extern const int decomp_count;
extern const uint32_t lower_keys[];
extern const uint16_t lower_offsets[];
extern const uint32_t lower_pool[];
extern const int lower_count;
extern const uint32_t compose_pairs[][3];
extern const int compose_count;
}  // namespace tables

namespace {
template <class V>
V run_lookup(const uint32_t* starts, const V* values, int n, char32_t c) {
    const auto it = std::upper_bound(starts, starts + n, uint32_t(c));
    return it == starts ? V(0) : values[(it - starts) - 1];
}

bool mapped(const uint32_t* keys, const uint16_t* offs, const uint32_t* pool, int n, char32_t c, std::u32string& out) {
    const auto it = std::lower_bound(keys, keys + n, uint32_t(c));
    if (it == keys + n || *it != uint32_t(c)) return false;
    const auto i = it - keys;
    for (int j = offs[i]; j < offs[i + 1]; ++j) out.push_back(char32_t(pool[j]));
    return true;
}

constexpr char32_t SBase = 0xAC00, LBase = 0x1100, VBase = 0x1161, TBase = 0x11A7;
constexpr int LCount = 19, VCount = 21, TCount = 28, NCount = VCount * TCount, SCount = LCount * NCount;
}  // namespace

category general_category(char32_t c) {
    if (c < 0x80) {  // ASCII, without a table search
        if (c < 0x20 || c == 0x7F) return Cc;
        if (c == ' ') return Zs;
        if (c >= '0' && c <= '9') return Nd;
        if (c >= 'A' && c <= 'Z') return Lu;
        if (c >= 'a' && c <= 'z') return Ll;
        switch (c) {
        case '$': return Sc;
        case '+': case '<': case '=': case '>': case '|': case '~': return Sm;
        case '^': case '`': return Sk;
        case '(': case '[': case '{': return Ps;
        case ')': case ']': case '}': return Pe;
        case '-': return Pd;
        case '_': return Pc;
        default: return Po;
        }
    }
    if (c > 0x10FFFF) return Cn;
    return category(run_lookup(tables::category_starts, tables::category_values, tables::category_runs, c));
}

uint8_t combining_class(char32_t c) {
    if (c < 0x300 || c > 0x10FFFF) return 0;
    return run_lookup(tables::ccc_starts, tables::ccc_values, tables::ccc_runs, c);
}

bool is_white_space(char32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
    for (int i = 0; i < tables::white_space_ranges; ++i)
        if (c >= tables::white_space[i][0] && c <= tables::white_space[i][1]) return true;
    return false;
}

void decompose(char32_t c, std::u32string& out) {
    if (c < 0xC0) {  // nothing below U+00C0 decomposes
        out.push_back(c);
        return;
    }
    if (c >= SBase && c < SBase + SCount) {  // Hangul syllable, algorithmically
        const int s = int(c - SBase);
        out.push_back(LBase + s / NCount);
        out.push_back(VBase + (s % NCount) / TCount);
        if (s % TCount) out.push_back(TBase + s % TCount);
        return;
    }
    if (!mapped(tables::decomp_keys, tables::decomp_offsets, tables::decomp_pool, tables::decomp_count, c, out)) out.push_back(c);
}

std::u32string nfd(std::u32string_view s) {
    std::u32string out;
    out.reserve(s.size());
    for (char32_t c : s) decompose(c, out);
    // canonical ordering: stable sort of every run of non-starters by combining class
    for (size_t i = 0; i < out.size();) {
        if (combining_class(out[i]) == 0) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < out.size() && combining_class(out[j]) != 0) ++j;
        std::stable_sort(out.begin() + long(i), out.begin() + long(j), [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
        i = j;
    }
    return out;
}

// The primary composite of (a, b), or 0: Hangul L + V and LV + T algorithmically, the rest from the table.
char32_t compose_pair(char32_t a, char32_t b) {
    if (a >= LBase && a < LBase + LCount && b >= VBase && b < VBase + VCount)
        return SBase + ((a - LBase) * VCount + (b - VBase)) * TCount;
    if (a >= SBase && a < SBase + SCount && (a - SBase) % TCount == 0 && b > TBase && b < TBase + TCount) return a + (b - TBase);
    const uint32_t key[2] = {uint32_t(a), uint32_t(b)};
    const auto* first = tables::compose_pairs;
    const auto* last = first + tables::compose_count;
    const auto* it = std::lower_bound(first, last, key, [](const uint32_t (&p)[3], const uint32_t (&k)[2]) {
        return p[0] != k[0] ? p[0] < k[0] : p[1] < k[1];
    });
    return it != last && (*it)[0] == a && (*it)[1] == b ? char32_t((*it)[2]) : 0;
}

std::vector<aligned_char> nfc(const std::vector<aligned_char>& s) {
    // NFD, each piece keeping its character's span
    std::vector<aligned_char> d;
    d.reserve(s.size());
    std::u32string pieces;
    for (const aligned_char& a : s) {
        pieces.clear();
        decompose(a.c, pieces);
        for (char32_t c : pieces) d.push_back({c, a.begin, a.end});
    }
    for (size_t i = 0; i < d.size();) {  // canonical ordering
        if (combining_class(d[i].c) == 0) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < d.size() && combining_class(d[j].c) != 0) ++j;
        std::stable_sort(d.begin() + long(i), d.begin() + long(j),
                         [](const aligned_char& x, const aligned_char& y) { return combining_class(x.c) < combining_class(y.c); });
        i = j;
    }
    // canonical composition: a character joins the last starter unless something between them blocks it (a
    // character of combining class 0 or of one at least its own)
    std::vector<aligned_char> out;
    out.reserve(d.size());
    long starter = -1;
    for (const aligned_char& a : d) {
        const uint8_t cc = combining_class(a.c);
        if (starter >= 0) {
            const bool adjacent = long(out.size()) - 1 == starter;
            const uint8_t prev = combining_class(out.back().c);
            if (adjacent || (prev != 0 && prev < cc)) {
                if (const char32_t c = compose_pair(out[size_t(starter)].c, a.c)) {
                    aligned_char& st = out[size_t(starter)];
                    st = {c, std::min(st.begin, a.begin), std::max(st.end, a.end)};
                    continue;
                }
            }
        }
        if (cc == 0) starter = long(out.size());
        out.push_back(a);
    }
    return out;
}

std::u32string nfc(std::u32string_view s) {
    std::vector<aligned_char> a;
    a.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) a.push_back({s[i], int32_t(i), int32_t(i + 1)});
    std::u32string out;
    for (const aligned_char& c : nfc(a)) out.push_back(c.c);
    return out;
}

void to_lower(char32_t c, std::u32string& out) {
    if (c < 0x80) {
        out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
        return;
    }
    if (!mapped(tables::lower_keys, tables::lower_offsets, tables::lower_pool, tables::lower_count, c, out)) out.push_back(c);
}

char32_t utf8_next(std::string_view s, size_t& i) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const size_t n = s.size();
    const unsigned b = p[i];
    if (b < 0x80) {
        ++i;
        return b;
    }
    int need;
    char32_t cp;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b >= 0xC2 && b <= 0xDF) need = 1, cp = b & 0x1F;
    else if (b >= 0xE0 && b <= 0xEF) {
        need = 2, cp = b & 0x0F;
        if (b == 0xE0) lo = 0xA0;
        if (b == 0xED) hi = 0x9F;  // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 3, cp = b & 0x07;
        if (b == 0xF0) lo = 0x90;
        if (b == 0xF4) hi = 0x8F;  // ≤ U+10FFFF
    } else {
        ++i;
        return 0xFFFD;
    }
    size_t j = i + 1;
    bool ok = true;
    for (int k = 0; k < need; ++k, ++j) {
        const unsigned lo_k = k == 0 ? lo : 0x80, hi_k = k == 0 ? hi : 0xBF;
        if (j >= n || p[j] < lo_k || p[j] > hi_k) {
            ok = false;
            break;
        }
        cp = cp << 6 | (p[j] & 0x3F);
    }
    i = j;  // the maximal subpart consumed so far is replaced by one U+FFFD
    return ok ? cp : 0xFFFD;
}

std::u32string utf8_decode(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) out.push_back(utf8_next(s, i));
    return out;
}

int64_t code_point_length(std::string_view s) {
    int64_t n = 0;
    for (char c : s) n += (uint8_t(c) & 0xC0) != 0x80;
    return n;
}

int64_t utf16_length(std::string_view s) {
    int64_t n = 0;
    for (char c : s)
        if ((uint8_t(c) & 0xC0) != 0x80) n += uint8_t(c) >= 0xF0 ? 2 : 1;
    return n;
}

void utf8_append(char32_t c, std::string& out) {
    if (c < 0x80) out += char(c);
    else if (c < 0x800) out += char(0xC0 | c >> 6), out += char(0x80 | (c & 0x3F));
    else if (c < 0x10000) out += char(0xE0 | c >> 12), out += char(0x80 | (c >> 6 & 0x3F)), out += char(0x80 | (c & 0x3F));
    else out += char(0xF0 | c >> 18), out += char(0x80 | (c >> 12 & 0x3F)), out += char(0x80 | (c >> 6 & 0x3F)), out += char(0x80 | (c & 0x3F));
}

std::string utf8_encode(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) utf8_append(c, out);
    return out;
}

}  // namespace wf::unicode
