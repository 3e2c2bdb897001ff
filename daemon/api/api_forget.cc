// Forgetting (docs/API.md, "Forgetting"): an operator's takedown of a URL, a host or a URL prefix
// (POST /v1/forget, a write, on the TaskPool), and the takedowns recorded (GET /v1/forgets, a
// read, on the read pool).
#include "daemon/api/api.h"
#include "daemon/wire/forget_request.h"
#include "daemon/wire/json_codec.h"
#include "daemon/wire/listings.h"

namespace shingled::daemon {

StatusOr<Response> Api::PostForget(const Request& req) {
  StatusOr<store::ForgetOptions> options =
      ParseForgetBody(req.body(), settings()->max_url_bytes, options_.now());
  if (!options.ok()) return options.status();
  // One call, one write transaction: a scope of more than max_urls URLs answers "more": true,
  // and the client calls again (docs/API.md). Looping here instead would hold a pool worker and
  // the store's writer for as long as the largest takedown takes.
  StatusOr<store::ForgetResult> result = store_->Forget(*options);
  if (!result.ok()) return result.status();
  return JsonResponse(http::status::ok, ForgetResultJson(*options, *result));
}

StatusOr<Response> Api::ListForgets(const Target& target) {
  StatusOr<size_t> limit = ParseListLimit(target.params);
  if (!limit.ok()) return limit.status();
  StatusOr<uint64_t> after = ParseInteger("after", target.Get("after"), 0, 0, UINT64_MAX);
  if (!after.ok()) return after.status();
  // One more than asked says whether another page follows.
  StatusOr<std::vector<store::ForgetRecord>> records = store_->ForgetRecords(*after, *limit + 1);
  if (!records.ok()) return records.status();
  const bool more = records->size() > *limit;
  if (more) records->pop_back();
  Json list = Json::array();
  for (const store::ForgetRecord& r : *records) list.push_back(ForgetRecordJson(r));
  Json j = {{"forgets", std::move(list)}};
  j["next"] = more ? Json(std::to_string(records->back().id)) : Json();
  return JsonResponse(http::status::ok, j);
}

}  // namespace shingled::daemon
