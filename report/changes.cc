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

// A link for an http(s) URL (a URL of another scheme, e.g. javascript:, is only text).
std::string UrlHtml(std::string_view url) {
  const bool web = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
  if (!web) return html::Escape(url);
  std::string out = "<a href=\"";
  out.append(html::Escape(url)).append("\">").append(html::Escape(url)).append("</a>");
  return out;
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
                             const std::vector<store::ChangeRow>& movers) {
  const ChangeCounts& c = report.total;
  std::string title = "Changes from sweep ";
  title.append(report.from.name).append(" to sweep ").append(report.to.name);
  html::Page page(title);
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
  html::BarChart counts;
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
    t.header = {"Old URL", "New URL", "Evidence", "Resemblance", "Host"};
    t.numeric = {false, false, false, true, false};
    for (const store::ChangeRow& m : movers) {
      std::string evidence = m.evidence;
      std::replace(evidence.begin(), evidence.end(), '_', ' ');
      t.rows.push_back(
          {html::Cell{UrlHtml(m.url), false, true}, html::Cell{UrlHtml(m.new_url), false, true},
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
    t.caption = "Counts per host";
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
          {html::Cell{html::Escape(h->host.empty() ? "(no host)" : h->host), false, true},
           html::Cell::Number(hc.urls), html::Cell::Number(hc.unchanged),
           html::Cell::Number(hc.changed), html::Cell::Number(hc.moved),
           html::Cell::Number(hc.died), html::Cell::Number(hc.not_seen),
           html::Cell::Number(hc.born), html::Cell::Number(hc.moved_in)});
    }
    page.AddTable(t);
  }

  if (history != nullptr) {
    page.Heading(2, "Over all sweeps", "series");
    if (history->intervals.empty()) {
      page.Paragraph("The store has fewer than two sweeps: there is no interval to show.");
    } else {
      const ChangeKind shown[] = {ChangeKind::kUnchanged, ChangeKind::kChanged,
                                  ChangeKind::kMoved,     ChangeKind::kDied,
                                  ChangeKind::kBorn,      ChangeKind::kNotSeen};
      html::StackedChart chart;
      chart.title = "What URLs did in each interval between sweeps";
      chart.description =
          "Each bar is one pair of consecutive sweeps (by start), split by share of its URLs; the "
          "table below has the numbers.";
      for (ChangeKind k : shown) {
        chart.legend.push_back(KindLabel(k));
        chart.legend_colours.push_back(KindColour(k));
      }
      html::Table t;
      t.caption = "Counts per interval";
      t.header = {"Interval", "URLs", "Unchanged", "Changed", "Changed <0.8",
                  "Moved",    "Died", "Born",      "Not seen"};
      t.numeric = {false, true, true, true, true, true, true, true, true};
      for (const store::ChangeHistory::Interval& i : history->intervals) {
        const std::string label = Name(i.from) + " \xE2\x86\x92 " + Name(i.to);
        std::vector<html::Segment> segments;
        for (ChangeKind k : shown) {
          segments.push_back(html::Segment{KindLabel(k), i.counts.Of(k), KindColour(k)});
        }
        chart.rows.emplace_back(label, std::move(segments));
        const ChangeCounts& ic = i.counts;
        t.rows.push_back(
            {html::Cell::Text(label), html::Cell::Number(ic.urls), html::Cell::Number(ic.unchanged),
             html::Cell::Number(ic.changed), html::Cell::Number(ic.bands[2] + ic.bands[3]),
             html::Cell::Number(ic.moved), html::Cell::Number(ic.died),
             html::Cell::Number(ic.born + ic.moved_in), html::Cell::Number(ic.not_seen)});
      }
      page.AddStacked(chart);
      page.AddTable(t);
    }
    page.Heading(3, "How long URLs live", "lifetimes");
    page.Paragraph(
        "From a URL's first live version to the version that ended its last live "
        "stretch (died), or to its last live version (still alive: a lower bound). " +
        html::Count(history->never_live) + " URLs never had a live version.");
    for (int dead = 1; dead >= 0; --dead) {
      const std::vector<store::Bucket>& buckets =
          dead ? history->lifetimes_dead : history->lifetimes_alive;
      uint64_t total = 0;
      for (const store::Bucket& b : buckets) total += b.count;
      html::BarChart chart;
      chart.title = dead ? "Lifetimes of URLs that died" : "Age of URLs still alive";
      chart.description = html::Count(total) + (dead ? " URLs that died." : " URLs still alive.");
      for (const store::Bucket& b : buckets) {
        chart.bars.push_back(html::Bar{
            b.label, static_cast<double>(b.count),
            html::Count(b.count) + " (" + html::Percent(b.count, total) + ")", dead ? 3 : 2});
      }
      page.AddChart(chart);
    }
    page.Heading(3, "Changes per URL", "changes-per-url");
    uint64_t total = 0;
    for (const store::Bucket& b : history->changes_per_url) total += b.count;
    html::BarChart chart;
    chart.title = "URLs by number of content changes";
    chart.description =
        "Over all versions of " + html::Count(total) + " URLs that were live at least once.";
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

StatusOr<std::pair<store::SweepInfo, store::SweepInfo>> ResolveSweeps(const store::Store& store,
                                                                      std::string_view from,
                                                                      std::string_view to) {
  if (from.empty() != to.empty()) {
    return InvalidArgumentError(
        "give both from and to (sweep names), or neither for the last two sweeps");
  }
  if (from.empty()) {
    StatusOr<std::vector<store::SweepInfo>> sweeps = store.Sweeps();
    if (!sweeps.ok()) return sweeps.status();
    if (sweeps->size() < 2) {
      return NotFoundError("the store has " + std::to_string(sweeps->size()) +
                           " sweep(s); a change report needs two");
    }
    std::sort(sweeps->begin(), sweeps->end(),
              [](const store::SweepInfo& a, const store::SweepInfo& b) {
                return a.start != b.start ? a.start < b.start : a.id < b.id;
              });
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
  StatusOr<store::ChangeHistory> history = store.ChangesOverSweeps(progress);
  if (!history.ok()) return history.status();
  return ChangeReportJson(*report, &*history);
}

StatusOr<std::string> BuildChangeHtml(const store::Store& store, store::SweepId from,
                                      store::SweepId to, const store::ReportProgress& progress) {
  StatusOr<store::ChangeReport> report = store.ChangesBetween(from, to, progress);
  if (!report.ok()) return report.status();
  StatusOr<store::ChangeHistory> history = store.ChangesOverSweeps(progress);
  if (!history.ok()) return history.status();
  store::ChangeListOptions movers;
  movers.kind = ChangeKind::kMoved;
  movers.limit = kHtmlMovers;
  StatusOr<store::ChangeList> moved = store.ListChanges(from, to, movers);
  if (!moved.ok()) return moved.status();
  return ChangeReportHtml(*report, &*history, moved->rows);
}

}  // namespace shingled::report
