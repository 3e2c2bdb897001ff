// BatchSizer against simulated stores: commit costs per page that depend on the commit's size as
// the measured ones do (store/FORMAT.md, "Commit size"), with and without noise.
#include "daemon/batch_sizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <random>
#include <vector>

namespace shingled::daemon {
namespace {

// Seconds per page of a commit of `pages`, per store: what store_bench measured (us per page,
// steady, BM_IngestDurable/N/B) at 1,000, 2,000 and 4,000 pages.
using CostCurve = std::function<double(size_t pages)>;

CostCurve Measured(double at1000, double at2000, double at4000) {
  return [=](size_t pages) {
    if (pages <= 1000) return at1000 * 1e-6;
    if (pages <= 2000) return at2000 * 1e-6;
    return at4000 * 1e-6;
  };
}
const CostCurve kStore100k = Measured(254, 174, 119);  // cheapest at 4,000
const CostCurve kStore1M = Measured(234, 240, 380);    // 1,000 and 2,000 alike, 4,000 dear
// Twice the cost per page at each step up.
const CostCurve kTwofoldDown = Measured(120, 240, 480);

// Runs `commits` full commits at the sizer's limits, with multiplicative noise of +-`noise` and
// the i-th commit's cost times trend(i); returns how many commits each limit took.
std::map<size_t, int> Commit(BatchSizer& sizer, const CostCurve& cost, int commits,
                             double noise = 0, unsigned seed = 1,
                             const std::function<double(int)>& trend = nullptr) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::map<size_t, int> taken;
  for (int i = 0; i < commits; ++i) {
    const size_t pages = sizer.limit();
    ++taken[pages];
    const double factor = jitter(rng) * (trend ? trend(i) : 1.0);
    sizer.Committed(pages, cost(pages) * static_cast<double>(pages) * factor);
  }
  return taken;
}

BatchSizer::Options Options(size_t min_pages, size_t max_pages) {
  BatchSizer::Options o;
  o.min_pages = min_pages;
  o.max_pages = max_pages;
  return o;
}

TEST(BatchSizerTest, LadderDoublesFromTheSmallestToTheLargest) {
  EXPECT_EQ(BatchSizer(Options(1000, 4000)).ladder(), (std::vector<size_t>{1000, 2000, 4000}));
  EXPECT_EQ(BatchSizer(Options(1000, 5000)).ladder(),
            (std::vector<size_t>{1000, 2000, 4000, 5000}));
  EXPECT_EQ(BatchSizer(Options(256, 1000)).ladder(), (std::vector<size_t>{256, 512, 1000}));
  // A smallest at or above the largest fixes the limit (the pre-sizer behaviour).
  EXPECT_EQ(BatchSizer(Options(1000, 1000)).ladder(), (std::vector<size_t>{1000}));
  EXPECT_EQ(BatchSizer(Options(5000, 1000)).ladder(), (std::vector<size_t>{1000}));
  EXPECT_EQ(BatchSizer(Options(0, 1000)).ladder(), (std::vector<size_t>{1000}));
}

TEST(BatchSizerTest, StartsAtTheSmallest) {
  EXPECT_EQ(BatchSizer(Options(1000, 4000)).limit(), 1000u);
}

TEST(BatchSizerTest, AFixedLimitNeverMoves) {
  BatchSizer sizer(Options(2000, 2000));
  const std::map<size_t, int> taken = Commit(sizer, kStore100k, 500);
  EXPECT_EQ(taken, (std::map<size_t, int>{{2000, 500}}));
}

TEST(BatchSizerTest, ClimbsToTheCheapestSizeAndStaysThere) {
  BatchSizer sizer(Options(1000, 4000));
  // One round takes it from 1,000 to 4,000: 3 commits at 1,000, then 2,000 and 4,000 tried (5
  // commits each, 2 to settle and 3 measured, each followed by as many at 1,000): 23 commits. A
  // second round confirms it.
  Commit(sizer, kStore100k, 23);
  EXPECT_EQ(sizer.chosen(), 4000u);
  Commit(sizer, kStore100k, 25);
  EXPECT_EQ(sizer.chosen(), 4000u);
  std::map<size_t, int> taken = Commit(sizer, kStore100k, 1000);
  // Thereafter only the rounds' tries leave 4,000: 5 commits at each other size, every 48 to 384.
  EXPECT_GE(taken.at(4000), 900) << "of 1000";
  EXPECT_LE(taken[1000], 50);
}

TEST(BatchSizerTest, FindsACheaperSizeBeyondAPlateau) {
  // A 100k store just opened: 2,000 costs what 1,000 does, 4,000 a third less.
  BatchSizer sizer(Options(1000, 4000));
  Commit(sizer, Measured(175, 180, 117), 40);
  EXPECT_EQ(sizer.chosen(), 4000u);
}

TEST(BatchSizerTest, ATrendDoesNotLookLikeADifference) {
  // Every size costs the same, but commits get cheaper one after the other (a map being faulted
  // in), three times dearer at first: the later of two sizes would look cheaper if measured one
  // after the other. Alternating, the sizer sees no difference.
  BatchSizer sizer(Options(1000, 4000));
  const std::map<size_t, int> taken = Commit(sizer, Measured(100, 100, 100), 200, 0, 1,
                                             [](int i) { return 1 + 2 * std::exp(-i / 20.0); });
  EXPECT_EQ(sizer.chosen(), 1000u);
  EXPECT_GE(taken.at(1000), 150);
}

TEST(BatchSizerTest, ACommitsCheapnessAfterSmallerOnesIsNotTakenForItsSize) {
  // As LMDB's free list makes it: a commit reuses the pages freed two commits before, so one
  // larger than that finds too few and writes the rest at the file's end, at half its steady
  // cost per page. Measured from their first commit, 4,000's would look cheaper than 1,000's at
  // 1M documents.
  BatchSizer sizer(Options(1000, 4000));
  size_t before[2] = {0, 0};
  std::map<size_t, int> taken;
  for (int i = 0; i < 500; ++i) {
    const size_t pages = sizer.limit();
    ++taken[pages];
    const double discount = pages > before[1] ? 0.5 : 1.0;
    sizer.Committed(pages, kStore1M(pages) * static_cast<double>(pages) * discount);
    before[1] = before[0];
    before[0] = pages;
  }
  EXPECT_NE(sizer.chosen(), 4000u);
  EXPECT_LE(taken[4000], 40);
}

TEST(BatchSizerTest, StaysAtTheSmallestWhenLargerCommitsCostMore) {
  BatchSizer sizer(Options(1000, 4000));
  // 2,000 is 2.5% dearer than 1,000 here: within the margin (10%), so the sizer stays.
  std::map<size_t, int> taken = Commit(sizer, kStore1M, 1000);
  EXPECT_EQ(sizer.chosen(), 1000u);
  EXPECT_GE(taken.at(1000), 880) << "of 1000";
  EXPECT_LE(taken[4000], 50) << "4,000 is only tried";
}

TEST(BatchSizerTest, FollowsTheStoreWhenTheCheapestSizeChanges) {
  BatchSizer sizer(Options(1000, 4000));
  Commit(sizer, kStore100k, 200);
  ASSERT_EQ(sizer.chosen(), 4000u);
  // The store changed: 4,000 is now the dearest. The next rounds step back down.
  Commit(sizer, kTwofoldDown, 300);
  EXPECT_EQ(sizer.chosen(), 1000u);
}

TEST(BatchSizerTest, NoiseOfFifteenPercentDoesNotHideATwofoldDifference) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    BatchSizer up(Options(1000, 4000));
    const std::map<size_t, int> up_taken = Commit(up, kStore100k, 1000, 0.15, seed);
    EXPECT_GE(up_taken.at(4000), 850) << "seed " << seed;
    BatchSizer down(Options(1000, 4000));
    const std::map<size_t, int> down_taken = Commit(down, kTwofoldDown, 1000, 0.15, seed);
    EXPECT_GE(down_taken.at(1000), 850) << "seed " << seed;
    // Where 1,000 and 2,000 cost alike, noise may move it between them, but not to 4,000, which
    // it only tries (3 commits a round; rounds come more often while it moves).
    BatchSizer flat(Options(1000, 4000));
    std::map<size_t, int> flat_taken = Commit(flat, kStore1M, 1000, 0.15, seed);
    EXPECT_NE(flat.chosen(), 4000u) << "seed " << seed;
    EXPECT_LE(flat_taken[4000], 100) << "seed " << seed;
  }
}

TEST(BatchSizerTest, EqualCostsDoNotMoveIt) {
  // Within the margin nothing is cheaper: the sizer keeps the smallest, which answers soonest.
  BatchSizer sizer(Options(1000, 4000));
  const std::map<size_t, int> taken = Commit(sizer, Measured(100, 99, 98), 500);
  EXPECT_EQ(sizer.chosen(), 1000u);
  EXPECT_GE(taken.at(1000), 420);
}

TEST(BatchSizerTest, AFailedCommitGoesBackToTheSmallestSize) {
  BatchSizer sizer(Options(1000, 4000));
  Commit(sizer, kStore100k, 100);
  ASSERT_EQ(sizer.chosen(), 4000u);
  sizer.Failed();
  EXPECT_EQ(sizer.chosen(), 1000u);
  EXPECT_EQ(sizer.limit(), 1000u);
  // And it stays there for 8 stays (384 full commits) before it tries the others again.
  const std::map<size_t, int> taken = Commit(sizer, kStore100k, 384);
  EXPECT_EQ(taken, (std::map<size_t, int>{{1000, 384}}));
  EXPECT_EQ(sizer.limit(), 2000u);
}

TEST(BatchSizerTest, ShortCommitsDoNotCount) {
  BatchSizer sizer(Options(1000, 4000));
  // A lightly loaded writer: commits of what was queued, below the limit. Nothing is learnt and
  // nothing changes, however cheap they look.
  for (int i = 0; i < 500; ++i) sizer.Committed(300, 1e-6);
  EXPECT_EQ(sizer.limit(), 1000u);
  // Three full commits start a round: 5 commits at 2,000, then 5 at 1,000, then 4,000's turn.
  for (int i = 0; i < 3; ++i) sizer.Committed(1000, 0.25);
  EXPECT_EQ(sizer.limit(), 2000u);
  for (int i = 0; i < 5; ++i) sizer.Committed(2000, 0.4);
  EXPECT_EQ(sizer.limit(), 1000u);
  for (int i = 0; i < 4; ++i) sizer.Committed(1000, 0.25);
  sizer.Committed(700, 0.1);  // short: 1,000's stretch waits for a full commit
  EXPECT_EQ(sizer.limit(), 1000u);
  sizer.Committed(1000, 0.25);
  EXPECT_EQ(sizer.limit(), 4000u);
}

TEST(BatchSizerTest, AProbeTheQueueNeverFillsIsGivenUp) {
  BatchSizer sizer(Options(1000, 4000));
  for (int i = 0; i < 3; ++i) sizer.Committed(1000, 0.25);
  ASSERT_EQ(sizer.limit(), 2000u);
  // The queue holds at most 1,500 pages (its byte bound, say): 2,000 never fills. After 20 short
  // commits (4 for each of the try's 5) it ends as infinitely dear, then 4,000's, and the sizer
  // is back at 1,000.
  for (int i = 0; i < 19; ++i) sizer.Committed(1500, 0.3);
  EXPECT_EQ(sizer.limit(), 2000u);
  sizer.Committed(1500, 0.3);
  EXPECT_EQ(sizer.limit(), 4000u);
  for (int i = 0; i < 20; ++i) sizer.Committed(1500, 0.3);
  EXPECT_EQ(sizer.limit(), 1000u);
}

}  // namespace
}  // namespace shingled::daemon
