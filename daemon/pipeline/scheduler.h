#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon/capture/camera/camera_counters.h"
#include "daemon/capture/frame/frame_pool.h"
#include "daemon/pipeline/camera_regions.h"
#include "daemon/pipeline/detection_feedback.h"

namespace vigil {

// One camera's end of the scheduler: its latest-frame slot, its detection rate and counters.
// Shared by the camera (producer) and the scheduler (consumer).
class CameraChannel final : public DetectionFeedback {
 public:
  CameraChannel(std::string name, double detectFps, bool denoise = false,
                RegionsConfig regions = {});

  const std::string& name() const { return name_; }
  CameraCounters& counters() { return counters_; }
  const CameraCounters& counters() const { return counters_; }
  std::chrono::nanoseconds detectPeriod() const { return period_; }
  // Its pictures get a 3x3 median before inference (the camera's `denoise`).
  bool denoise() const { return denoise_; }
  // Where its detections look (camera_regions.h).
  CameraRegions& regions() { return regions_; }
  const CameraRegions& regions() const { return regions_; }

  // What the result path tells the camera (the control thread): the person, for the motion gate
  // on the capture thread (personSaid()); the tracks or persons, for its regions.
  void tellPerson(Person person) override { person_.store(person, std::memory_order_relaxed); }
  Person personSaid() const { return person_.load(std::memory_order_relaxed); }
  void tellTracks(const std::vector<Track>& tracks) override { regions_.setTracks(tracks); }
  void tellPersons(const std::vector<Detection>& persons) override { regions_.setPersons(persons); }

  // Its figures for /metrics, each named once (scheduler.cpp): its counters' frame counts, the
  // inferences its regions ran by kind, its capture CPU, whether it is up, its gating state.
  // Any thread.
  void report(FigureWriter& out) const;

 private:
  friend class Scheduler;
  std::string name_;
  std::chrono::nanoseconds period_;
  bool denoise_;
  CameraCounters counters_;
  CameraRegions regions_;
  std::atomic<Person> person_{Person::kNone};
  // Guarded by the scheduler's mutex.
  std::optional<FrameHandle> latest_;
  double spent_ = 0;  // inferences its detections ran (Scheduler::charge), from the floor on
  std::chrono::steady_clock::time_point due_{};
  bool attached_ = false;
};

struct DetectionJob {
  std::shared_ptr<CameraChannel> camera;
  FrameHandle frame;
};

// Hands the inference worker the next frame to detect: among the cameras that are due (their
// detect_fps period has passed) and hold a fresh frame, the one whose detections have run the
// fewest inferences (charge(): a camera on regions runs two or three a detection), and of
// those the one due the longest. With more demand than the detector can serve, N cameras share
// its inferences evenly (round-robin when each detection is one inference) and none starves. A
// camera back from a quiet stretch (gated, just attached) is let at most kCatchUp inferences
// ahead of the others, not a backlog of everything it did not spend.
// Threads: offer() from capture threads, next() from inference worker(s), attach/detach/stop
// from the control thread. Capture never blocks on the detector: offer() only swaps a slot.
class Scheduler {
 public:
  using Clock = std::chrono::steady_clock;

  // `now` is the clock the cameras' periods are measured on: the steady clock, or a test's fake
  // one. next() still sleeps on the steady clock, so with a fake clock call it with 0 ms.
  explicit Scheduler(std::function<Clock::time_point()> now = Clock::now);

  void attach(const std::shared_ptr<CameraChannel>& camera);
  // Drops the camera and its waiting frame; a job already handed out stays valid.
  void detach(const std::shared_ptr<CameraChannel>& camera);

  // Puts a frame into the camera's slot, replacing (and counting as skipped) an unconsumed one.
  void offer(CameraChannel& camera, FrameHandle frame);

  // Blocks until a job is ready, `maxWait` passes (nullopt) or stop() is called (nullopt).
  std::optional<DetectionJob> next(std::chrono::milliseconds maxWait);
  // The worker: a job of `camera` ran `inferences` (its regions; 1 for the whole picture).
  void charge(CameraChannel& camera, std::uint64_t inferences);

  static constexpr double kCatchUp = 10;

  void stop();
  // Undo stop() so a new worker can use the scheduler (configuration reload).
  void restart();

 private:
  std::function<Clock::time_point()> now_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<CameraChannel>> cameras_;
  double floor_ = 0;  // the most any camera had spent when it was last served
  bool stopped_ = false;
};

}  // namespace vigil
