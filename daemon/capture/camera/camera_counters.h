#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/base/figures.h"
#include "daemon/base/heartbeat.h"
#include "daemon/capture/picture/captured_picture.h"

namespace vigil {

// Counters of one camera, updated by its capture thread and the inference worker, read by
// anyone (logs, metrics, status). Atomic so the hot paths never lock for them.
struct CameraCounters {
  std::atomic<std::uint64_t> captured{0};      // frames read from the source
  std::atomic<std::uint64_t> skipped{0};       // replaced in the slot before the detector took them
  std::atomic<std::uint64_t> dropped{0};       // no free frame in the pool
  std::atomic<std::uint64_t> decodeErrors{0};  // corrupt frames the source reported at capture
  std::atomic<std::uint64_t> lost{0};          // frames the device produced but never delivered
  std::atomic<std::uint64_t> detected{0};      // frames the detector processed
  std::atomic<std::uint64_t> reconnects{0};    // times the source was reopened after a loss
  std::atomic<std::uint64_t> openFailures{0};  // opens that failed (never connected counts here)
  std::atomic<std::uint64_t> gated{0};  // held back by motion gating (would have been detected)
  std::atomic<std::uint64_t> motionChecked{0};  // analysed by the motion gate (one decode each)
  std::atomic<bool> up{false};                  // the source is open and delivering
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
  // Corrupt frames: refused at capture (the source's reads), and pictures refused when decoded
  // (on demand, on whichever thread took them: DecodeAccount). vigil_camera_decode_errors_total.
  std::uint64_t decodeErrorsTotal() const {
    return decodeErrors.load(std::memory_order_relaxed) + decoding->corrupt();
  }
  // Motion gating: the gate's state (a MotionState, written by the capture thread).
  std::atomic<int> motionState{0};
  Heartbeat heartbeat;  // the capture thread's, for /healthz

  // Who makes the camera's pixels, as its source said when it last opened ("FFmpeg h264,
  // software", "libjpeg, on demand"; empty before); set by the capture thread, read by anyone.
  void setDecoder(std::string decoder);
  std::string decoder() const;

  // Its frame counts, each named once (camera_counters.cpp) for every view: /api/status's
  // "frames" of a camera and of its picture stream, the page's frames row, and /metrics'
  // vigil_camera_*_total{camera}. A new count of a camera is a line there. Any thread.
  void report(FigureWriter& out) const;

 private:
  mutable std::mutex decoderMutex_;
  std::string decoder_;
};

}  // namespace vigil
