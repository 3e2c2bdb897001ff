// On-the-fly resemblance queries (Store::SimilarTo*): where their candidates come from, on real
// LMDB files in temporary directories with synthetic sketches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "store/internal/codec.h"
#include "store/internal/store_impl.h"
#include "store/mapped_file.h"
#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::store {
namespace {

using testing::Range;
using testing::SyntheticSketch;
using testing::TestDir;
using testing::Variant;

class QueryTest : public testing::StoreConformance {
 protected:
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
};
SHINGLED_STORE_ENGINES(QueryTest);

// Queries take their candidates from the sample index and, when the sample is too small, the
// features (FORMAT.md, "Lookups"): a page of resemblance 0.5 shares no feature with the query,
// so only the sample index can find it. 1000-shingle pages share 667: resemblance 667/1333 = 0.50, containment 0.67 both ways.
// Each of the query's indexed sample values (8 to 26 here, 15 typical) is in the stored page's
// sample with probability ~0.67, so a page is missed with probability ~0.33^n: ~1e-4 for the
// fewest, ~6e-8 for 15; every one of the 40 (fixed seeds) must be found.
TEST_P(QueryTest, FindsHalfResemblantPagesThroughTheSampleIndex) {
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
// Broder et al. 1997); a query does not. A page whose super shingles equal a stored page's, with
// the same minhashes (resemblance estimate 1) but other features and sample values, is linked by
// the writer and not found by a query.
TEST_P(QueryTest, SuperShinglesFindCandidatesForTheWriterNotForQueries) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  dedup::Sketch a = SyntheticSketch(params_, Range(0, 1000));
  dedup::Sketch b = SyntheticSketch(params_, Range(500000, 1000));
  b.minhashes = a.minhashes;
  b.supershingles = a.supershingles;
  b.verify_sample = a.verify_sample;  // the verification estimate is 1 as well
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
  // "verified" (the relation that clusters by default) rather than "similar".
  EXPECT_EQ(rb.matches[0].relation, Relation::kVerified);
  EXPECT_DOUBLE_EQ(rb.matches[0].resemblance, 1.0);
}

// A query reads the feature index only when its sample values are too few to be trusted (fewer
// than 8 usable indexed values): a page that shares every feature and minhash with the query but
// none of its sample values is found through the features then, and not when the query has 8 or
// more indexed values (a real page sharing a feature shares ~80% of them: FORMAT.md, "Lookups").
TEST_P(QueryTest, FeaturesAreReadOnlyWhenTheSampleValuesAreTooFew) {
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

// SimilarToSketch against a reference computed here from each stored document's sketch as it
// was applied (Store::Document gives it back on LMDB; the Redis Cluster backend keeps 32 bits of
// each minhash and sample value, docs/REDIS.md, and compares the query's cut alike): the candidates
// are the documents holding one of the query's indexed sample values (1 point each), plus 4 points
// per shared feature when the features are read (fewer than 8 indexed values, all usable here, or
// hits over max_candidates); above max_candidates only the max_candidates with the most points (the
// older first) are scored; results reach the threshold by resemblance or either containment,
// ordered by resemblance, then containment, then id, cut at the limit. Exact equality, scores
// included: the query path's faster reads (ReadBucketPostings, records prefetched, both
// containments from one merge, no ranking below max_candidates) must not change an answer. Pages:
// 50 families of 4 near-copies (resemblance ~0.9, as the benchmark's), and 40 pages made of parts
// of three families (candidates, mostly below threshold). With the write buffer, most postings are
// in memory; without it, all are in the B-trees.
TEST_P(QueryTest, AnswersEqualAReferenceComputedFromTheStoredSketches) {
  for (auto [max_candidates, buffered] :
       {std::pair{500u, true}, std::pair{3u, true}, std::pair{500u, false}}) {
    SCOPED_TRACE(max_candidates);
    SCOPED_TRACE(buffered);
    StoreOptions options;
    options.max_candidates = max_candidates;
    options.write_buffer = buffered;
    auto store = OpenStore(options, "db" + std::to_string(max_candidates) + (buffered ? "b" : ""));
    ASSERT_NE(store, nullptr);
    SweepId s = store->OpenSweep("s", 1)->id;
    auto family_page = [](uint64_t family, uint64_t variant) {
      return Variant(family * 1000, 200, 190, (uint64_t{1} << 40) + variant * 100);
    };
    std::vector<PageInput> batch;
    for (uint64_t f = 0; f < 50; ++f) {
      for (uint64_t v = 0; v < 4; ++v) {
        const uint64_t j = f * 4 + v;
        batch.push_back(Page("http://f/" + std::to_string(j), s, SyntheticSketch(params_, family_page(f, j))));
      }
    }
    for (uint64_t m = 0; m < 40; ++m) {
      std::vector<uint64_t> shingles;
      for (uint64_t part = 0; part < 3; ++part) {
        const std::vector<uint64_t> r = Range(((m + part * 7) % 50) * 1000 + part * 60, 60 + 20 * part);
        shingles.insert(shingles.end(), r.begin(), r.end());
      }
      batch.push_back(Page("http://m/" + std::to_string(m), s, SyntheticSketch(params_, shingles)));
    }
    StatusOr<std::vector<PageResult>> stored = store->Apply(batch);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    std::vector<DocumentInfo> infos;  // every stored document, with the URL of batch[i] in urls[i]
    std::vector<std::string> urls;
    for (size_t i = 0; i < batch.size(); ++i) {
      StatusOr<DocumentInfo> info = store->Document((*stored)[i].doc);
      ASSERT_TRUE(info.ok()) << info.status().ToString();
      ASSERT_EQ(info->representative, info->id);  // distinct pages: each has its own sketch
      infos.push_back(*info);
      infos.back().sketch = batch[i].sketch;
      urls.push_back(batch[i].url);
    }

    QueryOptions q;
    q.threshold = 0.3;
    q.limit = 5;
    size_t answers = 0, truncated_queries = 0;
    for (uint64_t i = 0; i < 120; ++i) {
      // Stored pages, new near-copies of a family, and new pages made of part of one.
      const dedup::Sketch query = i % 3 == 0   ? batch[i * 2].sketch
                                  : i % 3 == 1 ? SyntheticSketch(params_, family_page(i % 50, 100000 + i))
                                               : SyntheticSketch(params_, Range((i % 50) * 1000 + 100, 150));
      std::vector<uint64_t> indexed;
      for (uint64_t v : query.sample.values) {
        if (internal::IndexedSampleValue(v, query.sample.log2_modulus)) indexed.push_back(v);
      }
      // Points per document as the indexes give them: a sample value is filed by a document
      // whose sample holds it and whose modulus files it.
      std::vector<uint32_t> sample_points(infos.size(), 0);
      size_t hits = 0;
      for (size_t d = 0; d < infos.size(); ++d) {
        const dedup::ModSample& ds = infos[d].sketch.sample;
        for (uint64_t v : indexed) {
          if (internal::IndexedSampleValue(v, ds.log2_modulus) && std::binary_search(ds.values.begin(), ds.values.end(), v)) {
            ++sample_points[d];
          }
        }
        hits += sample_points[d];
      }
      std::vector<std::pair<uint32_t, size_t>> found;  // (points, index in infos)
      for (size_t d = 0; d < infos.size(); ++d) {
        uint32_t points = sample_points[d];
        if (indexed.size() < 8 || hits > max_candidates) {  // every value is usable here
          const std::vector<uint64_t>& df = infos[d].sketch.features;
          for (uint64_t f : query.features) points += 4 * static_cast<uint32_t>(std::count(df.begin(), df.end(), f));
        }
        if (points > 0) found.emplace_back(points, d);
      }
      std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : infos[a.second].id < infos[b.second].id;
      });
      if (found.size() > max_candidates) {
        found.resize(max_candidates);
        ++truncated_queries;
      }
      std::vector<SimilarDoc> want;
      for (const auto& [points, d] : found) {
        const dedup::Sketch& other = infos[d].sketch;
        SimilarDoc r;
        r.doc = infos[d].id;
        r.cluster = infos[d].cluster;
        // the verification estimate when both have a sample.
        r.resemblance = !query.verify_sample.empty() && !other.verify_sample.empty()
                            ? dedup::ResemblanceFromVerifySample(
                                  query.verify_sample, other.verify_sample,
                                  static_cast<size_t>(params_.verify_sample_size))
                                  .resemblance
                            : dedup::ResemblanceFromMinhashes(query, other);
        r.containment_of_query = dedup::ContainmentFromModSample(query.sample, other.sample);
        r.containment_in_query = dedup::ContainmentFromModSample(other.sample, query.sample);
        r.features_in_common = dedup::FeaturesInCommon(query, other);
        r.url = urls[d];
        if (std::max({r.resemblance, r.containment_of_query, r.containment_in_query}) >= q.threshold) want.push_back(r);
      }
      std::sort(want.begin(), want.end(), [](const SimilarDoc& a, const SimilarDoc& b) {
        if (a.resemblance != b.resemblance) return a.resemblance > b.resemblance;
        const double ca = std::max(a.containment_of_query, a.containment_in_query);
        const double cb = std::max(b.containment_of_query, b.containment_in_query);
        if (ca != cb) return ca > cb;
        return a.doc < b.doc;
      });
      if (want.size() > q.limit) want.resize(q.limit);

      StatusOr<std::vector<SimilarDoc>> got = store->SimilarToSketch(query, q);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      ASSERT_EQ(got->size(), want.size()) << "query " << i;
      for (size_t k = 0; k < want.size(); ++k) {
        SCOPED_TRACE("query " + std::to_string(i) + " result " + std::to_string(k));
        EXPECT_EQ((*got)[k].doc, want[k].doc);
        EXPECT_EQ((*got)[k].cluster, want[k].cluster);
        EXPECT_EQ((*got)[k].resemblance, want[k].resemblance);
        EXPECT_EQ((*got)[k].containment_of_query, want[k].containment_of_query);
        EXPECT_EQ((*got)[k].containment_in_query, want[k].containment_in_query);
        EXPECT_EQ((*got)[k].features_in_common, want[k].features_in_common);
        EXPECT_EQ((*got)[k].url, want[k].url);
      }
      answers += want.size();
    }
    // The queries found something, and with 3 candidates at most, many were cut.
    EXPECT_GT(answers, 200u);
    if (max_candidates == 3) {
      EXPECT_GT(truncated_queries, 60u);
    }
  }
}

// ReadBucketPostings (the queries' read of `samples`) against ReadValuePostings on a real
// posting database: the same documents, count, `more` and return code for every stored value,
// values absent from a stored bucket (before, between and after its values), values of absent
// buckets, and every `max`; through one cursor per reader, reused in a random order as a query
// reuses it. The buckets: one posting alone (no duplicates), inline ones of a few dozen entries,
// and one of ~1,200 entries, which LMDB keeps in a nested tree of several pages (the fallback).
TEST(ReadBucketPostingsTest, ReadsWhatReadValuePostingsReads) {
  TestDir dir;
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  std::unique_ptr<MDB_env, decltype(&mdb_env_close)> env_owner(env, &mdb_env_close);
  ASSERT_EQ(mdb_env_set_maxdbs(env, 1), 0);
  ASSERT_EQ(mdb_env_set_mapsize(env, size_t{1} << 28), 0);
  ASSERT_EQ(mdb_env_open(env, dir.path().c_str(), MDB_NOSYNC, 0644), 0);
  MDB_txn* raw = nullptr;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &raw), 0);
  internal::Txn txn(raw);
  MDB_dbi dbi = 0;
  ASSERT_EQ(mdb_dbi_open(raw, "samples", MDB_CREATE | internal::kPostings, &dbi), 0);
  ASSERT_EQ(mdb_set_compare(raw, dbi, internal::CompareBytes), 0);
  ASSERT_EQ(mdb_set_dupsort(raw, dbi, internal::CompareBytes), 0);

  std::mt19937_64 rng(7);
  std::map<uint64_t, std::vector<DocId>> model;  // value -> its documents
  auto put = [&](uint64_t value, DocId doc) {
    internal::PostingKey key(value);
    internal::Posting posting(value, doc);
    MDB_val k = internal::Val(key.view()), v = internal::Val(posting.view());
    ASSERT_EQ(mdb_put(raw, dbi, &k, &v, MDB_NODUPDATA), 0);
    model[value].push_back(doc);
  };
  auto value_in = [&](uint64_t bucket) { return (bucket << internal::kLowBits) | (rng() & internal::kLowMask); };
  const uint64_t single = 0x00001, nested = 0xfedcb;
  put(value_in(single), 42);
  for (uint64_t bucket = 0x10000; bucket < 0x10010; ++bucket) {
    for (int i = 0, n = 1 + static_cast<int>(rng() % 12); i < n; ++i) {
      const uint64_t value = value_in(bucket);
      for (int d = 0, m = 1 + static_cast<int>(rng() % 6); d < m; ++d) put(value, 1 + rng() % internal::kMaxDocId);
    }
  }
  for (int i = 0; i < 300; ++i) {
    const uint64_t value = value_in(nested);
    for (int d = 0, m = 1 + static_cast<int>(rng() % 5); d < m; ++d) put(value, 1 + rng() % internal::kMaxDocId);
  }
  const uint64_t crowded = value_in(nested);  // a value with 300 documents in the nested bucket
  for (DocId d = 1; d <= 300; ++d) put(crowded, d * 1000);
  for (auto& [value, docs] : model) {
    std::sort(docs.begin(), docs.end());
    docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  }
  ASSERT_EQ(txn.Commit(), 0);
  ASSERT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &raw), 0);
  txn = internal::Txn(raw);

  internal::Cursor a, b;
  ASSERT_EQ(a.Open(raw, dbi), 0);
  ASSERT_EQ(b.Open(raw, dbi), 0);
  {
    // The nested bucket does not come back in one page (the test covers the fallback).
    internal::PostingKey key(crowded);
    MDB_val k = internal::Val(key.view()), v;
    size_t n = 0;
    ASSERT_EQ(mdb_cursor_get(a.get(), &k, &v, MDB_SET_KEY), 0);
    ASSERT_EQ(mdb_cursor_count(a.get(), &n), 0);
    ASSERT_EQ(mdb_cursor_get(a.get(), &k, &v, MDB_GET_MULTIPLE), 0);
    ASSERT_LT(v.mv_size, n * internal::kPostingSize);
  }
  std::vector<uint64_t> probes;
  for (const auto& [value, docs] : model) {
    probes.push_back(value);
    probes.push_back(value + 1);
    probes.push_back(value - 1);
    probes.push_back((value & ~internal::kLowMask) | internal::kLowMask);  // after its bucket's values
    probes.push_back(value & ~internal::kLowMask);                         // before them
  }
  probes.push_back(uint64_t{0x77777} << internal::kLowBits);  // an absent bucket
  probes.push_back(~uint64_t{0});
  std::shuffle(probes.begin(), probes.end(), rng);
  size_t with_postings = 0;
  for (const uint64_t value : probes) {
    for (size_t max : {size_t{0}, size_t{1}, size_t{2}, size_t{5}, size_t{64}, SIZE_MAX}) {
      std::vector<DocId> want, got;
      size_t want_count = 7, got_count = 7;
      bool want_more = false, got_more = true;
      const int want_rc = internal::ReadValuePostings(b.get(), value, max, &want, &want_count, &want_more);
      const int got_rc = internal::ReadBucketPostings(a.get(), value, max, &got, &got_count, &got_more);
      ASSERT_EQ(got_rc, want_rc) << std::hex << value << std::dec << " max " << max;
      ASSERT_EQ(got, want) << std::hex << value << std::dec << " max " << max;
      ASSERT_EQ(got_count, want_count);
      ASSERT_EQ(got_more, want_more);
      // And both are the model's.
      auto it = model.find(value);
      const std::vector<DocId> all = it == model.end() ? std::vector<DocId>{} : it->second;
      ASSERT_EQ(got, std::vector<DocId>(all.begin(), all.begin() + std::min(max, all.size())));
      ASSERT_EQ(got_more, all.size() > max);
      with_postings += !got.empty();
    }
  }
  EXPECT_GT(with_postings, model.size());
}

// The most recent URL of each result: the latest version that still shows the document, the
// smallest url id on equal dates; a URL that moved on to other content no longer counts.
TEST_P(QueryTest, ResultsNameTheMostRecentLiveUrlOfTheirDocument) {
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
TEST_P(QueryTest, WarmMapMapsTheWholeFileAndFollowsAGrowth) {
  StoreOptions options;
  options.initial_map_size = uint64_t{1} << 20;  // grows (doubling, remapping) under the pages below
  auto store = OpenStore(options);
  ASSERT_NE(store, nullptr);
  const MappedFile* mapped = store->mapped_file();
  if (mapped == nullptr) GTEST_SKIP() << "the engine keeps no mapped file";
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
  StatusOr<uint64_t> none = mapped->WarmMap([&] {
    ++calls;
    return false;
  });
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, 0u);
  EXPECT_EQ(calls, 1);

  // A store larger than the bytes allowed is not warmed at all.
  StatusOr<StoreStats> stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  const uint64_t mapped_before = MappedBytesOf(file);
  StatusOr<uint64_t> refused = mapped->WarmMap(nullptr, stats->file_bytes - 4096);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition)
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("MiB allowed"), std::string::npos)
      << refused.status().ToString();
  EXPECT_LE(MappedBytesOf(file), mapped_before);

  StatusOr<uint64_t> warmed = mapped->WarmMap(nullptr, stats->file_bytes);
  ASSERT_TRUE(warmed.ok()) << warmed.status().ToString();
  stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(*warmed, stats->file_bytes);
  EXPECT_GE(MappedBytesOf(file), stats->file_bytes);

  const uint64_t map_before = stats->map_size;
  fill(200, 1200);
  stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  ASSERT_GT(stats->map_size, map_before);  // the map grew: LMDB mapped it anew
  warmed = mapped->WarmMap();
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
