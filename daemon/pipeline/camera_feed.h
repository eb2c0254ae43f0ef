#pragma once

#include <memory>
#include <optional>

#include "daemon/capture/camera/frame_sink.h"
#include "daemon/pipeline/motion.h"
#include "daemon/pipeline/scheduler.h"
#include "daemon/settings/settings.h"

namespace vigil {

// A camera's frames into the pipeline: each captured frame through the camera's motion gate
// (when its motion section enables it), then into its latest-frame slot at the scheduler. The
// gate runs here, on the camera's capture thread, not in the scheduler: the analysis costs the
// camera's thread, never the detector's, and a held-back frame goes straight back to the pool.
// Ownership: owns the camera's channel (shared with the scheduler and the daemon's views) and
// gate; borrows the scheduler, which outlives every attach() and offer().
class CameraFeed final : public FrameSink {
 public:
  CameraFeed(const CameraConfig& camera, Scheduler& scheduler);

  const std::shared_ptr<CameraChannel>& channel() const { return channel_; }

  CameraCounters& counters() override { return channel_->counters(); }
  void attach() override { scheduler_.attach(channel_); }
  void detach() override { scheduler_.detach(channel_); }
  bool admit(const CapturedPicture& picture, SteadyClock::time_point captured) override;
  void offer(FrameHandle frame) override { scheduler_.offer(*channel_, std::move(frame)); }
  bool keyframesOnly() const override;

 private:
  Scheduler& scheduler_;
  std::shared_ptr<CameraChannel> channel_;
  std::optional<MotionGate> gate_;  // motion gating, when the camera's motion section enables it
  bool idleKeyframesOnly_ = false;
};

}  // namespace vigil
