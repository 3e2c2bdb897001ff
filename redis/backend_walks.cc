// The walks of the Redis Cluster backend (docs/REDIS.md, "The walks"): KnownUrls, CloseSweep and
// ReopenSweep. The backend keeps no ordered index of URLs; URL ids come from a shared counter in
// blocks (`next:url`), so every walk goes through the ids from 1 (or a cursor) up to the
// counter, a block of ids per pipelined round, skipping the ids without a URL (the rest of a
// block a daemon reserved and never used).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <ctime>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/iso_time.h"
#include "redis/backend_store.h"
#include "store/internal/codec.h"
#include "store/internal/sweeps.h"

namespace shingled::redis {

using store::SweepId;
using store::UrlId;
using store::Verdict;
using store::internal::SweepRecord;
using store::internal::VersionRecord;

namespace {

// URL ids per pipelined round (a command or two per id: a few hundred per round trip).
constexpr uint64_t kWalkBlock = 256;
// A URL whose versions change under the close (another daemon appending) is read and decided
// again, this many times at most, before the close gives up (Unavailable: run it again).
constexpr int kAppendAttempts = 5;

bool InScope(std::string_view url, const std::vector<std::string>& scope) {
  return std::any_of(scope.begin(), scope.end(),
                     [&](const std::string& p) { return url.starts_with(p); });
}

// A gone version its close wrote: verdict gone, status 0, in the sweep.
bool WrittenByClose(const VersionRecord& v, SweepId id) {
  return v.sweep == id && v.verdict == Verdict::kGone && v.http_status == 0;
}

enum class GoneDecision { kKeep, kGone, kGoneAlready };

}  // namespace

// --- the URL walk that the walks, the listings and the reports share ---

StatusOr<UrlId> RedisClusterStore::LastUrlId() const {
  auto counter = client_->Run(Cmd({"GET", walks::kUrlCounter}));
  if (!counter.ok()) return counter.status();
  uint64_t last_id = 0;
  if (!counter->is_nil() && !ParseU64(counter->str, &last_id)) {
    return DataLossError("redis: next:url holds \"" + counter->str + "\", not an id");
  }
  return UrlId{last_id};
}

Status RedisClusterStore::WalkUrls(UrlId after, const UrlVisitor& visit,
                                   std::atomic<uint64_t>* walked) const {
  uint64_t last_id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    StatusOr<UrlId> last = LastUrlId();
    if (!last.ok()) return last.status();
    last_id = *last;
  }
  std::vector<VersionRecord> versions;
  for (uint64_t first = after + 1; first <= last_id && after != UINT64_MAX;) {
    const uint64_t n = std::min(kWalkBlock, last_id - first + 1);
    std::vector<Command> cmds;
    for (uint64_t u = first; u < first + n; ++u) {
      cmds.push_back(Cmd({"HGET", walks::UrlNameKeyOf(u), Dec(u)}));
      cmds.push_back(walks::ReadVersionsOf(u));
    }
    StatusOr<std::vector<Reply>> r = [&] {
      std::lock_guard<std::mutex> lock(mu_);
      return client_->Pipeline(cmds);
    }();
    if (!r.ok()) return r.status();
    for (uint64_t k = 0; k < n; ++k) {
      const Reply& name = (*r)[2 * k];
      if (name.is_nil()) continue;  // an id reserved and never used
      versions.clear();
      StatusOr<std::vector<std::string>> entries = walks::SplitVersionsOf((*r)[2 * k + 1]);
      if (!entries.ok()) return entries.status();
      for (const std::string& e : *entries) {
        StatusOr<VersionRecord> v = DecodeVersionEntry(e);
        if (!v.ok()) return v.status();
        versions.push_back(std::move(*v));
      }
      if (walked != nullptr) walked->fetch_add(1);
      StatusOr<bool> go_on = visit(first + k, name.str, versions);
      if (!go_on.ok()) return go_on.status();
      if (!*go_on) return OkStatus();
    }
    first += n;
  }
  return OkStatus();
}

// --- KnownUrls ---

StatusOr<UrlId> RedisClusterStore::KnownUrls(
    UrlId after, size_t max_urls, const std::function<void(std::string_view url)>& visit) const {
  if (max_urls == 0) return InvalidArgumentError("KnownUrls: max_urls must be at least 1");
  std::lock_guard<std::mutex> lock(mu_);
  StatusOr<UrlId> last_url = LastUrlId();
  if (!last_url.ok()) return last_url.status();
  const uint64_t last_id = *last_url;
  size_t looked_at = 0;
  UrlId last = 0;
  for (uint64_t first = after + 1; first <= last_id;) {
    // One more URL than the call may still look at: whether there is one past the last decides
    // between its id and 0.
    const size_t left = max_urls - looked_at;
    const uint64_t n = std::min<uint64_t>(
        {kWalkBlock, last_id - first + 1, left >= kWalkBlock ? kWalkBlock : left + 1});
    std::vector<Command> cmds;
    for (uint64_t u = first; u < first + n; ++u) {
      cmds.push_back(Cmd({"HGET", walks::UrlNameKeyOf(u), Dec(u)}));
      cmds.push_back(walks::ReadVersionsOf(u));
    }
    auto r = client_->Pipeline(cmds);
    if (!r.ok()) return r.status();
    for (uint64_t k = 0; k < n; ++k) {
      const Reply& name = (*r)[2 * k];
      if (name.is_nil()) continue;  // an id reserved and never used
      if (looked_at == max_urls) return last;
      last = first + k;
      ++looked_at;
      StatusOr<std::vector<std::string>> entries = walks::SplitVersionsOf((*r)[2 * k + 1]);
      if (!entries.ok()) return entries.status();
      if (entries->empty()) continue;  // its first version not written (yet)
      StatusOr<VersionRecord> v = DecodeVersionEntry(entries->back());
      if (!v.ok()) return v.status();
      if (store::internal::LiveVersion(*v)) visit(name.str);
    }
    first += n;
  }
  return UrlId{0};
}

// --- CloseSweep ---

StatusOr<store::SweepClosing> RedisClusterStore::CloseSweep(SweepId id, int64_t end,
                                                            const CloseSweepOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  GateWriter writer(*gate_);
  SHINGLED_RETURN_IF_ERROR(writer.status());
  rounds_ = 0;
  struct ResetHook {
    int& fail_at_round;
    ~ResetHook() { fail_at_round = 0; }  // a simulated failure concerns one call
  } reset{fail_at_round_};

  auto raw = client_->Run(Cmd({"HGET", walks::kSweeps, Dec(id)}));
  if (!raw.ok()) return raw.status();
  if (raw->is_nil()) return NotFoundError("no sweep with id " + Dec(id));
  StatusOr<SweepRecord> rec = store::internal::DecodeSweep(raw->str);
  if (!rec.ok()) return rec.status();
  // Every sweep's start as Sweeps() gives it (the record's, lowered by a version dated before
  // it), for "this sweep or a later one".
  auto all = client_->Run(Cmd({"HGETALL", walks::kSweeps}));
  if (!all.ok()) return all.status();
  StatusOr<ShardTotals> totals = ReadShards();
  if (!totals.ok()) return totals.status();
  std::map<SweepId, int64_t> starts;
  for (size_t i = 0; i + 1 < all->elements.size(); i += 2) {
    uint64_t other = 0;
    if (!ParseU64(all->elements[i].str, &other))
      return DataLossError("redis: a sweeps field is not an id");
    StatusOr<store::SweepInfo> info =
        SweepInfoOf(static_cast<SweepId>(other), all->elements[i + 1].str, *totals);
    if (!info.ok()) return info.status();
    starts[static_cast<SweepId>(other)] = info->start;
  }
  StatusOr<store::SweepInfo> before = SweepInfoOf(id, raw->str, *totals);
  if (!before.ok()) return before.status();
  if (!before->open) return FailedPreconditionError("sweep " + rec->name + " is already closed");
  if (end < before->start) {
    return InvalidArgumentError(std::string("sweep ")
                                    .append(rec->name)
                                    .append(" cannot end at ")
                                    .append(FormatIsoTime(end))
                                    .append(", before its start ")
                                    .append(FormatIsoTime(before->start)));
  }
  const int64_t start = before->start;

  // FORMAT.md, "Closing a sweep": in scope, the last version live, no version in this sweep nor
  // a later one (a later start, or the same and a larger id), the last version not dated after
  // `end`. A URL that already has a gone version this close writes (a close that died halfway)
  // was recorded gone: counted again, written again never.
  auto decide = [&](const std::vector<VersionRecord>& versions) -> StatusOr<GoneDecision> {
    bool seen = false;
    for (const VersionRecord& v : versions) {
      if (WrittenByClose(v, id)) return GoneDecision::kGoneAlready;
      if (v.sweep == id) {
        seen = true;
        continue;
      }
      auto it = starts.find(v.sweep);
      if (it == starts.end()) {
        return DataLossError("redis: a version names sweep " + Dec(v.sweep) +
                             ", which has no record");
      }
      if (store::internal::LaterSweep(v.sweep, it->second, id, start)) seen = true;
    }
    return store::internal::GoneAtClose(seen, versions.empty() ? nullptr : &versions.back(), end)
               ? GoneDecision::kGone
               : GoneDecision::kKeep;
  };

  store::SweepClosing closing;
  std::set<std::pair<std::string, std::string>> first_gone;  // (URL key, URL): URL order
  auto record_gone = [&](const std::string& url) {
    ++closing.gone;
    if (options.list_limit == 0) return;
    first_gone.emplace(store::internal::UrlKey(url), url);
    if (first_gone.size() > options.list_limit) first_gone.erase(std::prev(first_gone.end()));
  };
  VersionRecord gone_version;
  gone_version.sweep = id;
  gone_version.date = end;
  gone_version.doc = 0;
  gone_version.http_status = 0;
  gone_version.verdict = Verdict::kGone;
  const std::string gone_entry = VersionEntry(gone_version, false);

  StatusOr<UrlId> last_url = LastUrlId();
  if (!last_url.ok()) return last_url.status();
  const uint64_t last_id = *last_url;
  for (uint64_t first = 1; first <= last_id; first += kWalkBlock) {
    const uint64_t n = std::min(kWalkBlock, last_id - first + 1);
    // The names: the scope is a test on the URL's bytes.
    std::vector<Command> cmds;
    for (uint64_t u = first; u < first + n; ++u) {
      cmds.push_back(Cmd({"HGET", walks::UrlNameKeyOf(u), Dec(u)}));
    }
    auto names = Round(cmds);
    if (!names.ok()) return names.status();
    std::vector<std::pair<UrlId, std::string>> urls;
    for (uint64_t k = 0; k < n; ++k) {
      const Reply& name = (*names)[k];
      if (!name.is_nil() && InScope(name.str, rec->scope)) urls.emplace_back(first + k, name.str);
    }
    // The versions of those in scope, decided; a gone version appended, and the versions not
    // counted yet counted, in one step per URL that writes only over the versions as read: a
    // URL another daemon changed meanwhile is read and decided again.
    std::vector<size_t> todo(urls.size());
    for (size_t k = 0; k < urls.size(); ++k) todo[k] = k;
    for (int attempt = 0; !todo.empty(); ++attempt) {
      if (attempt == kAppendAttempts) {
        return UnavailableError("redis: the versions of " + urls[todo.front()].second +
                                " kept changing while sweep " + rec->name +
                                " was closed; close it again (a close run again writes no gone "
                                "version twice)");
      }
      cmds.clear();
      for (size_t k : todo) cmds.push_back(walks::ReadVersionsOf(urls[k].first));
      auto lists = Round(cmds);
      if (!lists.ok()) return lists.status();
      std::vector<size_t> writing;
      cmds.clear();
      for (size_t j = 0; j < todo.size(); ++j) {
        const size_t k = todo[j];
        StatusOr<VersionList> list = walks::ReadVersionListOf((*lists)[j]);
        if (!list.ok()) return list.status();
        std::vector<VersionRecord> versions;
        for (const std::string& e : list->entries) {
          StatusOr<VersionRecord> v = DecodeVersionEntry(e);
          if (!v.ok()) return v.status();
          versions.push_back(std::move(*v));
        }
        StatusOr<GoneDecision> d = decide(versions);
        if (!d.ok()) return d.status();
        if (*d == GoneDecision::kKeep) continue;
        if (*d == GoneDecision::kGone && options.may_be_gone &&
            !options.may_be_gone(urls[k].second)) {
          continue;
        }
        VersionList next = *list;
        if (*d == GoneDecision::kGone) next.entries.push_back(gone_entry);
        StatusOr<std::vector<CountChange>> changes = CountRest(&next, &starts);
        if (!changes.ok()) return changes.status();
        if (options.dry_run || next == *list) {
          record_gone(urls[k].second);
          continue;
        }
        cmds.push_back(ReplaceVersions(urls[k].first, *list, next, *changes));
        writing.push_back(k);
      }
      todo.clear();
      if (writing.empty()) break;
      auto written = Round(cmds);
      if (!written.ok()) return written.status();
      for (size_t j = 0; j < writing.size(); ++j) {
        if ((*written)[j].integer >= 0) {  // 1 written, 0 written already (the same change)
          record_gone(urls[writing[j]].second);
        } else {
          todo.push_back(writing[j]);  // another daemon changed its versions meanwhile
        }
      }
    }
  }
  for (const auto& [key, url] : first_gone) closing.gone_urls.push_back(url);

  if (!options.dry_run) {
    // Closed only now that every URL of the scope has its gone version, counted.
    SweepRecord closed = *rec;
    closed.open = false;
    closed.end = end;
    auto set = Round({Eval(kSetIfScript, {walks::kSweeps},
                           {Dec(id), raw->str, store::internal::EncodeSweep(closed)})});
    if (!set.ok()) return set.status();
    if ((*set)[0].integer != 1) {
      StatusOr<store::SweepInfo> now = ReadSweep(id);
      if (now.ok() && !now->open) {
        return FailedPreconditionError("sweep " + rec->name +
                                       " was closed by another daemon meanwhile");
      }
      return UnavailableError("redis: the record of sweep " + rec->name +
                              " changed while it was closed; close it again");
    }
    SHINGLED_RETURN_IF_ERROR(client_->WaitForReplicas(
        redis_.min_replicas, std::chrono::milliseconds(redis_.wait_timeout_ms)));
    sweeps_.erase(id);  // this daemon's next page of the sweep reads it again (and is refused)
  }
  StatusOr<store::SweepInfo> after = ReadSweep(id);
  if (!after.ok()) return after.status();
  closing.sweep = std::move(*after);
  return closing;
}

// --- ReopenSweep ---

StatusOr<store::SweepReopening> RedisClusterStore::ReopenSweep(SweepId id) {
  std::lock_guard<std::mutex> lock(mu_);
  GateWriter writer(*gate_);
  SHINGLED_RETURN_IF_ERROR(writer.status());
  rounds_ = 0;
  struct ResetHook {
    int& fail_at_round;
    ~ResetHook() { fail_at_round = 0; }
  } reset{fail_at_round_};

  auto raw = client_->Run(Cmd({"HGET", walks::kSweeps, Dec(id)}));
  if (!raw.ok()) return raw.status();
  if (raw->is_nil()) return NotFoundError("no sweep with id " + Dec(id));
  StatusOr<SweepRecord> rec = store::internal::DecodeSweep(raw->str);
  if (!rec.ok()) return rec.status();
  if (rec->open) return FailedPreconditionError("sweep " + rec->name + " is open");
  StatusOr<UrlId> last_url = LastUrlId();
  if (!last_url.ok()) return last_url.status();
  const uint64_t last_id = *last_url;
  // Every URL, not the scope (as LMDB: the scope may have changed since): what the close wrote
  // is removed, and what of it was counted taken out of the counts, in one step per URL that
  // writes only over the versions as read (a URL changed meanwhile is read again).
  store::SweepReopening reopening;
  for (uint64_t first = 1; first <= last_id; first += kWalkBlock) {
    const uint64_t n = std::min(kWalkBlock, last_id - first + 1);
    std::vector<UrlId> todo;
    for (uint64_t u = first; u < first + n; ++u) todo.push_back(u);
    for (int attempt = 0; !todo.empty(); ++attempt) {
      if (attempt == kAppendAttempts) {
        return UnavailableError("redis: the versions of url id " + Dec(todo.front()) +
                                " kept changing while sweep " + rec->name +
                                " was reopened; reopen it again");
      }
      std::vector<Command> cmds;
      for (UrlId u : todo) cmds.push_back(walks::ReadVersionsOf(u));
      auto lists = Round(cmds);
      if (!lists.ok()) return lists.status();
      std::vector<UrlId> writing;
      std::vector<uint64_t> removing;
      cmds.clear();
      for (size_t j = 0; j < todo.size(); ++j) {
        StatusOr<VersionList> list = walks::ReadVersionListOf((*lists)[j]);
        if (!list.ok()) return list.status();
        VersionList next;
        std::vector<CountChange> changes;
        for (size_t i = 0; i < list->entries.size(); ++i) {
          const std::string& e = list->entries[i];
          StatusOr<VersionRecord> v = DecodeVersionEntry(e);
          if (!v.ok()) return v.status();
          if (!WrittenByClose(*v, id)) {
            next.entries.push_back(e);
            if (i < list->counted) ++next.counted;
          } else if (i < list->counted) {
            std::vector<CountChange> less = Uncount(*v, e[0] == 'N');
            changes.insert(changes.end(), less.begin(), less.end());
          }
        }
        if (next.entries.size() == list->entries.size()) continue;
        cmds.push_back(ReplaceVersions(todo[j], *list, next, changes));
        writing.push_back(todo[j]);
        removing.push_back(list->entries.size() - next.entries.size());
      }
      todo.clear();
      if (writing.empty()) break;
      auto written = Round(cmds);
      if (!written.ok()) return written.status();
      for (size_t j = 0; j < writing.size(); ++j) {
        const long long w = (*written)[j].integer;
        if (w == 1) reopening.removed += removing[j];
        if (w < 0) todo.push_back(writing[j]);  // another daemon changed its versions meanwhile
      }
    }
  }
  // Open only once every gone version is removed.
  SweepRecord opened = *rec;
  opened.open = true;
  opened.end = 0;
  auto set = Round({Eval(kSetIfScript, {walks::kSweeps},
                         {Dec(id), raw->str, store::internal::EncodeSweep(opened)})});
  if (!set.ok()) return set.status();
  if ((*set)[0].integer != 1) {
    return UnavailableError("redis: the record of sweep " + rec->name +
                            " changed while it was reopened; reopen it again");
  }
  SHINGLED_RETURN_IF_ERROR(client_->WaitForReplicas(
      redis_.min_replicas, std::chrono::milliseconds(redis_.wait_timeout_ms)));
  sweeps_.erase(id);
  StatusOr<store::SweepInfo> after = ReadSweep(id);
  if (!after.ok()) return after.status();
  reopening.sweep = std::move(*after);
  return reopening;
}

}  // namespace shingled::redis
