// Eight bytes as one 64-bit word (little-endian, as wasm and x86), for the loader's and the re-blockers' bit shuffles
// (SWAR): a word read and written at any address, and the low bits of 8 bytes gathered into a byte and back.
// Internal to src/kernels.
#pragma once

#include <cstdint>
#include <cstring>

namespace wf::words {

constexpr uint64_t lo4 = 0x0F0F0F0F0F0F0F0Full, hi4 = 0xF0F0F0F0F0F0F0F0ull, ones8 = 0x0101010101010101ull;

inline uint64_t word(const uint8_t* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
}
inline void put(uint8_t* p, uint64_t w) { std::memcpy(p, &w, 8); }
// bit 0 of each of the 8 bytes → a byte, byte i's to bit i (the products land in the top byte without carries)
inline uint8_t pack8(uint64_t w) { return uint8_t((w & ones8) * 0x0102040810204080ull >> 56); }
// bit i of b → bit 0 of byte i, the others 0 (b in every byte, byte i keeps bit i, + 0x7F carries it to bit 7)
inline uint64_t unpack8(uint8_t b) { return (((b * ones8) & 0x8040201008040201ull) + 0x7F7F7F7F7F7F7F7Full) >> 7 & ones8; }

}  // namespace wf::words
