// `shingled list urls|clusters|identical` against the real binary: every item over as many pages
// as it takes, the formats, --limit and --after, and refusals of bad arguments.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class CliListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = dir_.path() + "/store";
    // 1,205 pages: more than one page of the command's 1,000; a.html twice (an identical set),
    // and b.html in other markup (lexically equivalent: two documents with one sketch, a cluster
    // of two, and an identical set).
    for (int i = 0; i < 1200; ++i) {
      char name[40];
      std::snprintf(name, sizeof(name), "site/many/p%04d.html", i);
      dir_.Write(name, SyntheticPage(1000 + i));
    }
    const std::string a = SyntheticPage(1);
    dir_.Write("site/a.html", a);
    dir_.Write("site/copy,of a.html", a);  // a comma: quoted in CSV
    dir_.Write("site/b.html", SyntheticPage(2));
    std::string b2 = SyntheticPage(2);
    b2.replace(b2.find("<p>"), 3, "<p class=\"lead\">");
    dir_.Write("site/b2.html", b2);
    dir_.Write("site/c.html", SyntheticPage(3));
    std::string out;
    ASSERT_EQ(RunCli("ingest " + dir_.path() + "/site --store " + store_ +
                         " --sweep s1 --date 2024-05-01 --base-url https://ex.com/ --json --quiet",
                     &out),
              0)
        << out;
  }

  TempDir dir_;
  std::string store_;
};

TEST_F(CliListTest, UrlsInEveryFormat) {
  std::string out;
  ASSERT_EQ(RunCli("list urls --store " + store_ + " --format json", &out), 0) << out;
  std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 1205u) << out.substr(0, 2000);
  std::vector<std::string> urls;
  for (const std::string& line : lines) {
    const json j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    urls.push_back(j["url"]);
    EXPECT_EQ(j["status"], "live") << line;
    EXPECT_EQ(j["version"]["date"], "2024-05-01T00:00:00Z") << line;
  }
  EXPECT_TRUE(std::is_sorted(urls.begin(), urls.end()));
  EXPECT_EQ(std::set<std::string>(urls.begin(), urls.end()).size(), urls.size());
  EXPECT_EQ(urls.front(), "https://ex.com/a.html");

  ASSERT_EQ(RunCli("list urls --store " + store_ + " --format csv --prefix https://ex.com/c", &out),
            0)
      << out;
  lines = Lines(out);
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_EQ(lines[0],
            "url,status,first_seen,versions,seq,sweep,date,doc,http_status,verdict,location");
  EXPECT_EQ(lines[1].rfind("https://ex.com/c.html,live,", 0), 0u) << lines[1];
  EXPECT_EQ(
      lines[2].rfind("\"https://ex.com/copy,of%20a.html\",live,2024-05-01T00:00:00Z,1,1,1,", 0), 0u)
      << lines[2];
  EXPECT_NE(lines[2].find(",200,duplicate,"), std::string::npos) << lines[2];

  // b2.html is b.html in other markup: lexically equivalent (the same sketch), a duplicate too.
  ASSERT_EQ(RunCli("list urls --store " + store_ + " --host ex.com --verdict duplicate", &out), 0)
      << out;
  lines = Lines(out);
  ASSERT_EQ(lines.size(), 2u) << out;
  EXPECT_EQ(lines[0].rfind("https://ex.com/b2.html live ", 0), 0u) << out;
  EXPECT_EQ(lines[1].rfind("https://ex.com/copy,of%20a.html live ", 0), 0u) << out;

  // --limit, then --after the cursor it names on stderr.
  ASSERT_EQ(RunCli("list urls --store " + store_ + " --sweep s1 --limit 3", &out), 0) << out;
  lines = Lines(out);
  ASSERT_EQ(lines.size(), 4u) << out;
  const std::string marker = "shingled list: more after --after ";
  ASSERT_EQ(lines[3].rfind(marker, 0), 0u) << out;
  const std::string cursor = lines[3].substr(marker.size());
  ASSERT_EQ(RunCli("list urls --store " + store_ + " --sweep s1 --after " + cursor, &out), 0)
      << out;
  EXPECT_EQ(Lines(out).size(), 1202u);
  EXPECT_EQ(out.rfind("https://ex.com/c.html ", 0), 0u) << out.substr(0, 200);
}

TEST_F(CliListTest, ClustersAndIdenticalSets) {
  std::string out;
  ASSERT_EQ(RunCli("list clusters --store " + store_ + " --format json", &out), 0) << out;
  std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 1u) << out;
  json j = json::parse(lines[0]);
  EXPECT_EQ(j["size"], 2);
  EXPECT_EQ(j["live_urls"], 2);
  EXPECT_EQ(j["sample_urls"],
            json::parse(R"(["https://ex.com/b.html", "https://ex.com/b2.html"])"));
  ASSERT_EQ(RunCli("list clusters --store " + store_ + " --min-size 3", &out), 0) << out;
  EXPECT_EQ(out, "");

  ASSERT_EQ(RunCli("list identical --store " + store_ + " --format csv", &out), 0) << out;
  // a.html and its copy: one document; b.html and b2.html: two that share a representative.
  lines = Lines(out);
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_EQ(lines[0], "representative,url_count,bytes,documents,urls");
  EXPECT_NE(lines[1].find(",2,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("\"https://ex.com/a.html https://ex.com/copy,of%20a.html\""),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find(",2,"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find(",https://ex.com/b.html https://ex.com/b2.html"), std::string::npos)
      << lines[2];
  EXPECT_EQ(std::count(lines[2].begin(), lines[2].end(), ' '), 2) << lines[2];  // 2 documents
}

TEST_F(CliListTest, BadArgumentsAndMissingStore) {
  std::string out;
  EXPECT_EQ(RunCli("list urls --store " + store_ + " --status zombie", &out), 2) << out;
  EXPECT_NE(out.find("status \"zombie\" is not one of live"), std::string::npos) << out;
  EXPECT_EQ(RunCli("list urls --store " + store_ + " --sweep nope", &out), 2) << out;
  EXPECT_NE(out.find("sweep \"nope\" is not in the store"), std::string::npos) << out;
  EXPECT_EQ(RunCli("list urls --store " + store_ + " --after %%%", &out), 2) << out;
  EXPECT_EQ(RunCli("list urls --store " + store_ + " --format xml", &out), 2) << out;
  EXPECT_EQ(RunCli("list urls --store " + store_ + " --limit 0", &out), 2) << out;
  EXPECT_EQ(RunCli("list clusters --store " + store_ + " --min-size 1", &out), 2) << out;
  EXPECT_NE(out.find("min_size \"1\""), std::string::npos) << out;
  EXPECT_EQ(RunCli("list identical --store " + store_ + " --min-urls x", &out), 2) << out;
  EXPECT_EQ(RunCli("list --store " + store_, &out), 2) << out;
  // A store that is not there is an error, and is not created.
  const std::string missing = dir_.path() + "/missing";
  EXPECT_EQ(RunCli("list urls --store " + missing, &out), 1) << out;
  EXPECT_FALSE(std::filesystem::exists(missing + "/data.mdb"));
}

}  // namespace
}  // namespace shingled::testing
