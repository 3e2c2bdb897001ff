// Takedowns on the Redis Cluster backend against the LMDB store's: the same pages and the same
// takedown leave the same URLs, documents, clusters and counts, also when the takedown is cut
// short at any of its write rounds and run again (redis/backend_forget.cc). Then what is the
// cluster's own: the memory goes with what is forgotten (no key left of a store taken down
// whole; the state levels off under retention), and a takedown or a retention pass killed
// (SIGKILL) in a process of its own completes when run again. The behaviours both engines share
// are the conformance tests of tests/store/forget_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "redis/backend_store.h"
#include "tests/redis/backend_fixture.h"
#include "tests/store/kill_child.h"

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

// The count shards (`{V<shard>}`): the counters of the URLs, versions and documents, and each
// sweep's counts, a few fields a shard.
bool IsCountShard(const std::string& key) {
  static const std::regex count_shard(R"(\{V[0-9a-f]+\})");
  return std::regex_match(key, count_shard);
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
  for (const std::string& key : KeysOf(*client)) {
    if (before.contains(key) || kept.contains(key) || IsCountShard(key)) continue;
    ADD_FAILURE() << "left: " << key;
  }
}

// The state's memory but the count shards': every key's MEMORY USAGE (its own allocations, not
// the allocator's pages nor the keyspace's tables, which move with what else the server did),
// summed over the masters.
uint64_t StateBytes(ClusterClient& client) {
  std::vector<Command> usage;
  for (const std::string& key : KeysOf(client)) {
    if (!IsCountShard(key))
      usage.push_back(Command{.args = {"MEMORY", "USAGE", key, "SAMPLES", "0"}, .key_index = 2});
  }
  auto got = client.Pipeline(usage);
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  uint64_t bytes = 0;
  for (const Reply& r : got.ok() ? *got : std::vector<Reply>{}) bytes += r.integer;
  return bytes;
}

// The sweeps that have counts in the count shards.
std::set<std::string> CountedSweeps(ClusterClient& client) {
  std::vector<Command> reads;
  for (const std::string& key : KeysOf(client)) {
    if (IsCountShard(key)) reads.push_back(Command{.args = {"HKEYS", key}});
  }
  auto got = client.Pipeline(reads);
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  std::set<std::string> sweeps;
  for (const Reply& fields : got.ok() ? *got : std::vector<Reply>{}) {
    for (const Reply& f : fields.elements) {
      if (const size_t dot = f.str.find('.'); dot != std::string::npos)
        sweeps.insert(f.str.substr(0, dot));
    }
  }
  return sweeps;
}

// A steady load: every sweep sees the same URLs with new content. Keeping the last 5 sweeps, the
// state levels off (measured: 2.09 MB after sweep 10, 2.09 after 20), and the count shards keep
// only the kept sweeps' counts (each shard also keeps a documents count, which a removed
// document leaves in the shard of its id); keeping all, it grows with every sweep.
TEST_F(BackendForgetTest, UnderASteadyLoadTheMemoryLevelsOff) {
  constexpr int kSweeps = 20, kUrls = 100;
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  auto run = [&](bool retention) {
    EXPECT_TRUE(client->RunOnMasters({"FLUSHALL"}).ok());
    auto store = OpenRedis();
    std::vector<uint64_t> sizes;
    for (int s = 0; s < kSweeps && store != nullptr; ++s) {
      const int64_t date = 1000 * (s + 1);
      const store::SweepId id = store->OpenSweep("sweep" + std::to_string(s), date)->id;
      std::vector<PageInput> pages;
      for (int u = 0; u < kUrls; ++u) {
        pages.push_back(Page("https://steady.example/" + std::to_string(u), id, date,
                             Near(kUrls * s + u, 200, 0)));
      }
      EXPECT_TRUE(store->Apply(pages).ok());
      for (bool done = !retention; !done;) {
        StatusOr<store::RetentionStep> step =
            store->ApplyRetention({.now = date, .max_version_age = 4500, .max_urls = 50});
        EXPECT_TRUE(step.ok()) << step.status().ToString();
        done = !step.ok() || step->pass_done;
      }
      sizes.push_back(StateBytes(*client));
    }
    if (store == nullptr) return sizes;
    if (retention) {
      EXPECT_EQ(store->Stats()->versions, kUrls * 5u);
      EXPECT_EQ(CountedSweeps(*client), (std::set<std::string>{"16", "17", "18", "19", "20"}));
    }
    ExpectChecked(*store);
    return sizes;
  };
  const std::vector<uint64_t> kept = run(true);
  const std::vector<uint64_t> all = run(false);
  ASSERT_EQ(kept.size(), size_t{kSweeps});
  ASSERT_EQ(all.size(), size_t{kSweeps});
  std::printf("state bytes after sweeps 10 and 20: retention %lu %lu; none %lu %lu\n", kept[9],
              kept[19], all[9], all[19]);
  EXPECT_LE(kept[19], kept[9] * 101 / 100) << "the state still grows under retention";
  EXPECT_GT(all[19], all[9] * 15 / 10);
}

// A takedown and a retention pass killed (SIGKILL) at random moments in a process of their own.
class KillTest : public BackendForgetTest {
 protected:
  static constexpr int kUrls = 600;
  static std::string UrlOf(int i) {
    return std::string(i % 4 == 0 ? "http://keep.crash/" : "http://forget.crash/") +
           std::to_string(i);
  }
  // A quarter of the URLs on keep.crash and the rest on forget.crash, near copies across both,
  // in a sweep at date 1000; then the keep.crash URLs again with new content at date 100,000.
  void Fill() {
    auto store = OpenRedis();
    ASSERT_NE(store, nullptr);
    for (int round = 0; round < 2; ++round) {
      const int64_t date = round == 0 ? 1000 : 100000;
      StatusOr<store::SweepInfo> sweep = store->OpenSweep("s" + std::to_string(round), date);
      ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
      std::vector<PageInput> pages;
      for (int i = 0; i < kUrls; ++i) {
        if (round == 1 && i % 4 != 0) continue;
        pages.push_back(Page(UrlOf(i), sweep->id, date,
                             Near(i % 50, 185 + i % 15, static_cast<uint64_t>(i + 1000 * round))));
      }
      for (size_t b = 0; b < pages.size(); b += 100) {
        std::span<const PageInput> batch(pages.data() + b, std::min<size_t>(100, pages.size() - b));
        ASSERT_TRUE(store->Apply(batch).ok());
      }
    }
  }

  // Runs `step` (one bounded call, answering whether more is left) in a child process, with
  // connections of its own, until nothing is left, and kills the child at a random moment; up to
  // 10 rounds, until a child finishes. After each kill the forgetter lease the child held is run
  // out (its 40 s, spent at once), the store opens, and Check finds nothing, or first the
  // takedown `what` cut short (its fence still stands). Returns the steps the children finished.
  template <typename Step>
  int KillWhileRunning(const std::string& what, Step step, bool* finished) {
    auto client = NewClient();
    std::mt19937 rng(20261205);
    int acknowledged = 0;
    *finished = false;
    for (int round = 0; round < 10 && !*finished && client != nullptr; ++round) {
      const store::testing::KilledChild child = store::testing::KillChildAtRandom(
          rng, 5000, 150000, [&] { return OpenRedisClusterStore(RedisOptions(), {}, *context_); },
          step);
      *finished = child.finished;
      acknowledged += child.acknowledged;
      EXPECT_TRUE(client->Run(Cmd({"PEXPIRE", "{w}forgetter", "1"})).ok());
      usleep(5000);
      auto store = OpenRedis();
      if (store == nullptr) return acknowledged;
      StatusOr<std::vector<std::string>> problems = store->Check();
      EXPECT_TRUE(problems.ok()) << problems.status().ToString();
      if (problems.ok() && !problems->empty()) {
        ++cut_short_;
        EXPECT_EQ(problems->front().rfind("a takedown (" + what + ") was cut short", 0), 0u)
            << "round " << round << ": " << problems->front();
      }
    }
    return acknowledged;
  }

  int cut_short_ = 0;  // kills that left a step cut short (its fence standing)
};

TEST_F(KillTest, ATakedownKilledAtRandomMomentsCompletesWhenRunAgain) {
  Fill();
  const store::ForgetOptions forget{
      .scope = store::ForgetScope::kHost, .value = "forget.crash", .date = 5000, .max_urls = 40};
  bool finished = false;
  const int acknowledged = KillWhileRunning(
      "host forget.crash",
      [&](store::Store& s) -> StatusOr<bool> {
        StatusOr<store::ForgetResult> r = s.Forget(forget);
        if (!r.ok()) return r.status();
        return r->more;
      },
      &finished);
  std::printf("%d acknowledged steps of the takedown, %d cut short (%s)\n", acknowledged,
              cut_short_, finished ? "a child finished it" : "every child killed");
  EXPECT_GT(cut_short_, 0) << "no kill landed inside a step";
  auto store = OpenRedis();
  ASSERT_NE(store, nullptr);
  StatusOr<std::vector<store::ForgetRecord>> records = store->ForgetRecords();
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  EXPECT_GE(records->size(), static_cast<size_t>(acknowledged));
  for (bool more = true; more;) {
    StatusOr<store::ForgetResult> step = store->Forget(forget);
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    more = step->more;
  }
  for (int i = 0; i < kUrls; ++i) EXPECT_EQ(store->History(UrlOf(i)).ok(), i % 4 == 0) << UrlOf(i);
  StatusOr<store::StoreStats> stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->urls, kUrls / 4u);
  EXPECT_EQ(stats->versions, kUrls / 2u);
  ExpectChecked(*store);
}

TEST_F(KillTest, ARetentionPassKilledAtRandomMomentsCompletesWhenRunAgain) {
  Fill();
  const store::RetentionOptions rules{.now = 200000, .max_version_age = 1000, .max_urls = 40};
  bool finished = false;
  const int acknowledged = KillWhileRunning(
      "retention " + store::RetentionRulesText(rules),
      [&](store::Store& s) -> StatusOr<bool> {
        StatusOr<store::RetentionStep> r = s.ApplyRetention(rules);
        if (!r.ok()) return r.status();
        return !r->pass_done;
      },
      &finished);
  std::printf("%d acknowledged steps of the retention pass, %d cut short (%s)\n", acknowledged,
              cut_short_, finished ? "a child finished it" : "every child killed");
  EXPECT_GT(cut_short_, 0) << "no kill landed inside a step";
  auto store = OpenRedis();
  ASSERT_NE(store, nullptr);
  for (bool done = finished; !done;) {
    StatusOr<store::RetentionStep> step = store->ApplyRetention(rules);
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    done = step->pass_done;
  }
  // Every URL keeps its last version only.
  StatusOr<store::StoreStats> stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->urls, static_cast<uint64_t>(kUrls));
  EXPECT_EQ(stats->versions, static_cast<uint64_t>(kUrls));
  for (int i = 0; i < kUrls; i += 4) {
    StatusOr<std::vector<store::UrlVersion>> history = store->History(UrlOf(i));
    ASSERT_TRUE(history.ok());
    ASSERT_EQ(history->size(), 1u);
    EXPECT_EQ(history->front().date, 100000);
  }
  StatusOr<std::vector<store::ForgetRecord>> records = store->ForgetRecords();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ(records->front().scope, store::ForgetScope::kRetention);
  EXPECT_EQ(records->front().versions, kUrls / 4u);
  ExpectChecked(*store);
}

}  // namespace
}  // namespace shingled::redis::testing
