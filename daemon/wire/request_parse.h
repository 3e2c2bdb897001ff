// What the HTTP API reads from a client, as pure functions over the request's text: query
// parameters, JSON bodies, the lines of an NDJSON batch, and the ISO-8601 dates the API and the
// command line accept. No store, no server: tests/fuzz/request_parse_fuzz.cc runs them on
// arbitrary input. docs/API.md describes what they accept.
//
// Thread-compatible free functions.
#ifndef SHINGLED_DAEMON_REQUEST_PARSE_H_
#define SHINGLED_DAEMON_REQUEST_PARSE_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/iso_time.h"
#include "base/status.h"
#include "daemon/wire/http_query.h"
#include "store/types.h"

namespace shingled::daemon {

using Json = nlohmann::ordered_json;

// Parses "2024-05-01", "2024-05-01T12:00:00Z", "2024-05-01T12:00:00.250+02:00" (fractions are
// dropped; a zone offset is at most 23:59) to Unix seconds. InvalidArgument naming the text
// otherwise.
StatusOr<int64_t> ParseIsoTime(std::string_view text);
// FormatIsoTime (base/iso_time.h) is its inverse for the years 0000-9999.
using shingled::FormatIsoTime;

// The most results /v1/similar returns (`limit`).
inline constexpr size_t kMaxQueryLimit = 1000;

// An HTTP status given by the client ("404"). InvalidArgument unless an integer 100..599.
StatusOr<int> ParseHttpStatus(std::string_view text);
// OK when every query parameter of `target` is one of `allowed`; else InvalidArgument naming the
// first unknown one and what the resource takes, so that a misspelt parameter ("date" for
// "fetched_at") is not silently ignored.
Status CheckParams(const Target& target, std::initializer_list<std::string_view> allowed);
// The whole of `text` as an unsigned decimal in min..max; otherwise InvalidArgument
// `NAME "TEXT" is not an integer in MIN..MAX` (TEXT cut to 40 bytes). Every integer a client
// gives (query parameters, ids in paths) is read by this, so that each is refused alike.
StatusOr<uint64_t> ParseInteger(std::string_view name, std::string_view text, uint64_t min,
                                uint64_t max);
// The same for an optional parameter: `fallback` when absent.
StatusOr<uint64_t> ParseInteger(std::string_view name, const std::optional<std::string>& text,
                                uint64_t fallback, uint64_t min, uint64_t max);
// A positive decimal id, as in /v1/clusters/ID. InvalidArgument naming `what` otherwise.
StatusOr<uint64_t> ParseId(std::string_view text, const char* what);
// `threshold` (a number in 0..1) and `limit` (an integer in 1..kMaxQueryLimit) of /v1/similar;
// the defaults of store::QueryOptions when absent. InvalidArgument naming the bad parameter.
StatusOr<store::QueryOptions> ParseQueryOptions(const Target& target);
// The `url` parameter, normalized by PageUrl. InvalidArgument when absent or when PageUrl
// refuses it.
StatusOr<std::string> RequiredUrl(const Target& target, size_t max_url_bytes);

// A JSON object body; an empty body is an empty object. InvalidArgument for anything else.
StatusOr<Json> ParseObjectBody(std::string_view body);
// The date in the optional ISO-8601 string member `key` of `j` (absent or null: `now`).
// InvalidArgument naming `key` for a non-string or a bad date.
StatusOr<int64_t> DateMember(const Json& j, const char* key, int64_t now);

// OK when every member of the JSON object `body` is one of `allowed`; else InvalidArgument
// naming the first unknown one and what the body takes, so that a misspelt key is not ignored.
Status CheckMembers(const Json& body, std::initializer_list<std::string_view> allowed);

// The longest scope prefix (the store's limit).
inline constexpr size_t kMaxScopePrefixBytes = 400;
// A sweep's scope (store::Store::OpenSweep) as the API and the command line name it: hosts
// ("example.com" or "example.com:8080", each giving its http and https roots) and URL prefixes
// (normalized as page URLs are, e.g. "https://example.com/docs/"). InvalidArgument naming the
// bad one.
StatusOr<std::vector<std::string>> SweepScope(const std::vector<std::string>& hosts,
                                              const std::vector<std::string>& prefixes);
// The same from the optional members `hosts` and `prefixes` (arrays of strings) of a JSON body.
StatusOr<std::vector<std::string>> SweepScopeMembers(const Json& body);

// A page as POST /v1/pages names it, before its sweep is looked up.
struct PagePost {
  std::string url;
  int http_status = 200;
  // A redirect's target (RedirectTarget of `location`); empty for any other status.
  std::string redirect_target;
  int64_t date = 0;  // Unix seconds
  std::string content_type;
  std::string body;
  std::string sweep;  // the sweep's name
};

// The query of a single-page POST /v1/pages: `url` (required, normalized by PageUrl), `status`,
// `location` (required with a redirect status, store::ClassifyHttpStatus, and refused with any
// other; resolved against `url` by RedirectTarget), `fetched_at` (absent: `now`) and `sweep`
// (absent: `default_sweep`). The body and Content-Type are the caller's. InvalidArgument saying
// which parameter is wrong.
StatusOr<PagePost> ParsePageTarget(const Target& target, std::string_view default_sweep,
                                   size_t max_url_bytes, int64_t now);

// One line of an NDJSON batch: a JSON object with `url` (required, normalized), `content`,
// `content_type`, `fetched_at`, `sweep`, `location` (strings or null) and `status` (an integer),
// and no other member. A page needs content when its status is 2xx (only then is it content);
// `location` is as in ParsePageTarget. InvalidArgument saying what is wrong.
StatusOr<PagePost> ParseBatchLine(std::string_view line, std::string_view default_sweep,
                                  size_t max_url_bytes, int64_t now);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_REQUEST_PARSE_H_
