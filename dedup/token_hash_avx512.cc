// XXH3_64bits_withSeed of 8 short tokens at a time. This file alone is compiled with -mavx512f
// -mavx512bw -mavx512dq -mavx512vl; it runs only when CpuHasAvx512DqVl() (internal/token_hash.h).
//
// For each token the 8 bytes at its start and the 8 bytes ending at its end are gathered; the
// three short paths of XXH3 (xxhash.h 0.8: XXH3_len_1to3_64b, XXH3_len_4to8_64b,
// XXH3_len_9to16_64b) are all computed from them and each lane keeps the one its length selects.
#include <immintrin.h>

// GCC 12's unmasked AVX-512 intrinsics pass an undefined vector as the unused merge operand, and
// once inlined -Wmaybe-uninitialized reports it (GCC bug 105593); nothing here is uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "dedup/internal/token_hash.h"

namespace shingled::dedup::internal {
namespace {

constexpr int kLanes = 8;

inline __m512i Mul(__m512i a, uint64_t b) {
  return _mm512_mullo_epi64(a, _mm512_set1_epi64(static_cast<long long>(b)));
}
inline __m512i XorShift(__m512i v, unsigned shift) {
  return _mm512_xor_si512(v, _mm512_srli_epi64(v, shift));
}

// XXH3_mul128_fold64: the low and high halves of the 128-bit product, XORed.
inline __m512i Mul128Fold64(__m512i a, __m512i b) {
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
  const __m512i a_hi = _mm512_srli_epi64(a, 32);
  const __m512i b_hi = _mm512_srli_epi64(b, 32);
  const __m512i lo_lo = _mm512_mul_epu32(a, b);
  const __m512i hi_lo = _mm512_mul_epu32(a_hi, b);
  const __m512i lo_hi = _mm512_mul_epu32(a, b_hi);
  const __m512i hi_hi = _mm512_mul_epu32(a_hi, b_hi);
  const __m512i cross = _mm512_add_epi64(
      _mm512_add_epi64(_mm512_srli_epi64(lo_lo, 32), _mm512_and_si512(hi_lo, low32)), lo_hi);
  const __m512i upper = _mm512_add_epi64(
      _mm512_add_epi64(_mm512_srli_epi64(hi_lo, 32), _mm512_srli_epi64(cross, 32)), hi_hi);
  // lower = (cross << 32) | (lo_lo & low32); 0xEA: (a & b) | c with a = lo_lo, b = low32.
  const __m512i lower =
      _mm512_ternarylogic_epi64(lo_lo, low32, _mm512_slli_epi64(cross, 32), 0xEA);
  return _mm512_xor_si512(lower, upper);
}

inline __m512i Hash8(const TokenHashConstants& c, const char* base, __m256i offsets,
                     __m512i len, __mmask8 lanes) {
  const __m256i ends = _mm256_sub_epi32(
      _mm256_add_epi32(offsets, _mm512_cvtepi64_epi32(len)), _mm256_set1_epi32(8));
  const __m512i head = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), lanes, offsets, base, 1);
  const __m512i tail = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), lanes, ends, base, 1);

  // 9 to 16 bytes.
  const __m512i in_lo = _mm512_xor_si512(head, _mm512_set1_epi64(static_cast<long long>(c.bitflip_9to16_lo)));
  const __m512i in_hi = _mm512_xor_si512(tail, _mm512_set1_epi64(static_cast<long long>(c.bitflip_9to16_hi)));
  const __m512i bswap = _mm512_broadcast_i32x4(
      _mm_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  __m512i acc = _mm512_add_epi64(_mm512_add_epi64(len, _mm512_shuffle_epi8(in_lo, bswap)),
                                 _mm512_add_epi64(in_hi, Mul128Fold64(in_lo, in_hi)));
  acc = XorShift(Mul(XorShift(acc, 37), 0x165667919E3779F9ull), 32);  // XXH3_avalanche

  // 4 to 8 bytes: the first 4 bytes high, the last 4 low.
  __m512i h48 = _mm512_xor_si512(
      _mm512_or_si512(_mm512_slli_epi64(head, 32), _mm512_srli_epi64(tail, 32)),
      _mm512_set1_epi64(static_cast<long long>(c.bitflip_4to8)));
  // XXH3_rrmxmx; 0x96: a ^ b ^ c.
  h48 = _mm512_ternarylogic_epi64(h48, _mm512_rol_epi64(h48, 49), _mm512_rol_epi64(h48, 24), 0x96);
  h48 = Mul(h48, 0x9FB21C651E98DF25ull);
  h48 = _mm512_xor_si512(h48, _mm512_add_epi64(_mm512_srli_epi64(h48, 35), len));
  h48 = XorShift(Mul(h48, 0x9FB21C651E98DF25ull), 28);

  // 1 to 3 bytes: c1 = input[0], c2 = input[len / 2], c3 = input[len - 1].
  const __m512i byte = _mm512_set1_epi64(0xFF);
  const __m512i c1 = _mm512_and_si512(head, byte);
  const __mmask8 one = _mm512_cmpeq_epi64_mask(len, _mm512_set1_epi64(1));
  const __m512i c2 = _mm512_mask_blend_epi64(one, _mm512_and_si512(_mm512_srli_epi64(head, 8), byte), c1);
  const __m512i c3 = _mm512_srli_epi64(tail, 56);
  const __m512i combined = _mm512_or_si512(
      _mm512_or_si512(_mm512_slli_epi64(c1, 16), _mm512_slli_epi64(c2, 24)),
      _mm512_or_si512(c3, _mm512_slli_epi64(len, 8)));
  __m512i h13 = _mm512_xor_si512(combined, _mm512_set1_epi64(static_cast<long long>(c.bitflip_1to3)));
  // XXH64_avalanche.
  h13 = Mul(XorShift(h13, 33), 0xC2B2AE3D27D4EB4Full);
  h13 = XorShift(Mul(XorShift(h13, 29), 0x165667B19E3779F9ull), 32);

  const __mmask8 four = _mm512_cmpge_epu64_mask(len, _mm512_set1_epi64(4));
  const __mmask8 nine = _mm512_cmpge_epu64_mask(len, _mm512_set1_epi64(9));
  return _mm512_mask_blend_epi64(nine, _mm512_mask_blend_epi64(four, h13, h48), acc);
}

}  // namespace

void HashTokensAvx512(const TokenHashConstants& c, const char* base, const uint32_t* offsets,
                      const uint32_t* lengths, size_t n, uint64_t* out) {
  for (size_t k = 0; k < n; k += kLanes) {
    const size_t count = n - k < kLanes ? n - k : kLanes;
    const auto lanes = static_cast<__mmask8>((1u << count) - 1);
    const __m256i off = _mm256_maskz_loadu_epi32(lanes, offsets + k);
    const __m512i len = _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(lanes, lengths + k));
    _mm512_mask_storeu_epi64(out + k, lanes, Hash8(c, base, off, len, lanes));
    // Longer tokens, rare in prose, by the library.
    for (auto longer = static_cast<unsigned>(
             _mm512_mask_cmpgt_epu64_mask(lanes, len, _mm512_set1_epi64(16)));
         longer != 0; longer &= longer - 1) {
      const size_t i = k + static_cast<size_t>(__builtin_ctz(longer));
      HashTokensScalar(c, base, offsets + i, lengths + i, 1, out + i);
    }
  }
}

}  // namespace shingled::dedup::internal
