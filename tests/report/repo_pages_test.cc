// The repository reports in their three formats (report/repo_reports.h): on a generated repository
// with known copies, a pair, a containment and a group (tests/store/repo_files.h), stored with
// real sketches and chunks, the JSON, the CSV and the HTML page of each report give the same
// counts and the same lists; the HTML, rendered by headless Chromium at 1280 and 390 px, holds
// them in its DOM, links each URL to its timeline and each cluster to its section.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "dedup/sketch.h"
#include "report/html.h"
#include "report/repo_reports.h"
#include "store/store.h"
#include "tests/report/chromium.h"
#include "tests/store/repo_files.h"
#include "tests/store/test_dir.h"

namespace shingled::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ReadFile;
using testing::Shell;

constexpr const char* kRoot = "file:///repo/";

// The text of an HTML fragment: tags dropped, the few entities the pages write decoded.
std::string Text(std::string html) {
  html = std::regex_replace(html, std::regex("<[^>]*>"), " ");
  html = std::regex_replace(html, std::regex("&amp;"), "&");
  html = std::regex_replace(html, std::regex("\\s+"), " ");
  const size_t b = html.find_first_not_of(' ');
  const size_t e = html.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : html.substr(b, e - b + 1);
}

// The first number of a text, "1,234" or "1,234 bytes (1.2 kB)": 1234.
uint64_t Number(const std::string& text) {
  std::string digits;
  for (char c : Text(text)) {
    if (c >= '0' && c <= '9') {
      digits.push_back(c);
    } else if (c != ',' && !digits.empty()) {
      break;
    }
  }
  return digits.empty() ? UINT64_MAX : std::stoull(digits);
}

// The cells of the table row with id `id` in `html` (empty when there is none).
std::vector<std::string> RowCells(const std::string& html, const std::string& id) {
  std::vector<std::string> cells;
  const size_t at = html.find("<tr id=\"" + id + "\">");
  if (at == std::string::npos) return cells;
  const std::string row = html.substr(at, html.find("</tr>", at) - at);
  static const std::regex cell("<t[hd][^>]*>([\\s\\S]*?)</t[hd]>");
  for (std::sregex_iterator it(row.begin(), row.end(), cell), end; it != end; ++it) {
    cells.push_back((*it)[1]);
  }
  return cells;
}

// The texts of the links in `html` whose target starts with `prefix`.
std::vector<std::string> LinkTexts(const std::string& html, const std::string& prefix) {
  std::vector<std::string> out;
  static const std::regex a("<a href=\"([^\"]*)\">([^<]*)</a>");
  for (std::sregex_iterator it(html.begin(), html.end(), a), end; it != end; ++it) {
    if ((*it)[1].str().rfind(prefix, 0) == 0) out.push_back(Text((*it)[2]));
  }
  return out;
}

// A figure's value ("<span class="label">Sets</span><span class="value">2</span>").
uint64_t Figure(const std::string& html, const std::string& label) {
  const std::string head = "<span class=\"label\">" + label + "</span><span class=\"value\">";
  const size_t at = html.find(head);
  if (at == std::string::npos) return UINT64_MAX;
  const size_t from = at + head.size();
  return Number(html.substr(from, html.find("</span>", from) - from));
}

// Splits a CSV line without quoted fields (the test's URLs have no comma or quote).
std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::vector<std::vector<std::string>> CsvRows(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  size_t start = csv.find("\r\n") + 2;  // after the header
  while (start < csv.size()) {
    const size_t end = csv.find("\r\n", start);
    rows.push_back(CsvFields(csv.substr(start, end - start)));
    start = end + 2;
  }
  return rows;
}

class RepoPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ctx = dedup::SketchContext::Create(dedup::SketchParams{});
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    context_ = *ctx;
    store::StoreOptions o;
    o.durable = false;
    auto s = store::Store::Open(dir_.Sub("db"), o, *context_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    const store::SweepId sweep = store_->OpenSweep("repo", 1)->id;
    int64_t date = 1;
    for (const store::testing::RepoFile& f : store::testing::RepoFiles()) {
      store::PageInput p;
      p.url = kRoot + f.path;
      p.sweep = sweep;
      p.date = ++date;
      p.sketch = dedup::SketchPage(*context_, f.text, "text/plain");
      auto r = store_->Apply(std::span(&p, 1));
      ASSERT_TRUE(r.ok() && (*r)[0].status.ok()) << f.path;
    }
  }

  // The report in `format`, written as it streams.
  template <typename Options, typename Write>
  std::string Report(const Options& options, RepoReportFormat format, Write write) {
    std::string out;
    Status s = write(
        *store_, options, format,
        [&](std::string_view text) {
          out.append(text);
          return OkStatus();
        },
        store::RepoReportProgress{}, html::Links::FromReports());
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  // Renders `html` in Chromium: its DOM, after checking no console message; screenshots named
  // after `name` at 1280 and 390 px.
  std::string Render(const std::string& name, const std::string& html) {
    const std::string dir = dir_.path();
    const std::string file = dir + "/" + name + ".html";
    std::ofstream(file, std::ios::binary) << html;
    const std::string chromium = testing::ChromiumCommand(dir);
    const std::string dom_path = dir + "/" + name + ".dom.html";
    const std::string log_path = dir + "/" + name + ".log";
    EXPECT_EQ(Shell(chromium + "--dump-dom file://" + file + " >" + dom_path + " 2>" + log_path), 0)
        << ReadFile(log_path);
    EXPECT_EQ(ReadFile(log_path).find(":CONSOLE"), std::string::npos) << ReadFile(log_path);
    const std::string shots = testing::ScreenshotDir(dir);
    fs::create_directories(shots);
    for (const char* size : {"1280,2400", "390,5000"}) {
      const std::string png = shots + "/" + name + "-" +
                              std::string(size).substr(0, std::string(size).find(',')) + ".png";
      fs::remove(png);
      EXPECT_EQ(Shell(chromium + "--screenshot=" + png + " --window-size=" + size + " file://" +
                      file + " >/dev/null 2>>" + log_path),
                0);
      EXPECT_TRUE(fs::exists(png) && fs::file_size(png) > 10000u) << png;
    }
    return ReadFile(dom_path);
  }

  store::testing::TestDir dir_;
  std::shared_ptr<const dedup::SketchContext> context_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(RepoPagesTest, IdenticalIsOneReportInJsonCsvAndHtml) {
  store::IdenticalReportOptions options;
  const json j = json::parse(Report(options, RepoReportFormat::kJson, WriteIdenticalReport));
  const std::string csv = Report(options, RepoReportFormat::kCsv, WriteIdenticalReport);
  const std::string page = Report(options, RepoReportFormat::kHtml, WriteIdenticalReport);
  ASSERT_EQ(j["sets"].size(), 2u) << j.dump();  // copy3 in 3 folders, copy2 in 2

  // The CSV: a line per URL of each set, the set's columns repeated.
  std::map<uint64_t, std::vector<std::string>> csv_urls;
  for (const std::vector<std::string>& f : CsvRows(csv)) {
    ASSERT_EQ(f.size(), 6u);
    const json& set = j["sets"][std::stoull(f[0]) - 1];
    EXPECT_EQ(std::stoull(f[1]), set["doc"]);
    EXPECT_EQ(std::stoull(f[2]), set["bytes"]);
    EXPECT_EQ(std::stoull(f[3]), set["copies"]);
    EXPECT_EQ(std::stoull(f[4]), set["wasted_bytes"]);
    csv_urls[std::stoull(f[0])].push_back(f[5]);
  }

  if (!testing::HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string dom = Render("identical", page);
  EXPECT_EQ(Figure(dom, "Sets"), j["totals"]["sets"]);
  EXPECT_EQ(Figure(dom, "Copies"), j["totals"]["files"]);
  EXPECT_EQ(Figure(dom, "Wasted"), j["totals"]["wasted_bytes"]);
  EXPECT_EQ(Figure(dom, "Listed"), j["totals"]["listed"]);
  for (const json& set : j["sets"]) {
    const uint64_t rank = set["set"];
    const std::vector<std::string> cells = RowCells(dom, "set-" + std::to_string(rank));
    ASSERT_EQ(cells.size(), 6u) << rank;
    EXPECT_EQ(Number(cells[1]), set["doc"]);
    EXPECT_EQ(Number(cells[2]), set["bytes"]);
    EXPECT_EQ(Number(cells[3]), set["copies"]);
    EXPECT_EQ(Number(cells[4]), set["wasted_bytes"]);
    // The same URLs, each a link to its timeline.
    const std::vector<std::string> urls = LinkTexts(cells[5], "url?url=");
    EXPECT_EQ(urls, set["urls"].get<std::vector<std::string>>());
    EXPECT_EQ(urls, csv_urls[rank]);
  }
  EXPECT_EQ(dom.find("<tr id=\"set-3\">"), std::string::npos);
  EXPECT_NE(dom.find("<a href=\"clusters\">Clusters</a>"), std::string::npos);
}

TEST_F(RepoPagesTest, ClustersIsOneReportInJsonCsvAndHtml) {
  store::ClusterReportOptions options;
  const json j = json::parse(Report(options, RepoReportFormat::kJson, WriteClusterReport));
  const std::string csv = Report(options, RepoReportFormat::kCsv, WriteClusterReport);
  const std::string page = Report(options, RepoReportFormat::kHtml, WriteClusterReport);
  ASSERT_EQ(j["clusters"].size(), 3u) << j.dump();  // the pair, the containment, the group

  // The CSV's cluster, link and document lines per cluster.
  std::map<uint64_t, std::vector<std::string>> csv_urls;
  std::map<uint64_t, uint64_t> csv_links;
  for (const std::vector<std::string>& f : CsvRows(csv)) {
    ASSERT_EQ(f.size(), 13u);
    const uint64_t rank = std::stoull(f[0]);
    const json& c = j["clusters"][rank - 1];
    if (f[1] == "cluster") {
      EXPECT_EQ(f[2], c["type"]);
      EXPECT_EQ(std::stoull(f[3]), c["bytes"]);
      EXPECT_EQ(std::stoull(f[4]), c["documents"]);
      EXPECT_EQ(std::stoull(f[5]), c["links"]);
      EXPECT_EQ(std::stoull(f[7]), c["removable_bytes"]);
      EXPECT_EQ(std::stoull(f[8]), c["keep"]);
    } else if (f[1] == "link") {
      ++csv_links[rank];
    } else {
      csv_urls[rank].push_back(f[12]);
    }
  }

  if (!testing::HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string dom = Render("clusters", page);
  EXPECT_EQ(Figure(dom, "Clusters"), j["totals"]["clusters"]);
  EXPECT_EQ(Figure(dom, "Documents"), j["totals"]["documents"]);
  EXPECT_EQ(Figure(dom, "Links"), j["totals"]["links"]);
  EXPECT_EQ(Figure(dom, "Removable"), j["totals"]["removable_bytes"]);
  EXPECT_EQ(Figure(dom, "Pairs checked"), j["totals"]["pairs_checked"]);
  for (const json& c : j["clusters"]) {
    const uint64_t rank = c["cluster"];
    const std::string anchor = "cluster-" + std::to_string(rank);
    // The summary row links to the cluster's section.
    const std::vector<std::string> cells = RowCells(dom, "row-" + anchor);
    ASSERT_EQ(cells.size(), 8u) << rank;
    EXPECT_NE(cells[0].find("href=\"#" + anchor + "\""), std::string::npos) << cells[0];
    EXPECT_EQ(Number(cells[2]), c["documents"]);
    EXPECT_EQ(Number(cells[3]), c["links"]);
    EXPECT_EQ(Number(cells[4]), c["bytes"]);
    EXPECT_EQ(Text(cells[5]), html::Fixed(c["average_similarity"].get<double>(), 2));
    EXPECT_EQ(Number(cells[6]), c["keep"]);
    EXPECT_EQ(Number(cells[7]), c["removable_bytes"]);
    // The section lists the same URLs, each a link to its timeline, and the same links.
    const size_t at = dom.find("<section id=\"" + anchor + "\"");
    ASSERT_NE(at, std::string::npos) << anchor;
    const std::string section = dom.substr(at, dom.find("</section>", at) - at);
    std::vector<std::string> urls;
    for (const json& m : c["members"]) {
      for (const json& u : m["urls"]) urls.push_back(u.get<std::string>());
    }
    EXPECT_EQ(LinkTexts(section, "url?url="), urls);
    EXPECT_EQ(LinkTexts(section, "url?url="), csv_urls[rank]);
    size_t link_rows = 0;
    for (const json& l : c["link_list"]) {
      const std::string pair = ">" + std::to_string(l["a"].get<uint64_t>()) + " and " +
                               std::to_string(l["b"].get<uint64_t>()) + "<";
      if (section.find(pair) != std::string::npos) ++link_rows;
    }
    EXPECT_EQ(link_rows, c["links"]);
    EXPECT_EQ(csv_links[rank], c["links"]);
  }
  EXPECT_EQ(dom.find("id=\"cluster-4\""), std::string::npos);
}

// The CLI's page (no server behind it) links nowhere, and says the same.
TEST_F(RepoPagesTest, APageWithoutLinksHoldsTheSameRows) {
  store::IdenticalReportOptions options;
  std::string page;
  ASSERT_TRUE(
      WriteIdenticalReport(*store_, options, RepoReportFormat::kHtml, [&](std::string_view text) {
        page.append(text);
        return OkStatus();
      }).ok());
  EXPECT_EQ(page.find("<a href"), std::string::npos);
  EXPECT_EQ(page.find("<nav"), std::string::npos);
  EXPECT_NE(page.find("<tr id=\"set-2\">"), std::string::npos);
  EXPECT_NE(page.find(std::string(kRoot) + "a/copy3.txt"), std::string::npos);
}

}  // namespace
}  // namespace shingled::report
