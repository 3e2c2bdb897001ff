// What the API reads from a client (daemon/wire/request_parse.h), called directly; serve_test
// covers the same through HTTP. Regression tests for what request_parse_fuzz found are named after
// it.
#include "daemon/wire/request_parse.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <utility>

#include "daemon/wire/http_query.h"

namespace shingled::daemon {
namespace {

constexpr int64_t kNow = 1714564800;  // 2024-05-01T12:00:00Z

Target T(std::string_view target) {
  StatusOr<Target> t = ParseTarget(target);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Target{};
}

TEST(RequestParseTest, IsoDates) {
  EXPECT_EQ(*ParseIsoTime("2024-05-01"), 1714521600);
  EXPECT_EQ(*ParseIsoTime("2024-05-01T12:00:00Z"), kNow);
  EXPECT_EQ(*ParseIsoTime("2024-05-01T12:00Z"), kNow);
  EXPECT_EQ(*ParseIsoTime("2024-05-01T14:00:00.250+02:00"), kNow);
  EXPECT_EQ(*ParseIsoTime("2024-05-01t07:30:00-04:30"), kNow);
  EXPECT_EQ(FormatIsoTime(kNow), "2024-05-01T12:00:00Z");
  for (const char* bad :
       {"", "2024", "2024-05-01T12:00:00", "2024-02-30", "2024-13-01", "2024-05-01T24:00:00Z",
        "2024-05-01T12:00:00.Z", "2024-05-01X", "2024-05-01T12:00:00Z junk"}) {
    StatusOr<int64_t> t = ParseIsoTime(bad);
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

// Found by request_parse_fuzz: "0224-04-01T13:00:00Z" printed as "224-04-01T13:00:00Z" (strftime's
// %Y does not pad), which ParseIsoTime refuses. Every date it accepts now prints back to itself.
TEST(RequestParseTest, FormatIsoTimePadsTheYearToFourDigits) {
  StatusOr<int64_t> t = ParseIsoTime("0224-04-01T13:00:00Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(FormatIsoTime(*t), "0224-04-01T13:00:00Z");
  EXPECT_EQ(FormatIsoTime(-62167219200), "0000-01-01T00:00:00Z");
  EXPECT_EQ(FormatIsoTime(253402300799), "9999-12-31T23:59:59Z");
  for (int64_t date :
       {int64_t{-62167219200}, int64_t{-30610224001}, int64_t{0}, kNow, int64_t{253402300799}}) {
    StatusOr<int64_t> back = ParseIsoTime(FormatIsoTime(date));
    ASSERT_TRUE(back.ok()) << FormatIsoTime(date);
    EXPECT_EQ(*back, date);
  }
}

// Dates that gmtime cannot represent (a year past an int) printed as "1900-01-00T00:00:00Z"; every
// int64 now prints as its proleptic Gregorian date, with a signed year outside 0000-9999.
TEST(RequestParseTest, FormatIsoTimePrintsEveryInt64) {
  EXPECT_EQ(FormatIsoTime(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatIsoTime(951782400), "2000-02-29T00:00:00Z");
  EXPECT_EQ(FormatIsoTime(-62167219201), "-0001-12-31T23:59:59Z");
  EXPECT_EQ(FormatIsoTime(253402300800), "+10000-01-01T00:00:00Z");
  EXPECT_EQ(FormatIsoTime(INT64_MAX), "+292277026596-12-04T15:30:07Z");
  EXPECT_EQ(FormatIsoTime(INT64_MIN), "-292277022657-01-27T08:29:52Z");
  // Against gmtime_r wherever it works: every day of 1600-2400 at a second that varies.
  for (int64_t t = -11676096000; t < 13569465600; t += 86400 + 3607) {
    const time_t tt = static_cast<time_t>(t);
    std::tm tm{};
    ASSERT_NE(gmtime_r(&tt, &tm), nullptr);
    char want[96];
    std::snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    ASSERT_EQ(FormatIsoTime(t), want) << t;
  }
}

// file: URLs were kept as given, so a query had to spell one as `shingled ingest` stored it
// (percent-encoded, dot segments resolved); they are now normalized as http(s) URLs are.
TEST(RequestParseTest, FileUrlsAreNormalized) {
  const std::pair<const char*, const char*> cases[] = {
      {"file:///tmp/caf\xc3\xa9.html", "file:///tmp/caf%C3%A9.html"},
      {"FILE:///tmp/caf%c3%a9.html", "file:///tmp/caf%C3%A9.html"},
      {"file:///tmp/%7Euser/./a/../b%2Fc.html#part", "file:///tmp/~user/b%2Fc.html"},
      {"file:///tmp/%2E%2E/x", "file:///x"},
      {"file://HostName/share/x?A%7e", "file://hostname/share/x?A~"},
      {"file://", "file:///"},
      {"file:///tmp/100%", "file:///tmp/100%25"},
  };
  for (const auto& [given, want] : cases) {
    StatusOr<std::string> url = PageUrl(given, 1000);
    ASSERT_TRUE(url.ok()) << given << ": " << url.status().ToString();
    EXPECT_EQ(*url, want) << given;
    EXPECT_EQ(*PageUrl(*url, 1000), *url) << given;  // a fixed point
  }
  // The limit holds for the normalized form: 3 raw bytes become 9.
  EXPECT_EQ(PageUrl("file:///\xc3\xa9\xc3", 16).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(PageUrl("file:///\xc3\xa9\xc3", 17).ok());
}

// A zone offset is at most 23:59 (ISO 8601); "+99:99" was taken as 100 hours 39 minutes.
TEST(RequestParseTest, ZoneOffsetsBeyondADayAreRefused) {
  EXPECT_EQ(*ParseIsoTime("2024-05-02T11:59:00+23:59"), kNow);
  for (const char* bad :
       {"2024-05-01T12:00:00+24:00", "2024-05-01T12:00:00-99:99", "2024-05-01T12:00:00+01:60"}) {
    EXPECT_EQ(ParseIsoTime(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(RequestParseTest, EveryIntegerIsReadAndRefusedAlike) {
  EXPECT_EQ(*ParseInteger("limit", "7", 1, 10), 7u);
  EXPECT_EQ(*ParseInteger("limit", std::optional<std::string>(), 5, 1, 10), 5u);
  EXPECT_EQ(*ParseInteger("after", "18446744073709551615", 0, UINT64_MAX), UINT64_MAX);
  for (const char* bad : {"", "0", "11", "-1", "+3", " 3", "3 ", "0x3", "18446744073709551616"}) {
    StatusOr<uint64_t> v = ParseInteger("limit", bad, 1, 10);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(v.status().message(),
              "limit \"" + std::string(bad) + "\" is not an integer in 1..10");
  }
  // The text quoted is cut to 40 bytes.
  const std::string long_text(100, '9');
  EXPECT_EQ(ParseInteger("limit", long_text, 1, 10).status().message(),
            "limit \"" + long_text.substr(0, 40) + "\" is not an integer in 1..10");
  EXPECT_EQ(ParseId("0", "cluster").status().message(),
            "cluster id \"0\" is not an integer in 1..18446744073709551615");
}

TEST(RequestParseTest, StatusesIdsAndQueryOptions) {
  EXPECT_EQ(*ParseHttpStatus("404"), 404);
  for (const char* bad : {"", "99", "600", "2OO", " 200", "200 ", "99999999999"}) {
    EXPECT_FALSE(ParseHttpStatus(bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseId("18446744073709551615", "document"), UINT64_MAX);
  for (const char* bad : {"", "0", "-1", "18446744073709551616", "1x"}) {
    EXPECT_FALSE(ParseId(bad, "document").ok()) << bad;
  }
  StatusOr<store::QueryOptions> q = ParseQueryOptions(T("/v1/similar?threshold=0.3&limit=10"));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->threshold, 0.3);
  EXPECT_EQ(q->limit, 10u);
  q = ParseQueryOptions(T("/v1/similar"));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->threshold, store::QueryOptions{}.threshold);
  EXPECT_EQ(q->limit, store::QueryOptions{}.limit);
  for (const char* bad : {"/v1/similar?threshold=1.5", "/v1/similar?threshold=nan",
                          "/v1/similar?threshold=", "/v1/similar?limit=0", "/v1/similar?limit=1001",
                          "/v1/similar?limit=5x", "/v1/similar?threshold=0.5%00x"}) {
    EXPECT_EQ(ParseQueryOptions(T(bad)).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(RequestParseTest, PageTarget) {
  StatusOr<PagePost> p = ParsePageTarget(
      T("/v1/pages?url=https%3A%2F%2Fe.com%2Fa&status=410&fetched_at=2024-05-01T12:00:00Z"), "s0",
      4096, 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->url, "https://e.com/a");
  EXPECT_EQ(p->http_status, 410);
  EXPECT_EQ(p->date, kNow);
  EXPECT_EQ(p->sweep, "s0");
  p = ParsePageTarget(T("/v1/pages?url=https://e.com/&sweep=s1"), "s0", 4096, kNow);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->http_status, 200);
  EXPECT_EQ(p->date, kNow);
  EXPECT_EQ(p->sweep, "s1");
  EXPECT_FALSE(ParsePageTarget(T("/v1/pages"), "s0", 4096, kNow).ok());
  EXPECT_FALSE(ParsePageTarget(T("/v1/pages?url=e.com"), "s0", 4096, kNow).ok());
  EXPECT_FALSE(ParsePageTarget(T("/v1/pages?url=https://e.com/"), "s0", 10, kNow).ok());
  StatusOr<PagePost> bad_date =
      ParsePageTarget(T("/v1/pages?url=https://e.com/&fetched_at=yesterday"), "s0", 4096, kNow);
  ASSERT_FALSE(bad_date.ok());
  EXPECT_NE(bad_date.status().message().find("fetched_at"), std::string::npos);
}

TEST(RequestParseTest, BatchLines) {
  StatusOr<PagePost> p = ParseBatchLine(
      R"({"url": "https://e.com/x", "content": "<p>hi</p>", "content_type": "text/html",)"
      R"( "fetched_at": "2024-05-01T12:00:00Z", "sweep": null})",
      "s0", 4096, 1);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->url, "https://e.com/x");
  EXPECT_EQ(p->body, "<p>hi</p>");
  EXPECT_EQ(p->content_type, "text/html");
  EXPECT_EQ(p->date, kNow);
  EXPECT_EQ(p->sweep, "s0");
  p = ParseBatchLine(R"({"url": "https://e.com/dead", "status": 404, "sweep": "s1"})", "s0", 4096,
                     kNow);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->http_status, 404);
  EXPECT_TRUE(p->body.empty());
  EXPECT_EQ(p->sweep, "s1");
  for (const char* bad :
       {"", "[]", "{", R"({"content": "x"})", R"({"url": 5, "content": "x"})",
        R"({"url": "https://e.com/"})",
        R"({"url": "https://e.com/", "content": "x", "status": "200"})",
        R"({"url": "https://e.com/", "content": "x", "status": 1e3})",
        R"({"url": "https://e.com/", "content": "x", "status": 9223372036854775808})",
        R"({"url": "https://e.com/", "content": "x", "fetched_at": "May"})"}) {
    EXPECT_EQ(ParseBatchLine(bad, "s0", 4096, kNow).status().code(), StatusCode::kInvalidArgument)
        << bad;
  }
}

// A redirect names its target (`location`, resolved against the page's URL and
// normalized); no other status takes one. Content needs a body; other statuses do not.
TEST(RequestParseTest, RedirectLocations) {
  StatusOr<PagePost> p = ParsePageTarget(
      T("/v1/pages?url=https://e.com/d/old&status=301&location=..%2FNew%257e%3Fq%23f"), "s0", 4096,
      kNow);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->redirect_target, "https://e.com/New~?q");
  p = ParsePageTarget(T("/v1/pages?url=https://e.com/&status=308&location=HTTP://X.Example:80/"),
                      "s0", 4096, kNow);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->redirect_target, "http://x.example/");
  p = ParsePageTarget(T("/v1/pages?url=https://e.com/&status=503"), "s0", 4096, kNow);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->redirect_target, "");
  for (const char* bad :
       {"/v1/pages?url=https://e.com/&status=301", "/v1/pages?url=https://e.com/&location=/x",
        "/v1/pages?url=https://e.com/&status=500&location=/x",
        "/v1/pages?url=https://e.com/&status=302&location=",
        "/v1/pages?url=https://e.com/&status=302&location=mailto:a@b",
        "/v1/pages?url=https://e.com/&status=302&location=%2Fa%0Ab"}) {
    EXPECT_EQ(ParsePageTarget(T(bad), "s0", 4096, kNow).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
  // Over the URL limit once resolved.
  EXPECT_FALSE(ParsePageTarget(
                   T("/v1/pages?url=https://e.com/&status=301&location=/" + std::string(100, 'a')),
                   "s0", 60, kNow)
                   .ok());

  p = ParseBatchLine(R"({"url": "https://e.com/a/b", "status": 302, "location": "c"})", "s0", 4096,
                     kNow);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->redirect_target, "https://e.com/a/c");
  p = ParseBatchLine(R"({"url": "https://e.com/", "status": 500, "location": null})", "s0", 4096,
                     kNow);
  ASSERT_TRUE(p.ok()) << p.status().ToString();  // no content needed
  for (const char* bad : {R"({"url": "https://e.com/", "status": 301})",
                          R"({"url": "https://e.com/", "status": 301, "location": 5})",
                          R"({"url": "https://e.com/", "content": "x", "location": "/y"})"}) {
    EXPECT_EQ(ParseBatchLine(bad, "s0", 4096, kNow).status().code(), StatusCode::kInvalidArgument)
        << bad;
  }
}

// A batch line was parsed into a DOM whatever it held, so one line of
// "[[[[..." nested as deep as the body was long, and a line of many small values cost tens of
// bytes per value. A line is one flat object with known keys, checked while it is read.
TEST(RequestParseTest, BatchLineDepthAndMemoryAreBounded) {
  const std::string deep =
      "{\"url\": \"https://e.com/\", \"content\": " + std::string(100000, '[') +
      std::string(100000, ']') + "}";
  StatusOr<PagePost> p = ParseBatchLine(deep, "s0", 4096, kNow);
  ASSERT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "\"content\" is an array: a batch line is one JSON object nested at most 1 level deep, "
            "whose values are strings, integers or null");
  p = ParseBatchLine(R"({"url": "https://e.com/", "content": {"a": 1}})", "s0", 4096, kNow);
  ASSERT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("\"content\" is an object"), std::string::npos)
      << p.status().message();
  // An unclosed nest fails at the nesting, not at the end of the line.
  p = ParseBatchLine("{\"url\": " + std::string(1 << 20, '['), "s0", 4096, kNow);
  EXPECT_NE(p.status().message().find("nested at most 1 level"), std::string::npos)
      << p.status().message();
  // A top-level array, however long, is not a line.
  p = ParseBatchLine("[" + std::string(1 << 20, '1').insert(1, ",") + "]", "s0", 4096, kNow);
  EXPECT_EQ(p.status().message(), "invalid JSON object");
  // Many members: the first unknown key stops the parse (memory stays at the line's bytes).
  std::string many = "{\"url\": \"https://e.com/\", \"content\": \"x\"";
  for (int i = 0; i < 100000; ++i) many += ", \"k" + std::to_string(i) + "\": 1";
  many += "}";
  p = ParseBatchLine(many, "s0", 4096, kNow);
  EXPECT_EQ(p.status().message(),
            "unknown key \"k0\" in the body; it takes url, content, content_type, fetched_at, "
            "sweep, status, location");
  // A syntax error says where.
  p = ParseBatchLine(R"({"url": "https://e.com/", "content": x})", "s0", 4096, kNow);
  EXPECT_NE(p.status().message().find("invalid JSON object (at byte"), std::string::npos)
      << p.status().message();
  // Trailing bytes after the object are not ignored.
  EXPECT_FALSE(
      ParseBatchLine(R"({"url": "https://e.com/", "content": "x"} {})", "s0", 4096, kNow).ok());
  // Duplicate keys: the last one wins, as with a DOM parse.
  p = ParseBatchLine(R"({"url": "https://e.com/a", "url": "https://e.com/b", "content": "x"})",
                     "s0", 4096, kNow);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->url, "https://e.com/b");
}

TEST(RequestParseTest, UnknownMembersAreRefused) {
  StatusOr<PagePost> p =
      ParseBatchLine(R"({"url": "https://e.com/", "content": "x", "strat": 1})", "s0", 4096, kNow);
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            "unknown key \"strat\" in the body; it takes url, content, content_type, fetched_at, "
            "sweep, status, location");
  const Json body = Json::parse(R"({"name": "s", "strat": "2024-05-01"})");
  EXPECT_EQ(CheckMembers(body, {"name", "start"}).message(),
            "unknown key \"strat\" in the body; it takes name, start");
  EXPECT_EQ(CheckMembers(body, {}).message(), "unknown key \"name\" in the body; it takes none");
  EXPECT_TRUE(CheckMembers(body, {"name", "strat"}).ok());
  EXPECT_TRUE(CheckMembers(Json::object(), {}).ok());
}

TEST(RequestParseTest, ObjectBodiesAndDateMembers) {
  StatusOr<Json> empty = ParseObjectBody("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*DateMember(*empty, "start", kNow), kNow);
  StatusOr<Json> body = ParseObjectBody(R"({"name": "s", "start": "2024-05-01", "end": 5})");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(*DateMember(*body, "start", 0), 1714521600);
  EXPECT_EQ(DateMember(*body, "end", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseObjectBody("[1]").ok());
  EXPECT_FALSE(ParseObjectBody("{\"a\": }").ok());
  // Deep nesting is refused or parsed without exhausting the stack.
  EXPECT_FALSE(ParseObjectBody(std::string(100000, '[')).ok());
}

}  // namespace
}  // namespace shingled::daemon
