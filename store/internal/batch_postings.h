// The writer's view of the three posting indexes (`features`, `supershingles`, `samples`)
// during one write batch (FORMAT.md, "The writer's batch"). The postings stored before the
// batch are read in key order up front (Prefetch), the batch's own are kept in memory, and they
// are all written at the end of the batch in key order (Flush). Sorted, a batch's ~50,000 reads
// and as many inserts walk each B-tree from left to right: consecutive keys on one leaf page are
// found from the cursor's page, without a descent from the root, instead of one descent per key
// in page order. Private to store/.
#ifndef SHINGLED_STORE_INTERNAL_BATCH_POSTINGS_H_
#define SHINGLED_STORE_INTERNAL_BATCH_POSTINGS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "store/internal/key_filter.h"
#include "store/internal/schema.h"
#include "store/internal/write_buffer.h"
#include "store/types.h"

namespace shingled::store::internal {

class BatchPostings {
 public:
  enum Index { kFeatures = 0, kSupershingles = 1, kSamples = 2 };
  static constexpr int kIndexes = 3;

  explicit BatchPostings(TxnOps& ops) : ops_(ops) {}

  // The write buffer the batch's transaction began with: its postings are stored postings too,
  // read after the B-tree's (their documents are above the watermark, so above the B-tree's of
  // the same slice). Without one, the B-trees hold every stored posting. REQUIRES: before the
  // first Prefetch or Read.
  void set_buffer(const WriteBuffer* buffer) { buffer_ = buffer; }
  // The writer's key filter (null: none): a value it says the B-tree lacks is not read there,
  // and Flush adds the postings it puts. REQUIRES: before the first Prefetch or Read.
  void set_filter(KeyFilter* filter) { filter_ = filter; }

  // Reads the stored postings of `values` (any order, repeats allowed) in `index`, at most
  // `max` per value, in key order, for Read to answer from memory. Optional: Read reads from
  // the B-tree what was not prefetched. REQUIRES: before the first File.
  Status Prefetch(Index index, std::vector<uint64_t> values, size_t max);

  // The documents filed under `value` in `index`: those stored before the batch, then those
  // filed by this batch (in the order filed: ascending, as document ids are allocated). Appends
  // at most `max` to `*out`, sets `*count` to the number appended and `*more` to whether others
  // follow, as ReadValuePostings does on the B-tree.
  Status Read(Index index, uint64_t value, size_t max, std::vector<DocId>* out, size_t* count, bool* more);

  // Files `doc` under `value` in `index`: visible to Read at once, written by Flush. Filing the
  // same (value, doc) twice files it once. REQUIRES: doc not below any document filed before.
  void File(Index index, uint64_t value, DocId doc);

  // Puts into the B-trees, sorted by key through one cursor per index, the buffered postings of
  // the slice due and the batch's of that slice (of every slice when `all_slices`), and returns
  // the buffer after the commit (AdvanceWriteBuffer), whose watermarks the caller writes to meta.
  // The batch's documents are at most `last_doc`. The batch's fingerprint entries `fps` go into
  // that buffer the same way, and `*fp_put` receives those the caller puts into the fingerprint
  // B-trees. REQUIRES: the last call (a Read after it would count the batch's postings twice),
  // with a buffer.
  StatusOr<std::shared_ptr<const WriteBuffer>> FlushToBuffer(DocId last_doc, bool all_slices,
                                                             BatchFingerprints fps,
                                                             BatchFingerprints* fp_put);

  // Postings filed so far in this batch.
  size_t filed() const;

 private:
  // What the batch knows of one value of an index: its stored postings as prefetched
  // (docs[stored_first, stored_first + stored_count) of its table; `complete` false when more
  // are stored), and the chain of postings this batch filed (through Entry::next, oldest first).
  struct Slot {
    uint64_t value = 0;
    uint32_t stored_first = 0;
    uint32_t stored_count = 0;
    bool prefetched = false;
    bool complete = true;
    uint32_t head = 0;  // entries index + 1; 0: none
    uint32_t tail = 0;
  };
  struct Entry {
    uint64_t value;
    DocId doc;
    uint32_t next;  // entries index + 1; 0 ends the chain
  };
  // value -> slot, open addressing with linear probing (a batch looks up ~50,000 values per
  // index: a node-based map would allocate for each).
  class SlotMap {
   public:
    // The slot of `value`, added (empty) if absent.
    Slot& FindOrAdd(uint64_t value);
    // The slot of `value`, or null.
    Slot* Find(uint64_t value);

   private:
    void Grow();
    std::vector<uint32_t> buckets_;  // slots_ index + 1; 0: empty
    std::vector<Slot> slots_;
  };
  struct Table {
    SlotMap slots;
    std::vector<DocId> docs;
    std::vector<Entry> entries;
  };

  MDB_dbi Dbi(Index index) const;
  Status OpenCursor(Index index);
  // The stored postings of `value`: the B-tree's, then the buffer's; as Read's arguments.
  Status ReadStored(Index index, uint64_t value, size_t max, std::vector<DocId>* out, size_t* count,
                    bool* more);
  // Puts `sorted` (by value, then document) into `index`'s B-tree through its cursor.
  Status Put(Index index, const std::vector<std::pair<uint64_t, DocId>>& sorted);

  TxnOps& ops_;
  const WriteBuffer* buffer_ = nullptr;
  KeyFilter* filter_ = nullptr;
  std::array<Table, kIndexes> tables_;
  std::array<Cursor, kIndexes> cursors_;
  std::array<bool, kIndexes> cursor_open_{};
  std::vector<DocId> scratch_;
};

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_BATCH_POSTINGS_H_
