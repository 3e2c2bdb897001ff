#include "redis/layout.h"

#include <charconv>

namespace shingled::redis {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string TaggedBucket(Relation relation, uint64_t prefix, int bucket_bits) {
  std::string key = "{";
  key.push_back(static_cast<char>(relation));
  for (int shift = ((bucket_bits + 3) / 4 - 1) * 4; shift >= 0; shift -= 4) {
    key.push_back(kHex[(prefix >> shift) & 15]);
  }
  key.push_back('}');
  return key;
}

void AppendBigEndian(uint64_t v, int bytes, std::string* out) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

std::string BucketKey(Relation relation, uint64_t value, int bucket_bits) {
  return TaggedBucket(relation, value >> (64 - bucket_bits), bucket_bits);
}

std::string ValueField(uint64_t value, int bucket_bits) {
  const int low_bits = 64 - bucket_bits;
  const uint64_t low = value & ((uint64_t{1} << low_bits) - 1);
  std::string field;
  AppendBigEndian(low, (low_bits + 7) / 8, &field);
  return field;
}

std::string FingerprintBucketKey(Relation relation, uint64_t high, int bucket_bits) {
  return BucketKey(relation, high, bucket_bits);
}

std::string FingerprintField(uint64_t high, uint64_t low, int bucket_bits) {
  std::string field = ValueField(high, bucket_bits);
  AppendBigEndian(low, 8, &field);
  return field;
}

Command AddPostingCommand(const std::string& sha, Relation relation, uint64_t value, uint64_t doc,
                          int bucket_bits) {
  std::string bucket = BucketKey(relation, value, bucket_bits);
  std::string field = ValueField(value, bucket_bits);
  std::string overflow = bucket + field;
  return Command{.args = {"EVALSHA", sha, "2", std::move(bucket), std::move(overflow),
                          std::move(field), std::to_string(doc), std::to_string(kMaxInlineList)},
                 .key_index = 3};
}

Command GetPostingCommand(const std::string& sha, Relation relation, uint64_t value,
                          int bucket_bits) {
  std::string bucket = BucketKey(relation, value, bucket_bits);
  std::string field = ValueField(value, bucket_bits);
  std::string overflow = bucket + field;
  return Command{
      .args = {"EVALSHA", sha, "2", std::move(bucket), std::move(overflow), std::move(field)},
      .key_index = 3};
}

Command ClaimFingerprintCommand(Relation relation, uint64_t high, uint64_t low, uint64_t doc,
                                int bucket_bits) {
  return Command{.args = {"HSETNX", FingerprintBucketKey(relation, high, bucket_bits),
                          FingerprintField(high, low, bucket_bits), std::to_string(doc)}};
}

Command ClaimedByCommand(Relation relation, uint64_t high, uint64_t low, int bucket_bits) {
  return Command{.args = {"HGET", FingerprintBucketKey(relation, high, bucket_bits),
                          FingerprintField(high, low, bucket_bits)}};
}

StatusOr<std::vector<uint64_t>> ParsePostingList(const Reply& reply) {
  std::vector<uint64_t> ids;
  if (reply.is_nil()) return ids;
  if (reply.type != Reply::Type::kString) return DataLossError("posting list: not a string");
  const std::string& s = reply.str;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    uint64_t id = 0;
    const auto [ptr, ec] = std::from_chars(s.data() + start, s.data() + end, id);
    if (ec != std::errc() || ptr != s.data() + end || id == 0) {
      return DataLossError(
          std::string("posting list: \"").append(s).append("\" is not a list of ids"));
    }
    ids.push_back(id);
    start = end + 1;
  }
  return ids;
}

Status LoadPostingScripts(ClusterClient& client, std::string* add_sha, std::string* get_sha) {
  SHINGLED_RETURN_IF_ERROR(client.LoadScript(kAddPostingScript, add_sha));
  return client.LoadScript(kGetPostingScript, get_sha);
}

}  // namespace shingled::redis
