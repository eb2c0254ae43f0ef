#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <functional>
#include <optional>
#include <string>

#include "tests/wait.h"

// A minimal blocking HTTP/1.1 GET over loopback for tests: one request, Connection: close.
namespace vigil::testing {

struct HttpReply {
  int status = 0;
  std::string headers;  // the raw header block
  std::string body;
};

inline int connectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `raw` as is and reads until the server closes; nullopt when nothing parseable came.
inline std::optional<HttpReply> rawExchange(int port, const std::string& raw) {
  int fd = connectLoopback(port);
  if (fd < 0) return std::nullopt;
  std::size_t sent = 0;
  while (sent < raw.size()) {
    ssize_t n = send(fd, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string data;
  char buffer[65536];
  for (;;) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  auto end = data.find("\r\n\r\n");
  if (data.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) return std::nullopt;
  HttpReply reply;
  reply.status = std::stoi(data.substr(9, 3));
  reply.headers = data.substr(0, end);
  reply.body = data.substr(end + 4);
  return reply;
}

inline std::optional<HttpReply> httpGet(int port, const std::string& target) {
  return rawExchange(port,
                     "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

// Waits until GET `target` answers and the reply satisfies `accept` (status 200 by default);
// returns that reply, or the last one (or nullopt) when none did within `limit`.
inline std::optional<HttpReply> waitForHttp(
    int port, const std::string& target,
    const std::function<bool(const HttpReply&)>& accept =
        [](const HttpReply& r) { return r.status == 200; },
    std::chrono::milliseconds limit = kDeadline) {
  std::optional<HttpReply> reply;
  waitUntil(
      [&] {
        reply = httpGet(port, target);
        return reply && accept(*reply);
      },
      limit, 100ms);
  return reply;
}

}  // namespace vigil::testing
