// The key layout of docs/REDIS.md: exact bytes of keys and fields, and the scripts and claims on a
// real cluster (redis_cluster.h).
#include "redis/layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/redis/cluster_fixture.h"

namespace shingled::redis {
namespace {

TEST(LayoutTest, ExactKeysAndFields) {
  const uint64_t v = 0x0123456789abcdefull;
  EXPECT_EQ(BucketKey(Relation::kFeature, v, 24), "{f012345}");
  EXPECT_EQ(ValueField(v, 24), std::string("\x67\x89\xab\xcd\xef", 5));
  // 22 bits: 6 hex digits of v >> 42, and 42 bits (6 bytes) of field.
  EXPECT_EQ(BucketKey(Relation::kSample, v, 22), "{m0048d1}");
  EXPECT_EQ(ValueField(v, 22), std::string("\x01\x67\x89\xab\xcd\xef", 6));
  EXPECT_EQ(FingerprintBucketKey(Relation::kIdentical, v, 24), "{i012345}");
  EXPECT_EQ(FingerprintField(v, 0x1122334455667788ull, 24),
            std::string("\x67\x89\xab\xcd\xef\x11\x22\x33\x44\x55\x66\x77\x88", 13));
  // Bucket and field together hold the whole value.
  for (const int bits : {8, 20, 24, 29, 40}) {
    const std::string field = ValueField(~uint64_t{0}, bits);
    EXPECT_EQ(field.size(), static_cast<size_t>((64 - bits + 7) / 8)) << bits;
  }
}

Reply StringReply(std::string s) {
  Reply r;
  r.type = Reply::Type::kString;
  r.str = std::move(s);
  return r;
}

TEST(LayoutTest, ParsePostingList) {
  const Reply r = StringReply("17,42,9000000000");
  auto ids = ParsePostingList(r);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<uint64_t>{17, 42, 9000000000ull}));
  auto none = ParsePostingList(Reply{});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  for (const char* bad : {"", "1,,2", "1,x", "0", "1,"}) {
    auto b = ParsePostingList(StringReply(bad));
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().code(), StatusCode::kDataLoss);
  }
}

class LayoutClusterTest : public testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    client_ = NewClient();
    ASSERT_NE(client_, nullptr);
    const Status loaded = LoadPostingScripts(*client_, &add_sha_, &get_sha_);
    ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  }

  std::vector<uint64_t> List(uint64_t value) {
    auto r = client_->Run(GetPostingCommand(get_sha_, Relation::kFeature, value, kBits));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    auto ids = ParsePostingList(*r);
    EXPECT_TRUE(ids.ok()) << ids.status().ToString();
    return ids.ok() ? *ids : std::vector<uint64_t>{};
  }

  static constexpr int kBits = 16;
  std::unique_ptr<ClusterClient> client_;
  std::string add_sha_;
  std::string get_sha_;
};

TEST_F(LayoutClusterTest, PostingsAppendOnceAndSpillLongListsToTheirOwnKey) {
  const uint64_t v = 0xabcd000000000001ull;
  const uint64_t neighbour = 0xabcd000000000002ull;  // same bucket
  ASSERT_EQ(BucketKey(Relation::kFeature, v, kBits),
            BucketKey(Relation::kFeature, neighbour, kBits));
  EXPECT_TRUE(List(v).empty());
  std::vector<Command> adds;
  std::vector<uint64_t> expected;
  for (uint64_t doc = 1000000; doc < 1000020; ++doc) {
    adds.push_back(AddPostingCommand(add_sha_, Relation::kFeature, v, doc, kBits));
    adds.push_back(AddPostingCommand(add_sha_, Relation::kFeature, v, doc, kBits));  // resent
    expected.push_back(doc);
  }
  adds.push_back(AddPostingCommand(add_sha_, Relation::kFeature, neighbour, 7, kBits));
  auto replies = client_->Pipeline(adds);
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  for (size_t i = 0; i + 1 < replies->size(); i += 2) {
    EXPECT_EQ((*replies)[i].integer, 1) << i;
    EXPECT_EQ((*replies)[i + 1].integer, 0) << i;
  }
  EXPECT_EQ(List(v), expected);
  EXPECT_EQ(List(neighbour), std::vector<uint64_t>{7});
  // 20 ids of 7 digits are 159 bytes: the list left the bucket for a key of its own, with the
  // bucket's hash tag, and the bucket stays a small listpack.
  const std::string bucket = BucketKey(Relation::kFeature, v, kBits);
  auto field = client_->Run(Command{.args = {"HGET", bucket, ValueField(v, kBits)}});
  ASSERT_TRUE(field.ok());
  EXPECT_EQ(field->str, "*");
  auto spilled = client_->Run(Command{.args = {"STRLEN", bucket + ValueField(v, kBits)}});
  ASSERT_TRUE(spilled.ok());
  EXPECT_EQ(spilled->integer, 20 * 8 - 1);
  auto encoding = client_->Run(Command{.args = {"OBJECT", "ENCODING", bucket}, .key_index = 2});
  ASSERT_TRUE(encoding.ok());
  EXPECT_EQ(encoding->str, "listpack");
}

TEST_F(LayoutClusterTest, AFingerprintIsClaimedOnce) {
  const uint64_t high = 0x1111222233334444ull;
  const uint64_t low = 0x5555666677778888ull;
  auto replies = client_->Pipeline({ClaimFingerprintCommand(Relation::kIdentical, high, low, 5, 20),
                                    ClaimFingerprintCommand(Relation::kIdentical, high, low, 6, 20),
                                    ClaimedByCommand(Relation::kIdentical, high, low, 20),
                                    ClaimedByCommand(Relation::kLexical, high, low, 20)});
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  EXPECT_EQ((*replies)[0].integer, 1);
  EXPECT_EQ((*replies)[1].integer, 0);
  EXPECT_EQ((*replies)[2].str, "5");
  EXPECT_TRUE((*replies)[3].is_nil());
}

// A node that lost its script cache (SCRIPT FLUSH here; a restart or a promoted replica in
// production) answers NOSCRIPT: the client sends the command again as EVAL with the script's
// text, and the posting lands once. A script not loaded through the client still fails.
TEST_F(LayoutClusterTest, NoscriptAfterALostScriptCacheIsAnsweredByResendingTheScript) {
  const uint64_t v = 0x5555000000000001ull;
  ASSERT_TRUE(client_->Run(AddPostingCommand(add_sha_, Relation::kFeature, v, 1, kBits)).ok());
  auto flushed = client_->RunOnMasters({"SCRIPT", "FLUSH"});
  ASSERT_TRUE(flushed.ok()) << flushed.status().ToString();
  std::vector<Command> adds;
  for (uint64_t doc = 2; doc <= 4; ++doc) {
    adds.push_back(AddPostingCommand(add_sha_, Relation::kFeature, v, doc, kBits));
  }
  auto replies = client_->Pipeline(adds);
  ASSERT_TRUE(replies.ok()) << replies.status().ToString();
  for (const Reply& r : *replies) EXPECT_EQ(r.integer, 1);
  EXPECT_EQ(client_->stats().noscript_resends, 3u);
  EXPECT_EQ(List(v), (std::vector<uint64_t>{1, 2, 3, 4}));  // the read script: resent once
  EXPECT_EQ(client_->stats().noscript_resends, 4u);
  // The EVAL loaded it again: the next EVALSHA is answered directly.
  ASSERT_TRUE(client_->Run(AddPostingCommand(add_sha_, Relation::kFeature, v, 5, kBits)).ok());
  EXPECT_EQ(client_->stats().noscript_resends, 4u);
  const std::string unknown(40, 'a');
  auto bad = client_->Run(AddPostingCommand(unknown, Relation::kFeature, v, 6, kBits));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("NOSCRIPT"), std::string::npos) << bad.status().ToString();
}

}  // namespace
}  // namespace shingled::redis
