// The Redis document record (redis/record.h): round trips, exact bytes of a small record, and
// refused bytes.
#include "redis/record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace shingled::redis {
namespace {

RedisDocument Full(std::mt19937_64& rng) {
  RedisDocument d;
  d.owns_lexical = true;
  d.bytes = 48213;
  d.tokens = 5120;
  d.shingles = 5113;
  d.first_seen = 1'790'000'000'000;
  d.last_seen = d.first_seen + 86'400'000;
  for (uint64_t& f : d.fingerprints) f = rng();
  for (int i = 0; i < 84; ++i) d.minhashes.push_back(MinhashKey(rng()));
  for (int i = 0; i < 6; ++i) d.features.push_back(rng());
  d.log2_modulus = 6;
  for (int i = 0; i < 75; ++i) d.sample.push_back(ModSampleKey(rng() << 6, 6));
  std::sort(d.sample.begin(), d.sample.end());
  for (int i = 0; i < 19; ++i) d.indexed_high.push_back(static_cast<uint32_t>(rng()));
  for (int i = 0; i < 256; ++i) d.verify_sample.push_back(static_cast<uint32_t>(rng() >> 40));
  std::sort(d.verify_sample.begin(), d.verify_sample.end());
  d.verify_sample.erase(std::unique(d.verify_sample.begin(), d.verify_sample.end()),
                        d.verify_sample.end());
  d.supershingles_listed = true;
  for (int i = 0; i < 22; ++i) d.supershingle_buckets.push_back(rng() >> 42);
  std::sort(d.supershingle_buckets.begin(), d.supershingle_buckets.end());
  d.supershingle_buckets.erase(
      std::unique(d.supershingle_buckets.begin(), d.supershingle_buckets.end()),
      d.supershingle_buckets.end());
  return d;
}

TEST(RedisRecordTest, RoundTrips) {
  std::mt19937_64 rng(36);
  for (int i = 0; i < 100; ++i) {
    RedisDocument d = Full(rng);
    if (i % 3 == 1) d.verify_sample.clear();         // stored with the sample off
    if (i % 5 == 2) d.last_seen = d.first_seen - 5;  // clocks go backwards
    if (i % 4 == 3) {                                // written before format 4
      d.supershingles_listed = false;
      d.supershingle_buckets.clear();
    }
    const std::string bytes = EncodeRedisDocument(d);
    auto back = DecodeRedisDocument(bytes);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, d);
  }
  // A 256-value sample of a large page (values below 2^24) costs ~3 bytes a value, not 4.
  const RedisDocument d = Full(rng);
  const size_t without = [&] {
    RedisDocument e = d;
    e.verify_sample.clear();
    return EncodeRedisDocument(e).size();
  }();
  EXPECT_LT(EncodeRedisDocument(d).size() - without, 3 * d.verify_sample.size() + 2);
  // Without a sketch: the header only.
  RedisDocument rep;
  rep.rep = 17;
  rep.owns_shingle = true;
  rep.bytes = 1;
  auto back = DecodeRedisDocument(EncodeRedisDocument(rep));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, rep);
}

TEST(RedisRecordTest, ExactBytesOfASmallRecord) {
  RedisDocument d;
  d.bytes = 300;
  d.tokens = 2;
  d.shingles = 1;
  d.first_seen = -1;
  d.last_seen = 1;
  d.fingerprints[0] = 0x0102030405060708ull;
  d.minhashes = {0xaabbccdd};
  d.features = {5};
  d.log2_modulus = 2;
  d.sample = {1, 2};
  d.verify_sample = {3, 200};
  std::string want = {1, '\xac', 2, 2, 1, 1, 4};
  want.append("\x08\x07\x06\x05\x04\x03\x02\x01", 8);
  want.append(40, '\0');
  want.append("\x01\xdd\xcc\xbb\xaa", 5);
  want.append("\x01\x05\0\0\0\0\0\0\0", 9);
  want.append("\x02\x02\x01\0\0\0\x02\0\0\0", 10);
  want.append("\x02\x03\xc5\x01", 4);
  want.push_back('\0');  // no indexed sample value
  EXPECT_EQ(EncodeRedisDocument(d), want);
  // The super shingle buckets listed: flag bit 3, and their differences last.
  d.supershingles_listed = true;
  d.supershingle_buckets = {5, 300};
  want[0] = 9;
  want.append("\x02\x05\xa7\x02", 4);
  EXPECT_EQ(EncodeRedisDocument(d), want);
}

TEST(RedisRecordTest, RefusesBytesThatDoNotDecode) {
  std::mt19937_64 rng(7);
  const std::string good = EncodeRedisDocument(Full(rng));
  for (const size_t cut : {size_t{0}, size_t{1}, size_t{10}, size_t{60}, good.size() - 1}) {
    auto r = DecodeRedisDocument(std::string_view(good).substr(0, cut));
    ASSERT_FALSE(r.ok()) << cut;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  }
  EXPECT_FALSE(DecodeRedisDocument(good + "x").ok());
  EXPECT_FALSE(DecodeRedisDocument(std::string("\x08", 1)).ok());  // unknown flag
  RedisDocument unsorted = Full(rng);
  std::swap(unsorted.sample[0], unsorted.sample[1]);
  auto r = DecodeRedisDocument(EncodeRedisDocument(unsorted));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the MOD sample's order"), std::string::npos);
  RedisDocument repeated = Full(rng);
  repeated.supershingle_buckets.push_back(repeated.supershingle_buckets.back());
  r = DecodeRedisDocument(EncodeRedisDocument(repeated));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the super shingle buckets"), std::string::npos);
}

}  // namespace
}  // namespace shingled::redis
