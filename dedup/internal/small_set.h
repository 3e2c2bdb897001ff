// SmallU64Set: a fixed-capacity set of 64-bit values with open addressing, for the few hundred
// values of a page's MIN_s and MOD samples. Insert, find and erase in O(1) expected time without
// allocation after construction. The slot comes from the high bits of the value times an odd
// constant (Fibonacci hashing): the raw high bits will not do, since MIN_s holds the *smallest*
// values (high bits all zero) and MOD samples hold values whose low bits are zero. Not thread-safe.
#ifndef SHINGLED_DEDUP_INTERNAL_SMALL_SET_H_
#define SHINGLED_DEDUP_INTERNAL_SMALL_SET_H_

#include <bit>
#include <cassert>
#include <cstdint>
#include <vector>

namespace shingled::dedup::internal {

class SmallU64Set {
 public:
  // Holds up to `max_size` values; the table is at least twice that, so probes stay short.
  explicit SmallU64Set(size_t max_size)
      : slots_(std::bit_ceil(2 * max_size + 2), kEmpty),
        shift_(64 - std::countr_zero(slots_.size())) {}

  // Returns false if the value was already there.
  bool Insert(uint64_t v) {
    if (v == kEmpty) {
      const bool fresh = !has_empty_value_;
      has_empty_value_ = true;
      return fresh;
    }
    for (size_t i = Slot(v);; i = Next(i)) {
      if (slots_[i] == v) return false;
      if (slots_[i] == kEmpty) {
        slots_[i] = v;
        ++size_;
        assert(size_ < slots_.size());
        return true;
      }
    }
  }

  bool Contains(uint64_t v) const {
    if (v == kEmpty) return has_empty_value_;
    for (size_t i = Slot(v);; i = Next(i)) {
      if (slots_[i] == v) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }

  // Removes v if present, by backward-shift deletion (no tombstones, so probes never lengthen).
  void Erase(uint64_t v) {
    if (v == kEmpty) {
      has_empty_value_ = false;
      return;
    }
    size_t i = Slot(v);
    while (slots_[i] != v) {
      if (slots_[i] == kEmpty) return;
      i = Next(i);
    }
    --size_;
    for (size_t j = Next(i);; j = Next(j)) {
      if (slots_[j] == kEmpty) break;
      const size_t home = Slot(slots_[j]);
      // Move slots_[j] into the hole at i unless its home lies cyclically in (i, j].
      const bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = kEmpty;
  }

  size_t size() const { return size_ + (has_empty_value_ ? 1 : 0); }

  void Clear() {
    std::fill(slots_.begin(), slots_.end(), kEmpty);
    size_ = 0;
    has_empty_value_ = false;
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  size_t Slot(uint64_t v) const {
    return static_cast<size_t>((v * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  size_t Next(size_t i) const { return (i + 1) & (slots_.size() - 1); }

  std::vector<uint64_t> slots_;
  int shift_;
  size_t size_ = 0;
  bool has_empty_value_ = false;
};

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_SMALL_SET_H_
