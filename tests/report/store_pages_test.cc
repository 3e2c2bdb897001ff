// The pages of what the store holds (report/store_pages.h): one URL's timeline and the index of
// the report pages, from a real store; each rendered by headless Chromium (no console message,
// the store's figures in the DOM, screenshots at 1280 and 390 px).
#include "report/store_pages.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "report/changes.h"
#include "report/html.h"
#include "tests/report/chromium.h"
#include "tests/store/store_fixture.h"

namespace shingled::report {
namespace {

namespace fs = std::filesystem;
using store::testing::Range;
using store::testing::Variant;
using testing::ReadFile;
using testing::Shell;

constexpr int64_t kT0 = 1767225600;  // 2026-01-01
constexpr int64_t kDay = 86400;
constexpr const char* kHostile = "http://evil.example/<script>alert(1)</script>";

class StorePagesTest : public store::testing::StoreFixture {
 protected:
  void SetUp() override {
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
    const store::SweepId s1 = store_->OpenSweep("2026-01", kT0)->id;
    // Three URLs with one content (two raw-byte variants: an identical set), a near copy that
    // joins their cluster, an unrelated page, and the hostile URL with the same content.
    std::vector<store::PageInput> pages = {
        Page("https://a.example/one", s1, kT0, Range(1000, 600)),
        Page("https://a.example/two", s1, kT0, Range(1000, 600)),
        Page("https://b.example/three", s1, kT0, Range(1000, 600), 1),
        Page("https://b.example/near", s1, kT0, Variant(1000, 600, 595, 50000)),
        Page("https://c.example/other", s1, kT0, Range(90000, 600)),
        Page(kHostile, s1, kT0, Range(1000, 600)),
    };
    ASSERT_TRUE(store_->Apply(pages).ok());
    // The timeline's URL: edited in sweep 2 (a new document), then dead in sweep 3.
    const store::SweepId s2 = store_->OpenSweep("2026-02", kT0 + 31 * kDay)->id;
    edited_ = Variant(1000, 600, 450, 70000);
    ASSERT_TRUE(ApplyOne(*store_, Page(kTimeline, s2, kT0 + 31 * kDay, edited_)).status.ok());
    const store::SweepId s3 = store_->OpenSweep("2026-03", kT0 + 59 * kDay)->id;
    store::PageInput dead = Page(kTimeline, s3, kT0 + 59 * kDay, {});
    dead.http_status = 404;
    ASSERT_TRUE(ApplyOne(*store_, dead).status.ok());
    // A daemon's default sweep, opened last and never given a page.
    ASSERT_TRUE(store_->OpenSweep("default", kT0 + 90 * kDay).ok());
  }

  // Renders `html` in Chromium: its DOM, after checking no console message; screenshots named
  // after `name`.
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
    for (const char* size : {"1280,2400", "390,4000"}) {
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

  static constexpr const char* kTimeline = "https://a.example/one";
  std::unique_ptr<store::Store> store_;
  std::vector<uint64_t> edited_;
};

TEST_F(StorePagesTest, TheTimelineShowsEachVersionAndTheResemblanceBetweenContents) {
  StatusOr<std::string> html = UrlTimelineHtml(*store_, kTimeline);
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  // The resemblance of the edit, as the store estimates it from the two documents' minhashes.
  StatusOr<std::vector<store::UrlVersion>> history = store_->History(kTimeline);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 3u);
  const double r = dedup::ResemblanceFromMinhashes(store_->Document((*history)[0].doc)->sketch,
                                                   store_->Document((*history)[1].doc)->sketch);
  EXPECT_GT(r, 0.3);
  EXPECT_LT(r, 0.9);
  StatusOr<store::LostAndFound> lost = store_->Lost(kTimeline);
  ASSERT_TRUE(lost.ok());

  // Sweeps by name, never by id.
  EXPECT_NE(html->find("<td data-label=\"Sweep\"><span class=\"nowrap\">2026-02</span></td>"),
            std::string::npos);
  // The resemblance drawn to scale on a 0-1 axis: 290 units are 1.
  char width[32];
  std::snprintf(width, sizeof width, "width=\"%.1f\"", 290 * r);
  EXPECT_NE(html->find(width), std::string::npos) << width;
  EXPECT_NE(html->find(">Resemblance to the previous content</text>"), std::string::npos);
  EXPECT_NE(html->find(">0.50</text>"), std::string::npos);  // a tick
  // Linked pages link the other reports; a page from the command line links nowhere.
  StatusOr<std::string> linked = UrlTimelineHtml(*store_, kTimeline, html::Links::FromReports());
  ASSERT_TRUE(linked.ok());
  EXPECT_NE(linked->find("<a href=\"clusters\">Clusters</a>"), std::string::npos);
  EXPECT_NE(linked->find("<a href=\"./\">All reports</a>"), std::string::npos);
  EXPECT_EQ(html->find("<nav"), std::string::npos);

  if (!testing::HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string dom = Render("url-timeline", *linked);
  EXPECT_NE(dom.find("<h1>The history of one URL</h1>"), std::string::npos);
  EXPECT_NE(dom.find(kTimeline), std::string::npos);
  EXPECT_NE(dom.find(html::Fixed(r, 2)), std::string::npos) << html::Fixed(r, 2);
  EXPECT_NE(dom.find("2026-02-01 00:00"), std::string::npos);  // the edit's date
  EXPECT_NE(dom.find(">gone<"), std::string::npos);            // the 404's verdict
  EXPECT_NE(dom.find(std::string(store::LostStatusName(lost->status))), std::string::npos);
}

TEST_F(StorePagesTest, TheIndexLinksEveryReportAndEachSweepsChanges) {
  StatusOr<std::string> html = ReportIndexHtml(*store_, html::Links::FromReports());
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  // Each sweep with pages after the first links to its changes since the one before.
  EXPECT_NE(html->find("href=\"changes?from=2026-01&amp;to=2026-02\""), std::string::npos);
  EXPECT_NE(html->find("href=\"changes?from=2026-02&amp;to=2026-03\""), std::string::npos);
  EXPECT_EQ(html->find("to=default"), std::string::npos);
  EXPECT_NE(html->find("empty: compared with nothing"), std::string::npos);
  for (const char* page : {"changes", "history", "identical", "clusters"}) {
    EXPECT_NE(html->find("href=\"" + std::string(page) + "\""), std::string::npos) << page;
  }
  StatusOr<std::string> bare = ReportIndexHtml(*store_, html::Links{true, "reports/", "v1/"});
  ASSERT_TRUE(bare.ok());
  EXPECT_NE(bare->find("action=\"reports/url\""), std::string::npos);

  if (!testing::HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string dom = Render("index", *html);
  EXPECT_NE(dom.find("<h1>Reports</h1>"), std::string::npos);
  EXPECT_NE(dom.find("since 2026-02"), std::string::npos);
  EXPECT_NE(dom.find("<label for=\"url-input\">URL</label>"), std::string::npos);
}

// The daemon's default sweep, opened last and empty, is not one of "the last two sweeps", and
// the series over all sweeps skips it.
TEST_F(StorePagesTest, EmptySweepsAreLeftOutOfTheLastTwo) {
  auto pair = ResolveSweeps(*store_, "", "");
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  EXPECT_EQ(pair->first.name, "2026-02");
  EXPECT_EQ(pair->second.name, "2026-03");
  StatusOr<store::ChangeHistory> history = HistoryOverSweeps(*store_);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->intervals.size(), 2u);
  EXPECT_EQ(history->intervals[1].to.name, "2026-03");
  const Json j = HistoryJson(*history);
  EXPECT_EQ(j["sweeps"].size(), 3u);
  EXPECT_EQ(j["series"][1]["to"]["name"], "2026-03");
}

TEST_F(StorePagesTest, AUrlNeverStoredIsNotFound) {
  EXPECT_EQ(UrlTimelineHtml(*store_, "https://a.example/never").status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace shingled::report
