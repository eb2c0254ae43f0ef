#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>

namespace vigil {

// A long-running thread's promise to show life again before a deadline. The thread calls
// expectWithin() before each step that may block (a read with a timeout, a backoff sleep, an
// inference), with how long that step may take at most plus a grace; /healthz (and the
// systemd watchdog) read overdueBy() from another thread. Lock-free: one atomic.
class Heartbeat {
 public:
  using Clock = std::chrono::steady_clock;

  void expectWithin(Clock::duration limit, Clock::time_point now = Clock::now()) {
    deadline_.store((now + limit).time_since_epoch().count(), std::memory_order_relaxed);
  }
  // The thread waits for something that may never come, legitimately (a file camera at its
  // end waits for stop): never overdue.
  void idle() { deadline_.store(kNever, std::memory_order_relaxed); }

  // How long past its deadline the thread is; nullopt while it keeps its promise.
  std::optional<Clock::duration> overdueBy(Clock::time_point now = Clock::now()) const {
    auto deadline = deadline_.load(std::memory_order_relaxed);
    if (deadline == kNever || now.time_since_epoch().count() <= deadline) return std::nullopt;
    return Clock::duration(now.time_since_epoch().count() - deadline);
  }

 private:
  static constexpr Clock::rep kNever = std::numeric_limits<Clock::rep>::max();
  std::atomic<Clock::rep> deadline_{kNever};
};

}  // namespace vigil
