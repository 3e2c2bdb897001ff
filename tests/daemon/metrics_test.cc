// GET /metrics as the daemon serves it: counters of known label sets are there at 0 before their
// first event, and the store's cluster count includes singletons as its help text says; the
// limits the alerts compare with (queue capacity, the map's maximum, the file system's space) and
// whether the store accepts writes, through the daemon and through Metrics itself; the standard
// process_* names.
#include "daemon/metrics/metrics.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <time.h>

#include <cerrno>
#include <future>
#include <regex>

#include "daemon/ingest/ingest.h"
#include "daemon/ingest/task_pool.h"
#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

// The value of the sample whose line starts with `series` ("name{labels}"), or -1 if absent.
double Sample(const std::string& metrics, const std::string& series) {
  std::istringstream lines(metrics);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

// The bug: shingled_pages_failed_total and shingled_crawler_fetch_errors_total were absent
// until their first event, so alerts on them saw nothing rather than 0.
TEST(MetricsTest, CountersOfKnownLabelsReadZeroBeforeAnyEvent) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  HttpResponse r = HttpClient(daemon.port()).Request("GET", "/metrics");
  ASSERT_EQ(r.status, 200);
  for (const char* series : {
           R"(shingled_pages_failed_total{reason="rejected"})",
           R"(shingled_pages_failed_total{reason="commit"})",
           R"(shingled_crawler_fetch_errors_total{kind="timeout"})",
           R"(shingled_crawler_fetch_errors_total{kind="dns"})",
           R"(shingled_crawler_fetch_errors_total{kind="http_5xx"})",
           R"(shingled_crawler_fetch_errors_total{kind="http_4xx"})",
           R"(shingled_crawler_fetches_total{outcome="error"})",
           R"(shingled_pages_ingested_total{content_kind="html",verdict="new"})",
           R"(shingled_pages_ingested_total{content_kind="binary",verdict="gone"})",
           R"(shingled_pages_ingested_total{content_kind="html",verdict="redirect"})",
           R"(shingled_pages_ingested_total{content_kind="html",verdict="failed"})",
           R"(shingled_http_request_duration_seconds_count{route="pages"})",
           R"(shingled_http_request_duration_seconds_count{route="sweep_reopen"})",
       }) {
    EXPECT_EQ(Sample(r.body, series), 0) << series << "\n" << r.body;
  }
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// Every route name daemon/api/api.cc gives (`route = "NAME"`) has its duration histogram from
// start-up (metrics.cc's kRoutes), as docs/API.md says: a route added to the API without it would
// be absent until its first request, and rate() would miss that request.
TEST(MetricsTest, EveryRouteOfTheApiHasItsDurationFromStartUp) {
  const std::string api = ReadWholeFile(std::string(SHINGLED_SOURCE_DIR) + "/daemon/api/api.cc");
  const std::regex route_name(R"re(route = "([a-z_]+)")re");
  std::vector<std::string> routes;
  for (std::sregex_iterator it(api.begin(), api.end(), route_name), end; it != end; ++it) {
    routes.push_back((*it)[1]);
  }
  ASSERT_GT(routes.size(), 10u) << "daemon/api/api.cc no longer names routes as `route = \"NAME\"`";
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string metrics = HttpClient(daemon.port()).Request("GET", "/metrics").body;
  for (const std::string& route : routes) {
    EXPECT_EQ(
        Sample(metrics, "shingled_http_request_duration_seconds_count{route=\"" + route + "\"}"), 0)
        << route << ": add it to kRoutes in daemon/metrics/metrics.cc";
  }
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// The bug: "Clusters (singletons included)" read 0 for a store of 1,177 documents.
TEST(MetricsTest, ClustersIncludeSingletons) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  HttpClient client(daemon.port());
  const char* kPages[] = {
      "<p>alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima</p>",
      "<p>one two three four five six seven eight nine ten eleven twelve thirteen</p>",
      "<p>red orange yellow green blue indigo violet black white grey brown pink</p>"};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(client
                  .Request("POST", "/v1/pages?url=" + Q("https://m.example/" + std::to_string(i)),
                           kPages[i], "text/html")
                  .status,
              200);
  }
  const std::string metrics = client.Request("GET", "/metrics").body;
  EXPECT_EQ(Sample(metrics, "shingled_store_documents"), 3) << metrics;
  EXPECT_EQ(Sample(metrics, "shingled_store_clusters"), 3) << metrics;
  EXPECT_EQ(Sample(metrics, "shingled_store_multi_document_clusters"), 0) << metrics;
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// The figures ops/prometheus/shingled-rules.yml needs and the daemon did not export: they come
// from the config and the store's file system, and are there from the first scrape.
TEST(MetricsTest, ExportsTheLimitsTheAlertsCompareWith) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store",
                "[ingest]\nqueue_pages = 40000\nqueue_bytes = 300000000\n"
                "[store]\nmax_map_size = 1073741824\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string metrics = HttpClient(daemon.port()).Request("GET", "/metrics").body;
  EXPECT_EQ(Sample(metrics, "shingled_ingest_queue_capacity_pages"), 40000) << metrics;
  EXPECT_EQ(Sample(metrics, "shingled_ingest_queue_capacity_bytes"), 300000000) << metrics;
  EXPECT_EQ(Sample(metrics, "shingled_store_map_max_bytes"), 1073741824) << metrics;
  EXPECT_EQ(Sample(metrics, "shingled_store_writable"), 1) << metrics;
  // The file system's figures, as statvfs gives them to the test (the free space moves).
  struct statvfs fs;
  ASSERT_EQ(statvfs(dir.path().c_str(), &fs), 0);
  EXPECT_EQ(Sample(metrics, "shingled_store_filesystem_size_bytes"),
            static_cast<double>(fs.f_blocks) * static_cast<double>(fs.f_frsize))
      << metrics;
  const double free_bytes = Sample(metrics, "shingled_store_filesystem_free_bytes");
  EXPECT_GT(free_bytes, 0) << metrics;
  EXPECT_LE(free_bytes, Sample(metrics, "shingled_store_filesystem_size_bytes")) << metrics;
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// A failed commit: the store refuses writes, and the metrics say so (ShingledStoreNotWritable,
// ShingledCommitFailed). The daemon cannot be made to fail a commit from outside, so this runs
// the pipeline and Metrics in the test's process over a store whose next commit fails.
TEST(MetricsTest, FailedCommitTurnsWritableToZero) {
  TempDir dir;
  auto created = dedup::SketchContext::Create(dedup::SketchParams{});
  ASSERT_TRUE(created.ok());
  const std::shared_ptr<const dedup::SketchContext> context = *created;
  store::StoreOptions options;
  options.durable = false;  // a throw-away store: no fsync per batch
  auto store = store::Store::Open(dir.path() + "/store", options, *context);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto sweep = (*store)->OpenSweep("s", 1000);
  ASSERT_TRUE(sweep.ok());
  daemon::Metrics metrics;
  daemon::TaskPool pool(1, 100);
  daemon::PipelineOptions pipeline_options;
  pipeline_options.queue_pages = 7;
  daemon::IngestPipeline pipeline(store->get(), context, &pool, &metrics, pipeline_options);
  auto ingest = [&](const std::string& url) {
    daemon::PageJob job;
    job.url = url;
    job.sweep = sweep->id;
    job.date = 2000;
    job.content_type = "text/plain";
    job.body = "one two three four five six seven eight nine ten eleven twelve " + url;
    std::promise<std::vector<daemon::PageOutcome>> done;
    auto future = done.get_future();
    EXPECT_TRUE(pipeline
                    .Submit({job},
                            [&done](std::vector<daemon::PageOutcome> outcomes) {
                              done.set_value(std::move(outcomes));
                            })
                    .ok());
    return future.get();
  };

  ASSERT_TRUE(ingest("https://e.com/1")[0].status.ok());
  std::string text = metrics.Scrape(store->get(), dir.path() + "/store");
  EXPECT_EQ(Sample(text, "shingled_store_writable"), 1) << text;
  for (const char* reason : {"disk_full", "map_full", "error"}) {
    EXPECT_EQ(Sample(text, std::string("shingled_store_commit_failures_total{reason=\"") + reason +
                               "\"}"),
              0)
        << text;
  }
  EXPECT_EQ(Sample(text, "shingled_ingest_queue_capacity_pages"), 7) << text;

  (*store)->FailNextCommitForTesting(EIO);
  EXPECT_FALSE(ingest("https://e.com/2")[0].status.ok());
  text = metrics.Scrape(store->get(), dir.path() + "/store");
  EXPECT_EQ(Sample(text, "shingled_store_writable"), 0) << text;
  EXPECT_EQ(Sample(text, R"(shingled_store_commit_failures_total{reason="error"})"), 1) << text;
  EXPECT_EQ(Sample(text, R"(shingled_pages_failed_total{reason="commit"})"), 1) << text;
  pipeline.Stop();
}

// The names every Prometheus client library exports, which dashboards made for any exporter
// read; the shingled_process_* ones stay for a release, marked deprecated.
TEST(MetricsTest, StandardProcessMetricsBesideTheDeprecatedOnes) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string metrics = HttpClient(daemon.port()).Request("GET", "/metrics").body;
  EXPECT_NE(metrics.find("# TYPE process_cpu_seconds_total counter"), std::string::npos);
  for (const char* gauge : {"process_resident_memory_bytes", "process_virtual_memory_bytes",
                            "process_open_fds", "process_max_fds", "process_start_time_seconds"}) {
    EXPECT_NE(metrics.find(std::string("# TYPE ") + gauge + " gauge"), std::string::npos) << gauge;
  }
  EXPECT_GE(Sample(metrics, "process_cpu_seconds_total"), 0);
  const double resident = Sample(metrics, "process_resident_memory_bytes");
  EXPECT_GT(resident, 1 << 20);
  EXPECT_GE(Sample(metrics, "process_virtual_memory_bytes"), resident);
  const double open_fds = Sample(metrics, "process_open_fds");
  EXPECT_GT(open_fds, 3);  // stdin, stdout, stderr, and the store and the listener
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);  // the daemon inherits ours
  EXPECT_EQ(Sample(metrics, "process_max_fds"), static_cast<double>(limit.rlim_cur));
  // Started within the last minute (a generous bound for a loaded test machine).
  const double now = static_cast<double>(time(nullptr));
  const double start = Sample(metrics, "process_start_time_seconds");
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 60);
  // The old names, with the same figures.
  EXPECT_EQ(Sample(metrics, "shingled_process_start_time_seconds"), start);
  EXPECT_GT(Sample(metrics, "shingled_process_resident_memory_bytes"), 0);
  EXPECT_GE(Sample(metrics, "shingled_process_cpu_seconds_total"), 0);
  EXPECT_GT(Sample(metrics, "shingled_process_open_fds"), 0);
  EXPECT_NE(metrics.find("# HELP shingled_process_open_fds Deprecated"), std::string::npos);
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

}  // namespace
}  // namespace shingled::testing
