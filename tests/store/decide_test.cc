// The decision written once for both backends (store/decide.h): what a candidate is to a page,
// by the rules of store/FORMAT.md, on synthetic sketches of chosen
// resemblance.
#include "store/decide.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

using testing::SyntheticSketch;

std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> out(to - from);
  std::iota(out.begin(), out.end(), from);
  return out;
}

std::vector<uint64_t> Concat(std::vector<uint64_t> a, const std::vector<uint64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class DecideTest : public ::testing::Test {
 protected:
  // Judges `candidate` for `page` as a backend does: the screen, then the verification sample
  // only when worth judging.
  CandidateDecision Judge(const dedup::Sketch& page, const dedup::Sketch& candidate,
                          const StoreOptions& options, const CommonBytes* containment = nullptr) {
    const CandidateScreen screen = ScreenCandidate(page, candidate, options, params_);
    const bool read = screen.worth_judging && UsesVerifySample(page, params_);
    return JudgeCandidate(7, page, &candidate, screen, candidate.verify_sample, read, containment,
                          options, params_);
  }

  dedup::SketchParams params_;
  StoreOptions options_;
  // 1,000 shingles; `near` shares 950 of them (J = 950 / 1,050 = 0.905); `half` shares 500
  // (J = 500 / 1,500 = 0.33); `other` none.
  dedup::Sketch page_ = SyntheticSketch(params_, Range(0, 1000));
  dedup::Sketch near_ = SyntheticSketch(params_, Concat(Range(0, 950), Range(10000, 10050)));
  dedup::Sketch half_ = SyntheticSketch(params_, Concat(Range(0, 500), Range(20000, 20500)));
  dedup::Sketch other_ = SyntheticSketch(params_, Range(30000, 31000));
};

TEST_F(DecideTest, ANearCopyIsVerifiedJoinsAndIsLinkedAsSimilar) {
  const CandidateDecision d = Judge(page_, near_, options_);
  ASSERT_TRUE(d.match.has_value());
  EXPECT_EQ(d.match->doc, 7u);
  EXPECT_EQ(d.match->relation, Relation::kVerified);
  EXPECT_EQ(d.match->resemblance_from, ResemblanceSource::kVerifySample);
  EXPECT_NEAR(d.match->resemblance, 950.0 / 1050, 0.06);
  EXPECT_TRUE(d.joins);
  EXPECT_TRUE(d.link);  // >= similar_threshold 0.5, whatever else holds
}

TEST_F(DecideTest, AnUnrelatedPageIsNotJudgedAndIsNoMatch) {
  const CandidateScreen screen = ScreenCandidate(page_, other_, options_, params_);
  EXPECT_FALSE(screen.worth_judging);
  EXPECT_LT(screen.features, params_.fungible_threshold);
  const CandidateDecision d = Judge(page_, other_, options_);
  EXPECT_FALSE(d.match.has_value());
  EXPECT_FALSE(d.joins);
  EXPECT_FALSE(d.link);
}

TEST_F(DecideTest, BelowEveryThresholdOnlyContainmentMakesAMatchAndItJoinsNothing) {
  // J = 0.33: under similar (0.5) and verified (0.9), and not fungible.
  EXPECT_FALSE(Judge(page_, half_, options_).match.has_value());
  CommonBytes common;
  common.known = true;
  common.relation = CommonRelation::kBContainsA;
  common.share_a = 1.0;
  common.share_b = 0.5;
  const CandidateDecision d = Judge(page_, half_, options_, &common);
  ASSERT_TRUE(d.match.has_value());
  EXPECT_EQ(d.match->relation, Relation::kContainedIn);
  EXPECT_EQ(d.match->containment_from, ContainmentSource::kChunks);
  EXPECT_EQ(d.match->containment_of_page, 1.0);
  EXPECT_FALSE(d.joins);
  EXPECT_FALSE(d.link);
  // A candidate without a sketch of its own: containment or nothing.
  const CandidateDecision none =
      JudgeCandidate(7, page_, nullptr, {}, {}, false, &common, options_, params_);
  ASSERT_TRUE(none.match.has_value());
  EXPECT_EQ(none.match->relation, Relation::kContainedIn);
  EXPECT_FALSE(JudgeCandidate(7, page_, nullptr, {}, {}, false, nullptr, options_, params_).match);
}

TEST_F(DecideTest, TheRelationIsTheFirstThatJoinsElseTheFirstThatHolds) {
  // Nothing joins: the relation is still the strongest that holds, and no cluster merges.
  StoreOptions none = options_;
  none.cluster_relations = kClusterExact;
  CandidateDecision d = Judge(page_, near_, none);
  ASSERT_TRUE(d.match.has_value());
  EXPECT_EQ(d.match->relation, Relation::kVerified);
  EXPECT_FALSE(d.joins);
  // Only "similar" joins: the match is named by the relation that merged.
  StoreOptions similar = options_;
  similar.cluster_relations = kClusterExact | kClusterSimilar;
  d = Judge(page_, near_, similar);
  ASSERT_TRUE(d.match.has_value());
  EXPECT_EQ(d.match->relation, Relation::kSimilar);
  EXPECT_TRUE(d.joins);
  // A resemblance under the verified threshold with "verified" the only joining relation.
  StoreOptions strict = options_;
  strict.verified_threshold = 0.99;
  strict.similar_threshold = 0.95;
  d = Judge(page_, near_, strict);
  if (d.match) {  // fungible by the features (2 of 6 agree at J = 0.9 with probability 0.42)
    EXPECT_EQ(d.match->relation, Relation::kFungible);
    EXPECT_GE(d.match->features_in_common, params_.fungible_threshold);
    EXPECT_FALSE(d.joins);
  } else {
    EXPECT_LT(ScreenCandidate(page_, near_, strict, params_).features, params_.fungible_threshold);
  }
}

TEST_F(DecideTest, ExactMatchesAndTheirOrder) {
  const Match identical = IdenticalMatch(3, page_);
  EXPECT_EQ(identical.relation, Relation::kIdentical);
  EXPECT_EQ(identical.resemblance, 1.0);
  EXPECT_EQ(identical.features_in_common, params_.feature_groups);
  const Match lexical = EquivalentMatch(4, Relation::kLexical, page_, page_);
  EXPECT_EQ(lexical.resemblance, 1.0);
  EXPECT_EQ(lexical.containment_of_page, 1.0);
  EXPECT_EQ(lexical.features_in_common, params_.feature_groups);

  std::vector<Match> matches;
  auto add = [&](DocId doc, Relation r, double resemblance) {
    matches.push_back(Match{doc, r, resemblance, 0, 0, 0});
  };
  add(1, Relation::kContains, 0.2);
  add(2, Relation::kSimilar, 0.6);
  add(3, Relation::kFungible, 0.7);
  add(4, Relation::kVerified, 0.91);
  add(5, Relation::kVerified, 0.95);
  add(6, Relation::kShingle, 1.0);
  add(7, Relation::kIdentical, 1.0);
  add(8, Relation::kSimilar, 0.8);
  SortMatches(&matches);
  std::vector<DocId> order;
  for (const Match& m : matches) order.push_back(m.doc);
  EXPECT_EQ(order, (std::vector<DocId>{7, 6, 5, 4, 3, 8, 2, 1}));
}

// A page lists its strongest max_matches matches of the exact and resemblance relations, and as
// many containment ones, which sort after them and which near-copies must not crowd out.
TEST_F(DecideTest, LimitMatchesKeepsTheStrongestOfEachKindAndCountsTheRest) {
  std::vector<Match> matches;
  for (DocId d = 1; d <= 5; ++d) {
    matches.push_back(Match{d, Relation::kVerified, 1.0 - 0.01 * static_cast<double>(d), 0, 0, 0});
  }
  for (DocId d = 6; d <= 8; ++d) matches.push_back(Match{d, Relation::kContains, 0, 0, 0, 0});
  SortMatches(&matches);
  EXPECT_EQ(LimitMatches(2, &matches), 4u);
  ASSERT_EQ(matches.size(), 4u);
  EXPECT_EQ(matches[0].doc, 1u);
  EXPECT_EQ(matches[1].doc, 2u);
  EXPECT_EQ(matches[2].doc, 6u);
  EXPECT_EQ(matches[3].doc, 7u);
  EXPECT_EQ(LimitMatches(2, &matches), 0u);
}

}  // namespace
}  // namespace shingled::store
