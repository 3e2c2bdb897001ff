// The AVX-512 minhash kernel with GFNI. This file alone is compiled with -mavx512f -mavx512bw
// -mavx512vbmi -mavx512vbmi2 -mgfni; it runs only when CpuHasAvx512Gfni() (dedup/minhash.cc).
//
// The table kernels read 8 rows of t bytes from 256 KB of tables per shingle, which lives in L2;
// here the leads are computed instead. GF2P8AFFINEQB multiplies each byte of a 64-bit lane by
// that lane's 8x8 bit matrix, so with lane l holding M_ij for permutation i = 8 g + l and the
// bytes of the lane holding byte j of 8 different shingles, one instruction makes 64 of the
// 8 t products a shingle needs: for t = 84, 88 instructions per 8 shingles, and 5.6 KB of
// matrices that stay in L1.
#include <immintrin.h>

#include <cstring>

#include "dedup/internal/minhash.h"

namespace shingled::dedup::internal {
namespace {

constexpr int kLanes = 8;  // shingles per step, and permutations per group
constexpr int kMaxGroups = kMaxMinhashes / kLanes;

// Byte indexes for vpermb: spread[j] makes every lane l hold byte j of the 8 shingles (byte p of
// each lane from byte 8 p + j of the source); replicate[h] makes lane l hold 8 copies of byte
// 8 h + l, the minimum lead of permutation 8 h + l of a 64-byte block of minimum leads.
struct Indexes {
  alignas(64) uint8_t spread[kChunks][64];
  alignas(64) uint8_t replicate[kLanes][64];
  alignas(64) uint8_t iota[64];  // 0, 1, ..., 63
  constexpr Indexes() : spread{}, replicate{}, iota{} {
    for (int b = 0; b < 64; ++b) iota[b] = static_cast<uint8_t>(b);
    for (int j = 0; j < kChunks; ++j) {
      for (int b = 0; b < 64; ++b) spread[j][b] = static_cast<uint8_t>(8 * (b % 8) + j);
    }
    for (int h = 0; h < kLanes; ++h) {
      for (int b = 0; b < 64; ++b) replicate[h][b] = static_cast<uint8_t>(8 * h + b / 8);
    }
  }
};
constexpr Indexes kIndexes;

// vpermb. The maskz form: GCC 12's plain _mm512_permutexvar_epi8 reads an undefined register and
// warns about it.
inline __m512i Permute(__m512i index, __m512i v) {
  return _mm512_maskz_permutexvar_epi8(~__mmask64{0}, index, v);
}

// Folds ys[0..n) into `state`, 8 shingles per step. kGroups is the number of groups of 8
// permutations when it is a compile-time constant (the loops over groups unroll and the
// intermediate vectors stay in registers), or 0 for any count (tables.groups).
//
// Candidates (a lead not above the permutation's minimum) are rare after a page's first few
// hundred shingles, about t / 256 per shingle, but frequent before; whichever groups hold them,
// a branch per group and per candidate mispredicts. So the candidates of all groups are gathered
// first, without branches (VPCOMPRESSB), and one loop then visits every candidate of the step:
// one loop exit to predict per step. The minimum leads the
// masks compare with are read back from `state` at each step rather than kept as vectors: no
// vector upkeep per group with candidates.
template <int kGroups>
void Kernel(const MinhashTables& tables, const uint64_t* ys, size_t n, MinhashState* state) {
  const int groups = kGroups > 0 ? kGroups : tables.groups;
  const uint64_t* const matrices = tables.gf2_matrices.data();
  // Lanes past t are padding (zero matrices, lead 0) and never a candidate.
  const int valid = tables.t - kLanes * (groups - 1);
  const uint64_t last_mask = valid == kLanes ? ~uint64_t{0} : (uint64_t{1} << (kLanes * valid)) - 1;
  alignas(64) uint8_t leads[kMaxGroups][64];
  // The step's candidates: bit position in its group's mask (8 l + p for permutation 8 g + l and
  // shingle p), and group. Room for a full 64-byte store past the last.
  uint8_t candidate_bits[kMaxGroups * 64 + 64];
  uint8_t candidate_groups[kMaxGroups * 64 + 64];
  const __m512i bit_index = _mm512_load_si512(kIndexes.iota);
  uint64_t last[kLanes];
  for (size_t k = 0; k < n; k += kLanes) {
    const uint64_t* step_ys = ys + k;
    if (k + kLanes > n) {
      // The last few shingles, padded with copies of the last one: a repeated shingle changes no
      // minimum.
      for (size_t p = 0; p < kLanes; ++p) last[p] = ys[k + p < n ? k + p : n - 1];
      step_ys = last;
    }
    const __m512i shingles = _mm512_loadu_si512(step_ys);
    __m512i spread[kChunks];
#pragma GCC unroll 8
    for (int j = 0; j < kChunks; ++j) {
      spread[j] = Permute(_mm512_load_si512(kIndexes.spread[j]), shingles);
    }
    size_t candidates = 0;
    __m512i minimum = _mm512_setzero_si512();
#pragma GCC unroll 32
    for (int g = 0; g < groups; ++g) {
      const uint64_t* m = matrices + static_cast<size_t>(g) * kChunks * kLanes;
      __m512i part[kChunks];
#pragma GCC unroll 8
      for (int j = 0; j < kChunks; ++j) {
        part[j] = _mm512_gf2p8affine_epi64_epi8(
            spread[j], _mm512_loadu_si512(m + static_cast<size_t>(j) * kLanes), 0);
      }
      // 0x96: a ^ b ^ c.
      const __m512i lead = _mm512_ternarylogic_epi64(
          _mm512_ternarylogic_epi64(part[0], part[1], part[2], 0x96),
          _mm512_ternarylogic_epi64(part[3], part[4], part[5], 0x96),
          _mm512_xor_si512(part[6], part[7]), 0x96);
      _mm512_store_si512(leads[g], lead);
      if (g % kLanes == 0) minimum = _mm512_load_si512(state->lead + 64 * (g / kLanes));
      const __m512i current = Permute(_mm512_load_si512(kIndexes.replicate[g % kLanes]), minimum);
      uint64_t mask = _mm512_cmple_epu8_mask(lead, current);
      if (g == groups - 1) mask &= last_mask;
      // Appended without a branch; the bytes stored past the group's candidates are overwritten
      // by the next group's or ignored.
      _mm512_storeu_si512(candidate_bits + candidates, _mm512_maskz_compress_epi8(mask, bit_index));
      _mm512_storeu_si512(candidate_groups + candidates, _mm512_set1_epi8(static_cast<char>(g)));
      candidates += static_cast<size_t>(__builtin_popcountll(mask));
    }
    // The candidates are independent of one another, except through `state` when two are of the
    // same permutation: the loop carries no dependency but its counter.
    for (size_t c = 0; c < candidates; ++c) {
      const int g = candidate_groups[c];
      const int bit = candidate_bits[c];
      // An earlier shingle of this step may have lowered the minimum since the mask was made:
      // MaybeReplace compares again.
      MaybeReplace(tables, kLanes * g + bit / kLanes, leads[g][bit], step_ys[bit % kLanes], state);
    }
  }
}

}  // namespace

void MinhashAvx512Gfni(const MinhashTables& tables, const uint64_t* ys, size_t n,
                       MinhashState* state) {
  // The two configurations SketchParams documents (6 x 14 and 8 x 25) get unrolled kernels.
  switch (tables.groups) {
    case 11: return Kernel<11>(tables, ys, n, state);
    case 25: return Kernel<25>(tables, ys, n, state);
    default: return Kernel<0>(tables, ys, n, state);
  }
}

}  // namespace shingled::dedup::internal
