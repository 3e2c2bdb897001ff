// Store: the repository reports (paper 003, figures 5 and 6): identical-content sets
// and clusters of documents linked by bytes in common. Read-only; each streams its rows to a
// callback and holds one set's or one store cluster's data at a time (docs/REPORTS.md).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/deadline.h"
#include "store/internal/chunks.h"
#include "store/internal/clusters.h"
#include "store/internal/components.h"
#include "store/internal/codec.h"
#include "store/internal/listings.h"
#include "store/internal/store_impl.h"
#include "store/internal/write_buffer.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

using internal::Components;
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
        if (Status late = CheckDeadline(); !late.ok()) return late;
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

// A live member of the partition being analysed.
struct Member {
  ClusterReportDocument doc;
  std::vector<UrlId> live;  // its live URLs, by id
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
  StatusOr<std::unique_ptr<internal::ListingReads>> reads =
      internal::NewLmdbListingReads(*impl_, /*one_txn=*/false);
  if (!reads.ok()) return reads.status();
  return internal::StreamClusterReport(**reads, options, cluster, totals, progress);
}

// One walk of `chunk_docs`, whose entries put a chunk's documents next to each other, in read
// transactions of about kChunkEntriesPerTxn entries (a chunk's entries never span two: they share
// a key), with the write buffer's postings of the first transaction walked in step.
Status internal::WalkLmdbChunkPostings(const StoreImpl& impl,
                                       const std::function<void(uint64_t, DocId)>& visit) {
  // The write buffer's `chunk_docs` postings (FORMAT.md, "The write buffer of chunk_docs"), of the
  // first transaction, walked in step with the B-tree's: both are in (hash, document) order.
  std::shared_ptr<const internal::WriteBuffer> buffer;
  int slice = 0;
  size_t at = 0;  // the next buffered posting: chunk_parts[slice]->entries()[at]
  // Visits the buffered postings of chunks below `hash` (up to and including it when `inclusive`).
  auto visit_buffered = [&](uint64_t hash, bool inclusive) {
    while (slice < internal::kBufferSlices) {
      const std::vector<internal::BufferEntry>& e = buffer->chunk_parts[slice]->entries();
      if (at == e.size()) {
        ++slice;
        at = 0;
        continue;
      }
      if (e[at].first > hash || (!inclusive && e[at].first == hash)) return;
      visit(e[at].first, e[at].second);
      ++at;
    }
  };
  std::string next_key;  // empty: from the first
  for (bool done = false; !done;) {
    StatusOr<internal::ReadTxn> txn = impl.BeginRead();
    if (!txn.ok()) return txn.status();
    TxnOps ops(txn->txn.get(), impl.dbis_);
    if (buffer == nullptr) {
      StatusOr<std::shared_ptr<const internal::WriteBuffer>> b = impl.BufferFor(ops);
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
    std::optional<uint64_t> last_hash;
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
      visit_buffered(hash, /*inclusive=*/false);
      visit(hash, internal::PostingDoc(internal::View(v)));
      last_hash = hash;
    }
    if (rc == MDB_NOTFOUND) {
      done = true;
      visit_buffered(UINT64_MAX, /*inclusive=*/true);
    } else if (rc != 0) {
      return ops.Fail(rc, "chunk_docs");
    } else if (last_hash.has_value()) {
      visit_buffered(*last_hash, /*inclusive=*/true);
    }
  }
  return OkStatus();
}

// The clusters report over ListingReads (store/internal/listings.h), for both backends.
Status internal::StreamClusterReport(
    ListingReads& reads, const ClusterReportOptions& options,
    const std::function<Status(const ClusterReportCluster&)>& cluster, ClusterReportTotals* totals,
    const RepoReportProgress& progress) {
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
  // chunks in more than max_chunk_docs documents left out, from one walk of the chunk postings.
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
    // (A posting may come twice: on LMDB, a document moved from the write buffer into the B-tree
    // between two transactions of the walk.)
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
  SHINGLED_RETURN_IF_ERROR(reads.ForEachChunkPosting([&](uint64_t hash, DocId doc) {
    if (!docs_of_chunk.empty() && hash != current) flush();
    current = hash;
    docs_of_chunk.push_back(doc);
  }));
  if (!docs_of_chunk.empty()) flush();
  SHINGLED_RETURN_IF_ERROR(CheckDeadline());
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

  std::vector<DocId> ids, member_ids;
  std::vector<std::vector<UrlId>> live, member_live;
  std::vector<std::optional<ListedDocument>> recs;
  std::vector<std::vector<dedup::Chunk>> read;
  std::vector<Member> members;
  std::vector<ChunkOf> chunks;
  std::unordered_map<uint64_t, uint64_t> pairs;  // (i << 32 | j) -> chunk bytes shared, i < j
  std::vector<std::pair<DocId, DocId>> checked;
  std::vector<CommonBytes> commons;
  for (const Partition& part : partitions) {
    SHINGLED_RETURN_IF_ERROR(CheckDeadline());
    Count(progress.clusters);
    ++t.partitions;
    const DocId root = by_root[part.begin].first;
    // 2. Its live documents (those a live URL holds: not an old version), their records and
    // chunks.
    ids.clear();
    for (size_t p = part.begin; p < part.end; ++p) ids.push_back(by_root[p].second);
    SHINGLED_RETURN_IF_ERROR(reads.LiveUrls(ids, &live));
    member_ids.clear();
    member_live.clear();
    for (size_t i = 0; i < ids.size(); ++i) {
      Count(progress.documents);
      if (live[i].empty()) continue;
      member_ids.push_back(ids[i]);
      member_live.push_back(std::move(live[i]));
    }
    SHINGLED_RETURN_IF_ERROR(reads.Documents(member_ids, &recs));
    SHINGLED_RETURN_IF_ERROR(reads.Chunks(member_ids, &read));
    members.clear();
    chunks.clear();
    for (size_t i = 0; i < member_ids.size(); ++i) {
      if (!recs[i]) continue;  // on the cluster: an id reserved, its record not written yet
      Member m;
      m.doc.doc = member_ids[i];
      m.doc.bytes = recs[i]->bytes;
      m.doc.live_urls = member_live[i].size();
      m.live = std::move(member_live[i]);
      m.has_chunks = !read[i].empty();
      if (!m.has_chunks) ++t.documents_without_chunks;
      const auto index = static_cast<uint32_t>(members.size());
      const size_t first = chunks.size();
      for (const dedup::Chunk& c : read[i]) chunks.push_back(ChunkOf{c.hash, c.length, index});
      std::sort(chunks.begin() + static_cast<std::ptrdiff_t>(first), chunks.end(),
                [](const ChunkOf& a, const ChunkOf& b) { return a.key() < b.key(); });
      chunks.erase(std::unique(chunks.begin() + static_cast<std::ptrdiff_t>(first), chunks.end(),
                               [](const ChunkOf& a, const ChunkOf& b) {
                                 return a.hash == b.hash && a.length == b.length;
                               }),
                   chunks.end());
      members.push_back(std::move(m));
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
    checked.clear();
    for (const auto& [key, shared] : candidates) {
      checked.emplace_back(members[key >> 32].doc.doc, members[key & 0xffffffffu].doc.doc);
    }
    SHINGLED_RETURN_IF_ERROR(reads.Common(checked, &commons));
    t.pairs_checked += checked.size();
    Components components(members.size());
    std::vector<std::pair<uint64_t, ClusterReportLink>> links;  // (pair key, link)
    for (size_t c = 0; c < candidates.size(); ++c) {
      const uint64_t key = candidates[c].first;
      const CommonBytes& common = commons[c];
      if (!Links(common, options)) continue;
      ClusterReportLink link;
      link.a = checked[c].first;
      link.b = checked[c].second;
      link.shared_bytes = common.shared_bytes;
      link.length_a = common.length_a;
      link.length_b = common.length_b;
      link.share_a = common.share_a;
      link.share_b = common.share_b;
      const uint64_t both = common.length_a + common.length_b - common.shared_bytes;
      link.similarity =
          both == 0 ? 0 : static_cast<double>(common.shared_bytes) / static_cast<double>(both);
      link.relation = common.relation;
      links.emplace_back(key, link);
      components.Union(static_cast<size_t>(key >> 32), static_cast<size_t>(key & 0xffffffffu));
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
    std::vector<size_t> order;  // the clusters of two or more members, in `found`
    for (size_t i = 0; i < found.size(); ++i) {
      ClusterReportCluster& c = found[i];
      if (c.documents.size() < 2) continue;
      order.push_back(i);
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
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      const ClusterReportCluster &a = found[x], &b = found[y];
      return a.removable_bytes != b.removable_bytes ? a.removable_bytes > b.removable_bytes
                                                    : a.id < b.id;
    });
    for (size_t i : order) {
      if (t.clusters == options.limit) {
        t.limited = true;
        return OkStatus();
      }
      ClusterReportCluster& c = found[i];
      // 6. The names of its documents' first max_urls live URLs, read for the clusters listed.
      std::vector<UrlId> named;
      for (const ClusterReportDocument& d : c.documents) {
        // The members are in id order (the partition's documents are).
        const Member& m =
            *std::lower_bound(members.begin(), members.end(), d.doc,
                              [](const Member& x, DocId doc) { return x.doc.doc < doc; });
        const size_t n = std::min(m.live.size(), options.max_urls);
        named.insert(named.end(), m.live.begin(), m.live.begin() + static_cast<std::ptrdiff_t>(n));
      }
      std::vector<std::string> names;
      SHINGLED_RETURN_IF_ERROR(reads.UrlNames(named, &names));
      size_t at = 0;
      for (ClusterReportDocument& d : c.documents) {
        const size_t n = std::min<size_t>(d.live_urls, options.max_urls);
        d.urls.assign(std::make_move_iterator(names.begin() + static_cast<std::ptrdiff_t>(at)),
                      std::make_move_iterator(names.begin() + static_cast<std::ptrdiff_t>(at + n)));
        at += n;
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
