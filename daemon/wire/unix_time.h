// Unix time in whole seconds, as the store keeps its dates (store/types.h) and the API prints
// them (FormatIsoTime, request_parse.h). Thread-safe free functions.
#ifndef SHINGLED_DAEMON_WIRE_UNIX_TIME_H_
#define SHINGLED_DAEMON_WIRE_UNIX_TIME_H_

#include <chrono>
#include <cstdint>

namespace shingled::daemon {

// Whole seconds since 1970-01-01T00:00:00Z, rounded toward zero.
inline int64_t UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

// The system clock's now, in whole seconds since 1970-01-01T00:00:00Z.
inline int64_t UnixNow() { return UnixSeconds(std::chrono::system_clock::now()); }

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_WIRE_UNIX_TIME_H_
