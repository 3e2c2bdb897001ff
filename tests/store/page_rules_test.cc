// What a page is to the store (store/internal/page_rules.h): the rules both engines' writers
// follow. Their behaviour through a store is in revisit_test, status_test
// and store_test, on both engines.
#include "store/internal/page_rules.h"

#include <gtest/gtest.h>

namespace shingled::store::internal {
namespace {

PageInput Page(int status, SweepId sweep = 3, int64_t date = 1000) {
  PageInput p;
  p.url = "https://a.example/x";
  p.sweep = sweep;
  p.date = date;
  p.http_status = status;
  return p;
}

VersionRecord Live(DocId doc, SweepId sweep = 3) {
  VersionRecord v;
  v.sweep = sweep;
  v.doc = doc;
  v.http_status = 200;
  v.verdict = Verdict::kNew;
  return v;
}

TEST(PageRulesTest, AFailedFetchKeepsTheLiveDocumentAndARedirectNamesItsTarget) {
  const VersionRecord live = Live(7);
  const VersionRecord failed = AttemptVersion(Page(503), StatusClass::kFailed, &live);
  EXPECT_EQ(failed.verdict, Verdict::kFailed);
  EXPECT_EQ(failed.doc, 7u);
  EXPECT_EQ(failed.http_status, 503u);
  EXPECT_EQ(AttemptVersion(Page(503), StatusClass::kFailed, nullptr).doc, 0u);
  // A failed fetch after a gone version keeps nothing: the URL showed no content.
  VersionRecord gone = Live(0);
  gone.verdict = Verdict::kGone;
  gone.http_status = 404;
  EXPECT_EQ(AttemptVersion(Page(503), StatusClass::kFailed, &gone).doc, 0u);
  PageInput moved = Page(301);
  moved.redirect_target = "https://b.example/";
  moved.canonical_link = "https://a.example/canonical";
  const VersionRecord redirect = AttemptVersion(moved, StatusClass::kRedirect, &live);
  EXPECT_EQ(redirect.verdict, Verdict::kRedirect);
  EXPECT_EQ(redirect.doc, 0u);
  EXPECT_EQ(redirect.redirect_target, "https://b.example/");
  EXPECT_TRUE(redirect.canonical_link.empty());
}

TEST(PageRulesTest, AnAttemptReplaysOnlyTheSameAttemptOfTheSameSweep) {
  const VersionRecord live = Live(7);
  const VersionRecord failed = AttemptVersion(Page(503), StatusClass::kFailed, &live);
  EXPECT_TRUE(ReplaysAttempt(failed, failed));
  EXPECT_FALSE(ReplaysAttempt(live, failed));
  EXPECT_FALSE(ReplaysAttempt(failed, AttemptVersion(Page(500), StatusClass::kFailed, &live)));
  EXPECT_FALSE(
      ReplaysAttempt(failed, AttemptVersion(Page(503, 4), StatusClass::kFailed, &live)));
}

TEST(PageRulesTest, APageReplaysItsContentOrItsGoneStatus) {
  const PageInput content = Page(200);
  EXPECT_TRUE(ReplaysPage(Live(7), content, false, 7));
  EXPECT_FALSE(ReplaysPage(Live(7), content, false, 8));
  EXPECT_FALSE(ReplaysPage(Live(0), content, false, 0));
  // A failed attempt names the document it kept, not content seen in the sweep.
  VersionRecord failed = Live(7);
  failed.verdict = Verdict::kFailed;
  EXPECT_FALSE(ReplaysPage(failed, content, false, 7));
  VersionRecord gone = Live(0);
  gone.verdict = Verdict::kGone;
  gone.http_status = 404;
  EXPECT_TRUE(ReplaysPage(gone, Page(404), true, 0));
  EXPECT_FALSE(ReplaysPage(gone, Page(410), true, 0));
}

TEST(PageRulesTest, ARevisitReplaysOnlyAtTheSameDateAndIdenticalBytesAreUnchangedOrDuplicate) {
  VersionRecord seen = Live(7);
  seen.date = 1000;
  EXPECT_TRUE(ReplaysRevisit(seen, Page(200, 3, 1000), 7));
  EXPECT_FALSE(ReplaysRevisit(seen, Page(200, 3, 2000), 7));
  EXPECT_EQ(IdenticalVerdict(&seen, 7), Verdict::kUnchanged);
  EXPECT_EQ(IdenticalVerdict(&seen, 8), Verdict::kDuplicate);
  EXPECT_EQ(IdenticalVerdict(nullptr, 7), Verdict::kDuplicate);
  PageInput revisit = Page(200);
  revisit.revisit_of = "https://b.example/original";
  const Status s = NoDocumentToRevisit(revisit);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("revisit of https://b.example/original"), std::string::npos);
}

TEST(PageRulesTest, TheLexicalOwnerComesBeforeTheShingleOwnerAndANewFingerprintIsOwned) {
  dedup::Sketch s;
  s.tokens = 40;
  s.shingles = 36;
  const ExactLevel first = ExactLevelOf(s, 0, 0);  // nothing stored had either fingerprint
  EXPECT_EQ(first.equivalent, 0u);
  EXPECT_TRUE(first.owns_lexical);
  EXPECT_TRUE(first.owns_shingle);
  const ExactLevel lexical = ExactLevelOf(s, 4, 9);
  EXPECT_EQ(lexical.equivalent, 4u);
  EXPECT_EQ(lexical.relation, Relation::kLexical);
  EXPECT_FALSE(lexical.owns_lexical);
  EXPECT_FALSE(lexical.owns_shingle);
  // Other tokens, the same shingle multiset: a shingle equivalent that owns its lexical one.
  const ExactLevel shingle = ExactLevelOf(s, 0, 9);
  EXPECT_EQ(shingle.equivalent, 9u);
  EXPECT_EQ(shingle.relation, Relation::kShingle);
  EXPECT_TRUE(shingle.owns_lexical);
  EXPECT_FALSE(shingle.owns_shingle);
  // An empty page has neither fingerprint, so it owns neither.
  const ExactLevel empty = ExactLevelOf(dedup::Sketch{}, 0, 0);
  EXPECT_FALSE(empty.owns_lexical);
  EXPECT_FALSE(empty.owns_shingle);
}

TEST(PageRulesTest, APageTheStoreCannotApplyIsNamedWithWhatIsWrong) {
  const dedup::SketchParams params;
  PageInput page = Page(200);
  page.sketch.minhashes.assign(static_cast<size_t>(params.num_minhashes()), 1);
  page.sketch.features.assign(static_cast<size_t>(params.feature_groups), 2);
  EXPECT_TRUE(ValidatePage(page, params).ok());
  PageInput other = page;
  other.sketch.minhashes.pop_back();
  const Status s = ValidatePage(other, params);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("sketch of https://a.example/x has " +
                             std::to_string(params.num_minhashes() - 1) + " minhashes"),
            std::string::npos)
      << s.message();
  PageInput no_url = page;
  no_url.url.clear();
  EXPECT_EQ(ValidatePage(no_url, params).message(), "page has an empty URL");
  PageInput target = page;
  target.redirect_target = "https://b.example/";
  EXPECT_NE(ValidatePage(target, params).message().find("not a redirect"), std::string::npos);
  // A revisit's or a dead page's sketch does not count.
  other.revisit = true;
  EXPECT_TRUE(ValidatePage(other, params).ok());
  other.revisit = false;
  other.http_status = 404;
  EXPECT_TRUE(ValidatePage(other, params).ok());
}

}  // namespace
}  // namespace shingled::store::internal
