// One round of the kill tests: a child process runs bounded steps until none is left, and is
// killed (SIGKILL) at a random moment. The engines' crash tests (tests/store/crash_test.cc,
// tests/redis/backend_forget_test.cc) run it in a loop and check the store after each kill.
#ifndef SHINGLED_TESTS_STORE_KILL_CHILD_H_
#define SHINGLED_TESTS_STORE_KILL_CHILD_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>

#include "base/status.h"

namespace shingled::store::testing {

struct KilledChild {
  bool finished = false;  // the child ran out of steps before the kill
  int acknowledged = 0;   // steps it finished (each after its write was done)
};

// Forks a child that calls `open` (its own store: nothing of the parent's is used across the
// fork), then `step` until it answers false (nothing left); the parent kills it after
// `min_us` plus a random part of `spread_us` microseconds. The child exits 2 when `open` fails and
// 3 when a step does, which the round reports as a test failure.
template <typename Open, typename Step>
KilledChild KillChildAtRandom(std::mt19937& rng, uint32_t min_us, uint32_t spread_us, Open open,
                              Step step) {
  KilledChild out;
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    auto store = open();
    if (!store.ok()) _exit(2);
    for (bool more = true; more;) {
      StatusOr<bool> left = step(**store);
      if (!left.ok()) _exit(3);
      if (write(fds[1], "\n", 1) != 1) _exit(4);
      more = *left;
    }
    _exit(0);
  }
  close(fds[1]);
  usleep(static_cast<useconds_t>(min_us + rng() % spread_us));
  kill(pid, SIGKILL);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) || WEXITSTATUS(status) == 0)
      << "the child exited with " << WEXITSTATUS(status);
  out.finished = WIFEXITED(status);
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;)
    out.acknowledged += static_cast<int>(std::count(buf, buf + n, '\n'));
  close(fds[0]);
  return out;
}

}  // namespace shingled::store::testing

#endif  // SHINGLED_TESTS_STORE_KILL_CHILD_H_
