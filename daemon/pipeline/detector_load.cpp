#include "daemon/pipeline/detector_load.h"

#include <fmt/format.h>

namespace vigil {

std::optional<DetectorLoad::Change> DetectorLoad::observe(SteadyClock::time_point now,
                                                          double busySeconds) {
  if (!windowStart_ || busySeconds < busyAtStart_) {  // the first call, or a new worker
    windowStart_ = now;
    busyAtStart_ = busySeconds;
    return std::nullopt;
  }
  const double elapsed = std::chrono::duration<double>(now - *windowStart_).count();
  if (elapsed < std::chrono::duration<double>(kWindow).count()) return std::nullopt;
  const double busy = (busySeconds - busyAtStart_) / elapsed;
  windowStart_ = now;
  busyAtStart_ = busySeconds;
  if (!saturated_ && busy >= kSaturatedAbove) {
    saturated_ = true;
    return Change{true, busy,
                  fmt::format("the detector was busy {:.0f} % of the last {:.0f} s: the cameras "
                              "wait for it and get fewer detections than their detect_fps asks; "
                              "raise detector.threads (now {}) or lower detect_fps "
                              "(bench/cpu-threads.md)",
                              100 * busy, elapsed,
                              threads_ == 0 ? "every hardware thread" : std::to_string(threads_))};
  }
  if (saturated_ && busy < kKeepsUpBelow) {
    saturated_ = false;
    return Change{false, busy,
                  fmt::format("the detector keeps up again: busy {:.0f} % of the last {:.0f} s",
                              100 * busy, elapsed)};
  }
  return std::nullopt;
}

}  // namespace vigil
