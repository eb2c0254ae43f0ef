#include "daemon/observe/http_server.h"

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <unordered_set>

#include "daemon/log.h"

namespace vigil {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// After an error answer, how long and how much the server keeps reading (and discarding) so the
// client's kernel does not turn our close into a reset that destroys the unread answer.
constexpr std::chrono::seconds kLingerTime{2};
constexpr std::size_t kLingerBytes = 1 << 20;
constexpr std::size_t kLingerChunk = 4096;
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

bool statusHasNoBody(int status) { return status == 204 || status == 304; }

HttpResponse textResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

// Boost 1.74's beast::string_view is boost::string_view, which std::string cannot take directly.
std::string str(beast::string_view s) { return std::string(s.data(), s.size()); }

}  // namespace

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return {};
}

using MethodTable = std::map<std::string, HttpHandler>;

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  class Session;

  Impl(asio::io_context& io, HttpServerSettings settings)
      : settings_(std::move(settings)), acceptor_(io), retryTimer_(io) {}

  void accept();
  void onAccept(const beast::error_code& ec, tcp::socket socket);
  void reject(tcp::socket socket);
  // At the limit: the connection that has waited longest for (the rest of) a request, which
  // makes room for the new one; nullptr when every connection is being answered.
  Session* longestWaiting() const;
  // Finds the handler and runs it: 404, 405 or 500 when there is none or it fails.
  HttpResponse dispatch(HttpRequest& request);
  void count(int status) {
    if (status >= 100 && status < 600) {
      counters_.responses[static_cast<std::size_t>(status / 100 - 1)].fetch_add(
          1, std::memory_order_relaxed);
    }
  }
  // True at most once per kLogInterval per `last`.
  static bool shouldLog(Clock::time_point& last) {
    auto now = Clock::now();
    if (last != Clock::time_point{} && now - last < kLogInterval) return false;
    last = now;
    return true;
  }

  HttpServerSettings settings_;
  tcp::acceptor acceptor_;
  asio::steady_timer retryTimer_;
  std::map<std::string, MethodTable> exact_;
  std::vector<std::pair<std::string, MethodTable>> prefixes_;  // longest first
  std::unordered_set<Session*> sessions_;
  HttpServerCounters counters_;
  std::shared_ptr<spdlog::logger> log_ = logger("http");
  std::string endpointText_;
  unsigned short port_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  Clock::time_point lastLimitLog_{};
  Clock::time_point lastEvictLog_{};
  Clock::time_point lastAcceptErrorLog_{};
};

// One connection: read a request, answer it, repeat while keep-alive holds.
class HttpServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<Impl> server, tcp::socket socket)
      : server_(std::move(server)),
        stream_(std::move(socket)),
        buffer_(server_->settings_.maxRequestBytes) {
    server_->sessions_.insert(this);
    server_->counters_.open.fetch_add(1, std::memory_order_relaxed);
  }
  ~Session() {
    server_->sessions_.erase(this);
    server_->counters_.open.fetch_sub(1, std::memory_order_relaxed);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() { readHeader(); }

  // From stop(): pending operations complete with operation_aborted and release the session.
  void close() { stream_.close(); }

  // Waiting for a request (or the rest of one), or lingering after a close: what may be closed
  // to make room at the connection limit. Since when, for picking the longest waiting.
  bool waiting() const { return waiting_; }
  Clock::time_point waitingSince() const { return waitingSince_; }
  // Closed to make room: its read completes with operation_aborted and releases it.
  void evict() {
    waiting_ = false;
    stream_.close();
  }

 private:
  void readHeader() {
    waiting_ = true;
    waitingSince_ = Clock::now();
    const std::size_t limit = server_->settings_.maxRequestBytes;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(limit, std::numeric_limits<std::uint32_t>::max())));
    parser_->body_limit(limit);
    // One deadline for the whole request, header and body.
    stream_.expires_after(server_->settings_.readTimeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t bytes) {
                              self->onHeader(ec, bytes);
                            });
  }

  void onHeader(beast::error_code ec, std::size_t headerBytes) {
    if (ec) return onReadError(ec);
    if (server_->stopped_) return;
    const std::size_t limit = server_->settings_.maxRequestBytes;
    const std::size_t left = headerBytes < limit ? limit - headerBytes : 0;
    auto length = parser_->content_length();
    if (length && *length > left) return answerError(http::status::payload_too_large);
    if (parser_->is_done()) return handle();
    parser_->body_limit(left);  // chunked bodies are checked as they arrive
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code e, std::size_t) { self->onBody(e); });
  }

  void onBody(beast::error_code ec) {
    if (ec) return onReadError(ec);
    if (server_->stopped_) return;
    handle();
  }

  void onReadError(beast::error_code ec) {
    if (ec == asio::error::operation_aborted || server_->stopped_) return;
    if (ec == http::error::end_of_stream) return shutdown();  // the client closed between requests
    if (ec == beast::error::timeout) {
      // Beast has closed the socket already. An idle keep-alive connection is no error.
      if (parser_->got_some()) server_->counters_.readTimeouts.fetch_add(1);
      return;
    }
    if (ec == http::error::header_limit ||
        (ec == http::error::buffer_overflow && !parser_->is_header_done())) {
      return answerError(http::status::request_header_fields_too_large);
    }
    if (ec == http::error::body_limit || ec == http::error::buffer_overflow) {
      return answerError(http::status::payload_too_large);
    }
    if (ec.category() == make_error_code(http::error::bad_version).category() &&
        ec != http::error::partial_message) {
      return answerError(http::status::bad_request);
    }
    // Resets, a client gone mid-request (partial_message): nobody to answer.
    stream_.close();
  }

  void answerError(http::status status) {
    waiting_ = false;
    server_->counters_.badRequests.fetch_add(1, std::memory_order_relaxed);
    HttpResponse response;
    response.status = static_cast<int>(status);
    response.body = str(http::obsolete_reason(status)) + "\n";
    // What follows a malformed or oversized request cannot be trusted to start a new one.
    write(response, /*headOnly=*/false, /*keepAlive=*/false, /*version=*/11);
  }

  void handle() {
    waiting_ = false;
    const auto& message = parser_->get();
    HttpRequest request;
    request.method = str(message.method_string());
    const std::string target = str(message.target());
    if (target.empty() || target.front() != '/') {
      return answerError(http::status::bad_request);  // absolute-form, '*': not ours to serve
    }
    auto question = target.find('?');
    request.path = target.substr(0, question);
    if (question != std::string::npos) request.query = target.substr(question + 1);
    for (const auto& field : message) {
      request.headers.emplace_back(str(field.name_string()), str(field.value()));
    }
    request.body = message.body();
    const bool headOnly = request.method == "HEAD";
    const bool keepAlive = message.keep_alive();
    const unsigned version = message.version();
    HttpResponse response = server_->dispatch(request);
    write(response, headOnly, keepAlive, version);
  }

  void write(HttpResponse& in, bool headOnly, bool keepAlive, unsigned version) {
    auto& out = response_;
    out = http::response<http::string_body>();
    out.version(version == 10 ? 10 : 11);
    out.result(static_cast<unsigned>(in.status));
    for (auto& [name, value] : in.headers) {
      if (name.find_first_of("\r\n:") != std::string::npos ||
          value.find_first_of("\r\n") != std::string::npos) {
        server_->log_->warn("dropped header '{}': CR, LF or ':' in it", name);
        continue;
      }
      out.insert(name, value);
    }
    out.set(http::field::server, "vigil");
    if (!in.contentType.empty()) out.set(http::field::content_type, in.contentType);
    if (statusHasNoBody(in.status)) {
      out.erase(http::field::content_length);
    } else {
      out.content_length(in.body.size());
      if (!headOnly) out.body() = std::move(in.body);
    }
    out.keep_alive(keepAlive);
    server_->count(in.status);
    close_ = !keepAlive;
    stream_.expires_after(server_->settings_.writeTimeout);
    http::async_write(
        stream_, response_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onWrite(ec); });
  }

  void onWrite(beast::error_code ec) {
    if (ec || server_->stopped_) return stream_.close();
    response_ = {};  // a large body (a JPEG) need not stay while the connection idles
    if (close_) return shutdown();
    readHeader();
  }

  // Sends FIN, then reads and drops what the client still sends (bounded), then closes.
  void shutdown() {
    waiting_ = true;
    waitingSince_ = Clock::now();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTime);
    if (!discard_) discard_ = std::make_unique<char[]>(kLingerChunk);
    linger();
  }

  void linger() {
    stream_.async_read_some(asio::buffer(discard_.get(), kLingerChunk),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->discarded_ += n;
                              if (ec || self->discarded_ > kLingerBytes)
                                return self->stream_.close();
                              self->linger();
                            });
  }

  std::shared_ptr<Impl> server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;  // one per request
  http::response<http::string_body> response_;
  bool close_ = false;
  bool waiting_ = false;
  Clock::time_point waitingSince_{};
  std::unique_ptr<char[]> discard_;  // only for lingering closes
  std::size_t discarded_ = 0;
};

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
  std::make_shared<Session>(shared_from_this(), std::move(socket))->start();
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
  // client gets the close alone.
  beast::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(asio::buffer(serviceUnavailable()), ignored);
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
  auto rejected = counters_.rejected.fetch_add(1, std::memory_order_relaxed) + 1;
  if (shouldLog(lastLimitLog_)) {
    log_->warn("{} connections open (the limit): answering new ones 503; {} refused so far",
               settings_.maxConnections, rejected);
  }
}

HttpResponse HttpServer::Impl::dispatch(HttpRequest& request) {
  const MethodTable* table = nullptr;
  if (auto it = exact_.find(request.path); it != exact_.end()) {
    table = &it->second;
  } else {
    for (const auto& [prefix, methods] : prefixes_) {
      if (request.path.starts_with(prefix)) {
        table = &methods;
        request.subpath = request.path.substr(prefix.size());
        break;
      }
    }
  }
  if (!table) return textResponse(404, "not found\n");
  auto handler = table->find(request.method);
  if (handler == table->end() && request.method == "HEAD") handler = table->find("GET");
  if (handler == table->end()) {
    std::string allow;
    for (const auto& [method, unused] : *table) {
      allow += allow.empty() ? method : ", " + method;
      if (method == "GET" && !table->contains("HEAD")) allow += ", HEAD";
    }
    return HttpResponse{
        .status = 405, .body = "method not allowed\n", .headers = {{"Allow", std::move(allow)}}};
  }
  try {
    HttpResponse response = handler->second(request);
    if (response.status < 200 || response.status > 599) {
      counters_.handlerErrors.fetch_add(1, std::memory_order_relaxed);
      log_->error("{} {}: the handler gave status {}", request.method, request.path,
                  response.status);
      return textResponse(500, "internal error\n");
    }
    return response;
  } catch (const std::exception& e) {
    counters_.handlerErrors.fetch_add(1, std::memory_order_relaxed);
    log_->error("{} {}: the handler threw: {}", request.method, request.path, e.what());
  } catch (...) {
    counters_.handlerErrors.fetch_add(1, std::memory_order_relaxed);
    log_->error("{} {}: the handler threw a non-exception", request.method, request.path);
  }
  return textResponse(500, "internal error\n");
}

HttpServer::HttpServer(asio::io_context& io, HttpServerSettings settings)
    : impl_(std::make_shared<Impl>(io, std::move(settings))) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::route(std::string method, std::string path, HttpHandler handler) {
  impl_->exact_[std::move(path)][std::move(method)] = std::move(handler);
}

void HttpServer::routePrefix(std::string method, std::string prefix, HttpHandler handler) {
  auto& prefixes = impl_->prefixes_;
  auto it = std::find_if(prefixes.begin(), prefixes.end(),
                         [&](const auto& entry) { return entry.first == prefix; });
  if (it == prefixes.end()) {
    it = prefixes.emplace(prefixes.end(), std::move(prefix), MethodTable{});
  }
  it->second[std::move(method)] = std::move(handler);
  std::stable_sort(prefixes.begin(), prefixes.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
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
  impl.endpointText_ = local.address().is_v6()
                           ? fmt::format("[{}]:{}", local.address().to_string(), impl.port_)
                           : fmt::format("{}:{}", local.address().to_string(), impl.port_);
  impl.started_ = true;
  impl.log_->info("serving http on {}", impl.endpointText_);
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
}

unsigned short HttpServer::port() const { return impl_->port_; }

const HttpServerCounters& HttpServer::counters() const { return impl_->counters_; }

}  // namespace vigil
