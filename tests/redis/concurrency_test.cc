// Concurrency between daemons (redis/claims.h, redis/union_find.h; docs/REDIS.md, "Concurrency"):
// real threads, each with its own ClusterClient as a separate daemon would have, racing on a real
// 3-master cluster.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "redis/claims.h"
#include "redis/slot.h"
#include "redis/union_find.h"
#include "tests/redis/cluster_fixture.h"

namespace shingled::redis {
namespace {

using ConcurrencyTest = testing::ClusterTest;

// Starts `n` threads that each wait until all are ready, then run body(thread index).
template <typename Body>
void Race(int n, Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      body(t);
    });
  }
  for (std::thread& th : threads) th.join();
}

constexpr int kThreads = 4;
constexpr int kBits = 12;

// Every thread claims the same 200 fingerprints (each for a document id of its own) and 200 of
// its own: exactly one winner per shared fingerprint, every loser told the winner's id, and every
// thread wins its own.
TEST_F(ConcurrencyTest, AFingerprintClaimedByRacingDaemonsHasOneWinner) {
  constexpr int kShared = 200;
  std::vector<std::unique_ptr<ClusterClient>> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.push_back(NewClient());
    ASSERT_NE(clients.back(), nullptr);
  }
  std::vector<std::vector<ClaimResult>> results(kThreads);
  std::vector<Status> errors(kThreads);
  Race(kThreads, [&](int t) {
    std::vector<FingerprintClaim> claims;
    for (int i = 0; i < kShared; ++i) {
      const uint64_t high = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1);
      claims.push_back({.relation = Relation::kIdentical,
                        .high = high,
                        .low = high ^ 7,
                        .doc = static_cast<uint64_t>(1000 * (t + 1) + i)});
    }
    for (int i = 0; i < kShared; ++i) {
      const uint64_t high = 0xc2b2ae3d27d4eb4full * static_cast<uint64_t>(1000 * (t + 1) + i);
      claims.push_back({.relation = Relation::kIdentical,
                        .high = high,
                        .low = 1,
                        .doc = static_cast<uint64_t>(100000 + 1000 * t + i)});
    }
    // In small batches, so that the threads interleave on the same buckets.
    for (size_t start = 0; start < claims.size(); start += 10) {
      std::vector<FingerprintClaim> batch(claims.begin() + static_cast<long>(start),
                                          claims.begin() + static_cast<long>(start + 10));
      auto got = ClaimFingerprints(*clients[t], batch, kBits);
      if (!got.ok()) {
        errors[t] = got.status();
        return;
      }
      results[t].insert(results[t].end(), got->begin(), got->end());
    }
  });
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(errors[t].ok()) << errors[t].ToString();
    ASSERT_EQ(results[t].size(), 2u * kShared);
  }
  std::vector<int> wins(kThreads, 0);
  for (int i = 0; i < kShared; ++i) {
    int winners = 0;
    const uint64_t owner = results[0][i].owner;
    for (int t = 0; t < kThreads; ++t) {
      winners += results[t][i].won ? 1 : 0;
      EXPECT_EQ(results[t][i].owner, owner) << "fingerprint " << i << ", thread " << t;
      if (results[t][i].won) {
        EXPECT_EQ(owner, static_cast<uint64_t>(1000 * (t + 1) + i));
        ++wins[t];
      }
    }
    EXPECT_EQ(winners, 1) << "fingerprint " << i;
  }
  for (int t = 0; t < kThreads; ++t) {
    for (int i = kShared; i < 2 * kShared; ++i) EXPECT_TRUE(results[t][i].won) << t << " " << i;
  }
  // Claiming again (a resend after a broken connection) finds the same winners.
  auto again = ClaimFingerprints(*clients[0],
                                 {{.relation = Relation::kIdentical,
                                   .high = 0x9e3779b97f4a7c15ull,
                                   .low = 0x9e3779b97f4a7c15ull ^ 7,
                                   .doc = results[0][0].owner}},
                                 kBits);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE((*again)[0].won);
  std::cout << "shared fingerprints won per thread:";
  for (const int w : wins) std::cout << " " << w;
  std::cout << "\n";
}

// Threads taking ids in blocks of 7 from one counter: no id twice, and the ids handed out are
// within the blocks reserved (a block's unused rest is a gap, never reused).
TEST_F(ConcurrencyTest, IdBlocksNeverHandOutAnIdTwice) {
  constexpr int kIdsEach = 500;
  constexpr uint64_t kBlock = 7;
  std::vector<std::unique_ptr<ClusterClient>> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.push_back(NewClient());
    ASSERT_NE(clients.back(), nullptr);
  }
  std::vector<std::vector<uint64_t>> ids(kThreads);
  std::vector<Status> errors(kThreads);
  Race(kThreads, [&](int t) {
    IdBlocks blocks(*clients[t], "next:doc", kBlock);
    for (int i = 0; i < kIdsEach; ++i) {
      auto id = blocks.Next();
      if (!id.ok()) {
        errors[t] = id.status();
        return;
      }
      ids[t].push_back(*id);
    }
  });
  std::set<uint64_t> all;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(errors[t].ok()) << errors[t].ToString();
    EXPECT_TRUE(std::is_sorted(ids[t].begin(), ids[t].end()));
    all.insert(ids[t].begin(), ids[t].end());
  }
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kIdsEach));
  EXPECT_GE(*all.begin(), 1u);
  auto counter = clients[0]->Run(Command{.args = {"GET", "next:doc"}});
  ASSERT_TRUE(counter.ok());
  const uint64_t reserved = std::stoull(counter->str);
  // Each thread reserved ceil(500 / 7) = 72 blocks; the last ones are partly unused.
  EXPECT_EQ(reserved, kThreads * 72 * kBlock);
  EXPECT_LE(*all.rbegin(), reserved);
}

// Two near-copies filed at the same moment by two daemons: they share most of their values, and
// because each value's append and read are one atomic step, at least one of the two sees the
// other, on every round of many.
TEST_F(ConcurrencyTest, RacingNearCopiesFindEachOther) {
  constexpr int kRounds = 200;
  constexpr int kValues = 40;  // ~ a page's features, super shingles and sample values
  auto a_client = NewClient();
  auto b_client = NewClient();
  ASSERT_NE(a_client, nullptr);
  ASSERT_NE(b_client, nullptr);
  ClusterClient* clients[2] = {a_client.get(), b_client.get()};
  std::mt19937_64 rng(36);
  int both_saw = 0;
  for (int round = 0; round < kRounds; ++round) {
    // The two pages share 36 values of 40 (resemblance ~0.8); each has 4 of its own.
    std::vector<PostingValue> pages[2];
    const Relation relations[] = {Relation::kFeature, Relation::kSuperShingle, Relation::kSample};
    for (int i = 0; i < kValues; ++i) {
      const Relation relation = relations[i % 3];
      const uint64_t shared = rng();
      for (auto& page : pages) {
        page.push_back({.relation = relation, .value = i < 36 ? shared : rng(), .bucket_bits = 14});
      }
    }
    const uint64_t docs[2] = {static_cast<uint64_t>(2 * round + 1),
                              static_cast<uint64_t>(2 * round + 2)};
    std::vector<std::vector<uint64_t>> seen[2];
    Status errors[2];
    Race(2, [&](int t) {
      auto got = FileAndReadPostings(*clients[t], docs[t], pages[t]);
      if (got.ok()) {
        seen[t] = std::move(*got);
      } else {
        errors[t] = got.status();
      }
    });
    ASSERT_TRUE(errors[0].ok()) << errors[0].ToString();
    ASSERT_TRUE(errors[1].ok()) << errors[1].ToString();
    bool saw[2] = {false, false};
    for (int t = 0; t < 2; ++t) {
      for (int i = 0; i < kValues; ++i) {
        for (const uint64_t other : seen[t][i]) {
          EXPECT_EQ(other, docs[1 - t]) << "round " << round;
          // A value the pages do not share lists only the page itself.
          EXPECT_LT(i, 36);
          saw[t] = true;
        }
      }
    }
    // On each shared value, at least one of the two saw the other.
    for (int i = 0; i < 36; ++i) {
      EXPECT_TRUE(!seen[0][i].empty() || !seen[1][i].empty())
          << "round " << round << " value " << i;
    }
    EXPECT_TRUE(saw[0] || saw[1]) << "round " << round;
    both_saw += saw[0] && saw[1] ? 1 : 0;
  }
  std::cout << "rounds where both pages saw the other: " << both_saw << " of " << kRounds << "\n";
}

// FileAndReadPostings files the postings of each master in one script (RunByMaster), routed by
// its first bucket. When a bucket's slot moved to another master after the client read its slot
// map, that script fails on the old master ("non local key"), and every posting is filed again in
// a script of its own, which the client follows to the slot's new master.
TEST_F(ConcurrencyTest, PostingsFiledByMasterFollowASlotThatMoved) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  // Two values whose buckets the client's map puts on one master, in two slots.
  auto bucket_slot = [](const PostingValue& v) {
    return KeySlot(BucketKey(v.relation, v.value, v.bucket_bits));
  };
  const PostingValue staying{.relation = Relation::kFeature, .value = 1, .bucket_bits = 14};
  PostingValue moving = staying;
  for (uint64_t v = 2;; ++v) {
    moving.value = v << 50;  // the bucket is the value's high bits
    const int slot = bucket_slot(moving);
    if (slot != bucket_slot(staying) &&
        client->NodeForSlot(slot) == client->NodeForSlot(bucket_slot(staying))) {
      break;
    }
  }
  const uint64_t commands = client->stats().commands;
  auto first = FileAndReadPostings(*client, 1, {staying, moving});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, (std::vector<std::vector<uint64_t>>{{}, {}}));
  EXPECT_EQ(client->stats().commands - commands, 1u);  // one script for the master's two

  // The moving bucket's slot migrated to another master, behind the client's back.
  const int slot = bucket_slot(moving);
  const std::string src_node = client->NodeForSlot(slot);
  const int src = cluster_->IndexOfPort(std::stoi(src_node.substr(src_node.rfind(':') + 1)));
  const int dst = (src + 1) % 3;
  const std::string s = std::to_string(slot);
  auto cli = [&](int node, const std::string& args) {
    std::string out;
    EXPECT_EQ(cluster_->Cli(cluster_->port(node), args, &out), 0) << args << ": " << out;
  };
  cli(dst, "cluster setslot " + s + " importing " + cluster_->NodeId(src));
  cli(src, "cluster setslot " + s + " migrating " + cluster_->NodeId(dst));
  cli(src, "migrate 127.0.0.1 " + std::to_string(cluster_->port(dst)) + " '' 0 5000 auth pw-" +
               std::to_string(::getpid()) + " keys '" +
               BucketKey(moving.relation, moving.value, moving.bucket_bits) + "'");
  cli(dst, "cluster setslot " + s + " node " + cluster_->NodeId(dst));
  cli(src, "cluster setslot " + s + " node " + cluster_->NodeId(dst));
  ASSERT_EQ(client->NodeForSlot(slot), src_node);  // the client has not seen it

  auto second = FileAndReadPostings(*client, 2, {staying, moving});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*second, (std::vector<std::vector<uint64_t>>{{1}, {1}}));
  EXPECT_GE(client->stats().moved, 1u);
  EXPECT_EQ(client->NodeForSlot(slot), "127.0.0.1:" + std::to_string(cluster_->port(dst)));
  // Filed once each, whatever the failed script had filed before it failed.
  auto third = FileAndReadPostings(*client, 3, {staying, moving});
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(*third, (std::vector<std::vector<uint64_t>>{{1, 2}, {1, 2}}));
}

// A sequential union-find over the same pairs, the reference.
struct Reference {
  std::vector<uint64_t> parent;
  explicit Reference(size_t n) : parent(n + 1) { std::iota(parent.begin(), parent.end(), 0); }
  uint64_t Find(uint64_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(uint64_t a, uint64_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

// Threads merging random pairs of 3,000 documents at once end with the partition of a sequential
// union-find over the same pairs: every cluster's id is its smallest document, every document
// finds it, and the cluster's members are listed from it.
TEST_F(ConcurrencyTest, ConcurrentUnionsEndInTheSequentialPartition) {
  constexpr uint64_t kDocs = 3000;
  constexpr int kPairsEach = 700;
  std::vector<std::unique_ptr<ClusterClient>> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.push_back(NewClient());
    ASSERT_NE(clients.back(), nullptr);
  }
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> pairs(kThreads);
  std::mt19937_64 rng(3600);
  Reference reference(kDocs);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPairsEach; ++i) {
      // Mostly within a neighbourhood (clusters of a few dozen), sometimes across the range
      // (merging them into large clusters).
      const uint64_t a = 1 + rng() % kDocs;
      const uint64_t b = i % 10 == 0 ? 1 + rng() % kDocs : 1 + (a - 1 + rng() % 40) % kDocs;
      pairs[t].emplace_back(a, b);
      reference.Union(a, b);
    }
  }
  std::vector<Status> errors(kThreads);
  Race(kThreads, [&](int t) {
    for (const auto& [a, b] : pairs[t]) {
      auto root = Union(*clients[t], a, b);
      if (!root.ok()) {
        errors[t] = root.status();
        return;
      }
    }
  });
  for (int t = 0; t < kThreads; ++t) ASSERT_TRUE(errors[t].ok()) << errors[t].ToString();

  std::vector<uint64_t> docs(kDocs);
  std::iota(docs.begin(), docs.end(), 1);
  auto roots = FindRoots(*clients[0], docs);
  ASSERT_TRUE(roots.ok()) << roots.status().ToString();
  std::map<uint64_t, std::vector<uint64_t>> expected;
  int mismatches = 0;
  for (uint64_t d = 1; d <= kDocs; ++d) {
    const uint64_t want = reference.Find(d);
    expected[want].push_back(d);
    if ((*roots)[d - 1] != want) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
  size_t largest = 0;
  for (const auto& [root, members] : expected) {
    largest = std::max(largest, members.size());
    auto listed = ClusterMembers(*clients[1], root);
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    EXPECT_EQ(*listed, members) << "cluster " << root;
  }
  std::cout << expected.size() << " clusters, the largest of " << largest << " documents\n";
  EXPECT_GT(largest, 100u);  // the pairs did merge clusters across the range
}

TEST_F(ConcurrencyTest, UnionFindRefusesBadIdsAndBrokenEntries) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(Union(*client, 0, 5).status().code(), StatusCode::kInvalidArgument);
  // An entry pointing to a larger id (never written by Union) is reported, not followed.
  ASSERT_TRUE(client->Run(Command{.args = {"HSET", ParentBucketKey(10), "10", "20"}}).ok());
  auto roots = FindRoots(*client, {10});
  ASSERT_FALSE(roots.ok());
  EXPECT_EQ(roots.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(roots.status().message().find("document 10 is \"20\""), std::string::npos)
      << roots.status().ToString();
}

}  // namespace
}  // namespace shingled::redis
