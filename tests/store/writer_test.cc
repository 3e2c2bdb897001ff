// The writer's in-memory state and how it meets the files: the copy of the stop list
// (`common_values`) it keeps between batches, on real LMDB files in temporary directories.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "store/store.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::store {
namespace {

using testing::Range;
using testing::SyntheticSketch;
using testing::TestDir;

constexpr uint64_t kPolynomial = 0x1234567890abcdefull;

class WriterTest : public ::testing::Test {
 protected:
  StatusOr<std::unique_ptr<Store>> Open(StoreOptions options) {
    return Store::Open(dir_.Sub("db"), options, params_, kPolynomial);
  }
  // Page i: 20 boilerplate shingles shared by every page, and 20 of its own. With a small
  // common-value limit, the boilerplate's sample values go on the stop list and their counts
  // change with every page.
  PageInput Page(int i, SweepId sweep) {
    std::vector<uint64_t> sh = Range(0, 20);
    auto own = Range(1000 * (static_cast<uint64_t>(i) + 1), 20);
    sh.insert(sh.end(), own.begin(), own.end());
    PageInput p;
    p.url = "http://p" + std::to_string(i) + "/";
    p.sweep = sweep;
    p.date = 1;
    p.sketch = SyntheticSketch(params_, sh);
    return p;
  }
  std::vector<PageInput> Batch(int from, int to, SweepId sweep) {
    std::vector<PageInput> batch;
    for (int i = from; i < to; ++i) batch.push_back(Page(i, sweep));
    return batch;
  }
  // Check compares every `common_values` count with its posting list.
  void ExpectConsistent(const Store& store) {
    StatusOr<std::vector<std::string>> problems = store.Check();
    ASSERT_TRUE(problems.ok()) << problems.status().ToString();
    for (const std::string& p : *problems) ADD_FAILURE() << p;
  }
  static uint64_t CommonValues(const Store& store) {
    StatusOr<StoreStats> st = store.Stats();
    EXPECT_TRUE(st.ok());
    if (!st.ok()) return 0;
    for (const DatabaseStats& d : st->databases) {
      if (d.name == "common_values") return d.entries;
    }
    return 0;
  }

  TestDir dir_;
  dedup::SketchParams params_;
};

// Another writer (here another process) changes the stop list between two batches of this
// one: the copy this writer kept would give stale counts; it must read the list again.
TEST_F(WriterTest, StopListCopyIsReloadedAfterAnotherProcessWrote) {
  StoreOptions o;
  o.durable = false;
  o.common_value_limit = 3;
  auto opened = Open(o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto store = std::move(opened).value();
  SweepId s = store->OpenSweep("s", 1)->id;
  ASSERT_TRUE(store->Apply(Batch(0, 10, s)).ok());
  ASSERT_GT(CommonValues(*store), 0u);  // the copy is loaded and holds entries now

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Another process on the same files; it does not touch the parent's environment.
    auto other = Open(o);
    if (!other.ok()) _exit(2);
    if (!(*other)->Apply(Batch(10, 20, s)).ok()) _exit(3);
    other->reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  ASSERT_TRUE(store->Apply(Batch(20, 30, s)).ok());
  EXPECT_EQ(store->Stats()->documents, 30u);
  ExpectConsistent(*store);
}

// A batch that grows the map is aborted and run again: the stop-list counts it raised in the
// aborted transaction must not be counted twice.
TEST_F(WriterTest, StopListCopyIsDroppedWithAnAbortedBatch) {
  StoreOptions o;
  o.durable = false;
  o.common_value_limit = 3;
  o.initial_map_size = 256 << 10;  // 256 KiB: grows (abort, retry) several times below
  auto opened = Open(o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto store = std::move(opened).value();
  SweepId s = store->OpenSweep("s", 1)->id;
  for (int b = 0; b < 20; ++b) {
    StatusOr<std::vector<PageResult>> r = store->Apply(Batch(b * 50, b * 50 + 50, s));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  StatusOr<StoreStats> st = store->Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_GT(st->map_size, uint64_t{256} << 10);
  EXPECT_GT(CommonValues(*store), 0u);
  ExpectConsistent(*store);
}

}  // namespace
}  // namespace shingled::store
