#include "dedup/internal/token_hash.h"

#include <gtest/gtest.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "dedup/tokenizer.h"

namespace shingled::dedup::internal {
namespace {

std::vector<TokenHashKernel> Kernels() {
  std::vector<TokenHashKernel> kernels = {&HashTokensScalar};
  if (CpuHasAvx512DqVl()) kernels.push_back(&HashTokensAvx512);
  return kernels;
}

// Tokens laid out as the Sketcher lays them out: each followed by a space, padding around.
struct Block {
  std::string storage;
  std::vector<uint32_t> offsets, lengths;
  explicit Block(const std::vector<std::string>& tokens) : storage(kTokenHashPadding, '\0') {
    for (const std::string& t : tokens) {
      offsets.push_back(static_cast<uint32_t>(storage.size()));
      lengths.push_back(static_cast<uint32_t>(t.size()));
      (storage += t) += ' ';
    }
    storage.append(kTokenHashPadding, '\0');
  }
};

// Every length a token can have, for several seeds and every count of tokens in the last group
// of 8: each kernel gives the library's value.
TEST(TokenHashTest, EveryKernelEqualsXxh3ForEveryLength) {
  std::mt19937_64 rng(7);
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{0x8000000000000000},
                        uint64_t{0x5348494e474c4544}, uint64_t{rng()}}) {
    const TokenHashConstants c = MakeTokenHashConstants(seed);
    std::vector<std::string> tokens;
    for (size_t len = 1; len <= kMaxTokenBytes; ++len) {
      for (int copy = 0; copy < 3; ++copy) {
        std::string t(len, ' ');
        for (char& ch : t) ch = static_cast<char>(rng());  // any byte value, including 0 and ' '
        tokens.push_back(std::move(t));
      }
    }
    std::shuffle(tokens.begin(), tokens.end(), rng);
    for (size_t n : {tokens.size(), size_t{1}, size_t{7}, size_t{9}, size_t{128}}) {
      const std::vector<std::string> part(tokens.begin(), tokens.begin() + static_cast<long>(n));
      const Block block(part);
      for (TokenHashKernel kernel : Kernels()) {
        std::vector<uint64_t> out(n + 1, 0x1234);
        kernel(c, block.storage.data(), block.offsets.data(), block.lengths.data(), n, out.data());
        for (size_t k = 0; k < n; ++k) {
          ASSERT_EQ(out[k], XXH3_64bits_withSeed(part[k].data(), part[k].size(), seed))
              << "length " << part[k].size() << " seed " << seed;
        }
        EXPECT_EQ(out[n], 0x1234u) << "wrote past the last token";
      }
    }
  }
}

}  // namespace
}  // namespace shingled::dedup::internal
