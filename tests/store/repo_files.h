// A generated document repository with known duplication, for the tests of the repository
// reports (paper 003): files of random words, with
//   - two identical-content sets: "copy3" in 3 folders, "copy2" in 2;
//   - a near-identical pair: pair/a.txt and pair/b.txt (6,000 bytes, one passage replaced);
//   - a containment: contains/long.txt holds contains/short.txt (4,000 bytes) and 1,800 more;
//   - a group of three: group/1.txt, 2.txt, 3.txt, each a 6,000-byte base with its own passage
//     replaced, at three places;
//   - five unrelated files, unique/N.txt.
// Deterministic: the same files everywhere (a fixed seed).
#ifndef SHINGLED_TESTS_STORE_REPO_FILES_H_
#define SHINGLED_TESTS_STORE_REPO_FILES_H_

#include <random>
#include <string>
#include <vector>

#include "tests/store/chunk_text.h"

namespace shingled::store::testing {

struct RepoFile {
  std::string path;  // relative, "/"-separated
  std::string text;
};

// `text` with the `n` bytes from `at` replaced by fresh random words.
inline std::string ReplacePassage(std::mt19937_64& rng, std::string text, size_t at, size_t n) {
  return text.replace(at, n, RandomText(rng, n));
}

inline std::vector<RepoFile> RepoFiles() {
  std::mt19937_64 rng(0x32e9);
  std::vector<RepoFile> files;
  const std::string copy3 = RandomText(rng, 3000);
  for (const char* dir : {"a", "b", "c"}) files.push_back({std::string(dir) + "/copy3.txt", copy3});
  const std::string copy2 = RandomText(rng, 2500);
  for (const char* dir : {"a", "b"}) files.push_back({std::string(dir) + "/copy2.txt", copy2});
  const std::string pair = RandomText(rng, 6000);
  files.push_back({"pair/a.txt", pair});
  files.push_back({"pair/b.txt", ReplacePassage(rng, pair, 2800, 300)});
  const std::string inner = RandomText(rng, 4000);
  files.push_back({"contains/short.txt", inner});
  files.push_back({"contains/long.txt", inner + " " + RandomText(rng, 1800)});
  const std::string base = RandomText(rng, 6000);
  files.push_back({"group/1.txt", ReplacePassage(rng, base, 800, 300)});
  files.push_back({"group/2.txt", ReplacePassage(rng, base, 2900, 300)});
  files.push_back({"group/3.txt", ReplacePassage(rng, base, 5000, 300)});
  for (int i = 1; i <= 5; ++i) {
    files.push_back({"unique/" + std::to_string(i) + ".txt", RandomText(rng, 3000 + 400 * i)});
  }
  return files;
}

}  // namespace shingled::store::testing

#endif  // SHINGLED_TESTS_STORE_REPO_FILES_H_
