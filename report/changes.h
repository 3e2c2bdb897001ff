// The change report (docs/REPORTS.md) rendered as JSON, CSV and one self-contained HTML page,
// for the daemon (/v1/reports/changes, /reports/changes) and the command line (`shingled report
// changes`). Depends on the store's types only.
//
// Thread-compatible free functions.
#ifndef SHINGLED_REPORT_CHANGES_H_
#define SHINGLED_REPORT_CHANGES_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "report/html.h"
#include "store/store.h"
#include "store/types.h"

namespace shingled::report {

using Json = nlohmann::ordered_json;

// "2026-11-27T05:00:00Z".
std::string IsoTime(int64_t unix_seconds);

// The report: the pair's sweeps, every count of the pair at the top level (`urls`, `unchanged`,
// `changed`, `moved`, `born`, `died`, ...), `bands`, `hosts`, and with `history` (may be null)
// `series`, `lifetimes` and `changes_per_url`.
Json ChangeReportJson(const store::ChangeReport& report, const store::ChangeHistory* history);
// The counts of one pair (the top level of ChangeReportJson, and each element of `series`).
Json ChangeCountsJson(const store::ChangeCounts& counts);
Json ChangeRowJson(const store::ChangeRow& row);
// A page of a list: {"from", "to", "list", "rows", "next_after"} (next_after null at the end).
Json ChangeListJson(const store::ChangeReport& pair, store::ChangeKind kind,
                    const store::ChangeList& list);

// CSV (RFC 4180, CRLF line ends) of a list's rows: the header line, then one line per row.
std::string ChangeCsvHeader();
std::string ChangeCsvLine(const store::ChangeRow& row);
// CSV of the per-host counts (and a "(all)" line with the totals first).
std::string HostsCsv(const store::ChangeReport& report);
// One CSV field, quoted when it holds a comma, a quote, CR or LF.
std::string CsvField(std::string_view text);

// The HTML page: summary with charts, the bands, moves with the first `movers` (of
// report.total.moved), the per-host table, and with `history` (may be null) the series over
// all sweeps, lifetimes and changes per URL, each labelled as over all sweeps. Its URLs link to
// their timelines, and the page to the other reports and to the lists' CSV, through `links`.
std::string ChangeReportHtml(const store::ChangeReport& report, const store::ChangeHistory* history,
                             const std::vector<store::ChangeRow>& movers,
                             const html::Links& links = {});

// The most movers the HTML page lists, and the most hosts its table shows.
inline constexpr size_t kHtmlMovers = 500;
inline constexpr size_t kHtmlHosts = 100;

// --- from a store ---

// The sweeps that hold pages (SweepInfo::pages > 0), by start then id. An empty sweep (e.g. the
// daemon's default sweep when every page named its own) has nothing to compare.
StatusOr<std::vector<store::SweepInfo>> SweepsWithPages(const store::Store& store);

// The sweeps of a report named `from` and `to` (both, or both empty: the last two sweeps that
// hold pages, by start). InvalidArgument when only one is given or both name one sweep; NotFound
// naming an unknown sweep, or when the store has fewer than two sweeps with pages.
StatusOr<std::pair<store::SweepInfo, store::SweepInfo>> ResolveSweeps(const store::Store& store,
                                                                      std::string_view from,
                                                                      std::string_view to);
// ChangesOverSweeps over the sweeps that hold pages: its intervals are the consecutive pairs of
// SweepsWithPages (an interval that skips an empty sweep costs one more ChangesBetween).
StatusOr<store::ChangeHistory> HistoryOverSweeps(const store::Store& store,
                                                 const store::ReportProgress& progress = {});

// The JSON report of the pair, with the history over all sweeps (HistoryOverSweeps).
StatusOr<Json> BuildChangeJson(const store::Store& store, store::SweepId from, store::SweepId to,
                               const store::ReportProgress& progress = {});
// The HTML page of the pair: ChangesBetween, ChangesOverSweeps and the first kHtmlMovers moves.
StatusOr<std::string> BuildChangeHtml(const store::Store& store, store::SweepId from,
                                      store::SweepId to, const store::ReportProgress& progress = {},
                                      const html::Links& links = {});

// --- the timeline over all sweeps ---

// The series of one host (`host[:port]`, "" for URLs without one): per consecutive pair of
// SweepsWithPages, that host's counts in the pair's report (all zero in a pair where it has no
// URL). Only `intervals` is set. Costs one ChangesBetween per interval.
StatusOr<store::ChangeHistory> HostHistoryOverSweeps(const store::Store& store,
                                                     std::string_view host,
                                                     const store::ReportProgress& progress = {});

// {"sweeps": [...], "series": [...]}: the sweeps with pages, and per consecutive pair its counts
// (ChangeCountsJson with `from` and `to`), from HistoryOverSweeps; with `host` (not null), also
// {"host": ...}: the series of that host alone (HostHistoryOverSweeps).
Json HistoryJson(const store::ChangeHistory& history, const std::string* host = nullptr);
// One page: a chart with a column per interval (its URLs by what they did, each column a link
// to that pair's change report) and the same numbers as a table; with `host`, of that host.
std::string HistoryHtml(const store::ChangeHistory& history, const html::Links& links = {},
                        const std::string* host = nullptr);

}  // namespace shingled::report

#endif  // SHINGLED_REPORT_CHANGES_H_
