#include "crawler/url.h"

#include <idn2.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

namespace shingled::crawler {
namespace {

// The five parts of RFC 3986 Appendix B; "defined" flags tell an empty part from an absent one.
struct UriRef {
  std::string scheme, authority, path, query, fragment;
  bool has_scheme = false, has_authority = false, has_query = false, has_fragment = false;
};

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
char ToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsUnreserved(unsigned char c) {
  return IsAlpha(static_cast<char>(c)) || IsDigit(static_cast<char>(c)) || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

// Splits a URI reference the way the regular expression of Appendix B does.
UriRef Split(std::string_view s) {
  UriRef r;
  // scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) followed by ':' before any of "/?#".
  size_t colon = s.find_first_of(":/?#");
  if (colon != std::string_view::npos && s[colon] == ':' && colon > 0 && IsAlpha(s[0])) {
    bool ok = true;
    for (size_t i = 1; i < colon; ++i) {
      const char c = s[i];
      if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') ok = false;
    }
    if (ok) {
      r.has_scheme = true;
      r.scheme = s.substr(0, colon);
      s.remove_prefix(colon + 1);
    }
  }
  if (s.starts_with("//")) {
    s.remove_prefix(2);
    const size_t end = s.find_first_of("/?#");
    r.has_authority = true;
    r.authority = s.substr(0, end);
    s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  }
  const size_t hash = s.find('#');
  if (hash != std::string_view::npos) {
    r.has_fragment = true;
    r.fragment = s.substr(hash + 1);
    s = s.substr(0, hash);
  }
  const size_t question = s.find('?');
  if (question != std::string_view::npos) {
    r.has_query = true;
    r.query = s.substr(question + 1);
    s = s.substr(0, question);
  }
  r.path = s;
  return r;
}

std::string Recompose(const UriRef& r) {
  std::string out;
  if (r.has_scheme) out += r.scheme + ":";
  if (r.has_authority) out += "//" + r.authority;
  out += r.path;
  if (r.has_query) out += "?" + r.query;
  if (r.has_fragment) out += "#" + r.fragment;
  return out;
}

// Section 5.2.3.
std::string Merge(const UriRef& base, const std::string& ref_path) {
  if (base.has_authority && base.path.empty()) return "/" + ref_path;
  const size_t slash = base.path.rfind('/');
  if (slash == std::string::npos) return ref_path;
  return base.path.substr(0, slash + 1) + ref_path;
}

UriRef Resolve(const UriRef& base, const UriRef& ref) {
  UriRef t;
  if (ref.has_scheme) {
    t = ref;
    t.path = RemoveDotSegments(ref.path);
  } else {
    if (ref.has_authority) {
      t.has_authority = true;
      t.authority = ref.authority;
      t.path = RemoveDotSegments(ref.path);
      t.has_query = ref.has_query;
      t.query = ref.query;
    } else {
      if (ref.path.empty()) {
        t.path = base.path;
        t.has_query = ref.has_query || base.has_query;
        t.query = ref.has_query ? ref.query : base.query;
      } else {
        t.path = ref.path.starts_with('/') ? RemoveDotSegments(ref.path)
                                           : RemoveDotSegments(Merge(base, ref.path));
        t.has_query = ref.has_query;
        t.query = ref.query;
      }
      t.has_authority = base.has_authority;
      t.authority = base.authority;
    }
    t.has_scheme = base.has_scheme;
    t.scheme = base.scheme;
  }
  t.has_fragment = ref.has_fragment;
  t.fragment = ref.fragment;
  return t;
}

// Trims C0 controls and spaces at both ends and drops tabs and newlines inside (WHATWG URL).
std::string CleanInput(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= 0x20) s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= 0x20) s.remove_suffix(1);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c != '\t' && c != '\n' && c != '\r') out += c;
  }
  return out;
}

// Normalizes percent-encoding in a path or query (section 6.2.2.2). A '%' not followed by two hex
// digits is taken literally and therefore encoded as "%25".
std::string NormalizePercent(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      const auto decoded = static_cast<unsigned char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      if (IsUnreserved(decoded)) {
        out += static_cast<char>(decoded);
      } else {
        out += '%';
        out += kHex[decoded >> 4];
        out += kHex[decoded & 15];
      }
      i += 2;
    } else if (c <= 0x20 || c >= 0x7f || c == '%' || c == '"' || c == '<' || c == '>' ||
               c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}') {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Whether a byte of a host, once percent-decoded, may stay in it: reg-name characters
// (unreserved, sub-delims) plus non-ASCII bytes, which an IDN host given in Unicode carries;
// FromParts converts those to IDNA's ASCII form. '%' is not one: escapes are decoded before this
// judges the bytes, so "%25" stands for a '%' in the name.
bool ValidHostChar(unsigned char c) {
  if (c >= 0x80) return true;
  if (IsUnreserved(c)) return true;
  static constexpr std::string_view kSubDelims = "!$&'()*+,;=";
  return kSubDelims.find(static_cast<char>(c)) != std::string_view::npos;
}

// --- Internationalized hosts ---

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 1, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

// A reg-name host with its escapes decoded. RFC 3986 3.2.2 lets a host be percent-encoded
// ("a%2Eexample" is "a.example", and an IDN may come as its UTF-8 bytes escaped); decoding first
// makes an escaped byte face the same rules as the byte written raw (ValidHostChar, UTF-8 and
// IDNA), rather than slipping past them into the store. InvalidArgument for a '%' not followed
// by two hex digits.
StatusOr<std::string> PercentDecodeHost(std::string_view host) {
  std::string out;
  out.reserve(host.size());
  for (size_t i = 0; i < host.size(); ++i) {
    if (host[i] != '%') {
      out += host[i];
      continue;
    }
    if (i + 2 >= host.size() || HexValue(host[i + 1]) < 0 || HexValue(host[i + 2]) < 0) {
      return InvalidArgumentError("bad percent-encoding in host");
    }
    out += static_cast<char>(HexValue(host[i + 1]) * 16 + HexValue(host[i + 2]));
    i += 2;
  }
  return out;
}

// A host with bytes past ASCII as IDNA's ASCII form ("bücher.example" -> "xn--bcher-kva.example"),
// the form DNS, libcurl and the store use, with UTS #46 non-transitional processing as libcurl
// does (transitional when that fails, as libcurl does too). Raw bytes that are not UTF-8 name no
// host: InvalidArgument, as is a name IDNA refuses.
StatusOr<std::string> IdnaToAscii(const std::string& host) {
  if (!IsValidUtf8(host)) {
    return InvalidArgumentError(
        "host has bytes that are not UTF-8: an internationalized host name must be UTF-8 (IDNA)");
  }
  char* ascii = nullptr;
  int rc = idn2_to_ascii_8z(host.c_str(), &ascii, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
  if (rc != IDN2_OK) rc = idn2_to_ascii_8z(host.c_str(), &ascii, IDN2_TRANSITIONAL);
  if (rc != IDN2_OK) {
    std::string message = "host is not a valid internationalized domain name (IDNA): ";
    message.append(idn2_strerror(rc));
    return InvalidArgumentError(message);
  }
  std::string out(ascii);
  idn2_free(ascii);
  // UTS #46 maps some characters to nothing (U+200B ZERO WIDTH SPACE, soft hyphens) and others to
  // ASCII a host cannot hold: the host must still be one (found by url_fuzz: "https://\u200b/"
  // was accepted with an empty host and printed as "https:///", which does not parse again).
  if (out.empty()) return InvalidArgumentError("host is empty once IDNA maps it");
  for (char c : out) {
    if (static_cast<unsigned char>(c) >= 0x80 || !ValidHostChar(static_cast<unsigned char>(c))) {
      return InvalidArgumentError("host has a character hosts cannot have once IDNA maps it");
    }
  }
  return out;
}

// The URL for an error message: bytes past ASCII and controls percent-encoded, so the message is
// ASCII whatever the URL held.
std::string Printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

StatusOr<Url> FromParts(const UriRef& r, std::string_view original) {
  auto invalid = [&](std::string_view why) {
    return InvalidArgumentError("bad URL \"" + Printable(original.substr(0, 200)) +
                                "\": " + std::string(why));
  };
  if (!r.has_scheme) return invalid("not absolute");
  Url url;
  for (char c : r.scheme) url.scheme += ToLower(c);
  if (url.scheme != "http" && url.scheme != "https") return invalid("scheme is not http or https");
  if (!r.has_authority) return invalid("no host");
  std::string_view authority = r.authority;
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    url.userinfo = NormalizePercent(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  std::string_view port;
  std::string host(authority);
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return invalid("unclosed IPv6 literal");
    host = authority.substr(0, close + 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return invalid("junk after IPv6 literal");
      port = rest.substr(1);
    }
    for (char c : host.substr(1, host.size() - 2)) {
      if (HexValue(c) < 0 && c != ':' && c != '.') return invalid("bad IPv6 literal");
    }
  } else {
    const size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    StatusOr<std::string> decoded = PercentDecodeHost(host);
    if (!decoded.ok()) return invalid(decoded.status().message());
    host = std::move(*decoded);
    for (char c : host) {
      if (!ValidHostChar(static_cast<unsigned char>(c))) return invalid("bad character in host");
    }
  }
  if (host.empty()) return invalid("empty host");
  if (std::any_of(host.begin(), host.end(), [](char c) { return (c & 0x80) != 0; })) {
    StatusOr<std::string> ascii = IdnaToAscii(host);
    if (!ascii.ok()) return invalid(ascii.status().message());
    for (char c : *ascii) url.host += ToLower(c);
  } else {
    for (char c : host) url.host += ToLower(c);
  }
  if (!port.empty()) {
    int value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535) {
      return invalid("bad port");
    }
    const int default_port = url.scheme == "http" ? 80 : 443;
    url.port = value == default_port ? 0 : value;
  }
  // Percent-decoding first: "%2E" is a dot, so "/a/%2E%2E/b" must lose its dot segment too
  // (RFC 3986 6.2.2 order; without it normalizing twice differed, found by links_fuzz).
  url.path = RemoveDotSegments(NormalizePercent(r.path));
  if (url.path.empty()) url.path = "/";
  url.has_query = r.has_query;
  if (r.has_query) url.query = NormalizePercent(r.query);
  return url;
}

}  // namespace

std::string NormalizePercentEncoding(std::string_view text) { return NormalizePercent(text); }

std::string Url::Spec() const {
  std::string out = scheme + "://";
  if (!userinfo.empty()) out += userinfo + "@";
  out += host;
  if (port != 0) out += ":" + std::to_string(port);
  out += path;
  if (has_query) out += "?" + query;
  return out;
}

std::string Url::HostPort() const { return port == 0 ? host : host + ":" + std::to_string(port); }

int Url::EffectivePort() const {
  if (port != 0) return port;
  return scheme == "https" ? 443 : 80;
}

std::string Url::PathAndQuery() const { return has_query ? path + "?" + query : path; }

std::string RemoveDotSegments(std::string_view in) {
  std::string out;
  while (!in.empty()) {
    if (in.starts_with("../")) {
      in.remove_prefix(3);
    } else if (in.starts_with("./") || in.starts_with("/./")) {
      in.remove_prefix(2);  // step 2A "./", and 2B "/./" -> "/"
    } else if (in == "/.") {
      in = "/";
    } else if (in.starts_with("/../") || in == "/..") {
      in = in.size() == 3 ? std::string_view("/") : in.substr(3);
      const size_t slash = out.rfind('/');
      out.resize(slash == std::string::npos ? 0 : slash);
    } else if (in == "." || in == "..") {
      in = {};
    } else {
      const size_t next = in.find('/', 1);
      const size_t len = next == std::string_view::npos ? in.size() : next;
      out.append(in.substr(0, len));
      in.remove_prefix(len);
    }
  }
  return out;
}

std::string ResolveReference(std::string_view base, std::string_view reference) {
  return Recompose(Resolve(Split(base), Split(reference)));
}

StatusOr<Url> ParseUrl(std::string_view text) {
  const std::string clean = CleanInput(text);
  return FromParts(Split(clean), text);
}

StatusOr<std::string> NormalizeUrl(std::string_view text) {
  StatusOr<Url> url = ParseUrl(text);
  if (!url.ok()) return url.status();
  return url->Spec();
}

StatusOr<std::string> ResolveUrl(std::string_view base, std::string_view reference) {
  StatusOr<Url> base_url = ParseUrl(base);
  if (!base_url.ok()) return base_url.status();
  const std::string clean = CleanInput(reference);
  StatusOr<Url> url = FromParts(Resolve(Split(base_url->Spec()), Split(clean)), reference);
  if (!url.ok()) return url.status();
  return url->Spec();
}

}  // namespace shingled::crawler
