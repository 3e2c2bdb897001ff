// Token fingerprints in blocks: XXH3_64bits_withSeed(token, seed) of many tokens at once. The
// Sketcher gathers a block of tokens in one buffer and hashes them together; the AVX-512 kernel
// computes the three short-input paths of XXH3 (1-3, 4-8 and 9-16 bytes) for 8 tokens per step and
// keeps each token's own, with no branch on the length, which a scalar call mispredicts for one
// token in three on prose. The values are XXH3's, bit for bit (tests/dedup/token_hash_test.cc
// compares every length with the library): token fingerprints are part of stored sketches.
#ifndef SHINGLED_DEDUP_INTERNAL_TOKEN_HASH_H_
#define SHINGLED_DEDUP_INTERNAL_TOKEN_HASH_H_

#include <cstddef>
#include <cstdint>

namespace shingled::dedup::internal {

// Bytes before the first token and after the last that a kernel may read (and ignore).
inline constexpr size_t kTokenHashPadding = 16;

// XXH3's default secret folded with the seed, per length class (xxhash.h, XXH3_len_*_64b).
struct TokenHashConstants {
  uint64_t seed;
  uint64_t bitflip_1to3;
  uint64_t bitflip_4to8;
  uint64_t bitflip_9to16_lo;
  uint64_t bitflip_9to16_hi;
};

TokenHashConstants MakeTokenHashConstants(uint64_t seed);

// out[k] = XXH3_64bits_withSeed(base + offsets[k], lengths[k], c.seed) for k in [0, n).
// REQUIRES: 1 <= lengths[k]; base[offsets[k] - kTokenHashPadding, offsets[k] + lengths[k] +
// kTokenHashPadding) readable.
using TokenHashKernel = void (*)(const TokenHashConstants& c, const char* base,
                                 const uint32_t* offsets, const uint32_t* lengths, size_t n,
                                 uint64_t* out);

// One library call per token.
void HashTokensScalar(const TokenHashConstants& c, const char* base, const uint32_t* offsets,
                      const uint32_t* lengths, size_t n, uint64_t* out);
// Tokens of up to 16 bytes 8 at a time, longer ones by the library. Compiled with AVX-512 F, BW,
// DQ, VL; call only when CpuHasAvx512DqVl().
void HashTokensAvx512(const TokenHashConstants& c, const char* base, const uint32_t* offsets,
                      const uint32_t* lengths, size_t n, uint64_t* out);
bool CpuHasAvx512DqVl();

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_TOKEN_HASH_H_
