// The repository reports (paper 003, figures 5 and 6: identical-content sets and clusters by
// bytes in common) written as JSON, CSV or one HTML page, a piece at a time, to a sink: the
// command line writes each piece to its output as it comes, the daemon to a body bounded by its
// limit. The three formats are one report: the same rows from the same walk, with the same
// totals. docs/REPORTS.md defines every field and column.
//
// Thread-compatible free functions.
#ifndef SHINGLED_REPORT_REPO_REPORTS_H_
#define SHINGLED_REPORT_REPO_REPORTS_H_

#include <functional>
#include <optional>
#include <string_view>

#include "base/status.h"
#include "report/html.h"
#include "store/repo_reports.h"
#include "store/store.h"

namespace shingled::report {

// Where a report's text goes, piece by piece; an error stops the report.
using ReportSink = std::function<Status(std::string_view)>;

enum class RepoReportFormat { kJson, kCsv, kHtml };

// `format`: "json", "csv" or "html"; nullopt otherwise.
std::optional<RepoReportFormat> RepoReportFormatFromName(std::string_view format);

// JSON: {"report": "identical", "totals": {...}, "sets": [{...}, ...]}. CSV (RFC 4180, CRLF):
// one line per listed URL of each set. HTML: the totals as figures, then a table row per set
// (id "set-RANK"), streamed; each URL links to its timeline through `links`.
Status WriteIdenticalReport(const store::Store& store, const store::IdenticalReportOptions& options,
                            RepoReportFormat format, const ReportSink& sink,
                            const store::RepoReportProgress& progress = {},
                            const html::Links& links = {});

// JSON: {"report": "clusters", "settings": {...}, "clusters": [{...}, ...], "totals": {...}}
// (the totals last: they are known at the end). CSV: per cluster a "cluster" line, then a "link"
// line per link and a "document" line per listed URL of each document. HTML: the settings and
// totals, a table of the clusters linking to a section per cluster (id "cluster-RANK") with its
// documents and links; the page is held in memory until the totals are known (~the JSON's
// size), then written.
Status WriteClusterReport(const store::Store& store, const store::ClusterReportOptions& options,
                          RepoReportFormat format, const ReportSink& sink,
                          const store::RepoReportProgress& progress = {},
                          const html::Links& links = {});

}  // namespace shingled::report

#endif  // SHINGLED_REPORT_REPO_REPORTS_H_
