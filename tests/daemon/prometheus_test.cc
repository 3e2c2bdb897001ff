// A real Prometheus server (Debian's `prometheus`) scrapes the daemon on loopback; the test reads
// shingled_pages_ingested_total and process_start_time_seconds back through Prometheus' HTTP API
// (its scrapes ask for gzip). Skipped with a message when
// /usr/bin/prometheus is absent (scripts/install-deps.sh installs it).
#include <nlohmann/json.hpp>

#include "tests/daemon/daemon_harness.h"
#include "tests/daemon/prometheus_server.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

TEST(PrometheusTest, ScrapesTheDaemonAndAnswersTheIngestCounter) {
  if (!PrometheusInstalled()) {
    GTEST_SKIP() << kPrometheusBinary << " is not installed (scripts/install-deps.sh installs it)";
  }
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  for (int i = 0; i < 3; ++i) {
    HttpClient client(daemon.port());
    const std::string page =
        "<p>page number " + std::to_string(i) + " with a few words of its own</p>";
    ASSERT_EQ(client
                  .Request("POST", "/v1/pages?url=" + Q("https://p.example/" + std::to_string(i)),
                           page, "text/html")
                  .status,
              200);
  }

  PrometheusServer prometheus(dir, ScrapeConfig(daemon.port()));
  ASSERT_TRUE(prometheus.ready()) << prometheus.log();

  // Poll the query API until the counter comes back (first scrape within ~1 s of start-up).
  double value = -1;
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline && value < 3) {
    const json j = prometheus.Query("sum(shingled_pages_ingested_total)");
    if (j.is_object() && j["status"] == "success" && !j["data"]["result"].empty()) {
      value = std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
    }
    if (value < 3) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // poll interval
  }
  EXPECT_EQ(value, 3) << prometheus.log();
  // Prometheus scrapes with Accept-Encoding: gzip, which the daemon answers in gzip; the
  // standard process metrics come through too.
  const json j = prometheus.Query("process_start_time_seconds");
  ASSERT_TRUE(j.is_object() && j["status"] == "success" && !j["data"]["result"].empty()) << j;
  EXPECT_GT(std::stod(j["data"]["result"][0]["value"][1].get<std::string>()), 1.7e9);
  EXPECT_NE(daemon.log().find("access client=127.0.0.1 method=GET path=/metrics status=200"),
            std::string::npos)
      << daemon.log();
}

}  // namespace
}  // namespace shingled::testing
