// The subcommands of the shingled binary. Each returns the process exit code:
// 0 success, 1 a failure of the work itself, 2 bad usage or unreadable input.
#ifndef SHINGLED_DAEMON_CLI_H_
#define SHINGLED_DAEMON_CLI_H_

#include <CLI/CLI.hpp>

namespace shingled::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Registers `sketch` and `compare` on `app`; the callbacks store their exit code in *exit_code.
void AddDedupCommands(CLI::App* app, int* exit_code);

}  // namespace shingled::cli

#endif  // SHINGLED_DAEMON_CLI_H_
