// A real Redis Cluster on loopback for tests and benchmarks: Debian's redis-server started as 3
// masters (optionally with replicas) on free ports in a temporary folder, joined with
// `redis-cli --cluster create`, and stopped (SIGTERM, then SIGKILL) when the object goes away.
//
// Every node requires a password (written to a file, as ClusterOptions::password_file wants it),
// so that every test also runs the client's AUTH. Persistence is the backend's (docs/REDIS.md,
// "Durability"): no RDB snapshots (`--save ""`), the append-only file with `appendfsync always`,
// so a restarted node comes back with every write it acknowledged (Options::durable = false turns
// the append-only file off: a benchmark of memory, where the fsyncs only cost time).
//
// Not thread-safe; one object per test. Available() says whether redis-server and redis-cli are
// installed (scripts/install-deps.sh installs them); tests skip with its message when not.
#ifndef SHINGLED_TESTS_REDIS_REDIS_CLUSTER_H_
#define SHINGLED_TESTS_REDIS_REDIS_CLUSTER_H_

#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace shingled::redis::testing {

class RedisCluster {
 public:
  struct Options {
    int masters = 3;
    int replicas_per_master = 0;
    // `--appendonly yes --appendfsync always`; false: `--appendonly no`.
    bool durable = true;
    // A redis.conf each node reads first (ops/redis/shingled-node.conf, say); the options
    // above and the harness's own (ports, directory, password, node timeout) override it.
    std::string config_file{};
  };

  // True when redis-server and redis-cli are on the PATH; else false with the reason in `*why`.
  static bool Available(std::string* why) {
    for (const char* tool : {"redis-server", "redis-cli"}) {
      if (FindOnPath(tool).empty()) {
        *why = std::string(tool).append(
            " is not installed (scripts/install-deps.sh installs redis-server and redis-tools)");
        return false;
      }
    }
    return true;
  }

  RedisCluster() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "shingled-redis-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    password_ = "pw-" + std::to_string(::getpid());
    std::ofstream(password_file()) << password_ << "\n";
  }
  ~RedisCluster() {
    for (Node& n : nodes_) Stop(n);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;

  // Starts the nodes, creates the cluster and waits until every node says cluster_state:ok.
  Status Start(const Options& options) {
    durable_ = options.durable;
    config_file_ = options.config_file;
    const int total = options.masters * (1 + options.replicas_per_master);
    const std::vector<int> ports = FreePorts(2 * total);
    for (int i = 0; i < total; ++i) {
      nodes_.push_back(Node{.port = ports[2 * i], .bus_port = ports[2 * i + 1], .pid = -1});
      SHINGLED_RETURN_IF_ERROR(Launch(nodes_.back()));
    }
    for (Node& n : nodes_) {
      // A port taken between FreePorts and the server's bind (by another test running in
      // parallel) makes the server exit: it gets fresh ports, a few times.
      Status up = WaitForPing(n);
      for (int retry = 0; retry < 3 && !up.ok() && n.pid < 0; ++retry) {
        const std::vector<int> fresh = FreePorts(2);
        n.port = fresh[0];
        n.bus_port = fresh[1];
        SHINGLED_RETURN_IF_ERROR(Launch(n));
        up = WaitForPing(n);
      }
      SHINGLED_RETURN_IF_ERROR(up);
    }
    std::string create = "--cluster create";
    for (const Node& n : nodes_) create.append(" 127.0.0.1:").append(std::to_string(n.port));
    create.append(" --cluster-replicas ")
        .append(std::to_string(options.replicas_per_master))
        .append(" --cluster-yes");
    std::string out;
    if (Cli(nodes_[0].port, create, &out) != 0) {
      return InternalError(std::string("redis-cli --cluster create failed: ").append(out));
    }
    return WaitUntilHealthy();
  }

  // Waits until every running node reports cluster_state:ok and knows every node, and every
  // replica is in sync with its master.
  Status WaitUntilHealthy() {
    const std::string known = "cluster_known_nodes:" + std::to_string(nodes_.size());
    for (int attempt = 0; attempt < 600; ++attempt) {
      bool all = true;
      for (const Node& n : nodes_) {
        std::string info;
        if (n.pid < 0 || Cli(n.port, "cluster info", &info) != 0 ||
            info.find("cluster_state:ok") == std::string::npos ||
            info.find(known) == std::string::npos) {
          all = false;
          break;
        }
        // A replica has finished its first synchronization (before it, WAIT cannot count it
        // and a failover would promote an empty node).
        std::string replication;
        if (Cli(n.port, "info replication", &replication) != 0 ||
            (replication.find("role:slave") != std::string::npos &&
             replication.find("master_link_status:up") == std::string::npos)) {
          all = false;
          break;
        }
      }
      if (all) return OkStatus();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return DeadlineExceededError("the redis cluster did not reach cluster_state:ok in 60 s");
  }

  // After Kill(killed) of a master: waits until every running node reports cluster_state:ok and
  // no longer gives the killed node any slot (a replica was promoted in its place), bounded at
  // 60 s.
  Status WaitForFailover(int killed) {
    const std::string tag = ":" + std::to_string(nodes_[killed].port) + "@";
    for (int attempt = 0; attempt < 600; ++attempt) {
      bool all = true;
      for (const Node& n : nodes_) {
        if (n.pid < 0) continue;
        std::string info;
        std::string table;
        if (Cli(n.port, "cluster info", &info) != 0 ||
            info.find("cluster_state:ok") == std::string::npos ||
            Cli(n.port, "cluster nodes", &table) != 0 || KilledNodeOwnsSlots(table, tag)) {
          all = false;
          break;
        }
      }
      if (all) return OkStatus();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return DeadlineExceededError("no replica took over in 60 s (logs in " + dir_ + ")");
  }

  // Seeds for ClusterOptions: every node's "127.0.0.1:port".
  std::vector<std::string> seeds() const {
    std::vector<std::string> out;
    for (const Node& n : nodes_) out.push_back("127.0.0.1:" + std::to_string(n.port));
    return out;
  }
  int port(int i) const { return nodes_[i].port; }
  int size() const { return static_cast<int>(nodes_.size()); }
  std::string password_file() const { return dir_ + "/password"; }
  const std::string& dir() const { return dir_; }

  // The node's cluster id (CLUSTER MYID).
  std::string NodeId(int i) const {
    std::string out;
    Cli(nodes_[i].port, "cluster myid", &out);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
  }

  // The index of the node listening on `port`, or -1.
  int IndexOfPort(int p) const {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].port == p) return static_cast<int>(i);
    }
    return -1;
  }

  // SIGKILL, as a crash.
  void Kill(int i) {
    Node& n = nodes_[i];
    if (n.pid < 0) return;
    ::kill(n.pid, SIGKILL);
    ::waitpid(n.pid, nullptr, 0);
    n.pid = -1;
  }

  // Starts a killed node again on its ports with its nodes.conf, and waits for a healthy cluster.
  Status Restart(int i) {
    SHINGLED_RETURN_IF_ERROR(Launch(nodes_[i]));
    SHINGLED_RETURN_IF_ERROR(WaitForPing(nodes_[i]));
    return WaitUntilHealthy();
  }

  // Runs redis-cli against node `port` with `args` (shell words), authenticated; its stdout and
  // stderr in `*out`. Returns the exit code.
  int Cli(int node_port, const std::string& args, std::string* out) const {
    const std::string cmd = std::string("redis-cli -h 127.0.0.1 -p ")
                                .append(std::to_string(node_port))
                                .append(" -a ")
                                .append(password_)
                                .append(" --no-auth-warning ")
                                .append(args)
                                .append(" 2>&1");
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return -1;
    out->clear();
    std::array<char, 4096> buf;
    size_t got;
    while ((got = fread(buf.data(), 1, buf.size(), pipe)) > 0) out->append(buf.data(), got);
    const int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  struct Node {
    int port;
    int bus_port;
    pid_t pid;
  };

  // Whether the line of `tag` (":port@") in CLUSTER NODES output lists slots (fields past the 8th).
  static bool KilledNodeOwnsSlots(const std::string& table, const std::string& tag) {
    const size_t at = table.find(tag);
    if (at == std::string::npos) return true;
    const size_t start = table.rfind('\n', at) == std::string::npos ? 0 : table.rfind('\n', at) + 1;
    size_t end = table.find('\n', at);
    if (end == std::string::npos) end = table.size();
    int fields = 0;
    bool in_field = false;
    for (size_t i = start; i < end; ++i) {
      const bool space = table[i] == ' ' || table[i] == '\r';
      if (!space && !in_field) ++fields;
      in_field = !space;
    }
    return fields > 8;
  }

  static std::string FindOnPath(const std::string& tool) {
    const char* path = getenv("PATH");
    std::string dirs = path == nullptr ? "/usr/bin:/bin" : path;
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      const std::string candidate = dirs.substr(start, end - start).append("/").append(tool);
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
      start = end + 1;
    }
    return "";
  }

  // `n` distinct free loopback ports, held open together so that none is handed out twice.
  static std::vector<int> FreePorts(int n) {
    std::vector<int> fds;
    std::vector<int> ports;
    for (int i = 0; i < n; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = 0;
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
      socklen_t len = sizeof(addr);
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
      ports.push_back(ntohs(addr.sin_port));
      fds.push_back(fd);
    }
    for (const int fd : fds) ::close(fd);
    return ports;
  }

  Status Launch(Node& n) {
    const std::string port = std::to_string(n.port);
    std::vector<std::string> args = {
        "redis-server",
        "--port",
        port,
        "--cluster-port",
        std::to_string(n.bus_port),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        dir_ + "/nodes-" + port + ".conf",
        "--cluster-node-timeout",
        "2000",
        "--dir",
        dir_,
        "--logfile",
        dir_ + "/redis-" + port + ".log",
        "--save",
        "",
        "--appendonly",
        durable_ ? "yes" : "no",
        "--appendfsync",
        "always",
        "--appenddirname",
        "aof-" + port,
        "--repl-diskless-sync-delay",
        "0",
        "--requirepass",
        password_,
        "--masterauth",
        password_,
    };
    if (!config_file_.empty()) args.insert(args.begin() + 1, config_file_);
    const pid_t pid = ::fork();
    if (pid < 0) return InternalError("fork failed");
    if (pid == 0) {
      // The server dies with the test or benchmark that started it, even when that one is
      // killed and its destructor never runs.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execvp("redis-server", argv.data());
      ::_exit(127);
    }
    n.pid = pid;
    return OkStatus();
  }

  // Waits until the node answers PING. When its process has exited, sets n.pid to -1 and says so.
  Status WaitForPing(Node& n) {
    const std::string where = "redis-server on port " + std::to_string(n.port);
    for (int attempt = 0; attempt < 300; ++attempt) {
      std::string out;
      if (Cli(n.port, "ping", &out) == 0 && out.find("PONG") != std::string::npos) {
        return OkStatus();
      }
      if (::waitpid(n.pid, nullptr, WNOHANG) == n.pid) {
        n.pid = -1;
        return InternalError(where + " exited (see its log in " + dir_ + ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return DeadlineExceededError(where + " did not answer PING in 30 s (see its log in " + dir_ +
                                 ")");
  }

  void Stop(Node& n) {
    if (n.pid < 0) return;
    ::kill(n.pid, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(n.pid, nullptr, WNOHANG) == n.pid) {
        n.pid = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(n.pid, SIGKILL);
    ::waitpid(n.pid, nullptr, 0);
    n.pid = -1;
  }

  std::string dir_;
  std::string password_;
  bool durable_ = true;
  std::string config_file_;
  std::vector<Node> nodes_;
};

}  // namespace shingled::redis::testing

#endif  // SHINGLED_TESTS_REDIS_REDIS_CLUSTER_H_
