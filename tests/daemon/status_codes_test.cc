// "Status codes", against the real daemon on loopback: a page posted with a 5xx or
// 429 status is a failed attempt that leaves the URL's last good version live, and a 3xx a
// redirect that records its target (`location`), through the hook and NDJSON batches alike; and
// an unknown key in a JSON body is refused as an unknown query parameter is. (WARC bodies and
// `shingled ingest`: warc_post_test.cc; the crawler: crawl_serve_test.cc.)
#include <nlohmann/json.hpp>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

class StatusCodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<Daemon>(dir_, dir_.path() + "/store", "");
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
    for (const char* sweep : {"s1", "s2"}) {
      ASSERT_EQ(Call("POST", "/v1/sweeps", std::string("{\"name\": \"") + sweep + "\"}",
                     "application/json")
                    .status,
                200);
    }
  }
  HttpResponse Call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "") {
    HttpClient client(daemon_->port());
    return client.Request(method, target, body, type);
  }
  json Ok(const HttpResponse& r) {
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false);
  }
  json Post(const std::string& query, const std::string& body) {
    return Ok(Call("POST", "/v1/pages?" + query, body, "text/html"));
  }
  json History(const std::string& url) { return Ok(Call("GET", "/v1/urls?url=" + Q(url))); }
  void ExpectBadRequest(const HttpResponse& r, const std::string& in_message) {
    EXPECT_EQ(r.status, 400) << r.body;
    const json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.body;
    EXPECT_EQ(j["error"]["code"], "invalid_argument") << r.body;
    EXPECT_NE(j["error"]["message"].get<std::string>().find(in_message), std::string::npos)
        << r.body;
  }
  // Closes s2 and expects it to have recorded nothing gone.
  void CloseSecondSweepWithNothingGone() {
    const json closed = Ok(Call("POST", "/v1/sweeps/s2/close", "{}", "application/json"));
    EXPECT_EQ(closed["gone"], 0) << closed;
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
};

// Bug: POST /v1/pages?status=500 (or 301, 302, 429, 503) stored the error or redirect body as a
// live page with verdict "new".
TEST_F(StatusCodesTest, HookServerErrorKeepsTheLastGoodVersionLive) {
  const std::string url = "https://e.com/a";
  const json good = Post("sweep=s1&url=" + Q(url), SyntheticPage(1));
  ASSERT_EQ(good["verdict"], "new");
  for (int status : {500, 503, 429}) {
    const json failed = Post("sweep=s2&status=" + std::to_string(status) + "&url=" + Q(url),
                             "<html><body>Service unavailable, try again later</body></html>");
    EXPECT_EQ(failed["verdict"], "failed") << failed;
    EXPECT_EQ(failed["doc"], good["doc"]) << failed;
    EXPECT_EQ(failed["cluster"], good["cluster"]) << failed;
    EXPECT_FALSE(failed.contains("location")) << failed;
  }
  // The body of an error is not read: its type is not refused (as an unknown page type is).
  const json typed = Ok(Call("POST", "/v1/pages?sweep=s2&status=503&url=" + Q(url),
                             R"({"error": "overloaded"})", "application/json"));
  EXPECT_EQ(typed["verdict"], "failed") << typed;
  EXPECT_EQ(typed["replayed"], false) << typed;  // the 429 came between
  EXPECT_EQ(Call("POST", "/v1/pages?sweep=s2&url=" + Q(url), "{}", "application/json").status, 415);
  // No document was made of the error pages.
  EXPECT_EQ(Ok(Call("GET", "/v1/stats"))["documents"], 1);
  const json versions = History(url)["versions"];
  ASSERT_EQ(versions.size(), 5u) << versions;
  EXPECT_EQ(versions[3]["verdict"], "failed");
  EXPECT_EQ(versions[3]["status"], 429);
  EXPECT_EQ(versions[3]["doc"], good["doc"]);
  EXPECT_EQ(versions[4]["status"], 503);
  // Still the URL's content, and not gone when the sweep that saw the attempts closes.
  EXPECT_EQ(Call("GET", "/v1/similar?url=" + Q(url)).status, 200);
  CloseSecondSweepWithNothingGone();
  EXPECT_EQ(History(url)["versions"].size(), 5u);

  // Counted under their own verdict.
  const std::string metrics = Call("GET", "/metrics").body;
  EXPECT_NE(
      metrics.find("shingled_pages_ingested_total{content_kind=\"html\",verdict=\"failed\"} 3"),
      std::string::npos)
      << metrics;
}

TEST_F(StatusCodesTest, HookRedirectRecordsItsTarget) {
  const std::string url = "https://e.com/dir/old";
  const json good = Post("sweep=s1&url=" + Q(url), SyntheticPage(2));
  // A relative location is resolved against the page's URL and normalized.
  const json moved =
      Post("sweep=s2&status=301&location=" + Q("../New%7e/page#top") + "&url=" + Q(url),
           "<html><body>Moved</body></html>");
  EXPECT_EQ(moved["verdict"], "redirect") << moved;
  EXPECT_EQ(moved["doc"], 0) << moved;
  EXPECT_EQ(moved["location"], "https://e.com/New~/page") << moved;
  EXPECT_EQ(moved["previous"]["doc"], good["doc"]) << moved;
  // An empty body is fine for a redirect; an absolute location is taken as it is.
  const json again = Post(
      "sweep=s2&status=302&location=" + Q("HTTPS://Other.Example:443/x") + "&url=" + Q(url), "");
  EXPECT_EQ(again["verdict"], "redirect") << again;
  EXPECT_EQ(again["location"], "https://other.example/x") << again;
  EXPECT_EQ(Ok(Call("GET", "/v1/stats"))["documents"], 1);
  const json versions = History(url)["versions"];
  ASSERT_EQ(versions.size(), 3u) << versions;
  EXPECT_EQ(versions[1]["verdict"], "redirect");
  EXPECT_EQ(versions[1]["status"], 301);
  EXPECT_EQ(versions[1]["location"], "https://e.com/New~/page");
  EXPECT_EQ(versions[2]["location"], "https://other.example/x");
  EXPECT_FALSE(versions[0].contains("location"));
  CloseSecondSweepWithNothingGone();
  // Lost and found starts from the content it had.
  const json lost = Ok(Call("GET", "/v1/lost?url=" + Q(url)));
  EXPECT_EQ(lost["last_doc"], good["doc"]) << lost;
  EXPECT_EQ(lost["location"], "https://other.example/x") << lost;

  const std::string metrics = Call("GET", "/metrics").body;
  EXPECT_NE(metrics.find("verdict=\"redirect\"} 2"), std::string::npos) << metrics;
}

TEST_F(StatusCodesTest, LocationGoesWithARedirectStatusOnly) {
  const std::string url = Q("https://e.com/a");
  ExpectBadRequest(Call("POST", "/v1/pages?sweep=s1&status=301&url=" + url, "moved", "text/html"),
                   "status 301 is a redirect: give its target as location");
  ExpectBadRequest(Call("POST", "/v1/pages?sweep=s1&location=/b&url=" + url, "x", "text/html"),
                   "location is only taken with a redirect status");
  ExpectBadRequest(
      Call("POST", "/v1/pages?sweep=s1&status=500&location=/b&url=" + url, "x", "text/html"),
      "not 500");
  ExpectBadRequest(
      Call("POST", "/v1/pages?sweep=s1&status=301&location=" + Q("mailto:a@b") + "&url=" + url, "x",
           "text/html"),
      "location: ");
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + url).status, 404);
}

TEST_F(StatusCodesTest, NdjsonServerErrorAndRedirect) {
  const std::string a = "https://e.com/a", b = "https://e.com/b";
  json j = Ok(Call("POST", "/v1/pages?sweep=s1",
                   json{{"url", a}, {"content", SyntheticPage(3)}}.dump() + "\n" +
                       json{{"url", b}, {"content", SyntheticPage(4)}}.dump() + "\n",
                   "application/x-ndjson"));
  ASSERT_EQ(j["errors"], 0) << j;
  const json doc_a = j["results"][0]["doc"];
  j = Ok(Call("POST", "/v1/pages?sweep=s2",
              json{{"url", a}, {"status", 500}, {"content", "<p>oops</p>"}}.dump() + "\n" +
                  json{{"url", b}, {"status", 308}, {"location", "/c"}}.dump() + "\n",
              "application/x-ndjson"));
  ASSERT_EQ(j["errors"], 0) << j;
  EXPECT_EQ(j["results"][0]["verdict"], "failed") << j;
  EXPECT_EQ(j["results"][0]["doc"], doc_a) << j;
  EXPECT_EQ(j["results"][1]["verdict"], "redirect") << j;
  EXPECT_EQ(j["results"][1]["location"], "https://e.com/c") << j;
  EXPECT_EQ(j["results"][1]["doc"], 0) << j;
  EXPECT_EQ(Ok(Call("GET", "/v1/stats"))["documents"], 2);
  EXPECT_EQ(History(a)["versions"][1]["verdict"], "failed");
  EXPECT_EQ(History(b)["versions"][1]["location"], "https://e.com/c");
  CloseSecondSweepWithNothingGone();

  // The same rules as the query's: a redirect needs its location, nothing else takes one.
  ExpectBadRequest(Call("POST", "/v1/pages?sweep=s1", json{{"url", a}, {"status", 302}}.dump(),
                        "application/x-ndjson"),
                   "line 1: status 302 is a redirect");
  ExpectBadRequest(
      Call("POST", "/v1/pages?sweep=s1",
           json{{"url", a}, {"content", "x"}, {"location", "/d"}}.dump(), "application/x-ndjson"),
      "line 1: location is only taken with a redirect status");
}

// Bug: an unknown key in a JSON body was ignored ({"strat": ...} for "start"), where an unknown
// query parameter is refused.
TEST_F(StatusCodesTest, UnknownJsonKeysAreRefused) {
  ExpectBadRequest(
      Call("POST", "/v1/sweeps", R"({"name": "s3", "strat": "2024-05-01"})", "application/json"),
      "unknown key \"strat\" in the body; it takes name, start");
  EXPECT_EQ(Call("GET", "/v1/sweeps").body.find("\"s3\""), std::string::npos);
  ExpectBadRequest(
      Call("POST", "/v1/sweeps/s2/close", R"({"ned": "2024-05-31"})", "application/json"),
      "unknown key \"ned\" in the body; it takes end");
  // Refused whole: the good line before the bad one is not stored either.
  ExpectBadRequest(
      Call("POST", "/v1/pages?sweep=s1",
           json{{"url", "https://e.com/ok"}, {"content", "one two"}}.dump() + "\n" +
               json{{"url", "https://e.com/x"}, {"content", "three"}, {"fetched", "2024"}}.dump(),
           "application/x-ndjson"),
      "line 2: unknown key \"fetched\" in the body");
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q("https://e.com/ok")).status, 404);
  // Bodies of the actions that take none: an empty object is fine, a key is not.
  ExpectBadRequest(
      Call("POST", "/v1/crawl", R"({"seeds": ["https://e.com/"]})", "application/json"),
      "unknown key \"seeds\" in the body; it takes none");
  EXPECT_EQ(Call("POST", "/v1/crawl", "{}", "application/json").status, 409);  // not configured
  // The keys a body takes still work, and the sweep still closes.
  EXPECT_EQ(
      Call("POST", "/v1/sweeps", R"({"name": "s3", "start": "2024-05-01"})", "application/json")
          .status,
      200);
  CloseSecondSweepWithNothingGone();
}

}  // namespace
}  // namespace shingled::testing
