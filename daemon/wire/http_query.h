// Request targets: the path and the decoded query parameters of "/v1/pages?url=...&sweep=...".
// Thread-compatible free functions.
#ifndef SHINGLED_DAEMON_HTTP_QUERY_H_
#define SHINGLED_DAEMON_HTTP_QUERY_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace shingled::daemon {

struct Target {
  std::string path;                           // percent-decoded
  std::map<std::string, std::string> params;  // percent-decoded; '+' is a space

  // The parameter, or nullopt when absent.
  std::optional<std::string> Get(const std::string& name) const;
};

// Splits and decodes a request target. InvalidArgument for a malformed percent escape, a
// parameter given twice, or a target that is not an absolute path.
StatusOr<Target> ParseTarget(std::string_view target);

// Percent-decodes `text` (with '+' as a space when `plus_is_space`). InvalidArgument for a bad
// escape.
StatusOr<std::string> PercentDecode(std::string_view text, bool plus_is_space);

// The URL a page is stored and looked up under, the same from every way in (a posted page, a
// line of a batch, a WARC record, `shingled ingest`, a query): an http or https URL normalized as
// the crawler normalizes the links it follows (crawler::NormalizeUrl: scheme and host in lower
// case, the default port dropped, percent-encoding and dot segments normalized, the fragment
// dropped); a file: URL the same way, its host in lower case, its path's percent-encoding and dot
// segments normalized, its fragment dropped. InvalidArgument saying which rule failed: empty, over
// `max_bytes` (before or after normalizing), white space or a control character, no scheme,
// another scheme, or an http(s) URL that does not parse (no host, a bad port, a bad IPv6 literal).
StatusOr<std::string> PageUrl(std::string_view url, size_t max_bytes);

// A redirect's target as every way in records it: `location` (a Location header, or the API's
// `location`: absolute or relative) resolved against the redirecting page's URL `base` (RFC 3986
// section 5.2) and normalized by PageUrl. InvalidArgument naming `location` when it is empty or
// the result is not a URL PageUrl takes.
StatusOr<std::string> RedirectTarget(std::string_view base, std::string_view location,
                                     size_t max_bytes);
// The longest redirect target kept from a Location header a WARC record or the crawler saw (the
// default limits.max_url_bytes): a longer one is recorded as an unknown target.
inline constexpr size_t kMaxRedirectTargetBytes = 4096;

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_HTTP_QUERY_H_
