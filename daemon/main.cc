// shingled: one binary, many subcommands (docs/CLI.md).
#include <CLI/CLI.hpp>
#include <iostream>

#include "daemon/cli/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"shingled: finds duplicate and near-duplicate web pages, and remembers them"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "shingled 0.1.0");
  int exit_code = shingled::cli::kExitOk;
  shingled::cli::AddDedupCommands(&app, &exit_code);
  shingled::cli::AddServeCommand(&app, &exit_code);
  shingled::cli::AddStoreCommands(&app, &exit_code);
  shingled::cli::AddCrawlCommand(&app, &exit_code);
  shingled::cli::AddListCommand(&app, &exit_code);
  shingled::cli::AddReportCommands(&app, &exit_code);
  shingled::cli::AddConfigCommands(&app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2, as every other invalid input does.
    const int code = app.exit(e);
    return code == 0 ? 0 : shingled::cli::kExitUsage;
  }
  return exit_code;
}
