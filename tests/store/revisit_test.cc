// Revisits (a version of a known document without its content) and the largest cluster kept in
// the meta record, on real LMDB files in temporary directories.
#include <gtest/gtest.h>
#include <lmdb.h>

#include <span>

#include "store/internal/codec.h"
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

class RevisitTest : public testing::StoreConformance {
 protected:
  static PageInput Revisit(std::string url, SweepId sweep, int64_t date, std::string of = "") {
    PageInput p;
    p.url = std::move(url);
    p.sweep = sweep;
    p.date = date;
    p.revisit = true;
    p.revisit_of = std::move(of);
    return p;
  }
};
SHINGLED_STORE_ENGINES(RevisitTest);

// LMDB only: edits the store's file behind its back.
class LmdbRevisitTest : public testing::StoreFixture {
 protected:
  // Writes (or deletes, when `value` is empty) a meta entry behind the store's back.
  void SetMeta(const std::string& key, const std::string& value) {
    MDB_env* env;
    ASSERT_EQ(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 32);
    ASSERT_EQ(mdb_env_open(env, dir_.Sub("db").c_str(), 0, 0644), 0);
    MDB_txn* txn;
    MDB_dbi dbi;
    ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
    ASSERT_EQ(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
    MDB_val k{key.size(), const_cast<char*>(key.data())};
    if (value.empty()) {
      ASSERT_EQ(mdb_del(txn, dbi, &k, nullptr), 0);
    } else {
      MDB_val v{value.size(), const_cast<char*>(value.data())};
      ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
    }
    ASSERT_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
  }
};

TEST_P(RevisitTest, PageThenItsRevisitAreTwoVersionsOfOneDocument) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("warc", 100)->id;
  // As one WARC file tells it: a response, then a revisit of it a day later, in one sweep.
  PageResult page = ApplyOne(*store, Page("http://a/", s, 100, Range(0, 400)));
  ASSERT_EQ(page.verdict, Verdict::kNew);
  PageResult revisit = ApplyOne(*store, Revisit("http://a/", s, 86500));
  ASSERT_TRUE(revisit.status.ok()) << revisit.status.ToString();
  EXPECT_EQ(revisit.verdict, Verdict::kUnchanged);
  EXPECT_EQ(revisit.doc, page.doc);
  EXPECT_EQ(revisit.cluster, page.cluster);
  EXPECT_EQ(revisit.previous_doc, page.doc);
  EXPECT_EQ(revisit.previous_resemblance, 1.0);
  EXPECT_FALSE(revisit.replayed);

  StatusOr<std::vector<UrlVersion>> history = store->History("http://a/");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[1].doc, page.doc);
  EXPECT_EQ((*history)[1].date, 86500);
  EXPECT_EQ((*history)[1].verdict, Verdict::kUnchanged);
  EXPECT_EQ(store->Stats()->documents, 1u);
  EXPECT_EQ(store->Document(page.doc)->last_seen, 86500);
  SweepInfo sweep = *store->FindSweep("warc");
  EXPECT_EQ(sweep.pages, 2u);
  EXPECT_EQ(sweep.new_docs, 1u);
  EXPECT_EQ(sweep.unchanged, 1u);

  // The same revisit again (the WARC posted twice): a replay, nothing written.
  PageResult again = ApplyOne(*store, Revisit("http://a/", s, 86500));
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.verdict, Verdict::kUnchanged);
  EXPECT_EQ(again.doc, page.doc);
  EXPECT_EQ(store->Stats()->versions, 2u);
  ExpectConsistent(*store);
}

TEST_P(RevisitTest, RevisitOfAnotherUrlIsADuplicateOfItsLastDocument) {
  auto store = OpenStore();
  SweepId s1 = store->OpenSweep("s1", 1)->id;
  PageResult a1 = ApplyOne(*store, Page("http://a/", s1, 1, Range(0, 400)));
  PageResult a2 = ApplyOne(*store, Page("http://a/", s1, 2, Variant(0, 400, 100, 1u << 24)));
  ASSERT_NE(a1.doc, a2.doc);
  // b's content is the same as a's at its last fetch.
  PageResult b = ApplyOne(*store, Revisit("http://b/", s1, 3, "http://a/"));
  ASSERT_TRUE(b.status.ok()) << b.status.ToString();
  EXPECT_EQ(b.verdict, Verdict::kDuplicate);
  EXPECT_EQ(b.doc, a2.doc);
  ASSERT_EQ(b.matches.size(), 1u);
  EXPECT_EQ(b.matches[0].relation, Relation::kIdentical);
  EXPECT_EQ(b.matches[0].doc, a2.doc);
  EXPECT_EQ(b.previous_doc, 0u);
  // Revisited again next sweep: now b's own last document, unchanged.
  SweepId s2 = store->OpenSweep("s2", 10)->id;
  PageResult b2 = ApplyOne(*store, Revisit("http://b/", s2, 10, "http://a/"));
  EXPECT_EQ(b2.verdict, Verdict::kUnchanged);
  EXPECT_EQ(b2.doc, a2.doc);
  EXPECT_EQ(store->Stats()->documents, 2u);
  ExpectConsistent(*store);
}

TEST_P(RevisitTest, RevisitOfAnUnknownUrlFailsThatPageOnly) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  std::vector<PageInput> batch = {Revisit("http://never/", s, 1), Page("http://a/", s, 1, Range(0, 100)),
                                  Revisit("http://c/", s, 2, "http://never-either/")};
  StatusOr<std::vector<PageResult>> r = store->Apply(batch);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].status.code(), StatusCode::kNotFound);
  EXPECT_EQ((*r)[0].status.message(),
            "revisit of http://never/: the store has no document for this URL (the content it refers "
            "to was never ingested)");
  EXPECT_TRUE((*r)[1].status.ok());
  EXPECT_EQ((*r)[2].status.code(), StatusCode::kNotFound);
  EXPECT_NE((*r)[2].status.message().find("http://never-either/"), std::string::npos);
  // Neither failed revisit added its URL.
  EXPECT_EQ(store->Stats()->urls, 1u);
  EXPECT_EQ(store->History("http://c/").status().code(), StatusCode::kNotFound);
  ExpectConsistent(*store);
}

TEST_P(RevisitTest, RevisitAfterADeadVersionUsesTheLastDocument) {
  auto store = OpenStore();
  SweepId s1 = store->OpenSweep("s1", 1)->id;
  PageResult a = ApplyOne(*store, Page("http://a/", s1, 1, Range(0, 200)));
  PageInput dead = Page("http://a/", s1, 2, {});
  dead.http_status = 404;
  ASSERT_EQ(ApplyOne(*store, dead).verdict, Verdict::kGone);
  PageResult back = ApplyOne(*store, Revisit("http://a/", s1, 3));
  ASSERT_TRUE(back.status.ok()) << back.status.ToString();
  EXPECT_EQ(back.doc, a.doc);
  EXPECT_EQ(back.previous_doc, 0u);
  EXPECT_EQ(back.verdict, Verdict::kDuplicate);  // as identical bytes after a 404 would be
  // A revisit of a dead answer is a dead version.
  PageInput dead_revisit = Revisit("http://a/", s1, 4);
  dead_revisit.http_status = 410;
  EXPECT_EQ(ApplyOne(*store, dead_revisit).verdict, Verdict::kGone);
  EXPECT_EQ(store->History("http://a/")->size(), 4u);
  ExpectConsistent(*store);
}

TEST_P(RevisitTest, LargestClusterIsKeptAsClustersGrow) {
  auto store = OpenStore();
  EXPECT_EQ(store->Stats()->largest_cluster, 0u);
  SweepId s = store->OpenSweep("s", 1)->id;
  ApplyOne(*store, Page("http://a/", s, 1, Range(0, 300)));
  EXPECT_EQ(store->Stats()->largest_cluster, 1u);
  ApplyOne(*store, Page("http://b/", s, 1, Range(10000, 300)));
  EXPECT_EQ(store->Stats()->largest_cluster, 1u);
  // Lexically equivalent copies (other bytes, same text) join their original's cluster.
  ApplyOne(*store, Page("http://b1/", s, 1, Range(10000, 300), 1));
  EXPECT_EQ(store->Stats()->largest_cluster, 2u);
  std::vector<PageInput> batch;
  for (uint64_t v = 1; v <= 3; ++v) batch.push_back(Page("http://a" + std::to_string(v) + "/", s, 1, Range(0, 300), v));
  ASSERT_TRUE(store->Apply(batch).ok());
  StatusOr<StoreStats> stats = store->Stats();
  EXPECT_EQ(stats->largest_cluster, 4u);
  EXPECT_EQ(stats->clusters, 2u);
  EXPECT_EQ(store->Cluster(1)->members.size(), 4u);  // the reference count
  ExpectConsistent(*store);
  // Persisted: a reopened store answers the same.
  store.reset();
  store = OpenStore();
  EXPECT_EQ(store->Stats()->largest_cluster, 4u);
}

TEST_F(LmdbRevisitTest, LargestClusterIsCountedOnceForAnOlderStoreAndChecked) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1)->id;
  std::vector<PageInput> batch;
  for (uint64_t v = 0; v < 3; ++v) batch.push_back(Page("http://a" + std::to_string(v) + "/", s, 1, Range(0, 300), v));
  ASSERT_TRUE(store->Apply(batch).ok());
  store.reset();
  // A store written before the entry existed: Open counts it.
  SetMeta("largest_cluster", "");
  store = OpenStore();
  EXPECT_EQ(store->Stats()->largest_cluster, 3u);
  ExpectConsistent(*store);
  store.reset();
  // A wrong value is a problem for Check.
  std::string wrong;
  internal::AppendLE64(&wrong, 7);
  SetMeta("largest_cluster", wrong);
  store = OpenStore();
  StatusOr<std::vector<std::string>> problems = store->Check();
  ASSERT_TRUE(problems.ok());
  ASSERT_EQ(problems->size(), 1u);
  EXPECT_EQ((*problems)[0], "meta largest_cluster is 7, the largest cluster has 3 documents");
}

}  // namespace
}  // namespace shingled::store
