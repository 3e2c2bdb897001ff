// Redis Cluster hash slots: which of the 16,384 slots a key belongs to.
//
// The Redis Cluster specification ("Keys distribution model"): slot = CRC16(key) mod 16384, with
// the XMODEM variant of CRC16 (polynomial 0x1021, initial value 0, no reflection). When the key
// holds a `{...}` hash tag with at least one byte between the first `{` and the next `}`, only
// those bytes are hashed, so that keys sharing a tag land in the same slot. Pure functions.
#ifndef SHINGLED_REDIS_SLOT_H_
#define SHINGLED_REDIS_SLOT_H_

#include <cstdint>
#include <string_view>

namespace shingled::redis {

inline constexpr int kNumSlots = 16384;

// CRC16-XMODEM of `data`; Crc16("123456789") is 0x31C3 (the specification's check value).
uint16_t Crc16(std::string_view data);

// The part of `key` that is hashed: the bytes between the first '{' and the next '}' when there
// are any, else the whole key ("{user1000}.following" -> "user1000"; "foo{}{bar}" -> the whole
// key, since its first tag is empty).
std::string_view HashTag(std::string_view key);

// The slot of `key`, 0..16383 ("foo" -> 12182).
int KeySlot(std::string_view key);

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_SLOT_H_
