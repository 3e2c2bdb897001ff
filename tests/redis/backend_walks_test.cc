// The walks of the Redis backend (redis/backend_walks.cc: KnownUrls, CloseSweep, ReopenSweep)
// against the LMDB store, on a real 3-master cluster: the same sweeps closed and reopened give
// the same answers; a close or a reopen run again after a failure halfway writes (removes) each
// gone version once; a close while another daemon appends versions never overwrites one.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "redis/backend.h"
#include "redis/backend_store.h"
#include "tests/redis/backend_fixture.h"

namespace shingled::redis::testing {
namespace {

using store::PageInput;
using store::SweepId;

void ExpectSameSweep(const store::SweepInfo& x, const store::SweepInfo& y) {
  SCOPED_TRACE("sweep " + x.name);
  EXPECT_EQ(x.id, y.id);
  EXPECT_EQ(x.name, y.name);
  EXPECT_EQ(x.start, y.start);
  EXPECT_EQ(x.end, y.end);
  EXPECT_EQ(x.open, y.open);
  EXPECT_EQ(x.pages, y.pages);
  EXPECT_EQ(x.new_docs, y.new_docs);
  EXPECT_EQ(x.unchanged, y.unchanged);
  EXPECT_EQ(x.duplicate, y.duplicate);
  EXPECT_EQ(x.near_duplicate, y.near_duplicate);
  EXPECT_EQ(x.gone, y.gone);
  EXPECT_EQ(x.scope, y.scope);
}

void ExpectSameClosing(const StatusOr<store::SweepClosing>& a,
                       const StatusOr<store::SweepClosing>& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.status().code(), b.status().code())
      << a.status().ToString() << " / " << b.status().ToString();
  if (!a.ok()) return;
  EXPECT_EQ(a->gone, b->gone);
  EXPECT_EQ(a->gone_urls, b->gone_urls);
  ExpectSameSweep(a->sweep, b->sweep);
}

void ExpectSameSweeps(const store::Store& lmdb, const store::Store& redis) {
  auto a = lmdb.Sweeps();
  auto b = redis.Sweeps();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) ExpectSameSweep((*a)[i], (*b)[i]);
}

void ExpectSameHistories(const store::Store& lmdb, const store::Store& redis,
                         const std::set<std::string>& urls) {
  for (const std::string& url : urls) {
    auto ha = lmdb.History(url);
    auto hb = redis.History(url);
    ASSERT_EQ(ha.ok(), hb.ok()) << url;
    if (!ha.ok()) continue;
    ASSERT_EQ(ha->size(), hb->size()) << url;
    for (size_t i = 0; i < ha->size(); ++i) {
      const store::UrlVersion& x = (*ha)[i];
      const store::UrlVersion& y = (*hb)[i];
      EXPECT_EQ(x.seq, y.seq) << url;
      EXPECT_EQ(x.sweep, y.sweep) << url;
      EXPECT_EQ(x.date, y.date) << url;
      EXPECT_EQ(x.doc, y.doc) << url;
      EXPECT_EQ(x.http_status, y.http_status) << url;
      EXPECT_EQ(x.verdict, y.verdict) << url;
    }
  }
}

// Every answer of KnownUrls paged `max_urls` at a time: the URLs visited and the cursors.
std::pair<std::vector<std::string>, std::vector<store::UrlId>> KnownUrlsPaged(const store::Store& s,
                                                                              size_t max_urls) {
  std::vector<std::string> live;
  std::vector<store::UrlId> cursors;
  store::UrlId after = 0;
  do {
    auto next = s.KnownUrls(after, max_urls, [&](std::string_view u) { live.emplace_back(u); });
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    if (!next.ok()) break;
    after = *next;
    cursors.push_back(after);
  } while (after != 0);
  return {live, cursors};
}

void ExpectChecked(const store::Store& lmdb, const store::Store& redis) {
  auto ka = lmdb.Check();
  auto kb = redis.Check();
  ASSERT_TRUE(ka.ok() && kb.ok());
  for (const std::string& p : *ka) ADD_FAILURE() << "LMDB: " << p;
  for (const std::string& p : *kb) ADD_FAILURE() << "Redis: " << p;
}

class WalksTest : public BackendTest {
 protected:
  // The corpus's three sweeps, and in the first one pages dated after the second one's start
  // (a WARC's dates), which a close of the second one at an earlier end must leave alone.
  std::vector<std::vector<PageInput>> Sweeps(int families) const {
    auto sweeps = Corpus(families);
    for (int f = 0; f < families; f += 3) {
      sweeps[0].push_back(Page(Url(f, "late"), 1, 2500 + f, Near(f, 150, 8)));
    }
    return sweeps;
  }
  // Applies `pages` to both stores in batches of 40, the same results' statuses.
  void ApplyBoth(store::Store& lmdb, store::Store& redis, const std::vector<PageInput>& pages,
                 std::set<std::string>* urls) {
    for (size_t i = 0; i < pages.size(); i += 40) {
      std::span<const PageInput> batch(pages.data() + i, std::min<size_t>(40, pages.size() - i));
      auto a = lmdb.Apply(batch);
      auto b = redis.Apply(batch);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      for (size_t j = 0; j < batch.size(); ++j) {
        ASSERT_EQ((*a)[j].status.code(), (*b)[j].status.code()) << batch[j].url;
        if (urls != nullptr) urls->insert(batch[j].url);
      }
    }
  }
};

TEST_F(WalksTest, ClosesReopensAndKnownUrlsAnswerAsLmdb) {
  auto lmdb = OpenLmdb();
  auto redis = OpenRedis();
  ASSERT_NE(lmdb, nullptr);
  ASSERT_NE(redis, nullptr);
  const std::vector<std::pair<int64_t, std::vector<std::string>>> opened = {
      {1000, {"https://h"}},
      // A prefix inside another ("https://h1.example/" in "https://h1").
      {2000, {"https://h1", "https://h1.example/", "https://h2.example/", "https://h3.example/f3"}},
      {3000, {"https://h0.example/", "https://h4.example/", "https://h5.example/"}}};
  for (size_t i = 0; i < opened.size(); ++i) {
    const std::string name = "s" + std::to_string(i + 1);
    auto a = lmdb->OpenSweep(name, opened[i].first, opened[i].second);
    auto b = redis->OpenSweep(name, opened[i].first, opened[i].second);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
    ASSERT_EQ(a->id, b->id);
  }
  std::set<std::string> urls;
  for (const auto& sweep : Sweeps(60)) {
    ApplyBoth(*lmdb, *redis, sweep, &urls);
    if (HasFatalFailure()) return;
  }
  auto same = [&](const std::string& what) {
    SCOPED_TRACE(what);
    ExpectSameSweeps(*lmdb, *redis);
    ExpectSameHistories(*lmdb, *redis, urls);
    for (size_t max : {size_t{1}, size_t{7}, size_t{10000}, SIZE_MAX}) {
      EXPECT_EQ(KnownUrlsPaged(*lmdb, max), KnownUrlsPaged(*redis, max)) << "max_urls " << max;
    }
  };
  same("before any close");
  {
    const auto [live, cursors] = KnownUrlsPaged(*redis, 7);
    EXPECT_GT(live.size(), 400u);
    EXPECT_GT(cursors.size(), 60u);
  }
  EXPECT_EQ(redis->KnownUrls(0, 0, [](std::string_view) {}).status().code(),
            StatusCode::kInvalidArgument);

  // Refusals.
  ExpectSameClosing(lmdb->CloseSweep(99, 5000), redis->CloseSweep(99, 5000), "unknown sweep");
  ExpectSameClosing(lmdb->CloseSweep(2, 1500), redis->CloseSweep(2, 1500), "end before start");
  EXPECT_EQ(redis->CloseSweep(2, 1500).status().message(),
            lmdb->CloseSweep(2, 1500).status().message());
  EXPECT_EQ(lmdb->ReopenSweep(2).status().code(), redis->ReopenSweep(2).status().code());
  EXPECT_EQ(lmdb->ReopenSweep(99).status().code(), redis->ReopenSweep(99).status().code());

  store::Store::CloseSweepOptions dry;
  dry.dry_run = true;
  dry.list_limit = 5;
  store::Store::CloseSweepOptions listed;
  listed.list_limit = 100000;

  // The newest sweep first: a dry run (the first 5 in URL order), then the close.
  ExpectSameClosing(lmdb->CloseSweep(3, 3100, dry), redis->CloseSweep(3, 3100, dry), "dry s3");
  same("after a dry run");
  const ClusterStats stats_before = dynamic_cast<const RedisClusterStore&>(*redis).client_stats();
  const auto t0 = std::chrono::steady_clock::now();
  auto c3 = redis->CloseSweep(3, 3100, listed);
  const auto t1 = std::chrono::steady_clock::now();
  const ClusterStats stats_after = dynamic_cast<const RedisClusterStore&>(*redis).client_stats();
  ExpectSameClosing(lmdb->CloseSweep(3, 3100, listed), c3, "close s3");
  ASSERT_TRUE(c3.ok());
  EXPECT_GT(c3->gone, 20u);
  auto known = redis->Stats();
  ASSERT_TRUE(known.ok());
  std::printf("close of s3 over %llu URLs: %llu gone, %.0f ms, %llu pipelines, %llu commands\n",
              static_cast<unsigned long long>(known->urls),
              static_cast<unsigned long long>(c3->gone),
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              static_cast<unsigned long long>(stats_after.pipelines - stats_before.pipelines),
              static_cast<unsigned long long>(stats_after.commands - stats_before.commands));
  same("s3 closed");
  ExpectSameClosing(lmdb->CloseSweep(3, 3200), redis->CloseSweep(3, 3200), "s3 again");
  {
    // A page of the closed sweep is refused on both.
    std::vector<PageInput> late = {Page(Url(0, "base"), 3, 3150, Near(0, 200, 0))};
    auto a = lmdb->Apply(late);
    auto b = redis->Apply(late);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ((*a)[0].status.code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ((*b)[0].status.code(), StatusCode::kFailedPrecondition);
  }

  // An older sweep after a newer one; the end leaves the pages dated after it; then without
  // the end's cut (a dry run) and with a filter.
  ExpectSameClosing(lmdb->CloseSweep(2, 2600, dry), redis->CloseSweep(2, 2600, dry),
                    "dry s2 at 2600");
  store::Store::CloseSweepOptions filtered = listed;
  filtered.may_be_gone = [](std::string_view u) { return u.find("near-c") == u.npos; };
  auto c2 = redis->CloseSweep(2, 2010, filtered);
  ExpectSameClosing(lmdb->CloseSweep(2, 2010, filtered), c2, "close s2 at 2010, filtered");
  ASSERT_TRUE(c2.ok());
  EXPECT_GT(c2->gone, 10u);
  same("s2 closed");

  // Reopened: its gone versions removed, counts back; closed again otherwise.
  auto ra = lmdb->ReopenSweep(2);
  auto rb = redis->ReopenSweep(2);
  ASSERT_TRUE(ra.ok() && rb.ok()) << ra.status().ToString() << rb.status().ToString();
  EXPECT_EQ(ra->removed, rb->removed);
  EXPECT_EQ(rb->removed, c2->gone);
  ExpectSameSweep(ra->sweep, rb->sweep);
  same("s2 reopened");
  store::Store::CloseSweepOptions three;
  three.list_limit = 3;
  ExpectSameClosing(lmdb->CloseSweep(2, 2600, three), redis->CloseSweep(2, 2600, three),
                    "close s2 at 2600");
  same("s2 closed again");

  // The oldest, after both newer ones.
  ExpectSameClosing(lmdb->CloseSweep(1, 2700, listed), redis->CloseSweep(1, 2700, listed),
                    "close s1");
  same("all closed");
  auto sa = lmdb->Stats();
  auto sb = redis->Stats();
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(sa->urls, sb->urls);
  EXPECT_EQ(sa->versions, sb->versions);
  EXPECT_EQ(sa->documents, sb->documents);
  ExpectChecked(*lmdb, *redis);
}

TEST_F(WalksTest, ACloseOrAReopenRunAgainAfterAFailureWritesEachGoneVersionOnce) {
  auto lmdb = OpenLmdb();
  auto redis_store = OpenRedis();
  ASSERT_NE(lmdb, nullptr);
  ASSERT_NE(redis_store, nullptr);
  auto* redis = dynamic_cast<RedisClusterStore*>(redis_store.get());
  ASSERT_NE(redis, nullptr);
  for (const char* name : {"s1", "s2"}) {
    const int64_t start = name[1] == '1' ? 1000 : 2000;
    ASSERT_TRUE(lmdb->OpenSweep(name, start, {"https://h"}).ok());
    ASSERT_TRUE(redis->OpenSweep(name, start, {"https://h"}).ok());
  }
  std::set<std::string> urls;
  auto sweeps = Sweeps(60);
  ApplyBoth(*lmdb, *redis, sweeps[0], &urls);
  ApplyBoth(*lmdb, *redis, sweeps[1], &urls);
  if (HasFatalFailure()) return;
  store::Store::CloseSweepOptions listed;
  listed.list_limit = 100000;
  // The close fails at its k-th round (names, versions, gone versions written with their counts:
  // three a block of 256 ids, then the sweep's record), then at a later one of the next attempt,
  // ...: each attempt starts from what the failed ones left. The sweep stays open until one ends.
  int failed = 0;
  StatusOr<store::SweepClosing> b = UnavailableError("not closed");
  for (int k : {3, 4, 5, 6, 7, 8, 9}) {
    redis->FailAtRoundForTesting(k);
    b = redis->CloseSweep(2, 2600, listed);
    if (b.ok()) break;
    ++failed;
    EXPECT_EQ(b.status().code(), StatusCode::kUnavailable) << b.status().ToString();
    auto s = redis->FindSweep("s2");
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->open) << "after a failure at round " << k;
  }
  EXPECT_GE(failed, 5);
  if (!b.ok()) b = redis->CloseSweep(2, 2600, listed);
  auto a = lmdb->CloseSweep(2, 2600, listed);
  ExpectSameClosing(a, b, "the close run again");
  ASSERT_TRUE(b.ok());
  EXPECT_GT(b->gone, 50u);
  ExpectSameSweeps(*lmdb, *redis);
  ExpectSameHistories(*lmdb, *redis, urls);
  ExpectChecked(*lmdb, *redis);
  // A reopen that fails after its first block (its versions read, then written), run again.
  redis->FailAtRoundForTesting(3);
  auto partial = redis->ReopenSweep(2);
  EXPECT_EQ(partial.status().code(), StatusCode::kUnavailable);
  auto s = redis->FindSweep("s2");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->open);
  auto ra = lmdb->ReopenSweep(2);
  auto rb = redis->ReopenSweep(2);
  ASSERT_TRUE(ra.ok() && rb.ok()) << rb.status().ToString();
  EXPECT_LT(rb->removed, ra->removed);  // the first attempt removed a block's
  ExpectSameSweep(ra->sweep, rb->sweep);
  ExpectSameSweeps(*lmdb, *redis);
  ExpectSameHistories(*lmdb, *redis, urls);
  ExpectChecked(*lmdb, *redis);
}

// Two daemons: one applies the pages of the newest sweep while the other closes an older one,
// again and again (reopening it between two batches). No version is overwritten or lost, no URL
// is recorded gone after a version of the newer sweep (a close decides on the versions as they
// stand when it appends), none twice; the final close, once the pages are in, leaves LMDB's
// histories, and the counts hold every version (Check).
TEST_F(WalksTest, ClosesAndReopensWhileAnotherDaemonAppendsOverwriteNothing) {
  auto lmdb = OpenLmdb();
  auto writer = OpenRedis();
  auto closer = OpenRedis();
  ASSERT_NE(lmdb, nullptr);
  ASSERT_NE(writer, nullptr);
  ASSERT_NE(closer, nullptr);
  for (const char* name : {"s1", "s2", "s3"}) {
    const int64_t start = 1000 * (name[1] - '0');
    ASSERT_TRUE(lmdb->OpenSweep(name, start, {"https://h"}).ok());
    ASSERT_TRUE(writer->OpenSweep(name, start, {"https://h"}).ok());
  }
  std::set<std::string> urls;
  auto sweeps = Sweeps(60);
  ApplyBoth(*lmdb, *writer, sweeps[0], &urls);
  if (HasFatalFailure()) return;
  // The newest sweep's pages: the corpus's second sweep, a thousand seconds later.
  std::vector<PageInput> newest = sweeps[1];
  for (PageInput& p : newest) {
    p.sweep = 3;
    p.date += 1000;
    urls.insert(p.url);
  }
  constexpr size_t kBatch = 5;
  for (size_t i = 0; i < newest.size(); i += kBatch) {
    std::span<const PageInput> batch(newest.data() + i, std::min(kBatch, newest.size() - i));
    ASSERT_TRUE(lmdb->Apply(batch).ok());
  }
  std::atomic<bool> done{false};
  std::atomic<int> failed_batches{0};
  std::atomic<int> cycles_done{0};
  std::mutex gate;
  std::thread t([&] {
    for (size_t i = 0; i < newest.size(); i += kBatch) {
      // Each quarter of the batches waits for one more close and reopen, so that they interleave
      // however the two threads are scheduled (a mutex is not fair: the writer could take the
      // gate again and again until its last batch).
      const int quarter = static_cast<int>(4 * i / newest.size());
      while (cycles_done.load() < quarter)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::span<const PageInput> batch(newest.data() + i, std::min(kBatch, newest.size() - i));
      // A batch that raced the close too often is sent again, as a client would.
      for (int attempt = 0; attempt < 20; ++attempt) {
        std::lock_guard<std::mutex> quiet(gate);
        auto r = writer->Apply(batch);
        if (r.ok()) break;
        ++failed_batches;
        if (r.status().code() != StatusCode::kUnavailable) return;
      }
    }
    done = true;
  });
  int cycles = 0;
  uint64_t gone_while_writing = 0;
  while (!done.load()) {
    auto c = closer->CloseSweep(2, 2500);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    gone_while_writing += c->gone;
    // A reopen moves versions down one seq: not while pages are applied (docs/REDIS.md).
    std::lock_guard<std::mutex> quiet(gate);
    auto r = closer->ReopenSweep(2);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->removed, c->gone);
    ++cycles;
    cycles_done = cycles;
  }
  t.join();
  ASSERT_TRUE(done.load());
  store::Store::CloseSweepOptions listed;
  listed.list_limit = 100000;
  auto a = lmdb->CloseSweep(2, 2500, listed);
  auto b = closer->CloseSweep(2, 2500, listed);
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
  std::printf(
      "%d closes and reopens of s2 while %zu pages of s3 were applied (%llu batches "
      "applied again after a race, %d sent again): %llu gone versions written and "
      "removed; the final close %llu\n",
      cycles, newest.size(),
      static_cast<unsigned long long>(dynamic_cast<const RedisClusterStore&>(*writer).races()),
      failed_batches.load(), static_cast<unsigned long long>(gone_while_writing),
      static_cast<unsigned long long>(b->gone));
  EXPECT_GE(cycles, 3);
  EXPECT_EQ(a->gone, b->gone);
  EXPECT_EQ(a->gone_urls, b->gone_urls);
  for (const std::string& url : urls) {
    auto ha = lmdb->History(url);
    auto hb = closer->History(url);
    ASSERT_EQ(ha.ok(), hb.ok()) << url;
    if (!ha.ok()) continue;
    ASSERT_EQ(ha->size(), hb->size()) << url;
    for (size_t i = 0; i < ha->size(); ++i) {
      // The verdicts of pages applied while a gone version was the last may differ, and so
      // may the document a failed attempt keeps (none after a gone version).
      EXPECT_EQ((*ha)[i].sweep, (*hb)[i].sweep) << url;
      EXPECT_EQ((*ha)[i].date, (*hb)[i].date) << url;
      if ((*ha)[i].verdict != store::Verdict::kFailed) {
        EXPECT_EQ((*ha)[i].doc, (*hb)[i].doc) << url;
      }
      EXPECT_EQ((*ha)[i].http_status, (*hb)[i].http_status) << url;
    }
  }
  auto sa = lmdb->Stats();
  auto sb = closer->Stats();
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(sa->versions, sb->versions);
  auto wa = lmdb->Sweeps();
  auto wb = closer->Sweeps();
  ASSERT_TRUE(wa.ok() && wb.ok());
  for (size_t i = 0; i < wa->size(); ++i) {
    EXPECT_EQ((*wa)[i].pages, (*wb)[i].pages) << i;
    EXPECT_EQ((*wa)[i].gone, (*wb)[i].gone) << i;
    EXPECT_EQ((*wa)[i].open, (*wb)[i].open) << i;
  }
  auto kb = closer->Check();
  ASSERT_TRUE(kb.ok());
  for (const std::string& p : *kb) ADD_FAILURE() << p;
}

// A URL's versions field is written only over what the writer read: a reopen removes a gone
// version and moves the later ones down one seq, and a batch that read the list before it must
// then see a race, not a list it can append to (which would append its version a second time).
// The counts change in the same step, and only when the field is written.
TEST_F(WalksTest, TheVersionsAreWrittenOnlyOverWhatWasRead) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  auto run = [&](const VersionList& as_read, const VersionList& next,
                 const std::vector<CountChange>& changes = {}) -> int64_t {
    auto r = client->Run(ReplaceVersions(77, as_read, next, changes));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->integer : 99;
  };
  auto count = [&](const std::string& field) -> std::string {
    auto r = client->Run(Command{.args = {"HGET", ShardKeyOf(77), field}});
    EXPECT_TRUE(r.ok());
    return r.ok() && !r->is_nil() ? r->str : "nil";
  };
  const VersionList v1{0, {"v1"}}, v1g{0, {"v1", "g"}}, v1gv3{0, {"v1", "g", "v3"}};
  EXPECT_EQ(run({}, v1), 1);
  EXPECT_EQ(run(v1, v1g), 1);
  EXPECT_EQ(run(v1g, v1gv3), 1);
  EXPECT_EQ(run(v1g, v1gv3), 0);  // resent: written already
  // The reopen removes g: v3 moves down to seq 2. The batch, applied again from its old read
  // (v1, g), is refused.
  const VersionList v1v3{0, {"v1", "v3"}};
  EXPECT_EQ(run(v1gv3, v1v3), 1);
  EXPECT_EQ(run(v1g, v1gv3), -1);
  auto reply = client->Run(walks::ReadVersionsOf(77));
  ASSERT_TRUE(reply.ok());
  auto list = walks::ReadVersionListOf(*reply);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, v1v3);
  // Counting moves the mark with the counts; sent again, it counts nothing twice.
  const VersionList counted{2, {"v1", "v3"}};
  const std::vector<CountChange> changes = {{false, "versions", 2}, {true, "5.start", 100}};
  EXPECT_EQ(run(v1v3, counted, changes), 1);
  EXPECT_EQ(run(v1v3, counted, changes), 0);
  EXPECT_EQ(count("versions"), "2");
  EXPECT_EQ(count("5.start"), "100");
  // A stale writer changes neither the field nor the counts; the earliest start stays.
  EXPECT_EQ(run(v1g, VersionList{2, {"v1", "g", "v3"}}, {{false, "versions", 7}}), -1);
  EXPECT_EQ(run(counted, VersionList{2, {"v1", "v3", "v4"}}, {{true, "5.start", 300}}), 1);
  EXPECT_EQ(count("versions"), "2");
  EXPECT_EQ(count("5.start"), "100");
  // An empty list deletes the field.
  EXPECT_EQ(run(VersionList{2, {"v1", "v3", "v4"}}, {}), 1);
  auto gone = client->Run(walks::ReadVersionsOf(77));
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(gone->is_nil());
}

// A URL's versions are one field of a hash of 16 URLs: length-prefixed entries (one-, two- and
// three-byte lengths here), read back whole and in order, beside the other URLs of the bucket;
// a field cut short is DataLoss, not a shorter history.
TEST_F(WalksTest, TheVersionsFieldKeepsEntriesOfAnyLengthApartFromItsNeighbours) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  // 1 and 1 + 1024 x 1 share a bucket (the same shard, (id / 1024) >> 4 equal); 2 is another
  // shard's.
  ASSERT_EQ(VersionsKey(1), VersionsKey(1 + 1024));
  ASSERT_NE(VersionsKey(1), VersionsKey(2));
  ASSERT_NE(VersionsKey(1), VersionsKey(1 + 16 * 1024));
  const std::vector<std::string> entries = {"a", std::string(300, 'b'), std::string(70'000, 'c')};
  for (const store::UrlId url : {store::UrlId{1}, store::UrlId{1 + 1024}}) {
    VersionList list;
    for (const std::string& e : entries) {
      VersionList next = list;
      next.entries.push_back(e + std::to_string(url));
      auto r = client->Run(ReplaceVersions(url, list, next, {}));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->integer, 1);
      list = std::move(next);
    }
  }
  for (const store::UrlId url : {store::UrlId{1}, store::UrlId{1 + 1024}}) {
    auto reply = client->Run(walks::ReadVersionsOf(url));
    ASSERT_TRUE(reply.ok());
    auto list = walks::SplitVersionsOf(*reply);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    ASSERT_EQ(list->size(), entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      EXPECT_EQ((*list)[i], entries[i] + std::to_string(url));
    }
  }
  auto none = client->Run(walks::ReadVersionsOf(2));
  ASSERT_TRUE(none.ok());
  auto empty = walks::SplitVersionsOf(*none);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  // A count of 0, then an entry of 5 bytes of which 2 are there.
  ASSERT_TRUE(client
                  ->Run(Command{.args = {"HSET", VersionsKey(3), VersionsField(3),
                                         std::string("\x00\x05"
                                                     "ab",
                                                     4)}})
                  .ok());
  auto cut = client->Run(walks::ReadVersionsOf(3));
  ASSERT_TRUE(cut.ok());
  auto bad = walks::SplitVersionsOf(*cut);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
}

// A sweep closed on one daemon is closed on every other at once: Apply reads the batch's sweep
// records again for each batch rather than keeping the ones it saw open.
TEST_F(WalksTest, ASweepClosedOnOneDaemonIsClosedOnTheOthers) {
  auto a = OpenRedis();
  auto b = OpenRedis();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  auto sweep = a->OpenSweep("s", 1000);
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  const std::vector<PageInput> first = {Page(Url(1, "x"), sweep->id, 1001, Near(1, 150, 0))};
  auto applied = b->Apply(first);  // b sees the sweep open
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  ASSERT_TRUE((*applied)[0].status.ok()) << (*applied)[0].status.ToString();
  ASSERT_TRUE(a->CloseSweep(sweep->id, 2000).ok());
  const std::vector<PageInput> late = {Page(Url(2, "x"), sweep->id, 1002, Near(2, 150, 0))};
  auto refused = b->Apply(late);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ((*refused)[0].status.code(), StatusCode::kFailedPrecondition)
      << (*refused)[0].status.ToString();
  EXPECT_EQ(b->History(Url(2, "x")).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace shingled::redis::testing
