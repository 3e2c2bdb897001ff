// HTML pages of what the store holds, beside the change report (report/changes.h): the largest
// clusters and the identical sets, and one URL's timeline with the resemblance between its
// versions and what lost and found says of it. Self-contained pages built with report/html.h.
//
// Thread-compatible free functions; each reads the store in its own queries.
#ifndef SHINGLED_REPORT_STORE_PAGES_H_
#define SHINGLED_REPORT_STORE_PAGES_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "store/store.h"

namespace shingled::report {

// The most clusters and identical sets the clusters page lists, and the most versions a
// timeline shows (the newest ones).
inline constexpr size_t kHtmlClusters = 100;
inline constexpr size_t kHtmlIdenticalSets = 100;
inline constexpr size_t kHtmlVersions = 1000;

// The largest clusters (ListClusters) and the identical sets with most URLs (ListIdenticalSets),
// the first `limit` of each (1..1000).
StatusOr<std::string> ClustersHtml(const store::Store& store, size_t limit);

// One URL's versions, newest last, each with its verdict, status, document and the resemblance
// of its content to the previous content (estimated from the minhashes), and lost and found's
// answer for it. NotFound for a URL never stored.
StatusOr<std::string> UrlTimelineHtml(const store::Store& store, std::string_view url);

// The index of the daemon's report pages (/reports/): the store's figures, every sweep with a
// link to the change report from the sweep before it, links to the clusters page, and a form
// that opens one URL's timeline. Links are relative: `base` is put before each ("" for a page
// served at /reports/, "reports/" for one at /reports). The newest `kHtmlSweeps` sweeps are
// listed.
inline constexpr size_t kHtmlSweeps = 200;
StatusOr<std::string> ReportIndexHtml(const store::Store& store, std::string_view base);

}  // namespace shingled::report

#endif  // SHINGLED_REPORT_STORE_PAGES_H_
