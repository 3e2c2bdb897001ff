// The tokenizer's AVX2 classifier. This file alone is compiled with -mavx2; it runs only when
// CpuSupports(SimdLevel::kAvx2).
#include <immintrin.h>

#include "dedup/internal/ascii_classify.h"

namespace shingled::dedup::internal {
namespace {

// Bytes in [lo, hi], for ASCII input (signed comparisons are right below 0x80).
inline __m256i InRange(__m256i v, char lo, char hi) {
  return _mm256_and_si256(_mm256_cmpgt_epi8(v, _mm256_set1_epi8(static_cast<char>(lo - 1))),
                          _mm256_cmpgt_epi8(_mm256_set1_epi8(static_cast<char>(hi + 1)), v));
}

inline uint32_t Half(const unsigned char* in, char* lower) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
  const __m256i upper = InRange(v, 'A', 'Z');
  const __m256i alnum =
      _mm256_or_si256(_mm256_or_si256(upper, InRange(v, 'a', 'z')), InRange(v, '0', '9'));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lower),
                      _mm256_or_si256(v, _mm256_and_si256(upper, _mm256_set1_epi8(0x20))));
  return static_cast<uint32_t>(_mm256_movemask_epi8(alnum));
}

}  // namespace

bool ClassifyAsciiAvx2(const unsigned char* in, char* lower, uint64_t* alnum) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32));
  if (_mm256_movemask_epi8(_mm256_or_si256(a, b)) != 0) return false;  // a byte >= 0x80
  const uint64_t low = Half(in, lower);
  const uint64_t high = Half(in + 32, lower + 32);
  *alnum = low | (high << 32);
  return true;
}

}  // namespace shingled::dedup::internal
