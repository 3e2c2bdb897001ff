// The repository reports over HTTP: GET /v1/reports/identical and GET /v1/reports/clusters, as
// JSON, CSV or HTML, and their pages /reports/identical and /reports/clusters (the HTML of the
// same report, with the same parameters but format) (docs/API.md, docs/REPORTS.md). They run on
// the TaskPool. The answer holds at most `limit` sets or clusters (at most kMaxRepoReportRows): the
// whole report of a large store comes from `shingled report`, which streams it to a file.
#include <cstdlib>

#include "daemon/api/api.h"
#include "daemon/wire/request_parse.h"
#include "report/repo_reports.h"

namespace shingled::daemon {
namespace {

// A number parameter in 0..1, or `fallback` when absent.
StatusOr<double> Share(const Target& target, const std::string& name, double fallback) {
  const std::optional<std::string> text = target.Get(name);
  if (!text) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  // The whole text, not up to a NUL: "0.5%00x" decodes to a NUL inside the value.
  if (text->empty() || end != text->c_str() + text->size() || !(v >= 0 && v <= 1)) {
    std::string message = name;
    message.append(" \"").append(text->substr(0, 40)).append("\" is not a number in 0..1");
    return InvalidArgumentError(message);
  }
  return v;
}

Response Text(std::string body, report::RepoReportFormat format) {
  switch (format) {
    case report::RepoReportFormat::kHtml:
      return ReportHtmlResponse(std::move(body));
    case report::RepoReportFormat::kCsv:
      return ReportTextResponse(std::move(body), "text/csv; charset=utf-8; header=present");
    case report::RepoReportFormat::kJson:
      break;
  }
  return ReportTextResponse(std::move(body), "application/json");
}

// The format asked for: html for a page; else format=, json by default.
std::optional<report::RepoReportFormat> FormatOf(const Target& target, bool page) {
  if (page) return report::RepoReportFormat::kHtml;
  return report::RepoReportFormatFromName(target.Get("format").value_or("json"));
}

report::html::Links LinksOf(bool page) {
  return page ? report::html::Links::FromReports() : report::html::Links::FromApi();
}

}  // namespace

StatusOr<Response> Api::GetIdenticalReport(const Target& target, bool page) {
  const std::optional<report::RepoReportFormat> format = FormatOf(target, page);
  if (!format) return InvalidArgumentError("format must be json, csv or html");
  store::IdenticalReportOptions options;
  StatusOr<uint64_t> limit =
      ParseInteger("limit", target.Get("limit"), kDefaultReportRows, 1, kMaxRepoReportRows);
  if (!limit.ok()) return limit.status();
  StatusOr<uint64_t> max_urls =
      ParseInteger("max_urls", target.Get("max_urls"), 100, 1, kMaxRepoReportUrls);
  if (!max_urls.ok()) return max_urls.status();
  options.limit = *limit;
  options.max_urls = *max_urls;
  std::string body;
  Status s = report::WriteIdenticalReport(
      *store_, options, *format,
      [&](std::string_view text) {
        body.append(text);
        return OkStatus();
      },
      {}, LinksOf(page));
  if (!s.ok()) return s;
  return Text(std::move(body), *format);
}

StatusOr<Response> Api::GetClusterReport(const Target& target, bool page) {
  const std::optional<report::RepoReportFormat> format = FormatOf(target, page);
  if (!format) return InvalidArgumentError("format must be json, csv or html");
  store::ClusterReportOptions options;
  StatusOr<uint64_t> limit =
      ParseInteger("limit", target.Get("limit"), kDefaultReportRows, 1, kMaxRepoReportRows);
  if (!limit.ok()) return limit.status();
  StatusOr<uint64_t> max_urls =
      ParseInteger("max_urls", target.Get("max_urls"), 10, 1, kMaxRepoReportUrls);
  if (!max_urls.ok()) return max_urls.status();
  StatusOr<uint64_t> min_bytes =
      ParseInteger("min_bytes", target.Get("min_bytes"), options.min_bytes, 0, uint64_t{1} << 40);
  if (!min_bytes.ok()) return min_bytes.status();
  StatusOr<double> min_share = Share(target, "min_share", options.min_share);
  if (!min_share.ok()) return min_share.status();
  StatusOr<uint64_t> max_chunk_docs = ParseInteger("max_chunk_docs", target.Get("max_chunk_docs"),
                                                   options.max_chunk_docs, 2, 1000000);
  if (!max_chunk_docs.ok()) return max_chunk_docs.status();
  StatusOr<uint64_t> max_pairs = ParseInteger("max_pairs_per_doc", target.Get("max_pairs_per_doc"),
                                              options.max_pairs_per_doc, 1, 100000);
  if (!max_pairs.ok()) return max_pairs.status();
  options.limit = *limit;
  options.max_urls = *max_urls;
  options.min_bytes = *min_bytes;
  options.min_share = *min_share;
  options.max_chunk_docs = *max_chunk_docs;
  options.max_pairs_per_doc = *max_pairs;
  std::string body;
  Status s = report::WriteClusterReport(
      *store_, options, *format,
      [&](std::string_view text) {
        body.append(text);
        return OkStatus();
      },
      {}, LinksOf(page));
  if (!s.ok()) return s;
  return Text(std::move(body), *format);
}

}  // namespace shingled::daemon
