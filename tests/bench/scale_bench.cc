// Scale-out benchmark (docs/SCALING.md): one `shingled serve` on LMDB against
// 1, 2 and 3 daemons sharing one Redis Cluster, fed the same corpus, and the cluster's round
// trips per page measured in-process. A plain program, not a test: no time limits.
//
//   build-rel/tests/bench/scale_bench [--pages 20000] [--threads 4] [--batch 100]
//       [--configs lmdb,redis1,redis2,redis3] [--replicas 0] [--min-replicas 0]
//       [--apply-pages 2000] [--apply-batches 1,10,100] [--apply-stores 2,3] [--fsync always|no]
//       [--verify-sample K] [--chunking] [--daemon-only] [--apply-only]
//
// It starts a 3-master Redis Cluster on loopback (tests/redis/redis_cluster.h: durable, with
// `appendonly yes` and `appendfsync always` as the backend requires; `--replicas N` adds N
// replicas per master), its nodes reading ops/redis/shingled-node.conf.
//
// The corpus: synthetic HTML pages of ~1,000 words in families of 4 near-copies (each copy
// changes 2 words of its own: resemblance ~0.93 between two copies, over the verified threshold)
// and one exact copy of the family's first page at another URL. Pages are ordered copy by copy
// (every family's first page, then every family's second, ...), so that near-copies rarely race.
// The same corpus must give the same verdicts on every configuration: families x 1 `new`,
// families x 3 `near_duplicate`, families x 1 `duplicate`.
//
// Part 1, daemons (`--configs`): for each configuration it starts the daemons (`shingled serve`,
// each with its own port and config file; `lmdb` one daemon on a store in a temporary folder,
// `redisN` N daemons on the cluster, FLUSHALL on every master before the run, chunking "none" on
// every configuration so that all do the same work), splits the corpus across the daemons (page
// i to daemon i mod N) and posts it with `--threads` client threads per daemon, in JSON-lines
// batches of `--batch` pages (`POST /v1/pages`, application/x-ndjson: what a crawler pipeline
// sends; `--batch 1` posts each page alone, text/html). Prints pages/s (all pages over the wall
// time of the run), p50 and p99 latency per request, the verdict counts, and the load average
// before and after. A redis configuration whose cluster holds no key once its daemons are up (a
// daemon that does not wire store.backend opens LMDB) is reported invalid and not measured.
//
// Part 2, in-process (`--apply-batches`, `--apply-stores`): a corpus of the same shape of
// `--apply-pages` pages (round trips per page need fewer pages than a timed run), sketched once in
// this process, applied through RedisClusterStore (redis/backend_store.h), made with a
// ClusterClient this program keeps a pointer to, so that it reads the client's counters
// (ClusterClient::stats()) after each Apply: pipelines (each a round trip to one node; the
// pipelines of one round go to the nodes in parallel) and commands, per page and per batch, with
// the batch's wall time and pages/s. One store applying batches of each size in turn (FLUSHALL
// between), then 2 and 3 stores on threads of their own (each its own client: the store part of
// N daemons, without HTTP and sketching) at the largest batch size. The bucket bits are sized
// for the run's documents (redis/FORMAT.md, "Choosing the bucket bits"), and each run prints the
// masters' used_memory added (INFO memory) per page and per document (new and near_duplicate
// pages: everything a page writes, URLs and versions included), the append-only files' growth
// per page (every node's: masters only unless --replicas) and the masters' CPU (INFO cpu) per
// page.
//
// `--fsync no` sets `appendfsync no` on every node and lets the stores accept it
// (allow_unsafe_fsync): NOT durable, only to tell the fsyncs' cost from the round trips'.
// `--verify-sample K` makes the in-process stores with verify_sample_size K (0: none), for the
// memory a document with and without the verification sample; `--chunking` gives them the default
// chunking (chunk records and postings, host URL sets) instead of none.
//
// A progress line is written to stderr when it is a terminal.
#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "dedup/sketch.h"
#include "redis/backend.h"
#include "redis/backend_store.h"
#include "redis/cluster_client.h"
#include "redis/layout.h"
#include "store/store.h"
#include "store/types.h"
#include "tests/redis/redis_cluster.h"
#include "tests/store/test_dir.h"

namespace shingled {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "scale_bench: %s\n", message.c_str());
  std::exit(1);
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

// --- options ---

struct Options {
  int pages = 20000;
  int threads = 4;  // client threads per daemon
  int batch = 100;  // pages per request; 1: a page per POST
  std::vector<std::string> configs = {"lmdb", "redis1", "redis2", "redis3"};
  int replicas = 0;
  int min_replicas = 0;
  std::vector<int> apply_batches = {1, 10, 100};
  std::vector<int> apply_stores = {2, 3};
  int apply_pages = 2000;  // the in-process corpus (its own, smaller: round trips need few pages)
  bool fsync = true;       // false: appendfsync no on every node, allow_unsafe_fsync in the stores
  int verify_sample = -1;  // the in-process params' verify_sample_size (-1: the default)
  bool chunking = false;   // the in-process params' chunking: the default, or none
  bool daemons = true;
  bool in_process = true;
};

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<int> IntList(const std::string& text) {
  std::vector<int> out;
  for (const std::string& s : SplitList(text)) out.push_back(std::atoi(s.c_str()));
  return out;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + arg);
      return argv[++i];
    };
    if (arg == "--pages") {
      o.pages = std::atoi(value().c_str());
    } else if (arg == "--threads") {
      o.threads = std::atoi(value().c_str());
    } else if (arg == "--batch") {
      o.batch = std::atoi(value().c_str());
    } else if (arg == "--configs") {
      o.configs = SplitList(value());
    } else if (arg == "--replicas") {
      o.replicas = std::atoi(value().c_str());
    } else if (arg == "--min-replicas") {
      o.min_replicas = std::atoi(value().c_str());
    } else if (arg == "--apply-batches") {
      o.apply_batches = IntList(value());
    } else if (arg == "--apply-stores") {
      o.apply_stores = IntList(value());
    } else if (arg == "--apply-pages") {
      o.apply_pages = std::atoi(value().c_str());
    } else if (arg == "--verify-sample") {
      o.verify_sample = std::atoi(value().c_str());
      if (o.verify_sample < 0) Die("--verify-sample: a sample size >= 0");
    } else if (arg == "--chunking") {
      o.chunking = true;
    } else if (arg == "--fsync") {
      const std::string v = value();
      if (v != "always" && v != "no") Die("--fsync: always or no");
      o.fsync = v == "always";
    } else if (arg == "--daemon-only") {
      o.in_process = false;
    } else if (arg == "--apply-only") {
      o.daemons = false;
    } else {
      Die("unknown argument " + arg + " (see the header of tests/bench/scale_bench.cc)");
    }
  }
  if (o.pages < 5 || o.apply_pages < 5 || o.threads < 1 || o.batch < 1 || o.batch > 1000 ||
      o.replicas < 0 || o.min_replicas < 0 || o.min_replicas > o.replicas) {
    Die("options out of range: --pages and --apply-pages >= 5, --threads >= 1, --batch 1..1000, "
        "0 <= --min-replicas <= --replicas");
  }
  for (const int b : o.apply_batches) {
    if (b < 1) Die("--apply-batches: each at least 1");
  }
  for (const int s : o.apply_stores) {
    if (s < 1) Die("--apply-stores: each at least 1");
  }
  return o;
}

// --- the corpus ---

constexpr int kCopies = 4;                    // near-copies per family
constexpr int kPagesPerFamily = kCopies + 1;  // and one exact copy
constexpr int kWords = 1000;
constexpr int kChangedWords = 2;          // per near-copy, at positions of its own
constexpr int64_t kDate = 1'793'491'200;  // 2026-11-01T00:00:00Z
constexpr const char* kDateText = "2026-11-01T00:00:00Z";

struct Page {
  std::string url;
  std::string html;
};

uint64_t Next(uint64_t& x) {
  x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return x;
}

std::string FamilyPage(int family, int copy) {
  uint64_t x = static_cast<uint64_t>(family + 1) * 0x9E3779B97F4A7C15ull;
  std::vector<std::string> words;
  words.reserve(kWords);
  // Appended rather than `"w" + std::to_string(...)`, on which GCC 12 warns falsely at -O3.
  for (int i = 0; i < kWords; ++i)
    words.push_back(std::string("w").append(std::to_string(Next(x) % 20000)));
  // Copy c > 0 replaces the words at positions of its own (spread over the page).
  for (int k = 0; copy > 0 && k < kChangedWords; ++k) {
    const int at = (copy * 97 + k * 389) % kWords;
    words[at] =
        std::string("changed").append(std::to_string(copy)).append("x").append(std::to_string(k));
  }
  std::string html = "<html><head><title>family ";
  html.append(std::to_string(family)).append("</title></head><body>");
  for (int i = 0; i < kWords; ++i) {
    if (i % 80 == 0) html.append(i == 0 ? "<p>" : "</p><p>");
    html.append(words[i]).append(" ");
  }
  return html.append("</p></body></html>");
}

std::vector<Page> MakeCorpus(int pages) {
  const int families = pages / kPagesPerFamily;
  std::vector<Page> out;
  out.reserve(static_cast<size_t>(families) * kPagesPerFamily);
  for (int copy = 0; copy < kPagesPerFamily; ++copy) {
    for (int f = 0; f < families; ++f) {
      const std::string host = "http://host" + std::to_string(f % 97) + ".example/";
      if (copy < kCopies) {
        out.push_back(
            {host + "f" + std::to_string(f) + "/c" + std::to_string(copy), FamilyPage(f, copy)});
      } else {
        out.push_back({host + "f" + std::to_string(f) + "/exact", FamilyPage(f, 0)});
      }
    }
  }
  return out;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
  return out.append("\"");
}

// --- verdicts ---

struct Verdicts {
  std::map<std::string, uint64_t> counts;  // verdict name -> pages
  uint64_t page_errors = 0;                // results with "error" instead of a verdict
  void Add(const Verdicts& o) {
    for (const auto& [k, v] : o.counts) counts[k] += v;
    page_errors += o.page_errors;
  }
  std::string ToString() const {
    std::string out;
    for (const char* name : {"new", "near_duplicate", "duplicate"}) {
      const auto it = counts.find(name);
      out.append(name).append(" ").append(std::to_string(it == counts.end() ? 0 : it->second));
      out.append(", ");
    }
    for (const auto& [k, v] : counts) {
      if (k != "new" && k != "near_duplicate" && k != "duplicate") {
        out.append(k).append(" ").append(std::to_string(v)).append(", ");
      }
    }
    return out.append("errors ").append(std::to_string(page_errors));
  }
};

// Counts `"verdict": "X"` (with or without the space) and `"error":` in a response body.
void CountVerdicts(const std::string& body, Verdicts* v) {
  for (size_t at = body.find("\"verdict\""); at != std::string::npos;
       at = body.find("\"verdict\"", at + 1)) {
    size_t q = body.find('"', body.find(':', at) + 1);
    const size_t end = body.find('"', q + 1);
    if (q == std::string::npos || end == std::string::npos) break;
    ++v->counts[body.substr(q + 1, end - q - 1)];
  }
  for (size_t at = body.find("\"error\""); at != std::string::npos;
       at = body.find("\"error\"", at + 1)) {
    ++v->page_errors;
  }
}

// --- the daemons ---

// A blocking keep-alive HTTP/1.1 connection to 127.0.0.1:port.
class Http {
 public:
  explicit Http(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~Http() {
    if (fd_ >= 0) ::close(fd_);
  }
  Http(const Http&) = delete;
  Http& operator=(const Http&) = delete;

  // The status (0: no answer) and body of a POST.
  int Post(const std::string& target, const std::string& content_type, const std::string& body,
           std::string* answer) {
    std::string req = "POST ";
    req.append(target)
        .append(" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ")
        .append(content_type)
        .append("\r\nContent-Length: ")
        .append(std::to_string(body.size()))
        .append("\r\n\r\n")
        .append(body);
    size_t sent = 0;
    while (sent < req.size()) {
      const ssize_t n = ::send(fd_, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return 0;
      sent += static_cast<size_t>(n);
    }
    size_t header_end;
    while ((header_end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return 0;
    }
    const int status = buf_.size() > 12 ? std::atoi(buf_.c_str() + 9) : 0;
    size_t length = 0;
    const std::string head = buf_.substr(0, header_end);
    std::string lower = head;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const size_t cl = lower.find("content-length:");
    if (cl != std::string::npos) length = std::strtoul(head.c_str() + cl + 15, nullptr, 10);
    while (buf_.size() < header_end + 4 + length) {
      if (!Fill()) return 0;
    }
    *answer = buf_.substr(header_end + 4, length);
    buf_.erase(0, header_end + 4 + length);
    return status;
  }

 private:
  bool Fill() {
    char tmp[65536];
    const ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  std::string buf_;
};

// One `shingled serve` process with its config file; killed (SIGTERM, then SIGKILL) at the end.
class Daemon {
 public:
  Daemon(const std::string& dir, const std::string& config) : dir_(dir) {
    std::filesystem::create_directories(dir);
    const std::string config_path = dir + "/shingled.toml";
    std::ofstream(config_path) << config;
    log_path_ = dir + "/daemon.log";
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 2);
      ::dup2(fd, 1);
      std::vector<std::string> args = {SHINGLED_BINARY, "serve",    "--config",
                                       config_path,     "--listen", "127.0.0.1:0"};
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Daemon() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 600; ++i) {  // up to 60 s for a graceful stop
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Waits (up to 120 s: a cluster store may load scripts and check every node) for the "listening
  // on" line; the port, or 0 when the daemon exited first (its log in *why).
  int WaitForPort(std::string* why) {
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(120);
    while (Clock::now() < deadline) {
      const std::string log = Log();
      const size_t at = log.find("listening on 127.0.0.1:");
      if (at != std::string::npos) return std::atoi(log.c_str() + at + 23);
      int status;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        *why = "the daemon exited: " + log;
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    *why = "no \"listening on\" line in 120 s: " + Log();
    return 0;
  }
  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::string dir_, log_path_;
  pid_t pid_ = -1;
};

std::string DaemonConfig(const std::string& store_dir, const redis::testing::RedisCluster* cluster,
                         int min_replicas, bool fsync) {
  std::string c = "[store]\npath = \"" + store_dir + "\"\n";
  if (cluster != nullptr) {
    c.append("backend = \"redis-cluster\"\n\n[store.redis]\nnodes = [");
    const std::vector<std::string> seeds = cluster->seeds();
    for (size_t i = 0; i < seeds.size(); ++i) {
      c.append(i == 0 ? "" : ", ").append("\"").append(seeds[i]).append("\"");
    }
    c.append("]\npassword_file = \"")
        .append(cluster->password_file())
        .append("\"\nmin_replicas = ")
        .append(std::to_string(min_replicas))
        .append(fsync ? "\n" : "\nallow_unsafe_fsync = true\n");
  }
  // Chunking off everywhere: the cluster backend files no chunks, and the LMDB run does the
  // same work. No access log: a line per request would be the daemon's largest write.
  c.append("\n[sketch]\nchunk_input = \"none\"\n\n[logging]\naccess_log = false\n");
  return c;
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

// Posts `corpus` split across `ports` with `threads` client threads per daemon.
void PostCorpus(const std::vector<Page>& corpus, const std::vector<int>& ports, const Options& o,
                const std::string& name) {
  const size_t daemons = ports.size();
  // Requests per daemon: its pages (i mod daemons) in corpus order, `o.batch` per request.
  std::vector<std::vector<std::string>> bodies(daemons);
  std::vector<std::vector<std::string>> targets(daemons);
  for (size_t d = 0; d < daemons; ++d) {
    std::vector<size_t> mine;
    for (size_t i = d; i < corpus.size(); i += daemons) mine.push_back(i);
    for (size_t at = 0; at < mine.size(); at += static_cast<size_t>(o.batch)) {
      const size_t end = std::min(mine.size(), at + static_cast<size_t>(o.batch));
      if (o.batch == 1) {
        const Page& p = corpus[mine[at]];
        bodies[d].push_back(p.html);
        targets[d].push_back("/v1/pages?url=" + p.url + "&fetched_at=" + kDateText);
        continue;
      }
      std::string body;
      for (size_t k = at; k < end; ++k) {
        const Page& p = corpus[mine[k]];
        body.append("{\"url\": ")
            .append(JsonString(p.url))
            .append(", \"content\": ")
            .append(JsonString(p.html))
            .append(", \"content_type\": \"text/html; charset=utf-8\", \"fetched_at\": \"")
            .append(kDateText)
            .append("\"}\n");
      }
      bodies[d].push_back(std::move(body));
      targets[d].push_back("/v1/pages");
    }
  }
  const std::string content_type =
      o.batch == 1 ? "text/html; charset=utf-8" : "application/x-ndjson";

  std::vector<std::atomic<size_t>> next(daemons);
  for (auto& n : next) n = 0;
  std::atomic<uint64_t> done_pages{0}, failed_requests{0};
  std::mutex mu;
  std::vector<double> latencies_ms;
  Verdicts verdicts;
  std::string first_failure;
  const std::string load_before = LoadAverage();
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> workers;
  for (size_t d = 0; d < daemons; ++d) {
    for (int t = 0; t < o.threads; ++t) {
      workers.emplace_back([&, d] {
        Http http(ports[d]);
        std::vector<double> mine;
        Verdicts v;
        std::string answer;
        for (size_t r; (r = next[d]++) < bodies[d].size();) {
          const Clock::time_point t0 = Clock::now();
          const int status = http.Post(targets[d][r], content_type, bodies[d][r], &answer);
          mine.push_back(Seconds(t0) * 1000);
          if (status != 200) {
            ++failed_requests;
            std::lock_guard<std::mutex> lock(mu);
            if (first_failure.empty()) {
              first_failure = "HTTP " + std::to_string(status) + ": " + answer.substr(0, 300);
            }
            continue;
          }
          CountVerdicts(answer, &v);
          done_pages += o.batch == 1 ? 1
                                     : static_cast<uint64_t>(std::count(bodies[d][r].begin(),
                                                                        bodies[d][r].end(), '\n'));
        }
        std::lock_guard<std::mutex> lock(mu);
        latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
        verdicts.Add(v);
      });
    }
  }
  const bool tty = ::isatty(2) != 0;
  std::atomic<bool> finished{false};
  std::thread progress([&] {
    while (tty && !finished) {
      std::fprintf(stderr, "\r%s: %llu of %zu pages, %.0f s  ", name.c_str(),
                   static_cast<unsigned long long>(done_pages.load()), corpus.size(),
                   Seconds(start));
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  for (std::thread& w : workers) w.join();
  const double wall = Seconds(start);
  finished = true;
  progress.join();
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  const double p50 = Percentile(latencies_ms, 0.50), p99 = Percentile(latencies_ms, 0.99);
  std::printf(
      "%-7s daemons %zu, threads %d each, %d pages a request: %llu pages in %.1f s = %.0f "
      "pages/s; latency per request p50 %.1f ms, p99 %.1f ms (%zu requests, %llu failed); "
      "verdicts: %s; load %s -> %s\n",
      name.c_str(), daemons, o.threads, o.batch, static_cast<unsigned long long>(done_pages.load()),
      wall, static_cast<double>(done_pages.load()) / wall, p50, p99, latencies_ms.size(),
      static_cast<unsigned long long>(failed_requests.load()), verdicts.ToString().c_str(),
      load_before.c_str(), LoadAverage().c_str());
  if (!first_failure.empty()) std::printf("        first failure: %s\n", first_failure.c_str());
  std::fflush(stdout);
}

void FlushCluster(const redis::testing::RedisCluster& cluster) {
  for (int i = 0; i < cluster.size(); ++i) {
    std::string out;
    cluster.Cli(cluster.port(i), "flushall", &out);  // a replica refuses (READONLY): harmless
  }
}

long long ClusterKeys(const redis::testing::RedisCluster& cluster) {
  long long keys = 0;
  for (int i = 0; i < cluster.size(); ++i) {
    std::string role, out;
    cluster.Cli(cluster.port(i), "role", &role);
    if (role.rfind("master", 0) != 0) continue;
    if (cluster.Cli(cluster.port(i), "dbsize", &out) == 0) keys += std::atoll(out.c_str());
  }
  return keys;
}

void RunDaemons(const std::vector<Page>& corpus, const redis::testing::RedisCluster& cluster,
                const Options& o) {
  for (const std::string& config : o.configs) {
    store::testing::TestDir dir;
    const bool on_cluster = config.rfind("redis", 0) == 0;
    const int daemons = on_cluster ? std::atoi(config.c_str() + 5) : 1;
    if (config != "lmdb" && (!on_cluster || daemons < 1)) {
      Die("--configs: lmdb or redisN, not " + config);
    }
    if (on_cluster) FlushCluster(cluster);
    std::vector<std::unique_ptr<Daemon>> procs;
    std::vector<int> ports;
    bool up = true;
    for (int d = 0; d < daemons; ++d) {
      const std::string sub = dir.Sub("daemon" + std::to_string(d));
      procs.push_back(std::make_unique<Daemon>(
          sub,
          DaemonConfig(sub + "/store", on_cluster ? &cluster : nullptr, o.min_replicas, o.fsync)));
      std::string why;
      const int port = procs.back()->WaitForPort(&why);
      if (port == 0) {
        std::printf("%-7s could not start daemon %d: %s\n", config.c_str(), d, why.c_str());
        up = false;
        break;
      }
      ports.push_back(port);
    }
    if (!up) continue;
    // A backend that opened on the cluster has written its `meta` hash: no key means the daemons
    // opened something else (a `shingled serve` that does not wire store.backend uses LMDB).
    if (on_cluster && ClusterKeys(cluster) == 0) {
      std::printf(
          "%-7s INVALID: the cluster holds no key once the daemons are up; this build of "
          "`shingled serve` does not open the redis-cluster backend. Not measured.\n",
          config.c_str());
      continue;
    }
    PostCorpus(corpus, ports, o, config);
    if (on_cluster) std::printf("        the cluster holds %lld keys\n", ClusterKeys(cluster));
    std::fflush(stdout);
  }
}

// --- in-process: round trips through RedisClusterStore ---

struct Sketched {
  std::vector<store::PageInput> pages;  // sweep left 0: set per store
};

// Bucket bits for a relation with `per_doc` entries per document over `docs` documents, as
// redis/FORMAT.md ("Choosing the bucket bits") sizes them: ~48 entries a bucket.
int BucketBits(double docs, double per_doc) {
  const int bits = static_cast<int>(std::lround(std::log2(std::max(1.0, docs * per_doc / 48))));
  return std::clamp(bits, redis::kMinBucketBits, redis::kMaxBucketBits);
}

// used_memory summed over the masters (INFO memory).
long long UsedMemory(redis::ClusterClient& client) {
  auto info = client.RunOnMasters({"INFO", "memory"});
  if (!info.ok()) Die(info.status().ToString());
  long long total = 0;
  for (const auto& [node, reply] : *info) {
    const size_t at = reply.str.find("used_memory:");
    if (at != std::string::npos) total += std::atoll(reply.str.c_str() + at + 12);
  }
  return total;
}

// CPU seconds (used_cpu_user + used_cpu_sys, INFO cpu) summed over the masters.
double UsedCpu(redis::ClusterClient& client) {
  auto info = client.RunOnMasters({"INFO", "cpu"});
  if (!info.ok()) Die(info.status().ToString());
  double total = 0;
  for (const auto& [node, reply] : *info) {
    for (const char* field : {"used_cpu_user:", "used_cpu_sys:"}) {
      const size_t at = reply.str.find(field);
      if (at != std::string::npos) total += std::atof(reply.str.c_str() + at + std::strlen(field));
    }
  }
  return total;
}

// Memory by key family on the masters: every key (SCAN) and its MEMORY USAGE (SAMPLES 0: all
// of its elements), summed by family: "{X}" for a key whose hash tag starts with X and nothing
// follows the tag, "{X}+" for one with more after it (the versions buckets "{V..}n", spilled
// postings), else the key up to its first ':' ("next", "meta", "sweeps"). (family, keys, bytes).
std::vector<std::tuple<std::string, long long, long long>> MemoryByFamily(
    const redis::testing::RedisCluster& cluster) {
  std::string password;
  std::ifstream(cluster.password_file()) >> password;
  std::map<std::string, std::pair<long long, long long>> by;
  for (int i = 0; i < cluster.size(); ++i) {
    std::string role;
    cluster.Cli(cluster.port(i), "role", &role);
    if (role.rfind("master", 0) != 0) continue;
    redisContext* c = redisConnect("127.0.0.1", cluster.port(i));
    if (c == nullptr || c->err) Die("memory by family: cannot connect to a master");
    auto command = [&](const std::vector<std::string>& args) {
      std::vector<const char*> argv;
      std::vector<size_t> lens;
      for (const std::string& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
      }
      auto* r = static_cast<redisReply*>(
          redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data()));
      if (r == nullptr) Die("memory by family: the connection broke");
      return std::unique_ptr<redisReply, void (*)(void*)>(r, freeReplyObject);
    };
    command({"AUTH", password});
    std::string cursor = "0";
    do {
      auto page = command({"SCAN", cursor, "COUNT", "1000"});
      if (page->type != REDIS_REPLY_ARRAY || page->elements != 2) Die("memory by family: SCAN");
      cursor.assign(page->element[0]->str, page->element[0]->len);
      std::vector<std::string> keys;
      for (size_t k = 0; k < page->element[1]->elements; ++k) {
        const redisReply* key = page->element[1]->element[k];
        keys.emplace_back(key->str, key->len);
      }
      for (const std::string& key : keys) {
        const char* argv[] = {"MEMORY", "USAGE", key.data(), "SAMPLES", "0"};
        const size_t lens[] = {6, 5, key.size(), 7, 1};
        redisAppendCommandArgv(c, 5, argv, lens);
      }
      for (const std::string& key : keys) {
        void* raw = nullptr;
        if (redisGetReply(c, &raw) != REDIS_OK) Die("memory by family: MEMORY USAGE");
        std::unique_ptr<redisReply, void (*)(void*)> r(static_cast<redisReply*>(raw),
                                                       freeReplyObject);
        std::string family;
        const size_t close = key.find('}');
        if (key.size() > 1 && key[0] == '{' && close != std::string::npos) {
          family = key.substr(0, 2) + "}" + (close + 1 < key.size() ? "+" : "");
        } else {
          family = key.substr(0, key.find(':'));
        }
        auto& [count, bytes] = by[family];
        ++count;
        if (r->type == REDIS_REPLY_INTEGER) bytes += r->integer;
      }
    } while (cursor != "0");
    redisFree(c);
  }
  std::vector<std::tuple<std::string, long long, long long>> out;
  for (const auto& [family, kb] : by) out.emplace_back(family, kb.first, kb.second);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return std::get<2>(a) > std::get<2>(b); });
  return out;
}

// Bytes of every node's append-only files (the cluster's folder, aof-PORT/).
uint64_t AofBytes(const redis::testing::RedisCluster& cluster) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cluster.dir(), ec)) {
    if (e.is_regular_file(ec) && e.path().parent_path().filename().string().rfind("aof-", 0) == 0) {
      total += e.file_size(ec);
    }
  }
  return total;
}

std::unique_ptr<redis::RedisClusterStore> OpenStore(const redis::testing::RedisCluster& cluster,
                                                    const dedup::SketchContext& context,
                                                    const Options& o,
                                                    redis::ClusterClient** client_out) {
  redis::RedisStoreOptions r;
  r.nodes = cluster.seeds();
  r.password_file = cluster.password_file();
  r.min_replicas = o.min_replicas;
  r.allow_unsafe_fsync = !o.fsync;
  // Sized for the run's documents (4 of every 5 pages), so that buckets hold what they would in
  // a deployment sized for its documents: the memory per document below means something.
  const double docs = 0.8 * o.apply_pages;
  r.feature_bits = BucketBits(docs, 6);
  r.supershingle_bits = BucketBits(docs, 22);
  r.sample_bits = BucketBits(docs, 19);
  r.fingerprint_bits = BucketBits(docs, 1);
  redis::ClusterOptions co;
  co.seeds = r.nodes;
  co.password_file = r.password_file;
  auto client = redis::ClusterClient::Connect(std::move(co));
  if (!client.ok()) Die(client.status().ToString());
  *client_out = client->get();
  auto s = std::make_unique<redis::RedisClusterStore>(std::move(*client), r, store::StoreOptions{},
                                                      context.params());
  if (Status st = s->Open(context); !st.ok()) Die(st.ToString());
  return s;
}

struct ApplyFigures {
  uint64_t pages = 0, batches = 0, pipelines = 0, commands = 0;
  std::vector<double> batch_ms;
  Verdicts verdicts;
};

// Applies pages [begin, end) of `sketched` with step `stride` in batches of `batch`.
ApplyFigures ApplyShare(redis::RedisClusterStore& s, redis::ClusterClient& client,
                        const std::vector<store::PageInput>& all, size_t first, size_t stride,
                        int batch, std::atomic<uint64_t>* progress) {
  auto sweep = s.OpenSweep("bench", kDate, {});
  if (!sweep.ok()) Die(sweep.status().ToString());
  ApplyFigures f;
  std::vector<store::PageInput> chunk;
  const auto flush = [&] {
    if (chunk.empty()) return;
    for (store::PageInput& p : chunk) p.sweep = sweep->id;
    const redis::ClusterStats before = client.stats();
    const Clock::time_point t0 = Clock::now();
    auto results = s.Apply(chunk);
    f.batch_ms.push_back(Seconds(t0) * 1000);
    if (!results.ok()) Die("Apply: " + results.status().ToString());
    const redis::ClusterStats& after = client.stats();
    f.pipelines += after.pipelines - before.pipelines;
    f.commands += after.commands - before.commands;
    ++f.batches;
    f.pages += chunk.size();
    for (const store::PageResult& r : *results) {
      if (!r.status.ok()) {
        ++f.verdicts.page_errors;
      } else {
        ++f.verdicts.counts[std::string(store::VerdictName(r.verdict))];
      }
    }
    *progress += chunk.size();
    chunk.clear();
  };
  for (size_t i = first; i < all.size(); i += stride) {
    chunk.push_back(all[i]);
    if (chunk.size() == static_cast<size_t>(batch)) flush();
  }
  flush();
  return f;
}

void RunInProcess(const redis::testing::RedisCluster& cluster, const Options& o) {
  dedup::SketchParams params;
  if (!o.chunking) params.chunking.input = dedup::ChunkInput::kNone;
  if (o.verify_sample >= 0) params.verify_sample_size = o.verify_sample;
  auto context = dedup::SketchContext::Create(params);
  if (!context.ok()) Die(context.status().ToString());
  // A corpus of its own (--apply-pages), in the same shape.
  const std::vector<Page> corpus = MakeCorpus(o.apply_pages);
  std::printf("in-process corpus: %zu pages, %zu families (the same shape)\n", corpus.size(),
              corpus.size() / kPagesPerFamily);
  std::vector<store::PageInput> all;
  for (const Page& p : corpus) {
    store::PageInput in;
    in.url = p.url;
    in.date = kDate;
    in.sketch = dedup::SketchPage(**context, p.html, "text/html; charset=utf-8");
    all.push_back(std::move(in));
  }
  std::vector<std::pair<int, int>> runs;  // (stores, batch)
  for (const int b : o.apply_batches) runs.emplace_back(1, b);
  const int largest = *std::max_element(o.apply_batches.begin(), o.apply_batches.end());
  for (const int s : o.apply_stores) {
    if (s > 1) runs.emplace_back(s, largest);
  }
  const bool tty = ::isatty(2) != 0;
  for (const auto& [stores, batch] : runs) {
    FlushCluster(cluster);
    long long memory_before = 0;
    double cpu_before = 0;
    const uint64_t aof_before = AofBytes(cluster);
    {
      redis::ClusterOptions co;
      co.seeds = cluster.seeds();
      co.password_file = cluster.password_file();
      auto probe = redis::ClusterClient::Connect(std::move(co));
      if (!probe.ok()) Die(probe.status().ToString());
      memory_before = UsedMemory(**probe);
      cpu_before = UsedCpu(**probe);
    }
    std::vector<std::unique_ptr<redis::RedisClusterStore>> opened;
    std::vector<redis::ClusterClient*> clients(static_cast<size_t>(stores));
    for (int i = 0; i < stores; ++i) {
      opened.push_back(OpenStore(cluster, **context, o, &clients[static_cast<size_t>(i)]));
    }
    std::vector<ApplyFigures> figures(static_cast<size_t>(stores));
    std::atomic<uint64_t> progress{0};
    const std::string load_before = LoadAverage();
    const Clock::time_point start = Clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < stores; ++i) {
      threads.emplace_back([&, i, batch = batch, stores = stores] {
        const size_t k = static_cast<size_t>(i);
        figures[k] = ApplyShare(*opened[k], *clients[k], all, k, static_cast<size_t>(stores), batch,
                                &progress);
      });
    }
    std::atomic<bool> finished{false};
    std::thread progress_line([&, batch = batch, stores = stores] {
      while (tty && !finished) {
        std::fprintf(stderr, "\rin-process %d store(s), batch %d: %llu of %zu pages, %.0f s  ",
                     stores, batch, static_cast<unsigned long long>(progress.load()), all.size(),
                     Seconds(start));
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    });
    for (std::thread& t : threads) t.join();
    const double wall = Seconds(start);
    finished = true;
    progress_line.join();
    if (tty) std::fprintf(stderr, "\r%70s\r", "");
    ApplyFigures total;
    for (ApplyFigures& f : figures) {
      total.pages += f.pages;
      total.batches += f.batches;
      total.pipelines += f.pipelines;
      total.commands += f.commands;
      total.batch_ms.insert(total.batch_ms.end(), f.batch_ms.begin(), f.batch_ms.end());
      total.verdicts.Add(f.verdicts);
    }
    const double pages = static_cast<double>(total.pages);
    const double batches = static_cast<double>(total.batches);
    const double p50 = Percentile(total.batch_ms, 0.5), p99 = Percentile(total.batch_ms, 0.99);
    const double memory = static_cast<double>(UsedMemory(*clients[0]) - memory_before);
    const double cpu_us = (UsedCpu(*clients[0]) - cpu_before) * 1e6;
    const double aof = static_cast<double>(AofBytes(cluster) - aof_before);
    const auto it = total.verdicts.counts.find("new");
    const auto nd = total.verdicts.counts.find("near_duplicate");
    const double documents =
        static_cast<double>((it == total.verdicts.counts.end() ? 0 : it->second) +
                            (nd == total.verdicts.counts.end() ? 0 : nd->second));
    std::printf(
        "apply   stores %d, batch %d: %.0f pages in %.1f s = %.0f pages/s; round trips "
        "(pipelines to a node) %.2f a page, %.1f a batch; commands %.1f a page; Apply p50 %.1f "
        "ms, p99 %.1f ms; verdicts: %s; used_memory +%.0f bytes: %.0f a page, %.0f a document; "
        "append-only files +%.0f bytes a page; redis CPU %.0f us a page; load %s -> %s\n",
        stores, batch, pages, wall, pages / wall, static_cast<double>(total.pipelines) / pages,
        static_cast<double>(total.pipelines) / batches, static_cast<double>(total.commands) / pages,
        p50, p99, total.verdicts.ToString().c_str(), memory, memory / pages, memory / documents,
        aof / pages, cpu_us / pages, load_before.c_str(), LoadAverage().c_str());
    if (stores == 1 && batch == largest) {
      // Where the memory is (MEMORY USAGE counts each key's own allocations: their sum is below
      // used_memory, which also holds the keyspace's and the slots' tables).
      std::printf("        memory by key family (MEMORY USAGE, bytes a document):");
      for (const auto& [family, keys, bytes] : MemoryByFamily(cluster)) {
        std::printf(" %s %.0f (%lld keys);", family.c_str(), static_cast<double>(bytes) / documents,
                    keys);
      }
      std::printf("\n");
    }
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace shingled

int main(int argc, char** argv) {
  using namespace shingled;
  const Options o = ParseOptions(argc, argv);
  std::string why;
  if (!redis::testing::RedisCluster::Available(&why)) Die(why);
  // The daemons' corpus (none for --apply-only: the in-process part makes its own).
  const std::vector<Page> corpus = o.daemons ? MakeCorpus(o.pages) : std::vector<Page>{};
  if (o.daemons) {
    size_t bytes = 0;
    for (const Page& p : corpus) bytes += p.html.size();
    const size_t families = corpus.size() / kPagesPerFamily;
    std::printf(
        "corpus: %zu pages (%.1f MB of HTML), %zu families of %d near-copies and 1 exact copy: "
        "expected verdicts new %zu, near_duplicate %zu, duplicate %zu\n",
        corpus.size(), static_cast<double>(bytes) / 1e6, families, kCopies, families,
        families * (kCopies - 1), families);
  }
  redis::testing::RedisCluster cluster;
  // The nodes read the settings shipped for them (ops/redis/shingled-node.conf: the record
  // buckets' listpack value size, the hosts' URL sets as intsets, ...), as a deployment's do.
  if (Status s =
          cluster.Start({.masters = 3,
                         .replicas_per_master = o.replicas,
                         .durable = true,
                         .config_file = SHINGLED_SOURCE_DIR "/ops/redis/shingled-node.conf"});
      !s.ok()) {
    Die(s.ToString());
  }
  for (int i = 0; i < cluster.size() && !o.fsync; ++i) {
    std::string out;
    if (cluster.Cli(cluster.port(i), "config set appendfsync no", &out) != 0) {
      Die("config set appendfsync no: " + out);
    }
  }
  std::printf(
      "redis cluster: 3 masters, %d replicas each, appendonly yes, appendfsync %s, "
      "min_replicas %d\n",
      o.replicas, o.fsync ? "always" : "no (--fsync no: NOT durable)", o.min_replicas);
  std::fflush(stdout);
  if (o.daemons) RunDaemons(corpus, cluster, o);
  if (o.in_process) RunInProcess(cluster, o);
  return 0;
}
