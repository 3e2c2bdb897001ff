// Fuzzes robots.txt parsing and matching.
//
// Input: a path to check up to the first '\n' (when there is one in the first 300 bytes), then
// the robots.txt text. Besides crashes, sanitizer reports and hangs, it checks properties that
// hold for every input: /robots.txt is always allowed, and parsing is deterministic.
//
//   build-fuzz/tests/fuzz/robots_fuzz -max_total_time=120 -max_len=65536
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "crawler/robots.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view path = "/";
  const size_t newline = input.substr(0, 300).find('\n');
  if (newline != std::string_view::npos) {
    path = input.substr(0, newline);
    input.remove_prefix(newline + 1);
  }
  using shingled::crawler::RobotsRules;
  const RobotsRules rules = RobotsRules::Parse(input, "shingled");
  if (!rules.IsAllowed("/robots.txt")) abort();
  const bool allowed = rules.IsAllowed(path);
  if (RobotsRules::Parse(input, "shingled").IsAllowed(path) != allowed) abort();
  (void)shingled::crawler::RobotsPatternMatches(path, input.substr(0, 300));  // must not hang
  return 0;
}
