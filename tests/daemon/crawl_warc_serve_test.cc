// The daemon's crawler with [crawler] warc_dir: a sweep started by POST /v1/crawl writes its
// WARC file and index, GET /v1/crawl reports them, and the second sweep of an unchanged site
// writes revisits. The file contents are checked in depth by tests/crawler/crawl_warc_test.cc
// (`shingled crawl`, the same sweep code); this is the serve road.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "crawler/warc.h"
#include "tests/crawler/test_server.h"
#include "tests/crawler/test_site.h"
#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

json WaitForSweep(int port, const std::string& name) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  json crawl;
  while (std::chrono::steady_clock::now() < deadline) {
    HttpClient client(port);
    crawl = json::parse(client.Request("GET", "/v1/crawl").body, nullptr, false);
    if (crawl.is_object() && crawl["running"] == false && crawl["sweep"].is_object() &&
        !crawl["sweep"]["finished"].is_null() && crawl["sweep"]["sweep"] == name) {
      return crawl["sweep"];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  }
  ADD_FAILURE() << "the sweep did not finish: " << crawl.dump();
  return json();
}

std::string StartSweep(int port) {
  HttpClient client(port);
  HttpResponse r = client.Request("POST", "/v1/crawl");
  EXPECT_EQ(r.status, 202) << r.body;
  const json j = json::parse(r.body, nullptr, false);
  return j.is_object() && j["sweep"].is_string() ? j["sweep"].get<std::string>() : "";
}

// Record types in a WARC file, in order, read with the project's reader.
std::vector<std::string> Types(const std::string& path) {
  auto source = crawler::OpenFileSource(path);
  EXPECT_TRUE(source.ok()) << path;
  if (!source.ok()) return {};
  crawler::WarcReader reader(std::move(*source));
  crawler::WarcRecord record;
  std::vector<std::string> types;
  while (reader.Next(&record)) types.push_back(record.Type());
  EXPECT_TRUE(reader.problems().empty()) << path;
  return types;
}

TEST(CrawlWarcServeTest, RequestedSweepsWriteWarcFilesThenRevisits) {
  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/a.html", "/b.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200, "<a href='a.html'>a</a><a href='b.html'>b</a>");
  site.Set("/a.html", 200, Article("apples"));
  site.Set("/b.html", 200, Article("bananas"));

  TempDir dir;
  const std::string warc_dir = dir.path() + "/warc";
  Daemon daemon(dir, dir.path() + "/store",
                "[ingest]\ndefault_sweep = \"\"\n[crawler]\nenabled = true\nseeds = [\"" +
                    server.Url("/") +
                    "\"]\nallow_private_addresses = true\nper_host_delay_ms = 0\nevery = "
                    "\"off\"\nwarc_dir = \"" +
                    warc_dir + "\"\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();

  const json one = WaitForSweep(daemon.port(), StartSweep(daemon.port()));
  EXPECT_EQ(one["closed"], true) << one.dump();
  ASSERT_TRUE(one.contains("warc")) << one.dump();
  EXPECT_EQ(one["warc"]["responses"], 3) << one.dump();
  EXPECT_EQ(one["warc"]["revisits"], 0) << one.dump();
  ASSERT_EQ(one["warc"]["files"].size(), 1u) << one.dump();
  const std::string file_one = one["warc"]["files"][0];
  EXPECT_EQ(Types(file_one), (std::vector<std::string>{"warcinfo", "request", "response", "request",
                                                       "response", "request", "response"}));
  EXPECT_TRUE(std::filesystem::exists(file_one + ".cdxj"));

  // A second sweep (a new name: sweeps are named by their start second) revisits all three.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const json two = WaitForSweep(daemon.port(), StartSweep(daemon.port()));
  ASSERT_TRUE(two.contains("warc")) << two.dump();
  EXPECT_EQ(two["warc"]["responses"], 0) << two.dump();
  EXPECT_EQ(two["warc"]["revisits"], 3) << two.dump();
  for (const auto& e : std::filesystem::directory_iterator(warc_dir)) {
    EXPECT_FALSE(e.path().string().ends_with(".open")) << e.path();
  }
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

}  // namespace
}  // namespace shingled::testing
