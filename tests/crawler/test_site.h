// A small web site for crawl tests: pages by path, each a status and a body (or, for a 301, the
// Location), with an optional delay; changed between sweeps while the server runs.
#ifndef SHINGLED_TESTS_CRAWLER_TEST_SITE_H_
#define SHINGLED_TESTS_CRAWLER_TEST_SITE_H_

#include <chrono>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>

#include "tests/crawler/test_server.h"

namespace shingled::testing {

// An article of 40 sentences about `topic`, then `extra`: pages of the same topic and different
// extras are near-duplicates.
inline std::string Article(const std::string& topic, const std::string& extra = "") {
  std::string text = "<html><body><h1>" + topic + "</h1><p>";
  for (int i = 0; i < 40; ++i) {
    text += topic + " paragraph sentence number " + std::to_string(i) +
            " tells the reader something plain about it. ";
  }
  return text + extra + "</p></body></html>";
}

// Thread-safe: the server's threads read it while the test changes it.
class Site {
 public:
  void Set(const std::string& path, int status, std::string body,
           std::chrono::milliseconds delay = std::chrono::milliseconds(0)) {
    std::lock_guard<std::mutex> lock(mu_);
    pages_[path] = {status, std::move(body), delay};
  }
  void Remove(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    pages_.erase(path);
  }
  // 404 for a path not set; robots.txt as text/plain, the rest as UTF-8 HTML.
  TestResponse Answer(const TestRequest& request) {
    const std::string path = request.target.substr(0, request.target.find('?'));
    std::lock_guard<std::mutex> lock(mu_);
    TestResponse r;
    const auto it = pages_.find(path);
    if (it == pages_.end()) {
      r.status = 404;
      r.body = "not found";
      r.headers = {{"Content-Type", "text/html"}};
      return r;
    }
    r.status = it->second.status;
    r.delay = it->second.delay;
    if (r.status == 301) {
      r.headers = {{"Location", it->second.body}};
    } else {
      r.headers = {{"Content-Type",
                    path == "/robots.txt" ? "text/plain" : "text/html; charset=utf-8"}};
      r.body = it->second.body;
    }
    return r;
  }
  // Routes every path this site may serve to Answer().
  void Serve(TestServer* server, std::initializer_list<const char*> paths) {
    for (const char* path : paths) {
      server->Route(path, [this](const TestRequest& request) { return Answer(request); });
    }
  }

 private:
  struct Entry {
    int status;
    std::string body;
    std::chrono::milliseconds delay;
  };
  std::mutex mu_;
  std::map<std::string, Entry> pages_;
};

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_CRAWLER_TEST_SITE_H_
