// The daemon's crawler end to end: a real `shingled serve` on a free loopback port crawls a
// loopback site served by the test. POST /v1/crawl starts a sweep, GET /v1/crawl is polled until
// it is done; two sweeps with the site changed in between (a page edited, a page moved with a
// redirect, a page removed, a page added) leave versions, dead URLs, lost-and-found answers and
// clusters that tell that story; the schedule survives a restart; SIGTERM during a sweep exits 0
// with a consistent store and the sweep left open; POST /v1/crawl/stop ends one sweep only; a
// known URL robots.txt comes to refuse is not recorded gone.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/crawler/test_server.h"
#include "tests/crawler/test_site.h"
#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

std::string CrawlerConfig(const TestServer& server, const std::string& extra = "") {
  return "[ingest]\ndefault_sweep = \"\"\n[crawler]\nenabled = true\nseeds = [\"" +
         server.Url("/") +
         "\"]\nallow_private_addresses = true\nper_host_delay_ms = 0\nevery = \"off\"\n" + extra;
}

json Get(int port, const std::string& target, int* status = nullptr) {
  HttpClient client(port);
  HttpResponse r = client.Request("GET", target);
  if (status != nullptr) *status = r.status;
  return json::parse(r.body, nullptr, false);
}

// Polls GET /v1/crawl until the sweep named `name` (any, if empty) has finished.
json WaitForSweep(int port, const std::string& name = "") {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  json crawl;
  while (Clock::now() < deadline) {
    crawl = Get(port, "/v1/crawl");
    if (crawl.is_object() && crawl["running"] == false && crawl["sweep"].is_object() &&
        !crawl["sweep"]["finished"].is_null() &&
        (name.empty() || crawl["sweep"]["sweep"] == name)) {
      return crawl["sweep"];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  }
  ADD_FAILURE() << "the sweep did not finish: " << crawl.dump();
  return json();
}

// POST /v1/crawl; returns the sweep's name ("" on failure).
std::string StartSweep(int port) {
  HttpClient client(port);
  HttpResponse r = client.Request("POST", "/v1/crawl");
  EXPECT_EQ(r.status, 202) << r.body;
  const json j = json::parse(r.body, nullptr, false);
  return j.is_object() && j["sweep"].is_string() ? j["sweep"].get<std::string>() : "";
}

json History(int port, const std::string& url) {
  int status = 0;
  json j = Get(port, "/v1/urls?url=" + Q(url), &status);
  EXPECT_EQ(status, 200) << url << " " << j.dump();
  return j["versions"];
}

// The value of one sample in the Prometheus text ("name{labels} value"), -1 if absent.
double Metric(const std::string& text, const std::string& sample) {
  const size_t at = text.find("\n" + sample + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + sample.size() + 2));
}

TEST(CrawlServeTest, PostCrawlRunsOneSweepAndGetShowsProgress) {
  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/a.html", "/b.html", "/slow.html", "/private/p.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/robots.txt", 200, "User-agent: *\nDisallow: /private/\n");
  site.Set("/", 200,
           "<a href='a.html'>a</a><a href='b.html'>b</a><a href='slow.html'>slow</a>"
           "<a href='private/p.html'>p</a><a href='http://192.0.2.1/elsewhere'>out</a>");
  site.Set("/a.html", 200, Article("apples"));
  site.Set("/b.html", 200, Article("bananas"));
  // Slow enough that a second POST surely arrives while the sweep runs.
  site.Set("/slow.html", 200, Article("snails"), std::chrono::milliseconds(1500));

  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", CrawlerConfig(server));
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  json before = Get(daemon.port(), "/v1/crawl");
  EXPECT_EQ(before["enabled"], true);
  EXPECT_EQ(before["running"], false);
  EXPECT_TRUE(before["sweep"].is_null());
  EXPECT_TRUE(before["next_sweep"].is_null());  // every = "off"

  const std::string name = StartSweep(daemon.port());
  ASSERT_EQ(name.rfind("crawl-20", 0), 0u) << name;
  {
    HttpClient client(daemon.port());
    HttpResponse again = client.Request("POST", "/v1/crawl");
    EXPECT_EQ(again.status, 409) << again.body;
    EXPECT_NE(again.body.find("crawl_running"), std::string::npos) << again.body;
  }
  // The API answers while the sweep runs.
  bool saw_running = false;
  for (int i = 0; i < 20 && !saw_running; ++i) {
    json progress = Get(daemon.port(), "/v1/crawl");
    saw_running = progress["running"] == true && progress["sweep"].is_object() &&
                  progress["sweep"]["sweep"] == name && progress["sweep"]["finished"].is_null();
    if (!saw_running) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(saw_running);
  int health = 0;
  Get(daemon.port(), "/healthz", &health);
  EXPECT_EQ(health, 200);

  const json sweep = WaitForSweep(daemon.port(), name);
  EXPECT_EQ(sweep["closed"], true) << sweep.dump();
  EXPECT_EQ(sweep["pages"], 4);  // /, a, b, slow
  EXPECT_EQ(sweep["stored"], 4);
  EXPECT_EQ(sweep["dead"], 0);
  EXPECT_EQ(sweep["errors"], 0);
  EXPECT_EQ(sweep["robots_disallowed"], 1);
  EXPECT_EQ(sweep["out_of_scope"], 1);
  EXPECT_EQ(sweep["queued"], 0);
  EXPECT_EQ(sweep["in_flight"], 0);
  EXPECT_EQ(sweep["known_urls"], 0);
  EXPECT_TRUE(sweep["errors_by_kind"].is_object());
  EXPECT_GT(sweep["pages_per_second"].get<double>(), 0);
  EXPECT_EQ(sweep["started"].get<std::string>().substr(0, 2), "20");
  EXPECT_EQ(sweep["finished"].get<std::string>().substr(0, 2), "20");
  EXPECT_EQ(server.CountRequests("/private/p.html"), 0u);

  const json a = History(daemon.port(), server.Url("/a.html"));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]["status"], 200);
  EXPECT_EQ(a[0]["verdict"], "new");
  // The sweep is a store sweep like any other, closed.
  const json sweeps = Get(daemon.port(), "/v1/sweeps");
  ASSERT_TRUE(sweeps.is_object()) << sweeps.dump();
  bool listed = false;
  for (const json& s : sweeps["sweeps"]) {
    if (s["name"] == name) listed = s["open"] == false;
  }
  EXPECT_TRUE(listed) << sweeps.dump();

  HttpClient metrics_client(daemon.port());
  const std::string metrics = metrics_client.Request("GET", "/metrics").body;
  EXPECT_EQ(Metric(metrics, "shingled_crawler_fetches_total{outcome=\"page\"}"), 4) << metrics;
  EXPECT_EQ(Metric(metrics, "shingled_crawler_fetches_total{outcome=\"dead\"}"), 0);
  EXPECT_EQ(Metric(metrics, "shingled_crawler_robots_disallowed_total"), 1);
  EXPECT_EQ(Metric(metrics, "shingled_crawler_robots_fetches_total"), 1);
  EXPECT_EQ(Metric(metrics, "shingled_crawler_sweeps_total"), 1);
  EXPECT_EQ(Metric(metrics, "shingled_crawler_sweep_running"), 0);
  EXPECT_EQ(Metric(metrics, "shingled_crawler_queue_urls"), 0);

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(CrawlServeTest, TwoSweepsTellTheStory) {
  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/a.html", "/b.html", "/old.html", "/new.html", "/gone.html",
                       "/orphan.html", "/added.html", "/flaky.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200,
           "<a href='a.html'>a</a><a href='b.html'>b</a><a href='old.html'>old</a>"
           "<a href='gone.html'>gone</a><a href='orphan.html'>orphan</a>"
           "<a href='flaky.html'>flaky</a>");
  site.Set("/flaky.html", 200, Article("plums"));
  site.Set("/a.html", 200, Article("apples"));
  site.Set("/b.html", 200, Article("bananas"));
  site.Set("/old.html", 200, Article("oranges"));
  site.Set("/gone.html", 200, Article("grapes"));
  site.Set("/orphan.html", 200, Article("lemons"));

  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", CrawlerConfig(server));
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string one = StartSweep(daemon.port());
  const json first = WaitForSweep(daemon.port(), one);
  EXPECT_EQ(first["pages"], 7);
  EXPECT_EQ(first["closed"], true);
  // A page of another site, posted to the API into a sweep of its own: not the crawler's.
  HttpClient api(daemon.port());
  ASSERT_EQ(api.Request("POST", "/v1/sweeps", R"({"name": "api"})", "application/json").status,
            200);
  const std::string elsewhere = "https://elsewhere.example/page";
  ASSERT_EQ(api.Request("POST", "/v1/pages?sweep=api&url=" + Q(elsewhere), Article("figs"),
                        "text/html")
                .status,
            200);

  // Between the sweeps: a.html edited, old.html moved to new.html with a redirect, gone.html
  // removed and no longer linked (only the revisit finds it), orphan.html no longer linked but
  // still served, added.html added.
  site.Set("/", 200,
           "<a href='a.html'>a</a><a href='b.html'>b</a><a href='old.html'>old</a>"
           "<a href='added.html'>added</a>");
  site.Set("/a.html", 200, Article("apples", "One more sentence was added to this page."));
  site.Set("/new.html", 200, Article("oranges"));
  site.Set("/old.html", 301, "/new.html");
  site.Remove("/gone.html");
  site.Set("/added.html", 200, Article("cherries"));
  site.Set("/flaky.html", 500, "try again later");  // a failed fetch: not known to be gone
  // Sweep names carry the second they started: make the second sweep's differ.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string two = StartSweep(daemon.port());
  ASSERT_NE(two, one);
  const json second = WaitForSweep(daemon.port(), two);
  EXPECT_EQ(second["closed"], true) << second.dump();
  EXPECT_EQ(second["known_urls"], 7);  // the crawler's own URLs only, not elsewhere.example
  EXPECT_EQ(second["dead"], 1);        // gone.html: 404 on revisit
  EXPECT_EQ(second["errors"], 1);      // flaky.html: 500
  EXPECT_EQ(second["pages"], 6);       // /, a, b, old (-> new), orphan, added
  EXPECT_EQ(server.CountRequests("/gone.html"), 2u);
  EXPECT_EQ(server.CountRequests("/orphan.html"), 2u);
  const int port = daemon.port();

  const json b = History(port, server.Url("/b.html"));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1]["verdict"], "unchanged");
  const json orphan = History(port, server.Url("/orphan.html"));
  ASSERT_EQ(orphan.size(), 2u);
  EXPECT_EQ(orphan[1]["verdict"], "unchanged");  // revisited though no longer linked
  const json a = History(port, server.Url("/a.html"));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1]["verdict"], "near_duplicate");
  EXPECT_NE(a[1]["doc"], a[0]["doc"]);
  const json gone = History(port, server.Url("/gone.html"));
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[1]["status"], 404);  // dead at the second sweep's date
  EXPECT_EQ(gone[1]["doc"], 0);
  EXPECT_EQ(gone[1]["sweep"], b[1]["sweep"]);  // sweep two's id
  EXPECT_NE(gone[1]["sweep"], gone[0]["sweep"]);
  EXPECT_GE(gone[1]["date"].get<std::string>(), second["started"].get<std::string>());
  // The redirect is recorded on the URL that answered it, with its target, in sweep two (issue
  // 30: it was recorded gone when sweep two closed, as if the crawler had not seen it).
  const json old_page = History(port, server.Url("/old.html"));
  ASSERT_EQ(old_page.size(), 2u);
  EXPECT_EQ(old_page[1]["status"], 301);
  EXPECT_EQ(old_page[1]["verdict"], "redirect");
  EXPECT_EQ(old_page[1]["location"], server.Url("/new.html"));
  EXPECT_EQ(old_page[1]["doc"], 0);
  EXPECT_EQ(old_page[1]["sweep"], b[1]["sweep"]);
  // The failed fetch is recorded as an attempt that keeps the last good version live (it once
  // was not recorded at all), and closing sweep two declared gone neither it nor the other
  // site's page.
  const json flaky = History(port, server.Url("/flaky.html"));
  ASSERT_EQ(flaky.size(), 2u) << flaky.dump();
  EXPECT_EQ(flaky[1]["status"], 500);
  EXPECT_EQ(flaky[1]["verdict"], "failed");
  EXPECT_EQ(flaky[1]["doc"], flaky[0]["doc"]);
  EXPECT_EQ(flaky[1]["sweep"], b[1]["sweep"]);
  EXPECT_EQ(Get(port, "/v1/similar?url=" + Q(server.Url("/flaky.html")))["results"].is_array(),
            true);
  EXPECT_EQ(History(port, elsewhere).size(), 1u);
  EXPECT_EQ(second["verdicts"]["failed"], 1) << second.dump();
  EXPECT_EQ(second["verdicts"]["redirect"], 1) << second.dump();
  const json added = History(port, server.Url("/added.html"));
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0]["verdict"], "new");

  // Lost and found: the moved page's content lives on at its new URL.
  const json lost = Get(port, "/v1/lost?url=" + Q(server.Url("/old.html")));
  EXPECT_EQ(lost["status"], "moved") << lost.dump();
  ASSERT_TRUE(lost["best"].is_object()) << lost.dump();
  EXPECT_EQ(lost["best"]["url"], server.Url("/new.html"));
  EXPECT_EQ(lost["best"]["evidence"], "redirect");
  EXPECT_DOUBLE_EQ(lost["best"]["resemblance"].get<double>(), 1.0);

  // Clusters: the edited page's two versions are one cluster; the moved page's document is
  // listed under both its URLs.
  const json cluster = Get(port, "/v1/clusters/" + a[1]["doc"].dump());
  ASSERT_TRUE(cluster.is_object()) << cluster.dump();
  std::vector<int64_t> docs;
  for (const json& m : cluster["members"]) docs.push_back(m["doc"].get<int64_t>());
  EXPECT_NE(std::find(docs.begin(), docs.end(), a[0]["doc"].get<int64_t>()), docs.end())
      << cluster.dump();
  const json moved = Get(port, "/v1/clusters/" + std::to_string(lost["last_doc"].get<int64_t>()));
  std::vector<std::string> urls;
  for (const json& m : moved["members"]) {
    for (const json& u : m["urls"]) urls.push_back(u.get<std::string>());
  }
  EXPECT_NE(std::find(urls.begin(), urls.end(), server.Url("/old.html")), urls.end())
      << moved.dump();
  EXPECT_NE(std::find(urls.begin(), urls.end(), server.Url("/new.html")), urls.end())
      << moved.dump();

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// A revisit that timed out or answered 429 was not recorded at all, and a known URL
// that came to redirect was recorded gone when the sweep closed. Now the failed fetches are
// attempts that keep the pages' last good versions live (status 0 for the timeout), and the
// redirect is recorded on the URL that answered it, with its target.
TEST(CrawlServeTest, FailedFetchesAndRedirectsAreRecordedOnTheirUrls) {
  Site site;
  TestServer server;
  site.Serve(&server,
             {"/", "/slow.html", "/busy.html", "/moved.html", "/target.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200,
           "<a href='slow.html'>s</a><a href='busy.html'>b</a><a href='moved.html'>m</a>");
  site.Set("/slow.html", 200, Article("pears"));
  site.Set("/busy.html", 200, Article("peaches"));
  site.Set("/moved.html", 200, Article("melons"));

  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", CrawlerConfig(server, "total_timeout_ms = 500\n"));
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const int port = daemon.port();
  const json first = WaitForSweep(port, StartSweep(port));
  EXPECT_EQ(first["closed"], true) << first.dump();
  EXPECT_EQ(first["pages"], 4) << first.dump();

  // The delay outlasts total_timeout_ms (0.5 s): the fetch times out.
  site.Set("/slow.html", 200, Article("pears"), std::chrono::milliseconds(1500));
  site.Set("/busy.html", 429, "slow down");
  site.Set("/moved.html", 301, "/target.html");
  site.Set("/target.html", 200, Article("melons"));
  // Sweep names carry the second they started: make the second sweep's differ.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const json second = WaitForSweep(port, StartSweep(port));
  EXPECT_EQ(second["closed"], true) << second.dump();
  EXPECT_EQ(second["errors"], 2) << second.dump();
  EXPECT_EQ(second["verdicts"]["failed"], 2) << second.dump();
  EXPECT_EQ(second["verdicts"]["redirect"], 1) << second.dump();

  const json slow = History(port, server.Url("/slow.html"));
  ASSERT_EQ(slow.size(), 2u) << slow.dump();
  EXPECT_EQ(slow[1]["verdict"], "failed");
  EXPECT_EQ(slow[1]["status"], 0);  // no answer
  EXPECT_EQ(slow[1]["doc"], slow[0]["doc"]);
  const json busy = History(port, server.Url("/busy.html"));
  ASSERT_EQ(busy.size(), 2u) << busy.dump();
  EXPECT_EQ(busy[1]["verdict"], "failed");
  EXPECT_EQ(busy[1]["status"], 429);
  EXPECT_EQ(busy[1]["doc"], busy[0]["doc"]);
  const json moved = History(port, server.Url("/moved.html"));
  ASSERT_EQ(moved.size(), 2u) << moved.dump();
  EXPECT_EQ(moved[1]["verdict"], "redirect");
  EXPECT_EQ(moved[1]["status"], 301);
  EXPECT_EQ(moved[1]["location"], server.Url("/target.html"));
  EXPECT_EQ(moved[1]["doc"], 0);
  const json target = History(port, server.Url("/target.html"));
  ASSERT_EQ(target.size(), 1u) << target.dump();
  EXPECT_EQ(target[0]["doc"], moved[0]["doc"]);  // the same bytes: the same document

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// Bug: a known URL that robots.txt came to disallow was dropped by the crawler, so closing the
// sweep recorded it gone although nothing said the page was gone. Now it keeps its last version,
// while a page that really disappeared (404) still gets its dead version. A robots.txt that
// answers 5xx (the whole host disallowed for the sweep) records nothing gone either.
TEST(CrawlServeTest, KnownUrlDisallowedByRobotsIsNotRecordedGone) {
  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/a.html", "/kept.html", "/removed.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200,
           "<a href='a.html'>a</a><a href='kept.html'>kept</a><a href='removed.html'>r</a>");
  site.Set("/a.html", 200, Article("apples"));
  site.Set("/kept.html", 200, Article("walnuts"));
  site.Set("/removed.html", 200, Article("grapes"));

  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", CrawlerConfig(server));
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const int port = daemon.port();
  const std::string one = StartSweep(port);
  const json first = WaitForSweep(port, one);
  EXPECT_EQ(first["closed"], true) << first.dump();
  EXPECT_EQ(first["pages"], 4);

  // robots.txt now refuses kept.html (still linked and still served); removed.html is gone.
  site.Set("/robots.txt", 200, "User-agent: *\nDisallow: /kept.html\n");
  site.Remove("/removed.html");
  // Sweep names carry the second they started: make each sweep's differ.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string two = StartSweep(port);
  const json second = WaitForSweep(port, two);
  EXPECT_EQ(second["closed"], true) << second.dump();
  EXPECT_EQ(second["known_urls"], 4);
  EXPECT_EQ(second["robots_disallowed"], 1);
  EXPECT_EQ(second["dead"], 1);
  EXPECT_EQ(second["pages"], 2);                      // /, a
  EXPECT_EQ(server.CountRequests("/kept.html"), 1u);  // the first sweep's fetch only

  const json kept = History(port, server.Url("/kept.html"));
  ASSERT_EQ(kept.size(), 1u) << kept.dump();  // no gone version
  EXPECT_EQ(kept[0]["status"], 200);
  const json removed = History(port, server.Url("/removed.html"));
  ASSERT_EQ(removed.size(), 2u) << removed.dump();
  EXPECT_EQ(removed[1]["status"], 404);
  EXPECT_EQ(removed[1]["doc"], 0);
  const json a = History(port, server.Url("/a.html"));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1]["verdict"], "unchanged");

  // robots.txt answers 503: the host is disallowed for the sweep, every URL is told
  // disallowed, the sweep closes and records nothing gone.
  site.Set("/robots.txt", 503, "busy");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string three = StartSweep(port);
  const json third = WaitForSweep(port, three);
  EXPECT_EQ(third["closed"], true) << third.dump();
  EXPECT_EQ(third["fetched"], 0);
  EXPECT_EQ(third["robots_disallowed"], 3);  // /, a, kept (removed.html is dead, not live)
  EXPECT_EQ(History(port, server.Url("/a.html")).size(), 2u);
  EXPECT_EQ(History(port, server.Url("/")).size(), 2u);
  EXPECT_EQ(History(port, server.Url("/kept.html")).size(), 1u);
  EXPECT_EQ(History(port, server.Url("/removed.html")).size(), 2u);

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// POST /v1/crawl/stop ends the running sweep: the pages it stored stay, it is left open "stopped
// on request", a second stop is a conflict, and the next POST /v1/crawl runs a whole sweep.
TEST(CrawlServeTest, StopEndsTheRunningSweepAndTheNextOneRuns) {
  Site site;
  TestServer server;
  std::string links;
  std::vector<std::string> paths = {"/", "/robots.txt"};
  for (int i = 0; i < 10; ++i) {
    const std::string path = "/p" + std::to_string(i) + ".html";
    links += "<a href='" + path.substr(1) + "'>" + std::to_string(i) + "</a>";
    paths.push_back(path);
  }
  for (const std::string& path : paths) {
    server.Route(path, [&site](const TestRequest& request) { return site.Answer(request); });
  }
  ASSERT_TRUE(server.Start());
  site.Set("/", 200, links);
  // One fetch at a time (max_fetches_per_host = 1), 400 ms each: the sweep takes 4 s or more.
  for (int i = 0; i < 10; ++i) {
    site.Set(paths[i + 2], 200, Article("topic" + std::to_string(i)),
             std::chrono::milliseconds(400));
  }
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", CrawlerConfig(server));
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const int port = daemon.port();
  {
    HttpClient client(port);
    HttpResponse none = client.Request("POST", "/v1/crawl/stop");
    EXPECT_EQ(none.status, 409) << none.body;
    EXPECT_NE(none.body.find("crawl_not_running"), std::string::npos) << none.body;
  }
  const std::string name = StartSweep(port);
  // Wait until a page of the site has been stored.
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
  json progress;
  while (Clock::now() < deadline) {
    progress = Get(port, "/v1/crawl");
    if (progress["sweep"].is_object() && progress["sweep"]["stored"].is_number() &&
        progress["sweep"]["stored"].get<int>() >= 2) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll interval
  }
  ASSERT_GE(progress["sweep"]["stored"].get<int>(), 2) << progress.dump();
  {
    HttpClient client(port);
    HttpResponse stop =
        client.Request("POST", "/v1/crawl/stop", "", "", "X-Request-Id: stop-1\r\n");
    ASSERT_EQ(stop.status, 202) << stop.body;
    const json answer = json::parse(stop.body, nullptr, false);
    EXPECT_EQ(answer["sweep"], name) << stop.body;
  }
  // The log says who stopped it: the request, by its id.
  EXPECT_TRUE(daemon.WaitForLog("crawler: sweep " + name + " stopped on request request_id=stop-1"))
      << daemon.log();
  const json stopped = WaitForSweep(port, name);
  EXPECT_EQ(stopped["closed"], false) << stopped.dump();
  EXPECT_EQ(stopped["left_open_because"], "stopped on request") << stopped.dump();
  EXPECT_FALSE(stopped["finished"].is_null());
  EXPECT_LT(stopped["fetched"].get<int>(), 11) << stopped.dump();
  // Every page fetched before the stop (the one in flight included) is committed.
  EXPECT_EQ(stopped["stored"], stopped["pages"]) << stopped.dump();
  EXPECT_EQ(stopped["store_errors"], 0);
  EXPECT_EQ(History(port, server.Url("/")).size(), 1u);
  bool open = false;
  const json sweeps = Get(port, "/v1/sweeps");
  for (const json& s : sweeps["sweeps"]) {
    if (s["name"] == name) open = s["open"] == true;
  }
  EXPECT_TRUE(open) << sweeps.dump();
  {
    HttpClient client(port);
    HttpResponse again = client.Request("POST", "/v1/crawl/stop");
    EXPECT_EQ(again.status, 409) << again.body;
    EXPECT_NE(again.body.find("crawl_not_running"), std::string::npos) << again.body;
  }

  // The stop held for that sweep only: a new one runs to its end.
  for (int i = 0; i < 10; ++i) site.Set(paths[i + 2], 200, Article("topic" + std::to_string(i)));
  const std::string next = StartSweep(port);
  ASSERT_FALSE(next.empty());
  const json whole = WaitForSweep(port, next);
  EXPECT_EQ(whole["closed"], true) << whole.dump();
  EXPECT_EQ(whole["pages"], 11) << whole.dump();
  EXPECT_EQ(whole["stored"], 11);
  for (const std::string& path : paths) {
    if (path != "/robots.txt") {
      EXPECT_FALSE(History(port, server.Url(path)).empty()) << path;
    }
  }

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// A schedule: the first sweep runs at start-up on an empty store; after a restart, the last
// sweep in the store sets the next date and nothing is crawled at once.
TEST(CrawlServeTest, ScheduleStartsAtOnceAndSurvivesARestart) {
  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/a.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200, "<a href='a.html'>a</a>");
  site.Set("/a.html", 200, Article("apples"));
  TempDir dir;
  const std::string config = CrawlerConfig(server);
  const std::string scheduled =
      config.substr(0, config.find("every = \"off\"")) + "every = \"1h\"\n";
  std::string name;
  {
    Daemon daemon(dir, dir.path() + "/store", scheduled);
    ASSERT_GT(daemon.port(), 0) << daemon.log();
    const json sweep = WaitForSweep(daemon.port());
    EXPECT_EQ(sweep["closed"], true);
    EXPECT_EQ(sweep["pages"], 2);
    name = sweep["sweep"];
    const json crawl = Get(daemon.port(), "/v1/crawl");
    EXPECT_EQ(crawl["every_s"], 3600);
    ASSERT_TRUE(crawl["next_sweep"].is_string());
    EXPECT_GT(crawl["next_sweep"].get<std::string>(), sweep["started"].get<std::string>());
    daemon.Signal(SIGTERM);
    ASSERT_EQ(daemon.Wait(), 0);
  }
  EXPECT_EQ(server.CountRequests("/a.html"), 1u);
  Daemon again(dir, dir.path() + "/store", scheduled);
  ASSERT_GT(again.port(), 0) << again.log();
  const json crawl = Get(again.port(), "/v1/crawl");
  EXPECT_EQ(crawl["running"], false);
  ASSERT_TRUE(crawl["sweep"].is_object()) << crawl.dump();
  EXPECT_EQ(crawl["sweep"]["sweep"], name);  // from the store
  EXPECT_EQ(crawl["sweep"]["closed"], true);
  ASSERT_TRUE(crawl["next_sweep"].is_string());
  EXPECT_GT(crawl["next_sweep"].get<std::string>(), crawl["sweep"]["started"].get<std::string>());
  EXPECT_EQ(server.CountRequests("/a.html"), 1u);
  again.Signal(SIGTERM);
  EXPECT_EQ(again.Wait(), 0);
}

// SIGTERM while a fetch hangs: the daemon cancels it at the shutdown deadline, exits 0, and
// leaves the store consistent with the sweep open (nothing it did not reach is marked gone).
TEST(CrawlServeTest, SigtermDuringASweepLeavesItOpenAndTheStoreConsistent) {
  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/a.html", "/hang.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200, "<a href='a.html'>a</a><a href='hang.html'>h</a>");
  site.Set("/a.html", 200, Article("apples"));
  site.Set("/hang.html", 200, Article("sloths"), std::chrono::milliseconds(20000));
  TempDir dir;
  const std::string store = dir.path() + "/store";
  Daemon daemon(dir, store,
                CrawlerConfig(server, "max_fetches_per_host = 2\n") +
                    "[server]\nshutdown_deadline_ms = 1000\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string name = StartSweep(daemon.port());
  // Wait until the hanging fetch is in flight.
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  while (server.CountRequests("/hang.html") == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll interval
  }
  ASSERT_EQ(server.CountRequests("/hang.html"), 1u);
  const Clock::time_point signalled = Clock::now();
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(std::chrono::seconds(15)), 0) << daemon.log();
  // The deadline (1 s), not the hanging page (20 s), set the pace. 10 s leaves room for a
  // loaded machine.
  EXPECT_LT(Clock::now() - signalled, std::chrono::seconds(10));
  EXPECT_NE(daemon.log().find("cancelling fetches in flight"), std::string::npos) << daemon.log();

  std::string out;
  EXPECT_EQ(RunCli("check --store '" + store + "'", &out), 0) << out;
  EXPECT_EQ(RunCli("sweep list --json --store '" + store + "'", &out), 0) << out;
  const json sweeps = json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_TRUE(sweeps.is_object()) << out;
  bool open = false;
  for (const json& s : sweeps["sweeps"]) {
    if (s["name"] == name) open = s["open"] == true;
  }
  EXPECT_TRUE(open) << out;
}

TEST(CrawlServeTest, WithoutACrawlerPostIsAConflictAndWritesNeedTheToken) {
  TempDir dir;
  {
    Daemon daemon(dir, dir.path() + "/store", "");
    ASSERT_GT(daemon.port(), 0) << daemon.log();
    const json crawl = Get(daemon.port(), "/v1/crawl");
    EXPECT_EQ(crawl["enabled"], false);
    HttpClient client(daemon.port());
    HttpResponse r = client.Request("POST", "/v1/crawl");
    EXPECT_EQ(r.status, 409);
    EXPECT_NE(r.body.find("crawler_not_configured"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("[crawler]"), std::string::npos) << r.body;
    HttpResponse put = client.Request("PUT", "/v1/crawl");
    EXPECT_EQ(put.status, 405);
    HttpResponse stop = client.Request("POST", "/v1/crawl/stop");
    EXPECT_EQ(stop.status, 409);
    EXPECT_NE(stop.body.find("crawler_not_configured"), std::string::npos) << stop.body;
    HttpResponse get_stop = client.Request("GET", "/v1/crawl/stop");
    EXPECT_EQ(get_stop.status, 405);
    EXPECT_EQ(get_stop.headers["allow"], "POST");
  }
  TestServer server;
  server.Page("/", "<p>hello</p>");
  ASSERT_TRUE(server.Start());
  const std::string token_file = dir.WriteSecret("token", "s3cret-token-0123\n");
  Daemon daemon(dir, dir.path() + "/store2",
                CrawlerConfig(server) + "[auth]\ntoken_file = \"" + token_file + "\"\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  HttpClient client(daemon.port());
  EXPECT_EQ(client.Request("POST", "/v1/crawl").status, 401);
  EXPECT_EQ(client.Request("POST", "/v1/crawl/stop").status, 401);
  EXPECT_EQ(client.Request("GET", "/v1/crawl").status, 200);  // reads are open by default
  EXPECT_EQ(
      client.Request("POST", "/v1/crawl", "", "", "Authorization: Bearer s3cret-token-0123\r\n")
          .status,
      202);
  WaitForSweep(daemon.port());
}

// A [crawler] seed the crawler cannot use (unparseable, a scheme other than
// http(s), a private or loopback address in any numeric form) stopped the whole daemon at
// start-up. It stops the crawler only: the daemon serves, and GET /v1/crawl says why.
TEST(CrawlServeTest, BadSeedStopsTheCrawlerNotTheDaemon) {
  const std::pair<const char*, const char*> cases[] = {
      {"http://exa mple.org/", "bad character in host"},
      {"ftp://example.org/", "scheme is not http or https"},
      {"http://127.1/", "private, loopback"},
      {"http://0x7f000001:8080/", "private, loopback"},
      {"http://2130706433/", "private, loopback"},
      {"http://[::ffff:10.0.0.1]/", "private, loopback"},
  };
  for (const auto& [seed, why] : cases) {
    TempDir dir;
    Daemon daemon(dir, dir.path() + "/store",
                  std::string("[crawler]\nenabled = true\nseeds = [\"") + seed + "\"]\n");
    ASSERT_GT(daemon.port(), 0) << seed << "\n" << daemon.log();
    const json crawl = Get(daemon.port(), "/v1/crawl");
    EXPECT_EQ(crawl["enabled"], false) << crawl.dump();
    ASSERT_TRUE(crawl["error"].is_string()) << crawl.dump();
    const std::string error = crawl["error"];
    EXPECT_NE(error.find("crawler.seeds"), std::string::npos) << error;
    EXPECT_NE(error.find(why), std::string::npos) << seed << ": " << error;
    EXPECT_NE(daemon.log().find("the crawler is not started"), std::string::npos) << daemon.log();
    HttpClient client(daemon.port());
    HttpResponse r = client.Request("POST", "/v1/crawl");
    EXPECT_EQ(r.status, 409) << r.body;
    EXPECT_NE(r.body.find("the crawler did not start"), std::string::npos) << r.body;
    // The rest of the daemon serves.
    r = client.Request("POST", "/v1/pages?url=" + Q("https://e.com/p"), "<p>one two three</p>",
                       "text/html");
    EXPECT_EQ(r.status, 200) << r.body;
    daemon.Signal(SIGTERM);
    EXPECT_EQ(daemon.Wait(), 0) << daemon.log();
  }
  // With allow_private_addresses a loopback seed is the operator's choice.
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store",
                "[crawler]\nenabled = true\nseeds = [\"http://127.1:1/\"]\n"
                "allow_private_addresses = true\nevery = \"off\"\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  EXPECT_EQ(Get(daemon.port(), "/v1/crawl")["enabled"], true);
}

// SIGHUP applies the crawler's schedule at once and its seeds from the next sweep; seeds the
// crawler cannot use are refused, and the running ones stay.
TEST(CrawlServeTest, SighupChangesTheScheduleAndTheSeeds) {
  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/b.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200, Article("roots"));
  site.Set("/b.html", 200, Article("bananas"));
  TempDir dir;
  const std::string config = CrawlerConfig(server);  // every = "off"
  Daemon daemon(dir, dir.path() + "/store", config);
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  EXPECT_TRUE(Get(daemon.port(), "/v1/crawl")["next_sweep"].is_null());

  const std::string config_name = daemon.config_path().substr(dir.path().size() + 1);
  const std::string base = config.substr(0, config.find("seeds = "));
  dir.Write(config_name, base + "seeds = [\"" + server.Url("/") + "\", \"" + server.Url("/b.html") +
                             "\"]\nallow_private_addresses = true\nper_host_delay_ms = 0\n"
                             "every = \"1h\"\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("SIGHUP: reloaded")) << daemon.log();
  EXPECT_NE(daemon.log().find("changed crawler.seeds, crawler.every"), std::string::npos)
      << daemon.log();
  // No sweep ran: with a schedule now, one starts at once, from both seeds.
  const json sweep = WaitForSweep(daemon.port());
  EXPECT_EQ(sweep["closed"], true);
  EXPECT_EQ(sweep["pages"], 2);
  EXPECT_EQ(server.CountRequests("/b.html"), 1u);
  const json crawl = Get(daemon.port(), "/v1/crawl");
  EXPECT_EQ(crawl["every_s"], 3600);
  EXPECT_TRUE(crawl["next_sweep"].is_string()) << crawl.dump();

  dir.Write(config_name, base + "seeds = [\"http://exa mple.org/\"]\n");
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("config not reloaded")) << daemon.log();
  EXPECT_NE(daemon.log().find("crawler.seeds: \"http://exa mple.org/\""), std::string::npos)
      << daemon.log();
  EXPECT_EQ(Get(daemon.port(), "/v1/crawl")["every_s"], 3600);
  const std::string name = StartSweep(daemon.port());
  EXPECT_EQ(WaitForSweep(daemon.port(), name)["pages"], 2);
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0) << daemon.log();
}

}  // namespace
}  // namespace shingled::testing
