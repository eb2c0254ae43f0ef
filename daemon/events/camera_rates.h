#pragma once

#include "daemon/events/camera_view.h"
#include "detector/detector.h"

namespace vigil {

// The camera views' rates and motion-gating bookkeeping: the frames captured and detected per
// second and the capture thread's share of a core, over windows of about 2 s, and the detector
// seconds the gate saved, each gated frame priced once at what the detector has spent per frame
// recently (a moving average over all cameras' results).
//
// Threads: the control (io_context) thread only (ResultPath owns it and the views).
class CameraRates {
 public:
  // A result came: its detector time joins the moving average.
  void detectorRan(const StageTimings& timings);
  // The camera's frames gated since the last call, priced (view.gatedSeconds).
  void priceGated(CameraView& view) const;
  // The first call starts the camera's window; the first call a window (2 s) later sets
  // view.fpsCaptured, fpsDetected and captureCpuShare and starts the next one.
  static void update(CameraView& view, SteadyClock::time_point now);

 private:
  double meanDetectorSeconds_ = 0;  // moving average over recent frames, all cameras
};

}  // namespace vigil
