// Lost and found inside a caller's read transaction: Store::Lost, and the store's reports that
// ask "where did this died URL's content go" (the change report's moved count). Private to
// store/. store/store.h (Store::Lost) describes the search; store/types.h the answer.
#ifndef SHINGLED_STORE_INTERNAL_LOST_H_
#define SHINGLED_STORE_INTERNAL_LOST_H_

#include "base/status.h"
#include "store/internal/schema.h"
#include "store/types.h"

namespace shingled::store::internal {

class StoreImpl;

// Lost and found of url id `url` in the read transaction `ops`: its state (alive, its last live
// version, its death, its last redirect) and, when it is not alive, its successors ranked, the
// best in `best` (status kMoved) and the others in `candidates`. The answer's `url` is the URL's
// name. NotFound when `url` has no name; DataLoss for a damaged record it reads. Bounded by
// `options` (LostAndFound::truncated says when a bound cut the search).
StatusOr<LostAndFound> FindSuccessors(TxnOps& ops, const StoreImpl& impl, UrlId url,
                                      const LostOptions& options);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_LOST_H_
