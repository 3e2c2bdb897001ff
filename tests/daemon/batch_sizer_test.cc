// BatchSizer against simulated stores: commit costs per page that depend on the commit's size as
// the measured ones do (docs/notes/performance-studies.md, "Commit size"), with and without noise.
#include "daemon/ingest/batch_sizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <vector>

namespace shingled::daemon {
namespace {

// Seconds per page of a commit of `pages`, per store: what store_bench measured (us per page,
// steady, BM_IngestDurable/N/B) at 1,000, 2,000, 4,000 (and 8,000 and 16,000) pages; a commit
// costs what the largest of those sizes at or below it costs.
using CostCurve = std::function<double(size_t pages)>;

CostCurve Measured(std::map<size_t, double> us_per_page) {
  return [=](size_t pages) { return std::prev(us_per_page.upper_bound(pages))->second * 1e-6; };
}
CostCurve Measured(double at1000, double at2000, double at4000) {
  return Measured({{1000, at1000}, {2000, at2000}, {4000, at4000}});
}
const CostCurve kStore100k = Measured(254, 174, 119);  // cheapest at 4,000
const CostCurve kStore1M = Measured(234, 240, 380);    // 1,000 and 2,000 alike, 4,000 dear
// Twice the cost per page at each step up.
const CostCurve kTwofoldDown = Measured(120, 240, 480);
// Up to 16,000 pages (the default ladder): cheapest at the top, but at 1M 2,000 and 4,000 are
// dearer than 1,000.
const CostCurve kStore100kTo16k =
    Measured({{1000, 254}, {2000, 174}, {4000, 109}, {8000, 90}, {16000, 63}});
const CostCurve kStore1MTo16k =
    Measured({{1000, 234}, {2000, 240}, {4000, 380}, {8000, 205}, {16000, 176}});

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
  EXPECT_EQ(BatchSizer(BatchSizer::Options{}).ladder(),
            (std::vector<size_t>{1000, 2000, 4000, 8000, 16000}));
  // A smallest at or above the largest fixes the limit (the pre-sizer behaviour).
  EXPECT_EQ(BatchSizer(Options(1000, 1000)).ladder(), (std::vector<size_t>{1000}));
  EXPECT_EQ(BatchSizer(Options(5000, 1000)).ladder(), (std::vector<size_t>{1000}));
  EXPECT_EQ(BatchSizer(Options(0, 1000)).ladder(), (std::vector<size_t>{1000}));
}

TEST(BatchSizerTest, StartsAtTheLargest) {
  EXPECT_EQ(BatchSizer(Options(1000, 4000)).limit(), 4000u);
  EXPECT_EQ(BatchSizer(BatchSizer::Options{}).limit(), 16000u);
  EXPECT_EQ(BatchSizer(BatchSizer::Options{}).chosen(), 16000u);
}

TEST(BatchSizerTest, AFixedLimitNeverMoves) {
  BatchSizer sizer(Options(2000, 2000));
  const std::map<size_t, int> taken = Commit(sizer, kStore100k, 500);
  EXPECT_EQ(taken, (std::map<size_t, int>{{2000, 500}}));
}

TEST(BatchSizerTest, StaysAtTheLargestWhereItIsCheapest) {
  // The default ladder on the stores measured: 16,000 is the cheapest, at 1M past a bump
  // (2,000 and 4,000 dearer than 1,000). Only the rounds' tries leave it: 5 commits at each other
  // size, and 5 at 16,000 after each, every 48 to 384 commits.
  for (const CostCurve& store : {kStore100kTo16k, kStore1MTo16k}) {
    BatchSizer sizer(BatchSizer::Options{});
    const std::map<size_t, int> taken = Commit(sizer, store, 1000);
    EXPECT_EQ(sizer.chosen(), 16000u);
    EXPECT_GE(taken.at(16000), 880) << "of 1000";
  }
}

TEST(BatchSizerTest, ClimbsPastABumpToTheCheapestSize) {
  // After a failed commit it is back at 1,000 for 384 commits; the next round tries every size,
  // so that 2,000 and 4,000 being dearer than 1,000 at 1M does not stop it below 16,000.
  BatchSizer sizer(BatchSizer::Options{});
  sizer.Failed();
  Commit(sizer, kStore1MTo16k, 384);
  ASSERT_EQ(sizer.chosen(), 1000u);
  // The round: 4 tries of 5 commits, each followed by 5 at 1,000.
  Commit(sizer, kStore1MTo16k, 40);
  EXPECT_EQ(sizer.chosen(), 16000u);
}

TEST(BatchSizerTest, MovesDownToTheCheapestSizeAndStaysThere) {
  BatchSizer sizer(Options(1000, 4000));
  // One round takes it from 4,000 to 1,000: 12 commits at 4,000 (the first round waits a quarter
  // of a stay), then 1,000 and 2,000 tried (5 commits each, 2 to settle and 3 measured, each
  // followed by as many at 4,000): 32 commits. A second round, 3 commits after a move, confirms
  // it.
  Commit(sizer, kTwofoldDown, 32);
  EXPECT_EQ(sizer.chosen(), 1000u);
  Commit(sizer, kTwofoldDown, 25);
  EXPECT_EQ(sizer.chosen(), 1000u);
  std::map<size_t, int> taken = Commit(sizer, kTwofoldDown, 1000);
  // Thereafter only the rounds' tries leave 1,000: 5 commits at each other size, every 48 to 384.
  EXPECT_GE(taken.at(1000), 900) << "of 1000";
  EXPECT_LE(taken[4000], 50);
}

TEST(BatchSizerTest, FindsACheaperSizeBeyondAPlateau) {
  // The sizes next to the largest cost what it does; the smallest costs half.
  BatchSizer sizer(BatchSizer::Options{});
  Commit(sizer, Measured({{1000, 100}, {2000, 150}, {4000, 200}, {8000, 200}, {16000, 200}}), 52);
  EXPECT_EQ(sizer.chosen(), 1000u);
}

TEST(BatchSizerTest, ATrendDoesNotLookLikeADifference) {
  // Every size costs the same, but commits get cheaper one after the other (a map being faulted
  // in), three times dearer at first: the later of two sizes would look cheaper if measured one
  // after the other. Alternating, the sizer sees no difference.
  BatchSizer sizer(Options(1000, 4000));
  const std::map<size_t, int> taken = Commit(sizer, Measured(100, 100, 100), 200, 0, 1,
                                             [](int i) { return 1 + 2 * std::exp(-i / 20.0); });
  EXPECT_EQ(sizer.chosen(), 4000u);
  EXPECT_GE(taken.at(4000), 150);
}

TEST(BatchSizerTest, ACommitsCheapnessAfterSmallerOnesIsNotTakenForItsSize) {
  // As LMDB's free list makes it: a commit reuses the pages freed two commits before it, so one
  // larger than that finds too few and writes the rest at the file's end, at half its steady
  // cost per page. Measured from their first commit, 4,000's would look cheaper than 1,000's at
  // 1M documents (and the sizer, having moved down to 1,000, would go back up).
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
  // 22 before and in the first round (12, then 5 after each try), then 5 in each later one.
  EXPECT_LE(taken[4000], 50);
}

TEST(BatchSizerTest, MovesToTheSmallestWhenLargerCommitsCostMore) {
  BatchSizer sizer(Options(1000, 4000));
  // 2,000 is 2.5% dearer than 1,000 here: within the margin (10%), so the sizer stays at 1,000
  // once there.
  std::map<size_t, int> taken = Commit(sizer, kStore1M, 1000);
  EXPECT_EQ(sizer.chosen(), 1000u);
  EXPECT_GE(taken.at(1000), 860) << "of 1000";
  EXPECT_LE(taken[4000], 60) << "4,000 is only tried";
}

TEST(BatchSizerTest, FollowsTheStoreWhenTheCheapestSizeChanges) {
  BatchSizer sizer(Options(1000, 4000));
  Commit(sizer, kStore100k, 200);
  ASSERT_EQ(sizer.chosen(), 4000u);
  // The store changed: 4,000 is now the dearest. The next rounds step back down.
  Commit(sizer, kTwofoldDown, 300);
  ASSERT_EQ(sizer.chosen(), 1000u);
  // And back up when 4,000 is the cheapest again.
  Commit(sizer, kStore100k, 300);
  EXPECT_EQ(sizer.chosen(), 4000u);
}

TEST(BatchSizerTest, NoiseOfFifteenPercentDoesNotHideATwofoldDifference) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    BatchSizer up(Options(1000, 4000));
    const std::map<size_t, int> up_taken = Commit(up, kStore100k, 1000, 0.15, seed);
    EXPECT_GE(up_taken.at(4000), 850) << "seed " << seed;
    BatchSizer down(Options(1000, 4000));
    const std::map<size_t, int> down_taken = Commit(down, kTwofoldDown, 1000, 0.15, seed);
    EXPECT_GE(down_taken.at(1000), 850) << "seed " << seed;
    // Where 1,000 and 2,000 cost alike, noise may move it between them, but not back to 4,000,
    // which it only tries (rounds come more often while it moves).
    BatchSizer flat(Options(1000, 4000));
    std::map<size_t, int> flat_taken = Commit(flat, kStore1M, 1000, 0.15, seed);
    EXPECT_NE(flat.chosen(), 4000u) << "seed " << seed;
    EXPECT_LE(flat_taken[4000], 100) << "seed " << seed;
  }
}

TEST(BatchSizerTest, EqualCostsDoNotMoveIt) {
  // Within the margin nothing is cheaper: the sizer keeps the size it has.
  BatchSizer sizer(Options(1000, 4000));
  const std::map<size_t, int> taken = Commit(sizer, Measured(98, 99, 100), 500);
  EXPECT_EQ(sizer.chosen(), 4000u);
  EXPECT_GE(taken.at(4000), 420);
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

TEST(BatchSizerTest, WithoutExploringItStaysAtTheLargest) {
  // The daemon's default (ingest.measure_batch_size = false): no rounds, even where a smaller
  // size is much cheaper.
  BatchSizer::Options options;
  options.explore = false;
  BatchSizer sizer(options);
  std::map<size_t, int> taken = Commit(sizer, kTwofoldDown, 2000);
  EXPECT_EQ(taken, (std::map<size_t, int>{{16000, 2000}}));
  // A failed commit: the smallest for 8 stays (384 full commits), then the largest again.
  sizer.Failed();
  EXPECT_EQ(sizer.limit(), 1000u);
  // Short commits do not count towards the stay.
  for (int i = 0; i < 100; ++i) sizer.Committed(500, 0.1);
  taken = Commit(sizer, kTwofoldDown, 384);
  EXPECT_EQ(taken, (std::map<size_t, int>{{1000, 384}}));
  EXPECT_EQ(sizer.limit(), 16000u);
  taken = Commit(sizer, kTwofoldDown, 2000);
  EXPECT_EQ(taken, (std::map<size_t, int>{{16000, 2000}}));
  // And again after another failure.
  sizer.Failed();
  EXPECT_EQ(sizer.limit(), 1000u);
}

TEST(BatchSizerTest, ShortCommitsDoNotCount) {
  BatchSizer sizer(Options(1000, 4000));
  // A lightly loaded writer: commits of what was queued, below the limit. Nothing is learnt and
  // nothing changes, however cheap they look.
  for (int i = 0; i < 500; ++i) sizer.Committed(300, 1e-6);
  EXPECT_EQ(sizer.limit(), 4000u);
  // Twelve full commits start the first round: 5 commits at 1,000, then 5 at 4,000, then 2,000's
  // turn.
  for (int i = 0; i < 11; ++i) sizer.Committed(4000, 0.4);
  EXPECT_EQ(sizer.limit(), 4000u);
  sizer.Committed(4000, 0.4);
  EXPECT_EQ(sizer.limit(), 1000u);
  for (int i = 0; i < 5; ++i) sizer.Committed(1000, 0.25);
  EXPECT_EQ(sizer.limit(), 4000u);
  for (int i = 0; i < 4; ++i) sizer.Committed(4000, 0.4);
  sizer.Committed(3000, 0.3);  // short: 4,000's stretch waits for a full commit
  EXPECT_EQ(sizer.limit(), 4000u);
  sizer.Committed(4000, 0.4);
  EXPECT_EQ(sizer.limit(), 2000u);
}

TEST(BatchSizerTest, AProbeTheQueueNeverFillsIsGivenUp) {
  BatchSizer sizer(Options(1000, 4000));
  sizer.Failed();  // at 1,000 for 384 full commits
  for (int i = 0; i < 384; ++i) sizer.Committed(1000, 0.25);
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
