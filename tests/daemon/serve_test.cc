// The real daemon on loopback: verdicts, every endpoint, bad requests of every kind, auth.
#include <zlib.h>

#include <nlohmann/json.hpp>

#include "tests/crawler/gzip.h"
#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

const std::string kSamples = std::string(SHINGLED_TEST_DATA_DIR) + "/samples/";

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<Daemon>(dir_, dir_.path() + "/store", Config());
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
  }
  virtual std::string Config() { return "[limits]\nmax_body_bytes = 65536\n"; }
  HttpResponse Call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "",
                    const std::string& headers = "") {
    HttpClient client(daemon_->port());
    return client.Request(method, target, body, type, headers);
  }
  json Post(const std::string& url, const std::string& page, int expect = 200) {
    HttpResponse r = Call("POST", "/v1/pages?url=" + Q(url), page, "text/html");
    EXPECT_EQ(r.status, expect) << r.body;
    return json::parse(r.body);
  }
  void ExpectError(const HttpResponse& r, int status, const std::string& code,
                   const std::string& in_message = "") {
    EXPECT_EQ(r.status, status) << r.body;
    const json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.body;
    EXPECT_EQ(j["error"]["code"], code) << r.body;
    EXPECT_NE(j["error"]["message"].get<std::string>().find(in_message), std::string::npos)
        << r.body;
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(ServeTest, VerdictsOfPostedPages) {
  const std::string a = ReadWholeFile(kSamples + "page-a.html");
  const std::string b = ReadWholeFile(kSamples + "page-b.html");
  json j = Post("https://example.com/a", a);
  EXPECT_EQ(j["verdict"], "new");
  const int doc_a = j["doc"];
  // The same content at the same URL in the same sweep: idempotent.
  j = Post("https://example.com/a", a);
  EXPECT_EQ(j["replayed"], true);
  EXPECT_EQ(j["doc"], doc_a);
  // The same bytes at another URL: a duplicate of the first document.
  j = Post("https://example.com/copy", a);
  EXPECT_EQ(j["verdict"], "duplicate");
  EXPECT_EQ(j["doc"], doc_a);
  // The near-copy resembles page a (0.6..0.95): matched, with estimates.
  j = Post("https://example.com/b", b);
  ASSERT_FALSE(j["matches"].empty()) << j;
  EXPECT_EQ(j["matches"][0]["doc"], doc_a);
  EXPECT_GT(j["matches"][0]["resemblance"].get<double>(), 0.5);
  // An unrelated page is new and matches nothing.
  j = Post("https://example.com/other", SyntheticPage(1));
  EXPECT_EQ(j["verdict"], "new");
  EXPECT_TRUE(j["matches"].empty());
}

// The bug: the docs' "Sweeps" example (open 2024-05, close it) on a store that held the quick
// start's pages recorded every URL gone. Over HTTP: a sweep closes over the hosts or prefixes it
// was opened with; a dry run lists, a reopen undoes; an end before the start and unknown body
// keys are refused.
TEST_F(ServeTest, SweepsCloseOverTheirScopeOnly) {
  const std::string a = ReadWholeFile(kSamples + "page-a.html");
  Post("https://example.com/a", a);
  Post("https://example.com/b", ReadWholeFile(kSamples + "page-b.html"));
  Post("https://other.org/c", SyntheticPage(3));

  HttpResponse r = Call("POST", "/v1/sweeps", R"({"name": "2024-05", "start": "2024-05-01"})",
                        "application/json");
  ASSERT_EQ(r.status, 200) << r.body;
  r = Call("POST", "/v1/sweeps/2024-05/close", R"({"end": "2024-05-31"})", "application/json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["closing"]["gone_urls"], 0) << r.body;
  r = Call("GET", "/v1/urls?url=" + Q("https://example.com/a"));
  EXPECT_EQ(json::parse(r.body)["versions"].size(), 1u) << r.body;

  ExpectError(
      Call("POST", "/v1/sweeps", R"({"name": "x", "strat": "2024-06-01"})", "application/json"),
      400, "invalid_argument", "unknown key \"strat\"");
  ExpectError(Call("POST", "/v1/sweeps", R"({"name": "x", "hosts": ["example.com/docs"]})",
                   "application/json"),
              400, "invalid_argument", "not a host name");
  // The sweep's start is today: "now" as the daemon's clock has it.
  r = Call("POST", "/v1/sweeps",
           R"({"name": "june", "hosts": ["Example.com"], "prefixes": ["https://other.org/x/"]})",
           "application/json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(
      json::parse(r.body)["scope"],
      json::parse(R"(["http://example.com/", "https://example.com/", "https://other.org/x/"])"))
      << r.body;
  r = Call("POST", "/v1/pages?url=" + Q("https://example.com/a") + "&sweep=june", a, "text/html");
  ASSERT_EQ(r.status, 200) << r.body;
  ExpectError(Call("POST", "/v1/sweeps/june/close", R"({"end": "2024-05-31"})", "application/json"),
              400, "invalid_argument", "before its start");
  ExpectError(Call("POST", "/v1/sweeps/june/close", R"({"dry_run": "yes"})", "application/json"),
              400, "invalid_argument", "dry_run");
  r = Call("POST", "/v1/sweeps/june/close", R"({"dry_run": true})", "application/json");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["open"], true) << r.body;
  EXPECT_EQ(j["closing"]["urls"], json::parse(R"(["https://example.com/b"])")) << r.body;
  r = Call("POST", "/v1/sweeps/june/close", "", "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["closing"]["gone_urls"], 1) << r.body;
  r = Call("GET", "/v1/urls?url=" + Q("https://other.org/c"));
  EXPECT_EQ(json::parse(r.body)["versions"].size(), 1u) << r.body;
  r = Call("POST", "/v1/sweeps/june/reopen", "", "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["removed_gone"], 1) << r.body;
  EXPECT_EQ(json::parse(r.body)["open"], true) << r.body;
  ExpectError(Call("POST", "/v1/sweeps/june/reopen", "", ""), 409, "failed_precondition", "open");
  ExpectError(Call("POST", "/v1/sweeps/nope/reopen", "", ""), 404, "not_found");
  r = Call("GET", "/v1/urls?url=" + Q("https://example.com/b"));
  EXPECT_EQ(json::parse(r.body)["versions"].size(), 1u) << r.body;
}

TEST_F(ServeTest, EveryEndpointAnswers) {
  const std::string a = ReadWholeFile(kSamples + "page-a.html");
  const int doc = Post("https://example.com/a", a)["doc"];
  const json b = Post("https://example.com/b", ReadWholeFile(kSamples + "page-b.html"));
  // Every page answer says how many candidates were left out, and each match where its
  // resemblance comes from.
  EXPECT_EQ(b["candidates_left_out"], 0) << b.dump();
  for (const json& m : b["matches"]) {
    EXPECT_TRUE(m["resemblance_from"] == "verify_sample" ||
                m["resemblance_from"] == "verify_sample_exact")
        << b.dump();
    EXPECT_TRUE(m.contains("resemblance_error")) << b.dump();
  }

  HttpResponse r =
      Call("GET", "/v1/similar?url=" + Q("https://example.com/a") + "&threshold=0.3&limit=5");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["results"][0]["url"], "https://example.com/b");
  EXPECT_EQ(json::parse(r.body)["candidates_left_out"], 0) << r.body;
  EXPECT_NE(json::parse(r.body)["results"][0]["resemblance_from"], "minhashes") << r.body;
  r = Call("POST", "/v1/similar?threshold=0.3", a, "text/html");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["results"][0]["doc"], doc);  // itself, stored
  r = Call("GET", "/v1/urls?url=" + Q("https://example.com/a"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["versions"].size(), 1u);
  r = Call("GET", "/v1/lost?url=" + Q("https://example.com/a"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["last_doc"], doc);
  r = Call("GET", "/v1/clusters/" + std::to_string(doc));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_GE(json::parse(r.body)["size"].get<int>(), 1);
  r = Call("GET", "/v1/documents/" + std::to_string(doc));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["id"], doc);
  r = Call("POST", "/v1/sweeps", R"({"name": "s2", "start": "2024-05-01T00:00:00Z"})",
           "application/json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["start"], "2024-05-01T00:00:00Z");
  r = Call(
      "POST",
      "/v1/pages?url=" + Q("https://example.com/a") + "&sweep=s2&fetched_at=2024-05-02T00:00:00Z",
      a, "text/html");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["verdict"], "unchanged");
  r = Call("GET", "/v1/sweeps");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["sweeps"].size(), 2u);
  r = Call("POST", "/v1/sweeps/s2/close", "", "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["open"], false);
  ExpectError(Call("POST", "/v1/pages?url=http://h/&sweep=s2", a, "text/html"), 409,
              "failed_precondition", "closed");
  r = Call("GET", "/v1/stats");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["documents"], 2);
  EXPECT_TRUE(json::parse(r.body)["buffered_postings"].is_number_unsigned()) << r.body;
  EXPECT_TRUE(json::parse(r.body)["buffered_fingerprints"].is_number_unsigned()) << r.body;
  // The writer's key filter exists once a batch has been written (the two documents).
  EXPECT_GT(json::parse(r.body)["key_filter_bytes"].get<uint64_t>(), 0u) << r.body;
  r = Call("GET", "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("shingled_pages_ingested_total{content_kind=\"html\",verdict=\"new\"} 2"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("shingled_process_resident_memory_bytes"), std::string::npos);
  EXPECT_NE(r.body.find("shingled_store_buffered_postings"), std::string::npos);
  EXPECT_NE(r.body.find("shingled_store_buffered_fingerprints"), std::string::npos);
  EXPECT_NE(r.body.find("shingled_store_key_filter_bytes"), std::string::npos);
  EXPECT_NE(r.body.find("shingled_http_requests_total{code=\"200\",route=\"pages\"}"),
            std::string::npos);
  r = Call("GET", "/healthz");
  EXPECT_EQ(r.status, 200);
  r = Call("GET", "/readyz");
  EXPECT_EQ(r.status, 200);

  // A batch of JSON lines: one result per line, in order.
  const std::string batch =
      json{{"url", "https://example.com/n1"},
           {"content", "<p>" + SyntheticPage(7) + "</p>"},
           {"content_type", "text/html"}}
          .dump() +
      "\n" + json{{"url", "https://example.com/gone"}, {"status", 404}}.dump() + "\n";
  r = Call("POST", "/v1/pages", batch, "application/x-ndjson");
  ASSERT_EQ(r.status, 200) << r.body;
  const json results = json::parse(r.body);
  EXPECT_EQ(results["pages"], 2);
  EXPECT_EQ(results["errors"], 0);
  EXPECT_EQ(results["results"][0]["verdict"], "new");
  EXPECT_EQ(results["results"][1]["verdict"], "gone");
}

TEST_F(ServeTest, BadRequestsOfEveryKind) {
  const std::string page = SyntheticPage(2);
  ExpectError(Call("POST", "/v1/pages?url=not-a-url", page, "text/html"), 400, "invalid_argument",
              "absolute URL");
  ExpectError(Call("POST", "/v1/pages?url=http:///nohost", page, "text/html"), 400,
              "invalid_argument", "no host");
  ExpectError(Call("POST", "/v1/pages?url=%zz", page, "text/html"), 400, "invalid_argument",
              "percent");
  ExpectError(Call("POST", "/v1/pages", page, "text/html"), 400, "invalid_argument", "missing url");
  ExpectError(Call("POST", "/v1/pages?url=" + Q("https://e.com/"), "", "text/html"), 400,
              "invalid_argument", "empty body");
  ExpectError(Call("POST", "/v1/pages?url=" + Q("https://e.com/") + "&fetched_at=yesterday", page,
                   "text/html"),
              400, "invalid_argument", "fetched_at");
  ExpectError(
      Call("POST", "/v1/pages?url=" + Q("https://e.com/") + "&status=99", page, "text/html"), 400,
      "invalid_argument", "status");
  ExpectError(
      Call("POST", "/v1/pages?url=" + Q("https://e.com/") + "&sweep=nope", page, "text/html"), 404,
      "not_found", "nope");
  ExpectError(
      Call("POST", "/v1/pages?url=" + Q("https://e.com/"), std::string(70000, 'x'), "text/html"),
      413, "payload_too_large", "max_body_bytes");
  ExpectError(Call("POST", "/v1/pages?url=" + Q("https://e.com/"), page, "image/png"), 415,
              "unsupported_media_type");
  ExpectError(Call("GET", "/v1/pages?url=" + Q("https://e.com/")), 405, "method_not_allowed");
  EXPECT_EQ(Call("DELETE", "/v1/stats").headers["allow"], "GET");
  ExpectError(Call("GET", "/v1/nothing"), 404, "not_found");
  ExpectError(Call("GET", "/v1/clusters/abc"), 400, "invalid_argument", "is not an integer in 1..18446744073709551615");
  ExpectError(Call("GET", "/v1/documents/999"), 404, "not_found");
  ExpectError(Call("GET", "/v1/urls?url=" + Q("https://never.example/")), 404, "not_found");
  ExpectError(Call("GET", "/v1/similar?url=" + Q("https://e.com/") + "&limit=0"), 400,
              "invalid_argument", "limit");
  ExpectError(Call("POST", "/v1/sweeps", "{not json", "application/json"), 400, "invalid_argument",
              "JSON");
  ExpectError(Call("POST", "/v1/sweeps", "{\"start\": 3}", "application/json"), 400,
              "invalid_argument", "name");
  ExpectError(
      Call("POST", "/v1/pages", "{\"url\": \"https://e.com/\", \"content\": \"x\"}\n{oops\n",
           "application/x-ndjson"),
      400, "invalid_argument", "line 2");
  // A 10,000-character URL fits the header limit (16 KiB) but not limits.max_url_bytes.
  const std::string long_url = "https://e.com/" + std::string(10000 - 14, 'a');
  ExpectError(Call("POST", "/v1/pages?url=" + long_url, page, "text/html"), 400, "invalid_argument",
              "max_url_bytes");
  // Past the header limit: 431, from the server itself.
  ExpectError(Call("GET", "/v1/urls?url=https://e.com/" + std::string(20000, 'a')), 431,
              "header_fields_too_large");
  {
    HttpClient client(daemon_->port());
    client.SendRaw("NOT HTTP AT ALL\r\n\r\n");
    ExpectError(client.ReadResponse(), 400, "bad_request", "malformed");
  }
  // The server still serves after all of that.
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
}

// A page is stored under its URL normalized (as the crawler normalizes links), and a query finds
// it under any spelling of that URL: one URL, one history, whichever way it came in.
TEST_F(ServeTest, PageUrlsAreNormalizedWhereverTheyComeIn) {
  json j = Post("HTTP://Site.Test:80/a/./b/../c?q=%7e#fragment", SyntheticPage(7));
  EXPECT_EQ(j["url"], "http://site.test/a/c?q=~") << j;
  EXPECT_EQ(j["verdict"], "new");
  // The same page under another spelling of the URL, in the same sweep: the same (URL, sweep,
  // content), so a replay of the first.
  const json again = Post("http://site.test/a/c?q=~", SyntheticPage(7));
  EXPECT_EQ(again["replayed"], true) << again;
  EXPECT_EQ(again["url_id"], j["url_id"]) << again;
  HttpResponse r = Call("GET", "/v1/urls?url=" + Q("http://SITE.test:80/a/c?q=%7E"));
  ASSERT_EQ(r.status, 200) << r.body;
  j = json::parse(r.body);
  EXPECT_EQ(j["url"], "http://site.test/a/c?q=~");
  EXPECT_EQ(j["versions"].size(), 1u) << j;
  EXPECT_EQ(Call("GET", "/v1/lost?url=" + Q("HTTP://site.test/a/c?q=~")).status, 200);
  EXPECT_EQ(Call("GET", "/v1/similar?url=" + Q("http://site.test/x/../a/c?q=~")).status, 200);
  // A line of a batch too.
  r = Call("POST", "/v1/pages",
           "{\"url\": \"https://Site.Test:443/n\", \"content\": \"<p>one two three four</p>\"}\n",
           "application/x-ndjson");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["results"][0]["url"], "https://site.test/n") << r.body;

  // URLs that do not parse, or that name no web page, are refused with the reason.
  const std::string page = SyntheticPage(8);
  ExpectError(Call("POST", "/v1/pages?url=" + Q("http://site.test:99999/"), page, "text/html"), 400,
              "invalid_argument", "bad port");
  ExpectError(Call("POST", "/v1/pages?url=" + Q("http://:80/"), page, "text/html"), 400,
              "invalid_argument", "empty host");
  ExpectError(Call("POST", "/v1/pages?url=" + Q("http://[::1/a"), page, "text/html"), 400,
              "invalid_argument", "IPv6");
  ExpectError(Call("POST", "/v1/pages?url=" + Q("ftp://site.test/f"), page, "text/html"), 400,
              "invalid_argument", "http, https or file");
  ExpectError(Call("GET", "/v1/urls?url=" + Q("gopher://site.test/")), 400, "invalid_argument",
              "http, https or file");
  // A parameter given twice is ambiguous: refused, not guessed.
  ExpectError(
      Call("POST", "/v1/pages?url=" + Q("http://site.test/1") + "&url=" + Q("http://site.test/2"),
           page, "text/html"),
      400, "invalid_argument", "\"url\" is given more than once");
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q("http://site.test/1")).status, 404);
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q("http://site.test/2")).status, 404);
}

// A body sent with Content-Encoding gzip or deflate is decoded before anything else sees it, with
// limits.max_body_bytes on what it decodes to; other codings are refused, not stored as a page.
TEST_F(ServeTest, GzipAndDeflateBodiesAreDecoded) {
  const std::string page = SyntheticPage(11);
  HttpResponse r = Call("POST", "/v1/pages?url=" + Q("https://e.com/gz"), Gzip(page), "text/html",
                        "Content-Encoding: gzip\r\n");
  ASSERT_EQ(r.status, 200) << r.body;
  const json first = json::parse(r.body);
  EXPECT_EQ(first["verdict"], "new");
  // The same bytes sent as they are: identical to the decoded page.
  json j = Post("https://e.com/plain", page);
  EXPECT_EQ(j["verdict"], "duplicate") << j;
  EXPECT_EQ(j["doc"], first["doc"]) << j;
  // A query's body too (decoded on the pool, then the query on the pool).
  r = Call("POST", "/v1/similar?threshold=0.9", Gzip(page), "text/html",
           "Content-Encoding: gzip\r\n");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["results"][0]["doc"], first["doc"]) << r.body;
  // A batch, zlib-wrapped deflate.
  const std::string line =
      "{\"url\": \"https://e.com/deflated\", \"content\": \"<p>one two three four five</p>\"}\n";
  std::string deflated(compressBound(line.size()), '\0');
  uLongf size = deflated.size();
  ASSERT_EQ(compress(reinterpret_cast<Bytef*>(deflated.data()), &size,
                     reinterpret_cast<const Bytef*>(line.data()), line.size()),
            Z_OK);
  deflated.resize(size);
  r = Call("POST", "/v1/pages", deflated, "application/x-ndjson", "Content-Encoding: Deflate\r\n");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["results"][0]["verdict"], "new") << r.body;

  ExpectError(Call("POST", "/v1/pages?url=" + Q("https://e.com/br"), page, "text/html",
                   "Content-Encoding: br\r\n"),
              415, "unsupported_media_type", "Content-Encoding br");
  ExpectError(Call("POST", "/v1/pages?url=" + Q("https://e.com/bad"), "not gzip at all",
                   "text/html", "Content-Encoding: gzip\r\n"),
              400, "invalid_argument", "Content-Encoding gzip: corrupt");
  // 1 MB of one byte gzips to ~1 KB, under the 64 KiB limit, and decodes past it.
  ExpectError(Call("POST", "/v1/pages?url=" + Q("https://e.com/bomb"),
                   Gzip(std::string(1 << 20, 'a')), "text/html", "Content-Encoding: gzip\r\n"),
              413, "payload_too_large", "decoded from gzip is over the limit of 65536");
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q("https://e.com/bomb")).status, 404);
}

// Bug: a gzip body of two members (`cat a.gz b.gz`, pigz) was stored as its
// first member only, with 200, and garbage after a member was accepted silently.
TEST_F(ServeTest, ConcatenatedGzipMembersAreStoredWhole) {
  const std::string page = SyntheticPage(12);
  const size_t half = page.size() / 2;
  const std::string two = Gzip(page.substr(0, half)) + Gzip(page.substr(half));
  HttpResponse r = Call("POST", "/v1/pages?url=" + Q("https://e.com/two"), two, "text/html",
                        "Content-Encoding: gzip\r\n");
  ASSERT_EQ(r.status, 200) << r.body;
  const json first = json::parse(r.body);
  EXPECT_EQ(first["verdict"], "new") << first;
  // The concatenated plain body is the same document: both parts were stored.
  json j = Post("https://e.com/plain-two", page);
  EXPECT_EQ(j["verdict"], "duplicate") << j;
  EXPECT_EQ(j["doc"], first["doc"]) << j;
  // Its first half alone is not.
  j = Post("https://e.com/half", page.substr(0, half));
  EXPECT_NE(j["doc"], first["doc"]) << j;

  // Garbage after a member: refused with the reason, nothing stored.
  ExpectError(Call("POST", "/v1/pages?url=" + Q("https://e.com/garbage"), Gzip(page) + "garbage",
                   "text/html", "Content-Encoding: gzip\r\n"),
              400, "invalid_argument", "Content-Encoding gzip: 7 bytes of trailing garbage");
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q("https://e.com/garbage")).status, 404);
  // A second member cut short: a truncated body, not a shorter page.
  const std::string second = Gzip(page.substr(half));
  ExpectError(Call("POST", "/v1/pages?url=" + Q("https://e.com/cut"),
                   Gzip(page.substr(0, half)) + second.substr(0, second.size() - 10), "text/html",
                   "Content-Encoding: gzip\r\n"),
              400, "invalid_argument", "compressed body truncated (gzip member 2)");
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q("https://e.com/cut")).status, 404);
}

// A batch line is one flat object, refused at its first nested value with the
// limit named, and a host with raw bytes that are not UTF-8 is refused while one in UTF-8 is
// stored, answered and found in its IDNA form.
TEST_F(ServeTest, BatchLineNestingIsBoundedAndNonUtf8HostsRefused) {
  std::string deep = "{\"url\": \"https://e.com/d\", \"content\": ";
  deep.append(20000, '[').append(20000, ']').append("}\n");
  ExpectError(
      Call("POST", "/v1/pages", "{\"url\": \"https://e.com/ok\", \"content\": \"x y\"}\n" + deep,
           "application/x-ndjson"),
      400, "invalid_argument",
      "line 2: \"content\" is an array: a batch line is one JSON object nested at most 1 "
      "level deep");
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q("https://e.com/ok")).status, 404);

  const std::string page = SyntheticPage(13);
  ExpectError(
      Call("POST", "/v1/pages?url=" + Q("http://b\xFC\x63her.example/p"), page, "text/html"), 400,
      "invalid_argument", "host has bytes that are not UTF-8");
  ExpectError(Call("POST", "/v1/pages",
                   "{\"url\": \"http://b\xFC\x63her.example/q\", \"content\": \"x\"}\n",
                   "application/x-ndjson"),
              400, "invalid_argument", "line 1: ");
  const json j = Post("http://B\xC3\x9C\x63her.example/p", page);
  EXPECT_EQ(j["url"], "http://xn--bcher-kva.example/p") << j;
  // What the answer says is what the store holds, found by it and by the Unicode spelling.
  for (const std::string& url : {std::string("http://xn--bcher-kva.example/p"),
                                 std::string("http://b\xC3\xBC\x63her.example/p")}) {
    HttpResponse r = Call("GET", "/v1/urls?url=" + Q(url));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(json::parse(r.body)["url"], "http://xn--bcher-kva.example/p") << r.body;
  }
}

// Bug: a host whose invalid bytes came percent-encoded ("a%c3%28.test", "a%00.test") was
// stored, although the same bytes written raw are refused. Both are refused alike, by a page
// posted alone or in a batch, and nothing is stored; an escaped valid host is stored decoded.
TEST_F(ServeTest, PercentEncodedInvalidHostBytesAreRefused) {
  const std::string page = SyntheticPage(14);
  const std::pair<const char*, const char*> cases[] = {
      {"https://a%c3%28.test/p", "host has bytes that are not UTF-8"},
      {"https://a%00.test/p", "bad character in host"},
  };
  for (const auto& [url, why] : cases) {
    ExpectError(Call("POST", "/v1/pages?url=" + Q(url), page, "text/html"), 400, "invalid_argument",
                why);
    ExpectError(
        Call("POST", "/v1/pages", std::string("{\"url\": \"") + url + "\", \"content\": \"x y\"}\n",
             "application/x-ndjson"),
        400, "invalid_argument", why);
    EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q(url)).status, 400) << url;
  }
  const json j = Post("https://ex%41mple.test/p", page);
  EXPECT_EQ(j["url"], "https://example.test/p") << j;
}

// Bug: the HTML report pages could be framed by another site, which could lay its own page over
// their links and the index's form. Every one forbids framing, with its CSP and X-Frame-Options.
TEST_F(ServeTest, ReportPagesCannotBeFramed) {
  Post("https://e.com/framed", SyntheticPage(15));
  for (const std::string& target :
       {std::string("/reports/"), std::string("/reports"), std::string("/reports/clusters"),
        std::string("/reports/identical"), "/reports/url?url=" + Q("https://e.com/framed"),
        std::string("/reports/history"), std::string("/v1/reports/history?format=html")}) {
    HttpResponse r = Call("GET", target);
    ASSERT_EQ(r.status, 200) << target << ": " << r.body;
    EXPECT_EQ(r.headers["content-type"], "text/html; charset=utf-8") << target;
    const std::string csp = r.headers["content-security-policy"];
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << target << ": " << csp;
    EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << target << ": " << csp;
    EXPECT_EQ(r.headers["x-frame-options"], "DENY") << target;
  }
}

// The anonymous part of a process's resident memory (RssAnon in /proc/PID/status), in bytes: the
// heap, without the store's mapped file.
uint64_t AnonymousRssBytes(pid_t pid) {
  const std::string status = ReadWholeFile("/proc/" + std::to_string(pid) + "/status");
  const size_t at = status.find("RssAnon:");
  if (at == std::string::npos) return 0;
  return std::strtoull(status.c_str() + at + 8, nullptr, 10) * 1024;  // kB
}

// Bug: the memory of large decoded gzip bodies stayed resident after their requests were
// answered (glibc kept the freed blocks in its arenas): ten posts of 12 MiB decoded left the
// daemon 62-82 MiB larger. It goes back to the system: measured, ~15 MiB larger (its caches).
TEST(ServeMemoryTest, DecodedBodiesDoNotStayResident) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
  constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
  constexpr bool kAddressSanitizer = false;
#endif
  if (kAddressSanitizer) {
    GTEST_SKIP() << "AddressSanitizer's allocator keeps freed blocks in its quarantine: glibc's "
                    "mapping threshold is not what decides the resident memory there";
  }
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", "[logging]\naccess_log = false\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  HttpClient warm(daemon.port());
  ASSERT_EQ(warm.Request("POST", "/v1/pages?url=" + Q("https://e.com/warm"), SyntheticPage(1),
                         "text/html")
                .status,
            200);
  const uint64_t before = AnonymousRssBytes(daemon.pid());
  ASSERT_GT(before, 0u);
  constexpr size_t kPageBytes = size_t{12} << 20;  // under limits.max_body_bytes, 16 MiB
  for (int i = 0; i < 10; ++i) {
    std::string page;
    for (int k = 0; page.size() < kPageBytes; ++k) page += SyntheticPage(i * 100000 + k);
    page.resize(kPageBytes);
    HttpClient client(daemon.port());
    const HttpResponse r =
        client.Request("POST", "/v1/pages?url=" + Q("https://e.com/big" + std::to_string(i)),
                       Gzip(page), "text/html", "Content-Encoding: gzip\r\n");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  // Less than three of the bodies: a page's copies are freed once its answer is out, which may
  // come a moment after the answer itself, so look again for a while.
  constexpr uint64_t kMaxGrowth = uint64_t{32} << 20;
  uint64_t after = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    after = AnonymousRssBytes(daemon.pid());
    if (after < before + kMaxGrowth) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_LT(after, before + kMaxGrowth)
      << "RssAnon " << (before >> 20) << " MiB before, " << (after >> 20) << " MiB after";
}

// A parameter a resource does not take is refused, naming what it takes: a crawler that sent
// `date` for `fetched_at` had its pages stored at the time of the post, silently.
TEST_F(ServeTest, UnknownParametersAreRefused) {
  const std::string page = SyntheticPage(12);
  ExpectError(Call("POST", "/v1/pages?url=" + Q("https://e.com/dated") + "&date=2024-01-01", page,
                   "text/html"),
              400, "invalid_argument",
              "unknown parameter \"date\": /v1/pages takes url, fetched_at, status, location, "
              "sweep");
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q("https://e.com/dated")).status, 404);
  ExpectError(
      Call("POST", "/v1/pages?fetched_at=2024-01-01",
           "{\"url\": \"https://e.com/l\", \"content\": \"one two\"}\n", "application/x-ndjson"),
      400, "invalid_argument", "unknown parameter \"fetched_at\": /v1/pages takes sweep");
  ExpectError(Call("GET", "/v1/similar?url=" + Q("https://e.com/x") + "&treshold=0.5"), 400,
              "invalid_argument",
              "unknown parameter \"treshold\": /v1/similar takes url, threshold, limit");
  ExpectError(Call("POST", "/v1/similar?url=" + Q("https://e.com/x"), page, "text/html"), 400,
              "invalid_argument", "/v1/similar takes threshold, limit");
  ExpectError(Call("GET", "/v1/stats?verbose=1"), 400, "invalid_argument",
              "unknown parameter \"verbose\": /v1/stats takes none");
  ExpectError(Call("GET", "/v1/lost?url=" + Q("https://e.com/x") + "&limit=3"), 400,
              "invalid_argument", "/v1/lost takes url");
  // The parameters a resource takes still work.
  EXPECT_EQ(Call("POST",
                 "/v1/pages?url=" + Q("https://e.com/dated") + "&fetched_at=2024-01-01&status=200",
                 page, "text/html")
                .status,
            200);
}

TEST_F(ServeTest, KeepAliveAndPipelining) {
  HttpClient client(daemon_->port());
  // Three requests in one write: answered in order on one connection.
  ASSERT_TRUE(
      client.SendRaw("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                     "GET /v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n"
                     "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(client.ReadResponse().status, 200);
  EXPECT_EQ(client.ReadResponse().status, 404);
  EXPECT_EQ(client.ReadResponse().status, 200);
  EXPECT_EQ(client.Request("GET", "/healthz").status, 200);
}

class SlowClientTest : public ServeTest {
  std::string Config() override { return "[server]\nread_timeout_ms = 300\n"; }
};

TEST_F(SlowClientTest, SlowClientIsCutOff) {
  HttpClient client(daemon_->port());
  ASSERT_TRUE(client.SendRaw("POST /v1/pages?url=https://e.com/ HTTP/1.1\r\nHost: x\r\n"));
  // Headers never finish: the read timeout closes the connection.
  EXPECT_TRUE(client.ClosedByPeerWithin(std::chrono::seconds(5)));
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
}

class QueueTest : public ServeTest {
  std::string Config() override { return "[ingest]\nqueue_pages = 1\nretry_after_s = 7\n"; }
};

TEST_F(QueueTest, FullQueueAnswers503WithRetryAfter) {
  const std::string batch = json{{"url", "https://e.com/1"}, {"content", "a b c"}}.dump() + "\n" +
                            json{{"url", "https://e.com/2"}, {"content", "d e f"}}.dump() + "\n";
  HttpResponse r = Call("POST", "/v1/pages", batch, "application/x-ndjson");
  ExpectError(r, 503, "resource_exhausted", "queue is full");
  EXPECT_EQ(r.headers["retry-after"], "7");
}

class AuthTest : public ServeTest {
  std::string Config() override {
    const std::string token_file = dir_.WriteSecret("token", "s3cret-token-0123\n");
    return "[auth]\ntoken_file = \"" + token_file + "\"\n";
  }
};

TEST_F(AuthTest, WritesNeedTheBearerToken) {
  const std::string page = SyntheticPage(3);
  const std::string target = "/v1/pages?url=" + Q("https://e.com/p");
  HttpResponse r = Call("POST", target, page, "text/html");
  ExpectError(r, 401, "unauthenticated", "Bearer");
  EXPECT_EQ(r.headers["www-authenticate"], "Bearer realm=\"shingled\"");
  ExpectError(Call("POST", target, page, "text/html", "Authorization: Bearer wrong\r\n"), 401,
              "unauthenticated", "wrong");
  EXPECT_EQ(
      Call("POST", target, page, "text/html", "Authorization: Bearer s3cret-token-0123\r\n").status,
      200);
  // Reads are open by default (protect_reads = false); probes and metrics always are.
  EXPECT_EQ(Call("GET", "/v1/urls?url=" + Q("https://e.com/p")).status, 200);
  EXPECT_EQ(Call("GET", "/metrics").status, 200);
}

TEST(ServeStartTest, BindFailureExitsNonZero) {
  TempDir dir;
  Daemon first(dir, dir.path() + "/store1");
  ASSERT_GT(first.port(), 0);
  Daemon second(dir, dir.path() + "/store2", "",
                {"--listen", "127.0.0.1:" + std::to_string(first.port())});
  EXPECT_EQ(second.port(), 0);
  const std::optional<int> code = second.Wait();
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  EXPECT_NE(second.log().find("cannot bind"), std::string::npos) << second.log();
}

TEST(ServeStartTest, BadConfigNamesKeyAndLine) {
  TempDir dir;
  Daemon d(dir, dir.path() + "/store", "[server]\nlisten = \"127.0.0.1:0\"\nmax_sesions = 3\n");
  EXPECT_EQ(d.Wait(), 2);
  EXPECT_NE(d.log().find(":3: server.max_sesions: unknown key"), std::string::npos) << d.log();
}

// The bug: GET /v1/clusters/999 answered "document 999 not found".
TEST_F(ServeTest, UnknownClusterIsNamedAsACluster) {
  ExpectError(Call("GET", "/v1/clusters/999"), 404, "not_found",
              "cluster 999 not found (no such cluster or document)");
}

}  // namespace
}  // namespace shingled::testing
