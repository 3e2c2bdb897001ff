// Synthetic sketches for store tests and benchmarks: a "page" is a set of shingle ids, and its
// sketch is computed here with simple test-only permutations (splitmix64 mixing), so that tests
// can choose resemblance exactly without the sketching engine. The shapes (t = k * s minhashes,
// k features, sorted super shingles, a MOD sample of at most mod_sample_max values) follow
// dedup/sketch.h; the values are not those dedup would compute.
#ifndef SHINGLED_TESTS_STORE_SYNTHETIC_H_
#define SHINGLED_TESTS_STORE_SYNTHETIC_H_

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "dedup/sketch.h"

namespace shingled::store::testing {

inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The sketch of the shingle set `shingles`. `variant` changes only the raw-bytes fingerprint
// (same text, other bytes: lexically equivalent).
inline dedup::Sketch SyntheticSketch(const dedup::SketchParams& p, const std::vector<uint64_t>& shingles,
                                     uint64_t variant = 0) {
  dedup::Sketch s;
  s.shingles = shingles.size();
  s.tokens = shingles.empty() ? 0 : shingles.size() + p.shingle_size - 1;
  s.bytes = s.tokens * 6;
  uint64_t set_hash = 0x1234;
  for (uint64_t x : shingles) set_hash += Mix(x ^ 0x5555);  // order-free
  s.lexical = {Mix(set_hash), Mix(set_hash + 1)};
  s.identical = {Mix(set_hash ^ Mix(variant + 77)), Mix(set_hash + 2 + variant)};
  if (shingles.empty()) return s;
  const int t = p.num_minhashes();
  s.minhashes.assign(t, ~uint64_t{0});
  std::vector<uint64_t> pi;
  pi.reserve(shingles.size());
  for (uint64_t x : shingles) {
    for (int i = 0; i < t; ++i) s.minhashes[i] = std::min(s.minhashes[i], Mix(x * 131 + i + 1));
    pi.push_back(Mix(x ^ 0xabcdef));
  }
  for (int g = 0; g < p.feature_groups; ++g) {
    uint64_t f = Mix(g + 1000);
    for (int j = 0; j < p.group_size; ++j) f = Mix(f ^ s.minhashes[g * p.group_size + j]);
    s.features.push_back(f);
  }
  std::sort(pi.begin(), pi.end());
  pi.erase(std::unique(pi.begin(), pi.end()), pi.end());
  s.min_sample.assign(pi.begin(), pi.begin() + std::min<size_t>(pi.size(), p.min_sample_size));
  std::set<uint64_t> supers;
  size_t span = std::min<size_t>(s.min_sample.size(), p.supershingle_span);
  for (size_t i = 0; i + p.supershingle_window <= span; ++i) {
    uint64_t h = 99;
    for (int j = 0; j < p.supershingle_window; ++j) h = Mix(h ^ s.min_sample[i + j]);
    supers.insert(h);
  }
  s.supershingles.assign(supers.begin(), supers.end());
  uint32_t i = 0;
  auto count_at = [&](uint32_t log2) {
    uint64_t mask = log2 == 0 ? 0 : (log2 >= 64 ? ~uint64_t{0} : (uint64_t{1} << log2) - 1);
    return std::count_if(pi.begin(), pi.end(), [&](uint64_t v) { return (v & mask) == 0; });
  };
  while (count_at(i) > p.mod_sample_max) ++i;
  s.sample.log2_modulus = i;
  uint64_t mask = i == 0 ? 0 : (uint64_t{1} << i) - 1;
  for (uint64_t v : pi) {
    if ((v & mask) == 0) s.sample.values.push_back(v);
  }
  // The verification sample, the bottom-k of 32-bit values of another permutation.
  if (p.verify_sample_size > 0) {
    std::vector<uint32_t> z;
    z.reserve(shingles.size());
    for (uint64_t x : shingles) z.push_back(static_cast<uint32_t>(Mix(x ^ 0x7777) >> 32));
    std::sort(z.begin(), z.end());
    z.erase(std::unique(z.begin(), z.end()), z.end());
    if (z.size() > static_cast<size_t>(p.verify_sample_size))
      z.resize(static_cast<size_t>(p.verify_sample_size));
    s.verify_sample = std::move(z);
  }
  uint64_t h = 7;
  for (uint64_t m : s.minhashes) h = Mix(h ^ m);
  for (uint64_t v : s.sample.values) h = Mix(h ^ v);
  s.shingle = {h, Mix(h)};
  return s;
}

// Shingle ids [base, base + n).
inline std::vector<uint64_t> Range(uint64_t base, uint64_t n) {
  std::vector<uint64_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = base + i;
  return v;
}

// A set of n shingles sharing the first `shared` with Range(base, n), the rest fresh from `fresh`.
inline std::vector<uint64_t> Variant(uint64_t base, uint64_t n, uint64_t shared, uint64_t fresh) {
  std::vector<uint64_t> v = Range(base, shared);
  for (uint64_t i = 0; i < n - shared; ++i) v.push_back(fresh + i);
  return v;
}

}  // namespace shingled::store::testing

#endif  // SHINGLED_TESTS_STORE_SYNTHETIC_H_
