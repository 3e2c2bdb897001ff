#include "daemon/api/sessions.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace shingled::daemon {

StatusOr<std::string> Sessions::Create(Clock::time_point now) {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InternalError(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  id.reserve(2 * sizeof(bytes));
  for (unsigned char b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 15]);
  }
  const Clock::time_point end = now + lifetime_;
  std::lock_guard<std::mutex> lock(mu_);
  // Ended sessions first, then the oldest, make room.
  while (!by_end_.empty() && (by_end_.begin()->first <= now || ends_.size() >= max_sessions_)) {
    ends_.erase(by_end_.begin()->second);
    by_end_.erase(by_end_.begin());
  }
  ends_.emplace(id, end);
  by_end_.emplace(end, id);
  return id;
}

bool Sessions::Valid(std::string_view id, Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ends_.find(std::string(id));
  return it != ends_.end() && now < it->second;
}

void Sessions::End(std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ends_.find(std::string(id));
  if (it == ends_.end()) return;
  auto [first, last] = by_end_.equal_range(it->second);
  for (auto e = first; e != last; ++e) {
    if (e->second == it->first) {
      by_end_.erase(e);
      break;
    }
  }
  ends_.erase(it);
}

void Sessions::EndAll() {
  std::lock_guard<std::mutex> lock(mu_);
  ends_.clear();
  by_end_.clear();
}

size_t Sessions::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ends_.size();
}

std::optional<std::string_view> CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t semi = header.find(';');
    std::string_view pair = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
      std::string_view value = pair.substr(eq + 1);
      while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
      return value;
    }
  }
  return std::nullopt;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

std::string SafeNext(std::string_view next) {
  // A path of this server only: not "//host" (another server), no backslash (some browsers read
  // it as a slash), no control character (a header split).
  const bool ok = next.size() > 0 && next.size() <= 2048 && next.front() == '/' &&
                  !next.starts_with("//") && next.find('\\') == std::string_view::npos &&
                  std::none_of(next.begin(), next.end(),
                               [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  return ok ? std::string(next) : std::string("/reports/");
}

}  // namespace shingled::daemon
