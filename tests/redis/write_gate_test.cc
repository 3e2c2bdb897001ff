// The write gate (redis/write_gate.h) on a real 3-master cluster: writers at once or a forgetter
// alone, a forgetter waiting for the writers inside, a killed writer's lease running out, and a
// takedown cut short holding the writers off until it is run again.
#include "redis/write_gate.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/redis/cluster_fixture.h"

namespace shingled::redis {
namespace {

using std::chrono::milliseconds;
using WriteGateTest = testing::ClusterTest;

TEST_F(WriteGateTest, WritersOrOneForgetterAlone) {
  auto c1 = NewClient(), c2 = NewClient(), c3 = NewClient();
  ASSERT_TRUE(c1 && c2 && c3);
  WriteGate a(*c1, "a", milliseconds(20000)), b(*c2, "b", milliseconds(20000));
  WriteGate forgetter(*c3, "f", milliseconds(20000));
  ASSERT_TRUE(a.Enter(milliseconds(0)).ok());
  ASSERT_TRUE(b.Enter(milliseconds(0)).ok());  // writers at once
  // Writers inside and a short wait: the forgetter gives up, and its fence falls again.
  EXPECT_EQ(forgetter.Hold("host example.com", milliseconds(50)).code(), StatusCode::kUnavailable);
  EXPECT_EQ(*forgetter.Fence(), "");
  // The forgetter waits for the writers inside; a writer that comes meanwhile is refused.
  Status held;
  std::thread hold([&] { held = forgetter.Hold("host example.com", milliseconds(5000)); });
  while (*a.Fence() != "host example.com") std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(a.Keep().ok());  // inside, a writer goes on until its lease needs renewing
  auto c4 = NewClient();
  ASSERT_TRUE(c4);
  WriteGate late(*c4, "late", milliseconds(20000));
  Status refused = late.Enter(milliseconds(50));
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.message().find("host example.com"), std::string::npos) << refused.message();
  ASSERT_TRUE(a.Leave().ok());
  ASSERT_TRUE(b.Leave().ok());
  hold.join();
  ASSERT_TRUE(held.ok()) << held.ToString();
  ASSERT_TRUE(forgetter.Renew().ok());
  // Another takedown waits for the forgetter lease.
  WriteGate other(*c2, "g", milliseconds(20000));
  const Status waits = other.Hold("host example.com", milliseconds(0));
  EXPECT_EQ(waits.code(), StatusCode::kUnavailable);
  // The forgetter lease is twice a writer's: 40 s.
  EXPECT_NE(waits.message().find("its lease runs out in 40 s"), std::string::npos)
      << waits.ToString();
  ASSERT_TRUE(forgetter.Release().ok());
  EXPECT_EQ(*forgetter.Fence(), "");
  EXPECT_TRUE(late.Enter(milliseconds(0)).ok());
  EXPECT_TRUE(late.Leave().ok());
}

TEST_F(WriteGateTest, LeasesRunOutAndACutShortTakedownHoldsTheWritersOff) {
  auto c1 = NewClient(), c2 = NewClient();
  ASSERT_TRUE(c1 && c2);
  // A writer killed inside: the forgetter starts once its lease has run out.
  WriteGate killed(*c1, "killed", milliseconds(300));
  ASSERT_TRUE(killed.Enter(milliseconds(0)).ok());
  WriteGate first(*c2, "first", milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(first.Hold("url https://a.example/", milliseconds(2000)).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(200));
  // The killed writer's lease ran out: it may not write again.
  EXPECT_EQ(killed.Keep().code(), StatusCode::kUnavailable);
  // The forgetter is killed too: its lease runs out, but its fence stands, and only the same
  // takedown may take it over.
  std::this_thread::sleep_for(milliseconds(700));
  WriteGate second(*c1, "second", milliseconds(300));
  Status other = second.Hold("host b.example", milliseconds(0));
  EXPECT_EQ(other.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other.message().find("url https://a.example/"), std::string::npos) << other.message();
  EXPECT_EQ(second.Enter(milliseconds(0)).code(), StatusCode::kUnavailable);
  ASSERT_TRUE(second.Hold("url https://a.example/", milliseconds(0)).ok());
  ASSERT_TRUE(second.Release().ok());
  EXPECT_TRUE(second.Enter(milliseconds(0)).ok());
}

// A writer inside renews its lease as it goes: once a fence stands, the renewal is refused and
// the writer stops before its next round.
TEST_F(WriteGateTest, AWriterStopsAtItsNextRenewalOnceAFenceStands) {
  auto c1 = NewClient(), c2 = NewClient();
  ASSERT_TRUE(c1 && c2);
  WriteGate writer(*c1, "w", milliseconds(400));
  ASSERT_TRUE(writer.Enter(milliseconds(0)).ok());
  WriteGate forgetter(*c2, "f", milliseconds(400));
  Status held;
  std::thread hold([&] { held = forgetter.Hold("prefix https://c.example/", milliseconds(2000)); });
  while (*writer.Fence() != "prefix https://c.example/")
    std::this_thread::sleep_for(milliseconds(5));
  std::this_thread::sleep_for(milliseconds(150));
  Status kept = writer.Keep();
  EXPECT_EQ(kept.code(), StatusCode::kUnavailable) << kept.ToString();
  ASSERT_TRUE(writer.Leave().ok());
  hold.join();
  EXPECT_TRUE(held.ok()) << held.ToString();
}

}  // namespace
}  // namespace shingled::redis
