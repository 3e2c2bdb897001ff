#include "daemon/cli/cli_progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace shingled::cli {

bool ShowProgress(bool quiet) { return !quiet && isatty(STDERR_FILENO) == 1; }

std::string GroupDigits(uint64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
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
