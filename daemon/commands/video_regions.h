#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "daemon/pipeline/camera_regions.h"
#include "daemon/pipeline/motion.h"
#include "detector/region_detector.h"

namespace vigil {

// `--regions auto|on|off` of the commands that detect on a video (vigil track, vigil detect):
// each detection on regions around the motion and the persons instead of the whole picture
// shrunk, by the daemon's own parts: a camera's CameraRegions (the decision, the plan, the
// counts), its MotionDetector measuring motion on the detected frames, and RegionDetector.
// `auto`: on when the picture is at least twice the input (regionsHelp), as the daemon's default.
// Threads: one.
class VideoRegions {
 public:
  explicit VideoRegions(RegionsConfig::Mode mode);

  // Where the next detection looks again: regions().setTracks() with the tracker's tracks after
  // a frame (vigil track), or setPersons() with its detections (vigil detect).
  CameraRegions& regions() { return regions_; }

  // The detection of `frame` at `time` (seconds).
  Expected<void> detect(Detector& detector, const cv::Mat& frame, double time,
                        DetectionResult& result);

  // "regions: 12 motion, 30 track, 8 whole, 1 edge; 1.6 inferences a detection", or "" when
  // regions never ran.
  std::string summary() const;

 private:
  CameraRegions regions_;
  MotionDetector motion_;
  RegionDetector detector_;
  std::optional<double> lastTime_;
  std::uint64_t detections_ = 0;
};

}  // namespace vigil
