#include "daemon/web/http_server.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <limits>

#include "daemon/web/http_server_impl.h"

namespace vigil {

using namespace http_internal;

namespace {

// Out of file descriptors: accepting again at once would spin on the same error.
constexpr std::chrono::milliseconds kAcceptRetry{100};
// Repeated warnings (connection limit, accept errors) are logged at most this often.
constexpr std::chrono::seconds kLogInterval{10};

const std::string& serviceUnavailable() {
  static const std::string text = [] {
    std::string body = "too many connections\n";
    return fmt::format(
        "HTTP/1.1 503 Service Unavailable\r\nServer: vigil\r\n"
        "Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n"
        "Retry-After: 1\r\nConnection: close\r\n\r\n{}",
        body.size(), body);
  }();
  return text;
}

// strerror-style messages start upper-case; ours continue a sentence.
std::string lowerFirst(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

Expected<tcp::endpoint> parseListen(const std::string& listen) {
  auto bad = [&](std::string_view why) {
    return makeError(ErrorCode::kInvalidArgument, "http.listen '{}': {}", listen, why);
  };
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) return bad("expected host:port");
  std::string host = listen.substr(0, colon);
  std::string_view portText = std::string_view(listen).substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return bad("an IPv6 address goes in brackets, e.g. [::1]:9842");
  }
  if (host.empty()) return bad("expected host:port");
  if (host == "localhost") host = "127.0.0.1";
  unsigned port = 0;
  auto [end, ec] = std::from_chars(portText.data(), portText.data() + portText.size(), port);
  if (portText.empty() || ec != std::errc() || end != portText.data() + portText.size() ||
      port > std::numeric_limits<unsigned short>::max()) {
    return bad("the port must be a number from 0 to 65535");
  }
  boost::system::error_code addressError;
  auto address = asio::ip::make_address(host, addressError);
  if (addressError) return bad("the host must be a numeric address or localhost");
  return tcp::endpoint(address, static_cast<unsigned short>(port));
}

}  // namespace

HttpResponse http_internal::textResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return {};
}

void HttpServer::Impl::accept() {
  acceptor_.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    self->onAccept(ec, std::move(socket));
  });
}

void HttpServer::Impl::onAccept(const beast::error_code& ec, tcp::socket socket) {
  if (stopped_ || ec == asio::error::operation_aborted) return;
  if (ec) {
    const bool exhausted = ec == asio::error::no_descriptors || ec == asio::error::no_memory ||
                           ec == asio::error::no_buffer_space ||
                           ec.value() == ENFILE;  // asio has no name for the system-wide limit
    if (shouldLog(lastAcceptErrorLog_)) {
      log_->warn("accept on {}: {}{}", endpointText_, ec.message(),
                 exhausted ? "; retrying in 100 ms" : "");
    }
    if (exhausted) {
      retryTimer_.expires_after(kAcceptRetry);
      retryTimer_.async_wait([self = shared_from_this()](beast::error_code e) {
        if (!e && !self->stopped_) self->accept();
      });
      return;
    }
    return accept();  // e.g. a connection reset before we took it
  }
  if (counters_.open.load(std::memory_order_relaxed) >= settings_.maxConnections) {
    // Full: the connection that has waited longest for a request makes room, so that a crowd
    // of idle or trickling connections cannot keep /healthz and /metrics out. Only when every
    // connection is being answered is the new one refused.
    Session* victim = longestWaiting();
    if (victim == nullptr) {
      reject(std::move(socket));
      return accept();
    }
    victim->evict();
    const auto evicted = counters_.evicted.fetch_add(1, std::memory_order_relaxed) + 1;
    if (shouldLog(lastEvictLog_)) {
      log_->warn(
          "{} connections open (the limit): closing the one that waited longest for a "
          "request to make room; {} closed so far",
          settings_.maxConnections, evicted);
    }
  }
  counters_.accepted.fetch_add(1, std::memory_order_relaxed);
  std::make_shared<Session>(shared_from_this(), std::move(socket), security_.tls)->start();
  accept();
}

HttpServer::Impl::Session* HttpServer::Impl::longestWaiting() const {
  Session* oldest = nullptr;
  for (Session* session : sessions_) {
    if (session->waiting() &&
        (oldest == nullptr || session->waitingSince() < oldest->waitingSince())) {
      oldest = session;
    }
  }
  return oldest;
}

void HttpServer::Impl::reject(tcp::socket socket) {
  // Best effort and without waiting: the answer fits the socket's send buffer; if not, the
  // client gets the close alone (always, on a TLS listener: a TLS client cannot read it).
  beast::error_code ignored;
  socket.non_blocking(true, ignored);
  if (!security_.tls) socket.write_some(asio::buffer(serviceUnavailable()), ignored);
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
  auto rejected = counters_.rejected.fetch_add(1, std::memory_order_relaxed) + 1;
  if (shouldLog(lastLimitLog_)) {
    log_->warn("{} connections open (the limit): answering new ones 503; {} refused so far",
               settings_.maxConnections, rejected);
  }
}

bool HttpServer::Impl::shouldLog(Clock::time_point& last) {
  auto now = Clock::now();
  if (last != Clock::time_point{} && now - last < kLogInterval) return false;
  last = now;
  return true;
}

HttpServer::HttpServer(asio::io_context& io, HttpServerSettings settings)
    : impl_(std::make_shared<Impl>(io, std::move(settings))) {
  // OpenSSL initializes itself on first use (config file, error state). Done here, on the thread
  // that makes the server, rather than lazily on the io thread in the middle of a request: LSan
  // otherwise reports that one-time state as a leak (http_request_fuzzer found it on the first
  // login remembered); the TLS and login code then finds it ready.
  OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, nullptr);
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::route(std::string method, std::string path, HttpHandler handler,
                       RouteAccess access) {
  impl_->routes_.add(std::move(method), std::move(path), std::move(handler), access);
}

void HttpServer::routePrefix(std::string method, std::string prefix, HttpHandler handler,
                             RouteAccess access) {
  impl_->routes_.addPrefix(std::move(method), std::move(prefix), std::move(handler), access);
}

Expected<void> HttpServer::start() {
  Impl& impl = *impl_;
  const std::string& listen = impl.settings_.listen;
  if (impl.started_) {
    return makeError(ErrorCode::kInvalidArgument, "http.listen {}: already started", listen);
  }
  if (impl.settings_.maxConnections == 0 || impl.settings_.maxRequestBytes == 0) {
    return makeError(ErrorCode::kInvalidArgument,
                     "http: maxConnections and maxRequestBytes must be positive");
  }
  auto endpoint = parseListen(listen);
  if (!endpoint) return tl::unexpected(endpoint.error());

  beast::error_code ec;
  auto fail = [&](std::string_view step) {
    beast::error_code ignored;
    impl.acceptor_.close(ignored);
    return makeError(ErrorCode::kUnavailable, "http.listen {}: {}{}", listen, step,
                     lowerFirst(ec.message()));
  };
  impl.acceptor_.open(endpoint->protocol(), ec);
  if (ec) return fail("socket: ");
  // A restart must not wait out the previous process's TIME_WAIT connections; Linux still
  // refuses a second listener on the same port.
  impl.acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (ec) return fail("SO_REUSEADDR: ");
  impl.acceptor_.bind(*endpoint, ec);
  if (ec) return fail("");
  impl.acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen: ");
  auto local = impl.acceptor_.local_endpoint(ec);
  if (ec) return fail("");
  impl.port_ = local.port();
  impl.loopback_ = local.address().is_loopback();
  impl.endpointText_ = local.address().is_v6()
                           ? fmt::format("[{}]:{}", local.address().to_string(), impl.port_)
                           : fmt::format("{}:{}", local.address().to_string(), impl.port_);
  impl.started_ = true;
  impl.log_->info("serving {} on {}", impl.security_.tls ? "https" : "http", impl.endpointText_);
  impl.accept();
  return {};
}

void HttpServer::stop() {
  Impl& impl = *impl_;
  if (impl.stopped_) return;
  impl.stopped_ = true;
  beast::error_code ignored;
  impl.acceptor_.close(ignored);
  impl.retryTimer_.cancel();
  // close() does not destroy the session (its pending handler holds it), but copy anyway so
  // that the loop never depends on that.
  std::vector<Impl::Session*> sessions(impl.sessions_.begin(), impl.sessions_.end());
  for (Impl::Session* session : sessions) session->close();
  // A login being checked finishes first (one bcrypt); its answer is not sent.
  if (impl.loginThread_) {
    impl.loginThread_->stop();
    impl.loginThread_->join();
  }
}

void HttpServer::setSecurity(HttpSecurity security) {
  Impl& impl = *impl_;
  if (security.logins && !security.logins->empty() && !impl.loginThread_) {
    impl.loginThread_ = std::make_unique<asio::thread_pool>(1);
  }
  impl.security_ = std::move(security);
}

bool HttpServer::loopback() const { return impl_->loopback_; }

unsigned short HttpServer::port() const { return impl_->port_; }

const HttpServerCounters& HttpServer::counters() const { return impl_->counters_; }

namespace {

constexpr FigureName kResponses{"responses", "vigil_http_responses_total",
                                "HTTP responses by status class", "code"};
constexpr std::array<std::string_view, 5> kResponseClasses{"1xx", "2xx", "3xx", "4xx", "5xx"};
constexpr FigureName kBadRequests{"bad_requests", "vigil_http_bad_requests_total",
                                  "Malformed or oversized requests (400, 413, 431)"};
constexpr FigureName kReadTimeouts{"read_timeouts", "vigil_http_read_timeouts_total",
                                   "Connections closed with a request half received"};
constexpr FigureName kRejected{
    "rejected", "vigil_http_connections_rejected_total",
    "Connections refused with 503 at the connection limit (all being answered)"};
constexpr FigureName kEvicted{
    "evicted", "vigil_http_connections_evicted_total",
    "Connections waiting longest for a request, closed at the limit to make room"};
constexpr FigureName kOpen{"open", "vigil_http_connections_open", "HTTP connections open now"};
constexpr FigureName kTlsHandshakeFailures{
    "tls_handshake_failures", "vigil_http_tls_handshake_failures_total",
    "TLS handshakes that failed, plain HTTP sent to the TLS listener included"};
constexpr FigureName kLoginFailures{"login_failures", "vigil_http_login_failures_total",
                                    "Requests with a wrong or malformed login (answered 401)"};
constexpr FigureName kLoginsThrottled{
    "logins_throttled", "vigil_http_logins_throttled_total",
    "Login attempts answered 429: too many failures from that address"};
constexpr FigureName kRefusedWithoutLogins{
    "camera_views_refused", "vigil_http_camera_views_refused_total",
    "Camera pictures and pages answered 403: not on loopback and no logins configured"};
constexpr FigureName kStreams{"streams", "vigil_http_streams_open", "Live MJPEG streams open now"};
constexpr FigureName kStreamsRefused{
    "streams_refused", "vigil_http_streams_refused_total",
    "Live streams answered 503: the most that may be open at once are"};

}  // namespace

void HttpServerCounters::report(FigureWriter& out) const {
  for (std::size_t i = 0; i < responses.size(); ++i) {
    out.count(kResponses, kResponseClasses[i], responses[i].load());
  }
  out.count(kBadRequests, {}, badRequests.load());
  out.count(kReadTimeouts, {}, readTimeouts.load());
  out.count(kRejected, {}, rejected.load());
  out.count(kEvicted, {}, evicted.load());
  out.level(kOpen, {}, static_cast<double>(open.load()));
  out.count(kTlsHandshakeFailures, {}, tlsHandshakeFailures.load());
  out.count(kLoginFailures, {}, loginFailures.load());
  out.count(kLoginsThrottled, {}, loginsThrottled.load());
  out.count(kRefusedWithoutLogins, {}, refusedWithoutLogins.load());
  out.level(kStreams, {}, static_cast<double>(streams.load()));
  out.count(kStreamsRefused, {}, streamsRefused.load());
}

}  // namespace vigil
