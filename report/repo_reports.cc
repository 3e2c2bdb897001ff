// The repository reports as JSON and CSV (report/repo_reports.h, docs/REPORTS.md).
#include "report/repo_reports.h"

#include <cmath>
#include <string>

#include "report/changes.h"
#include "report/html.h"

namespace shingled::report {
namespace {

// Similarities and shares with 4 decimals: enough to compare, short to read.
double Round4(double v) { return std::round(v * 10000) / 10000; }

std::string Csv4(double v) { return html::Fixed(v, 4); }

Json IdenticalTotalsJson(const store::IdenticalReportTotals& t) {
  return Json{
      {"sets", t.sets}, {"files", t.files}, {"wasted_bytes", t.wasted_bytes}, {"listed", t.listed}};
}

Json IdenticalSetJson(const store::IdenticalReportSet& s) {
  return Json{{"set", s.rank},
              {"doc", s.doc},
              {"bytes", s.bytes},
              {"copies", s.copies},
              {"wasted_bytes", s.wasted_bytes},
              {"urls", s.urls}};
}

Json ClusterJson(const store::ClusterReportCluster& c) {
  Json documents = Json::array();
  for (const store::ClusterReportDocument& d : c.documents) {
    documents.push_back(
        Json{{"doc", d.doc}, {"bytes", d.bytes}, {"live_urls", d.live_urls}, {"urls", d.urls}});
  }
  Json links = Json::array();
  for (const store::ClusterReportLink& l : c.links) {
    links.push_back(Json{{"a", l.a},
                         {"b", l.b},
                         {"shared_bytes", l.shared_bytes},
                         {"length_a", l.length_a},
                         {"length_b", l.length_b},
                         {"share_a", Round4(l.share_a)},
                         {"share_b", Round4(l.share_b)},
                         {"similarity", Round4(l.similarity)},
                         {"relation", store::CommonRelationName(l.relation)}});
  }
  return Json{{"cluster", c.rank},
              {"id", c.id},
              {"partition", c.partition},
              {"type", store::ClusterReportTypeName(c.type)},
              {"bytes", c.bytes},
              {"documents", c.documents.size()},
              {"links", c.links.size()},
              {"average_similarity", Round4(c.average_similarity)},
              {"keep", c.keep},
              {"removable_bytes", c.removable_bytes},
              {"partition_pairs_unchecked", c.partition_pairs_unchecked},
              {"members", std::move(documents)},
              {"link_list", std::move(links)}};
}

Json ClusterTotalsJson(const store::ClusterReportTotals& t) {
  return Json{{"clusters", t.clusters},
              {"documents", t.documents},
              {"links", t.links},
              {"bytes", t.bytes},
              {"removable_bytes", t.removable_bytes},
              {"partitions", t.partitions},
              {"pairs_checked", t.pairs_checked},
              {"pairs_unchecked", t.pairs_unchecked},
              {"chunks_too_common", t.chunks_too_common},
              {"documents_without_chunks", t.documents_without_chunks},
              {"limited", t.limited}};
}

}  // namespace

std::optional<RepoReportFormat> RepoReportFormatFromName(std::string_view format) {
  if (format == "json") return RepoReportFormat::kJson;
  if (format == "csv") return RepoReportFormat::kCsv;
  return std::nullopt;
}

Status WriteIdenticalReport(const store::Store& store, const store::IdenticalReportOptions& options,
                            RepoReportFormat format, const ReportSink& sink,
                            const store::RepoReportProgress& progress) {
  const bool json = format == RepoReportFormat::kJson;
  bool first = true;
  auto totals = [&](const store::IdenticalReportTotals& t) -> Status {
    if (!json) return sink("set,doc,bytes,copies,wasted_bytes,url\r\n");
    std::string head = "{\"report\":\"identical\",\"totals\":";
    head.append(IdenticalTotalsJson(t).dump()).append(",\"sets\":[");
    return sink(head);
  };
  auto set = [&](const store::IdenticalReportSet& s) -> Status {
    if (json) {
      std::string line = first ? "\n" : ",\n";
      first = false;
      line.append(IdenticalSetJson(s).dump(-1, ' ', false, Json::error_handler_t::replace));
      return sink(line);
    }
    std::string lines;
    std::string prefix = std::to_string(s.rank);
    prefix.append(",").append(std::to_string(s.doc));
    prefix.append(",").append(std::to_string(s.bytes));
    prefix.append(",").append(std::to_string(s.copies));
    prefix.append(",").append(std::to_string(s.wasted_bytes)).append(",");
    for (const std::string& url : s.urls) {
      lines.append(prefix).append(CsvField(url)).append("\r\n");
    }
    return sink(lines);
  };
  SHINGLED_RETURN_IF_ERROR(store.StreamIdenticalReport(options, totals, set, progress));
  return json ? sink("\n]}\n") : OkStatus();
}

Status WriteClusterReport(const store::Store& store, const store::ClusterReportOptions& options,
                          RepoReportFormat format, const ReportSink& sink,
                          const store::RepoReportProgress& progress) {
  const bool json = format == RepoReportFormat::kJson;
  if (json) {
    Json settings{{"min_bytes", options.min_bytes},
                  {"min_share", options.min_share},
                  {"max_chunk_docs", options.max_chunk_docs},
                  {"max_pairs_per_doc", options.max_pairs_per_doc}};
    std::string head = "{\"report\":\"clusters\",\"settings\":";
    head.append(settings.dump()).append(",\"clusters\":[");
    SHINGLED_RETURN_IF_ERROR(sink(head));
  } else {
    SHINGLED_RETURN_IF_ERROR(
        sink("cluster,row,type,bytes,documents,links,similarity,removable_bytes,doc,other_doc,"
             "shared_bytes,relation,url\r\n"));
  }
  bool first = true;
  auto cluster = [&](const store::ClusterReportCluster& c) -> Status {
    if (json) {
      std::string line = first ? "\n" : ",\n";
      first = false;
      line.append(ClusterJson(c).dump(-1, ' ', false, Json::error_handler_t::replace));
      return sink(line);
    }
    const std::string rank = std::to_string(c.rank);
    std::string lines = rank;
    lines.append(",cluster,").append(store::ClusterReportTypeName(c.type));
    lines.append(",").append(std::to_string(c.bytes));
    lines.append(",").append(std::to_string(c.documents.size()));
    lines.append(",").append(std::to_string(c.links.size()));
    lines.append(",").append(Csv4(c.average_similarity));
    lines.append(",").append(std::to_string(c.removable_bytes));
    lines.append(",").append(std::to_string(c.keep)).append(",,,,\r\n");
    for (const store::ClusterReportLink& l : c.links) {
      lines.append(rank).append(",link,,,,,").append(Csv4(l.similarity)).append(",,");
      lines.append(std::to_string(l.a)).append(",").append(std::to_string(l.b));
      lines.append(",").append(std::to_string(l.shared_bytes));
      lines.append(",").append(store::CommonRelationName(l.relation)).append(",\r\n");
    }
    for (const store::ClusterReportDocument& d : c.documents) {
      for (const std::string& url : d.urls) {
        lines.append(rank).append(",document,,").append(std::to_string(d.bytes));
        lines.append(",,,,,").append(std::to_string(d.doc)).append(",,,,");
        lines.append(CsvField(url)).append("\r\n");
      }
    }
    return sink(lines);
  };
  store::ClusterReportTotals totals;
  SHINGLED_RETURN_IF_ERROR(store.StreamClusterReport(options, cluster, &totals, progress));
  if (!json) return OkStatus();
  std::string tail = "\n],\"totals\":";
  tail.append(ClusterTotalsJson(totals).dump()).append("}\n");
  return sink(tail);
}

}  // namespace shingled::report
