// Browser sessions behind the read token: a person who signs in at /login with the token gets a
// random session id in an HttpOnly, SameSite=Strict cookie, which stands for the token on reads
// (a browser cannot send Authorization: Bearer on a link it follows). Sessions live in memory:
// they end after their lifetime, at a restart, and when the token changes.
// Thread-safe.
#ifndef SHINGLED_DAEMON_API_SESSIONS_H_
#define SHINGLED_DAEMON_API_SESSIONS_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"

namespace shingled::daemon {

// The cookie that carries a session id.
inline constexpr std::string_view kSessionCookie = "shingled_session";

class Sessions {
 public:
  using Clock = std::chrono::steady_clock;

  // Sessions last `lifetime`; at most `max_sessions` at once (the oldest goes first).
  Sessions(std::chrono::seconds lifetime, size_t max_sessions)
      : lifetime_(lifetime), max_sessions_(max_sessions) {}

  // A new session id (64 hex digits of the kernel's randomness), valid until now + lifetime.
  StatusOr<std::string> Create(Clock::time_point now);
  // Whether `id` names a session that has not ended.
  bool Valid(std::string_view id, Clock::time_point now) const;
  // Ends one session; ends them all (the token changed).
  void End(std::string_view id);
  void EndAll();

  std::chrono::seconds lifetime() const { return lifetime_; }
  size_t size() const;

 private:
  const std::chrono::seconds lifetime_;
  const size_t max_sessions_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Clock::time_point> ends_;  // id -> end
  std::multimap<Clock::time_point, std::string> by_end_;     // end -> id, the oldest first
};

// The value of cookie `name` in a Cookie header ("a=1; b=2"), or nullopt.
std::optional<std::string_view> CookieValue(std::string_view header, std::string_view name);

// Compares in time that depends only on the lengths, so that a client cannot find the token byte
// by byte from response times.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// Where a sign-in goes back to: `next` when it is a path of this server, else /reports/.
std::string SafeNext(std::string_view next);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_API_SESSIONS_H_
