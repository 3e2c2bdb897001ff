// GET /metrics as the daemon serves it: counters of known label sets are there at 0 before their
// first event, and the store's cluster count includes singletons as its help text says.
#include <signal.h>

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
           R"(shingled_http_request_duration_seconds_count{route="pages"})",
       }) {
    EXPECT_EQ(Sample(r.body, series), 0) << series << "\n" << r.body;
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

}  // namespace
}  // namespace shingled::testing
