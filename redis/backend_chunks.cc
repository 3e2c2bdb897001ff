// The Redis Cluster backend: content-defined chunks on the cluster, bytes in
// common and templates (docs/REDIS.md, "Chunks and templates"). The template and bytes-in-common
// logic is the LMDB store's (store/internal/templates.h: TemplateJudge, DocumentsInCommon,
// MarkOfCluster), run over ChunkReadsOnCluster: the same questions, read in pipelined rounds.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "redis/backend_store.h"
#include "redis/layout.h"
#include "redis/union_find.h"
#include "store/internal/chunks.h"
#include "store/internal/templates.h"

namespace shingled::redis {

using store::ClusterId;
using store::DocId;

namespace {

constexpr char kMarksKey[] = "tmarks";  // cluster id -> its mark (store/FORMAT.md's record)
// Bucket bits of the marked chunks' entries (few: an operator's marks).
constexpr int kTemplateBits = 8;

std::string DocChunksKey(DocId doc) { return chunks::IdBucketOf('C', doc, 4); }

uint64_t Fnv(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then a finalizer
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

// The set of a host's URLs: "{H" + hash of the host in hex + "}".
std::string HostKey(std::string_view host) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key = "{H";
  const uint64_t h = Fnv(host);
  for (int shift = 60; shift >= 0; shift -= 4) key.push_back(kHex[(h >> shift) & 15]);
  key.push_back('}');
  return key;
}

// Adds ARGV[1] (a URL's hash) to the set KEYS[1] unless it holds ARGV[2] members already.
constexpr std::string_view kCountHostUrlScript = R"lua(
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
)lua";

// Whether the judge's count of `host`'s URLs counts `url` (LMDB: the `urls` keys it walks).
bool OnHost(std::string_view url, std::string_view host) {
  for (std::string_view scheme : {"http://", "https://"}) {
    std::string prefix(scheme);
    prefix.append(host).push_back('/');
    if (url.starts_with(prefix)) return true;
  }
  return false;
}
// A URL in its host's set: its hash as a signed integer (the set stays an intset).
std::string HostMember(std::string_view url) {
  return std::to_string(static_cast<int64_t>(Fnv(url)));
}

Command ListCommand(std::string_view script, Relation relation, uint64_t value, int bits,
                    std::vector<std::string> argv) {
  std::string bucket = BucketKey(relation, value, bits);
  std::string field = ValueField(value, bits);
  std::string overflow = bucket + field;
  argv.insert(argv.begin(), std::move(field));
  return Eval(script, {std::move(bucket), std::move(overflow)}, std::move(argv));
}

std::vector<uint64_t> Distinct(std::span<const dedup::Chunk> chunks) {
  std::vector<uint64_t> out;
  out.reserve(chunks.size());
  for (const dedup::Chunk& c : chunks) out.push_back(c.hash);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

namespace chunks {

Command PutRecord(DocId doc, std::span<const dedup::Chunk> chunks, bool only_if_absent) {
  return Cmd({only_if_absent ? "HSETNX" : "HSET", DocChunksKey(doc), Dec(doc),
              store::internal::EncodeDocChunks(chunks)});
}

Command HasRecord(DocId doc) { return Cmd({"HEXISTS", DocChunksKey(doc), Dec(doc)}); }

std::vector<Command> FilePostings(DocId doc, std::span<const dedup::Chunk> chunks,
                                  int bucket_bits) {
  std::vector<Command> out;
  for (uint64_t hash : Distinct(chunks)) {
    out.push_back(ListCommand(kAddPostingScript, Relation::kChunk, hash, bucket_bits,
                              {Dec(doc), Dec(kMaxInlineList)}));
  }
  return out;
}

Command GetRecord(DocId doc) { return Cmd({"HGET", DocChunksKey(doc), Dec(doc)}); }
Command DeleteRecord(DocId doc) { return Cmd({"HDEL", DocChunksKey(doc), Dec(doc)}); }

std::vector<Command> UnfilePostings(DocId doc, std::span<const dedup::Chunk> chunks,
                                    int bucket_bits) {
  std::vector<Command> out;
  for (uint64_t hash : Distinct(chunks)) {
    out.push_back(
        ListCommand(kRemoveFromListScript, Relation::kChunk, hash, bucket_bits, {Dec(doc)}));
  }
  return out;
}

std::optional<Command> UncountHostUrl(std::string_view url) {
  const std::string_view host = store::internal::UrlHost(url);
  if (!OnHost(url, host)) return std::nullopt;
  return Cmd({"SREM", HostKey(host), HostMember(url)});
}

std::optional<Command> CountHostUrl(std::string_view url, uint64_t cap) {
  const std::string_view host = store::internal::UrlHost(url);
  if (!OnHost(url, host)) return std::nullopt;
  return Eval(kCountHostUrlScript, {HostKey(host)}, {HostMember(url), Dec(cap)});
}

uint64_t HostUrlCap(const store::StoreOptions& options) {
  // TemplateJudge::HostPagesCap.
  return static_cast<uint64_t>(std::ceil(static_cast<double>(options.template_max_docs) /
                                         options.template_host_share)) +
         1;
}

}  // namespace chunks

// The judge's reads, a block per round: each Will* hint reads what it names in one pipeline
// (skipping what is cached), and a question not hinted reads its one item in a round of its own.
class RedisClusterStore::ChunkReadsOnCluster final : public store::internal::ChunkReads {
 public:
  explicit ChunkReadsOnCluster(const RedisClusterStore& store) : store_(store) {}

  StatusOr<bool> Marked(uint64_t hash) override {
    if (!chunks_.contains(hash)) SHINGLED_RETURN_IF_ERROR(WillAskChunks({&hash, 1}));
    return chunks_[hash].marked;
  }

  Status ChunkDocs(uint64_t hash, size_t limit, std::vector<DocId>* docs, bool* over) override {
    if (!chunks_.contains(hash)) SHINGLED_RETURN_IF_ERROR(WillAskChunks({&hash, 1}));
    const std::vector<DocId>& all = chunks_[hash].docs;
    docs->insert(docs->end(), all.begin(), all.begin() + std::min(limit, all.size()));
    *over = all.size() > limit;
    return OkStatus();
  }

  StatusOr<std::string> FirstUrl(DocId doc) override {
    if (!urls_.contains(doc)) SHINGLED_RETURN_IF_ERROR(WillAskUrls({&doc, 1}));
    return urls_[doc].second;
  }
  // The same with its id (0: none).
  StatusOr<std::pair<uint64_t, std::string>> FirstUrlOf(DocId doc) {
    if (!urls_.contains(doc)) SHINGLED_RETURN_IF_ERROR(WillAskUrls({&doc, 1}));
    return urls_[doc];
  }
  // Every document filed under chunk `hash`, in id order.
  StatusOr<const std::vector<DocId>*> AllDocs(uint64_t hash) {
    if (!chunks_.contains(hash)) SHINGLED_RETURN_IF_ERROR(WillAskChunks({&hash, 1}));
    return &chunks_[hash].docs;
  }
  // The URLs of `host` as stored, and which of `names` are among them (cached by host: a batch
  // asks once per host, `names` its URLs on the host).
  struct Host {
    uint64_t stored = 0;
    std::set<std::string_view> members;
  };
  StatusOr<const Host*> HostOf(std::string_view host, const std::vector<std::string_view>& names) {
    auto it = hosts_.find(std::string(host));
    if (it != hosts_.end()) return &it->second;
    std::vector<Command> cmds = {Cmd({"SCARD", HostKey(host)})};
    if (!names.empty()) {
      Command c = Cmd({"SMISMEMBER", HostKey(host)});
      for (std::string_view n : names) c.args.push_back(HostMember(n));
      cmds.push_back(std::move(c));
    }
    auto r = store_.client_->Pipeline(cmds);
    if (!r.ok()) return r.status();
    Host h;
    h.stored = static_cast<uint64_t>(std::max<long long>((*r)[0].integer, 0));
    for (size_t j = 0; j < names.size() && cmds.size() > 1; ++j) {
      if (j < (*r)[1].elements.size() && (*r)[1].elements[j].integer == 1)
        h.members.insert(names[j]);
    }
    return &hosts_.emplace(std::string(host), std::move(h)).first->second;
  }

  StatusOr<uint64_t> HostUrls(std::string_view host, uint64_t limit) override {
    auto r = store_.client_->Run(Cmd({"SCARD", HostKey(host)}));
    if (!r.ok()) return r.status();
    return std::min<uint64_t>(static_cast<uint64_t>(std::max<long long>(r->integer, 0)), limit);
  }

  Status Chunks(DocId doc, std::vector<dedup::Chunk>* out, bool* known) override {
    if (!records_.contains(doc)) SHINGLED_RETURN_IF_ERROR(WillAskChunksOf({&doc, 1}));
    *out = records_[doc];
    *known = !out->empty();
    return OkStatus();
  }

  Status WillAskChunks(std::span<const uint64_t> hashes) override {
    std::vector<uint64_t> want;
    for (uint64_t h : hashes) {
      if (!chunks_.contains(h)) want.push_back(h);
    }
    if (want.empty()) return OkStatus();
    std::vector<Command> cmds;
    for (uint64_t h : want) {
      cmds.push_back(ListCommand(kGetPostingScript, Relation::kTemplate, h, kTemplateBits, {}));
      cmds.push_back(
          ListCommand(kGetPostingScript, Relation::kChunk, h, store_.redis_.sample_bits, {}));
    }
    auto r = store_.client_->Pipeline(cmds);
    if (!r.ok()) return r.status();
    for (size_t j = 0; j < want.size(); ++j) {
      StatusOr<std::vector<uint64_t>> marks = ParsePostingList((*r)[2 * j]);
      if (!marks.ok()) return marks.status();
      StatusOr<std::vector<uint64_t>> docs = ParsePostingList((*r)[2 * j + 1]);
      if (!docs.ok()) return docs.status();
      Chunk& c = chunks_[want[j]];
      c.marked = !marks->empty();
      // Filed in the order daemons filed them: the judge reads them in id order, as LMDB's.
      c.docs = std::move(*docs);
      std::sort(c.docs.begin(), c.docs.end());
      c.docs.erase(std::unique(c.docs.begin(), c.docs.end()), c.docs.end());
    }
    return OkStatus();
  }

  Status WillAskUrls(std::span<const DocId> docs) override {
    std::vector<DocId> want;
    for (DocId d : docs) {
      if (!urls_.contains(d)) want.push_back(d);
    }
    if (want.empty()) return OkStatus();
    std::vector<Command> lists;
    for (DocId d : want) {
      lists.push_back(Eval(kGetPostingScript,
                           {chunks::DocUrlsKeyOf(d), chunks::DocUrlsKeyOf(d) + Dec(d)}, {Dec(d)}));
    }
    auto r = store_.client_->Pipeline(lists);
    if (!r.ok()) return r.status();
    std::vector<std::pair<DocId, uint64_t>> first;  // (document, its least URL id)
    std::vector<Command> names;
    for (size_t j = 0; j < want.size(); ++j) {
      StatusOr<std::vector<uint64_t>> ids = ParsePostingList((*r)[j]);
      if (!ids.ok()) return ids.status();
      if (ids->empty()) {
        urls_[want[j]] = {0, ""};
        continue;
      }
      const uint64_t id = *std::min_element(ids->begin(), ids->end());
      first.emplace_back(want[j], id);
      names.push_back(Cmd({"HGET", walks::UrlNameKeyOf(id), Dec(id)}));
    }
    auto n = store_.client_->Pipeline(names);
    if (!n.ok()) return n.status();
    for (size_t j = 0; j < first.size(); ++j)
      urls_[first[j].first] = {first[j].second, (*n)[j].str};
    return OkStatus();
  }

  Status WillAskChunksOf(std::span<const DocId> docs) override {
    std::vector<DocId> want;
    for (DocId d : docs) {
      if (!records_.contains(d)) want.push_back(d);
    }
    if (want.empty()) return OkStatus();
    std::vector<Command> cmds;
    for (DocId d : want) cmds.push_back(Cmd({"HGET", DocChunksKey(d), Dec(d)}));
    auto r = store_.client_->Pipeline(cmds);
    if (!r.ok()) return r.status();
    for (size_t j = 0; j < want.size(); ++j) {
      std::vector<dedup::Chunk>& out = records_[want[j]];
      if ((*r)[j].is_nil()) continue;
      if (Status s = store::internal::DecodeDocChunks((*r)[j].str, &out); !s.ok()) {
        records_.erase(want[j]);
        return DataLossError("redis: chunks of document " + Dec(want[j]) + ": " +
                             std::string(s.message()));
      }
    }
    return OkStatus();
  }

 private:
  struct Chunk {
    bool marked = false;
    std::vector<DocId> docs;  // every document filed under it, in id order
  };
  const RedisClusterStore& store_;
  std::unordered_map<uint64_t, Chunk> chunks_;
  std::unordered_map<DocId, std::pair<uint64_t, std::string>> urls_;  // first URL: id, name
  std::unordered_map<std::string, Host> hosts_;
  std::unordered_map<DocId, std::vector<dedup::Chunk>> records_;
};

Status RedisClusterStore::DocumentExists(DocId doc) const {
  auto r = client_->Run(Cmd({"HEXISTS", chunks::IdBucketOf('D', doc, 4), Dec(doc)}));
  if (!r.ok()) return r.status();
  if (r->integer != 1) return NotFoundError("document " + Dec(doc) + " not found");
  return OkStatus();
}

StatusOr<store::CommonBytes> RedisClusterStore::BytesInCommon(DocId a, DocId b,
                                                              size_t max_spans) const {
  std::lock_guard<std::mutex> lock(mu_);
  SHINGLED_RETURN_IF_ERROR(DocumentExists(a));
  SHINGLED_RETURN_IF_ERROR(DocumentExists(b));
  ChunkReadsOnCluster reads(*this);
  store::internal::TemplateJudge judge(reads, options_);
  return store::internal::DocumentsInCommon(judge, a, b, max_spans);
}

Status RedisClusterStore::ChunksOfDocument(DocId doc, std::vector<dedup::Chunk>* out) const {
  ChunkReadsOnCluster reads(*this);
  bool known = false;
  return reads.Chunks(doc, out, &known);
}

Status RedisClusterStore::QueryContainment(
    std::span<const dedup::Chunk> chunks, DocId exclude,
    std::vector<store::internal::ContainmentCandidate>* out) const {
  out->clear();
  if (chunks.empty()) return OkStatus();
  ChunkReadsOnCluster reads(*this);
  store::internal::TemplateJudge judge(reads, options_);
  std::string host;
  if (exclude != 0) {
    StatusOr<std::string> h = judge.HostOfDocument(exclude);
    if (!h.ok()) return h.status();
    host = std::move(*h);
  }
  return store::internal::FindContainment(options_, judge, chunks, host, exclude,
                                          store::internal::ContainmentRoom(options_.max_candidates),
                                          out);
}

Status RedisClusterStore::QueryCommon(DocId query_doc, std::span<const dedup::Chunk> chunks,
                                      std::vector<store::SimilarDoc>* results) const {
  ChunkReadsOnCluster reads(*this);
  store::internal::TemplateJudge judge(reads, options_);
  return store::internal::FillSimilarCommon(judge, query_doc, chunks, results);
}

StatusOr<std::vector<store::ChunkTemplate>> RedisClusterStore::ChunkTemplates(DocId doc) const {
  std::lock_guard<std::mutex> lock(mu_);
  SHINGLED_RETURN_IF_ERROR(DocumentExists(doc));
  ChunkReadsOnCluster reads(*this);
  std::vector<dedup::Chunk> chunks;
  bool known = false;
  SHINGLED_RETURN_IF_ERROR(reads.Chunks(doc, &chunks, &known));
  store::internal::TemplateJudge judge(reads, options_);
  StatusOr<std::string> host = judge.HostOfDocument(doc);
  if (!host.ok()) return host.status();
  return judge.ExplainAll(chunks, *host);
}

StatusOr<bool> RedisClusterStore::DeleteMark(ClusterId cluster, store::TemplateMark* old) {
  auto r = client_->Run(Cmd({"HGET", kMarksKey, Dec(cluster)}));
  if (!r.ok()) return r.status();
  if (r->is_nil()) return false;
  SHINGLED_RETURN_IF_ERROR(store::internal::DecodeTemplateMark(r->str, old));
  old->cluster = cluster;
  // The mark first: an entry left by a failure between marks its chunk until the next
  // MarkTemplate or UnmarkTemplate of the cluster removes it.
  SHINGLED_RETURN_IF_ERROR(client_->Run(Cmd({"HDEL", kMarksKey, Dec(cluster)})).status());
  std::vector<Command> cmds;
  for (const dedup::Chunk& c : old->chunks) {
    cmds.push_back(ListCommand(kRemoveFromListScript, Relation::kTemplate, c.hash, kTemplateBits,
                               {Dec(cluster)}));
  }
  SHINGLED_RETURN_IF_ERROR(client_->Pipeline(cmds).status());
  return true;
}

StatusOr<store::TemplateMark> RedisClusterStore::MarkTemplate(ClusterId cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  GateWriter writer(*gate_);
  SHINGLED_RETURN_IF_ERROR(writer.status());
  if (Status s = DocumentExists(cluster); !s.ok()) {
    if (s.code() != StatusCode::kNotFound) return s;
    return NotFoundError("cluster " + Dec(cluster) + " not found (no such cluster or document)");
  }
  StatusOr<std::vector<uint64_t>> roots = FindRoots(*client_, {cluster});
  if (!roots.ok()) return roots.status();
  const ClusterId root = (*roots)[0];
  StatusOr<std::vector<uint64_t>> members = ClusterMembers(*client_, root);
  if (!members.ok()) return members.status();
  std::sort(members->begin(), members->end());
  ChunkReadsOnCluster reads(*this);
  StatusOr<store::TemplateMark> mark = store::internal::MarkOfCluster(reads, root, *members);
  if (!mark.ok()) return mark.status();
  store::TemplateMark old;
  StatusOr<bool> had = DeleteMark(root, &old);
  if (!had.ok()) return had.status();
  // The entries first, then the mark that backs them (docs/REDIS.md).
  std::vector<Command> cmds;
  for (const dedup::Chunk& c : mark->chunks) {
    cmds.push_back(ListCommand(kAddPostingScript, Relation::kTemplate, c.hash, kTemplateBits,
                               {Dec(root), Dec(kMaxInlineList)}));
  }
  SHINGLED_RETURN_IF_ERROR(client_->Pipeline(cmds).status());
  SHINGLED_RETURN_IF_ERROR(
      client_->Run(Cmd({"HSET", kMarksKey, Dec(root), store::internal::EncodeTemplateMark(*mark)}))
          .status());
  SHINGLED_RETURN_IF_ERROR(client_->WaitForReplicas(
      redis_.min_replicas, std::chrono::milliseconds(redis_.wait_timeout_ms)));
  return mark;
}

StatusOr<std::optional<store::TemplateMark>> RedisClusterStore::UnmarkTemplate(ClusterId cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  GateWriter writer(*gate_);
  SHINGLED_RETURN_IF_ERROR(writer.status());
  store::TemplateMark old;
  // The id the mark was made under, else the cluster the document is in now.
  StatusOr<bool> had = DeleteMark(cluster, &old);
  if (!had.ok()) return had.status();
  if (!*had) {
    if (Status s = DocumentExists(cluster); !s.ok()) {
      if (s.code() != StatusCode::kNotFound) return s;
      return NotFoundError("cluster " + Dec(cluster) + " not found (no such cluster or document)");
    }
    StatusOr<std::vector<uint64_t>> roots = FindRoots(*client_, {cluster});
    if (!roots.ok()) return roots.status();
    had = DeleteMark((*roots)[0], &old);
    if (!had.ok()) return had.status();
  }
  std::optional<store::TemplateMark> removed;
  if (*had) {
    removed = std::move(old);
    SHINGLED_RETURN_IF_ERROR(client_->WaitForReplicas(
        redis_.min_replicas, std::chrono::milliseconds(redis_.wait_timeout_ms)));
  }
  return removed;
}

StatusOr<std::vector<store::TemplateMark>> RedisClusterStore::TemplateMarks(ClusterId after,
                                                                            size_t limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto all = client_->Run(Cmd({"HGETALL", kMarksKey}));
  if (!all.ok()) return all.status();
  std::vector<store::TemplateMark> out;
  for (size_t i = 0; i + 1 < all->elements.size(); i += 2) {
    uint64_t cluster = 0;
    if (!ParseU64(all->elements[i].str, &cluster))
      return DataLossError("redis: a template mark's field is not a cluster id");
    if (cluster <= after) continue;
    store::TemplateMark mark;
    mark.cluster = cluster;
    SHINGLED_RETURN_IF_ERROR(store::internal::DecodeTemplateMark(all->elements[i + 1].str, &mark));
    out.push_back(std::move(mark));
  }
  std::sort(out.begin(), out.end(), [](const store::TemplateMark& a, const store::TemplateMark& b) {
    return a.cluster < b.cluster;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

// --- Check's part (LMDB's invariants 11 and 12, as far as the cluster can be walked) ---

Status RedisClusterStore::CheckChunks(const std::function<bool(DocId)>& has_record,
                                      const std::function<void(std::string)>& problem) const {
  StatusOr<DocId> last = LastDocId();
  if (!last.ok()) return last.status();
  // 1. Each chunk record decodes, is a stored document's, and each of its distinct chunks has
  // the document in its postings. (The other way, every posting backed by a record, would walk
  // 2^bits.sample buckets: not checked.) 64 buckets of 16 records a round, then their postings.
  constexpr uint64_t kBuckets = 64;
  const uint64_t buckets = (*last >> 4) + 1;
  std::vector<dedup::Chunk> record;
  for (uint64_t first = 0; first < buckets && *last != 0; first += kBuckets) {
    std::vector<Command> cmds;
    for (uint64_t b = first; b < std::min(buckets, first + kBuckets); ++b) {
      cmds.push_back(Cmd({"HGETALL", DocChunksKey(b << 4)}));
    }
    StatusOr<std::vector<Reply>> r = client_->Pipeline(cmds);
    if (!r.ok()) return r.status();
    std::vector<std::pair<DocId, uint64_t>> filed;  // (document, chunk) to find in the postings
    cmds.clear();
    for (const Reply& bucket : *r) {
      for (size_t i = 0; i + 1 < bucket.elements.size(); i += 2) {
        DocId doc = 0;
        if (!ParseU64(bucket.elements[i].str, &doc)) {
          problem("a chunk record bucket has the field \"" + bucket.elements[i].str + "\"");
          continue;
        }
        if (Status s = store::internal::DecodeDocChunks(bucket.elements[i + 1].str, &record);
            !s.ok()) {
          problem("chunks of document " + Dec(doc) + ": " + std::string(s.message()));
          continue;
        }
        if (!has_record(doc)) problem("chunks of document " + Dec(doc) + ", which has no record");
        for (uint64_t hash : Distinct(record)) {
          filed.emplace_back(doc, hash);
          cmds.push_back(
              ListCommand(kGetPostingScript, Relation::kChunk, hash, redis_.sample_bits, {}));
        }
      }
    }
    StatusOr<std::vector<Reply>> lists = client_->Pipeline(cmds);
    if (!lists.ok()) return lists.status();
    for (size_t j = 0; j < filed.size(); ++j) {
      StatusOr<std::vector<uint64_t>> docs = ParsePostingList((*lists)[j]);
      if (!docs.ok()) return docs.status();
      if (std::find(docs->begin(), docs->end(), filed[j].first) == docs->end()) {
        problem("document " + Dec(filed[j].first) + ": its chunk " + Dec(filed[j].second) +
                " does not list it");
      }
    }
  }
  // 2. Each mark decodes and its chunks' entries name its cluster; 3. each entry is its
  // cluster's mark's (the marked chunks' 2^8 buckets are walked).
  auto all = client_->Run(Cmd({"HGETALL", kMarksKey}));
  if (!all.ok()) return all.status();
  std::map<ClusterId, std::set<uint64_t>> marks;  // cluster -> its marked chunks
  std::vector<std::pair<ClusterId, uint64_t>> marked;
  std::vector<Command> cmds;
  for (size_t i = 0; i + 1 < all->elements.size(); i += 2) {
    ClusterId cluster = 0;
    if (!ParseU64(all->elements[i].str, &cluster)) {
      problem("a template mark's field is \"" + all->elements[i].str + "\", not a cluster id");
      continue;
    }
    store::TemplateMark mark;
    if (Status s = store::internal::DecodeTemplateMark(all->elements[i + 1].str, &mark); !s.ok()) {
      problem("template mark of cluster " + Dec(cluster) + ": " + std::string(s.message()));
      continue;
    }
    for (const dedup::Chunk& c : mark.chunks) {
      marks[cluster].insert(c.hash);
      marked.emplace_back(cluster, c.hash);
      cmds.push_back(
          ListCommand(kGetPostingScript, Relation::kTemplate, c.hash, kTemplateBits, {}));
    }
  }
  StatusOr<std::vector<Reply>> entries = client_->Pipeline(cmds);
  if (!entries.ok()) return entries.status();
  for (size_t j = 0; j < marked.size(); ++j) {
    StatusOr<std::vector<uint64_t>> clusters = ParsePostingList((*entries)[j]);
    if (!clusters.ok()) return clusters.status();
    if (std::find(clusters->begin(), clusters->end(), marked[j].first) == clusters->end()) {
      problem("template mark of cluster " + Dec(marked[j].first) + ": its chunk " +
              Dec(marked[j].second) + " has no entry");
    }
  }
  cmds.clear();
  for (uint64_t b = 0; b < (uint64_t{1} << kTemplateBits); ++b) {
    cmds.push_back(
        Cmd({"HGETALL", BucketKey(Relation::kTemplate, b << (64 - kTemplateBits), kTemplateBits)}));
  }
  StatusOr<std::vector<Reply>> buckets_of_entries = client_->Pipeline(cmds);
  if (!buckets_of_entries.ok()) return buckets_of_entries.status();
  for (uint64_t b = 0; b < (uint64_t{1} << kTemplateBits); ++b) {
    const Reply& bucket = (*buckets_of_entries)[b];
    for (size_t i = 0; i + 1 < bucket.elements.size(); i += 2) {
      if (bucket.elements[i].str.size() != (64 - kTemplateBits + 7) / 8) {
        problem("a template chunk bucket has a field of " + Dec(bucket.elements[i].str.size()) +
                " bytes");
        continue;
      }
      // The chunk: the bucket's bits, then the field's (ValueField: the low bits, big-endian).
      uint64_t low = 0;
      for (unsigned char byte : bucket.elements[i].str) low = (low << 8) | byte;
      const uint64_t hash = (b << (64 - kTemplateBits)) | low;
      Reply list = bucket.elements[i + 1];
      if (list.str == "*") {
        auto spilled = client_->Run(Cmd(
            {"GET", BucketKey(Relation::kTemplate, hash, kTemplateBits) + bucket.elements[i].str}));
        if (!spilled.ok()) return spilled.status();
        list = *spilled;
      }
      StatusOr<std::vector<uint64_t>> clusters = ParsePostingList(list);
      if (!clusters.ok()) return clusters.status();
      for (ClusterId c : *clusters) {
        auto m = marks.find(c);
        if (m == marks.end() || !m->second.contains(hash)) {
          problem("the entry of template chunk " + Dec(hash) + " names cluster " + Dec(c) +
                  ", whose mark does not hold it");
        }
      }
    }
  }
  return OkStatus();
}

// --- the clusters report's reads (store::internal::ListingReads; backend_listings.cc) ---

Status RedisClusterStore::ReportChunkPostings(
    const std::function<void(uint64_t, DocId)>& visit) const {
  StatusOr<DocId> last = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return LastDocId();
  }();
  if (!last.ok()) return last.status();
  // The chunk records (16 documents a bucket) of every document id up to `next:doc`, kBuckets
  // buckets per round: (chunk, document) for each distinct chunk of each, sorted by chunk.
  constexpr uint64_t kBuckets = 64;
  std::vector<std::pair<uint64_t, DocId>> postings;
  std::vector<dedup::Chunk> record;
  const uint64_t buckets = (*last >> 4) + 1;
  for (uint64_t first = 0; first < buckets && *last != 0; first += kBuckets) {
    std::vector<Command> cmds;
    for (uint64_t b = first; b < std::min(buckets, first + kBuckets); ++b) {
      cmds.push_back(Cmd({"HGETALL", DocChunksKey(b << 4)}));
    }
    StatusOr<std::vector<Reply>> r = [&] {
      std::lock_guard<std::mutex> lock(mu_);
      return client_->Pipeline(cmds);
    }();
    if (!r.ok()) return r.status();
    for (const Reply& bucket : *r) {
      for (size_t i = 0; i + 1 < bucket.elements.size(); i += 2) {
        DocId doc = 0;
        if (!ParseU64(bucket.elements[i].str, &doc)) {
          return DataLossError("redis: a chunk record's field is not a document id");
        }
        if (Status s = store::internal::DecodeDocChunks(bucket.elements[i + 1].str, &record);
            !s.ok()) {
          return DataLossError("redis: chunks of document " + Dec(doc) + ": " +
                               std::string(s.message()));
        }
        for (uint64_t hash : Distinct(record)) postings.emplace_back(hash, doc);
      }
    }
  }
  std::sort(postings.begin(), postings.end());
  for (const auto& [hash, doc] : postings) visit(hash, doc);
  return OkStatus();
}

Status RedisClusterStore::ReportChunks(std::span<const DocId> docs,
                                       std::vector<std::vector<dedup::Chunk>>* out) const {
  out->assign(docs.size(), {});
  std::lock_guard<std::mutex> lock(mu_);
  ChunkReadsOnCluster reads(*this);
  SHINGLED_RETURN_IF_ERROR(reads.WillAskChunksOf(docs));
  for (size_t i = 0; i < docs.size(); ++i) {
    bool known = false;
    SHINGLED_RETURN_IF_ERROR(reads.Chunks(docs[i], &(*out)[i], &known));
  }
  return OkStatus();
}

Status RedisClusterStore::ReportCommon(std::span<const std::pair<DocId, DocId>> pairs,
                                       std::vector<store::CommonBytes>* out) const {
  out->clear();
  if (pairs.empty()) return OkStatus();
  std::vector<DocId> docs;
  for (const auto& [a, b] : pairs) docs.insert(docs.end(), {a, b});
  std::sort(docs.begin(), docs.end());
  docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  // One judge for every pair: the documents' chunks and first URLs, then their chunks' postings
  // and marks, in three rounds (and a count per host), before the first pair is judged.
  std::lock_guard<std::mutex> lock(mu_);
  ChunkReadsOnCluster reads(*this);
  SHINGLED_RETURN_IF_ERROR(reads.WillAskChunksOf(docs));
  SHINGLED_RETURN_IF_ERROR(reads.WillAskUrls(docs));
  std::vector<uint64_t> hashes;
  std::vector<dedup::Chunk> chunks;
  for (DocId d : docs) {
    bool known = false;
    SHINGLED_RETURN_IF_ERROR(reads.Chunks(d, &chunks, &known));
    for (const dedup::Chunk& c : chunks) hashes.push_back(c.hash);
  }
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  SHINGLED_RETURN_IF_ERROR(reads.WillAskChunks(hashes));
  store::internal::TemplateJudge judge(reads, options_);
  for (const auto& [a, b] : pairs) {
    StatusOr<store::CommonBytes> common = store::internal::DocumentsInCommon(judge, a, b, 0);
    if (!common.ok()) return common.status();
    out->push_back(std::move(common).value());
  }
  return OkStatus();
}

// --- a batch's pages (Apply) ---

// The store as read once the batch's chunks are filed, and what the batch adds page by page.
class RedisClusterStore::BatchChunks {
 public:
  BatchChunks(const RedisClusterStore& store, BatchChunkFacts batch)
      : reads(store), facts(std::move(batch)) {
    for (const auto& [page, name] : facts.new_urls) new_names.insert(name);
  }
  ChunkReadsOnCluster reads;
  const BatchChunkFacts facts;
  std::set<std::string_view> new_names;
};

namespace {

// What page `index` of a batch sees: the store before the batch, and what the batch's pages
// before it added (the page's own chunk postings and chunk record, and its URL, too; its own
// version not yet: LMDB appends it last).
template <typename Batch>
class PageView final : public store::internal::ChunkReads {
 public:
  PageView(Batch& batch, size_t index) : b_(batch), index_(index) {}

  StatusOr<bool> Marked(uint64_t hash) override { return b_.reads.Marked(hash); }

  Status ChunkDocs(uint64_t hash, size_t limit, std::vector<DocId>* docs, bool* over) override {
    StatusOr<const std::vector<DocId>*> all = b_.reads.AllDocs(hash);
    if (!all.ok()) return all.status();
    size_t seen = 0;
    for (DocId d : **all) {
      if (!Visible(d)) continue;
      if (seen++ < limit) docs->push_back(d);
    }
    *over = seen > limit;
    return OkStatus();
  }

  StatusOr<std::string> FirstUrl(DocId doc) override {
    StatusOr<std::pair<uint64_t, std::string>> first = b_.reads.FirstUrlOf(doc);
    if (!first.ok()) return first.status();
    uint64_t id = first->first;
    std::string_view name = first->second;
    for (const auto& v : b_.facts.versions) {
      if (v.page < index_ && v.doc == doc && (id == 0 || v.url < id)) {
        id = v.url;
        name = v.name;
      }
    }
    return std::string(name);
  }

  StatusOr<uint64_t> HostUrls(std::string_view host, uint64_t limit) override {
    std::vector<std::string_view> names;
    for (std::string_view n : b_.new_names) {
      if (OnHost(n, host)) names.push_back(n);
    }
    StatusOr<const typename std::remove_reference_t<decltype(b_.reads)>::Host*> h =
        b_.reads.HostOf(host, names);
    if (!h.ok()) return h.status();
    std::set<std::string_view> added;
    for (const auto& [page, name] : b_.facts.new_urls) {
      if (page <= index_ && OnHost(name, host) && !(*h)->members.contains(name)) added.insert(name);
    }
    return std::min<uint64_t>((*h)->stored + added.size(), limit);
  }

  Status Chunks(DocId doc, std::vector<dedup::Chunk>* out, bool* known) override {
    if (auto it = b_.facts.backfilled.find(doc); it != b_.facts.backfilled.end()) {
      *out = Visible(doc) ? *it->second : std::vector<dedup::Chunk>{};
      *known = !out->empty();
      return OkStatus();
    }
    return b_.reads.Chunks(doc, out, known);
  }

  Status WillAskChunks(std::span<const uint64_t> hashes) override {
    return b_.reads.WillAskChunks(hashes);
  }
  Status WillAskUrls(std::span<const DocId> docs) override { return b_.reads.WillAskUrls(docs); }
  Status WillAskChunksOf(std::span<const DocId> docs) override {
    return b_.reads.WillAskChunksOf(docs);
  }

 private:
  // A posting of the batch is seen from the page that files it on.
  bool Visible(DocId d) const {
    auto it = b_.facts.doc_page.find(d);
    return it == b_.facts.doc_page.end() || it->second <= index_;
  }
  Batch& b_;
  const size_t index_;
};

}  // namespace

StatusOr<std::shared_ptr<RedisClusterStore::BatchChunks>> RedisClusterStore::NewBatchChunks(
    BatchChunkFacts facts) const {
  std::vector<uint64_t> hashes = std::move(facts.hashes);
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  auto batch = std::make_shared<BatchChunks>(*this, std::move(facts));
  if (!hashes.empty()) SHINGLED_RETURN_IF_ERROR(batch->reads.WillAskChunks(hashes));
  return batch;
}

Status RedisClusterStore::BatchContainment(
    BatchChunks& batch, const store::PageInput& page, size_t index, DocId doc,
    std::vector<store::internal::ContainmentCandidate>* out, bool* truncated) const {
  out->clear();
  *truncated = false;
  if (page.sketch.chunks.empty()) return OkStatus();
  PageView<BatchChunks> view(batch, index);
  store::internal::TemplateJudge judge(view, options_);
  return store::internal::FindContainment(
      options_, judge, page.sketch.chunks, store::internal::UrlHost(page.url), doc,
      store::internal::ContainmentRoom(options_.max_candidates), out, truncated);
}

Status RedisClusterStore::BatchMatchCommons(BatchChunks& batch,
                                            std::span<const store::PageInput> pages,
                                            const std::vector<size_t>& which,
                                            std::vector<store::PageResult>* results) const {
  // The matches' chunk records and first URLs (2 rounds), then their chunks' postings and marks
  // (1 round), for the whole batch; what each page's judge asks next is mostly read.
  std::vector<DocId> docs;
  for (size_t i : which) {
    if (pages[i].sketch.chunks.empty()) continue;
    for (const store::Match& m : (*results)[i].matches) docs.push_back(m.doc);
  }
  if (!docs.empty()) {
    std::sort(docs.begin(), docs.end());
    docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
    SHINGLED_RETURN_IF_ERROR(batch.reads.WillAskChunksOf(docs));
    SHINGLED_RETURN_IF_ERROR(batch.reads.WillAskUrls(docs));
    std::vector<uint64_t> hashes;
    std::vector<dedup::Chunk> chunks;
    for (DocId d : docs) {
      bool known = false;
      SHINGLED_RETURN_IF_ERROR(batch.reads.Chunks(d, &chunks, &known));
      for (const dedup::Chunk& c : chunks) hashes.push_back(c.hash);
    }
    std::sort(hashes.begin(), hashes.end());
    hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
    SHINGLED_RETURN_IF_ERROR(batch.reads.WillAskChunks(hashes));
  }
  for (size_t i : which) {
    PageView<BatchChunks> view(batch, i);
    store::internal::TemplateJudge judge(view, options_);
    SHINGLED_RETURN_IF_ERROR(store::internal::FillMatchCommon(
        judge, pages[i].url, pages[i].sketch.chunks, &(*results)[i]));
  }
  return OkStatus();
}

}  // namespace shingled::redis
