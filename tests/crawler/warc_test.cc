#include "crawler/warc.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/crawler/gzip.h"

namespace shingled::crawler {
namespace {

std::string Record(std::string_view type, std::string_view uri, std::string_view block,
                   std::string_view extra = "") {
  std::string r = "WARC/1.0\r\nWARC-Type: " + std::string(type) +
                  "\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000000>\r\n"
                  "WARC-Date: 2024-03-01T12:00:00Z\r\n";
  if (!uri.empty()) r += "WARC-Target-URI: " + std::string(uri) + "\r\n";
  r += std::string(extra);
  r += "Content-Length: " + std::to_string(block.size()) + "\r\n\r\n";
  r += std::string(block) + "\r\n\r\n";
  return r;
}

using ::shingled::testing::Gzip;

struct ReadAll {
  std::vector<WarcRecord> records;
  std::vector<WarcProblem> problems;
  bool gzip = false;
};

ReadAll Read(std::string_view bytes, WarcReaderOptions options = {}) {
  WarcReader reader(MakeStringSource(bytes), options);
  ReadAll all;
  WarcRecord record;
  while (reader.Next(&record)) all.records.push_back(record);
  all.problems = reader.problems();
  all.gzip = reader.gzip();
  EXPECT_TRUE(reader.status().ok());
  return all;
}

const std::string kPage1 = "<html><body>one</body></html>";
const std::string kResponse1 =
    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\"windows-1252\"\r\n"
    "Content-Length: 29\r\n\r\n" +
    kPage1;

std::string ThreeRecords() {
  return Record("warcinfo", "", "software: test\r\n") +
         Record("response", "<http://h.example/1>", kResponse1,
                "Content-Type: application/http; msgtype=response\r\n") +
         Record("request", "http://h.example/1", "GET /1 HTTP/1.1\r\n\r\n") +
         Record("resource", "http://h.example/2.txt", "plain text",
                "Content-Type: text/plain; charset=utf-8\r\n");
}

TEST(WarcReaderTest, ReadsPlainRecords) {
  const ReadAll all = Read(ThreeRecords());
  EXPECT_FALSE(all.gzip);
  EXPECT_TRUE(all.problems.empty());
  ASSERT_EQ(all.records.size(), 4u);
  EXPECT_EQ(all.records[0].Type(), "warcinfo");
  EXPECT_EQ(all.records[0].offset, 0u);
  EXPECT_EQ(all.records[1].Type(), "response");
  EXPECT_EQ(all.records[1].offset, Record("warcinfo", "", "software: test\r\n").size());
  EXPECT_EQ(all.records[1].block, kResponse1);
  EXPECT_EQ(all.records[1].version, "WARC/1.0");
}

TEST(WarcReaderTest, InterpretsResponseResourceAndSkipsTheRest) {
  const ReadAll all = Read(ThreeRecords());
  std::vector<WarcPage> pages;
  for (const WarcRecord& r : all.records) {
    StatusOr<std::optional<WarcPage>> page = InterpretRecord(r);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    if (page->has_value()) pages.push_back(**page);
  }
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_EQ(pages[0].kind, WarcPage::Kind::kResponse);
  EXPECT_EQ(pages[0].url, "http://h.example/1");
  EXPECT_EQ(pages[0].date, "2024-03-01T12:00:00Z");
  EXPECT_EQ(pages[0].date_unix, 1709294400);
  EXPECT_EQ(pages[0].http_status, 200);
  EXPECT_EQ(pages[0].body, kPage1);
  EXPECT_EQ(pages[0].charset, "windows-1252");
  EXPECT_EQ(pages[1].kind, WarcPage::Kind::kResource);
  EXPECT_EQ(pages[1].body, "plain text");
  EXPECT_EQ(pages[1].charset, "utf-8");
}

TEST(WarcReaderTest, GzipMemberPerRecord) {
  std::string file;
  std::vector<uint64_t> member_offsets;
  const std::string plain = ThreeRecords();
  // Re-split the plain file into its records and compress each one.
  for (const WarcRecord& r : Read(plain).records) {
    member_offsets.push_back(file.size());
    const size_t end = r.offset + (Read(plain.substr(r.offset)).records.size() > 1
                                       ? Read(plain.substr(r.offset)).records[1].offset
                                       : plain.size() - r.offset);
    file += Gzip(plain.substr(r.offset, end - r.offset));
  }
  const ReadAll all = Read(file);
  EXPECT_TRUE(all.gzip);
  EXPECT_TRUE(all.problems.empty());
  ASSERT_EQ(all.records.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(all.records[i].member_offset, member_offsets[i]);
  EXPECT_EQ(all.records[1].block, kResponse1);
  // One member for the whole file reads the same.
  EXPECT_EQ(Read(Gzip(plain)).records.size(), 4u);
}

TEST(WarcReaderTest, ChunkedAndGzipEncodedResponse) {
  const std::string gz = Gzip("<p>compressed page</p>");
  std::string chunked;
  for (size_t i = 0; i < gz.size(); i += 7) {
    const std::string piece = gz.substr(i, 7);
    char size[16];
    std::snprintf(size, sizeof(size), "%zx;ext=1\r\n", piece.size());
    chunked += size + piece + "\r\n";
  }
  chunked += "0\r\nTrailer: x\r\n\r\n";
  const std::string http =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n"
      "Content-Type: text/html\r\n\r\n" +
      chunked;
  const ReadAll all = Read(Record("response", "http://h.example/z", http));
  ASSERT_EQ(all.records.size(), 1u);
  StatusOr<std::optional<WarcPage>> page = InterpretRecord(all.records[0]);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ((*page)->body, "<p>compressed page</p>");
}

// Bug: a gzip body of two members (`cat a.gz b.gz`, pigz) decoded to its
// first member only, and bytes after a member were ignored.
TEST(InflateBodyTest, ConcatenatedGzipMembersAreAllDecoded) {
  StatusOr<std::string> out =
      InflateBody(Gzip("first part, ") + Gzip("second part"), true, 1 << 20);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "first part, second part");
  std::string many;
  std::string expected;
  for (int i = 0; i < 10; ++i) {
    many += Gzip("member " + std::to_string(i) + ";");
    expected += "member " + std::to_string(i) + ";";
  }
  out = InflateBody(many, true, 1 << 20);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, expected);
  // An empty member is a member too.
  out = InflateBody(Gzip("") + Gzip("x"), true, 1 << 20);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "x");
  // The limit holds across members.
  out = InflateBody(Gzip(std::string(600, 'a')) + Gzip(std::string(600, 'b')), true, 1000);
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
}

TEST(InflateBodyTest, TrailingGarbageAfterAMemberIsRefused) {
  const std::string a = Gzip("page");
  StatusOr<std::string> out = InflateBody(a + "garbage", true, 1 << 20);
  ASSERT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "7 bytes of trailing garbage at offset " +
                                        std::to_string(a.size()) + ", after gzip member 1");
  // Trailing zero bytes too: they are not a member.
  EXPECT_EQ(InflateBody(a + std::string(4, '\0'), true, 1 << 20).status().code(),
            StatusCode::kInvalidArgument);
  // A second member cut short is a truncated body, not a shorter page.
  const std::string b = Gzip(std::string(2000, 'b'));
  out = InflateBody(a + b.substr(0, b.size() / 2), true, 1 << 20);
  ASSERT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "compressed body truncated (gzip member 2)");
  // A corrupt second member.
  std::string bad = b;
  for (size_t i = 12; i < bad.size() - 8; i += 3) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  EXPECT_EQ(InflateBody(a + bad, true, 1 << 20).status().code(), StatusCode::kInvalidArgument);
  // deflate (zlib-wrapped) followed by garbage.
  std::string zlib(compressBound(4), '\0');
  uLongf zlib_size = zlib.size();
  ASSERT_EQ(compress(reinterpret_cast<Bytef*>(zlib.data()), &zlib_size,
                     reinterpret_cast<const Bytef*>("page"), 4),
            Z_OK);
  zlib.resize(zlib_size);
  ASSERT_EQ(*InflateBody(zlib, false, 1 << 20), "page");
  out = InflateBody(zlib + "xyz", false, 1 << 20);
  ASSERT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "3 bytes of trailing garbage at offset " +
                                        std::to_string(zlib.size()) + ", after the deflate stream");
}

// The HTTP payload of a WARC record goes through the same inflater: two members are one page.
TEST(WarcReaderTest, ResponseWithTwoGzipMembersIsDecodedWhole) {
  const std::string http =
      "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n" + Gzip("<p>one") + Gzip(" two</p>");
  const ReadAll all = Read(Record("response", "http://h.example/two", http));
  ASSERT_EQ(all.records.size(), 1u);
  StatusOr<std::optional<WarcPage>> page = InterpretRecord(all.records[0]);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ((*page)->body, "<p>one two</p>");
  // With garbage after the members the record is refused, not stored cut short.
  const ReadAll bad = Read(Record("response", "http://h.example/two", http + "junk"));
  ASSERT_EQ(bad.records.size(), 1u);
  page = InterpretRecord(bad.records[0]);
  ASSERT_EQ(page.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(page.status().message().find("trailing garbage"), std::string::npos)
      << page.status().message();
}

// A .warc.gz is a sequence of members, one per record: garbage after a record's member is
// reported at its offset (it is not silently dropped), and the records around it still read.
TEST(WarcReaderTest, GzipRecordMemberFollowedByGarbageIsReported) {
  const std::string a = Gzip(Record("resource", "http://h.example/a", "A"));
  const std::string b = Gzip(Record("resource", "http://h.example/b", "B"));
  ReadAll all = Read(a + "garbage!" + b);
  ASSERT_EQ(all.records.size(), 2u);
  EXPECT_EQ(*all.records[1].Header("WARC-Target-URI"), "http://h.example/b");
  EXPECT_EQ(all.records[1].member_offset, a.size() + 8);
  ASSERT_EQ(all.problems.size(), 1u);
  EXPECT_EQ(all.problems[0].offset, a.size());
  EXPECT_EQ(all.problems[0].status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(all.problems[0].status.message(), "junk between gzip members");
  all = Read(a + b + "garbage!");
  ASSERT_EQ(all.records.size(), 2u);
  ASSERT_EQ(all.problems.size(), 1u);
  EXPECT_EQ(all.problems[0].offset, a.size() + b.size());
  EXPECT_EQ(all.problems[0].status.message(), "junk after the last gzip member");
}

TEST(WarcReaderTest, GzipBombIsStopped) {
  const std::string bomb = Gzip(std::string(10 << 20, 'a'));
  const std::string http = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n" + bomb;
  const ReadAll all = Read(Record("response", "http://h.example/bomb", http));
  ASSERT_EQ(all.records.size(), 1u);
  WarcPageOptions options;
  options.max_body_bytes = 1 << 20;
  StatusOr<std::optional<WarcPage>> page = InterpretRecord(all.records[0], options);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), StatusCode::kResourceExhausted);
}

TEST(WarcReaderTest, Revisit) {
  const ReadAll all = Read(Record("revisit", "http://h.example/1",
                                  "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
                                  "WARC-Refers-To-Target-URI: http://h.example/original\r\n"
                                  "WARC-Profile: http://netpreserve.org/warc/1.1/revisit/"
                                  "identical-payload-digest\r\n"));
  ASSERT_EQ(all.records.size(), 1u);
  StatusOr<std::optional<WarcPage>> page = InterpretRecord(all.records[0]);
  ASSERT_TRUE(page.ok() && page->has_value());
  EXPECT_EQ((*page)->kind, WarcPage::Kind::kRevisit);
  EXPECT_EQ((*page)->refers_to_uri, "http://h.example/original");
  EXPECT_EQ((*page)->http_status, 200);
  EXPECT_TRUE((*page)->body.empty());
}

// A record with its own WARC-Record-ID (Record() gives every record the same one).
std::string RecordWithId(std::string_view type, std::string_view id, std::string_view uri,
                         std::string_view extra = "") {
  std::string r = Record(type, uri,
                         type == "request" ? "GET / HTTP/1.1\r\n\r\n"
                                           : "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
                         extra);
  const std::string fixed = "<urn:uuid:00000000-0000-4000-8000-000000000000>";
  r.replace(r.find(fixed), fixed.size(), std::string(id));
  return r;
}

// Reads `bytes` as the daemon does, interpreting each record with the reader's targets as they
// are when it is read; returns each revisit's refers_to_uri, in order.
std::vector<std::string> RevisitTargets(std::string_view bytes, WarcReaderOptions options = {}) {
  WarcReader reader(MakeStringSource(bytes), options);
  std::vector<std::string> out;
  WarcRecord record;
  while (reader.Next(&record)) {
    StatusOr<std::optional<WarcPage>> page = InterpretRecord(record, {}, &reader.targets());
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (page.ok() && page->has_value() && (*page)->kind == WarcPage::Kind::kRevisit) {
      out.push_back((*page)->refers_to_uri);
    }
  }
  EXPECT_TRUE(reader.problems().empty());
  return out;
}

// Bug: a revisit that names its original only by WARC-Refers-To (a record ID, as wget writes
// it) was taken to be a revisit of its own target URI.
TEST(WarcReaderTest, RevisitWithOnlyRefersToResolvesTheRecordId) {
  const std::string original = RecordWithId("response", "<urn:uuid:a>", "http://h.example/orig");
  const std::string resource = RecordWithId("resource", "<urn:uuid:r>", "<http://h.example/res>");
  const std::string revisit = RecordWithId("revisit", "<urn:uuid:v1>", "http://h.example/copy",
                                           "WARC-Refers-To: <urn:uuid:a>\r\n"
                                           "WARC-Profile: http://netpreserve.org/warc/1.1/revisit/"
                                           "identical-payload-digest\r\n");
  const std::string revisit_of_resource = RecordWithId(
      "revisit", "<urn:uuid:v2>", "http://h.example/copy2", "WARC-Refers-To: <urn:uuid:r>\r\n");
  const std::string file = original + resource + revisit + revisit_of_resource;
  EXPECT_EQ(RevisitTargets(file),
            (std::vector<std::string>{"http://h.example/orig", "http://h.example/res"}));
  // The same through a gzip member per record.
  EXPECT_EQ(
      RevisitTargets(Gzip(original) + Gzip(resource) + Gzip(revisit) + Gzip(revisit_of_resource)),
      (std::vector<std::string>{"http://h.example/orig", "http://h.example/res"}));
  // Without the reader's targets, WARC-Refers-To cannot be resolved: today's fallback.
  const ReadAll all = Read(file);
  ASSERT_EQ(all.records.size(), 4u);
  StatusOr<std::optional<WarcPage>> page = InterpretRecord(all.records[2]);
  ASSERT_TRUE(page.ok() && page->has_value());
  EXPECT_EQ((*page)->refers_to_uri, "http://h.example/copy");
}

TEST(WarcReaderTest, RefersToTargetUriWinsOverTheRecordId) {
  const std::string file = RecordWithId("response", "<urn:uuid:a>", "http://h.example/orig") +
                           RecordWithId("revisit", "<urn:uuid:v>", "http://h.example/copy",
                                        "WARC-Refers-To: <urn:uuid:a>\r\n"
                                        "WARC-Refers-To-Target-URI: <http://h.example/named>\r\n");
  EXPECT_EQ(RevisitTargets(file), std::vector<std::string>{"http://h.example/named"});
}

TEST(WarcReaderTest, UnknownRefersToFallsBackToTheOwnTargetUri) {
  const std::string file =
      RecordWithId("response", "<urn:uuid:a>", "http://h.example/orig") +
      // Only responses and resources are remembered: a request's or a revisit's ID is unknown.
      RecordWithId("request", "<urn:uuid:q>", "http://h.example/orig") +
      RecordWithId("revisit", "<urn:uuid:v1>", "http://h.example/one",
                   "WARC-Refers-To: <urn:uuid:elsewhere>\r\n") +
      RecordWithId("revisit", "<urn:uuid:v2>", "http://h.example/two",
                   "WARC-Refers-To: <urn:uuid:q>\r\n") +
      RecordWithId("revisit", "<urn:uuid:v3>", "http://h.example/three",
                   "WARC-Refers-To: <urn:uuid:v1>\r\n") +
      // An original read after its revisit does not count.
      RecordWithId("revisit", "<urn:uuid:v4>", "http://h.example/four",
                   "WARC-Refers-To: <urn:uuid:late>\r\n") +
      RecordWithId("response", "<urn:uuid:late>", "http://h.example/late");
  EXPECT_EQ(RevisitTargets(file),
            (std::vector<std::string>{"http://h.example/one", "http://h.example/two",
                                      "http://h.example/three", "http://h.example/four"}));
}

TEST(WarcReaderTest, RememberedRecordIdsAreBounded) {
  std::string file;
  for (int i = 0; i < 5; ++i) {
    file += RecordWithId("response", "<urn:uuid:" + std::to_string(i) + ">",
                         "http://h.example/" + std::to_string(i));
  }
  for (int i = 0; i < 5; ++i) {
    file += RecordWithId("revisit", "<urn:uuid:v" + std::to_string(i) + ">",
                         "http://h.example/copy" + std::to_string(i),
                         "WARC-Refers-To: <urn:uuid:" + std::to_string(i) + ">\r\n");
  }
  WarcReaderOptions options;
  options.max_remembered_records = 2;
  // Only the latest two originals (3 and 4) are still known.
  EXPECT_EQ(RevisitTargets(file, options),
            (std::vector<std::string>{"http://h.example/copy0", "http://h.example/copy1",
                                      "http://h.example/copy2", "http://h.example/3",
                                      "http://h.example/4"}));
  {
    WarcReader reader(MakeStringSource(file), options);
    WarcRecord record;
    while (reader.Next(&record)) EXPECT_LE(reader.targets().size(), 2u);
    EXPECT_EQ(reader.targets().size(), 2u);
    EXPECT_EQ(reader.targets().Find("urn:uuid:2"), nullptr);
    ASSERT_NE(reader.targets().Find("urn:uuid:4"), nullptr);
    EXPECT_EQ(*reader.targets().Find("<urn:uuid:4>"), "http://h.example/4");
  }
  options.max_remembered_records = 0;  // remembers none
  EXPECT_EQ(RevisitTargets(file, options).back(), "http://h.example/copy4");
  // With the default bound, all five resolve.
  EXPECT_EQ(RevisitTargets(file)[0], "http://h.example/0");

  // Directly: an ID remembered again gets its new target and keeps its place in the order.
  WarcRecordTargets targets(2);
  const ReadAll all = Read(RecordWithId("response", "<urn:uuid:x>", "http://h.example/x1") +
                           RecordWithId("response", "<urn:uuid:y>", "http://h.example/y") +
                           RecordWithId("response", "<urn:uuid:x>", "http://h.example/x2") +
                           RecordWithId("resource", "<urn:uuid:z>", "http://h.example/z"));
  ASSERT_EQ(all.records.size(), 4u);
  for (const WarcRecord& r : all.records) targets.Remember(r);
  EXPECT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets.Find("urn:uuid:x"), nullptr);  // the oldest, though renewed
  ASSERT_NE(targets.Find("urn:uuid:y"), nullptr);
  EXPECT_EQ(*targets.Find("urn:uuid:y"), "http://h.example/y");
  ASSERT_NE(targets.Find("urn:uuid:z"), nullptr);
}

TEST(WarcReaderTest, BadRecordsAreReportedWithOffsetsAndSkipped) {
  const std::string good1 = Record("resource", "http://h.example/a", "A");
  const std::string no_length =
      "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: http://h.example/b\r\n\r\nB\r\n\r\n";
  const std::string junk = "this is not a record\r\nnor this\r\n";
  const std::string good2 = Record("resource", "http://h.example/c", "C");
  const ReadAll all = Read(good1 + no_length + junk + good2);
  ASSERT_EQ(all.records.size(), 2u);
  EXPECT_EQ(*all.records[1].Header("WARC-Target-URI"), "http://h.example/c");
  ASSERT_EQ(all.problems.size(), 2u);
  EXPECT_EQ(all.problems[0].offset, good1.size());
  EXPECT_EQ(all.problems[0].status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(all.problems[1].status.code(), StatusCode::kInvalidArgument);
}

TEST(WarcReaderTest, OversizedRecordIsSkipped) {
  const std::string big = Record("resource", "http://h.example/big", std::string(5000, 'x'));
  const std::string small = Record("resource", "http://h.example/small", "s");
  WarcReaderOptions options;
  options.max_record_bytes = 1000;
  const ReadAll all = Read(big + small, options);
  ASSERT_EQ(all.records.size(), 1u);
  EXPECT_EQ(all.records[0].block, "s");
  ASSERT_EQ(all.problems.size(), 1u);
  EXPECT_EQ(all.problems[0].status.code(), StatusCode::kResourceExhausted);
}

TEST(WarcReaderTest, CorruptGzipMemberIsSkipped) {
  const std::string a = Gzip(Record("resource", "http://h.example/a", "A"));
  std::string b = Gzip(Record("resource", "http://h.example/b", std::string(300, 'b')));
  for (size_t i = 12; i < b.size() - 8; i += 5) b[i] = static_cast<char>(b[i] ^ 0x5a);
  const std::string c = Gzip(Record("resource", "http://h.example/c", "C"));
  const ReadAll all = Read(a + b + c);
  ASSERT_EQ(all.records.size(), 2u);
  EXPECT_EQ(*all.records[0].Header("WARC-Target-URI"), "http://h.example/a");
  EXPECT_EQ(*all.records[1].Header("WARC-Target-URI"), "http://h.example/c");
  EXPECT_EQ(all.records[1].member_offset, a.size() + b.size());
  ASSERT_FALSE(all.problems.empty());
  EXPECT_EQ(all.problems[0].offset, a.size());
  EXPECT_EQ(all.problems[0].status.code(), StatusCode::kDataLoss);
}

// Damaged deflate data can decode without error across the members after it: here a stored
// block claims 65,535 bytes, so inflate reads every member that follows as its content and runs
// out of input. The scan for the next member starts inside the damaged one, and finds them.
TEST(WarcReaderTest, CorruptGzipMemberThatRunsOverTheNextOnesIsSkipped) {
  const std::string a = Gzip(Record("resource", "http://h.example/a", "A"));
  const std::string runaway("\x1f\x8b\x08\0\0\0\0\0\0\xff"  // gzip header
                            "\x00\xff\xff\x00\x00",              // stored, LEN 65535
                            15);
  std::string rest;
  for (const char* name : {"b", "c", "d"}) {
    rest += Gzip(Record("resource", std::string("http://h.example/") + name, name));
  }
  const ReadAll all = Read(a + runaway + rest);
  ASSERT_EQ(all.records.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(*all.records[i].Header("WARC-Target-URI"),
              std::string("http://h.example/") + "abcd"[i]);
  }
  EXPECT_EQ(all.records[1].member_offset, a.size() + runaway.size());
  // What the runaway member decoded before its input ran out is not a record either; both are
  // reported at its offset.
  ASSERT_FALSE(all.problems.empty());
  for (const WarcProblem& p : all.problems) EXPECT_EQ(p.offset, a.size()) << p.status.message();
  EXPECT_EQ(all.problems.back().status.code(), StatusCode::kDataLoss);
  EXPECT_NE(all.problems.back().status.message().find("does not end"), std::string::npos)
      << all.problems.back().status.message();

  // The damaged member's input is kept up to max_record_bytes + max_header_bytes. Past that
  // the scan starts where inflate stopped: here the end of the file, so the rest is lost, and
  // reported, and nothing else goes wrong.
  WarcReaderOptions small;
  small.max_record_bytes = 16;
  small.max_header_bytes = 16;
  std::string big_rest;
  while (big_rest.size() < 100'000) big_rest += rest;
  const ReadAll capped = Read(a + runaway + big_rest, small);
  EXPECT_EQ(capped.records.size(), 0u);  // "a" is over 16 bytes of header too
  EXPECT_FALSE(capped.problems.empty());
}

// A .warc.gz whose first bytes are damaged is still read as gzip: from the first member that
// decodes to a record on. A plain WARC whose first line is damaged stays plain.
TEST(WarcReaderTest, DamagedFirstBytesOfAGzipWarc) {
  const std::string a = Gzip(Record("resource", "http://h.example/a", "A"));
  const std::string b = Gzip(Record("resource", "http://h.example/b", "B"));
  const std::string c = Gzip(Record("resource", "http://h.example/c", "C"));
  for (size_t damaged : {1, 2, 3, 10, 20}) {
    std::string file = a + b + c;
    for (size_t i = 0; i < damaged; ++i) file[i] = static_cast<char>(file[i] ^ 0x55);
    const ReadAll all = Read(file);
    EXPECT_TRUE(all.gzip) << damaged;
    ASSERT_EQ(all.records.size(), 2u) << damaged;
    EXPECT_EQ(*all.records[0].Header("WARC-Target-URI"), "http://h.example/b");
    EXPECT_EQ(all.records[0].member_offset, a.size());
    ASSERT_FALSE(all.problems.empty());
    EXPECT_EQ(all.problems[0].offset, 0u);
    EXPECT_EQ(all.problems[0].status.message(), "junk before the first gzip member");
  }
  // A gzip-encoded page in a record (as crawlers store Content-Encoding: gzip) is not a member
  // of the file.
  const std::string plain = "WARX/1.0\r\n" +
                            Record("resource", "http://h.example/z", Gzip("<html>z</html>")) +
                            Record("resource", "http://h.example/y", "Y");
  const ReadAll all = Read(plain);
  EXPECT_FALSE(all.gzip);
  ASSERT_EQ(all.records.size(), 2u);  // the bad line is skipped up to the next record
  EXPECT_EQ(*all.records[0].Header("WARC-Target-URI"), "http://h.example/z");
  EXPECT_EQ(all.records[0].block, Gzip("<html>z</html>"));
}

// Truncating a small file at every offset never crashes, keeps every record that ends before the
// cut, and reports the cut record.
TEST(WarcReaderTest, TruncationAtEveryOffset) {
  const std::string r1 = Record("resource", "http://h.example/a", "first");
  const std::string r2 = Record("response", "http://h.example/b", kResponse1);
  const std::string r3 = Record("resource", "http://h.example/c", "third");
  for (const bool gzip : {false, true}) {
    const std::string m1 = gzip ? Gzip(r1) : r1, m2 = gzip ? Gzip(r2) : r2,
                      m3 = gzip ? Gzip(r3) : r3;
    const std::string file = m1 + m2 + m3;
    for (size_t cut = 0; cut <= file.size(); ++cut) {
      const ReadAll all = Read(std::string_view(file).substr(0, cut));
      // A plain record is complete once its block is in (the CRLF CRLF after it is optional
      // for the reader). A gzip record may come out once its block is decoded, before the last
      // compressed bytes (CRLF CRLF, end of the deflate stream, 8-byte CRC and size trailer);
      // the missing end is then reported as a problem.
      const size_t slack = gzip ? 16 : 4;
      size_t strict = 0, lenient = 0, end = 0;
      bool clean_cut = cut == 0;
      for (const std::string* m : {&m1, &m2, &m3}) {
        end += m->size();
        if (cut >= end) ++strict;
        if (cut + slack >= end) ++lenient;
        if (cut + (gzip ? 0 : slack) >= end && cut <= end) clean_cut = true;
      }
      ASSERT_GE(all.records.size(), strict) << "gzip=" << gzip << " cut=" << cut;
      ASSERT_LE(all.records.size(), lenient) << "gzip=" << gzip << " cut=" << cut;
      EXPECT_EQ(all.problems.empty(), clean_cut) << "gzip=" << gzip << " cut=" << cut;
    }
  }
}

TEST(WarcDateTest, Parses) {
  EXPECT_EQ(*ParseWarcDate("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*ParseWarcDate("2024-03-01T12:00:00Z"), 1709294400);
  EXPECT_EQ(*ParseWarcDate("2024-03-01T12:00:00.123456Z"), 1709294400);
  EXPECT_EQ(*ParseWarcDate("2024-03-01"), 1709251200);
  EXPECT_EQ(FormatWarcDate(1709294400), "2024-03-01T12:00:00Z");
  for (const char* bad : {"", "yesterday", "2024-13-01T00:00:00Z", "2024-03-01T12:00:00",
                          "2024-03-01T25:00:00Z", "2024-03-01X12:00:00Z"}) {
    EXPECT_FALSE(ParseWarcDate(bad).ok()) << bad;
  }
}

TEST(WarcInterpretTest, RejectsMissingUriOrDateAndBadHttp) {
  WarcRecord record;
  record.headers = {{"WARC-Type", "response"}, {"WARC-Date", "2024-03-01T12:00:00Z"}};
  EXPECT_FALSE(InterpretRecord(record).ok());
  record.headers.emplace_back("WARC-Target-URI", "http://h.example/");
  record.block = "not http";
  EXPECT_FALSE(InterpretRecord(record).ok());
  record.block = "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\nxx";
  EXPECT_EQ(InterpretRecord(record).status().code(), StatusCode::kInvalidArgument);
  record.block = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab";
  EXPECT_FALSE(InterpretRecord(record).ok());
}

class StringSink final : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status Write(std::string_view bytes) override {
    out_->append(bytes);
    return OkStatus();
  }
  Status Close() override { return OkStatus(); }

 private:
  std::string* out_;
};

TEST(WarcWriterTest, RoundTrip) {
  for (const bool gzip : {false, true}) {
    std::string file;
    WarcWriter writer(std::make_unique<StringSink>(&file), gzip);
    ASSERT_TRUE(writer.WriteWarcinfo(1709294400, {{"software", "shingled"}}).ok());
    ASSERT_TRUE(writer
                    .WriteResponse("http://h.example/p", 1709294401, 200,
                                   {{"Content-Type", "text/html; charset=Shift_JIS"},
                                    {"Content-Encoding", "gzip"}},
                                   "\x93\xfa\x96\x7b")
                    .ok());
    ASSERT_TRUE(writer.Close().ok());
    const ReadAll all = Read(file);
    EXPECT_EQ(all.gzip, gzip);
    EXPECT_TRUE(all.problems.empty());
    ASSERT_EQ(all.records.size(), 2u);
    EXPECT_EQ(all.records[0].version, "WARC/1.1");
    EXPECT_TRUE(all.records[0].Header("WARC-Record-ID")->starts_with("<urn:uuid:"));
    StatusOr<std::optional<WarcPage>> page = InterpretRecord(all.records[1]);
    ASSERT_TRUE(page.ok() && page->has_value()) << page.status().ToString();
    EXPECT_EQ((*page)->url, "http://h.example/p");
    EXPECT_EQ((*page)->date_unix, 1709294401);
    EXPECT_EQ((*page)->body, "\x93\xfa\x96\x7b");
    EXPECT_EQ((*page)->charset, "Shift_JIS");
  }
}

}  // namespace
}  // namespace shingled::crawler
