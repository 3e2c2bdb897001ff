// The murmur3 64-bit finalizer, shared by the sketches (dedup/) and the writer's hash tables
// (store/).
#ifndef SHINGLED_BASE_FMIX_H_
#define SHINGLED_BASE_FMIX_H_

#include <cstdint>

namespace shingled {

// A bijection of 64-bit words with full avalanche.
inline uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

}  // namespace shingled

#endif  // SHINGLED_BASE_FMIX_H_
