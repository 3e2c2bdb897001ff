// A URL's versions on Redis (redis/versions.h): the field's bytes, and what counting its versions
// adds to its shard's counts (the sweep record's own counting rule, SweepRecord::Count).
#include "redis/versions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shingled::redis {
namespace {

using store::Verdict;
using store::internal::VersionRecord;

VersionRecord Version(store::SweepId sweep, int64_t date, Verdict verdict, store::DocId doc) {
  VersionRecord v;
  v.sweep = sweep;
  v.date = date;
  v.verdict = verdict;
  v.doc = doc;
  v.http_status = verdict == Verdict::kGone ? 404 : 200;
  return v;
}

TEST(VersionListTest, BytesRoundTrip) {
  const VersionList list{1, {"N" + std::string(200, 'x'), "V"}};
  const std::string bytes = EncodeVersionList(list);
  // The mark, then each entry as a varint length (201: two bytes) and its bytes.
  ASSERT_EQ(bytes.size(), 1 + 2 + 201 + 1 + 1);
  EXPECT_EQ(bytes[0], '\x01');
  auto back = DecodeVersionList(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, list);
  EXPECT_EQ(EncodeVersionList({}), "");
  auto none = DecodeVersionList("");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, VersionList{});
}

TEST(VersionListTest, AFieldCountingMoreThanItHoldsIsDataLoss) {
  auto bad = DecodeVersionList(std::string("\x02\x01V", 3));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_FALSE(DecodeVersionEntry("X").ok());
  EXPECT_FALSE(DecodeVersionEntry("").ok());
}

TEST(VersionListTest, CountingAddsEachVersionToItsSweepOnce) {
  VersionList list;
  list.entries = {VersionEntry(Version(3, 500, Verdict::kNew, 7), true),
                  VersionEntry(Version(3, 400, Verdict::kUnchanged, 7), false),
                  VersionEntry(Version(4, 900, Verdict::kGone, 0), false),
                  VersionEntry(Version(4, 950, Verdict::kFailed, 0), false)};
  auto changes = CountRest(&list);
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(list.counted, 4u);
  const std::vector<CountChange> expected = {
      {false, "urls", 1},       {false, "documents", 1},   {false, "versions", 4},
      {false, "3.pages", 2},    {false, "3.new_docs", 1},  {false, "3.unchanged", 1},
      {true, "3.start", 400},   {false, "4.pages", 2},     {false, "4.gone", 1},
      {true, "4.start", 900}};
  EXPECT_EQ(*changes, expected);
  // Counted already: nothing more.
  auto again = CountRest(&list);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  // A version appended later: counted without the URL again.
  list.entries.push_back(VersionEntry(Version(5, 1000, Verdict::kNearDuplicate, 9), false));
  auto more = CountRest(&list);
  ASSERT_TRUE(more.ok());
  const std::vector<CountChange> one = {{false, "versions", 1},
                                        {false, "5.pages", 1},
                                        {false, "5.near_duplicate", 1},
                                        {true, "5.start", 1000}};
  EXPECT_EQ(*more, one);
}

TEST(VersionListTest, UncountTakesBackWhatCountingAdded) {
  const std::vector<CountChange> expected = {
      {false, "versions", -1}, {false, "6.pages", -1}, {false, "6.gone", -1}};
  VersionRecord gone = Version(6, 10, Verdict::kGone, 0);
  gone.http_status = 0;
  EXPECT_EQ(Uncount(gone, false), expected);
  const auto created = Uncount(Version(6, 10, Verdict::kNew, 3), true);
  ASSERT_FALSE(created.empty());
  EXPECT_EQ(created.front(), (CountChange{false, "documents", -1}));
}

TEST(VersionListTest, AnEntryThatDoesNotDecodeStopsTheCount) {
  VersionList list{0, {"Vnot a record"}};
  EXPECT_FALSE(CountRest(&list).ok());
  EXPECT_EQ(list.counted, 0u);
}

}  // namespace
}  // namespace shingled::redis
