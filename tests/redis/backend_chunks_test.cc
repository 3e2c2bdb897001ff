// Chunks, bytes in common and templates on the Redis Cluster backend (redis/backend_chunks.cc)
// against the LMDB store, on a real 3-master cluster: the fixture's corpus with chunking on (each
// page a host header, a footer on every page and a body that near-copies share in part) applied
// to both; every page's result (matches, common), bytes in common of many pairs, every
// document's chunk verdicts, marks and unmarks, the similarity queries and the clusters report
// compared.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "redis/backend.h"
#include "redis/backend_store.h"
#include "redis/layout.h"
#include "store/internal/codec.h"
#include "tests/redis/backend_fixture.h"

namespace shingled::redis::testing {
namespace {

using store::DocId;
using store::PageInput;
using store::PageResult;

class RedisChunksTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    params_.chunking.input = dedup::ChunkInput::kCanonicalText;
    auto context = dedup::SketchContext::Create(params_);
    ASSERT_TRUE(context.ok()) << context.status().ToString();
    context_ = std::move(*context);
  }

  // Low limits, so that the corpus has template chunks by each rule.
  static store::StoreOptions Options() {
    store::StoreOptions o;
    o.template_max_docs = 40;
    o.template_min_host_pages = 8;
    o.template_host_share = 0.3;
    return o;
  }

  // The page's chunks: its host's header (template by the host share), a footer on every page
  // (template by the document limit), then its body, 20 shingles a chunk, in order; none for an
  // empty page. Identical content on one host gives identical chunks.
  static void AddChunks(PageInput* p) {
    if (p->sketch.empty() || p->revisit) return;
    const std::string host(p->url.substr(0, p->url.find('/', 8)));
    std::vector<dedup::Chunk>& c = p->sketch.chunks;
    c.push_back({store::testing::Mix(std::hash<std::string>()(host)), 300});
    const std::vector<uint64_t>& sh = shingles_of_.at(p->url + "#" + std::to_string(p->sweep));
    for (size_t i = 0; i < sh.size(); i += 20) {
      uint64_t h = 17;
      for (size_t j = i; j < std::min(sh.size(), i + 20); ++j) h = store::testing::Mix(h ^ sh[j]);
      c.push_back({h, static_cast<uint32_t>(100 + (h % 50))});
    }
    c.push_back({store::testing::Mix(999), 200});
  }
  static inline std::map<std::string, std::vector<uint64_t>> shingles_of_;
};

void ExpectSameCommon(const store::CommonBytes& a, const store::CommonBytes& b) {
  EXPECT_EQ(a.known, b.known);
  EXPECT_EQ(a.a_known, b.a_known);
  EXPECT_EQ(a.b_known, b.b_known);
  EXPECT_EQ(a.length_a, b.length_a);
  EXPECT_EQ(a.length_b, b.length_b);
  EXPECT_EQ(a.shared_bytes, b.shared_bytes);
  EXPECT_DOUBLE_EQ(a.share_a, b.share_a);
  EXPECT_DOUBLE_EQ(a.share_b, b.share_b);
  EXPECT_EQ(store::CommonRelationName(a.relation), store::CommonRelationName(b.relation));
  EXPECT_EQ(a.shared_chunks, b.shared_chunks);
  ASSERT_EQ(a.spans.size(), b.spans.size());
  for (size_t i = 0; i < a.spans.size(); ++i) {
    EXPECT_EQ(a.spans[i].offset_a, b.spans[i].offset_a);
    EXPECT_EQ(a.spans[i].offset_b, b.spans[i].offset_b);
    EXPECT_EQ(a.spans[i].length, b.spans[i].length);
  }
  EXPECT_EQ(a.spans_truncated, b.spans_truncated);
  EXPECT_EQ(a.template_bytes, b.template_bytes);
  EXPECT_EQ(a.template_chunks, b.template_chunks);
  EXPECT_EQ(a.template_a, b.template_a);
  EXPECT_EQ(a.template_b, b.template_b);
}

size_t containment_matches = 0;

void ExpectSameResult(const PageInput& page, const PageResult& lmdb, const PageResult& redis) {
  SCOPED_TRACE(page.url + " sweep " + std::to_string(page.sweep));
  ASSERT_EQ(lmdb.status.code(), redis.status.code())
      << lmdb.status.ToString() << " / " << redis.status.ToString();
  if (!lmdb.status.ok()) return;
  EXPECT_EQ(store::VerdictName(lmdb.verdict), store::VerdictName(redis.verdict));
  EXPECT_EQ(lmdb.doc, redis.doc);
  ASSERT_EQ(lmdb.matches.size(), redis.matches.size());
  for (size_t i = 0; i < lmdb.matches.size(); ++i) {
    EXPECT_EQ(lmdb.matches[i].doc, redis.matches[i].doc) << "match " << i;
    EXPECT_EQ(store::RelationName(lmdb.matches[i].relation),
              store::RelationName(redis.matches[i].relation))
        << "match " << i;
    EXPECT_DOUBLE_EQ(lmdb.matches[i].resemblance, redis.matches[i].resemblance) << "match " << i;
    EXPECT_DOUBLE_EQ(lmdb.matches[i].containment_of_page, redis.matches[i].containment_of_page);
    EXPECT_DOUBLE_EQ(lmdb.matches[i].containment_in_page, redis.matches[i].containment_in_page);
    EXPECT_EQ(lmdb.matches[i].containment_from, redis.matches[i].containment_from);
    const auto r = lmdb.matches[i].relation;
    containment_matches += r == store::Relation::kContains || r == store::Relation::kContainedIn;
  }
  ASSERT_EQ(lmdb.match_common.size(), redis.match_common.size());
  for (size_t i = 0; i < lmdb.match_common.size(); ++i) {
    SCOPED_TRACE("common of match " + std::to_string(i));
    ExpectSameCommon(lmdb.match_common[i], redis.match_common[i]);
  }
}

// The clusters report of both stores, row by row and in its totals.
void ExpectSameClusterReport(const store::Store& lmdb, const store::Store& redis,
                             const store::ClusterReportOptions& options) {
  SCOPED_TRACE("clusters report, limit " + std::to_string(options.limit));
  std::vector<store::ClusterReportCluster> rows[2];
  store::ClusterReportTotals totals[2];
  double ms[2];
  for (int i = 0; i < 2; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const Status s = (i == 0 ? lmdb : redis)
                         .StreamClusterReport(
                             options,
                             [&](const store::ClusterReportCluster& c) {
                               rows[i].push_back(c);
                               return OkStatus();
                             },
                             &totals[i]);
    ms[i] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  const store::ClusterReportTotals &a = totals[0], &b = totals[1];
  EXPECT_GT(a.clusters, 0u);
  EXPECT_EQ(std::tie(a.partitions, a.clusters, a.documents, a.links, a.bytes, a.removable_bytes,
                     a.pairs_checked, a.pairs_unchecked, a.chunks_too_common,
                     a.documents_without_chunks, a.limited),
            std::tie(b.partitions, b.clusters, b.documents, b.links, b.bytes, b.removable_bytes,
                     b.pairs_checked, b.pairs_unchecked, b.chunks_too_common,
                     b.documents_without_chunks, b.limited));
  ASSERT_EQ(rows[0].size(), rows[1].size());
  for (size_t r = 0; r < rows[0].size(); ++r) {
    const store::ClusterReportCluster &x = rows[0][r], &y = rows[1][r];
    SCOPED_TRACE("cluster " + std::to_string(r + 1));
    EXPECT_EQ(std::tie(x.rank, x.id, x.partition, x.bytes, x.keep, x.removable_bytes,
                       x.partition_pairs_unchecked),
              std::tie(y.rank, y.id, y.partition, y.bytes, y.keep, y.removable_bytes,
                       y.partition_pairs_unchecked));
    EXPECT_EQ(store::ClusterReportTypeName(x.type), store::ClusterReportTypeName(y.type));
    EXPECT_DOUBLE_EQ(x.average_similarity, y.average_similarity);
    ASSERT_EQ(x.documents.size(), y.documents.size());
    for (size_t d = 0; d < x.documents.size(); ++d) {
      EXPECT_EQ(x.documents[d].doc, y.documents[d].doc);
      EXPECT_EQ(x.documents[d].bytes, y.documents[d].bytes);
      EXPECT_EQ(x.documents[d].live_urls, y.documents[d].live_urls);
      EXPECT_EQ(x.documents[d].urls, y.documents[d].urls);
      EXPECT_LE(x.documents[d].urls.size(), options.max_urls);
    }
    ASSERT_EQ(x.links.size(), y.links.size());
    for (size_t l = 0; l < x.links.size(); ++l) {
      const store::ClusterReportLink &p = x.links[l], &q = y.links[l];
      EXPECT_EQ(std::tie(p.a, p.b, p.shared_bytes, p.length_a, p.length_b),
                std::tie(q.a, q.b, q.shared_bytes, q.length_a, q.length_b));
      EXPECT_DOUBLE_EQ(p.similarity, q.similarity);
      EXPECT_EQ(store::CommonRelationName(p.relation), store::CommonRelationName(q.relation));
    }
  }
  std::printf(
      "clusters report (limit %llu): %llu partitions, %llu clusters, %llu links, %llu pairs "
      "checked; %.1f ms on LMDB, %.1f ms on the cluster\n",
      static_cast<unsigned long long>(options.limit), static_cast<unsigned long long>(a.partitions),
      static_cast<unsigned long long>(a.clusters), static_cast<unsigned long long>(a.links),
      static_cast<unsigned long long>(a.pairs_checked), ms[0], ms[1]);
}

// A mark without its cluster id (LMDB names a cluster by the root of the larger side of each
// union, the cluster by its smallest id: docs/REDIS.md).
std::tuple<uint64_t, uint64_t, std::vector<std::pair<uint64_t, uint32_t>>> MarkContent(
    const store::TemplateMark& m) {
  std::vector<std::pair<uint64_t, uint32_t>> chunks;
  for (const dedup::Chunk& c : m.chunks) chunks.emplace_back(c.hash, c.length);
  return {m.members, m.chunk_bytes, chunks};
}

TEST_F(RedisChunksTest, ChunksCommonAndTemplatesAsLmdb) {
  auto lmdb = OpenLmdb(Options());
  auto redis = OpenRedis(Options());
  ASSERT_NE(lmdb, nullptr);
  ASSERT_NE(redis, nullptr);
  for (const char* name : {"s1", "s2", "s3"}) {
    ASSERT_TRUE(lmdb->OpenSweep(name, 1000).ok());
    ASSERT_TRUE(redis->OpenSweep(name, 1000).ok());
  }
  auto sweeps = Corpus(30);
  // The shingles behind each page (Corpus keeps only sketches): rebuilt from the same recipe.
  for (int f = 0; f < 30; ++f) {
    const auto put = [&](const std::string& what, int sweep, const Content& c) {
      shingles_of_[Url(f, what) + "#" + std::to_string(sweep)] = c.shingles;
    };
    put("base", 1, Near(f, 200, 0));
    put("near-a", 1, Near(f, 195, 1));
    put("near-b", 1, Near(f, 193, 2));
    put("near-c", 1, Near(f, 170, 3));
    put("near-d", 1, Near(f, 140, 4));
    put("copy", 1, Near(f, 200, 0));
    put("lexical", 1, Near(f, 200, 0));
    put("shingle", 1, Near(f, 200, 0));
    put("empty", 1, Content{});
    put("base", 2, Near(f, 200, 0));
    put("near-a", 2, Near(f, 196, 5));
    put("other-site", 2, Near(f, 194, 6));
    Content bridge;
    bridge.shingles = store::testing::Range(uint64_t(f) * 100000 + 10, 190);
    for (int i = 0; i < 10; ++i) bridge.shingles.push_back(uint64_t(f + 1) * 100000 + i);
    put("bridge", 3, bridge);
    put("dead", 3, Near(f, 197, 7));
    put("copy-2", 3, Near(f, 195, 1));
    put("base", 3, Near(f, 200, 0));
  }
  // Containment (through the chunk graph): a page holding its family's base and 600
  // shingles more, and a page of the base's first 40 shingles, in the second sweep.
  for (int f = 0; f < 30; f += 2) {
    Content longer = Near(f, 200, 0);
    for (uint64_t x : store::testing::Range(uint64_t(f) * 100000 + 70000, 600)) {
      longer.shingles.push_back(x);
    }
    Content part;
    part.shingles.assign(longer.shingles.begin(), longer.shingles.begin() + 40);
    for (const auto& [what, c] : {std::pair{"long", longer}, std::pair{"part", part}}) {
      shingles_of_[Url(f, what) + "#2"] = c.shingles;
      sweeps[1].push_back(Page(Url(f, what), 2, 2100 + f, c));
    }
  }
  for (auto& sweep : sweeps) {
    for (PageInput& p : sweep) AddChunks(&p);
  }
  // In batches of 40: a template's document count or a host's URL count crosses its limit inside
  // a batch, where each page must see the store and the batch's pages up to it only, as LMDB's.
  auto apply = [&](std::span<const PageInput> batch) {
    auto a = lmdb->Apply(batch);
    auto b = redis->Apply(batch);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    for (size_t j = 0; j < batch.size(); ++j) ExpectSameResult(batch[j], (*a)[j], (*b)[j]);
  };
  size_t known_commons = 0;
  for (size_t s = 0; s < 2; ++s) {
    for (size_t i = 0; i < sweeps[s].size(); i += 40) {
      apply({sweeps[s].data() + i, std::min<size_t>(40, sweeps[s].size() - i)});
      if (HasFailure()) return;
    }
  }
  auto stats = lmdb->Stats();
  ASSERT_TRUE(stats.ok());
  const DocId n = stats->documents;
  ASSERT_GT(n, 200u);
  // Bytes in common of many pairs: neighbours (near-copies of one family) and far ones.
  size_t templates_seen = 0;
  for (DocId a = 1; a <= n; ++a) {
    for (DocId b : {a + 1, a + 2, a + 5, a + 37, a + 101}) {
      if (b > n) continue;
      SCOPED_TRACE("documents " + std::to_string(a) + " and " + std::to_string(b));
      auto x = lmdb->BytesInCommon(a, b, 8);
      auto y = redis->BytesInCommon(a, b, 8);
      ASSERT_EQ(x.ok(), y.ok()) << x.status().ToString() << " / " << y.status().ToString();
      if (!x.ok()) continue;
      ExpectSameCommon(*x, *y);
      known_commons += x->known;
      templates_seen += x->template_chunks > 0;
    }
  }
  EXPECT_GT(known_commons, 500u);
  EXPECT_GE(containment_matches, 15u);
  EXPECT_GT(templates_seen, 100u);
  EXPECT_EQ(redis->BytesInCommon(1, n + 1000, 8).status().code(), StatusCode::kNotFound);
  // Every document's chunk verdicts.
  std::set<std::string> rules;
  auto compare_templates = [&] {
    for (DocId d = 1; d <= n; ++d) {
      SCOPED_TRACE("document " + std::to_string(d));
      auto x = lmdb->ChunkTemplates(d);
      auto y = redis->ChunkTemplates(d);
      ASSERT_TRUE(x.ok() && y.ok()) << x.status().ToString() << " / " << y.status().ToString();
      ASSERT_EQ(x->size(), y->size());
      for (size_t i = 0; i < x->size(); ++i) {
        const store::ChunkTemplate &p = (*x)[i], &q = (*y)[i];
        EXPECT_EQ(p.chunk.hash, q.chunk.hash);
        EXPECT_EQ(p.chunk.length, q.chunk.length);
        EXPECT_EQ(p.is_template, q.is_template) << i;
        EXPECT_EQ(p.marked, q.marked);
        EXPECT_EQ(p.documents, q.documents) << i;
        EXPECT_EQ(p.over_documents, q.over_documents);
        EXPECT_EQ(p.host_pages, q.host_pages) << i;
        EXPECT_EQ(p.host_documents, q.host_documents) << i;
        EXPECT_EQ(p.over_host_share, q.over_host_share) << i;
        if (p.over_documents) rules.insert("documents");
        if (p.over_host_share) rules.insert("host share");
        if (p.marked) rules.insert("marked");
      }
    }
  };
  compare_templates();

  EXPECT_EQ(rules, (std::set<std::string>{"documents", "host share"}));
  EXPECT_EQ(redis->ChunkTemplates(n + 1000).status().code(), StatusCode::kNotFound);
  // Marks: of the clusters of a few documents (the same content; ids differ, see MarkContent).
  std::set<decltype(MarkContent({}))> marked_a, marked_b;
  // Members of four clusters of 2 or more documents, and of one of a single document (refused).
  std::vector<DocId> to_mark;
  std::set<store::ClusterId> clusters;
  bool single = false;
  DocId unmark = 0;  // a member of the first cluster marked
  for (DocId d = 1; d <= n && to_mark.size() < 5; ++d) {
    auto c = lmdb->Cluster(d);
    ASSERT_TRUE(c.ok());
    if (c->members.size() == 1 && !single) {
      single = true;
      to_mark.push_back(d);
    } else if (c->members.size() > 1 && clusters.size() < 4 && clusters.insert(c->id).second) {
      to_mark.push_back(d);
      if (unmark == 0) unmark = d;
    }
  }
  ASSERT_EQ(to_mark.size(), 5u);
  for (DocId d : to_mark) {
    auto x = lmdb->MarkTemplate(d);
    auto y = redis->MarkTemplate(d);
    ASSERT_EQ(x.status().code(), y.status().code()) << d << ": " << x.status().ToString();
    if (!x.ok()) continue;
    EXPECT_EQ(MarkContent(*x), MarkContent(*y)) << d;
    marked_a.insert(MarkContent(*x));
    marked_b.insert(MarkContent(*y));
  }
  EXPECT_EQ(marked_a.size(), 4u);
  EXPECT_EQ(redis->MarkTemplate(n + 1000).status().code(), StatusCode::kNotFound);
  auto list = [](store::Store& s) {
    std::set<decltype(MarkContent({}))> out;
    auto m = s.TemplateMarks(0, 100);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (m.ok()) {
      for (const auto& x : *m) out.insert(MarkContent(x));
    }
    return out;
  };
  EXPECT_EQ(list(*lmdb), marked_a);
  EXPECT_EQ(list(*redis), marked_b);
  auto compare_all = [&](const char* when) {
    SCOPED_TRACE(when);
    for (DocId a = 1; a + 1 <= n; ++a) {
      auto x = lmdb->BytesInCommon(a, a + 1, 4);
      auto y = redis->BytesInCommon(a, a + 1, 4);
      ASSERT_TRUE(x.ok() && y.ok());
      ExpectSameCommon(*x, *y);
    }
  };
  compare_all("marked");
  rules.clear();
  compare_templates();
  EXPECT_TRUE(rules.contains("marked"));
  // Unmark one (by a member's id), then the rest of the corpus with the others still marked.
  auto ua = lmdb->UnmarkTemplate(unmark);
  auto ub = redis->UnmarkTemplate(unmark);
  ASSERT_TRUE(ua.ok() && ub.ok());
  ASSERT_TRUE(ua->has_value() && ub->has_value());
  EXPECT_EQ(MarkContent(**ua), MarkContent(**ub));
  auto again = redis->UnmarkTemplate(unmark);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
  EXPECT_EQ(list(*lmdb), list(*redis));
  compare_all("one unmarked");
  for (size_t i = 0; i < sweeps[2].size(); i += 40) {
    apply({sweeps[2].data() + i, std::min<size_t>(40, sweeps[2].size() - i)});
    if (HasFailure()) return;
  }
  compare_all("after the last sweep");
  // The similarity queries with chunks: containment candidates through them and each
  // result's bytes in common, by document and by a page's sketch.
  size_t from_chunks = 0, known_similar_commons = 0;
  auto same_similar = [&](const StatusOr<std::vector<store::SimilarDoc>>& a,
                          const StatusOr<std::vector<store::SimilarDoc>>& b) {
    ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << " / " << b.status().ToString();
    ASSERT_EQ(a->size(), b->size());
    for (size_t i = 0; i < a->size(); ++i) {
      const store::SimilarDoc &x = (*a)[i], &y = (*b)[i];
      SCOPED_TRACE("result " + std::to_string(i));
      EXPECT_EQ(x.doc, y.doc);
      EXPECT_DOUBLE_EQ(x.resemblance, y.resemblance);
      EXPECT_DOUBLE_EQ(x.containment_of_query, y.containment_of_query);
      EXPECT_DOUBLE_EQ(x.containment_in_query, y.containment_in_query);
      EXPECT_EQ(x.containment_from, y.containment_from);
      EXPECT_EQ(x.features_in_common, y.features_in_common);
      EXPECT_EQ(x.url, y.url);
      ExpectSameCommon(x.common, y.common);
      from_chunks += x.containment_from == store::ContainmentSource::kChunks;
      known_similar_commons += x.common.known;
    }
  };
  store::QueryOptions q;
  q.threshold = 0.3;
  for (DocId d = 1; d <= n; ++d) {
    SCOPED_TRACE("similar to document " + std::to_string(d));
    same_similar(lmdb->SimilarToDocument(d, q), redis->SimilarToDocument(d, q));
    if (HasFatalFailure()) return;
  }
  for (size_t i = 0; i < sweeps[1].size(); i += 7) {
    SCOPED_TRACE("similar to the sketch of " + sweeps[1][i].url);
    same_similar(lmdb->SimilarToSketch(sweeps[1][i].sketch, q),
                 redis->SimilarToSketch(sweeps[1][i].sketch, q));
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(from_chunks, 0u);
  EXPECT_GT(known_similar_commons, 100u);
  // The clusters report by bytes in common (paper 003, figure 5), whole and limited.
  // Any bytes in common link (the low template limits make most of a family's chunks template).
  store::ClusterReportOptions report;
  report.min_bytes = 1;
  ExpectSameClusterReport(*lmdb, *redis, report);
  report.limit = 5;
  report.max_urls = 1;
  report.max_pairs_per_doc = 1;
  ExpectSameClusterReport(*lmdb, *redis, report);
  // Check: the chunk records and the marks are whole; then three kinds of damage, each named.
  auto check = redis->Check();
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  for (const std::string& p : *check) ADD_FAILURE() << p;
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  // A chunk record of an id reserved (as a daemon that died after reserving a block leaves it)
  // and never a document.
  auto reserved = client->Run(Cmd({"INCRBY", listings::kDocCounter, "16"}));
  ASSERT_TRUE(reserved.ok()) << reserved.status().ToString();
  const DocId stray = static_cast<DocId>(reserved->integer);
  const std::vector<dedup::Chunk> one = {{0x1234567890abcdefull, 100}};
  ASSERT_TRUE(client
                  ->Run(Cmd({"HSET", chunks::IdBucketOf('C', stray, 4), std::to_string(stray),
                             store::internal::EncodeDocChunks(one)}))
                  .ok());
  ASSERT_TRUE(client->Run(Cmd({"HSET", "tmarks", "424242", "not a mark"})).ok());
  const uint64_t unmarked = 0xab00000000000001ull;
  ASSERT_TRUE(client
                  ->Run(Cmd({"HSET", BucketKey(Relation::kTemplate, unmarked, 8),
                             ValueField(unmarked, 8), "77"}))
                  .ok());
  check = redis->Check();
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  std::string all;
  for (const std::string& p : *check) all.append(p).append("\n");
  const std::string s = std::to_string(stray);
  for (const std::string& want :
       {"chunks of document " + s + ", which has no record",
        "document " + s + ": its chunk " + std::to_string(one[0].hash) + " does not list it",
        std::string("template mark of cluster 424242: "),
        "the entry of template chunk " + std::to_string(unmarked) +
            " names cluster 77, whose mark does not hold it"}) {
    EXPECT_NE(all.find(want), std::string::npos) << want << " not in:\n" << all;
  }
  EXPECT_EQ(check->size(), 4u) << all;
  std::printf(
      "%zu documents; %zu pairs with bytes in common known; %zu containment matches; similar: "
      "%zu results by containment from chunks, %zu with bytes in common known\n",
      size_t(n), known_commons, containment_matches, from_chunks, known_similar_commons);
}

}  // namespace
}  // namespace shingled::redis::testing
