// A small HTTP/1.1 server on 127.0.0.1 for crawler tests: routes by path, one thread per
// connection, Connection: close after each response. It logs every request (path, headers, the
// steady-clock time it arrived) so tests can assert what was fetched and when.
//
// Handlers run on connection threads; Route() must be called before Start(). Stop() (and the
// destructor) closes the listener and waits for connection threads, which notice within 50 ms.
#ifndef SHINGLED_TESTS_CRAWLER_TEST_SERVER_H_
#define SHINGLED_TESTS_CRAWLER_TEST_SERVER_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace shingled::testing {

struct TestRequest {
  std::string method;
  std::string target;  // path and query as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::steady_clock::time_point arrived;
  std::string Header(const std::string& name) const;
};

// What a handler answers. `stream`, when set, is called instead of sending `body`: it gets a
// function that writes bytes and returns false once the client has gone or the server stops.
struct TestResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds delay{0};  // before the status line is sent
  std::function<void(const std::function<bool(const std::string&)>& write)> stream;
};

class TestServer {
 public:
  using Handler = std::function<TestResponse(const TestRequest&)>;

  TestServer() = default;
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  // Routes an exact path (query ignored) to a handler, or to fixed content.
  void Route(const std::string& path, Handler handler);
  void Page(const std::string& path, std::string body, std::string content_type = "text/html",
            int status = 200);
  void Redirect(const std::string& path, const std::string& location, int status = 301);
  // Unrouted paths answer 404.

  // Serves HTTPS with this certificate and key (PEM files). Before Start().
  bool EnableTls(const std::string& cert_file, const std::string& key_file);

  // Binds 127.0.0.1 on a free port and starts serving. Returns false when that fails.
  bool Start();
  void Stop();
  int port() const { return port_; }
  std::string Url(const std::string& path) const;

  std::vector<TestRequest> Requests() const;
  std::vector<std::string> RequestedPaths() const;
  size_t CountRequests(const std::string& target) const;

 private:
  void AcceptLoop();
  void Serve(int fd);

  std::map<std::string, Handler> routes_;
  void* tls_ = nullptr;  // SSL_CTX*, when serving HTTPS
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  mutable std::mutex mu_;
  std::vector<std::thread> connections_;  // guarded by mu_
  std::vector<TestRequest> log_;          // guarded by mu_
};

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_CRAWLER_TEST_SERVER_H_
