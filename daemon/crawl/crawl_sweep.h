// One crawler sweep into the store, shared by `shingled crawl` (daemon/cli/cli_crawl.cc) and the
// daemon's scheduler (daemon/crawl/crawl_scheduler.h).
//
// WARC output ([crawler] warc_dir, daemon/crawl/crawl_warc.h): every HTTP answer the crawler gets
// is written to WARC files before its page goes to the pipeline. A directory that cannot be written
// fails the sweep before any fetch; a write error later (disk full) stops the crawl as Stop()
// would, leaves the sweep open and the last file `.open`, and is the report's status: an archive
// with holes in it is not what the operator asked for, and the next sweep tries again.
//
// A sweep opens (or continues) a store sweep, lists the store's live URLs (Store::KnownUrls) and
// hands those in the crawler's scope (crawler::CrawlScope) to the crawler as revisits besides the
// seeds, feeds every page through the ingest pipeline with the date of its fetch, and waits until
// every page handed over is committed. A 404 or 410, or a host that no longer resolves, is stored
// as a dead version at the fetch's date. The sweep is closed only when the crawl ended with its
// frontier empty; a sweep stopped early or cut short by max_pages is left open, so that URLs it
// did not reach are not recorded gone. Closing records "gone" only for the live URLs in the
// crawler's scope that the sweep did not see, whose fetch did not fail and that robots.txt did
// not refuse (crawler::PageOutcome::kRobotsDisallowed): URLs other sweeps brought in (pages
// posted to the API, WARC files) are not the crawler's to declare gone, a timeout or a 5xx says
// nothing about whether a page still exists, and neither does a robots.txt that now disallows a
// known URL (or answers 5xx, which disallows its whole host for the sweep).
//
// Backpressure (docs/DEVELOPMENT.md, soft then hard limit): above half the pipeline's page queue
// the crawler is told to slow down; a page the pipeline refuses (full queue) is held and the
// crawler stops pulling from its frontier until the held pages are in. A page the store refuses for
// lack of space (a full disk or map) is held the same way, and one it admitted but could not commit
// for it is handed over again, until there is room: the sweep waits for them (see Sink).
//
// Two ways to stop: Stop() is for shutdown and holds for every later Run(); StopSweep() (POST
// /v1/crawl/stop) ends one sweep and holds until ClearSweepStop(), so that the next sweep runs.
//
// Thread-safety: Run() is called from one thread at a time; Stop(), Cancel(), StopSweep(),
// ClearSweepStop() and Snapshot() from any thread.
#ifndef SHINGLED_DAEMON_CRAWL_SWEEP_H_
#define SHINGLED_DAEMON_CRAWL_SWEEP_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/config.h"
#include "crawler/clock.h"
#include "crawler/crawler.h"
#include "crawler/curl_fetcher.h"
#include "daemon/crawl/crawl_warc.h"
#include "daemon/ingest/ingest.h"
#include "daemon/metrics/metrics.h"
#include "daemon/wire/json_codec.h"
#include "store/store.h"

namespace shingled::daemon {

// The crawler's, the fetcher's and the WARC output's options, built from the [crawler] table.
struct CrawlSetup {
  crawler::CrawlerOptions crawler;
  crawler::CurlFetcherOptions fetcher;
  CrawlWarcOptions warc;  // warc.dir empty: no WARC output
};

// Builds both from `config`, parsing every seed and prefix with the crawler's URL parser.
// InvalidArgument naming the key ("crawler.seeds: ...") for a URL the crawler cannot use.
StatusOr<CrawlSetup> MakeCrawlSetup(const config::CrawlerOptions& config);

// What a sweep did, while it runs and after.
struct SweepReport {
  std::string name;
  store::SweepId id = 0;
  int64_t started = 0;   // Unix seconds
  int64_t finished = 0;  // 0 while running
  bool running = false;
  bool closed = false;
  std::string left_open_because;  // why it was not closed; empty when closed or running
  Status status;                  // why it failed (could not open, no valid URL, ...)
  uint64_t known_urls = 0;        // live URLs the store listed (the crawler keeps those in scope)
  crawler::CrawlProgress progress;
  uint64_t stored = 0;  // pages and dead versions committed
  std::map<std::string, uint64_t> verdicts;
  std::vector<std::string> store_errors;  // "URL: why", at most kMaxStoreErrors of them
  uint64_t store_error_count = 0;
  // Pages the store could not commit for lack of space, handed over again (each time counted).
  uint64_t store_retries = 0;
  // While pages wait for the store to have room: its out-of-space error; else empty.
  std::string waiting_for_room;
  double seconds = 0;  // wall time from start to end (or to now)
  WarcReport warc;     // filled when the sweep ends
};
inline constexpr size_t kMaxStoreErrors = 100;

// The report as JSON (docs/API.md, GET /v1/crawl; the `shingled crawl` summary): dates as
// ISO-8601 strings, finished null while running.
Json SweepReportJson(const SweepReport& report);

class SweepRunner {
 public:
  // `store`, `pipeline` and `metrics` (may be null) must outlive the runner. `queue_pages` is the
  // pipeline's page bound, for the soft limit.
  SweepRunner(store::Store* store, IngestPipeline* pipeline, size_t queue_pages, CrawlSetup setup,
              Metrics* metrics);
  ~SweepRunner();
  SweepRunner(const SweepRunner&) = delete;
  SweepRunner& operator=(const SweepRunner&) = delete;

  // Runs one sweep named `name` to its end on the calling thread (see the file comment) and
  // returns its report. `close` false leaves the sweep open even when its frontier emptied.
  // report.status is not OK when the sweep could not run: AlreadyExists for a closed sweep of
  // that name, InvalidArgument when no seed or known URL is a valid URL,
  // Unavailable after Stop(), store and fetcher errors as they come.
  SweepReport Run(const std::string& name, bool close = true);

  // Stops the running sweep, and every later one: nothing new is fetched; fetches in flight
  // complete and their pages are stored; the sweep is left open. Idempotent.
  void Stop();
  // Stops the running sweep as Stop() does, with left_open_because "stopped on request", but not
  // the sweeps after it. The stop holds until ClearSweepStop(): a Run() that begins meanwhile
  // opens its sweep and leaves it open without fetching (so a stop that comes between a sweep's
  // request and its start is not lost). The caller clears it when the sweep it meant has ended
  // (CrawlScheduler does, under its lock). Idempotent.
  void StopSweep();
  void ClearSweepStop();
  // Stop(), and also ends fetches in flight at once (as failed) and stops waiting for pages not
  // yet committed (the pipeline's own Stop settles them). For the shutdown deadline.
  void Cancel();

  // The running sweep's report, or the last one's (name empty before the first).
  SweepReport Snapshot() const;

  // SIGHUP: the settings of every Run() that begins from now on; a running sweep keeps its own.
  void SetSetup(CrawlSetup setup);

 private:
  class InterruptibleClock;
  class CancellableFetcher;
  struct Sink;

  void Finish(SweepReport* report, const crawler::CrawlProgress& progress);
  // Stop() or StopSweep(): the running sweep ends.
  bool StopRequested() const { return stopped_ || sweep_stopped_; }

  store::Store* const store_;
  IngestPipeline* const pipeline_;
  const size_t queue_pages_;
  Metrics* const metrics_;
  const std::unique_ptr<InterruptibleClock> clock_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> sweep_stopped_{false};  // StopSweep() until ClearSweepStop()
  std::atomic<bool> cancelled_{false};

  // State below is protected by mu_.
  mutable std::mutex mu_;
  CrawlSetup setup_;
  SweepReport report_;
  crawler::Crawler* crawler_ = nullptr;      // while Run() crawls
  CancellableFetcher* fetcher_ = nullptr;    // while Run() crawls
  std::shared_ptr<Sink> sink_;               // while Run() runs
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_CRAWL_SWEEP_H_
