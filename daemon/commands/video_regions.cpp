#include "daemon/commands/video_regions.h"

#include <fmt/format.h>

#include <numeric>

namespace vigil {

namespace {

// The daemon's defaults (MotionSettings): threshold 25, motion from 0.5% of the picture.
constexpr int kMotionThreshold = 25;
constexpr float kMotionArea = 0.005F;

}  // namespace

VideoRegions::VideoRegions(std::string mode)
    : mode_(std::move(mode)), motion_(kMotionThreshold, kMotionArea, {}, true) {}

Expected<void> VideoRegions::detect(Detector& detector, const cv::Mat& frame, double time,
                                    const std::vector<Track>& tracks, DetectionResult& result) {
  const cv::Size input(detector.manifest().input.width, detector.manifest().input.height);
  if (!on_) on_ = mode_ == "on" || (mode_ == "auto" && regionsHelp(frame.size(), input));
  if (!*on_) return detector.detect(frame, result);
  const auto since = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(lastTime_ ? time - *lastTime_ : 0.0));
  lastTime_ = time;
  motionBoxes_.clear();
  if (auto moved = motion_.update(frame, since)) {
    for (const Box& b : moved->boxes) {
      motionBoxes_.push_back(scaledBox(b, frame.cols, frame.rows));
    }
  }
  trackBoxes_.clear();
  for (const Track& t : tracks) trackBoxes_.push_back(t.box);
  planner_.setInput(input);
  const std::vector<Region> regions = planner_.plan(frame.size(), time, motionBoxes_, trackBoxes_);
  ++detections_;
  return detector_.detect(detector, frame, regions, result, counts_);
}

std::string VideoRegions::summary() const {
  if (detections_ == 0) return {};
  const std::uint64_t runs = std::accumulate(counts_.begin(), counts_.end(), std::uint64_t{0});
  std::string out = "regions:";
  for (std::size_t k = 0; k < kRegionKinds; ++k) {
    out += fmt::format("{} {} {}", k == 0 ? "" : ",", counts_[k],
                       regionKindName(static_cast<RegionKind>(k)));
  }
  return out + fmt::format("; {:.2f} inferences a detection",
                           static_cast<double>(runs) / static_cast<double>(detections_));
}

}  // namespace vigil
