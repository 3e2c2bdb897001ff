// The pages of what the store holds (report/store_pages.h): the largest clusters and the identical
// sets, and one URL's timeline, from a real store; each rendered by headless Chromium (no console
// message, the store's figures in the DOM, screenshots at 1280 and 390 px).
#include "report/store_pages.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dedup/estimate.h"
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

TEST_F(StorePagesTest, TheClustersPageListsTheLargestClustersAndTheIdenticalSets) {
  StatusOr<std::string> html = ClustersHtml(*store_, 10);
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  StatusOr<store::ClusterListPage> clusters = store_->ListClusters({});
  ASSERT_TRUE(clusters.ok());
  ASSERT_FALSE(clusters->clusters.empty());
  StatusOr<store::IdenticalSetPage> sets = store_->ListIdenticalSets({});
  ASSERT_TRUE(sets.ok());
  ASSERT_FALSE(sets->sets.empty());
  // The copies of one content: the two at a.example/two and the hostile URL share a document,
  // b.example/three an equivalent one (a.example/one changed away).
  EXPECT_EQ(sets->sets[0].url_count, 3u);
  EXPECT_NE(html->find("<h2 id=\"clusters\">Largest clusters</h2>"), std::string::npos);
  EXPECT_NE(html->find("<h2 id=\"identical\">Identical sets</h2>"), std::string::npos);
  EXPECT_EQ(html->find("<script>alert"), std::string::npos);  // escaped

  if (!testing::HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string dom = Render("clusters", *html);
  EXPECT_NE(dom.find("<h1>Clusters and identical pages</h1>"), std::string::npos);
  const store::ClusterSummary& largest = clusters->clusters[0];
  EXPECT_NE(dom.find("cluster " + std::to_string(largest.id)), std::string::npos);
  EXPECT_NE(dom.find(html::Count(largest.size) + " documents"), std::string::npos);
  EXPECT_NE(dom.find("https://a.example/two"), std::string::npos);
  EXPECT_NE(dom.find("https://b.example/three"), std::string::npos);
  EXPECT_NE(dom.find("evil.example/&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(dom.find("<script"), std::string::npos);
}

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

  if (!testing::HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string dom = Render("url-timeline", *html);
  EXPECT_NE(dom.find("<h1>The history of one URL</h1>"), std::string::npos);
  EXPECT_NE(dom.find(kTimeline), std::string::npos);
  EXPECT_NE(dom.find(html::Fixed(r, 2)), std::string::npos) << html::Fixed(r, 2);
  EXPECT_NE(dom.find("2026-02-01 00:00"), std::string::npos);  // the edit's date
  EXPECT_NE(dom.find(">gone<"), std::string::npos);            // the 404's verdict
  EXPECT_NE(dom.find(std::string(store::LostStatusName(lost->status))), std::string::npos);
}

TEST_F(StorePagesTest, TheIndexLinksEveryReportAndEachSweepsChanges) {
  StatusOr<std::string> html = ReportIndexHtml(*store_, "");
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  // Each sweep after the first links to its changes since the one before.
  EXPECT_NE(html->find("href=\"changes?from=2026-01&amp;to=2026-02\""), std::string::npos);
  EXPECT_NE(html->find("href=\"changes?from=2026-02&amp;to=2026-03\""), std::string::npos);
  EXPECT_NE(html->find("href=\"clusters\""), std::string::npos);
  StatusOr<std::string> bare = ReportIndexHtml(*store_, "reports/");
  ASSERT_TRUE(bare.ok());
  EXPECT_NE(bare->find("action=\"reports/url\""), std::string::npos);

  if (!testing::HaveChromium()) GTEST_SKIP() << "chromium is not installed";
  const std::string dom = Render("index", *html);
  EXPECT_NE(dom.find("<h1>Reports</h1>"), std::string::npos);
  EXPECT_NE(dom.find("since 2026-02"), std::string::npos);
  EXPECT_NE(dom.find("<label for=\"url\">URL</label>"), std::string::npos);
}

TEST_F(StorePagesTest, AUrlNeverStoredIsNotFound) {
  EXPECT_EQ(UrlTimelineHtml(*store_, "https://a.example/never").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ClustersHtml(*store_, 0).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace shingled::report
