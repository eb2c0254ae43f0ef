#pragma once

#include <chrono>

#include "daemon/base/error.h"
#include "daemon/capture/camera/camera_counters.h"

namespace vigil {

struct BackoffPolicy {
  std::chrono::milliseconds initial{500};
  std::chrono::milliseconds max{30000};
  // No frame for this long (or 5 frame periods, whichever is longer) means the source is lost.
  std::chrono::milliseconds stallTimeout{5000};
};

// When a camera's capture thread opens its source again: capped exponential backoff, from the
// policy's initial delay doubling up to its maximum after each wait; at the maximum at once
// after a configuration problem, and from the initial delay again once a session streamed. It
// counts the opens that failed and the reconnects in the camera's counters. The waiting itself
// is the camera's (a stop cuts it short).
// Threads: the camera's capture thread only; `counters` is the camera's, borrowed for this
// object's life.
class ReopenBackoff {
 public:
  ReopenBackoff(const BackoffPolicy& policy, CameraCounters& counters)
      : policy_(policy), counters_(counters), delay_(policy.initial) {}

  // An open failed with `error`, counted. A configuration problem (kInvalidArgument,
  // kUnsupported) will not fix itself quickly, but a device may be swapped: retried at the
  // slowest rate.
  void openFailed(const Error& error);
  // The source opened: a reconnect, counted, when a session streamed before.
  void opened();
  // A session streamed: the next wait is the initial delay, and the next open a reconnect.
  void streamed();
  // A session streamed before: an open now is a reconnect.
  bool everStreamed() const { return everStreamed_; }
  // The wait before the next open; lengthened() once it is waited.
  std::chrono::milliseconds delay() const { return delay_; }
  void lengthened();

 private:
  BackoffPolicy policy_;
  CameraCounters& counters_;
  std::chrono::milliseconds delay_;
  bool everStreamed_ = false;
};

}  // namespace vigil
