#include "redis/cluster_client.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <charconv>
#include <fstream>
#include <map>
#include <thread>
#include <utility>

namespace shingled::redis {

struct ClusterClient::Node {
  std::string host;
  int port = 0;
  std::string name;  // "host:port", for messages
  redisContext* ctx = nullptr;
  // Pipelines were written on this connection since the last WaitForReplicas.
  bool unacked = false;
  // The connection broke while `unacked`: those writes' replication cannot be awaited.
  bool lost_unacked = false;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node() {
    if (ctx != nullptr) redisFree(ctx);
  }
};

// A command on its way: where it goes next and how it got there.
struct ClusterClient::Pending {
  size_t index;  // in the caller's batch
  const Command* command;
  int slot;
  int node;
  bool asking = false;  // the node named by an ASK reply: send ASKING first
  int redirects = 0;
  int busy = 0;
  // An EVALSHA answered NOSCRIPT, rewritten as EVAL: `command` points here.
  std::shared_ptr<const Command> rewritten;
};

namespace {

timeval ToTimeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

Reply ConvertReply(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(ConvertReply(r->element[i]));
      break;
    default:
      out.type = Reply::Type::kNil;
      break;
  }
  return out;
}

bool ParseHostPort(std::string_view s, std::string* host, int* port) {
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view p = s.substr(colon + 1);
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), *port);
  if (ec != std::errc() || end != p.data() + p.size() || *port < 1 || *port > 65535) return false;
  host->assign(s.substr(0, colon));
  return true;
}

// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381": the slot and the node.
bool ParseRedirect(std::string_view msg, std::string_view kind, int* slot, std::string* host,
                   int* port) {
  if (msg.substr(0, kind.size() + 1) != std::string(kind).append(" ")) return false;
  msg.remove_prefix(kind.size() + 1);
  const size_t space = msg.find(' ');
  if (space == std::string_view::npos) return false;
  const auto [end, ec] = std::from_chars(msg.data(), msg.data() + space, *slot);
  if (ec != std::errc() || end != msg.data() + space || *slot < 0 || *slot >= kNumSlots) {
    return false;
  }
  return ParseHostPort(msg.substr(space + 1), host, port);
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string Describe(const std::vector<std::string>& args, size_t key_index) {
  return DescribeCommand(args, key_index);
}

}  // namespace

std::string DescribeCommand(const std::vector<std::string>& args, size_t key_index) {
  constexpr size_t kMaxShown = 64;
  std::string out = args.empty() ? std::string("(empty command)") : args[0];
  if (key_index == 0 || key_index >= args.size()) return out;
  out.append(" ");
  const std::string& key = args[key_index];
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < key.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out.append("\\x");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (key.size() > kMaxShown) out.append("...");
  return out;
}

StatusOr<std::unique_ptr<ClusterClient>> ClusterClient::Connect(ClusterOptions options) {
  if (options.seeds.empty()) return InvalidArgumentError("redis: no seed nodes given");
  for (const std::string& seed : options.seeds) {
    std::string host;
    int port;
    if (!ParseHostPort(seed, &host, &port)) {
      return InvalidArgumentError(
          std::string("redis: seed node \"").append(seed).append("\" is not host:port"));
    }
  }
  if (options.max_redirects < 1 || options.max_redirects > 100) {
    return InvalidArgumentError("redis: max_redirects must be 1..100");
  }
  if (options.connect_timeout.count() <= 0 || options.command_timeout.count() <= 0) {
    return InvalidArgumentError("redis: timeouts must be positive");
  }
  if (options.busy_retries < 0 || options.busy_pause.count() < 0) {
    return InvalidArgumentError("redis: busy_retries and busy_pause must not be negative");
  }
  std::string password;
  if (!options.password_file.empty()) {
    std::ifstream in(options.password_file);
    if (!in) {
      return NotFoundError(
          std::string("redis: cannot read the password file ").append(options.password_file));
    }
    std::getline(in, password);
    if (!password.empty() && password.back() == '\r') password.pop_back();
    if (password.empty()) {
      return FailedPreconditionError(std::string("redis: the password file ")
                                         .append(options.password_file)
                                         .append(" is empty"));
    }
  }
  std::unique_ptr<ClusterClient> client(new ClusterClient(std::move(options), std::move(password)));
  for (const std::string& seed : client->options_.seeds) {
    std::string host;
    int port = 0;
    ParseHostPort(seed, &host, &port);
    client->NodeIndex(host, port);
  }
  SHINGLED_RETURN_IF_ERROR(client->RefreshSlots());
  return client;
}

namespace {
Status ContextError(const redisContext* ctx, int saved_errno, const std::string& node,
                    const std::string& what);
}  // namespace

ClusterClient::ClusterClient(ClusterOptions options, std::string password)
    : options_(std::move(options)), password_(std::move(password)) {
  slot_owner_.fill(-1);
}

ClusterClient::~ClusterClient() = default;

int ClusterClient::NodeIndex(const std::string& host, int port) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i]->port == port && nodes_[i]->host == host) return static_cast<int>(i);
  }
  auto node = std::make_unique<Node>();
  node->host = host;
  node->port = port;
  node->name = host;
  node->name.append(":").append(std::to_string(port));
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size() - 1);
}

std::string ClusterClient::NodeForSlot(int slot) const {
  const int owner = slot_owner_[slot];
  return owner < 0 ? std::string() : nodes_[owner]->name;
}

void ClusterClient::Disconnect(Node& node) {
  if (node.unacked) node.lost_unacked = true;
  node.unacked = false;
  if (node.ctx != nullptr) redisFree(node.ctx);
  node.ctx = nullptr;
}

Status ClusterClient::EnsureConnected(Node& node) {
  if (node.ctx != nullptr) return OkStatus();
  const timeval connect_tv = ToTimeval(options_.connect_timeout);
  redisContext* ctx = redisConnectWithTimeout(node.host.c_str(), node.port, connect_tv);
  if (ctx == nullptr) {
    return UnavailableError(
        std::string("redis node ").append(node.name).append(": cannot connect: out of memory"));
  }
  if (ctx->err != 0) {
    std::string msg = std::string("redis node ").append(node.name).append(": cannot connect: ");
    msg.append(ctx->errstr);
    redisFree(ctx);
    return UnavailableError(std::move(msg));
  }
  const timeval command_tv = ToTimeval(options_.command_timeout);
  redisSetTimeout(ctx, command_tv);
  redisEnableKeepAlive(ctx);
  node.ctx = ctx;
  ++stats_.connects;
  if (password_.empty()) return OkStatus();
  void* raw = redisCommand(ctx, "AUTH %b", password_.data(), password_.size());
  if (raw == nullptr) {
    const int saved_errno = errno;
    // Only the command's name in the message: its argument is the password.
    Status s = ContextError(ctx, saved_errno, node.name, "AUTH");
    Disconnect(node);
    return s;
  }
  auto* reply = static_cast<redisReply*>(raw);
  const Reply auth = ConvertReply(reply);
  freeReplyObject(reply);
  if (auth.is_error()) {
    Disconnect(node);
    return FailedPreconditionError(
        std::string("redis node ").append(node.name).append(": AUTH refused: ").append(auth.str));
  }
  return OkStatus();
}

namespace {

// The error of a broken connection, naming the node and what was being done.
Status ContextError(const redisContext* ctx, int saved_errno, const std::string& node,
                    const std::string& what) {
  std::string msg = std::string("redis node ").append(node).append(": ").append(what).append(": ");
  if (ctx == nullptr) return UnavailableError(msg.append("not connected"));
  if (ctx->err == REDIS_ERR_IO && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK)) {
    msg.append("no reply within the command timeout");
    return DeadlineExceededError(std::move(msg));
  }
  if (ctx->err == REDIS_ERR_EOF) {
    msg.append("connection closed by the server");
  } else {
    msg.append(ctx->errstr);
  }
  return UnavailableError(std::move(msg));
}

// Queues `argv` on the context's output buffer.
void Append(redisContext* ctx, const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (const std::string& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  redisAppendCommandArgv(ctx, static_cast<int>(argv.size()), ptrs.data(), lens.data());
}

// Writes the output buffer out. REDIS_OK or REDIS_ERR (ctx->err set).
int Flush(redisContext* ctx) {
  int done = 0;
  do {
    if (redisBufferWrite(ctx, &done) != REDIS_OK) return REDIS_ERR;
  } while (done == 0);
  return REDIS_OK;
}

}  // namespace

Status ClusterClient::SendPipeline(Node& node,
                                   const std::vector<const std::vector<std::string>*>& argvs,
                                   std::vector<Reply>* replies) {
  SHINGLED_RETURN_IF_ERROR(EnsureConnected(node));
  for (const auto* argv : argvs) Append(node.ctx, *argv);
  ++stats_.pipelines;
  replies->clear();
  replies->reserve(argvs.size());
  for (const auto* argv : argvs) {
    void* raw = nullptr;
    if (redisGetReply(node.ctx, &raw) != REDIS_OK) {
      const int saved_errno = errno;
      Status status = ContextError(node.ctx, saved_errno, node.name, Describe(*argv, 0));
      Disconnect(node);
      return status;
    }
    auto* reply = static_cast<redisReply*>(raw);
    replies->push_back(ConvertReply(reply));
    freeReplyObject(reply);
  }
  return OkStatus();
}

Status ClusterClient::ReadSlotsFrom(Node& node) {
  const std::vector<std::string> cmd = {"CLUSTER", "SLOTS"};
  std::vector<Reply> replies;
  SHINGLED_RETURN_IF_ERROR(SendPipeline(node, {&cmd}, &replies));
  const Reply& r = replies[0];
  if (r.type != Reply::Type::kArray) {
    return FailedPreconditionError(std::string("redis node ")
                                       .append(node.name)
                                       .append(": CLUSTER SLOTS: ")
                                       .append(r.is_error() ? r.str : "not an array"));
  }
  std::array<int16_t, kNumSlots> owners;
  owners.fill(-1);
  const std::string asked_host = node.host;
  for (const Reply& range : r.elements) {
    if (range.type != Reply::Type::kArray || range.elements.size() < 3 ||
        range.elements[2].type != Reply::Type::kArray || range.elements[2].elements.size() < 2) {
      return InternalError(std::string("redis node ")
                               .append(node.name)
                               .append(": CLUSTER SLOTS: unexpected reply shape"));
    }
    const long long first = range.elements[0].integer;
    const long long last = range.elements[1].integer;
    const Reply& master = range.elements[2];
    std::string host = master.elements[0].str;
    // A node that does not know its own address answers "" (or "?" in Redis 7): it is the one
    // asked.
    if (host.empty() || host == "?") host = asked_host;
    const int port = static_cast<int>(master.elements[1].integer);
    if (first < 0 || last >= kNumSlots || first > last) {
      return InternalError(std::string("redis node ")
                               .append(node.name)
                               .append(": CLUSTER SLOTS: slot range out of bounds"));
    }
    const auto index = static_cast<int16_t>(NodeIndex(host, port));
    for (long long s = first; s <= last; ++s) owners[s] = index;
  }
  int covered = 0;
  for (const int16_t o : owners) covered += o >= 0 ? 1 : 0;
  if (covered != kNumSlots) {
    return FailedPreconditionError(std::string("redis node ")
                                       .append(node.name)
                                       .append(": the cluster covers ")
                                       .append(std::to_string(covered))
                                       .append(" of 16384 slots"));
  }
  slot_owner_ = owners;
  ++stats_.slot_refreshes;
  return OkStatus();
}

Status ClusterClient::RefreshSlots() {
  std::string errors;
  // Index loop: ReadSlotsFrom adds the nodes it learns about to nodes_.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Status s = ReadSlotsFrom(*nodes_[i]);
    if (s.ok()) return s;
    if (!errors.empty()) errors.append("; ");
    errors.append(s.message());
  }
  return UnavailableError(std::string("redis: no node gave the slot map: ").append(errors));
}

StatusOr<Reply> ClusterClient::Run(const Command& command) {
  StatusOr<std::vector<Reply>> replies = Pipeline({command});
  if (!replies.ok()) return replies.status();
  return std::move(replies->front());
}

StatusOr<std::vector<Reply>> ClusterClient::Pipeline(const std::vector<Command>& commands) {
  std::vector<Reply> replies(commands.size());
  std::vector<Pending> pending;
  pending.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    const Command& c = commands[i];
    if (c.key_index == 0 || c.key_index >= c.args.size()) {
      return InvalidArgumentError(std::string("redis: command ")
                                      .append(std::to_string(i))
                                      .append(" (")
                                      .append(Describe(c.args, 0))
                                      .append(") has no key at argument ")
                                      .append(std::to_string(c.key_index)));
    }
    const int slot = KeySlot(c.args[c.key_index]);
    pending.push_back(Pending{
        .index = i, .command = &c, .slot = slot, .node = slot_owner_[slot], .rewritten = nullptr});
  }
  stats_.commands += commands.size();
  SHINGLED_RETURN_IF_ERROR(RunPending(pending, &replies));
  return replies;
}

Status ClusterClient::RunPending(std::vector<Pending>& pending, std::vector<Reply>* replies) {
  static const std::vector<std::string> kAsking = {"ASKING"};
  // The first failure. Once a pipeline is written, every reply to it is read even after a failure
  // elsewhere, so that no connection is left with replies that a later call would take for its
  // own; the call fails at the end of the round.
  Status failure;
  Status first_error_reply;
  bool refreshed_for_unreachable = false;
  auto fail = [&failure](Status s) {
    if (failure.ok()) failure = std::move(s);
  };
  while (!pending.empty() && failure.ok()) {
    // Split by node, keeping the caller's order within a node.
    std::map<int, std::vector<Pending*>> by_node;
    for (Pending& p : pending) by_node[p.node].push_back(&p);

    // Write every node's pipeline before reading any reply, so that the nodes work in parallel.
    std::vector<Pending> next;
    std::vector<int> written;
    bool refresh = false;
    bool unreachable = false;
    for (auto& [node_index, group] : by_node) {
      Node& node = *nodes_[node_index];
      Status connected = EnsureConnected(node);
      if (!connected.ok()) {
        // Nothing was sent: after one refresh of the slot map (a replica may have taken over),
        // the group goes again, to whichever node owns its slots then.
        if (refreshed_for_unreachable) {
          fail(std::move(connected));
          continue;
        }
        unreachable = true;
        for (Pending* p : group) next.push_back(*p);
        continue;
      }
      for (const Pending* p : group) {
        if (p->asking) Append(node.ctx, kAsking);
        Append(node.ctx, p->command->args);
      }
      ++stats_.pipelines;
      node.unacked = true;
      if (Flush(node.ctx) != REDIS_OK) {
        const int saved_errno = errno;
        fail(ContextError(
            node.ctx, saved_errno, node.name,
            std::string("writing a pipeline of ")
                .append(std::to_string(group.size()))
                .append(" commands (the first ")
                .append(Describe(group[0]->command->args, group[0]->command->key_index))
                .append(")")));
        Disconnect(node);
        continue;
      }
      written.push_back(node_index);
    }

    bool busy = false;
    for (const int node_index : written) {
      Node& node = *nodes_[node_index];
      for (Pending* p : by_node[node_index]) {
        const Command& c = *p->command;
        Reply r;
        bool read = true;
        for (int k = p->asking ? 2 : 1; k > 0 && read; --k) {
          void* raw = nullptr;
          if (redisGetReply(node.ctx, &raw) != REDIS_OK) {
            const int saved_errno = errno;
            fail(ContextError(node.ctx, saved_errno, node.name,
                              std::string("awaiting the reply to ")
                                  .append(Describe(c.args, c.key_index))
                                  .append(" (its effect is unknown)")));
            read = false;
            break;
          }
          auto* reply = static_cast<redisReply*>(raw);
          if (k == 1) r = ConvertReply(reply);  // k == 2: ASKING's +OK
          freeReplyObject(reply);
        }
        if (!read) {
          Disconnect(node);
          break;
        }
        int slot = 0;
        int port = 0;
        std::string host;
        const bool moved = r.is_error() && ParseRedirect(r.str, "MOVED", &slot, &host, &port);
        const bool ask = !moved && r.is_error() && ParseRedirect(r.str, "ASK", &slot, &host, &port);
        // A script this client loaded, which the node no longer has: resent once as EVAL.
        const bool noscript = r.is_error() && StartsWith(r.str, "NOSCRIPT") && !p->rewritten;
        const std::string* text = noscript ? ScriptText(c) : nullptr;
        if (moved || ask) {
          Pending again = *p;
          ++again.redirects;
          if (again.redirects > options_.max_redirects) {
            fail(UnavailableError(std::string("redis node ")
                                      .append(node.name)
                                      .append(": ")
                                      .append(Describe(c.args, c.key_index))
                                      .append(": still redirected after ")
                                      .append(std::to_string(options_.max_redirects))
                                      .append(" redirections: ")
                                      .append(r.str)));
            continue;
          }
          if (moved) {
            ++stats_.moved;
            slot_owner_[slot] = static_cast<int16_t>(NodeIndex(host, port));
            refresh = true;
            again.asking = false;
          } else {
            ++stats_.ask;
            again.node = NodeIndex(host, port);
            again.asking = true;
          }
          next.push_back(again);
        } else if (text != nullptr) {
          // The node lost its script cache: EVAL with the text, to the same node.
          ++stats_.noscript_resends;
          Pending again = *p;
          auto eval = std::make_shared<Command>(c);
          eval->args[0] = "EVAL";
          eval->args[1] = *text;
          again.rewritten = eval;
          again.command = eval.get();
          again.node = node_index;
          next.push_back(again);
        } else if (r.is_error() &&
                   (StartsWith(r.str, "TRYAGAIN") || StartsWith(r.str, "CLUSTERDOWN"))) {
          if (p->busy >= options_.busy_retries) {
            fail(UnavailableError(std::string("redis node ")
                                      .append(node.name)
                                      .append(": ")
                                      .append(Describe(c.args, c.key_index))
                                      .append(": ")
                                      .append(r.str)));
            continue;
          }
          ++stats_.busy_retries;
          busy = true;
          refresh = refresh || StartsWith(r.str, "CLUSTERDOWN");
          Pending again = *p;
          again.asking = false;
          ++again.busy;
          next.push_back(again);
        } else {
          if (r.is_error() && first_error_reply.ok()) {
            first_error_reply = FailedPreconditionError(std::string("redis node ")
                                                            .append(node.name)
                                                            .append(": ")
                                                            .append(Describe(c.args, c.key_index))
                                                            .append(": ")
                                                            .append(r.str));
          }
          (*replies)[p->index] = std::move(r);
        }
      }
    }
    if (!failure.ok()) break;

    if (busy) std::this_thread::sleep_for(options_.busy_pause);
    if (refresh || unreachable) {
      // A failed refresh keeps the map patched by the MOVED replies; the commands go there.
      RefreshSlots().IgnoreError();
      refreshed_for_unreachable = refreshed_for_unreachable || unreachable;
    }
    // Commands not sent to an ASK target go to the slot's owner as the map now says.
    for (Pending& p : next) {
      if (!p.asking) p.node = slot_owner_[p.slot];
      if (p.node < 0) {
        return UnavailableError(std::string("redis: no node owns slot ")
                                    .append(std::to_string(p.slot))
                                    .append(" (")
                                    .append(Describe(p.command->args, p.command->key_index))
                                    .append(")"));
      }
    }
    pending = std::move(next);
  }
  return failure.ok() ? first_error_reply : failure;
}

StatusOr<std::vector<std::pair<std::string, Reply>>> ClusterClient::RunOnMasters(
    const std::vector<std::string>& args) {
  std::vector<int> masters;
  for (const int16_t owner : slot_owner_) {
    if (owner < 0) continue;
    bool seen = false;
    for (const int m : masters) seen = seen || m == owner;
    if (!seen) masters.push_back(owner);
  }
  std::vector<std::pair<std::string, Reply>> out;
  for (const int m : masters) {
    Node& node = *nodes_[m];
    std::vector<Reply> replies;
    SHINGLED_RETURN_IF_ERROR(SendPipeline(node, {&args}, &replies));
    if (replies[0].is_error()) {
      return FailedPreconditionError(std::string("redis node ")
                                         .append(node.name)
                                         .append(": ")
                                         .append(Describe(args, 0))
                                         .append(": ")
                                         .append(replies[0].str));
    }
    out.emplace_back(node.name, std::move(replies[0]));
  }
  return out;
}

const std::string* ClusterClient::ScriptText(const Command& command) const {
  if (command.args.size() < 2 || command.args[0] != "EVALSHA") return nullptr;
  for (const auto& [sha, text] : scripts_) {
    if (sha == command.args[1]) return &text;
  }
  return nullptr;
}

Status ClusterClient::LoadScript(std::string_view text, std::string* sha) {
  auto replies = RunOnMasters({"SCRIPT", "LOAD", std::string(text)});
  if (!replies.ok()) return replies.status();
  *sha = replies->front().second.str;
  if (ScriptText(Command{.args = {"EVALSHA", *sha}}) == nullptr) {
    scripts_.emplace_back(*sha, std::string(text));
  }
  return OkStatus();
}

Status ClusterClient::WaitForReplicas(int min_replicas, std::chrono::milliseconds timeout) {
  if (min_replicas < 0 || timeout.count() <= 0) {
    return InvalidArgumentError("redis: WaitForReplicas needs min_replicas >= 0 and a timeout > 0");
  }
  Status failure;
  auto fail = [&failure](Status s) {
    if (failure.ok()) failure = std::move(s);
  };
  for (auto& node : nodes_) {
    if (node->lost_unacked) {
      fail(UnavailableError(std::string("redis node ")
                                .append(node->name)
                                .append(": the connection broke after writes were sent: whether "
                                        "they reached its replicas is unknown")));
    }
  }
  std::vector<Node*> waiting;
  if (min_replicas > 0) {
    const std::string n = std::to_string(min_replicas);
    const std::string ms = std::to_string(timeout.count());
    const std::vector<std::string> wait = {"WAIT", n, ms};
    for (auto& node : nodes_) {
      if (!node->unacked || node->ctx == nullptr) continue;
      Append(node->ctx, wait);
      ++stats_.waits;
      if (Flush(node->ctx) != REDIS_OK) {
        const int saved_errno = errno;
        fail(ContextError(node->ctx, saved_errno, node->name, "writing WAIT"));
        Disconnect(*node);
        continue;
      }
      waiting.push_back(node.get());
    }
  }
  // WAIT itself takes up to `timeout`: each reply is awaited that long plus the command timeout.
  const timeval wait_tv = ToTimeval(timeout + options_.command_timeout);
  const timeval command_tv = ToTimeval(options_.command_timeout);
  for (Node* node : waiting) {
    void* raw = nullptr;
    redisSetTimeout(node->ctx, wait_tv);
    const int got = redisGetReply(node->ctx, &raw);
    if (got == REDIS_OK) redisSetTimeout(node->ctx, command_tv);
    if (got != REDIS_OK) {
      const int saved_errno = errno;
      fail(ContextError(node->ctx, saved_errno, node->name, "awaiting the reply to WAIT"));
      Disconnect(*node);
      continue;
    }
    auto* reply = static_cast<redisReply*>(raw);
    const Reply r = ConvertReply(reply);
    freeReplyObject(reply);
    if (r.type != Reply::Type::kInteger) {
      fail(FailedPreconditionError(
          std::string("redis node ").append(node->name).append(": WAIT: ").append(r.str)));
    } else if (r.integer < min_replicas) {
      fail(UnavailableError(std::string("redis node ")
                                .append(node->name)
                                .append(": WAIT: ")
                                .append(std::to_string(r.integer))
                                .append(" of ")
                                .append(std::to_string(min_replicas))
                                .append(" replicas acknowledged the writes within ")
                                .append(std::to_string(timeout.count()))
                                .append(" ms")));
    }
  }
  for (auto& node : nodes_) {
    node->unacked = false;
    node->lost_unacked = false;
  }
  return failure;
}

Status ClusterClient::CheckAppendFsyncAlways() {
  std::string wrong;
  for (const char* name : {"appendonly", "appendfsync"}) {
    auto replies = RunOnMasters({"CONFIG", "GET", name});
    if (!replies.ok()) {
      return FailedPreconditionError(
          std::string("redis: cannot read the masters' persistence settings (CONFIG GET ")
              .append(name)
              .append("): ")
              .append(replies.status().message()));
    }
    const std::string want = std::string_view(name) == "appendonly" ? "yes" : "always";
    for (const auto& [node, reply] : *replies) {
      const std::string got = reply.type == Reply::Type::kArray && reply.elements.size() == 2
                                  ? reply.elements[1].str
                                  : std::string("(no answer)");
      if (got == want) continue;
      if (!wrong.empty()) wrong.append("; ");
      wrong.append(node).append(" has ").append(name).append(" ").append(got);
    }
  }
  if (wrong.empty()) return OkStatus();
  return FailedPreconditionError(
      std::string("redis: every master must run appendonly yes and appendfsync always, so that "
                  "an acknowledged page survives a crash of its node: ")
          .append(wrong));
}

Status ClusterClient::CheckReplicas(int min_replicas) {
  auto replies = RunOnMasters({"INFO", "replication"});
  if (!replies.ok()) return replies.status();
  std::string short_of;
  for (const auto& [node, reply] : *replies) {
    // A line "connected_slaves:N" of the INFO text.
    const std::string_view text = reply.str;
    const size_t at = text.find("connected_slaves:");
    uint64_t replicas = 0;
    if (at != std::string_view::npos) {
      const std::string_view rest = text.substr(at + std::strlen("connected_slaves:"));
      std::from_chars(rest.data(), rest.data() + rest.size(), replicas);
    }
    if (replicas >= static_cast<uint64_t>(min_replicas)) continue;
    if (!short_of.empty()) short_of.append("; ");
    short_of.append(node)
        .append(" has ")
        .append(std::to_string(replicas))
        .append(" of ")
        .append(std::to_string(min_replicas));
  }
  if (short_of.empty()) return OkStatus();
  return UnavailableError("redis: a write must reach min_replicas replicas of its master, and " +
                          short_of + " replicas connected");
}

}  // namespace shingled::redis
