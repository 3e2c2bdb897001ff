#include "store/internal/batch_postings.h"

#include <boost/sort/spreadsort/integer_sort.hpp>

#include <algorithm>
#include <utility>

#include "base/fmix.h"
#include "store/internal/codec.h"
#include "store/internal/store_impl.h"

namespace shingled::store::internal {

static_assert(BatchPostings::kIndexes == kBufferIndexes &&
              BatchPostings::kFeatures == kBufferFeatures &&
              BatchPostings::kSupershingles == kBufferSupershingles &&
              BatchPostings::kSamples == kBufferSamples);

// Buckets by Fmix64 of the value: the values are hashes already, but a sample value's low bits
// are zeros by construction (it is 0 mod 2^i).
BatchPostings::Slot* BatchPostings::SlotMap::Find(uint64_t value) {
  if (buckets_.empty()) return nullptr;
  const size_t mask = buckets_.size() - 1;
  for (size_t i = Fmix64(value) & mask;; i = (i + 1) & mask) {
    const uint32_t b = buckets_[i];
    if (b == 0) return nullptr;
    if (slots_[b - 1].value == value) return &slots_[b - 1];
  }
}

BatchPostings::Slot& BatchPostings::SlotMap::FindOrAdd(uint64_t value) {
  if ((slots_.size() + 1) * 2 > buckets_.size()) Grow();
  const size_t mask = buckets_.size() - 1;
  for (size_t i = Fmix64(value) & mask;; i = (i + 1) & mask) {
    const uint32_t b = buckets_[i];
    if (b == 0) {
      slots_.emplace_back().value = value;
      buckets_[i] = static_cast<uint32_t>(slots_.size());
      return slots_.back();
    }
    if (slots_[b - 1].value == value) return slots_[b - 1];
  }
}

void BatchPostings::SlotMap::Grow() {
  buckets_.assign(std::max<size_t>(1024, buckets_.size() * 2), 0);
  const size_t mask = buckets_.size() - 1;
  for (size_t s = 0; s < slots_.size(); ++s) {
    size_t i = Fmix64(slots_[s].value) & mask;
    while (buckets_[i] != 0) i = (i + 1) & mask;
    buckets_[i] = static_cast<uint32_t>(s + 1);
  }
}

MDB_dbi BatchPostings::Dbi(Index index) const {
  const Dbis& d = ops_.dbis();
  switch (index) {
    case kFeatures: return d.features;
    case kSupershingles: return d.supershingles;
    case kSamples: return d.samples;
  }
  return d.samples;
}

Status BatchPostings::OpenCursor(Index index) {
  if (cursor_open_[index]) return OkStatus();
  if (int rc = cursors_[index].Open(ops_.txn(), Dbi(index)); rc != 0) return ops_.Fail(rc, "posting cursor");
  cursor_open_[index] = true;
  return OkStatus();
}

Status BatchPostings::ReadStored(Index index, uint64_t value, size_t max, std::vector<DocId>* out,
                                 size_t* count, bool* more) {
  *count = 0;
  *more = false;
  if (filter_ == nullptr || filter_->MayHold(KeyFilter::Posting(index, value))) {
    SHINGLED_RETURN_IF_ERROR(OpenCursor(index));
    if (int rc = ReadValuePostings(cursors_[index].get(), value, max, out, count, more); rc != 0) {
      return ops_.Fail(rc, "postings");
    }
  }
  if (buffer_ == nullptr || *more) return OkStatus();
  size_t buffered = 0;
  buffer_->Read(index, value, max - *count, out, &buffered, more);
  *count += buffered;
  return OkStatus();
}

Status BatchPostings::Prefetch(Index index, std::vector<uint64_t> values, size_t max) {
  SHINGLED_RETURN_IF_ERROR(OpenCursor(index));
  Table& t = tables_[index];
  // A batch's values are random 64-bit hashes, tens of thousands of them: a radix sort
  // (spreadsort) takes less than half of std::sort's time on them.
  boost::sort::spreadsort::integer_sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  // The filter's blocks of the values a few ahead are fetched while these are read.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < values.size(); ++i) {
    const uint64_t value = values[i];
    if (filter_ != nullptr && i + kAhead < values.size()) {
      filter_->Prefetch(KeyFilter::Posting(index, values[i + kAhead]));
    }
    const auto first = static_cast<uint32_t>(t.docs.size());
    size_t count = 0;
    bool more = false;
    SHINGLED_RETURN_IF_ERROR(ReadStored(index, value, max, &t.docs, &count, &more));
    Slot& slot = t.slots.FindOrAdd(value);
    slot.prefetched = true;
    slot.stored_first = first;
    slot.stored_count = static_cast<uint32_t>(count);
    slot.complete = !more;
  }
  return OkStatus();
}

Status BatchPostings::Read(Index index, uint64_t value, size_t max, std::vector<DocId>* out, size_t* count,
                           bool* more) {
  *count = 0;
  *more = false;
  Table& t = tables_[index];
  const Slot* slot = t.slots.Find(value);
  // The stored postings, from the prefetch when it read enough of them, else from the B-tree
  // (which the batch leaves unchanged until Flush).
  const DocId* stored = nullptr;
  size_t stored_count = 0;
  bool stored_more = false;
  if (slot != nullptr && slot->prefetched && (slot->complete || slot->stored_count >= max)) {
    stored = t.docs.data() + slot->stored_first;
    stored_count = std::min<size_t>(slot->stored_count, max);
    stored_more = !slot->complete || slot->stored_count > max;
  } else {
    scratch_.clear();
    SHINGLED_RETURN_IF_ERROR(ReadStored(index, value, max, &scratch_, &stored_count, &stored_more));
    stored = scratch_.data();
  }
  out->insert(out->end(), stored, stored + stored_count);
  *count = stored_count;
  if (stored_more) {
    *more = true;
    return OkStatus();
  }
  if (slot == nullptr) return OkStatus();
  for (uint32_t e = slot->head; e != 0; e = t.entries[e - 1].next) {
    if (*count == max) {
      *more = true;
      return OkStatus();
    }
    out->push_back(t.entries[e - 1].doc);
    ++*count;
  }
  return OkStatus();
}

void BatchPostings::File(Index index, uint64_t value, DocId doc) {
  Table& t = tables_[index];
  Slot& slot = t.slots.FindOrAdd(value);
  if (slot.tail != 0 && t.entries[slot.tail - 1].doc == doc) return;
  t.entries.push_back(Entry{value, doc, 0});
  const auto e = static_cast<uint32_t>(t.entries.size());
  if (slot.tail != 0) {
    t.entries[slot.tail - 1].next = e;
  } else {
    slot.head = e;
  }
  slot.tail = e;
}

size_t BatchPostings::filed() const {
  size_t n = 0;
  for (const Table& t : tables_) n += t.entries.size();
  return n;
}

Status BatchPostings::Put(Index index, const std::vector<std::pair<uint64_t, DocId>>& sorted) {
  if (sorted.empty()) return OkStatus();
  SHINGLED_RETURN_IF_ERROR(OpenCursor(index));
  MDB_cursor* c = cursors_[index].get();
  for (const auto& [value, doc] : sorted) {
    PostingKey key(value);
    Posting posting(value, doc);
    MDB_val k = Val(key.view()), v = Val(posting.view());
    int rc = mdb_cursor_put(c, &k, &v, MDB_NODUPDATA);
    if (rc != 0 && rc != MDB_KEYEXIST) return ops_.Fail(rc, "postings");
  }
  return OkStatus();
}

StatusOr<std::shared_ptr<const WriteBuffer>> BatchPostings::FlushToBuffer(
    DocId last_doc, bool all_slices, BatchFingerprints fps, BatchFingerprints* fp_put) {
  BatchEntries batch, put;
  for (int i = 0; i < kIndexes; ++i) {
    const Table& t = tables_[i];
    batch[i].reserve(t.entries.size());
    for (const Entry& e : t.entries) batch[i].emplace_back(e.value, e.doc);
  }
  std::shared_ptr<const WriteBuffer> next = AdvanceWriteBuffer(
      *buffer_, std::move(batch), std::move(fps), last_doc, all_slices, &put, fp_put);
  for (int i = 0; i < kIndexes; ++i) {
    SHINGLED_RETURN_IF_ERROR(Put(static_cast<Index>(i), put[i]));
    if (filter_ == nullptr) continue;
    filter_->AddAll(put[i], [i](const BufferEntry& e) { return KeyFilter::Posting(i, e.first); });
  }
  return next;
}

}  // namespace shingled::store::internal
