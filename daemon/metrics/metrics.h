// The daemon's Prometheus metrics (prometheus-cpp core: the registry and its text serializer;
// /metrics is served by our own HTTP server, not by prometheus-cpp's pull exposer).
//
// Names are shingled_*, with units in the names and _total on counters. Labels have bounded
// values: verdicts, content kinds (html, text, binary), route names (never raw paths) and
// status codes.
//
// Thread-safety: every method is safe to call from any thread.
#ifndef SHINGLED_DAEMON_METRICS_H_
#define SHINGLED_DAEMON_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "crawler/crawler.h"
#include "store/store.h"

namespace shingled::daemon {

class Metrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // --- ingest (called by the pipeline) ---
  void PageIngested(store::Verdict verdict, std::string_view content_kind, uint64_t bytes,
                    double latency_s);
  void PageFailed(std::string_view reason);
  void Sketched(double seconds);
  // A page whose raw bytes were already stored: its document's sketch was reused.
  void SketchReused();
  void Committed(size_t pages, double seconds);
  // The commit size the writer has chosen (BatchSizer::chosen, daemon/ingest/batch_sizer.h).
  void SetBatchLimit(size_t pages);
  // A group commit failed: `reason` is "disk_full" or "map_full" (store::OutOfSpaceReason), or
  // "error" (anything else: the store then refuses writes until a restart).
  void CommitFailed(std::string_view reason);
  // The pipeline is out of space (IngestPipeline::out_of_space): shingled_store_writable is 0
  // until writes resume.
  void SetOutOfSpace(bool out_of_space);
  void SetQueue(uint64_t pages, uint64_t bytes);
  // The queue's bounds (ingest.queue_pages, ingest.queue_bytes), set once at start-up, so that
  // alerts can compare the queue with them.
  void SetQueueCapacity(uint64_t pages, uint64_t bytes);

  // --- HTTP ---
  void HttpRequest(std::string_view route, unsigned status, double seconds);

  // --- crawler (called by daemon/crawl/crawl_sweep.cc) ---
  // A sweep starts: counts it, sets the running gauge, and takes the next progress as new.
  void CrawlSweepStarted();
  // The running sweep's progress: the counters advance by what changed since the last call for
  // this sweep (so calling often costs nothing extra), the gauges take its values.
  void CrawlProgressed(const crawler::CrawlProgress& progress);
  // The sweep ended: its last progress, and the running gauge back to 0.
  void CrawlSweepFinished(const crawler::CrawlProgress& progress);

  // --- retention (daemon/ingest/retention.h) ---
  // One step's removals and the URLs it looked at.
  void RetentionStepped(const store::RetentionStep& step);
  void RetentionPassDone();

  // Refreshes the store and process figures, then serializes every metric in the Prometheus
  // text format (version 0.0.4). `store` may be null (figures left as they were); `store_dir`
  // is its directory, for the size of its data file on disk.
  std::string Scrape(const store::Store* store, const std::string& store_dir);

 private:
  void UpdateStore(const store::Store& store, const std::string& store_dir);
  void UpdateProcess();

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& pages_;
  prometheus::Family<prometheus::Counter>& page_failures_;
  prometheus::Counter& bytes_;
  prometheus::Histogram& ingest_latency_;
  prometheus::Histogram& sketch_time_;
  prometheus::Counter& sketches_reused_;
  prometheus::Histogram& commit_latency_;
  prometheus::Histogram& batch_size_;
  prometheus::Family<prometheus::Counter>& commit_failures_;
  prometheus::Gauge& queue_pages_;
  prometheus::Gauge& queue_bytes_;
  prometheus::Gauge& batch_limit_;
  prometheus::Gauge& queue_capacity_pages_;
  prometheus::Gauge& queue_capacity_bytes_;
  prometheus::Family<prometheus::Counter>& http_requests_;
  prometheus::Family<prometheus::Histogram>& http_duration_;
  prometheus::Gauge& documents_;
  prometheus::Gauge& urls_;
  prometheus::Gauge& versions_;
  prometheus::Gauge& clusters_;
  prometheus::Gauge& multi_document_clusters_;
  prometheus::Gauge& largest_cluster_;
  prometheus::Gauge& disk_bytes_;
  prometheus::Gauge& buffered_postings_;
  prometheus::Gauge& buffered_fingerprints_;
  prometheus::Gauge& key_filter_bytes_;
  prometheus::Gauge& map_used_bytes_;
  prometheus::Gauge& map_size_bytes_;
  // For alerts (ops/prometheus/shingled-rules.yml): the limits the store can grow to, and
  // whether it still accepts writes.
  prometheus::Gauge& map_max_bytes_;
  prometheus::Gauge& filesystem_free_bytes_;
  prometheus::Gauge& filesystem_size_bytes_;
  prometheus::Gauge& writable_;
  std::atomic<bool> out_of_space_{false};
  // Deprecated: the shingled_process_* names, kept for one release beside the standard ones.
  prometheus::Gauge& rss_bytes_;
  prometheus::Counter& cpu_seconds_;
  prometheus::Gauge& open_fds_;
  prometheus::Gauge& start_time_;
  // The process figures under the names every Prometheus client library exports (process_*),
  // which dashboards and alerts made for any exporter expect.
  prometheus::Gauge& process_rss_bytes_;
  prometheus::Gauge& process_virtual_bytes_;
  prometheus::Counter& process_cpu_seconds_;
  prometheus::Gauge& process_open_fds_;
  prometheus::Gauge& process_max_fds_;
  prometheus::Gauge& process_start_time_;
  prometheus::Family<prometheus::Counter>& crawler_fetches_;
  prometheus::Family<prometheus::Counter>& crawler_errors_;
  prometheus::Counter& crawler_robots_fetches_;
  prometheus::Counter& crawler_robots_disallowed_;
  prometheus::Counter& crawler_out_of_scope_;
  prometheus::Counter& crawler_sweeps_;
  prometheus::Gauge& crawler_sweep_running_;
  prometheus::Gauge& crawler_queue_;
  prometheus::Gauge& crawler_in_flight_;
  prometheus::Family<prometheus::Counter>& retention_removed_;
  prometheus::Counter& retention_examined_;
  prometheus::Counter& retention_passes_;
  prometheus::Gauge& retention_last_pass_;

  // State below is protected by mu_.
  std::mutex mu_;
  double cpu_seconds_seen_ = 0;
  // The running sweep's progress as last counted.
  crawler::CrawlProgress crawl_seen_;
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_METRICS_H_
