// ClusterClient: a small Redis Cluster client on top of hiredis, the transport of the Redis
// backend (the key layout is in redis/FORMAT.md).
//
// It routes each command to the master that owns its key's slot (redis/slot.h), from a slot map
// read with CLUSTER SLOTS at start and read again after a MOVED reply; it follows ASK redirections
// (ASKING, then the command, on the node named) while a slot migrates; it keeps one connection
// per node, opened on first use with a connect timeout, every reply awaited with a command
// timeout, and reopened on the next call after a failure. A batch of commands is split by node and
// sent as one pipeline per node (all of them written before any reply is read), and the replies
// come back in the caller's order; MOVED and ASK replies inside a pipeline are retried, grouped by
// node again, up to `max_redirects` rounds.
//
// What it does not do: read from replicas, pub/sub, transactions (MULTI), RESP3, TLS (hiredis 0.14,
// Debian 12's, has no TLS; 1.x's hiredis_ssl would add it: docs/REDIS.md). Multi-key commands are
// routed by the key at `Command::key_index` and must keep all their keys in one slot (hash tags).
//
// Retries: a command whose node could not be reached at all (connect refused, no reply to the
// connection attempt) is sent again after a slot-map refresh, because it was never sent. A
// command whose connection broke after it was written is *not* resent: Redis may or may not have
// run it, and only the caller knows whether it is idempotent. The call returns Unavailable (or
// DeadlineExceeded for a command timeout) naming the node and the command; the next call
// reconnects. TRYAGAIN and CLUSTERDOWN replies are retried after a short pause, then returned.
//
// A ClusterClient is not safe for concurrent use: give each thread its own (a connection per node
// per client). Its counters (`stats()`) are read by the same thread.
#ifndef SHINGLED_REDIS_CLUSTER_CLIENT_H_
#define SHINGLED_REDIS_CLUSTER_CLIENT_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "redis/slot.h"

struct redisContext;

namespace shingled::redis {

struct ClusterOptions {
  // Seed nodes, "host:port" (an IPv4 address or a name; IPv6 is not parsed). At least one must
  // answer CLUSTER SLOTS; the others are tried in order when it does not.
  std::vector<std::string> seeds;
  // A file holding the password sent with AUTH on every new connection (the first line, without
  // its line break). Empty: no AUTH. Redis 6 ACL users are not supported.
  std::string password_file;
  // Connecting to a node, and then each reply awaited. A command slower than the command timeout
  // (a large pipeline on a loaded node) fails with DeadlineExceeded and its connection is closed.
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds command_timeout{5000};
  // Redirection rounds (MOVED, ASK) a command may take before its call fails. A reshard needs one
  // or two; more means the slot map is changing faster than it can be followed. Range 1..100.
  int max_redirects = 5;
  // Pauses after TRYAGAIN or CLUSTERDOWN before the command is sent again, and how many times.
  std::chrono::milliseconds busy_pause{100};
  int busy_retries = 20;
};

// A reply, copied out of hiredis. `str` holds a bulk string, a status ("OK") or an error message;
// `integer` an integer; `elements` an array's members.
struct Reply {
  enum class Type { kNil, kString, kStatus, kInteger, kArray, kError };
  Type type = Type::kNil;
  std::string str;
  long long integer = 0;
  std::vector<Reply> elements;

  bool is_nil() const { return type == Type::kNil; }
  bool is_error() const { return type == Type::kError; }
};

// One command of a pipeline: its arguments (binary-safe) and which of them is the key that
// routes it (1 for GET key, SET key v, HSET key f v; 3 for EVALSHA sha 1 key ...).
struct Command {
  std::vector<std::string> args;
  size_t key_index = 1;
};

// What a client has done since it was made. MOVED and ASK count redirect replies received.
struct ClusterStats {
  uint64_t commands = 0;   // commands the caller asked for (redirected ones count once)
  uint64_t pipelines = 0;  // pipelines written to a node (a batch over 3 nodes writes 3)
  uint64_t moved = 0;
  uint64_t ask = 0;
  uint64_t busy_retries = 0;    // TRYAGAIN and CLUSTERDOWN replies sent again
  uint64_t slot_refreshes = 0;  // CLUSTER SLOTS read
  uint64_t connects = 0;        // connections opened (the first to each node included)
  uint64_t waits = 0;           // WAIT commands sent by WaitForReplicas
  uint64_t noscript_resends = 0;  // EVALSHA answered NOSCRIPT, sent again as EVAL (LoadScript)
};

class ClusterClient {
 public:
  // Reads the password file, connects to a seed and reads the slot map. InvalidArgument for an
  // option out of range or a seed that is not "host:port"; NotFound or FailedPrecondition for an
  // unreadable password file; Unavailable when no seed answers (each seed's error in the message);
  // FailedPrecondition when the cluster does not cover all 16,384 slots.
  static StatusOr<std::unique_ptr<ClusterClient>> Connect(ClusterOptions options);

  ~ClusterClient();
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;

  // Runs one command on its key's master. An error reply from Redis (WRONGTYPE, a script error)
  // is a FailedPrecondition naming the node, the command and what Redis said; see the file
  // comment for the transport's errors. InvalidArgument, before anything is sent, when
  // key_index is 0 or past the arguments.
  StatusOr<Reply> Run(const Command& command);

  // Runs `commands` in one pipeline per node and returns their replies in the same order. An
  // error reply of any command fails the call, as with Run, after every command has been sent
  // (others may have taken effect). An empty batch returns an empty vector. InvalidArgument,
  // before anything is sent, when a command's key_index is 0 or past its arguments.
  StatusOr<std::vector<Reply>> Pipeline(const std::vector<Command>& commands);

  // Runs a command on every master (INFO, FLUSHALL, SCRIPT LOAD: anything without a key), in the
  // order of the slot map's masters; the replies are paired with the master's "host:port".
  StatusOr<std::vector<std::pair<std::string, Reply>>> RunOnMasters(
      const std::vector<std::string>& args);

  // Reads the slot map again (from the nodes already known, then the seeds).
  Status RefreshSlots();

  // Loads a Lua script on every master (SCRIPT LOAD) and remembers it: *sha gets its SHA1. An
  // EVALSHA of a remembered script that a node answers with NOSCRIPT (a restarted node or a
  // promoted replica: the script cache is neither persisted nor replicated) is sent again to that
  // node as EVAL with the script's text, which also loads it there; `stats().noscript_resends`
  // counts them. An EVALSHA of a script not loaded through this client fails with NOSCRIPT as
  // before.
  Status LoadScript(std::string_view text, std::string* sha);

  // Durability (docs/REDIS.md, "Durability"): waits until every write this client sent since the
  // last successful call is acknowledged by at least `min_replicas` replicas of the master it was
  // written to: `WAIT min_replicas timeout` on each connection written to since then (all nodes
  // in parallel; WAIT counts the replicas that reached that connection's last write). OK at once
  // when nothing was written or `min_replicas` is 0 (the masters' `appendfsync always` has then
  // made each write durable before its reply). Unavailable naming the node when fewer replicas
  // acknowledged within `timeout`, or when a connection written to broke since the last call
  // (its writes' replication is unknown: the caller must not acknowledge them); the next call
  // starts afresh either way. Each WAIT's reply is awaited `timeout` plus the command timeout.
  // InvalidArgument for min_replicas < 0 or a timeout <= 0.
  Status WaitForReplicas(int min_replicas, std::chrono::milliseconds timeout);

  // The check at start: every master runs `appendonly yes` with `appendfsync always`, so that a
  // write is in its append-only file, fsynced, before Redis replies. FailedPrecondition naming
  // each node and its setting when one does not (a daemon must not acknowledge pages that a
  // crash of that node loses), or when CONFIG GET is refused (a renamed or disabled CONFIG).
  Status CheckAppendFsyncAlways();

  // Every master answers and has at least `min_replicas` replicas connected (INFO replication's
  // connected_slaves), so that a write can be acknowledged (WaitForReplicas). Unavailable naming
  // each master that does not answer or has too few, with the count; OK at once when
  // `min_replicas` is 0 and every master answers.
  Status CheckReplicas(int min_replicas);

  // "host:port" of the master the slot map assigns to `slot`. REQUIRES: 0 <= slot < kNumSlots.
  std::string NodeForSlot(int slot) const;

  const ClusterStats& stats() const { return stats_; }

 private:
  struct Node;
  struct Pending;

  explicit ClusterClient(ClusterOptions options, std::string password);

  // The node index of "host:port", added to nodes_ when new.
  int NodeIndex(const std::string& host, int port);
  // Connects the node when it has no live connection (connect + AUTH).
  Status EnsureConnected(Node& node);
  void Disconnect(Node& node);
  // Sends `argvs` to `node` as one pipeline and reads their replies into `replies`.
  Status SendPipeline(Node& node, const std::vector<const std::vector<std::string>*>& argvs,
                      std::vector<Reply>* replies);
  Status ReadSlotsFrom(Node& node);
  Status RunPending(std::vector<Pending>& pending, std::vector<Reply>* replies);
  // The text of an EVALSHA command's script when LoadScript loaded it; else null.
  const std::string* ScriptText(const Command& command) const;

  const ClusterOptions options_;
  const std::string password_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::array<int16_t, kNumSlots> slot_owner_{};  // index in nodes_; -1 while unknown
  std::vector<std::pair<std::string, std::string>> scripts_;  // (sha, text) from LoadScript
  ClusterStats stats_;
};

// "COMMAND key" for messages: the first argument and the key, binary bytes escaped, long keys cut.
std::string DescribeCommand(const std::vector<std::string>& args, size_t key_index);

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_CLUSTER_CLIENT_H_
