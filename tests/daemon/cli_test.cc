// Runs the real shingled binary: `sketch` and `compare` on files, their JSON and exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/daemon/run_shingled.h"

namespace {

using nlohmann::json;

using Result = shingled::testing::CliResult;
using shingled::testing::RunShingled;

const std::string kSamples = std::string(SHINGLED_TEST_DATA_DIR) + "/samples/";

TEST(CliTest, CompareSamplePagesAsJson) {
  const Result r =
      RunShingled("compare --json " + kSamples + "page-a.html " + kSamples + "page-b.html");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  for (const char* key :
       {"resemblance", "containment_a_in_b", "containment_b_in_a", "resemblance_estimate",
        "containment_estimate_a_in_b", "containment_estimate_b_in_a", "features_in_common",
        "fungible", "supershingles_in_common"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  // The pages share most of their article: clearly similar, clearly not identical.
  const double r_exact = j["resemblance"];
  EXPECT_GT(r_exact, 0.6);
  EXPECT_LT(r_exact, 0.95);
  // The estimate from 84 values is within 4 standard errors of the exact value.
  const double se = std::sqrt(r_exact * (1 - r_exact) / 84);
  EXPECT_NEAR(j["resemblance_estimate"].get<double>(), r_exact, 4 * se);
  EXPECT_GT(j["supershingles_in_common"].get<int>(), 0);
}

TEST(CliTest, CompareAFileWithItself) {
  const std::string a = kSamples + "page-a.html";
  const json j = json::parse(RunShingled("compare --json " + a + " " + a).out);
  EXPECT_EQ(j["resemblance"], 1.0);
  EXPECT_EQ(j["resemblance_estimate"], 1.0);
  EXPECT_EQ(j["containment_a_in_b"], 1.0);
  EXPECT_EQ(j["features_in_common"], 6);
  EXPECT_EQ(j["fungible"], true);
}

TEST(CliTest, CompareReadableLinesAndLabelled) {
  const Result r = RunShingled("compare --labelled --shingle-size 3 " + kSamples + "page-a.html " +
                               kSamples + "page-b.html");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("resemblance: "), std::string::npos);
  EXPECT_NE(r.out.find("labelled: true"), std::string::npos);
  EXPECT_NE(r.out.find("shingle_size: 3"), std::string::npos);
}

TEST(CliTest, BothCanonicalizersGiveTheSameAnswerOnTheSamples) {
  const std::string files = kSamples + "page-a.html " + kSamples + "page-b.html";
  const Result streaming = RunShingled("compare --json " + files);
  const Result gumbo = RunShingled("compare --json --canonicalizer gumbo " + files);
  ASSERT_EQ(streaming.exit_code, 0);
  ASSERT_EQ(gumbo.exit_code, 0);
  EXPECT_EQ(streaming.out, gumbo.out);
  EXPECT_EQ(RunShingled("compare --canonicalizer lxml " + files).exit_code, 2);
}

TEST(CliTest, SketchPrintsOneObjectPerFile) {
  const Result r = RunShingled("sketch " + kSamples + "page-a.html " + kSamples + "page-b.html");
  ASSERT_EQ(r.exit_code, 0);
  std::istringstream lines(r.out);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    const json j = json::parse(line);
    ++n;
    EXPECT_EQ(j["minhashes"].size(), 84u);
    EXPECT_EQ(j["features"].size(), 6u);
    EXPECT_EQ(j["minhashes"][0].get<std::string>().size(), 16u);
    EXPECT_EQ(j["fingerprints"]["identical"].get<std::string>().size(), 32u);
    EXPECT_GT(j["tokens"].get<int>(), 300);
    EXPECT_LE(j["sample"]["values"].size(), 100u);
    EXPECT_TRUE(j["sample"].contains("modulus"));
    EXPECT_FALSE(j["supershingles"].empty());
  }
  EXPECT_EQ(n, 2);
}

// A file name that is not UTF-8 (Linux allows any bytes but '/' and NUL) is printed with U+FFFD
// in place of the bad byte: the JSON stays valid, and the command does not abort.
TEST(CliTest, FileNamesThatAreNotUtf8PrintAsValidJson) {
  const std::string name =
      ::testing::TempDir() + "/page-\xff-" + std::to_string(::getpid()) + ".html";
  std::ofstream(name) << "<p>a few words of a page</p>";
  const Result r = RunShingled("sketch '" + name + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_NE(j["file"].get<std::string>().find("page-\xef\xbf\xbd-"), std::string::npos) << r.out;
  std::filesystem::remove(name);
}

TEST(CliTest, MissingFileIsExitCode2WithTheName) {
  std::string err;
  const Result r = RunShingled("compare " + kSamples + "page-a.html /nonexistent/page.html", &err);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(err.find("/nonexistent/page.html"), std::string::npos) << err;
  // sketch goes on with the other files, then exits 2.
  const Result s = RunShingled("sketch /nonexistent/x.html " + kSamples + "page-a.html", &err);
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.out.find("page-a.html"), std::string::npos);
}

TEST(CliTest, BadArgumentsAreExitCode2) {
  EXPECT_EQ(RunShingled("compare onlyone.html").exit_code, 2);
  EXPECT_EQ(RunShingled("compare --shingle-size 0 a b").exit_code, 2);
  EXPECT_EQ(RunShingled("nosuchcommand").exit_code, 2);
  EXPECT_EQ(RunShingled("").exit_code, 2);
}

TEST(CliTest, UnknownCommandIsNamed) {
  std::string err;
  const Result r = RunShingled("frobnicate --store /nonexistent", &err);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(err.find("unknown command \"frobnicate\""), std::string::npos) << err;
  EXPECT_NE(err.find("ingest"), std::string::npos) << err;  // the commands there are
  // A known command's own usage errors are CLI11's, as before.
  const Result known = RunShingled("compare onlyone.html", &err);
  EXPECT_EQ(known.exit_code, 2);
  EXPECT_EQ(err.find("unknown command"), std::string::npos) << err;
}

TEST(CliTest, IngestRefusesAMissingPathWithoutCreatingAStore) {
  const std::string dir =
      ::testing::TempDir() + "/cli_ingest_missing." + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string err;
  const Result r = RunShingled(
      "ingest /nonexistent/pages " + kSamples + "page-a.html --store " + dir + "/store --sweep s1",
      &err);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(err.find("/nonexistent/pages: not a file or directory"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/store"));
  std::filesystem::remove_all(dir);
}

TEST(CliTest, OversizedFileIsRefused) {
  const std::string big = ::testing::TempDir() + "/big." + std::to_string(::getpid()) + ".txt";
  std::ofstream(big) << std::string(5000, 'x');
  std::string err;
  const Result r = RunShingled("sketch --max-file-bytes 1000 " + big, &err);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(err.find("over the limit"), std::string::npos) << err;
  std::filesystem::remove(big);
}

}  // namespace
