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

#include "daemon/capture/frame_pool.h"
#include "daemon/observe/heartbeat.h"

namespace vigil {

// Counters of one camera, updated by its capture thread and the inference worker, read by
// anyone (logs, metrics, status). Atomic so the hot paths never lock for them.
struct CameraCounters {
  std::atomic<std::uint64_t> captured{0};      // frames read from the source
  std::atomic<std::uint64_t> skipped{0};       // replaced in the slot before the detector took them
  std::atomic<std::uint64_t> dropped{0};       // no free frame in the pool
  std::atomic<std::uint64_t> decodeErrors{0};  // corrupt frames the source reported
  std::atomic<std::uint64_t> lost{0};  // frames the device produced but never delivered
  std::atomic<std::uint64_t> detected{0};      // frames the detector processed
  std::atomic<std::uint64_t> reconnects{0};    // times the source was reopened after a loss
  std::atomic<std::uint64_t> openFailures{0};  // opens that failed (never connected counts here)
  std::atomic<std::uint64_t> gated{0};  // held back by motion gating (would have been detected)
  std::atomic<bool> up{false};          // the source is open and delivering
  // Where the CPU of capture goes: the capture thread's own CPU clock, and the camera's
  // pictures decoded on demand (frames turned into pixels; their decoding on other threads).
  std::atomic<std::int64_t> captureThreadCpuNanos{0};
  std::shared_ptr<DecodeAccount> decoding = std::make_shared<DecodeAccount>();

  // The CPU this camera's capture cost so far: its thread's, and its pictures' decoding on
  // other threads (the detector's, the status page's).
  double captureCpuSeconds() const {
    return static_cast<double>(captureThreadCpuNanos.load(std::memory_order_relaxed) +
                               decoding->cpuNanosElsewhere.load(std::memory_order_relaxed)) *
           1e-9;
  }
  // Motion gating: the gate's state (a MotionState, written by the capture thread), and what the
  // detector says of persons (a MotionGate::Person, written by the control thread).
  std::atomic<int> motionState{0};
  std::atomic<int> person{0};
  Heartbeat heartbeat;  // the capture thread's, for /healthz
};

// One camera's end of the scheduler: its latest-frame slot, its detection rate and counters.
// Shared by the camera (producer) and the scheduler (consumer).
class CameraChannel {
 public:
  CameraChannel(std::string name, double detectFps);

  const std::string& name() const { return name_; }
  CameraCounters& counters() { return counters_; }
  const CameraCounters& counters() const { return counters_; }
  std::chrono::nanoseconds detectPeriod() const { return period_; }
  // Who makes the camera's pixels, as its source said when it last opened ("FFmpeg h264,
  // software", "libjpeg, on demand"; empty before); set by the capture thread, read by anyone.
  void setDecoder(std::string decoder);
  std::string decoder() const;

 private:
  friend class Scheduler;
  std::string name_;
  std::chrono::nanoseconds period_;
  CameraCounters counters_;
  mutable std::mutex decoderMutex_;
  std::string decoder_;
  // Guarded by the scheduler's mutex.
  std::optional<FrameHandle> latest_;
  std::chrono::steady_clock::time_point due_{};
  bool attached_ = false;
};

struct DetectionJob {
  std::shared_ptr<CameraChannel> camera;
  FrameHandle frame;
};

// Hands the inference worker the next frame to detect: among the cameras that are due (their
// detect_fps period has passed) and hold a fresh frame, the one that has been due the longest.
// With more demand than the detector can serve this is round-robin, so N cameras share one
// detector fairly and none starves.
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

  void stop();
  // Undo stop() so a new worker can use the scheduler (configuration reload).
  void restart();

 private:
  std::function<Clock::time_point()> now_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<CameraChannel>> cameras_;
  bool stopped_ = false;
};

}  // namespace vigil
