// Runs the shell examples of docs/API.md and docs/OPERATIONS.md in the order they are written,
// against a real daemon, so that a newcomer pasting them one after another succeeds.
//
// A fenced block is a shell example when its fence says ```sh, ```bash, ```shell or ```console;
// a fence must say what it holds (```json, ```toml, ```text, ...), and a bare one fails the test.
// In a block with lines starting `$ ` those lines are the commands (with the lines their trailing
// `\` continues) and the others the output shown; otherwise every line is script, `#` starting a
// comment. A block right after `<!-- not run: REASON -->` is not run: for what a test cannot do
// (systemd, root, a Redis Cluster, the outside network); keep such blocks few.
//
// Each file's examples run as one bash script (so that a variable set by one block is there for
// the next), from a temporary directory holding links to the repository's top-level entries (the
// examples read tests/data/... and docs/examples/..., and the files they write stay in the
// temporary directory), with `shingled` on the PATH, against `shingled serve` on the repository's
// config/shingled.toml with a fresh store on a free loopback port, which replaces 127.0.0.1:8480
// in the examples. `curl` is wrapped to fail on an HTTP error status (--fail-with-body), to
// refuse a URL that is not the daemon's, and to connect to the daemon whatever it is given
// (--connect-to), so that nothing leaves 127.0.0.1. Every command must exit 0: the test names the
// file, block and line of each one that did not, with its output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/daemon/daemon_harness.h"

#ifndef SHINGLED_SOURCE_DIR
#error "the test target must define SHINGLED_SOURCE_DIR"
#endif

namespace shingled::testing {
namespace {

struct Fence {
  int line = 0;         // of the opening fence, in the Markdown file
  std::string info;     // what follows the backticks: "sh", "json", ...
  std::string not_run;  // the reason of a `<!-- not run: REASON -->` before it, else ""
  bool shell = false;   // a shell example
  // The block's script lines by their line in the file: commands only (output left out).
  std::map<int, std::string> script;
};

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Every fenced block of `markdown`, in order.
std::vector<Fence> Fences(const std::string& markdown) {
  static constexpr std::string_view kNotRun = "<!-- not run:";
  std::vector<Fence> fences;
  std::stringstream in(markdown);
  std::string line, last_text;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string t = Trim(line);
    if (!t.starts_with("```")) {
      if (!t.empty()) last_text = t;
      continue;
    }
    Fence fence;
    fence.line = number;
    fence.info = Trim(t.substr(3));
    fence.shell = fence.info == "sh" || fence.info == "bash" || fence.info == "shell" ||
                  fence.info == "console";
    if (last_text.starts_with(kNotRun) && last_text.ends_with("-->")) {
      fence.not_run = Trim(last_text.substr(kNotRun.size(), last_text.size() - kNotRun.size() - 3));
      if (fence.not_run.empty()) fence.not_run = "?";  // a marker without a reason: reported
    }
    std::vector<std::pair<int, std::string>> lines;
    while (std::getline(in, line)) {
      ++number;
      if (Trim(line).starts_with("```")) break;
      lines.emplace_back(number, line);
    }
    // Indented blocks (in a list item) keep their indentation: harmless to bash.
    bool prompts = false;
    for (const auto& [n, text] : lines) prompts = prompts || Trim(text).starts_with("$ ");
    bool continued = false;
    for (const auto& [n, text] : lines) {
      const std::string s = Trim(text);
      if (!prompts) {
        fence.script[n] = text;
      } else if (s.starts_with("$ ")) {
        fence.script[n] = s.substr(2);
        continued = s.ends_with("\\");
      } else if (continued) {
        fence.script[n] = text;
        continued = s.ends_with("\\");
      }
    }
    last_text.clear();
    fences.push_back(std::move(fence));
  }
  return fences;
}

class DocsTest : public ::testing::Test {
 protected:
  const std::string source_ = SHINGLED_SOURCE_DIR;

  std::vector<Fence> FencesOf(const std::string& doc) const {
    return Fences(ReadWholeFile(source_ + "/" + doc));
  }

  // Runs the shell examples of `doc` (a path under the source directory) in order against a
  // fresh daemon, and fails naming each command that did not exit 0.
  void RunExamples(const std::string& doc) {
    const std::vector<Fence> fences = FencesOf(doc);
    TempDir dir;
    Daemon daemon(dir, dir.path() + "/store", ReadWholeFile(source_ + "/config/shingled.toml"));
    ASSERT_NE(daemon.port(), 0) << daemon.log();
    const std::string base = "http://127.0.0.1:" + std::to_string(daemon.port());

    // The examples' working directory: the repository's entries by link, room for their files.
    const std::string work = dir.path() + "/work";
    std::filesystem::create_directories(work);
    for (const auto& entry : std::filesystem::directory_iterator(source_)) {
      std::error_code ec;
      std::filesystem::create_symlink(entry.path(), work + "/" + entry.path().filename().string(),
                                      ec);
      ASSERT_FALSE(ec) << entry.path() << ": " << ec.message();
    }

    // The script keeps each example line at its line number in the file, so that bash's LINENO
    // names the line in the doc; all set-up is on line 1. Markers go to fd 3, the same file as
    // the commands' output, so that they interleave in order: "\001L N" before each command,
    // "\001F N STATUS" when one fails.
    const std::string bin_dir = std::filesystem::path(SHINGLED_BINARY).parent_path().string();
    std::string script =
        "export PATH=" + ShellQuote(bin_dir) + ":\"$PATH\" HOME=" + ShellQuote(work) +
        " B=" + ShellQuote(base) +
        "; set -o pipefail; "
        "trap 'printf \"\\001L %s\\n\" \"$LINENO\" >&3' DEBUG; "
        "trap 's=$?; printf \"\\001F %s %s\\n\" \"$LINENO\" \"$s\" >&3' ERR; "
        "curl() { local a; for a in \"$@\"; do case \"$a\" in "
        "http://127.0.0.1:8480|http://127.0.0.1:8480/*) ;; "
        "http://*|https://*) echo \"not the daemon: $a\" >&2; return 99;; "
        "esac; done; command curl --connect-to ::127.0.0.1:8480 --fail-with-body --show-error "
        "\"$@\"; }\n";
    int script_line = 1;
    int blocks_run = 0;
    int blocks_not_run = 0;
    std::map<int, int> block_of_line;  // script line -> the line of its block's fence
    for (const Fence& f : fences) {
      if (!f.shell) continue;
      if (!f.not_run.empty()) {
        ++blocks_not_run;
        continue;
      }
      ++blocks_run;
      for (const auto& [n, text] : f.script) {
        for (; script_line + 1 < n; ++script_line) script.push_back('\n');
        script.append(text).push_back('\n');
        script_line = n;
        block_of_line[n] = f.line;
      }
    }
    ASSERT_GT(blocks_run, 0) << doc << " has no shell example to run";
    ReplaceAll(&script, "127.0.0.1:8480", "127.0.0.1:" + std::to_string(daemon.port()));
    const std::string script_path = dir.Write("examples.sh", script);
    const std::string out_path = dir.path() + "/examples.out";
    const std::string command = "cd " + ShellQuote(work) + " && bash " + ShellQuote(script_path) +
                                " >" + ShellQuote(out_path) + " 2>&1 3>&1 </dev/null";
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << command;

    // The output of each line (the last time it ran), and the failures.
    std::map<int, std::string> output;
    std::vector<std::pair<int, std::string>> failures;  // line, exit status
    std::stringstream out(ReadWholeFile(out_path));
    // Octal, as the script writes them: an octal escape ends after three digits, where "\x01F"
    // would read the F as a hex digit.
    static constexpr std::string_view kLineMarker = "\001L ";
    static constexpr std::string_view kFailMarker = "\001F ";
    std::string line;
    int current = 0;
    while (std::getline(out, line)) {
      if (line.starts_with(kLineMarker)) {
        const int n = std::stoi(line.substr(3));
        if (n != current) output[n].clear();
        current = n;
      } else if (line.starts_with(kFailMarker)) {
        std::stringstream fields(line.substr(3));
        int n = 0;
        std::string code;
        fields >> n >> code;
        failures.emplace_back(n, code);
      } else {
        output[current].append(line).push_back('\n');
      }
    }
    for (const auto& [n, code] : failures) {
      const auto block = block_of_line.upper_bound(n);
      const int fence = block == block_of_line.begin() ? 0 : std::prev(block)->second;
      ADD_FAILURE() << doc << ", the block at line " << fence << ": line " << n
                    << " exited with status " << code << ":\n  " << Trim(LineOf(doc, n))
                    << "\noutput:\n"
                    << output[n];
    }
    std::cout << doc << ": " << blocks_run << " blocks run (" << block_of_line.size() << " lines), "
              << blocks_not_run << " not run, " << failures.size() << " commands failed\n";
  }

  std::string LineOf(const std::string& doc, int n) const {
    std::stringstream in(ReadWholeFile(source_ + "/" + doc));
    std::string line;
    for (int i = 0; i < n && std::getline(in, line); ++i) {
    }
    return line;
  }

  // Every fence says what it holds; a not-run block says why.
  void ExpectFencesLabelled(const std::string& doc, size_t max_not_run) const {
    size_t not_run = 0;
    for (const Fence& f : FencesOf(doc)) {
      EXPECT_FALSE(f.info.empty())
          << doc << " line " << f.line
          << ": a bare ``` fence; say what it holds (```sh, ```json, ```text, ...)";
      if (!f.not_run.empty()) {
        ++not_run;
        EXPECT_NE(f.not_run, "?") << doc << " line " << f.line << ": `not run` without a reason";
        EXPECT_TRUE(f.shell) << doc << " line " << f.line << ": `not run` on a block that is not a "
                             << "shell example";
      }
      if (f.shell) {
        EXPECT_FALSE(f.script.empty()) << doc << " line " << f.line << ": no command";
      }
    }
    EXPECT_LE(not_run, max_not_run) << doc << ": more blocks not run than expected; run them";
  }
};

// How a file is read: the commands of a block with prompts, continuation lines, the marker.
TEST_F(DocsTest, ReadsPromptsContinuationsAndNotRunMarkers) {
  const std::vector<Fence> fences = Fences(
      "Text.\n"
      "```console\n"
      "$ curl -s \"$B/v1/stats\" \\\n"
      "    -o stats.json\n"
      "{\"documents\": 0}\n"
      "$ echo done\n"
      "done\n"
      "```\n"
      "<!-- not run: needs systemd -->\n"
      "```sh\n"
      "systemctl reload shingled\n"
      "```\n"
      "```json\n"
      "{}\n"
      "```\n");
  ASSERT_EQ(fences.size(), 3u);
  EXPECT_TRUE(fences[0].shell);
  EXPECT_EQ(fences[0].line, 2);
  const std::map<int, std::string> commands = {
      {3, "curl -s \"$B/v1/stats\" \\"}, {4, "    -o stats.json"}, {6, "echo done"}};
  EXPECT_EQ(fences[0].script, commands);
  EXPECT_TRUE(fences[0].not_run.empty());
  EXPECT_EQ(fences[1].not_run, "needs systemd");
  EXPECT_FALSE(fences[2].shell);
}

TEST_F(DocsTest, ApiFencesSayWhatTheyHold) { ExpectFencesLabelled("docs/API.md", 1); }

TEST_F(DocsTest, OperationsFencesSayWhatTheyHold) { ExpectFencesLabelled("docs/OPERATIONS.md", 1); }

TEST_F(DocsTest, ApiExamplesRunInOrder) { RunExamples("docs/API.md"); }

TEST_F(DocsTest, OperationsExamplesRunInOrder) { RunExamples("docs/OPERATIONS.md"); }

}  // namespace
}  // namespace shingled::testing
