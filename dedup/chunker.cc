#include "dedup/chunker.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "dedup/internal/gear.h"

namespace shingled::dedup {
namespace {

using internal::kGear;
using internal::kGearWindow;

constexpr uint32_t kMaxChunkSize = uint32_t{1} << 20;

}  // namespace

Status ChunkParams::Validate() const {
  auto bad = [](const char* field, uint32_t value, const char* range) {
    std::string message = "chunking.";
    message.append(field).append(" = ").append(std::to_string(value));
    message.append(" is out of range (").append(range).append(")");
    return InvalidArgumentError(message);
  };
  if (input != ChunkInput::kNone && input != ChunkInput::kCanonicalText &&
      input != ChunkInput::kRawBytes) {
    return bad("input", static_cast<uint32_t>(input), "0 none, 1 canonical text, 2 raw bytes");
  }
  if (min_size < 16 || min_size >= kMaxChunkSize) {
    return bad("min_size", min_size, "16..max_size - 1");
  }
  if (max_size <= min_size || max_size > kMaxChunkSize) {
    return bad("max_size", max_size, "min_size + 1..1048576");
  }
  if (main_divisor < 3 || main_divisor > max_size) {
    return bad("main_divisor", main_divisor, "backup_divisor + 1..max_size");
  }
  if (backup_divisor < 2 || backup_divisor >= main_divisor) {
    return bad("backup_divisor", backup_divisor, "2..main_divisor - 1");
  }
  return OkStatus();
}

uint64_t ChunkHash(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

namespace {

Chunk MakeChunk(const unsigned char* p, uint32_t len) { return Chunk{XXH3_64bits(p, len), len}; }

}  // namespace

// How a Scan ended: `consumed` bytes were read; when `cut`, the chunk ends after cut_len bytes
// (which may be fewer than were read: a backup cut at max_size).
struct Chunker::Cut {
  size_t consumed = 0;
  uint32_t cut_len = 0;
  bool cut = false;
};

Chunker::Chunker(const ChunkParams& params)
    : min_size_(params.min_size),
      max_size_(params.max_size),
      main_threshold_(~uint64_t{0} / params.main_divisor),
      backup_threshold_(~uint64_t{0} / params.backup_divisor),
      hash_from_(params.min_size > kGearWindow ? params.min_size - kGearWindow : 0),
      buf_(new unsigned char[params.max_size]) {}

Chunker::~Chunker() = default;

void Chunker::StartChunk() {
  len_ = 0;
  hash_ = 0;
  backup_ = 0;
}

Chunker::Cut Chunker::Scan(const unsigned char* p, size_t n) {
  const uint32_t len0 = len_;
  // Byte i makes the chunk len0 + i + 1 bytes long. Bytes before hash_from_ cannot reach the
  // fingerprint at min_size or later: skipped. Then hashed without a test until the chunk has
  // min_size - 1 bytes; then tested, up to max_size.
  size_t i = len0 < hash_from_ ? std::min<size_t>(n, hash_from_ - len0) : 0;
  const size_t untested = len0 + 1 < min_size_ ? std::min<size_t>(n, min_size_ - 1 - len0) : 0;
  uint64_t h = hash_;
  for (; i < untested; ++i) h = (h << 1) + kGear[p[i]];
  const size_t end = std::min<size_t>(n, max_size_ - len0);
  uint32_t backup = backup_;
  for (; i < end; ++i) {
    h = (h << 1) + kGear[p[i]];
    if (h < backup_threshold_) [[unlikely]] {
      const uint32_t len = len0 + static_cast<uint32_t>(i) + 1;
      if (h < main_threshold_) {
        hash_ = h;
        backup_ = backup;
        len_ = len;
        return Cut{i + 1, len, true};
      }
      backup = len;
    }
  }
  hash_ = h;
  backup_ = backup;
  len_ = len0 + static_cast<uint32_t>(end);
  if (len_ == max_size_) return Cut{end, backup != 0 ? backup : max_size_, true};
  return Cut{end, 0, false};
}

void Chunker::CutBuffered(uint32_t len, std::vector<Chunk>* out) {
  out->push_back(MakeChunk(buf_.get(), len));
  uint32_t rest = len_ - len;
  std::memmove(buf_.get(), buf_.get() + len, rest);
  StartChunk();
  // The rest is shorter than max_size: only main boundaries can fall in it.
  uint32_t start = 0;
  while (rest > 0) {
    const Cut cut = Scan(buf_.get() + start, rest);
    if (!cut.cut) {
      std::memmove(buf_.get(), buf_.get() + start, rest);
      return;
    }
    out->push_back(MakeChunk(buf_.get() + start, cut.cut_len));
    start += cut.cut_len;
    rest -= cut.cut_len;
    StartChunk();
  }
}

// A chunk that lies within one Feed() is hashed where it is, without a copy. The bytes are kept
// rather than fed to an XXH3 streaming state as they come because a backup cut at max_size gives
// the bytes read past the backup boundary to the next chunk, to be scanned and hashed again.
void Chunker::Feed(std::string_view bytes, std::vector<Chunk>* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  while (n > 0) {
    const uint32_t buffered = len_;
    const Cut cut = Scan(p, n);
    if (!cut.cut) {
      std::memcpy(buf_.get() + buffered, p, n);
      return;
    }
    if (buffered == 0) {
      // The whole chunk is in the caller's bytes: hashed in place. After a backup cut, the bytes
      // read past it are scanned again as the start of the next chunk.
      out->push_back(MakeChunk(p, cut.cut_len));
      p += cut.cut_len;
      n -= cut.cut_len;
      StartChunk();
    } else if (cut.cut_len >= buffered) {
      const uint32_t taken = cut.cut_len - buffered;
      std::memcpy(buf_.get() + buffered, p, taken);
      out->push_back(MakeChunk(buf_.get(), cut.cut_len));
      p += taken;
      n -= taken;
      StartChunk();
    } else {
      // A backup cut within the buffered bytes: the caller's bytes are all read again.
      len_ = buffered;
      CutBuffered(cut.cut_len, out);
    }
  }
}

void Chunker::Finish(std::vector<Chunk>* out) {
  if (len_ > 0) out->push_back(MakeChunk(buf_.get(), len_));
  StartChunk();
}

std::vector<Chunk> ChunkBytes(const ChunkParams& params, std::string_view bytes) {
  Chunker chunker(params);
  std::vector<Chunk> chunks;
  chunker.Feed(bytes, &chunks);
  chunker.Finish(&chunks);
  return chunks;
}

}  // namespace shingled::dedup
