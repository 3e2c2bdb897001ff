#include "redis/by_master.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

#include "redis/slot.h"

namespace shingled::redis {
namespace {

// Plain commands a group may run: reads, and writes that leave the same state when run again.
constexpr std::string_view kGroupable[] = {"GET", "SET", "HGET", "HSET", "HSETNX", "HEXISTS"};

constexpr std::string_view kRunGroup = R"lua(
local replies = {}
local i = 1
while i <= #ARGV do
  local script, nkeys, nargs = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local reply
  if script == 0 then
    reply = redis.call(unpack(ARGV, i + 3, i + 2 + nargs))
  else
    reply = scripts[script]({unpack(ARGV, i + 3, i + 2 + nkeys)},
                            {unpack(ARGV, i + 3 + nkeys, i + 2 + nkeys + nargs)})
  end
  if type(reply) == 'table' and reply.err then return reply end
  if reply == nil then reply = false end
  replies[#replies + 1] = reply
  i = i + 3 + nkeys + nargs
end
return replies
)lua";

bool IsEval(const Command& c) { return !c.args.empty() && c.args[0] == "EVAL"; }

// An EVAL of a script on at least one key, or a plain command of kGroupable.
bool Groupable(const Command& c) {
  if (c.args.empty() || c.key_index == 0 || c.key_index >= c.args.size()) return false;
  if (IsEval(c)) {
    if (c.args.size() < 4) return false;
    size_t nkeys = 0;
    const std::string& n = c.args[2];
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), nkeys);
    return ec == std::errc() && end == n.data() + n.size() && nkeys >= 1 &&
           3 + nkeys <= c.args.size();
  }
  return std::find(std::begin(kGroupable), std::end(kGroupable), c.args[0]) !=
         std::end(kGroupable);
}

}  // namespace

std::string GroupScript(const std::vector<std::string_view>& scripts) {
  std::string s = "local scripts = {}\n";
  for (size_t i = 0; i < scripts.size(); ++i) {
    s.append("scripts[").append(std::to_string(i + 1)).append("] = function(KEYS, ARGV)\n");
    s.append(scripts[i]).append("\nend\n");
  }
  s.append(kRunGroup);
  return s;
}

StatusOr<std::vector<Reply>> RunByMaster(const ClusterClient& client,
                                         const std::vector<Command>& commands,
                                         const PipelineRound& round) {
  struct Group {
    std::string master;  // "host:port"
    std::vector<size_t> commands;
    std::vector<std::string_view> scripts;  // in the order first used
  };
  std::vector<Group> groups;
  std::map<std::string, size_t> filling;  // a master's group not full yet
  for (size_t k = 0; k < commands.size(); ++k) {
    const Command& c = commands[k];
    if (!Groupable(c)) {
      return InvalidArgumentError("redis: " + DescribeCommand(c.args, c.key_index) +
                                  " cannot run in a script by master (only EVAL and " +
                                  "GET, SET, HGET, HSET, HSETNX, HEXISTS)");
    }
    std::string master = client.NodeForSlot(KeySlot(c.args[c.key_index]));
    auto [at, fresh] = filling.try_emplace(master, groups.size());
    if (fresh || groups[at->second].commands.size() == kMaxGroupCommands) {
      at->second = groups.size();
      groups.emplace_back();
      groups.back().master = std::move(master);
    }
    Group& g = groups[at->second];
    g.commands.push_back(k);
    if (IsEval(c) && std::find(g.scripts.begin(), g.scripts.end(), c.args[1]) == g.scripts.end()) {
      g.scripts.push_back(c.args[1]);
    }
  }
  std::vector<Command> sent;
  for (Group& g : groups) {
    // Scripts in a canonical order, so that a group of the same scripts has the same text (Redis
    // keeps each script text it runs).
    std::sort(g.scripts.begin(), g.scripts.end());
    const Command& first = commands[g.commands.front()];
    Command c{.args = {"EVAL", GroupScript(g.scripts), "1", first.args[first.key_index]},
              .key_index = 3};
    for (size_t k : g.commands) {
      const Command& cmd = commands[k];
      if (IsEval(cmd)) {
        const size_t script =
            std::find(g.scripts.begin(), g.scripts.end(), cmd.args[1]) - g.scripts.begin() + 1;
        const size_t nkeys = std::stoul(cmd.args[2]);
        c.args.push_back(std::to_string(script));
        c.args.push_back(cmd.args[2]);
        c.args.push_back(std::to_string(cmd.args.size() - 3 - nkeys));
        c.args.insert(c.args.end(), cmd.args.begin() + 3, cmd.args.end());
      } else {
        c.args.push_back("0");
        c.args.push_back("0");
        c.args.push_back(std::to_string(cmd.args.size()));
        c.args.insert(c.args.end(), cmd.args.begin(), cmd.args.end());
      }
    }
    sent.push_back(std::move(c));
  }
  StatusOr<std::vector<Reply>> replies = round(sent);
  if (!replies.ok()) {
    if (replies.status().code() != StatusCode::kFailedPrecondition) return replies.status();
    return round(commands);  // each on its own (the file comment)
  }
  std::vector<Reply> out(commands.size());
  size_t j = 0;
  for (const Group& g : groups) {
    Reply& reply = (*replies)[j++];
    if (reply.type != Reply::Type::kArray || reply.elements.size() != g.commands.size()) {
      return DataLossError("redis: " + g.master + " answered a group of " +
                           std::to_string(g.commands.size()) + " commands with " +
                           std::to_string(reply.elements.size()) + " replies");
    }
    for (size_t i = 0; i < g.commands.size(); ++i) out[g.commands[i]] = std::move(reply.elements[i]);
  }
  return out;
}

StatusOr<std::vector<Reply>> RunByMaster(ClusterClient& client, const std::vector<Command>& commands) {
  return RunByMaster(client, commands,
                     [&client](const std::vector<Command>& c) { return client.Pipeline(c); });
}

}  // namespace shingled::redis
