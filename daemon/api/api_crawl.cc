// GET and POST /v1/crawl: the crawler's progress, and a sweep started now; POST /v1/crawl/stop:
// the running sweep stopped.
#include <spdlog/spdlog.h>

#include "daemon/api/api.h"
#include "daemon/crawl/crawl_scheduler.h"

namespace shingled::daemon {

Response Api::GetCrawl() {
  if (crawl_ == nullptr) {
    Json out = {{"enabled", false}, {"running", false}, {"sweep", nullptr}};
    if (!options_.crawler_error.empty()) out["error"] = options_.crawler_error;
    return JsonResponse(http::status::ok, out);
  }
  return JsonResponse(http::status::ok, crawl_->StatusJson());
}

namespace {

Response NotConfigured() {
  return ErrorResponse(http::status::conflict, "crawler_not_configured",
                       "the crawler is not enabled: set enabled = true and seeds in the "
                       "[crawler] table of the config");
}

}  // namespace

StatusOr<Response> Api::PostCrawl() {
  if (crawl_ == nullptr && !options_.crawler_error.empty()) {
    return ErrorResponse(http::status::conflict, "crawler_not_configured",
                         "the crawler did not start: " + options_.crawler_error);
  }
  if (crawl_ == nullptr) return NotConfigured();
  StatusOr<std::string> name = crawl_->RequestSweep();
  if (!name.ok()) {
    if (name.status().code() == StatusCode::kFailedPrecondition) {
      return ErrorResponse(http::status::conflict, "crawl_running", name.status().message());
    }
    return name.status();
  }
  return JsonResponse(http::status::accepted, {{"sweep", *name}, {"running", true}});
}

StatusOr<Response> Api::StopCrawl(const std::string& request_id) {
  if (crawl_ == nullptr) return NotConfigured();
  StatusOr<std::string> name = crawl_->StopSweep();
  if (!name.ok()) {
    if (name.status().code() == StatusCode::kFailedPrecondition) {
      return ErrorResponse(http::status::conflict, "crawl_not_running", name.status().message());
    }
    return name.status();
  }
  spdlog::info("crawler: sweep {} stopped on request request_id={}",
               name->empty() ? "(starting)" : *name, request_id);
  // The name is empty in the instant a sweep is being named: it is stopped all the same.
  return JsonResponse(http::status::accepted,
                      {{"sweep", name->empty() ? Json() : Json(*name)}, {"stopping", true}});
}

}  // namespace shingled::daemon
