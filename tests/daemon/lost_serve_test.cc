// Lost and found end to end: a documentation-like site served on loopback is crawled
// by the daemon's crawler (sweep 1), reorganised into new folders with its pages' headers and
// navigation rewritten and their text lightly edited (resemblance 0.5-0.9 to the old; some old
// URLs answer 301 to the new one, the others 404, a few pages are deleted), crawled again (sweep
// 2, scoped and closed), and some moved pages are edited again (sweep 3). GET /v1/lost answers
// the new URL of every moved page and `dead` for the deleted ones. The same history through
// `shingled ingest` of dated folders and `shingled lost`. Each test prints the share of moved
// URLs answered correctly, with and without the later edit.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/crawler/test_server.h"
#include "tests/crawler/test_site.h"
#include "tests/daemon/daemon_harness.h"
#include "tests/store/doc_text.h"

namespace shingled::testing {
namespace {

using nlohmann::json;
using Seeds = std::vector<uint64_t>;

// 24 pages: 0-19 move (even ones answer 301 at the old URL, odd ones 404), 20-23 are deleted;
// 0-7 are edited again after the move.
constexpr int kPages = 24;
constexpr int kMoved = 20;
constexpr int kEditedAgain = 8;

std::string OldPath(int t) { return "/docs/page-" + std::to_string(t) + ".html"; }
std::string NewPath(int t) {
  return std::string(t < 10 ? "/guide/" : "/reference/") + "topic-" + std::to_string(t) + ".html";
}

// The site as a whole at one time: its layout and each page's body.
struct Layout {
  bool reorganised = false;
  std::vector<Seeds> bodies;  // by topic; empty: deleted
};

std::string Paragraphs(const Seeds& seeds) {
  std::string out;
  for (size_t i = 0; i < seeds.size(); i += 6) {
    out += "<p>";
    for (size_t j = i; j < i + 6 && j < seeds.size(); ++j) out += DocSentence(seeds[j]);
    out += "</p>\n";
  }
  return out;
}

// A page: the layout's header and navigation, the body, a footer. The new layout rewrites the
// header (a breadcrumb, a notice, other navigation) on every page.
std::string PageHtml(const Layout& layout, int t) {
  std::string html = "<html><head><title>Topic " + std::to_string(t) + "</title></head><body>\n";
  if (layout.reorganised) {
    html += "<nav><a href='/'>Home</a> &gt; <a href='/'>" +
            std::string(t < 10 ? "Guide" : "Reference") + "</a></nav>\n<header><p>" +
            DocSentence(800000 + t) + DocSentence(800100) + "</p></header>\n";
  } else {
    html += "<nav><a href='/'>Documentation index</a></nav>\n<header><p>" + DocSentence(700000) +
            "</p></header>\n";
  }
  html += "<h1>Topic " + std::to_string(t) + "</h1>\n" + Paragraphs(layout.bodies[t]);
  html += "<footer><p>" + DocSentence(layout.reorganised ? 810000 : 710000) + "</p></footer>";
  return html + "</body></html>";
}

std::string IndexHtml(const Layout& layout) {
  std::string html = "<html><body><h1>Documentation</h1><ul>";
  for (int t = 0; t < kPages; ++t) {
    if (layout.bodies[t].empty()) continue;
    const std::string path = layout.reorganised ? NewPath(t) : OldPath(t);
    html += "<li><a href='" + path + "'>Topic " + std::to_string(t) + "</a></li>";
  }
  return html + "</ul></body></html>";
}

Layout Sweep1() {
  Layout l;
  for (int t = 0; t < kPages; ++t) l.bodies.push_back(DocPage(100 + t, 48));
  return l;
}
// Moved pages edited on the way (a sentence in 16 rewritten besides the new header); the
// deleted ones gone.
Layout Sweep2() {
  Layout l = Sweep1();
  l.reorganised = true;
  for (int t = 0; t < kPages; ++t) {
    l.bodies[t] = t < kMoved ? DocEdit(l.bodies[t], 0.06, 1000 + t) : Seeds{};
  }
  return l;
}
// Some moved pages edited again, heavily.
Layout Sweep3() {
  Layout l = Sweep2();
  for (int t = 0; t < kEditedAgain; ++t) l.bodies[t] = DocEdit(l.bodies[t], 0.3, 2000 + t);
  return l;
}

void Publish(Site* site, const Layout& layout) {
  site->Set("/", 200, IndexHtml(layout));
  for (int t = 0; t < kPages; ++t) {
    const bool deleted = layout.bodies[t].empty();
    if (!layout.reorganised) {
      site->Set(OldPath(t), 200, PageHtml(layout, t));
      continue;
    }
    if (!deleted) site->Set(NewPath(t), 200, PageHtml(layout, t));
    if (deleted || t % 2 == 1) {
      site->Remove(OldPath(t));  // 404
    } else {
      site->Set(OldPath(t), 301, NewPath(t));
    }
  }
}

// The share of moved URLs `answer` (old URL -> the lost-and-found JSON) gives the right new URL,
// with and without the later edit, and the deleted ones it calls dead; printed, and every one
// expected right.
// With `cluster_of` (a document id -> its cluster id), it also counts the moves whose new content
// is still in the old document's cluster: all that an answer from cluster membership alone (the
// answer before lost and found followed content) could find.
void ExpectEveryMoveFound(const std::string& how, const std::string& base,
                          const std::function<json(const std::string&)>& answer,
                          const std::function<int64_t(int64_t)>& cluster_of = nullptr) {
  int right_edited = 0, right_plain = 0, dead_right = 0, in_cluster = 0;
  for (int t = 0; t < kPages; ++t) {
    SCOPED_TRACE(OldPath(t));
    const json lost = answer(base + OldPath(t));
    ASSERT_TRUE(lost.is_object()) << lost.dump();
    if (t >= kMoved) {
      EXPECT_EQ(lost["status"], "dead") << lost.dump(2);
      dead_right += lost["status"] == "dead";
      continue;
    }
    EXPECT_EQ(lost["status"], "moved") << lost.dump(2);
    ASSERT_TRUE(lost["best"].is_object()) << lost.dump(2);
    EXPECT_EQ(lost["best"]["url"], base + NewPath(t)) << lost.dump(2);
    EXPECT_FALSE(lost["last_seen_live"].is_null());
    const bool right = lost["best"]["url"] == base + NewPath(t);
    if (cluster_of != nullptr && right) {
      in_cluster +=
          cluster_of(lost["best"]["doc"].get<int64_t>()) == lost["cluster"].get<int64_t>();
    }
    (t < kEditedAgain ? right_edited : right_plain) += right;
  }
  std::printf(
      "lost-and-found (%s): %d/%d moved URLs answered right (%d/%d edited again after the "
      "move, %d/%d not), %d/%d deleted URLs dead\n",
      how.c_str(), right_edited + right_plain, kMoved, right_edited, kEditedAgain, right_plain,
      kMoved - kEditedAgain, dead_right, kPages - kMoved);
  if (cluster_of != nullptr) {
    std::printf(
        "lost-and-found (%s): %d/%d moved pages' content now in the old document's "
        "cluster\n",
        how.c_str(), in_cluster, kMoved);
  }
}

std::vector<std::string> AllPaths() {
  std::vector<std::string> paths = {"/", "/robots.txt"};
  for (int t = 0; t < kPages; ++t) {
    paths.push_back(OldPath(t));
    paths.push_back(NewPath(t));
  }
  return paths;
}

json Get(int port, const std::string& target, int* status = nullptr) {
  HttpClient client(port);
  HttpResponse r = client.Request("GET", target);
  if (status != nullptr) *status = r.status;
  return json::parse(r.body, nullptr, false);
}

// POST /v1/crawl, then polls GET /v1/crawl until that sweep has finished; its summary.
json CrawlOnce(int port) {
  HttpClient client(port);
  HttpResponse r = client.Request("POST", "/v1/crawl");
  EXPECT_EQ(r.status, 202) << r.body;
  const json started = json::parse(r.body, nullptr, false);
  const std::string name = started.is_object() && started["sweep"].is_string()
                               ? started["sweep"].get<std::string>()
                               : "";
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  json crawl;
  while (Clock::now() < deadline) {
    crawl = Get(port, "/v1/crawl");
    if (crawl.is_object() && crawl["running"] == false && crawl["sweep"].is_object() &&
        !crawl["sweep"]["finished"].is_null() && crawl["sweep"]["sweep"] == name) {
      return crawl["sweep"];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  }
  ADD_FAILURE() << "the sweep did not finish: " << crawl.dump();
  return json();
}

TEST(LostServeTest, EveryMovedPageIsFoundAfterACrawledReorganisation) {
  Site site;
  TestServer server;
  for (const std::string& path : AllPaths()) {
    server.Route(path, [&site](const TestRequest& request) { return site.Answer(request); });
  }
  ASSERT_TRUE(server.Start());
  const std::string base = server.Url("");
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store",
                "[ingest]\ndefault_sweep = \"\"\n[crawler]\nenabled = true\nseeds = [\"" +
                    server.Url("/") +
                    "\"]\nallow_private_addresses = true\nper_host_delay_ms = 0\nevery = "
                    "\"off\"\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const int port = daemon.port();

  Publish(&site, Sweep1());
  json sweep = CrawlOnce(port);
  EXPECT_EQ(sweep["pages"], kPages + 1) << sweep.dump();
  Publish(&site, Sweep2());
  // Sweep names carry the second they started: make the next one's differ.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  sweep = CrawlOnce(port);
  EXPECT_EQ(sweep["closed"], true) << sweep.dump();
  EXPECT_EQ(sweep["dead"], kPages - kMoved + kMoved / 2) << sweep.dump();  // the 404s
  Publish(&site, Sweep3());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  sweep = CrawlOnce(port);
  EXPECT_EQ(sweep["closed"], true) << sweep.dump();

  // What the edits made: every moved page resembles its old self 0.5-0.9 after sweep 2.
  for (int t = 0; t < kMoved; ++t) {
    const json lost = Get(port, "/v1/lost?url=" + Q(base + OldPath(t)));
    if (!lost["best"].is_object()) continue;  // reported below
    const double r = lost["best"]["resemblance"].get<double>();
    if (t % 2 == 1) {  // found by content: the resemblance of the version that matched
      EXPECT_GE(r, 0.5) << lost.dump(2);
      EXPECT_LE(r, 0.9) << lost.dump(2);
    } else {
      EXPECT_EQ(lost["best"]["evidence"], "redirect") << lost.dump(2);
      EXPECT_EQ(lost["best"]["redirect"]["status"], 301) << lost.dump(2);
    }
    if (t % 2 == 1 && t < kEditedAgain) {  // found through its version of sweep 2
      EXPECT_LT(lost["best"]["resemblance_now"].get<double>(), r) << lost.dump(2);
      EXPECT_NE(lost["best"]["why"].get<std::string>().find("edited since"), std::string::npos)
          << lost.dump(2);
    }
  }
  ExpectEveryMoveFound(
      "crawler, GET /v1/lost", base,
      [&](const std::string& url) { return Get(port, "/v1/lost?url=" + Q(url)); },
      [&](int64_t doc) {
        const json d = Get(port, "/v1/documents/" + std::to_string(doc));
        return d.is_object() ? d["cluster"].get<int64_t>() : int64_t{-1};
      });
  if (::testing::Test::HasFailure()) {  // one answer in full, to see why
    std::printf("%s\n", Get(port, "/v1/lost?url=" + Q(base + OldPath(1))).dump(2).c_str());
  }

  // A URL never seen: 404 saying so; a bad request: 400.
  int status = 0;
  const json never = Get(port, "/v1/lost?url=" + Q(base + "/never.html"), &status);
  EXPECT_EQ(status, 404) << never.dump();
  EXPECT_NE(never.dump().find("URL never stored"), std::string::npos) << never.dump();
  Get(port, "/v1/lost?url=" + Q(base + OldPath(0)) + "&limit=3", &status);
  EXPECT_EQ(status, 400);
  Get(port, "/v1/lost", &status);
  EXPECT_EQ(status, 400);

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(LostServeTest, EveryMovedPageIsFoundAfterDatedIngests) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  const std::string base = "http://docs.example";
  const Layout layouts[] = {Sweep1(), Sweep2(), Sweep3()};
  const char* dates[] = {"2024-01-01", "2024-02-01", "2024-03-01"};
  for (int s = 0; s < 3; ++s) {
    const std::string folder = "sweep" + std::to_string(s + 1);
    const Layout& layout = layouts[s];
    for (int t = 0; t < kPages; ++t) {
      if (layout.bodies[t].empty()) continue;
      dir.Write(folder + (layout.reorganised ? NewPath(t) : OldPath(t)), PageHtml(layout, t));
    }
    std::string out;
    std::string args = "ingest '" + dir.path() + "/" + folder + "' --store '" + store +
                       "' --sweep " + folder + " --date " + dates[s] + " --base-url " + base +
                       "/ --scope-prefix " + base + "/ --quiet --json";
    ASSERT_EQ(RunCli(args, &out), 0) << out;
    args = "sweep close " + folder + " --store '" + store + "' --date " + dates[s] + "T12:00:00Z";
    ASSERT_EQ(RunCli(args, &out), 0) << out;
  }
  ExpectEveryMoveFound("ingest, shingled lost", base, [&](const std::string& url) {
    std::string out;
    const int code = RunCli("lost '" + url + "' --store '" + store + "' --json", &out);
    EXPECT_EQ(code, 0) << out;
    return json::parse(out, nullptr, false);
  });
  std::string out;
  EXPECT_EQ(RunCli("lost '" + base + "/never.html' --store '" + store + "' --json", &out), 1)
      << out;
  EXPECT_NE(out.find("URL never stored"), std::string::npos) << out;
}

}  // namespace
}  // namespace shingled::testing
