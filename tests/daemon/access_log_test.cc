// The access log: the line formats (daemon/http/access_log.h), request ids, and the real daemon
// writing one line per request in each format, with no token and no cookie.
#include "daemon/http/access_log.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using daemon::AccessLogFormat;
using daemon::AccessRecord;
using daemon::FormatAccessLine;
using daemon::PageVerdictNote;
using daemon::RedactQuery;
using daemon::RequestIdFor;

TEST(AccessLogTest, TextLineHasEveryField) {
  AccessRecord r;
  r.client = "127.0.0.1";
  r.method = "POST";
  r.target = "/v1/pages?url=https%3A%2F%2Fexample.com%2F&sweep=s#frag";
  r.status = 200;
  r.bytes = 291;
  r.seconds = 0.003112;
  r.request_id = "abc-1";
  r.user_agent = "curl/8.5.0 (x86_64)";
  r.referer = "http://127.0.0.1:8480/reports/?token=t0k&page=2";
  r.note = "verdict=new";
  // The query as sent ('%' not encoded again), the referer's token redacted, spaces encoded.
  EXPECT_EQ(FormatAccessLine(r),
            "access client=127.0.0.1 method=POST path=/v1/pages "
            "query=url=https%3A%2F%2Fexample.com%2F&sweep=s status=200 bytes=291 ms=3.112 "
            "request_id=abc-1 referer=http://127.0.0.1:8480/reports/?token=REDACTED&page=2 "
            "user_agent=curl/8.5.0%20(x86_64) verdict=new");
}

TEST(AccessLogTest, CredentialLikeQueryParametersAreRedacted) {
  EXPECT_EQ(RedactQuery("url=https%3A%2F%2Fa.example%2F&threshold=0.3"),
            "url=https%3A%2F%2Fa.example%2F&threshold=0.3");
  EXPECT_EQ(RedactQuery("token=abc&url=u&access_token=x&Password=p&api_key=k&X-Amz-Signature=s"),
            "token=REDACTED&url=u&access_token=REDACTED&Password=REDACTED&api_key=REDACTED&"
            "X-Amz-Signature=REDACTED");
  EXPECT_EQ(RedactQuery("session=1&auth=2&secret"), "session=REDACTED&auth=REDACTED&secret");
  EXPECT_EQ(RedactQuery(""), "");
  EXPECT_EQ(RedactQuery("&&a=1&"), "&&a=1&");
}

// The regular expression of goaccess' --log-format=COMBINED
// (%h %^[%d:%t %^] "%r" %s %b "%R" "%u", with %d %b/%d/%Y and %t %H:%M:%S), anchored at both
// ends so that a line with a field too many or too few fails.
const std::regex& CombinedLine() {
  static const std::regex re(
      R"re(^(\S+) - - \[(\d{2})/(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)/(\d{4}):)re"
      R"re((\d{2}):(\d{2}):(\d{2}) ([+-]\d{4})\] "([^"]*)" (\d{3}) (\d+|-) "([^"]*)" "([^"]*)"$)re");
  return re;
}

TEST(AccessLogTest, CombinedLineAsGoaccessReadsIt) {
  AccessRecord r;
  r.time = std::chrono::system_clock::from_time_t(1764845588) + std::chrono::milliseconds(250);
  r.client = "::1";
  r.method = "GET";
  r.target = "/v1/similar?url=https%3A%2F%2Fexample.com%2Fa&threshold=0.3&token=t0k#x";
  r.status = 200;
  r.bytes = 1234;
  r.seconds = 0.5;
  r.user_agent = "Mozilla/5.0 (X11; Linux x86_64) \"quoted\"\n\\";
  r.request_id = "id-1";
  r.note = "verdict=new";
  const std::string line = FormatAccessLine(r, AccessLogFormat::kCombined);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(line, m, CombinedLine())) << line;
  EXPECT_EQ(m[1], "::1");
  // The time as strftime(3) writes it in the C locale: the reference.
  const time_t t = 1764845588;
  tm local{};
  localtime_r(&t, &local);
  char expected_time[64];
  strftime(expected_time, sizeof(expected_time), "%d/%b/%Y:%H:%M:%S %z", &local);
  EXPECT_EQ(line.substr(line.find('[') + 1, line.find(']') - line.find('[') - 1), expected_time);
  EXPECT_EQ(m[9],
            "GET /v1/similar?url=https%3A%2F%2Fexample.com%2Fa&threshold=0.3&token=REDACTED "
            "HTTP/1.1");
  EXPECT_EQ(m[10], "200");
  EXPECT_EQ(m[11], "1234");
  EXPECT_EQ(m[12], "-");  // no Referer
  EXPECT_EQ(m[13], R"(Mozilla/5.0 (X11; Linux x86_64) \x22quoted\x22\x0A\x5C)");

  // No request line read (a header over the limit): "-", as Apache writes it.
  AccessRecord bare;
  bare.time = r.time;
  bare.status = 431;
  bare.referer = "https://a.example/";
  const std::string bare_line = FormatAccessLine(bare, AccessLogFormat::kCombined);
  ASSERT_TRUE(std::regex_match(bare_line, m, CombinedLine())) << bare_line;
  EXPECT_EQ(m[1], "-");
  EXPECT_EQ(m[9], "-");
  EXPECT_EQ(m[11], "0");
  EXPECT_EQ(m[12], "https://a.example/");
  EXPECT_EQ(m[13], "-");

  // A target with spaces and quotes cannot shift the request line's fields.
  r.target = "/a b\"c HTTP/1.0\" 200 1 \"x\" \"y";
  const std::string forged = FormatAccessLine(r, AccessLogFormat::kCombined);
  ASSERT_TRUE(std::regex_match(forged, m, CombinedLine())) << forged;
  EXPECT_EQ(m[9], "GET /a%20b%22c%20HTTP/1.0%22%20200%201%20%22x%22%20%22y HTTP/1.1");
  EXPECT_EQ(m[10], "200");
}

TEST(AccessLogTest, JsonLineHasEveryField) {
  AccessRecord r;
  r.time = std::chrono::system_clock::from_time_t(1764845588) + std::chrono::milliseconds(250);
  r.client = "127.0.0.1";
  r.method = "POST";
  r.target = "/v1/pages?url=https%3A%2F%2Fexample.com%2F&password=hunter2";
  r.version = 10;
  r.status = 200;
  r.bytes = 291;
  r.seconds = 0.0031124;
  r.user_agent = "bad \xff utf-8\nand a newline";
  r.referer = "https://a.example/";
  r.request_id = "abc-1";
  r.note = "verdict=new";
  const std::string line = FormatAccessLine(r, AccessLogFormat::kJson);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["client"], "127.0.0.1");
  EXPECT_EQ(j["method"], "POST");
  EXPECT_EQ(j["path"], "/v1/pages");
  EXPECT_EQ(j["query"], "url=https%3A%2F%2Fexample.com%2F&password=REDACTED");
  EXPECT_EQ(j["status"], 200);
  EXPECT_EQ(j["bytes"], 291);
  EXPECT_DOUBLE_EQ(j["ms"].get<double>(), 3.112);
  EXPECT_EQ(j["user_agent"], "bad \xef\xbf\xbd utf-8\nand a newline");  // U+FFFD
  EXPECT_EQ(j["referer"], "https://a.example/");
  EXPECT_EQ(j["request_id"], "abc-1");
  EXPECT_EQ(j["note"], "verdict=new");
  EXPECT_FALSE(j.contains("error"));
  // ISO 8601 with the offset from UTC; the seconds since the epoch it stands for are r.time's.
  const std::string time = j["time"];
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      time, m,
      std::regex(R"(^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.250([+-])(\d{2}):(\d{2})$)")))
      << time;
  tm parsed{};
  parsed.tm_year = std::stoi(m[1]) - 1900;
  parsed.tm_mon = std::stoi(m[2]) - 1;
  parsed.tm_mday = std::stoi(m[3]);
  parsed.tm_hour = std::stoi(m[4]);
  parsed.tm_min = std::stoi(m[5]);
  parsed.tm_sec = std::stoi(m[6]);
  const long offset = (m[7] == "-" ? -1 : 1) * (std::stol(m[8]) * 3600 + std::stol(m[9]) * 60);
  EXPECT_EQ(timegm(&parsed) - offset, 1764845588) << time;
}

TEST(AccessLogTest, RequestIds) {
  EXPECT_EQ(RequestIdFor("abc-123_X.y"), "abc-123_X.y");
  EXPECT_EQ(RequestIdFor(std::string(128, 'a')), std::string(128, 'a'));
  const std::regex generated(R"(^[0-9a-f]{16}-[0-9]+$)");
  std::set<std::string> ids;
  for (const std::string& bad :
       {std::string(), std::string(129, 'a'), std::string("a b"), std::string("a\"b"),
        std::string("id\r\nX: y"), std::string("caf\xc3\xa9")}) {
    const std::string id = RequestIdFor(bad);
    EXPECT_TRUE(std::regex_match(id, generated)) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 6u);  // each new
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

// The bug: 1,200 requests left 5 log lines. And the promise: the query is logged, but never the
// token (in a header, or in a query by a client's mistake) nor a cookie.
TEST(AccessLogTest, DaemonLogsOneLinePerRequestWithoutTokenOrCookie) {
  TempDir dir;
  const std::string token_file = dir.WriteSecret("token", "s3cret-token-value\n");
  Daemon daemon(dir, dir.path() + "/store",
                "[auth]\ntoken_file = \"" + token_file +
                    "\"\nprotect_reads = true\n"
                    "[limits]\nmax_body_bytes = 4096\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string auth = "Authorization: Bearer s3cret-token-value\r\n";
  const std::string cookie = "Cookie: shingled_session=s3cret-cookie-value\r\n";
  {
    HttpClient client(daemon.port());  // one keep-alive connection
    EXPECT_EQ(client.Request("GET", "/healthz").status, 200);
    EXPECT_EQ(client
                  .Request("POST", "/v1/pages?url=" + Q("https://public-host.example/a"),
                           "<p>the words of a page that is new</p>", "text/html", auth)
                  .status,
              200);
    EXPECT_EQ(client
                  .Request("GET", "/v1/similar?url=" + Q("https://public-host.example/a"), "", "",
                           auth + cookie + "User-Agent: test-agent/1.0\r\n")
                  .status,
              200);
    EXPECT_EQ(client.Request("GET", "/v1/stats", "", "", cookie).status, 401);
    EXPECT_EQ(client.Request("GET", "/no/such/thing?key=secret-query-value").status, 404);
    // A parameter the route does not take: 400, and logged redacted all the same.
    EXPECT_EQ(
        client.Request("GET", "/v1/clusters/999?token=s3cret-token-value", "", "", auth).status,
        400);
  }
  // The server's own answer (413 over limits.max_body_bytes) is a request too.
  EXPECT_EQ(HttpClient(daemon.port())
                .Request("POST", "/v1/pages?url=" + Q("https://public-host.example/b"),
                         std::string(5000, 'x'), "text/html", auth)
                .status,
            413);
  ASSERT_TRUE(daemon.WaitForLog("access client=", 7)) << daemon.log();
  // Nothing more comes (the answers above are all written).
  EXPECT_FALSE(daemon.WaitForLog("access client=", 8, std::chrono::milliseconds(300)));
  const std::string log = daemon.log();
  EXPECT_EQ(Count(log, "access client=127.0.0.1 "), 7u) << log;
  EXPECT_NE(log.find("method=GET path=/healthz status=200 bytes="), std::string::npos) << log;
  EXPECT_NE(log.find("method=POST path=/v1/pages query=url=https%3A%2F%2Fpublic-host.example%2Fa "
                     "status=200 bytes="),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(" verdict=new"), std::string::npos) << log;
  EXPECT_NE(log.find("method=GET path=/v1/similar query=url=https%3A%2F%2Fpublic-host.example%2Fa "
                     "status=200"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(" user_agent=test-agent/1.0"), std::string::npos) << log;
  EXPECT_NE(log.find("method=GET path=/v1/stats status=401"), std::string::npos) << log;
  EXPECT_NE(log.find("method=GET path=/no/such/thing query=key=REDACTED status=404"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("method=GET path=/v1/clusters/999 query=token=REDACTED status=400"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("method=POST path=/v1/pages query=url=https%3A%2F%2Fpublic-host.example%2Fb "
                     "status=413"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(" ms="), std::string::npos) << log;
  EXPECT_EQ(Count(log, " request_id="), 7u) << log;
  // No token, no cookie, no credential-like parameter's value: anywhere in the log.
  EXPECT_EQ(log.find("s3cret-token-value"), std::string::npos) << log;
  EXPECT_EQ(log.find("s3cret-cookie-value"), std::string::npos) << log;
  EXPECT_EQ(log.find("shingled_session"), std::string::npos) << log;
  EXPECT_EQ(log.find("secret-query-value"), std::string::npos) << log;
  EXPECT_EQ(log.find("Bearer"), std::string::npos) << log;
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// The lines of `log` that `keep` takes, with the syslog priority a journal stream gets ("<6>")
// taken off.
std::vector<std::string> LinesOf(const std::string& log,
                                 const std::function<bool(const std::string&)>& keep) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > 3 && line[0] == '<' && line[2] == '>') line.erase(0, 3);
    if (keep(line)) lines.push_back(line);
  }
  return lines;
}

TEST(AccessLogTest, DaemonWritesCombinedLinesAsGoaccessReadsThem) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store",
                "[logging]\naccess_log_format = \"combined\"\n[limits]\nmax_body_bytes = 4096\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  {
    HttpClient client(daemon.port());
    EXPECT_EQ(client
                  .Request("GET", "/healthz", "", "",
                           "User-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n"
                           "Referer: http://127.0.0.1/reports/?token=t0k\r\n")
                  .status,
              200);
    EXPECT_EQ(client
                  .Request("POST", "/v1/pages?url=" + Q("https://example.com/a"),
                           "<p>the words of a page that is new</p>", "text/html")
                  .status,
              200);
    EXPECT_EQ(client.Request("GET", "/no/such/thing?x=1").status, 404);
  }
  EXPECT_EQ(HttpClient(daemon.port())
                .Request("POST", "/v1/pages?url=" + Q("https://example.com/b"),
                         std::string(5000, 'x'), "text/html")
                .status,
            413);
  const std::regex& combined = CombinedLine();
  auto is_combined = [&](const std::string& line) { return std::regex_match(line, combined); };
  for (int i = 0; i < 2000 && LinesOf(daemon.log(), is_combined).size() < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
  }
  const std::vector<std::string> lines = LinesOf(daemon.log(), is_combined);
  ASSERT_EQ(lines.size(), 4u) << daemon.log();
  // Each of them, whole, as a combined line; and no text line.
  EXPECT_EQ(daemon.log().find("access client="), std::string::npos) << daemon.log();
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines[0], m, combined));
  EXPECT_EQ(m[1], "127.0.0.1");
  EXPECT_EQ(m[9], "GET /healthz HTTP/1.1");
  EXPECT_EQ(m[10], "200");
  EXPECT_EQ(m[12], "http://127.0.0.1/reports/?token=REDACTED");
  EXPECT_EQ(m[13], "Mozilla/5.0 (X11; Linux x86_64)");
  ASSERT_TRUE(std::regex_match(lines[1], m, combined));
  EXPECT_EQ(m[9], "POST /v1/pages?url=https%3A%2F%2Fexample.com%2Fa HTTP/1.1");
  EXPECT_EQ(m[10], "200");
  EXPECT_GT(std::stoul(m[11]), 0u);
  EXPECT_EQ(m[12], "-");
  EXPECT_EQ(m[13], "-");
  ASSERT_TRUE(std::regex_match(lines[2], m, combined));
  EXPECT_EQ(m[9], "GET /no/such/thing?x=1 HTTP/1.1");
  EXPECT_EQ(m[10], "404");
  ASSERT_TRUE(std::regex_match(lines[3], m, combined));
  EXPECT_EQ(m[9], "POST /v1/pages?url=https%3A%2F%2Fexample.com%2Fb HTTP/1.1");
  EXPECT_EQ(m[10], "413");
  EXPECT_EQ(daemon.log().find("t0k"), std::string::npos) << daemon.log();
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// goaccess itself reads every combined line, beside the daemon's other log lines (skipped when
// goaccess is not installed: scripts/install-deps.sh does not install it; Debian's package does).
TEST(AccessLogTest, GoaccessReadsEveryCombinedLine) {
  constexpr const char* kGoaccess = "/usr/bin/goaccess";
  if (access(kGoaccess, X_OK) != 0) GTEST_SKIP() << kGoaccess << " is not installed";
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store",
                "[logging]\naccess_log_format = \"combined\"\n[limits]\nmax_body_bytes = 4096\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  {
    HttpClient client(daemon.port());
    EXPECT_EQ(client
                  .Request("GET", "/healthz", "", "",
                           "User-Agent: Mozilla/5.0 (X11; Linux x86_64) \"quoted\\\" agent\r\n"
                           "Referer: https://a.example/?q=\"x\"\r\n")
                  .status,
              200);
    EXPECT_EQ(client
                  .Request("POST", "/v1/pages?url=" + Q("https://example.com/a"),
                           "<p>the words of a page that is new</p>", "text/html")
                  .status,
              200);
    EXPECT_EQ(client.Request("GET", "/no/such/thing?x=1&token=t").status, 404);
    EXPECT_EQ(client.Request("HEAD", "/metrics").status, 200);
  }
  EXPECT_EQ(HttpClient(daemon.port())
                .Request("POST", "/v1/pages?url=" + Q("https://example.com/b"),
                         std::string(5000, 'x'), "text/html")
                .status,
            413);
  auto is_combined = [](const std::string& line) { return std::regex_match(line, CombinedLine()); };
  for (int i = 0; i < 2000 && LinesOf(daemon.log(), is_combined).size() < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
  }
  ASSERT_EQ(LinesOf(daemon.log(), is_combined).size(), 5u) << daemon.log();
  const std::vector<std::string> all =
      LinesOf(daemon.log(), [](const std::string& line) { return !line.empty(); });
  std::string text;
  for (const std::string& line : all) text += line + "\n";
  const std::string log_file = dir.Write("access.log", text);
  const std::string report = dir.path() + "/report.json";
  const std::string command = std::string(kGoaccess) + " " + log_file +
                              " --log-format=COMBINED --no-global-config -o " + report +
                              " >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const nlohmann::json j = nlohmann::json::parse(ReadWholeFile(report));
  const nlohmann::json& general = j["general"];
  EXPECT_EQ(general["valid_requests"], 5) << general;
  // The daemon's other lines (start-up, ...) are all goaccess cannot read.
  EXPECT_EQ(general["total_requests"], all.size()) << general;
  std::set<std::string> paths;
  for (const char* panel : {"requests", "not_found"}) {  // 404s have a panel of their own
    for (const nlohmann::json& request : j[panel]["data"]) paths.insert(request["data"]);
  }
  EXPECT_TRUE(paths.count("/healthz")) << j["requests"];
  EXPECT_TRUE(paths.count("/no/such/thing?x=1&token=REDACTED")) << j["not_found"];
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(AccessLogTest, DaemonWritesOneJsonObjectPerLine) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", "[logging]\naccess_log_format = \"json\"\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  {
    HttpClient client(daemon.port());
    EXPECT_EQ(client
                  .Request("POST", "/v1/pages?url=" + Q("https://example.com/a"),
                           "<p>the words of a page that is new</p>", "text/html",
                           "X-Request-Id: from-the-proxy.1\r\nUser-Agent: crawler/2\r\n")
                  .status,
              200);
    EXPECT_EQ(client.Request("GET", "/v1/stats", "", "", "Referer: https://a.example/x\r\n").status,
              200);
  }
  auto is_json = [](const std::string& line) { return !line.empty() && line[0] == '{'; };
  for (int i = 0; i < 2000 && LinesOf(daemon.log(), is_json).size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
  }
  const std::vector<std::string> lines = LinesOf(daemon.log(), is_json);
  ASSERT_EQ(lines.size(), 2u) << daemon.log();
  const nlohmann::json post = nlohmann::json::parse(lines[0]);
  const nlohmann::json stats = nlohmann::json::parse(lines[1]);
  for (const nlohmann::json& j : {post, stats}) {
    for (const char* key : {"time", "client", "method", "path", "query", "status", "bytes", "ms",
                            "user_agent", "referer", "request_id", "note"}) {
      EXPECT_TRUE(j.contains(key)) << key << " in " << j.dump();
    }
    EXPECT_TRUE(std::regex_match(
        j["time"].get<std::string>(),
        std::regex(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$)")))
        << j.dump();
    EXPECT_EQ(j["client"], "127.0.0.1");
    EXPECT_TRUE(j["ms"].is_number());
  }
  EXPECT_EQ(post["method"], "POST");
  EXPECT_EQ(post["path"], "/v1/pages");
  EXPECT_EQ(post["query"], "url=https%3A%2F%2Fexample.com%2Fa");
  EXPECT_EQ(post["status"], 200);
  EXPECT_EQ(post["user_agent"], "crawler/2");
  EXPECT_EQ(post["request_id"], "from-the-proxy.1");
  EXPECT_EQ(post["note"], "verdict=new");
  EXPECT_EQ(stats["path"], "/v1/stats");
  EXPECT_EQ(stats["query"], "");
  EXPECT_EQ(stats["referer"], "https://a.example/x");
  EXPECT_NE(stats["request_id"], "");
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(AccessLogTest, RequestIdIsEchoedOrGeneratedOnEveryResponse) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", "[limits]\nmax_body_bytes = 4096\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::regex generated(R"(^[0-9a-f]{16}-[0-9]+$)");
  HttpClient client(daemon.port());
  // A sane id comes back as sent, on a success and on an error.
  HttpResponse r = client.Request("GET", "/healthz", "", "", "X-Request-Id: abc-123_X.y\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["x-request-id"], "abc-123_X.y");
  r = client.Request("GET", "/no/such/thing", "", "", "X-Request-Id: abc-404\r\n");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.headers["x-request-id"], "abc-404");
  // None, or one that is not sane: a new one.
  r = client.Request("GET", "/healthz");
  const std::string first = r.headers["x-request-id"];
  EXPECT_TRUE(std::regex_match(first, generated)) << first;
  r = client.Request("GET", "/healthz", "", "", "X-Request-Id: " + std::string(129, 'a') + "\r\n");
  EXPECT_TRUE(std::regex_match(r.headers["x-request-id"], generated)) << r.headers["x-request-id"];
  EXPECT_NE(r.headers["x-request-id"], first);
  r = client.Request("GET", "/healthz", "", "", "X-Request-Id: a;b\r\n");
  EXPECT_TRUE(std::regex_match(r.headers["x-request-id"], generated)) << r.headers["x-request-id"];
  // The server's own answer (413 before the body is read) carries it too.
  r = HttpClient(daemon.port())
          .Request("POST", "/v1/pages?url=" + Q("https://example.com/a"), std::string(5000, 'x'),
                   "text/html", "X-Request-Id: big-one\r\n");
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.headers["x-request-id"], "big-one");
  // And the access log names them.
  ASSERT_TRUE(daemon.WaitForLog("access client=", 6)) << daemon.log();
  const std::string log = daemon.log();
  EXPECT_NE(log.find("path=/healthz status=200 bytes="), std::string::npos) << log;
  EXPECT_NE(log.find(" request_id=abc-123_X.y"), std::string::npos) << log;
  EXPECT_NE(log.find(" request_id=abc-404"), std::string::npos) << log;
  EXPECT_NE(log.find(" request_id=" + first), std::string::npos) << log;
  EXPECT_NE(log.find("status=413 bytes="), std::string::npos) << log;
  EXPECT_NE(log.find(" request_id=big-one"), std::string::npos) << log;
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
  // The format too.
  dir.Write(daemon.config_path().substr(dir.path().size() + 1),
            "[logging]\naccess_log = true\naccess_log_format = \"json\"\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("SIGHUP: reloaded", 2)) << daemon.log();
  EXPECT_NE(daemon.log().find("changed logging.access_log_format"), std::string::npos)
      << daemon.log();
  EXPECT_EQ(HttpClient(daemon.port()).Request("GET", "/nothing?x=1").status, 404);
  ASSERT_TRUE(daemon.WaitForLog(R"("path":"/nothing","query":"x=1")")) << daemon.log();
  EXPECT_EQ(Count(daemon.log(), "access client="), 1u) << daemon.log();
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

}  // namespace
}  // namespace shingled::testing
