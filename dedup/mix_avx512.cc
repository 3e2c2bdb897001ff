// MixAvx512 (dedup/internal/minhash.h). This file alone is compiled with -mavx512f -mavx512dq; it
// runs only when CpuHasAvx512DqVl().
#include <immintrin.h>

#include "dedup/internal/minhash.h"

namespace shingled::dedup::internal {
namespace {

// v ^ (v >> 33). The maskz shift: GCC 12's plain _mm512_srli_epi64 reads an undefined register
// and warns about it.
inline __m512i ShiftXor33(__m512i v) {
  return _mm512_xor_si512(v, _mm512_maskz_srli_epi64(__mmask8{0xFF}, v, 33));
}

}  // namespace

void MixAvx512(const uint64_t* xs, size_t n, uint64_t seed, uint64_t* ys) {
  // Fmix64's steps, lane by lane.
  const __m512i s = _mm512_set1_epi64(static_cast<long long>(seed));
  const __m512i c1 = _mm512_set1_epi64(static_cast<long long>(0xff51afd7ed558ccdull));
  const __m512i c2 = _mm512_set1_epi64(static_cast<long long>(0xc4ceb9fe1a85ec53ull));
  for (size_t k = 0; k < n; k += 8) {
    // The last few values by masked loads and stores, which touch nothing past n.
    const __mmask8 live = n - k >= 8 ? __mmask8{0xFF} : static_cast<__mmask8>((1u << (n - k)) - 1);
    __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi64(live, xs + k), s);
    v = _mm512_mullo_epi64(ShiftXor33(v), c1);
    v = _mm512_mullo_epi64(ShiftXor33(v), c2);
    _mm512_mask_storeu_epi64(ys + k, live, ShiftXor33(v));
  }
}

}  // namespace shingled::dedup::internal
