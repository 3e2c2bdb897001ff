// The persistent union-find against a slow, obviously correct reference, on a real LMDB env.
#include "store/internal/clusters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "tests/store/test_dir.h"

namespace shingled::store::internal {
namespace {

// Reference: explicit sets of members, merged by copying; the id rule of FORMAT.md.
class Reference {
 public:
  explicit Reference(DocId n) {
    for (DocId d = 1; d <= n; ++d) id_[d] = d, sets_[d] = {d};
  }
  void Union(DocId a, DocId b) {
    DocId ra = id_[a], rb = id_[b];
    if (ra == rb) return;
    bool a_wins = sets_[ra].size() > sets_[rb].size() || (sets_[ra].size() == sets_[rb].size() && ra < rb);
    DocId w = a_wins ? ra : rb, l = a_wins ? rb : ra;
    for (DocId m : sets_[l]) id_[m] = w, sets_[w].insert(m);
    sets_.erase(l);
  }
  DocId Find(DocId d) const { return id_.at(d); }
  std::vector<DocId> Members(DocId root) const {
    const auto& s = sets_.at(root);
    return {s.begin(), s.end()};
  }
  int64_t MultiMember() const {
    return std::count_if(sets_.begin(), sets_.end(), [](const auto& kv) { return kv.second.size() > 1; });
  }
  uint64_t Largest() const {
    uint64_t n = 0;
    for (const auto& [root, set] : sets_) n = std::max<uint64_t>(n, set.size());
    return n;
  }

 private:
  std::map<DocId, DocId> id_;
  std::map<DocId, std::set<DocId>> sets_;
};

TEST(ClustersTest, MatchesReferenceOnRandomUnions) {
  testing::TestDir dir;
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_set_maxdbs(env, 32), 0);
  ASSERT_EQ(mdb_env_set_mapsize(env, 256 << 20), 0);
  ASSERT_EQ(mdb_env_open(env, dir.path().c_str(), MDB_NOSYNC, 0644), 0);
  Dbis dbis{};
  {
    MDB_txn* txn;
    ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
    for (const TableSpec& t : kTables) ASSERT_EQ(mdb_dbi_open(txn, t.name, MDB_CREATE | t.flags, &(dbis.*t.member)), 0);
    ASSERT_EQ(mdb_txn_commit(txn), 0);
  }
  const DocId n = 400;
  Reference ref(n);
  std::mt19937_64 rng(7);
  int64_t multi = 0;
  uint64_t largest = 0;  // the largest merge result so far, as the store's writer keeps it
  for (int round = 0; round < 40; ++round) {
    MDB_txn* raw;
    ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &raw), 0);
    Txn txn(raw);
    TxnOps ops(txn.get(), dbis);
    for (int i = 0; i < 10; ++i) {
      // Skewed pairs so that clusters of very different sizes meet.
      DocId a = 1 + rng() % (round < 20 ? 40 : n), b = 1 + rng() % n;
      uint64_t merged = 0;
      StatusOr<ClusterId> root = UnionClusters(ops, a, b, &multi, &merged);
      ASSERT_TRUE(root.ok()) << root.status().ToString();
      const bool already = ref.Find(a) == ref.Find(b);
      ref.Union(a, b);
      EXPECT_EQ(*root, ref.Find(a));
      EXPECT_EQ(merged, already ? 0u : ref.Members(*root).size());
      largest = std::max(largest, merged);
    }
    ASSERT_EQ(txn.Commit(), 0);
    // Verify everything in a fresh read transaction (what is persisted).
    ASSERT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &raw), 0);
    Txn read(raw);
    TxnOps rops(read.get(), dbis);
    for (DocId d = 1; d <= n; ++d) {
      StatusOr<ClusterId> r = FindCluster(rops, d);
      ASSERT_TRUE(r.ok());
      ASSERT_EQ(*r, ref.Find(d)) << "doc " << d;
      if (*r == d) {
        StatusOr<std::vector<DocId>> members = ClusterMembers(rops, d);
        ASSERT_TRUE(members.ok());
        EXPECT_EQ(*members, ref.Members(d));
        StatusOr<uint64_t> size = ClusterSize(rops, d);
        ASSERT_TRUE(size.ok());
        EXPECT_EQ(*size, ref.Members(d).size());
      }
    }
    EXPECT_EQ(multi, ref.MultiMember());
    EXPECT_EQ(largest, ref.Largest());
    StatusOr<uint64_t> scanned = LargestClusterByScan(rops);  // no documents: singletons count 0
    ASSERT_TRUE(scanned.ok());
    EXPECT_EQ(*scanned, ref.Largest());
  }
  mdb_env_close(env);
}

TEST(ClustersTest, JoiningKeepsTheIdAndMergeKeepsTheLarger) {
  testing::TestDir dir;
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_set_maxdbs(env, 32), 0);
  ASSERT_EQ(mdb_env_open(env, dir.path().c_str(), MDB_NOSYNC, 0644), 0);
  Dbis dbis{};
  MDB_txn* raw;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &raw), 0);
  Txn txn(raw);
  for (const TableSpec& t : kTables) ASSERT_EQ(mdb_dbi_open(txn.get(), t.name, MDB_CREATE | t.flags, &(dbis.*t.member)), 0);
  TxnOps ops(txn.get(), dbis);
  int64_t multi = 0;
  EXPECT_EQ(*UnionClusters(ops, 10, 3, &multi), 3u);  // tie of singletons: the older id
  EXPECT_EQ(*UnionClusters(ops, 11, 10, &multi), 3u);  // a page joining keeps the id
  EXPECT_EQ(*UnionClusters(ops, 1, 2, &multi), 1u);
  EXPECT_EQ(*UnionClusters(ops, 2, 11, &multi), 3u);  // {1,2} into the larger {3,10,11}
  EXPECT_EQ(*ClusterSize(ops, 3), 5u);
  EXPECT_EQ(*ClusterMembers(ops, 3), (std::vector<DocId>{1, 2, 3, 10, 11}));
  EXPECT_EQ(*FindCluster(ops, 1), 3u);
  EXPECT_EQ(*FindCluster(ops, 99), 99u);  // a singleton is its own cluster
  EXPECT_EQ(multi, 1);
  txn.Abort();
  mdb_env_close(env);
}

}  // namespace
}  // namespace shingled::store::internal
