#include "daemon/wire/request_parse.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <optional>

#include "crawler/url.h"
#include "daemon/wire/json_line.h"

namespace shingled::daemon {
namespace {

// Reads exactly `n` digits at `*pos`.
bool Digits(std::string_view s, size_t* pos, int n, int* out) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

StatusOr<int64_t> ParseIsoTime(std::string_view s) {
  auto bad = [&] {
    return InvalidArgumentError("\"" + std::string(s.substr(0, 64)) +
                                "\" is not an ISO-8601 date like 2024-05-01T12:00:00Z");
  };
  size_t pos = 0;
  int year, month, day, hour = 0, minute = 0, second = 0;
  if (!Digits(s, &pos, 4, &year) || !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &month) ||
      !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &day)) {
    return bad();
  }
  int offset_s = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return bad();
    ++pos;
    if (!Digits(s, &pos, 2, &hour) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &minute)) {
      return bad();
    }
    if (pos < s.size() && s[pos] == ':' && (++pos, !Digits(s, &pos, 2, &second))) return bad();
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      const size_t start = pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
      if (pos == start) return bad();
    }
    if (pos >= s.size()) return bad();  // a time needs its zone: Z or an offset
    if (s[pos] == 'Z' || s[pos] == 'z') {
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      const int sign = s[pos] == '-' ? -1 : 1;
      ++pos;
      int oh, om;
      if (!Digits(s, &pos, 2, &oh) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &om) ||
          oh > 23 || om > 59) {
        return bad();
      }
      offset_s = sign * (oh * 3600 + om * 60);
    } else {
      return bad();
    }
    if (pos != s.size()) return bad();
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return bad();
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const time_t t = timegm(&tm);
  if (tm.tm_mday != day) return bad();  // timegm normalized 2024-02-31 into March
  return static_cast<int64_t>(t) - offset_s;
}

StatusOr<int> ParseHttpStatus(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 100 || value > 599) {
    return InvalidArgumentError("status \"" + std::string(text.substr(0, 20)) +
                                "\" is not an HTTP status 100..599");
  }
  return value;
}

Status CheckParams(const Target& target, std::initializer_list<std::string_view> allowed) {
  for (const auto& [name, value] : target.params) {
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    std::string takes;
    for (std::string_view a : allowed) takes += (takes.empty() ? "" : ", ") + std::string(a);
    return InvalidArgumentError("unknown parameter \"" + name.substr(0, 40) +
                                "\": " + target.path.substr(0, 100) +
                                (takes.empty() ? " takes none" : " takes " + takes));
  }
  return OkStatus();
}

StatusOr<uint64_t> ParseInteger(std::string_view name, std::string_view text, uint64_t min,
                                uint64_t max) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    std::string message(name);
    message.append(" \"").append(text.substr(0, 40)).append("\" is not an integer in ");
    message.append(std::to_string(min)).append("..").append(std::to_string(max));
    return InvalidArgumentError(message);
  }
  return value;
}

StatusOr<uint64_t> ParseInteger(std::string_view name, const std::optional<std::string>& text,
                                uint64_t fallback, uint64_t min, uint64_t max) {
  if (!text) return fallback;
  return ParseInteger(name, *text, min, max);
}

StatusOr<uint64_t> ParseId(std::string_view text, const char* what) {
  std::string name(what);
  name.append(" id");
  return ParseInteger(name, text, 1, UINT64_MAX);
}

StatusOr<store::QueryOptions> ParseQueryOptions(const Target& target) {
  store::QueryOptions q;
  if (auto t = target.Get("threshold")) {
    char* end = nullptr;
    const double v = std::strtod(t->c_str(), &end);
    // The whole text, not up to a NUL: "0.5%00x" decodes to a NUL inside the value.
    if (t->empty() || end != t->c_str() + t->size() || !(v >= 0 && v <= 1)) {
      return InvalidArgumentError("threshold \"" + t->substr(0, 40) + "\" is not a number in 0..1");
    }
    q.threshold = v;
  }
  StatusOr<uint64_t> limit = ParseInteger("limit", target.Get("limit"), q.limit, 1, kMaxQueryLimit);
  if (!limit.ok()) return limit.status();
  q.limit = *limit;
  return q;
}

StatusOr<std::string> RequiredUrl(const Target& target, size_t max_url_bytes) {
  std::optional<std::string> url = target.Get("url");
  if (!url) return InvalidArgumentError("missing url parameter: add ?url=URL");
  return PageUrl(*url, max_url_bytes);
}

StatusOr<Json> ParseObjectBody(std::string_view body) {
  if (body.empty()) return Json::object();
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("the body is not a JSON object");
  }
  return j;
}

StatusOr<int64_t> DateMember(const Json& j, const char* key, int64_t now) {
  if (!j.contains(key) || j[key].is_null()) return now;
  if (!j[key].is_string()) return InvalidArgumentError(std::string(key) + " must be a string");
  StatusOr<int64_t> t = ParseIsoTime(j[key].get<std::string>());
  if (!t.ok()) return InvalidArgumentError(std::string(key) + ": " + t.status().message());
  return t;
}

Status CheckMembers(const Json& body, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : body.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string takes;
    for (std::string_view a : allowed) takes += (takes.empty() ? "" : ", ") + std::string(a);
    return InvalidArgumentError("unknown key \"" + key.substr(0, 100) +
                                "\" in the body; it takes " +
                                (takes.empty() ? std::string("none") : takes));
  }
  return OkStatus();
}

StatusOr<std::vector<std::string>> SweepScope(const std::vector<std::string>& hosts,
                                              const std::vector<std::string>& prefixes) {
  std::vector<std::string> scope;
  for (const std::string& host : hosts) {
    // host or host:port, nothing else: a path would silently widen or narrow the scope.
    const bool plain = !host.empty() && host.find_first_of("/?#@ \t") == std::string::npos;
    StatusOr<crawler::Url> url =
        plain ? crawler::ParseUrl("http://" + host + "/") : InvalidArgumentError("not a host");
    if (!url.ok()) {
      return InvalidArgumentError("scope host \"" + host.substr(0, 200) +
                                  "\" is not a host name or host:port");
    }
    scope.push_back("http://" + url->HostPort() + "/");
    scope.push_back("https://" + url->HostPort() + "/");
  }
  for (const std::string& prefix : prefixes) {
    StatusOr<std::string> normalized = PageUrl(prefix, kMaxScopePrefixBytes);
    if (!normalized.ok()) {
      return InvalidArgumentError("scope prefix: " + normalized.status().message());
    }
    scope.push_back(std::move(normalized).value());
  }
  return scope;
}

StatusOr<std::vector<std::string>> SweepScopeMembers(const Json& body) {
  std::vector<std::string> lists[2];
  const char* keys[2] = {"hosts", "prefixes"};
  for (int i = 0; i < 2; ++i) {
    if (!body.contains(keys[i]) || body[keys[i]].is_null()) continue;
    const Json& list = body[keys[i]];
    if (!list.is_array())
      return InvalidArgumentError(std::string(keys[i]) + " must be an array of strings");
    for (const Json& item : list) {
      if (!item.is_string())
        return InvalidArgumentError(std::string(keys[i]) + " must be an array of strings");
      lists[i].push_back(item.get<std::string>());
    }
  }
  return SweepScope(lists[0], lists[1]);
}

namespace {

// Sets page->redirect_target from `location` (absent: nullopt), which a redirect status needs
// and any other status refuses.
Status ApplyLocation(const std::optional<std::string>& location, size_t max_url_bytes,
                     PagePost* page) {
  const bool redirect =
      store::ClassifyHttpStatus(page->http_status) == store::StatusClass::kRedirect;
  if (!location) {
    if (!redirect) return OkStatus();
    return InvalidArgumentError("status " + std::to_string(page->http_status) +
                                " is a redirect: give its target as location (the Location "
                                "header)");
  }
  if (!redirect) {
    return InvalidArgumentError(
        "location is only taken with a redirect status (301, 302, 303, 307, 308), not " +
        std::to_string(page->http_status));
  }
  StatusOr<std::string> target = RedirectTarget(page->url, *location, max_url_bytes);
  if (!target.ok()) return target.status();
  page->redirect_target = std::move(target).value();
  return OkStatus();
}

}  // namespace

StatusOr<PagePost> ParsePageTarget(const Target& target, std::string_view default_sweep,
                                   size_t max_url_bytes, int64_t now) {
  PagePost page;
  StatusOr<std::string> url = RequiredUrl(target, max_url_bytes);
  if (!url.ok()) return url.status();
  page.url = std::move(*url);
  if (auto status = target.Get("status")) {
    StatusOr<int> code = ParseHttpStatus(*status);
    if (!code.ok()) return code.status();
    page.http_status = *code;
  }
  if (Status s = ApplyLocation(target.Get("location"), max_url_bytes, &page); !s.ok()) return s;
  page.date = now;
  if (auto fetched_at = target.Get("fetched_at")) {
    StatusOr<int64_t> date = ParseIsoTime(*fetched_at);
    if (!date.ok()) return InvalidArgumentError("fetched_at: " + date.status().message());
    page.date = *date;
  }
  page.sweep = target.Get("sweep").value_or(std::string(default_sweep));
  return page;
}

StatusOr<PagePost> ParseBatchLine(std::string_view line, std::string_view default_sweep,
                                  size_t max_url_bytes, int64_t now) {
  // Flat, with known keys only, checked while parsing: bounded depth and memory.
  StatusOr<Json> parsed = ParseFlatJsonObject(
      line, {"url", "content", "content_type", "fetched_at", "sweep", "status", "location"});
  if (!parsed.ok()) return parsed.status();
  const Json& j = *parsed;
  PagePost page;
  auto str = [&](const char* key, std::string* out) -> Status {
    if (!j.contains(key) || j[key].is_null()) return OkStatus();
    if (!j[key].is_string()) return InvalidArgumentError(std::string(key) + " must be a string");
    *out = j[key].get<std::string>();
    return OkStatus();
  };
  std::string fetched_at;
  std::string location;
  page.sweep = std::string(default_sweep);
  for (Status s :
       {str("url", &page.url), str("content", &page.body), str("content_type", &page.content_type),
        str("fetched_at", &fetched_at), str("sweep", &page.sweep), str("location", &location)}) {
    if (!s.ok()) return s;
  }
  StatusOr<std::string> url = PageUrl(page.url, max_url_bytes);
  if (!url.ok()) return url.status();
  page.url = std::move(*url);
  if (j.contains("status")) {
    if (!j["status"].is_number_integer()) return InvalidArgumentError("status must be an integer");
    StatusOr<int> code = ParseHttpStatus(std::to_string(j["status"].get<int64_t>()));
    if (!code.ok()) return code.status();
    page.http_status = *code;
  }
  const bool has_location = j.contains("location") && !j["location"].is_null();
  if (Status s = ApplyLocation(
          has_location ? std::optional<std::string>(std::move(location)) : std::nullopt,
          max_url_bytes, &page);
      !s.ok()) {
    return s;
  }
  page.date = now;
  if (!fetched_at.empty()) {
    StatusOr<int64_t> date = ParseIsoTime(fetched_at);
    if (!date.ok()) return InvalidArgumentError("fetched_at: " + date.status().message());
    page.date = *date;
  }
  if (page.body.empty() &&
      store::ClassifyHttpStatus(page.http_status) == store::StatusClass::kContent) {
    return InvalidArgumentError("content is missing or empty");
  }
  return page;
}

}  // namespace shingled::daemon
