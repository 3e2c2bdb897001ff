#include "tests/crawler/test_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>

namespace shingled::testing {
namespace {

// One accepted connection, plain or TLS. Sockets are non-blocking; waits poll in 50 ms steps so
// that Stop() is noticed.
struct Connection {
  int fd = -1;
  SSL* ssl = nullptr;
  const std::atomic<bool>* stopping = nullptr;

  bool Wait(short events) const {
    pollfd p{fd, events, 0};
    return poll(&p, 1, 50) > 0;
  }
  // Retries an SSL call until it stops asking to wait.
  template <typename F>
  int Ssl(F call) {
    for (;;) {
      if (*stopping) return -1;
      const int rc = call();
      if (rc > 0) return rc;
      const int error = SSL_get_error(ssl, rc);
      if (error == SSL_ERROR_WANT_READ) {
        Wait(POLLIN);
      } else if (error == SSL_ERROR_WANT_WRITE) {
        Wait(POLLOUT);
      } else {
        return -1;
      }
    }
  }
  bool Handshake() {
    return ssl == nullptr || Ssl([&] { return SSL_accept(ssl); }) > 0;
  }
  // Returns bytes read, 0 when nothing arrived within 50 ms, -1 at the end or on error.
  ssize_t Recv(char* buffer, size_t size) {
    if (ssl != nullptr && SSL_pending(ssl) == 0 && !Wait(POLLIN)) return 0;
    if (ssl == nullptr && !Wait(POLLIN)) return 0;
    if (ssl != nullptr) {
      const int n = Ssl([&] { return SSL_read(ssl, buffer, static_cast<int>(size)); });
      return n > 0 ? n : -1;
    }
    const ssize_t n = recv(fd, buffer, size, 0);
    return n > 0 ? n : -1;
  }
  bool SendAll(const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      if (*stopping) return false;
      if (ssl != nullptr) {
        const int n = Ssl([&] {
          return SSL_write(ssl, data.data() + sent, static_cast<int>(data.size() - sent));
        });
        if (n <= 0) return false;
        sent += static_cast<size_t>(n);
        continue;
      }
      if (!Wait(POLLOUT)) continue;
      const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
};

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 404:
      return "Not Found";
    case 410:
      return "Gone";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

}  // namespace

std::string TestRequest::Header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (strcasecmp(key.c_str(), name.c_str()) == 0) return value;
  }
  return "";
}

TestServer::~TestServer() {
  Stop();
  if (tls_ != nullptr) SSL_CTX_free(static_cast<SSL_CTX*>(tls_));
}

bool TestServer::EnableTls(const std::string& cert_file, const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return false;
  if (SSL_CTX_use_certificate_file(ctx, cert_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    SSL_CTX_free(ctx);
    return false;
  }
  tls_ = ctx;
  return true;
}

void TestServer::Route(const std::string& path, Handler handler) {
  routes_[path] = std::move(handler);
}

void TestServer::Page(const std::string& path, std::string body, std::string content_type,
                      int status) {
  Route(path, [body = std::move(body), content_type = std::move(content_type),
               status](const TestRequest&) {
    TestResponse r;
    r.status = status;
    r.headers = {{"Content-Type", content_type}};
    r.body = body;
    return r;
  });
}

void TestServer::Redirect(const std::string& path, const std::string& location, int status) {
  Route(path, [location, status](const TestRequest&) {
    TestResponse r;
    r.status = status;
    r.headers = {{"Location", location}, {"Content-Type", "text/html"}};
    r.body = "moved";
    return r;
  });
}

bool TestServer::Start() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) return false;
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only, never a real interface
  addr.sin_port = 0;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd_, 64) != 0) {
    return false;
  }
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return true;
}

void TestServer::Stop() {
  if (listen_fd_ < 0) return;
  stopping_ = true;
  if (accept_thread_.joinable()) accept_thread_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(connections_);
  }
  for (std::thread& t : threads) t.join();
  close(listen_fd_);
  listen_fd_ = -1;
}

std::string TestServer::Url(const std::string& path) const {
  return std::string(tls_ != nullptr ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) +
         path;
}

std::vector<TestRequest> TestServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

std::vector<std::string> TestServer::RequestedPaths() const {
  std::vector<std::string> paths;
  for (const TestRequest& r : Requests()) paths.push_back(r.target);
  return paths;
}

size_t TestServer::CountRequests(const std::string& target) const {
  size_t n = 0;
  for (const TestRequest& r : Requests()) n += r.target == target;
  return n;
}

void TestServer::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    connections_.emplace_back([this, fd] {
      Serve(fd);
      close(fd);
    });
  }
}

void TestServer::Serve(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  Connection conn{fd, nullptr, &stopping_};
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(nullptr, &SSL_free);
  if (tls_ != nullptr) {
    ssl.reset(SSL_new(static_cast<SSL_CTX*>(tls_)));
    SSL_set_fd(ssl.get(), fd);
    conn.ssl = ssl.get();
    if (!conn.Handshake()) return;  // e.g. the client refused our certificate
  }
  // Read the request head (bodies are not expected: the crawler only GETs).
  std::string head;
  char buffer[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
    if (stopping_) return;
    const ssize_t n = conn.Recv(buffer, sizeof(buffer));
    if (n < 0) return;
    head.append(buffer, static_cast<size_t>(n));
  }
  TestRequest request;
  request.arrived = std::chrono::steady_clock::now();
  size_t line_end = head.find("\r\n");
  const std::string request_line = head.substr(0, line_end);
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = request_line.find(' ', sp1 + 1);
  request.method = request_line.substr(0, sp1);
  request.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t pos = line_end + 2;
  while ((line_end = head.find("\r\n", pos)) != std::string::npos && line_end > pos) {
    const std::string line = head.substr(pos, line_end - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      size_t v = colon + 1;
      while (v < line.size() && line[v] == ' ') ++v;
      request.headers.emplace_back(line.substr(0, colon), line.substr(v));
    }
    pos = line_end + 2;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    log_.push_back(request);
  }
  const std::string path = request.target.substr(0, request.target.find('?'));
  TestResponse response;
  if (auto it = routes_.find(path); it != routes_.end()) {
    response = it->second(request);
  } else {
    response.status = 404;
    response.headers = {{"Content-Type", "text/html"}};
    response.body = "<html><body>not found</body></html>";
  }
  const auto deadline = std::chrono::steady_clock::now() + response.delay;
  while (std::chrono::steady_clock::now() < deadline) {
    if (stopping_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " + Reason(response.status) +
                    "\r\nConnection: close\r\n";
  for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
  if (response.stream) {
    out += "\r\n";
    if (!conn.SendAll(out)) return;
    response.stream([&](const std::string& bytes) { return conn.SendAll(bytes); });
    return;
  }
  out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n\r\n";
  out += response.body;
  if (!conn.SendAll(out)) return;
  if (conn.ssl != nullptr) {
    SSL_shutdown(conn.ssl);
    return;
  }
  // Half-close and let the client read everything before the socket goes.
  shutdown(fd, SHUT_WR);
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 200) > 0) recv(fd, buffer, sizeof(buffer), 0);
}

}  // namespace shingled::testing
