// HTML pages of what the store holds, beside the reports (report/changes.h,
// report/repo_reports.h): one URL's timeline with the resemblance between its versions and what
// lost and found says of it, and the index of the report pages. Self-contained pages built with
// report/html.h.
//
// Thread-compatible free functions; each reads the store in its own queries.
#ifndef SHINGLED_REPORT_STORE_PAGES_H_
#define SHINGLED_REPORT_STORE_PAGES_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "report/html.h"
#include "store/store.h"

namespace shingled::report {

// The most versions a timeline shows (the newest ones).
inline constexpr size_t kHtmlVersions = 1000;

// One URL's versions, newest last, each with its date, sweep (by name), verdict, status, document
// and the resemblance of its content to the previous content (estimated from the minhashes, drawn
// on a 0-1 axis), and lost and found's answer for it, its candidates linking to their own
// timelines through `links`. NotFound for a URL never stored.
StatusOr<std::string> UrlTimelineHtml(const store::Store& store, std::string_view url,
                                      const html::Links& links = {});

// The index of the daemon's report pages (/reports/): the store's figures, every sweep with a
// link to the change report from the sweep with pages before it (an empty sweep is marked and
// compared with nothing), links to every report, and a form that opens one URL's timeline.
// `links.pages` is put before each ("" for a page served at /reports/, "reports/" for one at
// /reports). The newest `kHtmlSweeps` sweeps are listed.
inline constexpr size_t kHtmlSweeps = 200;
StatusOr<std::string> ReportIndexHtml(const store::Store& store, const html::Links& links);

}  // namespace shingled::report

#endif  // SHINGLED_REPORT_STORE_PAGES_H_
