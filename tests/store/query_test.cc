// On-the-fly resemblance queries (Store::SimilarTo*): where their candidates come from, on real
// LMDB files in temporary directories with synthetic sketches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "store/internal/codec.h"
#include "store/store.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::store {
namespace {

using testing::Range;
using testing::SyntheticSketch;
using testing::TestDir;
using testing::Variant;

constexpr uint64_t kPolynomial = 0x1234567890abcdefull;

class QueryTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> OpenStore() {
    StoreOptions options;
    options.durable = false;  // throw-away stores
    StatusOr<std::unique_ptr<Store>> s = Store::Open(dir_.Sub("db"), options, params_, kPolynomial);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  PageInput Page(std::string url, SweepId sweep, dedup::Sketch sketch) {
    PageInput p;
    p.url = std::move(url);
    p.sweep = sweep;
    p.date = 1;
    p.sketch = std::move(sketch);
    return p;
  }
  // Number of the sketch's sample values that are filed in the sample index.
  static size_t IndexedValues(const dedup::Sketch& s) {
    return static_cast<size_t>(std::count_if(s.sample.values.begin(), s.sample.values.end(), [&](uint64_t v) {
      return internal::IndexedSampleValue(v, s.sample.log2_modulus);
    }));
  }

  TestDir dir_;
  dedup::SketchParams params_;
};

// Queries take their candidates from the sample index and, when the sample is too small, the
// features (FORMAT.md, "Lookups"): a page of resemblance 0.5 shares no feature with the query,
// so only the sample index can find it. 1000-shingle pages share 667: resemblance 667/1333 = 0.50, containment 0.67 both ways.
// Each of the query's indexed sample values (8 to 26 here, 15 typical) is in the stored page's
// sample with probability ~0.67, so a page is missed with probability ~0.33^n: ~1e-4 for the
// fewest, ~6e-8 for 15; every one of the 40 (fixed seeds) must be found.
TEST_F(QueryTest, FindsHalfResemblantPagesThroughTheSampleIndex) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  constexpr int kPages = 40;
  std::vector<PageInput> batch;
  for (int i = 0; i < kPages; ++i) {
    batch.push_back(Page("http://p/" + std::to_string(i), s, SyntheticSketch(params_, Range(i * 100000, 1000))));
  }
  StatusOr<std::vector<PageResult>> stored = store->Apply(batch);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  QueryOptions q;
  q.threshold = 0.5;
  int without_features = 0;
  for (int i = 0; i < kPages; ++i) {
    dedup::Sketch query = SyntheticSketch(params_, Variant(i * 100000, 1000, 667, (uint64_t{1} << 40) + i * 1000));
    ASSERT_GE(IndexedValues(query), 8u);
    StatusOr<std::vector<SimilarDoc>> r = store->SimilarToSketch(query, q);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->size(), 1u) << "page " << i;
    const SimilarDoc& found = (*r)[0];
    EXPECT_EQ(found.doc, (*stored)[i].doc);
    EXPECT_EQ(found.url, "http://p/" + std::to_string(i));
    EXPECT_EQ(found.cluster, (*stored)[i].cluster);
    // Estimates of 0.50 and 0.67 from 84 minhashes (stderr ~0.055) and ~100 sample values.
    EXPECT_NEAR(found.resemblance, 0.5, 0.2);
    EXPECT_NEAR(found.containment_of_query, 0.67, 0.2);
    if (found.features_in_common == 0) ++without_features;
  }
  // A feature (14 minhashes) is shared with probability 0.5^14: none of these pages was found
  // through one.
  EXPECT_EQ(without_features, kPages);
}

// The writer still takes candidates from the super shingles as well (the "similar" relation of
// paper 001); a query does not. A page whose super shingles equal a stored page's, with the same
// minhashes (resemblance estimate 1) but other features and sample values, is linked by the writer
// and not found by a query.
TEST_F(QueryTest, SuperShinglesFindCandidatesForTheWriterNotForQueries) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  dedup::Sketch a = SyntheticSketch(params_, Range(0, 1000));
  dedup::Sketch b = SyntheticSketch(params_, Range(500000, 1000));
  b.minhashes = a.minhashes;
  b.supershingles = a.supershingles;
  ASSERT_EQ(dedup::FeaturesInCommon(a, b), 0);
  ASSERT_EQ(dedup::ContainmentFromModSample(b.sample, a.sample), 0);
  PageInput pa = Page("http://a/", s, a);
  const PageResult ra = store->Apply(std::span(&pa, 1)).value()[0];

  QueryOptions q;
  q.threshold = 0.5;
  StatusOr<std::vector<SimilarDoc>> r = store->SimilarToSketch(b, q);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->empty());

  PageInput pb = Page("http://b/", s, b);
  const PageResult rb = store->Apply(std::span(&pb, 1)).value()[0];
  ASSERT_EQ(rb.matches.size(), 1u);
  EXPECT_EQ(rb.matches[0].doc, ra.doc);
  EXPECT_EQ(rb.matches[0].relation, Relation::kSimilar);
  EXPECT_DOUBLE_EQ(rb.matches[0].resemblance, 1.0);
}

// A query reads the feature index only when its sample values are too few to be trusted (fewer
// than 8 usable indexed values): a page that shares every feature and minhash with the query but
// none of its sample values is found through the features then, and not when the query has 8 or
// more indexed values (a real page sharing a feature shares ~80% of them: FORMAT.md, "Lookups").
TEST_F(QueryTest, FeaturesAreReadOnlyWhenTheSampleValuesAreTooFew) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  const dedup::Sketch a = SyntheticSketch(params_, Range(0, 1000));
  PageInput pa = Page("http://a/", s, a);
  const PageResult ra = store->Apply(std::span(&pa, 1)).value()[0];
  const dedup::Sketch fresh = SyntheticSketch(params_, Range(900000, 1000));
  ASSERT_GE(IndexedValues(fresh), 8u);
  QueryOptions q;
  q.threshold = 0.5;

  dedup::Sketch many = a;  // a's features and minhashes, another page's sample
  many.sample = fresh.sample;
  StatusOr<std::vector<SimilarDoc>> r = store->SimilarToSketch(many, q);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->empty());

  dedup::Sketch few = many;  // the same with 5 indexed sample values
  few.sample.values.clear();
  for (uint64_t v : fresh.sample.values) {
    if (internal::IndexedSampleValue(v, fresh.sample.log2_modulus) && IndexedValues(few) < 5) few.sample.values.push_back(v);
  }
  ASSERT_EQ(IndexedValues(few), 5u);
  r = store->SimilarToSketch(few, q);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].doc, ra.doc);
  EXPECT_EQ((*r)[0].features_in_common, params_.feature_groups);
  EXPECT_DOUBLE_EQ((*r)[0].resemblance, 1.0);
}

// The most recent URL of each result: the latest version that still shows the document, the
// smallest url id on equal dates; a URL that moved on to other content no longer counts.
TEST_F(QueryTest, ResultsNameTheMostRecentLiveUrlOfTheirDocument) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  dedup::Sketch page = SyntheticSketch(params_, Range(0, 1000));
  dedup::Sketch other = SyntheticSketch(params_, Range(700000, 1000));
  auto at = [&](std::string url, const dedup::Sketch& sketch, int64_t date) {
    PageInput p = Page(std::move(url), s, sketch);
    p.date = date;
    StatusOr<std::vector<PageResult>> r = store->Apply(std::span(&p, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0] : PageResult{};
  };
  const DocId doc = at("http://first/", page, 10).doc;
  at("http://second/", page, 20);
  at("http://third/", page, 20);
  QueryOptions q;
  StatusOr<std::vector<SimilarDoc>> r = store->SimilarToSketch(page, q);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].doc, doc);
  EXPECT_EQ((*r)[0].url, "http://second/");  // date 20, stored before third
  // second and third move on to other content: first is the only URL still showing the page.
  at("http://second/", other, 30);
  at("http://third/", other, 30);
  r = store->SimilarToSketch(page, q);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].url, "http://first/");
}

// Resident bytes of this process's mappings of `file` (/proc/self/smaps, "Rss").
uint64_t MappedBytesOf(const std::string& file) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_file = false;
  uint64_t kib = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') != std::string::npos &&
        line.find(':') > line.find(' ')) {
      in_file = line.size() >= file.size() && line.compare(line.size() - file.size(), file.size(), file) == 0;
    } else if (in_file && line.rfind("Rss:", 0) == 0) {
      std::istringstream in(line.substr(4));
      uint64_t n = 0;
      in >> n;
      kib += n;
    }
  }
  return kib * 1024;
}

// WarmMap puts every page of the file in the page tables (the map's resident size reaches the
// file's size), stops when told to, and after the map grew (a remap) warms the new map.
TEST_F(QueryTest, WarmMapMapsTheWholeFileAndFollowsAGrowth) {
  StoreOptions options;
  options.durable = false;
  options.initial_map_size = uint64_t{1} << 20;  // grows (doubling, remapping) under the pages below
  auto store = std::move(Store::Open(dir_.Sub("db"), options, params_, kPolynomial)).value();
  SweepId s = store->OpenSweep("s", 1)->id;
  auto fill = [&](int from, int to) {
    std::vector<PageInput> batch;
    for (int i = from; i < to; ++i) {
      batch.push_back(Page("http://p/" + std::to_string(i), s, SyntheticSketch(params_, Range(i * 100000, 300))));
    }
    ASSERT_TRUE(store->Apply(batch).ok());
  };
  fill(0, 200);
  const std::string file = dir_.Sub("db") + "/data.mdb";
  int calls = 0;
  StatusOr<uint64_t> none = store->WarmMap([&] {
    ++calls;
    return false;
  });
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, 0u);
  EXPECT_EQ(calls, 1);

  StatusOr<uint64_t> warmed = store->WarmMap();
  ASSERT_TRUE(warmed.ok()) << warmed.status().ToString();
  StatusOr<StoreStats> stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(*warmed, stats->file_bytes);
  EXPECT_GE(MappedBytesOf(file), stats->file_bytes);

  const uint64_t map_before = stats->map_size;
  fill(200, 1200);
  stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  ASSERT_GT(stats->map_size, map_before);  // the map grew: LMDB mapped it anew
  warmed = store->WarmMap();
  ASSERT_TRUE(warmed.ok()) << warmed.status().ToString();
  EXPECT_EQ(*warmed, stats->file_bytes);
  EXPECT_GE(MappedBytesOf(file), stats->file_bytes);
  // Queries answer as before.
  StatusOr<std::vector<SimilarDoc>> r = store->SimilarToSketch(SyntheticSketch(params_, Range(700 * 100000, 300)), QueryOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].url, "http://p/700");
}

}  // namespace
}  // namespace shingled::store
