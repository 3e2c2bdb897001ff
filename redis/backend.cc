#include "redis/backend.h"

#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "dedup/estimate.h"
#include "redis/backend_store.h"
#include "redis/by_master.h"
#include "redis/claims.h"
#include "redis/cluster_client.h"
#include "redis/layout.h"
#include "redis/record.h"
#include "redis/union_find.h"
#include "store/decide.h"
#include "store/internal/candidates.h"
#include "store/internal/codec.h"
#include "store/internal/judge.h"
#include "store/internal/page_rules.h"
#include "store/internal/sweeps.h"
#include "store/internal/verify.h"

namespace shingled::redis {

using store::ClusterId;
using store::DocId;
using store::PageInput;
using store::PageResult;
using store::StatusClass;
using store::SweepId;
using store::UrlId;
using store::Verdict;
using store::internal::SweepRecord;
using store::internal::VersionRecord;

namespace {

// The client options of a store's connections.
ClusterOptions ClusterOptionsFor(const RedisStoreOptions& redis) {
  ClusterOptions co;
  co.seeds = redis.nodes;
  co.password_file = redis.password_file;
  co.connect_timeout = std::chrono::milliseconds(redis.connect_timeout_ms);
  co.command_timeout = std::chrono::milliseconds(redis.command_timeout_ms);
  return co;
}

// 2: the versions of 16 URLs a hash, the URL claims under a hash of the URL (was: a list and a
// mark key a URL, claims under the URL itself). 3: the sharers of a holder listed (Open upgrades a
// state of format 2). 4: a record lists its super shingles' buckets, and no "similar" links are
// filed (nothing to rewrite from 3).
constexpr int kFormat = 4;
// Applying a batch again from its start when another daemon raced it (a URL or a content claimed
// at the same moment, a version appended to the same URL): every step is idempotent.
constexpr int kBatchAttempts = 5;
// A writer's lease on the write gate (redis/write_gate.h): a takedown waits at most this long for
// a writer killed mid-batch. A writer renews it as its batch goes on.
constexpr std::chrono::milliseconds kWriteLease(20000);
// How long a write waits for a takedown to complete before it fails (Unavailable: retry).
constexpr std::chrono::milliseconds kEnterWait(5000);

// --- keys (redis/FORMAT.md, "The keys") ---

constexpr char kMetaKey[] = "meta";
constexpr char kStatsKey[] = "stats";
constexpr char kSweepsKey[] = "sweeps";
constexpr char kSweepNamesKey[] = "sweepnames";
constexpr char kNextDoc[] = "next:doc";
constexpr char kNextUrl[] = "next:url";
constexpr char kNextSweep[] = "next:sweep";

void AppendHex(uint64_t v, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  int shift = 60;
  while (shift > 0 && ((v >> shift) & 15) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) out->push_back(kHex[(v >> shift) & 15]);
}

// A token naming this store among the cluster's writers: 128 random bits, in hex.
std::string GateToken() {
  std::random_device rd;
  std::string token;
  for (int i = 0; i < 4; ++i) AppendHex(rd(), &token);
  return token;
}

// "{" + letter + (id >> shift) in hex + "}": a bucket of 2^shift ids, its own hash tag.
std::string IdBucket(char letter, uint64_t id, int shift) {
  std::string key = "{";
  key.push_back(letter);
  AppendHex(id >> shift, &key);
  key.push_back('}');
  return key;
}
std::string DocKey(DocId doc) { return IdBucket('D', doc, 4); }
std::string DocUrlsKey(DocId doc) { return IdBucket('k', doc, 4); }
std::string LinksKey(DocId doc) { return IdBucket('L', doc, 4); }
std::string SizeKey(DocId root) { return IdBucket('z', root, 6); }
// The documents naming `holder` as their representative (forgetting finds a holder's group there).
std::string SharersKey(DocId holder) { return IdBucket('r', holder, 6); }
std::string UrlNameKey(UrlId url) { return IdBucket('n', url, 4); }
// The command that reads a URL's versions field, and the field of its reply (nil: none).
Command ReadVersions(UrlId url) { return Cmd({"HGET", VersionsKey(url), VersionsField(url)}); }
StatusOr<VersionList> ReadVersionList(const Reply& r) {
  return DecodeVersionList(r.is_nil() ? std::string_view() : std::string_view(r.str));
}
StatusOr<std::vector<std::string>> SplitVersions(const Reply& r) {
  StatusOr<VersionList> list = ReadVersionList(r);
  if (!list.ok()) return list.status();
  return std::move(list->entries);
}

// Where a URL's claim (its id) is: the bucket of the top `bits` bits of a 128-bit hash of the
// URL (XXH3), under the rest of the hash as its field (as a fingerprint's claim), ~14 bytes
// rather than the URL, whose name is kept once, by id (UrlNameKey). Two URLs of one hash would
// share an id: with n URLs that has probability ~n^2 / 2^129 (1e-15 for a trillion).
struct UrlClaimKey {
  std::string bucket;
  std::string field;
};
UrlClaimKey UrlClaim(std::string_view url, int bits) {
  const XXH128_hash_t h = XXH3_128bits(url.data(), url.size());
  UrlClaimKey k{"{u", FingerprintField(h.high64, h.low64, bits)};
  AppendHex(h.high64 >> (64 - bits), &k.bucket);
  k.bucket.push_back('}');
  return k;
}
Command GetUrlClaim(std::string_view url, int bits) {
  UrlClaimKey k = UrlClaim(url, bits);
  return Cmd({"HGET", std::move(k.bucket), std::move(k.field)});
}

// --- scripts ---

// Completes a document's identical claim: "doc/url" becomes "doc" (1), once (0 after).
constexpr std::string_view kCompleteClaimScript = R"lua(
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local slash = string.find(v, '/', 1, true)
if not slash or string.sub(v, 1, slash - 1) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
)lua";

// A field raised to ARGV[2] when below it.
constexpr std::string_view kMaxScript = R"lua(
local v = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > v then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
)lua";

// kAddPostingScript (layout.h) on `bucket`, field `field`, id `item`: an idempotent add to a list.
Command AddToList(std::string bucket, std::string field, std::string item) {
  std::string overflow = bucket + field;
  return Eval(kAddPostingScript, {std::move(bucket), std::move(overflow)},
              {std::move(field), std::move(item), Dec(kMaxInlineList)});
}
Command GetList(std::string bucket, std::string field) {
  std::string overflow = bucket + field;
  return Eval(kGetPostingScript, {std::move(bucket), std::move(overflow)}, {std::move(field)});
}
bool ParseI64(std::string_view s, int64_t* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// An identical-fingerprint claim: "doc" once its page is complete, "doc/url" while the page that
// created the document (from URL id `url`) is being applied.
struct IdenticalOwner {
  DocId doc = 0;
  UrlId pending_url = 0;  // 0: complete
};
StatusOr<IdenticalOwner> ParseOwner(const Reply& r) {
  IdenticalOwner o;
  if (r.is_nil()) return o;
  std::string_view s = r.str;
  const size_t slash = s.find('/');
  if (!ParseU64(s.substr(0, slash), &o.doc) || o.doc == 0 ||
      (slash != std::string_view::npos && !ParseU64(s.substr(slash + 1), &o.pending_url))) {
    return DataLossError("redis: an identical claim holds \"" + std::string(s) + "\", not an id");
  }
  return o;
}

// The sketch of a Redis record, with values as the record keeps them: 32-bit minhashes, MOD
// sample values (key << log2_modulus). Compare it only with a sketch cut the same way (Cut).
dedup::Sketch SketchOfRecord(const RedisDocument& rec) {
  dedup::Sketch s;
  s.bytes = rec.bytes;
  s.tokens = rec.tokens;
  s.shingles = rec.shingles;
  s.minhashes.assign(rec.minhashes.begin(), rec.minhashes.end());
  s.features = rec.features;
  s.sample.log2_modulus = rec.log2_modulus;
  for (uint32_t v : rec.sample) {
    s.sample.values.push_back(rec.log2_modulus >= 64 ? 0 : (uint64_t{v} << rec.log2_modulus));
  }
  std::sort(s.sample.values.begin(), s.sample.values.end());
  s.verify_sample = rec.verify_sample;
  s.identical = {rec.fingerprints[0], rec.fingerprints[1]};
  s.lexical = {rec.fingerprints[2], rec.fingerprints[3]};
  s.shingle = {rec.fingerprints[4], rec.fingerprints[5]};
  return s;
}

// A page's sketch cut as a record keeps it (the values SketchOfRecord gives back).
dedup::Sketch Cut(const dedup::Sketch& page) {
  dedup::Sketch s = page;
  for (uint64_t& m : s.minhashes) m = MinhashKey(m);
  for (uint64_t& v : s.sample.values) {
    v = s.sample.log2_modulus >= 64
            ? 0
            : (uint64_t{ModSampleKey(v, s.sample.log2_modulus)} << s.sample.log2_modulus);
  }
  std::sort(s.sample.values.begin(), s.sample.values.end());
  return s;
}

// Two cut MOD samples masked to the bits both keep (32 above the smaller modulus), so that the
// same original value compares equal on both sides.
void MaskPair(dedup::ModSample* a, dedup::ModSample* b) {
  const uint32_t low = std::min(a->log2_modulus, b->log2_modulus);
  if (low + 32 >= 64) return;
  const uint64_t mask = (uint64_t{1} << (low + 32)) - 1;
  for (dedup::ModSample* s : {a, b}) {
    for (uint64_t& v : s->values) v &= mask;
    std::sort(s->values.begin(), s->values.end());
  }
}

// A candidate's record compared with a cut sketch (a page's or a query's), as the shared candidate
// loops read it (store/internal/judge.h): both sketches masked to the bits both keep, or, for a
// document without a sketch of its own, the cut sketch and none.
class RecordPair {
 public:
  void Compare(const dedup::Sketch& cut, const RedisDocument& rec, const dedup::Sketch** compared,
               const dedup::Sketch** candidate) {
    rec_ = &rec;
    if (rec.rep != 0) {
      *compared = &cut;
      *candidate = nullptr;
      return;
    }
    compared_ = cut;
    candidate_ = SketchOfRecord(rec);
    MaskPair(&compared_.sample, &candidate_.sample);
    *compared = &compared_;
    *candidate = &candidate_;
  }
  // The verification sample of the record last compared.
  void VerifySample(std::span<const uint32_t>* sample, bool* known) const {
    *sample = rec_->verify_sample;
    *known = !rec_->verify_sample.empty();
  }

 private:
  const RedisDocument* rec_ = nullptr;
  dedup::Sketch compared_, candidate_;
};

RedisDocument RecordOfPage(const dedup::Sketch& s, int64_t date) {
  RedisDocument r;
  r.bytes = s.bytes;
  r.tokens = s.tokens;
  r.shingles = s.shingles;
  r.first_seen = r.last_seen = date;
  r.fingerprints[0] = s.identical.high;
  r.fingerprints[1] = s.identical.low;
  r.fingerprints[2] = s.lexical.high;
  r.fingerprints[3] = s.lexical.low;
  r.fingerprints[4] = s.shingle.high;
  r.fingerprints[5] = s.shingle.low;
  return r;
}
void SetSketch(const dedup::Sketch& s, int supershingle_bits, RedisDocument* r) {
  for (uint64_t m : s.minhashes) r->minhashes.push_back(MinhashKey(m));
  r->features = s.features;
  r->log2_modulus = s.sample.log2_modulus;
  std::vector<std::pair<uint32_t, uint64_t>> keyed;  // (key, value)
  for (uint64_t v : s.sample.values) keyed.emplace_back(ModSampleKey(v, s.sample.log2_modulus), v);
  std::sort(keyed.begin(), keyed.end());
  for (const auto& [key, value] : keyed) {
    r->sample.push_back(key);
    if (s.sample.log2_modulus < 32 &&
        store::internal::IndexedSampleValue(value, s.sample.log2_modulus)) {
      r->indexed_high.push_back(static_cast<uint32_t>(value >> 32));
    }
  }
  r->verify_sample = s.verify_sample;
  r->supershingles_listed = true;
  for (uint64_t v : s.supershingles) {  // ascending, so their buckets are too
    const uint64_t bucket = v >> (64 - supershingle_bits);
    if (r->supershingle_buckets.empty() || r->supershingle_buckets.back() != bucket)
      r->supershingle_buckets.push_back(bucket);
  }
}

// The full values of a record's indexed sample values (the ones filed in the sample postings).
std::vector<uint64_t> IndexedValuesOf(const RedisDocument& rec) {
  std::vector<uint64_t> out;
  const uint32_t m = rec.log2_modulus;
  size_t h = 0;
  for (uint32_t key : rec.sample) {
    if (m >= 62) break;
    const uint64_t low = uint64_t{key} << m;
    if (!store::internal::IndexedSampleValue(low, m)) continue;
    if (m >= 32) {
      out.push_back(low);
    } else if (h < rec.indexed_high.size()) {
      out.push_back((uint64_t{rec.indexed_high[h++]} << 32) | (low & 0xffffffffull));
    }
  }
  return out;
}

// The meta fields: the sketch params that shape the stored values, and the bucket bits.
std::vector<std::pair<std::string, std::string>> MetaFields(const dedup::SketchParams& p,
                                                            uint64_t polynomial,
                                                            const RedisStoreOptions& r) {
  return {{"format", Dec(kFormat)},
          {"param.shingle_size", Dec(static_cast<uint64_t>(p.shingle_size))},
          {"param.feature_groups", Dec(static_cast<uint64_t>(p.feature_groups))},
          {"param.group_size", Dec(static_cast<uint64_t>(p.group_size))},
          {"param.fungible_threshold", Dec(static_cast<uint64_t>(p.fungible_threshold))},
          {"param.seed", Dec(p.seed)},
          {"param.min_sample_size", Dec(static_cast<uint64_t>(p.min_sample_size))},
          {"param.supershingle_span", Dec(static_cast<uint64_t>(p.supershingle_span))},
          {"param.supershingle_window", Dec(static_cast<uint64_t>(p.supershingle_window))},
          {"param.mod_sample_max", Dec(static_cast<uint64_t>(p.mod_sample_max))},
          {"param.verify_sample_size", Dec(static_cast<uint64_t>(p.verify_sample_size))},
          {"param.rabin_polynomial", Dec(polynomial)},
          // The chunking (dedup/chunker.h), baked into the chunk records and postings.
          {"param.chunk_input", Dec(static_cast<uint64_t>(p.chunking.input))},
          {"param.chunk_min", Dec(p.chunking.min_size)},
          {"param.chunk_max", Dec(p.chunking.max_size)},
          {"param.chunk_divisor", Dec(p.chunking.main_divisor)},
          {"param.chunk_backup_divisor", Dec(p.chunking.backup_divisor)},
          {"bits.feature", Dec(static_cast<uint64_t>(r.feature_bits))},
          {"bits.supershingle", Dec(static_cast<uint64_t>(r.supershingle_bits))},
          {"bits.sample", Dec(static_cast<uint64_t>(r.sample_bits))},
          {"bits.fingerprint", Dec(static_cast<uint64_t>(r.fingerprint_bits))}};
}

}  // namespace

void SizeBuckets(uint64_t documents, const dedup::SketchParams& params, RedisStoreOptions* redis) {
  auto bits = [documents](double entries_a_document) {
    const double b = std::round(
        std::log2(std::max(1.0, static_cast<double>(documents) * entries_a_document / 48.0)));
    return static_cast<int>(std::clamp<double>(b, kMinBucketBits, kMaxBucketBits));
  };
  redis->feature_bits = bits(params.feature_groups);
  redis->supershingle_bits =
      bits(std::max(1, params.supershingle_span - params.supershingle_window + 1));
  // A MOD sample holds between half and all of mod_sample_max values (~3/4 on average), and a
  // quarter of them are indexed (those whose low 2 bits are zero): ~19 at the default 100.
  redis->sample_bits = bits(std::max(1.0, params.mod_sample_max * 3.0 / 16.0));
  redis->fingerprint_bits = bits(1);
}

uint64_t RecordBucketValueBytes(const dedup::SketchParams& p) {
  // Header and fingerprints ~100 bytes; 4 a minhash, 9 a feature, 4 a sample value (and 4 for
  // its high bits when indexed), at most 5 a verification sample value and a super shingle
  // bucket (delta varints), then room.
  const uint64_t bytes = 100 + 4 * static_cast<uint64_t>(p.num_minhashes()) +
                         9 * static_cast<uint64_t>(p.feature_groups) +
                         5 * static_cast<uint64_t>(p.mod_sample_max) +
                         5 * static_cast<uint64_t>(p.verify_sample_size) +
                         5 * static_cast<uint64_t>(p.supershingle_span - p.supershingle_window + 1);
  return (bytes + 255) / 256 * 256;
}

// ------------------------------------------------------------------------------------------------

RedisClusterStore::RedisClusterStore(std::unique_ptr<ClusterClient> client,
                                     const RedisStoreOptions& redis,
                                     const store::StoreOptions& options,
                                     const dedup::SketchParams& params)
    : client_(std::move(client)),
      redis_(redis),
      options_(options),
      params_(params),
      doc_ids_(*client_, kNextDoc, redis.id_block, redis.min_replicas),
      url_ids_(*client_, kNextUrl, redis.id_block, redis.min_replicas),
      gate_(std::make_unique<WriteGate>(*client_, GateToken(), kWriteLease)) {}

GateWriter::GateWriter(WriteGate& gate) : gate_(gate), status_(gate.Enter(kEnterWait)) {}
GateWriter::~GateWriter() {
  if (status_.ok()) (void)gate_.Leave();
}

RedisClusterStore::~RedisClusterStore() = default;

Status RedisClusterStore::Race(const std::string& message) {
  race_ = true;
  ++races_;
  return UnavailableError("redis: " + message + "; the batch may be applied again");
}

StatusOr<std::vector<Reply>> RedisClusterStore::RoundByMaster(
    const std::vector<Command>& commands) const {
  return RunByMaster(*client_, commands,
                     [this](const std::vector<Command>& c) { return Round(c); });
}

StatusOr<std::vector<Reply>> RedisClusterStore::Round(const std::vector<Command>& commands) const {
  if (fail_at_round_ > 0 && ++rounds_ >= fail_at_round_) {
    fail_at_round_ = 0;
    return UnavailableError("redis: a failure simulated for testing");
  }
  if (commands.empty()) return std::vector<Reply>{};
  return client_->Pipeline(commands);
}

void RedisClusterStore::FailAtRoundForTesting(int round) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_at_round_ = round;
}

Status RedisClusterStore::Open(const dedup::SketchContext& context) {
  const dedup::SketchParams& p = context.params();
  for (int bits : {redis_.feature_bits, redis_.supershingle_bits, redis_.sample_bits,
                   redis_.fingerprint_bits}) {
    if (bits < kMinBucketBits || bits > kMaxBucketBits) {
      return InvalidArgumentError("redis: bucket bits must be " + Dec(kMinBucketBits) + ".." +
                                  Dec(kMaxBucketBits) + ", not " +
                                  Dec(static_cast<uint64_t>(bits)));
    }
  }
  if (redis_.min_replicas < 0 || redis_.id_block == 0) {
    return InvalidArgumentError("redis: min_replicas must be >= 0 and id_block >= 1");
  }
  if (!redis_.allow_unsafe_fsync) SHINGLED_RETURN_IF_ERROR(client_->CheckAppendFsyncAlways());
  // A writer whose masters have fewer replicas than a write must reach could acknowledge nothing.
  if (options_.create && redis_.min_replicas > 0) {
    if (Status replicas = client_->CheckReplicas(redis_.min_replicas); !replicas.ok()) {
      return FailedPreconditionError("store.redis.min_replicas is " +
                                     Dec(static_cast<uint64_t>(redis_.min_replicas)) +
                                     ": " + replicas.message());
    }
  }
  // The record buckets stay listpacks only when a record fits hash-max-listpack-value.
  const uint64_t need = RecordBucketValueBytes(p);
  auto config = client_->RunOnMasters({"CONFIG", "GET", "hash-max-listpack-value"});
  if (!config.ok()) return config.status();
  for (const auto& [node, reply] : *config) {
    uint64_t value = 0;
    if (reply.elements.size() != 2 || !ParseU64(reply.elements[1].str, &value)) {
      return FailedPreconditionError("redis: could not read hash-max-listpack-value on " + node);
    }
    if (value < need) {
      return FailedPreconditionError(
          std::string("redis: ")
              .append(node)
              .append(" has hash-max-listpack-value ")
              .append(Dec(value))
              .append("; the document record buckets need at least ")
              .append(Dec(need))
              .append(" (CONFIG SET hash-max-listpack-value ")
              .append(Dec(need))
              .append(", and in redis.conf), or each bucket becomes a hashtable"));
    }
  }
  // The meta hash: created once (HSETNX per field), then compared. A command that only reads
  // (options.create false: check, list, report) creates nothing: an empty cluster is NotFound.
  const auto fields = MetaFields(p, context.rabin_polynomial(), redis_);
  if (options_.create) {
    std::vector<Command> set;
    for (const auto& [f, v] : fields) set.push_back(Cmd({"HSETNX", kMetaKey, f, v}));
    SHINGLED_RETURN_IF_ERROR(Round(set).status());
    SHINGLED_RETURN_IF_ERROR(UpgradeState());
  } else {
    auto format = client_->Run(Cmd({"HGET", kMetaKey, "format"}));
    if (!format.ok()) return format.status();
    if (format->is_nil()) {
      std::string seeds;
      for (const std::string& n : redis_.nodes) seeds.append(seeds.empty() ? "" : ", ").append(n);
      return NotFoundError("no shingled state on the redis cluster of " + seeds +
                           " (no meta hash there; serve, ingest and crawl create it)");
    }
  }
  std::vector<Command> get;
  for (const auto& [f, v] : fields) get.push_back(Cmd({"HGET", kMetaKey, f}));
  auto got = Round(get);
  if (!got.ok()) return got.status();
  for (size_t i = 0; i < fields.size(); ++i) {
    if ((*got)[i].str != fields[i].second) {
      return FailedPreconditionError(std::string("redis: the shared state was made with ")
                                         .append(fields[i].first)
                                         .append(" = ")
                                         .append((*got)[i].str)
                                         .append("; this daemon has ")
                                         .append(fields[i].second));
    }
  }
  return OkStatus();
}

// Format 2 to 3: each document naming a representative is listed among its sharers, from a walk
// of every record. 3 to 4: nothing to rewrite (the records written since list their super shingle
// buckets; the earlier ones do not, and a takedown leaves their super shingle postings, which no
// reader follows without a record). The format changes last, so an upgrade cut short is walked
// again by the next open (the adds are idempotent). The daemons of the earlier version must be
// stopped first: they would file documents without listing them.
Status RedisClusterStore::UpgradeState() {
  auto format = client_->Run(Cmd({"HGET", kMetaKey, "format"}));
  if (!format.ok()) return format.status();
  if (format->str != "2" && format->str != "3") return OkStatus();
  if (format->str == "2") SHINGLED_RETURN_IF_ERROR(ListSharers());
  return client_->Run(Cmd({"HSET", kMetaKey, "format", Dec(kFormat)})).status();
}

Status RedisClusterStore::ListSharers() {
  auto last = client_->Run(Cmd({"GET", kNextDoc}));
  if (!last.ok()) return last.status();
  uint64_t last_doc = 0;
  if (!last->is_nil() && !ParseU64(last->str, &last_doc)) {
    return DataLossError("redis: the document counter is not a number");
  }
  constexpr uint64_t kBucketsARound = 1024;
  for (uint64_t b0 = 0; b0 <= (last_doc >> 4); b0 += kBucketsARound) {
    std::vector<Command> reads;
    for (uint64_t b = b0; b <= std::min(last_doc >> 4, b0 + kBucketsARound - 1); ++b)
      reads.push_back(Cmd({"HGETALL", DocKey(b << 4)}));
    auto buckets = client_->Pipeline(reads);
    if (!buckets.ok()) return buckets.status();
    std::vector<Command> adds;
    for (const Reply& bucket : *buckets) {
      for (size_t i = 0; i + 1 < bucket.elements.size(); i += 2) {
        StatusOr<RedisDocument> d = DecodeRedisDocument(bucket.elements[i + 1].str);
        if (!d.ok()) {
          return DataLossError("redis: document " + bucket.elements[i].str + ": " +
                               d.status().message());
        }
        if (d->rep != 0) {
          adds.push_back(AddToList(SharersKey(d->rep), Dec(d->rep), bucket.elements[i].str));
        }
      }
    }
    if (!adds.empty()) SHINGLED_RETURN_IF_ERROR(Round(adds).status());
  }
  return OkStatus();
}

// --- sweeps ---

StatusOr<RedisClusterStore::ShardTotals> RedisClusterStore::ReadShards() const {
  std::vector<Command> cmds;
  for (uint64_t shard = 0; shard < kShards; ++shard)
    cmds.push_back(Cmd({"HGETALL", ShardKey(shard)}));
  auto r = client_->Pipeline(cmds);
  if (!r.ok()) return r.status();
  ShardTotals t;
  for (const Reply& h : *r) {
    for (size_t i = 0; i + 1 < h.elements.size(); i += 2) {
      const std::string& f = h.elements[i].str;
      int64_t v = 0;
      if (!ParseI64(h.elements[i + 1].str, &v)) return DataLossError("redis: a bad count " + f);
      const size_t dot = f.find('.');
      if (dot == std::string::npos) {
        if (f == "documents")
          t.documents += static_cast<uint64_t>(v);
        else if (f == "urls")
          t.urls += static_cast<uint64_t>(v);
        else if (f == "versions")
          t.versions += static_cast<uint64_t>(v);
        continue;
      }
      uint64_t sweep = 0;
      if (!ParseU64(std::string_view(f).substr(0, dot), &sweep)) continue;
      const std::string name = f.substr(dot + 1);
      auto& counts = t.sweeps[static_cast<SweepId>(sweep)];
      if (name == "start") {
        auto [it, fresh] = counts.emplace(name, v);
        if (!fresh) it->second = std::min(it->second, v);
      } else {
        counts[name] += v;
      }
    }
  }
  return t;
}

StatusOr<store::SweepInfo> RedisClusterStore::SweepInfoOf(SweepId id, const std::string& record,
                                                          const ShardTotals& totals) const {
  StatusOr<SweepRecord> rec = store::internal::DecodeSweep(record);
  if (!rec.ok()) return rec.status();
  // The record's counts are unused here: they are the shards'.
  SweepRecord counted = *rec;
  for (const SweepCountField& c : kSweepCountFields) counted.*c.count = 0;
  if (auto it = totals.sweeps.find(id); it != totals.sweeps.end()) {
    for (const auto& [f, v] : it->second) {
      if (f == "start") counted.start = std::min(counted.start, v);  // a version dated before it
      for (const SweepCountField& c : kSweepCountFields) {
        if (f == c.name) counted.*c.count = static_cast<uint64_t>(v);
      }
    }
  }
  return store::internal::SweepInfoOf(id, counted);
}

StatusOr<store::SweepInfo> RedisClusterStore::ReadSweep(SweepId id) const {
  auto rec = client_->Run(Cmd({"HGET", kSweepsKey, Dec(id)}));
  if (!rec.ok()) return rec.status();
  if (rec->is_nil()) return NotFoundError("no sweep with id " + Dec(id));
  StatusOr<ShardTotals> totals = ReadShards();
  if (!totals.ok()) return totals.status();
  return SweepInfoOf(id, rec->str, *totals);
}

StatusOr<store::SweepInfo> RedisClusterStore::OpenSweep(std::string_view name, int64_t start,
                                                        std::vector<std::string> scope) {
  SHINGLED_RETURN_IF_ERROR(store::internal::ValidateSweepName(name));
  StatusOr<std::vector<std::string>> valid = store::internal::ValidateScope(std::move(scope));
  if (!valid.ok()) return valid.status();
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0; attempt < kBatchAttempts; ++attempt) {
    auto existing = client_->Run(Cmd({"HGET", kSweepNamesKey, std::string(name)}));
    if (!existing.ok()) return existing.status();
    if (!existing->is_nil()) {
      uint64_t id = 0;
      if (!ParseU64(existing->str, &id)) return DataLossError("redis: sweepnames holds a bad id");
      // Its record may still be on its way (another daemon opening it): read again.
      StatusOr<store::SweepInfo> info = ReadSweep(static_cast<SweepId>(id));
      if (!info.ok()) {
        if (info.status().code() == StatusCode::kNotFound) continue;
        return info.status();
      }
      if (!info->open)
        return AlreadyExistsError("sweep " + std::string(name) + " exists and is closed");
      if (!valid->empty() && info->scope != *valid) {
        if (!info->scope.empty()) {
          return FailedPreconditionError("sweep " + std::string(name) +
                                         " is open with another scope; close it, or open a sweep "
                                         "of another name");
        }
        auto raw = client_->Run(Cmd({"HGET", kSweepsKey, Dec(id)}));
        if (!raw.ok()) return raw.status();
        StatusOr<SweepRecord> rec = store::internal::DecodeSweep(raw->str);
        if (!rec.ok()) return rec.status();
        rec->scope = *valid;
        SHINGLED_RETURN_IF_ERROR(
            client_->Run(Cmd({"HSET", kSweepsKey, Dec(id), store::internal::EncodeSweep(*rec)}))
                .status());
        info->scope = *valid;
      }
      sweeps_.erase(static_cast<SweepId>(id));
      return *info;
    }
    auto next = client_->Run(Cmd({"INCR", kNextSweep}));
    if (!next.ok()) return next.status();
    const SweepId id = static_cast<SweepId>(next->integer);
    SweepRecord rec;
    rec.name = std::string(name);
    rec.start = start;
    rec.scope = *valid;
    // The record first, then the name (HSETNX: of two daemons opening the same name at once,
    // one wins; the loser's record is left without a name and never used).
    auto wrote =
        client_->Pipeline({Cmd({"HSET", kSweepsKey, Dec(id), store::internal::EncodeSweep(rec)})});
    if (!wrote.ok()) return wrote.status();
    auto named = client_->Run(Cmd({"HSETNX", kSweepNamesKey, std::string(name), Dec(id)}));
    if (!named.ok()) return named.status();
    if (named->integer == 1) {
      SHINGLED_RETURN_IF_ERROR(client_->WaitForReplicas(
          redis_.min_replicas, std::chrono::milliseconds(redis_.wait_timeout_ms)));
      return ReadSweep(id);
    }
  }
  return UnavailableError("redis: sweep " + std::string(name) +
                          " is being opened by another daemon; retry");
}

StatusOr<std::vector<store::SweepInfo>> RedisClusterStore::Sweeps() const {
  std::lock_guard<std::mutex> lock(mu_);
  auto all = client_->Run(Cmd({"HGETALL", kSweepsKey}));
  if (!all.ok()) return all.status();
  std::vector<std::pair<SweepId, std::string>> recs;
  for (size_t i = 0; i + 1 < all->elements.size(); i += 2) {
    uint64_t id = 0;
    if (!ParseU64(all->elements[i].str, &id))
      return DataLossError("redis: a sweeps field is not an id");
    recs.emplace_back(static_cast<SweepId>(id), all->elements[i + 1].str);
  }
  // Records left without a name by a lost race (OpenSweep) are not sweeps.
  auto names = client_->Run(Cmd({"HGETALL", kSweepNamesKey}));
  if (!names.ok()) return names.status();
  std::set<SweepId> named;
  for (size_t i = 1; i < names->elements.size(); i += 2) {
    uint64_t id = 0;
    if (ParseU64(names->elements[i].str, &id)) named.insert(static_cast<SweepId>(id));
  }
  std::sort(recs.begin(), recs.end());
  StatusOr<ShardTotals> totals = ReadShards();
  if (!totals.ok()) return totals.status();
  std::vector<store::SweepInfo> out;
  for (size_t i = 0; i < recs.size(); ++i) {
    if (!named.count(recs[i].first)) continue;
    StatusOr<store::SweepInfo> s = SweepInfoOf(recs[i].first, recs[i].second, *totals);
    if (!s.ok()) return s.status();
    out.push_back(std::move(*s));
  }
  return out;
}

StatusOr<store::SweepInfo> RedisClusterStore::FindSweep(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto id = client_->Run(Cmd({"HGET", kSweepNamesKey, std::string(name)}));
  if (!id.ok()) return id.status();
  uint64_t v = 0;
  if (id->is_nil()) return NotFoundError("sweep " + std::string(name) + " not found");
  if (!ParseU64(id->str, &v)) return DataLossError("redis: sweepnames holds a bad id");
  return ReadSweep(static_cast<SweepId>(v));
}

// --- records ---

namespace {

// The records of `docs` (absent ones left out), and of their representatives with follow_reps,
// read through `round`; each record's bytes in *raw when not null.
StatusOr<std::map<DocId, RedisDocument>> ReadRecordsThrough(const PipelineRound& round,
                                                            const std::vector<DocId>& docs,
                                                            bool follow_reps,
                                                            std::map<DocId, std::string>* raw) {
  std::map<DocId, RedisDocument> out;
  std::vector<DocId> want(docs.begin(), docs.end());
  for (int level = 0; level < 2 && !want.empty(); ++level) {
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    std::vector<Command> cmds;
    for (DocId d : want) cmds.push_back(Cmd({"HGET", DocKey(d), Dec(d)}));
    auto replies = round(cmds);
    if (!replies.ok()) return replies.status();
    std::vector<DocId> reps;
    for (size_t i = 0; i < want.size(); ++i) {
      if ((*replies)[i].is_nil()) continue;  // not there (yet): the caller decides
      StatusOr<RedisDocument> rec = DecodeRedisDocument((*replies)[i].str);
      if (!rec.ok()) {
        return DataLossError("redis: document " + Dec(want[i]) + ": " + rec.status().message());
      }
      if (follow_reps && rec->rep != 0 && !out.count(rec->rep)) reps.push_back(rec->rep);
      if (raw != nullptr) (*raw)[want[i]] = (*replies)[i].str;
      out.emplace(want[i], std::move(*rec));
    }
    want = std::move(reps);
  }
  return out;
}

}  // namespace

StatusOr<std::map<DocId, RedisDocument>> RedisClusterStore::ReadRecords(
    const std::vector<DocId>& docs, bool follow_reps) const {
  return ReadRecordsThrough([this](const std::vector<Command>& c) { return RoundByMaster(c); },
                            docs, follow_reps, &raw_records_);
}

// --- Apply ---

namespace {

// What the batch knows of a URL: its id and its versions, the batch's own appended in memory.
struct UrlState {
  UrlId id = 0;
  bool known = false;    // in the store before the batch (or claimed by another daemon)
  bool claimed = false;  // added by this batch
  bool loaded = false;   // versions read
  struct Version {
    VersionRecord rec;
    int page = -1;  // the batch's page whose verdict this version takes (a new document)
    bool from_batch = false;
  };
  std::vector<Version> versions;
  size_t stored = 0;  // versions in the store (the batch's follow)
  VersionList read;   // the versions field as read (the batch writes over it only if unchanged)
};

struct NewDoc {
  int page = 0;
  DocId doc = 0;
  bool take_over = false;  // a retry of the page that claimed it
  DocId equivalent = 0;
  store::Relation relation = store::Relation::kLexical;
  // The equivalent had no record (its page, another daemon's, is being applied or died before
  // its record was written): this document keeps its own sketch (below, step 7).
  bool equivalent_unrecorded = false;
  RedisDocument rec;
  // Keeps a sketch of its own: files its postings and has its candidates judged (step 8, 10).
  bool HoldsSketch() const { return equivalent == 0 || equivalent_unrecorded; }
  std::vector<DocId> candidates;
  bool truncated = false;
  uint64_t left_out = 0;
  uint64_t below_floor = 0;  // candidates not ranked (store::internal::SampleOnlyFloor)
  std::vector<store::internal::ContainmentCandidate> containment;  // through chunks
  bool containment_truncated = false;  // more documents shared its chunks than were read
};

struct PageState {
  StatusClass kind = StatusClass::kContent;
  UrlState* url = nullptr;
  UrlState* target = nullptr;  // a revisit's
  std::optional<VersionRecord> last;
  uint32_t last_seq = 0;
  bool skip = false;
  DocId doc = 0;
  int new_doc = -1;       // index in the batch's NewDocs
  int replay_of = -1;     // replayed: takes that page's verdict
  bool appended = false;  // has a version to write
  VersionRecord version;
  DocId touch = 0;      // an existing document seen again (dates)
  std::string replace;  // a take-over: the version its failed attempt appended
};

}  // namespace

// One attempt at a batch: the steps of the write path (docs/REDIS.md) in order, each a method
// over the batch's state, numbered as they run. A race with another daemon ends the attempt
// (Race); Apply then runs a new one, which reads everything again.
class RedisClusterStore::BatchApply {
 public:
  BatchApply(RedisClusterStore& store, std::span<const PageInput> pages)
      : s_(store),
        pages_(pages),
        fbits_(store.redis_.fingerprint_bits),
        results_(pages.size()),
        st_(pages.size()),
        stored_owner_(pages.size()) {
    s_.raw_records_.clear();
  }

  StatusOr<std::vector<PageResult>> Run() {
    SHINGLED_RETURN_IF_ERROR(ValidateAndReadSweeps());
    SHINGLED_RETURN_IF_ERROR(ReadUrlsAndIdenticalOwners());
    SHINGLED_RETURN_IF_ERROR(ClaimUrls(/*revisits=*/false));
    SHINGLED_RETURN_IF_ERROR(ClaimUrls(/*revisits=*/true));
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (!st_[i].skip) SHINGLED_RETURN_IF_ERROR(PassPage(i));
    }
    MergeSeenDates();
    SHINGLED_RETURN_IF_ERROR(ClaimIdentical());
    SHINGLED_RETURN_IF_ERROR(ClaimExact());
    SHINGLED_RETURN_IF_ERROR(ReadKnownRecords());
    SHINGLED_RETURN_IF_ERROR(WriteNewRecords());
    SHINGLED_RETURN_IF_ERROR(FilePostings());
    SHINGLED_RETURN_IF_ERROR(ReadCandidateRecords());
    for (NewDoc& nd : new_docs_) SHINGLED_RETURN_IF_ERROR(Decide(nd));
    SHINGLED_RETURN_IF_ERROR(FinishResults());
    SHINGLED_RETURN_IF_ERROR(WriteVersionsAndLinks());
    // 12. Clusters: the batch's unions together (the partition is the same in any order).
    SHINGLED_RETURN_IF_ERROR(s_.MergeAll(unions_));
    SHINGLED_RETURN_IF_ERROR(Complete());
    SHINGLED_RETURN_IF_ERROR(FindClusters());
    SHINGLED_RETURN_IF_ERROR(s_.client_->WaitForReplicas(
        s_.redis_.min_replicas, std::chrono::milliseconds(s_.redis_.wait_timeout_ms)));
    return std::move(results_);
  }

 private:
  // Every command of a batch's rounds may run twice (RoundByMaster). A round goes only while the
  // writer's lease holds (redis/write_gate.h).
  StatusOr<std::vector<Reply>> Round(const std::vector<Command>& cmds) {
    SHINGLED_RETURN_IF_ERROR(s_.gate_->Keep());
    return s_.RoundByMaster(cmds);
  }

  using UrlClaims = std::vector<std::pair<const std::string*, UrlState*>>;
  // A posting filed in FilePostings, whose reply lists the documents under its value.
  struct PostingSlot {
    size_t nd;
    int index;  // 0 features, 1 super shingles, 2 samples
  };
  using Hits = std::vector<std::pair<DocId, uint32_t>>;  // (candidate, points) of a new document

  // 0. Validation and sweeps. The batch's sweep records are read again for every batch (one
  // command each, on one node), so that a sweep another daemon closed is closed here at once.
  Status ValidateAndReadSweeps() {
    std::set<SweepId> batch_sweeps;
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (Status s = store::internal::ValidatePage(pages_[i], s_.params_); !s.ok()) {
        results_[i].status = s;
        st_[i].skip = true;
      } else {
        batch_sweeps.insert(pages_[i].sweep);
      }
    }
    if (!batch_sweeps.empty()) {
      std::vector<Command> cmds;
      for (SweepId id : batch_sweeps) cmds.push_back(Cmd({"HGET", kSweepsKey, Dec(id)}));
      auto r = Round(cmds);
      if (!r.ok()) return r.status();
      size_t j = 0;
      for (SweepId id : batch_sweeps) {
        const Reply& rep = (*r)[j++];
        if (rep.is_nil()) {
          s_.sweeps_.erase(id);
          continue;
        }
        StatusOr<SweepRecord> rec = store::internal::DecodeSweep(rep.str);
        if (!rec.ok()) return rec.status();
        s_.sweeps_[id] = std::move(*rec);
      }
    }
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip) continue;
      auto it = s_.sweeps_.find(pages_[i].sweep);
      if (it == s_.sweeps_.end()) {
        results_[i].status = NotFoundError("no sweep with id " + Dec(pages_[i].sweep));
        st_[i].skip = true;
      } else if (!it->second.open) {
        results_[i].status = FailedPreconditionError("sweep " + it->second.name + " is closed");
        st_[i].skip = true;
      }
      st_[i].kind = store::ClassifyHttpStatus(pages_[i].http_status);
    }
    return OkStatus();
  }

  // 1. URL ids and identical claims, read.
  Status ReadUrlsAndIdenticalOwners() {
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip) continue;
      urls_[pages_[i].url];
      if (store::AppliesAsRevisit(pages_[i])) {
        urls_[pages_[i].revisit_of.empty() ? pages_[i].url : pages_[i].revisit_of];
      }
    }
    std::vector<Command> cmds;
    for (auto& [u, s] : urls_) cmds.push_back(GetUrlClaim(u, fbits_));
    std::vector<size_t> fp_pages;
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip || pages_[i].revisit || st_[i].kind != StatusClass::kContent) continue;
      const auto& fp = pages_[i].sketch.identical;
      cmds.push_back(Cmd({"HGET", FingerprintBucketKey(Relation::kIdentical, fp.high, fbits_),
                          FingerprintField(fp.high, fp.low, fbits_)}));
      fp_pages.push_back(i);
    }
    auto got = Round(cmds);
    if (!got.ok()) return got.status();
    size_t j = 0;
    for (auto& [u, s] : urls_) {
      const Reply& r = (*got)[j++];
      if (r.is_nil()) continue;
      if (!ParseU64(r.str, &s.id) || s.id == 0) {
        return DataLossError("redis: URL " + u + " has a bad id");
      }
      s.known = true;
    }
    for (size_t k = 0; k < fp_pages.size(); ++k) {
      StatusOr<IdenticalOwner> o = ParseOwner((*got)[urls_.size() + k]);
      if (!o.ok()) return o.status();
      stored_owner_[fp_pages[k]] = *o;
    }
    return OkStatus();
  }

  // 2. New URLs claimed (ids from the shared counter), known URLs' versions read. The revisits'
  // new URLs are claimed in a second call, after their targets' versions are read.
  Status ClaimUrls(bool revisits) {
    UrlClaims claims;
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip || store::AppliesAsRevisit(pages_[i]) != revisits) continue;
      auto it = urls_.find(pages_[i].url);
      UrlState& s = it->second;
      if (s.known || s.claimed) continue;
      StatusOr<uint64_t> id = s_.url_ids_.Next();
      if (!id.ok()) return id.status();
      s.id = *id;
      s.claimed = true;
      claims.emplace_back(&it->first, &s);
    }
    if (revisits && claims.empty()) return OkStatus();
    return LoadUrls(claims);
  }

  // The versions of the known URLs not read yet, and the claims of `claims`, in one round.
  Status LoadUrls(const UrlClaims& claims) {
    std::vector<Command> cmds;
    std::vector<UrlState*> reading;
    for (auto& [u, s] : urls_) {
      if (s.known && !s.loaded) {
        cmds.push_back(ReadVersions(s.id));
        reading.push_back(&s);
      }
    }
    const size_t reads = cmds.size();
    for (const auto& [u, s] : claims) {
      UrlClaimKey k = UrlClaim(*u, fbits_);
      cmds.push_back(Eval(kClaimScript, {std::move(k.bucket)}, {std::move(k.field), Dec(s->id)}));
    }
    auto r = Round(cmds);
    if (!r.ok()) return r.status();
    for (size_t k = 0; k < reads; ++k) {
      UrlState* s = reading[k];
      StatusOr<VersionList> list = ReadVersionList((*r)[k]);
      if (!list.ok()) return list.status();
      s->read = std::move(*list);
      for (const std::string& e : s->read.entries) {
        StatusOr<VersionRecord> v = DecodeVersionEntry(e);
        if (!v.ok()) return v.status();
        s->versions.push_back(UrlState::Version{std::move(*v), -1, false});
      }
      s->stored = s->versions.size();
      s->loaded = true;
    }
    bool lost = false;
    for (size_t k = 0; k < claims.size(); ++k) {
      uint64_t owner = 0;
      if (!ParseU64((*r)[reads + k].str, &owner)) return DataLossError("redis: bad URL claim");
      if (owner != claims[k].second->id) lost = true;  // another daemon added it meanwhile
      claims[k].second->loaded = true;
    }
    if (lost) return s_.Race("a URL was added by another daemon meanwhile");
    return OkStatus();
  }

  // A revisit's target's last document, from its versions (the batch's own included, in order).
  static DocId LastDocOf(const UrlState& s) {
    for (auto it = s.versions.rbegin(); it != s.versions.rend(); ++it) {
      if (it->rec.doc != 0) return it->rec.doc;
    }
    return 0;
  }

  // 3. The in-memory pass, page by page in order: each page sees the batch's earlier pages.
  Status PassPage(size_t i) {
    const PageInput& page = pages_[i];
    PageResult& res = results_[i];
    PageState& ps = st_[i];
    if (store::AppliesAsRevisit(page)) {
      const DocId doc = LastDocOf(urls_[page.revisit_of.empty() ? page.url : page.revisit_of]);
      if (doc == 0) {
        res.status = store::internal::NoDocumentToRevisit(page);
        ps.skip = true;
        return OkStatus();
      }
      ps.doc = doc;
    }
    UrlState& us = urls_[page.url];
    ps.url = &us;
    res.url = us.id;
    ps.last_seq = static_cast<uint32_t>(us.versions.size());
    if (!us.versions.empty()) ps.last = us.versions.back().rec;
    if (ps.last) res.previous_doc = ps.last->doc;
    if (ps.kind == StatusClass::kFailed || ps.kind == StatusClass::kRedirect) {
      PassAttempt(i);
      return OkStatus();
    }
    VersionRecord version;
    version.sweep = page.sweep;
    version.date = page.date;
    version.http_status = static_cast<uint32_t>(page.http_status);
    version.canonical_link = page.canonical_link;
    if (store::AppliesAsRevisit(page)) {
      PassRevisit(i, std::move(version));
      return OkStatus();
    }
    return PassContent(i, std::move(version));
  }

  // Whether page i replays a version of its URL in its sweep (`same`), the latest first: it then
  // takes that version's verdict and document.
  template <typename Same>
  bool Replays(size_t i, Same same) {
    const UrlState& us = *st_[i].url;
    for (int k = static_cast<int>(us.versions.size()) - 1; k >= 0; --k) {
      const UrlState::Version& v = us.versions[k];
      if (v.rec.sweep != pages_[i].sweep) return false;
      if (same(v.rec)) {
        PageResult& res = results_[i];
        res.replayed = true;
        res.verdict = v.rec.verdict;
        res.doc = v.rec.doc;
        st_[i].replay_of = v.page;
        st_[i].doc = v.rec.doc;
        return true;
      }
    }
    return false;
  }

  // Page i's version, appended to its URL's in memory (written in WriteVersionsAndLinks);
  // `new_doc_page`: the page whose verdict it takes, once decided (-1: its verdict is final).
  void Append(size_t i, VersionRecord v, int new_doc_page) {
    st_[i].appended = true;
    st_[i].version = v;
    st_[i].url->versions.push_back(UrlState::Version{std::move(v), new_doc_page, true});
  }

  // A failed fetch or a redirect: it keeps the URL's last document.
  void PassAttempt(size_t i) {
    PageState& ps = st_[i];
    PageResult& res = results_[i];
    VersionRecord version =
        store::internal::AttemptVersion(pages_[i], ps.kind, ps.last ? &*ps.last : nullptr);
    res.verdict = version.verdict;
    res.doc = version.doc;
    res.redirect_target = version.redirect_target;
    ps.doc = version.doc;
    if (ps.last && store::internal::ReplaysAttempt(*ps.last, version)) {
      res.replayed = true;
      return;
    }
    Append(i, std::move(version), -1);
  }

  // A revisit: the target's last document, seen again.
  void PassRevisit(size_t i, VersionRecord version) {
    const PageInput& page = pages_[i];
    PageState& ps = st_[i];
    PageResult& res = results_[i];
    const DocId doc = ps.doc;
    if (ps.last && Replays(i, [&](const VersionRecord& v) {
          return store::internal::ReplaysRevisit(v, page, doc);
        })) {
      return;
    }
    version.doc = doc;
    res.doc = doc;
    ps.touch = doc;
    need_records_.insert(doc);
    res.verdict = store::internal::IdenticalVerdict(ps.last ? &*ps.last : nullptr, doc);
    if (res.verdict == Verdict::kUnchanged) {
      res.previous_resemblance = 1.0;
    } else if (ps.last && ps.last->doc != 0) {
      need_records_.insert(ps.last->doc);
    }
    version.verdict = res.verdict;
    Append(i, std::move(version), -1);
  }

  // A page with content (or a dead one): gone, a document identical to a stored or an earlier
  // one of the batch, or a new document (decided in Decide).
  Status PassContent(size_t i, VersionRecord version) {
    const PageInput& page = pages_[i];
    PageState& ps = st_[i];
    PageResult& res = results_[i];
    UrlState& us = *ps.url;
    const bool dead = ps.kind == StatusClass::kDead;
    DocId identical = 0;
    bool take_over = false;
    if (!dead) {
      const auto key = std::make_pair(page.sketch.identical.high, page.sketch.identical.low);
      if (auto it = batch_identical_.find(key); it != batch_identical_.end()) {
        identical = it->second;
      } else if (stored_owner_[i].doc != 0) {
        identical = stored_owner_[i].doc;
        // A document whose page never completed, claimed from this very URL: this is its retry,
        // which finishes it under the same id.
        take_over = stored_owner_[i].pending_url != 0 && stored_owner_[i].pending_url == us.id;
      }
    }
    if (take_over) {
      // The failed attempt may have appended the page's version already (a failure after the
      // versions were written, before the page completed): that version is replaced by this
      // attempt's, at its seq, so the page keeps one version.
      for (size_t k = us.versions.size(); k > 0; --k) {
        const UrlState::Version& v = us.versions[k - 1];
        if (v.rec.sweep != page.sweep) break;
        if (v.rec.doc == identical && !v.from_batch && k == us.versions.size()) {
          ps.replace = VersionEntry(v.rec, true);
          us.versions.pop_back();
          ps.last.reset();
          ps.last_seq = static_cast<uint32_t>(us.versions.size());
          if (!us.versions.empty()) ps.last = us.versions.back().rec;
          res.previous_doc = ps.last ? ps.last->doc : 0;
          break;
        }
      }
    }
    if (ps.last && !take_over && Replays(i, [&](const VersionRecord& v) {
          return store::internal::ReplaysPage(v, page, dead, identical);
        })) {
      return OkStatus();
    }
    if (dead) {
      version.doc = 0;
      version.verdict = Verdict::kGone;
      res.verdict = Verdict::kGone;
      Append(i, std::move(version), -1);
      return OkStatus();
    }
    if (identical != 0 && !take_over) {
      // Another daemon's page that is being applied (or died before it completed): its record
      // may not be written yet. The page is its duplicate all the same (identical bytes: the
      // page's sketch is the document's), but its dates cannot be merged into a record that is
      // not there (WriteVersionsAndLinks). Waiting instead could deadlock two batches that each
      // hold a claim the other needs.
      if (stored_owner_[i].doc == identical && stored_owner_[i].pending_url != 0) {
        pending_others_.insert(identical);
      }
      ps.doc = identical;
      ps.touch = identical;
      need_records_.insert(identical);
      res.verdict = store::internal::IdenticalVerdict(ps.last ? &*ps.last : nullptr, identical);
      if (res.verdict == Verdict::kDuplicate) {
        res.matches.push_back(store::IdenticalMatch(identical, page.sketch));
      }
      if (ps.last && ps.last->doc != 0 && ps.last->doc != identical) {
        need_records_.insert(ps.last->doc);
      }
    } else {
      NewDoc nd;
      nd.page = static_cast<int>(i);
      nd.take_over = take_over;
      if (take_over) {
        nd.doc = identical;
      } else {
        StatusOr<uint64_t> id = s_.doc_ids_.Next();
        if (!id.ok()) return id.status();
        nd.doc = *id;
      }
      nd.rec = RecordOfPage(page.sketch, page.date);
      batch_identical_[{page.sketch.identical.high, page.sketch.identical.low}] = nd.doc;
      ps.doc = nd.doc;
      ps.new_doc = static_cast<int>(new_docs_.size());
      new_docs_.push_back(std::move(nd));
      if (ps.last && ps.last->doc != 0 && ps.last->doc != ps.doc) {
        need_records_.insert(ps.last->doc);
      }
    }
    res.doc = ps.doc;
    version.doc = ps.doc;
    version.verdict = res.verdict;
    Append(i, std::move(version), ps.new_doc >= 0 ? static_cast<int>(i) : -1);
    return OkStatus();
  }

  // Dates of documents seen again: the earliest first_seen, the latest last_seen (a new
  // document's in its record now, a stored one's in WriteVersionsAndLinks).
  void MergeSeenDates() {
    for (const NewDoc& nd : new_docs_) batch_doc_ids_.insert(nd.doc);
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip || st_[i].touch == 0 || results_[i].replayed) continue;
      auto [it, fresh] =
          seen_.emplace(st_[i].touch, std::make_pair(pages_[i].date, pages_[i].date));
      if (!fresh) {
        it->second.first = std::min(it->second.first, pages_[i].date);
        it->second.second = std::max(it->second.second, pages_[i].date);
      }
    }
    for (NewDoc& nd : new_docs_) {
      if (auto it = seen_.find(nd.doc); it != seen_.end()) {
        nd.rec.first_seen = std::min(nd.rec.first_seen, it->second.first);
        nd.rec.last_seen = std::max(nd.rec.last_seen, it->second.second);
      }
    }
  }

  // 4. Identical claims of the new documents ("doc/url": pending until the page completes).
  Status ClaimIdentical() {
    std::vector<Command> cmds;
    std::vector<size_t> which;
    for (size_t k = 0; k < new_docs_.size(); ++k) {
      if (new_docs_[k].take_over) continue;
      const auto& fp = pages_[new_docs_[k].page].sketch.identical;
      cmds.push_back(Eval(kClaimScript,
                          {FingerprintBucketKey(Relation::kIdentical, fp.high, fbits_)},
                          {FingerprintField(fp.high, fp.low, fbits_),
                           Dec(new_docs_[k].doc) + "/" + Dec(st_[new_docs_[k].page].url->id)}));
      which.push_back(k);
    }
    auto r = Round(cmds);
    if (!r.ok()) return r.status();
    for (size_t j = 0; j < which.size(); ++j) {
      StatusOr<IdenticalOwner> o = ParseOwner((*r)[j]);
      if (!o.ok()) return o.status();
      if (o->doc != new_docs_[which[j]].doc) {
        // Another daemon stored the same content at the same moment: apply the batch again,
        // which finds its document (ours is a gap in the ids).
        return s_.Race("the same content was stored by another daemon meanwhile");
      }
    }
    return OkStatus();
  }

  // 5. Lexical and shingle claims (a new document owns them, or is equivalent to their owner).
  Status ClaimExact() {
    std::vector<Command> cmds;
    std::vector<std::pair<size_t, int>> which;  // (new doc, 0 lexical / 1 shingle)
    for (size_t k = 0; k < new_docs_.size(); ++k) {
      const dedup::Sketch& s = pages_[new_docs_[k].page].sketch;
      const std::string doc = Dec(new_docs_[k].doc);
      if (s.tokens > 0) {
        cmds.push_back(
            Eval(kClaimScript, {FingerprintBucketKey(Relation::kLexical, s.lexical.high, fbits_)},
                 {FingerprintField(s.lexical.high, s.lexical.low, fbits_), doc}));
        which.emplace_back(k, 0);
      }
      if (s.shingles > 0) {
        cmds.push_back(
            Eval(kClaimScript, {FingerprintBucketKey(Relation::kShingle, s.shingle.high, fbits_)},
                 {FingerprintField(s.shingle.high, s.shingle.low, fbits_), doc}));
        which.emplace_back(k, 1);
      }
    }
    auto r = Round(cmds);
    if (!r.ok()) return r.status();
    std::vector<DocId> lexical(new_docs_.size()), shingle(new_docs_.size());
    for (size_t j = 0; j < which.size(); ++j) {
      uint64_t owner = 0;
      if (!ParseU64((*r)[j].str, &owner)) return DataLossError("redis: bad fingerprint claim");
      (which[j].second == 0 ? lexical : shingle)[which[j].first] = owner;
    }
    for (size_t k = 0; k < new_docs_.size(); ++k) {
      NewDoc& nd = new_docs_[k];
      const dedup::Sketch& s = pages_[nd.page].sketch;
      // A claim that answers with this document: it had no owner before.
      const store::internal::ExactLevel exact = store::internal::ExactLevelOf(
          s, lexical[k] == nd.doc ? 0 : lexical[k], shingle[k] == nd.doc ? 0 : shingle[k]);
      nd.rec.owns_lexical = exact.owns_lexical;
      nd.rec.owns_shingle = exact.owns_shingle;
      nd.equivalent = exact.equivalent;
      nd.relation = exact.relation;
      if (nd.equivalent != 0 && !batch_doc_ids_.count(nd.equivalent)) {
        need_records_.insert(nd.equivalent);
      }
    }
    return OkStatus();
  }

  // 6. Records read: existing documents seen again, previous documents, equivalents.
  Status ReadKnownRecords() {
    std::vector<DocId> want;
    for (DocId d : need_records_) {
      if (!batch_doc_ids_.count(d)) want.push_back(d);
    }
    StatusOr<std::map<DocId, RedisDocument>> got = s_.ReadRecords(want, true);
    if (!got.ok()) return got.status();
    records_ = std::move(*got);
    return OkStatus();
  }

  // A document's record, the batch's new ones included; null when not read or not there.
  const RedisDocument* RecordOf(DocId d) const {
    if (auto it = batch_records_.find(d); it != batch_records_.end()) return it->second;
    if (auto it = records_.find(d); it != records_.end()) return &it->second;
    return nullptr;
  }
  // The record holding `d`'s sketch: its representative's, or its own.
  const RedisDocument* SketchHolder(DocId d) const {
    const RedisDocument* r = RecordOf(d);
    return r != nullptr && r->rep != 0 ? RecordOf(r->rep) : r;
  }

  // 7. Records of the new documents written (before their postings: a daemon that finds a
  // posting finds its record), and which stored documents seen again get this batch's chunks.
  // A document naming a representative is first filed under it (its sharers), in a round of its
  // own: a record never names a holder that does not list it.
  Status WriteNewRecords() {
    std::vector<Command> cmds;
    for (NewDoc& nd : new_docs_) {
      const dedup::Sketch& s = pages_[nd.page].sketch;
      // An equivalent without a record yet: waiting for it could deadlock two batches that each
      // claimed a fingerprint the other's document is equivalent to (and each stop before writing
      // its own records). This document keeps a sketch of its own instead of naming a
      // representative, as a new document does (postings, candidates), and is still the
      // equivalent's duplicate (Decide).
      const RedisDocument* eq = nd.equivalent == 0 ? nullptr : RecordOf(nd.equivalent);
      nd.equivalent_unrecorded = nd.equivalent != 0 && eq == nullptr;
      if (eq != nullptr) {
        nd.rec.rep = eq->rep != 0 ? eq->rep : nd.equivalent;
        cmds.push_back(AddToList(SharersKey(nd.rec.rep), Dec(nd.rec.rep), Dec(nd.doc)));
      } else {
        SetSketch(s, s_.redis_.supershingle_bits, &nd.rec);
      }
      batch_records_[nd.doc] = &nd.rec;  // a later equivalent in the batch names it
    }
    if (!cmds.empty()) SHINGLED_RETURN_IF_ERROR(Round(cmds).status());
    cmds.clear();
    for (NewDoc& nd : new_docs_) {
      const dedup::Sketch& s = pages_[nd.page].sketch;
      cmds.push_back(Cmd({"HSET", DocKey(nd.doc), Dec(nd.doc), EncodeRedisDocument(nd.rec)}));
      // A new document's chunk record (`doc_chunks`), before its postings (FilePostings).
      if (!s.chunks.empty()) cmds.push_back(chunks::PutRecord(nd.doc, s.chunks, false));
    }
    // Whether each stored document seen again with chunks has its chunk record (LMDB's
    // BackfillChunks: one recorded without chunks gets this page's). The first such page each.
    for (size_t i = 0; i < pages_.size(); ++i) {
      const DocId d = st_[i].touch;
      if (st_[i].skip || d == 0 || results_[i].replayed || store::AppliesAsRevisit(pages_[i]) ||
          pages_[i].sketch.chunks.empty() || batch_doc_ids_.count(d) || backfill_.count(d)) {
        continue;
      }
      backfill_.emplace(d, i);
    }
    const size_t first_has = cmds.size();
    for (const auto& [d, i] : backfill_) cmds.push_back(chunks::HasRecord(d));
    auto r = Round(cmds);
    if (!r.ok()) return r.status();
    size_t j = first_has;
    for (auto it = backfill_.begin(); it != backfill_.end(); ++j) {
      it = (*r)[j].integer == 1 ? backfill_.erase(it) : std::next(it);
    }
    return OkStatus();
  }

  // 8. Postings filed and read in one script per value (claims.h: of two racing near-copies at
  // least one sees the other), the chunk postings filed; the candidates ranked as the LMDB writer
  // ranks them.
  Status FilePostings() {
    std::vector<PostingSlot> slots;
    auto r = Round(PostingCommands(&slots));
    if (!r.ok()) return r.status();
    SHINGLED_RETURN_IF_ERROR(MakeBatchChunks());
    std::vector<Hits> hits(new_docs_.size());
    SHINGLED_RETURN_IF_ERROR(CollectHits(*r, slots, &hits));
    for (size_t k = 0; k < new_docs_.size(); ++k) {
      if (new_docs_[k].HoldsSketch()) SHINGLED_RETURN_IF_ERROR(Rank(&new_docs_[k], &hits[k]));
    }
    return OkStatus();
  }

  // The file-and-read script of each posting of the new documents that hold a sketch (one slot
  // each), then the chunk postings (`chunk_docs`) of every new document with chunks and of the
  // documents given theirs (WriteNewRecords; their records follow in WriteVersionsAndLinks).
  std::vector<Command> PostingCommands(std::vector<PostingSlot>* slots) const {
    std::vector<Command> cmds;
    const RedisStoreOptions& redis = s_.redis_;
    for (size_t k = 0; k < new_docs_.size(); ++k) {
      const NewDoc& nd = new_docs_[k];
      if (!nd.HoldsSketch()) continue;
      const dedup::Sketch& s = pages_[nd.page].sketch;
      auto file = [&](Relation rel, uint64_t value, int bits, int index) {
        std::string bucket = BucketKey(rel, value, bits);
        std::string field = ValueField(value, bits);
        std::string overflow = bucket + field;
        cmds.push_back(Eval(kFileAndReadScript, {std::move(bucket), std::move(overflow)},
                            {std::move(field), Dec(nd.doc), Dec(kMaxInlineList)}));
        slots->push_back(PostingSlot{k, index});
      };
      for (uint64_t v : s.features) file(Relation::kFeature, v, redis.feature_bits, 0);
      for (uint64_t v : s.supershingles) {
        file(Relation::kSuperShingle, v, redis.supershingle_bits, 1);
      }
      for (uint64_t v : s.sample.values) {
        if (store::internal::IndexedSampleValue(v, s.sample.log2_modulus)) {
          file(Relation::kSample, v, redis.sample_bits, 2);
        }
      }
    }
    for (const NewDoc& nd : new_docs_) {
      for (Command& c :
           chunks::FilePostings(nd.doc, pages_[nd.page].sketch.chunks, redis.sample_bits)) {
        cmds.push_back(std::move(c));
      }
    }
    for (const auto& [d, i] : backfill_) {
      for (Command& c : chunks::FilePostings(d, pages_[i].sketch.chunks, redis.sample_bits)) {
        cmds.push_back(std::move(c));
      }
    }
    return cmds;
  }

  // The batch's chunks as each page sees them (the store, and the batch's pages up to it:
  // BatchChunkFacts), for the containment candidates (Rank) and bytes in common (FinishResults).
  Status MakeBatchChunks() {
    BatchChunkFacts facts;
    for (const NewDoc& nd : new_docs_) facts.doc_page[nd.doc] = static_cast<size_t>(nd.page);
    for (const auto& [d, i] : backfill_) {
      facts.doc_page[d] = i;
      facts.backfilled[d] = &pages_[i].sketch.chunks;
    }
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip || st_[i].url == nullptr) continue;
      if (st_[i].url->stored == 0) facts.new_urls.emplace_back(i, pages_[i].url);
      if (st_[i].appended && st_[i].version.doc != 0) {
        facts.versions.push_back({i, st_[i].version.doc, st_[i].url->id, pages_[i].url});
      }
    }
    for (const NewDoc& nd : new_docs_) {
      for (const dedup::Chunk& c : pages_[nd.page].sketch.chunks) facts.hashes.push_back(c.hash);
    }
    StatusOr<std::shared_ptr<BatchChunks>> made = s_.NewBatchChunks(std::move(facts));
    if (!made.ok()) return made.status();
    batch_chunks_ = std::move(*made);
    return OkStatus();
  }

  // Each new document's hits from the posting lists read in `replies` (one per slot): the
  // documents filed before it (not itself, nor the batch's later pages), a sample value listing
  // more than common_value_limit left out.
  Status CollectHits(const std::vector<Reply>& replies, const std::vector<PostingSlot>& slots,
                     std::vector<Hits>* hits) const {
    const size_t limit = s_.options_.common_value_limit;
    const size_t cap = store::internal::FeatureReadCap(s_.options_);
    for (size_t j = 0; j < slots.size(); ++j) {
      const NewDoc& nd = new_docs_[slots[j].nd];
      StatusOr<std::vector<uint64_t>> list = ParsePostingList(replies[j]);
      if (!list.ok()) return list.status();
      std::vector<DocId> before;
      for (uint64_t d : *list) {
        if (d == nd.doc) continue;
        if (batch_doc_ids_.count(d)) {
          const auto it = std::find_if(new_docs_.begin(), new_docs_.end(),
                                       [d](const NewDoc& x) { return x.doc == d; });
          if (it->page > nd.page) continue;
        }
        before.push_back(d);
      }
      Hits& to = (*hits)[slots[j].nd];
      if (slots[j].index == 2) {
        if (before.size() > limit) continue;  // a common value
        for (DocId d : before) to.emplace_back(d, store::internal::kSampleHit);
      } else {
        if (before.size() > cap) before.resize(cap);
        const uint32_t points = slots[j].index == 0 ? store::internal::kFeatureHit
                                                    : store::internal::kSuperShingleHit;
        for (DocId d : before) to.emplace_back(d, points);
      }
    }
    return OkStatus();
  }

  // A new document's candidates: its containment candidates (the chunk graph), scored whatever
  // their points, and room kept for them among the ranked hits (RankPageCandidates, as LMDB's).
  Status Rank(NewDoc* nd, Hits* hits) {
    SHINGLED_RETURN_IF_ERROR(s_.BatchContainment(*batch_chunks_, pages_[nd->page],
                                                 static_cast<size_t>(nd->page), nd->doc,
                                                 &nd->containment, &nd->containment_truncated));
    store::internal::RankPageCandidates(hits, nd->containment, pages_[nd->page].sketch.sample,
                                        s_.options_.max_candidates, &nd->candidates,
                                        &nd->truncated, &nd->left_out, &nd->below_floor);
    return OkStatus();
  }

  // 9. Candidate records read.
  Status ReadCandidateRecords() {
    std::vector<DocId> want;
    for (const NewDoc& nd : new_docs_) {
      for (DocId c : nd.candidates) {
        if (!batch_doc_ids_.count(c) && !records_.count(c)) want.push_back(c);
      }
    }
    StatusOr<std::map<DocId, RedisDocument>> got = s_.ReadRecords(want, false);
    if (!got.ok()) return got.status();
    for (auto& [d, r] : *got) records_.emplace(d, std::move(r));
    return OkStatus();
  }

  // 10. A new document's verdict: its exact level's equivalent, or its candidates scored.
  Status Decide(NewDoc& nd) {
    const PageInput& page = pages_[nd.page];
    PageResult& res = results_[nd.page];
    const dedup::Sketch cut = Cut(page.sketch);
    if (nd.equivalent != 0) {
      // The same tokens (lexical) or the same shingles make the same sketch, so an equivalent
      // without a record yet is compared with the page's own.
      const RedisDocument* eq = nd.equivalent_unrecorded ? &nd.rec : SketchHolder(nd.equivalent);
      if (eq == nullptr) return s_.Race("an equivalent's sketch is missing");
      dedup::Sketch a = cut, b = SketchOfRecord(*eq);
      MaskPair(&a.sample, &b.sample);
      if (s_.options_.cluster_relations & store::kClusterExact) {
        unions_.emplace_back(nd.doc, nd.equivalent);
      }
      res.matches.push_back(store::EquivalentMatch(nd.equivalent, nd.relation, a, b));
      if (!nd.HoldsSketch()) {
        res.verdict = Verdict::kDuplicate;
        return OkStatus();
      }
    }
    res.candidates_truncated = nd.truncated;
    res.candidates_left_out = nd.left_out;
    res.candidates_below_floor = nd.below_floor;
    res.containment_truncated = nd.containment_truncated;
    StatusOr<bool> joined = ScoreCandidates(nd, cut, &res);
    if (!joined.ok()) return joined.status();
    res.verdict = nd.equivalent != 0 ? Verdict::kDuplicate
                  : *joined           ? Verdict::kNearDuplicate
                                      : Verdict::kNew;
    return OkStatus();
  }

  // The candidates judged (store/internal/judge.h) against the records read: their matches,
  // links and unions; whether the page joined one.
  class JudgedPage;
  StatusOr<bool> ScoreCandidates(const NewDoc& nd, const dedup::Sketch& cut, PageResult* res);

  // The verdicts given to the versions (and to the replays of the batch's own pages); each
  // page's previous resemblance, its matches in order, and its bytes in common with them.
  Status FinishResults() {
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip) continue;
      if (st_[i].appended) st_[i].version.verdict = results_[i].verdict;
      if (st_[i].replay_of >= 0) results_[i].verdict = results_[st_[i].replay_of].verdict;
    }
    for (auto& [u, s] : urls_) {
      for (UrlState::Version& v : s.versions) {
        if (v.page >= 0) v.rec.verdict = results_[v.page].verdict;
      }
    }
    std::vector<size_t> common_pages;  // the pages whose bytes in common are filled (below)
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip || results_[i].replayed || st_[i].kind != StatusClass::kContent) continue;
      PageResult& res = results_[i];
      const PageState& ps = st_[i];
      const bool revisit = store::AppliesAsRevisit(pages_[i]);
      if (ps.last && ps.last->doc != 0) {
        StatusOr<double> r = PreviousResemblance(i);
        if (!r.ok()) return r.status();
        res.previous_resemblance = *r;
      }
      if (revisit && res.verdict == Verdict::kDuplicate) {
        const RedisDocument* own = SketchHolder(ps.doc);
        const int features = own == nullptr ? 0 : static_cast<int>(own->features.size());
        res.matches.push_back(
            store::Match{ps.doc, store::Relation::kIdentical, 1.0, 1.0, 1.0, features});
      }
      store::SortMatches(&res.matches);
      res.matches_left_out = store::LimitMatches(s_.options_.max_matches, &res.matches);
      if (!revisit) common_pages.push_back(i);
    }
    return s_.BatchMatchCommons(*batch_chunks_, pages_, common_pages, &results_);
  }

  // Page i's resemblance to its URL's previous document (a revisit's is its document's).
  StatusOr<double> PreviousResemblance(size_t i) const {
    const PageState& ps = st_[i];
    if (ps.last->doc == ps.doc) return 1.0;
    const RedisDocument* prev = SketchHolder(ps.last->doc);
    if (prev == nullptr) {
      return DataLossError("redis: document " + Dec(ps.last->doc) + " has no record");
    }
    dedup::Sketch a;
    if (store::AppliesAsRevisit(pages_[i])) {
      const RedisDocument* own = SketchHolder(ps.doc);
      if (own == nullptr) return DataLossError("redis: document " + Dec(ps.doc) + " has no record");
      a = SketchOfRecord(*own);
    } else {
      a = Cut(pages_[i].sketch);
    }
    return dedup::ResemblanceFromMinhashes(a, SketchOfRecord(*prev));
  }

  // 11. Writes: versions (each over the field as read or as the batch's previous page wrote it:
  // a resent write is harmless, another daemon's version meanwhile a race), the URLs' names, the
  // documents' URLs, links, host counts, backfilled chunk records, and the dates of documents
  // seen again (compare-and-set).
  Status WriteVersionsAndLinks() {
    std::vector<Command> cmds;
    std::vector<size_t> version_pages;
    SHINGLED_RETURN_IF_ERROR(VersionWrites(&cmds, &version_pages));
    const size_t nv = cmds.size();
    // The names of the URLs without a stored version: written with their first version, so
    // that a claim lost with a failed attempt leaves no name behind (a retry claims anew).
    std::set<UrlId> named;
    for (size_t i : version_pages) {
      const UrlState& u = *st_[i].url;
      if (u.stored == 0 && named.insert(u.id).second) {
        cmds.push_back(Cmd({"HSET", UrlNameKey(u.id), Dec(u.id), pages_[i].url}));
      }
    }
    for (size_t i : version_pages) {
      if (st_[i].version.doc != 0) {
        cmds.push_back(AddToList(DocUrlsKey(st_[i].version.doc), Dec(st_[i].version.doc),
                                 Dec(st_[i].url->id)));
      }
    }
    // Each new URL counted in its host's URLs (the template judge's host share: only
    // chunks are judged, so not without chunking, which the state fixes at creation), and the
    // chunk records of the documents given chunks (their postings were filed in FilePostings).
    const bool chunking = s_.params_.chunking.input != dedup::ChunkInput::kNone;
    for (size_t i : version_pages) {
      const UrlState& u = *st_[i].url;
      if (!chunking || u.stored != 0 || !named.count(u.id)) continue;
      if (auto c = chunks::CountHostUrl(pages_[i].url, chunks::HostUrlCap(s_.options_))) {
        cmds.push_back(std::move(*c));
      }
    }
    for (const auto& [d, i] : backfill_) {
      cmds.push_back(chunks::PutRecord(d, pages_[i].sketch.chunks, true));
    }
    const size_t first_date = cmds.size();
    SHINGLED_RETURN_IF_ERROR(DateUpdates(&cmds));
    auto r = Round(cmds);
    if (!r.ok()) return r.status();
    for (size_t j = 0; j < nv; ++j) {
      // 0: written already (the command resent)
      if ((*r)[j].integer < 0) {
        return s_.Race("another daemon changed the versions of a URL of the batch meanwhile");
      }
    }
    for (size_t j = first_date; j < cmds.size(); ++j) {
      if ((*r)[j].integer != 1) {
        return s_.Race("another daemon updated a document of the batch meanwhile");
      }
    }
    return OkStatus();
  }

  // Each appended version written over its URL's field as the batch left it (written_), in page
  // order; the pages in *pages.
  Status VersionWrites(std::vector<Command>* cmds, std::vector<size_t>* pages) {
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip || !st_[i].appended) continue;
      const UrlId u = st_[i].url->id;
      VersionList& list = written_.try_emplace(u, st_[i].url->read).first->second;
      VersionList next = list;
      if (!st_[i].replace.empty()) {
        // A take-over: the version its failed attempt appended is replaced, at its seq.
        if (next.entries.empty() || next.entries.back() != st_[i].replace) {
          return s_.Race("the version a failed attempt appended to a URL of the batch changed");
        }
        next.entries.pop_back();
      }
      next.entries.push_back(VersionEntry(st_[i].version, st_[i].new_doc >= 0));
      cmds->push_back(ReplaceVersions(u, list, next, {}));
      list = std::move(next);
      pages->push_back(i);
    }
    return OkStatus();
  }

  // The dates of the stored documents seen again, each a compare-and-set over its record as read
  // (left out when unchanged, or when another daemon's page has not written it yet).
  Status DateUpdates(std::vector<Command>* cmds) const {
    for (const auto& [d, dates] : seen_) {
      if (batch_doc_ids_.count(d)) continue;
      auto rec = records_.find(d);
      auto raw = s_.raw_records_.find(d);
      if (rec == records_.end() || raw == s_.raw_records_.end()) {
        if (pending_others_.count(d)) continue;
        return DataLossError("redis: document " + Dec(d) + " has no record");
      }
      RedisDocument updated = rec->second;
      updated.first_seen = std::min(updated.first_seen, dates.first);
      updated.last_seen = std::max(updated.last_seen, dates.second);
      if (updated == rec->second) continue;
      cmds->push_back(
          Eval(kSetIfScript, {DocKey(d)}, {Dec(d), raw->second, EncodeRedisDocument(updated)}));
    }
    return OkStatus();
  }

  // 13. Completion: each new document's claim loses its "/url"; each URL's versions not counted
  // yet are counted in its shard, in the same round (RoundWithCounts).
  Status Complete() {
    std::vector<Command> cmds;
    for (const NewDoc& nd : new_docs_) {
      const auto& fp = pages_[nd.page].sketch.identical;
      cmds.push_back(Eval(kCompleteClaimScript,
                          {FingerprintBucketKey(Relation::kIdentical, fp.high, fbits_)},
                          {FingerprintField(fp.high, fp.low, fbits_), Dec(nd.doc)}));
    }
    if (!new_docs_.empty()) cmds.push_back(Eval(kMaxScript, {kStatsKey}, {"largest_cluster", "1"}));
    std::map<UrlId, VersionList> fields = std::move(written_);
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (!st_[i].skip && st_[i].url != nullptr && st_[i].url->id != 0) {
        fields.try_emplace(st_[i].url->id, st_[i].url->read);
      }
    }
    return s_.RoundWithCounts(std::move(cmds), std::move(fields));
  }

  // 14. Clusters of the results.
  Status FindClusters() {
    std::vector<DocId> docs;
    std::vector<size_t> which;
    for (size_t i = 0; i < pages_.size(); ++i) {
      if (st_[i].skip || results_[i].doc == 0) continue;
      docs.push_back(results_[i].doc);
      which.push_back(i);
    }
    if (docs.empty()) return OkStatus();
    StatusOr<std::vector<uint64_t>> roots = FindRoots(*s_.client_, docs);
    if (!roots.ok()) return roots.status();
    for (size_t j = 0; j < which.size(); ++j) results_[which[j]].cluster = (*roots)[j];
    return OkStatus();
  }

  RedisClusterStore& s_;
  const std::span<const PageInput> pages_;
  const int fbits_;
  std::vector<PageResult> results_;
  std::vector<PageState> st_;
  std::map<std::string, UrlState> urls_;
  std::vector<IdenticalOwner> stored_owner_;  // each page's identical claim as read
  std::vector<NewDoc> new_docs_;              // not added to after the pass (records point in)
  std::set<DocId> batch_doc_ids_;
  std::map<std::pair<uint64_t, uint64_t>, DocId> batch_identical_;  // identical -> new document
  std::set<DocId> need_records_;
  std::set<DocId> pending_others_;  // another daemon's documents whose page has not completed
  std::map<DocId, std::pair<int64_t, int64_t>> seen_;  // first and last seen by the batch
  std::map<DocId, RedisDocument> records_;             // stored documents read
  std::map<DocId, const RedisDocument*> batch_records_;  // the new documents' records
  std::map<DocId, size_t> backfill_;  // a stored document without chunks -> the page giving them
  std::shared_ptr<BatchChunks> batch_chunks_;
  std::vector<std::pair<DocId, DocId>> unions_;
  std::map<UrlId, VersionList> written_;  // each URL's versions field as the batch leaves it
};

// A new document's candidates as the shared loop reads them: the records the batch read, each
// compared with the page's cut sketch masked to the bits both keep. A batch's unions are made
// after it is judged, so a candidate's cluster is not known here, and every candidate is scored.
class RedisClusterStore::BatchApply::JudgedPage final : public store::internal::PageCandidates {
 public:
  JudgedPage(BatchApply& batch, const NewDoc& nd, const dedup::Sketch& cut)
      : batch_(batch), nd_(nd), cut_(cut) {}

  StatusOr<bool> Read(DocId id, const dedup::Sketch** page,
                      const dedup::Sketch** candidate) override {
    const RedisDocument* rec = batch_.RecordOf(id);
    if (rec == nullptr) return false;  // a posting whose record is not there yet
    pair_.Compare(cut_, *rec, page, candidate);
    return true;
  }
  Status ReadVerifySample(DocId, std::span<const uint32_t>* sample, bool* known) override {
    pair_.VerifySample(sample, known);
    return OkStatus();
  }
  StatusOr<bool> InPagesCluster(DocId) override { return false; }
  // This backend keeps no "similar" links: nothing on it reads them (the queries and reports
  // estimate resemblance from the records, and a takedown recomputes a cluster by judging its
  // members again), and each would be memory a forgetting step must find again.
  Status Link(DocId, double) override { return OkStatus(); }
  Status Join(DocId id) override {
    batch_.unions_.emplace_back(nd_.doc, id);
    return OkStatus();
  }

 private:
  BatchApply& batch_;
  const NewDoc& nd_;
  const dedup::Sketch& cut_;
  RecordPair pair_;
};

StatusOr<bool> RedisClusterStore::BatchApply::ScoreCandidates(const NewDoc& nd,
                                                              const dedup::Sketch& cut,
                                                              PageResult* res) {
  JudgedPage judged(*this, nd, cut);
  return store::internal::JudgePageCandidates(cut, nd.candidates, nd.containment, s_.options_,
                                              s_.params_, judged, res);
}

StatusOr<std::vector<PageResult>> RedisClusterStore::Apply(std::span<const PageInput> pages) {
  std::lock_guard<std::mutex> lock(mu_);
  GateWriter writer(*gate_);
  SHINGLED_RETURN_IF_ERROR(writer.status());
  Status last;
  rounds_ = 0;
  for (int attempt = 0; attempt < kBatchAttempts; ++attempt) {
    race_ = false;
    StatusOr<std::vector<PageResult>> r = BatchApply(*this, pages).Run();
    if (r.ok() || !race_) {
      fail_at_round_ = 0;  // a simulated failure concerns one call
      return r;
    }
    last = r.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(5 << attempt));
  }
  fail_at_round_ = 0;
  return last;
}

Status RedisClusterStore::RoundWithCounts(std::vector<Command> cmds,
                                          std::map<UrlId, VersionList> fields) {
  std::map<SweepId, int64_t> starts;  // as opened, of the sweeps this daemon has seen open
  for (const auto& [id, rec] : sweeps_) starts[id] = rec.start;
  for (int attempt = 0;; ++attempt) {
    std::vector<UrlId> counted;
    for (const auto& [u, list] : fields) {
      VersionList next = list;
      StatusOr<std::vector<CountChange>> changes = CountRest(&next, &starts);
      if (!changes.ok()) return changes.status();
      if (changes->empty()) continue;
      cmds.push_back(ReplaceVersions(u, list, next, *changes));
      counted.push_back(u);
    }
    if (cmds.empty()) return OkStatus();
    auto r = RoundByMaster(cmds);
    if (!r.ok()) return r.status();
    std::vector<UrlId> changed;
    for (size_t j = 0; j < counted.size(); ++j) {
      if ((*r)[cmds.size() - counted.size() + j].integer < 0) changed.push_back(counted[j]);
    }
    if (changed.empty()) return OkStatus();
    if (attempt + 1 == kBatchAttempts) {
      return Race("the versions of a URL of the batch kept changing while they were counted");
    }
    cmds.clear();
    for (UrlId u : changed) cmds.push_back(ReadVersions(u));
    auto again = RoundByMaster(cmds);
    if (!again.ok()) return again.status();
    fields.clear();
    for (size_t j = 0; j < changed.size(); ++j) {
      StatusOr<VersionList> list = ReadVersionList((*again)[j]);
      if (!list.ok()) return list.status();
      fields.emplace(changed[j], std::move(*list));
    }
    cmds.clear();
  }
}

// One union with the cluster counters: sizes are kept as "members beyond the root" in the
// root's size bucket (a singleton has none).
Status RedisClusterStore::MergeAll(const std::vector<std::pair<DocId, DocId>>& unions) {
  std::vector<uint64_t> docs;
  for (const auto& [a, b] : unions) {
    docs.push_back(a);
    docs.push_back(b);
  }
  while (!docs.empty()) {
    StatusOr<std::vector<uint64_t>> roots = FindRoots(*client_, docs);
    if (!roots.ok()) return roots.status();
    // The merges as groups of roots: each group's other roots are linked under its smallest (a
    // small union-find over the roots, in memory, whose every root is its set's smallest id).
    std::map<uint64_t, uint64_t> up;
    std::function<uint64_t(uint64_t)> find = [&](uint64_t x) {
      auto it = up.find(x);
      if (it == up.end() || it->second == x) return x;
      return it->second = find(it->second);
    };
    for (size_t k = 0; k + 1 < roots->size(); k += 2) {
      const uint64_t ra = find((*roots)[k]), rb = find((*roots)[k + 1]);
      if (ra != rb) up[std::max(ra, rb)] = std::min(ra, rb);
    }
    std::vector<std::pair<uint64_t, uint64_t>> links;  // (hi, lo): hi under its group's smallest
    for (const auto& [x, parent] : up) {
      if (parent != x) links.emplace_back(x, find(x));
    }
    if (links.empty()) return OkStatus();
    // The sizes (members beyond the root) of every root involved, before the links.
    std::vector<uint64_t> involved;
    for (const auto& [hi, lo] : links) involved.insert(involved.end(), {hi, lo});
    std::sort(involved.begin(), involved.end());
    involved.erase(std::unique(involved.begin(), involved.end()), involved.end());
    std::vector<Command> cmds;
    for (uint64_t r : involved) cmds.push_back(Cmd({"HGET", SizeKey(r), Dec(r)}));
    auto sizes = RunByMaster(*client_, cmds);
    if (!sizes.ok()) return sizes.status();
    std::map<uint64_t, uint64_t> extra;
    for (size_t k = 0; k < involved.size(); ++k) {
      uint64_t e = 0;
      if (!(*sizes)[k].is_nil()) ParseU64((*sizes)[k].str, &e);
      extra[involved[k]] = e;
    }
    StatusOr<std::vector<bool>> made = LinkRoots(*client_, links);
    if (!made.ok()) return made.status();
    // The sizes and the counters of the links made, per group (a failure before them loses
    // these merges' counts: the links themselves are done). A group's clusters of two or more
    // become one.
    std::map<uint64_t, std::pair<uint64_t, int64_t>> groups;  // lo -> (moved, clusters before)
    bool all_made = true;
    for (size_t k = 0; k < links.size(); ++k) {
      const auto [hi, lo] = links[k];
      if (!(*made)[k]) {
        all_made = false;  // another daemon linked hi first: found again below
        continue;
      }
      auto [it, added] = groups.try_emplace(lo, 0, extra[lo] > 0 ? 1 : 0);
      it->second.first += 1 + extra[hi];
      it->second.second += extra[hi] > 0 ? 1 : 0;
    }
    cmds.clear();
    int64_t clusters = 0;
    for (const auto& [lo, g] : groups) {
      cmds.push_back(Cmd({"HINCRBY", SizeKey(lo), Dec(lo), Dec(g.first)}));
      cmds.push_back(
          Eval(kMaxScript, {kStatsKey}, {"largest_cluster", Dec(extra[lo] + 1 + g.first)}));
      clusters += 1 - g.second;
    }
    if (clusters != 0) {
      cmds.push_back(Cmd({"HINCRBY", kStatsKey, "clusters", std::to_string(clusters)}));
    }
    SHINGLED_RETURN_IF_ERROR(client_->Pipeline(cmds).status());
    if (all_made) return OkStatus();
  }
  return OkStatus();
}

// --- queries ---

StatusOr<ClusterClient*> RedisClusterStore::LookupClient() const {
  if (lookup_client_ == nullptr) {
    auto client = ClusterClient::Connect(ClusterOptionsFor(redis_));
    if (!client.ok()) return client.status();
    lookup_client_ = std::move(*client);
  }
  return lookup_client_.get();
}

StatusOr<store::DocumentInfo> RedisClusterStore::Document(DocId doc) const {
  // On the lookup client: the ingest asks it of every page whose bytes are stored already.
  std::lock_guard<std::mutex> lock(lookup_mu_);
  StatusOr<ClusterClient*> client = LookupClient();
  if (!client.ok()) return client.status();
  StatusOr<std::map<DocId, RedisDocument>> recs = ReadRecordsThrough(
      [client = *client](const std::vector<Command>& c) { return RunByMaster(*client, c); },
      {doc}, true, nullptr);
  if (!recs.ok()) return recs.status();
  auto it = recs->find(doc);
  if (it == recs->end()) return NotFoundError("document " + Dec(doc) + " not found");
  const RedisDocument& rec = it->second;
  const DocId holder = rec.rep != 0 ? rec.rep : doc;
  auto h = recs->find(holder);
  if (h == recs->end()) return DataLossError("redis: document " + Dec(holder) + " has no record");
  store::DocumentInfo info;
  info.id = doc;
  info.representative = holder;
  info.bytes = rec.bytes;
  info.tokens = rec.tokens;
  info.shingles = rec.shingles;
  info.first_seen = rec.first_seen;
  info.last_seen = rec.last_seen;
  info.sketch = SketchOfRecord(h->second);
  info.sketch.bytes = rec.bytes;
  info.sketch.tokens = rec.tokens;
  info.sketch.shingles = rec.shingles;
  info.sketch.identical = {rec.fingerprints[0], rec.fingerprints[1]};
  info.sketch.lexical = {rec.fingerprints[2], rec.fingerprints[3]};
  info.sketch.shingle = {rec.fingerprints[4], rec.fingerprints[5]};
  StatusOr<std::vector<uint64_t>> roots = FindRoots(**client, {doc});
  if (!roots.ok()) return roots.status();
  info.cluster = (*roots)[0];
  return info;
}

StatusOr<DocId> RedisClusterStore::FindIdentical(const dedup::Fingerprint128& fp) const {
  // On the lookup client: the ingest asks it of every page before sketching it.
  std::lock_guard<std::mutex> lock(lookup_mu_);
  StatusOr<ClusterClient*> client = LookupClient();
  if (!client.ok()) return client.status();
  const int bits = redis_.fingerprint_bits;
  auto r = (*client)->Run(Cmd({"HGET", FingerprintBucketKey(Relation::kIdentical, fp.high, bits),
                               FingerprintField(fp.high, fp.low, bits)}));
  if (!r.ok()) return r.status();
  StatusOr<IdenticalOwner> o = ParseOwner(*r);
  if (!o.ok()) return o.status();
  return o->pending_url != 0 ? DocId{0} : o->doc;  // a page still being applied: not yet there
}

StatusOr<std::vector<store::UrlVersion>> RedisClusterStore::History(std::string_view url) const {
  std::lock_guard<std::mutex> lock(mu_);
  StatusOr<UrlId> id = LookupUrl(url);
  if (!id.ok()) return id.status();
  auto reply = client_->Run(ReadVersions(*id));
  if (!reply.ok()) return reply.status();
  StatusOr<std::vector<std::string>> list = SplitVersions(*reply);
  if (!list.ok()) return list.status();
  std::vector<store::UrlVersion> out;
  uint32_t seq = 0;
  for (const std::string& e : *list) {
    StatusOr<VersionRecord> v = DecodeVersionEntry(e);
    if (!v.ok()) return v.status();
    store::UrlVersion uv;
    uv.seq = ++seq;
    uv.sweep = v->sweep;
    uv.date = v->date;
    uv.doc = v->doc;
    uv.http_status = static_cast<int>(v->http_status);
    uv.verdict = v->verdict;
    uv.canonical_link = v->canonical_link;
    uv.redirect_target = v->redirect_target;
    out.push_back(std::move(uv));
  }
  // A URL claimed for a revisit whose target turned out to have no document keeps its id and no
  // version (the claim comes before the batch's pass): never stored, as on LMDB.
  if (out.empty()) return NotFoundError("URL never stored: " + std::string(url));
  return out;
}

StatusOr<UrlId> RedisClusterStore::LookupUrl(std::string_view url) const {
  auto r = client_->Run(GetUrlClaim(url, redis_.fingerprint_bits));
  if (!r.ok()) return r.status();
  uint64_t id = 0;
  if (r->is_nil()) return NotFoundError("URL never stored: " + std::string(url));
  if (!ParseU64(r->str, &id))
    return DataLossError("redis: URL " + std::string(url) + " has a bad id");
  return id;
}

StatusOr<std::vector<UrlId>> RedisClusterStore::UrlsOf(DocId doc) const {
  auto r = client_->Pipeline({GetList(DocUrlsKey(doc), Dec(doc))});
  if (!r.ok()) return r.status();
  StatusOr<std::vector<uint64_t>> ids = ParsePostingList((*r)[0]);
  if (!ids.ok()) return ids.status();
  return *ids;
}

StatusOr<store::ClusterInfo> RedisClusterStore::ClusterOf(DocId any_member, DocId after,
                                                          size_t limit, uint64_t* size) const {
  StatusOr<std::map<DocId, RedisDocument>> one = ReadRecords({any_member}, false);
  if (!one.ok()) return one.status();
  if (!one->count(any_member)) {
    return NotFoundError("cluster " + Dec(any_member) + " not found (no such cluster or document)");
  }
  StatusOr<std::vector<uint64_t>> roots = FindRoots(*client_, {any_member});
  if (!roots.ok()) return roots.status();
  StatusOr<std::vector<uint64_t>> members = ClusterMembers(*client_, (*roots)[0]);
  if (!members.ok()) return members.status();
  *size = members->size();
  std::vector<DocId> page;
  for (DocId m : *members) {
    if (m > after && page.size() < limit) page.push_back(m);
  }
  StatusOr<std::map<DocId, RedisDocument>> recs = ReadRecords(page, false);
  if (!recs.ok()) return recs.status();
  std::vector<Command> url_cmds;
  for (DocId m : page) url_cmds.push_back(GetList(DocUrlsKey(m), Dec(m)));
  auto url_lists = client_->Pipeline(url_cmds);
  if (!url_lists.ok()) return url_lists.status();
  std::vector<std::vector<uint64_t>> ids(page.size());
  std::vector<Command> names;
  for (size_t j = 0; j < page.size(); ++j) {
    StatusOr<std::vector<uint64_t>> l = ParsePostingList((*url_lists)[j]);
    if (!l.ok()) return l.status();
    ids[j] = std::move(*l);
    std::sort(ids[j].begin(), ids[j].end());
    for (uint64_t u : ids[j]) names.push_back(Cmd({"HGET", UrlNameKey(u), Dec(u)}));
  }
  auto n = client_->Pipeline(names);
  if (!n.ok()) return n.status();
  store::ClusterInfo info;
  info.id = (*roots)[0];
  size_t k = 0;
  for (size_t j = 0; j < page.size(); ++j) {
    store::ClusterMember cm;
    cm.doc = page[j];
    if (auto it = recs->find(page[j]); it != recs->end()) {
      cm.first_seen = it->second.first_seen;
      cm.last_seen = it->second.last_seen;
    }
    for (size_t u = 0; u < ids[j].size(); ++u) cm.urls.push_back((*n)[k++].str);
    info.members.push_back(std::move(cm));
  }
  return info;
}

StatusOr<store::ClusterInfo> RedisClusterStore::Cluster(DocId any_member) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t size = 0;
  return ClusterOf(any_member, 0, SIZE_MAX, &size);
}

StatusOr<store::ClusterMembersPage> RedisClusterStore::ClusterPage(DocId any_member, DocId after,
                                                                   size_t limit) const {
  if (limit == 0) return InvalidArgumentError("ClusterPage: limit must be at least 1");
  std::lock_guard<std::mutex> lock(mu_);
  store::ClusterMembersPage out;
  StatusOr<store::ClusterInfo> info = ClusterOf(any_member, after, limit, &out.size);
  if (!info.ok()) return info.status();
  out.cluster = std::move(*info);
  if (out.cluster.members.size() == limit) {
    // More after the page's last member?
    uint64_t beyond = 0;
    StatusOr<store::ClusterInfo> rest =
        ClusterOf(any_member, out.cluster.members.back().doc, 1, &beyond);
    if (!rest.ok()) return rest.status();
    if (!rest->members.empty()) out.next = out.cluster.members.back().doc;
  }
  return out;
}

// The candidate search of the similarity queries (LMDB's FindQueryCandidates): the documents
// sharing usable sample values (`indexed`), and those sharing a feature when they are not
// enough; at most `max_candidates`, the best ranked (then `*truncated`), in id order.
Status RedisClusterStore::QueryCandidates(const dedup::Sketch& query_sketch,
                                          const std::vector<uint64_t>& indexed, DocId exclude,
                                          size_t max_candidates, std::vector<DocId>* out,
                                          bool* truncated, uint64_t* left_out,
                                          std::span<const DocId> reserved) const {
  std::vector<std::pair<DocId, uint32_t>> hits;
  // The sample values (indexed), a common value skipped.
  std::vector<Command> cmds;
  for (uint64_t v : indexed) {
    cmds.push_back(GetList(BucketKey(Relation::kSample, v, redis_.sample_bits),
                           ValueField(v, redis_.sample_bits)));
  }
  auto r = client_->Pipeline(cmds);
  if (!r.ok()) return r.status();
  size_t usable = 0;
  for (size_t j = 0; j < cmds.size(); ++j) {
    StatusOr<std::vector<uint64_t>> l = ParsePostingList((*r)[j]);
    if (!l.ok()) return l.status();
    if (l->size() > options_.common_value_limit) continue;
    ++usable;
    for (DocId d : *l) hits.emplace_back(d, 1);
  }
  if (store::internal::QueryReadsFeatures(usable, hits.size(), max_candidates)) {
    std::vector<Command> f;
    for (uint64_t v : query_sketch.features) {
      f.push_back(GetList(BucketKey(Relation::kFeature, v, redis_.feature_bits),
                          ValueField(v, redis_.feature_bits)));
    }
    auto fr = client_->Pipeline(f);
    if (!fr.ok()) return fr.status();
    const size_t cap = store::internal::FeatureReadCap(options_);
    for (size_t j = 0; j < f.size(); ++j) {
      StatusOr<std::vector<uint64_t>> l = ParsePostingList((*fr)[j]);
      if (!l.ok()) return l.status();
      if (l->size() > cap) l->resize(cap);
      for (DocId d : *l) hits.emplace_back(d, 4);
    }
  }
  store::internal::QueryCandidatesOf(&hits, exclude, reserved, max_candidates, out, truncated,
                                     left_out);
  return OkStatus();
}

namespace {

// A query's candidate records as the shared scoring reads them: each compared with the query's
// cut sketch masked to the bits both keep.
class QueryRecords final : public store::internal::CandidateRecords {
 public:
  QueryRecords(const dedup::Sketch& query, const std::map<DocId, RedisDocument>& records)
      : query_(query), records_(records) {}

  StatusOr<bool> Read(DocId id, const dedup::Sketch** query,
                      const dedup::Sketch** candidate) override {
    const auto it = records_.find(id);
    if (it == records_.end()) return false;
    pair_.Compare(query_, it->second, query, candidate);
    return true;
  }
  Status ReadVerifySample(DocId, std::span<const uint32_t>* sample, bool* known) override {
    pair_.VerifySample(sample, known);
    return OkStatus();
  }

 private:
  const dedup::Sketch& query_;
  const std::map<DocId, RedisDocument>& records_;
  RecordPair pair_;
};

}  // namespace

// The similarity queries: LMDB's FindQueryCandidates and SimilarIn on the Redis records.
StatusOr<std::vector<store::SimilarDoc>> RedisClusterStore::SimilarIn(
    const dedup::Sketch& query_sketch, bool query_is_record, const std::vector<uint64_t>& indexed,
    std::span<const dedup::Chunk> chunks, DocId exclude, const store::QueryOptions& query) const {
  std::vector<store::SimilarDoc> out;
  if (query_sketch.empty()) return out;
  const dedup::Sketch sketch = query_is_record ? query_sketch : Cut(query_sketch);
  // The containment candidates, found through the chunks, have their room first.
  std::vector<store::internal::ContainmentCandidate> containment;
  SHINGLED_RETURN_IF_ERROR(QueryContainment(chunks, exclude, &containment));
  std::vector<DocId> reserved;
  for (const auto& c : containment) reserved.push_back(c.doc);
  std::vector<DocId> docs;
  bool truncated = false;
  SHINGLED_RETURN_IF_ERROR(QueryCandidates(query_sketch, indexed, exclude, options_.max_candidates,
                                           &docs, &truncated, query.candidates_left_out, reserved));
  docs.insert(docs.end(), reserved.begin(), reserved.end());
  std::sort(docs.begin(), docs.end());
  StatusOr<std::map<DocId, RedisDocument>> recs = ReadRecords(docs, false);
  if (!recs.ok()) return recs.status();
  QueryRecords reads(sketch, *recs);
  StatusOr<std::vector<store::SimilarDoc>> scored =
      store::internal::ScoreQueryCandidates(docs, containment, query, params_, reads);
  if (!scored.ok()) return scored.status();
  out = std::move(*scored);
  // Each result's bytes in common with the query.
  SHINGLED_RETURN_IF_ERROR(QueryCommon(exclude, chunks, &out));
  // Each result's cluster, and the URL that most recently showed it (the smallest url id on
  // equal dates).
  std::vector<DocId> ids;
  for (const store::SimilarDoc& s : out) ids.push_back(s.doc);
  if (ids.empty()) return out;
  StatusOr<std::vector<uint64_t>> roots = FindRoots(*client_, ids);
  if (!roots.ok()) return roots.status();
  for (size_t j = 0; j < out.size(); ++j) out[j].cluster = (*roots)[j];
  for (store::SimilarDoc& s : out) {
    StatusOr<std::vector<UrlId>> urls = UrlsOf(s.doc);
    if (!urls.ok()) return urls.status();
    std::sort(urls->begin(), urls->end());
    std::vector<Command> last;
    for (UrlId u : *urls) last.push_back(ReadVersions(u));
    auto lr = client_->Pipeline(last);
    if (!lr.ok()) return lr.status();
    int64_t best_date = INT64_MIN;
    UrlId best = 0;
    for (size_t j = 0; j < urls->size(); ++j) {
      StatusOr<std::vector<std::string>> list = SplitVersions((*lr)[j]);
      if (!list.ok()) return list.status();
      if (list->empty()) continue;
      StatusOr<VersionRecord> v = DecodeVersionEntry(list->back());
      if (!v.ok()) return v.status();
      if (v->doc == s.doc && v->date > best_date) {
        best_date = v->date;
        best = (*urls)[j];
      }
    }
    if (best != 0) {
      auto name = client_->Run(Cmd({"HGET", UrlNameKey(best), Dec(best)}));
      if (!name.ok()) return name.status();
      s.url = name->str;
    }
  }
  return out;
}

StatusOr<dedup::Sketch> RedisClusterStore::QuerySketch(DocId doc,
                                                       std::vector<uint64_t>* indexed) const {
  StatusOr<std::map<DocId, RedisDocument>> recs = ReadRecords({doc}, true);
  if (!recs.ok()) return recs.status();
  auto it = recs->find(doc);
  if (it == recs->end()) return NotFoundError("document " + Dec(doc) + " not found");
  const DocId holder = it->second.rep != 0 ? it->second.rep : doc;
  auto h = recs->find(holder);
  if (h == recs->end()) return DataLossError("redis: document " + Dec(holder) + " has no record");
  *indexed = IndexedValuesOf(h->second);
  return SketchOfRecord(h->second);
}

StatusOr<std::vector<store::SimilarDoc>> RedisClusterStore::SimilarToDocument(
    DocId doc, const store::QueryOptions& query) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint64_t> indexed;
  StatusOr<dedup::Sketch> sketch = QuerySketch(doc, &indexed);
  if (!sketch.ok()) return sketch.status();
  std::vector<dedup::Chunk> chunks;
  SHINGLED_RETURN_IF_ERROR(ChunksOfDocument(doc, &chunks));
  return SimilarIn(*sketch, true, indexed, chunks, doc, query);
}

StatusOr<std::vector<store::SimilarDoc>> RedisClusterStore::SimilarToUrl(
    std::string_view url, const store::QueryOptions& query) const {
  std::lock_guard<std::mutex> lock(mu_);
  StatusOr<UrlId> id = LookupUrl(url);
  if (!id.ok()) return id.status();
  auto reply = client_->Run(ReadVersions(*id));
  if (!reply.ok()) return reply.status();
  StatusOr<std::vector<std::string>> list = SplitVersions(*reply);
  if (!list.ok()) return list.status();
  DocId doc = 0;
  for (auto it = list->rbegin(); it != list->rend() && doc == 0; ++it) {
    StatusOr<VersionRecord> v = DecodeVersionEntry(*it);
    if (!v.ok()) return v.status();
    doc = v->doc;
  }
  if (doc == 0) return NotFoundError("URL never had a document: " + std::string(url));
  std::vector<uint64_t> indexed;
  StatusOr<dedup::Sketch> sketch = QuerySketch(doc, &indexed);
  if (!sketch.ok()) return sketch.status();
  std::vector<dedup::Chunk> chunks;
  SHINGLED_RETURN_IF_ERROR(ChunksOfDocument(doc, &chunks));
  return SimilarIn(*sketch, true, indexed, chunks, doc, query);
}

StatusOr<std::vector<store::SimilarDoc>> RedisClusterStore::SimilarToSketch(
    const dedup::Sketch& sketch, const store::QueryOptions& query) const {
  if (!sketch.empty() && (sketch.minhashes.size() != static_cast<size_t>(params_.num_minhashes()) ||
                          sketch.features.size() != static_cast<size_t>(params_.feature_groups))) {
    return InvalidArgumentError("sketch was not made with this store's params");
  }
  std::vector<uint64_t> indexed;
  for (uint64_t v : sketch.sample.values) {
    if (store::internal::IndexedSampleValue(v, sketch.sample.log2_modulus)) indexed.push_back(v);
  }
  std::lock_guard<std::mutex> lock(mu_);
  return SimilarIn(sketch, false, indexed, sketch.chunks, 0, query);
}

StatusOr<store::StoreStats> RedisClusterStore::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  auto r = client_->Run(Cmd({"HGETALL", kStatsKey}));
  if (!r.ok()) return r.status();
  store::StoreStats s;
  for (size_t i = 0; i + 1 < r->elements.size(); i += 2) {
    const std::string& f = r->elements[i].str;
    int64_t v = 0;
    if (!ParseI64(r->elements[i + 1].str, &v)) continue;
    if (f == "clusters") s.clusters = static_cast<uint64_t>(v);
    if (f == "largest_cluster") s.largest_cluster = static_cast<uint64_t>(v);
  }
  StatusOr<ShardTotals> totals = ReadShards();
  if (!totals.ok()) return totals.status();
  s.documents = totals->documents;
  s.urls = totals->urls;
  s.versions = totals->versions;
  return s;
}

// Check: every document record up to the id counter, and every identical claim bucket.
// The check of the whole cluster (Check): every record, claim, URL and version read, one method a
// family of invariants.
class RedisClusterStore::Checker {
 public:
  explicit Checker(const RedisClusterStore& s)
      : s_(s), client_(*s.client_), bits_(s.redis_.fingerprint_bits) {}

  StatusOr<std::vector<std::string>> Run() {
    StatusOr<std::string> fence = s_.gate_->Fence();
    if (!fence.ok()) return fence.status();
    if (!fence->empty()) {
      Problem("a takedown (" + *fence + ") was cut short: run it again to complete it (what " +
              "it removed in part is named below)");
    }
    SHINGLED_RETURN_IF_ERROR(ReadRecords());
    SHINGLED_RETURN_IF_ERROR(CheckIdenticalClaims());
    CheckClaimedRecords();
    SHINGLED_RETURN_IF_ERROR(CheckSharers());
    SHINGLED_RETURN_IF_ERROR(CheckOwnClaims());
    SHINGLED_RETURN_IF_ERROR(ReadUrlNames());
    SHINGLED_RETURN_IF_ERROR(CheckUrlsAndVersions());
    SHINGLED_RETURN_IF_ERROR(CheckDocumentUrls());
    SHINGLED_RETURN_IF_ERROR(CheckCounts());
    SHINGLED_RETURN_IF_ERROR(CheckRoots());
    // The chunk records and the template marks (redis/backend_chunks.cc).
    SHINGLED_RETURN_IF_ERROR(s_.CheckChunks([&](DocId doc) { return recs_.count(doc) > 0; },
                                            [&](std::string p) { Problem(std::move(p)); }));
    return std::move(problems_);
  }

 private:
  void Problem(std::string p) {
    if (problems_.size() < 1000) problems_.push_back(std::move(p));
  }

  // The value of counter `key` (0 when absent).
  StatusOr<uint64_t> Counter(const char* key) {
    auto got = client_.Run(Cmd({"GET", key}));
    if (!got.ok()) return got.status();
    uint64_t n = 0;
    if (!got->is_nil()) ParseU64(got->str, &n);
    return n;
  }

  // Every record, a bucket (16 ids) at a time.
  Status ReadRecords() {
    StatusOr<uint64_t> last = Counter(kNextDoc);
    if (!last.ok()) return last.status();
    std::vector<Command> cmds;
    for (uint64_t b = 0; b <= (*last >> 4); ++b) cmds.push_back(Cmd({"HGETALL", DocKey(b << 4)}));
    auto r = client_.Pipeline(cmds);
    if (!r.ok()) return r.status();
    for (const Reply& bucket : *r) {
      for (size_t i = 0; i + 1 < bucket.elements.size(); i += 2) {
        uint64_t id = 0;
        if (!ParseU64(bucket.elements[i].str, &id)) {
          Problem("a document bucket has the field \"" + bucket.elements[i].str + "\"");
          continue;
        }
        StatusOr<RedisDocument> d = DecodeRedisDocument(bucket.elements[i + 1].str);
        if (!d.ok()) {
          Problem("document " + Dec(id) + ": " + d.status().message());
          continue;
        }
        recs_.emplace(id, std::move(*d));
      }
    }
    return OkStatus();
  }

  // Every identical claim, in every bucket of the fingerprint bits: complete, and of a record.
  Status CheckIdenticalClaims() {
    const uint64_t buckets = uint64_t{1} << bits_;
    for (uint64_t b0 = 0; b0 < buckets; b0 += 4096) {
      std::vector<Command> c;
      for (uint64_t b = b0; b < std::min(buckets, b0 + 4096); ++b) {
        c.push_back(
            Cmd({"HGETALL", FingerprintBucketKey(Relation::kIdentical, b << (64 - bits_), bits_)}));
      }
      auto got = client_.Pipeline(c);
      if (!got.ok()) return got.status();
      for (const Reply& bucket : *got) {
        for (size_t i = 0; i + 1 < bucket.elements.size(); i += 2) {
          Reply v;
          v.type = Reply::Type::kString;
          v.str = bucket.elements[i + 1].str;
          StatusOr<IdenticalOwner> o = ParseOwner(v);
          if (!o.ok()) {
            Problem(o.status().message());
            continue;
          }
          if (o->pending_url != 0) {
            Problem("document " + Dec(o->doc) + " was claimed by a page of URL id " +
                    Dec(o->pending_url) + " that never completed (retry the page)");
          }
          if (!recs_.count(o->doc)) Problem("claim without record: document " + Dec(o->doc));
          claimed_[o->doc] = o->pending_url;
        }
      }
    }
    return OkStatus();
  }

  // Each record claimed, and its representative a record.
  void CheckClaimedRecords() {
    for (const auto& [id, d] : recs_) {
      if (!claimed_.count(id)) Problem("record without claim: document " + Dec(id));
      if (d.rep != 0 && !recs_.count(d.rep)) {
        Problem("document " + Dec(id) + " has representative " + Dec(d.rep) +
                ", which has no record");
      }
    }
  }

  // Each document naming a representative is listed among the representative's sharers.
  Status CheckSharers() {
    std::vector<Command> c;
    std::vector<std::pair<DocId, DocId>> named;  // (document, its representative)
    for (const auto& [id, d] : recs_) {
      if (d.rep == 0) continue;
      c.push_back(GetList(SharersKey(d.rep), Dec(d.rep)));
      named.emplace_back(id, d.rep);
    }
    auto got = client_.Pipeline(c);
    if (!got.ok()) return got.status();
    for (size_t i = 0; i < named.size(); ++i) {
      const auto [doc, rep] = named[i];
      StatusOr<std::vector<uint64_t>> list = ParsePostingList((*got)[i]);
      if (!list.ok()) {
        Problem("the sharers of document " + Dec(rep) + ": " + list.status().message());
      } else if (std::find(list->begin(), list->end(), doc) == list->end()) {
        Problem("document " + Dec(doc) + " names representative " + Dec(rep) +
                " but is not among its sharers");
      }
    }
    return OkStatus();
  }

  // Each record's own claims name it: identical always, lexical and shingle when it owns them.
  Status CheckOwnClaims() {
    std::vector<Command> c;
    std::vector<std::pair<DocId, const char*>> what;
    for (const auto& [id, d] : recs_) {
      const std::pair<Relation, const char*> kinds[] = {{Relation::kIdentical, "identical"},
                                                        {Relation::kLexical, "lexical"},
                                                        {Relation::kShingle, "shingle"}};
      for (int k = 0; k < 3; ++k) {
        if ((k == 1 && !d.owns_lexical) || (k == 2 && !d.owns_shingle)) continue;
        const uint64_t high = d.fingerprints[2 * k], low = d.fingerprints[2 * k + 1];
        c.push_back(Cmd({"HGET", FingerprintBucketKey(kinds[k].first, high, bits_),
                         FingerprintField(high, low, bits_)}));
        what.emplace_back(id, kinds[k].second);
      }
    }
    auto got = client_.Pipeline(c);
    if (!got.ok()) return got.status();
    for (size_t j = 0; j < what.size(); ++j) {
      StatusOr<IdenticalOwner> o = ParseOwner((*got)[j]);
      if (!o.ok() || o->doc != what[j].first) {
        Problem(std::string("document ")
                    .append(Dec(what[j].first))
                    .append(": its ")
                    .append(what[j].second)
                    .append(" claim names ")
                    .append(o.ok() ? Dec(o->doc) : o.status().message()));
      }
    }
    return OkStatus();
  }

  // Every URL's name, by id.
  Status ReadUrlNames() {
    StatusOr<uint64_t> last = Counter(kNextUrl);
    if (!last.ok()) return last.status();
    std::vector<Command> c;
    for (uint64_t b = 0; b <= (*last >> 4); ++b) c.push_back(Cmd({"HGETALL", UrlNameKey(b << 4)}));
    auto names = client_.Pipeline(c);
    if (!names.ok()) return names.status();
    for (const Reply& bucket : *names) {
      for (size_t i = 0; i + 1 < bucket.elements.size(); i += 2) {
        uint64_t id = 0;
        if (!ParseU64(bucket.elements[i].str, &id)) {
          Problem("a URL name bucket has the field \"" + bucket.elements[i].str + "\"");
          continue;
        }
        urls_.emplace_back(id, bucket.elements[i + 1].str);
      }
    }
    return OkStatus();
  }

  // Each URL's name claimed under its id, and each version's document a record.
  Status CheckUrlsAndVersions() {
    std::vector<Command> c;
    for (const auto& [id, name] : urls_) {
      c.push_back(GetUrlClaim(name, bits_));
      c.push_back(ReadVersions(id));
    }
    auto got = client_.Pipeline(c);
    if (!got.ok()) return got.status();
    for (size_t j = 0; j < urls_.size(); ++j) {
      const auto& [id, name] = urls_[j];
      uint64_t claimed_id = 0;
      if (!ParseU64((*got)[2 * j].str, &claimed_id) || claimed_id != id) {
        Problem("URL " + name + " (id " + Dec(id) + ") is claimed by id " + (*got)[2 * j].str);
      }
      StatusOr<std::vector<std::string>> entries = SplitVersions((*got)[2 * j + 1]);
      if (!entries.ok()) {
        Problem("URL " + name + ": " + entries.status().message());
        continue;
      }
      for (const std::string& e : *entries) {
        StatusOr<VersionRecord> v = DecodeVersionEntry(e);
        if (!v.ok()) {
          Problem("URL " + name + ": " + v.status().message());
          continue;
        }
        ++versions_;
        if (v->doc == 0) continue;
        if (!recs_.count(v->doc)) {
          Problem("URL " + name + " has a version of document " + Dec(v->doc) +
                  ", which has no record");
        }
        doc_urls_.emplace_back(v->doc, id);
      }
    }
    std::sort(doc_urls_.begin(), doc_urls_.end());
    doc_urls_.erase(std::unique(doc_urls_.begin(), doc_urls_.end()), doc_urls_.end());
    return OkStatus();
  }

  // Each document lists the URLs that have a version of it.
  Status CheckDocumentUrls() {
    std::vector<Command> c;
    std::vector<DocId> docs;
    for (const auto& [doc, url] : doc_urls_) {
      if (docs.empty() || docs.back() != doc) {
        docs.push_back(doc);
        c.push_back(GetList(DocUrlsKey(doc), Dec(doc)));
      }
    }
    auto lists = client_.Pipeline(c);
    if (!lists.ok()) return lists.status();
    std::map<DocId, std::set<uint64_t>> listed;
    for (size_t j = 0; j < docs.size(); ++j) {
      StatusOr<std::vector<uint64_t>> l = ParsePostingList((*lists)[j]);
      if (!l.ok()) return l.status();
      listed[docs[j]].insert(l->begin(), l->end());
    }
    for (const auto& [doc, url] : doc_urls_) {
      if (!listed[doc].count(url)) {
        Problem("document " + Dec(doc) + " does not list URL id " + Dec(url) +
                ", which has a version of it");
      }
    }
    return OkStatus();
  }

  // The shards' counts against what was read: the complete documents, the URLs, the versions.
  Status CheckCounts() {
    uint64_t complete = 0;
    for (const auto& [id, pending_url] : claimed_) {
      if (pending_url == 0 && recs_.count(id)) ++complete;
    }
    StatusOr<ShardTotals> totals = s_.ReadShards();
    if (!totals.ok()) return totals.status();
    for (const auto& [name, counted, have] :
         {std::tuple<const char*, uint64_t, uint64_t>{"documents", totals->documents, complete},
          {"urls", totals->urls, urls_.size()},
          {"versions", totals->versions, versions_}}) {
      if (counted != have) {
        Problem("the counts say " + Dec(counted) + " " + name + ", but there are " + Dec(have));
      }
    }
    return OkStatus();
  }

  // Each document's root reaches a document.
  Status CheckRoots() {
    std::vector<DocId> ids;
    for (const auto& [id, d] : recs_) ids.push_back(id);
    if (ids.empty()) return OkStatus();
    StatusOr<std::vector<uint64_t>> roots = FindRoots(client_, ids);
    if (!roots.ok()) return roots.status();
    for (DocId root : std::set<DocId>(roots->begin(), roots->end())) {
      if (!recs_.count(root)) Problem("cluster root " + Dec(root) + " has no record");
    }
    return OkStatus();
  }

  const RedisClusterStore& s_;
  ClusterClient& client_;
  const int bits_;
  std::vector<std::string> problems_;
  std::map<DocId, RedisDocument> recs_;
  std::map<DocId, uint64_t> claimed_;  // a claimed document -> the URL id of its pending page
  std::vector<std::pair<UrlId, std::string>> urls_;
  uint64_t versions_ = 0;
  std::vector<std::pair<DocId, UrlId>> doc_urls_;  // (document, URL id) of each version, distinct
};

StatusOr<std::vector<std::string>> RedisClusterStore::Check() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Checker(*this).Run();
}

// Nothing stops this backend's writes for good (store.h: health() is the error that did): a batch
// that failed (a node down, a failover) failed alone, retryably, and the next one may succeed.
// So a daemon on the cluster stays ready through a node's restart.
Status RedisClusterStore::health() const { return OkStatus(); }

Status RedisClusterStore::WriteRoom() const { return OkStatus(); }
const store::StoreOptions& RedisClusterStore::options() const { return options_; }
const dedup::SketchParams& RedisClusterStore::params() const { return params_; }

namespace forgetting {
std::string SharersKeyOf(DocId holder) { return SharersKey(holder); }
Command GetSharers(DocId holder) { return GetList(SharersKey(holder), Dec(holder)); }
std::string LinksKeyOf(DocId doc) { return LinksKey(doc); }
Command AddToList(std::string bucket, std::string field, std::string item) {
  return redis::AddToList(std::move(bucket), std::move(field), std::move(item));
}
Command RemoveFromList(std::string bucket, std::string field, std::string item) {
  std::string overflow = bucket + field;
  return Eval(kRemoveFromListScript, {std::move(bucket), std::move(overflow)},
              {std::move(field), std::move(item)});
}
std::vector<Command> DeleteList(const std::string& bucket, const std::string& field) {
  return {Cmd({"HDEL", bucket, field}), Cmd({"DEL", bucket + field})};
}
Command DeleteUrlClaim(std::string_view url, int bits) {
  UrlClaimKey k = UrlClaim(url, bits);
  return Cmd({"HDEL", std::move(k.bucket), std::move(k.field)});
}
std::vector<uint64_t> IndexedValues(const RedisDocument& rec) { return IndexedValuesOf(rec); }
const char* const kStats = kStatsKey;
const char* const kForgets = "forgets";
const char* const kNextForget = "next:forget";
}  // namespace forgetting

// --- for the walks (redis/backend_walks.cc: KnownUrls, CloseSweep, ReopenSweep) ---

namespace walks {
Command ReadVersionsOf(UrlId url) { return ReadVersions(url); }
StatusOr<std::vector<std::string>> SplitVersionsOf(const Reply& r) { return SplitVersions(r); }
StatusOr<VersionList> ReadVersionListOf(const Reply& r) { return ReadVersionList(r); }
std::string UrlNameKeyOf(UrlId url) { return UrlNameKey(url); }
const char* const kSweeps = kSweepsKey;
const char* const kUrlCounter = kNextUrl;
}  // namespace walks

// --- for the listings (redis/backend_listings.cc) ---

namespace listings {
std::string DocKeyOf(DocId doc) { return DocKey(doc); }
Command GetDocUrls(DocId doc) { return GetList(DocUrlsKey(doc), Dec(doc)); }
std::string SizeKeyOf(DocId root) { return SizeKey(root); }
const char* const kDocCounter = kNextDoc;
}  // namespace listings

// --- for the reports and lost and found (redis/backend_reports.cc) ---

namespace reports {
dedup::Sketch SketchOfRecordOf(const RedisDocument& rec) { return SketchOfRecord(rec); }
void MaskSamples(dedup::ModSample* a, dedup::ModSample* b) { MaskPair(a, b); }
}  // namespace reports

// --- for the chunks (redis/backend_chunks.cc) ---

namespace chunks {
std::string IdBucketOf(char letter, uint64_t id, int shift) { return IdBucket(letter, id, shift); }
std::string DocUrlsKeyOf(DocId doc) { return DocUrlsKey(doc); }
}  // namespace chunks

// ------------------------------------------------------------------------------------------------

namespace {

}  // namespace

Status RedisClusterStore::CanWrite() const {
  std::lock_guard<std::mutex> lock(probe_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (probed_at_ && now - *probed_at_ < kProbeEvery) return probe_status_;
  probed_at_ = now;
  if (probe_client_ == nullptr) {
    auto client = ClusterClient::Connect(ClusterOptionsFor(redis_));
    if (!client.ok()) return probe_status_ = client.status();
    probe_client_ = std::move(*client);
  }
  probe_status_ = probe_client_->CheckReplicas(redis_.min_replicas);
  // A failover changes the masters: read the slot map again and ask the masters it names now.
  if (!probe_status_.ok() && probe_client_->RefreshSlots().ok()) {
    probe_status_ = probe_client_->CheckReplicas(redis_.min_replicas);
  }
  return probe_status_;
}

StatusOr<std::unique_ptr<store::Store>> OpenRedisClusterStore(const RedisStoreOptions& redis,
                                                              const store::StoreOptions& options,
                                                              const dedup::SketchContext& context) {
  // The same options as LMDB takes (store.h: every backend's Open calls it), before connecting.
  SHINGLED_RETURN_IF_ERROR(store::ValidateStoreOptions(options));
  if (redis.connect_timeout_ms <= 0 || redis.command_timeout_ms <= 0 ||
      redis.wait_timeout_ms <= 0) {
    return InvalidArgumentError("redis: timeouts must be positive");
  }
  StatusOr<std::unique_ptr<ClusterClient>> client = ClusterClient::Connect(ClusterOptionsFor(redis));
  if (!client.ok()) return client.status();
  auto s = std::unique_ptr<RedisClusterStore>(
      new RedisClusterStore(std::move(*client), redis, options, context.params()));
  SHINGLED_RETURN_IF_ERROR(s->Open(context));
  return std::unique_ptr<store::Store>(std::move(s));
}

}  // namespace shingled::redis
