// A pipelined round as one script per master: the round's commands grouped by the master that the
// client's slot map gives their keys, each group sent as one script that runs the group's
// commands in order and returns their replies in an array. A batch of Apply sends thousands of
// small commands (a posting, a claim, a record each) to three masters; as one script a master,
// Redis parses, looks up and dispatches one command instead of each of them.
//
// Why it holds: a Redis script may reach the keys of every slot its node serves (it checks that
// each key is on the node, not that all share a slot), so a group runs where each of its commands
// would have run. A key whose slot moved to another master since the client read its slot map
// fails its group's script ("non local key"), with the commands before it run; the whole round
// is then sent again as it was, each command on its own, which the client follows to its slot.
// So only commands that may run twice can go in a round: reads, writes of the same value, and
// scripts that are no-ops, or say so, the second time (the claims, the postings, the
// compare-and-sets). A script's own error fails its group the same way, and the round sent again
// returns that error as a pipeline would.
#ifndef SHINGLED_REDIS_BY_MASTER_H_
#define SHINGLED_REDIS_BY_MASTER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "redis/cluster_client.h"

namespace shingled::redis {

// Sends a pipeline (the client's, or the caller's own round).
using PipelineRound = std::function<StatusOr<std::vector<Reply>>(const std::vector<Command>&)>;

// The most commands one script runs: a master runs a script alone, so a group of a large batch
// (16,000 pages' postings are ~250,000 commands a master) is cut into scripts of a few
// milliseconds each, between which the master serves other clients.
inline constexpr size_t kMaxGroupCommands = 1000;

// Runs `commands` by master (above) through `round` and returns their replies in their order.
// InvalidArgument, before anything is sent, for a command that is neither an EVAL on a key nor
// one of GET, SET, HGET, HSET, HSETNX and HEXISTS (an EVALSHA's text is not known here; a
// counter's increment must not run twice).
StatusOr<std::vector<Reply>> RunByMaster(const ClusterClient& client,
                                         const std::vector<Command>& commands,
                                         const PipelineRound& round);
// The same, through the client's own pipeline.
StatusOr<std::vector<Reply>> RunByMaster(ClusterClient& client, const std::vector<Command>& commands);

// The script of a group whose commands use `scripts` (EVAL texts; a command's script is its
// index + 1, 0 for a plain command): each as a function of (KEYS, ARGV), then the loop that runs
// the commands. ARGV: for each command, its script, its key count and its argument count, then
// its keys and its arguments (a plain command: no key, its whole argument list).
std::string GroupScript(const std::vector<std::string_view>& scripts);

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_BY_MASTER_H_
