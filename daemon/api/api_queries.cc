// The read side of the API and the sweep changes; these run on the TaskPool.
#include "daemon/api/api.h"
#include "daemon/wire/json_codec.h"
#include "daemon/wire/request_parse.h"

namespace shingled::daemon {
StatusOr<Response> Api::GetSimilar(const Target& target) {
  StatusOr<std::string> url = RequiredUrl(target, settings()->max_url_bytes);
  if (!url.ok()) return url.status();
  StatusOr<store::QueryOptions> q = ParseQueryOptions(target);
  if (!q.ok()) return q.status();
  uint64_t left_out = 0;
  q->candidates_left_out = &left_out;
  auto similar = store_->SimilarToUrl(*url, *q);
  if (!similar.ok()) return similar.status();
  return JsonResponse(http::status::ok, SimilarJson(*similar, left_out));
}

StatusOr<Response> Api::PostSimilar(const Request& req, const Target& target) {
  if (req.body().empty()) {
    return InvalidArgumentError("empty body: post the page to compare as the body");
  }
  StatusOr<store::QueryOptions> q = ParseQueryOptions(target);
  if (!q.ok()) return q.status();
  uint64_t left_out = 0;
  q->candidates_left_out = &left_out;
  const dedup::Sketch sketch = dedup::SketchPage(
      *context_, req.body(), std::string(req[http::field::content_type]), options_.canonicalizer);
  auto similar = store_->SimilarToSketch(sketch, *q);
  if (!similar.ok()) return similar.status();
  return JsonResponse(http::status::ok, SimilarJson(*similar, left_out));
}

StatusOr<Response> Api::GetUrls(const Target& target) {
  StatusOr<std::string> url = RequiredUrl(target, settings()->max_url_bytes);
  if (!url.ok()) return url.status();
  auto history = store_->History(*url);
  if (!history.ok()) return history.status();
  return JsonResponse(http::status::ok, HistoryJson(*url, *history));
}

StatusOr<Response> Api::GetLost(const Target& target) {
  StatusOr<std::string> url = RequiredUrl(target, settings()->max_url_bytes);
  if (!url.ok()) return url.status();
  auto lost = store_->Lost(*url);
  if (!lost.ok()) return lost.status();
  return JsonResponse(http::status::ok, LostJson(*lost));
}

StatusOr<Response> Api::GetDocument(const std::string& id_text) {
  StatusOr<uint64_t> id = ParseId(id_text, "document");
  if (!id.ok()) return id.status();
  auto doc = store_->Document(*id);
  if (!doc.ok()) return doc.status();
  return JsonResponse(http::status::ok, DocumentJson(*doc));
}

StatusOr<Response> Api::GetSweeps() {
  auto sweeps = store_->Sweeps();
  if (!sweeps.ok()) return sweeps.status();
  Json out = Json::array();
  for (const store::SweepInfo& s : *sweeps) out.push_back(SweepJson(s));
  return JsonResponse(http::status::ok, {{"sweeps", std::move(out)}});
}

StatusOr<Response> Api::PostSweep(const Request& req) {
  StatusOr<Json> body = ParseObjectBody(req.body());
  if (!body.ok()) return body.status();
  if (Status s = CheckMembers(*body, {"name", "start", "hosts", "prefixes"}); !s.ok()) return s;
  if (!body->contains("name") || !(*body)["name"].is_string()) {
    return InvalidArgumentError("the body needs a string \"name\"");
  }
  StatusOr<int64_t> start = DateMember(*body, "start", options_.now());
  if (!start.ok()) return start.status();
  StatusOr<std::vector<std::string>> scope = SweepScopeMembers(*body);
  if (!scope.ok()) return scope.status();
  auto sweep = store_->OpenSweep((*body)["name"].get<std::string>(), *start, std::move(*scope));
  if (!sweep.ok()) return sweep.status();
  return JsonResponse(http::status::ok, SweepJson(*sweep));
}

StatusOr<Response> Api::CloseSweep(const Request& req, const std::string& name) {
  StatusOr<Json> body = ParseObjectBody(req.body());
  if (!body.ok()) return body.status();
  if (Status s = CheckMembers(*body, {"end", "dry_run", "limit"}); !s.ok()) return s;
  StatusOr<int64_t> end = DateMember(*body, "end", options_.now());
  if (!end.ok()) return end.status();
  store::Store::CloseSweepOptions close;
  close.list_limit = kDefaultGoneListed;
  if (body->contains("dry_run")) {
    if (!(*body)["dry_run"].is_boolean())
      return InvalidArgumentError("dry_run must be true or false");
    close.dry_run = (*body)["dry_run"].get<bool>();
  }
  if (body->contains("limit")) {
    const Json& limit = (*body)["limit"];
    if (!limit.is_number_unsigned() || limit.get<uint64_t>() > kMaxGoneListed) {
      return InvalidArgumentError("limit must be an integer in 0.." +
                                  std::to_string(kMaxGoneListed));
    }
    close.list_limit = limit.get<size_t>();
  }
  auto found = store_->FindSweep(name);
  if (!found.ok()) return found.status();
  if (!close.dry_run) ForgetSweep(name);
  auto closing = store_->CloseSweep(found->id, *end, close);
  if (!closing.ok()) return closing.status();
  return JsonResponse(http::status::ok, SweepClosingJson(*closing, close.dry_run));
}

StatusOr<Response> Api::ReopenSweep(const std::string& name) {
  auto found = store_->FindSweep(name);
  if (!found.ok()) return found.status();
  auto reopened = store_->ReopenSweep(found->id);
  if (!reopened.ok()) return reopened.status();
  Json j = SweepJson(reopened->sweep);
  j["removed_gone"] = reopened->removed;
  return JsonResponse(http::status::ok, j);
}

StatusOr<Response> Api::GetStats() {
  auto stats = store_->Stats();
  if (!stats.ok()) return stats.status();
  Json j = StatsJson(*stats);
  j["queued_pages"] = pipeline_->queued_pages();
  return JsonResponse(http::status::ok, j);
}

}  // namespace shingled::daemon
