// Fuzzes what the HTTP API does with a whole request before it reaches a route: the bytes are
// parsed by the same Beast request parser the server uses (header limit, body limit), then the
// target and query string (daemon/wire/http_query.h), the Content-Type header (dedup/charset.h),
// the Content-Encoding (crawler::InflateBody: gzip of one or more members, zlib, raw deflate) and
// the decoded body as a JSON object and as NDJSON lines (daemon/wire/request_parse.h,
// daemon/wire/json_line.h) are handled as the API handles them. Besides crashes, sanitizer reports
// and hangs, it aborts when
// - InflateBody returns more than its limit, or fails with a code other than InvalidArgument or
//   ResourceExhausted;
// - the input, gzip-compressed as two members (`cat a.gz a.gz`), does not inflate back to the
//   input twice (concatenated members were truncated);
// - a body accepted as JSON is not an object, or a batch line is refused with another code.
//
//   build-fuzz/tests/fuzz/http_request_fuzz -max_total_time=600 -dict=tests/fuzz/http_request.dict
//       tests/fuzz/corpus/http_request
#include <zlib.h>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "crawler/warc.h"
#include "daemon/wire/http_query.h"
#include "daemon/wire/request_parse.h"
#include "dedup/charset.h"

namespace {

namespace http = boost::beast::http;
using shingled::StatusCode;
using shingled::StatusOr;

constexpr uint32_t kMaxHeaderBytes = 16384;  // limits.max_header_bytes' default
constexpr uint64_t kMaxBodyBytes = 1 << 20;
constexpr size_t kMaxUrlBytes = 4096;
constexpr int64_t kNow = 1714564800;

void Check(bool ok) {
  if (!ok) abort();
}

StatusOr<std::string> Inflate(std::string_view body, bool gzip) {
  StatusOr<std::string> out = shingled::crawler::InflateBody(body, gzip, kMaxBodyBytes);
  if (out.ok()) {
    Check(out->size() <= kMaxBodyBytes);
  } else {
    Check(out.status().code() == StatusCode::kInvalidArgument ||
          out.status().code() == StatusCode::kResourceExhausted);
  }
  return out;
}

// One gzip member of `data`, made with zlib.
std::string GzipMember(std::string_view data) {
  z_stream z{};
  Check(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  Check(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void FuzzBody(std::string_view body) {
  if (StatusOr<shingled::daemon::Json> json = shingled::daemon::ParseObjectBody(body); json.ok()) {
    Check(json->is_object());
  }
  std::string_view rest = body;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    StatusOr<shingled::daemon::PagePost> page =
        shingled::daemon::ParseBatchLine(line, "default", kMaxUrlBytes, kNow);
    if (!page.ok()) Check(page.status().code() == StatusCode::kInvalidArgument);
  }
}

void FuzzRequest(std::string_view bytes) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(kMaxHeaderBytes);
  parser.body_limit(kMaxBodyBytes);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec && ec != http::error::need_more) return;
  if (!parser.is_header_done()) return;
  const auto& req = parser.get();

  const auto target = req.target();
  StatusOr<shingled::daemon::Target> parsed =
      shingled::daemon::ParseTarget(std::string_view(target.data(), target.size()));
  if (parsed.ok()) {
    (void)shingled::daemon::ParseQueryOptions(*parsed);
    (void)shingled::daemon::ParsePageTarget(*parsed, "default", kMaxUrlBytes, kNow);
  }
  const auto content_type = req[http::field::content_type];
  (void)shingled::dedup::ParseContentType(
      std::string_view(content_type.data(), content_type.size()));
  if (!parser.is_done()) return;

  // The API's Content-Encoding rule (daemon/api/api.cc): identity, gzip, x-gzip or deflate.
  std::string coding(req[http::field::content_encoding]);
  for (char& c : coding) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string decoded = req.body();
  if (coding == "gzip" || coding == "x-gzip" || coding == "deflate") {
    StatusOr<std::string> inflated = Inflate(req.body(), coding != "deflate");
    if (!inflated.ok()) return;
    decoded = std::move(*inflated);
  }
  FuzzBody(decoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  FuzzRequest(in);
  // The input as a compressed body itself, both ways.
  (void)Inflate(in, true);
  (void)Inflate(in, false);
  // Two gzip members of the input inflate to the input twice.
  if (size <= kMaxBodyBytes / 2) {
    std::string twice = GzipMember(in);
    twice.append(twice);
    StatusOr<std::string> back = Inflate(twice, true);
    Check(back.ok() && back->size() == 2 * size && back->compare(0, size, in) == 0 &&
          back->compare(size, size, in) == 0);
  }
  return 0;
}
