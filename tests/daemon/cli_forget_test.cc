// `shingled forget` against the real binary and a real LMDB store filled by `shingled ingest`:
// a URL forgotten (and its history gone, the rest kept), a dry run that changes nothing, a host
// forgotten over several transactions, the records, and the usage errors; and `shingled retain`.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/daemon/daemon_harness.h"
#include "tests/daemon/run_shingled.h"
#include "tests/daemon/sha256_hex.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

class CliForgetTest : public ::testing::Test {
 protected:
  // Three pages of distinct content on each of one.example and two.example (a document each),
  // and a copy of one.example/a.html's content at one.example/copy.html.
  void SetUp() override {
    store_ = " --store " + dir_.path() + "/store";
    for (int i = 0; i < 3; ++i) {
      const std::string name = std::string(1, static_cast<char>('a' + i)) + ".html";
      dir_.Write("one/" + name, SyntheticPage(i));
      dir_.Write("two/" + name, SyntheticPage(10 + i));
    }
    dir_.Write("one/copy.html", SyntheticPage(0));
    for (const char* site : {"one", "two"}) {
      std::string out;
      ASSERT_EQ(RunCli("ingest " + dir_.path() + "/" + site + store_ +
                           " --sweep s1 --json --base-url https://" + site + ".example/",
                       &out),
                0)
          << out;
    }
  }

  // Runs `shingled forget ARGS --json`; its stdout parsed (null when it is not JSON).
  json Forget(const std::string& args, int expect_exit = 0) {
    std::string err;
    CliResult r = RunShingled("forget " + args + store_ + " --json", &err);
    EXPECT_EQ(r.exit_code, expect_exit) << args << "\n" << r.out << err;
    return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  }
  // The exit code of `shingled history URL`.
  int History(const std::string& url) {
    std::string out;
    return RunCli("history " + ShellQuote(url) + store_ + " --json", &out);
  }

  TempDir dir_;
  std::string store_;
};

TEST_F(CliForgetTest, ForgetsOneUrlAndKeepsTheRest) {
  // Any spelling of the URL, normalized as `history` normalizes it.
  const json j = Forget("--url 'HTTPS://Two.Example:443/x/../b.html'");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["scope"], "url");
  EXPECT_EQ(j["value"], "https://two.example/b.html");
  EXPECT_EQ(j["dry_run"], false);
  EXPECT_EQ(j["urls"], 1);
  EXPECT_EQ(j["versions"], 1);
  EXPECT_EQ(j["documents"], 1);  // no other URL showed it
  EXPECT_EQ(j["documents_kept"], 0);
  EXPECT_EQ(j["more"], false);
  EXPECT_EQ(j["calls"], 1);
  EXPECT_EQ(j["interrupted"], false);
  ASSERT_EQ(j["records"].size(), 1u) << j.dump();

  EXPECT_EQ(History("https://two.example/b.html"), 1);  // NotFound
  for (const char* kept : {"https://two.example/a.html", "https://two.example/c.html",
                           "https://one.example/a.html", "https://one.example/b.html"}) {
    EXPECT_EQ(History(kept), 0) << kept;
  }
  std::string out;
  EXPECT_EQ(RunCli("check" + store_, &out), 0) << out;

  // Forgotten already: NotFound, a failure (exit 1) with a one-line message.
  EXPECT_EQ(RunCli("forget --url https://two.example/b.html" + store_, &out), 1) << out;
  EXPECT_EQ(out.rfind("shingled forget: ", 0), 0u) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;

  // A document another URL still shows stays.
  const json copy = Forget("--url https://one.example/copy.html");
  EXPECT_EQ(copy["urls"], 1);
  EXPECT_EQ(copy["documents"], 0) << copy.dump();
  EXPECT_EQ(History("https://one.example/a.html"), 0);
}

TEST_F(CliForgetTest, ADryRunChangesNothing) {
  const json j = Forget("--host one.example --dry-run --list 10");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["dry_run"], true);
  EXPECT_EQ(j["scope"], "host");
  EXPECT_EQ(j["value"], "one.example");
  EXPECT_EQ(j["urls"], 4);
  EXPECT_EQ(j["more"], false);
  EXPECT_EQ(j["records"].size(), 0u);
  EXPECT_EQ(j["listed"], json({"https://one.example/a.html", "https://one.example/b.html",
                               "https://one.example/c.html", "https://one.example/copy.html"}));
  for (const char* url : {"https://one.example/a.html", "https://one.example/copy.html"}) {
    EXPECT_EQ(History(url), 0) << url;
  }
  EXPECT_EQ(Forget("--records")["forgets"].size(), 0u);

  // More URLs match than one call takes: the dry run says so, in JSON and in words.
  const json more = Forget("--prefix https://one.example/ --dry-run --max-urls 2");
  EXPECT_EQ(more["urls"], 2);
  EXPECT_EQ(more["more"], true);
  CliResult text =
      RunShingled("forget --prefix https://one.example/ --dry-run --max-urls 2 --list 1" + store_);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("dry run, nothing changed: forgetting prefix https://one.example/ would "
                          "remove 2 URLs"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("more than 2 URLs match"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n  https://one.example/a.html\n"), std::string::npos) << text.out;
  EXPECT_EQ(History("https://one.example/b.html"), 0);
}

TEST_F(CliForgetTest, AHostGoesOverSeveralTransactionsAndIsRecorded) {
  // One URL per transaction: the command calls again until none is left.
  const json j = Forget("--host TWO.example --max-urls 1 --list 2");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["urls"], 3);
  EXPECT_EQ(j["versions"], 3);
  EXPECT_EQ(j["documents"], 3);
  EXPECT_EQ(j["more"], false);
  EXPECT_GE(j["calls"].get<int>(), 3) << j.dump();
  // --list counts over all the calls.
  EXPECT_EQ(j["listed"], json({"https://two.example/a.html", "https://two.example/b.html"}));
  for (const char* url : {"https://two.example/a.html", "https://two.example/c.html"}) {
    EXPECT_EQ(History(url), 1) << url;
  }
  EXPECT_EQ(History("https://one.example/a.html"), 0);
  std::string out;
  EXPECT_EQ(RunCli("check" + store_, &out), 0) << out;

  const json records = Forget("--records")["forgets"];
  ASSERT_EQ(records.size(), j["records"].size()) << records.dump();
  uint64_t urls = 0;
  for (const json& r : records) {
    EXPECT_EQ(r["scope"], "host");
    // The record keeps the SHA-256 of the normalized host, not the host.
    EXPECT_EQ(r["value_sha256"], Sha256Hex("two.example"));
    EXPECT_EQ(r["date"].get<std::string>().size(), 20u) << r.dump();  // 2026-12-04T20:44:21Z
    urls += r["urls"].get<uint64_t>();
  }
  EXPECT_EQ(urls, 3u);
  // The text form: one line a record, with the date, the scope and the digest.
  CliResult text = RunShingled("forget --records" + store_);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find(" host sha256:" + Sha256Hex("two.example")), std::string::npos)
      << text.out;
}

TEST_F(CliForgetTest, BadArgumentsAreUsageErrors) {
  std::string out;
  EXPECT_EQ(RunCli("forget" + store_, &out), 2) << out;
  EXPECT_NE(out.find("give what to forget: one of --url, --host or --prefix"), std::string::npos)
      << out;
  EXPECT_EQ(RunCli("forget --url https://one.example/a.html --host one.example" + store_, &out), 2)
      << out;
  EXPECT_NE(out.find("give one of --url, --host or --prefix, not --url and --host"),
            std::string::npos)
      << out;
  EXPECT_EQ(RunCli("forget --host one.example/docs" + store_, &out), 2) << out;
  EXPECT_NE(out.find("is not a host name or host:port"), std::string::npos) << out;
  EXPECT_EQ(RunCli("forget --url ftp://one.example/a" + store_, &out), 2) << out;
  EXPECT_EQ(RunCli("forget --prefix not-a-url" + store_, &out), 2) << out;
  EXPECT_EQ(RunCli("forget --records --host one.example" + store_, &out), 2) << out;
  EXPECT_EQ(RunCli("forget --host one.example --max-urls 0" + store_, &out), 2) << out;
  // Nothing was forgotten by any of them.
  EXPECT_EQ(History("https://one.example/a.html"), 0);
}

// `shingled retain`: one pass of retention by date on a store filled in 2020 and again now.
class CliRetainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = " --store " + dir_.path() + "/store";
    for (int i = 0; i < 3; ++i) {
      dir_.Write("old/" + std::string(1, static_cast<char>('a' + i)) + ".html", SyntheticPage(i));
    }
    dir_.Write("new/a.html", SyntheticPage(20));  // a.html changed since
    for (int i = 1; i < 3; ++i) {
      dir_.Write("new/" + std::string(1, static_cast<char>('a' + i)) + ".html", SyntheticPage(i));
    }
    std::string out;
    ASSERT_EQ(RunCli("ingest " + dir_.path() + "/old" + store_ +
                         " --sweep s1 --date 2020-01-01T00:00:00Z --json --base-url https://one.example/",
                     &out),
              0)
        << out;
    ASSERT_EQ(RunCli("ingest " + dir_.path() + "/new" + store_ +
                         " --sweep s2 --json --base-url https://one.example/",
                     &out),
              0)
        << out;
  }
  json Retain(const std::string& args, int expect_exit = 0) {
    std::string err;
    CliResult r = RunShingled("retain " + args + store_ + " --json", &err);
    EXPECT_EQ(r.exit_code, expect_exit) << args << "\n" << r.out << err;
    return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  }
  size_t Versions(const std::string& url) {
    std::string out;
    EXPECT_EQ(RunCli("history " + url + store_ + " --json", &out), 0) << out;
    const json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
    return j.is_object() ? j["versions"].size() : 0;
  }

  TempDir dir_;
  std::string store_;
};

TEST_F(CliRetainTest, APassForgetsOldVersionsButEachUrlsLast) {
  ASSERT_EQ(Versions("https://one.example/a.html"), 2u);
  const json j = Retain("--version-days 30");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["urls_examined"], 3);
  EXPECT_EQ(j["versions"], 3) << j.dump();  // the 2020 version of each URL
  EXPECT_EQ(j["urls"], 0);
  EXPECT_EQ(j["documents"], 1) << j.dump();  // a.html's 2020 content, which no URL shows now
  EXPECT_EQ(j["pass_done"], true);
  EXPECT_EQ(j["record"], 1);
  EXPECT_EQ(j["interrupted"], false);
  for (const char* url : {"https://one.example/a.html", "https://one.example/b.html"}) {
    EXPECT_EQ(Versions(url), 1u) << url;
  }
  std::string out;
  EXPECT_EQ(RunCli("check" + store_, &out), 0) << out;
  // The pass is recorded with the takedowns: its counts, and the SHA-256 of its rules.
  std::string err;
  CliResult listed = RunShingled("forget --records --json" + store_, &err);
  ASSERT_EQ(listed.exit_code, 0) << listed.out << err;
  const json records = json::parse(listed.out, nullptr, false)["forgets"];
  ASSERT_EQ(records.size(), 1u) << listed.out;
  EXPECT_EQ(records[0]["scope"], "retention");
  EXPECT_EQ(records[0]["versions"], 3);
  EXPECT_EQ(records[0]["documents"], 1);
  // printf %s 'max_version_age=2592000 max_gone_age=0' | sha256sum
  EXPECT_EQ(records[0]["value_sha256"],
            "100315d87bc2050b2877defbe479d09a40c8cb5534b24b0f544cd73a78c96bbc");
  // Again: nothing left to forget, nothing recorded. In words, one step a URL.
  CliResult text = RunShingled("retain --version-days 30 --step-urls 1" + store_);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("retention pass done: 3 URLs looked at; removed 0 versions"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("record"), std::string::npos) << text.out;
}

TEST_F(CliRetainTest, WithoutAnAgeItRefusesToRun) {
  std::string out;
  EXPECT_EQ(RunCli("retain" + store_, &out), 2) << out;
  EXPECT_NE(out.find("shingled retain: nothing to forget: give --version-days or --gone-days"),
            std::string::npos)
      << out;
  EXPECT_EQ(RunCli("retain --version-days -1" + store_, &out), 2) << out;
  EXPECT_EQ(Versions("https://one.example/a.html"), 2u);
}

}  // namespace
}  // namespace shingled::testing
