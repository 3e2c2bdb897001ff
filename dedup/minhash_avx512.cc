// The AVX-512 minhash kernel. This file alone is compiled with -mavx512f -mavx512bw; it runs only
// when CpuSupports(SimdLevel::kAvx512) (dedup/minhash.cc).
#include <immintrin.h>

#include "dedup/internal/minhash.h"

namespace shingled::dedup::internal {
namespace {

// kVectors is a template parameter so that the lead vectors live in registers (see the AVX2
// kernel).
template <int kVectors>
void Kernel(const MinhashTables& tables, const uint64_t* ys, size_t n, MinhashState* state) {
  constexpr size_t kStride = 64 * kVectors;  // a compile-time row width: no multiply per row
  for (size_t k = 0; k < n; ++k) {
    const uint64_t y = ys[k];
    __m512i lead[kVectors];
    const uint8_t* rows = tables.lead_rows.data();
    #pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) lead[v] = _mm512_loadu_si512(rows + kStride * (y & (kChunkValues - 1)) + 64 * v);
#pragma GCC unroll 16
    for (int chunk = 1; chunk < kChunks; ++chunk) {
      const uint8_t* row =
          rows + kStride * (kChunkValues * chunk + ((y >> (kChunkBits * chunk)) & (kChunkValues - 1)));
      #pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) {
        lead[v] = _mm512_xor_si512(lead[v], _mm512_loadu_si512(row + 64 * v));
      }
    }
    #pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      const __m512i current = _mm512_load_si512(state->lead + 64 * v);
      uint64_t mask = _mm512_cmple_epu8_mask(lead[v], current);
      // Bytes past t are padding and never a candidate.
      const int valid = tables.t - 64 * v;
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

}  // namespace

void MinhashAvx512(const MinhashTables& tables, const uint64_t* ys, size_t n,
                   MinhashState* state) {
  switch (tables.stride / 64) {
    case 1: return Kernel<1>(tables, ys, n, state);
    case 2: return Kernel<2>(tables, ys, n, state);
    case 3: return Kernel<3>(tables, ys, n, state);
    default: return Kernel<kMaxMinhashes / 64>(tables, ys, n, state);
  }
}

}  // namespace shingled::dedup::internal
