// `shingled config check --config FILE`: loads the file as `serve` would, without opening the
// store or binding a port, and checks it as serve does at start-up and on SIGHUP (MakeServeSetup:
// the token file, the crawler's seeds). Exit 0 when it passes (its warnings,
// config::ConfigWarnings, printed one a line as "warning: ..."), 2 when it does not (the error
// naming the key, and the line when the loader refused it).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/cli_common.h"

namespace shingled::cli {
namespace {

int ConfigCheck(const std::string& config_file) {
  StatusOr<config::Config> config = config::LoadConfigFile(config_file);
  if (!config.ok()) return Fail("config check", config.status(), kExitUsage);
  StatusOr<ServeSetup> setup = MakeServeSetup(*config, CrawlerProblem::kRefusesTheConfig);
  if (!setup.ok()) return Fail("config check", setup.status(), kExitUsage);
  const std::vector<std::string> warnings = config::ConfigWarnings(*config);
  for (const std::string& warning : warnings) std::cout << "warning: " << warning << "\n";
  std::cout << config_file << ": loads";
  if (!warnings.empty()) std::cout << ", " << warnings.size() << " warning(s)";
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

void AddConfigCommands(CLI::App* app, int* exit_code) {
  CLI::App* config = app->add_subcommand("config", "Check a config file");
  config->require_subcommand(1);
  CLI::App* check = config->add_subcommand(
      "check", "Load a config file as serve would; print its warnings; exit 2 if it does not load");
  auto file = std::make_shared<std::string>();
  check->add_option("--config", *file, "The TOML file")->required();
  check->callback([file, exit_code] { *exit_code = ConfigCheck(*file); });
}

}  // namespace shingled::cli
