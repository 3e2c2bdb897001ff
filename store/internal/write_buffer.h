// The write buffer of the posting indexes (FORMAT.md, "The write buffer"). The value space is cut
// into kBufferSlices slices by the top bits of a value; meta keeps one watermark per slice, the
// last document whose postings of that slice are in the B-trees. The postings of the documents
// above their slice's watermark are held here, in memory, and nowhere else: a document's
// postings are a function of its record, so `documents` is their log, and a store opened
// anywhere rebuilds the buffer from the documents above the lowest watermark. Each commit puts
// the buffered postings of one slice (and the batch's) into the B-trees and raises its
// watermark, so that a commit's inserts land on a slice of the leaves instead of all of them.
// Private to store/.
#ifndef SHINGLED_STORE_INTERNAL_WRITE_BUFFER_H_
#define SHINGLED_STORE_INTERNAL_WRITE_BUFFER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/status.h"
#include "store/internal/schema.h"
#include "store/types.h"

namespace shingled::store::internal {

inline constexpr int kBufferSliceBits = 4;
inline constexpr int kBufferSlices = 1 << kBufferSliceBits;
// The posting indexes, numbered as BatchPostings::Index.
inline constexpr int kBufferIndexes = 3;
inline constexpr int kBufferFeatures = 0, kBufferSupershingles = 1, kBufferSamples = 2;
inline int BufferSlice(uint64_t value) {
  return static_cast<int>(value >> (64 - kBufferSliceBits));
}

// meta: 16 watermarks (8 bytes LE each, slice 0 first), and the slice the next commit puts.
// (Format 4 had 8 slices, by the top 3 bits; opening one refines each into two.)
inline constexpr char kBufferWatermarksKey[] = "buffer.watermarks";
inline constexpr char kBufferNextSliceKey[] = "buffer.next_slice";

struct Watermarks {
  std::array<DocId, kBufferSlices> doc{};
  uint64_t next_slice = 0;  // < kBufferSlices
  friend bool operator==(const Watermarks&, const Watermarks&) = default;
  DocId lowest() const;
};
// DataLoss when either entry is missing or not of its size, or next_slice is out of range.
Status ReadWatermarks(TxnOps& ops, Watermarks* out);
// A format-4 store's 8 watermarks, of slices by the top 3 bits, as this format's: each slice is
// two of 16, whose postings in the B-trees are those at or below the old slice's watermark.
Status ReadFormat4Watermarks(TxnOps& ops, Watermarks* out);
Status WriteWatermarks(TxnOps& ops, const Watermarks& marks);

using BufferEntry = std::pair<uint64_t, DocId>;  // (value, document)

// The buffered postings of one slice of one index, sorted by (value, document); immutable.
class BufferPart {
 public:
  BufferPart() = default;
  explicit BufferPart(std::vector<BufferEntry> sorted);

  // Appends to `*out` the documents of `value`, ascending, at most `max`; `*count` is the
  // number appended, `*more` whether others follow.
  void Read(uint64_t value, size_t max, std::vector<DocId>* out, size_t* count, bool* more) const;
  const std::vector<BufferEntry>& entries() const { return entries_; }

 private:
  std::vector<BufferEntry> entries_;
  // dir_[k]: the first entry whose value's bits below the slice's, top `bits_` of them, are >= k.
  std::vector<uint32_t> dir_;
  int bits_ = 0;
};

// The buffer as of one transaction: its watermarks and the postings above them.
struct WriteBuffer {
  WriteBuffer();  // every part empty

  Watermarks marks;
  std::array<std::array<std::shared_ptr<const BufferPart>, kBufferSlices>, kBufferIndexes> parts;

  // As BufferPart::Read, from the part of `value`'s slice in `index`.
  void Read(int index, uint64_t value, size_t max, std::vector<DocId>* out, size_t* count,
            bool* more) const {
    parts[index][BufferSlice(value)]->Read(value, max, out, count, more);
  }
  size_t postings() const;
};

// The buffer of the transaction `ops`, from its watermarks and its documents above the lowest.
StatusOr<std::shared_ptr<const WriteBuffer>> BuildWriteBuffer(TxnOps& ops);

// The postings a batch files, sorted by (value, document), per index.
using BatchEntries = std::array<std::vector<BufferEntry>, kBufferIndexes>;

// What a commit does with `base` (the buffer its transaction began with) and its batch's postings
// `batch`, which name documents up to `last_doc`: `*put` receives, per index and sorted, the
// postings to put into the B-trees (the buffered and new ones of the slice due, or of every slice
// when `all_slices`), and the result is the buffer after the commit, whose watermarks go to meta.
std::shared_ptr<const WriteBuffer> AdvanceWriteBuffer(const WriteBuffer& base, BatchEntries batch,
                                                      DocId last_doc, bool all_slices,
                                                      BatchEntries* put);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_WRITE_BUFFER_H_
