// Templates against the real daemon and the real command line: POST and DELETE
// /v1/clusters/ID/template, GET /v1/templates, the `template_bytes` of the `common` objects, and
// `shingled template mark|unmark|list`. The store is filled first through the store's API with
// pages whose chunks are those of random text under one large shared header.
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

// Only marks make templates here: the limits are out of reach.
constexpr char kNoLimits[] =
    "[store]\ntemplate_max_docs = 1000000\ntemplate_min_host_pages = 1000000\n";

json Call(int port, const std::string& method, const std::string& target, int* status,
          const std::string& headers = "") {
  HttpClient client(port);
  HttpResponse r = client.Request(method, target, "", "", headers);
  *status = r.status;
  return json::parse(r.body, nullptr, /*allow_exceptions=*/false);
}

// Documents 1-3: one cluster (equivalent sketches), the header and distinct content each;
// 4 and 5: pages of other content under the same header, with similar sketches (so that
// /v1/similar finds one from the other); 6: alone. Returns BytesInCommon(4, 5) before any mark.
store::CommonBytes FillStore(const std::string& store_dir) {
  store::CommonBytes before;
  auto context = dedup::SketchContext::Create(dedup::SketchParams{});
  if (!context.ok()) return before;
  store::StoreOptions options;
  options.durable = false;
  options.template_max_docs = 1000000;
  options.template_min_host_pages = 1000000;
  auto opened = store::Store::Open(store_dir, options, **context);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  if (!opened.ok()) return before;
  store::Store& s = **opened;
  const store::SweepId sweep = s.OpenSweep("s1", 10)->id;
  const dedup::SketchParams& p = (*context)->params();
  std::mt19937_64 rng(32);
  const std::string header = store::testing::RandomText(rng, 8000);
  for (int i = 0; i < 6; ++i) {
    store::PageInput page;
    page.url = "http://site.example/" + std::to_string(i);
    page.sweep = sweep;
    page.date = 10;
    if (i < 3) {
      page.sketch = store::testing::SyntheticSketch(p, store::testing::Range(0, 400),
                                                    static_cast<uint64_t>(i));
    } else if (i == 4) {
      page.sketch =
          store::testing::SyntheticSketch(p, store::testing::Variant(3000, 400, 390, 70000));
    } else {
      page.sketch = store::testing::SyntheticSketch(p, store::testing::Range(1000 * i, 400));
    }
    page.sketch.chunks = store::testing::ChunkText(header + store::testing::RandomText(rng, 2500));
    StatusOr<std::vector<store::PageResult>> r = s.Apply(std::span(&page, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return before;
    EXPECT_EQ((*r)[0].doc, static_cast<store::DocId>(i + 1));
  }
  EXPECT_EQ(s.Cluster(3)->id, 1u);
  StatusOr<store::CommonBytes> c = s.BytesInCommon(4, 5);
  if (c.ok()) before = *c;
  return before;
}

TEST(TemplateServeTest, MarkUnmarkAndList) {
  TempDir dir;
  const std::string store_dir = dir.path() + "/store";
  const store::CommonBytes before = FillStore(store_dir);
  ASSERT_GE(before.shared_bytes, 6000u);

  const std::string token_file = dir.WriteSecret("token", "s3cret-token-0123\n");
  Daemon daemon(dir, store_dir,
                std::string(kNoLimits) + "[auth]\ntoken_file = \"" + token_file + "\"\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const int port = daemon.port();
  const std::string auth = "Authorization: Bearer s3cret-token-0123\r\n";
  int status = 0;

  json j = Call(port, "GET", "/v1/documents/4/common/5", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["common"]["shared_bytes"], before.shared_bytes);
  EXPECT_EQ(j["common"]["template_bytes"], 0);

  // A write: behind the token.
  Call(port, "POST", "/v1/clusters/1/template", &status);
  EXPECT_EQ(status, 401);
  Call(port, "DELETE", "/v1/clusters/1/template", &status);
  EXPECT_EQ(status, 401);

  j = Call(port, "POST", "/v1/clusters/2/template", &status, auth);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["cluster"], 1);
  EXPECT_EQ(j["members"], 3);
  EXPECT_EQ(j["marked"], true);
  EXPECT_GE(j["chunks"].get<int>(), 6);
  const uint64_t chunk_bytes = j["chunk_bytes"];
  // Idempotent.
  json again = Call(port, "POST", "/v1/clusters/1/template", &status, auth);
  ASSERT_EQ(status, 200) << again.dump();
  EXPECT_EQ(again["chunk_bytes"], chunk_bytes);

  // The unrelated pages now share nothing but template.
  j = Call(port, "GET", "/v1/documents/4/common/5", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["common"]["shared_bytes"], 0);
  EXPECT_EQ(j["common"]["template_bytes"], before.shared_bytes);
  EXPECT_EQ(j["common"]["relation"], "none");
  j = Call(port, "GET", "/v1/similar?url=http://site.example/3", &status);
  ASSERT_EQ(status, 200) << j.dump();
  ASSERT_FALSE(j["results"].empty()) << j.dump();
  for (const json& r : j["results"]) EXPECT_GT(r["common"]["template_bytes"].get<uint64_t>(), 0u);

  j = Call(port, "GET", "/v1/templates", &status);
  ASSERT_EQ(status, 200) << j.dump();
  ASSERT_EQ(j["templates"].size(), 1u);
  EXPECT_EQ(j["templates"][0]["cluster"], 1);
  EXPECT_EQ(j["templates"][0]["chunk_bytes"], chunk_bytes);
  EXPECT_TRUE(j["next"].is_null());
  j = Call(port, "GET", "/v1/templates?after=1", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_TRUE(j["templates"].empty());

  // Bad input.
  Call(port, "POST", "/v1/clusters/abc/template", &status, auth);
  EXPECT_EQ(status, 400);
  Call(port, "POST", "/v1/clusters/0/template", &status, auth);
  EXPECT_EQ(status, 400);
  Call(port, "POST", "/v1/clusters/999/template", &status, auth);
  EXPECT_EQ(status, 404);
  Call(port, "DELETE", "/v1/clusters/999/template", &status, auth);
  EXPECT_EQ(status, 404);
  Call(port, "POST", "/v1/clusters/6/template", &status, auth);  // one document
  EXPECT_EQ(status, 409);
  Call(port, "POST", "/v1/clusters/1/template?force=1", &status, auth);
  EXPECT_EQ(status, 400);
  Call(port, "GET", "/v1/clusters/1/template", &status, auth);
  EXPECT_EQ(status, 405);
  Call(port, "GET", "/v1/templates?limit=0", &status);
  EXPECT_EQ(status, 400);
  Call(port, "GET", "/v1/templates?after=x", &status);
  EXPECT_EQ(status, 400);
  Call(port, "GET", "/v1/templates?sort=id", &status);
  EXPECT_EQ(status, 400);

  // Unmark: restored, and idempotent.
  j = Call(port, "DELETE", "/v1/clusters/1/template", &status, auth);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["removed"], true);
  EXPECT_EQ(j["marked"], false);
  j = Call(port, "DELETE", "/v1/clusters/1/template", &status, auth);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["removed"], false);
  j = Call(port, "GET", "/v1/documents/4/common/5", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["common"]["shared_bytes"], before.shared_bytes);
  EXPECT_EQ(j["common"]["template_bytes"], 0);
}

TEST(TemplateCliTest, MarkUnmarkListAndCheck) {
  TempDir dir;
  const std::string store_dir = dir.path() + "/store";
  const store::CommonBytes before = FillStore(store_dir);
  ASSERT_GE(before.shared_bytes, 6000u);
  const std::string config = dir.Write("shingled.toml", kNoLimits);
  const std::string flags = " --store " + store_dir + " --config " + config;
  std::string err;
  CliResult r = RunShingled("template mark 3" + flags, &err);
  ASSERT_EQ(r.exit_code, 0) << err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["cluster"], 1);
  EXPECT_EQ(j["members"], 3);

  r = RunShingled("compare --docs 4 5 --json" + flags, &err);
  ASSERT_EQ(r.exit_code, 0) << err;
  j = json::parse(r.out);
  EXPECT_EQ(j["common"]["shared_bytes"], 0);
  EXPECT_EQ(j["common"]["template_bytes"], before.shared_bytes);

  r = RunShingled("template list" + flags, &err);
  ASSERT_EQ(r.exit_code, 0) << err;
  j = json::parse(r.out);
  ASSERT_EQ(j["templates"].size(), 1u);
  EXPECT_EQ(j["templates"][0]["cluster"], 1);

  r = RunShingled("check" + flags, &err);
  EXPECT_EQ(r.exit_code, 0) << r.out << err;

  r = RunShingled("template unmark 1" + flags, &err);
  ASSERT_EQ(r.exit_code, 0) << err;
  EXPECT_EQ(json::parse(r.out)["removed"], true);
  r = RunShingled("compare --docs 4 5 --json" + flags, &err);
  ASSERT_EQ(r.exit_code, 0) << err;
  EXPECT_EQ(json::parse(r.out)["common"]["shared_bytes"], before.shared_bytes);

  // Bad arguments: usage errors (2); an unknown cluster fails (1).
  EXPECT_EQ(RunShingled("template mark" + flags, &err).exit_code, 2);
  EXPECT_NE(err.find("needs a cluster ID"), std::string::npos) << err;
  EXPECT_EQ(RunShingled("template mark abc" + flags).exit_code, 2);
  EXPECT_EQ(RunShingled("template frob 1" + flags).exit_code, 2);
  EXPECT_EQ(RunShingled("template list 1" + flags).exit_code, 2);
  EXPECT_EQ(RunShingled("template mark 999" + flags, &err).exit_code, 1);
  EXPECT_NE(err.find("not found"), std::string::npos) << err;
}

}  // namespace
}  // namespace shingled::testing
