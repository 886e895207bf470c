#include "core/unicode.h"

#include <algorithm>
#include <array>
#include <vector>

namespace wf::unicode {

namespace tables {
// src/core/unicode-tables.cpp, packed by tools/unicode/gen-unicode-tables.py (its docstring has the format)
extern const uint8_t category_packed[], ccc_packed[], decomp_packed[], lower_packed[], compose_packed[];
extern const uint32_t white_space[][2];
extern const int white_space_ranges;
}  // namespace tables

namespace {
// The packed tables' numbers: LEB128 varints, signed ones zigzag-coded. The data is the generator's own, so a
// read never runs past it.
struct reader {
    const uint8_t* p;
    uint32_t varint() {
        uint32_t n = 0;
        for (int shift = 0;; shift += 7) {
            const uint8_t b = *p++;
            n |= uint32_t(b & 0x7F) << shift;
            if (b < 0x80) return n;
        }
    }
    int32_t zigzag() {
        const uint32_t n = varint();
        return int32_t(n >> 1) ^ -int32_t(n & 1);
    }
};

// A property constant over runs of code points: values[i] from starts[i] up to the next start.
struct runs {
    std::vector<uint32_t> starts;
    std::vector<uint8_t> values;
    explicit runs(const uint8_t* packed) {
        reader r{packed};
        const uint32_t n = r.varint();
        starts.resize(n);
        values.resize(n);
        uint32_t start = 0;
        for (auto& s : starts) s = start += r.varint();
        for (auto& v : values) v = uint8_t(r.varint());
    }
    uint8_t operator()(char32_t c) const {
        const auto it = std::upper_bound(starts.begin(), starts.end(), uint32_t(c));
        return it == starts.begin() ? 0 : values[size_t(it - starts.begin()) - 1];
    }
};

// Code point → code points (a decomposition, a lowercase mapping): keys sorted, the i-th key's mapping is
// pool[offsets[i], offsets[i + 1]).
struct mapping {
    std::vector<uint32_t> keys, offsets;
    std::u32string pool;
    explicit mapping(const uint8_t* packed) {
        reader r{packed};
        const uint32_t n = r.varint();
        keys.resize(n);
        offsets.resize(n + 1);
        uint32_t key = 0;
        for (auto& k : keys) k = key += r.varint();
        for (uint32_t i = 0; i < n; ++i) offsets[i + 1] = offsets[i] + r.varint();
        pool.resize(offsets[n]);
        std::vector<int32_t> last;  // per position in a mapping: the last (value - key) there
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t j = offsets[i]; j < offsets[i + 1]; ++j) {
                const size_t pos = j - offsets[i];
                if (pos == last.size()) last.push_back(0);
                last[pos] += r.zigzag();
                pool[j] = char32_t(int32_t(keys[i]) + last[pos]);
            }
    }
    // appends c's mapping to out; false when c maps to itself
    bool operator()(char32_t c, std::u32string& out) const {
        const auto it = std::lower_bound(keys.begin(), keys.end(), uint32_t(c));
        if (it == keys.end() || *it != uint32_t(c)) return false;
        const size_t i = size_t(it - keys.begin());
        out.append(pool, offsets[i], offsets[i + 1] - offsets[i]);
        return true;
    }
};

// The primary composites: (first, second, composite), sorted.
struct compositions {
    std::vector<std::array<uint32_t, 3>> triples;
    explicit compositions(const uint8_t* packed) {
        reader r{packed};
        triples.resize(r.varint());
        std::array<uint32_t, 3> prev{};
        for (auto& t : triples) {
            for (int k = 0; k < 3; ++k) prev[k] = uint32_t(int32_t(prev[k]) + r.zigzag());
            t = prev;
        }
    }
    char32_t operator()(char32_t a, char32_t b) const {
        const std::array<uint32_t, 3> key{uint32_t(a), uint32_t(b), 0};
        const auto it = std::lower_bound(triples.begin(), triples.end(), key);
        return it != triples.end() && (*it)[0] == key[0] && (*it)[1] == key[1] ? char32_t((*it)[2]) : 0;
    }
};

// unpacked at first use, once per instance (26 KB of varints into the arrays the lookups search)
struct unpacked {
    runs category{tables::category_packed}, ccc{tables::ccc_packed};
    mapping decomp{tables::decomp_packed}, lower{tables::lower_packed};
    compositions compose{tables::compose_packed};
};
const unpacked& unpacked_tables() {
    static const unpacked t;
    return t;
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
    return category(unpacked_tables().category(c));
}

uint8_t combining_class(char32_t c) {
    if (c < 0x300 || c > 0x10FFFF) return 0;
    return unpacked_tables().ccc(c);
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
    if (!unpacked_tables().decomp(c, out)) out.push_back(c);
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
    return unpacked_tables().compose(a, b);
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
    if (!unpacked_tables().lower(c, out)) out.push_back(c);
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
