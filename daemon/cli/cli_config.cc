// `shingled config check --config FILE`: loads the file as `serve` would, without opening the
// store or binding a port, and checks it as serve does at start-up and on SIGHUP (MakeServeSetup:
// the token file, the crawler's seeds). Exit 0 when it passes (its warnings,
// config::ConfigWarnings, printed one a line as "warning: ..."), 2 when it does not (the error
// naming the key, and the line when the loader refused it).
// `shingled config keys [--config FILE]`: the keys the parser reads (config::ConfigKeys).
// `shingled config keys --markdown`: the same keys with their help as docs/CONFIG.md, the
// reference table (tests/daemon/config_warnings_test.cc holds the file to this output).
#include <algorithm>
#include <iomanip>
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

// `shingled config keys [--config FILE]`: every key the parser reads, with its type, range and
// value (the defaults, or FILE's values), one a line in columns.
int ConfigKeysList(const std::string& config_file) {
  config::Config values;
  if (!config_file.empty()) {
    StatusOr<config::Config> loaded = config::LoadConfigFile(config_file);
    if (!loaded.ok()) return Fail("config keys", loaded.status(), kExitUsage);
    values = *std::move(loaded);
  }
  const std::vector<config::ConfigKey> keys = config::ConfigKeys(values);
  size_t name_width = 3, type_width = 4, range_width = 5;
  for (const config::ConfigKey& k : keys) {
    name_width = std::max(name_width, k.name.size());
    type_width = std::max(type_width, k.type.size());
    range_width = std::max(range_width, k.range.size());
  }
  auto row = [&](const std::string& name, const std::string& type, const std::string& range,
                 const std::string& value) {
    std::cout << std::left << std::setw(static_cast<int>(name_width + 2)) << name
              << std::setw(static_cast<int>(type_width + 2)) << type
              << std::setw(static_cast<int>(range_width + 2)) << range << value << "\n";
  };
  row("KEY", "TYPE", "RANGE", config_file.empty() ? "DEFAULT" : "VALUE");
  for (const config::ConfigKey& k : keys) {
    row(k.name, k.type, k.range, k.value.empty() ? "(left out)" : k.value);
  }
  return kExitOk;
}

// A table cell's text: a '|' would end the cell (in a code span too).
std::string MarkdownCell(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

// `shingled config keys --markdown`: docs/CONFIG.md, every key of the catalog at its default with
// its help, one table. Written whole here rather than as a table spliced into a hand-written file,
// so that the file and this output are compared byte for byte.
int ConfigKeysMarkdown() {
  std::cout << "# Configuration keys\n\n"
            << "<!-- Printed by `shingled config keys --markdown > docs/CONFIG.md`: edit the keys "
               "in config/config.cc (ReadSections), not here. -->\n\n"
            << "Every key of the configuration file of `shingled serve`, in the order of\n"
            << "[config/shingled.toml](../config/shingled.toml), which shows each at its default "
               "and says more\n"
            << "of most. A key left out keeps its default; a value of the wrong type or out of "
               "range stops\n"
            << "start-up naming the line and the key. `shingled config check --config FILE` "
               "checks a file as\n"
            << "`serve` would ([CLI.md](CLI.md)); [OPERATIONS.md](OPERATIONS.md) says which keys "
               "SIGHUP applies.\n"
            << "The `sketch` keys may only repeat the parameters recorded in the store; left out, "
               "they keep\n"
            << "the store's (a new store's are the values config/shingled.toml shows).\n\n"
            << "| section | key | type | range | default | help |\n"
            << "| --- | --- | --- | --- | --- | --- |\n";
  for (const config::ConfigKey& k : config::ConfigKeys()) {
    const size_t dot = k.name.rfind('.');
    std::cout << "| `" << k.name.substr(0, dot) << "` | `" << k.name.substr(dot + 1) << "` | "
              << MarkdownCell(k.type) << " | " << MarkdownCell(k.range) << " | "
              << (k.value.empty() ? "left out" : "`" + MarkdownCell(k.value) + "`") << " | "
              << MarkdownCell(k.help) << " |\n";
  }
  return kExitOk;
}

}  // namespace

void AddConfigCommands(CLI::App* app, int* exit_code) {
  CLI::App* config = app->add_subcommand("config", "Check a config file; list the keys");
  config->require_subcommand(1);
  CLI::App* check = config->add_subcommand(
      "check", "Load a config file as serve would; print its warnings; exit 2 if it does not load");
  auto file = std::make_shared<std::string>();
  check->add_option("--config", *file, "The TOML file")->required();
  check->callback([file, exit_code] { *exit_code = ConfigCheck(*file); });
  CLI::App* keys = config->add_subcommand(
      "keys", "List every config key with its type, range and default (or FILE's value)");
  auto keys_file = std::make_shared<std::string>();
  auto markdown = std::make_shared<bool>(false);
  CLI::Option* keys_config =
      keys->add_option("--config", *keys_file, "A TOML file whose values to show");
  keys->add_flag("--markdown", *markdown,
                 "Print docs/CONFIG.md: every key with its type, range, default and help")
      ->excludes(keys_config);
  keys->callback([keys_file, markdown, exit_code] {
    *exit_code = *markdown ? ConfigKeysMarkdown() : ConfigKeysList(*keys_file);
  });
}

}  // namespace shingled::cli
