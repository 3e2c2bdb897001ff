// What the subcommands share: the configuration they run with, and their error lines.
// Thread-compatible free functions.
#ifndef SHINGLED_DAEMON_CLI_CLI_COMMON_H_
#define SHINGLED_DAEMON_CLI_CLI_COMMON_H_

#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "config/config.h"
#include "daemon/cli/cli.h"
#include "daemon/crawl/crawl_sweep.h"

namespace shingled::cli {

// The --config file (the defaults when `config_file` is empty), with `store_dir` as store.path
// when it is not empty (--store). The loader's error for a file that does not load or validate.
StatusOr<config::Config> LoadConfig(const std::string& config_file, const std::string& store_dir);

// What `serve` makes of a loaded config beyond what the loader checks, needing more than the file:
// the token from the token file, and the crawler's setup from its seeds and prefixes.
struct ServeSetup {
  std::string token;  // auth.token_file's token; "" without a token file
  // With crawler.enabled and a crawler that can run: its setup. Otherwise nullopt.
  std::optional<daemon::CrawlSetup> crawler;
  // With crawler.enabled: OK, or why the crawler cannot run (see CrawlerProblem).
  Status crawler_error;
};

// What a crawler that cannot run does to the config. At start-up it stops the crawler only: the
// daemon serves without it and GET /v1/crawl says why, so that a bad seed does not take ingest
// and queries down with it. SIGHUP and `shingled config check` refuse the file for it.
enum class CrawlerProblem { kRefusesTheConfig, kStopsTheCrawler };

// The one check of a loaded config that `serve` (at start-up and on SIGHUP) and `shingled config
// check` share, so that the three refuse the same files with the same message naming the key:
//   - the token file (daemon::ReadTokenFile): NotFound if it cannot be read; InvalidArgument if
//     it is empty, others may read or change it, or the token is shorter than 16 bytes;
//   - with crawler.enabled, every seed and prefix (daemon::MakeCrawlSetup): InvalidArgument
//     naming crawler.seeds or crawler.allowed_prefixes, returned with kRefusesTheConfig and kept
//     in ServeSetup::crawler_error with kStopsTheCrawler.
// Reads the token file; changes nothing.
StatusOr<ServeSetup> MakeServeSetup(const config::Config& config, CrawlerProblem crawler_problem);

// A URL argument, normalized as the daemon normalizes the URLs it stores and looks up
// (daemon::PageUrl); a URL it refuses is a usage error. No length limit (kNoUrlLimit): that
// protects the server.
inline constexpr size_t kNoUrlLimit = std::numeric_limits<size_t>::max();
CLI::Validator UrlArgument();

// Prints "shingled COMMAND: MESSAGE" on stderr and returns `code` (the exit code).
int Fail(std::string_view command, const Status& status, int code = kExitFailure);

}  // namespace shingled::cli

#endif  // SHINGLED_DAEMON_CLI_CLI_COMMON_H_
