// The writer's in-memory state and how it meets the files: the copy of the stop list
// (`common_values`) it keeps between batches, on real LMDB files in temporary directories.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

using testing::Range;
using testing::SyntheticSketch;

class WriterTest : public testing::StoreFixture {
 protected:
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
  static uint64_t CommonValues(const Store& store) {
    StatusOr<StoreStats> st = store.Stats();
    EXPECT_TRUE(st.ok());
    if (!st.ok()) return 0;
    for (const DatabaseStats& d : st->databases) {
      if (d.name == "common_values") return d.entries;
    }
    return 0;
  }
};

// Another writer (here another process) changes the stop list between two batches of this
// one: the copy this writer kept would give stale counts; it must read the list again.
TEST_F(WriterTest, StopListCopyIsReloadedAfterAnotherProcessWrote) {
  StoreOptions o;
  o.durable = false;
  o.common_value_limit = 3;
  auto store = OpenStore(o);
  ASSERT_NE(store, nullptr);
  SweepId s = store->OpenSweep("s", 1)->id;
  ASSERT_TRUE(store->Apply(Batch(0, 10, s)).ok());
  ASSERT_GT(CommonValues(*store), 0u);  // the copy is loaded and holds entries now

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Another process on the same files; it does not touch the parent's environment.
    auto other = OpenStore(o);
    if (other == nullptr) _exit(2);
    if (!other->Apply(Batch(10, 20, s)).ok()) _exit(3);
    other.reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  ASSERT_TRUE(store->Apply(Batch(20, 30, s)).ok());
  EXPECT_EQ(store->Stats()->documents, 30u);
  ExpectConsistent(*store);
}

// Readers beside a growing store (`shingled list` during an ingest): another process's writer
// grows the map again and again while this one opens the store and reads it in a loop. Every
// open and every read adopts the grown map and succeeds.
TEST_F(WriterTest, ReadersOpenAndReadWhileAnotherProcessGrowsTheMap) {
  StoreOptions o;
  o.durable = false;
  o.initial_map_size = 256 << 10;  // 256 KiB: the writer below grows it many times
  SweepId s = 0;
  {
    auto store = OpenStore(o);
    ASSERT_NE(store, nullptr);
    s = store->OpenSweep("s", 1)->id;
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    auto writer = OpenStore(o);
    if (writer == nullptr) _exit(2);
    for (int b = 0; b < 60; ++b) {
      if (!writer->Apply(Batch(b * 40, b * 40 + 40, s)).ok()) _exit(3);
      if (b == 0 && write(ready[1], "x", 1) != 1) _exit(4);
    }
    _exit(0);
  }
  close(ready[1]);
  char x = 0;
  ASSERT_EQ(read(ready[0], &x, 1), 1);  // the writer has begun
  close(ready[0]);
  int opened = 0;
  for (;;) {
    auto reader = OpenStore(o);
    ASSERT_NE(reader, nullptr);
    ++opened;
    UrlListOptions list;
    list.limit = 100;
    StatusOr<UrlPage> page = reader->ListUrls(list);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ASSERT_TRUE(reader->Stats().ok());
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
      break;
    }
  }
  auto store = OpenStore(o);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Stats()->documents, 2400u) << "after " << opened << " opens";
  EXPECT_GT(store->Stats()->map_size, uint64_t{256} << 10);
}

// A batch that grows the map is aborted and run again: the stop-list counts it raised in the
// aborted transaction must not be counted twice.
TEST_F(WriterTest, StopListCopyIsDroppedWithAnAbortedBatch) {
  StoreOptions o;
  o.durable = false;
  o.common_value_limit = 3;
  o.initial_map_size = 256 << 10;  // 256 KiB: grows (abort, retry) several times below
  auto store = OpenStore(o);
  ASSERT_NE(store, nullptr);
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

// A batch reads the postings of the store and of its own earlier pages from memory and writes
// them at its end (BatchPostings): its answers must be those of the same pages applied one per
// batch. The pages: families of near-copies (within one batch and across batches), pages that
// repeat an earlier page's bytes, text or shingles, URLs that come back, revisits, boilerplate
// that reaches the stop list mid-batch, a dead page and a page with a bad sketch.
TEST_F(WriterTest, ABatchDecidesAsItsPagesAppliedOneByOne) {
  StoreOptions o;
  o.durable = false;
  o.common_value_limit = 6;
  o.similar_threshold = 0.4;
  std::vector<PageInput> pages;
  for (int i = 0; i < 90; ++i) {
    const int family = i % 7;
    std::vector<uint64_t> sh = Range(0, 25);  // boilerplate: every page
    auto base = Range(10000 * (static_cast<uint64_t>(family) + 1), 60);
    sh.insert(sh.end(), base.begin(), base.end());
    auto own = Range(500000 + 1000 * static_cast<uint64_t>(i), 3 + i % 9);  // 3-11 shingles of its own
    if (i % 11 != 5) sh.insert(sh.end(), own.begin(), own.end());  // some repeat the family's text
    PageInput p;
    p.url = "http://f" + std::to_string(family) + "/" + std::to_string(i % 40);  // URLs come back
    p.date = 1 + i;
    p.sketch = SyntheticSketch(params_, sh, i % 13 == 4 ? i : 0);  // other bytes, same text
    if (i == 60) {
      // Page 5's shingles (family 5's text alone), its words in another order: shingle
      // equivalent to it, not lexically.
      sh = Range(0, 25);
      auto five = Range(10000 * 6, 60);
      sh.insert(sh.end(), five.begin(), five.end());
      p.sketch = SyntheticSketch(params_, sh, 60);
      p.sketch.lexical.low ^= 0x5a5a;
    }
    if (i == 30) p.http_status = 404;
    if (i == 31) p.sketch.features.pop_back();  // invalid: fails this page only
    if (i % 23 == 22 || i == 89) {
      // Revisits (WARC): of a URL of an earlier batch of four (22, 68) or of the same one (45),
      // and of one never seen.
      p.revisit = true;
      p.revisit_of = i == 89 ? "http://nowhere/" : pages[i == 45 ? 44 : i - 4].url;
    }
    pages.push_back(std::move(p));
  }
  auto run = [&](const std::string& name, size_t batch) -> std::vector<PageResult> {
    auto store = OpenStore(o, name);
    if (store == nullptr) return {};
    SweepId s = store->OpenSweep("s", 1)->id;
    std::vector<PageResult> all;
    for (size_t from = 0; from < pages.size(); from += batch) {
      std::vector<PageInput> part(pages.begin() + static_cast<std::ptrdiff_t>(from),
                                  pages.begin() + static_cast<std::ptrdiff_t>(std::min(pages.size(), from + batch)));
      for (PageInput& p : part) p.sweep = s;
      StatusOr<std::vector<PageResult>> r = store->Apply(part);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok()) return {};
      all.insert(all.end(), r->begin(), r->end());
    }
    ExpectConsistent(*store);
    EXPECT_GT(CommonValues(*store), 0u);
    return all;
  };
  const std::vector<PageResult> one_by_one = run("one", 1);
  const std::vector<PageResult> batched = run("all", pages.size());
  const std::vector<PageResult> in_fours = run("four", 4);
  ASSERT_EQ(one_by_one.size(), pages.size());
  int near = 0;
  for (const auto* other : {&batched, &in_fours}) {
    ASSERT_EQ(other->size(), pages.size());
    for (size_t i = 0; i < pages.size(); ++i) {
      const PageResult& a = one_by_one[i];
      const PageResult& b = (*other)[i];
      SCOPED_TRACE("page " + std::to_string(i));
      EXPECT_EQ(a.status.code(), b.status.code());
      EXPECT_EQ(a.verdict, b.verdict);
      EXPECT_EQ(a.url, b.url);
      EXPECT_EQ(a.previous_doc, b.previous_doc);
      EXPECT_EQ(a.doc, b.doc);
      EXPECT_EQ(a.cluster, b.cluster);
      EXPECT_EQ(a.replayed, b.replayed);
      EXPECT_EQ(a.candidates_truncated, b.candidates_truncated);
      ASSERT_EQ(a.matches.size(), b.matches.size());
      for (size_t m = 0; m < a.matches.size(); ++m) {
        EXPECT_EQ(a.matches[m].doc, b.matches[m].doc);
        EXPECT_EQ(a.matches[m].relation, b.matches[m].relation);
        EXPECT_EQ(a.matches[m].resemblance, b.matches[m].resemblance);
      }
      near += a.verdict == Verdict::kNearDuplicate;
    }
  }
  EXPECT_GT(near, 20);  // the families did find each other
  // What the pages were, so that the comparison above covers each kind.
  std::map<Relation, int> equivalents;
  int revisits = 0;
  for (size_t i = 0; i < pages.size(); ++i) {
    const PageResult& a = one_by_one[i];
    if (a.verdict == Verdict::kDuplicate && !a.matches.empty()) ++equivalents[a.matches[0].relation];
    revisits += pages[i].revisit && a.status.ok();
  }
  EXPECT_GT(equivalents[Relation::kIdentical], 0);
  EXPECT_GT(equivalents[Relation::kLexical], 0);
  EXPECT_GT(equivalents[Relation::kShingle], 0);
  EXPECT_EQ(revisits, 3);
  EXPECT_EQ(one_by_one[89].status.code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace shingled::store
