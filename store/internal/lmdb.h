// Thin RAII wrappers over the LMDB C API, and the one function that turns LMDB return codes into
// Status. Private to store/.
//
// Thread-safety: a Txn and its Cursors belong to one thread at a time (the environment is opened
// with MDB_NOTLS, so a read transaction may move between threads, but never be used by two).
#ifndef SHINGLED_STORE_INTERNAL_LMDB_H_
#define SHINGLED_STORE_INTERNAL_LMDB_H_

#include <lmdb.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace shingled::store::internal {

// Translates an LMDB (or errno) return code, keeping `context` (the database and key, or the
// operation) in the message. MDB_SUCCESS gives OK. The only place LMDB codes become Status:
//   MDB_NOTFOUND -> NotFound; MDB_MAP_FULL, ENOSPC, EDQUOT, MDB_READERS_FULL, MDB_TXN_FULL,
//   MDB_DBS_FULL -> ResourceExhausted; MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_INVALID,
//   MDB_BAD_TXN (after a failed write) -> DataLoss / Internal; MDB_VERSION_MISMATCH, EACCES,
//   EROFS, EAGAIN (lock held) -> FailedPrecondition; MDB_MAP_RESIZED -> Unavailable; others
//   -> Internal.
Status LmdbStatus(int rc, std::string_view context);

// LMDB's default order for keys and duplicates (memcmp over the shorter length; on a tie the
// shorter first), computed inline. Every key and posting entry here is big-endian bytes of 3 to
// 16 bytes, for which the default comparator's two calls (its own, then libc's memcmp) were ~12%
// of a lookup. Set on every database when the store opens (`mdb_set_compare`,
// `mdb_set_dupsort`); since the order is the default's, a process that opens the store without
// it (mdb_dump, mdb_stat, an older shingled) reads and writes the same trees.
int CompareBytes(const MDB_val* a, const MDB_val* b);

inline MDB_val Val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}
inline std::string_view View(const MDB_val& v) {
  return std::string_view(static_cast<const char*>(v.mv_data), v.mv_size);
}

// A transaction that aborts when destroyed unless committed.
class Txn {
 public:
  Txn() = default;
  explicit Txn(MDB_txn* txn) : txn_(txn) {}
  ~Txn() { Abort(); }
  Txn(Txn&& other) noexcept : txn_(other.txn_) { other.txn_ = nullptr; }
  Txn& operator=(Txn&& other) noexcept {
    if (this != &other) {
      Abort();
      txn_ = other.txn_;
      other.txn_ = nullptr;
    }
    return *this;
  }
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  // Returns the LMDB code; the transaction is gone either way.
  [[nodiscard]] int Commit() {
    int rc = mdb_txn_commit(txn_);
    txn_ = nullptr;
    return rc;
  }
  void Abort() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
    txn_ = nullptr;
  }
  MDB_txn* get() const { return txn_; }

 private:
  MDB_txn* txn_ = nullptr;
};

class Cursor {
 public:
  Cursor() = default;
  ~Cursor() {
    if (cursor_ != nullptr) mdb_cursor_close(cursor_);
  }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  [[nodiscard]] int Open(MDB_txn* txn, MDB_dbi dbi) { return mdb_cursor_open(txn, dbi, &cursor_); }
  MDB_cursor* get() const { return cursor_; }

 private:
  MDB_cursor* cursor_ = nullptr;
};

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_LMDB_H_
