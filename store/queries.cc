// Store: the read-only queries. Each runs in one read transaction.
#include "store/internal/queries.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "dedup/estimate.h"
#include "store/internal/chunks.h"
#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/containment.h"
#include "store/internal/judge.h"
#include "store/internal/store_impl.h"
#include "store/internal/templates.h"
#include "store/internal/verify.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

namespace internal {

namespace {

// ReadBucketPostings from a bucket's entries in hand (`bucket`: its 12-byte entries in order, as
// MDB_GET_MULTIPLE hands them out).
void ReadBucketEntries(std::string_view bucket, uint64_t value, size_t max, std::vector<DocId>* out,
                       size_t* count, bool* more) {
  *count = 0;
  *more = false;
  // Entries sort by memcmp, that is by their big-endian value bits, then document: the value's
  // run starts after the entries whose 6 value bytes are below the value's low bits. They are
  // counted rather than searched for: the loads do not depend on each other, so the entry lines
  // the descent has not touched yet load at once (a binary search waits for each in turn; the
  // count was ~0.5 us faster per lookup at 1M documents, a bucket holding ~19 entries).
  const uint64_t low = value & kLowMask;
  const char* entries = bucket.data();
  const size_t n = bucket.size() / kPostingSize;
  size_t lo = 0;
  for (size_t i = 0; i < n; ++i) lo += GetBE48(entries + i * kPostingSize) < low;
  for (size_t i = lo; i < n; ++i) {
    const char* e = entries + i * kPostingSize;
    if (GetBE48(e) != low) break;
    if (*count == max) {
      *more = true;
      break;
    }
    out->push_back(GetBE48(e + 6));
    ++*count;
  }
}

}  // namespace

int ReadBucketPostings(MDB_cursor* cursor, uint64_t value, size_t max, std::vector<DocId>* out,
                       size_t* count, bool* more) {
  *count = 0;
  *more = false;
  PostingKey key(value);
  MDB_val k = Val(key.view()), v;
  int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_KEY);
  if (rc == MDB_NOTFOUND) return 0;
  if (rc != 0) return rc;
  size_t n = 0;
  if (rc = mdb_cursor_count(cursor, &n); rc != 0) return rc;
  // For a key with one entry GET_MULTIPLE leaves `v` as MDB_SET_KEY returned it.
  if (rc = mdb_cursor_get(cursor, &k, &v, MDB_GET_MULTIPLE); rc != 0) return rc;
  if (v.mv_size != n * kPostingSize) {
    return ReadValuePostings(cursor, value, max, out, count, more);
  }
  ReadBucketEntries(View(v), value, max, out, count, more);
  return 0;
}

}  // namespace internal

using internal::Cursor;
using internal::DocumentRecord;
using internal::GetBE32;
using internal::GetBE64;
using internal::GetLE64;
using internal::Key64;
using internal::SweepRecord;
using internal::TxnOps;
using internal::Val;
using internal::VersionRecord;
using internal::View;

namespace {

bool Live(const VersionRecord& v) { return internal::LiveVersion(v); }

// Every url id that ever pointed at `doc`.
Status UrlsOfDocument(TxnOps& ops, DocId doc, std::vector<UrlId>* out) {
  Cursor c;
  if (int rc = c.Open(ops.txn(), ops.dbis().doc_urls); rc != 0) return ops.Fail(rc, "doc_urls cursor");
  size_t count = 0;
  std::vector<uint64_t> ids;
  if (int rc = internal::ReadPostings(c.get(), Key64(doc).view(), SIZE_MAX, &ids, &count); rc != 0) {
    return ops.Fail(rc, "doc_urls");
  }
  out->insert(out->end(), ids.begin(), ids.end());
  return OkStatus();
}

// Per result: its cluster and the URL most recently seen with it as its live content (empty if
// none). Each database is read through one cursor, in key order: a key on the leaf page the
// cursor is on is found without a descent from the root, which documents stored close together
// (near-copies from one crawl) share (FORMAT.md, "Lookups").
Status Enrich(TxnOps& ops, std::vector<SimilarDoc>* results) {
  std::vector<size_t> by_doc(results->size());
  for (size_t i = 0; i < by_doc.size(); ++i) by_doc[i] = i;
  std::sort(by_doc.begin(), by_doc.end(), [&](size_t a, size_t b) { return (*results)[a].doc < (*results)[b].doc; });
  Cursor parents, doc_urls;
  if (int rc = parents.Open(ops.txn(), ops.dbis().cluster_parent); rc != 0) return ops.Fail(rc, "cluster_parent cursor");
  if (int rc = doc_urls.Open(ops.txn(), ops.dbis().doc_urls); rc != 0) return ops.Fail(rc, "doc_urls cursor");
  // (url, result) for every URL that ever pointed at a result's document.
  std::vector<std::pair<UrlId, size_t>> urls;
  std::vector<uint64_t> ids;
  for (size_t i : by_doc) {
    SimilarDoc& s = (*results)[i];
    StatusOr<ClusterId> cl = internal::FindCluster(ops, parents.get(), s.doc);
    if (!cl.ok()) return cl.status();
    s.cluster = *cl;
    ids.clear();
    size_t count = 0;
    if (int rc = internal::ReadPostings(doc_urls.get(), Key64(s.doc).view(), SIZE_MAX, &ids, &count); rc != 0) {
      return ops.Fail(rc, "doc_urls");
    }
    for (uint64_t u : ids) urls.emplace_back(u, i);
  }
  // The last version of each URL; per result, the latest that still shows its document (the
  // smallest url id on equal dates).
  std::sort(urls.begin(), urls.end());
  Cursor versions;
  if (int rc = versions.Open(ops.txn(), ops.dbis().versions); rc != 0) return ops.Fail(rc, "versions cursor");
  std::vector<std::pair<int64_t, UrlId>> best(results->size(), {INT64_MIN, 0});
  for (const auto& [url, i] : urls) {
    uint32_t seq = 0;
    StatusOr<VersionRecord> last = internal::LastVersion(ops, versions.get(), url, &seq);
    if (!last.ok()) return last.status();
    if (last->doc == (*results)[i].doc && last->date > best[i].first) best[i] = {last->date, url};
  }
  std::vector<std::pair<UrlId, size_t>> winners;
  for (size_t i = 0; i < best.size(); ++i) {
    if (best[i].second != 0) winners.emplace_back(best[i].second, i);
  }
  std::sort(winners.begin(), winners.end());
  Cursor names;
  if (int rc = names.Open(ops.txn(), ops.dbis().url_names); rc != 0) return ops.Fail(rc, "url_names cursor");
  for (const auto& [url, i] : winners) {
    Key64 key(url);
    MDB_val k = Val(key.view()), v;
    if (int rc = mdb_cursor_get(names.get(), &k, &v, MDB_SET_KEY); rc != 0) {
      return ops.Fail(rc, "url_names of url " + std::to_string(url));
    }
    (*results)[i].url = std::string(View(v));
  }
  return OkStatus();
}

}  // namespace

namespace internal {

// Candidates for a query (FORMAT.md, "Lookups"): the sample index first, a value with more than
// options.common_value_limit documents skipped; the features only when fewer than 8 of the
// sample values were usable or they found more than max_candidates postings; never the super
// shingles (the writer's "similar" relation: ~22 descents, and a page they would find shares
// sample values too). The documents found, in id order; when they are more than max_candidates,
// the max_candidates that internal::RankCandidates ranks first. Each value's postings are the
// B-tree's, then the write buffer's (the transaction's `buffer`).
Status FindQueryCandidates(TxnOps& ops, const StoreOptions& options, const WriteBuffer& buffer,
                           const dedup::Sketch& sketch, std::vector<DocId>* out, bool* truncated,
                           uint64_t* left_out, DocId exclude, std::span<const DocId> reserved) {
  const internal::Dbis& d = ops.dbis();
  std::vector<std::pair<DocId, uint32_t>> hits;
  hits.reserve(128);
  std::vector<DocId> postings;
  postings.reserve(64);
  size_t count = 0;
  bool more = false;
  Cursor mc, cc;
  if (int rc = mc.Open(ops.txn(), d.samples); rc != 0) return ops.Fail(rc, "samples cursor");
  if (int rc = cc.Open(ops.txn(), d.common_values); rc != 0) return ops.Fail(rc, "common_values cursor");
  // Each value's postings: the B-tree's bucket, then the write buffer's.
  auto read_postings = [&](uint64_t value, size_t max) -> Status {
    postings.clear();
    if (int rc = internal::ReadBucketPostings(mc.get(), value, max, &postings, &count, &more);
        rc != 0) {
      return ops.Fail(rc, "samples");
    }
    if (!more) {
      size_t buffered = 0;
      buffer.Read(internal::kBufferSamples, value, max - count, &postings, &buffered, &more);
      count += buffered;
    }
    return OkStatus();
  };
  // A value is used when it has at most common_value_limit postings. At most kQuickRead postings
  // are read first, and the stop list is looked at only for a value with more: most values have
  // a few postings, and the stop list is then one lookup saved per value.
  constexpr size_t kQuickRead = 64;
  const uint64_t limit = options.common_value_limit;
  size_t usable = 0;  // indexed values read and within the limit (with postings or not)
  for (uint64_t value : sketch.sample.values) {
    if (!internal::IndexedSampleValue(value, sketch.sample.log2_modulus)) continue;
    SHINGLED_RETURN_IF_ERROR(read_postings(value, std::min<uint64_t>(limit, kQuickRead)));
    bool use = !more;
    if (more && limit > kQuickRead) {
      Key64 key(value);
      MDB_val k = Val(key.view()), v;
      int rc = mdb_cursor_get(cc.get(), &k, &v, MDB_SET_KEY);
      if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "common_values");
      if (rc == 0 && v.mv_size != 8) return DataLossError("common_values value is not 8 bytes");
      const bool over = rc == 0 && GetLE64(static_cast<const char*>(v.mv_data)) > limit;
      if (!over) {
        SHINGLED_RETURN_IF_ERROR(read_postings(value, limit));
        use = !more;
      }
    }
    if (use) {
      ++usable;
      for (DocId doc : postings) hits.emplace_back(doc, 1);
    }
  }
  if (internal::QueryReadsFeatures(usable, hits.size(), options.max_candidates)) {
    Cursor fc;
    if (int rc = fc.Open(ops.txn(), d.features); rc != 0) return ops.Fail(rc, "features cursor");
    const size_t cap = internal::FeatureReadCap(options);
    for (uint64_t value : sketch.features) {
      postings.clear();
      if (int rc = internal::ReadValuePostings(fc.get(), value, cap, &postings, &count, &more); rc != 0) {
        return ops.Fail(rc, "features");
      }
      size_t buffered = 0;
      if (!more)
        buffer.Read(internal::kBufferFeatures, value, cap - count, &postings, &buffered, &more);
      for (DocId doc : postings) hits.emplace_back(doc, 4);
    }
  }
  // The ranking only decides which candidates are kept when there are more than max_candidates
  // (SimilarIn scores each candidate and orders the results itself).
  internal::QueryCandidatesOf(&hits, exclude, reserved, options.max_candidates, out, truncated,
                              left_out);
  return OkStatus();
}

}  // namespace internal

namespace {

// Asks the CPU to load every cache line of `bytes` without waiting for them.
void PrefetchLines(std::string_view bytes) {
  constexpr uintptr_t kLine = 64;
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  for (p -= reinterpret_cast<uintptr_t>(p) % kLine; p < end; p += kLine) __builtin_prefetch(p);
}

// A query's candidate records (found before scoring, in id order), decoded one at a time into one
// sketch reused for every candidate.
class QueryRecords final : public internal::CandidateRecords {
 public:
  QueryRecords(TxnOps& ops, const dedup::Sketch& query,
               std::vector<std::pair<DocId, std::string_view>> records)
      : ops_(ops), query_(query), records_(std::move(records)) {}

  StatusOr<bool> Read(DocId id, const dedup::Sketch** query,
                      const dedup::Sketch** candidate) override {
    const auto it = std::lower_bound(records_.begin(), records_.end(), id,
                                     [](const auto& r, DocId d) { return r.first < d; });
    if (it == records_.end() || it->first != id) return false;
    bool has_sketch = false;
    SHINGLED_RETURN_IF_ERROR(internal::DecodeScoringSketch(it->second, &other_, &has_sketch));
    *query = &query_;
    *candidate = has_sketch ? &other_ : nullptr;
    return true;
  }
  Status ReadVerifySample(DocId id, std::span<const uint32_t>* sample, bool* known) override {
    SHINGLED_RETURN_IF_ERROR(internal::ReadVerifySample(ops_, id, &verify_, known));
    *sample = verify_;
    return OkStatus();
  }

 private:
  TxnOps& ops_;
  const dedup::Sketch& query_;
  const std::vector<std::pair<DocId, std::string_view>> records_;
  dedup::Sketch other_;
  std::vector<uint32_t> verify_;
};

// `chunks`: the query's (its containment candidates are found through them).
StatusOr<std::vector<SimilarDoc>> SimilarIn(TxnOps& ops, const internal::StoreImpl& impl,
                                            const dedup::Sketch& sketch,
                                            std::span<const dedup::Chunk> chunks, DocId exclude,
                                            const QueryOptions& query) {
  std::vector<SimilarDoc> out;
  if (sketch.empty()) return out;
  std::vector<DocId> candidates;
  bool truncated = false;
  StatusOr<std::shared_ptr<const internal::WriteBuffer>> buffer = impl.BufferFor(ops);
  if (!buffer.ok()) return buffer.status();
  std::vector<internal::ContainmentCandidate> containment;
  std::string host;
  internal::TemplateJudge judge(ops, impl.options_, buffer->get());
  if (exclude != 0 && !chunks.empty()) {
    StatusOr<std::string> h = judge.HostOfDocument(exclude);
    if (!h.ok()) return h.status();
    host = std::move(*h);
  }
  SHINGLED_RETURN_IF_ERROR(internal::FindContainment(
      impl.options_, judge, chunks, host, exclude,
      internal::ContainmentRoom(impl.options_.max_candidates), &containment));
  std::vector<DocId> reserved;
  for (const internal::ContainmentCandidate& c : containment) reserved.push_back(c.doc);
  SHINGLED_RETURN_IF_ERROR(
      internal::FindQueryCandidates(ops, impl.options_, **buffer, sketch, &candidates, &truncated,
                                    query.candidates_left_out, exclude, reserved));
  candidates.insert(candidates.end(), reserved.begin(), reserved.end());
  // The records in id order through one cursor (see Enrich). All are found first, each record's
  // cache lines prefetched as soon as its address is known, so that they load while the cursor
  // looks for the next one; then each is decoded into one sketch reused for every candidate.
  std::sort(candidates.begin(), candidates.end());
  Cursor documents;
  if (int rc = documents.Open(ops.txn(), ops.dbis().documents); rc != 0) return ops.Fail(rc, "documents cursor");
  std::vector<std::pair<DocId, std::string_view>> records;
  records.reserve(candidates.size());
  for (DocId cand : candidates) {
    if (cand == exclude) continue;
    Key64 key(cand);
    MDB_val k = Val(key.view()), v;
    if (int rc = mdb_cursor_get(documents.get(), &k, &v, MDB_SET_KEY); rc != 0) {
      return ops.Fail(rc, "document " + std::to_string(cand));
    }
    PrefetchLines(View(v));
    records.emplace_back(cand, View(v));
  }
  std::vector<DocId> ids;
  for (const auto& r : records) ids.push_back(r.first);
  QueryRecords reads(ops, sketch, std::move(records));
  StatusOr<std::vector<SimilarDoc>> scored =
      internal::ScoreQueryCandidates(ids, containment, query, impl.params_, reads);
  if (!scored.ok()) return scored.status();
  out = std::move(*scored);
  SHINGLED_RETURN_IF_ERROR(Enrich(ops, &out));
  return out;
}

// A `versions` key next to url id `url`'s that is not (url id, seq): reading its seq would read
// past it.
Status VersionKeyLoss(const MDB_val& key, UrlId url) {
  return DataLossError("versions has a key of " + std::to_string(key.mv_size) +
                       " bytes, not 12, next to url id " + std::to_string(url));
}

// The last version of `url` with a document.
Status LastDocumentOfUrl(TxnOps& ops, std::string_view url, UrlId* id, DocId* doc) {
  StatusOr<UrlId> u = internal::LookupUrl(ops, url);
  if (!u.ok()) {
    if (u.status().code() == StatusCode::kNotFound) return NotFoundError("URL never stored: " + std::string(url));
    return u.status();
  }
  *id = *u;
  *doc = 0;
  Cursor c;
  if (int rc = c.Open(ops.txn(), ops.dbis().versions); rc != 0) return ops.Fail(rc, "versions cursor");
  std::string key = internal::VersionKey(*u + 1, 0);
  MDB_val k = Val(key), v;
  int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
  rc = mdb_cursor_get(c.get(), &k, &v, rc == 0 ? MDB_PREV : MDB_LAST);
  while (rc == 0) {
    if (k.mv_size != 12) return VersionKeyLoss(k, *u);
    if (GetBE64(static_cast<const char*>(k.mv_data)) != *u) break;
    StatusOr<VersionRecord> ver = internal::DecodeVersion(View(v));
    if (!ver.ok()) return ver.status();
    if (ver->doc != 0) {
      *doc = ver->doc;
      return OkStatus();
    }
    rc = mdb_cursor_get(c.get(), &k, &v, MDB_PREV);
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "versions");
  return NotFoundError("URL never had a document: " + std::string(url));
}

// The sketch of the document whose record (with a sketch) is `rec`, stored under
// `holder`, with its verification sample (none for a document stored before format 10).
StatusOr<dedup::Sketch> QuerySketchOf(TxnOps& ops, const DocumentRecord& rec, DocId holder) {
  dedup::Sketch sketch = internal::SketchOf(rec);
  bool known = false;
  SHINGLED_RETURN_IF_ERROR(internal::ReadVerifySample(ops, holder, &sketch.verify_sample, &known));
  return sketch;
}

// The similar query of stored document `doc`, whose sketch is `sketch`: its chunks find its
// containment candidates and each result's bytes in common.
StatusOr<std::vector<SimilarDoc>> SimilarOfDocument(TxnOps& ops, const internal::StoreImpl& impl,
                                                    DocId doc, const dedup::Sketch& sketch,
                                                    const QueryOptions& query) {
  std::vector<dedup::Chunk> chunks;
  bool known = false;
  SHINGLED_RETURN_IF_ERROR(internal::ReadChunks(ops, doc, &chunks, &known));
  StatusOr<std::vector<SimilarDoc>> results = SimilarIn(ops, impl, sketch, chunks, doc, query);
  if (!results.ok()) return results;
  StatusOr<std::shared_ptr<const internal::WriteBuffer>> buffer = impl.BufferFor(ops);
  if (!buffer.ok()) return buffer.status();
  internal::TemplateJudge judge(ops, impl.options_, buffer->get());
  SHINGLED_RETURN_IF_ERROR(internal::FillSimilarCommon(judge, doc, chunks, &*results));
  return results;
}

}  // namespace

StatusOr<std::vector<SweepInfo>> LmdbStore::Sweeps() const {
  SHINGLED_READ_TXN(ops);
  Cursor c;
  if (int rc = c.Open(ops.txn(), ops.dbis().sweeps); rc != 0) return ops.Fail(rc, "sweeps cursor");
  std::vector<SweepInfo> out;
  MDB_val k, v;
  int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
  while (rc == 0) {
    StatusOr<SweepRecord> rec = internal::DecodeSweep(View(v));
    if (!rec.ok()) return rec.status();
    StatusOr<SweepId> id = internal::StoredSweepId(View(k), "a sweeps key");
    if (!id.ok()) return id.status();
    out.push_back(internal::SweepInfoOf(*id, *rec));
    rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT);
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "sweeps");
  return out;
}

StatusOr<SweepInfo> LmdbStore::FindSweep(std::string_view name) const {
  SHINGLED_READ_TXN(ops);
  std::string_view v;
  Status s = ops.Get(ops.dbis().sweep_names, name, &v, "sweep " + std::string(name));
  if (!s.ok()) return s;
  StatusOr<SweepId> id =
      internal::StoredSweepId(v, "the sweep_names value of " + std::string(name));
  if (!id.ok()) return id.status();
  SHINGLED_RETURN_IF_ERROR(ops.Get(ops.dbis().sweeps, internal::SweepKey(*id), &v, "sweeps"));
  StatusOr<SweepRecord> rec = internal::DecodeSweep(v);
  if (!rec.ok()) return rec.status();
  return internal::SweepInfoOf(*id, *rec);
}

StatusOr<DocumentInfo> LmdbStore::Document(DocId doc) const {
  SHINGLED_READ_TXN(ops);
  DocId holder = 0;
  StatusOr<DocumentRecord> rec = internal::ReadDocument(ops, doc);
  if (!rec.ok()) return rec.status();
  DocumentInfo info;
  info.id = doc;
  info.bytes = rec->bytes;
  info.tokens = rec->tokens;
  info.shingles = rec->shingles;
  info.first_seen = rec->first_seen;
  info.last_seen = rec->last_seen;
  StatusOr<DocumentRecord> with_sketch = internal::ReadSketchHolder(ops, doc, &holder);
  if (!with_sketch.ok()) return with_sketch.status();
  info.representative = holder;
  info.sketch = internal::SketchOf(*with_sketch);
  bool known = false;  // the representative's verification sample, if it has one
  SHINGLED_RETURN_IF_ERROR(
      internal::ReadVerifySample(ops, holder, &info.sketch.verify_sample, &known));
  // The document's own counts and fingerprints, the representative's sketch values.
  info.sketch.bytes = rec->bytes;
  info.sketch.tokens = rec->tokens;
  info.sketch.shingles = rec->shingles;
  info.sketch.identical = rec->identical;
  info.sketch.lexical = rec->lexical;
  info.sketch.shingle = rec->shingle;
  StatusOr<ClusterId> cl = internal::FindCluster(ops, doc);
  if (!cl.ok()) return cl.status();
  info.cluster = *cl;
  return info;
}

StatusOr<DocId> LmdbStore::FindIdentical(const dedup::Fingerprint128& identical) const {
  SHINGLED_READ_TXN(ops);
  StatusOr<std::shared_ptr<const internal::WriteBuffer>> buffer = impl_->BufferFor(ops);
  if (!buffer.ok()) return buffer.status();
  if (DocId d = (*buffer)->FindFingerprint(internal::kFpIdentical, identical); d != 0) return d;
  std::string_view v;
  Status s = ops.Get(ops.dbis().fp_identical, internal::FingerprintKey(identical), &v, "fp_identical");
  if (s.code() == StatusCode::kNotFound) return DocId{0};
  if (!s.ok()) return s;
  if (v.size() != 8) return DataLossError("fp_identical value is not 8 bytes");
  return GetBE64(v.data());
}

StatusOr<std::vector<UrlVersion>> LmdbStore::History(std::string_view url) const {
  SHINGLED_READ_TXN(ops);
  StatusOr<UrlId> id = internal::LookupUrl(ops, url);
  if (!id.ok()) {
    if (id.status().code() == StatusCode::kNotFound) return NotFoundError("URL never stored: " + std::string(url));
    return id.status();
  }
  std::vector<UrlVersion> out;
  Cursor c;
  if (int rc = c.Open(ops.txn(), ops.dbis().versions); rc != 0) return ops.Fail(rc, "versions cursor");
  std::string key = internal::VersionKey(*id, 0);
  MDB_val k = Val(key), v;
  int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
  while (rc == 0) {
    if (k.mv_size != 12) return VersionKeyLoss(k, *id);
    if (GetBE64(static_cast<const char*>(k.mv_data)) != *id) break;
    StatusOr<VersionRecord> ver = internal::DecodeVersion(View(v));
    if (!ver.ok()) return ver.status();
    UrlVersion uv;
    uv.seq = GetBE32(static_cast<const char*>(k.mv_data) + 8);
    uv.sweep = ver->sweep;
    uv.date = ver->date;
    uv.doc = ver->doc;
    uv.http_status = static_cast<int>(ver->http_status);
    uv.verdict = ver->verdict;
    uv.canonical_link = ver->canonical_link;
    uv.redirect_target = ver->redirect_target;
    out.push_back(std::move(uv));
    rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT);
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "versions");
  return out;
}

StatusOr<ClusterInfo> LmdbStore::Cluster(DocId any_member) const {
  SHINGLED_READ_TXN(ops);
  std::string_view v;
  // A cluster's id is its root document's id, so an id that is no document is no cluster.
  if (Status found = ops.Get(ops.dbis().documents, Key64(any_member).view(), &v, "document");
      !found.ok()) {
    if (found.code() != StatusCode::kNotFound) return found;
    return NotFoundError("cluster " + std::to_string(any_member) +
                         " not found (no such cluster or document)");
  }
  StatusOr<ClusterId> root = internal::FindCluster(ops, any_member);
  if (!root.ok()) return root.status();
  StatusOr<std::vector<DocId>> members = internal::ClusterMembers(ops, *root);
  if (!members.ok()) return members.status();
  ClusterInfo info;
  info.id = *root;
  for (DocId m : *members) {
    StatusOr<DocumentRecord> rec = internal::ReadDocument(ops, m);
    if (!rec.ok()) return rec.status();
    ClusterMember cm;
    cm.doc = m;
    cm.first_seen = rec->first_seen;
    cm.last_seen = rec->last_seen;
    std::vector<UrlId> urls;
    SHINGLED_RETURN_IF_ERROR(UrlsOfDocument(ops, m, &urls));
    for (UrlId u : urls) {
      SHINGLED_RETURN_IF_ERROR(ops.Get(ops.dbis().url_names, Key64(u).view(), &v, "url_names"));
      cm.urls.emplace_back(v);
    }
    info.members.push_back(std::move(cm));
  }
  return info;
}

StatusOr<std::vector<SimilarDoc>> LmdbStore::SimilarToDocument(DocId doc,
                                                               const QueryOptions& query) const {
  SHINGLED_READ_TXN(ops);
  DocId holder = 0;
  StatusOr<DocumentRecord> rec = internal::ReadSketchHolder(ops, doc, &holder);
  if (!rec.ok()) return rec.status();
  StatusOr<dedup::Sketch> sketch = QuerySketchOf(ops, *rec, holder);
  if (!sketch.ok()) return sketch.status();
  return SimilarOfDocument(ops, *impl_, doc, *sketch, query);
}

StatusOr<std::vector<SimilarDoc>> LmdbStore::SimilarToUrl(std::string_view url,
                                                          const QueryOptions& query) const {
  SHINGLED_READ_TXN(ops);
  UrlId id = 0;
  DocId doc = 0;
  SHINGLED_RETURN_IF_ERROR(LastDocumentOfUrl(ops, url, &id, &doc));
  DocId holder = 0;
  StatusOr<DocumentRecord> rec = internal::ReadSketchHolder(ops, doc, &holder);
  if (!rec.ok()) return rec.status();
  StatusOr<dedup::Sketch> sketch = QuerySketchOf(ops, *rec, holder);
  if (!sketch.ok()) return sketch.status();
  return SimilarOfDocument(ops, *impl_, doc, *sketch, query);
}

StatusOr<std::vector<SimilarDoc>> LmdbStore::SimilarToSketch(const dedup::Sketch& sketch,
                                                             const QueryOptions& query) const {
  const dedup::SketchParams& p = impl_->params_;
  if (!sketch.empty() && (sketch.minhashes.size() != static_cast<size_t>(p.num_minhashes()) ||
                          sketch.features.size() != static_cast<size_t>(p.feature_groups))) {
    return InvalidArgumentError("sketch was not made with this store's params");
  }
  SHINGLED_READ_TXN(ops);
  StatusOr<std::vector<SimilarDoc>> out = SimilarIn(ops, *impl_, sketch, sketch.chunks, 0, query);
  if (!out.ok()) return out;
  StatusOr<std::shared_ptr<const internal::WriteBuffer>> buffer = impl_->BufferFor(ops);
  if (!buffer.ok()) return buffer.status();
  internal::TemplateJudge judge(ops, impl_->options_, buffer->get());
  SHINGLED_RETURN_IF_ERROR(internal::FillSimilarCommon(judge, 0, sketch.chunks, &*out));
  return out;
}

StatusOr<StoreStats> LmdbStore::Stats() const {
  SHINGLED_READ_TXN(ops);
  StoreStats out;
  for (const internal::TableSpec& t : internal::kTables) {
    MDB_stat st;
    if (int rc = mdb_stat(ops.txn(), impl_->dbis_.*t.member, &st); rc != 0) return ops.Fail(rc, "stat");
    out.databases.push_back(DatabaseStats{
        t.name, st.ms_entries, (st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages) * st.ms_psize});
  }
  auto counter = [&](const char* key, uint64_t* value) -> Status {
    std::string_view v;
    SHINGLED_RETURN_IF_ERROR(ops.Get(ops.dbis().meta, key, &v, key));
    if (v.size() != 8) return DataLossError(std::string("meta ") + key + " is not 8 bytes");
    *value = internal::GetLE64(v.data());
    return OkStatus();
  };
  SHINGLED_RETURN_IF_ERROR(counter("count.documents", &out.documents));
  SHINGLED_RETURN_IF_ERROR(counter("count.urls", &out.urls));
  SHINGLED_RETURN_IF_ERROR(counter("count.versions", &out.versions));
  SHINGLED_RETURN_IF_ERROR(counter("count.clusters", &out.clusters));
  SHINGLED_RETURN_IF_ERROR(counter(internal::kLargestClusterKey, &out.largest_cluster));
  StatusOr<std::shared_ptr<const internal::WriteBuffer>> buffer = impl_->BufferFor(ops);
  if (!buffer.ok()) return buffer.status();
  out.buffered_postings = (*buffer)->postings();
  out.buffered_fingerprints = (*buffer)->fingerprints();
  out.key_filter_bytes = impl_->key_filter_bytes_.load(std::memory_order_relaxed);
  MDB_envinfo info;
  MDB_stat env_stat;
  mdb_env_info(impl_->env_, &info);
  mdb_env_stat(impl_->env_, &env_stat);
  out.map_size = info.me_mapsize;
  out.file_bytes = (info.me_last_pgno + 1) * env_stat.ms_psize;
  uint64_t in_databases = 0;
  for (const DatabaseStats& d : out.databases) in_databases += d.bytes;
  out.other_bytes = out.file_bytes > in_databases ? out.file_bytes - in_databases : 0;
  return out;
}

StatusOr<UrlId> LmdbStore::KnownUrls(UrlId after, size_t max_urls,
                                     const std::function<void(std::string_view url)>& visit) const {
  if (max_urls == 0) return InvalidArgumentError("KnownUrls: max_urls must be at least 1");
  SHINGLED_READ_TXN(ops);
  Cursor names;
  if (int rc = names.Open(ops.txn(), ops.dbis().url_names); rc != 0) {
    return ops.Fail(rc, "url_names cursor");
  }
  const std::string start(Key64(after + 1).view());
  MDB_val k = Val(start), v;
  int rc = mdb_cursor_get(names.get(), &k, &v, MDB_SET_RANGE);
  size_t looked_at = 0;
  UrlId last = 0;
  while (rc == 0) {
    if (looked_at == max_urls) return last;
    if (k.mv_size != 8) return DataLossError("url_names key is not 8 bytes");
    last = GetBE64(static_cast<const char*>(k.mv_data));
    ++looked_at;
    uint32_t seq = 0;
    StatusOr<VersionRecord> version = internal::LastVersion(ops, last, &seq);
    if (version.ok()) {
      if (Live(*version)) visit(View(v));
    } else if (version.status().code() != StatusCode::kNotFound) {
      return version.status();
    }
    rc = mdb_cursor_get(names.get(), &k, &v, MDB_NEXT);
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "url_names");
  return UrlId{0};
}

}  // namespace shingled::store
