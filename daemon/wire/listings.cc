#include "daemon/wire/listings.h"

#include <charconv>

#include "daemon/wire/json_codec.h"

namespace shingled::daemon {
namespace {

constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// The first byte of each listing's cursor, so that one listing refuses another's.
constexpr char kUrlTag = 'u';
constexpr char kClusterTag = 'c';
constexpr char kIdenticalTag = 'i';
constexpr char kMembersTag = 'm';

Status BadCursor() {
  return InvalidArgumentError(
      "after is not a cursor of this listing: pass the \"next\" of the page before");
}

// An unsigned decimal, the whole text.
bool ParseU64(std::string_view text, uint64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// The payload of cursor `text` of the listing tagged `tag`.
StatusOr<std::string> CursorPayload(const std::string& text, char tag) {
  StatusOr<std::string> bytes = DecodeBase64Url(text);
  if (!bytes.ok() || bytes->empty() || (*bytes)[0] != tag) return BadCursor();
  return bytes->substr(1);
}

// Two numbers "a.b" of a cursor payload.
Status ParsePair(std::string_view payload, uint64_t* a, uint64_t* b) {
  const size_t dot = payload.find('.');
  if (dot == std::string_view::npos || !ParseU64(payload.substr(0, dot), a) ||
      !ParseU64(payload.substr(dot + 1), b)) {
    return BadCursor();
  }
  return OkStatus();
}

StatusOr<uint64_t> ParseAtLeast2(const ListParams& params, const std::string& name) {
  auto it = params.find(name);
  if (it == params.end()) return uint64_t{2};
  return ParseInteger(name, it->second, 2, UINT64_MAX);
}

const std::string* Find(const ListParams& params, const char* name) {
  auto it = params.find(name);
  return it == params.end() ? nullptr : &it->second;
}

Json NextJson(const std::optional<std::string>& next) { return next ? Json(*next) : Json(nullptr); }

}  // namespace

std::string EncodeBase64Url(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                       (uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kBase64Url[(n >> s) & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    if (rest == 2) n |= uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    out.push_back(kBase64Url[(n >> 18) & 63]);
    out.push_back(kBase64Url[(n >> 12) & 63]);
    if (rest == 2) out.push_back(kBase64Url[(n >> 6) & 63]);
  }
  return out;
}

StatusOr<std::string> DecodeBase64Url(std::string_view text) {
  if (text.size() % 4 == 1) return InvalidArgumentError("not base64url: bad length");
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const char* p = c == '\0' ? nullptr : std::char_traits<char>::find(kBase64Url, 64, c);
    if (p == nullptr)
      return InvalidArgumentError("not base64url: a character outside A-Z a-z 0-9 - _");
    acc = (acc << 6) | static_cast<uint32_t>(p - kBase64Url);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  // The bits left over are padding: zero in an encoding EncodeBase64Url made.
  if ((acc & ((1u << bits) - 1)) != 0) return InvalidArgumentError("not base64url: stray bits");
  return out;
}

StatusOr<size_t> ParseListLimit(const ListParams& params, size_t fallback) {
  const std::string* text = Find(params, "limit");
  if (text == nullptr) return fallback;
  StatusOr<uint64_t> limit = ParseInteger("limit", *text, 1, kMaxListLimit);
  if (!limit.ok()) return limit.status();
  return static_cast<size_t>(*limit);
}

std::string UrlCursor(const std::string& key) {
  std::string bytes(1, kUrlTag);
  bytes.append(key);
  return EncodeBase64Url(bytes);
}

std::string ClusterCursorText(const store::ClusterCursor& cursor) {
  std::string bytes(1, kClusterTag);
  bytes.append(std::to_string(cursor.size)).append(".").append(std::to_string(cursor.id));
  return EncodeBase64Url(bytes);
}

std::string IdenticalCursorText(const store::IdenticalCursor& cursor) {
  std::string bytes(1, kIdenticalTag);
  bytes.append(std::to_string(cursor.urls))
      .append(".")
      .append(std::to_string(cursor.representative));
  return EncodeBase64Url(bytes);
}

std::string MembersCursorText(store::DocId after) {
  std::string bytes(1, kMembersTag);
  bytes.append(std::to_string(after));
  return EncodeBase64Url(bytes);
}

StatusOr<store::UrlListOptions> ParseUrlListing(const ListParams& params,
                                                const store::Store& store) {
  store::UrlListOptions options;
  options.max_examined = kListMaxExamined;
  StatusOr<size_t> limit = ParseListLimit(params);
  if (!limit.ok()) return limit.status();
  options.limit = *limit;
  if (const std::string* after = Find(params, "after")) {
    StatusOr<std::string> key = CursorPayload(*after, kUrlTag);
    if (!key.ok()) return key.status();
    if (key->empty()) return BadCursor();
    options.after = std::move(key).value();
  }
  // The host's roots and the prefix: URLs must be in both when both are given.
  std::vector<std::string> roots;
  if (const std::string* host = Find(params, "host")) {
    StatusOr<std::vector<std::string>> scope = SweepScope({*host}, {});
    if (!scope.ok()) {
      return InvalidArgumentError("host \"" + host->substr(0, 200) +
                                  "\" is not a host name or host:port");
    }
    roots = std::move(scope).value();
  }
  if (const std::string* prefix = Find(params, "prefix")) {
    StatusOr<std::string> normalized = PageUrl(*prefix, kMaxScopePrefixBytes);
    if (!normalized.ok()) {
      return InvalidArgumentError("prefix: " + std::string(normalized.status().message()));
    }
    if (roots.empty()) {
      roots.push_back(std::move(normalized).value());
    } else {
      // The ranges both cover: the longer of two prefixes when one starts with the other.
      std::vector<std::string> both;
      for (const std::string& r : roots) {
        if (normalized->starts_with(r))
          both.push_back(*normalized);
        else if (r.starts_with(*normalized))
          both.push_back(r);
      }
      if (both.empty()) {
        return InvalidArgumentError("prefix \"" + normalized->substr(0, 200) +
                                    "\" is not on host " + *Find(params, "host"));
      }
      roots = std::move(both);
    }
  }
  options.prefixes = std::move(roots);
  if (const std::string* sweep = Find(params, "sweep")) {
    StatusOr<store::SweepInfo> found = store.FindSweep(*sweep);
    if (!found.ok()) {
      if (found.status().code() != StatusCode::kNotFound) return found.status();
      return InvalidArgumentError("sweep \"" + sweep->substr(0, 200) + "\" is not in the store");
    }
    options.sweep = found->id;
  }
  if (const std::string* status = Find(params, "status")) {
    options.status = store::UrlStatusFromName(*status);
    if (!options.status) {
      return InvalidArgumentError("status \"" + status->substr(0, 40) +
                                  "\" is not one of live, dead, gone, redirect, failed");
    }
  }
  if (const std::string* verdict = Find(params, "verdict")) {
    options.verdict = store::VerdictFromName(*verdict);
    if (!options.verdict) {
      return InvalidArgumentError("verdict \"" + verdict->substr(0, 40) +
                                  "\" is not one of new, unchanged, duplicate, near_duplicate, "
                                  "gone, failed, redirect");
    }
  }
  return options;
}

StatusOr<store::ClusterListOptions> ParseClusterListing(const ListParams& params) {
  store::ClusterListOptions options;
  StatusOr<uint64_t> min_size = ParseAtLeast2(params, "min_size");
  if (!min_size.ok()) return min_size.status();
  options.min_size = *min_size;
  StatusOr<size_t> limit = ParseListLimit(params);
  if (!limit.ok()) return limit.status();
  options.limit = *limit;
  if (const std::string* after = Find(params, "after")) {
    StatusOr<std::string> payload = CursorPayload(*after, kClusterTag);
    if (!payload.ok()) return payload.status();
    store::ClusterCursor c;
    SHINGLED_RETURN_IF_ERROR(ParsePair(*payload, &c.size, &c.id));
    options.after = c;
  }
  return options;
}

StatusOr<store::IdenticalSetOptions> ParseIdenticalListing(const ListParams& params) {
  store::IdenticalSetOptions options;
  StatusOr<uint64_t> min_urls = ParseAtLeast2(params, "min_urls");
  if (!min_urls.ok()) return min_urls.status();
  options.min_urls = *min_urls;
  StatusOr<size_t> limit = ParseListLimit(params);
  if (!limit.ok()) return limit.status();
  options.limit = *limit;
  if (const std::string* after = Find(params, "after")) {
    StatusOr<std::string> payload = CursorPayload(*after, kIdenticalTag);
    if (!payload.ok()) return payload.status();
    store::IdenticalCursor c;
    SHINGLED_RETURN_IF_ERROR(ParsePair(*payload, &c.urls, &c.representative));
    options.after = c;
  }
  return options;
}

Status ParseMembersListing(const ListParams& params, store::DocId* after, size_t* limit) {
  StatusOr<size_t> l = ParseListLimit(params, kDefaultMembersLimit);
  if (!l.ok()) return l.status();
  *limit = *l;
  *after = 0;
  if (const std::string* text = Find(params, "after")) {
    StatusOr<std::string> payload = CursorPayload(*text, kMembersTag);
    if (!payload.ok()) return payload.status();
    if (!ParseU64(*payload, after)) return BadCursor();
  }
  return OkStatus();
}

Json UrlItemJson(const store::UrlListItem& item) {
  const store::UrlVersion& v = item.version;
  Json version = {
      {"seq", v.seq}, {"sweep", v.sweep},        {"date", FormatIsoTime(v.date)},
      {"doc", v.doc}, {"status", v.http_status}, {"verdict", store::VerdictName(v.verdict)}};
  if (!v.canonical_link.empty()) version["canonical_link"] = v.canonical_link;
  if (v.verdict == store::Verdict::kRedirect) {
    version["location"] = v.redirect_target.empty() ? Json() : Json(v.redirect_target);
  }
  return Json{{"url", item.url},
              {"status", store::UrlStatusName(item.status)},
              {"first_seen", FormatIsoTime(item.first_seen)},
              {"versions", item.versions},
              {"version", std::move(version)}};
}

Json UrlPageJson(const store::UrlPage& page) {
  Json urls = Json::array();
  for (const store::UrlListItem& item : page.urls) urls.push_back(UrlItemJson(item));
  return Json{{"urls", std::move(urls)},
              {"next", NextJson(page.next ? std::optional(UrlCursor(*page.next)) : std::nullopt)}};
}

Json ClusterSummaryJson(const store::ClusterSummary& c) {
  return Json{{"id", c.id},
              {"size", c.size},
              {"live_urls", c.live_urls},
              {"first_seen", FormatIsoTime(c.first_seen)},
              {"last_seen", FormatIsoTime(c.last_seen)},
              {"sample_urls", c.sample_urls}};
}

Json ClusterListJson(const store::ClusterListPage& page) {
  Json clusters = Json::array();
  for (const store::ClusterSummary& c : page.clusters) clusters.push_back(ClusterSummaryJson(c));
  return Json{
      {"clusters", std::move(clusters)},
      {"next", NextJson(page.next ? std::optional(ClusterCursorText(*page.next)) : std::nullopt)}};
}

Json IdenticalSetJson(const store::IdenticalSet& set) {
  Json docs = Json::array();
  for (const store::IdenticalDocument& d : set.documents) {
    docs.push_back({{"doc", d.doc}, {"bytes", d.bytes}, {"live_urls", d.live_urls}});
  }
  return Json{{"representative", set.representative},
              {"url_count", set.url_count},
              {"bytes", set.bytes},
              {"documents", std::move(docs)},
              {"urls", set.urls}};
}

Json IdenticalListJson(const store::IdenticalSetPage& page) {
  Json sets = Json::array();
  for (const store::IdenticalSet& s : page.sets) sets.push_back(IdenticalSetJson(s));
  return Json{{"sets", std::move(sets)},
              {"next", NextJson(page.next ? std::optional(IdenticalCursorText(*page.next))
                                          : std::nullopt)}};
}

Json ClusterMembersJson(const store::ClusterMembersPage& page) {
  Json j = ClusterJson(page.cluster);
  j["size"] = page.size;
  j["next"] = NextJson(page.next ? std::optional(MembersCursorText(*page.next)) : std::nullopt);
  return j;
}

}  // namespace shingled::daemon
