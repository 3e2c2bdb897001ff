// Fetcher: the crawler's seam for the network (docs/DEVELOPMENT.md, "Seams for time and the
// network"). The production implementation is CurlFetcher (crawler/curl_fetcher.h); tests use
// fakes or CurlFetcher against a loopback server.
//
// The interface is asynchronous so one thread can keep many transfers going: Start() queues a
// fetch, Poll() drives transfers and hands back the finished ones. A Fetcher is used from one
// thread (the crawler's); it is not safe for concurrent use.
#ifndef SHINGLED_CRAWLER_FETCHER_H_
#define SHINGLED_CRAWLER_FETCHER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "crawler/warc.h"  // HeaderList

namespace shingled::crawler {

// Why a fetch failed, for counters ("errors by kind") and for telling dead URLs from transient
// failures.
enum class FetchErrorKind {
  kNone,
  kBadUrl,            // not an http(s) URL
  kDns,               // the host does not resolve: the URL is dead
  kConnect,           // refused, unreachable
  kTimeout,           // connect or total timeout
  kTls,               // certificate or handshake failure
  kTooManyRedirects,  // more hops than allowed, or a loop
  kTooLarge,          // body over the size limit (after decoding)
  kContentType,       // a 2xx with a content type the filter refuses
  kBlockedAddress,    // resolved to a private/loopback/link-local address that is not allowed
  kRedirectRefused,   // FetchRequest::allow_redirect said no to a hop
  kNetwork,           // anything else on the way (reset, bad encoding, ...)
};
std::string_view FetchErrorKindName(FetchErrorKind kind);

struct RedirectHop {
  std::string url;       // the URL that answered with a redirect
  int http_status = 0;   // 301, 302, 303, 307, 308
  std::string location;  // its Location header, as sent
};

struct FetchRequest {
  uint64_t id = 0;  // the caller's; echoed in the result
  std::string url;  // absolute http(s) URL
  // Skips the content-type filter: robots.txt is read whatever type the server labels it with.
  bool any_content_type = false;
  // Asked before each redirect hop is requested, with the hop's absolute URL; false stops the
  // fetch there (kRedirectRefused, final_url = the refused URL) before any request is sent to
  // it. Empty allows every hop. Called on the thread that calls Poll().
  std::function<bool(std::string_view url)> allow_redirect;
};

struct FetchResult {
  uint64_t id = 0;
  std::string url;        // as requested
  std::string final_url;  // after redirects
  std::vector<RedirectHop> redirects;
  int http_status = 0;  // of the final response; 0 when none arrived
  std::string http_version;  // of the final response: "1.0", "1.1", "2" or "3"; empty if none
  HeaderList headers;   // of the final response
  std::string body;     // decoded (Content-Encoding undone); empty unless status is 2xx
  // OK when an HTTP response arrived and passed the filters (any status, 404 included);
  // otherwise why not, with the URL in the message. `error_kind` classifies it.
  Status status;
  FetchErrorKind error_kind = FetchErrorKind::kNone;
  std::chrono::milliseconds elapsed{0};
};

class Fetcher {
 public:
  virtual ~Fetcher() = default;
  // Queues a fetch. Its result comes out of a later Poll(), exactly once.
  virtual void Start(FetchRequest request) = 0;
  // Drives the transfers, waiting up to `timeout` for one to progress, and appends the results
  // of finished ones to `*done`. Returns at once when nothing is active.
  virtual void Poll(std::chrono::milliseconds timeout, std::vector<FetchResult>* done) = 0;
  // Fetches started and not yet returned by Poll().
  virtual size_t active() const = 0;
};

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_FETCHER_H_
