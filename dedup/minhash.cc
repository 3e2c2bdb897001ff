#include "dedup/internal/minhash.h"

#include <cstring>

#include "dedup/internal/splitmix.h"

namespace shingled::dedup::internal {

MinhashTables::MinhashTables(int num_permutations, uint64_t seed)
    : t(num_permutations), stride((num_permutations + 63) / 64 * 64) {
  uint64_t rng = seed ^ 0x6D696E6861736821ull;  // "minhash!": a stream apart from the Rabin one
  mix_seed = SplitMix64(&rng);
  // lead_i is linear in the 64 bits of y: bit b of y contributes the random byte basis[b][i].
  std::vector<uint8_t> basis(static_cast<size_t>(64) * stride, 0);
  for (int b = 0; b < 64; ++b) {
    for (int i = 0; i < t; i += 8) {
      const uint64_t r = SplitMix64(&rng);
      for (int k = 0; k < 8 && i + k < t; ++k) {
        basis[static_cast<size_t>(b) * stride + i + k] = static_cast<uint8_t>(r >> (8 * k));
      }
    }
  }
  lead_rows.assign(static_cast<size_t>(kChunks * kChunkValues) * stride, 0);
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    for (int value = 0; value < kChunkValues; ++value) {
      uint8_t* row = lead_rows.data() + static_cast<size_t>(chunk * kChunkValues + value) * stride;
      for (int bit = 0; bit < kChunkBits; ++bit) {
        if (((value >> bit) & 1) == 0) continue;
        const uint8_t* src = basis.data() + static_cast<size_t>(kChunkBits * chunk + bit) * stride;
        for (int i = 0; i < stride; ++i) row[i] ^= src[i];
      }
    }
  }
  groups = (t + 7) / 8;
  gf2_matrices.assign(static_cast<size_t>(groups) * kChunks * 8, 0);
  for (int i = 0; i < t; ++i) {
    for (int j = 0; j < kChunks; ++j) {
      // Column k of M_ij is basis[8 j + k][i]; row o (bit o of the lead) gathers bit o of them.
      uint64_t matrix = 0;
      for (int o = 0; o < 8; ++o) {
        uint64_t row = 0;
        for (int k = 0; k < 8; ++k) {
          row |= static_cast<uint64_t>((basis[static_cast<size_t>(8 * j + k) * stride + i] >> o) & 1)
                 << k;
        }
        matrix |= row << (8 * (7 - o));
      }
      gf2_matrices[(static_cast<size_t>(i / 8) * kChunks + j) * 8 + i % 8] = matrix;
    }
  }
  tail_mul.resize(t);
  tail_add.resize(t);
  for (int i = 0; i < t; ++i) {
    tail_mul[i] = SplitMix64(&rng) | 1;
    tail_add[i] = SplitMix64(&rng);
  }
}

void MixScalar(const uint64_t* xs, size_t n, uint64_t seed, uint64_t* ys) {
  for (size_t k = 0; k < n; ++k) ys[k] = Fmix64(xs[k] ^ seed);
}

void MinhashState::Reset() {
  std::memset(lead, 0xFF, sizeof(lead));
  std::memset(tail, 0xFF, sizeof(tail));
}

void MinhashScalar(const MinhashTables& tables, const uint64_t* ys, size_t n,
                   MinhashState* state) {
  // Portable code: the rows are XORed as 64-bit words, only those that hold the t leads (11 of a
  // row's 16 for t = 84).
  const int words = (tables.t + 7) / 8;
  uint64_t lead[kMaxMinhashes / 8];
  for (size_t k = 0; k < n; ++k) {
    const uint64_t y = ys[k];
    std::memcpy(lead, tables.Row(0, y), sizeof(uint64_t) * static_cast<size_t>(words));
    for (int chunk = 1; chunk < kChunks; ++chunk) {
      const uint8_t* row = tables.Row(chunk, y);
      for (int w = 0; w < words; ++w) {
        uint64_t r;
        std::memcpy(&r, row + 8 * w, 8);
        lead[w] ^= r;
      }
    }
    uint8_t bytes[kMaxMinhashes];
    std::memcpy(bytes, lead, sizeof(uint64_t) * static_cast<size_t>(words));
    for (int i = 0; i < tables.t; ++i) {
      if (bytes[i] <= state->lead[i]) MaybeReplace(tables, i, bytes[i], y, state);
    }
  }
}

bool CpuHasAvx512Gfni() {
  // Checked here, in portable code: the kernel's file may use AVX-512 anywhere.
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
         __builtin_cpu_supports("gfni");
}

MinhashKernel KernelFor(SimdLevel level) {
  switch (ResolveSimdLevel(level)) {
    case SimdLevel::kAvx512: return CpuHasAvx512Gfni() ? &MinhashAvx512Gfni : &MinhashAvx512;
    case SimdLevel::kAvx2: return &MinhashAvx2;
    default: return &MinhashScalar;
  }
}

}  // namespace shingled::dedup::internal
