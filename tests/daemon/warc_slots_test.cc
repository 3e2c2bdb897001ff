// The fairness rule of WARC upload slots (daemon/api/warc_slots.h), case by case.
#include "daemon/api/warc_slots.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace shingled::daemon {
namespace {

using std::chrono::seconds;
using Kind = SlotDecision::Kind;

constexpr double kSlow = 2048;  // bytes a second: just over the minimum body rate
constexpr double kFast = 10e6;

UploadFlow Flow(std::string client, double rate, seconds age = seconds(10)) {
  return {.client = std::move(client), .age = age, .bytes_per_second = rate};
}

WarcSlotRules Rules(size_t max_uploads, size_t max_per_client) {
  return {.max_uploads = max_uploads, .max_per_client = max_per_client};
}

TEST(WarcSlotsTest, AFreeSlotIsTaken) {
  const std::vector<UploadFlow> flows = {Flow("a", kSlow), Flow("b", kSlow)};
  EXPECT_EQ(DecideWarcSlot(flows, "c", Rules(4, 2)).kind, Kind::kFree);
  EXPECT_EQ(DecideWarcSlot({}, "c", Rules(1, 1)).kind, Kind::kFree);
}

TEST(WarcSlotsTest, TheSlowestSlowUploadGivesItsSlotWhenEveryOneIsTaken) {
  const std::vector<UploadFlow> flows = {Flow("a", kSlow), Flow("b", kFast), Flow("c", 1800),
                                         Flow("d", kSlow)};
  const SlotDecision d = DecideWarcSlot(flows, "e", Rules(4, 2));
  ASSERT_EQ(d.kind, Kind::kReclaim);
  EXPECT_EQ(d.victim, 2u);
  EXPECT_NE(d.reason.find("limits.max_warc_uploads"), std::string::npos) << d.reason;
}

TEST(WarcSlotsTest, FastUploadsKeepTheirSlots) {
  const std::vector<UploadFlow> flows = {Flow("a", kFast), Flow("b", 65536), Flow("c", kFast)};
  const SlotDecision d = DecideWarcSlot(flows, "d", Rules(3, 2));
  EXPECT_EQ(d.kind, Kind::kRefuse);
  EXPECT_EQ(d.reason, "3 WARC uploads are being read (limits.max_warc_uploads)");
}

TEST(WarcSlotsTest, AnUploadIsJudgedOnlyOnceItHasRunAWhile) {
  const std::vector<UploadFlow> flows = {Flow("a", 10, seconds(1)), Flow("b", kSlow, seconds(3))};
  const SlotDecision d = DecideWarcSlot(flows, "c", Rules(2, 2));
  ASSERT_EQ(d.kind, Kind::kReclaim);
  EXPECT_EQ(d.victim, 1u);
  const std::vector<UploadFlow> young = {Flow("a", 10, seconds(1))};
  EXPECT_EQ(DecideWarcSlot(young, "c", Rules(1, 1)).kind, Kind::kRefuse);
}

TEST(WarcSlotsTest, AnUploadHeldBackByTheDaemonIsNotSlow) {
  // No time with the pipe taking bytes: the pace is infinite.
  const std::vector<UploadFlow> flows = {Flow("a", std::numeric_limits<double>::infinity())};
  EXPECT_EQ(DecideWarcSlot(flows, "b", Rules(1, 1)).kind, Kind::kRefuse);
}

TEST(WarcSlotsTest, AClientAtItsShareContendsOnlyWithItsOwnUploads) {
  // "a" holds its 2; another client's slow upload is not its to take, even with none free.
  const std::vector<UploadFlow> flows = {Flow("a", kFast), Flow("a", kFast), Flow("b", 10)};
  SlotDecision d = DecideWarcSlot(flows, "a", Rules(3, 2));
  EXPECT_EQ(d.kind, Kind::kRefuse);
  EXPECT_EQ(d.reason,
            "2 WARC uploads from this address are being read "
            "(limits.max_warc_uploads_per_client)");
  // A slot is free, but "a" is at its share: still refused.
  d = DecideWarcSlot(flows, "a", Rules(4, 2));
  EXPECT_EQ(d.kind, Kind::kRefuse);
  // Its own slow upload gives way to it.
  const std::vector<UploadFlow> own_slow = {Flow("a", kFast), Flow("a", kSlow), Flow("b", 10)};
  d = DecideWarcSlot(own_slow, "a", Rules(4, 2));
  ASSERT_EQ(d.kind, Kind::kReclaim);
  EXPECT_EQ(d.victim, 1u);
  // Another client is not held back by "a"'s share.
  EXPECT_EQ(DecideWarcSlot(flows, "b", Rules(4, 2)).kind, Kind::kFree);
}

TEST(WarcSlotsTest, ARateOfZeroNeverTakesASlotBack) {
  WarcSlotRules rules = Rules(1, 1);
  rules.min_rate = 0;
  const std::vector<UploadFlow> flows = {Flow("a", 0)};
  EXPECT_EQ(DecideWarcSlot(flows, "b", rules).kind, Kind::kRefuse);
}

}  // namespace
}  // namespace shingled::daemon
