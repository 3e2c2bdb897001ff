// Store behaviour on real LMDB files in temporary directories, with synthetic sketches.
#include "store/store.h"

#include <gtest/gtest.h>
#include <lmdb.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "store/internal/codec.h"
#include "store/mapped_file.h"
#include "tests/store/store_fixture.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::store {
namespace {

using testing::Range;
using testing::SyntheticSketch;
using testing::Variant;

using testing::kPolynomial;

// On every engine (tests/store/store_fixture.h).
class StoreTest : public testing::StoreConformance {};
SHINGLED_STORE_ENGINES(StoreTest);

// What only LMDB has: a directory, its files, a file system.
class LmdbStoreTest : public testing::StoreFixture {};

TEST_F(LmdbStoreTest, CreatesThenRefusesOtherParamsNamingTheField) {
  { ASSERT_NE(OpenStore(), nullptr); }
  dedup::SketchParams other = params_;
  other.group_size = 13;
  StatusOr<std::unique_ptr<Store>> s = Store::Open(dir_.Sub("db"), {}, other, kPolynomial);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("group_size = 14, not 13"), std::string::npos) << s.status().message();
  s = Store::Open(dir_.Sub("db"), {}, params_, kPolynomial + 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("rabin_polynomial"), std::string::npos);
  other = params_;
  other.seed = 1;
  s = Store::Open(dir_.Sub("db"), {}, other, kPolynomial);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("seed"), std::string::npos);
  // The same params reopen fine.
  EXPECT_NE(OpenStore(), nullptr);
}

// StoreOptions::create = false (the commands that only read or check a store): a directory
// without data.mdb, there or not, is NotFound and is left as it was; a store opens as usual.
TEST_F(LmdbStoreTest, WithoutCreateADirectoryWithoutAStoreIsNotFound) {
  StoreOptions o;
  o.create = false;
  for (const std::string& dir : {dir_.Sub("absent"), dir_.path()}) {
    StatusOr<std::unique_ptr<Store>> s = Store::Open(dir, o, params_, kPolynomial);
    ASSERT_EQ(s.status().code(), StatusCode::kNotFound) << dir;
    EXPECT_NE(s.status().message().find("no store at " + dir), std::string::npos)
        << s.status().message();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("absent")));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/data.mdb"));
  { ASSERT_NE(OpenStore(), nullptr); }
  EXPECT_TRUE(Store::Open(dir_.Sub("db"), o, params_, kPolynomial).ok());
}

// The params are baked into the stored data: reopening with others is refused, naming the field.
TEST_P(StoreTest, ReopeningWithOtherParamsIsRefusedNamingTheField) {
  { ASSERT_NE(OpenStore(), nullptr); }
  const dedup::SketchParams made = params_;
  params_.group_size = 13;
  StatusOr<std::unique_ptr<Store>> s = TryOpenStore({}, "db");
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("group_size"), std::string::npos) << s.status().ToString();
  params_ = made;
  EXPECT_NE(OpenStore(), nullptr);
}

TEST_P(StoreTest, RejectsBadOptions) {
  StoreOptions o;
  o.similar_threshold = 0;
  EXPECT_EQ(TryOpenStore(o, "db").status().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, VerdictsNewUnchangedDuplicateNearDuplicate) {
  auto store = OpenStore();
  SweepInfo sweep = *store->OpenSweep("s1", 100);
  PageResult a = ApplyOne(*store, Page("http://a/", sweep.id, 100, Range(0, 500)));
  EXPECT_EQ(a.verdict, Verdict::kNew);
  EXPECT_EQ(a.doc, 1u);
  EXPECT_EQ(a.cluster, 1u);
  EXPECT_FALSE(a.previous_resemblance.has_value());

  // The same URL and content, later: unchanged, a version not a document.
  SweepInfo sweep2 = *store->OpenSweep("s2", 200);
  PageResult a2 = ApplyOne(*store, Page("http://a/", sweep2.id, 200, Range(0, 500)));
  EXPECT_EQ(a2.verdict, Verdict::kUnchanged);
  EXPECT_EQ(a2.doc, a.doc);
  EXPECT_EQ(a2.previous_resemblance, 1.0);

  EXPECT_EQ(*store->FindIdentical(Page("http://x/", sweep.id, 100, Range(0, 500)).sketch.identical),
            a.doc);
  EXPECT_EQ(*store->FindIdentical(dedup::Fingerprint128{1, 2}), 0u);

  // Identical bytes elsewhere: duplicate of the same document.
  PageResult b = ApplyOne(*store, Page("http://b/", sweep2.id, 200, Range(0, 500)));
  EXPECT_EQ(b.verdict, Verdict::kDuplicate);
  EXPECT_EQ(b.doc, a.doc);
  ASSERT_FALSE(b.matches.empty());
  EXPECT_EQ(b.matches[0].relation, Relation::kIdentical);

  // Same text, other bytes: lexically equivalent, a new document in the same cluster.
  PageResult c = ApplyOne(*store, Page("http://c/", sweep2.id, 200, Range(0, 500), /*variant=*/1));
  EXPECT_EQ(c.verdict, Verdict::kDuplicate);
  EXPECT_NE(c.doc, a.doc);
  EXPECT_EQ(c.cluster, a.cluster);
  EXPECT_EQ(c.matches[0].relation, Relation::kLexical);
  EXPECT_EQ(store->Document(c.doc)->representative, a.doc);

  // 99% of the shingles in common: resemblance ~0.98, verified (the relation that
  // clusters by default) by the verification sample.
  PageResult d = ApplyOne(*store, Page("http://d/", sweep2.id, 200, Variant(0, 500, 495, 1u << 20)));
  EXPECT_EQ(d.verdict, Verdict::kNearDuplicate);
  EXPECT_EQ(d.cluster, a.cluster);  // joining keeps the cluster's id
  ASSERT_FALSE(d.matches.empty());
  EXPECT_EQ(d.matches[0].relation, Relation::kVerified);
  EXPECT_EQ(d.matches[0].resemblance_from, ResemblanceSource::kVerifySample);
  EXPECT_GT(d.matches[0].resemblance, 0.93);  // true 0.98; k = 256 of 505: stderr ~0.006

  // Unrelated: new, its own cluster.
  PageResult e = ApplyOne(*store, Page("http://e/", sweep2.id, 200, Range(1u << 30, 500)));
  EXPECT_EQ(e.verdict, Verdict::kNew);
  EXPECT_EQ(e.cluster, e.doc);
  EXPECT_TRUE(e.matches.empty());

  // The URL changes to another content: resemblance to its previous version.
  SweepInfo sweep3 = *store->OpenSweep("s3", 300);
  PageResult a3 = ApplyOne(*store, Page("http://a/", sweep3.id, 300, Variant(0, 500, 300, 1u << 22)));
  EXPECT_EQ(a3.previous_doc, a.doc);
  ASSERT_TRUE(a3.previous_resemblance.has_value());
  EXPECT_NEAR(*a3.previous_resemblance, 300.0 / 700.0, 0.2);  // 84 minhashes: stderr ~0.054
  ExpectConsistent(*store);
}

TEST_P(StoreTest, SimilarLinksFromSuperShinglesAndSamples) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  PageResult a = ApplyOne(*store, Page("http://a/", s, 1, Range(0, 1000)));
  // Resemblance 700/1300 = 0.54: above 0.5, not fungible at 6 x 14, r = 2 (P ~ 1e-6).
  PageResult b = ApplyOne(*store, Page("http://b/", s, 1, Variant(0, 1000, 700, 1u << 24)));
  EXPECT_EQ(b.verdict, Verdict::kNew);  // similar does not form clusters by default
  EXPECT_NE(b.cluster, a.cluster);
  bool linked = false;
  for (const Match& m : b.matches) linked |= m.doc == a.doc && m.relation == Relation::kSimilar;
  // The estimate has stderr ~0.054 at 0.54: allow for it not to reach 0.5 (seeded, stable).
  EXPECT_TRUE(linked || b.matches.empty());
  ExpectConsistent(*store);

  // With similar in the cluster relations, the same pair clusters.
  store.reset();
  StoreOptions o;
  o.cluster_relations = kClusterExact | kClusterFungible | kClusterSimilar;
  o.similar_threshold = 0.3;
  auto store2 = OpenStore(o, "db2");
  ASSERT_NE(store2, nullptr);
  SweepId s2 = store2->OpenSweep("s", 1)->id;
  PageResult a2 = ApplyOne(*store2, Page("http://a/", s2, 1, Range(0, 1000)));
  PageResult b2 = ApplyOne(*store2, Page("http://b/", s2, 1, Variant(0, 1000, 700, 1u << 24)));
  EXPECT_EQ(b2.verdict, Verdict::kNearDuplicate);
  EXPECT_EQ(b2.cluster, a2.cluster);
  ExpectConsistent(*store2);
}

// The writer files a page's postings after reading those of its values (BatchWriter::FindCandidates);
// a value that occurs twice in the page's own lists must not find the page itself.
TEST_P(StoreTest, RepeatedValuesInASketchDoNotFindThePageItself) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  PageInput a = Page("http://a/", s, 1, Range(0, 1000));
  dedup::Sketch& sk = a.sketch;
  sk.features[1] = sk.features[0];
  ASSERT_GE(sk.supershingles.size(), 2u);
  sk.supershingles.insert(sk.supershingles.begin() + 1, sk.supershingles[0]);
  std::vector<uint64_t>& values = sk.sample.values;
  auto indexed = std::find_if(values.begin(), values.end(), [&](uint64_t v) {
    return internal::IndexedSampleValue(v, sk.sample.log2_modulus);
  });
  ASSERT_NE(indexed, values.end());
  values.insert(indexed + 1, *indexed);
  PageResult ra = ApplyOne(*store, a);
  EXPECT_EQ(ra.verdict, Verdict::kNew);
  EXPECT_TRUE(ra.matches.empty());
  EXPECT_FALSE(ra.candidates_truncated);

  // The same sketch under other fingerprints: found through every index, itself excluded.
  PageInput b = a;
  b.url = "http://b/";
  b.sketch.identical.low ^= 1;
  b.sketch.lexical.low ^= 1;
  b.sketch.shingle.low ^= 1;
  PageResult rb = ApplyOne(*store, b);
  EXPECT_EQ(rb.verdict, Verdict::kNearDuplicate);
  ASSERT_EQ(rb.matches.size(), 1u);
  EXPECT_EQ(rb.matches[0].doc, ra.doc);
  EXPECT_EQ(rb.matches[0].relation, Relation::kVerified);  // the default clustering
  StatusOr<std::vector<SimilarDoc>> similar = store->SimilarToDocument(ra.doc, QueryOptions{});
  ASSERT_TRUE(similar.ok()) << similar.status().ToString();
  ASSERT_EQ(similar->size(), 1u);
  EXPECT_EQ((*similar)[0].doc, rb.doc);
  ExpectConsistent(*store);
}

TEST_P(StoreTest, EmptyPagesAreNotLexicalDuplicatesOfEachOther) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  PageResult a = ApplyOne(*store, Page("http://a/", s, 1, {}, 1));
  PageResult b = ApplyOne(*store, Page("http://b/", s, 1, {}, 2));
  EXPECT_EQ(a.verdict, Verdict::kNew);
  EXPECT_EQ(b.verdict, Verdict::kNew);
  EXPECT_NE(a.doc, b.doc);
  EXPECT_NE(a.cluster, b.cluster);
  // Identical empty bytes are still identical.
  PageResult c = ApplyOne(*store, Page("http://c/", s, 1, {}, 1));
  EXPECT_EQ(c.verdict, Verdict::kDuplicate);
  EXPECT_EQ(c.doc, a.doc);
  ExpectConsistent(*store);
}

TEST_P(StoreTest, ApplyIsIdempotentForSameUrlSweepContent) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  std::vector<PageInput> batch = {Page("http://a/", s, 1, Range(0, 300)), Page("http://b/", s, 1, Range(5000, 300)),
                                  Page("http://c/", s, 1, Variant(0, 300, 297, 9000))};
  StatusOr<std::vector<PageResult>> first = store->Apply(batch);
  ASSERT_TRUE(first.ok());
  StatusOr<StoreStats> before = store->Stats();
  StatusOr<std::vector<PageResult>> again = store->Apply(batch);
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_TRUE((*again)[i].replayed);
    EXPECT_EQ((*again)[i].verdict, (*first)[i].verdict);
    EXPECT_EQ((*again)[i].doc, (*first)[i].doc);
    EXPECT_EQ((*again)[i].cluster, (*first)[i].cluster);
  }
  StatusOr<StoreStats> after = store->Stats();
  EXPECT_EQ(after->versions, before->versions);
  EXPECT_EQ(after->documents, before->documents);
  EXPECT_EQ(store->History("http://a/")->size(), 1u);
  EXPECT_EQ(store->FindSweep("s")->pages, 3u);
  ExpectConsistent(*store);
}

TEST_P(StoreTest, PageErrorsDoNotStopTheBatch) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  std::vector<PageInput> batch = {Page("http://a/", s, 1, Range(0, 50)), Page("http://b/", 99, 1, Range(0, 50)),
                                  Page("", s, 1, Range(0, 50))};
  batch.push_back(Page("http://d/", s, 1, Range(100, 50)));
  batch.back().sketch.minhashes.pop_back();  // not made with this store's params
  StatusOr<std::vector<PageResult>> r = store->Apply(batch);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)[0].status.ok());
  EXPECT_EQ((*r)[1].status.code(), StatusCode::kNotFound);
  EXPECT_EQ((*r)[2].status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*r)[3].status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Stats()->urls, 1u);
  ExpectConsistent(*store);
}

// A sweep name is shown in JSON answers, logs and command lines: UTF-8 text, no control characters.
TEST_P(StoreTest, SweepNamesAreUtf8TextWithoutControlCharacters) {
  auto store = OpenStore();
  EXPECT_TRUE(store->OpenSweep("2024-05 crawl \xc3\xa9t\xc3\xa9 / seeds", 1).ok());
  for (std::string_view bad : {std::string_view("bad\xffname"), std::string_view("cut \xc3"),
                               std::string_view("tab\tname"), std::string_view("nul\0name", 8),
                               std::string_view("c1 \xc2\x85 control")}) {
    StatusOr<SweepInfo> r = store->OpenSweep(bad, 1);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(store->OpenSweep("bad\xffname", 1).status().message().find("not UTF-8"),
            std::string::npos);
  EXPECT_NE(store->OpenSweep("tab\tname", 1).status().message().find("control character"),
            std::string::npos);
  EXPECT_EQ(store->Sweeps()->size(), 1u);
}

TEST_P(StoreTest, CloseSweepWithAFilterMarksGoneOnlyWhatItAccepts) {
  auto store = OpenStore();
  SweepId s1 = store->OpenSweep("s1", 100, {"http://site/", "http://other/"})->id;
  ASSERT_TRUE(store->Apply(std::vector<PageInput>{Page("http://site/a", s1, 100, Range(0, 200)),
                                                  Page("http://site/b", s1, 100, Range(1000, 200)),
                                                  Page("http://other/c", s1, 100, Range(2000, 200))})
                  .ok());
  ASSERT_TRUE(store->CloseSweep(s1, 150).ok());
  SweepId s2 = store->OpenSweep("s2", 200, {"http://site/", "http://other/"})->id;
  ASSERT_TRUE(store->Apply(std::vector<PageInput>{Page("http://site/a", s2, 200, Range(0, 200))}).ok());
  std::vector<std::string> asked;
  Store::CloseSweepOptions close;
  close.may_be_gone = [&](std::string_view url) {
    asked.emplace_back(url);
    return url.starts_with("http://site/");
  };
  SweepInfo closed = store->CloseSweep(s2, 299, close)->sweep;
  EXPECT_EQ(closed.gone, 1u);  // site/b; the filter keeps other/c
  // Asked about the URLs in scope not seen in s2 (in the order of each engine's walk: URL bytes
  // on LMDB, URL ids on Redis Cluster; store.h promises none).
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(asked, (std::vector<std::string>{"http://other/c", "http://site/b"}));
  EXPECT_EQ(store->History("http://site/b")->back().verdict, Verdict::kGone);
  EXPECT_EQ(store->History("http://other/c")->size(), 1u);
  EXPECT_EQ(store->History("http://site/a")->size(), 2u);
  ExpectConsistent(*store);
}

TEST_P(StoreTest, SweepsCloseMarksGoneAndCompareCountsChanges) {
  auto store = OpenStore();
  const std::vector<std::string> scope = {"http://404/",  "http://born/",     "http://change/",
                                          "http://dies/", "http://new-home/", "http://old-home/",
                                          "http://same/"};
  SweepId s1 = store->OpenSweep("s1", 100, scope)->id;
  EXPECT_EQ(store->OpenSweep("s1", 150)->id, s1);  // reopening an open sweep continues it
  std::vector<PageInput> first = {
      Page("http://same/", s1, 100, Range(0, 200)),       Page("http://change/", s1, 100, Range(1000, 200)),
      Page("http://old-home/", s1, 100, Range(2000, 200)), Page("http://dies/", s1, 100, Range(3000, 200)),
      Page("http://404/", s1, 100, Range(4000, 200))};
  ASSERT_TRUE(store->Apply(first).ok());
  EXPECT_FALSE(store->CloseSweep(s1, 199)->sweep.open);
  EXPECT_EQ(store->OpenSweep("s1", 300).status().code(), StatusCode::kAlreadyExists);

  SweepId s2 = store->OpenSweep("s2", 200, scope)->id;
  PageInput dead = Page("http://404/", s2, 200, {});
  dead.http_status = 404;
  std::vector<PageInput> second = {
      Page("http://same/", s2, 200, Range(0, 200)),
      Page("http://change/", s2, 200, Range(50000, 200)),
      Page("http://new-home/", s2, 200, Range(2000, 200)),  // moved
      Page("http://born/", s2, 200, Range(6000, 200)), dead};
  StatusOr<std::vector<PageResult>> r = store->Apply(second);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[4].verdict, Verdict::kGone);
  SweepInfo closed = store->CloseSweep(s2, 299)->sweep;
  EXPECT_EQ(closed.gone, 3u);  // the 404, and http://dies/ and http://old-home/ not seen in s2
  EXPECT_EQ(closed.pages, 7u);

  std::vector<UrlVersion> h = *store->History("http://dies/");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1].verdict, Verdict::kGone);
  EXPECT_EQ(h[1].doc, 0u);
  EXPECT_EQ(h[1].http_status, 0);
  EXPECT_EQ(h[1].date, 299);

  ChangeCounts c = store->ChangesBetween(s1, s2)->total;
  EXPECT_EQ(c.unchanged, 1u);
  EXPECT_EQ(c.changed, 1u);
  EXPECT_EQ(c.moved, 1u);
  EXPECT_EQ(c.born, 1u);
  EXPECT_EQ(c.moved_in, 1u);  // http://new-home/
  EXPECT_EQ(c.died, 2u);  // http://dies/ and http://404/
  EXPECT_EQ(store->Sweeps()->size(), 2u);

  // Lost and found: the old home's content lives on at the new home.
  LostAndFound lf = *store->Lost("http://old-home/");
  EXPECT_EQ(lf.status, LostStatus::kMoved);
  ASSERT_TRUE(lf.best.has_value());
  EXPECT_EQ(lf.best->url, "http://new-home/");
  EXPECT_EQ(lf.best->last_seen, 200);
  EXPECT_EQ(lf.best->resemblance, 1.0);
  EXPECT_EQ(store->Lost("http://nowhere/").status().code(), StatusCode::kNotFound);
  ExpectConsistent(*store);
}

TEST_P(StoreTest, ClusterMembersWithUrlsAndSimilarQueries) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  std::vector<PageInput> batch = {Page("http://a/", s, 10, Range(0, 400)),
                                  // 395 of 400 shared: fungible (P ~ 0.99), not shingle equivalent
                                  Page("http://b/", s, 20, Variant(0, 400, 395, 70000)),
                                  Page("http://c/", s, 30, Range(0, 400)),
                                  Page("http://big/", s, 40, [] {
                                    auto v = Range(0, 400);
                                    auto more = Range(100000, 1600);
                                    v.insert(v.end(), more.begin(), more.end());
                                    return v;
                                  }())};
  StatusOr<std::vector<PageResult>> r = store->Apply(batch);
  ASSERT_TRUE(r.ok());
  ClusterInfo cl = *store->Cluster((*r)[1].doc);
  EXPECT_EQ(cl.id, (*r)[0].doc);
  ASSERT_EQ(cl.members.size(), 2u);
  EXPECT_EQ(cl.members[0].urls, (std::vector<std::string>{"http://a/", "http://c/"}));
  EXPECT_EQ(cl.members[1].urls, (std::vector<std::string>{"http://b/"}));

  QueryOptions q;
  q.threshold = 0.5;
  std::vector<SimilarDoc> sim = *store->SimilarToUrl("http://a/", q);
  ASSERT_FALSE(sim.empty());
  EXPECT_EQ(sim[0].doc, (*r)[1].doc);
  EXPECT_GT(sim[0].resemblance, 0.8);  // true 0.975; 84 minhashes: stderr ~0.017
  // The big page contains a: containment of a in big ~1, resemblance ~0.2.
  bool found_big = false;
  for (const SimilarDoc& d : sim) {
    if (d.doc == (*r)[3].doc) {
      found_big = true;
      EXPECT_GT(d.containment_of_query, 0.7);  // MOD sample at the big page's modulus: few values
      EXPECT_LT(d.resemblance, 0.45);
      EXPECT_EQ(d.url, "http://big/");
    }
  }
  EXPECT_TRUE(found_big);
  q.limit = 1;
  EXPECT_EQ(store->SimilarToDocument((*r)[0].doc, q)->size(), 1u);
  EXPECT_EQ(store->SimilarToSketch(batch[1].sketch, q)->at(0).doc, (*r)[1].doc);
  EXPECT_EQ(store->SimilarToDocument(999, q).status().code(), StatusCode::kNotFound);
  ExpectConsistent(*store);
}

TEST_F(LmdbStoreTest, CommonValuesAreStopListed) {
  StoreOptions o;
  o.common_value_limit = 5;
  auto store = OpenStore(o);
  SweepId s = store->OpenSweep("s", 1)->id;
  // Ten pages share 20 boilerplate shingles, small enough that all land in each MOD sample.
  std::vector<PageInput> batch;
  for (int i = 0; i < 10; ++i) {
    std::vector<uint64_t> sh = Range(0, 20);
    auto own = Range(1000 * (i + 1), 20);
    sh.insert(sh.end(), own.begin(), own.end());
    batch.push_back(Page("http://p" + std::to_string(i) + "/", s, 1, sh));
  }
  ASSERT_TRUE(store->Apply(batch).ok());
  StatusOr<StoreStats> st = store->Stats();
  uint64_t common = 0;
  for (const DatabaseStats& d : st->databases) {
    if (d.name == "common_values") common = d.entries;
  }
  // Every page's sample holds all 40 of its values (modulus 1); the 20 shared ones are in ten
  // pages, over the limit of 5, but only the indexed quarter (FORMAT.md, "Posting lists") has
  // postings to count.
  const dedup::ModSample& sample = batch[0].sketch.sample;
  ASSERT_EQ(sample.log2_modulus, 0u);
  uint64_t shared_indexed = 0;
  for (uint64_t v : sample.values) {
    bool shared = std::all_of(batch.begin(), batch.end(), [&](const PageInput& p) {
      return std::binary_search(p.sketch.sample.values.begin(), p.sketch.sample.values.end(), v);
    });
    if (shared && internal::IndexedSampleValue(v, sample.log2_modulus)) ++shared_indexed;
  }
  EXPECT_GT(shared_indexed, 0u);
  EXPECT_EQ(common, shared_indexed);
  ExpectConsistent(*store);
}

// The stop list keeps exact counts when the limit changes from one run to the next: a value
// over a lowered limit but never listed is counted in full; a value listed under a lower limit
// keeps its count up to date under a higher one.
TEST_F(LmdbStoreTest, CommonValueCountsStayExactWhenTheLimitChanges) {
  auto page = [&](int i, SweepId s) {
    std::vector<uint64_t> sh = Range(0, 20);
    auto own = Range(1000 * (i + 1), 20);
    sh.insert(sh.end(), own.begin(), own.end());
    return Page("http://p" + std::to_string(i) + "/", s, 1, sh);
  };
  auto common_entries = [](const Store& store) {
    uint64_t n = 0;
    StatusOr<StoreStats> st = store.Stats();
    EXPECT_TRUE(st.ok());
    if (!st.ok()) return n;
    for (const DatabaseStats& d : st->databases) {
      if (d.name == "common_values") n = d.entries;
    }
    return n;
  };
  SweepId s = 0;
  {
    auto store = OpenStore();  // limit 1000: nothing is common
    s = store->OpenSweep("s", 1)->id;
    std::vector<PageInput> batch;
    for (int i = 0; i < 10; ++i) batch.push_back(page(i, s));
    ASSERT_TRUE(store->Apply(batch).ok());
    EXPECT_EQ(common_entries(*store), 0u);
  }
  uint64_t listed = 0;
  {
    StoreOptions o;
    o.common_value_limit = 5;  // ten postings each, never listed: counted when next touched
    auto store = OpenStore(o);
    ApplyOne(*store, page(10, s));
    listed = common_entries(*store);
    EXPECT_GT(listed, 0u);
    ExpectConsistent(*store);
  }
  {
    StoreOptions o;
    o.common_value_limit = 100;  // listed under the lower limit: counts go on
    auto store = OpenStore(o);
    ApplyOne(*store, page(11, s));
    EXPECT_EQ(common_entries(*store), listed);
    ExpectConsistent(*store);
  }
}

// Queries skip sample values with more postings than the limit, whether they are read in full
// or found on the stop list (queries consult it only for values with over 64 postings).
TEST_P(StoreTest, QueriesSkipCommonValuesAboveTheLimit) {
  auto shingles = [](int i) {
    std::vector<uint64_t> sh = Range(0, 20);  // boilerplate shared by every page
    auto own = Range(1000 * (i + 1), 20);
    sh.insert(sh.end(), own.begin(), own.end());
    return sh;
  };
  SweepId s = 0;
  {
    StoreOptions o;
    o.common_value_limit = 65;
    auto store = OpenStore(o);
    s = store->OpenSweep("s", 1)->id;
    std::vector<PageInput> batch;
    for (int i = 0; i < 70; ++i) batch.push_back(Page("http://p" + std::to_string(i) + "/", s, 1, shingles(i)));
    ASSERT_TRUE(store->Apply(batch).ok());
    ExpectConsistent(*store);
  }
  // A new page with the same boilerplate resembles each stored page at 20/60.
  dedup::Sketch query = SyntheticSketch(params_, shingles(1000));
  QueryOptions q;
  q.threshold = 0.1;
  q.limit = 1000;
  size_t above = 0, below = 0;
  for (uint64_t limit : {uint64_t{65}, uint64_t{100}, uint64_t{40}}) {
    StoreOptions o;
    o.common_value_limit = limit;
    auto store = OpenStore(o);
    StatusOr<std::vector<SimilarDoc>> r = store->SimilarToSketch(query, q);
    ASSERT_TRUE(r.ok());
    if (limit == 100) {
      // 70 postings are within the limit: the boilerplate finds every page.
      EXPECT_EQ(r->size(), 70u);
      below = r->size();
    } else {
      // Over the limit (listed at 65; never listed at 40): only super shingles and features
      // can find pages, which share no window of the page's own values.
      if (limit == 65) above = r->size();
      EXPECT_EQ(r->size(), above) << "limit " << limit;
    }
  }
  EXPECT_LT(above, below);
}

TEST_P(StoreTest, MapGrowsWhenFull) {
  StoreOptions o;
  o.initial_map_size = 256 << 10;  // 256 KiB: full after a few dozen pages
  auto store = OpenStore(o);
  // A map that grows is the mapped file's.
  if (store->mapped_file() == nullptr) GTEST_SKIP() << "the engine keeps no mapped file";
  SweepId s = store->OpenSweep("s", 1)->id;
  for (int b = 0; b < 20; ++b) {
    std::vector<PageInput> batch;
    for (int i = 0; i < 50; ++i) {
      batch.push_back(Page("http://p/" + std::to_string(b * 50 + i), s, 1, Range((b * 50 + i) * 10000ull, 300)));
    }
    StatusOr<std::vector<PageResult>> r = store->Apply(batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  StatusOr<StoreStats> st = store->Stats();
  EXPECT_EQ(st->documents, 1000u);
  EXPECT_GT(st->map_size, uint64_t{256} << 10);
  ExpectConsistent(*store);
}

TEST_P(StoreTest, FullMapWithoutGrowthFailsTheBatchAndKeepsServing) {
  // The fallback fault of the disk-full story: a fixed small map (MDB_MAP_FULL).
  StoreOptions o;
  o.initial_map_size = 256 << 10;
  o.grow_map = false;
  auto store = OpenStore(o);
  if (store->mapped_file() == nullptr) GTEST_SKIP() << "the engine keeps no mapped file";
  SweepId s = store->OpenSweep("s", 1)->id;
  Status failure;
  int applied = 0;
  for (int b = 0; b < 100 && failure.ok(); ++b) {
    std::vector<PageInput> batch;
    for (int i = 0; i < 10; ++i) batch.push_back(Page("http://p/" + std::to_string(b * 10 + i), s, 1, Range((b * 10 + i) * 10000ull, 300)));
    StatusOr<std::vector<PageResult>> r = store->Apply(batch);
    if (r.ok()) applied += 10;
    else failure = r.status();
  }
  ASSERT_FALSE(failure.ok());
  EXPECT_EQ(failure.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(failure.message().find("may not grow"), std::string::npos) << failure.message();
  EXPECT_EQ(OutOfSpaceReason(failure), "map_full") << failure.message();
  EXPECT_TRUE(store->health().ok());  // nothing was committed wrongly: not a failed commit
  EXPECT_EQ(store->Stats()->documents, static_cast<uint64_t>(applied));
  EXPECT_TRUE(store->History("http://p/0").ok());
  ExpectConsistent(*store);
}

// A commit that fails for lack of space fails that batch only; the next one, with
// room, commits (the disk here has room: the failure is injected).
// The map full at max_map_size names the key and its value; raising the limit
// (SIGHUP's MappedFile::SetMaxMapSize) lets the same Store write again.
TEST_P(StoreTest, FullMapAtItsLimitWritesAgainWhenTheLimitIsRaised) {
  StoreOptions o;
  o.initial_map_size = 256 << 10;
  o.max_map_size = 512 << 10;
  auto store = OpenStore(o);
  MappedFile* file = store->mapped_file();
  if (file == nullptr) GTEST_SKIP() << "the engine keeps no mapped file";
  SweepId s = store->OpenSweep("s", 1)->id;
  Status failure;
  std::vector<PageInput> failed;
  int applied = 0;
  for (int b = 0; b < 200 && failure.ok(); ++b) {
    std::vector<PageInput> batch;
    for (int i = 0; i < 10; ++i)
      batch.push_back(Page("http://p/" + std::to_string(b * 10 + i), s, 1,
                           Range((b * 10 + i) * 10000ull, 300)));
    StatusOr<std::vector<PageResult>> r = store->Apply(batch);
    if (r.ok()) {
      applied += 10;
    } else {
      failure = r.status();
      failed = batch;
    }
  }
  ASSERT_FALSE(failure.ok()) << "the map never filled";
  EXPECT_EQ(OutOfSpaceReason(failure), "map_full") << failure.message();
  EXPECT_NE(failure.message().find("store.max_map_size = 524288"), std::string::npos)
      << failure.message();
  EXPECT_TRUE(store->health().ok());
  const Status room = store->WriteRoom();
  EXPECT_EQ(OutOfSpaceReason(room), "map_full") << room.ToString();
  EXPECT_EQ(file->SetMaxMapSize(128 << 10).code(), StatusCode::kInvalidArgument);  // < initial
  ASSERT_TRUE(file->SetMaxMapSize(4 << 20).ok());
  EXPECT_EQ(file->max_map_size(), uint64_t{4} << 20);
  EXPECT_TRUE(store->WriteRoom().ok());
  StatusOr<std::vector<PageResult>> r = store->Apply(failed);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(store->Stats()->documents, static_cast<uint64_t>(applied + 10));
  EXPECT_GT(store->Stats()->map_size, uint64_t{512} << 10);
  ExpectConsistent(*store);
}

TEST_P(StoreTest, CommitFailedForLackOfSpaceFailsThatBatchOnly) {
  auto store = OpenStore();
  MappedFile* file = store->mapped_file();
  if (file == nullptr) GTEST_SKIP() << "the engine keeps no mapped file";
  SweepId s = store->OpenSweep("s", 1)->id;
  ApplyOne(*store, Page("http://a/", s, 1, Range(0, 100)));
  file->FailNextCommitForTesting(ENOSPC);
  PageInput b = Page("http://b/", s, 1, Range(500, 100));
  StatusOr<std::vector<PageResult>> r = store->Apply(std::span(&b, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsOutOfSpace(r.status())) << r.status().ToString();
  EXPECT_EQ(OutOfSpaceReason(r.status()), "disk_full");
  EXPECT_NE(r.status().message().find(dir_.Sub("db")), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("bytes free"), std::string::npos) << r.status().ToString();
  EXPECT_TRUE(store->health().ok());
  EXPECT_TRUE(store->WriteRoom().ok());
  EXPECT_EQ(store->History("http://b/").status().code(), StatusCode::kNotFound);
  ExpectConsistent(*store);
  r = store->Apply(std::span(&b, 1));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].verdict, Verdict::kNew);
  EXPECT_TRUE(store->History("http://a/").ok());
  EXPECT_TRUE(store->History("http://b/").ok());
  // The writer's in-memory state follows the disk: the key filter (which kept the failed batch's
  // keys: extra keys only cost a read) never says "absent" for a stored key, and queries see
  // the committed page through the write buffer.
  EXPECT_TRUE(file->VerifyKeyFilterForTesting().ok());
  StatusOr<std::vector<SimilarDoc>> similar = store->SimilarToSketch(b.sketch, QueryOptions{});
  ASSERT_TRUE(similar.ok()) << similar.status().ToString();
  ASSERT_FALSE(similar->empty());
  EXPECT_EQ(similar->front().doc, (*r)[0].doc);
  ExpectConsistent(*store);
}

TEST_P(StoreTest, FailedCommitStopsWritesButNotReads) {
  auto store = OpenStore();
  if (store->mapped_file() == nullptr) GTEST_SKIP() << "the engine keeps no mapped file";
  SweepId s = store->OpenSweep("s", 1)->id;
  ApplyOne(*store, Page("http://a/", s, 1, Range(0, 100)));
  store->mapped_file()->FailNextCommitForTesting(EIO);  // an I/O error with room on the disk
  PageInput b = Page("http://b/", s, 1, Range(500, 100));
  StatusOr<std::vector<PageResult>> r = store->Apply(std::span(&b, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(IsOutOfSpace(r.status())) << r.status().ToString();
  EXPECT_FALSE(store->health().ok());
  r = store->Apply(std::span(&b, 1));
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->OpenSweep("t", 2).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store->History("http://a/").ok());
  EXPECT_EQ(store->History("http://b/").status().code(), StatusCode::kNotFound);
  ExpectConsistent(*store);
  store.reset();
  store = OpenStore();  // reopening clears the refusal
  EXPECT_TRUE(store->health().ok());
  EXPECT_TRUE(store->Apply(std::span(&b, 1)).ok());
  ExpectConsistent(*store);
}

// A 1 MiB tmpfs mounted at `path` while it lives: a real full disk. Needs mount(2) (root, or
// CAP_SYS_ADMIN).
class SmallTmpfs {
 public:
  explicit SmallTmpfs(std::string path) : path_(std::move(path)) {
    std::filesystem::create_directories(path_);
    mounted_ = mount("tmpfs", path_.c_str(), "tmpfs", 0, "size=1m") == 0;
    if (!mounted_) error_ = strerror(errno);
  }
  // Grows it to `size` ("8m"): space returns.
  bool Grow(const std::string& size) {
    const std::string options = "size=" + size;
    return mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT, options.c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  bool mounted_ = false;
  std::string error_;
};

// A real full disk: a 1 MiB tmpfs. Needs mount(2) (root, or CAP_SYS_ADMIN); skipped otherwise,
// and the FullMapWithoutGrowth and FailedCommit tests cover the same paths.
TEST_F(LmdbStoreTest, FullDiskOnTmpfsFailsTheBatchAndKeepsServing) {
  const std::string mnt = dir_.Sub("tmpfs");
  SmallTmpfs tmpfs(mnt);
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a tmpfs: " << tmpfs.error();
  StoreOptions o;
  o.initial_map_size = 64 << 20;  // the map is larger than the disk: the disk fills first
  {
    auto opened = Store::Open(mnt + "/db", o, params_, kPolynomial);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    auto store = std::move(opened).value();
    SweepId s = store->OpenSweep("s", 1)->id;
    Status failure;
    int applied = 0;
    for (int b = 0; b < 200 && failure.ok(); ++b) {
      std::vector<PageInput> batch;
      for (int i = 0; i < 10; ++i) batch.push_back(Page("http://p/" + std::to_string(b * 10 + i), s, 1, Range((b * 10 + i) * 10000ull, 300)));
      StatusOr<std::vector<PageResult>> r = store->Apply(batch);
      if (r.ok()) applied += 10;
      else failure = r.status();
    }
    ASSERT_FALSE(failure.ok()) << "the disk never filled";
    EXPECT_EQ(failure.code(), StatusCode::kResourceExhausted) << failure.ToString();
    EXPECT_EQ(OutOfSpaceReason(failure), "disk_full") << failure.message();
    EXPECT_NE(failure.message().find(mnt + "/db"), std::string::npos) << failure.message();
    EXPECT_TRUE(store->health().ok());  // writes resume when there is room
    const Status room = store->WriteRoom();
    EXPECT_EQ(OutOfSpaceReason(room), "disk_full") << room.ToString();
    EXPECT_EQ(store->Stats()->documents, static_cast<uint64_t>(applied));  // reads go on
    EXPECT_TRUE(store->History("http://p/0").ok());
    StatusOr<std::vector<std::string>> problems = store->Check();
    ASSERT_TRUE(problems.ok());
    EXPECT_TRUE(problems->empty());
    // Space returns: the same Store writes again, without a reopen.
    ASSERT_TRUE(tmpfs.Grow("8m"));
    EXPECT_TRUE(store->WriteRoom().ok());
    std::vector<PageInput> batch;
    for (int i = 0; i < 10; ++i)
      batch.push_back(Page("http://q/" + std::to_string(i), s, 1, Range(i * 10000ull + 7, 300)));
    StatusOr<std::vector<PageResult>> r = store->Apply(batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(store->Stats()->documents, static_cast<uint64_t>(applied + 10));
    problems = store->Check();
    ASSERT_TRUE(problems.ok());
    EXPECT_TRUE(problems->empty());
  }
  // Reopened, every acknowledged page is there and the store is consistent.
  auto store = std::move(Store::Open(mnt + "/db", o, params_, kPolynomial)).value();
  EXPECT_TRUE(store->History("http://p/0").ok());
  ExpectConsistent(*store);
}

TEST_P(StoreTest, BackupIsACompactConsistentCopy) {
  auto store = OpenStore();
  const MappedFile* file = store->mapped_file();
  if (file == nullptr) GTEST_SKIP() << "the engine keeps no mapped file";
  SweepId s = store->OpenSweep("s", 1)->id;
  std::vector<PageInput> batch;
  for (int i = 0; i < 100; ++i) batch.push_back(Page("http://p/" + std::to_string(i), s, 1, Range(i * 37ull, 200)));
  ASSERT_TRUE(store->Apply(batch).ok());
  std::string dest = dir_.Sub("backup");
  std::filesystem::create_directories(dest);
  ASSERT_TRUE(file->Backup(dest).ok());
  EXPECT_EQ(file->Backup(dest).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(file->Backup(dir_.Sub("missing")).code(), StatusCode::kInvalidArgument);
  StoreOptions o;
  o.durable = false;
  auto copy = std::move(Store::Open(dest, o, params_, kPolynomial)).value();
  EXPECT_EQ(copy->Stats()->documents, store->Stats()->documents);
  EXPECT_EQ(copy->Cluster(50)->members.size(), store->Cluster(50)->members.size());
  EXPECT_EQ(copy->History("http://p/7")->size(), 1u);
  ExpectConsistent(*copy);
}

// A backup that cannot finish (a 1 MiB tmpfs: the copy does not fit) fails naming the full
// disk and leaves nothing that would pass for a store; a partial copy left by a killed backup
// is written over. Needs mount(2), as FullDiskOnTmpfsFailsTheBatchAndKeepsServing.
TEST_F(LmdbStoreTest, BackupThatFailsLeavesNoStore) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  std::vector<PageInput> batch;
  for (int i = 0; i < 1000; ++i) {
    batch.push_back(Page("http://p/" + std::to_string(i), s, 1, Range(i * 1000ull, 200)));
  }
  ASSERT_TRUE(store->Apply(batch).ok());
  const std::string mnt = dir_.Sub("tmpfs");
  SmallTmpfs tmpfs(mnt);
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a tmpfs: " << tmpfs.error();
  const MappedFile* file = store->mapped_file();
  ASSERT_NE(file, nullptr);
  const Status failed = file->Backup(mnt);
  EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted) << failed.ToString();
  EXPECT_NE(failed.message().find("disk full"), std::string::npos) << failed.message();
  EXPECT_TRUE(std::filesystem::is_empty(mnt));
  EXPECT_EQ(store->Stats()->documents, 1000u);  // the store goes on

  const std::string dest = dir_.Sub("backup");
  std::filesystem::create_directories(dest);
  std::ofstream(dest + "/data.mdb.partial") << "left by a killed backup";
  ASSERT_TRUE(file->Backup(dest).ok());
  EXPECT_FALSE(std::filesystem::exists(dest + "/data.mdb.partial"));
  StoreOptions o;
  o.durable = false;
  auto copy = std::move(Store::Open(dest, o, params_, kPolynomial)).value();
  EXPECT_EQ(copy->Stats()->documents, 1000u);
  ExpectConsistent(*copy);
}

TEST_F(LmdbStoreTest, CheckFindsABrokenInvariant) {
  StoreOptions o;
  o.write_buffer = false;  // the postings in the B-trees, where the damage goes
  auto store = OpenStore(o);
  SweepId s = store->OpenSweep("s", 1)->id;
  ApplyOne(*store, Page("http://a/", s, 1, Range(0, 100)));
  store.reset();
  // Break the store behind its back: drop a feature posting.
  MDB_env* env;
  ASSERT_EQ(mdb_env_create(&env), 0);
  mdb_env_set_maxdbs(env, 32);
  ASSERT_EQ(mdb_env_open(env, dir_.Sub("db").c_str(), 0, 0644), 0);
  MDB_txn* txn;
  MDB_dbi dbi;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  ASSERT_EQ(mdb_dbi_open(txn, "features", MDB_DUPSORT | MDB_DUPFIXED, &dbi), 0);
  MDB_cursor* c;
  mdb_cursor_open(txn, dbi, &c);
  MDB_val k, v;
  ASSERT_EQ(mdb_cursor_get(c, &k, &v, MDB_FIRST), 0);
  ASSERT_EQ(mdb_cursor_del(c, 0), 0);
  mdb_cursor_close(c);
  ASSERT_EQ(mdb_txn_commit(txn), 0);
  mdb_env_close(env);
  store = OpenStore();
  StatusOr<std::vector<std::string>> problems = store->Check();
  ASSERT_TRUE(problems.ok());
  ASSERT_EQ(problems->size(), 1u);
  EXPECT_NE((*problems)[0].find("missing from features"), std::string::npos) << (*problems)[0];
}

}  // namespace
}  // namespace shingled::store
