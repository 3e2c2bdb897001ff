#include "crawler/links.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace shingled::crawler {
namespace {

using ::testing::ElementsAre;

TEST(LinksTest, FollowsAnchorsAreasFramesAndIframes) {
  const ExtractedLinks got = ExtractLinks(
      "<html><body><a href='a.html'>a</a><map><area href='/area'></map>"
      "<iframe src='frame/in.html'></iframe>"
      "<img src='img.png'><script src='x.js'></script></body></html>",
      "http://host.example/dir/page.html");
  EXPECT_THAT(got.links, ElementsAre("http://host.example/dir/a.html", "http://host.example/area",
                                     "http://host.example/dir/frame/in.html"));
  // A frameset document (a frameset inside a body is dropped by the HTML parser, as browsers do).
  const ExtractedLinks frames =
      ExtractLinks("<html><frameset><frame src='//other.example/f'></frameset></html>",
                   "http://host.example/dir/page.html");
  EXPECT_THAT(frames.links, ElementsAre("http://other.example/f"));
}

TEST(LinksTest, NormalizesFragmentsDotSegmentsAndDuplicates) {
  const ExtractedLinks got = ExtractLinks(
      "<a href='./x/../b.html#top'>1</a><a href='b.html'>2</a><a href='B.html'>3</a>"
      "<a href='#local'>self</a><a href='HTTP://HOST.example:80/dir/b.html'>4</a>",
      "http://host.example/dir/page.html");
  EXPECT_THAT(got.links,
              ElementsAre("http://host.example/dir/b.html", "http://host.example/dir/B.html",
                          "http://host.example/dir/page.html"));
}

TEST(LinksTest, BaseHrefAppliesToTheWholeDocument) {
  const ExtractedLinks got = ExtractLinks(
      "<head><base href='http://cdn.example/root/'><base href='/ignored/'></head>"
      "<a href='x'>x</a>",
      "http://host.example/a/b");
  EXPECT_EQ(got.base_url, "http://cdn.example/root/");
  EXPECT_THAT(got.links, ElementsAre("http://cdn.example/root/x"));
}

TEST(LinksTest, CanonicalIsSeparate) {
  const ExtractedLinks got = ExtractLinks(
      "<head><link rel='Canonical' href='/canon#x'><link rel='stylesheet' href='s.css'></head>"
      "<a href='/y'>y</a>",
      "http://host.example/a?utm=1");
  ASSERT_TRUE(got.canonical.has_value());
  EXPECT_EQ(*got.canonical, "http://host.example/canon");
  EXPECT_THAT(got.links, ElementsAre("http://host.example/y"));
}

TEST(LinksTest, NofollowLinksAreSkipped) {
  const ExtractedLinks got =
      ExtractLinks("<a href='/1' rel='external NoFollow'>1</a><a href='/2' rel='next'>2</a>",
                   "http://host.example/");
  EXPECT_THAT(got.links, ElementsAre("http://host.example/2"));
  EXPECT_EQ(got.nofollow_skipped, 1u);
}

TEST(LinksTest, MetaRobotsIsHonoured) {
  const ExtractedLinks nofollow = ExtractLinks(
      "<meta name='ROBOTS' content='noindex, nofollow'><a href='/1'>1</a>", "http://h.example/");
  EXPECT_TRUE(nofollow.meta_nofollow);
  EXPECT_TRUE(nofollow.meta_noindex);
  EXPECT_TRUE(nofollow.links.empty());

  const ExtractedLinks none =
      ExtractLinks("<meta name='shingled' content='none'><a href='/1'>1</a>", "http://h.example/");
  EXPECT_TRUE(none.meta_nofollow);
  EXPECT_TRUE(none.links.empty());

  const ExtractedLinks other_bot = ExtractLinks(
      "<meta name='otherbot' content='nofollow'><a href='/1'>1</a>", "http://h.example/");
  EXPECT_FALSE(other_bot.meta_nofollow);
  EXPECT_EQ(other_bot.links.size(), 1u);
}

TEST(LinksTest, NonHttpLinksAreDropped) {
  const ExtractedLinks got = ExtractLinks(
      "<a href='mailto:a@b.c'>m</a><a href='javascript:void(0)'>j</a><a href='ftp://x/'>f</a>"
      "<a href='http://[broken/'>b</a><a href='https://ok.example/'>ok</a><a>no href</a>",
      "http://h.example/");
  EXPECT_THAT(got.links, ElementsAre("https://ok.example/"));
  EXPECT_EQ(got.dropped, 4u);
}

TEST(LinksTest, MaxLinks) {
  std::string html;
  for (int i = 0; i < 50; ++i) html += "<a href='/p" + std::to_string(i) + "'>x</a>";
  LinkOptions options;
  options.max_links = 10;
  const ExtractedLinks got = ExtractLinks(html, "http://h.example/", options);
  EXPECT_EQ(got.links.size(), 10u);
  EXPECT_EQ(got.dropped, 40u);
}

TEST(LinksTest, DeeplyNestedAndBrokenPagesDoNotCrash) {
  // 200,000 levels: Gumbo alone spends minutes on this (its tree building is quadratic in
  // nesting depth); with the nesting limit (dedup/html_nesting.h) it is one linear pass. Links
  // within the limit are found, one nested past it is not.
  std::string deep = "<a href='/top'>t</a>";
  for (int i = 0; i < 100; ++i) deep += "<div>";
  deep += "<a href='/shallow'>s</a>";
  for (int i = 0; i < 200000; ++i) deep += "<div>";
  deep += "<a href='/deep'>x</a>";
  EXPECT_THAT(ExtractLinks(deep, "http://h.example/").links,
              ElementsAre("http://h.example/top", "http://h.example/shallow"));
  EXPECT_TRUE(ExtractLinks(std::string("\0\xff<a href", 9), "http://h.example/").links.empty());
  EXPECT_TRUE(ExtractLinks("<a href='/x'>", "not a url").links.empty());
}

}  // namespace
}  // namespace shingled::crawler
