// ClusterClient against a real Redis Cluster started on loopback (redis_cluster.h).
#include "redis/cluster_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/redis/cluster_fixture.h"

namespace shingled::redis {
namespace {

using testing::RedisCluster;

Command Cmd(std::vector<std::string> args, size_t key_index = 1) {
  return Command{.args = std::move(args), .key_index = key_index};
}

// A key of `slot`: a hash tag found by trying "t0", "t1", ... followed by `suffix`.
std::string KeyInSlot(int slot, const std::string& suffix) {
  for (int i = 0;; ++i) {
    const std::string tag = "t" + std::to_string(i);
    if (KeySlot(tag) == slot) return "{" + tag + "}" + suffix;
  }
}

class ClusterClientTest : public testing::ClusterTest {
 protected:
  // The index (in cluster_) of the master owning `slot` in the client's map.
  int OwnerIndex(const ClusterClient& client, int slot) const {
    const std::string node = client.NodeForSlot(slot);
    return cluster_->IndexOfPort(std::stoi(node.substr(node.rfind(':') + 1)));
  }

  std::string CliOk(int node, const std::string& args) {
    std::string out;
    EXPECT_EQ(cluster_->Cli(cluster_->port(node), args, &out), 0) << args << ": " << out;
    return out;
  }
};

TEST_F(ClusterClientTest, SlotsAgreeWithClusterKeyslot) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::vector<Command> commands;
  std::vector<std::string> keys = {"foo", "123456789", "{user1000}.following", "foo{}{bar}"};
  for (int i = 0; i < 500; ++i) {
    std::string key = "k" + std::to_string(i);
    key.push_back(static_cast<char>(i & 0xff));  // binary bytes too
    keys.push_back(key);
  }
  for (const std::string& k : keys) commands.push_back(Cmd({"CLUSTER", "KEYSLOT", k}, 2));
  auto replies = client->Pipeline(commands);
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  ASSERT_EQ(replies->size(), keys.size());
  EXPECT_EQ((*replies)[0].integer, 12182);
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ((*replies)[i].integer, KeySlot(keys[i])) << keys[i];
  }
}

TEST_F(ClusterClientTest, GetSetAcrossAllNodes) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::set<std::string> nodes;
  for (int i = 0; i < 300; ++i) {
    const std::string key = "key:" + std::to_string(i);
    nodes.insert(client->NodeForSlot(KeySlot(key)));
    auto set = client->Run(Cmd({"SET", key, "value " + std::to_string(i)}));
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    EXPECT_EQ(set->str, "OK");
  }
  EXPECT_EQ(nodes.size(), 3u);
  for (int i = 0; i < 300; ++i) {
    auto get = client->Run(Cmd({"GET", "key:" + std::to_string(i)}));
    ASSERT_TRUE(get.ok()) << get.status().ToString();
    EXPECT_EQ(get->str, "value " + std::to_string(i));
  }
  auto missing = client->Run(Cmd({"GET", "never set"}));
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->is_nil());
  // Each master holds a share of the keys.
  auto sizes = client->RunOnMasters({"DBSIZE"});
  ASSERT_TRUE(sizes.ok()) << sizes.status().ToString();
  ASSERT_EQ(sizes->size(), 3u);
  long long total = 0;
  for (const auto& [node, reply] : *sizes) {
    EXPECT_GT(reply.integer, 0) << node;
    total += reply.integer;
  }
  EXPECT_EQ(total, 300);
}

TEST_F(ClusterClientTest, PipelineOf10000CommandsKeepsTheCallersOrder) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  // SET and GET of each key interleaved: 20,000 commands, one pipeline per node.
  std::vector<Command> commands;
  for (int i = 0; i < 10000; ++i) {
    const std::string key = "p:" + std::to_string(i);
    commands.push_back(Cmd({"SET", key, std::to_string(i * 7)}));
    commands.push_back(Cmd({"GET", key}));
  }
  const uint64_t pipelines_before = client->stats().pipelines;
  auto replies = client->Pipeline(commands);
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  EXPECT_EQ(client->stats().pipelines - pipelines_before, 3u);
  ASSERT_EQ(replies->size(), commands.size());
  for (int i = 0; i < 10000; ++i) {
    EXPECT_EQ((*replies)[2 * i].str, "OK");
    ASSERT_EQ((*replies)[2 * i + 1].str, std::to_string(i * 7)) << i;
  }
  // 10,000 reads alone, in order.
  std::vector<Command> gets;
  for (int i = 9999; i >= 0; --i) gets.push_back(Cmd({"GET", "p:" + std::to_string(i)}));
  auto read = client->Pipeline(gets);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  for (int i = 0; i < 10000; ++i) ASSERT_EQ((*read)[i].str, std::to_string((9999 - i) * 7));
  auto empty = client->Pipeline({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST_F(ClusterClientTest, ErrorRepliesNameTheNodeTheCommandAndWhatRedisSaid) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Run(Cmd({"SET", "plain", "x"})).ok());
  auto wrong = client->Run(Cmd({"HSET", "plain", "f", "v"}));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kFailedPrecondition);
  const std::string msg = wrong.status().message();
  EXPECT_NE(msg.find(client->NodeForSlot(KeySlot("plain"))), std::string::npos) << msg;
  EXPECT_NE(msg.find("HSET plain"), std::string::npos) << msg;
  EXPECT_NE(msg.find("WRONGTYPE"), std::string::npos) << msg;
  // In a pipeline the other commands still run.
  auto mixed = client->Pipeline(
      {Cmd({"SET", "a1", "1"}), Cmd({"HSET", "plain", "f", "v"}), Cmd({"SET", "a2", "2"})});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("WRONGTYPE"), std::string::npos);
  auto a2 = client->Run(Cmd({"GET", "a2"}));
  ASSERT_TRUE(a2.ok());
  EXPECT_EQ(a2->str, "2");
  // A command without its key is refused before anything is sent.
  auto keyless = client->Pipeline({Cmd({"SET", "a3", "3"}), Cmd({"PING"})});
  ASSERT_FALSE(keyless.ok());
  EXPECT_EQ(keyless.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(keyless.status().message(), "redis: command 1 (PING) has no key at argument 1");
  auto a3 = client->Run(Cmd({"GET", "a3"}));
  ASSERT_TRUE(a3.ok());
  EXPECT_TRUE(a3->is_nil());
}

TEST_F(ClusterClientTest, BadOptionsAndPasswordsAreClear) {
  ClusterOptions bad_seed = Options();
  bad_seed.seeds = {"localhost"};
  auto a = ClusterClient::Connect(bad_seed);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("\"localhost\" is not host:port"), std::string::npos);

  ClusterOptions no_file = Options();
  no_file.password_file = cluster_->dir() + "/no such file";
  auto b = ClusterClient::Connect(no_file);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kNotFound);

  const std::string wrong_file = cluster_->dir() + "/wrong";
  std::ofstream(wrong_file) << "not the password\n";
  ClusterOptions wrong = Options();
  wrong.password_file = wrong_file;
  auto c = ClusterClient::Connect(wrong);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("AUTH refused"), std::string::npos) << c.status().ToString();

  ClusterOptions no_password = Options();
  no_password.password_file.clear();
  auto d = ClusterClient::Connect(no_password);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("NOAUTH"), std::string::npos) << d.status().ToString();

  // A seed nobody listens on is skipped for the next one; alone, it is Unavailable.
  ClusterOptions dead_first = Options();
  dead_first.seeds.insert(dead_first.seeds.begin(), "127.0.0.1:1");
  auto e = ClusterClient::Connect(dead_first);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  ClusterOptions dead_only = Options();
  dead_only.seeds = {"127.0.0.1:1"};
  auto f = ClusterClient::Connect(dead_only);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(f.status().message().find("127.0.0.1:1: cannot connect"), std::string::npos)
      << f.status().ToString();
}

// One slot migrated by hand, step by step, with the client's commands in between: ASK while the
// slot migrates (for a key already moved, and for a new key), MOVED once it has moved.
TEST_F(ClusterClientTest, FollowsAskDuringAMigrationAndMovedAfterIt) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  const int slot = 4242;
  const std::string moved_key = KeyInSlot(slot, "moved");
  const std::string staying_key = KeyInSlot(slot, "staying");
  const std::string new_key = KeyInSlot(slot, "new");
  ASSERT_TRUE(client->Run(Cmd({"SET", moved_key, "m"})).ok());
  ASSERT_TRUE(client->Run(Cmd({"SET", staying_key, "s"})).ok());
  const int src = OwnerIndex(*client, slot);
  const int dst = (src + 1) % 3;
  const std::string src_id = cluster_->NodeId(src);
  const std::string dst_id = cluster_->NodeId(dst);
  const std::string s = std::to_string(slot);
  CliOk(dst, "cluster setslot " + s + " importing " + src_id);
  CliOk(src, "cluster setslot " + s + " migrating " + dst_id);
  CliOk(src, "migrate 127.0.0.1 " + std::to_string(cluster_->port(dst)) + " '' 0 5000 auth pw-" +
                 std::to_string(::getpid()) + " keys '" + moved_key + "'");

  auto moved = client->Run(Cmd({"GET", moved_key}));
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->str, "m");
  auto fresh = client->Run(Cmd({"SET", new_key, "n"}));
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  auto staying = client->Run(Cmd({"GET", staying_key}));
  ASSERT_TRUE(staying.ok()) << staying.status().ToString();
  EXPECT_EQ(staying->str, "s");
  EXPECT_EQ(client->stats().ask, 2u);  // the moved key and the new one
  EXPECT_EQ(client->stats().moved, 0u);
  EXPECT_EQ(client->NodeForSlot(slot), "127.0.0.1:" + std::to_string(cluster_->port(src)));

  CliOk(src, "migrate 127.0.0.1 " + std::to_string(cluster_->port(dst)) + " '' 0 5000 auth pw-" +
                 std::to_string(::getpid()) + " keys '" + staying_key + "'");
  CliOk(dst, "cluster setslot " + s + " node " + dst_id);
  CliOk(src, "cluster setslot " + s + " node " + dst_id);

  auto after =
      client->Pipeline({Cmd({"GET", staying_key}), Cmd({"GET", moved_key}), Cmd({"GET", new_key})});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ((*after)[0].str, "s");
  EXPECT_EQ((*after)[1].str, "m");
  EXPECT_EQ((*after)[2].str, "n");
  EXPECT_GE(client->stats().moved, 1u);
  EXPECT_EQ(client->NodeForSlot(slot), "127.0.0.1:" + std::to_string(cluster_->port(dst)));
}

// `redis-cli --cluster reshard` moves 1,000 slots while a thread writes and reads back pipelines:
// no error, no write lost.
TEST_F(ClusterClientTest, ReshardWhileWritingLosesNoWrite) {
  auto writer_client = NewClient();
  ASSERT_NE(writer_client, nullptr);
  std::atomic<bool> stop{false};
  std::atomic<int> batches{0};
  std::atomic<int> acked{0};
  std::string writer_error;
  std::thread writer([&] {
    constexpr int kBatch = 200;
    while (!stop.load() || batches.load() < 2) {
      const int base = acked.load();
      std::vector<Command> sets;
      std::vector<Command> gets;
      for (int i = base; i < base + kBatch; ++i) {
        sets.push_back(Cmd({"SET", "w:" + std::to_string(i), "v" + std::to_string(i)}));
        gets.push_back(Cmd({"GET", "w:" + std::to_string(i)}));
      }
      auto set = writer_client->Pipeline(sets);
      if (!set.ok()) {
        writer_error = set.status().ToString();
        return;
      }
      acked.store(base + kBatch);
      auto get = writer_client->Pipeline(gets);
      if (!get.ok()) {
        writer_error = get.status().ToString();
        return;
      }
      for (int i = 0; i < kBatch; ++i) {
        if ((*get)[i].str != "v" + std::to_string(base + i)) {
          writer_error = "read back w:" + std::to_string(base + i) + " = " + (*get)[i].str;
          return;
        }
      }
      batches.fetch_add(1);
    }
  });
  while (batches.load() < 1 && writer_error.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string out;
  const int rc = cluster_->Cli(cluster_->port(0),
                               "--cluster reshard 127.0.0.1:" + std::to_string(cluster_->port(0)) +
                                   " --cluster-from " + cluster_->NodeId(0) + " --cluster-to " +
                                   cluster_->NodeId(1) + " --cluster-slots 1000 --cluster-yes",
                               &out);
  stop.store(true);
  writer.join();
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(writer_error, "");
  const ClusterStats& ws = writer_client->stats();
  std::cout << "writer: " << acked.load() << " keys in " << batches.load() << " batches; MOVED "
            << ws.moved << ", ASK " << ws.ask << ", slot map read " << ws.slot_refreshes
            << " times\n";

  // Every acknowledged write is there, read through a fresh client.
  auto reader = NewClient();
  ASSERT_NE(reader, nullptr);
  std::vector<Command> gets;
  for (int i = 0; i < acked.load(); ++i) gets.push_back(Cmd({"GET", "w:" + std::to_string(i)}));
  auto got = reader->Pipeline(gets);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  int lost = 0;
  for (int i = 0; i < acked.load(); ++i) lost += (*got)[i].str == "v" + std::to_string(i) ? 0 : 1;
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(reader->stats().moved, 0u);  // its map was read after the reshard
}

TEST_F(ClusterClientTest, KilledNodeGivesAClearErrorThenRecoversAfterRestart) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  const std::string key = "victim";
  const int victim = OwnerIndex(*client, KeySlot(key));
  const std::string victim_name = "127.0.0.1:" + std::to_string(cluster_->port(victim));
  ASSERT_TRUE(client->Run(Cmd({"SET", key, "before"})).ok());

  cluster_->Kill(victim);
  auto during = client->Run(Cmd({"SET", key, "during"}));
  ASSERT_FALSE(during.ok());
  EXPECT_EQ(during.status().code(), StatusCode::kUnavailable) << during.status().ToString();
  EXPECT_NE(during.status().message().find(victim_name), std::string::npos)
      << during.status().ToString();
  EXPECT_NE(during.status().message().find("SET victim"), std::string::npos)
      << during.status().ToString();

  const Status restarted = cluster_->Restart(victim);
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  // The same client, whose connection to the node broke, reconnects.
  const uint64_t connects = client->stats().connects;
  auto after = client->Run(Cmd({"SET", key, "after"}));
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  auto get = client->Run(Cmd({"GET", key}));
  ASSERT_TRUE(get.ok()) << get.status().ToString();
  EXPECT_EQ(get->str, "after");
  EXPECT_GT(client->stats().connects, connects);
}

// With a replica per master, SIGKILL of a master: the replica takes over, and the client finds it
// (a connection refused, the slot map read again) and sends the command there.
TEST(ClusterClientFailoverTest, FindsTheReplicaThatTookOver) {
  std::string why;
  if (!RedisCluster::Available(&why)) GTEST_SKIP() << why;
  RedisCluster cluster;
  const Status started = cluster.Start({.masters = 3, .replicas_per_master = 1});
  ASSERT_TRUE(started.ok()) << started.ToString();
  ClusterOptions options;
  options.seeds = cluster.seeds();
  options.password_file = cluster.password_file();
  auto connected = ClusterClient::Connect(options);
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  ClusterClient& client = **connected;
  const std::string key = "survivor";
  ASSERT_TRUE(client.Run(Cmd({"SET", key, "v"})).ok());
  // Every master's write reached its replica.
  auto waited = client.RunOnMasters({"WAIT", "1", "5000"});
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  for (const auto& [node, reply] : *waited) ASSERT_EQ(reply.integer, 1) << node;
  const std::string old_master = client.NodeForSlot(KeySlot(key));
  cluster.Kill(cluster.IndexOfPort(std::stoi(old_master.substr(old_master.rfind(':') + 1))));

  // Until the replica is promoted (the 2 s node timeout, then an election) calls fail with
  // Unavailable; the loop waits for the promotion, bounded.
  StatusOr<Reply> got = UnavailableError("not tried");
  for (int attempt = 0; attempt < 300 && !got.ok(); ++attempt) {
    got = client.Run(Cmd({"GET", key}));
    if (!got.ok()) {
      EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->str, "v") << "old master " << old_master << ", now "
                           << client.NodeForSlot(KeySlot(key)) << "; logs in " << cluster.dir();
  EXPECT_NE(client.NodeForSlot(KeySlot(key)), old_master);
  if (got->str != "v") {
    std::string out;
    cluster.Cli(cluster.port(0), "cluster nodes", &out);
    std::cout << out;
    for (int i = 0; i < cluster.size(); ++i) {
      std::ifstream log(cluster.dir() + "/redis-" + std::to_string(cluster.port(i)) + ".log");
      std::cout << "--- node " << cluster.port(i) << "\n" << log.rdbuf();
    }
  }
}

// A node that accepts the connection (the kernel's backlog) and never answers: the command
// timeout ends the wait with DeadlineExceeded, named in the error.
TEST(ClusterClientTimeoutTest, ASilentNodeTimesOut) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string node = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  ClusterOptions options;
  options.seeds = {node};
  options.command_timeout = std::chrono::milliseconds(200);
  auto client = ClusterClient::Connect(options);
  ::close(fd);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kUnavailable);  // no seed gave the slot map
  EXPECT_NE(client.status().message().find(node + ": CLUSTER: no reply within the command timeout"),
            std::string::npos)
      << client.status().ToString();
}

}  // namespace
}  // namespace shingled::redis
