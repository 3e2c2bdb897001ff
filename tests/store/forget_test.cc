// Takedowns (Store::Forget; FORMAT.md, "Forgetting") on the LMDB store: what goes, what stays,
// how a cluster that loses its glue splits, and that the store stays consistent.
#include <gtest/gtest.h>
#include <lmdb.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "store/internal/codec.h"
#include "store/internal/forget_rules.h"
#include "store/internal/store_impl.h"
#include "store/mapped_file.h"
#include "tests/store/store_fixture.h"

namespace shingled::store::testing {
namespace {

class ForgetTest : public StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFailure()) return;
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
    sweep_ = store_->OpenSweep("s1", 100)->id;
  }
  PageResult Add(const std::string& url, const std::vector<uint64_t>& shingles,
                 uint64_t variant = 0) {
    return ApplyOne(*store_, Page(url, sweep_, 100, shingles, variant));
  }
  ForgetResult Forget(ForgetScope scope, const std::string& value, bool dry_run = false,
                      size_t max_urls = 10000) {
    ForgetOptions o;
    o.scope = scope;
    o.value = value;
    o.date = 200;
    o.dry_run = dry_run;
    o.max_urls = max_urls;
    o.list_limit = 100;
    StatusOr<ForgetResult> r = store_->Forget(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ForgetResult{};
  }
  bool Known(const std::string& url) { return store_->History(url).ok(); }
  bool HasDocument(DocId doc) { return store_->Document(doc).ok(); }
  std::vector<DocId> MembersOf(DocId doc) {
    StatusOr<ClusterInfo> c = store_->Cluster(doc);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    std::vector<DocId> out;
    if (c.ok()) {
      for (const ClusterMember& m : c->members) out.push_back(m.doc);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::unique_ptr<Store> store_;
  SweepId sweep_ = 0;
};
SHINGLED_STORE_ENGINES(ForgetTest);

// What a takedown would remove, planned the same on every engine: a document another URL shows
// stays, one only the URL showed goes, a representative stays while a sharer is shown, and a
// cluster held together by the forgotten document splits (as AClusterHeldByTheForgottenDocument
// Splits below). A dry run changes nothing.
TEST_P(ForgetTest, ADryRunPlansTheSameOnEveryEngine) {
  StoreOptions options;
  options.verified_threshold = 0.5;
  store_.reset();
  store_ = OpenStore(options, "plan");
  ASSERT_NE(store_, nullptr);
  sweep_ = store_->OpenSweep("s1", 100)->id;
  Add("https://x.example/a", Range(0, 1000));
  Add("https://x.example/a2", Range(0, 1000), 1);  // names a as its representative
  Add("https://x.example/b", Range(200, 1000));
  Add("https://x.example/c", Range(400, 1000));
  Add("https://x.example/c2", Range(400, 1000), 1);
  const PageResult shared = Add("https://y.example/shared", Range(5000, 300));
  ASSERT_EQ(Add("https://y.example/also", Range(5000, 300)).doc, shared.doc);
  Add("https://z.example/alone", Range(9000, 300));
  auto expect = [&](ForgetScope scope, const std::string& value, uint64_t urls, uint64_t documents,
                    uint64_t kept, uint64_t recomputed, uint64_t split) {
    SCOPED_TRACE(value);
    const ForgetResult r = Forget(scope, value, /*dry_run=*/true);
    EXPECT_EQ(r.urls, urls);
    EXPECT_EQ(r.versions, urls);
    EXPECT_EQ(r.documents, documents);
    EXPECT_EQ(r.documents_kept, kept);
    EXPECT_EQ(r.clusters_recomputed, recomputed);
    EXPECT_EQ(r.clusters_split, split);
    EXPECT_EQ(r.record, 0u);
  };
  expect(ForgetScope::kUrl, "https://x.example/b", 1, 1, 0, 1, 1);
  expect(ForgetScope::kUrl, "https://y.example/shared", 1, 0, 0, 0, 0);
  expect(ForgetScope::kUrl, "https://z.example/alone", 1, 1, 0, 0, 0);
  expect(ForgetScope::kUrl, "https://x.example/a", 1, 0, 1, 0, 0);
  expect(ForgetScope::kHost, "x.example", 5, 5, 0, 1, 0);
  expect(ForgetScope::kHost, "y.example", 2, 1, 0, 0, 0);
  const ForgetResult listed = Forget(ForgetScope::kPrefix, "https://x.example/c", true);
  EXPECT_EQ(listed.listed,
            (std::vector<std::string>{"https://x.example/c", "https://x.example/c2"}));
  EXPECT_TRUE(Known("https://x.example/b"));
  EXPECT_TRUE(HasDocument(shared.doc));
  ExpectConsistent(*store_);
}

// The tests that reach into LMDB's files or its write buffer.
class LmdbForgetTest : public ForgetTest {};
SHINGLED_STORE_LMDB_ONLY(LmdbForgetTest);

TEST_P(ForgetTest, ADocumentAnotherUrlShowsStays) {
  const PageResult a = Add("https://a.example/1", Range(0, 300));
  const PageResult b = Add("https://b.example/1", Range(0, 300));  // the same bytes
  ASSERT_EQ(a.doc, b.doc);
  const ForgetResult r = Forget(ForgetScope::kUrl, "https://a.example/1");
  EXPECT_EQ(r.urls, 1u);
  EXPECT_EQ(r.versions, 1u);
  EXPECT_EQ(r.documents, 0u);
  EXPECT_EQ(r.listed, std::vector<std::string>{"https://a.example/1"});
  EXPECT_FALSE(Known("https://a.example/1"));
  EXPECT_TRUE(Known("https://b.example/1"));
  EXPECT_TRUE(HasDocument(a.doc));
  StatusOr<StoreStats> stats = store_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->urls, 1u);
  EXPECT_EQ(stats->versions, 1u);
  EXPECT_EQ(stats->documents, 1u);
  StatusOr<std::vector<SweepInfo>> sweeps = store_->Sweeps();
  ASSERT_TRUE(sweeps.ok());
  EXPECT_EQ((*sweeps)[0].pages, 1u);  // the forgotten version left its sweep's counts
  ExpectConsistent(*store_);
}

TEST_P(ForgetTest, ADocumentOnlyTheUrlShowedGoesWithItsPostings) {
  const PageResult kept = Add("https://a.example/keep", Range(1000, 300));
  const PageResult gone = Add("https://a.example/gone", Range(0, 300));
  const ForgetResult r = Forget(ForgetScope::kUrl, "https://a.example/gone");
  EXPECT_EQ(r.documents, 1u);
  EXPECT_FALSE(HasDocument(gone.doc));
  EXPECT_TRUE(HasDocument(kept.doc));
  // No query finds it: its postings went (and the write buffer was rebuilt without them).
  StatusOr<std::vector<SimilarDoc>> similar =
      store_->SimilarToSketch(SyntheticSketch(params_, Range(0, 300)), QueryOptions{});
  ASSERT_TRUE(similar.ok()) << similar.status().ToString();
  EXPECT_TRUE(similar->empty());
  ExpectConsistent(*store_);
  if (engine() == Engine::kLmdb) {
    EXPECT_TRUE(store_->mapped_file()->VerifyKeyFilterForTesting().ok());
  }
  // The same content again is new, under a new id: ids are never given twice.
  const PageResult again = Add("https://a.example/again", Range(0, 300));
  EXPECT_EQ(again.verdict, Verdict::kNew);
  EXPECT_GT(again.doc, gone.doc);
  // The URL too gets a new id, not the forgotten URL's 2 (reports page by URL id).
  std::vector<std::string> after_two;
  ASSERT_TRUE(
      store_->KnownUrls(2, 10, [&](std::string_view u) { after_two.emplace_back(u); }).ok());
  EXPECT_EQ(after_two, std::vector<std::string>{"https://a.example/again"});
  ExpectConsistent(*store_);
  // And so after the store is opened again (its buffers rebuilt from the file).
  store_.reset();
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
  ExpectConsistent(*store_);
  EXPECT_FALSE(HasDocument(gone.doc));
}

// A cluster held together by the forgotten document splits: A ~ B ~ C, A and C too far apart
// to join, A' and C' exact variants of A and C. The verified relation at 0.5 keeps every
// judgement ~5 standard errors of the estimate away from the threshold (J(A, B) = J(B, C) =
// 0.67, J(A, C) = 0.43).
TEST_P(ForgetTest, AClusterHeldByTheForgottenDocumentSplits) {
  StoreOptions options;
  options.verified_threshold = 0.5;
  store_.reset();
  store_ = OpenStore(options, "split");
  ASSERT_NE(store_, nullptr);
  sweep_ = store_->OpenSweep("s1", 100)->id;
  const PageResult a = Add("https://x.example/a", Range(0, 1000));
  const PageResult a2 = Add("https://x.example/a2", Range(0, 1000), 1);
  const PageResult b = Add("https://x.example/b", Range(200, 1000));
  const PageResult c = Add("https://x.example/c", Range(400, 1000));
  const PageResult c2 = Add("https://x.example/c2", Range(400, 1000), 1);
  const std::vector<DocId> all{a.doc, a2.doc, b.doc, c.doc, c2.doc};
  ASSERT_EQ(MembersOf(a.doc), all) << "the five pages form one cluster";
  ASSERT_EQ(c2.cluster, a.doc);

  const ForgetResult r = Forget(ForgetScope::kUrl, "https://x.example/b");
  EXPECT_EQ(r.documents, 1u);
  EXPECT_EQ(r.clusters_recomputed, 1u);
  EXPECT_EQ(r.clusters_split, 1u);
  EXPECT_EQ(MembersOf(a.doc), (std::vector<DocId>{a.doc, a2.doc}));
  EXPECT_EQ(MembersOf(c.doc), (std::vector<DocId>{c.doc, c2.doc}));
  // The part holding the old id keeps it; the other takes its smallest document.
  EXPECT_EQ(store_->Cluster(a2.doc)->id, a.doc);
  EXPECT_EQ(store_->Cluster(c2.doc)->id, c.doc);
  StatusOr<StoreStats> stats = store_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->clusters, 2u);
  EXPECT_EQ(stats->largest_cluster, 2u);
  ExpectConsistent(*store_);
}

TEST_P(ForgetTest, AClusterThatStaysJoinedKeepsItsId) {
  const PageResult a = Add("https://x.example/a", Range(0, 1000));
  const PageResult b = Add("https://x.example/b", Range(10, 1000));
  const PageResult c = Add("https://x.example/c", Range(20, 1000));
  ASSERT_EQ(MembersOf(a.doc), (std::vector<DocId>{a.doc, b.doc, c.doc}));
  const ForgetResult r = Forget(ForgetScope::kUrl, "https://x.example/a");
  EXPECT_EQ(r.clusters_recomputed, 1u);
  EXPECT_EQ(r.clusters_split, 0u);
  EXPECT_EQ(MembersOf(b.doc), (std::vector<DocId>{b.doc, c.doc}));
  EXPECT_EQ(store_->Cluster(c.doc)->id, b.doc);  // the old root went: the smallest member
  ExpectConsistent(*store_);
}

// The largest cluster's size follows what a step shrinks: it stays while another cluster of
// that size is untouched, and falls when the only one of that size shrinks.
TEST_P(ForgetTest, TheLargestClusterFollowsWhatShrank) {
  auto largest = [&] { return store_->Stats()->largest_cluster; };
  Add("https://x.example/a", Range(0, 1000));
  Add("https://x.example/b", Range(10, 1000));
  Add("https://x.example/c", Range(20, 1000));
  Add("https://y.example/a", Range(5000, 1000));
  Add("https://y.example/b", Range(5010, 1000));
  Add("https://z.example/a", Range(9000, 300));  // a singleton
  ASSERT_EQ(largest(), 3u);
  EXPECT_EQ(Forget(ForgetScope::kUrl, "https://y.example/b").documents, 1u);
  EXPECT_EQ(largest(), 3u);
  EXPECT_EQ(Forget(ForgetScope::kUrl, "https://z.example/a").documents, 1u);
  EXPECT_EQ(largest(), 3u);
  ExpectConsistent(*store_);
  EXPECT_EQ(Forget(ForgetScope::kUrl, "https://x.example/c").documents, 1u);
  EXPECT_EQ(largest(), 2u);
  ExpectConsistent(*store_);
  EXPECT_EQ(Forget(ForgetScope::kHost, "x.example").documents, 2u);
  EXPECT_EQ(largest(), 1u);  // y.example/a alone
  EXPECT_EQ(Forget(ForgetScope::kHost, "y.example").documents, 1u);
  EXPECT_EQ(largest(), 0u);  // no document
  ExpectConsistent(*store_);
}

// A document whose sketch a remaining document shares (its lexically equivalent copy names it
// as representative) stays, URL-less, until the last of them goes.
TEST_P(ForgetTest, ARepresentativeStaysWhileADocumentSharesItsSketch) {
  const PageResult holder = Add("https://r.example/1", Range(0, 300));
  const PageResult copy = Add("https://r.example/2", Range(0, 300), 1);
  ASSERT_NE(holder.doc, copy.doc);
  ASSERT_EQ(copy.verdict, Verdict::kDuplicate);
  ForgetResult r = Forget(ForgetScope::kUrl, "https://r.example/1");
  EXPECT_EQ(r.documents, 0u);
  EXPECT_EQ(r.documents_kept, 1u);
  EXPECT_TRUE(HasDocument(holder.doc));
  ExpectConsistent(*store_);
  r = Forget(ForgetScope::kUrl, "https://r.example/2");
  EXPECT_EQ(r.documents, 2u);  // the copy and the URL-less representative
  EXPECT_FALSE(HasDocument(holder.doc));
  EXPECT_FALSE(HasDocument(copy.doc));
  StatusOr<StoreStats> stats = store_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 0u);
  EXPECT_EQ(stats->clusters, 0u);
  ExpectConsistent(*store_);
}

TEST_P(ForgetTest, ADryRunListsWhatWouldGoAndChangesNothing) {
  Add("https://d.example/1", Range(0, 300));
  Add("https://d.example/2", Range(5000, 300));
  const ForgetResult dry = Forget(ForgetScope::kHost, "d.example", true);
  EXPECT_EQ(dry.urls, 2u);
  EXPECT_EQ(dry.documents, 2u);
  EXPECT_EQ(dry.record, 0u);
  EXPECT_EQ(dry.listed, (std::vector<std::string>{"https://d.example/1", "https://d.example/2"}));
  EXPECT_TRUE(Known("https://d.example/1"));
  EXPECT_TRUE(store_->ForgetRecords()->empty());
  const ForgetResult done = Forget(ForgetScope::kHost, "d.example");
  EXPECT_EQ(done.urls, dry.urls);
  EXPECT_EQ(done.documents, dry.documents);
  EXPECT_FALSE(Known("https://d.example/1"));
  ExpectConsistent(*store_);
}

TEST_P(ForgetTest, AHostOrAPrefixIsForgottenInBoundedSteps) {
  for (int i = 0; i < 5; ++i) Add("http://h.example/p" + std::to_string(i), Range(1000 * i, 300));
  Add("https://h.example/secure", Range(9000, 300));
  Add("https://h.example.org/other", Range(12000, 300));  // another host
  Add("https://k.example/docs/a", Range(15000, 300));
  Add("https://k.example/blog/a", Range(18000, 300));
  uint64_t urls = 0;
  int calls = 0;
  for (bool more = true; more; ++calls) {
    const ForgetResult r = Forget(ForgetScope::kHost, "H.example", false, 2);
    urls += r.urls;
    more = r.more;
    ASSERT_LT(calls, 10);
  }
  EXPECT_EQ(urls, 6u);
  EXPECT_EQ(calls, 3);
  EXPECT_TRUE(Known("https://h.example.org/other"));
  EXPECT_EQ(Forget(ForgetScope::kPrefix, "https://k.example/docs/").urls, 1u);
  EXPECT_TRUE(Known("https://k.example/blog/a"));
  ExpectConsistent(*store_);

  StatusOr<std::vector<ForgetRecord>> records = store_->ForgetRecords();
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 4u);  // one per step
  EXPECT_EQ((*records)[0].id, 1u);
  EXPECT_EQ((*records)[0].scope, ForgetScope::kHost);
  EXPECT_EQ((*records)[0].date, 200);
  EXPECT_EQ((*records)[0].urls, 2u);
  EXPECT_EQ((*records)[3].scope, ForgetScope::kPrefix);
  // SHA-256 of the value as given: sha256("example.com") is a379a6f6...1947.
  EXPECT_EQ(
      store_->Forget({.scope = ForgetScope::kPrefix, .value = "https://k.example/blog/"})->record,
      5u);
  EXPECT_EQ(Forget(ForgetScope::kHost, "example.com").urls, 0u);  // nothing matched: no record
  Add("https://example.com/x", Range(30000, 300));
  ASSERT_EQ(Forget(ForgetScope::kHost, "example.com").urls, 1u);
  records = store_->ForgetRecords(5);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  const std::array<uint8_t, 32> expected{0xa3, 0x79, 0xa6, 0xf6, 0xee, 0xaf, 0xb9, 0xa5,
                                         0x5e, 0x37, 0x8c, 0x11, 0x80, 0x34, 0xe2, 0x75,
                                         0x1e, 0x68, 0x2f, 0xab, 0x9f, 0x2d, 0x30, 0xab,
                                         0x13, 0xd2, 0x12, 0x55, 0x86, 0xce, 0x19, 0x47};
  EXPECT_EQ((*records)[0].value_sha256, expected);
  ExpectConsistent(*store_);
}

TEST_P(ForgetTest, BadRequestsAreRefused) {
  Add("https://a.example/1", Range(0, 300));
  EXPECT_EQ(store_->Forget({.scope = ForgetScope::kUrl, .value = ""}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Forget({.scope = ForgetScope::kUrl, .value = "https://a.example/none"})
                .status()
                .code(),
            StatusCode::kNotFound);
  EXPECT_EQ(
      store_->Forget({.scope = ForgetScope::kHost, .value = "a.example/path"}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Forget({.scope = ForgetScope::kPrefix, .value = "a.example"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Forget({.scope = ForgetScope::kHost, .value = "a.example", .max_urls = 0})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(Known("https://a.example/1"));
}

// Forgetting pages still in the write buffer (above their slices' watermarks) and pages already
// in the B-trees, then writing on: the writer's next batches see neither.
TEST_P(LmdbForgetTest, BufferedAndFiledPagesAreForgottenAlike) {
  std::vector<PageResult> pages;
  for (int i = 0; i < 40; ++i) {
    pages.push_back(Add("https://w.example/" + std::to_string(i), Range(10000 * (i + 1), 300)));
  }
  for (int i = 0; i < 40; i += 3) {
    EXPECT_EQ(Forget(ForgetScope::kUrl, "https://w.example/" + std::to_string(i)).documents, 1u);
  }
  ExpectConsistent(*store_);
  for (int i = 0; i < 40; ++i) {
    const PageResult again =
        Add("https://w.example/again" + std::to_string(i), Range(10000 * (i + 1), 300));
    EXPECT_EQ(again.verdict, i % 3 == 0 ? Verdict::kNew : Verdict::kDuplicate) << i;
  }
  ExpectConsistent(*store_);
  if (engine() == Engine::kLmdb) {
    EXPECT_TRUE(store_->mapped_file()->VerifyKeyFilterForTesting().ok());
  }
}

TEST_P(LmdbForgetTest, TheRecordsBytes) {
  ForgetRecord r{.id = 1, .date = 200, .scope = ForgetScope::kHost, .urls = 1, .versions = 1,
                 .documents = 1, .clusters_split = 0};
  r.value_sha256[0] = 0xa3;
  r.value_sha256[31] = 0x47;
  const std::string bytes = internal::EncodeForgetRecord(r);
  std::string want("\x90\x03\x02", 3);
  want += '\xa3';
  want += std::string(30, '\0');
  want += '\x47';
  want += std::string("\x01\x01\x01\x00", 4);
  EXPECT_EQ(bytes, want);
  EXPECT_EQ(bytes.size(), 39u);
  StatusOr<ForgetRecord> back = internal::DecodeForgetRecord(1, bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->value_sha256, r.value_sha256);
  EXPECT_EQ(back->date, 200);
  EXPECT_EQ(internal::DecodeForgetRecord(1, bytes.substr(0, 20)).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(internal::DecodeForgetRecord(1, bytes + "x").status().code(), StatusCode::kDataLoss);
}

// Makes the closed store at `path` look like one of format `version`, without the table `drop`
// (nullptr: none) when that format had none.
void MakeFormat(const std::string& path, uint64_t version, const char* drop) {
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_set_maxdbs(env, 32), 0);
  ASSERT_EQ(mdb_env_open(env, path.c_str(), MDB_NOSYNC, 0644), 0);
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  MDB_dbi meta = 0, dropped = 0;
  ASSERT_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
  if (drop != nullptr) {
    ASSERT_EQ(mdb_dbi_open(txn, drop, 0, &dropped), 0);
    ASSERT_EQ(mdb_drop(txn, dropped, 1), 0);
  }
  std::string bytes = internal::Le64(version);
  MDB_val k{14, const_cast<char*>("format_version")}, v{8, bytes.data()};
  ASSERT_EQ(mdb_put(txn, meta, &k, &v, 0), 0);
  ASSERT_EQ(mdb_txn_commit(txn), 0);
  mdb_env_close(env);
}

// A format 11 store has no `forgets` table: opening it makes one, and it forgets like any.
TEST_P(LmdbForgetTest, Format11IsUpgraded) {
  Add("https://u.example/1", Range(0, 300));
  store_.reset();
  MakeFormat(dir_.Sub("db"), 11, "forgets");
  if (HasFatalFailure()) return;
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
  ExpectConsistent(*store_);
  EXPECT_TRUE(store_->ForgetRecords()->empty());
  EXPECT_EQ(Forget(ForgetScope::kUrl, "https://u.example/1").documents, 1u);
  EXPECT_EQ(store_->ForgetRecords()->size(), 1u);
  ExpectConsistent(*store_);
}

// A format 12 store has neither retention records nor `retention.pass`: opening it only moves
// its version on.
TEST_P(LmdbForgetTest, Format12IsUpgraded) {
  Add("https://u.example/1", Range(0, 300));
  EXPECT_EQ(Forget(ForgetScope::kUrl, "https://u.example/1").documents, 1u);
  store_.reset();
  MakeFormat(dir_.Sub("db"), 12, nullptr);
  if (HasFatalFailure()) return;
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
  ExpectConsistent(*store_);
  EXPECT_EQ(store_->ForgetRecords()->size(), 1u);
}

// A format 13 store has no `rep_docs`: opening it files every document naming a representative,
// and a takedown finds a representative's group through them.
TEST_P(LmdbForgetTest, Format13IsUpgraded) {
  const PageResult holder = Add("https://r.example/1", Range(0, 300));
  const PageResult copy = Add("https://r.example/2", Range(0, 300), 1);
  const PageResult other = Add("https://r.example/3", Range(0, 300), 2);
  ASSERT_EQ(copy.verdict, Verdict::kDuplicate);
  ASSERT_EQ(other.verdict, Verdict::kDuplicate);
  store_.reset();
  MakeFormat(dir_.Sub("db"), 13, "rep_docs");
  if (HasFatalFailure()) return;
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
  ExpectConsistent(*store_);  // invariant 15: rep_docs files both copies under the holder
  EXPECT_EQ(Forget(ForgetScope::kUrl, "https://r.example/1").documents_kept, 1u);
  EXPECT_EQ(Forget(ForgetScope::kUrl, "https://r.example/2").documents, 0u);
  EXPECT_EQ(Forget(ForgetScope::kUrl, "https://r.example/3").documents, 3u);
  EXPECT_FALSE(HasDocument(holder.doc));
  ExpectConsistent(*store_);
}

// --- retention ---

class RetentionTest : public ForgetTest {
 protected:
  // Runs retention steps until a pass is done; the steps' sums.
  RetentionStep Pass(RetentionOptions o, int* steps = nullptr) {
    RetentionStep sum;
    for (int n = 1;; ++n) {
      StatusOr<RetentionStep> step = store_->ApplyRetention(o);
      EXPECT_TRUE(step.ok()) << step.status().ToString();
      if (!step.ok()) return sum;
      sum.urls_examined += step->urls_examined;
      sum.versions += step->versions;
      sum.urls += step->urls;
      sum.documents += step->documents;
      if (step->pass_done || n > 1000) {
        if (steps != nullptr) *steps = n;
        return sum;
      }
    }
  }
  PageResult AddAt(const std::string& url, SweepId sweep, int64_t date,
                   const std::vector<uint64_t>& shingles, int status = 200) {
    PageInput p = Page(url, sweep, date, shingles);
    p.http_status = status;
    if (status != 200) p.sketch = {};
    return ApplyOne(*store_, p);
  }
};
SHINGLED_STORE_ENGINES(RetentionTest);

// The file's size under retention: LMDB's only.
class LmdbRetentionTest : public RetentionTest {};
SHINGLED_STORE_LMDB_ONLY(LmdbRetentionTest);

TEST_P(RetentionTest, OldVersionsGoButEachUrlsLast) {
  const SweepId s2 = store_->OpenSweep("s2", 2000)->id;
  const PageResult old = AddAt("https://r.example/a", sweep_, 1000, Range(0, 300));
  AddAt("https://r.example/a", s2, 2000, Range(5000, 300));       // changed
  AddAt("https://r.example/b", sweep_, 1000, Range(10000, 300));  // only old
  const RetentionStep r = Pass({.now = 2500, .max_version_age = 1000});
  EXPECT_EQ(r.urls_examined, 2u);
  EXPECT_EQ(r.versions, 1u);  // a's first; b's only version is its last
  EXPECT_EQ(r.urls, 0u);
  EXPECT_EQ(r.documents, 1u);
  EXPECT_FALSE(HasDocument(old.doc));
  StatusOr<std::vector<UrlVersion>> a = store_->History("https://r.example/a");
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ(a->front().date, 2000);
  EXPECT_EQ(store_->History("https://r.example/b")->size(), 1u);
  StatusOr<std::vector<SweepInfo>> sweeps = store_->Sweeps();
  ASSERT_TRUE(sweeps.ok());
  EXPECT_EQ((*sweeps)[0].pages, 1u);  // b's version stays counted
  ExpectConsistent(*store_);
}

TEST_P(RetentionTest, UrlsGoneLongAgoGoWithEveryVersion) {
  const SweepId s2 = store_->OpenSweep("s2", 2000)->id;
  AddAt("https://g.example/dead", sweep_, 1000, Range(0, 300));
  AddAt("https://g.example/dead", s2, 2000, {}, 404);
  AddAt("https://g.example/recent", sweep_, 1000, Range(5000, 300));
  AddAt("https://g.example/recent", s2, 9000, {}, 404);
  AddAt("https://g.example/live", sweep_, 1000, Range(10000, 300));
  const RetentionStep r = Pass({.now = 10000, .max_gone_age = 5000});
  EXPECT_EQ(r.urls, 1u);
  EXPECT_EQ(r.versions, 2u);
  EXPECT_EQ(r.documents, 1u);
  EXPECT_FALSE(Known("https://g.example/dead"));
  EXPECT_TRUE(Known("https://g.example/recent"));
  EXPECT_TRUE(Known("https://g.example/live"));
  ExpectConsistent(*store_);
}

TEST_P(RetentionTest, StepsAreBoundedAndResumeWhereTheyStopped) {
  for (int i = 0; i < 10; ++i)
    AddAt("https://s.example/" + std::to_string(i), sweep_, 1000, Range(1000 * i, 300));
  int steps = 0;
  RetentionStep r = Pass({.now = 5000, .max_version_age = 1, .max_urls = 3}, &steps);
  EXPECT_EQ(steps, 4);  // 3 + 3 + 3 + 1
  EXPECT_EQ(r.urls_examined, 10u);
  // A new pass starts over from the first URL.
  r = Pass({.now = 5000, .max_version_age = 1, .max_urls = 4}, &steps);
  EXPECT_EQ(steps, 3);
  EXPECT_EQ(r.urls_examined, 10u);
  // A store opened again resumes the pass in the middle (the cursor is in the file).
  ASSERT_TRUE(store_->ApplyRetention({.now = 5000, .max_urls = 4}).ok());
  store_.reset();
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
  r = Pass({.now = 5000, .max_urls = 4}, &steps);
  EXPECT_EQ(r.urls_examined, 6u);
  EXPECT_EQ(steps, 2);
}

// A pass that removed something is one forget record when it ends, whichever processes ran its
// steps: the counts of a step before a restart count too.
TEST_P(RetentionTest, APassIsOneRecordWithItsStepsCounts) {
  const SweepId s2 = store_->OpenSweep("s2", 2000)->id;
  for (int i = 0; i < 10; ++i) {
    const std::string url = "https://p.example/" + std::to_string(i);
    AddAt(url, sweep_, 1000, Range(1000 * i, 300));
    AddAt(url, s2, 2000, Range(1000 * i + 100000, 300));
  }
  const RetentionOptions rules{.now = 2500, .max_version_age = 1000, .max_urls = 3};
  StatusOr<RetentionStep> first = store_->ApplyRetention(rules);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->versions, 3u);
  EXPECT_EQ(first->record, 0u);  // the pass is not over
  EXPECT_TRUE(store_->ForgetRecords()->empty());
  ExpectConsistent(*store_);
  store_.reset();
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
  uint64_t record = 0;
  for (int n = 0; n < 10 && record == 0; ++n) {
    StatusOr<RetentionStep> step = store_->ApplyRetention(rules);
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    EXPECT_EQ(step->record != 0, step->pass_done);
    record = step->record;
  }
  StatusOr<std::vector<ForgetRecord>> records = store_->ForgetRecords();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  const ForgetRecord& r = records->front();
  EXPECT_EQ(r.id, record);
  EXPECT_EQ(r.scope, ForgetScope::kRetention);
  EXPECT_EQ(ForgetScopeName(r.scope), "retention");
  EXPECT_EQ(r.date, 2500);
  EXPECT_EQ(RetentionRulesText(rules), "max_version_age=1000 max_gone_age=0");
  EXPECT_EQ(r.value_sha256, internal::Sha256("max_version_age=1000 max_gone_age=0"));
  EXPECT_EQ(r.urls, 0u);
  EXPECT_EQ(r.versions, 10u);
  EXPECT_EQ(r.documents, 10u);  // each URL's old document
  ExpectConsistent(*store_);
  // A pass that removes nothing records nothing; a takedown's record comes next.
  EXPECT_EQ(Pass(rules).versions, 0u);
  EXPECT_EQ(store_->ForgetRecords()->size(), 1u);
  EXPECT_EQ(Forget(ForgetScope::kUrl, "https://p.example/0").record, record + 1);
  // Retention is not a takedown's scope.
  StatusOr<ForgetResult> refused =
      store_->Forget({.scope = ForgetScope::kRetention, .value = "max_version_age=1"});
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
}

// A steady load: every sweep sees the same URLs with new content. Keeping the last 5 sweeps, the
// file levels off once the freed pages are reused (measured: 4.7 MB after sweep 10, 5.2 after 20,
// 5.3 after 30 and 40); keeping all, it grows with every sweep.
TEST_P(LmdbRetentionTest, UnderASteadyLoadTheFileLevelsOff) {
  constexpr int kSweeps = 30;
  auto run = [&](bool retention, const std::string& name) {
    store_.reset();
    store_ = OpenStore({}, name);
    std::vector<uint64_t> sizes;
    for (int s = 0; s < kSweeps; ++s) {
      const SweepId id = store_->OpenSweep("sweep" + std::to_string(s), 1000 * (s + 1))->id;
      std::vector<PageInput> pages;
      for (int u = 0; u < 150; ++u) {
        pages.push_back(Page("https://steady.example/" + std::to_string(u), id, 1000 * (s + 1),
                             Range(1000000 * s + 2000 * u, 300)));
      }
      EXPECT_TRUE(store_->Apply(pages).ok());
      if (retention) Pass({.now = 1000 * (s + 1), .max_version_age = 4500, .max_urls = 50});
      sizes.push_back(store_->Stats()->file_bytes);
    }
    ExpectConsistent(*store_);
    return sizes;
  };
  const std::vector<uint64_t> kept = run(true, "retention");
  EXPECT_EQ(store_->Stats()->versions, 150u * 5);
  const std::vector<uint64_t> all = run(false, "all");
  std::printf("file bytes after sweeps 10, 20, 30: retention %lu %lu %lu; none %lu %lu %lu\n",
              kept[9], kept[19], kept[29], all[9], all[19], all[29]);
  EXPECT_LE(kept[29], kept[19] * 105 / 100) << "the file still grows under retention";
  EXPECT_GT(all[29], all[19] * 13 / 10);
}

}  // namespace
}  // namespace shingled::store::testing
