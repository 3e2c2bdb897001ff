// Load benchmark: posts real pages to a running `shingled serve` over many keep-alive
// connections from one epoll thread (so the client takes little of the 2 cores), and reports
// pages/s, latency percentiles, errors, and the daemon's RSS at start and end.
//
//   load_bench --port P --corpus DIR [--connections 64] [--seconds 30] [--pid DAEMON_PID]
//              [--unique 1]
//
// Each request posts the next corpus file at a fresh URL, so the first pass over the corpus is
// new content and later passes are duplicate content at new URLs: bytes the daemon has stored
// already, whose stored sketch it reuses. With --unique 1 every body ends in a comment of its
// own ("<!-- load_bench N -->"): new bytes every time, so every page is canonicalized and
// sketched (and found a lexical duplicate of its corpus file), the worst case for the sketching
// stage.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Conn {
  int fd = -1;
  std::string out;  // request bytes not yet sent
  size_t sent = 0;
  std::string in;
  Clock::time_point started;
};

// A field of /proc/PID/status in kB: VmRSS, or RssAnon (heap: what must stay flat) and RssFile
// (the store's mapped pages, which grow with the store).
long StatusKb(const std::string& pid, const std::string& field) {
  std::ifstream status("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}

void PrintRss(const std::string& pid, const char* when, double t) {
  std::printf("daemon memory %s (t=%.0f s): RSS %ld kB = anon %ld kB + file %ld kB\n", when, t,
              StatusKb(pid, "VmRSS"), StatusKb(pid, "RssAnon"), StatusKb(pid, "RssFile"));
  std::fflush(stdout);
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only
  connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 8480, connections = 64;
  double seconds = 30;
  std::string corpus = "corpus", pid;
  bool unique = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--port") port = std::atoi(argv[i + 1]);
    if (flag == "--connections") connections = std::atoi(argv[i + 1]);
    if (flag == "--seconds") seconds = std::atof(argv[i + 1]);
    if (flag == "--corpus") corpus = argv[i + 1];
    if (flag == "--pid") pid = argv[i + 1];
    if (flag == "--unique") unique = std::atoi(argv[i + 1]) != 0;
  }
  std::vector<std::string> pages;
  uint64_t corpus_bytes = 0;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(corpus)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    pages.push_back(ss.str());
    corpus_bytes += pages.back().size();
  }
  if (pages.empty()) {
    std::fprintf(stderr, "load_bench: no files in %s\n", corpus.c_str());
    return 2;
  }
  std::printf("corpus: %zu pages, %.1f MB; %d connections, %.0f s%s\n", pages.size(),
              corpus_bytes / 1e6, connections, seconds, unique ? "; unique bodies" : "");
  if (!pid.empty()) PrintRss(pid, "at start", 0);
  Clock::time_point next_report = Clock::now() + std::chrono::seconds(60);

  const int ep = epoll_create1(EPOLL_CLOEXEC);
  std::vector<Conn> conns(static_cast<size_t>(connections));
  uint64_t next_page = 0;
  auto start_request = [&](Conn& c) {
    const std::string& page = pages[next_page % pages.size()];
    const std::string tail =
        unique ? "\n<!-- load_bench " + std::to_string(next_page) + " -->\n" : std::string();
    c.out = "POST /v1/pages?url=https://bench.example/" + std::to_string(next_page) +
            " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/html\r\nContent-Length: " +
            std::to_string(page.size() + tail.size()) + "\r\n\r\n" + page + tail;
    ++next_page;
    c.sent = 0;
    c.started = Clock::now();
  };
  for (size_t i = 0; i < conns.size(); ++i) {
    conns[i].fd = Connect(port);
    start_request(conns[i]);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
  }

  std::vector<double> latencies_ms;
  std::map<int, uint64_t> statuses;
  uint64_t failures = 0;
  const Clock::time_point begin = Clock::now();
  const Clock::time_point end =
      begin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  size_t open = conns.size();
  std::vector<epoll_event> events(conns.size());
  char buf[65536];
  while (open > 0) {
    const int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 1000);
    const bool stopping = Clock::now() >= end;
    if (!pid.empty() && Clock::now() >= next_report) {
      PrintRss(pid, "during the run", std::chrono::duration<double>(Clock::now() - begin).count());
      next_report += std::chrono::seconds(60);
    }
    for (int e = 0; e < n; ++e) {
      Conn& c = conns[events[e].data.u64];
      if (c.fd < 0) continue;
      bool dead = (events[e].events & (EPOLLERR | EPOLLHUP)) != 0;
      while (!dead && c.sent < c.out.size()) {
        const ssize_t w = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (w <= 0)
          dead = true;
        else
          c.sent += static_cast<size_t>(w);
      }
      for (;;) {
        if (dead) break;
        const ssize_t r = recv(c.fd, buf, sizeof(buf), 0);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (r <= 0) {
          dead = true;
          break;
        }
        c.in.append(buf, static_cast<size_t>(r));
      }
      // A complete response? (the daemon always sends Content-Length)
      const size_t head_end = c.in.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const size_t cl = c.in.find("Content-Length: ");
        const size_t length = cl < head_end ? std::strtoul(c.in.c_str() + cl + 16, nullptr, 10) : 0;
        if (c.in.size() >= head_end + 4 + length) {
          const int status = std::atoi(c.in.c_str() + 9);
          ++statuses[status];
          latencies_ms.push_back(
              std::chrono::duration<double, std::milli>(Clock::now() - c.started).count());
          c.in.erase(0, head_end + 4 + length);
          if (stopping) {
            close(c.fd);
            c.fd = -1;
            --open;
            continue;
          }
          start_request(c);
          continue;
        }
      }
      if (dead) {
        ++failures;
        close(c.fd);
        c.fd = -1;
        --open;
      }
    }
    if (n == 0 && Clock::now() > end + std::chrono::seconds(30)) break;  // bounded in time
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  auto pct = [&](double p) {
    return latencies_ms.empty() ? 0
                                : latencies_ms[static_cast<size_t>(p * (latencies_ms.size() - 1))];
  };
  std::printf("requests: %zu in %.1f s: %.0f pages/s\n", latencies_ms.size(), elapsed,
              latencies_ms.size() / elapsed);
  std::printf("latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", pct(0.5), pct(0.9), pct(0.99),
              latencies_ms.empty() ? 0 : latencies_ms.back());
  for (const auto& [status, count] : statuses) std::printf("status %d: %lu\n", status, count);
  std::printf("connection failures: %lu\n", failures);
  if (!pid.empty()) PrintRss(pid, "at end", elapsed);
  return failures == 0 && statuses.size() == 1 && statuses.count(200) ? 0 : 1;
}
