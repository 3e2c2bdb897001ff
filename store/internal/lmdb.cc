#include "store/internal/lmdb.h"

#include <cerrno>
#include <string>

namespace shingled::store::internal {

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
