#include "store/internal/forget_rules.h"

#include <map>

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

}  // namespace shingled::store::internal
