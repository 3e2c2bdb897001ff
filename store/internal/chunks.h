// The file-chunk graph (format 9; FORMAT.md, "Chunks"): writing a new document's chunks, reading
// them, bytes in common for the writer's matches and the similarity queries, and Check's part.
// Private to store/; store/chunks.cc.
#ifndef SHINGLED_STORE_INTERNAL_CHUNKS_H_
#define SHINGLED_STORE_INTERNAL_CHUNKS_H_

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/chunker.h"
#include "store/internal/schema.h"
#include "store/types.h"

namespace shingled::store::internal {

// Records a NEW document's chunks: its `doc_chunks` record and one `chunk_docs` posting per
// distinct chunk. Writes nothing for an empty list (the document's chunks stay unknown).
// REQUIRES: `doc` is larger than every document in `doc_chunks` (the writer's next id).
Status PutChunks(TxnOps& ops, DocId doc, std::span<const dedup::Chunk> chunks);
// For a document seen again (identical bytes): records `chunks` as PutChunks does when the
// document has none yet (stored before format 9), else writes nothing.
Status BackfillChunks(TxnOps& ops, DocId doc, std::span<const dedup::Chunk> chunks);
// A document's chunks into `*out` (cleared first); `*known` false when it has no record.
// DataLoss for a record that does not decode.
Status ReadChunks(TxnOps& ops, DocId doc, std::vector<dedup::Chunk>* out, bool* known);
// Sets `result->match_common`, one per match (without spans), from `chunks` (the page's, at
// `url`) and the match's stored chunks, template chunks left out (templates.h).
Status FillMatchCommon(TxnOps& ops, const StoreOptions& options, std::string_view url,
                       std::span<const dedup::Chunk> chunks, PageResult* result);
// The same for similarity results; `query` are the query's chunks, of document `query_doc` (0:
// a page not stored, without a host).
Status FillSimilarCommon(TxnOps& ops, const StoreOptions& options, DocId query_doc,
                         std::span<const dedup::Chunk> query, std::vector<SimilarDoc>* results);
// Check's part (FORMAT.md, "Invariants" 11): every `doc_chunks` record decodes and names a
// document, each of its distinct chunks has its posting in `chunk_docs`, and every posting of
// `chunk_docs` is a chunk of its document's record. Calls `problem` for each violation.
Status CheckChunks(TxnOps& ops, const std::function<void(std::string)>& problem);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_CHUNKS_H_
