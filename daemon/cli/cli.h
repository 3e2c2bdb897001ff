// The subcommands of the shingled binary. Each returns the process exit code:
// 0 success, 1 a failure of the work itself, 2 bad usage or unreadable input.
#ifndef SHINGLED_DAEMON_CLI_H_
#define SHINGLED_DAEMON_CLI_H_

#include <CLI/CLI.hpp>
#include <string>

namespace shingled::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Registers `sketch` and `compare` on `app`; the callbacks store their exit code in *exit_code.
void AddDedupCommands(CLI::App* app, int* exit_code);
// Registers `serve` (daemon/serve.cc).
void AddServeCommand(CLI::App* app, int* exit_code);
// Registers `ingest`, `check`, `backup`, `similar`, `history`, `cluster`, `lost` and `sweep`
// (daemon/cli/cli_store.cc).
void AddStoreCommands(CLI::App* app, int* exit_code);

// Registers `forget`: takedowns, and the list of those recorded (daemon/cli/cli_forget.cc).
void AddForgetCommand(CLI::App* app, int* exit_code);
// Registers `retain`: one pass of retention by date (daemon/cli/cli_forget.cc).
void AddRetainCommand(CLI::App* app, int* exit_code);

// Registers `crawl`: one sweep with the built-in crawler (daemon/cli/cli_crawl.cc).
void AddCrawlCommand(CLI::App* app, int* exit_code);

// Registers `list urls|clusters|identical`: the store's listings (daemon/cli/cli_list.cc).
void AddListCommand(CLI::App* app, int* exit_code);
// Registers `report changes` (daemon/cli/cli_report.cc).
void AddReportCommands(CLI::App* app, int* exit_code);
// Registers `config check` (daemon/cli/cli_config.cc).
void AddConfigCommands(CLI::App* app, int* exit_code);

// The Content-Type to assume for a file: `given` if not empty, else one implied by the
// extension (.html, .htm, .xhtml, .txt, .text, .md), else "" (the canonicalizer sniffs).
std::string ContentTypeForPath(const std::string& path, const std::string& given);

}  // namespace shingled::cli

#endif  // SHINGLED_DAEMON_CLI_H_
