#pragma once

// Fake network peers for the daemon's tests: a loopback TCP server with a thread per
// connection, and what an MJPEG-over-HTTP camera sends.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/free_port.h"

namespace vigil::testing {

// A loopback TCP server that runs `serve(fd)` on a thread of its own for every connection it
// accepts, and counts them. Connections stay open until the server is destroyed.
class LoopbackServer {
 public:
  explicit LoopbackServer(std::function<void(int fd)> serve) : serve_(std::move(serve)) {
    listen_ = listenOnLoopback(16, port_);
    acceptor_ = std::thread([this] {
      while (!stopping_) {
        int fd = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        std::lock_guard lock(mutex_);
        held_.push_back(fd);
        ++accepted_;
        workers_.emplace_back([this, fd] { serve_(fd); });
      }
    });
  }
  ~LoopbackServer() {
    stopping_ = true;
    shutdown(listen_, SHUT_RDWR);
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (int fd : held_) shutdown(fd, SHUT_RDWR);  // wakes the workers
    for (auto& w : workers_) w.join();
    for (int fd : held_) close(fd);
    close(listen_);
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  int port() const { return port_; }
  int accepted() const {
    std::lock_guard lock(mutex_);
    return accepted_;
  }

 private:
  std::function<void(int)> serve_;
  int listen_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::vector<int> held_;
  std::vector<std::thread> workers_;
  int accepted_ = 0;
  std::thread acceptor_;
};

// Reads a request head; empty when the peer closed first.
inline std::string readRequestHead(int fd) {
  std::string request;
  char buffer[4096];
  while (request.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return "";
    request.append(buffer, static_cast<std::size_t>(n));
  }
  return request;
}

// False when the peer is gone.
inline bool sendAll(int fd, const std::string& data) {
  for (std::size_t sent = 0; sent < data.size();) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// True when the peer hung up, or the server shut the socket down, within `limit`. Only the
// hang-up is asked for: bytes the peer sends do not end the wait.
inline bool hangsUpWithin(int fd, std::chrono::milliseconds limit) {
  pollfd hangUp{fd, POLLRDHUP, 0};
  return ::poll(&hangUp, 1, static_cast<int>(limit.count())) > 0;
}

// Answers as an MJPEG-over-HTTP camera: the multipart header, then picture(0), picture(1), ...
// once a frame interval (10 fps) until the peer hangs up or the server goes.
inline void streamMjpeg(int fd,
                        const std::function<const std::vector<std::uint8_t>&(int i)>& picture) {
  if (!sendAll(fd,
               "HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; "
               "boundary=frame\r\n\r\n")) {
    return;
  }
  for (int i = 0;; ++i) {
    const std::vector<std::uint8_t>& jpeg = picture(i);
    const std::string part =
        "--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + std::to_string(jpeg.size()) +
        "\r\n\r\n" + std::string(jpeg.begin(), jpeg.end()) + "\r\n";
    if (!sendAll(fd, part) || hangsUpWithin(fd, std::chrono::milliseconds(100))) return;
  }
}

// The same picture every time.
inline void streamMjpeg(int fd, const std::vector<std::uint8_t>& jpeg) {
  streamMjpeg(fd, [&](int) -> const std::vector<std::uint8_t>& { return jpeg; });
}

}  // namespace vigil::testing
