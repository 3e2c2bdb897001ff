// The reads that the change reports (store/reports.cc) and lost and found (store/lost.cc) make,
// behind one small interface, so that both algorithms are written once and run on either backend
//: the LMDB store implements it with read transactions (store/report_reads_lmdb.cc),
// the Redis Cluster backend with pipelined rounds (redis/backend_reports.cc). Every read that can
// be batched takes a batch: the algorithms ask for a block of URLs' names and documents at once,
// which LMDB answers in one read transaction and Redis in one round trip per block.
#ifndef SHINGLED_STORE_INTERNAL_REPORT_READS_H_
#define SHINGLED_STORE_INTERNAL_REPORT_READS_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "dedup/sketch.h"
#include "store/internal/codec.h"
#include "store/store.h"
#include "store/types.h"

namespace shingled::store::internal {

// A URL as a walk and ReadUrl give it.
struct WalkedUrl {
  UrlId id = 0;
  std::string name;                     // "" when the walk was not asked for it
  std::vector<VersionRecord> versions;  // oldest first; never empty
};

// A document's sketch holder (itself, or its representative) and, when asked, the holder's
// sketch as the backend keeps it (compare two only with ReportReads::Compare).
struct HeldSketch {
  DocId holder = 0;
  dedup::Sketch sketch;
};

class ReportReads {
 public:
  virtual ~ReportReads() = default;

  // Calls `visit` with blocks of the URLs that have versions, after `after`, in URL id order
  // (blocks of a few hundred to a few thousand URLs; the LMDB store reads each in one read
  // transaction, closed before `visit` runs, so `visit` may call the store). A URL's `name` is
  // read when `want_name(id, versions)` says so (null: never; a backend that reads names with
  // the versions anyway may give every name). `visit` answers false to end the walk. Counts each
  // URL in `*walked` (may be null). Not one snapshot when writes go on: a URL or a version
  // written during the walk may be seen or not.
  using WantName = std::function<bool(UrlId, const std::vector<VersionRecord>&)>;
  using BlockVisitor = std::function<StatusOr<bool>(const std::vector<WalkedUrl>& block)>;
  virtual Status Walk(UrlId after, const WantName& want_name, const BlockVisitor& visit,
                      std::atomic<uint64_t>* walked) const = 0;

  // The sweep `id`; NotFound when there is none.
  virtual StatusOr<SweepInfo> Sweep(SweepId id) const = 0;

  // The sketch holder of each of `docs` (in their order, into `*out`), with its sketch when
  // `sketches`. DataLoss when a document has no record.
  virtual Status Holders(const std::vector<DocId>& docs, bool sketches,
                         std::vector<HeldSketch>* out) const = 0;

  // The id of a URL by name; nullopt when it was never stored.
  virtual StatusOr<std::optional<UrlId>> FindUrl(std::string_view url) const = 0;
  // A URL's name and versions; NotFound when it has no name or no version yet.
  virtual StatusOr<WalkedUrl> ReadUrl(UrlId id) const = 0;

  // The cluster id (root) of `doc`, and the members of the cluster whose root is `root`, by id.
  virtual StatusOr<ClusterId> ClusterOf(DocId doc) const = 0;
  virtual StatusOr<std::vector<DocId>> ClusterMembersOf(ClusterId root) const = 0;

  // The candidate documents of the sketch of `doc` (`sketch`, from Holders), as the `similar`
  // queries find them, at most `max` (the best ranked; then `*truncated` is set), in id order.
  virtual Status QueryCandidates(DocId doc, const dedup::Sketch& sketch, size_t max,
                                 std::vector<DocId>* out, bool* truncated) const = 0;
  // The URLs that ever showed `doc`: the first `max` by id into `*out`, all of them counted in
  // `*count`.
  virtual Status UrlsOfDoc(DocId doc, size_t max, std::vector<UrlId>* out, size_t* count) const = 0;

  // The resemblance (from the minhashes) of two sketches from Holders, and the containment of
  // `a` in `b` (from the MOD samples).
  virtual std::pair<double, double> Compare(const dedup::Sketch& a,
                                            const dedup::Sketch& b) const = 0;
};

class StoreImpl;

// The LMDB store's reads. With `pinned`, every read goes through one read transaction opened
// here (lost and found: one consistent view); else each call opens its own (the reports' walks:
// a transaction per block).
StatusOr<std::unique_ptr<ReportReads>> LmdbReportReads(const StoreImpl& impl, bool pinned);

// The algorithms, over the reads (store/store.h describes each). `store` answers the similarity
// queries of the reports (SimilarToDocument) and the sweeps.
StatusOr<ChangeReport> ReportChangesBetween(const Store& store, const ReportReads& reads,
                                            SweepId from, SweepId to,
                                            const ReportProgress& progress);
StatusOr<ChangeList> ReportListChanges(const Store& store, const ReportReads& reads, SweepId from,
                                       SweepId to, const ChangeListOptions& options);
Status ReportStreamChanges(const Store& store, const ReportReads& reads, SweepId from, SweepId to,
                           ChangeKind kind, const std::function<Status(const ChangeRow&)>& row,
                           const ReportProgress& progress);
StatusOr<ChangeHistory> ReportChangesOverSweeps(const Store& store, const ReportReads& reads,
                                                const ReportProgress& progress);
// Lost and found of `url` (Store::Lost): InvalidArgument for options out of range, NotFound for
// a URL never stored. `store` answers the bytes in common of the move rule.
StatusOr<LostAndFound> FindLost(const Store& store, const ReportReads& reads, std::string_view url,
                                const LostOptions& options);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_REPORT_READS_H_
