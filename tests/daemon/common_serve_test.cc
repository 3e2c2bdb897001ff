// GET /v1/documents/A/common/B and the `common` objects of /v1/similar and POST /v1/pages
// against the real daemon. The store is filled first through the store's API with
// pages whose chunks are those of real random text (tests/store/chunk_text.h), as the TTTD
// chunker will fill Sketch::chunks; the daemon then serves it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "dedup/sketch.h"
#include "store/store.h"
#include "tests/daemon/daemon_harness.h"
#include "tests/daemon/run_shingled.h"
#include "tests/store/chunk_text.h"
#include "tests/store/synthetic.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

json GetJson(int port, const std::string& target, int* status, const std::string& headers = "") {
  HttpClient client(port);
  HttpResponse r = client.Request("GET", target, "", "", headers);
  *status = r.status;
  return json::parse(r.body, nullptr, /*allow_exceptions=*/false);
}

// Fills a store in `store_dir`: document 1 holds text `a`, 2 text `b` (both with chunks; 2's
// shingles are near 1's, so they are similar), 3 no chunks. Returns BytesInCommon(2, 1).
store::CommonBytes FillStore(const std::string& store_dir, const std::string& a,
                             const std::string& b) {
  store::CommonBytes truth;
  {
    auto context = dedup::SketchContext::Create(dedup::SketchParams{});
    if (!context.ok()) return truth;
    store::StoreOptions options;
    options.durable = false;
    auto opened = store::Store::Open(store_dir, options, **context);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return truth;
    store::Store& s = **opened;
    const store::SweepId sweep = s.OpenSweep("s1", 10)->id;
    const dedup::SketchParams& p = (*context)->params();
    std::vector<store::PageInput> pages(3);
    pages[0].url = "http://site.example/a";
    pages[0].sketch = store::testing::SyntheticSketch(p, store::testing::Range(0, 400));
    pages[0].sketch.chunks = store::testing::ChunkText(a);
    pages[1].url = "http://site.example/b";
    pages[1].sketch =
        store::testing::SyntheticSketch(p, store::testing::Variant(0, 400, 390, 70000));
    pages[1].sketch.chunks = store::testing::ChunkText(b);
    pages[2].url = "http://site.example/old";  // stored without chunks
    pages[2].sketch = store::testing::SyntheticSketch(p, store::testing::Range(5000, 400));
    for (store::PageInput& page : pages) {
      page.sweep = sweep;
      page.date = 10;
    }
    auto r = s.Apply(pages);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return truth;
    EXPECT_EQ((*r)[1].doc, 2u);
    auto c = s.BytesInCommon(2, 1);
    if (!c.ok()) return truth;
    truth = *c;
    EXPECT_EQ(truth.relation, store::CommonRelation::kAContainsB);
  }
  return truth;
}

TEST(CommonServeTest, RouteSimilarAndPages) {
  TempDir dir;
  const std::string store_dir = dir.path() + "/store";
  std::mt19937_64 rng(32);
  const std::string article = store::testing::RandomText(rng, 9000);
  const std::string a = article;
  const std::string b = store::testing::RandomText(rng, 20000) + article;
  const store::CommonBytes truth = FillStore(store_dir, a, b);
  ASSERT_TRUE(truth.known);

  const std::string token_file = dir.WriteSecret("token", "s3cret-token-0123\n");
  Daemon daemon(dir, store_dir,
                "[auth]\ntoken_file = \"" + token_file + "\"\nprotect_reads = true\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const int port = daemon.port();
  const std::string auth = "Authorization: Bearer s3cret-token-0123\r\n";
  int status = 0;

  // Behind the read token like the other GETs.
  GetJson(port, "/v1/documents/2/common/1", &status);
  EXPECT_EQ(status, 401);

  json j = GetJson(port, "/v1/documents/2/common/1", &status, auth);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["a"], 2);
  EXPECT_EQ(j["b"], 1);
  const json& common = j["common"];
  EXPECT_EQ(common["relation"], "a_contains_b");
  EXPECT_EQ(common["shared_bytes"], truth.shared_bytes);
  EXPECT_EQ(common["length_a"], b.size());
  EXPECT_EQ(common["length_b"], a.size());
  EXPECT_LE(common["shared_bytes"].get<uint64_t>(), article.size());
  EXPECT_DOUBLE_EQ(common["share_b"].get<double>(), truth.share_b);
  ASSERT_EQ(common["spans"].size(), std::min<size_t>(truth.shared_chunks, 100));
  for (const json& span : common["spans"]) {
    const size_t oa = span["offset_a"], ob = span["offset_b"], n = span["length"];
    EXPECT_EQ(b.substr(oa, n), a.substr(ob, n));
  }
  EXPECT_EQ(common["spans_truncated"], truth.shared_chunks > 100);

  j = GetJson(port, "/v1/documents/2/common/1?limit=1", &status, auth);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["common"]["spans"].size(), 1u);
  EXPECT_EQ(j["common"]["spans_truncated"], true);
  j = GetJson(port, "/v1/documents/2/common/1?limit=0", &status, auth);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["common"]["spans"].size(), 0u);

  // A document stored without chunks: unknown, not 0.
  j = GetJson(port, "/v1/documents/1/common/3", &status, auth);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["common"]["chunks"], "unknown");
  EXPECT_EQ(j["common"]["a_chunks"], true);
  EXPECT_EQ(j["common"]["b_chunks"], false);
  EXPECT_FALSE(j["common"].contains("shared_bytes"));

  // Bad input.
  for (const char* target :
       {"/v1/documents/0/common/1", "/v1/documents/x/common/1", "/v1/documents/1/common/",
        "/v1/documents/1/common/2/3", "/v1/documents/1/common/2?limit=1001",
        "/v1/documents/1/common/2?limit=-1",
        "/v1/documents/1/common/2?limit=", "/v1/documents/1/common/2?spans=3"}) {
    j = GetJson(port, target, &status, auth);
    EXPECT_EQ(status, 400) << target << " " << j.dump();
    EXPECT_EQ(j["error"]["code"], "invalid_argument") << target << " " << j.dump();
  }
  j = GetJson(port, "/v1/documents/1/common/99", &status, auth);
  EXPECT_EQ(status, 404) << j.dump();
  {
    HttpClient client(port);
    EXPECT_EQ(client.Request("POST", "/v1/documents/1/common/2", "", "", auth).status, 405);
  }
  // The document route itself is unchanged.
  j = GetJson(port, "/v1/documents/1", &status, auth);
  EXPECT_EQ(status, 200) << j.dump();

  // /v1/similar: each result's bytes in common with the query (a = the query).
  j = GetJson(port, "/v1/similar?url=http://site.example/b", &status, auth);
  ASSERT_EQ(status, 200) << j.dump();
  ASSERT_EQ(j["results"].size(), 1u) << j.dump();
  EXPECT_EQ(j["results"][0]["doc"], 1);
  EXPECT_EQ(j["results"][0]["common"]["shared_bytes"], truth.shared_bytes);
  EXPECT_EQ(j["results"][0]["common"]["relation"], "a_contains_b");
  EXPECT_FALSE(j["results"][0]["common"].contains("spans"));

  // POST /v1/pages: each match carries a `common` object. The daemon's sketches carry the
  // chunker's chunks once it is in (dedup/chunker.h); until then they are unknown.
  const std::string html =
      "<html><body><p>" + store::testing::RandomText(rng, 3000) + "</p></body></html>";
  for (const char* url : {"http://site.example/p1", "http://site.example/p2"}) {
    HttpClient client(port);
    HttpResponse r = client.Request("POST", std::string("/v1/pages?sweep=s1&url=") + url, html,
                                    "text/html", auth);
    ASSERT_EQ(r.status, 200) << r.body;
    j = json::parse(r.body);
  }
  EXPECT_EQ(j["verdict"], "duplicate") << j.dump();
  ASSERT_EQ(j["matches"].size(), 1u) << j.dump();
  const json& match_common = j["matches"][0]["common"];
  if (match_common.contains("chunks")) {
    EXPECT_EQ(match_common["chunks"], "unknown");
  } else {
    EXPECT_EQ(match_common["relation"], "near_identical") << j.dump();
    EXPECT_EQ(match_common["share_a"], 1.0);
  }
}

// `shingled compare --docs A B` on the store, and `compare` of two files carrying `common`.
TEST(CommonServeTest, CliCompare) {
  TempDir dir;
  const std::string store_dir = dir.path() + "/store";
  std::mt19937_64 rng(33);
  const std::string a = store::testing::RandomText(rng, 9000);
  const std::string b = store::testing::RandomText(rng, 20000) + a;
  const store::CommonBytes truth = FillStore(store_dir, a, b);
  ASSERT_TRUE(truth.known);
  std::string err;
  CliResult r = RunShingled("compare --docs 2 1 --store " + store_dir + " --json", &err);
  ASSERT_EQ(r.exit_code, 0) << err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["a"], 2);
  EXPECT_EQ(j["common"]["shared_bytes"], truth.shared_bytes);
  EXPECT_EQ(j["common"]["relation"], "a_contains_b");
  EXPECT_EQ(j["common"]["spans"].size(), truth.shared_chunks);
  r = RunShingled("compare --docs 2 1 --store " + store_dir, &err);
  ASSERT_EQ(r.exit_code, 0) << err;
  EXPECT_NE(r.out.find("\"relation\":\"a_contains_b\""), std::string::npos) << r.out;
  r = RunShingled("compare --docs 1 3 --store " + store_dir + " --json", &err);
  ASSERT_EQ(r.exit_code, 0) << err;
  EXPECT_EQ(json::parse(r.out)["common"]["chunks"], "unknown");

  r = RunShingled("compare --docs 2 99 --store " + store_dir, &err);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(err.find("document 99 not found"), std::string::npos) << err;
  EXPECT_EQ(RunShingled("compare --docs 0 1 --store " + store_dir).exit_code, 2);
  EXPECT_EQ(RunShingled("compare --docs 1 --store " + store_dir).exit_code, 2);
  EXPECT_EQ(RunShingled("compare --docs 1 2 --store " + dir.path() + "/none").exit_code, 1);

  // Two files: `common` from their chunks (unknown while the sketch makes none).
  const std::string fa = dir.Write("a.txt", a), fb = dir.Write("b.txt", b);
  r = RunShingled("compare --json " + fa + " " + fb, &err);
  ASSERT_EQ(r.exit_code, 0) << err;
  j = json::parse(r.out);
  ASSERT_TRUE(j.contains("common")) << r.out;
  if (!j["common"].contains("chunks")) {
    EXPECT_EQ(j["common"]["relation"], "b_contains_a") << r.out;  // a.txt sits inside b.txt
  }
}

}  // namespace
}  // namespace shingled::testing
