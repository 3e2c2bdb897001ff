#include "redis/slot.h"

#include <gtest/gtest.h>

#include <string>

namespace shingled::redis {
namespace {

// The values of the Redis Cluster specification ("Keys distribution model", Appendix A).
TEST(SlotTest, Crc16CheckValue) { EXPECT_EQ(Crc16("123456789"), 0x31C3); }

TEST(SlotTest, SlotsOfKnownKeys) {
  EXPECT_EQ(KeySlot("foo"), 12182);
  EXPECT_EQ(KeySlot("123456789"), 0x31C3 % kNumSlots);
  EXPECT_EQ(KeySlot(""), 0);
}

TEST(SlotTest, HashTags) {
  // The specification's examples.
  EXPECT_EQ(HashTag("{user1000}.following"), "user1000");
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"));
  EXPECT_EQ(HashTag("foo{}{bar}"), "foo{}{bar}");  // the first tag is empty: the whole key
  EXPECT_EQ(HashTag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(HashTag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(HashTag("foo{bar"), "foo{bar");  // no closing brace
  EXPECT_EQ(KeySlot("{foo}x"), KeySlot("foo"));
}

TEST(SlotTest, BinaryKeys) {
  const std::string key("\x00\xff{\x01\x02}", 6);
  EXPECT_EQ(HashTag(key), std::string("\x01\x02", 2));
  EXPECT_LT(KeySlot(std::string(100, '\xff')), kNumSlots);
}

}  // namespace
}  // namespace shingled::redis
