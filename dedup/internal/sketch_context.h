// The tables behind a SketchContext. Private to dedup/.
#ifndef SHINGLED_DEDUP_INTERNAL_SKETCH_CONTEXT_H_
#define SHINGLED_DEDUP_INTERNAL_SKETCH_CONTEXT_H_

#include <cstdint>

#include "dedup/internal/minhash.h"
#include "dedup/internal/rabin_avx512.h"
#include "dedup/internal/rabin_clmul.h"
#include "dedup/internal/token_hash.h"
#include "dedup/rabin.h"
#include "dedup/sketch.h"

namespace shingled::dedup {

class SketchContextImpl {
 public:
  SketchContextImpl(const SketchParams& params, SimdLevel simd);

  const SketchParams params;
  const uint64_t polynomial;
  const RabinFingerprinter rabin;
  const RabinWindowTables window_tables;
  const internal::MinhashTables minhash;
  const SimdLevel simd;
  const internal::MinhashKernel kernel;
  // The Rabin window slides with carry-less multiplies when the CPU has them, except at the
  // scalar level, which keeps the portable table code (tests compare the two).
  const bool use_clmul;
  const internal::RabinClmulConstants clmul;
  // At the AVX-512 level, when the CPU has VPCLMULQDQ, each window is fingerprinted on its own,
  // 8 at a time, instead of sliding (internal/rabin_avx512.h).
  const bool use_avx512_windows;
  const internal::RabinWindowPowers window_powers;
  // Seeds of the XXH3 hashes: token fingerprints, features, super shingles, exact fingerprints.
  const uint64_t token_seed;
  const uint64_t feature_seed;
  const uint64_t supershingle_seed;
  const uint64_t exact_seed;
  // Token fingerprints: XXH3 with token_seed, in blocks (the AVX-512 kernel at that level when the
  // CPU has DQ and VL, otherwise the library call per token).
  const internal::TokenHashConstants token_hash;
  const internal::TokenHashKernel hash_tokens;
  // The mix y = Fmix64(x ^ seed) before the minhash kernel: with AVX-512 on the same terms.
  const internal::MixKernel mix;
};

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_INTERNAL_SKETCH_CONTEXT_H_
