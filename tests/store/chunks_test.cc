// The file-chunk graph (`chunk_docs`, `doc_chunks`; format 9) and bytes in common
// (paper 003), through the real store. Pages carry synthetic sketches (tests/store/synthetic.h)
// and the chunks of real random text cut by a content-defined chunker (tests/store/chunk_text.h),
// as the TTTD chunker will fill Sketch::chunks.
#include <gtest/gtest.h>
#include <lmdb.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "store/internal/codec.h"
#include "store/internal/lmdb.h"
#include "store/internal/schema.h"
#include "store/mapped_file.h"
#include "store/store.h"
#include "tests/store/chunk_text.h"
#include "tests/store/store_fixture.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

using testing::ChunkText;
using testing::kMaxChunk;
using testing::RandomText;
using testing::Range;

std::string Le64(uint64_t v) {
  std::string out;
  internal::AppendLE64(&out, v);
  return out;
}

// The store's environment opened directly in one write transaction, committed at the end.
class Raw {
 public:
  explicit Raw(const std::string& dir) {
    EXPECT_EQ(mdb_env_create(&env_), 0);
    EXPECT_EQ(mdb_env_set_maxdbs(env_, 32), 0);
    EXPECT_EQ(mdb_env_open(env_, dir.c_str(), 0, 0644), 0);
    EXPECT_EQ(mdb_txn_begin(env_, nullptr, 0, &txn_), 0);
  }
  ~Raw() {
    EXPECT_EQ(mdb_txn_commit(txn_), 0);
    mdb_env_close(env_);
  }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  // 0 when the database does not exist; MDB_CREATE is never passed.
  MDB_dbi Dbi(const char* name, bool* exists = nullptr) {
    unsigned flags = 0;
    for (const internal::TableSpec& t : internal::kTables) {
      if (std::string_view(t.name) == name) flags = t.flags;
    }
    MDB_dbi dbi = 0;
    const int rc = mdb_dbi_open(txn_, name, flags, &dbi);
    if (exists != nullptr) {
      *exists = rc == 0;
    } else {
      EXPECT_EQ(rc, 0) << name;
    }
    return dbi;
  }
  void Put(const char* db, std::string_view key, std::string_view value) {
    MDB_val k = internal::Val(key), v = internal::Val(value);
    EXPECT_EQ(mdb_put(txn_, Dbi(db), &k, &v, 0), 0) << db;
  }
  void Del(const char* db, std::string_view key, std::string_view value = {}) {
    MDB_val k = internal::Val(key), v = internal::Val(value);
    EXPECT_EQ(mdb_del(txn_, Dbi(db), &k, value.empty() ? nullptr : &v), 0) << db;
  }
  bool Has(const char* db, std::string_view key) {
    MDB_val k = internal::Val(key), v;
    return mdb_get(txn_, Dbi(db), &k, &v) == 0;
  }
  std::string Get(const char* db, std::string_view key) {
    MDB_val k = internal::Val(key), v;
    EXPECT_EQ(mdb_get(txn_, Dbi(db), &k, &v), 0) << db;
    return std::string(internal::View(v));
  }
  void Drop(const char* db) { EXPECT_EQ(mdb_drop(txn_, Dbi(db), 1), 0) << db; }
  size_t Size(const char* db) {
    MDB_stat st;
    EXPECT_EQ(mdb_stat(txn_, Dbi(db), &st), 0);
    return st.ms_entries;
  }
  // Every (chunk hash, document) of `chunk_docs`.
  std::set<std::pair<uint64_t, DocId>> ChunkDocs() {
    std::set<std::pair<uint64_t, DocId>> out;
    MDB_cursor* c = nullptr;
    EXPECT_EQ(mdb_cursor_open(txn_, Dbi("chunk_docs"), &c), 0);
    MDB_val k, v;
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
      EXPECT_EQ(k.mv_size, 3u);
      EXPECT_EQ(v.mv_size, 12u);
      out.emplace(internal::PostingValue(internal::View(k), internal::View(v)),
                  internal::PostingDoc(internal::View(v)));
    }
    mdb_cursor_close(c);
    return out;
  }
  std::vector<dedup::Chunk> DocChunks(DocId doc) {
    std::vector<dedup::Chunk> out;
    Status s = internal::DecodeDocChunks(Get("doc_chunks", internal::Key64(doc).view()), &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

 private:
  MDB_env* env_ = nullptr;
  MDB_txn* txn_ = nullptr;
};

class ChunksTest : public testing::StoreConformance {
 protected:
  // A page of `text` with a synthetic sketch of shingles `shingles` (which decide the sketch
  // matches) and the chunks of `text`.
  PageInput TextPage(std::string url, const std::string& text,
                     const std::vector<uint64_t>& shingles, uint64_t variant = 0) {
    PageInput p = Page(std::move(url), sweep_, 10, shingles, variant);
    p.sketch.chunks = ChunkText(text);
    return p;
  }
  std::unique_ptr<Store> OpenWithSweep(StoreOptions options = {}) {
    auto store = OpenStore(options);
    if (store != nullptr) sweep_ = store->OpenSweep("s", 10)->id;
    return store;
  }
  static CommonBytes Common(const Store& store, DocId a, DocId b, size_t spans = kMaxCommonSpans) {
    StatusOr<CommonBytes> c = store.BytesInCommon(a, b, spans);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : CommonBytes{};
  }
  // The (hash, doc) pairs `chunk_docs` must hold for these documents' chunks.
  static void AddPairs(DocId doc, const std::vector<dedup::Chunk>& chunks,
                       std::set<std::pair<uint64_t, DocId>>* out) {
    for (const dedup::Chunk& c : chunks) out->emplace(c.hash, doc);
  }

  // For the tests that read or damage `chunk_docs` behind the store's back: every posting in the
  // B-tree at every commit (FORMAT.md, "The write buffer of chunk_docs").
  static StoreOptions Unbuffered() {
    StoreOptions o;
    o.write_buffer = false;
    return o;
  }

  SweepId sweep_ = 0;
  std::mt19937_64 rng_{20261127};
};
SHINGLED_STORE_ENGINES(ChunksTest);

// LMDB only: reads or edits the store's files behind its back.
class LmdbChunksTest : public ChunksTest {};
SHINGLED_STORE_LMDB_ONLY(LmdbChunksTest);

// Both directions of the graph after adds, and the encoding read back.
TEST_P(LmdbChunksTest, GraphAfterAdds) {
  const std::string shared = RandomText(rng_, 8000);
  const std::string a = RandomText(rng_, 3000) + shared + RandomText(rng_, 2000);
  const std::string b = RandomText(rng_, 1000) + shared + RandomText(rng_, 4000);
  const std::string c = RandomText(rng_, 5000);
  std::set<std::pair<uint64_t, DocId>> expected;
  {
    auto store = OpenWithSweep(Unbuffered());
    ASSERT_NE(store, nullptr);
    std::vector<PageInput> pages = {TextPage("http://a/", a, Range(0, 300)),
                                    TextPage("http://b/", b, Range(1000, 300)),
                                    TextPage("http://c/", c, Range(2000, 300))};
    StatusOr<std::vector<PageResult>> r = store->Apply(pages);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ((*r)[i].doc, i + 1);
      AddPairs(i + 1, pages[i].sketch.chunks, &expected);
    }
    testing::StoreFixture::ExpectConsistent(*store);
  }
  Raw raw(dir_.Sub("db"));
  EXPECT_EQ(raw.Size("doc_chunks"), 3u);
  EXPECT_EQ(raw.DocChunks(1), ChunkText(a));
  EXPECT_EQ(raw.DocChunks(2), ChunkText(b));
  EXPECT_EQ(raw.DocChunks(3), ChunkText(c));
  const std::set<std::pair<uint64_t, DocId>> got = raw.ChunkDocs();
  EXPECT_EQ(got, expected);
  // The chunks of the shared run are filed under both documents.
  size_t under_both = 0;
  for (const dedup::Chunk& ch : ChunkText(a)) {
    under_both += got.contains({ch.hash, 1}) && got.contains({ch.hash, 2});
  }
  EXPECT_GE(under_both, 8000 / kMaxChunk);
}

// An identical copy (the same bytes at another URL) writes no chunks; a lexically equivalent
// page (another document) does.
TEST_P(LmdbChunksTest, IdenticalCopiesDoNotDuplicatePostings) {
  const std::string a = RandomText(rng_, 6000);
  auto store = OpenWithSweep(Unbuffered());
  ASSERT_NE(store, nullptr);
  PageResult first = ApplyOne(*store, TextPage("http://a/", a, Range(0, 300)));
  ASSERT_EQ(first.doc, 1u);
  PageResult copy = ApplyOne(*store, TextPage("http://a-copy/", a, Range(0, 300)));
  EXPECT_EQ(copy.doc, 1u);
  EXPECT_EQ(copy.verdict, Verdict::kDuplicate);
  ASSERT_EQ(copy.match_common.size(), 1u);
  EXPECT_EQ(copy.match_common[0].relation, CommonRelation::kNearIdentical);
  EXPECT_DOUBLE_EQ(copy.match_common[0].share_a, 1.0);
  PageResult equivalent = ApplyOne(*store, TextPage("http://a-equiv/", a, Range(0, 300), 1));
  EXPECT_EQ(equivalent.doc, 2u);
  testing::StoreFixture::ExpectConsistent(*store);
  store.reset();
  Raw raw(dir_.Sub("db"));
  EXPECT_EQ(raw.Size("doc_chunks"), 2u);
  std::set<uint64_t> distinct;
  for (const dedup::Chunk& c : ChunkText(a)) distinct.insert(c.hash);
  EXPECT_EQ(raw.Size("chunk_docs"), 2 * distinct.size());
}

// A store of format 8 (built by this code, then its chunk tables dropped and its meta put back as
// format 8 had it) opens as format 9: the tables are there and empty, the chunk params recorded,
// old documents' chunks unknown until they are seen again; new ones get theirs.
TEST_P(LmdbChunksTest, Format8IsUpgraded) {
  const std::string a = RandomText(rng_, 6000);
  const std::string b = a.substr(0, 3000) + RandomText(rng_, 3000);
  {
    auto store = OpenWithSweep();
    ASSERT_NE(store, nullptr);
    std::vector<PageInput> pages = {TextPage("http://a/", a, Range(0, 300)),
                                    TextPage("http://b/", b, Range(1000, 300))};
    ASSERT_TRUE(store->Apply(pages).ok());
  }
  {
    Raw raw(dir_.Sub("db"));
    raw.Put("meta", "format_version", Le64(8));
    for (const char* key : {"param.chunk_input", "param.chunk_min", "param.chunk_max",
                            "param.chunk_divisor", "param.chunk_backup_divisor"}) {
      raw.Del("meta", key);
    }
    raw.Drop("chunk_docs");
    raw.Drop("doc_chunks");
    raw.Drop("template_marks");  // format 10's
    raw.Drop("template_chunks");
  }
  {
    Raw raw(dir_.Sub("db"));
    bool exists = true;
    raw.Dbi("doc_chunks", &exists);
    ASSERT_FALSE(exists);
    ASSERT_FALSE(raw.Has("meta", "param.chunk_min"));
  }
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    testing::StoreFixture::ExpectConsistent(*store);
    CommonBytes unknown = Common(*store, 1, 2);
    EXPECT_FALSE(unknown.known);
    EXPECT_FALSE(unknown.a_known);
    // Document 1 seen again gets its chunks; 2 stays unknown; a new document 3 gets its own.
    sweep_ = store->FindSweep("s")->id;
    EXPECT_EQ(ApplyOne(*store, TextPage("http://a2/", a, Range(0, 300))).doc, 1u);
    EXPECT_EQ(ApplyOne(*store, TextPage("http://c/", b + "x", Range(5000, 300))).doc, 3u);
    EXPECT_TRUE(Common(*store, 1, 3).known);
    EXPECT_FALSE(Common(*store, 1, 2).known);
    EXPECT_TRUE(Common(*store, 1, 2).a_known);
    testing::StoreFixture::ExpectConsistent(*store);
  }
  Raw raw(dir_.Sub("db"));
  EXPECT_EQ(internal::GetLE64(raw.Get("meta", "format_version").data()), internal::kFormatVersion);
  EXPECT_EQ(internal::kFormatVersion, 14u);
  EXPECT_EQ(internal::GetLE64(raw.Get("meta", "param.chunk_min").data()),
            params_.chunking.min_size);
  EXPECT_EQ(internal::GetLE64(raw.Get("meta", "param.chunk_input").data()),
            static_cast<uint64_t>(params_.chunking.input));
  EXPECT_EQ(raw.Size("doc_chunks"), 2u);
}

// Other chunk params than the store's are refused, naming the param.
TEST_P(ChunksTest, ParamsMismatchRefused) {
  ASSERT_NE(OpenStore(), nullptr);
  struct Case {
    void (*change)(dedup::ChunkParams*);
    const char* name;
  };
  for (const Case& c :
       {Case{[](dedup::ChunkParams* p) { p->min_size += 1; }, "chunk_min = "},
        Case{[](dedup::ChunkParams* p) { p->input = dedup::ChunkInput::kRawBytes; },
             "chunk_input = "},
        Case{[](dedup::ChunkParams* p) { p->backup_divisor -= 1; }, "chunk_backup_divisor = "}}) {
    dedup::SketchParams other = params_;
    c.change(&other.chunking);
    const dedup::SketchParams made = params_;
    params_ = other;
    StatusOr<std::unique_ptr<Store>> s = TryOpenStore({}, "db");
    params_ = made;
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(s.status().message().find(c.name), std::string::npos) << s.status().ToString();
  }
  EXPECT_NE(OpenStore(), nullptr);
}

// Check names a damaged doc_chunks record, a posting missing for a record's chunk, and a posting
// its document's record does not back.
TEST_P(LmdbChunksTest, CheckFindsDamage) {
  const std::string a = RandomText(rng_, 6000);
  const std::string b = RandomText(rng_, 6000);
  {
    auto store = OpenWithSweep(Unbuffered());
    ASSERT_NE(store, nullptr);
    std::vector<PageInput> pages = {TextPage("http://a/", a, Range(0, 300)),
                                    TextPage("http://b/", b, Range(1000, 300))};
    ASSERT_TRUE(store->Apply(pages).ok());
  }
  auto problems = [&]() {
    auto store = OpenStore(Unbuffered());
    std::string all;
    if (store == nullptr) return all;
    StatusOr<std::vector<std::string>> p = store->Check();
    EXPECT_TRUE(p.ok());
    for (const std::string& line : *p) all += line + "\n";
    return all;
  };
  ASSERT_EQ(problems(), "");
  const std::vector<dedup::Chunk> chunks_a = ChunkText(a);
  const std::string good = internal::EncodeDocChunks(chunks_a);
  {
    Raw raw(dir_.Sub("db"));
    raw.Put("doc_chunks", internal::Key64(1).view(), good.substr(0, good.size() - 3));
  }
  std::string found = problems();
  EXPECT_NE(found.find("doc_chunks of document 1: doc_chunks record: truncated"), std::string::npos)
      << found;
  // A record that lost its first chunk: that chunk's posting is backed by nothing.
  {
    Raw raw(dir_.Sub("db"));
    raw.Put("doc_chunks", internal::Key64(1).view(),
            internal::EncodeDocChunks(std::span(chunks_a).subspan(1)));
  }
  found = problems();
  EXPECT_NE(found.find("under document 1, whose doc_chunks record lacks it"), std::string::npos)
      << found;
  // Back to good, then a posting deleted.
  {
    Raw raw(dir_.Sub("db"));
    raw.Put("doc_chunks", internal::Key64(1).view(), good);
    const uint64_t h = ChunkText(b)[0].hash;
    raw.Del("chunk_docs", internal::PostingKey(h).view(), internal::Posting(h, 2).view());
  }
  found = problems();
  EXPECT_NE(found.find("doc_chunks of document 2: chunk "), std::string::npos) << found;
  EXPECT_NE(found.find("is not in chunk_docs under it"), std::string::npos) << found;
  // A record of a document that does not exist.
  {
    Raw raw(dir_.Sub("db"));
    const uint64_t h = ChunkText(b)[0].hash;
    raw.Put("chunk_docs", internal::PostingKey(h).view(), internal::Posting(h, 2).view());
    raw.Put("doc_chunks", internal::Key64(9).view(), good);
  }
  found = problems();
  EXPECT_NE(found.find("doc_chunks of document 9: no such document"), std::string::npos) << found;
}

// Bytes in common of documents built from known shared runs: never more than the run, and at
// most 2 * kMaxChunk (the chunk straddling each end of the run) less. Over the trials the mean
// loss is about one average chunk (~320 bytes) per end: asserted at most 2 * 400.
TEST_P(ChunksTest, BytesInCommonBoundOnKnownRuns) {
  auto store = OpenWithSweep();
  ASSERT_NE(store, nullptr);
  const int kTrials = 40;
  double total_loss = 0;
  for (int t = 0; t < kTrials; ++t) {
    const size_t run = 2000 + rng_() % 20000;
    const std::string shared = RandomText(rng_, run);
    const std::string a =
        RandomText(rng_, 100 + rng_() % 5000) + shared + RandomText(rng_, rng_() % 5000);
    const std::string b =
        RandomText(rng_, 100 + rng_() % 5000) + shared + RandomText(rng_, rng_() % 5000);
    const uint64_t base = 10000 * static_cast<uint64_t>(t + 1);
    std::vector<PageInput> pages = {
        TextPage("http://a/" + std::to_string(t), a, Range(base, 200)),
        TextPage("http://b/" + std::to_string(t), b, Range(base + 5000, 200))};
    StatusOr<std::vector<PageResult>> r = store->Apply(pages);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const CommonBytes c = Common(*store, (*r)[0].doc, (*r)[1].doc);
    ASSERT_TRUE(c.known);
    EXPECT_EQ(c.length_a, a.size());
    EXPECT_EQ(c.length_b, b.size());
    EXPECT_LE(c.shared_bytes, run) << "trial " << t;
    EXPECT_GE(c.shared_bytes + 2 * kMaxChunk, run) << "trial " << t;
    total_loss += static_cast<double>(run - std::min<uint64_t>(run, c.shared_bytes));
    // Every span is the same text in both.
    for (const CommonSpan& s : c.spans) {
      ASSERT_EQ(a.substr(s.offset_a, s.length), b.substr(s.offset_b, s.length)) << "trial " << t;
    }
    EXPECT_EQ(c.spans.size(), c.shared_chunks);
    EXPECT_DOUBLE_EQ(c.share_a,
                     static_cast<double>(c.shared_bytes) / static_cast<double>(a.size()));
  }
  const double mean_loss = total_loss / kTrials;
  std::printf("mean loss %.0f bytes of a shared run (2 ends, chunks of ~320 bytes)\n", mean_loss);
  EXPECT_LE(mean_loss, 800.0);
}

// The relation for copies, containments (the short in the long, asked both ways), overlaps,
// unrelated documents, and the spans' bound.
TEST_P(ChunksTest, Relations) {
  auto store = OpenWithSweep();
  ASSERT_NE(store, nullptr);
  const std::string article = RandomText(rng_, 10000);
  const std::string long_page = RandomText(rng_, 20000) + article + RandomText(rng_, 20000);
  const std::string base = RandomText(rng_, 20000);
  std::string edited = base;
  edited.replace(10000, 5, "EDIT!");  // one small edit
  const std::string left = RandomText(rng_, 8000) + base.substr(0, 6000);
  const std::string unrelated = RandomText(rng_, 7000);
  std::vector<PageInput> pages = {
      TextPage("http://article/", article, Range(0, 200)),         // 1
      TextPage("http://long/", long_page, Range(1000, 200)),       // 2
      TextPage("http://base/", base, Range(2000, 200)),            // 3
      TextPage("http://edited/", edited, Range(3000, 200)),        // 4
      TextPage("http://left/", left, Range(4000, 200)),            // 5
      TextPage("http://unrelated/", unrelated, Range(5000, 200)),  // 6
      Page("http://no-chunks/", sweep_, 10, Range(6000, 200)),     // 7
  };
  ASSERT_TRUE(store->Apply(pages).ok());

  CommonBytes c = Common(*store, 3, 4);
  EXPECT_EQ(c.relation, CommonRelation::kNearIdentical);
  EXPECT_GE(c.share_a, 0.9);
  c = Common(*store, 3, 3);
  EXPECT_EQ(c.relation, CommonRelation::kNearIdentical);
  EXPECT_EQ(c.shared_bytes, base.size());

  c = Common(*store, 2, 1);  // the long page contains the article
  EXPECT_EQ(c.relation, CommonRelation::kAContainsB);
  EXPECT_GE(c.share_b, kCommonHighShare);
  EXPECT_LT(c.share_a, 0.25);
  c = Common(*store, 1, 2);
  EXPECT_EQ(c.relation, CommonRelation::kBContainsA);
  EXPECT_GE(c.share_a, kCommonHighShare);

  c = Common(*store, 3, 5);  // 6,000 bytes shared of 20,000 and 14,000
  EXPECT_EQ(c.relation, CommonRelation::kOverlap);
  EXPECT_GT(c.shared_bytes, 6000u - 2 * kMaxChunk);
  EXPECT_LE(c.shared_bytes, 6000u);

  c = Common(*store, 3, 6);
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.relation, CommonRelation::kNone);
  EXPECT_EQ(c.shared_bytes, 0u);

  c = Common(*store, 3, 7);  // a document without chunks: unknown, not 0
  EXPECT_FALSE(c.known);
  EXPECT_TRUE(c.a_known);
  EXPECT_FALSE(c.b_known);

  c = Common(*store, 3, 4, /*spans=*/2);
  EXPECT_EQ(c.spans.size(), 2u);
  EXPECT_TRUE(c.spans_truncated);
  EXPECT_GT(c.shared_chunks, 2u);

  StatusOr<CommonBytes> missing = store->BytesInCommon(3, 99);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

// The exact bytes of a `doc_chunks` record (FORMAT.md, "Chunks"), and the decoder's refusals.
TEST(DocChunksCodec, ExactBytes) {
  const std::vector<dedup::Chunk> chunks = {{0x0102030405060708ull, 300},
                                            {0xff00000000000001ull, 5}};
  const std::string bytes = internal::EncodeDocChunks(chunks);
  EXPECT_EQ(bytes, std::string("\x02\x01\x02\x03\x04\x05\x06\x07\x08\xac\x02"
                               "\xff\x00\x00\x00\x00\x00\x00\x01\x05",
                               20));
  std::vector<dedup::Chunk> back;
  ASSERT_TRUE(internal::DecodeDocChunks(bytes, &back).ok());
  EXPECT_EQ(back, chunks);
  EXPECT_EQ(internal::DecodeDocChunks(bytes + "x", &back).code(), StatusCode::kDataLoss);
  EXPECT_EQ(internal::DecodeDocChunks(bytes.substr(0, 19), &back).code(), StatusCode::kDataLoss);
  EXPECT_EQ(internal::DecodeDocChunks(std::string("\x01"
                                                  "12345678"
                                                  "\x00",
                                                  10),
                                      &back)
                .code(),
            StatusCode::kDataLoss);  // a zero length
  EXPECT_EQ(internal::DecodeDocChunks(std::string("\xff\xff\x03", 3), &back).code(),
            StatusCode::kDataLoss);  // a count the bytes cannot hold
}

// A chunk repeated in one document counts once per occurrence matched, never more than the
// other side holds.
TEST_P(ChunksTest, RepeatedChunksCountOncePerOccurrence) {
  const std::vector<dedup::Chunk> a = {{1, 100}, {1, 100}, {1, 100}, {2, 50}};
  const std::vector<dedup::Chunk> b = {{3, 10}, {1, 100}, {2, 50}};
  CommonBytes c = BytesInCommonOf(a, b);
  EXPECT_EQ(c.shared_bytes, 150u);
  EXPECT_EQ(c.shared_chunks, 2u);
  ASSERT_EQ(c.spans.size(), 2u);
  EXPECT_EQ(c.spans[0], (CommonSpan{0, 10, 100}));
  EXPECT_EQ(c.spans[1], (CommonSpan{300, 110, 50}));
  c = BytesInCommonOf(b, a);
  EXPECT_EQ(c.shared_bytes, 150u);
  EXPECT_EQ(c.relation, CommonRelation::kBContainsA);  // b (160 bytes) is 94% in a
}

// The writer's matches and the similarity queries carry bytes in common; a backup copies the
// chunk tables.
TEST_P(ChunksTest, MatchesSimilarAndBackup) {
  const std::string a = RandomText(rng_, 10000);
  std::string b = a;
  b.replace(5000, 10, "0123456789");
  auto store = OpenWithSweep();
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(ApplyOne(*store, TextPage("http://a/", a, Range(0, 400))).doc, 1u);
  // 395 of 400 shingles shared: a fungible, similar match.
  PageResult r = ApplyOne(*store, TextPage("http://b/", b, testing::Variant(0, 400, 395, 70000)));
  ASSERT_EQ(r.doc, 2u);
  ASSERT_EQ(r.matches.size(), 1u);
  ASSERT_EQ(r.match_common.size(), 1u);
  const CommonBytes stored = Common(*store, 2, 1);
  EXPECT_TRUE(r.match_common[0].known);
  EXPECT_EQ(r.match_common[0].shared_bytes, stored.shared_bytes);
  EXPECT_EQ(r.match_common[0].relation, CommonRelation::kNearIdentical);
  EXPECT_TRUE(r.match_common[0].spans.empty());

  QueryOptions q;
  q.threshold = 0.5;
  StatusOr<std::vector<SimilarDoc>> similar = store->SimilarToDocument(2, q);
  ASSERT_TRUE(similar.ok());
  ASSERT_EQ(similar->size(), 1u);
  EXPECT_EQ((*similar)[0].common.shared_bytes, stored.shared_bytes);
  similar = store->SimilarToUrl("http://a/", q);
  ASSERT_TRUE(similar.ok());
  ASSERT_EQ(similar->size(), 1u);
  EXPECT_EQ((*similar)[0].common.share_a, Common(*store, 1, 2).share_a);
  dedup::Sketch sketch = testing::SyntheticSketch(params_, Range(0, 400));
  sketch.chunks = ChunkText(a);
  similar = store->SimilarToSketch(sketch, q);
  ASSERT_TRUE(similar.ok());
  ASSERT_EQ(similar->size(), 2u);
  for (const SimilarDoc& d : *similar) EXPECT_TRUE(d.common.known);

  const MappedFile* mapped = store->mapped_file();
  if (mapped == nullptr) return;  // the rest is about the backup, which copies the mapped file
  const std::string dest = dir_.Sub("backup");
  std::filesystem::create_directories(dest);
  ASSERT_TRUE(mapped->Backup(dest).ok());
  auto copy = OpenStore({}, "backup");
  ASSERT_NE(copy, nullptr);
  const CommonBytes copied = Common(*copy, 2, 1);
  EXPECT_EQ(copied.shared_bytes, stored.shared_bytes);
  EXPECT_EQ(copied.spans, stored.spans);
  testing::StoreFixture::ExpectConsistent(*copy);
}

}  // namespace
}  // namespace shingled::store
