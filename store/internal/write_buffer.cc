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

const std::shared_ptr<const BufferPart>& EmptyPart() {
  static const auto* empty = new std::shared_ptr<const BufferPart>(std::make_shared<BufferPart>());
  return *empty;
}

// Reads watermarks stored for `stored` slices (a power of two up to kBufferSlices): slice i is
// part of stored slice i / (kBufferSlices / stored).
Status ReadStoredWatermarks(TxnOps& ops, int stored, Watermarks* out) {
  std::string_view v;
  Status s = ops.Get(ops.dbis().meta, kBufferWatermarksKey, &v, "meta buffer.watermarks");
  if (s.code() == StatusCode::kNotFound) return DataLossError("meta lacks buffer.watermarks");
  SHINGLED_RETURN_IF_ERROR(s);
  if (v.size() != 8 * static_cast<size_t>(stored)) {
    return DataLossError("meta buffer.watermarks is " + std::to_string(v.size()) + " bytes, not " +
                         std::to_string(8 * stored));
  }
  const int refine = kBufferSlices / stored;
  for (int i = 0; i < kBufferSlices; ++i) out->doc[i] = GetLE64(v.data() + 8 * (i / refine));
  s = ops.Get(ops.dbis().meta, kBufferNextSliceKey, &v, "meta buffer.next_slice");
  if (s.code() == StatusCode::kNotFound) return DataLossError("meta lacks buffer.next_slice");
  SHINGLED_RETURN_IF_ERROR(s);
  if (v.size() != 8) return DataLossError("meta buffer.next_slice is not 8 bytes");
  const uint64_t next = GetLE64(v.data());
  if (next >= static_cast<uint64_t>(stored)) {
    return DataLossError("meta buffer.next_slice is " + std::to_string(next) + ", not below " +
                         std::to_string(stored));
  }
  out->next_slice = next * refine;
  return OkStatus();
}

}  // namespace

WriteBuffer::WriteBuffer() {
  for (auto& index : parts) index.fill(EmptyPart());
}

DocId Watermarks::lowest() const { return *std::min_element(doc.begin(), doc.end()); }

Status ReadWatermarks(TxnOps& ops, Watermarks* out) {
  return ReadStoredWatermarks(ops, kBufferSlices, out);
}

Status ReadFormat4Watermarks(TxnOps& ops, Watermarks* out) {
  return ReadStoredWatermarks(ops, 8, out);
}

Status WriteWatermarks(TxnOps& ops, const Watermarks& marks) {
  std::string v;
  for (DocId d : marks.doc) AppendLE64(&v, d);
  SHINGLED_RETURN_IF_ERROR(ops.Put(ops.dbis().meta, kBufferWatermarksKey, v, 0, "meta"));
  v.clear();
  AppendLE64(&v, marks.next_slice);
  return ops.Put(ops.dbis().meta, kBufferNextSliceKey, v, 0, "meta");
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

StatusOr<std::shared_ptr<const WriteBuffer>> BuildWriteBuffer(TxnOps& ops) {
  auto buffer = std::make_shared<WriteBuffer>();
  SHINGLED_RETURN_IF_ERROR(ReadWatermarks(ops, &buffer->marks));
  const Watermarks& marks = buffer->marks;
  std::array<std::array<std::vector<BufferEntry>, kBufferSlices>, kBufferIndexes> entries;
  Cursor c;
  if (int rc = c.Open(ops.txn(), ops.dbis().documents); rc != 0)
    return ops.Fail(rc, "documents cursor");
  Key64 from(marks.lowest() + 1);
  MDB_val k = Val(from.view()), v;
  DocumentRecord rec;
  std::vector<uint64_t> sample;
  int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
  for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != 8)
      return DataLossError("documents has a key of " + std::to_string(k.mv_size) + " bytes");
    const DocId doc = GetBE64(static_cast<const char*>(k.mv_data));
    // A record that does not decode files nothing here: its postings are unknown (check reports
    // it), and failing would stop every query and batch over one damaged record.
    if (!DecodeDocumentInto(View(v), &rec).ok() || !rec.has_sketch()) continue;
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
  for (int i = 0; i < kBufferIndexes; ++i) {
    for (int s = 0; s < kBufferSlices; ++s) {
      std::vector<BufferEntry>& e = entries[i][s];
      SortEntries(&e);
      e.erase(std::unique(e.begin(), e.end()), e.end());  // a value twice in one list
      if (!e.empty()) buffer->parts[i][s] = std::make_shared<BufferPart>(std::move(e));
    }
  }
  return std::shared_ptr<const WriteBuffer>(std::move(buffer));
}

std::shared_ptr<const WriteBuffer> AdvanceWriteBuffer(const WriteBuffer& base, BatchEntries batch,
                                                      DocId last_doc, bool all_slices,
                                                      BatchEntries* put) {
  auto next = std::make_shared<WriteBuffer>();
  next->marks = base.marks;
  const int due = static_cast<int>(base.marks.next_slice);
  for (int i = 0; i < kBufferIndexes; ++i) {
    std::vector<BufferEntry>& entries = batch[i];
    SortEntries(&entries);
    (*put)[i].clear();
    // Slices are ranges of values: the batch's entries of slice s are one run of the sorted list.
    auto from = entries.begin();
    for (int s = 0; s < kBufferSlices; ++s) {
      auto to = std::find_if(from, entries.end(),
                             [s](const BufferEntry& e) { return BufferSlice(e.first) != s; });
      const std::vector<BufferEntry>& held = base.parts[i][s]->entries();
      if (all_slices || s == due) {
        // Buffered documents are below the batch's: the held entries of a value come first.
        std::merge(held.begin(), held.end(), from, to, std::back_inserter((*put)[i]));
        next->parts[i][s] = EmptyPart();
      } else if (from == to) {
        next->parts[i][s] = base.parts[i][s];
      } else {
        std::vector<BufferEntry> merged;
        merged.reserve(held.size() + static_cast<size_t>(to - from));
        std::merge(held.begin(), held.end(), from, to, std::back_inserter(merged));
        next->parts[i][s] = std::make_shared<BufferPart>(std::move(merged));
      }
      from = to;
    }
  }
  for (int s = 0; s < kBufferSlices; ++s) {
    if (all_slices || s == due) next->marks.doc[s] = last_doc;
  }
  next->marks.next_slice = (base.marks.next_slice + 1) % kBufferSlices;
  return next;
}

}  // namespace shingled::store::internal
