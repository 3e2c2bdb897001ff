// Test harness for the real daemon: starts `shingled serve` on a free loopback port (port 0; the
// daemon logs the one it bound), talks HTTP/1.1 to it over plain sockets, and stops it with a
// signal. Waits are polls with deadlines, never bare sleeps.
#ifndef SHINGLED_TESTS_DAEMON_DAEMON_HARNESS_H_
#define SHINGLED_TESTS_DAEMON_DAEMON_HARNESS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace shingled::testing {

using Clock = std::chrono::steady_clock;

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory under the test temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "shingled_XXXXXX";
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // Write(), readable by its owner only: the daemon refuses a token file others can read.
  std::string WriteSecret(const std::string& name, const std::string& text) const {
    const std::string p = Write(name, text);
    std::filesystem::permissions(
        p, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return p;
  }

 private:
  std::string path_;
};

struct HttpResponse {
  int status = 0;                              // 0: no response (connection failed or closed)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// A blocking HTTP/1.1 client connection to 127.0.0.1:port.
class HttpClient {
 public:
  explicit HttpClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(fd_);
      fd_ = -1;
    }
    timeval tv{10, 0};  // no test waits on one read longer than this
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~HttpClient() {
    if (fd_ >= 0) close(fd_);
  }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool SendRaw(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  HttpResponse Request(const std::string& method, const std::string& target,
                       const std::string& body = "", const std::string& content_type = "",
                       const std::string& extra_headers = "") {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!content_type.empty()) req += "Content-Type: " + content_type + "\r\n";
    if (method == "POST" || !body.empty())
      req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    req += extra_headers + "\r\n" + body;
    if (!SendRaw(req)) return {};
    return ReadResponse(/*head_request=*/method == "HEAD");
  }
  // Reads one response (Content-Length framed, as the daemon always sends). `head_request`: the
  // answer to a HEAD request, whose Content-Length is that of the body a GET would have, and
  // which has no body.
  HttpResponse ReadResponse(bool head_request = false) {
    HttpResponse r;
    size_t header_end;
    while ((header_end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return r;
    }
    std::istringstream head(buf_.substr(0, header_end));
    std::string line;
    std::getline(head, line);
    if (line.size() < 12) return r;
    r.status = std::atoi(line.c_str() + 9);
    while (std::getline(head, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
    }
    const size_t length =
        head_request
            ? 0
            : std::stoul(r.headers.count("content-length") ? r.headers["content-length"] : "0");
    while (buf_.size() < header_end + 4 + length) {
      if (!Fill()) return HttpResponse{};
    }
    r.body = buf_.substr(header_end + 4, length);
    buf_.erase(0, header_end + 4 + length);
    return r;
  }
  // True when the server closed the connection (a read returns 0 or a reset) within `timeout`.
  bool ClosedByPeerWithin(std::chrono::milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      char c;
      const ssize_t n = recv(fd_, &c, 1, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll interval
    }
    return false;
  }

 private:
  bool Fill() {
    char tmp[65536];
    const ssize_t n = recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  std::string buf_;
};

// One `shingled serve` process.
class Daemon {
 public:
  // Starts the daemon with a config file holding `config_toml` and a store in `store_dir`, and
  // waits (up to 20 s) for the "listening on" line. port() is 0 if it did not come up.
  Daemon(const TempDir& dir, const std::string& store_dir, const std::string& config_toml = "",
         std::vector<std::string> extra_args = {}) {
    config_path_ = dir.Write("shingled-" + std::to_string(counter_++) + ".toml", config_toml);
    log_path_ = config_path_ + ".log";
    std::vector<std::string> args = {SHINGLED_BINARY, "serve",   "--config",
                                     config_path_,    "--store", store_dir};
    if (std::find(extra_args.begin(), extra_args.end(), "--listen") == extra_args.end()) {
      extra_args.insert(extra_args.end(), {"--listen", "127.0.0.1:0"});
    }
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      const std::string log = ReadWholeFile(log_path_);
      const size_t at = log.find("listening on 127.0.0.1:");
      if (at != std::string::npos) {
        port_ = std::atoi(log.c_str() + at + 23);
        return;
      }
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
    }
  }
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string log() const { return ReadWholeFile(log_path_); }
  // The config file it was started with (tests rewrite it before a SIGHUP).
  const std::string& config_path() const { return config_path_; }
  // Waits (up to `timeout`) until the log holds `text` `count` times; returns whether it did.
  bool WaitForLog(const std::string& text, size_t count = 1,
                  std::chrono::milliseconds timeout = std::chrono::seconds(20)) const {
    const Clock::time_point deadline = Clock::now() + timeout;
    for (;;) {
      const std::string text_now = log();
      size_t n = 0;
      for (size_t at = text_now.find(text); at != std::string::npos;
           at = text_now.find(text, at + text.size())) {
        ++n;
      }
      if (n >= count) return true;
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
    }
  }

  void Signal(int sig) {
    if (pid_ > 0) kill(pid_, sig);
  }
  // Waits for the process to exit (up to `timeout`); returns its exit code (128 + signal when
  // killed), or nullopt on timeout.
  std::optional<int> Wait(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    if (pid_ <= 0) return exit_code_;
    const Clock::time_point deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return exit_code_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
    }
    return std::nullopt;
  }

 private:
  static inline int counter_ = 0;
  std::string config_path_, log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::optional<int> exit_code_;
};

// Runs `command` through the shell; its output (both streams) in `*out`, its exit code.
inline int RunCommand(const std::string& command, std::string* out) {
  std::string line = command;
  line.append(" 2>&1");
  FILE* pipe = popen(line.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out->append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs the binary with `args` (shell-quoted by the caller); its output in `*out`.
inline int RunCli(const std::string& args, std::string* out) {
  // Appended rather than `std::string(SHINGLED_BINARY) + " " + args`, on which GCC 12's
  // -Warray-bounds warns falsely once the call is inlined.
  std::string cmd = SHINGLED_BINARY;
  cmd.append(" ").append(args);
  return RunCommand(cmd, out);
}

// A page of 300 words drawn from `seed`: pages of different seeds share almost no shingles.
inline std::string SyntheticPage(int seed) {
  std::string text = "<html><body><p>";
  uint64_t x = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull + 1;
  for (int i = 0; i < 300; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    text += "w" + std::to_string(x % 5000) + " ";
  }
  return text + "</p></body></html>";
}

// Percent-encodes a query value.
inline std::string Q(const std::string& v) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : v) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

// `s` in single quotes for the shell.
inline std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q.append("'\\''");
    } else {
      q.push_back(c);
    }
  }
  return q.append("'");
}

// Replaces every `from` in *s with `to`.
inline void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size())) {
    s->replace(at, from.size(), to);
  }
}

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_DAEMON_DAEMON_HARNESS_H_
