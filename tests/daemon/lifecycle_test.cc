// Stopping the daemon with requests in flight: SIGTERM loses no acknowledged page and exits 0;
// SIGKILL loses no acknowledged page either (LMDB), and the store passes `shingled check`.
// SIGHUP reloads the config and keeps the daemon running.
#include <sys/un.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <set>

#include "store/store.h"
#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

std::string Page(int client, int n) {
  std::string text = "<html><body><p>";
  uint64_t x = static_cast<uint64_t>(client * 100000 + n) * 0x9E3779B97F4A7C15ull + 1;
  for (int i = 0; i < 200; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    text += "t" + std::to_string(x % 3000) + " ";
  }
  return text + "</p></body></html>";
}

// Clients that post distinct pages over keep-alive connections until the server goes away,
// recording the URLs acknowledged with 200.
class Load {
 public:
  Load(int port, int clients) {
    for (int c = 0; c < clients; ++c) {
      threads_.emplace_back([this, port, c] {
        auto client = std::make_unique<HttpClient>(port);
        for (int n = 0; n < 5000 && !stop_; ++n) {
          const std::string url =
              "https://load.example/" + std::to_string(c) + "/" + std::to_string(n);
          HttpResponse r =
              client->Request("POST", "/v1/pages?url=" + Q(url), Page(c, n), "text/html");
          if (r.status == 200) {
            std::lock_guard<std::mutex> lock(mu_);
            acked_.insert(url);
          } else if (r.status == 0) {
            return;  // the server closed the connection: it is stopping
          } else if (r.headers["connection"] == "close") {
            return;
          }
        }
      });
    }
  }
  ~Load() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }
  size_t acked() {
    std::lock_guard<std::mutex> lock(mu_);
    return acked_.size();
  }
  std::set<std::string> Finish() {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    std::lock_guard<std::mutex> lock(mu_);
    return acked_;
  }

 private:
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::set<std::string> acked_;
};

void WaitForAcks(Load* load, size_t n) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  while (load->acked() < n && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // poll interval
  }
  ASSERT_GE(load->acked(), n);
}

// Every acknowledged URL has a version in the store.
void ExpectAllPresent(const std::string& store_dir, const std::set<std::string>& acked) {
  auto context = dedup::SketchContext::Create(dedup::SketchParams{});
  ASSERT_TRUE(context.ok());
  auto store = store::Store::Open(store_dir, store::StoreOptions{}, **context);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  size_t missing = 0;
  for (const std::string& url : acked) {
    if (!(*store)->History(url).ok()) ++missing;
  }
  EXPECT_EQ(missing, 0u) << "of " << acked.size() << " acknowledged pages";
}

TEST(LifecycleTest, SigtermWithRequestsInFlightLosesNothingAndExitsZero) {
  TempDir dir;
  const std::string store_dir = dir.path() + "/store";
  std::set<std::string> acked;
  {
    Daemon daemon(dir, store_dir);
    ASSERT_GT(daemon.port(), 0) << daemon.log();
    Load load(daemon.port(), 8);
    WaitForAcks(&load, 100);
    daemon.Signal(SIGTERM);
    EXPECT_EQ(daemon.Wait(), 0) << daemon.log();
    acked = load.Finish();
    EXPECT_NE(daemon.log().find("stopped; store closed"), std::string::npos) << daemon.log();
  }
  ASSERT_GE(acked.size(), 100u);
  ExpectAllPresent(store_dir, acked);
}

TEST(LifecycleTest, SigkillThenRestartKeepsEveryAcknowledgedPageAndChecks) {
  TempDir dir;
  const std::string store_dir = dir.path() + "/store";
  std::set<std::string> acked;
  for (int round = 0; round < 3; ++round) {
    Daemon daemon(dir, store_dir);
    ASSERT_GT(daemon.port(), 0) << daemon.log();
    Load load(daemon.port(), 8);
    WaitForAcks(&load, 50);
    daemon.Signal(SIGKILL);
    EXPECT_EQ(daemon.Wait(), 128 + SIGKILL);
    const std::set<std::string> round_acked = load.Finish();
    acked.insert(round_acked.begin(), round_acked.end());
  }
  // Restarted, the daemon answers for every acknowledged URL.
  {
    Daemon daemon(dir, store_dir);
    ASSERT_GT(daemon.port(), 0) << daemon.log();
    HttpClient client(daemon.port());
    size_t missing = 0;
    for (const std::string& url : acked) {
      if (client.Request("GET", "/v1/urls?url=" + Q(url)).status != 200) ++missing;
    }
    EXPECT_EQ(missing, 0u);
    daemon.Signal(SIGTERM);
    EXPECT_EQ(daemon.Wait(), 0);
  }
  std::string out;
  EXPECT_EQ(RunCli("check --store " + store_dir, &out), 0) << out;
  ExpectAllPresent(store_dir, acked);
}

TEST(LifecycleTest, SecondSignalStopsAtOnce) {
  TempDir dir;
  // A long deadline, and a client that holds a request open: the first SIGTERM waits for it,
  // the second does not.
  Daemon daemon(dir, dir.path() + "/store", "[server]\nshutdown_deadline_ms = 600000\n");
  ASSERT_GT(daemon.port(), 0);
  HttpClient client(daemon.port());
  ASSERT_TRUE(client.SendRaw(
      "POST /v1/pages?url=https://e.com/ HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"));
  // Wait until the daemon has read the request head (it shows in no log): a request on another
  // connection is served after it, on the same I/O thread.
  EXPECT_EQ(HttpClient(daemon.port()).Request("GET", "/healthz").status, 200);
  daemon.Signal(SIGTERM);
  EXPECT_FALSE(daemon.Wait(std::chrono::milliseconds(300)).has_value());
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(std::chrono::seconds(10)), 1) << daemon.log();
}

// Receives one datagram within 20 s; "" on timeout.
std::string ReceiveNotify(int fd) {
  char buf[256];
  const ssize_t n = recv(fd, buf, sizeof(buf), 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

TEST(LifecycleTest, NotifiesSystemdReadyAndStopping) {
  // An abstract socket, as systemd passes them ("@name" in $NOTIFY_SOCKET).
  const std::string name = "shingled-test-" + std::to_string(getpid());
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr),
                 static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())),
            0);
  timeval tv{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setenv("NOTIFY_SOCKET", ("@" + name).c_str(), 1);
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store");
  unsetenv("NOTIFY_SOCKET");
  ASSERT_GT(daemon.port(), 0);
  EXPECT_EQ(ReceiveNotify(fd), "READY=1");
  daemon.Signal(SIGTERM);
  EXPECT_EQ(ReceiveNotify(fd), "STOPPING=1");
  EXPECT_EQ(daemon.Wait(), 0);
  close(fd);
}

// A page post with `token` as its bearer token; its status.
int PostWithToken(int port, const std::string& token, const std::string& path) {
  return HttpClient(port)
      .Request("POST", "/v1/pages?url=" + Q("https://reload.example/" + path),
               "<p>a page about reloading " + path + "</p>", "text/html",
               "Authorization: Bearer " + token + "\r\n")
      .status;
}

// The bug: SIGHUP ended the daemon silently (exit 129), which systemd takes for a clean exit.
TEST(LifecycleTest, SighupReloadsTheTokenAndKeepsRunning) {
  TempDir dir;
  const std::string token_file = dir.WriteSecret("token", "old-token-0123456\n");
  const std::string config = "[auth]\ntoken_file = \"" + token_file + "\"\n";
  Daemon daemon(dir, dir.path() + "/store", config);
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  EXPECT_EQ(PostWithToken(daemon.port(), "old-token-0123456", "1"), 200);

  dir.Write("token", "new-token-0123456\n");
  // A key that needs a restart changes too: it is named as ignored, and the rest applies.
  dir.Write(daemon.config_path().substr(dir.path().size() + 1),
            config + "[logging]\naccess_log = false\n[ingest]\nworkers = 3\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("SIGHUP: reloaded")) << daemon.log();
  EXPECT_FALSE(daemon.Wait(std::chrono::milliseconds(100)).has_value()) << daemon.log();
  EXPECT_EQ(PostWithToken(daemon.port(), "old-token-0123456", "2"), 401);
  EXPECT_EQ(PostWithToken(daemon.port(), "new-token-0123456", "3"), 200);
  const std::string log = daemon.log();
  EXPECT_NE(log.find("changed logging.access_log, the auth token"), std::string::npos) << log;
  EXPECT_NE(log.find("ingest.workers changed"), std::string::npos) << log;
  EXPECT_NE(log.find("ignored until then"), std::string::npos) << log;
  // The tokens themselves are never logged.
  EXPECT_EQ(log.find("old-token-0123456"), std::string::npos) << log;
  EXPECT_EQ(log.find("new-token-0123456"), std::string::npos) << log;

  // A second SIGHUP with nothing changed says so.
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("nothing changed")) << daemon.log();
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0) << daemon.log();
}

TEST(LifecycleTest, SighupWithABrokenFileKeepsTheRunningConfig) {
  TempDir dir;
  const std::string token_file = dir.WriteSecret("token", "the-token-0123456\n");
  const std::string config = "[auth]\ntoken_file = \"" + token_file + "\"\n";
  Daemon daemon(dir, dir.path() + "/store", config);
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string config_name = daemon.config_path().substr(dir.path().size() + 1);

  // Valid TOML with a value out of range: refused whole, so protect_writes = false does not
  // apply either.
  dir.Write(config_name, config + "protect_writes = false\n[limits]\nmax_url_bytes = 1\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("config not reloaded")) << daemon.log();
  EXPECT_NE(daemon.log().find("limits.max_url_bytes: 1 is out of range"), std::string::npos)
      << daemon.log();
  EXPECT_FALSE(daemon.Wait(std::chrono::milliseconds(100)).has_value()) << daemon.log();
  EXPECT_EQ(PostWithToken(daemon.port(), "wrong", "1"), 401);
  EXPECT_EQ(PostWithToken(daemon.port(), "the-token-0123456", "2"), 200);

  // Not TOML at all, and then a token file that is gone: refused the same way.
  dir.Write(config_name, "[auth\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("config not reloaded", 2)) << daemon.log();
  dir.Write(config_name, "[auth]\ntoken_file = \"" + dir.path() + "/no-such-token\"\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("config not reloaded", 3)) << daemon.log();
  EXPECT_NE(daemon.log().find("no-such-token"), std::string::npos) << daemon.log();
  EXPECT_EQ(PostWithToken(daemon.port(), "the-token-0123456", "3"), 200);

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0) << daemon.log();
}

TEST(LifecycleTest, SighupNotifiesSystemdReloadingThenReady) {
  const std::string name = "shingled-reload-test-" + std::to_string(getpid());
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr),
                 static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())),
            0);
  timeval tv{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setenv("NOTIFY_SOCKET", ("@" + name).c_str(), 1);
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store");
  unsetenv("NOTIFY_SOCKET");
  ASSERT_GT(daemon.port(), 0);
  EXPECT_EQ(ReceiveNotify(fd), "READY=1");
  daemon.Signal(SIGHUP);
  EXPECT_EQ(ReceiveNotify(fd).rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0u);
  EXPECT_EQ(ReceiveNotify(fd), "READY=1");
  daemon.Signal(SIGTERM);
  EXPECT_EQ(ReceiveNotify(fd), "STOPPING=1");
  EXPECT_EQ(daemon.Wait(), 0);
  close(fd);
}

}  // namespace
}  // namespace shingled::testing
