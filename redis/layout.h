// The Redis key layout of the shared dedup state (redis/FORMAT.md, which this implements): hash
// values' postings and the fingerprint claims packed into hash buckets by a prefix of the value,
// as Redis' memory-optimization guide describes, and the commands that read and write them
// through a ClusterClient. Pure functions; the scripts are constants.
//
// Only the postings and the fingerprint claims are here; documents, URLs,
// versions and clusters are described in redis/FORMAT.md and come with the backend.
#ifndef SHINGLED_REDIS_LAYOUT_H_
#define SHINGLED_REDIS_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "redis/cluster_client.h"

namespace shingled::redis {

// Which index a hash value is filed in: the key's first byte inside its hash tag.
enum class Relation : char {
  kFeature = 'f',       // features (k per document)
  kSuperShingle = 's',  // super shingles
  kSample = 'm',        // the indexed quarter of the MOD sample
  kIdentical = 'i',     // fingerprint claims: raw bytes
  kLexical = 'l',       //   canonical tokens
  kShingle = 'h',       //   shingle multiset
  kChunk = 'x',         // content-defined chunks' postings (`chunk_docs`; redis/backend_chunks.cc)
  kTemplate = 't',      // the marked template chunks: a list of cluster ids each
};

// Bits of a value that choose its bucket. Baked into the stored data (a deployment records it and
// refuses another): choose it so that a bucket holds at most ~100 entries at the largest expected
// size, 2^b ~ postings / 64 (redis/FORMAT.md, "Choosing the bucket bits"). Range 8..40.
inline constexpr int kMinBucketBits = 8;
inline constexpr int kMaxBucketBits = 40;

// "{f" + the top `bucket_bits` bits of `value` in lower-case hex + "}". The whole key is its own
// hash tag, so that a value's overflow key (below) shares its slot.
std::string BucketKey(Relation relation, uint64_t value, int bucket_bits);

// The field of `value` in its bucket: its low 64 - bucket_bits bits, big-endian, in
// ceil((64 - bucket_bits) / 8) bytes.
std::string ValueField(uint64_t value, int bucket_bits);

// A 128-bit fingerprint's bucket (by the top bits of `high`) and field (the rest of `high` as
// ValueField, then `low`, 8 bytes big-endian).
std::string FingerprintBucketKey(Relation relation, uint64_t high, int bucket_bits);
std::string FingerprintField(uint64_t high, uint64_t low, int bucket_bits);

// A posting list, as stored: document ids in decimal, comma-separated, in the order filed ("17",
// "17,42"). A list longer than kMaxInlineList bytes moves to a string key of its own, the bucket
// key followed by the field (same hash tag), and the field keeps "*".
inline constexpr int kMaxInlineList = 48;

// Adds a document to a value's list unless it is there already (so a resent command is
// harmless). KEYS[1] bucket, KEYS[2] overflow key; ARGV[1] field, ARGV[2] doc id in decimal,
// ARGV[3] kMaxInlineList. Returns 1 when added, 0 when it was there.
inline constexpr std::string_view kAddPostingScript = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
local spilled = cur == '*'
if spilled then cur = redis.call('GET', KEYS[2]) or '' end
for id in string.gmatch(cur, '[^,]+') do
  if id == ARGV[2] then return 0 end
end
local list = cur .. ',' .. ARGV[2]
if spilled or #list > tonumber(ARGV[3]) then
  redis.call('SET', KEYS[2], list)
  if not spilled then redis.call('HSET', KEYS[1], ARGV[1], '*') end
else
  redis.call('HSET', KEYS[1], ARGV[1], list)
end
return 1
)lua";

// Reads a value's list wherever it is. KEYS as above, ARGV[1] field. Returns the list or nil.
inline constexpr std::string_view kGetPostingScript = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur == '*' then return redis.call('GET', KEYS[2]) end
return cur
)lua";

// Removes a document from a value's list (KEYS and ARGV[1] as above, ARGV[2] the doc id),
// deleting the field (and its overflow key) when the list becomes empty. Returns 1 when removed.
inline constexpr std::string_view kRemoveFromListScript = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return 0 end
local spilled = cur == '*'
if spilled then cur = redis.call('GET', KEYS[2]) or '' end
local kept, found = {}, false
for id in string.gmatch(cur, '[^,]+') do
  if id == ARGV[2] then found = true else kept[#kept + 1] = id end
end
if not found then return 0 end
if #kept == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
  if spilled then redis.call('DEL', KEYS[2]) end
elseif spilled then
  redis.call('SET', KEYS[2], table.concat(kept, ','))
else
  redis.call('HSET', KEYS[1], ARGV[1], table.concat(kept, ','))
end
return 1
)lua";

// Removes a document from every inline list of a bucket that names it (KEYS[1] the bucket,
// ARGV[1] the doc id), deleting the fields it leaves empty: a takedown that knows a document's
// buckets but not its values (the super shingles, redis/record.h). Returns the fields whose list
// is spilled ("*"), for kRemoveFromListScript with their overflow keys.
inline constexpr std::string_view kUnfileFromBucketScript = R"lua(
local all = redis.call('HGETALL', KEYS[1])
local spilled = {}
for i = 1, #all, 2 do
  local field, cur = all[i], all[i + 1]
  if cur == '*' then
    spilled[#spilled + 1] = field
  else
    local kept, found = {}, false
    for id in string.gmatch(cur, '[^,]+') do
      if id == ARGV[1] then found = true else kept[#kept + 1] = id end
    end
    if found and #kept == 0 then
      redis.call('HDEL', KEYS[1], field)
    elseif found then
      redis.call('HSET', KEYS[1], field, table.concat(kept, ','))
    end
  end
end
return spilled
)lua";

// EVALSHA commands of the two scripts; `sha` is what SCRIPT LOAD returned for each. A node that
// lost its script cache (restarted, or a replica promoted: the cache is neither persisted nor
// replicated) answers NOSCRIPT; a client that loaded them with LoadPostingScripts sends the
// command again there as EVAL (ClusterClient::LoadScript), which loads the script on that node.
Command AddPostingCommand(const std::string& sha, Relation relation, uint64_t value, uint64_t doc,
                          int bucket_bits);
Command GetPostingCommand(const std::string& sha, Relation relation, uint64_t value,
                          int bucket_bits);

// Claims a fingerprint for `doc`: HSETNX, 1 when this document got it, 0 when another had it
// (read it with ClaimedByCommand). The claim is atomic: of two daemons storing the same content
// at once, one wins.
Command ClaimFingerprintCommand(Relation relation, uint64_t high, uint64_t low, uint64_t doc,
                                int bucket_bits);
Command ClaimedByCommand(Relation relation, uint64_t high, uint64_t low, int bucket_bits);

// The document ids of a reply of GetPostingCommand (nil: none). DataLoss for bytes that are not
// a list of decimal ids.
StatusOr<std::vector<uint64_t>> ParsePostingList(const Reply& reply);

// Loads both scripts on every master through ClusterClient::LoadScript (so that a NOSCRIPT reply
// is answered by the client); their SHA1s in *add_sha and *get_sha.
Status LoadPostingScripts(ClusterClient& client, std::string* add_sha, std::string* get_sha);

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_LAYOUT_H_
