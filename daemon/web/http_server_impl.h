#pragma once

// The inside of HttpServer, shared by http_server.cpp (accepting, routing, who may see what) and
// http_session.cpp (one connection). Nothing else includes it.

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
// clang-format on

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "daemon/base/log.h"
#include "daemon/base/log_rate_limit.h"
#include "daemon/web/http_logins.h"
#include "daemon/web/http_routes.h"
#include "daemon/web/http_server.h"
#include "daemon/web/http_stream.h"
#include "daemon/web/http_transport.h"

namespace vigil {

namespace http_internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Logins being checked (bcrypt, one at a time on the login thread) at most; more are answered 503.
constexpr int kMaxPendingLoginChecks = 4;

HttpResponse textResponse(int status, std::string body);
// Boost 1.74's beast::string_view is boost::string_view, which std::string cannot take directly.
inline std::string str(beast::string_view s) { return std::string(s.data(), s.size()); }

}  // namespace http_internal

// What the server decides about a request before its handler runs.
struct HttpAdmission {
  enum class Kind { kServe, kAnswer, kCheckLogin };
  Kind kind = Kind::kServe;
  HttpResponse answer;  // kAnswer
  // kCheckLogin: the credential to verify with these logins, and the header to remember.
  std::optional<HttpLogins::Credential> credential;
  std::shared_ptr<HttpLogins> logins;
  std::string authorization;
};

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  class Session;
  using Clock = http_internal::Clock;

  Impl(boost::asio::io_context& io, HttpServerSettings settings)
      : settings_(std::move(settings)), acceptor_(io), retryTimer_(io) {}

  void accept();
  void onAccept(const boost::beast::error_code& ec, http_internal::tcp::socket socket);
  void reject(http_internal::tcp::socket socket);
  // At the limit: the connection that has waited longest for (the rest of) a request, which
  // makes room for the new one; nullptr when every connection is being answered.
  Session* longestWaiting() const;
  // Who may see it (http_access.cpp): serve, answer 401/403/429/503, or check the login first.
  HttpAdmission admit(const HttpRequest& request, const HttpRoute* route, const std::string& peer);
  // The login check's outcome, on the io thread: counted, remembered or logged; 401 when wrong.
  std::optional<HttpResponse> loginChecked(const HttpAdmission& admission, const std::string& peer,
                                           bool ok);
  void count(int status) {
    if (status >= 100 && status < 600) {
      counters_.responses[static_cast<std::size_t>(status / 100 - 1)].fetch_add(
          1, std::memory_order_relaxed);
    }
  }
  // True at most once per 10 s per `last`.
  static bool shouldLog(Clock::time_point& last);
  // A TLS handshake with `peer` failed for `reason` (plain HTTP on the TLS port included):
  // counted, and a warning with what to check at most once a minute per address.
  void tlsHandshakeFailed(const std::string& peer, const std::string& reason);
  // A stream opens (http_stream.cpp): counted, or, at the limit of open streams, the 503 that
  // answers it instead. streamClosed(): it ended.
  std::optional<HttpResponse> openStream();
  void streamClosed();

  HttpServerSettings settings_;
  http_internal::tcp::acceptor acceptor_;
  boost::asio::steady_timer retryTimer_;
  std::unordered_set<Session*> sessions_;
  HttpServerCounters counters_;
  HttpRoutes routes_{counters_.handlerErrors};
  HttpSecurity security_;
  LoginThrottle throttle_;
  LogRateLimit handshakeLog_;  // failed TLS handshakes: a warning per client address a minute
  std::unique_ptr<boost::asio::thread_pool> loginThread_;  // bcrypt off the io thread
  int pendingLoginChecks_ = 0;
  std::size_t streamsOpen_ = 0;
  std::shared_ptr<spdlog::logger> log_ = logger("http");
  std::string endpointText_;
  unsigned short port_ = 0;
  bool loopback_ = false;
  bool started_ = false;
  bool stopped_ = false;
  Clock::time_point lastLimitLog_{};
  Clock::time_point lastEvictLog_{};
  Clock::time_point lastAcceptErrorLog_{};
};

// One connection: (for TLS, tell TLS from plain HTTP and shake hands,) read a request, decide who
// may see it, answer it, repeat while keep-alive holds.
class HttpServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<Impl> server, http_internal::tcp::socket socket,
          std::shared_ptr<boost::asio::ssl::context> tls);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start();
  // From stop(): pending operations complete with operation_aborted and release the session.
  void close() {
    transport_.lowest().close();
    if (streamWriter_) streamWriter_->cancel();
  }
  // Waiting for a request (or the rest of one, or a TLS handshake), or lingering after a close:
  // what may be closed to make room at the connection limit. Since when, to pick the longest.
  bool waiting() const { return waiting_; }
  Clock::time_point waitingSince() const { return waitingSince_; }
  // Closed to make room: its read completes with operation_aborted and releases it.
  void evict() {
    waiting_ = false;
    transport_.lowest().close();
  }

 private:
  void waitFromNow() {
    waiting_ = true;
    waitingSince_ = Clock::now();
  }

  void onFirstBytes(boost::beast::error_code ec);
  void onHandshake(boost::beast::error_code ec, std::size_t used);
  void readHeader();
  void onHeader(boost::beast::error_code ec, std::size_t headerBytes);
  void onBody(boost::beast::error_code ec);
  void onReadError(boost::beast::error_code ec);
  void answerError(http_internal::http::status status);
  void handle();
  void checkLogin(HttpAdmission admission);
  void respond(HttpResponse response);
  // A stream's header, then its parts as they come (http_stream.cpp), or 503 at the limit.
  void startStream(HttpResponse response);
  void write(HttpResponse& in, bool headOnly, bool keepAlive, unsigned version);
  void onWrite(boost::beast::error_code ec);
  // Ends the connection (HttpTransport::shutdown); a lingering one may be closed to make room.
  void shutdown();

  std::shared_ptr<Impl> server_;
  HttpTransport transport_;
  boost::beast::flat_buffer buffer_;
  std::optional<http_internal::http::request_parser<http_internal::http::string_body>> parser_;
  HttpRequest request_;  // kept while its login is checked
  bool headOnly_ = false;
  bool keepAlive_ = false;
  unsigned version_ = 11;
  http_internal::http::response<http_internal::http::string_body> response_;
  bool close_ = false;
  bool waiting_ = false;
  Clock::time_point waitingSince_{};
  std::optional<HttpStreamWriter> streamWriter_;  // a stream being served
};

}  // namespace vigil
