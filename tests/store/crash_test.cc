// Kill a writer process with SIGKILL at random moments, at least 30 times: after each restart
// every acknowledged page is present and Check passes (docs/RELIABILITY.md).
//
// The child opens the store durably (fsync per commit), applies batches and writes the URLs of
// each batch to a pipe only after Apply returned, i.e. after the commit. The parent kills it
// after a random delay, drains the pipe, reopens the store and verifies.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include <string>

#include "store/store.h"
#include "tests/store/kill_child.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::store {
namespace {

constexpr uint64_t kPolynomial = 0xfeedfacecafef00dull;
constexpr int kRestarts = 35;
constexpr int kTwoHostsPages = 1200;

[[noreturn]] void RunWriter(const std::string& dir, int fd, int round) {
  dedup::SketchParams params;
  StoreOptions options;
  options.initial_map_size = 1 << 20;  // small, so that kills also land during map growth
  auto opened = Store::Open(dir, options, params, kPolynomial);
  if (!opened.ok()) _exit(2);
  auto store = std::move(opened).value();
  auto sweep = store->OpenSweep("sweep-" + std::to_string(round / 10), round, {"http://crash/"});
  if (!sweep.ok()) _exit(3);
  if (round % 10 == 9) {
    // Also kill during sweep closes now and then: the close is one transaction as well.
    auto closed = store->CloseSweep(sweep->id, int64_t{round} * 1000);
    if (!closed.ok()) _exit(4);
    sweep =
        store->OpenSweep("sweep-" + std::to_string(round / 10) + "-b", round, {"http://crash/"});
    if (!sweep.ok()) _exit(5);
  }
  for (uint64_t batch = 0;; ++batch) {
    std::vector<PageInput> pages;
    for (uint64_t i = 0; i < 16; ++i) {
      uint64_t j = (static_cast<uint64_t>(round) << 32) | (batch * 16 + i);
      PageInput p;
      // Some URLs come back in later rounds, some content repeats: unchanged, duplicates, near
      // duplicates and cluster merges all happen.
      p.url = "http://crash/" + std::to_string((batch * 16 + i) % 97 == 0 ? i : j);
      p.sweep = sweep->id;
      p.date = round * 1000 + static_cast<int64_t>(batch);
      uint64_t family = (j * 2654435761u) % 40;
      p.sketch = testing::SyntheticSketch(params, testing::Variant(family * 100000, 300, 285 + (j % 15), (j + 1) * 1000));
      pages.push_back(std::move(p));
    }
    auto results = store->Apply(pages);
    if (!results.ok()) _exit(6);
    std::string acks;
    for (size_t i = 0; i < pages.size(); ++i) acks += pages[i].url + " " + std::to_string((*results)[i].doc) + "\n";
    if (write(fd, acks.data(), acks.size()) != static_cast<ssize_t>(acks.size())) _exit(7);
  }
}

TEST(CrashTest, EveryAcknowledgedPageSurvivesSigkill) {
  testing::TestDir dir;
  const std::string path = dir.Sub("db");
  std::mt19937 rng(20240607);
  std::set<std::pair<std::string, DocId>> acknowledged;
  int killed_while_running = 0;
  // kRestarts rounds, and more while fewer than kMinAcknowledged pages were acknowledged (a
  // loaded machine, the sanitizers): the kills must have cut a store that holds some pages.
  constexpr size_t kMinAcknowledged = 100;
  int rounds = 0;
  for (int round = 0;
       round < kRestarts || (acknowledged.size() <= kMinAcknowledged && round < 4 * kRestarts);
       ++round) {
    ++rounds;
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      RunWriter(path, fds[1], round);
    }
    close(fds[1]);
    std::string received;
    // Let the writer run for a random 1..120 ms, reading acknowledgements meanwhile, then kill.
    auto deadline_ms = 1 + static_cast<int>(rng() % 120);
    pollfd pfd{fds[0], POLLIN, 0};
    char buf[65536];
    for (int waited = 0; waited < deadline_ms; ++waited) {
      if (poll(&pfd, 1, 1) > 0) {
        ssize_t n = read(fds[0], buf, sizeof(buf));
        if (n > 0) received.append(buf, n);
        if (n == 0) break;  // the child exited on its own: a failure reported below
      }
    }
    if (kill(pid, SIGKILL) == 0) ++killed_while_running;
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited with " << WEXITSTATUS(status) << " in round " << round;
    for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) received.append(buf, n);
    close(fds[0]);
    // Only whole lines count: a line cut by the kill was never fully acknowledged.
    size_t start = 0;
    for (size_t nl; (nl = received.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string line = received.substr(start, nl - start);
      size_t sp = line.find(' ');
      acknowledged.emplace(line.substr(0, sp), std::stoull(line.substr(sp + 1)));
    }

    StoreOptions options;
    auto opened = Store::Open(path, options, dedup::SketchParams{}, kPolynomial);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    auto store = std::move(opened).value();
    for (const auto& [url, doc] : acknowledged) {
      auto history = store->History(url);
      ASSERT_TRUE(history.ok()) << url << " lost after round " << round;
      bool has_doc = false;
      for (const UrlVersion& v : *history) has_doc |= v.doc == doc;
      ASSERT_TRUE(has_doc) << url << " lost its version with document " << doc;
    }
    auto problems = store->Check();
    ASSERT_TRUE(problems.ok()) << problems.status().ToString();
    for (const std::string& p : *problems) ADD_FAILURE() << "round " << round << ": " << p;
    ASSERT_TRUE(problems->empty());
  }
  EXPECT_EQ(killed_while_running, rounds);
  EXPECT_GT(acknowledged.size(), kMinAcknowledged);
  std::printf("%zu acknowledged pages survived %d SIGKILLs\n", acknowledged.size(), killed_while_running);
}

// The store of the forgetting tests: 1,200 URLs, a quarter on keep.crash and the rest on
// forget.crash, near copies across both, in a sweep at date 1; then the keep.crash URLs again
// with new content in a sweep at date 100,000.
void FillTwoHosts(const std::string& path, const dedup::SketchParams& params) {
  auto store = Store::Open(path, StoreOptions{}, params, kPolynomial);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (int round = 0; round < 2; ++round) {
    const int64_t date = round == 0 ? 1 : 100000;
    auto sweep = (*store)->OpenSweep("s" + std::to_string(round), date);
    ASSERT_TRUE(sweep.ok());
    for (int batch = 0; batch < kTwoHostsPages / 100; ++batch) {
      std::vector<PageInput> pages;
      for (int i = batch * 100; i < (batch + 1) * 100; ++i) {
        const bool keep = i % 4 == 0;
        if (round == 1 && !keep) continue;
        PageInput p;
        p.url =
            std::string(keep ? "http://keep.crash/" : "http://forget.crash/") + std::to_string(i);
        p.sweep = sweep->id;
        p.date = date;
        const uint64_t family = static_cast<uint64_t>(i) % 50;  // near copies across both hosts
        p.sketch = testing::SyntheticSketch(
            params, testing::Variant(family * 100000, 300, 285 + i % 15,
                                     (i + 1) * 1000 + static_cast<uint64_t>(round) * 7777777));
        pages.push_back(std::move(p));
      }
      ASSERT_TRUE((*store)->Apply(pages).ok());
    }
  }
}

// Runs `step` (one bounded write: Forget or ApplyRetention, answering whether more is left) in
// a child process until it says nothing is left, and kills the child at a random moment; up to
// 12 rounds, until a child finishes. After each kill the store opens and Check passes. Returns
// how many steps the children acknowledged (after their commit).
template <typename Step>
int KillWhileRunning(const std::string& path, const dedup::SketchParams& params, Step step,
                     bool* finished) {
  std::mt19937 rng(20261204);
  int acknowledged = 0;
  *finished = false;
  for (int round = 0; round < 12 && !*finished; ++round) {
    const testing::KilledChild child = testing::KillChildAtRandom(
        rng, 1000, 120000,
        [&] { return Store::Open(path, StoreOptions{}, params, kPolynomial); }, step);
    *finished = child.finished;
    acknowledged += child.acknowledged;
    auto store = Store::Open(path, StoreOptions{}, params, kPolynomial);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return acknowledged;
    auto problems = (*store)->Check();
    EXPECT_TRUE(problems.ok()) << problems.status().ToString();
    if (problems.ok()) {
      for (const std::string& p : *problems) ADD_FAILURE() << "round " << round << ": " << p;
    }
  }
  return acknowledged;
}

// A takedown of a host in steps of 40 URLs, killed at random moments: after each kill the store
// opens, Check passes and every acknowledged step's record is there; running it again
// completes it, and the other host's pages are all still there.
TEST(CrashTest, AForgetCutBySigkillCompletesWhenRunAgain) {
  testing::TestDir dir;
  const std::string path = dir.Sub("db");
  dedup::SketchParams params;
  FillTwoHosts(path, params);
  const ForgetOptions forget{.scope = ForgetScope::kHost, .value = "forget.crash", .max_urls = 40};
  bool finished = false;
  const int acknowledged = KillWhileRunning(
      path, params,
      [&](Store& store) -> StatusOr<bool> {
        auto r = store.Forget(forget);
        if (!r.ok()) return r.status();
        return r->more;
      },
      &finished);
  std::printf("%d acknowledged steps of the takedown (%s)\n", acknowledged,
              finished ? "a child finished it" : "every child killed");
  auto store = Store::Open(path, StoreOptions{}, params, kPolynomial);
  ASSERT_TRUE(store.ok());
  auto records = (*store)->ForgetRecords();
  ASSERT_TRUE(records.ok());
  EXPECT_GE(records->size(), static_cast<size_t>(acknowledged));
  for (bool more = true; more;) {
    auto step = (*store)->Forget(forget);
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    more = step->more;
  }
  for (int i = 0; i < kTwoHostsPages; ++i) {
    const bool kept = i % 4 == 0;
    const std::string url =
        std::string(kept ? "http://keep.crash/" : "http://forget.crash/") + std::to_string(i);
    EXPECT_EQ((*store)->History(url).ok(), kept) << url;
  }
  auto stats = (*store)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->urls, static_cast<uint64_t>(kTwoHostsPages / 4));
  auto problems = (*store)->Check();
  ASSERT_TRUE(problems.ok());
  for (const std::string& p : *problems) ADD_FAILURE() << p;
}

// A retention pass in steps of 40 URLs, killed at random moments, completes when run again:
// every URL keeps its last version only, and the pass is one record counting every step's.
TEST(CrashTest, ARetentionPassCutBySigkillCompletesWhenRunAgain) {
  testing::TestDir dir;
  const std::string path = dir.Sub("db");
  dedup::SketchParams params;
  FillTwoHosts(path, params);
  const RetentionOptions retention{.now = 200000, .max_version_age = 1000, .max_urls = 40};
  bool finished = false;
  const int acknowledged = KillWhileRunning(
      path, params,
      [&](Store& store) -> StatusOr<bool> {
        auto r = store.ApplyRetention(retention);
        if (!r.ok()) return r.status();
        return !r->pass_done;
      },
      &finished);
  std::printf("%d acknowledged steps of the retention pass (%s)\n", acknowledged,
              finished ? "a child finished it" : "every child killed");
  auto store = Store::Open(path, StoreOptions{}, params, kPolynomial);
  ASSERT_TRUE(store.ok());
  if (!finished) {
    for (bool done = false; !done;) {
      auto step = (*store)->ApplyRetention(retention);
      ASSERT_TRUE(step.ok()) << step.status().ToString();
      done = step->pass_done;
    }
  }
  auto stats = (*store)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->urls, static_cast<uint64_t>(kTwoHostsPages));
  EXPECT_EQ(stats->versions, static_cast<uint64_t>(kTwoHostsPages));
  for (int i = 0; i < kTwoHostsPages; i += 4) {
    auto history = (*store)->History("http://keep.crash/" + std::to_string(i));
    ASSERT_TRUE(history.ok());
    ASSERT_EQ(history->size(), 1u);
    EXPECT_EQ(history->front().date, 100000);
  }
  auto records = (*store)->ForgetRecords();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ(records->front().scope, ForgetScope::kRetention);
  EXPECT_EQ(records->front().versions, static_cast<uint64_t>(kTwoHostsPages / 4));
  auto problems = (*store)->Check();
  ASSERT_TRUE(problems.ok());
  for (const std::string& p : *problems) ADD_FAILURE() << p;
}

}  // namespace
}  // namespace shingled::store
