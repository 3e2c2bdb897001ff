// The Redis Cluster backend (redis/backend.h) against the LMDB store, on a real 3-master cluster:
// the same pages give the same answers (a differential test), a batch retried after a failure
// stores each page once, and what the backend refuses it refuses clearly.
#include "redis/backend.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "redis/backend_store.h"
#include "tests/redis/backend_fixture.h"

namespace shingled::redis::testing {
namespace {

using store::DocId;
using store::PageInput;
using store::PageResult;

std::string Describe(const PageInput& p) {
  return p.url + " sweep " + std::to_string(p.sweep) + " status " + std::to_string(p.http_status) +
         (p.revisit ? " (revisit)" : "");
}

void ExpectSameResult(const PageInput& page, const PageResult& lmdb, const PageResult& redis) {
  SCOPED_TRACE(Describe(page));
  ASSERT_EQ(lmdb.status.code(), redis.status.code())
      << lmdb.status.ToString() << " / " << redis.status.ToString();
  if (!lmdb.status.ok()) return;
  EXPECT_EQ(store::VerdictName(lmdb.verdict), store::VerdictName(redis.verdict));
  EXPECT_EQ(lmdb.replayed, redis.replayed);
  EXPECT_EQ(lmdb.doc, redis.doc);
  EXPECT_EQ(lmdb.url, redis.url);
  EXPECT_EQ(lmdb.redirect_target, redis.redirect_target);
  EXPECT_EQ(lmdb.previous_doc, redis.previous_doc);
  EXPECT_EQ(lmdb.previous_resemblance.has_value(), redis.previous_resemblance.has_value());
  if (lmdb.previous_resemblance && redis.previous_resemblance) {
    EXPECT_DOUBLE_EQ(*lmdb.previous_resemblance, *redis.previous_resemblance);
  }
  EXPECT_EQ(lmdb.candidates_truncated, redis.candidates_truncated);
  EXPECT_EQ(lmdb.match_common.size(), redis.match_common.size());
  ASSERT_EQ(lmdb.matches.size(), redis.matches.size());
  for (size_t i = 0; i < lmdb.matches.size(); ++i) {
    const store::Match& a = lmdb.matches[i];
    const store::Match& b = redis.matches[i];
    EXPECT_EQ(a.doc, b.doc) << "match " << i;
    EXPECT_EQ(store::RelationName(a.relation), store::RelationName(b.relation)) << "match " << i;
    EXPECT_DOUBLE_EQ(a.resemblance, b.resemblance) << "match " << i;
    EXPECT_DOUBLE_EQ(a.containment_of_page, b.containment_of_page) << "match " << i;
    EXPECT_DOUBLE_EQ(a.containment_in_page, b.containment_in_page) << "match " << i;
    EXPECT_EQ(a.features_in_common, b.features_in_common) << "match " << i;
    EXPECT_EQ(a.resemblance_from, b.resemblance_from) << "match " << i;
  }
}

// Every document's cluster, as a partition of the documents 1..n.
std::set<std::set<DocId>> DocumentPartition(const store::Store& s, DocId n) {
  std::map<DocId, store::ClusterId> of;
  for (DocId d = 1; d <= n; ++d) {
    auto info = s.Document(d);
    EXPECT_TRUE(info.ok()) << d << ": " << info.status().ToString();
    if (info.ok()) of[d] = info->cluster;
  }
  return Partition(of);
}

TEST_F(BackendTest, SamePagesGiveTheSameAnswersAsLmdb) {
  auto lmdb = OpenLmdb();
  auto redis = OpenRedis();
  ASSERT_NE(lmdb, nullptr);
  ASSERT_NE(redis, nullptr);
  for (const char* name : {"s1", "s2", "s3"}) {
    auto a = lmdb->OpenSweep(name, 1000);
    auto b = redis->OpenSweep(name, 1000);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
    EXPECT_EQ(a->id, b->id);
  }
  const auto sweeps = Corpus(140);
  std::vector<PageInput> all;
  size_t pages = 0;
  std::set<std::string> urls;
  const ClusterStats before = dynamic_cast<const RedisClusterStore&>(*redis).client_stats();
  std::chrono::steady_clock::duration lmdb_time{}, redis_time{};
  for (const auto& sweep : sweeps) {
    for (size_t i = 0; i < sweep.size(); i += 40) {
      std::span<const PageInput> batch(sweep.data() + i, std::min<size_t>(40, sweep.size() - i));
      const auto t0 = std::chrono::steady_clock::now();
      auto a = lmdb->Apply(batch);
      const auto t1 = std::chrono::steady_clock::now();
      auto b = redis->Apply(batch);
      const auto t2 = std::chrono::steady_clock::now();
      lmdb_time += t1 - t0;
      redis_time += t2 - t1;
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      for (size_t j = 0; j < batch.size(); ++j) {
        ExpectSameResult(batch[j], (*a)[j], (*b)[j]);
        urls.insert(batch[j].url);
      }
      pages += batch.size();
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(pages, 2500u);
  {
    const ClusterStats after = dynamic_cast<const RedisClusterStore&>(*redis).client_stats();
    const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::printf(
        "%zu pages in batches of 40: LMDB %.0f ms, Redis %.0f ms; per page %.2f pipelines "
        "(one per node and round), %.1f commands\n",
        pages, ms(lmdb_time), ms(redis_time),
        double(after.pipelines - before.pipelines) / double(pages),
        double(after.commands - before.commands) / double(pages));
  }
  auto sa = lmdb->Stats();
  auto sb = redis->Stats();
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(sa->documents, sb->documents);
  EXPECT_EQ(sa->urls, sb->urls);
  EXPECT_EQ(sa->versions, sb->versions);
  EXPECT_EQ(sa->clusters, sb->clusters);
  EXPECT_EQ(sa->largest_cluster, sb->largest_cluster);
  // Sweeps and their counts.
  auto wa = lmdb->Sweeps();
  auto wb = redis->Sweeps();
  ASSERT_TRUE(wa.ok() && wb.ok());
  ASSERT_EQ(wa->size(), wb->size());
  for (size_t i = 0; i < wa->size(); ++i) {
    const store::SweepInfo& x = (*wa)[i];
    const store::SweepInfo& y = (*wb)[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.start, y.start);
    EXPECT_EQ(x.pages, y.pages);
    EXPECT_EQ(x.new_docs, y.new_docs);
    EXPECT_EQ(x.unchanged, y.unchanged);
    EXPECT_EQ(x.duplicate, y.duplicate);
    EXPECT_EQ(x.near_duplicate, y.near_duplicate);
    EXPECT_EQ(x.gone, y.gone);
  }
  // The clusters, as partitions (Redis names a cluster by its smallest id, LMDB by the root of
  // the larger: docs/REDIS.md).
  const DocId n = sa->documents;
  EXPECT_EQ(DocumentPartition(*lmdb, n), DocumentPartition(*redis, n));
  // Documents (the sketch values the Redis record keeps: 32-bit minhashes) and histories.
  for (DocId d = 1; d <= n; ++d) {
    auto x = lmdb->Document(d);
    auto y = redis->Document(d);
    ASSERT_TRUE(x.ok() && y.ok()) << d;
    EXPECT_EQ(x->representative, y->representative) << d;
    EXPECT_EQ(x->bytes, y->bytes) << d;
    EXPECT_EQ(x->shingles, y->shingles) << d;
    EXPECT_EQ(x->first_seen, y->first_seen) << d;
    EXPECT_EQ(x->last_seen, y->last_seen) << d;
    EXPECT_EQ(x->sketch.features, y->sketch.features) << d;
    EXPECT_EQ(x->sketch.verify_sample, y->sketch.verify_sample) << d;
    EXPECT_EQ(x->sketch.identical, y->sketch.identical) << d;
    ASSERT_EQ(x->sketch.minhashes.size(), y->sketch.minhashes.size()) << d;
    for (size_t i = 0; i < x->sketch.minhashes.size(); ++i) {
      EXPECT_EQ(static_cast<uint32_t>(x->sketch.minhashes[i]), y->sketch.minhashes[i]) << d;
    }
    // Clusters: the same members.
    auto ca = lmdb->Cluster(d);
    auto cb = redis->Cluster(d);
    ASSERT_TRUE(ca.ok() && cb.ok()) << d;
    ASSERT_EQ(ca->members.size(), cb->members.size()) << d;
    for (size_t i = 0; i < ca->members.size(); ++i) {
      EXPECT_EQ(ca->members[i].doc, cb->members[i].doc);
      EXPECT_EQ(ca->members[i].first_seen, cb->members[i].first_seen);
      EXPECT_EQ(ca->members[i].last_seen, cb->members[i].last_seen);
      auto ua = ca->members[i].urls, ub = cb->members[i].urls;
      std::sort(ua.begin(), ua.end());
      std::sort(ub.begin(), ub.end());
      EXPECT_EQ(ua, ub) << d;
    }
    if (HasFailure()) return;
  }
  for (const std::string& url : urls) {
    auto ha = lmdb->History(url);
    auto hb = redis->History(url);
    ASSERT_EQ(ha.ok(), hb.ok()) << url;
    if (!ha.ok()) continue;
    ASSERT_EQ(ha->size(), hb->size()) << url;
    for (size_t i = 0; i < ha->size(); ++i) {
      const store::UrlVersion& x = (*ha)[i];
      const store::UrlVersion& y = (*hb)[i];
      EXPECT_EQ(x.seq, y.seq) << url;
      EXPECT_EQ(x.sweep, y.sweep) << url;
      EXPECT_EQ(x.date, y.date) << url;
      EXPECT_EQ(x.doc, y.doc) << url;
      EXPECT_EQ(x.http_status, y.http_status) << url;
      EXPECT_EQ(x.verdict, y.verdict) << url;
      EXPECT_EQ(x.redirect_target, y.redirect_target) << url;
    }
  }
  EXPECT_FALSE(redis->History("https://never.example/").ok());
  // Similarity queries: by sketch, by document, by URL.
  auto same_similar = [](const StatusOr<std::vector<store::SimilarDoc>>& a,
                         const StatusOr<std::vector<store::SimilarDoc>>& b,
                         const std::string& what) {
    ASSERT_TRUE(a.ok() && b.ok()) << what << a.status().ToString() << b.status().ToString();
    ASSERT_EQ(a->size(), b->size()) << what;
    for (size_t i = 0; i < a->size(); ++i) {
      EXPECT_EQ((*a)[i].doc, (*b)[i].doc) << what;
      EXPECT_DOUBLE_EQ((*a)[i].resemblance, (*b)[i].resemblance) << what;
      EXPECT_DOUBLE_EQ((*a)[i].containment_of_query, (*b)[i].containment_of_query) << what;
      EXPECT_DOUBLE_EQ((*a)[i].containment_in_query, (*b)[i].containment_in_query) << what;
      EXPECT_EQ((*a)[i].features_in_common, (*b)[i].features_in_common) << what;
      EXPECT_EQ((*a)[i].url, (*b)[i].url) << what;
    }
  };
  store::QueryOptions q;
  q.threshold = 0.5;
  for (int f = 0; f < 140; f += 7) {
    same_similar(lmdb->SimilarToSketch(SketchOf(Near(f, 190, 9)), q),
                 redis->SimilarToSketch(SketchOf(Near(f, 190, 9)), q),
                 "sketch of family " + std::to_string(f));
    same_similar(lmdb->SimilarToUrl(Url(f, "near-c"), q), redis->SimilarToUrl(Url(f, "near-c"), q),
                 Url(f, "near-c"));
  }
  for (DocId d = 1; d <= n; d += 37) {
    same_similar(lmdb->SimilarToDocument(d, q), redis->SimilarToDocument(d, q),
                 "document " + std::to_string(d));
  }
  // FindIdentical.
  for (int f = 0; f < 140; f += 11) {
    const dedup::Sketch s = SketchOf(Near(f, 200, 0));
    auto a = lmdb->FindIdentical(s.identical);
    auto b = redis->FindIdentical(s.identical);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b);
  }
  auto ka = lmdb->Check();
  auto kb = redis->Check();
  ASSERT_TRUE(ka.ok() && kb.ok());
  EXPECT_TRUE(ka->empty()) << ka->front();
  EXPECT_TRUE(kb->empty()) << kb->front();
}

TEST_F(BackendTest, ABatchRetriedAfterAFailureStoresEachPageOnce) {
  auto lmdb = OpenLmdb();
  auto redis_store = OpenRedis();
  ASSERT_NE(redis_store, nullptr);
  auto* redis = dynamic_cast<RedisClusterStore*>(redis_store.get());
  ASSERT_NE(redis, nullptr);
  ASSERT_TRUE(lmdb->OpenSweep("s1", 1000).ok());
  ASSERT_TRUE(redis_store->OpenSweep("s1", 1000).ok());
  auto sweeps = Corpus(60);
  std::vector<PageInput> pages = sweeps[0];
  for (PageInput& p : pages) p.sweep = 1;
  // Batches of 25; the k-th fails at its round k (1, 2, ...: every step of Apply in turn), then
  // is applied again.
  int failed = 0;
  for (size_t i = 0, k = 1; i < pages.size(); i += 25, ++k) {
    std::span<const PageInput> batch(pages.data() + i, std::min<size_t>(25, pages.size() - i));
    redis->FailAtRoundForTesting(static_cast<int>(k % 14));
    auto first = redis->Apply(batch);
    if (!first.ok()) ++failed;
    auto again = redis->Apply(batch);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    auto reference = lmdb->Apply(batch);
    ASSERT_TRUE(reference.ok());
    for (size_t j = 0; j < batch.size(); ++j) {
      SCOPED_TRACE(Describe(batch[j]));
      const PageResult& x = (*reference)[j];
      const PageResult& y = (*again)[j];
      ASSERT_EQ(x.status.code(), y.status.code());
      if (!x.status.ok()) continue;
      // A page whose version the failed attempt wrote is a replay of it; else it applies.
      if (!y.replayed) {
        EXPECT_EQ(store::VerdictName(x.verdict), store::VerdictName(y.verdict));
      }
      EXPECT_EQ(x.doc != 0, y.doc != 0);
    }
  }
  EXPECT_GE(failed, 10);
  // Each page once: one version per (URL, page), as many documents as LMDB.
  std::map<std::string, size_t> versions;
  for (const PageInput& p : pages) {
    auto a = lmdb->History(p.url);
    auto b = redis->History(p.url);
    ASSERT_TRUE(a.ok() && b.ok()) << p.url;
    EXPECT_EQ(a->size(), b->size()) << p.url;
  }
  auto sa = lmdb->Stats();
  auto sb = redis->Stats();
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(sa->documents, sb->documents);
  EXPECT_EQ(sa->versions, sb->versions);
  auto wa = lmdb->Sweeps();
  auto wb = redis->Sweeps();
  ASSERT_TRUE(wa.ok() && wb.ok());
  EXPECT_EQ((*wa)[0].pages, (*wb)[0].pages);
  auto kb = redis->Check();
  ASSERT_TRUE(kb.ok());
  for (const std::string& p : *kb) ADD_FAILURE() << p;
  // The partition of the URLs' documents by cluster is LMDB's.
  std::map<std::string, store::ClusterId> ca, cb;
  for (const PageInput& p : pages) {
    auto a = lmdb->History(p.url);
    auto b = redis->History(p.url);
    if (a->back().doc == 0) continue;
    auto da = lmdb->Document(a->back().doc);
    auto db = redis->Document(b->back().doc);
    ASSERT_TRUE(da.ok() && db.ok()) << p.url;
    ca[p.url] = da->cluster;
    cb[p.url] = db->cluster;
  }
  EXPECT_EQ(Partition(ca), Partition(cb));
}

TEST_F(BackendTest, MinReplicasWaitsForTheReplicasOrRefuses) {
  // Without replicas: a writer refuses to start, naming the setting.
  RedisStoreOptions alone = RedisOptions();
  alone.min_replicas = 1;
  alone.wait_timeout_ms = 300;
  auto refused = OpenRedisClusterStore(alone, {}, *context_);
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("store.redis.min_replicas is 1"), std::string::npos)
      << refused.status().message();
  // A store opened without creating (a reader's open) that writes all the same: the write cannot
  // be acknowledged by a replica, and says so.
  ASSERT_TRUE(OpenRedisClusterStore(RedisOptions(), {}, *context_).ok());  // creates the store
  auto unreplicated = OpenRedisClusterStore(alone, {.create = false}, *context_);
  ASSERT_TRUE(unreplicated.ok()) << unreplicated.status().ToString();
  auto sweep = (*unreplicated)->OpenSweep("s", 1000);
  EXPECT_EQ(sweep.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(sweep.status().message().find("0 of 1"), std::string::npos) << sweep.status().message();
  // A cluster with a replica per master: every batch waits for it, and is acknowledged.
  cluster_.reset();
  cluster_ = std::make_unique<RedisCluster>();
  ASSERT_TRUE(cluster_->Start({.masters = 3, .replicas_per_master = 1}).ok());
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->RunOnMasters({"CONFIG", "SET", "hash-max-listpack-value", "4096"}).ok());
  RedisStoreOptions replicated = RedisOptions();
  replicated.min_replicas = 1;
  auto store = OpenRedisClusterStore(replicated, {}, *context_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->OpenSweep("s1", 1000).ok());
  const std::vector<PageInput> pages = Corpus(20)[0];
  for (size_t i = 0; i < pages.size(); i += 20) {
    std::span<const PageInput> batch(pages.data() + i, std::min<size_t>(20, pages.size() - i));
    auto r = (*store)->Apply(batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  const ClusterStats stats = dynamic_cast<const RedisClusterStore&>(**store).client_stats();
  EXPECT_GE(stats.waits, (pages.size() + 19) / 20);
  auto check = (*store)->Check();
  ASSERT_TRUE(check.ok());
  for (const std::string& p : *check) ADD_FAILURE() << p;
}

TEST_F(BackendTest, RefusesWhatItDoesNotSupportClearly) {
  auto redis = OpenRedis();
  ASSERT_NE(redis, nullptr);
  auto sweep = redis->OpenSweep("s", 1);
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(redis->OpenSweep("s", 1)->id, sweep->id);  // an open sweep is returned again
  auto list = redis->ListUrls({});  // the listings work now (backend_listings_test.cc)
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_TRUE(list->urls.empty());
  EXPECT_EQ(redis->Lost("https://a.example/").status().code(), StatusCode::kNotFound);
  // The clusters report too (backend_chunks_test.cc): of an empty state, nothing.
  store::ClusterReportTotals totals;
  const Status report = redis->StreamClusterReport(
      {}, [](const store::ClusterReportCluster&) { return OkStatus(); }, &totals);
  EXPECT_TRUE(report.ok()) << report.ToString();
  EXPECT_EQ(totals.partitions, 0u);
  // No file to back up, warm or bound: the store says so once, with no MappedFile.
  EXPECT_EQ(redis->mapped_file(), nullptr);
  EXPECT_EQ(std::as_const(*redis).mapped_file(), nullptr);
  EXPECT_TRUE(redis->WriteRoom().ok());
  // Chunking on, on a state made with it off: refused at open (the chunking is in `meta`).
  dedup::SketchParams chunked;
  auto context = dedup::SketchContext::Create(chunked);
  ASSERT_TRUE(context.ok());
  auto refused = OpenRedisClusterStore(RedisOptions(), {}, **context);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("param.chunk_input"), std::string::npos)
      << refused.status().message();
  // Other params or bucket bits than the state was made with.
  dedup::SketchParams other = params_;
  other.shingle_size = 5;
  auto other_context = dedup::SketchContext::Create(other);
  ASSERT_TRUE(other_context.ok());
  auto mismatch = OpenRedisClusterStore(RedisOptions(), {}, **other_context);
  EXPECT_EQ(mismatch.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(mismatch.status().message().find("param.shingle_size = 8"), std::string::npos)
      << mismatch.status().message();
  RedisStoreOptions bits = RedisOptions();
  bits.feature_bits = 13;
  auto bad_bits = OpenRedisClusterStore(bits, {}, *context_);
  EXPECT_EQ(bad_bits.status().code(), StatusCode::kFailedPrecondition);
  // hash-max-listpack-value too small for the record buckets: named with the node.
  auto client = NewClient();
  ASSERT_TRUE(client->RunOnMasters({"CONFIG", "SET", "hash-max-listpack-value", "64"}).ok());
  auto small = OpenRedisClusterStore(RedisOptions(), {}, *context_);
  EXPECT_EQ(small.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(small.status().message().find("hash-max-listpack-value 64"), std::string::npos)
      << small.status().message();
}

// The lookups the ingest makes of each page before sketching it (FindIdentical, then Document of
// what it finds) go on a client of their own, not the writer's, which Apply holds for a whole
// batch: they send nothing on the writer's client.
TEST_F(BackendTest, TheIngestsLookupsDoNotUseTheWritersClient) {
  auto redis = OpenRedis();
  ASSERT_NE(redis, nullptr);
  auto sweep = redis->OpenSweep("lookups", 0);
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  const store::PageInput page = Page(Url(1, "base"), sweep->id, 1000, Near(1, 200, 0));
  auto applied = redis->Apply(std::span<const store::PageInput>(&page, 1));
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  const store::DocId doc = (*applied)[0].doc;
  const auto& writer = dynamic_cast<const RedisClusterStore&>(*redis);
  const uint64_t commands = writer.client_stats().commands;

  auto found = redis->FindIdentical(page.sketch.identical);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, doc);
  auto info = redis->Document(doc);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->sketch.identical, page.sketch.identical);
  EXPECT_EQ(info->cluster, doc);
  EXPECT_EQ(writer.client_stats().commands, commands);
}

// Check names each kind of damage to the records, the URLs and the counts.
TEST_F(BackendTest, CheckNamesEachKindOfDamage) {
  auto redis = OpenRedis();
  ASSERT_NE(redis, nullptr);
  auto sweep = redis->OpenSweep("damage", 0);
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  const std::vector<store::PageInput> pages = {Page(Url(1, "base"), sweep->id, 1000, Near(1, 200, 0)),
                                               Page(Url(2, "base"), sweep->id, 1000, Near(2, 200, 0))};
  auto applied = redis->Apply(pages);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  const std::string d1 = std::to_string((*applied)[0].doc), d2 = std::to_string((*applied)[1].doc);
  const std::string u1 = std::to_string((*applied)[0].url);
  auto check = redis->Check();
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_TRUE(check->empty());
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  // The second document's record gone; the first no longer listing its URL; a stray URL name.
  ASSERT_TRUE(client->Run(Cmd({"HDEL", listings::DocKeyOf((*applied)[1].doc), d2})).ok());
  ASSERT_TRUE(client->Run(Cmd({"HDEL", chunks::DocUrlsKeyOf((*applied)[0].doc), d1})).ok());
  ASSERT_TRUE(
      client->Run(Cmd({"HSET", walks::UrlNameKeyOf((*applied)[0].url), "stray", "x"})).ok());
  check = redis->Check();
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  std::string all;
  for (const std::string& p : *check) all.append(p).append("\n");
  for (const std::string& want :
       {"claim without record: document " + d2,
        "URL " + pages[1].url + " has a version of document " + d2 + ", which has no record",
        std::string("the counts say 2 documents, but there are 1"),
        "document " + d1 + " does not list URL id " + u1 + ", which has a version of it",
        std::string("a URL name bucket has the field \"stray\"")}) {
    EXPECT_NE(all.find(want), std::string::npos) << want << " not in:\n" << all;
  }
}

// A document naming a representative is listed among its sharers, which Check verifies; a state
// of format 2, made before that list, gets it when a writer opens it (and becomes format 4).
TEST_F(BackendTest, TheSharersOfAHolderAreListedAndAFormat2StateIsUpgraded) {
  auto redis = OpenRedis();
  ASSERT_NE(redis, nullptr);
  auto sweep = redis->OpenSweep("sharers", 0);
  ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
  Content copy = Near(1, 200, 0);
  copy.variant = 1;  // the same shingles, other bytes: a lexical equivalent
  const std::vector<store::PageInput> pages = {
      Page(Url(1, "base"), sweep->id, 1000, Near(1, 200, 0)),
      Page(Url(1, "copy"), sweep->id, 1000, copy)};
  auto applied = redis->Apply(pages);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  const store::DocId holder = (*applied)[0].doc, sharer = (*applied)[1].doc;
  ASSERT_NE(holder, sharer);
  auto check = redis->Check();
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_TRUE(check->empty()) << check->front();

  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  const std::string key = forgetting::SharersKeyOf(holder);
  ASSERT_TRUE(client->Run(Cmd({"DEL", key})).ok());
  check = redis->Check();
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  ASSERT_EQ(check->size(), 1u);
  EXPECT_EQ(check->front(), "document " + std::to_string(sharer) + " names representative " +
                                std::to_string(holder) + " but is not among its sharers");

  // The state as format 2 left it: a writer's open lists the sharers again.
  redis.reset();
  ASSERT_TRUE(client->Run(Cmd({"HSET", "meta", "format", "2"})).ok());
  redis = OpenRedis();
  ASSERT_NE(redis, nullptr);
  check = redis->Check();
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_TRUE(check->empty()) << check->front();
  auto format = client->Run(Cmd({"HGET", "meta", "format"}));
  ASSERT_TRUE(format.ok());
  EXPECT_EQ(format->str, "4");
}

// A command that only reads (check, list, report: StoreOptions::create false) creates no state on
// an empty cluster, and opens one that exists.
TEST_F(BackendTest, AReadOnlyOpenOfAnEmptyClusterCreatesNothing) {
  store::StoreOptions read_only;
  read_only.create = false;
  auto absent = OpenRedisClusterStore(RedisOptions(), read_only, *context_);
  ASSERT_EQ(absent.status().code(), StatusCode::kNotFound) << absent.status().ToString();
  EXPECT_NE(absent.status().message().find(cluster_->seeds().front()), std::string::npos)
      << absent.status().message();
  auto client = NewClient();
  auto meta = client->Run(Command{.args = {"EXISTS", "meta"}});
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_EQ(meta->integer, 0);      // nothing written
  ASSERT_NE(OpenRedis(), nullptr);  // serve creates it
  auto opened = OpenRedisClusterStore(RedisOptions(), read_only, *context_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_TRUE((*opened)->Check().ok());
}

}  // namespace
}  // namespace shingled::redis::testing
