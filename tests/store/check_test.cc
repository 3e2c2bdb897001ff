// Store::Check against damaged stores: each test opens the store's LMDB environment directly,
// changes one thing behind Store's back (what a bad disk, a bug in an older build or a hand edit
// could leave), reopens it and expects Check to name the damage (store/FORMAT.md, "Invariants",
// numbered as there). Check must report, never crash nor read past a key or value; the queries
// that read a damaged record must answer an error.
#include <gtest/gtest.h>
#include <lmdb.h>

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/schema.h"
#include "store/internal/write_buffer.h"
#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/store/synthetic.h"

namespace shingled::store {
namespace {

using internal::DocumentRecord;
using internal::Key64;
using internal::SweepKey;
using internal::SweepRecord;
using internal::VersionKey;
using internal::VersionRecord;
using testing::Range;
using testing::Variant;

std::string Le64(uint64_t v) {
  std::string out;
  internal::AppendLE64(&out, v);
  return out;
}

// The store's LMDB environment opened directly, in one write transaction that the destructor
// commits. Every call adds a test failure on an LMDB error.
class RawStore {
 public:
  explicit RawStore(const std::string& dir) {
    EXPECT_EQ(mdb_env_create(&env_), 0);
    EXPECT_EQ(mdb_env_set_maxdbs(env_, 32), 0);
    EXPECT_EQ(mdb_env_open(env_, dir.c_str(), 0, 0644), 0);
    EXPECT_EQ(mdb_txn_begin(env_, nullptr, 0, &txn_), 0);
  }
  ~RawStore() {
    EXPECT_EQ(mdb_txn_commit(txn_), 0);
    mdb_env_close(env_);
  }
  RawStore(const RawStore&) = delete;
  RawStore& operator=(const RawStore&) = delete;

  // Adds the entry (one more duplicate in a DUPSORT database) or overwrites its value.
  void Put(const char* db, std::string_view key, std::string_view value) {
    MDB_val k = internal::Val(key), v = internal::Val(value);
    EXPECT_EQ(mdb_put(txn_, Dbi(db), &k, &v, 0), 0) << db;
  }
  // Deletes the key, or only the duplicate `value` of it.
  void Del(const char* db, std::string_view key, std::string_view value = {}) {
    MDB_val k = internal::Val(key), v = internal::Val(value);
    EXPECT_EQ(mdb_del(txn_, Dbi(db), &k, value.empty() ? nullptr : &v), 0) << db;
  }
  std::string Get(const char* db, std::string_view key) {
    MDB_val k = internal::Val(key), v;
    EXPECT_EQ(mdb_get(txn_, Dbi(db), &k, &v), 0) << db;
    return std::string(internal::View(v));
  }
  DocumentRecord Document(DocId doc) {
    StatusOr<DocumentRecord> rec = internal::DecodeDocument(Get("documents", Key64(doc).view()));
    EXPECT_TRUE(rec.ok()) << rec.status().ToString();
    return rec.ok() ? *rec : DocumentRecord{};
  }
  VersionRecord Version(UrlId url, uint32_t seq) {
    StatusOr<VersionRecord> rec = internal::DecodeVersion(Get("versions", VersionKey(url, seq)));
    EXPECT_TRUE(rec.ok()) << rec.status().ToString();
    return rec.ok() ? *rec : VersionRecord{};
  }
  uint64_t Meta(const char* key) { return internal::GetLE64(Get("meta", key).data()); }
  // Writes the fixture's sweeps (1 and 2, without a scope) as format 7 did: without the scope's
  // count, their last byte.
  void SweepsAsFormat7() {
    for (SweepId id : {1u, 2u}) {
      std::string rec = Get("sweeps", SweepKey(id));
      ASSERT_EQ(rec.back(), '\0');
      rec.pop_back();
      Put("sweeps", SweepKey(id), rec);
    }
  }
  // Deletes every (key, entry) of a DUPSORT database that `drop` selects; returns how many.
  size_t DeleteIf(const char* db,
                  const std::function<bool(std::string_view key, std::string_view entry)>& drop) {
    MDB_cursor* c = nullptr;
    EXPECT_EQ(mdb_cursor_open(txn_, Dbi(db), &c), 0) << db;
    std::vector<std::pair<std::string, std::string>> doomed;
    MDB_val k, v;
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
      if (drop(internal::View(k), internal::View(v))) {
        doomed.emplace_back(internal::View(k), internal::View(v));
      }
    }
    mdb_cursor_close(c);
    for (const auto& [key, entry] : doomed) Del(db, key, entry);
    return doomed.size();
  }
  // The number of entries (duplicates included).
  size_t Size(const char* db) {
    MDB_stat st;
    EXPECT_EQ(mdb_stat(txn_, Dbi(db), &st), 0);
    return st.ms_entries;
  }

 private:
  MDB_dbi Dbi(const char* name) {
    unsigned flags = 0;
    for (const internal::TableSpec& t : internal::kTables) {
      if (std::string_view(t.name) == name) flags = t.flags;
    }
    MDB_dbi dbi = 0;
    EXPECT_EQ(mdb_dbi_open(txn_, name, flags, &dbi), 0) << name;
    return dbi;
  }

  MDB_env* env_ = nullptr;
  MDB_txn* txn_ = nullptr;
};

// A store with a bit of everything (documents with and without a sketch, a cluster of three, a
// similar link, two sweeps, a URL with two versions), closed, for each test to damage:
//   sweep 1 "s1": http://a/ doc 1; http://b/ doc 2 (fungible with 1); http://c/ doc 3 (lexically
//     equivalent to 1, rep 1); http://d/ doc 4; http://e/ doc 5 (similar to 4, not fungible).
//   sweep 2 "s2": http://a/ doc 6 (changed); http://b/ unchanged.
// Url ids follow the letters (a = 1 ... e = 5); cluster 1 = {1, 2, 3}.
class CheckTest : public testing::StoreFixture {
 protected:
  void SetUp() override {
    // Every posting in the B-trees (the tests damage them there); reopened with the buffer.
    StoreOptions o;
    o.write_buffer = false;
    auto store = OpenStore(o);
    ASSERT_NE(store, nullptr);
    SweepId s1 = store->OpenSweep("s1", 10)->id;
    std::vector<PageInput> first = {
        Page("http://a/", s1, 10, Range(0, 400)),
        // 395 of 400 shared: fungible (P ~ 0.99)
        Page("http://b/", s1, 10, Variant(0, 400, 395, 70000)),
        Page("http://c/", s1, 10, Range(0, 400), /*variant=*/1),
        Page("http://d/", s1, 10, Range(1u << 20, 1000)),
        // 800/1200 = 0.67: similar, not fungible (P ~ 2e-4)
        Page("http://e/", s1, 10, Variant(1u << 20, 1000, 800, 1u << 21))};
    StatusOr<std::vector<PageResult>> r = store->Apply(first);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (size_t i = 0; i < r->size(); ++i) ASSERT_EQ((*r)[i].doc, i + 1);
    ASSERT_EQ((*r)[1].cluster, 1u);
    ASSERT_EQ((*r)[2].cluster, 1u);
    ASSERT_EQ((*r)[4].cluster, 5u);
    SweepId s2 = store->OpenSweep("s2", 20)->id;
    std::vector<PageInput> second = {Page("http://a/", s2, 20, Range(1u << 22, 300)),
                                     Page("http://b/", s2, 20, Variant(0, 400, 395, 70000))};
    r = store->Apply(second);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ((*r)[0].doc, 6u);
    ASSERT_EQ((*r)[1].verdict, Verdict::kUnchanged);
    testing::StoreFixture::ExpectConsistent(*store);
    store.reset();
    RawStore raw(dir_.Sub("db"));
    ASSERT_EQ(raw.Document(3).rep, 1u);
    // 1 - 2 (fungible and similar) and 4 - 5, under the later document.
    ASSERT_EQ(raw.Size("links"), 2u);
    ASSERT_EQ(internal::GetBE64(raw.Get("links", Key64(2).view()).data()), 1u);
    ASSERT_EQ(internal::GetBE64(raw.Get("links", Key64(5).view()).data()), 4u);
  }

  void Damage(const std::function<void(RawStore&)>& damage) {
    RawStore raw(dir_.Sub("db"));
    damage(raw);
  }
  std::vector<std::string> Problems() {
    auto store = OpenStore();
    if (store == nullptr) return {"the store does not open"};
    StatusOr<std::vector<std::string>> problems = store->Check();
    EXPECT_TRUE(problems.ok()) << problems.status().ToString();
    return problems.ok() ? *problems : std::vector<std::string>{};
  }
  // Check finds problems, one of which contains `what`.
  void ExpectProblem(const std::string& what) {
    std::vector<std::string> problems = Problems();
    bool found = false;
    std::string all;
    for (const std::string& p : problems) {
      found |= p.find(what) != std::string::npos;
      all += "\n  " + p;
    }
    EXPECT_TRUE(found) << "no problem mentions \"" << what << "\"; problems:" << all;
  }
};

// --- 1. meta ---

TEST_F(CheckTest, CountsOffByOne) {
  Damage([](RawStore& raw) {
    for (const char* key : {"count.documents", "count.urls", "count.versions", "count.clusters"}) {
      raw.Put("meta", key, Le64(raw.Meta(key) + 1));
    }
  });
  ExpectProblem("meta count.documents is 7, the store has 6");
  ExpectProblem("meta count.urls is 6, the store has 5");
  ExpectProblem("meta count.versions is 8, the store has 7");
  ExpectProblem("meta count.clusters is 2, the store has 1");
}

TEST_F(CheckTest, LargestClusterWrong) {
  Damage([](RawStore& raw) { raw.Put("meta", internal::kLargestClusterKey, Le64(2)); });
  ExpectProblem("meta largest_cluster is 2, the largest cluster has 3 documents");
}

TEST_F(CheckTest, MetaCounterOfWrongLength) {
  Damage([](RawStore& raw) { raw.Put("meta", "count.urls", "\x05"); });
  ExpectProblem("meta count.urls is not 8 bytes");
  // Stats read it as 0 before.
  StatusOr<StoreStats> stats = OpenStore()->Stats();
  EXPECT_EQ(stats.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(stats.status().message().find("meta count.urls is not 8 bytes"), std::string::npos)
      << stats.status().ToString();
}

TEST_F(CheckTest, MissingParamRefusedAtOpen) {
  Damage([](RawStore& raw) { raw.Del("meta", "param.seed"); });
  StatusOr<std::unique_ptr<Store>> s =
      Store::Open(dir_.Sub("db"), {}, params_, testing::kPolynomial);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(s.status().message().find("param.seed"), std::string::npos) << s.status().message();
}

// Open took a store without a format version for a new one and wrote the caller's parameters
// and zero counters over the store's own.
TEST_F(CheckTest, MissingFormatVersionRefusedAtOpen) {
  Damage([](RawStore& raw) { raw.Del("meta", "format_version"); });
  StatusOr<std::unique_ptr<Store>> s =
      Store::Open(dir_.Sub("db"), {}, params_, testing::kPolynomial);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(s.status().message().find("lacks format_version"), std::string::npos)
      << s.status().message();
  Damage([](RawStore& raw) { EXPECT_EQ(raw.Meta("count.documents"), 6u); });
}

// --- 10. the write buffer's watermarks ---

std::string Watermarks(uint64_t each) {
  std::string v;
  for (int i = 0; i < internal::kBufferSlices; ++i) internal::AppendLE64(&v, each);
  return v;
}

// The fixture wrote every posting to the B-trees (watermarks at document 6). Watermarks lowered
// to 2 leave the postings of documents 3-6 in the B-trees, where the store would not look for them
// (its buffer, rebuilt from the documents, holds them too): both directions are named.
TEST_F(CheckTest, PostingsAboveTheirWatermark) {
  Damage([](RawStore& raw) {
    EXPECT_EQ(raw.Get("meta", internal::kBufferWatermarksKey), Watermarks(6));
    raw.Put("meta", internal::kBufferWatermarksKey, Watermarks(2));
  });
  ExpectProblem("document 4: in features under ");
  ExpectProblem(", above the watermark of its slice (slice ");
  ExpectProblem("features posting under ");
}

TEST_F(CheckTest, WatermarksPastTheLastDocumentOrOfWrongSize) {
  Damage([](RawStore& raw) { raw.Put("meta", internal::kBufferWatermarksKey, Watermarks(9)); });
  ExpectProblem("meta buffer.watermarks: slice 0 is at document 9, past the last document, 6");
  Damage([](RawStore& raw) { raw.Put("meta", internal::kBufferWatermarksKey, "\x01"); });
  ExpectProblem("meta buffer.watermarks is 1 bytes, not " + std::to_string(8 * internal::kBufferSlices));
  // The store refuses to write over it, and its queries say why.
  auto store = OpenStore();
  std::vector<PageInput> page = {Page("http://f/", 2, 30, Range(1u << 23, 300))};
  EXPECT_EQ(store->Apply(page).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(store->SimilarToDocument(1, {}).status().code(), StatusCode::kDataLoss);
}

// A store of format 3 (no write buffer: every posting in the B-trees) opens as this format with
// every watermark at its last document, and takes new pages.
TEST_F(CheckTest, Format3IsUpgraded) {
  Damage([](RawStore& raw) {
    raw.Put("meta", "format_version", Le64(3));
    raw.SweepsAsFormat7();
    raw.Del("meta", internal::kBufferWatermarksKey);
    raw.Del("meta", internal::kBufferNextSliceKey);
  });
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    testing::StoreFixture::ExpectConsistent(*store);
    std::vector<PageInput> page = {Page("http://f/", 2, 30, Range(1u << 23, 300))};
    ASSERT_TRUE(store->Apply(page).ok());
    testing::StoreFixture::ExpectConsistent(*store);
  }
  Damage([](RawStore& raw) {
    EXPECT_EQ(raw.Meta("format_version"), internal::kFormatVersion);
    std::string marks = raw.Get("meta", internal::kBufferWatermarksKey);
    ASSERT_EQ(marks.size(), 8u * internal::kBufferSlices);
    // One slice put by the commit above, at document 7; the others at 6, as upgraded.
    size_t at7 = 0;
    for (int i = 0; i < internal::kBufferSlices; ++i) {
      const uint64_t w = internal::GetLE64(marks.data() + 8 * i);
      EXPECT_TRUE(w == 6 || w == 7) << w;
      at7 += w == 7;
    }
    EXPECT_EQ(at7, 1u);
  });
}

// A store of format 4 (8 slices, by a value's top 3 bits) opens as format 5 with each slice's
// watermark on both of its halves. Here the old slice 7 (values 111...) is at document 5: the
// postings of document 6 there are taken out of the B-trees, so that the store is consistent
// only if the new slices 14 and 15 are at 5 (the buffer then holds those postings) and the
// others at 6.
TEST_F(CheckTest, Format4IsUpgraded) {
  Damage([](RawStore& raw) {
    raw.Put("meta", "format_version", Le64(4));
    raw.SweepsAsFormat7();
    std::string old_marks;
    for (DocId w : {6, 6, 6, 6, 6, 6, 6, 5}) internal::AppendLE64(&old_marks, w);
    raw.Put("meta", internal::kBufferWatermarksKey, old_marks);
    raw.Put("meta", internal::kBufferNextSliceKey, Le64(3));
    size_t removed = 0;
    for (const char* index : {"features", "supershingles", "samples"}) {
      removed += raw.DeleteIf(index, [](std::string_view key, std::string_view entry) {
        return internal::BufferSlice(internal::PostingValue(key, entry)) >= 14 &&
               internal::PostingDoc(entry) == 6;
      });
    }
    EXPECT_GT(removed, 0u);
  });
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    testing::StoreFixture::ExpectConsistent(*store);
  }
  Damage([](RawStore& raw) {
    EXPECT_EQ(raw.Meta("format_version"), internal::kFormatVersion);
    const std::string marks = raw.Get("meta", internal::kBufferWatermarksKey);
    ASSERT_EQ(marks.size(), 8u * internal::kBufferSlices);
    for (int i = 0; i < internal::kBufferSlices; ++i) {
      EXPECT_EQ(internal::GetLE64(marks.data() + 8 * i), i >= 14 ? 5u : 6u) << i;
    }
    EXPECT_EQ(raw.Meta(internal::kBufferNextSliceKey), 6u);  // old slice 3's first half
  });
}

// A store of format 5 (every fingerprint in the B-trees, records without ownership flags) opens
// as this format with the fingerprint watermarks at its last document, and its fingerprints are
// found: a copy of document 4's text in other bytes is lexically equivalent to it.
TEST_F(CheckTest, Format5IsUpgraded) {
  Damage([](RawStore& raw) {
    raw.Put("meta", "format_version", Le64(5));
    raw.SweepsAsFormat7();
    raw.Del("meta", internal::kFingerprintWatermarksKey);
    raw.Del("meta", internal::kFingerprintNextSliceKey);
    for (DocId d = 1; d <= 6; ++d) {
      DocumentRecord rec = raw.Document(d);
      rec.owns_lexical = rec.owns_shingle = false;
      raw.Put("documents", Key64(d).view(), internal::EncodeDocument(rec));
    }
  });
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    testing::StoreFixture::ExpectConsistent(*store);
    std::vector<PageInput> pages = {Page("http://f/", 2, 30, Range(1u << 20, 1000), /*variant=*/1),
                                    Page("http://g/", 2, 30, Range(1u << 23, 300))};
    StatusOr<std::vector<PageResult>> r = store->Apply(pages);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)[0].verdict, Verdict::kDuplicate);
    ASSERT_EQ((*r)[0].matches.size(), 1u);
    EXPECT_EQ((*r)[0].matches[0].doc, 4u);
    EXPECT_EQ((*r)[0].matches[0].relation, Relation::kLexical);
    EXPECT_EQ((*r)[1].verdict, Verdict::kNew);
    testing::StoreFixture::ExpectConsistent(*store);
  }
  Damage([](RawStore& raw) {
    EXPECT_EQ(raw.Meta("format_version"), internal::kFormatVersion);
    const std::string marks = raw.Get("meta", internal::kFingerprintWatermarksKey);
    ASSERT_EQ(marks.size(), 8u * internal::kBufferSlices);
    for (int i = 0; i < internal::kBufferSlices; ++i) {
      // Slice 0 put by the commit above, at document 8; the others at 6, as upgraded.
      EXPECT_EQ(internal::GetLE64(marks.data() + 8 * i), i == 0 ? 8u : 6u) << i;
    }
    EXPECT_FALSE(raw.Document(7).owns_lexical);
    EXPECT_TRUE(raw.Document(8).owns_lexical);
    EXPECT_TRUE(raw.Document(8).owns_shingle);
  });
}

// A store of format 6 (each link under both of its documents) opens as format 7 with the entries
// under the earlier documents deleted, and nothing else changed; it then links as format 7 does.
TEST_F(CheckTest, Format6IsUpgraded) {
  std::string fp_marks;
  Damage([&](RawStore& raw) {
    raw.Put("meta", "format_version", Le64(6));
    raw.SweepsAsFormat7();
    fp_marks = raw.Get("meta", internal::kFingerprintWatermarksKey);
    raw.Put("links", Key64(1).view(),
            raw.Get("links", Key64(2).view()).replace(0, 8, Key64(2).view()));
    raw.Put("links", Key64(4).view(),
            raw.Get("links", Key64(5).view()).replace(0, 8, Key64(5).view()));
    EXPECT_EQ(raw.Size("links"), 4u);
    // A damaged entry is left for Check to report.
    raw.Put("links", Key64(6).view(), Key64(4).view());
  });
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    StatusOr<std::vector<std::string>> problems = store->Check();
    ASSERT_TRUE(problems.ok()) << problems.status().ToString();
    std::string all;
    for (const std::string& p : *problems) all += p + "\n";
    ASSERT_EQ(problems->size(), 1u) << all;
    EXPECT_NE((*problems)[0].find("links has an entry of 8 + 8 bytes"), std::string::npos) << all;
  }
  Damage([&](RawStore& raw) {
    EXPECT_EQ(raw.Meta("format_version"), internal::kFormatVersion);
    EXPECT_EQ(raw.Get("meta", internal::kFingerprintWatermarksKey), fp_marks);
    EXPECT_EQ(raw.Size("links"), 3u);
    EXPECT_EQ(internal::GetBE64(raw.Get("links", Key64(2).view()).data()), 1u);
    raw.Del("links", Key64(6).view(), Key64(4).view());
  });
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    testing::StoreFixture::ExpectConsistent(*store);
    // 240 of 360 shingles shared with document 6 (0.67): similar, not fungible.
    std::vector<PageInput> page = {Page("http://g/", 2, 30, Variant(1u << 22, 300, 240, 1u << 23))};
    StatusOr<std::vector<PageResult>> r = store->Apply(page);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ((*r)[0].doc, 7u);
    ASSERT_EQ((*r)[0].matches.size(), 1u);
    EXPECT_EQ((*r)[0].matches[0].doc, 6u);
    testing::StoreFixture::ExpectConsistent(*store);
  }
  Damage([](RawStore& raw) {
    EXPECT_EQ(raw.Size("links"), 3u);
    EXPECT_EQ(internal::GetBE64(raw.Get("links", Key64(7).view()).data()), 6u);
  });
}

// A store of format 7 (sweeps without a scope) opens as format 8: each sweep gets an empty scope
// (closing an old open sweep records nothing gone) and a start no later than its earliest
// version (a WARC imported without a date opened its sweep after the records it holds).
TEST_F(CheckTest, Format7IsUpgraded) {
  Damage([](RawStore& raw) {
    raw.Put("meta", "format_version", Le64(7));
    // s2 opened at 25, after its versions (dated 20); s1 at 10, as its versions.
    StatusOr<SweepRecord> s2 = internal::DecodeSweep(raw.Get("sweeps", SweepKey(2)));
    ASSERT_TRUE(s2.ok());
    s2->start = 25;
    raw.Put("sweeps", SweepKey(2), internal::EncodeSweep(*s2));
    raw.SweepsAsFormat7();
  });
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    testing::StoreFixture::ExpectConsistent(*store);
    std::vector<SweepInfo> sweeps = *store->Sweeps();
    ASSERT_EQ(sweeps.size(), 2u);
    EXPECT_EQ(sweeps[0].start, 10);
    EXPECT_EQ(sweeps[1].start, 20);
    EXPECT_TRUE(sweeps[1].scope.empty());
    // An old sweep without a scope records nothing gone when it closes.
    StatusOr<SweepClosing> closed = store->CloseSweep(2, 30);
    ASSERT_TRUE(closed.ok()) << closed.status().ToString();
    EXPECT_EQ(closed->gone, 0u);
    testing::StoreFixture::ExpectConsistent(*store);
  }
  Damage([](RawStore& raw) { EXPECT_EQ(raw.Meta("format_version"), internal::kFormatVersion); });
}

// --- 2. documents ---

TEST_F(CheckTest, DocumentRecordTruncated) {
  Damage([](RawStore& raw) {
    std::string record = raw.Get("documents", Key64(1).view());
    raw.Put("documents", Key64(1).view(), record.substr(0, record.size() / 2));
  });
  ExpectProblem("document 1: document record does not decode");
  // Its postings now name a document that is not there.
  ExpectProblem("names document 1, not a document with a sketch");
}

TEST_F(CheckTest, DocumentRecordGarbage) {
  std::mt19937_64 rng(42);
  std::string random(1600, '\0');
  for (char& c : random) c = static_cast<char>(rng());
  // A record whose head decodes and whose minhash count claims 2^60 values.
  std::string huge_count = "\x01";
  for (int i = 0; i < 5; ++i) internal::AppendVarint(&huge_count, 1);
  huge_count += std::string(48, 'x');
  internal::AppendVarint(&huge_count, uint64_t{1} << 60);
  for (const std::string& garbage : {std::string(), std::string("\x01"), std::string("\x00", 1),
                                     std::string(64, '\xff'), random, huge_count}) {
    SCOPED_TRACE(::testing::PrintToString(garbage.substr(0, 16)));
    Damage([&](RawStore& raw) { raw.Put("documents", Key64(4).view(), garbage); });
    ExpectProblem("document 4: ");
  }
}

TEST_F(CheckTest, RepNamesMissingDocument) {
  Damage([](RawStore& raw) {
    DocumentRecord rec = raw.Document(3);
    rec.rep = 99;
    raw.Put("documents", Key64(3).view(), internal::EncodeDocument(rec));
  });
  ExpectProblem("document 3: representative 99 is not a document with a sketch");
}

TEST_F(CheckTest, RepNamesDocumentWithoutSketch) {
  Damage([](RawStore& raw) {
    DocumentRecord rec = raw.Document(3);
    rec.rep = 3;
    raw.Put("documents", Key64(3).view(), internal::EncodeDocument(rec));
  });
  ExpectProblem("document 3: representative 3 is not a document with a sketch");
}

// --- 15. rep_docs ---

TEST_F(CheckTest, RepDocsEntryMissing) {
  Damage([](RawStore& raw) {
    ASSERT_EQ(raw.Size("rep_docs"), 1u);
    raw.Del("rep_docs", Key64(1).view(), Key64(3).view());
  });
  ExpectProblem("document 3: names representative 1 but rep_docs does not file it there");
}

TEST_F(CheckTest, RepDocsEntryUnderAnotherDocument) {
  Damage([](RawStore& raw) { raw.Put("rep_docs", Key64(4).view(), Key64(2).view()); });
  ExpectProblem("rep_docs files document 2 under 4, which is not its representative");
}

TEST_F(CheckTest, RepDocsEntryOfWrongLength) {
  Damage([](RawStore& raw) { raw.Put("rep_docs", Key64(1).view(), "short"); });
  ExpectProblem("rep_docs has an entry of 8 + 5 bytes");
}

TEST_F(CheckTest, IdenticalFingerprintMissing) {
  Damage([](RawStore& raw) {
    raw.Del("fp_identical", internal::FingerprintKey(raw.Document(4).identical));
  });
  ExpectProblem("document 4: fp_identical maps its fingerprint to 0");
}

// Documents 1 and 3 share their lexical fingerprint, which document 1 owns.
TEST_F(CheckTest, LexicalFingerprintOfAnotherGroup) {
  Damage([](RawStore& raw) {
    EXPECT_TRUE(raw.Document(1).owns_lexical);
    EXPECT_FALSE(raw.Document(3).owns_lexical);
    raw.Put("fp_lexical", internal::FingerprintKey(raw.Document(3).lexical), Key64(5).view());
  });
  ExpectProblem("document 1: owns its fp_lexical fingerprint, which maps to 5");
  ExpectProblem("document 3: fp_lexical maps its fingerprint to 5, not to its group");
}

TEST_F(CheckTest, OwnershipFlagOfAFingerprintAnotherOwns) {
  Damage([](RawStore& raw) {
    DocumentRecord rec = raw.Document(3);
    EXPECT_FALSE(rec.owns_shingle);
    rec.owns_shingle = true;
    raw.Put("documents", Key64(3).view(), internal::EncodeDocument(rec));
  });
  ExpectProblem("document 3: owns its fp_shingle fingerprint, which maps to 1");
}

// The fixture's store holds every fingerprint in the B-trees, its watermarks at document 6.
TEST_F(CheckTest, FingerprintEntryAboveTheWatermark) {
  Damage([](RawStore& raw) {
    EXPECT_EQ(raw.Get("meta", internal::kFingerprintWatermarksKey), Watermarks(6));
    raw.Put("meta", internal::kFingerprintWatermarksKey, Watermarks(5));
  });
  ExpectProblem("fp_identical entry names document 6, above the watermark of its slice (slice ");
}

TEST_F(CheckTest, FingerprintWatermarksPastTheLastDocumentOrMissing) {
  Damage(
      [](RawStore& raw) { raw.Put("meta", internal::kFingerprintWatermarksKey, Watermarks(9)); });
  ExpectProblem("meta fp_buffer.watermarks: slice 0 is at document 9, past the last document, 6");
  Damage([](RawStore& raw) { raw.Del("meta", internal::kFingerprintNextSliceKey); });
  ExpectProblem("meta lacks fp_buffer.next_slice");
}

TEST_F(CheckTest, DocumentKeyOfWrongLength) {
  Damage([](RawStore& raw) {
    raw.Put("documents", Key64(7).view().substr(0, 5), raw.Get("documents", Key64(4).view()));
  });
  ExpectProblem("documents has an entry of 5 + ");
}

// --- 3. each document in its indexes ---

TEST_F(CheckTest, SamplePostingMissing) {
  uint64_t value = 0;
  Damage([&](RawStore& raw) {
    DocumentRecord rec = raw.Document(4);
    for (uint64_t v : rec.sample.values) {
      if (internal::IndexedSampleValue(v, rec.sample.log2_modulus)) value = v;
    }
    ASSERT_NE(value, 0u);
    raw.Del("samples", internal::PostingKey(value).view(), internal::Posting(value, 4).view());
  });
  ExpectProblem("document 4: missing from samples under " + std::to_string(value));
}

// --- 4. postings and fingerprint entries ---

TEST_F(CheckTest, PostingNamesMissingDocument) {
  const uint64_t value = 0x0123456789abcdefull;
  Damage([&](RawStore& raw) {
    raw.Put("features", internal::PostingKey(value).view(), internal::Posting(value, 99).view());
  });
  ExpectProblem("features posting under " + std::to_string(value) +
                " names document 99, not a document with a sketch");
}

TEST_F(CheckTest, PostingNamesDocumentWithoutSketch) {
  const uint64_t value = 0x0123456789abcdefull;
  Damage([&](RawStore& raw) {
    raw.Put("supershingles", internal::PostingKey(value).view(),
            internal::Posting(value, 3).view());
  });
  ExpectProblem("names document 3, not a document with a sketch");
}

TEST_F(CheckTest, PostingOfWrongLength) {
  // New keys: a DUPFIXED list of one is a plain entry, of any length.
  Damage([](RawStore& raw) {
    raw.Put("supershingles", std::string("\xfe\xfe\xfe", 3), std::string(10, '\x01'));
    raw.Put("samples", std::string("\xfe\xfe\xfe\xfe\xfe", 5), internal::Posting(1, 1).view());
  });
  ExpectProblem("supershingles has an entry of 3 + 10 bytes");
  ExpectProblem("samples has an entry of 5 + 12 bytes");
}

TEST_F(CheckTest, FingerprintEntryNamesMissingDocument) {
  Damage([](RawStore& raw) {
    raw.Put("fp_shingle", internal::FingerprintKey({12345, 678}), Key64(99).view());
  });
  ExpectProblem("fp_shingle entry names missing document 99");
}

TEST_F(CheckTest, FingerprintEntryOfWrongLength) {
  Damage([](RawStore& raw) {
    raw.Put("fp_lexical", internal::FingerprintKey({12345, 678}), "\x01\x02\x03");
    raw.Put("fp_identical", "short", Key64(4).view());
  });
  ExpectProblem("fp_lexical has an entry of 16 + 3 bytes");
  ExpectProblem("fp_identical has an entry of 5 + 8 bytes");
}

// --- 5. common_values ---

TEST_F(CheckTest, CommonValuesCountOff) {
  uint64_t value = 0;
  Damage([&](RawStore& raw) {
    DocumentRecord rec = raw.Document(4);
    for (uint64_t v : rec.sample.values) {
      if (internal::IndexedSampleValue(v, rec.sample.log2_modulus)) value = v;
    }
    ASSERT_NE(value, 0u);
    raw.Put("common_values", Key64(value).view(), Le64(7));
  });
  // Document 5 shares most of 4's sample: the value has 1 or 2 postings, not 7.
  ExpectProblem("common_values lists " + std::to_string(value) + " with count 7 but it has ");
}

TEST_F(CheckTest, CommonValuesEntryOfWrongLength) {
  Damage([](RawStore& raw) {
    raw.Put("common_values", "\x01\x02\x03", Le64(7));
    raw.Put("common_values", Key64(5).view(), "\x07");
  });
  ExpectProblem("common_values has an entry of 3 + 8 bytes");
  ExpectProblem("common_values has an entry of 8 + 1 bytes");
}

// --- 6. clusters ---

TEST_F(CheckTest, ClusterParentNotARoot) {
  Damage([](RawStore& raw) { raw.Put("cluster_parent", Key64(2).view(), Key64(4).view()); });
  ExpectProblem("document 2: cluster parent 4 is not a root");
}

TEST_F(CheckTest, MemberListMissingAMember) {
  Damage([](RawStore& raw) { raw.Del("cluster_members", Key64(1).view(), Key64(3).view()); });
  ExpectProblem("cluster 1: member list (2) differs from the documents whose parent it is (3)");
}

TEST_F(CheckTest, MemberListOfOne) {
  Damage([](RawStore& raw) {
    raw.Put("cluster_parent", Key64(4).view(), Key64(4).view());
    raw.Put("cluster_members", Key64(4).view(), Key64(4).view());
  });
  ExpectProblem("cluster 4 has a member list of one");
}

TEST_F(CheckTest, ClusterEntriesOfWrongLength) {
  Damage([](RawStore& raw) {
    raw.Put("cluster_parent", Key64(4).view().substr(0, 5), Key64(1).view());
    raw.Put("cluster_parent", Key64(5).view(), Key64(1).view().substr(0, 5));
    raw.Put("cluster_members", Key64(6).view(), Key64(6).view().substr(0, 5));
  });
  ExpectProblem("cluster_parent has an entry of 5 + 8 bytes");
  ExpectProblem("cluster_parent has an entry of 8 + 5 bytes");
  ExpectProblem("cluster_members has an entry of 8 + 5 bytes");
}

// --- 7. versions and URLs ---

TEST_F(CheckTest, VersionGap) {
  Damage([](RawStore& raw) {
    std::string second = raw.Get("versions", VersionKey(1, 2));
    raw.Del("versions", VersionKey(1, 2));
    raw.Put("versions", VersionKey(1, 3), second);
  });
  ExpectProblem("url id 1: version 3 where 2 was expected");
}

TEST_F(CheckTest, VersionNamesMissingDocument) {
  Damage([](RawStore& raw) {
    VersionRecord v = raw.Version(4, 1);
    v.doc = 99;
    raw.Put("versions", VersionKey(4, 1), internal::EncodeVersion(v));
  });
  ExpectProblem("url id 4 version 1 names missing document 99");
}

TEST_F(CheckTest, VersionNamesUnknownSweep) {
  Damage([](RawStore& raw) {
    VersionRecord v = raw.Version(4, 1);
    v.sweep = 9;
    raw.Put("versions", VersionKey(4, 1), internal::EncodeVersion(v));
  });
  ExpectProblem("url id 4 version 1 names unknown sweep 9");
}

TEST_F(CheckTest, VersionRecordGarbage) {
  Damage([](RawStore& raw) { raw.Put("versions", VersionKey(4, 1), std::string(7, '\xff')); });
  ExpectProblem("url id 4 version 1: version record does not decode");
}

// Format 8: a failed attempt names only the document its URL showed before it; gone and redirect
// versions name none, content versions one; only a redirect has a target.
TEST_F(CheckTest, VersionFieldsThatDoNotFitItsVerdict) {
  Damage([](RawStore& raw) {
    VersionRecord failed = raw.Version(4, 1);
    failed.verdict = Verdict::kFailed;
    failed.http_status = 503;
    raw.Put("versions", VersionKey(4, 1), internal::EncodeVersion(failed));
    VersionRecord gone = raw.Version(5, 1);
    gone.verdict = Verdict::kGone;
    raw.Put("versions", VersionKey(5, 1), internal::EncodeVersion(gone));
    VersionRecord target = raw.Version(3, 1);
    target.redirect_target = "http://x/";
    raw.Put("versions", VersionKey(3, 1), internal::EncodeVersion(target));
    VersionRecord empty = raw.Version(1, 2);
    empty.doc = 0;
    raw.Put("versions", VersionKey(1, 2), internal::EncodeVersion(empty));
  });
  ExpectProblem(
      "url id 4 version 1: failed names document 4, not the live document of the version before "
      "it");
  ExpectProblem("url id 5 version 1: gone names document 5");
  ExpectProblem("url id 3 version 1: duplicate has a redirect target");
  ExpectProblem("url id 1 version 2: new without a document");
}

// The same, written by the store: consistent.
TEST_F(CheckTest, FailedAndRedirectVersionsAreConsistent) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    SweepId s3 = store->OpenSweep("s3", 30)->id;
    PageInput failed = Page("http://a/", s3, 30, Range(1u << 23, 300));
    failed.http_status = 500;
    PageInput again = failed;
    again.url = "http://b/";
    again.http_status = 0;
    PageInput moved = failed;
    moved.url = "http://d/";
    moved.http_status = 301;
    moved.redirect_target = "http://e/";
    PageInput after = moved;
    after.url = "http://f/";
    after.http_status = 503;
    after.redirect_target.clear();
    StatusOr<std::vector<PageResult>> r = store->Apply(std::vector{failed, again, moved, after});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)[0].doc, 6u);
    EXPECT_EQ((*r)[1].doc, 2u);
    EXPECT_EQ((*r)[2].doc, 0u);
    EXPECT_EQ((*r)[3].doc, 0u);
  }
  EXPECT_TRUE(Problems().empty());
}

TEST_F(CheckTest, VersionNotInDocUrls) {
  Damage([](RawStore& raw) { raw.Del("doc_urls", Key64(4).view(), Key64(4).view()); });
  ExpectProblem("url id 4 version 1: (document 4, url id 4) is not in doc_urls");
}

TEST_F(CheckTest, DocUrlsEntryWithoutVersion) {
  Damage([](RawStore& raw) { raw.Put("doc_urls", Key64(4).view(), Key64(1).view()); });
  ExpectProblem("doc_urls entry (4, 1) has no version");
}

TEST_F(CheckTest, UrlsAndUrlNamesNotInverse) {
  Damage([](RawStore& raw) {
    raw.Put("url_names", Key64(3).view(), "http://elsewhere/");
    raw.Put("urls", "http://ghost/", Key64(99).view());
  });
  ExpectProblem("url http://elsewhere/ (id 3) is not in urls");
  ExpectProblem("urls entry names url id 99 without a name");
}

TEST_F(CheckTest, UrlEntriesOfWrongLength) {
  Damage([](RawStore& raw) {
    raw.Put("versions", VersionKey(4, 1).substr(0, 10), internal::EncodeVersion(raw.Version(4, 1)));
    raw.Put("url_names", Key64(6).view().substr(0, 5), "http://short-key/");
    raw.Put("urls", "http://short-value/", "\x06");
    raw.Put("doc_urls", Key64(7).view(), Key64(4).view().substr(0, 3));
  });
  ExpectProblem("versions has an entry of 10 + ");
  ExpectProblem("url_names has an entry of 5 + 17 bytes");
  ExpectProblem("urls has an entry of 19 + 1 bytes");
  ExpectProblem("doc_urls has an entry of 8 + 3 bytes");
}

// --- 8. sweeps ---

TEST_F(CheckTest, SweepCountsOff) {
  Damage([](RawStore& raw) {
    StatusOr<internal::SweepRecord> rec = internal::DecodeSweep(raw.Get("sweeps", SweepKey(1)));
    ASSERT_TRUE(rec.ok());
    ++rec->pages;
    raw.Put("sweeps", SweepKey(1), internal::EncodeSweep(*rec));
  });
  ExpectProblem("sweep s1: recorded counts (pages 6) differ from its versions (pages 5)");
}

TEST_F(CheckTest, SweepNamesNotInverse) {
  Damage([](RawStore& raw) { raw.Put("sweep_names", "s1", SweepKey(2)); });
  ExpectProblem("sweep_names entry s1 does not match sweep 2");
}

TEST_F(CheckTest, SweepRecordGarbage) {
  Damage([](RawStore& raw) { raw.Put("sweeps", SweepKey(2), "\x09s2"); });
  ExpectProblem("sweep 2: sweep record does not decode");
}

TEST_F(CheckTest, SweepEntriesOfWrongLength) {
  Damage([](RawStore& raw) {
    raw.Put("sweeps", SweepKey(3).substr(0, 2), raw.Get("sweeps", SweepKey(2)));
    raw.Put("sweep_names", "s9", "\x09");
  });
  ExpectProblem("sweeps has an entry of 2 + ");
  ExpectProblem("sweep_names has an entry of 2 + 1 bytes");
  // The sweep queries and the writer refuse them too, rather than read a short id past its end.
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->FindSweep("s9").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(store->OpenSweep("s9", 30).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(store->Sweeps().status().code(), StatusCode::kDataLoss);
  // The 2-byte key sorts before SweepKey(2), so a new sweep's id still comes from sweep 2.
  StatusOr<SweepInfo> opened = store->OpenSweep("s3", 30);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->id, 3u);
}

// The last `documents` key of the wrong size: the writer does not make the next id from it.
TEST_F(CheckTest, NewDocumentAfterAShortLastDocumentsKey) {
  Damage([](RawStore& raw) {
    raw.Put("documents", std::string("\xff\xff\xff", 3), raw.Get("documents", Key64(1).view()));
  });
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::vector<PageInput> batch = {Page("http://new/", 1, 30, Range(7u << 24, 200))};
  StatusOr<std::vector<PageResult>> r = store->Apply(batch);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("3 bytes, not 8"), std::string::npos)
      << r.status().ToString();
}

// The last `sweeps` key of the wrong size: a new sweep's id is not made from it.
TEST_F(CheckTest, NewSweepAfterAShortLastSweepsKey) {
  Damage([](RawStore& raw) {
    raw.Put("sweeps", std::string("\xff\xff", 2), raw.Get("sweeps", SweepKey(2)));
  });
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  StatusOr<SweepInfo> opened = store->OpenSweep("s3", 30);
  EXPECT_EQ(opened.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(opened.status().message().find("the last sweeps key is 2 bytes"), std::string::npos)
      << opened.status().ToString();
}

// --- 9. links ---

TEST_F(CheckTest, LinkUnderTheEarlierDocument) {
  Damage([](RawStore& raw) { raw.Put("links", Key64(4).view(), internal::EncodeLink(5, 0.6)); });
  ExpectProblem("link 4 - 5 is not under the later document");
}

TEST_F(CheckTest, LinkNamesMissingDocument) {
  Damage([](RawStore& raw) { raw.Put("links", Key64(99).view(), internal::EncodeLink(4, 0.6)); });
  ExpectProblem("link 99 - 4 names a missing document");
}

TEST_F(CheckTest, LinkOfWrongLength) {
  Damage([](RawStore& raw) {
    raw.Put("links", Key64(6).view(), Key64(4).view());  // 8 bytes, no resemblance
    raw.Put("links", Key64(6).view().substr(0, 4), internal::EncodeLink(4, 0.6));
  });
  ExpectProblem("links has an entry of 8 + 8 bytes");
  ExpectProblem("links has an entry of 4 + 10 bytes");
}

// --- queries over damaged records ---

TEST_F(CheckTest, QueriesOverAGarbageDocumentAnswerDataLoss) {
  Damage([](RawStore& raw) { raw.Put("documents", Key64(1).view(), std::string(40, '\x81')); });
  auto store = OpenStore();
  QueryOptions q;
  q.threshold = 0.1;
  // The document itself, through a document whose representative it is, and as a candidate.
  EXPECT_EQ(store->SimilarToDocument(1, q).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(store->SimilarToUrl("http://c/", q).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(store->SimilarToDocument(2, q).status().code(), StatusCode::kDataLoss);
  // A member of the cluster listed.
  EXPECT_EQ(store->Cluster(2).status().code(), StatusCode::kDataLoss);
  // Unrelated documents still answer.
  EXPECT_TRUE(store->SimilarToDocument(4, q).ok());
}

TEST_F(CheckTest, QueriesOverAGarbageVersionAnswerDataLoss) {
  Damage([](RawStore& raw) { raw.Put("versions", VersionKey(1, 2), std::string(3, '\x80')); });
  auto store = OpenStore();
  EXPECT_EQ(store->History("http://a/").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(store->Lost("http://a/").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(store->SimilarToUrl("http://a/", {}).status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(store->History("http://b/").ok());
}

TEST_F(CheckTest, QueriesOverAVersionKeyOfWrongLengthAnswerDataLoss) {
  // Url 1's id and 2 more bytes: sorts after its versions (1, 1) and (1, 2), before url 2's.
  Damage([](RawStore& raw) {
    raw.Put("versions", std::string(Key64(1).view()) + "\xff\xff",
            raw.Get("versions", VersionKey(1, 2)));
  });
  auto store = OpenStore();
  StatusOr<std::vector<UrlVersion>> h = store->History("http://a/");
  EXPECT_EQ(h.status().code(), StatusCode::kDataLoss) << h.status().ToString();
  // Lost and SimilarToUrl read the URL's versions from the last one backwards.
  EXPECT_EQ(store->Lost("http://a/").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(store->SimilarToUrl("http://a/", {}).status().code(), StatusCode::kDataLoss);
  // The scans over every URL's versions, and the writer's look at url a's last version (which
  // took the key for no version at all).
  StatusOr<ChangeReport> compared = store->ChangesBetween(1, 2);
  EXPECT_EQ(compared.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(compared.status().message().find("versions has a key of 10 bytes, not 12"),
            std::string::npos)
      << compared.status().ToString();
  // A close reads the versions of the URLs in its scope.
  SweepId s3 = store->OpenSweep("s3", 25, {"http://a/", "http://b/"})->id;
  EXPECT_EQ(store->CloseSweep(s3, 30).status().code(), StatusCode::kDataLoss);
  std::vector<PageInput> page = {Page("http://a/", 2, 25, Range(1u << 23, 300))};
  StatusOr<std::vector<PageResult>> applied = store->Apply(page);
  EXPECT_EQ(applied.status().code(), StatusCode::kDataLoss) << applied.status().ToString();
  // Nothing was written: the damage is all Check finds.
  store.reset();
  std::vector<std::string> problems = Problems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("versions"), std::string::npos) << problems[0];
}

// A key shorter than a url id sorts first: the scans over every URL read 8 bytes of a 5-byte
// key before.
TEST_F(CheckTest, ScansOverAShortVersionKeyAnswerDataLoss) {
  Damage([](RawStore& raw) {
    raw.Put("versions", std::string("\0\0\0\0\x01", 5), raw.Get("versions", VersionKey(1, 1)));
  });
  auto store = OpenStore();
  EXPECT_EQ(store->ChangesBetween(1, 2).status().code(), StatusCode::kDataLoss);
  // Reopening a sweep reads every version (a close reads only those in its scope).
  ASSERT_TRUE(store->CloseSweep(2, 30).ok());
  EXPECT_EQ(store->ReopenSweep(2).status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(store->History("http://b/").ok());
}

}  // namespace
}  // namespace shingled::store
