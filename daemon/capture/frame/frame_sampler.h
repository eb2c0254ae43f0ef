#pragma once

#include <chrono>
#include <filesystem>
#include <opencv2/core/mat.hpp>
#include <string>

#include "daemon/capture/frame/frame.h"
#include "daemon/settings/calibration_settings.h"

namespace vigil {

// Saves one of the camera's frames every interval as DIR/<camera>-<sequence>.jpg (quality 95,
// written as a hidden .<name> and renamed, so a reader never sees half a file) until the
// directory holds max_frames of this camera's. A failure to write is logged once and ends the
// sampling; it never touches capture.
class FrameSampler {
 public:
  FrameSampler(CalibrationSampleSettings settings, std::string camera);

  // Called with every captured frame; saves it when the interval has passed. Returns true when
  // this frame was saved.
  bool offer(const cv::Mat& image, SteadyClock::time_point now);
  // The same for a captured picture, decoded at full size only when it is saved.
  bool offer(const CapturedPicture& picture, SteadyClock::time_point now);
  int saved() const { return saved_; }

 private:
  CalibrationSampleSettings settings_;
  std::string camera_;
  int saved_ = 0;  // this camera's frames in the directory
  bool failed_ = false;
  SteadyClock::time_point next_ = SteadyClock::time_point::min();  // the first frame is due
};

}  // namespace vigil
