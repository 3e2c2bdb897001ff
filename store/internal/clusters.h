// The persistent union-find of store/FORMAT.md, "Clusters": flat parent pointers, union by size,
// a member list per root. Private to store/; every function works inside the caller's
// transaction.
#ifndef SHINGLED_STORE_INTERNAL_CLUSTERS_H_
#define SHINGLED_STORE_INTERNAL_CLUSTERS_H_

#include <vector>

#include "base/status.h"
#include "store/internal/schema.h"
#include "store/types.h"

namespace shingled::store::internal {

// The meta key holding the number of documents in the largest cluster (FORMAT.md, "Meta").
inline constexpr char kLargestClusterKey[] = "largest_cluster";

// The size of the largest cluster counted from `cluster_members` (1 if the store has documents
// but no cluster of two, 0 if it has none): one step per cluster, for Check and for stores written
// before the meta entry was kept.
StatusOr<uint64_t> LargestClusterByScan(TxnOps& ops);

// The cluster id (root) of `doc`: its parent, or itself when it is a singleton.
StatusOr<ClusterId> FindCluster(TxnOps& ops, DocId doc);
// The same through an open `cluster_parent` cursor: a key on the leaf page the cursor is on is
// found without a descent from the root (queries look up several documents in id order).
StatusOr<ClusterId> FindCluster(TxnOps& ops, MDB_cursor* cluster_parent, DocId doc);

// Members of the cluster whose root is `root`, by id ({root} for a singleton).
StatusOr<std::vector<DocId>> ClusterMembers(TxnOps& ops, ClusterId root);

// Number of members ({root}: 1).
StatusOr<uint64_t> ClusterSize(TxnOps& ops, ClusterId root);

// Merges the clusters of `a` and `b`; returns the surviving root: the larger cluster's, the
// older (smaller id) on a tie. `*multi_member_clusters` is adjusted by the change in the number of
// clusters with two or more members. `*merged_size` (may be null) is set to the size of the
// merged cluster, or left unchanged when `a` and `b` were in the same cluster already. Costs the
// size of the smaller cluster.
StatusOr<ClusterId> UnionClusters(TxnOps& ops, DocId a, DocId b, int64_t* multi_member_clusters,
                                  uint64_t* merged_size = nullptr);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_CLUSTERS_H_
