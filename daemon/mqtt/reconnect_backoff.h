#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace vigil {

// When the MQTT client tries to connect next: at once when it starts; minRetry after a failed
// attempt, doubling with every further failure up to maxRetry; minRetry after a lost connection;
// the doubling starts again once a connect succeeds. Counts the attempts after the first
// (reconnects). Times are read from the steady clock when a failure or a loss is told.
// Threads: none of its own; guarded by the client's mutex (the client holds it for every call),
// except countAttempt() (the client's own thread only, like the attempt it counts) and
// reconnects() (atomic, any thread).
class ReconnectBackoff {
 public:
  ReconnectBackoff(std::chrono::milliseconds minRetry, std::chrono::milliseconds maxRetry)
      : minRetry_(minRetry), maxRetry_(maxRetry) {}

  void startNow() { nextAttempt_ = std::chrono::steady_clock::now(); }
  std::chrono::steady_clock::time_point nextAttempt() const { return nextAttempt_; }
  // A connect attempt begins.
  void countAttempt() {
    if (++attempts_ > 1) reconnects_++;
  }
  // The attempt failed: the pause doubles (minRetry for the first failure), up to maxRetry.
  void failed();
  // A connection was lost: the next attempt is minRetry from now.
  void lost();
  // Connected: the next failure waits minRetry again.
  void connected() { backoff_ = std::chrono::milliseconds(0); }
  std::uint64_t reconnects() const { return reconnects_.load(); }

 private:
  std::chrono::milliseconds minRetry_;
  std::chrono::milliseconds maxRetry_;
  std::chrono::milliseconds backoff_{0};
  std::chrono::steady_clock::time_point nextAttempt_{};
  std::uint64_t attempts_ = 0;  // the client's own thread only
  std::atomic<std::uint64_t> reconnects_{0};
};

}  // namespace vigil
