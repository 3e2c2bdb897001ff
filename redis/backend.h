// The Redis Cluster backend of the store (docs/REDIS.md, "The backend"): a store::Store
// whose state is shared by every daemon connected to one Redis Cluster, so that N daemons make
// the decisions one daemon would.
//
// What it supports, and what it refuses (FailedPrecondition for the LMDB-only operations and
// forgetting), is listed in docs/REDIS.md; the key layout is in redis/FORMAT.md. The decisions
// are the LMDB store's: the same exact levels, candidate ranking, scoring and relations, on
// records that keep 32 bits of each minhash and MOD sample value (redis/record.h), so an answer
// differs from LMDB's only when two different values agree on their low 32 bits (probability
// ~2^-32 per pair of values).
//
// Thread-safety: a RedisClusterStore is safe for concurrent use (one mutex around its client:
// calls are serialized). Several daemons (several stores, each with its own client) may write
// the same cluster at once: docs/REDIS.md, "Concurrency".
#ifndef SHINGLED_REDIS_BACKEND_H_
#define SHINGLED_REDIS_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/sketch.h"
#include "store/store.h"
#include "store/types.h"

namespace shingled::redis {

struct RedisStoreOptions {
  std::vector<std::string> nodes;  // "host:port" seeds
  std::string password_file;       // "" for none
  int min_replicas = 0;
  int connect_timeout_ms = 2000, command_timeout_ms = 5000, wait_timeout_ms = 5000;
  bool allow_unsafe_fsync = false;  // else CheckAppendFsyncAlways at open is an error
  // Bits of a value that choose its bucket, per index (redis/FORMAT.md, "Choosing the bucket
  // bits"). Baked into the data: recorded in the `meta` hash at the first open, and a later open
  // with other values is refused. The defaults suit ~10 million documents.
  int feature_bits = 20, supershingle_bits = 22, sample_bits = 22, fingerprint_bits = 18;
  // Document ids (and URL ids) reserved per INCRBY of the shared counters.
  uint64_t id_block = 1000;
};

// Sets the bucket bits of `redis` for a state that will hold about `documents` documents made
// with `params` (redis/FORMAT.md, "Choosing the bucket bits"): b = round(log2(documents x entries a
// document / 48)) per index, so that a bucket holds ~48 entries (24 to 96), within 8..40 bits.
// 10 million documents at the default params give the defaults above.
void SizeBuckets(uint64_t documents, const dedup::SketchParams& params, RedisStoreOptions* redis);

// Connects to the cluster and opens (or, on an empty cluster, creates) the shared state; with
// options.create false, an empty cluster (no `meta` hash) is NotFound and nothing is written.
// Errors: InvalidArgument for bad options or seeds; FailedPrecondition when a master does not
// run `appendfsync always` (unless allow_unsafe_fsync), when an open that writes asks for
// min_replicas >= 1 and a master has fewer replicas, when a master's hash-max-listpack-value is
// below what the document record buckets need (naming the node and the value), or when the state
// was made with other sketch params or bucket bits (naming the field and both values);
// Unavailable when no seed answers.
StatusOr<std::unique_ptr<store::Store>> OpenRedisClusterStore(const RedisStoreOptions& redis,
                                                              const store::StoreOptions& options,
                                                              const dedup::SketchContext& context);

// The hash-max-listpack-value a node needs for the record buckets of these params: the largest
// record (with the verification sample) plus room.
uint64_t RecordBucketValueBytes(const dedup::SketchParams& params);

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_BACKEND_H_
