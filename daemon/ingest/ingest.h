// The ingest pipeline: pages are sketched in parallel on a TaskPool, then decided and recorded by
// ONE writer thread that commits whatever is queued, up to a batch limit, in one Store::Apply
// (group commit). A page's callback runs only after its batch is durable.
//
// Admission is bounded: pages and body bytes accepted but not yet committed are capped, and a
// submission over the cap is refused whole (ResourceExhausted) rather than queued: the HTTP layer
// answers 503 with Retry-After. Everything queued between the stages is therefore bounded too.
//
// Pages reach the writer in the order they were admitted, whatever order their sketches finish
// in, so that which of two copies is "the original" does not depend on thread timing.
//
// Sketching goes through dedup::SketchPage, so a change of canonicalizer needs no change here.
// A page whose raw bytes are already stored (one hash pass and one lookup of its identical
// fingerprint) is not sketched at all: the store keeps one document per distinct raw content,
// so that document's stored sketch is the page's. Recrawls, where most pages are unchanged, and
// mirrors pay for a sketch only once per content.
//
// Thread-safety: Submit, Stop and the accessors are safe to call from any thread. Callbacks run on
// the writer thread (or a sketch worker, for a page that failed there) and must not block.
#ifndef SHINGLED_DAEMON_INGEST_H_
#define SHINGLED_DAEMON_INGEST_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "daemon/ingest/batch_sizer.h"
#include "daemon/ingest/task_pool.h"
#include "daemon/metrics/metrics.h"
#include "dedup/sketch.h"
#include "dedup/streaming_canonicalizer.h"
#include "store/store.h"

namespace shingled::daemon {

struct PageJob {
  std::string url;
  store::SweepId sweep = 0;
  int64_t date = 0;  // Unix seconds
  // store::ClassifyHttpStatus decides: only 2xx is sketched as content; 404 and 410 are dead;
  // a redirect records `redirect_target`; any other status (0: no answer) is a failed attempt.
  int http_status = 200;
  std::string redirect_target;  // a redirect's, normalized (RedirectTarget); may be empty
  std::string content_type;     // the HTTP Content-Type, may be empty
  std::string body;
  std::string canonical_link;  // <link rel=canonical>, recorded on the version; may be empty
  // A revisit (a WARC `revisit` record, store::PageInput::revisit): no body, not sketched; the
  // version points at the last document of `revisit_of` (empty: `url` itself).
  bool revisit = false;
  std::string revisit_of;
  // The id of the HTTP request that brought the page (daemon/http RequestIdOf), for the log
  // line of a commit that fails; empty for the crawler's and the command line's pages.
  std::string request_id;
};

// The outcome of one page: a PageResult, or why it was not stored.
struct PageOutcome {
  Status status;
  store::PageResult result;  // meaningful when status is OK
  std::string content_kind;  // "html", "text" or "binary"
};

struct PipelineOptions {
  size_t queue_pages = 32768;
  uint64_t queue_bytes = uint64_t{256} << 20;
  // A group commit takes at most batch_pages (and at most queue_pages); after a failed commit,
  // at most min_batch_pages for a while. With measure_batch_size a BatchSizer chooses between
  // the two by measuring (config/shingled.toml, [ingest]).
  size_t min_batch_pages = 1000;
  size_t batch_pages = 16000;
  bool measure_batch_size = false;
  dedup::CanonicalizerKind canonicalizer = dedup::CanonicalizerKind::kStreaming;
};

class IngestPipeline {
 public:
  using Done = std::function<void(std::vector<PageOutcome>)>;

  // `store`, `context`, `pool` and `metrics` (may be null) must outlive the pipeline. Starts the
  // writer thread.
  IngestPipeline(store::Store* store, std::shared_ptr<const dedup::SketchContext> context,
                 TaskPool* pool, Metrics* metrics, const PipelineOptions& options);
  // Stop() with no deadline.
  ~IngestPipeline();
  IngestPipeline(const IngestPipeline&) = delete;
  IngestPipeline& operator=(const IngestPipeline&) = delete;

  // Admits all of `jobs` or none: ResourceExhausted when they would take the queue over its page
  // or byte bound (or when they alone exceed it), Unavailable once stopping. On OK, `done` is
  // called once with one outcome per job, in order, after the last of them is committed. A page
  // the store refuses (closed sweep) has its own non-OK status; a failed commit gives every page
  // of the batch Unavailable.
  Status Submit(std::vector<PageJob> jobs, Done done);

  // Accepts nothing more; waits until everything admitted is committed or `deadline` passes;
  // then stops the writer (a batch being committed finishes; pages not yet committed are failed
  // with Unavailable). Idempotent.
  void Stop(std::chrono::steady_clock::time_point deadline =
                std::chrono::steady_clock::time_point::max());

  // false after a failed commit: the store refuses writes until it is reopened.
  bool healthy() const;

  // --- out of space (a full disk or map; writes resume on their own) ---
  // After a commit that failed for lack of space (store::IsOutOfSpace), the pipeline is "out of
  // space": Submit refuses with that error, pages already admitted are failed with it without a
  // commit, and the writer asks the store for room (Store::WriteRoom) with a growing backoff
  // (kFirstRoomCheck doubling to kLastRoomCheck). Once there is room, writes resume; a commit
  // that fails again starts it over. OK while writes go on, else the out-of-space error (what is
  // short, as of the last check).
  Status out_of_space() const;
  // Starts out of space without a failed commit: the daemon started on a disk already full
  // (`room` is Store::WriteRoom's error). Writes wait for room as above.
  void StartOutOfSpace(Status room);
  static constexpr std::chrono::milliseconds kFirstRoomCheck{100};
  static constexpr std::chrono::milliseconds kLastRoomCheck{5000};
  size_t queued_pages() const;
  // The sketch context pages are fingerprinted with (for Store::FindIdentical lookups).
  const dedup::SketchContext& context() const { return *context_; }

 private:
  struct Group;
  struct Item;

  void Sketch(std::shared_ptr<Group> group, size_t index, uint64_t seq, PageJob job,
              std::chrono::steady_clock::time_point admitted);
  // Fills `*sketch` from the stored document with the same raw bytes as `body`, if there is one.
  bool ReuseStoredSketch(std::string_view body, dedup::Sketch* sketch) const;
  void WriterLoop();
  void Finish(Item& item, PageOutcome outcome);
  // " request_ids=A,B" of the requests whose pages `batch` holds (the first few, distinct), for
  // the log line of a failed commit; "" when none came from a request.
  static std::string RequestIdsOf(const std::vector<Item>& batch);
  // Moves sketched items that are next in admission order to the writer queue; returns the
  // cancelled ones, for the caller to finish outside the lock. REQUIRES: mu_ held.
  std::vector<Item> MoveReadyLocked();
  void Release(size_t pages, uint64_t bytes);

  store::Store* const store_;
  const std::shared_ptr<const dedup::SketchContext> context_;
  TaskPool* const pool_;
  Metrics* const metrics_;
  const PipelineOptions options_;

  std::atomic<bool> healthy_{true};

  // State below is protected by mu_.
  mutable std::mutex mu_;
  std::condition_variable writer_cv_;   // items queued, or stop
  std::condition_variable drained_cv_;  // admitted pages went to zero
  std::deque<Item> writer_queue_;
  std::map<uint64_t, Item> sketched_;  // by admission sequence, waiting for earlier pages
  uint64_t next_seq_ = 0;              // given to the next admitted page
  uint64_t next_write_seq_ = 0;        // the next page the writer queue takes
  size_t admitted_pages_ = 0;
  uint64_t admitted_bytes_ = 0;
  bool stopping_ = false;     // Submit refuses
  bool stop_writer_ = false;  // the writer exits when its queue is empty
  // Out of space (out_of_space()): the error, and when the writer next asks for room.
  Status out_of_space_;
  std::chrono::steady_clock::time_point next_room_check_;
  std::chrono::milliseconds room_backoff_{kFirstRoomCheck};

  // The writer's wait for a batch while out of space: checks for room when due. Returns false
  // when stopping with nothing queued. REQUIRES: mu_ held by `lock`.
  bool WaitOutOfSpace(std::unique_lock<std::mutex>& lock);

  BatchSizer sizer_;  // the writer thread's own
  std::thread writer_;
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_INGEST_H_
