// The listings and the identical report of the Redis backend (redis/backend_listings.cc) against
// the LMDB store, on a real 3-master cluster: the fixture's corpus applied to both, then ListUrls
// (every filter, paged small), ListClusters (paged), ListIdenticalSets (paged) and
// StreamIdenticalReport compared. Both run the same algorithm (store/internal/listings.h); what
// differs is the walk: the cluster lists URLs in URL id order with the id as cursor (LMDB in the
// order of its `urls` keys), and names a cluster by its smallest document id (LMDB by the root
// it keeps), so those two are compared as sets and partitions.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "redis/backend.h"
#include "redis/backend_store.h"
#include "tests/redis/backend_fixture.h"

namespace shingled::redis::testing {
namespace {

using store::PageInput;

// An item as a comparable tuple (every field).
auto ItemKey(const store::UrlListItem& i) {
  return std::make_tuple(i.url, i.version.seq, i.version.sweep, i.version.date, i.version.doc,
                         i.version.http_status, static_cast<int>(i.version.verdict),
                         i.version.canonical_link, i.version.redirect_target,
                         static_cast<int>(i.status), i.first_seen, i.versions);
}
using Item = decltype(ItemKey(store::UrlListItem()));

// Every page of ListUrls with `options` (limit and max_examined as given): the items of each.
std::vector<std::vector<Item>> UrlPages(const store::Store& s, store::UrlListOptions options) {
  std::vector<std::vector<Item>> pages;
  options.after.clear();
  for (int guard = 0; guard < 100000; ++guard) {
    auto page = s.ListUrls(options);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) break;
    EXPECT_LE(page->urls.size(), options.limit);
    std::vector<Item> items;
    for (const auto& i : page->urls) items.push_back(ItemKey(i));
    pages.push_back(std::move(items));
    if (!page->next) break;
    EXPECT_NE(*page->next, options.after) << "a cursor that does not move";
    options.after = *page->next;
  }
  return pages;
}

std::vector<Item> Flat(const std::vector<std::vector<Item>>& pages) {
  std::vector<Item> all;
  for (const auto& p : pages) all.insert(all.end(), p.begin(), p.end());
  return all;
}

class RedisListingsTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    lmdb_ = OpenLmdb();
    redis_ = OpenRedis();
    ASSERT_NE(lmdb_, nullptr);
    ASSERT_NE(redis_, nullptr);
    for (const char* name : {"s1", "s2", "s3"}) {
      auto a = lmdb_->OpenSweep(name, 1000);
      auto b = redis_->OpenSweep(name, 1000);
      ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
      ASSERT_EQ(a->id, b->id);
    }
    // Batches of 40 to both stores, in the same order: the same document and URL ids.
    for (const auto& sweep : Corpus(50)) {
      for (size_t i = 0; i < sweep.size(); i += 40) {
        std::span<const PageInput> batch(sweep.data() + i, std::min<size_t>(40, sweep.size() - i));
        auto a = lmdb_->Apply(batch);
        auto b = redis_->Apply(batch);
        ASSERT_TRUE(a.ok()) << a.status().ToString();
        ASSERT_TRUE(b.ok()) << b.status().ToString();
      }
    }
  }

  std::unique_ptr<store::Store> lmdb_, redis_;
};

TEST_F(RedisListingsTest, ListUrlsGivesLmdbsItemsInUrlIdOrder) {
  std::vector<std::pair<std::string, store::UrlListOptions>> filters;
  filters.emplace_back("every URL", store::UrlListOptions{});
  {
    store::UrlListOptions o;
    // A prefix inside another, and one of a single family.
    o.prefixes = {"https://h1", "https://h1.example/", "https://h3.example/f3"};
    filters.emplace_back("prefixes", o);
  }
  for (store::SweepId sweep : {1, 2, 3}) {
    store::UrlListOptions o;
    o.sweep = sweep;
    filters.emplace_back("sweep " + std::to_string(sweep), o);
  }
  // (No URL of the corpus ends failed: a failed attempt keeps the URL's document, live.)
  for (store::UrlStatus st :
       {store::UrlStatus::kLive, store::UrlStatus::kDead, store::UrlStatus::kRedirect}) {
    store::UrlListOptions o;
    o.status = st;
    filters.emplace_back("status " + std::string(store::UrlStatusName(st)), o);
  }
  for (store::Verdict v : {store::Verdict::kNew, store::Verdict::kNearDuplicate,
                           store::Verdict::kDuplicate, store::Verdict::kUnchanged}) {
    store::UrlListOptions o;
    o.verdict = v;
    filters.emplace_back("verdict " + std::string(store::VerdictName(v)), o);
  }
  {
    store::UrlListOptions o;
    o.prefixes = {"https://h2.example/"};
    o.sweep = 2;
    o.status = store::UrlStatus::kLive;
    o.verdict = store::Verdict::kUnchanged;
    filters.emplace_back("all four", o);
  }
  for (const auto& [what, options] : filters) {
    SCOPED_TRACE(what);
    store::UrlListOptions whole = options;
    whole.limit = 1000000;
    whole.max_examined = 1000000;
    const auto lmdb_whole = UrlPages(*lmdb_, whole);
    const auto redis_whole = UrlPages(*redis_, whole);
    ASSERT_EQ(lmdb_whole.size(), 1u);
    ASSERT_EQ(redis_whole.size(), 1u);
    // The same items; in another order (the cluster's is URL id order).
    const std::multiset<Item> expected(lmdb_whole[0].begin(), lmdb_whole[0].end());
    EXPECT_EQ(std::multiset<Item>(redis_whole[0].begin(), redis_whole[0].end()), expected);
    EXPECT_FALSE(expected.empty());
    for (const auto& [limit, examined] :
         std::vector<std::pair<size_t, size_t>>{{1, 1}, {3, 5}, {7, 1000}, {1000, 13}}) {
      SCOPED_TRACE("limit " + std::to_string(limit) + " max_examined " + std::to_string(examined));
      store::UrlListOptions paged = options;
      paged.limit = limit;
      paged.max_examined = examined;
      const auto lmdb_pages = UrlPages(*lmdb_, paged);
      const auto redis_pages = UrlPages(*redis_, paged);
      // Each store's pages together are its whole listing, in its order: every page is a run
      // of the whole listing, none repeated, none skipped.
      EXPECT_EQ(Flat(lmdb_pages), lmdb_whole[0]);
      EXPECT_EQ(Flat(redis_pages), redis_whole[0]);
      for (const auto& p : redis_pages) EXPECT_LE(p.size(), std::min(limit, examined));
      if (examined < 1000) {
        // max_examined bounds each page's walk: the cluster walks every URL id, so it takes at
        // least as many pages as there are URLs over max_examined.
        EXPECT_GE(redis_pages.size(), 500 / examined);
      }
    }
  }
  // Errors: the same codes.
  store::UrlListOptions bad;
  bad.limit = 0;
  EXPECT_EQ(redis_->ListUrls(bad).status().code(), StatusCode::kInvalidArgument);
  bad = {};
  bad.sweep = 99;
  EXPECT_EQ(lmdb_->ListUrls(bad).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(redis_->ListUrls(bad).status().code(), StatusCode::kNotFound);
  bad = {};
  bad.prefixes = {"not a url"};
  EXPECT_EQ(lmdb_->ListUrls(bad).status().code(), redis_->ListUrls(bad).status().code());
  bad = {};
  bad.after = "https://h1.example/";  // an LMDB cursor is none of the cluster's
  EXPECT_EQ(redis_->ListUrls(bad).status().code(), StatusCode::kInvalidArgument);
}

// A listed cluster as the partition sees it: its members (from Cluster) and every field but the id.
struct ListedCluster {
  std::set<store::DocId> members;
  uint64_t size = 0, live_urls = 0;
  int64_t first_seen = 0, last_seen = 0;
  std::vector<std::string> sample_urls;
  auto key() const {
    return std::tie(members, size, live_urls, first_seen, last_seen, sample_urls);
  }
  bool operator<(const ListedCluster& o) const { return key() < o.key(); }
  bool operator==(const ListedCluster& o) const { return key() == o.key(); }
};

// Every page of ListClusters: the sizes in each page, and the clusters listed.
std::pair<std::vector<std::vector<uint64_t>>, std::set<ListedCluster>> ClusterPages(
    const store::Store& s, store::ClusterListOptions options) {
  std::vector<std::vector<uint64_t>> sizes;
  std::set<ListedCluster> listed;
  for (int guard = 0; guard < 10000; ++guard) {
    auto page = s.ListClusters(options);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) break;
    EXPECT_LE(page->clusters.size(), options.limit);
    std::vector<uint64_t> of_page;
    for (const auto& c : page->clusters) {
      of_page.push_back(c.size);
      auto info = s.Cluster(c.id);
      EXPECT_TRUE(info.ok()) << info.status().ToString();
      if (!info.ok()) continue;
      EXPECT_EQ(info->id, c.id);
      ListedCluster l;
      for (const auto& m : info->members) l.members.insert(m.doc);
      l.size = c.size;
      l.live_urls = c.live_urls;
      l.first_seen = c.first_seen;
      l.last_seen = c.last_seen;
      l.sample_urls = c.sample_urls;
      EXPECT_EQ(l.members.size(), c.size);
      EXPECT_TRUE(listed.insert(std::move(l)).second) << "a cluster listed twice";
    }
    sizes.push_back(std::move(of_page));
    if (!page->next) break;
    options.after = page->next;
  }
  return {sizes, listed};
}

TEST_F(RedisListingsTest, ListClustersGivesLmdbsPartitionPaged) {
  for (uint64_t min_size : {2, 3, 5}) {
    for (size_t limit : {size_t{1}, size_t{4}, size_t{1000}}) {
      SCOPED_TRACE("min_size " + std::to_string(min_size) + " limit " + std::to_string(limit));
      store::ClusterListOptions o;
      o.min_size = min_size;
      o.limit = limit;
      o.sample_urls = 2;
      const auto [lmdb_sizes, lmdb_listed] = ClusterPages(*lmdb_, o);
      const auto [redis_sizes, redis_listed] = ClusterPages(*redis_, o);
      // Largest first in both: the same sizes page by page (ids differ: only ties reorder).
      EXPECT_EQ(lmdb_sizes, redis_sizes);
      EXPECT_EQ(lmdb_listed, redis_listed);
      if (min_size == 2) {
        EXPECT_GT(lmdb_listed.size(), 20u);
      }
    }
  }
  store::ClusterListOptions bad;
  bad.min_size = 1;
  EXPECT_EQ(redis_->ListClusters(bad).status().code(), StatusCode::kInvalidArgument);
  bad = {};
  bad.limit = 0;
  EXPECT_EQ(redis_->ListClusters(bad).status().code(), StatusCode::kInvalidArgument);
}

// Every page of ListIdenticalSets, every field.
using SetKey =
    std::tuple<store::DocId, uint64_t, uint64_t,
               std::vector<std::tuple<store::DocId, uint64_t, uint64_t>>, std::vector<std::string>>;
std::vector<std::vector<SetKey>> SetPages(const store::Store& s, store::IdenticalSetOptions o) {
  std::vector<std::vector<SetKey>> pages;
  for (int guard = 0; guard < 10000; ++guard) {
    auto page = s.ListIdenticalSets(o);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) break;
    std::vector<SetKey> sets;
    for (const auto& set : page->sets) {
      std::vector<std::tuple<store::DocId, uint64_t, uint64_t>> docs;
      for (const auto& d : set.documents) docs.emplace_back(d.doc, d.bytes, d.live_urls);
      sets.emplace_back(set.representative, set.url_count, set.bytes, docs, set.urls);
    }
    pages.push_back(std::move(sets));
    if (!page->next) break;
    o.after = page->next;
  }
  return pages;
}

TEST_F(RedisListingsTest, ListIdenticalSetsAnswersAsLmdb) {
  for (uint64_t min_urls : {2, 3}) {
    for (size_t limit : {size_t{1}, size_t{6}, size_t{1000}}) {
      SCOPED_TRACE("min_urls " + std::to_string(min_urls) + " limit " + std::to_string(limit));
      store::IdenticalSetOptions o;
      o.min_urls = min_urls;
      o.limit = limit;
      o.max_urls = 2;
      const auto a = SetPages(*lmdb_, o);
      const auto b = SetPages(*redis_, o);
      // The same document ids in both stores: equal page by page, ties by representative.
      EXPECT_EQ(a, b);
      size_t sets = 0;
      for (const auto& p : a) sets += p.size();
      if (min_urls == 2) {
        EXPECT_GT(sets, 20u);
      }
    }
  }
  store::IdenticalSetOptions bad;
  bad.min_urls = 1;
  EXPECT_EQ(redis_->ListIdenticalSets(bad).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RedisListingsTest, IdenticalReportAnswersAsLmdb) {
  using Row =
      std::tuple<uint64_t, store::DocId, uint64_t, uint64_t, uint64_t, std::vector<std::string>>;
  auto report = [](const store::Store& s, const store::IdenticalReportOptions& o,
                   store::IdenticalReportTotals* totals, uint64_t* looked_at) {
    std::vector<Row> rows;
    std::atomic<uint64_t> documents{0};
    store::RepoReportProgress progress;
    progress.documents = &documents;
    Status st = s.StreamIdenticalReport(
        o,
        [&](const store::IdenticalReportTotals& t) {
          *totals = t;
          return OkStatus();
        },
        [&](const store::IdenticalReportSet& r) {
          rows.emplace_back(r.rank, r.doc, r.bytes, r.copies, r.wasted_bytes, r.urls);
          return OkStatus();
        },
        progress);
    EXPECT_TRUE(st.ok()) << st.ToString();
    *looked_at = documents.load();
    return rows;
  };
  for (const auto& [limit, max_urls] :
       std::vector<std::pair<uint64_t, size_t>>{{UINT64_MAX, SIZE_MAX}, {5, 1}, {1, 3}}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    store::IdenticalReportOptions o;
    o.limit = limit;
    o.max_urls = max_urls;
    store::IdenticalReportTotals ta, tb;
    uint64_t da = 0, db = 0;
    const auto a = report(*lmdb_, o, &ta, &da);
    const auto b = report(*redis_, o, &tb, &db);
    EXPECT_EQ(a, b);
    EXPECT_EQ(ta.sets, tb.sets);
    EXPECT_EQ(ta.files, tb.files);
    EXPECT_EQ(ta.wasted_bytes, tb.wasted_bytes);
    EXPECT_EQ(ta.listed, tb.listed);
    EXPECT_GT(ta.sets, 20u);
    EXPECT_EQ(a.size(), ta.listed);
    // Every document is looked at once in both (the cluster passes the ids never used by).
    EXPECT_EQ(da, db);
  }
  // What each costs, printed: time, and on the cluster pipelines and commands (docs/REDIS.md).
  auto& cluster = dynamic_cast<const RedisClusterStore&>(*redis_);
  auto measure = [&](const char* what, const std::function<void(const store::Store&)>& run) {
    const auto t0 = std::chrono::steady_clock::now();
    run(*lmdb_);
    const auto t1 = std::chrono::steady_clock::now();
    const ClusterStats before = cluster.client_stats();
    run(*redis_);
    const auto t2 = std::chrono::steady_clock::now();
    const ClusterStats after = cluster.client_stats();
    std::cout << what << ": LMDB "
              << std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()
              << " us, cluster "
              << std::chrono::duration_cast<std::chrono::microseconds>(t2 - t1).count() << " us, "
              << after.pipelines - before.pipelines << " pipelines, "
              << after.commands - before.commands << " commands\n";
  };
  measure("identical report", [&](const store::Store& s) {
    store::IdenticalReportTotals t;
    uint64_t looked_at = 0;
    report(s, {}, &t, &looked_at);
  });
  measure("ListIdenticalSets (limit 100)",
          [](const store::Store& s) { EXPECT_TRUE(s.ListIdenticalSets({}).ok()); });
  measure("ListClusters (limit 100)",
          [](const store::Store& s) { EXPECT_TRUE(s.ListClusters({}).ok()); });
  measure("ListUrls (every URL, one page)", [](const store::Store& s) {
    store::UrlListOptions o;
    o.limit = 100000;
    EXPECT_TRUE(s.ListUrls(o).ok());
  });
  measure("ListUrls (limit 100)", [](const store::Store& s) { EXPECT_TRUE(s.ListUrls({}).ok()); });

  store::IdenticalReportOptions bad;
  bad.max_urls = 0;
  EXPECT_EQ(redis_->StreamIdenticalReport(bad, nullptr, nullptr).code(),
            StatusCode::kInvalidArgument);
}

// Another daemon writes new URLs, documents and clusters while this one lists: every listing
// and the report answer (no error, no item twice in one paging), whatever appears midway.
TEST_F(RedisListingsTest, ListingsAnswerWhileAnotherDaemonWrites) {
  auto other = OpenRedis();
  ASSERT_NE(other, nullptr);
  std::vector<PageInput> pages;
  for (int f = 100; f < 160; ++f) {
    for (uint64_t salt = 1; salt <= 4; ++salt) {
      pages.push_back(Page(Url(f, "late-" + std::to_string(salt)), 3, 3500 + f,
                           salt == 4 ? Near(f, 200, 0) : Near(f, 196, salt)));
    }
    pages.push_back(Page(Url(f, "late-copy"), 3, 3500 + f, Near(f, 200, 0)));
  }
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (size_t i = 0; i < pages.size(); i += 5) {
      std::span<const PageInput> batch(pages.data() + i, std::min<size_t>(5, pages.size() - i));
      auto r = other->Apply(batch);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
    }
    done = true;
  });
  int rounds = 0;
  for (; !done || rounds < 2; ++rounds) {
    store::UrlListOptions u;
    u.limit = 50;
    u.max_examined = 90;
    std::set<std::string> seen;
    for (int guard = 0; guard < 1000; ++guard) {
      auto page = redis_->ListUrls(u);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      for (const auto& item : page->urls) {
        EXPECT_TRUE(seen.insert(item.url).second) << item.url << " listed twice";
        EXPECT_GE(item.versions, 1u);
      }
      if (!page->next) break;
      u.after = *page->next;
    }
    EXPECT_GE(seen.size(), 500u);
    store::ClusterListOptions c;
    c.limit = 7;
    for (int guard = 0; guard < 1000; ++guard) {
      auto page = redis_->ListClusters(c);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      for (const auto& cl : page->clusters) EXPECT_GE(cl.size, 2u);
      if (!page->next) break;
      c.after = page->next;
    }
    auto sets = redis_->ListIdenticalSets({});
    ASSERT_TRUE(sets.ok()) << sets.status().ToString();
    EXPECT_FALSE(sets->sets.empty());
    store::IdenticalReportTotals totals;
    uint64_t rows = 0;
    Status st = redis_->StreamIdenticalReport(
        {},
        [&](const store::IdenticalReportTotals& t) {
          totals = t;
          return OkStatus();
        },
        [&](const store::IdenticalReportSet& r) {
          ++rows;
          EXPECT_GE(r.copies, 2u);
          return OkStatus();
        });
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(rows, totals.listed);
  }
  writer.join();
  EXPECT_GE(rounds, 2);
  // At the end, the new family's copies are there: each late family's base is held by two URLs.
  store::IdenticalSetOptions all;
  all.limit = 100000;
  auto sets = redis_->ListIdenticalSets(all);
  ASSERT_TRUE(sets.ok());
  uint64_t with_late = 0;
  for (const auto& set : sets->sets) {
    for (const std::string& url : set.urls) {
      if (url.find("/late-") != std::string::npos) {
        ++with_late;
        break;
      }
    }
  }
  EXPECT_GE(with_late, 60u);
}

}  // namespace
}  // namespace shingled::redis::testing
