// Differential test: the streaming canonicalizer against the Gumbo reference, on a committed set
// of tricky pages (always) and on the real-HTML corpus that scripts/make-corpus.sh builds
// (skipped when it is absent). The shingle sets are computed here from the token vectors with a
// plain hash, so that this test does not depend on the sketcher it feeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "dedup/streaming_canonicalizer.h"

namespace shingled::dedup {
namespace {

namespace fs = std::filesystem;
using Tokens = std::vector<std::string>;

constexpr size_t kShingleWidth = 8;  // w = 8, the project default (docs/METHOD.md)

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<fs::path> HtmlFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Tokens Canonicalize(CanonicalizerKind kind, std::string_view page) {
  TokenCollector collector;
  CanonicalizePageWith(kind, page, "text/html", &collector);
  return collector.tokens;
}

// Option B: the set of shingles. A page shorter than w tokens has one shingle, all of it.
std::unordered_set<uint64_t> Shingles(const Tokens& tokens) {
  std::unordered_set<uint64_t> shingles;
  if (tokens.empty()) return shingles;
  const size_t width = std::min(kShingleWidth, tokens.size());
  for (size_t i = 0; i + width <= tokens.size(); ++i) {
    uint64_t h = 14695981039346656037ull;  // FNV-1a 64
    for (size_t j = i; j < i + width; ++j) {
      for (unsigned char c : tokens[j]) h = (h ^ c) * 1099511628211ull;
      h = (h ^ 0xFF) * 1099511628211ull;  // 0xFF never occurs in UTF-8: a token separator
    }
    shingles.insert(h);
  }
  return shingles;
}

double Resemblance(const Tokens& a, const Tokens& b) {
  const std::unordered_set<uint64_t> sa = Shingles(a);
  const std::unordered_set<uint64_t> sb = Shingles(b);
  if (sa.empty() && sb.empty()) return 1.0;
  size_t common = 0;
  for (uint64_t s : sa) common += sb.count(s);
  return static_cast<double>(common) / static_cast<double>(sa.size() + sb.size() - common);
}

// "at token 17: streaming [a b c] gumbo [a x c]", for failure messages.
std::string FirstDifference(const Tokens& a, const Tokens& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  auto context = [i](const Tokens& t) {
    std::string s;
    for (size_t k = i >= 3 ? i - 3 : 0; k < std::min(t.size(), i + 5); ++k) s += " " + t[k];
    return s;
  };
  return "at token " + std::to_string(i) + " of " + std::to_string(a.size()) + "/" +
         std::to_string(b.size()) + ": streaming [" + context(a) + " ] gumbo [" + context(b) + " ]";
}

TEST(CanonicalizerDiffTest, TrickyPagesGiveIdenticalTokens) {
  // canonicalizer/: pages written for this test; pages/: the Gumbo canonicalizer's own samples
  // (charsets, BOMs, broken markup).
  std::vector<fs::path> files = HtmlFiles(fs::path(SHINGLED_TEST_DATA_DIR) / "canonicalizer");
  ASSERT_GE(files.size(), 8u);
  for (const fs::path& file : HtmlFiles(fs::path(SHINGLED_TEST_DATA_DIR) / "pages")) {
    // Foster parenting ("<table><tr>text") moves text in the tree; a known difference
    // (dedup/CANONICALIZER_DIFFERENCES.md).
    if (file.filename() == "broken.html") continue;
    files.push_back(file);
  }
  for (const fs::path& file : files) {
    const std::string page = ReadFile(file);
    const Tokens streaming = Canonicalize(CanonicalizerKind::kStreaming, page);
    const Tokens gumbo = Canonicalize(CanonicalizerKind::kGumbo, page);
    EXPECT_EQ(streaming, gumbo) << file << " " << FirstDifference(streaming, gumbo);
  }
}

// Every kind of difference in dedup/CANONICALIZER_DIFFERENCES.md, pinned on both sides: when
// either canonicalizer changes, this fails and the document must be brought up to date.
struct KnownDifference {
  std::string_view html;
  Tokens streaming;
  Tokens gumbo;
};

TEST(CanonicalizerDiffTest, KnownDifferences) {
  const KnownDifference cases[] = {
      // 1. Foster parenting.
      {"<table><tr><td>a</td>b</tr></table>c", {"a", "b", "c"}, {"b", "a", "c"}},
      {"x<table>y<td>z</table>", {"x", "y", "z"}, {"xy", "z"}},
      {"<table><caption>x</caption>y</table>", {"x", "y"}, {"y", "x"}},
      // 2. <noscript> closed by an enclosing element's end tag.
      {"<p><noscript>foo</p>bar</noscript>baz", {"baz"}, {"barbaz"}},
      // 3. HTML integration points in SVG.
      {"<svg><desc><script>if(a<b)x</script>y</desc></svg>", {}, {"y"}},
      // 4. <font> with attributes leaves SVG.
      {"<svg>a<font color=red>b</font>c</svg>", {"a", "b", "c"}, {"a", "bc"}},
      // 5. End tag after an implied end.
      {"<ul><li>a<li>b</ul>c</li>d", {"a", "b", "c", "d"}, {"a", "b", "cd"}},
      // 6. Gumbo's </form>.
      {"<p>a<form>b</form>c", {"a", "b", "c"}, {"a", "bc"}},
      // 7. <isindex>.
      {"a<isindex>b",
       {"a", "b"},
       {"a", "this", "is", "a", "searchable", "index", "enter", "search", "keywords", "b"}},
  };
  for (const KnownDifference& c : cases) {
    EXPECT_EQ(Canonicalize(CanonicalizerKind::kStreaming, c.html), c.streaming) << c.html;
    EXPECT_EQ(Canonicalize(CanonicalizerKind::kGumbo, c.html), c.gumbo) << c.html;
  }
}

fs::path CorpusDir() {
  if (const char* env = std::getenv("SHINGLED_CORPUS")) return env;
  return SHINGLED_CORPUS_DIR;
}

TEST(CanonicalizerDiffTest, RealCorpus) {
  const fs::path dir = CorpusDir();
  if (!fs::is_directory(dir)) {
    GTEST_SKIP() << "no corpus at " << dir
                 << ": run scripts/make-corpus.sh (or set SHINGLED_CORPUS)";
  }
  const std::vector<fs::path> files = HtmlFiles(dir);
  ASSERT_FALSE(files.empty()) << dir;

  size_t identical = 0;
  double worst = 1.0;
  fs::path worst_page;
  for (const fs::path& file : files) {
    const std::string page = ReadFile(file);
    const Tokens streaming = Canonicalize(CanonicalizerKind::kStreaming, page);
    const Tokens gumbo = Canonicalize(CanonicalizerKind::kGumbo, page);
    if (streaming == gumbo) {
      ++identical;
      continue;
    }
    const double resemblance = Resemblance(streaming, gumbo);
    if (resemblance < worst) {
      worst = resemblance;
      worst_page = file;
    }
    // Every page at least 0.98, so that a switch of canonicalizer never moves a page
    // out of its cluster (fungibility needs far more than 0.98 to change: P(0.98) ~ 0.999).
    EXPECT_GE(resemblance, 0.98) << file << " " << FirstDifference(streaming, gumbo);
    std::cout << "[ differs  ] " << file.filename().string() << " resemblance " << resemblance
              << " " << FirstDifference(streaming, gumbo) << "\n";
  }
  const double share = static_cast<double>(identical) / static_cast<double>(files.size());
  std::cout << "[ summary  ] " << identical << " of " << files.size() << " pages identical ("
            << 100.0 * share << "%), worst resemblance " << worst << " "
            << worst_page.filename().string() << "\n";
  // Identical token streams on at least 99% of the pages.
  EXPECT_GE(share, 0.99);
}

TEST(CanonicalizerDiffTest, RealCorpusChunkedLikeANetwork) {
  const fs::path dir = CorpusDir();
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no corpus at " << dir;
  size_t piece = 1;
  for (const fs::path& file : HtmlFiles(dir)) {
    const std::string page = ReadFile(file);
    TokenCollector chunked;
    StreamingCanonicalizer canonicalizer("text/html", &chunked);
    // Pieces of varying sizes, as a network delivers them: 1, 8, 57, ... 1460, 3000, 1, ...
    for (size_t i = 0; i < page.size();) {
      canonicalizer.Feed(std::string_view(page).substr(i, piece));
      i += piece;
      piece = piece * 7 % 3001 + 1;
    }
    canonicalizer.Finish();
    ASSERT_EQ(chunked.tokens, Canonicalize(CanonicalizerKind::kStreaming, page)) << file;
  }
}

}  // namespace
}  // namespace shingled::dedup
