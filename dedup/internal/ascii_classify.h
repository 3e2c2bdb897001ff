// Classification of 64 bytes at a time for the tokenizer's fast path. Private to dedup/.
#ifndef SHINGLED_DEDUP_INTERNAL_ASCII_CLASSIFY_H_
#define SHINGLED_DEDUP_INTERNAL_ASCII_CLASSIFY_H_

#include <cstdint>

namespace shingled::dedup::internal {

inline constexpr int kAsciiBlock = 64;

// If the 64 bytes at `in` are all ASCII, sets bit k of *alnum when in[k] is a letter or digit,
// writes the bytes lower-cased to `lower`, and returns true. Returns false (outputs undefined)
// when any byte is >= 0x80. Compiled with -mavx2; call only when the CPU has AVX2.
bool ClassifyAsciiAvx2(const unsigned char* in, char* lower, uint64_t* alnum);

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_ASCII_CLASSIFY_H_
