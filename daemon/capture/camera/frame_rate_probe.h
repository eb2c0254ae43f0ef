#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "daemon/capture/frame/frame.h"

namespace vigil {

// The rate a camera's frames really come at, measured over its first seconds of streaming, for
// the one log line that says it: a source's declared rate can be far off (FFmpeg guesses 25 fps
// for any MJPEG-over-HTTP stream, whatever the camera sends; a file's container may say another
// rate than it is read at). The same measure as /api/status's fps_captured: frames read per
// second of the capture thread's clock.
// Threads: the camera's capture thread, for one streaming session.
class FrameRateProbe {
 public:
  // How long frames are counted before the rate is said.
  static constexpr std::chrono::seconds kWindow{5};
  // Off by more than this fraction, the declared rate is named beside the measured one.
  static constexpr double kTolerance = 0.1;

  // A frame arrived at `now` (the session's first starts the window): the measured rate once,
  // at the first frame kWindow or more after the window began; nullopt before and after.
  std::optional<double> frameAt(SteadyClock::time_point now);

  // "measured 10.0 fps", and when `declared` (0: the source declared none) differs by more
  // than kTolerance, "measured 10.0 fps, not the 25.0 the source declared".
  static std::string describe(double measured, double declared);

 private:
  std::optional<SteadyClock::time_point> first_;
  long intervals_ = 0;  // frames after the first
  bool said_ = false;
};

}  // namespace vigil
