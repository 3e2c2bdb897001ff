// `shingled serve`: the daemon. Wires the config, the store, the ingest pipeline, the HTTP server
// and the process lifecycle (signals, sd_notify) together.
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <thread>
#include <vector>

#include "config/config.h"
#include "daemon/api/api.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/cli_common.h"
#include "daemon/crawl/crawl_scheduler.h"
#include "daemon/crawl/crawl_sweep.h"
#include "daemon/http/http_server.h"
#include "daemon/ingest/ingest.h"
#include "daemon/ingest/retention.h"
#include "daemon/ingest/task_pool.h"
#include "daemon/metrics/metrics.h"
#include "daemon/process/process.h"
#include "daemon/process/store_setup.h"
#include "daemon/reload.h"
#include "daemon/wire/unix_time.h"
#include "store/mapped_file.h"

namespace shingled::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct ServeFlags {
  std::string config_file;
  std::string store_dir;
  std::string listen;
};

using daemon::UnixNow;

// The config file (or the defaults without one) with the flags on top; at start-up and on SIGHUP.
StatusOr<config::Config> LoadServeConfig(const ServeFlags& flags) {
  StatusOr<config::Config> loaded = LoadConfig(flags.config_file, flags.store_dir);
  if (!loaded.ok()) return loaded.status();
  config::Config config = std::move(*loaded);
  if (!flags.listen.empty()) {
    StatusOr<config::ListenAddress> address = config::ParseListenAddress(flags.listen);
    if (!address.ok()) {
      return InvalidArgumentError("--listen: " + std::string(address.status().message()));
    }
    config.server.listen = *address;
  }
  return config;
}

int Serve(const ServeFlags& flags) {
  // Before any thread exists, so that every thread inherits the blocked signals.
  daemon::SignalWatcher signals;
  daemon::SetUpMemory();

  StatusOr<config::Config> loaded = LoadServeConfig(flags);
  if (!loaded.ok()) {
    std::cerr << "shingled serve: " << loaded.status().message() << "\n";
    return kExitUsage;
  }
  const config::Config config = std::move(*loaded);
  daemon::SetUpLogging(config.logging.level);
  for (const std::string& warning : config::ConfigWarnings(config)) {
    spdlog::warn("{}: {}", flags.config_file.empty() ? "the defaults" : flags.config_file, warning);
  }

  // What `shingled config check` refuses stops start-up too, but for the crawler (see
  // CrawlerProblem).
  StatusOr<ServeSetup> setup = MakeServeSetup(config, CrawlerProblem::kStopsTheCrawler);
  if (!setup.ok()) {
    spdlog::critical("{}", setup.status().message());
    return kExitUsage;
  }
  const std::string token = setup->token;

  StatusOr<daemon::PipelineOptions> pipeline_options = daemon::IngestPipelineOptions(config.ingest);
  if (!pipeline_options.ok()) {
    spdlog::critical("{}", pipeline_options.status().message());
    return kExitUsage;
  }

  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(config, /*create=*/true);
  if (!opened.ok()) {
    spdlog::critical("cannot open the store {}: {}", daemon::StoreName(config),
                     opened.status().ToString());
    return kExitFailure;
  }
  store::Store& store = *opened->store;
  spdlog::info("store {} open", daemon::StoreName(config));
  if (!config.ingest.default_sweep.empty()) {
    StatusOr<store::SweepInfo> sweep = store.OpenSweep(config.ingest.default_sweep, UnixNow());
    if (!sweep.ok()) {
      spdlog::warn("default sweep \"{}\": {}; requests must name an open sweep",
                   config.ingest.default_sweep, sweep.status().message());
    }
  }

  const size_t workers = config.ingest.workers > 0
                             ? static_cast<size_t>(config.ingest.workers)
                             : std::max(1u, std::thread::hardware_concurrency());
  // Ingest is bounded by the pipeline's admission; the pool's own bound is for queries, which
  // queue behind admitted pages: leave them room above a full ingest queue.
  daemon::TaskPool pool(workers, static_cast<size_t>(config.ingest.queue_pages) + 256);
  // Reads on threads of their own: a report that walks the whole store never holds a sketch
  // worker.
  const size_t readers = config.server.read_threads > 0
                             ? static_cast<size_t>(config.server.read_threads)
                             : std::max(1u, std::thread::hardware_concurrency() / 2);
  daemon::TaskPool read_pool(readers, static_cast<size_t>(config.server.read_queue));
  daemon::Metrics metrics;
  daemon::IngestPipeline pipeline(&store, opened->context, &pool, &metrics, *pipeline_options);
  // Started on a full disk: reads, probes and metrics answer; writes are refused with
  // the reason (507, /readyz) and resume on their own once there is room.
  if (Status room = store.WriteRoom(); !room.ok()) {
    spdlog::warn("{}; the daemon serves reads, and writes wait for room", room.message());
    pipeline.StartOutOfSpace(std::move(room));
  }

  daemon::ApiOptions api_options;
  // The disk metrics read the LMDB store's directory; a remote store has none here.
  api_options.store_dir = daemon::StoreIsLocal(config) ? config.store.path : "";
  api_options.default_sweep = config.ingest.default_sweep;
  api_options.settings = daemon::ApiSettingsFor(config, token);
  // Each upload may hold a quarter of the ingest queue, so that one WARC leaves room for others.
  api_options.warc.max_in_flight = std::max<size_t>(1, pipeline_options->queue_pages / 4);
  api_options.warc.retry_after_s = static_cast<int>(config.ingest.retry_after_s);
  api_options.retry_after_s = static_cast<int>(config.ingest.retry_after_s);
  api_options.canonicalizer = pipeline_options->canonicalizer;
  api_options.now = UnixNow;
  api_options.read_budget = std::chrono::milliseconds(config.server.read_budget_ms);
  // The crawler: its sweeps go through the same pipeline as POST /v1/pages.
  std::unique_ptr<daemon::CrawlScheduler> crawl;
  if (config.crawler.enabled) {
    if (!setup->crawler_error.ok()) {
      // A seed the crawler cannot use stops the crawler, not the daemon: ingest and queries go
      // on, GET /v1/crawl says why, and a SIGHUP with good seeds does not revive it (the crawler
      // starts with the process).
      spdlog::error("the crawler is not started: {}; serving without it",
                    setup->crawler_error.message());
      api_options.crawler_error = setup->crawler_error.message();
    } else {
      auto runner = std::make_unique<daemon::SweepRunner>(
          &store, &pipeline, pipeline_options->queue_pages, std::move(*setup->crawler), &metrics);
      crawl = std::make_unique<daemon::CrawlScheduler>(
          &store, std::move(runner),
          daemon::CrawlScheduleOptions{config.crawler.every_s, config.crawler.sweep_prefix});
    }
  }
  daemon::Api api(&store, opened->context, &pipeline, &pool, &read_pool, &metrics, api_options,
                  crawl.get());
  if (crawl != nullptr) {
    if (Status s = crawl->Start(); !s.ok()) {
      spdlog::critical("cannot start the crawler: {}", s.ToString());
      pipeline.Stop();
      return kExitFailure;
    }
  }

  boost::asio::io_context ioc(static_cast<int>(config.server.io_threads));
  daemon::HttpServerOptions server_options;
  server_options.read_timeout = std::chrono::milliseconds(config.server.read_timeout_ms);
  server_options.write_timeout = std::chrono::milliseconds(config.server.write_timeout_ms);
  server_options.limits = daemon::HttpLimitsFor(config.limits);
  server_options.access_log = config.logging.access_log;
  // Validated by the config's loader: one of the three names.
  server_options.access_log_format = daemon::ParseAccessLogFormat(config.logging.access_log_format)
                                         .value_or(daemon::AccessLogFormat::kText);
  server_options.max_sessions = static_cast<size_t>(config.server.max_sessions);
  server_options.max_pipelined_requests = static_cast<size_t>(config.server.max_pipelined_requests);
  server_options.retry_after_s = static_cast<int>(config.ingest.retry_after_s);
  // Limits against one client, or many, holding the server.
  server_options.header_timeout = std::chrono::milliseconds(config.server.header_timeout_ms);
  server_options.max_sessions_per_client =
      static_cast<size_t>(config.server.max_sessions_per_client);
  server_options.max_body_bytes_in_flight =
      static_cast<uint64_t>(config.server.max_body_bytes_in_flight);
  server_options.min_body_bytes_per_window =
      static_cast<uint64_t>(config.server.min_body_bytes_per_window);
  server_options.body_rate_window = std::chrono::milliseconds(config.server.body_rate_window_ms);
  auto server = daemon::HttpServer::Create(ioc, config.server.listen.host,
                                           config.server.listen.port, server_options, &api);
  if (!server.ok()) {
    spdlog::critical("{}", server.status().message());
    if (crawl != nullptr) crawl->Stop();
    pipeline.Stop();
    return kExitFailure;
  }
  (*server)->Start();
  const auto endpoint = (*server)->local_endpoint();
  // Tests and scripts read the bound port from this line ("listening on 127.0.0.1:PORT").
  spdlog::info("listening on {}",
               config::ListenAddress{endpoint.address().to_string(), endpoint.port()}.ToString());

  auto work = boost::asio::make_work_guard(ioc);
  std::vector<std::thread> io_threads;
  for (int64_t i = 0; i < config.server.io_threads; ++i)
    io_threads.emplace_back([&ioc] {
      pthread_setname_np(pthread_self(), "http");
      ioc.run();
    });
  if (Status s = daemon::NotifySystemd("READY=1"); !s.ok()) spdlog::warn("{}", s.message());
  // Maps the store's file while requests are served; stops early when the daemon stops.
  std::atomic<bool> stop_warming{false};
  std::thread warming;
  const store::MappedFile* mapped_file = store.mapped_file();  // null on the cluster
  if (config.store.warm_map && mapped_file != nullptr) {
    // At most half of the physical memory: a larger store would be read whole from disk and
    // push out of the page cache what lookups need.
    const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    const uint64_t max_bytes = pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) *
                                                                static_cast<uint64_t>(page_size) / 2
                                                          : UINT64_MAX;
    warming = std::thread([mapped_file, &stop_warming, max_bytes] {
      const Clock::time_point start = Clock::now();
      StatusOr<uint64_t> mapped =
          mapped_file->WarmMap([&stop_warming] { return !stop_warming.load(); }, max_bytes);
      if (!mapped.ok()) {
        spdlog::warn("warming the store's map: {}", mapped.status().ToString());
        return;
      }
      spdlog::info(
          "store map warmed: {} MiB in {} ms", *mapped >> 20,
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    });
  }

  // Retention forgets by date, a bounded step at a time between the writer's commits.
  std::unique_ptr<daemon::RetentionRunner> retention;
  daemon::RetentionSchedule schedule;
  schedule.rules =
      daemon::RetentionRules(config.store.retention_version_days, config.store.retention_gone_days,
                             config.store.retention_step_urls);
  schedule.every = std::chrono::seconds(config.store.retention_every_s);
  if (daemon::RetentionIsOn(schedule.rules)) {
    retention = std::make_unique<daemon::RetentionRunner>(&store, &metrics, schedule);
    retention->Start();
  }

  // SIGHUP reloads what can change while serving (daemon/reload.h); SIGTERM or SIGINT stops.
  daemon::ConfigReloader reloader([&flags] { return LoadServeConfig(flags); }, flags.config_file,
                                  config, token, {&api, server->get(), crawl.get(), &store});
  while (signals.Wait() == daemon::SignalWatcher::Event::kReload) {
    reloader.Reload().IgnoreError();  // logged; the running config stays in force
  }
  const std::string signal_name = signals.stop_signal();
  stop_warming = true;
  if (warming.joinable()) warming.join();
  if (retention != nullptr) retention->Stop();  // after the step in flight
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(config.server.shutdown_deadline_ms);
  spdlog::info("{}: stopping; in-flight requests have {} ms", signal_name,
               config.server.shutdown_deadline_ms);
  daemon::NotifySystemd("STOPPING=1").IgnoreError();  // best effort: systemd knows from the signal
  api.set_shutting_down();
  (*server)->Shutdown();
  // The crawler before the pipeline: the pages of fetches still in flight go in; at the
  // deadline the fetches are cancelled. Its sweep is left open (not closed), so nothing it did
  // not reach is recorded gone.
  if (crawl != nullptr) crawl->Stop(deadline);
  // Sessions close once their read requests are answered; poll rather than add a completion
  // signal to every session for this one wait.
  while ((*server)->live_sessions() > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // WARC uploads still reading stop; what they read is committed (or cancelled past the
  // deadline) and answered for before the I/O threads end.
  api.AbortUploads();
  pipeline.Stop(deadline);
  api.JoinUploads();
  // The aborted uploads' answers are with their sessions now: a moment to write them.
  const Clock::time_point written = Clock::now() + std::chrono::seconds(1);
  while ((*server)->live_sessions() > 0 && Clock::now() < written) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  read_pool.Cancel();
  pool.Cancel();
  work.reset();
  ioc.stop();
  for (std::thread& t : io_threads) t.join();
  server->reset();
  const size_t left = pipeline.queued_pages();
  opened->store.reset();  // closes the LMDB environment
  spdlog::info("stopped; store closed{}",
               left ? " (" + std::to_string(left) + " pages cancelled)" : "");
  return kExitOk;
}

}  // namespace

void AddServeCommand(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* serve = app->add_subcommand("serve", "Run the daemon: the HTTP API over the store");
  serve->add_option("--config", flags->config_file,
                    "TOML config file (default: built-in defaults)");
  serve->add_option("--store", flags->store_dir, "Store directory (overrides store.path)");
  serve->add_option("--listen", flags->listen, "HOST:PORT or [V6]:PORT (overrides server.listen)");
  serve->callback([=] { *exit_code = Serve(*flags); });
}

}  // namespace shingled::cli
