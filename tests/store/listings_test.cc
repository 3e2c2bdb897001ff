// The store's listings: URLs by filter with a cursor
// that is stable under writes between pages, clusters by size, a cluster's documents in pages,
// and identical sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

using testing::Range;
using testing::Variant;

class ListingsTest : public testing::StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
    s1_ = store_->OpenSweep("s1", 100)->id;
    s2_ = store_->OpenSweep("s2", 200, {"http://c.test/"})->id;
  }
  // A page of its own content (shingles from `first`), with `status` (and `target` for a
  // redirect).
  PageInput At(std::string url, SweepId sweep, int64_t date, uint64_t first, int status = 200,
               std::string target = "") const {
    PageInput p = Page(std::move(url), sweep, date, Range(first, 400));
    p.http_status = status;
    p.redirect_target = std::move(target);
    return p;
  }
  PageResult Put(const PageInput& page) {
    PageResult r = ApplyOne(*store_, page);
    EXPECT_TRUE(r.status.ok()) << page.url << ": " << r.status.ToString();
    return r;
  }
  // Every page of a listing, from `options.after`: the URLs in order of their bytes (sorted here
  // on an engine that lists in URL id order: Capabilities::url_byte_order), each page's size
  // checked against the limit. `*pages` (may be null) counts the pages.
  std::vector<std::string> Drain(UrlListOptions options, int* pages = nullptr) const {
    std::vector<std::string> out;
    for (int n = 1; n < 100000; ++n) {
      StatusOr<UrlPage> page = store_->ListUrls(options);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) break;
      EXPECT_LE(page->urls.size(), options.limit);
      for (const UrlListItem& item : page->urls) out.push_back(item.url);
      if (pages != nullptr) *pages = n;
      if (!page->next) break;
      EXPECT_FALSE(page->next->empty());
      options.after = *page->next;
    }
    if (!store_->capabilities().url_byte_order) std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::string> Drain(std::vector<std::string> prefixes) const {
    UrlListOptions o;
    o.prefixes = std::move(prefixes);
    o.limit = 2;
    return Drain(o);
  }

  std::unique_ptr<Store> store_;
  SweepId s1_ = 0, s2_ = 0;
};
SHINGLED_STORE_ENGINES(ListingsTest);

// Each filter alone, and what an item says.
TEST_P(ListingsTest, EachFilter) {
  const PageResult a1 = Put(At("http://a.test/1", s1_, 100, 1000));
  Put(At("http://a.test/2", s1_, 101, 2000));
  Put(At("https://a.test/3", s1_, 102, 3000));
  Put(At("http://a.test:8080/4", s1_, 103, 4000));
  Put(At("http://a.test.example/5", s1_, 104, 5000));  // another host, same start
  Put(At("http://ab.test/6", s1_, 105, 6000));
  Put(At("http://b.test/x", s1_, 106, 1000));  // a1's content: a duplicate
  Put(At("http://b.test/y", s1_, 107, 0, 301, "http://b.test/x"));
  Put(At("http://b.test/z", s1_, 108, 0, 503));  // failed, no document before
  Put(At("http://c.test/old", s1_, 109, 7000));
  Put(At("http://a.test/2", s2_, 201, 0, 404));
  Put(At("http://c.test/new", s2_, 202, 8000));
  ASSERT_TRUE(store_->CloseSweep(s2_, 300).ok());  // c.test/old: gone

  using V = std::vector<std::string>;
  // host a.test: the ranges of http://a.test/ and https://a.test/, not a.test:8080 or
  // a.test.example.
  EXPECT_EQ(Drain({"http://a.test/", "https://a.test/"}),
            (V{"http://a.test/1", "http://a.test/2", "https://a.test/3"}));
  EXPECT_EQ(Drain({"http://a.test:8080/", "https://a.test:8080/"}), (V{"http://a.test:8080/4"}));
  EXPECT_EQ(Drain({"http://b.test/"}),
            (V{"http://b.test/x", "http://b.test/y", "http://b.test/z"}));
  // Nested prefixes are one range: nothing twice.
  EXPECT_EQ(Drain({"http://b.test/", "http://b.test/x"}),
            (V{"http://b.test/x", "http://b.test/y", "http://b.test/z"}));
  EXPECT_EQ(Drain({"https://nothing.test/"}), V{});

  auto with = [&](auto set) {
    UrlListOptions o;
    set(o);
    return Drain(o);
  };
  EXPECT_EQ(with([&](UrlListOptions& o) { o.status = UrlStatus::kDead; }), (V{"http://a.test/2"}));
  EXPECT_EQ(with([&](UrlListOptions& o) { o.status = UrlStatus::kGone; }),
            (V{"http://c.test/old"}));
  EXPECT_EQ(with([&](UrlListOptions& o) { o.status = UrlStatus::kRedirect; }),
            (V{"http://b.test/y"}));
  EXPECT_EQ(with([&](UrlListOptions& o) { o.status = UrlStatus::kFailed; }),
            (V{"http://b.test/z"}));
  EXPECT_EQ(with([&](UrlListOptions& o) { o.status = UrlStatus::kLive; }),
            (V{"http://a.test.example/5", "http://a.test/1", "http://a.test:8080/4",
               "http://ab.test/6", "http://b.test/x", "http://c.test/new", "https://a.test/3"}));
  EXPECT_EQ(with([&](UrlListOptions& o) { o.verdict = Verdict::kDuplicate; }),
            (V{"http://b.test/x"}));
  // A sweep: its URLs, each with its version in it.
  EXPECT_EQ(with([&](UrlListOptions& o) { o.sweep = s2_; }),
            (V{"http://a.test/2", "http://c.test/new", "http://c.test/old"}));
  EXPECT_EQ(with([&](UrlListOptions& o) {
              o.sweep = s1_;
              o.verdict = Verdict::kNew;
              o.status = UrlStatus::kDead;
            }),
            (V{"http://a.test/2"}));  // new in s1, dead now
  EXPECT_EQ(with([&](UrlListOptions& o) {
              o.sweep = s2_;
              o.verdict = Verdict::kNew;
            }),
            (V{"http://c.test/new"}));

  // The items.
  UrlListOptions o;
  o.prefixes = {"http://a.test/2", "http://b.test/y"};
  StatusOr<UrlPage> page = store_->ListUrls(o);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->urls.size(), 2u);
  EXPECT_FALSE(page->next.has_value());
  const UrlListItem& dead = page->urls[0];
  EXPECT_EQ(dead.status, UrlStatus::kDead);
  EXPECT_EQ(dead.versions, 2u);
  EXPECT_EQ(dead.first_seen, 101);
  EXPECT_EQ(dead.version.seq, 2u);
  EXPECT_EQ(dead.version.sweep, s2_);
  EXPECT_EQ(dead.version.date, 201);
  EXPECT_EQ(dead.version.http_status, 404);
  EXPECT_EQ(dead.version.verdict, Verdict::kGone);
  EXPECT_EQ(dead.version.doc, 0u);
  const UrlListItem& redirect = page->urls[1];
  EXPECT_EQ(redirect.status, UrlStatus::kRedirect);
  EXPECT_EQ(redirect.version.redirect_target, "http://b.test/x");
  EXPECT_EQ(redirect.version.http_status, 301);
  // With the sweep s1: a.test/2's version in it.
  o.sweep = s1_;
  page = store_->ListUrls(o);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->urls.size(), 2u);
  EXPECT_EQ(page->urls[0].version.seq, 1u);
  EXPECT_EQ(page->urls[0].version.verdict, Verdict::kNew);
  EXPECT_EQ(page->urls[0].status, UrlStatus::kDead);  // the last version's state
  // b.test/x holds a1's document.
  o = UrlListOptions();
  o.prefixes = {"http://b.test/x"};
  page = store_->ListUrls(o);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->urls.size(), 1u);
  EXPECT_EQ(page->urls[0].version.doc, a1.doc);
}

TEST_P(ListingsTest, BadOptions) {
  UrlListOptions o;
  o.limit = 0;
  EXPECT_EQ(store_->ListUrls(o).status().code(), StatusCode::kInvalidArgument);
  o = UrlListOptions();
  o.prefixes = {"no-scheme"};
  EXPECT_EQ(store_->ListUrls(o).status().code(), StatusCode::kInvalidArgument);
  o = UrlListOptions();
  o.sweep = 99;
  EXPECT_EQ(store_->ListUrls(o).status().code(), StatusCode::kNotFound);
  o = UrlListOptions();
  o.after = std::string(600, 'x');
  EXPECT_EQ(store_->ListUrls(o).status().code(), StatusCode::kInvalidArgument);
  ClusterListOptions c;
  c.min_size = 1;
  EXPECT_EQ(store_->ListClusters(c).status().code(), StatusCode::kInvalidArgument);
  IdenticalSetOptions i;
  i.limit = 0;
  EXPECT_EQ(store_->ListIdenticalSets(i).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ClusterPage(1, 0, 10).status().code(), StatusCode::kNotFound);
}

// 250 URLs in pages of 7: each once, in key order; the same through a prefix.
TEST_P(ListingsTest, PagesHaveNoDuplicatesOrGaps) {
  std::vector<std::string> expected;
  std::vector<PageInput> pages;
  for (int i = 0; i < 250; ++i) {
    std::string url = "http://p.test/" + std::to_string(i * 7919 % 1000);
    expected.push_back(url);
    pages.push_back(At(url, s1_, 100 + i, 10000 + 500 * static_cast<uint64_t>(i)));
  }
  ASSERT_TRUE(store_->Apply(pages).ok());
  std::sort(expected.begin(), expected.end());
  UrlListOptions o;
  o.limit = 7;
  int n = 0;
  EXPECT_EQ(Drain(o, &n), expected);
  EXPECT_EQ(n, 36);  // 35 full pages and one of 5
  o.prefixes = {"http://p.test/"};
  EXPECT_EQ(Drain(o), expected);
  o.limit = 250;
  EXPECT_EQ(Drain(o, &n), expected);
  EXPECT_EQ(n, 1);  // the last page knows it is the last
}

// URLs inserted and changed between pages: every URL of the first page's time is listed once;
// new ones after the cursor are listed, before it not (in URL id order every new one is after).
TEST_P(ListingsTest, StableUnderWritesBetweenPages) {
  const bool byte_order = store_->capabilities().url_byte_order;
  std::vector<std::string> before;
  for (int i = 0; i < 60; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "http://w.test/%03d", i * 10);
    before.push_back(name);
    Put(At(name, s1_, 100, 20000 + 500 * static_cast<uint64_t>(i)));
  }
  UrlListOptions o;
  o.limit = 10;
  std::vector<std::string> seen;
  std::set<std::string> inserted_after;
  for (int page_no = 0;; ++page_no) {
    StatusOr<UrlPage> page = store_->ListUrls(o);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const UrlListItem& item : page->urls) seen.push_back(item.url);
    if (!page->next) break;
    o.after = *page->next;
    // Between pages: a URL before the cursor, one after it, and a new version of a URL on
    // either side.
    char name[32];
    std::snprintf(name, sizeof(name), "http://w.test/%03d", page_no * 100 + 5);
    const std::string early = name;
    std::snprintf(name, sizeof(name), "http://w.test/%03d", 590 - page_no * 10 + 1);
    const std::string late = name;
    Put(At(early, s1_, 150, 90000 + 1000 * static_cast<uint64_t>(page_no)));
    Put(At(late, s1_, 150, 190000 + 1000 * static_cast<uint64_t>(page_no)));
    if (!byte_order || late > o.after) inserted_after.insert(late);
    if (!byte_order || early > o.after) inserted_after.insert(early);
    Put(At(before[static_cast<size_t>(page_no)], s2_, 250, 0, 404));
    Put(At(before[59 - static_cast<size_t>(page_no)], s2_, 250, 0, 404));
  }
  std::set<std::string> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), seen.size()) << "a URL was listed twice";
  if (byte_order) {
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  }
  for (const std::string& url : before) EXPECT_EQ(unique.count(url), 1u) << url;
  for (const std::string& url : inserted_after) EXPECT_EQ(unique.count(url), 1u) << url;
  EXPECT_EQ(seen.size(), before.size() + inserted_after.size());
}

// URLs over 480 bytes, whose keys share their first 471 bytes and end in a hash: listed by
// their whole bytes, paged by their keys, found by a prefix.
TEST_P(ListingsTest, LongUrls) {
  const std::string stem = "http://long.test/" + std::string(500, 'a');
  std::set<std::string> expected;
  for (int i = 0; i < 5; ++i) {
    const std::string url = stem + "/" + std::to_string(i);
    expected.insert(url);
    Put(At(url, s1_, 100, 30000 + 500 * static_cast<uint64_t>(i)));
  }
  Put(At("http://long.test/short", s1_, 100, 40000));
  UrlListOptions o;
  o.limit = 1;
  o.prefixes = {"http://long.test/" + std::string(300, 'a')};
  std::vector<std::string> listed = Drain(o);
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), expected);
  EXPECT_EQ(listed.size(), expected.size());
  o.prefixes = {"http://long.test/"};
  listed = Drain(o);
  EXPECT_EQ(listed.size(), 6u);
  EXPECT_EQ(listed.back(), "http://long.test/short");
}

// A filter that matches nothing in the first bounded chunk ends the page early, empty, with a
// cursor that goes on; the match further on is found.
TEST_P(ListingsTest, BoundedWorkPerPage) {
  std::vector<PageInput> pages;
  for (int i = 0; i < 50; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "http://m.test/%02d", i);
    pages.push_back(At(name, s1_, 100, 50000 + 500 * static_cast<uint64_t>(i)));
  }
  ASSERT_TRUE(store_->Apply(pages).ok());
  Put(At("http://m.test/47", s2_, 200, 0, 410));
  UrlListOptions o;
  o.status = UrlStatus::kDead;
  o.max_examined = 10;
  StatusOr<UrlPage> first = store_->ListUrls(o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->urls.empty());
  ASSERT_TRUE(first->next.has_value());
  // The last key looked at, or the last URL id.
  EXPECT_EQ(*first->next, store_->capabilities().url_byte_order ? "http://m.test/09" : "10");
  int n = 0;
  EXPECT_EQ(Drain(o, &n), std::vector<std::string>{"http://m.test/47"});
  EXPECT_EQ(n, 5);
  // Nothing at all: the pages end.
  o.status = UrlStatus::kRedirect;
  EXPECT_TRUE(Drain(o, &n).empty());
  EXPECT_EQ(n, 5);
}

// Clusters by size, largest first, then by id; a cluster's documents a page at a time.
TEST_P(ListingsTest, ClustersBySizeAndTheirDocuments) {
  // Cluster A: three lexically equivalent documents (the same text in other bytes).
  std::vector<PageResult> a;
  for (uint64_t v = 0; v < 3; ++v) {
    a.push_back(Put(Page("http://k.test/a" + std::to_string(v), s1_, 100 + static_cast<int>(v),
                         Range(1000, 400), v)));
  }
  // Clusters B and C: two near-copies each. D: alone.
  const PageResult b1 = Put(Page("http://k.test/b1", s1_, 110, Range(5000, 400)));
  const PageResult b2 = Put(Page("http://k.test/b2", s1_, 111, Variant(5000, 400, 397, 900000)));
  const PageResult c1 = Put(Page("http://k.test/c1", s1_, 120, Range(9000, 400)));
  const PageResult c2 = Put(Page("http://k.test/c2", s1_, 121, Variant(9000, 400, 397, 800000)));
  const PageResult d = Put(Page("http://k.test/d", s1_, 130, Range(20000, 400)));
  ASSERT_EQ(a[1].cluster, a[0].cluster);
  ASSERT_EQ(a[2].cluster, a[0].cluster);
  ASSERT_EQ(b2.cluster, b1.cluster);
  ASSERT_EQ(c2.cluster, c1.cluster);
  // One of A's URLs dies: A keeps its documents, with 2 live URLs.
  Put(At("http://k.test/a2", s2_, 200, 0, 404));

  ClusterListOptions o;
  o.limit = 1;
  std::vector<std::pair<uint64_t, ClusterId>> listed;
  for (int i = 0; i < 10; ++i) {
    StatusOr<ClusterListPage> page = store_->ListClusters(o);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ASSERT_LE(page->clusters.size(), 1u);
    for (const ClusterSummary& c : page->clusters) listed.emplace_back(c.size, c.id);
    if (!page->next) break;
    o.after = page->next;
  }
  const std::vector<std::pair<uint64_t, ClusterId>> expected = {
      {3, a[0].cluster},
      {2, std::min(b1.cluster, c1.cluster)},
      {2, std::max(b1.cluster, c1.cluster)}};
  EXPECT_EQ(listed, expected);

  o = ClusterListOptions();
  o.min_size = 3;
  StatusOr<ClusterListPage> page = store_->ListClusters(o);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->clusters.size(), 1u);
  EXPECT_FALSE(page->next.has_value());
  const ClusterSummary& big = page->clusters[0];
  EXPECT_EQ(big.id, a[0].cluster);
  EXPECT_EQ(big.live_urls, 2u);
  EXPECT_EQ(big.first_seen, 100);
  EXPECT_EQ(big.last_seen, 102);
  EXPECT_EQ(big.sample_urls, (std::vector<std::string>{"http://k.test/a0", "http://k.test/a1"}));

  // A's documents, two per page.
  StatusOr<ClusterMembersPage> members = store_->ClusterPage(a[2].doc, 0, 2);
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  EXPECT_EQ(members->cluster.id, a[0].cluster);
  EXPECT_EQ(members->size, 3u);
  ASSERT_EQ(members->cluster.members.size(), 2u);
  EXPECT_EQ(members->cluster.members[0].doc, a[0].doc);
  EXPECT_EQ(members->cluster.members[1].doc, a[1].doc);
  EXPECT_EQ(members->cluster.members[0].urls, std::vector<std::string>{"http://k.test/a0"});
  ASSERT_TRUE(members->next.has_value());
  members = store_->ClusterPage(a[0].doc, *members->next, 2);
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->cluster.members.size(), 1u);
  EXPECT_EQ(members->cluster.members[0].doc, a[2].doc);
  EXPECT_FALSE(members->next.has_value());
  // The whole answer equals Cluster's.
  StatusOr<ClusterInfo> whole = store_->Cluster(a[0].doc);
  members = store_->ClusterPage(a[0].doc, 0, 100);
  ASSERT_TRUE(whole.ok() && members.ok());
  ASSERT_EQ(members->cluster.members.size(), whole->members.size());
  for (size_t i = 0; i < whole->members.size(); ++i) {
    EXPECT_EQ(members->cluster.members[i].doc, whole->members[i].doc);
    EXPECT_EQ(members->cluster.members[i].urls, whole->members[i].urls);
  }
  // A singleton: one page of itself.
  members = store_->ClusterPage(d.doc, 0, 2);
  ASSERT_TRUE(members.ok());
  EXPECT_EQ(members->size, 1u);
  ASSERT_EQ(members->cluster.members.size(), 1u);
  members = store_->ClusterPage(d.doc, d.doc, 2);
  ASSERT_TRUE(members.ok());
  EXPECT_TRUE(members->cluster.members.empty());
}

// Identical sets: live URLs whose last versions hold one document, or equivalent documents.
TEST_P(ListingsTest, IdenticalSets) {
  // X: one document at three URLs and a lexical variant at a fourth: 4 URLs, 2 documents.
  const PageResult x = Put(Page("http://i.test/x1", s1_, 100, Range(1000, 400)));
  Put(Page("http://i.test/x2", s1_, 101, Range(1000, 400)));
  Put(Page("http://i.test/x3", s1_, 102, Range(1000, 400)));
  const PageResult xv = Put(Page("http://i.test/x4", s1_, 103, Range(1000, 400), 1));
  ASSERT_NE(xv.doc, x.doc);
  // Y: one document at two URLs. Z: at two, one of them dead now. W: at one.
  const PageResult y = Put(Page("http://i.test/y1", s1_, 110, Range(5000, 400)));
  Put(Page("http://i.test/y2", s1_, 111, Range(5000, 400)));
  Put(Page("http://i.test/z1", s1_, 120, Range(9000, 400)));
  Put(Page("http://i.test/z2", s1_, 121, Range(9000, 400)));
  Put(At("http://i.test/z2", s2_, 200, 0, 404));
  Put(Page("http://i.test/w", s1_, 130, Range(20000, 400)));
  // V: two URLs, each with a failed attempt since: still live (the content stays).
  const PageResult v = Put(Page("http://i.test/v1", s1_, 140, Range(30000, 400)));
  Put(Page("http://i.test/v2", s1_, 141, Range(30000, 400)));
  Put(At("http://i.test/v2", s2_, 210, 0, 503));

  IdenticalSetOptions o;
  o.limit = 1;
  o.max_urls = 3;
  std::vector<IdenticalSet> sets;
  for (int i = 0; i < 10; ++i) {
    StatusOr<IdenticalSetPage> page = store_->ListIdenticalSets(o);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    sets.insert(sets.end(), page->sets.begin(), page->sets.end());
    if (!page->next) break;
    o.after = page->next;
  }
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[0].representative, x.doc);
  EXPECT_EQ(sets[0].url_count, 4u);
  ASSERT_EQ(sets[0].documents.size(), 2u);
  EXPECT_EQ(sets[0].documents[0].doc, x.doc);
  EXPECT_EQ(sets[0].documents[0].live_urls, 3u);
  EXPECT_EQ(sets[0].documents[1].doc, xv.doc);
  EXPECT_EQ(sets[0].documents[1].live_urls, 1u);
  EXPECT_EQ(sets[0].urls.size(), 3u);  // max_urls
  EXPECT_GT(sets[0].bytes, 0u);
  EXPECT_EQ(sets[1].representative, y.doc);
  EXPECT_EQ(sets[1].url_count, 2u);
  EXPECT_EQ(sets[1].urls, (std::vector<std::string>{"http://i.test/y1", "http://i.test/y2"}));
  EXPECT_EQ(sets[2].representative, v.doc);
  EXPECT_EQ(sets[2].url_count, 2u);

  o = IdenticalSetOptions();
  o.min_urls = 3;
  StatusOr<IdenticalSetPage> page = store_->ListIdenticalSets(o);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->sets.size(), 1u);
  EXPECT_EQ(page->sets[0].representative, x.doc);
  EXPECT_EQ(page->sets[0].urls.size(), 4u);
}

}  // namespace
}  // namespace shingled::store
