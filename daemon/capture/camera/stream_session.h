#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "daemon/base/error.h"
#include "daemon/capture/camera/camera_status.h"
#include "daemon/capture/camera/frame_rate_probe.h"
#include "daemon/capture/camera/frame_sink.h"
#include "daemon/capture/camera/stream_health.h"
#include "daemon/capture/frame/frame_pool.h"
#include "daemon/capture/frame/frame_source.h"
#include "daemon/settings/settings.h"

namespace vigil {

// Added to every heartbeat promise: a loaded machine may be late without being stuck.
inline constexpr std::chrono::seconds kHeartbeatGrace{10};

// A frame's id: unique in the process and growing, so that one camera's frames keep growing
// across reconnects (whose sources count from 0 again) and reloads. Thread-safe.
std::uint64_t nextFrameId();

// Why a streaming session ended: the source was lost, or it ended for good (kEndOfStream: a file
// without loop). An empty reason when the camera is stopping.
struct StreamEnd {
  std::string reason;
  bool ended = false;
};

// What a session borrows of its camera, for the session.
struct SessionParts {
  const CameraConfig& config;              // the fps (the stall limit) and the hardware decode
  std::chrono::milliseconds stallTimeout;  // BackoffPolicy's
  FrameSink& sink;
  FramePool& pool;
  CameraStatus& status;
  StreamHealth& health;
  Frame& scratch;  // receives frames that are dropped because the pool is empty
  const std::atomic<bool>& stopping;
  // The camera's hand-off of a captured frame (to the calibration sampler, then to the sink if
  // it admits it), behind the camera's stop.
  std::function<void(FrameHandle, SteadyClock::time_point)> handOff;
};

// One streaming session of a camera: from its source's open until the source is lost, ends, or
// the camera stops. Reads frames into the camera's pool (every frame in use: into the scratch
// frame, dropped and counted), says streaming at the first frame (with the rate the source
// declared) and the rate measured a few seconds later (FrameRateProbe), hands each frame off, keeps
// the source told of the sink's wish for keyframes only, and ends the session when nothing, or
// nothing usable, came for the stall limit (the policy's, or 5 frame periods of a slow camera,
// whichever is longer). What to do next (reopen after a backoff, idle) is the camera's.
// Ownership and threads: the camera's capture thread, for one session; `stopping` is set by
// whoever stops the camera.
class StreamSession {
 public:
  explicit StreamSession(SessionParts parts);

  // Reads frames from `source`, open and described by `info`, until the session ends.
  StreamEnd run(FrameSource& source, const SourceInfo& info);
  // A frame came: the camera's backoff starts over.
  bool streamed() const { return streamed_; }

 private:
  // A frame read into `frame`: numbered and counted, the stall clock restarted; the session's
  // first says streaming, and the one FrameRateProbe names says the measured rate.
  void frameRead(Frame& frame, const SourceInfo& info);
  // A read failed with `error`: why the session ends, or nullopt when it goes on (a corrupt
  // frame, a timeout, pictures skipped to a keyframe) short of the stall limit.
  std::optional<StreamEnd> readFailed(const Error& error, FrameSource& source);
  // Nothing, or nothing usable, for the stall limit: why the source is lost.
  std::optional<StreamEnd> stalled() const;
  // Tells the source when the sink's wish for keyframes only changed.
  void followKeyframesOnly(FrameSource& source);

  SessionParts parts_;
  std::chrono::milliseconds stallLimit_;
  SteadyClock::time_point lastFrame_;
  bool streamed_ = false;
  FrameRateProbe rate_;
  bool keyframesOnly_ = false;  // told to the source: the camera is idle under motion gating
};

}  // namespace vigil
