// Takedowns on the Redis Cluster backend against the LMDB store's: the same pages and the same
// takedown leave the same URLs, documents, clusters and counts, also when the takedown is cut
// short at any of its write rounds and run again (redis/backend_forget.cc). The behaviours both
// engines share are the conformance tests of tests/store/forget_test.cc.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "redis/backend_store.h"
#include "tests/redis/backend_fixture.h"

namespace shingled::redis::testing {
namespace {

using store::PageInput;

// The state a takedown leaves, as both engines answer it: the counts, each URL's versions, and
// each remaining document's cluster.
struct Outcome {
  store::StoreStats stats;
  std::vector<std::string> histories;  // "url: doc/verdict ..." per URL ("url: -" when unknown)
  std::vector<std::string> clusters;   // "doc: members" per document of a version
};

Outcome OutcomeOf(const store::Store& s, const std::vector<PageInput>& pages) {
  Outcome out;
  StatusOr<store::StoreStats> stats = s.Stats();
  EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  if (stats.ok()) out.stats = *stats;
  std::set<std::string> urls;
  for (const PageInput& p : pages) urls.insert(p.url);
  std::set<store::DocId> docs;
  for (const std::string& url : urls) {
    std::string line = url + ":";
    StatusOr<std::vector<store::UrlVersion>> h = s.History(url);
    if (!h.ok()) line += " -";
    for (const store::UrlVersion& v : h.ok() ? *h : std::vector<store::UrlVersion>{}) {
      line += " " + std::to_string(v.doc) + "/" + std::string(store::VerdictName(v.verdict));
      if (v.doc != 0) docs.insert(v.doc);
    }
    out.histories.push_back(line);
  }
  for (store::DocId d : docs) {
    std::string line = std::to_string(d) + ":";
    StatusOr<store::ClusterInfo> c = s.Cluster(d);
    if (!c.ok()) line += " " + c.status().ToString();
    for (const store::ClusterMember& m : c.ok() ? c->members : std::vector<store::ClusterMember>{})
      line += " " + std::to_string(m.doc);
    out.clusters.push_back(line);
  }
  return out;
}

void ExpectSame(const Outcome& lmdb, const Outcome& redis) {
  EXPECT_EQ(lmdb.stats.documents, redis.stats.documents);
  EXPECT_EQ(lmdb.stats.urls, redis.stats.urls);
  EXPECT_EQ(lmdb.stats.versions, redis.stats.versions);
  EXPECT_EQ(lmdb.stats.clusters, redis.stats.clusters);
  EXPECT_EQ(lmdb.stats.largest_cluster, redis.stats.largest_cluster);
  EXPECT_EQ(lmdb.histories, redis.histories);
  EXPECT_EQ(lmdb.clusters, redis.clusters);
}

void ExpectChecked(const store::Store& s) {
  StatusOr<std::vector<std::string>> problems = s.Check();
  ASSERT_TRUE(problems.ok()) << problems.status().ToString();
  for (const std::string& p : *problems) ADD_FAILURE() << p;
}

// Families of near-copies on a few hosts; the takedown forgets one host: documents go, others
// stay, and the clusters those leave are recomputed.
class BackendForgetTest : public BackendTest {
 protected:
  std::vector<PageInput> Pages() const {
    std::vector<PageInput> pages = Corpus(20)[0];
    for (PageInput& p : pages) p.sweep = 1;
    return pages;
  }
  static store::ForgetOptions Host(const std::string& host) {
    return {.scope = store::ForgetScope::kHost, .value = host, .date = 5000};
  }
};

TEST_F(BackendForgetTest, ATakedownLeavesWhatLmdbsLeaves) {
  const std::vector<PageInput> pages = Pages();
  auto lmdb = OpenLmdb();
  auto redis = OpenRedis();
  ASSERT_TRUE(lmdb && redis);
  for (store::Store* s : {lmdb.get(), redis.get()}) {
    ASSERT_TRUE(s->OpenSweep("s1", 1000).ok());
    ASSERT_TRUE(s->Apply(pages).ok());
  }
  ExpectSame(OutcomeOf(*lmdb, pages), OutcomeOf(*redis, pages));
  for (const std::string host : {"h3.example", "h1.example"}) {
    StatusOr<store::ForgetResult> a = lmdb->Forget(Host(host));
    StatusOr<store::ForgetResult> b = redis->Forget(Host(host));
    ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
    EXPECT_GT(a->urls, 0u);
    EXPECT_EQ(a->urls, b->urls);
    EXPECT_EQ(a->documents, b->documents);
    EXPECT_EQ(a->clusters_split, b->clusters_split);
    ExpectSame(OutcomeOf(*lmdb, pages), OutcomeOf(*redis, pages));
    ExpectChecked(*redis);
  }
  StatusOr<std::vector<store::ForgetRecord>> records = redis->ForgetRecords();
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[1].id, 2u);
  EXPECT_EQ((*records)[1].scope, store::ForgetScope::kHost);
  // Pages after the takedowns: the forgotten URLs come back as new URLs.
  for (store::Store* s : {lmdb.get(), redis.get()}) ASSERT_TRUE(s->Apply(pages).ok());
  ExpectSame(OutcomeOf(*lmdb, pages), OutcomeOf(*redis, pages));
  ExpectChecked(*redis);
}

// Cut short at each of its write rounds in turn (a kill, a lost connection): Check names the
// takedown and the writers are held off until it runs again; run again, it completes, and the
// store is as LMDB's after the same takedown run whole.
TEST_F(BackendForgetTest, ATakedownCutShortAtAnyRoundCompletesWhenRunAgain) {
  const std::vector<PageInput> pages = Pages();
  auto lmdb = OpenLmdb();
  ASSERT_NE(lmdb, nullptr);
  ASSERT_TRUE(lmdb->OpenSweep("s1", 1000).ok());
  ASSERT_TRUE(lmdb->Apply(pages).ok());
  ASSERT_TRUE(lmdb->Forget(Host("h1.example")).ok());
  const Outcome expected = OutcomeOf(*lmdb, pages);
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  int cut = 0;
  for (int round = 1; round < 40; ++round) {
    SCOPED_TRACE("cut at round " + std::to_string(round));
    ASSERT_TRUE(client->RunOnMasters({"FLUSHALL"}).ok());
    auto store = OpenRedis();
    ASSERT_NE(store, nullptr);
    auto* redis = dynamic_cast<RedisClusterStore*>(store.get());
    ASSERT_TRUE(store->OpenSweep("s1", 1000).ok());
    ASSERT_TRUE(store->Apply(pages).ok());
    redis->FailAtRoundForTesting(round);
    StatusOr<store::ForgetResult> first = store->Forget(Host("h1.example"));
    if (first.ok()) break;  // the takedown has fewer rounds than that
    ASSERT_EQ(first.status().code(), StatusCode::kUnavailable) << first.status().ToString();
    // A failure in the rounds that plan it (reads) writes nothing, and the writers go on.
    StatusOr<std::vector<std::string>> problems = store->Check();
    ASSERT_TRUE(problems.ok());
    if (problems->empty()) continue;
    EXPECT_EQ(problems->front().rfind("a takedown (host h1.example) was cut short", 0), 0u)
        << problems->front();
    if (++cut == 1) {
      // Held off: another takedown, and a page (after waiting a few seconds for the fence).
      EXPECT_EQ(store->Forget(Host("h2.example")).status().code(), StatusCode::kFailedPrecondition);
      StatusOr<std::vector<store::PageResult>> page = store->Apply({pages.data(), 1});
      EXPECT_EQ(page.status().code(), StatusCode::kUnavailable);
      EXPECT_NE(page.status().message().find("host h1.example"), std::string::npos)
          << page.status().ToString();
    }
    StatusOr<store::ForgetResult> again = store->Forget(Host("h1.example"));
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_NE(again->record, 0u);
    ExpectChecked(*store);
    ExpectSame(expected, OutcomeOf(*store, pages));
    ASSERT_TRUE(store->Apply(pages).ok());  // the writers are back
  }
  EXPECT_GE(cut, 8);
}

// A retention step cut short at each of its write rounds in turn: run again (the next step), it
// completes, and the store is as LMDB's after the same step run whole.
TEST_F(BackendForgetTest, ARetentionStepCutShortAtAnyRoundCompletesWhenRunAgain) {
  const std::vector<std::vector<PageInput>> corpus = Corpus(12);
  std::vector<PageInput> pages = corpus[0];
  pages.insert(pages.end(), corpus[1].begin(), corpus[1].end());
  const store::RetentionOptions rules{.now = 2600, .max_version_age = 1000, .max_urls = 100000};
  auto fill = [&](store::Store& s) {
    ASSERT_TRUE(s.OpenSweep("s1", 1000).ok());
    ASSERT_TRUE(s.OpenSweep("s2", 2000).ok());
    ASSERT_TRUE(s.Apply(corpus[0]).ok());
    ASSERT_TRUE(s.Apply(corpus[1]).ok());
  };
  auto lmdb = OpenLmdb();
  ASSERT_NE(lmdb, nullptr);
  fill(*lmdb);
  StatusOr<store::RetentionStep> whole = lmdb->ApplyRetention(rules);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_TRUE(whole->pass_done);
  ASSERT_GT(whole->versions, 0u);
  const Outcome expected = OutcomeOf(*lmdb, pages);
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  int cut = 0;
  for (int round = 1; round < 40; ++round) {
    SCOPED_TRACE("cut at round " + std::to_string(round));
    ASSERT_TRUE(client->RunOnMasters({"FLUSHALL"}).ok());
    auto store = OpenRedis();
    ASSERT_NE(store, nullptr);
    fill(*store);
    dynamic_cast<RedisClusterStore*>(store.get())->FailAtRoundForTesting(round);
    StatusOr<store::RetentionStep> first = store->ApplyRetention(rules);
    if (first.ok()) {
      EXPECT_EQ(first->versions, whole->versions);
      ExpectSame(expected, OutcomeOf(*store, pages));
      break;
    }
    StatusOr<std::vector<std::string>> problems = store->Check();
    ASSERT_TRUE(problems.ok());
    if (!problems->empty()) {
      ++cut;
      EXPECT_EQ(problems->front().rfind("a takedown (retention ", 0), 0u) << problems->front();
    }
    StatusOr<store::RetentionStep> again = store->ApplyRetention(rules);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_TRUE(again->pass_done);
    ExpectChecked(*store);
    ExpectSame(expected, OutcomeOf(*store, pages));
    StatusOr<std::vector<store::ForgetRecord>> records = store->ForgetRecords();
    ASSERT_TRUE(records.ok());
    EXPECT_EQ(records->size(), 1u);
  }
  EXPECT_GE(cut, 5);
}

// Another daemon applies pages while takedowns run: its writes wait for each takedown (or fail
// retryably, and are sent again), and nothing of either is lost.
TEST_F(BackendForgetTest, WritersWaitForATakedownAndLoseNothing) {
  const std::vector<PageInput> pages = Pages();
  auto forgetter = OpenRedis();
  ASSERT_NE(forgetter, nullptr);
  ASSERT_TRUE(forgetter->OpenSweep("s1", 1000).ok());
  ASSERT_TRUE(forgetter->Apply(pages).ok());
  // The other daemon's pages: other families, on a host the takedowns leave alone.
  std::vector<PageInput> others;
  const std::vector<std::vector<PageInput>> corpus = Corpus(40);
  for (const PageInput& p : corpus[0]) {
    if (p.url.find("/f2") != std::string::npos || p.url.find("/f3") != std::string::npos) {
      others.push_back(p);
      others.back().sweep = 1;
      others.back().url = "https://other.example/" + p.url.substr(p.url.find(".example/") + 9);
    }
  }
  ASSERT_GT(others.size(), 40u);
  std::thread writer([&] {
    auto store = OpenRedis();
    ASSERT_NE(store, nullptr);
    for (size_t i = 0; i < others.size(); i += 4) {
      std::span<const PageInput> batch(others.data() + i, std::min<size_t>(4, others.size() - i));
      StatusOr<std::vector<store::PageResult>> r = store->Apply(batch);
      for (int attempt = 0; !r.ok() && attempt < 20; ++attempt) {
        ASSERT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
        r = store->Apply(batch);
      }
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  });
  for (const std::string host : {"h1.example", "h4.example", "h6.example", "h8.example"}) {
    StatusOr<store::ForgetResult> r = forgetter->Forget(Host(host));
    ASSERT_TRUE(r.ok()) << host << ": " << r.status().ToString();
  }
  writer.join();
  ExpectChecked(*forgetter);
  for (const PageInput& p : others) EXPECT_TRUE(forgetter->History(p.url).ok()) << p.url;
  for (const PageInput& p : pages) {
    if (p.url.find("://h1.example/") != std::string::npos) {
      EXPECT_FALSE(forgetter->History(p.url).ok()) << p.url;
    }
  }
}

// The keys on every master.
std::set<std::string> KeysOf(ClusterClient& client) {
  std::set<std::string> keys;
  auto got = client.RunOnMasters({"KEYS", "*"});
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  if (!got.ok()) return keys;
  for (const auto& [node, reply] : *got) {
    for (const Reply& k : reply.elements) keys.insert(k.str);
  }
  return keys;
}

// Every URL of three sweeps taken down, host by host: every key their pages made goes (postings
// of every relation, claims, records, chunks, URL names and lists, versions, clusters), and what
// stays is what the state had before its first page, its counters (the shards' counts keep the
// sweeps' figures), and the forget records.
TEST_F(BackendForgetTest, TakingDownEveryUrlLeavesTheKeysOfAnEmptyState) {
  auto redis = OpenRedis();
  auto client = NewClient();
  ASSERT_TRUE(redis && client);
  for (const char* name : {"s1", "s2", "s3"}) ASSERT_TRUE(redis->OpenSweep(name, 1000).ok());
  const std::set<std::string> before = KeysOf(*client);
  std::vector<std::vector<PageInput>> sweeps = Corpus(20);
  for (int i = 0; i < 20; ++i)  // near-copies enough to spill their shared super shingles' lists
    sweeps[0].push_back(Page(Url(0, "many" + std::to_string(i)), 1, 1000, Near(0, 198, 10 + i)));
  std::set<std::string> hosts;
  for (const std::vector<PageInput>& sweep : sweeps) {
    ASSERT_TRUE(redis->Apply(sweep).ok());
    for (const PageInput& p : sweep) hosts.insert(p.url.substr(8, p.url.find('/', 8) - 8));
  }
  // Some super shingle lists spilled to a key of their own (the bucket key, then the field).
  size_t spilled = 0;
  for (const std::string& key : KeysOf(*client))
    spilled += key.starts_with("{s") && key.find('}') + 1 < key.size();
  EXPECT_GT(spilled, 0u);
  for (const std::string& host : hosts) {
    StatusOr<store::ForgetResult> r = redis->Forget(Host(host));
    ASSERT_TRUE(r.ok()) << host << ": " << r.status().ToString();
    EXPECT_GT(r->urls, 0u) << host;
  }
  ExpectChecked(*redis);
  StatusOr<store::StoreStats> stats = redis->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->documents, 0u);
  EXPECT_EQ(stats->urls, 0u);
  EXPECT_EQ(stats->versions, 0u);
  EXPECT_EQ(stats->clusters, 0u);
  const std::set<std::string> kept = {"next:doc", "next:url", "next:forget", "forgets", "stats"};
  const std::regex count_shard(R"(\{V[0-9a-f]+\})");
  for (const std::string& key : KeysOf(*client)) {
    if (before.contains(key) || kept.contains(key) || std::regex_match(key, count_shard)) continue;
    ADD_FAILURE() << "left: " << key;
  }
}

}  // namespace
}  // namespace shingled::redis::testing
