// The gear table of the chunker's rolling fingerprint (dedup/chunker.h): 256 values drawn from
// SplitMix64 with a fixed seed. Private to dedup/ and its tests.
#ifndef SHINGLED_DEDUP_INTERNAL_GEAR_H_
#define SHINGLED_DEDUP_INTERNAL_GEAR_H_

#include <array>
#include <cstdint>

namespace shingled::dedup::internal {

// Baked into every chunk: changing it moves every boundary.
inline constexpr uint64_t kGearSeed = 0x4745415254545444ull;  // "GEARTTTD"

// The gear fingerprint after a byte depends on the 64 bytes ending with it.
inline constexpr uint32_t kGearWindow = 64;

constexpr std::array<uint64_t, 256> MakeGearTable() {
  std::array<uint64_t, 256> table{};
  uint64_t state = kGearSeed;
  for (uint64_t& g : table) {
    // SplitMix64 (dedup/internal/splitmix.h), spelled out to be constexpr.
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    g = z ^ (z >> 31);
  }
  return table;
}

inline constexpr std::array<uint64_t, 256> kGear = MakeGearTable();

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_GEAR_H_
