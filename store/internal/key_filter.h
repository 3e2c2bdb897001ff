// Which keys the writer may find in the B-trees of the six random-key indexes: the posting
// indexes (`features`, `supershingles`, `samples`) and the fingerprint indexes (`fp_identical`,
// `fp_lexical`, `fp_shingle`). FORMAT.md, "The key filter". Private to store/.
//
// Most values of a new page are in no stored document, and at 1M documents each read of one is a
// descent to a leaf that is not in the cache. The filter answers "not there" for nearly all of
// them from memory: a split block Bloom filter (blocks of 8 32-bit words, one bit set in each
// per key: one cache line per probe) per slice of the key space, the slices of the write buffer
// (BufferSlice, FingerprintSlice), so that a slice is built from its share of the B-trees alone:
// one slice per write batch, none of them a pause of the whole store's size.
//
// The filter answers for the B-trees only (the write buffer is in memory already). It may say
// "maybe" for an absent key, never "no" for a present one: every key of a valid slice's
// B-trees was added (by Build, or by Add as the writer put it). A key forgetting removes from the
// B-trees stays in the filter, a "maybe"; nothing makes a valid slice wrong but a commit it did
// not see (another process's: StoreImpl tracks the commit it describes and invalidates it all
// then).
//
// Thread-safety: none; the writer's alone (StoreImpl::write_mu_).
#ifndef SHINGLED_STORE_INTERNAL_KEY_FILTER_H_
#define SHINGLED_STORE_INTERNAL_KEY_FILTER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/fmix.h"
#include "base/status.h"
#include "dedup/sketch.h"
#include "store/internal/schema.h"
#include "store/internal/write_buffer.h"

namespace shingled::store::internal {

class KeyFilter {
 public:
  // The index a key belongs to: the posting indexes as BatchPostings::Index (0-2), then the
  // fingerprint indexes (kBufferIndexes + kFpIdentical, ...).
  static constexpr int kKinds = kBufferIndexes + kFingerprintIndexes;
  // Bits per key a slice is built with, and the bits per key below which it is built again,
  // larger (at 12 bits per key a probe for an absent key says "maybe" ~0.5% of the time, at 8
  // ~3%).
  static constexpr int kBuildBitsPerKey = 12;
  static constexpr int kRebuildBitsPerKey = 8;

  // A key's slice, its place in the slice, and its hash. The place is the 32 bits of the key
  // below the slice's (a value's, or a fingerprint's high half's), so it orders as the B-trees
  // order the keys: it chooses the key's block, and keys taken in key order (a Build's scan, the
  // writer's sorted reads and puts) step through a slice's blocks from first to last instead of
  // jumping among megabytes of them. The hash (salted by index) chooses the bits in the block.
  struct Key {
    int slice;
    uint32_t place;
    uint64_t hash;
  };
  static Key Posting(int index, uint64_t value) {
    return {BufferSlice(value), PlaceOf(value), Fmix64(value ^ kSalt[index])};
  }
  static Key Fingerprint(int index, const dedup::Fingerprint128& fp) {
    return {FingerprintSlice(fp), PlaceOf(fp.high),
            Fmix64(fp.low ^ Fmix64(fp.high ^ kSalt[kBufferIndexes + index]))};
  }

  // false only when `key` is in none of the B-trees: its slice is valid and lacks it.
  bool MayHold(Key key) const {
    const Slice& s = slices_[key.slice];
    if (!s.valid) return true;
    const Block& b = s.blocks[BlockOf(s, key.place)];
    const auto x = static_cast<uint32_t>(key.hash);
    for (int i = 0; i < 8; ++i) {
      if ((b.words[i] & Bit(x, i)) == 0) return false;
    }
    return true;
  }
  // Brings `key`'s block toward the cache, for a MayHold or Add a few keys later.
  void Prefetch(Key key) const {
    const Slice& s = slices_[key.slice];
    if (s.valid) __builtin_prefetch(&s.blocks[BlockOf(s, key.place)]);
  }
  // Records that the B-trees hold `key` (a no-op for a slice not valid: its Build reads it).
  void Add(Key key);
  // Adds keys a few keys after prefetching their blocks, so that the cache misses of consecutive
  // keys overlap. The last few are added when it goes.
  class Adder {
   public:
    explicit Adder(KeyFilter& filter) : filter_(filter) {}
    ~Adder() {
      for (size_t i = n_ > kAhead ? n_ - kAhead : 0; i < n_; ++i) filter_.Add(ring_[i % kAhead]);
    }
    Adder(const Adder&) = delete;
    Adder& operator=(const Adder&) = delete;

    void operator()(Key key) {
      filter_.Prefetch(key);
      Key& slot = ring_[n_ % kAhead];
      if (n_ >= kAhead) filter_.Add(slot);
      slot = key;
      ++n_;
    }

   private:
    static constexpr size_t kAhead = 16;
    KeyFilter& filter_;
    std::array<Key, kAhead> ring_{};
    size_t n_ = 0;
  };
  // Adds `key_of(item)` for every item of `items` through an Adder.
  template <typename Items, typename KeyOf>
  void AddAll(const Items& items, KeyOf key_of) {
    Adder adder(*this);
    for (const auto& item : items) adder(key_of(item));
  }

  // Every slice invalid (the B-trees changed behind the filter's back).
  void InvalidateAll();
  // The slice the next batch should build: an invalid one, else the one furthest past
  // kRebuildBitsPerKey; -1 when none needs it.
  int SliceToBuild() const;
  // Builds `slice` from the keys of that slice in the six B-trees of `ops`' transaction, sized
  // for a sixteenth of their entries, and marks it valid.
  Status Build(TxnOps& ops, int slice);
  // Makes `slice` valid and empty, sized for `keys` keys (Build, and tests of the filter alone).
  void Reset(int slice, uint64_t keys);

  // Internal naming the keys of the B-trees of `ops`' transaction that a valid slice lacks (for
  // tests: none ever should).
  Status Verify(TxnOps& ops) const;

  bool valid(int slice) const { return slices_[slice].valid; }
  int valid_slices() const;
  // Memory held by the slices' blocks.
  size_t bytes() const;

 private:
  struct alignas(32) Block {
    std::array<uint32_t, 8> words;
  };
  struct Slice {
    std::vector<Block> blocks;
    // Keys added that set at least one bit: a key added twice counts once, and a new key the
    // slice already said "maybe" for is not counted.
    uint64_t keys = 0;
    bool valid = false;
  };
  // Salts of the kinds (odd 64-bit constants: the fractional digits of pi).
  static constexpr uint64_t kSalt[kKinds] = {0x243f6a8885a308d3, 0x13198a2e03707345,
                                             0xa4093822299f31d1, 0x082efa98ec4e6c89,
                                             0x452821e638d01377, 0xbe5466cf34e90c6d};
  // The multipliers that pick a key's bit in each word of its block (those of Parquet's split
  // block Bloom filter).
  static constexpr uint32_t kBitSalt[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                           0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};
  static uint32_t PlaceOf(uint64_t bits) {
    return static_cast<uint32_t>((bits << kBufferSliceBits) >> 32);
  }
  // Each block takes a range of places, in order. Values and fingerprints are hashes, so their
  // places spread as evenly as a hash of them would; keys crowded into a narrow range of values
  // would crowd a block, which costs false "maybe"s among those keys only.
  static size_t BlockOf(const Slice& s, uint32_t place) {
    return static_cast<size_t>((uint64_t{place} * s.blocks.size()) >> 32);
  }
  static uint32_t Bit(uint32_t x, int i) { return uint32_t{1} << ((x * kBitSalt[i]) >> 27); }

  std::array<Slice, kBufferSlices> slices_;
};

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_KEY_FILTER_H_
