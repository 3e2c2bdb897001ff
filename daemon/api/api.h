// The HTTP API (docs/API.md): routes /v1/..., /metrics, /healthz and /readyz onto the ingest
// pipeline and the store. CPU and store work runs on the TaskPool; ingest on the pipeline. The
// I/O threads only parse targets and check auth.
//
// Thread-safety: Handle() may be called from any I/O thread at once; set_shutting_down() from
// any thread.
#ifndef SHINGLED_DAEMON_API_H_
#define SHINGLED_DAEMON_API_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "daemon/api/sessions.h"
#include "daemon/api/warc_upload.h"
#include "daemon/http/http_server.h"
#include "daemon/ingest/ingest.h"
#include "daemon/ingest/task_pool.h"
#include "daemon/metrics/metrics.h"
#include "daemon/wire/http_query.h"
#include "dedup/sketch.h"
#include "dedup/streaming_canonicalizer.h"
#include "store/store.h"

namespace shingled::daemon {

class CrawlScheduler;

// What SIGHUP may change while requests are served (Api::SetSettings).
struct ApiSettings {
  size_t max_url_bytes = 4096;
  // limits.max_body_bytes: also the limit of a body once its Content-Encoding is decoded.
  size_t max_body_bytes = size_t{16} << 20;
  size_t max_batch_pages = 1000;
  // WARC uploads read at once, and the fairness rule of their slots (warc_slots.h):
  // limits.max_warc_uploads, max_warc_uploads_per_client, warc_slot_min_bytes_per_second.
  size_t max_warc_uploads = 4;
  size_t max_warc_uploads_per_client = 2;
  double warc_slot_min_bytes_per_second = 65536;
  // Bearer token; empty means no authentication.
  std::string token;
  bool protect_writes = true;
  bool protect_reads = false;
};

// Rows of a page of /v1/reports/changes?list=... (`limit`): the default and the most.
inline constexpr size_t kDefaultReportRows = 100;
inline constexpr size_t kMaxReportRows = 1000;
// The repository reports over HTTP: sets or clusters per answer, and URLs listed per
// set or document, at most.
inline constexpr size_t kMaxRepoReportRows = 10000;
inline constexpr size_t kMaxRepoReportUrls = 1000;

// A report's text answer (CSV, JSON written by the report), and its HTML page with the Content
// Security Policy of the report pages (nothing on a page may load or run anything, and no other
// site may frame it: also X-Frame-Options DENY).
Response ReportTextResponse(std::string body, const char* content_type);
Response ReportHtmlResponse(std::string body);

struct ApiOptions {
  std::string store_dir;      // for the disk-size metric
  std::string default_sweep;  // "" : requests must name a sweep
  ApiSettings settings;       // the first settings
  WarcUploadOptions warc;     // how each WARC upload runs
  int retry_after_s = 1;
  dedup::CanonicalizerKind canonicalizer = dedup::CanonicalizerKind::kStreaming;
  // Unix seconds now; a seam for tests of dates.
  std::function<int64_t()> now;
  // The time budget of each read (a report, a listing, a query) on the read pool, and its
  // configuration key for the 503 that names it; zero: none.
  std::chrono::milliseconds read_budget{0};
  std::string read_budget_key = "server.read_budget_ms";
  // --- The crawler refused at start-up ---
  // Why [crawler] enabled = true did not start a crawler (a seed it cannot use); GET /v1/crawl
  // and POST /v1/crawl say it. Empty when the crawler runs or is not enabled.
  std::string crawler_error;
};

class Api : public HttpHandler {
 public:
  // Everything given must outlive the Api. `crawl` is null when the crawler is not enabled.
  // `pool` runs the sketching and the writes, `read_pool` the reads (reports, listings,
  // queries), so that reads never hold the sketch workers.
  Api(store::Store* store, std::shared_ptr<const dedup::SketchContext> context,
      IngestPipeline* pipeline, TaskPool* pool, TaskPool* read_pool, Metrics* metrics,
      ApiOptions options, CrawlScheduler* crawl = nullptr);

  // Waits for the WARC uploads' threads (JoinUploads).
  ~Api() override;

  void Handle(Request request, ReplyPtr reply) override;
  void OnServerResponse(http::status status) override;
  // POST /v1/pages with a WARC body (application/warc, application/warc+gzip) is streamed.
  bool StreamsBody(const Request& header) override;
  std::shared_ptr<BodySink> HandleStreamed(Request header, ReplyPtr reply) override;
  // The route, method, token, Content-Type and Content-Encoding, before the body is read.
  std::optional<Response> CheckHeader(const Request& header) override;

  // Shutdown, after the server stopped accepting: uploads still reading stop (what they read is
  // committed and answered for, with 503). Does not wait.
  void AbortUploads();
  // Waits until every upload has answered. Call after the pipeline stopped (so that no upload
  // waits for room in it) and before the I/O threads end (so that the answers can be sent).
  void JoinUploads();

  // /readyz answers 503 from now on, so that load balancers stop sending work.
  void set_shutting_down() { shutting_down_ = true; }

  // SIGHUP: requests that begin from now on see `settings`; those under way keep theirs.
  void SetSettings(ApiSettings settings);

 private:
  // How a request is answered: with its response, or with its error, which Respond turns into
  // the response through Error(). Each request gets its own Respond (Serve, HandleStreamed),
  // which knows its id: so the handlers return errors as they are, and the one place that maps
  // them to HTTP logs the server-side ones naming the request.
  using Respond = std::function<void(StatusOr<Response>)>;

  // Handle, or with `header_check` CheckHeader: the same route table and checks; with only the
  // header, the checks that need no body, their refusal put in *header_check.
  void Serve(Request req, ReplyPtr reply, std::optional<Response>* header_check);
  // CheckHeader's checks of an authorized request to `route` that need no body: a Content-Type
  // or Content-Encoding it refuses, and the target of POST /v1/pages (api_ingest.cc).
  std::optional<Response> CheckBodyHeader(const Request& header, const std::string& route,
                                          const Target& target);

  // Runs `work` on the pool; 503 when the pool's queue is full.
  void OnPool(const Respond& respond, std::function<StatusOr<Response>()> work);
  // Runs the read `work` on the read pool within ApiOptions::read_budget; 503 when the read
  // pool's queue is full, or when the read goes over its budget.
  void OnReadPool(const Respond& respond, std::function<StatusOr<Response>()> work);
  // Handles an authorized request to `route` (a /v1/ resource) whose body is decoded.
  void Dispatch(Request req, const std::string& route, const Target& target, const std::string& arg,
                const Respond& respond);

  // api_ingest.cc
  void PostPages(const Request& req, const Target& target, Respond respond);
  void PostPagesBatch(Request req, const Target& target, Respond respond);
  StatusOr<store::SweepId> ResolveSweep(const std::string& name);
  void ForgetSweep(const std::string& name);

  // The handlers below answer with their response, or fail with the error they met, which the
  // request's Respond turns into its response (Error).

  // api_queries.cc
  StatusOr<Response> GetSimilar(const Target& target);
  StatusOr<Response> PostSimilar(const Request& req, const Target& target);
  StatusOr<Response> GetUrls(const Target& target);
  StatusOr<Response> GetLost(const Target& target);
  StatusOr<Response> GetDocument(const std::string& id);
  StatusOr<Response> GetSweeps();
  StatusOr<Response> PostSweep(const Request& req);
  StatusOr<Response> CloseSweep(const Request& req, const std::string& name);
  StatusOr<Response> ReopenSweep(const std::string& name);
  StatusOr<Response> GetStats();
  Response Ready();

  // api_common.cc: GET /v1/documents/A/common/B; `ids` is "A/common/B".
  StatusOr<Response> GetCommon(const std::string& ids, const Target& target);

  // api_templates.cc: POST and DELETE /v1/clusters/ID/template, GET /v1/templates.
  StatusOr<Response> PostTemplate(const std::string& id);
  StatusOr<Response> DeleteTemplate(const std::string& id);
  StatusOr<Response> ListTemplates(const Target& target);

  // api_forget.cc: POST /v1/forget (a takedown), GET /v1/forgets (the takedowns recorded).
  StatusOr<Response> PostForget(const Request& req);
  StatusOr<Response> ListForgets(const Target& target);

  // api_listings.cc
  StatusOr<Response> ListUrls(const Target& target);  // GET /v1/urls without url
  StatusOr<Response> ListClusters(const Target& target);
  StatusOr<Response> ListIdentical(const Target& target);
  // GET /v1/clusters/ID: a page of its documents.
  StatusOr<Response> GetCluster(const std::string& id, const Target& target);
  // api_reports.cc: GET /v1/reports/changes, and with `page` the HTML page /reports/changes;
  // GET /v1/reports/history (the timeline over all sweeps), and with `page` /reports/history.
  StatusOr<Response> GetChangeReport(const Target& target, bool page);
  StatusOr<Response> GetHistoryReport(const Target& target, bool page);
  // The HTML page /reports/url?url=U (one URL's timeline), and the index /reports/.
  StatusOr<Response> GetUrlPage(const Target& target);
  StatusOr<Response> GetReportIndex(bool without_slash);

  // api_repo_reports.cc: GET /v1/reports/identical and /v1/reports/clusters (JSON, CSV, HTML),
  // and with `page` the same report's HTML page /reports/identical, /reports/clusters.
  StatusOr<Response> GetIdenticalReport(const Target& target, bool page);
  StatusOr<Response> GetClusterReport(const Target& target, bool page);

  // api_crawl.cc
  Response GetCrawl();
  StatusOr<Response> PostCrawl();
  // POST /v1/crawl/stop; logs the stop naming the request.
  StatusOr<Response> StopCrawl(const std::string& request_id);

  // The request's Content-Encoding, trimmed and lower-cased; empty for none or identity.
  static std::string ContentEncoding(const Request& req);
  // Decodes a body sent with Content-Encoding gzip or deflate in place; an error response for
  // another coding, a corrupt body, or one over max_body_bytes once decoded.
  std::optional<Response> DecodeContentEncoding(Request& req) const;
  // 401 for a request without the bearer token a write (or, if so configured, a read) needs; a
  // read may show a session cookie instead (api_login.cc).
  std::optional<Response> CheckAuth(const Request& req, bool is_write) const;

  // api_login.cc: GET /login (the form; `problem` shown above it), POST /login (the token in,
  // a session cookie out, back to `next`), POST /logout; and the 303 to the form that a report
  // page answers a browser that has not signed in.
  Response GetLogin(const Target& target);
  Response LoginPage(std::string_view next, std::string_view problem, http::status status);
  StatusOr<Response> PostLogin(const Request& req);
  Response PostLogout(const Request& req);
  static Response LoginRedirect(std::string_view target);
  // The settings now in force: a snapshot, so that one request sees one set of them.
  std::shared_ptr<const ApiSettings> settings() const;
  // The response to a failed request: 507 for a full disk or map, else by HttpStatusFor. A
  // server-side failure (500) is logged first with its real message and `request_id` (the
  // request's, RequestIdOf), "request failed: DataLoss: ... request_id=ID"; its client gets
  // "internal error".
  Response Error(const Status& status, std::string_view request_id) const;
  // `result`'s response, or Error's for its error.
  Response Answer(StatusOr<Response>&& result, std::string_view request_id) const;

  store::Store* const store_;
  const std::shared_ptr<const dedup::SketchContext> context_;
  IngestPipeline* const pipeline_;
  TaskPool* const pool_;
  TaskPool* const read_pool_;
  Metrics* const metrics_;
  const ApiOptions options_;
  CrawlScheduler* const crawl_;
  std::atomic<bool> shutting_down_{false};

  // State below is protected by settings_mu_ (SetSettings replaces the pointer; readers copy it).
  mutable std::mutex settings_mu_;
  std::shared_ptr<const ApiSettings> settings_;

  // Browsers signed in at /login (ended when the token changes).
  Sessions sessions_{std::chrono::hours(8), 10000};

  // Sweep ids by name, so that each page does not look its sweep up. State below is protected
  // by sweeps_mu_.
  std::mutex sweeps_mu_;
  std::unordered_map<std::string, store::SweepId> sweep_ids_;

  // WARC uploads, finished ones reaped when the next starts. State below is protected by
  // uploads_mu_.
  std::mutex uploads_mu_;
  std::vector<std::shared_ptr<WarcUpload>> uploads_;
  bool uploads_stopped_ = false;
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_API_H_
