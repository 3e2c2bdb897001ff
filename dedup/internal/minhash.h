// Min-wise hashing with Broder, Burrows and Manasse's left-to-right-minima trick (Broder 2005,
// "One trick based on left-to-right minima").
//
// Each shingle fingerprint x is first mixed by a bijection, y = fmix64(x ^ seed), which breaks the
// GF(2)-linearity of Rabin fingerprints (the fingerprints of the windows ab, cd, ad, cb XOR to
// zero; a linear permutation would keep that dependency). Permutation i then orders shingles by
// the injection h_i(y) = (lead_i(y), tail_i(y)), compared lexicographically:
//   - lead_i(y) is one byte, a random GF(2)-linear function of y; the leads of all t
//     permutations are computed together: 8 table rows (one per byte of y, 256 KB of tables
//     for t = 84, resident in L2) XORed as vectors;
//   - tail_i(y) = a_i * y + b_i mod 2^64 with a_i odd, a bijection, computed only when the lead
//     does not exceed the permutation's current minimum lead.
// After the first few hundred shingles every minimum lead is 0, so a tail is computed for about
// t/256 permutations per shingle instead of t. The value kept for permutation i is the tail of
// its minimum, which identifies the shingle because tail_i is a bijection of y and y of x.
//
// The min-wise quality of this family is not proven (Broder: "no theory, but it works"); it is
// measured instead: tests/dedup/sketch_test.cc checks that the fungibility filter follows
// Broder 2005's acceptance polynomial and that the resemblance estimate is unbiased.
//
// Every kernel computes the same leads and takes the same decisions: the scalar, AVX2 and
// AVX-512 kernels give bit-identical results, which a test asserts.
#ifndef SHINGLED_DEDUP_INTERNAL_MINHASH_H_
#define SHINGLED_DEDUP_INTERNAL_MINHASH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/fmix.h"
#include "dedup/sketch.h"

namespace shingled::dedup::internal {

inline constexpr int kMaxMinhashes = 256;
// y is split into kChunks chunks of kChunkBits bits; each chunk selects one table row.
inline constexpr int kChunkBits = 8;
inline constexpr int kChunks = 64 / kChunkBits;
inline constexpr int kChunkValues = 1 << kChunkBits;

using ::shingled::Fmix64;  // the murmur3 64-bit finalizer (base/fmix.h)

// ys[k] = Fmix64(xs[k] ^ seed) for k in [0, n): the mix before the permutations. The scalar loop,
// and the same 8 values at a time with AVX-512 (F, DQ) 64-bit multiplies, which the portable build
// cannot use; call MixAvx512 only when CpuHasAvx512DqVl() (dedup/internal/token_hash.h).
using MixKernel = void (*)(const uint64_t* xs, size_t n, uint64_t seed, uint64_t* ys);
void MixScalar(const uint64_t* xs, size_t n, uint64_t seed, uint64_t* ys);
void MixAvx512(const uint64_t* xs, size_t n, uint64_t seed, uint64_t* ys);

// The permutations, derived from a seed. Immutable after construction.
struct MinhashTables {
  MinhashTables(int num_permutations, uint64_t seed);

  int t;           // permutations
  int stride;      // t rounded up to 64: the width of a lead row, in bytes
  uint64_t mix_seed;
  // lead_rows[(chunk * kChunkValues + value) * stride + i]: the contribution of chunk `chunk` of
  // y (kChunkBits bits), holding `value`, to lead_i(y). Bytes i >= t are zero.
  std::vector<uint8_t> lead_rows;
  std::vector<uint64_t> tail_mul;  // a_i, odd
  std::vector<uint64_t> tail_add;  // b_i
  // The same leads as 8x8 bit matrices, for the GFNI kernels: lead_i(y) is the XOR over the
  // bytes y_j of y of M_ij * y_j. gf2_matrices[(g * kChunks + j) * 8 + l] is M_ij for
  // i = 8 g + l, coded as GF2P8AFFINEQB reads it (byte 7 - o of the word is the row giving bit o
  // of the product); zero for i >= t. groups = ceil(t / 8).
  int groups;
  std::vector<uint64_t> gf2_matrices;

  const uint8_t* Row(int chunk, uint64_t y) const {
    return lead_rows.data() +
           static_cast<size_t>(chunk * kChunkValues +
                               static_cast<int>((y >> (kChunkBits * chunk)) & (kChunkValues - 1))) *
               stride;
  }
  uint64_t Tail(int i, uint64_t y) const { return tail_mul[i] * y + tail_add[i]; }
};

// The running minima of one page: for permutation i, the lead and tail of its minimum so far.
// Starts at (0xFF, UINT64_MAX), the largest value of the order: the first shingle replaces it
// unless it is that very value, in which case the recorded tail is right anyway.
struct MinhashState {
  alignas(64) uint8_t lead[kMaxMinhashes];
  alignas(64) uint64_t tail[kMaxMinhashes];
  void Reset();
};

// Folds mixed shingle values ys[0..n) into `state`.
using MinhashKernel = void (*)(const MinhashTables& tables, const uint64_t* ys, size_t n,
                               MinhashState* state);

void MinhashScalar(const MinhashTables& tables, const uint64_t* ys, size_t n, MinhashState* state);
void MinhashAvx2(const MinhashTables& tables, const uint64_t* ys, size_t n, MinhashState* state);
void MinhashAvx512(const MinhashTables& tables, const uint64_t* ys, size_t n, MinhashState* state);
// The leads by GF2P8AFFINEQB, 8 shingles at a time, instead of table rows read from L2; for CPUs
// with AVX-512 (F, BW, VBMI, VBMI2) and GFNI, which all CPUs with AVX-512 and GFNI so far have.
void MinhashAvx512Gfni(const MinhashTables& tables, const uint64_t* ys, size_t n,
                       MinhashState* state);
bool CpuHasAvx512Gfni();

// The kernel for a level (kAuto: the best one this CPU supports). REQUIRES: CpuSupports(level).
MinhashKernel KernelFor(SimdLevel level);

// Replaces the state's minimum for permutation i with (lead, tail_i(y)) when that is smaller in
// the lexicographic order; correct for any lead, though kernels call it only when lead does not
// exceed the minimum's. Without branches: whether a candidate wins is a coin toss early in a page,
// and a mispredicted branch costs more than the arithmetic. Shared by all kernels, so
// that they decide alike.
inline void MaybeReplace(const MinhashTables& tables, int i, uint8_t lead, uint64_t y,
                         MinhashState* state) {
  const uint64_t tail = tables.Tail(i, y);
  const uint8_t min_lead = state->lead[i];
  const uint64_t min_tail = state->tail[i];
  // (lead, tail) < (min_lead, min_tail) exactly when lead - min_lead - [tail < min_tail] < 0: the
  // leads differ by at least 1 when they differ. In arithmetic and masks, because GCC turned the
  // logical form into a branch.
  const int difference = static_cast<int>(lead) - static_cast<int>(min_lead) -
                         static_cast<int>(tail < min_tail);
  const uint64_t smaller = uint64_t{0} - (static_cast<uint32_t>(difference) >> 31);
  state->lead[i] = static_cast<uint8_t>(min_lead ^ ((min_lead ^ lead) & smaller));
  state->tail[i] = min_tail ^ ((min_tail ^ tail) & smaller);
}

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_MINHASH_H_
