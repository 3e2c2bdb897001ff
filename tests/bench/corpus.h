// The benchmark corpus: real HTML pages built by scripts/make-corpus.sh, loaded into memory once.
#ifndef SHINGLED_TESTS_BENCH_CORPUS_H_
#define SHINGLED_TESTS_BENCH_CORPUS_H_

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace shingled::bench {

struct Corpus {
  std::vector<std::string> pages;
  size_t bytes = 0;
};

// Loads every file of $SHINGLED_CORPUS (default: corpus/ in the working directory or the
// repository root). Exits with a message when there is none: a benchmark without its corpus
// would measure nothing worth quoting.
inline const Corpus& LoadCorpus() {
  static const Corpus corpus = [] {
    Corpus c;
    std::vector<std::filesystem::path> candidates;
    if (const char* env = std::getenv("SHINGLED_CORPUS")) candidates.emplace_back(env);
    candidates.emplace_back("corpus");
    candidates.emplace_back(std::filesystem::path(SHINGLED_SOURCE_DIR) / "corpus");
    for (const auto& dir : candidates) {
      std::error_code ec;
      if (!std::filesystem::is_directory(dir, ec)) continue;
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        c.bytes += ss.str().size();
        c.pages.push_back(ss.str());
      }
      if (!c.pages.empty()) {
        std::fprintf(stderr, "corpus: %zu pages, %.1f MB from %s\n", c.pages.size(),
                     static_cast<double>(c.bytes) / 1e6, dir.c_str());
        return c;
      }
    }
    std::fprintf(stderr,
                 "no corpus: run scripts/make-corpus.sh (after scripts/install-deps.sh --corpus) "
                 "or set SHINGLED_CORPUS to a directory of HTML files\n");
    std::exit(1);
  }();
  return corpus;
}

}  // namespace shingled::bench

#endif  // SHINGLED_TESTS_BENCH_CORPUS_H_
