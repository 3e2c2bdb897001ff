// The write buffer (store/internal/write_buffer.h; FORMAT.md, "The write buffer"): its parts
// against a sorted list, a commit's step against its definition, and a store with it against one
// without (every posting put at every commit): the same answers, in the writer, in queries of
// the same process, of another Store on the same files and after reopening.
#include "store/internal/write_buffer.h"

#include <gtest/gtest.h>
#include <lmdb.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/internal/codec.h"
#include "store/mapped_file.h"
#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

using internal::BufferEntry;
using internal::BufferPart;
using internal::kBufferSlices;
using testing::Range;
using testing::Variant;

// Values in slice `slice` with few distinct ones, so that values have several documents.
std::vector<BufferEntry> RandomEntries(size_t n, int slice, std::mt19937_64& rng) {
  std::vector<BufferEntry> out;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t value =
        (uint64_t{static_cast<uint64_t>(slice)} << (64 - internal::kBufferSliceBits)) |
        ((rng() % (n / 3 + 1)) << 20) | 0xabc;
    out.emplace_back(value, rng() % 1000 + 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

TEST(BufferPartTest, ReadsAsTheSortedListDoes) {
  std::mt19937_64 rng(7);
  for (size_t n :
       {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{100}, size_t{5000}, size_t{100000}}) {
    const int slice = static_cast<int>(n % kBufferSlices);
    const std::vector<BufferEntry> entries = RandomEntries(n, slice, rng);
    const BufferPart part(entries);
    std::vector<uint64_t> probes;
    for (size_t i = 0; i < std::min<size_t>(entries.size(), 300); ++i)
      probes.push_back(entries[rng() % entries.size()].first);
    for (int i = 0; i < 100; ++i)
      probes.push_back(
          (uint64_t{static_cast<uint64_t>(slice)} << (64 - internal::kBufferSliceBits)) |
          (rng() >> internal::kBufferSliceBits));
    for (uint64_t value : probes) {
      std::vector<DocId> want;
      for (const BufferEntry& e : entries) {
        if (e.first == value) want.push_back(e.second);
      }
      for (size_t max : {size_t{0}, size_t{1}, size_t{2}, SIZE_MAX}) {
        std::vector<DocId> got = {42};  // Read appends
        size_t count = 99;
        bool more = false;
        part.Read(value, max, &got, &count, &more);
        const size_t taken = std::min(max, want.size());
        ASSERT_EQ(count, taken) << n << " " << value << " " << max;
        ASSERT_EQ(more, want.size() > max);
        ASSERT_EQ(got.size(), taken + 1);
        EXPECT_TRUE(std::equal(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(taken),
                               got.begin() + 1));
      }
    }
  }
}

TEST(WriteBufferTest, ACommitPutsTheSliceDueAndKeepsTheRest) {
  std::mt19937_64 rng(11);
  internal::WriteBuffer base;
  base.marks.next_slice = 5;
  for (int s = 0; s < kBufferSlices; ++s) base.marks.doc[s] = 100 + s;
  for (int i = 0; i < internal::kBufferIndexes; ++i) {
    for (int s = 0; s < kBufferSlices; ++s) {
      std::vector<BufferEntry> e = RandomEntries(50 + 10 * s, s, rng);
      for (auto& [value, doc] : e) doc += 200;  // above every watermark
      base.parts[i][s] = std::make_shared<BufferPart>(std::move(e));
    }
  }
  internal::BatchEntries batch;
  for (int i = 0; i < internal::kBufferIndexes; ++i) {
    for (int s = 0; s < kBufferSlices; s += 2) {  // the batch files in the even slices
      for (int j = 0; j < 20; ++j)
        batch[i].emplace_back(
            (uint64_t{static_cast<uint64_t>(s)} << (64 - internal::kBufferSliceBits)) |
                (rng() >> internal::kBufferSliceBits),
            2000 + j);
    }
    std::shuffle(batch[i].begin(), batch[i].end(), rng);
  }
  for (bool all : {false, true}) {
    SCOPED_TRACE(all ? "all slices" : "one slice");
    internal::BatchEntries put;
    internal::BatchFingerprints fp_put;
    std::shared_ptr<const internal::WriteBuffer> next =
        internal::AdvanceWriteBuffer(base, batch, {}, 3000, all, &put, &fp_put);
    EXPECT_EQ(next->marks.next_slice, 6u);
    for (int i = 0; i < internal::kBufferIndexes; ++i) {
      std::vector<BufferEntry> want_put;
      for (int s = 0; s < kBufferSlices; ++s) {
        const bool due = all || s == 5;
        std::vector<BufferEntry> want(base.parts[i][s]->entries());
        for (const BufferEntry& e : batch[i]) {
          if (internal::BufferSlice(e.first) == s) want.push_back(e);
        }
        std::sort(want.begin(), want.end());
        EXPECT_EQ(next->marks.doc[s], due ? 3000u : 100u + s) << s;
        if (due) {
          EXPECT_TRUE(next->parts[i][s]->entries().empty()) << i << " " << s;
          want_put.insert(want_put.end(), want.begin(), want.end());
        } else {
          EXPECT_EQ(next->parts[i][s]->entries(), want) << i << " " << s;
        }
      }
      EXPECT_EQ(put[i], want_put) << i;
    }
  }
}

// Fingerprint entries of slice `slice`, sorted, documents from `first_doc` up.
std::vector<internal::FingerprintEntry> RandomFingerprints(size_t n, int slice, DocId first_doc,
                                                           std::mt19937_64& rng) {
  std::vector<internal::FingerprintEntry> out;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t high =
        (uint64_t{static_cast<uint64_t>(slice)} << (64 - internal::kBufferSliceBits)) |
        (rng() >> internal::kBufferSliceBits);
    out.push_back({dedup::Fingerprint128{high, rng()}, first_doc + i});
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(WriteBufferTest, FingerprintsAreFoundAndPutWithTheirOwnSlice) {
  std::mt19937_64 rng(13);
  internal::WriteBuffer base;
  base.marks.next_slice = 5;
  base.fp_marks.next_slice = 9;
  for (int s = 0; s < kBufferSlices; ++s) base.fp_marks.doc[s] = 100 + s;
  for (int i = 0; i < internal::kFingerprintIndexes; ++i) {
    for (int s = 0; s < kBufferSlices; ++s) {
      base.fp_parts[i][s] = std::make_shared<internal::FingerprintPart>(
          RandomFingerprints(20 + 5 * s, s, 200 + 1000 * s, rng));
    }
  }
  // Find: every entry, and fingerprints not there (one differs from an entry in `low` only).
  for (int s = 0; s < kBufferSlices; ++s) {
    for (const internal::FingerprintEntry& e : base.fp_parts[1][s]->entries()) {
      EXPECT_EQ(base.FindFingerprint(1, e.fp), e.doc);
      EXPECT_EQ(base.FindFingerprint(0, e.fp), 0u);
      EXPECT_EQ(base.FindFingerprint(1, dedup::Fingerprint128{e.fp.high, e.fp.low ^ 1}), 0u);
    }
  }
  internal::BatchFingerprints batch;
  for (int i = 0; i < internal::kFingerprintIndexes; ++i) {
    for (int s = 1; s < kBufferSlices; s += 2) {  // the batch's in the odd slices
      std::vector<internal::FingerprintEntry> e = RandomFingerprints(10, s, 2000 + 10 * s, rng);
      batch[i].insert(batch[i].end(), e.begin(), e.end());
    }
    std::shuffle(batch[i].begin(), batch[i].end(), rng);
  }
  internal::BatchEntries put;
  internal::BatchFingerprints fp_put;
  std::shared_ptr<const internal::WriteBuffer> next =
      internal::AdvanceWriteBuffer(base, {}, batch, 3000, /*all_slices=*/false, &put, &fp_put);
  EXPECT_EQ(next->marks.next_slice, 6u);
  EXPECT_EQ(next->marks.doc[5], 3000u);
  EXPECT_EQ(next->fp_marks.next_slice, 10u);
  for (int s = 0; s < kBufferSlices; ++s)
    EXPECT_EQ(next->fp_marks.doc[s], s == 9 ? 3000u : 100u + s);
  for (int i = 0; i < internal::kFingerprintIndexes; ++i) {
    for (int s = 0; s < kBufferSlices; ++s) {
      std::vector<internal::FingerprintEntry> want(base.fp_parts[i][s]->entries());
      for (const internal::FingerprintEntry& e : batch[i]) {
        if (internal::FingerprintSlice(e.fp) == s) want.push_back(e);
      }
      std::sort(want.begin(), want.end());
      if (s == 9) {
        EXPECT_TRUE(next->fp_parts[i][s]->entries().empty());
        EXPECT_EQ(fp_put[i], want) << i;
      } else {
        EXPECT_EQ(next->fp_parts[i][s]->entries(), want) << i << " " << s;
      }
    }
    EXPECT_TRUE(put[i].empty());
  }
  EXPECT_EQ(next->fingerprints(),
            base.fingerprints() + 3 * 8 * 10 - 3 * base.fp_parts[0][9]->entries().size() - 3 * 10);
}

class WriteBufferStoreTest : public testing::StoreFixture {
 protected:
  // Page j: families of 3 near-copies, some pages a copy of one from 40 pages before (so that
  // candidates sit in the buffer and in the B-trees), and some exact copies of the page 50
  // before (its fingerprints are then in the buffer or the B-trees): the same bytes, the same
  // text in other bytes (lexically equivalent), the same shingles in another text.
  PageInput PageAt(uint64_t j, SweepId sweep) const {
    const std::string url = "http://p/" + std::to_string(j);
    const auto date = static_cast<int64_t>(j);
    if (j >= 50 && j % 11 == 5) return Page(url, sweep, date, ShinglesAt(j - 50));
    if (j >= 50 && j % 11 == 7) return Page(url, sweep, date, ShinglesAt(j - 50), j);
    PageInput p = Page(url, sweep, date, ShinglesAt(j), j % 11 == 9 ? j : 0);
    if (j >= 50 && j % 11 == 9) {
      p.sketch = Page(url, sweep, date, ShinglesAt(j - 50), j).sketch;
      p.sketch.lexical = {0xfeedull << 32 | j, j};
    }
    return p;
  }
  static std::vector<uint64_t> ShinglesAt(uint64_t j) {
    const uint64_t family = (j % 7 == 0 && j >= 40) ? (j - 40) / 3 : j / 3;
    return Variant(family * 1000, 300, 280, (j + 1) << 20);
  }
  // "plain", a store without the buffer, and "buffered", one with it, each with the sweep "s".
  SweepId OpenBoth(std::unique_ptr<Store>* plain, std::unique_ptr<Store>* buffered) {
    *plain = OpenStore(Without(), "plain");
    *buffered = OpenStore({}, "buffered");
    const SweepId s = (*plain)->OpenSweep("s", 1)->id;
    EXPECT_EQ((*buffered)->OpenSweep("s", 1)->id, s);
    return s;
  }
  static StoreOptions Without() {
    StoreOptions o;
    o.write_buffer = false;
    return o;
  }
  // Applies `pages` to both stores and expects the same decision for each: verdict, document,
  // cluster and every match. Returns the first store's results (none, with a failure, when a
  // batch failed).
  static std::vector<PageResult> ApplyToBoth(Store& a, Store& b,
                                             const std::vector<PageInput>& pages) {
    StatusOr<std::vector<PageResult>> ra = a.Apply(pages), rb = b.Apply(pages);
    EXPECT_TRUE(ra.ok() && rb.ok());
    if (!ra.ok() || !rb.ok()) return {};
    for (size_t i = 0; i < pages.size(); ++i) {
      const PageResult &x = (*ra)[i], &y = (*rb)[i];
      EXPECT_EQ(x.verdict, y.verdict) << pages[i].url;
      EXPECT_EQ(x.doc, y.doc) << pages[i].url;
      EXPECT_EQ(x.cluster, y.cluster) << pages[i].url;
      EXPECT_EQ(x.matches.size(), y.matches.size()) << pages[i].url;
      for (size_t m = 0; m < std::min(x.matches.size(), y.matches.size()); ++m) {
        EXPECT_EQ(x.matches[m].doc, y.matches[m].doc) << pages[i].url;
        EXPECT_EQ(x.matches[m].relation, y.matches[m].relation) << pages[i].url;
      }
    }
    return *std::move(ra);
  }
  // The writer's key filter (FORMAT.md, "The key filter") says "maybe" for every key of the
  // posting and fingerprint B-trees.
  static void ExpectFilterHoldsEveryKey(Store& store) {
    MappedFile* file = store.mapped_file();
    ASSERT_NE(file, nullptr);
    const Status s = file->VerifyKeyFilterForTesting();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  static std::vector<std::string> Answer(const Store& store, const dedup::Sketch& sketch) {
    QueryOptions q;
    q.threshold = 0.2;
    StatusOr<std::vector<SimilarDoc>> r = store.SimilarToSketch(sketch, q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::vector<std::string> out;
    if (!r.ok()) return out;
    for (const SimilarDoc& d : *r)
      out.push_back(std::to_string(d.doc) + " " + std::to_string(d.resemblance));
    return out;
  }
};

// A store with the buffer and one without take the same pages in the same batches: every
// decision is the same, and so is every query's answer, asked of the store that wrote, of another
// Store on the same files, and of the store reopened (which rebuilds its buffer).
TEST_F(WriteBufferStoreTest, AnswersAsAStoreWithoutIt) {
  std::unique_ptr<Store> plain, buffered;
  const SweepId s = OpenBoth(&plain, &buffered);
  constexpr uint64_t kBatches = 20, kPerBatch = 30;
  std::vector<dedup::Sketch> queries;
  std::map<Relation, int> exact;  // the exact duplicates found, by relation
  for (uint64_t b = 0; b < kBatches; ++b) {
    std::vector<PageInput> pages;
    for (uint64_t j = b * kPerBatch; j < (b + 1) * kPerBatch; ++j) pages.push_back(PageAt(j, s));
    const std::vector<PageResult> a = ApplyToBoth(*plain, *buffered, pages);
    ASSERT_EQ(a.size(), pages.size());
    ExpectFilterHoldsEveryKey(*plain);
    ExpectFilterHoldsEveryKey(*buffered);
    for (size_t i = 0; i < pages.size(); ++i) {
      if (a[i].verdict == Verdict::kDuplicate) ++exact[a[i].matches.at(0).relation];
      EXPECT_EQ(*buffered->FindIdentical(pages[i].sketch.identical), a[i].doc);
    }
    queries.push_back(pages[b % kPerBatch].sketch);
    queries.push_back(PageAt((b + 1) * kPerBatch + 5, s).sketch);  // a page not stored
    for (const dedup::Sketch& q : queries) ASSERT_EQ(Answer(*buffered, q), Answer(*plain, q));
  }
  EXPECT_GE(exact[Relation::kIdentical], 10);
  EXPECT_GE(exact[Relation::kLexical], 10);
  EXPECT_GE(exact[Relation::kShingle], 10);
  {
    auto other = OpenStore({}, "buffered");  // as another process would
    for (const dedup::Sketch& q : queries) EXPECT_EQ(Answer(*other, q), Answer(*plain, q));
    for (uint64_t j = 0; j < kBatches * kPerBatch; j += 7) {
      EXPECT_EQ(*other->FindIdentical(PageAt(j, s).sketch.identical),
                *plain->FindIdentical(PageAt(j, s).sketch.identical));
    }
  }
  ExpectConsistent(*buffered);
  buffered.reset();
  buffered = OpenStore({}, "buffered");
  for (const dedup::Sketch& q : queries) EXPECT_EQ(Answer(*buffered, q), Answer(*plain, q));
  ExpectConsistent(*buffered);
  // The writer of the reopened store (its buffer rebuilt) decides as the other: every page of
  // this batch is an exact copy of one of the last batches.
  std::vector<PageInput> again;
  for (uint64_t j = kBatches * kPerBatch - 40; j < kBatches * kPerBatch; ++j) {
    again.push_back(PageAt(j, s));
    again.back().url += "/again";
  }
  StatusOr<std::vector<PageResult>> a = plain->Apply(again), c = buffered->Apply(again);
  ASSERT_TRUE(a.ok() && c.ok());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ((*c)[i].verdict, Verdict::kDuplicate) << again[i].url;
    EXPECT_EQ((*a)[i].doc, (*c)[i].doc) << again[i].url;
  }
  ExpectConsistent(*buffered);
}

// Each commit puts one slice: after as many commits as there are slices, even commits without a
// page, the B-trees hold every posting the store without the buffer holds. Stats counts the
// buffered postings: with the B-trees' entries they make what the other store's B-trees hold.
TEST_F(WriteBufferStoreTest, EverySliceIsPutWithinOneCommitPerSlice) {
  std::unique_ptr<Store> plain, buffered;
  const SweepId s = OpenBoth(&plain, &buffered);
  std::vector<PageInput> pages;
  for (uint64_t j = 0; j < 50; ++j) pages.push_back(PageAt(j, s));
  ASSERT_TRUE(plain->Apply(pages).ok());
  ASSERT_TRUE(buffered->Apply(pages).ok());
  auto in_trees = [](const StoreStats& stats) {
    uint64_t n = 0;
    for (const DatabaseStats& d : stats.databases) {
      if (d.name == "features" || d.name == "supershingles" || d.name == "samples") n += d.entries;
    }
    return n;
  };
  StatusOr<StoreStats> plain_stats = plain->Stats(), stats = buffered->Stats();
  ASSERT_TRUE(plain_stats.ok() && stats.ok());
  EXPECT_EQ(plain_stats->buffered_postings, 0u);
  EXPECT_GT(stats->buffered_postings, 0u);
  EXPECT_EQ(in_trees(*stats) + stats->buffered_postings, in_trees(*plain_stats));
  auto fps_in_trees = [](const StoreStats& st) {
    uint64_t n = 0;
    for (const DatabaseStats& d : st.databases) {
      if (d.name.starts_with("fp_")) n += d.entries;
    }
    return n;
  };
  EXPECT_EQ(plain_stats->buffered_fingerprints, 0u);
  EXPECT_GT(stats->buffered_fingerprints, 0u);
  EXPECT_EQ(fps_in_trees(*stats) + stats->buffered_fingerprints, fps_in_trees(*plain_stats));
  auto entries = [&](const std::string& name) {
    plain.reset();
    buffered.reset();
    MDB_env* env = nullptr;
    EXPECT_EQ(mdb_env_create(&env), 0);
    EXPECT_EQ(mdb_env_set_maxdbs(env, 32), 0);
    EXPECT_EQ(mdb_env_open(env, dir_.Sub(name).c_str(), MDB_RDONLY, 0644), 0);
    MDB_txn* txn = nullptr;
    EXPECT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), 0);
    std::pair<size_t, size_t> n;  // postings, fingerprint entries
    for (const char* db : {"features", "supershingles", "samples"}) {
      MDB_dbi dbi = 0;
      EXPECT_EQ(mdb_dbi_open(txn, db, MDB_DUPSORT | MDB_DUPFIXED, &dbi), 0);
      MDB_stat st;
      EXPECT_EQ(mdb_stat(txn, dbi, &st), 0);
      n.first += st.ms_entries;
    }
    for (const char* db : {"fp_identical", "fp_lexical", "fp_shingle"}) {
      MDB_dbi dbi = 0;
      EXPECT_EQ(mdb_dbi_open(txn, db, 0, &dbi), 0);
      MDB_stat st;
      EXPECT_EQ(mdb_stat(txn, dbi, &st), 0);
      n.second += st.ms_entries;
    }
    mdb_txn_abort(txn);
    mdb_env_close(env);
    plain = OpenStore(Without(), "plain");
    buffered = OpenStore({}, "buffered");
    return n;
  };
  const std::pair<size_t, size_t> all = entries("plain");
  ASSERT_GT(all.first, 1000u);
  ASSERT_GT(all.second, 100u);
  const std::pair<size_t, size_t> after_one = entries("buffered");
  EXPECT_LT(after_one.first, all.first);  // one commit put one slice
  EXPECT_LT(after_one.second, all.second);
  for (int i = 0; i < kBufferSlices - 1; ++i) ASSERT_TRUE(buffered->Apply({}).ok());
  stats = buffered->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->buffered_postings, 0u);
  EXPECT_EQ(stats->buffered_fingerprints, 0u);
  EXPECT_EQ(entries("buffered"), all);
  ExpectConsistent(*buffered);
}

// Queries from other threads while the writer commits: each finds every page committed before
// it began, whichever buffer it gets (one kept for its commit, one in flight, or a rebuild).
TEST_F(WriteBufferStoreTest, ReadersDuringCommitsFindEveryCommittedPage) {
  auto store = OpenStore();
  const SweepId s = store->OpenSweep("s", 1)->id;
  constexpr uint64_t kBatches = 40, kPerBatch = 20;
  std::atomic<int64_t> committed{-1};
  std::atomic<bool> done{false};
  std::atomic<int> queries{0}, misses{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(r);
      while (!done.load()) {
        const int64_t c = committed.load();
        if (c < 0) continue;
        const uint64_t j = static_cast<uint64_t>(rng() % static_cast<uint64_t>(c + 1)) * kPerBatch +
                           rng() % kPerBatch;
        QueryOptions q;
        q.threshold = 0.99;
        StatusOr<std::vector<SimilarDoc>> r2 = store->SimilarToSketch(PageAt(j, s).sketch, q);
        ++queries;
        if (!r2.ok() || r2->empty() || (*r2)[0].resemblance < 1.0) ++misses;
      }
    });
  }
  for (uint64_t b = 0; b < kBatches; ++b) {
    std::vector<PageInput> pages;
    for (uint64_t j = b * kPerBatch; j < (b + 1) * kPerBatch; ++j) pages.push_back(PageAt(j, s));
    ASSERT_TRUE(store->Apply(pages).ok());
    committed = static_cast<int64_t>(b);
  }
  while (queries.load() < 200) std::this_thread::yield();
  done = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(misses.load(), 0) << "of " << queries.load();
  ExpectConsistent(*store);
}

// --- The key filter (FORMAT.md, "The key filter") ---

class KeyFilterStoreTest : public WriteBufferStoreTest {
 protected:
  static StoreOptions Unfiltered() {
    StoreOptions o;
    o.key_filter = false;
    return o;
  }
};

// More batches than there are slices (each batch builds one; as the store grows they pass 8 bits
// per key and are built again, larger), with exact copies and near-copies of pages in the
// B-trees and in the buffer: every decision is the unfiltered store's, and after each commit
// the filter holds every key of the B-trees. Then reopened: a new filter, built anew.
TEST_F(KeyFilterStoreTest, DecidesAsAStoreWithoutIt) {
  auto unfiltered = OpenStore(Unfiltered(), "unfiltered");
  auto filtered = OpenStore({}, "filtered");
  const SweepId s = unfiltered->OpenSweep("s", 1)->id;
  ASSERT_EQ(filtered->OpenSweep("s", 1)->id, s);
  constexpr uint64_t kBatches = 40, kPerBatch = 25;
  std::map<Verdict, int> verdicts;
  for (uint64_t b = 0; b < kBatches; ++b) {
    std::vector<PageInput> pages;
    for (uint64_t j = b * kPerBatch; j < (b + 1) * kPerBatch; ++j) pages.push_back(PageAt(j, s));
    for (const PageResult& r : ApplyToBoth(*unfiltered, *filtered, pages)) ++verdicts[r.verdict];
    ExpectFilterHoldsEveryKey(*filtered);
  }
  // (260 and 121 of the 1,000 pages.)
  EXPECT_GE(verdicts[Verdict::kDuplicate], 130);
  EXPECT_GE(verdicts[Verdict::kNearDuplicate], 60);
  StatusOr<StoreStats> with = filtered->Stats(), without = unfiltered->Stats();
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_GT(with->key_filter_bytes, 0u);
  EXPECT_EQ(without->key_filter_bytes, 0u);
  filtered.reset();
  filtered = OpenStore({}, "filtered");
  std::vector<PageInput> again;
  for (uint64_t j = 0; j < kBatches * kPerBatch; j += 9) {
    again.push_back(PageAt(j, s));
    again.back().url += "/again";
  }
  EXPECT_EQ(ApplyToBoth(*unfiltered, *filtered, again).size(), again.size());
  ExpectFilterHoldsEveryKey(*filtered);
  ExpectConsistent(*filtered);
}

// Another writer (another process, or another Store on the same files) commits between two
// batches: the filter has not seen its keys, so the next batch starts every slice over, and finds
// the other writer's pages: their exact copies are duplicates, and their near-copies match them
// (found through the posting indexes).
TEST_F(KeyFilterStoreTest, AnotherWritersCommitStartsItOver) {
  auto store = OpenStore();
  const SweepId s = store->OpenSweep("s", 1)->id;
  // Every slice built: one per batch.
  for (uint64_t b = 0; b < 2 * kBufferSlices; ++b) {
    std::vector<PageInput> pages;
    for (uint64_t j = b * 10; j < (b + 1) * 10; ++j) pages.push_back(PageAt(j, s));
    ASSERT_TRUE(store->Apply(pages).ok());
  }
  ExpectFilterHoldsEveryKey(*store);
  std::vector<PageInput> theirs, copies;
  for (uint64_t f = 0; f < 20; ++f) {
    // The near-copy shares 290 of 310 shingles (resemblance 0.935).
    const uint64_t base = (1000 + f) * 1000, fresh = (5000 + f) << 20;
    const std::vector<uint64_t> shingles = Variant(base, 300, 290, fresh);
    theirs.push_back(Page("http://other/" + std::to_string(f), s, 5, shingles));
    copies.push_back(Page("http://copy/" + std::to_string(f), s, 6, shingles));
    copies.push_back(
        Page("http://near/" + std::to_string(f), s, 6, Variant(base, 300, 290, fresh + 100)));
  }
  std::vector<PageResult> other_result;
  {
    // Every key of its batch into the B-trees, none left in its write buffer.
    auto other = OpenStore(Without());
    StatusOr<std::vector<PageResult>> applied = other->Apply(theirs);
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    other_result = *applied;
  }
  StatusOr<std::vector<PageResult>> r = store->Apply(copies);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (size_t f = 0; f < theirs.size(); ++f) {
    const PageResult& copy = (*r)[2 * f];
    const PageResult& near = (*r)[2 * f + 1];
    EXPECT_EQ(copy.verdict, Verdict::kDuplicate) << f;
    ASSERT_FALSE(copy.matches.empty()) << f;
    EXPECT_EQ(copy.matches[0].doc, other_result[f].doc) << f;
    EXPECT_TRUE(std::any_of(near.matches.begin(), near.matches.end(), [&](const Match& m) {
      return m.doc == other_result[f].doc;
    })) << f;
  }
  ExpectFilterHoldsEveryKey(*store);
  ExpectConsistent(*store);
}

// A posting or fingerprint key of another size than the format's (damage Check reports) is
// unreachable by the writer's lookups: building the filter skips it, and the store goes on
// deciding as before.
TEST_F(KeyFilterStoreTest, AKeyOfTheWrongSizeIsSkipped) {
  auto store = OpenStore();
  const SweepId s = store->OpenSweep("s", 1)->id;
  std::vector<PageInput> pages;
  for (uint64_t j = 0; j < 30; ++j) pages.push_back(PageAt(j, s));
  StatusOr<std::vector<PageResult>> first = store->Apply(pages);
  ASSERT_TRUE(first.ok());
  store.reset();
  {
    MDB_env* env = nullptr;
    ASSERT_EQ(mdb_env_create(&env), 0);
    ASSERT_EQ(mdb_env_set_maxdbs(env, 32), 0);
    ASSERT_EQ(mdb_env_open(env, dir_.Sub("db").c_str(), 0, 0644), 0);
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
    MDB_dbi features = 0, fp = 0;
    ASSERT_EQ(mdb_dbi_open(txn, "features", MDB_DUPSORT | MDB_DUPFIXED, &features), 0);
    ASSERT_EQ(mdb_dbi_open(txn, "fp_identical", 0, &fp), 0);
    char short_key[2] = {0, 1}, entry[12] = {}, long_key[17] = {}, doc[8] = {};
    MDB_val k{sizeof short_key, short_key}, v{sizeof entry, entry};
    ASSERT_EQ(mdb_put(txn, features, &k, &v, 0), 0);
    k = MDB_val{sizeof long_key, long_key};
    v = MDB_val{sizeof doc, doc};
    ASSERT_EQ(mdb_put(txn, fp, &k, &v, 0), 0);
    ASSERT_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
  }
  store = OpenStore();
  std::vector<PageInput> again;
  for (const PageInput& p : pages) {
    again.push_back(p);
    again.back().url += "/again";
  }
  StatusOr<std::vector<PageResult>> r = store->Apply(again);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (size_t i = 0; i < pages.size(); ++i) {
    EXPECT_EQ((*r)[i].verdict, Verdict::kDuplicate) << pages[i].url;
    EXPECT_EQ((*r)[i].matches.at(0).doc, (*first)[i].doc) << pages[i].url;
  }
  ExpectFilterHoldsEveryKey(*store);
}

}  // namespace
}  // namespace shingled::store
