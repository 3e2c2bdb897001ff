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
//
// --mix 1 is the soak's load (scripts/soak.sh): of every 20 requests, 12 post a page, 2
// an NDJSON batch of 4 pages, 1 a WARC file of 3 response records, 2 ask /v1/similar, 1 /v1/lost
// and 1 a URL's history (/v1/urls?url=) of a page acknowledged earlier, and 1 scrapes /metrics.
// With --report-every SECONDS (60 in the mixed mode) it prints a row per interval: pages/s
// (pages acknowledged: a batch counts 4, a WARC upload 3), p50/p99/p999 latency of all requests,
// errors (any answer but 200, or 404 to a query; a broken connection), and the daemon's RSS, open
// descriptors and threads, and from the daemon's own /metrics (the last scrape of the interval)
// the milliseconds its store writer spent committing per page and its sketching per page, and
// the CPU milliseconds (user + system, /proc) per committed page of the whole daemon and of its
// store writer (the thread named "writer"): wall times follow the machine's load, CPU per page
// follows the work; at the end the slope of each per minute (least squares).
//
// --readers N adds N connections that loop a report (--report TARGET, /v1/reports/clusters by
// default) beside the posts: their answers are counted apart, so the posts' pages/s and latency
// percentiles, against a run without readers, say how much the reports slow ingest.
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
#include <iterator>
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
  int kind = 0;         // a Kind
  uint64_t pages = 0;   // pages the request posts
  bool reader = false;  // loops the report (--readers)
};

// What a request of the mixed mode does.
enum Kind { kPage, kBatch, kWarc, kSimilar, kLost, kHistory, kMetrics };
constexpr Kind kMix[20] = {kPage, kPage,    kBatch, kPage,    kSimilar, kPage, kPage,
                           kWarc, kPage,    kLost,  kPage,    kBatch,   kPage, kSimilar,
                           kPage, kHistory, kPage,  kMetrics, kPage,    kPage};

// The length of the valid UTF-8 sequence at text[i], or 0 (a simplified check: lead byte and
// continuation bytes).
size_t Utf8Length(const std::string& text, size_t i) {
  const auto u = static_cast<unsigned char>(text[i]);
  const size_t n = u >= 0xF0 && u <= 0xF4 ? 4 : u >= 0xE0 ? 3 : u >= 0xC2 && u <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// A JSON string's content for `text`; a byte that is not valid UTF-8 (a Latin-1 page) is written
// as the character of its value, as a Latin-1 reader would see it.
std::string JsonEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20 || (u >= 0x80 && Utf8Length(text, i) == 0)) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out.append(buf);
    } else if (u >= 0x80) {
      const size_t n = Utf8Length(text, i);
      out.append(text, i, n);
      i += n - 1;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The number of entries of /proc/PID/fd (open descriptors), or -1.
long OpenFds(const std::string& pid) {
  std::error_code ec;
  long n = 0;
  for (std::filesystem::directory_iterator it("/proc/" + pid + "/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return ec ? -1 : n;
}

// Least-squares slope of ys over xs.
double Slope(const std::vector<double>& xs, const std::vector<double>& ys) {
  const double n = static_cast<double>(xs.size());
  if (xs.size() < 2) return 0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    sx += xs[i];
    sy += ys[i];
    sxx += xs[i] * xs[i];
    sxy += xs[i] * ys[i];
  }
  const double d = n * sxx - sx * sx;
  return d == 0 ? 0 : (n * sxy - sx * sy) / d;
}

// The value of an unlabelled sample `name` in a Prometheus text exposition, or -1.
double MetricValue(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + name.size() + 2);
}

double Percentile(std::vector<double>& sorted, double p) {
  return sorted.empty() ? 0
                        : sorted[static_cast<size_t>(p * static_cast<double>(sorted.size() - 1))];
}

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

// CPU seconds (user + system) of process `pid`, or of its threads named `thread` (their
// /proc/PID/task/TID/comm) when it is not empty; -1 when there is none.
double CpuSeconds(const std::string& pid, const std::string& thread = "") {
  auto of_stat = [](const std::string& path) {
    std::ifstream in(path);
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Fields after the name (which may hold spaces) in parentheses: state is field 3, utime 14.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) return -1.0;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i >= 14) ticks += std::atof(field.c_str());
    }
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  };
  if (thread.empty()) return of_stat("/proc/" + pid + "/stat");
  double total = -1;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/" + pid + "/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::ifstream comm(it->path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name != thread) continue;
    const double s = of_stat(it->path() / "stat");
    if (s >= 0) total = std::max(total, 0.0) + s;
  }
  return total;
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
  bool mix = false;
  double report_every = -1;
  int readers = 0;
  std::string report_target = "/v1/reports/clusters";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--port") port = std::atoi(argv[i + 1]);
    if (flag == "--connections") connections = std::atoi(argv[i + 1]);
    if (flag == "--seconds") seconds = std::atof(argv[i + 1]);
    if (flag == "--corpus") corpus = argv[i + 1];
    if (flag == "--pid") pid = argv[i + 1];
    if (flag == "--unique") unique = std::atoi(argv[i + 1]) != 0;
    if (flag == "--mix") mix = std::atoi(argv[i + 1]) != 0;
    if (flag == "--report-every") report_every = std::atof(argv[i + 1]);
    if (flag == "--readers") readers = std::atoi(argv[i + 1]);
    if (flag == "--report") report_target = argv[i + 1];
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
  if (report_every < 0) report_every = mix ? 60 : 0;
  if (!pid.empty()) PrintRss(pid, "at start", 0);
  Clock::time_point next_report = Clock::now() + std::chrono::seconds(60);

  const int ep = epoll_create1(EPOLL_CLOEXEC);
  std::vector<Conn> conns(static_cast<size_t>(connections + readers));
  for (int i = 0; i < readers; ++i) conns[static_cast<size_t>(connections + i)].reader = true;
  uint64_t next_page = 0;
  uint64_t next_request = 0;
  std::vector<uint64_t> acked;  // page numbers acknowledged, for the queries
  auto page_body = [&](uint64_t n) {
    std::string body = pages[n % pages.size()];
    if (unique) body.append("\n<!-- load_bench " + std::to_string(n) + " -->\n");
    return body;
  };
  auto page_url = [](uint64_t n) { return "https://bench.example/" + std::to_string(n); };
  auto get = [](Conn& c, const std::string& target) {
    c.out = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  };
  auto post = [](Conn& c, const std::string& target, const char* type, const std::string& body) {
    c.out = "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + type +
            "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  // WARC uploads in flight, kept within the daemon's limits.max_warc_uploads_per_client (default
  // 2; every connection here is one address): above it the daemon answers 503, as it should, and
  // this client does not retry.
  int warc_in_flight = 0;
  constexpr int kMaxWarcInFlight = 2;
  auto start_mixed = [&](Conn& c) {
    c.kind = kMix[next_request++ % 20];
    if (acked.empty() && c.kind >= kSimilar && c.kind != kMetrics) c.kind = kPage;
    if (c.kind == kWarc && warc_in_flight >= kMaxWarcInFlight) c.kind = kPage;
    if (c.kind == kWarc) ++warc_in_flight;
    const std::string known = acked.empty() ? "" : page_url(acked[next_request % acked.size()]);
    c.pages = 0;
    switch (c.kind) {
      case kPage:
        c.pages = 1;
        post(c, "/v1/pages?url=" + page_url(next_page), "text/html", page_body(next_page));
        ++next_page;
        break;
      case kBatch: {
        std::string body;
        for (int i = 0; i < 4; ++i, ++next_page, ++c.pages) {
          body.append("{\"url\":\"" + page_url(next_page) +
                      "\",\"content_type\":\"text/html\",\"content\":\"" +
                      JsonEscape(page_body(next_page)) + "\"}\n");
        }
        post(c, "/v1/pages", "application/x-ndjson", body);
        break;
      }
      case kWarc: {
        std::string body;
        for (int i = 0; i < 3; ++i, ++next_page, ++c.pages) {
          const std::string http =
              "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + page_body(next_page);
          char id[64];
          std::snprintf(id, sizeof(id), "<urn:uuid:00000000-0000-4000-8000-%012llu>",
                        static_cast<unsigned long long>(next_page % 1000000000000ULL));
          body.append(
              "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: " + std::string(id) +
              "\r\nWARC-Date: 2024-05-01T00:00:00Z\r\nWARC-Target-URI: " + page_url(next_page) +
              "\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: " +
              std::to_string(http.size()) + "\r\n\r\n" + http + "\r\n\r\n");
        }
        post(c, "/v1/pages", "application/warc", body);
        break;
      }
      case kSimilar:
        get(c, "/v1/similar?url=" + known + "&limit=10");
        break;
      case kLost:
        get(c, "/v1/lost?url=" + known);
        break;
      case kHistory:
        get(c, "/v1/urls?url=" + known);
        break;
      default:
        get(c, "/metrics");
        break;
    }
    c.sent = 0;
    c.started = Clock::now();
  };
  auto start_request = [&](Conn& c) {
    if (c.reader) {
      get(c, report_target);
      c.sent = 0;
      c.started = Clock::now();
      return;
    }
    if (mix) return start_mixed(c);
    c.pages = 1;
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

  std::vector<double> latencies_ms, report_ms;
  std::map<int, uint64_t> statuses, report_statuses;
  uint64_t failures = 0;
  // The interval being measured (--report-every) and the rows so far, for the slopes.
  std::vector<double> interval_ms;
  uint64_t interval_pages = 0, interval_errors = 0, total_pages = 0, total_errors = 0;
  std::vector<std::vector<double>> rows;  // the minute, then kColumns
  static const char* const kColumns[] = {
      "pages/s",           "p50 ms", "p99 ms",  "p999 ms",        "errors",         "RSS MB",
      "anon MB",           "fds",    "threads", "commit ms/page", "sketch ms/page", "CPU ms/page",
      "writer CPU ms/page"};
  constexpr size_t kNumColumns = std::size(kColumns);
  std::string last_metrics;  // the body of the last /metrics answer
  double commit_s = 0, committed_pages = 0, sketch_s = 0, sketches = 0;  // at the last report
  // The daemon's CPU seconds, and its store writer's (the thread named "writer"), at the last
  // report: per committed page, they do not depend on how much of the machine the daemon got.
  double cpu_s = pid.empty() ? -1 : CpuSeconds(pid);
  double writer_s = pid.empty() ? -1 : CpuSeconds(pid, "writer");
  if (report_every > 0) {
    std::printf("| minute |");
    for (const char* column : kColumns) std::printf(" %s |", column);
    std::printf("\n|");
    for (size_t k = 0; k <= kNumColumns; ++k) std::printf(" --- |");
    std::printf("\n");
    std::fflush(stdout);
  }
  const Clock::time_point begin = Clock::now();
  Clock::time_point interval_start = begin;
  bool reported_last = false;
  auto report = [&](Clock::time_point now) {
    const double span = std::chrono::duration<double>(now - interval_start).count();
    std::sort(interval_ms.begin(), interval_ms.end());
    const double minute = std::chrono::duration<double>(now - begin).count() / 60.0;
    std::vector<double> row = {minute,
                               static_cast<double>(interval_pages) / span,
                               Percentile(interval_ms, 0.5),
                               Percentile(interval_ms, 0.99),
                               Percentile(interval_ms, 0.999),
                               static_cast<double>(interval_errors),
                               pid.empty() ? -1 : StatusKb(pid, "VmRSS") / 1024.0,
                               pid.empty() ? -1 : StatusKb(pid, "RssAnon") / 1024.0,
                               pid.empty() ? -1 : static_cast<double>(OpenFds(pid)),
                               pid.empty() ? -1 : static_cast<double>(StatusKb(pid, "Threads"))};
    const double c_s = MetricValue(last_metrics, "shingled_store_commit_duration_seconds_sum");
    const double c_n = MetricValue(last_metrics, "shingled_store_commit_batch_pages_sum");
    const double s_s = MetricValue(last_metrics, "shingled_sketch_duration_seconds_sum");
    const double s_n = MetricValue(last_metrics, "shingled_sketch_duration_seconds_count");
    row.push_back(c_n > committed_pages ? 1000 * (c_s - commit_s) / (c_n - committed_pages) : -1);
    row.push_back(s_n > sketches ? 1000 * (s_s - sketch_s) / (s_n - sketches) : -1);
    const double cpu_now = pid.empty() ? -1 : CpuSeconds(pid);
    const double writer_now = pid.empty() ? -1 : CpuSeconds(pid, "writer");
    const double committed = c_n - committed_pages;
    row.push_back(committed > 0 && cpu_now >= 0 && cpu_s >= 0 ? 1000 * (cpu_now - cpu_s) / committed
                                                              : -1);
    row.push_back(committed > 0 && writer_now >= 0 && writer_s >= 0
                      ? 1000 * (writer_now - writer_s) / committed
                      : -1);
    cpu_s = cpu_now;
    writer_s = writer_now;
    if (c_n >= 0) {
      commit_s = c_s;
      committed_pages = c_n;
      sketch_s = s_s;
      sketches = s_n;
    }
    std::printf(
        "| %.1f | %.0f | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | "
        "%.2f "
        "| %.2f |\n",
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], row[10],
        row[11], row[12], row[13]);
    std::fflush(stdout);
    rows.push_back(std::move(row));
    interval_ms.clear();
    interval_pages = interval_errors = 0;
    interval_start = now;
  };
  const Clock::time_point end =
      begin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  size_t open = conns.size();
  std::vector<epoll_event> events(conns.size());
  char buf[65536];
  while (open > 0) {
    const int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 1000);
    const bool stopping = Clock::now() >= end;
    if (stopping) {  // a report still running is not waited for: the run is the posts' time
      for (Conn& c : conns) {
        if (c.reader && c.fd >= 0) {
          close(c.fd);
          c.fd = -1;
          --open;
          ++report_statuses[0];  // abandoned
        }
      }
    }
    if (report_every > 0 && !reported_last &&
        (stopping ||
         Clock::now() - interval_start >= std::chrono::duration<double>(report_every))) {
      report(Clock::now());
      reported_last = stopping;  // the last interval ends with the run
    }
    if (!mix && !pid.empty() && Clock::now() >= next_report) {
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
          if (c.reader) {
            ++report_statuses[status];
            report_ms.push_back(
                std::chrono::duration<double, std::milli>(Clock::now() - c.started).count());
            c.in.erase(0, head_end + 4 + length);
            if (stopping) {
              close(c.fd);
              c.fd = -1;
              --open;
            } else {
              start_request(c);
            }
            continue;
          }
          ++statuses[status];
          if (c.kind == kWarc) --warc_in_flight;
          const double ms =
              std::chrono::duration<double, std::milli>(Clock::now() - c.started).count();
          latencies_ms.push_back(ms);
          if (!stopping) interval_ms.push_back(ms);
          const bool query = c.kind >= kSimilar && c.kind != kMetrics;
          if (c.kind == kMetrics && status == 200) last_metrics = c.in.substr(head_end + 4, length);
          if (status == 200 || (query && status == 404)) {
            if (status == 200 && c.kind == kPage) {
              acked.push_back(static_cast<uint64_t>(
                  std::strtoull(c.out.c_str() + c.out.find("example/") + 8, nullptr, 10)));
            }
            total_pages += status == 200 ? c.pages : 0;
            if (!stopping) interval_pages += status == 200 ? c.pages : 0;
          } else {
            ++total_errors;
            if (!stopping) ++interval_errors;
            if (total_errors <= 5) {  // what went wrong, for the first few
              std::fprintf(stderr, "load_bench: %s answered %d: %.300s\n",
                           c.out.substr(0, c.out.find(" HTTP/1.1")).substr(0, 120).c_str(), status,
                           c.in.substr(head_end + 4, length).c_str());
            }
          }
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
        ++interval_errors;
        if (mix && c.kind == kWarc) --warc_in_flight;
        if (failures <= 5) {
          std::fprintf(stderr, "load_bench: connection broken during %.120s (%zu bytes read)\n",
                       c.out.substr(0, c.out.find(" HTTP/1.1")).c_str(), c.in.size());
        }
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
  std::printf("requests: %zu in %.1f s: %.0f %s/s\n", latencies_ms.size(), elapsed,
              latencies_ms.size() / elapsed, mix ? "requests" : "pages");
  std::printf("latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", pct(0.5), pct(0.9), pct(0.99),
              latencies_ms.empty() ? 0 : latencies_ms.back());
  for (const auto& [status, count] : statuses) std::printf("status %d: %lu\n", status, count);
  std::printf("connection failures: %lu\n", failures);
  if (readers > 0) {
    std::sort(report_ms.begin(), report_ms.end());
    std::printf("reports (%s on %d connections): %zu answered, p50 %.0f ms, max %.0f ms;",
                report_target.c_str(), readers, report_ms.size(), Percentile(report_ms, 0.5),
                report_ms.empty() ? 0 : report_ms.back());
    for (const auto& [status, count] : report_statuses) {
      if (status == 0) {
        std::printf(" still running at the end: %lu", count);
      } else {
        std::printf(" %d: %lu", status, count);
      }
    }
    std::printf("\n");
  }
  if (!pid.empty()) PrintRss(pid, "at end", elapsed);
  if (mix) {
    std::printf("pages acknowledged: %lu (%.0f pages/s); errors: %lu\n", total_pages,
                static_cast<double>(total_pages) / elapsed, total_errors + failures);
  }
  if (rows.size() >= 2) {
    std::vector<double> minutes;
    for (const auto& row : rows) minutes.push_back(row[0]);
    std::printf("slope per minute over %zu intervals:", rows.size());
    for (size_t k = 0; k < kNumColumns; ++k) {
      std::vector<double> ys;
      for (const auto& row : rows) ys.push_back(row[k + 1]);
      std::printf("%s %s %+.2f", k == 0 ? "" : ",", kColumns[k], Slope(minutes, ys));
    }
    std::printf("\npages/s, last interval against the first: %.0f%%\n",
                rows.front()[1] > 0 ? 100.0 * rows.back()[1] / rows.front()[1] : 0.0);
  }
  if (mix) return failures == 0 && total_errors == 0 ? 0 : 1;
  return failures == 0 && statuses.size() == 1 && statuses.count(200) ? 0 : 1;
}
