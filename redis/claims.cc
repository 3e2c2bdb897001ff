#include "redis/claims.h"

#include <charconv>

#include "redis/by_master.h"

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

StatusOr<std::vector<std::vector<uint64_t>>> FileAndReadPostings(
    ClusterClient& client, uint64_t doc, const std::vector<PostingValue>& values) {
  std::vector<Command> commands;
  commands.reserve(values.size());
  const std::string id = std::to_string(doc);
  for (const PostingValue& v : values) {
    std::string bucket = BucketKey(v.relation, v.value, v.bucket_bits);
    std::string field = ValueField(v.value, v.bucket_bits);
    std::string overflow = bucket + field;
    commands.push_back(
        Command{.args = {"EVAL", std::string(kFileAndReadScript), "2", std::move(bucket),
                         std::move(overflow), std::move(field), id, std::to_string(kMaxInlineList)},
                .key_index = 3});
  }
  auto replies = RunByMaster(client, commands);
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
