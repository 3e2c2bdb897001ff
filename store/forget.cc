// Forgetting on the LMDB store: a takedown removes URLs, their versions, the documents no URL
// shows any more, and recomputes the clusters those documents leave (FORMAT.md, "Forgetting").
#include <openssl/evp.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "store/internal/clusters.h"
#include "store/internal/forget_rules.h"
#include "store/internal/lmdb.h"
#include "store/internal/store_impl.h"
#include "store/internal/sweeps.h"
#include "store/internal/verify.h"
#include "store/lmdb_store.h"

namespace shingled::store {

std::string_view ForgetScopeName(ForgetScope scope) {
  switch (scope) {
    case ForgetScope::kUrl:
      return "url";
    case ForgetScope::kHost:
      return "host";
    case ForgetScope::kPrefix:
      return "prefix";
    case ForgetScope::kRetention:
      return "retention";
  }
  return "unknown";
}

std::string RetentionRulesText(const RetentionOptions& options) {
  return "max_version_age=" + std::to_string(options.max_version_age) +
         " max_gone_age=" + std::to_string(options.max_gone_age);
}

namespace internal {

std::array<uint8_t, 32> Sha256(std::string_view bytes) {
  std::array<uint8_t, 32> digest{};
  unsigned size = 0;
  // EVP_Digest cannot fail for SHA-256 with valid arguments short of memory exhaustion; the
  // digest then stays zero, which no value hashes to.
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    digest.fill(0);
  }
  return digest;
}

std::string EncodeForgetRecord(const ForgetRecord& r) {
  std::string out;
  AppendVarint(&out, ZigZag(r.date));
  out.push_back(static_cast<char>(r.scope));
  out.append(reinterpret_cast<const char*>(r.value_sha256.data()), r.value_sha256.size());
  for (uint64_t n : {r.urls, r.versions, r.documents, r.clusters_split}) AppendVarint(&out, n);
  return out;
}

StatusOr<ForgetRecord> DecodeForgetRecord(uint64_t id, std::string_view bytes) {
  ForgetRecord r;
  r.id = id;
  uint64_t date = 0;
  if (!ReadVarint(&bytes, &date) || bytes.size() < 33) {
    return DataLossError("forget record " + std::to_string(id) + " is truncated");
  }
  r.date = UnZigZag(date);
  const auto scope = static_cast<uint8_t>(bytes[0]);
  if (scope < 1 || scope > 4) {
    return DataLossError("forget record " + std::to_string(id) + " has scope " +
                         std::to_string(scope));
  }
  r.scope = static_cast<ForgetScope>(scope);
  std::copy_n(reinterpret_cast<const uint8_t*>(bytes.data() + 1), 32, r.value_sha256.begin());
  bytes.remove_prefix(33);
  for (uint64_t* n : {&r.urls, &r.versions, &r.documents, &r.clusters_split}) {
    if (!ReadVarint(&bytes, n)) {
      return DataLossError("forget record " + std::to_string(id) + " is truncated");
    }
  }
  if (!bytes.empty()) {
    return DataLossError("forget record " + std::to_string(id) + " has bytes left over");
  }
  return r;
}

std::string EncodePassCounts(const ForgetRecord& pass) {
  std::string counts;
  for (uint64_t n : {pass.urls, pass.versions, pass.documents, pass.clusters_split}) {
    AppendVarint(&counts, n);
  }
  return counts;
}

StatusOr<ForgetRecord> DecodePassCounts(std::string_view v) {
  ForgetRecord pass;
  if (v.empty()) return pass;
  for (uint64_t* n : {&pass.urls, &pass.versions, &pass.documents, &pass.clusters_split}) {
    if (!ReadVarint(&v, n)) return DataLossError("a retention pass's counts are truncated");
  }
  if (!v.empty()) return DataLossError("a retention pass's counts have bytes left over");
  return pass;
}

bool PassRemovedSomething(const ForgetRecord& pass) {
  return pass.urls + pass.versions + pass.documents > 0;
}

bool JoinRetentionStep(const RetentionOptions& options, const RetentionStep& step,
                       ForgetRecord* pass, ForgetRecord* record) {
  pass->urls += step.urls;
  pass->versions += step.versions;
  pass->documents += step.documents;
  pass->clusters_split += step.clusters_split;
  if (!step.pass_done || !PassRemovedSomething(*pass)) return false;
  *record = *pass;
  record->date = options.now;
  record->scope = ForgetScope::kRetention;
  record->value_sha256 = Sha256(RetentionRulesText(options));
  return true;
}

ForgetRecord TakedownRecord(const ForgetOptions& options, const ForgetResult& result) {
  ForgetRecord record;
  record.date = options.date;
  record.scope = options.scope;
  record.value_sha256 = Sha256(options.value);
  record.urls = result.urls;
  record.versions = result.versions;
  record.documents = result.documents;
  record.clusters_split = result.clusters_split;
  return record;
}

namespace {

// The flags byte and representative of a document record, without decoding its sketch.
StatusOr<DocId> RepOf(std::string_view bytes, DocId doc) {
  if (bytes.empty()) return DataLossError("document " + std::to_string(doc) + " is empty");
  if ((static_cast<uint8_t>(bytes[0]) & 1) != 0) return DocId{0};  // has its own sketch
  bytes.remove_prefix(1);
  uint64_t rep = 0;
  if (!ReadVarint(&bytes, &rep)) {
    return DataLossError("document " + std::to_string(doc) + " has a truncated representative");
  }
  return rep;
}

// Planning's reads (ForgetReads) on the write transaction `ops`, before the step writes.
class LmdbForgetReads : public ForgetReads {
 public:
  explicit LmdbForgetReads(TxnOps& ops) : ops_(ops), d_(ops.dbis()) {}

  StatusOr<std::vector<std::vector<UrlId>>> UrlsShowing(std::span<const DocId> docs) override {
    return DupValues(d_.doc_urls, docs, "doc_urls");
  }
  StatusOr<std::vector<DocId>> HoldersOf(std::span<const DocId> docs) override {
    std::vector<DocId> out;
    for (DocId doc : docs) {
      std::string_view bytes;
      SHINGLED_RETURN_IF_ERROR(
          ops_.Get(d_.documents, Key64(doc).view(), &bytes, "document " + std::to_string(doc)));
      StatusOr<DocId> rep = RepOf(bytes, doc);
      if (!rep.ok()) return rep.status();
      out.push_back(*rep == 0 ? doc : *rep);
    }
    return out;
  }
  StatusOr<std::vector<std::vector<DocId>>> SharersOf(std::span<const DocId> holders) override {
    return DupValues(d_.rep_docs, holders, "rep_docs");
  }
  StatusOr<std::vector<ClusterId>> RootsOf(std::span<const DocId> docs) override {
    std::vector<ClusterId> out;
    for (DocId doc : docs) {
      StatusOr<ClusterId> root = FindCluster(ops_, doc);
      if (!root.ok()) return root.status();
      out.push_back(*root);
    }
    return out;
  }
  StatusOr<std::vector<std::vector<DocId>>> MembersOf(std::span<const ClusterId> roots) override {
    std::vector<std::vector<DocId>> out;
    for (ClusterId root : roots) {
      StatusOr<std::vector<DocId>> members = ClusterMembers(ops_, root);
      if (!members.ok()) return members.status();
      out.push_back(std::move(members).value());
    }
    return out;
  }
  StatusOr<std::vector<RemainingMember>> ReadMembers(std::span<const DocId> docs) override {
    std::vector<RemainingMember> out;
    for (DocId doc : docs) {
      RemainingMember& m = out.emplace_back();
      m.doc = doc;
      StatusOr<DocumentRecord> rec = ReadDocument(ops_, doc);
      if (!rec.ok()) return rec.status();
      m.holder = rec->has_sketch() ? doc : rec->rep;
      if (!rec->has_sketch()) continue;
      m.sketch = SketchOf(*rec);
      SHINGLED_RETURN_IF_ERROR(ReadVerifySample(ops_, doc, &m.verify, &m.verify_known));
      if (m.verify_known) m.sketch.verify_sample = m.verify;
    }
    return out;
  }

 private:
  // The 8-byte big-endian ids filed under each key in the DUPSORT table `dbi`.
  StatusOr<std::vector<std::vector<uint64_t>>> DupValues(MDB_dbi dbi,
                                                         std::span<const uint64_t> keys,
                                                         const char* what) {
    Cursor c;
    if (int rc = c.Open(ops_.txn(), dbi); rc != 0) return ops_.Fail(rc, what);
    std::vector<std::vector<uint64_t>> out;
    for (uint64_t key : keys) {
      Key64 k64(key);
      MDB_val k = Val(k64.view()), v;
      std::vector<uint64_t>& values = out.emplace_back();
      int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_KEY);
      for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT_DUP)) {
        if (v.mv_size != 8) {
          return DataLossError(std::string("a ") + what + " entry is not 8 bytes");
        }
        values.push_back(GetBE64(static_cast<const char*>(v.mv_data)));
      }
      if (rc != MDB_NOTFOUND) return ops_.Fail(rc, what);
    }
    return out;
  }

  TxnOps& ops_;
  const Dbis& d_;
};

// Forgetting in the write transaction `ops`: a takedown's step (Takedown) or a retention step
// (Retain) chooses the URLs and versions that go, Settle plans what goes with them
// (PlanRemovals) and writes it all. `*result` receives the counts.
class Forgetter {
 public:
  Forgetter(TxnOps& ops, StoreImpl& store, ForgetResult* result)
      : ops_(ops), d_(ops.dbis()), store_(store), result_(result) {}

  // The matching URLs go with every version; a dry run only plans it.
  Status Takedown(const ForgetOptions& o, const std::vector<std::string>& prefixes) {
    SHINGLED_RETURN_IF_ERROR(CollectUrls(o, prefixes));
    return Settle(o.list_limit, o.dry_run);
  }

  // The URLs after the retention cursor, at most o.max_urls of them: each URL's versions are
  // read, and the URL or some of its versions go by the rules (RetentionCutOf).
  Status Retain(const RetentionOptions& o, RetentionStep* step) {
    std::string_view v;
    UrlId cursor = 0;
    Status s = ops_.Get(d_.meta, kRetentionCursorKey, &v, "meta retention.cursor");
    if (s.ok() && v.size() == 8) cursor = GetLE64(v.data());
    if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
    std::vector<UrlTrim> urls;
    SHINGLED_RETURN_IF_ERROR(ReadUrlVersions(cursor, o.max_urls, &urls, &step->pass_done));
    for (UrlTrim& u : urls) {
      const RetentionCut rule = RetentionCutOf(u.versions, o);
      if (!rule.whole_url && rule.versions == 0) continue;
      u.whole = rule.whole_url;
      u.cut = rule.versions;
      if (u.whole) {
        std::string_view name;
        SHINGLED_RETURN_IF_ERROR(ops_.Get(d_.url_names, Key64(u.url).view(), &name, "url_names"));
        u.name = name;
      }
      trims_.push_back(std::move(u));
    }
    step->urls_examined = urls.size();
    const UrlId next = step->pass_done || urls.empty() ? 0 : urls.back().url;
    SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.meta, kRetentionCursorKey, Le64(next), 0, "meta"));
    return Settle(0, false);
  }

  // The largest document id the step removed (0: none).
  DocId last_removed() const { return removed_.empty() ? 0 : removed_.back(); }

 private:
  // Plans the step over the chosen trims, counts it (listing the first `list_limit` URLs) and,
  // unless `dry_run`, writes it: the URLs and versions, the documents that go, the clusters they
  // leave, and the counts.
  Status Settle(size_t list_limit, bool dry_run) {
    if (trims_.empty()) return OkStatus();
    LmdbForgetReads reads(ops_);
    StatusOr<RemovalPlan> plan = PlanRemovals(trims_, reads, store_.options_, store_.params_);
    if (!plan.ok()) return plan.status();
    CountPlan(trims_, *plan, list_limit, result_);
    if (dry_run) return OkStatus();
    SHINGLED_RETURN_IF_ERROR(RememberLastIds());
    for (const UrlTrim& t : trims_) SHINGLED_RETURN_IF_ERROR(WriteTrim(t));
    removed_ = std::move(plan->removed);
    for (DocId doc : removed_) SHINGLED_RETURN_IF_ERROR(RemoveDocument(doc));
    if (!removed_.empty()) SHINGLED_RETURN_IF_ERROR(RemoveLinksToRemoved());
    for (const Recomputation& c : plan->clusters) SHINGLED_RETURN_IF_ERROR(WriteParts(c));
    return WriteCounts();
  }

  // The versions of the URLs after url id `after`, at most `max_urls` URLs, in id order (each a
  // trim that cuts nothing yet); `*last` when the walk reached the last URL.
  Status ReadUrlVersions(UrlId after, size_t max_urls, std::vector<UrlTrim>* urls, bool* last) {
    Cursor c;
    if (int rc = c.Open(ops_.txn(), d_.versions); rc != 0) return ops_.Fail(rc, "versions cursor");
    const std::string from = VersionKey(after + 1, 0);
    MDB_val k = Val(from), val;
    int rc = mdb_cursor_get(c.get(), &k, &val, MDB_SET_RANGE);
    for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &val, MDB_NEXT)) {
      UrlId url = 0;
      uint32_t seq = 0;
      SHINGLED_RETURN_IF_ERROR(DecodeVersionKey(View(k), &url, &seq));
      if (urls->empty() || urls->back().url != url) {
        if (urls->size() == max_urls) break;
        urls->emplace_back();
        urls->back().url = url;
      }
      StatusOr<VersionRecord> ver = DecodeVersion(View(val));
      if (!ver.ok()) return ver.status();
      urls->back().versions.push_back(std::move(ver).value());
    }
    if (rc != 0 && rc != MDB_NOTFOUND) return ops_.Fail(rc, "versions");
    *last = rc == MDB_NOTFOUND;
    return OkStatus();
  }

  // The matching URLs in URL order, at most max_urls (result_->more when others match), each
  // with every version.
  Status CollectUrls(const ForgetOptions& o, const std::vector<std::string>& prefixes) {
    std::vector<std::pair<UrlId, std::string>> urls;
    if (o.scope == ForgetScope::kUrl) {
      StatusOr<UrlId> id = LookupUrl(ops_, o.value);
      if (id.status().code() == StatusCode::kNotFound) {
        return NotFoundError("URL never stored (or forgotten already): " + o.value);
      }
      if (!id.ok()) return id.status();
      urls.emplace_back(*id, o.value);
    } else {
      SHINGLED_RETURN_IF_ERROR(MatchPrefixes(o.max_urls, prefixes, &urls));
    }
    for (auto& [id, name] : urls) {
      std::vector<UrlTrim> read;
      bool last = false;
      SHINGLED_RETURN_IF_ERROR(ReadUrlVersions(id - 1, 1, &read, &last));
      UrlTrim t;
      if (!read.empty() && read[0].url == id) t = std::move(read[0]);
      t.url = id;
      t.name = std::move(name);
      t.cut = t.versions.size();
      t.whole = true;
      trims_.push_back(std::move(t));
    }
    return OkStatus();
  }

  // The URLs under `prefixes` (keys of `urls`), in URL order, at most `max_urls`.
  Status MatchPrefixes(size_t max_urls, const std::vector<std::string>& prefixes,
                       std::vector<std::pair<UrlId, std::string>>* urls) {
    Cursor c;
    if (int rc = c.Open(ops_.txn(), d_.urls); rc != 0) return ops_.Fail(rc, "urls cursor");
    for (std::string_view prefix : DisjointPrefixes(prefixes)) {
      MDB_val k = Val(prefix), v;
      int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
      for (; rc == 0 && View(k).starts_with(prefix);
           rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
        if (urls->size() == max_urls) {
          result_->more = true;
          return OkStatus();
        }
        if (v.mv_size != 8) return DataLossError("urls value is not 8 bytes");
        const UrlId id = GetBE64(static_cast<const char*>(v.mv_data));
        std::string name(View(k));
        if (name.size() > kMaxWholeUrlKey) {
          std::string_view full;
          SHINGLED_RETURN_IF_ERROR(ops_.Get(d_.url_names, Key64(id).view(), &full, "url_names"));
          name = full;
        }
        urls->emplace_back(id, std::move(name));
      }
      if (rc != 0 && rc != MDB_NOTFOUND) return ops_.Fail(rc, "urls");
    }
    return OkStatus();
  }

  // Ids are never given twice (reports page by URL id; the write buffers' watermarks are
  // document ids): before anything is removed, the largest ids given go to meta.
  Status RememberLastIds() {
    for (auto [key, dbi, what] : {std::tuple{kLastDocumentKey, d_.documents, "documents"},
                                  std::tuple{kLastUrlKey, d_.url_names, "url_names"}}) {
      StatusOr<uint64_t> last = LastAllocatedId(ops_, dbi, what, key);
      if (!last.ok()) return last.status();
      SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.meta, key, Le64(*last), 0, "meta"));
    }
    return OkStatus();
  }

  // Writes a trim: its cut versions leave their sweeps' counts and the table, the URL's
  // `doc_urls` entries of the documents it shows no more go, and a whole URL goes with its names.
  // The versions kept move down to seqs 1, 2, ...
  Status WriteTrim(const UrlTrim& t) {
    for (size_t i = 0; i < t.cut; ++i) {
      StatusOr<SweepRecord*> sweep = CachedSweep(ops_, &sweeps_, t.versions[i].sweep);
      if (!sweep.ok()) return sweep.status();
      (*sweep)->Uncount(t.versions[i].verdict);
    }
    for (DocId doc : DroppedDocuments(t)) {
      SHINGLED_RETURN_IF_ERROR(
          ops_.Del(d_.doc_urls, Key64(doc).view(), Key64(t.url).view(), "doc_urls"));
    }
    const size_t n = t.versions.size();
    for (size_t i = t.cut; i < n; ++i) {
      SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.versions,
                                        VersionKey(t.url, static_cast<uint32_t>(i - t.cut + 1)),
                                        EncodeVersion(t.versions[i]), 0, "versions"));
    }
    for (size_t seq = n - t.cut + 1; seq <= n; ++seq) {
      SHINGLED_RETURN_IF_ERROR(
          ops_.Del(d_.versions, VersionKey(t.url, static_cast<uint32_t>(seq)), {}, "versions"));
    }
    if (!t.whole) return OkStatus();
    SHINGLED_RETURN_IF_ERROR(ops_.Del(d_.urls, UrlKey(t.name), {}, "urls"));
    return ops_.Del(d_.url_names, Key64(t.url).view(), {}, "url_names");
  }

  // Deletes `doc`'s record and everything filed for it. Entries the write buffers hold (a
  // document above a slice's watermark) are not in the B-trees; the commit then publishes a
  // buffer rebuilt from the documents that remain (PublishRebuiltBuffer).
  Status RemoveDocument(DocId doc) {
    const Key64 key(doc);
    std::string_view bytes;
    SHINGLED_RETURN_IF_ERROR(
        ops_.Get(d_.documents, key.view(), &bytes, "document " + std::to_string(doc)));
    StatusOr<DocumentRecord> rec = DecodeDocument(bytes);
    if (!rec.ok()) return rec.status();
    const std::pair<MDB_dbi, const dedup::Fingerprint128*> fps[] = {
        {d_.fp_identical, &rec->identical},
        {d_.fp_lexical, &rec->lexical},
        {d_.fp_shingle, &rec->shingle}};
    for (const auto& [dbi, fp] : fps) {
      const std::string fp_key = FingerprintKey(*fp);
      std::string_view owner;
      Status s = ops_.Get(dbi, fp_key, &owner, "fingerprint");
      if (s.code() == StatusCode::kNotFound) continue;
      SHINGLED_RETURN_IF_ERROR(s);
      if (owner.size() == 8 && GetBE64(owner.data()) == doc) {
        SHINGLED_RETURN_IF_ERROR(ops_.Del(dbi, fp_key, {}, "fingerprint"));
      }
    }
    if (rec->has_sketch()) {
      for (uint64_t v : rec->features) SHINGLED_RETURN_IF_ERROR(DelPosting(d_.features, v, doc));
      for (uint64_t v : rec->supershingles)
        SHINGLED_RETURN_IF_ERROR(DelPosting(d_.supershingles, v, doc));
      for (uint64_t v : rec->sample.values) {
        if (!IndexedSampleValue(v, rec->sample.log2_modulus)) continue;
        SHINGLED_RETURN_IF_ERROR(DelPosting(d_.samples, v, doc));
        SHINGLED_RETURN_IF_ERROR(Uncommon(v));
      }
      SHINGLED_RETURN_IF_ERROR(ops_.Del(d_.verify_samples, key.view(), {}, "verify_samples"));
    }
    std::string_view chunk_bytes;
    Status s = ops_.Get(d_.doc_chunks, key.view(), &chunk_bytes, "doc_chunks");
    if (s.ok()) {
      std::vector<dedup::Chunk> chunks;
      SHINGLED_RETURN_IF_ERROR(DecodeDocChunks(chunk_bytes, &chunks));
      std::vector<uint64_t> hashes;
      for (const dedup::Chunk& chunk : chunks) hashes.push_back(chunk.hash);
      std::sort(hashes.begin(), hashes.end());
      hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
      for (uint64_t h : hashes) SHINGLED_RETURN_IF_ERROR(DelPosting(d_.chunk_docs, h, doc));
      SHINGLED_RETURN_IF_ERROR(ops_.Del(d_.doc_chunks, key.view(), {}, "doc_chunks"));
    } else if (s.code() != StatusCode::kNotFound) {
      return s;
    }
    SHINGLED_RETURN_IF_ERROR(ops_.Del(d_.links, key.view(), {}, "links"));
    // A group goes whole: the holder's entries go with it, a member's with the holder's.
    if (rec->has_sketch())
      SHINGLED_RETURN_IF_ERROR(ops_.Del(d_.rep_docs, key.view(), {}, "rep_docs"));
    return ops_.Del(d_.documents, key.view(), {}, "documents");
  }

  Status DelPosting(MDB_dbi dbi, uint64_t value, DocId doc) {
    return ops_.Del(dbi, PostingKey(value).view(), Posting(value, doc).view(), "postings");
  }

  // A removed posting of an indexed sample value leaves the stop list's count (FORMAT.md,
  // invariant 5: it counts the postings in `samples` and in the write buffer).
  Status Uncommon(uint64_t value) {
    const Key64 key(value);
    std::string_view v;
    Status s = ops_.Get(d_.common_values, key.view(), &v, "common_values");
    if (s.code() == StatusCode::kNotFound) return OkStatus();
    SHINGLED_RETURN_IF_ERROR(s);
    if (v.size() != 8) return DataLossError("common_values entry is not 8 bytes");
    const uint64_t count = GetLE64(v.data());
    if (count <= 1) return ops_.Del(d_.common_values, key.view(), {}, "common_values");
    return ops_.Put(d_.common_values, key.view(), Le64(count - 1), 0, "common_values");
  }

  // The links filed under later documents that name a removed one (those under a removed
  // document went with it): one pass over `links` from the first removed document on.
  Status RemoveLinksToRemoved() {
    Cursor c;
    if (int rc = c.Open(ops_.txn(), d_.links); rc != 0) return ops_.Fail(rc, "links cursor");
    Key64 from(removed_.front());
    MDB_val k = Val(from.view()), v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
    std::vector<std::pair<std::string, std::string>> doomed;
    for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
      if (v.mv_size != kLinkSize) return DataLossError("a links entry is not 10 bytes");
      DocId other = 0;
      double resemblance = 0;
      DecodeLink(View(v), &other, &resemblance);
      if (std::binary_search(removed_.begin(), removed_.end(), other))
        doomed.emplace_back(View(k), View(v));
    }
    if (rc != MDB_NOTFOUND) return ops_.Fail(rc, "links");
    for (const auto& [key, link] : doomed)
      SHINGLED_RETURN_IF_ERROR(ops_.Del(d_.links, key, link, "links"));
    return OkStatus();
  }

  // A cluster that lost members (the plan's recomputation): its members leave it, and each part
  // of two or more becomes a cluster.
  Status WriteParts(const Recomputation& c) {
    for (DocId m : c.members) {
      SHINGLED_RETURN_IF_ERROR(ops_.Del(d_.cluster_parent, Key64(m).view(), {}, "cluster_parent"));
    }
    SHINGLED_RETURN_IF_ERROR(
        ops_.Del(d_.cluster_members, Key64(c.root).view(), {}, "cluster_members"));
    --clusters_delta_;
    for (const ClusterPart& part : c.parts) {
      if (part.docs.size() < 2) continue;
      const Key64 id_key(part.id);
      for (DocId m : part.docs) {
        SHINGLED_RETURN_IF_ERROR(
            ops_.Put(d_.cluster_parent, Key64(m).view(), id_key.view(), 0, "cluster_parent"));
        SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.cluster_members, id_key.view(), Key64(m).view(),
                                          MDB_NODUPDATA, "cluster_members"));
      }
      ++clusters_delta_;
    }
    return OkStatus();
  }

  Status AddToCounter(const char* key, int64_t delta) {
    std::string_view v;
    SHINGLED_RETURN_IF_ERROR(ops_.Get(d_.meta, key, &v, std::string("meta ") + key));
    if (v.size() != 8) return DataLossError(std::string("meta ") + key + " is not 8 bytes");
    const auto value = static_cast<uint64_t>(static_cast<int64_t>(GetLE64(v.data())) + delta);
    return ops_.Put(d_.meta, key, Le64(value), 0, "meta");
  }

  Status WriteCounts() {
    for (const auto& [id, rec] : sweeps_) {
      SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.sweeps, SweepKey(id), EncodeSweep(rec), 0, "sweeps"));
    }
    SHINGLED_RETURN_IF_ERROR(AddToCounter("count.urls", -static_cast<int64_t>(result_->urls)));
    SHINGLED_RETURN_IF_ERROR(
        AddToCounter("count.versions", -static_cast<int64_t>(result_->versions)));
    SHINGLED_RETURN_IF_ERROR(
        AddToCounter("count.documents", -static_cast<int64_t>(result_->documents)));
    SHINGLED_RETURN_IF_ERROR(AddToCounter("count.clusters", clusters_delta_));
    if (result_->clusters_recomputed > 0 || result_->documents > 0) {
      // Clusters shrank: the largest is counted again (one step per cluster).
      StatusOr<uint64_t> largest = LargestClusterByScan(ops_);
      if (!largest.ok()) return largest.status();
      SHINGLED_RETURN_IF_ERROR(ops_.Put(d_.meta, kLargestClusterKey, Le64(*largest), 0, "meta"));
    }
    return OkStatus();
  }

  TxnOps& ops_;
  const Dbis& d_;
  StoreImpl& store_;
  ForgetResult* result_;
  std::vector<UrlTrim> trims_;  // the URLs the step trims, in the order chosen
  SweepCache sweeps_;
  std::vector<DocId> removed_;  // sorted
  int64_t clusters_delta_ = 0;
};

}  // namespace

Status BuildRepDocs(TxnOps& ops) {
  const Dbis& d = ops.dbis();
  std::vector<std::pair<DocId, DocId>> entries;  // (holder, document)
  {
    Cursor c;
    if (int rc = c.Open(ops.txn(), d.documents); rc != 0) return ops.Fail(rc, "documents cursor");
    MDB_val k, v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
    for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
      if (k.mv_size != 8)
        return DataLossError("documents has a key of " + std::to_string(k.mv_size) + " bytes");
      const DocId doc = GetBE64(static_cast<const char*>(k.mv_data));
      StatusOr<DocId> rep = RepOf(View(v), doc);
      if (!rep.ok()) return rep.status();
      if (*rep != 0) entries.emplace_back(*rep, doc);
    }
    if (rc != MDB_NOTFOUND) return ops.Fail(rc, "documents");
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [holder, doc] : entries) {
    SHINGLED_RETURN_IF_ERROR(ops.Put(d.rep_docs, Key64(holder).view(), Key64(doc).view(),
                                     MDB_NODUPDATA, "rep_docs"));
  }
  return OkStatus();
}

// Appends `*record` to `forgets` under the next id, which it sets.
Status AppendForgetRecord(TxnOps& ops, ForgetRecord* record) {
  StatusOr<uint64_t> last = LastId(ops, ops.dbis().forgets, "forgets");
  if (!last.ok()) return last.status();
  record->id = *last + 1;
  return ops.Put(ops.dbis().forgets, Key64(record->id).view(), EncodeForgetRecord(*record),
                 MDB_APPEND, "forgets");
}

StatusOr<ForgetRecord> ReadRetentionPass(TxnOps& ops) {
  std::string_view v;
  Status s = ops.Get(ops.dbis().meta, kRetentionPassKey, &v, "meta retention.pass");
  if (s.code() == StatusCode::kNotFound) return ForgetRecord{};
  if (!s.ok()) return s;
  return DecodePassCounts(v);
}

// A step's counts join its pass's; the step that ends a pass that removed something writes the
// pass's forget record (its id in step->record).
Status RecordRetentionStep(TxnOps& ops, const RetentionOptions& options, RetentionStep* step) {
  StatusOr<ForgetRecord> pass = ReadRetentionPass(ops);
  if (!pass.ok()) return pass.status();
  ForgetRecord record;
  if (JoinRetentionStep(options, *step, &*pass, &record)) {
    SHINGLED_RETURN_IF_ERROR(AppendForgetRecord(ops, &record));
    step->record = record.id;
  }
  if (step->pass_done) return ops.Del(ops.dbis().meta, kRetentionPassKey, {}, "meta");
  if (!PassRemovedSomething(*pass)) return OkStatus();
  return ops.Put(ops.dbis().meta, kRetentionPassKey, EncodePassCounts(*pass), 0, "meta");
}

// A step that removed documents up to `last_removed`: the writer reads its stop list again, and
// when a removed document is above a watermark (the buffers of earlier commits hold its
// postings, fingerprints or chunks) the commit publishes a buffer rebuilt from what remains.
// Retention removes old documents, which are below every watermark: no rebuild.
Status PublishRebuiltBuffer(TxnOps& ops, StoreImpl& store, DocId last_removed) {
  store.stop_list_loaded_ = false;
  Watermarks postings, fingerprints, chunks;
  SHINGLED_RETURN_IF_ERROR(ReadWatermarks(ops, &postings));
  SHINGLED_RETURN_IF_ERROR(ReadFingerprintWatermarks(ops, &fingerprints));
  SHINGLED_RETURN_IF_ERROR(ReadChunkWatermarks(ops, &chunks));
  if (last_removed <= std::min({postings.lowest(), fingerprints.lowest(), chunks.lowest()}))
    return OkStatus();
  StatusOr<std::shared_ptr<const WriteBuffer>> buffer = BuildWriteBuffer(ops);
  if (!buffer.ok()) return buffer.status();
  store.made_buffer_ = std::move(buffer).value();
  return OkStatus();
}

}  // namespace internal

StatusOr<ForgetResult> LmdbStore::Forget(const ForgetOptions& options) {
  StatusOr<std::vector<std::string>> prefixes = internal::ValidateTakedown(options);
  if (!prefixes.ok()) return prefixes.status();
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  ForgetResult result;
  bool dry_run_done = false;
  Status s = impl_->RunWrite([&](internal::TxnOps& ops) -> Status {
    result = ForgetResult{};
    internal::Forgetter forgetter(ops, *impl_, &result);
    SHINGLED_RETURN_IF_ERROR(forgetter.Takedown(options, *prefixes));
    if (options.dry_run) {
      // The step was planned and nothing written; the transaction is aborted all the same.
      dry_run_done = true;
      return FailedPreconditionError("dry run");
    }
    if (result.urls == 0) return OkStatus();
    ForgetRecord record = internal::TakedownRecord(options, result);
    SHINGLED_RETURN_IF_ERROR(internal::AppendForgetRecord(ops, &record));
    result.record = record.id;
    return internal::PublishRebuiltBuffer(ops, *impl_, forgetter.last_removed());
  });
  if (dry_run_done) return result;
  if (!s.ok()) return s;
  return result;
}

StatusOr<RetentionStep> LmdbStore::ApplyRetention(const RetentionOptions& options) {
  SHINGLED_RETURN_IF_ERROR(internal::ValidateRetention(options));
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  RetentionStep step;
  Status s = impl_->RunWrite([&](internal::TxnOps& ops) -> Status {
    step = RetentionStep{};
    ForgetResult result;
    internal::Forgetter forgetter(ops, *impl_, &result);
    SHINGLED_RETURN_IF_ERROR(forgetter.Retain(options, &step));
    step.versions = result.versions;
    step.urls = result.urls;
    step.documents = result.documents;
    step.documents_kept = result.documents_kept;
    step.clusters_split = result.clusters_split;
    SHINGLED_RETURN_IF_ERROR(internal::RecordRetentionStep(ops, options, &step));
    if (result.documents == 0) return OkStatus();
    return internal::PublishRebuiltBuffer(ops, *impl_, forgetter.last_removed());
  });
  if (!s.ok()) return s;
  return step;
}

StatusOr<std::vector<ForgetRecord>> LmdbStore::ForgetRecords(uint64_t after, size_t limit) const {
  SHINGLED_READ_TXN(ops);
  internal::Cursor c;
  if (int rc = c.Open(ops.txn(), ops.dbis().forgets); rc != 0)
    return ops.Fail(rc, "forgets cursor");
  std::vector<ForgetRecord> out;
  internal::Key64 from(after + 1);
  MDB_val k = internal::Val(from.view()), v;
  int rc = after == UINT64_MAX ? MDB_NOTFOUND : mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
  for (; rc == 0 && out.size() < limit; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != 8)
      return DataLossError("forgets has a key of " + std::to_string(k.mv_size) + " bytes");
    StatusOr<ForgetRecord> r = internal::DecodeForgetRecord(
        internal::GetBE64(static_cast<const char*>(k.mv_data)), internal::View(v));
    if (!r.ok()) return r.status();
    out.push_back(*r);
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "forgets");
  return out;
}

}  // namespace shingled::store
