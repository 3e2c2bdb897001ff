// The clusters of near-duplicates as a union-find shared by many daemons on one Redis Cluster
// (docs/REDIS.md, "Concurrency", which gives the argument in full).
//
// A document's parent pointer and a root's list of children live in buckets chosen by the
// document's id, so they are in different slots and no multi-key transaction covers a union.
// The algorithm is the lock-free union-find of Anderson and Woll (1991) with linking by index:
//
//   - `link(x)`, set once by HSETNX on x's field and never changed: the root x was linked under.
//     Only a root (no link) is linked, always under a root with a SMALLER id. So every pointer
//     goes to a smaller id: no cycle, and Find ends in at most x steps.
//   - `parent(x)`, the pointer Find follows: link(x) at first, moved up to an ancestor by path
//     compression (a compare-and-set in a script on x's bucket). An ancestor stays an ancestor,
//     so compression never changes which root a document reaches.
//   - Union(a, b): find both roots; if they differ, record the larger root in the smaller's
//     children list (the intent, so that a crash after the link cannot hide a subtree from
//     Members), then HSETNX link(larger) = smaller. If another daemon linked it first, HSETNX
//     fails and the union starts again from fresh roots. A union returns only once it has seen
//     both documents under one root or made the link itself: no merge is lost.
//   - Members(root): walk the children lists down from the root, keeping a child only when its
//     link names the parent it was listed under (an intent whose link failed names another).
//
// The cluster id is the root: the smallest document id of the cluster (its oldest document when
// ids are handed out in time order). It is the same whatever the order of the merges, on one
// daemon or many, and changes only when the cluster merges with one holding a smaller id. (The
// single-daemon store keeps the larger cluster's root instead; docs/REDIS.md says why the
// shared state cannot.)
//
// Keys: parent pointers in `{p<id >> 6 in hex>}` (field: the id in decimal; value: the link, or
// "link,parent" once compressed); children lists in `{c<id >> 6 in hex>}`, kept like posting
// lists (layout.h: comma-separated ids, a long list spilled to its own key). A document that was
// never linked has no entry in either: a singleton costs nothing.
#ifndef SHINGLED_REDIS_UNION_FIND_H_
#define SHINGLED_REDIS_UNION_FIND_H_

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "redis/cluster_client.h"

namespace shingled::redis {

// The keys of doc's parent entry and children list.
std::string ParentBucketKey(uint64_t doc);
std::string ChildrenBucketKey(uint64_t doc);

// The roots of `docs`, in order: one pipelined round trip per step up the deepest path, then one
// more to compress the paths walked (a compare-and-set each: a concurrent compression is kept).
// DataLoss when an entry does not parse or points to an id not smaller than its own.
StatusOr<std::vector<uint64_t>> FindRoots(ClusterClient& client, const std::vector<uint64_t>& docs);

// Merges the clusters of a and b (REQUIRES: both >= 1) and returns the root of the merged
// cluster (the smallest id in it, at the time of the call). Safe against any number of unions
// running at once on other clients.
StatusOr<uint64_t> Union(ClusterClient& client, uint64_t a, uint64_t b);

// Union's link step for many pairs at once: for each (hi, lo), with hi > lo and each hi at most
// once, records hi in lo's children (the intent), then links hi under lo (HSETNX), in two
// pipelined rounds for all pairs. Returns, per pair, whether this call made the link (false:
// another union linked hi first; find the roots again and retry). REQUIRES: every hi was a root
// when its roots were read, hi > lo >= 1. Unions of a batch go through it (with FindRoots)
// instead of one Union each: ~5 rounds for the batch rather than ~5 per merge.
StatusOr<std::vector<bool>> LinkRoots(ClusterClient& client,
                                      const std::vector<std::pair<uint64_t, uint64_t>>& links);

// Every document in the cluster whose root is `root`, ascending ({root} for a singleton). Round
// trips: two per level of the tree of links. REQUIRES: `root` is a root (FindRoots).
StatusOr<std::vector<uint64_t>> ClusterMembers(ClusterClient& client, uint64_t root);
// The same for several roots at once, in the same rounds: two per level of the deepest tree.
StatusOr<std::vector<std::vector<uint64_t>>> ClusterMembersOfRoots(ClusterClient& client,
                                                                   std::span<const uint64_t> roots);

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_UNION_FIND_H_
