// WARC records into the ingest pipeline, shared by `shingled ingest FILE.warc[.gz]` and
// POST /v1/pages with a WARC body: which records become which pages (JobFromWarcRecord), and a
// PageFeeder that submits pages one at a time, waiting while the pipeline's queue is full, so that
// a WARC of any size streams through a bounded queue.
//
// Thread-safety: JobFromWarcRecord is a pure function. A PageFeeder's Submit and Wait are called
// by one thread; the callbacks it is given run on the pipeline's threads.
#ifndef SHINGLED_DAEMON_WARC_INGEST_H_
#define SHINGLED_DAEMON_WARC_INGEST_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>

#include "base/status.h"
#include "crawler/warc.h"
#include "daemon/ingest/ingest.h"
#include "store/types.h"

namespace shingled::daemon {

// The page a WARC record gives, with the record's WARC-Target-URI and WARC-Date, its status
// classified as on every way in (store::ClassifyHttpStatus):
//   `response` with a 2xx status, and `resource`: a page (its decoded body);
//   `response` with 404 or 410: a dead version;
//   `response` with 301, 302, 303, 307 or 308: a redirect to its HTTP Location header, resolved
//     against the target (RedirectTarget; no target when it is missing or not a URL); no body;
//   `response` with any other status (5xx, 429, ...): a failed attempt, without its body;
//   `revisit`: a revisit (PageJob::revisit) of the URL it refers to (WARC-Refers-To-Target-URI,
//     else the target of the record WARC-Refers-To names when `targets` knows it, else its own
//     target; crawler/warc.h) when it records a 2xx or 304 answer or none; else as a response
//     with its status;
//   nullopt with *skipped false: records that hold no page (request, metadata, warcinfo);
//   nullopt with *skipped true: targets of a scheme other than http and https (wget's own
//     metadata://gnu.org/... records).
// `targets` is the reader's (WarcReader::targets()), or null. Errors are InterpretRecord's (a
// malformed record), and InvalidArgument for an http(s) target that is not a valid URL
// (crawler::NormalizeUrl's reason: a host that is not UTF-8, a bad port, ...); the caller reports
// them with the record's offset.
StatusOr<std::optional<PageJob>> JobFromWarcRecord(const crawler::WarcRecord& record,
                                                   store::SweepId sweep, bool* skipped,
                                                   const crawler::WarcRecordTargets* targets);

class PageFeeder {
 public:
  using OnDone = std::function<void(PageOutcome)>;

  // `pipeline` must outlive the feeder. At most `max_in_flight` pages of this feeder wait in the
  // pipeline at once, so that one WARC does not take the whole queue from other clients.
  // REQUIRES: max_in_flight >= 1.
  PageFeeder(IngestPipeline* pipeline, size_t max_in_flight);
  // Waits for the pages in flight: their callbacks refer to the feeder.
  ~PageFeeder();
  PageFeeder(const PageFeeder&) = delete;
  PageFeeder& operator=(const PageFeeder&) = delete;

  // Submits one page, blocking while this feeder has max_in_flight pages in the pipeline or the
  // pipeline's queue is full. `on_done` runs once, on a pipeline thread, when the page is
  // committed or failed; it must not block. Unavailable once the pipeline is stopping, or the
  // pipeline's out-of-space error (store::IsOutOfSpace) while it is out of space (the page is
  // not submitted and `on_done` is not called).
  Status Submit(const PageJob& job, const OnDone& on_done);
  // Blocks until every submitted page is finished.
  void Wait();

 private:
  IngestPipeline* const pipeline_;
  const size_t max_in_flight_;
  // State below is protected by mu_.
  std::mutex mu_;
  std::condition_variable finished_;
  size_t in_flight_ = 0;
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_WARC_INGEST_H_
