// `shingled forget`: an operator's takedown of a URL, a host or a URL prefix
// (store::Store::Forget), call after call until none of the scope's URLs is left, and `shingled
// forget --records`, the takedowns recorded. `shingled retain`: one pass of retention by date
// (store::Store::ApplyRetention), as `serve` runs it. docs/CLI.md, "forget" and "retain".
#include <algorithm>
#include <atomic>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon/cli/cli.h"
#include "daemon/cli/cli_common.h"
#include "daemon/cli/cli_progress.h"
#include "daemon/ingest/retention.h"
#include "daemon/process/store_setup.h"
#include "daemon/wire/forget_request.h"
#include "daemon/wire/json_codec.h"
#include "daemon/wire/unix_time.h"

namespace shingled::cli {
namespace {

using daemon::Json;

constexpr char kCommand[] = "forget";
// Records read per ForgetRecords call by --records.
constexpr size_t kRecordPage = 1000;

struct ForgetFlags {
  std::string store_dir, config_file;
  std::string url, host, prefix;
  // The options above, to tell "not given" from "given" (an empty --host is given and refused).
  CLI::Option* url_option = nullptr;
  CLI::Option* host_option = nullptr;
  CLI::Option* prefix_option = nullptr;
  bool dry_run = false;
  bool records = false;
  bool json = false;
  bool quiet = false;
  size_t list = 0;  // URLs listed, over all the calls
  size_t max_urls = daemon::kDefaultForgetMaxUrls;
};

std::optional<std::string> IfGiven(const CLI::Option* option, const std::string& value) {
  return option->count() > 0 ? std::optional<std::string>(value) : std::nullopt;
}

// What the calls of one takedown did, summed.
struct Totals {
  // `listed` holds every call's; `more` is the last call's (matching URLs are left); `record` is
  // unused (`records` below).
  store::ForgetResult sum;
  std::vector<uint64_t> records;
  uint64_t calls = 0;
};

void Add(const store::ForgetResult& r, Totals* t) {
  t->sum.urls += r.urls;
  t->sum.versions += r.versions;
  t->sum.documents += r.documents;
  t->sum.documents_kept += r.documents_kept;
  t->sum.clusters_recomputed += r.clusters_recomputed;
  t->sum.clusters_split += r.clusters_split;
  t->sum.listed.insert(t->sum.listed.end(), r.listed.begin(), r.listed.end());
  if (r.record != 0) t->records.push_back(r.record);
  t->sum.more = r.more;
  ++t->calls;
}

// "1 URL" or "2 URLs".
std::string Count(uint64_t n, const std::string& one, const std::string& many) {
  return GroupDigits(n) + " " + (n == 1 ? one : many);
}

std::string RecordsText(const std::vector<uint64_t>& records) {
  if (records.empty()) return "no record";
  if (records.size() == 1) return "record " + std::to_string(records[0]);
  return "records " + std::to_string(records.front()) + " to " + std::to_string(records.back());
}

void PrintSummary(const store::ForgetOptions& options, const Totals& t, bool interrupted,
                  bool json) {
  const store::ForgetResult& s = t.sum;
  if (json) {
    Json j = daemon::ForgetResultJson(options, s);
    j.erase("record");
    j["records"] = t.records;
    j["calls"] = t.calls;
    j["interrupted"] = interrupted;
    std::cout << daemon::DumpJson(j) << "\n";
    return;
  }
  const std::string scope =
      std::string(store::ForgetScopeName(options.scope)) + " " + options.value;
  const std::string counts =
      Count(s.urls, "URL", "URLs") + " with " + Count(s.versions, "version", "versions") + "; " +
      Count(s.documents, "document", "documents") + " removed, " + GroupDigits(s.documents_kept) +
      (s.documents_kept > 0 ? " kept (a remaining document shares the sketch); " : " kept; ") +
      Count(s.clusters_recomputed, "cluster", "clusters") + " recomputed, " +
      GroupDigits(s.clusters_split) + " split";
  if (options.dry_run) {
    std::cout << "dry run, nothing changed: forgetting " << scope << " would remove " << counts
              << "\n";
    if (s.more) {
      std::cout << "more than " << GroupDigits(options.max_urls)
                << " URLs match: these counts are of the first " << GroupDigits(options.max_urls)
                << " (in URL order); forget without --dry-run goes on until none is left\n";
    }
  } else {
    if (interrupted) {
      std::cout << "interrupted: what the line below counts is forgotten, the rest of the scope is "
                   "not (run the command again to go on)\n";
    }
    if (s.urls == 0) {
      std::cout << "forgot nothing: no stored URL matches " << scope << " (nothing recorded)\n";
    } else {
      std::cout << "forgot " << scope << ": " << counts << "; " << RecordsText(t.records) << "\n";
    }
  }
  for (const std::string& url : s.listed) std::cout << "  " << url << "\n";
}

int RunForget(const ForgetFlags& flags, store::ForgetOptions options) {
  // Set by the first Ctrl-C; declared before `interrupt`, whose watcher thread may set it until
  // `interrupt` is destroyed.
  std::atomic<bool> announced{false};
  // Before any thread. Each call is one transaction: Ctrl-C stops between calls, and what the
  // calls before did stays done and is summed up.
  CommandInterrupt interrupt;
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return Fail(kCommand, config.status(), kExitUsage);
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(*config, /*create=*/false);
  if (!opened.ok()) return Fail(kCommand, opened.status());
  options.date = daemon::UnixNow();
  options.dry_run = flags.dry_run;
  options.max_urls = flags.max_urls;

  const bool show_progress = ShowProgress(flags.quiet);
  interrupt.OnRequest([&announced, show_progress] {
    announced = true;
    AnnounceStop(kCommand, "finishing the call in flight (one transaction), then stopping",
                 show_progress);
  });
  std::mutex mu;
  Totals totals;  // guarded by mu while `progress` runs
  std::optional<ProgressLine> progress;
  progress.emplace(show_progress, [&](double elapsed) {
    std::lock_guard<std::mutex> lock(mu);
    return std::string(kCommand) + ": " + GroupDigits(totals.sum.urls) + " URLs, " +
           GroupDigits(totals.sum.versions) + " versions, " + GroupDigits(totals.sum.documents) +
           " documents removed, " + GroupDigits(static_cast<uint64_t>(elapsed)) + " s";
  });
  Status failed = OkStatus();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu);
      options.list_limit = flags.list - std::min(flags.list, totals.sum.listed.size());
    }
    StatusOr<store::ForgetResult> result = opened->store->Forget(options);
    if (!result.ok()) {
      failed = result.status();
      break;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      Add(*result, &totals);
    }
    // A dry run writes nothing, so a second call would see the same URLs again: it counts the
    // first max_urls and says whether more match.
    if (!result->more || options.dry_run || interrupt.requested()) break;
    if (result->urls == 0) {
      // The next call would find the same URLs: stop rather than loop for ever.
      failed = InternalError("the store said more URLs match but forgot none");
      break;
    }
  }
  progress.reset();
  // Interrupted when the message was printed: a signal after this is too late to stop anything.
  interrupt.OnRequest(nullptr);
  if (!failed.ok()) {
    if (totals.calls == 0) return Fail(kCommand, failed);
    // The calls before were committed: say what they did before the error.
    PrintSummary(options, totals, /*interrupted=*/false, flags.json);
    return Fail(kCommand,
                Status(failed.code(), failed.message() + " (after " + RecordsText(totals.records) +
                                          "; run the command again to go on)"));
  }
  const bool interrupted = announced && totals.sum.more && !options.dry_run;
  PrintSummary(options, totals, interrupted, flags.json);
  return interrupted ? kExitInterrupted : kExitOk;
}

int RunRecords(const ForgetFlags& flags) {
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return Fail(kCommand, config.status(), kExitUsage);
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(*config, /*create=*/false);
  if (!opened.ok()) return Fail(kCommand, opened.status());
  std::vector<store::ForgetRecord> records;
  for (uint64_t after = 0;;) {
    StatusOr<std::vector<store::ForgetRecord>> page =
        opened->store->ForgetRecords(after, kRecordPage);
    if (!page.ok()) return Fail(kCommand, page.status());
    records.insert(records.end(), page->begin(), page->end());
    if (page->size() < kRecordPage) break;
    after = page->back().id;
  }
  if (flags.json) {
    Json list = Json::array();
    for (const store::ForgetRecord& r : records) list.push_back(daemon::ForgetRecordJson(r));
    std::cout << daemon::DumpJson(Json{{"forgets", std::move(list)}}) << "\n";
    return kExitOk;
  }
  if (records.empty()) std::cout << "no takedowns or retention passes recorded\n";
  for (const store::ForgetRecord& r : records) {
    std::cout << r.id << " " << daemon::FormatIsoTime(r.date) << " "
              << store::ForgetScopeName(r.scope) << " sha256:" << daemon::Sha256Hex(r.value_sha256)
              << " " << Count(r.urls, "URL", "URLs") << ", "
              << Count(r.versions, "version", "versions") << ", "
              << Count(r.documents, "document", "documents") << " removed, "
              << GroupDigits(r.clusters_split) << " clusters split\n";
  }
  return kExitOk;
}

int Run(const ForgetFlags& flags) {
  const CLI::Option* given[3] = {flags.url_option, flags.host_option, flags.prefix_option};
  std::string named;
  for (const CLI::Option* option : given) {
    if (option->count() > 0) named += (named.empty() ? "" : " and ") + option->get_name();
  }
  if (flags.records) {
    if (!named.empty() || flags.dry_run) {
      return Fail(kCommand,
                  InvalidArgumentError("--records lists the takedowns recorded; it takes no " +
                                       (named.empty() ? std::string("--dry-run") : named)),
                  kExitUsage);
    }
    return RunRecords(flags);
  }
  // Named by their flags here, rather than by the API's members as ForgetScopeOf names them.
  if (named.find(" and ") != std::string::npos) {
    return Fail(kCommand,
                InvalidArgumentError("give one of --url, --host or --prefix, not " + named),
                kExitUsage);
  }
  if (named.empty()) {
    return Fail(kCommand,
                InvalidArgumentError("give what to forget: one of --url, --host or --prefix (or "
                                     "--records to list the takedowns)"),
                kExitUsage);
  }
  // The URL is normalized already (UrlArgument); the host and the prefix are read here as the API
  // reads them.
  StatusOr<store::ForgetOptions> options = daemon::ForgetScopeOf(
      IfGiven(flags.url_option, flags.url), IfGiven(flags.host_option, flags.host),
      IfGiven(flags.prefix_option, flags.prefix), kNoUrlLimit);
  if (!options.ok()) return Fail(kCommand, options.status(), kExitUsage);
  return RunForget(flags, std::move(*options));
}

// --- retain ---

constexpr char kRetain[] = "retain";

struct RetainFlags {
  std::string store_dir, config_file;
  // Given: they override the config's store.retention_* settings.
  std::optional<int64_t> version_days, gone_days, step_urls;
  bool json = false;
  bool quiet = false;
};

void PrintRetained(const store::RetentionStep& s, bool interrupted, bool json) {
  if (json) {
    std::cout << daemon::DumpJson(Json{{"urls_examined", s.urls_examined},
                                       {"versions", s.versions},
                                       {"urls", s.urls},
                                       {"documents", s.documents},
                                       {"documents_kept", s.documents_kept},
                                       {"clusters_split", s.clusters_split},
                                       {"pass_done", s.pass_done},
                                       {"record", s.record},
                                       {"interrupted", interrupted}})
              << "\n";
    return;
  }
  if (interrupted) {
    std::cout << "interrupted: what the line below counts is forgotten; the pass goes on from "
                 "there when the command (or serve) runs again\n";
  }
  std::cout << (s.pass_done ? "retention pass done: " : "retention pass stopped: ")
            << Count(s.urls_examined, "URL", "URLs") << " looked at; removed "
            << Count(s.versions, "version", "versions") << ", " << Count(s.urls, "URL", "URLs")
            << ", " << Count(s.documents, "document", "documents") << " ("
            << GroupDigits(s.documents_kept) << " kept for documents sharing their sketch), "
            << GroupDigits(s.clusters_split) << " clusters split";
  if (s.record != 0) std::cout << "; the pass is record " << s.record;
  std::cout << "\n";
}

int RunRetain(const RetainFlags& flags) {
  std::atomic<bool> announced{false};
  CommandInterrupt interrupt;  // before any thread
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return Fail(kRetain, config.status(), kExitUsage);
  const store::RetentionOptions rules = daemon::RetentionRules(
      flags.version_days.value_or(config->store.retention_version_days),
      flags.gone_days.value_or(config->store.retention_gone_days),
      flags.step_urls.value_or(config->store.retention_step_urls));
  if (!daemon::RetentionIsOn(rules)) {
    return Fail(kRetain,
                InvalidArgumentError("nothing to forget: give --version-days or --gone-days (or "
                                     "set store.retention_version_days or "
                                     "store.retention_gone_days in the config)"),
                kExitUsage);
  }
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(*config, /*create=*/false);
  if (!opened.ok()) return Fail(kRetain, opened.status());

  const bool show_progress = ShowProgress(flags.quiet);
  interrupt.OnRequest([&announced, show_progress] {
    announced = true;
    AnnounceStop(kRetain, "finishing the step in flight (one transaction), then stopping",
                 show_progress);
  });
  std::mutex mu;
  store::RetentionStep sum;  // guarded by mu while `progress` runs
  std::optional<ProgressLine> progress;
  progress.emplace(show_progress, [&](double elapsed) {
    std::lock_guard<std::mutex> lock(mu);
    return std::string(kRetain) + ": " + GroupDigits(sum.urls_examined) + " URLs looked at, " +
           GroupDigits(sum.versions) + " versions and " + GroupDigits(sum.urls) +
           " URLs removed, " + GroupDigits(static_cast<uint64_t>(elapsed)) + " s";
  });
  StatusOr<store::RetentionStep> pass = daemon::RunRetentionPass(
      *opened->store, rules, [&interrupt] { return !interrupt.requested(); }, nullptr,
      [&](const store::RetentionStep& so_far) {
        std::lock_guard<std::mutex> lock(mu);
        sum = so_far;
      });
  progress.reset();
  interrupt.OnRequest(nullptr);
  if (!pass.ok()) {
    if (sum.urls_examined == 0) return Fail(kRetain, pass.status());
    // The steps before were committed: say what they did before the error.
    PrintRetained(sum, /*interrupted=*/false, flags.json);
    return Fail(kRetain, Status(pass.status().code(),
                                pass.status().message() +
                                    " (after the steps counted above; run the command again to "
                                    "go on)"));
  }
  const bool interrupted = announced && !pass->pass_done;
  PrintRetained(*pass, interrupted, flags.json);
  return interrupted ? kExitInterrupted : kExitOk;
}

}  // namespace

void AddRetainCommand(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<RetainFlags>();
  CLI::App* cmd = app->add_subcommand(
      "retain",
      "Run one pass of retention by date (as serve does on its schedule): old versions and URLs "
      "gone long ago are forgotten");
  cmd->add_option("--version-days", flags->version_days,
                  "Forget versions older than this many days, but each URL's last "
                  "(default: store.retention_version_days)")
      ->check(CLI::Range(int64_t{0}, int64_t{365000}));
  cmd->add_option("--gone-days", flags->gone_days,
                  "Forget URLs gone (or dead, or redirected) for longer than this many days "
                  "(default: store.retention_gone_days)")
      ->check(CLI::Range(int64_t{0}, int64_t{365000}));
  cmd->add_option("--step-urls", flags->step_urls,
                  "URLs per transaction (default: store.retention_step_urls)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  cmd->add_option("--store", flags->store_dir, "Store directory (overrides store.path)");
  cmd->add_option("--config", flags->config_file, "TOML config (store and retention options)");
  cmd->add_flag("--json", flags->json, "One compact JSON object");
  cmd->add_flag("--quiet", flags->quiet, "No progress line on a terminal");
  cmd->callback([=] { *exit_code = RunRetain(*flags); });
}

void AddForgetCommand(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<ForgetFlags>();
  CLI::App* cmd = app->add_subcommand(
      "forget",
      "Forget a URL, a host or a URL prefix (a takedown), or list the takedowns (--records)");
  flags->url_option = cmd->add_option("--url", flags->url, "One stored URL, with every version")
                          ->transform(UrlArgument());
  flags->host_option = cmd->add_option("--host", flags->host,
                                       "Every URL of this host (or host:port), http and https");
  flags->prefix_option = cmd->add_option(
      "--prefix", flags->prefix, "Every URL that starts with this prefix, e.g. https://ex.com/a/");
  cmd->add_flag("--dry-run", flags->dry_run,
                "Count (and with --list, list) what would go, and change nothing");
  cmd->add_option("--list", flags->list, "List the first N URLs forgotten (default 0)")
      ->check(CLI::Range(size_t{0}, size_t{100000}));
  cmd->add_option("--max-urls", flags->max_urls,
                  "URLs per transaction (default 10000); the command goes on until none is left")
      ->check(CLI::Range(size_t{1}, daemon::kMaxForgetMaxUrls));
  cmd->add_flag("--records", flags->records,
                "List the takedowns recorded: date, scope, SHA-256 of its value, counts");
  cmd->add_option("--store", flags->store_dir, "Store directory (overrides store.path)");
  cmd->add_option("--config", flags->config_file, "TOML config (store options)");
  cmd->add_flag("--json", flags->json, "One compact JSON object");
  cmd->add_flag("--quiet", flags->quiet, "No progress line on a terminal");
  cmd->callback([=] { *exit_code = Run(*flags); });
}

}  // namespace shingled::cli
