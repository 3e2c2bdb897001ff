// The access log: one line per HTTP response written (HttpServerOptions::access_log), in one of
// three formats (logging.access_log_format), the note the API adds for page posts, and request
// ids. Free functions; thread-compatible.
//
// text (the default): `key=value` pairs in a fixed order, for grep and for log processors:
//   access client=127.0.0.1 method=POST path=/v1/pages query=url=https://example.com/a
//   status=200 bytes=291 ms=3.112 request_id=4f1c2a9e0b7d6e35-1 user_agent=curl/8.5.0
//   verdict=new
// (one line; `query`, `referer` and `user_agent` only when the request had them).
// combined: the Apache/NCSA combined log format, as goaccess and most log tools read it:
//   127.0.0.1 - - [04/Dec/2026:10:53:08 +0000] "GET /v1/similar?url=... HTTP/1.1" 200 291 "-"
//   "curl/8.5.0"
// json: one JSON object per line (docs/API.md, "Access log", lists its keys).
//
// What is logged, and what never is: the query string is (it names what was asked, and may hold
// URLs), but the values of its parameters whose names look like credentials (token, password,
// secret, key, session, auth, signature...) are replaced by "REDACTED"; the daemon never takes
// its token from a query, so only a client's mistake could put one there. No header is logged
// but User-Agent, Referer (its query redacted the same way) and X-Request-Id: never
// Authorization, nor a cookie.
#ifndef SHINGLED_DAEMON_ACCESS_LOG_H_
#define SHINGLED_DAEMON_ACCESS_LOG_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shingled::daemon {

enum class AccessLogFormat { kText, kCombined, kJson };

// "text", "combined" or "json"; nullopt for anything else.
std::optional<AccessLogFormat> ParseAccessLogFormat(std::string_view name);

struct AccessRecord {
  std::chrono::system_clock::time_point time;  // when the request began (its header was read)
  std::string_view client = "-";               // the peer's address
  std::string_view method = "-";               // "-" when the request line was not read
  std::string_view target = "-";               // the request target as sent (path and query)
  unsigned version = 11;                       // the request's HTTP version, 11 for HTTP/1.1
  unsigned status = 0;
  uint64_t bytes = 0;  // the response body's length
  double seconds = 0;  // from the complete request (a streamed one: its header) to the response
  std::string_view user_agent;  // the User-Agent header; empty when there was none
  std::string_view referer;     // the Referer header; empty when there was none
  std::string_view request_id;  // RequestIdFor's; empty when the request was not read
  std::string_view note;        // the handler's (Reply::Send), e.g. "verdict=new"; may be empty
  std::string_view error;       // why writing the response failed; empty when it was written
};

// The line, without a trailing newline. Every field a client sends is bounded (the path at 256
// bytes, the query at 1024, ... then "..."), and in text and combined its bytes outside printable
// ASCII, '"' and '\' are escaped (text: also spaces, as %20), so that a line can neither be split
// nor forged by a client; json escapes as JSON does (invalid UTF-8 becomes U+FFFD). Times are
// local, with their offset from UTC.
std::string FormatAccessLine(const AccessRecord& record,
                             AccessLogFormat format = AccessLogFormat::kText);

// `query` (without its '?') with the value of each parameter whose name looks like a credential
// replaced by "REDACTED"; the rest as it was.
std::string RedactQuery(std::string_view query);

// The request id of a request whose X-Request-Id header is `sent` (empty: none): `sent` itself
// when it is sane (1 to 128 bytes of [A-Za-z0-9._-]), so that a proxy's id follows the request;
// else a new one, unique in this process and unlikely to repeat across processes
// ("<16 random hex digits>-<counter>"). Thread-safe.
std::string RequestIdFor(std::string_view sent);

// The note for an answer to POST /v1/pages (its JSON body): "verdict=new" for one page,
// "verdicts=new:3,duplicate:1" for a batch or a WARC upload (counts in name order); "" when the
// answer holds no verdict (an error).
std::string PageVerdictNote(std::string_view body);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_ACCESS_LOG_H_
