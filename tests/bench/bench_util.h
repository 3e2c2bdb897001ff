// What the plain benchmark programs share: elapsed seconds, and a StatusOr's value or an exit
// naming what failed.
#ifndef SHINGLED_TESTS_BENCH_BENCH_UTIL_H_
#define SHINGLED_TESTS_BENCH_BENCH_UTIL_H_

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "base/status.h"

namespace shingled::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

template <typename T>
T Must(StatusOr<T> s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(s).value();
}

}  // namespace shingled::bench

#endif  // SHINGLED_TESTS_BENCH_BENCH_UTIL_H_
