// The fixtures the store tests share: throw-away stores (no fsync; the crash test runs durable),
// pages with synthetic sketches, and Check's verdict.
//   - StoreFixture opens LMDB stores in a temporary directory: the LMDB-only tests (TEST_F).
//   - StoreConformance is the same fixture parameterised by the engine (TEST_P): LMDB, and a
//     Redis Cluster of 3 masters (tests/redis/redis_cluster.h). A test written once runs on both,
//     so a rule one engine keeps and the other does not fails it. Instantiate a suite with
//     SHINGLED_STORE_ENGINES(Suite); tests/CMakeLists.txt registers its LMDB instances one CTest
//     test each, and the program's Redis Cluster instances as one CTest test, so that they share
//     one cluster (tests/store/README.md).
// Not thread-safe: one fixture per test, as GoogleTest makes them.
#ifndef SHINGLED_TESTS_STORE_STORE_FIXTURE_H_
#define SHINGLED_TESTS_STORE_STORE_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "redis/backend.h"
#include "redis/cluster_client.h"
#include "store/store.h"
#include "tests/redis/redis_cluster.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::store::testing {

inline constexpr uint64_t kPolynomial = 0x1234567890abcdefull;

// The storage engines a conformance test runs on.
enum class Engine { kLmdb, kRedisCluster };

// "Lmdb", "RedisCluster": the last part of a conformance test's name.
inline std::string NameOf(Engine engine) {
  return engine == Engine::kLmdb ? "Lmdb" : "RedisCluster";
}
inline std::string EngineName(const ::testing::TestParamInfo<Engine>& info) {
  return NameOf(info.param);
}
// For GoogleTest's messages ("where GetParam() = RedisCluster").
inline void PrintTo(Engine engine, std::ostream* os) { *os << NameOf(engine); }

class StoreFixture : public ::testing::Test {
 protected:
  // The engine OpenStore opens: LMDB, unless a StoreConformance parameter says otherwise.
  virtual Engine engine() const { return Engine::kLmdb; }

  // The store named `name`, on this fixture's engine; null, with a test failure, if it does not
  // open. Closing it (dropping the pointer) and opening the same name again gives the same data.
  // On LMDB each name is a directory under this test's; on Redis Cluster the cluster holds one
  // store (the backend has no key namespace), so opening another name than the last one empties
  // the cluster first: a test may hold one Redis store at a time (the earlier one closed).
  std::unique_ptr<Store> OpenStore(StoreOptions options = {}, const std::string& name = "db") {
    StatusOr<std::unique_ptr<Store>> s = TryOpenStore(options, name);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  PageInput Page(std::string url, SweepId sweep, int64_t date,
                 const std::vector<uint64_t>& shingles, uint64_t variant = 0) const {
    PageInput p;
    p.url = std::move(url);
    p.sweep = sweep;
    p.date = date;
    p.sketch = SyntheticSketch(params_, shingles, variant);
    return p;
  }
  static PageResult ApplyOne(Store& store, const PageInput& page) {
    StatusOr<std::vector<PageResult>> r = store.Apply(std::span(&page, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0] : PageResult{};
  }
  // Every invariant `Store::Check` verifies holds.
  static void ExpectConsistent(const Store& store) {
    StatusOr<std::vector<std::string>> problems = store.Check();
    ASSERT_TRUE(problems.ok()) << problems.status().ToString();
    for (const std::string& p : *problems) ADD_FAILURE() << p;
  }

  TestDir dir_;
  dedup::SketchParams params_;

  // OpenStore without the test failure: the store or the error of its engine's Open. Here an LMDB
  // store in the directory `name`.
  virtual StatusOr<std::unique_ptr<Store>> TryOpenStore(StoreOptions options,
                                                        const std::string& name) {
    options.durable = false;
    return Store::Open(dir_.Sub(name), options, params_, kPolynomial);
  }
};

// A StoreFixture whose engine is the test's parameter. On Redis Cluster, one cluster serves every
// test of the program (started by the first test that needs it, stopped at exit), and each test
// starts from an empty one (FLUSHALL on every master in SetUp). Redis tests skip, saying why, when
// redis-server is not installed.
class StoreConformance : public StoreFixture, public ::testing::WithParamInterface<Engine> {
 protected:
  Engine engine() const override { return GetParam(); }

  // Subclasses that override it call it first, and return when IsSkipped() or on a failure.
  void SetUp() override {
    if (engine() != Engine::kRedisCluster) return;
    std::string why;
    if (!redis::testing::RedisCluster::Available(&why)) GTEST_SKIP() << why;
    Status started = StartClusterOnce();
    ASSERT_TRUE(started.ok()) << started.ToString();
    auto flushed = Client().RunOnMasters({"FLUSHALL"});
    ASSERT_TRUE(flushed.ok()) << flushed.status().ToString();
  }

  StatusOr<std::unique_ptr<Store>> TryOpenStore(StoreOptions options,
                                                const std::string& name) override {
    if (engine() == Engine::kLmdb) return StoreFixture::TryOpenStore(options, name);
    if (!redis_name_.empty() && name != redis_name_) {
      auto flushed = Client().RunOnMasters({"FLUSHALL"});
      if (!flushed.ok()) return flushed.status();
    }
    redis_name_ = name;
    auto context = dedup::SketchContext::Create(params_);
    if (!context.ok()) return context.status();
    return redis::OpenRedisClusterStore(RedisOptions(), options, **context);
  }

  // The Redis Cluster backend's options for the shared cluster: small buckets (a test stores a
  // few hundred documents at most), ids reserved one at a time so that they are dense as LMDB's
  // (a block per open would skip ids across a close and reopen), and the fsync check off as
  // LMDB's is (the nodes keep no append-only file).
  static redis::RedisStoreOptions RedisOptions();

  // A client of the shared cluster. REQUIRES: the cluster started (SetUp of a Redis test).
  static redis::ClusterClient& Client() { return *Shared().client; }

 private:
  std::string redis_name_;  // the name of the store the cluster holds now ("" at first)

  struct SharedCluster {
    std::unique_ptr<redis::testing::RedisCluster> cluster;
    std::unique_ptr<redis::ClusterClient> client;
    Status started;
    bool tried = false;
  };
  // Destroyed at exit, which stops the nodes (they also die with this process: redis_cluster.h).
  static SharedCluster& Shared() {
    static SharedCluster shared;
    return shared;
  }
  // Starts the cluster on the first call; later calls answer the first call's status.
  static Status StartClusterOnce();
};

inline redis::RedisStoreOptions StoreConformance::RedisOptions() {
  redis::RedisStoreOptions r;
  r.nodes = Shared().cluster->seeds();
  r.password_file = Shared().cluster->password_file();
  r.feature_bits = r.supershingle_bits = r.sample_bits = 12;
  r.fingerprint_bits = 10;
  r.id_block = 1;
  r.allow_unsafe_fsync = true;
  return r;
}

inline Status StoreConformance::StartClusterOnce() {
  SharedCluster& s = Shared();
  if (s.tried) return s.started;
  s.tried = true;
  s.cluster = std::make_unique<redis::testing::RedisCluster>();
  // No append-only file: the stores are throw-away, as LMDB's without fsync.
  s.started = s.cluster->Start({.masters = 3, .durable = false});
  if (!s.started.ok()) return s.started;
  redis::ClusterOptions o;
  o.seeds = s.cluster->seeds();
  o.password_file = s.cluster->password_file();
  StatusOr<std::unique_ptr<redis::ClusterClient>> client = redis::ClusterClient::Connect(o);
  if (!client.ok()) return s.started = client.status();
  s.client = std::move(client).value();
  // The record buckets need hash-max-listpack-value above a record (redis/backend.h).
  auto set = s.client->RunOnMasters({"CONFIG", "SET", "hash-max-listpack-value", "4096"});
  if (!set.ok()) s.started = set.status();
  return s.started;
}

// Instantiates the TEST_P tests of `suite` (a StoreConformance) on every engine, named
// "Engines/<suite>.<test>/Lmdb" and ".../RedisCluster".
#define SHINGLED_STORE_ENGINES(suite)                                                            \
  INSTANTIATE_TEST_SUITE_P(Engines, suite,                                                       \
                           ::testing::Values(::shingled::store::testing::Engine::kLmdb,          \
                                             ::shingled::store::testing::Engine::kRedisCluster), \
                           ::shingled::store::testing::EngineName)

// Instantiates the TEST_P tests of `suite` (a StoreConformance) on LMDB only, for the tests of a
// conformance fixture that reach into LMDB's files (a format upgrade, damage for Check).
#define SHINGLED_STORE_LMDB_ONLY(suite)                                                  \
  INSTANTIATE_TEST_SUITE_P(Engines, suite,                                               \
                           ::testing::Values(::shingled::store::testing::Engine::kLmdb), \
                           ::shingled::store::testing::EngineName)

}  // namespace shingled::store::testing

#endif  // SHINGLED_TESTS_STORE_STORE_FIXTURE_H_
