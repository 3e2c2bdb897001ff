// A page's store work does not grow with how many near-copies it has, nor with its site's size
// (StoreOptions::max_matches, the template judge's host count, the writer's memory of hosts and
// of chunks over the document limit, the floor for candidates that share only sample values):
// the writer's reads are counted (LmdbStore::WriterWorkForTesting), not timed. For one more
// near-copy of a text after 1 and after 500 earlier ones, each on a host of its own (a mirror
// network), chunks on; and for pages of one site.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <string>
#include <vector>

#include "dedup/sketch.h"
#include "dedup/tokenizer.h"
#include "store/internal/store_impl.h"
#include "store/lmdb_store.h"
#include "store/store.h"
#include "tests/store/test_dir.h"

namespace shingled::store {
namespace {

// 800 generated words: ~5 KB of text, ~10 chunks.
std::vector<std::string> Words() {
  std::mt19937 rng(3);
  std::vector<std::string> words;
  for (int i = 0; i < 800; ++i) words.push_back("w" + std::to_string(rng() % 1000000));
  return words;
}

// `words` with 3 of them replaced at places chosen by `seed`: J ~0.98 with the original.
std::string NearCopy(const std::vector<std::string>& words, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> copy = words;
  for (int e = 0; e < 3; ++e) copy[rng() % copy.size()] = "n" + std::to_string(rng() % 10000000);
  std::string out;
  for (const std::string& w : copy) out.append(w).push_back(' ');
  return out;
}

// Random words: `n` of them from `seed`.
std::vector<std::string> RandomWords(uint32_t seed, int n, const std::string& prefix = "w") {
  std::mt19937 rng(seed);
  std::vector<std::string> words;
  for (int i = 0; i < n; ++i) words.push_back(prefix + std::to_string(rng() % 1000000));
  return words;
}

std::string Join(std::initializer_list<const std::vector<std::string>*> parts) {
  std::string out;
  for (const std::vector<std::string>* part : parts) {
    for (const std::string& w : *part) out.append(w).push_back(' ');
  }
  return out;
}

struct Measured {
  WriterWork work;  // the reads of the last page alone
  PageResult result;
  ClusterId family = 0;  // the cluster of the first near-copy, after the last page
  size_t chunks = 0;     // the last page's distinct chunks
};

class NearCopiesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ctx = dedup::SketchContext::Create(dedup::SketchParams{});
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    context_ = *ctx;
  }

  dedup::Sketch SketchText(const std::string& text) {
    dedup::Sketcher sketcher(*context_);
    dedup::Tokenizer tokenizer(&sketcher);
    sketcher.AddRawBytes(text);
    tokenizer.Feed(text);
    tokenizer.Finish();
    return sketcher.Finish();
  }

  // Stores `earlier` near-copies of one text (in batches of 100), then one more, and measures it.
  Measured OneMore(int earlier, const StoreOptions& o) {
    Measured m;
    StoreOptions options = o;
    options.durable = false;
    auto opened = Store::Open(dir_.Sub("s" + std::to_string(earlier)), options, *context_);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return m;
    std::unique_ptr<Store> store = std::move(opened).value();
    auto* lmdb = dynamic_cast<LmdbStore*>(store.get());
    EXPECT_NE(lmdb, nullptr);
    if (lmdb == nullptr) return m;
    const SweepId sweep = store->OpenSweep("s", 1)->id;
    const std::vector<std::string> words = Words();
    auto page = [&](const std::string& host, uint32_t seed) {
      PageInput p;
      p.url = "http://" + host + "/licence.html";
      p.sweep = sweep;
      p.date = 1;
      p.sketch = SketchText(NearCopy(words, seed));
      return p;
    };
    DocId first = 0;
    for (int i = 0; i < earlier; i += 100) {
      std::vector<PageInput> batch;
      for (int j = i; j < std::min(earlier, i + 100); ++j)
        batch.push_back(page("copy" + std::to_string(j) + ".example", 100 + j));
      auto r = store->Apply(batch);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok()) return m;
      if (first == 0) first = (*r)[0].doc;
    }
    const PageInput last = page("last.example", 7);
    std::vector<dedup::Chunk> distinct = last.sketch.chunks;
    std::sort(distinct.begin(), distinct.end(),
              [](const dedup::Chunk& a, const dedup::Chunk& b) { return a.hash < b.hash; });
    m.chunks = static_cast<size_t>(
        std::unique(distinct.begin(), distinct.end(),
                    [](const dedup::Chunk& a, const dedup::Chunk& b) { return a.hash == b.hash; }) -
        distinct.begin());
    const WriterWork before = lmdb->WriterWorkForTesting();
    auto r = store->Apply(std::span(&last, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return m;
    const WriterWork after = lmdb->WriterWorkForTesting();
    m.result = (*r)[0];
    m.work.candidates_scored = after.candidates_scored - before.candidates_scored;
    m.work.chunk_records_read = after.chunk_records_read - before.chunk_records_read;
    m.work.chunk_postings_read = after.chunk_postings_read - before.chunk_postings_read;
    m.work.url_reads = after.url_reads - before.url_reads;
    auto cluster = store->Cluster(first);
    EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
    if (cluster.ok()) m.family = cluster->id;
    return m;
  }

  testing::TestDir dir_;
  std::shared_ptr<const dedup::SketchContext> context_;
};

TEST_F(NearCopiesTest, WorkPerPageIsTheSameWithOneOrFiveHundredNearCopies) {
  StoreOptions o;  // the defaults: chunks, templates, verification sample, max_candidates 500
  o.max_matches = 4;
  const Measured one = OneMore(1, o);
  const Measured many = OneMore(500, o);
  ASSERT_TRUE(one.result.status.ok());
  ASSERT_TRUE(many.result.status.ok());

  // The answers: placed in the family's cluster both times; with 500 the strongest max_matches
  // are listed, and the rest said.
  EXPECT_EQ(one.result.verdict, Verdict::kNearDuplicate);
  EXPECT_EQ(many.result.verdict, Verdict::kNearDuplicate);
  EXPECT_EQ(one.result.cluster, one.family);
  EXPECT_EQ(many.result.cluster, many.family);
  ASSERT_EQ(one.result.matches.size(), 1u);
  EXPECT_EQ(one.result.matches_left_out + one.result.candidates_in_cluster, 0u);
  ASSERT_EQ(many.result.matches.size(), o.max_matches);
  EXPECT_EQ(many.result.match_common.size(), o.max_matches);
  for (const Match& m : many.result.matches) EXPECT_EQ(m.relation, Relation::kVerified);
  // Every earlier copy is a candidate: listed, found and not listed, or not scored in the cluster.
  EXPECT_EQ(many.result.matches.size() + many.result.matches_left_out +
                many.result.candidates_in_cluster + many.result.candidates_left_out,
            500u);
  EXPECT_GT(many.result.candidates_in_cluster, 400u);

  // The work: the same order with 500 near-copies as with 1. Candidates scored and chunk records
  // read are at most max_matches each (1 of each with one copy, plus containment's read of it);
  // URL reads (first URLs of the matches listed) likewise. The factor 8 leaves room for the
  // max_matches - 1 more matches listed with 500 copies than with 1 (4 against 1), not for
  // growth with the copies (before the bound: 500 candidates scored, 500 records read).
  SCOPED_TRACE("scored " + std::to_string(one.work.candidates_scored) + " / " +
               std::to_string(many.work.candidates_scored) + ", records " +
               std::to_string(one.work.chunk_records_read) + " / " +
               std::to_string(many.work.chunk_records_read) + ", url reads " +
               std::to_string(one.work.url_reads) + " / " + std::to_string(many.work.url_reads) +
               ", postings " + std::to_string(one.work.chunk_postings_read) + " / " +
               std::to_string(many.work.chunk_postings_read));
  constexpr uint64_t kSameOrder = 8;
  EXPECT_GE(one.work.candidates_scored, 1u);
  EXPECT_LE(many.work.candidates_scored, kSameOrder * one.work.candidates_scored);
  EXPECT_LE(many.work.candidates_scored, o.max_matches);
  EXPECT_GE(one.work.chunk_records_read, 1u);
  EXPECT_LE(many.work.chunk_records_read, kSameOrder * one.work.chunk_records_read);
  EXPECT_LE(many.work.url_reads, kSameOrder * std::max<uint64_t>(one.work.url_reads, 1));
  // Chunk postings: each distinct chunk of the page and of the matches listed reads at most
  // template_max_docs + 1 of its postings (the documented bound: past it the chunk is template),
  // whatever the copies. A listed match has the page's chunks but those its 3 edits and the
  // page's touch: at most 2 a word (an edit can move a boundary), 12 in all.
  EXPECT_LE(many.work.chunk_postings_read,
            (o.template_max_docs + 1) * (many.chunks + 12 * o.max_matches));
}


// The template judge's share rule reads the host of every document holding a chunk of a match
// (a site's footer, on tens of its pages). The writer remembers those hosts from one batch to
// the next, so a batch reads only those it has not seen: not the site's every page again. A
// write that is not a batch (here a sweep opened), or a batch that did not commit, makes it
// read them again, and the answers stay those of a store read afresh.
TEST_F(NearCopiesTest, TheWriterRemembersHostsFromOneBatchToTheNext) {
  auto opened = Store::Open(dir_.Sub("hosts"), StoreOptions{}, *context_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<Store> store = std::move(opened).value();
  auto* lmdb = dynamic_cast<LmdbStore*>(store.get());
  ASSERT_NE(lmdb, nullptr);
  const SweepId sweep = store->OpenSweep("s", 1)->id;
  // The footer: ~1.2 KB of words every page of the site ends with (a chunk or more of its own).
  std::string footer;
  for (int i = 0; i < 150; ++i) footer += "footer" + std::to_string(i) + " ";
  auto page = [&](const std::string& path, int text, uint32_t edit) {
    PageInput p;
    p.url = "http://site.example/" + path;
    p.sweep = sweep;
    p.date = 1;
    p.sketch = SketchText(NearCopy(RandomWords(static_cast<uint32_t>(1000 + text), 1500), edit) +
                          footer);
    return p;
  };
  constexpr int kSite = 40;  // over template_min_host_pages, under template_max_docs
  std::vector<PageInput> site;
  for (int i = 0; i < kSite; ++i) site.push_back(page("a/" + std::to_string(i), i, 1));
  ASSERT_TRUE(store->Apply(site).ok());

  // One near-copy of page `text` in a batch of its own: its URL reads, and its answer.
  auto one = [&](int text, const std::string& path, PageResult* result) {
    const WriterWork before = lmdb->WriterWorkForTesting();
    const PageInput p = page(path, text, 2);
    auto r = store->Apply(std::span(&p, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) *result = (*r)[0];
    return lmdb->WriterWorkForTesting().url_reads - before.url_reads;
  };
  PageResult first, later, after_sweep;
  const uint64_t reads_first = one(0, "b/0", &first);
  uint64_t reads_later = 0;
  for (int i = 1; i <= 4; ++i) reads_later = std::max(reads_later, one(i, "b/" + std::to_string(i), &later));
  ASSERT_EQ(first.verdict, Verdict::kNearDuplicate);
  ASSERT_EQ(later.verdict, Verdict::kNearDuplicate);
  ASSERT_EQ(first.match_common.size(), 1u);
  ASSERT_EQ(later.match_common.size(), 1u);
  // The footer's documents are the site's: read once, then remembered.
  EXPECT_GE(reads_first, static_cast<uint64_t>(kSite));
  EXPECT_LE(reads_later, 4u) << "first batch " << reads_first;

  // Another write between two batches: the memory is not trusted, and read again.
  ASSERT_TRUE(store->OpenSweep("t", 2).ok());
  EXPECT_GE(one(5, "b/5", &after_sweep), static_cast<uint64_t>(kSite));
  // A batch that does not commit: the next one reads again, and answers as a fresh store does.
  // (A full disk fails that write only: the store goes on.)
  PageResult failed_then;
  EXPECT_LE(one(6, "b/6", &failed_then), 4u);  // remembered again after the sweep's batch
  lmdb->FailNextCommitForTesting(ENOSPC);
  const PageInput failing = page("b/7", 7, 2);
  EXPECT_FALSE(store->Apply(std::span(&failing, 1)).ok());
  PageResult again;
  EXPECT_GE(one(7, "b/7", &again), static_cast<uint64_t>(kSite));
  // The template judgement did not change with the memory: the footer is template (40 of the
  // site's 40+ pages) on every answer, so each match's bytes in common leave it out alike.
  for (const PageResult* r : {&first, &later, &after_sweep, &again}) {
    ASSERT_EQ(r->match_common.size(), 1u);
    EXPECT_GT(r->match_common[0].template_bytes, 0u);
  }
}

// A quarter of the page's indexed sample values (those `samples` files), from one to three; the
// values the index does not file do not count.
TEST(SampleOnlyFloorTest, AQuarterOfThePagesIndexedValuesFromOneToThree) {
  auto floor = [](uint64_t indexed, uint64_t others) {
    dedup::ModSample sample;
    sample.log2_modulus = 3;
    // Indexed: 0 mod 2^(3 + kSampleIndexShift); the others are 0 mod 2^3 only.
    for (uint64_t i = 0; i < indexed; ++i) sample.values.push_back(i << 5);
    for (uint64_t i = 0; i < others; ++i) sample.values.push_back((i << 5) | 8);
    return internal::SampleOnlyFloor(sample);
  };
  EXPECT_EQ(floor(0, 0), 1u);
  EXPECT_EQ(floor(7, 40), 1u);
  EXPECT_EQ(floor(8, 0), 2u);
  EXPECT_EQ(floor(12, 3), 3u);
  EXPECT_EQ(floor(25, 75), 3u);
}

// Pages of one site share its header and footer, and so a few sample values: they are not
// scored as candidates of each other (candidates_below_floor), while pages that resemble each
// other at ~0.6 are still found, each one.
TEST_F(NearCopiesTest, PagesThatShareOnlyTheSiteTemplateAreNotScored) {
  auto opened = Store::Open(dir_.Sub("site"), StoreOptions{}, *context_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<Store> store = std::move(opened).value();
  auto* lmdb = dynamic_cast<LmdbStore*>(store.get());
  ASSERT_NE(lmdb, nullptr);
  const SweepId sweep = store->OpenSweep("s", 1)->id;
  const std::vector<std::string> header = RandomWords(1, 30, "h");
  const std::vector<std::string> footer = RandomWords(2, 15, "f");
  auto page = [&](const std::string& url, const std::string& text) {
    PageInput p;
    p.url = url;
    p.sweep = sweep;
    p.date = 1;
    p.sketch = SketchText(text);
    return p;
  };
  std::vector<PageInput> site;
  for (int i = 0; i < 120; ++i) {
    const std::vector<std::string> body = RandomWords(100 + i, 600);
    site.push_back(page("http://site.example/" + std::to_string(i), Join({&header, &body, &footer})));
  }
  ASSERT_TRUE(store->Apply(site).ok());
  const std::vector<std::string> body = RandomWords(99, 600);
  const PageInput next = page("http://site.example/next", Join({&header, &body, &footer}));
  const WriterWork before = lmdb->WriterWorkForTesting();
  auto r = store->Apply(std::span(&next, 1));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const uint64_t scored = lmdb->WriterWorkForTesting().candidates_scored - before.candidates_scored;
  EXPECT_EQ((*r)[0].verdict, Verdict::kNew);
  EXPECT_TRUE((*r)[0].matches.empty());
  // Most of the site's pages share one or two of the template's values with it.
  EXPECT_GE((*r)[0].candidates_below_floor, 40u) << "scored " << scored;
  EXPECT_LE(scored, 40u) << "below the floor " << (*r)[0].candidates_below_floor;

  // 200 pairs of like size at resemblance ~0.6 (the last quarter of 400 words replaced), on the
  // same site: each second page lists the first as a match.
  std::vector<PageInput> firsts, seconds;
  for (int i = 0; i < 200; ++i) {
    std::vector<std::string> a = RandomWords(5000 + i, 400);
    std::vector<std::string> b = a;
    const std::vector<std::string> tail = RandomWords(9000 + i, 100, "t");
    std::copy(tail.begin(), tail.end(), b.end() - 100);
    firsts.push_back(page("http://site.example/a" + std::to_string(i), Join({&header, &a, &footer})));
    seconds.push_back(page("http://site.example/b" + std::to_string(i), Join({&header, &b, &footer})));
  }
  auto stored = store->Apply(firsts);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  auto found = store->Apply(seconds);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  int missed = 0;
  uint64_t below_floor = 0;
  for (size_t i = 0; i < found->size(); ++i) {
    const std::vector<Match>& matches = (*found)[i].matches;
    const DocId first = (*stored)[i].doc;
    missed += std::none_of(matches.begin(), matches.end(),
                           [&](const Match& m) { return m.doc == first; });
    below_floor += (*found)[i].candidates_below_floor;
  }
  EXPECT_LE(missed, 2);
  EXPECT_GT(below_floor, 0u);  // the floor was at work on these pages too
}

// A chunk in more than template_max_docs documents stays so (postings are only added): the
// writer remembers it from one batch to the next and does not read its postings again.
TEST_F(NearCopiesTest, TheWriterRemembersChunksOverTheDocumentLimit) {
  StoreOptions o;
  o.template_max_docs = 20;
  auto opened = Store::Open(dir_.Sub("over"), o, *context_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<Store> store = std::move(opened).value();
  auto* lmdb = dynamic_cast<LmdbStore*>(store.get());
  ASSERT_NE(lmdb, nullptr);
  const SweepId sweep = store->OpenSweep("s", 1)->id;
  const std::vector<std::string> footer = RandomWords(2, 300, "f");
  auto page = [&](int i, int text, uint32_t edit) {
    PageInput p;
    p.url = "http://h" + std::to_string(i) + ".example/";
    p.sweep = sweep;
    p.date = 1;
    p.sketch = SketchText(NearCopy(RandomWords(1000 + text, 1500), edit) + Join({&footer}));
    return p;
  };
  std::vector<PageInput> pages;
  for (int i = 0; i < 40; ++i) pages.push_back(page(i, i, 1));
  ASSERT_TRUE(store->Apply(pages).ok());
  // Opened again: the writer's memory starts empty.
  store.reset();
  opened = Store::Open(dir_.Sub("over"), o, *context_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  store = std::move(opened).value();
  lmdb = dynamic_cast<LmdbStore*>(store.get());
  // One near-copy a batch, each of another page: its match's bytes in common judge the footer.
  auto postings_read = [&](int i) {
    const WriterWork before = lmdb->WriterWorkForTesting();
    const PageInput p = page(100 + i, i, 2);
    auto r = store->Apply(std::span(&p, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) {
      EXPECT_EQ((*r)[0].verdict, Verdict::kNearDuplicate);
      EXPECT_EQ((*r)[0].match_common.size(), 1u);
      if (!(*r)[0].match_common.empty()) {
        EXPECT_GT((*r)[0].match_common[0].template_bytes, 0u);
      }
    }
    return lmdb->WriterWorkForTesting().chunk_postings_read - before.chunk_postings_read;
  };
  const uint64_t first = postings_read(0);
  const uint64_t second = postings_read(1);
  // The first reads the footer's chunks' postings up to the limit (21 each); the second does not.
  EXPECT_GE(first, second + o.template_max_docs) << first << " then " << second;
}

}  // namespace
}  // namespace shingled::store
