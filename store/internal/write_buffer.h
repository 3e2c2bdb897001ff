// The write buffer of the posting indexes (FORMAT.md, "The write buffer"). The value space is cut
// into kBufferSlices slices by the top bits of a value; meta keeps one watermark per slice, the
// last document whose postings of that slice are in the B-trees. The postings of the documents
// above their slice's watermark are held here, in memory, and nowhere else: a document's
// postings are a function of its record, so `documents` is their log, and a store opened
// anywhere rebuilds the buffer from the documents above the lowest watermark. Each commit puts
// the buffered postings of one slice (and the batch's) into the B-trees and raises its
// watermark, so that a commit's inserts land on a slice of the leaves instead of all of them.
// The exact fingerprint indexes (`fp_identical`, `fp_lexical`, `fp_shingle`) are buffered the same
// way, with watermarks of their own: a document's fingerprints are in its record, and two flag
// bits there say which of its lexical and shingle fingerprints it owns (the indexes map each
// fingerprint to its first document).
// The file-chunk graph's `chunk_docs` (format 11) is buffered the same way too, with watermarks of
// its own and slices by the top 4 bits of a chunk's hash: a document's chunk postings are a
// function of its `doc_chunks` record, which is their log.
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
#include "dedup/sketch.h"
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

// The same for the fingerprint indexes (format 6), whose slices are by the top 4 bits of a
// fingerprint's `high` half.
inline constexpr char kFingerprintWatermarksKey[] = "fp_buffer.watermarks";
inline constexpr char kFingerprintNextSliceKey[] = "fp_buffer.next_slice";

// The same for `chunk_docs` (format 11), whose slices are by the top 4 bits of a chunk's hash.
inline constexpr char kChunkWatermarksKey[] = "chunk_buffer.watermarks";
inline constexpr char kChunkNextSliceKey[] = "chunk_buffer.next_slice";

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
// The fingerprint indexes' watermarks (kFingerprintWatermarksKey), as the above.
Status ReadFingerprintWatermarks(TxnOps& ops, Watermarks* out);
Status WriteFingerprintWatermarks(TxnOps& ops, const Watermarks& marks);
// The chunk index's watermarks (kChunkWatermarksKey), as the above.
Status ReadChunkWatermarks(TxnOps& ops, Watermarks* out);
Status WriteChunkWatermarks(TxnOps& ops, const Watermarks& marks);

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

// The fingerprint indexes, numbered as the document record's fingerprints.
inline constexpr int kFingerprintIndexes = 3;
inline constexpr int kFpIdentical = 0, kFpLexical = 1, kFpShingle = 2;
inline int FingerprintSlice(const dedup::Fingerprint128& fp) { return BufferSlice(fp.high); }

// One entry of a fingerprint index: the fingerprint and the document it maps to.
struct FingerprintEntry {
  dedup::Fingerprint128 fp;
  DocId doc = 0;
  // The order of the B-tree's keys (high, then low; FORMAT.md, "Conventions").
  friend bool operator<(const FingerprintEntry& a, const FingerprintEntry& b) {
    if (a.fp.high != b.fp.high) return a.fp.high < b.fp.high;
    if (a.fp.low != b.fp.low) return a.fp.low < b.fp.low;
    return a.doc < b.doc;
  }
  friend bool operator==(const FingerprintEntry&, const FingerprintEntry&) = default;
};

// The buffered entries of one slice of one fingerprint index, sorted; immutable. A fingerprint
// has one entry at most (its owner).
class FingerprintPart {
 public:
  FingerprintPart() = default;
  explicit FingerprintPart(std::vector<FingerprintEntry> sorted) : entries_(std::move(sorted)) {}

  // The document `fp` maps to, or 0.
  DocId Find(const dedup::Fingerprint128& fp) const;
  const std::vector<FingerprintEntry>& entries() const { return entries_; }

 private:
  std::vector<FingerprintEntry> entries_;
};

// The buffer as of one transaction: its watermarks and the postings above them, and the same
// for the fingerprint indexes and for `chunk_docs`.
struct WriteBuffer {
  WriteBuffer();  // every part empty

  Watermarks marks;
  std::array<std::array<std::shared_ptr<const BufferPart>, kBufferSlices>, kBufferIndexes> parts;
  Watermarks fp_marks;
  std::array<std::array<std::shared_ptr<const FingerprintPart>, kBufferSlices>, kFingerprintIndexes>
      fp_parts;
  Watermarks chunk_marks;
  std::array<std::shared_ptr<const BufferPart>, kBufferSlices> chunk_parts;

  // As BufferPart::Read, from the part of `value`'s slice in `index`.
  void Read(int index, uint64_t value, size_t max, std::vector<DocId>* out, size_t* count,
            bool* more) const {
    parts[index][BufferSlice(value)]->Read(value, max, out, count, more);
  }
  // The document `fp` maps to in the buffered part of fingerprint index `index`, or 0.
  DocId FindFingerprint(int index, const dedup::Fingerprint128& fp) const {
    return fp_parts[index][FingerprintSlice(fp)]->Find(fp);
  }
  // As BufferPart::Read, the documents of chunk `hash` in the buffered part of `chunk_docs`.
  void ReadChunk(uint64_t hash, size_t max, std::vector<DocId>* out, size_t* count,
                 bool* more) const {
    chunk_parts[BufferSlice(hash)]->Read(hash, max, out, count, more);
  }
  size_t postings() const;
  size_t fingerprints() const;
  size_t chunk_postings() const;
};

// The buffer of the transaction `ops`, from its watermarks, its documents above the lowest (of
// the posting and fingerprint sets) and its `doc_chunks` records above the lowest chunk watermark.
StatusOr<std::shared_ptr<const WriteBuffer>> BuildWriteBuffer(TxnOps& ops);
// The same with the watermarks given (check's, which stand in for damaged ones).
StatusOr<std::shared_ptr<const WriteBuffer>> BuildWriteBuffer(TxnOps& ops, const Watermarks& marks,
                                                              const Watermarks& fp_marks,
                                                              const Watermarks& chunk_marks);

// The postings a batch files, sorted by (value, document), per index.
using BatchEntries = std::array<std::vector<BufferEntry>, kBufferIndexes>;
// The fingerprint entries a batch makes, any order, per fingerprint index.
using BatchFingerprints = std::array<std::vector<FingerprintEntry>, kFingerprintIndexes>;

// What a commit does with `base` (the buffer its transaction began with) and its batch's postings
// `batch` and fingerprint entries `fps`, which name documents up to `last_doc`: `*put` and
// `*fp_put` receive, per index and sorted, what to put into the B-trees (the buffered and new
// entries of the slice due, or of every slice when `all_slices`; postings and fingerprints each
// have their own slice due), and the result is the buffer after the commit, whose watermarks go
// to meta. The chunk index's parts and watermarks are carried over as they are
// (AdvanceChunkBuffer).
std::shared_ptr<const WriteBuffer> AdvanceWriteBuffer(const WriteBuffer& base, BatchEntries batch,
                                                      BatchFingerprints fps, DocId last_doc,
                                                      bool all_slices, BatchEntries* put,
                                                      BatchFingerprints* fp_put);

// The chunk index's step of a commit: `buffer` (the result of AdvanceWriteBuffer) with its chunk
// parts advanced by the batch's postings `batch` (documents up to `last_doc`) as AdvanceWriteBuffer
// advances the other indexes; `*put` receives, sorted, what to put into `chunk_docs`.
std::shared_ptr<const WriteBuffer> AdvanceChunkBuffer(const WriteBuffer& buffer,
                                                      std::vector<BufferEntry> batch,
                                                      DocId last_doc, bool all_slices,
                                                      std::vector<BufferEntry>* put);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_WRITE_BUFFER_H_
