#include "crawler/robots.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace shingled::crawler {
namespace {

// RFC 9309 section 5.1.
constexpr std::string_view kRfcSimpleExample =
    "User-Agent: *\n"
    "Disallow: *.gif$\n"
    "Disallow: /example/\n"
    "Allow: /publications/\n"
    "\n"
    "User-Agent: foobot\n"
    "Disallow:/\n"
    "Allow:/example/page.html\n"
    "Allow:/example/allowed.gif\n"
    "\n"
    "User-Agent: barbot\n"
    "User-Agent: bazbot\n"
    "Disallow: /example/page.html\n"
    "\n"
    "User-Agent: quxbot\n"
    "\n"
    "EOF\n";

TEST(RobotsTest, Rfc9309SimpleExampleFoobot) {
  const RobotsRules r = RobotsRules::Parse(kRfcSimpleExample, "foobot");
  EXPECT_TRUE(r.IsAllowed("/example/page.html"));
  EXPECT_TRUE(r.IsAllowed("/example/allowed.gif"));
  EXPECT_FALSE(r.IsAllowed("/example/other.html"));
  EXPECT_FALSE(r.IsAllowed("/"));
  EXPECT_FALSE(r.IsAllowed("/publications/"));  // foobot's own group has no such allow
}

TEST(RobotsTest, Rfc9309SimpleExampleBarbotAndBazbotShareAGroup) {
  for (const char* bot : {"barbot", "BazBot"}) {
    const RobotsRules r = RobotsRules::Parse(kRfcSimpleExample, bot);
    EXPECT_FALSE(r.IsAllowed("/example/page.html")) << bot;
    EXPECT_TRUE(r.IsAllowed("/example/other.html")) << bot;
    EXPECT_TRUE(r.IsAllowed("/x.gif")) << bot;  // the "*" group does not apply to them
  }
}

TEST(RobotsTest, Rfc9309SimpleExampleQuxbotHasAnEmptyGroup) {
  const RobotsRules r = RobotsRules::Parse(kRfcSimpleExample, "quxbot");
  EXPECT_TRUE(r.IsAllowed("/example/page.html"));
  EXPECT_TRUE(r.IsAllowed("/a.gif"));
}

TEST(RobotsTest, Rfc9309SimpleExampleOtherBotsUseTheStarGroup) {
  const RobotsRules r = RobotsRules::Parse(kRfcSimpleExample, "shingled");
  EXPECT_FALSE(r.IsAllowed("/images/cat.gif"));
  EXPECT_TRUE(r.IsAllowed("/images/cat.gif?x"));  // '$' anchors at the end
  EXPECT_FALSE(r.IsAllowed("/example/"));
  EXPECT_FALSE(r.IsAllowed("/example/x"));
  EXPECT_TRUE(r.IsAllowed("/publications/"));
  EXPECT_TRUE(r.IsAllowed("/"));
}

// RFC 9309 section 5.2.
TEST(RobotsTest, Rfc9309LongestMatch) {
  const RobotsRules r = RobotsRules::Parse(
      "User-Agent: foobot\n"
      "Allow: /example/page/\n"
      "Disallow: /example/page/disallowed.gif\n",
      "foobot");
  EXPECT_TRUE(r.IsAllowed("/example/page/"));
  EXPECT_TRUE(r.IsAllowed("/example/page/other.gif"));
  EXPECT_FALSE(r.IsAllowed("/example/page/disallowed.gif"));
}

TEST(RobotsTest, AllowWinsTies) {
  const RobotsRules r = RobotsRules::Parse(
      "user-agent: *\ndisallow: /page\nallow: /page\ndisallow: /x*\nallow: /x$\n", "bot");
  EXPECT_TRUE(r.IsAllowed("/page"));
  EXPECT_TRUE(r.IsAllowed("/x"));
  EXPECT_FALSE(r.IsAllowed("/xy"));
}

// RFC 9309 section 2.2.1: groups for the same user-agent are merged; matching ignores case.
TEST(RobotsTest, Rfc9309MergesGroupsAndIgnoresCase) {
  const RobotsRules r = RobotsRules::Parse(
      "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\n"
      "user-agent: ExampleBot\ndisallow: /baz\n",
      "examplebot");
  EXPECT_FALSE(r.IsAllowed("/foo"));
  EXPECT_FALSE(r.IsAllowed("/bar"));
  EXPECT_FALSE(r.IsAllowed("/baz"));
  EXPECT_TRUE(r.IsAllowed("/qux"));
  // A version after the product token does not stop the match.
  EXPECT_FALSE(RobotsRules::Parse("User-agent: examplebot/1.2\nDisallow: /\n", "ExampleBot")
                   .IsAllowed("/a"));
}

// RFC 9309 section 2.2.2: percent-encoding equivalence.
TEST(RobotsTest, Rfc9309PercentEncoding) {
  const RobotsRules r = RobotsRules::Parse(
      "user-agent: *\n"
      "disallow: /foo/bar?baz=quz\n"
      "disallow: /foo/bar/ツ\n"
      "disallow: /a/%E3%83%84\n"
      "disallow: /foo/bar/%62%61%7A\n"
      "disallow: /%7euser\n",
      "bot");
  EXPECT_FALSE(r.IsAllowed("/foo/bar?baz=quz"));
  EXPECT_FALSE(r.IsAllowed("/foo/bar/%E3%83%84"));
  EXPECT_FALSE(r.IsAllowed("/foo/bar/%e3%83%84"));
  EXPECT_FALSE(r.IsAllowed("/a/ツ"));
  EXPECT_FALSE(r.IsAllowed("/foo/bar/baz"));
  EXPECT_FALSE(r.IsAllowed("/~user/page"));
  EXPECT_TRUE(r.IsAllowed("/foo/bar/qux"));
}

// RFC 9309 section 2.2.3: special characters.
TEST(RobotsTest, Rfc9309SpecialCharacters) {
  const RobotsRules r = RobotsRules::Parse(
      "User-agent: *\n"
      "Disallow: /path/file-with-a-#-in-it   # a comment\n"
      "Allow: /this/path/exactly$\n"
      "Disallow: /this/path/\n"
      "Disallow: /a/*/b\n",
      "bot");
  EXPECT_FALSE(r.IsAllowed("/path/file-with-a-"));
  EXPECT_TRUE(r.IsAllowed("/this/path/exactly"));
  EXPECT_FALSE(r.IsAllowed("/this/path/exactly/not"));
  EXPECT_FALSE(r.IsAllowed("/a/x/y/b"));
  EXPECT_TRUE(r.IsAllowed("/a/b"));
}

TEST(RobotsTest, RobotsTxtItselfIsAlwaysAllowed) {
  EXPECT_TRUE(RobotsRules::DisallowAll().IsAllowed("/robots.txt"));
  EXPECT_FALSE(RobotsRules::DisallowAll().IsAllowed("/"));
}

TEST(RobotsTest, CrawlDelay) {
  const RobotsRules r = RobotsRules::Parse(
      "User-agent: other\nCrawl-delay: 30\n\nUser-agent: *\nCrawl-delay: 2.5\nDisallow: /x\n",
      "bot");
  ASSERT_TRUE(r.crawl_delay_seconds().has_value());
  EXPECT_DOUBLE_EQ(*r.crawl_delay_seconds(), 2.5);
  EXPECT_FALSE(r.IsAllowed("/x"));
  EXPECT_FALSE(RobotsRules::Parse("User-agent: *\nCrawl-delay: soon\n", "bot")
                   .crawl_delay_seconds()
                   .has_value());
  EXPECT_FALSE(RobotsRules::Parse("User-agent: *\nCrawl-delay: -1\n", "bot")
                   .crawl_delay_seconds()
                   .has_value());
}

// A sitemap line between user-agent lines does not split the group.
TEST(RobotsTest, OtherRecordsDoNotEndAGroup) {
  const RobotsRules r = RobotsRules::Parse(
      "User-agent: a\nSitemap: http://x/s.xml\nUser-agent: bot\nDisallow: /p\n", "bot");
  EXPECT_FALSE(r.IsAllowed("/p"));
}

TEST(RobotsTest, FetchOutcomes) {
  const RobotsRules ok = RobotsRules::FromFetch(200, "User-agent: *\nDisallow: /p\n", "bot");
  EXPECT_FALSE(ok.IsAllowed("/p"));
  for (int status : {400, 401, 403, 404, 410}) {
    EXPECT_TRUE(
        RobotsRules::FromFetch(status, "User-agent: *\nDisallow: /\n", "bot").IsAllowed("/p"))
        << status;
  }
  for (int status : {0, 429, 500, 502, 503}) {
    const RobotsRules r = RobotsRules::FromFetch(status, "", "bot");
    EXPECT_FALSE(r.IsAllowed("/p")) << status;
    EXPECT_TRUE(r.disallow_all()) << status;
  }
}

TEST(RobotsTest, MalformedLinesAreIgnored) {
  const RobotsRules r = RobotsRules::Parse(
      "\xEF\xBB\xBFuser-agent: *\r\n"
      "this line has no colon\r"
      "Disallow /nocolon\n"
      ":\n"
      "Dissallow: /typo\n"
      "disallow:\n"  // empty: no rule
      "unknown-key: /x\n"
      "Allow: relative\n",
      "bot");
  EXPECT_FALSE(r.IsAllowed("/typo"));
  EXPECT_TRUE(r.IsAllowed("/nocolon"));
  EXPECT_TRUE(r.IsAllowed("/x"));
  EXPECT_EQ(r.rule_count(), 2u);
}

TEST(RobotsTest, RulesBeforeAnyUserAgentAreIgnored) {
  EXPECT_TRUE(RobotsRules::Parse("Disallow: /\n", "bot").IsAllowed("/a"));
}

TEST(RobotsTest, HugeFileIsCutAtTheParseLimit) {
  std::string text = "User-agent: *\n";
  while (text.size() < kRobotsParseLimit - 100) text += "Disallow: /filler/path/segment\n";
  text += "Disallow: /early\n";
  while (text.size() < kRobotsParseLimit + 1000) text += "# padding padding padding\n";
  text += "Disallow: /late\n";
  const RobotsRules r = RobotsRules::Parse(text, "bot");
  EXPECT_TRUE(r.truncated());
  EXPECT_FALSE(r.IsAllowed("/early"));
  EXPECT_TRUE(r.IsAllowed("/late"));
}

TEST(RobotsTest, BinaryJunkDoesNotCrash) {
  std::mt19937 rng(42);  // fixed seed: the same junk every run
  for (int round = 0; round < 200; ++round) {
    std::string junk(1 + rng() % 4096, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    if (round % 2) junk.insert(0, "User-agent: *\nDisallow: /");
    const RobotsRules r = RobotsRules::Parse(junk, "bot");
    EXPECT_TRUE(r.IsAllowed("/robots.txt"));
    (void)r.IsAllowed("/some/path?q");  // any answer; it must just not crash
  }
}

// Hostile patterns must not take exponential time (the matcher backtracks only to the last '*').
TEST(RobotsTest, ManyStarsAreLinear) {
  std::string pattern = "/";
  for (int i = 0; i < 2000; ++i) pattern += "*a";
  pattern += "b";
  const RobotsRules r = RobotsRules::Parse("User-agent: *\nDisallow: " + pattern + "\n", "bot");
  EXPECT_TRUE(r.IsAllowed("/" + std::string(4000, 'a')));
}

}  // namespace
}  // namespace shingled::crawler
