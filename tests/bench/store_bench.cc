// Store benchmark: ingest from synthetic sketches (pages/s against store size, durable group
// commits of 1,000 pages), lookup latency, and bytes per document per database.
//
//   build/tests/bench/store_bench [--benchmark_filter=...]
// Stores are filled once per size under $TMPDIR/shingled-store-bench-<size> (not timed; reused
// by later runs) and copied for each timed run, so that every run starts from the same state.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include "store/store.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

constexpr uint64_t kPolynomial = 0x42;
constexpr int kBatch = 1000;

// Page j: 200 shingles; pages come in families of 4 near-copies (resemblance ~0.9).
PageInput MakePage(uint64_t j, SweepId sweep) {
  static const dedup::SketchParams params;
  uint64_t family = j / 4;
  PageInput p;
  p.url = "http://bench/" + std::to_string(j);
  p.sweep = sweep;
  p.date = static_cast<int64_t>(j);
  p.sketch = testing::SyntheticSketch(params, testing::Variant(family * 1000, 200, 190, (j + 1) << 20));
  return p;
}

std::string Filled(uint64_t docs) {
  namespace fs = std::filesystem;
  std::string dir = (fs::temp_directory_path() / ("shingled-store-bench-" + std::to_string(docs))).string();
  if (fs::exists(dir + "/done")) return dir;
  fs::remove_all(dir);
  StoreOptions o;
  o.durable = false;  // filling is not what is measured
  auto store = std::move(Store::Open(dir, o, dedup::SketchParams{}, kPolynomial)).value();
  SweepId sweep = store->OpenSweep("fill", 0)->id;
  for (uint64_t j = 0; j < docs; j += kBatch) {
    std::vector<PageInput> batch;
    for (uint64_t i = j; i < std::min(docs, j + kBatch); ++i) batch.push_back(MakePage(i, sweep));
    if (!store->Apply(batch).ok()) std::abort();
  }
  std::FILE* f = std::fopen((dir + "/done").c_str(), "w");
  std::fclose(f);
  return dir;
}

void BM_IngestDurable(benchmark::State& state) {
  const uint64_t size = state.range(0);
  std::string base = Filled(size);
  std::string dir = base + "-run";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(base + "/data.mdb", dir + "/data.mdb");
  auto store = std::move(Store::Open(dir, StoreOptions{}, dedup::SketchParams{}, kPolynomial)).value();
  SweepId sweep = store->OpenSweep("run", 1)->id;
  uint64_t next = size;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<PageInput> batch;
    for (int i = 0; i < kBatch; ++i) batch.push_back(MakePage(next++, sweep));
    state.ResumeTiming();
    auto r = store->Apply(batch);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  auto stats = store->Stats();
  state.counters["file_bytes_per_doc"] = static_cast<double>(stats->file_bytes) / stats->documents;
  for (const DatabaseStats& d : stats->databases) {
    if (d.bytes > 0) state.counters["B/doc:" + d.name] = static_cast<double>(d.bytes) / stats->documents;
  }
  store.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_IngestDurable)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(10);

void BM_SimilarLookup(benchmark::State& state) {
  const uint64_t size = state.range(0);
  StoreOptions o;
  auto store = std::move(Store::Open(Filled(size), o, dedup::SketchParams{}, kPolynomial)).value();
  std::vector<dedup::Sketch> queries;
  for (uint64_t j = 0; j < 256; ++j) queries.push_back(MakePage((j * 7919) % size, 0).sketch);
  QueryOptions q;
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    auto r = store->SimilarToSketch(queries[i++ % queries.size()], q);
    hits += r.ok() ? r->size() : 0;
  }
  state.counters["results"] = static_cast<double>(hits) / state.iterations();
}
BENCHMARK(BM_SimilarLookup)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace shingled::store

BENCHMARK_MAIN();
