#include "dedup/sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "dedup/internal/minhash.h"
#include "dedup/internal/sketch_context.h"

namespace shingled::dedup {
namespace {

using Tokens = std::vector<std::string>;

std::shared_ptr<const SketchContext> MakeContext(SketchParams params = {},
                                                 SimdLevel simd = SimdLevel::kAuto) {
  auto ctx = SketchContext::Create(params, simd);
  EXPECT_TRUE(ctx.ok()) << ctx.status().ToString();
  return *ctx;
}

class ShingleRecorder final : public ShingleObserver {
 public:
  void OnShingle(uint64_t fp) override { shingles.push_back(fp); }
  std::vector<uint64_t> shingles;
};

Sketch SketchTokens(const SketchContext& ctx, const Tokens& tokens,
                    std::vector<uint64_t>* shingles = nullptr) {
  Sketcher sketcher(ctx);
  ShingleRecorder recorder;
  if (shingles != nullptr) sketcher.set_shingle_observer(&recorder);
  for (const std::string& t : tokens) sketcher.OnToken(t);
  Sketch s = sketcher.Finish();
  if (shingles != nullptr) *shingles = std::move(recorder.shingles);
  return s;
}

Tokens Split(std::string_view text) {
  Tokens out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t j = text.find(' ', i);
    out.emplace_back(text.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

double ExactResemblanceOf(const Tokens& a, const Tokens& b, int w, bool labelled) {
  SketchParams params;
  params.shingle_size = w;
  auto ctx = MakeContext(params);
  std::vector<uint64_t> sa, sb;
  SketchTokens(*ctx, a, &sa);
  SketchTokens(*ctx, b, &sb);
  return ExactResemblance(ShingleSet(sa, labelled), ShingleSet(sb, labelled));
}

// Broder 1997, section 2: the worked example, with its exact figures.
TEST(SketchTest, Paper002WorkedExample) {
  const Tokens a = Split("a rose is a rose is a rose");
  const Tokens b = Split("a rose is a flower which is a rose");
  // Option B (sets): 60%, 50%, 42.85% for w = 1, 2, 3.
  EXPECT_DOUBLE_EQ(ExactResemblanceOf(a, b, 1, false), 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(ExactResemblanceOf(a, b, 2, false), 3.0 / 6.0);
  EXPECT_DOUBLE_EQ(ExactResemblanceOf(a, b, 3, false), 3.0 / 7.0);
  EXPECT_NEAR(ExactResemblanceOf(a, b, 3, false), 0.4285, 0.0001);
  // Option A (labelled shingles): 70%, 50%, 30%.
  EXPECT_DOUBLE_EQ(ExactResemblanceOf(a, b, 1, true), 0.7);
  EXPECT_DOUBLE_EQ(ExactResemblanceOf(a, b, 2, true), 0.5);
  EXPECT_DOUBLE_EQ(ExactResemblanceOf(a, b, 3, true), 0.3);
  // The 4-shingling of A has 3 elements under option B (5 shingles, 2 repeated).
  SketchParams params;
  params.shingle_size = 4;
  std::vector<uint64_t> shingles;
  const Sketch s = SketchTokens(*MakeContext(params), a, &shingles);
  EXPECT_EQ(shingles.size(), 5u);
  EXPECT_EQ(s.shingles, 5u);
  EXPECT_EQ(ShingleSet(shingles, false).size(), 3u);
  EXPECT_EQ(ShingleSet(shingles, true).size(), 5u);
}

// Random tokens, all distinct: every shingle of a sequence is distinct.
class TokenSource {
 public:
  explicit TokenSource(uint64_t seed) : rng_(seed) {}
  Tokens Make(size_t n) {
    Tokens out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back("w" + std::to_string(rng_()));
    return out;
  }
  // Mostly short tokens, as in prose, some up to kMaxTokenBytes.
  Tokens MakeOfAnyLength(size_t n) {
    Tokens out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const size_t len = rng_() % 8 == 0 ? 1 + rng_() % kMaxTokenBytes : 1 + rng_() % 16;
      std::string t(len, 'a');
      for (char& c : t) c = static_cast<char>('a' + rng_() % 26);
      out.push_back(std::move(t));
    }
    return out;
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

Tokens Concat(const Tokens& a, const Tokens& b) {
  Tokens out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// A pair of pages with exactly c common shingles and d of each page's own: A = X + Y, B = X + Z,
// with X of c + w - 1 tokens and Y, Z of d tokens. Resemblance c / (c + 2d).
struct Pair {
  Tokens a, b;
};
Pair MakePair(TokenSource* source, int w, size_t c, size_t d) {
  const Tokens x = source->Make(c + static_cast<size_t>(w) - 1);
  return {Concat(x, source->Make(d)), Concat(x, source->Make(d))};
}

struct CurvePoint {
  double p;
  size_t common;
  size_t own;  // c / (c + 2 own) == p exactly
};
constexpr CurvePoint kCurve[] = {{0.5, 1000, 500}, {0.7, 700, 150}, {0.8, 800, 100},
                                 {0.85, 850, 75},  {0.9, 900, 50},  {0.95, 950, 25},
                                 {0.98, 980, 10}};

// The filter follows Broder 2005's acceptance polynomial: for 1,000 pairs at each exact resemblance
// p, the share judged fungible is within 4 standard deviations (binomial, sqrt(P(1-P)/n)) of P(p).
// 4 SD: a correct family fails one of the 7 points with probability about 4e-4; a family that is
// not min-wise enough shifts the curve by far more (a few SD at 1,000 pairs).
// The same pairs show that the t-value resemblance estimate is unbiased within 4 standard errors
// (sqrt(p(1-p)/(t n))).
void CheckAcceptanceCurve(const SketchParams& params, uint64_t seed) {
  auto ctx = MakeContext(params);
  TokenSource source(seed);
  constexpr int kPairs = 1000;
  const int t = params.num_minhashes();
  for (const CurvePoint& point : kCurve) {
    ASSERT_DOUBLE_EQ(static_cast<double>(point.common) / (point.common + 2.0 * point.own), point.p);
    int fungible = 0;
    double estimate_sum = 0;
    for (int i = 0; i < kPairs; ++i) {
      const Pair pair = MakePair(&source, params.shingle_size, point.common, point.own);
      const Sketch a = SketchTokens(*ctx, pair.a), b = SketchTokens(*ctx, pair.b);
      fungible += Fungible(a, b, params.fungible_threshold);
      estimate_sum += ResemblanceFromMinhashes(a, b);
    }
    const double expected = FungibleProbability(point.p, params.feature_groups, params.group_size,
                                                params.fungible_threshold);
    const double share = static_cast<double>(fungible) / kPairs;
    const double sd = std::sqrt(expected * (1 - expected) / kPairs);
    EXPECT_LE(std::abs(share - expected), 4 * sd + 1e-12)
        << "p = " << point.p << ": fungible share " << share << ", P(p) = " << expected;
    const double mean = estimate_sum / kPairs;
    const double se = std::sqrt(point.p * (1 - point.p) / (static_cast<double>(t) * kPairs));
    EXPECT_LE(std::abs(mean - point.p), 4 * se)
        << "p = " << point.p << ": mean estimate " << mean;
  }
}

TEST(SketchTest, FungibilityFollowsTheAcceptanceCurve6x14) {
  CheckAcceptanceCurve(SketchParams{}, 1);
}

TEST(SketchTest, FungibilityFollowsTheAcceptanceCurve8x25R1) {
  SketchParams params;
  params.feature_groups = 8;
  params.group_size = 25;
  params.fungible_threshold = 1;
  CheckAcceptanceCurve(params, 2);
}

TEST(SketchTest, AcceptancePolynomialMatchesPaper004Figures) {
  // docs/METHOD.md: about 0.03 at p = 0.8, 0.42 at 0.9, 0.88 at 0.95 for k = 6, s = 14, r = 2.
  EXPECT_NEAR(FungibleProbability(0.8, 6, 14, 2), 0.03, 0.005);
  EXPECT_NEAR(FungibleProbability(0.9, 6, 14, 2), 0.42, 0.005);
  EXPECT_NEAR(FungibleProbability(0.95, 6, 14, 2), 0.88, 0.005);
  EXPECT_DOUBLE_EQ(FungibleProbability(1.0, 6, 14, 2), 1.0);
  EXPECT_DOUBLE_EQ(FungibleProbability(0.0, 6, 14, 2), 0.0);
  // r = 1 with k = 8, s = 25: 1 - (1 - p^25)^8.
  EXPECT_NEAR(FungibleProbability(0.9, 8, 25, 1), 1 - std::pow(1 - std::pow(0.9, 25), 8), 1e-12);
}

// The slow reference for the minhash kernels: for each permutation, the minimum of
// (lead_i(y), tail_i(y)) over the whole shingle set, found by brute force.
std::vector<uint64_t> ReferenceMinhashes(const SketchContext& ctx,
                                         const std::vector<uint64_t>& shingles) {
  const internal::MinhashTables& tables = ctx.impl().minhash;
  std::vector<std::pair<uint8_t, uint64_t>> best(static_cast<size_t>(tables.t), {0xFF, ~0ull});
  for (uint64_t fp : shingles) {
    const uint64_t y = internal::Fmix64(fp ^ tables.mix_seed);
    for (int i = 0; i < tables.t; ++i) {
      uint8_t lead = 0;
      for (int chunk = 0; chunk < internal::kChunks; ++chunk) lead ^= tables.Row(chunk, y)[i];
      best[i] = std::min(best[i], std::make_pair(lead, tables.Tail(i, y)));
    }
  }
  std::vector<uint64_t> out;
  for (const auto& b : best) out.push_back(b.second);
  return out;
}

TEST(SketchTest, SamplesEqualBruteForceReferences) {
  auto ctx = MakeContext();
  const SketchParams& params = ctx->params();
  TokenSource source(3);
  for (size_t n : {1, 5, 8, 9, 50, 300, 5000, 40000}) {
    Tokens tokens = source.Make(n);
    // Repeat a stretch so that the set is smaller than the sequence (option B).
    if (n > 100) tokens.insert(tokens.end(), tokens.begin(), tokens.begin() + 100);
    std::vector<uint64_t> shingles;
    const Sketch s = SketchTokens(*ctx, tokens, &shingles);
    ASSERT_EQ(s.minhashes, ReferenceMinhashes(*ctx, shingles)) << n << " tokens";

    std::vector<uint64_t> ys;
    for (uint64_t fp : ShingleSet(shingles, false)) {
      ys.push_back(internal::Fmix64(fp ^ ctx->impl().minhash.mix_seed));
    }
    std::sort(ys.begin(), ys.end());
    // MIN_s: the s smallest.
    const size_t s_min = std::min(ys.size(), static_cast<size_t>(params.min_sample_size));
    EXPECT_EQ(s.min_sample, std::vector<uint64_t>(ys.begin(), ys.begin() + s_min));
    // MOD_{2^i}: the smallest i keeping at most mod_sample_max.
    uint32_t i = 0;
    std::vector<uint64_t> mod;
    for (;; ++i) {
      mod.clear();
      for (uint64_t y : ys) {
        if ((y & ((uint64_t{1} << i) - 1)) == 0) mod.push_back(y);
      }
      if (mod.size() <= static_cast<size_t>(params.mod_sample_max)) break;
    }
    EXPECT_EQ(s.sample.log2_modulus, i) << n << " tokens";
    EXPECT_EQ(s.sample.values, mod);
  }
}

TEST(SketchTest, ModSampleKeepsFiftyToOneHundredValuesOnAverage) {
  auto ctx = MakeContext();
  TokenSource source(4);
  for (size_t n : {500, 5000, 50000}) {
    double total = 0;
    constexpr int kTrials = 20;
    for (int trial = 0; trial < kTrials; ++trial) {
      const Sketch s = SketchTokens(*ctx, source.Make(n));
      EXPECT_LE(s.sample.values.size(), 100u);
      total += static_cast<double>(s.sample.values.size());
    }
    // Expected size is between 50 and 100 once the modulus exceeds 1 (Broder et al. 1997).
    EXPECT_GT(total / kTrials, 50.0) << n;
    EXPECT_LE(total / kTrials, 100.0) << n;
  }
}

TEST(SketchTest, EveryMinhashKernelGivesBitIdenticalSketches) {
  std::vector<SimdLevel> levels = {SimdLevel::kScalar};
  for (SimdLevel level : {SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    if (CpuSupports(level)) levels.push_back(level);
  }
  if (levels.size() == 1) GTEST_SKIP() << "this CPU has no vector kernel to compare";
  for (SketchParams params : {SketchParams{}, SketchParams{.feature_groups = 8, .group_size = 25}}) {
    std::vector<std::shared_ptr<const SketchContext>> contexts;
    for (SimdLevel level : levels) contexts.push_back(MakeContext(params, level));
    TokenSource source(5);
    for (size_t n : {1, 7, 8, 100, 1000, 20000}) {
      // Tokens of about 20 bytes, and of every length the token hash kernels tell apart.
      for (const Tokens& tokens : {source.Make(n), source.MakeOfAnyLength(n)}) {
        const Sketch reference = SketchTokens(*contexts[0], tokens);
        for (size_t k = 1; k < contexts.size(); ++k) {
          EXPECT_EQ(SketchTokens(*contexts[k], tokens), reference)
              << SimdLevelName(levels[k]) << " differs from scalar at " << n << " tokens";
        }
      }
    }
  }
}

// Sketches are stored and compared across machines: pin the bytes of one.
TEST(SketchTest, SketchOfAFixedTextIsStable) {
  auto ctx = MakeContext();
  EXPECT_EQ(ctx->rabin_polynomial(), PickIrreduciblePolynomial(SketchParams{}.seed));
  const Sketch s = SketchTokens(*ctx, Split("a rose is a rose is a rose and a rose is a flower"));
  EXPECT_EQ(s.tokens, 14u);
  EXPECT_EQ(s.shingles, 7u);
  ASSERT_EQ(s.minhashes.size(), 84u);
  ASSERT_EQ(s.features.size(), 6u);
  ASSERT_EQ(s.supershingles.size(), 5u);  // 7 distinct shingles: 5 windows of 3 values
  ASSERT_EQ(s.sample.values.size(), 7u);  // all of them at modulus 1
  // Recorded from this implementation. A change here means that sketches stored by earlier
  // builds no longer compare with new ones: bump the store's format version with it.
  EXPECT_EQ(ctx->rabin_polynomial(), 0x19fb5035095a11a9ull);
  EXPECT_EQ(s.minhashes[0], 0xdb871b6f9f1dd85bull);
  EXPECT_EQ(s.minhashes[83], 0xaf4889e5cbb1586dull);
  EXPECT_EQ(s.features[0], 0xe9c672673bb24f73ull);
  EXPECT_EQ(s.features[5], 0x98aa4b632f5490f0ull);
  EXPECT_EQ(s.supershingles[0], 0x018e91664e4f900dull);
  EXPECT_EQ(s.sample.log2_modulus, 0u);
  EXPECT_EQ(s.sample.values[0], 0x13426677276350a8ull);
  EXPECT_EQ(s.lexical.ToHex(), "cf277a01e48d44b089c5247d21951c52");
  EXPECT_EQ(s.shingle.ToHex(), "5f02991f68501814b40646b6cdd2ecaf");  // the multiset, since format 9
  EXPECT_EQ(s.identical.ToHex(), "4ed27b32f8a0288b3d7c69b7af00c758");  // of no bytes
}

TEST(SketchTest, ShortAndEmptyPages) {
  auto ctx = MakeContext();
  const Sketch empty = SketchTokens(*ctx, {});
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.shingles, 0u);
  EXPECT_TRUE(empty.features.empty() && empty.min_sample.empty() && empty.supershingles.empty());
  EXPECT_EQ(ResemblanceFromMinhashes(empty, empty), 0.0);
  EXPECT_FALSE(Fungible(empty, empty, 1));

  // Fewer tokens than a shingle: one shingle of all of them.
  const Sketch short_a = SketchTokens(*ctx, Split("hello world"));
  const Sketch short_b = SketchTokens(*ctx, Split("hello world"));
  const Sketch short_c = SketchTokens(*ctx, Split("hello there"));
  EXPECT_EQ(short_a.shingles, 1u);
  EXPECT_EQ(ResemblanceFromMinhashes(short_a, short_b), 1.0);
  EXPECT_EQ(ResemblanceFromMinhashes(short_a, short_c), 0.0);
  EXPECT_EQ(short_a.supershingles.size(), 1u);
}

TEST(SketchTest, ExactFingerprintsSeparateTheThreeLevels) {
  auto ctx = MakeContext();
  auto sketch = [&](std::string_view raw, std::string_view text) {
    Sketcher sketcher(*ctx);
    sketcher.AddRawBytes(raw);
    for (const std::string& t : Split(text)) sketcher.OnToken(t);
    return sketcher.Finish();
  };
  const Sketch a = sketch("<p>A b c</p>", "a b c d e f g h i j");
  const Sketch b = sketch("<p>a  B c</p>", "a b c d e f g h i j");      // lexically equivalent
  const Sketch c = sketch("<p>A b c</p>", "a b c d e f g h i j j");     // same raw bytes only
  EXPECT_NE(a.identical, b.identical);
  EXPECT_EQ(a.lexical, b.lexical);
  EXPECT_EQ(a.shingle, b.shingle);
  EXPECT_EQ(a.identical, c.identical);
  EXPECT_NE(a.lexical, c.lexical);
  // "a b" and "ab" are different token streams.
  EXPECT_NE(sketch("", "a b").lexical, sketch("", "ab").lexical);
  // A reordering that keeps the shingle multiset keeps the shingle fingerprint: with w = 2,
  // "a b c a b c a" and "b c a b c a b" both have ab, bc and ca twice.
  SketchParams w2;
  w2.shingle_size = 2;
  auto ctx2 = MakeContext(w2);
  const Sketch d = SketchTokens(*ctx2, Split("a b c a b c a"));
  const Sketch e = SketchTokens(*ctx2, Split("b c a b c a b"));
  EXPECT_NE(d.lexical, e.lexical);
  EXPECT_EQ(d.shingle, e.shingle);
  // The same set with other repetitions is another multiset: left to the resemblance relations,
  // which see the equal sets (resemblance 1).
  const Sketch f = SketchTokens(*ctx2, Split("a b c a b c a b c a"));
  EXPECT_NE(d.shingle, f.shingle);
  EXPECT_EQ(ResemblanceFromMinhashes(d, f), 1.0);
}

// Shingle equivalence is exact: a one-word edit of a long page changes the shingle fingerprint,
// even when the edit leaves every sampled value as it was (the fingerprint of the selected
// sample, which this replaced, called such pages equivalent: a study found one at J = 0.987
// stored as a duplicate).
TEST(SketchTest, AOneWordEditIsNeverShingleEquivalent) {
  auto ctx = MakeContext();
  std::mt19937_64 rng(34);
  std::vector<std::string> words;
  for (int i = 0; i < 2000; ++i) words.push_back("w" + std::to_string(rng() % 50000));
  const Sketch original = SketchTokens(*ctx, words);
  int same_sample = 0;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<std::string> edited = words;
    edited[rng() % edited.size()] = "edit" + std::to_string(trial);
    const Sketch s = SketchTokens(*ctx, edited);
    EXPECT_NE(s.shingle, original.shingle) << trial;
    same_sample += s.minhashes == original.minhashes && s.sample == original.sample;
  }
  // About 8 of 2,000 shingles change, so most edits leave all 84 minhashes as they were (each
  // stays with probability ~0.996; the MOD sample of ~100 values less often): the old fingerprint
  // would have called them equivalent (27 of these 100).
  EXPECT_GT(same_sample, 10);
}

// The MIN_s and MOD estimators of Broder et al. 1997 are unbiased: their mean over pairs lies
// within 4 standard errors (measured from the spread of the estimates) of the exact value.
TEST(SketchTest, SampleEstimatorsAreUnbiased) {
  auto ctx = MakeContext();
  TokenSource source(6);
  constexpr int kPairs = 400;
  for (const CurvePoint& point : {kCurve[0], kCurve[2], kCurve[4]}) {
    std::vector<double> min_s, mod_r, mod_c;
    for (int i = 0; i < kPairs; ++i) {
      // Scale the pair up so that the MOD sample uses a modulus above 1.
      const Pair pair = MakePair(&source, 8, point.common * 4, point.own * 4);
      const Sketch a = SketchTokens(*ctx, pair.a), b = SketchTokens(*ctx, pair.b);
      min_s.push_back(ResemblanceFromMinSample(a.min_sample, b.min_sample));
      mod_r.push_back(ResemblanceFromModSample(a.sample, b.sample));
      mod_c.push_back(ContainmentFromModSample(a.sample, b.sample));
    }
    const double containment = static_cast<double>(point.common) / (point.common + point.own);
    auto check = [&](const std::vector<double>& v, double truth, const char* name) {
      double mean = 0, var = 0;
      for (double x : v) mean += x;
      mean /= static_cast<double>(v.size());
      for (double x : v) var += (x - mean) * (x - mean);
      const double se = std::sqrt(var / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
      EXPECT_LE(std::abs(mean - truth), 4 * se + 1e-9) << name << " at p = " << point.p;
    };
    check(min_s, point.p, "MIN_s resemblance");
    check(mod_r, point.p, "MOD resemblance");
    check(mod_c, containment, "MOD containment");
  }
}

// The MOD-sample estimators against their definition (Broder et al. 1997): both samples cut to
// the larger modulus, then |A n B| / |A| and |A n B| / |A u B|, on random sorted samples of many
// moduli (equal moduli, where neither sample is cut, and unequal ones).
TEST(SketchTest, ModSampleEstimatorsFollowTheirDefinition) {
  std::mt19937_64 rng(21);
  auto sample = [&](uint32_t log2_modulus, size_t n, const std::vector<uint64_t>& shared) {
    ModSample s;
    s.log2_modulus = log2_modulus;
    const uint64_t mask = (uint64_t{1} << log2_modulus) - 1;
    for (uint64_t v : shared) {
      if ((v & mask) == 0 && rng() % 3 != 0) s.values.push_back(v);
    }
    while (s.values.size() < n) s.values.push_back(rng() & ~mask);
    std::sort(s.values.begin(), s.values.end());
    s.values.erase(std::unique(s.values.begin(), s.values.end()), s.values.end());
    return s;
  };
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<uint64_t> shared(rng() % 200);
    for (uint64_t& v : shared) v = rng() & ~uint64_t{(1u << (rng() % 4)) - 1};
    ModSample a = sample(rng() % 4, rng() % 100, shared);
    ModSample b = sample(rng() % 4, rng() % 100, shared);
    const uint32_t m = std::max(a.log2_modulus, b.log2_modulus);
    const uint64_t mask = (uint64_t{1} << m) - 1;
    std::vector<uint64_t> va, vb, common, all;
    std::copy_if(a.values.begin(), a.values.end(), std::back_inserter(va), [&](uint64_t v) { return (v & mask) == 0; });
    std::copy_if(b.values.begin(), b.values.end(), std::back_inserter(vb), [&](uint64_t v) { return (v & mask) == 0; });
    std::set_intersection(va.begin(), va.end(), vb.begin(), vb.end(), std::back_inserter(common));
    std::set_union(va.begin(), va.end(), vb.begin(), vb.end(), std::back_inserter(all));
    const bool none = va.empty() || vb.empty();
    EXPECT_EQ(ContainmentFromModSample(a, b), none ? 0.0 : static_cast<double>(common.size()) / va.size());
    EXPECT_EQ(ContainmentFromModSample(b, a), none ? 0.0 : static_cast<double>(common.size()) / vb.size());
    EXPECT_EQ(ResemblanceFromModSample(a, b), none ? 0.0 : static_cast<double>(common.size()) / all.size());
    // Both ways from one merge, exactly as the two calls (queries score candidates with it).
    const Containments both = ContainmentsFromModSample(a, b);
    EXPECT_EQ(both.a_in_b, ContainmentFromModSample(a, b));
    EXPECT_EQ(both.b_in_a, ContainmentFromModSample(b, a));
  }
}

TEST(SketchTest, ContainmentOfAPageInALargerOneIsFound) {
  auto ctx = MakeContext();
  TokenSource source(7);
  const Tokens small = source.Make(2000);
  const Tokens large = Concat(Concat(source.Make(3000), small), source.Make(5000));
  const Sketch a = SketchTokens(*ctx, small), b = SketchTokens(*ctx, large);
  EXPECT_LT(a.sample.log2_modulus, b.sample.log2_modulus);
  // Every value of A's sample at B's modulus is in B's: containment 1 exactly (the shingles at
  // the two seams are A's only ones, and 7 of 1993 are unlikely to be sampled at 2^7).
  EXPECT_GE(ContainmentFromModSample(a.sample, b.sample), 0.95);
  EXPECT_LT(ContainmentFromModSample(b.sample, a.sample), 0.4);
}

// Super shingles mark pages of resemblance about 0.5 as candidates and rarely pages of 0.2.
TEST(SketchTest, SuperShinglesFindHalfResemblingPages) {
  auto ctx = MakeContext();
  TokenSource source(8);
  auto share_with_common_supershingle = [&](size_t c, size_t d) {
    int hits = 0;
    constexpr int kPairs = 300;
    for (int i = 0; i < kPairs; ++i) {
      const Pair pair = MakePair(&source, 8, c, d);
      hits += SuperShinglesInCommon(SketchTokens(*ctx, pair.a), SketchTokens(*ctx, pair.b)) > 0;
    }
    return static_cast<double>(hits) / kPairs;
  };
  const double at_half = share_with_common_supershingle(1000, 500);  // p = 0.5
  const double at_fifth = share_with_common_supershingle(400, 800);  // p = 0.2
  const double at_tenth = share_with_common_supershingle(200, 900);  // p = 0.1
  EXPECT_GT(at_half, 0.8);
  EXPECT_LT(at_fifth, 0.35);
  EXPECT_LT(at_tenth, 0.1);
  EXPECT_GT(at_half, at_fifth);
}

TEST(SketchTest, ParamsAreValidated) {
  SketchParams p;
  p.shingle_size = 0;
  EXPECT_EQ(SketchContext::Create(p).status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(SketchContext::Create(p).status().message().find("shingle_size"), std::string::npos);
  p = {};
  p.feature_groups = 20;
  p.group_size = 20;
  EXPECT_FALSE(SketchContext::Create(p).ok());
  p = {};
  p.fungible_threshold = 7;
  EXPECT_FALSE(SketchContext::Create(p).ok());
  p = {};
  p.supershingle_window = 30;
  EXPECT_FALSE(SketchContext::Create(p).ok());
}

}  // namespace
}  // namespace shingled::dedup
