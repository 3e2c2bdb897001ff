#include "daemon/wire/http_query.h"

#include <algorithm>
#include <cctype>

#include "crawler/url.h"

namespace shingled::daemon {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

std::optional<std::string> Target::Get(const std::string& name) const {
  auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  return it->second;
}

StatusOr<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      const int hi = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (i + 2 >= text.size() || hi < 0 || lo < 0) {
        return InvalidArgumentError("malformed percent escape in \"" +
                                    std::string(text.substr(0, 200)) + "\"");
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

StatusOr<Target> ParseTarget(std::string_view target) {
  if (target.empty() || target.front() != '/') {
    return InvalidArgumentError("the request target must be an absolute path");
  }
  Target out;
  const size_t q = target.find('?');
  StatusOr<std::string> path = PercentDecode(target.substr(0, q), false);
  if (!path.ok()) return path.status();
  out.path = std::move(*path);
  if (q == std::string_view::npos) return out;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    StatusOr<std::string> key = PercentDecode(pair.substr(0, eq), true);
    if (!key.ok()) return key.status();
    StatusOr<std::string> value = PercentDecode(
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
    if (!value.ok()) return value.status();
    // A repeated parameter is ambiguous (which url did the client mean?): refused, not guessed.
    if (!out.params.emplace(*key, std::move(*value)).second) {
      return InvalidArgumentError("parameter \"" + key->substr(0, 100) +
                                  "\" is given more than once");
    }
  }
  return out;
}

StatusOr<std::string> PageUrl(std::string_view url, size_t max_bytes) {
  auto too_long = [&](size_t size) {
    return InvalidArgumentError("url is " + std::to_string(size) + " bytes" +
                                (size == url.size() ? "" : " once normalized") +
                                ", over the limit of " + std::to_string(max_bytes) +
                                " (limits.max_url_bytes)");
  };
  if (url.empty()) return InvalidArgumentError("url is empty");
  if (url.size() > max_bytes) return too_long(url.size());
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return InvalidArgumentError("url contains white space or a control character");
    }
  }
  const size_t colon = url.find("://");
  bool scheme_ok = colon != std::string_view::npos && colon > 0 && IsAlpha(url[0]);
  for (size_t i = 1; scheme_ok && i < colon; ++i) {
    const char c = url[i];
    scheme_ok = IsAlpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
  }
  const std::string quoted = "url \"" + std::string(url.substr(0, 200)) + "\"";
  if (!scheme_ok) {
    return InvalidArgumentError(quoted + " is not an absolute URL like https://example.com/page");
  }
  std::string scheme(url.substr(0, colon));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme == "file") {
    // file://HOST/PATH (RFC 8089): as http(s), the scheme and host in lower case, the fragment
    // dropped, percent-encoding normalized (what `shingled ingest` writes: raw bytes outside
    // ASCII's URL characters encoded, escapes of unreserved ones decoded) and dot segments
    // removed from the path. So "file:///tmp/caf\xc3\xa9.html" finds the file stored as
    // "file:///tmp/caf%C3%A9.html".
    std::string_view rest = url.substr(colon + 3);
    rest = rest.substr(0, rest.find('#'));
    const size_t path_at = std::min(rest.find_first_of("/?"), rest.size());
    std::string out = "file://";
    for (char c : rest.substr(0, path_at)) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    const std::string_view path_and_query = rest.substr(path_at);
    const size_t query_at = path_and_query.find('?');
    const std::string path = crawler::RemoveDotSegments(
        crawler::NormalizePercentEncoding(path_and_query.substr(0, query_at)));
    out += path.empty() ? "/" : path;
    if (query_at != std::string_view::npos) {
      out += "?" + crawler::NormalizePercentEncoding(path_and_query.substr(query_at + 1));
    }
    if (out.size() > max_bytes) return too_long(out.size());
    return out;
  }
  if (scheme != "http" && scheme != "https") {
    return InvalidArgumentError(quoted + " is not an http, https or file URL");
  }
  const std::string_view rest = url.substr(colon + 3);
  if (rest.substr(0, rest.find_first_of("/?#")).empty()) {
    return InvalidArgumentError(quoted + " has no host");
  }
  StatusOr<std::string> normalized = crawler::NormalizeUrl(url);
  if (!normalized.ok()) return InvalidArgumentError(normalized.status().message());
  if (normalized->size() > max_bytes) return too_long(normalized->size());
  return normalized;
}

StatusOr<std::string> RedirectTarget(std::string_view base, std::string_view location,
                                     size_t max_bytes) {
  if (location.empty()) return InvalidArgumentError("location is empty");
  // Controls and white space would be resolved as path bytes: refused by PageUrl only if they
  // survive resolution, so refuse them here, in the text as given.
  for (char c : location) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return InvalidArgumentError("location contains a control character");
    }
  }
  // Resolution on any scheme (a page under file: may redirect within file:), then the same
  // normalization and limits as every stored URL.
  StatusOr<std::string> target = PageUrl(crawler::ResolveReference(base, location), max_bytes);
  if (!target.ok()) return InvalidArgumentError("location: " + target.status().message());
  return target;
}

}  // namespace shingled::daemon
