#include "crawler/crawler.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "crawler/links.h"
#include "crawler/robots.h"
#include "crawler/url.h"

namespace shingled::crawler {

using Steady = std::chrono::steady_clock;

std::string_view PageOutcomeName(PageOutcome outcome) {
  switch (outcome) {
    case PageOutcome::kPage:
      return "page";
    case PageOutcome::kDead:
      return "dead";
    case PageOutcome::kRedirected:
      return "redirected";
    case PageOutcome::kError:
      return "error";
    case PageOutcome::kRobotsDisallowed:
      return "robots_disallowed";
  }
  return "unknown";
}

struct Crawler::HostState {
  struct Entry {
    std::string url;
    int depth = 0;
  };
  enum class Robots { kUnknown, kFetching, kReady };

  std::string origin;  // scheme://host[:port]
  std::deque<Entry> queue;
  Robots robots_state = Robots::kUnknown;
  RobotsRules robots;
  bool unresolvable = false;  // robots.txt fetch found no such host: every URL here is dead
  int in_flight = 0;
  Steady::time_point next_allowed{};
  Steady::duration delay{};
};

// Everything one Run() owns; lives on Run()'s stack.
struct Crawler::Sweep {
  struct InFlight {
    HostState* host = nullptr;
    HostState::Entry entry;
    bool robots = false;
    std::chrono::system_clock::time_point started;
  };

  std::unordered_set<std::string> seen;
  std::unordered_map<std::string, HostState> hosts;
  std::unordered_map<uint64_t, InFlight> in_flight;
  uint64_t next_id = 1;
  uint64_t pages_started = 0;
  uint64_t queued = 0;
  bool slow = false;
  bool paused = false;
  Steady::time_point recheck_at{};
  Steady::time_point started_at{};
};

CrawlScope::CrawlScope(const CrawlerOptions& options) {
  for (const std::string& host : options.allowed_hosts) {
    std::string lower = host;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    hosts_.insert(std::move(lower));
  }
  for (const std::string& prefix : options.allowed_prefixes) {
    StatusOr<std::string> normalized = NormalizeUrl(prefix);
    prefixes_.push_back(normalized.ok() ? *normalized : prefix);
  }
  if (hosts_.empty() && prefixes_.empty()) {
    for (const std::string& seed : options.seeds) {
      if (StatusOr<Url> url = ParseUrl(seed); url.ok()) hosts_.insert(url->HostPort());
    }
  }
}

bool CrawlScope::Contains(const Url& url, std::string_view spec) const {
  if (hosts_.contains(url.HostPort())) return true;
  return std::any_of(prefixes_.begin(), prefixes_.end(),
                     [&](const std::string& p) { return spec.starts_with(p); });
}

std::vector<std::string> CrawlScope::Prefixes() const {
  std::vector<std::string> out = prefixes_;
  for (const std::string& host : hosts_) {
    out.push_back("http://" + host + "/");
    out.push_back("https://" + host + "/");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool CrawlScope::Contains(std::string_view url) const {
  StatusOr<Url> parsed = ParseUrl(url);
  return parsed.ok() && Contains(*parsed, parsed->Spec());
}

Crawler::Crawler(CrawlerOptions options, Fetcher* fetcher, Clock* clock)
    : options_(std::move(options)), fetcher_(fetcher), clock_(clock) {}

CrawlProgress Crawler::Progress() const {
  std::lock_guard<std::mutex> lock(mu_);
  return progress_;
}

Status Crawler::Run(const std::vector<std::string>& known_urls, const PageCallback& on_page,
                    const PressureProbe& pressure) {
  if (running_.exchange(true)) return FailedPreconditionError("a sweep is already running");
  stop_requested_ = false;
  Sweep sweep;
  sweep.started_at = clock_->Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    progress_ = CrawlProgress();
    progress_.running = true;
  }
  auto update = [&](const std::function<void(CrawlProgress&)>& change) {
    std::lock_guard<std::mutex> lock(mu_);
    change(progress_);
    progress_.queued = sweep.queued;
    progress_.in_flight = sweep.in_flight.size();
    const double seconds = std::chrono::duration<double>(clock_->Now() - sweep.started_at).count();
    progress_.pages_per_second = seconds > 0 ? static_cast<double>(progress_.fetched) / seconds : 0;
  };

  const CrawlScope scope(options_);
  auto enqueue = [&](const std::string& text, int depth) -> bool {
    StatusOr<Url> url = ParseUrl(text);
    if (!url.ok()) return false;
    const std::string spec = url->Spec();
    if (sweep.seen.contains(spec)) return true;
    if (!scope.Contains(*url, spec)) {
      update([](CrawlProgress& p) { ++p.out_of_scope; });
      return true;
    }
    sweep.seen.insert(spec);
    const std::string origin = url->scheme + "://" + url->HostPort();
    HostState& host = sweep.hosts[origin];
    if (host.origin.empty()) {
      host.origin = origin;
      host.delay = options_.per_host_delay;
      if (!options_.obey_robots) host.robots_state = HostState::Robots::kReady;
    }
    host.queue.push_back({spec, depth});
    ++sweep.queued;
    return true;
  };

  bool any_valid = false;
  for (const std::string& seed : options_.seeds) any_valid = enqueue(seed, 0) || any_valid;
  for (const std::string& known : known_urls) any_valid = enqueue(known, 0) || any_valid;
  update([](CrawlProgress&) {});
  if (!any_valid) {
    running_ = false;
    update([](CrawlProgress& p) { p.running = false; });
    return InvalidArgumentError("no valid http(s) seed or known URL");
  }

  auto deliver = [&](CrawledPage page) {
    update([&](CrawlProgress& p) {
      if (page.outcome != PageOutcome::kRobotsDisallowed) ++p.fetched;
      switch (page.outcome) {
        case PageOutcome::kPage:
          ++p.pages;
          break;
        case PageOutcome::kDead:
          ++p.dead;
          break;
        case PageOutcome::kRedirected:
          ++p.redirected;
          break;
        case PageOutcome::kError: {
          ++p.errors;
          std::string kind(FetchErrorKindName(page.error_kind));
          if (page.error_kind == FetchErrorKind::kNone) {
            kind = page.http_status >= 500 ? "http_5xx" : "http_4xx";
          }
          ++p.errors_by_kind[kind];
          break;
        }
        case PageOutcome::kRobotsDisallowed:
          ++p.robots_disallowed;
          break;
      }
    });
    const Backpressure answer = on_page(std::move(page));
    if (answer == Backpressure::kStop) {
      sweep.paused = true;
      sweep.recheck_at = clock_->Now() + options_.stop_recheck;
    } else {
      sweep.slow = answer == Backpressure::kSlowDown;
    }
  };

  auto start_fetch = [&](HostState& host, HostState::Entry entry, bool robots) {
    const uint64_t id = sweep.next_id++;
    const Steady::time_point now = clock_->Now();
    FetchRequest request;
    request.id = id;
    request.url = robots ? host.origin + "/robots.txt" : entry.url;
    // robots.txt is read whatever its type, and its redirects are followed anywhere (RFC 9309
    // section 2.3.1.2); a page's hops stay on its origin and within robots.txt.
    request.any_content_type = robots;
    if (!robots) {
      HostState* const h = &host;
      request.allow_redirect = [this, h](std::string_view hop) {
        StatusOr<Url> url = ParseUrl(hop);
        if (!url.ok() || url->scheme + "://" + url->HostPort() != h->origin) return false;
        return !options_.obey_robots || h->robots.IsAllowed(url->PathAndQuery());
      };
    }
    sweep.in_flight.emplace(id,
                            Sweep::InFlight{&host, std::move(entry), robots, clock_->WallNow()});
    ++host.in_flight;
    // Reserve the host's delay from the start too, for hosts with several fetches in flight;
    // the slow-down extra is added when the fetch ends, after the callback has answered.
    host.next_allowed = std::max(host.next_allowed, now + host.delay);
    fetcher_->Start(std::move(request));
  };

  // Starts what may start now; returns when the next host becomes ready.
  auto start_ready = [&]() -> Steady::time_point {
    Steady::time_point next = Steady::time_point::max();
    const Steady::time_point now = clock_->Now();
    for (auto& [origin, host] : sweep.hosts) {
      if (stop_requested_ || sweep.paused) break;
      if (sweep.in_flight.size() >= options_.max_active_fetches) break;
      if (host.queue.empty() || host.in_flight >= options_.max_fetches_per_host) continue;
      if (host.robots_state == HostState::Robots::kFetching) continue;
      if (now < host.next_allowed) {
        next = std::min(next, host.next_allowed);
        continue;
      }
      if (host.robots_state == HostState::Robots::kUnknown) {
        host.robots_state = HostState::Robots::kFetching;
        update([](CrawlProgress& p) { ++p.robots_fetches; });
        start_fetch(host, {}, true);
        continue;
      }
      while (!host.queue.empty()) {
        HostState::Entry entry = std::move(host.queue.front());
        host.queue.pop_front();
        --sweep.queued;
        if (host.unresolvable) {
          // The robots.txt fetch found no such host: the URL is dead without another lookup.
          CrawledPage page;
          page.outcome = PageOutcome::kDead;
          page.url = page.final_url = entry.url;
          page.depth = entry.depth;
          page.fetched_at = clock_->WallNow();
          page.error = NotFoundError("host does not resolve (" + entry.url + ")");
          page.error_kind = FetchErrorKind::kDns;
          deliver(std::move(page));
          continue;
        }
        StatusOr<Url> url = ParseUrl(entry.url);
        if (options_.obey_robots && url.ok() && !host.robots.IsAllowed(url->PathAndQuery())) {
          // Told, not only counted: a known URL robots.txt now refuses is not gone.
          CrawledPage page;
          page.outcome = PageOutcome::kRobotsDisallowed;
          page.url = page.final_url = entry.url;
          page.depth = entry.depth;
          page.fetched_at = clock_->WallNow();
          deliver(std::move(page));
          continue;
        }
        if (sweep.pages_started >= options_.max_pages) {
          const uint64_t left = 1 + host.queue.size();
          update([left](CrawlProgress& p) { p.over_budget += left; });
          sweep.queued -= host.queue.size();
          host.queue.clear();
          break;
        }
        ++sweep.pages_started;
        start_fetch(host, std::move(entry), false);
        break;
      }
      if (!host.queue.empty() && host.in_flight < options_.max_fetches_per_host) {
        next = std::min(next, host.next_allowed);
      }
    }
    return next;
  };

  auto handle = [&](FetchResult result) {
    auto it = sweep.in_flight.find(result.id);
    if (it == sweep.in_flight.end()) return;
    Sweep::InFlight flight = std::move(it->second);
    sweep.in_flight.erase(it);
    HostState& host = *flight.host;
    --host.in_flight;
    // The delay runs from the end of a fetch: a slow server gets the full pause after it. For
    // pages it is set after the callback, so that its backpressure answer counts at once.
    auto pause_host = [&] {
      host.next_allowed = std::max(host.next_allowed, clock_->Now() + host.delay +
                                                          (sweep.slow ? options_.slow_down_delay
                                                                      : Steady::duration::zero()));
    };
    if (flight.robots) {
      pause_host();
      const int status = result.status.ok() ? result.http_status : 0;
      host.robots = RobotsRules::FromFetch(status, result.body, options_.product_token);
      host.robots_state = HostState::Robots::kReady;
      host.unresolvable = result.error_kind == FetchErrorKind::kDns;
      if (const auto delay = host.robots.crawl_delay_seconds()) {
        const auto crawl_delay = std::min<Steady::duration>(
            std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(*delay)),
            options_.max_crawl_delay);
        host.delay = std::max<Steady::duration>(host.delay, crawl_delay);
        host.next_allowed = std::max(host.next_allowed, clock_->Now() + host.delay);
      }
      return;
    }

    CrawledPage page;
    page.url = flight.entry.url;
    page.depth = flight.entry.depth;
    page.fetched_at = flight.started;
    page.final_url = result.final_url;
    page.redirects = std::move(result.redirects);
    page.http_status = result.http_status;
    page.headers = std::move(result.headers);
    page.error = result.status;
    page.error_kind = result.error_kind;
    if (StatusOr<std::string> final_url = NormalizeUrl(page.final_url); final_url.ok()) {
      page.final_url = *final_url;
      // A redirect target reached is not fetched again under its own name; a refused one goes
      // to the frontier below.
      if (result.error_kind != FetchErrorKind::kRedirectRefused) sweep.seen.insert(*final_url);
    }
    if (result.error_kind == FetchErrorKind::kRedirectRefused) {
      page.outcome = PageOutcome::kRedirected;
      page.error = OkStatus();
      page.error_kind = FetchErrorKind::kNone;
      enqueue(page.final_url, page.depth);
    } else if (!result.status.ok()) {
      page.outcome =
          result.error_kind == FetchErrorKind::kDns ? PageOutcome::kDead : PageOutcome::kError;
    } else if (result.http_status >= 200 && result.http_status < 300) {
      page.outcome = PageOutcome::kPage;
      page.body = std::move(result.body);
      const std::string* type = FindHeader(page.headers, "Content-Type");
      std::string mime = type == nullptr ? "" : type->substr(0, type->find(';'));
      for (char& c : mime) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (mime.find("html") != std::string::npos) {
        LinkOptions link_options;
        link_options.product_token = options_.product_token;
        const ExtractedLinks links = ExtractLinks(page.body, page.final_url, link_options);
        page.canonical = links.canonical;
        page.noindex = links.meta_noindex;
        if (page.depth < options_.max_depth) {
          for (const std::string& link : links.links) enqueue(link, page.depth + 1);
        }
      }
    } else if (result.http_status == 404 || result.http_status == 410) {
      page.outcome = PageOutcome::kDead;
    } else {
      page.outcome = PageOutcome::kError;
      page.error =
          UnavailableError("HTTP " + std::to_string(result.http_status) + " (" + page.url + ")");
    }
    deliver(std::move(page));
    pause_host();
  };

  std::vector<FetchResult> done;
  for (;;) {
    if (sweep.paused && clock_->Now() >= sweep.recheck_at) {
      const Backpressure answer = pressure ? pressure() : Backpressure::kContinue;
      sweep.paused = answer == Backpressure::kStop;
      sweep.slow = answer == Backpressure::kSlowDown;
      sweep.recheck_at = clock_->Now() + options_.stop_recheck;
    }
    Steady::time_point next = start_ready();
    if (sweep.paused) next = std::min(next, sweep.recheck_at);
    const bool frontier_empty =
        sweep.queued == 0 &&
        std::none_of(sweep.hosts.begin(), sweep.hosts.end(), [](const auto& h) {
          return h.second.robots_state == HostState::Robots::kFetching;
        });
    if (fetcher_->active() == 0 && sweep.in_flight.empty() && (frontier_empty || stop_requested_)) {
      break;
    }
    if (fetcher_->active() > 0) {
      auto wait = options_.poll_interval;
      if (next != Steady::time_point::max()) {
        wait =
            std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(next - clock_->Now()),
                       std::chrono::milliseconds(0), options_.poll_interval);
      }
      fetcher_->Poll(wait, &done);
    } else if (next != Steady::time_point::max()) {
      clock_->SleepUntil(next);
    } else if (!sweep.paused && !stop_requested_) {
      // Nothing in flight, nothing ready, nothing scheduled: only a budget-exhausted frontier
      // gets here; drop what is left so the sweep can end.
      break;
    }
    for (FetchResult& result : done) handle(std::move(result));
    done.clear();
  }
  update([](CrawlProgress& p) { p.running = false; });
  running_ = false;
  return OkStatus();
}

}  // namespace shingled::crawler
