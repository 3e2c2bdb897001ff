// HTTP vocabulary shared by the server and the API: request and response types, JSON and error
// responses, and the one place where a Status code becomes an HTTP status.
//
// Every answer is JSON. Errors are {"error": {"code": "...", "message": "..."}}; the message says
// what the client did wrong, and for server-side failures (Internal, DataLoss) it is generic: the
// real message goes to the log, not to the client.
//
// Thread-compatible free functions.
#ifndef SHINGLED_DAEMON_HTTP_RESPONSE_H_
#define SHINGLED_DAEMON_HTTP_RESPONSE_H_

#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace shingled::daemon {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using Json = nlohmann::ordered_json;

// Beast (Boost 1.74) uses boost::string_view; the project uses std::string_view.
inline std::string_view ToStd(boost::beast::string_view s) { return {s.data(), s.size()}; }

// The HTTP status for a Status code:
//   InvalidArgument 400, NotFound 404, AlreadyExists and FailedPrecondition 409,
//   ResourceExhausted and Unavailable 503 (with Retry-After), DeadlineExceeded 504,
//   DataLoss and Internal (and anything else) 500.
http::status HttpStatusFor(StatusCode code);

// A JSON response with `body` (serialized compactly, plus a newline for curl users).
Response JsonResponse(http::status status, const Json& body);

// An error response with an explicit HTTP status and error code ("payload_too_large").
// `retry_after_s` > 0 adds Retry-After.
Response ErrorResponse(http::status status, std::string_view code, std::string_view message,
                       int retry_after_s = 0);

// An error response for a non-OK Status, mapped by HttpStatusFor. Internal and DataLoss get the
// generic message "internal error" (log the real one before calling). 503s carry Retry-After.
Response StatusResponse(const Status& status, int retry_after_s);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_HTTP_RESPONSE_H_
