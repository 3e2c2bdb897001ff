// Templates (store/FORMAT.md, "Templates"): an operator marks a cluster as template
// (POST /v1/clusters/ID/template), unmarks it (DELETE), and lists the marks (GET /v1/templates).
// On the TaskPool.

#include "daemon/api/api.h"
#include "daemon/wire/json_codec.h"
#include "daemon/wire/listings.h"
#include "daemon/wire/request_parse.h"

namespace shingled::daemon {

StatusOr<Response> Api::PostTemplate(const std::string& id) {
  StatusOr<uint64_t> cluster = ParseId(id, "cluster");
  if (!cluster.ok()) return cluster.status();
  StatusOr<store::TemplateMark> mark = store_->MarkTemplate(*cluster);
  if (!mark.ok()) return mark.status();
  Json j = TemplateMarkJson(*mark);
  j["marked"] = true;
  return JsonResponse(http::status::ok, j);
}

StatusOr<Response> Api::DeleteTemplate(const std::string& id) {
  StatusOr<uint64_t> cluster = ParseId(id, "cluster");
  if (!cluster.ok()) return cluster.status();
  StatusOr<std::optional<store::TemplateMark>> removed = store_->UnmarkTemplate(*cluster);
  if (!removed.ok()) return removed.status();
  // Idempotent: unmarking what is not marked answers 200 with "removed": false.
  Json j = removed->has_value() ? TemplateMarkJson(**removed) : Json{{"cluster", *cluster}};
  j["marked"] = false;
  j["removed"] = removed->has_value();
  return JsonResponse(http::status::ok, j);
}

StatusOr<Response> Api::ListTemplates(const Target& target) {
  StatusOr<size_t> limit = ParseListLimit(target.params);
  if (!limit.ok()) return limit.status();
  StatusOr<uint64_t> after = ParseInteger("after", target.Get("after"), 0, 0, UINT64_MAX);
  if (!after.ok()) return after.status();
  // One more than asked says whether another page follows.
  StatusOr<std::vector<store::TemplateMark>> marks = store_->TemplateMarks(*after, *limit + 1);
  if (!marks.ok()) return marks.status();
  const bool more = marks->size() > *limit;
  if (more) marks->pop_back();
  Json list = Json::array();
  for (const store::TemplateMark& m : *marks) list.push_back(TemplateMarkJson(m));
  Json j = {{"templates", std::move(list)}};
  j["next"] = more ? Json(std::to_string(marks->back().cluster)) : Json();
  return JsonResponse(http::status::ok, j);
}

}  // namespace shingled::daemon
