#pragma once

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace vigil::testing {

// What systemd listens on for a Type=notify service: a datagram socket whose path goes into
// $NOTIFY_SOCKET.
class NotifySocket {
 public:
  explicit NotifySocket(const std::filesystem::path& path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    timeval timeout{0, 200000};  // recv() wakes up this often to check its deadline
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~NotifySocket() { close(fd_); }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  bool bound() const { return bound_; }

  // The next message, kept in `messages` too; nullopt when none comes within `limit`.
  std::optional<std::string> receive(std::chrono::milliseconds limit = std::chrono::seconds(2)) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      char buffer[4096];
      ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n < 0) continue;
      messages.emplace_back(buffer, static_cast<std::size_t>(n));
      return messages.back();
    }
    return std::nullopt;
  }

  // Receives until a message starts with `prefix` or the limit passes.
  bool waitFor(const std::string& prefix, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (auto now = std::chrono::steady_clock::now(); now < deadline;
         now = std::chrono::steady_clock::now()) {
      auto message = receive(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
      if (message && message->rfind(prefix, 0) == 0) return true;
    }
    return false;
  }

  // Non-blocking: true when nothing is waiting.
  bool empty() {
    char buffer[16];
    return recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT) < 0;
  }

  std::vector<std::string> messages;  // everything received, in order

 private:
  int fd_ = -1;
  bool bound_ = false;
};

}  // namespace vigil::testing
