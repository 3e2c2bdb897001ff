// The Redis backend under the cluster's own faults, on a real cluster: a
// reshard during ingest reaches no client as an error; a master SIGKILLed during
// ingest with min_replicas = 1 loses no acknowledged page once its replica has taken over, and
// the clients' resends of what was not acknowledged leave a store that `Check` finds consistent.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "redis/backend.h"
#include "tests/redis/backend_fixture.h"

namespace shingled::redis::testing {
namespace {

// A suite of this file's own: CTest runs each source's suites (tests/CMakeLists.txt), and
// BackendTest's tests in backend_test.cc would otherwise run again under this file.
using BackendFaultsTest = BackendTest;

using store::DocId;
using store::PageInput;

// Batches of near-copy families, 10 families of 4 pages each: batch b holds families 10b..10b+9,
// so that later batches find the earlier ones' pages.
class IngestLoad {
 public:
  IngestLoad(const dedup::SketchParams& params, store::SweepId sweep)
      : params_(params), sweep_(sweep) {}

  std::vector<PageInput> Batch(int b) const {
    std::vector<PageInput> pages;
    for (int f = 10 * b; f < 10 * b + 10; ++f) {
      const int family = f % 97;  // families recur: pages of a batch match older batches
      pages.push_back(Page(f, "base", family, 200, 0));
      pages.push_back(Page(f, "near-a", family, 195, 1));
      pages.push_back(Page(f, "near-b", family, 190, 2));
      pages.push_back(Page(f, "copy", family, 200, 0));
    }
    return pages;
  }

  // Applies batches until `stop` (and at least `min_batches`), each until it is acknowledged
  // (every page's status OK), as a client that resends what was not acknowledged; records each
  // acknowledged URL's document, and counts the attempts that failed (errors(), first_error()).
  void Run(store::Store& store, const std::atomic<bool>& stop, int min_batches) {
    for (int b = 0; !stop.load() || b < min_batches; ++b) {
      const std::vector<PageInput> batch = Batch(b);
      for (int attempt = 0;; ++attempt) {
        auto results = store.Apply(batch);
        bool ok = results.ok();
        for (size_t i = 0; ok && i < results->size(); ++i) ok = (*results)[i].status.ok();
        if (ok) {
          std::lock_guard<std::mutex> lock(mu_);
          for (size_t i = 0; i < batch.size(); ++i) acked_[batch[i].url] = (*results)[i].doc;
          ++batches_;
          break;
        }
        std::lock_guard<std::mutex> lock(mu_);
        ++errors_;
        if (first_error_.empty()) {
          first_error_ = results.ok() ? "a page's status" : results.status().ToString();
        }
        if (attempt > 600) return;  // a minute of failures: give up, the test fails
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the cluster heals
      }
    }
  }

  int batches() {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  std::map<std::string, DocId> acked() {
    std::lock_guard<std::mutex> lock(mu_);
    return acked_;
  }
  int errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }
  std::string first_error() {
    std::lock_guard<std::mutex> lock(mu_);
    return first_error_;
  }

 private:
  // Page `what` of batch family `f`: a near-copy of `family`'s base sharing `shared` of its 200
  // shingles (the fixture's Near).
  PageInput Page(int f, const std::string& what, int family, uint64_t shared, uint64_t salt) const {
    PageInput p;
    p.url = "https://h" + std::to_string(f % 17) + ".example/f" + std::to_string(f) + "/" + what;
    p.sweep = sweep_;
    p.date = 1000 + f;
    const uint64_t base = static_cast<uint64_t>(family) * 100000;
    p.sketch = store::testing::SyntheticSketch(
        params_, store::testing::Variant(base, 200, shared, base + 50000 + salt * 1000));
    return p;
  }

  const dedup::SketchParams params_;
  const store::SweepId sweep_;
  std::mutex mu_;
  std::map<std::string, DocId> acked_;
  int batches_ = 0;
  int errors_ = 0;
  std::string first_error_;
};

// Every acknowledged URL has a last version with the document it was acknowledged with, read
// through a store opened anew; and Check finds nothing.
void ExpectEveryAcknowledgedPage(store::Store& store, const std::map<std::string, DocId>& acked) {
  size_t missing = 0;
  for (const auto& [url, doc] : acked) {
    auto history = store.History(url);
    if (!history.ok() || history->empty() || history->back().doc != doc) {
      if (++missing <= 5) {
        ADD_FAILURE() << url << ": "
                      << (history.ok()
                              ? "last document " +
                                    std::to_string(history->empty() ? 0 : history->back().doc)
                              : history.status().ToString())
                      << ", acknowledged as " << doc;
      }
    }
  }
  EXPECT_EQ(missing, 0u) << "of " << acked.size() << " acknowledged pages";
  auto problems = store.Check();
  ASSERT_TRUE(problems.ok()) << problems.status().ToString();
  EXPECT_TRUE(problems->empty()) << (*problems)[0] << " (" << problems->size() << " problems)";
}

// The bucket bits for a planned size: redis/FORMAT.md's table, "Choosing the bucket bits".
TEST(SizeBucketsTest, BitsForThePlannedDocumentsAreTheLayoutTable) {
  const dedup::SketchParams params;
  auto bits = [&](uint64_t documents) {
    RedisStoreOptions o;
    SizeBuckets(documents, params, &o);
    return std::vector<int>{o.feature_bits, o.supershingle_bits, o.sample_bits, o.fingerprint_bits};
  };
  EXPECT_EQ(bits(100000), (std::vector<int>{14, 15, 15, 11}));
  EXPECT_EQ(bits(10000000), (std::vector<int>{20, 22, 22, 18}));
  const RedisStoreOptions defaults;
  EXPECT_EQ(bits(10000000), (std::vector<int>{defaults.feature_bits, defaults.supershingle_bits,
                                              defaults.sample_bits, defaults.fingerprint_bits}));
  EXPECT_EQ(bits(1000000000), (std::vector<int>{27, 29, 29, 24}));
  EXPECT_EQ(bits(1), (std::vector<int>{8, 8, 8, 8}));  // never below kMinBucketBits
}

TEST_F(BackendFaultsTest, AReshardDuringIngestReachesNoClientAsAnError) {
  auto store = OpenRedis();
  ASSERT_NE(store, nullptr);
  auto sweep = store->OpenSweep("reshard", 0);
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  IngestLoad load(params_, sweep->id);
  std::atomic<bool> stop{false};
  std::thread writer([&] { load.Run(*store, stop, 2); });
  while (load.batches() < 1 && load.errors() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
  }
  std::string out;
  const int rc = cluster_->Cli(cluster_->port(0),
                               "--cluster reshard 127.0.0.1:" + std::to_string(cluster_->port(0)) +
                                   " --cluster-from " + cluster_->NodeId(0) + " --cluster-to " +
                                   cluster_->NodeId(1) + " --cluster-slots 1000 --cluster-yes",
                               &out);
  const int during = load.batches();
  stop.store(true);
  writer.join();
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(load.errors(), 0) << load.first_error();
  std::cout << "batches of 40 pages: " << during << " by the end of the reshard, " << load.batches()
            << " in all\n";
  auto reopened = OpenRedis();
  ASSERT_NE(reopened, nullptr);
  ExpectEveryAcknowledgedPage(*reopened, load.acked());
}

// A cluster of 3 masters with a replica each, for the failover.
class BackendFailoverTest : public BackendTest {
 protected:
  RedisCluster::Options Shape() const override { return {.masters = 3, .replicas_per_master = 1}; }
};

TEST_F(BackendFailoverTest, AKilledMasterLosesNoAcknowledgedPageWithMinReplicas) {
  // A promoted replica serves the record buckets too.
  for (const std::string& seed : cluster_->seeds()) {
    std::string out;
    ASSERT_EQ(cluster_->Cli(std::stoi(seed.substr(seed.rfind(':') + 1)),
                            "CONFIG SET hash-max-listpack-value 4096", &out),
              0)
        << out;
  }
  RedisStoreOptions options = RedisOptions();
  options.min_replicas = 1;
  options.command_timeout_ms = 3000;
  options.wait_timeout_ms = 2000;
  auto opened = OpenRedisClusterStore(options, {}, *context_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<store::Store> store = std::move(*opened);
  auto sweep = store->OpenSweep("failover", 0);
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  IngestLoad load(params_, sweep->id);
  std::atomic<bool> stop{false};
  std::thread writer([&] { load.Run(*store, stop, 0); });
  while (load.batches() < 5 && load.errors() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
  }
  auto probe = NewClient();
  ASSERT_NE(probe, nullptr);
  const std::string victim = probe->NodeForSlot(0);
  const int victim_index = cluster_->IndexOfPort(std::stoi(victim.substr(victim.rfind(':') + 1)));
  const int before = load.batches();
  cluster_->Kill(victim_index);
  const Status failed_over = cluster_->WaitForFailover(victim_index);
  // The promoted replica has no replica: WAIT 1 refuses every batch that writes to its slots
  // until the killed node is back as its replica.
  const Status restarted = failed_over.ok() ? cluster_->Restart(victim_index) : failed_over;
  const int healed = load.batches();
  for (int i = 0; i < 600 && load.batches() < healed + 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  }
  stop.store(true);
  writer.join();
  ASSERT_TRUE(failed_over.ok()) << failed_over.ToString();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  ASSERT_GE(load.batches(), healed + 5) << load.first_error();
  std::cout << "batches of 40 pages acknowledged: " << before << " before the kill, " << healed
            << " once the killed master was back as a replica, " << load.batches()
            << " in all; attempts refused meanwhile: " << load.errors()
            << " (first: " << load.first_error() << ")\n";
  ASSERT_TRUE(probe->RefreshSlots().ok());
  EXPECT_NE(probe->NodeForSlot(0), victim);
  auto reopened = OpenRedisClusterStore(options, {}, *context_);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  ExpectEveryAcknowledgedPage(**reopened, load.acked());
}

}  // namespace
}  // namespace shingled::redis::testing
