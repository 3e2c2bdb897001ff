// The crash harness: a daemon under steady mixed ingest (single pages, gzip bodies,
// NDJSON batches, small WARC uploads, 404s) from 2-4 client threads is killed with SIGKILL at a
// random moment of a round (start-up, load, graceful stop, sweep close, backup) and restarted.
// After each restart every acknowledged page is there with its acknowledged document and the
// store's counts cover them; at the end `shingled check` passes.
//   SHINGLED_CRASH_ROUNDS  rounds (default 5, what CI runs); scripts/crash.sh runs 100
//   SHINGLED_CRASH_SEED    replays a run (the seed used is printed)
#include <zlib.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using json = nlohmann::json;

enum class Moment { kStartup, kLoad, kGracefulStop, kSweepClose, kBackup };
constexpr int kMoments = 5;

const char* MomentName(Moment m) {
  switch (m) {
    case Moment::kStartup:
      return "start-up";
    case Moment::kLoad:
      return "load";
    case Moment::kGracefulStop:
      return "graceful-stop";
    case Moment::kSweepClose:
      return "sweep-close";
    case Moment::kBackup:
      return "backup";
  }
  return "?";
}

// What an acknowledgement promised for a URL.
enum class Ack { kDocument, kGone, kWarcPage };
struct Acked {
  Ack kind;
  uint64_t doc;  // kDocument: the document answered
};

std::string Gzip(const std::string& in) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string WarcResponse(const std::string& url, const std::string& page, int id) {
  std::string http = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
  http.append(page);
  std::string r = "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: ";
  r.append(url)
      .append("\r\nWARC-Date: 2026-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:crash-")
      .append(std::to_string(id))
      .append(">\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: ")
      .append(std::to_string(http.size()))
      .append("\r\n\r\n")
      .append(http)
      .append("\r\n\r\n");
  return r;
}

// Everything acknowledged so far, by URL.
class Ledger {
 public:
  void Add(const std::string& url, Acked a) {
    std::lock_guard<std::mutex> lock(mu_);
    acked_[url] = a;
    ++round_acks_;
  }
  size_t TakeRoundAcks() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(round_acks_, 0);
  }
  size_t RoundAcks() {
    std::lock_guard<std::mutex> lock(mu_);
    return round_acks_;
  }
  std::map<std::string, Acked> Snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    return acked_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, Acked> acked_;
  size_t round_acks_ = 0;
};

// Client threads posting mixed ingest until Finish(); they reconnect when the daemon goes away.
class Load {
 public:
  Load(int port, int clients, int round, uint64_t seed, Ledger* ledger) : ledger_(ledger) {
    for (int c = 0; c < clients; ++c) {
      threads_.emplace_back([this, port, c, round, seed] { Run(port, c, round, seed + c); });
    }
  }
  ~Load() { Finish(); }
  void Finish() {
    stop_ = true;
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  void Run(int port, int c, int round, uint64_t seed) {
    std::mt19937_64 rng(seed);
    auto client = std::make_unique<HttpClient>(port);
    const std::string base =
        "https://crash.example/r" + std::to_string(round) + "/c" + std::to_string(c) + "/";
    for (int n = 0; !stop_; ++n) {
      if (!client->connected()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the daemon is gone
        client = std::make_unique<HttpClient>(port);
        continue;
      }
      const std::string url = base + std::to_string(n);
      const int page_seed = round * 10000000 + c * 1000000 + n * 10;
      const uint64_t pick = rng() % 100;
      HttpResponse r;
      if (pick < 40) {  // a single page
        r = client->Request("POST", "/v1/pages?url=" + Q(url), SyntheticPage(page_seed),
                            "text/html");
        if (r.status == 200) Record(url, r.body);
      } else if (pick < 65) {  // a single page, gzip
        r = client->Request("POST", "/v1/pages?url=" + Q(url), Gzip(SyntheticPage(page_seed)),
                            "text/html", "Content-Encoding: gzip\r\n");
        if (r.status == 200) Record(url, r.body);
      } else if (pick < 75) {  // a 404
        r = client->Request("POST", "/v1/pages?status=404&url=" + Q(url), "", "text/html");
        if (r.status == 200) ledger_->Add(url, {Ack::kGone, 0});
      } else if (pick < 95) {  // an NDJSON batch of 4
        std::string body;
        for (int i = 0; i < 4; ++i) {
          body.append(json{{"url", url + "/b" + std::to_string(i)},
                           {"content", SyntheticPage(page_seed + 1 + i)},
                           {"content_type", "text/html"}}
                          .dump())
              .append("\n");
        }
        r = client->Request("POST", "/v1/pages", body, "application/x-ndjson");
        if (r.status == 200) {
          // Named: a range-for over a member of a temporary would outlive the temporary.
          const json answer = json::parse(r.body);
          for (const json& res : answer["results"]) {
            if (!res.contains("error")) {
              ledger_->Add(res["url"], {Ack::kDocument, res["doc"].get<uint64_t>()});
            }
          }
        }
      } else {  // a small WARC upload of 3 records
        std::string warc;
        for (int i = 0; i < 3; ++i) {
          warc.append(WarcResponse(url + "/w" + std::to_string(i), SyntheticPage(page_seed + 5 + i),
                                   page_seed + i));
        }
        r = client->Request("POST", "/v1/pages", warc, "application/warc");
        if (r.status == 200) {
          const json j = json::parse(r.body);
          EXPECT_EQ(j["pages"], 3) << r.body;
          EXPECT_TRUE(j["errors"].empty()) << r.body;
          for (int i = 0; i < 3; ++i)
            ledger_->Add(url + "/w" + std::to_string(i), {Ack::kWarcPage, 0});
        }
      }
      if (r.status == 0) {
        client = std::make_unique<HttpClient>(port);
      } else if (r.status != 200 && r.status != 503) {
        ADD_FAILURE() << "status " << r.status << ": " << r.body;
      }
    }
  }
  void Record(const std::string& url, const std::string& body) {
    const json j = json::parse(body);
    ledger_->Add(j["url"], {Ack::kDocument, j["doc"].get<uint64_t>()});
    EXPECT_EQ(j["url"], url);
  }

  Ledger* ledger_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Whether `versions` holds what `a` promised.
bool Holds(const json& versions, const Acked& a) {
  for (const json& v : versions) {
    const uint64_t doc = v["doc"].get<uint64_t>();
    if (a.kind == Ack::kDocument && doc == a.doc) return true;
    if (a.kind == Ack::kGone && v["status"] == 404) return true;
    if (a.kind == Ack::kWarcPage && doc != 0) return true;
  }
  return false;
}

// Checks every acknowledged page against the running daemon; returns how many held.
size_t Verify(int port, const std::map<std::string, Acked>& acked) {
  HttpClient client(port);
  size_t verified = 0;
  std::set<uint64_t> docs;
  for (const auto& [url, a] : acked) {
    const HttpResponse r = client.Request("GET", "/v1/urls?url=" + Q(url));
    if (r.status == 200 && Holds(json::parse(r.body)["versions"], a)) {
      ++verified;
    } else {
      ADD_FAILURE() << "lost: " << url << " (doc " << a.doc << "): " << r.status << " " << r.body;
    }
    if (a.kind == Ack::kDocument) docs.insert(a.doc);
  }
  docs.erase(0);
  const HttpResponse r = client.Request("GET", "/v1/stats");
  EXPECT_EQ(r.status, 200) << r.body;
  if (r.status == 200) {
    const json stats = json::parse(r.body);
    EXPECT_GE(stats["urls"].get<uint64_t>(), acked.size()) << r.body;
    EXPECT_GE(stats["documents"].get<uint64_t>(), docs.size()) << r.body;
  }
  return verified;
}

// Forks and execs the binary with `args`; its output goes to `log`.
pid_t Spawn(std::vector<std::string> args, const std::string& log) {
  args.insert(args.begin(), SHINGLED_BINARY);
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const uint64_t n = std::strtoull(v, &end, 10);
  if (*end != '\0') {
    ADD_FAILURE() << name << " must be a number, not \"" << v << "\"";
    return fallback;
  }
  return n;
}

TEST(CrashRoundsTest, SigkillAtRandomMomentsLosesNoAcknowledgedPage) {
  const uint64_t rounds = EnvOr("SHINGLED_CRASH_ROUNDS", 5);
  const uint64_t seed = EnvOr("SHINGLED_CRASH_SEED", std::random_device{}());
  std::printf("crash rounds: %" PRIu64 ", seed %" PRIu64 " (SHINGLED_CRASH_SEED=%" PRIu64
              " replays)\n",
              rounds, seed, seed);
  std::mt19937_64 rng(seed);
  TempDir dir;
  const std::string store_dir = dir.path() + "/store";
  const std::string config = "[logging]\naccess_log = false\n";
  Ledger ledger;
  size_t last_verified = 0;
  for (uint64_t round = 0; round < rounds; ++round) {
    // Every moment in the first five rounds, then at random.
    const Moment moment = static_cast<Moment>(round < kMoments ? round : rng() % kMoments);
    if (moment == Moment::kStartup) {
      // Killed during start-up, before /readyz: while the store opens and recovers.
      const std::string cfg = dir.Write("startup.toml", config);
      const pid_t pid =
          Spawn({"serve", "--config", cfg, "--store", store_dir, "--listen", "127.0.0.1:0"},
                dir.path() + "/startup.log");
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200000));
      kill(pid, SIGKILL);
      WaitExit(pid);
    }
    Daemon daemon(dir, store_dir, config);
    ASSERT_GT(daemon.port(), 0) << "round " << round << ": " << daemon.log();
    const size_t verified = Verify(daemon.port(), ledger.Snapshot());
    ASSERT_FALSE(::testing::Test::HasFailure()) << "round " << round << " (seed " << seed << ")";

    const int clients = 2 + static_cast<int>(rng() % 3);
    Load load(daemon.port(), clients, static_cast<int>(round), rng(), &ledger);
    const size_t want = 40 + rng() % 120;
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
    while (ledger.RoundAcks() < want && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // poll interval
    }
    std::string backup_dest;
    pid_t backup = -1;
    std::thread closer;
    std::atomic<int> close_status{-1};
    switch (moment) {
      case Moment::kStartup:
      case Moment::kLoad:
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 100000));
        break;
      case Moment::kGracefulStop:
        daemon.Signal(SIGTERM);
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 50000));
        break;
      case Moment::kSweepClose: {
        // A sweep scoped to the load's host closes over every URL of it, writing gone versions.
        const std::string name = "crash-" + std::to_string(round);
        const HttpResponse r =
            HttpClient(daemon.port())
                .Request("POST", "/v1/sweeps",
                         json{{"name", name}, {"hosts", {"crash.example"}}}.dump(),
                         "application/json");
        EXPECT_EQ(r.status, 200) << r.body;
        closer = std::thread([port = daemon.port(), name, &close_status] {
          close_status =
              HttpClient(port)
                  .Request("POST", "/v1/sweeps/" + name + "/close", "{}", "application/json")
                  .status;
        });
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 30000));
        break;
      }
      case Moment::kBackup:
        // `shingled backup` is a process of its own on the live store: it is killed too.
        backup_dest = dir.path() + "/backup-" + std::to_string(round);
        backup = Spawn({"backup", "--store", store_dir, backup_dest}, dir.path() + "/backup.log");
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 60000));
        kill(backup, SIGKILL);
        break;
    }
    daemon.Signal(SIGKILL);
    const std::optional<int> code = daemon.Wait();
    EXPECT_TRUE(code == 128 + SIGKILL || (moment == Moment::kGracefulStop && code == 0))
        << "exit " << code.value_or(-1) << ": " << daemon.log();
    if (moment == Moment::kGracefulStop) {
      std::printf("  graceful stop: %s\n", code == 0 ? "exited 0 before the kill" : "killed");
    }
    load.Finish();
    if (closer.joinable()) {
      closer.join();
      // 200: the close finished before the kill; 0: the kill came first.
      EXPECT_TRUE(close_status == 200 || close_status == 0) << close_status;
      std::printf("  sweep close: %s\n",
                  close_status == 200 ? "answered before the kill" : "killed");
    }
    if (backup > 0) {
      // A backup killed midway leaves no data.mdb that would pass for a store; one that finished
      // before the kill is a consistent store.
      const int backup_exit = WaitExit(backup);
      const bool has_store = std::filesystem::exists(backup_dest + "/data.mdb");
      if (backup_exit == 0) {
        EXPECT_TRUE(has_store);
        std::string out;
        EXPECT_EQ(RunCli("check --store " + backup_dest, &out), 0) << out;
      } else {
        EXPECT_EQ(backup_exit, 128 + SIGKILL) << ReadWholeFile(dir.path() + "/backup.log");
        // data.mdb appears only by the rename of a finished, synced copy: a kill after the
        // rename (before the exit) leaves a whole store; a kill before it leaves none, and what
        // it left is no obstacle to taking the backup again into the same directory.
        std::string out;
        if (!has_store) {
          EXPECT_EQ(RunCli("backup --store " + store_dir + " " + backup_dest, &out), 0) << out;
        }
        EXPECT_EQ(RunCli("check --store " + backup_dest, &out), 0) << out;
      }
      std::printf("  backup: %s\n", backup_exit == 0 ? "finished before the kill"
                                    : has_store      ? "killed after its rename, a whole store"
                                                     : "killed, then taken again");
    }
    const size_t round_acked = ledger.TakeRoundAcks();
    std::printf("round %" PRIu64
                ": moment %s, clients %d, pages acknowledged %zu, "
                "verified after the restart %zu\n",
                round, MomentName(moment), clients, round_acked, verified);
    std::fflush(stdout);
  }
  // The last restart: everything is there, a graceful stop, and the store checks.
  const std::map<std::string, Acked> acked = ledger.Snapshot();
  {
    Daemon daemon(dir, store_dir, config);
    ASSERT_GT(daemon.port(), 0) << daemon.log();
    last_verified = Verify(daemon.port(), acked);
    daemon.Signal(SIGTERM);
    EXPECT_EQ(daemon.Wait(), 0) << daemon.log();
  }
  std::string out;
  EXPECT_EQ(RunCli("check --store " + store_dir, &out), 0) << out;
  std::printf("crash summary: rounds %" PRIu64
              ", pages acknowledged %zu, verified %zu, lost %zu, "
              "seed %" PRIu64 "\n",
              rounds, acked.size(), last_verified, acked.size() - last_verified, seed);
  EXPECT_EQ(last_verified, acked.size());
}

}  // namespace
}  // namespace shingled::testing
