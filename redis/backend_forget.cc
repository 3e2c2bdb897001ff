// Forgetting on the Redis Cluster backend (redis/FORMAT.md, "Forgetting"): a takedown is planned
// by the rules every engine shares (store/internal/forget_rules.h, PlanRemovals), over reads of
// the shared state a pipelined round each, then written while the write gate holds the cluster's
// writers off (redis/write_gate.h), in an order that a run cut short can be run again from.
#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "redis/backend_store.h"
#include "redis/layout.h"
#include "redis/union_find.h"
#include "redis/versions.h"
#include "store/internal/chunks.h"
#include "store/internal/sweeps.h"

namespace shingled::redis {

using store::ClusterId;
using store::DocId;
using store::UrlId;
using store::internal::ClusterPart;
using store::internal::Recomputation;
using store::internal::RemainingMember;
using store::internal::RemovalPlan;
using store::internal::UrlTrim;
using store::internal::VersionRecord;

namespace {

// The ids of each reply's posting list, in order.
StatusOr<std::vector<std::vector<uint64_t>>> PostingLists(const std::vector<Reply>& replies) {
  std::vector<std::vector<uint64_t>> out;
  for (const Reply& r : replies) {
    StatusOr<std::vector<uint64_t>> ids = ParsePostingList(r);
    if (!ids.ok()) return ids.status();
    out.push_back(std::move(ids).value());
  }
  return out;
}

// How long a takedown waits for the writers inside: a writer's lease runs out by then.
constexpr std::chrono::milliseconds kHoldWait(25000);

// A fingerprint claim deleted when it still names `doc` (complete, or pending as "doc/url").
constexpr std::string_view kDeleteClaimScript = R"lua(
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and (v == ARGV[2] or string.sub(v, 1, #ARGV[2] + 1) == ARGV[2] .. '/') then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 1
end
return 0
)lua";

// A removed document out of the documents' count, once: KEYS[1] a shard's counts, KEYS[2] the
// shard's set of the documents its step took out (in the same slot), ARGV[1] the document.
constexpr std::string_view kUncountDocumentScript = R"lua(
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 and
   redis.call('HINCRBY', KEYS[1], 'documents', -1) == 0 then
  redis.call('HDEL', KEYS[1], 'documents')
end
return 1
)lua";

std::string UncountedKey(DocId doc) { return ShardKey(doc % kShards) + "gone"; }

// Retention's place between steps: the last URL id a step looked at (0: a pass begins), and the
// counts of the pass so far (store/internal/forget_rules.h, EncodePassCounts).
constexpr char kRetentionCursor[] = "retention:cursor";
constexpr char kRetentionPass[] = "retention:pass";

// What a takedown's fence says: its scope and value.
std::string Describe(const store::ForgetOptions& o) {
  return std::string(store::ForgetScopeName(o.scope)) + " " + o.value;
}

}  // namespace

// Planning's reads on the cluster. REQUIRES: the store's mu_ held while it is used.
class ForgetReadsOnCluster : public store::internal::ForgetReads {
 public:
  explicit ForgetReadsOnCluster(const RedisClusterStore& s) : s_(s) {}

  StatusOr<std::vector<std::vector<UrlId>>> UrlsShowing(std::span<const DocId> docs) override {
    std::vector<Command> cmds;
    for (DocId d : docs) cmds.push_back(listings::GetDocUrls(d));
    return Lists(cmds);
  }
  // A document whose record is gone (a takedown cut short removed it) is its own holder: with
  // no URL and no sharer left, it is planned as gone again, and what is left of it goes.
  StatusOr<std::vector<DocId>> HoldersOf(std::span<const DocId> docs) override {
    StatusOr<std::map<DocId, RedisDocument>> recs =
        s_.ReadRecords(std::vector<DocId>(docs.begin(), docs.end()), false);
    if (!recs.ok()) return recs.status();
    std::vector<DocId> out;
    for (DocId d : docs) {
      auto it = recs->find(d);
      out.push_back(it == recs->end() || it->second.rep == 0 ? d : it->second.rep);
    }
    return out;
  }
  // The sharers lists, less an entry whose record a crash kept from being written (or that names
  // another representative): FORMAT.md, the sharers.
  StatusOr<std::vector<std::vector<DocId>>> SharersOf(std::span<const DocId> holders) override {
    std::vector<Command> cmds;
    for (DocId h : holders) cmds.push_back(forgetting::GetSharers(h));
    StatusOr<std::vector<std::vector<uint64_t>>> lists = Lists(cmds);
    if (!lists.ok()) return lists.status();
    std::vector<DocId> listed;
    for (const std::vector<uint64_t>& l : *lists) listed.insert(listed.end(), l.begin(), l.end());
    StatusOr<std::map<DocId, RedisDocument>> recs = s_.ReadRecords(listed, false);
    if (!recs.ok()) return recs.status();
    for (size_t i = 0; i < holders.size(); ++i) {
      std::erase_if((*lists)[i], [&](DocId d) {
        auto it = recs->find(d);
        return it == recs->end() || it->second.rep != holders[i];
      });
    }
    return lists;
  }
  StatusOr<std::vector<ClusterId>> RootsOf(std::span<const DocId> docs) override {
    return FindRoots(*s_.client_, std::vector<uint64_t>(docs.begin(), docs.end()));
  }
  StatusOr<std::vector<std::vector<DocId>>> MembersOf(std::span<const ClusterId> roots) override {
    return ClusterMembersOfRoots(*s_.client_, roots);
  }
  StatusOr<std::vector<RemainingMember>> ReadMembers(std::span<const DocId> docs) override {
    StatusOr<std::map<DocId, RedisDocument>> recs = Records(docs);
    if (!recs.ok()) return recs.status();
    std::vector<RemainingMember> out;
    for (DocId d : docs) {
      const RedisDocument& r = recs->at(d);
      RemainingMember& m = out.emplace_back();
      m.doc = d;
      m.holder = r.rep == 0 ? d : r.rep;
      if (r.rep != 0) continue;
      m.sketch = reports::SketchOfRecordOf(r);
      m.verify = r.verify_sample;
      m.verify_known = !r.verify_sample.empty();
    }
    return out;
  }
  // Records keep 32 bits of each value: a pair is compared on the bits both keep, as the writer
  // compares a page with a candidate's record.
  store::internal::ComparePair PairComparison() const override {
    return [](dedup::Sketch* later, dedup::Sketch* earlier) {
      reports::MaskSamples(&later->sample, &earlier->sample);
    };
  }

 private:
  StatusOr<std::vector<std::vector<uint64_t>>> Lists(const std::vector<Command>& cmds) {
    auto r = s_.client_->Pipeline(cmds);
    if (!r.ok()) return r.status();
    return PostingLists(*r);
  }
  // The records of `docs`, each of which must have one (a remaining member).
  StatusOr<std::map<DocId, RedisDocument>> Records(std::span<const DocId> docs) {
    StatusOr<std::map<DocId, RedisDocument>> recs =
        s_.ReadRecords(std::vector<DocId>(docs.begin(), docs.end()), false);
    if (!recs.ok()) return recs.status();
    for (DocId d : docs) {
      if (!recs->contains(d)) return DataLossError("redis: document " + Dec(d) + " has no record");
    }
    return recs;
  }

  const RedisClusterStore& s_;
};

namespace {

// A step's URLs as its note keeps them: "<url id> <w (whole) or p (some versions)> <url>" a
// line.
std::string NoteOf(std::span<const UrlTrim> trims) {
  std::string note;
  for (const UrlTrim& t : trims) {
    note.append(Dec(t.url)).append(t.whole ? " w " : " p ").append(t.name).append("\n");
  }
  return note;
}

struct NotedUrl {
  UrlId url = 0;
  bool whole = false;
  std::string name;
};
StatusOr<std::vector<NotedUrl>> UrlsOfNote(std::string_view note) {
  std::vector<NotedUrl> out;
  while (!note.empty()) {
    const size_t end = note.find('\n');
    const std::string_view line = note.substr(0, end);
    const size_t space = line.find(' ');
    uint64_t id = 0;
    if (space == std::string_view::npos || line.size() < space + 3 || line[space + 2] != ' ' ||
        (line[space + 1] != 'w' && line[space + 1] != 'p') ||
        !ParseU64(line.substr(0, space), &id)) {
      return DataLossError("redis: a forgetting step's note has the line \"" + std::string(line) +
                           "\"");
    }
    out.push_back({id, line[space + 1] == 'w', std::string(line.substr(space + 3))});
    note.remove_prefix(end == std::string_view::npos ? note.size() : end + 1);
  }
  return out;
}

}  // namespace

StatusOr<std::vector<VersionRecord>> RedisClusterStore::ReadUrlVersions(UrlId url) const {
  auto field = client_->Run(walks::ReadVersionsOf(url));
  if (!field.ok()) return field.status();
  StatusOr<std::vector<std::string>> entries = walks::SplitVersionsOf(*field);
  if (!entries.ok()) return entries.status();
  std::vector<VersionRecord> versions;
  for (const std::string& e : *entries) {
    StatusOr<VersionRecord> v = DecodeVersionEntry(e);
    if (!v.ok()) return v.status();
    versions.push_back(std::move(v).value());
  }
  return versions;
}

StatusOr<std::vector<UrlTrim>> RedisClusterStore::TakedownUrls(
    const store::ForgetOptions& options, const std::vector<std::string>& prefixes, bool* more,
    bool* resumed) const {
  // By name: the first max_urls in URL order, as LMDB's walk of its `urls` keys gives them.
  std::map<std::string, UrlTrim> matched;
  auto take = [&](UrlId id, const std::string& name, std::vector<VersionRecord> versions) {
    UrlTrim t;
    t.url = id;
    t.name = name;
    t.versions = std::move(versions);
    t.cut = t.versions.size();
    t.whole = true;
    matched.insert_or_assign(name, std::move(t));
    if (matched.size() > options.max_urls) {
      matched.erase(std::prev(matched.end()));
      *more = true;
    }
  };
  if (!options.dry_run) {
    // The URLs of this takedown cut short: its last step may have removed their names or claims,
    // so no walk or lookup would find them again.
    std::lock_guard<std::mutex> lock(mu_);
    StatusOr<std::string> note = gate_->Note();
    if (!note.ok()) return note.status();
    *resumed = !note->empty();
    StatusOr<std::vector<NotedUrl>> noted = UrlsOfNote(*note);
    if (!noted.ok()) return noted.status();
    for (const NotedUrl& n : *noted) {
      StatusOr<std::vector<VersionRecord>> versions = ReadUrlVersions(n.url);
      if (!versions.ok()) return versions.status();
      take(n.url, n.name, std::move(versions).value());
    }
  }
  if (options.scope == store::ForgetScope::kUrl) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!matched.empty()) return std::vector<UrlTrim>{std::move(matched.begin()->second)};
    StatusOr<UrlId> id = LookupUrl(options.value);
    if (id.status().code() == StatusCode::kNotFound) {
      return NotFoundError("URL never stored (or forgotten already): " + options.value);
    }
    if (!id.ok()) return id.status();
    StatusOr<std::vector<VersionRecord>> versions = ReadUrlVersions(*id);
    if (!versions.ok()) return versions.status();
    take(*id, options.value, std::move(versions).value());
  } else {
    const std::vector<std::string_view> disjoint = store::internal::DisjointPrefixes(prefixes);
    SHINGLED_RETURN_IF_ERROR(
        WalkUrls(0,
                 [&](UrlId id, const std::string& name,
                     const std::vector<VersionRecord>& versions) -> StatusOr<bool> {
                   if (std::any_of(disjoint.begin(), disjoint.end(),
                                   [&](std::string_view p) { return name.starts_with(p); })) {
                     take(id, name, versions);
                   }
                   return true;
                 }));
  }
  std::vector<UrlTrim> out;
  for (auto& [name, t] : matched) out.push_back(std::move(t));
  return out;
}

class RedisClusterStore::TakedownWrites {
 public:
  // `resumed`: the run takes over a takedown cut short, whose counters it writes in any case.
  TakedownWrites(RedisClusterStore& s, const RemovalPlan& plan, std::span<const UrlTrim> trims,
                 bool resumed)
      : s_(s), plan_(plan), trims_(trims), resumed_(resumed) {}

  // Clusters first, then documents (each record last), then URLs (each claim last): a run cut
  // short leaves every URL it has not finished, so the same takedown run again plans what is
  // left (a document whose record went is planned as gone already).
  Status Run() {
    SHINGLED_RETURN_IF_ERROR(WriteClusters());
    SHINGLED_RETURN_IF_ERROR(RemoveDocuments());
    SHINGLED_RETURN_IF_ERROR(RemoveUrls());
    return WriteCounters();
  }

 private:
  // One pipelined round of idempotent commands, while the takedown holds the gate (counted for
  // FailAtRoundForTesting).
  StatusOr<std::vector<Reply>> Round(const std::vector<Command>& cmds) {
    SHINGLED_RETURN_IF_ERROR(s_.gate_->Renew());
    return s_.Round(cmds);
  }
  bool Removed(DocId d) const {
    return std::binary_search(plan_.removed.begin(), plan_.removed.end(), d);
  }

  // Each part of two or more becomes a cluster under its id, every member linked straight to it
  // (the ids are the parts' smallest members, so every link still goes to a smaller id); then
  // every other member (removed, or alone) becomes a root of its own. A children list keeps
  // stale entries until deleted: the union-find walks only a child whose link names the parent.
  Status WriteClusters() {
    std::vector<Command> link, unlink;
    for (const Recomputation& c : plan_.clusters) {
      std::set<DocId> in_part, part_roots;
      for (const ClusterPart& part : c.parts) {
        if (part.docs.size() < 2) continue;
        part_roots.insert(part.id);
        link.push_back(Cmd({"HDEL", ParentBucketKey(part.id), Dec(part.id)}));
        for (DocId m : part.docs) {
          in_part.insert(m);
          if (m == part.id) continue;
          link.push_back(Cmd({"HSET", ParentBucketKey(m), Dec(m), Dec(part.id)}));
          link.push_back(forgetting::AddToList(ChildrenBucketKey(part.id), Dec(part.id), Dec(m)));
        }
        link.push_back(
            Cmd({"HSET", listings::SizeKeyOf(part.id), Dec(part.id), Dec(part.docs.size() - 1)}));
      }
      for (DocId m : c.members) {
        if (part_roots.contains(m)) continue;
        if (!in_part.contains(m)) unlink.push_back(Cmd({"HDEL", ParentBucketKey(m), Dec(m)}));
        for (Command& d : forgetting::DeleteList(ChildrenBucketKey(m), Dec(m)))
          unlink.push_back(std::move(d));
        unlink.push_back(Cmd({"HDEL", listings::SizeKeyOf(m), Dec(m)}));
      }
    }
    SHINGLED_RETURN_IF_ERROR(Round(link).status());
    return Round(unlink).status();
  }

  // Everything filed for each removed document, its record last. Its super shingle postings are
  // found by a scan of the buckets its record lists (the record keeps no values; a record of a
  // state before format 4 lists none, and those postings stay, skipped by every reader as a
  // posting without a record).
  Status RemoveDocuments() {
    const std::vector<DocId>& docs = plan_.removed;
    if (docs.empty()) return OkStatus();
    StatusOr<std::map<DocId, RedisDocument>> recs = s_.ReadRecords(docs, false);
    if (!recs.ok()) return recs.status();
    std::vector<Command> get_chunks;
    for (DocId d : docs) get_chunks.push_back(chunks::GetRecord(d));
    auto chunk_records = Round(get_chunks);
    if (!chunk_records.ok()) return chunk_records.status();
    const RedisStoreOptions& r = s_.redis_;
    std::vector<Command> cmds;
    struct Scan {
      size_t command;
      std::string bucket;
      DocId doc;
    };
    std::vector<Scan> scans;  // the super shingle buckets, scanned for the document's id
    for (size_t i = 0; i < docs.size(); ++i) {
      const DocId d = docs[i];
      if (auto it = recs->find(d); it != recs->end()) {
        const RedisDocument& rec = it->second;
        const std::pair<Relation, bool> claims[] = {{Relation::kIdentical, true},
                                                    {Relation::kLexical, rec.owns_lexical},
                                                    {Relation::kShingle, rec.owns_shingle}};
        for (size_t k = 0; k < 3; ++k) {
          if (!claims[k].second) continue;
          const uint64_t hi = rec.fingerprints[2 * k], lo = rec.fingerprints[2 * k + 1];
          cmds.push_back(Eval(kDeleteClaimScript,
                              {FingerprintBucketKey(claims[k].first, hi, r.fingerprint_bits)},
                              {FingerprintField(hi, lo, r.fingerprint_bits), Dec(d)}));
        }
        if (rec.rep == 0) {
          for (uint64_t v : rec.features) {
            cmds.push_back(
                forgetting::RemoveFromList(BucketKey(Relation::kFeature, v, r.feature_bits),
                                           ValueField(v, r.feature_bits), Dec(d)));
          }
          for (uint64_t v : forgetting::IndexedValues(rec)) {
            cmds.push_back(
                forgetting::RemoveFromList(BucketKey(Relation::kSample, v, r.sample_bits),
                                           ValueField(v, r.sample_bits), Dec(d)));
          }
          const int bits = r.supershingle_bits;
          for (uint64_t b : rec.supershingle_buckets) {
            scans.push_back(
                {cmds.size(), BucketKey(Relation::kSuperShingle, b << (64 - bits), bits), d});
            cmds.push_back(Eval(kUnfileFromBucketScript, {scans.back().bucket}, {Dec(d)}));
          }
        }
      }
      if (const Reply& chunk_record = (*chunk_records)[i]; !chunk_record.is_nil()) {
        std::vector<dedup::Chunk> chunks;
        SHINGLED_RETURN_IF_ERROR(store::internal::DecodeDocChunks(chunk_record.str, &chunks));
        for (Command& c : chunks::UnfilePostings(d, chunks, r.sample_bits))
          cmds.push_back(std::move(c));
        cmds.push_back(chunks::DeleteRecord(d));
      }
      // A state before format 4 filed "similar" links under the later document.
      cmds.push_back(Cmd({"HDEL", forgetting::LinksKeyOf(d), Dec(d)}));
      for (Command& c : forgetting::DeleteList(chunks::DocUrlsKeyOf(d), Dec(d)))
        cmds.push_back(std::move(c));
      cmds.push_back(
          Eval(kUncountDocumentScript, {ShardKey(d % kShards), UncountedKey(d)}, {Dec(d)}));
    }
    auto unfiled = Round(cmds);
    if (!unfiled.ok()) return unfiled.status();
    cmds.clear();
    for (const Scan& scan : scans) {  // the spilled lists of the buckets scanned
      for (const Reply& field : (*unfiled)[scan.command].elements)
        cmds.push_back(forgetting::RemoveFromList(scan.bucket, field.str, Dec(scan.doc)));
    }
    if (!cmds.empty()) SHINGLED_RETURN_IF_ERROR(Round(cmds).status());
    cmds.clear();
    for (DocId d : docs) cmds.push_back(Cmd({"HDEL", listings::DocKeyOf(d), Dec(d)}));
    SHINGLED_RETURN_IF_ERROR(Round(cmds).status());
    // A holder's sharers list after the records: a run again still finds every sharer that kept
    // its record.
    cmds.clear();
    for (DocId d : docs) {
      for (Command& c : forgetting::DeleteList(forgetting::SharersKeyOf(d), Dec(d)))
        cmds.push_back(std::move(c));
    }
    return Round(cmds).status();
  }

  // Each URL's versions out of the field and the counts (a compare-and-set on the field as read
  // now), its id out of the lists of the documents that stay, its name and host entry, and its
  // claim last.
  Status RemoveUrls() {
    std::vector<Command> reads;
    for (const UrlTrim& t : trims_) reads.push_back(walks::ReadVersionsOf(t.url));
    auto fields = Round(reads);
    if (!fields.ok()) return fields.status();
    std::vector<Command> cmds;
    std::vector<size_t> replaced;  // the command index of each URL's compare-and-set
    for (size_t i = 0; i < trims_.size(); ++i) {
      const UrlTrim& t = trims_[i];
      StatusOr<VersionList> field = walks::ReadVersionListOf((*fields)[i]);
      if (!field.ok()) return field.status();
      // The oldest `cut` entries go (all of a whole URL's); those the counts hold leave them.
      const size_t cut = t.whole ? field->entries.size() : std::min(t.cut, field->entries.size());
      std::vector<CountChange> changes;
      for (size_t k = 0; k < field->counted && k < cut; ++k) {
        StatusOr<VersionRecord> v = DecodeVersionEntry(field->entries[k]);
        if (!v.ok()) return v.status();
        // A removed document leaves the documents' count by itself (RemoveDocuments), a kept one
        // stays in it.
        for (CountChange& c : Uncount(*v, /*created_doc=*/false)) changes.push_back(std::move(c));
      }
      if (t.whole && field->counted > 0) {
        changes.push_back(CountChange{.field = "urls", .value = -1});
      }
      if (cut > 0) {
        VersionList next;
        next.entries.assign(field->entries.begin() + static_cast<ptrdiff_t>(cut),
                            field->entries.end());
        next.counted = field->counted > cut ? field->counted - cut : 0;
        replaced.push_back(cmds.size());
        cmds.push_back(ReplaceVersions(t.url, *field, next, changes));
      }
      for (DocId d : store::internal::DroppedDocuments(t)) {
        if (!Removed(d)) {
          cmds.push_back(forgetting::RemoveFromList(chunks::DocUrlsKeyOf(d), Dec(d), Dec(t.url)));
        }
      }
      if (!t.whole) continue;
      cmds.push_back(Cmd({"HDEL", walks::UrlNameKeyOf(t.url), Dec(t.url)}));
      if (std::optional<Command> host = chunks::UncountHostUrl(t.name)) cmds.push_back(*host);
    }
    auto written = Round(cmds);
    if (!written.ok()) return written.status();
    for (size_t j : replaced) {
      if ((*written)[j].integer < 0) {
        return UnavailableError(
            "redis: a forgotten URL's versions changed during the takedown; run it again");
      }
    }
    cmds.clear();
    for (const UrlTrim& t : trims_) {
      if (t.whole) cmds.push_back(forgetting::DeleteUrlClaim(t.name, s_.redis_.fingerprint_bits));
    }
    return Round(cmds).status();
  }

  // The clusters counted again from the sizes (so a run cut short and run again counts them
  // right), and the removed documents' marks of RemoveDocuments' count dropped.
  Status WriteCounters() {
    std::vector<Command> cmds;
    if (resumed_ || !plan_.removed.empty() || !plan_.clusters.empty()) {
      uint64_t clusters = 0, largest = 0;
      SHINGLED_RETURN_IF_ERROR(CountClusters(&clusters, &largest));
      cmds.push_back(Cmd({"HSET", forgetting::kStats, "clusters", Dec(clusters)}));
      cmds.push_back(Cmd({"HSET", forgetting::kStats, "largest_cluster", Dec(largest)}));
    }
    for (DocId d : plan_.removed) cmds.push_back(Cmd({"SREM", UncountedKey(d), Dec(d)}));
    return Round(cmds).status();
  }

  // The clusters of two or more and the largest one's size, from every size bucket (one key for
  // 64 ids); the largest is 1 when the store has documents but no cluster, 0 when it has none.
  Status CountClusters(uint64_t* clusters, uint64_t* largest_out) {
    StatusOr<DocId> last = s_.LastDocId();
    if (!last.ok()) return last.status();
    uint64_t largest = 0;
    constexpr uint64_t kBucketsARound = 1024;
    const uint64_t buckets = (*last >> listings::kSizeBucketShift) + 1;
    for (uint64_t b0 = 0; b0 < buckets; b0 += kBucketsARound) {
      std::vector<Command> cmds;
      for (uint64_t b = b0; b < std::min(buckets, b0 + kBucketsARound); ++b)
        cmds.push_back(Cmd({"HGETALL", listings::SizeKeyOf(b << listings::kSizeBucketShift)}));
      auto r = Round(cmds);
      if (!r.ok()) return r.status();
      for (const Reply& bucket : *r) {
        for (size_t i = 0; i + 1 < bucket.elements.size(); i += 2) {
          uint64_t extra = 0;
          if (!ParseU64(bucket.elements[i + 1].str, &extra)) {
            return DataLossError("redis: a cluster size is \"" + bucket.elements[i + 1].str + "\"");
          }
          if (extra == 0) continue;
          ++*clusters;
          largest = std::max(largest, extra + 1);
        }
      }
    }
    if (largest == 0) {
      StatusOr<ShardTotals> totals = s_.ReadShards();
      if (!totals.ok()) return totals.status();
      largest = totals->documents > 0 ? 1 : 0;
    }
    *largest_out = largest;
    return OkStatus();
  }

  RedisClusterStore& s_;
  const RemovalPlan& plan_;
  std::span<const UrlTrim> trims_;
  const bool resumed_;
};

StatusOr<store::ForgetResult> RedisClusterStore::Forget(const store::ForgetOptions& options) {
  StatusOr<std::vector<std::string>> prefixes = store::internal::ValidateTakedown(options);
  if (!prefixes.ok()) return prefixes.status();
  if (options.dry_run) {
    bool wrote = false;
    return Takedown(options, *prefixes, &wrote);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    rounds_ = 0;
    SHINGLED_RETURN_IF_ERROR(gate_->Hold(Describe(options), kHoldWait));
  }
  bool wrote = false;
  StatusOr<store::ForgetResult> result = Takedown(options, *prefixes, &wrote);
  std::lock_guard<std::mutex> lock(mu_);
  fail_at_round_ = 0;  // a simulated failure concerns one call
  // A failure after the first write leaves the fence up: the takedown was cut short, and the
  // writers wait until it is run again. Before it, nothing changed: the writers go on.
  if (!result.ok() && wrote) return result;
  Status released = gate_->Release();
  if (!result.ok()) return result;
  if (!released.ok()) return released;
  return result;
}

StatusOr<store::ForgetResult> RedisClusterStore::Takedown(const store::ForgetOptions& options,
                                                          const std::vector<std::string>& prefixes,
                                                          bool* wrote) {
  store::ForgetResult result;
  bool resumed = false;
  StatusOr<std::vector<UrlTrim>> trims = TakedownUrls(options, prefixes, &result.more, &resumed);
  // A takedown cut short has written already: its fence stays up until a run completes it.
  *wrote = resumed;
  if (!trims.ok()) return trims.status();
  std::lock_guard<std::mutex> lock(mu_);
  ForgetReadsOnCluster reads(*this);
  StatusOr<RemovalPlan> plan = store::internal::PlanRemovals(*trims, reads, options_, params_);
  if (!plan.ok()) return plan.status();
  store::internal::CountPlan(*trims, *plan, options.list_limit, &result);
  if (options.dry_run || trims->empty()) return result;
  SHINGLED_RETURN_IF_ERROR(gate_->SetNote(NoteOf(*trims)));
  *wrote = true;
  SHINGLED_RETURN_IF_ERROR(TakedownWrites(*this, *plan, *trims, resumed).Run());
  store::ForgetRecord record = store::internal::TakedownRecord(options, result);
  auto id = client_->Run(Cmd({"INCR", forgetting::kNextForget}));
  if (!id.ok()) return id.status();
  record.id = static_cast<uint64_t>(id->integer);
  SHINGLED_RETURN_IF_ERROR(client_
                               ->Run(Cmd({"HSET", forgetting::kForgets, Dec(record.id),
                                          store::internal::EncodeForgetRecord(record)}))
                               .status());
  result.record = record.id;
  SHINGLED_RETURN_IF_ERROR(client_->WaitForReplicas(
      redis_.min_replicas, std::chrono::milliseconds(redis_.wait_timeout_ms)));
  return result;
}

StatusOr<std::vector<store::ForgetRecord>> RedisClusterStore::ForgetRecords(uint64_t after,
                                                                            size_t limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto all = client_->Run(Cmd({"HGETALL", forgetting::kForgets}));
  if (!all.ok()) return all.status();
  std::map<uint64_t, const std::string*> by_id;
  for (size_t i = 0; i + 1 < all->elements.size(); i += 2) {
    uint64_t id = 0;
    if (!ParseU64(all->elements[i].str, &id)) {
      return DataLossError("redis: a forget record's field is not an id");
    }
    if (id > after) by_id.emplace(id, &all->elements[i + 1].str);
  }
  std::vector<store::ForgetRecord> out;
  for (const auto& [id, bytes] : by_id) {
    if (out.size() == limit) break;
    StatusOr<store::ForgetRecord> r = store::internal::DecodeForgetRecord(id, *bytes);
    if (!r.ok()) return r.status();
    out.push_back(*r);
  }
  return out;
}

StatusOr<store::RetentionStep> RedisClusterStore::ApplyRetention(
    const store::RetentionOptions& options) {
  SHINGLED_RETURN_IF_ERROR(store::internal::ValidateRetention(options));
  {
    std::lock_guard<std::mutex> lock(mu_);
    rounds_ = 0;
    SHINGLED_RETURN_IF_ERROR(
        gate_->Hold("retention " + store::RetentionRulesText(options), kHoldWait));
  }
  bool wrote = false;
  StatusOr<store::RetentionStep> step = RetainStep(options, &wrote);
  std::lock_guard<std::mutex> lock(mu_);
  fail_at_round_ = 0;                    // a simulated failure concerns one call
  if (!step.ok() && wrote) return step;  // cut short: as a takedown's (Forget)
  Status released = gate_->Release();
  if (!step.ok()) return step;
  if (!released.ok()) return released;
  return step;
}

namespace {

// A retention step as the first line of its note keeps it: what it answers and what it writes
// after its removals (the pass's counts, the cursor, the pass's record), so that a run taking a
// step cut short over writes the same.
struct NotedStep {
  store::RetentionStep step;
  UrlId next_cursor = 0;
  store::ForgetRecord pass;    // the pass's counts with this step's
  store::ForgetRecord record;  // the pass's record, written when step.record != 0
};

std::string EncodeNotedStep(const NotedStep& n) {
  std::string line = "step";
  const store::RetentionStep& s = n.step;
  for (uint64_t v :
       {s.urls_examined, s.versions, s.urls, s.documents, s.documents_kept, s.clusters_split,
        uint64_t{s.pass_done}, s.record, n.next_cursor, n.pass.urls, n.pass.versions,
        n.pass.documents, n.pass.clusters_split, static_cast<uint64_t>(n.record.date)}) {
    line.append(" ").append(Dec(v));
  }
  return line + "\n";
}

StatusOr<NotedStep> DecodeNotedStep(std::string_view line) {
  NotedStep n;
  store::RetentionStep& s = n.step;
  uint64_t pass_done = 0, date = 0;
  uint64_t* fields[] = {&s.urls_examined,
                        &s.versions,
                        &s.urls,
                        &s.documents,
                        &s.documents_kept,
                        &s.clusters_split,
                        &pass_done,
                        &s.record,
                        &n.next_cursor,
                        &n.pass.urls,
                        &n.pass.versions,
                        &n.pass.documents,
                        &n.pass.clusters_split,
                        &date};
  line.remove_prefix(std::string_view("step").size());
  for (uint64_t* f : fields) {
    if (line.empty() || line[0] != ' ') {
      return DataLossError("redis: a retention step's note is cut");
    }
    line.remove_prefix(1);
    const size_t end = std::min(line.find(' '), line.size());
    if (!ParseU64(line.substr(0, end), f)) {
      return DataLossError("redis: a retention step's note holds \"" + std::string(line) + "\"");
    }
    line.remove_prefix(end);
  }
  s.pass_done = pass_done != 0;
  n.record = n.pass;
  n.record.id = s.record;
  n.record.date = static_cast<int64_t>(date);
  n.record.scope = store::ForgetScope::kRetention;
  return n;
}

}  // namespace

StatusOr<store::RetentionStep> RedisClusterStore::RetainStep(const store::RetentionOptions& options,
                                                             bool* wrote) {
  std::vector<UrlTrim> trims;
  auto consider = [&](UrlId id, const std::string& name, std::vector<VersionRecord> versions,
                      bool whole) {
    UrlTrim t;
    t.url = id;
    t.name = name;
    t.versions = std::move(versions);
    const store::internal::RetentionCut rule = store::internal::RetentionCutOf(t.versions, options);
    t.whole = whole || rule.whole_url;
    t.cut = t.whole ? t.versions.size() : rule.versions;
    if (t.cut > 0 || t.whole) trims.push_back(std::move(t));
  };
  // What a step writes after its removals (idempotent: a step taken over writes it again).
  auto finish = [&](const NotedStep& n) -> Status {
    std::vector<Command> cmds;
    if (n.step.record != 0) {
      store::ForgetRecord record = n.record;
      record.value_sha256 = store::internal::Sha256(store::RetentionRulesText(options));
      cmds.push_back(Cmd({"HSET", forgetting::kForgets, Dec(record.id),
                          store::internal::EncodeForgetRecord(record)}));
    }
    if (n.step.pass_done) {
      cmds.push_back(Cmd({"DEL", kRetentionPass}));
    } else if (store::internal::PassRemovedSomething(n.pass)) {
      cmds.push_back(Cmd({"SET", kRetentionPass, store::internal::EncodePassCounts(n.pass)}));
    }
    cmds.push_back(Cmd({"SET", kRetentionCursor, Dec(n.next_cursor)}));
    return Round(cmds).status();
  };
  // A step taken over writes its counters again, even when nothing is left to remove.
  auto remove = [&](bool resumed) -> Status {
    if (trims.empty() && !resumed) return OkStatus();
    ForgetReadsOnCluster reads(*this);
    StatusOr<RemovalPlan> plan = store::internal::PlanRemovals(trims, reads, options_, params_);
    if (!plan.ok()) return plan.status();
    return TakedownWrites(*this, *plan, trims, resumed).Run();
  };
  UrlId cursor = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    StatusOr<std::string> note = gate_->Note();
    if (!note.ok()) return note.status();
    if (note->starts_with("step ")) {
      // A step cut short: its URLs finished (a whole one whose versions went, as whole), and
      // what it writes after them written again; it answers what it answered.
      *wrote = true;
      StatusOr<NotedStep> step = DecodeNotedStep(note->substr(0, note->find('\n')));
      if (!step.ok()) return step.status();
      StatusOr<std::vector<NotedUrl>> noted = UrlsOfNote(note->substr(note->find('\n') + 1));
      if (!noted.ok()) return noted.status();
      for (const NotedUrl& n : *noted) {
        StatusOr<std::vector<VersionRecord>> versions = ReadUrlVersions(n.url);
        if (!versions.ok()) return versions.status();
        consider(n.url, n.name, std::move(versions).value(), n.whole);
      }
      SHINGLED_RETURN_IF_ERROR(remove(/*resumed=*/true));
      SHINGLED_RETURN_IF_ERROR(finish(*step));
      return step->step;
    }
    auto got = client_->Run(Cmd({"GET", kRetentionCursor}));
    if (!got.ok()) return got.status();
    if (!got->is_nil() && !ParseU64(got->str, &cursor)) {
      return DataLossError("redis: the retention cursor is \"" + got->str + "\"");
    }
  }
  // The next max_urls URLs after the cursor, in id order.
  NotedStep n;
  store::RetentionStep& step = n.step;
  UrlId last = cursor;
  bool stopped = false;
  SHINGLED_RETURN_IF_ERROR(
      WalkUrls(cursor,
               [&](UrlId id, const std::string& name,
                   const std::vector<VersionRecord>& versions) -> StatusOr<bool> {
                 if (step.urls_examined == options.max_urls) {
                   stopped = true;
                   return false;
                 }
                 ++step.urls_examined;
                 last = id;
                 consider(id, name, versions, false);
                 return true;
               }));
  step.pass_done = !stopped;
  n.next_cursor = step.pass_done ? 0 : last;
  std::lock_guard<std::mutex> lock(mu_);
  if (!trims.empty()) {
    ForgetReadsOnCluster reads(*this);
    StatusOr<RemovalPlan> plan = store::internal::PlanRemovals(trims, reads, options_, params_);
    if (!plan.ok()) return plan.status();
    store::ForgetResult result;
    store::internal::CountPlan(trims, *plan, 0, &result);
    step.versions = result.versions;
    step.urls = result.urls;
    step.documents = result.documents;
    step.documents_kept = result.documents_kept;
    step.clusters_split = result.clusters_split;
  }
  // The pass's counts with this step's and, when the step ends a pass that removed something,
  // its record (its id taken now).
  auto got = client_->Run(Cmd({"GET", kRetentionPass}));
  if (!got.ok()) return got.status();
  StatusOr<store::ForgetRecord> pass =
      store::internal::DecodePassCounts(got->is_nil() ? std::string() : got->str);
  if (!pass.ok()) return pass.status();
  n.pass = *pass;
  if (store::internal::JoinRetentionStep(options, step, &n.pass, &n.record)) {
    auto id = client_->Run(Cmd({"INCR", forgetting::kNextForget}));
    if (!id.ok()) return id.status();
    n.record.id = static_cast<uint64_t>(id->integer);
    step.record = n.record.id;
  }
  if (!trims.empty()) {
    SHINGLED_RETURN_IF_ERROR(gate_->SetNote(EncodeNotedStep(n) + NoteOf(trims)));
    *wrote = true;
    SHINGLED_RETURN_IF_ERROR(remove(/*resumed=*/false));
  }
  SHINGLED_RETURN_IF_ERROR(finish(n));
  SHINGLED_RETURN_IF_ERROR(client_->WaitForReplicas(
      redis_.min_replicas, std::chrono::milliseconds(redis_.wait_timeout_ms)));
  return step;
}

}  // namespace shingled::redis
