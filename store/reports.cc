// Store: the change reports (docs/REPORTS.md), written once over the read interface of
// store/internal/report_reads.h: on LMDB, walks over `versions` in read transactions of a few
// thousand URLs each; on Redis Cluster, walks over the URL ids (redis/backend_reports.cc).
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "base/deadline.h"
#include "dedup/estimate.h"
#include "store/internal/codec.h"
#include "store/internal/moves.h"
#include "store/internal/report_reads.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

namespace {

using internal::VersionRecord;
using internal::WalkedUrl;

constexpr std::array<std::string_view, kChangeKinds> kKindNames = {
    "unchanged", "changed", "moved", "died", "not_seen", "born", "moved_in", "not_live"};
constexpr std::array<std::string_view, kResemblanceBands> kBandNames = {"0.95-1", "0.8-0.95",
                                                                        "0.5-0.8", "0-0.5"};

// The similarity query that looks for a dead URL's content: results that reach the move rule's
// resemblance in resemblance or either containment, the first 50 (the new home must be among
// them). The query only nominates: JudgeContentMove decides.
constexpr double kMoveQueryThreshold =
    std::min(internal::kMoveResemblance, internal::kMoveContainment);
constexpr size_t kMoveCandidates = 50;

bool Live(const VersionRecord& v) { return internal::LiveVersion(v); }

// "host" or "host:port" of an absolute URL, without user info; "" when it has none (file:///).
std::string HostOf(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  std::string_view rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
  return std::string(rest);
}

// The URL's last version in `sweep` (versions oldest first), or null.
const VersionRecord* LastIn(const std::vector<VersionRecord>& versions, SweepId sweep) {
  const VersionRecord* found = nullptr;
  for (const VersionRecord& v : versions) {
    if (v.sweep == sweep) found = &v;
  }
  return found;
}

// A URL live in `to` and not live with the same document in `from`: a possible new home.
struct Target {
  UrlId url = 0;
  uint32_t host = 0;  // index into Hosts
  bool born = false;  // not live in `from` (else: changed)
  bool moved_in = false;
};

// Host names by index, so that the targets and the per-host counters keep 4 bytes per host.
class Hosts {
 public:
  uint32_t Index(const std::string& host) {
    auto [it, added] = index_.try_emplace(host, static_cast<uint32_t>(names_.size()));
    if (added) names_.push_back(host);
    return it->second;
  }
  const std::string& Name(uint32_t index) const { return names_[index]; }
  size_t size() const { return names_.size(); }

 private:
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<std::string> names_;
};

// The possible new homes in `to`, by the document that holds their sketch (a lexically or
// shingle equivalent document shares its representative's, and the similarity query answers
// representatives).
struct Targets {
  std::vector<Target> list;                            // in URL id order
  std::unordered_multimap<DocId, uint32_t> by_holder;  // sketch holder -> index into `list`
  std::unordered_map<UrlId, uint32_t> by_url;          // url id -> index into `list`
};

// What one URL did, as the walk sees it.
struct Observed {
  UrlId id = 0;
  std::string url;
  uint32_t host = 0;
  ChangeKind kind = ChangeKind::kNotLive;
  DocId from_doc = 0, to_doc = 0;
  DocId from_holder = 0;  // when it is a possible mover
  double resemblance = -1;
  std::string redirect_target;  // its last version in `to` redirects there
};

// The two sweeps of a report and what the walks gather.
class PairWalk {
 public:
  PairWalk(const Store& store, const internal::ReportReads& reads, SweepId from, SweepId to,
           const ReportProgress& progress)
      : store_(store), reads_(reads), from_(from), to_(to), progress_(progress) {}

  // Walk 1: the possible new homes.
  Status FindTargets() {
    std::vector<DocId> docs;
    std::vector<internal::HeldSketch> held;
    std::vector<std::pair<const internal::WalkedUrl*, bool>> found;  // (URL, live in `from`)
    return reads_.Walk(
        0,
        [&](UrlId, const std::vector<VersionRecord>& versions) {
          return IsTarget(versions, nullptr);
        },
        [&](const std::vector<internal::WalkedUrl>& block) -> StatusOr<bool> {
          if (Status late = CheckDeadline(); !late.ok()) return late;
          docs.clear();
          found.clear();
          for (const internal::WalkedUrl& u : block) {
            bool live_from = false;
            const VersionRecord* t = IsTarget(u.versions, &live_from);
            if (t == nullptr) continue;
            docs.push_back(t->doc);
            found.emplace_back(&u, live_from);
          }
          SHINGLED_RETURN_IF_ERROR(reads_.Holders(docs, /*sketches=*/false, &held));
          for (size_t i = 0; i < found.size(); ++i) {
            const UrlId url = found[i].first->id;
            const auto index = static_cast<uint32_t>(targets_.list.size());
            targets_.list.push_back(
                Target{url, hosts_.Index(HostOf(found[i].first->name)), !found[i].second, false});
            targets_.by_holder.emplace(held[i].holder, index);
            targets_.by_url.emplace(url, index);
          }
          return true;
        },
        progress_.urls_walked);
  }

  // Walk 2 (after FindTargets), over the URLs after `after`: classifies each URL, looks for the
  // content of each that died (unless `search` is false: they are then all kDied), and hands each
  // URL to `visit` in id order (false: stop). With `mark_moves`, a found new home is marked
  // moved_in. A block of URLs is classified at once (its documents read in one batch), then the
  // searches of its deaths run, which open their own reads.
  Status Classify(UrlId after, bool mark_moves, bool search,
                  const std::function<StatusOr<bool>(const Observed&, const ChangeRow*)>& visit) {
    std::vector<Observed> chunk;
    std::vector<DocId> docs;
    std::vector<internal::HeldSketch> held;
    // Per observed URL of the chunk: the index in `docs` of its from (and to) document, or -1.
    std::vector<std::pair<int64_t, int64_t>> reads;
    return reads_.Walk(
        after,
        [&](UrlId, const std::vector<VersionRecord>& versions) {
          return LastIn(versions, from_) != nullptr || LastIn(versions, to_) != nullptr;
        },
        [&](const std::vector<internal::WalkedUrl>& block) -> StatusOr<bool> {
          if (Status late = CheckDeadline(); !late.ok()) return late;
          chunk.clear();
          docs.clear();
          reads.clear();
          for (const internal::WalkedUrl& u : block) {
            const VersionRecord* f = LastIn(u.versions, from_);
            const VersionRecord* t = LastIn(u.versions, to_);
            if (f == nullptr && t == nullptr) continue;
            Observed o;
            o.id = u.id;
            o.url = u.name;
            o.host = hosts_.Index(HostOf(o.url));
            const bool live_from = f != nullptr && Live(*f);
            const bool live_to = t != nullptr && Live(*t);
            if (live_from) o.from_doc = f->doc;
            if (live_to) o.to_doc = t->doc;
            std::pair<int64_t, int64_t> r{-1, -1};
            if (live_from && live_to) {
              if (f->doc == t->doc) {
                o.kind = ChangeKind::kUnchanged;
                o.resemblance = 1;
              } else {
                o.kind = ChangeKind::kChanged;
                r.first = static_cast<int64_t>(docs.size());
                docs.push_back(f->doc);
                r.second = static_cast<int64_t>(docs.size());
                docs.push_back(t->doc);
              }
            } else if (live_from && t == nullptr) {
              o.kind = ChangeKind::kNotSeen;
            } else if (live_from) {
              o.kind = ChangeKind::kDied;  // until its content is found elsewhere
              if (t->verdict == Verdict::kRedirect) o.redirect_target = t->redirect_target;
              r.first = static_cast<int64_t>(docs.size());
              docs.push_back(f->doc);
            } else if (live_to) {
              o.kind = ChangeKind::kBorn;  // or moved_in: decided by the caller
            } else {
              o.kind = ChangeKind::kNotLive;
            }
            chunk.push_back(std::move(o));
            reads.push_back(r);
          }
          // The sketches only when a changed URL needs a resemblance.
          const bool sketches =
              std::any_of(reads.begin(), reads.end(), [](const auto& r) { return r.second >= 0; });
          SHINGLED_RETURN_IF_ERROR(reads_.Holders(docs, sketches, &held));
          for (size_t i = 0; i < chunk.size(); ++i) {
            Observed& o = chunk[i];
            const auto [f, t] = reads[i];
            if (o.kind == ChangeKind::kChanged) {
              const internal::HeldSketch& a = held[static_cast<size_t>(f)];
              const internal::HeldSketch& b = held[static_cast<size_t>(t)];
              o.resemblance = a.holder == b.holder ? 1.0 : reads_.Compare(a.sketch, b.sketch).first;
            } else if (o.kind == ChangeKind::kDied) {
              o.from_holder = held[static_cast<size_t>(f)].holder;
            }
          }
          for (Observed& o : chunk) {
            std::optional<ChangeRow> move;
            if (o.kind == ChangeKind::kDied && search) {
              StatusOr<std::optional<ChangeRow>> moved = FindNewHome(o);
              if (!moved.ok()) return moved.status();
              move = std::move(*moved);
              if (move) {
                o.kind = ChangeKind::kMoved;
                if (mark_moves) {
                  if (auto it = targets_.by_url.find(new_home_id_); it != targets_.by_url.end()) {
                    targets_.list[it->second].moved_in = true;
                  }
                }
              }
            }
            StatusOr<bool> go_on = visit(o, move ? &*move : nullptr);
            if (!go_on.ok()) return go_on.status();
            if (!*go_on) return false;
          }
          return true;
        },
        progress_.urls_walked);
  }

  const Targets& targets() const { return targets_; }
  const Hosts& hosts() const { return hosts_; }
  uint32_t HostIndex(const std::string& host) { return hosts_.Index(host); }

 private:
  // The URL's last version in `to` when it is a possible new home (live in `to` and not live
  // with the same document in `from`), else null; `*live_from` (may be null): live in `from`.
  const VersionRecord* IsTarget(const std::vector<VersionRecord>& versions, bool* live_from) const {
    const VersionRecord* f = LastIn(versions, from_);
    const VersionRecord* t = LastIn(versions, to_);
    if (t == nullptr || !Live(*t)) return nullptr;
    const bool lf = f != nullptr && Live(*f);
    if (lf && f->doc == t->doc) return nullptr;
    if (live_from != nullptr) *live_from = lf;
    return t;
  }

  // Where the content of `o` (live in `from`; dead, gone or redirecting in `to`) went: the
  // report's own "lost and found" step. A redirect in `to` to a URL live in `to` first; then
  // the same content (its sketch holder) live at a URL born or changed in `to`; then the most
  // resembling (then containing) document live at such a URL, from a similarity query of the
  // `from` document. Among URLs with the same document, one on the old URL's host first, then
  // the smallest id. Sets new_home_id_ to the new URL's id.
  StatusOr<std::optional<ChangeRow>> FindNewHome(const Observed& o) {
    ChangeRow row;
    row.kind = ChangeKind::kMoved;
    row.url_id = o.id;
    row.url = o.url;
    row.from_doc = o.from_doc;
    const std::string old_host = hosts_.Name(o.host);
    if (!o.redirect_target.empty()) {
      StatusOr<std::optional<UrlId>> id = reads_.FindUrl(o.redirect_target);
      if (!id.ok()) return id.status();
      if (*id) {
        // NotFound: the URL has no version yet (a backend shared with other writers).
        StatusOr<internal::WalkedUrl> target = reads_.ReadUrl(**id);
        if (!target.ok() && target.status().code() != StatusCode::kNotFound) {
          return target.status();
        }
        const VersionRecord* in_to = target.ok() ? LastIn(target->versions, to_) : nullptr;
        if (in_to != nullptr && Live(*in_to)) {
          row.new_url = o.redirect_target;
          row.new_doc = in_to->doc;
          row.evidence = "redirect";
          row.same_host = HostOf(row.new_url) == old_host;
          if (row.new_doc == o.from_doc) row.resemblance = 1;
          new_home_id_ = **id;
          return std::optional<ChangeRow>(std::move(row));
        }
      }
    }
    // The same content, or a near copy, at a new home. best: an index into targets_.list, or -1.
    int64_t best = -1;
    auto pick = [&](DocId holder) {
      best = -1;
      auto [lo, hi] = targets_.by_holder.equal_range(holder);
      for (auto it = lo; it != hi; ++it) {
        const Target& t = targets_.list[it->second];
        if (t.url == o.id) continue;
        if (best < 0) {
          best = it->second;
          continue;
        }
        const Target& b = targets_.list[static_cast<size_t>(best)];
        const bool t_same = t.host == o.host, b_same = b.host == o.host;
        if (t_same != b_same ? t_same : t.url < b.url) best = it->second;
      }
      return best >= 0;
    };
    double containment = -1;
    double resemblance = 1;
    if (pick(o.from_holder)) {
      row.evidence = internal::MoveEvidenceName(internal::MoveEvidence::kSameContent);
      containment = 1;
    } else {
      QueryOptions q;
      q.threshold = kMoveQueryThreshold;
      q.limit = kMoveCandidates;
      StatusOr<std::vector<SimilarDoc>> similar = store_.SimilarToDocument(o.from_holder, q);
      if (!similar.ok()) return similar.status();
      for (const SimilarDoc& s : *similar) {
        internal::ContentMatch match;
        match.resemblance = s.resemblance;
        match.common = s.common;
        const internal::MoveEvidence evidence = internal::JudgeContentMove(match);
        if (evidence == internal::MoveEvidence::kNone || !pick(s.doc)) continue;
        resemblance = s.resemblance;
        // Of the old document in the new: from the chunks when they are known (the MOD
        // samples' estimate of a short page overshoots), else the query's estimate.
        containment = s.common.known ? s.common.share_a : s.containment_of_query;
        row.evidence = internal::MoveEvidenceName(evidence);
        break;
      }
    }
    if (best < 0) return std::optional<ChangeRow>();
    const Target& t = targets_.list[static_cast<size_t>(best)];
    StatusOr<internal::WalkedUrl> home = reads_.ReadUrl(t.url);
    if (!home.ok()) return home.status();
    const VersionRecord* in_to = LastIn(home->versions, to_);
    row.new_url = std::move(home->name);
    row.new_doc = in_to != nullptr ? in_to->doc : 0;
    row.resemblance = resemblance;
    row.containment = containment;
    row.same_host = t.host == o.host;
    new_home_id_ = t.url;
    return std::optional<ChangeRow>(std::move(row));
  }

  const Store& store_;
  const internal::ReportReads& reads_;
  const SweepId from_, to_;
  const ReportProgress progress_;
  Targets targets_;
  Hosts hosts_;
  UrlId new_home_id_ = 0;  // set by FindNewHome
};

// The counts of a pair, in total and per host (by host index).
struct PairCounts {
  ChangeCounts total;
  std::vector<ChangeCounts> by_host;
  ChangeCounts& Host(uint32_t index) {
    if (by_host.size() <= index) by_host.resize(index + 1);
    return by_host[index];
  }
};

void CountRow(ChangeCounts* c, const Observed& o, const ChangeRow* move) {
  c->Add(o.kind);
  if (o.kind == ChangeKind::kChanged) ++c->bands[ResemblanceBand(o.resemblance)];
  if (move != nullptr) {
    ++(move->same_host ? c->moved_same_host : c->moved_other_host);
    if (move->evidence == "redirect") ++c->moved_by_redirect;
  }
}

// Validates the pair; NotFound naming an unknown sweep.
Status CheckPair(const internal::ReportReads& reads, SweepId from, SweepId to, SweepInfo* from_info,
                 SweepInfo* to_info) {
  if (from == to) return InvalidArgumentError("a change report needs two different sweeps");
  StatusOr<SweepInfo> a = reads.Sweep(from);
  if (!a.ok()) return a.status();
  StatusOr<SweepInfo> b = reads.Sweep(to);
  if (!b.ok()) return b.status();
  if (from_info != nullptr) *from_info = std::move(*a);
  if (to_info != nullptr) *to_info = std::move(*b);
  return OkStatus();
}

// Walks 1 and 2 in full: the counts, and the targets marked.
Status CountPair(PairWalk* walk, PairCounts* counts) {
  SHINGLED_RETURN_IF_ERROR(walk->FindTargets());
  SHINGLED_RETURN_IF_ERROR(walk->Classify(0, /*mark_moves=*/true, /*search=*/true,
                                          [&](const Observed& o, const ChangeRow* move) {
                                            CountRow(&counts->total, o, move);
                                            CountRow(&counts->Host(o.host), o, move);
                                            return StatusOr<bool>(true);
                                          }));
  // A born URL that is a moved URL's new home is counted moved_in instead.
  for (const Target& t : walk->targets().list) {
    if (!t.born || !t.moved_in) continue;
    for (ChangeCounts* c : {&counts->total, &counts->Host(t.host)}) {
      --c->born;
      ++c->moved_in;
    }
  }
  return OkStatus();
}

ChangeRow RowOf(const Observed& o) {
  ChangeRow row;
  row.kind = o.kind;
  row.url_id = o.id;
  row.url = o.url;
  row.from_doc = o.from_doc;
  row.to_doc = o.to_doc;
  if (o.kind == ChangeKind::kChanged || o.kind == ChangeKind::kUnchanged) {
    row.resemblance = o.resemblance;
  }
  return row;
}

// The rows of `kind` after `after`, to `emit` (false: stop).
Status Rows(PairWalk* walk, ChangeKind kind, UrlId after,
            const std::function<StatusOr<bool>(ChangeRow)>& emit) {
  SHINGLED_RETURN_IF_ERROR(walk->FindTargets());
  const bool homes = kind == ChangeKind::kBorn || kind == ChangeKind::kMovedIn;
  if (homes) {
    // Which born URLs are new homes needs every death looked at.
    SHINGLED_RETURN_IF_ERROR(
        walk->Classify(0, /*mark_moves=*/true, /*search=*/true,
                       [](const Observed&, const ChangeRow*) { return StatusOr<bool>(true); }));
  }
  // Only the moved and died rows need the searches for new homes.
  const bool search = kind == ChangeKind::kMoved || kind == ChangeKind::kDied;
  return walk->Classify(
      after, /*mark_moves=*/false, search,
      [&](const Observed& o, const ChangeRow* move) -> StatusOr<bool> {
        ChangeKind k = o.kind;
        if (k == ChangeKind::kBorn) {
          auto it = walk->targets().by_url.find(o.id);
          if (it != walk->targets().by_url.end() && walk->targets().list[it->second].moved_in) {
            k = ChangeKind::kMovedIn;
          }
        }
        if (k != kind) return true;
        ChangeRow row = move != nullptr ? *move : RowOf(o);
        row.kind = k;
        row.to_doc = o.to_doc;
        return emit(std::move(row));
      });
}

// Day buckets of lifetimes.
std::vector<Bucket> LifetimeBuckets() {
  return {{"under 1 day", 0, 1, 0},  {"1-7 days", 1, 7, 0},       {"7-30 days", 7, 30, 0},
          {"30-90 days", 30, 90, 0}, {"90-365 days", 90, 365, 0}, {"365 days or more", 365, 0, 0}};
}

std::vector<Bucket> ChangeBuckets() {
  return {{"0", 0, 1, 0},   {"1", 1, 2, 0},     {"2", 2, 3, 0},
          {"3-5", 3, 6, 0}, {"6-10", 6, 11, 0}, {"11 or more", 11, 0, 0}};
}

void CountInto(std::vector<Bucket>* buckets, uint64_t value) {
  for (Bucket& b : *buckets) {
    if (value >= b.lower && (b.upper == 0 || value < b.upper)) {
      ++b.count;
      return;
    }
  }
}

}  // namespace

std::string_view ChangeKindName(ChangeKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

std::optional<ChangeKind> ChangeKindFromName(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == name) return static_cast<ChangeKind>(i);
  }
  return std::nullopt;
}

std::string_view ResemblanceBandName(int band) { return kBandNames[static_cast<size_t>(band)]; }

int ResemblanceBand(double resemblance) {
  if (resemblance >= 0.95) return 0;
  if (resemblance >= 0.8) return 1;
  if (resemblance >= 0.5) return 2;
  return 3;
}

uint64_t ChangeCounts::Of(ChangeKind kind) const {
  switch (kind) {
    case ChangeKind::kUnchanged:
      return unchanged;
    case ChangeKind::kChanged:
      return changed;
    case ChangeKind::kMoved:
      return moved;
    case ChangeKind::kDied:
      return died;
    case ChangeKind::kNotSeen:
      return not_seen;
    case ChangeKind::kBorn:
      return born;
    case ChangeKind::kMovedIn:
      return moved_in;
    case ChangeKind::kNotLive:
      return not_live;
  }
  return 0;
}

void ChangeCounts::Add(ChangeKind kind, uint64_t n) {
  urls += n;
  switch (kind) {
    case ChangeKind::kUnchanged:
      unchanged += n;
      break;
    case ChangeKind::kChanged:
      changed += n;
      break;
    case ChangeKind::kMoved:
      moved += n;
      break;
    case ChangeKind::kDied:
      died += n;
      break;
    case ChangeKind::kNotSeen:
      not_seen += n;
      break;
    case ChangeKind::kBorn:
      born += n;
      break;
    case ChangeKind::kMovedIn:
      moved_in += n;
      break;
    case ChangeKind::kNotLive:
      not_live += n;
      break;
  }
}

namespace internal {

StatusOr<ChangeReport> ReportChangesBetween(const Store& store, const ReportReads& reads,
                                            SweepId from, SweepId to,
                                            const ReportProgress& progress) {
  ChangeReport out;
  SHINGLED_RETURN_IF_ERROR(CheckPair(reads, from, to, &out.from, &out.to));
  PairWalk walk(store, reads, from, to, progress);
  PairCounts counts;
  SHINGLED_RETURN_IF_ERROR(CountPair(&walk, &counts));
  out.total = counts.total;
  std::map<std::string, ChangeCounts> by_name;
  for (size_t i = 0; i < counts.by_host.size(); ++i) {
    if (counts.by_host[i].urls == 0) continue;
    by_name[walk.hosts().Name(static_cast<uint32_t>(i))] = counts.by_host[i];
  }
  for (auto& [host, c] : by_name) out.hosts.push_back(HostChanges{host, c});
  return out;
}

StatusOr<ChangeList> ReportListChanges(const Store& store, const ReportReads& reads, SweepId from,
                                       SweepId to, const ChangeListOptions& options) {
  if (options.limit == 0) return InvalidArgumentError("ListChanges: limit must be at least 1");
  SHINGLED_RETURN_IF_ERROR(CheckPair(reads, from, to, nullptr, nullptr));
  PairWalk walk(store, reads, from, to, ReportProgress{});
  ChangeList out;
  bool more = false;
  SHINGLED_RETURN_IF_ERROR(
      Rows(&walk, options.kind, options.after, [&](ChangeRow row) -> StatusOr<bool> {
        if (out.rows.size() == options.limit) {
          more = true;
          return false;
        }
        out.rows.push_back(std::move(row));
        return true;
      }));
  if (more) out.next_after = out.rows.back().url_id;
  return out;
}

Status ReportStreamChanges(const Store& store, const ReportReads& reads, SweepId from, SweepId to,
                           ChangeKind kind, const std::function<Status(const ChangeRow&)>& row,
                           const ReportProgress& progress) {
  SHINGLED_RETURN_IF_ERROR(CheckPair(reads, from, to, nullptr, nullptr));
  PairWalk walk(store, reads, from, to, progress);
  return Rows(&walk, kind, 0, [&](ChangeRow r) -> StatusOr<bool> {
    SHINGLED_RETURN_IF_ERROR(row(r));
    return true;
  });
}

StatusOr<ChangeHistory> ReportChangesOverSweeps(const Store& store, const ReportReads& reads,
                                                const ReportProgress& progress) {
  StatusOr<std::vector<SweepInfo>> sweeps = store.Sweeps();
  if (!sweeps.ok()) return sweeps.status();
  std::sort(sweeps->begin(), sweeps->end(), [](const SweepInfo& a, const SweepInfo& b) {
    return a.start != b.start ? a.start < b.start : a.id < b.id;
  });
  ChangeHistory out;
  for (size_t i = 1; i < sweeps->size(); ++i) {
    PairWalk walk(store, reads, (*sweeps)[i - 1].id, (*sweeps)[i].id, progress);
    PairCounts counts;
    SHINGLED_RETURN_IF_ERROR(CountPair(&walk, &counts));
    out.intervals.push_back(ChangeHistory::Interval{(*sweeps)[i - 1], (*sweeps)[i], counts.total});
  }
  out.lifetimes_dead = LifetimeBuckets();
  out.lifetimes_alive = LifetimeBuckets();
  out.changes_per_url = ChangeBuckets();
  constexpr int64_t kDay = 86400;
  SHINGLED_RETURN_IF_ERROR(reads.Walk(
      0, nullptr,
      [&](const std::vector<WalkedUrl>& block) -> StatusOr<bool> {
        if (Status late = CheckDeadline(); !late.ok()) return late;
        for (const WalkedUrl& u : block) {
          const std::vector<VersionRecord>& versions = u.versions;
          ++out.urls;
          // Dates; `live` and `ended` say whether first_live/last_live and end_date are set.
          bool live = false, ended = false;
          int64_t first_live = 0, last_live = 0, end_date = 0;
          DocId last_doc = 0;
          uint64_t changes = 0;
          for (const VersionRecord& v : versions) {
            if (v.verdict == Verdict::kFailed) continue;  // an attempt, not a version
            if (Live(v)) {
              if (!live) first_live = v.date;
              live = true;
              if (last_doc != 0 && v.doc != last_doc) ++changes;
              last_doc = v.doc;
              last_live = v.date;
              ended = false;
            } else if (live && !ended) {
              ended = true;
              end_date = v.date;
            }
          }
          if (!live) {
            ++out.never_live;
            continue;
          }
          CountInto(&out.changes_per_url, changes);
          const int64_t end = ended ? end_date : last_live;
          const auto days = static_cast<uint64_t>(std::max<int64_t>(0, end - first_live) / kDay);
          CountInto(ended ? &out.lifetimes_dead : &out.lifetimes_alive, days);
        }
        return true;
      },
      progress.urls_walked));
  return out;
}

}  // namespace internal

StatusOr<ChangeReport> LmdbStore::ChangesBetween(SweepId from, SweepId to,
                                                 const ReportProgress& progress) const {
  StatusOr<std::unique_ptr<internal::ReportReads>> reads = internal::LmdbReportReads(*impl_, false);
  if (!reads.ok()) return reads.status();
  return internal::ReportChangesBetween(*this, **reads, from, to, progress);
}

StatusOr<ChangeList> LmdbStore::ListChanges(SweepId from, SweepId to,
                                            const ChangeListOptions& options) const {
  StatusOr<std::unique_ptr<internal::ReportReads>> reads = internal::LmdbReportReads(*impl_, false);
  if (!reads.ok()) return reads.status();
  return internal::ReportListChanges(*this, **reads, from, to, options);
}

Status LmdbStore::StreamChanges(SweepId from, SweepId to, ChangeKind kind,
                                const std::function<Status(const ChangeRow&)>& row,
                                const ReportProgress& progress) const {
  StatusOr<std::unique_ptr<internal::ReportReads>> reads = internal::LmdbReportReads(*impl_, false);
  if (!reads.ok()) return reads.status();
  return internal::ReportStreamChanges(*this, **reads, from, to, kind, row, progress);
}

StatusOr<ChangeHistory> LmdbStore::ChangesOverSweeps(const ReportProgress& progress) const {
  StatusOr<std::unique_ptr<internal::ReportReads>> reads = internal::LmdbReportReads(*impl_, false);
  if (!reads.ok()) return reads.status();
  return internal::ReportChangesOverSweeps(*this, **reads, progress);
}

}  // namespace shingled::store
