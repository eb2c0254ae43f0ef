#include "daemon/commands/video_regions.h"

#include <fmt/format.h>

namespace vigil {

namespace {

// The daemon's defaults (MotionSettings): threshold 25, motion from 0.5% of the picture.
constexpr int kMotionThreshold = 25;
constexpr float kMotionArea = 0.005F;

RegionsConfig configOf(RegionsConfig::Mode mode) {
  RegionsConfig config;
  config.mode = mode;
  return config;
}

}  // namespace

VideoRegions::VideoRegions(RegionsConfig::Mode mode)
    : regions_(configOf(mode)), motion_(kMotionThreshold, kMotionArea, {}, true) {}

Expected<void> VideoRegions::detect(Detector& detector, const cv::Mat& frame, double time,
                                    DetectionResult& result) {
  const cv::Size input(detector.manifest().input.width, detector.manifest().input.height);
  if (!regions_.decide(frame.size(), input)) return detector.detect(frame, result);
  const auto since = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(lastTime_ ? time - *lastTime_ : 0.0));
  lastTime_ = time;
  const auto moved = motion_.update(frame, since);
  regions_.setMotion(moved ? std::span<const Box>(moved->boxes) : std::span<const Box>());
  ++detections_;
  RegionCounts ran{};
  auto ok = detector_.detect(detector, frame, regions_.plan(frame.size(), time), result, ran);
  regions_.counted(ran);
  return ok;
}

std::string VideoRegions::summary() const {
  if (detections_ == 0) return {};
  std::uint64_t runs = 0;
  std::string out = "regions:";
  for (std::size_t k = 0; k < kRegionKinds; ++k) {
    const auto kind = static_cast<RegionKind>(k);
    runs += regions_.count(kind);
    out += fmt::format("{} {} {}", k == 0 ? "" : ",", regions_.count(kind), regionKindName(kind));
  }
  return out + fmt::format("; {:.2f} inferences a detection",
                           static_cast<double>(runs) / static_cast<double>(detections_));
}

}  // namespace vigil
