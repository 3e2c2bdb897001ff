// Throughput of the sketching engine on real HTML (issue 2): canonicalization alone, tokens to
// shingles, the whole sketch from canonical text, and HTML to sketch, each in MB/s of its input.
// Run through scripts/bench.sh, which repeats each and reports medians.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "dedup/canonicalize.h"
#include "dedup/page.h"
#include "dedup/streaming_canonicalizer.h"
#include "dedup/rabin.h"
#include "dedup/sketch.h"
#include "dedup/tokenizer.h"
#include "tests/bench/corpus.h"

namespace shingled::dedup {
namespace {

const bench::Corpus& Pages() { return bench::LoadCorpus(); }

// The corpus's canonical text: each page's tokens joined by spaces, as the sketch sees them.
const std::vector<std::string>& Texts() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    for (const std::string& page : Pages().pages) {
      TokenCollector tokens;
      CanonicalizePage(page, "text/html", &tokens);
      std::string text;
      for (const std::string& t : tokens.tokens) (text += t) += ' ';
      out.push_back(std::move(text));
    }
    return out;
  }();
  return texts;
}

size_t TotalBytes(const std::vector<std::string>& v) {
  size_t n = 0;
  for (const std::string& s : v) n += s.size();
  return n;
}

class NullSink final : public TokenSink {
 public:
  void OnToken(std::string_view token) override { benchmark::DoNotOptimize(token.data()); }
};

// Canonicalization alone (HTML to tokens, tokens dropped): Gumbo, the reference, and streaming.
void BM_Canonicalize(benchmark::State& state) {
  const auto kind = static_cast<CanonicalizerKind>(state.range(0));
  state.SetLabel(std::string(CanonicalizerKindName(kind)));
  Pages();  // loaded before the clock starts
  for (auto _ : state) {
    for (const std::string& page : Pages().pages) {
      NullSink sink;
      CanonicalizePageWith(kind, page, "text/html", &sink);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * Pages().bytes));
}
BENCHMARK(BM_Canonicalize)
    ->Arg(static_cast<int>(CanonicalizerKind::kGumbo))
    ->Arg(static_cast<int>(CanonicalizerKind::kStreaming))
    ->Unit(benchmark::kMillisecond);

// Tokenizer, token fingerprints and the sliding Rabin window: the shingle stream without samples.
class ShingleSink final : public TokenSink {
 public:
  explicit ShingleSink(const RabinWindowTables& tables) : window_(tables) {}
  void OnToken(std::string_view token) override {
    benchmark::DoNotOptimize(window_.Push(XXH3_64bits_withSeed(token.data(), token.size(), 1)));
  }

 private:
  RabinWindow window_;
};

void BM_TokensToShingles(benchmark::State& state) {
  const RabinFingerprinter rabin(PickIrreduciblePolynomial(SketchParams{}.seed));
  const RabinWindowTables tables(rabin, 8);
  Texts();  // prepared before the clock starts
  for (auto _ : state) {
    for (const std::string& text : Texts()) {
      ShingleSink sink(tables);
      Tokenizer tokenizer(&sink);
      tokenizer.Feed(text);
      tokenizer.Finish();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * TotalBytes(Texts())));
}
BENCHMARK(BM_TokensToShingles)->Unit(benchmark::kMillisecond);

// The whole sketch (84 values, features, super shingles, samples, fingerprints) from canonical
// text, for each minhash kernel the CPU has.
void BM_SketchFromText(benchmark::State& state) {
  const auto level = static_cast<SimdLevel>(state.range(0));
  auto ctx = SketchContext::Create(SketchParams{}, level);
  if (!ctx.ok()) {
    state.SkipWithError("this CPU lacks the SIMD level");
    return;
  }
  state.SetLabel(std::string(SimdLevelName(level)));
  Sketcher sketcher(**ctx);
  Texts();  // prepared before the clock starts
  for (auto _ : state) {
    for (const std::string& text : Texts()) {
      Tokenizer tokenizer(&sketcher);
      sketcher.AddRawBytes(text);
      tokenizer.Feed(text);
      tokenizer.Finish();
      benchmark::DoNotOptimize(sketcher.Finish());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * TotalBytes(Texts())));
}
BENCHMARK(BM_SketchFromText)
    ->Arg(static_cast<int>(SimdLevel::kScalar))
    ->Arg(static_cast<int>(SimdLevel::kAvx2))
    ->Arg(static_cast<int>(SimdLevel::kAvx512))
    ->Unit(benchmark::kMillisecond);

// HTML to complete sketch, with each canonicalizer.
void BM_HtmlToSketch(benchmark::State& state) {
  const auto kind = static_cast<CanonicalizerKind>(state.range(0));
  auto ctx = SketchContext::Create(SketchParams{});
  state.SetLabel(std::string(CanonicalizerKindName(kind)) + " " +
                 std::string(SimdLevelName((*ctx)->simd_level())));
  Pages();
  for (auto _ : state) {
    for (const std::string& page : Pages().pages) {
      benchmark::DoNotOptimize(SketchPage(**ctx, page, "text/html", kind));
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * Pages().bytes));
  state.counters["pages/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * Pages().pages.size()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_HtmlToSketch)
    ->Arg(static_cast<int>(CanonicalizerKind::kGumbo))
    ->Arg(static_cast<int>(CanonicalizerKind::kStreaming))
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace shingled::dedup

BENCHMARK_MAIN();
