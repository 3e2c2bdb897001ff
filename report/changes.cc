// The change report's renderings.
#include "report/changes.h"

#include <algorithm>
#include <ctime>

#include "base/iso_time.h"
#include "report/html.h"

namespace shingled::report {
namespace {

using store::ChangeCounts;
using store::ChangeKind;

constexpr ChangeKind kAllKinds[] = {
    ChangeKind::kUnchanged, ChangeKind::kChanged, ChangeKind::kMoved,   ChangeKind::kDied,
    ChangeKind::kNotSeen,   ChangeKind::kBorn,    ChangeKind::kMovedIn, ChangeKind::kNotLive};

// Each kind's colour in the charts (html.h's palette) and how the page words it.
int KindColour(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kUnchanged:
      return 6;
    case ChangeKind::kChanged:
      return 0;
    case ChangeKind::kMoved:
      return 2;
    case ChangeKind::kDied:
      return 3;
    case ChangeKind::kNotSeen:
      return 5;
    case ChangeKind::kBorn:
      return 1;
    case ChangeKind::kMovedIn:
      return 4;
    case ChangeKind::kNotLive:
      return 6;
  }
  return 0;
}

const char* KindLabel(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kUnchanged:
      return "Unchanged";
    case ChangeKind::kChanged:
      return "Changed";
    case ChangeKind::kMoved:
      return "Moved";
    case ChangeKind::kDied:
      return "Died";
    case ChangeKind::kNotSeen:
      return "Not seen";
    case ChangeKind::kBorn:
      return "Born";
    case ChangeKind::kMovedIn:
      return "New home of a move";
    case ChangeKind::kNotLive:
      return "Live in neither";
  }
  return "";
}

const char* KindHint(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kUnchanged:
      return "same content in both";
    case ChangeKind::kChanged:
      return "other content in the second";
    case ChangeKind::kMoved:
      return "content found at another URL";
    case ChangeKind::kDied:
      return "dead, gone or redirecting; content not found";
    case ChangeKind::kNotSeen:
      return "live before, not visited by the second sweep";
    case ChangeKind::kBorn:
      return "live only in the second";
    case ChangeKind::kMovedIn:
      return "live only in the second, holding moved content";
    case ChangeKind::kNotLive:
      return "versions in the sweeps, but no content in either";
  }
  return "";
}

Json SweepRef(const store::SweepInfo& s) {
  return Json{{"id", s.id},
              {"name", s.name},
              {"start", IsoTime(s.start)},
              {"end", s.open ? Json(nullptr) : Json(IsoTime(s.end))},
              {"open", s.open}};
}

Json BandsJson(const ChangeCounts& c) {
  Json bands = Json::object();
  for (int b = 0; b < store::kResemblanceBands; ++b) {
    bands[std::string(store::ResemblanceBandName(b))] = c.bands[b];
  }
  return bands;
}

Json BucketsJson(const std::vector<store::Bucket>& buckets, const char* unit) {
  Json out = Json::array();
  for (const store::Bucket& b : buckets) {
    out.push_back(Json{{"label", b.label},
                       {std::string("min_") + unit, b.lower},
                       {std::string("below_") + unit, b.upper == 0 ? Json(nullptr) : Json(b.upper)},
                       {"urls", b.count}});
  }
  return out;
}

std::string Name(const store::SweepInfo& s) { return s.name; }

// The link to the change report of a pair of sweeps.
std::string PairPage(const store::SweepInfo& from, const store::SweepInfo& to) {
  return "changes?from=" + html::QueryValue(from.name) + "&to=" + html::QueryValue(to.name);
}

// The link to the timeline of one host.
std::string HostHistoryPage(std::string_view host) {
  return "history?host=" + html::QueryValue(host);
}

std::string ApiA(const html::Links& links, const std::string& path, std::string_view text) {
  std::string a = "<a href=\"";
  a.append(html::Escape(links.api + path)).append("\">").append(html::Escape(text)).append("</a>");
  return a;
}

std::string Day(int64_t t) { return IsoTime(t).substr(0, 10); }

}  // namespace

std::string IsoTime(int64_t unix_seconds) { return FormatIsoTime(unix_seconds); }

// Sets the counts' members on the object `j`.
void AddCounts(Json* j, const ChangeCounts& c) {
  (*j)["urls"] = c.urls;
  for (ChangeKind k : kAllKinds) (*j)[std::string(store::ChangeKindName(k))] = c.Of(k);
  (*j)["moved_same_host"] = c.moved_same_host;
  (*j)["moved_other_host"] = c.moved_other_host;
  (*j)["moved_by_redirect"] = c.moved_by_redirect;
  (*j)["bands"] = BandsJson(c);
}

Json ChangeCountsJson(const ChangeCounts& c) {
  Json j = Json::object();
  AddCounts(&j, c);
  return j;
}

Json ChangeReportJson(const store::ChangeReport& report, const store::ChangeHistory* history) {
  Json j = Json::object();
  j["from"] = SweepRef(report.from);
  j["to"] = SweepRef(report.to);
  AddCounts(&j, report.total);
  Json hosts = Json::array();
  for (const store::HostChanges& h : report.hosts) {
    Json hj = Json{{"host", h.host}};
    AddCounts(&hj, h.counts);
    hosts.push_back(std::move(hj));
  }
  j["hosts"] = std::move(hosts);
  if (history != nullptr) {
    Json series = Json::array();
    for (const store::ChangeHistory::Interval& i : history->intervals) {
      Json ij = Json{{"from", SweepRef(i.from)}, {"to", SweepRef(i.to)}};
      AddCounts(&ij, i.counts);
      series.push_back(std::move(ij));
    }
    j["series"] = std::move(series);
    j["lifetimes"] = Json{{"dead", BucketsJson(history->lifetimes_dead, "days")},
                          {"alive", BucketsJson(history->lifetimes_alive, "days")}};
    j["changes_per_url"] = BucketsJson(history->changes_per_url, "changes");
    j["all_urls"] = history->urls;
    j["never_live"] = history->never_live;
  }
  return j;
}

Json ChangeRowJson(const store::ChangeRow& row) {
  Json j = Json{{"kind", std::string(store::ChangeKindName(row.kind))},
                {"url_id", row.url_id},
                {"url", row.url},
                {"from_doc", row.from_doc == 0 ? Json(nullptr) : Json(row.from_doc)},
                {"to_doc", row.to_doc == 0 ? Json(nullptr) : Json(row.to_doc)}};
  if (row.resemblance >= 0) j["resemblance"] = row.resemblance;
  if (row.kind == ChangeKind::kMoved) {
    j["new_url"] = row.new_url;
    j["new_doc"] = row.new_doc == 0 ? Json(nullptr) : Json(row.new_doc);
    j["evidence"] = row.evidence;
    if (row.containment >= 0) j["containment"] = row.containment;
    j["same_host"] = row.same_host;
  }
  return j;
}

Json ChangeListJson(const store::ChangeReport& pair, ChangeKind kind,
                    const store::ChangeList& list) {
  Json rows = Json::array();
  for (const store::ChangeRow& r : list.rows) rows.push_back(ChangeRowJson(r));
  return Json{{"from", SweepRef(pair.from)},
              {"to", SweepRef(pair.to)},
              {"list", std::string(store::ChangeKindName(kind))},
              {"rows", std::move(rows)},
              {"next_after", list.next_after == 0 ? Json(nullptr) : Json(list.next_after)}};
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string ChangeCsvHeader() {
  return "kind,url_id,url,from_doc,to_doc,resemblance,new_url,new_doc,evidence,containment,"
         "same_host\r\n";
}

std::string ChangeCsvLine(const store::ChangeRow& row) {
  auto id = [](uint64_t v) { return v == 0 ? std::string() : std::to_string(v); };
  auto number = [](double v) { return v < 0 ? std::string() : html::Fixed(v, 4); };
  const bool moved = row.kind == ChangeKind::kMoved;
  std::string out(store::ChangeKindName(row.kind));
  out.append(",").append(std::to_string(row.url_id));
  out.append(",").append(CsvField(row.url));
  out.append(",").append(id(row.from_doc));
  out.append(",").append(id(row.to_doc));
  out.append(",").append(number(row.resemblance));
  out.append(",").append(CsvField(row.new_url));
  out.append(",").append(id(row.new_doc));
  out.append(",").append(row.evidence);
  out.append(",").append(number(row.containment));
  out.append(",").append(moved ? (row.same_host ? "true" : "false") : "");
  out.append("\r\n");
  return out;
}

std::string HostsCsv(const store::ChangeReport& report) {
  std::string out = "host,urls";
  for (ChangeKind k : kAllKinds) out.append(",").append(store::ChangeKindName(k));
  out.append(",moved_same_host,moved_other_host,moved_by_redirect");
  for (int b = 0; b < store::kResemblanceBands; ++b) {
    out.append(",changed_").append(store::ResemblanceBandName(b));
  }
  out.append("\r\n");
  auto line = [&](std::string_view host, const ChangeCounts& c) {
    out.append(CsvField(host)).append(",").append(std::to_string(c.urls));
    for (ChangeKind k : kAllKinds) out.append(",").append(std::to_string(c.Of(k)));
    out.append(",").append(std::to_string(c.moved_same_host));
    out.append(",").append(std::to_string(c.moved_other_host));
    out.append(",").append(std::to_string(c.moved_by_redirect));
    for (uint64_t n : c.bands) out.append(",").append(std::to_string(n));
    out.append("\r\n");
  };
  line("(all)", report.total);
  for (const store::HostChanges& h : report.hosts) line(h.host, h.counts);
  return out;
}

std::string ChangeReportHtml(const store::ChangeReport& report, const store::ChangeHistory* history,
                             const std::vector<store::ChangeRow>& movers,
                             const html::Links& links) {
  const ChangeCounts& c = report.total;
  std::string title = "Changes from sweep ";
  title.append(report.from.name).append(" to sweep ").append(report.to.name);
  html::Page page(title);
  page.Nav(links, html::PageName::kChanges);
  std::string when = "Sweep ";
  when.append(report.from.name).append(" started ").append(Day(report.from.start));
  when.append("; sweep ").append(report.to.name).append(" started ").append(Day(report.to.start));
  when.append(report.to.open ? " and is still open." : ".");
  when.append(" Each URL is judged by its last version in each sweep.");
  page.Paragraph(when);
  if (report.to.open && c.not_seen > 0) {
    page.Note("Sweep " + report.to.name + " is still open: the " + html::Count(c.not_seen) +
              " URLs counted \"not seen\" may yet be visited. They are not counted as died.");
  } else if (c.not_seen > 0) {
    page.Note(html::Count(c.not_seen) + " URLs live in " + report.from.name +
              " were not visited by " + report.to.name +
              " (outside its scope): they are counted \"not seen\", not died.");
  }

  page.Heading(2, "Summary", "summary");
  std::vector<html::Page::Figure> figures;
  figures.push_back({"URLs", html::Count(c.urls), "with a version in either sweep"});
  for (ChangeKind k : kAllKinds) {
    if (c.Of(k) == 0 && (k == ChangeKind::kNotLive || k == ChangeKind::kMovedIn)) continue;
    figures.push_back({KindLabel(k), html::Count(c.Of(k)),
                       html::Percent(c.Of(k), c.urls) + " \xC2\xB7 " + KindHint(k)});
  }
  page.Figures(figures);
  if (links.enabled) {
    // The URLs behind each count, from the API: the same walk as the counts.
    const std::string pair = "reports/changes?from=" + html::QueryValue(report.from.name) +
                             "&to=" + html::QueryValue(report.to.name);
    std::string lists = "The URLs behind each count, as CSV: ";
    bool first = true;
    for (ChangeKind k : kAllKinds) {
      if (c.Of(k) == 0) continue;
      if (!first) lists.append(", ");
      first = false;
      lists.append(ApiA(links,
                        pair + "&list=" + std::string(store::ChangeKindName(k)) + "&format=csv",
                        KindLabel(k)));
    }
    lists.append(". This report as ")
        .append(ApiA(links, pair, "JSON"))
        .append(", and its per-host counts as ")
        .append(ApiA(links, pair + "&format=csv", "CSV"))
        .append(".");
    page.ParagraphHtml(lists);
  }
  html::BarChart counts;
  counts.axis = "URLs";
  counts.title = "URLs by what they did";
  counts.description = "Each URL with a version in " + report.from.name + " or " + report.to.name +
                       " is counted once.";
  for (ChangeKind k : kAllKinds) {
    counts.bars.push_back(html::Bar{
        KindLabel(k), static_cast<double>(c.Of(k)),
        html::Count(c.Of(k)) + " (" + html::Percent(c.Of(k), c.urls) + ")", KindColour(k)});
  }
  page.AddChart(counts);

  page.Heading(2, "How much changed pages changed", "bands");
  page.Paragraph(
      "Resemblance between the two versions of each changed URL, estimated from their "
      "min-wise sketches: 1 means the same shingles, 0 nothing in common.");
  html::BarChart bands;
  bands.title = "Changed URLs by resemblance";
  bands.description = html::Count(c.changed) + " changed URLs.";
  bands.axis = "Changed URLs";
  const char* band_words[] = {"0.95 or more (cosmetic)", "0.8 to 0.95 (small edits)",
                              "0.5 to 0.8 (substantial)", "under 0.5 (rewritten)"};
  for (int b = 0; b < store::kResemblanceBands; ++b) {
    bands.bars.push_back(
        html::Bar{band_words[b], static_cast<double>(c.bands[b]),
                  html::Count(c.bands[b]) + " (" + html::Percent(c.bands[b], c.changed) + ")", b});
  }
  page.AddChart(bands);

  page.Heading(2, "Moves", "moves");
  page.Figures(
      {{"Moved", html::Count(c.moved), "content found at another URL"},
       {"Within a host", html::Count(c.moved_same_host), html::Percent(c.moved_same_host, c.moved)},
       {"Across hosts", html::Count(c.moved_other_host),
        html::Percent(c.moved_other_host, c.moved)},
       {"By redirect", html::Count(c.moved_by_redirect), "the old URL redirects to the new"}});
  if (movers.empty()) {
    page.Paragraph("No URL moved.");
  } else {
    html::Table t;
    t.caption = "Moved URLs";
    if (movers.size() < c.moved) {
      t.caption.append(" (the first ").append(html::Count(movers.size())).append(" of ");
      t.caption.append(html::Count(c.moved)).append(", in URL id order; the CSV has them all)");
    }
    t.header = {"Old URL (its timeline)", "New URL (its timeline)", "Evidence", "Resemblance",
                "Host"};
    t.numeric = {false, false, false, true, false};
    for (const store::ChangeRow& m : movers) {
      std::string evidence = m.evidence;
      std::replace(evidence.begin(), evidence.end(), '_', ' ');
      t.rows.push_back(
          {html::Cell{links.Timeline(m.url), false, true},
           html::Cell{links.Timeline(m.new_url), false, true},
           html::Cell::Html("<span class=\"nowrap\">" + html::Escape(evidence) + "</span>"),
           m.resemblance >= 0 ? html::Cell{html::Fixed(m.resemblance, 2), true, false}
                              : html::Cell::Text("\xE2\x80\x93"),
           html::Cell::Text(m.same_host ? "same" : "other")});
    }
    page.AddTable(t);
  }

  page.Heading(2, "Per host", "hosts");
  {
    std::vector<const store::HostChanges*> hosts;
    for (const store::HostChanges& h : report.hosts) hosts.push_back(&h);
    std::stable_sort(hosts.begin(), hosts.end(),
                     [](const auto* a, const auto* b) { return a->counts.urls > b->counts.urls; });
    html::Table t;
    t.caption = links.enabled ? "Counts per host (each links to its changes over all sweeps)"
                              : "Counts per host";
    if (hosts.size() > kHtmlHosts) {
      t.caption.append(" (the ")
          .append(html::Count(kHtmlHosts))
          .append(" hosts with most URLs of ");
      t.caption.append(html::Count(hosts.size())).append(")");
      hosts.resize(kHtmlHosts);
    }
    t.header = {"Host", "URLs",     "Unchanged", "Changed",  "Moved",
                "Died", "Not seen", "Born",      "New homes"};
    t.numeric = {false, true, true, true, true, true, true, true, true};
    for (const store::HostChanges* h : hosts) {
      const ChangeCounts& hc = h->counts;
      t.rows.push_back(
          {html::Cell{links.A(HostHistoryPage(h->host), h->host.empty() ? "(no host)" : h->host),
                      false, true},
           html::Cell::Number(hc.urls), html::Cell::Number(hc.unchanged),
           html::Cell::Number(hc.changed), html::Cell::Number(hc.moved),
           html::Cell::Number(hc.died), html::Cell::Number(hc.not_seen),
           html::Cell::Number(hc.born), html::Cell::Number(hc.moved_in)});
    }
    page.AddTable(t);
  }

  if (history != nullptr) {
    page.Heading(2, "Over all sweeps, not only this pair", "series");
    if (history->intervals.empty()) {
      page.Paragraph(
          "The store has fewer than two sweeps with pages: there is no interval to show.");
    } else {
      page.ParagraphHtml(
          html::Escape("The counts of each pair of consecutive sweeps that hold pages (empty "
                       "sweeps are left out); when this report compares two consecutive sweeps, "
                       "its row is marked and repeats the summary's counts. ") +
          links.A("history", "The timeline over all sweeps") +
          html::Escape(" draws them as one chart."));
      html::Table t;
      t.caption = "Counts per interval";
      t.header = {"Interval", "URLs", "Unchanged", "Changed",   "Changed <0.8",
                  "Moved",    "Died", "Born",      "New homes", "Not seen"};
      t.numeric = {false, true, true, true, true, true, true, true, true, true};
      for (const store::ChangeHistory::Interval& i : history->intervals) {
        std::string label = Name(i.from) + " \xE2\x86\x92 " + Name(i.to);
        const bool this_pair = i.from.id == report.from.id && i.to.id == report.to.id;
        std::string cell = links.A(PairPage(i.from, i.to), label);
        if (this_pair) cell = "<strong>" + cell + " (this report)</strong>";
        const ChangeCounts& ic = i.counts;
        t.rows.push_back(
            {html::Cell::Html(cell), html::Cell::Number(ic.urls), html::Cell::Number(ic.unchanged),
             html::Cell::Number(ic.changed), html::Cell::Number(ic.bands[2] + ic.bands[3]),
             html::Cell::Number(ic.moved), html::Cell::Number(ic.died), html::Cell::Number(ic.born),
             html::Cell::Number(ic.moved_in), html::Cell::Number(ic.not_seen)});
      }
      page.AddTable(t);
    }
    page.Heading(3, "How long URLs live, over all sweeps", "lifetimes");
    page.Paragraph(
        "Over every version of every URL, not only this pair: from a URL's first live version to "
        "the version that ended its last live stretch (the URL is no longer live: it died, or "
        "its content moved away, in any interval), or to its last live version (still alive: a "
        "lower bound). " +
        html::Count(history->never_live) + " URLs never had a live version.");
    for (int dead = 1; dead >= 0; --dead) {
      const std::vector<store::Bucket>& buckets =
          dead ? history->lifetimes_dead : history->lifetimes_alive;
      uint64_t total = 0;
      for (const store::Bucket& b : buckets) total += b.count;
      html::BarChart chart;
      chart.title = dead ? "Lifetimes of URLs no longer live" : "Age of URLs still alive";
      chart.description =
          html::Count(total) + (dead ? " URLs no longer live, over all sweeps (died or moved away)."
                                     : " URLs still alive, over all sweeps.");
      chart.axis = "URLs";
      for (const store::Bucket& b : buckets) {
        chart.bars.push_back(html::Bar{
            b.label, static_cast<double>(b.count),
            html::Count(b.count) + " (" + html::Percent(b.count, total) + ")", dead ? 3 : 2});
      }
      page.AddChart(chart);
    }
    page.Heading(3, "Changes per URL, over all sweeps", "changes-per-url");
    uint64_t total = 0;
    for (const store::Bucket& b : history->changes_per_url) total += b.count;
    html::BarChart chart;
    chart.title = "URLs by number of content changes";
    chart.description =
        "Over all versions of " + html::Count(total) + " URLs that were live at least once.";
    chart.axis = "URLs";
    for (const store::Bucket& b : history->changes_per_url) {
      chart.bars.push_back(html::Bar{
          b.label + (b.label == "1" ? " change" : " changes"), static_cast<double>(b.count),
          html::Count(b.count) + " (" + html::Percent(b.count, total) + ")", 0});
    }
    page.AddChart(chart);
  }

  page.Heading(2, "What the counts mean", "definitions");
  std::string dl = "<dl>";
  for (ChangeKind k : kAllKinds) {
    dl.append("<dt>")
        .append(html::Escape(KindLabel(k)))
        .append(" (")
        .append(store::ChangeKindName(k))
        .append(")</dt><dd>")
        .append(html::Escape(KindHint(k)))
        .append(".</dd>");
  }
  dl.append("</dl>");
  page.Raw(dl);
  page.Paragraph(
      "A URL is live in a sweep when its last version there has content (a failed "
      "fetch keeps the content before it). docs/REPORTS.md defines each count in full.");
  return page.Finish();
}

Json HistoryJson(const store::ChangeHistory& history, const std::string* host) {
  Json sweeps = Json::array();
  for (size_t i = 0; i < history.intervals.size(); ++i) {
    if (i == 0) sweeps.push_back(SweepRef(history.intervals[i].from));
    sweeps.push_back(SweepRef(history.intervals[i].to));
  }
  Json series = Json::array();
  for (const store::ChangeHistory::Interval& i : history.intervals) {
    Json ij = Json{{"from", SweepRef(i.from)}, {"to", SweepRef(i.to)}};
    AddCounts(&ij, i.counts);
    series.push_back(std::move(ij));
  }
  Json j = Json::object();
  if (host != nullptr) j["host"] = *host;
  j["sweeps"] = std::move(sweeps);
  j["series"] = std::move(series);
  return j;
}

std::string HistoryHtml(const store::ChangeHistory& history, const html::Links& links,
                        const std::string* host) {
  std::string title = "Changes over all sweeps";
  if (host != nullptr) title.append(" on ").append(host->empty() ? "URLs without a host" : *host);
  html::Page page(title);
  page.Nav(links, html::PageName::kHistory);
  page.Paragraph(
      "For each pair of consecutive sweeps that hold pages (empty sweeps are left out), what its "
      "URLs did: how many pages changed and by how much, moved, were born and died. Each column "
      "and each row links to that pair's change report.");
  if (host != nullptr) {
    page.ParagraphHtml(html::Escape("Only the URLs of this host: a move counts at the old URL's "
                                    "host, its new home at the new one's. ") +
                       links.A("history", "All hosts") + ".");
  }
  if (history.intervals.empty()) {
    page.Paragraph("The store has fewer than two sweeps with pages: there is no interval to show.");
    return page.Finish();
  }
  if (links.enabled) {
    page.ParagraphHtml(
        "The same series as " +
        ApiA(links, host == nullptr ? "reports/history" : "reports/" + HostHistoryPage(*host),
             "JSON") +
        ".");
  }
  // The changed bands from rewritten to cosmetic, then the moves, births and deaths.
  struct Part {
    const char* name;
    int colour;
  };
  // Colours as on the pair's page (moved green, born orange, died vermillion), the changed bands
  // in shades of its blue, darkest for the most rewritten.
  const Part parts[] = {{"Changed, resemblance under 0.5", 7},
                        {"Changed, 0.5 to 0.8", 0},
                        {"Changed, 0.8 to 0.95", 5},
                        {"Changed, 0.95 or more", 8},
                        {"Moved", 2},
                        {"Born or new home", 1},
                        {"Died", 3}};
  html::ColumnChart chart;
  chart.title = "What URLs did between consecutive sweeps";
  chart.description =
      "One column per pair of sweeps, named by the later sweep; unchanged and not seen URLs are "
      "left out of the columns (the table has them). Select a column for that pair's report.";
  chart.axis = "URLs";
  for (const Part& p : parts) {
    chart.legend.push_back(p.name);
    chart.legend_colours.push_back(p.colour);
  }
  html::Table t;
  t.caption = "Counts per interval";
  // The bands' headers hold non-breaking hyphens: "0.95-" over "1" reads as another number.
  t.header = {"Interval",
              "URLs",
              "Unchanged",
              "Changed",
              "0.95\xE2\x80\x91"
              "1",
              "0.8\xE2\x80\x91"
              "0.95",
              "0.5\xE2\x80\x91"
              "0.8",
              "0\xE2\x80\x91"
              "0.5",
              "Moved",
              "Born",
              "New homes",
              "Died",
              "Not seen"};
  t.numeric = {false, true, true, true, true, true, true, true, true, true, true, true, true};
  for (const store::ChangeHistory::Interval& i : history.intervals) {
    const ChangeCounts& c = i.counts;
    const std::string label = Name(i.from) + " \xE2\x86\x92 " + Name(i.to);
    html::ColumnChart::Column column;
    column.label = Name(i.to);
    column.href = links.Page(PairPage(i.from, i.to));
    const uint64_t values[] = {c.bands[3], c.bands[2],          c.bands[1], c.bands[0],
                               c.moved,    c.born + c.moved_in, c.died};
    for (size_t p = 0; p < std::size(parts); ++p) {
      column.segments.push_back(html::Segment{parts[p].name, values[p], parts[p].colour});
    }
    chart.columns.push_back(std::move(column));
    t.rows.push_back({html::Cell::Html(links.A(PairPage(i.from, i.to), label)),
                      html::Cell::Number(c.urls), html::Cell::Number(c.unchanged),
                      html::Cell::Number(c.changed), html::Cell::Number(c.bands[0]),
                      html::Cell::Number(c.bands[1]), html::Cell::Number(c.bands[2]),
                      html::Cell::Number(c.bands[3]), html::Cell::Number(c.moved),
                      html::Cell::Number(c.born), html::Cell::Number(c.moved_in),
                      html::Cell::Number(c.died), html::Cell::Number(c.not_seen)});
  }
  page.AddColumns(chart);
  page.AddTable(t);
  page.Paragraph(
      "Changed bands: the resemblance of a URL's two documents, estimated from their min-wise "
      "sketches (1: the same shingles). Born counts new URLs; a new home is a new URL holding "
      "moved content. docs/REPORTS.md defines each count.");
  return page.Finish();
}

StatusOr<std::vector<store::SweepInfo>> SweepsWithPages(const store::Store& store) {
  StatusOr<std::vector<store::SweepInfo>> sweeps = store.Sweeps();
  if (!sweeps.ok()) return sweeps.status();
  std::erase_if(*sweeps, [](const store::SweepInfo& s) { return s.pages == 0; });
  std::sort(sweeps->begin(), sweeps->end(),
            [](const store::SweepInfo& a, const store::SweepInfo& b) {
              return a.start != b.start ? a.start < b.start : a.id < b.id;
            });
  return sweeps;
}

StatusOr<store::ChangeHistory> HistoryOverSweeps(const store::Store& store,
                                                 const store::ReportProgress& progress) {
  StatusOr<store::ChangeHistory> history = store.ChangesOverSweeps(progress);
  if (!history.ok()) return history.status();
  StatusOr<std::vector<store::SweepInfo>> sweeps = SweepsWithPages(store);
  if (!sweeps.ok()) return sweeps.status();
  std::vector<store::ChangeHistory::Interval> intervals;
  for (size_t i = 1; i < sweeps->size(); ++i) {
    const store::SweepInfo& from = (*sweeps)[i - 1];
    const store::SweepInfo& to = (*sweeps)[i];
    auto same = std::find_if(history->intervals.begin(), history->intervals.end(),
                             [&](const store::ChangeHistory::Interval& in) {
                               return in.from.id == from.id && in.to.id == to.id;
                             });
    if (same != history->intervals.end()) {
      intervals.push_back(std::move(*same));
      continue;
    }
    // An empty sweep lay between the two: compare them directly.
    StatusOr<store::ChangeReport> pair = store.ChangesBetween(from.id, to.id, progress);
    if (!pair.ok()) return pair.status();
    intervals.push_back({from, to, pair->total});
  }
  history->intervals = std::move(intervals);
  return history;
}

StatusOr<store::ChangeHistory> HostHistoryOverSweeps(const store::Store& store,
                                                     std::string_view host,
                                                     const store::ReportProgress& progress) {
  StatusOr<std::vector<store::SweepInfo>> sweeps = SweepsWithPages(store);
  if (!sweeps.ok()) return sweeps.status();
  store::ChangeHistory history;
  for (size_t i = 1; i < sweeps->size(); ++i) {
    const store::SweepInfo& from = (*sweeps)[i - 1];
    const store::SweepInfo& to = (*sweeps)[i];
    StatusOr<store::ChangeReport> pair = store.ChangesBetween(from.id, to.id, progress);
    if (!pair.ok()) return pair.status();
    store::ChangeHistory::Interval interval{from, to, {}};
    for (const store::HostChanges& h : pair->hosts) {
      if (h.host == host) interval.counts = h.counts;
    }
    history.intervals.push_back(std::move(interval));
  }
  return history;
}

StatusOr<std::pair<store::SweepInfo, store::SweepInfo>> ResolveSweeps(const store::Store& store,
                                                                      std::string_view from,
                                                                      std::string_view to) {
  if (from.empty() != to.empty()) {
    return InvalidArgumentError(
        "give both from and to (sweep names), or neither for the last two sweeps");
  }
  if (from.empty()) {
    StatusOr<std::vector<store::SweepInfo>> sweeps = SweepsWithPages(store);
    if (!sweeps.ok()) return sweeps.status();
    if (sweeps->size() < 2) {
      return NotFoundError("the store has " + std::to_string(sweeps->size()) +
                           " sweep(s) with pages; a change report needs two");
    }
    return std::make_pair((*sweeps)[sweeps->size() - 2], (*sweeps)[sweeps->size() - 1]);
  }
  if (from == to) return InvalidArgumentError("from and to name the same sweep");
  StatusOr<store::SweepInfo> a = store.FindSweep(from);
  if (!a.ok()) return a.status();
  StatusOr<store::SweepInfo> b = store.FindSweep(to);
  if (!b.ok()) return b.status();
  return std::make_pair(std::move(*a), std::move(*b));
}

StatusOr<Json> BuildChangeJson(const store::Store& store, store::SweepId from, store::SweepId to,
                               const store::ReportProgress& progress) {
  StatusOr<store::ChangeReport> report = store.ChangesBetween(from, to, progress);
  if (!report.ok()) return report.status();
  StatusOr<store::ChangeHistory> history = HistoryOverSweeps(store, progress);
  if (!history.ok()) return history.status();
  return ChangeReportJson(*report, &*history);
}

StatusOr<std::string> BuildChangeHtml(const store::Store& store, store::SweepId from,
                                      store::SweepId to, const store::ReportProgress& progress,
                                      const html::Links& links) {
  StatusOr<store::ChangeReport> report = store.ChangesBetween(from, to, progress);
  if (!report.ok()) return report.status();
  StatusOr<store::ChangeHistory> history = HistoryOverSweeps(store, progress);
  if (!history.ok()) return history.status();
  store::ChangeListOptions movers;
  movers.kind = ChangeKind::kMoved;
  movers.limit = kHtmlMovers;
  StatusOr<store::ChangeList> moved = store.ListChanges(from, to, movers);
  if (!moved.ok()) return moved.status();
  return ChangeReportHtml(*report, &*history, moved->rows, links);
}

}  // namespace shingled::report
