#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "daemon/capture/camera/camera_counters.h"
#include "daemon/capture/frame/frame_source.h"
#include "daemon/settings/settings.h"

namespace vigil {

// What a camera's capture thread counts and says about its source across the source's sessions:
// the frames the source lost and the thread's own CPU, added to the camera's counters; runs of
// corrupt frames, each counted as a decode error, warned about when a run starts (at most once a
// minute: a webcam may damage a frame a second) and said again when frames are usable again; and
// the decoder's name for the status API, with why hardware decoding is not used, warned once per
// reason.
// Threads: the camera's capture thread only (it measures that thread's CPU clock).
class StreamHealth {
 public:
  StreamHealth(std::string camera, CameraCounters& counters);

  // Adds the thread's CPU time since the last call to the camera's counter.
  void chargeCpu();
  // Adds the source's new lost frames to the camera's counter.
  void countLost(const FrameSource& source);
  // A corrupt frame (a read failing with kInvalidData, `why`).
  void badFrame(const std::string& why);
  // A usable frame: ends a run of corrupt ones.
  void usableFrame();
  // The source opened again: an earlier run of pictures decoded corrupt is forgotten.
  void newSession();
  // Why the camera gives nothing usable, when every picture decoded for `stall` was corrupt.
  // Pictures are decoded on demand on other threads (the detector, the motion gate), long after
  // this thread handed them off; their verdicts come back through the camera's DecodeAccount,
  // so a camera whose pictures arrive but all decode damaged is lost, as a silent one is.
  std::optional<std::string> decodedUnusable(std::chrono::milliseconds stall) const;
  std::uint64_t badFrames() const { return badFrames_; }
  const std::string& lastBadFrame() const { return lastBadFrame_; }
  // The source's decoder as the status API shows it; with a hardware decode that could not be
  // had (`asked`), why, and a warning the first time for that reason.
  std::string decoderName(const SourceInfo& info, HwAccel asked);

 private:
  std::string camera_;
  CameraCounters& counters_;
  std::uint64_t lostCounted_ = 0;  // of the source's framesLost(), already in the counters
  std::int64_t cpuCharged_ = 0;    // the thread's CPU clock when last added to the counters
  std::string hwFallbackLogged_;   // why hardware decoding is not used, as last logged
  std::uint64_t badFrames_ = 0;    // corrupt frames in a row
  std::string lastBadFrame_;       // why the last of them was refused
  bool badRunWarned_ = false;      // this run of corrupt frames was logged as a warning
  std::chrono::steady_clock::time_point lastBadWarning_{};  // the rate limit's
};

}  // namespace vigil
