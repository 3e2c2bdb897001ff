// CDXJ lines (crawler/cdxj.h).
#include "crawler/cdxj.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace shingled::crawler {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// JSON string contents as JSON.stringify writes them: '"', '\\' and control characters escaped,
// every other byte (UTF-8 included) as it is.
void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned char>(c));
          *out += buffer;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendField(std::string_view name, std::string_view value, std::string* out) {
  if (out->size() > 1) out->push_back(',');
  AppendJsonString(name, out);
  out->push_back(':');
  AppendJsonString(value, out);
}

}  // namespace

std::string SurtKey(std::string_view url) {
  if (!StartsWith(url, "http:") && !StartsWith(url, "https:")) return std::string(url);
  std::string text(url);
  // warcio drops "www" and digits before the first dot, before lower-casing.
  const size_t scheme_end = text.find("://");
  if (scheme_end == std::string::npos) return text;
  const size_t host_start = scheme_end + 3;
  if (text.compare(host_start, 3, "www") == 0) {
    size_t i = host_start + 3;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i < text.size() && text[i] == '.') text.erase(host_start, i + 1 - host_start);
  }
  text = Lower(text);
  const bool https = StartsWith(text, "https:");
  std::string_view rest = std::string_view(text).substr(host_start);
  rest = rest.substr(0, rest.find('#'));
  const size_t authority_end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view path_query =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  std::string_view host = authority;
  std::string_view port;
  const size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (port == (https ? "443" : "80")) port = {};

  std::vector<std::string_view> labels;
  while (true) {
    const size_t dot = host.find('.');
    labels.push_back(host.substr(0, dot));
    if (dot == std::string_view::npos) break;
    host.remove_prefix(dot + 1);
  }
  std::string key;
  for (size_t i = labels.size(); i-- > 0;) {
    key.append(labels[i]);
    if (i > 0) key.push_back(',');
  }
  if (!port.empty()) key.append(":").append(port);
  key.push_back(')');
  const size_t question = path_query.find('?');
  std::string_view path = path_query.substr(0, question);
  key.append(path.empty() ? std::string_view("/") : path);
  if (question != std::string_view::npos && question + 1 < path_query.size()) {
    std::vector<std::string_view> parts;
    std::string_view query = path_query.substr(question + 1);
    while (true) {
      const size_t amp = query.find('&');
      parts.push_back(query.substr(0, amp));
      if (amp == std::string_view::npos) break;
      query.remove_prefix(amp + 1);
    }
    std::sort(parts.begin(), parts.end());
    key.push_back('?');
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) key.push_back('&');
      key.append(parts[i]);
    }
  }
  return key;
}

std::string CdxjTimestamp(std::string_view warc_date) {
  std::string digits;
  for (const char c : warc_date) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits.push_back(c);
    if (digits.size() == 14) break;
  }
  return digits;
}

std::string FormatCdxjLine(const CdxjEntry& entry) {
  std::string json = "{";
  AppendField("url", entry.url, &json);
  if (!entry.mime.empty()) AppendField("mime", entry.mime, &json);
  if (entry.http_status != 0) AppendField("status", std::to_string(entry.http_status), &json);
  if (!entry.digest.empty()) {
    const size_t colon = entry.digest.find(':');
    AppendField("digest",
                colon == std::string::npos ? entry.digest : entry.digest.substr(colon + 1), &json);
  }
  AppendField("length", std::to_string(entry.length), &json);
  AppendField("offset", std::to_string(entry.offset), &json);
  AppendField("filename", entry.filename, &json);
  json.push_back('}');
  return SurtKey(entry.url) + " " + CdxjTimestamp(entry.warc_date) + " " + json;
}

void SortCdxjLines(std::vector<std::string>* lines) { std::sort(lines->begin(), lines->end()); }

}  // namespace shingled::crawler
