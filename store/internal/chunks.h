// The file-chunk graph (format 9; FORMAT.md, "Chunks"): writing a new document's chunks, reading
// them, bytes in common for the writer's matches and the similarity queries, and Check's part.
// Private to store/; store/chunks.cc.
#ifndef SHINGLED_STORE_INTERNAL_CHUNKS_H_
#define SHINGLED_STORE_INTERNAL_CHUNKS_H_

#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "dedup/chunker.h"
#include "store/internal/schema.h"
#include "store/internal/write_buffer.h"
#include "store/types.h"

namespace shingled::store::internal {

class TemplateJudge;  // templates.h

// The `chunk_docs` postings of one write batch, held in memory until the batch ends. Then those of
// documents above their slice's chunk watermark (every new document's) go to the write buffer
// (AdvanceChunkBuffer; FORMAT.md, "The write buffer of chunk_docs"), and the others (a document
// stored before format 9 whose chunks are backfilled below a watermark) into the B-tree at once,
// sorted. Until then the batch's readers of `chunk_docs` (TemplateJudge) add these to the
// B-tree's and the buffer's.
class BatchChunkDocs {
 public:
  // The chunk watermarks the batch began with (null: every posting goes to the B-tree).
  void set_marks(const Watermarks* marks) { marks_ = marks; }
  // Files `doc` under chunk `hash`. REQUIRES: the pair is filed once, and is not stored.
  void File(uint64_t hash, DocId doc);
  // Appends to `*out` the documents filed under `hash` by this batch, in the order filed.
  void Read(uint64_t hash, std::vector<DocId>* out) const;
  // How many documents this batch filed under `hash`.
  size_t Count(uint64_t hash) const;
  // Moves the postings out, sorted: `*buffered` those above their slice's watermark, `*direct`
  // the others, and forgets them.
  void Take(std::vector<BufferEntry>* buffered, std::vector<BufferEntry>* direct);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t hash;
    DocId doc;
    uint32_t next;  // entries_ index + 1 of the hash's next posting; 0 ends the chain
  };
  struct Chain {
    uint32_t head;  // entries_ index + 1
    uint32_t tail;
    uint32_t count;
  };
  const Watermarks* marks_ = nullptr;
  std::vector<Entry> entries_;
  std::unordered_map<uint64_t, Chain> chains_;
};

// Puts `sorted` (by hash, then document) into `chunk_docs` through one cursor: consecutive keys on
// one leaf are found from the cursor's page instead of by a descent from the root per posting.
Status PutChunkPostings(TxnOps& ops, const std::vector<BufferEntry>& sorted);

// Records a NEW document's chunks: its `doc_chunks` record and one `chunk_docs` posting per
// distinct chunk, filed in `batch`.
// Writes nothing for an empty list (the document's chunks stay unknown).
// REQUIRES: `doc` is larger than every document in `doc_chunks` (the writer's next id).
Status PutChunks(TxnOps& ops, DocId doc, std::span<const dedup::Chunk> chunks,
                 BatchChunkDocs& batch);
// For a document seen again (identical bytes): records `chunks` as PutChunks does when the
// document has none yet (stored before format 9), else writes nothing.
Status BackfillChunks(TxnOps& ops, DocId doc, std::span<const dedup::Chunk> chunks,
                      BatchChunkDocs& batch);
// A document's chunks into `*out` (cleared first); `*known` false when it has no record.
// DataLoss for a record that does not decode.
Status ReadChunks(TxnOps& ops, DocId doc, std::vector<dedup::Chunk>* out, bool* known);
// Sets `result->match_common`, one per match (without spans), from `chunks` (the page's, at
// `url`) and the match's stored chunks, template chunks left out by `judge` (templates.h; the
// write batch's, which sees the batch's postings not yet put; or another backend's judge).
Status FillMatchCommon(TemplateJudge& judge, std::string_view url,
                       std::span<const dedup::Chunk> chunks, PageResult* result);
// The same for similarity results; `query` are the query's chunks, of document `query_doc` (0:
// a page not stored, without a host), through `judge` (a query's own, on either backend).
Status FillSimilarCommon(TemplateJudge& judge, DocId query_doc, std::span<const dedup::Chunk> query,
                         std::vector<SimilarDoc>* results);
// Check's part (FORMAT.md, "Invariants" 11): every `doc_chunks` record decodes and names a
// document, each of its distinct chunks has its posting in `chunk_docs` or, above its slice's
// chunk watermark, in `buffer` (and not in `chunk_docs`), and every posting of `chunk_docs` is a
// chunk of its document's record. Calls `problem` for each violation.
Status CheckChunks(TxnOps& ops, const WriteBuffer& buffer,
                   const std::function<void(std::string)>& problem);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_CHUNKS_H_
