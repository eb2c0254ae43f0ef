#include "daemon/pipeline/camera_regions.h"

namespace vigil {

namespace {

RegionSettings regionSettings(const RegionsConfig& config) {
  RegionSettings s;
  s.wholeEvery = config.wholeEvery;
  s.maxRegions = config.maxRegions;
  return s;
}

}  // namespace

CameraRegions::CameraRegions(RegionsConfig config)
    : config_(config), planner_(regionSettings(config)) {}

bool CameraRegions::decide(cv::Size picture, cv::Size input) {
  if (!decidedFor_ || decidedFor_->first != picture || decidedFor_->second != input) {
    decidedFor_.emplace(picture, input);
    planner_.setInput(input);
    const bool on = config_.mode == RegionsConfig::Mode::kOn ||
                    (config_.mode == RegionsConfig::Mode::kAuto && regionsHelp(picture, input));
    active_.store(on, std::memory_order_relaxed);
  }
  return active();
}

void CameraRegions::setMotion(std::span<const Box> fractions) {
  std::lock_guard lock(mutex_);
  motion_.assign(fractions.begin(), fractions.end());
}

void CameraRegions::setTracks(const std::vector<Track>& tracks) {
  if (!active()) return;
  std::lock_guard lock(mutex_);
  tracks_.clear();
  for (const Track& t : tracks) tracks_.push_back(t.box);
}

void CameraRegions::setPersons(const std::vector<Detection>& persons) {
  if (!active()) return;
  std::lock_guard lock(mutex_);
  tracks_.clear();
  for (const Detection& d : persons) {
    if (d.classId == 0) tracks_.push_back(d.box);
  }
}

std::vector<Region> CameraRegions::plan(cv::Size picture, double time) {
  {
    std::lock_guard lock(mutex_);
    motionPixels_.clear();
    for (const Box& b : motion_)
      motionPixels_.push_back(scaledBox(b, picture.width, picture.height));
    trackPixels_ = tracks_;
  }
  std::vector<Region> regions = planner_.plan(picture, time, motionPixels_, trackPixels_);
  std::lock_guard lock(mutex_);
  lastPlan_ = regions;
  return regions;
}

void CameraRegions::counted(const RegionCounts& ran) {
  for (std::size_t k = 0; k < kRegionKinds; ++k) {
    counts_[k].fetch_add(ran[k], std::memory_order_relaxed);
  }
}

std::vector<Region> CameraRegions::lastPlan() const {
  std::lock_guard lock(mutex_);
  return lastPlan_;
}

}  // namespace vigil
