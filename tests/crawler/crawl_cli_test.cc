// `shingled crawl` end to end over a loopback site served by the test: two sweeps with changes
// in between (a page edited, a page moved with a redirect, a page removed, a page added) leave
// versions, dead URLs and lost-and-found answers that tell that story.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/crawler/test_server.h"
#include "tests/crawler/test_site.h"
#include "tests/daemon/run_shingled.h"

namespace shingled {
namespace {

using nlohmann::json;
using testing::Article;
using testing::Site;

using Result = testing::CliResult;
using testing::InterruptedRun;
using testing::InterruptOnATerminal;
using testing::RunShingled;

// A directory of its own under the test temp dir: tests run in parallel processes, and other
// checkouts may run the same tests at the same time.
std::filesystem::path FreshDir(const std::string& name) {
  std::string pattern = ::testing::TempDir() + name + "_XXXXXX";
  const char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr) << pattern;
  return made == nullptr ? std::filesystem::path(pattern) : std::filesystem::path(made);
}

TEST(CrawlCliTest, TwoSweepsTellTheStory) {
  const std::filesystem::path dir = FreshDir("crawl_cli_store");
  std::filesystem::remove_all(dir);
  Site site;
  testing::TestServer server;
  site.Serve(&server, {"/", "/a.html", "/b.html", "/old.html", "/new.html", "/gone.html",
                       "/orphan.html", "/added.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200,
           "<a href='a.html'>a</a><a href='b.html'>b</a><a href='old.html'>old</a>"
           "<a href='gone.html'>gone</a><a href='orphan.html'>orphan</a>");
  site.Set("/a.html", 200, Article("apples"));
  site.Set("/b.html", 200, Article("bananas"));
  site.Set("/old.html", 200, Article("oranges"));
  site.Set("/gone.html", 200, Article("grapes"));
  site.Set("/orphan.html", 200, Article("lemons"));

  const std::string common = "--store '" + dir.string() + "' --seed " + server.Url("/") +
                             " --allow-private-addresses --delay 0";
  Result first = RunShingled("crawl " + common + " --sweep one");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const json one = json::parse(first.out);
  EXPECT_EQ(one["pages"], 6);
  EXPECT_EQ(one["stored"], 6);
  EXPECT_EQ(one["closed"], true);

  // Between the sweeps: a.html edited, old.html moved to new.html with a redirect, gone.html
  // removed and no longer linked (only the revisit of known URLs finds its 404), orphan.html no
  // longer linked but still served (revisited: unchanged, not gone), added.html added.
  site.Set("/", 200,
           "<a href='a.html'>a</a><a href='b.html'>b</a><a href='old.html'>old</a>"
           "<a href='added.html'>added</a>");
  site.Set("/a.html", 200, Article("apples", "One more sentence was added to this page."));
  site.Set("/new.html", 200, Article("oranges"));
  site.Set("/old.html", 301, "/new.html");
  site.Remove("/gone.html");
  site.Set("/added.html", 200, Article("cherries"));
  Result second = RunShingled("crawl " + common + " --sweep two");
  ASSERT_EQ(second.exit_code, 0) << second.out;
  const json two = json::parse(second.out);
  EXPECT_EQ(two["known_urls"], 6);
  EXPECT_EQ(two["dead"], 1);
  EXPECT_EQ(two["pages"], 6);  // /, a, b, old (-> new), orphan, added

  auto history = [&](const std::string& path) {
    Result r = RunShingled("history --store '" + dir.string() + "' --json " + server.Url(path));
    EXPECT_EQ(r.exit_code, 0) << path << r.out;
    return json::parse(r.out)["versions"];
  };
  const json b = history("/b.html");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1]["verdict"], "unchanged");
  const json orphan = history("/orphan.html");
  ASSERT_EQ(orphan.size(), 2u);
  EXPECT_EQ(orphan[1]["verdict"], "unchanged");
  const json a = history("/a.html");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_NE(a[1]["verdict"], "unchanged");
  EXPECT_NE(a[1]["doc"], a[0]["doc"]);
  const json gone = history("/gone.html");
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[1]["status"], 404);  // recorded dead at the second sweep's date
  EXPECT_EQ(gone[1]["doc"], 0);
  // The redirect is recorded on the URL that answered it, with its target, not as gone (issue
  // 30: it was recorded gone when sweep two closed, as if the crawler had not seen it).
  const json old_page = history("/old.html");
  ASSERT_EQ(old_page.size(), 2u);
  EXPECT_EQ(old_page[1]["status"], 301);
  EXPECT_EQ(old_page[1]["verdict"], "redirect");
  EXPECT_EQ(old_page[1]["location"], server.Url("/new.html"));
  EXPECT_EQ(old_page[1]["doc"], 0);
  const json added = history("/added.html");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0]["verdict"], "new");

  // Lost and found: the moved page's content lives on at its new URL.
  Result lost =
      RunShingled("lost --store '" + dir.string() + "' --json " + server.Url("/old.html"));
  ASSERT_EQ(lost.exit_code, 0) << lost.out;
  const json found = json::parse(lost.out)["best"];
  ASSERT_FALSE(found.is_null()) << lost.out;
  EXPECT_EQ(found["url"], server.Url("/new.html"));
  EXPECT_DOUBLE_EQ(found["resemblance"].get<double>(), 1.0);
  std::filesystem::remove_all(dir);
}

// GNU wget crawls a loopback site into a WARC; `shingled ingest` reads it with each page's URL
// and WARC-Date. A copy with one damaged gzip member still goes in, minus that record, and the
// damage is reported with its offset.
TEST(CrawlCliTest, IngestsTheWarcWgetWrote) {
  if (std::system("wget --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no GNU wget";
  const std::filesystem::path dir = FreshDir("warc_ingest");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  testing::TestServer server;
  server.Page("/", "<a href='p1.html'>1</a><a href='p2.html'>2</a><a href='p3.html'>3</a>");
  server.Page("/p1.html", Article("peaches"));
  server.Page("/p2.html", Article("pears"));
  server.Page("/p3.html", Article("plums"));
  ASSERT_TRUE(server.Start());
  const std::string warc = (dir / "site").string();
  const std::string wget = "cd '" + dir.string() +
                           "' && wget --no-config --no-proxy --quiet --tries=1 --recursive "
                           "--level=2 --no-parent --warc-file='" +
                           warc + "' " + server.Url("/") + " >/dev/null 2>&1";
  ASSERT_NE(std::system(wget.c_str()), -1);
  ASSERT_TRUE(std::filesystem::exists(warc + ".warc.gz"));

  const std::string store = (dir / "store").string();
  Result r =
      RunShingled("ingest --store '" + store + "' --sweep wget --json '" + warc + ".warc.gz'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json summary = json::parse(r.out);
  EXPECT_EQ(summary["pages"], 5);  // 4 pages and the dead /robots.txt (404)
  EXPECT_EQ(summary["errors"], 0);
  Result h = RunShingled("history --store '" + store + "' --json " + server.Url("/p2.html"));
  ASSERT_EQ(h.exit_code, 0);
  const json versions = json::parse(h.out)["versions"];
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions[0]["status"], 200);
  const std::string date = versions[0]["date"];
  EXPECT_EQ(date.substr(0, 2), "20");  // the WARC-Date wget wrote, not a made-up one

  // Damage the middle of the file: the record whose member it hits is lost, the rest goes in.
  // Where the 40 bytes fall moves with wget's port and dates; they may end one member and start
  // the next (a request and a response: one page), and damaged deflate data may decode on over
  // the members after it (the reader then looks for them inside the damaged one).
  std::string bytes;
  {
    std::ifstream in(warc + ".warc.gz", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 40; ++i) bytes[i] ^= 0x55;
  const std::string damaged = (dir / "damaged.warc.gz").string();
  {
    std::ofstream out(damaged, std::ios::binary);
    out << bytes;
  }
  const std::string store2 = (dir / "store2").string();
  const std::string err_file = (dir / "stderr.txt").string();
  const std::string cmd = std::string(SHINGLED_BINARY) + " ingest --store '" + store2 +
                          "' --sweep damaged --json '" + damaged + "' 2>'" + err_file + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  EXPECT_EQ(WEXITSTATUS(status), 1);  // errors were reported
  const json partial = json::parse(out);
  EXPECT_GE(partial["pages"].get<int>(), 4);  // at most one of the five is in the damage
  EXPECT_GE(partial["errors"].get<int>(), 1);
  std::ifstream err_in(err_file);
  const std::string err((std::istreambuf_iterator<char>(err_in)), {});
  EXPECT_NE(err.find("offset "), std::string::npos) << err;
  std::filesystem::remove_all(dir);
}

// The same site crawled by shingled's own crawler gives the same documents as the WARC
// GNU wget wrote. wget's WARC goes into sweep "wget", `shingled crawl` of the site into sweep
// "ours" of the same store: every page is "unchanged", the same document. Then wget crawls again
// with --warc-dedup, writing `revisit` records for the unchanged payloads: they go in as
// unchanged versions of the same documents.
TEST(CrawlCliTest, OurCrawlerAndWgetGiveTheSameDocuments) {
  if (std::system("wget --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no GNU wget";
  const std::filesystem::path dir = FreshDir("wget_same");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  testing::TestServer server;
  const std::vector<std::string> paths = {"/", "/p1.html", "/p2.html", "/p3.html"};
  server.Page("/", "<html><body><a href='p1.html'>1</a> <a href='p2.html'>2</a> "
                   "<a href='p3.html'>3</a></body></html>");
  server.Page("/p1.html", Article("figs"));
  server.Page("/p2.html", Article("dates"));
  server.Page("/p3.html", Article("limes"));
  ASSERT_TRUE(server.Start());
  auto wget = [&](const std::string& name, const std::string& extra) {
    std::filesystem::remove_all(dir / ("127.0.0.1:" + std::to_string(server.port())));
    const std::string cmd = "cd '" + dir.string() +
                            "' && wget --no-config --no-proxy --quiet --tries=1 --recursive "
                            "--level=2 --no-parent --warc-file='" +
                            name + "' " + extra + " " + server.Url("/") + " >/dev/null 2>&1";
    ASSERT_NE(std::system(cmd.c_str()), -1);
    ASSERT_TRUE(std::filesystem::exists(dir / (name + ".warc.gz")));
  };
  const std::string store = "--store '" + (dir / "store").string() + "'";
  auto history = [&](const std::string& path) {
    Result r = RunShingled("history " + store + " --json " + server.Url(path));
    EXPECT_EQ(r.exit_code, 0) << path << r.out;
    return json::parse(r.out)["versions"];
  };

  wget("first", "--warc-cdx");
  Result r = RunShingled("ingest " + store + " --sweep wget --json '" +
                         (dir / "first.warc.gz").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json summary = json::parse(r.out);
  EXPECT_EQ(summary["new"], 4) << summary;
  EXPECT_EQ(summary["errors"], 0) << summary;

  r = RunShingled("crawl " + store + " --seed " + server.Url("/") +
                  " --allow-private-addresses --delay 0 --sweep ours");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  summary = json::parse(r.out);
  EXPECT_EQ(summary["stored"], 4) << summary;
  EXPECT_EQ(summary["verdicts"], json({{"unchanged", 4}})) << summary;
  for (const std::string& path : paths) {
    const json versions = history(path);
    ASSERT_EQ(versions.size(), 2u) << path << versions;
    EXPECT_EQ(versions[1]["verdict"], "unchanged") << path;
    EXPECT_EQ(versions[1]["doc"], versions[0]["doc"]) << path;
  }

  // wget again, deduplicating against its first crawl: revisit records, no payloads.
  wget("second", "--warc-dedup='" + (dir / "first.cdx").string() + "'");
  FILE* grep = popen(("zcat '" + (dir / "second.warc.gz").string() +
                      "' | grep -ac '^WARC-Type: revisit'")
                         .c_str(),
                     "r");
  ASSERT_NE(grep, nullptr);
  int revisits = 0;
  EXPECT_EQ(std::fscanf(grep, "%d", &revisits), 1);
  pclose(grep);
  EXPECT_GE(revisits, 4);  // the four pages (and wget's 404 for /robots.txt)
  r = RunShingled("ingest " + store + " --sweep wget-dedup --json '" +
                  (dir / "second.warc.gz").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  summary = json::parse(r.out);
  EXPECT_EQ(summary["unchanged"], 4) << summary;
  EXPECT_EQ(summary["new"], 0) << summary;
  EXPECT_EQ(summary["errors"], 0) << summary;
  for (const std::string& path : paths) {
    const json versions = history(path);
    ASSERT_EQ(versions.size(), 3u) << path << versions;
    EXPECT_EQ(versions[2]["verdict"], "unchanged") << path;
    EXPECT_EQ(versions[2]["doc"], versions[0]["doc"]) << path;
  }
  Result check = RunShingled("check " + store);
  EXPECT_EQ(check.exit_code, 0) << check.out;
  std::filesystem::remove_all(dir);
}

// `crawl --config` stores pages with [ingest]'s canonicalizer, as `serve` does. The two pages
// have the same tokens in Gumbo's tree and different ones in the streaming canonicalizer's
// (foster parenting, dedup/CANONICALIZER_DIFFERENCES.md kind 1), so they make one cluster with
// "gumbo" and two with the default.
TEST(CrawlCliTest, StoresWithTheConfiguredCanonicalizer) {
  const std::filesystem::path dir = FreshDir("crawl_canonicalizer");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string gumbo = (dir / "gumbo.toml").string();
  std::ofstream(gumbo) << "[ingest]\ncanonicalizer = \"gumbo\"\n";
  testing::TestServer server;
  server.Page("/table.html",
              "<html><body><table><tr><td>alpha beta gamma delta</td>epsilon zeta eta "
              "theta</tr></table>iota kappa lambda mu</body></html>");
  server.Page("/text.html", "epsilon zeta eta theta alpha beta gamma delta iota kappa lambda mu");
  ASSERT_TRUE(server.Start());

  for (const bool use_gumbo : {true, false}) {
    SCOPED_TRACE(use_gumbo ? "gumbo" : "streaming");
    const std::string store = (dir / (use_gumbo ? "gumbo" : "streaming")).string();
    Result crawl = RunShingled("crawl --store '" + store + "' --seed " + server.Url("/text.html") +
                               " --seed " + server.Url("/table.html") +
                               " --allow-private-addresses --delay 0 --sweep s" +
                               (use_gumbo ? " --config '" + gumbo + "'" : ""));
    ASSERT_EQ(crawl.exit_code, 0) << crawl.out;
    EXPECT_EQ(json::parse(crawl.out)["stored"], 2) << crawl.out;
    Result history =
        RunShingled("history --store '" + store + "' --json " + server.Url("/table.html"));
    ASSERT_EQ(history.exit_code, 0) << history.out;
    const int doc = json::parse(history.out)["versions"][0]["doc"];
    Result cluster =
        RunShingled("cluster " + std::to_string(doc) + " --store '" + store + "' --json");
    ASSERT_EQ(cluster.exit_code, 0) << cluster.out;
    EXPECT_EQ(json::parse(cluster.out)["size"], use_gumbo ? 2 : 1) << cluster.out;
  }
  std::filesystem::remove_all(dir);
}

// A site of 20 articles linked from its root, served by `server` (started here), for the Ctrl-C
// tests: one fetch of the host every 0.5 s takes 10 s over them.
void ServeTwentyLinkedArticles(Site* site, testing::TestServer* server) {
  std::vector<std::string> paths = {"/", "/robots.txt"};
  std::string links;
  for (int i = 0; i < 20; ++i) {
    paths.push_back("/p" + std::to_string(i) + ".html");
    links += "<a href='p" + std::to_string(i) + ".html'>p</a>";
  }
  for (const std::string& path : paths) site->Serve(server, {path.c_str()});
  ASSERT_TRUE(server->Start());
  site->Set("/", 200, links);
  for (int i = 0; i < 20; ++i) site->Set(paths[i + 2], 200, Article("page " + std::to_string(i)));
}

// Ctrl-C during a crawl: the fetches in flight finish and are stored, the sweep is left open
// (nothing it did not reach is recorded gone), the summary is printed, and the exit code is 130.
TEST(CrawlCliTest, CtrlCLeavesTheSweepOpenAndPrintsTheSummary) {
  const std::filesystem::path dir = FreshDir("crawl_cli_interrupt");
  Site site;
  testing::TestServer server;
  ASSERT_NO_FATAL_FAILURE(ServeTwentyLinkedArticles(&site, &server));

  const std::string out_file = (dir / "out.json").string();
  const std::string store = (dir / "store").string();
  const std::string seed = server.Url("/");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (freopen(out_file.c_str(), "w", stdout) == nullptr) _exit(99);
    // One fetch of the host every 0.5 s: 20 pages take 10 s.
    execl(SHINGLED_BINARY, SHINGLED_BINARY, "crawl", "--store", store.c_str(), "--seed",
          seed.c_str(), "--allow-private-addresses", "--delay", "0.5", "--sweep", "one",
          static_cast<char*>(nullptr));
    _exit(98);
  }
  sleep(2);
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  std::ifstream in(out_file);
  const json summary = json::parse(in, nullptr, false);
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["closed"], false) << summary.dump();
  EXPECT_GE(summary["pages"].get<int>(), 1) << summary.dump();
  EXPECT_LT(summary["pages"].get<int>(), 21) << summary.dump();
  const Result sweeps = RunShingled("sweep list --json --store '" + store + "'");
  ASSERT_EQ(sweeps.exit_code, 0) << sweeps.out;
  const json list = json::parse(sweeps.out);
  EXPECT_EQ(list["sweeps"][0]["open"], true) << sweeps.out;
  EXPECT_EQ(list["sweeps"][0]["pages"], summary["stored"]) << sweeps.out << summary.dump();
  EXPECT_EQ(RunShingled("check --store '" + store + "'").exit_code, 0);
  std::filesystem::remove_all(dir);
}

// The bug: after Ctrl-C `crawl` said nothing until its summary, while the fetches in flight
// finished (up to crawler.total_timeout_ms each). It says so at once, once, as `ingest` does
// (tests/daemon/cli_progress_test.cc); on a terminal the progress line is erased first. stderr
// is a pseudo-terminal here: the first progress line tells the test that the stop is listened
// for (one fetch of the host every 0.5 s: the 20 pages would take 10 s).
TEST(CrawlCliTest, CtrlCSaysOnceThatItFinishesTheFetchesInFlight) {
  const std::filesystem::path dir = FreshDir("crawl_cli_announce");
  Site site;
  testing::TestServer server;
  ASSERT_NO_FATAL_FAILURE(ServeTwentyLinkedArticles(&site, &server));

  const std::string out_file = (dir / "out.json").string();
  const std::string store = (dir / "store").string();
  const std::string seed = server.Url("/");
  const InterruptedRun run =
      InterruptOnATerminal({"crawl", "--store", store, "--seed", seed, "--allow-private-addresses",
                            "--delay", "0.5", "--sweep", "one", "--json"},
                           out_file, "crawl one: ");
  const std::string& shown = run.shown;
  EXPECT_EQ(run.exit_code, 130);
  std::ifstream in(out_file);
  const json summary = json::parse(in, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << shown;
  EXPECT_EQ(summary["closed"], false) << summary.dump();
  const std::string message =
      "\r\033[Kshingled crawl: stopping: fetching no new pages, finishing the fetches in flight "
      "and storing their pages; the sweep is left open (Ctrl-C again to quit at once)";
  const size_t at = shown.find(message);
  ASSERT_NE(at, std::string::npos) << shown;
  EXPECT_EQ(shown.find("stopping:", at + message.size()), std::string::npos) << shown;
  EXPECT_EQ(RunShingled("check --store '" + store + "'").exit_code, 0);
  std::filesystem::remove_all(dir);
}

// Runs `args` under script(1), which gives the binary a terminal; returns what the terminal
// showed (stdout and stderr) and sets *exit_code.
std::string RunOnATerminal(const std::string& args, int* exit_code) {
  const std::string cmd =
      "script -qefc '" + std::string(SHINGLED_BINARY) + " " + args + "' /dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << cmd;
  if (pipe == nullptr) return "";
  std::string shown;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) shown.append(buf.data(), n);
  const int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return shown;
}

// On a terminal the summary is text for a person, and the progress line names the sweep and its
// pages/s with one decimal; --json prints the JSON there too. Off a terminal it is JSON without
// --json, as the tests above read it.
TEST(CrawlCliTest, SummaryIsTextOnATerminalAndJsonWithTheFlag) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  const std::filesystem::path dir = FreshDir("crawl_cli_terminal");
  Site site;
  testing::TestServer server;
  site.Serve(&server, {"/", "/a.html", "/b.html", "/robots.txt"});
  ASSERT_TRUE(server.Start());
  site.Set("/", 200, "<a href='a.html'>a</a><a href='b.html'>b</a>");
  site.Set("/a.html", 200, Article("apples"));
  site.Set("/b.html", 200, Article("bananas"));
  const std::string common = "--store " + (dir / "store").string() + " --seed " +
                             server.Url("/") + " --allow-private-addresses --delay 0";

  int exit_code = -1;
  std::string shown = RunOnATerminal("crawl " + common + " --sweep one", &exit_code);
  EXPECT_EQ(exit_code, 0) << shown;
  EXPECT_TRUE(std::regex_search(
      shown, std::regex("crawl one: [0-9,]+ fetched, [0-9,]+ pages, [0-9,]+ queued, [0-9,]+ "
                        "errors, [0-9,]+\\.[0-9] pages/s, [0-9,]+ s")))
      << shown;
  EXPECT_NE(shown.find("crawled sweep one: 3 fetched (3 pages, 0 dead, 0 redirected), 0 errors"),
            std::string::npos)
      << shown;
  EXPECT_NE(shown.find("stored 3: "), std::string::npos) << shown;
  EXPECT_NE(shown.find("sweep one closed"), std::string::npos) << shown;
  EXPECT_EQ(shown.find('{'), std::string::npos) << shown;

  shown = RunOnATerminal("crawl " + common + " --sweep two --json", &exit_code);
  EXPECT_EQ(exit_code, 0) << shown;
  const size_t open = shown.find('{');
  const size_t close = shown.rfind('}');
  ASSERT_NE(open, std::string::npos) << shown;
  ASSERT_NE(close, std::string::npos) << shown;
  const json summary = json::parse(shown.substr(open, close - open + 1), nullptr, false);
  ASSERT_TRUE(summary.is_object()) << shown;
  EXPECT_EQ(summary["sweep"], "two");
  EXPECT_EQ(summary["pages"], 3);
  EXPECT_EQ(summary["closed"], true);
  EXPECT_EQ(shown.find("crawled sweep"), std::string::npos) << shown;

  // In a script, JSON with or without --json.
  for (const std::string sweep : {"three", "four"}) {
    const Result r =
        RunShingled("crawl " + common + " --sweep " + sweep + (sweep == "four" ? " --json" : ""));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(json::parse(r.out, nullptr, false)["sweep"], sweep) << r.out;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shingled
