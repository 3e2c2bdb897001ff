// GET /v1/documents/A/common/B (paper 003): the bytes two stored documents have in
// common by their content-defined chunks, and the shared spans, so that a person can see what
// is shared. On the TaskPool.
#include "daemon/api/api.h"
#include "daemon/wire/json_codec.h"
#include "daemon/wire/request_parse.h"

namespace shingled::daemon {

// Shared spans listed by default (`limit`); at most store::kMaxCommonSpans.
inline constexpr size_t kDefaultCommonSpans = 100;

StatusOr<Response> Api::GetCommon(const std::string& ids, const Target& target) {
  constexpr std::string_view kCommon = "/common/";
  const size_t at = ids.find(kCommon);
  StatusOr<uint64_t> a = ParseId(std::string_view(ids).substr(0, at), "document");
  if (!a.ok()) return a.status();
  StatusOr<uint64_t> b = ParseId(std::string_view(ids).substr(at + kCommon.size()), "document");
  if (!b.ok()) return b.status();
  StatusOr<uint64_t> limit =
      ParseInteger("limit", target.Get("limit"), kDefaultCommonSpans, 0, store::kMaxCommonSpans);
  if (!limit.ok()) return limit.status();
  StatusOr<store::CommonBytes> common = store_->BytesInCommon(*a, *b, *limit);
  if (!common.ok()) return common.status();
  Json j = {{"a", *a}, {"b", *b}};
  j["common"] = CommonJson(*common, /*spans=*/true);
  return JsonResponse(http::status::ok, j);
}

}  // namespace shingled::daemon
