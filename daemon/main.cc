// shingled: one binary, many subcommands (docs/CLI.md).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <string_view>

#include "daemon/cli/cli.h"

namespace {

bool IsCommand(CLI::App& app, std::string_view word) {
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->check_name(std::string(word))) return true;
  }
  return false;
}

// The first word of the command line that is not an option, when it names no command; "" when
// there is none (the options alone, or a command CLI11 refused for another reason).
std::string UnknownCommand(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return "";
    if (arg.starts_with('-')) continue;
    return IsCommand(app, arg) ? "" : std::string(arg);
  }
  return "";
}

std::string CommandNames(CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"shingled: finds duplicate and near-duplicate web pages, and remembers them"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "shingled 0.1.0");
  int exit_code = shingled::cli::kExitOk;
  shingled::cli::AddDedupCommands(&app, &exit_code);
  shingled::cli::AddServeCommand(&app, &exit_code);
  shingled::cli::AddStoreCommands(&app, &exit_code);
  shingled::cli::AddForgetCommand(&app, &exit_code);
  shingled::cli::AddRetainCommand(&app, &exit_code);
  shingled::cli::AddCrawlCommand(&app, &exit_code);
  shingled::cli::AddListCommand(&app, &exit_code);
  shingled::cli::AddReportCommands(&app, &exit_code);
  shingled::cli::AddConfigCommands(&app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 answers `shingled frobnicate` with "A subcommand is required": name the word instead.
    if (app.get_subcommands().empty()) {
      if (const std::string unknown = UnknownCommand(app, argc, argv); !unknown.empty()) {
        std::cerr << "shingled: unknown command \"" << unknown << "\"; the commands are "
                  << CommandNames(app) << " (shingled --help)\n";
        return shingled::cli::kExitUsage;
      }
    }
    // Usage errors exit 2, as every other invalid input does.
    const int code = app.exit(e);
    return code == 0 ? 0 : shingled::cli::kExitUsage;
  }
  return exit_code;
}
