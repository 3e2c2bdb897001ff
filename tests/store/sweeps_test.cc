// Sweeps that cannot wipe the store: a close records gone only URLs in the sweep's scope, never
// one a later sweep saw, never dated before the version it follows; a dry run lists what a close
// would do; a reopen undoes a close (FORMAT.md, "Closing a sweep").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

using testing::Range;

class SweepsTest : public testing::StoreConformance {
 protected:
  // One page per URL, each of its own content, into `sweep` at `date`.
  void Add(Store& store, SweepId sweep, int64_t date, const std::vector<std::string>& urls) {
    std::vector<PageInput> pages;
    for (const std::string& url : urls) {
      pages.push_back(
          Page(url, sweep, date, Range(std::hash<std::string>{}(url) % (1u << 30), 200)));
    }
    StatusOr<std::vector<PageResult>> r = store.Apply(pages);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (const PageResult& p : *r) ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  }
  static Verdict LastVerdict(const Store& store, const std::string& url) {
    return store.History(url)->back().verdict;
  }
};
SHINGLED_STORE_ENGINES(SweepsTest);

// The bug: the docs' example (open 2024-05, close it) on a store that already held pages marked
// every URL of the store gone, dated before its first version.
TEST_P(SweepsTest, ClosingASweepMarksNothingOutsideItsScope) {
  auto store = OpenStore();
  SweepId earlier = store->OpenSweep("default", 1'000)->id;
  Add(*store, earlier, 1'000,
      {"https://example.com/a", "https://example.com/b", "https://other.org/c"});

  // Opened and closed without a scope: covers nothing, records nothing gone.
  SweepId bare = store->OpenSweep("2024-05", 500)->id;
  StatusOr<SweepClosing> closed = store->CloseSweep(bare, 600);
  ASSERT_TRUE(closed.ok()) << closed.status().ToString();
  EXPECT_EQ(closed->gone, 0u);
  for (const char* url : {"https://example.com/a", "https://other.org/c"}) {
    EXPECT_EQ(store->History(url)->size(), 1u) << url;
  }

  // With a scope: only its URLs not seen in it.
  SweepId scoped = store->OpenSweep("2024-06", 2'000, {"https://example.com/"})->id;
  EXPECT_EQ(store->Sweeps()->back().scope, (std::vector<std::string>{"https://example.com/"}));
  Add(*store, scoped, 2'000, {"https://example.com/a"});
  closed = store->CloseSweep(scoped, 3'000);
  ASSERT_TRUE(closed.ok()) << closed.status().ToString();
  EXPECT_EQ(closed->gone, 1u);
  EXPECT_EQ(LastVerdict(*store, "https://example.com/b"), Verdict::kGone);
  EXPECT_EQ(store->History("https://example.com/b")->back().date, 3'000);
  EXPECT_EQ(LastVerdict(*store, "https://example.com/a"), Verdict::kUnchanged);
  EXPECT_EQ(store->History("https://other.org/c")->size(), 1u);
  ExpectConsistent(*store);
}

// The bug: closing an older sweep after a newer one marked gone the URLs the newer one had seen.
TEST_P(SweepsTest, AnOutOfOrderCloseMarksNothingALaterSweepSaw) {
  auto store = OpenStore();
  const std::vector<std::string> scope = {"http://site/"};
  SweepId may = store->OpenSweep("may", 100, scope)->id;
  Add(*store, may, 100, {"http://site/kept"});
  SweepId june = store->OpenSweep("june", 200, scope)->id;
  Add(*store, june, 200, {"http://site/moved-in", "http://site/kept"});
  ASSERT_TRUE(store->CloseSweep(june, 250).ok());
  // May closes late: moved-in was first seen by june, a later sweep; kept was seen by both.
  StatusOr<SweepClosing> closed = store->CloseSweep(may, 150);
  ASSERT_TRUE(closed.ok()) << closed.status().ToString();
  EXPECT_EQ(closed->gone, 0u);
  EXPECT_EQ(store->History("http://site/moved-in")->size(), 1u);
  EXPECT_EQ(store->History("http://site/kept")->size(), 2u);
  ExpectConsistent(*store);
}

// A URL seen live after a sweep's end (by an overlapping sweep that started earlier) is not
// gone at that end: its gone version would be dated before the version it follows.
TEST_P(SweepsTest, NoGoneVersionIsDatedBeforeTheVersionItFollows) {
  auto store = OpenStore();
  const std::vector<std::string> scope = {"http://site/"};
  SweepId long_sweep = store->OpenSweep("long", 100, scope)->id;
  SweepId short_sweep = store->OpenSweep("short", 150, scope)->id;
  Add(*store, long_sweep, 400, {"http://site/late"});
  StatusOr<SweepClosing> closed = store->CloseSweep(short_sweep, 300);
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->gone, 0u);
  ExpectConsistent(*store);
}

TEST_P(SweepsTest, AnEndBeforeTheStartIsRefused) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("s", 1'000, {"http://site/"})->id;
  StatusOr<SweepClosing> closed = store->CloseSweep(s, 999);
  EXPECT_EQ(closed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(closed.status().message().find("before its start 1970-01-01T00:16:40Z"),
            std::string::npos)
      << closed.status().ToString();
  EXPECT_TRUE(store->Sweeps()->front().open);
  store::Store::CloseSweepOptions dry;
  dry.dry_run = true;
  EXPECT_EQ(store->CloseSweep(s, 999, dry).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(SweepsTest, ScopesAreValidatedAndSorted) {
  auto store = OpenStore();
  for (const std::vector<std::string>& bad : {std::vector<std::string>{""},
                                              {"example.com"},
                                              {"http://"},
                                              {"://x"},
                                              {std::string("http://") + std::string(400, 'a')}}) {
    EXPECT_EQ(store->OpenSweep("s", 1, bad).status().code(), StatusCode::kInvalidArgument)
        << (bad[0].size() > 20 ? bad[0].substr(0, 20) : bad[0]);
  }
  StatusOr<SweepInfo> s = store->OpenSweep("s", 1, {"https://b/", "http://a/", "https://b/"});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->scope, (std::vector<std::string>{"http://a/", "https://b/"}));
  // Opened again: the same scope, or none, continues it; another is refused.
  EXPECT_EQ(store->OpenSweep("s", 5, {"http://a/", "https://b/"})->id, s->id);
  EXPECT_EQ(store->OpenSweep("s", 5)->scope, s->scope);
  EXPECT_EQ(store->OpenSweep("s", 5, {"http://c/"}).status().code(),
            StatusCode::kFailedPrecondition);
  // A sweep opened without a scope takes one when opened again with it.
  ASSERT_TRUE(store->OpenSweep("bare", 1).ok());
  EXPECT_EQ(store->OpenSweep("bare", 1, {"http://c/"})->scope,
            (std::vector<std::string>{"http://c/"}));
  ExpectConsistent(*store);
}

// Nested prefixes visit each URL once.
TEST_P(SweepsTest, NestedPrefixesCountEachUrlOnce) {
  auto store = OpenStore();
  SweepId s1 = store->OpenSweep("s1", 1, {"http://site/"})->id;
  Add(*store, s1, 1, {"http://site/docs/a", "http://site/b"});
  SweepId s2 = store->OpenSweep("s2", 10, {"http://site/docs/", "http://site/"})->id;
  StatusOr<SweepClosing> closed = store->CloseSweep(s2, 20);
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->gone, 2u);
  ExpectConsistent(*store);
}

TEST_P(SweepsTest, ADryRunListsWhatWouldBeGoneAndWritesNothing) {
  auto store = OpenStore();
  SweepId s1 = store->OpenSweep("s1", 100, {"http://site/"})->id;
  Add(*store, s1, 100, {"http://site/c", "http://site/a", "http://site/b", "http://elsewhere/x"});
  SweepId s2 = store->OpenSweep("s2", 200, {"http://site/"})->id;
  Add(*store, s2, 200, {"http://site/b"});
  Store::CloseSweepOptions dry;
  dry.dry_run = true;
  dry.list_limit = 1;
  StatusOr<SweepClosing> preview = store->CloseSweep(s2, 300, dry);
  ASSERT_TRUE(preview.ok()) << preview.status().ToString();
  EXPECT_EQ(preview->gone, 2u);
  EXPECT_EQ(preview->gone_urls, (std::vector<std::string>{"http://site/a"}));
  EXPECT_TRUE(preview->sweep.open);
  EXPECT_TRUE(store->Sweeps()->back().open);
  EXPECT_EQ(store->History("http://site/a")->size(), 1u);
  // The real close does what the dry run said.
  dry.dry_run = false;
  dry.list_limit = 10;
  StatusOr<SweepClosing> closed = store->CloseSweep(s2, 300, dry);
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->gone_urls, (std::vector<std::string>{"http://site/a", "http://site/c"}));
  EXPECT_FALSE(closed->sweep.open);
  ExpectConsistent(*store);
}

TEST_P(SweepsTest, ReopenRemovesTheGoneVersionsItsCloseWrote) {
  auto store = OpenStore();
  const std::vector<std::string> scope = {"http://site/"};
  SweepId s1 = store->OpenSweep("s1", 100, scope)->id;
  Add(*store, s1, 100, {"http://site/a", "http://site/b"});
  SweepId s2 = store->OpenSweep("s2", 200, scope)->id;
  PageInput dead = Page("http://site/b", s2, 210, {});
  dead.http_status = 404;
  ASSERT_TRUE(store->Apply(std::vector<PageInput>{dead}).ok());
  ASSERT_EQ(store->CloseSweep(s2, 300)->gone, 1u);  // site/a
  // A later sweep sees site/a again after the mistaken close.
  SweepId s3 = store->OpenSweep("s3", 400, scope)->id;
  Add(*store, s3, 400, {"http://site/a"});
  ASSERT_EQ(store->History("http://site/a")->size(), 3u);

  StatusOr<SweepReopening> reopened = store->ReopenSweep(s2);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(reopened->removed, 1u);
  EXPECT_TRUE(reopened->sweep.open);
  EXPECT_EQ(reopened->sweep.end, 0);
  EXPECT_EQ(reopened->sweep.gone, 1u);  // the 404 stays: it is what the sweep saw
  std::vector<UrlVersion> a = *store->History("http://site/a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].sweep, s1);
  EXPECT_EQ(a[1].sweep, s3);
  EXPECT_EQ(a[1].seq, 2u);
  EXPECT_EQ(store->History("http://site/b")->back().http_status, 404);
  EXPECT_EQ(store->ReopenSweep(s2).status().code(), StatusCode::kFailedPrecondition);
  ExpectConsistent(*store);
  // Closed again, later: site/a was seen by s3, a later sweep, so nothing is gone.
  EXPECT_EQ(store->CloseSweep(s2, 350)->gone, 0u);
  ExpectConsistent(*store);
}

// The bug: a WARC imported without --date opened its sweep at the time of the import, after the
// records it holds.
TEST_P(SweepsTest, ASweepStartsNoLaterThanItsEarliestVersion) {
  auto store = OpenStore();
  SweepId s = store->OpenSweep("import", 5'000, {"http://site/"})->id;
  Add(*store, s, 1'200, {"http://site/old"});
  Add(*store, s, 6'000, {"http://site/new"});
  EXPECT_EQ(store->Sweeps()->front().start, 1'200);
  ExpectConsistent(*store);
}

// The bug: a URL over 480 bytes reached the gone filter and the list of gone URLs as its `urls`
// key (its first 471 bytes, 0xFF and a hash), because its key, 480 bytes like a URL of exactly
// 480, was taken for a whole URL.
TEST_P(SweepsTest, ALongGoneUrlIsListedWhole) {
  auto store = OpenStore();
  const std::string long_url = "http://site/" + std::string(600, 'l');
  const std::string url_480 = "http://site/" + std::string(480 - 12, 'x');
  ASSERT_EQ(url_480.size(), 480u);
  SweepId s1 = store->OpenSweep("s1", 100, {"http://site/"})->id;
  Add(*store, s1, 100, {long_url, url_480});
  SweepId s2 = store->OpenSweep("s2", 200, {"http://site/"})->id;
  std::vector<std::string> filtered;
  Store::CloseSweepOptions close;
  close.list_limit = 10;
  close.may_be_gone = [&](std::string_view url) {
    filtered.emplace_back(url);
    return true;
  };
  StatusOr<SweepClosing> closed = store->CloseSweep(s2, 300, close);
  ASSERT_TRUE(closed.ok()) << closed.status().ToString();
  std::vector<std::string> expected = {long_url, url_480};
  std::sort(expected.begin(), expected.end());
  std::sort(filtered.begin(), filtered.end());
  std::vector<std::string> listed = closed->gone_urls;
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(filtered, expected);
  EXPECT_EQ(listed, expected);
  EXPECT_EQ(LastVerdict(*store, long_url), Verdict::kGone);
  ExpectConsistent(*store);
}

}  // namespace
}  // namespace shingled::store
