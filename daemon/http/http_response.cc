#include "daemon/http/http_response.h"

#include "daemon/wire/json_codec.h"

namespace shingled::daemon {

http::status HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return http::status::ok;
    case StatusCode::kInvalidArgument:
      return http::status::bad_request;
    case StatusCode::kNotFound:
      return http::status::not_found;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return http::status::conflict;
    // A full queue or a full disk: the client may retry later; 503 rather than 429 because the
    // limit is the server's capacity, not a quota of this client.
    case StatusCode::kResourceExhausted:
    case StatusCode::kUnavailable:
      return http::status::service_unavailable;
    case StatusCode::kDeadlineExceeded:
      return http::status::gateway_timeout;
    case StatusCode::kDataLoss:
    case StatusCode::kInternal:
      return http::status::internal_server_error;
    case StatusCode::kUnimplemented:
      return http::status::not_implemented;
  }
  return http::status::internal_server_error;
}

Response JsonResponse(http::status status, const Json& body) {
  Response res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.set(http::field::server, "shingled");
  res.body() = DumpJson(body) + "\n";
  return res;
}

Response ErrorResponse(http::status status, std::string_view code, std::string_view message,
                       int retry_after_s) {
  Response res = JsonResponse(
      status, Json{{"error", {{"code", std::string(code)}, {"message", std::string(message)}}}});
  if (retry_after_s > 0) res.set(http::field::retry_after, std::to_string(retry_after_s));
  return res;
}

Response StatusResponse(const Status& status, int retry_after_s) {
  const http::status http_status = HttpStatusFor(status.code());
  const bool internal = http_status == http::status::internal_server_error;
  return ErrorResponse(http_status, internal ? "internal" : StatusCodeName(status.code()),
                       internal ? "internal error" : status.message(),
                       http_status == http::status::service_unavailable ? retry_after_s : 0);
}

}  // namespace shingled::daemon
