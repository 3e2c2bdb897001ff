// Templates (format 10; FORMAT.md, "Templates"): which chunks are template, so that bytes in
// common leaves them out, and the operator's marks. Private to store/; store/templates.cc.
#ifndef SHINGLED_STORE_INTERNAL_TEMPLATES_H_
#define SHINGLED_STORE_INTERNAL_TEMPLATES_H_

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "dedup/chunker.h"
#include "store/internal/lmdb.h"
#include "store/internal/schema.h"
#include "store/lmdb_store.h"
#include "store/types.h"

namespace shingled::store::internal {

class BatchChunkDocs;  // chunks.h
struct WriteBuffer;    // write_buffer.h

// "host" or "host:port" of an absolute URL (without user info, lowercase as stored); "" for a
// URL without one (file:).
std::string_view UrlHost(std::string_view url);

// What the template and bytes-in-common logic reads (written once, above the backends).
// The LMDB store answers from one read transaction's cursors (LmdbChunkReads, templates.cc); the
// Redis Cluster backend from pipelined rounds (redis/backend_chunks.cc), which the Will* hints let
// it batch: the judge names what it is about to ask, a block at a time, before asking it item by
// item. A backend without rounds ignores them.
class ChunkReads {
 public:
  virtual ~ChunkReads() = default;
  // Whether an operator's mark makes chunk `hash` template (`template_chunks`).
  virtual StatusOr<bool> Marked(uint64_t hash) = 0;
  // Appends to `*docs` the documents holding chunk `hash` in increasing id order, at most
  // `limit`; `*over` true when more hold it.
  virtual Status ChunkDocs(uint64_t hash, size_t limit, std::vector<DocId>* docs, bool* over) = 0;
  // The name of the document's first URL (by url id); "" without one.
  virtual StatusOr<std::string> FirstUrl(DocId doc) = 0;
  // The URLs named "http://" or "https://" + `host` + "/...", counted up to `limit`.
  virtual StatusOr<uint64_t> HostUrls(std::string_view host, uint64_t limit) = 0;
  // A document's chunks into `*out` (cleared first); `*known` false when it has none recorded.
  virtual Status Chunks(DocId doc, std::vector<dedup::Chunk>* out, bool* known) = 0;
  // Hints: Marked and ChunkDocs of these chunks, FirstUrl or Chunks of these documents, come next.
  virtual Status WillAskChunks(std::span<const uint64_t> /*hashes*/) { return OkStatus(); }
  virtual Status WillAskUrls(std::span<const DocId> /*docs*/) { return OkStatus(); }
  virtual Status WillAskChunksOf(std::span<const DocId> /*docs*/) { return OkStatus(); }
};

class LmdbChunkReads;  // templates.cc

// What the template judge learnt that later batches can use: each document's host (its first
// URL's) and how many URLs each host has, counted up to a limit, for the share rule; and the
// chunks over template_max_docs (postings are only added: such a chunk stays over). A judge keeps
// its own for its life; the writer keeps one from a batch to the next
// (StoreImpl::WriterJudgeMemory), so that a document's host is read once while it stays in
// memory, not once per batch that compares it, and a common chunk's postings are not read
// again: a family of near-copies, or a site's footer, then costs what is new, not its size.
struct JudgeMemory {
  struct HostCount {
    uint64_t pages = 0;  // exact when below `limit`
    uint64_t limit = 0;  // the count's limit
  };
  std::unordered_map<DocId, std::string> hosts;
  std::unordered_map<std::string, HostCount> host_pages;
  std::unordered_set<uint64_t> over_chunks;
  // Each map is cleared when it holds this many entries.
  static constexpr size_t kMaxEntries = size_t{1} << 18;
  void clear() {
    hosts.clear();
    host_pages.clear();
    over_chunks.clear();
  }
};

// Decides which chunks are template, caching what it read: a chunk is template
// when it is marked (`template_chunks`), when it has more than options.template_max_docs postings
// in `chunk_docs`, or when more than template_host_share of the pages of host H hold it, H being
// a host of the comparison (the first URL's host of either document) with at least
// template_min_host_pages URLs. Work per distinct chunk: one lookup in `template_chunks`, at most
// template_max_docs + 1 postings read, and for the share rule only (a chunk in more documents than
// share * min_pages) one `doc_urls` and one `url_names` read per posting (cached by document),
// plus per host a count of its URLs in `urls` that stops at template_min_host_pages, and then, for
// a chunk on H documents of the host, at H / share + 1 (beyond, the chunk cannot pass the share),
// never past template_max_docs / share + 1.
class TemplateJudge {
 public:
  // On an LMDB read or write transaction. `buffer`: the write buffer of the transaction, whose
  // `chunk_docs` postings above their watermarks are not in the B-tree (null: none, a store whose
  // buffer is known empty); `batch`: a write batch's `chunk_docs` postings not yet in either
  // (null: none).
  TemplateJudge(TxnOps& ops, const StoreOptions& options, const WriteBuffer* buffer,
                const BatchChunkDocs* batch = nullptr);
  // On another backend's reads (which outlive the judge).
  TemplateJudge(ChunkReads& reads, const StoreOptions& options);
  ~TemplateJudge();
  // The writer's judge learns its batch's buffer once the batch began. REQUIRES: nothing read yet,
  // a judge made on a transaction.
  void set_buffer(const WriteBuffer* buffer);
  // Counts the reads of a judge made on a transaction into `*work` (the writer's; null: none).
  void set_work(WriterWork* work);
  // The writer's judge uses the writer's memory, current for its transaction, in place of its
  // own. REQUIRES: nothing read yet.
  void set_memory(JudgeMemory* memory) { memory_ = memory; }

  // The reads the judge makes (for a caller's own reads of chunks).
  ChunkReads& reads() { return reads_; }

  // The host of a document for the share rule: its first URL's (by url id); "" without one.
  StatusOr<std::string> HostOfDocument(DocId doc);
  // Appends to `*out` the template chunks among `a` and `b`, sorted and distinct, for a
  // comparison between documents on hosts `host_a` and `host_b` ("": none).
  Status Templates(std::span<const dedup::Chunk> a, std::span<const dedup::Chunk> b,
                   std::string_view host_a, std::string_view host_b, std::vector<uint64_t>* out);
  // Bytes in common of `a` and `b` without their template chunks (BytesInCommonOf).
  StatusOr<CommonBytes> Common(std::span<const dedup::Chunk> a, std::span<const dedup::Chunk> b,
                               std::string_view host_a, std::string_view host_b, size_t max_spans);
  // One chunk's verdict and the figures behind it, for a document on `host`.
  Status Explain(uint64_t hash, std::string_view host, ChunkTemplate* out);
  // The same for each of `chunks` (a document's, in order), one ChunkTemplate each.
  StatusOr<std::vector<ChunkTemplate>> ExplainAll(std::span<const dedup::Chunk> chunks,
                                                  std::string_view host);
  // Containment candidates: the documents holding chunk `hash`, or nullptr when it is
  // template by a mark or by the document limit (the host-share rule is left to Common).
  StatusOr<const std::vector<DocId>*> DocumentsOf(uint64_t hash);

  // For a judge that outlives a write in its transaction (the writer's, one per batch): what it
  // cached of `urls` and `doc_urls` is forgotten where the write changed them. Writes to
  // `chunk_docs` must go through `batch`; `template_chunks` must not change.
  void UrlAdded(std::string_view url);  // a new URL: its host's count
  void DocumentUrlAdded(DocId doc);     // a URL now shows `doc`: its host

 private:
  struct ChunkState {
    bool marked = false;
    bool over = false;        // more than template_max_docs documents
    std::vector<DocId> docs;  // its documents (all of them when !over)
  };
  // Caches bounded by this many entries (cleared when full).
  static constexpr size_t kMaxCachedChunks = size_t{1} << 16;
  // The chunk's state: marked, or its postings as stored, then in `batch_`.
  StatusOr<const ChunkState*> State(uint64_t hash);
  Status ReadStoredState(uint64_t hash, ChunkState* state);
  // Tells the reads which of `hashes` the judge has not cached (ChunkReads::WillAskChunks).
  Status Prefetch(std::span<const uint64_t> hashes);
  // The URLs of `host`, counted up to `limit` (and to HostPagesCap(), whichever is less).
  StatusOr<uint64_t> HostPages(std::string_view host, uint64_t limit);
  uint64_t HostPagesCap() const;
  StatusOr<bool> IsTemplate(uint64_t hash, std::string_view host_a, std::string_view host_b);
  StatusOr<bool> OverHostShare(const ChunkState& c, std::string_view host, ChunkTemplate* explain);

  std::unique_ptr<LmdbChunkReads> lmdb_;  // the reads of a judge made on a transaction
  ChunkReads& reads_;
  const StoreOptions& options_;
  const BatchChunkDocs* batch_;
  struct CachedChunk {
    ChunkState stored;       // as stored (not batch_'s)
    ChunkState merged;       // with batch_'s postings, when it has some
    size_t merged_from = 0;  // how many postings of batch_ `merged` holds
  };
  std::unordered_map<uint64_t, CachedChunk> chunks_;
  JudgeMemory own_memory_;
  JudgeMemory* memory_ = &own_memory_;
};

// Bytes in common of two documents (both stored), template chunks left out, through `judge`'s
// reads: the answer of Store::BytesInCommon on every backend.
StatusOr<CommonBytes> DocumentsInCommon(TemplateJudge& judge, DocId a, DocId b, size_t max_spans);

// The mark of cluster `root` whose members are `members` (at least 2, in increasing order): the
// chunks two or more of them hold, by hash (Store::MarkTemplate on every backend).
StatusOr<TemplateMark> MarkOfCluster(ChunkReads& reads, ClusterId root,
                                     std::span<const DocId> members);

// Format 9 -> 10: `template_marks` and `template_chunks` are created empty by Open; nothing else
// changes. Kept as a step of its own for the upgrade chain.
Status UpgradeToFormat10Templates(TxnOps& ops);

// The record of `template_marks` (FORMAT.md, "Templates").
std::string EncodeTemplateMark(const TemplateMark& mark);
Status DecodeTemplateMark(std::string_view bytes, TemplateMark* out);

// Check's part (FORMAT.md, "Invariants" 12): every mark decodes, its key is its cluster, its
// chunks are in increasing order and each has its `template_chunks` entry; every entry of
// `template_chunks` is backed by its mark.
Status CheckTemplates(TxnOps& ops, const std::function<void(std::string)>& problem);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_TEMPLATES_H_
