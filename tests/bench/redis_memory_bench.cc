// Memory per document of the Redis key layout (docs/REDIS.md; issue 36): starts a 3-master Redis
// Cluster on loopback (tests/redis/redis_cluster.h), writes the postings and fingerprint claims
// of N synthetic documents through redis::ClusterClient, and reads `INFO memory` (used_memory,
// summed over the masters, minus the empty cluster's) for each layout:
//   packed          the postings packed into hash buckets (redis/layout.h), the fingerprints
//                   claimed with HSETNX in buckets of their own;
//   key per value   a string key per hash value (APPEND of ",doc") and per fingerprint (SET NX);
//   packed + record the packed layout and each document's record as a string key "d:<id>"
//                   (the bytes of store/internal/codec.h's EncodeDocument, ~1.6 KB), then also
//                   its verification sample (4 bytes a value, k = 256) under "v:<id>".
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

#include "redis/cluster_client.h"
#include "redis/layout.h"
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

struct Bits {
  int feature, super, sample, fingerprint;
};

void Run(ClusterClient& client, uint64_t docs, Layout layout, bool records, bool verify,
         const Bits& bits, const std::string& label) {
  auto flushed = client.RunOnMasters({"FLUSHALL"});
  if (!flushed.ok()) Die(flushed.status());
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
    if (records) {
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
      batch.push_back(Command{
          .args = {"SET", "d:" + std::to_string(doc), store::internal::EncodeDocument(rec)}});
    }
    if (verify) {
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
  std::printf("%-34s %8.1f bytes/doc  %9lld keys  %5.1f postings/doc\n", label.c_str(),
              static_cast<double>(after - before) / static_cast<double>(docs), keys,
              static_cast<double>(postings) / static_cast<double>(docs));
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
  if (Status s = cluster.Start({.masters = 3}); !s.ok()) Die(s);
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
  Run(**client, docs, Layout::kPacked, false, false, bits, "packed");
  Run(**client, docs, Layout::kKeyPerValue, false, false, bits, "key per value");
  Run(**client, docs, Layout::kPacked, true, false, bits, "packed + record");
  Run(**client, docs, Layout::kPacked, true, true, bits, "packed + record + verify sample");
  return 0;
}
