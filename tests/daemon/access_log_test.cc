// The access log: the line format (daemon/http/access_log.h), and the real daemon writing one line
// per request, with no token and no query string.
#include "daemon/http/access_log.h"

#include <signal.h>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using daemon::AccessRecord;
using daemon::FormatAccessLine;
using daemon::PageVerdictNote;

TEST(AccessLogTest, LineHasEveryFieldAndNoQuery) {
  AccessRecord r;
  r.client = "127.0.0.1";
  r.method = "POST";
  r.target = "/v1/pages?url=https%3A%2F%2Fexample.com%2F&sweep=s#frag";
  r.status = 200;
  r.bytes = 291;
  r.seconds = 0.003112;
  r.note = "verdict=new";
  EXPECT_EQ(FormatAccessLine(r),
            "access client=127.0.0.1 method=POST path=/v1/pages status=200 bytes=291 ms=3.112 "
            "verdict=new");
}

TEST(AccessLogTest, ClientCannotSplitOrForgeALine) {
  AccessRecord r;
  r.method = "GET";
  r.target = "/x\r\naccess client=6.6.6.6 \"quoted\"\\%";
  r.status = 404;
  const std::string line = FormatAccessLine(r);
  EXPECT_EQ(line,
            "access client=- method=GET path=/x%0D%0Aaccess%20client=6.6.6.6%20%22quoted%22%5C%25 "
            "status=404 bytes=0 ms=0.000");
  const std::string long_path = "/" + std::string(1000, 'a');
  r.target = long_path;
  EXPECT_NE(FormatAccessLine(r).find("/" + std::string(255, 'a') + "... status=404"),
            std::string::npos);
  r.target = "";
  r.error = "Broken pipe";
  EXPECT_EQ(FormatAccessLine(r),
            "access client=- method=GET path=- status=404 bytes=0 ms=0.000 error=Broken%20pipe");
}

TEST(AccessLogTest, VerdictNotes) {
  EXPECT_EQ(PageVerdictNote(R"({"url":"u","verdict":"new","doc":1,"matches":[]})"), "verdict=new");
  EXPECT_EQ(PageVerdictNote(R"({"pages":3,"errors":0,"results":[{"url":"a","verdict":"new"},)"
                            R"({"url":"b","verdict":"duplicate"},{"url":"c","verdict":"new"}]})"),
            "verdicts=duplicate:1,new:2");
  // A WARC upload's summary.
  EXPECT_EQ(PageVerdictNote(R"({"pages":5,"new":4,"unchanged":0,"duplicate":0,)"
                            R"("near_duplicate":1,"gone":0,"records":7,"skipped":2,"errors":[]})"),
            "verdicts=near_duplicate:1,new:4");
  EXPECT_EQ(PageVerdictNote(R"({"error":{"code":"invalid_argument","message":"m"}})"), "");
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The bug: 1,200 requests left 5 log lines.
TEST(AccessLogTest, DaemonLogsOneLinePerRequestWithoutTokenOrQuery) {
  TempDir dir;
  const std::string token_file = dir.WriteSecret("token", "s3cret-token-value\n");
  Daemon daemon(dir, dir.path() + "/store",
                "[auth]\ntoken_file = \"" + token_file +
                    "\"\nprotect_reads = true\n"
                    "[limits]\nmax_body_bytes = 4096\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string auth = "Authorization: Bearer s3cret-token-value\r\n";
  {
    HttpClient client(daemon.port());  // one keep-alive connection
    EXPECT_EQ(client.Request("GET", "/healthz").status, 200);
    EXPECT_EQ(client
                  .Request("POST", "/v1/pages?url=" + Q("https://secret-host.example/a"),
                           "<p>the words of a page that is new</p>", "text/html", auth)
                  .status,
              200);
    EXPECT_EQ(
        client.Request("GET", "/v1/similar?url=" + Q("https://secret-host.example/a"), "", "", auth)
            .status,
        200);
    EXPECT_EQ(client.Request("GET", "/v1/stats").status, 401);
    EXPECT_EQ(client.Request("GET", "/no/such/thing?key=secret-query-value").status, 404);
    EXPECT_EQ(client.Request("GET", "/v1/clusters/999", "", "", auth).status, 404);
  }
  // The server's own answer (413 over limits.max_body_bytes) is a request too.
  EXPECT_EQ(HttpClient(daemon.port())
                .Request("POST", "/v1/pages?url=" + Q("https://secret-host.example/b"),
                         std::string(5000, 'x'), "text/html", auth)
                .status,
            413);
  ASSERT_TRUE(daemon.WaitForLog("access client=", 7)) << daemon.log();
  // Nothing more comes (the answers above are all written).
  EXPECT_FALSE(daemon.WaitForLog("access client=", 8, std::chrono::milliseconds(300)));
  const std::string log = daemon.log();
  EXPECT_EQ(Count(log, "access client=127.0.0.1 "), 7u) << log;
  EXPECT_NE(log.find("method=GET path=/healthz status=200 bytes="), std::string::npos) << log;
  EXPECT_NE(log.find("method=POST path=/v1/pages status=200 bytes="), std::string::npos) << log;
  EXPECT_NE(log.find(" verdict=new"), std::string::npos) << log;
  EXPECT_NE(log.find("method=GET path=/v1/similar status=200"), std::string::npos) << log;
  EXPECT_NE(log.find("method=GET path=/v1/stats status=401"), std::string::npos) << log;
  EXPECT_NE(log.find("method=GET path=/no/such/thing status=404"), std::string::npos) << log;
  EXPECT_NE(log.find("method=GET path=/v1/clusters/999 status=404"), std::string::npos) << log;
  EXPECT_NE(log.find("method=POST path=/v1/pages status=413"), std::string::npos) << log;
  EXPECT_NE(log.find(" ms="), std::string::npos) << log;
  // No token, no query string, nothing of the URLs in the queries.
  EXPECT_EQ(log.find("s3cret-token-value"), std::string::npos) << log;
  EXPECT_EQ(log.find("secret-query-value"), std::string::npos) << log;
  EXPECT_EQ(log.find("secret-host"), std::string::npos) << log;
  EXPECT_EQ(log.find('?'), std::string::npos) << log;
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(AccessLogTest, OffBySettingAndOnAgainBySighup) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", "[logging]\naccess_log = false\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  EXPECT_EQ(HttpClient(daemon.port()).Request("GET", "/healthz").status, 200);
  EXPECT_EQ(HttpClient(daemon.port()).Request("GET", "/v1/stats").status, 200);
  dir.Write(daemon.config_path().substr(dir.path().size() + 1), "[logging]\naccess_log = true\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("SIGHUP: reloaded")) << daemon.log();
  EXPECT_EQ(HttpClient(daemon.port()).Request("GET", "/v1/stats").status, 200);
  ASSERT_TRUE(daemon.WaitForLog("access client=")) << daemon.log();
  EXPECT_EQ(Count(daemon.log(), "access client="), 1u) << daemon.log();
  EXPECT_EQ(daemon.log().find("path=/healthz"), std::string::npos) << daemon.log();
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

}  // namespace
}  // namespace shingled::testing
