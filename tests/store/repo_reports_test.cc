// The repository reports (paper 003 figures 5 and 6) on a generated repository with
// known copies, containments and groups (tests/store/repo_files.h), stored with real sketches
// and TTTD chunks of their text, as `shingled ingest` stores files.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dedup/sketch.h"
#include "store/store.h"
#include "tests/store/repo_files.h"
#include "tests/store/store_fixture.h"

namespace shingled::store {
namespace {

using testing::RepoFile;

constexpr const char* kRoot = "file:///repo/";

class RepoReportsTest : public testing::StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto ctx = dedup::SketchContext::Create(params_);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    context_ = *ctx;
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
    sweep_ = store_->OpenSweep("s", 1)->id;
  }

  PageResult Put(const std::string& path, const std::string& text) {
    PageInput p;
    p.url = kRoot + path;
    p.sweep = sweep_;
    p.date = ++date_;
    p.sketch = dedup::SketchPage(*context_, text, "text/plain");
    auto r = store_->Apply(std::span(&p, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r.ok() && (*r)[0].status.ok()) << path;
    return r.ok() ? (*r)[0] : PageResult{};
  }

  // Stores the repository; `docs_` maps each path to its document.
  void PutRepository() {
    for (const RepoFile& f : testing::RepoFiles()) {
      docs_[f.path] = Put(f.path, f.text).doc;
      bytes_[f.path] = f.text.size();
    }
  }

  std::vector<IdenticalReportSet> Identical(const IdenticalReportOptions& options,
                                            IdenticalReportTotals* totals) {
    std::vector<IdenticalReportSet> rows;
    Status s = store_->StreamIdenticalReport(
        options,
        [&](const IdenticalReportTotals& t) {
          *totals = t;
          EXPECT_TRUE(rows.empty()) << "the totals come first";
          return OkStatus();
        },
        [&](const IdenticalReportSet& row) {
          rows.push_back(row);
          return OkStatus();
        });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return rows;
  }

  std::vector<ClusterReportCluster> Clusters(const ClusterReportOptions& options,
                                             ClusterReportTotals* totals) {
    std::vector<ClusterReportCluster> rows;
    Status s = store_->StreamClusterReport(
        options,
        [&](const ClusterReportCluster& c) {
          rows.push_back(c);
          return OkStatus();
        },
        totals);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return rows;
  }

  // The paths of a cluster's documents, sorted.
  std::set<std::string> Paths(const ClusterReportCluster& c) {
    std::set<std::string> out;
    for (const ClusterReportDocument& d : c.documents) {
      for (const auto& [path, doc] : docs_) {
        if (doc == d.doc) out.insert(path);
      }
    }
    return out;
  }

  std::shared_ptr<const dedup::SketchContext> context_;
  std::unique_ptr<Store> store_;
  SweepId sweep_ = 0;
  int64_t date_ = 1;
  std::map<std::string, DocId> docs_;
  std::map<std::string, uint64_t> bytes_;
};
SHINGLED_STORE_ENGINES(RepoReportsTest);

TEST_P(RepoReportsTest, IdenticalListsExactlyTheCopiesLargestWasteFirst) {
  PutRepository();
  IdenticalReportTotals totals;
  std::vector<IdenticalReportSet> rows = Identical({}, &totals);
  ASSERT_EQ(rows.size(), 2u);
  const uint64_t b3 = bytes_["a/copy3.txt"], b2 = bytes_["a/copy2.txt"];
  EXPECT_EQ(totals.sets, 2u);
  EXPECT_EQ(totals.files, 5u);
  EXPECT_EQ(totals.wasted_bytes, 2 * b3 + b2);
  EXPECT_EQ(totals.listed, 2u);

  EXPECT_EQ(rows[0].rank, 1u);
  EXPECT_EQ(rows[0].doc, docs_["a/copy3.txt"]);
  EXPECT_EQ(rows[0].bytes, b3);
  EXPECT_EQ(rows[0].copies, 3u);
  EXPECT_EQ(rows[0].wasted_bytes, 2 * b3);
  EXPECT_EQ(rows[0].urls, (std::vector<std::string>{std::string(kRoot) + "a/copy3.txt",
                                                    std::string(kRoot) + "b/copy3.txt",
                                                    std::string(kRoot) + "c/copy3.txt"}));
  EXPECT_EQ(rows[1].rank, 2u);
  EXPECT_EQ(rows[1].doc, docs_["a/copy2.txt"]);
  EXPECT_EQ(rows[1].copies, 2u);
  EXPECT_EQ(rows[1].wasted_bytes, b2);
  EXPECT_EQ(rows[1].urls.size(), 2u);

  // A limit lists fewer sets, the totals still count all; max_urls cuts the URLs, not copies.
  IdenticalReportOptions options;
  options.limit = 1;
  options.max_urls = 1;
  rows = Identical(options, &totals);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(totals.sets, 2u);
  EXPECT_EQ(totals.listed, 1u);
  EXPECT_EQ(rows[0].copies, 3u);
  EXPECT_EQ(rows[0].urls.size(), 1u);
}

TEST_P(RepoReportsTest, IdenticalCountsLiveUrlsOnly) {
  const std::string text = testing::RepoFiles()[0].text;
  Put("x/one.txt", text);
  Put("x/two.txt", text);
  IdenticalReportTotals totals;
  EXPECT_EQ(Identical({}, &totals).size(), 1u);
  // One of the two URLs now holds other content: no set left.
  std::mt19937_64 rng(7);
  Put("x/two.txt", testing::RandomText(rng, 2000));
  EXPECT_TRUE(Identical({}, &totals).empty());
  EXPECT_EQ(totals.sets, 0u);
  EXPECT_EQ(totals.wasted_bytes, 0u);
}

TEST_P(RepoReportsTest, ClustersListExactlyThePairTheContainmentAndTheGroup) {
  PutRepository();
  ClusterReportTotals totals;
  std::vector<ClusterReportCluster> rows = Clusters({}, &totals);
  std::map<std::set<std::string>, ClusterReportCluster> by_paths;
  for (const ClusterReportCluster& c : rows) by_paths[Paths(c)] = c;
  const std::set<std::string> pair{"pair/a.txt", "pair/b.txt"};
  const std::set<std::string> contains{"contains/long.txt", "contains/short.txt"};
  const std::set<std::string> group{"group/1.txt", "group/2.txt", "group/3.txt"};
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(by_paths.count(pair), 1u);
  ASSERT_EQ(by_paths.count(contains), 1u);
  ASSERT_EQ(by_paths.count(group), 1u);

  const ClusterReportCluster& p = by_paths[pair];
  EXPECT_EQ(p.type, ClusterReportType::kPair);
  ASSERT_EQ(p.links.size(), 1u);
  EXPECT_EQ(p.links[0].relation, CommonRelation::kNearIdentical);
  EXPECT_EQ(p.bytes, bytes_["pair/a.txt"] + bytes_["pair/b.txt"]);
  EXPECT_EQ(p.removable_bytes, p.bytes - std::max(bytes_["pair/a.txt"], bytes_["pair/b.txt"]));
  EXPECT_GT(p.average_similarity, 0.6);
  EXPECT_LE(p.average_similarity, 1.0);
  EXPECT_DOUBLE_EQ(p.average_similarity, p.links[0].similarity);

  const ClusterReportCluster& k = by_paths[contains];
  EXPECT_EQ(k.type, ClusterReportType::kContains);
  ASSERT_EQ(k.links.size(), 1u);
  EXPECT_EQ(k.keep, docs_["contains/long.txt"]);
  EXPECT_EQ(k.removable_bytes, bytes_["contains/short.txt"]);
  // The short file is the earlier document: the later, long one contains it.
  EXPECT_EQ(k.links[0].relation, CommonRelation::kBContainsA);
  EXPECT_GE(k.links[0].share_a, 0.75);
  EXPECT_LT(k.links[0].share_b, 0.75);

  const ClusterReportCluster& g = by_paths[group];
  EXPECT_EQ(g.type, ClusterReportType::kGroup);
  EXPECT_EQ(g.links.size(), 3u);
  EXPECT_EQ(g.documents.size(), 3u);
  uint64_t largest = 0;
  for (const char* f : {"group/1.txt", "group/2.txt", "group/3.txt"}) {
    largest = std::max(largest, bytes_[f]);
  }
  EXPECT_EQ(g.removable_bytes, g.bytes - largest);
  double sum = 0;
  for (const ClusterReportLink& l : g.links) {
    EXPECT_LT(l.a, l.b);
    EXPECT_GE(l.shared_bytes, 1000u);
    sum += l.similarity;
  }
  EXPECT_DOUBLE_EQ(g.average_similarity, sum / 3);

  // Every cluster's documents show their live URLs; ranks run from 1; the totals add up.
  uint64_t docs = 0, links = 0, removable = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].rank, i + 1);
    EXPECT_EQ(rows[i].id, rows[i].documents.front().doc);
    for (const ClusterReportDocument& d : rows[i].documents) {
      EXPECT_EQ(d.live_urls, 1u);
      ASSERT_EQ(d.urls.size(), 1u);
      EXPECT_EQ(d.urls[0].rfind(kRoot, 0), 0u);
    }
    docs += rows[i].documents.size();
    links += rows[i].links.size();
    removable += rows[i].removable_bytes;
  }
  EXPECT_EQ(totals.clusters, 3u);
  EXPECT_EQ(totals.documents, docs);
  EXPECT_EQ(totals.links, links);
  EXPECT_EQ(totals.removable_bytes, removable);
  EXPECT_GE(totals.partitions, 3u);
  EXPECT_EQ(totals.pairs_unchecked, 0u);
  EXPECT_EQ(totals.documents_without_chunks, 0u);
  EXPECT_FALSE(totals.limited);
}

TEST_P(RepoReportsTest, ClustersLeaveOutOldVersionsAndSingleDocuments) {
  std::mt19937_64 rng(11);
  const std::string text = testing::RandomText(rng, 6000);
  Put("changed.txt", text);
  // The same URL, slightly edited: the old document shares chunks with the new one but no URL
  // holds it now, so there is nothing to weed.
  Put("changed.txt", testing::ReplacePassage(rng, text, 3000, 200));
  ClusterReportTotals totals;
  EXPECT_TRUE(Clusters({}, &totals).empty());
  EXPECT_EQ(totals.clusters, 0u);

  // Two live documents whose bytes in common stay under both thresholds: not
  // linked, so each is a component of one, not listed.
  Put("other.txt", testing::ReplacePassage(rng, text, 3000, 200));
  ClusterReportOptions strict;
  strict.min_bytes = 100000;
  strict.min_share = 1;
  EXPECT_TRUE(Clusters(strict, &totals).empty());
  EXPECT_GT(totals.pairs_checked, 0u);
  EXPECT_EQ(Clusters({}, &totals).size(), 1u);
}

TEST_P(RepoReportsTest, ClusterWorkIsBoundedAndCounted) {
  PutRepository();
  // One pair checked per partition of two or three documents: the group's other two pairs are
  // counted as unchecked, and its one link makes it a component of two.
  ClusterReportOptions options;
  options.max_pairs_per_doc = 1;
  ClusterReportTotals totals;
  std::vector<ClusterReportCluster> rows = Clusters(options, &totals);
  EXPECT_EQ(rows.size(), 3u);
  EXPECT_EQ(totals.pairs_unchecked, 2u);
  for (const ClusterReportCluster& c : rows) {
    EXPECT_EQ(c.documents.size(), 2u);
    const bool in_group = Paths(c).begin()->rfind("group/", 0) == 0;
    EXPECT_EQ(c.partition_pairs_unchecked, in_group ? 2u : 0u);
  }
  // Chunks held by all three group members are too common to join or pair by; the chunks that
  // two of them share (where the third has its own passage) still do, and BytesInCommon counts
  // every chunk, so the report is the same.
  options = ClusterReportOptions{};
  options.max_chunk_docs = 2;
  rows = Clusters(options, &totals);
  EXPECT_GT(totals.chunks_too_common, 0u);
  EXPECT_EQ(rows.size(), 3u);

  // A limit stops the listing.
  options = ClusterReportOptions{};
  options.limit = 1;
  rows = Clusters(options, &totals);
  EXPECT_EQ(rows.size(), 1u);
  EXPECT_EQ(totals.clusters, 1u);
  EXPECT_TRUE(totals.limited);
}

TEST_P(RepoReportsTest, BadOptionsAreRefused) {
  ClusterReportTotals totals;
  auto refused = [&](const ClusterReportOptions& o) {
    Status s = store_->StreamClusterReport(
        o, [](const ClusterReportCluster&) { return OkStatus(); }, &totals);
    return s.code() == StatusCode::kInvalidArgument;
  };
  ClusterReportOptions o;
  o.min_share = 1.5;
  EXPECT_TRUE(refused(o));
  o = {};
  o.min_bytes = 0;
  o.min_share = 0;
  EXPECT_TRUE(refused(o));
  o = {};
  o.max_chunk_docs = 1;
  EXPECT_TRUE(refused(o));
  o = {};
  o.max_pairs_per_doc = 0;
  EXPECT_TRUE(refused(o));
  IdenticalReportOptions i;
  i.limit = 0;
  Status s = store_->StreamIdenticalReport(
      i, [](const IdenticalReportTotals&) { return OkStatus(); },
      [](const IdenticalReportSet&) { return OkStatus(); });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST_P(RepoReportsTest, ACallbackErrorStopsTheReport) {
  PutRepository();
  int calls = 0;
  ClusterReportTotals totals;
  Status s = store_->StreamClusterReport(
      {},
      [&](const ClusterReportCluster&) {
        ++calls;
        return InternalError("write failed");
      },
      &totals);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(calls, 1);
}

// A large shared header joins every file of a repository into one cluster until the
// header is template, recognised by the document limit or marked by an operator; then the
// clusters are by real content (here one near-identical pair), and unmarking restores them.
TEST_P(RepoReportsTest, ClustersHeldByATemplateDissolveOnceItIsTemplate) {
  std::mt19937_64 rng(0x7e3);
  const std::string header = testing::RandomText(rng, 8000);
  for (int i = 0; i < 5; ++i) {
    const std::string path = "page/" + std::to_string(i) + ".txt";
    docs_[path] = Put(path, header + testing::RandomText(rng, 2500)).doc;
  }
  const std::string pair = testing::RandomText(rng, 3000);
  docs_["pair/a.txt"] = Put("pair/a.txt", header + pair).doc;
  docs_["pair/b.txt"] =
      Put("pair/b.txt", header + testing::ReplacePassage(rng, pair, 1400, 200)).doc;
  // Two files that are nothing but the header: one store cluster, held together by it.
  docs_["only/1.txt"] = Put("only/1.txt", header + "first").doc;
  const PageResult only2 = Put("only/2.txt", header + "second");
  docs_["only/2.txt"] = only2.doc;
  ASSERT_NE(only2.cluster, only2.doc) << "the header-only files are one cluster";

  const std::set<std::string> everything = {"page/0.txt", "page/1.txt", "page/2.txt",
                                            "page/3.txt", "page/4.txt", "pair/a.txt",
                                            "pair/b.txt", "only/1.txt", "only/2.txt"};
  const std::set<std::string> real = {"pair/a.txt", "pair/b.txt"};
  auto clusters = [&] {
    ClusterReportTotals totals;
    std::vector<std::set<std::string>> out;
    for (const ClusterReportCluster& c : Clusters(ClusterReportOptions{}, &totals)) {
      out.push_back(Paths(c));
    }
    return out;
  };
  EXPECT_EQ(clusters(), std::vector<std::set<std::string>>{everything}) << "before: one cluster";

  // Marked by an operator: the chunks the header-only cluster shares become template.
  ASSERT_TRUE(store_->MarkTemplate(only2.cluster).ok());
  EXPECT_EQ(clusters(), std::vector<std::set<std::string>>{real}) << "marked";
  ASSERT_TRUE(store_->UnmarkTemplate(only2.cluster).ok());
  EXPECT_EQ(clusters(), std::vector<std::set<std::string>>{everything}) << "unmarked";

  // Recognised: the header's chunks are in 9 documents, over a limit of 8.
  store_.reset();
  StoreOptions o;
  o.template_max_docs = 8;
  store_ = OpenStore(o);
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(clusters(), std::vector<std::set<std::string>>{real}) << "over the document limit";
}

}  // namespace
}  // namespace shingled::store
