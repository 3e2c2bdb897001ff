// A real Prometheus server (Debian's `prometheus`) on a free loopback port, for the tests that
// have it scrape a daemon: started with a config the test writes, queried through its HTTP API
// (/api/v1/query and /api/v1/query_range), stopped with SIGTERM at destruction.
#ifndef SHINGLED_TESTS_DAEMON_PROMETHEUS_SERVER_H_
#define SHINGLED_TESTS_DAEMON_PROMETHEUS_SERVER_H_

#include <netinet/in.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {

inline constexpr const char* kPrometheusBinary = "/usr/bin/prometheus";

inline bool PrometheusInstalled() { return access(kPrometheusBinary, X_OK) == 0; }

// A free loopback port: bind port 0, read it, close. Prometheus cannot report the port it bound,
// so this one is picked for it (a small race with other processes, acceptable in a test).
inline int FreeLoopbackPort() {
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

// The scrape config of one daemon at 127.0.0.1:daemon_port (job "shingled"), every second, with
// the rule files given (evaluated every second too).
inline std::string ScrapeConfig(int daemon_port, const std::vector<std::string>& rule_files = {}) {
  std::string config = "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n";
  if (!rule_files.empty()) {
    config += "rule_files:\n";
    for (const std::string& file : rule_files) config.append("  - '").append(file).append("'\n");
  }
  config.append("scrape_configs:\n  - job_name: shingled\n    static_configs:\n")
      .append("      - targets: ['127.0.0.1:")
      .append(std::to_string(daemon_port))
      .append("']\n");
  return config;
}

class PrometheusServer {
 public:
  // Writes `config_yaml` to dir/prometheus.yml and starts Prometheus on it, with its database in
  // dir/tsdb; waits (up to 30 s) for /-/ready. ready() is false if it did not come up.
  PrometheusServer(const TempDir& dir, const std::string& config_yaml) {
    const std::string config = dir.Write("prometheus.yml", config_yaml);
    log_path_ = dir.path() + "/prometheus.log";
    port_ = FreeLoopbackPort();
    // Made before fork(): the test may have threads, and the child may then not allocate.
    const std::string config_flag = "--config.file=" + config;
    const std::string storage_flag = "--storage.tsdb.path=" + dir.path() + "/tsdb";
    const std::string listen_flag = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      execl(kPrometheusBinary, kPrometheusBinary, config_flag.c_str(), storage_flag.c_str(),
            listen_flag.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline && !ready_) {
      HttpClient client(port_);
      ready_ = client.connected() && client.Request("GET", "/-/ready").status == 200;
      if (!ready_) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // poll interval
    }
  }
  ~PrometheusServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  bool ready() const { return ready_; }
  int port() const { return port_; }
  // The start of Prometheus' log, for failure messages.
  std::string log() const { return ReadWholeFile(log_path_).substr(0, 4000); }

  // GET /api/v1/query (at `time`, Unix seconds, when given): the whole answer, a JSON object
  // with "status" ("success" or "error"), or null when the answer was not JSON.
  nlohmann::json Query(const std::string& expr, double time = 0) const {
    std::string target = "/api/v1/query?query=" + Q(expr);
    if (time > 0) target.append("&time=").append(std::to_string(time));
    return Get(target);
  }
  // GET /api/v1/query_range over [start, end] (Unix seconds) every `step_s` seconds.
  nlohmann::json QueryRange(const std::string& expr, double start, double end,
                            double step_s) const {
    std::string target = "/api/v1/query_range?query=" + Q(expr);
    target.append("&start=").append(std::to_string(start));
    target.append("&end=").append(std::to_string(end));
    target.append("&step=").append(std::to_string(step_s));
    return Get(target);
  }

 private:
  // HTTP/1.0, read to the end: Prometheus answers large results chunked to HTTP/1.1, which
  // HttpClient does not read.
  nlohmann::json Get(const std::string& target) const {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string answer;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      std::string request = "GET ";
      request.append(target).append(" HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
      if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
        char buf[65536];
        ssize_t n;
        while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) answer.append(buf, static_cast<size_t>(n));
      }
    }
    close(fd);
    const size_t body = answer.find("\r\n\r\n");
    if (body == std::string::npos) return nullptr;
    return nlohmann::json::parse(answer.substr(body + 4), nullptr, false);
  }

  pid_t pid_ = -1;
  int port_ = 0;
  bool ready_ = false;
  std::string log_path_;
};

// Unix time now, in seconds (Prometheus' clock).
inline double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_DAEMON_PROMETHEUS_SERVER_H_
