// The verified second stage, measured through the real store on real near-duplicate
// texts (the copyright files Debian installs, /usr/share/doc/*/copyright) and on generated pairs
// at known resemblance, against the exact Jaccard of the 8-word shingle sets computed by a slow
// reference here (token strings joined and hashed: nothing of the sketcher's fingerprints).
//
// Sizes: the distinct copyright files of at most 64 KB with at least one token, up to 1,200 of
// them (the first in path order; 559 on the machine this was written on, of 994 installed), an
// edited copy of 400 of them (0% to 2.5% of the words replaced, like other names and years), and
// 240 generated pairs (120 of 600 words and 120 of 2,000, with 0 to 80 substituted words, where
// the samples are cut at k and the estimate is not exact); 10 seeds (the SketchParams seed: every
// permutation and the Rabin polynomial differ), each a new store with the default options (exact +
// verified, threshold 0.9, k = 256). Fewer than 300 usable files: the test skips, saying so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "dedup/sketch.h"
#include "dedup/tokenizer.h"
#include "store/store.h"
#include "tests/store/test_dir.h"

namespace shingled::store {
namespace {

constexpr size_t kMinFiles = 300;
constexpr size_t kMaxFiles = 1200;
constexpr size_t kMaxFileBytes = 64 << 10;
constexpr int kSeeds = 10;

// The slow reference: the tokens as strings, each window of 8 joined with spaces and hashed (a
// page of fewer than 8 tokens has one shingle of them all, as the sketcher's).
class TokenList final : public dedup::TokenSink {
 public:
  void OnToken(std::string_view token) override { tokens.emplace_back(token); }
  std::vector<std::string> tokens;
};

std::vector<uint64_t> ReferenceShingles(const std::string& text) {
  TokenList list;
  dedup::Tokenizer tokenizer(&list);
  tokenizer.Feed(text);
  tokenizer.Finish();
  const std::vector<std::string>& t = list.tokens;
  std::vector<uint64_t> out;
  const size_t w = 8;
  const size_t windows = t.empty() ? 0 : t.size() < w ? 1 : t.size() - w + 1;
  for (size_t i = 0; i < windows; ++i) {
    std::string joined;
    for (size_t j = i; j < std::min(t.size(), i + w); ++j) {
      joined.append(t[j]);
      joined.push_back(' ');
    }
    out.push_back(std::hash<std::string>{}(joined));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double Jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() || b.empty()) return 0;
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

std::vector<std::string> CopyrightFiles() {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/share/doc", ec)) {
    const std::filesystem::path p = entry.path() / "copyright";
    if (std::filesystem::is_regular_file(p, ec)) paths.push_back(p.string());
  }
  std::sort(paths.begin(), paths.end());
  std::set<std::string> seen;
  std::vector<std::string> texts;
  for (const std::string& path : paths) {
    if (texts.size() == kMaxFiles) break;
    std::ifstream in(path, std::ios::binary);
    std::stringstream data;
    data << in.rdbuf();
    std::string text = data.str();
    if (!in || text.size() > kMaxFileBytes) continue;
    if (!seen.insert(text).second) continue;  // identical files are one document: not a pair
    if (ReferenceShingles(text).empty()) continue;
    texts.push_back(std::move(text));
  }
  return texts;
}

// Generated pairs: a text of `words` words drawn from a large vocabulary (its shingles distinct),
// and a copy with `edits` words substituted at random places.
std::pair<std::string, std::string> GeneratedPair(uint32_t seed, int words, int edits) {
  std::mt19937 rng(seed);
  std::vector<std::string> base;
  for (int i = 0; i < words; ++i) base.push_back("w" + std::to_string(rng() % 1000000));
  std::vector<std::string> copy = base;
  for (int e = 0; e < edits; ++e) copy[rng() % copy.size()] = "x" + std::to_string(rng() % 1000000);
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& w : v) {
      out.append(w);
      out.push_back(' ');
    }
    return out;
  };
  return {join(base), join(copy)};
}

// A real text with a share `f` of its whitespace-separated words replaced (seeded): a
// near-duplicate such as a copyright file with other names and years.
std::string EditedReal(const std::string& text, double f, uint32_t seed) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  std::mt19937 rng(seed);
  const auto edits = static_cast<size_t>(std::lround(f * static_cast<double>(words.size())));
  for (size_t e = 0; e < edits && !words.empty(); ++e)
    words[rng() % words.size()] = "zq" + std::to_string(rng() % 1000000);
  std::string out;
  for (const std::string& w : words) {
    out.append(w);
    out.push_back(' ');
  }
  return out;
}

dedup::Sketch SketchText(const dedup::SketchContext& context, const std::string& text) {
  dedup::Sketcher sketcher(context);
  dedup::Tokenizer tokenizer(&sketcher);
  sketcher.AddRawBytes(text);
  tokenizer.Feed(text);
  tokenizer.Finish();
  return sketcher.Finish();
}

struct Pair {
  size_t a = 0, b = 0;
  double j = 0;
};

TEST(VerifyCorpusTest, RecallAndPrecisionThroughTheStoreOverTenSeeds) {
  std::vector<std::string> texts = CopyrightFiles();
  if (texts.size() < kMinFiles) {
    GTEST_SKIP() << "only " << texts.size()
                 << " usable /usr/share/doc/*/copyright files (distinct, "
                 << "at most 64 KB, with tokens); this test needs at least " << kMinFiles;
  }
  const size_t real = texts.size();
  // Near-duplicates of real texts: for 400 of the files of at least 100 words, a copy with 0% to
  // 2.5% of its words replaced (J from 1 down to ~0.7).
  size_t edited = 0;
  for (size_t i = 0; i < real && edited < 400; ++i) {
    if (std::count(texts[i].begin(), texts[i].end(), ' ') < 100) continue;
    texts.push_back(
        EditedReal(texts[i], static_cast<double>(edited % 26) * 0.001, static_cast<uint32_t>(i)));
    ++edited;
  }
  for (int i = 0; i < 240; ++i) {
    const int words = i < 120 ? 600 : 2000;
    const int edits = (i % 120) * 80 / 120;
    auto [a, b] =
        GeneratedPair(static_cast<uint32_t>(1000 + i), words, words == 600 ? edits / 3 : edits);
    texts.push_back(std::move(a));
    texts.push_back(std::move(b));
  }
  std::vector<std::vector<uint64_t>> sets;
  for (const std::string& t : texts) sets.push_back(ReferenceShingles(t));

  // Every pair at J >= 0.5 by the reference (J <= min/max, which rules most pairs out unread).
  std::vector<size_t> by_size(texts.size());
  for (size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
  std::sort(by_size.begin(), by_size.end(),
            [&](size_t x, size_t y) { return sets[x].size() < sets[y].size(); });
  std::vector<Pair> pairs;
  std::map<std::pair<size_t, size_t>, double> exact;
  for (size_t x = 0; x < by_size.size(); ++x) {
    for (size_t y = x + 1; y < by_size.size(); ++y) {
      const size_t a = by_size[x], b = by_size[y];
      if (sets[a].size() < 0.5 * static_cast<double>(sets[b].size())) break;
      const double j = Jaccard(sets[a], sets[b]);
      if (j >= 0.5) {
        pairs.push_back({std::min(a, b), std::max(a, b), j});
        exact[{std::min(a, b), std::max(a, b)}] = j;
      }
    }
  }
  auto exact_of = [&](size_t a, size_t b) {
    auto it = exact.find({std::min(a, b), std::max(a, b)});
    return it != exact.end() ? it->second : Jaccard(sets[a], sets[b]);
  };
  size_t at_90 = 0, at_95 = 0, real_at_90 = 0;
  for (const Pair& p : pairs) {
    at_90 += p.j >= 0.9;
    at_95 += p.j >= 0.95;
    real_at_90 += p.j >= 0.9 && p.b < real + edited;
  }
  std::printf(
      "corpus: %zu copyright files, %zu edited copies of them, 480 generated texts; %zu pairs at "
      "J >= 0.5, %zu at >= 0.9 (%zu between copyright files or their copies), %zu at >= 0.95\n",
      real, edited, pairs.size(), at_90, real_at_90, at_95);
  ASSERT_GT(at_90, 50u);

  // Error by band: pooled over the seeds, per band of J, the RMS error of the pairs whose estimate
  // is sampled against the RMS of the standard error stated for them; an exact one must be exact.
  struct Band {
    double sq_error = 0, sq_stated = 0;
    size_t sampled = 0, exact = 0, exact_wrong = 0;
  };
  std::map<int, Band> bands;  // J in [b/10, (b+1)/10)
  double recall_90_sum = 0, recall_95_sum = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    dedup::SketchParams params;
    params.seed = 0x5348494e474c4544ull + static_cast<uint64_t>(seed) * 0x9e3779b97f4a7c15ull;
    auto context = dedup::SketchContext::Create(params);
    ASSERT_TRUE(context.ok());
    std::vector<dedup::Sketch> sketches;
    sketches.reserve(texts.size());
    for (const std::string& t : texts) sketches.push_back(SketchText(**context, t));
    for (const Pair& p : pairs) {
      const dedup::VerifyEstimate e = dedup::ResemblanceFromVerifySample(
          sketches[p.a].verify_sample, sketches[p.b].verify_sample,
          static_cast<size_t>(params.verify_sample_size));
      Band& band = bands[std::min(9, static_cast<int>(p.j * 10))];
      if (e.exact) {
        ++band.exact;
        band.exact_wrong += std::abs(e.resemblance - p.j) > 1e-9;
      } else {
        ++band.sampled;
        band.sq_error += (e.resemblance - p.j) * (e.resemblance - p.j);
        const double se = dedup::VerifyStandardError(e, p.j);
        band.sq_stated += se * se;
      }
    }

    testing::TestDir dir;
    StoreOptions options;
    options.durable = false;
    auto store = Store::Open(dir.Sub("db"), options, **context);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const SweepId sweep = (*store)->OpenSweep("s", 1)->id;
    std::vector<DocId> doc_of(texts.size());
    std::map<DocId, size_t> text_of;
    size_t accepted = 0, accepted_below_80 = 0;
    double lowest_accepted = 1;
    // Shuffled per seed: the order pages arrive in is part of what a seed varies.
    std::vector<size_t> order(texts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<uint32_t>(seed)));
    for (size_t start = 0; start < order.size(); start += 64) {
      std::vector<PageInput> batch;
      for (size_t i = start; i < std::min(order.size(), start + 64); ++i) {
        PageInput page;
        page.url = "https://example.com/" + std::to_string(order[i]);
        page.sweep = sweep;
        page.date = 1;
        page.sketch = sketches[order[i]];
        batch.push_back(std::move(page));
      }
      auto results = (*store)->Apply(batch);
      ASSERT_TRUE(results.ok()) << results.status().ToString();
      for (size_t i = 0; i < results->size(); ++i) {
        const PageResult& r = (*results)[i];
        ASSERT_TRUE(r.status.ok()) << r.status.ToString();
        const size_t t = order[start + i];
        doc_of[t] = r.doc;
        text_of[r.doc] = t;
        for (const Match& m : r.matches) {
          if (m.relation != Relation::kVerified) continue;
          ++accepted;
          const double j = exact_of(t, text_of.at(m.doc));
          lowest_accepted = std::min(lowest_accepted, j);
          if (j < 0.8) {
            ++accepted_below_80;
            ADD_FAILURE() << "seed " << seed << ": accepted a pair at J = " << j << " (estimate "
                          << m.resemblance << ", " << ResemblanceSourceName(m.resemblance_from)
                          << ")";
          }
        }
      }
    }
    std::vector<ClusterId> cluster_of(texts.size());
    for (size_t t = 0; t < texts.size(); ++t) {
      auto info = (*store)->Document(doc_of[t]);
      ASSERT_TRUE(info.ok()) << info.status().ToString();
      cluster_of[t] = info->cluster;
    }
    size_t found_90 = 0, found_95 = 0;
    for (const Pair& p : pairs) {
      const bool together = cluster_of[p.a] == cluster_of[p.b];
      if (p.j >= 0.9) found_90 += together;
      if (p.j >= 0.95) found_95 += together;
    }
    const double recall_90 = static_cast<double>(found_90) / static_cast<double>(at_90);
    const double recall_95 =
        at_95 == 0 ? 1 : static_cast<double>(found_95) / static_cast<double>(at_95);
    recall_90_sum += recall_90;
    recall_95_sum += recall_95;
    std::printf(
        "seed %d (0x%016llx): recall at J >= 0.9 %.4f (%zu of %zu), at J >= 0.95 %.4f; %zu "
        "verified matches, the lowest at J = %.4f, %zu below 0.8\n",
        seed, static_cast<unsigned long long>(params.seed), recall_90, found_90, at_90, recall_95,
        accepted, lowest_accepted, accepted_below_80);
    EXPECT_EQ(accepted_below_80, 0u) << "seed " << seed;
    auto problems = (*store)->Check();
    ASSERT_TRUE(problems.ok()) << problems.status().ToString();
    EXPECT_TRUE(problems->empty()) << (*problems)[0];
  }
  const double recall_90 = recall_90_sum / kSeeds, recall_95 = recall_95_sum / kSeeds;
  std::printf("mean over %d seeds: recall at J >= 0.9 %.4f, at J >= 0.95 %.4f\n", kSeeds, recall_90,
              recall_95);
  EXPECT_GT(recall_90, 0.95);
  EXPECT_GT(recall_95, 0.99);
  for (const auto& [b, band] : bands) {
    const double rms =
        band.sampled ? std::sqrt(band.sq_error / static_cast<double>(band.sampled)) : 0;
    const double stated =
        band.sampled ? std::sqrt(band.sq_stated / static_cast<double>(band.sampled)) : 0;
    std::printf(
        "band J in [%.1f, %.1f): %zu sampled estimates, RMS error %.5f against stated %.5f; "
        "%zu exact, %zu of them wrong\n",
        b / 10.0, (b + 1) / 10.0, band.sampled, rms, stated, band.exact, band.exact_wrong);
    // Within the stated standard error (10% slack for the sampling of the RMS itself: hundreds of
    // estimates per band).
    if (band.sampled >= 100) {
      EXPECT_LE(rms, 1.1 * stated) << "band " << b;
    }
    // An exact estimate is wrong only by a 32-bit collision between distinct shingles.
    EXPECT_LE(band.exact_wrong, band.exact / 1000 + 1) << "band " << b;
  }
}

}  // namespace
}  // namespace shingled::store
