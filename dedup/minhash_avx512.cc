// The AVX-512 minhash kernel. This file alone is compiled with -mavx512f -mavx512bw; it runs only
// when CpuSupports(SimdLevel::kAvx512) (dedup/minhash.cc).
#include <immintrin.h>

#include "dedup/internal/minhash.h"

namespace shingled::dedup::internal {

void MinhashAvx512(const MinhashTables& tables, const uint64_t* ys, size_t n,
                   MinhashState* state) {
  constexpr int kMaxVectors = kMaxMinhashes / 64;
  const int vectors = tables.stride / 64;
  for (size_t k = 0; k < n; ++k) {
    const uint64_t y = ys[k];
    __m512i lead[kMaxVectors];
    const uint8_t* row0 = tables.Row(0, y);
    for (int v = 0; v < vectors; ++v) lead[v] = _mm512_loadu_si512(row0 + 64 * v);
    for (int nibble = 1; nibble < 16; ++nibble) {
      const uint8_t* row = tables.Row(nibble, y);
      for (int v = 0; v < vectors; ++v) {
        lead[v] = _mm512_xor_si512(lead[v], _mm512_loadu_si512(row + 64 * v));
      }
    }
    for (int v = 0; v < vectors; ++v) {
      const __m512i current = _mm512_load_si512(state->lead + 64 * v);
      // Bytes past t are padding and never a candidate.
      const int valid = tables.t - 64 * v;
      uint64_t mask = _mm512_cmple_epu8_mask(lead[v], current);
      if (valid < 64) mask &= valid <= 0 ? 0ull : (1ull << valid) - 1;
      if (mask == 0) continue;
      alignas(64) uint8_t bytes[64];
      _mm512_store_si512(bytes, lead[v]);
      while (mask != 0) {
        const int bit = __builtin_ctzll(mask);
        mask &= mask - 1;
        MaybeReplace(tables, 64 * v + bit, bytes[bit], y, state);
      }
    }
  }
}

}  // namespace shingled::dedup::internal
