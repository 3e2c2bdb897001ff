// Headless Chromium (Debian's `chromium`) for the report tests: the DOM a page renders to, its
// console messages, and screenshots for a person to look at.
#ifndef SHINGLED_TESTS_REPORT_CHROMIUM_H_
#define SHINGLED_TESTS_REPORT_CHROMIUM_H_

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace shingled::report::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `command` through the shell; its exit code.
inline int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline bool HaveChromium() { return Shell("command -v chromium >/dev/null 2>&1") == 0; }

// The command line that starts headless Chromium with a throw-away profile in `dir`; console
// messages go to standard error (lines with ":CONSOLE").
inline std::string ChromiumCommand(const std::string& dir) {
  return "chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run "
         "--disable-extensions --enable-logging=stderr --v=0 --user-data-dir=" +
         dir + "/chromium-profile ";
}

// Where screenshots go: $SHINGLED_SCREENSHOT_DIR when set, else `fallback`.
inline std::string ScreenshotDir(const std::string& fallback) {
  const char* env = std::getenv("SHINGLED_SCREENSHOT_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : fallback;
}

}  // namespace shingled::report::testing

#endif  // SHINGLED_TESTS_REPORT_CHROMIUM_H_
