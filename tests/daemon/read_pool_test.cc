// Reads never starve writes (docs/API.md, server.read_threads, read_queue, read_budget_ms): the
// reports run on a read pool of their own, bounded by a queue and a time budget; past either,
// 503 with Retry-After naming the key, while posted pages keep being answered.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

class ReadPoolTest : public ::testing::Test {
 protected:
  void Start(const std::string& server_toml) {
    daemon_ = std::make_unique<Daemon>(dir_, dir_.path() + "/store",
                                       "[ingest]\ndefault_sweep = \"\"\n[server]\n" + server_toml);
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
  }

  // Two sweeps of `urls` pages, a tenth of them changed in the second: a change report that
  // walks every URL.
  void Fill(int urls) {
    HttpClient client(daemon_->port());
    for (const char* s :
         {R"({"name": "s1", "start": "2024-05-01"})", R"({"name": "s2", "start": "2024-06-01"})"}) {
      HttpResponse r = client.Request("POST", "/v1/sweeps", s, "application/json");
      ASSERT_EQ(r.status, 200) << r.body;
    }
    constexpr int kBatch = 200;
    for (const std::string sweep : {"s1", "s2"}) {
      for (int first = 0; first < urls; first += kBatch) {
        std::string body;
        for (int i = first; i < std::min(urls, first + kBatch); ++i) {
          const int seed = sweep == "s2" && i % 10 == 0 ? urls + i : i;
          body.append(json{{"url", "https://example.com/p" + std::to_string(i)},
                           {"content", SyntheticPage(seed)},
                           {"content_type", "text/html"}}
                          .dump())
              .append("\n");
        }
        HttpResponse r =
            client.Request("POST", "/v1/pages?sweep=" + sweep, body, "application/x-ndjson");
        ASSERT_EQ(r.status, 200) << r.body;
        ASSERT_EQ(json::parse(r.body)["errors"], 0) << r.body;
      }
    }
  }

  static std::string ErrorMessage(const HttpResponse& r) {
    const json j = json::parse(r.body, nullptr, false);
    return j.is_object() && j["error"].is_object() ? j["error"].value("message", "") : r.body;
  }

  // One page posted, its status.
  int PostOne(int seed) {
    HttpClient client(daemon_->port());
    return client
        .Request("POST",
                 "/v1/pages?sweep=s2&url=" + Q("https://example.com/new" + std::to_string(seed)),
                 SyntheticPage(100000 + seed), "text/html")
        .status;
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
};

// A report still walking after its budget stops between two blocks: 503, Retry-After, the key
// named. Small reads and posted pages are answered as before; with the budget off the same report
// runs to the end.
TEST_F(ReadPoolTest, AReadPastItsBudgetGets503NamingTheKey) {
  Start("read_budget_ms = 1\n");
  Fill(2000);
  if (HasFatalFailure()) return;
  HttpClient client(daemon_->port());
  HttpResponse r = client.Request("GET", "/v1/reports/changes?from=s1&to=s2");
  ASSERT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(r.headers["retry-after"], "1") << r.body;
  EXPECT_NE(ErrorMessage(r).find("server.read_budget_ms = 1"), std::string::npos) << r.body;
  EXPECT_EQ(client.Request("GET", "/v1/urls?url=" + Q("https://example.com/p1")).status, 200);
  EXPECT_EQ(PostOne(1), 200);

  daemon_.reset();
  Start("read_budget_ms = 0\n");
  r = HttpClient(daemon_->port()).Request("GET", "/v1/reports/changes?from=s1&to=s2");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["changed"], 200) << r.body;
  EXPECT_EQ(j["born"], 1) << r.body;
}

// One reader and a queue of one: of many reports asked at once, those that find the queue full
// get 503 naming server.read_queue; pages posted meanwhile are all answered, never queued behind
// the reports.
TEST_F(ReadPoolTest, ReadsPastTheQueueGet503AndPagesAreStillAnswered) {
  Start("read_threads = 1\nread_queue = 1\nread_budget_ms = 0\n");
  Fill(2000);
  if (HasFatalFailure()) return;
  std::atomic<int> ok{0}, busy{0}, other{0};
  std::string busy_message;
  std::mutex mu;
  std::vector<int> posts;
  for (int round = 0; round < 10 && busy == 0; ++round) {
    std::vector<std::thread> readers;
    for (int i = 0; i < 6; ++i) {
      readers.emplace_back([&] {
        HttpResponse r =
            HttpClient(daemon_->port()).Request("GET", "/v1/reports/changes?from=s1&to=s2");
        if (r.status == 200) {
          ++ok;
        } else if (r.status == 503) {
          ++busy;
          std::lock_guard<std::mutex> lock(mu);
          busy_message = ErrorMessage(r) + " retry-after=" + r.headers["retry-after"];
        } else {
          ++other;
        }
      });
    }
    posts.push_back(PostOne(round));
    for (std::thread& t : readers) t.join();
  }
  EXPECT_GT(ok, 0);
  EXPECT_EQ(other, 0);
  ASSERT_GT(busy, 0) << "six reports at once never filled a queue of one";
  EXPECT_NE(busy_message.find("server.read_queue"), std::string::npos) << busy_message;
  EXPECT_NE(busy_message.find("retry-after=1"), std::string::npos) << busy_message;
  for (int status : posts) EXPECT_EQ(status, 200);
}

}  // namespace
}  // namespace shingled::testing
