// The change reports and lost and found on the Redis Cluster backend (docs/REDIS.md, "What it
// supports"): the algorithms of store/reports.cc and store/lost.cc, written once, over this
// backend's store::internal::ReportReads. The walks go through the URL ids (WalkUrls: a block of
// ids per pipelined round), so the reports come out in URL id order, as on LMDB; the per-block
// reads (the documents' sketch holders and sketches) are one pipelined round per block (two when
// a document names a representative), never one per key. Each read holds the store's mutex for
// its rounds only, so the reports may call the store's public queries (SimilarToDocument)
// between them.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dedup/estimate.h"
#include "redis/backend_store.h"
#include "redis/union_find.h"
#include "store/internal/report_reads.h"

namespace shingled::redis {

using store::ClusterId;
using store::DocId;
using store::SweepId;
using store::UrlId;
using store::internal::HeldSketch;
using store::internal::VersionRecord;
using store::internal::WalkedUrl;

namespace {

// URLs handed to the algorithm per block: WalkUrls' round (256 ids) or so.
constexpr size_t kReportBlock = 256;

}  // namespace

class RedisClusterStore::Reads final : public store::internal::ReportReads {
 public:
  explicit Reads(const RedisClusterStore& store) : s_(store) {}

  Status Walk(UrlId after, const WantName&, const BlockVisitor& visit,
              std::atomic<uint64_t>* walked) const override {
    // WalkUrls reads every name with the versions: want_name is not needed.
    std::vector<WalkedUrl> block;
    bool stopped = false;
    auto flush = [&]() -> StatusOr<bool> {
      if (block.empty()) return true;
      StatusOr<bool> go_on = visit(block);
      block.clear();
      if (go_on.ok() && !*go_on) stopped = true;
      return go_on;
    };
    SHINGLED_RETURN_IF_ERROR(
        s_.WalkUrls(after,
                    [&](UrlId id, const std::string& name,
                        const std::vector<VersionRecord>& versions) -> StatusOr<bool> {
                      // A URL whose first version is not written yet (another daemon's page being
                      // applied) is not in the reports yet, as on LMDB before the page's commit.
                      if (versions.empty()) return true;
                      if (walked != nullptr) walked->fetch_add(1);
                      block.push_back(WalkedUrl{.id = id, .name = name, .versions = versions});
                      if (block.size() < kReportBlock) return true;
                      return flush();
                    }));
    if (stopped) return OkStatus();
    return flush().status();
  }

  StatusOr<store::SweepInfo> Sweep(SweepId id) const override {
    std::lock_guard<std::mutex> lock(s_.mu_);
    return s_.ReadSweep(id);
  }

  Status Holders(const std::vector<DocId>& docs, bool sketches,
                 std::vector<HeldSketch>* out) const override {
    out->clear();
    if (docs.empty()) return OkStatus();
    std::map<DocId, RedisDocument> recs;
    {
      std::lock_guard<std::mutex> lock(s_.mu_);
      StatusOr<std::map<DocId, RedisDocument>> read = s_.ReadRecords(docs, /*follow_reps=*/true);
      // ReadRecords keeps the bytes for Apply's compare-and-set, which starts afresh (it holds
      // mu_ throughout): a walk over every document must not keep them all.
      s_.raw_records_.clear();
      if (!read.ok()) return read.status();
      recs = std::move(*read);
    }
    for (DocId d : docs) {
      auto it = recs.find(d);
      if (it == recs.end()) return DataLossError("redis: document " + Dec(d) + " has no record");
      HeldSketch h;
      h.holder = it->second.rep != 0 ? it->second.rep : d;
      if (sketches) {
        auto held = recs.find(h.holder);
        if (held == recs.end()) {
          return DataLossError("redis: document " + Dec(h.holder) + " has no record");
        }
        h.sketch = reports::SketchOfRecordOf(held->second);
      }
      out->push_back(std::move(h));
    }
    return OkStatus();
  }

  StatusOr<std::optional<UrlId>> FindUrl(std::string_view url) const override {
    std::lock_guard<std::mutex> lock(s_.mu_);
    StatusOr<UrlId> id = s_.LookupUrl(url);
    if (id.ok()) return std::optional<UrlId>(*id);
    if (id.status().code() == StatusCode::kNotFound) return std::optional<UrlId>();
    return id.status();
  }

  StatusOr<WalkedUrl> ReadUrl(UrlId id) const override {
    StatusOr<std::vector<Reply>> r = [&] {
      std::lock_guard<std::mutex> lock(s_.mu_);
      return s_.client_->Pipeline(
          {Cmd({"HGET", walks::UrlNameKeyOf(id), Dec(id)}), walks::ReadVersionsOf(id)});
    }();
    if (!r.ok()) return r.status();
    if ((*r)[0].is_nil()) return NotFoundError("url id " + Dec(id) + " has no name");
    WalkedUrl u;
    u.id = id;
    u.name = (*r)[0].str;
    StatusOr<std::vector<std::string>> entries = walks::SplitVersionsOf((*r)[1]);
    if (!entries.ok()) return entries.status();
    for (const std::string& e : *entries) {
      StatusOr<VersionRecord> v = DecodeVersionEntry(e);
      if (!v.ok()) return v.status();
      u.versions.push_back(std::move(*v));
    }
    if (u.versions.empty()) {
      return NotFoundError("url id " + Dec(id) + " (" + u.name + ") has no version yet");
    }
    return u;
  }

  StatusOr<ClusterId> ClusterOf(DocId doc) const override {
    std::lock_guard<std::mutex> lock(s_.mu_);
    StatusOr<std::vector<uint64_t>> roots = FindRoots(*s_.client_, {doc});
    if (!roots.ok()) return roots.status();
    return ClusterId{(*roots)[0]};
  }

  StatusOr<std::vector<DocId>> ClusterMembersOf(ClusterId root) const override {
    std::lock_guard<std::mutex> lock(s_.mu_);
    return ClusterMembers(*s_.client_, root);
  }

  Status QueryCandidates(DocId doc, const dedup::Sketch& sketch, size_t max,
                         std::vector<DocId>* out, bool* truncated) const override {
    std::lock_guard<std::mutex> lock(s_.mu_);
    // The indexed sample values in full are in the holder's record, not in `sketch`.
    std::vector<uint64_t> indexed;
    StatusOr<dedup::Sketch> holder = s_.QuerySketch(doc, &indexed);
    if (!holder.ok()) return holder.status();
    return s_.QueryCandidates(sketch, indexed, 0, std::max<size_t>(1, max), out, truncated,
                              nullptr);
  }

  Status UrlsOfDoc(DocId doc, size_t max, std::vector<UrlId>* out, size_t* count) const override {
    StatusOr<std::vector<UrlId>> urls = [&] {
      std::lock_guard<std::mutex> lock(s_.mu_);
      return s_.UrlsOf(doc);
    }();
    if (!urls.ok()) return urls.status();
    std::sort(urls->begin(), urls->end());
    urls->erase(std::unique(urls->begin(), urls->end()), urls->end());
    *count = urls->size();
    for (size_t i = 0; i < urls->size() && i < max; ++i) out->push_back((*urls)[i]);
    return OkStatus();
  }

  std::pair<double, double> Compare(const dedup::Sketch& a, const dedup::Sketch& b) const override {
    // The records keep 32 bits of each minhash (equal minhashes stay equal) and 32 bits of each
    // sample value above its modulus: the samples masked to the bits both keep.
    dedup::ModSample sa = a.sample, sb = b.sample;
    reports::MaskSamples(&sa, &sb);
    return {dedup::ResemblanceFromMinhashes(a, b), dedup::ContainmentsFromModSample(sa, sb).a_in_b};
  }

 private:
  const RedisClusterStore& s_;
};

StatusOr<store::ChangeReport> RedisClusterStore::ChangesBetween(
    SweepId from, SweepId to, const store::ReportProgress& progress) const {
  Reads reads(*this);
  return store::internal::ReportChangesBetween(*this, reads, from, to, progress);
}

StatusOr<store::ChangeList> RedisClusterStore::ListChanges(
    SweepId from, SweepId to, const store::ChangeListOptions& options) const {
  Reads reads(*this);
  return store::internal::ReportListChanges(*this, reads, from, to, options);
}

Status RedisClusterStore::StreamChanges(SweepId from, SweepId to, store::ChangeKind kind,
                                        const std::function<Status(const store::ChangeRow&)>& row,
                                        const store::ReportProgress& progress) const {
  Reads reads(*this);
  return store::internal::ReportStreamChanges(*this, reads, from, to, kind, row, progress);
}

StatusOr<store::ChangeHistory> RedisClusterStore::ChangesOverSweeps(
    const store::ReportProgress& progress) const {
  Reads reads(*this);
  return store::internal::ReportChangesOverSweeps(*this, reads, progress);
}

StatusOr<store::LostAndFound> RedisClusterStore::Lost(std::string_view url,
                                                      const store::LostOptions& options) const {
  Reads reads(*this);
  return store::internal::FindLost(*this, reads, url, options);
}

}  // namespace shingled::redis
