// A real Prometheus server (Debian's `prometheus`) scrapes the daemon on loopback; the test reads
// shingled_pages_ingested_total back through Prometheus' HTTP API. Skipped with a message when
// /usr/bin/prometheus is absent (scripts/install-deps.sh installs it).
#include <netinet/in.h>

#include <nlohmann/json.hpp>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

constexpr const char* kPrometheus = "/usr/bin/prometheus";

// A free loopback port: bind port 0, read it, close. Prometheus cannot report the port it bound,
// so this one is picked for it (a small race with other processes, acceptable in a test).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(PrometheusTest, ScrapesTheDaemonAndAnswersTheIngestCounter) {
  if (access(kPrometheus, X_OK) != 0) {
    GTEST_SKIP() << kPrometheus << " is not installed (scripts/install-deps.sh installs it)";
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

  const int prom_port = FreePort();
  const std::string config =
      dir.Write("prometheus.yml",
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: shingled\n    static_configs:\n"
                "      - targets: ['127.0.0.1:" +
                    std::to_string(daemon.port()) + "']\n");
  const std::string log_path = dir.path() + "/prometheus.log";
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    const std::string config_flag = "--config.file=" + config;
    const std::string storage_flag = "--storage.tsdb.path=" + dir.path() + "/tsdb";
    const std::string listen_flag = "--web.listen-address=127.0.0.1:" + std::to_string(prom_port);
    execl(kPrometheus, kPrometheus, config_flag.c_str(), storage_flag.c_str(), listen_flag.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }

  // Poll the query API until the counter comes back (first scrape within ~1 s of start-up).
  double value = -1;
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline && value < 3) {
    HttpClient client(prom_port);
    if (client.connected()) {
      HttpResponse r =
          client.Request("GET", "/api/v1/query?query=" + Q("sum(shingled_pages_ingested_total)"));
      const json j = json::parse(r.body, nullptr, false);
      if (r.status == 200 && j.is_object() && !j["data"]["result"].empty()) {
        value = std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
      }
    }
    if (value < 3) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // poll interval
  }
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(value, 3) << ReadWholeFile(log_path).substr(0, 4000);
}

}  // namespace
}  // namespace shingled::testing
