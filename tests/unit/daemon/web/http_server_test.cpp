#include "daemon/web/http_server.h"

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
// clang-format on

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tests/wait.h"

namespace vigil {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using HttpTestClock = std::chrono::steady_clock;

// A blocking client socket on 127.0.0.1 with a receive timeout, so that a test that goes wrong
// fails instead of hanging.
class Client {
 public:
  // `family` AF_INET6 connects to ::1 instead.
  explicit Client(unsigned short port, std::chrono::milliseconds receiveTimeout = 5s,
                  int family = AF_INET) {
    fd_ = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(receiveTimeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>(receiveTimeout.count() % 1000 * 1000);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (family == AF_INET6) {
      sockaddr_in6 address{};
      address.sin6_family = AF_INET6;
      address.sin6_port = htons(port);
      address.sin6_addr = in6addr_loopback;
      connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
      return;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  bool send(std::string_view data) {
    while (!data.empty()) {
      auto n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // Reads one more chunk into pending_; false on EOF, error or timeout (see closedBy()).
  bool receiveMore() {
    char chunk[4096];
    auto n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n > 0) {
      pending_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
    lastReceive_ = n == 0 ? "eof" : (errno == EAGAIN ? "timeout" : "error");
    return false;
  }

  struct Response {
    int status = 0;
    std::map<std::string, std::string> headers;  // names lower-case
    std::string body;
    std::string header(const std::string& name) const {
      auto it = headers.find(name);
      return it == headers.end() ? "" : it->second;
    }
  };

  // One response; for HEAD pass headOnly (the Content-Length then describes the GET body).
  std::optional<Response> readResponse(bool headOnly = false) {
    std::size_t end;
    while ((end = pending_.find("\r\n\r\n")) == std::string::npos) {
      if (!receiveMore()) return std::nullopt;
    }
    Response r;
    std::string head = pending_.substr(0, end);
    pending_.erase(0, end + 4);
    auto lineEnd = head.find("\r\n");
    std::string statusLine = head.substr(0, lineEnd);
    if (statusLine.rfind("HTTP/1.", 0) != 0 || statusLine.size() < 12) return std::nullopt;
    r.status = std::stoi(statusLine.substr(9, 3));
    std::size_t pos = lineEnd == std::string::npos ? head.size() : lineEnd + 2;
    while (pos < head.size()) {
      auto next = head.find("\r\n", pos);
      if (next == std::string::npos) next = head.size();
      std::string line = head.substr(pos, next - pos);
      auto colon = line.find(':');
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      r.headers[name] = value;
      pos = next + 2;
    }
    if (!headOnly) {
      std::size_t length =
          std::stoul(r.header("content-length").empty() ? "0" : r.header("content-length"));
      while (pending_.size() < length) {
        if (!receiveMore()) return std::nullopt;
      }
      r.body = pending_.substr(0, length);
      pending_.erase(0, length);
    }
    return r;
  }

  // True when the server closed the connection (EOF or reset) with nothing more to read.
  bool closedByServer() {
    while (receiveMore()) {
    }
    return lastReceive_ == "eof" || lastReceive_ == "error";
  }

  const std::string& pending() const { return pending_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
  std::string lastReceive_;
};

HttpServerSettings listenOn(std::string listen) {
  HttpServerSettings settings;
  settings.listen = std::move(listen);
  return settings;
}

std::string get(std::string_view path, std::string_view extra = "") {
  return fmt::format("GET {} HTTP/1.1\r\nHost: test\r\n{}\r\n", path, extra);
}

class HttpServerTest : public ::testing::Test {
 protected:
  // Builds the server with the test routes; call run() to start it.
  void create(HttpServerSettings settings = {}, std::string listen = "127.0.0.1:0") {
    settings.listen = std::move(listen);
    server_ = std::make_unique<HttpServer>(io_, settings);
    server_->route("GET", "/hello", [](const HttpRequest&) {
      return HttpResponse{.body = "hello\n", .headers = {{"Cache-Control", "no-store"}}};
    });
    server_->route("GET", "/throw", [](const HttpRequest&) -> HttpResponse {
      throw std::runtime_error("handler failed on purpose");
    });
    server_->routePrefix("GET", "/api/cameras/", [](const HttpRequest& request) {
      HttpResponse response;
      response.contentType = "application/json";
      response.body = request.subpath + "|" + request.query;
      return response;
    });
  }

  void run() {
    auto started = server_->start();
    ASSERT_TRUE(started) << started.error().message;
    ASSERT_NE(server_->port(), 0);
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

  unsigned short port() const { return server_->port(); }
  const HttpServerCounters& counters() const { return server_->counters(); }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

// The server's counters as /metrics shows them (HttpServerCounters::report): responses by
// class under the label "code", connections and streams open as levels.
TEST(HttpServerCountersTest, ReportsEachCounterByItsName) {
  HttpServerCounters counters;
  counters.responses[1] = 5;
  counters.responses[3] = 2;
  counters.open = 3;
  counters.loginFailures = 1;
  FigureList figures;
  counters.report(figures);
  EXPECT_EQ(figures.countOf("responses", "2xx"), 5U);
  EXPECT_EQ(figures.countOf("responses", "4xx"), 2U);
  EXPECT_EQ(figures.countOf("responses", "5xx"), 0U);
  EXPECT_EQ(figures.countOf("login_failures"), 1U);
  EXPECT_EQ(figures.countOf("open"), std::nullopt) << "open connections are a level";
  bool openSeen = false;
  for (const FigureList::Figure& f : figures.figures()) {
    if (f.name->metric == "vigil_http_connections_open") {
      openSeen = true;
      EXPECT_EQ(std::get<double>(f.value), 3.0);
    }
  }
  EXPECT_TRUE(openSeen);
}

TEST_F(HttpServerTest, GetReturnsBodyAndHeaders) {
  create();
  run();
  Client c(port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send(get("/hello")));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello\n");
  EXPECT_EQ(r->header("content-length"), "6");
  EXPECT_EQ(r->header("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(r->header("server"), "vigil");
  EXPECT_EQ(r->header("cache-control"), "no-store");
  EXPECT_EQ(counters().responses[1].load(), 1U);
}

TEST_F(HttpServerTest, PrefixRouteGetsSubpathAndQuery) {
  create();
  run();
  Client c(port());
  ASSERT_TRUE(c.send(get("/api/cameras/front/latest.jpg?size=small")));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("content-type"), "application/json");
  EXPECT_EQ(r->body, "front/latest.jpg|size=small");
}

TEST_F(HttpServerTest, HeadHasLengthButNoBody) {
  create();
  run();
  Client c(port());
  ASSERT_TRUE(c.send("HEAD /hello HTTP/1.1\r\nHost: test\r\n\r\n"));
  auto r = c.readResponse(/*headOnly=*/true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("content-length"), "6");
  // The connection is still in sync: the next response starts right where the head ended.
  ASSERT_TRUE(c.send(get("/hello")));
  auto next = c.readResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(next->body, "hello\n");
}

TEST_F(HttpServerTest, UnknownPathIs404AndWrongMethodIs405WithAllow) {
  create();
  run();
  Client c(port());
  ASSERT_TRUE(c.send(get("/nope")));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->header("server"), "vigil");
  ASSERT_TRUE(c.send("POST /hello HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nhi"));
  r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->header("allow"), "GET, HEAD");
  EXPECT_EQ(counters().responses[3].load(), 2U);
}

TEST_F(HttpServerTest, KeepAliveServesTwoRequestsAndHonoursConnectionClose) {
  create();
  run();
  Client c(port());
  ASSERT_TRUE(c.send(get("/hello")));
  auto first = c.readResponse();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  ASSERT_TRUE(c.send(get("/hello", "Connection: close\r\n")));
  auto second = c.readResponse();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 200);
  EXPECT_EQ(second->header("connection"), "close");
  EXPECT_TRUE(c.closedByServer());
  EXPECT_EQ(counters().accepted.load(), 1U);
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  create();
  run();
  Client c(port());
  ASSERT_TRUE(c.send(get("/hello") + get("/nope") + get("/hello")));
  for (int expected : {200, 404, 200}) {
    auto r = c.readResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, expected);
  }
}

TEST_F(HttpServerTest, MalformedRequestIs400AndServerGoesOn) {
  create();
  run();
  {
    Client c(port());
    ASSERT_TRUE(c.send("THIS IS NOT HTTP\r\n\r\n"));
    auto r = c.readResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_TRUE(c.closedByServer());
  }
  Client next(port());
  ASSERT_TRUE(next.send(get("/hello")));
  auto r = next.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(counters().badRequests.load(), 1U);
}

TEST_F(HttpServerTest, OversizedHeaderIs431AndServerGoesOn) {
  create();  // maxRequestBytes 8 KiB
  run();
  {
    Client c(port());
    ASSERT_TRUE(c.send(get("/hello", "X-Big: " + std::string(64 * 1024, 'a') + "\r\n")));
    auto r = c.readResponse();
    ASSERT_TRUE(r) << "the server lingers so that its answer is not lost to a reset";
    EXPECT_EQ(r->status, 431);
    EXPECT_TRUE(c.closedByServer());
  }
  Client next(port());
  ASSERT_TRUE(next.send(get("/hello")));
  auto r = next.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(counters().badRequests.load(), 1U);
}

TEST_F(HttpServerTest, OversizedBodyIs413) {
  create();
  run();
  Client c(port());
  ASSERT_TRUE(c.send("POST /hello HTTP/1.1\r\nHost: test\r\nContent-Length: 100000\r\n\r\n" +
                     std::string(100000, 'x')));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(c.closedByServer());
}

TEST_F(HttpServerTest, OversizedChunkedBodyIs413) {
  create();
  server_->route("POST", "/echo", [](const HttpRequest& request) {
    HttpResponse response;
    response.body = request.body;
    return response;
  });
  run();
  Client c(port());
  const std::string head =
      "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n";
  ASSERT_TRUE(c.send(head + "5\r\nsmall\r\n0\r\n\r\n"));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "small");
  std::string chunk = fmt::format("{:x}\r\n{}\r\n", 4096, std::string(4096, 'x'));
  ASSERT_TRUE(c.send(head + chunk + chunk + chunk + "0\r\n\r\n"));
  r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(c.closedByServer());
}

TEST_F(HttpServerTest, StalledClientIsClosedAfterReadTimeoutWhileOthersAreServed) {
  HttpServerSettings settings;
  settings.readTimeout = 300ms;
  create(settings);
  run();
  Client slow(port(), /*receiveTimeout=*/10s);
  ASSERT_TRUE(slow.send("GET /hello HTTP/1.1\r\nHost: te"));
  auto begin = HttpTestClock::now();
  {
    Client other(port());
    ASSERT_TRUE(other.send(get("/hello")));
    auto r = other.readResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_TRUE(slow.closedByServer());
  EXPECT_LT(HttpTestClock::now() - begin, 5s) << "closed by the server's timeout, not the client's";
  EXPECT_TRUE(slow.pending().empty()) << "no answer on a timeout";
  EXPECT_TRUE(testing::waitUntil([&] { return counters().readTimeouts.load() == 1; }));
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosedWithoutCountingATimeout) {
  HttpServerSettings settings;
  settings.readTimeout = 300ms;
  create(settings);
  run();
  Client c(port(), 10s);
  ASSERT_TRUE(c.send(get("/hello")));
  ASSERT_TRUE(c.readResponse());
  EXPECT_TRUE(c.closedByServer());
  EXPECT_TRUE(testing::waitUntil([&] { return counters().open.load() == 0; }));
  EXPECT_EQ(counters().readTimeouts.load(), 0U);
}

// Raises RLIMIT_NOFILE for `sockets` client and server sockets; false when it cannot.
bool enoughDescriptors(std::size_t sockets) {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return false;
  if (files.rlim_cur < sockets * 2 + 100) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, sockets * 2 + 100);
    setrlimit(RLIMIT_NOFILE, &files);
    if (getrlimit(RLIMIT_NOFILE, &files) != 0) return false;
  }
  return files.rlim_cur >= sockets * 2 + 100;
}

TEST_F(HttpServerTest, AtTheLimitTheConnectionWaitingLongestMakesRoom) {
  constexpr std::size_t kSockets = 1000;
  constexpr std::size_t kLimit = 64;
  if (!enoughDescriptors(kSockets)) GTEST_SKIP() << "RLIMIT_NOFILE too low";
  HttpServerSettings settings;
  settings.maxConnections = kLimit;
  settings.readTimeout = 60s;  // idle connections stay until made room for
  create(settings);
  run();

  // A crowd of idle connections, one after the other: each beyond the limit closes the one
  // that has waited longest, so the newest kLimit stay and the first ones are closed unanswered.
  std::vector<std::unique_ptr<Client>> clients;
  for (std::size_t i = 0; i < kSockets; ++i) {
    clients.push_back(std::make_unique<Client>(port()));
    ASSERT_TRUE(clients.back()->connected()) << i;
    if (i + 1 == kLimit) {
      ASSERT_TRUE(testing::waitUntil([&] { return counters().accepted.load() == kLimit; }));
    }
  }
  ASSERT_TRUE(testing::waitUntil([&] { return counters().accepted.load() == kSockets; }));
  EXPECT_EQ(counters().evicted.load(), kSockets - kLimit);
  EXPECT_EQ(counters().rejected.load(), 0U);
  EXPECT_TRUE(testing::waitUntil([&] { return counters().open.load() == kLimit; }));
  std::vector<pollfd> fds;
  for (const auto& c : clients) fds.push_back(pollfd{c->fd(), POLLIN, 0});
  std::size_t closed = 0;
  testing::waitUntil(
      [&] {
        ::poll(fds.data(), fds.size(), 100);
        closed = static_cast<std::size_t>(
            std::count_if(fds.begin(), fds.end(), [](const pollfd& p) { return p.revents != 0; }));
        return closed >= kSockets - kLimit;
      },
      10s);
  EXPECT_EQ(closed, kSockets - kLimit);
  // The closed ones are the oldest, without an answer; the newest kLimit are untouched.
  for (std::size_t i = 0; i < kSockets - kLimit; ++i) {
    ASSERT_NE(fds[i].revents, 0) << "client " << i << " should have made room";
    EXPECT_TRUE(clients[i]->closedByServer()) << i;
    EXPECT_TRUE(clients[i]->pending().empty()) << i;
  }

  // While the crowd is held, a request comes through at once.
  Client fresh(port());
  ASSERT_TRUE(fresh.send(get("/hello")));
  auto r = fresh.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(counters().evicted.load(), kSockets - kLimit + 1);
}

TEST_F(HttpServerTest, WhenEveryConnectionIsBeingAnsweredANewOneGets503) {
  constexpr std::size_t kLimit = 4;
  HttpServerSettings settings;
  settings.maxConnections = kLimit;
  settings.writeTimeout = 60s;  // the answers stay stuck until the test closes the readers
  create(settings);
  // Larger than loopback's socket buffers together (a few MiB), so the write cannot finish
  // while the client reads nothing.
  server_->route("GET", "/big", [](const HttpRequest&) {
    HttpResponse response;
    response.body = std::string(32 * 1024 * 1024, 'x');
    return response;
  });
  run();
  std::vector<std::unique_ptr<Client>> readers;
  for (std::size_t i = 0; i < kLimit; ++i) {
    readers.push_back(std::make_unique<Client>(port()));
    ASSERT_TRUE(readers.back()->send(get("/big")));
  }
  // Each answer is counted when its write starts.
  ASSERT_TRUE(testing::waitUntil([&] { return counters().responses[1].load() == kLimit; }));
  Client late(port());
  ASSERT_TRUE(late.send(get("/hello")));
  auto r = late.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  // Counted after the answer is sent: the client may read it first.
  EXPECT_TRUE(testing::waitUntil([&] { return counters().rejected.load() == 1U; }));
  EXPECT_EQ(counters().evicted.load(), 0U);

  readers.clear();
  ASSERT_TRUE(testing::waitUntil([&] { return counters().open.load() == 0; }));
  Client fresh(port());
  ASSERT_TRUE(fresh.send(get("/hello")));
  r = fresh.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTest, ThrowingHandlerGives500AndServerGoesOn) {
  create();
  run();
  Client c(port());
  ASSERT_TRUE(c.send(get("/throw")));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  ASSERT_TRUE(c.send(get("/hello")));
  r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(counters().handlerErrors.load(), 1U);
  EXPECT_EQ(counters().responses[4].load(), 1U);
}

TEST_F(HttpServerTest, PortInUseIsAClearError) {
  create();
  run();
  asio::io_context io;  // start() runs where its io_context is not running
  HttpServer second(io, listenOn(fmt::format("127.0.0.1:{}", port())));
  auto started = second.start();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(started.error().message,
            fmt::format("http.listen 127.0.0.1:{}: address already in use", port()));
}

TEST_F(HttpServerTest, BadListenStringsAreRejected) {
  asio::io_context io;
  for (const char* listen :
       {"9842", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:x", "::1:80", "example.org:80", ":80"}) {
    HttpServer server(io, listenOn(listen));
    auto started = server.start();
    ASSERT_FALSE(started) << listen;
    EXPECT_EQ(started.error().code, ErrorCode::kInvalidArgument) << listen;
    EXPECT_NE(started.error().message.find(listen), std::string::npos) << started.error().message;
  }
}

// Why this machine cannot listen on ::1 (no IPv6 in the kernel, or none on loopback, as in
// some containers); empty when it can.
std::string noIpv6Loopback() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("socket(AF_INET6): ") + std::strerror(errno);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  const int error = errno;
  ::close(fd);
  return bound ? "" : std::string("bind [::1]:0: ") + std::strerror(error);
}

TEST_F(HttpServerTest, ListensOnIpv6Loopback) {
  if (auto why = noIpv6Loopback(); !why.empty()) GTEST_SKIP() << "no IPv6 loopback here: " << why;
  create({}, "[::1]:0");
  run();
  Client c(port(), 5s, AF_INET6);
  ASSERT_TRUE(c.connected()) << "connect to [::1]:" << port();
  ASSERT_TRUE(c.send(get("/hello")));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello\n");
}

TEST_F(HttpServerTest, StopClosesOpenConnections) {
  create();
  run();
  Client c(port(), 10s);
  ASSERT_TRUE(c.send(get("/hello")));
  ASSERT_TRUE(c.readResponse());
  asio::post(io_, [this] { server_->stop(); });
  EXPECT_TRUE(c.closedByServer());
  EXPECT_TRUE(testing::waitUntil([&] { return counters().open.load() == 0; }));
}

}  // namespace
}  // namespace vigil
