// The repository reports end to end: a generated repository with known copies, a
// containment, a pair and a group (tests/store/repo_files.h) written to a folder and stored by
// `shingled ingest`; `shingled report identical|clusters` and GET /v1/reports/identical|clusters
// list exactly those; bad arguments and parameters are refused.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/daemon/daemon_harness.h"
#include "tests/store/repo_files.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

// The folder with the repository; `*root` its file: URL prefix.
void WriteRepository(const TempDir& dir, std::map<std::string, size_t>* sizes) {
  for (const store::testing::RepoFile& f : store::testing::RepoFiles()) {
    dir.Write("repo/" + f.path, f.text);
    (*sizes)[f.path] = f.text.size();
  }
}

// The path under repo/ of a file: URL.
std::string PathOf(const std::string& url) {
  const size_t at = url.find("/repo/");
  return at == std::string::npos ? url : url.substr(at + 6);
}

void ExpectIdentical(const json& j, const std::map<std::string, size_t>& sizes) {
  ASSERT_TRUE(j.is_object()) << j.dump();
  EXPECT_EQ(j["report"], "identical");
  const size_t b3 = sizes.at("a/copy3.txt"), b2 = sizes.at("a/copy2.txt");
  EXPECT_EQ(j["totals"]["sets"], 2) << j.dump();
  EXPECT_EQ(j["totals"]["files"], 5) << j.dump();
  EXPECT_EQ(j["totals"]["wasted_bytes"], 2 * b3 + b2) << j.dump();
  ASSERT_EQ(j["sets"].size(), 2u) << j.dump();
  EXPECT_EQ(j["sets"][0]["set"], 1);
  EXPECT_EQ(j["sets"][0]["copies"], 3);
  EXPECT_EQ(j["sets"][0]["bytes"], b3);
  EXPECT_EQ(j["sets"][0]["wasted_bytes"], 2 * b3);
  std::set<std::string> paths;
  for (const auto& u : j["sets"][0]["urls"]) paths.insert(PathOf(u.get<std::string>()));
  EXPECT_EQ(paths, (std::set<std::string>{"a/copy3.txt", "b/copy3.txt", "c/copy3.txt"}));
  EXPECT_EQ(j["sets"][1]["copies"], 2);
  EXPECT_EQ(j["sets"][1]["wasted_bytes"], b2);
}

// The clusters by the set of their files' paths.
std::map<std::set<std::string>, json> ClustersByPaths(const json& j) {
  std::map<std::set<std::string>, json> out;
  if (!j.is_object() || !j["clusters"].is_array()) return out;
  for (const json& c : j["clusters"]) {
    std::set<std::string> paths;
    for (const json& m : c["members"]) {
      for (const json& u : m["urls"]) paths.insert(PathOf(u.get<std::string>()));
    }
    out[paths] = c;
  }
  return out;
}

void ExpectClusters(const json& j, const std::map<std::string, size_t>& sizes) {
  ASSERT_TRUE(j.is_object()) << j.dump();
  EXPECT_EQ(j["report"], "clusters");
  EXPECT_EQ(j["settings"]["min_bytes"], 1000);
  ASSERT_EQ(j["clusters"].size(), 3u) << j.dump();
  auto by = ClustersByPaths(j);
  const std::set<std::string> pair{"pair/a.txt", "pair/b.txt"};
  const std::set<std::string> contains{"contains/long.txt", "contains/short.txt"};
  const std::set<std::string> group{"group/1.txt", "group/2.txt", "group/3.txt"};
  ASSERT_EQ(by.count(pair), 1u) << j.dump();
  ASSERT_EQ(by.count(contains), 1u) << j.dump();
  ASSERT_EQ(by.count(group), 1u) << j.dump();
  EXPECT_EQ(by[pair]["type"], "pair");
  EXPECT_EQ(by[pair]["links"], 1);
  EXPECT_EQ(by[pair]["link_list"][0]["relation"], "near_identical");
  EXPECT_EQ(by[contains]["type"], "contains");
  EXPECT_EQ(by[contains]["removable_bytes"], sizes.at("contains/short.txt"));
  EXPECT_EQ(by[group]["type"], "group");
  EXPECT_EQ(by[group]["documents"], 3);
  EXPECT_EQ(by[group]["links"], 3);
  EXPECT_EQ(by[group]["bytes"],
            sizes.at("group/1.txt") + sizes.at("group/2.txt") + sizes.at("group/3.txt"));
  EXPECT_EQ(j["totals"]["clusters"], 3);
  EXPECT_EQ(j["totals"]["documents"], 7);
  EXPECT_EQ(j["totals"]["links"], 5);
  EXPECT_EQ(j["totals"]["pairs_unchecked"], 0);
  EXPECT_EQ(j["totals"]["limited"], false);
}

TEST(RepoReportServeTest, IngestedFolderByTheCommandLineAndTheDaemon) {
  TempDir dir;
  std::map<std::string, size_t> sizes;
  WriteRepository(dir, &sizes);
  const std::string store = dir.path() + "/store";
  const std::string flags = " --store " + store;
  std::string out;
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/repo --sweep repo --quiet" + flags, &out), 0) << out;

  // The command line: JSON and CSV, to standard output and to a file.
  ASSERT_EQ(RunCli("report identical --quiet" + flags, &out), 0) << out;
  ExpectIdentical(json::parse(out, nullptr, false), sizes);
  ASSERT_EQ(RunCli("report identical --format csv --quiet" + flags, &out), 0) << out;
  EXPECT_EQ(out.rfind("set,doc,bytes,copies,wasted_bytes,url\r\n", 0), 0u) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 6) << out;  // the header and 5 URLs
  ASSERT_EQ(RunCli("report clusters --format json --quiet" + flags, &out), 0) << out;
  ExpectClusters(json::parse(out, nullptr, false), sizes);
  const std::string csv_path = dir.path() + "/clusters.csv";
  ASSERT_EQ(RunCli("report clusters --format csv --quiet --output " + csv_path + flags, &out), 0)
      << out;
  const std::string csv = ReadWholeFile(csv_path);
  EXPECT_FALSE(std::filesystem::exists(csv_path + ".partial"));
  EXPECT_EQ(csv.rfind("cluster,row,type,", 0), 0u) << csv;
  // 3 cluster lines, 5 link lines, 7 document lines, and the header.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 16) << csv;
  EXPECT_NE(csv.find(",cluster,contains,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",cluster,group,"), std::string::npos) << csv;
  ASSERT_EQ(RunCli("report clusters --format json --limit 1 --min-bytes 500 --quiet" + flags, &out),
            0)
      << out;
  const json one = json::parse(out, nullptr, false);
  ASSERT_TRUE(one.is_object()) << out;
  EXPECT_EQ(one["clusters"].size(), 1u);
  EXPECT_EQ(one["totals"]["limited"], true);
  // The HTML page stays the default, and is the same report: its settings apply to it too.
  const std::string html_path = dir.path() + "/clusters.html";
  ASSERT_EQ(RunCli("report clusters --output " + html_path + flags, &out), 0) << out;
  const std::string page = ReadWholeFile(html_path);
  EXPECT_NE(page.find("<h1>Clusters by bytes in common</h1>"), std::string::npos);
  for (int rank = 1; rank <= 3; ++rank) {
    EXPECT_NE(page.find("<section id=\"cluster-" + std::to_string(rank) + "\""), std::string::npos)
        << rank;
  }
  EXPECT_EQ(page.find("<section id=\"cluster-4\""), std::string::npos);
  ASSERT_EQ(RunCli("report clusters --limit 1 --min-bytes 500 --quiet" + flags, &out), 0) << out;
  EXPECT_NE(out.find("<section id=\"cluster-1\""), std::string::npos);
  EXPECT_EQ(out.find("<section id=\"cluster-2\""), std::string::npos);
  ASSERT_EQ(RunCli("report identical --format html --quiet" + flags, &out), 0) << out;
  EXPECT_NE(out.find("<h1>Identical content</h1>"), std::string::npos);
  EXPECT_NE(out.find("<tr id=\"set-2\">"), std::string::npos);
  EXPECT_EQ(out.find("<tr id=\"set-3\">"), std::string::npos);

  // Bad usage: exit 2 with a message.
  EXPECT_EQ(RunCli("report clusters --format json --min-share 1.5" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("report clusters --format json --max-chunk-docs 1" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("report clusters --format json --min-bytes 0 --min-share 0" + flags, &out), 2)
      << out;
  EXPECT_NE(out.find("cannot both be 0"), std::string::npos) << out;
  EXPECT_EQ(RunCli("report clusters --format xml" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("report identical --format xml" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("report identical --limit 0" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("report identical --store " + dir.path() + "/nothing-here", &out), 1) << out;

  // The daemon serves the same reports; its reads need the token.
  const std::string token_file = dir.WriteSecret("token", "s3cret-token-0123\n");
  Daemon daemon(dir, store, "[auth]\ntoken_file = \"" + token_file + "\"\nprotect_reads = true\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const int port = daemon.port();
  const std::string auth = "Authorization: Bearer s3cret-token-0123\r\n";
  HttpClient client(port);
  EXPECT_EQ(client.Request("GET", "/v1/reports/identical").status, 401);
  EXPECT_EQ(client.Request("GET", "/v1/reports/clusters").status, 401);
  HttpResponse r = client.Request("GET", "/v1/reports/identical", "", "", auth);
  ASSERT_EQ(r.status, 200) << r.body;
  ExpectIdentical(json::parse(r.body, nullptr, false), sizes);
  r = client.Request("GET", "/v1/reports/clusters", "", "", auth);
  ASSERT_EQ(r.status, 200) << r.body;
  ExpectClusters(json::parse(r.body, nullptr, false), sizes);
  r = client.Request("GET", "/v1/reports/clusters?format=csv&max_urls=1", "", "", auth);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, csv);  // every document has one URL
  r = client.Request("GET", "/v1/reports/identical?format=csv&limit=1&max_urls=2", "", "", auth);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(std::count(r.body.begin(), r.body.end(), '\n'), 3) << r.body;
  r = client.Request("GET", "/v1/reports/clusters?limit=2&min_share=0.9&min_bytes=100000", "", "",
                     auth);
  ASSERT_EQ(r.status, 200) << r.body;
  const json strict = json::parse(r.body, nullptr, false);
  ASSERT_TRUE(strict.is_object()) << r.body;
  EXPECT_EQ(strict["settings"]["min_share"], 0.9);
  // Only the pair shares 90% of the shorter text... and the group's closest pairs may: at most 2.
  EXPECT_LE(strict["clusters"].size(), 2u);

  // Bad parameters: 400 naming what was wrong.
  for (const char* bad :
       {"/v1/reports/identical?limit=0", "/v1/reports/identical?limit=x",
        "/v1/reports/identical?limit=10001", "/v1/reports/identical?format=xml",
        "/v1/reports/identical?max_urls=0", "/v1/reports/identical?min_bytes=1",
        "/v1/reports/clusters?min_share=1.5",
        "/v1/reports/clusters?min_share=", "/v1/reports/clusters?max_chunk_docs=1",
        "/v1/reports/clusters?max_pairs_per_doc=0", "/v1/reports/clusters?min_bytes=-1",
        "/v1/reports/clusters?nope=1", "/v1/reports/clusters?min_bytes=0&min_share=0"}) {
    r = client.Request("GET", bad, "", "", auth);
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
    EXPECT_NE(r.body.find("invalid_argument"), std::string::npos) << bad << " " << r.body;
  }
  // The HTML of the same reports, at /v1/reports/...?format=html and at /reports/...
  for (const char* path : {"/v1/reports/clusters?format=html", "/reports/clusters"}) {
    r = client.Request("GET", path, "", "", auth);
    ASSERT_EQ(r.status, 200) << path << r.body;
    EXPECT_EQ(r.headers["content-type"], "text/html; charset=utf-8");
    EXPECT_NE(r.headers["content-security-policy"].find("default-src 'none'"), std::string::npos);
    EXPECT_NE(r.body.find("<section id=\"cluster-3\""), std::string::npos) << path;
  }
  for (const char* path : {"/v1/reports/identical?format=html", "/reports/identical"}) {
    r = client.Request("GET", path, "", "", auth);
    ASSERT_EQ(r.status, 200) << path << r.body;
    EXPECT_NE(r.body.find("<tr id=\"set-2\">"), std::string::npos) << path;
  }
  r = client.Request("GET", "/reports/clusters?limit=1&min_bytes=500", "", "", auth);
  EXPECT_NE(r.body.find("<section id=\"cluster-1\""), std::string::npos);
  EXPECT_EQ(r.body.find("<section id=\"cluster-2\""), std::string::npos);
  EXPECT_EQ(client.Request("GET", "/reports/clusters?format=json", "", "", auth).status, 400);
  EXPECT_EQ(client.Request("GET", "/reports/identical", "", "", "").status, 303);  // sign in
  r = client.Request("GET", "/v1/reports/clusters?nope=1", "", "", auth);
  EXPECT_NE(r.body.find("nope"), std::string::npos) << r.body;
  EXPECT_EQ(client.Request("POST", "/v1/reports/clusters", "", "", auth).status, 405);
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

}  // namespace
}  // namespace shingled::testing
