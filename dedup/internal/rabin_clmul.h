// Sliding-window Rabin fingerprints with carry-less multiplication (PCLMULQDQ), for CPUs that
// have it. The same arithmetic as RabinWindow's tables, so the same fingerprints: the window
// update fp' = (fp * x^64 + old * x^(64 w) + word) mod P is one 128-bit polynomial reduced once,
// by Barrett reduction, which over GF(2) is exact for inputs of degree < 128:
//   r = r_hi x^64 + r_lo,  q = floor(r_hi * mu / x^64),  r mod P = r_lo + (q * P) mod x^64,
// with mu = floor(x^128 / P) = x^64 + mu_low. Three carry-less products instead of 16 lookups.
#ifndef SHINGLED_DEDUP_INTERNAL_RABIN_CLMUL_H_
#define SHINGLED_DEDUP_INTERNAL_RABIN_CLMUL_H_

#include <cstddef>
#include <cstdint>

namespace shingled::dedup::internal {

struct RabinClmulConstants {
  uint64_t poly_low;  // P = x^64 + poly_low
  uint64_t mu_low;    // floor(x^128 / P) = x^64 + mu_low
  uint64_t drop;      // x^(64 w) mod P
};

// Computes the constants for P = x^64 + low and a window of `width` words (portable code).
RabinClmulConstants MakeRabinClmulConstants(uint64_t low, int width);

// (fp * x^64 + old * x^(64 w) + word) mod P. Compiled with -mpclmul; call only when the CPU has
// PCLMULQDQ (CpuHasClmul()).
uint64_t RabinSlideClmul(const RabinClmulConstants& c, uint64_t fp, uint64_t old, uint64_t word);

// The same over a block: for k in [0, n), fp = (fp * x^64 + olds[k] * x^(64 w) + words[k]) mod P
// and out[k] = fp. Returns the last fp (`fp` itself when n = 0). Kept in vector registers from
// one word to the next, without the calls and moves of RabinSlideClmul. `out` may not alias
// `words` or `olds`. Compiled with -mpclmul; call only when CpuHasClmul().
uint64_t RabinSlideBlockClmul(const RabinClmulConstants& c, uint64_t fp, const uint64_t* words,
                              const uint64_t* olds, size_t n, uint64_t* out);

bool CpuHasClmul();

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_RABIN_CLMUL_H_
