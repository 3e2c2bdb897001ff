// A config that loads but cannot do what it is for (config::ConfigWarnings): the daemon logs the
// warning at start and at SIGHUP, and `shingled config check` prints it, naming the keys and their
// values. Today's one: store.template_max_docs not above store.template_host_share *
// store.template_min_host_pages, where the template judge's host-share rule can never fire.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

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

}  // namespace
}  // namespace shingled::testing
