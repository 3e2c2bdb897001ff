// CDXJ: the index of a WARC file that replay tools (pywb, OutbackCDX) read, one line per
// capture:
//
//   SURT-KEY TIMESTAMP14 {"url":...,"mime":...,"status":...,"digest":...,"length":...,
//                         "offset":...,"filename":...}
//
// as webrecorder's indexers (cdxj-indexer, warcio's CDXIndexer) write it: the key is the URL's
// SURT form (SurtKey), the timestamp the WARC-Date's 14 digits, the JSON compact and in that key
// order, with status, length and offset as strings, the digest without its "sha1:" label, mime
// "warc/revisit" for a revisit record and the HTTP Content-Type's media type otherwise (absent
// when there is none). `length` and `offset` are the compressed record's (its gzip member's) in
// the file. A file's lines are sorted bytewise (`LC_ALL=C sort`), which is the order binary
// search in those tools expects.
//
// Pure functions; thread-safe.
#ifndef SHINGLED_CRAWLER_CDXJ_H_
#define SHINGLED_CRAWLER_CDXJ_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shingled::crawler {

// The SURT sort key of an absolute http(s) URL as warcio.js's getSurt() computes it: lower-cased,
// a leading "www." (or "www2." ...) dropped, the host's labels reversed and joined by ',' (an IP
// address too), ":port" when the URL gives one, ')', the path, and the query's '&'-separated
// parts sorted. "http://www.Example.com:8080/a?b=1&a=2" -> "com,example:8080)/a?a=2&b=1". The
// fragment is dropped. Text that is not an http(s) URL is returned as it is.
std::string SurtKey(std::string_view url);

// "2024-03-01T12:00:00Z" (or with fractions) -> "20240301120000": its first 14 digits.
std::string CdxjTimestamp(std::string_view warc_date);

struct CdxjEntry {
  std::string url;        // WARC-Target-URI
  std::string warc_date;  // WARC-Date as written
  std::string mime;       // as described in the file comment; may be empty (then left out)
  int http_status = 0;    // 0: left out
  std::string digest;     // WARC-Payload-Digest as written ("sha1:..."); may be empty
  uint64_t length = 0;    // of the gzip member
  uint64_t offset = 0;    // of the gzip member in the file
  std::string filename;   // the WARC file's name, without directory
};

// One line, without the trailing newline.
std::string FormatCdxjLine(const CdxjEntry& entry);

// Sorts lines bytewise, as a CDXJ file holds them.
void SortCdxjLines(std::vector<std::string>* lines);

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_CDXJ_H_
