#include "daemon/capture/camera/camera_status.h"

#include "daemon/base/log.h"
#include "daemon/base/url_credentials.h"

namespace vigil {

std::string_view cameraStateName(CameraState state) {
  switch (state) {
    case CameraState::kStarting:
      return "starting";
    case CameraState::kStreaming:
      return "streaming";
    case CameraState::kReconnecting:
      return "reconnecting";
    case CameraState::kEnded:
      return "ended";
    case CameraState::kStopped:
      return "stopped";
  }
  return "unknown";
}

void CameraStatus::set(CameraState state, const std::string& reason) {
  auto log = logger("capture");
  CameraState previous = state_.exchange(state);
  bool reasonChanged = false;
  {
    std::lock_guard lock(mutex_);
    // Served by /api/status: an error quoting the URL must not show its password.
    std::string shown = redactCredentials(reason);
    reasonChanged = lastError_ != shown;
    lastError_ = std::move(shown);
  }
  counters_.up = state == CameraState::kStreaming;
  if (previous == state && !reasonChanged) return;
  switch (state) {
    case CameraState::kStreaming:
      log->info("[cam={}] streaming: {}", camera_, reason);
      break;
    case CameraState::kReconnecting:
      log->warn("[cam={}] source lost, reconnecting with backoff: {}", camera_, reason);
      break;
    case CameraState::kEnded:
      log->info("[cam={}] ended: {}", camera_, reason);
      break;
    default:
      log->debug("[cam={}] {}: {}", camera_, cameraStateName(state), reason);
  }
}

std::string CameraStatus::lastError() const {
  std::lock_guard lock(mutex_);
  return lastError_;
}

}  // namespace vigil
