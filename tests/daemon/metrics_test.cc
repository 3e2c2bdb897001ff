// GET /metrics as the daemon serves it: counters of known label sets are there at 0 before their
// first event, and the store's cluster count includes singletons as its help text says; the
// limits the alerts compare with (queue capacity, the map's maximum, the file system's space) and
// whether the store accepts writes, through the daemon and through Metrics itself; the standard
// process_* names; HEAD on /healthz, /readyz and /metrics; /metrics in gzip when asked.
#include "daemon/metrics/metrics.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <time.h>
#include <zlib.h>

#include <cerrno>
#include <future>
#include <regex>

#include "daemon/http/compression.h"
#include "daemon/ingest/ingest.h"
#include "daemon/ingest/task_pool.h"
#include "store/mapped_file.h"
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

  (*store)->mapped_file()->FailNextCommitForTesting(EIO);
  EXPECT_FALSE(ingest("https://e.com/2")[0].status.ok());
  text = metrics.Scrape(store->get(), dir.path() + "/store");
  EXPECT_EQ(Sample(text, "shingled_store_writable"), 0) << text;
  EXPECT_EQ(Sample(text, R"(shingled_store_commit_failures_total{reason="error"})"), 1) << text;
  EXPECT_EQ(Sample(text, R"(shingled_pages_failed_total{reason="commit"})"), 1) << text;
  pipeline.Stop();
}

std::string Gunzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  char buf[65536];
  int result = Z_OK;
  while (result == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    result = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
  }
  EXPECT_EQ(result, Z_STREAM_END);
  inflateEnd(&z);
  return out;
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

// Load balancers and uptime monitors probe with HEAD: the GET's header, no body.
TEST(MetricsTest, HeadOnTheProbesAndMetricsAnswersAsGetWithoutABody) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  HttpClient client(daemon.port());  // one connection: a body sent after a HEAD would show
  const std::string healthz = client.Request("GET", "/healthz").body;
  for (const std::string path : {"/healthz", "/readyz", "/metrics"}) {
    const HttpResponse get = client.Request("GET", path);
    ASSERT_EQ(get.status, 200) << path;
    const HttpResponse head = client.Request("HEAD", path);
    EXPECT_EQ(head.status, 200) << path;
    EXPECT_EQ(head.body, "") << path;
    EXPECT_EQ(head.headers.at("content-type"), get.headers.at("content-type")) << path;
    if (path != "/metrics") {  // the metrics' text changes between two scrapes
      EXPECT_EQ(head.headers.at("content-length"), get.headers.at("content-length")) << path;
    } else {
      EXPECT_GT(std::stoul(head.headers.at("content-length")), 1000u);
    }
    // The connection is still in step: no stray body bytes were sent.
    EXPECT_EQ(client.Request("GET", "/healthz").body, healthz) << path;
  }
  EXPECT_EQ(client.Request("HEAD", "/v1/nosuchroute").status, 404);
  const HttpResponse post = client.Request("POST", "/healthz", "x", "text/plain");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.headers.at("allow"), "GET, HEAD");
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(MetricsTest, AcceptEncodingGzip) {
  using daemon::AcceptsGzip;
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("deflate, GZIP;q=0.5, br"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("gzip ; q=1"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("*"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("br, gzip;q=0.000"));
  EXPECT_FALSE(AcceptsGzip("gzipx"));
}

TEST(MetricsTest, MetricsAreGzippedWhenTheScraperAsks) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  HttpClient client(daemon.port());
  // As Prometheus asks.
  const HttpResponse packed = client.Request(
      "GET", "/metrics", "", "",
      "Accept-Encoding: gzip\r\nAccept: application/openmetrics-text;version=1.0.0;q=0.5,"
      "text/plain;version=0.0.4;q=0.4,*/*;q=0.1\r\n");
  ASSERT_EQ(packed.status, 200);
  EXPECT_EQ(packed.headers.at("content-encoding"), "gzip");
  EXPECT_EQ(packed.headers.at("vary"), "Accept-Encoding");
  const std::string text = Gunzip(packed.body);
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("shingled_store_documents 0"), std::string::npos) << text;
  // At least twice smaller: a hundred series of repeated names (seen: about tenfold).
  EXPECT_LT(packed.body.size() * 2, text.size());
  // Not asked, or refused: the text.
  for (const std::string header :
       {"", "Accept-Encoding: gzip;q=0\r\n", "Accept-Encoding: br\r\n"}) {
    const HttpResponse plain = client.Request("GET", "/metrics", "", "", header);
    EXPECT_EQ(plain.headers.count("content-encoding"), 0u) << header;
    EXPECT_NE(plain.body.find("# TYPE process_cpu_seconds_total counter"), std::string::npos);
  }
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

}  // namespace
}  // namespace shingled::testing
