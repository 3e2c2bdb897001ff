// The crawler's command line (issue 6): `shingled crawl` runs one sweep with the built-in
// crawler and stores what it fetched, through the ingest pipeline (one store writer, group
// commit), with the date of each fetch on each URL, and prints a JSON summary.
//
// Backpressure: a page the pipeline refuses (full queue) is held and the crawler is told to
// stop pulling (hard limit) until the held pages are in; above half the queue it is told to
// slow down (soft limit).
#include <chrono>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "config/config.h"
#include "crawler/clock.h"
#include "crawler/crawler.h"
#include "crawler/curl_fetcher.h"
#include "crawler/warc.h"
#include "daemon/cli.h"
#include "daemon/ingest.h"
#include "daemon/json_codec.h"
#include "daemon/store_setup.h"
#include "daemon/task_pool.h"

namespace shingled::cli {
namespace {

using daemon::Json;

int64_t UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

int Fail(const char* command, const Status& status, int code = kExitFailure) {
  std::cerr << "shingled " << command << ": " << status.message() << "\n";
  return code;
}

StatusOr<daemon::OpenedStore> OpenFromFlags(const std::string& store_dir,
                                            const std::string& config_file) {
  config::Config config;
  if (!config_file.empty()) {
    StatusOr<config::Config> loaded = config::LoadConfigFile(config_file);
    if (!loaded.ok()) return loaded.status();
    config = std::move(*loaded);
  }
  if (!store_dir.empty()) config.store.path = store_dir;
  return daemon::OpenStore(config);
}

// Feeds pages into the pipeline and counts verdicts. Submit() never blocks: a full pipeline
// answers ResourceExhausted, the page is held, and the caller is told to back off.
class PageSink {
 public:
  PageSink(daemon::IngestPipeline* pipeline, size_t queue_pages)
      : pipeline_(pipeline), queue_pages_(queue_pages) {}

  // Returns false when the pipeline is full (the job is kept and retried by Flush()).
  bool Offer(daemon::PageJob job) {
    held_.push_back(std::move(job));
    return Flush();
  }
  // Submits held jobs in order; false while the pipeline refuses them.
  bool Flush() {
    while (!held_.empty()) {
      std::vector<daemon::PageJob> jobs{held_.front()};
      const std::string url = held_.front().url;
      Status s =
          pipeline_->Submit(std::move(jobs), [this, url](std::vector<daemon::PageOutcome> out) {
            std::lock_guard<std::mutex> lock(mu_);
            if (out[0].status.ok()) {
              ++stored_;
              ++verdicts_[std::string(store::VerdictName(out[0].result.verdict))];
            } else {
              errors_.push_back(url + ": " + out[0].status.message());
            }
            --outstanding_;
            cv_.notify_all();
          });
      if (s.code() == StatusCode::kResourceExhausted) return false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (s.ok()) {
          ++outstanding_;
        } else {
          errors_.push_back(url + ": " + s.message());
        }
      }
      held_.pop_front();
    }
    return true;
  }
  // The soft limit: more than half the queue waiting.
  bool Busy() const { return pipeline_->queued_pages() > queue_pages_ / 2; }
  void WaitUntilFlushed() {
    while (!Flush()) WaitForRoom();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return outstanding_ == 0; });
  }
  void WaitForRoom() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(50),
                 [&] { return pipeline_->queued_pages() < queue_pages_ / 2; });
  }
  Json Summary() {
    std::lock_guard<std::mutex> lock(mu_);
    Json verdicts = Json::object();
    for (const auto& [name, n] : verdicts_) verdicts[name] = n;
    return Json{{"stored", stored_}, {"verdicts", verdicts}, {"store_errors", errors_.size()}};
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

 private:
  daemon::IngestPipeline* const pipeline_;
  const size_t queue_pages_;
  std::deque<daemon::PageJob> held_;  // only the crawler's thread touches it
  std::mutex mu_;
  std::condition_variable cv_;
  size_t outstanding_ = 0;
  uint64_t stored_ = 0;
  std::map<std::string, uint64_t> verdicts_;
  std::vector<std::string> errors_;
};

struct CrawlFlags {
  std::vector<std::string> seeds;
  std::string store_dir;
  std::string config_file;
  std::string sweep;
  bool allow_private_addresses = false;
  uint64_t max_pages = 10000;
  double delay_seconds = 1.0;
  int max_depth = 5;
  bool keep_open = false;
  std::string user_agent = "shingled/0.1 (near-duplicate page detection)";
};

int RunCrawl(const CrawlFlags& flags) {
  StatusOr<daemon::OpenedStore> opened = OpenFromFlags(flags.store_dir, flags.config_file);
  if (!opened.ok()) return Fail("crawl", opened.status());
  crawler::RealClock* clock = crawler::RealClock::Get();
  const int64_t start = UnixSeconds(clock->WallNow());
  StatusOr<store::SweepInfo> sweep = opened->store->OpenSweep(flags.sweep, start);
  if (!sweep.ok()) return Fail("crawl", sweep.status());

  crawler::CurlFetcherOptions fetcher_options;
  fetcher_options.allow_private_addresses = flags.allow_private_addresses;
  fetcher_options.user_agent = flags.user_agent;
  StatusOr<std::unique_ptr<crawler::CurlFetcher>> fetcher =
      crawler::CurlFetcher::Create(fetcher_options);
  if (!fetcher.ok()) return Fail("crawl", fetcher.status());

  crawler::CrawlerOptions options;
  options.seeds = flags.seeds;
  options.max_pages = flags.max_pages;
  options.max_depth = flags.max_depth;
  options.per_host_delay =
      std::chrono::milliseconds(static_cast<int64_t>(flags.delay_seconds * 1000));
  options.product_token = flags.user_agent.substr(0, flags.user_agent.find('/'));

  daemon::TaskPool pool(std::max(1u, std::thread::hardware_concurrency()), 1);
  daemon::PipelineOptions pipeline_options;
  pipeline_options.queue_pages = 512;
  daemon::IngestPipeline pipeline(opened->store.get(), opened->context, &pool, nullptr,
                                  pipeline_options);
  PageSink sink(&pipeline, pipeline_options.queue_pages);
  crawler::Crawler crawler(options, fetcher->get(), clock);
  const auto started = std::chrono::steady_clock::now();
  Status run = crawler.Run(
      {},
      [&](crawler::CrawledPage page) {
        daemon::PageJob job;
        job.sweep = sweep->id;
        job.date = UnixSeconds(page.fetched_at);
        switch (page.outcome) {
          case crawler::PageOutcome::kPage:
            job.url = page.final_url;
            job.http_status = page.http_status;
            if (const std::string* type = crawler::FindHeader(page.headers, "Content-Type")) {
              job.content_type = *type;
            }
            job.body = std::move(page.body);
            job.canonical_link = page.canonical.value_or("");
            break;
          case crawler::PageOutcome::kDead:
            job.url = page.url;
            // A host that no longer resolves is as dead as a 404.
            job.http_status = page.http_status == 410 ? 410 : 404;
            break;
          case crawler::PageOutcome::kRedirected:
          case crawler::PageOutcome::kError:
            return crawler::Backpressure::kContinue;  // counted by the crawler
        }
        if (!sink.Offer(std::move(job))) return crawler::Backpressure::kStop;
        return sink.Busy() ? crawler::Backpressure::kSlowDown : crawler::Backpressure::kContinue;
      },
      [&] {
        if (!sink.Flush()) return crawler::Backpressure::kStop;
        return sink.Busy() ? crawler::Backpressure::kSlowDown : crawler::Backpressure::kContinue;
      });
  if (!run.ok()) return Fail("crawl", run, kExitUsage);
  sink.WaitUntilFlushed();
  pipeline.Stop();
  pool.Stop();
  bool closed = false;
  if (!flags.keep_open) {
    StatusOr<store::SweepInfo> closed_sweep =
        opened->store->CloseSweep(sweep->id, UnixSeconds(clock->WallNow()));
    if (!closed_sweep.ok()) return Fail("crawl", closed_sweep.status());
    closed = true;
  }
  const crawler::CrawlProgress progress = crawler.Progress();
  Json errors_by_kind = Json::object();
  for (const auto& [kind, n] : progress.errors_by_kind) errors_by_kind[kind] = n;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  Json summary{{"sweep", flags.sweep},
               {"closed", closed},
               {"fetched", progress.fetched},
               {"pages", progress.pages},
               {"dead", progress.dead},
               {"redirected", progress.redirected},
               {"errors", progress.errors},
               {"errors_by_kind", errors_by_kind},
               {"robots_fetches", progress.robots_fetches},
               {"robots_disallowed", progress.robots_disallowed},
               {"out_of_scope", progress.out_of_scope},
               {"over_budget", progress.over_budget},
               {"seconds", seconds},
               {"pages_per_second", seconds > 0 ? progress.fetched / seconds : 0.0}};
  summary.update(sink.Summary());
  for (const std::string& e : sink.errors()) std::cerr << "shingled crawl: " << e << "\n";
  std::cout << summary.dump() << "\n";
  return sink.errors().empty() ? kExitOk : kExitFailure;
}

}  // namespace

void AddCrawlCommand(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<CrawlFlags>();
  CLI::App* cmd = app->add_subcommand("crawl", "Crawl one sweep and store what it fetched");
  cmd->add_option("--seed", flags->seeds, "Seed URL (repeatable); their hosts are the scope")
      ->required();
  cmd->add_option("--store", flags->store_dir, "Store directory (overrides store.path)");
  cmd->add_option("--config", flags->config_file, "TOML config (store options, [sketch])");
  cmd->add_option("--sweep", flags->sweep, "Sweep name (opened if needed)")->required();
  cmd->add_flag("--allow-private-addresses", flags->allow_private_addresses,
                "Allow private, loopback and link-local addresses");
  cmd->add_option("--max-pages", flags->max_pages, "Most page fetches")
      ->check(CLI::Range(0, 100000000));
  cmd->add_option("--delay", flags->delay_seconds, "Seconds between fetches of one host")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--max-depth", flags->max_depth, "Link depth from the seeds")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--keep-open", flags->keep_open,
                "Leave the sweep open (do not mark unseen URLs gone)");
  cmd->add_option("--user-agent", flags->user_agent,
                  "User-Agent; its product token is used for robots.txt");
  cmd->callback([=] { *exit_code = RunCrawl(*flags); });
}

}  // namespace shingled::cli
