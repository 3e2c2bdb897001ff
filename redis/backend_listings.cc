// The listings and the identical report of the Redis Cluster backend (docs/REDIS.md, "The
// listings"): ListUrls, ListClusters, ListIdenticalSets and StreamIdenticalReport. The ranking,
// paging, filters and counts are store/internal/listings.h's, the same code as the LMDB store's;
// here are only the reads they need (ListingReadsOnCluster), each a pipelined round per block of
// ids, the store's mutex held during a round only. The cluster keeps no ordered index: the walks
// go through the ids (URL ids up to `next:url`, document ids up to `next:doc`, cluster sizes by
// bucket of roots), skipping the ids reserved and never used.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "redis/backend_store.h"
#include "redis/layout.h"
#include "redis/record.h"
#include "redis/union_find.h"
#include "store/internal/codec.h"
#include "store/internal/listings.h"

namespace shingled::redis {

using store::ClusterId;
using store::DocId;
using store::UrlId;
using store::internal::ListedDocument;
using store::internal::VersionRecord;

namespace {

// Ids per pipelined round (a command or two per id: a few hundred per round trip).
constexpr size_t kBlock = 256;
// Size buckets (64 roots each) per round.
constexpr uint64_t kSizeBuckets = 64;

}  // namespace

StatusOr<DocId> RedisClusterStore::LastDocId() const {
  auto counter = client_->Run(Cmd({"GET", listings::kDocCounter}));
  if (!counter.ok()) return counter.status();
  uint64_t last_id = 0;
  if (!counter->is_nil() && !ParseU64(counter->str, &last_id)) {
    return DataLossError("redis: next:doc holds \"" + counter->str + "\", not an id");
  }
  return DocId{last_id};
}

// store::internal::ListingReads on the cluster.
class ListingReadsOnCluster final : public store::internal::ListingReads {
 public:
  explicit ListingReadsOnCluster(const RedisClusterStore& store) : s_(store) {}

  // HGET of each record in its bucket, kBlock per round.
  Status Documents(std::span<const DocId> docs,
                   std::vector<std::optional<ListedDocument>>* out) override {
    out->clear();
    for (size_t first = 0; first < docs.size(); first += kBlock) {
      const size_t n = std::min(kBlock, docs.size() - first);
      std::vector<Command> cmds;
      for (size_t i = first; i < first + n; ++i) {
        cmds.push_back(Cmd({"HGET", listings::DocKeyOf(docs[i]), Dec(docs[i])}));
      }
      StatusOr<std::vector<Reply>> r = Round(cmds);
      if (!r.ok()) return r.status();
      for (size_t k = 0; k < n; ++k) {
        const Reply& raw = (*r)[k];
        if (raw.is_nil()) {
          out->push_back(std::nullopt);
          continue;
        }
        StatusOr<RedisDocument> rec = DecodeRedisDocument(raw.str);
        if (!rec.ok()) {
          return DataLossError("redis: document " + Dec(docs[first + k]) + ": " +
                               std::string(rec.status().message()));
        }
        out->push_back(ListedDocument{.rep = rec->rep != 0 ? rec->rep : docs[first + k],
                                      .bytes = rec->bytes,
                                      .first_seen = rec->first_seen,
                                      .last_seen = rec->last_seen});
      }
    }
    return OkStatus();
  }

  // Per block of documents: their URL lists in one round, those URLs' last versions in another.
  Status LiveUrls(std::span<const DocId> docs, std::vector<std::vector<UrlId>>* out) override {
    out->assign(docs.size(), {});
    for (size_t first = 0; first < docs.size(); first += kBlock) {
      const size_t n = std::min(kBlock, docs.size() - first);
      std::vector<Command> cmds;
      for (size_t i = first; i < first + n; ++i) cmds.push_back(listings::GetDocUrls(docs[i]));
      StatusOr<std::vector<Reply>> lists = Round(cmds);
      if (!lists.ok()) return lists.status();
      std::vector<std::pair<size_t, UrlId>> held;  // (document's index, URL)
      for (size_t k = 0; k < n; ++k) {
        StatusOr<std::vector<uint64_t>> ids = ParsePostingList((*lists)[k]);
        if (!ids.ok()) return ids.status();
        std::sort(ids->begin(), ids->end());
        ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
        for (uint64_t u : *ids) held.emplace_back(first + k, u);
      }
      cmds.clear();
      for (const auto& [i, u] : held) {
        cmds.push_back(walks::ReadVersionsOf(u));
      }
      StatusOr<std::vector<Reply>> last = Round(cmds);
      if (!last.ok()) return last.status();
      for (size_t j = 0; j < held.size(); ++j) {
        StatusOr<std::vector<std::string>> entries = walks::SplitVersionsOf((*last)[j]);
        if (!entries.ok()) return entries.status();
        if (entries->empty()) continue;  // its first version not written (yet)
        StatusOr<VersionRecord> v = DecodeVersionEntry(entries->back());
        if (!v.ok()) return v.status();
        const auto& [i, u] = held[j];
        if (v->doc == docs[i] && store::internal::LiveVersion(*v)) (*out)[i].push_back(u);
      }
    }
    return OkStatus();
  }

  Status UrlNames(std::span<const UrlId> urls, std::vector<std::string>* out) override {
    out->clear();
    for (size_t first = 0; first < urls.size(); first += kBlock) {
      const size_t n = std::min(kBlock, urls.size() - first);
      std::vector<Command> cmds;
      for (size_t i = first; i < first + n; ++i) {
        cmds.push_back(Cmd({"HGET", walks::UrlNameKeyOf(urls[i]), Dec(urls[i])}));
      }
      StatusOr<std::vector<Reply>> r = Round(cmds);
      if (!r.ok()) return r.status();
      for (size_t k = 0; k < n; ++k) {
        // A URL's name is written before any version names it.
        if ((*r)[k].is_nil()) {
          return DataLossError("redis: URL " + Dec(urls[first + k]) + " has no name");
        }
        out->push_back((*r)[k].str);
      }
    }
    return OkStatus();
  }

  // The size buckets of every root up to `next:doc` (HGETALL, kSizeBuckets per round): a field
  // of a root with members beyond it; a field whose document has a link since (merged into a
  // smaller root, its field left behind by Merge) is passed by, one more round per block.
  Status ForEachCluster(const std::function<void(ClusterId, uint64_t)>& visit) override {
    StatusOr<DocId> last = LastDoc();
    if (!last.ok()) return last.status();
    const uint64_t buckets = (*last >> listings::kSizeBucketShift) + 1;
    for (uint64_t first = 0; first < buckets && *last != 0; first += kSizeBuckets) {
      const uint64_t n = std::min(kSizeBuckets, buckets - first);
      std::vector<Command> cmds;
      for (uint64_t b = first; b < first + n; ++b) {
        cmds.push_back(Cmd({"HGETALL", listings::SizeKeyOf(b << listings::kSizeBucketShift)}));
      }
      StatusOr<std::vector<Reply>> r = Round(cmds);
      if (!r.ok()) return r.status();
      std::vector<std::pair<ClusterId, uint64_t>> roots;
      for (const Reply& bucket : *r) {
        for (size_t i = 0; i + 1 < bucket.elements.size(); i += 2) {
          uint64_t id = 0, beyond = 0;
          if (!ParseU64(bucket.elements[i].str, &id) ||
              !ParseU64(bucket.elements[i + 1].str, &beyond)) {
            return DataLossError("redis: a cluster size field is not a count");
          }
          if (beyond > 0) roots.emplace_back(id, beyond + 1);
        }
      }
      if (roots.empty()) continue;
      cmds.clear();
      for (const auto& [id, size] : roots) {
        cmds.push_back(Cmd({"HGET", ParentBucketKey(id), Dec(id)}));
      }
      StatusOr<std::vector<Reply>> links = Round(cmds);
      if (!links.ok()) return links.status();
      for (size_t j = 0; j < roots.size(); ++j) {
        if ((*links)[j].is_nil()) visit(roots[j].first, roots[j].second);
      }
    }
    return OkStatus();
  }

  // The trees of links of all the clusters walked together: two rounds per level.
  Status ClusterMembers(std::span<const ClusterId> ids,
                        std::vector<std::vector<DocId>>* out) override {
    std::lock_guard<std::mutex> lock(s_.mu_);
    StatusOr<std::vector<std::vector<uint64_t>>> members = ClusterMembersOfRoots(*s_.client_, ids);
    if (!members.ok()) return members.status();
    *out = std::move(members).value();
    return OkStatus();
  }

  // The last version of every URL id up to `next:url`, kBlock per round.
  Status LiveDocuments(std::vector<DocId>* out) override {
    StatusOr<UrlId> last = [&] {
      std::lock_guard<std::mutex> lock(s_.mu_);
      return s_.LastUrlId();
    }();
    if (!last.ok()) return last.status();
    for (uint64_t first = 1; first <= *last; first += kBlock) {
      const uint64_t n = std::min<uint64_t>(kBlock, *last - first + 1);
      std::vector<Command> cmds;
      for (uint64_t u = first; u < first + n; ++u) {
        cmds.push_back(walks::ReadVersionsOf(u));
      }
      StatusOr<std::vector<Reply>> r = Round(cmds);
      if (!r.ok()) return r.status();
      for (const Reply& e : *r) {
        StatusOr<std::vector<std::string>> entries = walks::SplitVersionsOf(e);
        if (!entries.ok()) return entries.status();
        if (entries->empty()) continue;  // an id never used, or a first version not written yet
        StatusOr<VersionRecord> v = DecodeVersionEntry(entries->back());
        if (!v.ok()) return v.status();
        if (store::internal::LiveVersion(*v)) out->push_back(v->doc);
      }
    }
    return OkStatus();
  }

  // The URL list of every document id up to `next:doc`, kBlock per round; `visit` with those of
  // two or more entries after each round.
  Status ForEachSharedDocument(const std::function<Status(std::span<const DocId>)>& visit,
                               std::atomic<uint64_t>* progress) override {
    StatusOr<DocId> last = LastDoc();
    if (!last.ok()) return last.status();
    std::vector<DocId> block;
    for (uint64_t first = 1; first <= *last; first += kBlock) {
      const uint64_t n = std::min<uint64_t>(kBlock, *last - first + 1);
      std::vector<Command> cmds;
      for (uint64_t d = first; d < first + n; ++d) cmds.push_back(listings::GetDocUrls(d));
      StatusOr<std::vector<Reply>> r = Round(cmds);
      if (!r.ok()) return r.status();
      block.clear();
      for (uint64_t k = 0; k < n; ++k) {
        StatusOr<std::vector<uint64_t>> ids = ParsePostingList((*r)[k]);
        if (!ids.ok()) return ids.status();
        if (ids->empty()) continue;  // an id never used (or not written yet)
        if (progress != nullptr) progress->fetch_add(1, std::memory_order_relaxed);
        if (ids->size() >= 2) block.push_back(first + k);
      }
      if (!block.empty()) SHINGLED_RETURN_IF_ERROR(visit(block));
    }
    return OkStatus();
  }

  Status ForEachChunkPosting(const std::function<void(uint64_t, DocId)>& visit) override {
    return s_.ReportChunkPostings(visit);
  }
  Status Chunks(std::span<const DocId> docs, std::vector<std::vector<dedup::Chunk>>* out) override {
    return s_.ReportChunks(docs, out);
  }
  Status Common(std::span<const std::pair<DocId, DocId>> pairs,
                std::vector<store::CommonBytes>* out) override {
    return s_.ReportCommon(pairs, out);
  }

 private:
  StatusOr<std::vector<Reply>> Round(const std::vector<Command>& cmds) const {
    if (cmds.empty()) return std::vector<Reply>();
    std::lock_guard<std::mutex> lock(s_.mu_);
    return s_.client_->Pipeline(cmds);
  }
  StatusOr<DocId> LastDoc() const {
    std::lock_guard<std::mutex> lock(s_.mu_);
    return s_.LastDocId();
  }

  const RedisClusterStore& s_;
};

// --- ListUrls: in URL id order, the cursor the last id looked at ---

StatusOr<store::UrlPage> RedisClusterStore::ListUrls(const store::UrlListOptions& options) const {
  StatusOr<store::internal::UrlListScope> scope = store::internal::CheckUrlListOptions(options);
  if (!scope.ok()) return scope.status();
  UrlId after = 0;
  if (!options.after.empty() && !ParseU64(options.after, &after)) {
    return InvalidArgumentError("the cursor is not one of a page");
  }
  if (options.sweep != 0) {
    std::lock_guard<std::mutex> lock(mu_);
    auto sweep = client_->Run(Cmd({"HGET", walks::kSweeps, Dec(options.sweep)}));
    if (!sweep.ok()) return sweep.status();
    if (sweep->is_nil()) return NotFoundError("sweep " + Dec(options.sweep) + " not found");
  }
  store::internal::UrlPager pager(options);
  const Status walked =
      WalkUrls(after,
               [&](UrlId id, const std::string& name,
                   const std::vector<VersionRecord>& versions) -> StatusOr<bool> {
                 // Every URL read counts as looked at, in range or not: max_examined bounds the
                 // walk.
                 if (!pager.Look(Dec(id))) return false;  // the page is full: its cursor is set
                 const bool in_range =
                     std::any_of(scope->ranges.begin(), scope->ranges.end(),
                                 [&](std::string_view prefix) { return name.starts_with(prefix); });
                 if (!in_range || versions.empty()) return true;  // a first version not written yet
                 SHINGLED_RETURN_IF_ERROR(
                     pager.Offer(store::internal::SummarizeVersions(versions, options.sweep),
                                 [&]() -> StatusOr<std::string> { return name; }));
                 return true;
               });
  if (!walked.ok()) return walked;
  return pager.Take();
}

StatusOr<store::ClusterListPage> RedisClusterStore::ListClusters(
    const store::ClusterListOptions& options) const {
  ListingReadsOnCluster reads(*this);
  return store::internal::ListClusters(reads, options);
}

StatusOr<store::IdenticalSetPage> RedisClusterStore::ListIdenticalSets(
    const store::IdenticalSetOptions& options) const {
  ListingReadsOnCluster reads(*this);
  return store::internal::ListIdenticalSets(reads, options);
}

Status RedisClusterStore::StreamIdenticalReport(
    const store::IdenticalReportOptions& options,
    const std::function<Status(const store::IdenticalReportTotals&)>& totals,
    const std::function<Status(const store::IdenticalReportSet&)>& set,
    const store::RepoReportProgress& progress) const {
  ListingReadsOnCluster reads(*this);
  return store::internal::StreamIdenticalReport(reads, options, totals, set, progress);
}

Status RedisClusterStore::StreamClusterReport(
    const store::ClusterReportOptions& options,
    const std::function<Status(const store::ClusterReportCluster&)>& cluster,
    store::ClusterReportTotals* totals, const store::RepoReportProgress& progress) const {
  ListingReadsOnCluster reads(*this);
  return store::internal::StreamClusterReport(reads, options, cluster, totals, progress);
}

}  // namespace shingled::redis
