// A config that loads but cannot do what it is for (config::ConfigWarnings): the daemon logs the
// warning at start and at SIGHUP, and `shingled config check` prints it, naming the keys and their
// values. Today's one: store.template_max_docs not above store.template_host_share *
// store.template_min_host_pages, where the template judge's host-share rule can never fire.
// And a config that loads but that serve refuses: `config check` refuses it too, with the message
// serve gives.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

std::string TemplateConfig(int max_docs) {
  return "[store]\ntemplate_max_docs = " + std::to_string(max_docs) +
         "\ntemplate_host_share = 0.1\ntemplate_min_host_pages = 30\n";
}

TEST(ConfigWarningsTest, DeadHostShareRuleIsLoggedAtStartAndReloadAndByConfigCheck) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", TemplateConfig(3));
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  ASSERT_TRUE(daemon.WaitForLog("can never fire")) << daemon.log();
  std::string log = daemon.log();
  for (const std::string& part :
       {std::string("store.template_max_docs = 3"), std::string("store.template_host_share = 0.1"),
        std::string("store.template_min_host_pages = 30"), daemon.config_path()}) {
    EXPECT_NE(log.find(part), std::string::npos) << part << " not in:\n" << log;
  }

  // The file changed (these keys take a restart, but the file is what is warned about).
  { std::ofstream(daemon.config_path(), std::ios::trunc) << TemplateConfig(2); }
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("SIGHUP: reloaded")) << daemon.log();
  log = daemon.log();
  const size_t reload =
      log.find("SIGHUP: " + daemon.config_path() + ": store.template_max_docs = 2");
  EXPECT_NE(reload, std::string::npos) << log;
  // A reload of a config without the problem warns nothing more.
  { std::ofstream(daemon.config_path(), std::ios::trunc) << TemplateConfig(4); }
  daemon.Signal(SIGHUP);
  ASSERT_TRUE(daemon.WaitForLog("SIGHUP: reloaded", 2)) << daemon.log();
  log = daemon.log();
  EXPECT_EQ(log.find("store.template_max_docs = 4"), std::string::npos) << log;
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0) << daemon.log();

  std::string out;
  const std::string dead = dir.Write("dead.toml", TemplateConfig(3));
  EXPECT_EQ(RunCli("config check --config " + dead, &out), 0) << out;
  EXPECT_NE(out.find("warning: store.template_max_docs = 3, store.template_host_share = 0.1, "
                     "store.template_min_host_pages = 30"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("1 warning"), std::string::npos) << out;

  const std::string fine = dir.Write("fine.toml", TemplateConfig(4));
  EXPECT_EQ(RunCli("config check --config " + fine, &out), 0) << out;
  EXPECT_EQ(out.find("warning"), std::string::npos) << out;
  EXPECT_NE(out.find(fine + ": loads"), std::string::npos) << out;
  EXPECT_EQ(
      RunCli("config check --config " + std::string(SHINGLED_SOURCE_DIR) + "/config/shingled.toml",
             &out),
      0)
      << out;
  EXPECT_EQ(out.find("warning"), std::string::npos) << out;
}

TEST(ConfigWarningsTest, ConfigCheckRefusesWhatDoesNotLoad) {
  TempDir dir;
  std::string out;
  const std::string bad = dir.Write("bad.toml", "[store]\ntemplate_max_docs = 0\n");
  EXPECT_EQ(RunCli("config check --config " + bad, &out), 2) << out;
  EXPECT_NE(out.find("store.template_max_docs"), std::string::npos) << out;
  const std::string unknown = dir.Write("unknown.toml", "[store]\nno_such_key = 1\n");
  EXPECT_EQ(RunCli("config check --config " + unknown, &out), 2) << out;
  EXPECT_NE(out.find("no_such_key"), std::string::npos) << out;
  EXPECT_EQ(RunCli("config check --config " + dir.path() + "/missing.toml", &out), 2) << out;
  EXPECT_NE(out.find("missing.toml"), std::string::npos) << out;
  EXPECT_EQ(RunCli("config check", &out), 2) << out;  // --config is required
  EXPECT_NE(out.find("--config"), std::string::npos) << out;
}

// The message of `shingled config check`'s refusal ("shingled config check: MESSAGE").
std::string RefusalMessage(const std::string& out) {
  const std::string prefix = "shingled config check: ";
  const size_t at = out.find(prefix);
  if (at == std::string::npos) return "";
  const size_t begin = at + prefix.size();
  return out.substr(begin, out.find('\n', begin) - begin);
}

// Bug: `config check` passed files that serve refuses at start-up or on SIGHUP: a token file
// others can read, a one-byte token, crawler seeds the crawler cannot use. It refuses each with
// the message serve gives, naming the key; what serve takes, it takes.
TEST(ConfigWarningsTest, ConfigCheckRefusesWhatServeRefuses) {
  TempDir dir;
  const std::string good_token = dir.WriteSecret("good-token", "0123456789abcdef-token\n");
  const std::string open_token = dir.Write("open-token", "0123456789abcdef-token\n");
  std::filesystem::permissions(
      open_token, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                      std::filesystem::perms::group_read | std::filesystem::perms::others_read);
  const std::string short_token = dir.WriteSecret("short-token", "x\n");
  // A crawler that runs without fetching anything: no schedule, a loopback seed allowed.
  auto crawler = [](const std::string& seed) {
    return "[crawler]\nenabled = true\nevery = \"off\"\nallow_private_addresses = true\nseeds = "
           "[\"" +
           seed + "\"]\n";
  };
  auto auth = [](const std::string& file) { return "[auth]\ntoken_file = \"" + file + "\"\n"; };
  const std::string good = auth(good_token) + crawler("http://127.0.0.1:1/");

  std::string out;
  EXPECT_EQ(RunCli("config check --config " + dir.Write("good.toml", good), &out), 0) << out;
  Daemon daemon(dir, dir.path() + "/store", good);
  ASSERT_GT(daemon.port(), 0) << daemon.log();

  struct Case {
    std::string config;
    std::string key;
    bool stops_start;  // false: serve starts without the crawler
  };
  const std::vector<Case> cases = {
      {auth(open_token) + crawler("http://127.0.0.1:1/"), "auth.token_file", true},
      {auth(short_token) + crawler("http://127.0.0.1:1/"), "auth.token_file", true},
      {auth(good_token) + crawler("http://exa mple.org/"), "crawler.seeds", false},
      {auth(good_token) + crawler("ftp://127.0.0.1:1/"), "crawler.seeds", false},
  };
  int refused_reloads = 0;
  for (const Case& c : cases) {
    const std::string file = dir.Write("bad.toml", c.config);
    EXPECT_EQ(RunCli("config check --config " + file, &out), 2) << c.config << out;
    const std::string message = RefusalMessage(out);
    ASSERT_FALSE(message.empty()) << c.config << out;
    EXPECT_TRUE(message.starts_with(c.key + " ") || message.starts_with(c.key + ":")) << message;

    // serve at start-up: the same message.
    TempDir other;
    Daemon start(other, other.path() + "/store", c.config);
    if (c.stops_start) {
      EXPECT_EQ(start.port(), 0);
      EXPECT_EQ(start.Wait(), 2);
      EXPECT_NE(start.log().find(message), std::string::npos) << message << "\n" << start.log();
    } else {
      ASSERT_GT(start.port(), 0) << start.log();
      EXPECT_NE(start.log().find("the crawler is not started: " + message), std::string::npos)
          << message << "\n"
          << start.log();
    }

    // SIGHUP: the same message, and the running config stays.
    { std::ofstream(daemon.config_path(), std::ios::trunc) << c.config; }
    daemon.Signal(SIGHUP);
    ASSERT_TRUE(daemon.WaitForLog("config not reloaded", ++refused_reloads)) << daemon.log();
    EXPECT_NE(daemon.log().find("the running config stays in force: " + message), std::string::npos)
        << message << "\n"
        << daemon.log();
  }
  // The seeds are the crawler's only when it is enabled, for serve and for config check alike.
  EXPECT_EQ(RunCli("config check --config " +
                       dir.Write("off.toml", "[crawler]\nseeds = [\"http://exa mple.org/\"]\n"),
                   &out),
            0)
      << out;
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0) << daemon.log();
}

// `config keys`: every key with its type, range and default; with --config, the file's values;
// a file that does not load is refused as by `config check`.
TEST(ConfigKeysCliTest, ListsEveryKeyWithItsDefaultOrTheFilesValue) {
  TempDir dir;
  std::string out;
  ASSERT_EQ(RunCli("config keys", &out), 0) << out;
  EXPECT_EQ(out.rfind("KEY ", 0), 0u) << out;
  const std::regex uploads(R"((^|\n)limits\.max_warc_uploads +integer +1\.\.64 +4\n)");
  EXPECT_TRUE(std::regex_search(out, uploads)) << out;
  EXPECT_NE(out.find("store.redis.min_replicas"), std::string::npos) << out;
  ASSERT_EQ(RunCli("config keys --config " +
                       dir.Write("mine.toml", "[limits]\nmax_warc_uploads = 9\n"),
                   &out),
            0)
      << out;
  EXPECT_TRUE(std::regex_search(
      out, std::regex(R"((^|\n)limits\.max_warc_uploads +integer +1\.\.64 +9\n)")))
      << out;
  EXPECT_EQ(RunCli("config keys --config " +
                       dir.Write("bad.toml", "[limits]\nmax_warc_uploads = 99\n"),
                   &out),
            2)
      << out;
  EXPECT_NE(out.find("limits.max_warc_uploads: 99 is out of range 1..64"), std::string::npos)
      << out;
}

// Where `file` and `printed` first differ ("line N" and the two lines), so that a failure names
// a line rather than printing both texts whole.
std::string FirstDifferentLine(const std::string& file, const std::string& printed) {
  std::istringstream a(file), b(printed);
  std::string line_a, line_b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) return "the last line's end differs";
    if (more_a != more_b || line_a != line_b) {
      return "line " + std::to_string(line) + " in the file:\n  " +
             (more_a ? line_a : "(the file ends)") + "\nprinted:\n  " +
             (more_b ? line_b : "(the output ends)");
    }
  }
}

// docs/CONFIG.md, the reference table of the keys, is what `config keys --markdown` prints from
// the parser's catalog, byte for byte: a key added, or its help or range changed, without
// printing the file again fails here.
TEST(ConfigKeysCliTest, DocsConfigIsWhatConfigKeysMarkdownPrints) {
  std::string out;
  ASSERT_EQ(RunCli("config keys --markdown", &out), 0) << out;
  EXPECT_NE(out.find("| `limits` | `max_warc_uploads` | integer | 1..64 | `4` | WARC uploads "),
            std::string::npos)
      << out;
  const std::string file = ReadWholeFile(std::string(SHINGLED_SOURCE_DIR) + "/docs/CONFIG.md");
  EXPECT_TRUE(file == out)
      << "docs/CONFIG.md is not what `shingled config keys --markdown` prints; print it again "
         "(from the top of the repository):\n  "
      << SHINGLED_BINARY << " config keys --markdown > docs/CONFIG.md\n"
      << FirstDifferentLine(file, out);
  // The table lists the defaults only: with a file's values it would not be the reference.
  TempDir dir;
  EXPECT_EQ(RunCli("config keys --markdown --config " + dir.Write("mine.toml", ""), &out), 2)
      << out;
}

}  // namespace
}  // namespace shingled::testing
