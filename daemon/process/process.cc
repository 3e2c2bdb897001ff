#include "daemon/process/process.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace shingled::daemon {
namespace {

// "%*": the syslog priority prefix journald understands (sd-daemon(3)).
class SyslogPriorityFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    static constexpr const char* kPrefix[] = {"<7>", "<7>", "<6>", "<4>", "<3>", "<2>", "<6>"};
    const auto level = static_cast<size_t>(msg.level);
    const char* prefix = kPrefix[level < 7 ? level : 6];
    dest.append(prefix, prefix + 3);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriorityFlag>();
  }
};

const char* SignalName(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal";
  }
}

sigset_t WatchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  // Without a handler SIGHUP would end the process with no word in the log, and systemd would
  // take the 129 for a clean exit (no restart); here it asks for a reload.
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void SetUpLogging(const std::string& level) {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::automatic);
  auto logger = std::make_shared<spdlog::logger>("shingled", sink);
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  // The access log's combined and json lines carry their own time: the bare line, as log tools
  // read it. A sink of its own, as a sink has one pattern; console sinks share one lock, so the
  // two never mix within a line.
  auto access_sink =
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::never);
  auto access_formatter = std::make_unique<spdlog::pattern_formatter>();
  const char* journal = std::getenv("JOURNAL_STREAM");
  if (journal != nullptr && *journal != '\0') {
    formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*%l: %v");
    access_formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*%v");
  } else {
    // Local time with its offset from UTC (ISO 8601), so that a line says when it was.
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
    access_formatter->set_pattern("%v");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  // Its level stays at info: the server asks the default logger's level first, so that
  // logging.level above info silences the access log in every format.
  auto access = std::make_shared<spdlog::logger>("access", access_sink);
  access->set_formatter(std::move(access_formatter));
  access->set_level(spdlog::level::info);
  access->flush_on(spdlog::level::info);
  spdlog::drop("access");
  spdlog::register_logger(std::move(access));
}

void SetUpMemory() {
  // Setting the threshold also turns off glibc's moving of it (mallopt(3)).
  constexpr int kMmapThresholdBytes = 1 << 20;
  mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
}

Status NotifySystemd(const std::string& state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || *path == '\0') return OkStatus();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t len = std::strlen(path);
  if (len >= sizeof(addr.sun_path)) return InvalidArgumentError("NOTIFY_SOCKET is too long");
  std::memcpy(addr.sun_path, path, len);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return InternalError(std::string("socket: ") + std::strerror(errno));
  const ssize_t sent =
      ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr),
               static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  const int err = errno;
  ::close(fd);
  if (sent < 0)
    return UnavailableError(std::string("sd_notify ") + state + ": " + std::strerror(err));
  return OkStatus();
}

SignalWatcher::SignalWatcher() {
  sigset_t set = WatchedSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A peer that closes early must not kill the process; Asio reports EPIPE instead.
  ::signal(SIGPIPE, SIG_IGN);
  thread_ = std::thread([this] { Run(); });
}

SignalWatcher::~SignalWatcher() {
  // The watcher thread waits forever for a second signal: it is detached rather than joined, as
  // process exit ends it.
  if (thread_.joinable()) thread_.detach();
}

void SignalWatcher::Run() {
  const sigset_t set = WatchedSignals();
  for (int stops = 0;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    std::unique_lock<std::mutex> lock(mu_);
    if (sig == SIGHUP) {
      if (!signal_name_.empty()) {
        lock.unlock();
        spdlog::info("SIGHUP while stopping: not reloaded");
        continue;
      }
      reload_pending_ = true;
      cv_.notify_all();
      continue;
    }
    if (stops++ == 0) {
      signal_name_ = SignalName(sig);
      cv_.notify_all();
    } else {
      lock.unlock();
      spdlog::warn("second {}: stopping now", SignalName(sig));
      spdlog::default_logger()->flush();
      std::_Exit(1);
    }
  }
}

SignalWatcher::Event SignalWatcher::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !signal_name_.empty() || reload_pending_; });
  if (!signal_name_.empty()) return Event::kStop;
  reload_pending_ = false;
  return Event::kReload;
}

std::string SignalWatcher::stop_signal() {
  std::lock_guard<std::mutex> lock(mu_);
  return signal_name_;
}

}  // namespace shingled::daemon
