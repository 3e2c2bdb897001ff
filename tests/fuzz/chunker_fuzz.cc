// Fuzzes the TTTD chunker (dedup/chunker.h).
//
// Input: 4 bytes that pick the parameters (min_size, max_size, divisors: small, so that every
// rule fires on short inputs), 1 byte that sets the piece size, then the bytes to chunk. Besides
// crashes and sanitizer reports, it checks what holds for every input: the chunks tile the bytes
// (lengths sum to the input, each hash is ChunkHash of its slice), every chunk but the last is
// within [min_size, max_size], and feeding the bytes in pieces gives the same chunks as at once.
//
//   build-fuzz/tests/fuzz/chunker_fuzz -max_total_time=120 -max_len=65536
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "dedup/chunker.h"

using shingled::dedup::Chunk;
using shingled::dedup::ChunkBytes;
using shingled::dedup::Chunker;
using shingled::dedup::ChunkHash;
using shingled::dedup::ChunkInput;
using shingled::dedup::ChunkParams;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  ChunkParams params;
  params.input = ChunkInput::kRawBytes;
  params.min_size = 16 + data[0] % 64;
  params.max_size = params.min_size + 1 + data[1] % 200;
  params.main_divisor = 3 + data[2] % (params.max_size - 2);
  params.backup_divisor = 2 + data[3] % (params.main_divisor - 2);
  if (!params.Validate().ok()) abort();
  const size_t piece = 1 + data[4] % 97;
  const std::string_view input(reinterpret_cast<const char*>(data + 5), size - 5);

  const std::vector<Chunk> whole = ChunkBytes(params, input);
  size_t offset = 0;
  for (size_t i = 0; i < whole.size(); ++i) {
    const Chunk& c = whole[i];
    if (c.length == 0 || c.length > params.max_size) abort();
    if (i + 1 < whole.size() && c.length < params.min_size) abort();
    if (c.hash != ChunkHash(input.substr(offset, c.length))) abort();
    offset += c.length;
  }
  if (offset != input.size()) abort();

  Chunker chunker(params);
  std::vector<Chunk> pieces;
  for (size_t at = 0; at < input.size(); at += piece)
    chunker.Feed(input.substr(at, piece), &pieces);
  chunker.Finish(&pieces);
  if (pieces != whole) abort();
  return 0;
}
