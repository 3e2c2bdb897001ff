// WARC files (ISO 28500, WARC 1.0 and 1.1): a streaming reader and a writer.
//
// The reader pulls bytes from a ByteSource (a file, a request body) through a small buffer and
// never holds the file: plain WARC, or gzip with a member per record (.warc.gz; one big member
// works too). It yields one record at a time with its header fields and its content block; a
// block over max_record_bytes is skipped, not held. A truncated or malformed record (bad version
// line, missing Content-Length, corrupt gzip member, early end of file) is reported as a
// WarcProblem with its byte offset and skipped: the reader resynchronizes at the next "WARC/1."
// line, or at the next gzip member, and the rest of the file still goes in.
//
// InterpretRecord() turns a record into a WarcPage: `response` records have their HTTP status
// line and headers parsed, chunked transfer coding and gzip/deflate content encodings decoded
// (with a size limit) and the charset taken from Content-Type; `resource` records are the page
// itself; `revisit` records are an unchanged version of the URL they refer to. `request`,
// `metadata`, `warcinfo` and `conversion` records yield no page.
//
// The URL a revisit refers to: its WARC-Refers-To-Target-URI when present; else the target URI of
// the record its WARC-Refers-To names (a WARC-Record-ID, WARC 1.1 section 5.11; wget writes only
// this one), looked up among the response and resource records the same reader returned before
// (WarcRecordTargets, bounded by WarcReaderOptions::max_remembered_records); else, when neither
// resolves (an original in another file, or forgotten), its own WARC-Target-URI.
//
// The writer writes one record per gzip member (so readers can seek and recover), with
// WARC-Record-ID, WARC-Date, WARC-Target-URI, Content-Type and Content-Length. The crawler's
// archive (rolling files, digests, revisits, CDXJ: crawler/warc_archive.h) writes through it;
// tests use it directly.
//
// A WarcReader or WarcWriter is not safe for concurrent use.
#ifndef SHINGLED_CRAWLER_WARC_H_
#define SHINGLED_CRAWLER_WARC_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"

namespace shingled::crawler {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// The value of the first field named `name` (case-insensitive), or nullptr.
const std::string* FindHeader(const HeaderList& headers, std::string_view name);

// Where the reader gets bytes from.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes into `buffer`; 0 means the end. An error ends the reading.
  virtual StatusOr<size_t> Read(char* buffer, size_t size) = 0;
};

// A ByteSource over a file, read in 64 KiB pieces. NotFound / InvalidArgument when it cannot be
// opened.
StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path);
// A ByteSource over bytes the caller keeps alive while the source is used.
std::unique_ptr<ByteSource> MakeStringSource(std::string_view bytes);

struct WarcReaderOptions {
  // A record whose content block is larger is skipped (reported as ResourceExhausted). Bounds
  // the memory one record takes. 64 MiB holds any web page worth sketching. With
  // max_header_bytes it also bounds the compressed input of one gzip member kept to find the
  // members after it when it turns out corrupt.
  uint64_t max_record_bytes = 64ull << 20;
  // Longest header line and most header bytes per record; beyond them the record is malformed.
  size_t max_header_bytes = 256 << 10;
  // Response and resource records whose WARC-Record-ID -> WARC-Target-URI the reader keeps, the
  // latest ones, to resolve revisits that name their original only by WARC-Refers-To. Each costs
  // its two strings and ~100 bytes of bookkeeping: with URLs of ~100 bytes the default keeps at
  // most ~15 MB per reader, and covers originals up to 65,536 pages back (more than wget's
  // revisits of a crawl's own duplicates usually reach). A revisit whose original was forgotten
  // refers to its own target URI. 0 remembers none. Range >= 0.
  size_t max_remembered_records = 65536;
};

struct WarcRecord {
  uint64_t offset = 0;         // of the record in the decoded (uncompressed) stream
  uint64_t member_offset = 0;  // of the gzip member holding it in the file; == offset if plain
  std::string version;         // "WARC/1.0", "WARC/1.1"
  HeaderList headers;          // in file order, names as written
  std::string block;           // the content block, Content-Length bytes

  const std::string* Header(std::string_view name) const { return FindHeader(headers, name); }
  std::string Type() const;  // WARC-Type, lower-cased
};

// A record that could not be read: where, and why.
struct WarcProblem {
  uint64_t offset = 0;  // in the file as stored (the gzip member's offset for .warc.gz)
  Status status;
};

// The WARC-Record-ID -> WARC-Target-URI of the latest `response` and `resource` records given to
// Remember(), at most `max_records` of them: when full, the oldest is forgotten first. IDs are
// compared as written, without their angle brackets. Not safe for concurrent use.
class WarcRecordTargets {
 public:
  explicit WarcRecordTargets(size_t max_records) : max_records_(max_records) {}

  // Remembers a response or resource record that has both fields; any other record is ignored.
  // A record ID seen before gets the new target and keeps its place in the order.
  void Remember(const WarcRecord& record);
  // The target URI (without angle brackets) of the remembered record with ID `record_id`, or
  // nullptr when unknown or forgotten. Valid until the next Remember().
  const std::string* Find(std::string_view record_id) const;
  size_t size() const { return targets_.size(); }

 private:
  const size_t max_records_;
  std::unordered_map<std::string, std::string> targets_;
  std::deque<std::string> order_;  // the keys of targets_, oldest first
};

class WarcReader {
 public:
  explicit WarcReader(std::unique_ptr<ByteSource> source, WarcReaderOptions options = {});
  ~WarcReader();
  WarcReader(const WarcReader&) = delete;
  WarcReader& operator=(const WarcReader&) = delete;

  // Reads the next good record into `*record` and returns true; returns false at the end of the
  // input or after a read error from the source (then status() says why). Bad records on the
  // way are skipped and added to problems().
  bool Next(WarcRecord* record);

  const std::vector<WarcProblem>& problems() const { return problems_; }
  // OK unless the ByteSource failed.
  const Status& status() const { return status_; }
  // Whether the input was gzip.
  bool gzip() const;
  // The response and resource records returned so far (the latest max_remembered_records), for
  // InterpretRecord() to resolve revisits' WARC-Refers-To.
  const WarcRecordTargets& targets() const { return targets_; }

 private:
  class Stream;
  std::unique_ptr<Stream> stream_;
  WarcReaderOptions options_;
  WarcRecordTargets targets_;
  std::vector<WarcProblem> problems_;
  Status status_;
};

// A page, or an unchanged version of one, as a WARC file tells it.
struct WarcPage {
  enum class Kind { kResponse, kResource, kRevisit };
  Kind kind = Kind::kResponse;
  std::string url;            // WARC-Target-URI (angle brackets of WARC 1.0 style removed)
  std::string date;           // WARC-Date as written (ISO 8601, UTC)
  int64_t date_unix = 0;      // WARC-Date in seconds since the epoch (fractions dropped)
  int http_status = 0;        // response: the HTTP status; revisit: the status when it had one
  HeaderList http_headers;    // response and revisit with HTTP headers
  std::string content_type;   // HTTP Content-Type (response) or the record's (resource)
  std::string charset;        // the charset parameter of content_type, as given; may be empty
  std::string body;           // decoded entity body; empty for revisits
  std::string refers_to_uri;  // revisit: the URL it refers to (see the file comment)
  uint64_t offset = 0;        // record.member_offset, for messages
};

struct WarcPageOptions {
  // Decoding a chunked or compressed body stops with ResourceExhausted beyond this many bytes
  // (a gzip bomb in a WARC must not take the process down). Range: > 0.
  uint64_t max_body_bytes = 64ull << 20;
};

// The page a record holds. nullopt for record types that hold no page (request, metadata,
// warcinfo, conversion, continuation, unknown). `targets` (may be null: then WARC-Refers-To is
// not resolved) resolves a revisit's WARC-Refers-To when it has no WARC-Refers-To-Target-URI;
// pass the reader's targets(). InvalidArgument for a record without a valid
// WARC-Target-URI or WARC-Date, or a response whose HTTP head is malformed; ResourceExhausted
// when the decoded body exceeds the limit; InvalidArgument for an unsupported content encoding
// (br, zstd) or corrupt gzip/deflate/chunked data.
StatusOr<std::optional<WarcPage>> InterpretRecord(const WarcRecord& record,
                                                  const WarcPageOptions& options = {},
                                                  const WarcRecordTargets* targets = nullptr);

// Parses an ISO 8601 UTC date as WARC uses it ("2024-03-01T12:00:00Z", optionally with
// fractional seconds, or only a date). InvalidArgument otherwise.
StatusOr<int64_t> ParseWarcDate(std::string_view date);
// Formats seconds since the epoch as "2024-03-01T12:00:00Z".
std::string FormatWarcDate(int64_t unix_seconds);

// Decodes HTTP chunked transfer coding (trailers ignored). InvalidArgument when malformed,
// ResourceExhausted beyond max_bytes.
StatusOr<std::string> DecodeChunked(std::string_view body, uint64_t max_bytes);
// Decodes a gzip or zlib/raw deflate body. A gzip body may hold several members (RFC 1952):
// the result is all of them, in order. InvalidArgument when corrupt, truncated or followed by
// bytes that are not another gzip member (trailing garbage), ResourceExhausted beyond max_bytes.
StatusOr<std::string> InflateBody(std::string_view body, bool gzip, uint64_t max_bytes);

// Where the writer puts bytes.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status Write(std::string_view bytes) = 0;
  virtual Status Close() = 0;
};
StatusOr<std::unique_ptr<ByteSink>> OpenFileSink(const std::string& path);

// A new WARC-Record-ID: "<urn:uuid:...>" with a random (version 4) UUID.
std::string NewWarcRecordId();
// The head of an HTTP/1.1 response as a WARC response or revisit record holds it: the status
// line, `http_headers` without Content-Encoding, Transfer-Encoding and Content-Length (the
// crawler stores bodies decoded), then "Content-Length: `body_size`" and the empty line.
std::string HttpResponseHead(int http_status, const HeaderList& http_headers, uint64_t body_size);

class WarcWriter {
 public:
  // `gzip`: one gzip member per record (.warc.gz), otherwise plain.
  WarcWriter(std::unique_ptr<ByteSink> sink, bool gzip);
  ~WarcWriter();
  WarcWriter(const WarcWriter&) = delete;
  WarcWriter& operator=(const WarcWriter&) = delete;

  // Writes a record of WARC/1.1 with the given type and extra header fields (WARC-Type,
  // WARC-Date and Content-Length are added, and WARC-Record-ID unless `fields` has one). Errors
  // are the sink's.
  Status WriteRecord(std::string_view type, int64_t date_unix, const HeaderList& fields,
                     std::string_view block);
  // A `response` record for an HTTP exchange: status line, headers and the body as the
  // crawler received it after decoding (Content-Encoding and Transfer-Encoding headers dropped,
  // Content-Length rewritten, so the record is self-consistent).
  Status WriteResponse(std::string_view url, int64_t date_unix, int http_status,
                       const HeaderList& http_headers, std::string_view body);
  Status WriteWarcinfo(int64_t date_unix, const HeaderList& info_fields);
  Status Close();

 private:
  std::unique_ptr<ByteSink> sink_;
  const bool gzip_;
  bool closed_ = false;
};

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_WARC_H_
