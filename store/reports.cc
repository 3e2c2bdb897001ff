// Store: the change reports (docs/REPORTS.md). Read-only walks over `versions`, in read
// transactions of a few thousand URLs each.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <unordered_map>

#include "dedup/estimate.h"
#include "store/internal/codec.h"
#include "store/internal/store_impl.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

namespace {

using internal::Cursor;
using internal::DocumentRecord;
using internal::Key64;
using internal::TxnOps;
using internal::Val;
using internal::VersionRecord;
using internal::View;

constexpr std::array<std::string_view, kChangeKinds> kKindNames = {
    "unchanged", "changed", "moved", "died", "not_seen", "born", "moved_in", "not_live"};
constexpr std::array<std::string_view, kResemblanceBands> kBandNames = {"0.95-1", "0.8-0.95",
                                                                        "0.5-0.8", "0-0.5"};

// URLs per read transaction of a walk: long enough to amortize opening one (~1 us), short
// enough that a map growth waits a few milliseconds at most.
constexpr size_t kUrlsPerTxn = 2048;

// The similarity query that looks for a dead URL's content: results that reach 0.5 in
// resemblance or either containment, the first 50 (the new home must be among them).
constexpr double kMoveThreshold = 0.5;
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

// Calls `in_txn(ops, url id, versions)` for each URL with versions, in id order from the one
// after `after`, its versions oldest first; kUrlsPerTxn URLs per read transaction, then
// `between()` with no transaction open (the place for work that opens its own). `in_txn`
// answers false to end the walk. Counts each URL in `progress`.
using InTxn = std::function<StatusOr<bool>(TxnOps&, UrlId, const std::vector<VersionRecord>&)>;
Status Walk(const internal::StoreImpl& impl, UrlId after, const ReportProgress& progress,
            const InTxn& in_txn, const std::function<Status()>& between) {
  UrlId next = after + 1;
  bool done = after == UINT64_MAX;
  std::vector<VersionRecord> versions;
  while (!done) {
    {
      StatusOr<internal::ReadTxn> txn = impl.BeginRead();
      if (!txn.ok()) return txn.status();
      TxnOps ops(txn->txn.get(), impl.dbis_);
      Cursor c;
      if (int rc = c.Open(ops.txn(), ops.dbis().versions); rc != 0) {
        return ops.Fail(rc, "versions cursor");
      }
      const std::string start = internal::VersionKey(next, 0);
      MDB_val k = Val(start), v;
      int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
      size_t urls = 0;
      UrlId current = 0;
      versions.clear();
      auto flush = [&]() -> StatusOr<bool> {
        if (current == 0) return true;
        ++urls;
        if (progress.urls_walked != nullptr) progress.urls_walked->fetch_add(1);
        return in_txn(ops, current, versions);
      };
      while (true) {
        if (rc == MDB_NOTFOUND) {
          StatusOr<bool> go_on = flush();
          if (!go_on.ok()) return go_on.status();
          done = true;
          break;
        }
        if (rc != 0) return ops.Fail(rc, "versions");
        UrlId url = 0;
        uint32_t seq = 0;
        SHINGLED_RETURN_IF_ERROR(internal::DecodeVersionKey(View(k), &url, &seq));
        if (url != current) {
          StatusOr<bool> go_on = flush();
          if (!go_on.ok()) return go_on.status();
          if (!*go_on) {
            done = true;
            break;
          }
          if (urls == kUrlsPerTxn) {
            next = url;
            break;
          }
          current = url;
          versions.clear();
        }
        StatusOr<VersionRecord> ver = internal::DecodeVersion(View(v));
        if (!ver.ok()) return ver.status();
        versions.push_back(std::move(*ver));
        rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT);
      }
    }
    if (between) SHINGLED_RETURN_IF_ERROR(between());
  }
  return OkStatus();
}

// The URL's last version in `sweep` (versions oldest first), or null.
const VersionRecord* LastIn(const std::vector<VersionRecord>& versions, SweepId sweep) {
  const VersionRecord* found = nullptr;
  for (const VersionRecord& v : versions) {
    if (v.sweep == sweep) found = &v;
  }
  return found;
}

StatusOr<std::string> UrlName(TxnOps& ops, UrlId url) {
  std::string_view name;
  SHINGLED_RETURN_IF_ERROR(ops.Get(ops.dbis().url_names, Key64(url).view(), &name, "url_names"));
  return std::string(name);
}

StatusOr<SweepInfo> SweepById(TxnOps& ops, SweepId id) {
  std::string_view v;
  SHINGLED_RETURN_IF_ERROR(
      ops.Get(ops.dbis().sweeps, internal::SweepKey(id), &v, "sweep " + std::to_string(id)));
  StatusOr<internal::SweepRecord> rec = internal::DecodeSweep(v);
  if (!rec.ok()) return rec.status();
  return internal::SweepInfoOf(id, *rec);
}

double Resemblance(const DocumentRecord& a, const DocumentRecord& b) {
  return dedup::ResemblanceFromMinhashes(internal::SketchOf(a), internal::SketchOf(b));
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
  PairWalk(const Store& store, const internal::StoreImpl& impl, SweepId from, SweepId to,
           const ReportProgress& progress)
      : store_(store), impl_(impl), from_(from), to_(to), progress_(progress) {}

  // Walk 1: the possible new homes.
  Status FindTargets() {
    return Walk(
        impl_, 0, progress_,
        [&](TxnOps& ops, UrlId url, const std::vector<VersionRecord>& versions) -> StatusOr<bool> {
          const VersionRecord* f = LastIn(versions, from_);
          const VersionRecord* t = LastIn(versions, to_);
          if (t == nullptr || !Live(*t)) return true;
          const bool live_from = f != nullptr && Live(*f);
          if (live_from && f->doc == t->doc) return true;
          StatusOr<std::string> name = UrlName(ops, url);
          if (!name.ok()) return name.status();
          DocId holder = 0;
          StatusOr<DocumentRecord> rec = internal::ReadSketchHolder(ops, t->doc, &holder);
          if (!rec.ok()) return rec.status();
          const auto index = static_cast<uint32_t>(targets_.list.size());
          targets_.list.push_back(Target{url, hosts_.Index(HostOf(*name)), !live_from, false});
          targets_.by_holder.emplace(holder, index);
          targets_.by_url.emplace(url, index);
          return true;
        },
        nullptr);
  }

  // Walk 2 (after FindTargets), over the URLs after `after`: classifies each URL, looks for the
  // content of each that died (unless `search` is false: they are then all kDied), and hands each
  // URL to `visit` in id order (false: stop). With `mark_moves`, a found new home is marked
  // moved_in.
  Status Classify(UrlId after, bool mark_moves, bool search,
                  const std::function<StatusOr<bool>(const Observed&, const ChangeRow*)>& visit) {
    std::vector<Observed> chunk;
    bool stop = false;
    return Walk(
        impl_, after, progress_,
        [&](TxnOps& ops, UrlId url, const std::vector<VersionRecord>& versions) -> StatusOr<bool> {
          if (stop) return false;
          const VersionRecord* f = LastIn(versions, from_);
          const VersionRecord* t = LastIn(versions, to_);
          if (f == nullptr && t == nullptr) return true;
          Observed o;
          o.id = url;
          StatusOr<std::string> name = UrlName(ops, url);
          if (!name.ok()) return name.status();
          o.url = std::move(*name);
          o.host = hosts_.Index(HostOf(o.url));
          const bool live_from = f != nullptr && Live(*f);
          const bool live_to = t != nullptr && Live(*t);
          if (live_from) o.from_doc = f->doc;
          if (live_to) o.to_doc = t->doc;
          if (live_from && live_to) {
            if (f->doc == t->doc) {
              o.kind = ChangeKind::kUnchanged;
              o.resemblance = 1;
            } else {
              o.kind = ChangeKind::kChanged;
              DocId ha = 0, hb = 0;
              StatusOr<DocumentRecord> a = internal::ReadSketchHolder(ops, f->doc, &ha);
              if (!a.ok()) return a.status();
              StatusOr<DocumentRecord> b = internal::ReadSketchHolder(ops, t->doc, &hb);
              if (!b.ok()) return b.status();
              o.resemblance = ha == hb ? 1.0 : Resemblance(*a, *b);
            }
          } else if (live_from && t == nullptr) {
            o.kind = ChangeKind::kNotSeen;
          } else if (live_from) {
            o.kind = ChangeKind::kDied;  // until its content is found elsewhere
            if (t->verdict == Verdict::kRedirect) o.redirect_target = t->redirect_target;
            StatusOr<DocumentRecord> rec = internal::ReadSketchHolder(ops, f->doc, &o.from_holder);
            if (!rec.ok()) return rec.status();
          } else if (live_to) {
            o.kind = ChangeKind::kBorn;  // or moved_in: decided by the caller
          } else {
            o.kind = ChangeKind::kNotLive;
          }
          chunk.push_back(std::move(o));
          return true;
        },
        [&]() -> Status {
          // Outside the chunk's transaction: the searches open their own.
          for (Observed& o : chunk) {
            if (stop) break;
            std::optional<ChangeRow> move;
            if (o.kind == ChangeKind::kDied && search) {
              StatusOr<std::optional<ChangeRow>> found = FindNewHome(o);
              if (!found.ok()) return found.status();
              move = std::move(*found);
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
            if (!*go_on) stop = true;
          }
          chunk.clear();
          return OkStatus();
        });
  }

  const Targets& targets() const { return targets_; }
  const Hosts& hosts() const { return hosts_; }
  uint32_t HostIndex(const std::string& host) { return hosts_.Index(host); }

 private:
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
      StatusOr<internal::ReadTxn> txn = impl_.BeginRead();
      if (!txn.ok()) return txn.status();
      TxnOps ops(txn->txn.get(), impl_.dbis_);
      StatusOr<UrlId> id = internal::LookupUrl(ops, o.redirect_target);
      if (id.ok()) {
        StatusOr<std::optional<VersionRecord>> in_to = LastVersionIn(ops, *id, to_);
        if (!in_to.ok()) return in_to.status();
        if (*in_to && Live(**in_to)) {
          row.new_url = o.redirect_target;
          row.new_doc = (*in_to)->doc;
          row.evidence = "redirect";
          row.same_host = HostOf(row.new_url) == old_host;
          if (row.new_doc == o.from_doc) row.resemblance = 1;
          new_home_id_ = *id;
          return std::optional<ChangeRow>(std::move(row));
        }
      } else if (id.status().code() != StatusCode::kNotFound) {
        return id.status();
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
      row.evidence = "same_content";
      containment = 1;
    } else {
      QueryOptions q;
      q.threshold = kMoveThreshold;
      q.limit = kMoveCandidates;
      StatusOr<std::vector<SimilarDoc>> similar = store_.SimilarToDocument(o.from_holder, q);
      if (!similar.ok()) return similar.status();
      for (const SimilarDoc& s : *similar) {
        if (!pick(s.doc)) continue;
        resemblance = s.resemblance;
        containment = s.containment_of_query;
        row.evidence = s.resemblance >= kMoveThreshold ? "resemblance" : "containment";
        break;
      }
    }
    if (best < 0) return std::optional<ChangeRow>();
    const Target& t = targets_.list[static_cast<size_t>(best)];
    StatusOr<internal::ReadTxn> txn = impl_.BeginRead();
    if (!txn.ok()) return txn.status();
    TxnOps ops(txn->txn.get(), impl_.dbis_);
    StatusOr<std::string> name = UrlName(ops, t.url);
    if (!name.ok()) return name.status();
    StatusOr<std::optional<VersionRecord>> in_to = LastVersionIn(ops, t.url, to_);
    if (!in_to.ok()) return in_to.status();
    row.new_url = std::move(*name);
    row.new_doc = *in_to ? (*in_to)->doc : 0;
    row.resemblance = resemblance;
    row.containment = containment;
    row.same_host = t.host == o.host;
    new_home_id_ = t.url;
    return std::optional<ChangeRow>(std::move(row));
  }

  // The last version of `url` in `sweep`, or nullopt.
  static StatusOr<std::optional<VersionRecord>> LastVersionIn(TxnOps& ops, UrlId url,
                                                              SweepId sweep) {
    Cursor c;
    if (int rc = c.Open(ops.txn(), ops.dbis().versions); rc != 0) {
      return ops.Fail(rc, "versions cursor");
    }
    const std::string start = internal::VersionKey(url, 0);
    MDB_val k = Val(start), v;
    std::optional<VersionRecord> found;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
    while (rc == 0) {
      UrlId id = 0;
      uint32_t seq = 0;
      SHINGLED_RETURN_IF_ERROR(internal::DecodeVersionKey(View(k), &id, &seq));
      if (id != url) break;
      StatusOr<VersionRecord> ver = internal::DecodeVersion(View(v));
      if (!ver.ok()) return ver.status();
      if (ver->sweep == sweep) found = std::move(*ver);
      rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT);
    }
    if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "versions");
    return found;
  }

  const Store& store_;
  const internal::StoreImpl& impl_;
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
Status CheckPair(const internal::StoreImpl& impl, SweepId from, SweepId to, SweepInfo* from_info,
                 SweepInfo* to_info) {
  if (from == to) return InvalidArgumentError("a change report needs two different sweeps");
  StatusOr<internal::ReadTxn> txn = impl.BeginRead();
  if (!txn.ok()) return txn.status();
  TxnOps ops(txn->txn.get(), impl.dbis_);
  StatusOr<SweepInfo> a = SweepById(ops, from);
  if (!a.ok()) return a.status();
  StatusOr<SweepInfo> b = SweepById(ops, to);
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

StatusOr<ChangeReport> LmdbStore::ChangesBetween(SweepId from, SweepId to,
                                                 const ReportProgress& progress) const {
  ChangeReport out;
  SHINGLED_RETURN_IF_ERROR(CheckPair(*impl_, from, to, &out.from, &out.to));
  PairWalk walk(*this, *impl_, from, to, progress);
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

StatusOr<ChangeList> LmdbStore::ListChanges(SweepId from, SweepId to,
                                            const ChangeListOptions& options) const {
  if (options.limit == 0) return InvalidArgumentError("ListChanges: limit must be at least 1");
  SHINGLED_RETURN_IF_ERROR(CheckPair(*impl_, from, to, nullptr, nullptr));
  PairWalk walk(*this, *impl_, from, to, ReportProgress{});
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

Status LmdbStore::StreamChanges(SweepId from, SweepId to, ChangeKind kind,
                                const std::function<Status(const ChangeRow&)>& row,
                                const ReportProgress& progress) const {
  SHINGLED_RETURN_IF_ERROR(CheckPair(*impl_, from, to, nullptr, nullptr));
  PairWalk walk(*this, *impl_, from, to, progress);
  return Rows(&walk, kind, 0, [&](ChangeRow r) -> StatusOr<bool> {
    SHINGLED_RETURN_IF_ERROR(row(r));
    return true;
  });
}

StatusOr<ChangeHistory> LmdbStore::ChangesOverSweeps(const ReportProgress& progress) const {
  StatusOr<std::vector<SweepInfo>> sweeps = Sweeps();
  if (!sweeps.ok()) return sweeps.status();
  std::sort(sweeps->begin(), sweeps->end(), [](const SweepInfo& a, const SweepInfo& b) {
    return a.start != b.start ? a.start < b.start : a.id < b.id;
  });
  ChangeHistory out;
  for (size_t i = 1; i < sweeps->size(); ++i) {
    PairWalk walk(*this, *impl_, (*sweeps)[i - 1].id, (*sweeps)[i].id, progress);
    PairCounts counts;
    SHINGLED_RETURN_IF_ERROR(CountPair(&walk, &counts));
    out.intervals.push_back(ChangeHistory::Interval{(*sweeps)[i - 1], (*sweeps)[i], counts.total});
  }
  out.lifetimes_dead = LifetimeBuckets();
  out.lifetimes_alive = LifetimeBuckets();
  out.changes_per_url = ChangeBuckets();
  constexpr int64_t kDay = 86400;
  SHINGLED_RETURN_IF_ERROR(Walk(
      *impl_, 0, progress,
      [&](TxnOps&, UrlId, const std::vector<VersionRecord>& versions) -> StatusOr<bool> {
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
          return true;
        }
        CountInto(&out.changes_per_url, changes);
        const int64_t end = ended ? end_date : last_live;
        const auto days = static_cast<uint64_t>(std::max<int64_t>(0, end - first_live) / kDay);
        CountInto(ended ? &out.lifetimes_dead : &out.lifetimes_alive, days);
        return true;
      },
      nullptr));
  return out;
}

}  // namespace shingled::store
