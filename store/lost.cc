// Lost and found (Store::Lost): where the content of a URL lives now. It follows the content, not
// cluster membership: a moved page that was edited on the way (resemblance 0.5-0.8, below what
// the default cluster relations join) is found by the `similar` queries' candidate search from
// the old URL's last live sketch, and a URL found through an older version of its own is
// followed to its state now, so a successor edited again after the move is still found.
// The candidate search reads the sample index and, when it is not enough, the features; not the
// super shingles (FindQueryCandidates: a page they would find shares sample values too). The old
// document's cluster is read whole before the max_scored cap applies to it. Written once over the
// reads of store/internal/report_reads.h: on LMDB in one read transaction, on Redis Cluster in
// pipelined rounds (redis/backend_reports.cc).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "dedup/estimate.h"
#include "store/internal/codec.h"
#include "store/internal/moves.h"
#include "store/internal/report_reads.h"
#include "store/internal/verify.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

std::string_view LostStatusName(LostStatus status) {
  switch (status) {
    case LostStatus::kAlive:
      return "alive";
    case LostStatus::kMoved:
      return "moved";
    case LostStatus::kDead:
      return "dead";
    case LostStatus::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view SuccessorEvidenceName(SuccessorEvidence evidence) {
  return evidence == SuccessorEvidence::kRedirect ? "redirect" : "content";
}

namespace internal {
namespace {

// "2024-06-01" (UTC), for the sentences of `why`.
std::string Day(int64_t unix_seconds) {
  using namespace std::chrono;
  const sys_days day = floor<days>(sys_seconds(seconds(unix_seconds)));
  const year_month_day ymd(day);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return buf;
}

std::string Fixed2(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", x);
  return buf;
}

// What a URL's versions say, read once per query.
struct UrlFacts {
  std::string name;
  std::vector<VersionRecord> versions;  // oldest first; not empty
  int last_live = -1;                   // index of the last live version, -1 if never live
  bool alive() const { return last_live == static_cast<int>(versions.size()) - 1; }
  const VersionRecord& last() const { return versions.back(); }
  // The last redirect after the last live version (any when never live), or null.
  const VersionRecord* Redirect() const {
    for (int i = static_cast<int>(versions.size()) - 1; i > last_live; --i) {
      if (versions[i].verdict == Verdict::kRedirect) return &versions[i];
    }
    return nullptr;
  }
  // The date of the first version after the last live one; 0 when alive or never live.
  int64_t Died() const {
    if (last_live < 0 || alive()) return 0;
    return versions[last_live + 1].date;
  }
};

// A version of a URL that matched the old content: the URL, the document, the estimates and
// what the move rule makes of them.
struct Match {
  UrlId url = 0;
  DocId doc = 0;
  double resemblance = 0;
  double containment = 0;  // from the chunks when both have them, else the MOD samples
  MoveEvidence evidence = MoveEvidence::kNone;
};

// The MOD samples' containment from which a candidate's bytes in common are read: the estimate
// only nominates (it overshoots for a short page), the chunks decide (kMoveContainment).
constexpr double kContainmentNominee = 0.25;

bool RanksBefore(const Successor& a, const Successor& b) {
  const bool ra = a.evidence == SuccessorEvidence::kRedirect;
  const bool rb = b.evidence == SuccessorEvidence::kRedirect;
  if (ra != rb) return ra;
  if (a.born_when_died != b.born_when_died) return a.born_when_died;
  if (a.resemblance != b.resemblance) return a.resemblance > b.resemblance;
  if (a.containment != b.containment) return a.containment > b.containment;
  if (a.last_seen != b.last_seen) return a.last_seen > b.last_seen;
  return a.url < b.url;
}

// One query: the URLs' versions read so far, the path followed (no cycles) and the bounds.
class SuccessorFinder {
 public:
  SuccessorFinder(const Store& store, const ReportReads& reads, const LostOptions& options)
      : store_(store), reads_(reads), options_(options) {}

  StatusOr<LostAndFound> Find(UrlId url) {
    const UrlFacts* facts = nullptr;
    SHINGLED_RETURN_IF_ERROR(Facts(url, &facts, /*asked=*/true));
    if (facts == nullptr) return InternalError("lost and found: no budget for the URL asked");
    LostAndFound out;
    out.url = facts->name;
    if (facts->last_live >= 0) {
      const VersionRecord& live = facts->versions[facts->last_live];
      out.last_seen_live = live.date;
      out.last_doc = live.doc;
      StatusOr<ClusterId> cl = reads_.ClusterOf(live.doc);
      if (!cl.ok()) return cl.status();
      out.cluster = *cl;
    }
    out.died = facts->Died();
    if (const VersionRecord* r = facts->Redirect(); r != nullptr) {
      out.redirect_target = r->redirect_target;
      out.redirect_status = static_cast<int>(r->http_status);
    }
    if (facts->alive()) {
      out.status = LostStatus::kAlive;
      return out;
    }
    dedup::Sketch old_sketch;
    if (facts->last_live >= 0) {
      SHINGLED_RETURN_IF_ERROR(SketchOfDoc(facts->versions[facts->last_live].doc, &old_sketch));
    }
    path_.push_back(url);
    std::vector<Successor> found;
    SHINGLED_RETURN_IF_ERROR(Successors(url, 0, &found));
    path_.pop_back();
    // Where each successor stands now against the old content.
    dedup::Sketch now;
    for (Successor& s : found) {
      if (old_sketch.empty()) break;
      SHINGLED_RETURN_IF_ERROR(SketchOfDoc(s.doc, &now));
      if (now.empty()) continue;
      const auto [resemblance, containment] = reads_.Compare(old_sketch, now);
      s.resemblance_now = resemblance;
      if (s.evidence == SuccessorEvidence::kRedirect && s.matched_doc == s.doc) {
        s.resemblance = s.resemblance_now;
        s.containment = containment;
      }
      if (s.evidence == SuccessorEvidence::kContent && s.via.empty() && s.doc != s.matched_doc) {
        s.why.append(", edited since (resemblance now ").append(Fixed2(s.resemblance_now));
        s.why.append(")");
      }
    }
    // Ranked moves first: a first successor that is no move means that only copies were found.
    const bool moved = !found.empty() && (found.front().evidence == SuccessorEvidence::kRedirect ||
                                          found.front().born_when_died);
    if (moved) {
      out.status = LostStatus::kMoved;
      out.best = std::move(found.front());
    }
    for (size_t i = moved ? 1 : 0; i < found.size(); ++i) {
      if (out.candidates.size() == options_.max_candidates) {
        Truncate("max_candidates");
        break;
      }
      out.candidates.push_back(std::move(found[i]));
    }
    if (!moved) {
      out.status = !old_sketch.empty() || !out.redirect_target.empty() ? LostStatus::kDead
                                                                       : LostStatus::kUnknown;
    }
    out.truncated = !truncated_by_.empty();
    out.truncated_by = truncated_by_;
    return out;
  }

 private:
  void Truncate(const char* bound) {
    if (truncated_by_.empty()) truncated_by_ = bound;
  }

  bool OnPath(UrlId url) const { return std::find(path_.begin(), path_.end(), url) != path_.end(); }

  // The versions of `url`, read once; `*out` is null when LostOptions::max_urls is spent, or
  // when a URL followed (not `asked`) has no version yet (a backend shared with other writers).
  Status Facts(UrlId url, const UrlFacts** out, bool asked = false) {
    *out = nullptr;
    if (auto it = facts_.find(url); it != facts_.end()) {
      *out = &it->second;
      return OkStatus();
    }
    if (facts_.size() >= options_.max_urls) {
      Truncate("max_urls");
      return OkStatus();
    }
    StatusOr<WalkedUrl> read = reads_.ReadUrl(url);
    if (!read.ok()) {
      if (!asked && read.status().code() == StatusCode::kNotFound) return OkStatus();
      return read.status();
    }
    UrlFacts f;
    f.name = std::move(read->name);
    f.versions = std::move(read->versions);
    for (size_t i = 0; i < f.versions.size(); ++i) {
      if (LiveVersion(f.versions[i])) f.last_live = static_cast<int>(i);
    }
    *out = &facts_.emplace(url, std::move(f)).first->second;
    return OkStatus();
  }

  // The resemblance of `old_doc` and `doc` as the `similar` queries estimate it: from the
  // verification samples when both have one, else from the minhashes.
  Status Resemblance(DocId old_doc, DocId doc, double* out) {
    if (old_info_.id != old_doc) {
      StatusOr<DocumentInfo> info = store_.Document(old_doc);
      if (!info.ok()) return info.status();
      old_info_ = std::move(*info);
    }
    StatusOr<DocumentInfo> other = store_.Document(doc);
    if (!other.ok()) return other.status();
    const std::vector<uint32_t>& sample = other->sketch.verify_sample;
    *out = EstimatePair(old_info_.sketch, other->sketch, sample, !sample.empty(),
                        static_cast<size_t>(store_.params().verify_sample_size))
               .estimate.resemblance;
    return OkStatus();
  }

  Status SketchOfDoc(DocId doc, dedup::Sketch* out) {
    SHINGLED_RETURN_IF_ERROR(reads_.Holders({doc}, /*sketches=*/true, &held_));
    *out = std::move(held_[0].sketch);
    return OkStatus();
  }

  // Whether `succ` was born, or its content changed, when `old` died: in another sweep than old's
  // last live version and not before it (a page first seen later in the same sweep lived beside
  // it; two sweeps' fetches may share a second), up to its death plus moved_within. Sets `*date`
  // and `*born`.
  bool BornWhenDied(const UrlFacts& old, const UrlFacts& succ, int64_t* date, bool* born) const {
    if (old.last_live < 0) return false;
    const VersionRecord& last_live = old.versions[old.last_live];
    const int64_t died = old.Died();
    const int64_t to = (died == 0 ? last_live.date : died) + options_.moved_within;
    auto within = [&](const VersionRecord& v) {
      return v.date >= last_live.date && v.date <= to && v.sweep != last_live.sweep;
    };
    if (within(succ.versions.front())) {
      *date = succ.versions.front().date;
      *born = true;
      return true;
    }
    DocId previous = 0;
    for (const VersionRecord& v : succ.versions) {
      if (v.doc == 0) continue;
      if (previous != 0 && v.doc != previous && within(v)) {
        *date = v.date;
        *born = false;
        return true;
      }
      previous = v.doc;
    }
    return false;
  }

  // The successors of `url` (not alive; on path_), at `depth` steps from the URL asked, ranked
  // and one per URL.
  Status Successors(UrlId url, int depth, std::vector<Successor>* out) {
    const UrlFacts* facts = nullptr;
    SHINGLED_RETURN_IF_ERROR(Facts(url, &facts));
    if (facts == nullptr) return OkStatus();
    // Stays valid: facts_ is node-based, and Facts() below only adds to it.
    const UrlFacts& old = *facts;
    std::vector<Successor> found;
    // A recorded redirect to a URL in the store: the strongest evidence.
    if (const VersionRecord* r = old.Redirect(); r != nullptr && !r->redirect_target.empty()) {
      SHINGLED_RETURN_IF_ERROR(FollowRedirect(*r, depth, &found));
    }
    if (old.last_live >= 0) SHINGLED_RETURN_IF_ERROR(FollowContent(old, depth, &found));
    std::sort(found.begin(), found.end(), RanksBefore);
    std::unordered_set<std::string> seen;
    for (Successor& s : found) {
      if (seen.insert(s.url).second) out->push_back(std::move(s));
    }
    return OkStatus();
  }

  Status FollowRedirect(const VersionRecord& redirect, int depth, std::vector<Successor>* found) {
    StatusOr<std::optional<UrlId>> found_id = reads_.FindUrl(redirect.redirect_target);
    if (!found_id.ok()) return found_id.status();
    if (!*found_id) return OkStatus();  // nowhere known
    const std::optional<UrlId> target = *found_id;
    if (OnPath(*target)) return OkStatus();
    const UrlFacts* t = nullptr;
    SHINGLED_RETURN_IF_ERROR(Facts(*target, &t));
    if (t == nullptr) return OkStatus();
    std::string why = "redirect (";
    why.append(std::to_string(redirect.http_status)).append(") recorded ");
    why.append(Day(redirect.date));
    Successor s;
    if (t->alive()) {
      s.url = t->name;
      s.url_id = *target;
      s.doc = t->last().doc;
      s.last_seen = t->last().date;
      s.matched_doc = s.doc;
      s.matched_date = s.last_seen;
    } else {
      if (depth + 1 > options_.max_depth) {
        Truncate("max_depth");
        return OkStatus();
      }
      const std::string hop = t->name;
      path_.push_back(*target);
      std::vector<Successor> next;
      SHINGLED_RETURN_IF_ERROR(Successors(*target, depth + 1, &next));
      path_.pop_back();
      if (next.empty()) return OkStatus();
      s = std::move(next.front());
      s.via.insert(s.via.begin(), hop);
      why.append(" to ").append(hop).append(", then ").append(s.why);
    }
    s.evidence = SuccessorEvidence::kRedirect;
    s.redirect_status = static_cast<int>(redirect.http_status);
    s.redirect_date = redirect.date;
    s.born_when_died = false;
    s.born_or_changed = 0;
    s.why = std::move(why);
    found->push_back(std::move(s));
    return OkStatus();
  }

  Status FollowContent(const UrlFacts& old, int depth, std::vector<Successor>* found) {
    const DocId old_doc = old.versions[old.last_live].doc;
    dedup::Sketch sketch;
    SHINGLED_RETURN_IF_ERROR(SketchOfDoc(old_doc, &sketch));
    if (sketch.empty()) return OkStatus();
    // The candidate documents: the `similar` search's, then the old document's cluster.
    std::vector<DocId> docs;
    bool truncated = false;
    SHINGLED_RETURN_IF_ERROR(
        reads_.QueryCandidates(old_doc, sketch, options_.max_scored, &docs, &truncated));
    if (truncated) Truncate("max_scored");
    StatusOr<ClusterId> root = reads_.ClusterOf(old_doc);
    if (!root.ok()) return root.status();
    StatusOr<std::vector<DocId>> members = reads_.ClusterMembersOf(*root);
    if (!members.ok()) return members.status();
    for (DocId m : *members) {
      if (docs.size() >= 2 * options_.max_scored) {
        Truncate("max_scored");
        break;
      }
      docs.push_back(m);
    }
    docs.push_back(old_doc);
    std::sort(docs.begin(), docs.end());
    docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
    // Scored (their sketches read in one batch); per URL that ever showed one of them, its best
    // match.
    std::map<UrlId, Match> best;
    std::vector<HeldSketch> held;
    SHINGLED_RETURN_IF_ERROR(reads_.Holders(docs, /*sketches=*/true, &held));
    DocId old_holder = 0;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (docs[i] == old_doc) old_holder = held[i].holder;
    }
    std::vector<uint64_t> urls;
    for (size_t i = 0; i < docs.size(); ++i) {
      const DocId doc = docs[i];
      const dedup::Sketch& other = held[i].sketch;
      if (other.empty()) continue;
      Match m;
      m.doc = doc;
      ContentMatch content;
      content.same_content = held[i].holder == old_holder;
      if (content.same_content) {
        m.resemblance = 1.0;
        m.containment = 1.0;
      } else {
        std::tie(m.resemblance, m.containment) = reads_.Compare(sketch, other);
        if (m.resemblance < kMoveResemblance && m.containment < kContainmentNominee) continue;
        // The move rule reads the estimate the `similar` queries give, and the bytes in common
        // (containment and the template share).
        SHINGLED_RETURN_IF_ERROR(Resemblance(old_doc, doc, &m.resemblance));
        StatusOr<CommonBytes> common = store_.BytesInCommon(old_doc, doc, /*max_spans=*/0);
        if (!common.ok()) return common.status();
        content.common = std::move(*common);
        if (content.common.known) m.containment = content.common.share_a;
      }
      content.resemblance = m.resemblance;
      m.evidence = JudgeContentMove(content);
      if (m.evidence == MoveEvidence::kNone) continue;
      urls.clear();
      size_t count = 0;
      SHINGLED_RETURN_IF_ERROR(reads_.UrlsOfDoc(doc, options_.max_urls, &urls, &count));
      if (count > urls.size()) Truncate("max_urls");
      for (UrlId u : urls) {
        if (OnPath(u)) continue;
        m.url = u;
        auto [it, added] = best.emplace(u, m);
        if (!added &&
            (m.resemblance > it->second.resemblance ||
             (m.resemblance == it->second.resemblance && m.containment > it->second.containment))) {
          it->second = m;
        }
      }
    }
    std::vector<Match> matches;
    matches.reserve(best.size());
    for (const auto& [u, m] : best) matches.push_back(m);
    std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
      if (a.resemblance != b.resemblance) return a.resemblance > b.resemblance;
      return a.url < b.url;
    });
    for (const Match& m : matches) {
      if (OnPath(m.url)) continue;  // reached since, through a successor that moved on
      const UrlFacts* facts = nullptr;
      SHINGLED_RETURN_IF_ERROR(Facts(m.url, &facts));
      if (facts == nullptr) break;
      Successor s;
      bool born = false;
      s.born_when_died = BornWhenDied(old, *facts, &s.born_or_changed, &born);
      // Every match passed the move rule; a copy that lived beside the old URL (not born or
      // changed when it died) must be a near copy too.
      if (!s.born_when_died && m.resemblance < options_.near_copy_resemblance) continue;
      s.evidence = SuccessorEvidence::kContent;
      s.resemblance = m.resemblance;
      s.containment = m.containment;
      s.matched_doc = m.doc;
      for (const VersionRecord& v : facts->versions) {
        if (v.doc == m.doc) s.matched_date = v.date;
      }
      std::string why;
      switch (m.evidence) {
        case MoveEvidence::kSameContent:
          why = "same content";
          break;
        case MoveEvidence::kResemblance:
          why = "near copy, resemblance " + Fixed2(m.resemblance);
          break;
        default:
          why = "holds the old content, " + Fixed2(m.containment) + " of its bytes in common";
          break;
      }
      if (s.born_when_died) {
        why.append(born ? ", born " : ", changed ").append(Day(s.born_or_changed));
        why.append(" when the old URL died");
      }
      if (facts->alive()) {
        s.url = facts->name;
        s.url_id = m.url;
        s.doc = facts->last().doc;
        s.last_seen = facts->last().date;
        s.why = std::move(why);
        found->push_back(std::move(s));
        continue;
      }
      // It moved on in turn: where did it go?
      if (depth + 1 > options_.max_depth) {
        Truncate("max_depth");
        continue;
      }
      const std::string hop = facts->name;
      path_.push_back(m.url);
      std::vector<Successor> next;
      SHINGLED_RETURN_IF_ERROR(Successors(m.url, depth + 1, &next));
      path_.pop_back();
      if (next.empty()) continue;
      Successor& n = next.front();
      s.url = std::move(n.url);
      s.url_id = n.url_id;
      s.doc = n.doc;
      s.last_seen = n.last_seen;
      s.via = std::move(n.via);
      s.via.insert(s.via.begin(), hop);
      why.append(" at ").append(hop).append(", which moved on: ").append(n.why);
      s.why = std::move(why);
      found->push_back(std::move(s));
    }
    return OkStatus();
  }

  const Store& store_;
  const ReportReads& reads_;
  const LostOptions& options_;
  std::vector<HeldSketch> held_;  // SketchOfDoc's
  DocumentInfo old_info_;         // Resemblance's: the old document's
  std::unordered_map<UrlId, UrlFacts> facts_;
  std::vector<UrlId> path_;  // the URL asked, then each URL followed on the way here
  std::string truncated_by_;
};

}  // namespace

StatusOr<LostAndFound> FindLost(const Store& store, const ReportReads& reads, std::string_view url,
                                const LostOptions& options) {
  if (!(options.near_copy_resemblance > 0 && options.near_copy_resemblance <= 1) ||
      options.moved_within < 0 || options.max_scored == 0 || options.max_urls == 0 ||
      options.max_depth < 0) {
    return InvalidArgumentError("lost and found: an option is out of its range (store/types.h)");
  }
  StatusOr<std::optional<UrlId>> id = reads.FindUrl(url);
  if (!id.ok()) return id.status();
  if (!*id) return NotFoundError("URL never stored: " + std::string(url));
  SuccessorFinder finder(store, reads, options);
  return finder.Find(**id);
}

}  // namespace internal

StatusOr<LostAndFound> LmdbStore::Lost(std::string_view url, const LostOptions& options) const {
  // One read transaction for the whole search.
  StatusOr<std::unique_ptr<internal::ReportReads>> reads = internal::LmdbReportReads(*impl_, true);
  if (!reads.ok()) return reads.status();
  return internal::FindLost(*this, **reads, url, options);
}

}  // namespace shingled::store
