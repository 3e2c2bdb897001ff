// The store's command line against the real binary: ingest, check, backup, queries, sweeps.
#include <lmdb.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

const std::string kSamples = std::string(SHINGLED_TEST_DATA_DIR) + "/samples/";

// URLs on the command line are normalized as the daemon normalizes them: --base-url's pages are
// stored under normalized URLs, and a query finds them under any spelling.
TEST(CliStoreTest, UrlsAreNormalized) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  dir.Write("site/a.html", ReadWholeFile(kSamples + "page-a.html"));
  std::string out;
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/site --store " + store +
                       " --sweep s1 --base-url HTTP://Files.Test:80/base/./ --json",
                   &out),
            0)
      << out;
  EXPECT_EQ(json::parse(out)["pages"], 1) << out;
  ASSERT_EQ(RunCli("history http://files.test/base/a.html --store " + store + " --json", &out), 0)
      << out;
  EXPECT_EQ(json::parse(out)["url"], "http://files.test/base/a.html") << out;
  ASSERT_EQ(
      RunCli("history HTTP://FILES.TEST:80/base/x/../a.html --store " + store + " --json", &out), 0)
      << out;
  EXPECT_EQ(json::parse(out)["versions"].size(), 1u) << out;
  ASSERT_EQ(RunCli("lost http://Files.Test/base/a.html --store " + store + " --json", &out), 0)
      << out;
  // A URL the daemon would refuse is a usage error.
  EXPECT_EQ(RunCli("history ftp://files.test/a --store " + store, &out), 2) << out;
  EXPECT_NE(out.find("http, https or file"), std::string::npos) << out;
  EXPECT_EQ(RunCli("ingest " + dir.path() + "/site --store " + store +
                       " --sweep s1 --base-url http://files.test:0/",
                   &out),
            2)
      << out;
}

// A page file is read whole, so it has the daemon's limit for a posted page
// (limits.max_body_bytes): a larger one is an error naming the limit, and the rest go in.
TEST(CliStoreTest, IngestRefusesPageFilesOverTheBodyLimit) {
  TempDir dir;
  dir.Write("limits.toml", "[limits]\nmax_body_bytes = 4096\n");
  dir.Write("site/small.html", "<p>a small page of a few words</p>");
  dir.Write("site/large.html", "<p>" + std::string(5000, 'x') + "</p>");
  std::string out;
  EXPECT_EQ(RunCli("ingest " + dir.path() + "/site --store " + dir.path() + "/store --config " +
                       dir.path() + "/limits.toml --sweep s --json",
                   &out),
            1)
      << out;
  EXPECT_NE(out.find("large.html: 5007 bytes, over the limit of 4096 (limits.max_body_bytes)"),
            std::string::npos)
      << out;
  const size_t brace = out.find('{');
  ASSERT_NE(brace, std::string::npos) << out;
  const json j = json::parse(out.substr(brace, out.find('}', brace) - brace + 1));
  EXPECT_EQ(j["pages"], 1) << out;
  EXPECT_EQ(j["errors"], 1) << out;
}

// Pages that join one cluster only as the run goes on (a chain of small edits, stored in an
// order unrelated to the chain) end in one cluster, and the summary counts that one, not the
// clusters the early pages started in ("ingest --json counts 588 clusters where the
// store ends with 566").
TEST(CliStoreTest, IngestCountsTheClustersItsPagesEndIn) {
  TempDir dir;
  std::vector<std::string> words;
  for (int i = 0; i < 1200; ++i) words.push_back("w" + std::to_string(i * 7919 % 100003));
  constexpr int kPages = 80;
  for (int step = 0; step < kPages; ++step) {
    // Each step edits one more word: consecutive pages resemble each other at about 0.99, pages
    // 20 steps apart at about 0.75 (not fungible).
    words[static_cast<size_t>(step) * 15] = "edit" + std::to_string(step);
    std::string text = "<p>";
    for (const std::string& w : words) text.append(w).append(" ");
    // Steps 0, 20, 40 and 60 come first by name, each its own cluster until the steps between
    // them arrive and merge the four.
    char name[32];
    std::snprintf(name, sizeof name, "site/%s%03d.html", step % 20 == 0 ? "a" : "b", step);
    dir.Write(name, text + "</p>");
  }
  for (int i = 0; i < 20; ++i) {  // unrelated pages: a cluster each
    std::string text = "<p>";
    for (int j = 0; j < 300; ++j) text.append("u" + std::to_string(i * 1000 + j)).append(" ");
    dir.Write("site/other" + std::to_string(i) + ".html", text + "</p>");
  }
  std::string out;
  // One page per commit, so that the early pages' clusters are stored before the merges.
  dir.Write("batch.toml", "[ingest]\nbatch_pages = 1\nmin_batch_pages = 1\nqueue_pages = 2\n");
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/site --store " + dir.path() +
                       "/store --sweep s1 --base-url https://ex.com/ --json --config " +
                       dir.path() + "/batch.toml",
                   &out),
            0)
      << out;
  const json j = json::parse(out);
  EXPECT_EQ(j["pages"], kPages + 20);
  EXPECT_EQ(j["clusters"], 21) << out;
}

// A document repository: prose markup and source files are read as plain text,
// whatever they start with, and a file copied into a longer one shares its bytes with it.
TEST(CliStoreTest, IngestReadsARepositoryOfTextFiles) {
  TempDir dir;
  // About HTML, in reStructuredText: as text, its tags are words of the guide.
  const std::string guide =
      "<!DOCTYPE html> is how a page starts; <b>tags</b> are shown as text in this guide.\n";
  dir.Write("kb/guide.rst", guide);
  std::string out;
  ASSERT_EQ(RunCli("sketch " + dir.path() + "/kb/guide.rst", &out), 0) << out;
  EXPECT_EQ(json::parse(out)["tokens"], 17) << out;  // "doctype", "html", "b", ... all counted

  // An article of ~12 KB of text, and a handbook that holds it between ~20 KB of its own.
  auto text = [](const char* prefix, int words, int seed) {
    std::string t;
    for (int i = 0; i < words; ++i) t += prefix + std::to_string((i * 37 + seed) % 100003) + " ";
    return t;
  };
  const std::string article = text("word", 1500, 1);
  dir.Write("kb/article.md", "# Article\n\n" + article + "\n");
  dir.Write("kb/handbook.md", "# Handbook\n\n" + text("intro", 1200, 2) + "\n\n" + article +
                                  "\n\n" + text("closing", 1200, 3) + "\n");
  dir.Write("kb/main.c", "#include <stdio.h>\nint main(void) { return puts(\"hi\"); }\n");
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/kb --store " + dir.path() +
                       "/store --sweep s1 --base-url https://kb.example/ --json --quiet",
                   &out),
            0)
      << out;
  EXPECT_EQ(json::parse(out)["pages"], 4) << out;
  ASSERT_EQ(RunCli("list urls --store " + dir.path() + "/store --format json", &out), 0) << out;
  std::map<std::string, uint64_t> doc_of;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line);
    doc_of[j["url"].get<std::string>()] = j["version"]["doc"].get<uint64_t>();
  }
  const uint64_t a = doc_of["https://kb.example/article.md"];
  const uint64_t h = doc_of["https://kb.example/handbook.md"];
  ASSERT_NE(a, 0u) << out;
  ASSERT_NE(h, 0u) << out;
  ASSERT_EQ(RunCli("compare --docs " + std::to_string(a) + " " + std::to_string(h) + " --store " +
                       dir.path() + "/store --json",
                   &out),
            0)
      << out;
  const json common = json::parse(out)["common"];
  EXPECT_EQ(common["relation"], "b_contains_a") << out;
  // At most a chunk or two of ~490 bytes at each end of the shared run is lost to the bound.
  EXPECT_GT(common["share_a"].get<double>(), 0.85) << out;
  EXPECT_LT(common["share_b"].get<double>(), 0.5) << out;
}

TEST(CliStoreTest, IngestQueryCheckBackup) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  const std::string a = ReadWholeFile(kSamples + "page-a.html");
  dir.Write("site/a.html", a);
  dir.Write("site/sub/copy of a.html", a);
  dir.Write("site/b.html", ReadWholeFile(kSamples + "page-b.html"));
  dir.Write("site/notes.txt", "some plain text words that are not like the pages at all");
  std::string out;
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/site --store " + store +
                       " --sweep s1 --date 2024-05-01 --base-url https://ex.com/ --json",
                   &out),
            0)
      << out;
  json j = json::parse(out);
  EXPECT_EQ(j["pages"], 4);
  EXPECT_EQ(j["duplicate"], 1);  // "copy of a.html"
  EXPECT_EQ(j["new"].get<int>() + j["near_duplicate"].get<int>(), 3);
  EXPECT_EQ(j["unchanged"], 0);
  EXPECT_EQ(j["errors"], 0);
  EXPECT_GE(j["clusters"].get<int>(), 2);

  // Again: idempotent, every page replays its verdict.
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/site --store " + store +
                       " --sweep s1 --base-url https://ex.com --json",
                   &out),
            0)
      << out;
  EXPECT_EQ(json::parse(out)["pages"], 4);

  ASSERT_EQ(
      RunCli("history https://ex.com/sub/copy%20of%20a.html --store " + store + " --json", &out), 0)
      << out;
  j = json::parse(out);
  EXPECT_EQ(j["versions"][0]["verdict"], "duplicate");
  EXPECT_EQ(j["versions"][0]["date"], "2024-05-01T00:00:00Z");
  const int doc = j["versions"][0]["doc"];
  ASSERT_EQ(RunCli("cluster " + std::to_string(doc) + " --store " + store + " --json", &out), 0)
      << out;
  EXPECT_EQ(json::parse(out)["members"][0]["urls"].size(), 2u);
  ASSERT_EQ(
      RunCli("similar --url https://ex.com/b.html --threshold 0.3 --store " + store + " --json",
             &out),
      0)
      << out;
  EXPECT_EQ(json::parse(out)["results"][0]["doc"], doc);
  ASSERT_EQ(RunCli("similar --file " + kSamples + "page-b.html --store " + store + " --json", &out),
            0)
      << out;
  EXPECT_FALSE(json::parse(out)["results"].empty());
  ASSERT_EQ(RunCli("lost https://ex.com/a.html --store " + store + " --json", &out), 0) << out;
  EXPECT_EQ(json::parse(out)["last_doc"], doc);
  EXPECT_EQ(RunCli("lost https://nowhere.example/ --store " + store + " --json", &out), 1);

  ASSERT_EQ(RunCli("sweep close s1 --date 2024-05-02 --store " + store + " --json", &out), 0)
      << out;
  EXPECT_EQ(json::parse(out)["open"], false);
  ASSERT_EQ(RunCli("sweep open s2 --store " + store + " --json", &out), 0) << out;
  ASSERT_EQ(RunCli("sweep list --store " + store + " --json", &out), 0) << out;
  EXPECT_EQ(json::parse(out)["sweeps"].size(), 2u);
  EXPECT_EQ(RunCli("sweep close --store " + store, &out), 2) << out;

  ASSERT_EQ(RunCli("check --store " + store, &out), 0) << out;
  EXPECT_NE(out.find("consistent"), std::string::npos);
  ASSERT_EQ(RunCli("backup --store " + store + " " + dir.path() + "/copy", &out), 0) << out;
  ASSERT_EQ(RunCli("check --store " + dir.path() + "/copy --json", &out), 0) << out;
  EXPECT_EQ(json::parse(out)["ok"], true);
}

// The bug: docs/API.md's sweep example (open 2024-05, close it with an end date) on a store that
// held earlier pages marked every URL of the store gone, dated before its first version. A sweep
// closes over its own scope; a dry run lists what would become gone; a reopen undoes a close.
TEST(CliStoreTest, SweepsCloseOverTheirScopeWithADryRunAndAReopen) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  const std::string flags = " --store " + store + " --json";
  dir.Write("site/a.html", ReadWholeFile(kSamples + "page-a.html"));
  dir.Write("site/b.html", ReadWholeFile(kSamples + "page-b.html"));
  dir.Write("site/notes.txt", "some plain text words that are not like the pages at all");
  dir.Write("june/a.html", ReadWholeFile(kSamples + "page-a.html"));
  std::string out;
  ASSERT_EQ(RunCli("ingest " + dir.path() +
                       "/site --sweep default --date 2024-04-01 "
                       "--base-url https://ex.com/" +
                       flags,
                   &out),
            0)
      << out;

  // The docs' example: a sweep without a scope covers nothing.
  ASSERT_EQ(RunCli("sweep open 2024-05 --date 2024-05-01" + flags, &out), 0) << out;
  ASSERT_EQ(RunCli("sweep close 2024-05 --date 2024-05-31" + flags, &out), 0) << out;
  json j = json::parse(out);
  EXPECT_EQ(j["closing"]["gone_urls"], 0) << out;
  ASSERT_EQ(RunCli("history https://ex.com/a.html" + flags, &out), 0) << out;
  EXPECT_EQ(json::parse(out)["versions"].size(), 1u) << out;

  // A sweep of ex.com sees a.html only.
  ASSERT_EQ(RunCli("sweep open 2024-06 --date 2024-06-01 --scope-host ex.com" + flags, &out), 0)
      << out;
  EXPECT_EQ(json::parse(out)["scope"], json::parse(R"(["http://ex.com/", "https://ex.com/"])"));
  ASSERT_EQ(RunCli("ingest " + dir.path() +
                       "/june --sweep 2024-06 --date 2024-06-02 "
                       "--base-url https://ex.com/" +
                       flags,
                   &out),
            0)
      << out;
  EXPECT_EQ(RunCli("sweep close 2024-06 --date 2024-05-15" + flags, &out), 1) << out;
  EXPECT_NE(out.find("before its start 2024-06-01T00:00:00Z"), std::string::npos) << out;
  ASSERT_EQ(RunCli("sweep close 2024-06 --date 2024-06-30 --dry-run" + flags, &out), 0) << out;
  j = json::parse(out);
  EXPECT_EQ(j["open"], true) << out;
  EXPECT_EQ(j["closing"]["dry_run"], true) << out;
  EXPECT_EQ(j["closing"]["urls"],
            json::parse(R"(["https://ex.com/b.html", "https://ex.com/notes.txt"])"))
      << out;
  ASSERT_EQ(RunCli("history https://ex.com/b.html" + flags, &out), 0) << out;
  EXPECT_EQ(json::parse(out)["versions"].size(), 1u) << out;

  ASSERT_EQ(RunCli("sweep close 2024-06 --date 2024-06-30" + flags, &out), 0) << out;
  EXPECT_EQ(json::parse(out)["closing"]["gone_urls"], 2) << out;
  ASSERT_EQ(RunCli("history https://ex.com/b.html" + flags, &out), 0) << out;
  EXPECT_EQ(json::parse(out)["versions"][1]["verdict"], "gone") << out;
  ASSERT_EQ(RunCli("sweep reopen 2024-06" + flags, &out), 0) << out;
  j = json::parse(out);
  EXPECT_EQ(j["removed_gone"], 2) << out;
  EXPECT_EQ(j["open"], true) << out;
  ASSERT_EQ(RunCli("history https://ex.com/b.html" + flags, &out), 0) << out;
  EXPECT_EQ(json::parse(out)["versions"].size(), 1u) << out;
  EXPECT_EQ(RunCli("sweep close 2024-06 --scope-host ex.com" + flags, &out), 2) << out;
  EXPECT_EQ(RunCli("sweep open x --scope-host ex.com/path" + flags, &out), 2) << out;
  EXPECT_NE(out.find("is not a host name"), std::string::npos) << out;
  ASSERT_EQ(RunCli("check --store " + store, &out), 0) << out;
}

// Ids are 1..2^64-1 (CLI11 took 0, and made 99999999999999999999 into 2^64-1: "document
// 18446744073709551615 not found"), and `similar` takes one of --url, --doc and --file (--file
// won silently).
TEST(CliStoreTest, BadIdsAndTwoQueriesAtOnceAreUsageErrors) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  const std::string page = dir.Write("p.html", ReadWholeFile(kSamples + "page-a.html"));
  std::string out;
  ASSERT_EQ(RunCli("ingest " + page + " --store " + store + " --sweep s", &out), 0) << out;
  for (const char* id : {"0", "abc", "99999999999999999999", "-1"}) {
    EXPECT_EQ(RunCli(std::string("cluster ") + id + " --store " + store, &out), 2) << id << out;
    EXPECT_NE(
        out.find("cluster or document id \"" + std::string(id) + "\" is not an integer in 1.."),
        std::string::npos)
        << out;
    EXPECT_EQ(RunCli(std::string("similar --doc=") + id + " --store " + store, &out), 2)
        << id << out;
  }
  EXPECT_EQ(RunCli("similar --doc 1 --file " + page + " --store " + store, &out), 2) << out;
  EXPECT_NE(out.find("excludes"), std::string::npos) << out;
  EXPECT_EQ(RunCli("similar --doc 1 --url http://a.test/ --store " + store, &out), 2) << out;
  EXPECT_EQ(RunCli("cluster 1 --store " + store + " --json", &out), 0) << out;
}

// A command that reads or checks a store refuses a directory without one: `check --store` with a
// mistyped path created an empty store there and called it consistent. `sweep open` (like
// ingest) creates one.
TEST(CliStoreTest, ReadingCommandsRefuseAMissingStore) {
  TempDir dir;
  const std::string missing = dir.path() + "/missing";
  const std::string flags = " --store " + missing;
  for (const std::string& command :
       {"check" + flags, "backup" + flags + " " + dir.path() + "/copy",
        "history http://a.test/" + flags, "lost http://a.test/" + flags, "cluster 1" + flags,
        "similar --url http://a.test/" + flags, "sweep list" + flags, "sweep close s" + flags}) {
    std::string out;
    EXPECT_EQ(RunCli(command, &out), 1) << command << ": " << out;
    EXPECT_NE(out.find("no store at " + missing), std::string::npos) << command << ": " << out;
    EXPECT_FALSE(std::filesystem::exists(missing)) << command;
  }
  std::string out;
  ASSERT_EQ(RunCli("sweep open s" + flags + " --json", &out), 0) << out;
  EXPECT_EQ(RunCli("check" + flags, &out), 0) << out;
  // A --store that is a file: the error says so, without the hint about [sketch] parameters.
  const std::string file = dir.Write("plain", "x");
  EXPECT_EQ(RunCli("ingest " + file + " --store " + file + " --sweep s", &out), 1) << out;
  EXPECT_NE(out.find("cannot create store directory " + file), std::string::npos) << out;
  EXPECT_EQ(out.find("[sketch]"), std::string::npos) << out;
}

// `check` on a store damaged behind its back (tests/store/check_test.cc covers each kind of
// damage; this is the command's exit code and output).
TEST(CliStoreTest, CheckNamesTheDamageAndExitsNonZero) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  dir.Write("site/a.html", ReadWholeFile(kSamples + "page-a.html"));
  dir.Write("site/b.html", ReadWholeFile(kSamples + "page-b.html"));
  std::string out;
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/site --store " + store + " --sweep s1", &out), 0)
      << out;
  ASSERT_EQ(RunCli("check --store " + store, &out), 0) << out;
  {
    // count.documents (FORMAT.md, "Meta": an 8-byte little-endian u64) one more than stored.
    MDB_env* env = nullptr;
    ASSERT_EQ(mdb_env_create(&env), 0);
    ASSERT_EQ(mdb_env_set_maxdbs(env, 32), 0);
    ASSERT_EQ(mdb_env_open(env, store.c_str(), 0, 0644), 0);
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
    MDB_dbi meta = 0;
    ASSERT_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    std::string key = "count.documents";
    MDB_val k{key.size(), key.data()}, v;
    ASSERT_EQ(mdb_get(txn, meta, &k, &v), 0);
    ASSERT_EQ(v.mv_size, 8u);
    const auto* bytes = static_cast<const unsigned char*>(v.mv_data);
    uint64_t count = 0;
    for (int i = 7; i >= 0; --i) count = (count << 8) | bytes[i];
    ASSERT_EQ(count, 2u);
    ++count;
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(count >> (8 * i));
    MDB_val nv{8, le};
    ASSERT_EQ(mdb_put(txn, meta, &k, &nv, 0), 0);
    ASSERT_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
  }
  EXPECT_EQ(RunCli("check --store " + store, &out), 1) << out;
  EXPECT_NE(out.find("meta count.documents is 3, the store has 2"), std::string::npos) << out;
  EXPECT_EQ(out.find("consistent"), std::string::npos) << out;
  EXPECT_EQ(RunCli("check --store " + store + " --json", &out), 1) << out;
  json j = json::parse(out);
  EXPECT_EQ(j["ok"], false);
  ASSERT_EQ(j["problems"].size(), 1u) << out;
  EXPECT_EQ(j["problems"][0], "meta count.documents is 3, the store has 2");
}

TEST(CliStoreTest, IngestFileUrlsAndErrors) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  const std::string page = dir.Write("p.html", ReadWholeFile(kSamples + "page-a.html"));
  std::string out;
  // A path that is not there: a usage error before anything is stored (or the store created).
  EXPECT_EQ(RunCli("ingest " + page + " " + dir.path() + "/missing --store " + store +
                       " --sweep s --json",
                   &out),
            2);
  EXPECT_NE(out.find("missing: not a file or directory"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(store));
  ASSERT_EQ(RunCli("ingest " + page + " --store " + store + " --sweep s --json", &out), 0) << out;
  EXPECT_NE(out.find("\"errors\":0"), std::string::npos) << out;
  ASSERT_EQ(RunCli("history file://" + page + " --store " + store + " --json", &out), 0) << out;
  EXPECT_EQ(RunCli("ingest " + page + " --store " + store + " --sweep s --date nonsense", &out), 2);
  // A name outside ASCII is stored percent-encoded, and found however the query spells it.
  const std::string cafe = dir.Write("caf\xc3\xa9.html", ReadWholeFile(kSamples + "page-b.html"));
  ASSERT_EQ(RunCli("ingest " + cafe + " --store " + store + " --sweep s --json", &out), 0) << out;
  for (const std::string& url : {"file://" + cafe, "file://" + dir.path() + "/caf%c3%a9.html",
                                 "file://" + dir.path() + "/./caf%C3%A9.html#top"}) {
    ASSERT_EQ(RunCli("history '" + url + "' --store " + store + " --json", &out), 0) << url << out;
    EXPECT_EQ(json::parse(out)["url"], "file://" + dir.path() + "/caf%C3%A9.html") << out;
  }
}

// The URLs a store holds, in order (`list urls`).
std::vector<std::string> StoredUrls(const std::string& store) {
  std::string out;
  EXPECT_EQ(RunCli("list urls --store " + store + " --format json", &out), 0) << out;
  std::vector<std::string> urls;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line, nullptr, false);
    EXPECT_TRUE(j.is_object()) << line;
    if (j.is_object()) urls.push_back(j["url"]);
  }
  return urls;
}

// A web site's folder holds its style sheets and images beside its pages: without options every
// file is a document, as it always was (a source tree is ingested whole); --include and --exclude
// choose, a pattern with a '/' by the path below the folder, one without by the file name.
TEST(CliStoreTest, IngestIncludeAndExcludeChooseTheFilesOfAFolder) {
  TempDir dir;
  dir.Write("site/index.html", SyntheticPage(1));
  dir.Write("site/docs/a.html", SyntheticPage(2));
  dir.Write("site/assets/x.html", SyntheticPage(3));
  dir.Write("site/style.css", "body { color: black; margin: 0 auto; font-family: serif; }");
  dir.Write("site/assets/logo.svg", "<svg xmlns='http://www.w3.org/2000/svg'><circle r='4'/></svg>");
  const std::string site = dir.path() + "/site";
  auto ingest = [&](const std::string& store, const std::string& options) {
    std::string out;
    EXPECT_EQ(RunCli("ingest " + options + " --store " + dir.path() + "/" + store +
                         " --sweep s --base-url https://ex.test/ --json",
                     &out),
              0)
        << options << ": " << out;
    return json::parse(out, nullptr, false);
  };
  json summary = ingest("all", site);
  EXPECT_EQ(summary["pages"], 5) << summary.dump();
  EXPECT_EQ(summary["files_excluded"], 0) << summary.dump();
  EXPECT_EQ(StoredUrls(dir.path() + "/all"),
            (std::vector<std::string>{"https://ex.test/assets/logo.svg",
                                      "https://ex.test/assets/x.html", "https://ex.test/docs/a.html",
                                      "https://ex.test/index.html", "https://ex.test/style.css"}));

  summary = ingest("no_assets", site + " --exclude '*.css' --exclude '*.svg'");
  EXPECT_EQ(summary["pages"], 3) << summary.dump();
  EXPECT_EQ(summary["files_excluded"], 2) << summary.dump();
  EXPECT_EQ(StoredUrls(dir.path() + "/no_assets"),
            (std::vector<std::string>{"https://ex.test/assets/x.html", "https://ex.test/docs/a.html",
                                      "https://ex.test/index.html"}));

  // The options before the folder: each takes one pattern. An exclude wins over an include.
  summary = ingest("pages", "--include '*.html' --exclude 'assets/*' " + site);
  EXPECT_EQ(summary["pages"], 2) << summary.dump();
  EXPECT_EQ(summary["files_excluded"], 3) << summary.dump();
  EXPECT_EQ(StoredUrls(dir.path() + "/pages"),
            (std::vector<std::string>{"https://ex.test/docs/a.html", "https://ex.test/index.html"}));

  // A pattern with a '/' is matched against the whole path below the folder; '*' crosses '/'.
  summary = ingest("docs", site + " --include 'docs/*'");
  EXPECT_EQ(StoredUrls(dir.path() + "/docs"),
            (std::vector<std::string>{"https://ex.test/docs/a.html"}));

  // A file named on the command line is read: the patterns choose among a folder's files.
  summary = ingest("named", site + "/style.css --include '*.html'");
  EXPECT_EQ(summary["pages"], 1) << summary.dump();
  EXPECT_EQ(StoredUrls(dir.path() + "/named"),
            (std::vector<std::string>{"https://ex.test/style.css"}));
}

// A page on which the two canonicalizers give different tokens
// (dedup/CANONICALIZER_DIFFERENCES.md, kind 1): Gumbo moves the text that is inside the table but
// outside a cell in front of the table; the streaming canonicalizer keeps it where it is.
const char kFosterParented[] =
    "<html><body><table><tr><td>alpha beta gamma delta</td>epsilon zeta eta theta</tr></table>"
    "iota kappa lambda mu</body></html>";
// Gumbo's tokens of that page, as plain text.
const char kGumboOrder[] = "epsilon zeta eta theta alpha beta gamma delta iota kappa lambda mu";

TEST(CliStoreTest, IngestAndSimilarSketchWithTheConfiguredCanonicalizer) {
  TempDir dir;
  const std::string page = dir.Write("page.html", kFosterParented);
  const std::string text = dir.Write("text.txt", kGumboOrder);
  const std::string gumbo = dir.Write("gumbo.toml", "[ingest]\ncanonicalizer = \"gumbo\"\n");
  std::string out;
  // One store per canonicalizer: the text first, then the page, which Gumbo's tokens make a
  // copy of the text and the streaming canonicalizer's make a page of its own.
  for (const bool use_gumbo : {true, false}) {
    SCOPED_TRACE(use_gumbo ? "gumbo" : "streaming");
    const std::string store = dir.path() + (use_gumbo ? "/gumbo" : "/streaming");
    const std::string config = use_gumbo ? " --config " + gumbo : "";
    ASSERT_EQ(RunCli("ingest " + text + " --store " + store + config + " --sweep s --json", &out),
              0)
        << out;
    ASSERT_EQ(RunCli("ingest " + page + " --store " + store + config + " --sweep s --json", &out),
              0)
        << out;
    json j = json::parse(out);
    EXPECT_EQ(j["duplicate"], use_gumbo ? 1 : 0) << out;
    EXPECT_EQ(j["new"], use_gumbo ? 0 : 1) << out;

    ASSERT_EQ(RunCli("history file://" + text + " --store " + store + " --json", &out), 0) << out;
    const int text_doc = json::parse(out)["versions"][0]["doc"];
    ASSERT_EQ(RunCli("history file://" + page + " --store " + store + " --json", &out), 0) << out;
    const int page_doc = json::parse(out)["versions"][0]["doc"];
    ASSERT_EQ(RunCli("cluster " + std::to_string(page_doc) + " --store " + store + " --json", &out),
              0)
        << out;
    EXPECT_EQ(json::parse(out)["size"], use_gumbo ? 2 : 1) << out;

    // `similar --file` sketches the page as the configuration says, so it finds the text (with
    // Gumbo) or the page's own document (streaming) at resemblance 1.
    ASSERT_EQ(RunCli("similar --file " + page + " --store " + store + config + " --json", &out), 0)
        << out;
    j = json::parse(out);
    ASSERT_FALSE(j["results"].empty()) << out;
    EXPECT_EQ(j["results"][0]["doc"], use_gumbo ? text_doc : page_doc) << out;
    EXPECT_DOUBLE_EQ(j["results"][0]["resemblance"].get<double>(), 1.0) << out;
  }

  // An unknown canonicalizer is refused before the store is touched.
  const std::string lxml = dir.Write("lxml.toml", "[ingest]\ncanonicalizer = \"lxml\"\n");
  EXPECT_EQ(
      RunCli("ingest " + page + " --store " + dir.path() + "/other --config " + lxml + " --sweep s",
             &out),
      2);
  EXPECT_NE(out.find("canonicalizer"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/other"));
}

}  // namespace
}  // namespace shingled::testing
