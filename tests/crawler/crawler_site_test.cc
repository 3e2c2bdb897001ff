// The crawler with the real CurlFetcher over a site served on 127.0.0.1 by the test, on a fake
// Clock (politeness waits cost no time). "localhost" on the same port is a second host, out of
// scope; CURLOPT_RESOLVE pins it to 127.0.0.1 so no lookup leaves the machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "crawler/crawler.h"
#include "crawler/curl_fetcher.h"
#include "crawler/warc.h"
#include "tests/crawler/gzip.h"
#include "tests/crawler/test_server.h"

namespace shingled::crawler {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;

using ::shingled::testing::Gzip;

// "café" in windows-1252, and "日本語" in Shift_JIS.
const std::string kCp1252Body = "<html><body>caf\xe9 cr\xe8me</body></html>";
const std::string kSjisBody =
    "<html><head><meta charset='Shift_JIS'></head><body>\x93\xfa\x96\x7b\x8c\xea</body></html>";

class CrawlerSiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Page("/robots.txt", "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n",
                 "text/plain");
    ASSERT_TRUE(server_.Start());
    const std::string port = std::to_string(server_.port());
    server_.Page("/",
                 "<html><body>"
                 "<a href='a.html#section'>a</a> <a href='dir/./sub/../b.html'>b</a>"
                 "<a href='/dir/../a.html'>a again</a>"
                 "<a href='/private/secret.html'>disallowed</a>"
                 "<a href='http://localhost:" +
                     port +
                     "/outside.html'>outside</a>"
                     "<a href='/r1'>redirect chain</a> <a href='/loop-a'>loop</a>"
                     "<a href='/missing.html'>404</a> <a href='/error.html'>500</a>"
                     "<a href='/slow.html'>slow</a> <a href='/endless.html'>endless</a>"
                     "<a href='/gzip.html'>gzip</a> <a href='/cp1252.html'>1252</a>"
                     "<a href='/sjis.html'>sjis</a> <a href='/nofollow.html' rel=nofollow>nf</a>"
                     "<a href='/to-private'>moved to a disallowed path</a>"
                     "<a href='/to-outside'>moved off the host</a>"
                     "</body></html>");
    server_.Page("/a.html", "<html><body>page a</body></html>");
    server_.Page("/dir/b.html",
                 "<html><head><link rel=canonical href='/a.html'></head><body>b</body></html>");
    server_.Page("/private/secret.html", "secret");
    server_.Page("/outside.html", "outside");
    server_.Page("/nofollow.html", "nofollow");
    server_.Redirect("/r1", "/r2", 301);
    server_.Redirect("/r2", "/target.html", 302);
    server_.Page("/target.html", "<html><body>target</body></html>");
    server_.Redirect("/loop-a", "/loop-b");
    server_.Redirect("/loop-b", "/loop-a");
    server_.Redirect("/to-private", "/private/moved.html");
    server_.Redirect("/to-outside", "http://localhost:" + port + "/outside.html");
    server_.Page("/error.html", "oops", "text/html", 500);
    server_.Route("/slow.html", [](const testing::TestRequest&) {
      testing::TestResponse r;
      r.delay = milliseconds(3000);
      r.headers = {{"Content-Type", "text/html"}};
      r.body = "slow";
      return r;
    });
    server_.Route("/endless.html", [](const testing::TestRequest&) {
      testing::TestResponse r;
      r.headers = {{"Content-Type", "text/html"}};
      r.stream = [](const std::function<bool(const std::string&)>& write) {
        const std::string piece(16384, 'e');
        while (write(piece)) {
        }
      };
      return r;
    });
    server_.Route("/gzip.html", [](const testing::TestRequest&) {
      testing::TestResponse r;
      r.headers = {{"Content-Type", "text/html"}, {"Content-Encoding", "gzip"}};
      r.body = Gzip("<html><body>compressed page</body></html>");
      return r;
    });
    server_.Page("/cp1252.html", kCp1252Body, "text/html; charset=windows-1252");
    server_.Page("/sjis.html", kSjisBody, "text/html");
  }

  CurlFetcherOptions FetcherOptions() const {
    CurlFetcherOptions options;
    options.allow_private_addresses = true;  // the test site is on loopback
    options.total_timeout = milliseconds(500);
    options.max_body_bytes = 256 << 10;
    options.resolve = {"localhost:" + std::to_string(server_.port()) + ":127.0.0.1"};
    return options;
  }

  testing::TestServer server_;
};

TEST_F(CrawlerSiteTest, CrawlsTheSite) {
  auto fetcher = CurlFetcher::Create(FetcherOptions());
  ASSERT_TRUE(fetcher.ok());
  FakeClock clock;
  CrawlerOptions options;
  options.seeds = {server_.Url("/")};
  options.per_host_delay = milliseconds(1000);
  Crawler crawler(options, fetcher->get(), &clock);
  std::map<std::string, CrawledPage> pages;
  std::vector<std::chrono::system_clock::time_point> dates;
  ASSERT_TRUE(crawler
                  .Run({},
                       [&](CrawledPage page) {
                         if (page.outcome != PageOutcome::kRobotsDisallowed) {
                           dates.push_back(page.fetched_at);
                         }
                         pages[page.url.substr(page.url.find('/', 7))] = std::move(page);
                         return Backpressure::kContinue;
                       })
                  .ok());

  std::vector<std::string> fetched;
  for (const auto& [path, page] : pages) fetched.push_back(path);
  EXPECT_THAT(fetched, ElementsAre("/", "/a.html", "/cp1252.html", "/dir/b.html", "/endless.html",
                                   "/error.html", "/gzip.html", "/loop-a", "/missing.html",
                                   "/private/moved.html", "/private/secret.html", "/r1",
                                   "/sjis.html", "/slow.html", "/to-outside", "/to-private"));
  // The two disallowed URLs are told, not fetched.
  EXPECT_EQ(pages["/private/secret.html"].outcome, PageOutcome::kRobotsDisallowed);
  EXPECT_EQ(pages["/private/moved.html"].outcome, PageOutcome::kRobotsDisallowed);
  // Hops off the origin or into a disallowed path are not requested; their targets go through
  // the frontier (and are then refused there: out of scope, disallowed).
  EXPECT_EQ(pages["/to-private"].outcome, PageOutcome::kRedirected);
  EXPECT_EQ(pages["/to-private"].final_url, server_.Url("/private/moved.html"));
  EXPECT_EQ(pages["/to-outside"].outcome, PageOutcome::kRedirected);
  EXPECT_EQ(server_.CountRequests("/private/moved.html"), 0u);
  EXPECT_EQ(pages["/"].outcome, PageOutcome::kPage);
  EXPECT_EQ(pages["/a.html"].body, "<html><body>page a</body></html>");
  EXPECT_EQ(pages["/dir/b.html"].canonical, server_.Url("/a.html"));
  EXPECT_EQ(pages["/r1"].outcome, PageOutcome::kPage);
  EXPECT_EQ(pages["/r1"].final_url, server_.Url("/target.html"));
  ASSERT_EQ(pages["/r1"].redirects.size(), 2u);
  EXPECT_EQ(pages["/r1"].redirects[1].url, server_.Url("/r2"));
  EXPECT_EQ(pages["/loop-a"].error_kind, FetchErrorKind::kTooManyRedirects);
  EXPECT_EQ(pages["/missing.html"].outcome, PageOutcome::kDead);
  EXPECT_EQ(pages["/error.html"].outcome, PageOutcome::kError);
  EXPECT_EQ(pages["/error.html"].http_status, 500);
  EXPECT_EQ(pages["/slow.html"].error_kind, FetchErrorKind::kTimeout);
  EXPECT_EQ(pages["/endless.html"].error_kind, FetchErrorKind::kTooLarge);
  EXPECT_EQ(pages["/gzip.html"].body, "<html><body>compressed page</body></html>");
  // Bytes arrive as served; the charset is the canonicalizer's business (dedup/charset.h).
  EXPECT_EQ(pages["/cp1252.html"].body, kCp1252Body);
  EXPECT_EQ(*FindHeader(pages["/cp1252.html"].headers, "Content-Type"),
            "text/html; charset=windows-1252");
  EXPECT_EQ(pages["/sjis.html"].body, kSjisBody);

  // Never requested: the disallowed path, the out-of-scope host, the nofollow link; robots.txt
  // once; each page once under its normalized URL.
  EXPECT_EQ(server_.CountRequests("/private/secret.html"), 0u);
  EXPECT_EQ(server_.CountRequests("/outside.html"), 0u);
  EXPECT_EQ(server_.CountRequests("/nofollow.html"), 0u);
  EXPECT_EQ(server_.CountRequests("/robots.txt"), 1u);
  EXPECT_EQ(server_.CountRequests("/a.html"), 1u);
  EXPECT_EQ(server_.RequestedPaths().front(), "/robots.txt");
  for (const testing::TestRequest& r : server_.Requests()) {
    EXPECT_EQ(r.Header("Host"), "127.0.0.1:" + std::to_string(server_.port()));
    EXPECT_EQ(r.Header("User-Agent").rfind("shingled/", 0), 0u);
  }
  const CrawlProgress progress = crawler.Progress();
  EXPECT_EQ(progress.robots_disallowed, 2u);
  EXPECT_EQ(progress.out_of_scope, 2u);
  EXPECT_EQ(progress.redirected, 2u);
  EXPECT_EQ(progress.fetched, 14u);
  EXPECT_EQ(progress.errors_by_kind.at("timeout"), 1u);

  // Crawl-delay 2 s (over the 1 s default) between fetches of the host, on the fake clock,
  // counted from the end of each fetch: exactly 2 s apart, since fake time stands still while
  // a fetch runs.
  ASSERT_EQ(dates.size(), 14u);
  for (size_t i = 1; i < dates.size(); ++i) {
    EXPECT_EQ(dates[i] - dates[i - 1], std::chrono::seconds(2)) << i;
  }
}

// The same politeness on the real clock, measured at the server: requests to the host arrive at
// least per_host_delay apart, because the delay runs from the end of the previous fetch.
TEST(CrawlerRealClockTest, PerHostDelayMeasuredAtTheServer) {
  testing::TestServer server;
  server.Page("/", "<a href='/1'>1</a><a href='/2'>2</a><a href='/3'>3</a>");
  for (const char* path : {"/1", "/2", "/3"}) server.Page(path, "page");
  ASSERT_TRUE(server.Start());
  CurlFetcherOptions fetcher_options;
  fetcher_options.allow_private_addresses = true;  // the test site is on loopback
  auto fetcher = CurlFetcher::Create(fetcher_options);
  ASSERT_TRUE(fetcher.ok());
  CrawlerOptions options;
  options.seeds = {server.Url("/")};
  options.per_host_delay = milliseconds(150);
  Crawler crawler(options, fetcher->get(), RealClock::Get());
  int pages = 0;
  ASSERT_TRUE(crawler
                  .Run({},
                       [&](CrawledPage) {
                         ++pages;
                         return Backpressure::kContinue;
                       })
                  .ok());
  EXPECT_EQ(pages, 4);
  const std::vector<testing::TestRequest> requests = server.Requests();
  ASSERT_EQ(requests.size(), 5u);  // robots.txt and four pages
  for (size_t i = 1; i < requests.size(); ++i) {
    // The server stamps a request after reading it, a little after the client sent it; 5 ms
    // covers that skew between two stamps on a loaded host.
    EXPECT_GE(requests[i].arrived - requests[i - 1].arrived, milliseconds(150 - 5)) << i;
  }
}

}  // namespace
}  // namespace shingled::crawler
