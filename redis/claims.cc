#include "redis/claims.h"

#include <charconv>
#include <iterator>
#include <map>

#include "redis/slot.h"

namespace shingled::redis {
namespace {

StatusOr<uint64_t> ParseId(const Reply& reply, std::string_view what) {
  uint64_t id = 0;
  const std::string& s = reply.str;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  if (reply.type != Reply::Type::kString || ec != std::errc() || end != s.data() + s.size() ||
      id == 0) {
    return DataLossError(std::string(what).append(": \"").append(s).append("\" is not an id"));
  }
  return id;
}

}  // namespace

StatusOr<std::vector<ClaimResult>> ClaimFingerprints(ClusterClient& client,
                                                     const std::vector<FingerprintClaim>& claims,
                                                     int bucket_bits) {
  std::vector<Command> commands;
  commands.reserve(claims.size());
  for (const FingerprintClaim& c : claims) {
    commands.push_back(
        Command{.args = {"EVAL", std::string(kClaimScript), "1",
                         FingerprintBucketKey(c.relation, c.high, bucket_bits),
                         FingerprintField(c.high, c.low, bucket_bits), std::to_string(c.doc)},
                .key_index = 3});
  }
  auto replies = client.Pipeline(commands);
  if (!replies.ok()) return replies.status();
  std::vector<ClaimResult> out;
  out.reserve(claims.size());
  for (size_t i = 0; i < claims.size(); ++i) {
    auto owner = ParseId((*replies)[i], "fingerprint claim");
    if (!owner.ok()) return owner.status();
    out.push_back(ClaimResult{.owner = *owner, .won = *owner == claims[i].doc});
  }
  return out;
}

StatusOr<uint64_t> IdBlocks::Next() {
  if (next_ > last_) {
    auto reply = client_.Run(Command{.args = {"INCRBY", key_, std::to_string(block_)}});
    if (!reply.ok()) return reply.status();
    if (reply->type != Reply::Type::kInteger || reply->integer < static_cast<long long>(block_)) {
      return FailedPreconditionError(
          std::string("redis: the id counter ").append(key_).append(" is not a valid counter"));
    }
    if (min_replicas_ > 0) {
      SHINGLED_RETURN_IF_ERROR(client_.WaitForReplicas(min_replicas_, std::chrono::seconds(5)));
    }
    last_ = static_cast<uint64_t>(reply->integer);
    next_ = last_ - block_ + 1;
  }
  return next_++;
}

const std::string kFileAndReadScript =
    std::string(kFileFunction) + "return file(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]))\n";

const std::string kFileAndReadByMasterScript = std::string(kFileFunction) + R"lua(
local limit = tonumber(ARGV[1])
local lists = {}
for i = 2, #ARGV, 4 do
  lists[#lists + 1] = file(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], limit)
end
return lists
)lua";

StatusOr<std::vector<Reply>> FileAndRead(const ClusterClient& client,
                                         std::span<const PostingFiling> postings,
                                         std::span<const Command> with, const PipelineRound& round,
                                         std::vector<Reply>* with_replies) {
  struct Keys {
    std::string bucket, field;
  };
  std::vector<Keys> keys;
  keys.reserve(postings.size());
  std::map<std::string, std::vector<size_t>> by_master;  // "host:port" -> postings
  for (size_t k = 0; k < postings.size(); ++k) {
    const PostingValue& v = postings[k].value;
    keys.push_back(Keys{BucketKey(v.relation, v.value, v.bucket_bits),
                        ValueField(v.value, v.bucket_bits)});
    by_master[client.NodeForSlot(KeySlot(keys.back().bucket))].push_back(k);
  }
  std::vector<Command> cmds;
  for (const auto& [master, group] : by_master) {
    Command c{.args = {"EVAL", kFileAndReadByMasterScript, "1", keys[group.front()].bucket,
                       std::to_string(kMaxInlineList)},
              .key_index = 3};
    for (size_t k : group) {
      c.args.push_back(keys[k].bucket);
      c.args.push_back(keys[k].bucket + keys[k].field);
      c.args.push_back(keys[k].field);
      c.args.push_back(std::to_string(postings[k].doc));
    }
    cmds.push_back(std::move(c));
  }
  cmds.insert(cmds.end(), with.begin(), with.end());
  std::vector<Reply> lists(postings.size());
  StatusOr<std::vector<Reply>> replies = round(cmds);
  if (replies.ok()) {
    size_t c = 0;
    for (const auto& [master, group] : by_master) {
      Reply& reply = (*replies)[c++];
      if (reply.type != Reply::Type::kArray || reply.elements.size() != group.size()) {
        return DataLossError("redis: the postings of " + master + " were answered with " +
                             std::to_string(reply.elements.size()) + " lists for " +
                             std::to_string(group.size()));
      }
      for (size_t j = 0; j < group.size(); ++j) lists[group[j]] = std::move(reply.elements[j]);
    }
    with_replies->assign(std::make_move_iterator(replies->begin() + by_master.size()),
                         std::make_move_iterator(replies->end()));
    return lists;
  }
  if (replies.status().code() != StatusCode::kFailedPrecondition) return replies.status();
  cmds.clear();
  for (size_t k = 0; k < postings.size(); ++k) {
    std::string overflow = keys[k].bucket + keys[k].field;
    cmds.push_back(Command{.args = {"EVAL", kFileAndReadScript, "2", std::move(keys[k].bucket),
                                    std::move(overflow), std::move(keys[k].field),
                                    std::to_string(postings[k].doc),
                                    std::to_string(kMaxInlineList)},
                           .key_index = 3});
  }
  cmds.insert(cmds.end(), with.begin(), with.end());
  replies = round(cmds);
  if (!replies.ok()) return replies.status();
  for (size_t k = 0; k < postings.size(); ++k) lists[k] = std::move((*replies)[k]);
  with_replies->assign(std::make_move_iterator(replies->begin() + postings.size()),
                       std::make_move_iterator(replies->end()));
  return lists;
}

StatusOr<std::vector<std::vector<uint64_t>>> FileAndReadPostings(
    ClusterClient& client, uint64_t doc, const std::vector<PostingValue>& values) {
  std::vector<PostingFiling> postings;
  postings.reserve(values.size());
  for (const PostingValue& v : values) postings.push_back(PostingFiling{v, doc});
  std::vector<Reply> none;
  StatusOr<std::vector<Reply>> replies = FileAndRead(
      client, postings, {}, [&client](const std::vector<Command>& c) { return client.Pipeline(c); },
      &none);
  if (!replies.ok()) return replies.status();
  std::vector<std::vector<uint64_t>> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    auto ids = ParsePostingList((*replies)[i]);
    if (!ids.ok()) return ids.status();
    for (const uint64_t other : *ids) {
      if (other != doc) out[i].push_back(other);
    }
  }
  return out;
}

}  // namespace shingled::redis
