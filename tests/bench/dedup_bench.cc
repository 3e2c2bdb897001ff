// Throughput of the sketching engine on real HTML: canonicalization alone, tokens to
// shingles, the whole sketch from canonical text, and HTML to sketch, each in MB/s of its input.
// Run through scripts/bench.sh, which repeats each and reports medians.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "dedup/canonicalize.h"
#include "dedup/chunker.h"
#include "dedup/internal/minhash.h"
#include "dedup/internal/splitmix.h"
#include "dedup/page.h"
#include "dedup/rabin.h"
#include "dedup/sketch.h"
#include "dedup/streaming_canonicalizer.h"
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

// The minhash kernels alone, on pages of 2,048 random shingles (about the corpus's average): the leads
// of every shingle, and the tails of the candidates, most of them in a page's first few hundred.
void BM_MinhashKernel(benchmark::State& state) {
  constexpr size_t kPage = 2048;
  const internal::MinhashTables tables(SketchParams{}.num_minhashes(), SketchParams{}.seed);
  internal::MinhashKernel kernel = nullptr;
  switch (state.range(0)) {
    case 0: kernel = &internal::MinhashScalar; break;
    case 1: kernel = CpuSupports(SimdLevel::kAvx2) ? &internal::MinhashAvx2 : nullptr; break;
    case 2: kernel = CpuSupports(SimdLevel::kAvx512) ? &internal::MinhashAvx512 : nullptr; break;
    default: kernel = internal::CpuHasAvx512Gfni() ? &internal::MinhashAvx512Gfni : nullptr; break;
  }
  static constexpr const char* kNames[] = {"scalar", "avx2", "avx512", "avx512+gfni"};
  if (kernel == nullptr) {
    state.SkipWithError("this CPU lacks the kernel's instructions");
    return;
  }
  state.SetLabel(kNames[state.range(0)]);
  std::vector<uint64_t> ys(kPage * 16);
  uint64_t rng = 42;
  for (uint64_t& y : ys) y = internal::SplitMix64(&rng);
  internal::MinhashState minima;
  for (auto _ : state) {
    for (size_t page = 0; page < ys.size(); page += kPage) {
      minima.Reset();
      // In batches of 128, as the Sketcher calls it.
      for (size_t k = 0; k < kPage; k += 128) kernel(tables, &ys[page + k], 128, &minima);
      benchmark::DoNotOptimize(minima.tail[0]);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * ys.size()));
}
BENCHMARK(BM_MinhashKernel)->DenseRange(0, 3);

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

// --- Content-defined chunks ---

// The TTTD chunker alone on the corpus's canonical text, with the default parameters.
void BM_ChunkCanonicalText(benchmark::State& state) {
  const ChunkParams params = SketchParams{}.chunking;
  Chunker chunker(params);
  std::vector<Chunk> chunks;
  Texts();  // prepared before the clock starts
  for (auto _ : state) {
    for (const std::string& text : Texts()) {
      chunks.clear();
      chunker.Feed(text, &chunks);
      chunker.Finish(&chunks);
      benchmark::DoNotOptimize(chunks.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * TotalBytes(Texts())));
  state.counters["chunks/page"] = static_cast<double>(chunks.size());
}
BENCHMARK(BM_ChunkCanonicalText)->Unit(benchmark::kMillisecond);

// HTML to sketch with the streaming canonicalizer, without chunks (0), with chunks of the
// canonical text (1, the default) and of the raw bytes (2). Run with repetitions and
// --benchmark_enable_random_interleaving=true so that the three alternate.
void BM_HtmlToSketchChunks(benchmark::State& state) {
  SketchParams params;
  params.chunking.input = static_cast<ChunkInput>(state.range(0));
  auto ctx = SketchContext::Create(params);
  static constexpr const char* kNames[] = {"no chunks", "chunks of canonical text",
                                           "chunks of raw bytes"};
  state.SetLabel(kNames[state.range(0)]);
  Pages();
  for (auto _ : state) {
    for (const std::string& page : Pages().pages) {
      benchmark::DoNotOptimize(SketchPage(**ctx, page, "text/html"));
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * Pages().bytes));
}
BENCHMARK(BM_HtmlToSketchChunks)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace shingled::dedup

BENCHMARK_MAIN();
