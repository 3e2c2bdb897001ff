// Process-level pieces of the daemon: logging set-up, the systemd notify protocol, and signals.
#ifndef SHINGLED_DAEMON_PROCESS_H_
#define SHINGLED_DAEMON_PROCESS_H_

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"

namespace shingled::daemon {

// Sends spdlog's default logger to stderr at `level` ("info", ...): colours only on a terminal;
// each line starts with the local time and its offset from UTC ("2026-12-04T10:53:08.123+00:00
// info ..."), except under systemd (JOURNAL_STREAM set), where it starts with a syslog priority
// ("<6>") that journald turns into the entry's priority, and no time stamp (journald adds its
// own). Also registers the logger "access", for the access log's combined and json lines: to
// stderr too, each line bare (with the priority under systemd).
void SetUpLogging(const std::string& level);

// Makes every heap allocation of at least 1 MiB a mapping of its own, given back to the system
// when freed. glibc's default threshold moves up to the size of the largest block freed (up to
// 32 MiB), after which large page bodies (a decoded 16 MiB gzip body, its copy for the pipeline)
// come from the threads' arenas and stay resident once freed: measured, ten posts of 12 MiB
// decoded left the daemon at 64-84 MiB of anonymous memory against 17 MiB with the fixed
// threshold (docs/OPERATIONS.md). Costs a mapping and its page faults per large body, which the
// sketching of such a body outweighs many times. Call once, at start-up.
void SetUpMemory();

// Sends `state` ("READY=1", "STOPPING=1", "STATUS=...") to $NOTIFY_SOCKET if it is set (the
// sd_notify datagram protocol; '@' starts an abstract socket name). Not set: does nothing.
// Returns the error when the datagram could not be sent.
Status NotifySystemd(const std::string& state);

// Blocks SIGTERM, SIGINT and SIGHUP (and ignores SIGPIPE) in the calling thread and every thread
// it creates later, then waits for them on a thread of its own. The first SIGTERM or SIGINT wakes
// Wait() with kStop; the second ends the process at once with exit code 1 (LMDB keeps the store
// consistent; only pages not yet acknowledged are lost). A SIGHUP wakes Wait() with kReload (one
// for several that come before Wait() returns); after a stop signal SIGHUPs are ignored. Create it
// before any other thread.
class SignalWatcher {
 public:
  enum class Event { kStop, kReload };

  SignalWatcher();
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  // Blocks until a stop signal or a SIGHUP not yet returned. A stop signal wins over a pending
  // SIGHUP, and once it came every call returns kStop at once.
  Event Wait();
  // The first stop signal's name ("SIGTERM"); empty before it.
  std::string stop_signal();

 private:
  void Run();

  std::thread thread_;
  // State below is protected by mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::string signal_name_;      // set by the first stop signal
  bool reload_pending_ = false;  // a SIGHUP came that Wait() has not returned
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_PROCESS_H_
