// The repository reports as JSON, CSV and HTML (report/repo_reports.h, docs/REPORTS.md).
#include "report/repo_reports.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

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

// A cell of URLs, each a link to its timeline, and how many more there are.
html::Cell UrlsCell(const std::vector<std::string>& urls, uint64_t count,
                    const html::Links& links) {
  std::string cell;
  for (const std::string& u : urls) {
    if (!cell.empty()) cell.append("<br>");
    cell.append(links.Timeline(u));
  }
  if (count > urls.size()) {
    cell.append(cell.empty() ? "" : "<br>")
        .append("\u2026 and ")
        .append(html::Count(count - urls.size()))
        .append(" more");
  }
  html::Cell c = html::Cell::Html(std::move(cell));
  c.long_text = true;
  return c;
}

// "bytes (1.2 MB)": the unit of an exact count, and its size at a glance.
std::string BytesHint(uint64_t n) {
  std::string out = "bytes";
  if (n >= 10000) {
    const double v = static_cast<double>(n);
    out.append(" (")
        .append(n >= 10000000 ? html::Fixed(v / 1e6, 1) + " MB" : html::Fixed(v / 1e3, 1) + " kB")
        .append(")");
  }
  return out;
}

// "1,234,567 bytes (1.2 MB)".
std::string Bytes(uint64_t n) {
  std::string out = html::Count(n) + " bytes";
  if (n >= 10000) {
    const double v = static_cast<double>(n);
    out.append(" (")
        .append(n >= 10000000 ? html::Fixed(v / 1e6, 1) + " MB" : html::Fixed(v / 1e3, 1) + " kB")
        .append(")");
  }
  return out;
}

std::string Similarity(double v) { return html::Fixed(Round4(v), 2); }

const char* TypeWords(store::ClusterReportType type) {
  switch (type) {
    case store::ClusterReportType::kPair:
      return "pair";
    case store::ClusterReportType::kContains:
      return "one contains the other";
    case store::ClusterReportType::kGroup:
      return "group";
  }
  return "";
}

const char* RelationWords(store::CommonRelation relation) {
  switch (relation) {
    case store::CommonRelation::kNearIdentical:
      return "near identical";
    case store::CommonRelation::kAContainsB:
      return "first contains second";
    case store::CommonRelation::kBContainsA:
      return "second contains first";
    case store::CommonRelation::kOverlap:
      return "overlap";
    default:
      return "none";
  }
}

const std::vector<std::string>& IdenticalHeader() {
  static const std::vector<std::string> header{"Set",    "Document",     "Bytes",
                                               "Copies", "Wasted bytes", "Live URLs"};
  return header;
}

const std::vector<std::string>& ClusterHeader() {
  static const std::vector<std::string> header{
      "Cluster", "Type", "Documents", "Links", "Bytes", "Similarity", "Keep", "Removable bytes"};
  return header;
}

std::string ClusterAnchor(uint64_t rank) { return "cluster-" + std::to_string(rank); }

// The HTML of the identical report, written as the store streams it: the page's head and the
// totals when they come (before the first set), a table row per set, the end.
class IdenticalHtml {
 public:
  IdenticalHtml(const store::IdenticalReportOptions& options, const html::Links& links,
                const ReportSink& sink)
      : options_(options), links_(links), sink_(sink), page_("Identical content") {}

  Status Totals(const store::IdenticalReportTotals& t) {
    page_.Nav(links_, html::PageName::kIdentical);
    page_.Paragraph(
        "Each set is one content (the same raw bytes) held by two or more live URLs: keeping one "
        "copy frees the others' bytes. Sets are listed largest waste first.");
    page_.Figures({{"Sets", html::Count(t.sets), "contents held by two or more live URLs"},
                   {"Copies", html::Count(t.files), "their live URLs (files)"},
                   {"Wasted", html::Count(t.wasted_bytes),
                    BytesHint(t.wasted_bytes) + ", freed by keeping one copy of each"},
                   {"Listed", html::Count(t.listed),
                    t.listed < t.sets ? "sets below (the limit)" : "sets below: all"}});
    if (links_.enabled) {
      page_.ParagraphHtml("The same report as " + ApiLink("json", "JSON") + " and " +
                          ApiLink("csv", "CSV") + ".");
    }
    std::string out = page_.Start() + page_.Body();
    if (t.sets == 0) {
      out.append("<p>No two live URLs hold the same content.</p>\n");
      empty_ = true;
      return sink_(out);
    }
    html::Table table;
    table.caption = t.listed < t.sets ? "The first " + html::Count(t.listed) + " of " +
                                            html::Count(t.sets) + " sets, largest waste first"
                                      : "Every set, largest waste first";
    table.header = IdenticalHeader();
    table.numeric = {false, true, true, true, true, false};
    out.append(html::TableStart(table));
    return sink_(out);
  }

  Status Set(const store::IdenticalReportSet& s) {
    return sink_(
        html::TableRow({html::Cell::Text(std::to_string(s.rank)), html::Cell::Number(s.doc),
                        html::Cell::Number(s.bytes), html::Cell::Number(s.copies),
                        html::Cell::Number(s.wasted_bytes), UrlsCell(s.urls, s.copies, links_)},
                       IdenticalHeader(), "set-" + std::to_string(s.rank)));
  }

  Status Finish() {
    std::string out = empty_ ? std::string() : html::TableEnd();
    if (options_.max_urls != SIZE_MAX) {
      out.append("<p>At most ")
          .append(html::Count(options_.max_urls))
          .append(" URLs are listed per set; its copies count them all.</p>\n");
    }
    out.append(
        "<p>Pages with the same text and other markup are different contents here; the clusters "
        "report shows them as near identical pairs. docs/REPORTS.md defines every column.</p>\n");
    out.append(html::Page::End());
    return sink_(out);
  }

 private:
  // The API's answer with the same options (the daemon lists at most 10,000 sets and URLs).
  std::string ApiLink(std::string_view format, std::string_view text) const {
    std::string path = "reports/identical?format=";
    path.append(format);
    path.append("&limit=").append(std::to_string(std::min<uint64_t>(options_.limit, 10000)));
    path.append("&max_urls=").append(std::to_string(std::min<size_t>(options_.max_urls, 1000)));
    std::string a = "<a href=\"";
    a.append(html::Escape(links_.api + path)).append("\">");
    a.append(html::Escape(text)).append("</a>");
    return a;
  }

  const store::IdenticalReportOptions& options_;
  const html::Links& links_;
  const ReportSink& sink_;
  html::Page page_;
  bool empty_ = false;
};

// The clusters report's HTML: the summary table and each cluster's section are kept until the
// totals (known at the end) are written above them.
class ClusterHtml {
 public:
  ClusterHtml(const store::ClusterReportOptions& options, const html::Links& links)
      : options_(options), links_(links) {}

  void Cluster(const store::ClusterReportCluster& c) {
    const std::string anchor = ClusterAnchor(c.rank);
    const std::string type = TypeWords(c.type);
    rows_.append(html::TableRow(
        {html::Cell::Html("<a href=\"#" + anchor + "\">" + std::to_string(c.rank) + "</a>"),
         html::Cell::Text(type), html::Cell::Number(c.documents.size()),
         html::Cell::Number(c.links.size()), html::Cell::Number(c.bytes),
         html::Cell::Html(Similarity(c.average_similarity), true), html::Cell::Number(c.keep),
         html::Cell::Number(c.removable_bytes)},
        ClusterHeader(), "row-" + anchor));
    if (chart_.bars.size() < 20) {
      chart_.bars.push_back(html::Bar{"Cluster " + std::to_string(c.rank) + " (" + type + ")",
                                      static_cast<double>(c.removable_bytes),
                                      html::Count(c.removable_bytes) + " bytes", 0});
    }
    std::string& s = sections_;
    s.append("<section id=\"")
        .append(anchor)
        .append("\" aria-labelledby=\"")
        .append(anchor)
        .append("-h\">\n");
    s.append("<h3 id=\"").append(anchor).append("-h\">Cluster ").append(std::to_string(c.rank));
    s.append(": ").append(html::Escape(type)).append(", ");
    s.append(html::Count(c.documents.size())).append(" documents</h3>\n");
    s.append("<p>Keep document ")
        .append(html::Count(c.keep))
        .append(" (the largest); removing the ");
    s.append(c.documents.size() == 2 ? "other frees " : "others frees ");
    s.append(html::Escape(Bytes(c.removable_bytes))).append(". Average similarity of its links: ");
    s.append(Similarity(c.average_similarity)).append(".");
    if (c.partition_pairs_unchecked > 0) {
      s.append(" Its partition had ").append(html::Count(c.partition_pairs_unchecked));
      s.append(" candidate pairs left unchecked (over the cap): a link may be missing.");
    }
    s.append(" <a href=\"#clusters\">Back to the list</a>.</p>\n");
    html::Table docs;
    docs.caption = "Cluster " + std::to_string(c.rank) + ": its documents";
    docs.header = {"Document", "Bytes", "Live URLs", "URLs (each links to its timeline)"};
    docs.numeric = {true, true, true, false};
    s.append(html::TableStart(docs));
    for (const store::ClusterReportDocument& d : c.documents) {
      std::string id = html::Count(d.doc);
      if (d.doc == c.keep) id.append(" (keep)");
      s.append(
          html::TableRow({html::Cell::Html(html::Escape(id), true), html::Cell::Number(d.bytes),
                          html::Cell::Number(d.live_urls), UrlsCell(d.urls, d.live_urls, links_)},
                         docs.header));
    }
    s.append(html::TableEnd());
    html::Table ls;
    ls.caption = "Cluster " + std::to_string(c.rank) + ": its links (bytes in common)";
    ls.header = {"Documents",           "Bytes in common", "Share of the first",
                 "Share of the second", "Similarity",      "Relation"};
    ls.numeric = {false, true, true, true, true, false};
    s.append(html::TableStart(ls));
    for (const store::ClusterReportLink& l : c.links) {
      s.append(html::TableRow(
          {html::Cell::Text(std::to_string(l.a) + " and " + std::to_string(l.b)),
           html::Cell::Number(l.shared_bytes), html::Cell::Html(Similarity(l.share_a), true),
           html::Cell::Html(Similarity(l.share_b), true),
           html::Cell::Html(Similarity(l.similarity), true),
           html::Cell::Text(RelationWords(l.relation))},
          ls.header));
    }
    s.append(html::TableEnd()).append("</section>\n");
  }

  std::string Finish(const store::ClusterReportTotals& t) {
    html::Page page("Clusters by bytes in common");
    page.Nav(links_, html::PageName::kClusters);
    std::string settings = "Two live documents are linked when they share at least ";
    settings.append(html::Count(options_.min_bytes)).append(" bytes of text, or at least ");
    settings.append(html::Fixed(options_.min_share * 100, 0)).append("% of the shorter one's text");
    settings.append(
        " (their content-defined chunks in common). A cluster is a set of documents "
        "joined by links. Chunks held by more than ");
    settings.append(html::Count(options_.max_chunk_docs));
    settings.append(" documents (a template's) link nothing; at most ");
    settings.append(html::Count(options_.max_pairs_per_doc));
    settings.append(" pairs per document of a partition are checked.");
    page.Paragraph(settings);
    page.Figures(
        {{"Clusters", html::Count(t.clusters),
          t.limited ? "listed (the limit stopped the report)" : "listed below"},
         {"Documents", html::Count(t.documents), "in these clusters"},
         {"Links", html::Count(t.links), "pairs with bytes in common"},
         {"Removable", html::Count(t.removable_bytes),
          BytesHint(t.removable_bytes) + ", freed by keeping one document of each"},
         {"Pairs checked", html::Count(t.pairs_checked), "bytes in common computed"},
         {"Pairs unchecked", html::Count(t.pairs_unchecked), "over the per-partition cap"}});
    if (t.limited) {
      page.Note("The report stopped at its limit of " + html::Count(options_.limit) +
                " clusters: the counts cover the partitions analysed so far.");
    }
    if (t.documents_without_chunks > 0 || t.chunks_too_common > 0) {
      page.Paragraph(html::Count(t.documents_without_chunks) +
                     " documents have no chunks and are never linked; " +
                     html::Count(t.chunks_too_common) + " chunks were too common to link.");
    }
    if (links_.enabled) {
      page.ParagraphHtml("The same report as " + ApiLink("json", "JSON") + " and " +
                         ApiLink("csv", "CSV") + ".");
    }
    page.Heading(2, "The clusters", "clusters");
    if (t.clusters == 0) {
      page.Paragraph("No two live documents share enough text to be linked.");
    } else {
      chart_.title = "Bytes freed by keeping one document per cluster";
      chart_.description = chart_.bars.size() < t.clusters
                               ? "The first 20 clusters, in the report's order."
                               : "One bar per cluster, in the report's order.";
      chart_.axis = "Removable bytes";
      page.AddChart(chart_);
      html::Table table;
      table.caption = "Clusters, largest partition first (each links to its section)";
      table.header = {"Cluster", "Type",       "Documents", "Links",
                      "Bytes",   "Similarity", "Keep",      "Removable bytes"};
      table.numeric = {false, false, true, true, true, true, true, true};
      page.Raw(html::TableStart(table) + rows_ + html::TableEnd());
      page.Heading(2, "Each cluster", "each");
      page.Raw(sections_);
    }
    page.Paragraph(
        "Similarity is the share of the two texts together that they share (1: the same text); "
        "a document's share is the part of its own text found in the other. docs/REPORTS.md "
        "defines every column.");
    return page.Finish();
  }

 private:
  std::string ApiLink(std::string_view format, std::string_view text) const {
    std::string path = "reports/clusters?format=";
    path.append(format);
    path.append("&limit=").append(std::to_string(std::min<uint64_t>(options_.limit, 10000)));
    path.append("&max_urls=").append(std::to_string(std::min<size_t>(options_.max_urls, 1000)));
    path.append("&min_bytes=").append(std::to_string(options_.min_bytes));
    path.append("&min_share=").append(html::Fixed(options_.min_share, 4));
    path.append("&max_chunk_docs=").append(std::to_string(options_.max_chunk_docs));
    path.append("&max_pairs_per_doc=").append(std::to_string(options_.max_pairs_per_doc));
    std::string a = "<a href=\"";
    a.append(html::Escape(links_.api + path))
        .append("\">")
        .append(html::Escape(text))
        .append("</a>");
    return a;
  }

  const store::ClusterReportOptions& options_;
  const html::Links& links_;
  std::string rows_;
  std::string sections_;
  html::BarChart chart_;
};

}  // namespace

std::optional<RepoReportFormat> RepoReportFormatFromName(std::string_view format) {
  if (format == "json") return RepoReportFormat::kJson;
  if (format == "csv") return RepoReportFormat::kCsv;
  if (format == "html") return RepoReportFormat::kHtml;
  return std::nullopt;
}

Status WriteIdenticalReport(const store::Store& store, const store::IdenticalReportOptions& options,
                            RepoReportFormat format, const ReportSink& sink,
                            const store::RepoReportProgress& progress, const html::Links& links) {
  if (format == RepoReportFormat::kHtml) {
    IdenticalHtml page(options, links, sink);
    SHINGLED_RETURN_IF_ERROR(store.StreamIdenticalReport(
        options, [&](const store::IdenticalReportTotals& t) { return page.Totals(t); },
        [&](const store::IdenticalReportSet& s) { return page.Set(s); }, progress));
    return page.Finish();
  }
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
                          const store::RepoReportProgress& progress, const html::Links& links) {
  if (format == RepoReportFormat::kHtml) {
    ClusterHtml page(options, links);
    store::ClusterReportTotals totals;
    SHINGLED_RETURN_IF_ERROR(store.StreamClusterReport(
        options,
        [&](const store::ClusterReportCluster& c) {
          page.Cluster(c);
          return OkStatus();
        },
        &totals, progress));
    return sink(page.Finish(totals));
  }
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
