// Runs the commands of README.md, so that the README cannot drift from what shingled does.
//
// Every shell block (a fence of ```sh, ```bash, ```shell or a bare ```) must follow a marker
// comment `<!-- readme-test: KIND -->` (the README's first comment explains them):
//   ci      installing and building, which CI runs itself (.ci/run -> scripts/test.sh): each
//           command's program must be an executable script of the repository, and is not run;
//   daemon  each command runs with /bin/sh from the source directory against a real
//           `shingled serve` (config/shingled.toml, a temporary store, a free loopback port that
//           replaces 127.0.0.1:8480);
//   cli     each command runs with /bin/sh in a temporary home directory (its ~/kb holds four
//           pages: two the same, one a near copy, one another page), `shingled` on the PATH.
// A command's trailing `# answers: a, b` names the fields its answer has: the output must be a
// JSON object, or JSON lines of objects, each holding every field. A command without it must
// print something. Every command must exit 0.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/daemon/daemon_harness.h"

#ifndef SHINGLED_SOURCE_DIR
#error "the test target must define SHINGLED_SOURCE_DIR"
#endif

namespace shingled::testing {
namespace {

struct Command {
  std::string text;                 // the command, continuation lines joined
  std::vector<std::string> fields;  // from `# answers: ...`
  int line = 0;                     // in README.md, for messages
};

struct Block {
  std::string kind;  // "ci", "daemon", "cli", or "" when unmarked
  int line = 0;
  std::vector<Command> commands;
};

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The fields named by a command's trailing `# answers: a, b`.
std::vector<std::string> AnswerFields(const std::string& command) {
  std::vector<std::string> fields;
  const size_t at = command.find("# answers:");
  if (at == std::string::npos) return fields;
  std::stringstream list(command.substr(at + 10));
  std::string field;
  while (std::getline(list, field, ',')) {
    if (!Trim(field).empty()) fields.push_back(Trim(field));
  }
  return fields;
}

std::vector<Block> ShellBlocks(const std::string& readme) {
  static const std::regex kMarker(R"(^<!-- readme-test: ([a-z]+) -->$)");
  std::vector<Block> blocks;
  std::stringstream in(readme);
  std::string line, last_text;
  int number = 0;
  bool in_comment = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string t = Trim(line);
    if (in_comment) {
      in_comment = t.find("-->") == std::string::npos;
      continue;
    }
    if (!t.starts_with("```")) {
      if (t.starts_with("<!--") && t.find("-->") == std::string::npos) in_comment = true;
      if (!t.empty()) last_text = t;
      continue;
    }
    const std::string info = Trim(t.substr(3));
    const bool shell = info.empty() || info == "sh" || info == "bash" || info == "shell";
    Block block;
    block.line = number;
    std::smatch m;
    if (std::regex_match(last_text, m, kMarker)) block.kind = m[1];
    std::string pending;
    int pending_line = 0;
    while (std::getline(in, line)) {
      ++number;
      if (Trim(line).starts_with("```")) break;
      if (!shell) continue;
      if (pending.empty()) pending_line = number;
      if (!line.empty() && line.back() == '\\') {
        pending.append(line, 0, line.size() - 1).append(" ");
        continue;
      }
      pending.append(line);
      const std::string command = Trim(pending);
      pending.clear();
      if (command.empty() || command.starts_with("#")) continue;
      block.commands.push_back({command, AnswerFields(command), pending_line});
    }
    last_text.clear();
    if (shell) blocks.push_back(std::move(block));
  }
  return blocks;
}

struct Run {
  int exit_code = -1;
  std::string out;
};

// Runs `script` with /bin/sh; stdout in `out`, stderr left to the test's log.
Run Shell(const std::string& script) {
  Run r;
  FILE* pipe = popen(script.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The command ran, and its answer holds what the README says it does.
void ExpectAnswer(const Command& c, const Run& r) {
  SCOPED_TRACE("README.md line " + std::to_string(c.line) + ": " + c.text);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  if (c.fields.empty()) {
    EXPECT_FALSE(Trim(r.out).empty()) << "the command printed nothing";
    return;
  }
  std::vector<nlohmann::json> answers;
  if (nlohmann::json whole = nlohmann::json::parse(r.out, nullptr, false); !whole.is_discarded()) {
    answers.push_back(std::move(whole));
  } else {
    std::stringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      if (Trim(line).empty()) continue;
      answers.push_back(nlohmann::json::parse(line, nullptr, false));
    }
  }
  ASSERT_FALSE(answers.empty()) << "no answer";
  for (const nlohmann::json& answer : answers) {
    ASSERT_TRUE(answer.is_object()) << "not a JSON object: " << r.out;
    for (const std::string& field : c.fields) {
      EXPECT_TRUE(answer.contains(field)) << "no \"" << field << "\" in " << answer.dump();
    }
  }
}

class ReadmeTest : public ::testing::Test {
 protected:
  const std::string source_ = SHINGLED_SOURCE_DIR;
  const std::vector<Block> blocks_ = ShellBlocks(ReadWholeFile(source_ + "/README.md"));

  std::vector<Command> CommandsOf(const std::string& kind) const {
    std::vector<Command> out;
    for (const Block& b : blocks_) {
      if (b.kind == kind) out.insert(out.end(), b.commands.begin(), b.commands.end());
    }
    return out;
  }
};

TEST_F(ReadmeTest, EveryShellBlockSaysHowItIsTested) {
  ASSERT_FALSE(blocks_.empty());
  for (const Block& b : blocks_) {
    EXPECT_TRUE(b.kind == "ci" || b.kind == "daemon" || b.kind == "cli")
        << "the shell block at README.md line " << b.line
        << " has no <!-- readme-test: ci|daemon|cli --> marker before it (or an unknown one: \""
        << b.kind << "\")";
    EXPECT_FALSE(b.commands.empty()) << "README.md line " << b.line;
  }
}

// Installing and building is what CI does (.ci/run runs scripts/test.sh): those commands are not
// run here, but each must name an executable script of the repository.
TEST_F(ReadmeTest, TheInstallCommandsAreScriptsOfTheRepository) {
  const std::vector<Command> commands = CommandsOf("ci");
  ASSERT_FALSE(commands.empty());
  for (const Command& c : commands) {
    const std::string program = c.text.substr(0, c.text.find(' '));
    const std::filesystem::path path = std::filesystem::path(source_) / program;
    EXPECT_TRUE(std::filesystem::is_regular_file(path)) << c.text;
    EXPECT_EQ(access(path.c_str(), X_OK), 0) << program << " is not executable";
  }
  EXPECT_NE(ReadWholeFile(source_ + "/.ci/run").find("scripts/test.sh"), std::string::npos);
}

// The tour, in order, against a daemon started as scripts/run.sh starts it.
TEST_F(ReadmeTest, TheTourRunsAgainstADaemon) {
  const std::vector<Command> commands = CommandsOf("daemon");
  ASSERT_FALSE(commands.empty());
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", ReadWholeFile(source_ + "/config/shingled.toml"));
  ASSERT_NE(daemon.port(), 0) << daemon.log();
  for (const Command& c : commands) {
    EXPECT_NE(c.text.find("127.0.0.1:8480"), std::string::npos)
        << "a tour command that does not talk to the daemon: " << c.text;
    EXPECT_FALSE(c.fields.empty()) << "a tour command without `# answers:`: " << c.text;
    std::string command = c.text;
    ReplaceAll(&command, "127.0.0.1:8480", "127.0.0.1:" + std::to_string(daemon.port()));
    std::string script = "cd ";
    script.append(ShellQuote(source_)).append(" && ").append(command);
    ExpectAnswer(c, Shell(script));
  }
}

// The command-line blocks, in a home directory of their own with a small repository in ~/kb.
TEST_F(ReadmeTest, TheCommandLineExamplesRun) {
  const std::vector<Command> commands = CommandsOf("cli");
  ASSERT_FALSE(commands.empty());
  TempDir home;
  const std::string a = ReadWholeFile(source_ + "/tests/data/samples/page-a.html");
  std::string edited = a;
  const size_t word = edited.find("autumn");
  ASSERT_NE(word, std::string::npos);
  edited.replace(word, 6, "spring");
  home.Write("kb/a.html", a);
  home.Write("kb/a-copy.html", a);
  home.Write("kb/a-edited.html", edited);
  home.Write("kb/b.html", ReadWholeFile(source_ + "/tests/data/samples/page-b.html"));
  const std::string bin_dir = std::filesystem::path(SHINGLED_BINARY).parent_path().string();
  for (const Command& c : commands) {
    EXPECT_TRUE(c.text.starts_with("shingled ")) << c.text;
    std::string script = "export HOME=";
    script.append(ShellQuote(home.path()))
        .append(" PATH=")
        .append(ShellQuote(bin_dir))
        .append(":\"$PATH\" && cd \"$HOME\" && ")
        .append(c.text);
    ExpectAnswer(c, Shell(script));
  }
}

}  // namespace
}  // namespace shingled::testing
