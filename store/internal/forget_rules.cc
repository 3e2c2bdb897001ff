#include "store/internal/forget_rules.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "store/decide.h"
#include "store/internal/components.h"
#include "store/internal/sweeps.h"

namespace shingled::store::internal {

StatusOr<std::vector<std::string>> ValidateTakedown(const ForgetOptions& o) {
  if (o.value.empty()) return InvalidArgumentError("nothing to forget: the value is empty");
  if (o.max_urls < 1 || o.max_urls > 1000000) {
    return InvalidArgumentError("max_urls must be 1..1000000");
  }
  switch (o.scope) {
    case ForgetScope::kUrl:
      return std::vector<std::string>{};
    case ForgetScope::kHost: {
      std::string host = o.value;
      std::transform(host.begin(), host.end(), host.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (host.find_first_of("/?#@ \t\r\n") != std::string::npos) {
        return InvalidArgumentError("host '" + o.value +
                                    "' is not a host name (\"example.com\" or "
                                    "\"example.com:8080\", without a scheme or path)");
      }
      return ValidateScope({"http://" + host + "/", "https://" + host + "/"});
    }
    case ForgetScope::kPrefix:
      return ValidateScope({o.value});
    case ForgetScope::kRetention:
      break;
  }
  return InvalidArgumentError("a takedown's scope is a URL, a host or a prefix");
}

Status ValidateRetention(const RetentionOptions& o) {
  if (o.max_urls < 1 || o.max_urls > 1000000) {
    return InvalidArgumentError("retention max_urls must be 1..1000000");
  }
  if (o.max_version_age < 0 || o.max_gone_age < 0) {
    return InvalidArgumentError("retention ages must not be negative");
  }
  return OkStatus();
}

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
                                          const StoreOptions& o, const dedup::SketchParams& params,
                                          const ComparePair& compare) {
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
      const dedup::Sketch* page = &members[later].sketch;
      const dedup::Sketch* candidate = &e.sketch;
      dedup::Sketch page_compared, candidate_compared;
      if (compare) {
        page_compared = *page;
        candidate_compared = *candidate;
        compare(&page_compared, &candidate_compared);
        page = &page_compared;
        candidate = &candidate_compared;
      }
      const CandidateScreen screen = ScreenCandidate(*page, *candidate, o, params);
      const CandidateDecision d = JudgeCandidate(e.doc, *page, candidate, screen, e.verify,
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
  // Those of `docs` that no URL shows once the trims are written.
  StatusOr<std::vector<DocId>> Unshown(std::span<const DocId> docs) {
    StatusOr<std::vector<std::vector<UrlId>>> urls = reads_.UrlsShowing(docs);
    if (!urls.ok()) return urls.status();
    std::vector<DocId> out;
    for (size_t i = 0; i < docs.size(); ++i) {
      auto it = dropped_by_.find(docs[i]);
      const bool shown = std::any_of((*urls)[i].begin(), (*urls)[i].end(), [&](UrlId u) {
        return it == dropped_by_.end() || !it->second.contains(u);
      });
      if (!shown) out.push_back(docs[i]);
    }
    return out;
  }

 private:
  ForgetReads& reads_;
  std::map<DocId, std::set<UrlId>> dropped_by_;
};

// The groups of the documents no URL shows any more: each goes whole when no member is shown,
// else its unshown members stay (plan->documents_kept).
Status PlanGroups(Showing& showing, ForgetReads& reads, RemovalPlan* plan) {
  StatusOr<std::vector<DocId>> unshown = showing.Unshown(showing.Dropped());
  if (!unshown.ok()) return unshown.status();
  StatusOr<std::vector<DocId>> holders_of = reads.HoldersOf(*unshown);
  if (!holders_of.ok()) return holders_of.status();
  const std::set<DocId> holder_set(holders_of->begin(), holders_of->end());
  const std::vector<DocId> holders(holder_set.begin(), holder_set.end());
  StatusOr<std::vector<std::vector<DocId>>> sharers = reads.SharersOf(holders);
  if (!sharers.ok()) return sharers.status();
  const std::set<DocId> unshown_set(unshown->begin(), unshown->end());
  std::vector<DocId> others;  // group members whose URLs are not read yet
  // A document naming a holder is in its group, listed or not.
  for (size_t i = 0; i < unshown->size(); ++i) {
    const size_t h =
        std::lower_bound(holders.begin(), holders.end(), (*holders_of)[i]) - holders.begin();
    std::vector<DocId>& group = (*sharers)[h];
    const DocId doc = (*unshown)[i];
    if (doc != holders[h] && std::find(group.begin(), group.end(), doc) == group.end()) {
      group.push_back(doc);
    }
  }
  for (size_t i = 0; i < holders.size(); ++i) {
    (*sharers)[i].push_back(holders[i]);
    for (DocId m : (*sharers)[i]) {
      if (!unshown_set.contains(m)) others.push_back(m);
    }
  }
  StatusOr<std::vector<DocId>> others_unshown = showing.Unshown(others);
  if (!others_unshown.ok()) return others_unshown.status();
  std::set<DocId> gone(unshown_set);
  gone.insert(others_unshown->begin(), others_unshown->end());
  for (const std::vector<DocId>& group : *sharers) {
    const bool shown =
        std::any_of(group.begin(), group.end(), [&](DocId m) { return !gone.contains(m); });
    if (shown) {
      for (DocId m : group) plan->documents_kept += unshown_set.count(m);
    } else {
      plan->removed.insert(plan->removed.end(), group.begin(), group.end());
    }
  }
  std::sort(plan->removed.begin(), plan->removed.end());
  plan->removed.erase(std::unique(plan->removed.begin(), plan->removed.end()), plan->removed.end());
  return OkStatus();
}

// The clusters the removed documents leave, recomputed from the members that remain.
Status PlanClusters(ForgetReads& reads, const StoreOptions& options,
                    const dedup::SketchParams& params, RemovalPlan* plan) {
  const std::vector<DocId>& removed = plan->removed;
  StatusOr<std::vector<ClusterId>> roots_of = reads.RootsOf(removed);
  if (!roots_of.ok()) return roots_of.status();
  const std::set<ClusterId> root_set(roots_of->begin(), roots_of->end());
  const std::vector<ClusterId> roots(root_set.begin(), root_set.end());
  StatusOr<std::vector<std::vector<DocId>>> members = reads.MembersOf(roots);
  if (!members.ok()) return members.status();
  std::vector<DocId> remaining;
  for (size_t i = 0; i < roots.size(); ++i) {
    if ((*members)[i].size() < 2) continue;
    for (DocId m : (*members)[i]) {
      if (!std::binary_search(removed.begin(), removed.end(), m)) remaining.push_back(m);
    }
  }
  StatusOr<std::vector<RemainingMember>> read = reads.ReadMembers(remaining);
  if (!read.ok()) return read.status();
  std::map<DocId, RemainingMember*> by_doc;
  for (RemainingMember& m : *read) by_doc[m.doc] = &m;
  for (size_t i = 0; i < roots.size(); ++i) {
    if ((*members)[i].size() < 2) continue;
    std::vector<RemainingMember> rest;
    for (DocId m : (*members)[i]) {
      if (auto it = by_doc.find(m); it != by_doc.end()) rest.push_back(std::move(*it->second));
    }
    std::vector<ClusterPart> parts =
        RecomputeCluster(roots[i], rest, options, params, reads.PairComparison());
    plan->clusters.push_back(Recomputation{roots[i], std::move((*members)[i]), std::move(parts)});
  }
  return OkStatus();
}

}  // namespace

StatusOr<RemovalPlan> PlanRemovals(std::span<const UrlTrim> trims, ForgetReads& reads,
                                   const StoreOptions& options, const dedup::SketchParams& params) {
  RemovalPlan plan;
  Showing showing(trims, reads);
  SHINGLED_RETURN_IF_ERROR(PlanGroups(showing, reads, &plan));
  SHINGLED_RETURN_IF_ERROR(PlanClusters(reads, options, params, &plan));
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
