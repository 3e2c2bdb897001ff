// One WARC upload (POST /v1/pages with Content-Type application/warc): the request body arrives
// on the session's strand (a BodySink) into a bounded BytePipe; a thread of the upload's own reads
// WARC records from the pipe and feeds them to the ingest pipeline through a PageFeeder; once the
// body has ended and every page is committed (durable), `done` gets the answer: a JSON summary
// with the verdict counts and each record that could not be stored, with its offset. The body is
// never held: at most the pipe's bound, the reader's buffer and one record.
//
// Why a thread per upload rather than the TaskPool: the reader blocks on the network; on the pool
// it would take a worker that sketching needs, and two uploads could starve the pool.
//
// Thread-safety: Write and Close are called from the session's strand, Abort and Join from any
// thread; `done` runs on the upload's thread.
#ifndef SHINGLED_DAEMON_WARC_UPLOAD_H_
#define SHINGLED_DAEMON_WARC_UPLOAD_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "crawler/byte_pipe.h"
#include "daemon/api/warc_slots.h"
#include "daemon/http/http_server.h"
#include "daemon/ingest/ingest.h"
#include "store/types.h"

namespace shingled::daemon {

struct WarcUploadOptions {
  // Body bytes held between the network and the reader. More lets the client run further ahead
  // of sketching; each upload holds this much at most.
  size_t pipe_bytes = 1 << 20;
  // Pages of this upload waiting in the ingest pipeline at once (PageFeeder).
  size_t max_in_flight = 256;
  int retry_after_s = 1;
  // The answer lists at most this many errors, and counts the rest.
  size_t max_errors_listed = 1000;
};

class WarcUpload final : public BodySink {
 public:
  using Done = std::function<void(Response)>;

  // Starts the reading thread. `pipeline` must outlive the upload; `client` is the uploader's
  // address, `request_id` the upload's request's (RequestIdOf).
  WarcUpload(IngestPipeline* pipeline, store::SweepId sweep, const WarcUploadOptions& options,
             std::string client, std::string request_id, Done done);
  // Abort() and Join().
  ~WarcUpload() override;
  WarcUpload(const WarcUpload&) = delete;
  WarcUpload& operator=(const WarcUpload&) = delete;

  Next Write(std::string_view bytes, std::function<void()> resume) override;
  void Close(Status status) override;

  // Stops reading (the server is stopping): the records read so far are still committed and
  // answered for, with 503. Does not wait.
  void Abort();
  // Stops reading because a newcomer takes the slot (warc_slots.h): as Abort, and the 503 says
  // `why`.
  void Reclaim(std::string why);
  bool reclaimed() const { return reclaimed_; }
  // The upload's request id, for the log lines about it.
  const std::string& request_id() const { return request_id_; }
  // How the upload uses its slot, at `now`.
  UploadFlow Flow(std::chrono::steady_clock::time_point now);
  // Waits for the thread, which ends after `done` ran.
  void Join();
  // Whether `done` ran (Join then returns at once).
  bool finished() const { return finished_; }

 private:
  struct ErrorEntry {
    uint64_t offset = 0;
    std::string url;
    std::string message;
  };

  void Run();
  void AddError(uint64_t offset, std::string url, std::string message);
  Response Answer(const Status& body_status, const Status& submit_status);

  IngestPipeline* const pipeline_;
  const store::SweepId sweep_;
  const WarcUploadOptions options_;
  Done done_;  // cleared once called: it holds the request's Reply
  const std::shared_ptr<crawler::BytePipe> pipe_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> reclaimed_{false};
  std::atomic<bool> finished_{false};

  // The pace of the client (Flow), protected by flow_mu_: Write runs on the session's strand,
  // the end of a wait for room on the reader's thread.
  const std::string client_;
  const std::string request_id_;
  const std::chrono::steady_clock::time_point started_;
  std::mutex flow_mu_;
  uint64_t received_ = 0;
  bool body_ended_ = false;
  std::chrono::steady_clock::duration held_{};  // the pipe full, in all
  std::optional<std::chrono::steady_clock::time_point> held_since_;
  std::string reclaimed_why_;

  // State below is protected by mu_ (page outcomes arrive on pipeline threads).
  std::mutex mu_;
  uint64_t records_ = 0, skipped_ = 0, pages_ = 0;
  uint64_t verdicts_[8] = {};  // by store::Verdict value
  std::vector<ErrorEntry> errors_;
  uint64_t errors_total_ = 0;

  std::thread thread_;  // last: started when everything above is ready
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_WARC_UPLOAD_H_
