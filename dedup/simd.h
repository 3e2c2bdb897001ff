// Which vector code paths dedup/ may use. Every level gives bit-identical results: sketches are
// stored and compared across machines. The level is chosen at run time from the CPU (kAuto), so
// the build stays portable (no -march=native).
#ifndef SHINGLED_DEDUP_SIMD_H_
#define SHINGLED_DEDUP_SIMD_H_

#include <string_view>

namespace shingled::dedup {

enum class SimdLevel { kAuto, kScalar, kAvx2, kAvx512 };

std::string_view SimdLevelName(SimdLevel level);

// Whether this CPU runs a level's code (kAuto and kScalar: always).
bool CpuSupports(SimdLevel level);

// The best level this CPU supports.
SimdLevel BestSimdLevel();

// kAuto resolved to BestSimdLevel(); other levels unchanged.
inline SimdLevel ResolveSimdLevel(SimdLevel level) {
  return level == SimdLevel::kAuto ? BestSimdLevel() : level;
}

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_SIMD_H_
