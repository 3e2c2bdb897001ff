// The GoogleTest fixture shared by the tests that need a 3-master cluster (redis_cluster.h): one
// cluster per test, started in SetUp (skipped, saying why, when redis-server is not installed),
// and clients connected to it with its password.
#ifndef SHINGLED_TESTS_REDIS_CLUSTER_FIXTURE_H_
#define SHINGLED_TESTS_REDIS_CLUSTER_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "redis/cluster_client.h"
#include "tests/redis/redis_cluster.h"

namespace shingled::redis::testing {

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!RedisCluster::Available(&why)) GTEST_SKIP() << why;
    cluster_ = std::make_unique<RedisCluster>();
    const Status started = cluster_->Start(Shape());
    ASSERT_TRUE(started.ok()) << started.ToString();
  }

  // The cluster a test starts: 3 masters, no replica.
  virtual RedisCluster::Options Shape() const { return {.masters = 3}; }

  ClusterOptions Options() const {
    ClusterOptions o;
    o.seeds = cluster_->seeds();
    o.password_file = cluster_->password_file();
    return o;
  }

  // A new client (a connection per node of its own, as another daemon would have); null, with a
  // test failure, when it cannot connect.
  std::unique_ptr<ClusterClient> NewClient() {
    auto client = ClusterClient::Connect(Options());
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  std::unique_ptr<RedisCluster> cluster_;
};

}  // namespace shingled::redis::testing

#endif  // SHINGLED_TESTS_REDIS_CLUSTER_FIXTURE_H_
