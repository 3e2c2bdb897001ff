// The change report's time and memory on a large store (docs/REPORTS.md, "Cost, memory and
// consistency"). Not Google Benchmark: the measured part must run in a fresh process, so that
// its peak memory is the report's and not the store build's.
//
//   report_bench build --dir DIR --urls N   builds DIR (once; kept): N URLs over 1,000 hosts in
//                                           sweep s1 (closed), then sweep s2 (left open) a month
//                                           later: 80% unchanged, 10% changed, 2% dead, 2% moved
//                                           and edited, 1% moved with a redirect, 2% born, 3%
//                                           not seen. Synthetic sketches of 120 shingles.
//   report_bench run --dir DIR [--runs R]   runs ChangesBetween(s1, s2) R times (default 3) and
//                                           prints each run's wall time, then the median, and
//                                           the process's peak anonymous memory (RssAnon,
//                                           sampled every 10 ms) and peak RSS (VmHWM, which
//                                           also counts the store's mapped pages).
//
//   report_bench build-repo --dir DIR --docs N   a repository store: N file: URLs whose
//                                           documents carry chunks (20 of 300..700 bytes, and one
//                                           template chunk in every document): 60% unique, 20% in
//                                           groups of 5 sharing 18 chunks, 10% identical copies
//                                           (pairs of URLs), 10% containments (a document of 14
//                                           chunks inside one of 20).
//   report_bench run-repo --dir DIR [--runs R]   the identical then the clusters report (JSON,
//                                           to a sink that counts bytes), R times each; time and
//                                           peak RssAnon of each.
//
// Measured on the development machine (2 cores shared with other builds; RelWithDebInfo -O1),
// 1M URLs (docs/REPORTS.md): build 456 s; run 5.88, 3.11, 3.26 s (median 3.26 s), peak RssAnon
// 19.9 MB, VmHWM 3.1 GB (the store's mapped pages).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "report/repo_reports.h"
#include "store/store.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kPolynomial = 0x1234567890abcdefull;
constexpr uint64_t kShingles = 120;
constexpr uint64_t kBatch = 5000;
constexpr int64_t kT0 = 1767225600;  // 2026-01-01
constexpr int64_t kDay = 86400;

const dedup::SketchParams& Params() {
  static const dedup::SketchParams params;
  return params;
}

std::string Host(uint64_t j) { return "http://host" + std::to_string(j % 1000) + ".example/"; }
std::string Url(uint64_t j) { return Host(j) + "p/" + std::to_string(j); }

PageInput Page(std::string url, SweepId sweep, int64_t date,
               const std::vector<uint64_t>& shingles) {
  PageInput p;
  p.url = std::move(url);
  p.sweep = sweep;
  p.date = date;
  p.sketch = testing::SyntheticSketch(Params(), shingles);
  return p;
}

PageInput Status(std::string url, SweepId sweep, int64_t date, int status,
                 std::string target = {}) {
  PageInput p;
  p.url = std::move(url);
  p.sweep = sweep;
  p.date = date;
  p.http_status = status;
  p.redirect_target = std::move(target);
  return p;
}

// The pages of URLs [from, to) in sweep 1 or 2.
std::vector<PageInput> Batch(int sweep_no, SweepId sweep, uint64_t from, uint64_t to) {
  std::vector<PageInput> out;
  const int64_t date = sweep_no == 1 ? kT0 : kT0 + 30 * kDay;
  for (uint64_t j = from; j < to; ++j) {
    const uint64_t base = j * 1000;
    if (sweep_no == 1) {
      out.push_back(Page(Url(j), sweep, date, testing::Range(base, kShingles)));
      continue;
    }
    const uint64_t fresh = (uint64_t{1} << 40) + j * 1000;
    const uint64_t kind = j % 100;
    if (kind < 80) {
      out.push_back(Page(Url(j), sweep, date, testing::Range(base, kShingles)));
    } else if (kind < 90) {
      out.push_back(Page(Url(j), sweep, date, testing::Variant(base, kShingles, 100, fresh)));
    } else if (kind < 92) {
      out.push_back(Status(Url(j), sweep, date, 404));
    } else if (kind < 94) {
      out.push_back(Status(Url(j), sweep, date, 404));
      out.push_back(
          Page(Url(j) + "/moved", sweep, date, testing::Variant(base, kShingles, 110, fresh)));
    } else if (kind < 95) {
      out.push_back(Status(Url(j), sweep, date, 301, Url(j) + "/new"));
      out.push_back(Page(Url(j) + "/new", sweep, date, testing::Range(base, kShingles)));
    } else if (kind < 97) {
      out.push_back(Page(Host(j) + "born/" + std::to_string(j), sweep, date,
                         testing::Range((uint64_t{1} << 41) + j * 1000, kShingles)));
    }  // else: not seen by s2
  }
  return out;
}

int Build(const std::string& dir, uint64_t urls) {
  if (fs::exists(dir + "/done")) {
    std::fprintf(stderr, "%s is built already\n", dir.c_str());
    return 0;
  }
  fs::remove_all(dir);
  fs::create_directories(dir);
  StoreOptions o;
  o.durable = false;
  o.initial_map_size = uint64_t{1} << 32;
  auto opened = Store::Open(dir, o, Params(), kPolynomial);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  Store& store = **opened;
  const auto start = std::chrono::steady_clock::now();
  for (int sweep_no : {1, 2}) {
    const std::string name = "s" + std::to_string(sweep_no);
    const SweepId sweep = store.OpenSweep(name, sweep_no == 1 ? kT0 : kT0 + 30 * kDay)->id;
    auto make = [&, sweep_no, sweep](uint64_t from) {
      return Batch(sweep_no, sweep, from, std::min(urls, from + kBatch));
    };
    std::future<std::vector<PageInput>> next = std::async(std::launch::async, make, 0);
    for (uint64_t j = 0; j < urls; j += kBatch) {
      std::vector<PageInput> batch = next.get();
      if (j + kBatch < urls) next = std::async(std::launch::async, make, j + kBatch);
      auto r = store.Apply(batch);
      if (!r.ok()) {
        std::fprintf(stderr, "apply: %s\n", r.status().ToString().c_str());
        return 1;
      }
      if ((j / kBatch) % 20 == 19) {
        std::fprintf(
            stderr, "%s: %llu URLs, %.0f s\n", name.c_str(),
            static_cast<unsigned long long>(j + kBatch),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
    if (sweep_no == 1 && !store.CloseSweep(sweep, kT0 + 1).ok()) return 1;
  }
  std::ofstream(dir + "/done") << urls << "\n";
  std::fprintf(stderr, "built %s in %.0f s\n", dir.c_str(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

// A field of /proc/self/status in kB.
uint64_t StatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0) return std::stoull(line.substr(n + 1));
  }
  return 0;
}

int Run(const std::string& dir, int runs) {
  StoreOptions o;
  o.create = false;
  auto opened = Store::Open(dir, o, Params(), kPolynomial);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s (build it first)\n", opened.status().ToString().c_str());
    return 1;
  }
  Store& store = **opened;
  const SweepId s1 = store.FindSweep("s1")->id, s2 = store.FindSweep("s2")->id;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> peak_anon{StatusKb("RssAnon:")};
  const uint64_t anon_before = peak_anon.load();
  std::thread sampler([&] {
    while (!done.load()) {
      peak_anon.store(std::max(peak_anon.load(), StatusKb("RssAnon:")));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::vector<double> seconds;
  ChangeCounts counts;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    StatusOr<ChangeReport> report = store.ChangesBetween(s1, s2);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!report.ok()) {
      std::fprintf(stderr, "report: %s\n", report.status().ToString().c_str());
      done = true;
      sampler.join();
      return 1;
    }
    counts = report->total;
    std::printf("run %d: %.2f s\n", i + 1, seconds.back());
    std::fflush(stdout);
  }
  done = true;
  sampler.join();
  std::sort(seconds.begin(), seconds.end());
  std::printf(
      "urls %llu unchanged %llu changed %llu moved %llu moved_in %llu died %llu born %llu "
      "not_seen %llu\n",
      static_cast<unsigned long long>(counts.urls),
      static_cast<unsigned long long>(counts.unchanged),
      static_cast<unsigned long long>(counts.changed),
      static_cast<unsigned long long>(counts.moved),
      static_cast<unsigned long long>(counts.moved_in),
      static_cast<unsigned long long>(counts.died), static_cast<unsigned long long>(counts.born),
      static_cast<unsigned long long>(counts.not_seen));
  std::printf(
      "median %.2f s of %d runs; peak RssAnon %.1f MB (%.1f MB before the first run); "
      "peak VmHWM %.1f MB\n",
      seconds[seconds.size() / 2], runs, static_cast<double>(peak_anon.load()) / 1024,
      static_cast<double>(anon_before) / 1024, static_cast<double>(StatusKb("VmHWM:")) / 1024);
  return 0;
}

// --- the repository reports ---

// Document j's chunks and sketch (see the header comment for the mix).
PageInput RepoPage(uint64_t j, SweepId sweep) {
  constexpr uint64_t kTemplate = 0x7e3b1a7e3b1a7e3bull;
  const uint64_t kind = j % 100;
  uint64_t content = j;          // what decides the chunks
  uint64_t family = UINT64_MAX;  // a group's shared chunks
  size_t chunks = 20;
  if (kind >= 60 && kind < 80) family = j / 5;
  if (kind >= 80 && kind < 90) content = (uint64_t{1} << 40) + j / 2;
  if (kind >= 90) {
    content = (uint64_t{1} << 41) + j / 2;
    if (kind % 2 == 1) chunks = 14;
  }
  PageInput p;
  p.url = "file:///repo/d" + std::to_string(j);
  p.sweep = sweep;
  p.date = kT0;
  const uint64_t shingle_base = content * 1000 + (kind >= 90 && kind % 2 == 1 ? 500 : 0);
  p.sketch = testing::SyntheticSketch(Params(), testing::Range(shingle_base, kShingles));
  p.sketch.chunks.push_back(dedup::Chunk{kTemplate, 400});
  for (size_t i = 0; i < chunks; ++i) {
    const bool shared = family != UINT64_MAX && i < 18;
    // A group's chunks and a content's chunks from different seeds: they never collide.
    const uint64_t seed = shared ? testing::Mix(family) ^ 0x5eed : testing::Mix(content);
    const uint64_t h = testing::Mix(seed + i);
    p.sketch.chunks.push_back(dedup::Chunk{h, static_cast<uint32_t>(300 + h % 400)});
  }
  return p;
}

int BuildRepo(const std::string& dir, uint64_t docs) {
  if (fs::exists(dir + "/done")) {
    std::fprintf(stderr, "%s is built already\n", dir.c_str());
    return 0;
  }
  fs::remove_all(dir);
  fs::create_directories(dir);
  StoreOptions o;
  o.durable = false;
  auto opened = Store::Open(dir, o, Params(), kPolynomial);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  Store& store = **opened;
  const auto start = std::chrono::steady_clock::now();
  const SweepId sweep = store.OpenSweep("repo", kT0)->id;
  for (uint64_t j = 0; j < docs; j += kBatch) {
    std::vector<PageInput> batch;
    for (uint64_t k = j; k < std::min(docs, j + kBatch); ++k) batch.push_back(RepoPage(k, sweep));
    auto r = store.Apply(batch);
    if (!r.ok()) {
      std::fprintf(stderr, "apply: %s\n", r.status().ToString().c_str());
      return 1;
    }
  }
  std::ofstream(dir + "/done") << docs << "\n";
  std::fprintf(stderr, "built %s in %.0f s\n", dir.c_str(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

int RunRepo(const std::string& dir, int runs) {
  StoreOptions o;
  o.create = false;
  auto opened = Store::Open(dir, o, Params(), kPolynomial);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s (build it first)\n", opened.status().ToString().c_str());
    return 1;
  }
  Store& store = **opened;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> peak_anon{StatusKb("RssAnon:")};
  std::printf("RssAnon before: %.1f MB\n", static_cast<double>(peak_anon.load()) / 1024);
  std::thread sampler([&] {
    while (!done.load()) {
      peak_anon.store(std::max(peak_anon.load(), StatusKb("RssAnon:")));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  int failed = 0;
  for (const char* which : {"identical", "clusters"}) {
    std::vector<double> seconds;
    uint64_t bytes = 0;
    std::string head;  // the first bytes: the identical report's totals
    std::string tail;  // the last bytes: the clusters report's totals
    peak_anon.store(StatusKb("RssAnon:"));
    for (int i = 0; i < runs && failed == 0; ++i) {
      bytes = 0;
      head.clear();
      auto sink = [&](std::string_view text) {
        bytes += text.size();
        if (head.size() < 200) head.append(text.substr(0, 200));
        tail.assign(text.substr(text.size() > 400 ? text.size() - 400 : 0));
        return OkStatus();
      };
      const auto start = std::chrono::steady_clock::now();
      shingled::Status s =
          std::string_view(which) == "identical"
              ? report::WriteIdenticalReport(store, {}, report::RepoReportFormat::kJson, sink)
              : report::WriteClusterReport(store, {}, report::RepoReportFormat::kJson, sink);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (!s.ok()) {
        std::fprintf(stderr, "%s: %s\n", which, s.ToString().c_str());
        failed = 1;
      }
      std::printf("%s run %d: %.2f s, %llu bytes of JSON\n", which, i + 1, seconds.back(),
                  static_cast<unsigned long long>(bytes));
      std::fflush(stdout);
    }
    std::printf("%s\n", std::string_view(which) == "identical" ? head.c_str() : tail.c_str());
    std::sort(seconds.begin(), seconds.end());
    std::printf("%s: median %.2f s of %d runs; peak RssAnon %.1f MB\n", which,
                seconds[seconds.size() / 2], runs, static_cast<double>(peak_anon.load()) / 1024);
  }
  done = true;
  sampler.join();
  std::printf("peak VmHWM %.1f MB\n", static_cast<double>(StatusKb("VmHWM:")) / 1024);
  return failed;
}

}  // namespace
}  // namespace shingled::store

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  std::string dir;
  uint64_t urls = 1000000;
  int runs = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--dir") {
      dir = argv[i + 1];
    } else if (flag == "--urls" || flag == "--docs") {
      urls = std::stoull(argv[i + 1]);
    } else if (flag == "--runs") {
      runs = std::stoi(argv[i + 1]);
    } else {
      mode.clear();
    }
  }
  if ((mode != "build" && mode != "run" && mode != "build-repo" && mode != "run-repo") ||
      dir.empty() || urls == 0 || runs < 1) {
    std::fprintf(stderr,
                 "usage: report_bench build --dir DIR [--urls N] | run --dir DIR [--runs R] | "
                 "build-repo --dir DIR [--docs N] | run-repo --dir DIR [--runs R]\n");
    return 2;
  }
  if (mode == "build-repo") return shingled::store::BuildRepo(dir, urls);
  if (mode == "run-repo") return shingled::store::RunRepo(dir, runs);
  return mode == "build" ? shingled::store::Build(dir, urls) : shingled::store::Run(dir, runs);
}
