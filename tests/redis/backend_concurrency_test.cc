// Three Redis backends (three daemons: a thread and a client each) fed disjoint shares of a corpus
// whose near-copies and exact copies fall across the shares, at the same time, end with the
// clusters one LMDB store fed all of it makes, and one document per distinct raw content.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "redis/backend.h"
#include "redis/backend_store.h"
#include "tests/redis/backend_fixture.h"

namespace shingled::redis::testing {
namespace {

// A suite of this file's own: CTest runs each source's suites (tests/CMakeLists.txt), and
// BackendTest's tests in backend_test.cc would otherwise run again under this file.
using BackendConcurrencyTest = BackendTest;

using store::PageInput;
using store::PageResult;

TEST_F(BackendConcurrencyTest, ThreeDaemonsMakeTheClustersOfOne) {
  constexpr int kDaemons = 3;
  constexpr int kFamilies = 90;
  // Family f's members go to shares (f + j) % 3: every family spans the three daemons. Exact
  // copies of the base and lexical equivalents go to the other shares too.
  std::vector<std::vector<PageInput>> shares(kDaemons);
  for (int f = 0; f < kFamilies; ++f) {
    const Content base = Near(f, 200, 0);
    int j = 0;
    auto put = [&](PageInput p) { shares[(f + j++) % kDaemons].push_back(std::move(p)); };
    put(Page(Url(f, "base"), 1, 1000 + f, base));
    put(Page(Url(f, "copy-1"), 1, 1000 + f, base));
    put(Page(Url(f, "near-a"), 1, 1001 + f, Near(f, 195, 1)));
    put(Page(Url(f, "near-b"), 1, 1002 + f, Near(f, 194, 2)));
    put(Page(Url(f, "near-c"), 1, 1003 + f, Near(f, 196, 3)));
    put(Page(Url(f, "copy-2"), 1, 1004 + f, base));
    Content lex = base;
    lex.variant = 1;
    put(Page(Url(f, "lexical"), 1, 1005 + f, lex));
    put(Page(Url(f, "copy-3"), 1, 1006 + f, Near(f, 195, 1)));
    put(Page(Url(f, "far"), 1, 1007 + f, Near(f, 120, 4)));  // J ~0.43: its own cluster
  }
  std::vector<std::unique_ptr<store::Store>> daemons;
  for (int d = 0; d < kDaemons; ++d) {
    daemons.push_back(OpenRedis());
    ASSERT_NE(daemons.back(), nullptr);
    auto sweep = daemons.back()->OpenSweep("crawl", 1000);
    ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
    ASSERT_EQ(sweep->id, 1u);
  }
  std::vector<std::string> errors(kDaemons);
  std::vector<int> retries(kDaemons, 0);
  std::vector<std::thread> threads;
  for (int d = 0; d < kDaemons; ++d) {
    threads.emplace_back([&, d] {
      const std::vector<PageInput>& share = shares[d];
      for (size_t i = 0; i < share.size(); i += 6) {
        std::span<const PageInput> batch(share.data() + i, std::min<size_t>(6, share.size() - i));
        for (int attempt = 0;; ++attempt) {
          auto r = daemons[d]->Apply(batch);
          if (r.ok()) {
            for (const auto& p : *r) {
              if (!p.status.ok()) errors[d] = p.status.ToString();
            }
            break;
          }
          // Unavailable: a race the backend could not settle in its own attempts; a client
          // retries (every write is idempotent), after a pause: the other daemon's record may
          // take a while on a loaded machine (the sanitizers beside other tests).
          if (r.status().code() != StatusCode::kUnavailable || attempt == 20) {
            errors[d] = r.status().ToString();
            return;
          }
          ++retries[d];
          std::this_thread::sleep_for(std::chrono::milliseconds(10 * (attempt + 1)));
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int d = 0; d < kDaemons; ++d) EXPECT_EQ(errors[d], "") << "daemon " << d;

  auto lmdb = OpenLmdb();
  ASSERT_NE(lmdb, nullptr);
  ASSERT_TRUE(lmdb->OpenSweep("crawl", 1000).ok());
  std::vector<PageInput> all;
  for (int f = 0; f < kFamilies; ++f) {
    // In family order: the page order a single daemon would see.
    for (int d = 0; d < kDaemons; ++d) {
      for (const PageInput& p : shares[d]) {
        if (p.url.find("/f" + std::to_string(f) + "/") != std::string::npos) all.push_back(p);
      }
    }
  }
  for (size_t i = 0; i < all.size(); i += 50) {
    std::span<const PageInput> batch(all.data() + i, std::min<size_t>(50, all.size() - i));
    ASSERT_TRUE(lmdb->Apply(batch).ok());
  }
  // One document per distinct raw content, on both.
  auto sa = lmdb->Stats();
  auto sb = daemons[0]->Stats();
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(sa->documents, sb->documents);
  EXPECT_EQ(sa->urls, sb->urls);
  EXPECT_EQ(sa->versions, sb->versions);
  // The same clusters, compared by URL (the ids differ).
  std::map<std::string, store::ClusterId> ca, cb;
  std::set<store::DocId> docs_b;
  for (const PageInput& p : all) {
    auto ha = lmdb->History(p.url);
    auto hb = daemons[1]->History(p.url);
    ASSERT_TRUE(ha.ok() && hb.ok()) << p.url;
    ASSERT_EQ(ha->size(), 1u);
    ASSERT_EQ(hb->size(), 1u) << p.url;
    auto da = lmdb->Document(ha->back().doc);
    auto db = daemons[2]->Document(hb->back().doc);
    ASSERT_TRUE(da.ok() && db.ok()) << p.url;
    ca[p.url] = da->cluster;
    cb[p.url] = db->cluster;
    docs_b.insert(hb->back().doc);
  }
  EXPECT_EQ(docs_b.size(), sa->documents);
  const auto pa = Partition(ca), pb = Partition(cb);
  EXPECT_EQ(pa.size(), pb.size());
  EXPECT_EQ(pa, pb);
  auto check = daemons[0]->Check();
  ASSERT_TRUE(check.ok());
  for (const std::string& p : *check) ADD_FAILURE() << p;
  uint64_t races = 0;
  for (const auto& d : daemons) races += dynamic_cast<const RedisClusterStore&>(*d).races();
  std::cout << "clusters " << pb.size() << ", documents " << sb->documents
            << ", batches applied again after a race " << races << ", client retries "
            << retries[0] + retries[1] + retries[2] << "\n";
}

// A daemon that dies (or stalls) after claiming its new document's fingerprints, before writing the
// document's record: another daemon's lexical equivalent of it does not wait for that record (two
// batches could each wait for the other's). It keeps a sketch of its own, is still a duplicate of
// the claimed document, and joins the cluster of the first daemon's near-copy it finds. The first
// daemon's page, applied again, completes its document under the same id.
TEST_F(BackendConcurrencyTest, AnEquivalentWhoseRecordIsNotWrittenYetDoesNotStopAnotherDaemon) {
  auto a_store = OpenRedis();
  auto b_store = OpenRedis();
  ASSERT_NE(a_store, nullptr);
  ASSERT_NE(b_store, nullptr);
  auto* a = dynamic_cast<RedisClusterStore*>(a_store.get());
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a_store->OpenSweep("crawl", 1000).ok());
  const Content base = Near(0, 200, 0);
  Content lex = base;
  lex.variant = 1;  // other bytes, the same tokens
  const PageInput near_a = Page(Url(0, "near-a"), 1, 1001, Near(0, 195, 1));
  const PageInput base_page = Page(Url(0, "base"), 1, 1002, base);
  const PageInput lex_page = Page(Url(0, "lexical"), 1, 1003, lex);
  auto first = a->Apply({&near_a, 1});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // Rounds: the sweeps, the URLs, the versions, the identical claim, the lexical and shingle
  // claims; the sixth would write the record.
  a->FailAtRoundForTesting(6);
  auto failed = a->Apply({&base_page, 1});
  ASSERT_EQ(failed.status().code(), StatusCode::kUnavailable) << failed.status().ToString();

  auto lexical = b_store->Apply({&lex_page, 1});
  ASSERT_TRUE(lexical.ok()) << lexical.status().ToString();
  const PageResult& l = (*lexical)[0];
  ASSERT_TRUE(l.status.ok()) << l.status.ToString();
  EXPECT_EQ(store::VerdictName(l.verdict), "duplicate");
  const store::DocId near_doc = (*first)[0].doc;
  store::DocId equivalent = 0;
  bool matched_near = false;
  for (const store::Match& m : l.matches) {
    if (m.relation == store::Relation::kLexical) equivalent = m.doc;
    if (m.doc == near_doc) matched_near = true;
  }
  EXPECT_NE(equivalent, 0u) << "no lexical match";
  EXPECT_TRUE(matched_near) << "the near-copy was not judged";

  auto again = a->Apply({&base_page, 1});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)[0].doc, equivalent);
  for (store::DocId d : {near_doc, equivalent, l.doc}) {
    auto info = b_store->Document(d);
    ASSERT_TRUE(info.ok()) << d << ": " << info.status().ToString();
    auto near_info = b_store->Document(near_doc);
    ASSERT_TRUE(near_info.ok());
    EXPECT_EQ(info->cluster, near_info->cluster) << "document " << d;
  }
  auto check = b_store->Check();
  ASSERT_TRUE(check.ok());
  for (const std::string& p : *check) ADD_FAILURE() << p;
}

}  // namespace
}  // namespace shingled::redis::testing
