// Routing, authentication and the pool hand-off of the HTTP API.
#include "daemon/api/api.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "base/deadline.h"
#include "crawler/warc.h"
#include "daemon/http/access_log.h"
#include "daemon/http/compression.h"
#include "daemon/wire/request_parse.h"
#include "dedup/charset.h"

namespace shingled::daemon {
namespace {

using Clock = std::chrono::steady_clock;

Response MethodNotAllowed(std::string_view allow) {
  Response res = ErrorResponse(http::status::method_not_allowed, "method_not_allowed",
                               "this resource allows " + std::string(allow));
  res.set(http::field::allow, std::string(allow));
  return res;
}

}  // namespace

Api::Api(store::Store* store, std::shared_ptr<const dedup::SketchContext> context,
         IngestPipeline* pipeline, TaskPool* pool, TaskPool* read_pool, Metrics* metrics,
         ApiOptions options, CrawlScheduler* crawl)
    : store_(store),
      context_(std::move(context)),
      pipeline_(pipeline),
      pool_(pool),
      read_pool_(read_pool),
      metrics_(metrics),
      options_(std::move(options)),
      crawl_(crawl),
      settings_(std::make_shared<const ApiSettings>(options_.settings)) {}

void Api::SetSettings(ApiSettings settings) {
  auto next = std::make_shared<const ApiSettings>(std::move(settings));
  std::lock_guard<std::mutex> lock(settings_mu_);
  // A session stands for the token it was opened with.
  if (next->token != settings_->token) sessions_.EndAll();
  settings_.swap(next);
}

std::shared_ptr<const ApiSettings> Api::settings() const {
  std::lock_guard<std::mutex> lock(settings_mu_);
  return settings_;
}

void Api::OnServerResponse(http::status status) {
  metrics_->HttpRequest("none", static_cast<unsigned>(status), 0);
}

Response Api::Error(const Status& status, std::string_view request_id) const {
  // A full disk or map: 507, with what is full (the store's directory and free bytes, or
  // store.max_map_size); writes resume on their own when there is room.
  if (store::IsOutOfSpace(status)) {
    return ErrorResponse(http::status::insufficient_storage, "insufficient_storage",
                         status.message(), options_.retry_after_s);
  }
  if (HttpStatusFor(status.code()) == http::status::internal_server_error) {
    spdlog::error("request failed: {} request_id={}", status.ToString(), request_id);
  }
  return StatusResponse(status, options_.retry_after_s);
}

Response Api::Answer(StatusOr<Response>&& result, std::string_view request_id) const {
  if (result.ok()) return std::move(result).value();
  return Error(result.status(), request_id);
}

void Api::OnPool(const Respond& respond, std::function<StatusOr<Response>()> work) {
  // The closure owns `respond`: if the pool drops it unrun, the Reply inside answers 503.
  if (!pool_->TrySubmit([respond, work = std::move(work)] { respond(work()); })) {
    respond(ErrorResponse(http::status::service_unavailable, "unavailable",
                          "the server is busy; retry later", options_.retry_after_s));
  }
}

void Api::OnReadPool(const Respond& respond, std::function<StatusOr<Response>()> work) {
  auto run = [this, respond, work = std::move(work)] {
    if (options_.read_budget.count() == 0) return respond(work());
    ScopedDeadline budget(
        std::chrono::steady_clock::now() + options_.read_budget,
        options_.read_budget_key + " = " + std::to_string(options_.read_budget.count()));
    respond(work());
  };
  // The closure owns `respond`: if the pool drops it unrun, the Reply inside answers 503.
  if (!read_pool_->TrySubmit(std::move(run))) {
    respond(ErrorResponse(http::status::service_unavailable, "unavailable",
                          "the readers are busy (" + std::to_string(read_pool_->queued()) +
                              " reads queued, server.read_queue); retry later",
                          options_.retry_after_s));
  }
}

void Api::Handle(Request req, ReplyPtr reply) { Serve(std::move(req), std::move(reply), nullptr); }

std::optional<Response> Api::CheckHeader(const Request& header) {
  std::optional<Response> refused;
  Serve(header, nullptr, &refused);
  return refused;
}

void Api::Serve(Request req, ReplyPtr reply, std::optional<Response>* header_check) {
  const Clock::time_point start = Clock::now();
  StatusOr<Target> parsed = ParseTarget(ToStd(req.target()));
  std::string route = "unknown";
  const std::string request_id = RequestIdOf(req);
  auto respond_as = [this, start, reply, header_check,
                     request_id](std::string route_name) -> Respond {
    if (header_check != nullptr) {
      // Only the header is read: the refusal is answered by the server, which reads no body.
      return [this, header_check, route_name, request_id](StatusOr<Response>&& result) {
        Response res = Answer(std::move(result), request_id);
        metrics_->HttpRequest(route_name, res.result_int(), 0);
        *header_check = std::move(res);
      };
    }
    return [this, start, reply, route_name, request_id](StatusOr<Response>&& result) {
      Response res = Answer(std::move(result), request_id);
      metrics_->HttpRequest(route_name, res.result_int(),
                            std::chrono::duration<double>(Clock::now() - start).count());
      std::string note = route_name == "pages" ? PageVerdictNote(res.body()) : std::string();
      reply->Send(std::move(res), std::move(note));
    };
  };
  if (!parsed.ok()) return respond_as(route)(parsed.status());
  const Target& target = *parsed;
  const std::string& path = target.path;
  const http::verb method = req.method();
  const bool is_get = method == http::verb::get;
  const bool is_post = method == http::verb::post;
  const bool is_delete = method == http::verb::delete_;

  // Liveness, readiness and metrics: never behind the token (probes and scrapers).
  // HEAD as GET: the server sends the header alone (load balancers and monitors probe with it).
  if (path == "/healthz" || path == "/readyz" || path == "/metrics") {
    Respond respond = respond_as(path.substr(1));
    if (!is_get && method != http::verb::head) return respond(MethodNotAllowed("GET, HEAD"));
    if (header_check != nullptr) return;
    if (path == "/healthz") return respond(JsonResponse(http::status::ok, {{"status", "ok"}}));
    if (path == "/readyz") return respond(Ready());
    const bool gzip = AcceptsGzip(ToStd(req[http::field::accept_encoding]));
    return OnPool(respond, [this, gzip] {
      Response res{http::status::ok, 11};
      res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      res.set(http::field::vary, "Accept-Encoding");
      res.body() = metrics_->Scrape(store_, options_.store_dir);
      // Prometheus asks for gzip: the text of a few hundred series shrinks about tenfold.
      if (gzip) {
        if (StatusOr<std::string> packed = Gzip(res.body()); packed.ok()) {
          res.body() = std::move(*packed);
          res.set(http::field::content_encoding, "gzip");
        }  // else the text as it is, which the client accepts too
      }
      return res;
    });
  }

  // Signing in to the report pages: open to all (the form checks the token).
  if (path == "/login" || path == "/logout") {
    Respond respond = respond_as(path.substr(1));
    if (path == "/login" && !is_get && !is_post) return respond(MethodNotAllowed("GET, POST"));
    if (path == "/logout" && !is_post) return respond(MethodNotAllowed("POST"));
    if (header_check != nullptr) return;
    if (path == "/logout") return respond(PostLogout(req));
    if (is_get) return respond(GetLogin(target));
    return respond(PostLogin(req));
  }

  // Which route, and which methods it allows.
  std::string allow;
  std::string arg;
  if (path == "/v1/pages") {
    route = "pages", allow = "POST";
  } else if (path == "/v1/similar") {
    route = "similar", allow = "GET, POST";
  } else if (path == "/v1/urls") {
    route = "urls", allow = "GET";
  } else if (path == "/v1/lost") {
    route = "lost", allow = "GET";
  } else if (path == "/v1/sweeps") {
    route = "sweeps", allow = "GET, POST";
  } else if (path == "/v1/stats") {
    route = "stats", allow = "GET";
  } else if (path == "/v1/crawl") {
    route = "crawl", allow = "GET, POST";
  } else if (path == "/v1/crawl/stop") {
    // An action on the running sweep, like /v1/sweeps/NAME/close, rather than DELETE /v1/crawl:
    // nothing is deleted (the pages stay, the sweep stays open), and writes are POSTs here.
    route = "crawl_stop", allow = "POST";
  } else if (path == "/v1/clusters") {
    route = "cluster_list", allow = "GET";
  } else if (path == "/v1/identical") {
    route = "identical", allow = "GET";
  } else if (path == "/v1/reports/changes") {
    route = "reports_changes", allow = "GET";
  } else if (path == "/v1/reports/identical") {
    route = "reports_identical", allow = "GET";
  } else if (path == "/v1/reports/clusters") {
    route = "reports_clusters", allow = "GET";
  } else if (path == "/reports/changes") {
    // The HTML page of the same report, for a browser (behind the read token like /v1/ reads).
    route = "reports_changes_page", allow = "GET";
  } else if (path == "/v1/reports/history") {
    route = "reports_history", allow = "GET";
  } else if (path == "/reports/history") {
    route = "reports_history_page", allow = "GET";
  } else if (path == "/reports/identical") {
    route = "reports_identical_page", allow = "GET";
  } else if (path == "/reports/clusters") {
    route = "reports_clusters_page", allow = "GET";
  } else if (path == "/reports/url") {
    route = "reports_url_page", allow = "GET";
  } else if (path == "/reports/" || path == "/reports") {
    route = "reports_index_page", allow = "GET";
  } else if (path == "/v1/templates") {
    route = "templates", allow = "GET";
  } else if (path == "/v1/forget") {
    // A takedown: an action that removes what a body names, like /v1/sweeps/NAME/close, rather
    // than DELETE with a body, which some proxies and clients drop.
    route = "forget", allow = "POST";
  } else if (path == "/v1/forgets") {
    route = "forgets", allow = "GET";
  } else if (path.rfind("/v1/clusters/", 0) == 0 && path.size() > 22 &&
             path.compare(path.size() - 9, 9, "/template") == 0) {
    route = "cluster_template", allow = "POST, DELETE", arg = path.substr(13, path.size() - 22);
  } else if (path.rfind("/v1/clusters/", 0) == 0) {
    route = "clusters", allow = "GET", arg = path.substr(13);
  } else if (path.rfind("/v1/documents/", 0) == 0 &&
             path.find("/common/", 14) != std::string::npos) {
    route = "document_common", allow = "GET", arg = path.substr(14);
  } else if (path.rfind("/v1/documents/", 0) == 0) {
    route = "documents", allow = "GET", arg = path.substr(14);
  } else if (path.rfind("/v1/sweeps/", 0) == 0 && path.size() > 17 &&
             path.compare(path.size() - 6, 6, "/close") == 0) {
    route = "sweep_close", allow = "POST", arg = path.substr(11, path.size() - 17);
  } else if (path.rfind("/v1/sweeps/", 0) == 0 && path.size() > 18 &&
             path.compare(path.size() - 7, 7, "/reopen") == 0) {
    route = "sweep_reopen", allow = "POST", arg = path.substr(11, path.size() - 18);
  }
  Respond respond = respond_as(route);
  if (allow.empty()) {
    return respond(ErrorResponse(http::status::not_found, "not_found",
                                 "no such resource: " + path.substr(0, 200)));
  }
  const bool allowed = (is_get && allow.find("GET") != std::string::npos) ||
                       (is_post && allow.find("POST") != std::string::npos) ||
                       (is_delete && allow.find("DELETE") != std::string::npos);
  if (!allowed) return respond(MethodNotAllowed(allow));

  if (std::optional<Response> denied = CheckAuth(req, is_post || is_delete)) {
    // A person opening a report page is sent to sign in, and back; a client that sent a token
    // is told it is wrong.
    if (is_get && path.starts_with("/reports") && req[http::field::authorization].empty()) {
      return respond(LoginRedirect(ToStd(req.target())));
    }
    return respond(*denied);
  }
  if (header_check != nullptr) {
    if (std::optional<Response> refused = CheckBodyHeader(req, route, target)) respond(*refused);
    return;
  }
  if (is_post && !ContentEncoding(req).empty()) {
    // Inflating a body takes milliseconds (~40 for 16 MiB): on the pool, not the I/O thread.
    // The closure owns `respond`: if the pool drops it unrun, the Reply inside answers 503.
    auto shared_req = std::make_shared<Request>(std::move(req));
    const bool queued = pool_->TrySubmit([this, shared_req, route, target, arg, respond] {
      if (std::optional<Response> refused = DecodeContentEncoding(*shared_req))
        return respond(*refused);
      Dispatch(std::move(*shared_req), route, target, arg, respond);
    });
    if (!queued) {
      respond(ErrorResponse(http::status::service_unavailable, "unavailable",
                            "the server is busy; retry later", options_.retry_after_s));
    }
    return;
  }
  Dispatch(std::move(req), route, target, arg, respond);
}

void Api::Dispatch(Request req, const std::string& route, const Target& target,
                   const std::string& arg, const Respond& respond) {
  const bool is_post = req.method() == http::verb::post;
  if (route == "pages") {
    if (dedup::ParseContentType(ToStd(req[http::field::content_type])).mime ==
        "application/x-ndjson") {
      // The lines carry each page's url, date and status.
      if (Status s = CheckParams(target, {"sweep"}); !s.ok()) return respond(s);
      return PostPagesBatch(std::move(req), target, respond);
    }
    if (Status s = CheckParams(target, {"url", "fetched_at", "status", "location", "sweep"});
        !s.ok()) {
      return respond(s);
    }
    return PostPages(req, target, respond);
  }
  Status params = OkStatus();
  if (route == "similar") {
    params = is_post ? CheckParams(target, {"threshold", "limit"})
                     : CheckParams(target, {"url", "threshold", "limit"});
  } else if (route == "urls" && !target.Get("url")) {
    params =
        CheckParams(target, {"host", "prefix", "sweep", "status", "verdict", "after", "limit"});
  } else if (route == "urls" || route == "lost") {
    params = CheckParams(target, {"url"});
  } else if (route == "cluster_list") {
    params = CheckParams(target, {"min_size", "after", "limit"});
  } else if (route == "identical") {
    params = CheckParams(target, {"min_urls", "after", "limit"});
  } else if (route == "clusters") {
    params = CheckParams(target, {"after", "limit"});
  } else if (route == "document_common") {
    params = CheckParams(target, {"limit"});
  } else if (route == "templates" || route == "forgets") {
    params = CheckParams(target, {"after", "limit"});
  } else if (route == "reports_changes") {
    params = CheckParams(target, {"from", "to", "format", "list", "after", "limit"});
  } else if (route == "reports_identical") {
    params = CheckParams(target, {"format", "limit", "max_urls"});
  } else if (route == "reports_identical_page") {
    params = CheckParams(target, {"limit", "max_urls"});
  } else if (route == "reports_clusters") {
    params = CheckParams(target, {"format", "limit", "max_urls", "min_bytes", "min_share",
                                  "max_chunk_docs", "max_pairs_per_doc"});
  } else if (route == "reports_clusters_page") {
    params = CheckParams(target, {"limit", "max_urls", "min_bytes", "min_share", "max_chunk_docs",
                                  "max_pairs_per_doc"});
  } else if (route == "reports_history") {
    params = CheckParams(target, {"format", "host"});
  } else if (route == "reports_history_page") {
    params = CheckParams(target, {"host"});
  } else if (route == "reports_changes_page") {
    params = CheckParams(target, {"from", "to"});
  } else if (route == "reports_url_page") {
    params = CheckParams(target, {"url"});
  } else {
    params = CheckParams(target, {});
  }
  if (params.ok() && (route == "crawl" || route == "crawl_stop" || route == "cluster_template") &&
      req.method() != http::verb::get) {
    // These actions take no body: one with members (seeds, a sweep name) would be ignored.
    StatusOr<Json> body = ParseObjectBody(req.body());
    params = body.ok() ? CheckMembers(*body, {}) : body.status();
  }
  if (!params.ok()) return respond(params);
  // The rest are store queries and sweep changes: off the I/O thread. The writes on the pool,
  // the reads (POST /v1/similar too) on the read pool, so that reports never hold a sketch
  // worker.
  const bool write = req.method() != http::verb::get && route != "similar";
  auto shared_req = std::make_shared<Request>(std::move(req));
  if (write) {
    return OnPool(respond, [this, route, is_post, arg, shared_req]() -> StatusOr<Response> {
      if (route == "sweeps") return PostSweep(*shared_req);
      if (route == "crawl") return PostCrawl();
      if (route == "crawl_stop") return StopCrawl(RequestIdOf(*shared_req));
      if (route == "cluster_template") return is_post ? PostTemplate(arg) : DeleteTemplate(arg);
      if (route == "sweep_reopen") return ReopenSweep(arg);
      if (route == "forget") return PostForget(*shared_req);
      return CloseSweep(*shared_req, arg);  // sweep_close
    });
  }
  OnReadPool(respond, [this, route, is_post, target, arg, shared_req]() -> StatusOr<Response> {
    if (route == "similar") return is_post ? PostSimilar(*shared_req, target) : GetSimilar(target);
    if (route == "urls") return target.Get("url") ? GetUrls(target) : ListUrls(target);
    if (route == "cluster_list") return ListClusters(target);
    if (route == "identical") return ListIdentical(target);
    if (route == "lost") return GetLost(target);
    if (route == "sweeps") return is_post ? PostSweep(*shared_req) : GetSweeps();
    if (route == "stats") return GetStats();
    if (route == "reports_changes") return GetChangeReport(target, /*page=*/false);
    if (route == "reports_changes_page") return GetChangeReport(target, /*page=*/true);
    if (route == "reports_identical") return GetIdenticalReport(target, /*page=*/false);
    if (route == "reports_identical_page") return GetIdenticalReport(target, /*page=*/true);
    if (route == "reports_clusters") return GetClusterReport(target, /*page=*/false);
    if (route == "reports_clusters_page") return GetClusterReport(target, /*page=*/true);
    if (route == "reports_history") return GetHistoryReport(target, /*page=*/false);
    if (route == "reports_history_page") return GetHistoryReport(target, /*page=*/true);
    if (route == "reports_url_page") return GetUrlPage(target);
    if (route == "reports_index_page") return GetReportIndex(target.path == "/reports");
    if (route == "crawl") return GetCrawl();
    if (route == "templates") return ListTemplates(target);
    if (route == "forgets") return ListForgets(target);
    if (route == "clusters") return GetCluster(arg, target);
    if (route == "documents") return GetDocument(arg);
    if (route == "document_common") return GetCommon(arg, target);
    return InternalError("no read for route " + route);
  });
}

std::string Api::ContentEncoding(const Request& req) {
  std::string coding(ToStd(req[http::field::content_encoding]));
  coding.erase(0, coding.find_first_not_of(" \t"));
  coding.erase(coding.find_last_not_of(" \t") + 1);
  for (char& c : coding) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return coding == "identity" ? std::string() : coding;
}

std::optional<Response> Api::DecodeContentEncoding(Request& req) const {
  const std::string coding = ContentEncoding(req);
  if (coding.empty()) return std::nullopt;
  const bool gzip = coding == "gzip" || coding == "x-gzip";
  if (!gzip && coding != "deflate") {
    return ErrorResponse(http::status::unsupported_media_type, "unsupported_media_type",
                         "Content-Encoding " + coding.substr(0, 100) +
                             " is not accepted: send the body as it is, or with gzip or deflate");
  }
  const size_t max_body_bytes = settings()->max_body_bytes;
  StatusOr<std::string> decoded = crawler::InflateBody(req.body(), gzip, max_body_bytes);
  if (!decoded.ok()) {
    if (decoded.status().code() == StatusCode::kResourceExhausted) {
      return ErrorResponse(http::status::payload_too_large, "payload_too_large",
                           "the body decoded from " + coding + " is over the limit of " +
                               std::to_string(max_body_bytes) + " bytes (limits.max_body_bytes)");
    }
    return Error(InvalidArgumentError("Content-Encoding " + coding + ": " +
                                      std::string(decoded.status().message())),
                 RequestIdOf(req));
  }
  req.body() = std::move(*decoded);
  req.erase(http::field::content_encoding);
  return std::nullopt;
}

std::optional<Response> Api::CheckAuth(const Request& req, bool is_write) const {
  const std::shared_ptr<const ApiSettings> settings = this->settings();
  if (settings->token.empty() || !(is_write ? settings->protect_writes : settings->protect_reads)) {
    return std::nullopt;
  }
  const std::string_view auth = ToStd(req[http::field::authorization]);
  // RFC 9110 11.1: the scheme is case-insensitive ("bearer", "BEARER"), then one or more spaces.
  constexpr std::string_view kBearer = "bearer";
  bool ok = false;
  if (auth.size() > kBearer.size() && auth[kBearer.size()] == ' ' &&
      boost::beast::iequals(boost::beast::string_view(auth.data(), kBearer.size()),
                            boost::beast::string_view(kBearer.data(), kBearer.size()))) {
    std::string_view credentials = auth.substr(kBearer.size());
    credentials.remove_prefix(std::min(credentials.find_first_not_of(' '), credentials.size()));
    ok = ConstantTimeEquals(credentials, settings->token);
  }
  // A read may come from a browser signed in at /login; a write never does.
  if (!ok && !is_write && auth.empty()) {
    const std::optional<std::string_view> session =
        CookieValue(ToStd(req[http::field::cookie]), kSessionCookie);
    ok = session.has_value() && sessions_.Valid(*session, Sessions::Clock::now());
  }
  if (ok) return std::nullopt;
  Response res = ErrorResponse(http::status::unauthorized, "unauthenticated",
                               auth.empty() ? "this request needs Authorization: Bearer TOKEN"
                                            : "the bearer token is wrong");
  res.set(http::field::www_authenticate, "Bearer realm=\"shingled\"");
  return res;
}

Response Api::Ready() {
  Status status = store_->health();
  if (status.ok() && !pipeline_->healthy()) status = UnavailableError("the store writer failed");
  if (status.ok() && shutting_down_) status = UnavailableError("shutting down");
  if (status.ok()) status = store_->CanWrite();
  if (status.ok()) status = pipeline_->out_of_space();
  if (store::IsOutOfSpace(status)) {
    std::string message = "out of space, writes wait for room: ";
    message.append(status.message());
    return ErrorResponse(http::status::service_unavailable, "not_ready", message,
                         options_.retry_after_s);
  }
  if (!status.ok()) {
    // Not ready is an expected state here: say why (the failed commit), without internals.
    return ErrorResponse(http::status::service_unavailable, "not_ready",
                         status.code() == StatusCode::kUnavailable
                             ? status.message()
                             : "the store refuses writes after a failed commit: " +
                                   std::string(StatusCodeName(status.code())),
                         options_.retry_after_s);
  }
  return JsonResponse(http::status::ok,
                      {{"ready", true}, {"queued_pages", pipeline_->queued_pages()}});
}

}  // namespace shingled::daemon
