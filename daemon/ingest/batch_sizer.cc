#include "daemon/ingest/batch_sizer.h"

#include <algorithm>
#include <limits>

namespace shingled::daemon {

namespace {

// A probe whose size the queue does not fill this many times per commit it needs is given up
// (the load is too light for that size to matter, or the queue's bounds are below it).
constexpr int kMissesPerProbeCommit = 4;

}  // namespace

BatchSizer::BatchSizer(const Options& options) : options_(options) {
  options_.settle_commits = std::max(0, options_.settle_commits);
  options_.probe_commits = std::max(1, options_.probe_commits);
  options_.stay_commits = std::max(1, options_.stay_commits);
  const size_t max_pages = std::max<size_t>(1, options_.max_pages);
  if (options_.min_pages == 0 || options_.min_pages >= max_pages) {
    ladder_.push_back(max_pages);
  } else {
    for (size_t s = options_.min_pages; s < max_pages; s *= 2) ladder_.push_back(s);
    ladder_.push_back(max_pages);
  }
  // It starts at the largest size, the cheapest per page wherever it was measured, and looks
  // around after a quarter of a stay (12 full commits): the tries of the smaller sizes are dear
  // where the largest is the cheapest (at 100k documents, a page costs 2.5 times as much in a
  // 1,000-page commit), so they wait until the largest has had its turn.
  level_ = ladder_.size() - 1;
  stay_left_ = std::max(options_.probe_commits, options_.stay_commits / 4);
}

double BatchSizer::Median(std::vector<double> costs) {
  const auto mid = costs.begin() + static_cast<std::ptrdiff_t>(costs.size() / 2);
  std::nth_element(costs.begin(), mid, costs.end());
  return *mid;
}

void BatchSizer::Committed(size_t pages, double seconds) {
  if (ladder_.size() == 1) return;
  const bool full = pages > 0 && pages == limit();
  if (!probing_) {
    if (full && --stay_left_ <= 0) {
      if (options_.explore) {
        StartRound();
      } else {
        BackToTheLargest();
      }
    }
    return;
  }
  const int stretch = options_.settle_commits + options_.probe_commits;
  const bool probe_turn = this->probe_turn();
  if (!full) {
    if (probe_turn && ++probe_misses_ >= kMissesPerProbeCommit * stretch) {
      FinishProbe(std::numeric_limits<double>::infinity());  // given up: infinitely dear
    }
    return;  // level_'s turn waits for full commits
  }
  if (step_ % stretch >= options_.settle_commits) {
    (probe_turn ? probe_costs_ : level_costs_).push_back(seconds / static_cast<double>(pages));
  }
  if (++step_ == 2 * stretch) FinishProbe(Median(probe_costs_) / Median(level_costs_));
}

void BatchSizer::Failed() {
  probing_ = false;
  level_ = 0;
  quiet_rounds_ = 8;
  stay_left_ = options_.stay_commits * quiet_rounds_;
}

void BatchSizer::BackToTheLargest() {
  level_ = ladder_.size() - 1;
  stay_left_ = std::numeric_limits<int>::max();
}

void BatchSizer::StartRound() {
  probes_.clear();
  for (size_t i = 0; i < ladder_.size(); ++i) {
    if (i != level_) probes_.push_back(i);
  }
  ratios_.clear();
  probe_index_ = 0;
  probing_ = true;
  StartProbe();
}

void BatchSizer::StartProbe() {
  probe_costs_.clear();
  level_costs_.clear();
  probe_misses_ = 0;
  step_ = 0;
}

void BatchSizer::FinishProbe(double ratio) {
  ratios_.push_back(ratio);
  if (++probe_index_ == probes_.size()) {
    EndRound();
  } else {
    StartProbe();
  }
}

void BatchSizer::EndRound() {
  probing_ = false;
  size_t best = 0;
  for (size_t i = 1; i < ratios_.size(); ++i) {
    if (ratios_[i] < ratios_[best]) best = i;
  }
  if (!ratios_.empty() && ratios_[best] < 1.0 - options_.margin) {
    level_ = probes_[best];
    // The next round comes soon: it confirms the move (or undoes it) while the store is as now.
    quiet_rounds_ = 0;
    stay_left_ = options_.probe_commits;
    return;
  }
  // Nothing cheaper: stay, and look again later, later each time up to 8 times the stay.
  quiet_rounds_ = std::min(quiet_rounds_ + 1, 8);
  stay_left_ = options_.stay_commits * quiet_rounds_;
}

}  // namespace shingled::daemon
