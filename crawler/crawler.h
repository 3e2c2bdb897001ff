// Crawler: one sweep over a site or a set of sites, fetching through a Fetcher and handing each
// outcome to a callback. It knows nothing of the store.
//
// A sweep starts from the seeds and the known URLs the caller passes (the revisits), fetches
// every in-scope URL once (URLs are normalized, crawler/url.h, so two spellings are one URL),
// follows links from HTML pages (crawler/links.h) up to max_depth, and ends when the frontier is
// empty, max_pages fetches were started, or Stop() is called.
//
// Politeness: the frontier is a queue per host (scheme://host:port). Before the first page of
// a host, its robots.txt is fetched and cached for the sweep (crawler/robots.h: 4xx allows all,
// 5xx or unreachable disallows the host for the sweep). At most max_fetches_per_host fetches
// run per host, and after each fetch of a host the next waits max(per_host_delay, Crawl-delay)
// on the Clock. Many hosts are fetched at once on the calling thread.
//
// Outcomes handed to the callback: kPage for a 2xx answer; kDead for 404, 410 and a host that
// no longer resolves; kRedirected for a redirect off the origin or to a disallowed path (see
// below); kError for the rest (5xx, other 4xx, timeouts, limits, refused addresses),
// with the Status and its kind; kRobotsDisallowed, without a fetch, for each in-scope URL that
// robots.txt refuses (a disallowed path, or a host whose robots.txt answered 5xx or could not be
// fetched), so that a caller keeping pages across sweeps can tell "not looked at" from "gone".
// URLs outside the scope are only counted.
//
// Backpressure (soft, then hard limit): the callback answers kSlowDown to delay every later
// fetch by slow_down_delay, kStop to stop starting fetches (fetches in flight still complete and
// are delivered). While stopped, the crawler asks `pressure` every stop_recheck (or, without a
// probe, resumes after one stop_recheck) and carries on when it answers kContinue or kSlowDown.
//
// Redirects: the Fetcher follows hops within the same origin whose path robots.txt allows, and
// records them. A hop to another origin, or to a disallowed path, is not requested: the fetch
// ends as kRedirected with final_url = the hop's target, and the target joins the frontier (if
// in scope), where it gets its own robots.txt, politeness and budget.
//
// Known limit (TODO(crawler)): each loop turn looks at every host with queued URLs, which is
// fine for thousands of hosts, not millions (a ready-time heap would be the next step).
//
// Run() is called from one thread at a time; Stop() and Progress() may be called from any
// thread while Run() is going.
#ifndef SHINGLED_CRAWLER_CRAWLER_H_
#define SHINGLED_CRAWLER_CRAWLER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "crawler/clock.h"
#include "crawler/fetcher.h"
#include "crawler/url.h"

namespace shingled::crawler {

struct CrawlerOptions {
  // --- behaviour ---
  std::vector<std::string> seeds;  // absolute http(s) URLs
  // Scope: a URL is in scope when its host[:port] is in allowed_hosts or it starts with one of
  // allowed_prefixes (normalized). When both are empty, the seeds' hosts are the scope.
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> allowed_prefixes;
  // Links are followed from pages at depth < max_depth; seeds and known URLs are depth 0.
  int max_depth = 5;
  // Page fetches started per sweep (robots.txt fetches not counted). Range >= 0.
  uint64_t max_pages = 100000;
  // robots.txt product token: the User-Agent's name.
  std::string product_token = "shingled";
  // Obeying robots.txt is the default; turning it off is for one's own sites.
  bool obey_robots = true;

  // --- politeness ---
  // Wait between fetches of one host; Crawl-delay raises it. 1 s keeps a crawler invisible in
  // most servers' load; lower only for one's own hosts. Range >= 0.
  std::chrono::milliseconds per_host_delay{1000};
  // A Crawl-delay above this is capped to it, so one robots.txt cannot stall a sweep for days.
  std::chrono::milliseconds max_crawl_delay{std::chrono::seconds(60)};
  // Fetches in flight per host. One is the polite default. Range >= 1.
  int max_fetches_per_host = 1;

  // --- performance ---
  // Fetches in flight in all. Range >= 1.
  size_t max_active_fetches = 32;
  // How long the loop waits for network activity before looking at the clock again.
  std::chrono::milliseconds poll_interval{100};

  // --- backpressure ---
  std::chrono::milliseconds slow_down_delay{100};  // extra wait per fetch at the soft limit
  std::chrono::milliseconds stop_recheck{200};     // how often to ask again at the hard limit
};

// The URLs a sweep may fetch, from CrawlerOptions: a URL whose host[:port] is in
// allowed_hosts or that starts with one of allowed_prefixes (normalized); when both are empty,
// the seeds' hosts. Immutable after construction; thread-safe.
class CrawlScope {
 public:
  explicit CrawlScope(const CrawlerOptions& options);
  // `spec` is url.Spec().
  bool Contains(const Url& url, std::string_view spec) const;
  // False for text that is not an absolute http(s) URL.
  bool Contains(std::string_view url) const;
  // The same scope as URL prefixes, sorted: "http://HOST/" and "https://HOST/" per host, and the
  // prefixes (a sweep's scope in the store).
  std::vector<std::string> Prefixes() const;

 private:
  std::unordered_set<std::string> hosts_;
  std::vector<std::string> prefixes_;
};

// kRobotsDisallowed is the one outcome without a fetch (besides kDead for a host known not to
// resolve): the URL was not requested because robots.txt refuses it. It says nothing about
// whether the page exists; its CrawledPage has only url, final_url (== url), depth and
// fetched_at (when the crawler decided) set. Counted in robots_disallowed, not in fetched.
enum class PageOutcome { kPage, kDead, kRedirected, kError, kRobotsDisallowed };
// "page", "dead", "redirected", "error", "robots_disallowed".
std::string_view PageOutcomeName(PageOutcome outcome);

struct CrawledPage {
  PageOutcome outcome = PageOutcome::kPage;
  std::string url;        // normalized, as queued
  std::string final_url;  // after redirects
  std::vector<RedirectHop> redirects;
  int http_status = 0;  // 0 when no HTTP answer arrived
  HeaderList headers;
  std::string body;  // decoded bytes as served (charset untouched); 2xx only
  std::chrono::system_clock::time_point fetched_at;  // Clock::WallNow() when the fetch started
  std::optional<std::string> canonical;              // <link rel=canonical>, normalized
  bool noindex = false;                              // <meta name=robots content=noindex>
  int depth = 0;
  Status error;  // kError, and kDead for DNS failures: why
  FetchErrorKind error_kind = FetchErrorKind::kNone;
};

enum class Backpressure { kContinue, kSlowDown, kStop };
using PageCallback = std::function<Backpressure(CrawledPage page)>;
using PressureProbe = std::function<Backpressure()>;

struct CrawlProgress {
  bool running = false;
  uint64_t queued = 0;      // in the frontier now
  uint64_t in_flight = 0;   // page and robots.txt fetches
  uint64_t fetched = 0;     // page fetches finished (any outcome but kRobotsDisallowed)
  uint64_t pages = 0;       // kPage outcomes
  uint64_t dead = 0;        // kDead outcomes
  uint64_t redirected = 0;  // kRedirected outcomes
  uint64_t errors = 0;      // kError outcomes
  uint64_t robots_fetches = 0;
  uint64_t robots_disallowed = 0;                  // kRobotsDisallowed outcomes
  uint64_t out_of_scope = 0;                       // links not followed: outside the scope
  uint64_t over_budget = 0;                        // URLs left when max_pages was reached
  std::map<std::string, uint64_t> errors_by_kind;  // "timeout", "http_5xx", ...
  double pages_per_second = 0;                     // fetched / elapsed, on the Clock
};

class Crawler {
 public:
  // `fetcher` and `clock` must outlive the Crawler.
  Crawler(CrawlerOptions options, Fetcher* fetcher, Clock* clock);
  Crawler(const Crawler&) = delete;
  Crawler& operator=(const Crawler&) = delete;

  // Runs one sweep. `known_urls` are revisited (those in scope), besides the seeds. Returns OK
  // when the sweep ended (frontier empty, budget reached or stopped); InvalidArgument when no
  // seed or known URL is a valid http(s) URL; FailedPrecondition when called while running.
  Status Run(const std::vector<std::string>& known_urls, const PageCallback& on_page,
             const PressureProbe& pressure = nullptr);

  // Ends the running sweep: nothing new starts; fetches in flight complete and are delivered.
  void Stop() { stop_requested_ = true; }
  CrawlProgress Progress() const;

 private:
  struct HostState;
  struct Sweep;

  const CrawlerOptions options_;
  Fetcher* const fetcher_;
  Clock* const clock_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> running_{false};

  // State below is protected by mu_.
  mutable std::mutex mu_;
  CrawlProgress progress_;
};

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_CRAWLER_H_
