// What forgetting removes and how a cluster falls apart (store/internal/forget_rules.h): the
// rules every engine's forgetting follows. Their behaviour through a store is in forget_test.
#include "store/internal/forget_rules.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "tests/store/synthetic.h"

namespace shingled::store::internal {
namespace {

using testing::Range;
using testing::SyntheticSketch;

VersionRecord At(int64_t date, DocId doc, Verdict verdict = Verdict::kNew, uint32_t status = 200) {
  VersionRecord v;
  v.sweep = 1;
  v.date = date;
  v.doc = doc;
  v.verdict = verdict;
  v.http_status = status;
  return v;
}

RetentionOptions Rules(int64_t max_version_age, int64_t max_gone_age) {
  RetentionOptions o;
  o.now = 100;
  o.max_version_age = max_version_age;
  o.max_gone_age = max_gone_age;
  return o;
}

TEST(ForgetRulesTest, OldVersionsGoButTheLastAndTheOneAFailedAttemptKeeps) {
  const std::vector<VersionRecord> three{At(10, 1), At(20, 2), At(30, 3)};
  EXPECT_EQ(RetentionCutOf(three, Rules(75, 0)).versions, 2u);  // before 25
  EXPECT_EQ(RetentionCutOf(three, Rules(85, 0)).versions, 1u);  // before 15
  EXPECT_EQ(RetentionCutOf(three, Rules(1, 0)).versions, 2u);   // all old: the last stays
  EXPECT_EQ(RetentionCutOf(three, Rules(0, 0)).versions, 0u);   // no rule
  EXPECT_FALSE(RetentionCutOf(three, Rules(75, 0)).whole_url);
  // A failed attempt at 20 keeps the content of 10 live: 10 stays while the attempt does.
  const std::vector<VersionRecord> kept{At(10, 5), At(20, 5, Verdict::kFailed, 503), At(30, 6)};
  EXPECT_EQ(RetentionCutOf(kept, Rules(85, 0)).versions, 0u);
  EXPECT_EQ(RetentionCutOf(kept, Rules(75, 0)).versions, 2u);
  EXPECT_EQ(RetentionCutOf(std::vector<VersionRecord>{}, Rules(75, 0)).versions, 0u);
}

TEST(ForgetRulesTest, AUrlGoneLongerThanTheRuleGoesWhole) {
  const std::vector<VersionRecord> gone{At(10, 1), At(40, 0, Verdict::kGone, 404)};
  const RetentionCut whole = RetentionCutOf(gone, Rules(0, 50));  // gone since 40 < 50
  EXPECT_TRUE(whole.whole_url);
  EXPECT_EQ(whole.versions, 2u);
  EXPECT_FALSE(RetentionCutOf(gone, Rules(0, 70)).whole_url);  // since 40, not before 30
  // A URL whose last version is live is never gone, however old.
  const std::vector<VersionRecord> live{At(10, 1)};
  EXPECT_FALSE(RetentionCutOf(live, Rules(0, 50)).whole_url);
  // Gone, but recent: the version age rule still applies to its older versions.
  const std::vector<VersionRecord> recent{At(10, 1), At(90, 0, Verdict::kGone, 404)};
  const RetentionCut cut = RetentionCutOf(recent, Rules(50, 50));
  EXPECT_FALSE(cut.whole_url);
  EXPECT_EQ(cut.versions, 1u);
}

class RecomputeTest : public ::testing::Test {
 protected:
  RemainingMember Holder(DocId doc, const std::vector<uint64_t>& shingles) {
    RemainingMember m;
    m.doc = m.holder = doc;
    m.sketch = SyntheticSketch(params_, shingles);
    m.verify = m.sketch.verify_sample;  // as stored with the document
    m.verify_known = !m.verify.empty();
    return m;
  }
  static RemainingMember Naming(DocId doc, DocId holder) {
    RemainingMember m;
    m.doc = doc;
    m.holder = holder;
    return m;
  }
  std::vector<ClusterPart> Parts(ClusterId root, const std::vector<RemainingMember>& members) {
    return RecomputeCluster(root, members, options_, params_);
  }

  dedup::SketchParams params_;
  StoreOptions options_;
};

// A ~ B ~ C with B gone: A and C (J = 0.43) are too far apart to join at 0.5, A' names A and C'
// names C (the exact level). The part holding the old root keeps it; the other takes its
// smallest member.
TEST_F(RecomputeTest, AChainWithoutItsMiddleSplitsAndTheRootStaysWithItsPart) {
  options_.verified_threshold = 0.5;
  const std::vector<RemainingMember> members{Holder(1, Range(0, 1000)), Naming(2, 1),
                                             Holder(4, Range(400, 1000)), Naming(5, 4)};
  const std::vector<ClusterPart> parts = Parts(1, members);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].id, 1u);
  EXPECT_EQ(parts[0].docs, (std::vector<DocId>{1, 2}));
  EXPECT_EQ(parts[1].id, 4u);
  EXPECT_EQ(parts[1].docs, (std::vector<DocId>{4, 5}));
  // Without the exact level among the relations that form clusters, a group is not joined.
  options_.cluster_relations = kClusterVerified;
  EXPECT_EQ(Parts(1, members).size(), 4u);
}

TEST_F(RecomputeTest, NearCopiesStayOnePartUnderTheirSmallestIdWhenTheRootWent) {
  options_.verified_threshold = 0.5;
  const std::vector<ClusterPart> parts =
      Parts(1, {Holder(2, Range(0, 1000)), Holder(3, Range(200, 1000)), Naming(7, 3)});
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].id, 2u);
  EXPECT_EQ(parts[0].docs, (std::vector<DocId>{2, 3, 7}));
}

// A store in memory, as planning reads it: which URLs show a document, each document's holder,
// and its cluster.
class MemoryReads : public ForgetReads {
 public:
  std::map<DocId, std::vector<UrlId>> urls;
  std::map<DocId, DocId> holder;       // absent: its own
  std::map<DocId, ClusterId> cluster;  // absent: a singleton
  std::map<DocId, RemainingMember> members;
  std::vector<DocId> read_members;

  StatusOr<std::vector<std::vector<UrlId>>> UrlsShowing(std::span<const DocId> docs) override {
    std::vector<std::vector<UrlId>> out;
    for (DocId d : docs) out.push_back(urls[d]);
    return out;
  }
  StatusOr<std::vector<DocId>> HoldersOf(std::span<const DocId> docs) override {
    std::vector<DocId> out;
    for (DocId d : docs) out.push_back(holder.contains(d) ? holder[d] : d);
    return out;
  }
  StatusOr<std::vector<std::vector<DocId>>> SharersOf(std::span<const DocId> holders) override {
    std::vector<std::vector<DocId>> out;
    for (DocId h : holders) {
      std::vector<DocId>& group = out.emplace_back();
      for (const auto& [doc, of] : holder) {
        if (of == h) group.push_back(doc);
      }
    }
    return out;
  }
  StatusOr<std::vector<ClusterId>> RootsOf(std::span<const DocId> docs) override {
    std::vector<ClusterId> out;
    for (DocId d : docs) out.push_back(cluster.contains(d) ? cluster[d] : d);
    return out;
  }
  StatusOr<std::vector<std::vector<DocId>>> MembersOf(std::span<const ClusterId> roots) override {
    std::vector<std::vector<DocId>> out;
    for (ClusterId r : roots) {
      std::vector<DocId>& m = out.emplace_back();
      for (const auto& [doc, root] : cluster) {
        if (root == r) m.push_back(doc);
      }
      if (m.empty()) m.push_back(r);
    }
    return out;
  }
  StatusOr<std::vector<RemainingMember>> ReadMembers(std::span<const DocId> docs) override {
    std::vector<RemainingMember> out;
    for (DocId d : docs) {
      read_members.push_back(d);
      out.push_back(members.at(d));
    }
    return out;
  }
};

UrlTrim Whole(UrlId url, const std::vector<DocId>& docs) {
  UrlTrim t;
  t.url = url;
  t.name = "https://x.example/" + std::to_string(url);
  for (DocId d : docs) t.versions.push_back(At(10, d));
  t.cut = docs.size();
  t.whole = true;
  return t;
}

TEST(PlanRemovalsTest, ADocumentGoesWhenNoOtherUrlShowsIt) {
  MemoryReads reads;
  reads.urls = {{1, {10, 11}}, {2, {10}}};  // URL 10 shows 1 and 2; URL 11 shows 1 too
  const std::vector<UrlTrim> trims{Whole(10, {1, 2})};
  StatusOr<RemovalPlan> plan = PlanRemovals(trims, reads, StoreOptions{}, dedup::SketchParams{});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->removed, (std::vector<DocId>{2}));
  EXPECT_EQ(plan->documents_kept, 0u);
  EXPECT_TRUE(plan->clusters.empty());
  ForgetResult result;
  CountPlan(trims, *plan, 0, &result);
  EXPECT_EQ(result.urls, 1u);
  EXPECT_EQ(result.versions, 2u);
  EXPECT_EQ(result.documents, 1u);
  EXPECT_TRUE(result.listed.empty());
}

// A trimmed URL still shows the documents of the versions it keeps.
TEST(PlanRemovalsTest, APartialTrimDropsOnlyWhatItsKeptVersionsDoNotShow) {
  MemoryReads reads;
  reads.urls = {{1, {10}}, {2, {10}}};
  UrlTrim t = Whole(10, {1, 2, 1, 3});
  t.whole = false;
  t.cut = 2;  // versions of 1 and 2 go; 1 and 3 stay
  EXPECT_EQ(DroppedDocuments(t), (std::vector<DocId>{2}));
  StatusOr<RemovalPlan> plan =
      PlanRemovals(std::vector<UrlTrim>{t}, reads, StoreOptions{}, dedup::SketchParams{});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->removed, (std::vector<DocId>{2}));
}

// A group (a holder and the documents sharing its sketch) goes whole, and only when no member
// is shown: the unshown ones of a shown group are kept.
TEST(PlanRemovalsTest, AGroupGoesWholeOrStays) {
  MemoryReads reads;
  reads.urls = {{1, {10}}, {2, {11}}, {3, {12}}};
  reads.holder = {{2, 1}, {3, 1}};
  StatusOr<RemovalPlan> plan = PlanRemovals(std::vector<UrlTrim>{Whole(10, {1}), Whole(11, {2})},
                                            reads, StoreOptions{}, dedup::SketchParams{});
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->removed.empty());
  EXPECT_EQ(plan->documents_kept, 2u);
  plan = PlanRemovals(std::vector<UrlTrim>{Whole(10, {1}), Whole(11, {2}), Whole(12, {3})}, reads,
                      StoreOptions{}, dedup::SketchParams{});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->removed, (std::vector<DocId>{1, 2, 3}));
  EXPECT_EQ(plan->documents_kept, 0u);
}

// A cluster that loses a member is recomputed from the members that remain, read once each.
TEST_F(RecomputeTest, APlanRecomputesTheClusterOfARemovedDocument) {
  options_.verified_threshold = 0.5;
  MemoryReads reads;
  reads.urls = {{1, {10}}, {2, {11}}, {3, {12}}};
  reads.cluster = {{1, 1}, {2, 1}, {3, 1}};
  reads.members = {{1, Holder(1, Range(0, 1000))}, {3, Holder(3, Range(400, 1000))}};
  StatusOr<RemovalPlan> plan =
      PlanRemovals(std::vector<UrlTrim>{Whole(11, {2})}, reads, options_, params_);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->removed, (std::vector<DocId>{2}));
  ASSERT_EQ(plan->clusters.size(), 1u);
  EXPECT_EQ(plan->clusters[0].root, 1u);
  EXPECT_EQ(plan->clusters[0].members, (std::vector<DocId>{1, 2, 3}));
  EXPECT_EQ(plan->clusters[0].parts.size(), 2u);  // J(1, 3) = 0.43: they part
  EXPECT_EQ(reads.read_members, (std::vector<DocId>{1, 3}));
  ForgetResult result;
  CountPlan(std::vector<UrlTrim>{Whole(11, {2})}, *plan, 5, &result);
  EXPECT_EQ(result.clusters_recomputed, 1u);
  EXPECT_EQ(result.clusters_split, 1u);
  EXPECT_EQ(result.listed, (std::vector<std::string>{"https://x.example/11"}));
}

}  // namespace
}  // namespace shingled::store::internal
