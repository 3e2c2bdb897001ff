// Store benchmark on synthetic sketches (tests/store/synthetic.h: 200-shingle pages in families of
// 4 near-copies, resemblance ~0.9), at 10k, 100k and 1M stored documents:
//   BM_IngestDurable/N/B durable group commits of B new pages (256 to 16,000) into a store of N
//                       documents: pages/s (wall and CPU), CPU us per
//                       page, KiB written per page (write syscalls), dirty pages and write calls
//                       per commit, cold (the first 10,000 pages after opening a copy) and steady
//                       ("steady_", 10,000 pages after size / 20 more);
//   BM_Lookup/N         SimilarToSketch latency percentiles (p50, p99; wall clock and thread CPU
//                       time) over 2,000 queries, half of them stored pages, half new
//                       near-copies of stored families, cold (just opened), warm (after
//                       20,000 other queries: the map as a daemon that has served a while has
//                       it, partly faulted in) and mapped (after MappedFile::WarmMap: every page of
//                       the file in the page tables; warm_map_s is its time);
//   BM_IngestSized/N/MIN/MAX  200,000 new pages in commits of the size a daemon::BatchSizer
//                       chooses between MIN and MAX (1,000 and 16,000: the daemon's sizer, with
//                       ingest.measure_batch_size; MIN = MAX: a fixed size, 16,000 the daemon's
//                       default): pages/s, CPU us per page, the share of pages at each size (and
//                       the CPU us per page at each), the file's growth per page, the heap at
//                       the end, and first_query_elsewhere_s: the first query of another Store
//                       opened on the result, which rebuilds the write buffer from the documents;
//   BM_IngestSizedLong/N/MIN/MAX/PAGES  the same over PAGES (800,000) pages: the sizer's first
//                       whole round against a fixed 16,000 (SHINGLED_BENCH_TRACE=1 prints each
//                       commit's size, CPU us per page and dirty pages on stderr);
//   BM_IngestMixed/N/PERCENT/FILTER  400,000 pages in 16,000-page commits, PERCENT (0 or 50)
//                       percent of them near-copies of earlier pages' families, with the writer's
//                       key filter (FILTER 1) or without (0; StoreOptions::key_filter), as
//                       BM_IngestSized reports them (SHINGLED_BENCH_WRITE_BUFFER=0: the
//                       ingest benchmarks without the write buffer);
//   BM_LookupStart/N/WARM  the first 2,000 lookups after opening the store, with
//                       MappedFile::WarmMap before them (WARM 1) or not (0): latency p50, p99
//                       and mean;
//   BM_Bytes/N          bytes per document of each database and the rest (free pages, nested
//                       posting trees, see Store::Stats), with every posting in its B-tree (a
//                       copy of the store takes one more page with the write buffer off);
//   BM_Check/N          Store::Check over the filled store (problems must be 0).
//   BM_ChunkIndex/N/ON  chunking on: N of these pages into a fresh store in 10,000-page commits
//                       without fsync, each with 8 chunks of 460..1,960 bytes (~1.2 KB: the
//                       TTTD default's ~1 KB average; a family of 4 shares 7 of them, each member
//                       one of its own) and the file-chunk graph kept (ON 1), or the same pages
//                       with chunking off (ON 0: ChunkInput::kNone, no chunks): wall and CPU us
//                       per page over the whole fill and over its last commit, and bytes per
//                       document of `chunk_docs`, `doc_chunks` and the file.
//
//   build/tests/bench/store_bench [--benchmark_filter=...] [--benchmark_repetitions=3]
// Filters match anywhere in the name: 'BM_Lookup/100000/' (with the slash) selects 100k alone,
// 'BM_Lookup/100000' also matches /1000000.
// Stores are filled once per size under $TMPDIR/shingled-store-bench-v<format>-<size> (not timed;
// reused by later runs; a larger store starts from a copy of the next smaller one), without
// fsync and in batches of 10,000 pages (the 1M store takes ~10 minutes and ~5 GB; BM_Check/1000000
// ~2-4 minutes). Each timed ingest run works on a fresh copy, so that every run starts from the
// same state.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/fmix.h"
#include "daemon/ingest/batch_sizer.h"
#include "store/internal/codec.h"
#include "store/mapped_file.h"
#include "store/store.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kPolynomial = 0x42;
constexpr uint64_t kTimedPages = 10000;  // per phase of BM_IngestDurable
constexpr uint64_t kSizedPages = 200000;  // BM_IngestSized
constexpr uint64_t kMixedPages = 400000;  // BM_IngestMixed: 25 commits, past the filter's first 16
constexpr uint64_t kFillBatch = 10000;
constexpr uint64_t kSizes[] = {10000, 100000, 1000000};

// SHINGLED_BENCH_VERIFY_K=0 measures the store without the verification sample and
// with the paper's 2-of-6 relation clustering (as before format 10); unset, the defaults (k = 256,
// exact + verified).
int VerifyK() {
  const char* k = std::getenv("SHINGLED_BENCH_VERIFY_K");
  return k == nullptr ? dedup::SketchParams{}.verify_sample_size : std::atoi(k);
}

const dedup::SketchParams& Params() {
  static const dedup::SketchParams params = [] {
    dedup::SketchParams p;
    p.verify_sample_size = VerifyK();
    return p;
  }();
  return params;
}

// Page j: 200 shingles; pages come in families of 4 near-copies (resemblance ~0.9).
PageInput MakePage(uint64_t j, SweepId sweep) {
  uint64_t family = j / 4;
  PageInput p;
  p.url = "http://bench/" + std::to_string(j);
  p.sweep = sweep;
  p.date = static_cast<int64_t>(j);
  p.sketch = testing::SyntheticSketch(Params(), testing::Variant(family * 1000, 200, 190, (j + 1) << 20));
  return p;
}

// Page j of a stream of which `copies_percent` percent are near-copies of the family of an
// earlier page, stored before the run or not (chosen at random: resemblance ~0.9 to each member,
// their values mostly stored), the others MakePage's new families.
PageInput MakeMixedPage(uint64_t j, SweepId sweep, uint64_t copies_percent) {
  if (j < 4 || Fmix64(j) % 100 >= copies_percent) return MakePage(j, sweep);
  const uint64_t family = Fmix64(j ^ 0x5bd1e995) % (j / 4);
  PageInput p = MakePage(j, sweep);
  p.sketch = testing::SyntheticSketch(
      Params(), testing::Variant(family * 1000, 200, 190, ((j + 1) << 20) | 2));
  return p;
}

std::vector<PageInput> MakeBatch(uint64_t from, uint64_t to, SweepId sweep,
                                 uint64_t copies_percent = 0) {
  std::vector<PageInput> batch;
  batch.reserve(to - from);
  for (uint64_t j = from; j < to; ++j) batch.push_back(MakeMixedPage(j, sweep, copies_percent));
  return batch;
}

std::string StoreDir(uint64_t docs) {
  return (fs::temp_directory_path() /
          ("shingled-store-bench-v" + std::to_string(internal::kFormatVersion) + "-k" +
           std::to_string(VerifyK()) + "-" + std::to_string(docs)))
      .string();
}

// Holds an exclusive lock on a file while alive: two benchmark processes must not fill the same
// store at once.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(open(path.c_str(), O_CREAT | O_RDWR, 0644)) {
    if (fd_ < 0 || flock(fd_, LOCK_EX) != 0) {
      std::perror(path.c_str());
      std::abort();
    }
  }
  ~FileLock() { close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// A store holding pages [0, docs), built once and kept.
std::string Filled(uint64_t docs) {
  std::string dir = StoreDir(docs);
  FileLock lock(dir + ".lock");
  if (fs::exists(dir + "/done")) return dir;
  fs::remove_all(dir);
  fs::create_directories(dir);
  uint64_t start = 0;
  for (uint64_t smaller : kSizes) {
    if (smaller < docs && fs::exists(StoreDir(smaller) + "/done")) start = smaller;
  }
  if (start > 0) fs::copy_file(StoreDir(start) + "/data.mdb", dir + "/data.mdb");
  StoreOptions o;
  o.durable = false;  // filling is not what is measured
  o.initial_map_size = uint64_t{1} << 30;
  if (VerifyK() == 0) o.cluster_relations = kClusterExact | kClusterFungible;
  auto store = std::move(Store::Open(dir, o, Params(), kPolynomial)).value();
  SweepId sweep = store->OpenSweep("fill", 0)->id;
  // The next batch's sketches are made on another thread while this one is applied.
  auto make = [sweep](uint64_t from, uint64_t to) { return MakeBatch(from, to, sweep); };
  std::future<std::vector<PageInput>> next = std::async(std::launch::async, make, start, std::min(docs, start + kFillBatch));
  for (uint64_t j = start; j < docs; j += kFillBatch) {
    std::vector<PageInput> batch = next.get();
    uint64_t after = j + kFillBatch;
    if (after < docs) next = std::async(std::launch::async, make, after, std::min(docs, after + kFillBatch));
    auto r = store->Apply(batch);
    if (!r.ok()) {
      std::fprintf(stderr, "fill: %s\n", r.status().ToString().c_str());
      std::abort();
    }
    if ((j / kFillBatch) % 10 == 9) std::fprintf(stderr, "fill %s: %llu pages\n", dir.c_str(), static_cast<unsigned long long>(after));
  }
  store.reset();
  std::ofstream(dir + "/done") << docs << "\n";
  return dir;
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// What this process has passed to write(2) and friends so far: bytes, and calls.
struct Written {
  uint64_t bytes = 0, calls = 0;
};
Written WrittenSoFar() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  Written w;
  while (io >> key >> value) {
    if (key == "wchar:") w.bytes = value;
    if (key == "syscw:") w.calls = value;
  }
  return w;
}

// Sums over a run of timed commits.
struct IngestTotals {
  double wall = 0, cpu = 0;
  uint64_t written = 0, write_calls = 0, commits = 0, pages = 0;

  IngestTotals& operator+=(const IngestTotals& o) {
    wall += o.wall;
    cpu += o.cpu;
    written += o.written;
    write_calls += o.write_calls;
    commits += o.commits;
    pages += o.pages;
    return *this;
  }
};

void Report(benchmark::State& state, const std::string& prefix, const IngestTotals& t) {
  const double pages = static_cast<double>(t.pages);
  const double commits = static_cast<double>(t.commits);
  state.counters[prefix + "pages/s"] = pages / t.wall;
  state.counters[prefix + "cpu_pages/s"] = pages / t.cpu;
  state.counters[prefix + "cpu_us/page"] = t.cpu / pages * 1e6;
  state.counters[prefix + "KiB_written/page"] = static_cast<double>(t.written) / pages / 1024;
  state.counters[prefix + "dirty_pages/commit"] = static_cast<double>(t.written) / 4096 / commits;
  state.counters[prefix + "write_calls/commit"] = static_cast<double>(t.write_calls) / commits;
}

// The process's anonymous resident memory (RssAnon), in MiB: the heap, where LMDB keeps the
// pages a write transaction dirtied (and, after the commit, keeps them for the next one).
double AnonMiB() {
  std::ifstream status("/proc/self/status");
  std::string key;
  double kib = 0;
  while (status >> key) {
    if (key == "RssAnon:") {
      status >> kib;
      break;
    }
  }
  return kib / 1024;
}

// A fresh copy of the filled store of `size` documents (synced, so that its pages go to disk now
// and not in the first timed commit's fsync), opened, with a sweep to ingest into. Removed when
// it goes.
class StoreCopy {
 public:
  // `options`: the Store's, but for its map size, set here; `copies_percent`: the percentage of
  // the pages Commit makes that are near-copies of earlier pages' families (MakeMixedPage).
  explicit StoreCopy(uint64_t size, StoreOptions options = {}, uint64_t copies_percent = 0)
      : copies_percent_(copies_percent), next_(size) {
    if (VerifyK() == 0) options.cluster_relations = kClusterExact | kClusterFungible;
    std::string base = Filled(size);
    // One copy per process: runs in parallel (e.g. under a profiler) do not share it.
    dir_ = base + "-run-" + std::to_string(getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy_file(base + "/data.mdb", dir_ + "/data.mdb");
    if (int fd = open((dir_ + "/data.mdb").c_str(), O_RDONLY); fd < 0 || fdatasync(fd) != 0 || close(fd) != 0) {
      std::perror("sync the copy");
      std::abort();
    }
    // Room to grow: a map that fills makes the writer double it and redo the batch, which the
    // doubling makes rare in a long-lived store but would be one of the few batches timed here.
    options.initial_map_size = 2 * fs::file_size(data()) + (uint64_t{256} << 20);
    store_ = std::move(Store::Open(dir_, options, Params(), kPolynomial)).value();
    sweep_ = store_->OpenSweep("run", 1)->id;
  }
  ~StoreCopy() {
    store_.reset();
    fs::remove_all(dir_);
  }
  StoreCopy(const StoreCopy&) = delete;
  StoreCopy& operator=(const StoreCopy&) = delete;

  std::string data() const { return dir_ + "/data.mdb"; }
  Store& store() { return *store_; }

  // The wall seconds of a query asked of another Store opened on the copy (as `shingled similar`
  // or another process would): its first query rebuilds the write buffer from the documents
  // above the lowest watermark (FORMAT.md, "The write buffer").
  double FirstQueryElsewhere() const {
    auto other = std::move(Store::Open(dir_, StoreOptions{}, Params(), kPolynomial)).value();
    auto t0 = std::chrono::steady_clock::now();
    auto r = other->SimilarToSketch(MakePage(0, 0).sketch, QueryOptions{});
    if (!r.ok()) std::abort();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // One durable commit of `pages` new pages; returns its wall time and adds to `t` (may be null).
  double Commit(uint64_t pages, IngestTotals* t, benchmark::State& state) {
    std::vector<PageInput> batch = MakeBatch(next_, next_ + pages, sweep_, copies_percent_);
    next_ += pages;
    Written w0 = WrittenSoFar();
    double c0 = CpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    auto r = store_->Apply(batch);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (t != nullptr) {
      t->cpu += CpuSeconds() - c0;
      Written w1 = WrittenSoFar();
      t->written += w1.bytes - w0.bytes;
      t->write_calls += w1.calls - w0.calls;
      t->wall += seconds;
      ++t->commits;
      t->pages += pages;
    }
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    return seconds;
  }

 private:
  std::string dir_;
  std::unique_ptr<Store> store_;
  SweepId sweep_ = 0;
  uint64_t copies_percent_;
  uint64_t next_;  // the next page's number
};

// Two phases on one fresh copy of the filled store:
//   cold (the counters without a prefix, and the benchmark's time): the first 10,000 pages after
//   opening. When the filled store holds few free pages, the file grows by about two commits'
//   worth of pages (LMDB reuses a page only two commits after the one that freed it); and the
//   process touches the map for the first time (page faults);
//   steady ("steady_" counters): 10,000 pages after size / 20 more (none at 10k, 50,000 at 1M: the
//   store grows by 5% at most before them), as in a daemon that has run for a while: LMDB
//   allocates pages freed by earlier commits (scattered in the file: one write call each, where
//   the cold commits' new pages at the end of the file go out in runs), and the pages the writer
//   visits are mapped. The store then holds steady_docs documents (size + 10,000 at 10k: the
//   10k steady figures are those of a store of 20k-30k documents).
// KiB_written and dirty_pages count write(2) bytes (LMDB writes each page a commit dirtied once,
// plus its meta page); write_calls the write calls.
void BM_IngestDurable(benchmark::State& state) {
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  const auto batch_pages = static_cast<uint64_t>(state.range(1));
  const uint64_t timed_commits = (kTimedPages + batch_pages - 1) / batch_pages;
  const uint64_t warmup_commits = size / 20 / batch_pages;
  StoreCopy copy(size);
  auto commit = [&](IngestTotals* t) { return copy.Commit(batch_pages, t, state); };
  IngestTotals cold, steady;
  const uint64_t file0 = fs::file_size(copy.data());
  for (auto _ : state) {
    double seconds = 0;
    for (uint64_t i = 0; i < timed_commits; ++i) seconds += commit(&cold);
    state.SetIterationTime(seconds);
  }
  const uint64_t file1 = fs::file_size(copy.data());
  for (uint64_t i = 0; i < warmup_commits; ++i) commit(nullptr);
  const uint64_t file2 = fs::file_size(copy.data());
  for (uint64_t i = 0; i < timed_commits; ++i) commit(&steady);
  const uint64_t file3 = fs::file_size(copy.data());
  Report(state, "", cold);
  Report(state, "steady_", steady);
  state.counters["steady_docs"] = static_cast<double>(size + (timed_commits + warmup_commits) * batch_pages);
  // How much the file grew in each measured phase: the cold phase's ~2 commits of pages not yet
  // reusable, then only what the store's data grows by.
  state.counters["file_MiB_grown"] = static_cast<double>(file1 - file0) / (1 << 20);
  state.counters["steady_file_MiB_grown"] = static_cast<double>(file3 - file2) / (1 << 20);
}

// BM_IngestSized/N/MIN/MAX: kSizedPages new pages into a copy of the N store in durable commits
// whose size a daemon::BatchSizer chooses between MIN and MAX pages (1,000 and 16,000:
// ingest.min_batch_pages and ingest.batch_pages, with ingest.measure_batch_size; MIN = MAX: a
// fixed size, as the daemon commits by default), as
// the daemon's writer takes them from a queue that is never empty. The same pages for every
// MIN/MAX: pages/s compares them. Also: the share of the pages committed at each size, the limit
// at the end, the file's growth per page (KiB_grown/page, of KiB_written/page), and the process's
// anonymous memory at the end (anon_MiB: LMDB keeps the pages a commit dirtied for the next one).
void IngestSized(benchmark::State& state, StoreCopy& copy, size_t min_pages, size_t max_pages,
                 uint64_t total_pages) {
  daemon::BatchSizer sizer(
      daemon::BatchSizer::Options{.min_pages = min_pages, .max_pages = max_pages});
  IngestTotals t;
  std::map<uint64_t, IngestTotals> at;  // by commit size
  // SHINGLED_BENCH_TRACE=1: one line per commit on stderr (size, CPU us per page, dirty pages).
  const bool trace = std::getenv("SHINGLED_BENCH_TRACE") != nullptr;
  const uint64_t file0 = fs::file_size(copy.data());
  for (auto _ : state) {
    while (t.pages < total_pages) {
      const uint64_t pages = std::min<uint64_t>(sizer.limit(), total_pages - t.pages);
      IngestTotals c;
      sizer.Committed(pages, copy.Commit(pages, &c, state));
      t += c;
      at[pages] += c;
      if (trace) {
        std::fprintf(stderr, "commit %llu pages %llu cpu_us/page %.1f dirty_pages %llu\n",
                     static_cast<unsigned long long>(t.commits),
                     static_cast<unsigned long long>(pages),
                     c.cpu / static_cast<double>(pages) * 1e6,
                     static_cast<unsigned long long>(c.written / 4096));
      }
    }
    state.SetIterationTime(t.wall);
  }
  Report(state, "", t);
  for (const auto& [pages, c] : at) {
    const std::string n = std::to_string(pages);
    const double p = static_cast<double>(c.pages);
    state.counters["share_at_" + n] = p / static_cast<double>(t.pages);
    if (at.size() > 1) state.counters["cpu_us/page_at_" + n] = c.cpu / p * 1e6;
  }
  state.counters["final_limit"] = static_cast<double>(sizer.limit());
  // The pages the file grew by are written past its end, into fresh page-cache pages, whose
  // first touch can cost far more than a rewrite (measured in an earlier store/FORMAT.md, in git).
  state.counters["KiB_grown/page"] = static_cast<double>(fs::file_size(copy.data()) - file0) /
                                     1024.0 / static_cast<double>(t.pages);
  state.counters["anon_MiB"] = AnonMiB();
  state.counters["first_query_elsewhere_s"] = copy.FirstQueryElsewhere();
}

// SHINGLED_BENCH_WRITE_BUFFER=0 runs BM_IngestSized without the write buffer
// (StoreOptions::write_buffer: every commit puts every posting), to measure what it saves.
StoreOptions IngestOptions() {
  StoreOptions o;
  const char* buffer = std::getenv("SHINGLED_BENCH_WRITE_BUFFER");
  o.write_buffer = buffer == nullptr || std::string(buffer) != "0";
  return o;
}

void IngestSized(benchmark::State& state, uint64_t total_pages) {
  StoreCopy copy(static_cast<uint64_t>(state.range(0)), IngestOptions());
  IngestSized(state, copy, static_cast<size_t>(state.range(1)), static_cast<size_t>(state.range(2)),
              total_pages);
}

void BM_IngestSized(benchmark::State& state) { IngestSized(state, kSizedPages); }

// BM_IngestSizedLong/N/MIN/MAX/PAGES: the same with PAGES new pages, enough for the sizer's
// first whole round (12 commits at 16,000, then 5 at each other size and 5 at 16,000 after each:
// ~590,000 pages) and some of the stay after it.
void BM_IngestSizedLong(benchmark::State& state) {
  IngestSized(state, static_cast<uint64_t>(state.range(3)));
}

// BM_IngestMixed/N/PERCENT/FILTER: kMixedPages pages in 16,000-page commits, PERCENT percent of
// them near-copies of earlier pages' families (MakeMixedPage), with the key filter (FILTER 1) or
// without (0), as BM_IngestSized reports them. The filter spares the reads of values no stored
// document has: a page of a new family has nearly none stored, a near-copy most.
void BM_IngestMixed(benchmark::State& state) {
  StoreOptions o = IngestOptions();
  o.key_filter = state.range(2) != 0;
  StoreCopy copy(static_cast<uint64_t>(state.range(0)), o, static_cast<uint64_t>(state.range(1)));
  IngestSized(state, copy, 16000, 16000, kMixedPages);
}

// A lookup for a page: even i a stored page, odd i a new near-copy of a stored family.
dedup::Sketch QuerySketch(uint64_t i, uint64_t size) {
  uint64_t j = (i * 7919) % size;
  if (i % 2 == 0) return MakePage(j, 0).sketch;
  uint64_t family = j / 4;
  return testing::SyntheticSketch(Params(), testing::Variant(family * 1000, 200, 190, ((size + i) << 20) | 1));
}

double ThreadCpuMicros() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

// Latency percentiles of SimilarToSketch over `queries`, in microseconds: wall clock, and the
// thread's CPU time (which leaves out time waiting for a core on a loaded machine).
struct Latency {
  double p50 = 0, p99 = 0, cpu_p50 = 0, cpu_p99 = 0;
  double results = 0;  // per query
};
struct Timings {
  std::vector<double> micros, cpu;
  size_t results = 0;

  void Ask(const Store& store, const dedup::Sketch& sketch, benchmark::State& state) {
    double c0 = ThreadCpuMicros();
    auto t0 = std::chrono::steady_clock::now();
    auto r = store.SimilarToSketch(sketch, QueryOptions{});
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(ThreadCpuMicros() - c0);
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    results += r.ok() ? r->size() : 0;
  }
  Latency Summary() {
    std::sort(micros.begin(), micros.end());
    std::sort(cpu.begin(), cpu.end());
    auto at = [](const std::vector<double>& v, size_t per100) { return v[v.size() * per100 / 100]; };
    return {at(micros, 50), at(micros, 99), at(cpu, 50), at(cpu, 99), static_cast<double>(results) / micros.size()};
  }
};
Latency MeasureLookups(const Store& store, const std::vector<dedup::Sketch>& queries, benchmark::State& state) {
  Timings t;
  for (const dedup::Sketch& sketch : queries) t.Ask(store, sketch, state);
  return t.Summary();
}
// Cold: the first 2,000 queries after opening the store (each touches B-tree pages the process
// has not mapped yet: page faults). Warm: 2,000 other queries after 20,000 warm-up queries, as
// in a daemon that has been serving for a while; no measured query was asked before. Mapped:
// 2,000 more after MappedFile::WarmMap, as in a daemon that warmed its map when it started.
void BM_Lookup(benchmark::State& state) {
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  auto store = std::move(Store::Open(Filled(size), StoreOptions{}, Params(), kPolynomial)).value();
  constexpr uint64_t kQueries = 2000, kWarmup = 20000;
  auto sketches = [size](uint64_t from, uint64_t n) {
    std::vector<dedup::Sketch> out;
    out.reserve(n);
    for (uint64_t i = from; i < from + n; ++i) out.push_back(QuerySketch(i, size));
    return out;
  };
  std::vector<dedup::Sketch> cold = sketches(0, kQueries);
  std::vector<dedup::Sketch> warmup = sketches(kQueries, kWarmup);
  std::vector<dedup::Sketch> warm = sketches(kQueries + kWarmup, kQueries);
  std::vector<dedup::Sketch> populated = sketches(2 * kQueries + kWarmup, kQueries);
  Latency c, w, m;
  double warm_map_seconds = 0;
  for (auto _ : state) {
    c = MeasureLookups(*store, cold, state);
    MeasureLookups(*store, warmup, state);
    w = MeasureLookups(*store, warm, state);
    auto t0 = std::chrono::steady_clock::now();
    StatusOr<uint64_t> mapped = store->mapped_file()->WarmMap();
    warm_map_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!mapped.ok()) state.SkipWithError(mapped.status().ToString().c_str());
    m = MeasureLookups(*store, populated, state);
  }
  state.counters["cold_p50_us"] = c.p50;
  state.counters["cold_p99_us"] = c.p99;
  state.counters["cold_cpu_p50_us"] = c.cpu_p50;
  state.counters["warm_p50_us"] = w.p50;
  state.counters["warm_p99_us"] = w.p99;
  state.counters["warm_cpu_p50_us"] = w.cpu_p50;
  state.counters["warm_cpu_p99_us"] = w.cpu_p99;
  state.counters["results/query"] = w.results;
  state.counters["mapped_p50_us"] = m.p50;
  state.counters["mapped_p99_us"] = m.p99;
  state.counters["mapped_cpu_p50_us"] = m.cpu_p50;
  state.counters["mapped_cpu_p99_us"] = m.cpu_p99;
  state.counters["warm_map_s"] = warm_map_seconds;
}

// BM_LookupStart/N/WARM: the first 2,000 lookups of a process that just opened the store (the
// file in the page cache, as after a restart of the daemon) and asked one query, after
// MappedFile::WarmMap (WARM 1) or without it (0): wall and CPU p50, p99 and mean in us, and
// warm_map_s. Each run maps the file anew, so runs with and without alternate in one process
// (--benchmark_repetitions with --benchmark_enable_random_interleaving).
void BM_LookupStart(benchmark::State& state) {
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  const bool warm = state.range(1) != 0;
  constexpr uint64_t kQueries = 2000;
  std::vector<dedup::Sketch> queries;
  queries.reserve(kQueries);
  for (uint64_t i = 0; i < kQueries; ++i) queries.push_back(QuerySketch(i, size));
  const std::string dir = Filled(size);
  Latency l;
  double mean = 0, cpu_mean = 0, warm_map_seconds = 0;
  for (auto _ : state) {
    auto store = std::move(Store::Open(dir, StoreOptions{}, Params(), kPolynomial)).value();
    // The first query rebuilds the write buffer from the documents (FORMAT.md, "The write
    // buffer"): with or without warming, not what is measured.
    if (!store->SimilarToSketch(QuerySketch(kQueries, size), QueryOptions{}).ok()) std::abort();
    if (warm) {
      auto t0 = std::chrono::steady_clock::now();
      StatusOr<uint64_t> mapped = store->mapped_file()->WarmMap();
      warm_map_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!mapped.ok()) state.SkipWithError(mapped.status().ToString().c_str());
    }
    Timings t;
    for (const dedup::Sketch& sketch : queries) t.Ask(*store, sketch, state);
    mean = 0;
    cpu_mean = 0;
    for (double m : t.micros) mean += m / kQueries;
    for (double c : t.cpu) cpu_mean += c / kQueries;
    l = t.Summary();
  }
  state.counters["p50_us"] = l.p50;
  state.counters["p99_us"] = l.p99;
  state.counters["mean_us"] = mean;
  state.counters["cpu_p50_us"] = l.cpu_p50;
  state.counters["cpu_p99_us"] = l.cpu_p99;
  state.counters["cpu_mean_us"] = cpu_mean;
  state.counters["warm_map_s"] = warm_map_seconds;
}

void BM_Bytes(benchmark::State& state) {
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  // Counted with every posting and fingerprint in its B-tree, where a store that runs on keeps
  // them: the fill leaves up to 16 batches' worth in the write buffer (in memory, not on disk).
  // A copy of the filled store takes one more page with the buffer off, which puts every slice.
  StoreOptions o;
  o.write_buffer = false;
  StoreCopy copy(size, o);
  copy.Commit(1, nullptr, state);
  StatusOr<StoreStats> stats = copy.store().Stats();
  for (auto _ : state) stats = copy.store().Stats();
  if (!stats.ok()) {
    state.SkipWithError(stats.status().ToString().c_str());
    return;
  }
  const double docs = static_cast<double>(stats->documents);
  state.counters["file_B/doc"] = stats->file_bytes / docs;
  state.counters["other_B/doc"] = stats->other_bytes / docs;
  for (const DatabaseStats& d : stats->databases) {
    if (d.bytes > 4096) state.counters["B/doc:" + d.name] = d.bytes / docs;
  }
}

// Store::Check over the filled store: its time, and the problems found (must be 0).
void BM_Check(benchmark::State& state) {
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  auto store = std::move(Store::Open(Filled(size), StoreOptions{}, Params(), kPolynomial)).value();
  size_t problems = 0;
  for (auto _ : state) {
    auto r = store->Check();
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    problems = r->size();
    for (size_t i = 0; i < std::min<size_t>(problems, 5); ++i) std::fprintf(stderr, "check: %s\n", (*r)[i].c_str());
  }
  state.counters["problems"] = static_cast<double>(problems);
}

// Page j's chunks (BM_ChunkIndex): its family's 8, but the one at j % 8 its own.
std::vector<dedup::Chunk> BenchChunks(uint64_t j) {
  const uint64_t family = j / 4;
  std::vector<dedup::Chunk> chunks;
  for (uint64_t i = 0; i < 8; ++i) {
    const uint64_t key = i == j % 8 ? ((j + 1) << 20) | i : (family << 4) | i;
    chunks.push_back(
        dedup::Chunk{Fmix64(key ^ 0xc4c4), static_cast<uint32_t>(460 + Fmix64(key) % 1500)});
  }
  return chunks;
}

void BM_ChunkIndex(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  const bool on = state.range(1) != 0;
  dedup::SketchParams params = Params();
  if (!on) params.chunking.input = dedup::ChunkInput::kNone;
  const std::string dir = (fs::temp_directory_path() /
                           ("shingled-chunk-bench-" + std::to_string(n) + "-" + std::to_string(on)))
                              .string();
  fs::remove_all(dir);
  StoreOptions o;
  o.durable = false;
  o.initial_map_size = uint64_t{1} << 30;
  auto store = std::move(Store::Open(dir, o, params, kPolynomial)).value();
  const SweepId sweep = store->OpenSweep("fill", 0)->id;
  double wall = 0, cpu = 0, last_wall = 0, last_cpu = 0;
  uint64_t last_pages = 0;
  for (auto _ : state) {
    for (uint64_t j = 0; j < n; j += kFillBatch) {
      std::vector<PageInput> batch = MakeBatch(j, std::min(n, j + kFillBatch), sweep);
      if (on) {
        for (uint64_t i = 0; i < batch.size(); ++i) batch[i].sketch.chunks = BenchChunks(j + i);
      }
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = CpuSeconds();
      auto r = store->Apply(batch);
      last_cpu = CpuSeconds() - c0;
      last_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!r.ok()) {
        state.SkipWithError(r.status().ToString().c_str());
        return;
      }
      last_pages = batch.size();
      wall += last_wall;
      cpu += last_cpu;
    }
    state.SetIterationTime(wall);
  }
  state.counters["us/page"] = wall / static_cast<double>(n) * 1e6;
  state.counters["cpu_us/page"] = cpu / static_cast<double>(n) * 1e6;
  state.counters["last_us/page"] = last_wall / static_cast<double>(last_pages) * 1e6;
  state.counters["last_cpu_us/page"] = last_cpu / static_cast<double>(last_pages) * 1e6;
  StatusOr<StoreStats> stats = store->Stats();
  if (!stats.ok()) {
    state.SkipWithError(stats.status().ToString().c_str());
    return;
  }
  const double docs = static_cast<double>(stats->documents);
  state.counters["file_B/doc"] = stats->file_bytes / docs;
  state.counters["other_B/doc"] = stats->other_bytes / docs;
  for (const DatabaseStats& d : stats->databases) {
    if (d.name == "chunk_docs" || d.name == "doc_chunks")
      state.counters["B/doc:" + d.name] = d.bytes / docs;
  }
  store.reset();
  fs::remove_all(dir);
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (uint64_t size : kSizes) b->Arg(static_cast<int64_t>(size));
}

// Commits of each size of the daemon's ladder (ingest.min_batch_pages 1,000 doubled up to
// ingest.batch_pages 16,000), and of 256.
void IngestArgs(benchmark::internal::Benchmark* b) {
  for (uint64_t size : kSizes) {
    for (int64_t batch : {256, 1000, 2000, 4000, 8000, 16000})
      b->Args({static_cast<int64_t>(size), batch});
  }
}

// The daemon's sizer (1,000 to 16,000, with ingest.measure_batch_size), the one before it (1,000
// to 4,000), and fixed sizes (16,000 the daemon's default).
void SizedArgs(benchmark::internal::Benchmark* b) {
  for (uint64_t size : kSizes) {
    constexpr std::pair<int64_t, int64_t> kMinMax[] = {{1000, 1000},   {4000, 4000}, {16000, 16000},
                                                       {32000, 32000}, {1000, 4000}, {1000, 16000}};
    for (auto [min, max] : kMinMax) b->Args({static_cast<int64_t>(size), min, max});
  }
}

// The daemon's sizer against its largest size, fixed (the default), over 800,000 pages.
void LongSizedArgs(benchmark::internal::Benchmark* b) {
  for (uint64_t size : kSizes) {
    for (int64_t min : {1000, 16000}) b->Args({static_cast<int64_t>(size), min, 16000, 800000});
  }
}

BENCHMARK(BM_IngestDurable)->Apply(IngestArgs)->Unit(benchmark::kMillisecond)->Iterations(1)->UseManualTime();
BENCHMARK(BM_IngestSized)
    ->Apply(SizedArgs)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseManualTime();
BENCHMARK(BM_IngestSizedLong)
    ->Apply(LongSizedArgs)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseManualTime();
BENCHMARK(BM_IngestMixed)
    ->ArgsProduct({{10000, 100000, 1000000}, {0, 50}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseManualTime();
BENCHMARK(BM_Lookup)->Apply(Sizes)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_LookupStart)
    ->ArgsProduct({{10000, 100000, 1000000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_Bytes)->Apply(Sizes)->Iterations(1);
BENCHMARK(BM_Check)->Apply(Sizes)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_ChunkIndex)
    ->ArgsProduct({{10000, 20000, 100000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseManualTime();

}  // namespace
}  // namespace shingled::store

BENCHMARK_MAIN();
