// RunByMaster (redis/by_master.h) on a real 3-master cluster: a round as one script per master
// answers as the same commands pipelined one by one.
#include "redis/by_master.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "redis/slot.h"
#include "tests/redis/cluster_fixture.h"

namespace shingled::redis {
namespace {

using ByMasterTest = testing::ClusterTest;

Command Cmd(std::vector<std::string> args, size_t key_index = 1) {
  return Command{.args = std::move(args), .key_index = key_index};
}
Command Eval(const std::string& script, std::vector<std::string> keys,
             std::vector<std::string> argv) {
  Command c{.args = {"EVAL", script, std::to_string(keys.size())}, .key_index = 3};
  c.args.insert(c.args.end(), keys.begin(), keys.end());
  c.args.insert(c.args.end(), argv.begin(), argv.end());
  return c;
}

const std::string kListScript = "return {KEYS[1], ARGV[1], redis.call('GET', KEYS[1])}";
const std::string kCountScript = "return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) + 41";
const std::string kNothingScript = "redis.call('SET', KEYS[1], ARGV[1])";

// Every kind of reply: status, bulk string, nil, integer, and a script's array, integer and
// nothing; keys spread over the three masters, each written then read in the round.
std::vector<Command> Round(const std::string& prefix) {
  std::vector<Command> out;
  for (int i = 0; i < 12; ++i) {
    const std::string k = prefix + std::to_string(i);
    out.push_back(Cmd({"SET", k, "v" + std::to_string(i)}));
    out.push_back(Cmd({"GET", k}));
    out.push_back(Cmd({"HGET", k + "h", "missing"}));
    out.push_back(Cmd({"HSET", k + "h", "f", "x"}));
    out.push_back(Cmd({"HSETNX", k + "h", "f", "y"}));
    out.push_back(Cmd({"HEXISTS", k + "h", "f"}));
    out.push_back(Eval(kListScript, {k}, {"a" + std::to_string(i)}));
    out.push_back(Eval(kCountScript, {k + "h"}, {"g", "z"}));
    out.push_back(Eval(kNothingScript, {k + "n"}, {"w"}));
    out.push_back(Cmd({"GET", k + "n"}));
  }
  return out;
}

// The reply with the key prefix of the round taken out of its strings.
void ExpectSame(const Reply& got, const Reply& want, const std::string& where) {
  EXPECT_EQ(static_cast<int>(got.type), static_cast<int>(want.type)) << where;
  EXPECT_EQ(got.integer, want.integer) << where;
  std::string g = got.str, w = want.str;
  if (g.rfind("a:", 0) == 0) g.replace(0, 2, "b:");
  EXPECT_EQ(g, w) << where;
  ASSERT_EQ(got.elements.size(), want.elements.size()) << where;
  for (size_t i = 0; i < got.elements.size(); ++i) {
    ExpectSame(got.elements[i], want.elements[i], where + "[" + std::to_string(i) + "]");
  }
}

TEST_F(ByMasterTest, ARoundAnswersAsTheCommandsPipelinedOneByOne) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  const std::vector<Command> grouped = Round("a:");
  std::set<std::string> masters;
  for (const Command& c : grouped) masters.insert(client->NodeForSlot(KeySlot(c.args[c.key_index])));
  ASSERT_EQ(masters.size(), 3u);  // the round reaches every master

  size_t sent = 0;
  auto by_master = RunByMaster(*client, grouped, [&](const std::vector<Command>& c) {
    sent += c.size();
    return client->Pipeline(c);
  });
  ASSERT_TRUE(by_master.ok()) << by_master.status().ToString();
  EXPECT_EQ(sent, 3u);  // one script a master
  auto one_by_one = client->Pipeline(Round("b:"));
  ASSERT_TRUE(one_by_one.ok()) << one_by_one.status().ToString();
  ASSERT_EQ(by_master->size(), one_by_one->size());
  for (size_t i = 0; i < by_master->size(); ++i) {
    ExpectSame((*by_master)[i], (*one_by_one)[i], "command " + std::to_string(i));
  }
  EXPECT_EQ((*by_master)[1].str, "v0");
  EXPECT_TRUE((*by_master)[2].is_nil());
  EXPECT_EQ((*by_master)[7].integer, 42);
  EXPECT_TRUE((*by_master)[8].is_nil());
  EXPECT_EQ((*by_master)[9].str, "w");
}

// A master's commands past kMaxGroupCommands go in a script of their own.
TEST_F(ByMasterTest, AGroupIsCutIntoScriptsOfAtMostTheLimit) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  std::vector<Command> reads;
  std::map<std::string, size_t> per_master;
  for (int i = 0; i < 5000; ++i) {
    reads.push_back(Cmd({"GET", "k" + std::to_string(i)}));
    ++per_master[client->NodeForSlot(KeySlot(reads.back().args[1]))];
  }
  size_t scripts = 0;
  for (const auto& [master, n] : per_master) {
    scripts += (n + kMaxGroupCommands - 1) / kMaxGroupCommands;
  }
  size_t sent = 0;
  auto r = RunByMaster(*client, reads, [&](const std::vector<Command>& c) {
    sent += c.size();
    return client->Pipeline(c);
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(sent, scripts);
  EXPECT_GT(scripts, per_master.size());
  ASSERT_EQ(r->size(), reads.size());
  for (const Reply& reply : *r) EXPECT_TRUE(reply.is_nil());
}

// A command that must not run twice (the round is sent again when a script fails) is refused
// before anything is sent.
TEST_F(ByMasterTest, ACommandThatMustNotRunTwiceIsRefused) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  bool sent = false;
  auto r = RunByMaster(*client, {Cmd({"SET", "k", "v"}), Cmd({"INCRBY", "n", "1"})},
                       [&](const std::vector<Command>& c) {
                         sent = true;
                         return client->Pipeline(c);
                       });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("INCRBY n"), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(sent);
}

// A script's error fails the round with that error, as the pipeline of the same commands does.
TEST_F(ByMasterTest, AScriptsErrorFailsTheRound) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  auto r = RunByMaster(
      *client, {Cmd({"SET", "k", "v"}), Eval("return redis.error_reply('no such thing')", {"k"}, {})},
      [&](const std::vector<Command>& c) { return client->Pipeline(c); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("no such thing"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace shingled::redis
