// The AVX-512 window fingerprints (dedup/internal/rabin_avx512.h). This file alone is compiled
// with -mavx512f -mvpclmulqdq; RabinWindowsAvx512 runs only when CpuHasAvx512Clmul().
#include <immintrin.h>

#include "dedup/internal/rabin_avx512.h"

namespace shingled::dedup::internal {
namespace {

// Reduces the 128-bit polynomial in each 128-bit lane of r modulo P (Barrett, as in
// RabinSlideClmul) and returns it in the lane's low 64 bits; the high 64 bits are garbage.
inline __m512i Reduce(__m512i r, __m512i mu, __m512i poly) {
  // High half: q = r_high + high64(r_high * mu_low).
  const __m512i q = _mm512_xor_si512(r, _mm512_clmulepi64_epi128(r, mu, 0x01));
  // Low half: r_low + low64(q * poly_low).
  return _mm512_xor_si512(r, _mm512_clmulepi64_epi128(q, poly, 0x01));
}

}  // namespace

void RabinWindowsAvx512(const RabinWindowPowers& c, const uint64_t* words, size_t n,
                        uint64_t* out) {
  const __m512i mu = _mm512_set1_epi64(static_cast<long long>(c.mu_low));
  const __m512i poly = _mm512_set1_epi64(static_cast<long long>(c.poly_low));
  for (size_t k = 0; k < n; k += 8) {
    // The last few windows of a block: masked loads and stores, which touch no word past n.
    const __mmask8 live = n - k >= 8 ? __mmask8{0xFF} : static_cast<__mmask8>((1u << (n - k)) - 1);
    // Windows k, k + 2, ... in the even products, k + 1, k + 3, ... in the odd ones: 128-bit lane
    // l of each holds the unreduced sum for window k + 2 l (+ 1).
    __m512i even = _mm512_setzero_si512();
    __m512i odd = _mm512_setzero_si512();
    for (int j = 0; j < c.width; ++j) {
      // Word k + p - j of window k + p, in qword p. Words before the block are readable
      // (REQUIRES); those past n are masked.
      const __m512i v = _mm512_maskz_loadu_epi64(live, words + k - j);
      const __m512i power = _mm512_set1_epi64(static_cast<long long>(c.power[j]));
      even = _mm512_xor_si512(even, _mm512_clmulepi64_epi128(v, power, 0x00));
      odd = _mm512_xor_si512(odd, _mm512_clmulepi64_epi128(v, power, 0x01));
    }
    // Qwords 2 l and 2 l + 1 of the result from the low halves of lane l of each.
    // The maskz form: GCC 12's plain one reads an undefined register and warns about it.
    const __m512i fps =
        _mm512_maskz_unpacklo_epi64(__mmask8{0xFF}, Reduce(even, mu, poly), Reduce(odd, mu, poly));
    _mm512_mask_storeu_epi64(out + k, live, fps);
  }
}

}  // namespace shingled::dedup::internal
