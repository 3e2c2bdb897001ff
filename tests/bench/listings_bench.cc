// Times the store's listings (Store::ListUrls, ListClusters, ListIdenticalSets) on a store of N
// URLs with synthetic sketches, built in a temporary directory and removed at the end. A plain
// program, not Google Benchmark: each listing is one pass (a page, or every page), timed once.
//
//   build-dev/tests/bench/listings_bench [URLS]     (default 100000)
//
// The store: URL i holds its own content, but every 10th URL copies the URL before it (an
// identical set of two), every 50th is a near-copy of the one before (a cluster of two) and
// every 100th is dead (404) in a second sweep. URLs spread over 100 hosts.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/bench/bench_util.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace {

using namespace shingled;
using namespace shingled::store;
using bench::Clock;
using bench::Must;
using bench::Seconds;

long MaxRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

std::string UrlOf(uint64_t i) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "https://h%02llu.example/p/%08llu",
                static_cast<unsigned long long>(i % 100), static_cast<unsigned long long>(i));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  store::testing::TestDir dir;
  StoreOptions options;
  options.durable = false;
  dedup::SketchParams params;
  std::unique_ptr<Store> store =
      Must(Store::Open(dir.Sub("db"), options, params, 0x1234567890abcdefull), "open");
  const SweepId s1 = Must(store->OpenSweep("s1", 100), "sweep").id;
  const SweepId s2 = Must(store->OpenSweep("s2", 200), "sweep").id;

  Clock::time_point t = Clock::now();
  std::vector<PageInput> batch;
  auto flush = [&] {
    Must(store->Apply(batch), "apply");
    batch.clear();
  };
  for (uint64_t i = 0; i < n; ++i) {
    PageInput p;
    p.url = UrlOf(i);
    p.sweep = s1;
    p.date = 100;
    uint64_t content = i;
    if (i % 10 == 9) content = i - 1;  // an identical copy
    std::vector<uint64_t> shingles = store::testing::Range(content * 1000, 200);
    if (i % 50 == 49) shingles = store::testing::Variant((i - 1) * 1000, 200, 198, i * 1000 + 500);
    p.sketch = store::testing::SyntheticSketch(params, shingles);
    batch.push_back(std::move(p));
    if (batch.size() == 5000) flush();
  }
  flush();
  for (uint64_t i = 0; i < n; i += 100) {
    PageInput p;
    p.url = UrlOf(i);
    p.sweep = s2;
    p.date = 200;
    p.http_status = 404;
    batch.push_back(std::move(p));
  }
  flush();
  std::printf("store of %llu URLs built in %.1f s\n", static_cast<unsigned long long>(n),
              Seconds(t));

  // Every URL, pages of 1000.
  UrlListOptions all;
  all.limit = 1000;
  t = Clock::now();
  uint64_t listed = 0, pages = 0;
  for (;;) {
    UrlPage page = Must(store->ListUrls(all), "list urls");
    listed += page.urls.size();
    ++pages;
    if (!page.next) break;
    all.after = *page.next;
  }
  std::printf("ListUrls, every URL: %llu URLs in %llu pages, %.3f s (%.2f us/URL)\n",
              static_cast<unsigned long long>(listed), static_cast<unsigned long long>(pages),
              Seconds(t), 1e6 * Seconds(t) / static_cast<double>(listed));

  // A rare filter: dead URLs, pages bounded at 10,000 URLs looked at.
  UrlListOptions dead;
  dead.limit = 1000;
  dead.status = UrlStatus::kDead;
  t = Clock::now();
  Clock::time_point slowest_from = t;
  double slowest = 0;
  listed = pages = 0;
  for (;;) {
    slowest_from = Clock::now();
    UrlPage page = Must(store->ListUrls(dead), "list dead");
    slowest = std::max(slowest, Seconds(slowest_from));
    listed += page.urls.size();
    ++pages;
    if (!page.next) break;
    dead.after = *page.next;
  }
  std::printf("ListUrls, status=dead: %llu URLs in %llu pages, %.3f s; slowest page %.1f ms\n",
              static_cast<unsigned long long>(listed), static_cast<unsigned long long>(pages),
              Seconds(t), 1e3 * slowest);

  // One host (a hundredth of the store) through its key range.
  UrlListOptions host;
  host.limit = 1000;
  host.prefixes = {"https://h07.example/"};
  t = Clock::now();
  listed = 0;
  for (;;) {
    UrlPage page = Must(store->ListUrls(host), "list host");
    listed += page.urls.size();
    if (!page.next) break;
    host.after = *page.next;
  }
  std::printf("ListUrls, host=h07.example: %llu URLs, %.3f s\n",
              static_cast<unsigned long long>(listed), Seconds(t));

  ClusterListOptions clusters;
  t = Clock::now();
  ClusterListPage cp = Must(store->ListClusters(clusters), "clusters");
  std::printf("ListClusters, first page of %zu: %.3f s\n", cp.clusters.size(), Seconds(t));

  IdenticalSetOptions sets;
  t = Clock::now();
  IdenticalSetPage sp = Must(store->ListIdenticalSets(sets), "identical");
  std::printf("ListIdenticalSets, first page of %zu: %.3f s\n", sp.sets.size(), Seconds(t));
  std::printf("max RSS %ld MB\n", MaxRssMb());
  return 0;
}
