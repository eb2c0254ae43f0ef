#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/base/heartbeat.h"
#include "daemon/capture/frame/frame.h"
#include "daemon/pipeline/inference_counters.h"
#include "daemon/pipeline/scheduler.h"
#include "detector/detector.h"
#include "detector/region_detector.h"

namespace vigil {

// What the detector made of one frame of one camera: handed to the io_context, where the
// publishers live.
struct FrameResult {
  std::string camera;
  std::uint64_t sequence = 0;  // Frame::sequence
  std::uint64_t frameId = 0;   // Frame::id
  int width = 0;
  int height = 0;
  SteadyClock::time_point captureTime;  // when the camera took the picture
  SteadyClock::time_point startTime;    // when the detector took it from the slot
  SteadyClock::time_point doneTime;     // when the detections were ready
  std::vector<Detection> detections;
  StageTimings timings;
  std::string backend;
  // The picture itself (snapshots, the status page's latest frame). It goes back to its
  // camera's pool when the result is destroyed, so whoever keeps pixels copies them.
  FrameHandle frame;
};

// The thread that owns the detector: takes the next job from the scheduler, runs the detector
// and hands the result to `onResult` (on this thread; it must not block, e.g. asio::post).
// A detector error (runtime failure, NaN output) produces no result: it is logged
// (rate-limited) and counted, never turned into detections.
//
// A reload changes the detector without a new worker (DetectorReload): take() waits for the
// frame in flight and takes the detector out, the worker then leaves frames in their slots
// (alive, heartbeat kept) until give() hands it one; replace() is both in one step.
class InferenceWorker {
 public:
  using ResultHandler = std::function<void(FrameResult&&)>;

  InferenceWorker(std::unique_ptr<Detector> detector, Scheduler& scheduler, ResultHandler onResult);
  ~InferenceWorker();
  InferenceWorker(const InferenceWorker&) = delete;
  InferenceWorker& operator=(const InferenceWorker&) = delete;

  void start();
  // Stops the scheduler's waits, cuts the inference in flight (Detector::interrupt: the detector
  // is done with) and joins the thread.
  void stop();

  // Any thread but the worker's. take() returns the detector once the frame in flight is done
  // (null when it has none); give() hands one over; replace() swaps and returns the old one.
  std::unique_ptr<Detector> take();
  void give(std::unique_ptr<Detector> detector);
  std::unique_ptr<Detector> replace(std::unique_ptr<Detector> next);

  // Of the detector given last (it stays while none is given): any thread.
  std::string modelName() const;
  std::vector<std::string> classNames() const;
  // capture.scaled_decode: pictures decoded at the smallest size covering the detector's input
  // (the default), or at full size. Any thread; the next frame follows it.
  void setScaledDecode(bool scaled) { scaledDecode_ = scaled; }
  // InferenceCounters' figures: any thread.
  std::uint64_t failures() const { return counters_.failures(); }
  std::uint64_t inferences() const { return counters_.inferences(); }
  std::uint64_t invalidOutputs() const { return counters_.invalidOutputs(); }
  double busySeconds() const { return counters_.busySeconds(); }
  const InferenceCounters& counters() const { return counters_; }
  const Heartbeat& heartbeat() const { return heartbeat_; }

  // How long one detection may take before /healthz calls the worker stuck.
  static constexpr std::chrono::seconds kInferenceLimit{30};

 private:
  void run();
  void detect(DetectionJob& job);
  // The detection itself: on the camera's regions when it uses them (CameraRegions), else on
  // the whole picture decoded just large enough. Into result_; `refused`: the picture did not
  // decode (a corrupt frame, no failure of the detector).
  Expected<void> detectPicture(DetectionJob& job, bool& refused);
  // The inferences a detection ran, to its camera's counts and the scheduler's fairness (a
  // failed one's too: the detector's time was spent).
  void charge(DetectionJob& job, const RegionCounts& ran);
  void adopt(std::unique_ptr<Detector> detector);  // mutex_ held

  std::mutex mutex_;  // held by the worker while it detects: take() waits for that frame
  // Held while detector_ changes (with mutex_) and while stop() interrupts it (without: the
  // worker holds mutex_ for the whole inference that stop() cuts). Innermost: nothing waits in it.
  std::mutex detectorSwap_;
  std::condition_variable given_;
  std::atomic<bool> takeWanted_{false};  // the worker stands aside before its next frame
  std::unique_ptr<Detector> detector_;   // null between take() and give()
  std::string backend_;                  // detector_'s, for the results
  mutable std::mutex infoMutex_;
  std::string modelName_;
  std::vector<std::string> classNames_;
  Scheduler& scheduler_;
  ResultHandler onResult_;
  cv::Size input_;          // the detector's input, which a decoded picture must cover
  DetectionResult result_;  // the worker's, reused frame after frame
  RegionDetector regions_;  // the worker's, for every camera that uses regions
  std::atomic<bool> scaledDecode_{true};
  std::atomic<bool> stopping_{false};
  InferenceCounters counters_;
  std::shared_ptr<spdlog::logger> log_ = logger("detector");
  Heartbeat heartbeat_;
  std::thread thread_;
};

}  // namespace vigil
