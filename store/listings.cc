// Store: the listings (URLs, clusters by size, a cluster's documents, identical sets). Each page
// is one read transaction; paging goes on from a cursor, never from a position held open.
#include "store/internal/listings.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "store/internal/chunks.h"
#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/store_impl.h"
#include "store/internal/sweeps.h"
#include "store/internal/templates.h"
#include "store/internal/write_buffer.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

std::string_view UrlStatusName(UrlStatus status) {
  switch (status) {
    case UrlStatus::kLive:
      return "live";
    case UrlStatus::kDead:
      return "dead";
    case UrlStatus::kGone:
      return "gone";
    case UrlStatus::kRedirect:
      return "redirect";
    case UrlStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

std::optional<UrlStatus> UrlStatusFromName(std::string_view name) {
  for (UrlStatus s : {UrlStatus::kLive, UrlStatus::kDead, UrlStatus::kGone, UrlStatus::kRedirect,
                      UrlStatus::kFailed}) {
    if (UrlStatusName(s) == name) return s;
  }
  return std::nullopt;
}

std::optional<Verdict> VerdictFromName(std::string_view name) {
  for (Verdict v :
       {Verdict::kNew, Verdict::kUnchanged, Verdict::kDuplicate, Verdict::kNearDuplicate,
        Verdict::kGone, Verdict::kFailed, Verdict::kRedirect}) {
    if (VerdictName(v) == name) return v;
  }
  return std::nullopt;
}

using internal::Cursor;
using internal::DocumentRecord;
using internal::GetBE64;
using internal::Key64;
using internal::TxnOps;
using internal::Val;
using internal::VersionRecord;
using internal::View;

namespace internal {

namespace {

UrlStatus StatusOf(const VersionRecord& v) {
  if (internal::LiveVersion(v)) return UrlStatus::kLive;
  switch (v.verdict) {
    case Verdict::kRedirect:
      return UrlStatus::kRedirect;
    case Verdict::kFailed:
      return UrlStatus::kFailed;
    case Verdict::kGone:
      return v.http_status == 0 ? UrlStatus::kGone : UrlStatus::kDead;
    default:
      // Content with a status of 400 or more: an error page a format 7 store kept.
      return UrlStatus::kDead;
  }
}

UrlVersion ToUrlVersion(uint32_t seq, VersionRecord v) {
  UrlVersion out;
  out.seq = seq;
  out.sweep = v.sweep;
  out.date = v.date;
  out.doc = v.doc;
  out.http_status = static_cast<int>(v.http_status);
  out.verdict = v.verdict;
  out.canonical_link = std::move(v.canonical_link);
  out.redirect_target = std::move(v.redirect_target);
  return out;
}

}  // namespace

StatusOr<UrlListScope> CheckUrlListOptions(const UrlListOptions& options) {
  if (options.limit == 0 || options.max_examined == 0) {
    return InvalidArgumentError("ListUrls: limit and max_examined must be at least 1");
  }
  // The same rules as a sweep's scope (FORMAT.md, "Closing a sweep"): a prefix of at most 400
  // bytes compares whole against a long URL's key.
  StatusOr<std::vector<std::string>> prefixes = ValidateScope(options.prefixes);
  if (!prefixes.ok()) {
    return InvalidArgumentError("URL prefixes: " + std::string(prefixes.status().message()));
  }
  UrlListScope scope;
  scope.prefixes = std::move(prefixes).value();
  scope.ranges = DisjointPrefixes(scope.prefixes);
  if (scope.ranges.empty()) scope.ranges.push_back(std::string_view());  // every URL
  return scope;
}

UrlVersions SummarizeVersions(std::span<const VersionRecord> versions, SweepId sweep) {
  UrlVersions out;
  if (versions.empty()) return out;
  out.first_date = versions.front().date;
  out.last = versions.back();
  out.last_seq = static_cast<uint32_t>(versions.size());
  if (sweep != 0) {
    for (size_t i = versions.size(); i-- > 0;) {
      if (versions[i].sweep == sweep) {
        out.in_sweep = versions[i];
        out.in_sweep_seq = static_cast<uint32_t>(i + 1);
        break;
      }
    }
  }
  return out;
}

bool UrlPager::Look(std::string_view cursor) {
  // Stop before a URL that would not be listed in this page: the cursor is the one before.
  if (page_.urls.size() == options_.limit || examined_ == options_.max_examined) {
    page_.next = last_;
    return false;
  }
  ++examined_;
  last_.assign(cursor);
  return true;
}

Status UrlPager::Offer(UrlVersions vs, const std::function<StatusOr<std::string>()>& name) {
  if (options_.sweep != 0 && vs.in_sweep_seq == 0) return OkStatus();
  const UrlStatus status = StatusOf(vs.last);
  if (options_.status && status != *options_.status) return OkStatus();
  const bool in_sweep = options_.sweep != 0;
  const VersionRecord& listed = in_sweep ? vs.in_sweep : vs.last;
  if (options_.verdict && listed.verdict != *options_.verdict) return OkStatus();
  UrlListItem item;
  StatusOr<std::string> n = name();
  if (!n.ok()) return n.status();
  item.url = std::move(n).value();
  item.version = ToUrlVersion(in_sweep ? vs.in_sweep_seq : vs.last_seq,
                              in_sweep ? std::move(vs.in_sweep) : std::move(vs.last));
  item.status = status;
  item.first_seen = vs.first_date;
  item.versions = vs.last_seq;
  page_.urls.push_back(std::move(item));
  return OkStatus();
}

}  // namespace internal

namespace {

// The LMDB store's reads of a URL's versions for ListUrls (internal::UrlVersions): without a
// sweep filter, the first version and one descent to the last; with one, a walk of them all.
Status ReadUrlVersions(TxnOps& ops, MDB_cursor* versions, UrlId url, SweepId sweep,
                       internal::UrlVersions* out) {
  const std::string from = internal::VersionKey(url, 0);
  MDB_val k = Val(from), v;
  int rc = mdb_cursor_get(versions, &k, &v, MDB_SET_RANGE);
  bool first = true;
  for (; rc == 0; rc = mdb_cursor_get(versions, &k, &v, MDB_NEXT)) {
    UrlId of = 0;
    uint32_t seq = 0;
    SHINGLED_RETURN_IF_ERROR(internal::DecodeVersionKey(View(k), &of, &seq));
    if (of != url) break;
    StatusOr<VersionRecord> ver = internal::DecodeVersion(View(v));
    if (!ver.ok()) return ver.status();
    if (first) {
      out->first_date = ver->date;
      first = false;
      if (sweep == 0) {
        // Without a sweep filter only the first and the last matter: one more descent.
        uint32_t last_seq = 0;
        StatusOr<VersionRecord> last = internal::LastVersion(ops, versions, url, &last_seq);
        if (!last.ok()) return last.status();
        out->last = std::move(last).value();
        out->last_seq = last_seq;
        return OkStatus();
      }
    }
    if (ver->sweep == sweep) {
      out->in_sweep = *ver;
      out->in_sweep_seq = seq;
    }
    out->last = std::move(ver).value();
    out->last_seq = seq;
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "versions");
  if (first) {
    return DataLossError("url " + std::to_string(url) + " has no version; run shingled check");
  }
  return OkStatus();
}

// The live URLs whose last version holds `doc`: calls `visit` with each URL's id.
Status LiveUrlsOf(TxnOps& ops, MDB_cursor* doc_urls, MDB_cursor* versions, DocId doc,
                  const std::function<Status(UrlId)>& visit) {
  std::vector<uint64_t> ids;
  size_t count = 0;
  if (int rc = internal::ReadPostings(doc_urls, Key64(doc).view(), SIZE_MAX, &ids, &count);
      rc != 0) {
    return ops.Fail(rc, "doc_urls");
  }
  for (UrlId u : ids) {
    uint32_t seq = 0;
    StatusOr<VersionRecord> last = internal::LastVersion(ops, versions, u, &seq);
    if (!last.ok()) return last.status();
    if (last->doc == doc && internal::LiveVersion(*last)) SHINGLED_RETURN_IF_ERROR(visit(u));
  }
  return OkStatus();
}

StatusOr<std::string> UrlName(TxnOps& ops, UrlId url) {
  std::string_view name;
  SHINGLED_RETURN_IF_ERROR(ops.Get(ops.dbis().url_names, Key64(url).view(), &name, "url_names"));
  return std::string(name);
}

// Documents of `doc_urls` per read transaction of the identical report's first pass: short
// enough that a map growth waits a few milliseconds at most.
constexpr size_t kDocsPerTxn = 4096;

// The LMDB store's reads of the listings (internal::ListingReads).
class LmdbListingReads final : public internal::ListingReads {
 public:
  explicit LmdbListingReads(const internal::StoreImpl& impl) : impl_(impl) {}

  // Holds one read transaction for every call from now on.
  Status Hold() {
    StatusOr<internal::ReadTxn> txn = impl_.BeginRead();
    if (!txn.ok()) return txn.status();
    txn_.emplace(std::move(txn).value());
    return OkStatus();
  }

  Status Documents(std::span<const DocId> docs,
                   std::vector<std::optional<internal::ListedDocument>>* out) override {
    out->clear();
    return InTxn([&](TxnOps& ops) -> Status {
      Cursor c;
      if (int rc = c.Open(ops.txn(), ops.dbis().documents); rc != 0) {
        return ops.Fail(rc, "documents cursor");
      }
      DocumentRecord rec;
      for (DocId doc : docs) {
        Key64 key(doc);
        MDB_val k = Val(key.view()), v;
        if (int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_KEY); rc != 0) {
          return ops.Fail(rc, "document " + std::to_string(doc));
        }
        SHINGLED_RETURN_IF_ERROR(internal::DecodeDocumentInto(View(v), &rec));
        out->push_back(internal::ListedDocument{.rep = rec.has_sketch() ? doc : rec.rep,
                                                .bytes = rec.bytes,
                                                .first_seen = rec.first_seen,
                                                .last_seen = rec.last_seen});
      }
      return OkStatus();
    });
  }

  Status LiveUrls(std::span<const DocId> docs, std::vector<std::vector<UrlId>>* out) override {
    out->assign(docs.size(), {});
    return InTxn([&](TxnOps& ops) -> Status {
      Cursor doc_urls, versions;
      if (int rc = doc_urls.Open(ops.txn(), ops.dbis().doc_urls); rc != 0) {
        return ops.Fail(rc, "doc_urls cursor");
      }
      if (int rc = versions.Open(ops.txn(), ops.dbis().versions); rc != 0) {
        return ops.Fail(rc, "versions cursor");
      }
      for (size_t i = 0; i < docs.size(); ++i) {
        SHINGLED_RETURN_IF_ERROR(
            LiveUrlsOf(ops, doc_urls.get(), versions.get(), docs[i], [&](UrlId u) -> Status {
              (*out)[i].push_back(u);
              return OkStatus();
            }));
      }
      return OkStatus();
    });
  }

  Status UrlNames(std::span<const UrlId> urls, std::vector<std::string>* out) override {
    out->clear();
    return InTxn([&](TxnOps& ops) -> Status {
      for (UrlId u : urls) {
        StatusOr<std::string> name = UrlName(ops, u);
        if (!name.ok()) return name.status();
        out->push_back(std::move(name).value());
      }
      return OkStatus();
    });
  }

  Status ForEachCluster(const std::function<void(ClusterId, uint64_t)>& visit) override {
    return InTxn([&](TxnOps& ops) -> Status {
      Cursor c;
      if (int rc = c.Open(ops.txn(), ops.dbis().cluster_members); rc != 0) {
        return ops.Fail(rc, "cluster_members cursor");
      }
      MDB_val k, v;
      int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
      for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT_NODUP)) {
        if (k.mv_size != 8) return DataLossError("a cluster_members key is not 8 bytes");
        size_t n = 0;
        if (int crc = mdb_cursor_count(c.get(), &n); crc != 0) {
          return ops.Fail(crc, "cluster_members count");
        }
        visit(GetBE64(static_cast<const char*>(k.mv_data)), n);
      }
      if (rc != MDB_NOTFOUND) return ops.Fail(rc, "cluster_members");
      return OkStatus();
    });
  }

  Status ClusterMembers(std::span<const ClusterId> ids,
                        std::vector<std::vector<DocId>>* out) override {
    out->clear();
    return InTxn([&](TxnOps& ops) -> Status {
      for (ClusterId id : ids) {
        StatusOr<std::vector<DocId>> m = internal::ClusterMembers(ops, id);
        if (!m.ok()) return m.status();
        out->push_back(std::move(m).value());
      }
      return OkStatus();
    });
  }

  // One pass over `versions`, whose keys (url id, seq) put a URL's last version just before the
  // next URL's first.
  Status LiveDocuments(std::vector<DocId>* out) override {
    return InTxn([&](TxnOps& ops) -> Status {
      Cursor c;
      if (int rc = c.Open(ops.txn(), ops.dbis().versions); rc != 0) {
        return ops.Fail(rc, "versions cursor");
      }
      MDB_val k, v;
      int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
      UrlId current = 0;
      std::string_view last;  // valid while the transaction is (read-only)
      auto flush = [&]() -> Status {
        if (current == 0) return OkStatus();
        StatusOr<VersionRecord> ver = internal::DecodeVersion(last);
        if (!ver.ok()) return ver.status();
        if (internal::LiveVersion(*ver)) out->push_back(ver->doc);
        return OkStatus();
      };
      for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
        UrlId url = 0;
        uint32_t seq = 0;
        SHINGLED_RETURN_IF_ERROR(internal::DecodeVersionKey(View(k), &url, &seq));
        if (url != current) SHINGLED_RETURN_IF_ERROR(flush());
        current = url;
        last = View(v);
      }
      if (rc != MDB_NOTFOUND) return ops.Fail(rc, "versions");
      return flush();
    });
  }

  // One walk of `doc_urls` by key, in read transactions of kDocsPerTxn documents; a document with
  // one entry is passed at the cost of a cursor step.
  Status ForEachSharedDocument(const std::function<Status(std::span<const DocId>)>& visit,
                               std::atomic<uint64_t>* progress) override {
    std::vector<DocId> block;
    DocId next = 0;
    for (bool done = false; !done;) {
      block.clear();
      const Status read = InTxn([&](TxnOps& ops) -> Status {
        Cursor walk;
        if (int rc = walk.Open(ops.txn(), ops.dbis().doc_urls); rc != 0) {
          return ops.Fail(rc, "doc_urls cursor");
        }
        Key64 start(next);
        MDB_val k = Val(start.view()), v;
        int rc = mdb_cursor_get(walk.get(), &k, &v, MDB_SET_RANGE);
        size_t docs = 0;
        for (; rc == 0; rc = mdb_cursor_get(walk.get(), &k, &v, MDB_NEXT_NODUP)) {
          if (k.mv_size != 8) return DataLossError("a doc_urls key is not 8 bytes");
          const DocId doc = GetBE64(static_cast<const char*>(k.mv_data));
          if (docs == kDocsPerTxn) {
            next = doc;
            return OkStatus();
          }
          ++docs;
          if (progress != nullptr) progress->fetch_add(1, std::memory_order_relaxed);
          size_t entries = 0;
          if (int crc = mdb_cursor_count(walk.get(), &entries); crc != 0) {
            return ops.Fail(crc, "doc_urls count");
          }
          if (entries >= 2) block.push_back(doc);
        }
        if (rc != MDB_NOTFOUND) return ops.Fail(rc, "doc_urls");
        done = true;
        return OkStatus();
      });
      if (!read.ok()) return read;
      if (!block.empty()) SHINGLED_RETURN_IF_ERROR(visit(block));
    }
    return OkStatus();
  }

  Status ForEachChunkPosting(const std::function<void(uint64_t, DocId)>& visit) override {
    return internal::WalkLmdbChunkPostings(impl_, visit);
  }

  Status Chunks(std::span<const DocId> docs, std::vector<std::vector<dedup::Chunk>>* out) override {
    out->assign(docs.size(), {});
    return InTxn([&](TxnOps& ops) -> Status {
      for (size_t i = 0; i < docs.size(); ++i) {
        bool known = false;
        SHINGLED_RETURN_IF_ERROR(internal::ReadChunks(ops, docs[i], &(*out)[i], &known));
      }
      return OkStatus();
    });
  }

  // One template judge (and what it caches) for all the pairs, in one read transaction.
  Status Common(std::span<const std::pair<DocId, DocId>> pairs,
                std::vector<CommonBytes>* out) override {
    out->clear();
    return InTxn([&](TxnOps& ops) -> Status {
      StatusOr<std::shared_ptr<const internal::WriteBuffer>> buffer = impl_.BufferFor(ops);
      if (!buffer.ok()) return buffer.status();
      internal::TemplateJudge judge(ops, impl_.options_, buffer->get());
      for (const auto& [a, b] : pairs) {
        StatusOr<CommonBytes> common = internal::DocumentsInCommon(judge, a, b, 0);
        if (!common.ok()) return common.status();
        out->push_back(std::move(common).value());
      }
      return OkStatus();
    });
  }

 private:
  template <typename Body>
  Status InTxn(Body&& body) {
    if (txn_.has_value()) {
      TxnOps ops(txn_->txn.get(), impl_.dbis_);
      return body(ops);
    }
    StatusOr<internal::ReadTxn> txn = impl_.BeginRead();
    if (!txn.ok()) return txn.status();
    TxnOps ops(txn->txn.get(), impl_.dbis_);
    return body(ops);
  }

  const internal::StoreImpl& impl_;
  std::optional<internal::ReadTxn> txn_;
};

}  // namespace

StatusOr<std::unique_ptr<internal::ListingReads>> internal::NewLmdbListingReads(
    const StoreImpl& impl, bool one_txn) {
  auto reads = std::make_unique<LmdbListingReads>(impl);
  if (one_txn) SHINGLED_RETURN_IF_ERROR(reads->Hold());
  return std::unique_ptr<ListingReads>(std::move(reads));
}

StatusOr<UrlPage> LmdbStore::ListUrls(const UrlListOptions& options) const {
  StatusOr<internal::UrlListScope> scope = internal::CheckUrlListOptions(options);
  if (!scope.ok()) return scope.status();
  // LMDB keys are at most 511 bytes: a longer cursor is none the store gave.
  if (options.after.size() > 511) return InvalidArgumentError("the cursor is not one of a page");

  SHINGLED_READ_TXN(ops);
  const internal::Dbis& d = ops.dbis();
  if (options.sweep != 0) {
    std::string_view v;
    Status s = ops.Get(d.sweeps, internal::SweepKey(options.sweep), &v,
                       "sweep " + std::to_string(options.sweep));
    if (!s.ok()) return s;
  }
  Cursor urls, versions;
  if (int rc = urls.Open(ops.txn(), d.urls); rc != 0) return ops.Fail(rc, "urls cursor");
  if (int rc = versions.Open(ops.txn(), d.versions); rc != 0) {
    return ops.Fail(rc, "versions cursor");
  }
  // The cursor is the last `urls` key looked at.
  internal::UrlPager pager(options);
  const std::string_view after = options.after;
  for (std::string_view prefix : scope->ranges) {
    // The range's keys after the cursor: none when the cursor lies past the range.
    const std::string_view start = after > prefix ? after : prefix;
    MDB_val k = Val(start), v;
    // LMDB takes no empty key: the whole store's range starts at its first key.
    int rc = mdb_cursor_get(urls.get(), &k, &v, start.empty() ? MDB_FIRST : MDB_SET_RANGE);
    for (; rc == 0 && View(k).starts_with(prefix);
         rc = mdb_cursor_get(urls.get(), &k, &v, MDB_NEXT)) {
      const std::string_view key = View(k);
      if (!after.empty() && key <= after) continue;
      if (!pager.Look(key)) return pager.Take();
      if (v.mv_size != 8) return DataLossError("a urls value is not 8 bytes; run shingled check");
      const UrlId url = GetBE64(static_cast<const char*>(v.mv_data));
      internal::UrlVersions vs;
      SHINGLED_RETURN_IF_ERROR(ReadUrlVersions(ops, versions.get(), url, options.sweep, &vs));
      const Status offered = pager.Offer(std::move(vs), [&]() -> StatusOr<std::string> {
        // A long URL's key (480 bytes, as a URL of exactly 480 is) holds its start and a hash:
        // its bytes are in url_names.
        if (key.size() >= internal::kMaxWholeUrlKey) return UrlName(ops, url);
        return std::string(key);
      });
      if (!offered.ok()) return offered;
    }
    if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "urls");
  }
  return pager.Take();
}

StatusOr<ClusterListPage> LmdbStore::ListClusters(const ClusterListOptions& options) const {
  // One read transaction for the page.
  StatusOr<std::unique_ptr<internal::ListingReads>> reads =
      internal::NewLmdbListingReads(*impl_, /*one_txn=*/true);
  if (!reads.ok()) return reads.status();
  return internal::ListClusters(**reads, options);
}

StatusOr<ClusterMembersPage> LmdbStore::ClusterPage(DocId any_member, DocId after,
                                                    size_t limit) const {
  if (limit == 0) return InvalidArgumentError("ClusterPage: limit must be at least 1");
  SHINGLED_READ_TXN(ops);
  const internal::Dbis& d = ops.dbis();
  std::string_view v;
  // A cluster's id is its root document's id, so an id that is no document is no cluster.
  if (Status found = ops.Get(d.documents, Key64(any_member).view(), &v, "document"); !found.ok()) {
    if (found.code() != StatusCode::kNotFound) return found;
    return NotFoundError("cluster " + std::to_string(any_member) +
                         " not found (no such cluster or document)");
  }
  StatusOr<ClusterId> root = internal::FindCluster(ops, any_member);
  if (!root.ok()) return root.status();
  ClusterMembersPage page;
  page.cluster.id = *root;
  StatusOr<uint64_t> size = internal::ClusterSize(ops, *root);
  if (!size.ok()) return size.status();
  page.size = *size;
  // The page's members and one more, from the one after `after`.
  std::vector<DocId> members;
  if (page.size == 1) {
    if (*root > after) members.push_back(*root);
  } else if (after != UINT64_MAX) {
    Cursor c;
    if (int rc = c.Open(ops.txn(), d.cluster_members); rc != 0) {
      return ops.Fail(rc, "cluster_members cursor");
    }
    Key64 key(*root), from(after + 1);
    MDB_val k = Val(key.view()), val = Val(from.view());
    int rc = mdb_cursor_get(c.get(), &k, &val, MDB_GET_BOTH_RANGE);
    for (; rc == 0 && members.size() <= limit;
         rc = mdb_cursor_get(c.get(), &k, &val, MDB_NEXT_DUP)) {
      if (val.mv_size != 8) return DataLossError("a cluster_members value is not 8 bytes");
      members.push_back(GetBE64(static_cast<const char*>(val.mv_data)));
    }
    if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "cluster_members");
  }
  if (members.size() > limit) {
    members.pop_back();
    page.next = members.back();
  }
  Cursor doc_urls;
  if (int rc = doc_urls.Open(ops.txn(), d.doc_urls); rc != 0) {
    return ops.Fail(rc, "doc_urls cursor");
  }
  std::vector<uint64_t> ids;
  for (DocId m : members) {
    StatusOr<DocumentRecord> rec = internal::ReadDocument(ops, m);
    if (!rec.ok()) return rec.status();
    ClusterMember cm;
    cm.doc = m;
    cm.first_seen = rec->first_seen;
    cm.last_seen = rec->last_seen;
    ids.clear();
    size_t count = 0;
    if (int rc = internal::ReadPostings(doc_urls.get(), Key64(m).view(), SIZE_MAX, &ids, &count);
        rc != 0) {
      return ops.Fail(rc, "doc_urls");
    }
    for (UrlId u : ids) {
      StatusOr<std::string> name = UrlName(ops, u);
      if (!name.ok()) return name.status();
      cm.urls.push_back(std::move(name).value());
    }
    page.cluster.members.push_back(std::move(cm));
  }
  return page;
}

StatusOr<IdenticalSetPage> LmdbStore::ListIdenticalSets(const IdenticalSetOptions& options) const {
  StatusOr<std::unique_ptr<internal::ListingReads>> reads =
      internal::NewLmdbListingReads(*impl_, /*one_txn=*/true);
  if (!reads.ok()) return reads.status();
  return internal::ListIdenticalSets(**reads, options);
}

// --- the listings over ListingReads (store/internal/listings.h), for both backends ---

namespace {

// The order of a listing of clusters: larger first, then the smaller id.
bool ClusterBefore(uint64_t size_a, ClusterId id_a, uint64_t size_b, ClusterId id_b) {
  return size_a != size_b ? size_a > size_b : id_a < id_b;
}

// The order of a listing of identical sets: more URLs first, then the smaller representative.
bool SetBefore(uint64_t urls_a, DocId rep_a, uint64_t urls_b, DocId rep_b) {
  return urls_a != urls_b ? urls_a > urls_b : rep_a < rep_b;
}

// One distinct live document: its representative, bytes and live URLs.
struct LiveDoc {
  DocId rep = 0;
  DocId doc = 0;
  uint64_t bytes = 0;
  uint64_t urls = 0;
};

// The first `max` of `ids` (each document's live URLs, in document order), named.
Status NameFirst(internal::ListingReads& reads, const std::vector<std::vector<UrlId>>& ids,
                 size_t max, std::vector<std::string>* names) {
  std::vector<UrlId> first;
  for (const std::vector<UrlId>& of : ids) {
    for (UrlId u : of) {
      if (first.size() >= max) break;
      first.push_back(u);
    }
  }
  return reads.UrlNames(first, names);
}

}  // namespace

StatusOr<ClusterListPage> internal::ListClusters(ListingReads& reads,
                                                 const ClusterListOptions& options) {
  if (options.min_size < 2) {
    return InvalidArgumentError("min_size must be at least 2: a single document is no cluster");
  }
  if (options.limit == 0) return InvalidArgumentError("ListClusters: limit must be at least 1");
  // The page's clusters and one more (to tell whether a next page exists): a heap whose top is
  // the last in listing order, so that a better one replaces it.
  using Entry = std::pair<uint64_t, ClusterId>;  // size, id
  auto heap_less = [](const Entry& a, const Entry& b) {
    return ClusterBefore(a.first, a.second, b.first, b.second);
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(heap_less)> heap(heap_less);
  const size_t keep = options.limit + 1;
  SHINGLED_RETURN_IF_ERROR(reads.ForEachCluster([&](ClusterId id, uint64_t n) {
    if (n < options.min_size) return;
    if (options.after && !ClusterBefore(options.after->size, options.after->id, n, id)) return;
    if (heap.size() < keep) {
      heap.emplace(n, id);
    } else if (ClusterBefore(n, id, heap.top().first, heap.top().second)) {
      heap.pop();
      heap.emplace(n, id);
    }
  }));
  std::vector<Entry> chosen;
  while (!heap.empty()) {
    chosen.push_back(heap.top());
    heap.pop();
  }
  std::reverse(chosen.begin(), chosen.end());
  ClusterListPage page;
  if (chosen.size() > options.limit) {
    chosen.pop_back();
    page.next = ClusterCursor{chosen.back().first, chosen.back().second};
  }
  // The page's clusters read together (a few calls for the page, not a few per cluster): their
  // members, then all the members' records and live URLs, then the sample URLs' names.
  std::vector<ClusterId> ids;
  for (const auto& [size, id] : chosen) ids.push_back(id);
  std::vector<std::vector<DocId>> members;
  SHINGLED_RETURN_IF_ERROR(reads.ClusterMembers(ids, &members));
  std::vector<std::pair<DocId, size_t>> all;  // (member, its cluster's index), by member
  for (size_t c = 0; c < members.size(); ++c) {
    for (DocId d : members[c]) all.emplace_back(d, c);
  }
  std::sort(all.begin(), all.end());
  std::vector<DocId> docs;
  for (const auto& [d, c] : all) docs.push_back(d);
  std::vector<std::optional<ListedDocument>> recs;
  std::vector<std::vector<UrlId>> live;
  SHINGLED_RETURN_IF_ERROR(reads.Documents(docs, &recs));
  SHINGLED_RETURN_IF_ERROR(reads.LiveUrls(docs, &live));
  page.clusters.resize(chosen.size());
  std::vector<bool> dated(chosen.size(), false);
  std::vector<std::vector<UrlId>> sample(chosen.size());  // each cluster's first sample_urls
  for (size_t i = 0; i < all.size(); ++i) {
    const size_t c = all[i].second;
    ClusterSummary& s = page.clusters[c];
    if (recs[i]) {
      s.first_seen = dated[c] ? std::min(s.first_seen, recs[i]->first_seen) : recs[i]->first_seen;
      s.last_seen = dated[c] ? std::max(s.last_seen, recs[i]->last_seen) : recs[i]->last_seen;
      dated[c] = true;
    }
    s.live_urls += live[i].size();
    for (UrlId u : live[i]) {
      if (sample[c].size() < options.sample_urls) sample[c].push_back(u);
    }
  }
  std::vector<UrlId> named;
  for (const std::vector<UrlId>& of : sample) named.insert(named.end(), of.begin(), of.end());
  std::vector<std::string> names;
  SHINGLED_RETURN_IF_ERROR(reads.UrlNames(named, &names));
  size_t at = 0;
  for (size_t c = 0; c < chosen.size(); ++c) {
    ClusterSummary& s = page.clusters[c];
    s.id = chosen[c].second;
    s.size = chosen[c].first;
    for (size_t k = 0; k < sample[c].size(); ++k) s.sample_urls.push_back(std::move(names[at++]));
  }
  return page;
}

StatusOr<IdenticalSetPage> internal::ListIdenticalSets(ListingReads& reads,
                                                       const IdenticalSetOptions& options) {
  if (options.min_urls < 2) {
    return InvalidArgumentError("min_urls must be at least 2: one URL is no identical set");
  }
  if (options.limit == 0) {
    return InvalidArgumentError("ListIdenticalSets: limit must be at least 1");
  }
  // 1. The document of each live URL, from its last version.
  std::vector<DocId> live_docs;
  SHINGLED_RETURN_IF_ERROR(reads.LiveDocuments(&live_docs));
  // 2. Per distinct document, its URL count and its representative (its record, read in id order).
  std::sort(live_docs.begin(), live_docs.end());
  std::vector<DocId> distinct;
  std::vector<uint64_t> counts;
  for (size_t i = 0; i < live_docs.size();) {
    size_t j = i;
    while (j < live_docs.size() && live_docs[j] == live_docs[i]) ++j;
    distinct.push_back(live_docs[i]);
    counts.push_back(j - i);
    i = j;
  }
  live_docs.clear();
  live_docs.shrink_to_fit();
  std::vector<LiveDoc> docs;
  {
    std::vector<std::optional<ListedDocument>> recs;
    SHINGLED_RETURN_IF_ERROR(reads.Documents(distinct, &recs));
    for (size_t i = 0; i < distinct.size(); ++i) {
      if (!recs[i]) continue;  // not written yet (another daemon's page under way)
      docs.push_back(LiveDoc{recs[i]->rep, distinct[i], recs[i]->bytes, counts[i]});
    }
  }
  // 3. Sets by representative; the page's, and one more.
  std::sort(docs.begin(), docs.end(), [](const LiveDoc& a, const LiveDoc& b) {
    return std::tie(a.rep, a.doc) < std::tie(b.rep, b.doc);
  });
  struct Group {
    uint64_t urls = 0;
    DocId rep = 0;
    size_t begin = 0, end = 0;  // its documents in `docs`
  };
  auto heap_less = [](const Group& a, const Group& b) {
    return SetBefore(a.urls, a.rep, b.urls, b.rep);
  };
  std::priority_queue<Group, std::vector<Group>, decltype(heap_less)> heap(heap_less);
  const size_t keep = options.limit + 1;
  for (size_t i = 0; i < docs.size();) {
    Group g;
    g.rep = docs[i].rep;
    g.begin = i;
    while (i < docs.size() && docs[i].rep == g.rep) g.urls += docs[i++].urls;
    g.end = i;
    if (g.urls < options.min_urls) continue;
    if (options.after &&
        !SetBefore(options.after->urls, options.after->representative, g.urls, g.rep)) {
      continue;
    }
    if (heap.size() < keep) {
      heap.push(g);
    } else if (SetBefore(g.urls, g.rep, heap.top().urls, heap.top().rep)) {
      heap.pop();
      heap.push(g);
    }
  }
  std::vector<Group> chosen;
  while (!heap.empty()) {
    chosen.push_back(heap.top());
    heap.pop();
  }
  std::reverse(chosen.begin(), chosen.end());
  IdenticalSetPage page;
  if (chosen.size() > options.limit) {
    chosen.pop_back();
    page.next = IdenticalCursor{chosen.back().urls, chosen.back().rep};
  }
  // 4. The page's sets: documents and URLs.
  std::vector<DocId> of_set;
  std::vector<std::vector<UrlId>> live;
  for (const Group& g : chosen) {
    IdenticalSet set;
    set.representative = g.rep;
    set.url_count = g.urls;
    set.bytes = docs[g.begin].bytes;
    of_set.clear();
    for (size_t i = g.begin; i < g.end; ++i) {
      set.documents.push_back(IdenticalDocument{docs[i].doc, docs[i].bytes, docs[i].urls});
      of_set.push_back(docs[i].doc);
    }
    SHINGLED_RETURN_IF_ERROR(reads.LiveUrls(of_set, &live));
    SHINGLED_RETURN_IF_ERROR(NameFirst(reads, live, options.max_urls, &set.urls));
    page.sets.push_back(std::move(set));
  }
  return page;
}

}  // namespace shingled::store
