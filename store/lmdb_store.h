// The LMDB store: Store's embedded backend, one LMDB environment in a directory (store/store.h
// and store/mapped_file.h say what each method does; store/FORMAT.md the bytes). Store::Open
// makes one. It is a MappedFile too: mapped_file() answers this.
#ifndef SHINGLED_STORE_LMDB_STORE_H_
#define SHINGLED_STORE_LMDB_STORE_H_

#include <memory>

#include "store/mapped_file.h"
#include "store/store.h"

namespace shingled::store {

namespace internal {
class StoreImpl;
}  // namespace internal

// What the writer read for its pages since the store was opened, in reads rather than time, so
// that a test or a benchmark can show that a page's work does not grow with how many near-copies
// the store holds. Counted by the writer alone (under its lock); read it between batches.
struct WriterWork {
  uint64_t candidates_scored = 0;    // candidate records judged (JudgeCandidate)
  uint64_t chunk_records_read = 0;   // `doc_chunks` records read
  uint64_t chunk_postings_read = 0;  // `chunk_docs` postings read, B-tree and write buffer
  uint64_t url_reads = 0;            // a document's first URL read, or one `urls` key counted
};

class LmdbStore final : public Store, public MappedFile {
 public:
  explicit LmdbStore(std::unique_ptr<internal::StoreImpl> impl);
  ~LmdbStore() override;
  using Store::CloseSweep;

  StatusOr<std::vector<PageResult>> Apply(std::span<const PageInput> pages) override;
  StatusOr<SweepInfo> OpenSweep(std::string_view name, int64_t start,
                                std::vector<std::string> scope) override;
  StatusOr<SweepClosing> CloseSweep(SweepId id, int64_t end,
                                    const CloseSweepOptions& options) override;
  StatusOr<SweepReopening> ReopenSweep(SweepId id) override;
  StatusOr<ForgetResult> Forget(const ForgetOptions& options) override;
  StatusOr<std::vector<ForgetRecord>> ForgetRecords(uint64_t after, size_t limit) const override;
  StatusOr<RetentionStep> ApplyRetention(const RetentionOptions& options) override;
  StatusOr<std::vector<SweepInfo>> Sweeps() const override;
  StatusOr<SweepInfo> FindSweep(std::string_view name) const override;
  StatusOr<DocumentInfo> Document(DocId doc) const override;
  StatusOr<DocId> FindIdentical(const dedup::Fingerprint128& identical) const override;
  StatusOr<std::vector<UrlVersion>> History(std::string_view url) const override;
  StatusOr<ClusterInfo> Cluster(DocId any_member) const override;
  StatusOr<LostAndFound> Lost(std::string_view url, const LostOptions& options) const override;
  StatusOr<UrlId> KnownUrls(UrlId after, size_t max_urls,
                            const std::function<void(std::string_view url)>& visit) const override;
  StatusOr<std::vector<SimilarDoc>> SimilarToDocument(DocId doc,
                                                      const QueryOptions& query) const override;
  StatusOr<std::vector<SimilarDoc>> SimilarToUrl(std::string_view url,
                                                 const QueryOptions& query) const override;
  StatusOr<std::vector<SimilarDoc>> SimilarToSketch(const dedup::Sketch& sketch,
                                                    const QueryOptions& query) const override;
  StatusOr<StoreStats> Stats() const override;
  StatusOr<ChangeReport> ChangesBetween(SweepId from, SweepId to,
                                        const ReportProgress& progress) const override;
  StatusOr<ChangeList> ListChanges(SweepId from, SweepId to,
                                   const ChangeListOptions& options) const override;
  Status StreamChanges(SweepId from, SweepId to, ChangeKind kind,
                       const std::function<Status(const ChangeRow&)>& row,
                       const ReportProgress& progress) const override;
  StatusOr<ChangeHistory> ChangesOverSweeps(const ReportProgress& progress) const override;
  StatusOr<UrlPage> ListUrls(const UrlListOptions& options) const override;
  StatusOr<ClusterListPage> ListClusters(const ClusterListOptions& options) const override;
  StatusOr<ClusterMembersPage> ClusterPage(DocId any_member, DocId after,
                                           size_t limit) const override;
  StatusOr<IdenticalSetPage> ListIdenticalSets(const IdenticalSetOptions& options) const override;
  StatusOr<CommonBytes> BytesInCommon(DocId a, DocId b, size_t max_spans) const override;
  StatusOr<TemplateMark> MarkTemplate(ClusterId cluster) override;
  StatusOr<std::optional<TemplateMark>> UnmarkTemplate(ClusterId cluster) override;
  StatusOr<std::vector<TemplateMark>> TemplateMarks(ClusterId after, size_t limit) const override;
  StatusOr<std::vector<ChunkTemplate>> ChunkTemplates(DocId doc) const override;
  Status StreamIdenticalReport(const IdenticalReportOptions& options,
                               const std::function<Status(const IdenticalReportTotals&)>& totals,
                               const std::function<Status(const IdenticalReportSet&)>& set,
                               const RepoReportProgress& progress) const override;
  Status StreamClusterReport(const ClusterReportOptions& options,
                             const std::function<Status(const ClusterReportCluster&)>& cluster,
                             ClusterReportTotals* totals,
                             const RepoReportProgress& progress) const override;
  StatusOr<std::vector<std::string>> Check() const override;
  Status health() const override;
  Status CanWrite() const override { return health(); }
  Capabilities capabilities() const override { return {.url_byte_order = true}; }
  Status WriteRoom() const override;
  const StoreOptions& options() const override;
  const dedup::SketchParams& params() const override;
  MappedFile* mapped_file() override { return this; }
  const MappedFile* mapped_file() const override { return this; }

  // MappedFile.
  Status Backup(const std::string& dest) const override;
  StatusOr<uint64_t> WarmMap(const std::function<bool()>& keep_going,
                             uint64_t max_bytes) const override;
  uint64_t max_map_size() const override;
  Status SetMaxMapSize(uint64_t bytes) override;
  void FailNextCommitForTesting(int error) override;
  Status VerifyKeyFilterForTesting() override;

  // The writer's reads so far (WriterWork). REQUIRES: no Apply in flight.
  WriterWork WriterWorkForTesting() const;

 private:
  std::unique_ptr<internal::StoreImpl> impl_;
};

}  // namespace shingled::store

#endif  // SHINGLED_STORE_LMDB_STORE_H_
