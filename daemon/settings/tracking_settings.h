#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "detector/track/byte_tracker.h"
#include "detector/track/line_crossing.h"

namespace vigil {

// A counting line of a camera (cameras.yaml `lines:`): a directed polyline in the frame's pixels,
// counted by the rule of detector/track/line_crossing.h on the feet of the tracked persons.
struct LineSpec {
  std::string name;
  // Fractions of the frame (0 to 1, x right, y down, as zones), at least two, no zero-length
  // segment; counted in the pixels of each camera's frames (PersonTracks scales them).
  std::vector<LinePoint> points;
  std::string inName = "in";      // what `in` and `out` are called in events and Home Assistant
  std::string outName = "out";
  int minFrames = 1;
  double band = kDefaultLineBandPixels;  // pixels of the detected frame

  bool operator==(const LineSpec&) const = default;
  const std::string& directionName(CrossingDirection d) const {
    return d == CrossingDirection::kIn ? inName : outName;
  }
};

// A track is stationary when its box centre stays within `maxMoveFraction` of its height of
// where it was `afterSeconds` ago or more (it moves again as soon as it leaves that circle).
struct StationarySettings {
  double maxMoveFraction = 0.1;
  double afterSeconds = 10;

  bool operator==(const StationarySettings&) const = default;
};

// The lowest detection score tracking uses (ByteTrack's second association): the daemon's
// detector reports persons down to this, whatever detector.min_score says.
inline constexpr float kTrackingLowScore = ByteTrackSettings{}.lowScore;

// A camera's `tracking` section (config/cameras.yaml).
struct TrackingSettings {
  bool enabled = true;
  // A track not detected for this long ends (ByteTrackSettings::lostAfterSeconds).
  std::chrono::milliseconds lostAfter{1000};
  StationarySettings stationary;

  bool operator==(const TrackingSettings&) const = default;
};

}  // namespace vigil
