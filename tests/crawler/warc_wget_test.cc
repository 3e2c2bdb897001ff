// Interop: GNU wget crawls a site served on 127.0.0.1 by the test and writes a WARC; our reader
// must find every page in it, with its URL and date. wget is told to ignore any wgetrc and proxy
// settings so it cannot reach anything but the loopback server.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>

#include "crawler/clock.h"
#include "crawler/crawler.h"
#include "crawler/curl_fetcher.h"
#include "crawler/warc.h"
#include "tests/crawler/test_server.h"

namespace shingled::crawler {
namespace {

namespace fs = std::filesystem;

class WgetInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("wget --version >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "GNU wget is not installed (scripts/install-deps.sh installs it)";
    }
    dir_ = fs::temp_directory_path() / ("shingled_wget_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(WgetInteropTest, ReadsTheWarcWgetWrote) {
  testing::TestServer server;
  const std::map<std::string, std::string> pages = {
      {"/", "<html><body><a href='a.html'>a</a> <a href='sub/b.html'>b</a></body></html>"},
      {"/a.html", "<html><body>page a <a href='sub/b.html#x'>b</a></body></html>"},
      {"/sub/b.html", "<html><body>page b <a href='../c.txt'>c</a></body></html>"},
      {"/c.txt", "plain text page"},
  };
  for (const auto& [path, body] : pages) {
    server.Page(path, body, path.ends_with(".txt") ? "text/plain" : "text/html; charset=utf-8");
  }
  ASSERT_TRUE(server.Start());
  const std::string warc = (dir_ / "site").string();
  const int64_t before = std::time(nullptr);
  const std::string command = "cd '" + dir_.string() +
                              "' && wget --no-config --no-proxy --quiet --tries=1 --timeout=20 "
                              "--recursive --level=2 --no-parent --warc-file='" +
                              warc + "' " + server.Url("/") + " >/dev/null 2>&1";
  const int rc = std::system(command.c_str());
  const int64_t after = std::time(nullptr);
  ASSERT_TRUE(WIFEXITED(rc)) << command;
  // wget exits 8 when some URL answered an error (its /robots.txt is a 404 here); that is fine.
  ASSERT_TRUE(WEXITSTATUS(rc) == 0 || WEXITSTATUS(rc) == 8) << "wget exit " << WEXITSTATUS(rc);

  StatusOr<std::unique_ptr<ByteSource>> source = OpenFileSource(warc + ".warc.gz");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  WarcReader reader(std::move(*source));
  std::map<std::string, WarcPage> found;
  size_t requests = 0, warcinfo = 0;
  WarcRecord record;
  while (reader.Next(&record)) {
    requests += record.Type() == "request";
    warcinfo += record.Type() == "warcinfo";
    StatusOr<std::optional<WarcPage>> page = InterpretRecord(record);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    if (page->has_value()) found[(*page)->url] = **page;
  }
  EXPECT_TRUE(reader.status().ok());
  EXPECT_TRUE(reader.gzip());
  EXPECT_TRUE(reader.problems().empty());
  EXPECT_GE(warcinfo, 1u);
  EXPECT_GE(requests, pages.size());
  for (const auto& [path, body] : pages) {
    const auto it = found.find(server.Url(path));
    ASSERT_NE(it, found.end()) << path << " is not in the WARC";
    EXPECT_EQ(it->second.http_status, 200);
    EXPECT_EQ(it->second.body, body);
    EXPECT_GE(it->second.date_unix, before - 1);
    EXPECT_LE(it->second.date_unix, after + 1);
  }
  ASSERT_NE(found.find(server.Url("/robots.txt")), found.end());
  EXPECT_EQ(found[server.Url("/robots.txt")].http_status, 404);

  // The same site crawled by our crawler, archived with our writer and read back, gives the
  // same documents under the same URLs.
  CurlFetcherOptions fetcher_options;
  fetcher_options.allow_private_addresses = true;  // the site is on loopback
  auto fetcher = CurlFetcher::Create(fetcher_options);
  ASSERT_TRUE(fetcher.ok());
  FakeClock clock;
  CrawlerOptions options;
  options.seeds = {server.Url("/")};
  options.max_depth = 2;
  Crawler crawler(options, fetcher->get(), &clock);
  const std::string ours = (dir_ / "ours.warc.gz").string();
  StatusOr<std::unique_ptr<ByteSink>> sink = OpenFileSink(ours);
  ASSERT_TRUE(sink.ok());
  WarcWriter writer(std::move(*sink), /*gzip=*/true);
  ASSERT_TRUE(crawler
                  .Run({},
                       [&](CrawledPage page) {
                         if (page.outcome == PageOutcome::kPage) {
                           const int64_t date = std::chrono::duration_cast<std::chrono::seconds>(
                                                    page.fetched_at.time_since_epoch())
                                                    .count();
                           EXPECT_TRUE(writer
                                           .WriteResponse(page.final_url, date, page.http_status,
                                                          page.headers, page.body)
                                           .ok());
                         }
                         return Backpressure::kContinue;
                       })
                  .ok());
  ASSERT_TRUE(writer.Close().ok());
  StatusOr<std::unique_ptr<ByteSource>> our_source = OpenFileSource(ours);
  ASSERT_TRUE(our_source.ok());
  WarcReader our_reader(std::move(*our_source));
  std::map<std::string, std::string> our_pages, wget_pages;
  while (our_reader.Next(&record)) {
    StatusOr<std::optional<WarcPage>> page = InterpretRecord(record);
    ASSERT_TRUE(page.ok() && page->has_value());
    our_pages[(*page)->url] = (*page)->body;
  }
  for (const auto& [url, page] : found) {
    if (page.http_status == 200) wget_pages[url] = page.body;
  }
  EXPECT_EQ(our_pages, wget_pages);
}

}  // namespace
}  // namespace shingled::crawler
