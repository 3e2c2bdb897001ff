// An HTTP/1.1 server on Boost.Beast: keep-alive, bounded pipelining, per-request limits and
// timeouts, a cap on live sessions, and a graceful stop. Requests go to an HttpHandler, which
// answers later, from any thread, through a Reply.
//
// Each connection is a session with its own strand; all of its state lives on that strand. A
// session reads the next request while earlier ones are still being answered (up to
// max_pipelined_requests) and writes the responses in request order.
//
// Thread-safety: HttpServer's public methods are safe to call from any thread. The handler is
// called on a session's strand and must not block: it hands work elsewhere and replies later.
#ifndef SHINGLED_DAEMON_HTTP_SERVER_H_
#define SHINGLED_DAEMON_HTTP_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "daemon/http/access_log.h"
#include "daemon/http/http_response.h"

namespace shingled::daemon {

class Session;

// The one answer to one request. Send() may be called from any thread, once. A Reply destroyed
// without Send() (a dropped job) answers 503 "shutting down", so no client waits forever.
class Reply {
 public:
  Reply(std::shared_ptr<Session> session, uint64_t seq);
  ~Reply();
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;

  // `log_note` ends the request's access log line (the API puts the verdicts of posted pages
  // there); it must hold nothing secret.
  void Send(Response response, std::string log_note = {});
  // The client's address, as the access log shows it ("-" when unknown).
  const std::string& client() const;

 private:
  std::shared_ptr<Session> session_;
  uint64_t seq_;
  bool sent_ = false;
};
using ReplyPtr = std::shared_ptr<Reply>;

// Where a streamed request body goes (HttpHandler::HandleStreamed): piece by piece, as it
// arrives, on the session's strand, so that a body of gigabytes is never held.
class BodySink {
 public:
  enum class Next {
    kMore,  // send the next piece
    kWait,  // full: the sink calls `resume` once, from any thread, when it takes more
    kStop,  // the sink wants no more; the connection closes after the answer
  };
  virtual ~BodySink() = default;
  // A piece of the body; `bytes` is valid during the call only. Must not block.
  virtual Next Write(std::string_view bytes, std::function<void()> resume) = 0;
  // The end of the body, called once: OK when it is complete, else why it broke off
  // (ResourceExhausted over the body limit, DeadlineExceeded when the client was too slow,
  // InvalidArgument for malformed chunked coding, Unavailable when the connection closed or
  // the handler stopped reading).
  virtual void Close(Status status) = 0;
};

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // Called on the session's strand for each complete request. Must call reply->Send() once,
  // now or later, from any thread.
  virtual void Handle(Request request, ReplyPtr reply) = 0;
  // Called on the session's strand once a request's header is read, before its body: true to
  // stream the body to a BodySink (HandleStreamed) instead of reading it whole (Handle). A
  // streamed body may be up to HttpServerOptions::max_streamed_body_bytes.
  virtual bool StreamsBody(const Request& header) = 0;
  // Handles a request StreamsBody accepted; `header` has an empty body. Returns the sink the
  // body goes to and answers through `reply` later (usually once the sink is closed); or answers
  // at once and returns nullptr: the body is then not read and the connection closes after the
  // answer.
  virtual std::shared_ptr<BodySink> HandleStreamed(Request header, ReplyPtr reply) = 0;
  // Called on the session's strand once a request's header is read, before anything else (its
  // body is not read yet and 100 Continue not answered): an answer refuses the request now (no
  // such route, a method it does not allow, a missing or wrong token, a refused Content-Type);
  // its body is then never read and the connection closes after the answer. The handler records
  // the answer's metrics itself. nullopt: the request goes on to StreamsBody and Handle.
  virtual std::optional<Response> CheckHeader(const Request& header) = 0;
  // Called for each response the server makes itself (limits, malformed requests, the session
  // cap), for metrics.
  virtual void OnServerResponse(http::status status) = 0;
};

// The limits SIGHUP may change (HttpServer::SetLimits); each request reads them as it begins.
struct HttpLimits {
  uint64_t max_header_bytes = 16384;
  uint64_t max_body_bytes = 16 << 20;
  // For bodies streamed to a BodySink (WARC uploads): they are not held, so the limit is larger.
  uint64_t max_streamed_body_bytes = uint64_t{4} << 30;
};

struct HttpServerOptions {
  std::chrono::milliseconds read_timeout{30000};
  std::chrono::milliseconds write_timeout{30000};
  HttpLimits limits;  // the first limits
  size_t max_sessions = 1024;
  size_t max_pipelined_requests = 8;
  int retry_after_s = 1;
  // --- limits against one client or many holding the server ---
  // Time to receive a whole request header, and how long an idle keep-alive connection stays
  // open (server.header_timeout_ms).
  std::chrono::milliseconds header_timeout{10000};
  // Live connections from one remote address at most; more get 503 and are closed
  // (server.max_sessions_per_client). A connection refused by either cap takes no slot of
  // max_sessions while it is answered and closed.
  size_t max_sessions_per_client = 128;
  // Bytes of request bodies being read or waiting for their answer, across every connection
  // (the Content-Length announced, or limits.max_body_bytes for a chunked body); a request that
  // would go over gets 503 with Retry-After before its body is read
  // (server.max_body_bytes_in_flight). Streamed bodies (WARC) are not held and do not count.
  uint64_t max_body_bytes_in_flight = uint64_t{256} << 20;
  // A streamed body must bring at least min_body_bytes_per_window bytes in each body_rate_window
  // (not counting the time the handler is not taking more); a slower client gets 408 and its
  // upload slot is freed (server.min_body_bytes_per_window, server.body_rate_window_ms).
  uint64_t min_body_bytes_per_window = 16384;
  std::chrono::milliseconds body_rate_window{10000};
  // One info line per response written (daemon/http/access_log.h): the client's address, method,
  // path and query (credential-like parameters redacted), status, body bytes, the time from the
  // complete request to the written response, the request id, User-Agent, Referer and the
  // handler's note. Never another header: no Authorization, no cookie.
  bool access_log = true;
  // text goes through spdlog's default logger, with its time and level; combined and json lines
  // go through the logger named "access" when there is one (daemon/process: the bare line, as
  // log tools read it), else the default.
  AccessLogFormat access_log_format = AccessLogFormat::kText;
};

// Every request gets an id (RequestIdFor: the client's X-Request-Id when sane, else a new one):
// the server sets it as the request's X-Request-Id before the handler sees the request (so that
// the handler may name it in its log lines), sends it back as the response's X-Request-Id, and
// logs it in the access log.
inline constexpr std::string_view kRequestIdHeader = "X-Request-Id";

// The id the server gave `request` (its X-Request-Id, set before any handler sees it): 1 to 128
// bytes of [A-Za-z0-9._-], so that a log line may hold it as it is ("request_id=ID"). Empty for a
// request that did not come through the server.
std::string RequestIdOf(const Request& request);

class HttpServer {
 public:
  // Resolves `host`, binds and listens. InvalidArgument if the host does not resolve;
  // Unavailable naming the address and the OS error if bind or listen fails (port in use,
  // permission). Does not accept until Start().
  static StatusOr<std::unique_ptr<HttpServer>> Create(boost::asio::io_context& ioc,
                                                      const std::string& host, uint16_t port,
                                                      const HttpServerOptions& options,
                                                      HttpHandler* handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound address (the real port when 0 was asked for).
  boost::asio::ip::tcp::endpoint local_endpoint() const;

  void Start();
  // Stops accepting; every session finishes the requests it has read (their responses say
  // Connection: close) and then closes; idle sessions close now. Returns at once; wait with
  // live_sessions().
  void Shutdown();
  // Sessions let in and not yet closed (connections refused by a cap are not counted).
  size_t live_sessions() const;

  // SIGHUP: requests whose header is read from now on get these limits and access log settings.
  void SetLimits(const HttpLimits& limits);
  void set_access_log(bool on);
  void set_access_log_format(AccessLogFormat format);

 private:
  friend class Session;
  struct Core;
  explicit HttpServer(std::shared_ptr<Core> core);
  std::shared_ptr<Core> core_;
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_HTTP_SERVER_H_
