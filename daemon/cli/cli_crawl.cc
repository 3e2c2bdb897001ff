// The crawler's command line: `shingled crawl` runs one sweep with the built-in
// crawler and stores what it fetched, through the ingest pipeline (one store writer, group
// commit), with the date of each fetch on each URL, and prints a summary: JSON with --json or
// when stdout is not a terminal, text for a person otherwise. The sweep itself
// (known URLs revisited, backpressure, closing) is daemon/crawl/crawl_sweep.h, which the daemon's
// scheduled sweeps run too.
#include <algorithm>
#include <iostream>
#include <thread>

#include "config/config.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/cli_common.h"
#include "daemon/cli/cli_progress.h"
#include "daemon/crawl/crawl_sweep.h"
#include "daemon/ingest/ingest.h"
#include "daemon/ingest/task_pool.h"
#include "daemon/process/process.h"
#include "daemon/process/store_setup.h"
#include "daemon/wire/json_codec.h"

namespace shingled::cli {
namespace {

struct CrawlFlags {
  std::vector<std::string> seeds;
  std::string store_dir;
  std::string config_file;
  std::string sweep;
  bool allow_private_addresses = false;
  int64_t max_pages = 0;
  double delay_seconds = 0;
  int64_t max_depth = 0;
  bool keep_open = false;
  std::string user_agent;
  bool quiet = false;
  std::string warc_dir;
  bool json = false;
};

// The summary a person at a terminal reads: what SweepReportJson gives a script (docs/API.md,
// GET /v1/crawl), a few lines of it.
std::string SummaryText(const daemon::SweepReport& r) {
  const crawler::CrawlProgress& p = r.progress;
  std::string text = "crawled sweep " + r.name + ": " + GroupDigits(p.fetched) + " fetched (" +
                     GroupDigits(p.pages) + " pages, " + GroupDigits(p.dead) + " dead, " +
                     GroupDigits(p.redirected) + " redirected), " + GroupDigits(p.errors) +
                     " errors, in " + OneDecimal(r.seconds) + " s (" +
                     OneDecimal(r.seconds > 0 ? p.fetched / r.seconds : 0) + " pages/s)\n";
  if (!p.errors_by_kind.empty()) {
    text += "errors:";
    for (const auto& [kind, n] : p.errors_by_kind) text += " " + kind + " " + GroupDigits(n);
    text += "\n";
  }
  text += "stored " + GroupDigits(r.stored);
  const char* separator = ": ";
  for (const auto& [verdict, n] : r.verdicts) {
    text += separator + GroupDigits(n) + " " + verdict;
    separator = ", ";
  }
  text += "; " + GroupDigits(r.store_error_count) + " store errors";
  if (r.store_retries > 0) text += ", " + GroupDigits(r.store_retries) + " retried";
  text += "\n";
  text += GroupDigits(r.known_urls) + " known URLs revisited in scope; robots.txt: " +
          GroupDigits(p.robots_fetches) + " fetched, " + GroupDigits(p.robots_disallowed) +
          " URLs disallowed; " + GroupDigits(p.out_of_scope) + " links out of scope, " +
          GroupDigits(p.over_budget) + " URLs over --max-pages\n";
  if (!r.waiting_for_room.empty()) text += "waiting for room in the store: " + r.waiting_for_room + "\n";
  if (r.warc.enabled) {
    text += "WARC: " + GroupDigits(r.warc.files.size()) + " files, " +
            GroupDigits(r.warc.responses) + " responses, " + GroupDigits(r.warc.revisits) +
            " revisits, " + GroupDigits(r.warc.bytes) + " bytes";
    if (!r.warc.error.empty()) text += "; stopped: " + r.warc.error;
    text += "\n";
  }
  text += r.closed ? "sweep " + r.name + " closed\n"
                   : "sweep " + r.name + " left open" +
                         (r.left_open_because.empty() ? "" : ": " + r.left_open_because) + "\n";
  return text;
}

int RunCrawl(const CrawlFlags& flags, const CLI::App& cmd) {
  // Before any thread: Ctrl-C stops the sweep (left open), commits what was fetched and prints
  // the summary.
  CommandInterrupt interrupt;
  const bool show_progress = ShowProgress(flags.quiet);
  // The sweep's log lines (start, end, pages the store refused) go to stderr; stdout is the
  // JSON summary. On a terminal the progress line is the news: only warnings are logged.
  daemon::SetUpLogging(show_progress ? "warn" : "info");
  // The [crawler] table of --config, then the flags given on top.
  StatusOr<config::Config> loaded = LoadConfig(flags.config_file, flags.store_dir);
  if (!loaded.ok()) return Fail("crawl", loaded.status(), kExitUsage);
  config::Config config = std::move(*loaded);
  config::CrawlerOptions& c = config.crawler;
  if (!flags.seeds.empty()) c.seeds = flags.seeds;
  if (flags.allow_private_addresses) c.allow_private_addresses = true;
  if (cmd.count("--max-pages") > 0) c.max_pages = flags.max_pages;
  if (cmd.count("--delay") > 0) {
    c.per_host_delay_ms = static_cast<int64_t>(flags.delay_seconds * 1000);
  }
  if (cmd.count("--max-depth") > 0) c.max_depth = flags.max_depth;
  if (cmd.count("--user-agent") > 0) c.user_agent = flags.user_agent;
  if (cmd.count("--warc-dir") > 0) c.warc_dir = flags.warc_dir;
  if (c.seeds.empty()) {
    return Fail("crawl", InvalidArgumentError("no seed: give --seed URL or [crawler] seeds in --config"),
                kExitUsage);
  }
  StatusOr<daemon::CrawlSetup> setup = daemon::MakeCrawlSetup(c);
  if (!setup.ok()) return Fail("crawl", setup.status(), kExitUsage);

  // [ingest] too: the crawl stores pages as `serve` would, with the same canonicalizer.
  StatusOr<daemon::PipelineOptions> pipeline_options = daemon::IngestPipelineOptions(config.ingest);
  if (!pipeline_options.ok()) return Fail("crawl", pipeline_options.status(), kExitUsage);

  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(config, /*create=*/true);
  if (!opened.ok()) return Fail("crawl", opened.status());
  daemon::TaskPool pool(std::max(1u, std::thread::hardware_concurrency()), 1);
  daemon::IngestPipeline pipeline(opened->store.get(), opened->context, &pool, nullptr,
                                  *pipeline_options);
  daemon::SweepRunner runner(opened->store.get(), &pipeline, pipeline_options->queue_pages,
                             std::move(*setup), nullptr);
  // Says at once, as ingest does, what the command does now: the fetches in flight can take
  // up to crawler.total_timeout_ms to finish. A second Ctrl-C ends the process
  // (CommandInterrupt).
  interrupt.OnRequest([&runner, show_progress] {
    AnnounceStop("crawl",
                 "fetching no new pages, finishing the fetches in flight and storing their "
                 "pages; the sweep is left open",
                 show_progress);
    runner.Stop();
  });
  daemon::SweepReport report;
  {
    ProgressLine progress(show_progress, [&runner, &flags](double elapsed) {
      const daemon::SweepReport now = runner.Snapshot();
      const crawler::CrawlProgress& p = now.progress;
      // The flag's name until the runner has opened the sweep (the line is drawn at once).
      return "crawl " + (now.name.empty() ? flags.sweep : now.name) + ": " +
             GroupDigits(p.fetched) + " fetched, " + GroupDigits(p.pages) + " pages, " +
             GroupDigits(p.queued) + " queued, " + GroupDigits(p.errors) + " errors, " +
             OneDecimal(p.pages_per_second) + " pages/s, " +
             GroupDigits(static_cast<uint64_t>(elapsed)) + " s";
    });
    report = runner.Run(flags.sweep, !flags.keep_open);
  }
  interrupt.OnRequest(nullptr);
  pipeline.Stop();
  pool.Stop();
  if (!report.status.ok()) {
    // No valid seed is the caller's mistake; the rest are failures of the work.
    return Fail("crawl", report.status,
                report.status.code() == StatusCode::kInvalidArgument ||
                        report.status.code() == StatusCode::kAlreadyExists
                    ? kExitUsage
                    : kExitFailure);
  }
  // JSON off a terminal, as it always was: scripts read it.
  if (SummaryAsJson(flags.json)) {
    std::cout << daemon::DumpJson(daemon::SweepReportJson(report)) << "\n";
  } else {
    std::cout << SummaryText(report);
  }
  if (interrupt.requested()) return kExitInterrupted;
  return report.store_error_count == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void AddCrawlCommand(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<CrawlFlags>();
  CLI::App* cmd = app->add_subcommand(
      "crawl", "Crawl one sweep and store what it fetched ([crawler] of --config, then flags)");
  cmd->add_option("--seed", flags->seeds,
                  "Seed URL (repeatable; replaces [crawler] seeds); without allowed_hosts or "
                  "allowed_prefixes their hosts are the scope");
  cmd->add_option("--store", flags->store_dir, "Store directory (overrides store.path)");
  cmd->add_option("--config", flags->config_file,
                  "TOML config (store options, [sketch], [ingest], [crawler])");
  cmd->add_option("--sweep", flags->sweep, "Sweep name (opened if needed)")->required();
  cmd->add_flag("--allow-private-addresses", flags->allow_private_addresses,
                "Allow private, loopback and link-local addresses");
  cmd->add_option("--max-pages", flags->max_pages, "Most page fetches (crawler.max_pages)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000000}));
  cmd->add_option("--delay", flags->delay_seconds,
                  "Seconds between fetches of one host (crawler.per_host_delay_ms / 1000)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--max-depth", flags->max_depth, "Link depth from the seeds (crawler.max_depth)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000}));
  cmd->add_flag("--keep-open", flags->keep_open,
                "Leave the sweep open (do not mark unseen URLs gone)");
  cmd->add_option("--user-agent", flags->user_agent,
                  "User-Agent (crawler.user_agent); its product token is used for robots.txt");
  cmd->add_flag("--quiet", flags->quiet, "No progress line on a terminal");
  cmd->add_flag("--json", flags->json,
                "Print the summary as JSON on a terminal too (it is JSON when stdout is not a "
                "terminal)");
  cmd->add_option("--warc-dir", flags->warc_dir,
                  "Write what is fetched to WARC files (and CDXJ indexes) in this directory "
                  "(crawler.warc_dir)");
  cmd->callback([=] { *exit_code = RunCrawl(*flags, *cmd); });
}

}  // namespace shingled::cli
