// CrawlWarc: what a crawler sweep fetched, written to WARC files ([crawler] warc_dir,
// `shingled crawl --warc-dir`), with revisit records for content already archived. The files
// and their CDXJ indexes are crawler/warc_archive.h's; this decides what goes in them.
//
// Per fetch that got an HTTP answer (pages, 404/410, other statuses, redirects): a request and a
// response record for each redirect hop the fetcher followed, then for the final answer. A fetch
// with no answer (timeout, refused address) and a URL robots.txt refused write nothing; neither
// do robots.txt fetches (the crawler keeps those to itself). The request record is rebuilt from
// what shingled sends (request line, Host, User-Agent, Accept, Accept-Encoding): libcurl's bytes
// are not kept.
//
// Revisits: a 2xx body byte-identical to a capture already in the archive directory becomes a
// `revisit` record (profile identical-payload-digest) instead of a full response, as Heritrix's
// deduplicator and `wget --warc-dedup` do. "Already archived" is, in order:
//   1. a response this sweep wrote with the same payload digest (WARC-Refers-To known);
//   2. the store's document with the same raw bytes (Store::FindIdentical), whose earliest
//      version under this URL (else its first URL and date, Store::Cluster) is a capture the
//      archive directory's CDXJ indexes list with the same digest; the record ID is then read
//      from that file at that offset.
// Content the store knows but the archive does not hold (it came from POST /v1/pages or
// `ingest`, or was crawled without warc_dir) is written in full: a revisit must point at
// something a replay tool can find. At most kMaxIndexedCaptures captures of earlier files, the
// latest files first, and of this sweep's responses are remembered (~200 bytes each).
//
// Not safe for concurrent use: the sweep calls it from the crawler's thread.
#ifndef SHINGLED_DAEMON_CRAWL_WARC_H_
#define SHINGLED_DAEMON_CRAWL_WARC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "crawler/crawler.h"
#include "crawler/warc_archive.h"
#include "dedup/sketch.h"
#include "store/store.h"

namespace shingled::daemon {

inline constexpr size_t kMaxIndexedCaptures = size_t{1} << 20;

struct CrawlWarcOptions {
  std::string dir;  // empty: no WARC output
  uint64_t max_file_bytes = uint64_t{1} << 30;
  std::string user_agent;   // for the request records and the warcinfo record
  bool obey_robots = true;  // the warcinfo record's `robots`: "obey" or "ignore"
};

// What the WARC output did in a sweep, for the sweep's report.
struct WarcReport {
  bool enabled = false;
  std::vector<std::string> files;  // finished files
  uint64_t responses = 0;
  uint64_t revisits = 0;
  uint64_t bytes = 0;
  std::string error;  // why WARC output stopped; empty when it did not
};

class CrawlWarc {
 public:
  // Reads the CDXJ indexes already in options.dir (a missing or unreadable index is skipped)
  // and begins the first file (crawler::WarcArchive::Open's errors). `store` and `context` must
  // outlive this object.
  static StatusOr<std::unique_ptr<CrawlWarc>> Open(const CrawlWarcOptions& options,
                                                   const std::string& sweep, store::Store* store,
                                                   const dedup::SketchContext* context);
  CrawlWarc(const CrawlWarc&) = delete;
  CrawlWarc& operator=(const CrawlWarc&) = delete;
  ~CrawlWarc();

  // Writes the records of one crawler outcome (see the file comment). The archive's error when
  // a write failed: every later call returns it.
  Status Record(const crawler::CrawledPage& page);
  // Finishes the last file. The first error, if any.
  Status Close();
  WarcReport Report() const;

 private:
  struct Capture {
    std::string url;
    int64_t date = 0;
    std::string record_id;  // empty until read from `file`
    std::string file;       // path; empty for this sweep's own
    uint64_t offset = 0;
    uint64_t length = 0;
  };
  CrawlWarc(const CrawlWarcOptions& options, store::Store* store,
            const dedup::SketchContext* context);
  void LoadIndexes();
  // The capture a 2xx body repeats, or nullptr.
  const Capture* FindEarlier(const std::string& url, std::string_view body,
                             const std::string& digest);
  Status WriteExchange(const std::string& url, int64_t date, int status,
                       const crawler::HeaderList& headers, std::string_view body, bool may_revisit);
  void Remember(std::string key, Capture capture);

  const CrawlWarcOptions options_;
  store::Store* const store_;
  const dedup::SketchContext* const context_;
  std::unique_ptr<crawler::WarcArchive> archive_;
  // This sweep's responses by payload digest.
  std::unordered_map<std::string, Capture> by_digest_;
  // Earlier files' responses by "URL TIMESTAMP14 DIGEST" (DIGEST without "sha1:").
  std::unordered_map<std::string, Capture> by_capture_;
  Status closed_status_;
  bool closed_ = false;
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_CRAWL_WARC_H_
