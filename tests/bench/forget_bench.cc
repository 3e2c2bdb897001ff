// Times forgetting (Store::Forget, Store::ApplyRetention) on a store of N URLs with synthetic
// sketches, built in a temporary directory and removed at the end. A plain program, not Google
// Benchmark: each operation is timed once, in its steps.
//
//   build/tests/bench/forget_bench [--redis] [URLS [STEP_URLS [NEAR_EVERY]]]
//                                  (defaults 100000, 2000, 50)
//
// `--redis` runs it on the Redis Cluster backend instead of LMDB: a 3-master cluster started on
// loopback (tests/redis/redis_cluster.h, durable: `appendfsync always`, the nodes reading
// ops/redis/shingled-node.conf), the bucket bits sized for the store's documents. There each
// step holds every writer off (docs/REDIS.md, "Takedowns and retention"): its time is how long.
//
// The store: N URLs over 100 hosts, each with its own content in a first sweep; every
// NEAR_EVERY-th is a near-copy of the one before (a cluster of two; 2: every other URL). A second
// sweep sees every other URL again with new content. Then:
//   - a takedown of one host (1% of the URLs), in steps of 10,000 URLs;
//   - takedowns of 20 single URLs of the first sweep, each its own call (a document goes);
//   - a retention pass that forgets the first sweep's versions of the URLs seen again (half the
//     URLs lose a version and a document), in steps of STEP_URLS URLs.
// It prints each one's seconds, steps, per-step median and largest, and what went.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "redis/backend.h"
#include "store/store.h"
#include "tests/bench/bench_util.h"
#include "tests/redis/redis_cluster.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace {

using namespace shingled;
using namespace shingled::store;
using bench::Clock;
using bench::Must;
using bench::Seconds;

std::string UrlOf(uint64_t i) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "https://h%02llu.example/p/%08llu",
                static_cast<unsigned long long>(i % 100), static_cast<unsigned long long>(i));
  return buf;
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "forget_bench: %s\n", message.c_str());
  std::exit(1);
}

void PrintSteps(const char* what, std::vector<double> steps, double total) {
  std::sort(steps.begin(), steps.end());
  std::printf("%s: %.2f s in %zu steps (median %.3f s, largest %.3f s)\n", what, total,
              steps.size(), steps.empty() ? 0.0 : steps[steps.size() / 2],
              steps.empty() ? 0.0 : steps.back());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool on_redis = std::erase(args, "--redis") > 0;
  const uint64_t n = args.size() > 0 ? std::strtoull(args[0].c_str(), nullptr, 10) : 100000;
  const size_t step_urls = args.size() > 1 ? std::strtoull(args[1].c_str(), nullptr, 10) : 2000;
  const uint64_t near_every =
      args.size() > 2 ? std::max(2ull, std::strtoull(args[2].c_str(), nullptr, 10)) : 50;
  store::testing::TestDir dir;
  StoreOptions options;
  options.durable = false;
  dedup::SketchParams params;
  const auto context = Must(dedup::SketchContext::Create(params), "sketch params");
  redis::testing::RedisCluster cluster;
  std::unique_ptr<Store> store;
  if (on_redis) {
    std::string why;
    if (!redis::testing::RedisCluster::Available(&why)) Die(why);
    if (Status s =
            cluster.Start({.masters = 3,
                           .durable = true,
                           .config_file = SHINGLED_SOURCE_DIR "/ops/redis/shingled-node.conf"});
        !s.ok()) {
      Die(s.ToString());
    }
    redis::RedisStoreOptions r;
    r.nodes = cluster.seeds();
    r.password_file = cluster.password_file();
    redis::SizeBuckets(n + n / 2, params, &r);  // the documents of both sweeps
    store = Must(redis::OpenRedisClusterStore(r, options, *context), "open the cluster");
    std::printf("redis cluster: 3 masters, appendonly yes, appendfsync always\n");
  } else {
    store = Must(Store::Open(dir.Sub("db"), options, *context), "open");
  }
  const Clock::time_point built = Clock::now();
  for (int sweep_no = 0; sweep_no < 2; ++sweep_no) {
    const int64_t date = sweep_no == 0 ? 1000 : 1000000;
    const SweepId sweep =
        Must(store->OpenSweep("s" + std::to_string(sweep_no), date), "open sweep").id;
    std::vector<PageInput> batch;
    for (uint64_t i = 0; i < n; ++i) {
      if (sweep_no == 1 && i % 2 == 1) continue;
      PageInput p;
      p.url = UrlOf(i);
      p.sweep = sweep;
      p.date = date;
      // A near-copy: J = 290 / 310 with the URL before.
      const bool near = i % near_every == near_every - 1 && sweep_no == 0;
      const uint64_t base = near ? i - 1 : i;
      p.sketch = testing::SyntheticSketch(
          params, testing::Variant((base + n * sweep_no) * 1000, 300, near ? 290 : 300,
                                   (i + 1) << 32));
      batch.push_back(std::move(p));
      if (batch.size() == 2000) {
        Must(store->Apply(batch), "apply");
        batch.clear();
      }
    }
    if (!batch.empty()) Must(store->Apply(batch), "apply");
  }
  const StoreStats before = Must(store->Stats(), "stats");
  std::printf("store: %llu URLs, %llu versions, %llu documents, %llu clusters, %.1f MB; built in "
              "%.1f s\n",
              static_cast<unsigned long long>(before.urls),
              static_cast<unsigned long long>(before.versions),
              static_cast<unsigned long long>(before.documents),
              static_cast<unsigned long long>(before.clusters), before.file_bytes / 1e6,
              Seconds(built));

  // A takedown of one host.
  std::vector<double> steps;
  uint64_t urls = 0, documents = 0;
  Clock::time_point start = Clock::now();
  for (bool more = true; more;) {
    const Clock::time_point step = Clock::now();
    const ForgetResult r = Must(
        store->Forget({.scope = ForgetScope::kHost, .value = "h07.example", .date = 2000000}),
        "forget");
    steps.push_back(Seconds(step));
    urls += r.urls;
    documents += r.documents;
    more = r.more;
  }
  PrintSteps("takedown of one host", steps, Seconds(start));
  std::printf("  forgot %llu URLs, %llu documents\n", static_cast<unsigned long long>(urls),
              static_cast<unsigned long long>(documents));

  // Single URLs of the first sweep, seen once (odd numbers), outside the host taken down: each
  // takedown removes one old document.
  steps.clear();
  documents = 0;
  start = Clock::now();
  for (uint64_t i = 1; steps.size() < 20 && i < n; i += 2) {
    if (i % 100 == 7) continue;
    const Clock::time_point step = Clock::now();
    documents +=
        Must(store->Forget({.scope = ForgetScope::kUrl, .value = UrlOf(i), .date = 2000000}),
             "forget")
            .documents;
    steps.push_back(Seconds(step));
  }
  PrintSteps("takedowns of single URLs", steps, Seconds(start));
  std::printf("  forgot %llu documents\n", static_cast<unsigned long long>(documents));

  // A retention pass over every URL.
  steps.clear();
  RetentionStep sum;
  start = Clock::now();
  for (bool done = false; !done;) {
    const Clock::time_point step = Clock::now();
    const RetentionStep r = Must(
        store->ApplyRetention({.now = 2000000, .max_version_age = 500000, .max_urls = step_urls}),
        "retention");
    steps.push_back(Seconds(step));
    sum.urls_examined += r.urls_examined;
    sum.versions += r.versions;
    sum.documents += r.documents;
    done = r.pass_done;
  }
  PrintSteps("retention pass", steps, Seconds(start));
  std::printf("  looked at %llu URLs; forgot %llu versions, %llu documents\n",
              static_cast<unsigned long long>(sum.urls_examined),
              static_cast<unsigned long long>(sum.versions),
              static_cast<unsigned long long>(sum.documents));
  const auto problems = Must(store->Check(), "check");
  std::printf("check: %zu problems\n", problems.size());
  return problems.empty() ? 0 : 1;
}
