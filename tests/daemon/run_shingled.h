// Runs the shingled binary for CLI tests: RunShingled("compare --json a b") returns its exit code
// and stdout. The including test target defines SHINGLED_BINARY (the binary's path), as
// tests/daemon/CMakeLists.txt and tests/crawler/CMakeLists.txt do.
#ifndef SHINGLED_TESTS_DAEMON_RUN_SHINGLED_H_
#define SHINGLED_TESTS_DAEMON_RUN_SHINGLED_H_

#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef SHINGLED_BINARY
#error "the test target must define SHINGLED_BINARY"
#endif

namespace shingled::testing {

struct CliResult {
  int exit_code;    // -1 when the process did not exit normally
  std::string out;  // stdout
};

// Runs the binary with `args` (already shell-quoted), capturing stdout. stderr is dropped, or,
// when `err` is given, goes to a file whose content is put in `*err`.
inline CliResult RunShingled(const std::string& args, std::string* err = nullptr) {
  // Per process: ctest runs a file's tests in parallel processes.
  const std::string err_path =
      err == nullptr ? "/dev/null"
                     : ::testing::TempDir() + "/cli_stderr." + std::to_string(::getpid()) + ".txt";
  const std::string cmd = std::string(SHINGLED_BINARY) + " " + args + " 2>" + err_path;
  FILE* pipe = popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << cmd;
  if (pipe == nullptr) return {-1, ""};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  if (err != nullptr) {
    std::ifstream in(err_path);
    std::stringstream ss;
    ss << in.rdbuf();
    *err = ss.str();
    in.close();
    std::remove(err_path.c_str());
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

struct InterruptedRun {
  int exit_code;      // -1 when the process did not exit normally
  std::string shown;  // what its terminal showed (stderr)
};

// Runs the binary with `args`, its stdout into the file `out_file` and its stderr on a
// pseudo-terminal (so that it shows progress as on a terminal); once the terminal shows `cue`,
// sends it SIGINT (Ctrl-C), then reads the terminal to its end and waits for the exit.
inline InterruptedRun InterruptOnATerminal(const std::vector<std::string>& args,
                                           const std::string& out_file, const std::string& cue) {
  InterruptedRun run{-1, ""};
  int terminal = -1;
  int child_side = -1;
  EXPECT_EQ(openpty(&terminal, &child_side, nullptr, nullptr, nullptr), 0);
  if (terminal < 0) return run;
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(SHINGLED_BINARY));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    close(terminal);
    if (freopen(out_file.c_str(), "w", stdout) == nullptr) _exit(99);
    if (dup2(child_side, STDERR_FILENO) < 0) _exit(97);
    close(child_side);
    execv(SHINGLED_BINARY, argv.data());
    _exit(98);
  }
  close(child_side);
  if (pid < 0) {
    close(terminal);
    return run;
  }
  // Reads what the terminal shows; false at its end (EIO once the process has exited).
  auto read_some = [&] {
    char buf[4096];
    const ssize_t n = read(terminal, buf, sizeof(buf));
    if (n > 0) run.shown.append(buf, static_cast<size_t>(n));
    return n > 0;
  };
  while (run.shown.find(cue) == std::string::npos && read_some()) {
  }
  EXPECT_NE(run.shown.find(cue), std::string::npos) << run.shown;
  EXPECT_EQ(kill(pid, SIGINT), 0);
  while (read_some()) {
  }
  close(terminal);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_DAEMON_RUN_SHINGLED_H_
