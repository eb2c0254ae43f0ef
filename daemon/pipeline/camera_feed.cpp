#include "daemon/pipeline/camera_feed.h"

namespace vigil {

CameraFeed::CameraFeed(const CameraConfig& camera, Scheduler& scheduler)
    : scheduler_(scheduler),
      channel_(std::make_shared<CameraChannel>(camera.name, camera.detectFps, camera.denoise,
                                               camera.regions)),
      idleKeyframesOnly_(camera.motion.idleKeyframesOnly) {
  if (camera.motion.enabled) {
    gate_.emplace(camera.motion, camera.masks, channel_->detectPeriod());
    channel_->counters().motionState = static_cast<int>(MotionState::kMotion);
  }
}

bool CameraFeed::admit(const CapturedPicture& picture, SteadyClock::time_point captured) {
  if (!gate_) return true;
  CameraCounters& counters = channel_->counters();
  CameraRegions& regions = channel_->regions();
  gate_->setFindBoxes(regions.active());
  auto decision = gate_->admit(picture, captured, channel_->personSaid());
  counters.motionState.store(static_cast<int>(gate_->state()), std::memory_order_relaxed);
  if (decision.analysed) {
    counters.motionChecked.fetch_add(1, std::memory_order_relaxed);
    if (regions.active()) regions.setMotion(gate_->boxes());
  }
  if (decision.gated) counters.gated.fetch_add(1, std::memory_order_relaxed);
  return decision.offer;
}

bool CameraFeed::keyframesOnly() const {
  return gate_ && idleKeyframesOnly_ && gate_->state() == MotionState::kIdle;
}

}  // namespace vigil
