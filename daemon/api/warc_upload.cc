#include "daemon/api/warc_upload.h"

#include <algorithm>
#include <limits>

#include "crawler/warc.h"
#include "daemon/ingest/warc_ingest.h"

namespace shingled::daemon {
namespace {

// The reader's end of the shared pipe (a WarcReader owns its ByteSource).
class PipeSource final : public crawler::ByteSource {
 public:
  explicit PipeSource(std::shared_ptr<crawler::BytePipe> pipe) : pipe_(std::move(pipe)) {}
  StatusOr<size_t> Read(char* buffer, size_t size) override { return pipe_->Read(buffer, size); }

 private:
  std::shared_ptr<crawler::BytePipe> pipe_;
};

}  // namespace

WarcUpload::WarcUpload(IngestPipeline* pipeline, store::SweepId sweep,
                       const WarcUploadOptions& options, std::string client, std::string request_id,
                       Done done)
    : pipeline_(pipeline),
      sweep_(sweep),
      options_(options),
      done_(std::move(done)),
      pipe_(std::make_shared<crawler::BytePipe>(options.pipe_bytes)),
      client_(std::move(client)),
      request_id_(std::move(request_id)),
      started_(std::chrono::steady_clock::now()),
      thread_([this] { Run(); }) {}

WarcUpload::~WarcUpload() {
  Abort();
  Join();
}

BodySink::Next WarcUpload::Write(std::string_view bytes, std::function<void()> resume) {
  {
    std::lock_guard<std::mutex> lock(flow_mu_);
    received_ += bytes.size();
  }
  // The wait for room is the daemon's time, not the client's: Flow leaves it out. `this` outlives
  // the callback: the pipe calls it from Read (the upload's thread) or Cancel (Abort, at the
  // latest in the destructor).
  auto on_space = [this, resume = std::move(resume)] {
    {
      std::lock_guard<std::mutex> lock(flow_mu_);
      if (held_since_) held_ += std::chrono::steady_clock::now() - *held_since_;
      held_since_.reset();
    }
    resume();
  };
  std::lock_guard<std::mutex> lock(flow_mu_);
  switch (pipe_->WriteOrNotify(bytes, std::move(on_space))) {
    case crawler::BytePipe::Offer::kMore:
      return Next::kMore;
    case crawler::BytePipe::Offer::kFull:
      if (!held_since_) held_since_ = std::chrono::steady_clock::now();
      return Next::kWait;
    case crawler::BytePipe::Offer::kCancelled:
      return Next::kStop;
  }
  return Next::kStop;
}

void WarcUpload::Close(Status status) {
  {
    std::lock_guard<std::mutex> lock(flow_mu_);
    body_ended_ = true;
  }
  pipe_->Close(std::move(status));
}

void WarcUpload::Abort() {
  aborted_ = true;
  pipe_->Cancel();
}

void WarcUpload::Reclaim(std::string why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    reclaimed_why_ = std::move(why);
  }
  reclaimed_ = true;
  Abort();
}

UploadFlow WarcUpload::Flow(std::chrono::steady_clock::time_point now) {
  std::lock_guard<std::mutex> lock(flow_mu_);
  UploadFlow f{.client = client_, .age = now - started_};
  const auto held = held_ + (held_since_ ? now - *held_since_ : std::chrono::steady_clock::duration{});
  const double taking = std::chrono::duration<double>(f.age - held).count();
  // A body that has ended holds no slot against the network: its pages are being committed.
  f.bytes_per_second = taking > 0 && !body_ended_ ? static_cast<double>(received_) / taking
                                  : std::numeric_limits<double>::infinity();
  return f;
}

void WarcUpload::Join() {
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void WarcUpload::AddError(uint64_t offset, std::string url, std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  ++errors_total_;
  if (errors_.size() < options_.max_errors_listed) {
    errors_.push_back({offset, std::move(url), std::move(message)});
  }
}

void WarcUpload::Run() {
  crawler::WarcReader reader(std::make_unique<PipeSource>(pipe_));
  Status submit_status;
  {
    PageFeeder feeder(pipeline_, options_.max_in_flight);
    size_t problems_reported = 0;
    auto report_problems = [&] {
      for (; problems_reported < reader.problems().size(); ++problems_reported) {
        const crawler::WarcProblem& p = reader.problems()[problems_reported];
        AddError(p.offset, "", p.status.message());
      }
    };
    crawler::WarcRecord record;
    while (reader.Next(&record)) {
      report_problems();
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++records_;
      }
      bool skipped = false;
      StatusOr<std::optional<PageJob>> job =
          JobFromWarcRecord(record, sweep_, &skipped, &reader.targets());
      if (!job.ok()) {
        const std::string* uri = record.Header("WARC-Target-URI");
        AddError(record.member_offset, uri != nullptr ? *uri : "", job.status().message());
        continue;
      }
      if (!job->has_value()) {
        if (skipped) {
          std::lock_guard<std::mutex> lock(mu_);
          ++skipped_;
        }
        continue;
      }
      (*job)->request_id = request_id_;
      const uint64_t offset = record.member_offset;
      std::string url = (*job)->url;
      submit_status = feeder.Submit(**job, [this, offset, url](const PageOutcome& outcome) {
        if (!outcome.status.ok()) return AddError(offset, url, outcome.status.message());
        std::lock_guard<std::mutex> lock(mu_);
        ++pages_;
        ++verdicts_[static_cast<int>(outcome.result.verdict)];
      });
      if (!submit_status.ok()) break;  // the pipeline is stopping, or out of space
    }
    report_problems();
    // Reading is over (the body ended, or we stop): a session waiting for room is released, and
    // what it still sends is dropped.
    pipe_->Cancel();
  }  // the feeder waits for every page: the answer follows durability
  done_(Answer(reader.status(), submit_status));
  done_ = nullptr;
  finished_ = true;
}

Response WarcUpload::Answer(const Status& body_status, const Status& submit_status) {
  std::lock_guard<std::mutex> lock(mu_);
  std::sort(errors_.begin(), errors_.end(),
            [](const ErrorEntry& a, const ErrorEntry& b) { return a.offset < b.offset; });
  Json errors = Json::array();
  for (const ErrorEntry& e : errors_) {
    Json entry = {{"offset", e.offset}};
    if (!e.url.empty()) entry["url"] = e.url;
    entry["message"] = e.message;
    errors.push_back(std::move(entry));
  }
  auto count = [&](store::Verdict v) { return verdicts_[static_cast<int>(v)]; };
  Json summary = {{"pages", pages_},
                  {"new", count(store::Verdict::kNew)},
                  {"unchanged", count(store::Verdict::kUnchanged)},
                  {"duplicate", count(store::Verdict::kDuplicate)},
                  {"near_duplicate", count(store::Verdict::kNearDuplicate)},
                  {"gone", count(store::Verdict::kGone)},
                  {"failed", count(store::Verdict::kFailed)},
                  {"redirect", count(store::Verdict::kRedirect)},
                  {"records", records_},
                  {"skipped", skipped_},
                  {"errors", std::move(errors)}};
  if (errors_total_ > errors_.size()) summary["errors_not_listed"] = errors_total_ - errors_.size();

  // Whatever stopped the upload early is the answer's status; the summary says what went in.
  Response res;
  if (store::IsOutOfSpace(submit_status)) {
    // A full disk or map: the rest of the upload was not read; it may be sent again later.
    std::string message = submit_status.message();
    message.append("; the pages counted here were stored");
    res = ErrorResponse(http::status::insufficient_storage, "insufficient_storage", message,
                        options_.retry_after_s);
  } else if (aborted_ || !submit_status.ok()) {
    const std::string why = reclaimed_ ? reclaimed_why_ : "the server is shutting down";
    res = ErrorResponse(http::status::service_unavailable, "unavailable",
                        why + "; the pages counted here were stored", options_.retry_after_s);
  } else if (!body_status.ok()) {
    const bool too_large = body_status.code() == StatusCode::kResourceExhausted;
    // Too slow a client (server.min_body_bytes_per_window): 408, not the 504 of a deadline.
    const bool too_slow = body_status.code() == StatusCode::kDeadlineExceeded;
    res = too_slow ? ErrorResponse(http::status::request_timeout, "request_timeout",
                                   body_status.message() + "; the records before it were stored")
          : too_large
              ? ErrorResponse(http::status::payload_too_large, "payload_too_large",
                              body_status.message() + "; the records before the limit were stored")
              : StatusResponse(body_status, options_.retry_after_s);
  } else if (records_ == 0) {
    // Nothing in the body was a WARC record (garbage, another format, or nothing): not a success.
    std::string message =
        "no WARC record was read from the body: it is not a WARC file (plain or .warc.gz)";
    if (errors_total_ > 0) message.append("; `errors` says what was found");
    res = ErrorResponse(http::status::unprocessable_entity, "no_warc_records", message);
  } else {
    return JsonResponse(http::status::ok, summary);
  }
  Json body = Json::parse(res.body());
  for (auto& [key, value] : summary.items()) body[key] = value;
  Response out = JsonResponse(res.result(), body);
  for (const auto& field : res) {
    if (field.name() == http::field::retry_after) out.set(field.name(), field.value());
  }
  return out;
}

}  // namespace shingled::daemon
