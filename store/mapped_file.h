// MappedFile: what a store kept in one local memory-mapped file can do beyond store::Store: back
// the file up, map it in advance, bound the map's size, and the testing hooks of its commits.
// Only the embedded LMDB store is such a store (store/lmdb_store.h; its bytes in
// store/FORMAT.md); the Redis Cluster backend keeps no file, so it has none of this.
//
// A caller reaches it through Store::mapped_file(), which is null on an engine without a file:
// that null is the one place that says so, rather than methods answering "not supported".
//
//   if (store::MappedFile* file = store.mapped_file()) file->WarmMap();
//
// Lifetime: the MappedFile is the Store itself, seen from another side: it is valid while the
// Store is, and is never deleted through this interface.
// Thread-safety: as the Store's; every method is safe for concurrent use with any other call on
// the Store, unless it says otherwise.
#ifndef SHINGLED_STORE_MAPPED_FILE_H_
#define SHINGLED_STORE_MAPPED_FILE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"

namespace shingled::store {

class MappedFile {
 public:
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Writes a compacted, consistent copy of the store (data.mdb) into directory `dest`, which
  // must exist and hold no store; the copy is taken in a read transaction, so writes go on.
  // InvalidArgument if `dest` is not a directory; AlreadyExists if it holds a data.mdb already;
  // a failed copy (a full disk) leaves no data.mdb in `dest`.
  [[nodiscard]] virtual Status Backup(const std::string& dest) const = 0;

  // Maps the used part of the store's file into this process's page tables in advance
  // (madvise MADV_POPULATE_READ, reading from disk what the page cache lacks), so that later
  // queries take no page faults (FORMAT.md, "Lookups"). A daemon calls it on a thread of its own
  // after opening the store; queries and writes go on meanwhile. Works in 32 MiB chunks, each
  // holding off a map growth as a read transaction does, and calls `keep_going` (may be null)
  // before each: it returns early when that answers false. Returns the bytes mapped. Pages
  // written later, and the whole map after it grows (LMDB maps it anew), fault in as usual.
  // Internal on an madvise failure other than EINVAL (a kernel before 5.14, on which it falls
  // back to reading one byte per page). FailedPrecondition, mapping nothing, when the file's used
  // part is larger than `max_bytes`: warming a store larger than the memory the page cache can
  // keep would read it all from disk and evict what lookups need (a daemon passes half of the
  // physical memory).
  [[nodiscard]] virtual StatusOr<uint64_t> WarmMap(
      const std::function<bool()>& keep_going = nullptr, uint64_t max_bytes = UINT64_MAX) const = 0;

  // The size the map may grow to: StoreOptions::max_map_size, or the last SetMaxMapSize. Writes
  // that would grow it further fail with MapFullError (store.h, "out of space") until
  // Store::WriteRoom says there is room.
  virtual uint64_t max_map_size() const = 0;
  // Changes the size the map may grow to (store.max_map_size on SIGHUP), for the next time it
  // grows. InvalidArgument below initial_map_size. A map already larger stays as it is.
  [[nodiscard]] virtual Status SetMaxMapSize(uint64_t bytes) = 0;

  // The next commit fails as if fsync had returned `error` (an errno such as ENOSPC) after the
  // transaction was written: the store then behaves as after a real failed commit.
  virtual void FailNextCommitForTesting(int error) = 0;
  // Internal when the writer's key filter (FORMAT.md, "The key filter") says "absent" for a key
  // of the posting or fingerprint B-trees as of the last commit, which it must never do. OK
  // when it has none, or when its last batch was not the last commit (another writer's came
  // since: its next batch starts it over).
  [[nodiscard]] virtual Status VerifyKeyFilterForTesting() = 0;

 protected:
  MappedFile() = default;
  // Not virtual: the object is owned, and deleted, as the Store it is part of.
  ~MappedFile() = default;
};

}  // namespace shingled::store

#endif  // SHINGLED_STORE_MAPPED_FILE_H_
