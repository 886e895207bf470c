// Unicode character properties (tables generated from the UCD, Unicode 15.0) and UTF-8 conversion.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wf::unicode {

enum category : uint8_t { Cn, Lu, Ll, Lt, Lm, Lo, Mn, Mc, Me, Nd, Nl, No, Pc, Pd, Ps, Pe, Pi, Pf, Po, Sm, Sc, Sk, So, Zs, Zl, Zp, Cc, Cf, Cs, Co };

category general_category(char32_t c);
inline bool is_letter(char32_t c) { const auto k = general_category(c); return k >= Lu && k <= Lo; }
inline bool is_number(char32_t c) { const auto k = general_category(c); return k >= Nd && k <= No; }
inline bool is_punctuation(char32_t c) { const auto k = general_category(c); return k >= Pc && k <= Po; }
inline bool is_other(char32_t c) { const auto k = general_category(c); return k == Cn || k >= Cc; }  // Cc Cf Cs Co Cn
bool is_white_space(char32_t c);  // the White_Space property
uint8_t combining_class(char32_t c);
// Appends the full canonical decomposition of c (Hangul syllables included).
void decompose(char32_t c, std::u32string& out);
// NFD of a whole string: decomposition, then canonical ordering of combining marks.
std::u32string nfd(std::u32string_view s);
// NFC (UAX #15): NFD, then canonical composition into the primary composites (Full_Composition_Exclusion left out).
std::u32string nfc(std::u32string_view s);
// The same with each character's source span (begin, end in the caller's units, such as UTF-8 byte offsets): a
// decomposed piece keeps its character's span, a composite spans everything it was made of.
struct aligned_char {
    char32_t c;
    int32_t begin, end;
};
std::vector<aligned_char> nfc(const std::vector<aligned_char>& s);
// Appends the full lowercase mapping of c (one or more code points).
void to_lower(char32_t c, std::u32string& out);

// UTF-8 → code points; each maximal ill-formed subsequence becomes U+FFFD (the WHATWG decoder's rule), so no
// byte is ever read past `len` and every input decodes.
std::u32string utf8_decode(std::string_view s);
// The code point at byte i (i < s.size()), i moved past it; the same rule.
char32_t utf8_next(std::string_view s, size_t& i);
// Lengths of UTF-8 text (well-formed or not, counted by lead bytes) in code points (Python's string indices) and in
// UTF-16 code units (JavaScript's: a 4-byte character is a surrogate pair).
int64_t code_point_length(std::string_view s);
int64_t utf16_length(std::string_view s);
void utf8_append(char32_t c, std::string& out);
std::string utf8_encode(std::u32string_view s);

}  // namespace wf::unicode
