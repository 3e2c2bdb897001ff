#include "redis/versions.h"

#include <algorithm>
#include <map>
#include <utility>

#include "redis/backend_store.h"

namespace shingled::redis {

using store::UrlId;
using store::internal::AppendVarint;
using store::internal::ReadVarint;
using store::internal::SweepRecord;
using store::internal::VersionRecord;

namespace {

// Writes ARGV[3] over field ARGV[1] of KEYS[1] when it holds ARGV[2] ('': absent; a new value ''
// deletes the field), then applies the triples from ARGV[4] to the counts hash KEYS[2] (the same
// slot): '+' field n adds n (a count that comes to 0 is deleted: absent is 0 to every reader,
// and forgetting then leaves no field behind), '<' field n sets n when the field is absent or
// greater. 1 written, 0 the field holds ARGV[3] already, -1 something else.
constexpr std::string_view kReplaceScript = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if cur == ARGV[3] then return 0 end
if cur ~= ARGV[2] then return -1 end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
for i = 4, #ARGV, 3 do
  if ARGV[i] == '+' then
    if redis.call('HINCRBY', KEYS[2], ARGV[i + 1], ARGV[i + 2]) == 0 then
      redis.call('HDEL', KEYS[2], ARGV[i + 1])
    end
  else
    local v = redis.call('HGET', KEYS[2], ARGV[i + 1])
    if (not v) or tonumber(ARGV[i + 2]) < tonumber(v) then
      redis.call('HSET', KEYS[2], ARGV[i + 1], ARGV[i + 2])
    end
  end
end
return 1
)lua";

void AppendHex(uint64_t v, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  int shift = 60;
  while (shift > 0 && ((v >> shift) & 15) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) out->push_back(kHex[(v >> shift) & 15]);
}

std::string SweepField(store::SweepId sweep, std::string_view name) {
  return std::to_string(sweep).append(".").append(name);
}

// The changes that add `sign` times the counts of `delta` (a sweep record's counts) to `sweep`.
void AddSweepCounts(store::SweepId sweep, const SweepRecord& delta, int64_t sign,
                    std::vector<CountChange>* out) {
  for (const SweepCountField& f : kSweepCountFields) {
    if (delta.*f.count != 0) {
      out->push_back({false, SweepField(sweep, f.name), sign * static_cast<int64_t>(delta.*f.count)});
    }
  }
}

}  // namespace

std::string ShardKey(uint64_t shard) {
  std::string key = "{V";
  AppendHex(shard, &key);
  key.push_back('}');
  return key;
}
std::string VersionsKey(UrlId url) { return ShardKeyOf(url) + std::to_string((url / kShards) >> 4); }
std::string VersionsField(UrlId url) { return std::to_string(url); }

StatusOr<VersionList> DecodeVersionList(std::string_view in) {
  VersionList f;
  if (in.empty()) return f;
  if (!ReadVarint(&in, &f.counted)) {
    return DataLossError("redis: a versions field without its count");
  }
  while (!in.empty()) {
    uint64_t len = 0;
    if (!ReadVarint(&in, &len) || len > in.size()) {
      return DataLossError("redis: a truncated versions field");
    }
    f.entries.emplace_back(in.substr(0, len));
    in.remove_prefix(len);
  }
  if (f.counted > f.entries.size()) {
    return DataLossError("redis: a versions field counts " + std::to_string(f.counted) +
                         " of its " + std::to_string(f.entries.size()) + " versions");
  }
  return f;
}

std::string EncodeVersionList(const VersionList& f) {
  std::string out;
  if (f.entries.empty() && f.counted == 0) return out;
  AppendVarint(&out, f.counted);
  for (const std::string& e : f.entries) {
    AppendVarint(&out, e.size());
    out += e;
  }
  return out;
}

std::string VersionEntry(const VersionRecord& v, bool created_doc) {
  std::string e(1, created_doc ? 'N' : 'V');
  e += store::internal::EncodeVersion(v);
  return e;
}

StatusOr<VersionRecord> DecodeVersionEntry(std::string_view e) {
  if (e.empty() || (e[0] != 'N' && e[0] != 'V')) {
    return DataLossError("redis: a version entry without its flag byte");
  }
  return store::internal::DecodeVersion(e.substr(1));
}

StatusOr<std::vector<CountChange>> CountRest(VersionList* field,
                                             const std::map<store::SweepId, int64_t>* starts) {
  std::vector<CountChange> out;
  const size_t n = field->entries.size();
  if (field->counted >= n) return out;
  if (field->counted == 0) out.push_back({false, "urls", 1});
  int64_t documents = 0;
  std::map<store::SweepId, std::pair<SweepRecord, int64_t>> sweeps;  // counts, earliest date
  for (size_t i = field->counted; i < n; ++i) {
    StatusOr<VersionRecord> v = DecodeVersionEntry(field->entries[i]);
    if (!v.ok()) return v.status();
    if (field->entries[i][0] == 'N') ++documents;
    auto [it, fresh] = sweeps.try_emplace(v->sweep, SweepRecord{}, v->date);
    it->second.first.Count(v->verdict);
    if (!fresh) it->second.second = std::min(it->second.second, v->date);
  }
  if (documents != 0) out.push_back({false, "documents", documents});
  out.push_back({false, "versions", static_cast<int64_t>(n - field->counted)});
  for (const auto& [sweep, counts] : sweeps) {
    AddSweepCounts(sweep, counts.first, 1, &out);
    // A date at or after the start known moves nothing.
    if (starts == nullptr || !starts->contains(sweep) || counts.second < starts->at(sweep))
      out.push_back({true, SweepField(sweep, "start"), counts.second});
  }
  field->counted = n;
  return out;
}

std::vector<CountChange> Uncount(const VersionRecord& v, bool created_doc) {
  std::vector<CountChange> out;
  if (created_doc) out.push_back({false, "documents", -1});
  out.push_back({false, "versions", -1});
  SweepRecord counts;
  counts.Count(v.verdict);
  AddSweepCounts(v.sweep, counts, -1, &out);
  return out;
}

Command ReplaceVersions(UrlId url, const VersionList& as_read, const VersionList& next,
                        const std::vector<CountChange>& changes) {
  std::vector<std::string> argv = {VersionsField(url), EncodeVersionList(as_read),
                                   EncodeVersionList(next)};
  for (const CountChange& ch : changes) {
    argv.push_back(ch.least ? "<" : "+");
    argv.push_back(ch.field);
    argv.push_back(std::to_string(ch.value));
  }
  return Eval(kReplaceScript, {VersionsKey(url), ShardKeyOf(url)}, std::move(argv));
}

}  // namespace shingled::redis
