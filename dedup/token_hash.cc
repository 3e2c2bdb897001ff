#include "dedup/internal/token_hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace shingled::dedup::internal {

TokenHashConstants MakeTokenHashConstants(uint64_t seed) {
  const uint8_t* s = XXH3_kSecret;
  TokenHashConstants c;
  c.seed = seed;
  c.bitflip_1to3 = (XXH_readLE32(s) ^ XXH_readLE32(s + 4)) + seed;
  c.bitflip_4to8 = (XXH_readLE64(s + 8) ^ XXH_readLE64(s + 16)) -
                   (seed ^ (static_cast<uint64_t>(XXH_swap32(static_cast<uint32_t>(seed))) << 32));
  c.bitflip_9to16_lo = (XXH_readLE64(s + 24) ^ XXH_readLE64(s + 32)) + seed;
  c.bitflip_9to16_hi = (XXH_readLE64(s + 40) ^ XXH_readLE64(s + 48)) - seed;
  return c;
}

void HashTokensScalar(const TokenHashConstants& c, const char* base, const uint32_t* offsets,
                      const uint32_t* lengths, size_t n, uint64_t* out) {
  for (size_t k = 0; k < n; ++k) out[k] = XXH3_64bits_withSeed(base + offsets[k], lengths[k], c.seed);
}

bool CpuHasAvx512DqVl() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

}  // namespace shingled::dedup::internal
