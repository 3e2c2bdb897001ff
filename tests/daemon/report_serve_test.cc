// The change report end to end (docs/REPORTS.md): a loopback site crawled by the daemon, changed,
// crawled again; and a folder ingested by `shingled ingest` with dates, changed, ingested again.
// The report's counts (GET /v1/reports/changes, /reports/changes, `shingled report changes`)
// equal the truth of what the test changed; bad parameters are refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/crawler/test_server.h"
#include "tests/crawler/test_site.h"
#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

json GetJson(int port, const std::string& target, int* status = nullptr,
             const std::string& headers = "") {
  HttpClient client(port);
  HttpResponse r = client.Request("GET", target, "", "", headers);
  if (status != nullptr) *status = r.status;
  return json::parse(r.body, nullptr, false);
}

// The counts a report must have.
struct Truth {
  int urls, unchanged, changed, moved, moved_in, died, born, not_seen, not_live;
  int moved_by_redirect, moved_same_host;
};

void ExpectCounts(const json& j, const Truth& t) {
  ASSERT_TRUE(j.is_object()) << j.dump();
  EXPECT_EQ(j["urls"], t.urls) << j.dump();
  EXPECT_EQ(j["unchanged"], t.unchanged) << j.dump();
  EXPECT_EQ(j["changed"], t.changed) << j.dump();
  EXPECT_EQ(j["moved"], t.moved) << j.dump();
  EXPECT_EQ(j["moved_in"], t.moved_in) << j.dump();
  EXPECT_EQ(j["died"], t.died) << j.dump();
  EXPECT_EQ(j["born"], t.born) << j.dump();
  EXPECT_EQ(j["not_seen"], t.not_seen) << j.dump();
  EXPECT_EQ(j["not_live"], t.not_live) << j.dump();
  EXPECT_EQ(j["moved_by_redirect"], t.moved_by_redirect) << j.dump();
  EXPECT_EQ(j["moved_same_host"], t.moved_same_host) << j.dump();
  int banded = 0;
  for (const auto& [band, n] : j["bands"].items()) banded += n.get<int>();
  EXPECT_EQ(banded, t.changed) << j.dump();
}

std::string CrawlerConfig(const TestServer& server) {
  return "[ingest]\ndefault_sweep = \"\"\n[crawler]\nenabled = true\nseeds = [\"" +
         server.Url("/") +
         "\"]\nallow_private_addresses = true\nper_host_delay_ms = 0\nevery = \"off\"\n";
}

std::string CrawlOnce(int port) {
  HttpClient client(port);
  HttpResponse r = client.Request("POST", "/v1/crawl");
  EXPECT_EQ(r.status, 202) << r.body;
  const json started = json::parse(r.body, nullptr, false);
  const std::string name = started.is_object() && started["sweep"].is_string()
                               ? started["sweep"].get<std::string>()
                               : "";
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    const json crawl = GetJson(port, "/v1/crawl");
    if (crawl.is_object() && crawl["running"] == false && crawl["sweep"].is_object() &&
        !crawl["sweep"]["finished"].is_null() && crawl["sweep"]["sweep"] == name) {
      EXPECT_EQ(crawl["sweep"]["closed"], true) << crawl.dump();
      return name;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  }
  ADD_FAILURE() << "the sweep did not finish";
  return name;
}

TEST(ReportServeTest, TwoCrawlsOfAChangedSite) {
  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/same.html", "/edit.html", "/old.html", "/new.html", "/docs/x.html",
                       "/v2/x.html", "/gone.html", "/added.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200,
           "<a href='same.html'>s</a><a href='edit.html'>e</a><a href='old.html'>o</a>"
           "<a href='docs/x.html'>x</a><a href='gone.html'>g</a>");
  site.Set("/same.html", 200, Article("apples"));
  site.Set("/edit.html", 200, Article("bananas"));
  site.Set("/old.html", 200, Article("oranges"));
  site.Set("/docs/x.html", 200, Article("kiwis"));
  site.Set("/gone.html", 200, Article("grapes"));

  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", CrawlerConfig(server));
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const int port = daemon.port();
  const std::string one = CrawlOnce(port);

  // The site changes: edit.html edited; old.html moved to new.html with a redirect; docs/x.html
  // moved to v2/x.html and edited there (the old URL answers 404); gone.html removed;
  // added.html added; the index links the new pages.
  site.Set("/", 200,
           "<a href='same.html'>s</a><a href='edit.html'>e</a><a href='old.html'>o</a>"
           "<a href='new.html'>n</a><a href='v2/x.html'>x</a><a href='added.html'>a</a>");
  site.Set("/edit.html", 200, Article("bananas", Article("peeled bananas with a new section")));
  site.Set("/new.html", 200, Article("oranges"));
  site.Set("/old.html", 301, "/new.html");
  site.Set("/v2/x.html", 200, "<nav>Version 2 documentation</nav>" + Article("kiwis", "Edited."));
  site.Remove("/docs/x.html");
  site.Remove("/gone.html");
  site.Set("/added.html", 200, Article("cherries"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // sweep names carry the second
  const std::string two = CrawlOnce(port);
  ASSERT_NE(one, two);

  // Without from and to: the last two sweeps.
  int status = 0;
  const json report = GetJson(port, "/v1/reports/changes", &status);
  ASSERT_EQ(status, 200) << report.dump();
  EXPECT_EQ(report["from"]["name"], one);
  EXPECT_EQ(report["to"]["name"], two);
  // /, same, edit, old, new, docs/x, v2/x, gone, added.
  ExpectCounts(report, Truth{.urls = 9,
                             .unchanged = 1,
                             .changed = 2,
                             .moved = 2,
                             .moved_in = 2,
                             .died = 1,
                             .born = 1,
                             .not_seen = 0,
                             .not_live = 0,
                             .moved_by_redirect = 1,
                             .moved_same_host = 2});
  ASSERT_EQ(report["hosts"].size(), 1u);
  ASSERT_EQ(report["series"].size(), 1u);
  EXPECT_EQ(report["series"][0]["moved"], 2);

  const json moved =
      GetJson(port, "/v1/reports/changes?list=moved&from=" + Q(one) + "&to=" + Q(two), &status);
  ASSERT_EQ(status, 200) << moved.dump();
  ASSERT_EQ(moved["rows"].size(), 2u) << moved.dump();
  std::map<std::string, json> by_url;
  for (const json& r : moved["rows"]) by_url[r["url"].get<std::string>()] = r;
  EXPECT_EQ(by_url[server.Url("/old.html")]["new_url"], server.Url("/new.html"));
  EXPECT_EQ(by_url[server.Url("/old.html")]["evidence"], "redirect");
  EXPECT_EQ(by_url[server.Url("/docs/x.html")]["new_url"], server.Url("/v2/x.html"));
  EXPECT_EQ(by_url[server.Url("/docs/x.html")]["evidence"], "resemblance");
  EXPECT_TRUE(moved["next_after"].is_null());

  const json died = GetJson(port, "/v1/reports/changes?list=died&from=" + Q(one) + "&to=" + Q(two));
  ASSERT_EQ(died["rows"].size(), 1u) << died.dump();
  EXPECT_EQ(died["rows"][0]["url"], server.Url("/gone.html"));

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// A folder ingested twice with dates; the report by the command line, then served by a daemon
// whose reads need a token.
TEST(ReportServeTest, TwoIngestsOfAChangedFolder) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  dir.Write("jan/same.html", Article("apples"));
  dir.Write("jan/edit.html", Article("bananas"));
  dir.Write("jan/old/page.html", Article("oranges"));
  dir.Write("jan/old/edited.html", Article("grapes"));
  dir.Write("jan/dead.html", Article("lemons"));
  dir.Write("feb/same.html", Article("apples"));
  dir.Write("feb/edit.html", Article("bananas", "A paragraph was added to this page in February."));
  dir.Write("feb/new/page.html", Article("oranges"));
  dir.Write("feb/new/edited.html", "<p>Moved here.</p>" + Article("grapes", "And edited."));
  dir.Write("feb/added.html", Article("cherries"));
  const std::string flags = " --store " + store;
  std::string out;
  for (const auto& [month, day] : {std::pair<std::string, std::string>{"jan", "2026-01"},
                                   std::pair<std::string, std::string>{"feb", "2026-02"}}) {
    ASSERT_EQ(
        RunCli("ingest " + dir.path() + "/" + month + " --sweep " + month + " --date " + day +
                   "-01 --base-url https://site.example/ --scope-host site.example --quiet" + flags,
               &out),
        0)
        << out;
    ASSERT_EQ(RunCli("sweep close " + month + " --date " + day + "-02" + flags, &out), 0) << out;
  }
  // same, edit, old/page, old/edited, dead, new/page, new/edited, added.
  const Truth truth{.urls = 8,
                    .unchanged = 1,
                    .changed = 1,
                    .moved = 2,
                    .moved_in = 2,
                    .died = 1,
                    .born = 1,
                    .not_seen = 0,
                    .not_live = 0,
                    .moved_by_redirect = 0,
                    .moved_same_host = 2};
  ASSERT_EQ(RunCli("report changes --from jan --to feb" + flags, &out), 0) << out;
  ExpectCounts(json::parse(out, nullptr, false), truth);

  ASSERT_EQ(RunCli("report changes --from jan --to feb --format csv --list moved" + flags, &out), 0)
      << out;
  EXPECT_EQ(out.rfind("kind,url_id,url,", 0), 0u) << out;
  EXPECT_NE(out.find(",https://site.example/old/page.html,"), std::string::npos) << out;
  EXPECT_NE(out.find(",https://site.example/new/page.html,"), std::string::npos) << out;
  EXPECT_NE(out.find(",https://site.example/new/edited.html,"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3) << out;

  const std::string html_path = dir.path() + "/changes.html";
  ASSERT_EQ(RunCli("report changes --format html --output " + html_path + flags, &out), 0) << out;
  const std::string html = ReadWholeFile(html_path);
  EXPECT_NE(html.find("<h1>Changes from sweep jan to sweep feb</h1>"), std::string::npos);
  EXPECT_NE(html.find("https://site.example/new/edited.html"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(html_path + ".partial"));

  // Bad usage: exit 2 with a message.
  EXPECT_EQ(RunCli("report changes --from jan" + flags, &out), 2) << out;
  EXPECT_NE(out.find("give both from and to"), std::string::npos) << out;
  EXPECT_EQ(RunCli("report changes --from jan --to nope" + flags, &out), 2) << out;
  EXPECT_NE(out.find("sweep nope not found"), std::string::npos) << out;
  EXPECT_EQ(RunCli("report changes --format xml" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("report changes --list teleported --format csv" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("report changes --list moved --format html" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("report changes --store " + dir.path() + "/nothing-here", &out), 1) << out;

  // The pages of the clusters, of the history and of one URL, to files.
  const std::string clusters_path = dir.path() + "/clusters.html";
  ASSERT_EQ(RunCli("report clusters --output " + clusters_path + flags, &out), 0) << out;
  EXPECT_NE(ReadWholeFile(clusters_path).find("<h1>Clusters by bytes in common</h1>"),
            std::string::npos);
  ASSERT_EQ(RunCli("report history --format json" + flags, &out), 0) << out;
  const json history = json::parse(out, nullptr, false);
  ASSERT_TRUE(history.is_object()) << out;
  ASSERT_EQ(history["series"].size(), 1u) << out;
  EXPECT_EQ(history["series"][0]["moved"], truth.moved);
  ASSERT_EQ(RunCli("report history --format json --host site.example" + flags, &out), 0) << out;
  const json site = json::parse(out, nullptr, false);
  ASSERT_TRUE(site.is_object()) << out;
  EXPECT_EQ(site["host"], "site.example");
  EXPECT_EQ(site["series"][0]["moved"], truth.moved);
  ASSERT_EQ(RunCli("report history --link-base http://localhost:8080/reports" + flags, &out), 0)
      << out;
  EXPECT_NE(out.find("<h1>Changes over all sweeps</h1>"), std::string::npos);
  EXPECT_NE(out.find("href=\"http://localhost:8080/reports/changes?from=jan&amp;to=feb\""),
            std::string::npos);
  const std::string url_path = dir.path() + "/url.html";
  ASSERT_EQ(RunCli("report url https://site.example/edit.html --output " + url_path + flags, &out),
            0)
      << out;
  const std::string timeline = ReadWholeFile(url_path);
  EXPECT_NE(timeline.find("<h1>The history of one URL</h1>"), std::string::npos);
  EXPECT_NE(timeline.find("2026-02-01 00:00"), std::string::npos);
  EXPECT_EQ(RunCli("report url https://site.example/never.html" + flags, &out), 2) << out;
  EXPECT_NE(out.find("never stored"), std::string::npos) << out;
  EXPECT_EQ(RunCli("report clusters --limit 0" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("report history --format csv" + flags, &out), 2) << out;

  // The daemon serves the same report; its reads need the token.
  const std::string token_file = dir.WriteSecret("token", "s3cret-token-0123\n");
  Daemon daemon(dir, store, "[auth]\ntoken_file = \"" + token_file + "\"\nprotect_reads = true\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const int port = daemon.port();
  const std::string auth = "Authorization: Bearer s3cret-token-0123\r\n";
  int status = 0;
  GetJson(port, "/v1/reports/changes?from=jan&to=feb", &status);
  EXPECT_EQ(status, 401);
  {
    HttpClient client(port);
    // A browser that has not signed in is sent to the form (docs/API.md, "Signing in").
    EXPECT_EQ(client.Request("GET", "/reports/changes").status, 303);
    EXPECT_EQ(client.Request("GET", "/reports/changes", "", "", "Authorization: Bearer no\r\n")
                  .status,
              401);
  }
  const json served = GetJson(port, "/v1/reports/changes?from=jan&to=feb", &status, auth);
  ASSERT_EQ(status, 200) << served.dump();
  ExpectCounts(served, truth);
  {
    HttpClient client(port);
    HttpResponse page = client.Request("GET", "/reports/changes?from=jan&to=feb", "", "", auth);
    EXPECT_EQ(page.status, 200);
    EXPECT_EQ(page.headers["content-type"], "text/html; charset=utf-8");
    EXPECT_NE(page.headers["content-security-policy"].find("default-src 'none'"),
              std::string::npos);
    EXPECT_NE(page.body.find("<h1>Changes from sweep jan to sweep feb</h1>"), std::string::npos);
    // The changes page links each URL to its timeline on this server, and the other reports.
    EXPECT_NE(page.body.find("href=\"url?url=https%3A%2F%2Fsite.example%2Fnew%2Fedited.html\""),
              std::string::npos);
    EXPECT_NE(page.body.find("<a href=\"history\">"), std::string::npos);
    HttpResponse api_page =
        client.Request("GET", "/v1/reports/changes?from=jan&to=feb&format=html", "", "", auth);
    EXPECT_EQ(api_page.status, 200);
    EXPECT_NE(api_page.body.find("href=\"../../reports/url?url="), std::string::npos);
    HttpResponse clusters = client.Request("GET", "/reports/clusters", "", "", auth);
    EXPECT_EQ(clusters.status, 200);
    EXPECT_NE(clusters.body.find("<h1>Clusters by bytes in common</h1>"), std::string::npos);
    HttpResponse identical = client.Request("GET", "/reports/identical", "", "", auth);
    EXPECT_EQ(identical.status, 200);
    EXPECT_NE(identical.body.find("<h1>Identical content</h1>"), std::string::npos);
    HttpResponse history_page = client.Request("GET", "/reports/history", "", "", auth);
    EXPECT_EQ(history_page.status, 200);
    EXPECT_NE(history_page.body.find("<a href=\"changes?from=jan&amp;to=feb\">"),
              std::string::npos);
    const json history_json = GetJson(port, "/v1/reports/history", &status, auth);
    EXPECT_EQ(status, 200);
    EXPECT_EQ(history_json["series"][0]["moved"], truth.moved);
    const json host_json = GetJson(port, "/v1/reports/history?host=site.example", &status, auth);
    EXPECT_EQ(status, 200);
    EXPECT_EQ(host_json["series"][0]["moved"], truth.moved);
    HttpResponse host_page =
        client.Request("GET", "/reports/history?host=site.example", "", "", auth);
    EXPECT_EQ(host_page.status, 200);
    EXPECT_NE(host_page.body.find("<h1>Changes over all sweeps on site.example</h1>"),
              std::string::npos);
    EXPECT_EQ(client.Request("GET", "/reports/history?format=json", "", "", auth).status, 400);
    HttpResponse url = client.Request(
        "GET", "/reports/url?url=" + Q("https://site.example/edit.html"), "", "", auth);
    EXPECT_EQ(url.status, 200);
    EXPECT_EQ(url.headers["content-type"], "text/html; charset=utf-8");
    EXPECT_NE(url.body.find("https://site.example/edit.html"), std::string::npos);
    EXPECT_EQ(
        client.Request("GET", "/reports/url?url=" + Q("https://site.example/never"), "", "", auth)
            .status,
        404);
    EXPECT_EQ(client.Request("GET", "/reports/clusters?limit=0", "", "", auth).status, 400);
    // The index links every report, relative to where it is served.
    EXPECT_EQ(client.Request("GET", "/reports/").status, 303);  // to the sign-in form
    HttpResponse index = client.Request("GET", "/reports/", "", "", auth);
    EXPECT_EQ(index.status, 200);
    EXPECT_NE(index.body.find("<h1>Reports</h1>"), std::string::npos);
    EXPECT_NE(index.body.find("href=\"changes?from=jan&amp;to=feb\""), std::string::npos)
        << index.body;
    for (const char* name : {"clusters", "identical", "history"}) {
      EXPECT_NE(index.body.find("href=\"" + std::string(name) + "\""), std::string::npos) << name;
    }
    EXPECT_NE(index.body.find("action=\"url\""), std::string::npos);
    EXPECT_NE(index.headers["content-security-policy"].find("form-action 'self'"),
              std::string::npos);
    HttpResponse bare = client.Request("GET", "/reports", "", "", auth);
    EXPECT_EQ(bare.status, 200);
    EXPECT_NE(bare.body.find("href=\"reports/changes?from=jan&amp;to=feb\""), std::string::npos);
    EXPECT_EQ(client.Request("GET", "/reports/?x=1", "", "", auth).status, 400);
    EXPECT_EQ(client.Request("GET", "/reports/clusters?colour=red", "", "", auth).status, 400);
    HttpResponse csv = client.Request(
        "GET", "/v1/reports/changes?from=jan&to=feb&format=csv&list=moved", "", "", auth);
    EXPECT_EQ(csv.status, 200);
    EXPECT_EQ(csv.headers["content-type"].rfind("text/csv", 0), 0u);
    EXPECT_EQ(std::count(csv.body.begin(), csv.body.end(), '\n'), 3) << csv.body;
    HttpResponse hosts =
        client.Request("GET", "/v1/reports/changes?from=jan&to=feb&format=csv", "", "", auth);
    EXPECT_EQ(hosts.status, 200);
    EXPECT_EQ(hosts.body.rfind("host,urls,unchanged,changed,moved,died,", 0), 0u) << hosts.body;
    EXPECT_NE(hosts.body.find("\r\nsite.example,8,1,1,2,1,0,1,2,0,"), std::string::npos)
        << hosts.body;
  }
  // Paging: one row a page, no repeats, no gaps.
  std::vector<std::string> urls;
  std::string after;
  for (int i = 0; i < 5; ++i) {
    const json page = GetJson(
        port, "/v1/reports/changes?from=jan&to=feb&list=moved&limit=1" + after, &status, auth);
    ASSERT_EQ(status, 200) << page.dump();
    for (const json& r : page["rows"]) urls.push_back(r["url"]);
    if (page["next_after"].is_null()) break;
    after = "&after=" + page["next_after"].dump();
  }
  // In URL id order: ingest reads a folder in name order.
  EXPECT_EQ(urls, (std::vector<std::string>{"https://site.example/old/edited.html",
                                            "https://site.example/old/page.html"}));

  // Bad parameters: 400 naming the problem; an unknown sweep: 404.
  for (const auto& [target, words] : std::vector<std::pair<std::string, std::string>>{
           {"/v1/reports/changes?format=xml", "format must be"},
           {"/v1/reports/changes?list=teleported", "list must be one of"},
           {"/v1/reports/changes?after=3", "after and limit page a list"},
           {"/v1/reports/changes?list=moved&limit=0", "is not an integer in 1..1000"},
           {"/v1/reports/changes?list=moved&limit=1001", "is not an integer in 1..1000"},
           {"/v1/reports/changes?list=moved&after=x", "is not an integer in 0.."},
           {"/v1/reports/changes?list=moved&format=html", "list is for format=json"},
           {"/v1/reports/changes?from=jan", "give both from and to"},
           {"/v1/reports/changes?from=jan&to=jan", "the same sweep"},
           {"/v1/reports/changes?colour=red", "colour"},
           {"/reports/changes?format=json", "format"}}) {
    const json error = GetJson(port, target, &status, auth);
    EXPECT_EQ(status, 400) << target << " " << error.dump();
    EXPECT_NE(error.dump().find(words), std::string::npos) << target << " " << error.dump();
  }
  const json unknown = GetJson(port, "/v1/reports/changes?from=jan&to=march", &status, auth);
  EXPECT_EQ(status, 404) << unknown.dump();
  EXPECT_NE(unknown.dump().find("sweep march not found"), std::string::npos) << unknown.dump();

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

}  // namespace
}  // namespace shingled::testing
