// Templates (format 10; FORMAT.md, "Templates"): chunks over the document limit or a
// host's share, and the operator's marks, left out of bytes in common; the upgrade from format 9;
// Check and Backup. Pages carry synthetic sketches (tests/store/synthetic.h) and the chunks of
// random text (tests/store/chunk_text.h).
#include <gtest/gtest.h>
#include <lmdb.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <string>
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

 private:
  MDB_env* env_ = nullptr;
  MDB_txn* txn_ = nullptr;
};

std::string Le64(uint64_t v) {
  std::string out;
  internal::AppendLE64(&out, v);
  return out;
}

// Options with only the document limit in force (the host share needs more pages than any test
// host has).
StoreOptions DocumentLimit(uint64_t max_docs) {
  StoreOptions o;
  o.template_max_docs = max_docs;
  o.template_min_host_pages = 1000000;
  return o;
}

// Options with no automatic template at all: only marks.
StoreOptions NoLimits() { return DocumentLimit(1000000); }

class TemplatesTest : public testing::StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    header_ = RandomText(rng_, 8000);  // a large shared header: ~25 chunks
    for (int i = 0; i < 12; ++i) content_.push_back(RandomText(rng_, 2500));
  }
  // A page of `text` whose synthetic sketch has shingles Range(`base`, 300) (equal bases and
  // another variant: an equivalent document, clustered with the first).
  PageInput TextPage(std::string url, const std::string& text, uint64_t base,
                     uint64_t variant = 0) {
    PageInput p = Page(std::move(url), sweep_, 10, Range(base, 300), variant);
    p.sketch.chunks = ChunkText(text);
    return p;
  }
  // The header, then content i.
  std::string Templated(int i) const { return header_ + content_[static_cast<size_t>(i)]; }
  std::unique_ptr<Store> OpenWithSweep(const StoreOptions& options) {
    auto store = OpenStore(options);
    if (store != nullptr) {
      StatusOr<SweepInfo> found = store->FindSweep("s");
      sweep_ = found.ok() ? found->id : store->OpenSweep("s", 10)->id;
    }
    return store;
  }
  static CommonBytes Common(const Store& store, DocId a, DocId b) {
    StatusOr<CommonBytes> c = store.BytesInCommon(a, b);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : CommonBytes{};
  }
  SweepId sweep_ = 0;
  std::mt19937_64 rng_{32};
  std::string header_;
  std::vector<std::string> content_;
};
SHINGLED_STORE_ENGINES(TemplatesTest);

// LMDB only: edits the store's files (an older format, damage for Check).
class LmdbTemplatesTest : public TemplatesTest {};
SHINGLED_STORE_LMDB_ONLY(LmdbTemplatesTest);

// The pure function: listed hashes count as template, the shares are of the rest.
TEST_P(TemplatesTest, BytesInCommonOfLeavesOutListedChunks) {
  const std::vector<dedup::Chunk> a = ChunkText(Templated(0)), b = ChunkText(Templated(1));
  const CommonBytes all = BytesInCommonOf(a, b, kMaxCommonSpans);
  ASSERT_GE(all.shared_bytes, 8000u - 2 * kMaxChunk);
  std::vector<uint64_t> header;
  for (const dedup::Chunk& c : ChunkText(header_)) header.push_back(c.hash);
  std::sort(header.begin(), header.end());
  const CommonBytes out = BytesInCommonOf(a, b, kMaxCommonSpans, header);
  EXPECT_EQ(out.shared_bytes, 0u);
  EXPECT_EQ(out.template_bytes, all.shared_bytes);
  EXPECT_EQ(out.template_chunks, all.shared_chunks);
  EXPECT_EQ(out.relation, CommonRelation::kNone);
  EXPECT_GT(out.template_a, 0u);
  EXPECT_LE(out.template_a, 8000u);
  // The same content under the header: near-identical once the header is out.
  const std::vector<dedup::Chunk> a2 = ChunkText(header_ + content_[0]);
  const CommonBytes same = BytesInCommonOf(a, a2, 0, header);
  EXPECT_EQ(same.relation, CommonRelation::kNearIdentical);
  EXPECT_DOUBLE_EQ(same.share_a, 1.0);
}

// A chunk in more than template_max_docs documents is template; at the limit it is not.
TEST_P(TemplatesTest, DocumentLimit) {
  auto store = OpenWithSweep(DocumentLimit(5));
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 5; ++i) {
    const PageInput p =
        TextPage("http://h" + std::to_string(i) + "/", Templated(i), 1000 * (i + 1));
    ASSERT_EQ(ApplyOne(*store, p).doc, static_cast<DocId>(i + 1));
  }
  // Five documents hold the header: at the limit, not over it.
  const CommonBytes at_limit = Common(*store, 1, 2);
  EXPECT_GE(at_limit.shared_bytes, 8000u - 2 * kMaxChunk);
  EXPECT_EQ(at_limit.template_bytes, 0u);
  EXPECT_GT(at_limit.share_a, 0.7);  // the header is most of each page
  // A sixth: over the limit. The two pages share nothing but the header.
  ASSERT_EQ(ApplyOne(*store, TextPage("http://h5/", Templated(5), 6000)).doc, 6u);
  const CommonBytes over = Common(*store, 1, 2);
  EXPECT_EQ(over.shared_bytes, 0u);
  EXPECT_EQ(over.template_bytes, at_limit.shared_bytes);
  EXPECT_EQ(over.relation, CommonRelation::kNone);
  EXPECT_GE(over.template_a, over.template_bytes);
  // Real shared content still counts: a copy of page 1's content under the header.
  PageResult copy = ApplyOne(*store, TextPage("http://h6/", Templated(0) + "!", 7000));
  ASSERT_EQ(copy.doc, 7u);
  const CommonBytes real = Common(*store, 1, 7);
  EXPECT_GE(real.shared_bytes, 2500u - 2 * kMaxChunk);
  EXPECT_GT(real.share_a, 0.5);
  EXPECT_NE(real.relation, CommonRelation::kNone);
  testing::StoreFixture::ExpectConsistent(*store);
  // The chunk verdicts say why.
  StatusOr<std::vector<ChunkTemplate>> verdicts = store->ChunkTemplates(1);
  ASSERT_TRUE(verdicts.ok()) << verdicts.status().ToString();
  size_t over_documents = 0;
  for (const ChunkTemplate& t : *verdicts) over_documents += t.over_documents && t.is_template;
  EXPECT_GE(over_documents, 8000 / kMaxChunk);
}

// More than template_host_share of a host's pages, once the host has template_min_host_pages.
TEST_P(TemplatesTest, HostShare) {
  StoreOptions options;
  options.template_max_docs = 1000000;
  options.template_host_share = 0.5;
  options.template_min_host_pages = 4;
  auto store = OpenWithSweep(options);
  ASSERT_NE(store, nullptr);
  // Three pages of site.test, all with the header: under min_host_pages, the share does not apply.
  for (int i = 0; i < 3; ++i) {
    const PageInput p =
        TextPage("http://site.test/p" + std::to_string(i), Templated(i), 1000 * (i + 1));
    ASSERT_EQ(ApplyOne(*store, p).doc, static_cast<DocId>(i + 1));
  }
  const CommonBytes few_pages = Common(*store, 1, 2);
  EXPECT_GE(few_pages.shared_bytes, 8000u - 2 * kMaxChunk);
  EXPECT_EQ(few_pages.template_bytes, 0u);
  // Five more pages without it: 8 pages, 3 hold the header: 3 <= 0.5 * 8.
  for (int i = 3; i < 8; ++i) {
    const PageInput p = TextPage("https://site.test/q" + std::to_string(i),
                                 content_[static_cast<size_t>(i)], 1000 * (i + 1));
    ASSERT_EQ(ApplyOne(*store, p).doc, static_cast<DocId>(i + 1));
  }
  const CommonBytes under_share = Common(*store, 1, 2);
  EXPECT_EQ(under_share.shared_bytes, few_pages.shared_bytes);
  EXPECT_EQ(under_share.template_bytes, 0u);
  // A fourth and a fifth with the header: 5 of 10 is not more than half; a sixth, 6 of 11, is.
  ASSERT_EQ(ApplyOne(*store, TextPage("http://site.test/r8", Templated(8), 9000)).doc, 9u);
  ASSERT_EQ(ApplyOne(*store, TextPage("http://site.test/r9", Templated(9), 10000)).doc, 10u);
  EXPECT_EQ(Common(*store, 1, 2).template_bytes, 0u);
  ASSERT_EQ(ApplyOne(*store, TextPage("http://site.test/r10", Templated(10), 11000)).doc, 11u);
  const CommonBytes over_share = Common(*store, 1, 2);
  StatusOr<std::vector<ChunkTemplate>> verdicts = store->ChunkTemplates(1);
  ASSERT_TRUE(verdicts.ok());
  size_t over_share_chunks = 0;
  for (const ChunkTemplate& t : *verdicts) {
    if (!t.over_host_share) continue;
    ++over_share_chunks;
    EXPECT_EQ(t.host_pages, 11u);
    EXPECT_EQ(t.host_documents, 6u);
    EXPECT_EQ(t.documents, 6u);
  }
  EXPECT_GE(over_share_chunks, 8000 / kMaxChunk);
  EXPECT_EQ(over_share.shared_bytes, 0u);
  EXPECT_EQ(over_share.template_bytes, few_pages.shared_bytes);
  // Another host's copy of the header is compared with a page of site.test: site.test's share
  // applies to it too (the host of either document).
  ASSERT_EQ(ApplyOne(*store, TextPage("http://other.test/", Templated(11), 12000)).doc, 12u);
  EXPECT_EQ(Common(*store, 12, 1).shared_bytes, 0u);
  testing::StoreFixture::ExpectConsistent(*store);
}

// The writer holds a batch's `chunk_docs` postings until the batch ends (BatchChunkDocs), and its
// template judge lasts the batch: bytes in common of each page with its matches, in one batch, are
// those of the same pages one batch each, as chunks pass the document limit or a host's share and
// fall under it again as the host grows within the batch.
TEST_P(TemplatesTest, OneBatchJudgesAsPageByPage) {
  StoreOptions options;
  options.template_max_docs = 8;
  options.template_host_share = 0.5;
  options.template_min_host_pages = 4;
  // One cluster (equal bases, other variants): each page matches an earlier one. Pages 0-5 are on
  // site.test with the header (its share passes there from page 3 on: 4 of 4 pages), 6-11 on
  // site.test without it (6 of 12 pages after page 11: not more than half), 12-14 elsewhere with
  // it (over the document limit from page 14 on: 9 documents).
  std::vector<PageInput> pages;
  for (int i = 0; i < 15; ++i) {
    const std::string host = i < 12 ? "site.test" : "h" + std::to_string(i) + ".test";
    const std::string text = i < 6    ? Templated(i)
                             : i < 12 ? content_[static_cast<size_t>(i)]
                                      : Templated(i - 12) + "!";
    pages.push_back(
        TextPage("http://" + host + "/" + std::to_string(i), text, 0, static_cast<uint64_t>(i)));
  }
  // One store at a time (the Redis Cluster engine holds one): the batch, then page by page.
  std::vector<PageResult> batch;
  {
    auto one_batch = OpenStore(options, "one");
    ASSERT_NE(one_batch, nullptr);
    const SweepId sweep_one = one_batch->OpenSweep("s", 10)->id;
    for (PageInput& p : pages) p.sweep = sweep_one;
    StatusOr<std::vector<PageResult>> applied = one_batch->Apply(pages);
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    ASSERT_EQ(applied->size(), pages.size());
    batch = std::move(applied).value();
    testing::StoreFixture::ExpectConsistent(*one_batch);
  }
  auto page_by_page = OpenStore(options, "each");
  ASSERT_NE(page_by_page, nullptr);
  const SweepId sweep_each = page_by_page->OpenSweep("s", 10)->id;
  uint64_t template_bytes = 0, shared_bytes = 0;
  for (size_t i = 0; i < pages.size(); ++i) {
    pages[i].sweep = sweep_each;
    const PageResult each = ApplyOne(*page_by_page, pages[i]);
    const PageResult& one = batch[i];
    ASSERT_EQ(one.doc, each.doc) << i;
    ASSERT_EQ(one.matches.size(), each.matches.size()) << i;
    ASSERT_EQ(one.match_common.size(), each.match_common.size()) << i;
    for (size_t m = 0; m < one.match_common.size(); ++m) {
      const CommonBytes& a = one.match_common[m];
      const CommonBytes& b = each.match_common[m];
      EXPECT_EQ(one.matches[m].doc, each.matches[m].doc) << i;
      EXPECT_EQ(a.known, b.known) << i;
      EXPECT_EQ(a.shared_bytes, b.shared_bytes) << i;
      EXPECT_EQ(a.shared_chunks, b.shared_chunks) << i;
      EXPECT_EQ(a.template_bytes, b.template_bytes) << i;
      EXPECT_EQ(a.template_chunks, b.template_chunks) << i;
      EXPECT_EQ(a.template_a, b.template_a) << i;
      EXPECT_EQ(a.template_b, b.template_b) << i;
      EXPECT_EQ(a.relation, b.relation) << i;
      template_bytes += a.template_bytes;
      shared_bytes += a.shared_bytes;
    }
  }
  // Both rules fired within the batch, the share stopped as the host grew, and content counts.
  const auto common = [&](size_t i) { return batch[i].match_common.at(0); };
  EXPECT_EQ(common(2).template_bytes, 0u);
  EXPECT_GE(common(4).template_bytes, 8000u - 2 * kMaxChunk);
  EXPECT_GE(common(9).template_b, 8000u - 2 * kMaxChunk);
  EXPECT_EQ(common(11).template_b, 0u);
  EXPECT_EQ(common(13).template_bytes, 0u);
  EXPECT_GE(common(14).template_bytes, 8000u - 2 * kMaxChunk);
  EXPECT_GT(template_bytes, 0u);
  EXPECT_GT(shared_bytes, 0u);
  testing::StoreFixture::ExpectConsistent(*page_by_page);
}

// The corpus with a large shared header: unrelated pages share most of their bytes until the
// header's cluster is marked, then only real content counts; unmarking restores it.
TEST_P(TemplatesTest, MarkAndUnmark) {
  auto store = OpenWithSweep(NoLimits());
  ASSERT_NE(store, nullptr);
  // Documents 1-3: one cluster (equivalent sketches), the header and distinct content each.
  for (int i = 0; i < 3; ++i) {
    const PageInput p = TextPage("http://site.test/" + std::to_string(i), Templated(i), 0, i);
    PageResult r = ApplyOne(*store, p);
    ASSERT_EQ(r.doc, static_cast<DocId>(i + 1));
    ASSERT_EQ(r.cluster, 1u);
  }
  // Documents 4 and 5: unrelated pages with the header; 6: page 4's content under the header.
  ASSERT_EQ(ApplyOne(*store, TextPage("http://site.test/4", Templated(4), 5000)).doc, 4u);
  ASSERT_EQ(ApplyOne(*store, TextPage("http://site.test/5", Templated(5), 6000)).doc, 5u);
  ASSERT_EQ(ApplyOne(*store, TextPage("http://site.test/6", header_ + content_[4] + "!", 7000)).doc,
            6u);
  const CommonBytes before = Common(*store, 4, 5);
  EXPECT_GE(before.shared_bytes, 8000u - 2 * kMaxChunk);
  EXPECT_GT(before.share_a, 0.7);
  EXPECT_EQ(before.template_bytes, 0u);
  const CommonBytes copy_before = Common(*store, 4, 6);

  StatusOr<TemplateMark> mark = store->MarkTemplate(2);  // any member names the cluster
  ASSERT_TRUE(mark.ok()) << mark.status().ToString();
  EXPECT_EQ(mark->cluster, 1u);
  EXPECT_EQ(mark->members, 3u);
  // The chunks shared by two members are the header's.
  std::set<uint64_t> header_chunks;
  for (const dedup::Chunk& c : ChunkText(Templated(0))) header_chunks.insert(c.hash);
  EXPECT_GE(mark->chunks.size(), 8000 / kMaxChunk);
  for (const dedup::Chunk& c : mark->chunks) EXPECT_TRUE(header_chunks.contains(c.hash));
  EXPECT_EQ(mark->chunk_bytes, Common(*store, 1, 2).template_bytes);
  testing::StoreFixture::ExpectConsistent(*store);

  const CommonBytes after = Common(*store, 4, 5);
  EXPECT_EQ(after.shared_bytes, 0u);
  EXPECT_EQ(after.template_bytes, before.shared_bytes);
  EXPECT_EQ(after.relation, CommonRelation::kNone);
  const CommonBytes copy_after = Common(*store, 4, 6);
  EXPECT_GE(copy_after.shared_bytes, 2500u - 2 * kMaxChunk);
  EXPECT_EQ(copy_after.shared_bytes + copy_after.template_bytes, copy_before.shared_bytes);
  EXPECT_GT(copy_after.share_a, 0.5);
  EXPECT_NE(copy_after.relation, CommonRelation::kNone);

  // Idempotent: marking again gives the same mark; listing shows one.
  StatusOr<TemplateMark> again = store->MarkTemplate(1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->chunks, mark->chunks);
  StatusOr<std::vector<TemplateMark>> marks = store->TemplateMarks();
  ASSERT_TRUE(marks.ok());
  ASSERT_EQ(marks->size(), 1u);
  EXPECT_EQ((*marks)[0].cluster, 1u);
  EXPECT_EQ((*marks)[0].chunk_bytes, mark->chunk_bytes);

  // Backup copies the marks (on an engine with a mapped file, which a backup copies).
  const MappedFile* mapped = store->mapped_file();
  const bool backup_too = mapped != nullptr;
  const std::string backup = dir_.Sub("backup");
  if (backup_too) {
    std::filesystem::create_directories(backup);
    ASSERT_TRUE(mapped->Backup(backup).ok());
  }

  StatusOr<std::optional<TemplateMark>> removed = store->UnmarkTemplate(3);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  ASSERT_TRUE(removed->has_value());
  EXPECT_EQ((*removed)->cluster, 1u);
  const CommonBytes restored = Common(*store, 4, 5);
  EXPECT_EQ(restored.shared_bytes, before.shared_bytes);
  EXPECT_EQ(restored.template_bytes, 0u);
  EXPECT_EQ(restored.relation, before.relation);
  StatusOr<std::optional<TemplateMark>> twice = store->UnmarkTemplate(1);
  ASSERT_TRUE(twice.ok());
  EXPECT_FALSE(twice->has_value());
  EXPECT_TRUE(store->TemplateMarks()->empty());
  testing::StoreFixture::ExpectConsistent(*store);

  // Errors: no such document; a cluster of one document.
  EXPECT_EQ(store->MarkTemplate(999).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->UnmarkTemplate(999).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->MarkTemplate(4).status().code(), StatusCode::kFailedPrecondition);
  store.reset();

  if (!backup_too) return;
  StatusOr<std::unique_ptr<Store>> copy =
      Store::Open(backup, NoLimits(), params_, testing::kPolynomial);
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  StatusOr<std::vector<TemplateMark>> copied = (*copy)->TemplateMarks();
  ASSERT_TRUE(copied.ok());
  ASSERT_EQ(copied->size(), 1u);
  EXPECT_EQ((*copied)[0].chunks, mark->chunks);
  EXPECT_EQ((*copy)->BytesInCommon(4, 5)->shared_bytes, 0u);
}

// A store of format 9 (this code's, with its template tables dropped and its version put back)
// opens as format 10 with the tables empty.
TEST_P(LmdbTemplatesTest, Format9IsUpgraded) {
  {
    // As a format 9 store had it: every `chunk_docs` posting in the B-tree.
    StoreOptions unbuffered = NoLimits();
    unbuffered.write_buffer = false;
    auto store = OpenWithSweep(unbuffered);
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(ApplyOne(*store, TextPage("http://a/", Templated(0), 0)).doc, 1u);
    ASSERT_EQ(ApplyOne(*store, TextPage("http://b/", Templated(1), 0, 1)).doc, 2u);
  }
  {
    Raw raw(dir_.Sub("db"));
    raw.Put("meta", "format_version", Le64(9));
    raw.Drop("template_marks");
    raw.Drop("template_chunks");
  }
  {
    Raw raw(dir_.Sub("db"));
    bool exists = true;
    raw.Dbi("template_marks", &exists);
    ASSERT_FALSE(exists);
  }
  {
    auto store = OpenWithSweep(NoLimits());
    ASSERT_NE(store, nullptr);
    testing::StoreFixture::ExpectConsistent(*store);
    EXPECT_TRUE(store->TemplateMarks()->empty());
    ASSERT_TRUE(store->MarkTemplate(1).ok());
    EXPECT_EQ(Common(*store, 1, 2).shared_bytes, 0u);
    testing::StoreFixture::ExpectConsistent(*store);
  }
  Raw raw(dir_.Sub("db"));
  EXPECT_EQ(internal::GetLE64(raw.Get("meta", "format_version").data()), 14u);
  EXPECT_EQ(internal::kFormatVersion, 14u);
  EXPECT_EQ(raw.Size("template_marks"), 1u);
}

// Check finds a mark that does not decode, a mark's chunk missing from template_chunks, and an
// entry of template_chunks without its mark.
TEST_P(LmdbTemplatesTest, CheckFindsDamagedMarks) {
  std::vector<dedup::Chunk> marked;
  {
    auto store = OpenWithSweep(NoLimits());
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(ApplyOne(*store, TextPage("http://a/", Templated(0), 0)).doc, 1u);
    ASSERT_EQ(ApplyOne(*store, TextPage("http://b/", Templated(1), 0, 1)).doc, 2u);
    StatusOr<TemplateMark> mark = store->MarkTemplate(1);
    ASSERT_TRUE(mark.ok());
    marked = mark->chunks;
    ASSERT_GE(marked.size(), 2u);
  }
  auto problems = [&] {
    auto store = OpenStore(NoLimits());
    StatusOr<std::vector<std::string>> p = store->Check();
    EXPECT_TRUE(p.ok());
    return p.ok() ? *p : std::vector<std::string>{};
  };
  auto mentions = [](const std::vector<std::string>& list, std::string_view what) {
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& p) { return p.find(what) != std::string::npos; });
  };
  char hash[8];
  internal::PutBE64(hash, marked[0].hash);
  {
    Raw raw(dir_.Sub("db"));
    raw.Del("template_chunks", std::string_view(hash, 8), internal::Key64(1).view());
  }
  std::vector<std::string> found = problems();
  EXPECT_TRUE(mentions(found, "is not in template_chunks")) << ::testing::PrintToString(found);
  {
    Raw raw(dir_.Sub("db"));
    const std::string record = raw.Get("template_marks", internal::Key64(1).view());
    raw.Put("template_marks", internal::Key64(1).view(), record.substr(0, record.size() - 3));
  }
  found = problems();
  EXPECT_TRUE(mentions(found, "template mark of cluster 1")) << ::testing::PrintToString(found);
  {
    Raw raw(dir_.Sub("db"));
    raw.Del("template_marks", internal::Key64(1).view());
  }
  found = problems();
  EXPECT_TRUE(mentions(found, "which has no mark")) << ::testing::PrintToString(found);
}

}  // namespace
}  // namespace shingled::store
