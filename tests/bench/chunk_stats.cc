// Chunk statistics on real text, to choose the default chunking parameters: for each
// setting, the average chunk and chunks per page on the canonical text of the benchmark corpus,
// and how often a run of real text shared by two pages holds a whole shared chunk.
//
//   build/tests/bench/chunk_stats [MIN/MAX/D/D' ...]     (default: 460/2800/540/270
//   230/1400/270/135)
//
// A trial takes a run of L bytes (cut at word boundaries) from one page's canonical text and
// inserts it at a random word boundary into two other pages; it counts the run as found when the
// two pages then share a chunk they did not share before, and adds the bytes of those chunks
// (at most L) as the share of the run recovered. Pages of at least 8 KB, 1,000 trials a length,
// fixed seed. A plain program: it measures no time.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "dedup/canonicalize.h"
#include "dedup/chunker.h"
#include "dedup/sketch.h"
#include "dedup/tokenizer.h"
#include "tests/bench/corpus.h"

namespace shingled::dedup {
namespace {

bool ParseSetting(const char* text, ChunkParams* p) {
  unsigned min = 0, max = 0, d = 0, backup = 0;
  if (std::sscanf(text, "%u/%u/%u/%u", &min, &max, &d, &backup) != 4) return false;
  *p = ChunkParams{ChunkInput::kCanonicalText, min, max, d, backup};
  return p->Validate().ok();
}

std::unordered_set<uint64_t> Hashes(const ChunkParams& p, const std::string& text) {
  std::unordered_set<uint64_t> out;
  for (const Chunk& c : ChunkBytes(p, text)) out.insert(c.hash);
  return out;
}

int Main(int argc, char** argv) {
  std::vector<ChunkParams> settings;
  for (int i = 1; i < argc; ++i) {
    ChunkParams p;
    if (!ParseSetting(argv[i], &p)) {
      std::fprintf(stderr, "chunk_stats: \"%s\" is not a valid MIN/MAX/D/D' setting\n", argv[i]);
      return 2;
    }
    settings.push_back(p);
  }
  if (settings.empty()) {
    settings.push_back({ChunkInput::kCanonicalText, 460, 2800, 540, 270});
    settings.push_back(SketchParams{}.chunking);
  }
  std::vector<std::string> texts;
  size_t total = 0;
  for (const std::string& page : bench::LoadCorpus().pages) {
    TokenCollector tokens;
    CanonicalizePage(page, "text/html", &tokens);
    std::string text;
    for (const std::string& t : tokens.tokens) text.append(t).append(" ");
    total += text.size();
    if (!text.empty()) texts.push_back(std::move(text));
  }
  std::vector<size_t> sizes;
  for (const std::string& t : texts) sizes.push_back(t.size());
  std::sort(sizes.begin(), sizes.end());
  std::printf("%zu pages with text, %zu bytes of canonical text, median page %zu bytes\n",
              texts.size(), total, sizes[sizes.size() / 2]);
  for (const ChunkParams& p : settings) {
    size_t chunks = 0;
    for (const std::string& t : texts) chunks += ChunkBytes(p, t).size();
    std::printf("%u/%u/%u/%u: %zu chunks, %.0f bytes on average, %.1f chunks per page\n",
                p.min_size, p.max_size, p.main_divisor, p.backup_divisor, chunks,
                static_cast<double>(total) / static_cast<double>(chunks),
                static_cast<double>(chunks) / static_cast<double>(texts.size()));
  }
  std::vector<size_t> big;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].size() >= 8192) big.push_back(i);
  }
  if (big.empty()) {
    std::fprintf(stderr, "chunk_stats: no page has 8 KB of text\n");
    return 1;
  }
  auto word_start = [](const std::string& t, size_t at) {
    while (at > 0 && at < t.size() && t[at - 1] != ' ') ++at;
    return std::min(at, t.size());
  };
  constexpr int kTrials = 1000;
  for (const size_t run : {300, 500, 800, 1200, 2000, 3000}) {
    std::printf("shared run of %4zu bytes:", run);
    for (const ChunkParams& p : settings) {
      std::mt19937_64 rng(1);  // the same trials for every setting
      int found = 0;
      double recovered = 0;
      for (int trial = 0; trial < kTrials; ++trial) {
        auto pick = [&]() -> const std::string& { return texts[big[rng() % big.size()]]; };
        const std::string& source = pick();
        const std::string shared =
            source.substr(word_start(source, rng() % (source.size() - run)), run);
        const std::string& a0 = pick();
        const std::string& b0 = pick();
        const size_t at_a = word_start(a0, rng() % a0.size());
        const size_t at_b = word_start(b0, rng() % b0.size());
        const std::string a = a0.substr(0, at_a) + shared + a0.substr(at_a);
        const std::string b = b0.substr(0, at_b) + shared + b0.substr(at_b);
        std::unordered_set<uint64_t> in_a = Hashes(p, a);
        std::unordered_set<uint64_t> before = Hashes(p, a0);
        before.merge(Hashes(p, b0));
        size_t bytes = 0;
        for (const Chunk& c : ChunkBytes(p, b)) {
          if (in_a.erase(c.hash) > 0 && before.count(c.hash) == 0) bytes += c.length;
        }
        found += bytes > 0;
        recovered += std::min(1.0, static_cast<double>(bytes) / static_cast<double>(run));
      }
      std::printf("  D=%u found %.3f, recovered %.3f", p.main_divisor,
                  static_cast<double>(found) / kTrials, recovered / kTrials);
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace
}  // namespace shingled::dedup

int main(int argc, char** argv) { return shingled::dedup::Main(argc, argv); }
