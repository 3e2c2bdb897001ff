// The store's named databases (store/FORMAT.md) and a small helper that runs LMDB calls inside a
// transaction, translating errors and remembering the last LMDB code (so that the writer can tell
// a full map, which it grows, from other failures). Private to store/.
#ifndef SHINGLED_STORE_INTERNAL_SCHEMA_H_
#define SHINGLED_STORE_INTERNAL_SCHEMA_H_

#include <lmdb.h>

#include <string_view>

#include "base/status.h"
#include "store/internal/lmdb.h"

namespace shingled::store::internal {

struct Dbis {
  MDB_dbi main;  // the unnamed database, which holds the named ones' records
  MDB_dbi meta, documents, fp_identical, fp_lexical, fp_shingle, features, supershingles, samples,
      common_values, urls, url_names, versions, doc_urls, sweeps, sweep_names, cluster_parent,
      cluster_members, links;
  MDB_dbi chunk_docs, doc_chunks;  // format 9: the file-chunk graph (FORMAT.md, "Chunks")
  MDB_dbi verify_samples;          // format 10 (FORMAT.md, "Verification samples")
  MDB_dbi template_marks, template_chunks;  // format 10: templates (FORMAT.md, "Templates")
  MDB_dbi forgets;                          // format 12: the takedowns (FORMAT.md, "Forgetting")
  MDB_dbi rep_docs;  // format 14: a representative's documents (FORMAT.md, "Representatives")
};

struct TableSpec {
  const char* name;
  unsigned flags;  // MDB_DUPSORT | MDB_DUPFIXED for posting lists
  MDB_dbi Dbis::*member;
};
inline constexpr unsigned kPostings = MDB_DUPSORT | MDB_DUPFIXED;
inline constexpr TableSpec kTables[] = {
    {"meta", 0, &Dbis::meta},
    {"documents", 0, &Dbis::documents},
    {"fp_identical", 0, &Dbis::fp_identical},
    {"fp_lexical", 0, &Dbis::fp_lexical},
    {"fp_shingle", 0, &Dbis::fp_shingle},
    {"features", kPostings, &Dbis::features},
    {"supershingles", kPostings, &Dbis::supershingles},
    {"samples", kPostings, &Dbis::samples},
    {"common_values", 0, &Dbis::common_values},
    {"urls", 0, &Dbis::urls},
    {"url_names", 0, &Dbis::url_names},
    {"versions", 0, &Dbis::versions},
    {"doc_urls", kPostings, &Dbis::doc_urls},
    {"sweeps", 0, &Dbis::sweeps},
    {"sweep_names", 0, &Dbis::sweep_names},
    {"cluster_parent", 0, &Dbis::cluster_parent},
    {"cluster_members", kPostings, &Dbis::cluster_members},
    {"links", kPostings, &Dbis::links},
    {"chunk_docs", kPostings, &Dbis::chunk_docs},
    {"doc_chunks", 0, &Dbis::doc_chunks},
    {"verify_samples", 0, &Dbis::verify_samples},
    {"template_marks", 0, &Dbis::template_marks},
    {"template_chunks", kPostings, &Dbis::template_chunks},
    {"forgets", 0, &Dbis::forgets},
    {"rep_docs", kPostings, &Dbis::rep_docs},
};

// LMDB calls in one transaction. Get returns NotFound (not an error to remember) for a missing
// key; every other failure is translated and its code kept in last_error().
class TxnOps {
 public:
  TxnOps(MDB_txn* txn, const Dbis& dbis) : txn_(txn), dbis_(dbis) {}

  MDB_txn* txn() const { return txn_; }
  const Dbis& dbis() const { return dbis_; }
  int last_error() const { return last_error_; }

  // `*out` is valid until the next write in this transaction.
  Status Get(MDB_dbi dbi, std::string_view key, std::string_view* out, std::string_view what) {
    MDB_val k = Val(key), v;
    int rc = mdb_get(txn_, dbi, &k, &v);
    if (rc == MDB_NOTFOUND) return NotFoundError(std::string(what) + " not found");
    if (rc != 0) return Fail(rc, what);
    *out = View(v);
    return OkStatus();
  }
  // MDB_KEYEXIST under MDB_NODUPDATA/MDB_NOOVERWRITE is not an error: the entry is there.
  Status Put(MDB_dbi dbi, std::string_view key, std::string_view value, unsigned flags,
             std::string_view what) {
    MDB_val k = Val(key), v = Val(value);
    int rc = mdb_put(txn_, dbi, &k, &v, flags);
    if (rc == MDB_KEYEXIST && (flags & (MDB_NODUPDATA | MDB_NOOVERWRITE)) != 0) return OkStatus();
    if (rc != 0) return Fail(rc, what);
    return OkStatus();
  }
  // Deletes `key` (with `value`, for a posting list; empty: all of its values). Missing: not an
  // error.
  Status Del(MDB_dbi dbi, std::string_view key, std::string_view value, std::string_view what) {
    MDB_val k = Val(key), v = Val(value);
    int rc = mdb_del(txn_, dbi, &k, value.empty() ? nullptr : &v);
    if (rc == MDB_NOTFOUND) return OkStatus();
    if (rc != 0) return Fail(rc, what);
    return OkStatus();
  }
  Status Fail(int rc, std::string_view what) {
    last_error_ = rc;
    return LmdbStatus(rc, what);
  }

 private:
  MDB_txn* txn_;
  const Dbis& dbis_;
  int last_error_ = 0;
};

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_SCHEMA_H_
