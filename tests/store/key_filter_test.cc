// The key filter alone (store/internal/key_filter.h): what it must never do (say "absent" for a
// key added), how often it may say "maybe" for an absent key, and which slice it builds next.
// Its use by the writer, against a store without it, is in write_buffer_test.cc
// (KeyFilterStoreTest), where the stores live.
#include "store/internal/key_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace shingled::store::internal {
namespace {

uint64_t ValueIn(int slice, std::mt19937_64& rng) {
  return (static_cast<uint64_t>(slice) << (64 - kBufferSliceBits)) | (rng() >> kBufferSliceBits);
}

dedup::Fingerprint128 FingerprintIn(int slice, std::mt19937_64& rng) {
  return {ValueIn(slice, rng), rng()};
}

TEST(KeyFilterTest, KeysSliceAsTheWriteBufferDoes) {
  std::mt19937_64 rng(1);
  for (int slice = 0; slice < kBufferSlices; ++slice) {
    const uint64_t value = ValueIn(slice, rng);
    const dedup::Fingerprint128 fp = FingerprintIn(slice, rng);
    for (int index = 0; index < kBufferIndexes; ++index) {
      EXPECT_EQ(KeyFilter::Posting(index, value).slice, BufferSlice(value));
    }
    for (int index = 0; index < kFingerprintIndexes; ++index) {
      EXPECT_EQ(KeyFilter::Fingerprint(index, fp).slice, FingerprintSlice(fp));
    }
  }
  // The same 64 bits in two indexes are two keys.
  EXPECT_NE(KeyFilter::Posting(0, 42).hash, KeyFilter::Posting(1, 42).hash);
  EXPECT_NE(KeyFilter::Fingerprint(0, {1, 2}).hash, KeyFilter::Fingerprint(1, {1, 2}).hash);
}

// A key's place (which chooses its block) orders as the B-trees order the keys, from the
// slice's first to its last, so that keys taken in key order step through the blocks in order.
TEST(KeyFilterTest, KeysPlaceInKeyOrder) {
  std::mt19937_64 rng(5);
  constexpr int kSlice = 6;
  std::vector<uint64_t> values(5000);
  for (uint64_t& v : values) v = ValueIn(kSlice, rng);
  values.push_back(ValueIn(kSlice, rng) & ~(~uint64_t{0} >> kBufferSliceBits));  // the first
  values.push_back(ValueIn(kSlice, rng) | (~uint64_t{0} >> kBufferSliceBits));   // the last
  std::sort(values.begin(), values.end());
  EXPECT_EQ(KeyFilter::Posting(0, values.front()).place, 0u);
  EXPECT_EQ(KeyFilter::Posting(2, values.back()).place, UINT32_MAX);
  for (size_t i = 1; i < values.size(); ++i) {
    for (int index = 0; index < kBufferIndexes; ++index) {
      ASSERT_LE(KeyFilter::Posting(index, values[i - 1]).place,
                KeyFilter::Posting(index, values[i]).place);
    }
  }
  // A fingerprint's key is its high half, then its low half.
  std::vector<dedup::Fingerprint128> fps(5000);
  for (dedup::Fingerprint128& fp : fps) fp = FingerprintIn(kSlice, rng);
  std::sort(fps.begin(), fps.end(),
            [](const dedup::Fingerprint128& a, const dedup::Fingerprint128& b) {
              return a.high != b.high ? a.high < b.high : a.low < b.low;
            });
  for (size_t i = 1; i < fps.size(); ++i) {
    ASSERT_LE(KeyFilter::Fingerprint(1, fps[i - 1]).place, KeyFilter::Fingerprint(1, fps[i]).place);
  }
}

TEST(KeyFilterTest, ASliceNotBuiltMayHoldAnything) {
  KeyFilter filter;
  std::mt19937_64 rng(2);
  EXPECT_EQ(filter.valid_slices(), 0);
  EXPECT_EQ(filter.bytes(), 0u);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(filter.MayHold(KeyFilter::Posting(i % 3, rng())));
  filter.Reset(5, 100);
  EXPECT_TRUE(filter.valid(5));
  EXPECT_EQ(filter.valid_slices(), 1);
  filter.InvalidateAll();
  EXPECT_FALSE(filter.valid(5));
  for (int i = 0; i < 1000; ++i)
    EXPECT_TRUE(filter.MayHold(KeyFilter::Posting(0, ValueIn(5, rng))));
}

// Every key added is held; absent keys are "maybe" at about the rate a split block Bloom filter
// has at 12 bits per key (~0.5%), and at 8 (~3%) once the slice holds 1.5 times the keys it was
// built for.
TEST(KeyFilterTest, HoldsEveryKeyAddedAndFewOthers) {
  constexpr int kSlice = 9;
  constexpr uint64_t kKeys = 20000;
  KeyFilter filter;
  filter.Reset(kSlice, kKeys);
  EXPECT_EQ(filter.bytes(), (kKeys * KeyFilter::kBuildBitsPerKey + 255) / 256 * 32);
  std::mt19937_64 rng(3);
  std::vector<KeyFilter::Key> added;
  for (uint64_t i = 0; i < kKeys; ++i) {
    added.push_back(
        i % 2 == 0 ? KeyFilter::Posting(static_cast<int>(i % 3), ValueIn(kSlice, rng))
                   : KeyFilter::Fingerprint(static_cast<int>(i % 3), FingerprintIn(kSlice, rng)));
    filter.Add(added.back());
  }
  for (const KeyFilter::Key& key : added) ASSERT_TRUE(filter.MayHold(key));
  auto maybe_rate = [&] {
    int maybe = 0;
    constexpr int kProbes = 200000;
    for (int i = 0; i < kProbes; ++i)
      maybe += filter.MayHold(KeyFilter::Posting(i % 3, ValueIn(kSlice, rng)));
    return static_cast<double>(maybe) / kProbes;
  };
  const double at_12 = maybe_rate();
  EXPECT_GT(at_12, 0.001);
  EXPECT_LT(at_12, 0.01);
  EXPECT_EQ(filter.SliceToBuild(), 0);  // the other slices are not built
  for (int s = 0; s < kBufferSlices; ++s) {
    if (s != kSlice) filter.Reset(s, 0);
  }
  EXPECT_EQ(filter.SliceToBuild(), -1);
  for (uint64_t i = 0; i < kKeys / 2; ++i) filter.Add(KeyFilter::Posting(0, ValueIn(kSlice, rng)));
  const double at_8 = maybe_rate();
  EXPECT_GT(at_8, 0.015);
  EXPECT_LT(at_8, 0.05);
  // Past 8 bits per key the slice is the one to build again, larger.
  EXPECT_EQ(filter.SliceToBuild(), -1);
  for (uint64_t i = 0; i < kKeys / 10; ++i) filter.Add(KeyFilter::Posting(1, ValueIn(kSlice, rng)));
  EXPECT_EQ(filter.SliceToBuild(), kSlice);
}

// Values crowded into a narrow range (not what hashes give, but what crafted pages might) share
// a block: every one of them is still held, and keys elsewhere in the slice keep their rate.
TEST(KeyFilterTest, CrowdedValuesAreHeldAndLeaveTheRestOfTheSliceAlone) {
  constexpr int kSlice = 11;
  constexpr uint64_t kKeys = 20000;
  KeyFilter filter;
  filter.Reset(kSlice, kKeys);
  std::mt19937_64 rng(6);
  // Values a place apart (the place is the 32 bits below the slice's 4).
  const uint64_t base = ValueIn(kSlice, rng) & ~(uint64_t{0xffffff} << 28);
  auto crowded = [base](uint64_t i) { return base + (i << 28); };
  std::vector<KeyFilter::Key> added;
  for (uint64_t i = 0; i < kKeys / 4; ++i) added.push_back(KeyFilter::Posting(0, crowded(i)));
  for (uint64_t i = 0; i < kKeys * 3 / 4; ++i)
    added.push_back(KeyFilter::Posting(1, ValueIn(kSlice, rng)));
  for (const KeyFilter::Key& key : added) filter.Add(key);
  for (const KeyFilter::Key& key : added) ASSERT_TRUE(filter.MayHold(key));
  int maybe = 0;
  constexpr int kProbes = 200000;
  for (int i = 0; i < kProbes; ++i)
    maybe += filter.MayHold(KeyFilter::Posting(2, ValueIn(kSlice, rng)));
  EXPECT_LT(static_cast<double>(maybe) / kProbes, 0.01);
  // The crowded block is full: absent values beside the crowded ones are "maybe".
  int beside = 0;
  for (uint64_t i = 0; i < 1000; ++i)
    beside += filter.MayHold(KeyFilter::Posting(2, crowded(kKeys / 4 + i)));
  EXPECT_GT(beside, 900);
}

// Keys of an invalid slice are not recorded (its Build reads them from the B-trees), and do not
// touch the valid ones.
TEST(KeyFilterTest, AddToASliceNotBuiltIsIgnored) {
  KeyFilter filter;
  filter.Reset(0, 1000);
  std::mt19937_64 rng(4);
  for (int i = 0; i < 1000; ++i) filter.Add(KeyFilter::Posting(0, ValueIn(1, rng)));
  EXPECT_FALSE(filter.valid(1));
  int maybe = 0;
  for (int i = 0; i < 10000; ++i) maybe += filter.MayHold(KeyFilter::Posting(0, ValueIn(0, rng)));
  EXPECT_EQ(maybe, 0);
}

}  // namespace
}  // namespace shingled::store::internal
