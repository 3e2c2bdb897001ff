// Store: the listings (URLs, clusters by size, a cluster's documents, identical sets). Each page
// is one read transaction; paging goes on from a cursor, never from a position held open.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/store_impl.h"
#include "store/internal/sweeps.h"
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

// What ListUrls reads of one URL's versions: the first version's date, the last version (and its
// seq, which is the number of versions: seqs run from 1 without gaps), and the last version in
// `sweep` (when `sweep` is not 0).
struct UrlVersions {
  int64_t first_date = 0;
  uint32_t last_seq = 0;
  VersionRecord last;
  uint32_t in_sweep_seq = 0;  // 0: none
  VersionRecord in_sweep;
};

Status ReadUrlVersions(TxnOps& ops, MDB_cursor* versions, UrlId url, SweepId sweep,
                       UrlVersions* out) {
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

}  // namespace

#define SHINGLED_READ_TXN(ops_name)                           \
  StatusOr<internal::ReadTxn> read_txn_ = impl_->BeginRead(); \
  if (!read_txn_.ok()) return read_txn_.status();             \
  TxnOps ops_name(read_txn_->txn.get(), impl_->dbis_)

StatusOr<UrlPage> LmdbStore::ListUrls(const UrlListOptions& options) const {
  if (options.limit == 0 || options.max_examined == 0) {
    return InvalidArgumentError("ListUrls: limit and max_examined must be at least 1");
  }
  // LMDB keys are at most 511 bytes: a longer cursor is none the store gave.
  if (options.after.size() > 511) return InvalidArgumentError("the cursor is not one of a page");
  // The same rules as a sweep's scope (FORMAT.md, "Closing a sweep"): a prefix of at most 400
  // bytes compares whole against a long URL's key.
  StatusOr<std::vector<std::string>> prefixes = internal::ValidateScope(options.prefixes);
  if (!prefixes.ok()) {
    return InvalidArgumentError("URL prefixes: " + std::string(prefixes.status().message()));
  }
  std::vector<std::string_view> ranges = internal::DisjointPrefixes(*prefixes);
  if (ranges.empty()) ranges.push_back(std::string_view());  // every URL

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
  UrlPage page;
  const std::string_view after = options.after;
  std::string last_key;  // the last key looked at
  size_t examined = 0;
  UrlVersions vs;
  for (std::string_view prefix : ranges) {
    // The range's keys after the cursor: none when the cursor lies past the range.
    const std::string_view start = after > prefix ? after : prefix;
    MDB_val k = Val(start), v;
    // LMDB takes no empty key: the whole store's range starts at its first key.
    int rc = mdb_cursor_get(urls.get(), &k, &v, start.empty() ? MDB_FIRST : MDB_SET_RANGE);
    for (; rc == 0 && View(k).starts_with(prefix);
         rc = mdb_cursor_get(urls.get(), &k, &v, MDB_NEXT)) {
      const std::string_view key = View(k);
      if (!after.empty() && key <= after) continue;
      // Stop before a key that would not be listed in this page: the cursor is the key before.
      if (page.urls.size() == options.limit || examined == options.max_examined) {
        page.next = last_key;
        return page;
      }
      ++examined;
      last_key.assign(key);
      if (v.mv_size != 8) return DataLossError("a urls value is not 8 bytes; run shingled check");
      const UrlId url = GetBE64(static_cast<const char*>(v.mv_data));
      vs = UrlVersions();
      SHINGLED_RETURN_IF_ERROR(ReadUrlVersions(ops, versions.get(), url, options.sweep, &vs));
      if (options.sweep != 0 && vs.in_sweep_seq == 0) continue;
      const UrlStatus status = StatusOf(vs.last);
      if (options.status && status != *options.status) continue;
      const bool in_sweep = options.sweep != 0;
      const VersionRecord& listed = in_sweep ? vs.in_sweep : vs.last;
      if (options.verdict && listed.verdict != *options.verdict) continue;
      UrlListItem item;
      if (key.size() >= internal::kMaxWholeUrlKey) {
        // A long URL's key (480 bytes, as a URL of exactly 480 is) holds its start and a hash:
        // its bytes are in url_names.
        StatusOr<std::string> name = UrlName(ops, url);
        if (!name.ok()) return name.status();
        item.url = std::move(name).value();
      } else {
        item.url.assign(key);
      }
      item.version = ToUrlVersion(in_sweep ? vs.in_sweep_seq : vs.last_seq,
                                  in_sweep ? std::move(vs.in_sweep) : std::move(vs.last));
      item.status = status;
      item.first_seen = vs.first_date;
      item.versions = vs.last_seq;
      page.urls.push_back(std::move(item));
    }
    if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "urls");
  }
  return page;
}

namespace {

// The order of a listing of clusters: larger first, then the smaller id.
bool ClusterBefore(uint64_t size_a, ClusterId id_a, uint64_t size_b, ClusterId id_b) {
  return size_a != size_b ? size_a > size_b : id_a < id_b;
}

}  // namespace

StatusOr<ClusterListPage> LmdbStore::ListClusters(const ClusterListOptions& options) const {
  if (options.min_size < 2) {
    return InvalidArgumentError("min_size must be at least 2: a single document is no cluster");
  }
  if (options.limit == 0) return InvalidArgumentError("ListClusters: limit must be at least 1");
  SHINGLED_READ_TXN(ops);
  const internal::Dbis& d = ops.dbis();
  // The page's clusters and one more (to tell whether a next page exists): a heap whose top is
  // the last in listing order, so that a better one replaces it.
  using Entry = std::pair<uint64_t, ClusterId>;  // size, id
  auto heap_less = [](const Entry& a, const Entry& b) {
    return ClusterBefore(a.first, a.second, b.first, b.second);
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(heap_less)> heap(heap_less);
  const size_t keep = options.limit + 1;
  {
    Cursor c;
    if (int rc = c.Open(ops.txn(), d.cluster_members); rc != 0) {
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
      const ClusterId id = GetBE64(static_cast<const char*>(k.mv_data));
      if (n < options.min_size) continue;
      if (options.after && !ClusterBefore(options.after->size, options.after->id, n, id)) {
        continue;
      }
      if (heap.size() < keep) {
        heap.emplace(n, id);
      } else if (ClusterBefore(n, id, heap.top().first, heap.top().second)) {
        heap.pop();
        heap.emplace(n, id);
      }
    }
    if (rc != MDB_NOTFOUND) return ops.Fail(rc, "cluster_members");
  }
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
  Cursor doc_urls, versions;
  if (int rc = doc_urls.Open(ops.txn(), d.doc_urls); rc != 0) {
    return ops.Fail(rc, "doc_urls cursor");
  }
  if (int rc = versions.Open(ops.txn(), d.versions); rc != 0) {
    return ops.Fail(rc, "versions cursor");
  }
  for (const auto& [size, id] : chosen) {
    ClusterSummary s;
    s.id = id;
    s.size = size;
    StatusOr<std::vector<DocId>> members = internal::ClusterMembers(ops, id);
    if (!members.ok()) return members.status();
    bool first = true;
    for (DocId m : *members) {
      StatusOr<DocumentRecord> rec = internal::ReadDocument(ops, m);
      if (!rec.ok()) return rec.status();
      s.first_seen = first ? rec->first_seen : std::min(s.first_seen, rec->first_seen);
      s.last_seen = first ? rec->last_seen : std::max(s.last_seen, rec->last_seen);
      first = false;
      SHINGLED_RETURN_IF_ERROR(
          LiveUrlsOf(ops, doc_urls.get(), versions.get(), m, [&](UrlId u) -> Status {
            ++s.live_urls;
            if (s.sample_urls.size() < options.sample_urls) {
              StatusOr<std::string> name = UrlName(ops, u);
              if (!name.ok()) return name.status();
              s.sample_urls.push_back(std::move(name).value());
            }
            return OkStatus();
          }));
    }
    page.clusters.push_back(std::move(s));
  }
  return page;
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

namespace {

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

}  // namespace

StatusOr<IdenticalSetPage> LmdbStore::ListIdenticalSets(const IdenticalSetOptions& options) const {
  if (options.min_urls < 2) {
    return InvalidArgumentError("min_urls must be at least 2: one URL is no identical set");
  }
  if (options.limit == 0) {
    return InvalidArgumentError("ListIdenticalSets: limit must be at least 1");
  }
  SHINGLED_READ_TXN(ops);
  const internal::Dbis& d = ops.dbis();
  // 1. The document of each live URL, from its last version: one pass over `versions`, whose
  // keys (url id, seq) put a URL's last version just before the next URL's first.
  std::vector<DocId> live_docs;
  {
    Cursor c;
    if (int rc = c.Open(ops.txn(), d.versions); rc != 0) return ops.Fail(rc, "versions cursor");
    MDB_val k, v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
    UrlId current = 0;
    std::string_view last;  // valid while the transaction is (read-only)
    auto flush = [&]() -> Status {
      if (current == 0) return OkStatus();
      StatusOr<VersionRecord> ver = internal::DecodeVersion(last);
      if (!ver.ok()) return ver.status();
      if (internal::LiveVersion(*ver)) live_docs.push_back(ver->doc);
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
    SHINGLED_RETURN_IF_ERROR(flush());
  }
  // 2. Per distinct document, its URL count and its representative (its record, read in id order).
  std::sort(live_docs.begin(), live_docs.end());
  std::vector<LiveDoc> docs;
  {
    Cursor c;
    if (int rc = c.Open(ops.txn(), d.documents); rc != 0) return ops.Fail(rc, "documents cursor");
    DocumentRecord rec;
    for (size_t i = 0; i < live_docs.size();) {
      size_t j = i;
      while (j < live_docs.size() && live_docs[j] == live_docs[i]) ++j;
      Key64 key(live_docs[i]);
      MDB_val k = Val(key.view()), v;
      if (int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_KEY); rc != 0) {
        return ops.Fail(rc, "document " + std::to_string(live_docs[i]));
      }
      SHINGLED_RETURN_IF_ERROR(internal::DecodeDocumentInto(View(v), &rec));
      docs.push_back(
          LiveDoc{rec.has_sketch() ? live_docs[i] : rec.rep, live_docs[i], rec.bytes, j - i});
      i = j;
    }
  }
  live_docs.clear();
  live_docs.shrink_to_fit();
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
  Cursor doc_urls, versions;
  if (int rc = doc_urls.Open(ops.txn(), d.doc_urls); rc != 0) {
    return ops.Fail(rc, "doc_urls cursor");
  }
  if (int rc = versions.Open(ops.txn(), d.versions); rc != 0) {
    return ops.Fail(rc, "versions cursor");
  }
  for (const Group& g : chosen) {
    IdenticalSet set;
    set.representative = g.rep;
    set.url_count = g.urls;
    set.bytes = docs[g.begin].bytes;
    for (size_t i = g.begin; i < g.end; ++i) {
      set.documents.push_back(IdenticalDocument{docs[i].doc, docs[i].bytes, docs[i].urls});
      if (set.urls.size() >= options.max_urls) continue;
      SHINGLED_RETURN_IF_ERROR(
          LiveUrlsOf(ops, doc_urls.get(), versions.get(), docs[i].doc, [&](UrlId u) -> Status {
            if (set.urls.size() >= options.max_urls) return OkStatus();
            StatusOr<std::string> name = UrlName(ops, u);
            if (!name.ok()) return name.status();
            set.urls.push_back(std::move(name).value());
            return OkStatus();
          }));
    }
    page.sets.push_back(std::move(set));
  }
  return page;
}

}  // namespace shingled::store
