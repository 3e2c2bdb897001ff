#include "daemon/json_codec.h"

#include <cstdio>
#include <ctime>

namespace shingled::daemon {
namespace {

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

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
      if (!Digits(s, &pos, 2, &oh) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &om)) {
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

std::string FormatIsoTime(int64_t unix_seconds) {
  const time_t t = static_cast<time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Json PageResultJson(std::string_view url, const store::PageResult& r) {
  Json j;
  j["url"] = url;
  j["verdict"] = store::VerdictName(r.verdict);
  j["doc"] = r.doc;
  j["cluster"] = r.cluster;
  j["url_id"] = r.url;
  Json matches = Json::array();
  for (const store::Match& m : r.matches) {
    matches.push_back({{"doc", m.doc},
                       {"relation", store::RelationName(m.relation)},
                       {"resemblance", m.resemblance},
                       {"containment_of_page", m.containment_of_page},
                       {"containment_in_page", m.containment_in_page},
                       {"features_in_common", m.features_in_common}});
  }
  j["matches"] = std::move(matches);
  if (r.previous_doc != 0) {
    j["previous"] = {{"doc", r.previous_doc}};
    if (r.previous_resemblance) j["previous"]["resemblance"] = *r.previous_resemblance;
  }
  j["replayed"] = r.replayed;
  j["candidates_truncated"] = r.candidates_truncated;
  return j;
}

Json SimilarJson(const std::vector<store::SimilarDoc>& docs) {
  Json out = Json::array();
  for (const store::SimilarDoc& d : docs) {
    out.push_back({{"doc", d.doc},
                   {"cluster", d.cluster},
                   {"url", d.url},
                   {"resemblance", d.resemblance},
                   {"containment_of_query", d.containment_of_query},
                   {"containment_in_query", d.containment_in_query},
                   {"features_in_common", d.features_in_common}});
  }
  return Json{{"results", std::move(out)}};
}

Json HistoryJson(std::string_view url, const std::vector<store::UrlVersion>& versions) {
  Json out = Json::array();
  for (const store::UrlVersion& v : versions) {
    Json j = {
        {"seq", v.seq}, {"sweep", v.sweep},        {"date", FormatIsoTime(v.date)},
        {"doc", v.doc}, {"status", v.http_status}, {"verdict", store::VerdictName(v.verdict)}};
    if (!v.canonical_link.empty()) j["canonical_link"] = v.canonical_link;
    out.push_back(std::move(j));
  }
  return Json{{"url", url}, {"versions", std::move(out)}};
}

Json ClusterJson(const store::ClusterInfo& cluster) {
  Json members = Json::array();
  for (const store::ClusterMember& m : cluster.members) {
    members.push_back({{"doc", m.doc},
                       {"first_seen", FormatIsoTime(m.first_seen)},
                       {"last_seen", FormatIsoTime(m.last_seen)},
                       {"urls", m.urls}});
  }
  return Json{
      {"id", cluster.id}, {"size", cluster.members.size()}, {"members", std::move(members)}};
}

Json DocumentJson(const store::DocumentInfo& d) {
  Json features = Json::array();
  for (uint64_t f : d.sketch.features) features.push_back(Hex64(f));
  return Json{{"id", d.id},
              {"representative", d.representative},
              {"cluster", d.cluster},
              {"bytes", d.bytes},
              {"tokens", d.tokens},
              {"shingles", d.shingles},
              {"first_seen", FormatIsoTime(d.first_seen)},
              {"last_seen", FormatIsoTime(d.last_seen)},
              {"features", std::move(features)},
              {"fingerprints",
               {{"identical", d.sketch.identical.ToHex()},
                {"lexical", d.sketch.lexical.ToHex()},
                {"shingle", d.sketch.shingle.ToHex()}}}};
}

Json LostJson(const store::LostAndFound& l) {
  Json j = {{"url", l.url}, {"last_doc", l.last_doc}, {"cluster", l.cluster}};
  if (l.found_url.empty()) {
    j["found"] = nullptr;
  } else {
    j["found"] = {{"url", l.found_url},
                  {"doc", l.found_doc},
                  {"date", FormatIsoTime(l.found_date)},
                  {"resemblance", l.resemblance}};
  }
  return j;
}

Json SweepJson(const store::SweepInfo& s) {
  return Json{{"id", s.id},
              {"name", s.name},
              {"open", s.open},
              {"start", FormatIsoTime(s.start)},
              {"end", s.open ? Json(nullptr) : Json(FormatIsoTime(s.end))},
              {"pages", s.pages},
              {"new", s.new_docs},
              {"unchanged", s.unchanged},
              {"duplicate", s.duplicate},
              {"near_duplicate", s.near_duplicate},
              {"gone", s.gone}};
}

Json StatsJson(const store::StoreStats& s) {
  Json dbs = Json::object();
  for (const store::DatabaseStats& d : s.databases) {
    dbs[d.name] = {{"entries", d.entries}, {"bytes", d.bytes}};
  }
  return Json{{"documents", s.documents},
              {"urls", s.urls},
              {"versions", s.versions},
              {"clusters", s.clusters},
              {"largest_cluster", s.largest_cluster},
              {"map_size", s.map_size},
              {"file_bytes", s.file_bytes},
              {"databases", std::move(dbs)}};
}

}  // namespace shingled::daemon
