#include "daemon/pipeline/scheduler.h"

#include <algorithm>

#include "daemon/pipeline/motion.h"

namespace vigil {

namespace {

constexpr FigureName kRegions{
    "inferences", "vigil_detector_regions_total",
    "Inferences the camera's detections ran, by what each looked at: motion and track (a region "
    "around changed pixels or a tracked person, at the camera's resolution), whole (the whole "
    "picture shrunk: every detection of a camera without regions), edge (a person cut by a "
    "region's edge, detected again); per detection: divide by vigil_camera_frames_detected_total",
    "kind"};
constexpr FigureName kCaptureCpu{
    "capture_cpu_seconds", "vigil_camera_capture_cpu_seconds_total",
    "CPU time the camera's capture cost: its capture thread's own CPU clock (reading, FFmpeg's "
    "decoding, the motion check) plus its pictures' decoding on other threads"};
constexpr FigureName kUp{"up", "vigil_camera_up", "1 while the camera delivers frames"};
constexpr FigureName kMotionState{
    "motion_state", "vigil_camera_motion_state",
    "Motion gating state (value 1 for the current one): off (gating disabled), motion (full "
    "detect_fps), person (still, a person present: still_detect_interval), idle (still, "
    "nobody: idle_detect_interval)",
    "state"};
constexpr MotionState kMotionStates[] = {MotionState::kOff, MotionState::kMotion,
                                         MotionState::kPerson, MotionState::kIdle};

}  // namespace

void CameraChannel::report(FigureWriter& out) const {
  counters_.report(out);
  for (std::size_t k = 0; k < kRegionKinds; ++k) {
    const auto kind = static_cast<RegionKind>(k);
    out.count(kRegions, regionKindName(kind), regions_.count(kind));
  }
  out.total(kCaptureCpu, {}, counters_.captureCpuSeconds());
  out.level(kUp, {}, counters_.up.load() ? 1 : 0);
  const int state = counters_.motionState.load();
  for (MotionState s : kMotionStates) {
    out.level(kMotionState, motionStateName(s), state == static_cast<int>(s) ? 1 : 0);
  }
}

CameraChannel::CameraChannel(std::string name, double detectFps, bool denoise,
                             RegionsConfig regions)
    : name_(std::move(name)),
      period_(std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(1.0 / detectFps))),
      denoise_(denoise),
      regions_(regions) {}

Scheduler::Scheduler(std::function<Clock::time_point()> now) : now_(std::move(now)) {}

void Scheduler::attach(const std::shared_ptr<CameraChannel>& camera) {
  std::lock_guard lock(mutex_);
  camera->attached_ = true;
  camera->due_ = now_();
  cameras_.push_back(camera);
}

void Scheduler::detach(const std::shared_ptr<CameraChannel>& camera) {
  std::optional<FrameHandle> waiting;  // released outside the lock
  {
    std::lock_guard lock(mutex_);
    camera->attached_ = false;
    waiting = std::move(camera->latest_);
    camera->latest_.reset();
    std::erase(cameras_, camera);
  }
}

void Scheduler::offer(CameraChannel& camera, FrameHandle frame) {
  std::optional<FrameHandle> replaced;  // returned to its pool outside the lock
  {
    std::lock_guard lock(mutex_);
    if (!camera.attached_) return;
    replaced = std::move(camera.latest_);
    camera.latest_ = std::move(frame);
  }
  if (replaced && *replaced) camera.counters_.skipped.fetch_add(1, std::memory_order_relaxed);
  wake_.notify_one();
}

std::optional<DetectionJob> Scheduler::next(std::chrono::milliseconds maxWait) {
  std::unique_lock lock(mutex_);
  const auto deadline = now_() + maxWait;
  while (!stopped_) {
    const auto now = now_();
    std::shared_ptr<CameraChannel> best;
    double bestSpent = 0;
    auto earliestDue = Clock::time_point::max();
    for (const auto& c : cameras_) {
      if (!c->latest_) continue;
      earliestDue = std::min(earliestDue, c->due_);
      if (c->due_ > now) continue;
      const double spent = std::max(c->spent_, floor_ - kCatchUp);
      if (!best || spent < bestSpent || (spent == bestSpent && c->due_ < best->due_)) {
        best = c;
        bestSpent = spent;
      }
    }
    if (best) {
      DetectionJob job{best, std::move(*best->latest_)};
      best->latest_.reset();
      best->spent_ = bestSpent;
      floor_ = std::max(floor_, bestSpent);
      // Keep the configured rate on average; a camera the detector fell behind on restarts
      // its period from now instead of bursting to catch up.
      best->due_ = std::max(best->due_ + best->period_, now);
      return job;
    }
    if (now >= deadline) return std::nullopt;
    // Sleep until the first camera with a frame becomes due, a new frame arrives, or the end.
    wake_.wait_until(lock, std::min(deadline, earliestDue));
  }
  return std::nullopt;
}

void Scheduler::charge(CameraChannel& camera, std::uint64_t inferences) {
  std::lock_guard lock(mutex_);
  camera.spent_ += static_cast<double>(inferences);
}

void Scheduler::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  wake_.notify_all();
}

void Scheduler::restart() {
  std::lock_guard lock(mutex_);
  stopped_ = false;
}

}  // namespace vigil
