#include "store/internal/write_buffer.h"

#include <algorithm>
#include <bit>
#include <boost/sort/spreadsort/integer_sort.hpp>
#include <iterator>
#include <string>

#include "store/internal/codec.h"
#include "store/internal/lmdb.h"

namespace shingled::store::internal {
namespace {

// The bits of a value below its slice's, as an unsigned number of `bits` bits.
uint64_t DirectoryKey(uint64_t value, int bits) {
  return bits == 0 ? 0 : (value << kBufferSliceBits) >> (64 - bits);
}

void SortEntries(std::vector<BufferEntry>* entries) {
  boost::sort::spreadsort::integer_sort(
      entries->begin(), entries->end(),
      [](const BufferEntry& e, unsigned shift) { return e.first >> shift; },
      [](const BufferEntry& a, const BufferEntry& b) { return a < b; });
}
void SortEntries(std::vector<FingerprintEntry>* entries) {
  std::sort(entries->begin(), entries->end());
}
int SliceOf(const BufferEntry& e) { return BufferSlice(e.first); }
int SliceOf(const FingerprintEntry& e) { return FingerprintSlice(e.fp); }

template <typename Part>
const std::shared_ptr<const Part>& EmptyPart() {
  static const auto* empty = new std::shared_ptr<const Part>(std::make_shared<Part>());
  return *empty;
}

// Reads watermarks stored for `stored` slices (a power of two up to kBufferSlices) under the
// meta keys `marks_key` and `next_key`: slice i is part of stored slice i / (kBufferSlices /
// stored).
Status ReadStoredWatermarks(TxnOps& ops, int stored, const std::string& marks_key,
                            const std::string& next_key, Watermarks* out) {
  std::string_view v;
  Status s = ops.Get(ops.dbis().meta, marks_key, &v, "meta " + marks_key);
  if (s.code() == StatusCode::kNotFound) return DataLossError("meta lacks " + marks_key);
  SHINGLED_RETURN_IF_ERROR(s);
  if (v.size() != 8 * static_cast<size_t>(stored)) {
    return DataLossError("meta " + marks_key + " is " + std::to_string(v.size()) + " bytes, not " +
                         std::to_string(8 * stored));
  }
  const int refine = kBufferSlices / stored;
  for (int i = 0; i < kBufferSlices; ++i) out->doc[i] = GetLE64(v.data() + 8 * (i / refine));
  s = ops.Get(ops.dbis().meta, next_key, &v, "meta " + next_key);
  if (s.code() == StatusCode::kNotFound) return DataLossError("meta lacks " + next_key);
  SHINGLED_RETURN_IF_ERROR(s);
  if (v.size() != 8) return DataLossError("meta " + next_key + " is not 8 bytes");
  const uint64_t next = GetLE64(v.data());
  if (next >= static_cast<uint64_t>(stored)) {
    return DataLossError("meta " + next_key + " is " + std::to_string(next) + ", not below " +
                         std::to_string(stored));
  }
  out->next_slice = next * refine;
  return OkStatus();
}

Status WriteStoredWatermarks(TxnOps& ops, const char* marks_key, const char* next_key,
                             const Watermarks& marks) {
  std::string v;
  for (DocId d : marks.doc) AppendLE64(&v, d);
  SHINGLED_RETURN_IF_ERROR(ops.Put(ops.dbis().meta, marks_key, v, 0, "meta"));
  v.clear();
  AppendLE64(&v, marks.next_slice);
  return ops.Put(ops.dbis().meta, next_key, v, 0, "meta");
}

// Sorts each slice's entries of `entries`, drops repeats and makes them the parts of `*parts`.
template <typename Entry, typename Part>
void MakeParts(std::array<std::vector<Entry>, kBufferSlices>* entries,
               std::array<std::shared_ptr<const Part>, kBufferSlices>* parts) {
  for (int s = 0; s < kBufferSlices; ++s) {
    std::vector<Entry>& e = (*entries)[s];
    SortEntries(&e);
    e.erase(std::unique(e.begin(), e.end()), e.end());  // a value twice in one document's list
    if (!e.empty()) (*parts)[s] = std::make_shared<Part>(std::move(e));
  }
}

// One index's step of AdvanceWriteBuffer: `held_parts` the base's parts, `batch` the batch's
// entries (sorted here), `due` the slice due (every one when `all_slices`).
template <typename Entry, typename Part>
void AdvanceIndex(const std::array<std::shared_ptr<const Part>, kBufferSlices>& held_parts,
                  std::vector<Entry>* batch, int due, bool all_slices, std::vector<Entry>* put,
                  std::array<std::shared_ptr<const Part>, kBufferSlices>* next_parts) {
  std::vector<Entry>& entries = *batch;
  SortEntries(&entries);
  put->clear();
  // Slices are ranges of values: the batch's entries of slice s are one run of the sorted list.
  auto from = entries.begin();
  for (int s = 0; s < kBufferSlices; ++s) {
    auto to = std::find_if(from, entries.end(), [s](const Entry& e) { return SliceOf(e) != s; });
    const std::vector<Entry>& held = held_parts[s]->entries();
    if (all_slices || s == due) {
      // Buffered documents are below the batch's: the held entries of a value come first.
      std::merge(held.begin(), held.end(), from, to, std::back_inserter(*put));
      (*next_parts)[s] = EmptyPart<Part>();
    } else if (from == to) {
      (*next_parts)[s] = held_parts[s];
    } else {
      std::vector<Entry> merged;
      merged.reserve(held.size() + static_cast<size_t>(to - from));
      std::merge(held.begin(), held.end(), from, to, std::back_inserter(merged));
      (*next_parts)[s] = std::make_shared<Part>(std::move(merged));
    }
    from = to;
  }
}

// The watermarks after a commit that put the slice due (or every slice) up to `last_doc`.
Watermarks Advance(const Watermarks& base, DocId last_doc, bool all_slices) {
  Watermarks next = base;
  for (int s = 0; s < kBufferSlices; ++s) {
    if (all_slices || static_cast<uint64_t>(s) == base.next_slice) next.doc[s] = last_doc;
  }
  next.next_slice = (base.next_slice + 1) % kBufferSlices;
  return next;
}

}  // namespace

WriteBuffer::WriteBuffer() {
  for (auto& index : parts) index.fill(EmptyPart<BufferPart>());
  for (auto& index : fp_parts) index.fill(EmptyPart<FingerprintPart>());
  chunk_parts.fill(EmptyPart<BufferPart>());
}

DocId Watermarks::lowest() const { return *std::min_element(doc.begin(), doc.end()); }

Status ReadWatermarks(TxnOps& ops, Watermarks* out) {
  return ReadStoredWatermarks(ops, kBufferSlices, kBufferWatermarksKey, kBufferNextSliceKey, out);
}

Status ReadFormat4Watermarks(TxnOps& ops, Watermarks* out) {
  return ReadStoredWatermarks(ops, 8, kBufferWatermarksKey, kBufferNextSliceKey, out);
}

Status WriteWatermarks(TxnOps& ops, const Watermarks& marks) {
  return WriteStoredWatermarks(ops, kBufferWatermarksKey, kBufferNextSliceKey, marks);
}

Status ReadFingerprintWatermarks(TxnOps& ops, Watermarks* out) {
  return ReadStoredWatermarks(ops, kBufferSlices, kFingerprintWatermarksKey,
                              kFingerprintNextSliceKey, out);
}

Status WriteFingerprintWatermarks(TxnOps& ops, const Watermarks& marks) {
  return WriteStoredWatermarks(ops, kFingerprintWatermarksKey, kFingerprintNextSliceKey, marks);
}

Status ReadChunkWatermarks(TxnOps& ops, Watermarks* out) {
  return ReadStoredWatermarks(ops, kBufferSlices, kChunkWatermarksKey, kChunkNextSliceKey, out);
}

Status WriteChunkWatermarks(TxnOps& ops, const Watermarks& marks) {
  return WriteStoredWatermarks(ops, kChunkWatermarksKey, kChunkNextSliceKey, marks);
}

DocId FingerprintPart::Find(const dedup::Fingerprint128& fp) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), FingerprintEntry{fp, 0});
  return it != entries_.end() && it->fp == fp ? it->doc : 0;
}

BufferPart::BufferPart(std::vector<BufferEntry> sorted) : entries_(std::move(sorted)) {
  // About 4 entries per directory slot, at most one slot per 20-bit bucket of the slice.
  const size_t n = entries_.size();
  bits_ = n < 8 ? 0 : std::min(20 - kBufferSliceBits, static_cast<int>(std::bit_width(n / 4)) - 1);
  dir_.assign((size_t{1} << bits_) + 1, 0);
  size_t at = 0;
  for (size_t k = 0; k < dir_.size(); ++k) {
    while (at < n && DirectoryKey(entries_[at].first, bits_) < k) ++at;
    dir_[k] = static_cast<uint32_t>(at);
  }
  dir_.back() = static_cast<uint32_t>(n);
}

void BufferPart::Read(uint64_t value, size_t max, std::vector<DocId>* out, size_t* count,
                      bool* more) const {
  *count = 0;
  *more = false;
  if (entries_.empty()) return;
  const uint64_t k = DirectoryKey(value, bits_);
  auto first = entries_.begin() + dir_[k];
  auto last = entries_.begin() + dir_[k + 1];
  auto it = std::lower_bound(first, last, BufferEntry{value, 0});
  for (; it != last && it->first == value; ++it) {
    if (*count == max) {
      *more = true;
      return;
    }
    out->push_back(it->second);
    ++*count;
  }
}

size_t WriteBuffer::postings() const {
  size_t n = 0;
  for (const auto& index : parts) {
    for (const auto& part : index) n += part->entries().size();
  }
  return n;
}

size_t WriteBuffer::fingerprints() const {
  size_t n = 0;
  for (const auto& index : fp_parts) {
    for (const auto& part : index) n += part->entries().size();
  }
  return n;
}

size_t WriteBuffer::chunk_postings() const {
  size_t n = 0;
  for (const auto& part : chunk_parts) n += part->entries().size();
  return n;
}

StatusOr<std::shared_ptr<const WriteBuffer>> BuildWriteBuffer(TxnOps& ops) {
  Watermarks marks, fp_marks, chunk_marks;
  SHINGLED_RETURN_IF_ERROR(ReadWatermarks(ops, &marks));
  SHINGLED_RETURN_IF_ERROR(ReadFingerprintWatermarks(ops, &fp_marks));
  SHINGLED_RETURN_IF_ERROR(ReadChunkWatermarks(ops, &chunk_marks));
  return BuildWriteBuffer(ops, marks, fp_marks, chunk_marks);
}

namespace {

// The chunk parts of `*buffer`, from the `doc_chunks` records above its lowest chunk watermark.
Status BuildChunkParts(TxnOps& ops, WriteBuffer* buffer) {
  const Watermarks& marks = buffer->chunk_marks;
  std::array<std::vector<BufferEntry>, kBufferSlices> entries;
  Cursor c;
  if (int rc = c.Open(ops.txn(), ops.dbis().doc_chunks); rc != 0)
    return ops.Fail(rc, "doc_chunks cursor");
  const DocId lowest = marks.lowest();
  Key64 from(lowest + 1);
  MDB_val k = Val(from.view()), v;
  std::vector<dedup::Chunk> chunks;
  int rc = lowest == UINT64_MAX ? MDB_NOTFOUND : mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
  for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != 8)
      return DataLossError("doc_chunks has a key of " + std::to_string(k.mv_size) + " bytes");
    const DocId doc = GetBE64(static_cast<const char*>(k.mv_data));
    // As for `documents` above: a record that does not decode files nothing (check reports it).
    if (!DecodeDocChunks(View(v), &chunks).ok()) continue;
    for (const dedup::Chunk& chunk : chunks) {
      const int slice = BufferSlice(chunk.hash);
      if (doc > marks.doc[slice]) entries[slice].emplace_back(chunk.hash, doc);
    }
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "doc_chunks");
  MakeParts(&entries, &buffer->chunk_parts);  // (drops a chunk's repeats within a document)
  return OkStatus();
}

}  // namespace

StatusOr<std::shared_ptr<const WriteBuffer>> BuildWriteBuffer(TxnOps& ops,
                                                              const Watermarks& marks_in,
                                                              const Watermarks& fp_marks_in,
                                                              const Watermarks& chunk_marks_in) {
  auto buffer = std::make_shared<WriteBuffer>();
  buffer->marks = marks_in;
  buffer->fp_marks = fp_marks_in;
  buffer->chunk_marks = chunk_marks_in;
  SHINGLED_RETURN_IF_ERROR(BuildChunkParts(ops, buffer.get()));
  const Watermarks& marks = buffer->marks;
  const Watermarks& fp_marks = buffer->fp_marks;
  std::array<std::array<std::vector<BufferEntry>, kBufferSlices>, kBufferIndexes> entries;
  std::array<std::array<std::vector<FingerprintEntry>, kBufferSlices>, kFingerprintIndexes> fps;
  Cursor c;
  if (int rc = c.Open(ops.txn(), ops.dbis().documents); rc != 0)
    return ops.Fail(rc, "documents cursor");
  const DocId lowest = std::min(marks.lowest(), fp_marks.lowest());
  Key64 from(lowest + 1);
  MDB_val k = Val(from.view()), v;
  DocumentRecord rec;
  std::vector<uint64_t> sample;
  // (Check stands in UINT64_MAX for damaged watermarks: nothing is above them.)
  int rc = lowest == UINT64_MAX ? MDB_NOTFOUND : mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
  for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != 8)
      return DataLossError("documents has a key of " + std::to_string(k.mv_size) + " bytes");
    const DocId doc = GetBE64(static_cast<const char*>(k.mv_data));
    // A record that does not decode files nothing here: its postings are unknown (check reports
    // it), and failing would stop every query and batch over one damaged record.
    if (!DecodeDocumentInto(View(v), &rec).ok()) continue;
    // Every document owns its identical fingerprint (a page whose bytes are stored adds none).
    const std::pair<const dedup::Fingerprint128*, bool> owned[kFingerprintIndexes] = {
        {&rec.identical, true}, {&rec.lexical, rec.owns_lexical}, {&rec.shingle, rec.owns_shingle}};
    for (int i = 0; i < kFingerprintIndexes; ++i) {
      const int slice = FingerprintSlice(*owned[i].first);
      if (owned[i].second && doc > fp_marks.doc[slice])
        fps[i][slice].push_back(FingerprintEntry{*owned[i].first, doc});
    }
    if (!rec.has_sketch()) continue;
    IndexedSample(rec.sample.values, rec.sample.log2_modulus, &sample);
    const std::vector<uint64_t>* lists[kBufferIndexes] = {&rec.features, &rec.supershingles,
                                                          &sample};
    for (int i = 0; i < kBufferIndexes; ++i) {
      for (uint64_t value : *lists[i]) {
        const int slice = BufferSlice(value);
        if (doc > marks.doc[slice]) entries[i][slice].emplace_back(value, doc);
      }
    }
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "documents");
  for (int i = 0; i < kBufferIndexes; ++i) MakeParts(&entries[i], &buffer->parts[i]);
  for (int i = 0; i < kFingerprintIndexes; ++i) MakeParts(&fps[i], &buffer->fp_parts[i]);
  return std::shared_ptr<const WriteBuffer>(std::move(buffer));
}

std::shared_ptr<const WriteBuffer> AdvanceWriteBuffer(const WriteBuffer& base, BatchEntries batch,
                                                      BatchFingerprints fps, DocId last_doc,
                                                      bool all_slices, BatchEntries* put,
                                                      BatchFingerprints* fp_put) {
  auto next = std::make_shared<WriteBuffer>();
  for (int i = 0; i < kBufferIndexes; ++i) {
    AdvanceIndex(base.parts[i], &batch[i], static_cast<int>(base.marks.next_slice), all_slices,
                 &(*put)[i], &next->parts[i]);
  }
  for (int i = 0; i < kFingerprintIndexes; ++i) {
    AdvanceIndex(base.fp_parts[i], &fps[i], static_cast<int>(base.fp_marks.next_slice), all_slices,
                 &(*fp_put)[i], &next->fp_parts[i]);
  }
  next->marks = Advance(base.marks, last_doc, all_slices);
  next->fp_marks = Advance(base.fp_marks, last_doc, all_slices);
  next->chunk_marks = base.chunk_marks;
  next->chunk_parts = base.chunk_parts;
  return next;
}

std::shared_ptr<const WriteBuffer> AdvanceChunkBuffer(const WriteBuffer& buffer,
                                                      std::vector<BufferEntry> batch,
                                                      DocId last_doc, bool all_slices,
                                                      std::vector<BufferEntry>* put) {
  auto next = std::make_shared<WriteBuffer>(buffer);
  AdvanceIndex(buffer.chunk_parts, &batch, static_cast<int>(buffer.chunk_marks.next_slice),
               all_slices, put, &next->chunk_parts);
  next->chunk_marks = Advance(buffer.chunk_marks, last_doc, all_slices);
  return next;
}

}  // namespace shingled::store::internal
