// The fixture of the Redis backend's tests: a 3-master cluster (cluster_fixture.h) set up for
// the document record buckets, the backend opened on it, an LMDB store beside it with the same
// params (chunking off in both), and a corpus of synthetic pages (tests/store/synthetic.h) in
// families of near-copies, exact copies, lexical and shingle equivalents, revisits, dead,
// failed and redirected URLs, over several sweeps.
#ifndef SHINGLED_TESTS_REDIS_BACKEND_FIXTURE_H_
#define SHINGLED_TESTS_REDIS_BACKEND_FIXTURE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "redis/backend.h"
#include "store/store.h"
#include "tests/redis/cluster_fixture.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::redis::testing {

class BackendTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    params_.chunking.input = dedup::ChunkInput::kNone;
    auto context = dedup::SketchContext::Create(params_);
    ASSERT_TRUE(context.ok()) << context.status().ToString();
    context_ = std::move(*context);
    // The record buckets need hash-max-listpack-value above a record (backend.h).
    auto client = NewClient();
    ASSERT_NE(client, nullptr);
    auto set = client->RunOnMasters({"CONFIG", "SET", "hash-max-listpack-value", "4096"});
    ASSERT_TRUE(set.ok()) << set.status().ToString();
  }

  RedisStoreOptions RedisOptions() const {
    RedisStoreOptions r;
    r.nodes = cluster_->seeds();
    r.password_file = cluster_->password_file();
    r.feature_bits = r.supershingle_bits = r.sample_bits = 12;
    r.fingerprint_bits = 10;
    r.id_block = 100;
    return r;
  }

  std::unique_ptr<store::Store> OpenRedis(const store::StoreOptions& options = {}) {
    auto s = OpenRedisClusterStore(RedisOptions(), options, *context_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<store::Store> OpenLmdb(store::StoreOptions options = {}) {
    options.durable = false;
    auto s = store::Store::Open(dir_.Sub("lmdb"), options, *context_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  // --- the corpus ---

  struct Content {
    std::vector<uint64_t> shingles;
    uint64_t variant = 0;
    bool own_lexical = false;  // a shingle equivalent: its lexical fingerprint its own
  };
  dedup::Sketch SketchOf(const Content& c) const {
    dedup::Sketch s = store::testing::SyntheticSketch(params_, c.shingles, c.variant);
    if (c.own_lexical) {
      const uint64_t seed = c.shingles.empty() ? 0 : c.shingles.front();
      s.lexical = {store::testing::Mix(seed + c.variant + 4242), store::testing::Mix(seed + 4343)};
    }
    return s;
  }
  store::PageInput Page(const std::string& url, store::SweepId sweep, int64_t date,
                        const Content& c) const {
    store::PageInput p;
    p.url = url;
    p.sweep = sweep;
    p.date = date;
    p.sketch = SketchOf(c);
    return p;
  }
  static store::PageInput Fetch(const std::string& url, store::SweepId sweep, int64_t date,
                                int status, const std::string& target = "") {
    store::PageInput p;
    p.url = url;
    p.sweep = sweep;
    p.date = date;
    p.http_status = status;
    p.redirect_target = target;
    return p;
  }
  static std::string Url(int family, const std::string& what) {
    return "https://h" + std::to_string(family % 17) + ".example/f" + std::to_string(family) + "/" +
           what;
  }
  // A near-copy of family f's base at about `shared` of 200 shingles.
  static Content Near(int f, uint64_t shared, uint64_t salt) {
    Content c;
    c.shingles = store::testing::Variant(uint64_t(f) * 100000, 200, shared,
                                         uint64_t(f) * 100000 + 50000 + salt * 1000);
    return c;
  }

  // Three sweeps of pages over `families` families, shuffled within each sweep (so that near-copies
  // fall in one batch and across batches). Sweep ids are 1, 2, 3.
  std::vector<std::vector<store::PageInput>> Corpus(int families) const {
    std::vector<std::vector<store::PageInput>> sweeps(3);
    std::mt19937_64 rng(36);
    for (int f = 0; f < families; ++f) {
      const Content base = Near(f, 200, 0);
      auto& s1 = sweeps[0];
      s1.push_back(Page(Url(f, "base"), 1, 1000 + f, base));
      // Near-copies: ~0.95 (verified), ~0.85 and ~0.7 (similar, linked, not clustered).
      s1.push_back(Page(Url(f, "near-a"), 1, 1001 + f, Near(f, 195, 1)));
      s1.push_back(Page(Url(f, "near-b"), 1, 1002 + f, Near(f, 193, 2)));
      s1.push_back(Page(Url(f, "near-c"), 1, 1003 + f, Near(f, 170, 3)));
      s1.push_back(Page(Url(f, "near-d"), 1, 1004 + f, Near(f, 140, 4)));
      s1.push_back(Page(Url(f, "copy"), 1, 1005 + f, base));  // identical bytes
      Content lex = base;
      lex.variant = 1;
      s1.push_back(Page(Url(f, "lexical"), 1, 1006 + f, lex));
      if (f % 3 == 0) {
        Content sh = base;
        sh.variant = 2;
        sh.own_lexical = true;
        s1.push_back(Page(Url(f, "shingle"), 1, 1007 + f, sh));
      }
      s1.push_back(Fetch(Url(f, "dead"), 1, 1008 + f, 404));
      s1.push_back(Fetch(Url(f, "moved"), 1, 1009 + f, 301, Url(f, "base")));
      if (f % 4 == 0) s1.push_back(Page(Url(f, "empty"), 1, 1010 + f, Content{}));
      // Sweep 2: unchanged, changed, replays, revisits, dead, failed.
      auto& s2 = sweeps[1];
      s2.push_back(Page(Url(f, "base"), 2, 2000 + f, base));
      s2.push_back(Page(Url(f, "near-a"), 2, 2001 + f, Near(f, 196, 5)));
      s2.push_back(Page(Url(f, "near-a"), 2, 2001 + f, Near(f, 196, 5)));  // a replay
      store::PageInput revisit = Page(Url(f, "copy"), 2, 2002 + f, Content{});
      revisit.revisit = true;
      revisit.revisit_of = Url(f, "base");
      s2.push_back(revisit);
      s2.push_back(Fetch(Url(f, "near-b"), 2, 2003 + f, 410));
      s2.push_back(Fetch(Url(f, "lexical"), 2, 2004 + f, 503));
      s2.push_back(Fetch(Url(f, "lexical"), 2, 2004 + f, 503));  // a replay
      s2.push_back(Fetch(Url(f, "moved"), 2, 2005 + f, 301, Url(f, "base")));
      s2.push_back(Page(Url(f, "other-site"), 2, 2006 + f, Near(f, 194, 6)));
      // Sweep 3: bridges between neighbouring families, the dead come back, exact copies.
      auto& s3 = sweeps[2];
      if (f + 1 < families && f % 5 == 0) {
        Content bridge;
        bridge.shingles = store::testing::Range(uint64_t(f) * 100000 + 10, 190);
        for (int i = 0; i < 10; ++i) bridge.shingles.push_back(uint64_t(f + 1) * 100000 + i);
        s3.push_back(Page(Url(f, "bridge"), 3, 3000 + f, bridge));
      }
      s3.push_back(Page(Url(f, "dead"), 3, 3001 + f, Near(f, 197, 7)));
      s3.push_back(Page(Url(f, "copy-2"), 3, 3002 + f, Near(f, 195, 1)));
      s3.push_back(Page(Url(f, "base"), 3, 2999 + f, base));  // dated before the sweep's start
    }
    for (auto& s : sweeps) std::shuffle(s.begin(), s.end(), rng);
    return sweeps;
  }

  dedup::SketchParams params_;
  std::shared_ptr<const dedup::SketchContext> context_;
  store::testing::TestDir dir_;
};

// Groups `items` by `key`: the partition as a set of sets.
template <typename T, typename K>
std::set<std::set<T>> Partition(const std::map<T, K>& key) {
  std::map<K, std::set<T>> groups;
  for (const auto& [item, k] : key) groups[k].insert(item);
  std::set<std::set<T>> out;
  for (auto& [k, g] : groups) out.insert(std::move(g));
  return out;
}

}  // namespace shingled::redis::testing

#endif  // SHINGLED_TESTS_REDIS_BACKEND_FIXTURE_H_
