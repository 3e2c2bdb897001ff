// Runs the shingled binary for CLI tests: RunShingled("compare --json a b") returns its exit code
// and stdout. The including test target defines SHINGLED_BINARY (the binary's path), as
// tests/daemon/CMakeLists.txt and tests/crawler/CMakeLists.txt do.
#ifndef SHINGLED_TESTS_DAEMON_RUN_SHINGLED_H_
#define SHINGLED_TESTS_DAEMON_RUN_SHINGLED_H_

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_DAEMON_RUN_SHINGLED_H_
