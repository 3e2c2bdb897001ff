#include "daemon/crawl/crawl_sweep.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "crawler/curl_fetcher.h"
#include "crawler/url.h"
#include "crawler/warc.h"
#include "daemon/wire/http_query.h"
#include "daemon/wire/unix_time.h"

namespace shingled::daemon {
namespace {

// --- Seeds the crawler refuses ---
// Whether `host` (as a normalized Url holds it) is an address literal that the fetcher would
// refuse: IPv4 in any form inet_aton reads ("127.1", "0x7f000001", "2130706433"), or an IPv6
// literal in brackets.
bool IsNonPublicLiteral(const std::string& host) {
  sockaddr_storage storage{};
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&storage);
    a6->sin6_family = AF_INET6;
    const std::string inner = host.substr(1, host.size() - 2);
    if (inet_pton(AF_INET6, inner.c_str(), &a6->sin6_addr) != 1) return false;
  } else {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&storage);
    a4->sin_family = AF_INET;
    if (inet_aton(host.c_str(), &a4->sin_addr) == 0) return false;
  }
  return crawler::IsNonPublicAddress(reinterpret_cast<const sockaddr*>(&storage));
}

// Known URLs are listed in pages of this many: each page is one short read transaction, so a
// long listing never keeps the map from growing.
constexpr size_t kKnownUrlsPage = 10000;

// The HTTP status a failed fetch is recorded with (store::Verdict::kFailed): the answer's, when
// one came that is not content (5xx, 429, another 4xx); 0 when none came (a timeout, a refused
// or broken connection, a TLS failure). nullopt for the failures that say nothing of the page's
// state (a URL or address the crawler will not fetch, a type or size it does not keep, a
// redirect loop): those are not recorded, as before.
std::optional<int> AttemptStatus(const crawler::CrawledPage& page) {
  switch (page.error_kind) {
    case crawler::FetchErrorKind::kNone:
      return page.http_status;
    case crawler::FetchErrorKind::kConnect:
    case crawler::FetchErrorKind::kTimeout:
    case crawler::FetchErrorKind::kTls:
    case crawler::FetchErrorKind::kNetwork:
      return 0;
    default:
      return std::nullopt;
  }
}

}  // namespace

StatusOr<CrawlSetup> MakeCrawlSetup(const config::CrawlerOptions& config) {
  CrawlSetup setup;
  for (const std::string& seed : config.seeds) {
    StatusOr<crawler::Url> url = crawler::ParseUrl(seed);
    if (!url.ok()) {
      return InvalidArgumentError("crawler.seeds: \"" + seed + "\": " + url.status().message());
    }
    if (!config.allow_private_addresses && IsNonPublicLiteral(url->host)) {
      std::string message = "crawler.seeds: \"";
      message.append(seed).append(
          "\": the host is a private, loopback, link-local or reserved address, which the "
          "crawler does not fetch (crawler.allow_private_addresses = true allows it)");
      return InvalidArgumentError(message);
    }
  }
  for (const std::string& prefix : config.allowed_prefixes) {
    StatusOr<std::string> url = crawler::NormalizeUrl(prefix);
    if (!url.ok()) {
      return InvalidArgumentError("crawler.allowed_prefixes: \"" + prefix +
                                  "\": " + url.status().message());
    }
  }
  crawler::CrawlerOptions& c = setup.crawler;
  c.seeds = config.seeds;
  c.allowed_hosts = config.allowed_hosts;
  c.allowed_prefixes = config.allowed_prefixes;
  c.max_depth = static_cast<int>(config.max_depth);
  c.max_pages = static_cast<uint64_t>(config.max_pages);
  c.product_token = config.user_agent.substr(0, config.user_agent.find('/'));
  c.obey_robots = config.obey_robots;
  c.per_host_delay = std::chrono::milliseconds(config.per_host_delay_ms);
  c.max_crawl_delay = std::chrono::milliseconds(config.max_crawl_delay_ms);
  c.max_fetches_per_host = static_cast<int>(config.max_fetches_per_host);
  c.max_active_fetches = static_cast<size_t>(config.max_active_fetches);

  crawler::CurlFetcherOptions& f = setup.fetcher;
  f.user_agent = config.user_agent;
  f.max_redirects = static_cast<int>(config.max_redirects);
  f.accepted_content_types = config.content_types;
  f.allow_private_addresses = config.allow_private_addresses;
  f.connect_timeout = std::chrono::milliseconds(config.connect_timeout_ms);
  f.total_timeout = std::chrono::milliseconds(config.total_timeout_ms);
  f.max_body_bytes = static_cast<uint64_t>(config.max_body_bytes);
  // libcurl's per-host connection cap follows the crawler's per-host fetch cap, so that a second
  // fetch to a host never waits inside libcurl for the first one's connection.
  f.max_connections_per_host = static_cast<int>(config.max_fetches_per_host);
  f.max_total_connections =
      std::max(f.max_total_connections, static_cast<int>(config.max_active_fetches));

  setup.warc.dir = config.warc_dir;
  setup.warc.max_file_bytes = static_cast<uint64_t>(config.warc_max_bytes);
  setup.warc.user_agent = config.user_agent;
  setup.warc.obey_robots = config.obey_robots;
  return setup;
}

Json SweepReportJson(const SweepReport& r) {
  const crawler::CrawlProgress& p = r.progress;
  Json errors_by_kind = Json::object();
  for (const auto& [kind, n] : p.errors_by_kind) errors_by_kind[kind] = n;
  Json verdicts = Json::object();
  for (const auto& [name, n] : r.verdicts) verdicts[name] = n;
  Json out{{"sweep", r.name},
           {"running", r.running},
           {"started", r.started != 0 ? Json(FormatIsoTime(r.started)) : Json()},
           {"finished", r.finished != 0 ? Json(FormatIsoTime(r.finished)) : Json()},
           {"closed", r.closed}};
  if (!r.left_open_because.empty()) out["left_open_because"] = r.left_open_because;
  if (!r.status.ok()) out["error"] = r.status.message();
  out.update(Json{{"known_urls", r.known_urls},
                  {"queued", p.queued},
                  {"in_flight", p.in_flight},
                  {"fetched", p.fetched},
                  {"pages", p.pages},
                  {"dead", p.dead},
                  {"redirected", p.redirected},
                  {"errors", p.errors},
                  {"errors_by_kind", errors_by_kind},
                  {"robots_fetches", p.robots_fetches},
                  {"robots_disallowed", p.robots_disallowed},
                  {"out_of_scope", p.out_of_scope},
                  {"over_budget", p.over_budget},
                  {"seconds", r.seconds},
                  {"pages_per_second", r.seconds > 0 ? p.fetched / r.seconds : 0.0},
                  {"stored", r.stored},
                  {"verdicts", verdicts},
                  {"store_errors", r.store_error_count},
                  {"store_retries", r.store_retries}});
  if (!r.waiting_for_room.empty()) out["waiting_for_room"] = r.waiting_for_room;
  if (r.warc.enabled) {
    Json warc{{"files", r.warc.files},
              {"responses", r.warc.responses},
              {"revisits", r.warc.revisits},
              {"bytes", r.warc.bytes}};
    if (!r.warc.error.empty()) warc["error"] = r.warc.error;
    out["warc"] = std::move(warc);
  }
  return out;
}

// The crawler's Clock: real time, but a sleep ends at once when the runner stops, so that a long
// Crawl-delay cannot hold up a shutdown or a stop request. Interrupt() holds for good (shutdown);
// InterruptSweep() until ClearSweep(). `tick` runs on the crawler's thread before each sleep.
class SweepRunner::InterruptibleClock final : public crawler::Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point WallNow() override {
    return std::chrono::system_clock::now();
  }
  void SleepUntil(std::chrono::steady_clock::time_point t) override {
    if (tick_) tick_();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, t, [&] { return interrupted_ || sweep_interrupted_; });
  }
  void Interrupt() {
    std::lock_guard<std::mutex> lock(mu_);
    interrupted_ = true;
    cv_.notify_all();
  }
  void InterruptSweep() {
    std::lock_guard<std::mutex> lock(mu_);
    sweep_interrupted_ = true;
    cv_.notify_all();
  }
  void ClearSweep() {
    std::lock_guard<std::mutex> lock(mu_);
    sweep_interrupted_ = false;
  }
  // Set while no sweep runs.
  void set_tick(std::function<void()> tick) { tick_ = std::move(tick); }

 private:
  std::function<void()> tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool interrupted_ = false;        // guarded by mu_
  bool sweep_interrupted_ = false;  // guarded by mu_
};

// The CurlFetcher, with a way to end every transfer at once from another thread: Cancel() makes
// the next Poll() drop the libcurl handles and hand back each outstanding fetch as failed.
// `tick` runs on the crawler's thread before each poll.
class SweepRunner::CancellableFetcher final : public crawler::Fetcher {
 public:
  CancellableFetcher(std::unique_ptr<crawler::CurlFetcher> inner, std::function<void()> tick)
      : inner_(std::move(inner)), tick_(std::move(tick)) {}

  void Start(crawler::FetchRequest request) override {
    if (cancelled_ || inner_ == nullptr) {
      ready_.push_back(Cancelled(request.id, request.url));
      return;
    }
    urls_[request.id] = request.url;
    inner_->Start(std::move(request));
  }
  void Poll(std::chrono::milliseconds timeout, std::vector<crawler::FetchResult>* done) override {
    tick_();
    if (cancelled_ && inner_ != nullptr) {
      inner_.reset();  // aborts every transfer
      for (const auto& [id, url] : urls_) ready_.push_back(Cancelled(id, url));
      urls_.clear();
    }
    if (!ready_.empty() || inner_ == nullptr) {
      for (crawler::FetchResult& r : ready_) done->push_back(std::move(r));
      ready_.clear();
      return;
    }
    const size_t before = done->size();
    inner_->Poll(timeout, done);
    for (size_t i = before; i < done->size(); ++i) urls_.erase((*done)[i].id);
  }
  size_t active() const override {
    return (inner_ != nullptr ? inner_->active() : 0) + ready_.size();
  }
  void Cancel() { cancelled_ = true; }

 private:
  static crawler::FetchResult Cancelled(uint64_t id, const std::string& url) {
    crawler::FetchResult r;
    r.id = id;
    r.url = r.final_url = url;
    r.status = UnavailableError("fetch cancelled: shutting down (" + url + ")");
    r.error_kind = crawler::FetchErrorKind::kNetwork;
    return r;
  }

  std::unique_ptr<crawler::CurlFetcher> inner_;
  const std::function<void()> tick_;
  std::atomic<bool> cancelled_{false};
  std::unordered_map<uint64_t, std::string> urls_;  // outstanding fetches
  std::vector<crawler::FetchResult> ready_;
};

// Hands pages to the pipeline and counts what the store answered. Offer() and Flush() run on the
// crawler's thread; the pipeline's callbacks on its writer. Shared with those callbacks, so that
// pages still queued when the runner gives up (Cancel) settle into a live object.
//
// Out of space (a full disk or map, store::IsOutOfSpace): a page the pipeline refuses for it is
// held like one refused by a full queue, and a page it had admitted but could not commit for it
// comes back to be handed over again: both are retried until the store has room (the crawler
// pauses meanwhile, and the sweep waits for them before it closes), so a page fetched while the
// disk is full is stored when space returns, never counted stored before, and never lost to the
// sweep (closing it would record a known URL gone). waiting_for_room says why, for GET /v1/crawl.
// Any other refusal is a store error: reported (store_errors), and its URL kept from being
// recorded gone.
struct SweepRunner::Sink : std::enable_shared_from_this<Sink> {
  Sink(IngestPipeline* p, size_t q) : pipeline(p), queue_pages(q) {}

  // False when the pipeline is full: the job is held and retried by the next Flush().
  bool Offer(PageJob job) {
    held.push_back(std::move(job));
    return Flush();
  }
  bool Flush() {
    {
      std::lock_guard<std::mutex> lock(mu);
      for (PageJob& job : retry) held.push_back(std::move(job));
      retry.clear();
    }
    while (!held.empty()) {
      // Kept until the store has answered, to be handed over again if it had no room; the
      // pipeline gets a copy (a refused submission consumes its vector).
      auto job = std::make_shared<const PageJob>(std::move(held.front()));
      held.pop_front();
      std::vector<PageJob> jobs{*job};
      Status s = pipeline->Submit(
          std::move(jobs), [self = shared_from_this(), job](std::vector<PageOutcome> out) {
            std::lock_guard<std::mutex> lock(self->mu);
            if (out[0].status.ok()) {
              ++self->stored;
              ++self->verdicts[std::string(store::VerdictName(out[0].result.verdict))];
              self->waiting_for_room.clear();
            } else if (store::IsOutOfSpace(out[0].status) && !self->abandoned) {
              ++self->store_retries;
              self->waiting_for_room = out[0].status.message();
              self->retry.push_back(*job);
            } else {
              self->AddErrorLocked(*job, out[0].status.message());
            }
            --self->outstanding;
            self->cv.notify_all();
          });
      if (s.code() == StatusCode::kResourceExhausted) {
        if (store::IsOutOfSpace(s)) {
          std::lock_guard<std::mutex> lock(mu);
          waiting_for_room = s.message();
        }
        held.push_front(*job);
        return false;
      }
      std::lock_guard<std::mutex> lock(mu);
      if (s.ok()) {
        ++outstanding;
      } else {
        AddErrorLocked(*job, s.message());
      }
    }
    return true;
  }
  // The soft limit: more than half the queue waiting.
  bool Busy() const { return pipeline->queued_pages() > queue_pages / 2; }
  // Until every page is in and committed (pages refused for lack of space handed over again
  // until there is room), or Abandon().
  void WaitUntilFlushed() {
    for (;;) {
      while (!Flush()) {
        std::unique_lock<std::mutex> lock(mu);
        if (abandoned) return;
        cv.wait_for(lock, std::chrono::milliseconds(50));  // the pipeline has no "room" signal
      }
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return outstanding == 0 || abandoned || !retry.empty(); });
      if (abandoned || (outstanding == 0 && retry.empty())) return;
      if (outstanding > 0) continue;  // retries go back in now; the rest still commit
      // Only pages to retry: the writer is out of space; give it a moment before the next try.
      cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return abandoned; });
    }
  }
  void Abandon() {
    std::lock_guard<std::mutex> lock(mu);
    abandoned = true;
    cv.notify_all();
  }
  void AddErrorLocked(const PageJob& job, const std::string& why) {
    ++error_count;
    not_stored.insert(job.url);
    if (errors.size() < kMaxStoreErrors) errors.push_back(job.url + ": " + why);
  }
  void CopyTo(SweepReport* report) {
    std::lock_guard<std::mutex> lock(mu);
    report->stored = stored;
    report->verdicts = verdicts;
    report->store_errors = errors;
    report->store_error_count = error_count;
    report->store_retries = store_retries;
    report->waiting_for_room = waiting_for_room;
  }
  // Whether a page of `url` was refused by the store (not for lack of space): closing the sweep
  // must not record it gone. After WaitUntilFlushed().
  bool NotStored(std::string_view url) {
    std::lock_guard<std::mutex> lock(mu);
    return not_stored.contains(std::string(url));
  }

  IngestPipeline* const pipeline;
  const size_t queue_pages;
  std::deque<PageJob> held;  // the crawler's thread only

  // State below is protected by mu.
  std::mutex mu;
  std::condition_variable cv;
  size_t outstanding = 0;
  bool abandoned = false;
  uint64_t stored = 0;
  std::map<std::string, uint64_t> verdicts;
  std::vector<std::string> errors;
  uint64_t error_count = 0;
  std::unordered_set<std::string> not_stored;  // URLs of store errors
  std::vector<PageJob> retry;                  // refused for lack of space, to hand over again
  uint64_t store_retries = 0;
  std::string waiting_for_room;  // the out-of-space error, until a page is stored again
};

SweepRunner::SweepRunner(store::Store* store, IngestPipeline* pipeline, size_t queue_pages,
                         CrawlSetup setup, Metrics* metrics)
    : store_(store),
      pipeline_(pipeline),
      queue_pages_(queue_pages),
      metrics_(metrics),
      clock_(std::make_unique<InterruptibleClock>()),
      setup_(std::move(setup)) {}

void SweepRunner::SetSetup(CrawlSetup setup) {
  std::lock_guard<std::mutex> lock(mu_);
  setup_ = std::move(setup);
}

SweepRunner::~SweepRunner() = default;

void SweepRunner::Stop() {
  stopped_ = true;
  clock_->Interrupt();
  std::lock_guard<std::mutex> lock(mu_);
  if (crawler_ != nullptr) crawler_->Stop();
}

void SweepRunner::StopSweep() {
  sweep_stopped_ = true;
  clock_->InterruptSweep();
  std::lock_guard<std::mutex> lock(mu_);
  if (crawler_ != nullptr) crawler_->Stop();
}

void SweepRunner::ClearSweepStop() {
  sweep_stopped_ = false;
  clock_->ClearSweep();
}

void SweepRunner::Cancel() {
  cancelled_ = true;
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  if (fetcher_ != nullptr) fetcher_->Cancel();
  if (sink_ != nullptr) sink_->Abandon();
}

SweepReport SweepRunner::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  SweepReport report = report_;
  if (report.running) {
    if (crawler_ != nullptr) report.progress = crawler_->Progress();
    if (sink_ != nullptr) sink_->CopyTo(&report);
    report.seconds = static_cast<double>(UnixNow() - report.started);
  }
  return report;
}

void SweepRunner::Finish(SweepReport* report, const crawler::CrawlProgress& progress) {
  report->running = false;
  report->finished = UnixNow();
  report->progress = progress;
  report->progress.running = false;
  if (!report->status.ok()) {
    spdlog::warn("crawler sweep {}: {}", report->name, report->status.message());
  }
  std::lock_guard<std::mutex> lock(mu_);
  report_ = *report;
}

SweepReport SweepRunner::Run(const std::string& name, bool close) {
  const CrawlSetup setup = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return setup_;
  }();
  SweepReport report;
  report.name = name;
  report.started = UnixNow();
  const auto started = std::chrono::steady_clock::now();
  auto fail = [&](Status status) {
    report.status = std::move(status);
    report.left_open_because = report.id != 0 ? "the sweep failed" : "";
    Finish(&report, {});
    return report;
  };
  if (stopped_) return fail(UnavailableError("the crawler is stopping"));
  const crawler::CrawlScope scope(setup.crawler);
  StatusOr<store::SweepInfo> sweep = store_->OpenSweep(name, report.started, scope.Prefixes());
  if (!sweep.ok()) return fail(sweep.status());
  report.id = sweep->id;
  report.running = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    report_ = report;
  }

  std::vector<std::string> known;
  store::UrlId after = 0;
  do {
    StatusOr<store::UrlId> next = store_->KnownUrls(after, kKnownUrlsPage, [&](std::string_view url) {
      if (scope.Contains(url)) known.emplace_back(url);
    });
    if (!next.ok()) return fail(next.status());
    after = *next;
  } while (after != 0 && !StopRequested());
  report.known_urls = known.size();

  StatusOr<std::unique_ptr<crawler::CurlFetcher>> curl =
      crawler::CurlFetcher::Create(setup.fetcher);
  if (!curl.ok()) return fail(curl.status());
  std::unique_ptr<CrawlWarc> warc;
  if (!setup_.warc.dir.empty()) {
    StatusOr<std::unique_ptr<CrawlWarc>> opened =
        CrawlWarc::Open(setup_.warc, name, store_, &pipeline_->context());
    if (!opened.ok()) return fail(opened.status());
    warc = std::move(*opened);
  }
  Status warc_status;  // the WARC output's first error
  crawler::Crawler* crawler_ptr = nullptr;
  // Runs on the crawler's thread inside Run(): applies a Stop() or StopSweep() that came before
  // Run() began (Run() clears the crawler's stop flag) and refreshes the metrics.
  auto tick = [this, &crawler_ptr] {
    if (crawler_ptr == nullptr) return;
    if (StopRequested()) crawler_ptr->Stop();
    if (metrics_ != nullptr) metrics_->CrawlProgressed(crawler_ptr->Progress());
  };
  CancellableFetcher fetcher(std::move(curl).value(), tick);
  crawler::Crawler crawler(setup.crawler, &fetcher, clock_.get());
  crawler_ptr = &crawler;
  clock_->set_tick(tick);
  auto sink = std::make_shared<Sink>(pipeline_, queue_pages_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    crawler_ = &crawler;
    fetcher_ = &fetcher;
    sink_ = sink;
    report_.known_urls = report.known_urls;
  }
  if (cancelled_) fetcher.Cancel();
  if (metrics_ != nullptr) metrics_->CrawlSweepStarted();
  spdlog::info("crawler sweep {} started: {} seeds, {} known URLs", name,
               setup.crawler.seeds.size(), known.size());

  // Writes the page's exchanges to the WARC files before the page goes to the pipeline; the first
  // write error stops the crawl (see the file comment).
  auto archive = [&](const crawler::CrawledPage& page) {
    if (warc == nullptr || !warc_status.ok()) return;
    warc_status = warc->Record(page);
    if (!warc_status.ok()) {
      spdlog::error("crawler sweep {}: {}; stopping the sweep", name, warc_status.message());
      crawler_ptr->Stop();
    }
  };
  const store::SweepId sweep_id = sweep->id;
  // URLs this sweep cannot call gone though it did not store them (normalized): fetches that
  // failed, and URLs robots.txt refused.
  std::unordered_set<std::string> not_gone;
  auto on_page = [&](crawler::CrawledPage page) {
    archive(page);
    const int64_t date = UnixSeconds(page.fetched_at);
    bool room = true;
    // Every hop of the fetch is a redirect of the URL that answered it, to where it pointed
    // (the hops followed within the origin, and the one refused: another origin, or a path
    // robots.txt disallows), as a WARC or the API would record it.
    for (const crawler::RedirectHop& hop : page.redirects) {
      StatusOr<std::string> from = crawler::NormalizeUrl(hop.url);
      if (!from.ok() ||
          store::ClassifyHttpStatus(hop.http_status) != store::StatusClass::kRedirect) {
        continue;
      }
      PageJob redirect;
      redirect.sweep = sweep_id;
      redirect.date = date;
      redirect.url = std::move(from).value();
      redirect.http_status = hop.http_status;
      StatusOr<std::string> target =
          RedirectTarget(redirect.url, hop.location, kMaxRedirectTargetBytes);
      if (target.ok()) redirect.redirect_target = std::move(target).value();
      room = sink->Offer(std::move(redirect)) && room;
    }
    PageJob job;
    job.sweep = sweep_id;
    job.date = date;
    // The outcome belongs to the URL that answered last (after the redirects).
    job.url = page.final_url;
    switch (page.outcome) {
      case crawler::PageOutcome::kPage:
        job.http_status = page.http_status;
        if (const std::string* type = crawler::FindHeader(page.headers, "Content-Type")) {
          job.content_type = *type;
        }
        job.body = std::move(page.body);
        job.canonical_link = page.canonical.value_or("");
        break;
      case crawler::PageOutcome::kDead:
        // A host that no longer resolves is as dead as a 404.
        job.http_status = page.http_status == 410 ? 410 : 404;
        break;
      case crawler::PageOutcome::kError:
        not_gone.insert(page.url);  // not known to be gone: see the file comment
        if (std::optional<int> status = AttemptStatus(page); status && !cancelled_) {
          // A fetch that got no content: recorded as an attempt, which keeps the URL's
          // last good version live (store::Verdict::kFailed).
          job.http_status = *status;
          break;
        }
        return room ? crawler::Backpressure::kContinue : crawler::Backpressure::kStop;
      case crawler::PageOutcome::kRobotsDisallowed:
        not_gone.insert(page.url);                // not known to be gone: see the file comment
        return crawler::Backpressure::kContinue;  // counted by the crawler
      case crawler::PageOutcome::kRedirected:
        // The redirect is among the hops above; its target joined the frontier.
        return room ? crawler::Backpressure::kContinue : crawler::Backpressure::kStop;
    }
    if (!sink->Offer(std::move(job)) || !room) return crawler::Backpressure::kStop;
    return sink->Busy() ? crawler::Backpressure::kSlowDown : crawler::Backpressure::kContinue;
  };
  // Stopped while the URLs were listed: no fetch at all.
  Status run = StopRequested() ? OkStatus() : crawler.Run(known, on_page, [&] {
    if (!sink->Flush()) return crawler::Backpressure::kStop;
    return sink->Busy() ? crawler::Backpressure::kSlowDown : crawler::Backpressure::kContinue;
  });
  sink->WaitUntilFlushed();
  if (warc != nullptr) {
    Status closed = warc->Close();
    if (warc_status.ok()) warc_status = closed;
    report.warc = warc->Report();
    if (!warc_status.ok()) report.warc.error = warc_status.message();
    warc.reset();
  }
  clock_->set_tick(nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    crawler_ = nullptr;
    fetcher_ = nullptr;
    sink_ = nullptr;
  }
  const crawler::CrawlProgress progress = crawler.Progress();
  sink->CopyTo(&report);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (metrics_ != nullptr) metrics_->CrawlSweepFinished(progress);
  for (const std::string& e : report.store_errors) {
    spdlog::warn("crawler sweep {}: not stored: {}", name, e);
  }
  if (report.store_retries > 0) {
    spdlog::info("crawler sweep {}: {} pages handed to the store again after it ran out of space",
                 name, report.store_retries);
  }

  if (!run.ok()) {
    report.status = run;
    report.left_open_because = "the crawl did not run: " + run.message();
  } else if (!warc_status.ok()) {
    report.status = warc_status;
    report.left_open_because = "WARC output failed: " + warc_status.message();
  } else if (sweep_stopped_) {
    report.left_open_because = "stopped on request";
  } else if (stopped_) {
    report.left_open_because = "stopped before its frontier was empty";
  } else if (progress.over_budget > 0) {
    report.left_open_because = "max_pages reached with " + std::to_string(progress.over_budget) +
                               " URLs not fetched";
  } else if (!close) {
    report.left_open_because = "asked to leave it open";
  } else if (!pipeline_->healthy()) {
    report.left_open_because = "the store refuses writes after a failed commit";
  } else {
    // The sweep's scope (its prefixes) bounds what may become gone; URLs whose fetch failed or
    // robots.txt refused keep their last version.
    store::Store::CloseSweepOptions close_options;
    close_options.may_be_gone = [&](std::string_view url) {
      return !not_gone.contains(std::string(url)) && !sink->NotStored(url);
    };
    StatusOr<store::SweepClosing> closed = store_->CloseSweep(sweep_id, UnixNow(), close_options);
    if (closed.ok()) {
      report.closed = true;
    } else {
      report.status = closed.status();
      report.left_open_because = "closing failed: " + closed.status().message();
    }
  }
  spdlog::info("crawler sweep {} {}: {} fetched, {} pages, {} dead, {} errors{}", name,
               report.closed ? "closed" : "ended", progress.fetched, progress.pages, progress.dead,
               progress.errors,
               report.left_open_because.empty() ? "" : "; left open: " + report.left_open_because);
  Finish(&report, progress);
  return report;
}

}  // namespace shingled::daemon
