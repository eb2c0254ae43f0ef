#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>

#include "daemon/capture/camera/camera_counters.h"

namespace vigil {

enum class CameraState { kStarting, kStreaming, kReconnecting, kEnded, kStopped };
std::string_view cameraStateName(CameraState state);

// A camera's state and the last reason its source failed, as the status API shows them (the
// reason without the URL's password), whether it is up in its counters, and one log line per
// change: a failed attempt that changes neither is not logged again.
// Threads: set by the capture thread (and by its owner at start and stop), read by anyone.
class CameraStatus {
 public:
  CameraStatus(std::string camera, CameraCounters& counters)
      : camera_(std::move(camera)), counters_(counters) {}

  void set(CameraState state, const std::string& reason);
  // The state alone, without a reason or a log line (the owner's start and stop).
  void setState(CameraState state) { state_ = state; }
  CameraState state() const { return state_.load(); }
  // Empty while streaming.
  std::string lastError() const;

 private:
  std::string camera_;
  CameraCounters& counters_;
  std::atomic<CameraState> state_{CameraState::kStopped};
  mutable std::mutex mutex_;  // guards lastError_
  std::string lastError_;
};

}  // namespace vigil
