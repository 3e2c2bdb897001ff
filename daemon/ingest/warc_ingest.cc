#include "daemon/ingest/warc_ingest.h"

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "crawler/url.h"
#include "daemon/wire/http_query.h"

namespace shingled::daemon {
namespace {

// Whether `uri` names the http or https scheme (case-insensitively, after leading white space),
// whatever the rest of it holds.
bool HasHttpScheme(std::string_view uri) {
  while (!uri.empty() && static_cast<unsigned char>(uri.front()) <= 0x20) uri.remove_prefix(1);
  const std::string_view scheme = uri.substr(0, uri.find(':'));
  if (scheme.size() == uri.size()) return false;
  std::string lower;
  for (char c : scheme) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return lower == "http" || lower == "https";
}

}  // namespace

StatusOr<std::optional<PageJob>> JobFromWarcRecord(const crawler::WarcRecord& record,
                                                   store::SweepId sweep, bool* skipped,
                                                   const crawler::WarcRecordTargets* targets) {
  *skipped = false;
  StatusOr<std::optional<crawler::WarcPage>> interpreted =
      crawler::InterpretRecord(record, {}, targets);
  if (!interpreted.ok()) return interpreted.status();
  if (!interpreted->has_value()) return std::optional<PageJob>();  // request, metadata, warcinfo
  crawler::WarcPage& page = **interpreted;
  using Kind = crawler::WarcPage::Kind;
  // Stored under the URL every other way in would store it under (PageUrl: normalized).
  StatusOr<std::string> url = crawler::NormalizeUrl(page.url);
  if (!url.ok()) {
    // A target of another scheme holds no page (wget's metadata://gnu.org/... records); an
    // http(s) target that is not a valid URL (a host that is not UTF-8) is a page that cannot be
    // stored: an error of its record, named in the answer, not a silent skip.
    if (HasHttpScheme(page.url)) return url.status();
    *skipped = true;
    return std::optional<PageJob>();
  }
  // A resource record is the page itself; a revisit without HTTP headers (of a resource record)
  // has status 0: it was a page; and a revisit of a 304 (Heritrix's server-not-modified profile)
  // says the content is unchanged. Any other status is classified as on every way in
  // (store::ClassifyHttpStatus): a 5xx is a failed attempt, a 3xx a redirect to its Location.
  const bool revisit_of_content =
      page.kind == Kind::kRevisit && (page.http_status == 0 || page.http_status == 304);
  const int status = page.kind == Kind::kResource || revisit_of_content ? 200 : page.http_status;
  const store::StatusClass kind = store::ClassifyHttpStatus(status);
  PageJob job;
  job.sweep = sweep;
  job.date = page.date_unix;
  job.http_status = status;
  job.content_type = std::move(page.content_type);
  if (kind == store::StatusClass::kRedirect) {
    // A redirect whose Location is missing or not a URL is recorded without its target.
    if (const std::string* location = crawler::FindHeader(page.http_headers, "Location")) {
      StatusOr<std::string> target = RedirectTarget(*url, *location, kMaxRedirectTargetBytes);
      if (target.ok()) job.redirect_target = std::move(target).value();
    }
  }
  if (page.kind == Kind::kRevisit && kind == store::StatusClass::kContent) {
    job.revisit = true;
    StatusOr<std::string> refers_to = crawler::NormalizeUrl(page.refers_to_uri);
    std::string target = refers_to.ok() ? std::move(*refers_to) : std::move(page.refers_to_uri);
    if (target != *url) job.revisit_of = std::move(target);
  } else if (kind == store::StatusClass::kContent) {
    job.body = std::move(page.body);
  }
  job.url = std::move(*url);
  return std::optional<PageJob>(std::move(job));
}

PageFeeder::PageFeeder(IngestPipeline* pipeline, size_t max_in_flight)
    : pipeline_(pipeline), max_in_flight_(max_in_flight) {}

PageFeeder::~PageFeeder() { Wait(); }

Status PageFeeder::Submit(const PageJob& job, const OnDone& on_done) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    finished_.wait(lock, [this] { return in_flight_ < max_in_flight_; });
    ++in_flight_;
    lock.unlock();
    std::vector<PageJob> jobs;
    jobs.push_back(job);  // a copy: a refused submission is retried
    Status s = pipeline_->Submit(std::move(jobs), [this, on_done](std::vector<PageOutcome> out) {
      on_done(std::move(out.front()));
      std::lock_guard<std::mutex> done_lock(mu_);
      --in_flight_;
      finished_.notify_all();
    });
    lock.lock();
    if (s.ok()) return OkStatus();
    --in_flight_;
    // Out of space (a full disk or map) is not a full queue: waiting would hold the upload.
    if (s.code() != StatusCode::kResourceExhausted || store::IsOutOfSpace(s)) return s;
    // The queue is full. With pages of our own in it, the next one finishing frees room; with
    // none (other clients filled it), look again shortly: the pipeline has no "room" signal.
    if (in_flight_ > 0) {
      const size_t now = in_flight_;
      finished_.wait(lock, [&] { return in_flight_ < now; });
    } else {
      finished_.wait_for(lock, std::chrono::milliseconds(10));
    }
  }
}

void PageFeeder::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  finished_.wait(lock, [this] { return in_flight_ == 0; });
}

}  // namespace shingled::daemon
