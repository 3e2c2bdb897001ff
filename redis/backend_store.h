// RedisClusterStore: the class behind OpenRedisClusterStore (redis/backend.h). Private to redis/
// and its tests; everyone else holds a store::Store.
#ifndef SHINGLED_REDIS_BACKEND_STORE_H_
#define SHINGLED_REDIS_BACKEND_STORE_H_

#include <atomic>
#include <charconv>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dedup/chunker.h"
#include "redis/backend.h"
#include "redis/claims.h"
#include "redis/cluster_client.h"
#include "redis/record.h"
#include "redis/versions.h"
#include "redis/write_gate.h"
#include "store/internal/codec.h"
#include "store/internal/containment.h"
#include "store/internal/forget_rules.h"
#include "store/store.h"

namespace shingled::redis {

// The key layout and scripts of redis/backend.cc that the walks (redis/backend_walks.cc:
// KnownUrls, CloseSweep, ReopenSweep) share with Apply.
// Small helpers of both files of the backend (backend.cc, backend_walks.cc).
inline std::string Dec(uint64_t v) { return std::to_string(v); }
inline Command Cmd(std::vector<std::string> args) { return Command{.args = std::move(args)}; }
// EVAL of `script` on `keys` (the first decides the node) with `argv`.
inline Command Eval(std::string_view script, std::vector<std::string> keys,
                    std::vector<std::string> argv) {
  Command c;
  c.args = {"EVAL", std::string(script), Dec(keys.size())};
  for (std::string& k : keys) c.args.push_back(std::move(k));
  for (std::string& a : argv) c.args.push_back(std::move(a));
  c.key_index = 3;
  return c;
}
// Compare-and-set of a hash field: 1 when it held ARGV[2] and now holds ARGV[3], else 0.
inline constexpr std::string_view kSetIfScript = R"lua(
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
)lua";
// A whole decimal unsigned integer.
inline bool ParseU64(std::string_view s, uint64_t* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

namespace walks {
Command ReadVersionsOf(store::UrlId url);  // HGET of the URL's versions field (redis/versions.h)
// The entries of the field (a ReadVersionsOf reply), oldest first; nil: none.
StatusOr<std::vector<std::string>> SplitVersionsOf(const Reply& reply);
// The whole field of a ReadVersionsOf reply, its count mark with its entries.
StatusOr<VersionList> ReadVersionListOf(const Reply& reply);
std::string UrlNameKeyOf(store::UrlId url);  // the URL names' bucket of the id
extern const char* const kSweeps;            // the sweep records' hash
extern const char* const kUrlCounter;        // the last url id reserved
}  // namespace walks

// The keys the listings (redis/backend_listings.cc) read, from backend.cc's layout.
namespace listings {
std::string DocKeyOf(store::DocId doc);     // the document records' bucket of the id
Command GetDocUrls(store::DocId doc);       // the URLs that ever held the document (a list)
std::string SizeKeyOf(store::DocId root);   // the cluster sizes' bucket of the root
inline constexpr int kSizeBucketShift = 6;  // roots per size bucket: 2^6
extern const char* const kDocCounter;       // the last document id reserved
}  // namespace listings

// The keys of backend.cc that forgetting reads.
namespace forgetting {
std::string SharersKeyOf(store::DocId holder);  // the documents naming `holder` as representative
Command GetSharers(store::DocId holder);        // their list
std::string LinksKeyOf(store::DocId doc);       // the links filed under a document
// `item` out of the posting list `field` of `bucket` (kRemoveFromListScript), and a whole list.
Command AddToList(std::string bucket, std::string field, std::string item);
Command RemoveFromList(std::string bucket, std::string field, std::string item);
std::vector<Command> DeleteList(const std::string& bucket, const std::string& field);
Command DeleteUrlClaim(std::string_view url, int bits);  // the URL's claim (its id)
// The full values of the indexed sample values a record files postings under.
std::vector<uint64_t> IndexedValues(const RedisDocument& rec);
extern const char* const kStats;       // the cluster counters' hash
extern const char* const kForgets;     // the forget records' hash: id -> record
extern const char* const kNextForget;  // the last forget record id
}  // namespace forgetting

// The helpers of redis/backend.cc that the reports and lost and found (backend_reports.cc) share.
namespace reports {
dedup::Sketch SketchOfRecordOf(const RedisDocument& rec);  // values as the record keeps them
// Two such MOD samples masked to the bits both keep, so that the same value compares equal.
void MaskSamples(dedup::ModSample* a, dedup::ModSample* b);
}  // namespace reports

// --- chunks, bytes in common and templates (redis/backend_chunks.cc; docs/REDIS.md) ---
namespace chunks {
// Keys of backend.cc that the chunks share: a bucket of ids, a document's URLs.
std::string IdBucketOf(char letter, uint64_t id, int shift);
std::string DocUrlsKeyOf(store::DocId doc);
// A document's chunk record (`doc_chunks`): HSET for a new document, HSETNX for an identical copy
// of a document recorded without chunks (LMDB's BackfillChunks); HEXISTS to know whether it has
// one.
Command PutRecord(store::DocId doc, std::span<const dedup::Chunk> chunks, bool only_if_absent);
Command HasRecord(store::DocId doc);
// Its `chunk_docs` postings: the document under each of its distinct chunks (idempotent adds).
std::vector<Command> FilePostings(store::DocId doc, std::span<const dedup::Chunk> chunks,
                                  int bucket_bits);
// Counts `url` among its host's URLs when it is named "http(s)://" + host + "/..." (the ones the
// template judge's host share counts), up to `cap`; nullopt for another URL.
std::optional<Command> CountHostUrl(std::string_view url, uint64_t cap);
// Forgetting: `url` out of its host's set (nullopt: it is in none).
std::optional<Command> UncountHostUrl(std::string_view url);
// A document's chunk record read (HGET: nil when none) and deleted, and its `chunk_docs` postings
// removed.
Command GetRecord(store::DocId doc);
Command DeleteRecord(store::DocId doc);
std::vector<Command> UnfilePostings(store::DocId doc, std::span<const dedup::Chunk> chunks,
                                    int bucket_bits);
// The count's cap: past it no chunk under the document limit holds the host share.
uint64_t HostUrlCap(const store::StoreOptions& options);
}  // namespace chunks

// A write call's place among the cluster's writers (redis/write_gate.h): entered when made,
// waiting a few seconds while a takedown holds the writers off (then Unavailable), and left when
// destroyed (a leave lost to a failure runs out with the lease).
class GateWriter {
 public:
  explicit GateWriter(WriteGate& gate);
  ~GateWriter();
  GateWriter(const GateWriter&) = delete;
  GateWriter& operator=(const GateWriter&) = delete;
  const Status& status() const { return status_; }

 private:
  WriteGate& gate_;
  Status status_;
};

class RedisClusterStore final : public store::Store {
 public:
  RedisClusterStore(std::unique_ptr<ClusterClient> client, const RedisStoreOptions& redis,
                    const store::StoreOptions& options, const dedup::SketchParams& params);
  ~RedisClusterStore() override;

  // Checks the cluster's settings and the meta hash (OpenRedisClusterStore).
  Status Open(const dedup::SketchContext& context);
  // Open's upgrade of a state of the previous format (FORMAT.md, "The state's format").
  Status UpgradeState();
  Status ListSharers();  // format 2 to 3: every sharer listed under its holder

  // The next Apply (or takedown) fails (Unavailable, nothing more written) when it reaches its
  // `round`-th pipeline of writes (1-based): a daemon killed or a connection broken midway.
  void FailAtRoundForTesting(int round);
  // The client's counters (pipelines, commands, redirections, WAITs).
  ClusterStats client_stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return client_->stats();
  }
  // Batches applied again because another daemon raced them (a claim or a record changed).
  uint64_t races() const {
    std::lock_guard<std::mutex> lock(mu_);
    return races_;
  }

  StatusOr<std::vector<store::PageResult>> Apply(std::span<const store::PageInput> pages) override;
  StatusOr<store::SweepInfo> OpenSweep(std::string_view name, int64_t start,
                                       std::vector<std::string> scope) override;
  using store::Store::CloseSweep;
  StatusOr<store::SweepClosing> CloseSweep(store::SweepId id, int64_t end,
                                           const CloseSweepOptions& options) override;
  StatusOr<store::SweepReopening> ReopenSweep(store::SweepId id) override;
  // Forgetting (redis/backend_forget.cc): a takedown or a retention step is planned as on LMDB,
  // then written while the write gate holds the writers off.
  StatusOr<store::ForgetResult> Forget(const store::ForgetOptions& options) override;
  StatusOr<std::vector<store::ForgetRecord>> ForgetRecords(uint64_t after,
                                                           size_t limit) const override;
  StatusOr<store::RetentionStep> ApplyRetention(const store::RetentionOptions& options) override;
  StatusOr<std::vector<store::SweepInfo>> Sweeps() const override;
  StatusOr<store::SweepInfo> FindSweep(std::string_view name) const override;
  StatusOr<store::DocumentInfo> Document(store::DocId doc) const override;
  StatusOr<store::DocId> FindIdentical(const dedup::Fingerprint128& identical) const override;
  StatusOr<std::vector<store::UrlVersion>> History(std::string_view url) const override;
  StatusOr<store::ClusterInfo> Cluster(store::DocId any_member) const override;
  StatusOr<store::LostAndFound> Lost(std::string_view url,
                                     const store::LostOptions& options) const override;
  StatusOr<store::UrlId> KnownUrls(
      store::UrlId after, size_t max_urls,
      const std::function<void(std::string_view url)>& visit) const override;
  StatusOr<std::vector<store::SimilarDoc>> SimilarToDocument(
      store::DocId doc, const store::QueryOptions& query) const override;
  StatusOr<std::vector<store::SimilarDoc>> SimilarToUrl(
      std::string_view url, const store::QueryOptions& query) const override;
  StatusOr<std::vector<store::SimilarDoc>> SimilarToSketch(
      const dedup::Sketch& sketch, const store::QueryOptions& query) const override;
  StatusOr<store::StoreStats> Stats() const override;
  StatusOr<store::ChangeReport> ChangesBetween(
      store::SweepId from, store::SweepId to, const store::ReportProgress& progress) const override;
  StatusOr<store::ChangeList> ListChanges(store::SweepId from, store::SweepId to,
                                          const store::ChangeListOptions& options) const override;
  Status StreamChanges(store::SweepId from, store::SweepId to, store::ChangeKind kind,
                       const std::function<Status(const store::ChangeRow&)>& row,
                       const store::ReportProgress& progress) const override;
  StatusOr<store::ChangeHistory> ChangesOverSweeps(
      const store::ReportProgress& progress) const override;
  StatusOr<store::UrlPage> ListUrls(const store::UrlListOptions& options) const override;
  StatusOr<store::ClusterListPage> ListClusters(
      const store::ClusterListOptions& options) const override;
  StatusOr<store::ClusterMembersPage> ClusterPage(store::DocId any_member, store::DocId after,
                                                  size_t limit) const override;
  StatusOr<store::IdenticalSetPage> ListIdenticalSets(
      const store::IdenticalSetOptions& options) const override;
  StatusOr<store::CommonBytes> BytesInCommon(store::DocId a, store::DocId b,
                                             size_t max_spans) const override;
  StatusOr<store::TemplateMark> MarkTemplate(store::ClusterId cluster) override;
  StatusOr<std::optional<store::TemplateMark>> UnmarkTemplate(store::ClusterId cluster) override;
  StatusOr<std::vector<store::TemplateMark>> TemplateMarks(store::ClusterId after,
                                                           size_t limit) const override;
  StatusOr<std::vector<store::ChunkTemplate>> ChunkTemplates(store::DocId doc) const override;
  Status StreamIdenticalReport(
      const store::IdenticalReportOptions& options,
      const std::function<Status(const store::IdenticalReportTotals&)>& totals,
      const std::function<Status(const store::IdenticalReportSet&)>& set,
      const store::RepoReportProgress& progress) const override;
  Status StreamClusterReport(
      const store::ClusterReportOptions& options,
      const std::function<Status(const store::ClusterReportCluster&)>& cluster,
      store::ClusterReportTotals* totals, const store::RepoReportProgress& progress) const override;
  StatusOr<std::vector<std::string>> Check() const override;
  Status health() const override;
  Status CanWrite() const override;
  Status WriteRoom() const override;
  const store::StoreOptions& options() const override;
  const dedup::SketchParams& params() const override;
  store::Capabilities capabilities() const override { return {}; }  // URLs by id

 private:
  // One pipelined round of the write path (counted for FailAtRoundForTesting).
  StatusOr<std::vector<Reply>> Round(const std::vector<Command>& commands) const;
  // A round as one script per master (redis/by_master.h), for commands that may run twice: the
  // rounds of Apply (claims, postings, records, versions over the field as read, compare-and-set
  // dates) and the reads of records.
  StatusOr<std::vector<Reply>> RoundByMaster(const std::vector<Command>& commands) const;
  // A race with another daemon detected mid-batch: the batch is applied again (idempotent).
  Status Race(const std::string& message);
  // One attempt at a batch of Apply, step by step (redis/backend.cc).
  class BatchApply;
  // The whole cluster's check, a method a family of invariants (redis/backend.cc).
  class Checker;
  // The unions of a batch, with the cluster sizes and counters: the roots of all their documents
  // found together, then every link made in one LinkRoots call (again for links another daemon
  // made first), so a batch's merges cost ~6 rounds, not ~6 each.
  Status MergeAll(const std::vector<std::pair<store::DocId, store::DocId>>& unions);
  // Runs `commands` in one round with the counting of each URL's versions past its mark
  // (`fields`: each URL's versions field as this batch knows it; redis/versions.h, CountRest),
  // then counts again, from a new read, those another daemon changed meanwhile: every version
  // is counted exactly once, whatever attempt or daemon wrote it.
  Status RoundWithCounts(std::vector<Command> commands, std::map<store::UrlId, VersionList> fields);
  // The lookup client (connected on first use). REQUIRES: lookup_mu_ held.
  StatusOr<ClusterClient*> LookupClient() const;
  // Records of `docs` (absent ones left out), and of their representatives with follow_reps.
  // Keeps each record's bytes in raw_records_ (for a compare-and-set).
  StatusOr<std::map<store::DocId, RedisDocument>> ReadRecords(const std::vector<store::DocId>& docs,
                                                              bool follow_reps) const;
  // The counts of every version shard, summed.
  struct ShardTotals {
    uint64_t documents = 0, urls = 0, versions = 0;
    std::map<store::SweepId, std::map<std::string, int64_t>> sweeps;  // "pages", ..., "start"
  };
  StatusOr<ShardTotals> ReadShards() const;
  StatusOr<store::SweepInfo> SweepInfoOf(store::SweepId id, const std::string& record,
                                         const ShardTotals& totals) const;
  StatusOr<store::SweepInfo> ReadSweep(store::SweepId id) const;
  StatusOr<store::UrlId> LookupUrl(std::string_view url) const;
  StatusOr<std::vector<store::UrlId>> UrlsOf(store::DocId doc) const;
  StatusOr<store::ClusterInfo> ClusterOf(store::DocId any_member, store::DocId after, size_t limit,
                                         uint64_t* size) const;
  // A document's sketch as its record keeps it, and its indexed sample values in full.
  StatusOr<dedup::Sketch> QuerySketch(store::DocId doc, std::vector<uint64_t>* indexed) const;
  // `indexed`: the query's indexed sample values in full (looked up in the sample postings);
  // `chunks`: the query's (its containment candidates and each result's bytes in common).
  StatusOr<std::vector<store::SimilarDoc>> SimilarIn(const dedup::Sketch& sketch,
                                                     bool query_is_record,
                                                     const std::vector<uint64_t>& indexed,
                                                     std::span<const dedup::Chunk> chunks,
                                                     store::DocId exclude,
                                                     const store::QueryOptions& query) const;

  // Calls `visit(url id, its name, its versions oldest first)` for each URL with an id above
  // `after`, in id order, up to the last id reserved when the walk starts (ids reserved and
  // never used are skipped; a URL whose first version is not written yet is visited with none).
  // Reads kWalkBlock ids per pipelined round, holding mu_ during the round only, so `visit` may
  // call the store. `visit` answers false to end the walk. Counts each URL in `*walked` (may be
  // null). The walk is not one snapshot when writes go on, as the LMDB store's report walks.
  using UrlVisitor =
      std::function<StatusOr<bool>(store::UrlId, const std::string& name,
                                   const std::vector<store::internal::VersionRecord>& versions)>;
  Status WalkUrls(store::UrlId after, const UrlVisitor& visit,
                  std::atomic<uint64_t>* walked = nullptr) const;
  // The last URL id reserved (`next:url`; 0 when none). REQUIRES: mu_ held.
  StatusOr<store::UrlId> LastUrlId() const;

  // --- forgetting (redis/backend_forget.cc) ---
  // Planning's reads (store/internal/forget_rules.h, ForgetReads), a pipelined round each.
  friend class ForgetReadsOnCluster;
  // A takedown's writes, under the write gate, in an order that a run cut short can be run
  // again from (redis/FORMAT.md, "Forgetting").
  class TakedownWrites;
  // A takedown's step, planned and (unless a dry run) written: `*wrote` once it writes.
  // REQUIRES: the write gate held (Forget), unless a dry run.
  StatusOr<store::ForgetResult> Takedown(const store::ForgetOptions& options,
                                         const std::vector<std::string>& prefixes, bool* wrote);
  // A URL's versions, oldest first (none when it has none). REQUIRES: mu_ held.
  StatusOr<std::vector<store::internal::VersionRecord>> ReadUrlVersions(store::UrlId url) const;
  // One retention step (ApplyRetention), planned and written: `*wrote` once it writes.
  // REQUIRES: the write gate held.
  StatusOr<store::RetentionStep> RetainStep(const store::RetentionOptions& options, bool* wrote);
  // The URLs a takedown takes, each with every version: at most options.max_urls, in URL order
  // (`*more` when others match), and those of the same takedown cut short (`*resumed`: there
  // were some). A host or a prefix walks every URL (WalkUrls); takes mu_ itself.
  StatusOr<std::vector<store::internal::UrlTrim>> TakedownUrls(
      const store::ForgetOptions& options, const std::vector<std::string>& prefixes, bool* more,
      bool* resumed) const;

  // --- the listings (redis/backend_listings.cc) ---
  // The reads of store/internal/listings.h's algorithms, a pipelined round per block of ids.
  friend class ListingReadsOnCluster;
  // The last document id reserved (`next:doc`; 0 when none). REQUIRES: mu_ held.
  StatusOr<store::DocId> LastDocId() const;
  // The clusters report's reads (redis/backend_chunks.cc), each taking mu_ itself:
  // ListingReads::ForEachChunkPosting from the documents' chunk records (the postings are keyed
  // by bucket of hash, which no walk could go through): every (chunk, document) held in memory
  // and sorted, 16 bytes each.
  Status ReportChunkPostings(const std::function<void(uint64_t, store::DocId)>& visit) const;
  // ListingReads::Chunks: the chunk records of `docs`, in one round.
  Status ReportChunks(std::span<const store::DocId> docs,
                      std::vector<std::vector<dedup::Chunk>>* out) const;
  // ListingReads::Common: bytes in common of `pairs` through one template judge.
  Status ReportCommon(std::span<const std::pair<store::DocId, store::DocId>> pairs,
                      std::vector<store::CommonBytes>* out) const;

  // --- the reports and lost and found (redis/backend_reports.cc) ---
  // The store::internal::ReportReads of the cluster: pipelined rounds, mu_ held per round.
  class Reads;
  // The candidate search of SimilarIn (LMDB's FindQueryCandidates) from a sketch's features and
  // its indexed sample values in full, at most `max_candidates` less the `reserved` ones (left
  // out: the containment candidates, scored anyway). REQUIRES: mu_ held.
  Status QueryCandidates(const dedup::Sketch& query_sketch, const std::vector<uint64_t>& indexed,
                         store::DocId exclude, size_t max_candidates,
                         std::vector<store::DocId>* out, bool* truncated, uint64_t* left_out,
                         std::span<const store::DocId> reserved = {}) const;

  // --- chunks, bytes in common and templates (redis/backend_chunks.cc) ---
  // store::internal::ChunkReads on this store's pipelined rounds. REQUIRES: mu_ held while used.
  class ChunkReadsOnCluster;
  // Whether `doc` has a record (NotFound naming it when not). REQUIRES: mu_ held.
  Status DocumentExists(store::DocId doc) const;
  // Check's part: each chunk record decodes, is the record of a document (`has_record`), and its
  // chunks' postings list it; each template mark decodes and its chunks' entries name its
  // cluster, and each entry is backed by its cluster's mark. REQUIRES: mu_ held.
  Status CheckChunks(const std::function<bool(store::DocId)>& has_record,
                     const std::function<void(std::string)>& problem) const;
  // The similarity queries' part (LMDB's SimilarIn and FillSimilarCommon), each through a
  // template judge of its own. REQUIRES: mu_ held.
  // A document's chunks (none when it has no record of them).
  Status ChunksOfDocument(store::DocId doc, std::vector<dedup::Chunk>* out) const;
  // The containment candidates of a query's `chunks` (of document `exclude`; 0: a page not
  // stored, without a host): store::internal::FindContainment.
  Status QueryContainment(std::span<const dedup::Chunk> chunks, store::DocId exclude,
                          std::vector<store::internal::ContainmentCandidate>* out) const;
  // Each result's bytes in common with the query (store::internal::FillSimilarCommon).
  Status QueryCommon(store::DocId query_doc, std::span<const dedup::Chunk> chunks,
                     std::vector<store::SimilarDoc>* results) const;
  // The mark of `cluster` removed (its chunks' entries, then the mark); false when none.
  // REQUIRES: mu_ held.
  StatusOr<bool> DeleteMark(store::ClusterId cluster, store::TemplateMark* old);
  // What Apply tells the chunk logic of its batch, so that each page sees the store and the
  // batch's earlier pages (its own chunks and URL too), as the LMDB writer's pages do.
  struct BatchChunkFacts {
    // The page that files each document's chunks: the batch's new documents, and the stored
    // ones given chunks by an identical copy (with those chunks).
    std::map<store::DocId, size_t> doc_page;
    std::map<store::DocId, const std::vector<dedup::Chunk>*> backfilled;
    struct Version {
      size_t page = 0;
      store::DocId doc = 0;
      store::UrlId url = 0;
      std::string_view name;
    };
    std::vector<Version> versions;  // a version of a document appended by the page
    std::vector<std::pair<size_t, std::string_view>> new_urls;  // a URL stored by the page
    std::vector<uint64_t> hashes;  // the chunks of the batch's pages (read in one round)
  };
  class BatchChunks;  // redis/backend_chunks.cc
  // After the batch's chunk postings and records are filed (BatchApply::FilePostings).
  StatusOr<std::shared_ptr<BatchChunks>> NewBatchChunks(BatchChunkFacts facts) const;
  // The containment candidates of page `page` (document `doc`): FindContainment on its view.
  Status BatchContainment(BatchChunks& batch, const store::PageInput& page, size_t index,
                          store::DocId doc,
                          std::vector<store::internal::ContainmentCandidate>* out,
                          bool* truncated) const;
  // The `match_common` of the pages `which` (FillMatchCommon on each page's view), their matches
  // decided: the matches' chunks, URLs and chunk postings read for all of them at once first.
  Status BatchMatchCommons(BatchChunks& batch, std::span<const store::PageInput> pages,
                           const std::vector<size_t>& which,
                           std::vector<store::PageResult>* results) const;

  mutable std::mutex mu_;  // guards everything below: one client, one call at a time
  std::unique_ptr<ClusterClient> client_;
  const RedisStoreOptions redis_;
  const store::StoreOptions options_;
  const dedup::SketchParams params_;
  IdBlocks doc_ids_, url_ids_;
  // This store among the cluster's writers and forgetters (redis/write_gate.h).
  std::unique_ptr<WriteGate> gate_;
  std::map<store::SweepId, store::internal::SweepRecord> sweeps_;  // sweeps seen open
  mutable std::map<store::DocId, std::string> raw_records_;
  bool race_ = false;
  uint64_t races_ = 0;
  mutable int fail_at_round_ = 0, rounds_ = 0;

  // The client of FindIdentical and Document, connected on first use, and its lock, apart from
  // mu_: the ingest asks them of each page before sketching it (IngestPipeline's reuse of a
  // stored sketch), from several threads, and they need not wait for the writer's batch, which
  // holds mu_ throughout (on one client, that wait capped a daemon at ~3 pages a batch).
  mutable std::mutex lookup_mu_;
  mutable std::unique_ptr<ClusterClient> lookup_client_;
  // CanWrite's probe: a client of its own (readiness is asked from other threads than the
  // writer's), and its last answer, reused for kProbeEvery.
  static constexpr std::chrono::seconds kProbeEvery{1};
  mutable std::mutex probe_mu_;
  mutable std::unique_ptr<ClusterClient> probe_client_;
  mutable std::optional<std::chrono::steady_clock::time_point> probed_at_;
  mutable Status probe_status_;
};

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_BACKEND_STORE_H_
