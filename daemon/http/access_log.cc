#include "daemon/http/access_log.h"

#include <spdlog/fmt/fmt.h>

#include <map>

namespace shingled::daemon {
namespace {

constexpr size_t kMaxPathBytes = 256;

// Appends `text` with everything that could end or fake a field percent-encoded.
void AppendSafe(std::string_view text, size_t max_bytes, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const size_t start = out->size();
  for (const char c : text) {
    if (out->size() - start >= max_bytes) {
      out->append("...");
      return;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '"' || c == '\\' || c == '%') {
      out->push_back('%');
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

std::string FormatAccessLine(const AccessRecord& r) {
  std::string line = "access client=";
  AppendSafe(r.client, 64, &line);
  line += " method=";
  AppendSafe(r.method, 32, &line);
  line += " path=";
  std::string_view path = r.target;
  path = path.substr(0, path.find_first_of("?#"));
  AppendSafe(path.empty() ? "-" : path, kMaxPathBytes, &line);
  line += fmt::format(" status={} bytes={} ms={:.3f}", r.status, r.bytes, r.seconds * 1000);
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
