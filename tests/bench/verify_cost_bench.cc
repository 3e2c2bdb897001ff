// The second stage's cost. `verify_cost_bench K [DOCS [SHINGLES]]` puts DOCS (default
// 100,000) synthetic pages (store_bench's MakePage: SHINGLES shingles, default 200, families of 4
// near-copies at J ~0.9, each with fresh shingles of its own)
// into a new store under /tmp in 10,000-page non-durable commits, with verify_sample_size K and
// the default relations (exact + verified), or with K = 0 as before format 10 (no sample, exact +
// fungible); prints the CPU microseconds of Apply per page, the bytes per document of the
// databases (Stats) and of `verify_samples`, and the near-duplicates found. A plain program: it
// needs the store only (store_bench needs the daemon's library).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "store/store.h"
#include "tests/store/synthetic.h"
using namespace shingled;
using namespace shingled::store;
int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: verify_cost_bench K [DOCS [SHINGLES]]\n");
    return 2;
  }
  const int k = std::atoi(argv[1]);
  const uint64_t docs = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000;
  const uint64_t shingles = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 200;
  if (k < 0 || docs == 0 || docs % 10000 != 0 || shingles < 20 || shingles > 1000000) {
    std::fprintf(stderr, "K >= 0, DOCS a multiple of 10,000, SHINGLES 20..1,000,000\n");
    return 2;
  }
  dedup::SketchParams p;
  p.verify_sample_size = k;
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("shingled-verify-cost-k" + std::to_string(k)))
          .string();
  std::filesystem::remove_all(dir);
  StoreOptions o;
  o.durable = false;
  o.initial_map_size = uint64_t{1} << 30;
  if (k == 0) o.cluster_relations = kClusterExact | kClusterFungible;
  auto store = std::move(Store::Open(dir, o, p, 0x1234567)).value();
  SweepId sweep = store->OpenSweep("fill", 0)->id;
  double cpu = 0;
  uint64_t near = 0, verified = 0, fungible = 0;
  for (uint64_t j = 0; j < docs; j += 10000) {
    std::vector<PageInput> batch;
    for (uint64_t i = j; i < j + 10000; ++i) {
      PageInput pi;
      pi.url = "http://bench/" + std::to_string(i);
      pi.sweep = sweep;
      pi.sketch =
          testing::SyntheticSketch(p, testing::Variant(i / 4 * 5 * shingles, shingles,
                                                       shingles - shingles / 20,
                                                       (uint64_t{1} << 40) + i * shingles));
      batch.push_back(std::move(pi));
    }
    std::clock_t c0 = std::clock();
    auto r = store->Apply(batch);
    cpu += static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    if (!r.ok()) {
      std::printf("%s\n", r.status().ToString().c_str());
      return 1;
    }
    for (const PageResult& pr : *r) {
      near += pr.verdict == Verdict::kNearDuplicate;
      for (const Match& m : pr.matches) {
        verified += m.relation == Relation::kVerified;
        fungible += m.relation == Relation::kFungible;
      }
    }
  }
  auto st = store->Stats();
  if (!st.ok()) {
    std::printf("%s\n", st.status().ToString().c_str());
    return 1;
  }
  double bytes = 0, verify = 0;
  for (const auto& d : st->databases) {
    bytes += d.bytes;
    if (d.name == "verify_samples") verify = d.bytes;
  }
  std::printf(
      "k=%d docs=%llu shingles=%llu apply_cpu_us/page=%.1f databases_B/doc=%.0f verify_samples_B/doc=%.0f "
      "file_B/doc=%.0f near_dup=%llu verified_matches=%llu fungible_matches=%llu\n",
      k, (unsigned long long)docs, (unsigned long long)shingles, cpu / docs * 1e6, bytes / docs, verify / docs,
      (double)st->file_bytes / docs, (unsigned long long)near, (unsigned long long)verified,
      (unsigned long long)fungible);
  store.reset();
  std::filesystem::remove_all(dir);
}
