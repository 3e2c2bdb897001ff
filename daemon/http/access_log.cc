#include "daemon/http/access_log.h"

#include <spdlog/fmt/fmt.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

namespace shingled::daemon {
namespace {

constexpr size_t kMaxPathBytes = 256;
constexpr size_t kMaxQueryBytes = 1024;
constexpr size_t kMaxUserAgentBytes = 256;
constexpr size_t kMaxRefererBytes = 512;
constexpr size_t kMaxRequestIdBytes = 128;
constexpr char kHex[] = "0123456789ABCDEF";

// Appends `text` with everything that could end or fake a field percent-encoded. `keep_percent`:
// a '%' stays as it is (for a query or a target as sent, already percent-encoded by the client:
// encoding it again would make "%2F" of every "/" of a URL in a query).
void AppendSafe(std::string_view text, size_t max_bytes, std::string* out,
                bool keep_percent = false) {
  const size_t start = out->size();
  for (const char c : text) {
    if (out->size() - start >= max_bytes) {
      out->append("...");
      return;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '"' || c == '\\' || (c == '%' && !keep_percent)) {
      out->push_back('%');
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
}

// For a quoted field of the combined format: as Apache's log escaping, but '"' and '\' are
// written \x22 and \x5C (not \" and \\), which no reader can take for the field's end.
void AppendQuoted(std::string_view text, size_t max_bytes, std::string* out) {
  const size_t start = out->size();
  for (const char c : text) {
    if (out->size() - start >= max_bytes) {
      out->append("...");
      return;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      out->append("\\x");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
}

std::string_view Cut(std::string_view text, size_t max_bytes) {
  return text.substr(0, std::min(text.size(), max_bytes));
}

// The path and the query of a request target; a fragment is dropped.
std::pair<std::string_view, std::string_view> SplitTarget(std::string_view target) {
  target = target.substr(0, target.find('#'));
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

// A Referer with the query of its URL redacted.
std::string RedactReferer(std::string_view referer) {
  referer = referer.substr(0, referer.find('#'));
  const size_t q = referer.find('?');
  if (q == std::string_view::npos) return std::string(referer);
  return std::string(referer.substr(0, q + 1)) + RedactQuery(referer.substr(q + 1));
}

bool LooksLikeCredential(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"token", "passw", "secret", "key", "session", "auth", "sig",
                           "credential", "cookie", "bearer"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

// Local time with its offset: `iso` "2026-12-04T10:53:08.123+00:00", else the combined format's
// "04/Dec/2026:10:53:08 +0000".
std::string FormatTime(std::chrono::system_clock::time_point time, bool iso) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const auto since = time.time_since_epoch();
  const time_t seconds =
      static_cast<time_t>(std::chrono::duration_cast<std::chrono::seconds>(since).count());
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since).count() % 1000;
  tm local{};
  localtime_r(&seconds, &local);
  const long offset = local.tm_gmtoff / 60;  // minutes east of UTC
  const char sign = offset < 0 ? '-' : '+';
  const long off_h = std::abs(offset) / 60, off_m = std::abs(offset) % 60;
  if (iso) {
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{}{:02}:{:02}",
                       local.tm_year + 1900, local.tm_mon + 1, local.tm_mday, local.tm_hour,
                       local.tm_min, local.tm_sec, millis, sign, off_h, off_m);
  }
  return fmt::format("{:02}/{}/{:04}:{:02}:{:02}:{:02} {}{:02}{:02}", local.tm_mday,
                     kMonths[local.tm_mon % 12], local.tm_year + 1900, local.tm_hour, local.tm_min,
                     local.tm_sec, sign, off_h, off_m);
}

std::string TextLine(const AccessRecord& r) {
  const auto [path, query] = SplitTarget(r.target);
  std::string line = "access client=";
  AppendSafe(r.client, 64, &line);
  line += " method=";
  AppendSafe(r.method, 32, &line);
  line += " path=";
  AppendSafe(path.empty() ? "-" : path, kMaxPathBytes, &line);
  if (!query.empty()) {
    line += " query=";
    AppendSafe(RedactQuery(Cut(query, kMaxQueryBytes + 1)), kMaxQueryBytes, &line,
               /*keep_percent=*/true);
  }
  line += fmt::format(" status={} bytes={} ms={:.3f}", r.status, r.bytes, r.seconds * 1000);
  if (!r.request_id.empty()) {
    line += " request_id=";
    AppendSafe(r.request_id, kMaxRequestIdBytes, &line);
  }
  if (!r.referer.empty()) {
    line += " referer=";
    AppendSafe(RedactReferer(Cut(r.referer, kMaxRefererBytes + 1)), kMaxRefererBytes, &line,
               /*keep_percent=*/true);
  }
  if (!r.user_agent.empty()) {
    line += " user_agent=";
    AppendSafe(r.user_agent, kMaxUserAgentBytes, &line);
  }
  if (!r.note.empty()) {
    line += ' ';
    AppendSafe(r.note, 512, &line);
  }
  if (!r.error.empty()) {
    line += " error=";
    AppendSafe(r.error, 128, &line);
  }
  return line;
}

// %h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i", as Apache's LogFormat "combined".
std::string CombinedLine(const AccessRecord& r) {
  const auto [path, query] = SplitTarget(r.target);
  std::string line;
  AppendSafe(r.client.empty() ? "-" : r.client, 64, &line);
  line += " - - [" + FormatTime(r.time, /*iso=*/false) + "] \"";
  if (r.method == "-" || r.method.empty()) {
    line += '-';  // no request line was read
  } else {
    // The target is percent-encoded like the text format's, so that its spaces cannot shift
    // the request line's fields.
    AppendSafe(r.method, 32, &line);
    line += ' ';
    AppendSafe(path.empty() ? "/" : path, kMaxPathBytes, &line, /*keep_percent=*/true);
    if (!query.empty()) {
      line += '?';
      AppendSafe(RedactQuery(Cut(query, kMaxQueryBytes + 1)), kMaxQueryBytes, &line,
                 /*keep_percent=*/true);
    }
    line += fmt::format(" HTTP/{}.{}", r.version / 10, r.version % 10);
  }
  line += fmt::format("\" {} {} \"", r.status, r.bytes);
  if (r.referer.empty()) {
    line += '-';
  } else {
    AppendQuoted(RedactReferer(Cut(r.referer, kMaxRefererBytes + 1)), kMaxRefererBytes, &line);
  }
  line += "\" \"";
  if (r.user_agent.empty()) {
    line += '-';
  } else {
    AppendQuoted(r.user_agent, kMaxUserAgentBytes, &line);
  }
  line += '"';
  return line;
}

std::string JsonLine(const AccessRecord& r) {
  const auto [path, query] = SplitTarget(r.target);
  auto bounded = [](std::string_view text, size_t max_bytes) {
    std::string out(Cut(text, max_bytes));
    if (text.size() > max_bytes) out += "...";
    return out;
  };
  nlohmann::ordered_json j;
  j["time"] = FormatTime(r.time, /*iso=*/true);
  j["client"] = bounded(r.client, 64);
  j["method"] = bounded(r.method, 32);
  j["path"] = bounded(path.empty() ? "-" : path, kMaxPathBytes);
  j["query"] = bounded(RedactQuery(Cut(query, kMaxQueryBytes + 1)), kMaxQueryBytes);
  j["status"] = r.status;
  j["bytes"] = r.bytes;
  j["ms"] = std::round(r.seconds * 1e6) / 1e3;
  j["user_agent"] = bounded(r.user_agent, kMaxUserAgentBytes);
  j["referer"] = bounded(RedactReferer(Cut(r.referer, kMaxRefererBytes + 1)), kMaxRefererBytes);
  j["request_id"] = bounded(r.request_id, kMaxRequestIdBytes);
  j["note"] = bounded(r.note, 512);
  if (!r.error.empty()) j["error"] = bounded(r.error, 128);
  // A client's invalid UTF-8 becomes U+FFFD rather than an exception.
  return j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::optional<AccessLogFormat> ParseAccessLogFormat(std::string_view name) {
  if (name == "text") return AccessLogFormat::kText;
  if (name == "combined") return AccessLogFormat::kCombined;
  if (name == "json") return AccessLogFormat::kJson;
  return std::nullopt;
}

std::string FormatAccessLine(const AccessRecord& r, AccessLogFormat format) {
  switch (format) {
    case AccessLogFormat::kCombined:
      return CombinedLine(r);
    case AccessLogFormat::kJson:
      return JsonLine(r);
    case AccessLogFormat::kText:
      break;
  }
  return TextLine(r);
}

std::string RedactQuery(std::string_view query) {
  std::string out;
  out.reserve(query.size());
  while (true) {
    const size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    const size_t eq = param.find('=');
    if (eq != std::string_view::npos && LooksLikeCredential(param.substr(0, eq))) {
      out.append(param.substr(0, eq + 1)).append("REDACTED");
    } else {
      out.append(param);
    }
    if (amp == std::string_view::npos) break;
    out.push_back('&');
    query.remove_prefix(amp + 1);
  }
  return out;
}

std::string RequestIdFor(std::string_view sent) {
  const bool sane =
      !sent.empty() && sent.size() <= kMaxRequestIdBytes &&
      std::all_of(sent.begin(), sent.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      });
  if (sane) return std::string(sent);
  // A random prefix per process and a counter: unique here without a lock, and a restarted
  // daemon does not repeat the ids of the one before.
  static const std::string prefix = [] {
    std::random_device random;
    return fmt::format("{:08x}{:08x}", random(), random());
  }();
  static std::atomic<uint64_t> counter{0};
  return prefix + "-" + std::to_string(counter.fetch_add(1, std::memory_order_relaxed) + 1);
}

std::string PageVerdictNote(std::string_view body) {
  std::map<std::string, uint64_t> counts;
  uint64_t pages = 0;
  // One page's answer and a batch's results hold "verdict":"NAME" per page (json_codec.cc):
  // scanned, not parsed, as a batch's answer may be large.
  constexpr std::string_view kVerdict = "\"verdict\":\"";
  for (size_t at = body.find(kVerdict); at != std::string_view::npos;
       at = body.find(kVerdict, at)) {
    at += kVerdict.size();
    const size_t end = body.find('"', at);
    if (end == std::string_view::npos || end - at > 32) break;
    ++counts[std::string(body.substr(at, end - at))];
    ++pages;
  }
  // A WARC upload's summary counts pages by verdict instead: "new":3,"unchanged":0,...
  if (pages == 0) {
    for (const char* name : {"new", "unchanged", "duplicate", "near_duplicate", "gone"}) {
      const std::string key = std::string("\"") + name + "\":";
      const size_t at = body.find(key);
      if (at == std::string_view::npos) continue;
      uint64_t n = 0;
      for (size_t i = at + key.size(); i < body.size() && body[i] >= '0' && body[i] <= '9'; ++i) {
        n = n * 10 + static_cast<uint64_t>(body[i] - '0');
      }
      if (n > 0) counts[name] = n;
      pages += n;
    }
    if (counts.empty()) return "";
    pages = 2;  // a summary: always the counted form
  }
  if (pages == 1) return "verdict=" + counts.begin()->first;
  std::string note = "verdicts=";
  for (const auto& [name, n] : counts) {
    if (note.size() > 9) note += ',';
    note += name + ":" + std::to_string(n);
  }
  return note;
}

}  // namespace shingled::daemon
