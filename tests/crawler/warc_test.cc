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
