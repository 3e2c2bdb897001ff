// Against the real daemon: a short text inside one 10 times longer is a `contains` match
// of the long page's answer and a `contained_in` one of the short page's, estimated from their
// bytes in common (`containment_from: "chunks"`), and `/v1/similar` finds the pair from both sides.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

std::string Words(uint32_t seed, int count, char prefix) {
  std::mt19937 rng(seed);
  std::string out;
  for (int i = 0; i < count; ++i) {
    out.push_back(prefix);
    out.append(std::to_string(rng() % 10000000)).push_back(' ');
  }
  return out;
}

const json* MatchOf(const json& matches, int doc) {
  for (const json& m : matches) {
    if (m["doc"] == doc) return &m;
  }
  return nullptr;
}

TEST(ContainmentServeTest, ShortInLongFromBothSides) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store", "[limits]\nmax_body_bytes = 1048576\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  auto post = [&](const std::string& url, const std::string& text) {
    HttpClient client(daemon.port());
    HttpResponse r = client.Request("POST", "/v1/pages?url=" + Q(url), text, "text/plain");
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false);
  };
  // 1,200 words (~10 KB), then the same inside 9 times as much other text.
  const std::string short_text = Words(1, 1200, 's');
  const std::string long_text = Words(2, 5400, 'a') + short_text + Words(3, 5400, 'b');
  const json s = post("http://short.example/", short_text);
  const json l = post("http://long.example/", long_text);
  const int short_doc = s["doc"], long_doc = l["doc"];
  const json* m = MatchOf(l["matches"], short_doc);
  ASSERT_NE(m, nullptr) << l;
  EXPECT_EQ((*m)["relation"], "contains") << l;
  EXPECT_EQ((*m)["containment_from"], "chunks") << l;
  EXPECT_GE((*m)["containment_in_page"].get<double>(), 0.85) << l;
  EXPECT_LE((*m)["containment_in_page"].get<double>(), 1.0) << l;
  EXPECT_EQ((*m)["common"]["relation"], "a_contains_b") << l;
  EXPECT_EQ(l["verdict"], "new") << l;

  // The short side: a one-word edit of the short text, stored after the long one.
  std::string edited = short_text;
  edited.replace(0, edited.find(' '), "edited");
  const json e = post("http://edited.example/", edited);
  m = MatchOf(e["matches"], long_doc);
  ASSERT_NE(m, nullptr) << e;
  EXPECT_EQ((*m)["relation"], "contained_in") << e;
  EXPECT_EQ((*m)["containment_from"], "chunks") << e;
  EXPECT_GE((*m)["containment_of_page"].get<double>(), 0.85) << e;

  HttpClient client(daemon.port());
  HttpResponse r = client.Request("GET", "/v1/similar?url=" + Q("http://short.example/"), "", "");
  ASSERT_EQ(r.status, 200) << r.body;
  const json similar = json::parse(r.body);
  m = MatchOf(similar["results"], long_doc);
  ASSERT_NE(m, nullptr) << similar;
  EXPECT_EQ((*m)["containment_from"], "chunks") << similar;
  EXPECT_GE((*m)["containment_of_query"].get<double>(), 0.85) << similar;
  r = client.Request("GET", "/v1/similar?url=" + Q("http://long.example/"), "", "");
  ASSERT_EQ(r.status, 200) << r.body;
  const json from_long = json::parse(r.body);
  m = MatchOf(from_long["results"], short_doc);
  ASSERT_NE(m, nullptr) << from_long;
  EXPECT_GE((*m)["containment_in_query"].get<double>(), 0.85) << from_long;
}

}  // namespace
}  // namespace shingled::testing
