// Compiled with -mpclmul -msse4.1; RabinSlideClmul runs only when CpuHasClmul().
#include "dedup/internal/rabin_clmul.h"

#include <immintrin.h>

#include "dedup/rabin.h"

namespace shingled::dedup::internal {
namespace {

// The 128-bit carry-less product of a and b.
inline __m128i Clmul(uint64_t a, uint64_t b) {
  return _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(a)),
                              _mm_cvtsi64_si128(static_cast<long long>(b)), 0x00);
}

}  // namespace

RabinClmulConstants MakeRabinClmulConstants(uint64_t low, int width) {
  // mu = floor(x^128 / P) by long division: the quotient's bit k (k = 64..0) is set when the
  // running remainder has degree 64 + k. The remainder is kept as x^128 minus what was taken,
  // in three 64-bit words (bits 0..191).
  uint64_t rem[3] = {0, 0, 1};  // x^128
  uint64_t quotient_low = 0;    // bits 0..63 of mu; bit 64 is always set
  for (int k = 64; k >= 0; --k) {
    const int degree = 64 + k;
    if (((rem[degree / 64] >> (degree % 64)) & 1) == 0) continue;
    if (k < 64) quotient_low |= uint64_t{1} << k;
    // rem -= P * x^k, with P = x^64 + low.
    rem[degree / 64] ^= uint64_t{1} << (degree % 64);
    const Gf2Poly128 shifted = static_cast<Gf2Poly128>(low) << k;
    rem[0] ^= static_cast<uint64_t>(shifted);
    rem[1] ^= static_cast<uint64_t>(shifted >> 64);
  }
  return {low, quotient_low, Gf2XPowMod(64 * static_cast<uint64_t>(width), low)};
}

uint64_t RabinSlideClmul(const RabinClmulConstants& c, uint64_t fp, uint64_t old, uint64_t word) {
  // r = fp * x^64 + old * drop + word: degree < 128.
  const __m128i dropped = Clmul(old, c.drop);
  const uint64_t r_low = static_cast<uint64_t>(_mm_cvtsi128_si64(dropped)) ^ word;
  const uint64_t r_high = static_cast<uint64_t>(_mm_extract_epi64(dropped, 1)) ^ fp;
  // q = floor(r_high * mu / x^64) = r_high + high64(r_high * mu_low).
  const uint64_t q = r_high ^ static_cast<uint64_t>(_mm_extract_epi64(Clmul(r_high, c.mu_low), 1));
  // r mod P = r_low + low64(q * P) = r_low + low64(q * poly_low) (q * x^64 has no low bits).
  return r_low ^ static_cast<uint64_t>(_mm_cvtsi128_si64(Clmul(q, c.poly_low)));
}

uint64_t RabinSlideBlockClmul(const RabinClmulConstants& c, uint64_t fp, const uint64_t* words,
                              const uint64_t* olds, size_t n, uint64_t* out) {
  // Lane 0 of `fpv` holds fp; the chain from one fp to the next is a shift, two carry-less
  // products and three XORs, all in one register.
  const __m128i drop = _mm_cvtsi64_si128(static_cast<long long>(c.drop));
  const __m128i mu = _mm_cvtsi64_si128(static_cast<long long>(c.mu_low));
  const __m128i poly = _mm_cvtsi64_si128(static_cast<long long>(c.poly_low));
  __m128i fpv = _mm_cvtsi64_si128(static_cast<long long>(fp));
  for (size_t k = 0; k < n; ++k) {
    // old * drop + word, off the chain.
    const __m128i dropped = _mm_xor_si128(
        _mm_clmulepi64_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(olds + k)), drop,
                             0x00),
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(words + k)));
    // r = fp * x^64 + old * drop + word: high half in lane 1, low half in lane 0.
    const __m128i r = _mm_xor_si128(dropped, _mm_bslli_si128(fpv, 8));
    // Lane 1: q = r_high + high64(r_high * mu_low).
    const __m128i q = _mm_xor_si128(r, _mm_clmulepi64_si128(r, mu, 0x01));
    // Lane 0: r_low + low64(q * poly_low).
    fpv = _mm_xor_si128(r, _mm_clmulepi64_si128(q, poly, 0x01));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + k), fpv);
  }
  return static_cast<uint64_t>(_mm_cvtsi128_si64(fpv));
}

bool CpuHasClmul() { return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"); }

}  // namespace shingled::dedup::internal
