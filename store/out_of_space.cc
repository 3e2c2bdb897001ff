// Out of space: the errors of a write that failed for lack of space, and whether there is room
// again (store.h, "out of space").
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "store/internal/store_impl.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {
namespace {

constexpr std::string_view kDiskFull = "disk full: ";
constexpr std::string_view kMapFull = "map full: ";

}  // namespace

Status DiskFullError(std::string_view detail) {
  std::string message(kDiskFull);
  message.append(detail);
  return ResourceExhaustedError(std::move(message));
}

Status MapFullError(std::string_view detail) {
  std::string message(kMapFull);
  message.append(detail);
  return ResourceExhaustedError(std::move(message));
}

std::string_view OutOfSpaceReason(const Status& status) {
  if (status.code() != StatusCode::kResourceExhausted) return "";
  if (status.message().starts_with(kDiskFull)) return "disk_full";
  if (status.message().starts_with(kMapFull)) return "map_full";
  return "";
}

bool IsOutOfSpace(const Status& status) { return !OutOfSpaceReason(status).empty(); }

Status LmdbStore::WriteRoom() const {
  SHINGLED_RETURN_IF_ERROR(impl_->DiskRoom(kResumeFreeBytes, "writes wait for room"));
  const uint64_t full_at = impl_->map_full_at_;
  const uint64_t limit = impl_->max_map_size_;
  if (full_at != 0 && (!impl_->options_.grow_map || limit <= full_at)) {
    std::string detail = "the store's map was full at ";
    detail.append(std::to_string(full_at))
        .append(" bytes and may not grow (grow_map = ")
        .append(impl_->options_.grow_map ? "true" : "false")
        .append(", store.max_map_size = ")
        .append(std::to_string(limit))
        .append("); raise store.max_map_size and reload (SIGHUP)");
    return MapFullError(detail);
  }
  return OkStatus();
}

uint64_t LmdbStore::max_map_size() const { return impl_->max_map_size_; }

Status LmdbStore::SetMaxMapSize(uint64_t bytes) {
  if (bytes < impl_->options_.initial_map_size) {
    std::string message = "max_map_size ";
    message.append(std::to_string(bytes))
        .append(" is below initial_map_size ")
        .append(std::to_string(impl_->options_.initial_map_size));
    return InvalidArgumentError(message);
  }
  impl_->max_map_size_ = bytes;
  return OkStatus();
}

namespace internal {

Status StoreImpl::DiskRoom(uint64_t min_free, std::string_view what) const {
  struct statvfs fs {};
  if (statvfs(dir_.c_str(), &fs) != 0) return OkStatus();
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes >= min_free) return OkStatus();
  std::string detail(what);
  detail.append(": ")
      .append(std::to_string(free_bytes))
      .append(" bytes free on the file system of the store ")
      .append(dir_)
      .append(", fewer than ")
      .append(std::to_string(min_free));
  return DiskFullError(detail);
}

Status StoreImpl::AllocateLockFile() const {
  // LMDB writes its lock file (a table of max_readers reader slots, mdb_env_set_maxreaders)
  // through a memory map, so a disk with no block for it ends the process with SIGBUS. Reserve
  // a bound on the table's size that does not depend on its layout: 256 bytes a slot (LMDB 0.9
  // uses a 64-byte cache line) and 4 KiB; FALLOC_FL_KEEP_SIZE leaves the file's size to LMDB.
  const uint64_t needed = uint64_t{options_.max_readers} * 256 + 4096;
  const std::string path = dir_ + "/lock.mdb";
  struct stat st {};
  const bool existed = stat(path.c_str(), &st) == 0;
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return OkStatus();  // LMDB says why it cannot open it
  const uint64_t length = std::max<uint64_t>(needed, existed ? st.st_size : 0);
  const int rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(length));
  const int error = errno;
  close(fd);
  if (rc == 0 || existed || (error != ENOSPC && error != EDQUOT)) return OkStatus();
  unlink(path.c_str());
  std::string detail = "cannot allocate the store's lock file ";
  detail.append(path)
      .append(" (")
      .append(std::to_string(length))
      .append(" bytes): ")
      .append(strerror(error));
  Status room = DiskRoom(length + kResumeFreeBytes, detail);
  return room.ok() ? DiskFullError(detail) : room;
}

}  // namespace internal
}  // namespace shingled::store
