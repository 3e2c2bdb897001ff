// Lost and found (Store::Lost) over real sketches of documentation-like text: moves with the same
// content, edited moves (resemblance 0.5-0.8, which the default clusters do not join), a
// successor edited again after the move, a chain of two moves, a redirect against a more similar
// page, ranking by resemblance before recency, a URL alive, one dead, one never seen.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "dedup/sketch.h"
#include "dedup/tokenizer.h"
#include "store/store.h"
#include "tests/store/doc_text.h"
#include "tests/store/store_fixture.h"

namespace shingled::store {
namespace {

using ::shingled::testing::DocEdit;
using ::shingled::testing::DocPage;
using ::shingled::testing::DocText;
using Seeds = std::vector<uint64_t>;

constexpr int64_t kDay = 86400;
// Sweeps a month apart, as a monthly crawl of a documentation site.
constexpr int64_t kT1 = 100 * kDay, kT2 = 130 * kDay, kT4 = 200 * kDay;
const char kSite[] = "http://docs.test/";

class LostTest : public testing::StoreConformance {
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

  dedup::Sketch SketchOf(const Seeds& page) {
    const std::string text = DocText(page);
    dedup::Sketcher sketcher(*context_);
    dedup::Tokenizer tokenizer(&sketcher);
    sketcher.AddRawBytes(text);
    tokenizer.Feed(text);
    tokenizer.Finish();
    return sketcher.Finish();
  }
  double Resemblance(const Seeds& a, const Seeds& b) {
    return dedup::ResemblanceFromMinhashes(SketchOf(a), SketchOf(b));
  }

  // One sweep at `date`: the pages given (path -> content), the redirects (path -> target path,
  // 301) and the 404s; closed a day later, so that the site's URLs not seen become gone.
  struct Sweep {
    std::vector<std::pair<std::string, Seeds>> pages;
    std::vector<std::pair<std::string, std::string>> redirects;
    std::vector<std::string> dead;
  };
  void Crawl(const std::string& name, int64_t date, const Sweep& sweep) {
    StatusOr<SweepInfo> s = store_->OpenSweep(name, date, {kSite});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    std::vector<PageInput> pages;
    int64_t at = fetched_at_ != 0 ? fetched_at_ : date;
    for (const auto& [path, seeds] : sweep.pages) {
      PageInput p;
      p.url = kSite + path;
      p.sweep = s->id;
      p.date = fetched_at_ != 0 ? at : at++;
      p.sketch = SketchOf(seeds);
      pages.push_back(std::move(p));
    }
    for (const auto& [path, target] : sweep.redirects) {
      PageInput p;
      p.url = kSite + path;
      p.sweep = s->id;
      p.date = at++;
      p.http_status = 301;
      p.redirect_target = kSite + target;
      pages.push_back(std::move(p));
    }
    for (const std::string& path : sweep.dead) {
      PageInput p;
      p.url = kSite + path;
      p.sweep = s->id;
      p.date = at++;
      p.http_status = 404;
      pages.push_back(std::move(p));
    }
    StatusOr<std::vector<PageResult>> r = store_->Apply(pages);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (const PageResult& pr : *r) ASSERT_TRUE(pr.status.ok()) << pr.status.ToString();
    ASSERT_TRUE(store_->CloseSweep(s->id, date + kDay).ok());
  }

  LostAndFound Lost(const std::string& path, const LostOptions& options = {}) {
    StatusOr<LostAndFound> l = store_->Lost(kSite + path, options);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    return l.ok() ? *l : LostAndFound{};
  }
  static std::string Url(const std::string& path) { return kSite + path; }
  DocId LastDoc(const std::string& path) {
    StatusOr<std::vector<UrlVersion>> h = store_->History(kSite + path);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    return h.ok() ? h->back().doc : 0;
  }

  // When not 0, every page of a sweep is fetched at this time (sweeps whose fetches share a
  // second).
  int64_t fetched_at_ = 0;
  std::shared_ptr<const dedup::SketchContext> context_;
  std::unique_ptr<Store> store_;
  // Three unrelated pages that stay where they are.
  const Sweep kStable = {
      {{"intro.html", DocPage(1)}, {"faq.html", DocPage(2)}, {"api.html", DocPage(3)}}, {}, {}};
  Sweep With(std::vector<std::pair<std::string, Seeds>> pages,
             std::vector<std::pair<std::string, std::string>> redirects = {},
             std::vector<std::string> dead = {}) const {
    Sweep s = kStable;
    for (auto& p : pages) s.pages.push_back(std::move(p));
    s.redirects = std::move(redirects);
    s.dead = std::move(dead);
    return s;
  }
};
SHINGLED_STORE_ENGINES(LostTest);

TEST_P(LostTest, MoveWithTheSameContent) {
  const Seeds a = DocPage(10);
  Crawl("s1", kT1, With({{"guide/install.html", a}}));
  Crawl("s2", kT2, With({{"v2/guide/install.html", a}}));  // the old URL is gone at the close
  const LostAndFound l = Lost("guide/install.html");
  EXPECT_EQ(l.status, LostStatus::kMoved);
  EXPECT_EQ(l.last_seen_live, kT1 + 3);
  EXPECT_EQ(l.died, kT2 + kDay);
  ASSERT_TRUE(l.best.has_value());
  EXPECT_EQ(l.best->url, Url("v2/guide/install.html"));
  EXPECT_EQ(l.best->evidence, SuccessorEvidence::kContent);
  EXPECT_EQ(l.best->resemblance, 1.0);
  EXPECT_EQ(l.best->resemblance_now, 1.0);
  EXPECT_TRUE(l.best->born_when_died);
  EXPECT_EQ(l.best->born_or_changed, kT2 + 3);
  EXPECT_EQ(l.best->why, "same content, born 1970-05-11 when the old URL died");
  EXPECT_TRUE(l.candidates.empty());
  EXPECT_FALSE(l.truncated);
}

// Two sweeps posted within one second (a pipeline that stamps pages with the time it posts them):
// the page first seen in the later sweep was born when the old URL died, as the change report says.
TEST_P(LostTest, MoveBetweenSweepsWhoseFetchesShareASecond) {
  const Seeds a = DocPage(10);
  fetched_at_ = kT2;
  Crawl("s1", kT1, With({{"guide/install.html", a}}));
  Crawl("s2", kT2, With({{"v2/guide/install.html", a}}, {}, {"guide/install.html"}));
  const LostAndFound l = Lost("guide/install.html");
  EXPECT_EQ(l.status, LostStatus::kMoved);
  ASSERT_TRUE(l.best.has_value());
  EXPECT_EQ(l.best->url, Url("v2/guide/install.html"));
  EXPECT_TRUE(l.best->born_when_died);
}

TEST_P(LostTest, MoveEditedToResemblanceSeventy) {
  const Seeds a = DocPage(10);
  const Seeds edited = DocEdit(a, 0.12, 1);
  const double r = Resemblance(a, edited);
  ASSERT_GE(r, 0.5);
  ASSERT_LE(r, 0.8);
  Crawl("s1", kT1, With({{"guide/install.html", a}}));
  Crawl("s2", kT2, With({{"v2/setup/install.html", edited}}));
  // Not in one cluster under the default relations (exact + fungible): the old answer's limit.
  StatusOr<DocumentInfo> moved = store_->Document(LastDoc("v2/setup/install.html"));
  ASSERT_TRUE(moved.ok());
  const LostAndFound l = Lost("guide/install.html");
  EXPECT_NE(moved->cluster, l.cluster);
  EXPECT_EQ(l.status, LostStatus::kMoved);
  ASSERT_TRUE(l.best.has_value());
  EXPECT_EQ(l.best->url, Url("v2/setup/install.html"));
  // The `similar` queries' estimate (the verification samples), near the minhashes'.
  EXPECT_NEAR(l.best->resemblance, r, 0.06);
  // Containment from the bytes in common: edits spread over the page break most chunks, so the
  // move is shown by resemblance.
  StatusOr<CommonBytes> common = store_->BytesInCommon(l.last_doc, l.best->doc, 0);
  ASSERT_TRUE(common.ok()) << common.status().ToString();
  EXPECT_DOUBLE_EQ(l.best->containment, common->share_a);
  EXPECT_TRUE(l.best->born_when_died);
  EXPECT_NE(l.best->why.find("near copy, resemblance "), std::string::npos) << l.best->why;
}

TEST_P(LostTest, SuccessorEditedAgainAfterTheMove) {
  const Seeds a = DocPage(10);
  const Seeds rewritten = DocEdit(a, 0.3, 2);
  // The rewrite leaves what the search from the old sketch would accept by itself.
  ASSERT_LT(Resemblance(a, rewritten), 0.4);
  Crawl("s1", kT1, With({{"guide/install.html", a}}));
  Crawl("s2", kT2, With({{"v2/install.html", a}}));
  Crawl("s3", kT4, With({{"v2/install.html", rewritten}}));
  const LostAndFound l = Lost("guide/install.html");
  // The successor left the old document's cluster.
  StatusOr<DocumentInfo> now = store_->Document(LastDoc("v2/install.html"));
  ASSERT_TRUE(now.ok());
  EXPECT_NE(now->cluster, l.cluster);
  EXPECT_EQ(l.status, LostStatus::kMoved);
  ASSERT_TRUE(l.best.has_value());
  EXPECT_EQ(l.best->url, Url("v2/install.html"));
  EXPECT_EQ(l.best->resemblance, 1.0);  // its version of sweep 2
  EXPECT_EQ(l.best->matched_doc, l.last_doc);
  EXPECT_EQ(l.best->matched_date, kT2 + 3);
  EXPECT_LT(l.best->resemblance_now, 0.4);
  EXPECT_EQ(l.best->last_seen, kT4 + 3);
  EXPECT_NE(l.best->why.find("edited since"), std::string::npos) << l.best->why;
}

TEST_P(LostTest, ChainOfTwoMoves) {
  const Seeds a = DocPage(10);
  const Seeds a1 = DocEdit(a, 0.12, 1);
  const Seeds a2 = DocEdit(a1, 0.12, 2);
  // The second home does not resemble the first enough to be found from it directly (it was
  // born months after the old URL died, so only a near copy would count).
  ASSERT_LT(Resemblance(a, a2), 0.8);
  Crawl("s1", kT1, With({{"a.html", a}}));
  Crawl("s2", kT2, With({{"b/a.html", a1}}));
  Crawl("s3", kT4, With({{"c/a.html", a2}}));
  const LostAndFound l = Lost("a.html");
  EXPECT_EQ(l.status, LostStatus::kMoved);
  ASSERT_TRUE(l.best.has_value());
  EXPECT_EQ(l.best->url, Url("c/a.html"));
  EXPECT_EQ(l.best->via, std::vector<std::string>{Url("b/a.html")});
  EXPECT_NEAR(l.best->resemblance, Resemblance(a, a1), 0.06);  // the verification estimate
  EXPECT_NE(l.best->why.find("which moved on"), std::string::npos) << l.best->why;
  const LostAndFound middle = Lost("b/a.html");
  ASSERT_TRUE(middle.best.has_value());
  EXPECT_EQ(middle.best->url, Url("c/a.html"));
  EXPECT_TRUE(middle.best->via.empty());
}

TEST_P(LostTest, RedirectWinsOverAMoreSimilarPage) {
  const Seeds a = DocPage(10);
  const Seeds other = DocPage(11);  // the redirect's target resembles nothing of the old page
  Crawl("s1", kT1, With({{"old.html", a}}));
  Crawl("s2", kT2, With({{"copy.html", a}, {"new.html", other}}, {{"old.html", "new.html"}}));
  const LostAndFound l = Lost("old.html");
  EXPECT_EQ(l.status, LostStatus::kMoved);
  EXPECT_EQ(l.redirect_target, Url("new.html"));
  EXPECT_EQ(l.redirect_status, 301);
  ASSERT_TRUE(l.best.has_value());
  EXPECT_EQ(l.best->url, Url("new.html"));
  EXPECT_EQ(l.best->evidence, SuccessorEvidence::kRedirect);
  EXPECT_EQ(l.best->redirect_status, 301);
  EXPECT_LT(l.best->resemblance, 0.2);
  EXPECT_EQ(l.best->why, "redirect (301) recorded 1970-05-11");
  ASSERT_EQ(l.candidates.size(), 1u);
  EXPECT_EQ(l.candidates[0].url, Url("copy.html"));
  EXPECT_EQ(l.candidates[0].resemblance, 1.0);
}

TEST_P(LostTest, RedirectChainIsFollowedToALiveUrl) {
  const Seeds a = DocPage(10);
  Crawl("s1", kT1, With({{"one.html", a}, {"two.html", DocPage(12)}}));
  Crawl(
      "s2", kT2,
      With({{"three.html", DocPage(13)}}, {{"one.html", "two.html"}, {"two.html", "three.html"}}));
  const LostAndFound l = Lost("one.html");
  ASSERT_TRUE(l.best.has_value());
  EXPECT_EQ(l.best->url, Url("three.html"));
  EXPECT_EQ(l.best->evidence, SuccessorEvidence::kRedirect);
  EXPECT_EQ(l.best->via, std::vector<std::string>{Url("two.html")});
}

TEST_P(LostTest, TheMoreSimilarWinsOverTheNewer) {
  const Seeds a = DocPage(10);
  const Seeds close = DocEdit(a, 0.08, 1);
  const Seeds far = DocEdit(a, 0.2, 2);
  const double r_close = Resemblance(a, close), r_far = Resemblance(a, far);
  ASSERT_GT(r_close, r_far);
  ASSERT_GE(r_far, 0.4);
  Crawl("s1", kT1, With({{"a.html", a}}));
  // Both born when the old one died; the less similar one is seen later.
  Crawl("s2", kT2, With({{"close.html", close}, {"zz/far.html", far}}));
  const LostAndFound l = Lost("a.html");
  ASSERT_TRUE(l.best.has_value());
  EXPECT_EQ(l.best->url, Url("close.html"));
  ASSERT_EQ(l.candidates.size(), 1u);
  EXPECT_EQ(l.candidates[0].url, Url("zz/far.html"));
  EXPECT_GT(l.candidates[0].last_seen, l.best->last_seen);
}

TEST_P(LostTest, BornWhenTheOldDiedWinsOverAnOlderCopy) {
  const Seeds a = DocPage(10);
  const Seeds mirror = DocEdit(a, 0.04, 3);  // a near copy that lived beside it all along
  const Seeds moved = DocEdit(a, 0.12, 1);
  ASSERT_GT(Resemblance(a, mirror), Resemblance(a, moved));
  Crawl("s1", kT1, With({{"a.html", a}, {"mirror/a.html", mirror}}));
  Crawl("s2", kT2, With({{"mirror/a.html", mirror}, {"new/a.html", moved}}));
  const LostAndFound l = Lost("a.html");
  ASSERT_TRUE(l.best.has_value());
  EXPECT_EQ(l.best->url, Url("new/a.html"));
  ASSERT_EQ(l.candidates.size(), 1u);
  EXPECT_EQ(l.candidates[0].url, Url("mirror/a.html"));
  EXPECT_FALSE(l.candidates[0].born_when_died);
}

TEST_P(LostTest, AUrlStillAlive) {
  Crawl("s1", kT1, With({{"a.html", DocPage(10)}}));
  Crawl("s2", kT2, With({{"a.html", DocEdit(DocPage(10), 0.12, 1)}}));
  const LostAndFound l = Lost("a.html");
  EXPECT_EQ(l.status, LostStatus::kAlive);
  EXPECT_EQ(l.last_seen_live, kT2 + 3);
  EXPECT_EQ(l.died, 0);
  EXPECT_NE(l.last_doc, 0u);
  EXPECT_FALSE(l.best.has_value());
  EXPECT_TRUE(l.candidates.empty());
}

TEST_P(LostTest, AUrlThatDiedWithoutSuccessor) {
  Crawl("s1", kT1, With({{"a.html", DocPage(10)}, {"b.html", DocPage(20)}}));
  // Pages born when they died, about other things (the site's stable pages too).
  Crawl("s2", kT2, With({{"news.html", DocPage(30)}}, {}, {"b.html"}));
  for (const char* path : {"a.html", "b.html"}) {
    SCOPED_TRACE(path);
    const LostAndFound l = Lost(path);
    EXPECT_EQ(l.status, LostStatus::kDead);
    EXPECT_EQ(l.last_seen_live, path == std::string("a.html") ? kT1 + 3 : kT1 + 4);
    EXPECT_GT(l.died, kT1);
    EXPECT_FALSE(l.best.has_value());
    EXPECT_TRUE(l.candidates.empty());
  }
}

TEST_P(LostTest, AUrlNeverSeen) {
  Crawl("s1", kT1, kStable);
  StatusOr<LostAndFound> l = store_->Lost(Url("nowhere.html"));
  EXPECT_EQ(l.status().code(), StatusCode::kNotFound);
  EXPECT_NE(l.status().message().find("URL never stored"), std::string::npos);
}

TEST_P(LostTest, BoundsCutTheSearchAndSaySo) {
  const Seeds a = DocPage(10);
  Crawl("s1", kT1, With({{"a.html", a}}));
  Crawl("s2", kT2,
        With({{"b.html", DocEdit(a, 0.05, 1)},
              {"c.html", DocEdit(a, 0.1, 2)},
              {"d.html", DocEdit(a, 0.15, 3)}}));
  LostOptions o;
  o.max_candidates = 1;
  LostAndFound l = Lost("a.html", o);
  EXPECT_EQ(l.best->url, Url("b.html"));
  EXPECT_EQ(l.candidates.size(), 1u);
  EXPECT_TRUE(l.truncated);
  EXPECT_EQ(l.truncated_by, "max_candidates");
  o = LostOptions{};
  o.max_urls = 2;  // the URL asked and one more
  l = Lost("a.html", o);
  EXPECT_TRUE(l.truncated);
  EXPECT_EQ(l.truncated_by, "max_urls");
  o = LostOptions{};
  o.max_scored = 0;
  EXPECT_EQ(store_->Lost(Url("a.html"), o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace shingled::store
