// Memory per document of the Redis key layout (docs/REDIS.md): starts a 3-master Redis
// Cluster on loopback (tests/redis/redis_cluster.h), writes the postings and fingerprint claims
// of N synthetic documents through redis::ClusterClient, and reads `INFO memory` (used_memory,
// summed over the masters, minus the empty cluster's) for each layout:
//   packed          the postings packed into hash buckets (redis/layout.h), the fingerprints
//                   claimed with HSETNX in buckets of their own;
//   key per value   a string key per hash value (APPEND of ",doc") and per fingerprint (SET NX);
//   packed + record the packed layout and each document's record as a string key "d:<id>"
//                   (the bytes of store/internal/codec.h's EncodeDocument, ~1.6 KB), then also
//                   its verification sample (4 bytes a value, k = 256) under "v:<id>";
//   packed + redis record  the record of redis/record.h (32-bit minhashes and MOD sample, no
//                   super shingles), without and with the verification sample (delta-coded in
//                   the record), as a string key "d:<id>", or packed 16 to a hash bucket
//                   "{D<id / 16 in hex>}" (hash-max-listpack-value raised to 2048 for that run, so
//                   that the bucket stays a listpack).
// The documents are tests/store/synthetic.h's pages of 200 shingles in families of 4
// near-copies (resemblance ~0.9), as store_bench's: the default relations' postings, 6 features,
// ~22 super shingles and a quarter of the MOD sample (~19) each, shared within a family. With
// `unrelated`, every page is a family of its own: no value is shared, the most a posting costs.
//
//   build-dev/tests/bench/redis_memory_bench [DOCUMENTS (100000)] [families|unrelated]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "redis/backend_store.h"
#include "redis/cluster_client.h"
#include "redis/layout.h"
#include "redis/record.h"
#include "store/internal/codec.h"
#include "tests/redis/redis_cluster.h"
#include "tests/store/synthetic.h"

namespace shingled {
namespace {

using redis::ClusterClient;
using redis::Command;
using redis::Relation;

constexpr uint64_t kMaxDocuments = 10'000'000;
constexpr int kDocsPerPipeline = 1000;
// Entries per bucket at the end of the run that the bucket bits aim at: under
// hash-max-listpack-entries (128 by default) with room for twice the documents.
constexpr double kEntriesPerBucket = 48;

bool g_unrelated = false;  // set once by main, before any page is made

dedup::Sketch Page(uint64_t j) {
  const uint64_t family = g_unrelated ? j : j / 4;
  return store::testing::SyntheticSketch(
      dedup::SketchParams{}, store::testing::Variant(family * 1000, 200, 190, (j + 1) << 20));
}

std::vector<uint64_t> IndexedSample(const dedup::Sketch& s) {
  std::vector<uint64_t> out;
  store::internal::IndexedSample(s.sample.values, s.sample.log2_modulus, &out);
  return out;
}

// Bucket bits for a relation with `per_doc` entries per document over `docs` documents.
int BucketBits(uint64_t docs, double per_doc) {
  const int bits = static_cast<int>(std::lround(std::log2(docs * per_doc / kEntriesPerBucket)));
  return std::clamp(bits, redis::kMinBucketBits, redis::kMaxBucketBits);
}

std::string Be64(uint64_t v) {
  std::string out;
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

void Die(const Status& s) {
  std::cerr << "redis_memory_bench: " << s.ToString() << "\n";
  std::exit(1);
}

long long UsedMemory(ClusterClient& client, long long* keys) {
  auto info = client.RunOnMasters({"INFO", "memory"});
  if (!info.ok()) Die(info.status());
  long long total = 0;
  for (const auto& [node, reply] : *info) {
    const size_t at = reply.str.find("used_memory:");
    total += std::atoll(reply.str.c_str() + at + 12);
  }
  auto sizes = client.RunOnMasters({"DBSIZE"});
  if (!sizes.ok()) Die(sizes.status());
  *keys = 0;
  for (const auto& [node, reply] : *sizes) *keys += reply.integer;
  return total;
}

enum class Layout { kPacked, kKeyPerValue };
// Which document record is written beside the postings.
enum class Record { kNone, kLmdb, kRedis, kRedisBuckets };

redis::RedisDocument RedisRecordOf(const dedup::Sketch& s, bool verify) {
  redis::RedisDocument d;
  d.bytes = s.bytes;
  d.tokens = s.tokens;
  d.shingles = s.shingles;
  const dedup::Fingerprint128 fps[] = {s.identical, s.lexical, s.shingle};
  for (int i = 0; i < 3; ++i) {
    d.fingerprints[2 * i] = fps[i].high;
    d.fingerprints[2 * i + 1] = fps[i].low;
  }
  for (const uint64_t m : s.minhashes) d.minhashes.push_back(redis::MinhashKey(m));
  d.features = s.features;
  d.log2_modulus = s.sample.log2_modulus;
  for (const uint64_t v : s.sample.values) {
    d.sample.push_back(redis::ModSampleKey(v, s.sample.log2_modulus));
  }
  std::sort(d.sample.begin(), d.sample.end());
  if (verify) d.verify_sample = s.verify_sample;
  return d;
}

std::string Hex(uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kHex[v & 15]);
    v >>= 4;
  } while (v != 0);
  return out;
}

struct Bits {
  int feature, super, sample, fingerprint;
};

// Content-defined chunks of page j on the cluster: 35 chunks of 486 bytes, the
// default chunking's figures on the benchmark corpus (docs/PERFORMANCE.md); a family's pages
// share all but 4 of them (near-copies at ~0.9), unrelated pages none.
std::vector<dedup::Chunk> ChunksOf(uint64_t j) {
  const uint64_t family = g_unrelated ? j : j / 4;
  std::vector<dedup::Chunk> out;
  for (uint64_t i = 0; i < 35; ++i) {
    const bool own = g_unrelated || i % 9 == j % 4;
    out.push_back({store::testing::Mix((own ? j << 32 : family << 8) ^ (i + 1) ^ 0xc4c4), 486});
  }
  return out;
}

void Run(ClusterClient& client, uint64_t docs, Layout layout, Record records, bool verify,
         const Bits& bits, const std::string& label, bool with_chunks = false) {
  auto flushed = client.RunOnMasters({"FLUSHALL"});
  if (!flushed.ok()) Die(flushed.status());
  const std::string listpack_value = records == Record::kRedisBuckets ? "2048" : "64";
  auto configured =
      client.RunOnMasters({"CONFIG", "SET", "hash-max-listpack-value", listpack_value});
  if (!configured.ok()) Die(configured.status());
  uint64_t record_bytes = 0;
  std::string add_sha;
  std::string get_sha;
  if (Status s = redis::LoadPostingScripts(client, &add_sha, &get_sha); !s.ok()) Die(s);
  long long keys = 0;
  const long long before = UsedMemory(client, &keys);
  uint64_t postings = 0;
  std::vector<Command> batch;
  for (uint64_t j = 0; j < docs; ++j) {
    const uint64_t doc = j + 1;
    const dedup::Sketch sketch = Page(j);
    const std::vector<uint64_t> sample = IndexedSample(sketch);
    const std::pair<Relation, const std::vector<uint64_t>*> lists[] = {
        {Relation::kFeature, &sketch.features},
        {Relation::kSuperShingle, &sketch.supershingles},
        {Relation::kSample, &sample}};
    for (const auto& [relation, values] : lists) {
      const int b = relation == Relation::kFeature        ? bits.feature
                    : relation == Relation::kSuperShingle ? bits.super
                                                          : bits.sample;
      for (const uint64_t v : *values) {
        ++postings;
        if (layout == Layout::kPacked) {
          batch.push_back(redis::AddPostingCommand(add_sha, relation, v, doc, b));
        } else {
          std::string key(1, static_cast<char>(relation));
          key.append(Be64(v));
          batch.push_back(Command{.args = {"APPEND", key, "," + std::to_string(doc)}});
        }
      }
    }
    const std::pair<Relation, dedup::Fingerprint128> fps[] = {
        {Relation::kIdentical, sketch.identical},
        {Relation::kLexical, sketch.lexical},
        {Relation::kShingle, sketch.shingle}};
    for (const auto& [relation, fp] : fps) {
      if (layout == Layout::kPacked) {
        batch.push_back(
            redis::ClaimFingerprintCommand(relation, fp.high, fp.low, doc, bits.fingerprint));
      } else {
        std::string key(1, static_cast<char>(relation));
        key.append(Be64(fp.high)).append(Be64(fp.low));
        batch.push_back(Command{.args = {"SET", key, std::to_string(doc), "NX"}});
      }
    }
    if (records == Record::kRedis || records == Record::kRedisBuckets) {
      std::string rec = redis::EncodeRedisDocument(RedisRecordOf(sketch, verify));
      record_bytes += rec.size();
      if (records == Record::kRedis) {
        batch.push_back(Command{.args = {"SET", "d:" + std::to_string(doc), std::move(rec)}});
      } else {
        batch.push_back(Command{
            .args = {"HSET", "{D" + Hex(doc >> 4) + "}", std::to_string(doc), std::move(rec)}});
      }
    }
    if (records == Record::kLmdb) {
      store::internal::DocumentRecord rec;
      rec.bytes = sketch.bytes;
      rec.tokens = sketch.tokens;
      rec.shingles = sketch.shingles;
      rec.identical = sketch.identical;
      rec.lexical = sketch.lexical;
      rec.shingle = sketch.shingle;
      rec.minhashes = sketch.minhashes;
      rec.features = sketch.features;
      rec.supershingles = sketch.supershingles;
      rec.sample = sketch.sample;
      std::string bytes = store::internal::EncodeDocument(rec);
      record_bytes += bytes.size();
      batch.push_back(Command{.args = {"SET", "d:" + std::to_string(doc), std::move(bytes)}});
    }
    if (with_chunks) {
      // As Apply files them (redis/backend_chunks.cc): the record in buckets of 16, a posting per
      // distinct chunk in the sample postings' bucket bits.
      const std::vector<dedup::Chunk> chunks = ChunksOf(j);
      batch.push_back(redis::chunks::PutRecord(doc, chunks, false));
      for (Command& c : redis::chunks::FilePostings(doc, chunks, bits.sample)) {
        batch.push_back(std::move(c));
      }
    }
    if (verify && records == Record::kLmdb) {
      std::string bytes;
      for (const uint32_t z : sketch.verify_sample)
        bytes.append(reinterpret_cast<const char*>(&z), 4);
      batch.push_back(Command{.args = {"SET", "v:" + std::to_string(doc), bytes}});
    }
    if (batch.size() >= kDocsPerPipeline * 50 || j + 1 == docs) {
      auto replies = client.Pipeline(batch);
      if (!replies.ok()) Die(replies.status());
      batch.clear();
    }
  }
  const long long after = UsedMemory(client, &keys);
  std::printf("%-44s %8.1f bytes/doc  %9lld keys  %5.1f postings/doc  %6.1f record bytes/doc\n",
              label.c_str(), static_cast<double>(after - before) / static_cast<double>(docs), keys,
              static_cast<double>(postings) / static_cast<double>(docs),
              static_cast<double>(record_bytes) / static_cast<double>(docs));
  std::fflush(stdout);
}

}  // namespace
}  // namespace shingled

int main(int argc, char** argv) {
  using namespace shingled;
  uint64_t docs = 100000;
  if (argc > 3) {
    std::cerr << "usage: redis_memory_bench [DOCUMENTS] [families|unrelated]\n";
    return 2;
  }
  if (argc == 3) {
    const std::string shape = argv[2];
    if (shape != "families" && shape != "unrelated") {
      std::cerr << "redis_memory_bench: the pages are \"families\" or \"unrelated\", not \""
                << shape << "\"\n";
      return 2;
    }
    g_unrelated = shape == "unrelated";
  }
  if (argc >= 2) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(argv[1], &end, 10);
    if (*argv[1] == '\0' || *end != '\0' || n < 1000 || n > kMaxDocuments) {
      std::cerr << "redis_memory_bench: DOCUMENTS must be a number in 1000.." << kMaxDocuments
                << ", not \"" << argv[1] << "\"\n";
      return 2;
    }
    docs = n;
  }
  std::string why;
  if (!redis::testing::RedisCluster::Available(&why)) {
    std::cerr << "redis_memory_bench: " << why << "\n";
    return 1;
  }
  redis::testing::RedisCluster cluster;
  // Memory does not depend on the append-only file; its fsyncs would only cost time.
  if (Status s = cluster.Start({.masters = 3, .durable = false}); !s.ok()) Die(s);
  redis::ClusterOptions options;
  options.seeds = cluster.seeds();
  options.password_file = cluster.password_file();
  options.command_timeout = std::chrono::seconds(60);
  auto client = redis::ClusterClient::Connect(options);
  if (!client.ok()) Die(client.status());

  // Entries per document of each relation, from the first 1,000 pages.
  double features = 0;
  double supers = 0;
  double samples = 0;
  for (uint64_t j = 0; j < 1000; ++j) {
    const dedup::Sketch s = Page(j);
    features += static_cast<double>(s.features.size()) / 1000;
    supers += static_cast<double>(s.supershingles.size()) / 1000;
    samples += static_cast<double>(IndexedSample(s).size()) / 1000;
  }
  const Bits bits{.feature = BucketBits(docs, features),
                  .super = BucketBits(docs, supers),
                  .sample = BucketBits(docs, samples),
                  .fingerprint = BucketBits(docs, 1)};
  std::printf(
      "%llu %s documents; per document %.1f features, %.1f super shingles, %.1f indexed "
      "sample values; bucket bits %d, %d, %d, fingerprints %d\n",
      static_cast<unsigned long long>(docs), g_unrelated ? "unrelated" : "family", features, supers,
      samples, bits.feature, bits.super, bits.sample, bits.fingerprint);
  Run(**client, docs, Layout::kPacked, Record::kNone, false, bits, "packed");
  Run(**client, docs, Layout::kKeyPerValue, Record::kNone, false, bits, "key per value");
  Run(**client, docs, Layout::kPacked, Record::kLmdb, false, bits, "packed + record");
  Run(**client, docs, Layout::kPacked, Record::kLmdb, true, bits,
      "packed + record + verify sample");
  Run(**client, docs, Layout::kPacked, Record::kRedis, false, bits, "packed + redis record");
  Run(**client, docs, Layout::kPacked, Record::kRedis, true, bits,
      "packed + redis record + verify sample");
  Run(**client, docs, Layout::kPacked, Record::kRedisBuckets, false, bits,
      "packed + redis record in buckets of 16");
  Run(**client, docs, Layout::kPacked, Record::kRedisBuckets, true, bits,
      "packed + redis record + verify, buckets of 16");
  Run(**client, docs, Layout::kPacked, Record::kRedisBuckets, false, bits,
      "packed + redis record, buckets + chunks", true);
  return 0;
}
