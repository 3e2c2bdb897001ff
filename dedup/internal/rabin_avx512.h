// Shingle fingerprints of a block of token words all at once, with AVX-512 carry-less multiplies
// (VPCLMULQDQ), for CPUs that have them. The same fingerprints as the sliding window of
// dedup/rabin.h and internal/rabin_clmul.h, computed without the chain from one window to the
// next: the window ending at word k is
//   f(k) = sum over j < w of words[k - j] * x^(64 j)  mod P,
// which is what the sliding update fp' = fp * x^64 + word - old * x^(64 w) keeps, when the words
// before a page's first are taken as zeros (the Sketcher's convention). The sliding form waits
// for each fingerprint before the next, two dependent carry-less products and a few XORs per
// word; here the w products of a window, and its Barrett reduction (see rabin_clmul.h), are
// independent of every other window's, so 8 windows go through the vector units side by side.
#ifndef SHINGLED_DEDUP_INTERNAL_RABIN_AVX512_H_
#define SHINGLED_DEDUP_INTERNAL_RABIN_AVX512_H_

#include <cstddef>
#include <cstdint>

#include "dedup/rabin.h"

namespace shingled::dedup::internal {

struct RabinWindowPowers {
  int width;          // w, 1..kMaxWindowWords
  uint64_t poly_low;  // P = x^64 + poly_low
  uint64_t mu_low;    // floor(x^128 / P) = x^64 + mu_low
  uint64_t power[kMaxWindowWords];  // x^(64 j) mod P for j < w
};

// The constants for P = x^64 + low and a window of `width` words (portable code).
// REQUIRES: 1 <= width <= kMaxWindowWords.
RabinWindowPowers MakeRabinWindowPowers(uint64_t low, int width);

// out[k] = f(k) for k in [0, n). REQUIRES: words[-(width - 1)] .. words[n - 1] are readable (the
// window's earlier words before the block, zeros before a page's first word); `out` does not
// overlap them. Call only when CpuHasAvx512Clmul().
void RabinWindowsAvx512(const RabinWindowPowers& c, const uint64_t* words, size_t n,
                        uint64_t* out);

// AVX-512 F and VPCLMULQDQ.
bool CpuHasAvx512Clmul();

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_RABIN_AVX512_H_
