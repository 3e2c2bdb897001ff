// Content-defined chunks of a test text, for the tests of the file-chunk graph before
// the TTTD chunker (dedup/chunker.h, engineer A's) fills Sketch::chunks: a Gear rolling hash
// (FastCDC's) over the bytes, cut where its top bits are zero once a chunk has kMinChunk bytes,
// or at kMaxChunk; each chunk hashed whole (FNV-1a 64). Like TTTD, a boundary depends only on the
// 64 bytes before it and the chunk's start, so two texts sharing a run longer than a few chunks
// share the chunks inside it. Also random text built from known runs.
#ifndef SHINGLED_TESTS_STORE_CHUNK_TEXT_H_
#define SHINGLED_TESTS_STORE_CHUNK_TEXT_H_

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/chunker.h"

namespace shingled::store::testing {

inline constexpr uint32_t kMinChunk = 64;
inline constexpr uint32_t kMaxChunk = 1024;
// A cut where the hash's top 8 bits are zero: one position in 256 past kMinChunk, so chunks of
// ~64 + 256 = 320 bytes on average.
inline constexpr uint64_t kCutMask = uint64_t{0xff} << 56;

inline std::vector<dedup::Chunk> ChunkText(std::string_view text) {
  static const std::array<uint64_t, 256> gear = [] {
    std::array<uint64_t, 256> g{};
    std::mt19937_64 rng(0x6ea7);
    for (uint64_t& v : g) v = rng();
    return g;
  }();
  std::vector<dedup::Chunk> out;
  size_t start = 0;
  uint64_t h = 0;
  auto emit = [&](size_t end) {
    uint64_t fnv = 0xcbf29ce484222325ull;
    for (size_t i = start; i < end; ++i) {
      fnv ^= static_cast<uint8_t>(text[i]);
      fnv *= 0x100000001b3ull;
    }
    out.push_back(dedup::Chunk{fnv, static_cast<uint32_t>(end - start)});
    start = end;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    h = (h << 1) + gear[static_cast<uint8_t>(text[i])];
    const size_t length = i + 1 - start;
    if ((length >= kMinChunk && (h & kCutMask) == 0) || length >= kMaxChunk) emit(i + 1);
  }
  if (start < text.size()) emit(text.size());
  return out;
}

// `n` bytes of random words (lower-case letters and spaces) from `rng`.
inline std::string RandomText(std::mt19937_64& rng, size_t n) {
  std::string s;
  s.reserve(n);
  while (s.size() < n) {
    const size_t word = 1 + rng() % 9;
    for (size_t i = 0; i < word && s.size() < n; ++i)
      s.push_back(static_cast<char>('a' + rng() % 26));
    if (s.size() < n) s.push_back(' ');
  }
  return s;
}

}  // namespace shingled::store::testing

#endif  // SHINGLED_TESTS_STORE_CHUNK_TEXT_H_
