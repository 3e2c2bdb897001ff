// The access log: one line per HTTP response written (HttpServerOptions::access_log), and the
// note the API adds for page posts. Free functions; thread-compatible.
//
// A line is `key=value` pairs in a fixed order, for grep and for log processors:
//   access client=127.0.0.1 method=POST path=/v1/pages status=200 bytes=291 ms=3.112 verdict=new
// The path is the request target up to '?': query strings (which may carry URLs, and in proxies'
// hands tokens) are never logged, and neither is any header.
#ifndef SHINGLED_DAEMON_ACCESS_LOG_H_
#define SHINGLED_DAEMON_ACCESS_LOG_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace shingled::daemon {

struct AccessRecord {
  std::string_view client = "-";  // the peer's address
  std::string_view method = "-";  // "-" when the request line was not read
  std::string_view target = "-";  // the request target as sent; only its path is logged
  unsigned status = 0;
  uint64_t bytes = 0;      // the response body's length
  double seconds = 0;      // from the complete request (a streamed one: its header) to the response
  std::string_view note;   // the handler's (Reply::Send), e.g. "verdict=new"; may be empty
  std::string_view error;  // why writing the response failed; empty when it was written
};

// The line, without a trailing newline. The path is cut at '?' (and '#'), bytes outside printable
// ASCII, '"' and '\' are percent-encoded, and a path over 256 bytes is cut with "...", so that a
// line can neither be split nor forged by a client.
std::string FormatAccessLine(const AccessRecord& record);

// The note for an answer to POST /v1/pages (its JSON body): "verdict=new" for one page,
// "verdicts=new:3,duplicate:1" for a batch or a WARC upload (counts in name order); "" when the
// answer holds no verdict (an error).
std::string PageVerdictNote(std::string_view body);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_ACCESS_LOG_H_
