// `shingled serve` on the redis-cluster backend, against a real 3-master cluster on
// loopback (tests/redis/redis_cluster.h). The config file is all it takes; pages get their
// verdicts; a daemon killed with SIGKILL loses no acknowledged page; two daemons on one cluster
// decide as one; `shingled check` runs on the cluster; the listings, the reports, bytes in
// common and templates answer as on LMDB; forgetting and `shingled backup` are refused.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/daemon/daemon_harness.h"
#include "tests/redis/redis_cluster.h"

namespace shingled::testing {
namespace {

using nlohmann::json;
using redis::testing::RedisCluster;

const std::string kSamples = std::string(SHINGLED_TEST_DATA_DIR) + "/samples/";

class RedisServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!RedisCluster::Available(&why)) GTEST_SKIP() << why;
    // Every node reads the settings docs/OPERATIONS.md asks for, from the file the package
    // installs.
    const Status started = cluster_.Start(
        {.masters = 3, .config_file = SHINGLED_SOURCE_DIR "/ops/redis/shingled-node.conf"});
    ASSERT_TRUE(started.ok()) << started.ToString();
  }

  // The config of a daemon on the cluster: the backend, its seeds and password, nothing else.
  std::string Config() const {
    std::string nodes;
    for (const std::string& seed : cluster_.seeds()) {
      nodes.append(nodes.empty() ? "" : ", ").append("\"").append(seed).append("\"");
    }
    std::string config = "[store]\nbackend = \"redis-cluster\"\n[store.redis]\nnodes = [";
    config.append(nodes).append("]\npassword_file = \"");
    config.append(cluster_.password_file()).append("\"\n");
    return config;
  }
  std::unique_ptr<Daemon> Start() {
    // The store directory is not used by this backend: each daemon gets one of its own, so that
    // only the cluster can carry a page from one daemon to another.
    auto daemon = std::make_unique<Daemon>(
        dir_, dir_.path() + "/unused-" + std::to_string(started_++), Config());
    EXPECT_GT(daemon->port(), 0) << daemon->log();
    return daemon;
  }
  static json Post(const Daemon& d, const std::string& url, const std::string& page) {
    HttpClient client(d.port());
    HttpResponse r = client.Request("POST", "/v1/pages?url=" + Q(url), page, "text/html");
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false);
  }
  static HttpResponse Get(const Daemon& d, const std::string& target) {
    HttpClient client(d.port());
    return client.Request("GET", target, "", "");
  }

  RedisCluster cluster_;
  TempDir dir_;
  int started_ = 0;
};

TEST_F(RedisServeTest, VerdictsHistorySimilarAndClustersOnTheCluster) {
  std::unique_ptr<Daemon> d = Start();
  ASSERT_GT(d->port(), 0);
  const std::string a = ReadWholeFile(kSamples + "page-a.html");
  const std::string b = ReadWholeFile(kSamples + "page-b.html");
  json j = Post(*d, "https://example.com/a", a);
  EXPECT_EQ(j["verdict"], "new") << j;
  const int doc_a = j["doc"];
  j = Post(*d, "https://example.com/a", a);
  EXPECT_EQ(j["replayed"], true) << j;
  EXPECT_EQ(j["doc"], doc_a);
  j = Post(*d, "https://example.com/copy", a);
  EXPECT_EQ(j["verdict"], "duplicate") << j;
  EXPECT_EQ(j["doc"], doc_a);
  j = Post(*d, "https://example.com/b", b);
  ASSERT_FALSE(j["matches"].empty()) << j;
  EXPECT_EQ(j["matches"][0]["doc"], doc_a);
  EXPECT_GT(j["matches"][0]["resemblance"].get<double>(), 0.5);
  j = Post(*d, "https://example.com/other", SyntheticPage(1));
  EXPECT_EQ(j["verdict"], "new") << j;
  EXPECT_TRUE(j["matches"].empty());

  HttpResponse r = Get(*d, "/v1/urls?url=" + Q("https://example.com/copy"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["versions"].size(), 1u) << r.body;
  r = Get(*d, "/v1/documents/" + std::to_string(doc_a));
  EXPECT_EQ(r.status, 200) << r.body;
  r = Get(*d, "/v1/similar?url=" + Q("https://example.com/b") + "&threshold=0.3");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"doc\":" + std::to_string(doc_a)), std::string::npos) << r.body;
  r = Get(*d, "/v1/clusters/" + std::to_string(doc_a));
  EXPECT_EQ(r.status, 200) << r.body;
  r = Get(*d, "/v1/stats");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["documents"], 3) << r.body;
  // The listings work on the cluster (ListingsAndTheIdenticalReportOnTheCluster below).
  r = Get(*d, "/v1/urls?host=example.com");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["urls"].size(), 4u) << r.body;
}

TEST_F(RedisServeTest, BadClusterSettingsStopStartUpWithAClearMessage) {
  // A seed with nothing listening: the daemon exits, naming the node.
  const std::string config =
      "[store]\nbackend = \"redis-cluster\"\n[store.redis]\nnodes = [\"127.0.0.1:1\"]\n"
      "connect_timeout_ms = 200\n";
  Daemon d(dir_, dir_.path() + "/unused", config);
  EXPECT_EQ(d.port(), 0);
  EXPECT_EQ(d.Wait(), 1) << d.log();
  EXPECT_NE(d.log().find("127.0.0.1:1"), std::string::npos) << d.log();
  // No password where the cluster wants one.
  Daemon no_auth(dir_, dir_.path() + "/unused",
                 "[store]\nbackend = \"redis-cluster\"\n[store.redis]\nnodes = [\"" +
                     cluster_.seeds()[0] + "\"]\n");
  EXPECT_EQ(no_auth.port(), 0);
  EXPECT_EQ(no_auth.Wait(), 1) << no_auth.log();
  EXPECT_NE(no_auth.log().find("NOAUTH"), std::string::npos) << no_auth.log();
  // min_replicas above the replicas the masters have (none here): no write could be
  // acknowledged, so the daemon does not start, naming the setting and the masters.
  Daemon unreplicated(dir_, dir_.path() + "/unused", Config() + "min_replicas = 1\n");
  EXPECT_EQ(unreplicated.port(), 0);
  EXPECT_EQ(unreplicated.Wait(), 1) << unreplicated.log();
  EXPECT_NE(unreplicated.log().find("store.redis.min_replicas is 1"), std::string::npos)
      << unreplicated.log();
  EXPECT_NE(unreplicated.log().find(cluster_.seeds()[0] + " has 0 of 1"), std::string::npos)
      << unreplicated.log();
}

// SIGKILL of a daemon under load: every page it acknowledged is on the cluster, for the next
// daemon. The pages it was deciding when killed left claims behind (REDIS.md, "Retries"):
// `shingled check` names them until the client sends them again, as a crawler pipeline resends
// what was not acknowledged; then it passes.
TEST_F(RedisServeTest, KilledDaemonLosesNoAcknowledgedPageAndRetriesCompleteTheRest) {
  auto page = [](int client, int n) { return SyntheticPage(n) + std::to_string(client); };
  auto url = [](int client, int n) {
    return "https://load.example/" + std::to_string(client) + "/" + std::to_string(n);
  };
  std::set<std::string> acked;
  std::vector<int> in_flight(2, -1);  // per client: the page sent and not answered, or -1
  {
    std::unique_ptr<Daemon> d = Start();
    ASSERT_GT(d->port(), 0);
    std::mutex mu;
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int c = 0; c < 2; ++c) {
      clients.emplace_back([&, c] {
        HttpClient client(d->port());
        for (int n = 0; n < 2000 && !stop; ++n) {
          // Near-copies across the two clients: page n of one resembles page n of the other.
          in_flight[c] = n;
          HttpResponse r =
              client.Request("POST", "/v1/pages?url=" + Q(url(c, n)), page(c, n), "text/html");
          if (r.status != 200) return;
          in_flight[c] = -1;
          std::lock_guard<std::mutex> lock(mu);
          acked.insert(url(c, n));
        }
      });
    }
    const Clock::time_point until = Clock::now() + std::chrono::seconds(3);
    while (Clock::now() < until) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (acked.size() >= 200) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll interval
    }
    d->Signal(SIGKILL);
    stop = true;
    for (std::thread& t : clients) t.join();
    EXPECT_EQ(d->Wait(), 128 + SIGKILL);
  }
  ASSERT_GT(acked.size(), 10u);
  std::unique_ptr<Daemon> again = Start();
  ASSERT_GT(again->port(), 0);
  for (const std::string& u : acked) {
    HttpResponse r = Get(*again, "/v1/urls?url=" + Q(u));
    ASSERT_EQ(r.status, 200) << u << ": " << r.body;
  }
  // The clients send again what was not acknowledged.
  for (int c = 0; c < 2; ++c) {
    if (in_flight[c] >= 0) Post(*again, url(c, in_flight[c]), page(c, in_flight[c]));
  }
  again->Signal(SIGTERM);
  EXPECT_EQ(again->Wait(), 0) << again->log();
  const std::string config = dir_.Write("check.toml", Config());
  std::string out;
  EXPECT_EQ(RunCli("check --config " + config, &out), 0) << out;
  EXPECT_NE(out.find("store the redis-cluster at 127.0.0.1:"), std::string::npos) << out;
}

// A node of the cluster killed under a running daemon: the pages whose slots it served are
// refused as retryable (503) meanwhile and /readyz says it is not ready, naming the node; once it
// is back (from its append-only file), the same daemon stores pages again and says it is ready,
// without a restart.
TEST_F(RedisServeTest, ANodeThatComesBackIsUsedAgainWithoutARestart) {
  std::unique_ptr<Daemon> d = Start();
  ASSERT_GT(d->port(), 0);
  EXPECT_EQ(Post(*d, "https://example.com/before", SyntheticPage(1))["verdict"], "new");
  cluster_.Kill(0);
  // Without a replica the cluster is down for that node's slots: a page touches every node.
  HttpClient client(d->port());
  HttpResponse r = client.Request("POST", "/v1/pages?url=" + Q("https://example.com/during"),
                                  SyntheticPage(2), "text/html");
  EXPECT_EQ(r.status, 503) << r.body;
  // Readiness says so, naming the node, while it is down (the probe's answer lasts 1 s).
  const std::string killed = cluster_.seeds()[0];
  const Clock::time_point not_ready_by = Clock::now() + std::chrono::seconds(10);
  do {
    r = Get(*d, "/readyz");
  } while (r.status == 200 && Clock::now() < not_ready_by);
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_NE(r.body.find(killed), std::string::npos) << r.body;
  const Status back = cluster_.Restart(0);
  ASSERT_TRUE(back.ok()) << back.ToString();
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  json j;
  while (Clock::now() < deadline) {
    HttpClient retry(d->port());
    r = retry.Request("POST", "/v1/pages?url=" + Q("https://example.com/during"), SyntheticPage(2),
                      "text/html");
    if (r.status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // poll interval
  }
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["verdict"], "new") << r.body;
  const Clock::time_point ready_by = Clock::now() + std::chrono::seconds(10);
  do {
    r = Get(*d, "/readyz");
  } while (r.status != 200 && Clock::now() < ready_by);
  EXPECT_EQ(r.status, 200) << r.body;
  r = Get(*d, "/v1/urls?url=" + Q("https://example.com/before"));
  EXPECT_EQ(r.status, 200) << r.body;
}

// Two daemons on one cluster: a page posted to one is found by the other, as one daemon would
// find it.
TEST_F(RedisServeTest, TwoDaemonsShareOneState) {
  std::unique_ptr<Daemon> one = Start();
  std::unique_ptr<Daemon> two = Start();
  ASSERT_GT(one->port(), 0);
  ASSERT_GT(two->port(), 0);
  const std::string a = ReadWholeFile(kSamples + "page-a.html");
  const std::string b = ReadWholeFile(kSamples + "page-b.html");
  json j = Post(*one, "https://example.com/a", a);
  EXPECT_EQ(j["verdict"], "new") << j;
  const int doc_a = j["doc"];
  j = Post(*two, "https://example.org/copy", a);
  EXPECT_EQ(j["verdict"], "duplicate") << j;
  EXPECT_EQ(j["doc"], doc_a);
  j = Post(*two, "https://example.org/b", b);
  ASSERT_FALSE(j["matches"].empty()) << j;
  EXPECT_EQ(j["matches"][0]["doc"], doc_a);
  const HttpResponse r = Get(*one, "/v1/urls?url=" + Q("https://example.org/b"));
  EXPECT_EQ(r.status, 200) << r.body;
}

// The listings (`/v1/urls`, `/v1/clusters`, `/v1/identical`), the identical report and
// `shingled list` on the cluster: all go through the Store, so they answer as on LMDB (URLs in
// URL id order, the cursor opaque).
TEST_F(RedisServeTest, ListingsAndTheIdenticalReportOnTheCluster) {
  std::unique_ptr<Daemon> d = Start();
  ASSERT_GT(d->port(), 0);
  const std::string a = ReadWholeFile(kSamples + "page-a.html");
  const std::string b = ReadWholeFile(kSamples + "page-b.html");
  const std::vector<std::string> urls = {"https://example.com/a", "https://example.com/copy",
                                         "https://example.com/copy-2", "https://example.com/b",
                                         "https://example.com/other"};
  Post(*d, urls[0], a);
  Post(*d, urls[1], a);
  Post(*d, urls[2], a);
  Post(*d, urls[3], b);
  Post(*d, urls[4], SyntheticPage(2));
  Post(*d, "https://elsewhere.example/x", SyntheticPage(3));

  // Two at a time, following `next`: every URL of the host once.
  std::multiset<std::string> listed;
  std::string next;
  for (int pages = 0; pages < 10; ++pages) {
    HttpResponse r = Get(*d, std::string("/v1/urls?host=example.com&limit=2")
                                 .append(next.empty() ? "" : "&after=")
                                 .append(next.empty() ? "" : Q(next)));
    ASSERT_EQ(r.status, 200) << r.body;
    json j = json::parse(r.body);
    EXPECT_LE(j["urls"].size(), 2u);
    for (const json& u : j["urls"]) listed.insert(u["url"].get<std::string>());
    if (j["next"].is_null()) break;
    next = j["next"].get<std::string>();
  }
  EXPECT_EQ(listed, std::multiset<std::string>(urls.begin(), urls.end()));

  HttpResponse r = Get(*d, "/v1/identical");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  ASSERT_EQ(j["sets"].size(), 1u) << r.body;
  EXPECT_EQ(j["sets"][0]["url_count"], 3) << r.body;
  r = Get(*d, "/v1/reports/identical");
  ASSERT_EQ(r.status, 200) << r.body;
  j = json::parse(r.body);
  EXPECT_EQ(j["totals"]["sets"], 1) << r.body;
  EXPECT_EQ(j["totals"]["files"], 3) << r.body;
  ASSERT_EQ(j["sets"].size(), 1u) << r.body;
  EXPECT_EQ(j["sets"][0]["urls"].size(), 3u) << r.body;
  r = Get(*d, "/v1/clusters");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(json::parse(r.body)["clusters"].is_array()) << r.body;

  // `shingled list` with the daemon's config: the same store, from the command line.
  const std::string config = dir_.Write("list.toml", Config());
  std::string flags = " --config ";
  flags.append(config).append(" --store ").append(dir_.path()).append("/unused-list");
  std::string out;
  ASSERT_EQ(RunCli(std::string("list urls --host example.com --format csv").append(flags), &out), 0)
      << out;
  for (const std::string& u : urls) EXPECT_NE(out.find(u + ","), std::string::npos) << out;
  EXPECT_EQ(out.find("elsewhere.example"), std::string::npos) << out;
  ASSERT_EQ(RunCli(std::string("list identical --format json").append(flags), &out), 0) << out;
  EXPECT_NE(out.find("\"url_count\":3"), std::string::npos) << out;
  ASSERT_EQ(RunCli(std::string("list clusters").append(flags), &out), 0) << out;
}

// The change report and lost and found through the HTTP API on the cluster (they go through the
// Store only): a page dead in the second sweep whose content lives at a new URL is moved there.
TEST_F(RedisServeTest, ChangeReportAndLostAndFoundOnTheCluster) {
  auto d = Start();
  ASSERT_GT(d->port(), 0);
  HttpClient client(d->port());
  for (const char* s :
       {R"({"name": "s1", "start": "2024-05-01"})", R"({"name": "s2", "start": "2024-06-01"})"}) {
    HttpResponse r = client.Request("POST", "/v1/sweeps", s, "application/json");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  auto batch = [&](const std::string& sweep, const std::vector<json>& lines) {
    std::string body;
    for (const json& l : lines) body.append(l.dump()).append("\n");
    HttpResponse r =
        client.Request("POST", "/v1/pages?sweep=" + sweep, body, "application/x-ndjson");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(json::parse(r.body)["errors"], 0) << r.body;
  };
  const std::string a = SyntheticPage(21), b = SyntheticPage(22), c = SyntheticPage(23);
  batch("s1", {{{"url", "https://example.com/a"}, {"content", a}, {"content_type", "text/html"}},
               {{"url", "https://example.com/b"}, {"content", b}, {"content_type", "text/html"}},
               {{"url", "https://example.com/c"}, {"content", c}, {"content_type", "text/html"}}});
  if (HasFatalFailure()) return;
  batch("s2",
        {{{"url", "https://example.com/a"}, {"content", a}, {"content_type", "text/html"}},
         {{"url", "https://example.com/b"}, {"status", 404}},
         {{"url", "https://example.com/b-new"}, {"content", b}, {"content_type", "text/html"}},
         {{"url", "https://example.com/c"},
          {"content", SyntheticPage(24)},
          {"content_type", "text/html"}}});
  if (HasFatalFailure()) return;
  HttpResponse r = Get(*d, "/v1/reports/changes?from=s1&to=s2");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["unchanged"], 1) << r.body;
  EXPECT_EQ(j["changed"], 1) << r.body;
  EXPECT_EQ(j["moved"], 1) << r.body;
  EXPECT_EQ(j["moved_in"], 1) << r.body;
  r = Get(*d, "/v1/reports/changes?from=s1&to=s2&list=moved&limit=10");
  ASSERT_EQ(r.status, 200) << r.body;
  j = json::parse(r.body);
  ASSERT_EQ(j["rows"].size(), 1u) << r.body;
  EXPECT_EQ(j["rows"][0]["new_url"], "https://example.com/b-new") << r.body;
  EXPECT_EQ(j["rows"][0]["evidence"], "same_content") << r.body;
  r = Get(*d, "/reports/changes?from=s1&to=s2");
  EXPECT_EQ(r.status, 200) << r.body;
  r = Get(*d, "/v1/lost?url=" + Q("https://example.com/b"));
  ASSERT_EQ(r.status, 200) << r.body;
  j = json::parse(r.body);
  EXPECT_EQ(j["status"], "moved") << r.body;
  EXPECT_NE(r.body.find("https://example.com/b-new"), std::string::npos) << r.body;
  // `shingled report changes` with the same config, beside the running daemon.
  const std::string config = dir_.Write("report.toml", Config());
  std::string out;
  ASSERT_EQ(RunCli("report changes --config " + config + " --from s1 --to s2 --quiet", &out), 0)
      << out;
  j = json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["moved"], 1) << out;
  EXPECT_EQ(j["unchanged"], 1) << out;
}

// Chunks on the cluster (docs/REDIS.md, "Chunks and templates"): chunking is on by
// default there too; a near-copy's match carries its bytes in common, and bytes in common and
// template marks answer on the cluster.
TEST_F(RedisServeTest, BytesInCommonAndTemplatesOnTheCluster) {
  std::unique_ptr<Daemon> d = Start();
  ASSERT_GT(d->port(), 0);
  const std::string a = ReadWholeFile(kSamples + "page-a.html");
  const std::string b = ReadWholeFile(kSamples + "page-b.html");
  json j = Post(*d, "https://example.com/a", a);
  const int doc_a = j["doc"];
  j = Post(*d, "https://example.com/b", b);
  const int doc_b = j["doc"];
  ASSERT_FALSE(j["matches"].empty()) << j;
  EXPECT_GT(j["matches"][0]["common"]["shared_bytes"].get<int>(), 0) << j;
  HttpResponse r = Get(*d, "/v1/documents/" + std::to_string(doc_b) + "/common/" +
                               std::to_string(doc_a) + "?limit=2");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_GT(json::parse(r.body)["common"]["shared_bytes"].get<int>(), 0) << r.body;
  // A lexical equivalent of a (a comment added): a new document in a's cluster, with a's chunks.
  j = Post(*d, "https://example.com/a2", a + "\n<!-- the same text -->\n");
  EXPECT_EQ(j["verdict"], "duplicate") << j;
  // The clusters report by bytes in common (paper 003, figure 5): a, a2 and b in one cluster.
  r = Get(*d, "/v1/reports/clusters?min_bytes=1");
  ASSERT_EQ(r.status, 200) << r.body;
  const json report = json::parse(r.body, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.body;
  ASSERT_EQ(report["clusters"].size(), 1u) << r.body;
  std::set<int> linked;
  for (const json& m : report["clusters"][0]["members"]) linked.insert(m["doc"].get<int>());
  EXPECT_EQ(linked.size(), 3u) << r.body;
  EXPECT_TRUE(linked.contains(doc_a) && linked.contains(doc_b)) << r.body;
  EXPECT_EQ(report["clusters"][0]["type"], "group") << r.body;
  r = Get(*d, "/v1/reports/clusters?format=csv&max_urls=1");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("https://example.com/a2"), std::string::npos) << r.body;
  HttpClient client(d->port());
  r = client.Request("POST", "/v1/clusters/" + std::to_string(doc_a) + "/template", "", "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_GT(json::parse(r.body)["chunks"].get<int>(), 0) << r.body;
  r = Get(*d, "/v1/templates");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"members\":2"), std::string::npos) << r.body;
}

// Forgetting on the cluster: a dry run changes nothing; POST /v1/forget and `shingled forget`
// forget, GET /v1/forgets and `forget --records` list what they did; a daemon with a retention
// setting runs a pass at start-up.
TEST_F(RedisServeTest, TakedownsAndRetentionOnTheCluster) {
  std::unique_ptr<Daemon> d = Start();
  ASSERT_GT(d->port(), 0);
  Post(*d, "https://example.com/a", ReadWholeFile(kSamples + "page-a.html"));
  Post(*d, "https://example.org/b", ReadWholeFile(kSamples + "page-b.html"));
  HttpClient client(d->port());
  HttpResponse r = client.Request(
      "POST", "/v1/forget", R"({"host": "example.com", "dry_run": true})", "application/json");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("urls":1)"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("documents":1)"), std::string::npos) << r.body;
  std::string out;
  EXPECT_EQ(RunCli("forget --host example.com --dry-run --config " + d->config_path(), &out), 0)
      << out;
  EXPECT_EQ(out.rfind("dry run, nothing changed", 0), 0u) << out;
  EXPECT_EQ(Get(*d, "/v1/urls?url=" + Q("https://example.com/a")).status, 200);

  r = client.Request("POST", "/v1/forget", R"({"url": "https://example.com/a"})",
                     "application/json");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("record":1)"), std::string::npos) << r.body;
  EXPECT_EQ(Get(*d, "/v1/urls?url=" + Q("https://example.com/a")).status, 404);
  EXPECT_EQ(RunCli("forget --host example.org --config " + d->config_path(), &out), 0) << out;
  EXPECT_EQ(Get(*d, "/v1/urls?url=" + Q("https://example.org/b")).status, 404);
  r = Get(*d, "/v1/forgets");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("id":2)"), std::string::npos) << r.body;
  EXPECT_EQ(RunCli("forget --records --config " + d->config_path(), &out), 0) << out;
  // The daemon writes on after the takedowns.
  Post(*d, "https://example.com/a", ReadWholeFile(kSamples + "page-a.html"));

  std::string config = Config();
  config.insert(config.find("[store.redis]"), "retention_version_days = 30\n");
  Daemon retaining(dir_, dir_.path() + "/unused-retention", config);
  ASSERT_GT(retaining.port(), 0) << retaining.log();
  for (int i = 0; i < 200 && retaining.log().find("retention pass: ") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(retaining.log().find("retention pass: "), std::string::npos) << retaining.log();
}

// A backup copies the store's file, which the cluster has not (Store::mapped_file() is null):
// `shingled backup` exits 1 with one line saying it is LMDB's, and makes no directory.
TEST_F(RedisServeTest, BackupIsRefusedOnTheCluster) {
  std::unique_ptr<Daemon> d = Start();  // makes the state on the cluster
  ASSERT_GT(d->port(), 0);
  const std::string dest = dir_.path() + "/copy";
  std::string out;
  EXPECT_EQ(RunCli("backup --config " + d->config_path() + " " + dest, &out), 1) << out;
  EXPECT_EQ(out,
            "shingled backup: Backup is not supported by the redis-cluster backend: LMDB only\n");
  EXPECT_FALSE(std::filesystem::exists(dest));
}

}  // namespace
}  // namespace shingled::testing
