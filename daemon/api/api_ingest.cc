// POST /v1/pages: one page as the body, or a batch of pages as JSON lines (a WARC body is
// streamed: api_warc.cc).
#include <spdlog/spdlog.h>

#include "daemon/api/api.h"
#include "daemon/wire/json_codec.h"
#include "daemon/wire/request_parse.h"
#include "dedup/charset.h"

namespace shingled::daemon {
namespace {

// Media types a page may be posted as: what a crawler fetches and the canonicalizer reads.
// Anything else is refused with 415 rather than stored as an opaque binary by mistake.
bool AcceptedPageType(const std::string& mime) {
  return mime.empty() || mime.rfind("text/", 0) == 0 || mime == "application/xhtml+xml" ||
         mime == "application/xml" || mime == "application/octet-stream";
}

}  // namespace

StatusOr<store::SweepId> Api::ResolveSweep(const std::string& name) {
  if (name.empty()) {
    return InvalidArgumentError("no sweep: add ?sweep=NAME (no default sweep is configured)");
  }
  {
    std::lock_guard<std::mutex> lock(sweeps_mu_);
    auto it = sweep_ids_.find(name);
    if (it != sweep_ids_.end()) return it->second;
  }
  StatusOr<store::SweepInfo> sweep = store_->FindSweep(name);
  if (!sweep.ok()) {
    if (sweep.status().code() == StatusCode::kNotFound) {
      return NotFoundError("no sweep named \"" + name + "\"; open it with POST /v1/sweeps");
    }
    return sweep.status();
  }
  if (!sweep->open) return FailedPreconditionError("sweep \"" + name + "\" is closed");
  std::lock_guard<std::mutex> lock(sweeps_mu_);
  sweep_ids_[name] = sweep->id;
  return sweep->id;
}

void Api::ForgetSweep(const std::string& name) {
  std::lock_guard<std::mutex> lock(sweeps_mu_);
  sweep_ids_.erase(name);
}

// What can be refused from the header alone is refused before the body is read.
std::optional<Response> Api::CheckBodyHeader(const Request& header, const std::string& route,
                                             const Target& target) {
  if (header.method() != http::verb::post) return std::nullopt;
  const std::string coding = ContentEncoding(header);
  if (!coding.empty() && coding != "gzip" && coding != "x-gzip" && coding != "deflate") {
    return ErrorResponse(http::status::unsupported_media_type, "unsupported_media_type",
                         "Content-Encoding " + coding.substr(0, 100) +
                             " is not accepted: send the body as it is, or with gzip or deflate");
  }
  if (route != "pages") return std::nullopt;
  const std::string mime = dedup::ParseContentType(ToStd(header[http::field::content_type])).mime;
  if (mime == "application/x-ndjson" || mime == "application/warc" ||
      mime == "application/warc+gzip") {
    return std::nullopt;  // the lines or records carry their own URLs and types
  }
  // As PostPages checks them once the body is read.
  if (Status s = CheckParams(target, {"url", "fetched_at", "status", "location", "sweep"});
      !s.ok()) {
    return Error(s, RequestIdOf(header));
  }
  StatusOr<PagePost> post =
      ParsePageTarget(target, options_.default_sweep, settings()->max_url_bytes, options_.now());
  if (!post.ok()) return Error(post.status(), RequestIdOf(header));
  const bool content = store::ClassifyHttpStatus(post->http_status) == store::StatusClass::kContent;
  if (content && !AcceptedPageType(mime)) {
    return ErrorResponse(
        http::status::unsupported_media_type, "unsupported_media_type",
        "Content-Type " + mime.substr(0, 100) +
            " is not accepted: post a page as text/*, application/xhtml+xml, application/xml or "
            "application/octet-stream, or a batch as application/x-ndjson or application/warc");
  }
  return std::nullopt;
}

void Api::PostPages(const Request& req, const Target& target, Respond respond) {
  StatusOr<PagePost> post =
      ParsePageTarget(target, options_.default_sweep, settings()->max_url_bytes, options_.now());
  if (!post.ok()) return respond(post.status());
  PageJob job;
  job.url = std::move(post->url);
  job.http_status = post->http_status;
  job.redirect_target = std::move(post->redirect_target);
  job.date = post->date;
  job.content_type = std::string(req[http::field::content_type]);
  job.request_id = RequestIdOf(req);
  // Only content is read: a dead page, a redirect or a failed fetch is recorded without its body,
  // so neither its type nor its presence matters.
  const bool content = store::ClassifyHttpStatus(job.http_status) == store::StatusClass::kContent;
  const std::string mime = dedup::ParseContentType(job.content_type).mime;
  if (content && !AcceptedPageType(mime)) {
    return respond(ErrorResponse(
        http::status::unsupported_media_type, "unsupported_media_type",
        "Content-Type " + mime.substr(0, 100) +
            " is not accepted: post a page as text/*, application/xhtml+xml, application/xml or "
            "application/octet-stream, or a batch as application/x-ndjson or application/warc"));
  }
  if (req.body().empty() && content) {
    return respond(InvalidArgumentError("empty body: post the page's bytes as the body"));
  }
  StatusOr<store::SweepId> sweep = ResolveSweep(post->sweep);
  if (!sweep.ok()) return respond(sweep.status());
  job.sweep = *sweep;
  if (content) job.body = req.body();
  const std::string page_url = job.url;
  std::vector<PageJob> jobs;
  jobs.push_back(std::move(job));
  Status submitted =
      pipeline_->Submit(std::move(jobs), [respond, page_url](std::vector<PageOutcome> outcomes) {
        const PageOutcome& o = outcomes.front();
        if (!o.status.ok()) return respond(o.status);
        respond(JsonResponse(http::status::ok, PageResultJson(page_url, o.result)));
      });
  if (!submitted.ok()) respond(submitted);
}

void Api::PostPagesBatch(Request req, const Target& target, Respond respond) {
  auto body = std::make_shared<std::string>(std::move(req.body()));
  const std::string default_sweep = target.Get("sweep").value_or(options_.default_sweep);
  // A page's own error (in the answer's results) is logged naming the request, as the request's
  // would be.
  const std::string request_id = RequestIdOf(req);
  // Parsing a large batch takes milliseconds: on the pool, not the I/O thread.
  auto parse_and_submit = [this, body, default_sweep, respond, request_id, settings = settings()] {
    std::vector<PageJob> jobs;
    std::string_view rest = *body;
    size_t line_no = 0;
    auto fail = [&](const Status& s) {
      respond(InvalidArgumentError("line " + std::to_string(line_no) + ": " + s.message()));
    };
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (jobs.size() >= settings->max_batch_pages) {
        return respond(ErrorResponse(http::status::payload_too_large, "payload_too_large",
                                     "more than " + std::to_string(settings->max_batch_pages) +
                                         " pages in one batch (limits.max_batch_pages)"));
      }
      StatusOr<PagePost> post =
          ParseBatchLine(line, default_sweep, settings->max_url_bytes, options_.now());
      if (!post.ok()) return fail(post.status());
      PageJob job;
      job.url = std::move(post->url);
      job.http_status = post->http_status;
      job.redirect_target = std::move(post->redirect_target);
      job.date = post->date;
      job.content_type = std::move(post->content_type);
      job.request_id = request_id;
      // As for a single page: only content's body is read.
      if (store::ClassifyHttpStatus(job.http_status) == store::StatusClass::kContent) {
        job.body = std::move(post->body);
      }
      StatusOr<store::SweepId> sweep = ResolveSweep(post->sweep);
      if (!sweep.ok()) return fail(sweep.status());
      job.sweep = *sweep;
      jobs.push_back(std::move(job));
    }
    if (jobs.empty()) return respond(InvalidArgumentError("empty body: no pages in the batch"));
    auto urls = std::make_shared<std::vector<std::string>>();
    for (const PageJob& job : jobs) urls->push_back(job.url);
    Status submitted = pipeline_->Submit(
        std::move(jobs), [this, respond, urls, request_id](std::vector<PageOutcome> outcomes) {
          Json results = Json::array();
          size_t errors = 0;
          for (size_t i = 0; i < outcomes.size(); ++i) {
            if (outcomes[i].status.ok()) {
              results.push_back(PageResultJson((*urls)[i], outcomes[i].result));
            } else {
              ++errors;
              const Json error = Json::parse(Error(outcomes[i].status, request_id).body());
              results.push_back({{"url", (*urls)[i]}, {"error", error["error"]}});
            }
          }
          respond(JsonResponse(
              http::status::ok,
              {{"pages", outcomes.size()}, {"errors", errors}, {"results", std::move(results)}}));
        });
    if (!submitted.ok()) respond(submitted);
  };
  if (!pool_->TrySubmit(parse_and_submit)) {
    respond(ErrorResponse(http::status::service_unavailable, "unavailable",
                          "the server is busy; retry later", options_.retry_after_s));
  }
}

}  // namespace shingled::daemon
