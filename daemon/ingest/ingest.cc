#include "daemon/ingest/ingest.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "dedup/charset.h"

namespace shingled::daemon {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string_view ContentKindName(const PageJob& job) {
  const dedup::ContentType type = dedup::ParseContentType(job.content_type);
  const std::string_view head = std::string_view(job.body).substr(0, dedup::kSniffBytes);
  switch (dedup::DetectContentKind(type.mime, head)) {
    case dedup::ContentKind::kHtml:
      return "html";
    case dedup::ContentKind::kText:
      return "text";
    case dedup::ContentKind::kBinary:
      return "binary";
  }
  return "binary";
}

}  // namespace

// The pages of one submission; `done` runs when the last one is finished.
struct IngestPipeline::Group {
  Group(size_t n, Done d) : outcomes(n), remaining(n), done(std::move(d)) {}
  std::vector<PageOutcome> outcomes;  // each slot written by one thread, once
  std::atomic<size_t> remaining;
  Done done;
};

// A sketched page waiting for the writer.
struct IngestPipeline::Item {
  std::shared_ptr<Group> group;
  size_t index = 0;
  uint64_t seq = 0;
  bool cancelled = false;
  store::PageInput input;
  Clock::time_point admitted;
  std::string content_kind;
  uint64_t bytes = 0;
  std::string request_id;  // PageJob::request_id
};

IngestPipeline::IngestPipeline(store::Store* store,
                               std::shared_ptr<const dedup::SketchContext> context, TaskPool* pool,
                               Metrics* metrics, const PipelineOptions& options)
    : store_(store),
      context_(std::move(context)),
      pool_(pool),
      metrics_(metrics),
      options_(options),
      // A commit cannot take more than the queue holds: a limit above it would never be filled,
      // and the sizer learns only from full commits.
      sizer_(BatchSizer::Options{.min_pages = options.min_batch_pages,
                                 .max_pages = std::min(options.batch_pages, options.queue_pages),
                                 .explore = options.measure_batch_size}),
      writer_([this] { WriterLoop(); }) {
  if (metrics_ != nullptr) {
    metrics_->SetBatchLimit(sizer_.chosen());
    metrics_->SetQueueCapacity(options.queue_pages, options.queue_bytes);
  }
}

IngestPipeline::~IngestPipeline() { Stop(); }

Status IngestPipeline::Submit(std::vector<PageJob> jobs, Done done) {
  if (jobs.empty()) {
    done({});
    return OkStatus();
  }
  uint64_t bytes = 0;
  uint64_t first_seq = 0;
  for (const PageJob& job : jobs) bytes += job.body.size();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return UnavailableError("the server is shutting down");
    if (!out_of_space_.ok()) return out_of_space_;
    if (admitted_pages_ + jobs.size() > options_.queue_pages ||
        admitted_bytes_ + bytes > options_.queue_bytes) {
      return ResourceExhaustedError("the ingest queue is full (" + std::to_string(admitted_pages_) +
                                    " pages, " + std::to_string(admitted_bytes_) +
                                    " bytes waiting); retry later");
    }
    admitted_pages_ += jobs.size();
    admitted_bytes_ += bytes;
    first_seq = next_seq_;
    next_seq_ += jobs.size();
    if (metrics_ != nullptr) metrics_->SetQueue(admitted_pages_, admitted_bytes_);
  }
  auto group = std::make_shared<Group>(jobs.size(), std::move(done));
  const Clock::time_point now = Clock::now();
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto job = std::make_shared<PageJob>(std::move(jobs[i]));
    const uint64_t seq = first_seq + i;
    const bool queued = pool_->SubmitAdmitted(
        [this, group, i, seq, job, now] { Sketch(group, i, seq, std::move(*job), now); });
    if (!queued) {
      // Stopping: the page still takes its turn in the order, as a cancelled item.
      Release(0, job->body.size());
      Item item;
      item.group = group;
      item.index = i;
      item.seq = seq;
      item.cancelled = true;
      std::vector<Item> cancelled;
      {
        std::lock_guard<std::mutex> lock(mu_);
        sketched_.emplace(seq, std::move(item));
        cancelled = MoveReadyLocked();
      }
      for (Item& c : cancelled)
        Finish(c, {UnavailableError("the server is shutting down"), {}, ""});
    }
  }
  return OkStatus();
}

void IngestPipeline::Sketch(std::shared_ptr<Group> group, size_t index, uint64_t seq, PageJob job,
                            Clock::time_point admitted) {
  Item item;
  item.group = std::move(group);
  item.index = index;
  item.seq = seq;
  item.admitted = admitted;
  item.bytes = job.body.size();
  item.content_kind = ContentKindName(job);
  item.request_id = std::move(job.request_id);
  // Only content is sketched: dead pages, redirects and failed fetches are recorded without a
  // document, and revisits point at one already stored.
  const bool content = store::ClassifyHttpStatus(job.http_status) == store::StatusClass::kContent;
  if (content && !job.revisit) {
    const Clock::time_point start = Clock::now();
    if (ReuseStoredSketch(job.body, &item.input.sketch)) {
      if (metrics_ != nullptr) metrics_->SketchReused();
    } else {
      item.input.sketch =
          dedup::SketchPage(*context_, job.body, job.content_type, options_.canonicalizer);
      if (metrics_ != nullptr) metrics_->Sketched(SecondsSince(start));
    }
  }
  item.input.url = std::move(job.url);
  item.input.sweep = job.sweep;
  item.input.date = job.date;
  item.input.http_status = job.http_status;
  item.input.redirect_target = std::move(job.redirect_target);
  item.input.canonical_link = std::move(job.canonical_link);
  item.input.revisit = job.revisit;
  item.input.revisit_of = std::move(job.revisit_of);
  Release(0, item.bytes);
  std::vector<Item> cancelled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_writer_) {
      cancelled.push_back(std::move(item));
    } else {
      sketched_.emplace(seq, std::move(item));
      std::vector<Item> ready_cancelled = MoveReadyLocked();
      for (Item& c : ready_cancelled) cancelled.push_back(std::move(c));
    }
  }
  for (Item& c : cancelled) {
    Finish(c, {UnavailableError("the server is shutting down"), {}, c.content_kind});
  }
}

bool IngestPipeline::ReuseStoredSketch(std::string_view body, dedup::Sketch* sketch) const {
  const dedup::Fingerprint128 identical = dedup::IdenticalFingerprint(*context_, body);
  StatusOr<store::DocId> doc = store_->FindIdentical(identical);
  if (!doc.ok() || *doc == 0) return false;  // a read error: sketching is the safe way on
  StatusOr<store::DocumentInfo> info = store_->Document(*doc);
  if (!info.ok() || info->sketch.identical != identical) return false;
  *sketch = std::move(info->sketch);
  return true;
}

std::string IngestPipeline::RequestIdsOf(const std::vector<Item>& batch) {
  // A commit may hold the pages of many requests: the first few ids, in the batch's order, are
  // enough to find the line from a client's report, and keep it short.
  constexpr size_t kMaxNamed = 8;
  std::set<std::string_view> seen;
  std::string named;
  for (const Item& item : batch) {
    if (item.request_id.empty() || !seen.insert(item.request_id).second) continue;
    if (seen.size() > kMaxNamed) continue;
    named += (named.empty() ? " request_ids=" : ",") + item.request_id;
  }
  if (seen.size() > kMaxNamed)
    named += " (and " + std::to_string(seen.size() - kMaxNamed) + " more)";
  return named;
}

std::vector<IngestPipeline::Item> IngestPipeline::MoveReadyLocked() {
  std::vector<Item> cancelled;
  bool moved = false;
  for (auto it = sketched_.begin(); it != sketched_.end() && it->first == next_write_seq_;
       it = sketched_.erase(it)) {
    ++next_write_seq_;
    if (it->second.cancelled) {
      cancelled.push_back(std::move(it->second));
    } else {
      writer_queue_.push_back(std::move(it->second));
      moved = true;
    }
  }
  if (moved) writer_cv_.notify_one();
  return cancelled;
}

bool IngestPipeline::WaitOutOfSpace(std::unique_lock<std::mutex>& lock) {
  const auto ready = [this] { return stop_writer_ || !writer_queue_.empty(); };
  for (;;) {
    while (!out_of_space_.ok()) {
      // Pages admitted before it ran out are failed below, without a commit.
      if (!writer_queue_.empty()) return true;
      if (stop_writer_) return false;
      if (writer_cv_.wait_until(lock, next_room_check_, ready)) continue;
      lock.unlock();
      Status room = store_->WriteRoom();
      lock.lock();
      if (room.ok()) {
        spdlog::info("the store has room again ({}); writes resume", out_of_space_.message());
        out_of_space_ = OkStatus();
        if (metrics_ != nullptr) metrics_->SetOutOfSpace(false);
      } else {
        out_of_space_ = std::move(room);
        room_backoff_ = std::min(room_backoff_ * 2, kLastRoomCheck);
        next_room_check_ = Clock::now() + room_backoff_;
      }
    }
    // Also woken by StartOutOfSpace, to look for room from then on.
    writer_cv_.wait(lock, [&] { return ready() || !out_of_space_.ok(); });
    if (ready()) return !writer_queue_.empty();  // else stopping, and nothing left
  }
}

void IngestPipeline::WriterLoop() {
  // Named for top -H and the soak's CPU per page of the writer (scripts/soak.sh).
  pthread_setname_np(pthread_self(), "writer");
  for (;;) {
    std::vector<Item> batch;
    Status out_of_space;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!WaitOutOfSpace(lock)) return;
      out_of_space = out_of_space_;
      // Group commit: whatever is queued now, up to the batch limit.
      const size_t limit = sizer_.limit();
      while (!writer_queue_.empty() && batch.size() < limit) {
        batch.push_back(std::move(writer_queue_.front()));
        writer_queue_.pop_front();
      }
    }
    if (!out_of_space.ok()) {
      for (Item& item : batch) {
        if (metrics_ != nullptr) metrics_->PageFailed("commit");
        Finish(item, {out_of_space, {}, item.content_kind});
      }
      continue;
    }
    std::vector<store::PageInput> inputs;
    inputs.reserve(batch.size());
    for (Item& item : batch) inputs.push_back(std::move(item.input));
    const Clock::time_point start = Clock::now();
    StatusOr<std::vector<store::PageResult>> results = store_->Apply(inputs);
    if (!results.ok()) {
      spdlog::error("store commit of {} pages failed: {}{}", batch.size(),
                    results.status().ToString(), RequestIdsOf(batch));
      sizer_.Failed();
      const std::string_view space = store::OutOfSpaceReason(results.status());
      if (metrics_ != nullptr) {
        metrics_->CommitFailed(space.empty() ? "error" : space);
        metrics_->SetBatchLimit(sizer_.chosen());
      }
      if (!store_->health().ok()) healthy_ = false;
      // Lack of space: the pages are answered with it (what is full, and how full); writes
      // stop until there is room. Otherwise a generic retry.
      Status failed = UnavailableError("the store could not commit the page; retry later");
      if (!space.empty()) {
        failed = results.status();
        std::lock_guard<std::mutex> lock(mu_);
        out_of_space_ = failed;
        room_backoff_ = kFirstRoomCheck;
        next_room_check_ = Clock::now() + room_backoff_;
        if (metrics_ != nullptr) metrics_->SetOutOfSpace(true);
      }
      for (Item& item : batch) {
        if (metrics_ != nullptr) metrics_->PageFailed("commit");
        Finish(item, {failed, {}, item.content_kind});
      }
      continue;
    }
    const double seconds = SecondsSince(start);
    sizer_.Committed(batch.size(), seconds);
    if (metrics_ != nullptr) {
      metrics_->Committed(batch.size(), seconds);
      metrics_->SetBatchLimit(sizer_.chosen());
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      store::PageResult& r = (*results)[i];
      Item& item = batch[i];
      if (metrics_ != nullptr) {
        if (r.status.ok()) {
          // The body of a redirect or a failed fetch is not stored: no bytes ingested.
          const bool attempt =
              r.verdict == store::Verdict::kFailed || r.verdict == store::Verdict::kRedirect;
          metrics_->PageIngested(r.verdict, item.content_kind, attempt ? 0 : item.bytes,
                                 SecondsSince(item.admitted));
        } else {
          metrics_->PageFailed("rejected");
        }
      }
      Status status = r.status;
      Finish(item, {std::move(status), std::move(r), item.content_kind});
    }
  }
}

void IngestPipeline::Finish(Item& item, PageOutcome outcome) {
  item.group->outcomes[item.index] = std::move(outcome);
  if (--item.group->remaining == 0) item.group->done(std::move(item.group->outcomes));
  Release(1, 0);
}

void IngestPipeline::Release(size_t pages, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  admitted_pages_ -= pages;
  admitted_bytes_ -= bytes;
  if (metrics_ != nullptr) metrics_->SetQueue(admitted_pages_, admitted_bytes_);
  if (admitted_pages_ == 0) drained_cv_.notify_all();
}

void IngestPipeline::Stop(Clock::time_point deadline) {
  std::deque<Item> abandoned;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_writer_) return;
    stopping_ = true;
    auto drained = [this] { return admitted_pages_ == 0; };
    if (deadline == Clock::time_point::max()) {
      drained_cv_.wait(lock, drained);
    } else if (!drained_cv_.wait_until(lock, deadline, drained)) {
      // Past the deadline: what the writer has not started on is given up.
      abandoned.swap(writer_queue_);
      for (auto& [seq, item] : sketched_) abandoned.push_back(std::move(item));
      sketched_.clear();
      spdlog::warn("shutdown deadline passed with {} pages uncommitted; {} are cancelled",
                   admitted_pages_, abandoned.size());
    }
    stop_writer_ = true;
  }
  writer_cv_.notify_all();
  for (Item& item : abandoned) {
    Finish(item, {UnavailableError("the server is shutting down"), {}, item.content_kind});
  }
  if (writer_.joinable()) writer_.join();
}

bool IngestPipeline::healthy() const { return healthy_; }

Status IngestPipeline::out_of_space() const {
  std::lock_guard<std::mutex> lock(mu_);
  return out_of_space_;
}

void IngestPipeline::StartOutOfSpace(Status room) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    out_of_space_ = std::move(room);
    room_backoff_ = kFirstRoomCheck;
    next_room_check_ = Clock::now() + room_backoff_;
    if (metrics_ != nullptr) metrics_->SetOutOfSpace(true);
  }
  writer_cv_.notify_all();
}

size_t IngestPipeline::queued_pages() const {
  std::lock_guard<std::mutex> lock(mu_);
  return admitted_pages_;
}

}  // namespace shingled::daemon
