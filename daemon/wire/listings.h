// The listings of the store (docs/API.md, "Listings") as the HTTP API and `shingled list` read
// and print them: their parameters, their cursors and their JSON. One parser per listing takes
// the parameters by name, so that `GET /v1/urls?host=...` and `shingled list urls --host ...`
// accept and refuse the same values with the same messages.
//
// Cursors are opaque to clients: base64url (RFC 4648 section 5, no padding) of a tag byte and
// the store's cursor, so that they are safe in a query string and a cursor of one listing is
// refused by another.
//
// Thread-compatible free functions.
#ifndef SHINGLED_DAEMON_LISTINGS_H_
#define SHINGLED_DAEMON_LISTINGS_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "daemon/wire/request_parse.h"
#include "store/store.h"

namespace shingled::daemon {

// Page sizes (`limit`) of every listing: 1..kMaxListLimit, kDefaultListLimit when absent.
inline constexpr size_t kDefaultListLimit = 100;
inline constexpr size_t kMaxListLimit = 1000;
// The URLs a page of /v1/urls looks at, at most, before it ends (store::UrlListOptions).
inline constexpr size_t kListMaxExamined = 10000;
// The default page of a cluster's documents (GET /v1/clusters/ID).
inline constexpr size_t kDefaultMembersLimit = 100;

// The parameters of a listing, by name (a query string's, or the command line's flags under the
// same names). Absent: not in the map.
using ListParams = std::map<std::string, std::string>;

// base64url without padding, and back. InvalidArgument for text that is not base64url.
std::string EncodeBase64Url(std::string_view bytes);
StatusOr<std::string> DecodeBase64Url(std::string_view text);

// `limit` (1..kMaxListLimit; `fallback` when absent). InvalidArgument naming the value.
StatusOr<size_t> ParseListLimit(const ListParams& params, size_t fallback = kDefaultListLimit);

// The URL listing's options from `host` (a host or host:port: the key ranges of its http and
// https roots, as a sweep's scope names hosts), `prefix` (a URL prefix, normalized as page URLs
// are), `sweep` (a sweep's name, looked up in `store`), `status` (live, dead, gone, redirect,
// failed), `verdict` (a verdict's name), `after` (a cursor) and `limit`. InvalidArgument saying
// which is wrong, also for a sweep name the store does not hold; other errors of the store as
// they are. max_examined is kListMaxExamined.
StatusOr<store::UrlListOptions> ParseUrlListing(const ListParams& params,
                                                const store::Store& store);
// `min_size` (2..2^64-1, default 2), `after`, `limit`.
StatusOr<store::ClusterListOptions> ParseClusterListing(const ListParams& params);
// `min_urls` (2..2^64-1, default 2), `after`, `limit`.
StatusOr<store::IdenticalSetOptions> ParseIdenticalListing(const ListParams& params);
// A cluster's documents: `after` (a cursor; absent: 0) and `limit` (default
// kDefaultMembersLimit) into `*after` and `*limit`.
Status ParseMembersListing(const ListParams& params, store::DocId* after, size_t* limit);

// One item of each listing, and the whole page with its "next" cursor (null on the last page).
Json UrlItemJson(const store::UrlListItem& item);
Json UrlPageJson(const store::UrlPage& page);
Json ClusterSummaryJson(const store::ClusterSummary& cluster);
Json ClusterListJson(const store::ClusterListPage& page);
Json IdenticalSetJson(const store::IdenticalSet& set);
Json IdenticalListJson(const store::IdenticalSetPage& page);
// ClusterJson of the page's members, "size" the whole cluster's, and "next".
Json ClusterMembersJson(const store::ClusterMembersPage& page);

// The cursors of each listing as clients see them.
std::string UrlCursor(const std::string& key);
std::string ClusterCursorText(const store::ClusterCursor& cursor);
std::string IdenticalCursorText(const store::IdenticalCursor& cursor);
std::string MembersCursorText(store::DocId after);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_LISTINGS_H_
