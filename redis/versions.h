// A URL's versions on Redis Cluster (redis/FORMAT.md, "The keys": versions and counts): the
// field that keeps them, how a shard's counts hash counts them, and the one command that changes
// both. The record inside each entry is store/FORMAT.md's version record, read and written here in
// C++ only: the script that writes the field knows neither its layout nor any verdict.
#ifndef SHINGLED_REDIS_VERSIONS_H_
#define SHINGLED_REDIS_VERSIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "redis/cluster_client.h"
#include "store/internal/codec.h"
#include "store/types.h"

namespace shingled::redis {

// The versions of URLs are spread over kShards shards by url id; a shard's counts hash shares the
// slot of its versions, so that a URL's versions and their counts change in one atomic script.
inline constexpr uint64_t kShards = 1024;
std::string ShardKey(uint64_t shard);
// The hash holding the URL's versions (16 URLs of a shard a hash), and the URL's field in it.
std::string VersionsKey(store::UrlId url);
std::string VersionsField(store::UrlId url);
inline std::string ShardKeyOf(store::UrlId url) { return ShardKey(url % kShards); }

// A URL's versions field: a varint, how many of the entries the shard's counts hold (the count
// mark), then each entry oldest first (its index + 1 is the version's seq) as a varint length and
// its bytes: 'N' when the version's page created its document, else 'V', then the version record.
struct VersionList {
  uint64_t counted = 0;
  std::vector<std::string> entries;
  friend bool operator==(const VersionList&, const VersionList&) = default;
};
// "" (an absent field) is an empty one.
StatusOr<VersionList> DecodeVersionList(std::string_view bytes);
// An empty field (no entries, nothing counted) is "": the field is deleted.
std::string EncodeVersionList(const VersionList& field);

// An entry: the flag and the record, and back.
std::string VersionEntry(const store::internal::VersionRecord& v, bool created_doc);
StatusOr<store::internal::VersionRecord> DecodeVersionEntry(std::string_view entry);

// A change to a shard's counts hash: `value` added to the field, or (`least`) the field set to
// `value` when it is absent or greater.
struct CountChange {
  bool least = false;
  std::string field;
  int64_t value = 0;
  friend bool operator==(const CountChange&, const CountChange&) = default;
};

// The counts a shard keeps of a sweep, "<sweep id>.<name>" in its hash: one field per count of
// the sweep record (SweepRecord::Count decides which a version adds to), and "<id>.start", the
// earliest date of its versions.
struct SweepCountField {
  std::string_view name;
  uint64_t store::internal::SweepRecord::*count;
};
inline constexpr SweepCountField kSweepCountFields[] = {
    {"pages", &store::internal::SweepRecord::pages},
    {"new_docs", &store::internal::SweepRecord::new_docs},
    {"unchanged", &store::internal::SweepRecord::unchanged},
    {"duplicate", &store::internal::SweepRecord::duplicate},
    {"near_duplicate", &store::internal::SweepRecord::near_duplicate},
    {"gone", &store::internal::SweepRecord::gone},
};

// What counting the entries past `field.counted` adds to the shard's counts: "urls" when the URL
// is counted for the first time, "documents" for each entry flagged 'N', "versions", and per
// sweep its counts and its start. The field then counts them all (`counted` = the entries).
// `starts`, when given, holds sweeps' starts known already (as opened, or as reported): a sweep's
// start is written only for a version dated before it, which is the only one that moves it (so a
// sweep whose pages are dated after its opening keeps no start field in the shards).
StatusOr<std::vector<CountChange>> CountRest(
    VersionList* field, const std::map<store::SweepId, int64_t>* starts = nullptr);
// Takes `v`, a counted version, out of the counts: the opposite of counting it, but for "urls".
std::vector<CountChange> Uncount(const store::internal::VersionRecord& v, bool created_doc);

// The command that writes `next` over the URL's field when it still holds `as_read`, and applies
// `changes` to its shard's counts in the same atomic step. Its reply: 1 written, 0 the field holds
// `next` already (a command resent, or the same change made by another daemon: nothing applied),
// -1 the field holds something else (read it again).
Command ReplaceVersions(store::UrlId url, const VersionList& as_read, const VersionList& next,
                        const std::vector<CountChange>& changes);

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_VERSIONS_H_
