// HttpServer with TLS and logins (HttpSecurity), spoken to by a real OpenSSL client in-process.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
// clang-format on

#include <future>
#include <optional>
#include <thread>

#include "daemon/config/web_config.h"
#include "daemon/web/http_logins.h"
#include "daemon/web/http_server.h"
#include "tests/temp_dir.h"
#include "tests/test_pki.h"
#include "tests/wait.h"

namespace vigil {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

int connectTo(unsigned short port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

struct SecureReply {
  int status = 0;
  std::string head;  // the header block, as sent
  std::string body;
};

// Parses "HTTP/1.1 401 ...\r\n...\r\n\r\nbody".
std::optional<SecureReply> parseReply(const std::string& raw) {
  auto end = raw.find("\r\n\r\n");
  if (!raw.starts_with("HTTP/1.") || raw.size() < 12 || end == std::string::npos) {
    return std::nullopt;
  }
  return SecureReply{std::stoi(raw.substr(9, 3)), raw.substr(0, end), raw.substr(end + 4)};
}

// One GET over TLS with Connection: close, verifying the server against `caFile` as localhost.
std::optional<SecureReply> tlsGet(unsigned short port, const std::string& caFile,
                                  const std::string& path, const std::string& headers = "") {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_load_verify_locations(ctx, caFile.c_str(), nullptr);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL* ssl = SSL_new(ctx);
  const int fd = connectTo(port);
  std::string raw;
  SSL_set_fd(ssl, fd);
  // SSL_set_tlsext_host_name, without its old-style cast.
  SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
           const_cast<char*>("localhost"));
  SSL_set1_host(ssl, "localhost");
  if (fd >= 0 && SSL_connect(ssl) == 1) {
    const std::string request =
        "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + headers + "\r\n";
    SSL_write(ssl, request.data(), static_cast<int>(request.size()));
    char chunk[4096];
    int n = 0;
    while ((n = SSL_read(ssl, chunk, sizeof chunk)) > 0)
      raw.append(chunk, static_cast<std::size_t>(n));
  }
  ERR_clear_error();
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  if (fd >= 0) ::close(fd);
  return parseReply(raw);
}

// One GET in clear text; the whole answer up to the server's close.
std::optional<SecureReply> plainGet(unsigned short port, const std::string& path,
                                    const std::string& headers = "") {
  const int fd = connectTo(port);
  if (fd < 0) return std::nullopt;
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + headers + "\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string raw;
  char chunk[4096];
  ssize_t n = 0;
  while ((n = ::recv(fd, chunk, sizeof chunk, 0)) > 0)
    raw.append(chunk, static_cast<std::size_t>(n));
  ::close(fd);
  return parseReply(raw);
}

HttpSecurity secured(std::shared_ptr<asio::ssl::context> tls,
                     std::shared_ptr<HttpLogins> logins = nullptr,
                     bool monitoringNeedsLogin = false,
                     std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpSecurity s;
  s.tls = std::move(tls);
  s.logins = std::move(logins);
  s.monitoringNeedsLogin = monitoringNeedsLogin;
  s.headers = std::move(headers);
  return s;
}

int statusOf(const std::optional<SecureReply>& reply) { return reply ? reply->status : 0; }

// Closed by the server (EOF or reset) within the socket's 5 s receive timeout.
bool closedByPeer(int fd) {
  char c;
  const ssize_t n = ::recv(fd, &c, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

class HttpSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(pki_.generate()); }

  void start(HttpSecurity security, HttpServerSettings settings = {},
             std::string listen = "127.0.0.1:0") {
    settings.listen = std::move(listen);
    server_ = std::make_unique<HttpServer>(io_, settings);
    server_->route("GET", "/camera", [](const HttpRequest&) {
      return HttpResponse{.body = "a picture\n", .headers = {}};
    });
    server_->route(
        "GET", "/metrics",
        [](const HttpRequest&) { return HttpResponse{.body = "up 1\n", .headers = {}}; },
        RouteAccess::kMonitoring);
    server_->setSecurity(std::move(security));
    auto started = server_->start();
    ASSERT_TRUE(started) << started.error().message;
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (thread_.joinable()) {
      asio::post(io_, [this] { server_->stop(); });
      work_.reset();
      thread_.join();
    }
    server_.reset();
  }

  std::shared_ptr<asio::ssl::context> tls() {
    auto web = parseWebConfig("tls_server_config: {cert_file: " + pki_.serverCert() +
                                  ", key_file: " + pki_.serverKey() + "}\n",
                              dir_.path() / "web.yml");
    EXPECT_TRUE(web) << web.error().message;
    return web ? web->tlsContext : nullptr;
  }

  static std::shared_ptr<HttpLogins> logins(const std::string& user, const std::string& password) {
    auto hash = bcryptHash(password, 10);
    EXPECT_TRUE(hash);
    return std::make_shared<HttpLogins>(std::map<std::string, std::string>{{user, *hash}});
  }

  unsigned short port() const { return server_->port(); }
  const HttpServerCounters& counters() const { return server_->counters(); }

  TempDir dir_;
  testing::TestPki pki_{dir_.path() / "pki"};
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

// "Basic " + base64("prometheus:right") and ("prometheus:wrong").
constexpr const char* kRight = "Authorization: Basic cHJvbWV0aGV1czpyaWdodA==\r\n";
constexpr const char* kWrong = "Authorization: Basic cHJvbWV0aGV1czp3cm9uZw==\r\n";

TEST_F(HttpSecurityTest, OverTlsRequestsAreServedAndPlainHttpIsToldToUseHttps) {
  start(secured(tls(), nullptr, false, {{"X-Frame-Options", "deny"}}));
  auto r = tlsGet(port(), pki_.caFile(), "/camera");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "a picture\n");
  EXPECT_NE(r->head.find("X-Frame-Options: deny"), std::string::npos) << r->head;
  auto plain = plainGet(port(), "/camera");
  ASSERT_TRUE(plain) << "a plain request gets a plain answer";
  EXPECT_EQ(plain->status, 400);
  EXPECT_NE(plain->body.find("use https://"), std::string::npos);
  EXPECT_EQ(counters().tlsHandshakeFailures.load(), 1U);
}

TEST_F(HttpSecurityTest, AHandshakeThatNeverFinishesIsClosedAtTheReadTimeoutOrToMakeRoom) {
  HttpServerSettings settings;
  settings.readTimeout = 500ms;
  settings.maxConnections = 2;
  start(secured(tls()), settings);
  // A TLS record header and then nothing: the handshake waits for the rest.
  const int stalled = connectTo(port());
  ASSERT_GE(stalled, 0);
  ASSERT_EQ(::send(stalled, "\x16\x03\x01\x02", 4, MSG_NOSIGNAL), 4);
  EXPECT_TRUE(closedByPeer(stalled)) << "closed at the read timeout";
  ::close(stalled);
  EXPECT_TRUE(testing::waitUntil([&] { return counters().tlsHandshakeFailures.load() == 1; }));

  // Two silent connections fill the server; a real client still gets in.
  const int a = connectTo(port());
  const int b = connectTo(port());
  ASSERT_TRUE(testing::waitUntil([&] { return counters().open.load() == 2; }));
  auto r = tlsGet(port(), pki_.caFile(), "/camera");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_GE(counters().evicted.load(), 1U);
  ::close(a);
  ::close(b);
}

TEST_F(HttpSecurityTest, ALoginIsAskedForCheckedRememberedAndThrottledAfterABurstOfFailures) {
  start(secured(tls(), logins("prometheus", "right")));
  const std::string ca = pki_.caFile();
  auto none = tlsGet(port(), ca, "/camera");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_NE(none->head.find("WWW-Authenticate: Basic realm=\"vigil\""), std::string::npos);
  EXPECT_EQ(statusOf(tlsGet(port(), ca, "/metrics")), 200) << "monitoring needs no login";
  EXPECT_EQ(statusOf(tlsGet(port(), ca, "/camera", kRight)), 200);
  for (int i = 0; i < LoginThrottle::kBurst; ++i) {
    EXPECT_EQ(statusOf(tlsGet(port(), ca, "/camera", kWrong)), 401) << i;
  }
  auto throttled = tlsGet(port(), ca, "/camera", kWrong);
  ASSERT_TRUE(throttled);
  EXPECT_EQ(throttled->status, 429);
  EXPECT_NE(throttled->head.find("Retry-After: "), std::string::npos);
  EXPECT_EQ(statusOf(tlsGet(port(), ca, "/camera", kRight)), 200)
      << "a login verified before is remembered, throttle or not";
  EXPECT_EQ(counters().loginFailures.load(), static_cast<std::uint64_t>(LoginThrottle::kBurst));
  EXPECT_EQ(counters().loginsThrottled.load(), 1U);
}

TEST_F(HttpSecurityTest, MonitoringCanNeedALoginToo) {
  start(secured(nullptr, logins("prometheus", "right"), true));
  EXPECT_EQ(statusOf(plainGet(port(), "/metrics")), 401);
  EXPECT_EQ(statusOf(plainGet(port(), "/metrics", kRight)), 200);
}

TEST_F(HttpSecurityTest, OffLoopbackWithoutLoginsCameraViewsAre403AndMonitoringIsServed) {
  start(HttpSecurity{}, {}, "0.0.0.0:0");
  ASSERT_FALSE(server_->loopback());
  auto refused = plainGet(port(), "/camera");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  EXPECT_NE(refused->body.find("basic_auth_users"), std::string::npos) << refused->body;
  EXPECT_EQ(statusOf(plainGet(port(), "/metrics")), 200);
  EXPECT_EQ(counters().refusedWithoutLogins.load(), 1U);
}

TEST_F(HttpSecurityTest, NewLoginsApplyToTheNextRequest) {
  start(secured(nullptr, logins("prometheus", "right")));
  EXPECT_EQ(statusOf(plainGet(port(), "/camera", kRight)), 200);
  std::promise<void> replaced;
  asio::post(io_, [&] {
    server_->setSecurity(secured(nullptr, logins("prometheus", "wrong")));
    replaced.set_value();
  });
  replaced.get_future().wait();
  EXPECT_EQ(statusOf(plainGet(port(), "/camera", kRight)), 401) << "the old password, even cached";
  EXPECT_EQ(statusOf(plainGet(port(), "/camera", kWrong)), 200);
}

}  // namespace
}  // namespace vigil
