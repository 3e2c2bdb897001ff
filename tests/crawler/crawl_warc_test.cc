// `shingled crawl --warc-dir`: the crawler's WARC output end to end over a loopback site. Two
// sweeps of an unchanged site: the first writes responses (and a revisit for a page that repeats
// another byte for byte), the second writes revisits that point at the first one's records. The
// files are read back with shingled's reader and with webrecorder's warcio (npm, run by node),
// digests recomputed, and each CDXJ line followed to its record.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "crawler/warc.h"
#include "tests/crawler/test_server.h"
#include "tests/crawler/test_site.h"
#include "tests/daemon/run_shingled.h"

namespace shingled {
namespace {

using nlohmann::json;
using testing::Article;
using testing::RunShingled;
using testing::Site;

std::filesystem::path FreshDir(const std::string& name) {
  std::string pattern = ::testing::TempDir() + name + "_XXXXXX";
  const char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr) << pattern;
  return made == nullptr ? std::filesystem::path(pattern) : std::filesystem::path(made);
}

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The reference digest, written out here rather than taken from crawler/: SHA-1, then RFC 4648
// base32 one bit at a time.
std::string Sha1Base32(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EXPECT_EQ(EVP_Digest(bytes.data(), bytes.size(), md, &size, EVP_sha1(), nullptr), 1);
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  const size_t bits = size * 8;
  for (size_t at = 0; at < bits; at += 5) {
    int value = 0;
    for (size_t b = at; b < at + 5; ++b) {
      const int bit = b < bits ? (md[b / 8] >> (7 - b % 8)) & 1 : 0;
      value = value * 2 + bit;
    }
    out.push_back(alphabet[value]);
  }
  while (out.size() % 8 != 0) out.push_back('=');
  return "sha1:" + out;
}

// Inflates exactly one gzip member starting at `offset`; `*consumed` is its compressed size.
std::string InflateMember(const std::string& file, size_t offset, size_t* consumed) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(file.data() + offset));
  z.avail_in = static_cast<uInt>(file.size() - offset);
  std::string out;
  char buffer[65536];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - z.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  *consumed = z.total_in;
  inflateEnd(&z);
  return out;
}

struct Rec {
  std::string type, uri, date, id, concurrent_to, refers_to, refers_to_uri, refers_to_date,
      payload_digest, block_digest;
  std::string block;
  uint64_t member_offset = 0;
};

std::vector<Rec> ReadWithOurReader(const std::filesystem::path& path) {
  auto source = crawler::OpenFileSource(path.string());
  EXPECT_TRUE(source.ok());
  crawler::WarcReader reader(std::move(*source));
  std::vector<Rec> out;
  crawler::WarcRecord record;
  auto field = [&](const char* name) {
    const std::string* v = record.Header(name);
    return v == nullptr ? std::string() : *v;
  };
  while (reader.Next(&record)) {
    EXPECT_EQ(record.version, "WARC/1.1");
    out.push_back({record.Type(), field("WARC-Target-URI"), field("WARC-Date"),
                   field("WARC-Record-ID"), field("WARC-Concurrent-To"), field("WARC-Refers-To"),
                   field("WARC-Refers-To-Target-URI"), field("WARC-Refers-To-Date"),
                   field("WARC-Payload-Digest"), field("WARC-Block-Digest"), record.block,
                   record.member_offset});
  }
  EXPECT_TRUE(reader.problems().empty()) << path << ": " << reader.problems()[0].status.message();
  EXPECT_TRUE(reader.gzip());
  return out;
}

std::vector<std::filesystem::path> WarcFiles(const std::filesystem::path& dir,
                                             const std::string& sweep) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_FALSE(name.ends_with(".open")) << "left unfinished: " << name;
    if (name.starts_with("shingled-" + sweep + "-") && name.ends_with(".warc.gz")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return lines;
}

// Checks one file with our reader: layout, links, digests, and its CDXJ against the records.
void CheckFile(const std::filesystem::path& path) {
  SCOPED_TRACE(path.string());
  const std::vector<Rec> records = ReadWithOurReader(path);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records[0].type, "warcinfo");
  std::map<std::string, const Rec*> by_id;
  for (const Rec& r : records) by_id[r.id] = &r;
  EXPECT_EQ(by_id.size(), records.size()) << "record IDs are unique";
  for (size_t i = 1; i < records.size(); ++i) {
    const Rec& r = records[i];
    SCOPED_TRACE(r.type + " " + r.uri);
    EXPECT_EQ(r.block_digest, Sha1Base32(r.block));
    const auto other = by_id.find(r.concurrent_to);
    ASSERT_NE(other, by_id.end()) << "WARC-Concurrent-To names a record of the file";
    EXPECT_EQ(other->second->concurrent_to, r.id) << "linked both ways";
    EXPECT_EQ(other->second->uri, r.uri);
    if (r.type == "request") {
      EXPECT_EQ(r.block.substr(0, 4), "GET ");
      EXPECT_NE(r.block.find("\r\nUser-Agent: shingled/"), std::string::npos) << r.block;
      EXPECT_NE(r.block.find("\r\nHost: 127.0.0.1:"), std::string::npos) << r.block;
      EXPECT_NE(r.block.find("\r\nAccept-Encoding: deflate, gzip"), std::string::npos) << r.block;
      continue;
    }
    const size_t head_end = r.block.find("\r\n\r\n");
    ASSERT_NE(head_end, std::string::npos);
    if (r.type == "response") {
      EXPECT_EQ(r.payload_digest, Sha1Base32(r.block.substr(head_end + 4)));
    } else {
      ASSERT_EQ(r.type, "revisit");
      EXPECT_EQ(head_end + 4, r.block.size()) << "a revisit holds the HTTP head only";
      EXPECT_FALSE(r.refers_to_uri.empty());
      EXPECT_FALSE(r.refers_to_date.empty());
      EXPECT_FALSE(r.payload_digest.empty());
    }
  }

  // The index: one line per response or revisit record, sorted, each leading to its record.
  const std::string warc = ReadAll(path);
  const std::vector<std::string> lines = Lines(ReadAll(path.string() + ".cdxj"));
  size_t captures = 0;
  for (const Rec& r : records) captures += r.type == "response" || r.type == "revisit";
  EXPECT_EQ(lines.size(), captures);
  EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end()));
  for (const std::string& line : lines) {
    SCOPED_TRACE(line);
    const size_t first = line.find(' ');
    const size_t second = line.find(' ', first + 1);
    ASSERT_NE(second, std::string::npos);
    const json j = json::parse(line.substr(second + 1));
    EXPECT_EQ(j["filename"], path.filename().string());
    const size_t offset = std::stoull(j["offset"].get<std::string>());
    const size_t length = std::stoull(j["length"].get<std::string>());
    ASSERT_LT(offset, warc.size());
    size_t consumed = 0;
    const std::string record_bytes = InflateMember(warc, offset, &consumed);
    EXPECT_EQ(consumed, length) << "length is the gzip member's";
    crawler::WarcReader reader(crawler::MakeStringSource(record_bytes));
    crawler::WarcRecord record;
    ASSERT_TRUE(reader.Next(&record));
    const std::string type = record.Type();
    EXPECT_TRUE(type == "response" || type == "revisit") << type;
    EXPECT_EQ(*record.Header("WARC-Target-URI"), j["url"]);
    EXPECT_EQ(*record.Header("WARC-Payload-Digest"), "sha1:" + j["digest"].get<std::string>());
    std::string digits;
    for (const char c : *record.Header("WARC-Date")) {
      if (std::isdigit(static_cast<unsigned char>(c))) digits.push_back(c);
    }
    EXPECT_EQ(line.substr(first + 1, second - first - 1), digits.substr(0, 14));
    if (type == "revisit") {
      EXPECT_EQ(j["mime"], "warc/revisit");
    }
  }
}

class CrawlWarcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("crawl_warc");
    site_.Serve(&server_, {"/", "/a.html", "/b.html", "/copy.html", "/old.html", "/new.html",
                           "/missing.html", "/robots.txt"});
    ASSERT_TRUE(server_.Start());
    site_.Set("/", 200,
              "<a href='a.html'>a</a><a href='b.html'>b</a><a href='copy.html'>copy</a>"
              "<a href='old.html'>old</a><a href='missing.html'>missing</a>");
    site_.Set("/a.html", 200, Article("apples"));
    site_.Set("/b.html", 200, Article("bananas"));
    site_.Set("/copy.html", 200, Article("apples"));  // a.html byte for byte
    site_.Set("/old.html", 301, "/new.html");
    site_.Set("/new.html", 200, Article("oranges"));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  json Crawl(const std::string& sweep) {
    const testing::CliResult r =
        RunShingled("crawl --store '" + (dir_ / "store").string() + "' --seed " + server_.Url("/") +
                    " --allow-private-addresses --delay 0 --warc-dir '" + (dir_ / "warc").string() +
                    "' --sweep " + sweep);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r.exit_code == 0 ? json::parse(r.out) : json();
  }

  std::filesystem::path dir_;
  Site site_;
  testing::TestServer server_;
};

TEST_F(CrawlWarcTest, TwoSweepsWriteResponsesThenRevisitsThatPointBack) {
  // Sweep one: /, a, b, copy, the 301 of old and the new page it leads to, the 404: seven
  // exchanges, copy.html (or a.html, whichever came second) a revisit of the other.
  const json one = Crawl("one");
  ASSERT_TRUE(one.contains("warc")) << one;
  EXPECT_EQ(one["warc"]["responses"], 6) << one;
  EXPECT_EQ(one["warc"]["revisits"], 1) << one;
  ASSERT_EQ(one["warc"]["files"].size(), 1u) << one;
  const std::vector<std::filesystem::path> files_one = WarcFiles(dir_ / "warc", "one");
  ASSERT_EQ(files_one.size(), 1u);
  EXPECT_EQ(one["warc"]["files"][0], files_one[0].string());
  // shingled-<sweep>-<14 digits>-<serial>.warc.gz
  const std::string name = files_one[0].filename().string();
  EXPECT_EQ(name.size(), std::string("shingled-one-20260101000000-00000.warc.gz").size()) << name;
  EXPECT_TRUE(name.ends_with("-00000.warc.gz")) << name;

  CheckFile(files_one[0]);
  const std::vector<Rec> r1 = ReadWithOurReader(files_one[0]);
  std::map<std::string, int> types;
  for (const Rec& r : r1) ++types[r.type];
  EXPECT_EQ(types, (std::map<std::string, int>{
                       {"warcinfo", 1}, {"request", 7}, {"response", 6}, {"revisit", 1}}));
  std::map<std::string, const Rec*> responses_by_id;
  for (const Rec& r : r1) {
    if (r.type == "response") responses_by_id[r.id] = &r;
  }
  for (const Rec& r : r1) {
    if (r.type != "revisit") continue;
    EXPECT_TRUE(r.uri == server_.Url("/copy.html") || r.uri == server_.Url("/a.html")) << r.uri;
    const auto original = responses_by_id.find(r.refers_to);
    ASSERT_NE(original, responses_by_id.end()) << "WARC-Refers-To names the response";
    EXPECT_EQ(original->second->uri, r.refers_to_uri);
    EXPECT_EQ(original->second->date, r.refers_to_date);
    EXPECT_EQ(original->second->payload_digest, r.payload_digest);
    EXPECT_NE(original->second->uri, r.uri);
  }

  // Sweep two, nothing changed: every 2xx body is a revisit of sweep one's response; the 301 and
  // the 404 carry no payload worth deduplicating and are written again. (new.html is known now
  // and may be fetched twice: directly and through old.html's redirect.)
  const json two = Crawl("two");
  ASSERT_TRUE(two.contains("warc")) << two;
  EXPECT_EQ(two["warc"]["responses"], 2) << two;
  EXPECT_EQ(two["warc"]["revisits"], two["pages"]) << two;
  EXPECT_GE(two["pages"], 5) << two;
  const std::vector<std::filesystem::path> files_two = WarcFiles(dir_ / "warc", "two");
  ASSERT_EQ(files_two.size(), 1u);
  CheckFile(files_two[0]);
  const std::vector<Rec> r2 = ReadWithOurReader(files_two[0]);
  int revisits = 0;
  for (const Rec& r : r2) {
    if (r.type != "revisit") continue;
    ++revisits;
    SCOPED_TRACE(r.uri);
    const auto original = responses_by_id.find(r.refers_to);
    ASSERT_NE(original, responses_by_id.end()) << "refers to a response of sweep one";
    EXPECT_EQ(original->second->uri, r.refers_to_uri);
    EXPECT_EQ(original->second->date, r.refers_to_date);
    EXPECT_EQ(original->second->payload_digest, r.payload_digest);
    // The same URL's own earlier capture, except for the copy, which refers to a.html's.
    if (r.uri != server_.Url("/copy.html") && r.uri != server_.Url("/a.html")) {
      EXPECT_EQ(r.refers_to_uri, r.uri);
    }
  }
  EXPECT_EQ(revisits, two["pages"]);

  // `shingled ingest` takes both files back: sweep two's revisits are unchanged versions of the
  // documents sweep one's responses hold.
  const std::string store2 = "--store '" + (dir_ / "store2").string() + "'";
  testing::CliResult in1 =
      RunShingled("ingest " + store2 + " --sweep w1 --json '" + files_one[0].string() + "'");
  ASSERT_EQ(in1.exit_code, 0) << in1.out;
  EXPECT_EQ(json::parse(in1.out)["errors"], 0) << in1.out;
  testing::CliResult in2 =
      RunShingled("ingest " + store2 + " --sweep w2 --json '" + files_two[0].string() + "'");
  ASSERT_EQ(in2.exit_code, 0) << in2.out;
  const json summary = json::parse(in2.out);
  EXPECT_EQ(summary["errors"], 0) << summary;
  EXPECT_EQ(summary["new"], 0) << summary;
  EXPECT_EQ(summary["unchanged"], two["pages"]) << summary;
}

// The same files through an independent reader: warcio parses every record, its digests and ours
// agree with SHA-1 recomputed by node, and warcio's own CDXJ indexer gives our index line for
// line.
TEST_F(CrawlWarcTest, WarcioReadsTheFilesAndIndexesThemAsWeDo) {
  if (std::system("node --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no node";
  const std::string modules = WARCIO_NODE_MODULES;
  if (!std::filesystem::exists(modules + "/warcio/package.json")) {
    GTEST_SKIP() << "npm package warcio not installed in " << modules
                 << " (scripts/install-npm-package.sh; the build runs it, it needs the npm registry)";
  }
  Crawl("one");
  const json two = Crawl("two");
  const int pages_two = two.value("pages", 0);
  std::vector<std::filesystem::path> files = WarcFiles(dir_ / "warc", "one");
  for (const auto& f : WarcFiles(dir_ / "warc", "two")) files.push_back(f);
  ASSERT_EQ(files.size(), 2u);
  std::string cmd = "NODE_PATH='" + modules + "' node '" + WARCIO_CHECK_SCRIPT + "'";
  for (const auto& f : files) cmd += " '" + f.string() + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << cmd;
  const json result = json::parse(out);
  ASSERT_EQ(result.size(), 2u);

  std::map<std::string, json> responses_by_id;  // of both files, by record ID
  for (const json& file : result) {
    for (const json& r : file["records"]) {
      if (r["type"] == "response") responses_by_id[r["id"]] = r;
    }
  }
  const std::vector<std::map<std::string, int>> expected_types = {
      {{"warcinfo", 1}, {"request", 7}, {"response", 6}, {"revisit", 1}},
      {{"warcinfo", 1}, {"request", 2 + pages_two}, {"response", 2}, {"revisit", pages_two}}};
  for (size_t i = 0; i < result.size(); ++i) {
    const json& file = result[i];
    SCOPED_TRACE(file["file"].get<std::string>());
    std::map<std::string, int> types;
    for (const json& r : file["records"]) {
      const std::string type = r["type"];
      ++types[type];
      SCOPED_TRACE(type + " " + (r["uri"].is_null() ? "" : r["uri"].get<std::string>()));
      if (type == "warcinfo") continue;
      EXPECT_EQ(r["block_digest"], r["block_sha1"]);
      if (type == "response") {
        EXPECT_EQ(r["payload_digest"], r["payload_sha1"]);
      }
      if (type == "revisit") {
        EXPECT_EQ(r["profile"], "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest");
        ASSERT_TRUE(responses_by_id.contains(r["refers_to"])) << r;
        const json& original = responses_by_id[r["refers_to"]];
        EXPECT_EQ(original["uri"], r["refers_to_uri"]);
        EXPECT_EQ(original["date"], r["refers_to_date"]);
        EXPECT_EQ(original["payload_digest"], r["payload_digest"]);
      }
    }
    EXPECT_EQ(types, expected_types[i]);
    // warcio's index of the file, sorted as a CDXJ file is, is ours byte for byte.
    std::vector<std::string> theirs = file["cdxj"];
    std::sort(theirs.begin(), theirs.end());
    EXPECT_EQ(theirs, Lines(ReadAll(file["file"].get<std::string>() + ".cdxj")));
  }
}

TEST_F(CrawlWarcTest, UnwritableDirectoryIsAClearErrorBeforeAnyFetch) {
  const std::filesystem::path not_a_dir = dir_ / "file";
  std::ofstream(not_a_dir) << "x";
  std::string err;
  const testing::CliResult r =
      RunShingled("crawl --store '" + (dir_ / "store").string() + "' --seed " + server_.Url("/") +
                      " --allow-private-addresses --delay 0 --warc-dir '" +
                      (not_a_dir / "warc").string() + "' --sweep one",
                  &err);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(err.find("WARC output: cannot create directory " + (not_a_dir / "warc").string()),
            std::string::npos)
      << err;
  // Nothing was fetched into the store: the sweep failed before the crawl began.
  const testing::CliResult h = RunShingled("history --store '" + (dir_ / "store").string() +
                                           "' --json " + server_.Url("/a.html"));
  EXPECT_EQ(h.exit_code, 1) << h.out;
}

// A write error in the middle of a sweep (here: the directory taken away while the crawl runs,
// found when the full first file rolls over) stops the crawl: the sweep is left open, the crawl
// exits 1 naming the error, the unfinished file stays `.open`, and the pages after it are not
// fetched.
TEST(CrawlWarcFailureTest, AWriteErrorMidSweepStopsItAndLeavesItOpen) {
  const std::filesystem::path dir = FreshDir("crawl_warc_fail");
  const std::filesystem::path warc = dir / "warc";
  const std::filesystem::path moved = dir / "warc.moved";
  const std::string config = (dir / "shingled.toml").string();
  std::ofstream(config) << "[crawler]\nwarc_max_bytes = 1048576\nmax_fetches_per_host = 1\n";
  testing::TestServer server;
  std::string links;
  for (int i = 0; i < 5; ++i) {
    links += "<a href='c" + std::to_string(i) + ".html'>c</a>";
    server.Page("/c" + std::to_string(i) + ".html", Article("cherry " + std::to_string(i)));
  }
  server.Page("/", "<a href='big.html'>big</a><a href='trigger.html'>t</a>" + links);
  // 2 MB of random letters: over 1 MiB compressed, so the next exchange begins a new file.
  std::string big = "<html><body><p>";
  uint32_t x = 7;
  const char* alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .";
  for (int i = 0; i < (2 << 20); ++i) big.push_back(alphabet[(x = x * 1103515245 + 12345) >> 26]);
  server.Page("/big.html", big + "</p></body></html>");
  server.Route("/trigger.html", [&](const testing::TestRequest&) {
    std::error_code ec;
    std::filesystem::rename(warc, moved, ec);
    testing::TestResponse r;
    r.headers = {{"Content-Type", "text/html"}};
    r.body = Article("trigger");
    return r;
  });
  ASSERT_TRUE(server.Start());
  const std::string store = "--store '" + (dir / "store").string() + "'";
  std::string err;
  const testing::CliResult r = RunShingled(
      "crawl " + store + " --config '" + config + "' --seed " + server.Url("/") +
          " --allow-private-addresses --delay 0 --warc-dir '" + warc.string() + "' --sweep one",
      &err);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(err.find("WARC output: cannot"), std::string::npos) << err;
  EXPECT_NE(err.find("stopping the sweep"), std::string::npos) << err;

  const testing::CliResult list = RunShingled("sweep list --json " + store);
  ASSERT_EQ(list.exit_code, 0);
  const json sweeps = json::parse(list.out)["sweeps"];
  ASSERT_EQ(sweeps.size(), 1u) << sweeps;
  EXPECT_EQ(sweeps[0]["open"], true) << "left open: the archive of this sweep has a hole";
  EXPECT_LT(sweeps[0]["pages"].get<int>(), 8) << "the crawl stopped before its frontier was empty";
  // The unfinished file is not passed off as a finished one.
  int open_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(moved)) {
    const std::string name = e.path().filename().string();
    EXPECT_FALSE(name.ends_with(".warc.gz")) << name;
    open_files += name.ends_with(".warc.gz.open");
  }
  EXPECT_EQ(open_files, 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shingled
