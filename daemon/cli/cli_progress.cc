#include "daemon/cli/cli_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace shingled::cli {

bool ShowProgress(bool quiet) { return !quiet && isatty(STDERR_FILENO) == 1; }

bool SummaryAsJson(bool json) { return json || isatty(STDOUT_FILENO) != 1; }

std::string GroupDigits(uint64_t n) {
  // Appended digit by digit rather than with insert(), on which GCC 12 warns falsely
  // (-Wstringop-overflow) once this is inlined into OneDecimal.
  const std::string digits = std::to_string(n);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped.push_back(',');
    grouped.push_back(digits[i]);
  }
  return grouped;
}

std::string OneDecimal(double rate) {
  if (!std::isfinite(rate) || rate < 0) rate = 0;
  rate = std::min(rate, 1e15);  // within llround's range
  const auto tenths = static_cast<uint64_t>(std::llround(rate * 10));
  return GroupDigits(tenths / 10) + "." + std::to_string(tenths % 10);
}

void AnnounceStop(std::string_view command, std::string_view doing, bool progress_shown) {
  const std::string line = std::string(progress_shown ? "\r\033[K" : "") + "shingled " +
                           std::string(command) + ": stopping: " + std::string(doing) +
                           " (Ctrl-C again to quit at once)\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

ProgressLine::ProgressLine(bool enabled, std::function<std::string(double)> line)
    : line_(std::move(line)) {
  if (enabled) thread_ = std::thread([this] { Run(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
  // Erases the line: carriage return, then "erase to the end of the line".
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

void ProgressLine::Run() {
  // At once (a person sees the command has started), then once a second.
  std::unique_lock<std::mutex> lock(mu_);
  do {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::string text = line_(elapsed);
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    std::fflush(stderr);
  } while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; }));
}

CommandInterrupt::CommandInterrupt() : state_(std::make_shared<State>()) {
  std::thread([state = state_] {
    // A SIGHUP (the terminal closed) does not stop a command: it runs on, as under nohup.
    while (state->watcher.Wait() != daemon::SignalWatcher::Event::kStop) {
    }
    // Set under the lock, so that OnRequest runs `stop` itself or sees it run here, not both.
    std::lock_guard<std::mutex> lock(state->mu);
    state->requested = true;
    if (state->stop) state->stop();
  }).detach();
}

CommandInterrupt::~CommandInterrupt() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->stop = nullptr;
}

void CommandInterrupt::OnRequest(std::function<void()> stop) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->stop = std::move(stop);
  if (state_->requested && state_->stop) state_->stop();
}

}  // namespace shingled::cli
