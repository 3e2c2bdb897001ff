// The AVX2 minhash kernel. This file alone is compiled with -mavx2; it runs only when
// CpuSupports(SimdLevel::kAvx2) (dedup/minhash.cc).
#include <immintrin.h>

#include "dedup/internal/minhash.h"

namespace shingled::dedup::internal {
namespace {

// kVectors and kStride are template parameters so that the lead vectors live in registers (with
// a run-time count the compiler keeps them on the stack, and every XOR waits on a store) and row
// addresses need no multiply. kVectors * 32 may be less than the row: t = 84 reads 96 of 128.
template <int kVectors, size_t kStride>
void Kernel(const MinhashTables& tables, const uint64_t* ys, size_t n, MinhashState* state) {
  for (size_t k = 0; k < n; ++k) {
    const uint64_t y = ys[k];
    __m256i lead[kVectors];
    const uint8_t* rows = tables.lead_rows.data();
    #pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      lead[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + kStride * (y & (kChunkValues - 1)) + 32 * v));
    }
#pragma GCC unroll 16
    for (int chunk = 1; chunk < kChunks; ++chunk) {
      const uint8_t* row =
          rows + kStride * (kChunkValues * chunk + ((y >> (kChunkBits * chunk)) & (kChunkValues - 1)));
      #pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) {
        lead[v] = _mm256_xor_si256(
            lead[v], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 32 * v)));
      }
    }
    #pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) {
      const __m256i current =
          _mm256_load_si256(reinterpret_cast<const __m256i*>(state->lead + 32 * v));
      // lead <= current, unsigned: min(lead, current) == lead.
      const __m256i le = _mm256_cmpeq_epi8(_mm256_min_epu8(lead[v], current), lead[v]);
      uint32_t mask = static_cast<uint32_t>(_mm256_movemask_epi8(le));
      // Bytes past t are padding and never a candidate.
      const int valid = tables.t - 32 * v;
      if (valid < 32) mask &= valid <= 0 ? 0u : (1u << valid) - 1;
      if (mask == 0) continue;
      alignas(32) uint8_t bytes[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(bytes), lead[v]);
      while (mask != 0) {
        const int bit = __builtin_ctz(mask);
        mask &= mask - 1;
        MaybeReplace(tables, 32 * v + bit, bytes[bit], y, state);
      }
    }
  }
}

}  // namespace

void MinhashAvx2(const MinhashTables& tables, const uint64_t* ys, size_t n, MinhashState* state) {
  const int vectors = (tables.t + 31) / 32;
  switch (tables.stride) {
    case 64:
      return vectors == 1 ? Kernel<1, 64>(tables, ys, n, state) : Kernel<2, 64>(tables, ys, n, state);
    case 128:
      return vectors == 3 ? Kernel<3, 128>(tables, ys, n, state)
                          : Kernel<4, 128>(tables, ys, n, state);
    case 192:
      return vectors == 5 ? Kernel<5, 192>(tables, ys, n, state)
                          : Kernel<6, 192>(tables, ys, n, state);
    default:
      return vectors == 7 ? Kernel<7, 256>(tables, ys, n, state)
                          : Kernel<8, 256>(tables, ys, n, state);
  }
}

}  // namespace shingled::dedup::internal
