// Sweeps' scopes, and which URLs closing a sweep records gone (FORMAT.md, "Closing a sweep").
// Private to store/.
#ifndef SHINGLED_STORE_INTERNAL_SWEEPS_H_
#define SHINGLED_STORE_INTERNAL_SWEEPS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/internal/codec.h"
#include "store/internal/schema.h"
#include "store/types.h"

namespace shingled::store::internal {

// A scope's prefixes are at most this long, so that they compare whole against the part of a
// long URL's `urls` key that holds its bytes (kMaxWholeUrlKey less the hash).
inline constexpr size_t kMaxScopePrefix = 400;
inline constexpr size_t kMaxScopePrefixes = 1000;

// OK for a sweep name both backends take: 1 to kMaxSweepName bytes of UTF-8 text without control
// characters (C0, DEL or C1), as it is shown in JSON answers, logs and on command lines.
// InvalidArgument saying what is wrong (and at which byte) otherwise.
inline constexpr size_t kMaxSweepName = 400;
Status ValidateSweepName(std::string_view name);

// `prefixes` sorted and without duplicates. InvalidArgument naming the first bad one: empty,
// longer than kMaxScopePrefix, without "://" after a scheme, or more than kMaxScopePrefixes.
StatusOr<std::vector<std::string>> ValidateScope(std::vector<std::string> prefixes);

// The scope's prefixes less those inside another (`scope` sorted, as ValidateScope returns it):
// `urls` key ranges that do not overlap, so that no URL is visited twice. The views point into
// `scope`. Also the ranges of Store::ListUrls.
std::vector<std::string_view> DisjointPrefixes(const std::vector<std::string>& scope);

// A URL that closing a sweep records gone: its id, the seq its gone version takes, its bytes.
struct GoneUrl {
  UrlId url = 0;
  uint32_t seq = 0;
  std::string_view name;  // valid during the visit only
};

// Whether sweep `other` (started at `other_start`) is later than sweep `id` (started at `start`):
// it started later, or at the same time with a larger id.
inline bool LaterSweep(SweepId other, int64_t other_start, SweepId id, int64_t start) {
  return other_start > start || (other_start == start && other > id);
}

// Whether closing a sweep at `end` records gone a URL of its scope: `seen`, whether the URL has a
// version in this sweep or a later one (LaterSweep); `last`, its last version (null: none), which
// must show a document and not be dated after `end`.
inline bool GoneAtClose(bool seen, const VersionRecord* last, int64_t end) {
  return !seen && last != nullptr && last->doc != 0 && last->date <= end;
}

// Calls `visit` with each URL that closing sweep `id` (its record `rec`) at `end` records gone,
// in the order of their bytes, and stops at its first error. A URL is gone when it starts with
// one of the scope's prefixes, its last version is live (has a document), it has no version in
// this sweep nor in a later one (one that started later, or at the same time with a larger id),
// its last version is not dated after `end`, and `may_be_gone` (when set) accepts it. Reads only;
// `visit` must not write while the walk goes on (collect, then write).
Status FindGone(TxnOps& ops, SweepId id, const SweepRecord& rec, int64_t end,
                const std::function<bool(std::string_view url)>& may_be_gone,
                const std::function<Status(const GoneUrl&)>& visit);

// Format 7 to 8: rewrites every sweep record with a scope (empty: an old sweep covers nothing
// when it closes) and with its start lowered to its earliest version's date.
Status UpgradeSweepsToFormat8(TxnOps& ops);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_SWEEPS_H_
