// What a takedown names (daemon/wire/forget_request.h), called directly: the scope from the API's
// body or the command line's flags, normalized as other requests normalize theirs, and every way
// a body can be wrong. forget_serve_test covers the same through HTTP.
#include "daemon/wire/forget_request.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace shingled::daemon {
namespace {

constexpr int64_t kNow = 1714564800;  // 2024-05-01T12:00:00Z
constexpr size_t kMaxUrlBytes = 4096;

using store::ForgetScope;

std::string ErrorOf(std::string_view body) {
  StatusOr<store::ForgetOptions> o = ParseForgetBody(body, kMaxUrlBytes, kNow);
  EXPECT_FALSE(o.ok()) << body;
  if (o.ok()) return "";
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument) << body;
  return o.status().message();
}

TEST(ForgetRequestTest, EachScopeIsNormalizedAsOtherRequestsAre) {
  StatusOr<store::ForgetOptions> o =
      ForgetScopeOf("HTTPS://Example.COM:443/a/./b#x", std::nullopt, std::nullopt, kMaxUrlBytes);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->scope, ForgetScope::kUrl);
  EXPECT_EQ(o->value, "https://example.com/a/b");

  o = ForgetScopeOf(std::nullopt, "Example.COM", std::nullopt, kMaxUrlBytes);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->scope, ForgetScope::kHost);
  EXPECT_EQ(o->value, "example.com");
  // A port stays; the default port of http (how a host is read, as a sweep's scope reads it) goes.
  EXPECT_EQ(ForgetScopeOf(std::nullopt, "example.com:8080", std::nullopt, kMaxUrlBytes)->value,
            "example.com:8080");
  EXPECT_EQ(ForgetScopeOf(std::nullopt, "example.com:80", std::nullopt, kMaxUrlBytes)->value,
            "example.com");

  o = ForgetScopeOf(std::nullopt, std::nullopt, "https://Example.com/docs/../a/", kMaxUrlBytes);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->scope, ForgetScope::kPrefix);
  EXPECT_EQ(o->value, "https://example.com/a/");
  // The rest at the store's defaults.
  EXPECT_FALSE(o->dry_run);
  EXPECT_EQ(o->max_urls, kDefaultForgetMaxUrls);
  EXPECT_EQ(o->list_limit, 0u);
}

TEST(ForgetRequestTest, OneScopeExactly) {
  EXPECT_EQ(
      ForgetScopeOf(std::nullopt, std::nullopt, std::nullopt, kMaxUrlBytes).status().message(),
      "give what to forget: one of url, host or prefix");
  EXPECT_EQ(ForgetScopeOf("https://e.com/", "e.com", std::nullopt, kMaxUrlBytes).status().message(),
            "give one of url, host or prefix, not url and host");
  EXPECT_EQ(
      ForgetScopeOf("https://e.com/", "e.com", "https://e.com/", kMaxUrlBytes).status().message(),
      "give one of url, host or prefix, not url and host and prefix");
}

TEST(ForgetRequestTest, ValuesThatAreNotWhatTheyShouldBe) {
  EXPECT_EQ(ForgetScopeOf(std::nullopt, "example.com/docs", std::nullopt, kMaxUrlBytes)
                .status()
                .message(),
            "host \"example.com/docs\" is not a host name or host:port");
  EXPECT_FALSE(ForgetScopeOf(std::nullopt, "", std::nullopt, kMaxUrlBytes).ok());
  EXPECT_FALSE(ForgetScopeOf(std::nullopt, "example.com:99999", std::nullopt, kMaxUrlBytes).ok());
  StatusOr<store::ForgetOptions> o =
      ForgetScopeOf("ftp://e.com/a", std::nullopt, std::nullopt, kMaxUrlBytes);
  ASSERT_FALSE(o.ok());
  EXPECT_TRUE(o.status().message().starts_with("url: ")) << o.status().message();
  EXPECT_FALSE(ForgetScopeOf("", std::nullopt, std::nullopt, kMaxUrlBytes).ok());
  // Over the URL limit (limits.max_url_bytes in the API).
  EXPECT_FALSE(
      ForgetScopeOf("https://e.com/" + std::string(100, 'a'), std::nullopt, std::nullopt, 64).ok());
  o = ForgetScopeOf(std::nullopt, std::nullopt, "not a prefix", kMaxUrlBytes);
  ASSERT_FALSE(o.ok());
  EXPECT_TRUE(o.status().message().starts_with("prefix: ")) << o.status().message();
}

TEST(ForgetRequestTest, Bodies) {
  StatusOr<store::ForgetOptions> o =
      ParseForgetBody(R"({"host": "Example.com", "dry_run": true, "list_limit": 5, "max_urls": 2})",
                      kMaxUrlBytes, kNow);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->scope, ForgetScope::kHost);
  EXPECT_EQ(o->value, "example.com");
  EXPECT_TRUE(o->dry_run);
  EXPECT_EQ(o->list_limit, 5u);
  EXPECT_EQ(o->max_urls, 2u);
  EXPECT_EQ(o->date, kNow);

  o = ParseForgetBody(R"({"url": "https://e.com/a", "dry_run": false, "list_limit": 1000,
                          "max_urls": 1000000})",
                      kMaxUrlBytes, kNow);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_FALSE(o->dry_run);
  EXPECT_EQ(o->list_limit, kMaxForgetListed);
  EXPECT_EQ(o->max_urls, kMaxForgetMaxUrls);
}

TEST(ForgetRequestTest, MalformedBodies) {
  EXPECT_EQ(ErrorOf(""), "give what to forget: one of url, host or prefix");
  EXPECT_EQ(ErrorOf("{}"), "give what to forget: one of url, host or prefix");
  EXPECT_EQ(ErrorOf("not json"), "the body is not a JSON object");
  EXPECT_EQ(ErrorOf(R"(["https://e.com/"])"), "the body is not a JSON object");
  EXPECT_EQ(ErrorOf(R"({"url": "https://e.com/", "prefix": "https://e.com/"})"),
            "give one of url, host or prefix, not url and prefix");
  EXPECT_EQ(ErrorOf(R"({"host": 5})"), "host must be a string");
  EXPECT_EQ(ErrorOf(R"({"url": null})"), "url must be a string");
  EXPECT_EQ(ErrorOf(R"({"prefix": ["https://e.com/"]})"), "prefix must be a string");
  EXPECT_EQ(ErrorOf(R"({"host": "e.com", "dry_run": "yes"})"), "dry_run must be true or false");
  EXPECT_EQ(ErrorOf(R"({"host": "e.com", "list_limit": 1001})"),
            "list_limit must be an integer in 0..1000");
  EXPECT_EQ(ErrorOf(R"({"host": "e.com", "list_limit": -1})"),
            "list_limit must be an integer in 0..1000");
  EXPECT_EQ(ErrorOf(R"({"host": "e.com", "list_limit": 2.5})"),
            "list_limit must be an integer in 0..1000");
  EXPECT_EQ(ErrorOf(R"({"host": "e.com", "max_urls": 0})"),
            "max_urls must be an integer in 1..1000000");
  EXPECT_EQ(ErrorOf(R"({"host": "e.com", "max_urls": "10"})"),
            "max_urls must be an integer in 1..1000000");
  EXPECT_EQ(ErrorOf(R"({"host": "e.com", "hosts": ["e.com"]})"),
            "unknown key \"hosts\" in the body; it takes url, host, prefix, dry_run, list_limit, "
            "max_urls");
}

}  // namespace
}  // namespace shingled::daemon
