#include "report/store_pages.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

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

}  // namespace

StatusOr<std::string> UrlTimelineHtml(const store::Store& store, std::string_view url,
                                      const html::Links& links) {
  StatusOr<std::vector<store::UrlVersion>> history = store.History(url);
  if (!history.ok()) return history.status();
  StatusOr<store::LostAndFound> lost = store.Lost(url);
  if (!lost.ok()) return lost.status();
  StatusOr<std::vector<store::SweepInfo>> sweeps = store.Sweeps();
  if (!sweeps.ok()) return sweeps.status();
  std::unordered_map<store::SweepId, std::string> sweep_names;
  for (const store::SweepInfo& s : *sweeps) sweep_names[s.id] = s.name;
  auto sweep_name = [&](store::SweepId id) {
    auto it = sweep_names.find(id);
    return it == sweep_names.end() ? "#" + std::to_string(id) : it->second;
  };

  html::Page page("The history of one URL");
  page.Nav(links, html::PageName::kUrl);
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
  t.numeric = {false, false, false, false, true, true, true};
  html::BarChart chart;
  chart.title = "How much each new content resembles the one before";
  chart.description =
      "One bar per content change: 1 means the same shingles, 0 nothing in common (estimated "
      "from the min-wise sketches).";
  chart.axis = "Resemblance to the previous content";
  chart.scale_max = 1;
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
                      html::Cell::Html("<span class=\"nowrap\">" +
                                       html::Escape(sweep_name(v.sweep)) + "</span>"),
                      html::Cell{html::Escape(verdict), false, true},
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
    page.ParagraphHtml("Best answer: <strong>" + links.Timeline(lost->best->url) +
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
      c.rows.push_back({html::Cell{links.Timeline(s.url), false, true},
                        html::Cell::Html(html::Fixed(s.resemblance, 2), true),
                        html::Cell::Html(html::Fixed(s.containment, 2), true),
                        html::Cell::Text(Day(s.last_seen)), html::Cell::Text(s.why)});
    }
    page.AddTable(c);
  }
  return page.Finish();
}

StatusOr<std::string> ReportIndexHtml(const store::Store& store, const html::Links& links) {
  StatusOr<store::StoreStats> stats = store.Stats();
  if (!stats.ok()) return stats.status();
  StatusOr<std::vector<store::SweepInfo>> sweeps = store.Sweeps();
  if (!sweeps.ok()) return sweeps.status();
  std::stable_sort(sweeps->begin(), sweeps->end(),
                   [](const store::SweepInfo& a, const store::SweepInfo& b) {
                     return a.start != b.start ? a.start < b.start : a.id < b.id;
                   });
  uint64_t with_pages = 0;
  for (const store::SweepInfo& s : *sweeps) with_pages += s.pages > 0 ? 1 : 0;

  html::Page page("Reports");
  page.Nav(links, html::PageName::kIndex);
  page.Paragraph(
      "What the store knows, as pages to read: what changed between sweeps and over all of them, "
      "which contents are held by several URLs, which documents share much of their text, and "
      "the history of one URL.");
  page.Figures({{"Documents", html::Count(stats->documents), "distinct contents stored"},
                {"URLs", html::Count(stats->urls), "every URL ever stored"},
                {"Sweeps", html::Count(sweeps->size()),
                 html::Count(with_pages) + " with pages, open and closed"}});

  page.Heading(2, "Changes between sweeps", "sweeps");
  if (with_pages < 2) {
    page.Paragraph("A change report compares two sweeps with pages; the store has " +
                   html::Count(with_pages) +
                   ". Open sweeps with POST /v1/sweeps or `shingled ingest --sweep`.");
  } else {
    page.ParagraphHtml(links.A("changes", "Changes between the last two sweeps with pages") + ", " +
                       links.A("history", "the timeline over all sweeps") +
                       ", or pick a sweep below: each links to its changes since the sweep with "
                       "pages before it.");
  }
  if (!sweeps->empty()) {
    html::Table t;
    const size_t shown = std::min(sweeps->size(), kHtmlSweeps);
    t.caption = shown == sweeps->size() ? "Sweeps, oldest first"
                                        : "The newest " + html::Count(shown) + " of " +
                                              html::Count(sweeps->size()) + " sweeps, oldest first";
    t.header = {"Sweep", "Started", "Closed", "Pages", "New documents", "Gone", "Changes"};
    t.numeric = {false, false, false, true, true, true, false};
    const store::SweepInfo* previous = nullptr;  // the last sweep with pages before this one
    for (size_t i = 0; i < sweeps->size(); ++i) {
      const store::SweepInfo& s = (*sweeps)[i];
      html::Cell changes = html::Cell::Text("first sweep with pages");
      if (s.pages == 0) {
        changes = html::Cell::Text("empty: compared with nothing");
      } else if (previous != nullptr) {
        changes = html::Cell::Html(links.A(
            "changes?from=" + html::QueryValue(previous->name) + "&to=" + html::QueryValue(s.name),
            "since " + previous->name));
      }
      if (s.pages > 0) previous = &s;
      if (i < sweeps->size() - shown) continue;
      t.rows.push_back({html::Cell::Text(s.name), html::Cell::Text(Minute(s.start)),
                        html::Cell::Text(s.open ? std::string("open") : Minute(s.end)),
                        html::Cell::Number(s.pages), html::Cell::Number(s.new_docs),
                        html::Cell::Number(s.gone), std::move(changes)});
    }
    page.AddTable(t);
  }

  page.Heading(2, "Copies and shared text", "repository");
  page.ParagraphHtml(links.A("identical", "Identical content") +
                     ": the contents held by several live URLs, largest waste first. " +
                     links.A("clusters", "Clusters by bytes in common") +
                     ": documents that share much of their text, and which one to keep.");

  page.Heading(2, "One URL", "url");
  page.Raw("<form method=\"get\" action=\"" + html::Escape(links.Page("url")) +
           "\"><p><label for=\"url-input\">URL</label> <input id=\"url-input\" "
           "name=\"url\" type=\"url\" required size=\"60\" style=\"max-width:100%\" "
           "placeholder=\"https://example.org/page\"> "
           "<button type=\"submit\">Show its timeline</button></p></form>");
  page.Paragraph(
      "The timeline lists the URL's versions with the resemblance between them, and "
      "where its content is now when the URL died or moved.");
  return page.Finish();
}

}  // namespace shingled::report
