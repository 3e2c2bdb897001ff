// HTML to tokens, and HTML to a complete sketch, on the real corpus: the streaming canonicalizer
// against the Gumbo reference, in one run, with the ratio printed at the end.
//
//   scripts/make-corpus.sh
//   taskset -c 1 build/tests/bench/canonicalize_bench --benchmark_repetitions=5
//
// Every page is canonicalized from its bytes as a crawler would hand it over ("text/html", charset
// detection, conversion), each benchmark iteration covering the whole corpus; MB/s is corpus
// bytes per second (10^6 bytes).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dedup/sketch.h"
#include "dedup/streaming_canonicalizer.h"
#include "tests/bench/corpus.h"

namespace shingled::dedup {
namespace {

using bench::Corpus;
using bench::LoadCorpus;

// Counts tokens: the cheapest sink, so that the benchmark measures the canonicalizer.
class CountingSink final : public TokenSink {
 public:
  void OnToken(std::string_view token) override { bytes += token.size() + 1; }
  uint64_t bytes = 0;
};

void HtmlToTokens(benchmark::State& state, CanonicalizerKind kind) {
  const Corpus& corpus = LoadCorpus();
  CountingSink sink;
  for (auto _ : state) {
    for (const std::string& page : corpus.pages) {
      CanonicalizePageWith(kind, page, "text/html", &sink);
    }
  }
  benchmark::DoNotOptimize(sink.bytes);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(corpus.bytes));
}

void HtmlToSketch(benchmark::State& state, CanonicalizerKind kind) {
  const Corpus& corpus = LoadCorpus();
  StatusOr<std::shared_ptr<const SketchContext>> context = SketchContext::Create(SketchParams());
  if (!context.ok()) {
    state.SkipWithError(context.status().ToString().c_str());
    return;
  }
  Sketcher sketcher(**context);
  uint64_t minhash = 0;
  for (auto _ : state) {
    for (const std::string& page : corpus.pages) {
      sketcher.AddRawBytes(page);
      CanonicalizePageWith(kind, page, "text/html", &sketcher);
      const Sketch sketch = sketcher.Finish();
      if (!sketch.minhashes.empty()) minhash ^= sketch.minhashes[0];
    }
  }
  benchmark::DoNotOptimize(minhash);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(corpus.bytes));
}

void BM_HtmlToTokens_Streaming(benchmark::State& s) {
  HtmlToTokens(s, CanonicalizerKind::kStreaming);
}
void BM_HtmlToTokens_Gumbo(benchmark::State& s) { HtmlToTokens(s, CanonicalizerKind::kGumbo); }
void BM_HtmlToSketch_Streaming(benchmark::State& s) {
  HtmlToSketch(s, CanonicalizerKind::kStreaming);
}
void BM_HtmlToSketch_Gumbo(benchmark::State& s) { HtmlToSketch(s, CanonicalizerKind::kGumbo); }

// One corpus pass takes 0.3 s (streaming) to 5 s (Gumbo): a few iterations are plenty.
BENCHMARK(BM_HtmlToTokens_Streaming)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_HtmlToTokens_Gumbo)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_HtmlToSketch_Streaming)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_HtmlToSketch_Gumbo)->Unit(benchmark::kMillisecond)->Iterations(1);

// Passes every run to the console and keeps each benchmark's MB/s (the median when repeated),
// so that main() can print the ratios the issue asks for.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const bool use = run.run_type == Run::RT_Iteration ? !seen_median_.count(Name(run))
                                                         : run.aggregate_name == "median";
      if (!use) continue;
      if (run.run_type == Run::RT_Aggregate) seen_median_[Name(run)] = true;
      const auto it = run.counters.find("bytes_per_second");
      if (it != run.counters.end()) mb_per_s_[Name(run)] = it->second.value / 1e6;
    }
  }

  void PrintRatios() const {
    std::printf("\n");
    for (const char* what : {"Tokens", "Sketch"}) {
      const std::string streaming = std::string("BM_HtmlTo") + what + "_Streaming";
      const std::string gumbo = std::string("BM_HtmlTo") + what + "_Gumbo";
      if (!mb_per_s_.count(streaming) || !mb_per_s_.count(gumbo)) continue;
      const double s = mb_per_s_.at(streaming);
      const double g = mb_per_s_.at(gumbo);
      std::printf("HTML -> %-6s streaming %7.1f MB/s   gumbo %6.1f MB/s   ratio %5.1fx\n", what, s,
                  g, s / g);
    }
  }

 private:
  static std::string Name(const Run& run) { return run.run_name.function_name; }
  std::map<std::string, double> mb_per_s_;
  std::map<std::string, bool> seen_median_;
};

}  // namespace
}  // namespace shingled::dedup

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  shingled::dedup::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  benchmark::Shutdown();
  return 0;
}
