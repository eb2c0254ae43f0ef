#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "daemon/capture/frame/frame.h"

namespace vigil {

// Says when the one detector all cameras share cannot keep up: busy for most of a window, the
// cameras wait for it and get fewer detections than their detect_fps asked. One thread per
// inference (the default, the least CPU per frame) has room for a few dozen frames a second;
// this is what tells a user with more cameras to raise detector.threads. Loud once when it
// starts and once when it ends, never per window.
//
// Threads: one (the control thread) calls observe().
class DetectorLoad {
 public:
  struct Change {
    bool saturated;       // true: it started; false: the detector keeps up again
    double busyFraction;  // of the window that decided it
    std::string message;  // for the log, at warn (started) or info (ended)
  };

  static constexpr std::chrono::seconds kWindow{30};
  static constexpr double kSaturatedAbove = 0.9;
  static constexpr double kKeepsUpBelow = 0.7;

  // `threads`: detector.threads, for the advice.
  explicit DetectorLoad(int threads) : threads_(threads) {}

  // `busySeconds`: the worker's running total of time spent detecting (it restarts from 0 with
  // a new worker). A change once a window has passed and the state flipped, else nothing.
  std::optional<Change> observe(SteadyClock::time_point now, double busySeconds);

 private:
  int threads_;
  std::optional<SteadyClock::time_point> windowStart_;
  double busyAtStart_ = 0;
  bool saturated_ = false;
};

}  // namespace vigil
