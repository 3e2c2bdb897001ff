#include "crawler/byte_pipe.h"

#include <algorithm>
#include <cstring>

namespace shingled::crawler {

bool BytePipe::Write(std::string_view bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!bytes.empty()) {
    changed_.wait(lock, [&] { return cancelled_ || buffer_.size() - read_pos_ < max_bytes_; });
    if (cancelled_) return false;
    if (read_pos_ > 0) {  // compact before growing: the buffer never exceeds max_bytes_
      buffer_.erase(0, read_pos_);
      read_pos_ = 0;
    }
    const size_t take = std::min(bytes.size(), max_bytes_ - buffer_.size());
    buffer_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    changed_.notify_all();
  }
  return true;
}

BytePipe::Offer BytePipe::WriteOrNotify(std::string_view bytes, std::function<void()> on_space) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return Offer::kCancelled;
  if (read_pos_ > 0) {
    buffer_.erase(0, read_pos_);
    read_pos_ = 0;
  }
  buffer_.append(bytes);
  changed_.notify_all();
  if (buffer_.size() < max_bytes_) return Offer::kMore;
  on_space_ = std::move(on_space);
  return Offer::kFull;
}

void BytePipe::Close(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  close_status_ = std::move(status);
  changed_.notify_all();
}

StatusOr<size_t> BytePipe::Read(char* buffer, size_t size) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return read_pos_ < buffer_.size() || closed_ || cancelled_; });
  if (cancelled_) return FailedPreconditionError("read after Cancel()");
  if (read_pos_ == buffer_.size()) {
    if (!close_status_.ok()) return close_status_;
    return size_t{0};
  }
  const size_t n = std::min(size, buffer_.size() - read_pos_);
  std::memcpy(buffer, buffer_.data() + read_pos_, n);
  read_pos_ += n;
  changed_.notify_all();
  std::function<void()> on_space;
  if (on_space_ && buffer_.size() - read_pos_ < max_bytes_) on_space.swap(on_space_);
  lock.unlock();
  if (on_space) on_space();
  return n;
}

void BytePipe::Cancel() {
  std::function<void()> on_space;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    changed_.notify_all();
    on_space.swap(on_space_);
  }
  if (on_space) on_space();
}

}  // namespace shingled::crawler
