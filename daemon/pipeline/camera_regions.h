#pragma once

#include <atomic>
#include <mutex>
#include <opencv2/core.hpp>
#include <optional>
#include <span>
#include <vector>

#include "daemon/settings/regions_settings.h"
#include "detector/box.h"
#include "detector/regions.h"
#include "detector/track/byte_tracker.h"

namespace vigil {

// One camera's detection regions (detector/regions.h), between the threads that know where to
// look and the inference thread that looks: the motion gate (capture thread) hands in the boxes
// of the changed pixels it found, the result path (control thread) the boxes of the camera's
// tracks, and the inference thread decides whether the camera uses regions (its `regions:`
// section, and for `auto` the picture's size against the model's input), plans each detection's
// regions from the latest of both and counts what ran.
// Threads: as said per member; the hints behind a mutex held for a copy, the counts atomic.
class CameraRegions {
 public:
  explicit CameraRegions(RegionsConfig config = {});

  const RegionsConfig& config() const { return config_; }

  // Inference thread: whether detections of `picture`-sized pictures run on regions with a
  // model of `input` (decided again when either changes).
  bool decide(cv::Size picture, cv::Size input);
  // Any thread: what decide() said last (false before it).
  bool active() const { return active_.load(std::memory_order_relaxed); }

  // Capture thread: the changed parts of the latest motion analysis, in fractions (0..1) of the
  // picture (MotionDetector::Result::boxes).
  void setMotion(std::span<const Box> fractions);
  // Control thread, after each result: where the next detection looks again, in pixels of the
  // detected picture: every track the camera's tracker keeps (seen, or its prediction while
  // lost), or for a camera without tracking its latest persons (class 0). Nothing while the
  // camera does not use regions.
  void setTracks(const std::vector<Track>& tracks);
  void setPersons(const std::vector<Detection>& persons);

  // Inference thread: the regions of a detection of a `picture`-sized picture taken at `time`
  // (seconds). Kept for lastPlan().
  std::vector<Region> plan(cv::Size picture, double time);
  // Inference thread: the regions that ran, by kind.
  void counted(const RegionCounts& ran);

  // Any thread.
  std::uint64_t count(RegionKind kind) const {
    return counts_[static_cast<std::size_t>(kind)].load(std::memory_order_relaxed);
  }
  std::vector<Region> lastPlan() const;

 private:
  RegionsConfig config_;
  std::atomic<bool> active_{false};
  std::optional<std::pair<cv::Size, cv::Size>> decidedFor_;  // picture, input
  RegionPlanner planner_;                                    // the inference thread's
  mutable std::mutex mutex_;                                 // guards the three below
  std::vector<Box> motion_;                                  // fractions
  std::vector<Box> tracks_;                                  // pixels
  std::vector<Region> lastPlan_;
  std::vector<Box> motionPixels_, trackPixels_;  // the inference thread's copies
  std::array<std::atomic<std::uint64_t>, kRegionKinds> counts_{};
};

}  // namespace vigil
