// Lost and found (Store::Lost): where the content of a URL lives now. It follows the content, not
// cluster membership: a moved page that was edited on the way (resemblance 0.5-0.8, below what
// the default cluster relations join) is found by the `similar` queries' candidate search from
// the old URL's last live sketch, and a URL found through an older version of its own is
// followed to its state now, so a successor edited again after the move is still found.
// The candidate search reads the sample index and, when it is not enough, the features; not the
// super shingles (FindQueryCandidates: a page they would find shares sample values too). The old
// document's cluster is read whole before the max_scored cap applies to it.
#include "store/internal/lost.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "dedup/estimate.h"
#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/queries.h"
#include "store/internal/store_impl.h"
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

// A version of a URL that matched the old content: the URL, the document and the estimates.
struct Match {
  UrlId url = 0;
  DocId doc = 0;
  double resemblance = 0;
  double containment = 0;
};

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
  SuccessorFinder(TxnOps& ops, const StoreImpl& impl, const LostOptions& options)
      : ops_(ops), impl_(impl), options_(options) {}

  StatusOr<LostAndFound> Find(UrlId url) {
    const UrlFacts* facts = nullptr;
    SHINGLED_RETURN_IF_ERROR(Facts(url, &facts));
    if (facts == nullptr) return InternalError("lost and found: no budget for the URL asked");
    LostAndFound out;
    out.url = facts->name;
    if (facts->last_live >= 0) {
      const VersionRecord& live = facts->versions[facts->last_live];
      out.last_seen_live = live.date;
      out.last_doc = live.doc;
      StatusOr<ClusterId> cl = FindCluster(ops_, live.doc);
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
      s.resemblance_now = dedup::ResemblanceFromMinhashes(old_sketch, now);
      if (s.evidence == SuccessorEvidence::kRedirect && s.matched_doc == s.doc) {
        s.resemblance = s.resemblance_now;
        s.containment = dedup::ContainmentsFromModSample(old_sketch.sample, now.sample).a_in_b;
      }
      if (s.evidence == SuccessorEvidence::kContent && s.via.empty() && s.doc != s.matched_doc) {
        s.why.append(", edited since (resemblance now ").append(Fixed2(s.resemblance_now));
        s.why.append(")");
      }
    }
    if (!found.empty()) {
      out.status = LostStatus::kMoved;
      out.best = std::move(found.front());
      for (size_t i = 1; i < found.size(); ++i) {
        if (out.candidates.size() == options_.max_candidates) {
          Truncate("max_candidates");
          break;
        }
        out.candidates.push_back(std::move(found[i]));
      }
    } else if (!old_sketch.empty() || !out.redirect_target.empty()) {
      out.status = LostStatus::kDead;
    } else {
      out.status = LostStatus::kUnknown;
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

  // The versions of `url`, read once; `*out` is null when LostOptions::max_urls is spent.
  Status Facts(UrlId url, const UrlFacts** out) {
    *out = nullptr;
    if (auto it = facts_.find(url); it != facts_.end()) {
      *out = &it->second;
      return OkStatus();
    }
    if (facts_.size() >= options_.max_urls) {
      Truncate("max_urls");
      return OkStatus();
    }
    UrlFacts f;
    std::string_view name;
    SHINGLED_RETURN_IF_ERROR(
        ops_.Get(ops_.dbis().url_names, Key64(url).view(), &name, "url_names"));
    f.name = std::string(name);
    Cursor c;
    if (int rc = c.Open(ops_.txn(), ops_.dbis().versions); rc != 0) {
      return ops_.Fail(rc, "versions cursor");
    }
    const std::string key = VersionKey(url, 0);
    MDB_val k = Val(key), v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
    while (rc == 0) {
      if (k.mv_size < 8 || GetBE64(static_cast<const char*>(k.mv_data)) != url) break;
      UrlId id = 0;
      uint32_t seq = 0;
      SHINGLED_RETURN_IF_ERROR(DecodeVersionKey(View(k), &id, &seq));
      StatusOr<VersionRecord> ver = DecodeVersion(View(v));
      if (!ver.ok()) return ver.status();
      if (LiveVersion(*ver)) f.last_live = static_cast<int>(f.versions.size());
      f.versions.push_back(std::move(ver).value());
      rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT);
    }
    if (rc != 0 && rc != MDB_NOTFOUND) return ops_.Fail(rc, "versions");
    if (f.versions.empty()) {
      return DataLossError("url id " + std::to_string(url) + " (" + f.name + ") has no version");
    }
    *out = &facts_.emplace(url, std::move(f)).first->second;
    return OkStatus();
  }

  Status SketchOfDoc(DocId doc, dedup::Sketch* out) {
    DocId holder = 0;
    StatusOr<DocumentRecord> rec = ReadSketchHolder(ops_, doc, &holder);
    if (!rec.ok()) return rec.status();
    SketchInto(*rec, out);
    return OkStatus();
  }

  // Whether `succ` was born, or its content changed, when `old` died: after old's last live
  // version and in another sweep (a page first seen later in the same sweep lived beside it), up
  // to its death plus moved_within. Sets `*date` and `*born`.
  bool BornWhenDied(const UrlFacts& old, const UrlFacts& succ, int64_t* date, bool* born) const {
    if (old.last_live < 0) return false;
    const VersionRecord& last_live = old.versions[old.last_live];
    const int64_t died = old.Died();
    const int64_t to = (died == 0 ? last_live.date : died) + options_.moved_within;
    auto within = [&](const VersionRecord& v) {
      return v.date > last_live.date && v.date <= to && v.sweep != last_live.sweep;
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
    StatusOr<UrlId> target = LookupUrl(ops_, redirect.redirect_target);
    if (!target.ok()) {
      if (target.status().code() == StatusCode::kNotFound) return OkStatus();  // nowhere known
      return target.status();
    }
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
    StatusOr<std::shared_ptr<const WriteBuffer>> buffer = impl_.BufferFor(ops_);
    if (!buffer.ok()) return buffer.status();
    StoreOptions search = impl_.options_;
    search.max_candidates = static_cast<uint32_t>(std::max<size_t>(1, options_.max_scored));
    std::vector<DocId> docs;
    bool truncated = false;
    SHINGLED_RETURN_IF_ERROR(
        FindQueryCandidates(ops_, search, **buffer, sketch, &docs, &truncated));
    if (truncated) Truncate("max_scored");
    StatusOr<ClusterId> root = FindCluster(ops_, old_doc);
    if (!root.ok()) return root.status();
    StatusOr<std::vector<DocId>> members = ClusterMembers(ops_, *root);
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
    // Scored; per URL that ever showed one of them, its best match.
    const double bar = std::min(options_.min_resemblance, options_.near_copy_resemblance);
    std::map<UrlId, Match> best;
    Cursor doc_urls;
    if (int rc = doc_urls.Open(ops_.txn(), ops_.dbis().doc_urls); rc != 0) {
      return ops_.Fail(rc, "doc_urls cursor");
    }
    dedup::Sketch other;
    std::vector<uint64_t> urls;
    for (DocId doc : docs) {
      SHINGLED_RETURN_IF_ERROR(SketchOfDoc(doc, &other));
      if (other.empty()) continue;
      Match m;
      m.doc = doc;
      m.resemblance = doc == old_doc ? 1.0 : dedup::ResemblanceFromMinhashes(sketch, other);
      m.containment = doc == old_doc
                          ? 1.0
                          : dedup::ContainmentsFromModSample(sketch.sample, other.sample).a_in_b;
      if (m.resemblance < bar && m.containment < options_.min_containment) continue;
      urls.clear();
      size_t count = 0;
      if (int rc =
              ReadPostings(doc_urls.get(), Key64(doc).view(), options_.max_urls, &urls, &count);
          rc != 0) {
        return ops_.Fail(rc, "doc_urls");
      }
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
      const bool qualifies = s.born_when_died ? (m.resemblance >= options_.min_resemblance ||
                                                 m.containment >= options_.min_containment)
                                              : m.resemblance >= options_.near_copy_resemblance;
      if (!qualifies) continue;
      s.evidence = SuccessorEvidence::kContent;
      s.resemblance = m.resemblance;
      s.containment = m.containment;
      s.matched_doc = m.doc;
      for (const VersionRecord& v : facts->versions) {
        if (v.doc == m.doc) s.matched_date = v.date;
      }
      std::string why;
      if (m.doc == old_doc) {
        why = "same content";
      } else if (m.resemblance >= options_.min_resemblance) {
        why = "near copy, resemblance " + Fixed2(m.resemblance);
      } else {
        why = "holds the old content, containment " + Fixed2(m.containment);
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

  TxnOps& ops_;
  const StoreImpl& impl_;
  const LostOptions& options_;
  std::unordered_map<UrlId, UrlFacts> facts_;
  std::vector<UrlId> path_;  // the URL asked, then each URL followed on the way here
  std::string truncated_by_;
};

}  // namespace

StatusOr<LostAndFound> FindSuccessors(TxnOps& ops, const StoreImpl& impl, UrlId url,
                                      const LostOptions& options) {
  SuccessorFinder finder(ops, impl, options);
  return finder.Find(url);
}

}  // namespace internal

StatusOr<LostAndFound> LmdbStore::Lost(std::string_view url, const LostOptions& options) const {
  if (!(options.min_resemblance > 0 && options.min_resemblance <= 1) ||
      !(options.min_containment > 0 && options.min_containment <= 1) ||
      !(options.near_copy_resemblance > 0 && options.near_copy_resemblance <= 1) ||
      options.moved_within < 0 || options.max_scored == 0 || options.max_urls == 0 ||
      options.max_depth < 0) {
    return InvalidArgumentError("lost and found: an option is out of its range (store/types.h)");
  }
  StatusOr<internal::ReadTxn> txn = impl_->BeginRead();
  if (!txn.ok()) return txn.status();
  internal::TxnOps ops(txn->txn.get(), impl_->dbis_);
  StatusOr<UrlId> id = internal::LookupUrl(ops, url);
  if (!id.ok()) {
    if (id.status().code() == StatusCode::kNotFound) {
      return NotFoundError("URL never stored: " + std::string(url));
    }
    return id.status();
  }
  return internal::FindSuccessors(ops, *impl_, *id, options);
}

}  // namespace shingled::store
