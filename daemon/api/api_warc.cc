// POST /v1/pages with a WARC body: streamed record by record into the ingest pipeline
// (daemon/api/warc_upload.h), never held in memory.
#include <spdlog/spdlog.h>

#include <chrono>
#include <vector>

#include "daemon/api/api.h"
#include "daemon/http/access_log.h"
#include "daemon/wire/request_parse.h"
#include "dedup/charset.h"

namespace shingled::daemon {
namespace {

using Clock = std::chrono::steady_clock;

bool IsWarcType(std::string_view content_type) {
  const std::string mime = dedup::ParseContentType(content_type).mime;
  return mime == "application/warc" || mime == "application/warc+gzip";
}

}  // namespace

Api::~Api() {
  AbortUploads();
  JoinUploads();
}

bool Api::StreamsBody(const Request& header) {
  if (header.method() != http::verb::post) return false;
  if (!IsWarcType(ToStd(header[http::field::content_type]))) return false;
  StatusOr<Target> target = ParseTarget(ToStd(header.target()));
  return target.ok() && target->path == "/v1/pages";
}

std::shared_ptr<BodySink> Api::HandleStreamed(Request header, ReplyPtr reply) {
  const Clock::time_point start = Clock::now();
  const std::string request_id = RequestIdOf(header);
  auto respond = [this, start, reply, request_id](StatusOr<Response>&& result) {
    Response res = Answer(std::move(result), request_id);
    metrics_->HttpRequest("pages", res.result_int(),
                          std::chrono::duration<double>(Clock::now() - start).count());
    std::string note = PageVerdictNote(res.body());
    reply->Send(std::move(res), std::move(note));
  };
  StatusOr<Target> target = ParseTarget(ToStd(header.target()));
  if (!target.ok()) {
    respond(target.status());
    return nullptr;
  }
  if (std::optional<Response> denied = CheckAuth(header, /*is_write=*/true)) {
    respond(*denied);
    return nullptr;
  }
  // The records carry each page's URL, date and status.
  if (Status s = CheckParams(*target, {"sweep"}); !s.ok()) {
    respond(s);
    return nullptr;
  }
  StatusOr<store::SweepId> sweep =
      ResolveSweep(target->Get("sweep").value_or(options_.default_sweep));
  if (!sweep.ok()) {
    respond(sweep.status());
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(uploads_mu_);
  if (uploads_stopped_ || shutting_down_) {
    respond(ErrorResponse(http::status::service_unavailable, "unavailable",
                          "the server is shutting down", options_.retry_after_s));
    return nullptr;
  }
  // Reap the uploads that have answered; their threads end right after.
  for (auto it = uploads_.begin(); it != uploads_.end();) {
    if ((*it)->finished()) {
      (*it)->Join();
      it = uploads_.erase(it);
    } else {
      ++it;
    }
  }
  // A slot by the fairness rule (warc_slots.h); the uploads giving theirs up no longer count.
  const std::shared_ptr<const ApiSettings> now_settings = settings();
  const WarcSlotRules rules{.max_uploads = now_settings->max_warc_uploads,
                            .max_per_client = now_settings->max_warc_uploads_per_client,
                            .min_rate = now_settings->warc_slot_min_bytes_per_second};
  const Clock::time_point now = Clock::now();
  std::vector<WarcUpload*> holders;
  std::vector<UploadFlow> flows;
  for (const std::shared_ptr<WarcUpload>& u : uploads_) {
    if (u->reclaimed()) continue;
    holders.push_back(u.get());
    flows.push_back(u->Flow(now));
  }
  const SlotDecision slot = DecideWarcSlot(flows, reply->client(), rules);
  if (slot.kind == SlotDecision::Kind::kRefuse) {
    respond(ErrorResponse(http::status::service_unavailable, "unavailable",
                          slot.reason + ", and none is slower than " +
                              std::to_string(static_cast<uint64_t>(rules.min_rate)) +
                              " bytes a second (limits.warc_slot_min_bytes_per_second); retry later",
                          options_.retry_after_s));
    return nullptr;
  }
  if (slot.kind == SlotDecision::Kind::kReclaim) {
    const UploadFlow& victim = flows[slot.victim];
    const std::string why =
        slot.reason + " and another upload wants a slot: this one brought " +
        std::to_string(static_cast<uint64_t>(victim.bytes_per_second)) +
        " bytes a second, under limits.warc_slot_min_bytes_per_second (" +
        std::to_string(static_cast<uint64_t>(rules.min_rate)) + "); send the rest again later";
    // Written while serving the newcomer: its request_id; the upload that gives its slot up is
    // named by its own, so that either client's report finds the line.
    spdlog::warn(
        "WARC upload from {} gives its slot to one from {}: {} request_id={} "
        "reclaimed_request_id={}",
        victim.client, reply->client(), why, request_id, holders[slot.victim]->request_id());
    holders[slot.victim]->Reclaim(why);
  }
  auto upload = std::make_shared<WarcUpload>(pipeline_, *sweep, options_.warc, reply->client(),
                                             request_id, std::move(respond));
  uploads_.push_back(upload);
  return upload;
}

void Api::AbortUploads() {
  std::lock_guard<std::mutex> lock(uploads_mu_);
  uploads_stopped_ = true;
  for (const std::shared_ptr<WarcUpload>& upload : uploads_) upload->Abort();
}

void Api::JoinUploads() {
  std::vector<std::shared_ptr<WarcUpload>> uploads;
  {
    std::lock_guard<std::mutex> lock(uploads_mu_);
    uploads_stopped_ = true;
    uploads.swap(uploads_);
  }
  for (const std::shared_ptr<WarcUpload>& upload : uploads) upload->Join();
}

}  // namespace shingled::daemon
