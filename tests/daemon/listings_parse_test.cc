// The listings' parameters and cursors as pure functions (daemon/wire/listings.h): base64url round
// trips, cursors that one listing gives and another refuses, and the bounds of each parameter.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "daemon/wire/listings.h"

namespace shingled::daemon {
namespace {

TEST(ListingsParseTest, Base64UrlRoundTripsEveryLength) {
  std::mt19937 rng(31);  // fixed seed: the same bytes every run
  for (size_t n = 0; n < 64; ++n) {
    std::string bytes(n, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    const std::string text = EncodeBase64Url(bytes);
    EXPECT_EQ(
        text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
        std::string::npos);
    EXPECT_EQ(text.size(), (n * 4 + 2) / 3);
    StatusOr<std::string> back = DecodeBase64Url(text);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_EQ(*back, bytes);
  }
  EXPECT_EQ(EncodeBase64Url("uhttp://example.com/a"), "dWh0dHA6Ly9leGFtcGxlLmNvbS9h");
  EXPECT_FALSE(DecodeBase64Url("abcde").ok());  // a length no encoding has
  EXPECT_FALSE(DecodeBase64Url("ab+/").ok());   // base64, not base64url
  EXPECT_FALSE(DecodeBase64Url("ab=").ok());
  EXPECT_FALSE(DecodeBase64Url("AB").ok());  // stray bits: "AA" is the encoding of "\0"
  EXPECT_FALSE(DecodeBase64Url(std::string("A\0", 2)).ok());
}

TEST(ListingsParseTest, CursorsBelongToTheirListing) {
  const std::string clusters = ClusterCursorText({40, 12});
  StatusOr<store::ClusterListOptions> c = ParseClusterListing({{"after", clusters}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->after.has_value());
  EXPECT_EQ(c->after->size, 40u);
  EXPECT_EQ(c->after->id, 12u);
  EXPECT_FALSE(ParseIdenticalListing({{"after", clusters}}).ok());
  store::DocId after = 0;
  size_t limit = 0;
  EXPECT_FALSE(ParseMembersListing({{"after", clusters}}, &after, &limit).ok());
  ASSERT_TRUE(ParseMembersListing({{"after", MembersCursorText(77)}}, &after, &limit).ok());
  EXPECT_EQ(after, 77u);
  EXPECT_EQ(limit, kDefaultMembersLimit);
  StatusOr<store::IdenticalSetOptions> i =
      ParseIdenticalListing({{"after", IdenticalCursorText({5, 9})}, {"min_urls", "3"}});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->after->urls, 5u);
  EXPECT_EQ(i->after->representative, 9u);
  EXPECT_EQ(i->min_urls, 3u);
  // Not numbers where numbers go.
  EXPECT_FALSE(ParseClusterListing({{"after", EncodeBase64Url("c40")}}).ok());
  EXPECT_FALSE(ParseClusterListing({{"after", EncodeBase64Url("c40.x")}}).ok());
  EXPECT_FALSE(ParseClusterListing({{"after", ""}}).ok());
}

TEST(ListingsParseTest, Bounds) {
  for (const char* bad : {"0", "1001", "-1", "1e3", " 5", "5 ", ""}) {
    EXPECT_FALSE(ParseListLimit({{"limit", bad}}).ok()) << bad;
  }
  EXPECT_EQ(*ParseListLimit({{"limit", "1000"}}), 1000u);
  EXPECT_EQ(*ParseListLimit({}), kDefaultListLimit);
  EXPECT_FALSE(ParseClusterListing({{"min_size", "1"}}).ok());
  EXPECT_FALSE(ParseClusterListing({{"min_size", "18446744073709551616"}}).ok());
  EXPECT_EQ(ParseClusterListing({{"min_size", "18446744073709551615"}})->min_size, UINT64_MAX);
  EXPECT_EQ(ParseClusterListing({})->min_size, 2u);
}

}  // namespace
}  // namespace shingled::daemon
