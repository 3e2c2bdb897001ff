#include "daemon/wire/json_codec.h"

#include <cstdio>

namespace shingled::daemon {
namespace {

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

Json CommonJson(const store::CommonBytes& c, bool spans) {
  if (!c.known) return {{"chunks", "unknown"}, {"a_chunks", c.a_known}, {"b_chunks", c.b_known}};
  Json j = {{"shared_bytes", c.shared_bytes},
            {"share_a", c.share_a},
            {"share_b", c.share_b},
            {"relation", store::CommonRelationName(c.relation)},
            {"length_a", c.length_a},
            {"length_b", c.length_b},
            {"shared_chunks", c.shared_chunks},
            {"template_bytes", c.template_bytes},
            {"template_chunks", c.template_chunks},
            {"template_a", c.template_a},
            {"template_b", c.template_b}};
  if (spans) {
    Json list = Json::array();
    for (const store::CommonSpan& s : c.spans) {
      list.push_back({{"offset_a", s.offset_a}, {"offset_b", s.offset_b}, {"length", s.length}});
    }
    j["spans"] = std::move(list);
    j["spans_truncated"] = c.spans_truncated;
  }
  return j;
}

Json TemplateMarkJson(const store::TemplateMark& mark) {
  return {{"cluster", mark.cluster},
          {"members", mark.members},
          {"chunks", mark.chunks.size()},
          {"chunk_bytes", mark.chunk_bytes}};
}

Json PageResultJson(std::string_view url, const store::PageResult& r) {
  Json j;
  j["url"] = url;
  j["verdict"] = store::VerdictName(r.verdict);
  j["doc"] = r.doc;
  j["cluster"] = r.cluster;
  j["url_id"] = r.url;
  if (r.verdict == store::Verdict::kRedirect) {
    j["location"] = r.redirect_target.empty() ? Json() : Json(r.redirect_target);
  }
  Json matches = Json::array();
  for (const store::Match& m : r.matches) {
    matches.push_back({{"doc", m.doc},
                       {"relation", store::RelationName(m.relation)},
                       {"resemblance", m.resemblance},
                       {"containment_of_page", m.containment_of_page},
                       {"containment_in_page", m.containment_in_page},
                       {"features_in_common", m.features_in_common},
                       // Where the resemblance comes from, and its standard error.
                       {"resemblance_from", store::ResemblanceSourceName(m.resemblance_from)},
                       {"resemblance_error", m.resemblance_error},
                       // MOD samples, or the bytes in common of a containment match.
                       {"containment_from", store::ContainmentSourceName(m.containment_from)}});
  }
  // a = the page, b = the match.
  for (size_t i = 0; i < r.match_common.size() && i < matches.size(); ++i) {
    matches[i]["common"] = CommonJson(r.match_common[i], /*spans=*/false);
  }
  j["matches"] = std::move(matches);
  if (r.previous_doc != 0) {
    j["previous"] = {{"doc", r.previous_doc}};
    if (r.previous_resemblance) j["previous"]["resemblance"] = *r.previous_resemblance;
  }
  j["replayed"] = r.replayed;
  j["candidates_truncated"] = r.candidates_truncated;
  j["candidates_left_out"] = r.candidates_left_out;
  // What a page of a large family leaves out to keep its work bounded (StoreOptions::max_matches).
  j["matches_left_out"] = r.matches_left_out;
  j["candidates_in_cluster"] = r.candidates_in_cluster;
  j["candidates_below_floor"] = r.candidates_below_floor;
  j["containment_truncated"] = r.containment_truncated;
  return j;
}

Json SimilarJson(const std::vector<store::SimilarDoc>& docs, uint64_t candidates_left_out) {
  Json out = Json::array();
  for (const store::SimilarDoc& d : docs) {
    out.push_back({{"doc", d.doc},
                   {"cluster", d.cluster},
                   {"url", d.url},
                   {"resemblance", d.resemblance},
                   {"resemblance_from", store::ResemblanceSourceName(d.resemblance_from)},
                   {"containment_of_query", d.containment_of_query},
                   {"containment_in_query", d.containment_in_query},
                   {"containment_from", store::ContainmentSourceName(d.containment_from)},
                   {"features_in_common", d.features_in_common}});
    out.back()["common"] = CommonJson(d.common, /*spans=*/false);  // a = the query
  }
  // Candidates found beyond store.max_candidates and not scored (0: none).
  return Json{{"results", std::move(out)}, {"candidates_left_out", candidates_left_out}};
}

Json HistoryJson(std::string_view url, const std::vector<store::UrlVersion>& versions) {
  Json out = Json::array();
  for (const store::UrlVersion& v : versions) {
    Json j = {
        {"seq", v.seq}, {"sweep", v.sweep},        {"date", FormatIsoTime(v.date)},
        {"doc", v.doc}, {"status", v.http_status}, {"verdict", store::VerdictName(v.verdict)}};
    if (!v.canonical_link.empty()) j["canonical_link"] = v.canonical_link;
    if (v.verdict == store::Verdict::kRedirect) {
      j["location"] = v.redirect_target.empty() ? Json() : Json(v.redirect_target);
    }
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

namespace {

Json SuccessorJson(const store::Successor& s) {
  Json j = {
      {"url", s.url},
      {"last_seen", FormatIsoTime(s.last_seen)},
      {"resemblance", s.resemblance},
      {"containment", s.containment},
      {"why", s.why},
      {"evidence", store::SuccessorEvidenceName(s.evidence)},
      {"doc", s.doc},
      {"resemblance_now", s.resemblance_now},
      {"matched_doc", s.matched_doc},
      {"matched_date", s.matched_date == 0 ? Json(nullptr) : Json(FormatIsoTime(s.matched_date))},
      {"born_when_died", s.born_when_died},
      {"via", s.via}};
  if (s.evidence == store::SuccessorEvidence::kRedirect) {
    j["redirect"] = {{"status", s.redirect_status}, {"date", FormatIsoTime(s.redirect_date)}};
  }
  if (s.born_when_died) j["born_or_changed"] = FormatIsoTime(s.born_or_changed);
  return j;
}

}  // namespace

Json LostJson(const store::LostAndFound& l) {
  Json j = {{"url", l.url},
            {"status", store::LostStatusName(l.status)},
            {"last_seen_live",
             l.last_seen_live == 0 ? Json(nullptr) : Json(FormatIsoTime(l.last_seen_live))},
            {"died", l.died == 0 ? Json(nullptr) : Json(FormatIsoTime(l.died))},
            {"last_doc", l.last_doc},
            {"cluster", l.cluster}};
  if (l.redirect_status != 0) {
    j["location"] = l.redirect_target.empty() ? Json(nullptr) : Json(l.redirect_target);
  }
  j["best"] = l.best ? SuccessorJson(*l.best) : Json(nullptr);
  Json candidates = Json::array();
  for (const store::Successor& s : l.candidates) candidates.push_back(SuccessorJson(s));
  j["candidates"] = std::move(candidates);
  j["truncated"] = l.truncated ? Json(l.truncated_by) : Json(nullptr);
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
              {"gone", s.gone},
              {"scope", s.scope}};
}

Json SweepClosingJson(const store::SweepClosing& c, bool dry_run) {
  Json j = SweepJson(c.sweep);
  j["closing"] = {{"dry_run", dry_run},
                  {"gone_urls", c.gone},
                  {"listed", c.gone_urls.size()},
                  {"urls", c.gone_urls}};
  return j;
}

Json ForgetResultJson(const store::ForgetOptions& options, const store::ForgetResult& r) {
  return Json{{"scope", store::ForgetScopeName(options.scope)},
              {"value", options.value},
              {"dry_run", options.dry_run},
              {"urls", r.urls},
              {"versions", r.versions},
              {"documents", r.documents},
              {"documents_kept", r.documents_kept},
              {"clusters_recomputed", r.clusters_recomputed},
              {"clusters_split", r.clusters_split},
              {"listed", r.listed},
              {"more", r.more},
              {"record", r.record == 0 ? Json(nullptr) : Json(r.record)}};
}

std::string Sha256Hex(const std::array<uint8_t, 32>& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint8_t b : digest) out += {kHex[b >> 4], kHex[b & 15]};
  return out;
}

Json ForgetRecordJson(const store::ForgetRecord& r) {
  return Json{{"id", r.id},
              {"date", FormatIsoTime(r.date)},
              {"scope", store::ForgetScopeName(r.scope)},
              {"value_sha256", Sha256Hex(r.value_sha256)},
              {"urls", r.urls},
              {"versions", r.versions},
              {"documents", r.documents},
              {"clusters_split", r.clusters_split}};
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
              {"buffered_postings", s.buffered_postings},
              {"buffered_fingerprints", s.buffered_fingerprints},
              {"key_filter_bytes", s.key_filter_bytes},
              {"map_size", s.map_size},
              {"file_bytes", s.file_bytes},
              {"databases", std::move(dbs)}};
}

}  // namespace shingled::daemon
