// The Scrapy middleware (clients/python/shingled_client/scrapy.py) end to end: a real Scrapy crawl
// (`/usr/bin/python3 -m scrapy runspider` of the example spider, clients/python/examples/) of a
// loopback site with exact and near copies, posting every response to a real `shingled serve`
// on a free loopback port. What the daemon stored, what the site was asked for (a page linked
// only from a dropped copy is never fetched), what the spider saw in response.meta["shingled"]
// (its items, in a JSON file) and the crawl's shingled/* stats (another JSON file); then a daemon
// that is down, or too slow, with SHINGLED_ON_ERROR "pass" and "fail".
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/crawler/test_server.h"
#include "tests/daemon/daemon_harness.h"
#include "tests/daemon/prometheus_server.h"  // FreeLoopbackPort

namespace shingled::testing {
namespace {

using nlohmann::json;

constexpr char kToken[] = "a-token-for-the-scrapy-test-0123456789";

// A page of `seed`'s words with `links` at its end; `extra` words after the text make a near
// copy (3 words more in 300 keep the resemblance near 0.99, over every threshold).
std::string PageWithLinks(int seed, const std::string& links, const std::string& extra = "") {
  std::string page = SyntheticPage(seed);
  page.insert(page.find("</p>"), extra);
  page.insert(page.find("</body>"), links);
  return page;
}

struct Crawl {
  int exit_code = -1;
  std::string log;
  json items = json::array();  // what the spider yielded: url, status, shingled
  json stats = json::object();  // the crawl's shingled/* stats

  // The item of `url`, or null.
  json Item(const std::string& url) const {
    for (const json& item : items) {
      if (item["url"] == url) return item;
    }
    return json();
  }
  int Stat(const std::string& key) const { return stats.value(key, 0); }
};

class ScrapyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("/usr/bin/python3 -c 'import scrapy' 2>/dev/null") != 0) {
      GTEST_SKIP() << "needs Scrapy for /usr/bin/python3 (python3-scrapy, scripts/install-deps.sh)";
    }
    // /x/page and /y/page are the same bytes, /z/page the same text and 3 words more; each links
    // a `child` of its own directory, so /y/child and /z/child are linked only from the copies.
    const std::string copy_links =
        "<a href=\"child\">child</a> <a href=\"/y/page\">y</a> <a href=\"/z/page\">z</a>";
    site_.Page("/", PageWithLinks(9, "<a href=\"/x/page\">x</a> <a href=\"/missing\">?</a>"));
    site_.Page("/x/page", PageWithLinks(1, copy_links));
    site_.Page("/y/page", PageWithLinks(1, copy_links));
    site_.Page("/z/page", PageWithLinks(1, copy_links, " one two three"));
    site_.Page("/x/child", SyntheticPage(11));
    site_.Page("/y/child", SyntheticPage(12));
    site_.Page("/z/child", SyntheticPage(13));
    ASSERT_TRUE(site_.Start());
  }

  void StartDaemon() {
    const std::string token_file = dir_.WriteSecret("token", std::string(kToken) + "\n");
    daemon_ = std::make_unique<Daemon>(dir_, dir_.path() + "/store",
                                       "[auth]\ntoken_file = \"" + token_file + "\"\n");
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
  }

  // Runs the example spider from the site's root with the middleware pointed at
  // `shingled_url`; `settings` are more -s NAME=VALUE.
  Crawl RunCrawl(const std::string& shingled_url, const std::vector<std::string>& settings) {
    const std::string n = std::to_string(++crawls_);
    const std::string items = dir_.path() + "/items-" + n + ".json";
    const std::string stats = dir_.path() + "/stats-" + n + ".json";
    std::string cmd = "cd " + dir_.path() + " && PYTHONPATH=" SHINGLED_SOURCE_DIR
                      "/clients/python /usr/bin/python3 -m scrapy runspider " SHINGLED_SOURCE_DIR
                      "/clients/python/examples/dedup_spider.py -a start=" +
                      site_.Url("/") + " -a stats_file=" + stats + " -O " + items +
                      " -s SHINGLED_URL=" + shingled_url + " -s SHINGLED_TOKEN=" + kToken +
                      " -s TELNETCONSOLE_ENABLED=0 -s COOKIES_ENABLED=0 -s LOG_LEVEL=INFO";
    for (const std::string& s : settings) cmd += " -s " + s;
    Crawl crawl;
    crawl.exit_code = RunCommand(cmd, &crawl.log);
    const std::string items_text = ReadWholeFile(items);
    if (!items_text.empty()) crawl.items = json::parse(items_text, nullptr, false);
    crawl.stats = json::parse(ReadWholeFile(stats), nullptr, false);
    EXPECT_TRUE(crawl.items.is_array()) << items_text;
    EXPECT_TRUE(crawl.stats.is_object()) << crawl.log;
    return crawl;
  }

  // The sweep named `name`, as GET /v1/sweeps lists it.
  json Sweep(const std::string& name) {
    HttpResponse r = HttpClient(daemon_->port()).Request("GET", "/v1/sweeps");
    EXPECT_EQ(r.status, 200) << r.body;
    const json sweeps = json::parse(r.body);  // not in the loop's head: a temporary dies there
    for (const json& s : sweeps["sweeps"]) {
      if (s["name"] == name) return s;
    }
    ADD_FAILURE() << "no sweep " << name << " in " << r.body;
    return json::object();
  }

  TempDir dir_;
  TestServer site_;
  std::unique_ptr<Daemon> daemon_;
  int crawls_ = 0;
};

TEST_F(ScrapyTest, CopiesAreDroppedAndTheirLinksNeverFollowed) {
  StartDaemon();
  const std::string daemon_url = "http://127.0.0.1:" + std::to_string(daemon_->port());
  Crawl crawl = RunCrawl(daemon_url, {"SHINGLED_SWEEP=crawl-1",
                                      "SHINGLED_DROP=duplicate,near_duplicate"});
  ASSERT_EQ(crawl.exit_code, 0) << crawl.log;
  // Every response was posted: the root, the original, both copies, the original's child and
  // the 404. The copies were fetched, dropped, and what only they linked never fetched.
  EXPECT_EQ(crawl.Stat("shingled/posted"), 6) << crawl.stats.dump();
  EXPECT_EQ(crawl.Stat("shingled/dropped"), 2) << crawl.stats.dump();
  EXPECT_EQ(crawl.Stat("shingled/dropped/duplicate"), 1);
  EXPECT_EQ(crawl.Stat("shingled/dropped/near_duplicate"), 1);
  EXPECT_EQ(crawl.Stat("shingled/verdict/gone"), 1);
  EXPECT_EQ(crawl.Stat("shingled/errors"), 0) << crawl.log;
  EXPECT_EQ(site_.CountRequests("/y/page"), 1u);
  EXPECT_EQ(site_.CountRequests("/z/page"), 1u);
  EXPECT_EQ(site_.CountRequests("/x/child"), 1u);
  EXPECT_EQ(site_.CountRequests("/y/child"), 0u);
  EXPECT_EQ(site_.CountRequests("/z/child"), 0u);
  // What the spider saw: the pages kept, each with the daemon's verdict, document and cluster.
  std::set<std::string> urls;
  for (const json& item : crawl.items) urls.insert(item["url"].get<std::string>());
  EXPECT_EQ(urls, (std::set<std::string>{site_.Url("/"), site_.Url("/x/page"),
                                         site_.Url("/x/child")}))
      << crawl.items.dump();
  const json x = crawl.Item(site_.Url("/x/page"))["shingled"];
  EXPECT_EQ(x["verdict"], "new") << x;
  EXPECT_EQ(x["crawl_verdict"], "new") << x;
  EXPECT_EQ(x["url"], site_.Url("/x/page"));
  EXPECT_GT(x["doc"].get<int>(), 0);
  EXPECT_EQ(x["cluster"], x["doc"]);
  // The daemon's side: the sweep the middleware opened holds every page by its verdict.
  const json sweep = Sweep("crawl-1");
  EXPECT_EQ(sweep["pages"], 6) << sweep;
  EXPECT_EQ(sweep["new"], 3) << sweep;
  EXPECT_EQ(sweep["duplicate"], 1) << sweep;
  EXPECT_EQ(sweep["near_duplicate"], 1) << sweep;
  HttpResponse r = HttpClient(daemon_->port())
                       .Request("GET", "/v1/urls?url=" + Q(site_.Url("/y/page")));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["versions"][0]["doc"], x["doc"]) << r.body;

  // A recrawl into a new sweep: every page is "unchanged" to the daemon, and the copies are
  // still copies of what this crawl kept first. Near copies are kept this time, so /z/child is
  // fetched; /y/child still is not.
  crawl = RunCrawl(daemon_url, {"SHINGLED_SWEEP=crawl-2", "SHINGLED_DROP=duplicate"});
  ASSERT_EQ(crawl.exit_code, 0) << crawl.log;
  EXPECT_EQ(crawl.Stat("shingled/dropped/duplicate"), 1) << crawl.stats.dump();
  EXPECT_EQ(crawl.Stat("shingled/dropped"), 1);
  EXPECT_EQ(site_.CountRequests("/y/child"), 0u);
  EXPECT_EQ(site_.CountRequests("/z/child"), 1u);
  const json z = crawl.Item(site_.Url("/z/page"))["shingled"];
  EXPECT_EQ(z["verdict"], "unchanged") << z;
  EXPECT_EQ(z["crawl_verdict"], "near_duplicate") << z;
  EXPECT_EQ(z["copy_of"], site_.Url("/x/page")) << z;
  EXPECT_EQ(z["cluster"], x["cluster"]) << z;
  EXPECT_EQ(crawl.Item(site_.Url("/z/child"))["shingled"]["verdict"], "new");
  EXPECT_EQ(Sweep("crawl-2")["pages"], 7);
}

TEST_F(ScrapyTest, ADaemonThatIsDownPassesOrFailsAsSet) {
  const std::string down = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  // "pass": the crawl goes on unchecked; each page says why in its meta.
  Crawl crawl = RunCrawl(down, {"SHINGLED_SWEEP=s", "SHINGLED_ON_ERROR=pass"});
  ASSERT_EQ(crawl.exit_code, 0) << crawl.log;
  EXPECT_EQ(crawl.Stat("shingled/posted"), 0);
  EXPECT_EQ(crawl.Stat("shingled/dropped"), 0);
  // The sweep's opening and the 8 responses (the whole site, the 404 included).
  EXPECT_EQ(crawl.Stat("shingled/errors"), 9) << crawl.stats.dump();
  EXPECT_EQ(crawl.Stat("shingled/errors/connection"), 9) << crawl.stats.dump();
  EXPECT_EQ(crawl.items.size(), 7u) << crawl.items.dump();
  EXPECT_EQ(site_.CountRequests("/y/child"), 1u);
  const json meta = crawl.Item(site_.Url("/x/page"))["shingled"];
  EXPECT_NE(meta["error"].get<std::string>().find("failed"), std::string::npos) << meta;
  EXPECT_TRUE(meta["status"].is_null()) << meta;

  // "fail": nothing unchecked gets through: the root is dropped, so nothing else is fetched.
  crawl = RunCrawl(down, {"SHINGLED_SWEEP=s", "SHINGLED_ON_ERROR=fail"});
  ASSERT_EQ(crawl.exit_code, 0) << crawl.log;
  EXPECT_EQ(crawl.items.size(), 0u) << crawl.items.dump();
  EXPECT_EQ(crawl.Stat("shingled/errors"), 2) << crawl.stats.dump();
  EXPECT_EQ(site_.CountRequests("/"), 2u);
  EXPECT_EQ(site_.CountRequests("/x/page"), 1u);  // the first crawl's only
}

TEST_F(ScrapyTest, ADaemonTooSlowTimesOut) {
  // A "daemon" that takes 5 s to answer anything; the middleware waits 0.5 s.
  TestServer slow;
  auto late = [](const TestRequest&) {
    TestResponse r;
    r.delay = std::chrono::seconds(5);
    r.headers = {{"Content-Type", "application/json"}};
    r.body = "{}";
    return r;
  };
  slow.Route("/v1/pages", late);
  slow.Route("/v1/sweeps", late);
  ASSERT_TRUE(slow.Start());
  const Clock::time_point start = Clock::now();
  Crawl crawl = RunCrawl(slow.Url(""),
                         {"SHINGLED_SWEEP=s", "SHINGLED_TIMEOUT=0.5", "SHINGLED_ON_ERROR=fail"});
  ASSERT_EQ(crawl.exit_code, 0) << crawl.log;
  EXPECT_EQ(crawl.Stat("shingled/errors/timeout"), 2) << crawl.stats.dump();
  EXPECT_EQ(crawl.items.size(), 0u);
  EXPECT_EQ(site_.CountRequests("/x/page"), 0u);
  // Two waits of 0.5 s and Scrapy's start (1-3 s on a loaded machine), against at least 10 s
  // had the middleware waited for the answers.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(8)) << crawl.log;
}

}  // namespace
}  // namespace shingled::testing
