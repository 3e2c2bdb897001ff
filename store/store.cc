// Store: opening, the meta record, and the writes (the decision for each page, sweeps).
// Queries are in queries.cc, Check and Backup in check.cc.
#include "store/store.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>

#include "base/iso_time.h"
#include "dedup/estimate.h"
#include "store/decide.h"
#include "store/internal/batch_postings.h"
#include "store/internal/chunks.h"
#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/containment.h"
#include "store/internal/judge.h"
#include "store/internal/page_rules.h"
#include "store/internal/store_impl.h"
#include "store/internal/sweeps.h"
#include "store/internal/templates.h"
#include "store/internal/verify.h"
#include "store/lmdb_store.h"

namespace shingled::store {

using internal::Cursor;
using internal::DocumentRecord;
using internal::GetBE32;
using internal::GetBE64;
using internal::SweepKey;
using internal::Key64;
using internal::Posting;
using internal::PostingKey;
using internal::SweepRecord;
using internal::TxnOps;
using internal::Val;
using internal::VersionRecord;
using internal::View;

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kNew: return "new";
    case Verdict::kUnchanged: return "unchanged";
    case Verdict::kDuplicate: return "duplicate";
    case Verdict::kNearDuplicate: return "near_duplicate";
    case Verdict::kGone: return "gone";
    case Verdict::kFailed:
      return "failed";
    case Verdict::kRedirect:
      return "redirect";
  }
  return "unknown";
}

std::string_view RelationName(Relation relation) {
  switch (relation) {
    case Relation::kIdentical: return "identical";
    case Relation::kLexical: return "lexical";
    case Relation::kShingle: return "shingle";
    case Relation::kFungible: return "fungible";
    case Relation::kSimilar: return "similar";
    case Relation::kVerified:
      return "verified";
    case Relation::kContains:
      return "contains";
    case Relation::kContainedIn:
      return "contained_in";
  }
  return "unknown";
}

std::string_view ContainmentSourceName(ContainmentSource source) {
  switch (source) {
    case ContainmentSource::kModSample:
      return "mod_sample";
    case ContainmentSource::kChunks:
      return "chunks";
  }
  return "unknown";
}

std::string_view ResemblanceSourceName(ResemblanceSource source) {
  switch (source) {
    case ResemblanceSource::kMinhashes:
      return "minhashes";
    case ResemblanceSource::kVerifySample:
      return "verify_sample";
    case ResemblanceSource::kVerifySampleExact:
      return "verify_sample_exact";
  }
  return "unknown";
}

namespace internal {

int ReadPostings(MDB_cursor* cursor, std::string_view key, size_t max, std::vector<uint64_t>* out,
                 size_t* count) {
  *count = 0;
  MDB_val k = Val(key), v;
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_KEY);
  if (rc == MDB_NOTFOUND) return 0;
  if (rc != 0) return rc;
  size_t n = 0;
  if (rc = mdb_cursor_count(cursor, &n); rc != 0) return rc;
  *count = n;
  size_t taken = 0;
  // DUPFIXED: a page of 8-byte postings per call. For a key with one posting GET_MULTIPLE leaves
  // `v` as MDB_SET_KEY returned it.
  rc = mdb_cursor_get(cursor, &k, &v, MDB_GET_MULTIPLE);
  while (rc == 0 && taken < max) {
    for (size_t i = 0; i + 8 <= v.mv_size && taken < max; i += 8, ++taken) {
      out->push_back(GetBE64(static_cast<const char*>(v.mv_data) + i));
    }
    rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT_MULTIPLE);
  }
  return rc == MDB_NOTFOUND ? 0 : rc;
}

StatusOr<UrlId> LookupUrl(TxnOps& ops, std::string_view url) {
  std::string_view v;
  Status s = ops.Get(ops.dbis().urls, UrlKey(url), &v, "url");
  if (!s.ok()) return s;
  if (v.size() != 8) return DataLossError("urls value is not 8 bytes");
  UrlId id = GetBE64(v.data());
  if (url.size() > kMaxWholeUrlKey) {
    std::string_view name;
    SHINGLED_RETURN_IF_ERROR(ops.Get(ops.dbis().url_names, Key64(id).view(), &name, "url_names"));
    if (name != url) return InternalError("URL hash collision with url id " + std::to_string(id));
  }
  return id;
}

StatusOr<VersionRecord> LastVersion(TxnOps& ops, UrlId url, uint32_t* seq) {
  Cursor cursor;
  if (int rc = cursor.Open(ops.txn(), ops.dbis().versions); rc != 0) return ops.Fail(rc, "versions cursor");
  return LastVersion(ops, cursor.get(), url, seq);
}

StatusOr<VersionRecord> LastVersion(TxnOps& ops, MDB_cursor* versions, UrlId url, uint32_t* seq) {
  std::string next = VersionKey(url + 1, 0);
  MDB_val k = Val(next), v;
  int rc = mdb_cursor_get(versions, &k, &v, MDB_SET_RANGE);
  if (rc == 0) {
    rc = mdb_cursor_get(versions, &k, &v, MDB_PREV);
  } else if (rc == MDB_NOTFOUND) {
    rc = mdb_cursor_get(versions, &k, &v, MDB_LAST);
  }
  if (rc == MDB_NOTFOUND) return NotFoundError("no version");
  if (rc != 0) return ops.Fail(rc, "versions");
  UrlId found = 0;
  SHINGLED_RETURN_IF_ERROR(DecodeVersionKey(View(k), &found, seq));
  if (found != url) return NotFoundError("no version");
  return DecodeVersion(View(v));
}

StatusOr<DocumentRecord> ReadDocument(TxnOps& ops, DocId doc) {
  std::string_view v;
  Status s = ops.Get(ops.dbis().documents, Key64(doc).view(), &v, "document " + std::to_string(doc));
  if (!s.ok()) return s;
  return DecodeDocument(v);
}

StatusOr<DocumentRecord> ReadSketchHolder(TxnOps& ops, DocId doc, DocId* holder) {
  StatusOr<DocumentRecord> rec = ReadDocument(ops, doc);
  if (!rec.ok() || rec->has_sketch()) {
    *holder = doc;
    return rec;
  }
  *holder = rec->rep;
  return ReadDocument(ops, rec->rep);
}

int ReadValuePostings(MDB_cursor* cursor, uint64_t value, size_t max, std::vector<DocId>* out,
                      size_t* count, bool* more) {
  *count = 0;
  *more = false;
  PostingKey key(value);
  Posting first(value, 0);
  MDB_val k = Val(key.view()), v = Val(first.view());
  // The value's entries are contiguous in its bucket: from the first entry >= (value, 0) while
  // the 6-byte value prefix matches.
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_GET_BOTH_RANGE);
  while (rc == 0) {
    if (v.mv_size != kPostingSize || std::memcmp(v.mv_data, first.value_prefix().data(), 6) != 0) return 0;
    if (*count == max) {
      *more = true;
      return 0;
    }
    out->push_back(PostingDoc(View(v)));
    ++*count;
    rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT_DUP);
  }
  return rc == MDB_NOTFOUND ? 0 : rc;
}

StatusOr<SweepId> StoredSweepId(std::string_view bytes, std::string_view where) {
  if (bytes.size() != 4) {
    return DataLossError(std::string(where) + " is " + std::to_string(bytes.size()) +
                         " bytes, not a 4-byte sweep id");
  }
  return GetBE32(bytes.data());
}

StoreImpl::~StoreImpl() {
  if (env_ != nullptr) mdb_env_close(env_);
}

StatusOr<uint64_t> LastId(TxnOps& ops, MDB_dbi dbi, const char* what) {
  Cursor c;
  if (int rc = c.Open(ops.txn(), dbi); rc != 0) return ops.Fail(rc, what);
  MDB_val k, v;
  int rc = mdb_cursor_get(c.get(), &k, &v, MDB_LAST);
  if (rc == MDB_NOTFOUND) return uint64_t{0};
  if (rc != 0) return ops.Fail(rc, what);
  if (k.mv_size != 8) {
    std::string message("the last key of ");
    message.append(what).append(" is ").append(std::to_string(k.mv_size));
    message.append(" bytes, not 8; run shingled check");
    return DataLossError(message);
  }
  return GetBE64(static_cast<const char*>(k.mv_data));
}

StatusOr<SweepRecord*> CachedSweep(TxnOps& ops, SweepCache* cache, SweepId id) {
  auto it = cache->find(id);
  if (it == cache->end()) {
    std::string_view v;
    SHINGLED_RETURN_IF_ERROR(
        ops.Get(ops.dbis().sweeps, SweepKey(id), &v, "sweep " + std::to_string(id)));
    StatusOr<SweepRecord> rec = DecodeSweep(v);
    if (!rec.ok()) return rec.status();
    it = cache->emplace(id, std::move(rec).value()).first;
  }
  return &it->second;
}

StatusOr<uint64_t> LastAllocatedId(TxnOps& ops, MDB_dbi dbi, const char* what,
                                   const char* meta_key) {
  StatusOr<uint64_t> last = LastId(ops, dbi, what);
  if (!last.ok()) return last.status();
  std::string_view v;
  Status s = ops.Get(ops.dbis().meta, meta_key, &v, std::string("meta ") + meta_key);
  if (s.code() == StatusCode::kNotFound) return *last;
  SHINGLED_RETURN_IF_ERROR(s);
  if (v.size() != 8) return DataLossError(std::string("meta ") + meta_key + " is not 8 bytes");
  return std::max(*last, GetLE64(v.data()));
}

Status StoreImpl::AdoptNewMapSize() const {
  // Another process grew the map: adopt its size (0 = the file's current size).
  std::unique_lock<std::shared_mutex> lock(resize_mu_);
  return LmdbStatus(mdb_env_set_mapsize(env_, 0), "adopt map size");
}

Status StoreImpl::GrowMap() {
  std::unique_lock<std::shared_mutex> lock(resize_mu_);
  MDB_envinfo info;
  if (int rc = mdb_env_info(env_, &info); rc != 0) return LmdbStatus(rc, "env info");
  uint64_t current = info.me_mapsize;
  const uint64_t max_map_size = max_map_size_;
  if (!options_.grow_map || current >= max_map_size) {
    map_full_at_ = current;
    std::string detail = "the store's map is full at ";
    detail.append(std::to_string(current))
        .append(" bytes and it may not grow (grow_map = ")
        .append(options_.grow_map ? "true" : "false")
        .append(", store.max_map_size = ")
        .append(std::to_string(max_map_size))
        .append("); raise store.max_map_size and reload (SIGHUP)");
    return MapFullError(detail);
  }
  uint64_t next = std::min<uint64_t>(current * 2, max_map_size);
  return LmdbStatus(mdb_env_set_mapsize(env_, next), "grow map to " + std::to_string(next));
}

Status StoreImpl::CommitFailure(int rc) const {
  Status lmdb = LmdbStatus(rc, "commit");
  if (rc != EIO && rc != ENOSPC && rc != EDQUOT) return lmdb;
  struct statvfs fs;
  if (statvfs(dir_.c_str(), &fs) != 0) return lmdb;
  uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  // A commit writes at most a few map pages per page applied plus the meta page; with less than
  // 8 MiB free, a short write is the file system filling up rather than a failing device.
  constexpr uint64_t kNearlyFull = uint64_t{8} << 20;
  if (rc != EIO || free_bytes < kNearlyFull) {
    std::string detail = "commit failed: ";
    detail.append(std::to_string(free_bytes))
        .append(" bytes free on the file system of the store ")
        .append(dir_)
        .append(" (")
        .append(mdb_strerror(rc))
        .append(")");
    return DiskFullError(detail);
  }
  return lmdb;
}

void StoreImpl::KeepBuffer(uint64_t txn_id, std::shared_ptr<const WriteBuffer> buffer) const {
  buffers_[txn_id] = std::move(buffer);
  while (buffers_.size() > kBuffersKept) buffers_.erase(buffers_.begin());
}

void StoreImpl::BeginCommit(uint64_t txn_id, std::shared_ptr<const WriteBuffer> buffer) {
  std::lock_guard<std::mutex> lock(buffer_mu_);
  if (buffer != nullptr) KeepBuffer(txn_id, std::move(buffer));
  committing_ = txn_id;
}

void StoreImpl::EndCommit(uint64_t txn_id, bool committed) {
  {
    std::lock_guard<std::mutex> lock(buffer_mu_);
    committing_ = 0;
    // Another process may commit this id after a failure here: its buffer is another.
    if (!committed) buffers_.erase(txn_id);
  }
  buffer_cv_.notify_all();
}

StatusOr<std::shared_ptr<const WriteBuffer>> StoreImpl::BufferFor(TxnOps& ops) const {
  const uint64_t txn_id = mdb_txn_id(ops.txn());
  {
    std::unique_lock<std::mutex> lock(buffer_mu_);
    buffer_cv_.wait(lock, [&] { return committing_ != txn_id; });
    if (auto it = buffers_.find(txn_id); it != buffers_.end()) return it->second;
  }
  // One rebuild at a time: the queries that arrive together after a start all want the same.
  std::lock_guard<std::mutex> building(build_mu_);
  {
    std::lock_guard<std::mutex> lock(buffer_mu_);
    if (auto it = buffers_.find(txn_id); it != buffers_.end()) return it->second;
  }
  StatusOr<std::shared_ptr<const WriteBuffer>> built = BuildWriteBuffer(ops);
  if (!built.ok()) return built.status();
  std::lock_guard<std::mutex> lock(buffer_mu_);
  KeepBuffer(txn_id, *built);  // unless the last few commits are all newer
  return built;
}

StatusOr<std::shared_ptr<const WriteBuffer>> StoreImpl::WriterBuffer(TxnOps& ops) {
  const uint64_t base = mdb_txn_id(ops.txn()) - 1;
  {
    std::lock_guard<std::mutex> lock(buffer_mu_);
    if (auto it = buffers_.find(base); it != buffers_.end()) return it->second;
  }
  StatusOr<std::shared_ptr<const WriteBuffer>> built = BuildWriteBuffer(ops);
  if (!built.ok()) return built.status();
  std::lock_guard<std::mutex> lock(buffer_mu_);
  KeepBuffer(base, *built);
  return built;
}

Status StoreImpl::LoadStopList(TxnOps& ops) {
  const uint64_t txn_id = mdb_txn_id(ops.txn());
  if (StopListCurrentFor(txn_id)) return OkStatus();
  stop_list_.clear();
  Cursor c;
  if (int rc = c.Open(ops.txn(), dbis_.common_values); rc != 0) return ops.Fail(rc, "common_values cursor");
  MDB_val k, v;
  int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
  for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != 8 || v.mv_size != 8) return DataLossError("common_values entry is not 8 + 8 bytes");
    stop_list_[GetBE64(static_cast<const char*>(k.mv_data))] = GetLE64(static_cast<const char*>(v.mv_data));
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "common_values");
  stop_list_loaded_ = true;
  stop_list_txn_ = txn_id - 1;  // the snapshot this transaction sees
  return OkStatus();
}

JudgeMemory* StoreImpl::WriterJudgeMemory(TxnOps& ops) {
  const uint64_t txn_id = mdb_txn_id(ops.txn());
  if (judge_memory_txn_ == 0 || judge_memory_txn_ + 1 != txn_id) judge_memory_.clear();
  judge_memory_in_use_ = txn_id;
  return &judge_memory_;
}

StatusOr<KeyFilter*> StoreImpl::WriterKeyFilter(TxnOps& ops) {
  if (!options_.key_filter) return nullptr;
  if (key_filter_ == nullptr) key_filter_ = std::make_unique<KeyFilter>();
  const uint64_t txn_id = mdb_txn_id(ops.txn());
  if (key_filter_txn_ + 1 != txn_id) key_filter_->InvalidateAll();
  key_filter_txn_ = txn_id - 1;  // the snapshot this transaction sees
  if (int slice = key_filter_->SliceToBuild(); slice >= 0) {
    SHINGLED_RETURN_IF_ERROR(key_filter_->Build(ops, slice));
  }
  key_filter_bytes_.store(key_filter_->bytes(), std::memory_order_relaxed);
  return key_filter_.get();
}

StatusOr<ReadTxn> StoreImpl::BeginRead() const {
  for (;;) {
    ReadTxn r{std::shared_lock<std::shared_mutex>(resize_mu_), Txn()};
    MDB_txn* raw = nullptr;
    int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &raw);
    if (rc == MDB_MAP_RESIZED) {
      r.lock.unlock();
      SHINGLED_RETURN_IF_ERROR(AdoptNewMapSize());
      continue;
    }
    if (rc != 0) return LmdbStatus(rc, "begin read transaction");
    r.txn = Txn(raw);
    return r;
  }
}

namespace {

struct ParamField {
  const char* key;
  uint64_t value;
};

std::vector<ParamField> ParamFields(const dedup::SketchParams& p, uint64_t polynomial) {
  auto u = [](int v) { return static_cast<uint64_t>(v); };
  return {
      {"param.shingle_size", u(p.shingle_size)},
      {"param.feature_groups", u(p.feature_groups)},
      {"param.group_size", u(p.group_size)},
      {"param.fungible_threshold", u(p.fungible_threshold)},
      {"param.seed", p.seed},
      {"param.min_sample_size", u(p.min_sample_size)},
      {"param.supershingle_span", u(p.supershingle_span)},
      {"param.supershingle_window", u(p.supershingle_window)},
      {"param.mod_sample_max", u(p.mod_sample_max)},
      {"param.rabin_polynomial", polynomial},
      // Format 9: the chunking (dedup/chunker.h), baked into `chunk_docs` and `doc_chunks`.
      {"param.chunk_input", static_cast<uint64_t>(p.chunking.input)},
      {"param.chunk_min", p.chunking.min_size},
      {"param.chunk_max", p.chunking.max_size},
      {"param.chunk_divisor", p.chunking.main_divisor},
      {"param.chunk_backup_divisor", p.chunking.backup_divisor},
      // Format 10: the verification sample's size, baked into `verify_samples`.
      {internal::kVerifySampleSizeKey, u(p.verify_sample_size)},
  };
}

// The format 6 to 7 upgrade: deletes each link's entry under its earlier document, leaving the
// one under the later (FORMAT.md, "Links"). Entries of another size than the format's are left
// for Check to report.
// Watermarks at the last id of `dbi`: an upgrade from a format whose B-tree held every entry.
StatusOr<Watermarks> WatermarksAtLastId(TxnOps& ops, MDB_dbi dbi, const char* what) {
  StatusOr<uint64_t> last = LastId(ops, dbi, what);
  if (!last.ok()) return last.status();
  Watermarks at_last;
  at_last.doc.fill(*last);
  return at_last;
}

Status DropReverseLinks(TxnOps& ops) {
  std::vector<std::pair<DocId, std::array<char, kLinkSize>>> reverse;
  {
    Cursor c;
    if (int rc = c.Open(ops.txn(), ops.dbis().links); rc != 0) return ops.Fail(rc, "links cursor");
    MDB_val k, v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
    for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
      if (k.mv_size != 8 || v.mv_size != kLinkSize) continue;
      const DocId doc = GetBE64(static_cast<const char*>(k.mv_data));
      DocId other = 0;
      double resemblance = 0;
      DecodeLink(View(v), &other, &resemblance);
      if (other <= doc) continue;
      auto& entry = reverse.emplace_back(doc, std::array<char, kLinkSize>{});
      std::memcpy(entry.second.data(), v.mv_data, kLinkSize);
    }
    if (rc != MDB_NOTFOUND) return ops.Fail(rc, "links");
  }
  for (const auto& [doc, link] : reverse) {
    SHINGLED_RETURN_IF_ERROR(ops.Del(ops.dbis().links, Key64(doc).view(),
                                     std::string_view(link.data(), link.size()), "links"));
  }
  return OkStatus();
}

}  // namespace

Status StoreImpl::Open() {
  std::error_code ec;
  if (!options_.create &&
      !std::filesystem::is_regular_file(std::filesystem::path(dir_) / "data.mdb", ec)) {
    return NotFoundError("no store at " + dir_ +
                         " (no data.mdb there; ingest, crawl and serve create one)");
  }
  std::filesystem::create_directories(dir_, ec);
  if (ec) return FailedPreconditionError("cannot create store directory " + dir_ + ": " + ec.message());
  int rc = mdb_env_create(&env_);
  if (rc != 0) return LmdbStatus(rc, "mdb_env_create");
  if (rc = mdb_env_set_maxdbs(env_, std::size(kTables) + 2); rc != 0) return LmdbStatus(rc, "set maxdbs");
  if (rc = mdb_env_set_maxreaders(env_, options_.max_readers); rc != 0) return LmdbStatus(rc, "set maxreaders");
  // An existing store's map may be larger than initial_map_size: LMDB keeps the larger of the
  // file's size and this one.
  if (rc = mdb_env_set_mapsize(env_, options_.initial_map_size); rc != 0) return LmdbStatus(rc, "set mapsize");
  // MDB_NOTLS: read transactions are not tied to threads (the daemon's readers run on a pool).
  unsigned flags = MDB_NOTLS;
  if (!options_.durable) flags |= MDB_NOSYNC;
  SHINGLED_RETURN_IF_ERROR(AllocateLockFile());
  if (rc = mdb_env_open(env_, dir_.c_str(), flags, 0644); rc != 0) return LmdbStatus(rc, "open store " + dir_);

  MDB_txn* raw = nullptr;
  rc = mdb_txn_begin(env_, nullptr, 0, &raw);
  // Another process (a daemon's writer) may grow the map between the environment's opening and
  // this transaction, which waits for its writer: adopt the grown map and begin again.
  while (rc == MDB_MAP_RESIZED) {
    SHINGLED_RETURN_IF_ERROR(AdoptNewMapSize());
    rc = mdb_txn_begin(env_, nullptr, 0, &raw);
  }
  if (rc != 0) return LmdbStatus(rc, "begin open transaction");
  Txn txn(raw);
  if (rc = mdb_dbi_open(txn.get(), nullptr, 0, &dbis_.main); rc != 0) return LmdbStatus(rc, "open the unnamed database");
  for (const TableSpec& t : kTables) {
    if (rc = mdb_dbi_open(txn.get(), t.name, MDB_CREATE | t.flags, &(dbis_.*t.member)); rc != 0) {
      return LmdbStatus(rc, std::string("open database ") + t.name);
    }
    if (rc = mdb_set_compare(txn.get(), dbis_.*t.member, CompareBytes); rc != 0) {
      return LmdbStatus(rc, std::string("key order of ") + t.name);
    }
    if ((t.flags & MDB_DUPSORT) != 0) {
      if (rc = mdb_set_dupsort(txn.get(), dbis_.*t.member, CompareBytes); rc != 0) {
        return LmdbStatus(rc, std::string("duplicate order of ") + t.name);
      }
    }
  }
  TxnOps ops(txn.get(), dbis_);
  std::string_view v;
  Status s = ops.Get(dbis_.meta, "format_version", &v, "meta format_version");
  if (s.code() == StatusCode::kNotFound) {
    // Without a format version, meta must be empty: a damaged store that lost only that entry
    // would otherwise get the caller's parameters and zero counters written over its own.
    MDB_stat meta_stat;
    if (rc = mdb_stat(txn.get(), dbis_.meta, &meta_stat); rc != 0)
      return LmdbStatus(rc, "meta stat");
    if (meta_stat.ms_entries != 0) {
      return DataLossError("meta of store " + dir_ + " lacks format_version but holds " +
                           std::to_string(meta_stat.ms_entries) + " other entries");
    }
    // A new store: record the format and every parameter sketches depend on.
    SHINGLED_RETURN_IF_ERROR(ops.Put(dbis_.meta, "format_version", Le64(kFormatVersion), 0, "meta"));
    for (const ParamField& f : ParamFields(params_, polynomial_)) {
      SHINGLED_RETURN_IF_ERROR(ops.Put(dbis_.meta, f.key, Le64(f.value), 0, "meta"));
    }
    for (const char* key : {"count.documents", "count.urls", "count.versions", "count.clusters",
                            kLargestClusterKey}) {
      SHINGLED_RETURN_IF_ERROR(ops.Put(dbis_.meta, key, Le64(0), 0, "meta"));
    }
    SHINGLED_RETURN_IF_ERROR(WriteWatermarks(ops, Watermarks{}));
    SHINGLED_RETURN_IF_ERROR(WriteFingerprintWatermarks(ops, Watermarks{}));
    SHINGLED_RETURN_IF_ERROR(WriteChunkWatermarks(ops, Watermarks{}));
  } else if (!s.ok()) {
    return s;
  } else {
    if (v.size() != 8) return DataLossError("meta format_version is not 8 bytes");
    uint64_t version = GetLE64(v.data());
    if (version >= 3 && version <= 5) {
      // Formats 3 to 5 kept every fingerprint in its B-tree; format 3 every posting too: those
      // watermarks are at the last document (FORMAT.md, "The write buffer").
      StatusOr<Watermarks> last = WatermarksAtLastId(ops, dbis_.documents, "documents");
      if (!last.ok()) return last.status();
      const Watermarks& at_last = *last;
      SHINGLED_RETURN_IF_ERROR(WriteFingerprintWatermarks(ops, at_last));
      if (version == 3 || version == 4) {
        Watermarks marks = at_last;
        if (version == 4) SHINGLED_RETURN_IF_ERROR(ReadFormat4Watermarks(ops, &marks));
        SHINGLED_RETURN_IF_ERROR(WriteWatermarks(ops, marks));
      }
    }
    if (version >= 3 && version < 7) {
      // Formats 3 to 6 filed each link under both documents; format 7 under the later one.
      SHINGLED_RETURN_IF_ERROR(DropReverseLinks(ops));
    }
    if (version >= 3 && version < 8) {
      // Format 8 gave sweeps a scope.
      SHINGLED_RETURN_IF_ERROR(internal::UpgradeSweepsToFormat8(ops));
    }
    if (version >= 3 && version < 9) {
      // Format 9 added the file-chunk graph: `chunk_docs` and `doc_chunks` were created empty
      // above (the documents stored so far have no chunks until seen again), and the chunking
      // parameters, recorded now as the caller's.
      for (const ParamField& f : ParamFields(params_, polynomial_)) {
        if (std::string_view(f.key).starts_with("param.chunk_")) {
          SHINGLED_RETURN_IF_ERROR(ops.Put(dbis_.meta, f.key, Le64(f.value), 0, "meta"));
        }
      }
    }
    if (version >= 3 && version < 10) {
      // Format 10 added the verification samples (store/verify.cc) and the template
      // tables (FORMAT.md, "Templates").
      SHINGLED_RETURN_IF_ERROR(internal::UpgradeVerifySamplesToFormat10(ops, params_));
      SHINGLED_RETURN_IF_ERROR(internal::UpgradeToFormat10Templates(ops));
    }
    if (version >= 3 && version < 11) {
      // Format 11 buffered `chunk_docs`: before, its B-tree held every posting, so the
      // chunk watermarks are at the last document.
      StatusOr<Watermarks> at_last = WatermarksAtLastId(ops, dbis_.doc_chunks, "doc_chunks");
      if (!at_last.ok()) return at_last.status();
      SHINGLED_RETURN_IF_ERROR(WriteChunkWatermarks(ops, *at_last));
    }
    if (version >= 3 && version < 14) {
      // Format 14 indexed each representative's documents (FORMAT.md, "Representatives").
      SHINGLED_RETURN_IF_ERROR(internal::BuildRepDocs(ops));
    }
    if (version >= 3 && version < kFormatVersion) {
      SHINGLED_RETURN_IF_ERROR(
          ops.Put(dbis_.meta, "format_version", Le64(kFormatVersion), 0, "meta"));
      version = kFormatVersion;
    }
    if (version != kFormatVersion) {
      return FailedPreconditionError("store " + dir_ + " has format version " + std::to_string(version) +
                                     ", this build reads version " + std::to_string(kFormatVersion));
    }
    for (const ParamField& f : ParamFields(params_, polynomial_)) {
      s = ops.Get(dbis_.meta, f.key, &v, std::string("meta ") + f.key);
      if (s.code() == StatusCode::kNotFound) return DataLossError(std::string("meta lacks ") + f.key);
      SHINGLED_RETURN_IF_ERROR(s);
      if (v.size() != 8) return DataLossError(std::string("meta ") + f.key + " is not 8 bytes");
      uint64_t stored = GetLE64(v.data());
      if (stored != f.value) {
        return FailedPreconditionError(
            "store " + dir_ + " was made with " + (f.key + 6) + " = " + std::to_string(stored) +
            ", not " + std::to_string(f.value) +
            ": sketches made with other parameters are not comparable; use the store's "
            "parameters or another store");
      }
    }
    s = ops.Get(dbis_.meta, kLargestClusterKey, &v, "meta largest_cluster");
    if (s.code() == StatusCode::kNotFound) {
      // A store written before the largest cluster was kept: count it once (FORMAT.md, "Meta").
      StatusOr<uint64_t> largest = LargestClusterByScan(ops);
      if (!largest.ok()) return largest.status();
      SHINGLED_RETURN_IF_ERROR(ops.Put(dbis_.meta, kLargestClusterKey, Le64(*largest), 0, "meta"));
    } else if (!s.ok()) {
      return s;
    }
  }
  return LmdbStatus(txn.Commit(), "commit open transaction");
}

namespace {

// What the writer's candidate search learnt of one indexed sample value of the page: its entry
// in the stop list (listed, with its count there) and, when it was read, how many postings it had
// (`over`: more than the common-value limit; `postings` is then not exact).
struct SampleValueState {
  uint64_t value = 0;
  bool listed = false;
  uint64_t listed_count = 0;
  bool read = false;
  bool over = false;
  uint64_t postings = 0;
};

// The entries a batch adds to one fingerprint index, in the order added, with a hash table for
// the batch's own lookups (open addressing on the fingerprint's low half, which is uniform).
class BatchFingerprintTable {
 public:
  // The document `fp` maps to, or 0.
  DocId Find(const dedup::Fingerprint128& fp) const {
    if (slots_.empty()) return 0;
    for (size_t i = fp.low & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == 0) return 0;
      const FingerprintEntry& e = entries_[slots_[i] - 1];
      if (e.fp == fp) return e.doc;
    }
  }
  // REQUIRES: Find(fp) == 0.
  void Add(const dedup::Fingerprint128& fp, DocId doc) {
    if (2 * (entries_.size() + 1) > slots_.size()) Grow();
    entries_.push_back(FingerprintEntry{fp, doc});
    Place(entries_.size() - 1);
  }
  std::vector<FingerprintEntry> Take() {
    slots_.clear();
    return std::move(entries_);
  }

 private:
  void Place(size_t entry) {
    size_t i = entries_[entry].fp.low & (slots_.size() - 1);
    while (slots_[i] != 0) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = static_cast<uint32_t>(entry + 1);
  }
  void Grow() {
    slots_.assign(std::max<size_t>(1024, 2 * slots_.size()), 0);
    for (size_t e = 0; e < entries_.size(); ++e) Place(e);
  }
  std::vector<FingerprintEntry> entries_;
  std::vector<uint32_t> slots_;  // entries_ index + 1; 0: empty
};

// One write batch: the decision for each page (docs/METHOD.md, "The decision").
class BatchWriter {
 public:
  BatchWriter(TxnOps& ops, StoreImpl& store)
      : ops_(ops),
        store_(store),
        d_(ops.dbis()),
        postings_(ops),
        judge_(ops, store.options_, nullptr, &chunk_docs_) {}

  Status Begin() {
    SHINGLED_RETURN_IF_ERROR(ReadCounter("count.documents", &documents_));
    SHINGLED_RETURN_IF_ERROR(ReadCounter("count.urls", &urls_));
    SHINGLED_RETURN_IF_ERROR(ReadCounter("count.versions", &versions_));
    SHINGLED_RETURN_IF_ERROR(ReadCounter("count.clusters", &clusters_));
    SHINGLED_RETURN_IF_ERROR(ReadCounter(kLargestClusterKey, &largest_cluster_));
    SHINGLED_RETURN_IF_ERROR(LastId(d_.documents, "documents", kLastDocumentKey, &next_doc_));
    SHINGLED_RETURN_IF_ERROR(LastId(d_.url_names, "url_names", kLastUrlKey, &next_url_));
    ++next_doc_;
    ++next_url_;
    for (auto [cursor, dbi] :
         {std::pair{&urls_cursor_, d_.urls}, std::pair{&fp_cursors_[kFpIdentical], d_.fp_identical},
          std::pair{&fp_cursors_[kFpLexical], d_.fp_lexical},
          std::pair{&fp_cursors_[kFpShingle], d_.fp_shingle}}) {
      if (int rc = cursor->Open(ops_.txn(), dbi); rc != 0) return ops_.Fail(rc, "cursor");
    }
    SHINGLED_RETURN_IF_ERROR(store_.LoadStopList(ops_));
    StatusOr<std::shared_ptr<const WriteBuffer>> buffer = store_.WriterBuffer(ops_);
    if (!buffer.ok()) return buffer.status();
    buffer_ = std::move(buffer).value();
    postings_.set_buffer(buffer_.get());
    chunk_docs_.set_marks(&buffer_->chunk_marks);
    judge_.set_buffer(buffer_.get());
    judge_.set_work(&store_.writer_work_);
    judge_.set_memory(store_.WriterJudgeMemory(ops_));
    StatusOr<KeyFilter*> filter = store_.WriterKeyFilter(ops_);
    if (!filter.ok()) return filter.status();
    filter_ = *filter;
    postings_.set_filter(filter_);
    return OkStatus();
  }

  // Reads, in key order, the stored postings that candidate search will read for the pages
  // whose content is new to the store (FORMAT.md, "The writer's batch"). The pages whose
  // raw bytes are stored already, or repeat an earlier page of the batch, need none: their
  // fingerprints are looked up first, in key order too.
  Status Prefetch(std::span<const PageInput> pages) {
    std::vector<std::pair<std::string, size_t>> fresh;
    for (size_t i = 0; i < pages.size(); ++i) {
      const PageInput& page = pages[i];
      if (page.revisit || ClassifyHttpStatus(page.http_status) != StatusClass::kContent ||
          page.sketch.empty()) {
        continue;
      }
      if (!ValidatePage(page, store_.params_).ok()) continue;
      fresh.emplace_back(FingerprintKey(page.sketch.identical), i);
    }
    std::sort(fresh.begin(), fresh.end());
    const uint64_t limit = store_.options_.common_value_limit;
    std::array<std::vector<uint64_t>, BatchPostings::kIndexes> values;
    for (size_t j = 0; j < fresh.size(); ++j) {
      if (j > 0 && fresh[j].first == fresh[j - 1].first) continue;
      const dedup::Sketch& sketch = pages[fresh[j].second].sketch;
      if (buffer_->FindFingerprint(kFpIdentical, sketch.identical) != 0) continue;
      if (MayHold(kFpIdentical, sketch.identical)) {
        bool found = false;
        std::string_view v;
        if (int rc = Seek(fp_cursors_[kFpIdentical], fresh[j].first, &found, &v); rc != 0)
          return ops_.Fail(rc, "fingerprint");
        if (found) continue;
      }
      auto& f = values[BatchPostings::kFeatures];
      f.insert(f.end(), sketch.features.begin(), sketch.features.end());
      auto& ss = values[BatchPostings::kSupershingles];
      ss.insert(ss.end(), sketch.supershingles.begin(), sketch.supershingles.end());
      for (uint64_t value : sketch.sample.values) {
        if (!IndexedSampleValue(value, sketch.sample.log2_modulus)) continue;
        auto it = store_.stop_list_.find(value);
        if (it == store_.stop_list_.end() || it->second <= limit) values[BatchPostings::kSamples].push_back(value);
      }
    }
    const size_t cap = FeatureReadCap(store_.options_);
    SHINGLED_RETURN_IF_ERROR(postings_.Prefetch(BatchPostings::kFeatures, std::move(values[BatchPostings::kFeatures]), cap));
    SHINGLED_RETURN_IF_ERROR(
        postings_.Prefetch(BatchPostings::kSupershingles, std::move(values[BatchPostings::kSupershingles]), cap));
    return postings_.Prefetch(BatchPostings::kSamples, std::move(values[BatchPostings::kSamples]), limit);
  }

  Status Finish() {
    BatchFingerprints fps, fp_put;
    for (int i = 0; i < kFingerprintIndexes; ++i) fps[i] = batch_fps_[i].Take();
    StatusOr<std::shared_ptr<const WriteBuffer>> next = postings_.FlushToBuffer(
        next_doc_ - 1, !store_.options_.write_buffer, std::move(fps), &fp_put);
    if (!next.ok()) return next.status();
    for (int i = 0; i < kFingerprintIndexes; ++i) {
      SHINGLED_RETURN_IF_ERROR(PutFingerprints(i, fp_put[i]));
      if (filter_ != nullptr) {
        filter_->AddAll(fp_put[i],
                        [i](const FingerprintEntry& e) { return KeyFilter::Fingerprint(i, e.fp); });
      }
    }
    SHINGLED_RETURN_IF_ERROR(WriteWatermarks(ops_, (*next)->marks));
    SHINGLED_RETURN_IF_ERROR(WriteFingerprintWatermarks(ops_, (*next)->fp_marks));
    // `chunk_docs` through the buffer too; backfilled postings below their watermark
    // go to the B-tree at once.
    std::vector<BufferEntry> chunk_batch, chunk_direct, chunk_put;
    chunk_docs_.Take(&chunk_batch, &chunk_direct);
    std::shared_ptr<const WriteBuffer> advanced = internal::AdvanceChunkBuffer(
        **next, std::move(chunk_batch), next_doc_ - 1, !store_.options_.write_buffer, &chunk_put);
    SHINGLED_RETURN_IF_ERROR(internal::PutChunkPostings(ops_, chunk_put));
    SHINGLED_RETURN_IF_ERROR(internal::PutChunkPostings(ops_, chunk_direct));
    SHINGLED_RETURN_IF_ERROR(WriteChunkWatermarks(ops_, advanced->chunk_marks));
    store_.made_buffer_ = std::move(advanced);
    for (auto& [id, rec] : sweeps_) {
      SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.sweeps, SweepKey(id), EncodeSweep(rec), 0, "sweeps"));
    }
    SHINGLED_RETURN_IF_ERROR(WriteCounter("count.documents", documents_));
    SHINGLED_RETURN_IF_ERROR(WriteCounter("count.urls", urls_));
    SHINGLED_RETURN_IF_ERROR(WriteCounter("count.versions", versions_));
    SHINGLED_RETURN_IF_ERROR(WriteCounter(kLargestClusterKey, largest_cluster_));
    return WriteCounter("count.clusters", clusters_);
  }

  // Page-level problems go to result->status and write nothing; a returned error fails the
  // batch.
  Status ApplyPage(const PageInput& page, PageResult* result);

  // The sweep's record in the batch's cache (never null), loaded on first use. NotFound if
  // unknown.
  StatusOr<SweepRecord*> LoadSweep(SweepId id) { return CachedSweep(ops_, &sweeps_, id); }

  // Appends a version to the URL and counts it in its sweep.
  // `new_url`: the URL was added by this page, so its key sorts after every other version;
  // `new_doc`: likewise for the document in `doc_urls`. Both append to the last leaf page (full
  // pages instead of half-full ones after a split, no search from the root).
  Status AddVersion(UrlId url, uint32_t seq, const VersionRecord& v, SweepRecord* sweep, bool new_url = false,
                    bool new_doc = false) {
    SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.versions, VersionKey(url, seq), EncodeVersion(v), new_url ? MDB_APPEND : 0, "versions"));
    if (v.doc != 0) {
      judge_.DocumentUrlAdded(v.doc);
      // MDB_APPEND without MDB_NODUPDATA: an out-of-order key would be an error, not ignored.
      SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.doc_urls, Key64(v.doc).view(), Key64(url).view(),
                                        new_doc ? MDB_APPEND : MDB_NODUPDATA, "doc_urls"));
    }
    sweep->Count(v.verdict);
    // A sweep starts no later than its earliest version (a WARC's records predate its import).
    if (v.date < sweep->start) sweep->start = v.date;
    ++versions_;
    return OkStatus();
  }

  // Removes version `seq` of `url` (one without a document: nothing in `doc_urls` names it),
  // moving the URL's later versions down one seq so that its seqs stay 1, 2, ... without a gap.
  Status RemoveVersion(UrlId url, uint32_t seq, Verdict verdict, SweepRecord* sweep) {
    uint32_t last_seq = 0;
    StatusOr<VersionRecord> last = LastVersion(ops_, url, &last_seq);
    if (!last.ok()) return last.status();
    for (uint32_t s = seq; s < last_seq; ++s) {
      std::string_view next;
      SHINGLED_RETURN_IF_ERROR(ops_.Get(d_.versions, VersionKey(url, s + 1), &next, "versions"));
      // Copied: the value is valid only until the next write.
      const std::string value(next);
      SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.versions, VersionKey(url, s), value, 0, "versions"));
    }
    SHINGLED_RETURN_IF_ERROR(ops_.Del(d_.versions, VersionKey(url, last_seq), {}, "versions"));
    sweep->Uncount(verdict);
    --versions_;
    return OkStatus();
  }

 private:
  Status ReadCounter(const char* key, uint64_t* out) {
    std::string_view v;
    SHINGLED_RETURN_IF_ERROR(ops_.Get(d_.meta, key, &v, std::string("meta ") + key));
    if (v.size() != 8) return DataLossError(std::string("meta ") + key + " is not 8 bytes");
    *out = GetLE64(v.data());
    return OkStatus();
  }
  Status WriteCounter(const char* key, uint64_t value) {
    return ops_.Put(d_.meta, key, Le64(value), 0, "meta");
  }
  // The last id given in `dbi` (LastAllocatedId).
  Status LastId(MDB_dbi dbi, const char* what, const char* meta_key, uint64_t* out) {
    StatusOr<uint64_t> last = internal::LastAllocatedId(ops_, dbi, what, meta_key);
    if (!last.ok()) return last.status();
    *out = *last;
    return OkStatus();
  }

  // Looks `key` up through `c` and leaves the cursor on the leaf where the key is or would go
  // (MDB_SET_RANGE), so that PutThrough(c, key) right after finds that leaf without a second
  // descent from the root (FORMAT.md, "The writer's batch"). Sets `*found` and, when
  // found, `*value`; returns an LMDB code (0 when the key is absent).
  int Seek(const Cursor& c, std::string_view key, bool* found, std::string_view* value) {
    MDB_val k = Val(key), v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
    *found = rc == 0 && View(k) == key;
    if (*found) *value = View(v);
    return rc == MDB_NOTFOUND ? 0 : rc;
  }
  // Puts `sorted` into fingerprint index `index` through its cursor: in key order, consecutive
  // keys on one leaf are put without a descent from the root. A key already there is left as it
  // is (only the first document with a fingerprint files it; check reports any other).
  Status PutFingerprints(int index, const std::vector<FingerprintEntry>& sorted) {
    char key[16];
    for (const FingerprintEntry& e : sorted) {
      PutBE64(key, e.fp.high);
      PutBE64(key + 8, e.fp.low);
      Key64 doc(e.doc);
      MDB_val k{sizeof key, key}, v = Val(doc.view());
      int rc = mdb_cursor_put(fp_cursors_[index].get(), &k, &v, MDB_NOOVERWRITE);
      if (rc != 0 && rc != MDB_KEYEXIST) return ops_.Fail(rc, "fingerprint index");
    }
    return OkStatus();
  }

  // Puts a new key through `c` (MDB_NOOVERWRITE: a key already there is left as it is).
  Status PutThrough(const Cursor& c, std::string_view key, std::string_view value, const char* what) {
    MDB_val k = Val(key), v = Val(value);
    int rc = mdb_cursor_put(c.get(), &k, &v, MDB_NOOVERWRITE);
    if (rc != 0 && rc != MDB_KEYEXIST) return ops_.Fail(rc, what);
    return OkStatus();
  }

  // LookupUrl, then the insert of a new URL through the cursor of the lookup.
  StatusOr<UrlId> FindOrAddUrl(std::string_view url, bool* added) {
    *added = false;
    const std::string url_key = UrlKey(url);
    bool found = false;
    std::string_view v;
    if (int rc = Seek(urls_cursor_, url_key, &found, &v); rc != 0) return ops_.Fail(rc, "url");
    if (found) {
      if (v.size() != 8) return DataLossError("urls value is not 8 bytes");
      UrlId id = GetBE64(v.data());
      if (url.size() > kMaxWholeUrlKey) {
        std::string_view name;
        SHINGLED_RETURN_IF_ERROR(ops_.Get(d_.url_names, Key64(id).view(), &name, "url_names"));
        if (name != url) return InternalError("URL hash collision with url id " + std::to_string(id));
      }
      return id;
    }
    *added = true;
    UrlId fresh = next_url_++;
    Key64 key(fresh);
    SHINGLED_RETURN_IF_ERROR(PutThrough(urls_cursor_, url_key, key.view(), "urls"));
    SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.url_names, key.view(), url, MDB_APPEND, "url_names"));
    judge_.UrlAdded(url);
    ++urls_;
    return fresh;
  }

  // The document an exact fingerprint maps to in fingerprint index `index`, or 0: the batch's
  // entries, the write buffer's, then the B-tree's (a fingerprint is in one of them).
  StatusOr<DocId> LookupFingerprint(int index, const dedup::Fingerprint128& fp) {
    if (DocId d = batch_fps_[index].Find(fp); d != 0) return d;
    if (DocId d = buffer_->FindFingerprint(index, fp); d != 0) return d;
    if (!MayHold(index, fp)) return DocId{0};
    bool found = false;
    std::string_view v;
    if (int rc = Seek(fp_cursors_[index], FingerprintKey(fp), &found, &v); rc != 0)
      return ops_.Fail(rc, "fingerprint");
    if (!found) return DocId{0};
    if (v.size() != 8) return DataLossError("fingerprint value is not 8 bytes");
    return GetBE64(v.data());
  }
  // Whether fingerprint index `index`'s B-tree may hold `fp` (the key filter's answer; true
  // without one).
  bool MayHold(int index, const dedup::Fingerprint128& fp) const {
    return filter_ == nullptr || filter_->MayHold(KeyFilter::Fingerprint(index, fp));
  }
  // Adds the fingerprint entries of the new document `doc`, whose record is `rec`, to the batch's.
  void FileFingerprints(DocId doc, const DocumentRecord& rec) {
    batch_fps_[kFpIdentical].Add(rec.identical, doc);
    if (rec.owns_lexical) batch_fps_[kFpLexical].Add(rec.lexical, doc);
    if (rec.owns_shingle) batch_fps_[kFpShingle].Add(rec.shingle, doc);
  }

  Status Union(DocId a, DocId b, ClusterId* root) {
    int64_t delta = 0;
    uint64_t merged_size = 0;
    StatusOr<ClusterId> r = UnionClusters(ops_, a, b, &delta, &merged_size);
    if (!r.ok()) return r.status();
    clusters_ = static_cast<uint64_t>(static_cast<int64_t>(clusters_) + delta);
    // Clusters only grow (nothing is ever removed): the largest is the largest merge result.
    largest_cluster_ = std::max(largest_cluster_, merged_size);
    *root = *r;
    return OkStatus();
  }

  // Candidates for the new document `doc` from the feature, super-shingle and sample indexes
  // (sample values in more than common_value_limit documents skipped), ranked by RankCandidates
  // into candidates_; sample_states_ receives the state of each indexed sample value, for
  // CountSample. Then files the page's postings: every read saw the postings of the store and
  // of the batch's earlier pages, not the page's own.
  Status FindCandidates(const dedup::Sketch& sketch, DocId doc, std::string_view url,
                        bool* truncated) {
    candidates_.clear();
    sample_states_.clear();
    hits_.clear();
    size_t count = 0;
    bool more = false;
    const size_t cap = FeatureReadCap(store_.options_);
    indexed_.clear();
    for (uint64_t value : sketch.sample.values) {
      if (IndexedSampleValue(value, sketch.sample.log2_modulus)) indexed_.push_back(value);
    }
    // Score = 4 per shared feature (fungibility is decided by features) + 1 per shared super
    // shingle or sample value.
    for (auto [index, values, weight] :
         {std::tuple{BatchPostings::kFeatures, &sketch.features, kFeatureHit},
          std::tuple{BatchPostings::kSupershingles, &sketch.supershingles, kSuperShingleHit}}) {
      for (uint64_t value : *values) {
        found_.clear();
        SHINGLED_RETURN_IF_ERROR(postings_.Read(index, value, cap, &found_, &count, &more));
        for (DocId d : found_) hits_.emplace_back(d, weight);
      }
    }
    // A value is used when it has at most common_value_limit postings. CountSample needs every
    // value's stop-list entry to keep the counts exact; a listed value over the limit is not
    // read at all.
    const uint64_t limit = store_.options_.common_value_limit;
    for (uint64_t value : indexed_) {
      SampleValueState st;
      st.value = value;
      if (auto it = store_.stop_list_.find(value); it != store_.stop_list_.end()) {
        st.listed = true;
        st.listed_count = it->second;
      }
      if (!st.listed || st.listed_count <= limit) {
        found_.clear();
        SHINGLED_RETURN_IF_ERROR(postings_.Read(BatchPostings::kSamples, value, limit, &found_, &count, &more));
        st.read = true;
        st.over = more;
        st.postings = count;
        if (!more) {
          for (DocId d : found_) hits_.emplace_back(d, kSampleHit);
        }
      }
      sample_states_.push_back(st);
    }
    // Room kept for containment candidates (the file-chunk graph), which the points
    // above do not rank: a page inside a much longer one shares few of its sample values. They
    // are scored whatever their points; the ranking fills the rest.
    const size_t max = store_.options_.max_candidates;
    SHINGLED_RETURN_IF_ERROR(
        internal::FindContainment(store_.options_, judge_, sketch.chunks, internal::UrlHost(url),
                                  doc, internal::ContainmentRoom(max), &containment_,
                                  &containment_truncated_));
    internal::RankPageCandidates(&hits_, containment_, sketch.sample, max, &candidates_, truncated,
                                 &left_out_, &below_floor_);
    for (uint64_t value : sketch.features) postings_.File(BatchPostings::kFeatures, value, doc);
    for (uint64_t value : sketch.supershingles) postings_.File(BatchPostings::kSupershingles, value, doc);
    for (const SampleValueState& st : sample_states_) postings_.File(BatchPostings::kSamples, st.value, doc);
    return OkStatus();
  }


  // Keeps `common_values` equal to the posting counts of the page's indexed sample values
  // (FORMAT.md, invariant 5), from what candidate search read before. REQUIRES: the page's
  // postings filed (FindCandidates).
  Status CountSample() {
    const uint64_t limit = store_.options_.common_value_limit;
    for (const SampleValueState& st : sample_states_) {
      uint64_t after = 0;
      if (st.listed) {
        // The listed count equals the postings before this page (invariant 5).
        after = st.listed_count + 1;
      } else if (st.read && !st.over) {
        after = st.postings + 1;
        if (after <= limit) continue;
      } else {
        // Over the limit but not listed: the store was written under a higher limit. Count.
        std::vector<DocId> all;
        size_t n = 0;
        bool more = false;
        SHINGLED_RETURN_IF_ERROR(postings_.Read(BatchPostings::kSamples, st.value, SIZE_MAX, &all, &n, &more));
        after = n;
      }
      SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.common_values, Key64(st.value).view(), Le64(after), 0, "common_values"));
      store_.stop_list_[st.value] = after;
    }
    return OkStatus();
  }

  // A content page's document (ApplyPage): identical bytes are the stored document `doc` seen
  // again; other content makes a new document, judged. Then its cluster and matches.
  Status SeenAgain(DocId doc, const PageInput& page, const VersionRecord* last, PageResult* result);
  StatusOr<DocId> NewDocument(const PageInput& page, PageResult* result);
  Status FinishContent(const PageInput& page, DocId doc, const VersionRecord* last,
                       PageResult* result);
  // The page's candidates judged (internal::JudgePageCandidates) on this writer's transaction.
  class JudgedPage;
  Status ScoreCandidates(const dedup::Sketch& sketch, DocId doc, const std::vector<DocId>& candidates,
                         PageResult* result);

  // A revisit (PageInput::revisit): a version of the last document of the URL it refers to.
  Status ApplyRevisit(const PageInput& page, SweepRecord* sweep, PageResult* result);
  // A failed fetch or a redirect (`kind`) of the URL `url`, whose last version (if any) is
  // `last` at `last_seq`: a version without content of its own, and no document, posting or
  // cluster work.
  Status ApplyAttempt(const PageInput& page, StatusClass kind, UrlId url, bool new_url,
                      uint32_t last_seq, const std::optional<VersionRecord>& last,
                      SweepRecord* sweep, PageResult* result);

  // Calls `visit` on the URL's versions from seq `from_seq` back to its first, newest first,
  // until `visit` returns true.
  template <typename Visit>
  Status WalkVersionsBack(UrlId url, uint32_t from_seq, Visit visit) {
    Cursor c;
    if (int rc = c.Open(ops_.txn(), d_.versions); rc != 0) return ops_.Fail(rc, "versions cursor");
    std::string key = VersionKey(url, from_seq);
    MDB_val k = Val(key), v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_KEY);
    while (rc == 0) {
      UrlId at = 0;
      uint32_t seq = 0;
      SHINGLED_RETURN_IF_ERROR(DecodeVersionKey(View(k), &at, &seq));
      if (at != url) break;
      StatusOr<VersionRecord> ver = DecodeVersion(View(v));
      if (!ver.ok()) return ver.status();
      if (visit(*ver)) return OkStatus();
      rc = mdb_cursor_get(c.get(), &k, &v, MDB_PREV);
    }
    if (rc != 0 && rc != MDB_NOTFOUND) return ops_.Fail(rc, "versions");
    return OkStatus();
  }

  // The last document of a URL: the document of its latest version that has one; 0 if none.
  StatusOr<DocId> LastDocument(UrlId url) {
    uint32_t seq = 0;
    StatusOr<VersionRecord> last = LastVersion(ops_, url, &seq);
    if (!last.ok()) return last.status().code() == StatusCode::kNotFound ? StatusOr<DocId>(DocId{0}) : last.status();
    DocId doc = 0;
    SHINGLED_RETURN_IF_ERROR(WalkVersionsBack(url, seq, [&doc](const VersionRecord& ver) {
      doc = ver.doc;
      return doc != 0;
    }));
    return doc;
  }

  // Walks the URL's versions of `sweep` back from `last_seq`; the first that `same` accepts is
  // the page applied before: `result` then answers it as a replay (`replayed` set).
  template <typename Same>
  Status MaybeReplay(UrlId url, uint32_t last_seq, SweepId sweep, Same same, PageResult* result) {
    std::optional<VersionRecord> before;
    SHINGLED_RETURN_IF_ERROR(WalkVersionsBack(url, last_seq, [&](const VersionRecord& ver) {
      if (ver.sweep != sweep) return true;  // older sweeps: no replay
      if (same(ver)) before = ver;
      return before.has_value();
    }));
    if (!before) return OkStatus();
    result->replayed = true;
    result->verdict = before->verdict;
    result->doc = before->doc;
    if (before->doc != 0) {
      StatusOr<ClusterId> cl = FindCluster(ops_, before->doc);
      if (!cl.ok()) return cl.status();
      result->cluster = *cl;
    }
    return OkStatus();
  }

  TxnOps& ops_;
  StoreImpl& store_;
  const internal::Dbis& d_;
  std::shared_ptr<const WriteBuffer> buffer_;  // the buffer this batch began with
  KeyFilter* filter_ = nullptr;                // the writer's key filter, if any
  uint64_t documents_ = 0, urls_ = 0, versions_ = 0, clusters_ = 0;
  uint64_t largest_cluster_ = 0;  // documents in the largest cluster
  DocId next_doc_ = 1;
  UrlId next_url_ = 1;
  SweepCache sweeps_;
  // Reused from page to page: no allocation per page once warm.
  std::vector<DocId> candidates_;
  std::vector<SampleValueState> sample_states_;
  std::vector<uint64_t> indexed_;  // the page's indexed sample values (FindCandidates)
  std::vector<std::pair<DocId, uint32_t>> hits_;
  std::vector<DocId> found_;
  dedup::Sketch scratch_sketch_;
  // The candidates the last FindCandidates left out, and a candidate's verify sample.
  uint64_t left_out_ = 0;
  uint64_t below_floor_ = 0;  // the candidates the last FindCandidates did not rank (SampleOnlyFloor)
  std::vector<uint32_t> scratch_verify_;
  // The page's containment candidates (FindCandidates), with their bytes in common.
  std::vector<internal::ContainmentCandidate> containment_;
  bool containment_truncated_ = false;  // more documents shared its chunks than were read
  BatchPostings postings_;
  // A lookup and the insert of the same key share this one (Seek, PutThrough).
  Cursor urls_cursor_;
  // The fingerprint indexes' (kFpIdentical, kFpLexical, kFpShingle): their lookups, and the
  // commit's puts (PutFingerprints). The batch's entries go to batch_fps_ until then.
  std::array<Cursor, kFingerprintIndexes> fp_cursors_;
  std::array<BatchFingerprintTable, kFingerprintIndexes> batch_fps_;
  // The batch's `chunk_docs` postings, given to the write buffer by Finish.
  internal::BatchChunkDocs chunk_docs_;
  // The batch's template judge (bytes in common of each page and its matches), whose cache
  // lasts the batch.
  internal::TemplateJudge judge_;
};


Status BatchWriter::ApplyPage(const PageInput& page, PageResult* result) {
  // Validation first: a page-level problem must not leave half a page behind.
  if (Status s = ValidatePage(page, store_.params_); !s.ok()) {
    result->status = s;
    return OkStatus();
  }
  StatusOr<SweepRecord*> loaded = LoadSweep(page.sweep);
  if (!loaded.ok()) {
    if (loaded.status().code() != StatusCode::kNotFound) return loaded.status();
    result->status = NotFoundError("no sweep with id " + std::to_string(page.sweep));
    return OkStatus();
  }
  SweepRecord* sweep = *loaded;
  if (!sweep->open) {
    result->status = FailedPreconditionError("sweep " + sweep->name + " is closed");
    return OkStatus();
  }
  const StatusClass kind = ClassifyHttpStatus(page.http_status);
  const bool dead = kind == StatusClass::kDead;
  if (AppliesAsRevisit(page)) return ApplyRevisit(page, sweep, result);

  bool new_url = false;
  StatusOr<UrlId> url = FindOrAddUrl(page.url, &new_url);
  if (!url.ok()) return url.status();
  result->url = *url;
  uint32_t last_seq = 0;
  std::optional<VersionRecord> last;
  if (new_url) {
    // A URL added just now has no version: nothing to look up.
  } else if (StatusOr<VersionRecord> lv = LastVersion(ops_, *url, &last_seq); lv.ok()) {
    last = std::move(lv).value();
  } else if (lv.status().code() != StatusCode::kNotFound) {
    return lv.status();
  }
  if (last) result->previous_doc = last->doc;
  if (kind == StatusClass::kFailed || kind == StatusClass::kRedirect) {
    return ApplyAttempt(page, kind, *url, new_url, last_seq, last, sweep, result);
  }

  const dedup::Sketch& sketch = page.sketch;
  StatusOr<DocId> identical =
      dead ? StatusOr<DocId>(DocId{0}) : LookupFingerprint(kFpIdentical, sketch.identical);
  if (!identical.ok()) return identical.status();

  // Idempotency: the same (URL, sweep, content) is already recorded in this sweep.
  if (last) {
    SHINGLED_RETURN_IF_ERROR(MaybeReplay(
        *url, last_seq, page.sweep,
        [&](const VersionRecord& ver) {
          return ReplaysPage(ver, page, dead, *identical);
        },
        result));
    if (result->replayed) return OkStatus();
  }

  VersionRecord version;
  version.sweep = page.sweep;
  version.date = page.date;
  version.http_status = static_cast<uint32_t>(page.http_status);
  version.canonical_link = page.canonical_link;

  if (dead) {
    version.doc = 0;
    version.verdict = Verdict::kGone;
    result->verdict = Verdict::kGone;
    return AddVersion(*url, last_seq + 1, version, sweep, new_url);
  }

  const VersionRecord* previous = last ? &*last : nullptr;
  const bool new_doc = *identical == 0;
  DocId doc = *identical;
  if (new_doc) {
    StatusOr<DocId> made = NewDocument(page, result);
    if (!made.ok()) return made.status();
    doc = *made;
  } else {
    SHINGLED_RETURN_IF_ERROR(SeenAgain(doc, page, previous, result));
  }
  SHINGLED_RETURN_IF_ERROR(FinishContent(page, doc, previous, result));
  version.doc = doc;
  version.verdict = result->verdict;
  return AddVersion(*url, last_seq + 1, version, sweep, new_url, new_doc);
}

Status BatchWriter::ApplyAttempt(const PageInput& page, StatusClass kind, UrlId url, bool new_url,
                                 uint32_t last_seq, const std::optional<VersionRecord>& last,
                                 SweepRecord* sweep, PageResult* result) {
  const VersionRecord version = AttemptVersion(page, kind, last ? &*last : nullptr);
  result->verdict = version.verdict;
  result->doc = version.doc;
  result->redirect_target = version.redirect_target;
  if (version.doc != 0) {
    StatusOr<ClusterId> cluster = FindCluster(ops_, version.doc);
    if (!cluster.ok()) return cluster.status();
    result->cluster = *cluster;
  }
  if (last && ReplaysAttempt(*last, version)) {
    result->replayed = true;
    return OkStatus();
  }
  return AddVersion(url, last_seq + 1, version, sweep, new_url);
}

Status BatchWriter::ApplyRevisit(const PageInput& page, SweepRecord* sweep, PageResult* result) {
  const std::string& target = page.revisit_of.empty() ? page.url : page.revisit_of;
  // The target first, so that a failed revisit adds no URL.
  StatusOr<UrlId> target_url = LookupUrl(ops_, target);
  if (!target_url.ok() && target_url.status().code() != StatusCode::kNotFound) return target_url.status();
  StatusOr<DocId> doc = target_url.ok() ? LastDocument(*target_url) : StatusOr<DocId>(DocId{0});
  if (!doc.ok()) return doc.status();
  if (*doc == 0) {
    result->status = NoDocumentToRevisit(page);
    return OkStatus();
  }

  bool new_url = false;
  StatusOr<UrlId> url = FindOrAddUrl(page.url, &new_url);
  if (!url.ok()) return url.status();
  result->url = *url;
  uint32_t last_seq = 0;
  std::optional<VersionRecord> last;
  if (!new_url) {
    if (StatusOr<VersionRecord> lv = LastVersion(ops_, *url, &last_seq); lv.ok()) {
      last = std::move(lv).value();
    } else if (lv.status().code() != StatusCode::kNotFound) {
      return lv.status();
    }
  }
  if (last) {
    result->previous_doc = last->doc;
    SHINGLED_RETURN_IF_ERROR(MaybeReplay(
        *url, last_seq, page.sweep,
        [&](const VersionRecord& ver) { return ReplaysRevisit(ver, page, *doc); }, result));
    if (result->replayed) return OkStatus();
  }

  StatusOr<DocumentRecord> rec = ReadDocument(ops_, *doc);
  if (!rec.ok()) return rec.status();
  rec->first_seen = std::min(rec->first_seen, page.date);
  rec->last_seen = std::max(rec->last_seen, page.date);
  SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.documents, Key64(*doc).view(), EncodeDocument(*rec), 0, "documents"));

  result->doc = *doc;
  result->verdict = IdenticalVerdict(last ? &*last : nullptr, *doc);
  if (result->verdict == Verdict::kUnchanged) {
    result->previous_resemblance = 1.0;
  } else {
    // Another URL's content: what Apply answers for identical bytes.
    result->verdict = Verdict::kDuplicate;
    DocId holder = 0;
    StatusOr<DocumentRecord> own = ReadSketchHolder(ops_, *doc, &holder);
    if (!own.ok()) return own.status();
    const dedup::Sketch sketch = SketchOf(*own);
    result->matches.push_back(IdenticalMatch(*doc, sketch));
    if (last && last->doc != 0) {
      StatusOr<DocumentRecord> prev = ReadSketchHolder(ops_, last->doc, &holder);
      if (!prev.ok()) return prev.status();
      result->previous_resemblance = dedup::ResemblanceFromMinhashes(sketch, SketchOf(*prev));
    }
  }
  StatusOr<ClusterId> cluster = FindCluster(ops_, *doc);
  if (!cluster.ok()) return cluster.status();
  result->cluster = *cluster;

  VersionRecord version;
  version.sweep = page.sweep;
  version.date = page.date;
  version.http_status = static_cast<uint32_t>(page.http_status);
  version.canonical_link = page.canonical_link;
  version.doc = *doc;
  version.verdict = result->verdict;
  return AddVersion(*url, last_seq + 1, version, sweep, new_url);
}

// Identical bytes: the same document, seen again.
Status BatchWriter::SeenAgain(DocId doc, const PageInput& page, const VersionRecord* last,
                              PageResult* result) {
  const dedup::Sketch& sketch = page.sketch;
  StatusOr<DocumentRecord> rec = ReadDocument(ops_, doc);
  if (!rec.ok()) return rec.status();
  rec->first_seen = std::min(rec->first_seen, page.date);
  rec->last_seen = std::max(rec->last_seen, page.date);
  SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.documents, Key64(doc).view(), EncodeDocument(*rec), 0, "documents"));
  // A document stored before format 9 gets its chunks when seen again.
  SHINGLED_RETURN_IF_ERROR(internal::BackfillChunks(ops_, doc, sketch.chunks, chunk_docs_));
  result->verdict = IdenticalVerdict(last, doc);
  if (result->verdict == Verdict::kDuplicate) {
    result->matches.push_back(IdenticalMatch(doc, sketch));
  }
  return OkStatus();
}

// A new document. Exact equivalence first: no filter for those. Both fingerprints are looked up,
// for the record's ownership flags.
StatusOr<DocId> BatchWriter::NewDocument(const PageInput& page, PageResult* result) {
  const dedup::Sketch& sketch = page.sketch;
  DocId lexical = 0, shingle = 0;
  if (sketch.tokens > 0) {
    StatusOr<DocId> lex = LookupFingerprint(kFpLexical, sketch.lexical);
    if (!lex.ok()) return lex.status();
    lexical = *lex;
  }
  if (sketch.shingles > 0) {
    StatusOr<DocId> sh = LookupFingerprint(kFpShingle, sketch.shingle);
    if (!sh.ok()) return sh.status();
    shingle = *sh;
  }
  const ExactLevel exact = ExactLevelOf(sketch, lexical, shingle);
  const DocId equivalent = exact.equivalent;
  if (next_doc_ > kMaxDocId) {
    return ResourceExhaustedError("document ids exhausted: postings hold 48-bit ids (FORMAT.md)");
  }
  const DocId doc = next_doc_++;
  SHINGLED_RETURN_IF_ERROR(
      internal::PutChunks(ops_, doc, sketch.chunks, chunk_docs_));
  ++documents_;
  largest_cluster_ = std::max<uint64_t>(largest_cluster_, 1);  // a singleton, at least
  DocumentRecord rec;
  rec.bytes = sketch.bytes;
  rec.tokens = sketch.tokens;
  rec.shingles = sketch.shingles;
  rec.first_seen = rec.last_seen = page.date;
  rec.identical = sketch.identical;
  rec.lexical = sketch.lexical;
  rec.shingle = sketch.shingle;
  rec.owns_lexical = exact.owns_lexical;
  rec.owns_shingle = exact.owns_shingle;
  Key64 doc_key(doc);
  FileFingerprints(doc, rec);
  if (equivalent != 0) {
    DocId holder = 0;
    StatusOr<DocumentRecord> eq = ReadSketchHolder(ops_, equivalent, &holder);
    if (!eq.ok()) return eq.status();
    rec.rep = holder;
    SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.documents, doc_key.view(), EncodeDocument(rec), MDB_APPEND, "documents"));
    SHINGLED_RETURN_IF_ERROR(
        ops_.Put(d_.rep_docs, Key64(holder).view(), doc_key.view(), MDB_NODUPDATA, "rep_docs"));
    if (store_.options_.cluster_relations & kClusterExact) {
      ClusterId root = 0;
      SHINGLED_RETURN_IF_ERROR(Union(doc, equivalent, &root));
    }
    result->verdict = Verdict::kDuplicate;
    result->matches.push_back(
        EquivalentMatch(equivalent, exact.relation, sketch, SketchOf(*eq)));
  } else {
    rec.minhashes = sketch.minhashes;
    rec.features = sketch.features;
    rec.supershingles = sketch.supershingles;
    rec.sample = sketch.sample;
    SHINGLED_RETURN_IF_ERROR(
        FindCandidates(sketch, doc, page.url, &result->candidates_truncated));
    result->candidates_left_out = left_out_;
    result->candidates_below_floor = below_floor_;
    result->containment_truncated = containment_truncated_;
    SHINGLED_RETURN_IF_ERROR(
        internal::PutVerifySample(ops_, doc, sketch.verify_sample));
    SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.documents, doc_key.view(), EncodeDocument(rec), MDB_APPEND, "documents"));
    SHINGLED_RETURN_IF_ERROR(CountSample());
    SHINGLED_RETURN_IF_ERROR(ScoreCandidates(sketch, doc, candidates_, result));
  }
  return doc;
}

// The page's cluster, its resemblance to the URL's previous document, and its matches in order
// with their bytes in common.
Status BatchWriter::FinishContent(const PageInput& page, DocId doc, const VersionRecord* last,
                                  PageResult* result) {
  const dedup::Sketch& sketch = page.sketch;
  StatusOr<ClusterId> cluster = FindCluster(ops_, doc);
  if (!cluster.ok()) return cluster.status();
  result->cluster = *cluster;
  result->doc = doc;

  if (last && last->doc != 0) {
    if (last->doc == doc) {
      result->previous_resemblance = 1.0;
    } else {
      DocId holder = 0;
      StatusOr<DocumentRecord> prev = ReadSketchHolder(ops_, last->doc, &holder);
      if (!prev.ok()) return prev.status();
      result->previous_resemblance = dedup::ResemblanceFromMinhashes(sketch, SketchOf(*prev));
    }
  }

  // The exact levels, then verified, fungible, similar.
  SortMatches(&result->matches);
  result->matches_left_out = LimitMatches(store_.options_.max_matches, &result->matches);
  SHINGLED_RETURN_IF_ERROR(internal::FillMatchCommon(judge_, page.url, sketch.chunks,
                                                     result));
  return OkStatus();
}

class BatchWriter::JudgedPage final : public internal::PageCandidates {
 public:
  JudgedPage(BatchWriter& w, const dedup::Sketch& page, DocId doc)
      : w_(w), page_(page), doc_(doc) {}

  StatusOr<bool> Read(DocId id, const dedup::Sketch** page,
                      const dedup::Sketch** candidate) override {
    std::string_view bytes;
    SHINGLED_RETURN_IF_ERROR(
        w_.ops_.Get(w_.d_.documents, Key64(id).view(), &bytes, "document " + std::to_string(id)));
    bool has_sketch = false;
    SHINGLED_RETURN_IF_ERROR(DecodeScoringSketch(bytes, &w_.scratch_sketch_, &has_sketch));
    ++w_.store_.writer_work_.candidates_scored;
    *page = &page_;
    *candidate = has_sketch ? &w_.scratch_sketch_ : nullptr;
    return true;
  }
  Status ReadVerifySample(DocId id, std::span<const uint32_t>* sample, bool* known) override {
    SHINGLED_RETURN_IF_ERROR(internal::ReadVerifySample(w_.ops_, id, &w_.scratch_verify_, known));
    *sample = w_.scratch_verify_;
    return OkStatus();
  }
  StatusOr<bool> InPagesCluster(DocId id) override {
    StatusOr<ClusterId> cl = FindCluster(w_.ops_, id);
    if (!cl.ok()) return cl.status();
    return *cl == placed_;
  }
  // Recorded once, under the later document (FORMAT.md, "Links"): the page's is the batch's
  // newest, so its entries append.
  Status Link(DocId id, double resemblance) override {
    if (id >= doc_) {
      return InternalError("candidate " + std::to_string(id) + " is not earlier than document " +
                           std::to_string(doc_));
    }
    return w_.ops_.Put(w_.d_.links, Key64(doc_).view(), EncodeLink(id, resemblance), MDB_NODUPDATA,
                       "links");
  }
  Status Join(DocId id) override { return w_.Union(doc_, id, &placed_); }

 private:
  BatchWriter& w_;
  const dedup::Sketch& page_;
  const DocId doc_;
  ClusterId placed_ = 0;  // the page's cluster, once it joined one
};

Status BatchWriter::ScoreCandidates(const dedup::Sketch& sketch, DocId doc, const std::vector<DocId>& candidates,
                                    PageResult* result) {
  JudgedPage judged(*this, sketch, doc);
  StatusOr<bool> joined = internal::JudgePageCandidates(sketch, candidates, containment_,
                                                        store_.options_, store_.params_, judged, result);
  if (!joined.ok()) return joined.status();
  result->verdict = *joined ? Verdict::kNearDuplicate : Verdict::kNew;
  return OkStatus();
}

}  // namespace
}  // namespace internal

LmdbStore::LmdbStore(std::unique_ptr<internal::StoreImpl> impl) : impl_(std::move(impl)) {}
LmdbStore::~LmdbStore() = default;

Status ValidateStoreOptions(const StoreOptions& options) {
  if (!(options.similar_threshold > 0 && options.similar_threshold <= 1)) {
    return InvalidArgumentError("similar_threshold must be in (0, 1]");
  }
  if (options.common_value_limit < 1) return InvalidArgumentError("common_value_limit must be >= 1");
  if (options.max_candidates < 1) return InvalidArgumentError("max_candidates must be >= 1");
  if (options.max_matches < 1) return InvalidArgumentError("max_matches must be >= 1");
  if (options.template_max_docs < 1 || options.template_max_docs > 1000000) {
    return InvalidArgumentError("template_max_docs must be 1..1000000");
  }
  if (!(options.template_host_share > 0 && options.template_host_share <= 1)) {
    return InvalidArgumentError("template_host_share must be in (0, 1]");
  }
  if (options.template_min_host_pages < 1 || options.template_min_host_pages > 1000000) {
    return InvalidArgumentError("template_min_host_pages must be 1..1000000");
  }
  if (options.max_readers < 1 || options.max_readers > 4096) return InvalidArgumentError("max_readers must be 1..4096");
  if (options.initial_map_size < (uint64_t{1} << 16) || options.initial_map_size > options.max_map_size) {
    return InvalidArgumentError("initial_map_size must be >= 64 KiB and <= max_map_size");
  }
  if ((options.cluster_relations & ~uint32_t{15}) != 0)
    return InvalidArgumentError("cluster_relations has unknown bits");
  if (!(options.verified_threshold > 0 && options.verified_threshold <= 1)) {
    return InvalidArgumentError("verified_threshold must be in (0, 1]");
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& dir, const StoreOptions& options,
                                             const dedup::SketchParams& params,
                                             uint64_t rabin_polynomial) {
  SHINGLED_RETURN_IF_ERROR(params.Validate());
  SHINGLED_RETURN_IF_ERROR(ValidateStoreOptions(options));
  auto impl = std::make_unique<internal::StoreImpl>(dir, options, params, rabin_polynomial);
  SHINGLED_RETURN_IF_ERROR(impl->Open());
  return std::unique_ptr<Store>(new LmdbStore(std::move(impl)));
}

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& dir, const StoreOptions& options,
                                             const dedup::SketchContext& context) {
  return Open(dir, options, context.params(), context.rabin_polynomial());
}

StatusOr<std::vector<PageResult>> LmdbStore::Apply(std::span<const PageInput> pages) {
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  std::vector<PageResult> results;
  Status s = impl_->RunWrite([&](TxnOps& ops) -> Status {
    results.assign(pages.size(), PageResult{});
    internal::BatchWriter writer(ops, *impl_);
    SHINGLED_RETURN_IF_ERROR(writer.Begin());
    SHINGLED_RETURN_IF_ERROR(writer.Prefetch(pages));
    for (size_t i = 0; i < pages.size(); ++i) {
      SHINGLED_RETURN_IF_ERROR(writer.ApplyPage(pages[i], &results[i]));
    }
    return writer.Finish();
  });
  if (!s.ok()) return s;
  return results;
}

StatusOr<SweepInfo> LmdbStore::OpenSweep(std::string_view name, int64_t start,
                                         std::vector<std::string> scope) {
  SHINGLED_RETURN_IF_ERROR(internal::ValidateSweepName(name));
  StatusOr<std::vector<std::string>> valid_scope = internal::ValidateScope(std::move(scope));
  if (!valid_scope.ok()) return valid_scope.status();
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  SweepInfo info;
  Status s = impl_->RunWrite([&](TxnOps& ops) -> Status {
    const internal::Dbis& d = ops.dbis();
    std::string_view v;
    Status found = ops.Get(d.sweep_names, name, &v, "sweep_names");
    if (found.ok()) {
      StatusOr<SweepId> id =
          internal::StoredSweepId(v, "the sweep_names value of " + std::string(name));
      if (!id.ok()) return id.status();
      SHINGLED_RETURN_IF_ERROR(ops.Get(d.sweeps, SweepKey(*id), &v, "sweeps"));
      StatusOr<SweepRecord> rec = internal::DecodeSweep(v);
      if (!rec.ok()) return rec.status();
      if (!rec->open) return AlreadyExistsError("sweep " + std::string(name) + " exists and is closed");
      if (!valid_scope->empty() && rec->scope != *valid_scope) {
        if (!rec->scope.empty()) {
          return FailedPreconditionError(
              "sweep " + std::string(name) + " is open with another scope (" +
              std::to_string(rec->scope.size()) + " prefixes, the first " + rec->scope.front() +
              "); close it, or open a sweep of another name");
        }
        // An open sweep without a scope (opened without one, or before format 8) takes the one
        // it is opened with now.
        rec->scope = *valid_scope;
        SHINGLED_RETURN_IF_ERROR(
            ops.Put(d.sweeps, SweepKey(*id), internal::EncodeSweep(*rec), 0, "sweeps"));
      }
      info = internal::SweepInfoOf(*id, *rec);
      return OkStatus();
    }
    if (found.code() != StatusCode::kNotFound) return found;
    Cursor c;
    if (int rc = c.Open(ops.txn(), d.sweeps); rc != 0) return ops.Fail(rc, "sweeps cursor");
    MDB_val k, val;
    int rc = mdb_cursor_get(c.get(), &k, &val, MDB_LAST);
    SweepId id = 1;
    if (rc == 0) {
      StatusOr<SweepId> last = internal::StoredSweepId(View(k), "the last sweeps key");
      if (!last.ok()) return last.status();
      id = *last + 1;
    } else if (rc != MDB_NOTFOUND) {
      return ops.Fail(rc, "sweeps");
    }
    SweepRecord rec;
    rec.name = std::string(name);
    rec.start = start;
    rec.scope = *valid_scope;
    SHINGLED_RETURN_IF_ERROR(ops.Put(d.sweeps, SweepKey(id), internal::EncodeSweep(rec), MDB_NOOVERWRITE, "sweeps"));
    SHINGLED_RETURN_IF_ERROR(ops.Put(d.sweep_names, name, SweepKey(id), MDB_NOOVERWRITE, "sweep_names"));
    info = internal::SweepInfoOf(id, rec);
    return OkStatus();
  });
  if (!s.ok()) return s;
  return info;
}

namespace {

// A Unix time as ISO-8601 UTC, for messages.
Status CheckCloseDate(const SweepRecord& rec, int64_t end) {
  if (!rec.open) return FailedPreconditionError("sweep " + rec.name + " is already closed");
  if (end < rec.start) {
    return InvalidArgumentError("sweep " + rec.name + " cannot end at " + FormatIsoTime(end) +
                                ", before its start " + FormatIsoTime(rec.start));
  }
  return OkStatus();
}

}  // namespace

StatusOr<SweepClosing> LmdbStore::CloseSweep(SweepId id, int64_t end,
                                             const CloseSweepOptions& options) {
  SweepClosing closing;
  auto list = [&](const internal::GoneUrl& g) {
    ++closing.gone;
    if (closing.gone_urls.size() < options.list_limit) closing.gone_urls.emplace_back(g.name);
  };
  if (options.dry_run) {
    StatusOr<internal::ReadTxn> r = impl_->BeginRead();
    if (!r.ok()) return r.status();
    TxnOps ops(r->txn.get(), impl_->dbis_);
    std::string_view v;
    SHINGLED_RETURN_IF_ERROR(
        ops.Get(impl_->dbis_.sweeps, SweepKey(id), &v, "sweep " + std::to_string(id)));
    StatusOr<SweepRecord> rec = internal::DecodeSweep(v);
    if (!rec.ok()) return rec.status();
    SHINGLED_RETURN_IF_ERROR(CheckCloseDate(*rec, end));
    SHINGLED_RETURN_IF_ERROR(internal::FindGone(ops, id, *rec, end, options.may_be_gone,
                                                [&](const internal::GoneUrl& g) {
                                                  list(g);
                                                  return OkStatus();
                                                }));
    closing.sweep = internal::SweepInfoOf(id, *rec);
    return closing;
  }
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  Status s = impl_->RunWrite([&](TxnOps& ops) -> Status {
    closing = SweepClosing{};
    internal::BatchWriter writer(ops, *impl_);
    SHINGLED_RETURN_IF_ERROR(writer.Begin());
    StatusOr<SweepRecord*> loaded = writer.LoadSweep(id);
    if (!loaded.ok()) return loaded.status();
    SweepRecord* rec = *loaded;
    SHINGLED_RETURN_IF_ERROR(CheckCloseDate(*rec, end));
    // Found first, written after: the walk's cursors must not see its own writes.
    std::vector<std::pair<UrlId, uint32_t>> gone;
    SHINGLED_RETURN_IF_ERROR(internal::FindGone(ops, id, *rec, end, options.may_be_gone,
                                                [&](const internal::GoneUrl& g) {
                                                  list(g);
                                                  gone.emplace_back(g.url, g.seq);
                                                  return OkStatus();
                                                }));
    for (auto [url, seq] : gone) {
      VersionRecord g;
      g.sweep = id;
      g.date = end;
      g.doc = 0;
      g.http_status = 0;
      g.verdict = Verdict::kGone;
      SHINGLED_RETURN_IF_ERROR(writer.AddVersion(url, seq, g, rec));
    }
    rec->open = false;
    rec->end = end;
    closing.sweep = internal::SweepInfoOf(id, *rec);
    return writer.Finish();
  });
  if (!s.ok()) return s;
  return closing;
}

StatusOr<SweepReopening> LmdbStore::ReopenSweep(SweepId id) {
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  SweepReopening reopening;
  Status s = impl_->RunWrite([&](TxnOps& ops) -> Status {
    reopening = SweepReopening{};
    internal::BatchWriter writer(ops, *impl_);
    SHINGLED_RETURN_IF_ERROR(writer.Begin());
    StatusOr<SweepRecord*> loaded = writer.LoadSweep(id);
    if (!loaded.ok()) return loaded.status();
    SweepRecord* rec = *loaded;
    if (rec->open) return FailedPreconditionError("sweep " + rec->name + " is open");
    // The gone versions its close wrote: verdict gone, status 0, in this sweep. A sweep closed
    // before format 8 covered every URL, so the whole of `versions` is read, not the scope.
    std::vector<std::pair<UrlId, uint32_t>> written;
    {
      Cursor c;
      if (int rc = c.Open(ops.txn(), ops.dbis().versions); rc != 0)
        return ops.Fail(rc, "versions cursor");
      MDB_val k, v;
      int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
      for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
        UrlId url = 0;
        uint32_t seq = 0;
        SHINGLED_RETURN_IF_ERROR(internal::DecodeVersionKey(View(k), &url, &seq));
        StatusOr<VersionRecord> ver = internal::DecodeVersion(View(v));
        if (!ver.ok()) return ver.status();
        if (ver->sweep != id || ver->verdict != Verdict::kGone || ver->http_status != 0) continue;
        written.emplace_back(url, seq);
      }
      if (rc != MDB_NOTFOUND) return ops.Fail(rc, "versions");
    }
    // Last first: removing a version moves the URL's later ones down.
    for (auto it = written.rbegin(); it != written.rend(); ++it) {
      SHINGLED_RETURN_IF_ERROR(writer.RemoveVersion(it->first, it->second, Verdict::kGone, rec));
    }
    rec->open = true;
    rec->end = 0;
    reopening.removed = written.size();
    reopening.sweep = internal::SweepInfoOf(id, *rec);
    return writer.Finish();
  });
  if (!s.ok()) return s;
  return reopening;
}

Status LmdbStore::health() const { return impl_->health(); }
const StoreOptions& LmdbStore::options() const { return impl_->options_; }
const dedup::SketchParams& LmdbStore::params() const { return impl_->params_; }
void LmdbStore::FailNextCommitForTesting(int error) { impl_->fail_next_commit_.store(error); }

WriterWork LmdbStore::WriterWorkForTesting() const {
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  return impl_->writer_work_;
}

Status LmdbStore::VerifyKeyFilterForTesting() {
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  StatusOr<internal::ReadTxn> r = impl_->BeginRead();
  if (!r.ok()) return r.status();
  if (impl_->key_filter_ == nullptr || impl_->key_filter_txn_ != mdb_txn_id(r->txn.get()))
    return OkStatus();
  internal::TxnOps ops(r->txn.get(), impl_->dbis_);
  return impl_->key_filter_->Verify(ops);
}

}  // namespace shingled::store
