#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "daemon/pipeline/motion.h"
#include "detector/region_detector.h"
#include "detector/track/byte_tracker.h"

namespace vigil {

// `--regions auto|on|off` of the commands that detect on a video (vigil track): each detection
// on regions around the motion and the tracks instead of the whole picture shrunk, as the
// daemon does (regions.h, RegionDetector), with the motion measured on the tracked frames by
// the daemon's MotionDetector. `auto`: on when the picture is at least twice the input
// (regionsHelp), as the daemon's default.
// Threads: one.
class VideoRegions {
 public:
  // `mode`: auto, on or off.
  explicit VideoRegions(std::string mode);

  // The detection of `frame` at `time` (seconds); `tracks`: the tracker's tracks after the
  // previous frame (their boxes, or predictions for the lost ones, seed track regions).
  Expected<void> detect(Detector& detector, const cv::Mat& frame, double time,
                        const std::vector<Track>& tracks, DetectionResult& result);

  // "regions: 12 motion, 30 track, 8 whole, 1 edge; 1.6 inferences a detection", or "" when
  // regions never ran.
  std::string summary() const;

 private:
  std::string mode_;
  std::optional<bool> on_;  // decided on the first frame
  MotionDetector motion_;
  RegionPlanner planner_;
  RegionDetector detector_;
  std::optional<double> lastTime_;
  std::vector<Box> motionBoxes_, trackBoxes_;
  RegionCounts counts_{};
  std::uint64_t detections_ = 0;
};

}  // namespace vigil
