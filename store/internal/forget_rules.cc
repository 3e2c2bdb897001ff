#include "store/internal/forget_rules.h"

#include <algorithm>
#include <map>
#include <set>

#include "store/decide.h"
#include "store/internal/components.h"

namespace shingled::store::internal {

RetentionCut RetentionCutOf(std::span<const VersionRecord> vs, const RetentionOptions& o) {
  if (vs.empty()) return {};
  const VersionRecord& last = vs.back();
  if (o.max_gone_age > 0 && !LiveVersion(last) && last.date < o.now - o.max_gone_age) {
    return {.whole_url = true, .versions = vs.size()};
  }
  if (o.max_version_age <= 0) return {};
  const int64_t cutoff = o.now - o.max_version_age;
  size_t cut = 0;
  while (cut + 1 < vs.size() && vs[cut].date < cutoff) ++cut;
  while (cut > 0 && vs[cut].verdict == Verdict::kFailed && vs[cut].doc != 0) --cut;
  return {.whole_url = false, .versions = cut};
}

std::vector<ClusterPart> RecomputeCluster(ClusterId old_root,
                                          std::span<const RemainingMember> members,
                                          const StoreOptions& o,
                                          const dedup::SketchParams& params) {
  const size_t n = members.size();
  Components parts(n);
  if ((o.cluster_relations & kClusterExact) != 0) {
    std::map<DocId, size_t> first_of_holder;
    for (size_t i = 0; i < n; ++i) {
      auto [it, added] = first_of_holder.emplace(members[i].holder, i);
      if (!added) parts.Union(it->second, i);
    }
  }
  auto holds_sketch = [&](size_t i) { return members[i].holder == members[i].doc; };
  for (size_t later = 0; later < n; ++later) {
    if (!holds_sketch(later)) continue;
    for (size_t earlier = 0; earlier < later; ++earlier) {
      if (!holds_sketch(earlier) || parts.Find(earlier) == parts.Find(later)) continue;
      const RemainingMember& e = members[earlier];
      const dedup::Sketch& page = members[later].sketch;
      const CandidateScreen screen = ScreenCandidate(page, e.sketch, o, params);
      const CandidateDecision d = JudgeCandidate(e.doc, page, &e.sketch, screen, e.verify,
                                                 e.verify_known, nullptr, o, params);
      if (d.joins) parts.Union(earlier, later);
    }
  }
  std::map<size_t, size_t> part_of;  // a part's Find index -> its place in `out`
  std::vector<ClusterPart> out;
  for (size_t i = 0; i < n; ++i) {  // members in id order: parts in order of their smallest
    auto [it, added] = part_of.emplace(parts.Find(i), out.size());
    if (added) out.push_back(ClusterPart{members[i].doc, {}});
    ClusterPart& part = out[it->second];
    part.docs.push_back(members[i].doc);
    if (members[i].doc == old_root) part.id = old_root;
  }
  return out;
}

std::vector<DocId> DroppedDocuments(const UrlTrim& trim) {
  std::set<DocId> kept;
  for (size_t i = trim.cut; i < trim.versions.size(); ++i) kept.insert(trim.versions[i].doc);
  std::set<DocId> dropped;
  for (size_t i = 0; i < trim.cut; ++i) {
    const DocId doc = trim.versions[i].doc;
    if (doc != 0 && !kept.contains(doc)) dropped.insert(doc);
  }
  return {dropped.begin(), dropped.end()};
}

namespace {

// Planning's reads of which documents are still shown once the trims are written.
class Showing {
 public:
  Showing(std::span<const UrlTrim> trims, ForgetReads& reads) : reads_(reads) {
    for (const UrlTrim& t : trims) {
      for (DocId doc : DroppedDocuments(t)) dropped_by_[doc].insert(t.url);
    }
  }
  // The documents some trim drops, by id.
  std::vector<DocId> Dropped() const {
    std::vector<DocId> out;
    for (const auto& [doc, urls] : dropped_by_) out.push_back(doc);
    return out;
  }
  // Whether a URL still shows `doc` once the trims are written.
  StatusOr<bool> Shown(DocId doc) {
    StatusOr<std::vector<UrlId>> urls = reads_.UrlsShowing(doc);
    if (!urls.ok()) return urls.status();
    auto it = dropped_by_.find(doc);
    for (UrlId u : *urls) {
      if (it == dropped_by_.end() || !it->second.contains(u)) return true;
    }
    return false;
  }

 private:
  ForgetReads& reads_;
  std::map<DocId, std::set<UrlId>> dropped_by_;
};

}  // namespace

StatusOr<RemovalPlan> PlanRemovals(std::span<const UrlTrim> trims, ForgetReads& reads,
                                   const StoreOptions& options,
                                   const dedup::SketchParams& params) {
  RemovalPlan plan;
  Showing showing(trims, reads);
  std::set<DocId> unshown;
  std::set<DocId> holders;
  for (DocId doc : showing.Dropped()) {
    StatusOr<bool> shown = showing.Shown(doc);
    if (!shown.ok()) return shown.status();
    if (*shown) continue;
    StatusOr<DocId> holder = reads.HolderOf(doc);
    if (!holder.ok()) return holder.status();
    unshown.insert(doc);
    holders.insert(*holder);
  }
  for (DocId holder : holders) {
    StatusOr<std::vector<DocId>> group = reads.SharersOf(holder);
    if (!group.ok()) return group.status();
    group->push_back(holder);
    bool shown = false;
    for (DocId m : *group) {
      StatusOr<bool> s = unshown.contains(m) ? false : showing.Shown(m);
      if (!s.ok()) return s.status();
      shown = shown || *s;
    }
    if (shown) {
      for (DocId m : *group) plan.documents_kept += unshown.count(m);
    } else {
      plan.removed.insert(plan.removed.end(), group->begin(), group->end());
    }
  }
  std::sort(plan.removed.begin(), plan.removed.end());
  std::map<ClusterId, std::vector<DocId>> clusters;
  for (DocId doc : plan.removed) {
    std::vector<DocId> members;
    StatusOr<ClusterId> root = reads.ClusterOf(doc, &members);
    if (!root.ok()) return root.status();
    if (members.size() > 1) clusters.emplace(*root, std::move(members));
  }
  for (auto& [root, members] : clusters) {
    std::vector<RemainingMember> remaining;
    for (DocId m : members) {
      if (std::binary_search(plan.removed.begin(), plan.removed.end(), m)) continue;
      StatusOr<RemainingMember> member = reads.ReadMember(m);
      if (!member.ok()) return member.status();
      remaining.push_back(std::move(member).value());
    }
    std::vector<ClusterPart> parts = RecomputeCluster(root, remaining, options, params);
    plan.clusters.push_back(Recomputation{root, std::move(members), std::move(parts)});
  }
  return plan;
}

void CountPlan(std::span<const UrlTrim> trims, const RemovalPlan& plan, size_t list_limit,
               ForgetResult* result) {
  for (const UrlTrim& t : trims) {
    result->versions += t.cut;
    if (!t.whole) continue;
    ++result->urls;
    if (result->listed.size() < list_limit) result->listed.push_back(t.name);
  }
  result->documents = plan.removed.size();
  result->documents_kept = plan.documents_kept;
  result->clusters_recomputed = plan.clusters.size();
  for (const Recomputation& c : plan.clusters) result->clusters_split += c.parts.size() > 1;
}

}  // namespace shingled::store::internal
