// Store: shingled's memory. Documents, dated URL versions, sweeps, the candidate indexes and the
// persistent clusters. An interface with two backends:
//   - the embedded default, one LMDB environment in a directory (Store::Open; store/lmdb_store.h;
//     the bytes are described in store/FORMAT.md);
//   - a Redis Cluster shared by many daemons (redis/backend.h; docs/REDIS.md).
// What only a store kept in one local memory-mapped file can do (Backup, WarmMap, the map's size
// limit, the commit fault hooks) is not here but in store/mapped_file.h, reached through
// mapped_file(): LMDB has it, the Redis Cluster backend answers null.
// Both decide with the same code (store/decide.h), and the same tests run on both
// (tests/store/README.md). What follows describes the LMDB store; the
// Redis backend's differences are in docs/REDIS.md.
//
// Thread-safety: a Store is safe for concurrent use. Writes (Apply, OpenSweep, CloseSweep,
// ReopenSweep) are serialized inside; each is one LMDB write transaction. Queries run in their
// own read transactions and do not wait for the writer, except while the map grows (rare: the
// map doubles), which needs every transaction of this process closed. One process at a time should
// write to a store directory; other processes may read.
//
// Durability: a page is acknowledged (Apply returns) only after its batch's transaction is
// committed and fsynced. A commit that fails for lack of space (a full disk, or a full map at
// max_map_size) fails that write only, with an out-of-space error (IsOutOfSpace): nothing of it
// is committed, and the next write may succeed once there is room (WriteRoom). After any other
// failed commit (an I/O error), the Store keeps the error, refuses every further write with
// FailedPrecondition, and keeps serving reads; reopen it to write again. health() exposes the
// error.
#ifndef SHINGLED_STORE_STORE_H_
#define SHINGLED_STORE_STORE_H_

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/sketch.h"
#include "store/repo_reports.h"
#include "store/types.h"

namespace shingled::store {

class MappedFile;  // store/mapped_file.h

// --- out of space ---
// A write that failed for lack of space: ResourceExhausted, its message beginning "disk full: "
// (ENOSPC or EDQUOT, or a short write on a nearly full file system; it names the store's
// directory and the bytes free) or "map full: " (the map at store.max_map_size; it names the
// key and its value). The store goes on serving, and writes again once there is room.
Status DiskFullError(std::string_view detail);
Status MapFullError(std::string_view detail);
bool IsOutOfSpace(const Status& status);
// "disk_full" or "map_full" for an out-of-space error; "" otherwise (metrics' reason label).
std::string_view OutOfSpaceReason(const Status& status);
// Free bytes the store's file system needs before WriteRoom lets writes resume after a full disk.
inline constexpr uint64_t kResumeFreeBytes = uint64_t{1} << 20;

// How a backend answers some methods every backend has (Store::capabilities()). A caller asks
// here instead of calling and reading the error. (What needs a local file is not a capability but
// an interface of its own: Store::mapped_file().)
struct Capabilities {
  // ListUrls lists in the order of the URLs' bytes, its cursor the last URL looked at; without
  // it, in URL id order, its cursor the last URL id in decimal (ListUrls below).
  bool url_byte_order = false;
};

class Store {
 public:
  // Opens the store in directory `dir`, creating the directory and the store if needed; a new
  // store records `params` and `rabin_polynomial` (the SketchContext's). Errors:
  //   InvalidArgument if `params` or `options` do not validate;
  //   FailedPrecondition if the store was made with other parameters (the message names the
  //     first differing field and both values) or another format version;
  //   DataLoss if the meta record is corrupt; other LMDB errors translated.
  [[nodiscard]] static StatusOr<std::unique_ptr<Store>> Open(const std::string& dir,
                                                             const StoreOptions& options,
                                                             const dedup::SketchParams& params,
                                                             uint64_t rabin_polynomial);
  // The same, with the params and polynomial of `context`.
  [[nodiscard]] static StatusOr<std::unique_ptr<Store>> Open(const std::string& dir,
                                                             const StoreOptions& options,
                                                             const dedup::SketchContext& context);

  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // --- writes ---

  // Decides and records each page, in order, in ONE write transaction (group commit); returns
  // one result per page, only after the transaction is durable. Pages of a batch see the pages
  // before them. Applying the same (URL, sweep, content) again writes nothing and answers the
  // verdict recorded then (`replayed`).
  // A revisit (PageInput::revisit) adds a version of an existing document without a sketch; it
  // is idempotent the same way.
  // A page that cannot be applied (unknown or closed sweep, sketch not made with this store's
  // params, URL empty; NotFound for a revisit of a URL without a document) gets a non-OK
  // PageResult::status and writes nothing; the others apply.
  // Errors for the whole batch (nothing applied):
  //   ResourceExhausted when the map is full and may not grow, or the disk is full;
  //   FailedPrecondition after an earlier failed commit; other LMDB errors translated.
  // A full map grows (doubling) and the batch is retried, invisibly to the caller.
  [[nodiscard]] virtual StatusOr<std::vector<PageResult>> Apply(
      std::span<const PageInput> pages) = 0;

  // Opens a sweep named `name` starting at `start`, covering the URLs that start with one of the
  // `scope` prefixes (absolute URLs or their starts, e.g. "https://example.com/docs/"; closing
  // the sweep records gone only URLs in its scope, and a sweep without one records none). If an
  // open sweep has that name already, it is returned (so a restarted ingest continues its
  // sweep); one without a scope takes `scope`. AlreadyExists if a closed sweep has that name;
  // FailedPrecondition if the open one has another non-empty scope; InvalidArgument if the name
  // is empty or not UTF-8 text, or a prefix is not the start of an absolute URL (more than 1000
  // prefixes, or one over 400 bytes). A version dated before its sweep's start lowers the start
  // to its date.
  [[nodiscard]] virtual StatusOr<SweepInfo> OpenSweep(std::string_view name, int64_t start,
                                                      std::vector<std::string> scope = {}) = 0;
  // Says whether a URL not seen in a sweep is gone when the sweep closes.
  using GoneFilter = std::function<bool(std::string_view url)>;
  struct CloseSweepOptions {
    // Computes and lists what the close would record gone; writes nothing, and the answer's
    // sweep is as it is (open).
    bool dry_run = false;
    // The answer lists the first `list_limit` gone URLs in URL order (it counts them all).
    size_t list_limit = 0;
    // Further narrows the URLs that may be recorded gone (a crawler keeps URLs whose fetch
    // failed or robots.txt refused). Null: every URL the scope rule gives.
    GoneFilter may_be_gone;
  };
  // Closes the sweep at `end`. Every URL in the sweep's scope whose last version is live, and
  // that has no version in this sweep or in a later one (started later; the same start and a
  // larger id), and whose last version is not dated after `end`, gets a "gone" version (status
  // 0) dated `end`. So closing an older sweep after a newer one marks nothing the newer one saw,
  // and no version is dated before the one it follows (FORMAT.md, "Closing a sweep"). NotFound
  // for an unknown id; FailedPrecondition if closed; InvalidArgument if `end` is before the
  // sweep's start.
  [[nodiscard]] virtual StatusOr<SweepClosing> CloseSweep(SweepId id, int64_t end,
                                                          const CloseSweepOptions& options) = 0;
  [[nodiscard]] StatusOr<SweepClosing> CloseSweep(SweepId id, int64_t end) {
    return CloseSweep(id, end, CloseSweepOptions{});
  }
  // Undoes a close: removes the gone versions the close wrote (later versions of those URLs
  // move down one seq) and opens the sweep again. NotFound for an unknown id;
  // FailedPrecondition if the sweep is open.
  [[nodiscard]] virtual StatusOr<SweepReopening> ReopenSweep(SweepId id) = 0;

  // --- forgetting (store/forget.cc; FORMAT.md, "Forgetting") ---

  // A takedown: forgets the URLs `options` names (at most options.max_urls of them, in URL
  // order), each with every version. A document that no remaining URL shows goes with its
  // postings, fingerprints, chunks, verification sample, links and place in its cluster, unless
  // a remaining document shares its sketch (then it stays, URL-less, until they go too). A
  // cluster that lost a member is recomputed from its remaining members (the relations that
  // form clusters, judged again between them): it may split; the part holding the old id keeps
  // it, the others take their smallest document id. The sweeps' counts lose the versions. The
  // takedown is recorded (ForgetRecords). One write transaction; a dry run writes nothing.
  // Cost: the matching URLs' versions, the removed documents' records and postings, a scan of
  // `documents` and `links` after the smallest removed document, and per recomputed cluster a
  // judgement of pairs of its members. InvalidArgument for an empty value, a prefix or host that
  // is not one, max_urls out of range; NotFound for a URL never stored (kUrl).
  [[nodiscard]] virtual StatusOr<ForgetResult> Forget(const ForgetOptions& options) = 0;
  // One bounded step of retention (RetentionOptions): looks at the next options.max_urls URLs
  // in URL id order after the cursor kept in the store (so a pass resumes where it stopped, after
  // a restart or a kill), removes the versions and URLs the rules let go and then, as Forget,
  // the documents no URL shows and their place in their clusters. One write transaction.
  // InvalidArgument for max_urls out of range or a negative age.
  [[nodiscard]] virtual StatusOr<RetentionStep> ApplyRetention(const RetentionOptions& options) = 0;
  // The takedowns recorded, oldest first, ids above `after`, at most `limit`.
  [[nodiscard]] virtual StatusOr<std::vector<ForgetRecord>> ForgetRecords(
      uint64_t after = 0, size_t limit = SIZE_MAX) const = 0;

  // --- queries (read transactions) ---

  [[nodiscard]] virtual StatusOr<std::vector<SweepInfo>> Sweeps() const = 0;
  [[nodiscard]] virtual StatusOr<SweepInfo> FindSweep(std::string_view name) const = 0;  // NotFound

  // NotFound for an unknown document.
  [[nodiscard]] virtual StatusOr<DocumentInfo> Document(DocId doc) const = 0;
  // The document whose raw bytes have this `identical` fingerprint (dedup::IdenticalFingerprint),
  // or 0 when none is stored.
  [[nodiscard]] virtual StatusOr<DocId> FindIdentical(
      const dedup::Fingerprint128& identical) const = 0;
  // The versions of a URL, oldest first. NotFound if the URL was never stored.
  [[nodiscard]] virtual StatusOr<std::vector<UrlVersion>> History(std::string_view url) const = 0;
  // A cluster by its id or by any member's document id; NotFound ("cluster ID not found") for
  // an id that is no document.
  [[nodiscard]] virtual StatusOr<ClusterInfo> Cluster(DocId any_member) const = 0;
  // Lost and found (store/lost.cc): where the content of `url` lives now. Alive when its last
  // version is live. Otherwise its successors: the live URL a recorded redirect leads to (along
  // a chain, bounded), which wins over content; then the URLs with a version resembling (or
  // containing) its last live content, found with the `similar` queries' candidate search and
  // its document's cluster, each followed forward to its own live state (a successor that moved
  // on again is followed, bounded, without cycles). They rank: redirect first, then born or
  // changed when `url` died, then resemblance, then recency. NotFound ("URL never stored") for
  // a URL never stored; DataLoss for a damaged record it reads.
  // Written once over store/internal/report_reads.h: on LMDB in one read transaction; on the
  // Redis Cluster backend in pipelined rounds, where `cluster` is named by its smallest member.
  [[nodiscard]] virtual StatusOr<LostAndFound> Lost(std::string_view url,
                                                    const LostOptions& options = {}) const = 0;
  // The live URLs (last version with a document: neither dead nor gone), for a crawler's
  // revisits. Looks at URLs in id order (the order they were first stored) from the one after
  // url id `after` (0: from the first), calls `visit` with each live one, and stops after looking
  // at `max_urls` URLs, live or not, so that one call holds its read transaction briefly (a long
  // one would keep the map from growing). Returns the id to pass as `after` to go on, or 0 when
  // every URL has been looked at. Per URL: one step in `url_names` and one descent in `versions`;
  // no document is read. The view passed to `visit` is valid during the call only; `visit` must
  // not call the Store. REQUIRES: max_urls >= 1.
  [[nodiscard]] virtual StatusOr<UrlId> KnownUrls(
      UrlId after, size_t max_urls,
      const std::function<void(std::string_view url)>& visit) const = 0;

  // On-the-fly resemblance (Broder et al. 1997): candidates from the sample index (values above the
  // common-value limit skipped) and, when fewer than 8 of the sample values are usable, the
  // features (not the super shingles, which the writer uses: FORMAT.md, "Lookups"); resemblance and
  // containment both ways; results that reach `query.threshold` in any of the three, sorted by
  // resemblance, then containment, then id; at most `query.limit`. By document (itself
  // excluded, NotFound if unknown), by URL (its last document; NotFound) or by a sketch made with
  // this store's params (InvalidArgument otherwise; an empty sketch has no results).
  [[nodiscard]] virtual StatusOr<std::vector<SimilarDoc>> SimilarToDocument(
      DocId doc, const QueryOptions& query) const = 0;
  [[nodiscard]] virtual StatusOr<std::vector<SimilarDoc>> SimilarToUrl(
      std::string_view url, const QueryOptions& query) const = 0;
  [[nodiscard]] virtual StatusOr<std::vector<SimilarDoc>> SimilarToSketch(
      const dedup::Sketch& sketch, const QueryOptions& query) const = 0;

  [[nodiscard]] virtual StatusOr<StoreStats> Stats() const = 0;

  // --- reports (store/reports.cc; docs/REPORTS.md defines every count) ---

  // What changed between sweeps `from` and `to` (ChangeKind), in total and per host. Walks
  // `versions` twice (first the URLs born or changed in `to`, the possible new homes of moved
  // content; then every URL), in read transactions of a few thousand URLs each, so that a map
  // growth waits for one chunk only; the report is therefore not one snapshot when writes go on.
  // For a URL that died, one similarity query (SimilarToDocument) looks for its content at a
  // new home. Memory: the per-host counters, and ~100 bytes per URL born or changed in `to`.
  // NotFound if either sweep does not exist; InvalidArgument if they are the same.
  // The walks are written once over store/internal/report_reads.h; the Redis Cluster backend
  // walks the URL ids (a block of 256 per pipelined round) and reads each block's documents in
  // one round, so both backends answer in URL id order with the same rows and cursors.
  [[nodiscard]] virtual StatusOr<ChangeReport> ChangesBetween(
      SweepId from, SweepId to, const ReportProgress& progress = {}) const = 0;
  // The URLs of one kind between `from` and `to`, a page of `options.limit` rows after URL id
  // `options.after`. URL ids only grow, so pages neither repeat nor skip a URL under writes. A
  // page costs the first walk of ChangesBetween, plus the second in full for kBorn and kMovedIn
  // (which URLs are new homes is only known once every death is looked at).
  [[nodiscard]] virtual StatusOr<ChangeList> ListChanges(
      SweepId from, SweepId to, const ChangeListOptions& options) const = 0;
  // Every row of one kind in URL id order, to `row` (a CSV export); stops at the first error
  // `row` returns. The same walks as ListChanges; holds no row after `row` returns.
  [[nodiscard]] virtual Status StreamChanges(SweepId from, SweepId to, ChangeKind kind,
                                             const std::function<Status(const ChangeRow&)>& row,
                                             const ReportProgress& progress = {}) const = 0;
  // The changes between each consecutive pair of sweeps (by start), and the lifetimes and
  // changes per URL over all versions: one ChangesBetween per pair, and one walk of `versions`.
  [[nodiscard]] virtual StatusOr<ChangeHistory> ChangesOverSweeps(
      const ReportProgress& progress = {}) const = 0;

  // --- listings (store/listings.cc) ---

  // A page of URLs in the order of their `urls` keys (FORMAT.md, "URLs"), filtered by
  // `options` (UrlListOptions). Paging by the last key looked at is stable under concurrent
  // writes: a URL that existed when the first page was asked for is listed once (if it matches
  // when its page is read), whatever is inserted or changed meanwhile; a URL inserted meanwhile
  // is listed if its key sorts after the cursor. Per URL looked at: one descent in `versions`
  // (two without a sweep filter; with one, a walk of the URL's versions) and, for a URL over 480
  // bytes, one in `url_names`. Errors: InvalidArgument for limit or max_examined 0 or a bad
  // prefix (ValidateScope's rules); NotFound for an unknown sweep id.
  //
  // On the redis-cluster backend (docs/REDIS.md, "The listings"), which keeps no ordered index of
  // URLs: the same items and filters, in URL id order, the cursor the last URL id looked at (in
  // decimal; InvalidArgument for any other). Every URL read counts towards max_examined, in a
  // prefix or not (the walk reads every id: a prefix does not narrow it). Stable under writes as
  // well: URL ids only grow, so a URL added meanwhile is listed on a later page.
  [[nodiscard]] virtual StatusOr<UrlPage> ListUrls(const UrlListOptions& options) const = 0;

  // Clusters of at least options.min_size documents, largest first, then by id, a page at a
  // time. Cost per page: one step per cluster in `cluster_members` (every cluster of two or
  // more is looked at, its size counted, a heap keeping the page's), then for each cluster listed
  // one read per member in `documents` and `doc_urls` and one `versions` descent per URL that
  // ever held a member. InvalidArgument for min_size < 2 or limit 0.
  //
  // On the redis-cluster backend: the same ranking and paging (store/internal/listings.h), over
  // the cluster size buckets (a root's size, kept by its merges) read a bucket of 64 roots at a
  // time; a cluster's id is its smallest document id, so on a tie of sizes the order of two
  // clusters may differ from LMDB's (whose id is the root it keeps).
  [[nodiscard]] virtual StatusOr<ClusterListPage> ListClusters(
      const ClusterListOptions& options) const = 0;

  // Like Cluster(any_member), a page of at most `limit` members whose document id is above
  // `after` (0: from the first), and the cluster's size. NotFound as Cluster; InvalidArgument for
  // limit 0. Costs the page's members, not the cluster's.
  [[nodiscard]] virtual StatusOr<ClusterMembersPage> ClusterPage(DocId any_member, DocId after,
                                                                 size_t limit) const = 0;

  // Identical sets (IdenticalSet) of at least options.min_urls live URLs, most URLs first, then
  // by representative. Cost per page: one pass over `versions` (each URL's last version), a
  // `documents` read per distinct live document, in id order, and memory of ~40 bytes per
  // distinct live document; then the page's sets' URLs through `doc_urls`. InvalidArgument for
  // min_urls < 2 or limit 0. On the redis-cluster backend the same (the pass over the URL
  // ids' last versions, a block of 256 per round; the records in rounds of 256).
  [[nodiscard]] virtual StatusOr<IdenticalSetPage> ListIdenticalSets(
      const IdenticalSetOptions& options) const = 0;

  // --- bytes in common (store/chunks.cc) ---

  // What documents `a` and `b` share by their content-defined chunks (CommonBytes: the shared
  // bytes, a lower bound; each side's share; the relation; at most `max_spans` shared spans).
  // Unknown (CommonBytes::known false) when either has no chunks (stored before format 9, or with
  // chunking off). NotFound for an unknown document. One read transaction; reads two
  // `doc_chunks` records.
  [[nodiscard]] virtual StatusOr<CommonBytes> BytesInCommon(
      DocId a, DocId b, size_t max_spans = kMaxCommonSpans) const = 0;

  // Both backends answer the bytes-in-common and template methods with the same code (the
  // judge of store/internal/templates.h over a ChunkReads each). On the Redis Cluster backend the
  // reads are pipelined rounds, not one transaction (a write meanwhile may show in part), and a
  // mark is filed under the cluster's smallest document id (its root there; docs/REDIS.md,
  // "Chunks and templates"), so TemplateMarks' order follows those ids.

  // --- templates (store/templates.cc; FORMAT.md, "Templates") ---

  // Marks the cluster of document `cluster` as template: the chunks held by at least two of its
  // members now become template (bytes in common leaves them out), without re-chunking anything.
  // The mark is filed under the cluster's id (its root); marking again replaces it with the
  // chunks shared now. NotFound for an id that is no document; FailedPrecondition for a cluster
  // of one document. One write transaction; reads every member's `doc_chunks` record.
  [[nodiscard]] virtual StatusOr<TemplateMark> MarkTemplate(ClusterId cluster) = 0;
  // Removes the mark filed under `cluster`, else under the cluster document `cluster` is in now;
  // its chunks count again (unless over a limit or in another mark). The mark removed, or nullopt
  // when there was none. NotFound for an id that is neither a mark nor a document.
  [[nodiscard]] virtual StatusOr<std::optional<TemplateMark>> UnmarkTemplate(ClusterId cluster) = 0;
  // The marks filed under a cluster id above `after`, by id, at most `limit` of them.
  [[nodiscard]] virtual StatusOr<std::vector<TemplateMark>> TemplateMarks(
      ClusterId after = 0, size_t limit = SIZE_MAX) const = 0;
  // Each chunk of document `doc`, in order, with its verdict (for measuring the limits).
  [[nodiscard]] virtual StatusOr<std::vector<ChunkTemplate>> ChunkTemplates(DocId doc) const = 0;

  // --- the repository reports (paper 003 figures 5 and 6; store/repo_reports.cc) ---

  // The documents held by two or more live URLs, largest waste (bytes * (copies - 1)) first,
  // then by document id: `totals` once, then `set` for each of the first options.limit. Memory:
  // 24 bytes per such document, never the URLs of more than one set. Reads `doc_urls` once in
  // read transactions of 4,096 documents (a document with one entry costs no more), each
  // URL's last version for documents with several, then the listed sets' URLs, a set per read
  // transaction. InvalidArgument for limit or max_urls 0. On the redis-cluster backend the
  // same answer: the URL lists of the document ids up to `next:doc`, 256 per pipelined round.
  [[nodiscard]] virtual Status StreamIdenticalReport(
      const IdenticalReportOptions& options,
      const std::function<Status(const IdenticalReportTotals&)>& totals,
      const std::function<Status(const IdenticalReportSet&)>& set,
      const RepoReportProgress& progress = {}) const = 0;

  // Clusters of live documents linked by bytes in common (ClusterReportOptions): the connected
  // components of the links within each partition (documents joined through the chunks they
  // share, chunks in more than max_chunk_docs documents left out: paper 003, section 2.5); a
  // component of one document is not listed. Partitions most documents first (then by smallest
  // id), each's components most removable bytes first (then by id): `cluster` for each, until
  // options.limit; `*totals` filled as it goes. Memory: a union-find over the documents that
  // share a chunk (~60 bytes each), then one partition's chunk lists and candidate pairs at a
  // time. Reads `chunk_docs` once (read transactions of 65,536 entries), then per partition its
  // documents' records, live URLs and chunks in one read transaction, and one BytesInCommon per
  // checked pair. InvalidArgument for a setting out of range (docs/REPORTS.md).
  [[nodiscard]] virtual Status StreamClusterReport(
      const ClusterReportOptions& options,
      const std::function<Status(const ClusterReportCluster&)>& cluster,
      ClusterReportTotals* totals, const RepoReportProgress& progress = {}) const = 0;

  // --- operations ---

  // Verifies every invariant of FORMAT.md in one read transaction. Returns the problems found,
  // one human-readable line each (at most 1000: the list says when it was cut); empty when the
  // store is consistent. An error only when the check itself could not run.
  [[nodiscard]] virtual StatusOr<std::vector<std::string>> Check() const = 0;

  // OK, or the error of the failed commit that stopped writes.
  virtual Status health() const = 0;
  // OK when a write can succeed now, else why not, checked when asked (readiness, /readyz): the
  // failed commit of health() on LMDB; on the cluster, a master that does not answer or has
  // fewer replicas than a write must reach. Lack of space is WriteRoom's.
  virtual Status CanWrite() const = 0;

  // --- out of space (a full disk or map; writes resume when there is room) ---

  // OK when a write that failed for lack of space may succeed now: the file system under the
  // store has at least kResumeFreeBytes free, and the map may grow past the size at which it
  // was last full (its limit was raised: MappedFile::SetMaxMapSize). Otherwise the out-of-space
  // error that says what is short. It writes nothing: a later commit is the proof. OK on the
  // Redis Cluster backend, which has neither a map nor a local disk.
  virtual Status WriteRoom() const = 0;

  virtual const StoreOptions& options() const = 0;
  virtual const dedup::SketchParams& params() const = 0;
  // How this backend answers ListUrls (Capabilities): LMDB in URL byte order, Redis Cluster by
  // URL id.
  virtual Capabilities capabilities() const = 0;

  // The store as one local memory-mapped file (store/mapped_file.h: Backup, WarmMap, the map's
  // size limit, the commit fault hooks), or null when this backend keeps none (Redis Cluster).
  // Callers ask here, once, rather than call and read a "not supported" error. Not owned: it is
  // this Store, valid as long as it is.
  virtual MappedFile* mapped_file() { return nullptr; }
  virtual const MappedFile* mapped_file() const { return nullptr; }

 protected:
  Store() = default;
};

// InvalidArgument naming the first StoreOptions field out of its range; OK otherwise. Every
// backend's Open calls it.
Status ValidateStoreOptions(const StoreOptions& options);

}  // namespace shingled::store

#endif  // SHINGLED_STORE_STORE_H_
