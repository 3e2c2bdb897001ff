// Store::KnownUrls: the live URLs a crawler revisits, paged, on real LMDB files.
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
using testing::SyntheticSketch;

class KnownUrlsTest : public testing::StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
  }
  PageInput Page(std::string url, SweepId sweep, int64_t date, uint64_t first_shingle,
                 int http_status = 200) {
    PageInput p;
    p.url = std::move(url);
    p.sweep = sweep;
    p.date = date;
    p.http_status = http_status;
    if (http_status == 200) p.sketch = SyntheticSketch(params_, Range(first_shingle, 200), 0);
    return p;
  }
  // Every live URL, read in pages of `page_size` URLs looked at.
  std::vector<std::string> AllKnown(size_t page_size, size_t* calls = nullptr) {
    std::vector<std::string> out;
    UrlId after = 0;
    size_t n = 0;
    do {
      size_t visited = 0;
      StatusOr<UrlId> next = store_->KnownUrls(after, page_size, [&](std::string_view url) {
        out.emplace_back(url);
        ++visited;
      });
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok()) break;
      EXPECT_LE(visited, page_size);
      after = *next;
      ++n;
    } while (after != 0);
    if (calls != nullptr) *calls = n;
    return out;
  }

  std::unique_ptr<Store> store_;
};
SHINGLED_STORE_ENGINES(KnownUrlsTest);

TEST_P(KnownUrlsTest, EmptyStoreHasNone) {
  size_t calls = 0;
  EXPECT_TRUE(AllKnown(10, &calls).empty());
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(store_->KnownUrls(0, 0, [](std::string_view) {}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_P(KnownUrlsTest, ListsLiveUrlsAndLeavesOutDeadAndGoneOnes) {
  const SweepId s1 = store_->OpenSweep("one", 100, {"http://site/"})->id;
  std::vector<PageInput> first;
  for (int i = 0; i < 6; ++i) {
    first.push_back(Page("http://site/" + std::to_string(i), s1, 100, 1000 * (i + 1)));
  }
  first.push_back(Page("http://site/never", s1, 100, 0, 404));  // dead from the start
  ASSERT_TRUE(store_->Apply(first).ok());
  ASSERT_TRUE(store_->CloseSweep(s1, 150).ok());
  EXPECT_EQ(AllKnown(100),
            (std::vector<std::string>{"http://site/0", "http://site/1", "http://site/2",
                                      "http://site/3", "http://site/4", "http://site/5"}));

  // Sweep two: /1 answers 410, /2 is not seen (gone at close), /3 changes, /new is born; a
  // URL that died once and lives again (/never) is live again.
  const SweepId s2 = store_->OpenSweep("two", 200, {"http://site/"})->id;
  std::vector<PageInput> second = {
      Page("http://site/0", s2, 200, 1000),   Page("http://site/1", s2, 200, 0, 410),
      Page("http://site/3", s2, 200, 90000),  Page("http://site/4", s2, 200, 5000),
      Page("http://site/5", s2, 200, 6000),   Page("http://site/new", s2, 200, 70000),
      Page("http://site/never", s2, 200, 80000)};
  ASSERT_TRUE(store_->Apply(second).ok());
  ASSERT_TRUE(store_->CloseSweep(s2, 250).ok());
  const std::vector<std::string> expected = {"http://site/0", "http://site/3", "http://site/4",
                                             "http://site/5", "http://site/never",
                                             "http://site/new"};
  EXPECT_EQ(AllKnown(100), expected);
  // The history agrees with what was left out.
  EXPECT_EQ(store_->History("http://site/1")->back().http_status, 410);
  EXPECT_EQ(store_->History("http://site/2")->back().verdict, Verdict::kGone);

  // Paging gives the same URLs, whatever the page size; each call looks at most at its limit.
  for (size_t page : {1u, 2u, 3u, 7u, 8u}) {
    size_t calls = 0;
    EXPECT_EQ(AllKnown(page, &calls), expected) << "page size " << page;
    // 8 URLs in the store: ceil(8 / page) calls (the last one sees the end of the table).
    EXPECT_EQ(calls, (8 + page - 1) / page) << "page size " << page;
  }
}

TEST_P(KnownUrlsTest, LongUrlsComeBackWhole) {
  const SweepId s = store_->OpenSweep("s", 1)->id;
  const std::string long_url = "http://site/" + std::string(600, 'x');  // hashed key (> 480)
  ASSERT_TRUE(store_->Apply(std::vector<PageInput>{Page(long_url, s, 1, 1000)}).ok());
  EXPECT_EQ(AllKnown(10), std::vector<std::string>{long_url});
}

// A URL stored while a listing is being paged through is seen by a later page: ids only grow.
TEST_P(KnownUrlsTest, UrlsAddedBetweenPagesAreSeenLater) {
  const SweepId s = store_->OpenSweep("s", 1)->id;
  ASSERT_TRUE(store_->Apply(std::vector<PageInput>{Page("http://a/", s, 1, 1000),
                                                   Page("http://b/", s, 1, 2000)})
                  .ok());
  std::vector<std::string> seen;
  StatusOr<UrlId> next =
      store_->KnownUrls(0, 1, [&](std::string_view url) { seen.emplace_back(url); });
  ASSERT_TRUE(next.ok());
  ASSERT_NE(*next, 0u);
  ASSERT_TRUE(store_->Apply(std::vector<PageInput>{Page("http://c/", s, 2, 3000)}).ok());
  UrlId after = *next;
  while (after != 0) {
    next = store_->KnownUrls(after, 1, [&](std::string_view url) { seen.emplace_back(url); });
    ASSERT_TRUE(next.ok());
    after = *next;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"http://a/", "http://b/", "http://c/"}));
}

}  // namespace
}  // namespace shingled::store
