// Forgetting on the Redis Cluster backend: a takedown is planned by the rules every engine
// shares (store/internal/forget_rules.h, PlanRemovals), over reads of the shared state a
// pipelined round each. A dry run answers from the plan; the writes are not built on this
// backend yet (docs/notes/redis-forgetting.md says what they need).
#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "redis/backend_store.h"
#include "redis/union_find.h"
#include "store/internal/sweeps.h"

namespace shingled::redis {

using store::ClusterId;
using store::DocId;
using store::UrlId;
using store::internal::RemainingMember;
using store::internal::UrlTrim;
using store::internal::VersionRecord;

namespace {

// The ids of each reply's posting list, in order.
StatusOr<std::vector<std::vector<uint64_t>>> PostingLists(const std::vector<Reply>& replies) {
  std::vector<std::vector<uint64_t>> out;
  for (const Reply& r : replies) {
    StatusOr<std::vector<uint64_t>> ids = ParsePostingList(r);
    if (!ids.ok()) return ids.status();
    out.push_back(std::move(ids).value());
  }
  return out;
}

// A forget that writes, a retention step and the forget records: not built on this backend
// (store::Capabilities::forget).
Status ForgetRefused() {
  return FailedPreconditionError(
      "forgetting (takedowns and retention) is not available on the redis-cluster backend (only on "
      "the embedded LMDB store); a takedown's dry run answers (--dry-run)");
}

}  // namespace

// Planning's reads on the cluster. REQUIRES: the store's mu_ held while it is used.
class ForgetReadsOnCluster : public store::internal::ForgetReads {
 public:
  explicit ForgetReadsOnCluster(const RedisClusterStore& s) : s_(s) {}

  StatusOr<std::vector<std::vector<UrlId>>> UrlsShowing(std::span<const DocId> docs) override {
    std::vector<Command> cmds;
    for (DocId d : docs) cmds.push_back(listings::GetDocUrls(d));
    return Lists(cmds);
  }
  StatusOr<std::vector<DocId>> HoldersOf(std::span<const DocId> docs) override {
    StatusOr<std::map<DocId, RedisDocument>> recs = Records(docs);
    if (!recs.ok()) return recs.status();
    std::vector<DocId> out;
    for (DocId d : docs) {
      const RedisDocument& r = recs->at(d);
      out.push_back(r.rep == 0 ? d : r.rep);
    }
    return out;
  }
  // The sharers lists, less an entry whose record a crash kept from being written (or that names
  // another representative): FORMAT.md, the sharers.
  StatusOr<std::vector<std::vector<DocId>>> SharersOf(std::span<const DocId> holders) override {
    std::vector<Command> cmds;
    for (DocId h : holders) cmds.push_back(forgetting::GetSharers(h));
    StatusOr<std::vector<std::vector<uint64_t>>> lists = Lists(cmds);
    if (!lists.ok()) return lists.status();
    std::vector<DocId> listed;
    for (const std::vector<uint64_t>& l : *lists) listed.insert(listed.end(), l.begin(), l.end());
    StatusOr<std::map<DocId, RedisDocument>> recs = s_.ReadRecords(listed, false);
    if (!recs.ok()) return recs.status();
    for (size_t i = 0; i < holders.size(); ++i) {
      std::erase_if((*lists)[i], [&](DocId d) {
        auto it = recs->find(d);
        return it == recs->end() || it->second.rep != holders[i];
      });
    }
    return lists;
  }
  StatusOr<std::vector<ClusterId>> RootsOf(std::span<const DocId> docs) override {
    return FindRoots(*s_.client_, std::vector<uint64_t>(docs.begin(), docs.end()));
  }
  StatusOr<std::vector<std::vector<DocId>>> MembersOf(std::span<const ClusterId> roots) override {
    return ClusterMembersOfRoots(*s_.client_, roots);
  }
  StatusOr<std::vector<RemainingMember>> ReadMembers(std::span<const DocId> docs) override {
    StatusOr<std::map<DocId, RedisDocument>> recs = Records(docs);
    if (!recs.ok()) return recs.status();
    std::vector<RemainingMember> out;
    for (DocId d : docs) {
      const RedisDocument& r = recs->at(d);
      RemainingMember& m = out.emplace_back();
      m.doc = d;
      m.holder = r.rep == 0 ? d : r.rep;
      if (r.rep != 0) continue;
      m.sketch = reports::SketchOfRecordOf(r);
      m.verify = r.verify_sample;
      m.verify_known = !r.verify_sample.empty();
    }
    return out;
  }
  // Records keep 32 bits of each value: a pair is compared on the bits both keep, as the writer
  // compares a page with a candidate's record.
  store::internal::ComparePair PairComparison() const override {
    return [](dedup::Sketch* later, dedup::Sketch* earlier) {
      reports::MaskSamples(&later->sample, &earlier->sample);
    };
  }

 private:
  StatusOr<std::vector<std::vector<uint64_t>>> Lists(const std::vector<Command>& cmds) {
    auto r = s_.client_->Pipeline(cmds);
    if (!r.ok()) return r.status();
    return PostingLists(*r);
  }
  // The records of `docs`, each of which must have one.
  StatusOr<std::map<DocId, RedisDocument>> Records(std::span<const DocId> docs) {
    StatusOr<std::map<DocId, RedisDocument>> recs =
        s_.ReadRecords(std::vector<DocId>(docs.begin(), docs.end()), false);
    if (!recs.ok()) return recs.status();
    for (DocId d : docs) {
      if (!recs->contains(d)) return DataLossError("redis: document " + Dec(d) + " has no record");
    }
    return recs;
  }

  const RedisClusterStore& s_;
};

StatusOr<std::vector<UrlTrim>> RedisClusterStore::TakedownUrls(
    const store::ForgetOptions& options, const std::vector<std::string>& prefixes,
    bool* more) const {
  // By name: the first max_urls in URL order, as LMDB's walk of its `urls` keys gives them.
  std::map<std::string, UrlTrim> matched;
  auto take = [&](UrlId id, const std::string& name, std::vector<VersionRecord> versions) {
    UrlTrim t;
    t.url = id;
    t.name = name;
    t.versions = std::move(versions);
    t.cut = t.versions.size();
    t.whole = true;
    matched.emplace(name, std::move(t));
    if (matched.size() > options.max_urls) {
      matched.erase(std::prev(matched.end()));
      *more = true;
    }
  };
  if (options.scope == store::ForgetScope::kUrl) {
    std::lock_guard<std::mutex> lock(mu_);
    StatusOr<UrlId> id = LookupUrl(options.value);
    if (id.status().code() == StatusCode::kNotFound) {
      return NotFoundError("URL never stored (or forgotten already): " + options.value);
    }
    if (!id.ok()) return id.status();
    auto field = client_->Run(walks::ReadVersionsOf(*id));
    if (!field.ok()) return field.status();
    StatusOr<std::vector<std::string>> entries = walks::SplitVersionsOf(*field);
    if (!entries.ok()) return entries.status();
    std::vector<VersionRecord> versions;
    for (const std::string& e : *entries) {
      StatusOr<VersionRecord> v = DecodeVersionEntry(e);
      if (!v.ok()) return v.status();
      versions.push_back(std::move(v).value());
    }
    take(*id, options.value, std::move(versions));
  } else {
    const std::vector<std::string_view> disjoint = store::internal::DisjointPrefixes(prefixes);
    SHINGLED_RETURN_IF_ERROR(WalkUrls(
        0, [&](UrlId id, const std::string& name,
               const std::vector<VersionRecord>& versions) -> StatusOr<bool> {
          if (std::any_of(disjoint.begin(), disjoint.end(),
                          [&](std::string_view p) { return name.starts_with(p); })) {
            take(id, name, versions);
          }
          return true;
        }));
  }
  std::vector<UrlTrim> out;
  for (auto& [name, t] : matched) out.push_back(std::move(t));
  return out;
}

StatusOr<store::ForgetResult> RedisClusterStore::Forget(const store::ForgetOptions& options) {
  StatusOr<std::vector<std::string>> prefixes = store::internal::ValidateTakedown(options);
  if (!prefixes.ok()) return prefixes.status();
  store::ForgetResult result;
  StatusOr<std::vector<UrlTrim>> trims = TakedownUrls(options, *prefixes, &result.more);
  if (!trims.ok()) return trims.status();
  std::lock_guard<std::mutex> lock(mu_);
  ForgetReadsOnCluster reads(*this);
  StatusOr<store::internal::RemovalPlan> plan =
      store::internal::PlanRemovals(*trims, reads, options_, params_);
  if (!plan.ok()) return plan.status();
  store::internal::CountPlan(*trims, *plan, options.list_limit, &result);
  if (options.dry_run) return result;
  return ForgetRefused();
}

StatusOr<std::vector<store::ForgetRecord>> RedisClusterStore::ForgetRecords(uint64_t,
                                                                            size_t) const {
  return ForgetRefused();
}

StatusOr<store::RetentionStep> RedisClusterStore::ApplyRetention(const store::RetentionOptions&) {
  return ForgetRefused();
}

}  // namespace shingled::redis
