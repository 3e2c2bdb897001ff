// Content-defined chunks (paper 003, Forman, Eshghi and Chiocchetti; TTTD from Eshghi and Tang):
// a page's text cut where a rolling fingerprint of the last few bytes hits a divisor, so that an
// edit moves only the boundaries near it and two documents sharing a run of text longer than the
// average chunk share whole chunks. Each chunk is kept as a hash of its bytes and its length; the
// sum of the lengths of the chunks two documents share is a lower bound of the bytes they have in
// common.
//
// This header is the contract between the chunker (dedup/chunker.cc), the sketch (Sketch::chunks)
// and the store (the file-chunk graph, store/FORMAT.md). Every field of ChunkParams is baked into
// stored chunks: the store records them and refuses to open with others.
#ifndef SHINGLED_DEDUP_CHUNKER_H_
#define SHINGLED_DEDUP_CHUNKER_H_

#include <cstdint>

namespace shingled::dedup {

// What is chunked.
enum class ChunkInput : uint8_t {
  kNone = 0,           // chunking off: Sketch::chunks stays empty
  kCanonicalText = 1,  // the canonical tokens, each followed by one space (the default)
  kRawBytes = 2,       // the page's bytes as received
};

// TTTD's two thresholds and two divisors. A boundary is declared after a byte where the rolling
// fingerprint is 0 modulo the main divisor, once the chunk has min_size bytes; failing that, the
// last position where it was 0 modulo the backup divisor is used when the chunk reaches max_size;
// failing both, the chunk is cut at max_size.
struct ChunkParams {
  ChunkInput input = ChunkInput::kCanonicalText;
  uint32_t min_size = 0;        // TTTD's T_min
  uint32_t max_size = 0;        // TTTD's T_max
  uint32_t main_divisor = 0;    // TTTD's D
  uint32_t backup_divisor = 0;  // TTTD's D'; smaller than main_divisor
  friend bool operator==(const ChunkParams&, const ChunkParams&) = default;
};

// One chunk: a 64-bit hash of its bytes, and its length in bytes. Chunks tile their input in order,
// so a chunk's offset is the sum of the lengths before it.
struct Chunk {
  uint64_t hash = 0;
  uint32_t length = 0;
  friend bool operator==(const Chunk&, const Chunk&) = default;
};

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_CHUNKER_H_
