#pragma once

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace vigil {

// A stop a blocking wait can be woken by: an eventfd that a poll() watches beside the fd it
// waits on (a V4L2 device), or alone (a paced file's sleep). raise() from any thread; it stays
// raised (a source is stopped once). Without an eventfd (the kernel refused one) waits fall back
// to their full timeout, as before this existed.
class StopSignal {
 public:
  StopSignal() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~StopSignal() {
    if (fd_ >= 0) ::close(fd_);
  }
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  void raise() {
    raised_ = true;
    const std::uint64_t one = 1;
    if (fd_ >= 0) (void)!::write(fd_, &one, sizeof one);
  }
  // For a poll() set: readable once raised. -1 without an eventfd (poll ignores it).
  int fd() const { return fd_; }

  // Sleeps `d`, or until raised; false when raised.
  bool sleepFor(std::chrono::milliseconds d) const {
    if (raised_) return false;
    pollfd wake{fd_, POLLIN, 0};
    (void)::poll(&wake, 1, static_cast<int>(std::max<std::int64_t>(d.count(), 0)));
    return !raised_;
  }

 private:
  int fd_;
  std::atomic<bool> raised_{false};
};

}  // namespace vigil
