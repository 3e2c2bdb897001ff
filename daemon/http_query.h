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
  std::map<std::string, std::string> params;  // percent-decoded; '+' is a space; last one wins

  // The parameter, or nullopt when absent.
  std::optional<std::string> Get(const std::string& name) const;
};

// Splits and decodes a request target. InvalidArgument for a malformed percent escape or a
// target that is not an absolute path.
StatusOr<Target> ParseTarget(std::string_view target);

// Percent-decodes `text` (with '+' as a space when `plus_is_space`). InvalidArgument for a bad
// escape.
StatusOr<std::string> PercentDecode(std::string_view text, bool plus_is_space);

// Checks a page URL: at most `max_bytes`, an absolute URL with a scheme ("http://host/...",
// "https://...", "file:///..."), a host unless file:, no white space or control characters.
// InvalidArgument saying which rule failed.
Status ValidatePageUrl(std::string_view url, size_t max_bytes);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_HTTP_QUERY_H_
