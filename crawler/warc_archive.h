// WarcArchive: the crawler's WARC output (WARC 1.1, ISO 28500). A directory of rolling files
//
//   DIR/shingled-<sweep>-<UTC yyyymmddhhmmss>-<serial>.warc.gz   one gzip member per record
//   DIR/shingled-<sweep>-<UTC yyyymmddhhmmss>-<serial>.warc.gz.cdxj   its index (crawler/cdxj.h)
//
// Each file opens with a `warcinfo` record; then each HTTP exchange is a `request` record and a
// `response` record (or a `revisit` record in its place), linked both ways by
// WARC-Concurrent-To and to the warcinfo record by WARC-Warcinfo-ID. Responses carry
// WARC-Payload-Digest (of the entity body) and every record but warcinfo WARC-Block-Digest, both
// "sha1:" + base32 (RFC 4648), as Heritrix, wget and the webrecorder tools write and check them.
// A revisit (profile identical-payload-digest, WARC 1.1) holds only the HTTP head of the new
// response and names the earlier capture with the same payload: WARC-Refers-To-Target-URI,
// WARC-Refers-To-Date and, when the caller knows it, WARC-Refers-To (its record ID).
//
// Crash safety: a file is written as NAME.open and renamed to NAME only once complete: closed
// and fsynced, its index written (NAME.cdxj.open, fsynced, renamed) first, the directory fsynced
// after. A killed crawl leaves a `.open` file that no tool takes for a finished one (the records
// in it up to the kill are readable).
//
// Errors are sticky: after the first failed write (disk full, I/O error) every later call returns
// that error, and the file being written is left as `.open` (its last record may be cut).
//
// Not safe for concurrent use.
#ifndef SHINGLED_CRAWLER_WARC_ARCHIVE_H_
#define SHINGLED_CRAWLER_WARC_ARCHIVE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "crawler/warc.h"

namespace shingled::crawler {

// RFC 4648 base32 of `bytes`, upper case, '='-padded to a multiple of 8 characters.
std::string Base32(std::string_view bytes);
// "sha1:" + Base32(SHA-1 of `bytes`): a WARC digest as archive tools expect it.
std::string WarcSha1Digest(std::string_view bytes);

struct WarcArchiveOptions {
  // Where the files go; created (with parents) if missing.
  std::string dir;
  // Part of each file name; characters other than letters, digits, '.', '_' and '-' become '-',
  // and a name of over 120 bytes is cut to 103 and ends with "-" and 16 characters of its SHA-1
  // (Base32), so that every file name stays within the file system's limit. Any string.
  std::string sweep;
  // A file is closed and the next one begun once it holds this many bytes (compressed); the
  // exchange that crosses the limit stays whole in the file it began in. Range >= 1.
  uint64_t max_file_bytes = uint64_t{1} << 30;
  // The content of each file's warcinfo record (besides `format` and `conformsTo`, which are
  // always written): software, operator, isPartOf, robots, http-header-user-agent, ...
  HeaderList warcinfo;
};

// One HTTP exchange as the crawler made it.
struct HttpExchange {
  std::string url;
  int64_t date_unix = 0;     // when the request was sent: WARC-Date of both records
  std::string request_head;  // "GET /path HTTP/1.1\r\nHost: ...\r\n...\r\n\r\n"
  int http_status = 0;
  HeaderList response_headers;  // as received; encodings are dropped (HttpResponseHead)
  std::string_view body;        // decoded
};

// The earlier capture a revisit refers to.
struct WarcRevisitOf {
  std::string url;        // WARC-Refers-To-Target-URI
  int64_t date_unix = 0;  // WARC-Refers-To-Date
  std::string record_id;  // WARC-Refers-To ("<urn:uuid:...>"); empty when not known
};

// Where an exchange's response (or revisit) record went.
struct WarcWritten {
  std::string record_id;
  std::string payload_digest;  // "sha1:..."
  std::string file;            // the file's final name, without the directory
  uint64_t offset = 0;         // of the record's gzip member
  uint64_t length = 0;         // of that member
};

class WarcArchive {
 public:
  // Creates the directory if needed and begins the first file (so that an unwritable directory
  // is an error at once). InvalidArgument when the options are invalid; ResourceExhausted or
  // FailedPrecondition (with the path and the system's reason) when the directory or the file
  // cannot be created or written.
  static StatusOr<std::unique_ptr<WarcArchive>> Open(WarcArchiveOptions options);
  // Close()s, dropping its error (call Close() to see it).
  ~WarcArchive();
  WarcArchive(const WarcArchive&) = delete;
  WarcArchive& operator=(const WarcArchive&) = delete;

  // Writes the exchange's request record, then its response record, or, when `revisit_of` is not
  // null, a revisit record instead (no body: the payload is `revisit_of`'s, and the caller
  // vouches that `exchange.body` is byte-identical to it). Rolls to a new file first when the
  // current one is full. Errors are the file system's, sticky (see the file comment);
  // FailedPrecondition after Close().
  StatusOr<WarcWritten> Write(const HttpExchange& exchange, const WarcRevisitOf* revisit_of);

  // Finishes the current file (fsync, index, rename). OK when already closed; after an error,
  // that error (the file stays `.open`).
  Status Close();

  // The paths of the files finished so far.
  const std::vector<std::string>& files() const { return files_; }
  uint64_t responses() const { return responses_; }
  uint64_t revisits() const { return revisits_; }
  uint64_t bytes() const { return bytes_total_; }  // written in all files, compressed
  // OK, or the first error.
  const Status& status() const { return status_; }

 private:
  class FileSink;
  explicit WarcArchive(WarcArchiveOptions options);
  Status BeginFile();
  Status FinishFile();
  Status Fail(Status status);

  const WarcArchiveOptions options_;
  uint32_t serial_ = 0;
  std::string name_;  // the current file's final name; empty between files
  std::string warcinfo_id_;
  FileSink* sink_ = nullptr;  // owned by writer_
  std::unique_ptr<WarcWriter> writer_;
  std::vector<std::string> cdxj_lines_;  // of the current file
  std::vector<std::string> files_;
  uint64_t responses_ = 0;
  uint64_t revisits_ = 0;
  uint64_t bytes_total_ = 0;
  bool closed_ = false;
  Status status_;
};

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_WARC_ARCHIVE_H_
