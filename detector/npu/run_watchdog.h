#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace vigil {

// A timer on a thread of its own that cuts a synchronous run passing its deadline: the caller
// arms it with the run's timeout and what cuts the run (ONNX Runtime: RunOptionsSetTerminate on
// that run's options), runs, then disarms it. One thread per watchdog, made at construction and
// kept for its life (one per NPU runtime, however many runs and sessions it makes), never one
// per run: on a 2-core box a thread a frame is a cost.
//
// Threads: arm() and disarm() from one caller (the inference worker); the cut runs on the
// watchdog's thread, under its lock, so disarm() returns only once a cut that began is over and
// none can begin after it. Failure: none; a cut that cannot stop the run (a runtime deaf to its
// terminate flag) is the caller's to notice (systemd's watchdog is the last resort).
class RunWatchdog {
 public:
  RunWatchdog();
  ~RunWatchdog();
  RunWatchdog(const RunWatchdog&) = delete;
  RunWatchdog& operator=(const RunWatchdog&) = delete;

  // From now, `cut` runs once if disarm() has not come within `timeout`.
  void arm(std::chrono::milliseconds timeout, std::function<void()> cut);
  // Ends the wait; true when the cut ran (the run was cut, whatever it returned).
  bool disarm();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::function<void()> cut_;
  bool fired_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the fields above exist
};

}  // namespace vigil
