#include "store/internal/clusters.h"

#include <algorithm>

#include "store/internal/codec.h"

namespace shingled::store::internal {

StatusOr<ClusterId> FindCluster(TxnOps& ops, DocId doc) {
  std::string_view parent;
  Status s = ops.Get(ops.dbis().cluster_parent, Key64(doc).view(), &parent, "cluster_parent");
  if (s.code() == StatusCode::kNotFound) return doc;
  if (!s.ok()) return s;
  if (parent.size() != 8) return DataLossError("cluster_parent of doc " + std::to_string(doc) + " is not 8 bytes");
  return GetBE64(parent.data());
}

StatusOr<ClusterId> FindCluster(TxnOps& ops, MDB_cursor* cluster_parent, DocId doc) {
  Key64 key(doc);
  MDB_val k = Val(key.view()), v;
  int rc = mdb_cursor_get(cluster_parent, &k, &v, MDB_SET_KEY);
  if (rc == MDB_NOTFOUND) return doc;
  if (rc != 0) return ops.Fail(rc, "cluster_parent");
  if (v.mv_size != 8) return DataLossError("cluster_parent of doc " + std::to_string(doc) + " is not 8 bytes");
  return GetBE64(static_cast<const char*>(v.mv_data));
}

StatusOr<std::vector<DocId>> ClusterMembers(TxnOps& ops, ClusterId root) {
  Cursor cursor;
  if (int rc = cursor.Open(ops.txn(), ops.dbis().cluster_members); rc != 0) {
    return ops.Fail(rc, "cluster_members cursor");
  }
  Key64 key(root);
  MDB_val k = Val(key.view()), v;
  int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_SET_KEY);
  if (rc == MDB_NOTFOUND) return std::vector<DocId>{root};
  if (rc != 0) return ops.Fail(rc, "cluster_members");
  std::vector<DocId> members;
  // DUPFIXED: fetch whole pages of 8-byte members at a time.
  rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_GET_MULTIPLE);
  while (rc == 0) {
    for (size_t i = 0; i + 8 <= v.mv_size; i += 8) {
      members.push_back(GetBE64(static_cast<const char*>(v.mv_data) + i));
    }
    rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT_MULTIPLE);
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "cluster_members");
  return members;
}

StatusOr<uint64_t> ClusterSize(TxnOps& ops, ClusterId root) {
  Cursor cursor;
  if (int rc = cursor.Open(ops.txn(), ops.dbis().cluster_members); rc != 0) {
    return ops.Fail(rc, "cluster_members cursor");
  }
  Key64 key(root);
  MDB_val k = Val(key.view()), v;
  int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_SET_KEY);
  if (rc == MDB_NOTFOUND) return uint64_t{1};
  if (rc != 0) return ops.Fail(rc, "cluster_members");
  size_t count = 0;
  if (rc = mdb_cursor_count(cursor.get(), &count); rc != 0) return ops.Fail(rc, "cluster_members count");
  return static_cast<uint64_t>(count);
}

StatusOr<uint64_t> LargestClusterByScan(TxnOps& ops) {
  MDB_stat st;
  if (int rc = mdb_stat(ops.txn(), ops.dbis().documents, &st); rc != 0) return ops.Fail(rc, "documents stat");
  uint64_t largest = st.ms_entries > 0 ? 1 : 0;
  Cursor cursor;
  if (int rc = cursor.Open(ops.txn(), ops.dbis().cluster_members); rc != 0) {
    return ops.Fail(rc, "cluster_members cursor");
  }
  MDB_val k, v;
  int rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_FIRST);
  while (rc == 0) {
    size_t count = 0;
    if (rc = mdb_cursor_count(cursor.get(), &count); rc != 0) return ops.Fail(rc, "cluster_members count");
    largest = std::max<uint64_t>(largest, count);
    rc = mdb_cursor_get(cursor.get(), &k, &v, MDB_NEXT_NODUP);
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "cluster_members");
  return largest;
}

StatusOr<ClusterId> UnionClusters(TxnOps& ops, DocId a, DocId b, int64_t* multi_member_clusters,
                                  uint64_t* merged_size) {
  StatusOr<ClusterId> ra = FindCluster(ops, a);
  if (!ra.ok()) return ra.status();
  StatusOr<ClusterId> rb = FindCluster(ops, b);
  if (!rb.ok()) return rb.status();
  if (*ra == *rb) return *ra;
  StatusOr<uint64_t> sa = ClusterSize(ops, *ra);
  if (!sa.ok()) return sa.status();
  StatusOr<uint64_t> sb = ClusterSize(ops, *rb);
  if (!sb.ok()) return sb.status();
  // The larger cluster keeps its id; on a tie the older one (smaller id), so that ids stay
  // stable in the common case of a new page joining an old cluster.
  bool a_wins = *sa > *sb || (*sa == *sb && *ra < *rb);
  ClusterId winner = a_wins ? *ra : *rb;
  ClusterId loser = a_wins ? *rb : *ra;
  uint64_t winner_size = a_wins ? *sa : *sb;
  uint64_t loser_size = a_wins ? *sb : *sa;

  StatusOr<std::vector<DocId>> moving = ClusterMembers(ops, loser);
  if (!moving.ok()) return moving.status();
  const Dbis& d = ops.dbis();
  Key64 winner_key(winner);
  if (winner_size == 1) {
    SHINGLED_RETURN_IF_ERROR(ops.Put(d.cluster_parent, winner_key.view(), winner_key.view(), 0, "cluster_parent"));
    SHINGLED_RETURN_IF_ERROR(ops.Put(d.cluster_members, winner_key.view(), winner_key.view(), MDB_NODUPDATA, "cluster_members"));
  }
  for (DocId m : *moving) {
    Key64 mk(m);
    SHINGLED_RETURN_IF_ERROR(ops.Put(d.cluster_parent, mk.view(), winner_key.view(), 0, "cluster_parent"));
    SHINGLED_RETURN_IF_ERROR(ops.Put(d.cluster_members, winner_key.view(), mk.view(), MDB_NODUPDATA, "cluster_members"));
  }
  if (loser_size > 1) {
    SHINGLED_RETURN_IF_ERROR(ops.Del(d.cluster_members, Key64(loser).view(), {}, "cluster_members"));
  }
  // Two clusters became one: count multi-member clusters before and after.
  int64_t before = (winner_size > 1 ? 1 : 0) + (loser_size > 1 ? 1 : 0);
  *multi_member_clusters += 1 - before;
  if (merged_size != nullptr) *merged_size = winner_size + loser_size;
  return winner;
}

}  // namespace shingled::store::internal
