// SplitMix64 (Steele, Lea, Flood 2014): the deterministic stream from which the Rabin polynomial
// and the permutations are drawn. Private to dedup/.
#ifndef SHINGLED_DEDUP_INTERNAL_SPLITMIX_H_
#define SHINGLED_DEDUP_INTERNAL_SPLITMIX_H_

#include <cstdint>

namespace shingled::dedup::internal {

// Advances *state and returns the next value of its stream.
inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_SPLITMIX_H_
