// MappedFile::WarmMap: maps the used part of the store's memory map in advance (FORMAT.md,
// "Lookups").
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "store/internal/store_impl.h"
#include "store/lmdb_store.h"
#include "store/store.h"

// Linux 5.14; older headers lack it (an older kernel answers EINVAL, handled below).
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace shingled::store {

namespace {

// The [begin, end) of the mapping of this process that holds `p`, from /proc/self/maps (the
// kernel's interface, not LMDB's); false if none does. LMDB maps the whole data file, from its
// start, in one mapping (mdb_env_open), but it does not say where (mdb_env_info's me_mapaddr is
// that of a fixed map only), so the map is found through a pointer into it: a value LMDB handed
// out.
bool MappingOf(const void* p, uintptr_t* begin, uintptr_t* end) {
  std::ifstream maps("/proc/self/maps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long b = 0, e = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &b, &e) != 2) continue;
    if (at >= b && at < e) {
      *begin = static_cast<uintptr_t>(b);
      *end = static_cast<uintptr_t>(e);
      return true;
    }
  }
  return false;
}

}  // namespace

StatusOr<uint64_t> LmdbStore::WarmMap(const std::function<bool()>& keep_going,
                                      uint64_t max_bytes) const {
  // Each chunk is mapped inside a read transaction, which holds off a map growth (a remap); a
  // writer may grow the map between chunks, and the next chunk finds the new mapping.
  constexpr uint64_t kChunk = uint64_t{32} << 20;
  uint64_t warmed = 0;
  bool populate = true;  // false after an EINVAL: a kernel without MADV_POPULATE_READ
  for (uint64_t offset = 0;; offset += kChunk) {
    if (keep_going && !keep_going()) return warmed;
    StatusOr<internal::ReadTxn> read = impl_->BeginRead();
    if (!read.ok()) return read.status();
    internal::TxnOps ops(read->txn.get(), impl_->dbis_);
    // A pointer into the map: the first meta record (every store has its format version).
    internal::Cursor c;
    if (int rc = c.Open(ops.txn(), ops.dbis().meta); rc != 0) return ops.Fail(rc, "meta cursor");
    MDB_val k, v;
    if (int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST); rc != 0) return ops.Fail(rc, "meta");
    uintptr_t map_begin = 0, map_end = 0;
    if (!MappingOf(v.mv_data, &map_begin, &map_end))
      return InternalError("the store's map is not in /proc/self/maps");
    MDB_envinfo info;
    MDB_stat stat;
    if (int rc = mdb_env_info(impl_->env_, &info); rc != 0) return internal::LmdbStatus(rc, "env info");
    if (int rc = mdb_env_stat(impl_->env_, &stat); rc != 0) return internal::LmdbStatus(rc, "env stat");
    // The pages up to the last committed one are in the file; past the map's end (another
    // process grew the store) is not mapped here.
    const uint64_t used = std::min<uint64_t>((info.me_last_pgno + 1) * stat.ms_psize, map_end - map_begin);
    if (offset == 0 && used > max_bytes) {
      return FailedPreconditionError("not warmed: the store's " + std::to_string(used >> 20) +
                                     " MiB in use are more than the " +
                                     std::to_string(max_bytes >> 20) + " MiB allowed");
    }
    if (offset >= used) return warmed;
    const uint64_t length = std::min(kChunk, used - offset);
    char* begin = reinterpret_cast<char*>(map_begin) + offset;
    if (populate && madvise(begin, length, MADV_POPULATE_READ) != 0) {
      if (errno != EINVAL) return InternalError(std::string("madvise(MADV_POPULATE_READ): ") + std::strerror(errno));
      populate = false;
    }
    if (!populate) {
      // One read per page maps it (and, through the kernel's fault-around, its neighbours).
      volatile const char* p = begin;
      char sink = 0;
      for (uint64_t i = 0; i < length; i += stat.ms_psize) sink = static_cast<char>(sink ^ p[i]);
      (void)sink;
    }
    warmed += length;
  }
}

}  // namespace shingled::store
