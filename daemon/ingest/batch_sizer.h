// How many pages the store writer takes into one group commit (config: ingest.min_batch_pages,
// ingest.batch_pages; docs/notes/performance-studies.md, "Commit size").
//
// A commit's cost per page falls as the commit grows, as long as its pages share the index pages
// it rewrites; in between it can rise, while the commit dirties so many pages that their
// bookkeeping (LMDB's and the kernel's) dominates. Measured on these machines over 200,000 new
// pages (store_bench BM_IngestSized), 16,000 pages per commit is the cheapest at 10k, 100k and
// 1M documents (3.3x, 3.6x and 1.7x the pages/s of 1,000), but at 1M the curve is not
// monotonic: 4,000 there is slower than 1,000. Other machines (less memory, slower disks) may
// differ, so the sizer measures instead of assuming. It keeps a ladder of sizes (min, 2 min,
// 4 min, ..., max), starts at the largest and commits at one of them; every round, it tries each
// other size for a few commits, then the current one again for as many, and moves to the size
// whose cost per page, over the current size's just after, is lowest (by the medians, and only
// when lower by a margin: the machine is noisy). Each stretch starts with commits that are not
// measured: a commit reuses the pages freed two commits before (LMDB's free list), so its cost
// depends on the sizes of the two before it, and only the third commit of a size costs what that
// size costs in a run of its own (a 4,000-page commit after 1,000-page ones finds few free pages
// and writes the rest at the file's end, in long runs: cheaper than its steady cost). Every size
// is tried, not only the neighbours: the curve has plateaus and bumps (at 1M documents, 2,000
// and 4,000 are dearer than 1,000, 8,000 and 16,000 cheaper). Rounds come soon while the sizer
// moves, then further apart (up to 8 times stay_commits); the first comes after a quarter of
// stay_commits.
//
// Only commits that took the whole limit count: a shorter one means the queue ran dry, when the
// size does not matter (a lightly loaded writer commits what it has and answers soon).
//
// The rounds cost what the sizes they try cost, and more: the first commits at a size after
// another size's are dearer than its steady ones. Over 800,000 pages (store_bench
// BM_IngestSizedLong), the sizer's first round (5 commits at each of 1,000 to 8,000, each
// followed by 5 at 16,000) made the whole run cost 41% more CPU per page than a fixed 16,000
// into a store of 100k documents, 29% more into 1M (docs/notes/performance-studies.md, "Commit size"). So the
// daemon runs the rounds only when asked (ingest.measure_batch_size, Options::explore); by
// default it commits at the largest size, and keeps the smallest for its other use: after a
// failed commit.
#ifndef SHINGLED_DAEMON_BATCH_SIZER_H_
#define SHINGLED_DAEMON_BATCH_SIZER_H_

#include <cstddef>
#include <vector>

namespace shingled::daemon {

class BatchSizer {
 public:
  struct Options {
    size_t min_pages = 1000;   // the smallest limit
    size_t max_pages = 16000;  // the largest, and the first; min_pages >= max_pages fixes it
    int settle_commits = 2;   // full commits at a size, in a round, before its measured ones
    int probe_commits = 3;    // measured full commits at a size tried (and then at the current)
    int stay_commits = 48;    // full commits at the chosen size between rounds (at first fewer)
    double margin = 0.10;     // a size must be this much cheaper per page to be moved to
    // false: no rounds. It commits at the largest size but after a failed commit (at the
    // smallest for 8 stays, then back to the largest). The daemon's default
    // (ingest.measure_batch_size): on the machines measured the largest size was the cheapest at
    // every store size, so the tries were pure cost (above).
    bool explore = true;
  };

  explicit BatchSizer(const Options& options);

  // The most pages the next commit should take.
  size_t limit() const {
    return ladder_[probing_ && probe_turn() ? probes_[probe_index_] : level_];
  }

  // The size chosen: limit() but while a round tries other sizes.
  size_t chosen() const { return ladder_[level_]; }

  // A commit of `pages` that took `seconds`, whole (a failed one is not reported). Counts when
  // `pages` is the limit it was taken under.
  void Committed(size_t pages, double seconds);

  // A commit that failed (a full disk, a full map): back to the smallest size, which dirties the
  // fewest pages, for a long while (8 times stay_commits full commits); then a round, or, without
  // exploring, the largest size again.
  void Failed();

  // The sizes the sizer chooses among, ascending.
  const std::vector<size_t>& ladder() const { return ladder_; }

 private:
  void StartRound();
  // Without exploring: the stay after a failure ended.
  void BackToTheLargest();
  void StartProbe();
  // Records the ratio of the probe that ended and starts the next one, or ends the round.
  void FinishProbe(double ratio);
  void EndRound();
  static double Median(std::vector<double> costs);

  Options options_;
  std::vector<size_t> ladder_;
  size_t level_ = 0;      // the size committed at, into ladder_
  int stay_left_;         // full commits at level_ before the next round
  int quiet_rounds_ = 0;  // rounds in a row that did not move (the stay lengthens)

  bool probing_ = false;
  std::vector<size_t> probes_;  // the levels this round tries
  size_t probe_index_ = 0;      // into probes_
  int step_ = 0;                // full commits into this probe: the probe's size, then level_'s
  std::vector<double> probe_costs_;  // seconds per page of the probe's measured commits
  std::vector<double> level_costs_;  // and of level_'s after them
  std::vector<double> ratios_;       // per finished probe: its median over level_'s
  int probe_misses_ = 0;             // short commits at the probe's size
  bool probe_turn() const { return step_ < options_.settle_commits + options_.probe_commits; }
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_BATCH_SIZER_H_
