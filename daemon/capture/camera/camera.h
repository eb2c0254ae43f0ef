#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/capture/camera/camera_status.h"
#include "daemon/capture/camera/capture_thread.h"
#include "daemon/capture/camera/frame_sink.h"
#include "daemon/capture/camera/reopen_backoff.h"
#include "daemon/capture/camera/stream_session.h"
#include "daemon/capture/frame/frame_pool.h"
#include "daemon/capture/frame/frame_sampler.h"
#include "daemon/capture/frame/frame_source.h"
#include "daemon/settings/settings.h"

namespace vigil {

using SourceFactory = std::function<std::unique_ptr<FrameSource>(const CameraConfig&)>;

// The source the configuration names: V4L2 for /dev paths, FFmpeg for streams and files.
std::unique_ptr<FrameSource> makeFrameSource(const CameraConfig& camera);

// One camera's capture thread and its supervisor: opens the source, reads frames into the
// camera's pool and hands them to its FrameSink (the pipeline's motion gate and scheduler), and
// when the source is lost (unplugged, refused, stalled, ended) closes it and reopens it with capped
// exponential backoff. It logs once per state change, not once per failed attempt, and never
// touches another camera. Ownership: owns its thread, source and pool; shares its sink with the
// one who made it.
class Camera {
 public:
  // The capture thread's end, shared by the camera and its thread: a thread left behind
  // (stopBy) outlives the camera's owner, and deletes the camera in its custody when it ends.
  using ThreadEnd = CaptureThread::End;

  Camera(CameraConfig config, std::shared_ptr<FrameSink> sink,
         SourceFactory factory = makeFrameSource, BackoffPolicy backoff = {});
  ~Camera();
  Camera(const Camera&) = delete;
  Camera& operator=(const Camera&) = delete;

  // `after`: the capture thread a stop left behind for the same camera, if any (a reload's
  // restart). The new thread opens the source only once that one has ended: a device or a file
  // is never opened twice at once, and a share that hangs holds one thread, not one per reload.
  void start(std::shared_ptr<ThreadEnd> after = nullptr);
  // Asks the thread to stop and interrupts a source blocked in open or read; returns at once.
  // Stopping many cameras: requestStop() on each, then stop() on each, so that they wind down
  // side by side instead of one after another.
  void requestStop();
  // Stops the thread and closes the source; returns when both are done.
  void stop();
  // Stops as stop() does if the capture thread ends by `deadline`, and returns true. If it does
  // not (stuck in a read that nothing interrupts: a file on a network share that stopped
  // answering), says so, detaches the sink and leaves the thread to end on its
  // own, counted as background work (foundation/background_work.h); returns false. Such a camera
  // must be deleted through Retire, which leaves the deleting to its thread while it runs.
  bool stopBy(SteadyClock::time_point deadline);
  // The thread stopBy() left behind (done or not), for the next start() of this camera; null
  // when it was joined.
  std::shared_ptr<ThreadEnd> threadLeftBehind() const;

  // The deleter of cameras that stopBy() may have left behind: deletes the camera at once, or
  // hands it to its capture thread, which deletes it when its read returns at last.
  struct Retire {
    void operator()(Camera* camera) const;
  };

  const CameraConfig& config() const { return config_; }
  const CameraCounters& counters() const { return sink_->counters(); }
  CameraState state() const { return status_.state(); }
  // The last reason the source failed, for status pages; empty while streaming.
  std::string lastError() const { return status_.lastError(); }

 private:
  struct Supervision;

  // The capture thread: opens the source, streams from it, and on loss closes it and reopens it
  // after the backoff delay, until stopped.
  void run();
  // Waits for the thread left behind before this one (start's `after`); false when stopped
  // meanwhile.
  bool awaitPredecessor();
  // Makes `source` (or nullptr) the one requestStop() interrupts; interrupts it at once when
  // stopping already.
  void shareSource(FrameSource* source);
  // Reads frames from an open source and hands them off until it is lost or the camera stops
  // (a StreamSession); a session that streamed starts the backoff over.
  StreamEnd stream(FrameSource& source, const SourceInfo& info, Supervision& supervision);
  // After the thread is gone: off the scheduler, state stopped.
  void finishStop();
  // A captured frame to the calibration sampler, then to the sink if it admits it.
  void handOff(FrameHandle frame, SteadyClock::time_point captured);
  // Sleeps the backoff's delay, then lengthens it; returns false when stopping.
  bool backOff(ReopenBackoff& reopen);
  // After the source ended for good: idle until stop().
  void waitForStop();
  // Sleeps for `d` or until stop(); returns false when stopping.
  bool sleepFor(std::chrono::milliseconds d);

  CameraConfig config_;
  std::shared_ptr<FrameSink> sink_;
  SourceFactory factory_;
  BackoffPolicy backoff_;
  std::shared_ptr<FramePool> pool_;
  std::optional<FrameSampler> sampler_;  // calibration_samples, when the camera has the section
  std::atomic<bool> stopping_{false};
  CameraStatus status_;
  mutable std::mutex mutex_;  // guards source_ and the stop wait
  std::condition_variable stopWake_;
  FrameSource* source_ = nullptr;  // the capture thread's source, for requestStop() to interrupt
  // Held while a frame is offered: once stopBy() has taken it after the stop, no offer can
  // reach a sink whose scheduler may be gone.
  std::mutex offerMutex_;
  CaptureThread thread_;
};

// How a CameraSet holds its cameras: some may be left behind by a stop.
using CameraPtr = std::unique_ptr<Camera, Camera::Retire>;

}  // namespace vigil
