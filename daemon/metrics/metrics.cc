#include "daemon/metrics/metrics.h"

#include <dirent.h>
#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "crawler/fetcher.h"
#include "store/mapped_file.h"

namespace shingled::daemon {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// 100 us to ~26 s, doubling: covers a sketch of a small page up to a commit under a full queue.
Histogram::BucketBoundaries LatencyBuckets() {
  Histogram::BucketBoundaries b;
  for (int i = 0; i < 19; ++i) b.push_back(std::ldexp(0.0001, i));  // 0.0001 * 2^18 = 26.2
  return b;
}

// Every value of the route label: daemon/api/api.cc's route names, "unknown" for a path that is
// none of them, and "none" for the answers the server makes itself.
constexpr const char* kRoutes[] = {"healthz",
                                   "readyz",
                                   "metrics",
                                   "pages",
                                   "similar",
                                   "urls",
                                   "lost",
                                   "sweeps",
                                   "stats",
                                   "crawl",
                                   "crawl_stop",
                                   "clusters",
                                   "documents",
                                   "document_common",   // bytes in common
                                   "cluster_template",  // templates
                                   "templates",
                                   "forget",  // takedowns
                                   "forgets",
                                   "sweep_close",
                                   "sweep_reopen",
                                   "cluster_list",
                                   "identical",
                                   "reports_changes",
                                   "reports_changes_page",
                                   "reports_identical",  // repository reports
                                   "reports_clusters",   // repository reports
                                   "reports_clusters_page",
                                   "reports_identical_page",
                                   "reports_history",
                                   "reports_history_page",
                                   "reports_url_page",
                                   "reports_index_page",
                                   "login",
                                   "logout",
                                   "unknown",
                                   "none"};

Histogram::BucketBoundaries BatchBuckets() {
  Histogram::BucketBoundaries b;
  for (int i = 0; i <= 16; ++i) b.push_back(std::ldexp(1.0, i));
  return b;
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      pages_(BuildCounter()
                 .Name("shingled_pages_ingested_total")
                 .Help("Pages committed to the store, by verdict and content kind")
                 .Register(*registry_)),
      page_failures_(BuildCounter()
                         .Name("shingled_pages_failed_total")
                         .Help("Pages accepted but not stored, by reason")
                         .Register(*registry_)),
      bytes_(BuildCounter()
                 .Name("shingled_ingested_bytes_total")
                 .Help("Bytes of page bodies committed")
                 .Register(*registry_)
                 .Add({})),
      ingest_latency_(BuildHistogram()
                          .Name("shingled_ingest_latency_seconds")
                          .Help("From a page's admission to its durable commit")
                          .Register(*registry_)
                          .Add({}, LatencyBuckets())),
      sketch_time_(BuildHistogram()
                       .Name("shingled_sketch_duration_seconds")
                       .Help("Canonicalizing and sketching one page")
                       .Register(*registry_)
                       .Add({}, LatencyBuckets())),
      sketches_reused_(BuildCounter()
                           .Name("shingled_sketches_reused_total")
                           .Help("Pages not sketched: their raw bytes were already stored, and "
                                 "that document's sketch was used")
                           .Register(*registry_)
                           .Add({})),
      commit_latency_(BuildHistogram()
                          .Name("shingled_store_commit_duration_seconds")
                          .Help("One group commit (Store::Apply, fsync included)")
                          .Register(*registry_)
                          .Add({}, LatencyBuckets())),
      batch_size_(BuildHistogram()
                      .Name("shingled_store_commit_batch_pages")
                      .Help("Pages per group commit")
                      .Register(*registry_)
                      .Add({}, BatchBuckets())),
      commit_failures_(BuildCounter()
                           .Name("shingled_store_commit_failures_total")
                           .Help("Group commits that failed, by reason: disk_full, map_full "
                                 "(writes resume when there is room) or error")
                           .Register(*registry_)),
      queue_pages_(BuildGauge()
                       .Name("shingled_ingest_queue_pages")
                       .Help("Pages accepted and not yet committed")
                       .Register(*registry_)
                       .Add({})),
      queue_bytes_(BuildGauge()
                       .Name("shingled_ingest_queue_bytes")
                       .Help("Bytes of page bodies accepted and not yet sketched")
                       .Register(*registry_)
                       .Add({})),
      batch_limit_(BuildGauge()
                       .Name("shingled_store_commit_batch_limit")
                       .Help("The most pages the writer commits at once: ingest.batch_pages, "
                             "ingest.min_batch_pages for a while after a failed commit, and with "
                             "ingest.measure_batch_size the size it has chosen between them")
                       .Register(*registry_)
                       .Add({})),
      queue_capacity_pages_(BuildGauge()
                                .Name("shingled_ingest_queue_capacity_pages")
                                .Help("Pages the ingest queue admits at most (ingest.queue_pages); "
                                      "beyond it, POST /v1/pages answers 503")
                                .Register(*registry_)
                                .Add({})),
      queue_capacity_bytes_(BuildGauge()
                                .Name("shingled_ingest_queue_capacity_bytes")
                                .Help("Bytes of page bodies the ingest queue admits at most "
                                      "(ingest.queue_bytes)")
                                .Register(*registry_)
                                .Add({})),
      http_requests_(BuildCounter()
                         .Name("shingled_http_requests_total")
                         .Help("HTTP responses by route and status code")
                         .Register(*registry_)),
      http_duration_(BuildHistogram()
                         .Name("shingled_http_request_duration_seconds")
                         .Help("From a complete request to its response, by route")
                         .Register(*registry_)),
      documents_(BuildGauge()
                     .Name("shingled_store_documents")
                     .Help("Distinct documents")
                     .Register(*registry_)
                     .Add({})),
      urls_(BuildGauge().Name("shingled_store_urls").Help("URLs").Register(*registry_).Add({})),
      versions_(BuildGauge()
                    .Name("shingled_store_url_versions")
                    .Help("Dated URL versions")
                    .Register(*registry_)
                    .Add({})),
      clusters_(BuildGauge()
                    .Name("shingled_store_clusters")
                    .Help("Clusters, singletons included: every document is in exactly one")
                    .Register(*registry_)
                    .Add({})),
      multi_document_clusters_(BuildGauge()
                                   .Name("shingled_store_multi_document_clusters")
                                   .Help("Clusters of two or more documents")
                                   .Register(*registry_)
                                   .Add({})),
      largest_cluster_(BuildGauge()
                           .Name("shingled_store_largest_cluster_documents")
                           .Help("Documents in the largest cluster")
                           .Register(*registry_)
                           .Add({})),
      disk_bytes_(BuildGauge()
                      .Name("shingled_store_disk_bytes")
                      .Help("Disk space of the store's data file")
                      .Register(*registry_)
                      .Add({})),
      buffered_postings_(BuildGauge()
                             .Name("shingled_store_buffered_postings")
                             .Help("Postings in the write buffer (in memory, not yet in the "
                                   "B-trees)")
                             .Register(*registry_)
                             .Add({})),
      buffered_fingerprints_(BuildGauge()
                                 .Name("shingled_store_buffered_fingerprints")
                                 .Help("Fingerprint entries in the write buffer (in memory, not "
                                       "yet in the B-trees)")
                                 .Register(*registry_)
                                 .Add({})),
      key_filter_bytes_(BuildGauge()
                            .Name("shingled_store_key_filter_bytes")
                            .Help("Memory of the writer's filter of the keys in the posting and "
                                  "fingerprint indexes")
                            .Register(*registry_)
                            .Add({})),
      map_used_bytes_(BuildGauge()
                          .Name("shingled_store_map_used_bytes")
                          .Help("Pages in use in the memory map, in bytes")
                          .Register(*registry_)
                          .Add({})),
      map_size_bytes_(BuildGauge()
                          .Name("shingled_store_map_size_bytes")
                          .Help("Size of the memory map (it doubles when full)")
                          .Register(*registry_)
                          .Add({})),
      map_max_bytes_(BuildGauge()
                         .Name("shingled_store_map_max_bytes")
                         .Help("Size the memory map may grow to (store.max_map_size); a batch "
                               "that does not fit then fails")
                         .Register(*registry_)
                         .Add({})),
      filesystem_free_bytes_(BuildGauge()
                                 .Name("shingled_store_filesystem_free_bytes")
                                 .Help("Free space on the store's file system, for the daemon "
                                       "(blocks not reserved for root)")
                                 .Register(*registry_)
                                 .Add({})),
      filesystem_size_bytes_(BuildGauge()
                                 .Name("shingled_store_filesystem_size_bytes")
                                 .Help("Size of the store's file system")
                                 .Register(*registry_)
                                 .Add({})),
      writable_(BuildGauge()
                    .Name("shingled_store_writable")
                    .Help("1 while the store accepts writes; 0 while it is out of space (a "
                          "full disk or map: writes resume when there is room) or after another "
                          "failed commit made it refuse them (a restart reopens it)")
                    .Register(*registry_)
                    .Add({})),
      rss_bytes_(BuildGauge()
                     .Name("shingled_process_resident_memory_bytes")
                     .Help("Deprecated, removed in the next release: process_resident_memory_bytes")
                     .Register(*registry_)
                     .Add({})),
      cpu_seconds_(BuildCounter()
                       .Name("shingled_process_cpu_seconds_total")
                       .Help("Deprecated, removed in the next release: process_cpu_seconds_total")
                       .Register(*registry_)
                       .Add({})),
      open_fds_(BuildGauge()
                    .Name("shingled_process_open_fds")
                    .Help("Deprecated, removed in the next release: process_open_fds")
                    .Register(*registry_)
                    .Add({})),
      start_time_(BuildGauge()
                      .Name("shingled_process_start_time_seconds")
                      .Help("Deprecated, removed in the next release: process_start_time_seconds")
                      .Register(*registry_)
                      .Add({})),
      process_rss_bytes_(BuildGauge()
                             .Name("process_resident_memory_bytes")
                             .Help("Resident memory size in bytes.")
                             .Register(*registry_)
                             .Add({})),
      process_virtual_bytes_(BuildGauge()
                                 .Name("process_virtual_memory_bytes")
                                 .Help("Virtual memory size in bytes.")
                                 .Register(*registry_)
                                 .Add({})),
      process_cpu_seconds_(BuildCounter()
                               .Name("process_cpu_seconds_total")
                               .Help("Total user and system CPU time spent in seconds.")
                               .Register(*registry_)
                               .Add({})),
      process_open_fds_(BuildGauge()
                            .Name("process_open_fds")
                            .Help("Number of open file descriptors.")
                            .Register(*registry_)
                            .Add({})),
      process_max_fds_(BuildGauge()
                           .Name("process_max_fds")
                           .Help("Maximum number of open file descriptors.")
                           .Register(*registry_)
                           .Add({})),
      process_start_time_(BuildGauge()
                              .Name("process_start_time_seconds")
                              .Help("Start time of the process since unix epoch in seconds.")
                              .Register(*registry_)
                              .Add({})),
      crawler_fetches_(BuildCounter()
                           .Name("shingled_crawler_fetches_total")
                           .Help("Page fetches finished by the crawler, by outcome (page, dead, "
                                 "redirected, error)")
                           .Register(*registry_)),
      crawler_errors_(BuildCounter()
                          .Name("shingled_crawler_fetch_errors_total")
                          .Help("Crawler fetches that failed, by kind (timeout, http_5xx, ...)")
                          .Register(*registry_)),
      crawler_robots_fetches_(BuildCounter()
                                  .Name("shingled_crawler_robots_fetches_total")
                                  .Help("robots.txt fetches")
                                  .Register(*registry_)
                                  .Add({})),
      crawler_robots_disallowed_(BuildCounter()
                                     .Name("shingled_crawler_robots_disallowed_total")
                                     .Help("URLs not fetched because robots.txt disallows them")
                                     .Register(*registry_)
                                     .Add({})),
      crawler_out_of_scope_(BuildCounter()
                                .Name("shingled_crawler_out_of_scope_total")
                                .Help("Links and known URLs not fetched: outside the scope")
                                .Register(*registry_)
                                .Add({})),
      crawler_sweeps_(BuildCounter()
                          .Name("shingled_crawler_sweeps_total")
                          .Help("Crawler sweeps started")
                          .Register(*registry_)
                          .Add({})),
      crawler_sweep_running_(BuildGauge()
                                 .Name("shingled_crawler_sweep_running")
                                 .Help("1 while a crawler sweep runs")
                                 .Register(*registry_)
                                 .Add({})),
      crawler_queue_(BuildGauge()
                         .Name("shingled_crawler_queue_urls")
                         .Help("URLs in the running sweep's frontier")
                         .Register(*registry_)
                         .Add({})),
      crawler_in_flight_(BuildGauge()
                             .Name("shingled_crawler_in_flight_fetches")
                             .Help("Crawler fetches in flight (robots.txt included)")
                             .Register(*registry_)
                             .Add({})),
      retention_removed_(BuildCounter()
                             .Name("shingled_retention_removed_total")
                             .Help("What retention removed: versions, URLs and documents")
                             .Register(*registry_)),
      retention_examined_(BuildCounter()
                              .Name("shingled_retention_urls_examined_total")
                              .Help("URLs retention looked at (a pass looks at every URL)")
                              .Register(*registry_)
                              .Add({})),
      retention_passes_(BuildCounter()
                            .Name("shingled_retention_passes_total")
                            .Help("Retention passes completed")
                            .Register(*registry_)
                            .Add({})),
      retention_last_pass_(BuildGauge()
                               .Name("shingled_retention_last_pass_timestamp_seconds")
                               .Help("When the last retention pass completed (Unix time; 0: none "
                                     "since start)")
                               .Register(*registry_)
                               .Add({})) {
  for (const char* what : {"versions", "urls", "documents"}) retention_removed_.Add({{"what", what}});
  // Every label set known in advance from zero, so that a counter reads 0 rather than being
  // absent before its first event, and rate() and alerts work from the first one on.
  for (const char* outcome : {"page", "dead", "redirected", "error"}) {
    crawler_fetches_.Add({{"outcome", outcome}});
  }
  for (int kind = static_cast<int>(crawler::FetchErrorKind::kBadUrl);
       kind <= static_cast<int>(crawler::FetchErrorKind::kNetwork); ++kind) {
    crawler_errors_.Add({{"kind", std::string(crawler::FetchErrorKindName(
                                      static_cast<crawler::FetchErrorKind>(kind)))}});
  }
  // An HTTP error answer has no FetchErrorKind; crawler.cc names it by its class.
  for (const char* kind : {"http_4xx", "http_5xx"}) crawler_errors_.Add({{"kind", kind}});
  for (const char* reason : {"rejected", "commit"}) page_failures_.Add({{"reason", reason}});
  for (const char* reason : {"disk_full", "map_full", "error"}) {
    commit_failures_.Add({{"reason", reason}});
  }
  for (store::Verdict verdict :
       {store::Verdict::kNew, store::Verdict::kUnchanged, store::Verdict::kDuplicate,
        store::Verdict::kNearDuplicate, store::Verdict::kGone, store::Verdict::kFailed,
        store::Verdict::kRedirect}) {
    for (const char* kind : {"html", "text", "binary"}) {
      pages_.Add({{"verdict", std::string(store::VerdictName(verdict))}, {"content_kind", kind}});
    }
  }
  // The API's route names (api.cc); the status codes are not known in advance, so
  // shingled_http_requests_total starts with each route's first answer.
  for (const char* route : kRoutes) http_duration_.Add({{"route", route}}, LatencyBuckets());
  // The Metrics are made at start-up; /proc/uptime, which would give the exact start, is hidden
  // by the unit's ProcSubset=pid.
  const double start =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  start_time_.Set(start);
  process_start_time_.Set(start);
  BuildGauge()
      .Name("shingled_build_info")
      .Help("Version of the running binary")
      .Register(*registry_)
      .Add({{"version", "0.1.0"}})
      .Set(1);
}

void Metrics::PageIngested(store::Verdict verdict, std::string_view content_kind, uint64_t bytes,
                           double latency_s) {
  pages_
      .Add({{"verdict", std::string(store::VerdictName(verdict))},
            {"content_kind", std::string(content_kind)}})
      .Increment();
  bytes_.Increment(static_cast<double>(bytes));
  ingest_latency_.Observe(latency_s);
}

void Metrics::PageFailed(std::string_view reason) {
  page_failures_.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::Sketched(double seconds) { sketch_time_.Observe(seconds); }
void Metrics::SketchReused() { sketches_reused_.Increment(); }

void Metrics::Committed(size_t pages, double seconds) {
  commit_latency_.Observe(seconds);
  batch_size_.Observe(static_cast<double>(pages));
}

void Metrics::SetBatchLimit(size_t pages) { batch_limit_.Set(static_cast<double>(pages)); }

void Metrics::CommitFailed(std::string_view reason) {
  commit_failures_.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::SetOutOfSpace(bool out_of_space) { out_of_space_ = out_of_space; }

void Metrics::SetQueue(uint64_t pages, uint64_t bytes) {
  queue_pages_.Set(static_cast<double>(pages));
  queue_bytes_.Set(static_cast<double>(bytes));
}

void Metrics::SetQueueCapacity(uint64_t pages, uint64_t bytes) {
  queue_capacity_pages_.Set(static_cast<double>(pages));
  queue_capacity_bytes_.Set(static_cast<double>(bytes));
}

void Metrics::HttpRequest(std::string_view route, unsigned status, double seconds) {
  http_requests_.Add({{"route", std::string(route)}, {"code", std::to_string(status)}}).Increment();
  http_duration_.Add({{"route", std::string(route)}}, LatencyBuckets()).Observe(seconds);
}

void Metrics::RetentionStepped(const store::RetentionStep& step) {
  retention_removed_.Add({{"what", "versions"}}).Increment(static_cast<double>(step.versions));
  retention_removed_.Add({{"what", "urls"}}).Increment(static_cast<double>(step.urls));
  retention_removed_.Add({{"what", "documents"}}).Increment(static_cast<double>(step.documents));
  retention_examined_.Increment(static_cast<double>(step.urls_examined));
}

void Metrics::RetentionPassDone() {
  retention_passes_.Increment();
  retention_last_pass_.Set(static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                                   std::chrono::system_clock::now().time_since_epoch())
                                                   .count()));
}

void Metrics::CrawlSweepStarted() {
  std::lock_guard<std::mutex> lock(mu_);
  crawl_seen_ = crawler::CrawlProgress();
  crawler_sweeps_.Increment();
  crawler_sweep_running_.Set(1);
}

void Metrics::CrawlProgressed(const crawler::CrawlProgress& p) {
  std::lock_guard<std::mutex> lock(mu_);
  crawler::CrawlProgress& seen = crawl_seen_;
  // Progress only grows within a sweep; a smaller value would be another sweep's.
  auto advance = [](prometheus::Counter& counter, uint64_t now, uint64_t* before) {
    if (now > *before) counter.Increment(static_cast<double>(now - *before));
    *before = std::max(now, *before);
  };
  advance(crawler_fetches_.Add({{"outcome", "page"}}), p.pages, &seen.pages);
  advance(crawler_fetches_.Add({{"outcome", "dead"}}), p.dead, &seen.dead);
  advance(crawler_fetches_.Add({{"outcome", "redirected"}}), p.redirected, &seen.redirected);
  advance(crawler_fetches_.Add({{"outcome", "error"}}), p.errors, &seen.errors);
  for (const auto& [kind, n] : p.errors_by_kind) {
    advance(crawler_errors_.Add({{"kind", kind}}), n, &seen.errors_by_kind[kind]);
  }
  advance(crawler_robots_fetches_, p.robots_fetches, &seen.robots_fetches);
  advance(crawler_robots_disallowed_, p.robots_disallowed, &seen.robots_disallowed);
  advance(crawler_out_of_scope_, p.out_of_scope, &seen.out_of_scope);
  crawler_queue_.Set(static_cast<double>(p.queued));
  crawler_in_flight_.Set(static_cast<double>(p.in_flight));
}

void Metrics::CrawlSweepFinished(const crawler::CrawlProgress& progress) {
  CrawlProgressed(progress);
  crawler_queue_.Set(0);
  crawler_in_flight_.Set(0);
  crawler_sweep_running_.Set(0);
}

void Metrics::UpdateStore(const store::Store& store, const std::string& store_dir) {
  StatusOr<store::StoreStats> stats = store.Stats();
  if (stats.ok()) {
    documents_.Set(static_cast<double>(stats->documents));
    urls_.Set(static_cast<double>(stats->urls));
    versions_.Set(static_cast<double>(stats->versions));
    // The store counts clusters of two or more documents (count.clusters) and lists their
    // members (cluster_members, one entry per member); every other document is a cluster of its
    // own.
    uint64_t clustered = 0;
    for (const store::DatabaseStats& db : stats->databases) {
      if (db.name == "cluster_members") clustered = db.entries;
    }
    const uint64_t singletons = stats->documents - std::min(clustered, stats->documents);
    clusters_.Set(static_cast<double>(singletons + stats->clusters));
    multi_document_clusters_.Set(static_cast<double>(stats->clusters));
    largest_cluster_.Set(static_cast<double>(stats->largest_cluster));
    buffered_postings_.Set(static_cast<double>(stats->buffered_postings));
    buffered_fingerprints_.Set(static_cast<double>(stats->buffered_fingerprints));
    key_filter_bytes_.Set(static_cast<double>(stats->key_filter_bytes));
    map_used_bytes_.Set(static_cast<double>(stats->file_bytes));
    map_size_bytes_.Set(static_cast<double>(stats->map_size));
    // Without growth (a test option), or without a map file (the cluster), the map's present
    // size is its limit.
    const store::MappedFile* mapped_file = store.mapped_file();
    map_max_bytes_.Set(static_cast<double>(
        mapped_file != nullptr && store.options().grow_map
            ? std::max(mapped_file->max_map_size(), stats->map_size)
            : stats->map_size));
  }
  writable_.Set(store.health().ok() && !out_of_space_ ? 1 : 0);
  struct statvfs fs;
  if (::statvfs(store_dir.c_str(), &fs) == 0) {
    filesystem_free_bytes_.Set(static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize));
    filesystem_size_bytes_.Set(static_cast<double>(fs.f_blocks) * static_cast<double>(fs.f_frsize));
  }
  // Blocks actually allocated: data.mdb is sparse up to the map size on some file systems.
  struct stat st;
  if (::stat((store_dir + "/data.mdb").c_str(), &st) == 0) {
    disk_bytes_.Set(static_cast<double>(st.st_blocks) * 512);
  }
}

void Metrics::UpdateProcess() {
  long page = sysconf(_SC_PAGESIZE);
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (statm >> size >> resident) {
    rss_bytes_.Set(static_cast<double>(resident * page));
    process_rss_bytes_.Set(static_cast<double>(resident * page));
    process_virtual_bytes_.Set(static_cast<double>(size * page));
  }

  std::ifstream stat("/proc/self/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  if (paren != std::string::npos) {
    // After the command name: field 3 is the state; utime and stime are fields 14 and 15.
    std::istringstream fields(line.substr(paren + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    const double cpu = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    std::lock_guard<std::mutex> lock(mu_);
    if (cpu > cpu_seconds_seen_) {
      cpu_seconds_.Increment(cpu - cpu_seconds_seen_);
      process_cpu_seconds_.Increment(cpu - cpu_seconds_seen_);
      cpu_seconds_seen_ = cpu;
    }
  }

  int fds = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++fds;
    closedir(dir);
    fds -= 3;  // ".", ".." and the directory's own descriptor
  }
  open_fds_.Set(fds);
  process_open_fds_.Set(fds);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    process_max_fds_.Set(limit.rlim_cur == RLIM_INFINITY ? -1
                                                         : static_cast<double>(limit.rlim_cur));
  }
}

std::string Metrics::Scrape(const store::Store* store, const std::string& store_dir) {
  if (store != nullptr) UpdateStore(*store, store_dir);
  UpdateProcess();
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace shingled::daemon
