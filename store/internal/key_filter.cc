#include "store/internal/key_filter.h"

#include <algorithm>
#include <string>

#include "store/internal/codec.h"

namespace shingled::store::internal {
namespace {

// The keys of `slice` in posting index `index` (FORMAT.md, "Posting lists"): the buckets whose
// top 4 bits are the slice's, each value once. An entry of another size than the format's
// (damage that Check reports) is skipped: no lookup of the writer's can reach it either.
template <typename Visit>
Status ScanPostings(TxnOps& ops, MDB_dbi dbi, int index, int slice, Visit& visit) {
  Cursor c;
  if (int rc = c.Open(ops.txn(), dbi); rc != 0) return ops.Fail(rc, "key filter: posting cursor");
  const PostingKey first(uint64_t(slice) << (64 - kBufferSliceBits));
  MDB_val k = Val(first.view()), v;
  int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
  while (rc == 0) {
    const auto* key = static_cast<const unsigned char*>(k.mv_data);
    const uint64_t bucket = k.mv_size == kPostingKeySize
                                ? (uint64_t{key[0]} << 16) | (uint64_t{key[1]} << 8) | key[2]
                                : uint64_t{key[0]} << 16;  // its slice, to know where to stop
    if (BufferSlice(bucket << kLowBits) != slice) break;
    if (k.mv_size != kPostingKeySize) {
      rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT_NODUP);
      continue;
    }
    // For a bucket of one entry GET_MULTIPLE leaves `v` as MDB_SET_RANGE or MDB_NEXT_NODUP
    // returned it.
    rc = mdb_cursor_get(c.get(), &k, &v, MDB_GET_MULTIPLE);
    uint64_t last = 0;
    bool any = false;
    while (rc == 0) {
      if (v.mv_size % kPostingSize != 0) break;
      const char* e = static_cast<const char*>(v.mv_data);
      for (const char* end = e + v.mv_size; e < end; e += kPostingSize) {
        const uint64_t value = (bucket << kLowBits) | GetBE48(e);
        if (any && value == last) continue;  // the value's other documents
        visit(KeyFilter::Posting(index, value));
        last = value;
        any = true;
      }
      rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT_MULTIPLE);
    }
    if (rc != 0 && rc != MDB_NOTFOUND) break;
    rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT_NODUP);
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "key filter: postings");
  return OkStatus();
}

// The keys of `slice` in fingerprint index `index`: those whose first 4 bits are the slice's (a
// key of another size than 16 bytes skipped, as above).
template <typename Visit>
Status ScanFingerprints(TxnOps& ops, MDB_dbi dbi, int index, int slice, Visit& visit) {
  Cursor c;
  if (int rc = c.Open(ops.txn(), dbi); rc != 0)
    return ops.Fail(rc, "key filter: fingerprint cursor");
  char first[16] = {static_cast<char>(slice << 4)};
  MDB_val k{sizeof first, first}, v;
  int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
  for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
    const char* key = static_cast<const char*>(k.mv_data);
    if (static_cast<unsigned char>(key[0]) >> 4 != slice) break;
    if (k.mv_size != 16) continue;
    visit(KeyFilter::Fingerprint(index, dedup::Fingerprint128{GetBE64(key), GetBE64(key + 8)}));
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "key filter: fingerprints");
  return OkStatus();
}

// Visits the keys of `slice` in the six B-trees.
template <typename Visit>
Status ScanSlice(TxnOps& ops, int slice, Visit& visit) {
  const Dbis& d = ops.dbis();
  const MDB_dbi postings[kBufferIndexes] = {d.features, d.supershingles, d.samples};
  const MDB_dbi fingerprints[kFingerprintIndexes] = {d.fp_identical, d.fp_lexical, d.fp_shingle};
  for (int i = 0; i < kBufferIndexes; ++i)
    SHINGLED_RETURN_IF_ERROR(ScanPostings(ops, postings[i], i, slice, visit));
  for (int i = 0; i < kFingerprintIndexes; ++i)
    SHINGLED_RETURN_IF_ERROR(ScanFingerprints(ops, fingerprints[i], i, slice, visit));
  return OkStatus();
}

}  // namespace

void KeyFilter::Add(Key key) {
  Slice& s = slices_[key.slice];
  if (!s.valid) return;
  Block& b = s.blocks[BlockOf(s, key.place)];
  const auto x = static_cast<uint32_t>(key.hash);
  bool fresh = false;
  for (int i = 0; i < 8; ++i) {
    const uint32_t bit = Bit(x, i);
    fresh |= (b.words[i] & bit) == 0;
    b.words[i] |= bit;
  }
  s.keys += fresh;
}

void KeyFilter::InvalidateAll() {
  for (Slice& s : slices_) s.valid = false;
}

int KeyFilter::SliceToBuild() const {
  int best = -1;
  double worst = 1;
  for (int i = 0; i < kBufferSlices; ++i) {
    const Slice& s = slices_[i];
    if (!s.valid) return i;
    const double load =
        static_cast<double>(s.keys) * kRebuildBitsPerKey / (256.0 * s.blocks.size());
    if (load > worst) {
      worst = load;
      best = i;
    }
  }
  return best;
}

void KeyFilter::Reset(int slice, uint64_t keys) {
  Slice& s = slices_[slice];
  const uint64_t blocks = std::max<uint64_t>(1, (keys * kBuildBitsPerKey + 255) / 256);
  s.blocks.assign(blocks, Block{});
  s.blocks.shrink_to_fit();
  s.keys = 0;
  s.valid = true;
}

Status KeyFilter::Build(TxnOps& ops, int slice) {
  const Dbis& d = ops.dbis();
  // Sized by a sixteenth of the B-trees' entries (hashing spreads keys evenly over the slices).
  // A value filed for several documents is that many posting entries and one key, so this is
  // at least the slice's keys.
  uint64_t entries = 0;
  for (MDB_dbi dbi :
       {d.features, d.supershingles, d.samples, d.fp_identical, d.fp_lexical, d.fp_shingle}) {
    MDB_stat st;
    if (int rc = mdb_stat(ops.txn(), dbi, &st); rc != 0) return ops.Fail(rc, "key filter: stat");
    entries += st.ms_entries;
  }
  Reset(slice, std::max<uint64_t>(256, entries / kBufferSlices));
  Status s = OkStatus();
  {
    Adder adder(*this);
    s = ScanSlice(ops, slice, adder);
  }
  if (!s.ok()) slices_[slice].valid = false;
  return s;
}

Status KeyFilter::Verify(TxnOps& ops) const {
  uint64_t missing = 0, misplaced = 0;
  std::string first;
  int slice = 0;
  auto visit = [&](Key key) {
    misplaced += key.slice != slice;  // a scan must visit its own slice's keys only
    if (MayHold(key)) return;
    if (missing++ == 0)
      first = "slice " + std::to_string(key.slice) + " hash " + std::to_string(key.hash);
  };
  for (slice = 0; slice < kBufferSlices; ++slice)
    SHINGLED_RETURN_IF_ERROR(ScanSlice(ops, slice, visit));
  if (misplaced != 0)
    return InternalError("key filter: " + std::to_string(misplaced) +
                         " keys scanned with another slice");
  if (missing == 0) return OkStatus();
  return InternalError("key filter lacks " + std::to_string(missing) +
                       " keys of the B-trees, the first " + first);
}

int KeyFilter::valid_slices() const {
  return static_cast<int>(
      std::count_if(slices_.begin(), slices_.end(), [](const Slice& s) { return s.valid; }));
}

size_t KeyFilter::bytes() const {
  size_t n = 0;
  for (const Slice& s : slices_) n += s.blocks.capacity() * sizeof(Block);
  return n;
}

}  // namespace shingled::store::internal
