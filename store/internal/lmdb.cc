#include "store/internal/lmdb.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <string>

namespace shingled::store::internal {

namespace {

// The first 8 (or 4) bytes at `p` as a number that orders like the bytes.
inline uint64_t Load64(const unsigned char* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  if constexpr (std::endian::native == std::endian::little) x = __builtin_bswap64(x);
  return x;
}
inline uint32_t Load32(const unsigned char* p) {
  uint32_t x;
  std::memcpy(&x, p, 4);
  if constexpr (std::endian::native == std::endian::little) x = __builtin_bswap32(x);
  return x;
}

}  // namespace

int CompareBytes(const MDB_val* a, const MDB_val* b) {
  const auto* p = static_cast<const unsigned char*>(a->mv_data);
  const auto* q = static_cast<const unsigned char*>(b->mv_data);
  const size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x = Load64(p + i), y = Load64(q + i);
    if (x != y) return x < y ? -1 : 1;
  }
  if (i + 4 <= n) {
    uint32_t x = Load32(p + i), y = Load32(q + i);
    if (x != y) return x < y ? -1 : 1;
    i += 4;
  }
  for (; i < n; ++i) {
    if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
  }
  return a->mv_size < b->mv_size ? -1 : (a->mv_size > b->mv_size ? 1 : 0);
}

Status LmdbStatus(int rc, std::string_view context) {
  if (rc == MDB_SUCCESS) return OkStatus();
  std::string message(context);
  message += ": ";
  message += mdb_strerror(rc);
  switch (rc) {
    case MDB_NOTFOUND:
      return NotFoundError(std::move(message));
    case MDB_MAP_FULL:
    case MDB_READERS_FULL:
    case MDB_TXN_FULL:
    case MDB_DBS_FULL:
    case MDB_TLS_FULL:
      return ResourceExhaustedError(std::move(message));
    case ENOSPC:
    case EDQUOT:
      return ResourceExhaustedError(std::move(message) + " (disk full)");
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
      return DataLossError(std::move(message));
    case MDB_VERSION_MISMATCH:
    case MDB_INCOMPATIBLE:
    case EACCES:
    case EROFS:
    case EAGAIN:
      return FailedPreconditionError(std::move(message));
    case MDB_MAP_RESIZED:
      return UnavailableError(std::move(message));
    case ENOENT:
      return NotFoundError(std::move(message));
    default:
      return InternalError(std::move(message));
  }
}

}  // namespace shingled::store::internal
