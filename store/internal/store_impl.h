// The state behind a Store, shared by store.cc (open, writes), queries.cc and check.cc.
// Private to store/.
#ifndef SHINGLED_STORE_INTERNAL_STORE_IMPL_H_
#define SHINGLED_STORE_INTERNAL_STORE_IMPL_H_

#include <lmdb.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "dedup/sketch.h"
#include "store/internal/candidates.h"
#include "store/internal/codec.h"
#include "store/internal/key_filter.h"
#include "store/internal/lmdb.h"
#include "store/internal/schema.h"
#include "store/internal/templates.h"
#include "store/internal/write_buffer.h"
#include "store/lmdb_store.h"
#include "store/store.h"
#include "store/types.h"

namespace shingled::store::internal {

// A read transaction that holds the map-resize lock shared for its lifetime.
struct ReadTxn {
  std::shared_lock<std::shared_mutex> lock;
  Txn txn;
};

// Reads a posting list (DUPFIXED 8-byte values) of `key` with an open cursor: sets `*count` to its
// length (0 if absent) and appends at most `max` postings to `*out`. Returns an LMDB code.
int ReadPostings(MDB_cursor* cursor, std::string_view key, size_t max, std::vector<uint64_t>* out,
                 size_t* count);

// The URL's id, or NotFound.
StatusOr<UrlId> LookupUrl(TxnOps& ops, std::string_view url);
// The last version of a URL (NotFound if it has none); `*seq` is its sequence number.
StatusOr<VersionRecord> LastVersion(TxnOps& ops, UrlId url, uint32_t* seq);
// The same through an open `versions` cursor (left on the version found).
StatusOr<VersionRecord> LastVersion(TxnOps& ops, MDB_cursor* versions, UrlId url, uint32_t* seq);
StatusOr<DocumentRecord> ReadDocument(TxnOps& ops, DocId doc);
// The record that holds the sketch of `doc`: itself, or its representative.
StatusOr<DocumentRecord> ReadSketchHolder(TxnOps& ops, DocId doc, DocId* holder);

// Reads the documents filed under `value` in a posting index (`features`, `supershingles`,
// `samples`; FORMAT.md, "Posting lists") with an open cursor: appends at most `max` of them to
// `*out`, sets `*count` to the number appended and `*more` to whether others follow. Returns an
// LMDB code.
int ReadValuePostings(MDB_cursor* cursor, uint64_t value, size_t max, std::vector<DocId>* out,
                      size_t* count, bool* more);
// The same result as ReadValuePostings, with fewer LMDB calls when the value's bucket fits one
// page (every bucket of `samples` at 1M documents: ~19 entries): the bucket's entries come back
// from MDB_GET_MULTIPLE as one array, searched in place, where ReadValuePostings makes one
// MDB_NEXT_DUP call per posting and LMDB compares entries through its comparator. A larger bucket
// (a nested tree) is read by ReadValuePostings. Queries read `samples` with it (queries.cc).
int ReadBucketPostings(MDB_cursor* cursor, uint64_t value, size_t max, std::vector<DocId>* out,
                       size_t* count, bool* more);


// The stop list (`common_values`: value -> its posting count) as the writer keeps it in memory.
using StopList = std::unordered_map<uint64_t, uint64_t>;

// The last key of `dbi`, whose keys are 8-byte big-endian ids (`what` names it in errors): 0
// when it is empty. A damaged key would give the next id from bytes past its end: DataLoss.
StatusOr<uint64_t> LastId(TxnOps& ops, MDB_dbi dbi, const char* what);
// The meta entries that keep the largest document and URL id ever given once forgetting removed
// the last one (FORMAT.md, "Meta"): ids are never given twice.
inline constexpr char kLastDocumentKey[] = "ids.last_document";
inline constexpr char kLastUrlKey[] = "ids.last_url";
// The meta entry holding the last URL id a retention step looked at (0: a pass starts over).
inline constexpr char kRetentionCursorKey[] = "retention.cursor";
// The meta entry holding the counts of the retention pass in progress (its forget record's).
inline constexpr char kRetentionPassKey[] = "retention.pass";
// The largest id given in `dbi` (`documents` or `url_names`): its last key, or the meta entry
// `meta_key` when that is larger. The next id is one more.
StatusOr<uint64_t> LastAllocatedId(TxnOps& ops, MDB_dbi dbi, const char* what,
                                   const char* meta_key);

// The counts of the retention pass in progress (meta `retention.pass`; zero when absent), as its
// forget record will hold them; DataLoss if the entry does not decode.
StatusOr<ForgetRecord> ReadRetentionPass(TxnOps& ops);
// Fills `rep_docs` from `documents` (FORMAT.md, "Representatives"): the format 14 upgrade.
Status BuildRepDocs(TxnOps& ops);

// The sweep records a write transaction changes, by id, written back at its end.
using SweepCache = std::map<SweepId, SweepRecord>;
// Sweep `id`'s record in `*cache` (never null), read on first use. NotFound if unknown.
StatusOr<SweepRecord*> CachedSweep(TxnOps& ops, SweepCache* cache, SweepId id);
// A sweep id stored as 4 bytes (a `sweeps` key, a `sweep_names` value); DataLoss naming `where`
// for bytes of another size, which reading as 4 would read past or misread.
StatusOr<SweepId> StoredSweepId(std::string_view bytes, std::string_view where);

class StoreImpl {
 public:
  StoreImpl(std::string dir, const StoreOptions& options, const dedup::SketchParams& params,
            uint64_t rabin_polynomial)
      : dir_(std::move(dir)),
        options_(options),
        params_(params),
        polynomial_(rabin_polynomial),
        max_map_size_(options.max_map_size) {}
  ~StoreImpl();
  StoreImpl(const StoreImpl&) = delete;
  StoreImpl& operator=(const StoreImpl&) = delete;

  Status Open();

  StatusOr<ReadTxn> BeginRead() const;

  // Runs `body` in one write transaction and commits it; grows the map and reruns `body` on a
  // full map. REQUIRES: write_mu_ held. `body` must be rerunnable (it starts from scratch).
  template <typename Body>
  Status RunWrite(Body&& body);

  Status health() const {
    std::lock_guard<std::mutex> lock(health_mu_);
    return health_;
  }

  const std::string dir_;
  const StoreOptions options_;
  const dedup::SketchParams params_;
  const uint64_t polynomial_;
  MDB_env* env_ = nullptr;
  Dbis dbis_{};

  // Serializes writers (Apply, sweeps).
  std::mutex write_mu_;
  // Held shared by every transaction, exclusively to change the map size (LMDB requires that no
  // transaction of this process is open then).
  mutable std::shared_mutex resize_mu_;
  std::atomic<int> fail_next_commit_{0};
  // What the writer read (LmdbStore::WriterWorkForTesting). Guarded by write_mu_.
  WriterWork writer_work_;

  // The writer's copy of `common_values` (the stop list: small, and only the writer changes it),
  // so that a page's ~25 indexed sample values cost no descent each into it. It is equal to
  // `common_values` as of the transaction id `stop_list_txn_` when `stop_list_loaded_`. A write
  // transaction with id T sees the store as of T - 1: when stop_list_txn_ is T - 1, no other
  // writer (another process, or another Store on the same files) came in since, and the copy is
  // current; otherwise LoadStopList reads it again. The writer keeps it equal during a batch
  // (CountSample); RunWrite advances stop_list_txn_ on commit and drops the copy on anything
  // else (an aborted batch may have changed it). Guarded by write_mu_.
  StopList stop_list_;
  bool stop_list_loaded_ = false;
  uint64_t stop_list_txn_ = 0;
  // Whether stop_list_ is current for a write transaction with id `txn_id`.
  bool StopListCurrentFor(uint64_t txn_id) const { return stop_list_loaded_ && stop_list_txn_ + 1 == txn_id; }
  // Makes stop_list_ current for the write transaction `ops` (reading `common_values` unless
  // stop_list_txn_ is the transaction's id - 1). REQUIRES: write_mu_ held, in RunWrite's body.
  Status LoadStopList(TxnOps& ops);

  // --- the write buffer (write_buffer.h; FORMAT.md, "The write buffer") ---
  // The buffer of the read transaction `ops`, that is of the commit whose id it has: the one
  // the writer published for that commit (waiting while the commit is in flight), else one
  // built from the transaction's documents and kept for the next reader of that commit.
  StatusOr<std::shared_ptr<const WriteBuffer>> BufferFor(TxnOps& ops) const;
  // The buffer the write transaction `ops` (id T) begins with: that of commit T - 1.
  // REQUIRES: write_mu_ held, in RunWrite's body.
  StatusOr<std::shared_ptr<const WriteBuffer>> WriterBuffer(TxnOps& ops);
  // Set by a write body to the buffer its commit makes; RunWrite publishes it under the
  // transaction's id before committing (and the buffer of id - 1 when the body set none: the
  // commit left the postings alone). Guarded by write_mu_.
  std::shared_ptr<const WriteBuffer> made_buffer_;

  // --- the key filter (key_filter.h; FORMAT.md, "The key filter") ---
  // The writer's filter, for the write transaction `ops` (id T): null with
  // StoreOptions::key_filter off. Its valid slices describe the B-trees as of commit T - 1: when
  // key_filter_txn_ is not T - 1 (another process, or another Store on the same files, wrote
  // since), every slice is invalidated. Then builds the slice SliceToBuild names, if any.
  // REQUIRES: write_mu_ held, in RunWrite's body.
  StatusOr<KeyFilter*> WriterKeyFilter(TxnOps& ops);
  // Guarded by write_mu_. key_filter_txn_: the commit the filter's valid slices describe. A
  // batch adds to the filter the keys it puts into the B-trees (a batch that does not commit
  // leaves extra keys in it, which only cost a read); RunWrite advances key_filter_txn_ on every
  // commit of this Store, since only batches put keys into those B-trees.
  std::unique_ptr<KeyFilter> key_filter_;
  uint64_t key_filter_txn_ = 0;
  std::atomic<uint64_t> key_filter_bytes_{0};  // for Stats, read without write_mu_

  // --- the template judge's memory (templates.h, JudgeMemory) ---
  // The memory for the write batch of transaction `ops` (id T). It holds what the template judge
  // learnt up to commit T - 1 when that commit was a batch's of this Store (judge_memory_txn_ is
  // T - 1); otherwise (another write came in since: a sweep, a forget, another process, or a
  // batch that did not commit) it is emptied first. RunWrite keeps it for the next batch only
  // when this transaction commits. REQUIRES: write_mu_ held, in a write batch's RunWrite body.
  JudgeMemory* WriterJudgeMemory(TxnOps& ops);
  // Guarded by write_mu_.
  JudgeMemory judge_memory_;
  uint64_t judge_memory_txn_ = 0;     // the commit the memory is current for (0: none)
  uint64_t judge_memory_in_use_ = 0;  // the transaction a batch is using it in (0: none)

  // --- out of space (Store::WriteRoom) ---
  // The size the map may grow to (options_.max_map_size until MappedFile::SetMaxMapSize).
  std::atomic<uint64_t> max_map_size_;
  // The map size at which a write last found the map full and unable to grow; 0 after a
  // commit succeeds.
  std::atomic<uint64_t> map_full_at_{0};
  // The disk-full error for the store's file system as statvfs sees it now, naming `what`
  // failed; OK when it has at least `min_free` bytes free (or statvfs fails: nothing known).
  Status DiskRoom(uint64_t min_free, std::string_view what) const;
  // Before mdb_env_open: allocates the blocks of the lock file (lock.mdb) LMDB is about to size
  // and write through its map, so that a disk with no room answers an error here instead of a
  // SIGBUS in LMDB (a daemon started on a full disk). A lock file it has to create is
  // refused on a full disk (DiskFullError naming the directory and the bytes needed); an existing
  // one is used as it is (its written pages are allocated already).
  Status AllocateLockFile() const;

 private:
  Status GrowMap();
  // The Status of a failed commit. LMDB reports a short write (a full file system) as EIO: on
  // EIO or ENOSPC, a nearly full file system under the store is reported as ResourceExhausted.
  Status CommitFailure(int rc) const;
  Status AdoptNewMapSize() const;

  mutable std::mutex health_mu_;
  Status health_;  // GUARDED_BY(health_mu_): the failed commit that stopped writes

  // The buffers of the last few commits, by commit id, and the commit in flight (0: none),
  // whose buffer is already there: a reader of that commit can only begin once it succeeded,
  // and waits for the writer to say so. Guarded by buffer_mu_.
  static constexpr size_t kBuffersKept = 3;
  void KeepBuffer(uint64_t txn_id, std::shared_ptr<const WriteBuffer> buffer) const;
  void BeginCommit(uint64_t txn_id, std::shared_ptr<const WriteBuffer> buffer);
  void EndCommit(uint64_t txn_id, bool committed);
  mutable std::mutex build_mu_;  // held by a reader rebuilding a buffer
  mutable std::mutex buffer_mu_;
  mutable std::condition_variable buffer_cv_;
  mutable std::map<uint64_t, std::shared_ptr<const WriteBuffer>> buffers_;
  uint64_t committing_ = 0;
};

template <typename Body>
Status StoreImpl::RunWrite(Body&& body) {
  if (Status h = health(); !h.ok()) {
    return FailedPreconditionError("store refuses writes after a failed commit (" + h.ToString() +
                                   "); reopen it");
  }
  for (int attempt = 0;; ++attempt) {
    int map_full = 0;
    {
      std::shared_lock<std::shared_mutex> lock(resize_mu_);
      MDB_txn* raw = nullptr;
      int rc = mdb_txn_begin(env_, nullptr, 0, &raw);
      if (rc == MDB_MAP_RESIZED) {
        lock.unlock();
        SHINGLED_RETURN_IF_ERROR(AdoptNewMapSize());
        continue;
      }
      if (rc != 0) {
        Status failed = LmdbStatus(rc, "begin write transaction");
        // A failed meta-page write leaves the environment unusable until it is reopened.
        if (rc == MDB_PANIC) {
          std::lock_guard<std::mutex> hl(health_mu_);
          health_ = failed;
        }
        return failed;
      }
      Txn txn(raw);
      const uint64_t txn_id = mdb_txn_id(raw);
      TxnOps ops(txn.get(), dbis_);
      made_buffer_.reset();
      Status s = body(ops);
      // The copy was current for this transaction's snapshot (from the last commit, or loaded
      // by the body) and the body kept it equal. Unless the commit below succeeds, the body's
      // changes to it are undone with the transaction: drop it.
      const bool stop_list_current = StopListCurrentFor(txn_id);
      stop_list_loaded_ = false;
      // The same for the template judge's memory, which only a batch keeps equal.
      const bool judge_memory_kept = judge_memory_in_use_ == txn_id;
      judge_memory_in_use_ = 0;
      judge_memory_txn_ = 0;
      if (!s.ok()) {
        if (ops.last_error() != MDB_MAP_FULL) return s;
        map_full = 1;
      } else {
        std::shared_ptr<const WriteBuffer> buffer = std::move(made_buffer_);
        if (buffer == nullptr) {
          std::lock_guard<std::mutex> bl(buffer_mu_);
          if (auto it = buffers_.find(txn_id - 1); it != buffers_.end()) buffer = it->second;
        }
        BeginCommit(txn_id, std::move(buffer));
        int injected = fail_next_commit_.exchange(0);
        if (injected != 0) {
          txn.Abort();
          rc = injected;
        } else {
          rc = txn.Commit();
        }
        EndCommit(txn_id, rc == 0);
        if (rc == MDB_MAP_FULL) {
          map_full = 1;
        } else if (rc != 0) {
          Status failed = CommitFailure(rc);
          // Lack of space fails this write only: LMDB aborted the transaction, whose pages went
          // to free space only, and the last commit's meta page stands. Any other failure stops
          // writes until the store is reopened.
          if (!IsOutOfSpace(failed)) {
            std::lock_guard<std::mutex> hl(health_mu_);
            health_ = failed;
          }
          return failed;
        } else {
          if (stop_list_current) {
            stop_list_loaded_ = true;
            stop_list_txn_ = txn_id;
          }
          if (key_filter_txn_ + 1 == txn_id) key_filter_txn_ = txn_id;
          if (judge_memory_kept) judge_memory_txn_ = txn_id;
          map_full_at_ = 0;
          return OkStatus();
        }
      }
    }
    if (map_full) SHINGLED_RETURN_IF_ERROR(GrowMap());
  }
}

}  // namespace shingled::store::internal

// Begins a read transaction of the LmdbStore's `impl_` (returning its error) and names its
// TxnOps `ops_name`; the transaction lasts to the end of the scope.
#define SHINGLED_READ_TXN(ops_name)                           \
  StatusOr<internal::ReadTxn> read_txn_ = impl_->BeginRead(); \
  if (!read_txn_.ok()) return read_txn_.status();             \
  internal::TxnOps ops_name(read_txn_->txn.get(), impl_->dbis_)

#endif  // SHINGLED_STORE_INTERNAL_STORE_IMPL_H_
