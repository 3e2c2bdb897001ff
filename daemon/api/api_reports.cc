// The reports: GET /v1/reports/changes (JSON, CSV, HTML) and the HTML page /reports/changes,
// GET /v1/reports/history (JSON, HTML) and /reports/history, one URL's timeline and the index
// (docs/API.md, docs/REPORTS.md). These run on the TaskPool.

#include <string>
#include <string_view>

#include "daemon/api/api.h"
#include "daemon/wire/json_codec.h"
#include "daemon/wire/request_parse.h"
#include "report/changes.h"
#include "report/store_pages.h"

namespace shingled::daemon {
namespace {

// A report page may show hostile URLs: nothing on it may load or run anything. And no other site
// may frame it (frame-ancestors; X-Frame-Options for browsers that predate it), so that its links
// and the index's form cannot be clicked through a page laid over it. `form_action` is where its
// forms may go: "'none'", or "'self'" for the index's.
std::string ReportCsp(std::string_view form_action) {
  std::string csp =
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
      "frame-ancestors 'none'; form-action ";
  csp.append(form_action);
  return csp;
}

}  // namespace

Response ReportTextResponse(std::string body, const char* content_type) {
  Response res{http::status::ok, 11};
  res.set(http::field::content_type, content_type);
  res.set("X-Content-Type-Options", "nosniff");
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response ReportHtmlResponse(std::string body) {
  Response res = ReportTextResponse(std::move(body), "text/html; charset=utf-8");
  res.set("Content-Security-Policy", ReportCsp("'none'"));
  res.set("X-Frame-Options", "DENY");
  return res;
}

namespace {

std::string KindNames() {
  std::string out;
  for (int k = 0; k < store::kChangeKinds; ++k) {
    if (k != 0) out.append(", ");
    out.append(store::ChangeKindName(static_cast<store::ChangeKind>(k)));
  }
  return out;
}

}  // namespace

StatusOr<Response> Api::GetChangeReport(const Target& target, bool page) {
  const std::string format = page ? "html" : target.Get("format").value_or("json");
  if (format != "json" && format != "csv" && format != "html") {
    return InvalidArgumentError("format must be json, csv or html");
  }
  std::optional<store::ChangeKind> kind;
  if (const std::optional<std::string> list = target.Get("list")) {
    kind = store::ChangeKindFromName(*list);
    if (!kind) return InvalidArgumentError("list must be one of " + KindNames());
    if (format == "html") {
      return InvalidArgumentError("list is for format=json (a page) or format=csv (all rows)");
    }
  }
  const bool paged = kind && format == "json";
  if (!paged && (target.Get("after") || target.Get("limit"))) {
    return InvalidArgumentError(
        "after and limit page a list: give them with list= and format=json");
  }
  StatusOr<uint64_t> after = ParseInteger("after", target.Get("after"), 0, 0, UINT64_MAX - 1);
  if (!after.ok()) return after.status();
  StatusOr<uint64_t> limit =
      ParseInteger("limit", target.Get("limit"), kDefaultReportRows, 1, kMaxReportRows);
  if (!limit.ok()) return limit.status();

  auto pair = report::ResolveSweeps(*store_, target.Get("from").value_or(""),
                                    target.Get("to").value_or(""));
  if (!pair.ok()) return pair.status();
  const store::SweepId from = pair->first.id, to = pair->second.id;

  if (format == "html") {
    StatusOr<std::string> html = report::BuildChangeHtml(
        *store_, from, to, {},
        page ? report::html::Links::FromReports() : report::html::Links::FromApi());
    if (!html.ok()) return html.status();
    return ReportHtmlResponse(std::move(*html));
  }
  if (paged) {
    store::ChangeListOptions options;
    options.kind = *kind;
    options.after = *after;
    options.limit = *limit;
    StatusOr<store::ChangeList> list = store_->ListChanges(from, to, options);
    if (!list.ok()) return list.status();
    store::ChangeReport names;
    names.from = pair->first;
    names.to = pair->second;
    return JsonResponse(http::status::ok, report::ChangeListJson(names, *kind, *list));
  }
  if (format == "csv") {
    std::string csv;
    if (kind) {
      // The whole list, in memory: ~150 bytes a row.
      csv = report::ChangeCsvHeader();
      Status s = store_->StreamChanges(from, to, *kind, [&](const store::ChangeRow& row) {
        csv.append(report::ChangeCsvLine(row));
        return OkStatus();
      });
      if (!s.ok()) return s;
    } else {
      StatusOr<store::ChangeReport> r = store_->ChangesBetween(from, to);
      if (!r.ok()) return r.status();
      csv = report::HostsCsv(*r);
    }
    return ReportTextResponse(std::move(csv), "text/csv; charset=utf-8; header=present");
  }
  StatusOr<report::Json> j = report::BuildChangeJson(*store_, from, to);
  if (!j.ok()) return j.status();
  return JsonResponse(http::status::ok, *j);
}

StatusOr<Response> Api::GetHistoryReport(const Target& target, bool page) {
  const std::string format = page ? "html" : target.Get("format").value_or("json");
  if (format != "json" && format != "html") {
    return InvalidArgumentError("format must be json or html");
  }
  const std::optional<std::string> host = target.Get("host");
  StatusOr<store::ChangeHistory> history =
      host ? report::HostHistoryOverSweeps(*store_, *host) : report::HistoryOverSweeps(*store_);
  if (!history.ok()) return history.status();
  const std::string* host_name = host ? &*host : nullptr;
  if (format == "html") {
    return ReportHtmlResponse(report::HistoryHtml(
        *history, page ? report::html::Links::FromReports() : report::html::Links::FromApi(),
        host_name));
  }
  return JsonResponse(http::status::ok, report::HistoryJson(*history, host_name));
}

StatusOr<Response> Api::GetUrlPage(const Target& target) {
  StatusOr<std::string> url = RequiredUrl(target, settings()->max_url_bytes);
  if (!url.ok()) return url.status();
  StatusOr<std::string> html =
      report::UrlTimelineHtml(*store_, *url, report::html::Links::FromReports());
  if (!html.ok()) return html.status();
  return ReportHtmlResponse(std::move(*html));
}

StatusOr<Response> Api::GetReportIndex(bool without_slash) {
  // At /reports (no slash) relative links resolve from "/": the pages are under reports/.
  const report::html::Links links = without_slash ? report::html::Links{true, "reports/", "v1/"}
                                                  : report::html::Links::FromReports();
  StatusOr<std::string> html = report::ReportIndexHtml(*store_, links);
  if (!html.ok()) return html.status();
  Response res = ReportHtmlResponse(std::move(*html));
  // The index's form opens /reports/url on this server.
  res.set("Content-Security-Policy", ReportCsp("'self'"));
  return res;
}

}  // namespace shingled::daemon
