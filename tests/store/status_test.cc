// Store::Apply by HTTP status: a failed fetch (5xx, 429, no answer)
// records an attempt that leaves the URL's last good document live; a redirect records its
// target and no document; neither adds a document, a posting or a cluster entry.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

using testing::Range;

class StatusTest : public testing::StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
    // Scoped to every URL of the tests, so that a close would record gone what it may.
    s1_ = store_
              ->OpenSweep("s1", 100,
                          {"http://a", "http://b/", "http://c/", "http://d/", "http://dead/",
                           "http://fresh/", "https://a/"})
              ->id;
    s2_ = store_
              ->OpenSweep("s2", 200,
                          {"http://a", "http://b/", "http://c/", "http://d/", "http://dead/",
                           "http://fresh/", "https://a/"})
              ->id;
  }
  // A page with the sketch of `first_shingle`..+400 whatever its status: the store must ignore
  // it unless the status is 2xx.
  PageInput At(std::string url, SweepId sweep, int64_t date, int http_status,
               uint64_t first_shingle = 1000, std::string target = "") const {
    PageInput p = Page(std::move(url), sweep, date, Range(first_shingle, 400));
    p.http_status = http_status;
    p.redirect_target = std::move(target);
    return p;
  }
  std::vector<std::string> Known() const {
    std::vector<std::string> out;
    StatusOr<UrlId> next =
        store_->KnownUrls(0, 1000, [&](std::string_view url) { out.emplace_back(url); });
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    return out;
  }
  uint64_t Documents() const {
    StatusOr<StoreStats> stats = store_->Stats();
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    return stats.ok() ? stats->documents : 0;
  }

  std::unique_ptr<Store> store_;
  SweepId s1_ = 0, s2_ = 0;
};
SHINGLED_STORE_ENGINES(StatusTest);

TEST_P(StatusTest, ServerErrorLeavesTheLastGoodVersionLive) {
  const PageResult good = ApplyOne(*store_, At("http://a/", s1_, 100, 200));
  ASSERT_EQ(good.verdict, Verdict::kNew);
  for (int status : {500, 503, 429}) {
    SCOPED_TRACE(status);
    // Other content in the error page's body: it must not become a document.
    const PageResult failed = ApplyOne(*store_, At("http://a/", s2_, 200 + status, status, 9000));
    ASSERT_TRUE(failed.status.ok()) << failed.status.ToString();
    EXPECT_EQ(failed.verdict, Verdict::kFailed);
    EXPECT_EQ(failed.doc, good.doc);
    EXPECT_EQ(failed.cluster, good.cluster);
    EXPECT_EQ(failed.previous_doc, good.doc);
    EXPECT_TRUE(failed.matches.empty());
    EXPECT_FALSE(failed.replayed);
    EXPECT_EQ(Documents(), 1u);
    EXPECT_EQ(Known(), std::vector<std::string>{"http://a/"});
    StatusOr<std::vector<UrlVersion>> history = store_->History("http://a/");
    ASSERT_TRUE(history.ok());
    EXPECT_EQ(history->back().verdict, Verdict::kFailed);
    EXPECT_EQ(history->back().http_status, status);
    EXPECT_EQ(history->back().doc, good.doc);
    EXPECT_EQ(history->back().date, 200 + status);
  }
  // The content is still what the URL answers for.
  StatusOr<std::vector<SimilarDoc>> similar = store_->SimilarToUrl("http://a/", {});
  ASSERT_TRUE(similar.ok()) << similar.status().ToString();
  // Closing the sweep does not call it gone: it was seen, if not well.
  StatusOr<SweepClosing> closed = store_->CloseSweep(s2_, 900);
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->gone, 0u);
  EXPECT_EQ(closed->sweep.gone, 0u);
  EXPECT_EQ(closed->sweep.pages, 3u);  // the attempts, counted in pages only
  EXPECT_EQ(closed->sweep.new_docs + closed->sweep.unchanged + closed->sweep.duplicate +
                closed->sweep.near_duplicate,
            0u);
  EXPECT_EQ(store_->History("http://a/")->back().verdict, Verdict::kFailed);
  EXPECT_EQ(Known(), std::vector<std::string>{"http://a/"});
  ExpectConsistent(*store_);
}

TEST_P(StatusTest, FailedFetchWithoutContentBeforeHasNoDocument) {
  // A URL that never answered well, and one that died before: no document to keep.
  ApplyOne(*store_, At("http://dead/", s1_, 100, 404));
  const PageResult fresh = ApplyOne(*store_, At("http://fresh/", s2_, 200, 502));
  EXPECT_EQ(fresh.verdict, Verdict::kFailed);
  EXPECT_EQ(fresh.doc, 0u);
  EXPECT_EQ(fresh.cluster, 0u);
  const PageResult dead = ApplyOne(*store_, At("http://dead/", s2_, 200, 0));  // no answer
  EXPECT_EQ(dead.verdict, Verdict::kFailed);
  EXPECT_EQ(dead.doc, 0u);
  EXPECT_EQ(store_->History("http://dead/")->back().http_status, 0);
  EXPECT_EQ(Documents(), 0u);
  EXPECT_TRUE(Known().empty());
  ExpectConsistent(*store_);
}

TEST_P(StatusTest, RedirectRecordsItsTargetAndNoDocument) {
  const PageResult good = ApplyOne(*store_, At("http://a/old", s1_, 100, 200));
  for (int status : {301, 302, 303, 307, 308}) {
    SCOPED_TRACE(status);
    const std::string target = "http://a/new" + std::to_string(status);
    const PageResult moved =
        ApplyOne(*store_, At("http://a/old", s2_, status, status, 9000, target));
    ASSERT_TRUE(moved.status.ok()) << moved.status.ToString();
    EXPECT_EQ(moved.verdict, Verdict::kRedirect);
    EXPECT_EQ(moved.doc, 0u);
    EXPECT_EQ(moved.cluster, 0u);
    EXPECT_EQ(moved.redirect_target, target);
    StatusOr<std::vector<UrlVersion>> history = store_->History("http://a/old");
    ASSERT_TRUE(history.ok());
    EXPECT_EQ(history->back().verdict, Verdict::kRedirect);
    EXPECT_EQ(history->back().http_status, status);
    EXPECT_EQ(history->back().redirect_target, target);
    EXPECT_EQ(history->back().doc, 0u);
  }
  EXPECT_EQ(Documents(), 1u);
  // Not live: the crawler does not revisit it, and a close does not call it gone.
  EXPECT_TRUE(Known().empty());
  StatusOr<SweepClosing> closed = store_->CloseSweep(s2_, 900);
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->gone, 0u);
  EXPECT_EQ(closed->sweep.gone, 0u);
  EXPECT_EQ(closed->sweep.pages, 5u);
  // Lost and found starts from the content it had, and says where it went.
  StatusOr<LostAndFound> lost = store_->Lost("http://a/old");
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  EXPECT_EQ(lost->last_doc, good.doc);
  EXPECT_EQ(lost->redirect_target, "http://a/new308");
  EXPECT_EQ(lost->redirect_status, 308);
  // The target was never stored: the redirect leads nowhere known, and no other URL has the
  // content.
  EXPECT_EQ(lost->status, LostStatus::kDead);
  EXPECT_FALSE(lost->best.has_value());
  ExpectConsistent(*store_);
}

TEST_P(StatusTest, LostAndFoundOfAUrlThatOnlyEverRedirected) {
  ApplyOne(*store_, At("http://a/", s1_, 100, 301, 1000, "https://a/"));
  StatusOr<LostAndFound> lost = store_->Lost("http://a/");
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  EXPECT_EQ(lost->last_doc, 0u);
  EXPECT_EQ(lost->last_seen_live, 0);
  EXPECT_EQ(lost->redirect_target, "https://a/");
  // Redirecting nowhere the store knows, without content of its own: dead.
  EXPECT_EQ(lost->status, LostStatus::kDead);
  EXPECT_FALSE(lost->best.has_value());
  // Without a target, or only failed: nothing to search from nor follow.
  ApplyOne(*store_, At("http://b/", s1_, 100, 302));
  StatusOr<LostAndFound> b = store_->Lost("http://b/");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->status, LostStatus::kUnknown);
  EXPECT_EQ(b->redirect_status, 302);
  EXPECT_TRUE(b->redirect_target.empty());
  ApplyOne(*store_, At("http://c/", s1_, 100, 500));
  EXPECT_EQ(store_->Lost("http://c/")->status, LostStatus::kUnknown);
  // Never stored: NotFound.
  EXPECT_EQ(store_->Lost("http://never/").status().code(), StatusCode::kNotFound);
}

TEST_P(StatusTest, RedirectWithoutAKnownTarget) {
  const PageResult moved = ApplyOne(*store_, At("http://a/", s1_, 100, 302));
  EXPECT_EQ(moved.verdict, Verdict::kRedirect);
  EXPECT_EQ(moved.redirect_target, "");
  EXPECT_EQ(store_->History("http://a/")->back().redirect_target, "");
  ExpectConsistent(*store_);
}

TEST_P(StatusTest, TheSameAttemptAgainIsAReplay) {
  ApplyOne(*store_, At("http://a/", s1_, 100, 200));
  ASSERT_FALSE(ApplyOne(*store_, At("http://a/", s2_, 200, 500)).replayed);
  const PageResult again = ApplyOne(*store_, At("http://a/", s2_, 201, 500));
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.verdict, Verdict::kFailed);
  EXPECT_EQ(again.doc, 1u);
  // Another status is another attempt.
  EXPECT_FALSE(ApplyOne(*store_, At("http://a/", s2_, 202, 503)).replayed);
  EXPECT_EQ(store_->History("http://a/")->size(), 3u);

  ASSERT_FALSE(ApplyOne(*store_, At("http://b/", s2_, 200, 301, 1000, "http://c/")).replayed);
  EXPECT_TRUE(ApplyOne(*store_, At("http://b/", s2_, 201, 301, 1000, "http://c/")).replayed);
  // Another target is another redirect.
  EXPECT_FALSE(ApplyOne(*store_, At("http://b/", s2_, 202, 301, 1000, "http://d/")).replayed);
  EXPECT_EQ(store_->History("http://b/")->size(), 2u);
  ExpectConsistent(*store_);
}

TEST_P(StatusTest, ContentAfterAnAttemptIsContentAgain) {
  const PageResult good = ApplyOne(*store_, At("http://a/", s1_, 100, 200));
  ApplyOne(*store_, At("http://a/", s2_, 200, 500));
  const PageResult back = ApplyOne(*store_, At("http://a/", s2_, 210, 200, 5000));
  EXPECT_EQ(back.verdict, Verdict::kNew);
  EXPECT_EQ(back.previous_doc, good.doc);
  EXPECT_EQ(Documents(), 2u);
  ExpectConsistent(*store_);
}

TEST_P(StatusTest, RedirectTargetOnlyWithARedirectStatus) {
  for (int status : {200, 404, 500}) {
    const PageResult r = ApplyOne(*store_, At("http://a/", s1_, 100, status, 1000, "http://b/"));
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument) << status;
  }
  EXPECT_EQ(store_->History("http://a/").status().code(), StatusCode::kNotFound);
}

TEST_P(StatusTest, ClassifyHttpStatus) {
  EXPECT_EQ(ClassifyHttpStatus(200), StatusClass::kContent);
  EXPECT_EQ(ClassifyHttpStatus(299), StatusClass::kContent);
  EXPECT_EQ(ClassifyHttpStatus(404), StatusClass::kDead);
  EXPECT_EQ(ClassifyHttpStatus(410), StatusClass::kDead);
  for (int s : {301, 302, 303, 307, 308}) EXPECT_EQ(ClassifyHttpStatus(s), StatusClass::kRedirect);
  for (int s : {0, 100, 300, 304, 400, 403, 429, 500, 503, 599}) {
    EXPECT_EQ(ClassifyHttpStatus(s), StatusClass::kFailed) << s;
  }
}

}  // namespace
}  // namespace shingled::store
