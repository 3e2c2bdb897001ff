// The move rule (store/internal/moves.h; docs/REPORTS.md, "Moves") and the agreement of the
// answers built on it: a documentation site of real HTML pages (a navigation shared by every
// page, so that its chunks are template) crawled twice, with known deletions, moves (the same
// content, edited, by redirect), edits and births. The change report, its lists, lost and found
// and the URL timeline must give the truth for every URL, and no deleted page may move: not to a
// page that holds a few of its sentences (the MOD samples' containment of a short page
// overshoots), nor to a near-empty page that resembles it through the navigation alone.
#include "store/internal/moves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "dedup/sketch.h"
#include "store/store.h"
#include "tests/store/doc_text.h"
#include "tests/store/store_fixture.h"

namespace shingled::store {
namespace {

using ::shingled::testing::DocEdit;
using ::shingled::testing::DocPage;
using ::shingled::testing::DocText;
using Seeds = std::vector<uint64_t>;
using internal::ContentMatch;
using internal::JudgeContentMove;
using internal::MoveEvidence;

constexpr int64_t kDay = 86400;
constexpr int64_t kT1 = 100 * kDay, kT2 = 130 * kDay;
const char kSite[] = "http://docs.test/";

// --- the rule alone ---

CommonBytes Common(uint64_t length_a, uint64_t length_b, uint64_t shared, uint64_t template_b) {
  CommonBytes c;
  c.known = c.a_known = c.b_known = true;
  c.length_a = length_a;
  c.length_b = length_b;
  c.shared_bytes = shared;
  c.template_b = template_b;
  c.share_a = static_cast<double>(shared) / static_cast<double>(length_a);
  c.share_b = static_cast<double>(shared) / static_cast<double>(length_b);
  return c;
}

TEST(MoveRuleTest, TheSameContentIsAMoveWhateverElse) {
  ContentMatch m;
  m.same_content = true;
  m.common = Common(1000, 1000, 0, 900);  // even a page that is all template
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kSameContent);
}

TEST(MoveRuleTest, ResemblanceFromTheThreshold) {
  ContentMatch m;
  m.resemblance = internal::kMoveResemblance;
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kResemblance);
  m.resemblance = internal::kMoveResemblance - 0.01;
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kNone);
}

CommonBytes WithTemplate(CommonBytes c, uint64_t template_in_common) {
  c.template_bytes = template_in_common;
  return c;
}

TEST(MoveRuleTest, ResemblanceOutsideTheTemplate) {
  // Without template in common (or chunks unknown), the resemblance itself.
  EXPECT_EQ(internal::ResemblanceOutsideTemplate(0.53, Common(6000, 6000, 0, 0)), 0.53);
  EXPECT_EQ(internal::ResemblanceOutsideTemplate(0.53, CommonBytes{}), 0.53);
  // Two texts of 1,000 and 3,000 bytes sharing a template of 400 and 100 more: X = 500 of a
  // union of 3,500 (1/7); without the template, 100 of 600 + 2,600 - 100.
  EXPECT_NEAR(internal::ResemblanceOutsideTemplate(1.0 / 7,
                                                   WithTemplate(Common(1000, 3000, 100, 400), 400)),
              100.0 / 3100, 1e-12);
  // The same pages by resemblance 0.6: a move, unless the template explains it.
  ContentMatch m;
  m.resemblance = 0.6;
  m.common = WithTemplate(Common(4000, 4000, 2000, 400), 400);
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kResemblance);
  m.resemblance = 0.45;
  m.common = WithTemplate(Common(1800, 3900, 0, 1250), 1250);  // a short page and a long one
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kNone);
}

TEST(MoveRuleTest, ContainmentOnlyFromBytesInCommon) {
  ContentMatch m;
  m.resemblance = 0.1;
  // Chunks unknown: nothing shows containment, whatever a MOD sample says.
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kNone);
  m.common = Common(1000, 5000, 600, 0);
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kContainment);
  m.common = Common(1000, 5000, 599, 0);
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kNone);
}

TEST(MoveRuleTest, NoMoveToAPageThatIsMostlyTemplate) {
  ContentMatch m;
  m.resemblance = 0.9;
  m.common = Common(1000, 1000, 900, 501);
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kNone);
  m.common = Common(1000, 1000, 900, 500);  // half template: still a page of its own
  EXPECT_EQ(JudgeContentMove(m), MoveEvidence::kResemblance);
}

// --- a site crawled twice ---

// The navigation every page of the site shows: long enough to make whole chunks of its own,
// which the host share makes template.
std::string Navigation() {
  std::string nav = "<nav><ul>";
  for (int i = 0; i < 40; ++i) {
    nav += "<li><a href=\"/section-" + std::to_string(i) + ".html\">Chapter " + std::to_string(i) +
           " of the reference manual</a></li>";
  }
  return nav + "</ul></nav>";
}

std::string Html(const Seeds& body) {
  static const std::string nav = Navigation();
  return "<!doctype html><html><head><title>Manual</title></head><body>" + nav + "<main><p>" +
         DocText(body) + "</p></main><footer>Copyright the documentation team</footer></body>" +
         "</html>";
}

class MovesTest : public testing::StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto ctx = dedup::SketchContext::Create(params_);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    context_ = *ctx;
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
  }

  struct Crawl {
    std::map<std::string, Seeds> pages;
    std::map<std::string, std::string> redirects;  // path -> target path (301)
  };

  // One sweep at `date` over the whole site, closed a day later: the URLs it did not see
  // become gone.
  SweepId Sweep(const std::string& name, int64_t date, const Crawl& crawl) {
    StatusOr<SweepInfo> s = store_->OpenSweep(name, date, {kSite});
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return 0;
    std::vector<PageInput> pages;
    int64_t at = date;
    for (const auto& [path, body] : crawl.pages) {
      PageInput p;
      p.url = kSite + path;
      p.sweep = s->id;
      p.date = at++;
      p.sketch = dedup::SketchPage(*context_, Html(body), "text/html");
      pages.push_back(std::move(p));
    }
    for (const auto& [path, target] : crawl.redirects) {
      PageInput p;
      p.url = kSite + path;
      p.sweep = s->id;
      p.date = at++;
      p.http_status = 301;
      p.redirect_target = kSite + target;
      pages.push_back(std::move(p));
    }
    StatusOr<std::vector<PageResult>> r = store_->Apply(pages);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) {
      for (const PageResult& pr : *r) EXPECT_TRUE(pr.status.ok()) << pr.status.ToString();
    }
    EXPECT_TRUE(store_->CloseSweep(s->id, date + kDay).ok());
    return s->id;
  }

  std::vector<ChangeRow> Rows(SweepId from, SweepId to, ChangeKind kind) {
    ChangeListOptions o;
    o.kind = kind;
    o.limit = 1000;
    StatusOr<ChangeList> list = store_->ListChanges(from, to, o);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    return list.ok() ? list->rows : std::vector<ChangeRow>{};
  }

  std::shared_ptr<const dedup::SketchContext> context_;
  std::unique_ptr<Store> store_;
};
SHINGLED_STORE_ENGINES(MovesTest);

TEST_P(MovesTest, TheReportsAndLostAndFoundTellTheTruthForEveryUrl) {
  // The first crawl: 36 stable pages, and the pages that will change.
  Crawl one;
  for (int i = 0; i < 36; ++i)
    one.pages["stable-" + std::to_string(i) + ".html"] = DocPage(100 + i, 25);
  const Seeds long_page = DocPage(20, 25);
  // A short page three of whose four sentences are in `long_page` (the MOD samples' containment
  // of it in that page is high; its bytes in common are not).
  const Seeds short_page = {long_page[3], long_page[4], long_page[5], 21000};
  one.pages["long.html"] = long_page;
  one.pages["app-dropdb.html"] = short_page;
  one.pages["app-clusterdb.html"] = DocPage(22, 4);  // short, about nothing else on the site
  one.pages["deleted-a.html"] = DocPage(23, 25);
  one.pages["deleted-b.html"] = DocPage(24, 25);
  one.pages["moved-same.html"] = DocPage(30, 25);
  one.pages["moved-edited.html"] = DocPage(31, 25);
  one.pages["moved-redirect.html"] = DocPage(32, 25);
  for (int i = 0; i < 3; ++i)
    one.pages["edited-" + std::to_string(i) + ".html"] = DocPage(40 + i, 25);

  // The second: the deletions, the moves, the edits (the long page too), a born page and a
  // near-empty one (the navigation and one sentence).
  Crawl two;
  for (int i = 0; i < 36; ++i)
    two.pages["stable-" + std::to_string(i) + ".html"] =
        one.pages["stable-" + std::to_string(i) + ".html"];
  two.pages["long.html"] = DocEdit(long_page, 0.1, 1);
  two.pages["new/moved-same.html"] = DocPage(30, 25);
  two.pages["new/moved-edited.html"] = DocEdit(DocPage(31, 25), 0.12, 2);
  two.pages["new/moved-redirect.html"] = DocPage(32, 25);
  two.redirects["moved-redirect.html"] = "new/moved-redirect.html";
  for (int i = 0; i < 3; ++i)
    two.pages["edited-" + std::to_string(i) + ".html"] =
        DocEdit(DocPage(40 + i, 25), 0.2, 3 + static_cast<uint64_t>(i));
  two.pages["born.html"] = DocPage(50, 25);
  two.pages["empty.html"] = {50000};

  const SweepId s1 = Sweep("one", kT1, one);
  const SweepId s2 = Sweep("two", kT2, two);
  ASSERT_FALSE(HasFailure());

  // The truth.
  const std::map<std::string, std::string> moved = {
      {"moved-same.html", "new/moved-same.html"},
      {"moved-edited.html", "new/moved-edited.html"},
      {"moved-redirect.html", "new/moved-redirect.html"}};
  const std::vector<std::string> died = {"app-dropdb.html", "app-clusterdb.html", "deleted-a.html",
                                         "deleted-b.html"};

  StatusOr<ChangeReport> report = store_->ChangesBetween(s1, s2);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const ChangeCounts& c = report->total;
  EXPECT_EQ(c.unchanged, 36u);
  EXPECT_EQ(c.changed, 4u);  // three edited and the long page
  EXPECT_EQ(c.moved, moved.size());
  EXPECT_EQ(c.moved_by_redirect, 1u);
  EXPECT_EQ(c.died, died.size());
  EXPECT_EQ(c.moved_in, moved.size());
  EXPECT_EQ(c.born, 2u);  // born.html and empty.html
  EXPECT_EQ(c.not_seen, 0u);

  // The lists say the same, row for row, and each move goes where it went.
  const std::vector<ChangeRow> moves = Rows(s1, s2, ChangeKind::kMoved);
  std::string listed_moves;
  for (const ChangeRow& r : moves) {
    listed_moves += r.url + " -> " + r.new_url + " (" + r.evidence + ", resemblance " +
                    std::to_string(r.resemblance) + ", containment " +
                    std::to_string(r.containment) + ")\n";
  }
  ASSERT_EQ(moves.size(), moved.size()) << listed_moves;
  std::map<std::string, std::string> listed;
  for (const ChangeRow& r : moves) listed[r.url.substr(sizeof(kSite) - 1)] = r.new_url;
  for (const auto& [from, to] : moved) EXPECT_EQ(listed[from], kSite + to) << from;
  std::vector<std::string> dead_rows;
  for (const ChangeRow& r : Rows(s1, s2, ChangeKind::kDied)) {
    dead_rows.push_back(r.url.substr(sizeof(kSite) - 1));
  }
  std::sort(dead_rows.begin(), dead_rows.end());
  std::vector<std::string> expected_dead = died;
  std::sort(expected_dead.begin(), expected_dead.end());
  EXPECT_EQ(dead_rows, expected_dead);

  // Lost and found (and so the URL timeline, which shows its answer) agrees for every URL.
  for (const auto& [from, to] : moved) {
    StatusOr<LostAndFound> l = store_->Lost(kSite + from);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    EXPECT_EQ(l->status, LostStatus::kMoved) << from;
    ASSERT_TRUE(l->best.has_value()) << from;
    EXPECT_EQ(l->best->url, kSite + to) << from;
  }
  for (const std::string& path : died) {
    StatusOr<LostAndFound> l = store_->Lost(kSite + path);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    EXPECT_EQ(l->status, LostStatus::kDead) << path;
    EXPECT_FALSE(l->best.has_value()) << path << " -> " << l->best->url << ": " << l->best->why;
  }
  for (const char* path : {"long.html", "edited-0.html", "stable-0.html", "born.html"}) {
    StatusOr<LostAndFound> l = store_->Lost(kSite + std::string(path));
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    EXPECT_EQ(l->status, LostStatus::kAlive) << path;
  }
}

// The two traps of the site above, shown to be traps: without the rule, each would be a move.
TEST_P(MovesTest, TheTrapsAreReal) {
  Crawl one;
  for (int i = 0; i < 36; ++i)
    one.pages["stable-" + std::to_string(i) + ".html"] = DocPage(100 + i, 25);
  const Seeds long_page = DocPage(20, 25);
  one.pages["long.html"] = long_page;
  one.pages["app-dropdb.html"] = {long_page[3], long_page[4], long_page[5], 21000};
  one.pages["app-clusterdb.html"] = DocPage(22, 4);
  one.pages["empty.html"] = {50000};
  Sweep("one", kT1, one);
  ASSERT_FALSE(HasFailure());
  auto doc_of = [&](const std::string& path) {
    StatusOr<std::vector<UrlVersion>> h = store_->History(kSite + path);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    return h.ok() ? h->back().doc : DocId{0};
  };
  // The near-empty page resembles the short one through the navigation, and is mostly template.
  StatusOr<DocumentInfo> clusterdb = store_->Document(doc_of("app-clusterdb.html"));
  StatusOr<DocumentInfo> empty = store_->Document(doc_of("empty.html"));
  ASSERT_TRUE(clusterdb.ok() && empty.ok());
  EXPECT_GE(dedup::ResemblanceFromMinhashes(clusterdb->sketch, empty->sketch),
            internal::kMoveResemblance);
  StatusOr<CommonBytes> common = store_->BytesInCommon(clusterdb->id, empty->id, 0);
  ASSERT_TRUE(common.ok()) << common.status().ToString();
  EXPECT_TRUE(internal::MostlyTemplate(*common));
  // The short page's bytes in common with the long one are far below the rule's.
  common = store_->BytesInCommon(doc_of("app-dropdb.html"), doc_of("long.html"), 0);
  ASSERT_TRUE(common.ok()) << common.status().ToString();
  EXPECT_TRUE(common->known);
  EXPECT_LT(common->share_a, internal::kMoveContainment);
}

}  // namespace
}  // namespace shingled::store
