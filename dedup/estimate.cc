#include "dedup/estimate.h"

#include <xxhash.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <unordered_map>

namespace shingled::dedup {
namespace {

// |a n b| for sorted vectors without duplicates.
size_t IntersectionSize(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  size_t i = 0, j = 0, n = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++n;
      ++i;
      ++j;
    }
  }
  return n;
}

// The values of two (sorted) MOD samples that are 0 mod 2^log2_modulus: how many each has, and
// how many they share. The store scores every candidate of a page or a query with it.
struct Overlap {
  size_t a = 0, b = 0, common = 0;
};

// The values of `v` that are 0 mod mask + 1: `v` itself when all are (a sample at the larger of
// two moduli), else a copy of those in `*kept`.
const std::vector<uint64_t>& ZeroModulo(const std::vector<uint64_t>& v, uint64_t mask, std::vector<uint64_t>* kept) {
  uint64_t any = 0;
  for (uint64_t x : v) any |= x;
  if ((any & mask) == 0) return v;
  kept->reserve(v.size());
  for (uint64_t x : v) {
    if ((x & mask) == 0) kept->push_back(x);
  }
  return *kept;
}

Overlap OverlapAtModulus(const ModSample& a, const ModSample& b, uint32_t log2_modulus) {
  Overlap o;
  if (log2_modulus >= 64) return o;
  const uint64_t mask = (uint64_t{1} << log2_modulus) - 1;
  std::vector<uint64_t> kept_a, kept_b;
  const std::vector<uint64_t>& x = ZeroModulo(a.values, mask, &kept_a);
  const std::vector<uint64_t>& y = ZeroModulo(b.values, mask, &kept_b);
  o.a = x.size();
  o.b = y.size();
  // One merge step per value without a branch on the comparison (random values make it
  // unpredictable: the branches cost more than the counting).
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const uint64_t u = x[i], w = y[j];
    o.common += u == w;
    i += u <= w;
    j += w <= u;
  }
  return o;
}

}  // namespace

double ResemblanceFromMinhashes(const Sketch& a, const Sketch& b) {
  if (a.empty() || b.empty()) return 0.0;
  assert(a.minhashes.size() == b.minhashes.size());
  const size_t t = std::min(a.minhashes.size(), b.minhashes.size());
  size_t equal = 0;
  for (size_t i = 0; i < t; ++i) equal += a.minhashes[i] == b.minhashes[i];
  return static_cast<double>(equal) / static_cast<double>(t);
}

double ResemblanceFromMinSample(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  if (a.empty() || b.empty()) return 0.0;
  // MIN_s(F(A) u F(B)) by merging, counting members that are in both samples. Each sample holds
  // its page's smallest values, so the first s of the union are exact whenever s is the smaller
  // sample size (a page with fewer shingles than s gives all of them).
  const size_t s = std::min(a.size(), b.size());
  size_t i = 0, j = 0, taken = 0, common = 0;
  while (taken < s && (i < a.size() || j < b.size())) {
    if (j == b.size() || (i < a.size() && a[i] < b[j])) {
      ++i;
    } else if (i == a.size() || b[j] < a[i]) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
    ++taken;
  }
  return static_cast<double>(common) / static_cast<double>(taken);
}

double ResemblanceFromModSample(const ModSample& a, const ModSample& b) {
  const Overlap o = OverlapAtModulus(a, b, std::max(a.log2_modulus, b.log2_modulus));
  if (o.a == 0 || o.b == 0) return 0.0;
  return static_cast<double>(o.common) / static_cast<double>(o.a + o.b - o.common);
}

double ContainmentFromModSample(const ModSample& a_in, const ModSample& b) {
  const Overlap o = OverlapAtModulus(a_in, b, std::max(a_in.log2_modulus, b.log2_modulus));
  if (o.a == 0 || o.b == 0) return 0.0;
  return static_cast<double>(o.common) / static_cast<double>(o.a);
}

Containments ContainmentsFromModSample(const ModSample& a, const ModSample& b) {
  // OverlapAtModulus(b, a) at the same modulus counts o.b, o.a and the same common values.
  const Overlap o = OverlapAtModulus(a, b, std::max(a.log2_modulus, b.log2_modulus));
  Containments c;
  if (o.a == 0 || o.b == 0) return c;
  c.a_in_b = static_cast<double>(o.common) / static_cast<double>(o.a);
  c.b_in_a = static_cast<double>(o.common) / static_cast<double>(o.b);
  return c;
}

int FeaturesInCommon(const Sketch& a, const Sketch& b) {
  if (a.empty() || b.empty()) return 0;
  const size_t k = std::min(a.features.size(), b.features.size());
  int n = 0;
  for (size_t i = 0; i < k; ++i) n += a.features[i] == b.features[i];
  return n;
}

bool Fungible(const Sketch& a, const Sketch& b, int r) { return FeaturesInCommon(a, b) >= r; }

int SuperShinglesInCommon(const Sketch& a, const Sketch& b) {
  return static_cast<int>(IntersectionSize(a.supershingles, b.supershingles));
}

double FungibleProbability(double p, int k, int s, int r) {
  assert(p >= 0.0 && p <= 1.0 && r >= 1 && r <= k);
  const double q = std::pow(p, s);  // a feature (s values) agrees
  double total = 0.0;
  for (int i = r; i <= k; ++i) {
    // C(k, i) q^i (1 - q)^(k - i), with the binomial coefficient from lgamma for any k.
    const double log_binomial = std::lgamma(k + 1.0) - std::lgamma(i + 1.0) - std::lgamma(k - i + 1.0);
    total += std::exp(log_binomial) * std::pow(q, i) * std::pow(1.0 - q, k - i);
  }
  return total;
}

double ExactResemblance(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  if (a.empty() && b.empty()) return 0.0;
  const size_t common = IntersectionSize(a, b);
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

double ExactContainment(std::span<const uint64_t> a_in, std::span<const uint64_t> b) {
  if (a_in.empty()) return 0.0;
  return static_cast<double>(IntersectionSize(a_in, b)) / static_cast<double>(a_in.size());
}

std::vector<uint64_t> ShingleSet(std::span<const uint64_t> sequence, bool labelled) {
  std::vector<uint64_t> out;
  out.reserve(sequence.size());
  if (labelled) {
    // Option A: (x, occurrence) is one element; fingerprinted to 64 bits like the shingles.
    std::unordered_map<uint64_t, uint64_t> seen;
    for (uint64_t x : sequence) {
      const uint64_t label[2] = {x, ++seen[x]};
      out.push_back(XXH3_64bits(label, sizeof(label)));
    }
  } else {
    out.assign(sequence.begin(), sequence.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

VerifyEstimate ResemblanceFromVerifySample(std::span<const uint32_t> a, std::span<const uint32_t> b,
                                           size_t k) {
  VerifyEstimate e;
  if (a.empty() || b.empty()) {
    e.exact = true;
    return e;
  }
  size_t i = 0, j = 0, common = 0, counted = 0;
  uint32_t last = 0;
  while (counted < k && (i < a.size() || j < b.size())) {
    if (j == b.size() || (i < a.size() && a[i] < b[j])) {
      last = a[i++];
    } else if (i == a.size() || b[j] < a[i]) {
      last = b[j++];
    } else {
      last = a[i];
      ++common;
      ++i;
      ++j;
    }
    ++counted;
  }
  e.sampled = counted;
  e.resemblance = static_cast<double>(common) / static_cast<double>(counted);
  // The union is whole when fewer than k values were counted, or when exactly k were and both
  // samples were used up, neither of them cut at k.
  e.exact = counted < k || (i == a.size() && j == b.size() && a.size() < k && b.size() < k);
  e.union_size =
      e.exact ? static_cast<double>(counted)
              : static_cast<double>(counted - 1) * 4294967296.0 / (static_cast<double>(last) + 1.0);
  return e;
}

double VerifyStandardError(const VerifyEstimate& e, double j) {
  if (e.exact || e.sampled == 0) return 0;
  const double m = static_cast<double>(e.sampled);
  const double n = std::max(e.union_size, m);
  const double fpc = n > 1 ? std::max(0.0, (n - m) / (n - 1)) : 0.0;
  return std::sqrt(std::max(0.0, j * (1 - j)) / m * fpc);
}

bool Verified(const VerifyEstimate& e, double threshold) {
  return e.resemblance >= threshold - 2 * VerifyStandardError(e, threshold);
}

}  // namespace shingled::dedup
