// What a long command (ingest, crawl) shows a person at a terminal, and how it stops on Ctrl-C.
//
// ProgressLine rewrites one line on stderr about once a second while stderr is a terminal, and
// prints nothing in scripts (stderr a pipe or a file) or with --quiet. CommandInterrupt turns
// the first SIGINT or SIGTERM into a request to stop (the command commits what was accepted and
// prints its summary); a second one ends the process at once, as in `serve`. SIGHUP is ignored.
//
// Thread-safety: both are safe to use from any thread; their callbacks run on threads of their
// own.
#ifndef SHINGLED_DAEMON_CLI_PROGRESS_H_
#define SHINGLED_DAEMON_CLI_PROGRESS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "daemon/process/process.h"

namespace shingled::cli {

// The exit code of a command stopped by a signal before it was done (128 + SIGINT, as shells
// report it).
inline constexpr int kExitInterrupted = 130;

// Whether progress should be shown: stderr is a terminal and --quiet was not given.
bool ShowProgress(bool quiet);

// Whether a command that prints its summary for a person on a terminal prints JSON instead:
// with --json (`json`), or when stdout is not a terminal (a script reads it).
bool SummaryAsJson(bool json);

// "1,234" for 1234.
std::string GroupDigits(uint64_t n);

// A rate with one decimal, its digits grouped: "1,234.5" for 1234.46; "0.0" for a negative or
// non-finite one (no time has passed yet).
std::string OneDecimal(double rate);

// Says on stderr, at once, that `command` heard Ctrl-C and what it does now, since finishing the
// work in flight can take a while and a person would otherwise see nothing until the summary:
//   shingled COMMAND: stopping: DOING (Ctrl-C again to quit at once)
// With `progress_shown` (a ProgressLine is drawn), the progress line is erased first and goes on
// below. One write, so that the progress line's thread cannot write between its parts. For the
// `stop` of CommandInterrupt::OnRequest.
void AnnounceStop(std::string_view command, std::string_view doing, bool progress_shown);

class ProgressLine {
 public:
  // `line(elapsed_seconds)` gives the text; called about once a second on a thread of the
  // ProgressLine's. With `enabled` false nothing is started or printed.
  ProgressLine(bool enabled, std::function<std::string(double elapsed_seconds)> line);
  // Stops and clears the line, so that what the command prints next starts on a clean line.
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void Run();

  const std::function<std::string(double)> line_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;  // guarded by mu_
  std::thread thread_;
};

class CommandInterrupt {
 public:
  // Blocks SIGINT and SIGTERM (daemon::SignalWatcher): create it before any other thread.
  CommandInterrupt();
  ~CommandInterrupt();
  CommandInterrupt(const CommandInterrupt&) = delete;
  CommandInterrupt& operator=(const CommandInterrupt&) = delete;

  // True once a first signal came.
  bool requested() const { return state_->requested.load(); }
  // Runs `stop` on the watcher's thread when the first signal comes (at once if it came
  // already). `stop` must only ask for a stop, not wait for it. Cleared by the destructor.
  void OnRequest(std::function<void()> stop);

 private:
  // Shared with the thread that waits for the signal, which outlives this object when none
  // comes (process exit ends it).
  struct State {
    daemon::SignalWatcher watcher;
    std::atomic<bool> requested{false};
    std::mutex mu;
    std::function<void()> stop;  // guarded by mu
  };
  std::shared_ptr<State> state_;
};

}  // namespace shingled::cli

#endif  // SHINGLED_DAEMON_CLI_PROGRESS_H_
