// Store: the repository reports of issue 32 (paper 003, figures 5 and 6): identical-content sets
// and clusters of documents linked by bytes in common. Read-only; each streams its rows to a
// callback and holds one set's or one store cluster's data at a time (docs/REPORTS.md).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "store/internal/chunks.h"
#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/listings.h"
#include "store/internal/store_impl.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

using internal::Cursor;
using internal::GetBE64;
using internal::Key64;
using internal::TxnOps;
using internal::Val;
using internal::VersionRecord;

std::string_view ClusterReportTypeName(ClusterReportType type) {
  switch (type) {
    case ClusterReportType::kPair:
      return "pair";
    case ClusterReportType::kContains:
      return "contains";
    case ClusterReportType::kGroup:
      return "group";
  }
  return "unknown";
}

namespace {

// Entries of `chunk_docs` per read transaction of the clusters report's partitioning walk.
constexpr size_t kChunkEntriesPerTxn = 65536;

void Count(std::atomic<uint64_t>* counter) {
  if (counter != nullptr) counter->fetch_add(1, std::memory_order_relaxed);
}

// The live URLs whose last version holds `doc` (in URL id order): their number, and the names
// of the first `max_names` in `*names` (null: none).
Status LiveUrls(TxnOps& ops, MDB_cursor* doc_urls, MDB_cursor* versions, DocId doc,
                size_t max_names, uint64_t* live, std::vector<std::string>* names) {
  *live = 0;
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
    if (last->doc != doc || !internal::LiveVersion(*last)) continue;
    ++*live;
    if (names == nullptr || names->size() >= max_names) continue;
    std::string_view name;
    SHINGLED_RETURN_IF_ERROR(ops.Get(ops.dbis().url_names, Key64(u).view(), &name, "url_names"));
    names->emplace_back(name);
  }
  return OkStatus();
}

}  // namespace

Status LmdbStore::StreamIdenticalReport(
    const IdenticalReportOptions& options,
    const std::function<Status(const IdenticalReportTotals&)>& totals,
    const std::function<Status(const IdenticalReportSet&)>& set,
    const RepoReportProgress& progress) const {
  // A read transaction per call: blocks of at most 4,096 documents, then a set at a time.
  StatusOr<std::unique_ptr<internal::ListingReads>> reads =
      internal::NewLmdbListingReads(*impl_, /*one_txn=*/false);
  if (!reads.ok()) return reads.status();
  return internal::StreamIdenticalReport(**reads, options, totals, set, progress);
}

namespace {

// One content held by several live URLs, as the first pass of the identical report found it.
struct CopySet {
  DocId doc = 0;
  uint64_t bytes = 0;
  uint64_t copies = 0;
  uint64_t wasted() const { return bytes * (copies - 1); }
};

}  // namespace

// The identical report over ListingReads (store/internal/listings.h), for both backends.
Status internal::StreamIdenticalReport(
    ListingReads& reads, const IdenticalReportOptions& options,
    const std::function<Status(const IdenticalReportTotals&)>& totals,
    const std::function<Status(const IdenticalReportSet&)>& set,
    const RepoReportProgress& progress) {
  if (options.limit == 0 || options.max_urls == 0) {
    return InvalidArgumentError("the identical report's limit and max_urls must be at least 1");
  }
  // 1. Every document with two or more live URLs: of the documents two or more URLs ever held,
  // a block at a time, those whose last versions still hold them twice or more.
  std::vector<CopySet> sets;
  std::vector<std::vector<UrlId>> live;
  std::vector<DocId> shared;
  std::vector<uint64_t> copies;
  std::vector<std::optional<ListedDocument>> recs;
  const Status walked = reads.ForEachSharedDocument(
      [&](std::span<const DocId> block) -> Status {
        SHINGLED_RETURN_IF_ERROR(reads.LiveUrls(block, &live));
        shared.clear();
        copies.clear();
        for (size_t i = 0; i < block.size(); ++i) {
          if (live[i].size() < 2) continue;
          shared.push_back(block[i]);
          copies.push_back(live[i].size());
        }
        if (shared.empty()) return OkStatus();
        SHINGLED_RETURN_IF_ERROR(reads.Documents(shared, &recs));
        for (size_t i = 0; i < shared.size(); ++i) {
          if (recs[i]) sets.push_back(CopySet{shared[i], recs[i]->bytes, copies[i]});
        }
        return OkStatus();
      },
      progress.documents);
  if (!walked.ok()) return walked;
  // 2. Largest waste first, then by document id.
  std::sort(sets.begin(), sets.end(), [](const CopySet& a, const CopySet& b) {
    return a.wasted() != b.wasted() ? a.wasted() > b.wasted() : a.doc < b.doc;
  });
  IdenticalReportTotals t;
  t.sets = sets.size();
  for (const CopySet& s : sets) {
    t.files += s.copies;
    t.wasted_bytes += s.wasted();
  }
  t.listed = std::min<uint64_t>(t.sets, options.limit);
  SHINGLED_RETURN_IF_ERROR(totals(t));
  // 3. The listed sets' URLs, a set at a time. The copies and waste stay those of the first
  // pass, so that the rows add up to the totals even when writes go on.
  for (uint64_t i = 0; i < t.listed; ++i) {
    IdenticalReportSet row;
    row.rank = i + 1;
    row.doc = sets[i].doc;
    row.bytes = sets[i].bytes;
    row.copies = sets[i].copies;
    row.wasted_bytes = sets[i].wasted();
    const DocId one[] = {row.doc};
    SHINGLED_RETURN_IF_ERROR(reads.LiveUrls(one, &live));
    std::vector<UrlId> named(
        live[0].begin(),
        live[0].begin() + static_cast<std::ptrdiff_t>(std::min(live[0].size(), options.max_urls)));
    SHINGLED_RETURN_IF_ERROR(reads.UrlNames(named, &row.urls));
    SHINGLED_RETURN_IF_ERROR(set(row));
  }
  return OkStatus();
}

namespace {

// A union-find over the indexes 0..n-1 (path halving, union by size).
class Components {
 public:
  explicit Components(size_t n) : parent_(n), size_(n, 1) {
    std::iota(parent_.begin(), parent_.end(), size_t{0});
  }
  size_t Find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(size_t a, size_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (size_[a] < size_[b]) std::swap(a, b);
    parent_[b] = a;
    size_[a] += size_[b];
  }

 private:
  std::vector<size_t> parent_;
  std::vector<size_t> size_;
};

// A live member of the store cluster being analysed.
struct Member {
  ClusterReportDocument doc;
  bool has_chunks = false;
};

// One distinct chunk of one member: (hash, length) and the member's index.
struct ChunkOf {
  uint64_t hash = 0;
  uint32_t length = 0;
  uint32_t member = 0;
  auto key() const { return std::tie(hash, length, member); }
};

bool Links(const CommonBytes& c, const ClusterReportOptions& options) {
  if (!c.known || c.shared_bytes == 0) return false;
  if (c.shared_bytes >= options.min_bytes) return true;
  const uint64_t shorter = std::min(c.length_a, c.length_b);
  return static_cast<double>(c.shared_bytes) >= options.min_share * static_cast<double>(shorter);
}

}  // namespace

Status LmdbStore::StreamClusterReport(
    const ClusterReportOptions& options,
    const std::function<Status(const ClusterReportCluster&)>& cluster, ClusterReportTotals* totals,
    const RepoReportProgress& progress) const {
  if (options.min_bytes == 0 && options.min_share <= 0) {
    return InvalidArgumentError("min_bytes and min_share cannot both be 0: every pair would link");
  }
  if (!(options.min_share >= 0 && options.min_share <= 1)) {
    return InvalidArgumentError("min_share must be in 0..1");
  }
  if (options.max_chunk_docs < 2 || options.max_pairs_per_doc == 0 || options.limit == 0 ||
      options.max_urls == 0) {
    return InvalidArgumentError(
        "max_chunk_docs must be at least 2, and max_pairs_per_doc, limit and max_urls at least 1");
  }
  *totals = ClusterReportTotals{};
  ClusterReportTotals& t = *totals;
  // 1. The partitions (paper 003, section 2.5): documents joined through the chunks they share,
  // chunks in more than max_chunk_docs documents left out. One walk of `chunk_docs`, whose
  // entries put a chunk's documents next to each other, in read transactions of about
  // kChunkEntriesPerTxn entries (a chunk's entries never span two: they share a key).
  std::unordered_map<DocId, DocId> parent;  // a union-find over the documents that share a chunk
  auto find = [&](DocId x) {
    while (true) {
      auto it = parent.find(x);
      if (it == parent.end() || it->second == x) return x;
      auto up = parent.find(it->second);
      if (up != parent.end()) it->second = up->second;  // path halving
      x = it->second;
    }
  };
  std::vector<DocId> docs_of_chunk;
  uint64_t current = 0;  // the chunk of docs_of_chunk
  auto flush = [&] {
    // (A document moved from the buffer into the B-tree between two transactions is seen twice.)
    std::sort(docs_of_chunk.begin(), docs_of_chunk.end());
    docs_of_chunk.erase(std::unique(docs_of_chunk.begin(), docs_of_chunk.end()),
                        docs_of_chunk.end());
    if (docs_of_chunk.size() > options.max_chunk_docs) {
      ++t.chunks_too_common;
    } else {
      for (size_t i = 1; i < docs_of_chunk.size(); ++i) {
        parent.try_emplace(docs_of_chunk[0], docs_of_chunk[0]);
        parent.try_emplace(docs_of_chunk[i], docs_of_chunk[i]);
        const DocId a = find(docs_of_chunk[0]), b = find(docs_of_chunk[i]);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
      }
    }
    docs_of_chunk.clear();
  };
  auto add = [&](uint64_t hash, DocId doc) {
    if (!docs_of_chunk.empty() && hash != current) flush();
    current = hash;
    docs_of_chunk.push_back(doc);
  };
  // The write buffer's `chunk_docs` postings (FORMAT.md, "The write buffer of chunk_docs"), of the
  // first transaction, walked in step with the B-tree's: both are in (hash, document) order.
  std::shared_ptr<const internal::WriteBuffer> buffer;
  int slice = 0;
  size_t at = 0;  // the next buffered posting: chunk_parts[slice]->entries()[at]
  // Adds the buffered postings of chunks below `hash` (up to and including it when `inclusive`).
  auto add_buffered = [&](uint64_t hash, bool inclusive) {
    while (slice < internal::kBufferSlices) {
      const std::vector<internal::BufferEntry>& e = buffer->chunk_parts[slice]->entries();
      if (at == e.size()) {
        ++slice;
        at = 0;
        continue;
      }
      if (e[at].first > hash || (!inclusive && e[at].first == hash)) return;
      add(e[at].first, e[at].second);
      ++at;
    }
  };
  {
    std::string next_key;  // empty: from the first
    for (bool done = false; !done;) {
      StatusOr<internal::ReadTxn> txn = impl_->BeginRead();
      if (!txn.ok()) return txn.status();
      TxnOps ops(txn->txn.get(), impl_->dbis_);
      if (buffer == nullptr) {
        StatusOr<std::shared_ptr<const internal::WriteBuffer>> b = impl_->BufferFor(ops);
        if (!b.ok()) return b.status();
        buffer = std::move(b).value();
      }
      Cursor c;
      if (int rc = c.Open(ops.txn(), ops.dbis().chunk_docs); rc != 0) {
        return ops.Fail(rc, "chunk_docs cursor");
      }
      MDB_val k = Val(next_key), v;
      int rc = mdb_cursor_get(c.get(), &k, &v, next_key.empty() ? MDB_FIRST : MDB_SET_RANGE);
      size_t entries = 0;
      std::string last_key;
      for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
        if (k.mv_size != internal::kPostingKeySize || v.mv_size != internal::kPostingSize) {
          return DataLossError("a chunk_docs entry is not 3 + 12 bytes");
        }
        const std::string_view key = internal::View(k);
        if (key != last_key && entries >= kChunkEntriesPerTxn) {
          next_key = std::string(key);
          break;
        }
        last_key = std::string(key);
        ++entries;
        const uint64_t hash = internal::PostingValue(key, internal::View(v));
        add_buffered(hash, /*inclusive=*/false);
        add(hash, internal::PostingDoc(internal::View(v)));
      }
      if (rc == MDB_NOTFOUND) {
        done = true;
        add_buffered(UINT64_MAX, /*inclusive=*/true);
      } else if (rc != 0) {
        return ops.Fail(rc, "chunk_docs");
      } else if (!docs_of_chunk.empty()) {
        add_buffered(current, /*inclusive=*/true);
      }
      if (!docs_of_chunk.empty()) flush();
    }
  }
  // The partitions of two or more documents, most documents first, then by id (the smallest).
  std::vector<std::pair<DocId, DocId>> by_root;  // (root, document)
  by_root.reserve(parent.size());
  for (const auto& [doc, up] : parent) by_root.emplace_back(find(doc), doc);
  parent = {};
  std::sort(by_root.begin(), by_root.end());
  struct Partition {
    size_t begin = 0, end = 0;  // its documents in by_root
  };
  std::vector<Partition> partitions;
  for (size_t i = 0; i < by_root.size();) {
    size_t j = i;
    while (j < by_root.size() && by_root[j].first == by_root[i].first) ++j;
    partitions.push_back(Partition{i, j});
    i = j;
  }
  std::stable_sort(
      partitions.begin(), partitions.end(),
      [](const Partition& a, const Partition& b) { return a.end - a.begin > b.end - b.begin; });

  std::vector<Member> members;
  std::vector<ChunkOf> chunks;
  std::vector<dedup::Chunk> read;
  std::unordered_map<uint64_t, uint64_t> pairs;  // (i << 32 | j) -> chunk bytes shared, i < j
  for (const Partition& part : partitions) {
    Count(progress.clusters);
    ++t.partitions;
    const DocId root = by_root[part.begin].first;
    // 2. Its live documents, their URLs and chunks, in one read transaction.
    members.clear();
    chunks.clear();
    {
      StatusOr<internal::ReadTxn> txn = impl_->BeginRead();
      if (!txn.ok()) return txn.status();
      TxnOps ops(txn->txn.get(), impl_->dbis_);
      Cursor doc_urls, versions;
      if (int rc = doc_urls.Open(ops.txn(), ops.dbis().doc_urls); rc != 0) {
        return ops.Fail(rc, "doc_urls cursor");
      }
      if (int rc = versions.Open(ops.txn(), ops.dbis().versions); rc != 0) {
        return ops.Fail(rc, "versions cursor");
      }
      for (size_t p = part.begin; p < part.end; ++p) {
        const DocId id = by_root[p].second;
        Count(progress.documents);
        Member m;
        m.doc.doc = id;
        SHINGLED_RETURN_IF_ERROR(LiveUrls(ops, doc_urls.get(), versions.get(), id, options.max_urls,
                                          &m.doc.live_urls, &m.doc.urls));
        if (m.doc.live_urls == 0) continue;  // an old version no URL holds now
        StatusOr<internal::DocumentRecord> rec = internal::ReadDocument(ops, id);
        if (!rec.ok()) return rec.status();
        m.doc.bytes = rec->bytes;
        SHINGLED_RETURN_IF_ERROR(internal::ReadChunks(ops, id, &read, &m.has_chunks));
        if (!m.has_chunks) ++t.documents_without_chunks;
        const auto index = static_cast<uint32_t>(members.size());
        const size_t first = chunks.size();
        for (const dedup::Chunk& c : read) chunks.push_back(ChunkOf{c.hash, c.length, index});
        std::sort(chunks.begin() + static_cast<std::ptrdiff_t>(first), chunks.end(),
                  [](const ChunkOf& a, const ChunkOf& b) { return a.key() < b.key(); });
        chunks.erase(std::unique(chunks.begin() + static_cast<std::ptrdiff_t>(first), chunks.end(),
                                 [](const ChunkOf& a, const ChunkOf& b) {
                                   return a.hash == b.hash && a.length == b.length;
                                 }),
                     chunks.end());
        members.push_back(std::move(m));
      }
    }
    if (members.size() < 2) continue;
    // 3. Candidate pairs: members sharing a chunk held by at most max_chunk_docs of them, with
    // the chunk bytes they share (an upper bound of their bytes in common before templates);
    // the max_pairs_per_doc * members / 2 that share the most are checked.
    std::sort(chunks.begin(), chunks.end(),
              [](const ChunkOf& a, const ChunkOf& b) { return a.key() < b.key(); });
    pairs.clear();
    for (size_t i = 0; i < chunks.size();) {
      size_t j = i;
      while (j < chunks.size() && chunks[j].hash == chunks[i].hash &&
             chunks[j].length == chunks[i].length) {
        ++j;
      }
      if (j - i <= options.max_chunk_docs) {
        for (size_t x = i; x < j; ++x) {
          for (size_t y = x + 1; y < j; ++y) {
            pairs[uint64_t{chunks[x].member} << 32 | chunks[y].member] += chunks[i].length;
          }
        }
      }
      i = j;
    }
    std::vector<std::pair<uint64_t, uint64_t>> candidates(pairs.begin(), pairs.end());
    uint64_t unchecked = 0;
    const uint64_t budget = std::max<uint64_t>(1, options.max_pairs_per_doc * members.size() / 2);
    if (candidates.size() > budget) {
      unchecked = candidates.size() - budget;
      std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(budget),
                       candidates.end(), [](const auto& a, const auto& b) {
                         return a.second != b.second ? a.second > b.second : a.first < b.first;
                       });
      candidates.resize(budget);
    }
    std::sort(candidates.begin(), candidates.end());
    t.pairs_unchecked += unchecked;
    // 4. Links: the candidates whose bytes in common pass the thresholds.
    Components components(members.size());
    std::vector<std::pair<uint64_t, ClusterReportLink>> links;  // (pair key, link)
    for (const auto& [key, shared] : candidates) {
      const auto i = static_cast<size_t>(key >> 32), j = static_cast<size_t>(key & 0xffffffffu);
      const DocId a = members[i].doc.doc, b = members[j].doc.doc;
      StatusOr<CommonBytes> common = BytesInCommon(a, b, 0);
      if (!common.ok()) return common.status();
      ++t.pairs_checked;
      if (!Links(*common, options)) continue;
      ClusterReportLink link;
      link.a = a;
      link.b = b;
      link.shared_bytes = common->shared_bytes;
      link.length_a = common->length_a;
      link.length_b = common->length_b;
      link.share_a = common->share_a;
      link.share_b = common->share_b;
      const uint64_t both = common->length_a + common->length_b - common->shared_bytes;
      link.similarity =
          both == 0 ? 0 : static_cast<double>(common->shared_bytes) / static_cast<double>(both);
      link.relation = common->relation;
      links.emplace_back(key, link);
      components.Union(i, j);
    }
    // 5. The components of two or more members, most removable bytes first, then by id.
    std::unordered_map<size_t, size_t> index_of;  // component root -> index in `found`
    std::vector<ClusterReportCluster> found;
    for (size_t i = 0; i < members.size(); ++i) {
      const size_t r = components.Find(i);
      auto [it, inserted] = index_of.try_emplace(r, found.size());
      if (inserted) found.emplace_back();
      found[it->second].documents.push_back(members[i].doc);
    }
    for (const auto& [key, link] : links) {
      found[index_of.at(components.Find(static_cast<size_t>(key >> 32)))].links.push_back(link);
    }
    std::erase_if(found, [](const ClusterReportCluster& c) { return c.documents.size() < 2; });
    for (ClusterReportCluster& c : found) {
      c.partition = root;
      c.partition_pairs_unchecked = unchecked;
      std::sort(c.documents.begin(), c.documents.end(),
                [](const auto& x, const auto& y) { return x.doc < y.doc; });
      std::sort(c.links.begin(), c.links.end(), [](const auto& x, const auto& y) {
        return std::tie(x.a, x.b) < std::tie(y.a, y.b);
      });
      c.id = c.documents.front().doc;
      const ClusterReportDocument* keep = &c.documents.front();
      for (const ClusterReportDocument& d : c.documents) {
        c.bytes += d.bytes;
        if (d.bytes > keep->bytes) keep = &d;
      }
      c.keep = keep->doc;
      c.removable_bytes = c.bytes - keep->bytes;
      double sum = 0;
      for (const ClusterReportLink& l : c.links) sum += l.similarity;
      c.average_similarity = sum / static_cast<double>(c.links.size());
      if (c.documents.size() > 2) {
        c.type = ClusterReportType::kGroup;
      } else {
        const CommonRelation r = c.links.front().relation;
        c.type = r == CommonRelation::kAContainsB || r == CommonRelation::kBContainsA
                     ? ClusterReportType::kContains
                     : ClusterReportType::kPair;
      }
    }
    std::sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
      return x.removable_bytes != y.removable_bytes ? x.removable_bytes > y.removable_bytes
                                                    : x.id < y.id;
    });
    for (ClusterReportCluster& c : found) {
      if (t.clusters == options.limit) {
        t.limited = true;
        return OkStatus();
      }
      c.rank = ++t.clusters;
      t.documents += c.documents.size();
      t.links += c.links.size();
      t.bytes += c.bytes;
      t.removable_bytes += c.removable_bytes;
      SHINGLED_RETURN_IF_ERROR(cluster(c));
    }
  }
  return OkStatus();
}

}  // namespace shingled::store
