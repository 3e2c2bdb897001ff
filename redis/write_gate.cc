#include "redis/write_gate.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace shingled::redis {
namespace {

constexpr char kFence[] = "{w}fence";
constexpr char kWriters[] = "{w}writers";
constexpr char kForgetter[] = "{w}forgetter";
constexpr char kNote[] = "{w}note";

// A writer enters, or renews its lease: "" when done, else the fence that refuses it. The lease
// ends ARGV[2] ms after the server's clock.
constexpr std::string_view kEnterScript = R"lua(
local fence = redis.call('GET', KEYS[1])
if fence then return fence end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[2], ARGV[1], now + tonumber(ARGV[2]))
return ''
)lua";

// The fence of takedown ARGV[1] set: 0 when set now, 1 when it stood already for the same
// takedown (cut short), else the other takedown's fence, which stays.
constexpr std::string_view kFenceScript = R"lua(
local fence = redis.call('GET', KEYS[1])
if fence == ARGV[1] then return 1 end
if fence then return fence end
redis.call('SET', KEYS[1], ARGV[1])
return 0
)lua";

// The writers whose lease has not run out, counted; the others' entries deleted.
constexpr std::string_view kWritersInScript = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local n = 0
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) <= now then redis.call('HDEL', KEYS[1], all[i]) else n = n + 1 end
end
return n
)lua";

// The forgetter lease renewed (ARGV[2] ms) when ARGV[1] holds it: 1, else 0.
constexpr std::string_view kRenewScript = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
)lua";

// The forgetter lease given up when ARGV[1] holds it.
constexpr std::string_view kGiveUpScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
)lua";

Command Script(std::string_view script, std::vector<std::string> keys,
               std::vector<std::string> argv) {
  Command c;
  c.args = {"EVAL", std::string(script), std::to_string(keys.size())};
  for (std::string& k : keys) c.args.push_back(std::move(k));
  for (std::string& a : argv) c.args.push_back(std::move(a));
  c.key_index = 3;
  return c;
}

std::string Refused(const std::string& fence) {
  return "redis: the cluster's writers are held off by a takedown (" + fence +
         "); retry once it completes (a takedown cut short completes when it is run again)";
}

}  // namespace

WriteGate::WriteGate(ClusterClient& client, std::string token, std::chrono::milliseconds lease)
    : client_(client), token_(std::move(token)), lease_(lease) {}

Status WriteGate::Enter(std::chrono::milliseconds wait) {
  const Clock::time_point until = Clock::now() + wait;
  for (std::chrono::milliseconds pause(5);; pause = std::min(pause * 2, lease_ / 8)) {
    const Clock::time_point asked = Clock::now();
    auto r = client_.Run(
        Script(kEnterScript, {kFence, kWriters}, {token_, std::to_string(lease_.count())}));
    if (!r.ok()) return r.status();
    if (r->str.empty()) {
      renewed_ = asked;
      inside_ = true;
      return OkStatus();
    }
    if (Clock::now() + pause > until) return UnavailableError(Refused(r->str));
    std::this_thread::sleep_for(pause);
  }
}

Status WriteGate::Keep() {
  const Clock::time_point now = Clock::now();
  if (!inside_ || now - renewed_ >= lease_) {
    return UnavailableError("redis: a writer's lease ran out before its batch did; retry");
  }
  if (now - renewed_ < lease_ / 4) return OkStatus();
  auto r = client_.Run(
      Script(kEnterScript, {kFence, kWriters}, {token_, std::to_string(lease_.count())}));
  if (!r.ok()) return r.status();
  if (!r->str.empty()) return UnavailableError(Refused(r->str));
  renewed_ = now;
  return OkStatus();
}

Status WriteGate::Leave() {
  if (!inside_) return OkStatus();
  inside_ = false;
  return client_.Run(Command{.args = {"HDEL", kWriters, token_}}).status();
}

Status WriteGate::Hold(const std::string& what, std::chrono::milliseconds wait) {
  const std::string ms = std::to_string(2 * lease_.count());
  auto taken = client_.Run(Command{.args = {"SET", kForgetter, token_, "NX", "PX", ms}});
  if (!taken.ok()) return taken.status();
  if (taken->is_nil()) {
    auto holder = client_.Run(Command{.args = {"GET", kForgetter}});
    if (!holder.ok()) return holder.status();
    if (holder->str != token_) {
      auto left = client_.Run(Command{.args = {"PTTL", kForgetter}});
      if (!left.ok()) return left.status();
      return UnavailableError(
          "redis: another takedown is running on the cluster, or one was killed and its lease "
          "runs out in " +
          std::to_string((std::max<int64_t>(left->integer, 0) + 999) / 1000) + " s; retry then");
    }
  }
  auto give_up = [&] {
    return client_.Run(Script(kGiveUpScript, {kForgetter}, {token_})).status();
  };
  auto fence = client_.Run(Script(kFenceScript, {kFence}, {what}));
  if (!fence.ok() || fence->type != Reply::Type::kInteger) {
    SHINGLED_RETURN_IF_ERROR(give_up());
    if (!fence.ok()) return fence.status();
    return FailedPreconditionError("a takedown (" + fence->str +
                                   ") was cut short on the cluster: run it again first");
  }
  const bool set_now = fence->integer == 0;
  if (set_now) SHINGLED_RETURN_IF_ERROR(client_.Run(Command{.args = {"DEL", kNote}}).status());
  const Clock::time_point until = Clock::now() + wait;
  for (;;) {
    auto in = client_.Run(Script(kWritersInScript, {kWriters}, {}));
    if (!in.ok()) return in.status();
    if (in->integer == 0) return OkStatus();
    if (Clock::now() > until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Nothing written: a fence set now falls again, so that the writers go on.
  if (set_now) SHINGLED_RETURN_IF_ERROR(client_.Run(Command{.args = {"DEL", kFence}}).status());
  SHINGLED_RETURN_IF_ERROR(give_up());
  return UnavailableError("redis: writers are still writing on the cluster after " +
                          std::to_string(wait.count()) + " ms; run the takedown again");
}

Status WriteGate::Renew() {
  auto r =
      client_.Run(Script(kRenewScript, {kForgetter}, {token_, std::to_string(2 * lease_.count())}));
  if (!r.ok()) return r.status();
  if (r->integer != 1) {
    return FailedPreconditionError(
        "redis: the takedown's lease ran out (another takedown may run): run it again");
  }
  return OkStatus();
}

Status WriteGate::SetNote(const std::string& note) {
  return client_.Run(Command{.args = {"SET", kNote, note}}).status();
}

StatusOr<std::string> WriteGate::Note() {
  auto r = client_.Run(Command{.args = {"GET", kNote}});
  if (!r.ok()) return r.status();
  return r->is_nil() ? std::string() : r->str;
}

Status WriteGate::Release() {
  SHINGLED_RETURN_IF_ERROR(client_.Run(Command{.args = {"DEL", kNote}}).status());
  SHINGLED_RETURN_IF_ERROR(client_.Run(Command{.args = {"DEL", kFence}}).status());
  return client_.Run(Script(kGiveUpScript, {kForgetter}, {token_})).status();
}

StatusOr<std::string> WriteGate::Fence() {
  auto r = client_.Run(Command{.args = {"GET", kFence}});
  if (!r.ok()) return r.status();
  return r->is_nil() ? std::string() : r->str;
}

}  // namespace shingled::redis
