#pragma once

// A real HttpServer on a loopback port for the HTTP fuzz targets, and one connection's exchange
// with it: whatever arrives must be answered or dropped, never crash the server, hang it, or leave
// it unable to serve the next connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "daemon/web/http_server.h"

namespace vigil::fuzz {

// GET /metrics, open to all (RouteAccess::kMonitoring): a route every fuzzed server has.
inline void addMetricsRoute(vigil::HttpServer& server) {
  server.route(
      "GET", "/metrics",
      [](const vigil::HttpRequest&) {
        vigil::HttpResponse response;
        response.body = "vigil_up 1\n";
        return response;
      },
      vigil::RouteAccess::kMonitoring);
}

class FuzzHttpServer {
 public:
  // `setUp` adds the routes and the security before the server starts.
  explicit FuzzHttpServer(const std::function<void(vigil::HttpServer&)>& setUp) {
    vigil::HttpServerSettings settings;
    settings.listen = "127.0.0.1:0";
    settings.readTimeout = std::chrono::seconds(2);
    settings.writeTimeout = std::chrono::seconds(2);
    server_ = std::make_unique<vigil::HttpServer>(io_, settings);
    setUp(*server_);
    if (auto started = server_->start(); !started) {
      std::fprintf(stderr, "http fuzzer: %s\n", started.error().message.c_str());
      std::abort();
    }
    port_ = server_->port();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~FuzzHttpServer() {
    work_.reset();
    io_.stop();
    thread_.join();
  }
  unsigned short port() const { return port_; }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::unique_ptr<vigil::HttpServer> server_;
  unsigned short port_ = 0;
  std::thread thread_;
};

// A connected socket to the server. libFuzzer's timer signal (SIGALRM, installed without
// SA_RESTART) can interrupt a blocking connect(); the attempt then goes on in the kernel, so
// start over on a fresh socket (the server sees one empty connection, which it must survive too).
inline int connectTo(unsigned short port) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) std::abort();
    timeval timeout{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
    const int err = errno;
    ::close(fd);
    if (err != EINTR) {
      errno = err;
      std::perror("http fuzzer: connect");
      std::abort();
    }
  }
  std::fprintf(stderr, "http fuzzer: connect interrupted 100 times in a row\n");
  std::abort();
}

// One connection: send `data`, half-close, read until the server closes (or 5 s pass, which
// means it hung: abort so the fuzzer reports it). Closed with a reset so that hundreds of
// thousands of runs leave no TIME_WAIT sockets behind.
inline void exchange(unsigned short port, const std::uint8_t* data, std::size_t size) {
  const int fd = connectTo(port);
  std::size_t sent = 0;
  while (sent < size) {
    ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server closed early (answered 4xx): fine
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  char buffer[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        std::fprintf(stderr, "http fuzzer: the server neither answered nor closed in 5 s\n");
        std::abort();
      }
      break;  // reset: fine
    }
  }
  linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(fd);
}

}  // namespace vigil::fuzz
