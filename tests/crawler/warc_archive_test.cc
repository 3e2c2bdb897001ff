// The crawler's WARC output pieces: base32 and SHA-1 digests, SURT keys and CDXJ lines
// (crawler/cdxj.h), and WarcArchive's files: `.open` until finished, rolling, and a write error
// that sticks and leaves the file unfinished.
#include "crawler/warc_archive.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "crawler/cdxj.h"

namespace shingled::crawler {
namespace {

std::filesystem::path FreshDir(const std::string& name) {
  std::string pattern = ::testing::TempDir() + name + "_XXXXXX";
  const char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr) << pattern;
  return made == nullptr ? std::filesystem::path(pattern) : std::filesystem::path(made);
}

TEST(Base32Test, Rfc4648TestVectors) {  // RFC 4648 section 10
  EXPECT_EQ(Base32(""), "");
  EXPECT_EQ(Base32("f"), "MY======");
  EXPECT_EQ(Base32("fo"), "MZXQ====");
  EXPECT_EQ(Base32("foo"), "MZXW6===");
  EXPECT_EQ(Base32("foob"), "MZXW6YQ=");
  EXPECT_EQ(Base32("fooba"), "MZXW6YTB");
  EXPECT_EQ(Base32("foobar"), "MZXW6YTBOI======");
}

TEST(WarcSha1DigestTest, KnownDigests) {
  // SHA-1 of nothing, da39a3ee..., as every WARC of an empty payload carries it.
  EXPECT_EQ(WarcSha1Digest(""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
  // SHA-1("abc") = a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d (FIPS 180 example).
  EXPECT_EQ(WarcSha1Digest("abc"), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
}

TEST(SurtKeyTest, AsWarcioComputesIt) {
  EXPECT_EQ(SurtKey("http://www.Example.com/a/b.html"), "com,example)/a/b.html");
  EXPECT_EQ(SurtKey("https://www2.example.com:8443/?b=2&a=1#top"), "com,example:8443)/?a=1&b=2");
  EXPECT_EQ(SurtKey("http://example.com:80/x"), "com,example)/x");
  EXPECT_EQ(SurtKey("https://example.com:443"), "com,example)/");
  EXPECT_EQ(SurtKey("http://127.0.0.1:8080/p?q"), "1,0,0,127:8080)/p?q");
  EXPECT_EQ(SurtKey("http://user@wwwx.example.org/"), "org,example,wwwx)/");
  EXPECT_EQ(SurtKey("ftp://example.com/"), "ftp://example.com/");
}

TEST(CdxjTest, LineBytes) {
  CdxjEntry e;
  e.url = "http://example.com/a?x=\"1\"";
  e.warc_date = "2024-03-01T12:00:05Z";
  e.mime = "text/html";
  e.http_status = 200;
  e.digest = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ";
  e.length = 123;
  e.offset = 4567;
  e.filename = "f.warc.gz";
  EXPECT_EQ(FormatCdxjLine(e),
            "com,example)/a?x=\"1\" 20240301120005 "
            "{\"url\":\"http://example.com/a?x=\\\"1\\\"\",\"mime\":\"text/html\",\"status\":"
            "\"200\",\"digest\":\"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\",\"length\":\"123\","
            "\"offset\":\"4567\",\"filename\":\"f.warc.gz\"}");
  e.mime.clear();  // a redirect without Content-Type: no mime field, as warcio writes it
  e.http_status = 0;
  EXPECT_EQ(FormatCdxjLine(e).find("mime"), std::string::npos);
  EXPECT_EQ(FormatCdxjLine(e).find("status"), std::string::npos);
}

HttpExchange Exchange(const std::string& body) {
  HttpExchange x;
  x.url = "http://example.com/p";
  x.date_unix = 1709294405;
  x.request_head = "GET /p HTTP/1.1\r\nHost: example.com\r\n\r\n";
  x.http_status = 200;
  x.response_headers = {{"Content-Type", "text/html"}, {"Content-Encoding", "gzip"}};
  x.body = body;
  return x;
}

std::vector<std::string> Names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(WarcArchiveTest, OpenUntilClosedThenRenamedWithItsIndex) {
  const std::filesystem::path dir = FreshDir("warc_archive") / "out";
  auto archive = WarcArchive::Open({dir.string(), "crawl-2024-03-01T12:00:00Z", 1 << 20, {}});
  ASSERT_TRUE(archive.ok()) << archive.status().message();
  const std::string body = "<html>hello</html>";
  StatusOr<WarcWritten> w = (*archive)->Write(Exchange(body), nullptr);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->payload_digest, WarcSha1Digest(body));
  std::vector<std::string> names = Names(dir);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(names[0].ends_with("-00000.warc.gz.open")) << names[0];
  EXPECT_TRUE(names[0].starts_with("shingled-crawl-2024-03-01T12-00-00Z-")) << names[0];
  EXPECT_EQ(w->file + ".open", names[0]);

  WarcRevisitOf original{"http://example.com/p", 1709294405, w->record_id};
  StatusOr<WarcWritten> r = (*archive)->Write(Exchange(body), &original);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE((*archive)->Close().ok());
  names = Names(dir);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], w->file);
  EXPECT_EQ(names[1], w->file + ".cdxj");
  EXPECT_EQ((*archive)->responses(), 1u);
  EXPECT_EQ((*archive)->revisits(), 1u);
  EXPECT_EQ((*archive)->files(), std::vector<std::string>{(dir / w->file).string()});

  auto source = OpenFileSource((dir / w->file).string());
  ASSERT_TRUE(source.ok());
  WarcReader reader(std::move(*source));
  WarcRecord record;
  std::vector<std::string> types;
  while (reader.Next(&record)) {
    types.push_back(record.Type());
    if (record.Type() == "response") {
      EXPECT_EQ(record.member_offset, w->offset);
      // The decoded body is stored: the coding header is gone, the length is the body's.
      EXPECT_EQ(record.block.find("Content-Encoding"), std::string::npos);
      EXPECT_NE(record.block.find("Content-Length: " + std::to_string(body.size())),
                std::string::npos);
    }
    if (record.Type() == "revisit") {
      EXPECT_EQ(record.member_offset, r->offset);
      EXPECT_EQ(*record.Header("WARC-Refers-To"), w->record_id);
      EXPECT_EQ(*record.Header("WARC-Refers-To-Date"), "2024-03-01T12:00:05Z");
      EXPECT_EQ(*record.Header("WARC-Payload-Digest"), WarcSha1Digest(body));
      EXPECT_EQ(record.block.find(body), std::string::npos);
    }
  }
  EXPECT_EQ(types,
            (std::vector<std::string>{"warcinfo", "request", "response", "request", "revisit"}));
  std::filesystem::remove_all(dir.parent_path());
}

// Bug: a sweep of a 300-byte name made file names past NAME_MAX, and the crawler's WARC output
// failed with "File name too long". A long name is cut and ends with a hash of the whole name:
// the files are written, no name is over 255 bytes, and two long names that start alike keep
// files of their own.
TEST(WarcArchiveTest, LongSweepNameGivesBoundedDistinctFileNames) {
  const std::filesystem::path dir = FreshDir("warc_long_name") / "out";
  const std::string shared(290, 's');
  std::vector<std::string> parts;
  for (const std::string& sweep : {shared + "/../a-0123", shared + "/../b-0123"}) {
    auto archive = WarcArchive::Open({dir.string(), sweep, 1 << 20, {}});
    ASSERT_TRUE(archive.ok()) << archive.status().message();
    StatusOr<WarcWritten> w = (*archive)->Write(Exchange("<p>long</p>"), nullptr);
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_TRUE((*archive)->Close().ok());
    EXPECT_TRUE(w->file.starts_with("shingled-" + std::string(103, 's') + "-")) << w->file;
    EXPECT_EQ(w->file.find('/'), std::string::npos) << w->file;
    parts.push_back(
        w->file.substr(0, w->file.size() - std::string("-20240501120000-00000.warc.gz").size()));
  }
  EXPECT_NE(parts[0], parts[1]);
  const std::vector<std::string> names = Names(dir);
  ASSERT_EQ(names.size(), 4u);  // two files and their indexes
  for (const std::string& name : names) EXPECT_LE(name.size(), 255u) << name;
  // The same name gives the same part (a short one is kept whole: the test above).
  auto again = WarcArchive::Open({dir.string(), shared + "/../a-0123", 1 << 20, {}});
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE((*again)->Write(Exchange("<p>again</p>"), nullptr).ok());
  ASSERT_TRUE((*again)->Close().ok());
  EXPECT_EQ(Names(dir).size(), 6u);
  size_t same = 0;
  for (const std::string& name : Names(dir)) same += name.starts_with(parts[0] + "-");
  EXPECT_EQ(same, 4u);
  std::filesystem::remove_all(dir.parent_path());
}

TEST(WarcArchiveTest, RollsToTheNextFileAtTheLimit) {
  const std::filesystem::path dir = FreshDir("warc_roll");
  // Random bytes do not compress: each exchange is over the 1-byte limit, so each file after the
  // first holds one.
  std::string body(4096, '\0');
  uint32_t x = 12345;
  for (char& c : body) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);
  auto archive = WarcArchive::Open({dir.string(), "s", 1, {}});
  ASSERT_TRUE(archive.ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*archive)->Write(Exchange(body), nullptr).ok());
  ASSERT_TRUE((*archive)->Close().ok());
  // The warcinfo record alone fills the first file past 1 byte: the first exchange goes to the
  // second file.
  EXPECT_EQ((*archive)->files().size(), 4u);
  for (const std::string& name : Names(dir)) EXPECT_FALSE(name.ends_with(".open")) << name;
  std::filesystem::remove_all(dir);
}

TEST(WarcArchiveTest, AWriteErrorSticksAndLeavesTheFileOpen) {
  const std::filesystem::path dir = FreshDir("warc_full");
  auto archive = WarcArchive::Open({dir.string(), "s", uint64_t{1} << 30, {}});
  ASSERT_TRUE(archive.ok());
  // A disk that fills up: a file size limit makes write() fail with EFBIG (SIGXFSZ ignored).
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit limit = old_limit;
  limit.rlim_cur = 64 << 10;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::string body(8192, '\0');
  uint32_t x = 1;
  for (char& c : body) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);
  Status failed;
  for (int i = 0; i < 100 && failed.ok(); ++i) {
    failed = (*archive)->Write(Exchange(body), nullptr).status();
  }
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted) << failed.message();
  EXPECT_NE(failed.message().find("WARC output: cannot write " + dir.string()), std::string::npos)
      << failed.message();
  // Sticky, and the file is not passed off as complete.
  EXPECT_EQ((*archive)->Write(Exchange("x"), nullptr).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_FALSE((*archive)->Close().ok());
  const std::vector<std::string> names = Names(dir);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(names[0].ends_with(".warc.gz.open")) << names[0];
  EXPECT_TRUE((*archive)->files().empty());
  std::filesystem::remove_all(dir);
}

TEST(WarcArchiveTest, UnusableDirectoryIsAnErrorAtOpen) {
  const std::filesystem::path dir = FreshDir("warc_bad");
  std::ofstream(dir / "file") << "x";
  auto archive = WarcArchive::Open({(dir / "file" / "sub").string(), "s", 1 << 20, {}});
  ASSERT_FALSE(archive.ok());
  EXPECT_EQ(archive.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(archive.status().message().find((dir / "file" / "sub").string()), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shingled::crawler
