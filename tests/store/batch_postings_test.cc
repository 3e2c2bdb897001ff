// BatchPostings, the writer's view of the posting indexes during a batch, against a model (a
// map from value to its documents) on real LMDB files: what it reads is what the B-tree would
// hold had each posting been put at once, whatever was prefetched, and FlushToBuffer (with an
// empty buffer, every slice) leaves exactly that
// in the B-tree.
#include "store/internal/batch_postings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <vector>

#include "store/internal/codec.h"
#include "store/internal/store_impl.h"
#include "tests/store/test_dir.h"

namespace shingled::store::internal {
namespace {

class BatchPostingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mdb_env_create(&env_), 0);
    ASSERT_EQ(mdb_env_set_maxdbs(env_, 4), 0);
    ASSERT_EQ(mdb_env_set_mapsize(env_, size_t{1} << 28), 0);
    ASSERT_EQ(mdb_env_open(env_, dir_.path().c_str(), MDB_NOSYNC, 0644), 0);
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(env_, nullptr, 0, &txn), 0);
    for (auto [name, dbi] : {std::pair{"features", &dbis_.features}, std::pair{"supershingles", &dbis_.supershingles},
                             std::pair{"samples", &dbis_.samples}}) {
      ASSERT_EQ(mdb_dbi_open(txn, name, MDB_CREATE | kPostings, dbi), 0);
    }
    ASSERT_EQ(mdb_txn_commit(txn), 0);
  }
  void TearDown() override { mdb_env_close(env_); }

  // Puts (value, doc) into the B-tree of `index` directly, as an earlier batch would have.
  void Store(MDB_txn* txn, BatchPostings::Index index, uint64_t value, DocId doc) {
    PostingKey key(value);
    Posting posting(value, doc);
    MDB_val k = Val(key.view()), v = Val(posting.view());
    ASSERT_EQ(mdb_put(txn, Dbi(index), &k, &v, MDB_NODUPDATA), 0);
  }
  MDB_dbi Dbi(BatchPostings::Index index) const {
    return index == BatchPostings::kFeatures ? dbis_.features
           : index == BatchPostings::kSupershingles ? dbis_.supershingles
                                                    : dbis_.samples;
  }
  // Every (value, doc) in the B-tree of `index`, in order.
  std::vector<std::pair<uint64_t, DocId>> Dump(MDB_txn* txn, BatchPostings::Index index) {
    std::vector<std::pair<uint64_t, DocId>> out;
    Cursor c;
    EXPECT_EQ(c.Open(txn, Dbi(index)), 0);
    MDB_val k, v;
    for (int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
      out.emplace_back(PostingValue(View(k), View(v)), PostingDoc(View(v)));
    }
    return out;
  }

  testing::TestDir dir_;
  MDB_env* env_ = nullptr;
  Dbis dbis_{};
};

TEST_F(BatchPostingsTest, ReadsStoredThenBatchPostingsUpToMax) {
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(env_, nullptr, 0, &txn), 0);
  Txn owner(txn);
  const uint64_t v = 0xabcdef0123456789ull;
  const uint64_t neighbour = v + 1;  // same bucket, another value
  for (DocId d : {1, 2, 3}) Store(txn, BatchPostings::kSamples, v, d);
  Store(txn, BatchPostings::kSamples, neighbour, 4);
  TxnOps ops(txn, dbis_);
  for (size_t prefetch_max : {size_t{0}, size_t{2}, size_t{10}}) {
    BatchPostings postings(ops);
    if (prefetch_max > 0) {
      ASSERT_TRUE(postings.Prefetch(BatchPostings::kSamples, {v, neighbour, v}, prefetch_max).ok());
    }
    postings.File(BatchPostings::kSamples, v, 10);
    postings.File(BatchPostings::kSamples, v, 10);  // the same posting again: filed once
    postings.File(BatchPostings::kSamples, v, 11);
    struct Case {
      size_t max;
      std::vector<DocId> docs;
      bool more;
    };
    for (const Case& c : {Case{10, {1, 2, 3, 10, 11}, false}, Case{5, {1, 2, 3, 10, 11}, false},
                          Case{4, {1, 2, 3, 10}, true}, Case{2, {1, 2}, true}, Case{0, {}, true}}) {
      std::vector<DocId> out;
      size_t count = 99;
      bool more = false;
      ASSERT_TRUE(postings.Read(BatchPostings::kSamples, v, c.max, &out, &count, &more).ok());
      EXPECT_EQ(out, c.docs) << "prefetch " << prefetch_max << " max " << c.max;
      EXPECT_EQ(count, c.docs.size());
      EXPECT_EQ(more, c.more) << "prefetch " << prefetch_max << " max " << c.max;
    }
    std::vector<DocId> out;
    size_t count = 0;
    bool more = true;
    ASSERT_TRUE(postings.Read(BatchPostings::kSamples, neighbour, 10, &out, &count, &more).ok());
    EXPECT_EQ(out, std::vector<DocId>{4});
    EXPECT_FALSE(more);
    // Another index does not see them.
    out.clear();
    ASSERT_TRUE(postings.Read(BatchPostings::kFeatures, v, 10, &out, &count, &more).ok());
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(postings.filed(), 2u);
  }
}

// Random values (many sharing buckets, some repeated), random stored postings, random prefetches
// and random files, checked read by read against the model; then Flush against the model.
TEST_F(BatchPostingsTest, AgreesWithAModelAndFlushesExactlyTheBatch) {
  std::mt19937_64 rng(20261121);
  for (int round = 0; round < 20; ++round) {
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(env_, nullptr, 0, &txn), 0);
    Txn owner(txn);
    for (auto index : {BatchPostings::kFeatures, BatchPostings::kSupershingles, BatchPostings::kSamples}) {
      ASSERT_EQ(mdb_drop(txn, Dbi(index), 0), 0);
    }
    // Values: 60 in 6 buckets (the top 20 bits), value 0 among them.
    std::vector<uint64_t> values{0};
    while (values.size() < 60) values.push_back(((rng() % 6) << kLowBits) | (rng() & kLowMask & 0xffff));
    std::array<std::map<uint64_t, std::vector<DocId>>, BatchPostings::kIndexes> model;
    DocId next = 1;
    for (int i = 0; i < 300; ++i) {
      auto index = static_cast<BatchPostings::Index>(rng() % 3);
      uint64_t value = values[rng() % values.size()];
      auto& docs = model[index][value];
      DocId doc = next++;
      docs.push_back(doc);
      Store(txn, index, value, doc);
    }
    TxnOps ops(txn, dbis_);
    BatchPostings postings(ops);
    const WriteBuffer empty;
    postings.set_buffer(&empty);
    for (auto index : {BatchPostings::kFeatures, BatchPostings::kSupershingles, BatchPostings::kSamples}) {
      std::vector<uint64_t> some;
      for (int i = 0; i < 30; ++i) some.push_back(values[rng() % values.size()]);
      ASSERT_TRUE(postings.Prefetch(index, some, rng() % 8).ok());
    }
    size_t filed = 0;
    for (int step = 0; step < 400; ++step) {
      auto index = static_cast<BatchPostings::Index>(rng() % 3);
      uint64_t value = values[rng() % values.size()];
      if (rng() % 3 == 0) {
        DocId doc = next;
        if (rng() % 4 != 0) ++next;  // sometimes the same document files another value
        auto& docs = model[index][value];
        if (docs.empty() || docs.back() != doc) {
          docs.push_back(doc);
          ++filed;
        }
        postings.File(index, value, doc);
        continue;
      }
      const size_t max = rng() % 12;
      std::vector<DocId> out;
      size_t count = 0;
      bool more = false;
      ASSERT_TRUE(postings.Read(index, value, max, &out, &count, &more).ok());
      const std::vector<DocId>& all = model[index][value];
      std::vector<DocId> want(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min(max, all.size())));
      ASSERT_EQ(out, want) << "round " << round << " step " << step;
      ASSERT_EQ(count, want.size());
      ASSERT_EQ(more, all.size() > max);
    }
    EXPECT_EQ(postings.filed(), filed);
    // With an empty buffer, every slice put: the batch's postings, all of them.
    internal::BatchFingerprints fp_put;
    ASSERT_TRUE(postings.FlushToBuffer(next, /*all_slices=*/true, {}, &fp_put).ok());
    for (auto index : {BatchPostings::kFeatures, BatchPostings::kSupershingles, BatchPostings::kSamples}) {
      std::vector<std::pair<uint64_t, DocId>> want;
      for (const auto& [value, docs] : model[index]) {
        for (DocId d : docs) want.emplace_back(value, d);
      }
      std::sort(want.begin(), want.end());
      EXPECT_EQ(Dump(txn, index), want) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace shingled::store::internal
