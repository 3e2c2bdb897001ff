// The daemon's crawler on the redis-cluster backend, against a real 3-master cluster on
// loopback. Its second sweep revisits the URLs the first one found (Store::KnownUrls) and each
// sweep closes (Store::CloseSweep): the two walks of redis/backend_walks.cc, end to end.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/crawler/test_server.h"
#include "tests/crawler/test_site.h"
#include "tests/daemon/daemon_harness.h"
#include "tests/redis/redis_cluster.h"

namespace shingled::testing {
namespace {

using nlohmann::json;
using redis::testing::RedisCluster;

json Get(int port, const std::string& target) {
  HttpClient client(port);
  HttpResponse r = client.Request("GET", target);
  return json::parse(r.body, nullptr, false);
}

std::string StartSweep(int port) {
  HttpClient client(port);
  HttpResponse r = client.Request("POST", "/v1/crawl");
  EXPECT_EQ(r.status, 202) << r.body;
  const json j = json::parse(r.body, nullptr, false);
  return j.is_object() && j["sweep"].is_string() ? j["sweep"].get<std::string>() : "";
}

json WaitForSweep(int port, const std::string& name) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  json crawl;
  while (Clock::now() < deadline) {
    crawl = Get(port, "/v1/crawl");
    if (crawl.is_object() && crawl["running"] == false && crawl["sweep"].is_object() &&
        !crawl["sweep"]["finished"].is_null() && crawl["sweep"]["sweep"] == name) {
      return crawl["sweep"];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "the sweep did not finish: " << crawl.dump();
  return json();
}

TEST(RedisCrawlTest, TheCrawlerRevisitsAndClosesItsSweepsOnTheCluster) {
  std::string why;
  if (!RedisCluster::Available(&why)) GTEST_SKIP() << why;
  RedisCluster cluster;
  const Status started = cluster.Start({.masters = 3});
  ASSERT_TRUE(started.ok()) << started.ToString();
  std::string nodes;
  for (const std::string& seed : cluster.seeds()) {
    std::string out;
    ASSERT_EQ(cluster.Cli(std::atoi(seed.c_str() + seed.rfind(':') + 1),
                          "CONFIG SET hash-max-listpack-value 4096", &out),
              0)
        << out;
    nodes.append(nodes.empty() ? "" : ", ").append("\"").append(seed).append("\"");
  }
  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/a.html", "/b.html", "/gone.html", "/orphan.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200,
           "<a href='a.html'>a</a><a href='b.html'>b</a><a href='gone.html'>gone</a>"
           "<a href='orphan.html'>orphan</a>");
  site.Set("/a.html", 200, Article("apples"));
  site.Set("/b.html", 200, Article("bananas"));
  site.Set("/gone.html", 200, Article("grapes"));
  site.Set("/orphan.html", 200, Article("lemons"));
  std::string config = "[store]\nbackend = \"redis-cluster\"\n[store.redis]\nnodes = [";
  config.append(nodes).append("]\npassword_file = \"").append(cluster.password_file());
  config.append("\"\n[ingest]\ndefault_sweep = \"\"\n[crawler]\nenabled = true\nseeds = [\"");
  config.append(server.Url("/"))
      .append("\"]\nallow_private_addresses = true\nper_host_delay_ms = 0\nevery = \"off\"\n");

  TempDir dir;
  Daemon daemon(dir, dir.path() + "/unused", config);
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string one = StartSweep(daemon.port());
  const json first = WaitForSweep(daemon.port(), one);
  EXPECT_EQ(first["pages"], 5) << first.dump();
  EXPECT_EQ(first["closed"], true) << first.dump();

  // Between the sweeps: gone.html removed and no longer linked, orphan.html no longer linked
  // but still served. Only the revisit of the known URLs finds them.
  site.Set("/", 200, "<a href='a.html'>a</a><a href='b.html'>b</a>");
  site.Remove("/gone.html");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // another sweep name
  const std::string two = StartSweep(daemon.port());
  ASSERT_NE(two, one);
  const json second = WaitForSweep(daemon.port(), two);
  EXPECT_EQ(second["closed"], true) << second.dump() << daemon.log();
  EXPECT_EQ(second["known_urls"], 5) << second.dump();
  EXPECT_EQ(second["dead"], 1) << second.dump();  // gone.html: 404 on revisit
  EXPECT_EQ(server.CountRequests("/gone.html"), 2u);
  EXPECT_EQ(server.CountRequests("/orphan.html"), 2u);
  const json orphan = Get(daemon.port(), "/v1/urls?url=" + Q(server.Url("/orphan.html")));
  ASSERT_EQ(orphan["versions"].size(), 2u) << orphan.dump();
  EXPECT_EQ(orphan["versions"][1]["verdict"], "unchanged");
  const json gone = Get(daemon.port(), "/v1/urls?url=" + Q(server.Url("/gone.html")));
  ASSERT_EQ(gone["versions"].size(), 2u) << gone.dump();
  EXPECT_EQ(gone["versions"][1]["status"], 404);
  // Both sweeps closed on the cluster.
  const json sweeps = Get(daemon.port(), "/v1/sweeps");
  int closed = 0;
  for (const json& s : sweeps["sweeps"]) closed += s["open"] == false ? 1 : 0;
  EXPECT_EQ(closed, 2) << sweeps.dump();
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

}  // namespace
}  // namespace shingled::testing
