// The AVX-512 minhash kernel with GFNI. This file alone is compiled with -mavx512f -mavx512bw
// -mavx512vbmi -mgfni; it runs only when CpuHasAvx512Gfni() (dedup/minhash.cc).
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

// Byte indexes for vpermb: kSpread[j] makes every lane l hold byte j of the 8 shingles
// (byte p of each lane from byte 8 p + j of the source); kReplicate makes lane l hold 8 copies of
// byte l.
struct Indexes {
  alignas(64) uint8_t spread[kChunks][64];
  alignas(64) uint8_t replicate[64];
  constexpr Indexes() : spread{}, replicate{} {
    for (int j = 0; j < kChunks; ++j) {
      for (int b = 0; b < 64; ++b) spread[j][b] = static_cast<uint8_t>(8 * (b % 8) + j);
    }
    for (int b = 0; b < 64; ++b) replicate[b] = static_cast<uint8_t>(b / 8);
  }
};
constexpr Indexes kIndexes;

// vpermb. The maskz form: GCC 12's plain _mm512_permutexvar_epi8 reads an undefined register and
// warns about it.
inline __m512i Permute(__m512i index, __m512i v) {
  return _mm512_maskz_permutexvar_epi8(~__mmask64{0}, index, v);
}

// Folds the 8 shingles ys[0..8) into `state`, whose minimum leads are also held replicated in
// `current` (group g's lane l holds 8 copies of lead[8 g + l]).
//
// Candidates (a lead not above the permutation's minimum) are rare after a page's first few
// hundred shingles, about t / 256 per shingle, but a branch on each group's mask mispredicts a
// quarter of the time: the masks of all groups are computed first, without branches, and only
// the groups that have a candidate are visited.
inline void Step(const MinhashTables& tables, const uint64_t* ys, __m512i* current,
                 MinhashState* state) {
  const __m512i shingles = _mm512_loadu_si512(ys);
  __m512i spread[kChunks];
#pragma GCC unroll 8
  for (int j = 0; j < kChunks; ++j) {
    spread[j] = Permute(_mm512_load_si512(kIndexes.spread[j]), shingles);
  }
  const uint64_t* matrices = tables.gf2_matrices.data();
  const int groups = tables.groups;
  alignas(64) uint8_t leads[kMaxMinhashes / kLanes][64];
  uint64_t masks[kMaxMinhashes / kLanes];
  uint32_t with_candidates = 0;
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
    masks[g] = _mm512_cmple_epu8_mask(lead, current[g]);
    with_candidates |= static_cast<uint32_t>(masks[g] != 0) << g;
  }
  // Lanes past t are padding (zero matrices) and never a candidate.
  const int valid = tables.t - kLanes * (groups - 1);
  if (valid < kLanes) {
    masks[groups - 1] &= (uint64_t{1} << (kLanes * valid)) - 1;
    if (masks[groups - 1] == 0) with_candidates &= ~(uint32_t{1} << (groups - 1));
  }
  while (with_candidates != 0) {
    const int g = __builtin_ctz(with_candidates);
    with_candidates &= with_candidates - 1;
    for (uint64_t mask = masks[g]; mask != 0; mask &= mask - 1) {
      const int bit = __builtin_ctzll(mask);
      const int i = kLanes * g + bit / kLanes;
      // An earlier shingle of this step may have lowered the minimum since the mask was made:
      // MaybeReplace compares again.
      MaybeReplace(tables, i, leads[g][bit], ys[bit % kLanes], state);
    }
    // The minimum lead of a permutation is the least lead it has seen: fold this step's leads
    // into `current` (rotations within each lane bring every byte of it to every position).
    __m512i lead = _mm512_load_si512(leads[g]);
    lead = _mm512_min_epu8(lead, _mm512_maskz_ror_epi64(~__mmask8{0}, lead, 8));
    lead = _mm512_min_epu8(lead, _mm512_maskz_ror_epi64(~__mmask8{0}, lead, 16));
    lead = _mm512_min_epu8(lead, _mm512_maskz_ror_epi64(~__mmask8{0}, lead, 32));
    current[g] = _mm512_min_epu8(current[g], lead);
  }
}

}  // namespace

void MinhashAvx512Gfni(const MinhashTables& tables, const uint64_t* ys, size_t n,
                       MinhashState* state) {
  __m512i current[kMaxMinhashes / kLanes];
  const __m512i replicate = _mm512_load_si512(kIndexes.replicate);
  for (int g = 0; g < tables.groups; ++g) {
    uint64_t lead8;
    std::memcpy(&lead8, state->lead + static_cast<size_t>(kLanes) * g, sizeof(lead8));
    current[g] = Permute(replicate, _mm512_set1_epi64(static_cast<long long>(lead8)));
  }
  size_t k = 0;
  for (; k + kLanes <= n; k += kLanes) Step(tables, ys + k, current, state);
  if (k == n) return;
  // The last few shingles, padded with copies of the last one: a repeated shingle changes no
  // minimum.
  uint64_t last[kLanes];
  for (size_t p = 0; p < kLanes; ++p) last[p] = ys[k + p < n ? k + p : n - 1];
  Step(tables, last, current, state);
}

}  // namespace shingled::dedup::internal
