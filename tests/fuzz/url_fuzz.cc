// Fuzzes URL parsing and normalization (crawler/url.h): IDNA hosts, percent-encoding, ports,
// IPv6 literals, dot segments, relative references. The input's first line is a base URL, the
// rest a reference. Besides crashes, sanitizer reports and hangs, it aborts when
// - a URL ParseUrl accepted changes when normalized again, or its parts break the documented
//   form (scheme http/https, a non-empty lower-case host of ASCII only, a path starting with '/',
//   a port in 0..65535);
// - a resolved link does not normalize to itself;
// - NormalizePercentEncoding is not idempotent or leaves a byte that may not appear in a URL;
// - RemoveDotSegments leaves a "." or ".." segment in an absolute path.
//
//   build-fuzz/tests/fuzz/url_fuzz -max_total_time=600 -dict=tests/fuzz/url.dict
//       tests/fuzz/corpus/url
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "crawler/url.h"

namespace {

using namespace shingled::crawler;

void Check(bool ok) {
  if (!ok) abort();
}

void CheckNormalized(const std::string& spec) {
  shingled::StatusOr<Url> again = ParseUrl(spec);
  Check(again.ok() && again->Spec() == spec);
}

void FuzzUrl(std::string_view text) {
  shingled::StatusOr<Url> url = ParseUrl(text);
  if (!url.ok()) {
    Check(url.status().code() == shingled::StatusCode::kInvalidArgument);
    return;
  }
  Check(url->scheme == "http" || url->scheme == "https");
  Check(!url->host.empty());
  for (const char c : url->host) {
    const auto u = static_cast<unsigned char>(c);
    Check(u > 0x20 && u < 0x7F && !(c >= 'A' && c <= 'Z'));
  }
  Check(url->port >= 0 && url->port <= 65535);
  Check(url->EffectivePort() > 0 && url->EffectivePort() <= 65535);
  Check(!url->path.empty() && url->path.front() == '/');
  const std::string spec = url->Spec();
  CheckNormalized(spec);
  shingled::StatusOr<std::string> normalized = NormalizeUrl(text);
  Check(normalized.ok() && *normalized == spec);
}

void FuzzPercent(std::string_view text) {
  const std::string once = NormalizePercentEncoding(text);
  Check(NormalizePercentEncoding(once) == once);
  for (const char c : once) {
    const auto u = static_cast<unsigned char>(c);
    Check(u > 0x20 && u < 0x7F && std::string_view("<>\"^`{|}").find(c) == std::string_view::npos);
  }
}

void FuzzDotSegments(std::string_view text) {
  if (text.empty() || text.front() != '/') return;
  const std::string path = RemoveDotSegments(text);
  Check(!path.empty() && path.front() == '/');
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string_view segment = std::string_view(path).substr(start, end - start);
    Check(segment != "." && segment != "..");
    start = end + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nl = in.find('\n');
  const std::string_view base = in.substr(0, nl);
  const std::string_view reference = nl == std::string_view::npos ? "" : in.substr(nl + 1);
  FuzzUrl(in);
  FuzzUrl(base);
  FuzzPercent(in);
  FuzzDotSegments(in);
  (void)ResolveReference(base, reference);  // any scheme: it must just not crash
  shingled::StatusOr<std::string> resolved = ResolveUrl(base, reference);
  if (resolved.ok()) CheckNormalized(*resolved);
  return 0;
}
