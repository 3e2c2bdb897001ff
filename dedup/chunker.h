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
#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"

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

  // InvalidArgument naming the first field out of range: 16 <= min_size < max_size <= 1 MiB,
  // 2 <= backup_divisor < main_divisor <= max_size, input one of ChunkInput's values. The sizes
  // are checked even when input is kNone, since they are recorded all the same.
  Status Validate() const;
};

// One chunk: a 64-bit hash of its bytes, and its length in bytes. Chunks tile their input in order,
// so a chunk's offset is the sum of the lengths before it.
struct Chunk {
  uint64_t hash = 0;
  uint32_t length = 0;
  friend bool operator==(const Chunk&, const Chunk&) = default;
};

// --- The chunker ---
//
// The rolling fingerprint is FastCDC's gear hash (Xia et al. 2016): h = (h << 1) + G[byte], with G
// 256 64-bit values drawn once from SplitMix64 with a fixed seed (dedup/internal/gear.h, baked
// into every chunk like the ChunkParams). It was chosen over a Rabin window (dedup/rabin.h) for
// speed: one shift, one add and one table load per byte and no byte leaving the window to undo,
// since each shift pushes the oldest byte's contribution out of the 64-bit word by itself; the
// fingerprint after a byte depends on the last 64 bytes only (the window). The fingerprint is
// restarted at each chunk's start, so a chunk's boundaries depend on its own bytes only, and the
// first min_size - 64 bytes of a chunk need not be hashed at all (the skip FastCDC calls cut-point
// skipping): they cannot sway a test made at min_size or later.
//
// "0 modulo D" is read on the high bits, where a gear hash is well mixed (its low bit depends on
// one byte only): a byte is a main boundary when h < floor((2^64 - 1) / D), which a uniform h meets
// with probability 1/D; a backup boundary when h < floor((2^64 - 1) / D'). As D' < D, every main
// boundary is also a backup one, as with D' dividing D in the modulo form.
//
// The chunk hash is the 64-bit XXH3 (seed 0) of the chunk's bytes: ChunkHash below.
//
// Default thresholds (SketchParams::chunking): Eshghi and Tang's 460/2800/540/270 (about 1 KB on
// average) halved, 230/1400/270/135 (about 490 bytes), after measuring both on the canonical text
// of the Debian documentation: the smaller chunks find a shared run of 1.2 KB 73% of the time
// instead of 21%, for twice the chunks (docs/notes/performance-studies.md, "Chunking").

// The 64-bit hash a Chunk carries for `bytes`.
uint64_t ChunkHash(std::string_view bytes);

// Cuts a stream of bytes into TTTD chunks. Feed() the bytes in pieces of any size (the chunks do
// not depend on how the stream is split), then Finish(). It holds the bytes of the chunk in
// progress, at most max_size, in a buffer allocated once; nothing else grows with the input.
// Reusable: Finish() resets it. Not safe for concurrent use.
class Chunker {
 public:
  // REQUIRES: params.Validate() is ok. params.input is not looked at: the caller picks the bytes.
  explicit Chunker(const ChunkParams& params);
  ~Chunker();
  Chunker(const Chunker&) = delete;
  Chunker& operator=(const Chunker&) = delete;

  // Appends to *out the chunks that end within `bytes`, in order.
  void Feed(std::string_view bytes, std::vector<Chunk>* out);

  // Appends the last chunk (the bytes after the last boundary, shorter than min_size possibly;
  // none when there are none) and resets for a new stream.
  void Finish(std::vector<Chunk>* out);

  // Bytes of the chunk in progress.
  uint32_t pending_bytes() const { return len_; }

 private:
  struct Cut;
  // Scans p[0..n) as the continuation of the chunk in progress (len_ bytes so far).
  Cut Scan(const unsigned char* p, size_t n);
  // The chunk buf_[0..len) ends; the bytes buf_[len..len_) start the next one and are scanned
  // again (after a backup cut).
  void CutBuffered(uint32_t len, std::vector<Chunk>* out);
  void StartChunk();

  const uint32_t min_size_;
  const uint32_t max_size_;
  const uint64_t main_threshold_;
  const uint64_t backup_threshold_;
  // Where hashing starts in a chunk: min_size - 64, or 0.
  const uint32_t hash_from_;
  std::unique_ptr<unsigned char[]> buf_;  // max_size bytes
  uint32_t len_ = 0;                      // bytes of the chunk in progress (in buf_)
  uint64_t hash_ = 0;                     // the gear fingerprint after them
  uint32_t backup_ = 0;                   // chunk length at the last backup boundary; 0: none
};

// All the chunks of `bytes` at once.
std::vector<Chunk> ChunkBytes(const ChunkParams& params, std::string_view bytes);

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_CHUNKER_H_
