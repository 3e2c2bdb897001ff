// Disk full, and back: the real daemon with its store on a small file system (a tmpfs
// the test mounts; skipped when it cannot) or at a small store.max_map_size. When a commit
// fails for lack of space, its pages are answered 507 with what is full (and so are NDJSON
// batches and WARC uploads), reads, /healthz and /metrics keep answering, /readyz says why, and
// every page acknowledged before is still there; when there is room again (the ballast deleted, the
// limit raised and reloaded) ingest resumes without a restart, and after one the store passes
// `shingled check`. Also: the crawler's own pages while the disk fills during a sweep (held and
// handed over again until there is room, never counted stored before), a daemon started on a
// disk already full (it serves reads and waits for room), and a new store on a full disk
// (refused with a message, not a SIGBUS in LMDB).
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/crawler/test_server.h"
#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using json = nlohmann::json;

// A tmpfs of `size` mounted at `path` while it lives: a real file system that fills up. Needs
// mount(2): root, or CAP_SYS_ADMIN.
class SmallTmpfs {
 public:
  SmallTmpfs(std::string path, const std::string& size) : path_(std::move(path)) {
    std::filesystem::create_directories(path_);
    std::string options = "size=";
    options.append(size);
    mounted_ = mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!mounted_) error_ = strerror(errno);
  }
  ~SmallTmpfs() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  bool mounted_ = false;
  std::string error_;
};

// Writes `path` until the file system is full; returns the bytes written.
uint64_t FillWithBallast(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  const std::string chunk(4096, 'b');
  uint64_t written = 0;
  while (out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()))) {
    out.flush();
    if (!out) break;
    written += chunk.size();
  }
  return written;
}

double Sample(const std::string& metrics, const std::string& series) {
  std::istringstream lines(metrics);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

class DiskFullTest : public ::testing::Test {
 protected:
  HttpResponse Call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "") {
    HttpClient client(daemon_->port());
    return client.Request(method, target, body, type);
  }
  HttpResponse PostPage(const std::string& url, int seed) {
    return Call("POST", "/v1/pages?url=" + Q(url), SyntheticPage(seed), "text/html");
  }
  void Start(const std::string& store, const std::string& config) {
    daemon_ = std::make_unique<Daemon>(dir_, store, config);
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
  }
  void Stop() {
    daemon_->Signal(SIGTERM);
    EXPECT_EQ(daemon_->Wait(), 0) << daemon_->log();
  }
  // Posts new pages until one is refused; every page answered 200 goes to acked_. Returns the
  // refusal (status 0 if none came within `max_pages`).
  HttpResponse PostUntilRefused(int max_pages) {
    for (int i = 0; i < max_pages; ++i) {
      const std::string url = "https://full.example/" + std::to_string(next_);
      HttpResponse r = PostPage(url, next_++);
      if (r.status != 200) return r;
      acked_.push_back(url);
    }
    return {};
  }
  // What a client, a probe and a scrape see while the store is out of space; `what` is in every
  // message (the directory, or the config key).
  void ExpectOutOfSpace(const HttpResponse& refused, const std::string& reason,
                        const std::string& what) {
    EXPECT_EQ(refused.status, 507) << refused.body;
    EXPECT_TRUE(refused.headers.count("retry-after")) << refused.body;
    json j = json::parse(refused.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << refused.body;
    EXPECT_EQ(j["error"]["code"], "insufficient_storage") << refused.body;
    const std::string message = j["error"]["message"];
    EXPECT_NE(message.find(what), std::string::npos) << message;
    // The next page is refused at once, with the same reason.
    HttpResponse again = PostPage("https://full.example/again", 1);
    EXPECT_EQ(again.status, 507) << again.body;
    EXPECT_NE(again.body.find(what), std::string::npos) << again.body;
    // Reads and probes go on.
    EXPECT_EQ(Call("GET", "/healthz").status, 200);
    HttpResponse ready = Call("GET", "/readyz");
    EXPECT_EQ(ready.status, 503) << ready.body;
    EXPECT_NE(ready.body.find(what), std::string::npos) << ready.body;
    HttpResponse metrics = Call("GET", "/metrics");
    ASSERT_EQ(metrics.status, 200);
    EXPECT_GE(
        Sample(metrics.body, "shingled_store_commit_failures_total{reason=\"" + reason + "\"}"), 1)
        << metrics.body;
    EXPECT_EQ(Sample(metrics.body, "shingled_store_writable"), 0) << metrics.body;
    ExpectEveryWriteRouteRefusedAndReadsAnswer(what);
    ExpectAcknowledgedPresent();
  }
  // The other ways pages come in are refused the same way, with 507 and `what`, never a 200
  // with errors inside or a generic 503: an NDJSON batch, a WARC upload, a gzip page. The
  // queries answer from the store as it was: similar (by URL and by body), a URL's history,
  // lost and found, stats, a document.
  void ExpectEveryWriteRouteRefusedAndReadsAnswer(const std::string& what) {
    std::string batch;
    for (int i = 0; i < 2; ++i) {
      batch
          .append(json{{"url", "https://full.example/batch" + std::to_string(i)},
                       {"content", SyntheticPage(200000 + i)},
                       {"content_type", "text/html"}}
                      .dump())
          .append("\n");
    }
    std::string warc;
    for (int i = 0; i < 2; ++i) {
      std::string http = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
      http.append(SyntheticPage(300000 + i));
      warc.append("WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: https://full.example/w")
          .append(std::to_string(i))
          .append("\r\nWARC-Date: 2026-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:full-")
          .append(std::to_string(i))
          .append(">\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: ")
          .append(std::to_string(http.size()))
          .append("\r\n\r\n")
          .append(http)
          .append("\r\n\r\n");
    }
    struct Write {
      std::string name, body, type;
    };
    for (const Write& w : {Write{"an NDJSON batch", batch, "application/x-ndjson"},
                           Write{"a WARC upload", warc, "application/warc"}}) {
      HttpResponse r = Call("POST", "/v1/pages", w.body, w.type);
      EXPECT_EQ(r.status, 507) << w.name << ": " << r.body;
      EXPECT_NE(r.body.find("insufficient_storage"), std::string::npos) << w.name << ": " << r.body;
      EXPECT_NE(r.body.find(what), std::string::npos) << w.name << ": " << r.body;
    }
    ASSERT_FALSE(acked_.empty());
    const std::string known = acked_.front();
    const std::vector<std::string> reads = {"/v1/similar?url=" + Q(known),
                                            "/v1/urls?url=" + Q(known), "/v1/stats",
                                            "/v1/lost?url=" + Q(known), "/v1/documents/1"};
    for (const std::string& target : reads) {
      EXPECT_EQ(Call("GET", target).status, 200) << target;
    }
    HttpResponse similar = Call("POST", "/v1/similar", SyntheticPage(1), "text/html");
    EXPECT_EQ(similar.status, 200) << similar.body;
  }
  void ExpectAcknowledgedPresent() {
    size_t missing = 0;
    for (const std::string& url : acked_) {
      if (Call("GET", "/v1/urls?url=" + Q(url)).status != 200) ++missing;
    }
    EXPECT_EQ(missing, 0u) << "of " << acked_.size() << " acknowledged pages";
  }
  // Posts one more page until it is stored (up to 60 s: the writer looks for room with a
  // backoff of at most 5 s); then the daemon is ready again.
  void ExpectIngestResumes() {
    const std::string url = "https://full.example/after";
    HttpResponse r;
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
    do {
      r = PostPage(url, 100000);
      if (r.status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // poll interval
    } while (Clock::now() < deadline);
    ASSERT_EQ(r.status, 200) << r.body << "\n" << daemon_->log();
    acked_.push_back(url);
    EXPECT_EQ(Call("GET", "/readyz").status, 200);
    EXPECT_EQ(Sample(Call("GET", "/metrics").body, "shingled_store_writable"), 1);
    EXPECT_TRUE(daemon_->WaitForLog("writes resume")) << daemon_->log();
  }
  // Stopped: `shingled check` passes; restarted, every acknowledged page is there.
  void ExpectConsistentAfterRestart(const std::string& store, const std::string& config) {
    Stop();
    std::string out;
    EXPECT_EQ(RunCli("check --store " + store, &out), 0) << out;
    Start(store, config);
    ExpectAcknowledgedPresent();
    Stop();
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
  std::vector<std::string> acked_;
  int next_ = 1;
};

// The disk: a 16 MiB tmpfs filled by a ballast file. Pages are refused with 507 naming the
// store's directory and its free bytes; deleting the ballast lets writes resume.
TEST_F(DiskFullTest, FullDiskAnswers507AndIngestResumesWhenSpaceReturns) {
  const std::string mnt = dir_.path() + "/tmpfs";
  SmallTmpfs tmpfs(mnt, "16m");
  if (!tmpfs.mounted()) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): " << tmpfs.error();
  }
  const std::string store = mnt + "/db";
  const std::string config = "[store]\ninitial_map_size = 67108864\n";
  Start(store, config);
  ASSERT_EQ(PostUntilRefused(20).status, 0);  // pages stored before the disk fills
  const uint64_t ballast = FillWithBallast(mnt + "/ballast");
  ASSERT_GT(ballast, uint64_t{1} << 20);
  // LMDB reuses free pages inside its file first: some pages may still go in.
  HttpResponse refused = PostUntilRefused(5000);
  ASSERT_NE(refused.status, 0) << "the disk never filled";
  ExpectOutOfSpace(refused, "disk_full", store);
  EXPECT_NE(refused.body.find("bytes free"), std::string::npos) << refused.body;
  EXPECT_NE(refused.body.find("disk full"), std::string::npos) << refused.body;

  std::filesystem::remove(mnt + "/ballast");
  ExpectIngestResumes();
  ExpectConsistentAfterRestart(store, config);
}

// The map: store.max_map_size of 2 MiB. Pages are refused with 507 naming the key and its value;
// raising it in the config and reloading (SIGHUP) lets writes resume.
TEST_F(DiskFullTest, FullMapAnswers507AndIngestResumesWhenTheLimitIsRaised) {
  const std::string store = dir_.path() + "/db";
  const std::string config = "[store]\ninitial_map_size = 1048576\nmax_map_size = 2097152\n";
  Start(store, config);
  HttpResponse refused = PostUntilRefused(5000);
  ASSERT_NE(refused.status, 0) << "the map never filled";
  ASSERT_FALSE(acked_.empty());
  ExpectOutOfSpace(refused, "map_full", "store.max_map_size = 2097152");
  EXPECT_NE(refused.body.find("map full"), std::string::npos) << refused.body;

  // A reload with the same limit changes nothing: still refused.
  daemon_->Signal(SIGHUP);
  ASSERT_TRUE(daemon_->WaitForLog("SIGHUP: reloaded")) << daemon_->log();
  EXPECT_EQ(PostPage("https://full.example/still", 2).status, 507);

  const std::string raised = "[store]\ninitial_map_size = 1048576\nmax_map_size = 67108864\n";
  { std::ofstream(daemon_->config_path(), std::ios::trunc) << raised; }
  daemon_->Signal(SIGHUP);
  ASSERT_TRUE(daemon_->WaitForLog("changed store.max_map_size")) << daemon_->log();
  ExpectIngestResumes();
  ExpectConsistentAfterRestart(store, raised);
}

// A daemon restarted on a disk that is already full: it starts, because an operator restarting
// it wants the reads to keep working. /healthz and /metrics answer, reads answer from the store,
// /readyz and the log say the disk is full and where, pages are refused with 507 naming the
// store's directory; when space returns, ingest resumes without a restart.
TEST_F(DiskFullTest, DaemonStartedOnAFullDiskServesReadsAndResumesWritesWhenSpaceReturns) {
  const std::string mnt = dir_.path() + "/tmpfs";
  SmallTmpfs tmpfs(mnt, "16m");
  if (!tmpfs.mounted()) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): " << tmpfs.error();
  }
  const std::string store = mnt + "/db";
  const std::string config = "[store]\ninitial_map_size = 67108864\n";
  Start(store, config);
  ASSERT_EQ(PostUntilRefused(20).status, 0);
  Stop();
  ASSERT_GT(FillWithBallast(mnt + "/ballast"), uint64_t{1} << 20);

  Start(store, config);
  ASSERT_TRUE(daemon_->WaitForLog("disk full")) << daemon_->log();
  const std::string log = daemon_->log();
  EXPECT_NE(log.find(store), std::string::npos) << log;
  EXPECT_NE(log.find("writes wait for room"), std::string::npos) << log;
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
  HttpResponse ready = Call("GET", "/readyz");
  EXPECT_EQ(ready.status, 503) << ready.body;
  EXPECT_NE(ready.body.find(store), std::string::npos) << ready.body;
  EXPECT_NE(ready.body.find("disk full"), std::string::npos) << ready.body;
  HttpResponse metrics = Call("GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_EQ(Sample(metrics.body, "shingled_store_writable"), 0) << metrics.body;
  HttpResponse refused = PostPage("https://full.example/refused", 50000);
  EXPECT_EQ(refused.status, 507) << refused.body;
  EXPECT_NE(refused.body.find("insufficient_storage"), std::string::npos) << refused.body;
  EXPECT_NE(refused.body.find(store), std::string::npos) << refused.body;
  ExpectEveryWriteRouteRefusedAndReadsAnswer(store);
  ExpectAcknowledgedPresent();

  std::filesystem::remove(mnt + "/ballast");
  ExpectIngestResumes();
  ExpectConsistentAfterRestart(store, config);
}

// Defect: a store created on a full disk killed the daemon with SIGBUS inside LMDB
// (mdb_env_open writes its new lock file through a map, and the file system had no block for
// it), with nothing in the log. Now the daemon refuses to start, saying the disk is full, where,
// and how many bytes it needs; with room it starts.
TEST_F(DiskFullTest, NewStoreOnAFullDiskIsRefusedWithAMessageNotASigbus) {
  const std::string mnt = dir_.path() + "/tmpfs";
  SmallTmpfs tmpfs(mnt, "16m");
  if (!tmpfs.mounted()) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): " << tmpfs.error();
  }
  ASSERT_GT(FillWithBallast(mnt + "/ballast"), uint64_t{1} << 20);
  const std::string store = mnt + "/db";
  const std::string config = "[store]\ninitial_map_size = 67108864\n";
  daemon_ = std::make_unique<Daemon>(dir_, store, config);
  EXPECT_EQ(daemon_->port(), 0) << daemon_->log();
  EXPECT_EQ(daemon_->Wait(), 1) << daemon_->log();  // kExitFailure, not 128 + SIGBUS
  const std::string log = daemon_->log();
  EXPECT_NE(log.find("cannot open the store"), std::string::npos) << log;
  EXPECT_NE(log.find("disk full"), std::string::npos) << log;
  EXPECT_NE(log.find(store), std::string::npos) << log;
  EXPECT_NE(log.find("bytes free"), std::string::npos) << log;
  EXPECT_NE(log.find("fewer than"), std::string::npos) << log;  // the bytes it needs

  std::filesystem::remove(mnt + "/ballast");
  Start(store, config);
  ASSERT_EQ(PostUntilRefused(3).status, 0);
  EXPECT_EQ(Call("GET", "/readyz").status, 200);
  ExpectConsistentAfterRestart(store, config);
}

// The crawler's own pages while the disk fills during a sweep. The loopback site fills the disk
// when its 20th page is fetched. A page the store cannot commit for lack of space is neither
// counted stored nor given up: the sweep holds it (and pauses the crawl), GET /v1/crawl says it
// waits for room and why, /metrics and /readyz say the disk is full; when space returns the
// sweep goes on, every page is stored once, and the sweep closes; after a restart `shingled
// check` passes and every page is there.
TEST_F(DiskFullTest, CrawlerPagesFetchedWhileTheDiskIsFullAreStoredWhenSpaceReturns) {
  const std::string mnt = dir_.path() + "/tmpfs";
  SmallTmpfs tmpfs(mnt, "16m");
  if (!tmpfs.mounted()) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): " << tmpfs.error();
  }
  constexpr int kPages = 300;
  constexpr int kFillAt = 20;
  const std::string ballast = mnt + "/ballast";
  TestServer server;
  std::string index = "<html><body>";
  for (int i = 0; i < kPages; ++i) {
    const std::string path = "/p" + std::to_string(i);
    index.append("<a href='").append(path).append("'>").append(path).append("</a> ");
    server.Route(path, [i, ballast](const TestRequest&) {
      if (i == kFillAt) FillWithBallast(ballast);
      TestResponse r;
      r.headers = {{"Content-Type", "text/html"}};
      r.body = SyntheticPage(400000 + i) + SyntheticPage(500000 + i);
      return r;
    });
  }
  index.append("</body></html>");
  server.Page("/", index);
  ASSERT_TRUE(server.Start());
  std::vector<std::string> urls = {server.Url("/")};
  for (int i = 0; i < kPages; ++i) urls.push_back(server.Url("/p" + std::to_string(i)));

  const std::string store = mnt + "/db";
  const std::string config =
      "[store]\ninitial_map_size = 67108864\n[ingest]\ndefault_sweep = \"\"\n"
      "[crawler]\nenabled = true\nseeds = [\"" +
      server.Url("/") +
      "\"]\nallow_private_addresses = true\nper_host_delay_ms = 0\nevery = \"off\"\n";
  Start(store, config);
  HttpResponse started = Call("POST", "/v1/crawl");
  ASSERT_EQ(started.status, 202) << started.body;

  // The sweep waits for room.
  json crawl;
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    crawl = json::parse(Call("GET", "/v1/crawl").body, nullptr, false);
    if (crawl.is_object() && crawl["sweep"].is_object() &&
        crawl["sweep"]["waiting_for_room"].is_string()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  }
  ASSERT_TRUE(crawl["sweep"]["waiting_for_room"].is_string())
      << "the disk never filled: " << crawl.dump() << "\n"
      << daemon_->log();
  const json waiting = crawl["sweep"];
  EXPECT_EQ(waiting["running"], true) << waiting.dump();
  const std::string why = waiting["waiting_for_room"];
  EXPECT_NE(why.find("disk full"), std::string::npos) << why;
  EXPECT_NE(why.find(store), std::string::npos) << why;
  EXPECT_EQ(waiting["store_errors"], 0) << waiting.dump();
  EXPECT_LT(waiting["stored"].get<uint64_t>(), urls.size()) << waiting.dump();
  HttpResponse metrics = Call("GET", "/metrics");
  EXPECT_EQ(Sample(metrics.body, "shingled_store_writable"), 0) << metrics.body;
  EXPECT_GE(Sample(metrics.body, "shingled_store_commit_failures_total{reason=\"disk_full\"}"), 1)
      << metrics.body;
  HttpResponse ready = Call("GET", "/readyz");
  EXPECT_EQ(ready.status, 503) << ready.body;
  EXPECT_NE(ready.body.find(store), std::string::npos) << ready.body;
  // What the sweep counts as stored is in the store, and nothing else of it: a page is counted
  // only once committed. (The sweep may store more pages while this runs: LMDB reuses free pages
  // of its file; so counted before, present after.)
  const json before = json::parse(Call("GET", "/v1/crawl").body, nullptr, false);
  ASSERT_TRUE(before.is_object() && before["sweep"].is_object()) << before.dump();
  const uint64_t counted = before["sweep"]["stored"].get<uint64_t>();
  size_t present = 0;
  for (const std::string& url : urls) {
    if (Call("GET", "/v1/urls?url=" + Q(url)).status == 200) ++present;
  }
  EXPECT_GE(present, counted);
  EXPECT_LT(present, urls.size());

  std::filesystem::remove(ballast);
  json done;
  const Clock::time_point done_deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < done_deadline) {
    done = json::parse(Call("GET", "/v1/crawl").body, nullptr, false);
    if (done.is_object() && done["running"] == false && done["sweep"].is_object() &&
        !done["sweep"]["finished"].is_null()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // poll interval
  }
  const json sweep = done["sweep"];
  ASSERT_TRUE(sweep.is_object() && !sweep["finished"].is_null()) << done.dump();
  EXPECT_EQ(sweep["closed"], true) << sweep.dump();
  EXPECT_EQ(sweep["stored"], urls.size()) << sweep.dump();
  EXPECT_EQ(sweep["store_errors"], 0) << sweep.dump();
  EXPECT_GE(sweep["store_retries"].get<uint64_t>(), 1u) << sweep.dump();
  EXPECT_FALSE(sweep.contains("waiting_for_room")) << sweep.dump();
  EXPECT_EQ(sweep["pages"], urls.size()) << sweep.dump();
  EXPECT_EQ(Call("GET", "/readyz").status, 200);
  EXPECT_TRUE(daemon_->WaitForLog("writes resume")) << daemon_->log();
  // Every page once: a page handed over again after a failed commit is not stored twice.
  for (const std::string& url : urls) {
    json history = json::parse(Call("GET", "/v1/urls?url=" + Q(url)).body, nullptr, false);
    ASSERT_TRUE(history.is_object()) << url;
    EXPECT_EQ(history["versions"].size(), 1u) << url << " " << history.dump();
  }
  acked_ = urls;
  ExpectConsistentAfterRestart(store, config);
}

}  // namespace
}  // namespace shingled::testing
