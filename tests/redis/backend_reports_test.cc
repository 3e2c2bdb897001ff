// The change reports and lost and found on the Redis backend (redis/backend_reports.cc) against
// the LMDB store, on a real 3-master cluster: the fixture's corpus over three sweeps and a fourth
// with moves (same content, edited, by redirect, to another host), deaths, births and changes,
// applied to both stores; then every ChangesBetween pair, ListChanges of every kind paged by a
// small limit, StreamChanges, ChangesOverSweeps, and Lost of every URL answer the same. Both
// backends walk the URLs in id order, so the rows come out equal, row for row, with the same
// cursors. Cluster ids are compared as a partition: Redis names a cluster by its smallest id,
// LMDB by its root (docs/REDIS.md).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "redis/backend.h"
#include "redis/backend_store.h"
#include "tests/redis/backend_fixture.h"

namespace shingled::redis::testing {
namespace {

using store::ChangeKind;
using store::ChangeRow;
using store::PageInput;
using store::SweepId;

constexpr double kTol = 1e-12;

void ExpectSameRow(const ChangeRow& a, const ChangeRow& b, const std::string& what) {
  SCOPED_TRACE(what + " " + a.url);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.url_id, b.url_id);
  EXPECT_EQ(a.url, b.url);
  EXPECT_EQ(a.from_doc, b.from_doc);
  EXPECT_EQ(a.to_doc, b.to_doc);
  EXPECT_NEAR(a.resemblance, b.resemblance, kTol);
  EXPECT_EQ(a.new_url, b.new_url);
  EXPECT_EQ(a.new_doc, b.new_doc);
  EXPECT_NEAR(a.containment, b.containment, kTol);
  EXPECT_EQ(a.evidence, b.evidence);
  EXPECT_EQ(a.same_host, b.same_host);
}

void ExpectSameRows(const std::vector<ChangeRow>& a, const std::vector<ChangeRow>& b,
                    const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) ExpectSameRow(a[i], b[i], what);
}

void ExpectSameSweepInfo(const store::SweepInfo& a, const store::SweepInfo& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.pages, b.pages);
  EXPECT_EQ(a.gone, b.gone);
}

void ExpectSameSuccessor(const store::Successor& a, const store::Successor& b) {
  EXPECT_EQ(a.url, b.url);
  EXPECT_EQ(a.url_id, b.url_id);
  EXPECT_EQ(a.doc, b.doc);
  EXPECT_EQ(a.last_seen, b.last_seen);
  EXPECT_EQ(a.evidence, b.evidence);
  EXPECT_EQ(a.redirect_status, b.redirect_status);
  EXPECT_EQ(a.redirect_date, b.redirect_date);
  EXPECT_NEAR(a.resemblance, b.resemblance, kTol);
  EXPECT_NEAR(a.containment, b.containment, kTol);
  EXPECT_EQ(a.matched_doc, b.matched_doc);
  EXPECT_EQ(a.matched_date, b.matched_date);
  EXPECT_NEAR(a.resemblance_now, b.resemblance_now, kTol);
  EXPECT_EQ(a.born_when_died, b.born_when_died);
  EXPECT_EQ(a.born_or_changed, b.born_or_changed);
  EXPECT_EQ(a.via, b.via);
  EXPECT_EQ(a.why, b.why);
}

class RedisReportsTest : public BackendTest {
 protected:
  // The corpus's three sweeps and a fourth: per family, the base changed, a URL live in sweep 3
  // dead with its content at a new URL (same content), one redirected to a new URL with edited
  // content, one dead with an edited copy born on another host, one dead for good, a birth.
  std::vector<std::vector<PageInput>> Sweeps(int families) const {
    auto sweeps = Corpus(families);
    std::vector<PageInput> s4;
    for (int f = 0; f < families; ++f) {
      sweeps[2].push_back(Page(Url(f, "edit-src"), 3, 3010 + f, Near(f, 150, 11)));
      sweeps[2].push_back(Page(Url(f, "gone-for-good"), 3, 3011 + f, Near(f + 5000, 200, 0)));
      s4.push_back(Page(Url(f, "base"), 4, 4000 + f, Near(f, 185, 10)));     // changed
      s4.push_back(Fetch(Url(f, "dead"), 4, 4001 + f, 404));                 // its content moves...
      s4.push_back(Page(Url(f, "dead-new"), 4, 4002 + f, Near(f, 197, 7)));  // ...here
      s4.push_back(Fetch(Url(f, "copy-2"), 4, 4003 + f, 301, Url(f, "copy-2-new")));
      s4.push_back(Page(Url(f, "copy-2-new"), 4, 4004 + f, Near(f, 190, 9)));
      s4.push_back(Fetch(Url(f, "edit-src"), 4, 4005 + f, 410));
      s4.push_back(Page("https://elsewhere.example/f" + std::to_string(f) + "/edit-dst", 4,
                        4006 + f, Near(f, 150, 12)));
      s4.push_back(Fetch(Url(f, "gone-for-good"), 4, 4007 + f, 404));
      s4.push_back(Page(Url(f, "fresh"), 4, 4008 + f, Near(f + 9000, 200, 0)));  // born
      if (f % 2 == 0) s4.push_back(Page(Url(f, "copy"), 4, 4009 + f, Near(f, 195, 1)));
    }
    std::mt19937_64 rng(44);
    std::shuffle(s4.begin(), s4.end(), rng);
    sweeps.push_back(std::move(s4));
    return sweeps;
  }

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
        urls->insert(batch[j].url);
      }
    }
  }

  // Both stores with the four sweeps applied; `urls` every URL posted.
  void Load(int families, std::set<std::string>* urls) {
    lmdb_ = OpenLmdb();
    redis_ = OpenRedis();
    ASSERT_NE(lmdb_, nullptr);
    ASSERT_NE(redis_, nullptr);
    for (int i = 1; i <= 4; ++i) {
      const std::string name = "s" + std::to_string(i);
      auto a = lmdb_->OpenSweep(name, i * 1000, {});
      auto b = redis_->OpenSweep(name, i * 1000, {});
      ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
      ASSERT_EQ(a->id, b->id);
    }
    for (const auto& sweep : Sweeps(families)) {
      ApplyBoth(*lmdb_, *redis_, sweep, urls);
      if (HasFatalFailure()) return;
    }
  }

  // Every page of ListChanges of `kind` between `from` and `to`, `limit` rows at a time, and the
  // cursors.
  static std::pair<std::vector<ChangeRow>, std::vector<store::UrlId>> Paged(
      const store::Store& s, SweepId from, SweepId to, ChangeKind kind, size_t limit) {
    std::vector<ChangeRow> rows;
    std::vector<store::UrlId> cursors;
    store::ChangeListOptions o;
    o.kind = kind;
    o.limit = limit;
    do {
      auto page = s.ListChanges(from, to, o);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) break;
      EXPECT_LE(page->rows.size(), limit);
      rows.insert(rows.end(), page->rows.begin(), page->rows.end());
      o.after = page->next_after;
      cursors.push_back(o.after);
    } while (o.after != 0);
    return {rows, cursors};
  }

  std::unique_ptr<store::Store> lmdb_, redis_;
};

TEST_F(RedisReportsTest, ChangeReportsAnswerAsLmdb) {
  std::set<std::string> urls;
  Load(10, &urls);
  if (HasFatalFailure()) return;
  {
    // One report's cost on each: time, and on the cluster the pipelines and commands.
    const auto& cluster = dynamic_cast<const RedisClusterStore&>(*redis_);
    const auto t_a = std::chrono::steady_clock::now();
    ASSERT_TRUE(lmdb_->ChangesBetween(3, 4).ok());
    const auto t_b = std::chrono::steady_clock::now();
    const ClusterStats before = cluster.client_stats();
    ASSERT_TRUE(redis_->ChangesBetween(3, 4).ok());
    const ClusterStats after = cluster.client_stats();
    const auto t_c = std::chrono::steady_clock::now();
    std::printf(
        "ChangesBetween(3, 4) over %zu URLs: LMDB %.1f ms, cluster %.1f ms, %llu pipelines, "
        "%llu commands\n",
        urls.size(), std::chrono::duration<double, std::milli>(t_b - t_a).count(),
        std::chrono::duration<double, std::milli>(t_c - t_b).count(),
        static_cast<unsigned long long>(after.pipelines - before.pipelines),
        static_cast<unsigned long long>(after.commands - before.commands));
  }
  const auto t0 = std::chrono::steady_clock::now();
  // Refusals.
  EXPECT_EQ(lmdb_->ChangesBetween(1, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(redis_->ChangesBetween(1, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(lmdb_->ChangesBetween(1, 99).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(redis_->ChangesBetween(1, 99).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(redis_->ListChanges(1, 2, {.kind = ChangeKind::kChanged, .after = 0, .limit = 0})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  std::map<ChangeKind, uint64_t> seen;  // rows per kind over all pairs (the corpus has each)
  for (SweepId from = 1; from <= 4; ++from) {
    for (SweepId to = 1; to <= 4; ++to) {
      if (from == to) continue;
      const std::string pair = std::to_string(from) + "->" + std::to_string(to);
      SCOPED_TRACE(pair);
      std::atomic<uint64_t> walked_a{0}, walked_b{0};
      auto a = lmdb_->ChangesBetween(from, to, {.urls_walked = &walked_a});
      auto b = redis_->ChangesBetween(from, to, {.urls_walked = &walked_b});
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      EXPECT_EQ(walked_a.load(), walked_b.load());
      EXPECT_GT(walked_b.load(), 0u);
      ExpectSameSweepInfo(a->from, b->from);
      ExpectSameSweepInfo(a->to, b->to);
      EXPECT_TRUE(a->total == b->total);
      ASSERT_EQ(a->hosts.size(), b->hosts.size());
      for (size_t i = 0; i < a->hosts.size(); ++i) {
        EXPECT_EQ(a->hosts[i].host, b->hosts[i].host);
        EXPECT_TRUE(a->hosts[i].counts == b->hosts[i].counts) << a->hosts[i].host;
      }
      for (int k = 0; k < store::kChangeKinds; ++k) {
        const auto kind = static_cast<ChangeKind>(k);
        const std::string what = pair + " " + std::string(store::ChangeKindName(kind));
        const auto [rows_a, cursors_a] = Paged(*lmdb_, from, to, kind, 4);
        const auto [rows_b, cursors_b] = Paged(*redis_, from, to, kind, 4);
        ExpectSameRows(rows_a, rows_b, what);
        EXPECT_EQ(cursors_a, cursors_b) << what;
        EXPECT_EQ(rows_b.size(), b->total.Of(kind)) << what;
        seen[kind] += rows_b.size();
        std::vector<ChangeRow> streamed;
        ASSERT_TRUE(redis_
                        ->StreamChanges(from, to, kind,
                                        [&](const ChangeRow& r) {
                                          streamed.push_back(r);
                                          return OkStatus();
                                        })
                        .ok());
        ExpectSameRows(rows_a, streamed, what + " streamed");
      }
    }
  }
  for (int k = 0; k < store::kChangeKinds; ++k) {
    EXPECT_GT(seen[static_cast<ChangeKind>(k)], 0u)
        << store::ChangeKindName(static_cast<ChangeKind>(k));
  }
  // A stream that stops on an error passes it on.
  EXPECT_EQ(redis_
                ->StreamChanges(3, 4, ChangeKind::kMoved,
                                [](const ChangeRow&) { return InternalError("stop"); })
                .code(),
            StatusCode::kInternal);
  // ChangesOverSweeps.
  auto ha = lmdb_->ChangesOverSweeps();
  auto hb = redis_->ChangesOverSweeps();
  ASSERT_TRUE(ha.ok() && hb.ok()) << ha.status().ToString() << hb.status().ToString();
  ASSERT_EQ(ha->intervals.size(), 3u);
  ASSERT_EQ(ha->intervals.size(), hb->intervals.size());
  for (size_t i = 0; i < ha->intervals.size(); ++i) {
    ExpectSameSweepInfo(ha->intervals[i].from, hb->intervals[i].from);
    ExpectSameSweepInfo(ha->intervals[i].to, hb->intervals[i].to);
    EXPECT_TRUE(ha->intervals[i].counts == hb->intervals[i].counts) << i;
  }
  EXPECT_EQ(ha->urls, hb->urls);
  EXPECT_EQ(ha->never_live, hb->never_live);
  for (const auto& [x, y] : {std::pair{&ha->lifetimes_dead, &hb->lifetimes_dead},
                             std::pair{&ha->lifetimes_alive, &hb->lifetimes_alive},
                             std::pair{&ha->changes_per_url, &hb->changes_per_url}}) {
    ASSERT_EQ(x->size(), y->size());
    for (size_t i = 0; i < x->size(); ++i) {
      EXPECT_EQ((*x)[i].label, (*y)[i].label);
      EXPECT_EQ((*x)[i].count, (*y)[i].count) << (*x)[i].label;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("reports over %zu URLs on both stores: %.2f s\n", urls.size(), seconds);
}

TEST_F(RedisReportsTest, LostAndFoundAnswersAsLmdb) {
  std::set<std::string> urls;
  Load(24, &urls);
  if (HasFatalFailure()) return;
  urls.insert("https://never.example/stored");
  std::map<store::LostStatus, int> statuses;
  std::map<store::ClusterId, store::ClusterId> lmdb_to_redis;  // cluster ids as a partition
  auto same = [&](const std::string& url, const store::LostOptions& options) {
    SCOPED_TRACE(url);
    auto a = lmdb_->Lost(url, options);
    auto b = redis_->Lost(url, options);
    ASSERT_EQ(a.status().code(), b.status().code())
        << a.status().ToString() << " / " << b.status().ToString();
    if (!a.ok()) return;
    ++statuses[a->status];
    EXPECT_EQ(a->url, b->url);
    EXPECT_EQ(a->status, b->status);
    EXPECT_EQ(a->last_seen_live, b->last_seen_live);
    EXPECT_EQ(a->last_doc, b->last_doc);
    EXPECT_EQ(a->cluster == 0, b->cluster == 0);
    if (a->cluster != 0) {
      auto [it, added] = lmdb_to_redis.emplace(a->cluster, b->cluster);
      EXPECT_EQ(it->second, b->cluster) << "cluster " << a->cluster;
    }
    EXPECT_EQ(a->died, b->died);
    EXPECT_EQ(a->redirect_target, b->redirect_target);
    EXPECT_EQ(a->redirect_status, b->redirect_status);
    ASSERT_EQ(a->best.has_value(), b->best.has_value());
    if (a->best) ExpectSameSuccessor(*a->best, *b->best);
    ASSERT_EQ(a->candidates.size(), b->candidates.size());
    for (size_t i = 0; i < a->candidates.size(); ++i) {
      ExpectSameSuccessor(a->candidates[i], b->candidates[i]);
    }
    EXPECT_EQ(a->truncated, b->truncated);
    EXPECT_EQ(a->truncated_by, b->truncated_by);
  };
  const auto t0 = std::chrono::steady_clock::now();
  for (const std::string& url : urls) same(url, {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("Lost of %zu URLs on both stores: %.2f s\n", urls.size(), seconds);
  // Live, moved (by redirect and by content), dead, and never stored all came up.
  EXPECT_GT(statuses[store::LostStatus::kAlive], 100);
  EXPECT_GT(statuses[store::LostStatus::kMoved], 50);
  EXPECT_GT(statuses[store::LostStatus::kDead], 10);
  {
    auto moved = redis_->Lost(Url(3, "copy-2"));
    ASSERT_TRUE(moved.ok() && moved->best.has_value());
    EXPECT_EQ(moved->best->url, Url(3, "copy-2-new"));
    EXPECT_EQ(moved->best->evidence, store::SuccessorEvidence::kRedirect);
    auto content = redis_->Lost(Url(3, "dead"));
    ASSERT_TRUE(content.ok() && content->best.has_value());
    EXPECT_EQ(content->best->url, Url(3, "dead-new"));
    auto gone = redis_->Lost(Url(3, "gone-for-good"));
    ASSERT_TRUE(gone.ok());
    EXPECT_EQ(gone->status, store::LostStatus::kDead);
  }
  // The bounds cut the search the same way on both.
  store::LostOptions tight;
  tight.max_scored = 2;
  tight.max_urls = 3;
  tight.max_depth = 0;
  tight.max_candidates = 1;
  for (int f = 0; f < 6; ++f) {
    for (const char* what : {"dead", "copy-2", "edit-src", "near-b", "moved", "base"}) {
      same(Url(f, what), tight);
    }
  }
  // Options out of range.
  store::LostOptions bad;
  bad.max_scored = 0;
  EXPECT_EQ(redis_->Lost(Url(1, "dead"), bad).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(redis_->Lost("https://never.example/").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace shingled::redis::testing
