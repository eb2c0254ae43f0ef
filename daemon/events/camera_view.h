#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <opencv2/core.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "daemon/base/metrics.h"
#include "daemon/capture/camera/picture_stream.h"
#include "daemon/capture/frame/frame.h"
#include "daemon/events/person_tracks.h"
#include "daemon/pipeline/scheduler.h"
#include "detector/box.h"

namespace vigil {

struct LatencySummary {
  double p50 = 0;
  double p99 = 0;
  std::size_t samples = 0;
};

// The last kWindow end-to-end latencies of one camera (capture to detections ready), in ms.
class LatencyWindow {
 public:
  static constexpr std::size_t kWindow = 4096;

  void add(double ms) {
    if (ms_.size() < kWindow) {
      ms_.push_back(ms);
    } else {
      ms_[next_] = ms;
      next_ = (next_ + 1) % kWindow;
    }
  }
  // The nearest-rank percentile (p in [0, 1]) of the window; 0 when it is empty.
  double percentile(double p) const;
  // p50 and p99 from one sorted copy of the window.
  LatencySummary summary() const;
  std::size_t samples() const { return ms_.size(); }

 private:
  std::vector<double> ms_;  // a ring buffer once full
  std::size_t next_ = 0;
};

// A presence event as --summary-json lists it: when it started and at which frame.
struct PersonEventStart {
  std::chrono::system_clock::time_point start;
  std::uint64_t sequence = 0;
};

// What the result path keeps per camera: the latest frame with its detections (the status
// page), frame rates, latencies, the motion gate's bookkeeping. Owned by ResultPath and
// written and read on the control thread only.
struct CameraView {
  std::shared_ptr<CameraChannel> channel;  // the camera's counters
  std::shared_ptr<Histogram> captureToPublish;
  std::shared_ptr<Histogram> trackDuration;
  // The picture people see of the latest detected frame, as it arrived (storage reused): the
  // picture stream's newest (picture_source) when it has one that fits, else the frame itself.
  CapturedPicture latest;
  bool latestFromPictureStream = false;
  cv::Size detectSize;                      // the detected frame's: what boxes are in pixels of
  std::shared_ptr<PictureStream> pictures;  // picture_source; nullptr: none
  std::vector<Detection> latestDetections;  // those at detector.min_score or above
  // Tracking (nullptr: off for this camera) and its persons after the latest frame, their
  // first and last seen in Unix seconds.
  std::unique_ptr<PersonTracks> tracks;
  std::vector<TrackedPerson> latestTracks;
  double trackedAt = 0;  // the tracks' last update, steady-clock seconds
  bool hasFrame = false;
  // Changes with every new `latest` frame, never repeats (across cameras and restarts): what
  // the status page's encoded copy is keyed by.
  std::uint64_t frameVersion = 0;
  std::optional<std::chrono::system_clock::time_point> lastPerson;
  // Rates over the last window of about 2 s.
  SteadyClock::time_point rateSince{};
  std::uint64_t capturedSince = 0;
  std::uint64_t detectedSince = 0;
  double fpsCaptured = 0;
  double fpsDetected = 0;
  double captureCpuSince = 0;  // CameraCounters::captureCpuSeconds() at rateSince
  double captureCpuShare = 0;  // of one core
  // Motion gating: the last result showed a person; the gated frames already priced; the
  // estimated detector seconds they saved.
  bool lastHadPerson = false;
  std::uint64_t gatedPriced = 0;
  double gatedSeconds = 0;
  // Whole-camera presence events seen so far, for --summary-json (only when it is asked for:
  // ResultPath::keepEventStarts).
  std::vector<PersonEventStart> events;
  LatencyWindow latency;
};

}  // namespace vigil
