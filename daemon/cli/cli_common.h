// What the subcommands share: the configuration they run with, and their error lines.
// Thread-compatible free functions.
#ifndef SHINGLED_DAEMON_CLI_CLI_COMMON_H_
#define SHINGLED_DAEMON_CLI_CLI_COMMON_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "config/config.h"
#include "daemon/cli/cli.h"

namespace shingled::cli {

// The --config file (the defaults when `config_file` is empty), with `store_dir` as store.path
// when it is not empty (--store). The loader's error for a file that does not load or validate.
StatusOr<config::Config> LoadConfig(const std::string& config_file, const std::string& store_dir);

// Prints "shingled COMMAND: MESSAGE" on stderr and returns `code` (the exit code).
int Fail(std::string_view command, const Status& status, int code = kExitFailure);

}  // namespace shingled::cli

#endif  // SHINGLED_DAEMON_CLI_CLI_COMMON_H_
