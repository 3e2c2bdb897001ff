// CurlFetcher: the Fetcher on libcurl's multi interface. Many transfers run at once on the
// calling thread (curl_multi_poll), none with a thread of its own.
//
// Per transfer: HTTP/1.1, or HTTP/2 over TLS where the server offers it; TLS verification on;
// Accept-Encoding for every coding libcurl was built with (gzip, deflate, br, zstd), decoded by
// libcurl, with the decoded size capped by max_body_bytes (checked in the write callback, which
// aborts the transfer); redirects followed up to max_redirects, each hop recorded; connect and
// total timeouts; a content-type filter for 2xx answers; only http and https, on the first URL
// and on every redirect; no proxy, whatever the environment says.
//
// Address filtering: unless allow_private_addresses, a connection to a private, loopback,
// link-local, CGNAT, multicast or unspecified address is refused. The check runs in
// CURLOPT_OPENSOCKETFUNCTION on the address libcurl is about to connect to, after DNS, so a name
// that resolves (or re-resolves: DNS rebinding) to such an address is refused as well.
//
// Not safe for concurrent use (one thread drives it, as Fetcher says).
#ifndef SHINGLED_CRAWLER_CURL_FETCHER_H_
#define SHINGLED_CRAWLER_CURL_FETCHER_H_

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "crawler/fetcher.h"

namespace shingled::crawler {

struct CurlFetcherOptions {
  // --- behaviour ---
  // Sent on every request. Honest: names the software and says what it does, so site owners
  // can write robots.txt rules for it. The robots.txt product token is the part before '/'.
  std::string user_agent = "shingled/0.1 (near-duplicate page detection)";
  // Redirect hops followed before giving up (kTooManyRedirects). RFC 9110 sets no limit; five
  // is what browsers' older limits and RFC 9309 use for robots.txt. Range 0..50.
  int max_redirects = 5;
  // Media types accepted for a 2xx answer (parameters ignored, case-insensitive). Others abort
  // the transfer (kContentType) before the body is read. Empty accepts everything.
  std::vector<std::string> accepted_content_types = {"text/html", "application/xhtml+xml",
                                                     "text/plain"};
  // Allows connecting to private, loopback and link-local addresses. Off so that a URL handed
  // in from outside cannot make the crawler probe the operator's network; tests turn it on.
  bool allow_private_addresses = false;

  // --- limits and performance ---
  std::chrono::milliseconds connect_timeout{10000};
  // The whole transfer, redirects included. A slow page costs at most this.
  std::chrono::milliseconds total_timeout{30000};
  // Decoded body bytes kept; a larger body aborts the transfer (kTooLarge). Bounds memory per
  // transfer and defeats compression bombs. 10 MiB is far above real HTML pages.
  uint64_t max_body_bytes = 10ull << 20;
  // Connections libcurl opens to one host at once. One is polite; the crawler also never has
  // more than one fetch per host in flight by default.
  int max_connections_per_host = 1;
  // Connections in all. Most deployments should leave this alone.
  int max_total_connections = 64;
  // CA bundle; empty means the system's. For tests with their own CA.
  std::string ca_file;
  // "host:port:address" entries for CURLOPT_RESOLVE: tests pin names to 127.0.0.1 so no DNS
  // query leaves the machine. Empty in production.
  std::vector<std::string> resolve;
};

// The Accept-Encoding value a CurlFetcher sends: every content coding this libcurl decodes
// ("deflate, gzip, br, zstd" with all of them), as libcurl writes it. For the request records of
// the crawler's WARC output, which rebuild what was sent.
std::string CurlAcceptEncoding();

class CurlFetcher final : public Fetcher {
 public:
  // Internal if libcurl cannot be initialized.
  static StatusOr<std::unique_ptr<CurlFetcher>> Create(const CurlFetcherOptions& options);
  ~CurlFetcher() override;
  CurlFetcher(const CurlFetcher&) = delete;
  CurlFetcher& operator=(const CurlFetcher&) = delete;

  void Start(FetchRequest request) override;
  void Poll(std::chrono::milliseconds timeout, std::vector<FetchResult>* done) override;
  size_t active() const override { return transfers_.size() + ready_.size(); }

  struct Transfer;  // per-transfer state; public for the C callbacks in curl_fetcher.cc

 private:
  explicit CurlFetcher(const CurlFetcherOptions& options);
  void Finish(Transfer* transfer, int curl_code, std::vector<FetchResult>* done);

  const CurlFetcherOptions options_;
  void* multi_ = nullptr;                                 // CURLM*
  void* resolve_list_ = nullptr;                          // curl_slist*
  std::map<void*, std::unique_ptr<Transfer>> transfers_;  // by CURL* easy handle
  std::vector<FetchResult> ready_;                        // refused before any transfer started
};

// Translates a CURLcode into a Status, with the URL in the message, and classifies it. The one
// place where libcurl's errors become ours (docs/DEVELOPMENT.md, "Errors"). CURLE_OK gives OK and
// kNone.
Status CurlCodeToStatus(int curl_code, std::string_view url, FetchErrorKind* kind);

// Whether `address` (AF_INET or AF_INET6) is private, loopback, link-local, CGNAT, multicast,
// reserved, documentation (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32) or
// unspecified, including IPv4 addresses mapped into IPv6 (::ffff:0:0/96), translated
// (::ffff:0:0:0/96) or NAT64's (64:ff9b::/96), each judged by the IPv4 address inside, and the
// tunnel and translation ranges whose far end is not this address: 6to4 (2002::/16, and its relay
// 192.88.99/24), Teredo (2001::/32) and local-use NAT64 (64:ff9b:1::/48).
bool IsNonPublicAddress(const sockaddr* address);

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_CURL_FETCHER_H_
