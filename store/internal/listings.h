// The listings and the repository reports, written once over a small read interface
// (ListingReads) that each backend implements: the LMDB store with read transactions
// (store/listings.cc), the Redis Cluster backend with pipelined rounds (redis/backend_listings.cc).
// The ranking, paging, filtering and counting are here; only the walks and the reads differ.
#ifndef SHINGLED_STORE_INTERNAL_LISTINGS_H_
#define SHINGLED_STORE_INTERNAL_LISTINGS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "dedup/chunker.h"
#include "store/internal/codec.h"
#include "store/repo_reports.h"
#include "store/types.h"

namespace shingled::store::internal {

// What the listings read of a document record.
struct ListedDocument {
  DocId rep = 0;  // the document holding its sketch: itself, or its representative
  uint64_t bytes = 0;
  int64_t first_seen = 0, last_seen = 0;
};

// The reads of the listings. Each batch call answers in the order asked. The LMDB store answers
// each call in a read transaction (one for the whole page of a listing); the Redis backend with
// one pipelined round per block of ids.
class ListingReads {
 public:
  virtual ~ListingReads() = default;
  // The records of `docs` (ascending, distinct), nullopt for a document without one (on the
  // cluster, an id another daemon reserved and has not written yet: the listings pass it by).
  virtual Status Documents(std::span<const DocId> docs,
                           std::vector<std::optional<ListedDocument>>* out) = 0;
  // For each of `docs`, the live URLs whose last version holds it, by URL id.
  virtual Status LiveUrls(std::span<const DocId> docs, std::vector<std::vector<UrlId>>* out) = 0;
  // The names of `urls`.
  virtual Status UrlNames(std::span<const UrlId> urls, std::vector<std::string>* out) = 0;
  // Calls `visit(id, size)` for every cluster of two or more documents, in any order.
  virtual Status ForEachCluster(const std::function<void(ClusterId, uint64_t)>& visit) = 0;
  // The members of each of clusters `ids` (as ForEachCluster named them), by id.
  virtual Status ClusterMembers(std::span<const ClusterId> ids,
                                std::vector<std::vector<DocId>>* out) = 0;
  // The document of each live URL's last version, one entry per live URL, in any order.
  virtual Status LiveDocuments(std::vector<DocId>* out) = 0;
  // Calls `visit(block)` with the documents that two or more URLs ever held (two or more
  // entries in their URL list), by id, a block of a few thousand at most at a time; counts every
  // document looked at in `*progress` (may be null). No read is held open during `visit`.
  virtual Status ForEachSharedDocument(const std::function<Status(std::span<const DocId>)>& visit,
                                       std::atomic<uint64_t>* progress) = 0;

  // --- the clusters report's (paper 003, figure 5) ---
  // Calls `visit(hash, doc)` for every document filed under every chunk (`chunk_docs`), a chunk's
  // postings one after the other (chunks in any order; a posting may come twice).
  virtual Status ForEachChunkPosting(const std::function<void(uint64_t, DocId)>& visit) = 0;
  // The chunks of each of `docs` (empty: none recorded).
  virtual Status Chunks(std::span<const DocId> docs,
                        std::vector<std::vector<dedup::Chunk>>* out) = 0;
  // Store::BytesInCommon(a, b, 0) of each of `pairs` (stored documents), in the order asked.
  virtual Status Common(std::span<const std::pair<DocId, DocId>> pairs,
                        std::vector<CommonBytes>* out) = 0;
};

// The clusters, identical sets and identical report over `reads` (store.h gives the contracts).
StatusOr<ClusterListPage> ListClusters(ListingReads& reads, const ClusterListOptions& options);
StatusOr<IdenticalSetPage> ListIdenticalSets(ListingReads& reads,
                                             const IdenticalSetOptions& options);
Status StreamIdenticalReport(ListingReads& reads, const IdenticalReportOptions& options,
                             const std::function<Status(const IdenticalReportTotals&)>& totals,
                             const std::function<Status(const IdenticalReportSet&)>& set,
                             const RepoReportProgress& progress);
Status StreamClusterReport(ListingReads& reads, const ClusterReportOptions& options,
                           const std::function<Status(const ClusterReportCluster&)>& cluster,
                           ClusterReportTotals* totals, const RepoReportProgress& progress);

// The LMDB store's reads (store/listings.cc): with `one_txn`, every call in one read transaction
// opened now (a page of a listing); without, a read transaction per call (the report, whose
// calls are blocks of a few thousand ids at most).
class StoreImpl;
StatusOr<std::unique_ptr<ListingReads>> NewLmdbListingReads(const StoreImpl& impl, bool one_txn);
// Their ForEachChunkPosting (store/repo_reports.cc): `chunk_docs` and its write buffer, walked in
// step, in read transactions of about 65,536 entries.
Status WalkLmdbChunkPostings(const StoreImpl& impl,
                             const std::function<void(uint64_t, DocId)>& visit);

// --- ListUrls: the filters and the paging; each backend walks its own order ---

// The options checked (limit, max_examined, the prefixes by ValidateScope's rules): the prefixes,
// sorted, of which `ranges` are the disjoint ones (an empty view for every URL).
struct UrlListScope {
  std::vector<std::string> prefixes;
  std::vector<std::string_view> ranges;
};
StatusOr<UrlListScope> CheckUrlListOptions(const UrlListOptions& options);

// What ListUrls reads of one URL's versions: the first version's date, the last version (and its
// seq, which is the number of versions: seqs run from 1 without gaps), and the last version in
// `sweep` (when `sweep` is not 0).
struct UrlVersions {
  int64_t first_date = 0;
  uint32_t last_seq = 0;
  VersionRecord last;
  uint32_t in_sweep_seq = 0;  // 0: none
  VersionRecord in_sweep;
};
// The summary of a URL's versions (oldest first; not empty).
UrlVersions SummarizeVersions(std::span<const VersionRecord> versions, SweepId sweep);

// One page being filled: call Look(cursor) before looking at each URL (false: the page is
// full, and its `next` is set to the cursor of the URL looked at last), then Offer the URL.
class UrlPager {
 public:
  explicit UrlPager(const UrlListOptions& options) : options_(options) {}
  bool Look(std::string_view cursor);
  // Lists the URL when the filters hold; `name` gives its name (called only then).
  Status Offer(UrlVersions vs, const std::function<StatusOr<std::string>()>& name);
  UrlPage Take() { return std::move(page_); }

 private:
  const UrlListOptions& options_;
  UrlPage page_;
  std::string last_;
  size_t examined_ = 0;
};

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_LISTINGS_H_
