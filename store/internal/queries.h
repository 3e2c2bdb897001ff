// Pieces of the read-only queries (queries.cc) that other queries reuse (lost.cc). Private to
// store/; every function works inside the caller's read transaction.
#ifndef SHINGLED_STORE_INTERNAL_QUERIES_H_
#define SHINGLED_STORE_INTERNAL_QUERIES_H_

#include <span>
#include <vector>

#include "base/status.h"
#include "dedup/sketch.h"
#include "store/internal/schema.h"
#include "store/internal/write_buffer.h"
#include "store/types.h"

namespace shingled::store::internal {

// The candidate documents of a query sketch (FORMAT.md, "Lookups"), as the `similar` queries
// find them: the documents sharing usable sample values with `sketch`, and those sharing a
// feature when the samples are not enough. `*out` gets them in id order, at most
// options.max_candidates (the best ranked, when there are more: then `*truncated` is set).
// `buffer` is the transaction's write buffer (StoreImpl::BufferFor). `*left_out` (if given): how
// many candidates were not kept; `exclude` (not 0): a document never counted (the
// query's own), so that it takes no place. `reserved`: candidates found otherwise (the
// containment candidates), which take their places among max_candidates and are not in `*out`.
Status FindQueryCandidates(TxnOps& ops, const StoreOptions& options, const WriteBuffer& buffer,
                           const dedup::Sketch& sketch, std::vector<DocId>* out, bool* truncated,
                           uint64_t* left_out = nullptr, DocId exclude = 0,
                           std::span<const DocId> reserved = {});

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_QUERIES_H_
