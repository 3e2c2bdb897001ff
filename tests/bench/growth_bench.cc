// The write path as the store grows: `growth_bench [PAGES [DIR]]` puts PAGES (default 1,000,000;
// at most 10,000,000) synthetic web pages into one new LMDB store in DIR (default a folder under
// /tmp, removed at the end) with the default StoreOptions (durable commits, chunks, templates,
// the verification sample, max_candidates, max_matches), in batches of 500 through
// Store::Apply, and reports at 100k, 300k, 1M, 3M and 10M pages (those up to PAGES):
//   - the writer's CPU per page and pages/s of Store::Apply over the last tenth of the pages
//     before the mark (at most 50,000), with the writer's work per page
//     (LmdbStore::WriterWorkForTesting);
//   - bytes of the file per document and per page (StoreStats);
//   - SimilarToSketch latency p50 and p99 over 1,000 queries, sketches of pages put earlier.
// Then the ratios of the last mark to the first.
//
// The pages are web-like. Words follow a Zipf-like law over 50,000 ids. A page has 150 to ~6,000
// words, its site's template (a 30-word header and a 15-word footer; sites hold ~300 pages), and
// one time in twelve one of 20 boilerplate paragraphs (a licence). 35% of the pages are
// near-copies of an earlier page on another site (mirrors, syndication): families of 2 to 10
// pages, and some of 11 to 500, published over the whole run; a tenth of the copies are exact,
// the others change 2 to 13 words. A second thread makes and sketches the pages (not timed), so
// the writer is timed alone. A plain program: it needs the store and dedup only.
#include <time.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dedup/sketch.h"
#include "store/lmdb_store.h"
#include "store/store.h"
#include "tests/bench/bench_util.h"

using namespace shingled;
using namespace shingled::store;

namespace {

constexpr uint64_t kBatch = 500;
constexpr uint64_t kVocabulary = 50000;
constexpr size_t kQueries = 1000;

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double Unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A word of 2 to 4 syllables, the same for the same id.
void AppendWord(uint64_t id, std::string* s) {
  static const char* const kSyllables[] = {"ka", "lo", "mi", "ne", "tu", "ra", "si", "po",
                                           "de", "ga", "vi", "ze", "bo", "fu", "ha", "ju"};
  uint64_t h = Mix(id * 7919 + 13);
  const int n = 2 + static_cast<int>(h % 3);
  for (int i = 0; i < n; ++i) {
    h >>= 4;
    *s += kSyllables[h & 15];
  }
  *s += ' ';
}

// A family's original text: its length and words follow from its id.
std::vector<uint64_t> FamilyWords(uint64_t family) {
  const uint64_t h = Mix(family * 0x51ed27);
  uint64_t n = 150 + h % 1000;
  if ((h >> 20) % 8 == 0) n += (h >> 24) % 5000;
  std::vector<uint64_t> words(n);
  for (uint64_t i = 0; i < n; ++i) {
    // Zipf-like: density ~ 1/x over [1, kVocabulary).
    const double u = Unit(Mix(family * 1000003 + i));
    words[i] = static_cast<uint64_t>(std::exp(u * std::log(static_cast<double>(kVocabulary))));
  }
  return words;
}

// Member `member` of `family`: the original (0), an exact copy (a tenth), or 2 to 13 words
// changed.
std::vector<uint64_t> MemberWords(uint64_t family, uint64_t member) {
  std::vector<uint64_t> words = FamilyWords(family);
  const uint64_t h = Mix(family * 31 + member * 0x9e37);
  if (member == 0 || h % 10 == 0) return words;
  const uint64_t changes = 2 + (h >> 8) % 12;
  for (uint64_t c = 0; c < changes; ++c) {
    const uint64_t g = Mix(h + c);
    words[g % words.size()] = kVocabulary + (g >> 32) % 100000;
  }
  return words;
}

std::string Html(const std::vector<uint64_t>& words, uint64_t site, uint64_t licence) {
  std::string s = "<html><head><title>";
  AppendWord(words[0], &s);
  AppendWord(words[1], &s);
  s += "</title></head><body><div class=nav>";
  for (uint64_t i = 0; i < 30; ++i) AppendWord(1000000 + site * 64 + i, &s);
  s += "</div><p>";
  for (size_t i = 0; i < words.size(); ++i) {
    AppendWord(words[i], &s);
    if (i % 60 == 59) s += "</p><p>";
  }
  s += "</p>";
  if (licence != 0) {
    s += "<p class=licence>";
    for (uint64_t i = 0; i < 120; ++i) AppendWord(2000000 + licence * 128 + i, &s);
    s += "</p>";
  }
  s += "<div class=footer>";
  for (uint64_t i = 0; i < 15; ++i) AppendWord(1000000 + site * 64 + 32 + i, &s);
  s += "</div></body></html>";
  return s;
}

// The stream of pages: which family and member page i is, and on which site.
class Corpus {
 public:
  struct Page {
    uint64_t family = 0, member = 0, site = 0;
  };

  Page Next() {
    const uint64_t i = next_++;
    const uint64_t h = Mix(i ^ 0xc0ffee);
    const uint64_t sites = 50 + i / 300;
    // 35% near-copies, three in ten of them from the big families.
    if (Unit(h) < 0.35) {
      std::vector<Family>* pool = (h >> 40) % 10 < 3 && !big_.empty() ? &big_ : &small_;
      if (pool->empty()) pool = &big_;
      if (!pool->empty()) {
        const size_t k = (h >> 16) % pool->size();
        Family& f = (*pool)[k];
        const Page page{f.id, f.emitted++, Mix(f.id * 977 + f.emitted) % sites};
        if (f.emitted == f.size) {
          f = pool->back();
          pool->pop_back();
        }
        return page;
      }
    }
    const uint64_t id = families_++;
    const double u = Unit(Mix(id * 0x2545f491));
    uint64_t size = 1;
    if (u >= 0.98) {
      size = 11 + Mix(id) % 490;
    } else if (u >= 0.6) {
      size = 2 + Mix(id) % 9;
    }
    std::vector<Family>* pool = size > 10 ? &big_ : &small_;
    const size_t capacity = size > 10 ? 200 : 20000;
    if (size > 1 && pool->size() < capacity) pool->push_back(Family{id, size, 1});
    return Page{id, 0, Mix(id * 977) % sites};
  }

 private:
  struct Family {
    uint64_t id = 0, size = 0, emitted = 0;
  };
  uint64_t next_ = 0, families_ = 0;
  std::vector<Family> small_, big_;
};

struct Batch {
  std::vector<PageInput> pages;
};

// Makes and sketches the batches on its own thread, a few ahead of the writer; keeps a sample of
// the sketches for the lookups.
class Producer {
 public:
  Producer(const dedup::SketchContext& context, uint64_t pages, SweepId sweep)
      : context_(context), pages_(pages), sweep_(sweep), thread_([this] { Run(); }) {}
  ~Producer() { thread_.join(); }

  Batch Take() {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [this] { return !queue_.empty(); });
    Batch b = std::move(queue_.front());
    queue_.pop_front();
    room_.notify_one();
    return b;
  }

  // Up to kQueries sketches of pages made so far, spread over the whole run (a reservoir).
  std::vector<dedup::Sketch> Sample() {
    std::lock_guard lock(mu_);
    return sample_;
  }

 private:
  void Run() {
    Corpus corpus;
    uint64_t seen = 0;
    for (uint64_t start = 0; start < pages_; start += kBatch) {
      Batch b;
      for (uint64_t i = start; i < std::min(pages_, start + kBatch); ++i) {
        const Corpus::Page p = corpus.Next();
        const uint64_t h = Mix(i * 0x7f4a7c15);
        const uint64_t licence = h % 12 == 0 ? 1 + (h >> 8) % 20 : 0;
        PageInput in;
        in.url = "http://s" + std::to_string(p.site) + ".example/" + std::to_string(p.family) +
                 "/" + std::to_string(p.member) + ".html";
        in.sweep = sweep_;
        in.date = static_cast<int64_t>(i / 10000);
        in.sketch = dedup::SketchPage(context_, Html(MemberWords(p.family, p.member), p.site,
                                                     licence),
                                      "text/html");
        if (i % 97 == 0) {
          std::lock_guard lock(mu_);
          ++seen;
          if (sample_.size() < kQueries) {
            sample_.push_back(in.sketch);
          } else if (const uint64_t k = Mix(seen) % seen; k < kQueries) {
            sample_[k] = in.sketch;
          }
        }
        b.pages.push_back(std::move(in));
      }
      std::unique_lock lock(mu_);
      room_.wait(lock, [this] { return queue_.size() < 4; });
      queue_.push_back(std::move(b));
      ready_.notify_one();
    }
  }

  const dedup::SketchContext& context_;
  const uint64_t pages_;
  const SweepId sweep_;
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<Batch> queue_;
  std::vector<dedup::Sketch> sample_;
  std::thread thread_;
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

struct Mark {
  uint64_t pages = 0;
  double cpu_us = 0, pages_per_s = 0, bytes_per_doc = 0, p50_us = 0, p99_us = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const uint64_t pages = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  if (pages < 100000 || pages > 10000000 || pages % kBatch != 0) {
    std::fprintf(stderr,
                 "usage: growth_bench [PAGES (100,000 to 10,000,000, a multiple of 500) [DIR]]\n");
    return 2;
  }
  const bool own_dir = argc <= 2;
  const std::string dir =
      own_dir ? (std::filesystem::temp_directory_path() / "shingled-growth-bench").string()
              : std::string(argv[2]);
  if (own_dir) std::filesystem::remove_all(dir);
  auto context = bench::Must(dedup::SketchContext::Create(dedup::SketchParams{}), "sketch params");
  std::unique_ptr<Store> store = bench::Must(Store::Open(dir, StoreOptions{}, *context), "open");
  auto* lmdb = dynamic_cast<LmdbStore*>(store.get());
  const SweepId sweep = bench::Must(store->OpenSweep("growth", 0), "open sweep").id;

  std::vector<uint64_t> marks;
  for (uint64_t m : {100000ull, 300000ull, 1000000ull, 3000000ull, 10000000ull}) {
    if (m <= pages) marks.push_back(m);
  }
  if (marks.back() != pages) marks.push_back(pages);

  Producer producer(*context, pages, sweep);
  std::vector<Mark> results;
  // Per batch: the writer's CPU and wall seconds, and its work counters after it.
  struct Step {
    double cpu = 0, wall = 0;
    WriterWork work;
  };
  std::vector<Step> steps;
  uint64_t verdicts[8] = {}, matches = 0, left_out = 0, in_cluster = 0;
  uint64_t done = 0;
  for (uint64_t mark : marks) {
    while (done < mark) {
      Batch b = producer.Take();
      const auto t0 = bench::Clock::now();
      const double c0 = ThreadCpuSeconds();
      std::vector<PageResult> applied = bench::Must(store->Apply(b.pages), "apply");
      steps.push_back(Step{ThreadCpuSeconds() - c0, bench::Seconds(t0),
                           lmdb != nullptr ? lmdb->WriterWorkForTesting() : WriterWork{}});
      for (const PageResult& r : applied) {
        ++verdicts[static_cast<int>(r.verdict) & 7];
        matches += r.matches.size();
        left_out += r.matches_left_out;
        in_cluster += r.candidates_in_cluster;
      }
      done += b.pages.size();
    }
    // The window: the last tenth of the pages before the mark, at most 50,000.
    const size_t window = std::max<size_t>(1, std::min<uint64_t>(mark / 10, 50000) / kBatch);
    const size_t first = steps.size() - window;
    double cpu = 0, wall = 0;
    for (size_t i = first; i < steps.size(); ++i) {
      cpu += steps[i].cpu;
      wall += steps[i].wall;
    }
    const double n = static_cast<double>(window * kBatch);
    const WriterWork& a = steps[first - (first > 0 ? 1 : 0)].work;
    const WriterWork& z = steps.back().work;

    const StoreStats stats = bench::Must(store->Stats(), "stats");
    std::vector<double> latency;
    for (const dedup::Sketch& s : producer.Sample()) {
      const auto t0 = bench::Clock::now();
      bench::Must(store->SimilarToSketch(s, QueryOptions{}), "similar");
      latency.push_back(bench::Seconds(t0) * 1e6);
    }
    Mark m{mark, cpu / n * 1e6, n / wall,
           static_cast<double>(stats.file_bytes) / static_cast<double>(stats.documents),
           Percentile(latency, 0.5), Percentile(latency, 0.99)};
    results.push_back(m);
    std::printf(
        "pages=%" PRIu64 " documents=%" PRIu64 " clusters=%" PRIu64 " largest_cluster=%" PRIu64
        " | writer: cpu_us/page=%.1f pages/s=%.0f scored/page=%.1f chunk_postings/page=%.1f"
        " url_reads/page=%.1f | bytes/document=%.0f bytes/page=%.0f | similar: p50_us=%.0f"
        " p99_us=%.0f\n",
        mark, stats.documents, stats.clusters, stats.largest_cluster, m.cpu_us, m.pages_per_s,
        static_cast<double>(z.candidates_scored - a.candidates_scored) / n,
        static_cast<double>(z.chunk_postings_read - a.chunk_postings_read) / n,
        static_cast<double>(z.url_reads - a.url_reads) / n, m.bytes_per_doc,
        static_cast<double>(stats.file_bytes) / static_cast<double>(mark), m.p50_us, m.p99_us);
    std::fflush(stdout);
  }
  const double d = static_cast<double>(done);
  std::printf(
      "verdicts: new=%.3f duplicate=%.3f near_duplicate=%.3f | matches/page=%.2f"
      " matches_left_out/page=%.2f candidates_in_cluster/page=%.2f\n",
      static_cast<double>(verdicts[static_cast<int>(Verdict::kNew)]) / d,
      static_cast<double>(verdicts[static_cast<int>(Verdict::kDuplicate)]) / d,
      static_cast<double>(verdicts[static_cast<int>(Verdict::kNearDuplicate)]) / d,
      static_cast<double>(matches) / d, static_cast<double>(left_out) / d,
      static_cast<double>(in_cluster) / d);
  const Mark& f = results.front();
  const Mark& l = results.back();
  std::printf(
      "last/first (%" PRIu64 " / %" PRIu64 " pages): cpu_us/page=%.2f pages/s=%.2f"
      " bytes/document=%.2f similar_p50=%.2f similar_p99=%.2f\n",
      l.pages, f.pages, l.cpu_us / f.cpu_us, l.pages_per_s / f.pages_per_s,
      l.bytes_per_doc / f.bytes_per_doc, l.p50_us / f.p50_us, l.p99_us / f.p99_us);
  store.reset();
  if (own_dir) std::filesystem::remove_all(dir);
}
