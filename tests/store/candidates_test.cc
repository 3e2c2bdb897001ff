// Candidate search's ranking and the similarity query's candidate rule, written once for both
// engines (store/internal/candidates.h).
#include "store/internal/candidates.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace shingled::store::internal {
namespace {

using Hits = std::vector<std::pair<DocId, uint32_t>>;

TEST(CandidatesTest, RankingSumsThePointsAndPrefersTheOlderOnATie) {
  // 5: a feature and a super shingle (5 points); 3: a feature (4); 9: two super shingles (2);
  // 2: a feature (4, older than 3).
  Hits hits = {{3, kFeatureHit}, {9, kSuperShingleHit}, {5, kFeatureHit},
               {2, kFeatureHit}, {9, kSuperShingleHit}, {5, kSuperShingleHit}};
  std::vector<DocId> out;
  bool truncated = false;
  uint64_t left_out = 0;
  RankCandidates(&hits, 3, &out, &truncated, &left_out);
  EXPECT_EQ(out, (std::vector<DocId>{5, 2, 3}));
  EXPECT_TRUE(truncated);
  EXPECT_EQ(left_out, 1u);
}

TEST(CandidatesTest, AQueryReadsItsFeaturesWithFewUsableValuesOrTooManyPostings) {
  EXPECT_TRUE(QueryReadsFeatures(kEnoughSampleValues - 1, 0, 100));
  EXPECT_FALSE(QueryReadsFeatures(kEnoughSampleValues, 100, 100));
  EXPECT_TRUE(QueryReadsFeatures(kEnoughSampleValues, 101, 100));
}

TEST(CandidatesTest, AQuerysCandidatesAreInIdOrderWithoutTheExcludedAndTheReserved) {
  Hits hits = {{7, 1}, {4, 1}, {7, 4}, {1, 1}, {6, 1}};
  const std::vector<DocId> reserved = {6};
  std::vector<DocId> out = {99};  // replaced, not appended to
  bool truncated = true;
  uint64_t left_out = 5;
  QueryCandidatesOf(&hits, /*exclude=*/1, reserved, 10, &out, &truncated, &left_out);
  EXPECT_EQ(out, (std::vector<DocId>{4, 7}));
  EXPECT_FALSE(truncated);
  EXPECT_EQ(left_out, 0u);
}

TEST(CandidatesTest, AQueryKeepsTheBestRankedWhenTheReservedLeaveTooLittleRoom) {
  // Room: 3 - 1 reserved = 2, for 3 documents found: 8 (5 points) and 2 (4) are kept, in id order.
  Hits hits = {{2, kFeatureHit}, {8, kFeatureHit}, {8, kSuperShingleHit}, {5, kSuperShingleHit}};
  const std::vector<DocId> reserved = {9};
  std::vector<DocId> out;
  bool truncated = false;
  uint64_t left_out = 0;
  QueryCandidatesOf(&hits, 0, reserved, 3, &out, &truncated, &left_out);
  EXPECT_EQ(out, (std::vector<DocId>{2, 8}));
  EXPECT_TRUE(truncated);
  EXPECT_EQ(left_out, 1u);
}

}  // namespace
}  // namespace shingled::store::internal
