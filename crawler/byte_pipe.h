// BytePipe: a ByteSource (crawler/warc.h) fed by another thread, with a bound on the bytes held
// in between. It lets an asynchronous producer (an HTTP request body arriving piece by piece)
// feed the pull-style WarcReader running on a worker thread, without holding the whole body:
// Write() blocks while the pipe is full. A producer that must not block (an I/O thread reading
// a request body) uses WriteOrNotify() instead and is called back when there is room again.
//
// Thread-safety: one producer thread (Write, Close) and one consumer thread (Read, Cancel) may
// use a BytePipe at the same time.
#ifndef SHINGLED_CRAWLER_BYTE_PIPE_H_
#define SHINGLED_CRAWLER_BYTE_PIPE_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "crawler/warc.h"

namespace shingled::crawler {

class BytePipe final : public ByteSource {
 public:
  // REQUIRES: max_bytes > 0. A larger bound lets the producer run further ahead.
  explicit BytePipe(size_t max_bytes) : max_bytes_(max_bytes) {}
  BytePipe(const BytePipe&) = delete;
  BytePipe& operator=(const BytePipe&) = delete;

  // Producer: appends `bytes`, blocking while the pipe is full. Returns false (dropping the
  // bytes) once the consumer has cancelled. REQUIRES: not closed.
  bool Write(std::string_view bytes);

  enum class Offer {
    kMore,       // the bytes are in, and there is room for more
    kFull,       // the bytes are in; the pipe is at its bound: wait for `on_space`
    kCancelled,  // the consumer has cancelled: the bytes were dropped
  };
  // Producer, without blocking: appends all of `bytes` (so the pipe may hold up to
  // max_bytes - 1 + bytes.size()). On kFull, `on_space` is called once, on the consumer's thread
  // (from Read or Cancel, without the pipe's lock held), when the pipe has room again or was
  // cancelled; it must not block. REQUIRES: not closed; no earlier `on_space` still pending.
  Offer WriteOrNotify(std::string_view bytes, std::function<void()> on_space);
  // Producer: no more bytes. A non-OK `status` (the upload broke) is what Read() then returns.
  void Close(Status status = OkStatus());

  // Consumer: blocks until bytes are there or the pipe is closed; 0 at the end.
  StatusOr<size_t> Read(char* buffer, size_t size) override;
  // Consumer: stops reading; a blocked or later Write() returns false.
  void Cancel();

 private:
  const size_t max_bytes_;
  // State below is protected by mu_.
  std::mutex mu_;
  std::condition_variable changed_;
  std::string buffer_;
  size_t read_pos_ = 0;
  bool closed_ = false;
  bool cancelled_ = false;
  Status close_status_;
  std::function<void()> on_space_;  // a WriteOrNotify producer waiting for room
};

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_BYTE_PIPE_H_
