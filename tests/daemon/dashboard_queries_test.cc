// Every query of the Grafana dashboard (ops/grafana/shingled.json) against a real Prometheus that
// scrapes a real daemon under load, with the recording rules of ops/prometheus/shingled-rules.yml
// loaded: none may answer an error, and none may be empty. The load covers every panel: pages
// posted with each verdict, a bad request and an unknown path (HTTP errors), queries, and a crawl
// of a loopback site with a page that answers 500 (crawler errors). Grafana is not in Debian 12:
// its variables are substituted here as Grafana would ($__rate_interval with a 1 s scrape
// interval, the test's time range for $__range). Skipped when /usr/bin/prometheus is absent.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/crawler/test_server.h"
#include "tests/crawler/test_site.h"
#include "tests/daemon/daemon_harness.h"
#include "tests/daemon/prometheus_server.h"
#include "tests/ops/grafana_dashboard.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

const std::string kOps = SHINGLED_OPS_DIR;

// Panels that may legitimately answer no data in this test, and why. None: counters of known
// label sets start at 0 (a failure count reads 0, not absent), and the load produces every
// other series (HTTP errors, crawler errors, each verdict). A panel added here needs a reason.
const std::set<std::string> kMayBeEmpty = {};

// The sum of the samples of `metric` (every label set) in the daemon's /metrics text.
double SumOfSamples(const std::string& text, const std::string& metric) {
  std::istringstream lines(text);
  std::string line;
  double sum = 0;
  while (std::getline(lines, line)) {
    if (line.rfind(metric + "{", 0) == 0 || line.rfind(metric + " ", 0) == 0) {
      sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return sum;
}

// The scalar of an instant query's first result, NaN when there is none.
double Scalar(const json& answer) {
  if (!answer.is_object() || answer["status"] != "success" || answer["data"]["result"].empty()) {
    return NAN;
  }
  return std::stod(answer["data"]["result"][0]["value"][1].get<std::string>());
}

// The largest value of a series of a range or instant answer, NaN values skipped (NaN if none).
double MaxValue(const json& series) {
  double max = NAN;
  auto take = [&max](const json& point) {
    const double v = std::stod(point[1].get<std::string>());
    if (!std::isnan(v) && (std::isnan(max) || v > max)) max = v;
  };
  if (series.contains("values")) {
    for (const json& point : series["values"]) take(point);
  } else if (series.contains("value")) {
    take(series["value"]);
  }
  return max;
}

std::string CrawlerConfig(const TestServer& server) {
  return "[crawler]\nenabled = true\nseeds = [\"" + server.Url("/") +
         "\"]\nallow_private_addresses = true\nper_host_delay_ms = 0\nevery = \"off\"\n";
}

TEST(DashboardQueriesTest, EveryQueryAnswersDataFromADaemonUnderLoad) {
  if (!PrometheusInstalled()) {
    GTEST_SKIP() << kPrometheusBinary << " is not installed (scripts/install-deps.sh installs it)";
  }
  const json dashboard = LoadDashboard(kOps + "/grafana/shingled.json");
  ASSERT_FALSE(dashboard.is_discarded());
  const std::vector<DashboardTarget> targets = DashboardTargets(dashboard);
  ASSERT_GT(targets.size(), 20u);

  Site site;
  TestServer server;
  site.Serve(&server, {"/", "/a.html", "/b.html", "/broken.html", "/moved.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/robots.txt", 200, "User-agent: *\nAllow: /\n");
  site.Set("/", 200,
           "<a href='a.html'>a</a><a href='b.html'>b</a><a href='broken.html'>broken</a>"
           "<a href='moved.html'>moved</a><a href='dead.html'>dead</a>");
  site.Set("/a.html", 200, Article("apples"));
  site.Set("/b.html", 200, Article("bananas"));
  site.Set("/broken.html", 500, "try again later");
  site.Set("/moved.html", 301, "/b.html");
  // /dead.html is not served: 404.

  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", CrawlerConfig(server));
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  // A series is born at its first event, and rate() sees only the rises after its first sample:
  // the error answers come once before the first scrape and again under load.
  auto http_errors = [&daemon] {
    EXPECT_EQ(HttpClient(daemon.port()).Request("POST", "/v1/pages", "x", "text/html").status, 400);
    EXPECT_EQ(HttpClient(daemon.port()).Request("GET", "/v1/nothing").status, 404);
  };
  http_errors();
  PrometheusServer prometheus(
      dir, ScrapeConfig(daemon.port(), {kOps + "/prometheus/shingled-rules.yml"}));
  ASSERT_TRUE(prometheus.ready()) << prometheus.log();
  // The load comes after a first scrape, so that every counter's rise is seen by rate().
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline && Scalar(prometheus.Query("up{job=\"shingled\"}")) != 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // poll interval
  }
  ASSERT_EQ(Scalar(prometheus.Query("up{job=\"shingled\"}")), 1) << prometheus.log();
  // The dashboard's time range starts at the first scrape.
  const double start = Scalar(prometheus.Query("timestamp(up{job=\"shingled\"})"));

  // Pages with each verdict through POST /v1/pages (the default sweep)...
  struct Post {
    std::string url, body, content_type, query;
  };
  const std::vector<Post> posts = {
      {server.Url("/a.html"), Article("apples"), "text/html", ""},     // new
      {"https://p.example/copy", Article("apples"), "text/html", ""},  // duplicate
      // near_duplicate
      {"https://p.example/near", Article("apples", "One more sentence was added."), "text/html",
       ""},
      {"https://p.example/notes", "plain words of a text page", "text/plain", ""},  // new
      {"https://p.example/gone", "", "text/html", "&status=404"},                   // gone
  };
  for (const Post& post : posts) {
    HttpClient client(daemon.port());
    HttpResponse r = client.Request("POST", "/v1/pages?url=" + Q(post.url) + post.query, post.body,
                                    post.content_type);
    EXPECT_EQ(r.status, 200) << post.url << " " << r.body;
  }
  // ... HTTP errors and queries ...
  http_errors();
  EXPECT_EQ(HttpClient(daemon.port())
                .Request("GET", "/v1/similar?url=" + Q("https://p.example/copy"))
                .status,
            200);
  EXPECT_EQ(HttpClient(daemon.port()).Request("GET", "/v1/stats").status, 200);
  // ... and a crawl: /a.html unchanged, /b.html new, a redirect, a 404 and a 500.
  {
    HttpClient client(daemon.port());
    HttpResponse r = client.Request("POST", "/v1/crawl");
    ASSERT_EQ(r.status, 202) << r.body;
  }
  json sweep;
  while (Clock::now() < deadline) {
    HttpClient client(daemon.port());
    sweep = json::parse(client.Request("GET", "/v1/crawl").body, nullptr, false);
    if (sweep.is_object() && sweep["running"] == false && sweep["sweep"].is_object() &&
        !sweep["sweep"]["finished"].is_null()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  }
  ASSERT_TRUE(sweep.is_object() && sweep["sweep"].is_object()) << sweep.dump();
  EXPECT_EQ(sweep["sweep"]["errors"], 1) << sweep.dump();
  EXPECT_EQ(sweep["sweep"]["dead"], 1) << sweep.dump();

  // Wait until Prometheus has scraped the final counts, and the rules have seen them.
  const std::string metrics = HttpClient(daemon.port()).Request("GET", "/metrics").body;
  const double pages = SumOfSamples(metrics, "shingled_pages_ingested_total");
  const double fetches = SumOfSamples(metrics, "shingled_crawler_fetches_total");
  ASSERT_GE(pages, 8) << metrics;
  auto caught_up = [&] {
    return Scalar(prometheus.Query("sum(shingled_pages_ingested_total)")) == pages &&
           Scalar(prometheus.Query("sum(shingled_crawler_fetches_total)")) == fetches &&
           Scalar(prometheus.Query("count(instance:shingled_crawler_fetch_errors:ratio_rate5m)")) ==
               1;
  };
  while (Clock::now() < deadline && !caught_up()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // poll interval
  }
  ASSERT_TRUE(caught_up()) << prometheus.log();
  // Then a few more scrapes, so that the range holds the load and some time after it, as a
  // dashboard would show it.
  const std::string scrapes = "count_over_time(up{job=\"shingled\"}[1h])";
  const double scraped = Scalar(prometheus.Query(scrapes));
  while (Clock::now() < deadline && !(Scalar(prometheus.Query(scrapes)) >= scraped + 4)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // poll interval
  }
  ASSERT_GE(Scalar(prometheus.Query(scrapes)), scraped + 4);
  const double end = UnixSeconds();

  // Grafana's values: with a 1 s scrape interval, $__rate_interval is 4 s (4 scrape intervals);
  // 5 s leaves room for a late scrape. $__range: this test's span.
  const std::map<std::string, std::string> variables = {
      {"__rate_interval", "5s"},
      {"__interval", "1s"},
      {"__range", std::to_string(static_cast<int>(std::ceil(end - start)) + 1) + "s"},
      {"job", "shingled"},
      {"instance", "127.0.0.1:" + std::to_string(daemon.port())},
  };
  std::map<std::string, json> results;  // by "panel/refId"
  for (const DashboardTarget& target : targets) {
    const std::string name = target.panel + "/" + target.ref_id;
    std::set<std::string> unknown;
    const std::string expr = SubstituteGrafanaVariables(target.expr, variables, &unknown);
    EXPECT_TRUE(unknown.empty()) << name << ": unknown variable $" << *unknown.begin();
    const json answer =
        target.instant ? prometheus.Query(expr, end) : prometheus.QueryRange(expr, start, end, 1);
    ASSERT_TRUE(answer.is_object()) << name << ": no JSON answer to " << expr;
    EXPECT_EQ(answer["status"], "success") << name << ": " << expr << "\n" << answer.dump();
    const json& result = answer["data"]["result"];
    bool has_value = false;
    for (const json& series : result) has_value = has_value || !std::isnan(MaxValue(series));
    if (!kMayBeEmpty.count(target.panel)) {
      EXPECT_TRUE(has_value) << name << " answered no data: " << expr << "\n" << answer.dump();
    }
    results[name] = result;
  }

  // Some panels must show what the load did, not just any value.
  auto max_of = [&results](const std::string& name, const std::string& label,
                           const std::string& value) {
    for (const json& series : results[name]) {
      if (series["metric"].value(label, "") == value) return MaxValue(series);
    }
    return static_cast<double>(NAN);
  };
  for (const char* verdict :
       {"new", "unchanged", "duplicate", "near_duplicate", "gone", "redirect", "failed"}) {
    EXPECT_GT(max_of("Pages ingested per second, by verdict/A", "verdict", verdict), 0) << verdict;
  }
  EXPECT_GT(max_of("Duplicate and near-duplicate shares/A", "verdict", "duplicate"), 0);
  EXPECT_GT(max_of("Crawler errors, by kind/A", "kind", "http_5xx"), 0);
  EXPECT_GT(max_of("Crawler fetches per second, by outcome/A", "outcome", "dead"), 0);
  EXPECT_GT(max_of("Crawler fetches per second, by outcome/A", "outcome", "error"), 0);
  EXPECT_GT(max_of("HTTP error responses, by route and code/A", "code", "400"), 0);
  EXPECT_GT(max_of("HTTP latency p99, by route/A", "route", "similar"), 0);
  ASSERT_EQ(results["Store writable/A"].size(), 1u);
  EXPECT_EQ(MaxValue(results["Store writable/A"][0]), 1);
  ASSERT_EQ(results["Documents/A"].size(), 1u);
  EXPECT_GE(MaxValue(results["Documents/A"][0]), 4);
}

}  // namespace
}  // namespace shingled::testing
