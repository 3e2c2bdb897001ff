// The HTTP server: a listener that accepts on its own strand and a session per connection,
// after boostorg/beast example/advanced/server (Boost 1.74).
#include "daemon/http/http_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <charconv>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/http/access_log.h"

namespace shingled::daemon {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

namespace {
const beast::string_view kRequestIdField(kRequestIdHeader.data(), kRequestIdHeader.size());
}  // namespace

struct HttpServer::Core : std::enable_shared_from_this<HttpServer::Core> {
  Core(net::io_context& io, const HttpServerOptions& opts, HttpHandler* h)
      : ioc(io),
        options(opts),
        handler(h),
        acceptor(net::make_strand(io)),
        backoff_timer(acceptor.get_executor()),
        max_header_bytes(opts.limits.max_header_bytes),
        max_body_bytes(opts.limits.max_body_bytes),
        max_streamed_body_bytes(opts.limits.max_streamed_body_bytes),
        access_log(opts.access_log),
        access_log_format(opts.access_log_format) {}

  void DoAccept();
  void OnAccept(beast::error_code ec, tcp::socket socket);

  net::io_context& ioc;
  const HttpServerOptions options;
  HttpHandler* const handler;
  tcp::acceptor acceptor;
  net::steady_timer backoff_timer;  // on the acceptor's strand
  std::chrono::milliseconds backoff{0};
  std::atomic<bool> stopping{false};
  // What SIGHUP changes (SetLimits, set_access_log); read as each request begins (a Slot keeps
  // the access log setting its request began with).
  std::atomic<uint64_t> max_header_bytes, max_body_bytes, max_streamed_body_bytes;
  std::atomic<bool> access_log;
  std::atomic<AccessLogFormat> access_log_format;

  // Live sessions let in (not those refused at accept, which close by themselves), for the cap
  // and for Shutdown(). State below is protected by `mu`.
  std::mutex mu;
  uint64_t next_session_id = 0;
  std::unordered_map<uint64_t, std::weak_ptr<Session>> sessions;
  // Live sessions by the client's address (server.max_sessions_per_client).
  std::unordered_map<std::string, size_t> sessions_per_client;

  // Bytes of request bodies reserved by the sessions reading or holding them
  // (server.max_body_bytes_in_flight).
  std::atomic<uint64_t> body_bytes_in_flight{0};
};

// One connection. Every member is touched only on the session's strand (stream_'s executor).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, std::shared_ptr<HttpServer::Core> core, uint64_t id)
      : stream_(std::move(socket)), core_(std::move(core)), id_(id) {
    beast::error_code ec;
    const tcp::endpoint peer = stream_.socket().remote_endpoint(ec);
    client_ = ec ? "-" : peer.address().to_string();
  }
  ~Session() {
    ReleaseBody(reserved_);
    for (Slot& slot : slots_) ReleaseBody(slot.body_bytes);
    std::lock_guard<std::mutex> lock(core_->mu);
    core_->sessions.erase(id_);
    auto it = core_->sessions_per_client.find(client_);
    if (it != core_->sessions_per_client.end() && --it->second == 0) {
      core_->sessions_per_client.erase(it);
    }
  }
  // The peer's address, as the access log shows it; "-" when unknown.
  const std::string& client() const { return client_; }

  void Start() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&Session::DoRead, shared_from_this()));
  }
  // Above the session cap (or the client's): answer 503 at once and close, without reading.
  void StartRejected(std::string message) {
    net::dispatch(stream_.get_executor(), [self = shared_from_this(), m = std::move(message)] {
      self->closing_ = true;
      self->Enqueue(ErrorResponse(http::status::service_unavailable, "unavailable", m,
                                  self->core_->options.retry_after_s),
                    11);
    });
  }
  void Stop() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->stopping_ = true;
      self->closing_ = true;
      // An idle read is cancelled; requests already read are still answered.
      // OnReadError then closes if nothing is left to answer.
      if (self->reading_) {
        self->CancelIo();
      } else if (self->slots_.empty() && !self->writing_) {
        self->Close();
      }
    });
  }
  // From a Reply, on any thread.
  void Deliver(uint64_t seq, Response response, std::string log_note) {
    net::post(stream_.get_executor(), [self = shared_from_this(), seq, r = std::move(response),
                                       note = std::move(log_note)]() mutable {
      self->OnResponse(seq, std::move(r), std::move(note));
    });
  }

 private:
  using Clock = std::chrono::steady_clock;

  struct Slot {
    unsigned version = 11;
    bool keep_alive = true;
    std::optional<Response> response;
    // For the access log: the request line's method and target, User-Agent and Referer, when
    // the request was read; its id; and the handler's note.
    std::string method, target, user_agent, referer, request_id;
    Clock::time_point start;
    std::chrono::system_clock::time_point wall_start;
    std::string note;
    // Of server.max_body_bytes_in_flight, released when the answer comes.
    uint64_t body_bytes = 0;
    // The access log settings when the request was read (SIGHUP may change them before the
    // answer).
    bool log_access = false;
    AccessLogFormat log_format = AccessLogFormat::kText;
    // A HEAD request: its answer is the handler's (as for a GET) without the body, which
    // FinishSlot drops once.
    bool head = false;
    bool body_dropped = false;
  };
  // A slot for an answer that has no request yet.
  Slot NewSlot() const {
    Slot slot;
    slot.log_access = core_->access_log.load(std::memory_order_relaxed);
    slot.log_format = core_->access_log_format.load(std::memory_order_relaxed);
    slot.start = Clock::now();
    slot.wall_start = std::chrono::system_clock::now();
    return slot;
  }
  // Takes what the access log shows of a request whose header was read (OnHeader has set its
  // X-Request-Id by then).
  template <typename Fields>
  static void Describe(const http::request_header<Fields>& req, Slot* slot) {
    slot->method = std::string(req.method_string());
    slot->head = req.method() == http::verb::head;
    slot->target = std::string(ToStd(req.target()));
    slot->user_agent = std::string(ToStd(req[http::field::user_agent]));
    slot->referer = std::string(ToStd(req[http::field::referer]));
    slot->request_id = std::string(ToStd(req[kRequestIdField]));
  }
  // A slot for the request `req` read just now.
  template <typename Message>
  Slot SlotFor(const Message& req) const {
    Slot slot = NewSlot();
    slot.version = req.version();
    slot.keep_alive = req.keep_alive();
    Describe(req.base(), &slot);
    return slot;
  }

  void DoRead() {
    if (closing_ || closed_ || streaming_ ||
        slots_.size() >= core_->options.max_pipelined_requests) {
      reading_ = false;
      return;
    }
    reading_ = true;
    streamed_ = false;
    parser_.emplace();  // a fresh parser per request
    header_limit_ = core_->max_header_bytes.load();
    parser_->header_limit(static_cast<uint32_t>(header_limit_));
    // The limit depends on the route (OnHeader): none while the header is read.
    parser_->body_limit(std::numeric_limits<uint64_t>::max());
    read_start_ = Clock::now();
    // A client waiting for its answers sends nothing meanwhile, and is not idle: the next
    // request's deadline starts once they are written (OnWrite), not while a slow one is made
    // (the soak's answers slower than read_timeout_ms lost their connection). A write
    // in progress keeps its own deadline.
    if (slots_.empty()) {
      stream_.expires_after(core_->options.read_timeout);
    } else if (!writing_) {
      stream_.expires_never();
    }
    ArmHeaderTimer();
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Session::OnHeader, shared_from_this()));
  }

  void OnHeader(beast::error_code ec, size_t) {
    StopHeaderTimer();
    if (ec) return OnReadError(ec);
    // Read while answers were pending: the request's time starts with its header.
    if (!slots_.empty()) read_start_ = Clock::now();
    // The request's id from here on: the handler, the response and the access log see the same.
    parser_->get().set(kRequestIdField, RequestIdFor(ToStd(parser_->get()[kRequestIdField])));
    const Request& req = parser_->get();
    request_version_ = req.version();
    // RFC 9112 6.1: a request's transfer coding must end with chunked, or its length is unknown.
    if (req.count(http::field::transfer_encoding) > 0 && !parser_->chunked()) {
      return Refuse(
          ErrorResponse(
              http::status::bad_request, "bad_request",
              "Transfer-Encoding " +
                  std::string(ToStd(req[http::field::transfer_encoding])).substr(0, 100) +
                  " is not accepted: a request's last transfer coding must be chunked (RFC 9112)"),
          /*counted=*/false, /*close=*/true);
    }
    // Route, method, token and Content-Type before the body is read or 100 Continue answered.
    if (std::optional<Response> refused = core_->handler->CheckHeader(req)) {
      return Refuse(std::move(*refused), /*counted=*/true);
    }
    expects_continue_ =
        beast::iequals(req[http::field::expect], "100-continue") && !parser_->is_done();
    streamed_ = core_->handler->StreamsBody(req);
    const uint64_t limit = body_limit_ =
        streamed_ ? core_->max_streamed_body_bytes.load() : core_->max_body_bytes.load();
    // The header's Content-Length, which the parser has already validated. (Read from the
    // field rather than through parser::content_length(), whose boost::optional trips GCC 12's
    // -Wmaybe-uninitialized in the sanitizer build.)
    if (req.has_content_length()) {
      const auto field = req[http::field::content_length];
      const std::string_view text(field.data(), field.size());
      uint64_t length = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), length);
      if (error == std::errc::result_out_of_range ||
          (error == std::errc() && end == text.data() + text.size() && length > limit)) {
        return OnReadError(http::error::body_limit);  // 413 before reading the body
      }
    }
    parser_->body_limit(limit);
    if (!streamed_) {
      if (!ReserveBody(req, limit)) {
        return Refuse(ErrorResponse(http::status::service_unavailable, "unavailable",
                                    "request bodies being read are over the limit of " +
                                        std::to_string(core_->options.max_body_bytes_in_flight) +
                                        " bytes (server.max_body_bytes_in_flight); retry later",
                                    core_->options.retry_after_s),
                      /*counted=*/false);
      }
      return ContinueThen(0, &Session::ReadBody);
    }
    if (StartStream()) ContinueThen(1, &Session::ReadChunk);
  }

  // curl and others wait a second for "100 Continue" before sending a large body; answer it
  // when nothing else is being written (`own_slots`: the request's own slot, if it has one yet),
  // else let the client's own timer send the body. Then `next`.
  void ContinueThen(size_t own_slots, void (Session::*next)()) {
    if (expects_continue_ && slots_.size() == own_slots && !writing_) {
      continue_.emplace(http::status::continue_, request_version_);
      writing_ = true;
      stream_.expires_after(core_->options.write_timeout);
      return http::async_write(stream_, *continue_,
                               [self = shared_from_this(), next](beast::error_code wec, size_t) {
                                 self->writing_ = false;
                                 if (wec) return self->Close();
                                 ((*self).*next)();
                               });
    }
    (this->*next)();
  }

  // Cancels the pending read or write. The socket may be closed already (a deadline of the
  // stream's own closed it, and its handler has not run yet): no exception then.
  void CancelIo() {
    beast::error_code ignored;
    stream_.socket().cancel(ignored);
  }

  // --- the header timeout (server.header_timeout_ms) ---
  // A header must arrive within header_timeout of the connection having nothing left to answer;
  // an idle keep-alive connection is closed after it. Not while answers are pending: a client
  // waiting for a slow answer sends nothing meanwhile (OnWrite arms it again once they are
  // written). A timer of its own, since the stream's deadline of a pending read cannot change.
  void ArmHeaderTimer() {
    // At most read_timeout_ms: the stream's deadline of a read started while answers were
    // pending is none (DoRead), and a pending read's deadline cannot change.
    header_timer_.expires_after(
        std::min(core_->options.header_timeout, core_->options.read_timeout));
    // A weak pointer: a timer does not keep a closed session (and its client's count) alive.
    header_timer_.async_wait([weak = weak_from_this(), gen = ++header_gen_](beast::error_code ec) {
      auto self = weak.lock();
      if (!ec && self && gen == self->header_gen_) self->OnHeaderTimeout();
    });
  }
  void StopHeaderTimer() {
    ++header_gen_;
    header_timer_.cancel();
  }
  void OnHeaderTimeout() {
    if (!reading_ || closed_ || !slots_.empty() || writing_ || !stream_.socket().is_open()) return;
    spdlog::debug("session {}: header timeout", id_);
    core_->handler->OnServerResponse(http::status::request_timeout);
    CancelIo();  // OnHeader, then OnReadError, closes
  }

  // --- bodies in flight across connections (server.max_body_bytes_in_flight) ---
  // Reserves the body `req` announces (a chunked one: `limit`, all it may be); false when that
  // would pass the limit.
  bool ReserveBody(const Request& req, uint64_t limit) {
    uint64_t bytes = 0;
    if (parser_->chunked()) {
      bytes = limit;
    } else if (req.has_content_length()) {
      const auto field = req[http::field::content_length];
      std::from_chars(field.data(), field.data() + field.size(), bytes);
    }
    if (bytes == 0) return true;
    const uint64_t before = core_->body_bytes_in_flight.fetch_add(bytes);
    if (before + bytes > core_->options.max_body_bytes_in_flight) {
      core_->body_bytes_in_flight.fetch_sub(bytes);
      return false;
    }
    reserved_ = bytes;
    return true;
  }
  void ReleaseBody(uint64_t& bytes) {
    if (bytes > 0) core_->body_bytes_in_flight.fetch_sub(bytes);
    bytes = 0;
  }

  // Refuses the request whose header was just read: answers `response` without reading the
  // body, and closes unless there was no body (nor `close`). `counted`: the handler has
  // recorded it in the metrics already.
  void Refuse(Response response, bool counted, bool close = false) {
    reading_ = false;
    if (!close && parser_->is_done()) {
      // No body: answered as any request, and the connection stays open.
      if (!counted) core_->handler->OnServerResponse(response.result());
      slots_.push_back(SlotFor(parser_->get()));
      slots_.back().response = std::move(response);
      if (!slots_.back().keep_alive) closing_ = true;
      MaybeWrite();
      return DoRead();
    }
    closing_ = true;
    Enqueue(std::move(response), request_version_, !counted);
  }

  void ReadBody() {
    // The whole request within read_timeout_ms of its start.
    if (!writing_) stream_.expires_at(read_start_ + core_->options.read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  // --- streamed bodies (BodySink) ---
  // The request gets its slot and goes to the handler now; its body follows piece by piece
  // through a buffer_body parser. Reading the next request waits until the body has ended.
  // Returns false when the handler answered at once (the body is then not read).
  bool StartStream() {
    reading_ = false;
    stream_parser_.emplace(std::move(*parser_));
    parser_.reset();
    Request header(stream_parser_->get().base());
    const uint64_t seq = first_seq_ + slots_.size();
    slots_.push_back(SlotFor(header));
    if (!header.keep_alive()) closing_ = true;
    streaming_ = true;
    sink_ = core_->handler->HandleStreamed(std::move(header),
                                           std::make_shared<Reply>(shared_from_this(), seq));
    if (sink_ == nullptr) {
      streaming_ = false;
      stream_parser_.reset();
      closing_ = true;  // the unread body is drained and dropped by Close()
      return false;
    }
    chunk_.resize(kChunkBytes);
    return true;
  }

  void ReadChunk() {
    if (!streaming_ || closed_) return;
    if (stream_parser_->is_done()) return EndStream(OkStatus());  // an empty body
    http::buffer_body::value_type& body = stream_parser_->get().body();
    body.data = chunk_.data();
    body.size = chunk_.size();
    chunk_pending_ = true;
    StartRateWindow();
    stream_.expires_after(core_->options.read_timeout);
    // read_some, not read: what has arrived goes on now rather than when the buffer is full, so
    // a slow upload is read as it comes.
    http::async_read_some(stream_, buffer_, *stream_parser_,
                          beast::bind_front_handler(&Session::OnChunk, shared_from_this()));
  }

  void OnChunk(beast::error_code ec, size_t) {
    chunk_pending_ = false;
    if (ec == http::error::need_buffer) ec = {};  // the chunk buffer is full: pass it on
    const size_t got = chunk_.size() - stream_parser_->get().body().size;
    if (ec) {
      // What arrived before the error still goes in (the records before a body limit).
      if (got > 0) sink_->Write(std::string_view(chunk_.data(), got), [] {});
      return OnStreamError(ec);
    }
    window_bytes_ += got;
    BodySink::Next next = BodySink::Next::kMore;
    if (got > 0) {
      auto resume = [weak = weak_from_this()] {
        if (auto self = weak.lock()) {
          net::post(self->stream_.get_executor(), [self] { self->ReadChunk(); });
        }
      };
      next = sink_->Write(std::string_view(chunk_.data(), got), std::move(resume));
    }
    if (stream_parser_->is_done()) return EndStream(OkStatus());
    if (next == BodySink::Next::kStop) {
      closing_ = true;
      return EndStream(UnavailableError("the handler stopped reading the body"));
    }
    if (next == BodySink::Next::kMore) ReadChunk();
    // kWait: the sink's `resume` calls ReadChunk. The time it waits is ours, not the client's:
    // the rate window starts again when reading does.
    if (next == BodySink::Next::kWait) StopRateWindow();
  }

  // --- the minimum rate of a streamed body (server.min_body_bytes_per_window) ---
  // The read deadline is re-armed per piece, so a client sending a byte now and then would hold
  // its upload slot for ever: each window of body_rate_window_ms must bring enough bytes.
  void StartRateWindow() {
    if (window_running_) return;
    window_running_ = true;
    window_bytes_ = 0;
    rate_timer_.expires_after(core_->options.body_rate_window);
    rate_timer_.async_wait([weak = weak_from_this(), gen = ++window_gen_](beast::error_code ec) {
      auto self = weak.lock();
      if (!ec && self && gen == self->window_gen_) self->OnRateWindowEnd();
    });
  }
  void StopRateWindow() {
    window_running_ = false;
    ++window_gen_;
    rate_timer_.cancel();
  }
  void OnRateWindowEnd() {
    window_running_ = false;
    if (!streaming_ || closed_ || !chunk_pending_) return;
    if (window_bytes_ >= core_->options.min_body_bytes_per_window) return StartRateWindow();
    rate_failed_ = true;
    CancelIo();  // OnChunk, then OnStreamError, answers 408 through the sink
  }

  void OnStreamError(beast::error_code ec) {
    closing_ = true;
    const uint64_t limit = body_limit_;
    Status status;
    if (rate_failed_) {
      core_->handler->OnServerResponse(http::status::request_timeout);
      status = DeadlineExceededError(
          "the body arrived slower than " +
          std::to_string(core_->options.min_body_bytes_per_window) + " bytes in " +
          std::to_string(core_->options.body_rate_window.count()) +
          " ms (server.min_body_bytes_per_window, server.body_rate_window_ms)");
    } else if (ec == beast::error::timeout) {
      // basic_stream closed the socket: the slow client is cut off.
      closed_ = true;
      core_->handler->OnServerResponse(http::status::request_timeout);
      status = DeadlineExceededError("no body data for " +
                                     std::to_string(core_->options.read_timeout.count()) + " ms");
    } else if (ec == http::error::body_limit) {
      status = ResourceExhaustedError("request body is over the limit of " + std::to_string(limit) +
                                      " bytes (limits.max_warc_body_bytes)");
    } else if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
               ec == net::error::eof) {
      // The client closed its sending side (a half-close, or all of it) before the body's end:
      // the body it sent is cut short, which is its error, as malformed chunked coding is. A
      // half-closed client still reads the answer.
      status = InvalidArgumentError(
          "the request body was cut short: the client closed its side of the connection before "
          "the body's end (its last chunk, or Content-Length bytes)");
    } else if (ec.category() == http::make_error_code(http::error::bad_chunk).category()) {
      status = InvalidArgumentError("malformed HTTP body: " + ec.message());
    } else if (ec == net::error::operation_aborted) {
      status = UnavailableError("the server stopped reading the body");
    } else {
      status = UnavailableError("the connection closed before the body ended: " + ec.message());
    }
    EndStream(std::move(status));
  }

  void EndStream(Status status) {
    StopRateWindow();
    rate_failed_ = false;
    streaming_ = false;
    stream_parser_.reset();
    std::shared_ptr<BodySink> sink = std::move(sink_);
    std::vector<char>().swap(chunk_);
    sink->Close(std::move(status));
    if (closed_) return;
    if (closing_) {
      if (slots_.empty() && !writing_) Close();
      return;
    }
    DoRead();  // the next request, while this one is answered
  }

  void OnRead(beast::error_code ec, size_t) {
    if (ec) return OnReadError(ec);
    reading_ = false;
    Request req = parser_->release();
    const uint64_t seq = first_seq_ + slots_.size();
    slots_.push_back(SlotFor(req));
    slots_.back().body_bytes = std::exchange(reserved_, 0);
    if (!req.keep_alive()) closing_ = true;
    core_->handler->Handle(std::move(req), std::make_shared<Reply>(shared_from_this(), seq));
    DoRead();  // the next pipelined request, if any, while this one is answered
  }

  // " request_id=ID" of the request being read, for the session's log lines; empty while its
  // header is not read (it has no id yet).
  std::string RequestIdBeingRead() const {
    if (!parser_ || !parser_->is_header_done()) return {};
    return " request_id=" + RequestIdOf(parser_->get());
  }

  void OnReadError(beast::error_code ec) {
    reading_ = false;
    closing_ = true;
    ReleaseBody(reserved_);
    if (ec == http::error::end_of_stream || ec == net::error::operation_aborted) {
      if (slots_.empty() && !writing_) Close();
      return;
    }
    if (ec == beast::error::timeout) {
      // basic_stream closed the socket: the slow client is cut off.
      spdlog::debug("session {}: read timeout{}", id_, RequestIdBeingRead());
      closed_ = true;
      core_->handler->OnServerResponse(http::status::request_timeout);
      return;
    }
    const unsigned version = parser_ ? parser_->get().version() : 11;
    if (ec == http::error::body_limit) {
      Enqueue(ErrorResponse(http::status::payload_too_large, "payload_too_large",
                            "request body is over the limit of " + std::to_string(body_limit_) +
                                (streamed_ ? " bytes (limits.max_warc_body_bytes)"
                                           : " bytes (limits.max_body_bytes)")),
              version);
    } else if (ec == http::error::header_limit) {
      Enqueue(
          ErrorResponse(http::status::request_header_fields_too_large, "header_fields_too_large",
                        "request line and headers are over the limit of " +
                            std::to_string(header_limit_) + " bytes (limits.max_header_bytes)"),
          version);
    } else if (ec.category() == http::make_error_code(http::error::bad_method).category()) {
      Enqueue(ErrorResponse(http::status::bad_request, "bad_request",
                            "malformed HTTP request: " + ec.message()),
              version);
    } else {
      spdlog::debug("session {}: read: {}{}", id_, ec.message(), RequestIdBeingRead());
      if (slots_.empty() && !writing_) Close();
    }
  }

  // Queues a response the server makes itself; the connection closes after it. `count`: in the
  // handler's metrics.
  void Enqueue(Response response, unsigned version, bool count = true) {
    if (count) core_->handler->OnServerResponse(response.result());
    Slot slot = NewSlot();
    slot.version = version;
    slot.keep_alive = false;
    slot.response = std::move(response);
    slot.method = slot.target = "-";
    if (parser_ && parser_->is_header_done()) {
      Describe(parser_->get().base(), &slot);
    } else {
      slot.request_id = RequestIdFor({});
    }
    slots_.push_back(std::move(slot));
    FinishSlot(slots_.back());
    MaybeWrite();
  }

  void FinishSlot(Slot& slot) {
    slot.response->version(slot.version);
    slot.response->keep_alive(slot.keep_alive && !stopping_ && !closing_);
    slot.response->set(kRequestIdField, slot.request_id);
    if (slot.body_dropped) return;  // Content-Length stays the GET's
    slot.response->prepare_payload();
    if (slot.head) {
      // RFC 9110 9.3.2: the header a GET would get, Content-Length included, and no body.
      const size_t length = slot.response->body().size();
      slot.response->body().clear();
      slot.response->content_length(length);
      slot.body_dropped = true;
    }
  }

  void OnResponse(uint64_t seq, Response response, std::string note) {
    if (closed_ || seq < first_seq_ || seq - first_seq_ >= slots_.size()) return;
    Slot& slot = slots_[seq - first_seq_];
    ReleaseBody(slot.body_bytes);  // the handler is done with the body
    slot.response = std::move(response);
    slot.note = std::move(note);
    // Answered before its streamed body ended: the rest of the body is not read.
    if (streaming_ && seq - first_seq_ == slots_.size() - 1) closing_ = true;
    MaybeWrite();
  }

  void MaybeWrite() {
    if (writing_ || closed_ || slots_.empty() || !slots_.front().response) return;
    FinishSlot(slots_.front());
    writing_ = true;
    stream_.expires_after(core_->options.write_timeout);
    http::async_write(stream_, *slots_.front().response,
                      beast::bind_front_handler(&Session::OnWrite, shared_from_this()));
  }

  void OnWrite(beast::error_code ec, size_t) {
    writing_ = false;
    if (slots_.front().log_access) LogAccess(slots_.front(), ec);
    if (ec) {
      spdlog::debug("session {}: write: {} request_id={}", id_, ec.message(),
                    slots_.front().request_id);
    }
    const bool keep_alive = slots_.front().response->keep_alive();
    slots_.pop_front();
    ++first_seq_;
    if (ec) return Close();
    if (!keep_alive) closing_ = true;
    if (closing_) {
      if (slots_.empty()) {
        if (reading_ || chunk_pending_) {
          CancelIo();  // OnReadError or OnStreamError then closes
        } else if (streaming_) {
          EndStream(UnavailableError("the request was answered before its body ended"));
        } else {
          Close();
        }
        return;
      }
    } else if (!reading_) {
      DoRead();  // reading paused at the pipelining bound
    } else if (slots_.empty()) {
      // Every answer is written: the connection is idle from now.
      read_start_ = Clock::now();
      stream_.expires_after(core_->options.read_timeout);
      ArmHeaderTimer();
    }
    MaybeWrite();
    // The next answer is still being made: no deadline until it is written (DoRead).
    if (!writing_ && !slots_.empty()) stream_.expires_never();
  }

  void LogAccess(const Slot& slot, beast::error_code ec) const {
    if (!spdlog::should_log(spdlog::level::info)) return;
    AccessRecord record;
    record.time = slot.wall_start;
    record.client = client_;
    record.method = slot.method;
    record.target = slot.target;
    record.version = slot.version;
    record.status = slot.response->result_int();
    record.bytes = slot.response->body().size();
    record.seconds = std::chrono::duration<double>(Clock::now() - slot.start).count();
    record.user_agent = slot.user_agent;
    record.referer = slot.referer;
    record.request_id = slot.request_id;
    record.note = slot.note;
    const std::string error = ec ? ec.message() : std::string();
    record.error = error;
    const std::string line = FormatAccessLine(record, slot.log_format);
    if (slot.log_format != AccessLogFormat::kText) {
      if (auto access = spdlog::get("access")) return access->info("{}", line);
    }
    spdlog::info("{}", line);
  }

  // Closes after sending everything: shut down our side, then drain what the client still
  // sends for a moment, so that the kernel does not reset the connection (and lose our last
  // response) because of unread data.
  void Close() {
    if (closed_) return;
    closed_ = true;
    StopHeaderTimer();
    StopRateWindow();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(std::chrono::seconds(1));
    Drain();
  }
  void Drain() {
    stream_.async_read_some(net::buffer(drain_buf_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (!ec && self->drained_ < (1u << 20)) return self->Drain();
                              beast::error_code ignored;
                              self->stream_.socket().close(ignored);
                            });
  }

  beast::tcp_stream stream_;
  const std::shared_ptr<HttpServer::Core> core_;
  const uint64_t id_;
  std::string client_;  // the peer's address, for the access log
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  // A streamed body: read in pieces of kChunkBytes into chunk_ and passed to sink_.
  static constexpr size_t kChunkBytes = 64 << 10;
  std::optional<http::request_parser<http::buffer_body>> stream_parser_;
  std::shared_ptr<BodySink> sink_;
  std::vector<char> chunk_;
  bool streamed_ = false;          // the request being read streams its body
  bool streaming_ = false;         // a streamed body is being read (or waits for the sink)
  bool chunk_pending_ = false;     // a read of a piece of it is under way
  bool expects_continue_ = false;  // of the request being read
  uint64_t header_limit_ = 0;      // of the request being read
  uint64_t body_limit_ = 0;        // of the request being read
  unsigned request_version_ = 11;
  std::optional<http::response<http::empty_body>> continue_;
  std::deque<Slot> slots_;  // responses in request order; front is the next to write
  uint64_t first_seq_ = 0;  // sequence number of slots_.front()
  bool reading_ = false, writing_ = false;
  bool closing_ = false;  // read no more requests
  bool stopping_ = false;
  bool closed_ = false;
  std::array<char, 4096> drain_buf_{};
  size_t drained_ = 0;

  // --- limits against one client holding the server ---
  Clock::time_point read_start_;  // when reading the request being read began
  uint64_t reserved_ = 0;         // its body's share of server.max_body_bytes_in_flight
  // The rate window of a streamed body: on the strand, like the rest.
  net::steady_timer rate_timer_{stream_.get_executor()};
  net::steady_timer header_timer_{stream_.get_executor()};
  uint64_t header_gen_ = 0;  // a timer completion of an older header read is ignored
  bool window_running_ = false;
  bool rate_failed_ = false;  // the window ended short: the body read was cancelled
  uint64_t window_bytes_ = 0;
  uint64_t window_gen_ = 0;  // a timer completion of an older window is ignored
};

std::string RequestIdOf(const Request& request) {
  return std::string(ToStd(request[kRequestIdField]));
}

Reply::Reply(std::shared_ptr<Session> session, uint64_t seq)
    : session_(std::move(session)), seq_(seq) {}

Reply::~Reply() {
  if (!sent_) {
    session_->Deliver(seq_,
                      ErrorResponse(http::status::service_unavailable, "unavailable",
                                    "the server is shutting down", 1),
                      {});
  }
}

void Reply::Send(Response response, std::string log_note) {
  if (sent_) return;
  sent_ = true;
  session_->Deliver(seq_, std::move(response), std::move(log_note));
}

const std::string& Reply::client() const { return session_->client(); }

void HttpServer::Core::DoAccept() {
  acceptor.async_accept(net::make_strand(ioc),
                        beast::bind_front_handler(&Core::OnAccept, shared_from_this()));
}

void HttpServer::Core::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (stopping) return;
  if (ec) {
    // Out of file descriptors or memory: back off instead of spinning on the error.
    backoff =
        std::clamp(backoff * 2, std::chrono::milliseconds(50), std::chrono::milliseconds(2000));
    spdlog::warn("accept: {}; retrying in {} ms", ec.message(), backoff.count());
    backoff_timer.expires_after(backoff);
    backoff_timer.async_wait([self = shared_from_this()](beast::error_code tec) {
      if (!tec && !self->stopping) self->DoAccept();
    });
    return;
  }
  backoff = std::chrono::milliseconds(0);
  std::shared_ptr<Session> session;
  std::string reject;
  {
    std::lock_guard<std::mutex> lock(mu);
    const uint64_t id = next_session_id++;
    session = std::make_shared<Session>(std::move(socket), shared_from_this(), id);
    // Counted before the session is, so that the session's destructor can take it back.
    const size_t from_client = sessions_per_client[session->client()]++;
    // The client's own cap first, and a refused connection never takes a slot of the global cap:
    // it is answered and closed outside it, so that one client reconnecting as fast as it can
    // (each refused connection living until its 503 is written and the socket drained) cannot
    // fill the server's slots and lock everyone else out.
    if (from_client >= options.max_sessions_per_client) {
      reject = "too many connections from " + session->client() + ": the limit is " +
               std::to_string(options.max_sessions_per_client) +
               " (server.max_sessions_per_client)";
    } else if (sessions.size() >= options.max_sessions) {
      reject = "too many connections (server.max_sessions)";
    } else {
      sessions.emplace(id, session);
    }
  }
  if (!reject.empty()) {
    session->StartRejected(std::move(reject));
  } else {
    session->Start();
  }
  DoAccept();
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(net::io_context& ioc,
                                                         const std::string& host, uint16_t port,
                                                         const HttpServerOptions& options,
                                                         HttpHandler* handler) {
  beast::error_code ec;
  tcp::resolver resolver(ioc);
  const auto results = resolver.resolve(
      host, std::to_string(port), tcp::resolver::numeric_service | tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return InvalidArgumentError("cannot resolve listen host \"" + host + "\": " + ec.message());
  }
  const tcp::endpoint endpoint = results.begin()->endpoint();
  auto core = std::make_shared<Core>(ioc, options, handler);
  const std::string where = endpoint.address().to_string() + " port " + std::to_string(port);
  auto fail = [&](const char* what) {
    return UnavailableError(std::string(what) + " " + where + ": " + ec.message());
  };
  if (core->acceptor.open(endpoint.protocol(), ec)) return fail("cannot open a socket for");
  if (core->acceptor.set_option(net::socket_base::reuse_address(true), ec))
    return fail("cannot set SO_REUSEADDR on");
  if (endpoint.address().is_v6()) {
    // Listen on exactly the address asked for; "[::]" does not also take IPv4 unless the host's
    // default says so.
    core->acceptor.set_option(net::ip::v6_only(true), ec);
  }
  if (core->acceptor.bind(endpoint, ec)) return fail("cannot bind to");
  if (core->acceptor.listen(net::socket_base::max_listen_connections, ec))
    return fail("cannot listen on");
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(core)));
}

HttpServer::HttpServer(std::shared_ptr<Core> core) : core_(std::move(core)) {}

HttpServer::~HttpServer() { Shutdown(); }

tcp::endpoint HttpServer::local_endpoint() const {
  beast::error_code ec;
  return core_->acceptor.local_endpoint(ec);
}

void HttpServer::Start() {
  net::dispatch(core_->acceptor.get_executor(), [core = core_] { core->DoAccept(); });
}

void HttpServer::Shutdown() {
  if (core_->stopping.exchange(true)) return;
  net::dispatch(core_->acceptor.get_executor(), [core = core_] {
    beast::error_code ec;
    core->acceptor.close(ec);
    core->backoff_timer.cancel();
  });
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard<std::mutex> lock(core_->mu);
    for (auto& [id, weak] : core_->sessions) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) s->Stop();
}

void HttpServer::SetLimits(const HttpLimits& limits) {
  core_->max_header_bytes = limits.max_header_bytes;
  core_->max_body_bytes = limits.max_body_bytes;
  core_->max_streamed_body_bytes = limits.max_streamed_body_bytes;
}

void HttpServer::set_access_log(bool on) { core_->access_log = on; }

void HttpServer::set_access_log_format(AccessLogFormat format) {
  core_->access_log_format = format;
}

size_t HttpServer::live_sessions() const {
  std::lock_guard<std::mutex> lock(core_->mu);
  return core_->sessions.size();
}

}  // namespace shingled::daemon
