// Content coding of responses: whether a request accepts gzip, and gzip itself (RFC 9110 8.4,
// 12.5.3). Free functions; thread-safe.
#ifndef SHINGLED_DAEMON_HTTP_COMPRESSION_H_
#define SHINGLED_DAEMON_HTTP_COMPRESSION_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace shingled::daemon {

// Whether an Accept-Encoding header's value (empty: none) lists gzip (or x-gzip) with a weight
// above 0. "*" is not taken for gzip: a client that wants it names it (Prometheus, curl
// --compressed and browsers do).
bool AcceptsGzip(std::string_view accept_encoding);

// `data` as a gzip member (RFC 1952), at zlib's default level. Internal if zlib fails (out of
// memory).
[[nodiscard]] StatusOr<std::string> Gzip(std::string_view data);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_HTTP_COMPRESSION_H_
