// URLs: parsing, normalization and relative resolution for the crawler (RFC 3986).
//
// The crawler keys its frontier and its "already seen" set by normalized URL, so that one page is
// not fetched twice under two spellings. Normalization (RFC 3986 section 6.2.2, plus the
// scheme-based rules of 6.2.3 for http and https):
//   - scheme and host lower-cased; a host with bytes past ASCII must be UTF-8 and becomes its
//     IDNA ASCII form with libidn2 (UTS #46 non-transitional, as libcurl: "Bücher.example" is
//     "xn--bcher-kva.example"), so the URL stored is the one fetched and can be looked up in
//     either spelling; raw bytes that are not UTF-8, or a name IDNA refuses, are
//     InvalidArgument. A percent-encoded host is decoded first ("a%2Eexample" is "a.example"),
//     and the bytes it stands for face the same rules as bytes written raw;
//   - the default port (80 for http, 443 for https) and an empty port removed;
//   - dot segments removed; an empty path becomes "/";
//   - the fragment removed (it never reaches the server);
//   - percent-encoding normalized: escapes of unreserved characters (ALPHA DIGIT - . _ ~) decoded,
//     other escapes upper-cased, and bytes that may not appear in a URL (space, controls,
//     non-ASCII, "<>\"^`{|}") percent-encoded, as browsers do for links found in pages;
//   - leading and trailing white space and control characters trimmed, tabs and newlines inside
//     removed (the WHATWG URL standard does this; HTML attributes often carry them).
// Only absolute http and https URLs with a non-empty host are accepted.
//
// Option not taken: libcurl's curl_url() API (curl 7.88, Debian 12) parses well, but resolves the
// RFC's own examples "#s" and "" against a base wrongly (it drops the last path segment and the
// query), and does not decode unreserved escapes; the ~250 lines here follow RFC 3986 5.2 exactly.
//
// Everything here is pure computation and thread-compatible.
#ifndef SHINGLED_CRAWLER_URL_H_
#define SHINGLED_CRAWLER_URL_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace shingled::crawler {

// A normalized absolute http(s) URL, split into its parts.
struct Url {
  std::string scheme;    // "http" or "https"
  std::string userinfo;  // without '@'; usually empty
  std::string host;      // lower-case; an IPv6 literal keeps its brackets ("[::1]")
  int port = 0;          // 0 when the scheme's default port applies
  std::string path;      // starts with '/'
  std::string query;     // without '?'
  bool has_query = false;

  // The URL as a string: scheme://[userinfo@]host[:port]path[?query].
  std::string Spec() const;
  // "host" or "host:port" as it appears in the URL; robots.txt and politeness are per authority.
  std::string HostPort() const;
  // The port a connection goes to (the default one when port == 0).
  int EffectivePort() const;
  // path[?query]: what robots.txt rules are matched against.
  std::string PathAndQuery() const;
};

// Parses and normalizes an absolute URL.
// InvalidArgument when the text is not an absolute URL, the scheme is not http or https, the
// host is empty, has characters hosts cannot have, has bytes past ASCII that are not UTF-8 or not
// a valid IDNA name (written raw or percent-encoded alike), has a '%' not followed by two hex
// digits, or the port is not a number in 1..65535.
StatusOr<Url> ParseUrl(std::string_view text);

// ParseUrl(text)->Spec(), or its error.
StatusOr<std::string> NormalizeUrl(std::string_view text);

// Resolves `reference` (a link as found in a page) against the absolute URL `base` (RFC 3986
// section 5.2) and normalizes the result. A reference with a scheme other than http or https
// (mailto:, javascript:, ftp:) is InvalidArgument, as is a base that ParseUrl refuses.
StatusOr<std::string> ResolveUrl(std::string_view base, std::string_view reference);

// RFC 3986 section 5.2 on any scheme, without normalization: the "transform references"
// algorithm with remove_dot_segments, strict parser. Exposed so tests can check the RFC's own
// examples (section 5.4); the crawler uses ResolveUrl.
std::string ResolveReference(std::string_view base, std::string_view reference);

// Normalizes percent-encoding (RFC 3986 section 6.2.2.2): escapes of unreserved characters
// decoded, other escapes upper-cased, bytes that may not appear in a URL encoded, and a '%' not
// followed by two hex digits encoded as "%25". robots.txt matching uses it too.
std::string NormalizePercentEncoding(std::string_view text);

// RFC 3986 section 5.2.4.
std::string RemoveDotSegments(std::string_view path);

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_URL_H_
