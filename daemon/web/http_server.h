#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/base/error.h"
#include "daemon/base/figures.h"

// Forward-declared so that users of the server do not compile Asio or Beast.
namespace boost::asio {
class io_context;
namespace ssl {
class context;
}  // namespace ssl
}  // namespace boost::asio

namespace vigil {

class HttpLogins;

struct HttpServerSettings {
  // "host:port" or "[v6-host]:port"; the host is a numeric address or "localhost" (no DNS).
  // Port 0 binds an ephemeral port (see HttpServer::port()).
  std::string listen = "127.0.0.1:9842";
  // Connections open at once; beyond it, the one waiting longest for a request is closed to
  // make room, or when all are being answered the new one gets 503 (see HttpServer).
  std::size_t maxConnections = 256;
  // Bound on one request's header and body together; more is answered 431 (header) or 413.
  std::size_t maxRequestBytes = 8 * 1024;
  // From the moment the server waits for a request until the whole request has arrived, so it
  // also bounds how long an idle keep-alive connection stays open. Seconds convert implicitly.
  std::chrono::milliseconds readTimeout{std::chrono::seconds(10)};
  // For writing one response (one part of a stream: a viewer that reads nothing for this long
  // is closed).
  std::chrono::milliseconds writeTimeout{std::chrono::seconds(10)};
  // Streams open at once. Each holds a connection that is being answered (never closed to make
  // room), so they are kept well below maxConnections: at most half of them, whatever this says,
  // so that scrapes and health checks always find places.
  std::size_t maxStreams = 64;
};

// How often a stream with nothing new is asked again.
inline constexpr std::chrono::milliseconds kStreamPoll{100};

struct HttpRequest {
  std::string method;   // as sent, e.g. "GET" (HEAD requests reach GET handlers as "HEAD")
  std::string path;     // the target up to '?', as sent (not percent-decoded), e.g. "/metrics"
  std::string query;    // after '?', as sent, without the '?'; empty if none
  std::string subpath;  // prefix routes: path after the prefix ("front/latest.jpg"); else empty
  std::vector<std::pair<std::string, std::string>> headers;  // in order, names as sent
  std::string body;

  // The first header of that name (case-insensitive), or empty.
  std::string_view header(std::string_view name) const;
};

// A response that goes on for as long as the client reads, such as an MJPEG stream
// (multipart/x-mixed-replace): after the header the server asks for the next part whenever the
// previous one has been written, so a slow client gets fewer parts, never a queue of them.
class HttpStream {
 public:
  virtual ~HttpStream() = default;
  // io thread: the next part's bytes, or nullopt when there is nothing new (asked again
  // kStreamPoll later).
  virtual std::optional<std::string> next() = 0;
  // io thread: false once the stream has ended (its camera is gone): the connection closes.
  virtual bool open() const = 0;
};

struct HttpResponse {
  int status = 200;  // 200..599; anything else is logged and answered 500
  std::string contentType = "text/plain; charset=utf-8";  // empty: no Content-Type header
  // Set: a stream (status 200, `body` unused, no Content-Length, the connection closes when it
  // ends). Streams are limited (HttpServerSettings::maxStreams); beyond, 503.
  std::shared_ptr<HttpStream> stream = nullptr;
  std::string body;
  // Extra headers such as Cache-Control. Content-Length, Connection and Server are the
  // server's own; values with CR or LF are dropped (and logged).
  std::vector<std::pair<std::string, std::string>> headers;
};

// Who may use a route (HttpSecurity says how a login is given).
enum class RouteAccess {
  // A camera's pictures and what describes its view (status, events, the page): a login when logins
  // are configured; without logins, served on a loopback listener only (403 elsewhere, saying how
  // to configure logins), so that opening the listener to the network never gives them away.
  kCameraView,
  // /metrics, /healthz, /readyz: open, unless HttpSecurity::monitoringNeedsLogin.
  kMonitoring,
};

// TLS and logins, from the web configuration (web_config.h); replaceable while serving.
struct HttpSecurity {
  // Null: plain HTTP. Otherwise every connection is TLS; a plain HTTP request is answered 400
  // in clear text (saying to use https://) and closed.
  std::shared_ptr<boost::asio::ssl::context> tls;
  // Null or empty: no logins configured. Else HTTP basic auth (401 with WWW-Authenticate without
  // or with a wrong login; 429 from an address after a burst of failures).
  std::shared_ptr<HttpLogins> logins;
  bool monitoringNeedsLogin = false;
  std::vector<std::pair<std::string, std::string>> headers;  // added to every response
};

// Runs on the io_context thread, must not block (render text from counters, copy a cached
// JPEG). An exception thrown out of it is logged and answered 500.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// Updated on the io_context thread, read from any thread.
struct HttpServerCounters {
  // Responses written on served connections, by class: [0] = 1xx ... [4] = 5xx. Includes the
  // server's own 400/404/405/413/431/500, not the 503 of connections refused at the limit.
  std::array<std::atomic<std::uint64_t>, 5> responses{};
  std::atomic<std::uint64_t> badRequests{0};    // answered 400, 413 or 431
  std::atomic<std::uint64_t> readTimeouts{0};   // closed with a request partly received
  std::atomic<std::uint64_t> handlerErrors{0};  // handlers that threw or gave a bad status
  std::atomic<std::uint64_t> accepted{0};       // connections served (not counting rejected)
  std::atomic<std::uint64_t> rejected{0};       // refused at maxConnections: all being answered
  std::atomic<std::uint64_t> evicted{0};        // closed at maxConnections to make room
  std::atomic<std::uint64_t> open{0};           // connections open now (a gauge)
  std::atomic<std::uint64_t> tlsHandshakeFailures{0};  // incl. plain HTTP sent to a TLS listener
  std::atomic<std::uint64_t> loginFailures{0};         // a wrong user or password (401)
  std::atomic<std::uint64_t> loginsThrottled{0};       // answered 429: too many failures
  // Camera views answered 403 (see RouteAccess).
  std::atomic<std::uint64_t> refusedWithoutLogins{0};
  std::atomic<std::uint64_t> streams{0};         // streams open now (a gauge)
  std::atomic<std::uint64_t> streamsRefused{0};  // answered 503: maxStreams open

  // Its figures, each named once (http_server.cpp) for /metrics (vigil_http_*). Any thread.
  void report(FigureWriter& out) const;
};

// A small HTTP/1.1 server (Boost.Beast) for the daemon's metrics and status pages.
//
// Threads: the caller owns the io_context and runs it on one thread (the daemon's control
// thread); every handler and all socket work run there. route()/routePrefix() are called before
// start(). start(), stop() and the destructor are called on the io_context thread, or while it
// is not running. counters() and port() may be read from any thread after start().
//
// Protocol: HTTP/1.1 and 1.0, keep-alive unless the client says "Connection: close" (or is 1.0
// without keep-alive). HEAD is served by the GET handler with the body left out. Every
// response carries Content-Length (except 204/304, which have no body) and "Server: vigil".
// Unknown path: 404; known path, other method: 405 with Allow; malformed request: 400; header
// over maxRequestBytes: 431; body over what is left of maxRequestBytes: 413. After 400/413/431
// the connection is closed: the server stops sending, then reads and discards what the client
// still sends for up to 2 s (so the client reads the answer instead of a reset). A read timeout
// closes the connection without an answer (Beast closes the socket when the timer fires).
//
// Limit: when maxConnections are open, the connection that has waited longest for a request
// (idle, keep-alive between requests, trickling its header, or lingering after a close) is
// closed without an answer to make room for the new one, so a crowd of idle or slow clients
// cannot keep health checks and scrapes out. Only when every connection is being answered is
// the new one sent a fixed 503 (Connection: close) without waiting and closed at once; a client
// that had already sent its request may see a reset instead. The server holds nothing for it. When
// the process runs out of file descriptors, accepting pauses for 100 ms and retries (logged at most
// every 10 s).
//
// Errors: start() returns them (bad listen string, address in use, permission); nothing throws
// out of the server. Logger "http".
class HttpServer {
 public:
  // `io` is borrowed and must outlive the server and every connection it opened (they end
  // once stop() has run and the io_context has run their cancelled handlers).
  HttpServer(boost::asio::io_context& io, HttpServerSettings settings);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // An exact path ("/metrics"). Registering the same method and path again replaces it. The
  // access is the path's (the last registration's).
  void route(std::string method, std::string path, HttpHandler handler,
             RouteAccess access = RouteAccess::kCameraView);
  // Every path that starts with `prefix` ("/api/cameras/"); the rest is HttpRequest::subpath.
  // An exact route wins over a prefix, a longer prefix over a shorter one.
  void routePrefix(std::string method, std::string prefix, HttpHandler handler,
                   RouteAccess access = RouteAccess::kCameraView);

  // Before or after start(), on the io_context thread: connections accepted from now on use the
  // new TLS context, requests from now on the new logins and headers. A connection already open
  // keeps the TLS it started with.
  void setSecurity(HttpSecurity security);
  // The listener is a loopback address (127.0.0.0/8, ::1): camera views need no login there.
  bool loopback() const;

  // Parses settings.listen, binds and starts accepting. Errors read like
  // "http.listen 127.0.0.1:9842: address already in use" (kUnavailable) or
  // "http.listen 'x': expected host:port" (kInvalidArgument). Starting twice is an error.
  Expected<void> start();
  // Closes the listening socket and every connection; handlers are not called afterwards.
  // Idempotent.
  void stop();

  // The bound port (the ephemeral one for port 0); 0 before a successful start().
  unsigned short port() const;
  // Valid as long as the server; the daemon's metrics read it from any thread.
  const HttpServerCounters& counters() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with the connections, which may outlive the server
};

}  // namespace vigil
