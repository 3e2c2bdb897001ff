// A mirror network: the cost of a page as its near-copies pile up. `mirror_bench [PAGES [ROUNDS]]`
// makes PAGES (default 2,000) synthetic web pages of varied length (300 to 2,400 words from a
// vocabulary of 20,000, a shared header and footer of 60 words as a site template, text/html
// through dedup::SketchPage, chunks on with the default chunking), then puts them ROUNDS times
// (default 8) into one new store under /tmp, each round under a new host with three words changed
// in every page, in 1,000-page non-durable commits with the default StoreOptions (chunks,
// templates, verification sample, max_candidates, max_matches; SHINGLED_BENCH_MAX_MATCHES sets
// another max_matches). In round r every page has r - 1 earlier near-copies. Prints per round the
// CPU microseconds of Store::Apply per page (sketching is not timed), the verdicts, and the
// writer's work per page (LmdbStore::WriterWorkForTesting: candidates scored, chunk records and
// postings read, URL reads); then last/first of the CPU per page. A plain program: it needs the
// store and dedup only. Under callgrind (`valgrind --tool=callgrind
// --toggle-collect='shingled::store::LmdbStore::Apply*' mirror_bench`), it dumps the counts at
// the end of each round, so that the instructions of Store::Apply per round are counted, which
// a loaded machine does not move as it moves CPU time.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define SHINGLED_DUMP_ROUND(label) CALLGRIND_DUMP_STATS_AT(label)
#else
#define SHINGLED_DUMP_ROUND(label)
#endif

#include "dedup/sketch.h"
#include "store/lmdb_store.h"
#include "store/store.h"

using namespace shingled;
using namespace shingled::store;

namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A word of 2 to 4 syllables, the same for the same id.
std::string Word(uint64_t id) {
  static const char* const kSyllables[] = {"ka", "lo", "mi", "ne", "tu", "ra", "si", "po",
                                           "de", "ga", "vi", "ze", "bo", "fu", "ha", "ju"};
  uint64_t h = Mix(id * 7919 + 13);
  std::string w;
  const int n = 2 + static_cast<int>(h % 3);
  for (int i = 0; i < n; ++i) {
    h >>= 4;
    w += kSyllables[h & 15];
  }
  return w;
}

// Page `page`'s words as first published (round 1), then with three words changed per later round.
std::vector<uint64_t> BaseWords(uint64_t page) {
  const uint64_t n = 300 + Mix(page) % 2101;
  std::vector<uint64_t> words(n);
  for (uint64_t i = 0; i < n; ++i) words[i] = Mix(page * 1000003 + i) % 20000;
  return words;
}

std::string Html(const std::vector<uint64_t>& words, const std::string& host) {
  std::string s = "<html><head><title>" + Word(words[0]) + " " + Word(words[1]) +
                  "</title></head><body><div class=nav>";
  // The site template: the same on every page of every mirror.
  for (uint64_t i = 0; i < 40; ++i) s += Word(100000 + i) + " ";
  s += "</div><p>";
  for (size_t i = 0; i < words.size(); ++i) {
    s += Word(words[i]);
    s += (i % 60 == 59) ? "</p><p>" : " ";
  }
  s += "</p><div class=footer>";
  for (uint64_t i = 0; i < 20; ++i) s += Word(200000 + i) + " ";
  s += " mirrored by " + host + "</div></body></html>";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t pages = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 8;
  if (pages == 0 || pages % 1000 != 0 || rounds < 2) {
    std::fprintf(stderr, "usage: mirror_bench [PAGES (a multiple of 1,000) [ROUNDS >= 2]]\n");
    return 2;
  }
  dedup::SketchParams params;
  auto context = dedup::SketchContext::Create(params);
  if (!context.ok()) {
    std::fprintf(stderr, "%s\n", context.status().ToString().c_str());
    return 1;
  }
  const std::string dir =
      (std::filesystem::temp_directory_path() / "shingled-mirror-bench").string();
  std::filesystem::remove_all(dir);
  StoreOptions o;
  o.durable = false;
  o.initial_map_size = uint64_t{1} << 30;
  // SHINGLED_BENCH_MAX_MATCHES: another StoreOptions::max_matches than the default.
  if (const char* env = std::getenv("SHINGLED_BENCH_MAX_MATCHES")) {
    o.max_matches = static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
  }
  auto opened = Store::Open(dir, o, **context);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<Store> store = std::move(opened).value();
  auto* lmdb = dynamic_cast<LmdbStore*>(store.get());
  const SweepId sweep = store->OpenSweep("mirrors", 0)->id;
  std::vector<std::vector<uint64_t>> words(pages);
  for (uint64_t i = 0; i < pages; ++i) words[i] = BaseWords(i);
  double first = 0, last = 0;
  for (int r = 1; r <= rounds; ++r) {
    const std::string host = "mirror" + std::to_string(r) + ".example";
    if (r > 1) {
      for (uint64_t i = 0; i < pages; ++i) {
        for (int c = 0; c < 3; ++c) {
          const uint64_t h = Mix(i * 131 + static_cast<uint64_t>(r) * 7 + c);
          words[i][h % words[i].size()] = 4000 + h % 100000;
        }
      }
    }
    double cpu = 0;
    uint64_t verdicts[8] = {};
    uint64_t matches = 0;
    const WriterWork before = lmdb != nullptr ? lmdb->WriterWorkForTesting() : WriterWork{};
    for (uint64_t j = 0; j < pages; j += 1000) {
      std::vector<PageInput> batch;
      for (uint64_t i = j; i < j + 1000; ++i) {
        PageInput pi;
        pi.url = "http://" + host + "/page/" + std::to_string(i) + ".html";
        pi.sweep = sweep;
        pi.date = r;
        pi.sketch = dedup::SketchPage(**context, Html(words[i], host), "text/html");
        batch.push_back(std::move(pi));
      }
      const std::clock_t c0 = std::clock();
      auto applied = store->Apply(batch);
      cpu += static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
      if (!applied.ok()) {
        std::fprintf(stderr, "%s\n", applied.status().ToString().c_str());
        return 1;
      }
      for (const PageResult& pr : *applied) {
        ++verdicts[static_cast<int>(pr.verdict) & 7];
        matches += pr.matches.size();
      }
    }
    SHINGLED_DUMP_ROUND(("round " + std::to_string(r)).c_str());
    const WriterWork after = lmdb != nullptr ? lmdb->WriterWorkForTesting() : WriterWork{};
    const double us = cpu / static_cast<double>(pages) * 1e6;
    if (r == 1) first = us;
    last = us;
    const double n = static_cast<double>(pages);
    std::printf(
        "round=%d apply_cpu_us/page=%.1f new=%" PRIu64 " near_dup=%" PRIu64
        " matches/page=%.2f "
        "scored/page=%.1f chunk_records/page=%.1f chunk_postings/page=%.1f url_reads/page=%.1f\n",
        r, us, verdicts[static_cast<int>(Verdict::kNew)],
        verdicts[static_cast<int>(Verdict::kNearDuplicate)], static_cast<double>(matches) / n,
        static_cast<double>(after.candidates_scored - before.candidates_scored) / n,
        static_cast<double>(after.chunk_records_read - before.chunk_records_read) / n,
        static_cast<double>(after.chunk_postings_read - before.chunk_postings_read) / n,
        static_cast<double>(after.url_reads - before.url_reads) / n);
    std::fflush(stdout);
  }
  std::printf("last/first apply_cpu_us/page=%.2f\n", last / first);
  store.reset();
  std::filesystem::remove_all(dir);
}
