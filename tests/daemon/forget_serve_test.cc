// Forgetting against the real daemon on loopback: POST /v1/forget (a write, behind the token; its
// body checked), the history of a forgotten URL gone and the rest kept, and GET /v1/forgets
// listing the takedown with the SHA-256 of what it named.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>

#include "tests/daemon/daemon_harness.h"
#include "tests/daemon/sha256_hex.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

constexpr char kToken[] = "forget-test-token-0123";

class ForgetServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string token_file = dir_.WriteSecret("token", std::string(kToken) + "\n");
    daemon_ = std::make_unique<Daemon>(dir_, dir_.path() + "/store",
                                       "[auth]\ntoken_file = \"" + token_file + "\"\n");
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
  }
  // A request with the token (`auth`), or without; the answer's status in *status.
  json Call(const std::string& method, const std::string& target, const std::string& body,
            int* status, bool auth = true) {
    HttpClient client(daemon_->port());
    HttpResponse r =
        client.Request(method, target, body, body.empty() ? "" : "application/json",
                       auth ? "Authorization: Bearer " + std::string(kToken) + "\r\n" : "");
    *status = r.status;
    return json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  }
  void PostPage(const std::string& url, int seed) {
    int status = 0;
    HttpClient client(daemon_->port());
    HttpResponse r =
        client.Request("POST", "/v1/pages?url=" + Q(url), SyntheticPage(seed), "text/html",
                       "Authorization: Bearer " + std::string(kToken) + "\r\n");
    status = r.status;
    ASSERT_EQ(status, 200) << url << " " << r.body;
  }
  // A 400 whose message holds `in_message`.
  void ExpectBadRequest(const std::string& body, const std::string& in_message) {
    int status = 0;
    const json j = Call("POST", "/v1/forget", body, &status);
    EXPECT_EQ(status, 400) << body << " -> " << j.dump();
    EXPECT_EQ(j["error"]["code"], "invalid_argument") << j.dump();
    EXPECT_NE(j["error"]["message"].get<std::string>().find(in_message), std::string::npos)
        << body << " -> " << j.dump();
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(ForgetServeTest, ForgetsAHostAndRecordsIt) {
  PostPage("https://gone.example/a", 1);
  PostPage("https://gone.example/b", 2);
  PostPage("http://gone.example/c", 3);
  PostPage("https://kept.example/a", 4);
  int status = 0;

  // A write: behind the token.
  Call("POST", "/v1/forget", R"({"host": "gone.example"})", &status, /*auth=*/false);
  EXPECT_EQ(status, 401);
  {
    HttpClient client(daemon_->port());
    HttpResponse r = client.Request("POST", "/v1/forget", R"({"host": "gone.example"})",
                                    "application/json", "Authorization: Bearer wrong\r\n");
    EXPECT_EQ(r.status, 401) << r.body;
  }

  // What is wrong with a body is said.
  ExpectBadRequest("{", "not a JSON object");
  ExpectBadRequest("", "give what to forget");
  ExpectBadRequest(R"({"dry_run": true})", "give what to forget");
  ExpectBadRequest(R"({"host": "gone.example", "url": "https://gone.example/a"})",
                   "not url and host");
  ExpectBadRequest(R"({"host": 5})", "host must be a string");
  ExpectBadRequest(R"({"host": "gone.example/a"})", "is not a host name");
  ExpectBadRequest(R"({"host": "gone.example", "list_limit": 100000})", "list_limit");
  ExpectBadRequest(R"({"host": "gone.example", "dry_run": 1})", "dry_run");
  ExpectBadRequest(R"({"hostname": "gone.example"})", "unknown key \"hostname\"");
  Call("POST", "/v1/forget?host=gone.example", "", &status);
  EXPECT_EQ(status, 400);

  // A dry run lists and counts, and changes nothing.
  json j = Call("POST", "/v1/forget", R"({"host": "gone.example", "dry_run": true,
                                          "list_limit": 10})",
                &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["dry_run"], true);
  EXPECT_EQ(j["urls"], 3);
  EXPECT_EQ(j["listed"],
            json({"http://gone.example/c", "https://gone.example/a", "https://gone.example/b"}));
  EXPECT_EQ(j["record"], nullptr);
  Call("GET", "/v1/urls?url=" + Q("https://gone.example/a"), "", &status);
  EXPECT_EQ(status, 200);

  // The host, spelt in capitals: http and https go.
  j = Call("POST", "/v1/forget", R"({"host": "GONE.example", "list_limit": 1})", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["scope"], "host");
  EXPECT_EQ(j["value"], "gone.example");
  EXPECT_EQ(j["dry_run"], false);
  EXPECT_EQ(j["urls"], 3);
  EXPECT_EQ(j["versions"], 3);
  EXPECT_EQ(j["documents"], 3);
  EXPECT_EQ(j["more"], false);
  EXPECT_EQ(j["listed"].size(), 1u);
  ASSERT_TRUE(j["record"].is_number_unsigned()) << j.dump();
  const uint64_t record = j["record"];

  for (const char* url :
       {"https://gone.example/a", "https://gone.example/b", "http://gone.example/c"}) {
    const json h = Call("GET", "/v1/urls?url=" + Q(url), "", &status, /*auth=*/false);
    EXPECT_EQ(status, 404) << url << " " << h.dump();
  }
  Call("GET", "/v1/urls?url=" + Q("https://kept.example/a"), "", &status, /*auth=*/false);
  EXPECT_EQ(status, 200);
  // A URL forgotten is one the store does not know.
  j = Call("POST", "/v1/forget", R"({"url": "https://gone.example/a"})", &status);
  EXPECT_EQ(status, 404) << j.dump();

  // The record: a read (no token needed here), with the SHA-256 of the host, not the host.
  j = Call("GET", "/v1/forgets", "", &status, /*auth=*/false);
  ASSERT_EQ(status, 200) << j.dump();
  ASSERT_EQ(j["forgets"].size(), 1u) << j.dump();
  const json& r = j["forgets"][0];
  EXPECT_EQ(r["id"], record);
  EXPECT_EQ(r["scope"], "host");
  EXPECT_EQ(r["value_sha256"], Sha256Hex("gone.example"));
  EXPECT_EQ(r["urls"], 3);
  EXPECT_EQ(r["versions"], 3);
  EXPECT_EQ(r["documents"], 3);
  EXPECT_EQ(j["next"], nullptr);
  EXPECT_EQ(j.dump().find("gone.example"), std::string::npos) << j.dump();
  j = Call("GET", "/v1/forgets?after=" + std::to_string(record), "", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["forgets"].size(), 0u);
  Call("GET", "/v1/forgets?limit=0", "", &status);
  EXPECT_EQ(status, 400);
  Call("GET", "/v1/forgets?host=gone.example", "", &status);
  EXPECT_EQ(status, 400);
}

// The value of one sample in the Prometheus text ("name{labels} value"), -1 if absent.
double Metric(const std::string& text, const std::string& sample) {
  const size_t at = text.find("\n" + sample + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + sample.size() + 2));
}

// Retention in the daemon: pages stored long ago and again now, then a restart with retention
// on: its pass at start-up forgets the old versions (each URL keeps its last), says so in the
// metrics and the log, and the store checks clean.
TEST(RetentionServeTest, APassAtStartUpForgetsOldVersions) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  const std::string token_file = dir.WriteSecret("token", std::string(kToken) + "\n");
  const std::string auth = "[auth]\ntoken_file = \"" + token_file + "\"\n";
  const std::string bearer = "Authorization: Bearer " + std::string(kToken) + "\r\n";
  {
    Daemon daemon(dir, store, auth);
    ASSERT_GT(daemon.port(), 0) << daemon.log();
    HttpClient client(daemon.port());
    for (const auto& [url, seed, date] : {std::tuple{"https://r.example/a", 1, "2020-01-01"},
                                          std::tuple{"https://r.example/a", 2, ""},
                                          std::tuple{"https://r.example/b", 3, "2020-01-01"}}) {
      const std::string target =
          "/v1/pages?url=" + Q(url) +
          (std::string(date).empty() ? "" : "&fetched_at=" + std::string(date));
      HttpResponse r = client.Request("POST", target, SyntheticPage(seed), "text/html", bearer);
      ASSERT_EQ(r.status, 200) << r.body;
    }
  }
  Daemon daemon(dir, store, auth + "[store]\nretention_version_days = 30\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  HttpClient client(daemon.port());
  std::string metrics;
  for (int i = 0; i < 200; ++i) {
    metrics = client.Request("GET", "/metrics", "", "", bearer).body;
    if (Metric(metrics, "shingled_retention_passes_total") >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(Metric(metrics, "shingled_retention_passes_total"), 1) << daemon.log();
  EXPECT_EQ(Metric(metrics, "shingled_retention_removed_total{what=\"versions\"}"), 1);
  EXPECT_EQ(Metric(metrics, "shingled_retention_removed_total{what=\"documents\"}"), 1);
  EXPECT_EQ(Metric(metrics, "shingled_retention_urls_examined_total"), 2);
  const json a = json::parse(
      client.Request("GET", "/v1/urls?url=" + Q("https://r.example/a"), "", "", bearer).body,
      nullptr, false);
  ASSERT_TRUE(a.contains("versions")) << a.dump();
  EXPECT_EQ(a["versions"].size(), 1u) << a.dump();
  // b's only version is its last: kept, however old.
  EXPECT_EQ(
      client.Request("GET", "/v1/urls?url=" + Q("https://r.example/b"), "", "", bearer).status,
      200);
  EXPECT_NE(daemon.log().find("retention pass: 2 URLs looked at; removed 1 versions"),
            std::string::npos)
      << daemon.log();
}

}  // namespace
}  // namespace shingled::testing
