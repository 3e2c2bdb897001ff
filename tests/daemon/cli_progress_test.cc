// Long commands as a person at a terminal sees them: a progress line on a terminal (and none in
// scripts or with --quiet), Ctrl-C that says at once it is finishing the pages in flight, commits
// what was accepted, prints the summary and exits non-zero; the ingest summary counts the URLs
// the sweep recorded.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "tests/daemon/daemon_harness.h"
#include "tests/daemon/run_shingled.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

// Distinct small pages, so that every one is sketched and stored.
void WritePages(const TempDir& dir, const std::string& sub, int n) {
  for (int i = 0; i < n; ++i) {
    std::string text = "<p>";
    for (int w = 0; w < 40; ++w) text += "w" + std::to_string(i * 97 + w * 13) + " ";
    dir.Write(sub + "/p" + std::to_string(i) + ".html", text + "</p>");
  }
}

// Runs `args` under script(1), which gives it a terminal; returns what the terminal showed.
std::string RunOnATerminal(const std::string& args) {
  std::string out;
  RunCli("--version", &out);  // the binary exists
  const std::string cmd =
      "script -qefc '" + std::string(SHINGLED_BINARY) + " " + args + "' /dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  out.clear();
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  pclose(pipe);
  return out;
}

TEST(CliProgressTest, IngestShowsProgressOnATerminalOnly) {
  if (system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) is missing";
  TempDir dir;
  WritePages(dir, "site", 20);
  const std::string flags = " --store " + dir.path() + "/store --sweep s --json";
  std::string shown = RunOnATerminal("ingest " + dir.path() + "/site" + flags);
  EXPECT_NE(shown.find("ingest s: "), std::string::npos) << shown;
  EXPECT_NE(shown.find(" pages, "), std::string::npos) << shown;
  // The sweep's name, and pages/s with one decimal.
  EXPECT_TRUE(std::regex_search(shown, std::regex("ingest s: [0-9,]+ pages, [0-9,]+\\.[0-9] "
                                                  "pages/s, [0-9,]+ errors, [0-9,]+ s")))
      << shown;
  EXPECT_NE(shown.find("\r\033[K"), std::string::npos) << shown;  // the line is cleared
  EXPECT_NE(shown.find("\"pages\":20"), std::string::npos) << shown;

  shown = RunOnATerminal("ingest " + dir.path() + "/site --quiet" + flags);
  EXPECT_EQ(shown.find("ingest s: "), std::string::npos) << shown;
  // In a script (a pipe), nothing but the summary.
  std::string out;
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/site" + flags, &out), 0) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_TRUE(json::parse(out, nullptr, false).is_object()) << out;
}

// The bug: the summary counted file paths. Two paths naming one file, and a symlink: the sweep
// records the URLs of the paths as given (a symlink keeps its own path's URL), each once.
TEST(CliProgressTest, IngestCountsTheUrlsTheSweepRecorded) {
  TempDir dir;
  WritePages(dir, "site", 3);
  std::filesystem::create_symlink(dir.path() + "/site/p0.html", dir.path() + "/site/link.html");
  std::string out;
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/site " + dir.path() + "/site --store " + dir.path() +
                       "/store --sweep s --base-url https://ex.com/ --json",
                   &out),
            0)
      << out;
  const json j = json::parse(out);
  EXPECT_EQ(j["pages"], 8) << out;  // each of the 4 files twice
  EXPECT_EQ(j["urls"], 4) << out;
  // link.html sorts first: the target's own path is the duplicate.
  ASSERT_EQ(
      RunCli("history https://ex.com/link.html --store " + dir.path() + "/store --json", &out), 0)
      << out;
  const int doc = json::parse(out)["versions"][0]["doc"];
  ASSERT_EQ(RunCli("history https://ex.com/p0.html --store " + dir.path() + "/store --json", &out),
            0)
      << out;
  EXPECT_EQ(json::parse(out)["versions"][0]["verdict"], "duplicate") << out;
  EXPECT_EQ(json::parse(out)["versions"][0]["doc"], doc) << out;
}

// Ctrl-C: what was accepted is committed and counted, the summary is printed, the exit code is
// 130, and the store is consistent.
TEST(CliProgressTest, CtrlCCommitsWhatWasAcceptedAndPrintsTheSummary) {
  TempDir dir;
  WritePages(dir, "site", 4000);
  const std::string store = dir.path() + "/store";
  const std::string out_file = dir.path() + "/out.json";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    FILE* f = freopen(out_file.c_str(), "w", stdout);
    if (f == nullptr) _exit(99);
    execl(SHINGLED_BINARY, SHINGLED_BINARY, "ingest", (dir.path() + "/site").c_str(), "--store",
          store.c_str(), "--sweep", "s", "--json", static_cast<char*>(nullptr));
    _exit(98);
  }
  // Once the store exists the files are being read: 4,000 pages take about a second, more under
  // the sanitizers.
  for (int i = 0; i < 500 && !std::filesystem::exists(store + "/data.mdb"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const json j = json::parse(ReadWholeFile(out_file), nullptr, false);
  ASSERT_TRUE(j.is_object()) << ReadWholeFile(out_file);
  EXPECT_EQ(j["interrupted"], true);
  // Usually a part of the pages; all of them when the signal came after the last file was read
  // (a fast machine): either way the summary is what the store holds.
  const int pages = j["pages"];
  std::string out;
  ASSERT_EQ(RunCli("sweep list --store " + store + " --json", &out), 0) << out;
  EXPECT_EQ(json::parse(out)["sweeps"][0]["pages"], pages) << out;
  ASSERT_EQ(RunCli("check --store " + store, &out), 0) << out;
}

// The bug: after Ctrl-C the command said nothing until its summary, while it finished and
// committed the pages in flight, which can take a while. It says so at once, once; on a terminal
// the progress line is erased first. stderr is a pseudo-terminal here: the first progress line
// tells the test that the files are being read (4,000 pages take about a second).
TEST(CliProgressTest, CtrlCSaysOnceThatItFinishesThePagesInFlight) {
  TempDir dir;
  WritePages(dir, "site", 4000);
  const std::string store = dir.path() + "/store";
  const std::string out_file = dir.path() + "/out.json";
  const InterruptedRun run = InterruptOnATerminal(
      {"ingest", dir.path() + "/site", "--store", store, "--sweep", "s", "--json"}, out_file,
      "ingest s: ");
  const std::string& shown = run.shown;
  EXPECT_EQ(run.exit_code, 130);
  const json j = json::parse(ReadWholeFile(out_file), nullptr, false);
  ASSERT_TRUE(j.is_object()) << ReadWholeFile(out_file);
  EXPECT_EQ(j["interrupted"], true);
  const std::string message =
      "\r\033[Kshingled ingest: stopping: reading no more files, finishing the pages in flight "
      "and committing them (Ctrl-C again to quit at once)";
  const size_t at = shown.find(message);
  ASSERT_NE(at, std::string::npos) << shown;
  EXPECT_EQ(shown.find("stopping:", at + message.size()), std::string::npos) << shown;
  std::string out;
  ASSERT_EQ(RunCli("check --store " + store, &out), 0) << out;
}

}  // namespace
}  // namespace shingled::testing
