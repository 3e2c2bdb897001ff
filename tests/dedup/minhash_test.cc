// The minhash kernels (dedup/internal/minhash.h) against the scalar one, which a brute-force
// reference checks in turn: every kernel must leave the same minimum (lead, tail) for every
// permutation, on random shingles and on the shingles of real pages, for every permutation count
// (the vector kernels unroll some counts and handle a partial last group of 8).
#include "dedup/internal/minhash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dedup/canonicalize.h"
#include "dedup/internal/sketch_context.h"
#include "dedup/internal/splitmix.h"
#include "dedup/internal/token_hash.h"
#include "dedup/sketch.h"

namespace shingled::dedup::internal {
namespace {

struct NamedKernel {
  const char* name;
  MinhashKernel kernel;
};

// The vector kernels this CPU can run.
std::vector<NamedKernel> VectorKernels() {
  std::vector<NamedKernel> out;
  if (CpuSupports(SimdLevel::kAvx2)) out.push_back({"avx2", &MinhashAvx2});
  if (CpuSupports(SimdLevel::kAvx512)) out.push_back({"avx512", &MinhashAvx512});
  if (CpuHasAvx512Gfni()) out.push_back({"avx512+gfni", &MinhashAvx512Gfni});
  return out;
}

// Runs `kernel` over ys in calls of at most `batch` values, as the Sketcher does with its blocks.
MinhashState RunKernel(MinhashKernel kernel, const MinhashTables& tables,
                       const std::vector<uint64_t>& ys, size_t batch) {
  MinhashState state;
  state.Reset();
  for (size_t k = 0; k < ys.size(); k += batch) {
    kernel(tables, ys.data() + k, std::min(batch, ys.size() - k), &state);
  }
  return state;
}

// The (lead, tail) minima of the first t permutations, for comparing states.
std::vector<std::pair<int, uint64_t>> Minima(const MinhashState& state, int t) {
  std::vector<std::pair<int, uint64_t>> out;
  for (int i = 0; i < t; ++i) out.emplace_back(state.lead[i], state.tail[i]);
  return out;
}

// Brute force: the least (lead_i(y), tail_i(y)) over all y, with the lead XORed from the table
// rows byte by byte.
std::vector<std::pair<int, uint64_t>> Reference(const MinhashTables& tables,
                                                const std::vector<uint64_t>& ys) {
  std::vector<std::pair<int, uint64_t>> best(static_cast<size_t>(tables.t), {0xFF, ~0ull});
  for (uint64_t y : ys) {
    for (int i = 0; i < tables.t; ++i) {
      int lead = 0;
      for (int chunk = 0; chunk < kChunks; ++chunk) lead ^= tables.Row(chunk, y)[i];
      best[i] = std::min(best[i], std::make_pair(lead, tables.Tail(i, y)));
    }
  }
  return best;
}

// Random values with repeats (a repeated shingle must change nothing), in pages of several
// lengths, so that both the early minima (leads falling from 0xFF) and the late ones (lead 0,
// decided by the tails) are exercised.
std::vector<uint64_t> RandomYs(size_t n, uint64_t seed) {
  uint64_t rng = seed;
  std::vector<uint64_t> ys;
  for (size_t k = 0; k < n; ++k) {
    const uint64_t r = SplitMix64(&rng);
    ys.push_back(k > 10 && r % 7 == 0 ? ys[r % k] : SplitMix64(&rng));
  }
  return ys;
}

TEST(MinhashTest, ScalarKernelEqualsBruteForce) {
  for (int t : {1, 9, 84, 256}) {
    const MinhashTables tables(t, 0x5348494e474c4544ull);
    for (size_t n : {1, 7, 300, 3000}) {
      const std::vector<uint64_t> ys = RandomYs(n, 1000 + n);
      EXPECT_EQ(Minima(RunKernel(&MinhashScalar, tables, ys, 128), t), Reference(tables, ys))
          << "t = " << t << ", n = " << n;
    }
  }
}

TEST(MinhashTest, EveryVectorKernelEqualsScalarOnRandomShingles) {
  const std::vector<NamedKernel> kernels = VectorKernels();
  if (kernels.empty()) GTEST_SKIP() << "this CPU has no vector kernel";
  // Counts around the groups of 8 and the vectors of 32 and 64 leads, and the unrolled 84 and 200.
  for (int t : {1, 7, 8, 9, 31, 33, 63, 64, 65, 84, 88, 96, 100, 128, 200, 255, 256}) {
    const MinhashTables tables(t, 0x5348494e474c4544ull ^ static_cast<uint64_t>(t));
    for (size_t n : {1, 5, 8, 13, 128, 129, 1000, 5000}) {
      const std::vector<uint64_t> ys = RandomYs(n, static_cast<uint64_t>(t) * 10007 + n);
      for (size_t batch : {size_t{1}, size_t{13}, size_t{128}}) {
        const auto expected = Minima(RunKernel(&MinhashScalar, tables, ys, batch), t);
        for (const NamedKernel& k : kernels) {
          ASSERT_EQ(Minima(RunKernel(k.kernel, tables, ys, batch), t), expected)
              << k.name << ": t = " << t << ", n = " << n << ", batch = " << batch;
        }
      }
    }
  }
}

// Shingles that all tie on lead 0 for some permutations, and a page of one value repeated: the
// tails alone decide, and the padding of a last partial step repeats the last value.
TEST(MinhashTest, EveryVectorKernelEqualsScalarOnRepeatsAndTies) {
  const std::vector<NamedKernel> kernels = VectorKernels();
  if (kernels.empty()) GTEST_SKIP() << "this CPU has no vector kernel";
  const MinhashTables tables(84, 7);
  std::vector<std::vector<uint64_t>> pages = {std::vector<uint64_t>(77, 0x1234),
                                              std::vector<uint64_t>(9, 0), {~0ull, 0, ~0ull}};
  // Values whose lead is 0 for permutation 0, found by search: ties on the lead in one step.
  std::vector<uint64_t> zero_lead;
  uint64_t rng = 99;
  while (zero_lead.size() < 40) {
    const uint64_t y = SplitMix64(&rng);
    int lead = 0;
    for (int chunk = 0; chunk < kChunks; ++chunk) lead ^= tables.Row(chunk, y)[0];
    if (lead == 0) zero_lead.push_back(y);
  }
  pages.push_back(zero_lead);
  for (const std::vector<uint64_t>& ys : pages) {
    const auto expected = Minima(RunKernel(&MinhashScalar, tables, ys, 128), 84);
    EXPECT_EQ(expected, Reference(tables, ys));
    for (const NamedKernel& k : kernels) {
      EXPECT_EQ(Minima(RunKernel(k.kernel, tables, ys, 128), 84), expected) << k.name;
    }
  }
}

// The mix before the permutations: the AVX-512 loop equals Fmix64 for every count of values (the
// masked last 1..7), and leaves the values past n alone.
TEST(MinhashTest, Avx512MixEqualsScalar) {
  if (!CpuHasAvx512DqVl()) GTEST_SKIP() << "no AVX-512 DQ on this CPU";
  uint64_t rng = 17;
  for (size_t n = 0; n <= 140; ++n) {
    std::vector<uint64_t> xs(n);
    for (uint64_t& x : xs) x = n % 3 == 0 ? SplitMix64(&rng) : SplitMix64(&rng) & 0xFFFF;
    const uint64_t seed = SplitMix64(&rng);
    std::vector<uint64_t> expected(n + 8, 7), got(n + 8, 7);
    MixScalar(xs.data(), n, seed, expected.data());
    MixAvx512(xs.data(), n, seed, got.data());
    ASSERT_EQ(got, expected) << n;
    for (size_t k = 0; k < n; ++k) ASSERT_EQ(got[k], Fmix64(xs[k] ^ seed));
  }
}

class ShingleRecorder final : public ShingleObserver {
 public:
  void OnShingle(uint64_t fp) override { shingles.push_back(fp); }
  std::vector<uint64_t> shingles;
};

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The real pages of tests/data, and the first pages of the benchmark corpus when it is there.
std::vector<std::filesystem::path> RealPages() {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path data(SHINGLED_TEST_DATA_DIR);
  for (const char* dir : {"pages", "samples", "canonicalizer"}) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(data / dir, ec)) {
      if (e.is_regular_file()) out.push_back(e.path());
    }
  }
  std::error_code ec;
  std::vector<std::filesystem::path> corpus;
  for (const auto& e : std::filesystem::directory_iterator(SHINGLED_CORPUS_DIR, ec)) {
    if (e.is_regular_file()) corpus.push_back(e.path());
  }
  std::sort(corpus.begin(), corpus.end());
  if (corpus.size() > 60) corpus.resize(60);
  out.insert(out.end(), corpus.begin(), corpus.end());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MinhashTest, EveryVectorKernelEqualsScalarOnRealPages) {
  const std::vector<NamedKernel> kernels = VectorKernels();
  if (kernels.empty()) GTEST_SKIP() << "this CPU has no vector kernel";
  auto ctx = SketchContext::Create(SketchParams{}, SimdLevel::kScalar);
  ASSERT_TRUE(ctx.ok());
  const MinhashTables& tables = (*ctx)->impl().minhash;
  const std::vector<std::filesystem::path> pages = RealPages();
  ASSERT_GE(pages.size(), 10u);
  for (const std::filesystem::path& page : pages) {
    Sketcher sketcher(**ctx);
    ShingleRecorder recorder;
    sketcher.set_shingle_observer(&recorder);
    CanonicalizePage(ReadFile(page), "text/html", &sketcher);
    const Sketch sketch = sketcher.Finish();
    std::vector<uint64_t> ys;
    for (uint64_t fp : recorder.shingles) ys.push_back(Fmix64(fp ^ tables.mix_seed));
    const MinhashState scalar = RunKernel(&MinhashScalar, tables, ys, 128);
    if (!ys.empty()) {
      // The Sketcher's own minhashes (scalar level) are the tails of these minima.
      ASSERT_EQ(sketch.minhashes, std::vector<uint64_t>(scalar.tail, scalar.tail + tables.t))
          << page;
    }
    for (const NamedKernel& k : kernels) {
      EXPECT_EQ(Minima(RunKernel(k.kernel, tables, ys, 128), tables.t), Minima(scalar, tables.t))
          << k.name << " differs from scalar on " << page.filename();
    }
  }
}

}  // namespace
}  // namespace shingled::dedup::internal
