// The candidate loops written once for both engines (store/internal/judge.h), over an in-memory
// set of candidate records: what each engine's reads give the loop, and what it records.
#include "store/internal/judge.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "store/internal/candidates.h"
#include "tests/store/synthetic.h"

namespace shingled::store::internal {
namespace {

using testing::Range;
using testing::SyntheticSketch;
using testing::Variant;

// Candidate records held in memory: a document with a sketch, or without one of its own (an
// exact equivalent); the clusters are given; links and unions are recorded.
class Records final : public PageCandidates {
 public:
  Records(const dedup::Sketch& page, std::map<DocId, std::optional<dedup::Sketch>> docs)
      : page_(page), docs_(std::move(docs)) {}

  StatusOr<bool> Read(DocId id, const dedup::Sketch** page,
                      const dedup::Sketch** candidate) override {
    read.push_back(id);
    const auto it = docs_.find(id);
    if (it == docs_.end()) return false;
    *page = &page_;
    *candidate = it->second ? &*it->second : nullptr;
    current_ = id;
    return true;
  }
  Status ReadVerifySample(DocId id, std::span<const uint32_t>* sample, bool* known) override {
    EXPECT_EQ(id, current_) << "the sample of another candidate than the one last read";
    verify_read.insert(id);
    *sample = docs_.at(id)->verify_sample;
    *known = true;
    return OkStatus();
  }
  StatusOr<bool> InPagesCluster(DocId id) override { return in_pages_cluster.count(id) > 0; }
  Status Link(DocId id, double resemblance) override {
    links.emplace_back(id, resemblance);
    return OkStatus();
  }
  Status Join(DocId id) override {
    joins.push_back(id);
    return OkStatus();
  }

  std::set<DocId> in_pages_cluster;
  std::vector<DocId> read;
  std::set<DocId> verify_read;
  std::vector<std::pair<DocId, double>> links;
  std::vector<DocId> joins;

 private:
  const dedup::Sketch& page_;
  std::map<DocId, std::optional<dedup::Sketch>> docs_;
  DocId current_ = 0;
};

class JudgeTest : public ::testing::Test {
 protected:
  dedup::SketchParams params_;
  StoreOptions options_;
  // 1,000 shingles; `near` shares 950 of them (J = 0.905), `half` 500 (J = 0.33), `other` none.
  dedup::Sketch page_ = SyntheticSketch(params_, Range(0, 1000));
  dedup::Sketch near_ = SyntheticSketch(params_, Variant(0, 1000, 950, 10000));
  dedup::Sketch half_ = SyntheticSketch(params_, Variant(0, 1000, 500, 20000));
  dedup::Sketch other_ = SyntheticSketch(params_, Range(30000, 1000));
};

TEST_F(JudgeTest, APageJoinsItsNearCopiesLinksThemAndSkipsWhatHasNoRecord) {
  Records r(page_, {{1, near_}, {2, other_}, {3, std::nullopt}});
  PageResult result;
  // 4 has no record (a posting ahead of its record); 3 has no sketch and no bytes in common.
  StatusOr<bool> joined =
      JudgePageCandidates(page_, std::vector<DocId>{4, 2, 1, 3}, {}, options_, params_, r, &result);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_TRUE(*joined);
  EXPECT_EQ(r.read, (std::vector<DocId>{4, 2, 1, 3}));
  EXPECT_EQ(r.joins, std::vector<DocId>{1});
  ASSERT_EQ(r.links.size(), 1u);
  EXPECT_EQ(r.links[0].first, 1u);
  EXPECT_NEAR(r.links[0].second, 950.0 / 1050, 0.06);
  // Only a candidate worth judging has its verification sample read.
  EXPECT_EQ(r.verify_read, std::set<DocId>{1});
  ASSERT_EQ(result.matches.size(), 1u);
  EXPECT_EQ(result.matches[0].doc, 1u);
  EXPECT_EQ(result.matches[0].relation, Relation::kVerified);
}

TEST_F(JudgeTest, AContainmentCandidateMatchesWithoutJoining) {
  Records r(page_, {{5, half_}, {6, std::nullopt}});
  ContainmentCandidate half{5, {}}, equivalent{6, {}};
  for (ContainmentCandidate* c : {&half, &equivalent}) {
    c->common.known = true;
    c->common.relation = CommonRelation::kBContainsA;
    c->common.share_a = 1.0;
    c->common.share_b = 0.5;
  }
  PageResult result;
  StatusOr<bool> joined = JudgePageCandidates(page_, std::vector<DocId>{5, 6},
                                              std::vector<ContainmentCandidate>{half, equivalent},
                                              options_, params_, r, &result);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_FALSE(*joined);
  EXPECT_TRUE(r.joins.empty());
  EXPECT_TRUE(r.links.empty());
  ASSERT_EQ(result.matches.size(), 2u);
  for (const Match& m : result.matches) EXPECT_EQ(m.relation, Relation::kContainedIn);
}

TEST_F(JudgeTest, OnceJoinedWithEnoughMatchesTheCandidatesOfItsOwnClusterAreNotScored) {
  options_.max_matches = 2;
  Records r(page_, {{1, near_}, {2, near_}, {3, near_}, {4, near_}});
  r.in_pages_cluster = {3};
  PageResult result;
  StatusOr<bool> joined =
      JudgePageCandidates(page_, std::vector<DocId>{1, 2, 3, 4}, {}, options_, params_, r, &result);
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  // 1 and 2 fill the matches; 3 is in the page's cluster by then, so not read; 4 is not, and may
  // merge its cluster into the page's.
  EXPECT_EQ(r.read, (std::vector<DocId>{1, 2, 4}));
  EXPECT_EQ(result.candidates_in_cluster, 1u);
  EXPECT_EQ(r.joins, (std::vector<DocId>{1, 2, 4}));
  EXPECT_EQ(result.matches.size(), 3u);
}

TEST_F(JudgeTest, APagesContainmentCandidatesHaveTheirRoomAndComeLast) {
  // max_candidates 3, one containment candidate (4): two ranked hits fit. 4's own hits are not
  // ranked (it is a candidate anyway); 9 shares one super shingle, the least.
  std::vector<std::pair<DocId, uint32_t>> hits = {
      {4, kFeatureHit}, {7, kFeatureHit}, {9, kSuperShingleHit}, {5, kFeatureHit}};
  const std::vector<ContainmentCandidate> containment = {{4, {}}};
  std::vector<DocId> out = {99};
  bool truncated = false;
  uint64_t left_out = 0, below_floor = 0;
  RankPageCandidates(&hits, containment, page_.sample, 3, &out, &truncated, &left_out,
                     &below_floor);
  EXPECT_EQ(out, (std::vector<DocId>{5, 7, 4}));
  EXPECT_TRUE(truncated);
  EXPECT_EQ(left_out, 1u);
  EXPECT_EQ(below_floor, 0u);
}

TEST_F(JudgeTest, AQueryKeepsWhatReachesTheThresholdStrongestFirstUpToTheLimit) {
  Records r(page_, {{1, half_}, {2, near_}, {3, other_}, {4, near_}});
  QueryOptions query;
  query.threshold = 0.3;
  StatusOr<std::vector<SimilarDoc>> got =
      ScoreQueryCandidates(std::vector<DocId>{1, 2, 3, 4, 9}, {}, query, params_, r);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  // 3 shares nothing; 9 has no record. 2 and 4 tie: the older first.
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].doc, 2u);
  EXPECT_EQ((*got)[1].doc, 4u);
  EXPECT_EQ((*got)[2].doc, 1u);
  EXPECT_EQ((*got)[0].resemblance_from, ResemblanceSource::kVerifySample);
  EXPECT_NEAR((*got)[2].resemblance, 500.0 / 1500, 0.08);
  query.limit = 1;
  got = ScoreQueryCandidates(std::vector<DocId>{1, 2, 3, 4}, {}, query, params_, r);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].doc, 2u);
}

TEST_F(JudgeTest, AQuerysContainmentCandidateIsEstimatedFromItsBytesInCommon) {
  Records r(page_, {{6, std::nullopt}});
  ContainmentCandidate c{6, {}};
  c.common.known = true;
  c.common.relation = CommonRelation::kAContainsB;
  c.common.share_a = 0.4;
  c.common.share_b = 1.0;
  QueryOptions query;
  StatusOr<std::vector<SimilarDoc>> got = ScoreQueryCandidates(
      std::vector<DocId>{6}, std::vector<ContainmentCandidate>{c}, query, params_, r);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].resemblance, 0);
  EXPECT_EQ((*got)[0].containment_of_query, 0.4);
  EXPECT_EQ((*got)[0].containment_in_query, 1.0);
  EXPECT_EQ((*got)[0].containment_from, ContainmentSource::kChunks);
  EXPECT_TRUE(r.verify_read.empty());
}

}  // namespace
}  // namespace shingled::store::internal
