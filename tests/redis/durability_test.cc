// Durability (ClusterClient::WaitForReplicas, CheckAppendFsyncAlways; docs/REDIS.md,
// "Durability") on a real cluster with the append-only file on and `appendfsync always`.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "redis/claims.h"
#include "redis/cluster_client.h"
#include "tests/redis/cluster_fixture.h"

namespace shingled::redis {
namespace {

using testing::RedisCluster;
using DurabilityTest = testing::ClusterTest;

TEST_F(DurabilityTest, TheStartCheckNamesANodeWithoutAppendFsyncAlways) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  const Status ok = client->CheckAppendFsyncAlways();
  EXPECT_TRUE(ok.ok()) << ok.ToString();
  std::string out;
  ASSERT_EQ(cluster_->Cli(cluster_->port(1), "config set appendfsync everysec", &out), 0) << out;
  const Status bad = client->CheckAppendFsyncAlways();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), StatusCode::kFailedPrecondition);
  const std::string node = "127.0.0.1:" + std::to_string(cluster_->port(1));
  EXPECT_NE(bad.message().find(node + " has appendfsync everysec"), std::string::npos)
      << bad.ToString();
  ASSERT_EQ(cluster_->Cli(cluster_->port(2), "config set appendonly no", &out), 0) << out;
  const Status worse = client->CheckAppendFsyncAlways();
  EXPECT_NE(
      worse.message().find("127.0.0.1:" + std::to_string(cluster_->port(2)) + " has appendonly no"),
      std::string::npos)
      << worse.ToString();
}

// Without replicas, WAIT 1 cannot be satisfied: the call says which node and how many answered.
// WAIT 0 (and a client that wrote nothing) returns at once.
TEST_F(DurabilityTest, WaitWithoutEnoughReplicasNamesTheNode) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->WaitForReplicas(1, std::chrono::milliseconds(100)).ok());  // no writes
  EXPECT_EQ(client->stats().waits, 0u);
  ASSERT_TRUE(client->Run(Command{.args = {"SET", "a", "1"}}).ok());
  EXPECT_TRUE(client->WaitForReplicas(0, std::chrono::milliseconds(100)).ok());
  ASSERT_TRUE(client->Run(Command{.args = {"SET", "a", "2"}}).ok());
  const Status s = client->WaitForReplicas(1, std::chrono::milliseconds(100));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find(client->NodeForSlot(KeySlot("a")) +
                             ": WAIT: 0 of 1 replicas acknowledged the writes within 100 ms"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(client->stats().waits, 1u);  // only the node written to was asked
  EXPECT_EQ(client->WaitForReplicas(-1, std::chrono::milliseconds(100)).code(),
            StatusCode::kInvalidArgument);
  // A block of ids that did not reach a replica is not used: the next block is asked for anew.
  IdBlocks unreplicated(*client, "next:doc", 10, /*min_replicas=*/1);
  auto id = unreplicated.Next();
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kUnavailable);
  IdBlocks plain(*client, "next:doc", 10);
  auto next = plain.Next();
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, 11u);  // ids 1..10 are a gap
}

// The readiness probe of the replicas: without any, min_replicas 1 names every master.
TEST_F(DurabilityTest, CheckReplicasNamesEachMasterShortOfThem) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->CheckReplicas(0).ok());
  const Status s = client->CheckReplicas(1);
  ASSERT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  for (const std::string& seed : cluster_->seeds()) {
    EXPECT_NE(s.message().find(seed + " has 0 of 1"), std::string::npos) << s.ToString();
  }
}

// With a replica per master and min_replicas = 1: threads write batches of keys and acknowledge a
// batch only once WaitForReplicas(1) says every master written to has it on a replica. A master
// is killed (SIGKILL) while they write; its replica takes over; every batch acknowledged before
// the kill (and after it) is on the cluster.
TEST(DurabilityFailoverTest, AcknowledgedWritesSurviveTheLossOfAMaster) {
  std::string why;
  if (!RedisCluster::Available(&why)) GTEST_SKIP() << why;
  RedisCluster cluster;
  const Status started = cluster.Start({.masters = 3, .replicas_per_master = 1});
  ASSERT_TRUE(started.ok()) << started.ToString();
  ClusterOptions options;
  options.seeds = cluster.seeds();
  options.password_file = cluster.password_file();
  options.command_timeout = std::chrono::milliseconds(3000);
  constexpr int kWriters = 2;
  constexpr int kBatch = 50;
  std::atomic<bool> killed{false};
  std::atomic<bool> stop{false};
  std::atomic<int> acked_batches{0};
  std::vector<std::vector<std::string>> acked(kWriters);
  std::vector<size_t> acked_before_kill(kWriters, 0);
  std::vector<int> failures(kWriters, 0);
  std::vector<std::string> errors(kWriters);
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      auto client = ClusterClient::Connect(options);
      if (!client.ok()) {
        errors[w] = client.status().ToString();
        return;
      }
      for (int batch = 0; !stop.load() && batch < 100000; ++batch) {
        const bool before_kill = !killed.load();
        std::vector<Command> sets;
        std::vector<std::string> keys;
        for (int i = 0; i < kBatch; ++i) {
          std::string key =
              "w" + std::to_string(w) + ":" + std::to_string(batch) + ":" + std::to_string(i);
          sets.push_back(Command{.args = {"SET", key, "v"}});
          keys.push_back(std::move(key));
        }
        Status s = (*client)->Pipeline(sets).status();
        if (s.ok()) s = (*client)->WaitForReplicas(1, std::chrono::milliseconds(2000));
        if (!s.ok()) {
          // Not acknowledged: the batch may or may not be there. Wait for the cluster to heal.
          ++failures[w];
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          (*client)->RefreshSlots().IgnoreError();
          continue;
        }
        acked[w].insert(acked[w].end(), keys.begin(), keys.end());
        if (before_kill) acked_before_kill[w] = acked[w].size();
        acked_batches.fetch_add(1);
      }
    });
  }
  // Let them write, then kill the master of slot 0.
  for (int i = 0; i < 600 && acked_batches.load() < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto probe = ClusterClient::Connect(options);
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  const std::string victim = (*probe)->NodeForSlot(0);
  EXPECT_TRUE((*probe)->CheckReplicas(1).ok());
  killed.store(true);
  const int victim_index = cluster.IndexOfPort(std::stoi(victim.substr(victim.rfind(':') + 1)));
  cluster.Kill(victim_index);
  const Status failed_over = cluster.WaitForFailover(victim_index);
  // The promoted replica has no replica of its own: WAIT 1 cannot succeed on it, and no batch
  // that touches its slots is acknowledged, until the killed node comes back (from its
  // append-only file) as its replica.
  const int during = acked_batches.load();
  // The promoted master has no replica: the readiness probe of min_replicas 1 names it.
  if (failed_over.ok() && (*probe)->RefreshSlots().ok()) {
    const Status short_of = (*probe)->CheckReplicas(1);
    EXPECT_EQ(short_of.code(), StatusCode::kUnavailable) << short_of.ToString();
    EXPECT_NE(short_of.message().find((*probe)->NodeForSlot(0) + " has 0 of 1"),
              std::string::npos)
        << short_of.ToString();
  }
  const Status restarted = failed_over.ok() ? cluster.Restart(victim_index) : failed_over;
  // Keep writing on the healed cluster for a while (bounded).
  const int after = acked_batches.load();
  for (int i = 0; i < 600 && acked_batches.load() < after + 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop.store(true);
  for (std::thread& t : writers) t.join();
  ASSERT_TRUE(failed_over.ok()) << failed_over.ToString();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  std::cout << "batches acknowledged: " << during << " until the replica took over, " << after
            << " until the killed node was back as its replica, " << acked_batches.load()
            << " in all\n";
  for (int w = 0; w < kWriters; ++w) ASSERT_TRUE(errors[w].empty()) << errors[w];

  ASSERT_TRUE((*probe)->RefreshSlots().ok());
  EXPECT_NE((*probe)->NodeForSlot(0), victim);
  size_t checked = 0;
  size_t missing = 0;
  size_t before_total = 0;
  int failed_batches = 0;
  for (int w = 0; w < kWriters; ++w) {
    before_total += acked_before_kill[w];
    failed_batches += failures[w];
    std::vector<Command> gets;
    for (const std::string& key : acked[w]) gets.push_back(Command{.args = {"EXISTS", key}});
    auto got = (*probe)->Pipeline(gets);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    for (size_t i = 0; i < got->size(); ++i) {
      ++checked;
      if ((*got)[i].integer != 1) {
        ++missing;
        ADD_FAILURE() << "acknowledged key " << acked[w][i] << " is missing"
                      << (i < acked_before_kill[w] ? " (acknowledged before the kill)" : "");
        if (missing > 10) break;
      }
    }
  }
  EXPECT_GT(before_total, 0u);
  EXPECT_GT(checked, before_total);  // writes were acknowledged after the failover too
  std::cout << checked << " acknowledged keys checked (" << before_total
            << " acknowledged before the kill), " << failed_batches
            << " batches not acknowledged while the replica took over, " << missing << " missing\n";
}

}  // namespace
}  // namespace shingled::redis
