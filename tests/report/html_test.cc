// The report toolkit (report/html.h) and the change report's renderings (report/changes.h): the
// escaping of hostile URLs, the JSON keys and CSV quoting, and the HTML page of a real store
// rendered by headless Chromium (Debian's `chromium`): the numbers are in its DOM, no console
// message, screenshots at 1280 px and at phone width (390 px) left for a person to look at
// (in $SHINGLED_SCREENSHOT_DIR when set, else the test's temporary directory).
#include "report/html.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "report/changes.h"
#include "store/store.h"
#include "tests/report/chromium.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::report {
namespace {

namespace fs = std::filesystem;
using store::testing::Range;
using store::testing::SyntheticSketch;
using store::testing::Variant;
using testing::ReadFile;
using testing::Shell;

// The cells of each row of the table whose caption starts with `caption`, as text.
std::vector<std::vector<std::string>> TableRows(const std::string& dom,
                                                const std::string& caption) {
  std::vector<std::vector<std::string>> rows;
  const size_t at = dom.find("<caption>" + caption);
  if (at == std::string::npos) return rows;
  const std::string table = dom.substr(at, dom.find("</table>", at) - at);
  static const std::regex tr("<tr[^>]*>([\\s\\S]*?)</tr>");
  static const std::regex cell("<t[hd][^>]*>([\\s\\S]*?)</t[hd]>");
  static const std::regex tag("<[^>]*>");
  for (std::sregex_iterator r(table.begin(), table.end(), tr), end; r != end; ++r) {
    const std::string row = (*r)[1];
    std::vector<std::string> cells;
    for (std::sregex_iterator c(row.begin(), row.end(), cell); c != end; ++c) {
      cells.push_back(std::regex_replace((*c)[1].str(), tag, ""));
    }
    if (!cells.empty() && row.find("<th scope=\"col\"") == std::string::npos) rows.push_back(cells);
  }
  return rows;
}

std::string Unescape(std::string text) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1)) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

constexpr const char* kHostile = "http://evil.example/<script>alert(\"x\")</script>?q='1'&b=2";
constexpr const char* kHostileNew = "https://archive.example/\"><img src=x onerror=alert(1)>'";

TEST(HtmlTest, EscapesMarkupQuotesAndBadBytes) {
  EXPECT_EQ(html::Escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html::Escape("caf\xC3\xA9"), "caf\xC3\xA9");  // UTF-8 kept
  EXPECT_EQ(html::Escape("a\xFF"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");                                                   // a bad byte: U+FFFD
  EXPECT_EQ(html::Escape("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // cut short
  EXPECT_EQ(html::Escape("a\x01"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
}

TEST(HtmlTest, FormatsNumbers) {
  EXPECT_EQ(html::Count(0), "0");
  EXPECT_EQ(html::Count(12), "12");
  EXPECT_EQ(html::Count(999), "999");
  EXPECT_EQ(html::Count(12345), "12,345");
  EXPECT_EQ(html::Count(1000), "1,000");
  EXPECT_EQ(html::Count(1234567), "1,234,567");
  EXPECT_EQ(html::Percent(1, 8), "12.5%");
  EXPECT_EQ(html::Percent(0, 0), "\xE2\x80\x93");
  EXPECT_EQ(html::Fixed(0.8751, 2), "0.88");
}

TEST(HtmlTest, TablesHaveHeadersAndChartsHaveTextLabels) {
  html::Page page("T <1>");
  html::Table t;
  t.caption = "Cap";
  t.header = {"Name", "N"};
  t.numeric = {false, true};
  t.rows.push_back({html::Cell::Url(kHostile), html::Cell::Number(1234)});
  page.AddTable(t);
  html::BarChart chart;
  chart.title = "Chart";
  chart.description = "Desc";
  chart.bars.push_back(html::Bar{"Moved <", 3, "3 (50.0%)", 2});
  page.AddChart(chart);
  const std::string out = page.Finish();
  EXPECT_NE(out.find("<title>T &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(out.find("<h1>T &lt;1&gt;</h1>"), std::string::npos);
  EXPECT_NE(out.find("<th scope=\"col\">Name</th>"), std::string::npos);
  EXPECT_NE(out.find("<th scope=\"row\" class=\"long\" data-label=\"Name\">"
                     "http://evil.example/&lt;script&gt;"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("<td class=\"num\" data-label=\"N\">1,234</td>"), std::string::npos);
  EXPECT_EQ(out.find("<script"), std::string::npos);
  EXPECT_NE(out.find(">Moved &lt;</text>"), std::string::npos);
  EXPECT_NE(out.find(">3 (50.0%)</text>"), std::string::npos);
  EXPECT_NE(out.find("<title>Moved &lt;: 3 (50.0%)</title>"), std::string::npos);
  EXPECT_NE(out.find("name=\"viewport\""), std::string::npos);
}

// A resemblance of 0.33 on a 0-1 axis is a third of the axis, not the whole width (a chart once
// scaled each bar against the largest one), and the axis has its ticks and title.
TEST(HtmlTest, BarsAreDrawnToScale) {
  html::Page page("T");
  html::BarChart chart;
  chart.title = "Resemblance";
  chart.axis = "Resemblance to the previous content";
  chart.scale_max = 1;
  chart.bars.push_back(html::Bar{"edit", 0.33, "0.33", 0});
  page.AddChart(chart);
  const std::string out = page.Finish();
  EXPECT_NE(out.find("width=\"95.7\""), std::string::npos) << out;  // 290 * 0.33
  EXPECT_NE(out.find(">Resemblance to the previous content</text>"), std::string::npos);
  for (const char* tick : {">0</text>", ">0.50</text>", ">1</text>"}) {
    EXPECT_NE(out.find(tick), std::string::npos) << tick;
  }
  // A count axis ends at a round number at or above the largest count: 19 of 20.
  html::Page counts("T");
  html::BarChart c;
  c.title = "Counts";
  c.axis = "URLs";
  c.bars.push_back(html::Bar{"moved", 19, "19", 0});
  counts.AddChart(c);
  const std::string out2 = counts.Finish();
  EXPECT_NE(out2.find("width=\"275.5\""), std::string::npos) << out2;  // 290 * 19 / 20
  EXPECT_NE(out2.find(">20</text>"), std::string::npos);
}

TEST(ChangesRenderTest, CsvQuotesAndJsonKeys) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\"\n"), "\"say \"\"hi\"\"\n\"");
  store::ChangeRow row;
  row.kind = store::ChangeKind::kMoved;
  row.url_id = 7;
  row.url = "http://a/x,y";
  row.from_doc = 3;
  row.new_url = "http://b/\"z\"";
  row.new_doc = 4;
  row.resemblance = 0.5;
  row.containment = 0.75;
  row.evidence = "resemblance";
  EXPECT_EQ(
      ChangeCsvLine(row),
      "moved,7,\"http://a/x,y\",3,,0.5000,\"http://b/\"\"z\"\"\",4,resemblance,0.7500,false\r\n");
  store::ChangeReport report;
  report.total.Add(store::ChangeKind::kChanged);
  report.total.bands[2] = 1;
  const Json j = ChangeReportJson(report, nullptr);
  for (const char* key :
       {"urls", "unchanged", "changed", "moved", "born", "died", "bands", "hosts"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["changed"], 1);
  EXPECT_EQ(j["bands"]["0.5-0.8"], 1);
  EXPECT_FALSE(j.contains("series"));
}

// A store with three sweeps over three hosts: edits of every band, moves (same content, edited,
// with a redirect, across hosts), births, deaths, URLs the last sweep did not cover, and a URL
// with markup and quotes in it.
class ReportPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::StoreOptions o;
    o.durable = false;
    auto s = store::Store::Open(dir_.Sub("db"), o, params_, 0x1234567890abcdefull);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    constexpr int64_t kT0 = 1767225600;  // 2026-01-01
    constexpr int64_t kDay = 86400;
    const std::vector<std::string> hosts = {"http://docs.example", "https://blog.example",
                                            "http://shop.example"};
    std::vector<std::string> scope;
    for (const std::string& h : hosts) scope.push_back(h + "/");
    s1_ = store_->OpenSweep("2026-01", kT0, scope)->id;
    std::vector<store::PageInput> pages;
    for (int i = 0; i < 60; ++i) {
      pages.push_back(Page(Url(hosts, i), s1_, kT0, Range(1000000 * (i + 1), 600)));
    }
    pages.push_back(Page(kHostile, s1_, kT0, Range(999000000, 600)));
    ASSERT_TRUE(store_->Apply(pages).ok());
    ASSERT_TRUE(store_->CloseSweep(s1_, kT0 + 1).ok());

    const int64_t t2 = kT0 + 31 * kDay;
    s2_ = store_->OpenSweep("2026-02", t2, scope)->id;
    pages.clear();
    for (int i = 0; i < 60; ++i) {
      const uint64_t base = 1000000 * (i + 1);
      const uint64_t fresh = 500000000 + 1000000 * static_cast<uint64_t>(i);
      switch (i % 10) {
        case 0:
        case 1:
        case 2:  // unchanged
          pages.push_back(Page(Url(hosts, i), s2_, t2, Range(base, 600)));
          break;
        case 3:  // small edit
          pages.push_back(Page(Url(hosts, i), s2_, t2, Variant(base, 600, 560, fresh)));
          Edit(Range(base, 600), Variant(base, 600, 560, fresh));
          break;
        case 4:  // substantial edit
          pages.push_back(Page(Url(hosts, i), s2_, t2, Variant(base, 600, 450, fresh)));
          Edit(Range(base, 600), Variant(base, 600, 450, fresh));
          break;
        case 5: {  // moved within the host, edited; the old URL answers 404
          store::PageInput dead = Page(Url(hosts, i), s2_, t2, {});
          dead.http_status = 404;
          pages.push_back(dead);
          pages.push_back(Page(Url(hosts, i) + "-new", s2_, t2, Variant(base, 600, 500, fresh)));
          break;
        }
        case 6: {  // moved with a redirect
          store::PageInput redirect = Page(Url(hosts, i), s2_, t2, {});
          redirect.http_status = 301;
          redirect.redirect_target = Url(hosts, i) + "/moved";
          pages.push_back(redirect);
          pages.push_back(Page(Url(hosts, i) + "/moved", s2_, t2, Range(base, 600)));
          break;
        }
        case 7:  // moved to another host as it is (the old URL is gone at the close)
          pages.push_back(
              Page("https://archive.example/" + std::to_string(i), s2_, t2, Range(base, 600)));
          break;
        case 8: {  // died
          store::PageInput dead = Page(Url(hosts, i), s2_, t2, {});
          dead.http_status = 410;
          pages.push_back(dead);
          break;
        }
        default:  // rewritten
          pages.push_back(Page(Url(hosts, i), s2_, t2, Variant(base, 600, 100, fresh)));
          Edit(Range(base, 600), Variant(base, 600, 100, fresh));
      }
    }
    // The hostile URL moved, to another hostile URL.
    store::PageInput gone = Page(kHostile, s2_, t2, {});
    gone.http_status = 404;
    pages.push_back(gone);
    pages.push_back(Page(kHostileNew, s2_, t2, Range(999000000, 600)));
    for (int i = 0; i < 12; ++i) {
      pages.push_back(Page(hosts[i % 3] + "/new/" + std::to_string(i), s2_, t2,
                           Range(2000000000ull + 1000000ull * i, 600)));
    }
    ASSERT_TRUE(store_->Apply(pages).ok());
    ASSERT_TRUE(store_->CloseSweep(s2_, t2 + 1).ok());

    // The third sweep covers docs.example only, and is still open.
    const int64_t t3 = t2 + 28 * kDay;
    s3_ = store_->OpenSweep("2026-03", t3, {"http://docs.example/"})->id;
    pages.clear();
    for (int i = 0; i < 60; i += 3) {
      if (i % 10 == 8 || i % 10 == 5 || i % 10 == 6) continue;
      const uint64_t fresh = 700000000 + 1000000 * static_cast<uint64_t>(i);
      pages.push_back(Page(Url(hosts, i), s3_, t3, Variant(1000000 * (i + 1), 600, 590, fresh)));
    }
    ASSERT_TRUE(store_->Apply(pages).ok());
  }

  // Counts an edit in the band the store's estimator gives it (the truth of `bands_`).
  void Edit(const std::vector<uint64_t>& before, const std::vector<uint64_t>& after) {
    ++bands_[store::ResemblanceBand(dedup::ResemblanceFromMinhashes(
        SyntheticSketch(params_, before), SyntheticSketch(params_, after)))];
  }
  static std::string Url(const std::vector<std::string>& hosts, int i) {
    return hosts[i % 3] + "/section-" + std::to_string(i / 10) + "/page-" + std::to_string(i);
  }
  store::PageInput Page(std::string url, store::SweepId sweep, int64_t date,
                        const std::vector<uint64_t>& shingles) const {
    store::PageInput p;
    p.url = std::move(url);
    p.sweep = sweep;
    p.date = date;
    p.sketch = SyntheticSketch(params_, shingles);
    return p;
  }

  store::testing::TestDir dir_;
  dedup::SketchParams params_;
  std::unique_ptr<store::Store> store_;
  store::SweepId s1_ = 0, s2_ = 0, s3_ = 0;
  uint64_t bands_[store::kResemblanceBands] = {};
};

TEST_F(ReportPageTest, ThePageAndTheJsonHoldTheReport) {
  const store::ChangeCounts c = store_->ChangesBetween(s1_, s2_)->total;
  // The truth of the data set: per ten pages, 3 unchanged, 3 changed, one moved of each kind,
  // one died; 12 born; the hostile URL moved to another host.
  EXPECT_EQ(c.urls, 92u);
  EXPECT_EQ(c.unchanged, 18u);
  EXPECT_EQ(c.changed, 18u);
  for (int b = 0; b < store::kResemblanceBands; ++b) EXPECT_EQ(c.bands[b], bands_[b]) << b;
  EXPECT_EQ(bands_[3], 6u);  // the rewritten pages
  EXPECT_EQ(c.moved, 19u);
  EXPECT_EQ(c.moved_same_host, 12u);
  EXPECT_EQ(c.moved_other_host, 7u);
  EXPECT_EQ(c.moved_by_redirect, 6u);
  EXPECT_EQ(c.moved_in, 19u);
  EXPECT_EQ(c.died, 6u);
  EXPECT_EQ(c.born, 12u);
  EXPECT_EQ(c.not_seen, 0u);

  StatusOr<std::string> page = BuildChangeHtml(*store_, s1_, s2_, {}, html::Links::FromReports());
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  // A mover's new URL links to its timeline in the store, never to the URL itself.
  EXPECT_NE(page->find("<a href=\"url?url=https%3A%2F%2Farchive.example%2F7\">"
                       "https://archive.example/7</a>"),
            std::string::npos);
  EXPECT_EQ(page->find("href=\"https://"), std::string::npos);
  EXPECT_EQ(page->find("href=\"http://"), std::string::npos);
  EXPECT_EQ(page->find("<script"), std::string::npos);
  EXPECT_NE(page->find("Over all sweeps"), std::string::npos);

  StatusOr<Json> j = BuildChangeJson(*store_, s1_, s2_);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["moved"], 19);
  EXPECT_EQ((*j)["bands"]["0.8-0.95"], bands_[1]);
  ASSERT_EQ((*j)["series"].size(), 2u);  // 2026-01 -> 2026-02 -> 2026-03
  EXPECT_EQ((*j)["series"][0]["moved"], 19);
  EXPECT_EQ((*j)["hosts"].size(), 5u);  // archive, blog, docs, evil, shop
}

TEST_F(ReportPageTest, ChromiumRendersThePage) {
  if (Shell("command -v chromium >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  }
  StatusOr<std::string> page = BuildChangeHtml(*store_, s2_, s3_, {}, html::Links::FromReports());
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  StatusOr<std::string> first = BuildChangeHtml(*store_, s1_, s2_, {}, html::Links::FromReports());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  StatusOr<store::ChangeHistory> history = HistoryOverSweeps(*store_);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  const std::string timeline = HistoryHtml(*history, html::Links::FromReports());
  const std::string dir = dir_.path();
  const char* shots_env = std::getenv("SHINGLED_SCREENSHOT_DIR");
  const std::string shots = shots_env != nullptr && *shots_env != '\0' ? shots_env : dir;
  fs::create_directories(shots);
  const store::ChangeCounts c = store_->ChangesBetween(s1_, s2_)->total;
  for (const auto& [name, html] : {std::pair<std::string, std::string>{"changes-1-2", *first},
                                   std::pair<std::string, std::string>{"changes-2-3", *page},
                                   std::pair<std::string, std::string>{"history", timeline}}) {
    const std::string file = dir + "/" + name + ".html";
    std::ofstream(file, std::ios::binary) << html;
    const std::string chromium =
        "chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
        "--no-first-run --disable-extensions --enable-logging=stderr "
        "--v=0 --user-data-dir=" +
        dir + "/chromium-profile ";
    const std::string dom_path = dir + "/" + name + ".dom.html";
    const std::string log_path = dir + "/" + name + ".log";
    ASSERT_EQ(Shell(chromium + "--dump-dom file://" + file + " >" + dom_path + " 2>" + log_path), 0)
        << ReadFile(log_path);
    const std::string dom = ReadFile(dom_path);
    const std::string log = ReadFile(log_path);
    // No console message: the page has no script, and nothing failed to load or parse.
    EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;
    // The hostile URL is text, not markup.
    EXPECT_EQ(dom.find("<script"), std::string::npos);
    if (name == "history") {
      // One column per interval, each a link to its pair's report, and the same numbers in the
      // table as the pair's own report.
      ASSERT_NE(dom.find("<h1>Changes over all sweeps</h1>"), std::string::npos);
      EXPECT_NE(dom.find("<a href=\"changes?from=2026-01&amp;to=2026-02\"><rect"),
                std::string::npos);
      EXPECT_NE(dom.find("<a href=\"changes?from=2026-02&amp;to=2026-03\"><rect"),
                std::string::npos);
      const auto rows = TableRows(dom, "Counts per interval");
      ASSERT_EQ(rows.size(), 2u);
      ASSERT_EQ(rows[0].size(), 13u);
      EXPECT_EQ(rows[0][1], html::Count(c.urls));
      EXPECT_EQ(rows[0][8], html::Count(c.moved));
      EXPECT_EQ(rows[0][9], html::Count(c.born));
      EXPECT_EQ(rows[0][10], html::Count(c.moved_in));
      EXPECT_EQ(rows[0][11], html::Count(c.died));
    } else {
      ASSERT_NE(dom.find("<h1>Changes from sweep "), std::string::npos) << dom.substr(0, 2000);
    }
    if (name == "changes-1-2") {
      for (const auto& [label, n] :
           std::vector<std::pair<std::string, uint64_t>>{{"Moved", c.moved},
                                                         {"Died", c.died},
                                                         {"Changed", c.changed},
                                                         {"Unchanged", c.unchanged},
                                                         {"Born", c.born},
                                                         {"URLs", c.urls}}) {
        const std::string figure = "<span class=\"label\">" + label +
                                   "</span><span class=\"value\">" + html::Count(n) + "</span>";
        EXPECT_NE(dom.find(figure), std::string::npos) << figure;
      }
      EXPECT_NE(dom.find("evil.example/&lt;script&gt;alert(\"x\")&lt;/script&gt;"),
                std::string::npos);
      EXPECT_NE(dom.find("archive.example/\"&gt;&lt;img src=x onerror=alert(1)&gt;'"),
                std::string::npos);
      EXPECT_EQ(dom.find("<img"), std::string::npos);
    }
    for (const auto& [suffix, size] : {std::pair<std::string, std::string>{"1280", "1280,4200"},
                                       std::pair<std::string, std::string>{"390", "390,7000"}}) {
      const std::string png = shots + "/" + name + "-" + suffix + ".png";
      fs::remove(png);
      ASSERT_EQ(Shell(chromium + "--screenshot=" + png + " --window-size=" + size + " file://" +
                      file + " >/dev/null 2>>" + log_path),
                0)
          << ReadFile(log_path);
      EXPECT_GT(fs::file_size(png), 10000u) << png;
    }
  }
}

// The timeline of one host is that host's counts in each pair's report, and the pair's page
// links each host to it.
TEST_F(ReportPageTest, TheTimelineOfOneHost) {
  StatusOr<store::ChangeHistory> docs = HostHistoryOverSweeps(*store_, "docs.example");
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->intervals.size(), 2u);
  const std::pair<store::SweepId, store::SweepId> pairs[] = {{s1_, s2_}, {s2_, s3_}};
  for (size_t i = 0; i < 2; ++i) {
    StatusOr<store::ChangeReport> pair = store_->ChangesBetween(pairs[i].first, pairs[i].second);
    ASSERT_TRUE(pair.ok());
    const store::HostChanges* host = nullptr;
    for (const store::HostChanges& h : pair->hosts) {
      if (h.host == "docs.example") host = &h;
    }
    ASSERT_NE(host, nullptr);
    EXPECT_EQ(ChangeCountsJson(docs->intervals[i].counts), ChangeCountsJson(host->counts)) << i;
  }
  EXPECT_GT(docs->intervals[0].counts.moved, 0u);
  const std::string name = "docs.example";
  const Json j = HistoryJson(*docs, &name);
  EXPECT_EQ(j["host"], "docs.example");
  EXPECT_EQ(j["series"][0]["moved"], docs->intervals[0].counts.moved);
  const std::string page = HistoryHtml(*docs, html::Links::FromReports(), &name);
  EXPECT_NE(page.find("<h1>Changes over all sweeps on docs.example</h1>"), std::string::npos);
  EXPECT_NE(page.find("href=\"../v1/reports/history?host=docs.example\""), std::string::npos);
  // A host with no URL: a series of zeros, not an error.
  StatusOr<store::ChangeHistory> none = HostHistoryOverSweeps(*store_, "nowhere.example");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->intervals[0].counts.urls, 0u);

  StatusOr<std::string> pair_page =
      BuildChangeHtml(*store_, s1_, s2_, {}, html::Links::FromReports());
  ASSERT_TRUE(pair_page.ok());
  EXPECT_NE(pair_page->find("<a href=\"history?host=docs.example\">docs.example</a>"),
            std::string::npos);
}

// The counts and the moved list are the same in the JSON, the CSV and the HTML page, and the
// numbers on the page agree with each other: the interval row of this pair says what the summary
// says (a Born column once added the new homes of moves to the births).
TEST_F(ReportPageTest, ChangesIsOneReportInJsonCsvAndHtml) {
  if (!testing::HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  StatusOr<Json> j = BuildChangeJson(*store_, s1_, s2_);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  StatusOr<store::ChangeReport> pair = store_->ChangesBetween(s1_, s2_);
  ASSERT_TRUE(pair.ok());
  const std::string csv = HostsCsv(*pair);
  StatusOr<std::string> page = BuildChangeHtml(*store_, s1_, s2_, {}, html::Links::FromReports());
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  const std::string file = dir_.path() + "/pair.html";
  std::ofstream(file, std::ios::binary) << *page;
  const std::string dom_path = dir_.path() + "/pair.dom.html";
  ASSERT_EQ(Shell(testing::ChromiumCommand(dir_.path()) + "--dump-dom file://" + file + " >" +
                  dom_path + " 2>/dev/null"),
            0);
  const std::string dom = ReadFile(dom_path);

  // The CSV's "(all)" line, by its header's names.
  const std::string header = csv.substr(0, csv.find("\r\n"));
  const size_t all_at = csv.find("(all),");
  ASSERT_NE(all_at, std::string::npos) << csv;
  const std::string all = csv.substr(all_at, csv.find("\r\n", all_at) - all_at);
  std::map<std::string, uint64_t> csv_counts;
  for (size_t h = 0, a = 0; h != std::string::npos && a != std::string::npos;) {
    const size_t hn = header.find(',', h), an = all.find(',', a);
    const std::string name = header.substr(h, hn - h), value = all.substr(a, an - a);
    if (name != "host") csv_counts[name] = std::stoull(value);
    h = hn == std::string::npos ? hn : hn + 1;
    a = an == std::string::npos ? an : an + 1;
  }
  const std::vector<std::pair<std::string, std::string>> figures = {
      {"urls", "URLs"},         {"unchanged", "Unchanged"},
      {"changed", "Changed"},   {"moved", "Moved"},
      {"died", "Died"},         {"born", "Born"},
      {"not_seen", "Not seen"}, {"moved_in", "New home of a move"}};
  for (const auto& [key, label] : figures) {
    const uint64_t n = (*j)[key];
    EXPECT_EQ(csv_counts[key], n) << key;
    const std::string figure = "<span class=\"label\">" + label + "</span><span class=\"value\">" +
                               html::Count(n) + "</span>";
    EXPECT_NE(dom.find(figure), std::string::npos) << figure;
  }
  for (int b = 0; b < store::kResemblanceBands; ++b) {
    const std::string band(store::ResemblanceBandName(b));
    EXPECT_EQ(csv_counts["changed_" + band], (*j)["bands"][band]) << band;
  }

  // The interval row of this pair in the table over all sweeps.
  const auto intervals = TableRows(dom, "Counts per interval");
  ASSERT_EQ(intervals.size(), 2u);
  const std::vector<std::string>& row = intervals[0];
  ASSERT_EQ(row.size(), 10u);
  EXPECT_NE(row[0].find("(this report)"), std::string::npos) << row[0];
  const char* columns[] = {nullptr, "urls", "unchanged", "changed",  nullptr,
                           "moved", "died", "born",      "moved_in", "not_seen"};
  for (size_t i = 0; i < row.size(); ++i) {
    if (columns[i] == nullptr) continue;
    EXPECT_EQ(row[i], html::Count((*j)[columns[i]].get<uint64_t>())) << columns[i];
  }

  // The moved list: the JSON's page, the CSV's rows and the page's table, in one order.
  store::ChangeListOptions options;
  options.kind = store::ChangeKind::kMoved;
  options.limit = 1000;
  StatusOr<store::ChangeList> list = store_->ListChanges(s1_, s2_, options);
  ASSERT_TRUE(list.ok());
  const Json list_json = ChangeListJson(*pair, store::ChangeKind::kMoved, *list);
  std::vector<std::pair<std::string, std::string>> from_json, from_csv, from_html;
  for (const Json& r : list_json["rows"]) from_json.emplace_back(r["url"], r["new_url"]);
  ASSERT_TRUE(store_
                  ->StreamChanges(s1_, s2_, store::ChangeKind::kMoved,
                                  [&](const store::ChangeRow& r) {
                                    EXPECT_NE(ChangeCsvLine(r).find(CsvField(r.new_url)),
                                              std::string::npos);
                                    from_csv.emplace_back(r.url, r.new_url);
                                    return OkStatus();
                                  })
                  .ok());
  for (const std::vector<std::string>& r : TableRows(dom, "Moved URLs")) {
    ASSERT_GE(r.size(), 2u);
    from_html.emplace_back(Unescape(r[0]), Unescape(r[1]));
  }
  EXPECT_EQ(from_json.size(), (*j)["moved"].get<size_t>());
  EXPECT_EQ(from_csv, from_json);
  EXPECT_EQ(from_html, from_json);
}

}  // namespace
}  // namespace shingled::report
