// POST /v1/pages with a WARC body, against the real daemon on loopback: plain and gzip WARCs
// streamed into the store, a revisit, a damaged record reported with its offset while the rest
// goes in, and bodies over limits.max_warc_body_bytes (413).
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "crawler/warc.h"
#include "tests/crawler/gzip.h"
#include "tests/daemon/daemon_harness.h"
#include "tests/daemon/run_shingled.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

constexpr int64_t kDate = 1709294400;  // 2024-03-01T12:00:00Z

class StringSink final : public crawler::ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status Write(std::string_view bytes) override {
    out_->append(bytes);
    return OkStatus();
  }
  Status Close() override { return OkStatus(); }

 private:
  std::string* out_;
};

// Builds a WARC file in memory the way a crawler writes it.
class WarcBuilder {
 public:
  explicit WarcBuilder(bool gzip) : writer_(std::make_unique<StringSink>(&bytes_), gzip) {
    EXPECT_TRUE(writer_.WriteWarcinfo(kDate, {{"software", "shingled test"}}).ok());
  }
  // Returns the offset of the record in the file.
  uint64_t Response(const std::string& url, int64_t date, int status, const std::string& body) {
    const uint64_t at = bytes_.size();
    EXPECT_TRUE(
        writer_.WriteResponse(url, date, status, {{"Content-Type", "text/html"}}, body).ok());
    return at;
  }
  void Response(const std::string& url, int64_t date, int status,
                const crawler::HeaderList& headers, const std::string& body) {
    EXPECT_TRUE(writer_.WriteResponse(url, date, status, headers, body).ok());
  }
  uint64_t Revisit(const std::string& url, int64_t date, const std::string& refers_to,
                   const std::string& status_line = "HTTP/1.1 200 OK") {
    const uint64_t at = bytes_.size();
    EXPECT_TRUE(writer_
                    .WriteRecord("revisit", date,
                                 {{"WARC-Target-URI", url},
                                  {"WARC-Refers-To-Target-URI", refers_to},
                                  {"WARC-Profile",
                                   "http://netpreserve.org/warc/1.1/revisit/"
                                   "identical-payload-digest"},
                                  {"Content-Type", "application/http; msgtype=response"}},
                                 status_line + "\r\nContent-Type: text/html\r\n\r\n")
                    .ok());
    return at;
  }
  void Request(const std::string& url, int64_t date) {
    EXPECT_TRUE(writer_
                    .WriteRecord("request", date, {{"WARC-Target-URI", url}},
                                 "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
                    .ok());
  }
  void Resource(const std::string& url, const std::string& body) {
    EXPECT_TRUE(writer_
                    .WriteRecord("resource", kDate,
                                 {{"WARC-Target-URI", url}, {"Content-Type", "text/plain"}}, body)
                    .ok());
  }
  void Raw(const std::string& bytes) { bytes_ += bytes; }
  uint64_t size() const { return bytes_.size(); }
  std::string Take() {
    EXPECT_TRUE(writer_.Close().ok());
    return std::move(bytes_);
  }

 private:
  std::string bytes_;
  crawler::WarcWriter writer_;
};

class WarcPostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The page limit is far below the WARCs posted here: a WARC has its own, larger limit.
    daemon_ = std::make_unique<Daemon>(
        dir_, dir_.path() + "/store",
        "[limits]\nmax_body_bytes = 65536\nmax_warc_body_bytes = 8388608\n");
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
  }
  json PostWarc(HttpClient& client, const std::string& sweep, const std::string& body,
                const std::string& type = "application/warc", int expect = 200) {
    HttpResponse r = client.Request("POST", "/v1/pages?sweep=" + sweep, body, type);
    EXPECT_EQ(r.status, expect) << r.body;
    json j = json::parse(r.body, nullptr, false);
    EXPECT_TRUE(j.is_object()) << r.body;
    return j;
  }
  json Get(const std::string& target) {
    HttpClient client(daemon_->port());
    HttpResponse r = client.Request("GET", target);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false);
  }
  void OpenSweep(const std::string& name) {
    HttpClient client(daemon_->port());
    HttpResponse r =
        client.Request("POST", "/v1/sweeps", "{\"name\": \"" + name + "\"}", "application/json");
    ASSERT_EQ(r.status, 200) << r.body;
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
};

// 40 pages, a copy of one (identical bytes), a lexical copy of another (other bytes, same text: a
// document of its own in that page's cluster), a 404, request records, and a revisit of the first
// page a day later: every verdict arrives in one answer, after the pages are durable.
std::string SiteWarc(bool gzip) {
  WarcBuilder b(gzip);
  for (int i = 0; i < 40; ++i) {
    b.Request("http://site.test/p" + std::to_string(i), kDate + i);
    b.Response("http://site.test/p" + std::to_string(i), kDate + i, 200, SyntheticPage(i));
  }
  b.Response("http://site.test/copy", kDate + 50, 200, SyntheticPage(3));
  b.Response("http://site.test/missing", kDate + 51, 404, "not found");
  std::string near = SyntheticPage(5);
  near.replace(0, 6, "<html>\n");
  b.Response("http://site.test/near", kDate + 52, 200, near);
  b.Revisit("http://site.test/p0", kDate + 86400, "http://site.test/p0");
  return b.Take();
}

TEST_F(WarcPostTest, PlainWarcGoesInWithEveryVerdictAndARevisit) {
  OpenSweep("w1");
  const std::string warc = SiteWarc(false);
  ASSERT_GT(warc.size(), 65536u);  // over the page limit, under the WARC limit
  HttpClient client(daemon_->port());
  json j = PostWarc(client, "w1", warc);
  EXPECT_EQ(j["pages"], 44) << j;
  EXPECT_EQ(j["new"], 40) << j;
  EXPECT_EQ(j["duplicate"], 2) << j;
  EXPECT_EQ(j["unchanged"], 1) << j;  // the revisit
  EXPECT_EQ(j["near_duplicate"], 0) << j;
  EXPECT_EQ(j["gone"], 1) << j;
  EXPECT_EQ(j["records"], 1 + 40 * 2 + 4) << j;  // warcinfo, requests, responses, revisit
  EXPECT_EQ(j["errors"], json::array()) << j;

  // The connection is reused after a streamed body.
  HttpResponse stats = client.Request("GET", "/v1/stats");
  ASSERT_EQ(stats.status, 200) << stats.body;
  EXPECT_EQ(json::parse(stats.body)["documents"], 41);
  EXPECT_EQ(json::parse(stats.body)["largest_cluster"], 2);  // p5 and its lexical copy
  HttpResponse metrics = client.Request("GET", "/metrics");
  EXPECT_NE(metrics.body.find("\nshingled_store_largest_cluster_documents 2\n"), std::string::npos)
      << metrics.body;

  // The response and its revisit: two versions of one document, with their WARC-Dates.
  json history = Get("/v1/urls?url=" + Q("http://site.test/p0"));
  ASSERT_EQ(history["versions"].size(), 2u) << history;
  EXPECT_EQ(history["versions"][0]["doc"], history["versions"][1]["doc"]);
  EXPECT_EQ(history["versions"][0]["verdict"], "new");
  EXPECT_EQ(history["versions"][1]["verdict"], "unchanged");
  EXPECT_EQ(history["versions"][1]["date"], "2024-03-02T12:00:00Z");

  // The same WARC again: replays, nothing new.
  j = PostWarc(client, "w1", warc);
  EXPECT_EQ(j["pages"], 44) << j;
  EXPECT_EQ(Get("/v1/stats")["versions"], 44);
}

// A record's WARC-Target-URI (and a revisit's WARC-Refers-To-Target-URI) is stored normalized,
// as a posted page's URL is: one URL whichever way its versions came in.
TEST_F(WarcPostTest, TargetUrisAreStoredNormalized) {
  OpenSweep("w1");
  WarcBuilder b(false);
  b.Response("HTTP://Site.Test:80/x/./y#top", kDate, 200, SyntheticPage(1));
  b.Revisit("http://site.test/x/y", kDate + 86400, "http://SITE.TEST/x/y");
  HttpClient client(daemon_->port());
  json j = PostWarc(client, "w1", b.Take());
  EXPECT_EQ(j["pages"], 2) << j;
  EXPECT_EQ(j["errors"], json::array()) << j;
  json history = Get("/v1/urls?url=" + Q("http://site.test/x/y"));
  ASSERT_EQ(history["versions"].size(), 2u) << history;
  EXPECT_EQ(history["versions"][0]["verdict"], "new");
  EXPECT_EQ(history["versions"][1]["verdict"], "unchanged");
  // A page posted later under yet another spelling joins the same history.
  HttpResponse r = client.Request("POST", "/v1/pages?sweep=w1&url=" + Q("http://site.test:80/x/y"),
                                  SyntheticPage(1), "text/html");
  ASSERT_EQ(r.status, 200) << r.body;
  j = json::parse(r.body);
  EXPECT_EQ(j["url"], "http://site.test/x/y") << j;
  EXPECT_EQ(j["doc"], history["versions"][0]["doc"]) << j;
  history = Get("/v1/urls?url=" + Q("HTTP://SITE.TEST/x/y"));
  ASSERT_GE(history["versions"].size(), 2u) << history;
  for (const json& v : history["versions"]) EXPECT_EQ(v["doc"], j["doc"]) << history;
}

// A WARC upload takes `sweep` alone (its records carry the URLs and dates): a parameter meant
// for a single page is refused, before any record is read, not ignored.
TEST_F(WarcPostTest, ParametersOtherThanSweepAreRefused) {
  OpenSweep("w1");
  WarcBuilder b(false);
  b.Response("http://site.test/p", kDate, 200, SyntheticPage(2));
  HttpClient client(daemon_->port());
  HttpResponse r = client.Request("POST", "/v1/pages?sweep=w1&fetched_at=2024-01-01", b.Take(),
                                  "application/warc");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(json::parse(r.body)["error"]["message"],
            "unknown parameter \"fetched_at\": /v1/pages takes sweep")
      << r.body;
  HttpClient other(daemon_->port());
  EXPECT_EQ(other.Request("GET", "/v1/urls?url=" + Q("http://site.test/p")).status, 404);
}

TEST_F(WarcPostTest, GzipWarcIsDetectedWhateverItsType) {
  OpenSweep("w1");
  const std::string warc = SiteWarc(true);
  ASSERT_EQ(static_cast<unsigned char>(warc[0]), 0x1f);
  HttpClient client(daemon_->port());
  json j = PostWarc(client, "w1", warc, "application/warc+gzip");
  EXPECT_EQ(j["pages"], 44) << j;
  EXPECT_EQ(j["new"], 40) << j;
  EXPECT_EQ(j["unchanged"], 1) << j;
  // Next sweep, the same file as application/warc: the reader finds the gzip members itself.
  OpenSweep("w2");
  j = PostWarc(client, "w2", warc, "application/warc");
  EXPECT_EQ(j["pages"], 44) << j;
  EXPECT_EQ(j["unchanged"], 43) << j;  // every live page is its URL's last content again
  EXPECT_EQ(j["gone"], 1) << j;
  EXPECT_EQ(j["errors"], json::array()) << j;
  EXPECT_EQ(Get("/v1/stats")["documents"], 41);
}

TEST_F(WarcPostTest, DamagedRecordIsReportedWithItsOffsetAndTheRestGoesIn) {
  OpenSweep("w1");
  WarcBuilder b(false);
  b.Response("http://site.test/a", kDate, 200, SyntheticPage(1));
  const uint64_t damaged = b.size();
  // A record without Content-Length, then junk: the reader resynchronizes at the next record.
  b.Raw("WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://site.test/b\r\n\r\nxx\r\n\r\n");
  const uint64_t next_good = b.size();
  b.Response("http://site.test/c", kDate, 200, SyntheticPage(2));
  // A revisit of a URL the store never saw fails that record only.
  const uint64_t orphan = b.Revisit("http://site.test/d", kDate, "http://elsewhere.test/never");
  b.Response("http://site.test/e", kDate, 200, SyntheticPage(3));
  HttpClient client(daemon_->port());
  json j = PostWarc(client, "w1", b.Take());
  EXPECT_EQ(j["pages"], 3) << j;
  EXPECT_EQ(j["new"], 3) << j;
  // The bad record, then its unframed block (skipped up to the next record), then the revisit.
  ASSERT_EQ(j["errors"].size(), 3u) << j;
  EXPECT_EQ(j["errors"][0]["offset"], damaged) << j;
  EXPECT_EQ(j["errors"][0]["message"], "missing or bad Content-Length") << j;
  EXPECT_GT(j["errors"][1]["offset"], damaged) << j;
  EXPECT_LT(j["errors"][1]["offset"], next_good) << j;
  EXPECT_EQ(j["errors"][2]["offset"], orphan) << j;
  EXPECT_EQ(j["errors"][2]["url"], "http://site.test/d") << j;
  EXPECT_EQ(j["errors"][2]["message"],
            "revisit of http://elsewhere.test/never: the store has no document for this URL (the "
            "content it refers to was never ingested)")
      << j;
  EXPECT_EQ(Get("/v1/urls?url=" + Q("http://site.test/e"))["versions"].size(), 1u);
}

// The WARC of InvalidTargetIsAnErrorOfItsRecord: two http(s) records whose targets are not valid
// URLs around good ones, and wget's metadata record (not a page); `offsets` gets the bad ones'.
std::string InvalidTargetWarc(std::vector<uint64_t>* offsets) {
  WarcBuilder b(false);
  b.Response("http://site.test/a", kDate, 200, SyntheticPage(1));
  offsets->push_back(b.Response("http://b\xFC\x63her.test/p", kDate, 200, SyntheticPage(2)));
  offsets->push_back(b.Response("https://a%c3%28.test/p", kDate, 200, SyntheticPage(3)));
  b.Resource("metadata://gnu.org/software/wget/warc/MANIFEST.txt", "manifest");
  b.Response("http://site.test/c", kDate, 200, SyntheticPage(4));
  return b.Take();
}

// Bug: a record whose http(s) target is not a valid URL (a host that is not UTF-8, raw or
// percent-encoded) was dropped with no error entry, although the page in it was not stored. It
// is an error of its record, with its offset, URL and reason; only a target of another scheme
// (wget's metadata) is skipped, and counted.
TEST_F(WarcPostTest, InvalidTargetIsAnErrorOfItsRecord) {
  OpenSweep("w1");
  std::vector<uint64_t> offsets;
  const std::string warc = InvalidTargetWarc(&offsets);
  HttpClient client(daemon_->port());
  const json j = PostWarc(client, "w1", warc);
  EXPECT_EQ(j["pages"], 2) << j;
  EXPECT_EQ(j["records"], 6) << j;  // warcinfo, a, two bad, metadata, c
  EXPECT_EQ(j["skipped"], 1) << j;  // the metadata record
  ASSERT_EQ(j["errors"].size(), 2u) << j;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(j["errors"][i]["offset"], offsets[i]) << j;
    EXPECT_TRUE(j["errors"][i]["url"].is_string()) << j;
    EXPECT_NE(
        j["errors"][i]["message"].get<std::string>().find("host has bytes that are not UTF-8"),
        std::string::npos)
        << j;
  }
  EXPECT_EQ(Get("/v1/urls?url=" + Q("http://site.test/c"))["versions"].size(), 1u);
}

// The same WARC through `shingled ingest`: each bad record is an error line naming its offset,
// the skipped one is counted, and the run says it had errors.
TEST(WarcIngestTest, InvalidTargetIsAnErrorOfItsRecord) {
  TempDir dir;
  std::vector<uint64_t> offsets;
  const std::string file = dir.Write("bad-targets.warc", InvalidTargetWarc(&offsets));
  std::string err;
  const CliResult r =
      RunShingled("ingest " + file + " --store " + dir.path() + "/store --sweep w1 --json", &err);
  EXPECT_EQ(r.exit_code, 1) << r.out << err;
  const json summary = json::parse(r.out, nullptr, false);
  EXPECT_EQ(summary["pages"], 2) << r.out;
  EXPECT_EQ(summary["errors"], 2) << r.out;
  EXPECT_EQ(summary["warc_records_skipped"], 1) << r.out;
  for (const uint64_t offset : offsets) {
    const std::string line = file + ": offset " + std::to_string(offset) + ": bad URL";
    EXPECT_NE(err.find(line), std::string::npos) << line << "\n" << err;
  }
  EXPECT_NE(err.find("host has bytes that are not UTF-8"), std::string::npos) << err;
}

// An upload in which no WARC record was found answered 200 with zero pages, as
// if an empty crawl had gone in.
TEST_F(WarcPostTest, AllGarbageWarcIsNotAnsweredOk) {
  OpenSweep("w1");
  HttpClient client(daemon_->port());
  std::string garbage;
  for (int i = 0; i < 100; ++i) garbage += "this is not a WARC record\r\n";
  json j = PostWarc(client, "w1", garbage, "application/warc", 422);
  EXPECT_EQ(j["error"]["code"], "no_warc_records") << j;
  EXPECT_NE(j["error"]["message"].get<std::string>().find("no WARC record was read"),
            std::string::npos)
      << j;
  EXPECT_EQ(j["records"], 0) << j;
  EXPECT_EQ(j["pages"], 0) << j;
  ASSERT_FALSE(j["errors"].empty()) << j;
  EXPECT_EQ(j["errors"][0]["offset"], 0) << j;
  // gzip that holds no WARC, and an empty body, likewise.
  j = PostWarc(client, "w1", shingled::testing::Gzip(garbage), "application/warc+gzip", 422);
  EXPECT_EQ(j["error"]["code"], "no_warc_records") << j;
  j = PostWarc(client, "w1", "", "application/warc", 422);
  EXPECT_EQ(j["error"]["code"], "no_warc_records") << j;
  EXPECT_EQ(Get("/v1/stats")["documents"], 0);
}

// Concatenated gzip members, for WARC files: a .warc.gz is a sequence of members, one per record. Garbage
// after a record's member is an error at its offset in the answer, not dropped silently; the
// records around it go in.
TEST_F(WarcPostTest, GzipRecordMemberFollowedByGarbageIsAnError) {
  OpenSweep("w1");
  WarcBuilder b(true);
  b.Response("http://site.test/a", kDate, 200, SyntheticPage(1));
  const uint64_t garbage_at = b.size();
  b.Raw("garbage after a member");
  b.Response("http://site.test/b", kDate, 200, SyntheticPage(2));
  const uint64_t tail_at = b.size();
  b.Raw("and at the end");
  HttpClient client(daemon_->port());
  json j = PostWarc(client, "w1", b.Take(), "application/warc+gzip");
  EXPECT_EQ(j["pages"], 2) << j;
  ASSERT_EQ(j["errors"].size(), 2u) << j;
  EXPECT_EQ(j["errors"][0]["offset"], garbage_at) << j;
  EXPECT_EQ(j["errors"][0]["message"], "junk between gzip members") << j;
  EXPECT_EQ(j["errors"][1]["offset"], tail_at) << j;
  EXPECT_EQ(j["errors"][1]["message"], "junk after the last gzip member") << j;
}

// Two crawls of a site: in the second, /a answers 500, /b redirects to /c (a relative
// Location), whose content is /b's, and /d answers 304 (a revisit record, as Heritrix writes
// one for a server-not-modified answer).
std::string FirstCrawlWarc() {
  WarcBuilder b(false);
  b.Response("http://site.test/a", kDate, 200, SyntheticPage(1));
  b.Response("http://site.test/b", kDate, 200, SyntheticPage(2));
  b.Response("http://site.test/d", kDate, 200, SyntheticPage(3));
  return b.Take();
}
std::string SecondCrawlWarc() {
  WarcBuilder b(false);
  b.Response("http://site.test/a", kDate + 86400, 500, {{"Content-Type", "text/html"}},
             "<html><body>Internal Server Error</body></html>");
  b.Response("http://site.test/b", kDate + 86400, 301,
             {{"Location", "c?x=%7e#frag"}, {"Content-Type", "text/html"}},
             "<html><body>Moved Permanently</body></html>");
  b.Response("http://site.test/c?x=~", kDate + 86400, 200, SyntheticPage(2));
  b.Revisit("http://site.test/d", kDate + 86400, "http://site.test/d", "HTTP/1.1 304 Not Modified");
  return b.Take();
}
// What both crawls leave, whichever way the WARCs came in (`history` is /v1/urls' answer).
void ExpectErrorAndRedirectRecorded(const std::function<json(const std::string& url)>& history) {
  const json a = history("http://site.test/a")["versions"];
  ASSERT_EQ(a.size(), 2u) << a;
  EXPECT_EQ(a[1]["verdict"], "failed");
  EXPECT_EQ(a[1]["status"], 500);
  EXPECT_EQ(a[1]["doc"], a[0]["doc"]);  // the last good version stays live
  EXPECT_EQ(a[1]["date"], "2024-03-02T12:00:00Z");
  const json b = history("http://site.test/b")["versions"];
  ASSERT_EQ(b.size(), 2u) << b;
  EXPECT_EQ(b[1]["verdict"], "redirect");
  EXPECT_EQ(b[1]["status"], 301);
  EXPECT_EQ(b[1]["doc"], 0);
  EXPECT_EQ(b[1]["location"], "http://site.test/c?x=~");
  const json c = history("http://site.test/c?x=~")["versions"];
  ASSERT_EQ(c.size(), 1u) << c;
  EXPECT_EQ(c[0]["doc"], b[0]["doc"]);
  const json d = history("http://site.test/d")["versions"];
  ASSERT_EQ(d.size(), 2u) << d;
  EXPECT_EQ(d[1]["verdict"], "unchanged");
  EXPECT_EQ(d[1]["doc"], d[0]["doc"]);
}

// Bug: a WARC's 5xx and 3xx responses were skipped, so the sweep did not see the
// URLs and a close would record them gone.
TEST_F(WarcPostTest, ServerErrorAndRedirectRecordsKeepTheLastGoodVersion) {
  OpenSweep("w1");
  HttpClient client(daemon_->port());
  json j = PostWarc(client, "w1", FirstCrawlWarc());
  EXPECT_EQ(j["new"], 3) << j;
  OpenSweep("w2");
  j = PostWarc(client, "w2", SecondCrawlWarc());
  EXPECT_EQ(j["pages"], 4) << j;
  EXPECT_EQ(j["unchanged"], 1) << j;
  EXPECT_EQ(j["failed"], 1) << j;
  EXPECT_EQ(j["redirect"], 1) << j;
  EXPECT_EQ(j["duplicate"], 1) << j;
  EXPECT_EQ(j["skipped"], 0) << j;
  EXPECT_EQ(j["errors"], json::array()) << j;
  EXPECT_EQ(Get("/v1/stats")["documents"], 3);
  ExpectErrorAndRedirectRecorded(
      [&](const std::string& url) { return Get("/v1/urls?url=" + Q(url)); });
  HttpResponse closed = client.Request("POST", "/v1/sweeps/w2/close", "{}", "application/json");
  ASSERT_EQ(closed.status, 200) << closed.body;
  EXPECT_EQ(json::parse(closed.body)["gone"], 0) << closed.body;
}

// The same WARCs through `shingled ingest`: the same versions.
TEST(WarcIngestTest, ServerErrorAndRedirectRecordsKeepTheLastGoodVersion) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  const std::string first = dir.Write("first.warc", FirstCrawlWarc());
  const std::string second = dir.Write("second.warc", SecondCrawlWarc());
  CliResult r = RunShingled("ingest " + first + " --store " + store + " --sweep w1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = RunShingled("ingest " + second + " --store " + store + " --sweep w2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json summary = json::parse(r.out, nullptr, false);
  EXPECT_EQ(summary["pages"], 4) << r.out;
  EXPECT_EQ(summary["unchanged"], 1) << r.out;
  EXPECT_EQ(summary["failed"], 1) << r.out;
  EXPECT_EQ(summary["redirect"], 1) << r.out;
  EXPECT_EQ(summary["duplicate"], 1) << r.out;
  EXPECT_EQ(summary["warc_records_skipped"], 0) << r.out;
  ExpectErrorAndRedirectRecorded([&](const std::string& url) {
    CliResult h = RunShingled("history '" + url + "' --store " + store + " --json");
    EXPECT_EQ(h.exit_code, 0) << url << h.out;
    return json::parse(h.out, nullptr, false);
  });
  r = RunShingled("sweep close w2 --store " + store + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out, nullptr, false)["gone"], 0) << r.out;
  EXPECT_EQ(RunShingled("check --store " + store).exit_code, 0);
}

TEST_F(WarcPostTest, SweepParameterAndTypeErrors) {
  HttpClient client(daemon_->port());
  HttpResponse r =
      client.Request("POST", "/v1/pages?sweep=nope", SiteWarc(false), "application/warc");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_NE(r.body.find("no sweep named"), std::string::npos) << r.body;
}

// A WARC far larger than the pipe between the network and the reader (1 MiB): the session waits
// for the reader instead of holding the body.
TEST_F(WarcPostTest, LargeWarcStreamsThroughTheBoundedPipe) {
  OpenSweep("big");
  WarcBuilder b(false);
  for (int i = 0; i < 1200; ++i) {
    b.Response("http://big.test/" + std::to_string(i), kDate, 200, SyntheticPage(1000 + i));
  }
  const std::string warc = b.Take();
  ASSERT_GT(warc.size(), 2u << 20);
  HttpClient client(daemon_->port());
  json j = PostWarc(client, "big", warc);
  EXPECT_EQ(j["pages"], 1200) << j;
  EXPECT_EQ(j["errors"], json::array()) << j;
  EXPECT_EQ(Get("/v1/stats")["documents"], 1200);
}

class WarcLimitTest : public WarcPostTest {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<Daemon>(dir_, dir_.path() + "/store",
                                       "[limits]\nmax_warc_body_bytes = 65536\n");
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
  }
};

TEST_F(WarcLimitTest, TooLargeWarcIs413) {
  OpenSweep("w1");
  const std::string warc = SiteWarc(false);
  ASSERT_GT(warc.size(), 65536u);
  // With a Content-Length: refused before the body is read; nothing stored.
  {
    HttpClient client(daemon_->port());
    json j = PostWarc(client, "w1", warc, "application/warc", 413);
    EXPECT_EQ(j["error"]["code"], "payload_too_large");
    EXPECT_NE(j["error"]["message"].get<std::string>().find("limits.max_warc_body_bytes"),
              std::string::npos)
        << j;
    EXPECT_EQ(Get("/v1/stats")["documents"], 0);
  }
  // Chunked, without a length: cut at the limit; the records before it are stored and counted.
  {
    HttpClient client(daemon_->port());
    std::string req =
        "POST /v1/pages?sweep=w1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/warc\r\n"
        "Transfer-Encoding: chunked\r\n\r\n";
    for (size_t at = 0; at < warc.size(); at += 8192) {
      const std::string piece = warc.substr(at, 8192);
      char size[32];
      std::snprintf(size, sizeof(size), "%zx\r\n", piece.size());
      req += size + piece + "\r\n";
    }
    req += "0\r\n\r\n";
    std::thread sender([&] { client.SendRaw(req); });  // the server may stop reading midway
    HttpResponse r = client.ReadResponse();
    sender.join();
    EXPECT_EQ(r.status, 413) << r.body;
    json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.body;
    EXPECT_EQ(j["error"]["code"], "payload_too_large");
    EXPECT_GT(j["pages"].get<int>(), 10) << j;  // ~2.5 KB per page within 64 KiB
    EXPECT_LT(j["pages"].get<int>(), 44) << j;
    EXPECT_EQ(Get("/v1/stats")["documents"], j["pages"]);
  }
}

class WarcShutdownTest : public WarcPostTest {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<Daemon>(dir_, dir_.path() + "/store",
                                       "[server]\nshutdown_deadline_ms = 1000\n");
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
  }
};

// SIGTERM while a WARC is still arriving: the records read so far are stored and the upload is
// answered (503, with what went in) before the daemon exits 0.
TEST_F(WarcShutdownTest, UploadInFlightIsAnsweredWhenTheServerStops) {
  OpenSweep("w1");
  WarcBuilder b(false);
  for (int i = 0; i < 5; ++i) {
    b.Response("http://slow.test/" + std::to_string(i), kDate, 200, SyntheticPage(i));
  }
  const std::string first_records = b.Take();
  HttpClient upload(daemon_->port());
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", first_records.size());
  ASSERT_TRUE(upload.SendRaw(
      "POST /v1/pages?sweep=w1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/warc\r\n"
      "Transfer-Encoding: chunked\r\n\r\n" +
      std::string(size) + first_records + "\r\n"));
  // The records are read and stored as they arrive, before the body ends.
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  while (Get("/v1/stats")["documents"] != 5 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll interval
  }
  ASSERT_EQ(Get("/v1/stats")["documents"], 5);
  daemon_->Signal(SIGTERM);
  HttpResponse r = upload.ReadResponse();
  EXPECT_EQ(r.status, 503) << r.body;
  json j = json::parse(r.body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.body;
  EXPECT_EQ(j["error"]["code"], "unavailable");
  EXPECT_EQ(j["pages"], 5) << j;
  EXPECT_EQ(daemon_->Wait(), 0) << daemon_->log();
}

}  // namespace
}  // namespace shingled::testing
