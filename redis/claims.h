// The concurrency building blocks between daemons that share one Redis Cluster
// (docs/REDIS.md, "Concurrency"): the claim of a fingerprint (one document per distinct raw
// content), document ids reserved in blocks from a shared counter, and filing a page's postings
// in the same atomic step that reads who else is filed there, so that of two near-copies posted at
// once on two daemons at least one finds the other.
//
// Every function takes the caller's ClusterClient (one per thread, as separate daemons have).
#ifndef SHINGLED_REDIS_CLAIMS_H_
#define SHINGLED_REDIS_CLAIMS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "redis/cluster_client.h"
#include "redis/layout.h"

namespace shingled::redis {

// --- Fingerprint claims ---

// One claim: `doc` asks to be the document of the fingerprint (high, low) in `relation`'s index.
struct FingerprintClaim {
  Relation relation;
  uint64_t high = 0;
  uint64_t low = 0;
  uint64_t doc = 0;
};

// The outcome: the document that holds the fingerprint, and whether it is the claimant.
struct ClaimResult {
  uint64_t owner = 0;
  bool won = false;
};

// HSETNX then HGET of the field, in one script on the fingerprint's bucket: atomic, so of any
// number of daemons claiming the same fingerprint at once exactly one wins, and every loser learns
// the winner's id in the same round trip. A claim resent after a broken connection finds its own
// id and reports a win again (idempotent). One pipelined round trip per node for the whole batch.
// DataLoss when a bucket holds something that is not a decimal id.
inline constexpr std::string_view kClaimScript = R"lua(
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
return redis.call('HGET', KEYS[1], ARGV[1])
)lua";
StatusOr<std::vector<ClaimResult>> ClaimFingerprints(ClusterClient& client,
                                                     const std::vector<FingerprintClaim>& claims,
                                                     int bucket_bits);

// --- Document ids ---

// Ids from a shared counter (a string key: the last id handed out), a block at a time: one INCRBY
// of `block` reserves the ids (end - block, end] for this object alone, so ids cost a round trip
// per `block` pages, and no two daemons (or threads) ever get the same id. A daemon that stops or
// crashes loses the rest of its block: a gap in the ids, never a reuse. Ids start at 1.
//
// A failover can lose the counter's last INCRBY (replication is asynchronous): the new master's
// counter is behind, and the next daemon would be handed ids already in use. With
// `min_replicas` >= 1 a block is used only once WaitForReplicas(min_replicas) says the INCRBY
// reached that many replicas; a block whose wait fails is dropped (a gap). Not thread-safe, like
// the client it uses.
class IdBlocks {
 public:
  // REQUIRES: block >= 1, min_replicas >= 0.
  IdBlocks(ClusterClient& client, std::string counter_key, uint64_t block, int min_replicas = 0)
      : client_(client), key_(std::move(counter_key)), block_(block), min_replicas_(min_replicas) {}

  // The next id; a round trip when the block is used up (two with min_replicas >= 1).
  // Unavailable (or what the client says) when the counter cannot be reached or the block was not
  // replicated in time; FailedPrecondition when the counter is not an integer.
  StatusOr<uint64_t> Next();

 private:
  ClusterClient& client_;
  const std::string key_;
  const uint64_t block_;
  const int min_replicas_;
  uint64_t next_ = 1;  // next_ > last_: no block held
  uint64_t last_ = 0;
};

// --- Filing a page's postings and finding its candidates ---

// One value to file: its relation, the value and its relation's bucket bits.
struct PostingValue {
  Relation relation;
  uint64_t value = 0;
  int bucket_bits = 0;
};

// Files `doc` in each value's posting list and returns, in the same script call per value, the
// list as it stands after the append. KEYS and ARGV as kAddPostingScript (layout.h), whose
// bucket layout and spill it keeps. Because the append and the read are one atomic step on the
// value's bucket, of two pages sharing a value and filed at once, the one filed second sees the
// first: two near-copies racing on two daemons always meet on every value they share.
inline constexpr std::string_view kFileAndReadScript = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return ARGV[2]
end
local spilled = cur == '*'
if spilled then cur = redis.call('GET', KEYS[2]) or '' end
for id in string.gmatch(cur, '[^,]+') do
  if id == ARGV[2] then return cur end
end
local list = cur .. ',' .. ARGV[2]
if spilled or #list > tonumber(ARGV[3]) then
  redis.call('SET', KEYS[2], list)
  if not spilled then redis.call('HSET', KEYS[1], ARGV[1], '*') end
else
  redis.call('HSET', KEYS[1], ARGV[1], list)
end
return list
)lua";

// The page's candidates: for each value (in `values`' order) the other documents filed under it,
// in the order filed: one script per master (RunByMaster) in one pipelined round trip. A resend
// after a broken connection is harmless (the append is idempotent).
StatusOr<std::vector<std::vector<uint64_t>>> FileAndReadPostings(
    ClusterClient& client, uint64_t doc, const std::vector<PostingValue>& values);

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_CLAIMS_H_
