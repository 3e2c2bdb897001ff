// The crawler's WARC output (daemon/crawl/crawl_warc.h).
#include "daemon/crawl/crawl_warc.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "crawler/cdxj.h"
#include "crawler/curl_fetcher.h"
#include "crawler/url.h"
#include "daemon/wire/unix_time.h"

namespace shingled::daemon {
namespace {

// The digest as CDXJ lines hold it: without "sha1:".
std::string BareDigest(const std::string& digest) {
  const size_t colon = digest.find(':');
  return colon == std::string::npos ? digest : digest.substr(colon + 1);
}

std::string CaptureKey(const std::string& url, int64_t date, const std::string& digest) {
  return url + " " + crawler::CdxjTimestamp(crawler::FormatWarcDate(date)) + " " +
         BareDigest(digest);
}

// What shingled sends (curl_fetcher.cc): the request line, Host, User-Agent, Accept, and the
// codings libcurl decodes.
std::string RequestHead(const std::string& url, const std::string& user_agent) {
  static const std::string accept_encoding = crawler::CurlAcceptEncoding();
  StatusOr<crawler::Url> parsed = crawler::ParseUrl(url);
  const std::string target = parsed.ok() ? parsed->PathAndQuery() : "/";
  const std::string host = parsed.ok() ? parsed->HostPort() : "";
  std::string head = "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n";
  if (!user_agent.empty()) head += "User-Agent: " + user_agent + "\r\n";
  head += "Accept: */*\r\n";
  if (!accept_encoding.empty()) head += "Accept-Encoding: " + accept_encoding + "\r\n";
  head += "\r\n";
  return head;
}

}  // namespace

StatusOr<std::unique_ptr<CrawlWarc>> CrawlWarc::Open(const CrawlWarcOptions& options,
                                                     const std::string& sweep, store::Store* store,
                                                     const dedup::SketchContext* context) {
  std::unique_ptr<CrawlWarc> warc(new CrawlWarc(options, store, context));
  warc->LoadIndexes();
  crawler::WarcArchiveOptions archive;
  archive.dir = options.dir;
  archive.sweep = sweep;
  archive.max_file_bytes = options.max_file_bytes;
  archive.warcinfo = {{"software", "shingled"},
                      {"isPartOf", sweep},
                      {"robots", options.obey_robots ? "obey" : "ignore"}};
  if (!options.user_agent.empty()) {
    archive.warcinfo.push_back({"http-header-user-agent", options.user_agent});
  }
  StatusOr<std::unique_ptr<crawler::WarcArchive>> opened =
      crawler::WarcArchive::Open(std::move(archive));
  if (!opened.ok()) return opened.status();
  warc->archive_ = std::move(*opened);
  return warc;
}

CrawlWarc::CrawlWarc(const CrawlWarcOptions& options, store::Store* store,
                     const dedup::SketchContext* context)
    : options_(options), store_(store), context_(context) {}

CrawlWarc::~CrawlWarc() = default;

void CrawlWarc::LoadIndexes() {
  std::error_code ec;
  std::vector<std::filesystem::path> indexes;
  for (const auto& entry : std::filesystem::directory_iterator(options_.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 13 && name.ends_with(".warc.gz.cdxj")) indexes.push_back(entry.path());
  }
  // The latest files first, so that a full memory keeps those: by the UTC start and serial that
  // end each name ("...-20240501120000-00003.warc.gz.cdxj"), whatever the sweep names.
  auto start_and_serial = [](const std::filesystem::path& p) {
    const std::string name = p.filename().string();
    constexpr size_t kTail = std::string_view("20240501120000-00003.warc.gz.cdxj").size();
    return name.size() >= kTail ? name.substr(name.size() - kTail) : name;
  };
  std::sort(indexes.begin(), indexes.end(), [&](const auto& a, const auto& b) {
    return start_and_serial(a) > start_and_serial(b);
  });
  size_t loaded = 0;
  for (const std::filesystem::path& index : indexes) {
    std::ifstream in(index);
    std::string line;
    while (std::getline(in, line) && by_capture_.size() < kMaxIndexedCaptures) {
      const size_t brace = line.find('{');
      if (brace == std::string::npos) continue;
      const nlohmann::json j = nlohmann::json::parse(line.substr(brace), nullptr, false);
      if (!j.is_object() || !j.contains("url") || !j.contains("digest") || !j.contains("offset") ||
          !j.contains("length") || !j.contains("filename") ||
          j.value("mime", "") == "warc/revisit") {
        continue;
      }
      const size_t space = line.find(' ');
      if (space == std::string::npos) continue;
      const std::string timestamp = line.substr(space + 1, 14);
      StatusOr<int64_t> date =
          timestamp.size() != 14
              ? StatusOr<int64_t>(InvalidArgumentError("short timestamp"))
              : crawler::ParseWarcDate(timestamp.substr(0, 4) + "-" + timestamp.substr(4, 2) + "-" +
                                       timestamp.substr(6, 2) + "T" + timestamp.substr(8, 2) + ":" +
                                       timestamp.substr(10, 2) + ":" + timestamp.substr(12, 2) +
                                       "Z");
      if (!date.ok()) continue;
      Capture capture;
      capture.date = *date;
      try {
        capture.url = j["url"].get<std::string>();
        capture.file = (index.parent_path() / j["filename"].get<std::string>()).string();
        capture.offset = std::stoull(j["offset"].get<std::string>());
        capture.length = std::stoull(j["length"].get<std::string>());
        by_capture_.emplace(capture.url + " " + timestamp + " " + j["digest"].get<std::string>(),
                            std::move(capture));
        ++loaded;
      } catch (const std::exception&) {
        continue;  // a damaged line: that capture is not offered for revisits
      }
    }
  }
  if (loaded > 0)
    spdlog::info("WARC output: {} earlier captures indexed in {}", loaded, options_.dir);
}

const CrawlWarc::Capture* CrawlWarc::FindEarlier(const std::string& url, std::string_view body,
                                                 const std::string& digest) {
  if (const auto it = by_digest_.find(digest); it != by_digest_.end()) return &it->second;
  if (by_capture_.empty() || store_ == nullptr || context_ == nullptr) return nullptr;
  StatusOr<store::DocId> doc = store_->FindIdentical(dedup::IdenticalFingerprint(*context_, body));
  if (!doc.ok() || *doc == 0) return nullptr;  // a read error: a full response is the safe way
  Capture* found = nullptr;
  auto try_url = [&](const std::string& u) {
    StatusOr<std::vector<store::UrlVersion>> history = store_->History(u);
    if (!history.ok()) return;
    for (const store::UrlVersion& v : *history) {
      if (v.doc != *doc) continue;
      const auto it = by_capture_.find(CaptureKey(u, v.date, digest));
      if (it != by_capture_.end()) {
        found = &it->second;
        return;
      }
    }
  };
  try_url(url);
  if (found == nullptr) {
    // Another URL with the same content (a mirror, a moved page): its first captures.
    StatusOr<store::ClusterInfo> cluster = store_->Cluster(*doc);
    if (cluster.ok()) {
      for (const store::ClusterMember& m : cluster->members) {
        if (m.doc != *doc) continue;
        for (size_t i = 0; i < m.urls.size() && i < 4 && found == nullptr; ++i) {
          if (m.urls[i] != url) try_url(m.urls[i]);
        }
      }
    }
  }
  if (found == nullptr || !found->record_id.empty()) return found;
  // The record ID, from the record itself.
  std::ifstream in(found->file, std::ios::binary);
  std::string member(found->length, '\0');
  in.seekg(static_cast<std::streamoff>(found->offset));
  if (in.read(member.data(), static_cast<std::streamsize>(member.size()))) {
    crawler::WarcReader reader(crawler::MakeStringSource(member));
    crawler::WarcRecord record;
    if (reader.Next(&record) && record.Type() == "response") {
      const std::string* id = record.Header("WARC-Record-ID");
      const std::string* target = record.Header("WARC-Target-URI");
      if (id != nullptr && target != nullptr && *target == found->url) found->record_id = *id;
    }
  }
  // A file that moved or changed since it was indexed: no revisit to it.
  return found->record_id.empty() ? nullptr : found;
}

void CrawlWarc::Remember(std::string key, Capture capture) {
  if (by_digest_.size() >= kMaxIndexedCaptures) return;
  by_digest_.emplace(std::move(key), std::move(capture));
}

Status CrawlWarc::WriteExchange(const std::string& url, int64_t date, int status,
                                const crawler::HeaderList& headers, std::string_view body,
                                bool may_revisit) {
  crawler::HttpExchange x;
  x.url = url;
  x.date_unix = date;
  x.request_head = RequestHead(url, options_.user_agent);
  x.http_status = status;
  x.response_headers = headers;
  x.body = body;
  const std::string digest = crawler::WarcSha1Digest(body);
  const Capture* earlier = may_revisit ? FindEarlier(url, body, digest) : nullptr;
  crawler::WarcRevisitOf revisit_of;
  if (earlier != nullptr) revisit_of = {earlier->url, earlier->date, earlier->record_id};
  StatusOr<crawler::WarcWritten> written =
      archive_->Write(x, earlier != nullptr ? &revisit_of : nullptr);
  if (!written.ok()) return written.status();
  if (earlier == nullptr && may_revisit) {
    Remember(digest, Capture{url, date, written->record_id, "", 0, 0});
  }
  return OkStatus();
}

Status CrawlWarc::Record(const crawler::CrawledPage& page) {
  if (closed_) return FailedPreconditionError("WARC output closed");
  const int64_t date = UnixSeconds(page.fetched_at);
  // A redirect the crawler did not follow (kRedirected) is the last hop: its answer is the
  // page's own status and headers, and there is no answer after it.
  const bool ends_in_hop = page.outcome == crawler::PageOutcome::kRedirected;
  for (size_t i = 0; i < page.redirects.size(); ++i) {
    const crawler::RedirectHop& hop = page.redirects[i];
    const bool last = ends_in_hop && i + 1 == page.redirects.size();
    Status s = WriteExchange(hop.url, date, last ? page.http_status : hop.http_status,
                             last ? page.headers : crawler::HeaderList{{"Location", hop.location}},
                             "", /*may_revisit=*/false);
    if (!s.ok()) return s;
  }
  if (ends_in_hop || page.http_status == 0) return OkStatus();  // no (further) answer
  const bool content = page.outcome == crawler::PageOutcome::kPage && !page.body.empty();
  return WriteExchange(page.final_url, date, page.http_status, page.headers, page.body, content);
}

Status CrawlWarc::Close() {
  if (closed_) return closed_status_;
  closed_ = true;
  closed_status_ = archive_->Close();
  return closed_status_;
}

WarcReport CrawlWarc::Report() const {
  WarcReport r;
  r.enabled = true;
  r.files = archive_->files();
  r.responses = archive_->responses();
  r.revisits = archive_->revisits();
  r.bytes = archive_->bytes();
  if (!archive_->status().ok()) r.error = archive_->status().message();
  return r;
}

}  // namespace shingled::daemon
