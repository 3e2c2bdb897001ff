// `chunk_docs` through the write buffer (format 11; FORMAT.md, "The write buffer of
// chunk_docs"). A store with the buffer answers as one without it (every posting put at every
// commit): the writer's bytes in common, the template judge, containment, bytes in common and the
// clusters report, before and after the store is closed with its buffer unflushed (closing flushes
// nothing: a killed store reopens the same way) and rebuilt from `doc_chunks`. Real sketches of
// real text (dedup::Sketcher), as containment_test.cc makes them.
#include <gtest/gtest.h>
#include <lmdb.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "dedup/sketch.h"
#include "dedup/tokenizer.h"
#include "store/internal/codec.h"
#include "store/internal/lmdb.h"
#include "store/internal/schema.h"
#include "store/internal/write_buffer.h"
#include "store/store.h"
#include "tests/store/test_dir.h"

namespace shingled::store {
namespace {

std::string Words(std::mt19937& rng, const char* prefix, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.append(prefix);
    out.append(std::to_string(rng() % 1000000));
    out.push_back(' ');
  }
  return out;
}

// The entries of `chunk_docs`' B-tree in the store at `dir` (closed).
size_t BtreeChunkPostings(const std::string& dir) {
  MDB_env* env = nullptr;
  EXPECT_EQ(mdb_env_create(&env), 0);
  EXPECT_EQ(mdb_env_set_maxdbs(env, 32), 0);
  EXPECT_EQ(mdb_env_open(env, dir.c_str(), MDB_RDONLY, 0644), 0);
  MDB_txn* txn = nullptr;
  EXPECT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), 0);
  MDB_dbi dbi = 0;
  EXPECT_EQ(mdb_dbi_open(txn, "chunk_docs", MDB_DUPSORT, &dbi), 0);
  MDB_stat st{};
  EXPECT_EQ(mdb_stat(txn, dbi, &st), 0);
  mdb_txn_abort(txn);
  mdb_env_close(env);
  return st.ms_entries;
}

// Sets meta `format_version` of the store at `dir` (closed) to `version` and deletes the chunk
// watermarks, as a store of that format had it.
void MakeFormat(const std::string& dir, uint64_t version) {
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_set_maxdbs(env, 32), 0);
  ASSERT_EQ(mdb_env_open(env, dir.c_str(), 0, 0644), 0);
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  MDB_dbi meta = 0;
  ASSERT_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
  std::string v;
  internal::AppendLE64(&v, version);
  MDB_val k = internal::Val("format_version"), val = internal::Val(v);
  ASSERT_EQ(mdb_put(txn, meta, &k, &val, 0), 0);
  for (const char* key : {internal::kChunkWatermarksKey, internal::kChunkNextSliceKey}) {
    k = internal::Val(key);
    ASSERT_EQ(mdb_del(txn, meta, &k, nullptr), 0) << key;
  }
  ASSERT_EQ(mdb_txn_commit(txn), 0);
  mdb_env_close(env);
}

// Meta `key` of the store at `dir` (closed); empty when missing.
std::string MetaOf(const std::string& dir, const char* key) {
  MDB_env* env = nullptr;
  EXPECT_EQ(mdb_env_create(&env), 0);
  EXPECT_EQ(mdb_env_set_maxdbs(env, 32), 0);
  EXPECT_EQ(mdb_env_open(env, dir.c_str(), MDB_RDONLY, 0644), 0);
  MDB_txn* txn = nullptr;
  EXPECT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), 0);
  MDB_dbi meta = 0;
  EXPECT_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
  MDB_val k = internal::Val(key), v;
  std::string out;
  if (mdb_get(txn, meta, &k, &v) == 0) out = std::string(internal::View(v));
  mdb_txn_abort(txn);
  mdb_env_close(env);
  return out;
}

class ChunkBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ctx = dedup::SketchContext::Create(dedup::SketchParams{});
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    context_ = *ctx;
    // 40 pages in batches of 4: 10 commits, fewer than the 16 slices, so the buffered store
    // keeps postings of several slices in memory only. Each page has its own words; every page
    // holds the boilerplate (on 40 documents: template by the document limit), pages 0..9 of one
    // host hold a footer (on 10 of its 10 pages: template by the host share), and every fifth
    // page holds the short text of page 1 inside (containment).
    std::mt19937 rng(33);
    const std::string boilerplate = Words(rng, "b", 400);
    const std::string footer = Words(rng, "f", 300);
    std::string short_text;
    for (int i = 0; i < 40; ++i) {
      std::string text = boilerplate + Words(rng, "w", 1500);
      if (i < 10) text.append(footer);
      if (i == 1) short_text = text.substr(boilerplate.size(), 6000);
      if (i > 1 && i % 5 == 0) text.append(short_text);
      const std::string host =
          i < 10 ? "http://one.test/" : "http://h" + std::to_string(i) + ".test/";
      texts_.emplace_back(host + "p" + std::to_string(i), std::move(text));
    }
  }

  StoreOptions Options(bool write_buffer) const {
    StoreOptions o;
    o.durable = false;
    o.write_buffer = write_buffer;
    o.template_max_docs = 30;
    o.template_min_host_pages = 5;
    o.template_host_share = 0.5;
    return o;
  }

  std::unique_ptr<Store> Open(const std::string& name, bool write_buffer) {
    auto s = Store::Open(dir_.Sub(name), Options(write_buffer), *context_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return nullptr;
    sweep_ = (*s)->OpenSweep("s", 1)->id;
    return std::move(s).value();
  }

  PageInput PageOf(size_t i) {
    dedup::Sketcher sketcher(*context_);
    dedup::Tokenizer tokenizer(&sketcher);
    sketcher.AddRawBytes(texts_[i].second);
    tokenizer.Feed(texts_[i].second);
    tokenizer.Finish();
    PageInput p;
    p.url = texts_[i].first;
    p.sweep = sweep_;
    p.date = 1;
    p.sketch = sketcher.Finish();
    return p;
  }

  // Every page, 4 per batch; the writer's answers.
  std::vector<PageResult> Ingest(Store& store) {
    std::vector<PageResult> out;
    for (size_t i = 0; i < texts_.size(); i += 4) {
      std::vector<PageInput> batch;
      for (size_t j = i; j < i + 4 && j < texts_.size(); ++j) batch.push_back(PageOf(j));
      auto r = store.Apply(batch);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (r.ok()) out.insert(out.end(), r->begin(), r->end());
    }
    return out;
  }

  // The store's answers that read `chunk_docs`, as comparable text.
  std::vector<std::string> Answers(const Store& store) {
    std::vector<std::string> out;
    for (DocId doc = 1; doc <= texts_.size(); ++doc) {
      StatusOr<std::vector<ChunkTemplate>> t = store.ChunkTemplates(doc);
      EXPECT_TRUE(t.ok()) << t.status().ToString();
      if (!t.ok()) continue;
      std::string line = "templates of " + std::to_string(doc) + ":";
      for (const ChunkTemplate& c : *t) {
        line.append(" ").append(std::to_string(c.chunk.hash));
        line.append(c.is_template ? " template" : " content");
        line.append(c.marked ? " marked" : "").append(c.over_documents ? " over" : "");
        line.append(c.over_host_share ? " over_host" : "");
        line.append(" docs=").append(std::to_string(c.documents));
        line.append(" host_docs=").append(std::to_string(c.host_documents)).append(";");
      }
      out.push_back(line);
      StatusOr<std::vector<SimilarDoc>> similar = store.SimilarToDocument(doc, QueryOptions{});
      EXPECT_TRUE(similar.ok()) << similar.status().ToString();
      if (!similar.ok()) continue;
      line = "similar to " + std::to_string(doc) + ":";
      for (const SimilarDoc& s : *similar) {
        line.append(" doc=").append(std::to_string(s.doc));
        line.append(" of=").append(std::to_string(s.containment_of_query));
        line.append(" in=").append(std::to_string(s.containment_in_query));
        line.append(" from=").append(std::to_string(static_cast<int>(s.containment_from)));
        line.append(" shared=").append(std::to_string(s.common.shared_bytes));
        line.append(" template=").append(std::to_string(s.common.template_bytes)).append(";");
      }
      out.push_back(line);
    }
    ClusterReportTotals totals;
    std::string clusters = "clusters:";
    Status s = store.StreamClusterReport(
        ClusterReportOptions{},
        [&](const ClusterReportCluster& c) {
          clusters.append(" ").append(std::to_string(c.id)).append("/");
          clusters.append(std::to_string(c.documents.size()));
          return OkStatus();
        },
        &totals);
    EXPECT_TRUE(s.ok()) << s.ToString();
    clusters.append(" partitions ").append(std::to_string(totals.partitions));
    clusters.append(" too common ").append(std::to_string(totals.chunks_too_common));
    out.push_back(clusters);
    return out;
  }

  static std::vector<std::string> WriterAnswers(const std::vector<PageResult>& results) {
    std::vector<std::string> out;
    for (const PageResult& r : results) {
      std::string line = "page " + std::to_string(r.doc) + ":";
      for (size_t i = 0; i < r.matches.size(); ++i) {
        line.append(" ").append(std::to_string(r.matches[i].doc));
        if (i < r.match_common.size()) {
          line.append("/").append(std::to_string(r.match_common[i].shared_bytes));
          line.append("/").append(std::to_string(r.match_common[i].template_bytes));
        }
      }
      out.push_back(line);
    }
    return out;
  }

  static void ExpectConsistent(const Store& store) {
    StatusOr<std::vector<std::string>> problems = store.Check();
    ASSERT_TRUE(problems.ok()) << problems.status().ToString();
    for (const std::string& p : *problems) ADD_FAILURE() << p;
  }

  testing::TestDir dir_;
  std::shared_ptr<const dedup::SketchContext> context_;
  SweepId sweep_ = 0;
  std::vector<std::pair<std::string, std::string>> texts_;  // (url, text)
};

TEST_F(ChunkBufferTest, AnswersAsAStoreWithoutItBeforeAndAfterReopening) {
  std::vector<std::string> want, want_writer;
  {
    auto flat = Open("flat", /*write_buffer=*/false);
    ASSERT_NE(flat, nullptr);
    want_writer = WriterAnswers(Ingest(*flat));
    want = Answers(*flat);
    ExpectConsistent(*flat);
  }
  {
    auto buffered = Open("buffered", /*write_buffer=*/true);
    ASSERT_NE(buffered, nullptr);
    EXPECT_EQ(WriterAnswers(Ingest(*buffered)), want_writer);
    EXPECT_EQ(Answers(*buffered), want);
    ExpectConsistent(*buffered);
  }  // closed: the buffer is not flushed
  // The buffered store's B-tree lacks the postings of the slices not put since their documents
  // came: they are in doc_chunks only, and the reopened store finds them there.
  const size_t flat_postings = BtreeChunkPostings(dir_.Sub("flat"));
  const size_t buffered_postings = BtreeChunkPostings(dir_.Sub("buffered"));
  EXPECT_GT(flat_postings, 0u);
  EXPECT_LT(buffered_postings, flat_postings);
  {
    auto reopened = Open("buffered", /*write_buffer=*/true);
    ASSERT_NE(reopened, nullptr);
    EXPECT_EQ(Answers(*reopened), want);
    ExpectConsistent(*reopened);
  }
  // The answers compared are not trivial: template chunks by either rule, content chunks in
  // common, a cluster.
  bool over = false, over_host = false, shared = false;
  for (const std::string& line : want) {
    over = over || line.find(" over ") != std::string::npos;
    over_host = over_host || line.find(" over_host ") != std::string::npos;
    shared =
        shared || (line.starts_with("similar") && line.find(" shared=0;") == std::string::npos &&
                   line.find(" shared=") != std::string::npos);
  }
  EXPECT_TRUE(over);
  EXPECT_TRUE(over_host);
  EXPECT_TRUE(shared);
  EXPECT_EQ(want.back().find("partitions 0"), std::string::npos) << want.back();
}

// A store opened with the buffer on after one written without it (and the other way round) has
// every posting: the watermarks say where each is.
TEST_F(ChunkBufferTest, TurningTheBufferOnAndOffKeepsEveryPosting) {
  std::vector<std::string> want;
  {
    auto flat = Open("flat", false);
    ASSERT_NE(flat, nullptr);
    Ingest(*flat);
    want = Answers(*flat);
  }
  {
    auto store = Open("mixed", true);
    ASSERT_NE(store, nullptr);
    for (size_t i = 0; i < 20; ++i) {
      auto r = store->Apply(std::vector<PageInput>{PageOf(i)});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  }
  {
    auto store = Open("mixed", false);
    ASSERT_NE(store, nullptr);
    for (size_t i = 20; i < 30; ++i) {
      auto r = store->Apply(std::vector<PageInput>{PageOf(i)});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
    ExpectConsistent(*store);
  }
  auto store = Open("mixed", true);
  ASSERT_NE(store, nullptr);
  for (size_t i = 30; i < 40; ++i) {
    auto r = store->Apply(std::vector<PageInput>{PageOf(i)});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  EXPECT_EQ(Answers(*store), want);
  ExpectConsistent(*store);
}

// A document stored without chunks and seen again with them gets its postings backfilled: into
// `chunk_docs` at once for the slices whose watermark is past it, into the buffer for the others.
// The store answers as one without the buffer that saw the same pages, before and after reopening.
TEST_F(ChunkBufferTest, BackfilledChunksBelowAndAboveTheWatermarks) {
  auto run = [&](Store& store) {
    // The same bytes seen again come from another URL (the same URL in the same sweep replays).
    auto apply = [&](size_t i, bool with_chunks, const char* url_suffix = "") {
      PageInput p = PageOf(i);
      p.url.append(url_suffix);
      if (!with_chunks) p.sketch.chunks.clear();
      auto r = store.Apply(std::vector<PageInput>{p});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    };
    apply(0, false);                                 // document 1, no chunks
    for (size_t i = 1; i <= 20; ++i) apply(i, true);  // 20 commits: every watermark past 1
    apply(0, true, "-again");  // 1 backfilled below every watermark
    apply(21, false);                                // document 22, no chunks
    for (size_t i = 22; i <= 25; ++i) apply(i, true);  // 4 commits: 4 slices past 22
    apply(21, true, "-again");  // 22 backfilled below 4, above 12
    for (size_t i = 26; i < 40; ++i) apply(i, true);
  };
  std::vector<std::string> want;
  {
    auto flat = Open("flat", false);
    ASSERT_NE(flat, nullptr);
    run(*flat);
    want = Answers(*flat);
    ExpectConsistent(*flat);
  }
  {
    auto buffered = Open("buffered", true);
    ASSERT_NE(buffered, nullptr);
    run(*buffered);
    EXPECT_EQ(Answers(*buffered), want);
    ExpectConsistent(*buffered);
  }
  auto reopened = Open("buffered", true);
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(Answers(*reopened), want);
  ExpectConsistent(*reopened);
  // Both backfilled documents have their chunks, each found under them.
  for (DocId doc : {DocId{1}, DocId{22}}) {
    StatusOr<std::vector<ChunkTemplate>> t = reopened->ChunkTemplates(doc);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_FALSE(t->empty()) << doc;
    for (const ChunkTemplate& c : *t) EXPECT_GE(c.documents, 1u) << doc;
  }
}

// A store of format 10 (built by this code without the buffer, so that the B-tree holds every
// posting, then its chunk watermarks deleted and its format put back) opens as format 11 with the
// chunk watermarks at its last document, answers as before and takes new pages through the buffer.
TEST_F(ChunkBufferTest, Format10IsUpgraded) {
  std::vector<std::string> want;
  {
    auto flat = Open("flat", false);
    ASSERT_NE(flat, nullptr);
    Ingest(*flat);
    want = Answers(*flat);
  }
  {
    auto old = Open("old", false);
    ASSERT_NE(old, nullptr);
    for (size_t i = 0; i < 24; ++i) {
      auto r = old->Apply(std::vector<PageInput>{PageOf(i)});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  }
  MakeFormat(dir_.Sub("old"), 10);
  ASSERT_TRUE(MetaOf(dir_.Sub("old"), internal::kChunkWatermarksKey).empty());
  {
    auto store = Open("old", true);
    ASSERT_NE(store, nullptr);
    ExpectConsistent(*store);
    for (size_t i = 24; i < 40; i += 4) {
      std::vector<PageInput> batch;
      for (size_t j = i; j < i + 4; ++j) batch.push_back(PageOf(j));
      auto r = store->Apply(batch);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
    EXPECT_EQ(Answers(*store), want);
    ExpectConsistent(*store);
  }
  EXPECT_EQ(internal::GetLE64(MetaOf(dir_.Sub("old"), "format_version").data()),
            internal::kFormatVersion);
  EXPECT_EQ(internal::kFormatVersion, 14u);
  // The upgrade put every watermark at document 24; the 4 commits since put one slice each.
  const std::string marks = MetaOf(dir_.Sub("old"), internal::kChunkWatermarksKey);
  ASSERT_EQ(marks.size(), 8u * internal::kBufferSlices);
  int at_upgrade = 0, put_since = 0;
  for (int slice = 0; slice < internal::kBufferSlices; ++slice) {
    const uint64_t mark = internal::GetLE64(marks.data() + 8 * slice);
    at_upgrade += mark == 24 ? 1 : 0;
    put_since += mark > 24 ? 1 : 0;
  }
  EXPECT_EQ(at_upgrade, internal::kBufferSlices - 4);
  EXPECT_EQ(put_since, 4);
}

}  // namespace
}  // namespace shingled::store
