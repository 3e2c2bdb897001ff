#include "crawler/curl_fetcher.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "crawler/url.h"

namespace shingled::crawler {

std::string_view FetchErrorKindName(FetchErrorKind kind) {
  switch (kind) {
    case FetchErrorKind::kNone:
      return "none";
    case FetchErrorKind::kBadUrl:
      return "bad_url";
    case FetchErrorKind::kDns:
      return "dns";
    case FetchErrorKind::kConnect:
      return "connect";
    case FetchErrorKind::kTimeout:
      return "timeout";
    case FetchErrorKind::kTls:
      return "tls";
    case FetchErrorKind::kTooManyRedirects:
      return "too_many_redirects";
    case FetchErrorKind::kTooLarge:
      return "too_large";
    case FetchErrorKind::kContentType:
      return "content_type";
    case FetchErrorKind::kBlockedAddress:
      return "blocked_address";
    case FetchErrorKind::kRedirectRefused:
      return "redirect_refused";
    case FetchErrorKind::kNetwork:
      return "network";
  }
  return "unknown";
}

struct CurlFetcher::Transfer {
  const CurlFetcherOptions* options = nullptr;
  CURL* easy = nullptr;
  FetchResult result;
  // Every response head seen, in order: redirects first, the final one last.
  struct Head {
    int status = 0;
    HeaderList headers;
  };
  std::vector<Head> heads;
  bool any_content_type = false;
  std::function<bool(std::string_view)> allow_redirect;
  std::string refused_redirect;
  bool body_checked = false;
  bool keep_body = false;
  bool too_large = false;
  bool refused_type = false;
  bool blocked = false;
  std::string blocked_address;
};

namespace {

bool InRange4(uint32_t ip, uint32_t net, int bits) {
  const uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (ip & mask) == (net & mask);
}

bool NonPublic4(uint32_t ip) {
  static constexpr struct {
    uint32_t net;
    int bits;
  } kRanges[] = {
      {0x00000000, 8},   // 0.0.0.0/8 "this network"
      {0x0A000000, 8},   // 10/8 private
      {0x64400000, 10},  // 100.64/10 CGNAT
      {0x7F000000, 8},   // 127/8 loopback
      {0xA9FE0000, 16},  // 169.254/16 link-local (cloud metadata lives here)
      {0xAC100000, 12},  // 172.16/12 private
      {0xC0000000, 24},  // 192.0.0/24 IETF protocol assignments
      {0xC0000200, 24},  // 192.0.2/24 documentation (TEST-NET-1)
      {0xC0586300, 24},  // 192.88.99/24 6to4 relay anycast (deprecated)
      {0xC6336400, 24},  // 198.51.100/24 documentation (TEST-NET-2)
      {0xCB007100, 24},  // 203.0.113/24 documentation (TEST-NET-3)
      {0xC0A80000, 16},  // 192.168/16 private
      {0xC6120000, 15},  // 198.18/15 benchmarking
      {0xE0000000, 4},   // 224/4 multicast
      {0xF0000000, 4},   // 240/4 reserved, broadcast
  };
  for (const auto& r : kRanges) {
    if (InRange4(ip, r.net, r.bits)) return true;
  }
  return false;
}

std::string AddressText(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text,
              sizeof(text));
  } else if (address->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, text,
              sizeof(text));
  }
  return text;
}

curl_socket_t OpenSocket(void* clientp, curlsocktype purpose, curl_sockaddr* address) {
  auto* transfer = static_cast<CurlFetcher::Transfer*>(clientp);
  if (purpose == CURLSOCKTYPE_IPCXN && !transfer->options->allow_private_addresses &&
      IsNonPublicAddress(&address->addr)) {
    transfer->blocked = true;
    transfer->blocked_address = AddressText(&address->addr);
    return CURL_SOCKET_BAD;
  }
  return socket(address->family, address->socktype, address->protocol);
}

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// Runs before every request libcurl sends, redirect hops included (CURLOPT_PREREQFUNCTION, curl
// 7.80), with the URL it is about to request as the effective URL.
int BeforeRequest(void* clientp, char*, char*, int, int) {
  auto* transfer = static_cast<CurlFetcher::Transfer*>(clientp);
  char* url = nullptr;
  curl_easy_getinfo(transfer->easy, CURLINFO_EFFECTIVE_URL, &url);
  if (url == nullptr || transfer->heads.empty()) return CURL_PREREQFUNC_OK;  // the first request
  if (transfer->allow_redirect(url)) return CURL_PREREQFUNC_OK;
  transfer->refused_redirect = url;
  return CURL_PREREQFUNC_ABORT;
}

size_t OnHeader(char* data, size_t size, size_t count, void* userdata) {
  auto* transfer = static_cast<CurlFetcher::Transfer*>(userdata);
  const std::string_view line = TrimView(std::string_view(data, size * count));
  if (line.starts_with("HTTP/")) {
    CurlFetcher::Transfer::Head head;
    const size_t space = line.find(' ');
    if (space != std::string_view::npos)
      head.status = std::atoi(std::string(line.substr(space + 1, 3)).c_str());
    // Interim 1xx answers are not responses of their own.
    if (!transfer->heads.empty() && transfer->heads.back().status >= 100 &&
        transfer->heads.back().status < 200) {
      transfer->heads.back() = head;
    } else {
      transfer->heads.push_back(std::move(head));
    }
  } else if (!line.empty() && !transfer->heads.empty()) {
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      transfer->heads.back().headers.emplace_back(std::string(TrimView(line.substr(0, colon))),
                                                  std::string(TrimView(line.substr(colon + 1))));
    }
  }
  return size * count;
}

bool ContentTypeAccepted(const CurlFetcherOptions& options, const char* content_type) {
  if (options.accepted_content_types.empty()) return true;
  std::string mime = content_type == nullptr ? "" : content_type;
  mime = std::string(TrimView(std::string_view(mime).substr(0, mime.find(';'))));
  for (char& c : mime) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::find(options.accepted_content_types.begin(), options.accepted_content_types.end(),
                   mime) != options.accepted_content_types.end();
}

size_t OnBody(char* data, size_t size, size_t count, void* userdata) {
  auto* transfer = static_cast<CurlFetcher::Transfer*>(userdata);
  const size_t n = size * count;
  if (!transfer->body_checked) {
    transfer->body_checked = true;
    long status = 0;
    curl_easy_getinfo(transfer->easy, CURLINFO_RESPONSE_CODE, &status);
    const char* content_type = nullptr;
    curl_easy_getinfo(transfer->easy, CURLINFO_CONTENT_TYPE, &content_type);
    transfer->keep_body = status >= 200 && status < 300;
    if (transfer->keep_body && !transfer->any_content_type &&
        !ContentTypeAccepted(*transfer->options, content_type)) {
      transfer->refused_type = true;
      return 0;  // aborts the transfer: we do not want this body at all
    }
  }
  if (!transfer->keep_body) return n;  // error pages: read and dropped
  if (transfer->result.body.size() + n > transfer->options->max_body_bytes) {
    transfer->too_large = true;
    return 0;  // decoded data over the limit: abort rather than keep reading
  }
  transfer->result.body.append(data, n);
  return n;
}

}  // namespace

bool IsNonPublicAddress(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    return NonPublic4(ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr));
  }
  if (address->sa_family != AF_INET6) return true;  // unknown families are not for us
  const uint8_t* a = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr.s6_addr;
  // ::ffff:0:0/96 (IPv4-mapped) is the IPv4 address itself to a dual-stack socket.
  static constexpr uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  // ::ffff:0:0:0/96 (IPv4-translated, RFC 6145's SIIT) reaches the IPv4 address through a
  // translator, as does 64:ff9b::/96 (NAT64, RFC 6052): both are judged by the IPv4 address they
  // embed. On an IPv6-only host behind DNS64 every IPv4 site has a NAT64 address, and
  // 64:ff9b::7f00:1 is still loopback.
  static constexpr uint8_t kTranslatedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
  static constexpr uint8_t kNat64Prefix[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(a, kMappedPrefix, 12) == 0 || std::memcmp(a, kTranslatedPrefix, 12) == 0 ||
      std::memcmp(a, kNat64Prefix, 12) == 0) {
    return NonPublic4((uint32_t{a[12]} << 24) | (uint32_t{a[13]} << 16) | (uint32_t{a[14]} << 8) |
                      a[15]);
  }
  bool zero_prefix = true;  // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
  for (int i = 0; i < 12; ++i) zero_prefix = zero_prefix && a[i] == 0;
  if (zero_prefix) return true;
  if ((a[0] & 0xfe) == 0xfc) return true;                  // fc00::/7 unique local
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) return true;  // fe80::/10 link-local
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0) return true;  // fec0::/10 site-local (deprecated)
  if (a[0] == 0xff) return true;                           // multicast
  // Ranges that tunnel to or translate into addresses elsewhere, or name none:
  if (a[0] == 0x20 && a[1] == 0x02) return true;  // 2002::/16 6to4 (to the IPv4 it embeds)
  if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0) return true;  // 2001::/32 Teredo
  if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8) {
    return true;  // 2001:db8::/32 documentation
  }
  if (a[0] == 0 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && a[4] == 0 && a[5] == 1) {
    return true;  // 64:ff9b:1::/48 NAT64 for local use (RFC 8215)
  }
  return false;
}

Status CurlCodeToStatus(int curl_code, std::string_view url, FetchErrorKind* kind) {
  const auto code = static_cast<CURLcode>(curl_code);
  const std::string message = std::string(curl_easy_strerror(code)) + " (" + std::string(url) + ")";
  switch (code) {
    case CURLE_OK:
      *kind = FetchErrorKind::kNone;
      return OkStatus();
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      *kind = FetchErrorKind::kBadUrl;
      return InvalidArgumentError(message);
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      *kind = FetchErrorKind::kDns;
      return NotFoundError(message);
    case CURLE_COULDNT_CONNECT:
      *kind = FetchErrorKind::kConnect;
      return UnavailableError(message);
    case CURLE_OPERATION_TIMEDOUT:
      *kind = FetchErrorKind::kTimeout;
      return DeadlineExceededError(message);
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
      *kind = FetchErrorKind::kTls;
      return UnavailableError(message);
    case CURLE_TOO_MANY_REDIRECTS:
      *kind = FetchErrorKind::kTooManyRedirects;
      return ResourceExhaustedError(message);
    case CURLE_FILESIZE_EXCEEDED:
      *kind = FetchErrorKind::kTooLarge;
      return ResourceExhaustedError(message);
    case CURLE_OUT_OF_MEMORY:
      *kind = FetchErrorKind::kNetwork;
      return ResourceExhaustedError(message);
    default:
      *kind = FetchErrorKind::kNetwork;
      return UnavailableError(message);
  }
}

StatusOr<std::unique_ptr<CurlFetcher>> CurlFetcher::Create(const CurlFetcherOptions& options) {
  static std::once_flag once;
  static CURLcode global = CURLE_OK;
  std::call_once(once, [] { global = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (global != CURLE_OK) return InternalError("curl_global_init failed");
  std::unique_ptr<CurlFetcher> fetcher(new CurlFetcher(options));
  if (fetcher->multi_ == nullptr) return InternalError("curl_multi_init failed");
  return fetcher;
}

CurlFetcher::CurlFetcher(const CurlFetcherOptions& options) : options_(options) {
  CURLM* multi = curl_multi_init();
  multi_ = multi;
  if (multi == nullptr) return;
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                    static_cast<long>(options_.max_connections_per_host));
  curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                    static_cast<long>(options_.max_total_connections));
  curl_slist* list = nullptr;
  for (const std::string& entry : options_.resolve) list = curl_slist_append(list, entry.c_str());
  resolve_list_ = list;
}

CurlFetcher::~CurlFetcher() {
  auto* multi = static_cast<CURLM*>(multi_);
  for (auto& [easy, transfer] : transfers_) {
    curl_multi_remove_handle(multi, static_cast<CURL*>(easy));
    curl_easy_cleanup(static_cast<CURL*>(easy));
  }
  transfers_.clear();
  if (multi != nullptr) curl_multi_cleanup(multi);
  curl_slist_free_all(static_cast<curl_slist*>(resolve_list_));
}

void CurlFetcher::Start(FetchRequest request) {
  auto transfer = std::make_unique<Transfer>();
  transfer->options = &options_;
  transfer->result.id = request.id;
  transfer->result.url = request.url;
  transfer->result.final_url = request.url;
  transfer->any_content_type = request.any_content_type;
  transfer->allow_redirect = std::move(request.allow_redirect);
  // Refuse anything but http(s) before libcurl sees it (libcurl knows many more schemes).
  if (!ParseUrl(request.url).ok()) {
    transfer->result.status = InvalidArgumentError("not an http(s) URL: " + request.url);
    transfer->result.error_kind = FetchErrorKind::kBadUrl;
    ready_.push_back(std::move(transfer->result));
    return;
  }
  CURL* easy = curl_easy_init();
  if (easy == nullptr) {
    transfer->result.status = ResourceExhaustedError("curl_easy_init failed: " + request.url);
    transfer->result.error_kind = FetchErrorKind::kNetwork;
    ready_.push_back(std::move(transfer->result));
    return;
  }
  transfer->easy = easy;
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_PROXY, "");  // "" disables proxies, even from the environment
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(easy, CURLOPT_MAXREDIRS, static_cast<long>(options_.max_redirects));
  curl_easy_setopt(easy, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");  // every coding libcurl can decode
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.ca_file.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, options_.ca_file.c_str());
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.total_timeout.count()));
  // A declared Content-Length over the limit fails before the body; undeclared or compressed
  // bodies are caught in OnBody.
  curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(options_.max_body_bytes));
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &OpenSocket);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, transfer.get());
  if (transfer->allow_redirect) {
    curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, &BeforeRequest);
    curl_easy_setopt(easy, CURLOPT_PREREQDATA, transfer.get());
  }
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, transfer.get());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, transfer.get());
  if (resolve_list_ != nullptr) curl_easy_setopt(easy, CURLOPT_RESOLVE, resolve_list_);
  curl_multi_add_handle(static_cast<CURLM*>(multi_), easy);
  transfers_[easy] = std::move(transfer);
}

void CurlFetcher::Poll(std::chrono::milliseconds timeout, std::vector<FetchResult>* done) {
  for (FetchResult& r : ready_) done->push_back(std::move(r));
  ready_.clear();
  if (transfers_.empty()) return;
  auto* multi = static_cast<CURLM*>(multi_);
  int running = 0;
  curl_multi_perform(multi, &running);
  if (running > 0) {
    int fds = 0;
    curl_multi_poll(multi, nullptr, 0, static_cast<int>(timeout.count()), &fds);
    curl_multi_perform(multi, &running);
  }
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
    if (message->msg != CURLMSG_DONE) continue;
    auto it = transfers_.find(message->easy_handle);
    if (it == transfers_.end()) continue;
    Finish(it->second.get(), message->data.result, done);
    curl_multi_remove_handle(multi, message->easy_handle);
    curl_easy_cleanup(message->easy_handle);
    transfers_.erase(it);
  }
}

void CurlFetcher::Finish(Transfer* transfer, int curl_code, std::vector<FetchResult>* done) {
  FetchResult& result = transfer->result;
  CURL* easy = transfer->easy;
  char* effective = nullptr;
  curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &effective);
  if (effective != nullptr) result.final_url = effective;
  curl_off_t micros = 0;
  curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &micros);
  result.elapsed = std::chrono::milliseconds(micros / 1000);

  // Redirect hops: every head before the last that carried a Location.
  std::string at = result.url;
  // A refused hop's redirect is the last head seen; it is a hop all the same.
  const size_t redirect_heads = transfer->refused_redirect.empty() && !transfer->heads.empty()
                                    ? transfer->heads.size() - 1
                                    : transfer->heads.size();
  for (size_t i = 0; i < redirect_heads; ++i) {
    const Transfer::Head& head = transfer->heads[i];
    const std::string* location = FindHeader(head.headers, "Location");
    if (location == nullptr) continue;
    result.redirects.push_back({at, head.status, *location});
    StatusOr<std::string> next = ResolveUrl(at, *location);
    at = next.ok() ? *next : *location;
  }
  if (!transfer->heads.empty()) {
    result.headers = transfer->heads.back().headers;
    result.http_status = transfer->heads.back().status;
  }
  long code = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
  if (code != 0) result.http_status = static_cast<int>(code);
  long version = 0;
  curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version);
  switch (version) {
    case CURL_HTTP_VERSION_1_0: result.http_version = "1.0"; break;
    case CURL_HTTP_VERSION_1_1: result.http_version = "1.1"; break;
    case CURL_HTTP_VERSION_2_0: result.http_version = "2"; break;
    case CURL_HTTP_VERSION_3: result.http_version = "3"; break;
    default: break;
  }

  if (!transfer->refused_redirect.empty()) {
    result.error_kind = FetchErrorKind::kRedirectRefused;
    result.final_url = transfer->refused_redirect;
    result.status = FailedPreconditionError("redirect to " + transfer->refused_redirect +
                                            " refused (" + result.url + ")");
  } else if (transfer->blocked) {
    result.error_kind = FetchErrorKind::kBlockedAddress;
    result.status = InvalidArgumentError("refused to connect to non-public address " +
                                         transfer->blocked_address + " (" + result.url + ")");
  } else if (transfer->too_large || curl_code == CURLE_FILESIZE_EXCEEDED) {
    result.error_kind = FetchErrorKind::kTooLarge;
    result.status = ResourceExhaustedError("body over " + std::to_string(options_.max_body_bytes) +
                                           " bytes (" + result.url + ")");
  } else if (transfer->refused_type) {
    const char* content_type = nullptr;
    curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &content_type);
    result.error_kind = FetchErrorKind::kContentType;
    result.status =
        InvalidArgumentError(std::string("content type not accepted: ") +
                             (content_type ? content_type : "(none)") + " (" + result.url + ")");
  } else {
    result.status = CurlCodeToStatus(curl_code, result.url, &result.error_kind);
  }
  if (!result.status.ok()) result.body.clear();
  done->push_back(std::move(result));
}

std::string CurlAcceptEncoding() {
  // libcurl's own order for CURLOPT_ACCEPT_ENCODING "" (lib/content_encoding.c).
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  std::string value;
  auto add = [&](const char* coding) {
    if (!value.empty()) value += ", ";
    value += coding;
  };
  if (info->features & CURL_VERSION_LIBZ) {
    add("deflate");
    add("gzip");
  }
  if (info->features & CURL_VERSION_BROTLI) add("br");
  if (info->features & CURL_VERSION_ZSTD) add("zstd");
  return value;
}

}  // namespace shingled::crawler
