#include "report/store_pages.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "dedup/estimate.h"
#include "report/changes.h"
#include "report/html.h"

namespace shingled::report {
namespace {

std::string Day(int64_t t) { return t == 0 ? std::string("–") : IsoTime(t).substr(0, 10); }
// "2026-01-01 00:00" (UTC).
std::string Minute(int64_t t) {
  std::string iso = IsoTime(t);
  return iso.substr(0, 10) + " " + iso.substr(11, 5);
}

html::Cell Urls(const std::vector<std::string>& urls, uint64_t count) {
  std::string cell;
  for (const std::string& u : urls) {
    if (!cell.empty()) cell.append("<br>");
    cell.append(html::Escape(u));
  }
  if (count > urls.size()) {
    cell.append("<br>… and ").append(html::Count(count - urls.size())).append(" more");
  }
  html::Cell c = html::Cell::Html(std::move(cell));
  c.long_text = true;
  return c;
}

}  // namespace

StatusOr<std::string> ClustersHtml(const store::Store& store, size_t limit) {
  if (limit < 1 || limit > 1000) return InvalidArgumentError("limit must be in 1..1000");
  store::ClusterListOptions cluster_options;
  cluster_options.limit = limit;
  StatusOr<store::ClusterListPage> clusters = store.ListClusters(cluster_options);
  if (!clusters.ok()) return clusters.status();
  store::IdenticalSetOptions identical_options;
  identical_options.limit = limit;
  identical_options.max_urls = 5;
  StatusOr<store::IdenticalSetPage> identical = store.ListIdenticalSets(identical_options);
  if (!identical.ok()) return identical.status();
  StatusOr<store::StoreStats> stats = store.Stats();
  if (!stats.ok()) return stats.status();

  html::Page page("Clusters and identical pages");
  page.Paragraph(
      "A cluster is a set of documents the store found to be the same page or near copies of it "
      "(exact or near-duplicate relations); an identical set is a group of live URLs that show "
      "the same content now.");
  page.Figures({{"Documents", html::Count(stats->documents), "distinct contents stored"},
                {"URLs", html::Count(stats->urls), "every URL ever stored"},
                {"Clusters", html::Count(stats->clusters), "groups of two or more documents"},
                {"Largest cluster", html::Count(stats->largest_cluster), "documents"}});

  page.Heading(2, "Largest clusters", "clusters");
  if (clusters->clusters.empty()) {
    page.Paragraph("No two documents are clustered yet.");
  } else {
    html::BarChart chart;
    chart.title = "Documents in the largest clusters";
    chart.description = "One bar per cluster, the largest first (at most 20 shown).";
    for (size_t i = 0; i < std::min<size_t>(20, clusters->clusters.size()); ++i) {
      const store::ClusterSummary& c = clusters->clusters[i];
      chart.bars.push_back({"cluster " + std::to_string(c.id), static_cast<double>(c.size),
                            html::Count(c.size) + " documents", 1});
    }
    page.AddChart(chart);
    html::Table t;
    t.caption = "The " + html::Count(clusters->clusters.size()) + " largest clusters";
    t.header = {"Cluster", "Documents", "Live URLs", "First seen", "Last seen", "Some live URLs"};
    t.numeric = {false, true, true};
    for (const store::ClusterSummary& c : clusters->clusters) {
      t.rows.push_back({html::Cell::Text(std::to_string(c.id)), html::Cell::Number(c.size),
                        html::Cell::Number(c.live_urls), html::Cell::Text(Day(c.first_seen)),
                        html::Cell::Text(Day(c.last_seen)), Urls(c.sample_urls, c.live_urls)});
    }
    page.AddTable(t);
  }

  page.Heading(2, "Identical sets", "identical");
  if (identical->sets.empty()) {
    page.Paragraph("No two live URLs show the same content.");
  } else {
    html::Table t;
    t.caption = "Live URLs that show the same content, most URLs first";
    t.header = {"Document", "URLs", "Bytes", "The URLs"};
    t.numeric = {false, true, true};
    for (const store::IdenticalSet& s : identical->sets) {
      t.rows.push_back({html::Cell::Text(std::to_string(s.representative)),
                        html::Cell::Number(s.url_count), html::Cell::Number(s.bytes),
                        Urls(s.urls, s.url_count)});
    }
    page.AddTable(t);
  }
  return page.Finish();
}

StatusOr<std::string> UrlTimelineHtml(const store::Store& store, std::string_view url) {
  StatusOr<std::vector<store::UrlVersion>> history = store.History(url);
  if (!history.ok()) return history.status();
  StatusOr<store::LostAndFound> lost = store.Lost(url);
  if (!lost.ok()) return lost.status();

  html::Page page("The history of one URL");
  page.ParagraphHtml("<strong>" + html::Escape(url) + "</strong>");
  page.Figures({{"Versions", html::Count(history->size()), "observations stored"},
                {"Now", std::string(store::LostStatusName(lost->status)), "lost and found"},
                {"Last seen live", Day(lost->last_seen_live), "its last version with content"}});

  // The newest kHtmlVersions versions, each with the resemblance of its content to the content
  // before it.
  const size_t first = history->size() > kHtmlVersions ? history->size() - kHtmlVersions : 0;
  html::Table t;
  t.caption = "Versions, oldest first";
  t.header = {"#",
              "Date (UTC)",
              "Sweep",
              "Verdict",
              "HTTP status",
              "Document",
              "Resemblance to the previous content"};
  t.numeric = {false, false, true, false, true, true, true};
  html::BarChart chart;
  chart.title = "How much each new content resembles the one before";
  chart.description =
      "One bar per content change: 1 means the same shingles, 0 nothing in common (estimated "
      "from the min-wise sketches).";
  std::optional<dedup::Sketch> previous;
  store::DocId previous_doc = 0;
  for (size_t i = 0; i < history->size(); ++i) {
    const store::UrlVersion& v = (*history)[i];
    std::string resemblance = "–";
    if (v.doc != 0 && v.doc != previous_doc) {
      StatusOr<store::DocumentInfo> doc = store.Document(v.doc);
      if (!doc.ok()) return doc.status();
      if (previous) {
        const double r = dedup::ResemblanceFromMinhashes(*previous, doc->sketch);
        resemblance = html::Fixed(r, 2);
        if (i >= first) {
          chart.bars.push_back({"#" + std::to_string(v.seq) + " " + Day(v.date), r,
                                html::Fixed(r, 2), r >= 0.8 ? 1 : (r >= 0.5 ? 2 : 3)});
        }
      }
      previous = std::move(doc->sketch);
      previous_doc = v.doc;
    } else if (v.doc != 0) {
      resemblance = "1.00 (same document)";
    }
    if (i < first) continue;
    std::string verdict(store::VerdictName(v.verdict));
    if (!v.redirect_target.empty()) verdict.append(" to ").append(v.redirect_target);
    t.rows.push_back({html::Cell::Text(std::to_string(v.seq)),
                      html::Cell::Html(html::Escape(Minute(v.date)), true),
                      html::Cell::Number(v.sweep), html::Cell{html::Escape(verdict), false, true},
                      html::Cell::Number(static_cast<uint64_t>(v.http_status)),
                      v.doc == 0 ? html::Cell::Text("–") : html::Cell::Number(v.doc),
                      html::Cell::Html(html::Escape(resemblance), true)});
  }
  if (!chart.bars.empty()) page.AddChart(chart);
  page.Heading(2, "Versions", "versions");
  if (first > 0) {
    page.Note("The newest " + html::Count(kHtmlVersions) + " of " + html::Count(history->size()) +
              " versions are shown.");
  }
  page.AddTable(t);

  page.Heading(2, "Where its content is now", "lost");
  if (lost->best) {
    page.ParagraphHtml("Best answer: <strong>" + html::Escape(lost->best->url) +
                       "</strong>: " + html::Escape(lost->best->why) + ".");
  } else {
    page.Paragraph(lost->status == store::LostStatus::kAlive ? "The URL is live: nothing was lost."
                                                             : "No successor was found.");
  }
  if (!lost->candidates.empty()) {
    html::Table c;
    c.caption = "Other candidates, ranked";
    c.header = {"URL", "Resemblance", "Containment", "Last seen", "Why"};
    c.numeric = {false, true, true};
    for (const store::Successor& s : lost->candidates) {
      c.rows.push_back({html::Cell::Url(s.url),
                        html::Cell::Html(html::Fixed(s.resemblance, 2), true),
                        html::Cell::Html(html::Fixed(s.containment, 2), true),
                        html::Cell::Text(Day(s.last_seen)), html::Cell::Text(s.why)});
    }
    page.AddTable(c);
  }
  return page.Finish();
}

namespace {

// `text` percent-encoded for a query string value: everything but RFC 3986's unreserved bytes.
std::string QueryValue(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string Link(std::string_view href, std::string_view text) {
  std::string a = "<a href=\"";
  a.append(html::Escape(href)).append("\">").append(html::Escape(text)).append("</a>");
  return a;
}

}  // namespace

StatusOr<std::string> ReportIndexHtml(const store::Store& store, std::string_view base) {
  const std::string prefix(base);
  StatusOr<store::StoreStats> stats = store.Stats();
  if (!stats.ok()) return stats.status();
  StatusOr<std::vector<store::SweepInfo>> sweeps = store.Sweeps();
  if (!sweeps.ok()) return sweeps.status();
  std::stable_sort(
      sweeps->begin(), sweeps->end(),
      [](const store::SweepInfo& a, const store::SweepInfo& b) { return a.start < b.start; });

  html::Page page("Reports");
  page.Paragraph(
      "What the store knows, as pages to read: what changed between sweeps, which "
      "pages are copies of which, and the history of one URL.");
  page.Figures({{"Documents", html::Count(stats->documents), "distinct contents stored"},
                {"URLs", html::Count(stats->urls), "every URL ever stored"},
                {"Sweeps", html::Count(sweeps->size()), "open and closed"},
                {"Clusters", html::Count(stats->clusters), "groups of two or more documents"}});

  page.Heading(2, "Clusters and identical pages", "clusters");
  page.ParagraphHtml(Link(prefix + "clusters", "The largest clusters and identical sets") +
                     ": near copies grouped, and live URLs that show the same content.");

  page.Heading(2, "Changes between sweeps", "sweeps");
  if (sweeps->size() < 2) {
    page.Paragraph("A change report compares two sweeps; the store has " +
                   html::Count(sweeps->size()) +
                   ". Open sweeps with POST /v1/sweeps or `shingled "
                   "ingest --sweep`.");
  } else {
    page.ParagraphHtml(Link(prefix + "changes", "Changes between the last two sweeps") +
                       ", or pick a sweep below: each links to its changes since the one before.");
  }
  if (!sweeps->empty()) {
    html::Table t;
    const size_t shown = std::min(sweeps->size(), kHtmlSweeps);
    t.caption = shown == sweeps->size() ? "Sweeps, oldest first"
                                        : "The newest " + html::Count(shown) + " of " +
                                              html::Count(sweeps->size()) + " sweeps, oldest first";
    t.header = {"Sweep", "Started", "Closed", "Pages", "New documents", "Gone", "Changes"};
    t.numeric = {false, false, false, true, true, true, false};
    for (size_t i = sweeps->size() - shown; i < sweeps->size(); ++i) {
      const store::SweepInfo& s = (*sweeps)[i];
      html::Cell changes = html::Cell::Text("first sweep");
      if (i > 0) {
        std::string href = prefix + "changes?from=";
        href.append(QueryValue((*sweeps)[i - 1].name)).append("&to=").append(QueryValue(s.name));
        changes = html::Cell::Html(Link(href, "since " + (*sweeps)[i - 1].name));
      }
      t.rows.push_back({html::Cell::Text(s.name), html::Cell::Text(Minute(s.start)),
                        html::Cell::Text(s.open ? std::string("open") : Minute(s.end)),
                        html::Cell::Number(s.pages), html::Cell::Number(s.new_docs),
                        html::Cell::Number(s.gone), std::move(changes)});
    }
    page.AddTable(t);
  }

  page.Heading(2, "One URL", "url");
  page.Raw("<form method=\"get\" action=\"" + html::Escape(prefix + "url") +
           "\"><p><label for=\"url\">URL</label> <input id=\"url\" "
           "name=\"url\" type=\"url\" required size=\"60\" style=\"max-width:100%\" "
           "placeholder=\"https://example.org/page\"> "
           "<button type=\"submit\">Show its timeline</button></p></form>");
  page.Paragraph(
      "The timeline lists the URL's versions with the resemblance between them, and "
      "where its content is now when the URL died or moved.");
  return page.Finish();
}

}  // namespace shingled::report
