// Estimators of resemblance and containment from sketches, and exact values from shingle sets.
//
// Definitions (Broder 1997; Broder et al. 1997): for shingle sets S(A), S(B),
//   resemblance r(A, B) = |S(A) n S(B)| / |S(A) u S(B)|,
//   containment c(A, B) = |S(A) n S(B)| / |S(A)|   (of A in B).
// All functions are pure. A page without shingles resembles and is contained in nothing: every
// estimate involving one is 0.
#ifndef SHINGLED_DEDUP_ESTIMATE_H_
#define SHINGLED_DEDUP_ESTIMATE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "dedup/sketch.h"

namespace shingled::dedup {

// The share of the t min-wise values on which two sketches agree: an unbiased estimate of r with
// standard error sqrt(r(1-r)/t). REQUIRES: both sketches come from the same SketchParams.
double ResemblanceFromMinhashes(const Sketch& a, const Sketch& b);

// Broder et al. 1997's unbiased estimate from MIN_s samples: |MIN_s(F(A) u F(B)) n F(A) n F(B)| /
// |MIN_s(F(A) u F(B))|, with s the smaller of the two sample sizes.
double ResemblanceFromMinSample(std::span<const uint64_t> a, std::span<const uint64_t> b);

// Resemblance and containment from MOD samples, both taken at the larger of the two moduli
// (a sample at 2^i contains the one at 2^(i+1), so the smaller modulus's sample is filtered).
double ResemblanceFromModSample(const ModSample& a, const ModSample& b);
double ContainmentFromModSample(const ModSample& a_in, const ModSample& b);
// Both containments from one merge of the two samples: `a_in_b` equals
// ContainmentFromModSample(a, b) and `b_in_a` equals ContainmentFromModSample(b, a), exactly (the
// same counts divided the same way). A query scores each candidate both ways.
struct Containments {
  double a_in_b = 0.0;
  double b_in_a = 0.0;
};
Containments ContainmentsFromModSample(const ModSample& a, const ModSample& b);

// Features on which two sketches agree, group by group. Zero if either is empty.
int FeaturesInCommon(const Sketch& a, const Sketch& b);
// FeaturesInCommon(a, b) >= r.
bool Fungible(const Sketch& a, const Sketch& b, int r);

// Super shingles the two sketches share.
int SuperShinglesInCommon(const Sketch& a, const Sketch& b);

// P(p) = sum_{i=r..k} C(k,i) p^(s i) (1 - p^s)^(k-i): the probability that two pages of
// resemblance p are fungible (Broder 2005). REQUIRES: 0 <= p <= 1, 1 <= r <= k.
double FungibleProbability(double p, int k, int s, int r);

// --- The verification sample ---
//
// Sketch::verify_sample is a bottom-k sketch: the k smallest distinct values of a permutation of
// the shingle set (all of them for a page with fewer than k). The k smallest of the union of two
// such samples are the bottom-k sample of the union of the two sets, and the share of them in
// both samples is an unbiased estimate of the resemblance (Broder 1997, MIN_s).
struct VerifyEstimate {
  double resemblance = 0;
  // The values the estimate counts: min(k, |union of the samples|).
  size_t sampled = 0;
  // The union of the samples has fewer than k values: both samples are whole sets and the
  // resemblance is exact (but for 32-bit collisions: ~|union| / 2^32 of a pair).
  bool exact = false;
  // |S(A) u S(B)|: exact when `exact`, else the bottom-k estimate (sampled - 1) 2^32 / (u + 1),
  // with u the largest value counted.
  double union_size = 0;
};
// REQUIRES: both samples come from the same SketchParams, whose verify_sample_size is `k`, and
// are sorted ascending without duplicates. Either sample empty: resemblance 0, exact.
VerifyEstimate ResemblanceFromVerifySample(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                           size_t k);
// The standard error of the estimate for a pair whose resemblance is `j`: 0 when exact, else
// sqrt(j (1 - j) / sampled) with the finite-population correction (N - sampled) / (N - 1), N the
// union's size (a sample without replacement of the union).
double VerifyStandardError(const VerifyEstimate& e, double j);
// The "verified" relation's decision: a pair is accepted when its estimate reaches
// threshold - 2 standard errors at the threshold (the threshold itself when exact). A pair at the
// threshold is accepted with probability ~0.977; at threshold - 0.1 with k = 256 (J = 0.8 for the
// default 0.9), ~0.006 or less.
bool Verified(const VerifyEstimate& e, double threshold);

// Exact values over shingle sets given as sorted vectors without duplicates.
double ExactResemblance(std::span<const uint64_t> a, std::span<const uint64_t> b);
double ExactContainment(std::span<const uint64_t> a_in, std::span<const uint64_t> b);

// The shingle set of a sequence of shingle fingerprints (in document order, repetitions
// included), as a sorted vector without duplicates. Option B uses the fingerprints themselves;
// option A (`labelled`) labels each with its occurrence number, so that (x, 1) and (x, 2) differ.
std::vector<uint64_t> ShingleSet(std::span<const uint64_t> sequence, bool labelled);

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_ESTIMATE_H_
